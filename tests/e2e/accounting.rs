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
        // A batch's comparisons run as one vector: the rounds are one query's per batch of
        // (by default) 8 queries, whatever the queries in it; the bytes stay per query.
        let batches = queries.div_ceil(8) as u64;
        assert_eq!(got_rounds, rounds * batches, "{name} {flags:?}: rounds");
        // The payload is a lower bound; headers and word padding add at most a quarter here.
        let payload = bytes * queries as f64;
        assert!(
            got_bytes as f64 >= payload && (got_bytes as f64) <= 1.25 * payload,
            "{name} {flags:?}: {got_bytes} bytes on the wire, {payload} predicted"
        );
    }
}

/// `--stats` carries the executor's per-op figures under `"ops"`, named as the `mpc` dialect
/// names the ops: their rounds add up to the party's rounds, the three parties agree on calls
/// and rounds, the bytes are within the bytes sent, and every op the program runs is there.
#[test]
fn stats_count_every_op() {
    let program = common::example("small_ids.irs");
    let setup = common::setup(&program);
    let (gallery, queries) = crate::data::edge_case_set(11, 256, 5, 2, 3, 8, 2);
    let db = setup.share(&program, "--db", "db", &gallery);
    let q = setup.share(&program, "--query", "query", &queries);
    let stats: Vec<_> = (0..3)
        .map(|p| setup.dir.path().join(format!("stats{p}.json")))
        .collect();
    let children: Vec<_> = (0..3)
        .map(|p| {
            let path = stats[p].to_str().unwrap();
            setup.spawn(p, &db[p], &q[p], &["--timeout", "20", "--stats", path])
        })
        .collect();
    for (p, c) in children.into_iter().enumerate() {
        let out = common::wait_bounded(c, std::time::Duration::from_secs(120));
        assert!(out.status.success(), "party {p}: {}", common::stderr(&out));
    }
    let read = |p: usize| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(&stats[p]).unwrap()).unwrap()
    };
    let all = [read(0), read(1), read(2)];
    for (p, s) in all.iter().enumerate() {
        let ops = s["ops"].as_object().expect("an \"ops\" object");
        for op in [
            "load_gallery",
            "load_query",
            "rotate",
            "reshare",
            "msb",
            "or_tree",
            "open",
        ] {
            assert!(ops.contains_key(op), "party {p}: no {op} in {ops:?}");
        }
        let sum = |k: &str| ops.values().map(|o| o[k].as_u64().unwrap()).sum::<u64>();
        assert_eq!(sum("rounds"), s["rounds"].as_u64().unwrap(), "party {p}");
        // The bytes sent outside ops are the PRSS seeds agreed before the first op.
        let bytes = sum("bytes");
        assert!(
            bytes > 0 && bytes <= s["bytes_sent"].as_u64().unwrap(),
            "party {p}"
        );
        assert_eq!(
            ops["load_query"]["calls"].as_u64(),
            Some(queries.len() as u64),
            "party {p}: one query load per query"
        );
        for (name, o) in ops {
            assert!(o["calls"].as_u64().unwrap() > 0, "{name}");
            assert!(o["seconds"].as_f64().unwrap() >= 0.0, "{name}");
            for other in &all {
                assert_eq!(other["ops"][name]["calls"], o["calls"], "{name}: calls");
                assert_eq!(other["ops"][name]["rounds"], o["rounds"], "{name}: rounds");
            }
        }
    }
}
