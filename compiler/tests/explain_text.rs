//! `irisc explain` is written for people: no JSON syntax, no `null`, names unquoted, each total
//! printed once, and totals for the gallery a store or share file holds (saying which), else
//! for a size it says is assumed. `irisc build` says one line by default, everything with
//! `--explain` and nothing with `--quiet`. (The JSON document is checked by `snapshots.rs`.)

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn irisc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_irisc"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("run irisc")
}

fn stdout_ok(args: &[&str]) -> String {
    let out = irisc(args);
    assert!(
        out.status.success(),
        "irisc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn examples() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "irs"))
        .map(|p| format!("examples/{}", p.file_name().unwrap().to_string_lossy()))
        .collect();
    v.sort();
    v
}

#[test]
fn explain_text_has_no_json_syntax_nulls_or_quoted_names() {
    for program in examples() {
        let text = stdout_ok(&["explain", &program]);
        for bad in ["null", "{", "}", "\"", "[\"", "\":"] {
            assert!(
                !text.contains(bad),
                "{program}: `{bad}` in the explanation:\n{text}"
            );
        }
        // The JSON keys of the former text (`and_gates`, `triples_naive`, ...) are not shown.
        assert!(
            !text.contains("and_gates") && !text.contains("bytes_per_party"),
            "{program}:\n{text}"
        );
    }
}

#[test]
fn each_total_is_printed_once() {
    for program in ["examples/iris_ids.irs", "examples/iris_batch_unique.irs"] {
        let text = stdout_ok(&["explain", program, "--records", "1000"]);
        let per_query = text.matches("Per query").count();
        assert_eq!(
            per_query, 1,
            "{program}: {per_query} per-query blocks:\n{text}"
        );
        for measure in [
            "comparisons  ",
            "rounds, as scheduled",
            "Beaver triples, naive",
        ] {
            let rows = text
                .lines()
                .filter(|l| l.trim_start().starts_with(measure.trim_end()))
                .count();
            assert_eq!(
                rows, 1,
                "{program}: `{measure}` printed {rows} times:\n{text}"
            );
        }
    }
    // Several outputs: one column each and one program column, whose value is their sum.
    let text = stdout_ok(&["explain", "examples/small_batch.irs", "--records", "10"]);
    let row = text
        .lines()
        .find(|l| l.trim_start().starts_with("AND gates"))
        .expect("an AND gates row");
    let cells: Vec<u64> = row
        .split("  ")
        .filter_map(|c| c.trim().replace(' ', "").parse().ok())
        .collect();
    assert_eq!(cells.len(), 3, "{row}");
    assert_eq!(cells[0] + cells[1], cells[2], "{row}");
}

#[test]
fn records_default_to_an_assumed_size_said_plainly() {
    let text = stdout_ok(&["explain", "examples/iris_ids.irs"]);
    assert!(
        text.contains("Totals are for 1 record per gallery, an assumed size"),
        "{text}"
    );
    let text = stdout_ok(&["explain", "examples/iris_ids.irs", "--records", "100000"]);
    assert!(
        text.contains("Totals are for 100 000 records per gallery (--records)."),
        "{text}"
    );
    // 31 rotations per record.
    assert!(text.contains("3 100 000"), "{text}");
}

#[test]
fn records_default_to_the_size_of_the_store_given() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.ndjson");
    let shares = dir.path().join("shares");
    let s = |p: &Path| p.to_str().unwrap().to_string();
    stdout_ok(&[
        "gen",
        "--count",
        "37",
        "--bits",
        "256",
        "--seed",
        "3",
        "-o",
        &s(&db),
    ]);
    stdout_ok(&[
        "share",
        "--program",
        "examples/small_ids.irs",
        "--db",
        &s(&db),
        "-o",
        &s(&shares),
    ]);
    let store = shares.join("db.p1.shr");
    let text = stdout_ok(&["explain", "examples/small_ids.irs", "--db", &s(&store)]);
    let expected = format!(
        "Totals are for 37 records per gallery (the size of {}).",
        store.display()
    );
    // The sentence may wrap: compare with the whitespace collapsed.
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains(&expected), "{text}");
    // 5 rotations per record; one opened bit per record.
    assert!(text.contains("185"), "{text}");
    let json = stdout_ok(&[
        "explain",
        "examples/small_ids.irs",
        "--json",
        "--input",
        &format!("db={}", s(&store)),
    ]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["records"], 37);
    assert_eq!(v["per_query"]["comparisons"], 37 * 5);
    // --records overrides the store; a query input is refused with its name.
    let text = stdout_ok(&[
        "explain",
        "examples/small_ids.irs",
        "--db",
        &s(&store),
        "--records",
        "5",
    ]);
    assert!(text.contains("Totals are for 5 records per gallery (--records)."));
    let out = irisc(&[
        "explain",
        "examples/small_ids.irs",
        "--input",
        &format!("q={}", s(&store)),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("`q` is a query"), "{err}");
}

#[test]
fn build_says_one_line_all_or_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("ids.o");
    let obj = obj.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["build", "examples/small_ids.irs", "--emit=obj", "-o", obj];
        args.extend_from_slice(extra);
        let out = irisc(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.stdout.is_empty());
        String::from_utf8(out.stderr).unwrap()
    };
    let summary = run(&[]);
    assert_eq!(summary.lines().count(), 1, "{summary}");
    for part in [
        "small_ids",
        "1 comparison",
        "plain-mask over gr2",
        "rounds per query",
        obj,
    ] {
        assert!(summary.contains(part), "`{part}` missing: {summary}");
    }
    assert_eq!(run(&["--quiet"]), "");
    let all = run(&["--explain"]);
    assert!(
        all.contains("What each party learns") && all.contains("Per query"),
        "{all}"
    );
    // The former default printed the whole explanation on every build.
    assert!(!summary.contains("What each party learns"));
}
