//! TripleGen (paper 004, Fig. 2) the way the paper's baseline makes it: GMW-style from
//! oblivious transfer, p(p - 1) OTs per triple (Sect. 2.5).
//!
//! Each party draws its shares `a_i`, `b_i` at random; then
//! `c = (XOR a_i)(XOR b_j) = XOR_i a_i b_i ^ XOR_{i != j} a_i b_j`: the first terms are local,
//! each cross term takes one OT between P_i (receiver, choice `a_i`) and P_j (sender)
//! ([`OtLinks::cross_products`]).

use crate::net::Transport;

use super::links::OtLinks;
use super::material::{words_for, Triples};
use super::{BeaverError, LocalRng};

/// This party's shares of `count` fresh triples on `lanes` lanes each.
pub fn triple_gen(
    net: &mut dyn Transport,
    links: &mut OtLinks,
    rng: &mut LocalRng,
    count: u64,
    lanes: usize,
) -> Result<Triples, BeaverError> {
    let w = words_for(lanes);
    let n = count as usize * w;
    if n == 0 {
        let empty = Vec::new();
        return Ok(Triples {
            count,
            words: w,
            a: empty.clone(),
            b: empty.clone(),
            c: empty,
        });
    }
    let tail = tail_mask(lanes);
    let mut a = rng.words(n);
    let mut b = rng.words(n);
    // Lanes past `lanes` in the last word carry nothing: keep them zero in every share.
    for row in 0..count as usize {
        a[row * w + w - 1] &= tail;
        b[row * w + w - 1] &= tail;
    }
    let bits = |v: &[u64]| -> Vec<bool> {
        (0..count as usize)
            .flat_map(|row| (0..lanes).map(move |l| (row, l)))
            .map(|(row, l)| v[row * w + l / 64] >> (l % 64) & 1 == 1)
            .collect()
    };
    let cross = links.cross_products(net, &bits(&a), &bits(&b))?;
    let mut c: Vec<u64> = a.iter().zip(&b).map(|(a, b)| a & b).collect();
    for (i, &x) in cross.iter().enumerate() {
        let (row, l) = (i / lanes.max(1), i % lanes.max(1));
        c[row * w + l / 64] ^= u64::from(x) << (l % 64);
    }
    Ok(Triples {
        count,
        words: w,
        a,
        b,
        c,
    })
}

/// The bits of the last word that hold lanes.
pub fn tail_mask(lanes: usize) -> u64 {
    match lanes % 64 {
        0 => !0,
        r => (1u64 << r) - 1,
    }
}
