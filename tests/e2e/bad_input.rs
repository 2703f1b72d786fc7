//! Bad input ends in a clear message within a bounded time, never a panic or a hang.

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use crate::common::{self, Setup};
use crate::data;

fn small() -> std::path::PathBuf {
    common::example("small_ids.irs")
}

fn shared_inputs(
    setup: &Setup,
    n_random: usize,
) -> ([std::path::PathBuf; 3], [std::path::PathBuf; 3]) {
    let (gallery, qs) = data::edge_case_set(5, 256, n_random, 2, 3, 8, 2);
    (
        setup.share(&small(), "--db", "db", &gallery),
        setup.share(&small(), "--query", "query", &qs),
    )
}

fn assert_no_panic(text: &str) {
    assert!(!text.contains("panicked"), "a process panicked:\n{text}");
}

#[test]
fn malformed_programs_get_diagnostics_with_caret_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("missing_semicolon.irs", "const RATIO = 0.3\nparties a, b, c;\n"),
        ("unknown_name.irs", "parties a, b, c;\ngallery db: iris<256> public mask;\nquery q: iris<256> public mask from a;\nreveal any d in db: fhd(q, d) < RATO to a;\n"),
        ("two_parties.irs", "parties a, b;\n"),
    ];
    for (name, src) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, src).unwrap();
        let out = common::irisc()
            .args(["build", path.to_str().unwrap()])
            .output()
            .unwrap();
        let err = common::stderr(&out);
        assert!(!out.status.success(), "{name} compiled");
        assert_no_panic(&err);
        assert!(
            err.contains(&format!("{name}:")),
            "{name}: no file:line:column in\n{err}"
        );
        assert!(err.contains('^'), "{name}: no caret in\n{err}");
        assert!(err.contains("hint"), "{name}: no hint in\n{err}");
    }
}

/// Runs the three parties where `tamper` changed some input, and checks that every party stops
/// within the bound, at least one with a message containing `expect`.
fn expect_failure(
    setup: &Setup,
    db: &[std::path::PathBuf; 3],
    q: &[std::path::PathBuf; 3],
    expect: &str,
) {
    let started = Instant::now();
    let outs = setup.run_three(db, q, &["--timeout", "4"]);
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "took {:?}",
        started.elapsed()
    );
    let all: String = outs
        .iter()
        .map(common::stderr)
        .collect::<Vec<_>>()
        .join("\n");
    assert_no_panic(&all);
    assert!(
        outs.iter().any(|o| !o.status.success()),
        "every party succeeded:\n{all}"
    );
    assert!(all.contains(expect), "expected {expect:?} in:\n{all}");
}

#[test]
fn truncated_share_file_is_refused() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 4);
    let len = std::fs::metadata(&db[1]).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&db[1])
        .unwrap();
    f.set_len(len - 7).unwrap();
    expect_failure(&setup, &db, &q, "truncated");
}

#[test]
fn share_file_of_another_ring_is_refused() {
    let setup = common::setup(&small());
    let (gallery, _) = data::edge_case_set(6, 256, 3, 1, 3, 8, 2);
    let (db, q) = shared_inputs(&setup, 3);
    let other = setup.dir.path().join("ring32");
    let plain = setup.dir.path().join("g32.ndjson");
    irisc_runtime::io::ndjson::write_file(&plain, &gallery).unwrap();
    common::irisc_ok(&[
        "share",
        "--db",
        plain.to_str().unwrap(),
        "-o",
        other.to_str().unwrap(),
        "--ring",
        "32",
    ]);
    let mixed = [other.join("db.p0.shr"), db[1].clone(), db[2].clone()];
    expect_failure(&setup, &mixed, &q, "Z_2^32");
}

#[test]
fn share_file_of_another_program_is_refused() {
    let setup = common::setup(&small());
    let (_, q) = shared_inputs(&setup, 2);
    let dir = setup.dir.path();
    let big = dir.join("big.ndjson");
    common::irisc_ok(&[
        "gen",
        "--count",
        "3",
        "--seed",
        "2",
        "-o",
        big.to_str().unwrap(),
    ]);
    let out = dir.join("big-shares");
    // The same ring as the program's, so the code length is what differs.
    common::irisc_ok(&[
        "share",
        "--db",
        big.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--ring",
        "10",
    ]);
    let db = [0, 1, 2].map(|p| out.join(format!("db.p{p}.shr")));
    expect_failure(&setup, &db, &q, "12800");
}

#[test]
fn shares_from_two_sharing_runs_are_not_mixed() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 3);
    let first = db.clone().map(|p| {
        let keep = setup
            .dir
            .path()
            .join(p.file_name().unwrap())
            .with_extension("first");
        std::fs::copy(&p, &keep).unwrap();
        keep
    });
    let (db2, _) = shared_inputs(&setup, 3);
    let mixed = [first[0].clone(), db2[1].clone(), db2[2].clone()];
    // Named at connect: the input, the party holding the odd file, and both share sets.
    expect_failure(
        &setup,
        &mixed,
        &q,
        "input db: party 0's share file is from another `irisc share` run (set ",
    );
}

#[test]
fn party_with_the_wrong_key_is_rejected() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 3);
    // Keys from another `irisc keys` run: a different CA, so nobody trusts party 1's certificate.
    let other = setup.dir.path().join("other-keys");
    common::irisc_ok(&["keys", "-o", other.to_str().unwrap(), "--base-port", "1"]);
    let keys = setup.config.parent().unwrap();
    std::fs::copy(other.join("party1.key"), keys.join("party1.key")).unwrap();
    // Party 1 refuses its own certificate and key, and says so; the others name party 1.
    let outs = setup.run_three(&db, &q, &["--timeout", "4"]);
    let err1 = common::stderr(&outs[1]);
    assert!(!outs[1].status.success());
    assert!(
        err1.starts_with("small_ids party 1: party 1's certificate ")
            && err1.contains("party1.crt and key ")
            && err1.contains("party1.key do not belong together"),
        "party 1 does not say that its certificate and key do not match:\n{err1}"
    );
    for p in [0, 2] {
        let err = common::stderr(&outs[p]);
        assert!(!outs[p].status.success(), "party {p} succeeded");
        // Which of its two setup errors a party reports first is a race (it dials and accepts
        // at once): that it could not reach party 1, or that party 1 never connected. Both
        // name party 1.
        assert!(
            err.contains("could not reach party 1 at 127.0.0.1:")
                || err.contains("party 1 did not connect to this party within "),
            "party {p} does not name party 1:\n{err}"
        );
    }
}

#[test]
fn missing_peer_times_out_with_a_clear_message() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 2);
    let started = Instant::now();
    let children: Vec<_> = (0..2)
        .map(|p| setup.spawn(p, &db[p], &q[p], &["--timeout", "3"]))
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| common::wait_bounded(c, Duration::from_secs(30)))
        .collect();
    assert!(started.elapsed() < Duration::from_secs(30));
    for o in &outs {
        let err = common::stderr(o);
        assert!(!o.status.success());
        assert_no_panic(&err);
        assert!(
            err.contains("party 2"),
            "no mention of the missing party in:\n{err}"
        );
    }
}

/// Reads a `--verbose` party's stderr until it starts on its first query.
fn wait_until_inside_the_protocol(party: &mut std::process::Child) {
    let err = party.stderr.take().expect("stderr is piped");
    // Keep reading after the line is seen: the party goes on writing progress lines, and a
    // closed pipe must not be what stops it.
    let (seen, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(err).lines().map_while(Result::ok);
        let found = lines.any(|l| l.contains("query 1 of"));
        let _ = seen.send(found);
        lines.for_each(drop);
    });
    let found = wait.recv().unwrap_or(false);
    assert!(found, "the party stopped before its first query");
}

#[test]
fn peer_dying_mid_protocol_stops_the_others() {
    let setup = common::setup(&small());
    // Enough work that the run is still going when party 2 is killed.
    let (db, q) = shared_inputs(&setup, 20000);
    let mut children: Vec<_> = (0..3)
        .map(|p| setup.spawn(p, &db[p], &q[p], &["--timeout", "5", "--verbose"]))
        .collect();
    // Kill party 2 as soon as it starts on the first query: links and seeds are up, and the
    // others are inside the protocol.
    wait_until_inside_the_protocol(&mut children[2]);
    children[2].kill().unwrap();
    let _ = children[2].wait();
    let survivors: Vec<_> = children
        .into_iter()
        .take(2)
        .map(|c| common::wait_bounded(c, Duration::from_secs(30)))
        .collect();
    for (p, o) in survivors.iter().enumerate() {
        let err = common::stderr(o);
        assert!(
            !o.status.success(),
            "party {p} succeeded although party 2 died"
        );
        assert_no_panic(&err);
        // Each survivor blames party 2: the link it saw close, or the cause the other survivor
        // relayed in its abort frame (`party 1 stopped: party 2 closed its link ...`).
        assert!(
            err.contains("party 2 closed its link (it stopped or was killed)"),
            "party {p} does not name the dead party 2:\n{err}"
        );
    }
}

#[test]
fn stalled_peer_is_reported_within_the_timeout() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 20000);
    let mut children: Vec<_> = (0..3)
        .map(|p| setup.spawn(p, &db[p], &q[p], &["--timeout", "3", "--verbose"]))
        .collect();
    // Freeze party 2 (it keeps its sockets open but answers nothing) once it is inside the
    // protocol, on the first query.
    wait_until_inside_the_protocol(&mut children[2]);
    let pid = children[2].id().to_string();
    let stopped = std::process::Command::new("kill")
        .args(["-STOP", &pid])
        .status()
        .unwrap();
    assert!(stopped.success());
    let started = Instant::now();
    let survivors: Vec<_> = children
        .drain(..2)
        .map(|c| common::wait_bounded(c, Duration::from_secs(30)))
        .collect();
    let waited = started.elapsed();
    let _ = children[0].kill();
    let _ = children[0].wait();
    assert!(
        waited < Duration::from_secs(15),
        "the others took {waited:?} to give up"
    );
    let all: String = survivors
        .iter()
        .map(common::stderr)
        .collect::<Vec<_>>()
        .join("\n");
    assert_no_panic(&all);
    assert!(
        survivors.iter().all(|o| !o.status.success()),
        "a survivor succeeded:\n{all}"
    );
    assert!(
        all.contains("party 2") && all.contains("timeout"),
        "no timeout naming party 2 in:\n{all}"
    );
}

/// Inputs that do not fit together are refused before any protocol message, with a message that
/// names them: zipped galleries with different ids, query inputs with different batch sizes.
#[test]
fn misaligned_inputs_are_refused_with_a_message() {
    let work = tempfile::tempdir().unwrap();
    let path = |n: &str| work.path().join(n).to_str().unwrap().to_string();
    let gen = |args: &[&str], out: &str| {
        let o = path(out);
        let mut all = vec!["gen"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", &o]);
        common::irisc_ok(&all);
    };
    gen(
        &["--count", "12", "--seed", "1", "--bits", "256"],
        "left.ndjson",
    );
    gen(
        &["--count", "10", "--seed", "2", "--bits", "256"],
        "right.ndjson",
    );
    gen(
        &["--count", "12", "--seed", "3", "--bits", "256"],
        "right12.ndjson",
    );
    gen(
        &["--count", "3", "--seed", "4", "--bits", "256"],
        "ql.ndjson",
    );
    gen(
        &["--count", "2", "--seed", "5", "--bits", "256"],
        "qr.ndjson",
    );
    gen(
        &["--count", "3", "--seed", "6", "--bits", "256"],
        "qr3.ndjson",
    );
    let program = common::example("small_eyes.irs");
    let run = |right: &str, qr: &str| {
        let out = common::irisc()
            .args(["run", program.to_str().unwrap(), "--timeout", "10"])
            .args(["--input", &format!("left={}", path("left.ndjson"))])
            .args(["--input", &format!("right={}", path(right))])
            .args(["--input", &format!("ql={}", path("ql.ndjson"))])
            .args(["--input", &format!("qr={}", path(qr))])
            .output()
            .unwrap();
        let err = common::stderr(&out);
        assert!(!out.status.success(), "{err}");
        assert!(out.stdout.is_empty(), "answers printed despite the error");
        assert_no_panic(&err);
        err
    };
    let err = run("right.ndjson", "qr3.ndjson");
    assert!(
        err.contains("are zipped, so they must hold the same ids"),
        "{err}"
    );
    let err = run("right12.ndjson", "qr.ndjson");
    assert!(err.contains("query inputs form one batch"), "{err}");
}
