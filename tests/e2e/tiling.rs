//! The tiled schedule (the `mpc-tile` pass, `compiler/src/passes/mpc_tile/`): queries in
//! batches of 8, the gallery scanned in chunks of `--record-chunk` records with the next chunk's
//! dot products computed in the background. Whatever the chunk size, the three parties must answer exactly
//! as the plaintext definition does, and as the scan of the whole gallery at once does.

use serde_json::Value;

use crate::common;
use crate::language::{check_shape, record_ids, run_checked_env, s, Work};

/// `irisc run PROGRAM ARGS --record-chunk N --check` (answers checked against the plaintext).
fn chunked(program: &str, args: &[&str], chunk: usize, threads: usize) -> Vec<Value> {
    let (chunk, threads) = (chunk.to_string(), threads.to_string());
    run_checked_env(
        &common::example(program),
        args,
        &["--record-chunk", &chunk, "--threads", &threads],
        &[],
    )
}

/// 23 records (chunks of 5 leave a short last one) and 11 queries (a full batch of 8 and a short
/// one of 3): every example shape answers the same for every chunk size.
#[test]
fn every_shape_answers_the_same_in_chunks() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 23, 31, 256);
    let q = w.near("q.ndjson", &db, 11, 32, "0.375");
    let batch = w.batch("batch.ndjson", &db, 5, 33, "0.375");
    let left = w.gallery("left.ndjson", 23, 34, 256);
    let right = w.gallery("right.ndjson", 23, 35, 256);
    let ql = w.near("ql.ndjson", &left, 11, 36, "0.375");
    let qr = w.near("qr.ndjson", &right, 11, 36, "0.375");
    let tier = w.gen(
        "tier.ndjson",
        &["--kind", "bit", "--count", "11", "--seed", "37"],
    );
    let eyes = [
        format!("left={}", s(&left)),
        format!("right={}", s(&right)),
        format!("ql={}", s(&ql)),
        format!("qr={}", s(&qr)),
    ];
    let tiered = [format!("q={}", s(&q)), format!("tier={}", s(&tier))];
    let db_q = ["--db", s(&db), "--query", s(&q)];
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("small_ids.irs", db_q.to_vec()),
        ("small_secret.irs", db_q.to_vec()),
        ("small_count.irs", db_q.to_vec()),
        (
            "small_batch.irs",
            vec!["--db", s(&db), "--query", s(&batch)],
        ),
        (
            "small_eyes.irs",
            vec![
                "--input", &eyes[0], "--input", &eyes[1], "--input", &eyes[2], "--input", &eyes[3],
            ],
        ),
        (
            "small_tiered.irs",
            vec!["--db", s(&db), "--input", &tiered[0], "--input", &tiered[1]],
        ),
    ];
    for (program, args) in &cases {
        let whole = chunked(program, args, 0, 1);
        for chunk in [5, 1, 100] {
            let got = chunked(program, args, chunk, 2);
            assert_eq!(got, whole, "{program} with --record-chunk {chunk}");
        }
    }
}

/// A reduction over all records (`any d in db`, one opened bit) finished over the chunks'
/// results, at the deployed code length.
#[test]
fn one_bit_over_all_records_in_chunks() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 23, 41, 12_800);
    let q = w.near("q.ndjson", &db, 11, 42, "0.345");
    let args = ["--db", s(&db), "--query", s(&q)];
    let whole = chunked("iris_unique.irs", &args, 0, 1);
    assert!(whole.iter().any(|a| a["match"] == true) && whole.iter().any(|a| a["match"] == false));
    for chunk in [4, 23, 22] {
        assert_eq!(
            chunked("iris_unique.irs", &args, chunk, 1),
            whole,
            "--record-chunk {chunk}"
        );
    }
}

/// Every sharing's batch dot product (one kernel call for the batch, split per query) in
/// chunks, for ids and for a count.
#[test]
fn every_sharing_in_chunks() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 19, 51, 256);
    let q = w.near("q.ndjson", &db, 9, 52, "0.375");
    for sharing in ["rep3", "gr2", "gr4", "fp"] {
        let args = ["--db", s(&db), "--query", s(&q), "--sharing", sharing];
        let whole = chunked("small_ids.irs", &args, 0, 1);
        check_shape(&whole, 9, &["query", "match", "ids"], &record_ids(&db));
        assert_eq!(
            chunked("small_ids.irs", &args, 4, 2),
            whole,
            "--sharing {sharing}"
        );
        let count = chunked("small_count.irs", &args, 0, 1);
        assert_eq!(
            chunked("small_count.irs", &args, 6, 1),
            count,
            "--sharing {sharing}"
        );
    }
}

/// `(rounds, whether dot products ran in the background)` from party 0's accounting line.
fn accounting(program: &str, args: &[&str], chunk: usize) -> (u64, bool) {
    let out = common::irisc()
        .arg("run")
        .arg(common::example(program))
        .args(args)
        .args(["--record-chunk", &chunk.to_string(), "--check"])
        .output()
        .expect("irisc runs");
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("[party 0]") && l.contains(" rounds"))
        .unwrap_or_else(|| panic!("no accounting line in:\n{err}"));
    let rounds = line
        .split(" rounds")
        .next()
        .and_then(|s| s.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rounds in {line}"));
    (rounds, line.contains("in the background"))
}

/// The chunks really run: each chunk's comparison rounds are spent once per chunk for the whole
/// batch (the batched chunk stage; the opening once per batch), and from the second chunk on
/// the dot products run in the background.
#[test]
fn chunks_spend_their_own_rounds_and_overlap_the_dot_products() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 23, 61, 256);
    let q = w.near("q.ndjson", &db, 11, 62, "0.375");
    let args = ["--db", s(&db), "--query", s(&q)];
    let (whole, background) = accounting("small_ids.irs", &args, 0);
    assert!(!background, "one chunk has nothing to overlap");
    // 11 queries: a batch of 8 and one of 3, each with one query's rounds.
    assert_eq!(whole % 2, 0, "the same rounds for every batch");
    let per_batch = whole / 2;
    // 23 records in chunks of 5: 5 chunks, each with the comparison's rounds (all but the
    // opening's one).
    let (chunked, background) = accounting("small_ids.irs", &args, 5);
    assert_eq!(chunked, 2 * (5 * (per_batch - 1) + 1));
    assert!(background, "no dot product ran in the background");
}
