//! Secret masks at a ratio that `a/b` cannot represent (r = 0.34 = 17/50, f = 1 - 2r = 8/25):
//! the pairs sit exactly at the ratio and a few units of Hamming distance either side of it, and
//! the three parties' answers are checked against rules computed here, not by the compiler:
//!
//! - the rule Algorithm 3 documents, `b*dot > a*ml` with the `(a, b)` that `irisc explain`
//!   reports: the parties compute exactly that;
//! - the exact ratio rule `hd*den < num*ml` ([`crate::reference`]): the approximation is
//!   conservative (`a/b >= f`), so it never adds a match, and outside the documented error band
//!   (`b*|den*dot - fnum*ml| <= (a*den - fnum*b)*ml`) it decides as the exact rule does.
//!
//! The reported `(a, b)` itself must lie on the documented side of `f`, within `1/b` of it.
//! At the deployed precision (`b = 2^16`) the ties are the only pairs inside the band; at
//! `--precision 4` the band is wide and the test checks that disagreements really occur there.

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use irisc_runtime::io::ndjson;
use irisc_runtime::iris::{IrisCode, IrisRecord};

use crate::common;
use crate::data::random_code;
use crate::reference;

const BITS: usize = 256;
const NUM: u64 = 17;
const DEN: u64 = 50;
/// `f = 1 - 2r = fnum / den`.
const FNUM: i128 = DEN as i128 - 2 * NUM as i128;
const ROTATIONS: std::ops::RangeInclusive<i64> = -1..=1;
/// Hamming distances relative to `r * ml` (whole: `ml` is a multiple of `den`).
const OFFSETS: [i64; 7] = [-7, -5, -3, -1, 0, 1, 2];

fn program() -> PathBuf {
    common::repo().join("tests/e2e/programs/secret_ratio_034.irs")
}

/// A record whose overlap with `rot(q, shift)` is a multiple of `den` bits and whose distance to
/// it is `r*ml + offset`, both checked with the reference's own count.
fn at_offset(rng: &mut impl Rng, q: &IrisCode, shift: i64, offset: i64) -> IrisCode {
    let base = reference::rotate(q, shift);
    let mut made = IrisCode {
        code: base.code.clone(),
        mask: random_code(rng, BITS).mask,
    };
    let bit = |b: &[u8], i: usize| (b[i / 8] >> (i % 8)) & 1 == 1;
    let mut both: Vec<usize> = (0..BITS)
        .filter(|&i| bit(&base.mask, i) && bit(&made.mask, i))
        .collect();
    while both.len() as u64 % DEN != 0 {
        let i = both.swap_remove(rng.random_range(0..both.len()));
        made.mask[i / 8] &= !(1 << (i % 8));
    }
    let ml = both.len() as u64;
    let hd = (NUM * ml / DEN) as i64 + offset;
    assert!(
        hd >= 0 && hd as u64 <= ml,
        "ml {ml} too small for offset {offset}"
    );
    for k in 0..hd as usize {
        let j = rng.random_range(k..both.len());
        both.swap(k, j);
        let i = both[k];
        made.code[i / 8] ^= 1 << (i % 8);
    }
    assert_eq!(reference::overlap(&base, &made), (ml, hd as u64));
    made
}

/// Per query: one record at each offset from the ratio, at a random rotation of the window, and
/// two random records. Ids are neither positions nor consecutive.
fn records(seed: u64, queries: usize) -> (Vec<IrisRecord>, Vec<IrisRecord>) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (mut gallery, mut qs) = (Vec::new(), Vec::new());
    for qi in 0..queries {
        let q = random_code(&mut rng, BITS);
        for offset in OFFSETS {
            let shift = rng.random_range(ROTATIONS);
            let iris = at_offset(&mut rng, &q, shift, offset);
            gallery.push(IrisRecord {
                id: 900 + 7 * gallery.len() as u64,
                iris,
            });
        }
        for _ in 0..2 {
            let iris = random_code(&mut rng, BITS);
            gallery.push(IrisRecord {
                id: 900 + 7 * gallery.len() as u64,
                iris,
            });
        }
        qs.push(IrisRecord {
            id: 40 + qi as u64,
            iris: q,
        });
    }
    (gallery, qs)
}

/// The `(a, b)` that `irisc explain --json` reports for the program's one comparison.
fn reported_a_b(choices: &[&str]) -> (i128, i128) {
    let out = common::irisc_ok(
        &[
            &["explain", program().to_str().unwrap(), "--json"][..],
            choices,
        ]
        .concat(),
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("explain --json");
    let c = &json["comparisons"][0];
    assert_eq!(c["mask"], "secret", "{c}");
    (
        c["a"].as_i64().expect("a") as i128,
        c["b"].as_i64().expect("b") as i128,
    )
}

/// Per (query, record): (rule of Algorithm 3 with (a, b), exact rule, inside the error band)
/// over the window's rotations (the band flag: some rotation's pair lies inside it).
fn decisions(
    gallery: &[IrisRecord],
    qs: &[IrisRecord],
    a: i128,
    b: i128,
) -> Vec<Vec<(bool, bool, bool)>> {
    let error = a * DEN as i128 - FNUM * b;
    qs.iter()
        .map(|q| {
            let turned: Vec<IrisCode> = ROTATIONS.map(|s| reference::rotate(&q.iris, s)).collect();
            gallery
                .iter()
                .map(|d| {
                    let (mut approx, mut exact, mut band) = (false, false, false);
                    for c in &turned {
                        let (ml, hd) = reference::overlap(c, &d.iris);
                        let (ml, dot) = (ml as i128, ml as i128 - 2 * hd as i128);
                        approx |= b * dot > a * ml;
                        exact |= reference::exact_match(ml as u64, hd, NUM, DEN);
                        band |= b * (DEN as i128 * dot - FNUM * ml).abs() <= error.abs() * ml;
                    }
                    (approx, exact, band)
                })
                .collect()
        })
        .collect()
}

fn run(db: &Path, q: &Path, choices: &[&str]) -> Vec<Vec<u64>> {
    let out = common::irisc()
        .arg("run")
        .arg(program())
        .args(["--db", db.to_str().unwrap(), "--query", q.to_str().unwrap()])
        .args(["--threads", "1", "--timeout", "30"])
        .args(choices)
        .output()
        .expect("irisc runs");
    assert!(
        out.status.success(),
        "irisc run {choices:?} failed:\n{}",
        common::stderr(&out)
    );
    reference::printed_ids(&common::stdout_json(&out))
}

#[test]
fn secret_mask_ties_and_neighbours_follow_the_documented_rules() {
    let dir = tempfile::tempdir().unwrap();
    let configs: [(&[&str], u64); 4] = [
        (&["--sharing", "rep3", "--variant", "no-lift"], 1),
        (&["--sharing", "rep3", "--variant", "const-lift"], 2),
        (&["--sharing", "rep3", "--variant", "mpc-lift"], 3),
        (
            &[
                "--sharing",
                "rep3",
                "--variant",
                "mpc-lift",
                "--precision",
                "4",
            ],
            4,
        ),
    ];
    for (choices, seed) in configs {
        let (a, b) = reported_a_b(choices);
        // The documented side: a/b >= f (conservative), and within 1/b of it.
        let error = a * DEN as i128 - FNUM * b;
        assert!(error >= 0, "{choices:?}: a/b = {a}/{b} < f = {FNUM}/{DEN}");
        assert!(
            error < DEN as i128,
            "{choices:?}: a/b = {a}/{b} is 1/b or more above f"
        );

        let (gallery, qs) = records(seed, 4);
        let db = dir.path().join(format!("db{seed}.ndjson"));
        let q = dir.path().join(format!("q{seed}.ndjson"));
        ndjson::write_file(&db, &gallery).unwrap();
        ndjson::write_file(&q, &qs).unwrap();
        let got = run(&db, &q, choices);
        assert_eq!(got.len(), qs.len(), "{choices:?}: one answer per query");

        let table = decisions(&gallery, &qs, a, b);
        let mut disagreements = 0;
        for (qi, row) in table.iter().enumerate() {
            let documented: Vec<u64> = gallery
                .iter()
                .zip(row)
                .filter(|(_, (approx, _, _))| *approx)
                .map(|(d, _)| d.id)
                .collect();
            assert_eq!(got[qi], documented, "{choices:?}: query {qi}");
            for (d, &(approx, exact, band)) in gallery.iter().zip(row) {
                assert!(
                    !approx || exact,
                    "{choices:?}: record {} matches query {qi} under a/b but not under r",
                    d.id
                );
                if !band {
                    assert_eq!(
                        approx, exact,
                        "{choices:?}: record {} outside the band",
                        d.id
                    );
                }
                disagreements += usize::from(approx != exact);
            }
        }
        let matches: usize = got.iter().map(Vec::len).sum();
        assert!(matches >= qs.len(), "{choices:?}: too few matches: {got:?}");
        if choices.contains(&"4") {
            assert!(
                disagreements > 0,
                "at b = 2^4 some pair in the band should decide differently"
            );
        } else {
            assert_eq!(
                disagreements, 0,
                "{choices:?}: at b = 2^16 only ties are in the band"
            );
        }
    }
}
