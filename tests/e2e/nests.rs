//! The kernels' two loop nests (`nest_alternative = "unchunked"`): each one, forced with
//! `IRISC_KERNEL_NEST`, answers as the plaintext definition does and as the other; and a call
//! long enough to be measured runs both on its own records and still answers right. The plain
//! kernels run these (`IRISC_POLYPHASE=off`: the compiler also offers polyphase kernels for
//! the rotations, tested last against them; and AMX kernels, which run first where the CPU has
//! AMX-INT8: `IRISC_AMX=off` keeps the vector kernels under test, and the AMX kernels are
//! tested against them at the end).
//! `long_rows.irs` has codes of 4 096 bits, long enough for the K chunks the alternative
//! leaves out (shorter codes run one nest, and nothing is measured).

use serde_json::Value;

use crate::common;
use crate::language::{s, Work};

fn long_rows() -> std::path::PathBuf {
    common::repo().join("tests/e2e/programs/long_rows.irs")
}

/// `irisc run long_rows.irs --check` with `env`; returns the answers and the parties' stderr.
fn run(args: &[&str], threads: &str, env: &[(&str, &str)]) -> (Vec<Value>, String) {
    let out = common::irisc()
        .arg("run")
        .arg(long_rows())
        .args(args)
        .args(["--threads", threads, "--check"])
        .envs(env.iter().copied())
        .output()
        .expect("irisc runs");
    let err = common::stderr(&out);
    assert!(out.status.success(), "irisc run {args:?} failed:\n{err}");
    assert!(
        err.contains("checked: the answers equal the plaintext definition"),
        "no check reported:\n{err}"
    );
    (common::stdout_json(&out), err)
}

/// Both nests, forced, on a batch of 8 queries near a small gallery (records split over 2 and
/// 3 threads), replicated and Shamir codes: the plaintext answers, the same from each, and no
/// measurement (a forced nest is not measured).
#[test]
fn each_nest_forced_answers_as_the_plaintext_definition() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 61, 31, 4096);
    let q = w.near("q.ndjson", &db, 8, 32, "0.375");
    for sharing in ["rep3", "gr2"] {
        let args = ["--db", s(&db), "--query", s(&q), "--sharing", sharing];
        let mut answers = Vec::new();
        for (nest, threads) in [("first", "2"), ("second", "3")] {
            let env = [
                ("IRISC_KERNEL_NEST", nest),
                ("IRISC_POLYPHASE", "off"),
                ("IRISC_AMX", "off"),
            ];
            let (got, err) = run(&args, threads, &env);
            assert!(!err.contains("loop nests measured"), "{err}");
            assert!(
                got.iter().any(|v| v["match"] == Value::Bool(true))
                    && got.iter().any(|v| v["match"] == Value::Bool(false)),
                "the queries should both match and miss: {got:?}"
            );
            answers.push(got);
        }
        assert_eq!(answers[0], answers[1], "--sharing {sharing}");
    }
    // And an unknown value is refused, not ignored.
    let out = common::irisc()
        .arg("run")
        .arg(long_rows())
        .args(["--db", s(&db), "--query", s(&q), "--threads", "1"])
        .env("IRISC_KERNEL_NEST", "fastest")
        .output()
        .expect("irisc runs");
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("IRISC_KERNEL_NEST=fastest"), "{err}");
}

/// A call of 2 600 records x 248 codes (8 queries x 31 rotations) is long enough to be
/// measured: every party reports both nests' times and the one it ran, and the answers (part
/// of them computed by each nest) are the plaintext definition's.
#[test]
fn a_long_call_is_measured_and_answers_right() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 2600, 33, 4096);
    let q = w.near("q.ndjson", &db, 8, 34, "0.375");
    let (got, err) = run(
        &["--db", s(&db), "--query", s(&q), "--sharing", "gr2"],
        "1",
        &[("IRISC_POLYPHASE", "off"), ("IRISC_AMX", "off")],
    );
    assert_eq!(got.len(), 8);
    assert!(
        got.iter().any(|v| v["match"] == Value::Bool(true)),
        "{got:?}"
    );
    let measured = err
        .lines()
        .filter(|l| l.contains("kernel loop nests measured at 248 codes per call"))
        .count();
    assert_eq!(measured, 3, "every party measures:\n{err}");
}

/// The polyphase kernels (the default for rotated queries) answer as the plaintext definition
/// and as the plain kernels do, replicated and Shamir codes, one and three threads, a batch of
/// 8 queries that both match and miss; every party reports its polyphase calls, none with
/// `IRISC_POLYPHASE=off`; an unknown value is refused.
#[test]
fn the_polyphase_kernels_answer_as_the_plain_ones() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 97, 41, 4096);
    let q = w.near("q.ndjson", &db, 8, 42, "0.375");
    let calls = |err: &str| {
        err.lines()
            .filter(|l| l.contains("polyphase kernel calls"))
            .count()
    };
    for sharing in ["rep3", "gr2"] {
        let args = ["--db", s(&db), "--query", s(&q), "--sharing", sharing];
        for threads in ["1", "3"] {
            let (polyphase, err) = run(&args, threads, &[("IRISC_AMX", "off")]);
            assert_eq!(
                calls(&err),
                3,
                "every party runs the polyphase kernel:\n{err}"
            );
            assert!(
                polyphase.iter().any(|v| v["match"] == Value::Bool(true))
                    && polyphase.iter().any(|v| v["match"] == Value::Bool(false)),
                "the queries should both match and miss: {polyphase:?}"
            );
            let (plain, err) = run(
                &args,
                threads,
                &[("IRISC_POLYPHASE", "off"), ("IRISC_AMX", "off")],
            );
            assert_eq!(calls(&err), 0, "{err}");
            assert_eq!(polyphase, plain, "--sharing {sharing}, {threads} threads");
        }
    }
    let out = common::irisc()
        .arg("run")
        .arg(long_rows())
        .args(["--db", s(&db), "--query", s(&q), "--threads", "1"])
        .env("IRISC_POLYPHASE", "maybe")
        .output()
        .expect("irisc runs");
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("IRISC_POLYPHASE=maybe"), "{err}");
}

/// The AMX kernels (run first where the CPU has AMX-INT8 and the OS grants the tile state)
/// answer as the plaintext definition and as the vector kernels (`IRISC_AMX=off`) do:
/// replicated and Shamir codes, one and three threads, records that are not whole blocks of 32
/// (the rest in the vector kernel), a batch of 8 queries that both match and miss. Where the
/// CPU has AMX every party reports the records it ran there; elsewhere none does. An unknown
/// value is refused.
#[test]
fn the_amx_kernels_answer_as_the_vector_ones() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 101, 43, 4096);
    let q = w.near("q.ndjson", &db, 8, 44, "0.375");
    let amx = irisc_runtime::kernels::amx::available();
    if !amx {
        eprintln!("NOTE: this CPU or OS does not run AMX-INT8: both runs use the vector kernels");
    }
    let reports = |err: &str| {
        err.lines()
            .filter(|l| l.contains("records' dot products in AMX kernels"))
            .count()
    };
    for sharing in ["rep3", "gr2"] {
        let args = ["--db", s(&db), "--query", s(&q), "--sharing", sharing];
        for threads in ["1", "3"] {
            let (with_amx, err) = run(&args, threads, &[]);
            assert_eq!(
                reports(&err),
                if amx { 3 } else { 0 },
                "AMX records reported by every party where the CPU has AMX:\n{err}"
            );
            assert!(
                with_amx.iter().any(|v| v["match"] == Value::Bool(true))
                    && with_amx.iter().any(|v| v["match"] == Value::Bool(false)),
                "the queries should both match and miss: {with_amx:?}"
            );
            let (vector, err) = run(&args, threads, &[("IRISC_AMX", "off")]);
            assert_eq!(reports(&err), 0, "{err}");
            assert_eq!(with_amx, vector, "--sharing {sharing}, {threads} threads");
        }
    }
    let out = common::irisc()
        .arg("run")
        .arg(long_rows())
        .args(["--db", s(&db), "--query", s(&q), "--threads", "1"])
        .env("IRISC_AMX", "maybe")
        .output()
        .expect("irisc runs");
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("IRISC_AMX=maybe"), "{err}");
}
