//! What a party executable tells its user: `--version`, the `--party` range, whom it waits for
//! while connecting, settings the parties must share compared at connect, and how it stops
//! (one line saying why, an abort frame that its peers report at once with the real cause).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

use crate::common::{self, Setup};
use crate::data;

fn small() -> std::path::PathBuf {
    common::example("small_ids.irs")
}

/// Shares a gallery of `records` random records (and a few at the threshold's edges per query)
/// and `queries` queries.
pub fn shared_inputs(
    setup: &Setup,
    records: usize,
    queries: usize,
) -> ([std::path::PathBuf; 3], [std::path::PathBuf; 3]) {
    let (gallery, qs) = data::edge_case_set(5, 256, records, queries, 3, 8, 2);
    (
        setup.share(&small(), "--db", "db", &gallery),
        setup.share(&small(), "--query", "query", &qs),
    )
}

/// The lines of a party's stderr that are not progress (`--verbose`) or waiting lines.
pub fn reasons(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| {
            !(l.contains(": query ")
                || l.contains("connected to the other two parties")
                || l.contains(": waiting for "))
        })
        .collect()
}

/// Sends every line of the child's stderr to the returned channel, and keeps draining it.
pub fn stderr_lines(child: &mut Child) -> Receiver<(Instant, String)> {
    let err = child.stderr.take().expect("stderr is piped");
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for l in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send((Instant::now(), l));
        }
    });
    rx
}

/// Waits until a line containing `what` comes, at most `limit`; all lines seen so far.
pub fn wait_for_line(rx: &Receiver<(Instant, String)>, what: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok((_, l)) => {
                let hit = l.contains(what);
                seen.push(l);
                if hit {
                    return seen;
                }
            }
            Err(_) => break,
        }
    }
    panic!(
        "no line with {what:?} within {limit:?}; got:\n{}",
        seen.join("\n")
    );
}

#[test]
fn version_names_the_program_its_fingerprint_and_the_compiler() {
    let setup = common::setup(&small());
    let out = Command::new(&setup.exe).arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let source = std::fs::read_to_string(small()).unwrap();
    let fingerprint = blake3::hash(source.as_bytes()).to_hex().to_string();
    assert!(
        text.starts_with(&format!(
            "small_ids (program fingerprint {fingerprint}), compiled by irisc {}",
            env!("CARGO_PKG_VERSION")
        )),
        "{text}"
    );
}

#[test]
fn party_out_of_range_names_the_flag_the_choices_and_the_value() {
    let setup = common::setup(&small());
    for bad in ["3", "-1"] {
        let out = Command::new(&setup.exe)
            .args(["--party", bad, "--config"])
            .arg(&setup.config)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(
            common::stderr(&out),
            format!("small_ids: --party must be 0, 1 or 2 (got {bad})\n")
        );
    }
}

#[test]
fn a_waiting_party_says_whom_it_waits_for() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 2, 2);
    let text = std::fs::read_to_string(&setup.config).unwrap();
    let address = |i: usize| {
        let at = text.find(&format!("index = {i}")).unwrap();
        let rest = &text[at..];
        let a = rest.find("address = \"").unwrap() + "address = \"".len();
        rest[a..a + rest[a..].find('"').unwrap()].to_string()
    };
    // With --verbose at once; without, after a few seconds (and before the timeout).
    let started = Instant::now();
    let mut verbose = setup.spawn(0, &db[0], &q[0], &["--timeout", "5", "--verbose"]);
    let lines = stderr_lines(&mut verbose);
    let seen = wait_for_line(&lines, "waiting for", Duration::from_secs(2));
    let want = format!(
        "small_ids party 0: waiting for party 1 at {} and party 2 at {}",
        address(1),
        address(2)
    );
    assert!(seen.last().unwrap().starts_with(&want), "{seen:?}");
    assert!(started.elapsed() < Duration::from_secs(2));
    let _ = verbose.kill();
    let _ = verbose.wait();

    let quiet = setup.spawn(2, &db[2], &q[2], &["--timeout", "5"]);
    let out = common::wait_bounded(quiet, Duration::from_secs(30));
    let err = common::stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("small_ids party 2: waiting for party 0 at ")
            && err.contains(" and party 1 at "),
        "{err}"
    );
}

/// Runs the three parties with `extra[p]` for party `p`; every party must fail at connect,
/// quickly, each with a line containing all of `expect`.
fn refused_at_connect(extra: [&[&str]; 3], expect: &[&str]) {
    refused_at_connect_built(|_| Vec::new(), extra, expect);
}

/// [`refused_at_connect`] where party `p` runs the build `other(dir)[p]` of the program when
/// there is one (`dir`: the setup's folder), the setup's executable otherwise.
fn refused_at_connect_built(
    other: impl Fn(&std::path::Path) -> Vec<Option<std::path::PathBuf>>,
    extra: [&[&str]; 3],
    expect: &[&str],
) {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 4, 2);
    let exes = other(setup.dir.path());
    let started = Instant::now();
    let children: Vec<_> = (0..3)
        .map(|p| {
            let mut args = vec!["--timeout", "20"];
            args.extend_from_slice(extra[p]);
            let exe = exes.get(p).cloned().flatten().unwrap_or(setup.exe.clone());
            setup.spawn_exe(&exe, p, &db[p], &q[p], &args)
        })
        .collect();
    let outs: Vec<_> = children
        .into_iter()
        .map(|c| common::wait_bounded(c, Duration::from_secs(60)))
        .collect();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}: not refused at connect",
        started.elapsed()
    );
    for (p, o) in outs.iter().enumerate() {
        let err = common::stderr(o);
        assert_eq!(o.status.code(), Some(1), "party {p}:\n{err}");
        assert!(!err.contains("malformed"), "party {p}:\n{err}");
        let lines = reasons(&err);
        assert_eq!(lines.len(), 1, "party {p}: not one line:\n{err}");
        for e in expect {
            assert!(lines[0].contains(e), "party {p}: no {e:?} in\n{err}");
        }
    }
}

#[test]
fn mismatched_chunk_size_is_named_at_connect() {
    refused_at_connect(
        [&[], &[], &["--chunk-size", "240"]],
        &["the parties must agree on --chunk-size", "party 2 has 240"],
    );
}

#[test]
fn mismatched_record_chunk_is_named_at_connect() {
    refused_at_connect(
        [&[], &["--record-chunk", "3"], &[]],
        &["the parties must agree on --record-chunk", "party 1 has 3"],
    );
}

/// `small_ids` built into `dir/name` with the tests' choices and `extra` ones.
fn build_other(dir: &std::path::Path, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let (other, program) = (dir.join(name), small());
    let mut args = vec![
        "build",
        program.to_str().unwrap(),
        "-o",
        other.to_str().unwrap(),
        common::PLAN[0],
        common::PLAN[1],
    ];
    args.extend_from_slice(extra);
    common::irisc_ok(&args);
    other
}

/// The parties agree on the `mpc` module they were built from (its digest), not on the backend:
/// a party built with another query batch runs another schedule and is refused at connect. (A
/// CPU party with GPU parties of one module runs: `scripts/gpu_check.sh`, step 2.)
#[test]
fn a_party_built_with_another_schedule_is_named_at_connect() {
    let batch2 = |dir: &std::path::Path| {
        vec![
            None,
            Some(build_other(dir, "prog-batch2", &["--query-batch", "2"])),
            None,
        ]
    };
    refused_at_connect_built(
        batch2,
        [&[], &[], &[]],
        &["the parties must agree on the message schedule"],
    );
}

/// A party built with the other MSB input runs another comparison protocol: refused at
/// connect, the differing comparison named. (`small_ids` over rep3 compares in Z_2^10, where
/// the cost model keeps the reshare and BitExtract; the odd party takes AdditiveMSB.)
#[test]
fn a_party_built_with_another_msb_input_is_named_at_connect() {
    let additive = |dir: &std::path::Path| {
        vec![
            Some(build_other(
                dir,
                "prog-additive",
                &["--msb-input", "additive"],
            )),
            None,
            None,
        ]
    };
    refused_at_connect_built(
        additive,
        [&[], &[], &[]],
        &[
            "the parties must agree on the comparisons' protocols",
            "msb from replicated",
            "msb from additive",
        ],
    );
}

/// A party built with the other threshold placement would add the public threshold on other
/// records than its peers (twice, or not at all): its schedule differs (the mask-length and
/// threshold calls carry the placement), so it is refused at connect.
#[test]
fn a_party_built_with_another_threshold_placement_is_named_at_connect() {
    let component0 = |dir: &std::path::Path| {
        vec![
            None,
            Some(build_other(
                dir,
                "prog-component0",
                &["--threshold-placement", "component0"],
            )),
            None,
        ]
    };
    refused_at_connect_built(
        component0,
        [&[], &[], &[]],
        &["the parties must agree on the message schedule"],
    );
}

#[test]
fn a_party_that_cannot_load_its_inputs_tells_its_peers_at_once() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 2, 2);
    let len = std::fs::metadata(&db[1]).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&db[1])
        .unwrap();
    f.set_len(len - 7).unwrap();
    let started = Instant::now();
    // A timeout far above the bound below: the peers must not be waiting for it.
    let outs = setup.run_three(&db, &q, &["--timeout", "60"]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    let err1 = common::stderr(&outs[1]);
    assert_eq!(reasons(&err1).len(), 1, "{err1}");
    assert!(
        err1.starts_with("small_ids party 1: ") && err1.contains("truncated"),
        "{err1}"
    );
    for p in [0, 2] {
        let err = common::stderr(&outs[p]);
        assert!(!outs[p].status.success());
        assert!(
            err.contains(&format!("small_ids party {p}: party 1 stopped: "))
                && err.contains("truncated"),
            "party {p} does not relay party 1's reason:\n{err}"
        );
    }
}

/// A share file that other local users can read is refused before it is used (issue 16,
/// point 4): the party says why and how to fix it, and its peers learn it at once.
#[test]
fn a_share_file_other_users_can_read_is_refused_and_the_peers_told() {
    use std::os::unix::fs::PermissionsExt;
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 2, 2);
    for p in 0..3 {
        let mode = std::fs::metadata(&db[p]).unwrap().permissions().mode() & 0o777;
        assert_eq!(
            mode,
            0o600,
            "irisc share writes {} owner-only",
            db[p].display()
        );
    }
    std::fs::set_permissions(&db[1], std::fs::Permissions::from_mode(0o644)).unwrap();
    let started = Instant::now();
    let outs = setup.run_three(&db, &q, &["--timeout", "60"]);
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "took {:?}",
        started.elapsed()
    );
    let err1 = common::stderr(&outs[1]);
    assert!(!outs[1].status.success());
    assert!(
        err1.contains("other users can access it (mode 0644)") && err1.contains("chmod 600"),
        "{err1}"
    );
    for p in [0, 2] {
        let err = common::stderr(&outs[p]);
        assert!(!outs[p].status.success());
        assert!(
            err.contains("party 1 stopped: ") && err.contains("other users can access it"),
            "party {p}:\n{err}"
        );
    }
}

#[test]
fn sigterm_gives_one_line_and_its_peers_the_reason_at_once() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 3000, 600);
    // A receive timeout far above the bound below: the peers learn it from the abort frame.
    let mut children: Vec<_> = (0..3)
        .map(|p| setup.spawn(p, &db[p], &q[p], &["--timeout", "60", "--verbose"]))
        .collect();
    let lines = stderr_lines(&mut children[2]);
    wait_for_line(&lines, "query 1 of", Duration::from_secs(60));
    let pid = children[2].id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let started = Instant::now();
    let victim = children.pop().unwrap();
    let victim = common::wait_bounded(victim, Duration::from_secs(30));
    assert_eq!(victim.status.code(), Some(143), "SIGTERM's status");
    let mut said: Vec<String> = lines.try_iter().map(|(_, l)| l).collect();
    // The reader thread may not have seen the last line yet.
    while let Ok((_, l)) = lines.recv_timeout(Duration::from_millis(500)) {
        said.push(l);
    }
    let said = said.join("\n");
    assert_eq!(
        reasons(&said),
        ["small_ids party 2: stopped by SIGTERM"],
        "{said}"
    );
    for (p, c) in children.into_iter().enumerate() {
        let o = common::wait_bounded(c, Duration::from_secs(60));
        let err = common::stderr(&o);
        assert_eq!(o.status.code(), Some(1), "party {p}:\n{err}");
        let why = reasons(&err);
        assert_eq!(why.len(), 1, "party {p}:\n{err}");
        assert!(
            why[0].contains("party 2 stopped: it was stopped by SIGTERM"),
            "party {p} does not give party 2's reason:\n{err}"
        );
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the peers took {:?} to stop",
        started.elapsed()
    );
}

#[test]
fn sigterm_while_connecting_is_relayed_to_the_peer_that_waits() {
    let setup = common::setup(&small());
    let (db, q) = shared_inputs(&setup, 2, 2);
    // Party 1 never comes: party 0 would wait for it until its timeout.
    let waiting = setup.spawn(0, &db[0], &q[0], &["--timeout", "60"]);
    let mut victim = setup.spawn(2, &db[2], &q[2], &["--timeout", "60", "--verbose"]);
    let lines = stderr_lines(&mut victim);
    wait_for_line(&lines, "waiting for party", Duration::from_secs(30));
    let pid = victim.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let started = Instant::now();
    assert_eq!(victim.wait().unwrap().code(), Some(143));
    let out = common::wait_bounded(waiting, Duration::from_secs(90));
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        reasons(&err),
        ["small_ids party 0: party 2 stopped: it was stopped by SIGTERM"],
        "{err}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "party 0 took {:?}",
        started.elapsed()
    );
}
