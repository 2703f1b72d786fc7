//! The mirror-attack check (`rotations(mirror(q), ...)`, `examples/small_mirror.irs`): a query
//! presented as the mirror image of a person's capture matches that person's records through
//! the mirror branch. Answers are compared with a mirror written here bit by bit from the
//! contract (columns reversed, odd cell bits flipped, masks unflipped), on records at the
//! threshold's edges, under every sharing. Under a Galois-ring sharing the query's owner deals
//! the code's conjugate too; a query file dealt without it (or with it, for a program that
//! does not read it) is refused with what to do.

use irisc_runtime::io::ndjson;
use irisc_runtime::iris::{IrisCode, IrisRecord};

use crate::common;
use crate::data;
use crate::reference;

const ROWS: usize = 16;

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

/// `mirror(q)[row][col][k] = q[row][cols - 1 - col][k]`, the code bit flipped for odd `k`.
pub(crate) fn mirror(code: &IrisCode) -> IrisCode {
    let bits = code.code.len() * 8;
    let cols = bits / (ROWS * 4);
    let mut out = IrisCode {
        code: vec![0; code.code.len()],
        mask: vec![0; code.mask.len()],
    };
    for row in 0..ROWS {
        for col in 0..cols {
            for k in 0..4 {
                let to = row * cols * 4 + col * 4 + k;
                let from = row * cols * 4 + (cols - 1 - col) * 4 + k;
                if bit(&code.code, from) != (k % 2 == 1) {
                    out.code[to / 8] |= 1 << (to % 8);
                }
                if bit(&code.mask, from) {
                    out.mask[to / 8] |= 1 << (to % 8);
                }
            }
        }
    }
    out
}

/// The program's answer per presented query: the records matching a rotation of the query or
/// of its mirror image, in gallery order.
pub(crate) fn expected(gallery: &[IrisRecord], presented: &[IrisRecord]) -> Vec<Vec<u64>> {
    let direct = reference::matching_ids(gallery, presented, -2..=2, 3, 8);
    let mirrored: Vec<IrisRecord> = presented
        .iter()
        .map(|q| IrisRecord {
            id: q.id,
            iris: mirror(&q.iris),
        })
        .collect();
    let via_mirror = reference::matching_ids(gallery, &mirrored, -2..=2, 3, 8);
    direct
        .iter()
        .zip(&via_mirror)
        .map(|(a, b)| {
            gallery
                .iter()
                .map(|r| r.id)
                .filter(|id| a.contains(id) || b.contains(id))
                .collect()
        })
        .collect()
}

#[test]
fn mirrored_captures_match_through_the_mirror_branch_under_every_sharing() {
    mirrored_captures_match(&common::repo().join("examples/small_mirror.irs"), 3);
}

/// As [`mirrored_captures_match_through_the_mirror_branch_under_every_sharing`] with secret
/// masks: the query's mask shares are mirrored without the code's sign change (`mirror = 2`).
/// Mirroring the mask with the sign change, or not mirroring it, makes this fail.
#[test]
fn secret_masks_are_mirrored_with_their_codes() {
    mirrored_captures_match(
        &common::repo().join("tests/e2e/programs/small_mirror_secret.irs"),
        3,
    );
}

/// `program` (small_mirror's check) under every sharing and the planner's choice, on
/// edge-case sets from `first_seed` on where some mirrored queries match only through the
/// mirror branch.
fn mirrored_captures_match(program: &std::path::Path, first_seed: u64) {
    for (seed, sharing) in [
        (first_seed, Some("rep3")),
        (first_seed + 1, Some("fp")),
        (first_seed + 2, Some("gr2")),
        (first_seed + 3, Some("gr4")),
        (first_seed + 4, None),
    ] {
        let (gallery, queries) = data::edge_case_set(seed, 256, 6, 4, 3, 8, 2);
        // Odd queries are presented as the mirror image of the person's capture.
        let presented: Vec<IrisRecord> = queries
            .iter()
            .enumerate()
            .map(|(i, q)| IrisRecord {
                id: q.id,
                iris: if i % 2 == 1 {
                    mirror(&q.iris)
                } else {
                    q.iris.clone()
                },
            })
            .collect();
        let want = expected(&gallery, &presented);
        let plain = reference::matching_ids(&gallery, &presented, -2..=2, 3, 8);
        assert!(
            want.iter()
                .zip(&plain)
                .skip(1)
                .step_by(2)
                .any(|(w, p)| w.len() > p.len()),
            "seed {seed}: no mirrored query matches only through the mirror branch"
        );
        let dir = tempfile::tempdir().unwrap();
        let (db, q) = (dir.path().join("db.ndjson"), dir.path().join("q.ndjson"));
        ndjson::write_file(&db, &gallery).unwrap();
        ndjson::write_file(&q, &presented).unwrap();
        let (db_arg, q_arg) = (format!("db={}", db.display()), format!("q={}", q.display()));
        let mut args = vec![
            "run",
            program.to_str().unwrap(),
            "--input",
            &db_arg,
            "--input",
            &q_arg,
            "--timeout",
            "30",
        ];
        if let Some(s) = sharing {
            args.extend(["--sharing", s]);
        }
        let out = common::irisc_ok(&args);
        let got = reference::printed_ids(&common::stdout_json(&out));
        assert_eq!(got, want, "sharing {sharing:?}, seed {seed}");
    }
}

/// Under gr2, `mirror(q)` reads the conjugates that `irisc share` deals for it: a query
/// file dealt for a program without `mirror(q)` lacks them and is refused at load, naming the
/// input and how to re-share; a file with them is refused by that other program likewise.
#[test]
fn a_galois_ring_query_without_its_conjugates_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (gallery, queries) = data::edge_case_set(11, 256, 4, 2, 3, 8, 2);
    let (db, q) = (dir.path().join("db.ndjson"), dir.path().join("q.ndjson"));
    ndjson::write_file(&db, &gallery).unwrap();
    ndjson::write_file(&q, &queries).unwrap();
    let config = common::keys_in(dir.path());
    let programs = [
        ("mirror", common::repo().join("examples/small_mirror.irs")),
        ("plain", common::repo().join("examples/small_ids.irs")),
    ];
    for (name, program) in &programs {
        let exe = dir.path().join(name);
        let shares = dir.path().join(format!("{name}-shares"));
        common::irisc_ok(&[
            "build",
            program.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
            "--sharing",
            "gr2",
        ]);
        common::irisc_ok(&[
            "share",
            "--program",
            program.to_str().unwrap(),
            "--input",
            &format!("db={}", db.display()),
            "--input",
            &format!("q={}", q.display()),
            "-o",
            shares.to_str().unwrap(),
            "--sharing",
            "gr2",
        ]);
    }
    for (exe, shares, want) in [
        ("mirror", "plain-shares", "without their conjugates"),
        ("plain", "mirror-shares", "with their conjugates"),
    ] {
        let shares = dir.path().join(shares);
        let child = std::process::Command::new(dir.path().join(exe))
            .args(["--party", "0", "--config", config.to_str().unwrap()])
            .arg("--input")
            .arg(format!("db={}", shares.join("p0/db.shares").display()))
            .arg("--input")
            .arg(format!("q={}", shares.join("p0/q.shares").display()))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = common::wait_bounded(child, std::time::Duration::from_secs(60));
        assert!(!out.status.success(), "{exe} ran on {}", shares.display());
        let err = common::stderr(&out);
        assert!(err.contains(want), "{exe}: {err}");
        assert!(
            err.contains("`q`") || err.contains("mirror(q)"),
            "{exe}: {err}"
        );
        assert!(err.contains("irisc share"), "{exe}: {err}");
    }
}
