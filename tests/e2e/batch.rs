//! A batch's comparisons as one vector (the batched chunk stage of `mpc-tile`): three party
//! processes over TLS answer the same for every batch size (1..11 queries, the last batch
//! partial) and record chunk, batched and with `--per-query-chunks`, as the plaintext
//! definition (`--check`) does, with queries planted near gallery records so that matches occur;
//! and a batch of 8 queries costs the rounds of one.

use serde_json::Value;

use crate::common;
use crate::language::{run_checked_env, s, Work};

fn run(program: &str, args: &[&str], chunk: usize, per_query: bool) -> Vec<Value> {
    let chunk = chunk.to_string();
    let mut extra = vec!["--record-chunk", chunk.as_str(), "--threads", "2"];
    if per_query {
        extra.push("--per-query-chunks");
    }
    run_checked_env(&common::example(program), args, &extra, &[])
}

/// Batched == per-query == plaintext (`--check`), for batches of 1..11 queries, in chunks, for
/// ids, both eyes and the tiered (secret per-query choice) and count programs.
#[test]
fn batched_comparisons_equal_per_query_ones() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 17, 71, 256);
    let left = w.gallery("left.ndjson", 17, 72, 256);
    let right = w.gallery("right.ndjson", 17, 73, 256);
    let mut matched = false;
    for (queries, chunk) in [(1usize, 0usize), (8, 5), (11, 4)] {
        let q = w.near(&format!("q{queries}.ndjson"), &db, queries, 74, "0.375");
        let ql = w.near(&format!("ql{queries}.ndjson"), &left, queries, 75, "0.375");
        let qr = w.near(&format!("qr{queries}.ndjson"), &right, queries, 75, "0.375");
        let tier = w.gen(
            &format!("tier{queries}.ndjson"),
            &[
                "--kind",
                "bit",
                "--count",
                &queries.to_string(),
                "--seed",
                "76",
            ],
        );
        let eyes = [
            format!("left={}", s(&left)),
            format!("right={}", s(&right)),
            format!("ql={}", s(&ql)),
            format!("qr={}", s(&qr)),
        ];
        let tiered = [format!("q={}", s(&q)), format!("tier={}", s(&tier))];
        let db_q = vec!["--db", s(&db), "--query", s(&q)];
        let cases: Vec<(&str, Vec<&str>)> = vec![
            ("small_ids.irs", db_q.clone()),
            ("small_count.irs", db_q.clone()),
            (
                "small_eyes.irs",
                vec![
                    "--input", &eyes[0], "--input", &eyes[1], "--input", &eyes[2], "--input",
                    &eyes[3],
                ],
            ),
            (
                "small_tiered.irs",
                vec!["--db", s(&db), "--input", &tiered[0], "--input", &tiered[1]],
            ),
        ];
        for (program, args) in &cases {
            let batched = run(program, args, chunk, false);
            assert_eq!(batched.len(), queries, "{program}");
            let per_query = run(program, args, chunk, true);
            assert_eq!(
                batched, per_query,
                "{program}, {queries} queries, chunks of {chunk}"
            );
        }
        // Planted queries really match (in some batch).
        let ids = run("small_ids.irs", &db_q, chunk, false);
        matched |= ids
            .iter()
            .any(|a| a["ids"].as_array().is_some_and(|v| !v.is_empty()));
    }
    assert!(matched, "no match occurred");
}

/// Party 0's rounds from its accounting line.
fn rounds(program: &str, args: &[&str], per_query: bool) -> u64 {
    let mut cmd = common::irisc();
    cmd.arg("run")
        .arg(common::example(program))
        .args(args)
        .arg("--check");
    if per_query {
        cmd.arg("--per-query-chunks");
    }
    let out = cmd.output().expect("irisc runs");
    let err = common::stderr(&out);
    assert!(out.status.success(), "{err}");
    let line = err
        .lines()
        .find(|l| l.contains("[party 0]") && l.contains(" rounds"))
        .unwrap_or_else(|| panic!("no accounting line in:\n{err}"));
    line.split(" rounds")
        .next()
        .and_then(|s| s.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no rounds in {line}"))
}

/// A batch of 8 `iris_ids` queries takes the rounds of one query (23: AdditiveMSB's 17, the OR
/// tree's 5, the opening); per query it took 8x.
#[test]
fn a_batch_of_eight_costs_one_querys_rounds() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 6, 81, 12_800);
    let one = w.near("one.ndjson", &db, 1, 82, "0.345");
    let eight = w.near("eight.ndjson", &db, 8, 82, "0.345");
    let single = rounds("iris_ids.irs", &["--db", s(&db), "--query", s(&one)], false);
    let batch = rounds(
        "iris_ids.irs",
        &["--db", s(&db), "--query", s(&eight)],
        false,
    );
    assert_eq!(single, 23);
    assert_eq!(batch, single, "a batch of 8 costs one query's rounds");
    let per_query = rounds(
        "iris_ids.irs",
        &["--db", s(&db), "--query", s(&eight)],
        true,
    );
    assert_eq!(per_query, 8 * single);
}
