//! Test galleries and queries, built so that pairs sit exactly at, just below and just above the
//! match threshold, under rotation.

#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use irisc_runtime::iris::IrisCode;
use irisc_runtime::iris::IrisRecord as Record;

pub fn random_code(rng: &mut impl Rng, bits: usize) -> IrisCode {
    let bytes = bits / 8;
    let code: Vec<u8> = (0..bytes).map(|_| rng.random()).collect();
    // About 10% of mask bits cleared, in adjacent pairs as real occlusions are.
    let mut mask = vec![0xffu8; bytes];
    for pair in 0..bits / 2 {
        if rng.random_bool(0.1) {
            let i = pair * 2;
            mask[i / 8] &= !(0b11 << (i % 8));
        }
    }
    IrisCode { code, mask }
}

/// A code whose distance to `rot(q, shift)` is exactly `hd(ml)` for its combined mask length `ml`,
/// where `pick` chooses hd from the threshold (`num/den`): see [`Edge`].
pub fn near(
    rng: &mut impl Rng,
    q: &IrisCode,
    shift: i32,
    num: u64,
    den: u64,
    edge: Edge,
) -> IrisCode {
    let bits = q.code.len() * 8;
    let base = q.rotate(shift as i64);
    let mut mask = random_code(rng, bits).mask;
    let mut both: Vec<usize> = (0..bits)
        .filter(|&i| (base.mask[i / 8] & mask[i / 8]) >> (i % 8) & 1 == 1)
        .collect();
    if let Edge::Exactly = edge {
        // Mask out a few more bits so that `ratio * ml` is whole and hd can sit exactly on it.
        for _ in 0..both.len() as u64 % den {
            let bit = both.pop().expect("fewer than den bits to drop");
            mask[bit / 8] &= !(1 << (bit % 8));
        }
    }
    let ml = both.len() as u64;
    // Largest hd that still matches: hd * den < num * ml.
    let below = if num * ml == 0 {
        0
    } else {
        (num * ml - 1) / den
    };
    let hd = match edge {
        Edge::JustBelow => below,
        Edge::AtOrAbove => below + 1,
        Edge::Exactly => num * ml / den,
        Edge::WellAbove => (ml / 2).max(below + 1),
    }
    .min(ml) as usize;
    let mut code = base.code.clone();
    let mut chosen = both.clone();
    for i in 0..hd {
        let j = rng.random_range(i..chosen.len());
        chosen.swap(i, j);
        let bit = chosen[i];
        code[bit / 8] ^= 1 << (bit % 8);
    }
    let made = IrisCode { code, mask };
    let o = irisc_runtime::iris::overlap_counts(&base, &made).expect("same length");
    assert_eq!(
        (o.ml as u64, o.hd as usize),
        (ml, hd),
        "the constructed pair has the intended distance"
    );
    made
}

#[derive(Debug, Clone, Copy)]
pub enum Edge {
    /// The largest distance that still matches.
    JustBelow,
    /// The smallest distance that does not match (exactly at the ratio when `ratio * ml` is whole).
    AtOrAbove,
    /// `hd = ratio * ml` exactly (the mask is trimmed so that this is whole): no match.
    Exactly,
    WellAbove,
}

/// A gallery of `n` records and `m` queries from `seed`: every query has records at each edge of
/// the threshold, at random rotations within `-max_rot..=max_rot`, among random records.
pub fn edge_case_set(
    seed: u64,
    bits: usize,
    n_random: usize,
    queries: usize,
    num: u64,
    den: u64,
    max_rot: i32,
) -> (Vec<Record>, Vec<Record>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut gallery = Vec::new();
    let mut qs = Vec::new();
    let mut next_id = 100u64;
    for qi in 0..queries {
        let q = random_code(&mut rng, bits);
        for edge in [
            Edge::JustBelow,
            Edge::AtOrAbove,
            Edge::Exactly,
            Edge::WellAbove,
        ] {
            if rng.random_bool(0.8) {
                let shift = rng.random_range(-max_rot..=max_rot);
                gallery.push(Record {
                    id: next_id,
                    iris: near(&mut rng, &q, shift, num, den, edge),
                });
                next_id += 1;
            }
        }
        // A record at a rotation the program does not check.
        if 2 * max_rot + 1 < (bits / 64) as i32 && rng.random_bool(0.5) {
            gallery.push(Record {
                id: next_id,
                iris: near(&mut rng, &q, max_rot + 1, num, den, Edge::JustBelow),
            });
            next_id += 1;
        }
        qs.push(Record {
            id: qi as u64,
            iris: q,
        });
    }
    // The ring edges: with full masks, an identical record puts `T - dot` at the bottom of its
    // range (`floor(f*l) - l`) and the complement at the top (`floor(f*l) + l`).
    let full = IrisCode {
        code: random_code(&mut rng, bits).code,
        mask: vec![0xff; bits / 8],
    };
    let complement = IrisCode {
        code: full.code.iter().map(|b| !b).collect(),
        mask: full.mask.clone(),
    };
    for iris in [full.clone(), complement] {
        gallery.push(Record { id: next_id, iris });
        next_id += 1;
    }
    qs.push(Record {
        id: queries as u64,
        iris: full,
    });
    for _ in 0..n_random {
        gallery.push(Record {
            id: next_id,
            iris: random_code(&mut rng, bits),
        });
        next_id += 1;
    }
    // Shuffle so matches are spread over the gallery.
    for i in (1..gallery.len()).rev() {
        let j = rng.random_range(0..=i);
        gallery.swap(i, j);
    }
    (gallery, qs)
}
