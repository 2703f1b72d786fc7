//! Compiled iris programs under `--protocol beaver`: the dot products in the honest-majority
//! sharing, each reveal's comparisons, OR trees and secret `if`s as one circuit under Masked
//! Triples (paper 004), as three OS processes over TLS. The answers equal the honest-majority
//! protocol's and the plaintext definition; what the parties report consuming equals what
//! `irisc explain` predicts; preprocessing stores are refused when reused, another party's,
//! missing or too small, before anything is computed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::common::{self, irisc, irisc_ok, stderr, wait_bounded};
use crate::language::{assert_mixed, run_checked_env, s, Work};

/// Inputs of `small_tiered.irs`: 40 records, 6 queries near the gallery at a ratio between
/// the two thresholds (so the tier decides some answers), 6 tier bits.
fn tiered_inputs(w: &Work) -> Vec<String> {
    let db = w.gallery("db.ndjson", 40, 5, 256);
    let q = w.near("q.ndjson", &db, 6, 6, "0.34");
    let tier = w.gen(
        "tier.ndjson",
        &["--kind", "bit", "--count", "6", "--seed", "7"],
    );
    vec![
        "--input".into(),
        format!("db={}", s(&db)),
        "--input".into(),
        format!("q={}", s(&q)),
        "--input".into(),
        format!("tier={}", s(&tier)),
    ]
}

/// `[party 0]`'s `beaver: E executions x L lanes, T triples (N naive), M mask bits`.
fn consumed(err: &str) -> [u64; 5] {
    let line = err
        .lines()
        .find(|l| l.contains("[party 0]") && l.contains("beaver:"))
        .unwrap_or_else(|| panic!("no beaver accounting of party 0:\n{err}"));
    let tail = &line[line.find("beaver:").unwrap() + 7..];
    let nums: Vec<u64> = tail
        .split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .take(5)
        .map(|t| t.parse().unwrap())
        .collect();
    nums.try_into().unwrap()
}

#[test]
fn tiered_under_beaver_equals_rep3_and_its_consumption_equals_explain() {
    let w = Work::new();
    let args = tiered_inputs(&w);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let program = common::example("small_tiered.irs");
    let rep3 = run_checked_env(&program, &args, &["--threads", "1"], &[]);
    assert_mixed(&rep3);

    let mut with = args.clone();
    with.extend(["--protocol", "beaver"]);
    let out = irisc()
        .arg("run")
        .arg(&program)
        .args(&with)
        .args(["--threads", "1", "--check"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("checked: the answers equal the plaintext definition"),
        "{err}"
    );
    assert_eq!(
        common::stdout_json(&out),
        rep3,
        "beaver and rep3 answers differ"
    );

    // Measured at the parties == predicted by explain, for 40 records and 6 queries.
    let [executions, lanes, triples, naive, mask_bits] = consumed(&err);
    assert_eq!((executions, lanes), (6, 40));
    let explain = irisc_ok(&[
        "explain",
        program.to_str().unwrap(),
        "--protocol",
        "beaver",
        "--records",
        "40",
        "--json",
    ]);
    let doc: Value = serde_json::from_slice(&explain.stdout).unwrap();
    let b = &doc["beaver"];
    assert_eq!(b["lanes"], 40);
    assert_eq!(triples, 6 * b["triples_longest_path"].as_u64().unwrap());
    assert_eq!(naive, 6 * b["triples_naive"].as_u64().unwrap());
    assert_eq!(mask_bits, 6 * b["mask_bits"].as_u64().unwrap());
    assert!(triples < naive, "the branches share their triples");
}

/// The files `irisc run --work DIR` left: the executable, the parties file, each party's
/// `--input` arguments and preprocessing store.
struct Left {
    exe: PathBuf,
    config: PathBuf,
    inputs: [Vec<String>; 3],
    stores: [PathBuf; 3],
}

fn left_in(dir: &Path, program: &str) -> Left {
    let inputs = std::array::from_fn(|p| {
        let mut args = Vec::new();
        let folder = dir.join(format!("shares/p{p}"));
        let mut files: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let name = f.file_stem().unwrap().to_str().unwrap().to_string();
            args.push("--input".to_string());
            args.push(format!("{name}={}", f.display()));
        }
        args
    });
    Left {
        exe: dir.join(program),
        config: dir.join("keys/parties.toml"),
        inputs,
        stores: std::array::from_fn(|p| dir.join(format!("preprocessing/party{p}.pre"))),
    }
}

/// Runs the three parties with `store(p)` as party p's `--preprocessing` (none for `None`).
fn run_parties(l: &Left, store: impl Fn(usize) -> Option<PathBuf>) -> Vec<std::process::Output> {
    let children: Vec<_> = (0..3)
        .map(|p| {
            let mut c = Command::new(&l.exe);
            c.args(["--party", &p.to_string(), "--config", s(&l.config)])
                .args(&l.inputs[p])
                .args(["--timeout", "10"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            if let Some(st) = store(p) {
                c.arg("--preprocessing").arg(st);
            }
            c.spawn().unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| wait_bounded(c, Duration::from_secs(60)))
        .collect()
}

#[test]
fn compiled_program_stores_are_refused_before_anything_is_computed() {
    let w = Work::new();
    let args = tiered_inputs(&w);
    let dir = w.path("work");
    let program = common::example("small_tiered.irs");
    let mut all: Vec<&str> = vec!["run", s(&program)];
    all.extend(args.iter().map(String::as_str));
    all.extend(["--protocol", "beaver", "--threads", "1", "--work", s(&dir)]);
    irisc_ok(&all);
    let l = left_in(&dir, "small_tiered");
    for st in &l.stores {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(st).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", st.display());
    }

    // Reused: the run consumed every execution.
    let outs = run_parties(&l, |p| Some(l.stores[p].clone()));
    for (p, o) in outs.iter().enumerate() {
        assert!(!o.status.success(), "party {p} ran on used material");
        assert!(o.stdout.is_empty(), "party {p} printed answers");
    }
    let err = stderr(&outs[0]);
    assert!(err.contains("executions were used"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    // Fresh stores for too few queries, another party's store, none at all.
    let before = std::fs::read(&l.stores[0]).unwrap();
    let one = dir.join("one");
    preprocess(&l, &dir.join("small_tiered.circ"), 40, 1, &one);
    let fresh = |p: usize| one.join(format!("party{p}.pre"));
    let outs = run_parties(&l, |p| Some(fresh(p)));
    let err = stderr(&outs[1]);
    assert!(
        err.contains("1 unused executions of 1 left, the run needs 6"),
        "{err}"
    );
    let outs = run_parties(&l, |p| Some(fresh((p + 1) % 3)));
    let err = stderr(&outs[0]);
    assert!(
        err.contains("it belongs to party 1 of 3, this is party 0"),
        "{err}"
    );
    let outs = run_parties(&l, |p| (p != 2).then(|| fresh(p)));
    let err = stderr(&outs[2]);
    assert!(err.contains("give --preprocessing PATH"), "{err}");
    // Nothing was consumed by the refused runs.
    assert_eq!(std::fs::read(&l.stores[0]).unwrap(), before);
    let header = irisc_runtime::beaver::store::read_header(&fresh(0)).unwrap();
    assert_eq!(header.1, 0, "a refused run consumed an execution");

    // Another gallery size: the lanes differ.
    let other = dir.join("other");
    preprocess(&l, &dir.join("small_tiered.circ"), 39, 6, &other);
    let outs = run_parties(&l, |p| Some(other.join(format!("party{p}.pre"))));
    let err = stderr(&outs[0]);
    assert!(err.contains("made for 39 lanes, the run has 40"), "{err}");
}

/// `irisc circuit preprocess` at the three parties: `executions` x `lanes`, stores in `out`.
fn preprocess(l: &Left, circuit: &Path, lanes: usize, executions: u32, out: &Path) {
    std::fs::create_dir_all(out).unwrap();
    let children: Vec<_> = (0..3)
        .map(|p| {
            irisc()
                .args(["circuit", "preprocess", "--party", &p.to_string()])
                .args(["--config", s(&l.config), "--circuit", s(circuit)])
                .args(["--lanes", &lanes.to_string()])
                .args(["--executions", &executions.to_string()])
                .arg("-o")
                .arg(out.join(format!("party{p}.pre")))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = wait_bounded(c, Duration::from_secs(60));
        assert!(o.status.success(), "{}", stderr(&o));
    }
}

/// Reductions over the records (`reveal any d in db: ...`, a count) under `beaver`: the circuit
/// gives one bit per record (the OR over the rotations inside it), reshared to the
/// honest-majority sharing for the OR or the sum over the records. Same answers as under
/// `rep3`, both equal to the plaintext definition.
#[test]
fn bit_and_count_reveals_under_beaver_equal_rep3() {
    let w = Work::new();
    let small = w.gallery("small.ndjson", 40, 11, 256);
    let small_q = w.near("small_q.ndjson", &small, 5, 12, "0.375");
    let full = w.gallery("full.ndjson", 20, 13, 12800);
    let full_q = w.near("full_q.ndjson", &full, 4, 14, "0.345");
    for (program, db, q) in [
        ("small_count.irs", &small, &small_q),
        ("iris_unique.irs", &full, &full_q),
    ] {
        let program = common::example(program);
        let args = ["--db", s(db), "--query", s(q)];
        let rep3 = run_checked_env(&program, &args, &["--threads", "1"], &[]);
        let mut with = args.to_vec();
        with.extend(["--protocol", "beaver"]);
        let beaver = run_checked_env(&program, &with, &["--threads", "1"], &[]);
        assert_eq!(beaver, rep3, "{}", program.display());
        if program.ends_with("iris_unique.irs") {
            assert_mixed(&beaver);
        } else {
            assert!(
                beaver.iter().any(|a| a["count"].as_u64() > Some(0)),
                "no query matched: {beaver:?}"
            );
        }
    }
}
