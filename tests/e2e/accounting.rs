//! `irisc explain` predicts what the parties do: its rounds per query equal the rounds the
//! runtime counts, and its bytes per party are the payload of what party 0 sends (the wire adds
//! a frame header per message and pads bit vectors to whole words), for every variant and
//! sharing.

use std::path::Path;

use crate::common;

/// `(rounds, bytes)` of party 0's accounting line on `irisc run`'s stderr.
fn measured(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find(|l| l.contains("[party 0]") && l.contains(" rounds"))
        .unwrap_or_else(|| panic!("no accounting line from party 0 in:\n{stderr}"));
    let num_before = |word: &str| -> u64 {
        let at = line
            .find(word)
            .unwrap_or_else(|| panic!("no `{word}` in {line}"));
        line[..at]
            .split_whitespace()
            .last()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no number before `{word}` in {line}"))
    };
    (num_before(" rounds"), num_before(" bytes"))
}

/// `(rounds, bytes per party)` per query from `irisc explain --json --records n`.
fn predicted(program: &Path, records: usize, flags: &[&str]) -> (u64, f64) {
    let mut args = vec!["explain", program.to_str().unwrap(), "--json", "--records"];
    let n = records.to_string();
    args.push(&n);
    args.extend_from_slice(flags);
    let out = common::irisc_ok(&args);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let q = &v["per_query"];
    (
        q["rounds"].as_u64().expect("rounds"),
        q["bytes_per_party"].as_f64().expect("bytes_per_party"),
    )
}

#[test]
fn explain_predicts_the_rounds_and_bytes_the_parties_spend() {
    let work = tempfile::tempdir().unwrap();
    let (records, queries) = (40usize, 4usize);
    let db = work.path().join("db.ndjson");
    let q = work.path().join("q.ndjson");
    common::irisc_ok(&[
        "gen",
        "--count",
        "40",
        "--seed",
        "3",
        "--bits",
        "256",
        "-o",
        db.to_str().unwrap(),
    ]);
    common::irisc_ok(&[
        "gen",
        "--count",
        "4",
        "--seed",
        "4",
        "--bits",
        "256",
        "--near",
        db.to_str().unwrap(),
        "--ratio",
        "0.375",
        "-o",
        q.to_str().unwrap(),
    ]);
    let tier = work.path().join("tier.ndjson");
    common::irisc_ok(&[
        "gen",
        "--kind",
        "bit",
        "--count",
        "4",
        "--seed",
        "5",
        "-o",
        tier.to_str().unwrap(),
    ]);
    let tier_input = format!("tier={}", tier.to_str().unwrap());
    let cases: [(&str, &[&str]); 7] = [
        ("small_ids.irs", &["--sharing", "rep3"]),
        ("small_ids.irs", &["--sharing", "gr4"]),
        ("small_secret.irs", &["--variant", "no-lift"]),
        ("small_secret.irs", &["--variant", "const-lift"]),
        (
            "small_secret.irs",
            &["--variant", "mpc-lift", "--sharing", "rep3"],
        ),
        ("small_count.irs", &[]),
        // Two comparisons of the same pair: the schedule computes their dot products once.
        ("small_tiered.irs", &["--input", &tier_input]),
    ];
    for (name, flags) in cases {
        let program = common::example(name);
        let plan_flags: Vec<&str> = if flags.first() == Some(&"--input") {
            vec![]
        } else {
            flags.to_vec()
        };
        let (rounds, bytes) = predicted(&program, records, &plan_flags);
        let (db_input, q_input) = (format!("db={}", db.display()), format!("q={}", q.display()));
        let mut args = vec!["run", program.to_str().unwrap(), "--threads", "1"];
        if plan_flags.is_empty() && !flags.is_empty() {
            args.extend_from_slice(&["--input", &db_input, "--input", &q_input]);
        } else {
            args.extend_from_slice(&["--db", db.to_str().unwrap(), "--query", q.to_str().unwrap()]);
        }
        args.extend_from_slice(flags);
        let out = common::irisc_ok(&args);
        let (got_rounds, got_bytes) = measured(&String::from_utf8_lossy(&out.stderr));
        assert_eq!(
            got_rounds,
            rounds * queries as u64,
            "{name} {flags:?}: rounds"
        );
        // The payload is a lower bound; headers and word padding add at most a quarter here.
        let payload = bytes * queries as f64;
        assert!(
            got_bytes as f64 >= payload && (got_bytes as f64) <= 1.25 * payload,
            "{name} {flags:?}: {got_bytes} bytes on the wire, {payload} predicted"
        );
    }
}
