//! An asymmetric rotation window (`rotations(q, 2..=9)` on 16-column codes): the MPC answers
//! equal the contract's rotation rule, as computed by [`crate::reference`]. Every other window in
//! the suite is symmetric, where a rotation applied in the wrong direction (`col - s` instead of
//! `col + s`) yields the same set of rotated codes and so the same answers; here it does not,
//! because every query also has records placed at the mirrored shifts `-s`, outside the window.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use irisc_runtime::iris::{IrisCode, IrisRecord};

use crate::common::{self, Setup};
use crate::data::random_code;
use crate::reference;

const BITS: usize = 1024;
const WINDOW: std::ops::RangeInclusive<i64> = 2..=9;
/// MATCH_RATIO = 0.375 = 3/8.
const NUM: u64 = 3;
const DEN: u64 = 8;

fn program() -> PathBuf {
    common::repo().join("tests/e2e/programs/asymmetric_rotations.irs")
}

/// A record close to `rot(q, shift)`: the query's rotation with a few valid bits flipped
/// (a tenth of the overlap, well under the ratio), under a fresh mask.
fn close_to(rng: &mut impl Rng, q: &IrisCode, shift: i64) -> IrisCode {
    let mut made = reference::rotate(q, shift);
    made.mask = random_code(rng, BITS).mask;
    for _ in 0..BITS / 10 {
        let i = rng.random_range(0..BITS);
        made.code[i / 8] ^= 1 << (i % 8);
    }
    made
}

/// Per query: records near rotations inside the window, near the mirrored rotations `-s`
/// (outside the window for `s` in 2..=6, where `-s mod 16` is 10..=14), near the shifts just
/// outside (1 and 10), and random records.
fn records(seed: u64, queries: usize) -> (Vec<IrisRecord>, Vec<IrisRecord>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (mut gallery, mut qs) = (Vec::new(), Vec::new());
    let mut id = 5000u64;
    let mut push = |gallery: &mut Vec<IrisRecord>, iris| {
        gallery.push(IrisRecord { id, iris });
        id += 3;
    };
    for qi in 0..queries {
        let q = random_code(&mut rng, BITS);
        let inside = rng.random_range(WINDOW);
        let mirrored = -rng.random_range(2..=6i64);
        for shift in [inside, mirrored, 1, 10] {
            let iris = close_to(&mut rng, &q, shift);
            push(&mut gallery, iris);
        }
        let iris = random_code(&mut rng, BITS);
        push(&mut gallery, iris);
        qs.push(IrisRecord {
            id: 70 + qi as u64,
            iris: q,
        });
    }
    (gallery, qs)
}

static SETUP: OnceLock<Setup> = OnceLock::new();

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn asymmetric_window_answers_follow_the_contract(seed in any::<u64>(), queries in 1usize..4) {
        let setup = SETUP.get_or_init(|| common::setup(&program()));
        let (gallery, qs) = records(seed, queries);
        let expected = reference::matching_ids(&gallery, &qs, WINDOW, NUM, DEN);
        // The data really exercises the direction: each query matches its record inside the
        // window, and none of the records placed at a mirrored shift outside it.
        for (qi, ids) in expected.iter().enumerate() {
            let inside = gallery[qi * 5].id;
            let mirrored = gallery[qi * 5 + 1].id;
            prop_assert!(ids.contains(&inside), "query {qi}: no match inside the window");
            prop_assert!(!ids.contains(&mirrored), "query {qi}: a mirrored record matches");
        }
        let db = setup.share(&program(), "--db", "db", &gallery);
        let q = setup.share(&program(), "--query", "query", &qs);
        let outs = setup.run_three(&db, &q, &["--timeout", "20"]);
        for (p, o) in outs.iter().enumerate() {
            prop_assert!(o.status.success(), "party {} failed:\n{}", p, common::stderr(o));
        }
        let got = reference::printed_ids(&common::stdout_json(&outs[0]));
        prop_assert_eq!(got, expected);
    }
}
