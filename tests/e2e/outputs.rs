//! What a caller reads on stdout (README "Outputs"): every line names its query by position and
//! by the query record's own id, `match` is there whatever the output's label, `irisc run`
//! relays answers while the parties run and labels them by party when several print, a run that
//! stops early says so in its last line, and `irisc run` checks its inputs before compiling.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use irisc_runtime::io::ndjson;

use crate::common;
use crate::language::{assert_mixed, record_ids, run_checked, s, Work};

/// The 256-bit program of `examples/small_ids.irs` with its reveals replaced by `reveals`.
fn small_program(w: &Work, name: &str, reveals: &str) -> PathBuf {
    let text = format!(
        "const BITS = 256;\nconst RATIO = 0.375;\nparties p0, p1, p2;\n\
         gallery db: iris<BITS> public mask;\nquery q: iris<BITS> public mask from p0;\n{reveals}\n"
    );
    let path = w.path(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// Rewrites the queries of `from` with ids that are not their positions (descending, spaced);
/// returns the new file and its ids in file order.
fn renumbered(w: &Work, from: &Path, name: &str) -> (PathBuf, Vec<u64>) {
    let mut records = ndjson::read_file(from).unwrap();
    let n = records.len() as u64;
    for (i, r) in records.iter_mut().enumerate() {
        r.id = 900_000 + 37 * (n - i as u64);
    }
    let out = w.path(name);
    ndjson::write_file(&out, &records).unwrap();
    (out, records.iter().map(|r| r.id).collect())
}

/// The plaintext answers of `program` (default plan) on one gallery and one query file.
fn plain_answers(program: &Path, db: &Path, query: &Path) -> Vec<Value> {
    use irisc::driver::pipeline;
    let checked = pipeline::read_and_check(program).unwrap();
    let planned = pipeline::plan(&checked, &Default::default()).unwrap();
    irisc::driver::plaintext::answers_db_query(&checked.program, &planned.plan, db, query).unwrap()
}

fn ids_field(v: &Value, field: &str) -> Vec<u64> {
    v[field]
        .as_array()
        .unwrap_or_else(|| panic!("no {field} array in {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

#[test]
fn each_line_carries_the_query_records_id_and_position() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 1, 256);
    let near = w.near("near.ndjson", &db, 8, 2, "0.375");
    let (q, ids) = renumbered(&w, &near, "q.ndjson");
    let program = common::example("small_ids.irs");
    let got = run_checked(&program, &["--db", s(&db), "--query", s(&q)]);
    assert_eq!(got.len(), ids.len(), "one line per query: {got:?}");
    for (i, line) in got.iter().enumerate() {
        assert_eq!(line["query"], i as u64, "position, in file order: {line}");
        assert_eq!(line["id"], ids[i], "the query record's own id: {line}");
    }
    assert_mixed(&got);
    // The plaintext definition, on the same files, agrees field by field.
    assert_eq!(got, plain_answers(&program, &db, &q));
}

#[test]
fn match_is_present_whatever_the_label() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 3, 256);
    let q = w.near("q.ndjson", &db, 8, 4, "0.375");
    let gallery = record_ids(&db);
    // An ids output named `as matches`: `match` says whether the list is non-empty.
    let labelled = small_program(
        &w,
        "labelled.irs",
        "reveal ids d in db: any c in rotations(q, -2..=2): fhd(c, d) < RATIO to p0 as matches;",
    );
    let got = run_checked(&labelled, &["--db", s(&db), "--query", s(&q)]);
    assert_eq!(got.len(), 8);
    for line in &got {
        let matches = ids_field(line, "matches");
        assert!(matches.iter().all(|id| gallery.contains(id)), "{line}");
        assert_eq!(line["match"], !matches.is_empty(), "{line}");
    }
    assert_mixed(&got);
    // The same program unlabelled prints the same `match` and the same ids under `ids`.
    let plain = run_checked(
        &common::example("small_ids.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    for (a, b) in got.iter().zip(&plain) {
        assert_eq!(a["match"], b["match"]);
        assert_eq!(a["matches"], b["ids"]);
    }
    // A bit output named `as seen`: `match` is the bit.
    let any = small_program(
        &w,
        "seen.irs",
        "reveal any d in db, c in rotations(q, -2..=2): fhd(c, d) < RATIO to p0 as seen;",
    );
    let got = run_checked(&any, &["--db", s(&db), "--query", s(&q)]);
    assert_eq!(got.len(), 8);
    for (line, p) in got.iter().zip(&plain) {
        assert!(line["seen"].is_boolean(), "{line}");
        assert_eq!(line["match"], line["seen"], "{line}");
        assert_eq!(
            line["match"], p["match"],
            "the same test as small_ids: {line}"
        );
    }
}

#[test]
fn irisc_run_labels_each_line_with_its_party_when_several_print() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 5, 256);
    let q = w.near("q.ndjson", &db, 6, 6, "0.375");
    let program = small_program(
        &w,
        "two.irs",
        "reveal ids d in db: any c in rotations(q, -2..=2): fhd(c, d) < RATIO to p0 as hits;\n\
         reveal any d in db, c in rotations(q, -2..=2): fhd(c, d) < RATIO to p1 as seen;",
    );
    // `--check` compares each party's own lines with the plaintext definition.
    let got = run_checked(&program, &["--db", s(&db), "--query", s(&q)]);
    assert_eq!(got.len(), 12, "six queries, two parties: {got:?}");
    let of = |party: u64| -> Vec<&Value> { got.iter().filter(|l| l["party"] == party).collect() };
    let (p0, p1) = (of(0), of(1));
    assert_eq!(
        (p0.len(), p1.len()),
        (6, 6),
        "every line has its party: {got:?}"
    );
    for (i, (a, b)) in p0.iter().zip(&p1).enumerate() {
        assert_eq!(
            (&a["query"], &b["query"]),
            (&Value::from(i), &Value::from(i))
        );
        assert!(a.get("seen").is_none() && b.get("hits").is_none());
        // Party 1's bit is party 0's "some record matched".
        assert_eq!(b["seen"], !ids_field(a, "hits").is_empty(), "{a} / {b}");
    }
    // One output party: no label (the lines stay as the party prints them).
    let one = run_checked(
        &common::example("small_ids.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    assert!(one.iter().all(|l| l.get("party").is_none()), "{one:?}");
}

/// The program of the runs long enough to watch: 12 800-bit codes, 31 rotations.
fn long_program() -> PathBuf {
    common::example("iris_ids.irs")
}

/// Inputs of [`long_program`] for a run long enough to watch: each query takes a noticeable
/// time (about 0.1 s here) against `records` records.
fn long_inputs(w: &Work, records: usize, queries: usize) -> (PathBuf, PathBuf) {
    let db = w.gallery("db.ndjson", records, 7, 12_800);
    let q = w.near("q.ndjson", &db, queries, 8, "0.345");
    (db, q)
}

/// Reads `child`'s stdout line by line, noting when each line arrived (from `start`).
fn timed_lines(child: &mut Child, start: Instant) -> Vec<(Duration, String)> {
    let out = child.stdout.take().unwrap();
    BufReader::new(out)
        .lines()
        .map(|l| (start.elapsed(), l.unwrap()))
        .collect()
}

#[test]
fn irisc_run_relays_answers_as_the_parties_print_them() {
    let w = Work::new();
    let (db, q) = long_inputs(&w, 1000, 24);
    let start = Instant::now();
    let mut child = common::irisc()
        .args(["run", s(&long_program())])
        .args(["--db", s(&db), "--query", s(&q), "--threads", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lines = timed_lines(&mut child, start);
    let status = child.wait().unwrap();
    let exit = start.elapsed();
    assert!(status.success());
    assert_eq!(lines.len(), 24);
    let (first, last) = (lines[0].0, lines[lines.len() - 1].0);
    // Answers printed all at the end arrive together (spread ~0); streamed ones span the whole
    // computation of queries 2..24, much longer than what follows the last one (the parties'
    // accounting and exit).
    let spread = last - first;
    eprintln!("irisc run: first answer at {first:?}, last at {last:?}, exit at {exit:?}");
    assert!(
        spread > (exit - first) / 2,
        "first answer at {first:?}, last at {last:?}, exit at {exit:?}: the answers were not relayed as they came"
    );
}

/// The pids of the party processes `irisc run` (pid `parent`) started, by party.
fn party_pids(parent: u32) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    let tasks = std::fs::read_dir(format!("/proc/{parent}/task")).unwrap();
    for t in tasks.flatten() {
        let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        for pid in children
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<&[u8]> = cmd.split(|&b| b == 0).collect();
            if let Some(i) = args.iter().position(|a| *a == b"--party") {
                let party = std::str::from_utf8(args[i + 1]).unwrap().parse().unwrap();
                out.push((party, pid));
            }
        }
    }
    out
}

fn kill9(pid: u32) {
    let ok = Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(ok.success(), "kill -9 {pid}");
}

/// The answers before the trailer are queries 0..N in order, and the trailer says N; returns
/// the trailer's error.
fn assert_marked_partial(lines: &[String], what: &str) -> String {
    let objects: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{what}: bad line {l:?}: {e}")))
        .collect();
    let (trailer, answers) = objects
        .split_last()
        .unwrap_or_else(|| panic!("{what}: nothing on stdout"));
    assert_eq!(
        trailer["complete"], false,
        "{what}: the last line must mark the output incomplete: {lines:?}"
    );
    assert_eq!(trailer["answered"], answers.len() as u64, "{trailer}");
    assert!(
        trailer["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{trailer}"
    );
    assert!(!answers.is_empty(), "{what}: killed after the first answer");
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["query"], i as u64, "{what}: {a}");
        assert!(a.get("complete").is_none(), "{what}: one trailer only: {a}");
    }
    trailer["error"].as_str().unwrap().to_string()
}

#[test]
fn a_failed_irisc_run_ends_its_output_with_a_trailer() {
    let w = Work::new();
    let (db, q) = long_inputs(&w, 1000, 16);
    let mut child = common::irisc()
        .args(["run", s(&long_program())])
        .args(["--db", s(&db), "--query", s(&q), "--timeout", "10"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = out.next().expect("a first answer").unwrap();
    let parties = party_pids(child.id());
    let (_, victim) = parties
        .iter()
        .find(|(p, _)| *p == 2)
        .unwrap_or_else(|| panic!("party 2 among {parties:?}"));
    kill9(*victim);
    let mut lines = vec![first];
    lines.extend(out.map(Result::unwrap));
    let output = common::wait_bounded(child, Duration::from_secs(120));
    assert!(!output.status.success(), "the run must fail");
    let error = assert_marked_partial(&lines, "irisc run");
    assert!(
        error.contains("party 2 was killed by signal 9"),
        "the trailer names the party that died: {error}"
    );
    let err = common::stderr(&output);
    assert!(err.contains(&error), "{err}");
}

/// Three parties on a long run, with party 0's first answer read; the folders stay alive as
/// long as this does.
struct LongRun {
    _files: (Work, common::Setup),
    output_party: std::process::Child,
    p1: std::process::Child,
    p2: std::process::Child,
    out: std::io::Lines<BufReader<std::process::ChildStdout>>,
    first: String,
}

fn long_run_until_first_answer() -> LongRun {
    let w = Work::new();
    let (db_file, q_file) = long_inputs(&w, 1000, 16);
    let program = long_program();
    let setup = common::setup(&program);
    let gallery = ndjson::read_file(&db_file).unwrap();
    let queries = ndjson::read_file(&q_file).unwrap();
    let db = setup.share(&program, "--db", "db", &gallery);
    let q = setup.share(&program, "--query", "query", &queries);
    let extra = ["--timeout", "10"];
    let mut output_party = setup.spawn(0, &db[0], &q[0], &extra);
    let p1 = setup.spawn(1, &db[1], &q[1], &extra);
    let p2 = setup.spawn(2, &db[2], &q[2], &extra);
    let mut out = BufReader::new(output_party.stdout.take().unwrap()).lines();
    let first = out.next().expect("a first answer").unwrap();
    LongRun {
        _files: (w, setup),
        output_party,
        p1,
        p2,
        out,
        first,
    }
}

#[test]
fn a_party_that_stops_early_marks_its_printed_answers() {
    let LongRun {
        _files,
        output_party,
        p1,
        p2,
        out,
        first,
    } = long_run_until_first_answer();
    kill9(p2.id());
    let mut lines = vec![first];
    lines.extend(out.map(Result::unwrap));
    let status = common::wait_bounded(output_party, Duration::from_secs(60)).status;
    assert!(!status.success());
    let error = assert_marked_partial(&lines, "party 0");
    // The trailer carries the party's real reason, which names the dead peer.
    assert!(
        error.contains("party 2"),
        "the trailer names party 2: {error}"
    );
    let _ = common::wait_bounded(p1, Duration::from_secs(60));
    let _ = common::wait_bounded(p2, Duration::from_secs(60));
}

/// An output party stopped by SIGTERM after its first answer marks what it printed too (the
/// signal is taken by its own thread, which ends the process).
#[test]
fn an_output_party_stopped_by_sigterm_marks_its_printed_answers() {
    let LongRun {
        _files,
        output_party,
        p1,
        p2,
        out,
        first,
    } = long_run_until_first_answer();
    let term = Command::new("kill")
        .args(["-TERM", &output_party.id().to_string()])
        .status()
        .unwrap();
    assert!(term.success());
    let mut lines = vec![first];
    lines.extend(out.map(Result::unwrap));
    let status = common::wait_bounded(output_party, Duration::from_secs(60)).status;
    assert_eq!(status.code(), Some(143), "128 + SIGTERM");
    let error = assert_marked_partial(&lines, "party 0");
    assert!(error.contains("SIGTERM"), "the trailer says why: {error}");
    let _ = common::wait_bounded(p1, Duration::from_secs(60));
    let _ = common::wait_bounded(p2, Duration::from_secs(60));
}

/// `irisc run ARGS`: fails with a message containing each of `expect`, before compiling
/// anything, with nothing on stdout.
fn refused_before_compiling(args: &[&str], expect: &[&str]) -> String {
    let out = common::irisc().arg("run").args(args).output().unwrap();
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("compiled"), "compiled before checking: {err}");
    assert!(out.stdout.is_empty(), "{:?}", out.stdout);
    for e in expect {
        assert!(err.contains(e), "the message should say {e:?}:\n{err}");
    }
    err
}

#[test]
fn irisc_run_checks_its_inputs_before_compiling() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 4, 9, 256);
    let program = common::example("small_ids.irs");
    let p = s(&program);
    // No query: the flag to pass is named.
    let err = refused_before_compiling(&[p, "--db", s(&db)], &["--query"]);
    assert!(!err.contains("--input q="), "{err}");
    // A file that is not there.
    let missing = w.path("missing.ndjson");
    refused_before_compiling(
        &[p, "--db", s(&missing), "--query", s(&db)],
        &["--db", "missing.ndjson"],
    );
    // A query file that is not NDJSON: the input, the file and the line are named.
    let bad = w.path("bad.ndjson");
    let first = std::fs::read_to_string(&db).unwrap();
    let first = first.lines().next().unwrap();
    std::fs::write(&bad, format!("{first}\nnot json\n")).unwrap();
    refused_before_compiling(
        &[p, "--db", s(&db), "--query", s(&bad)],
        &["`q`", "bad.ndjson", "line 2"],
    );
    // Codes of another length than the program declares.
    let short = w.gallery("short.ndjson", 2, 10, 128);
    refused_before_compiling(
        &[p, "--db", s(&db), "--query", s(&short)],
        &["`q`", "256-bit"],
    );
    // An empty query file.
    let empty = w.path("empty.ndjson");
    std::fs::write(&empty, "").unwrap();
    refused_before_compiling(
        &[p, "--db", s(&db), "--query", s(&empty)],
        &["`q`", "no records"],
    );
}
