//! The two-server family `fss2` (paper 002) as separate OS processes over TLS: the dealer's
//! enrollment and preprocessing (`irisc fss2 enroll|deal`), two servers and the client. The
//! client's answers equal the plaintext definition (`--check`, evaluated by the compiler's
//! plaintext oracle, not by the protocol code); dealer material is refused, before anything is
//! sent, when exhausted, reused out of step, another server's or another program's.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use crate::common::{base_port, example, irisc, irisc_ok, stderr, stdout_json, wait_bounded};
use crate::language::{s, Work};

const LIMIT: Duration = Duration::from_secs(60);

/// A gallery of 30 speakers x 2 utterances and 8 queries of the same voices, at a noise that puts
/// same-speaker cosines around the program's tau (0.34): some pairs match, some just miss.
fn voices(w: &Work) -> (PathBuf, PathBuf) {
    let g = w.gen(
        "gallery.ndjson",
        &[
            "--kind",
            "embedding",
            "--speakers",
            "30",
            "--per-speaker",
            "2",
            "--seed",
            "3",
            "--noise",
            "1.3",
        ],
    );
    let q = w.gen(
        "queries.ndjson",
        &[
            "--kind",
            "embedding",
            "--speakers",
            "8",
            "--per-speaker",
            "1",
            "--seed",
            "4",
            "--noise",
            "1.3",
        ],
    );
    (g, q)
}

#[test]
fn irisc_run_fss2_equals_the_plaintext_definition() {
    let w = Work::new();
    let (g, q) = voices(&w);
    let prog = example("voice_cosine.irs");
    let out = irisc()
        .args([
            "run",
            s(&prog),
            "--protocol",
            "fss2",
            "--db",
            s(&g),
            "--query",
            s(&q),
            "--check",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("checked: the answers equal the plaintext definition"));
    let lines = stdout_json(&out);
    assert_eq!(lines.len(), 8);
    let hits: Vec<usize> = lines
        .iter()
        .map(|l| l["ids"].as_array().unwrap().len())
        .collect();
    // Matches really occur, and not everywhere.
    assert!(hits.iter().sum::<usize>() > 0, "{hits:?}");
    assert!(hits.iter().sum::<usize>() < 8 * 60, "{hits:?}");
}

/// The dealer's files for `program` against the gallery `g`, `auths` authentications.
fn deal(w: &Work, program: &Path, g: &Path, auths: u32, dir: &str) -> PathBuf {
    let d = w.path(dir);
    irisc_ok(&[
        "fss2",
        "enroll",
        s(program),
        "--gallery",
        s(g),
        "--out",
        s(&d),
    ]);
    irisc_ok(&[
        "fss2",
        "deal",
        s(program),
        "--secret",
        s(&d.join("dealer.secret")),
        "--authentications",
        &auths.to_string(),
        "--out",
        s(&d),
    ]);
    d
}

fn keys(w: &Work) -> PathBuf {
    let k = w.path(&format!("keys{}", base_port()));
    irisc_ok(&["keys", "-o", s(&k), "--base-port", &base_port().to_string()]);
    k.join("parties.toml")
}

fn server(
    program: &Path,
    party: &str,
    config: &Path,
    gallery: &Path,
    material: &Path,
    queries: usize,
) -> Child {
    irisc()
        .args([
            "fss2",
            "serve",
            s(program),
            "--party",
            party,
            "--config",
            s(config),
        ])
        .args([
            "--gallery",
            s(gallery),
            "--material",
            s(material),
            "--queries",
            &queries.to_string(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn client(program: &Path, config: &Path, queries: &Path) -> Child {
    irisc()
        .args([
            "fss2",
            "query",
            s(program),
            "--party",
            "p1",
            "--config",
            s(config),
            "--queries",
            s(queries),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Both servers (party p0 with `m0`, p2 with `m1`) and the client: their outputs.
fn run_roles(
    program: &Path,
    config: &Path,
    d: &Path,
    m0: &Path,
    m1: &Path,
    q: &Path,
    n: usize,
) -> [Output; 3] {
    let s0 = server(program, "p0", config, &d.join("server0.gallery"), m0, n);
    let s1 = server(program, "p2", config, &d.join("server1.gallery"), m1, n);
    let c = client(program, config, q);
    [
        wait_bounded(s0, LIMIT),
        wait_bounded(c, LIMIT),
        wait_bounded(s1, LIMIT),
    ]
}

#[test]
fn the_roles_as_processes_report_two_rounds_and_consume_their_material_once() {
    let w = Work::new();
    let (g, q) = voices(&w);
    let prog = example("voice_cosine.irs");
    let d = deal(&w, &prog, &g, 8, "dealer");
    let config = keys(&w);
    let (m0, m1) = (d.join("server0.material"), d.join("server1.material"));
    let [s0, c, s1] = run_roles(&prog, &config, &d, &m0, &m1, &q, 8);
    for o in [&s0, &c, &s1] {
        assert!(o.status.success(), "{}", stderr(o));
    }
    // What explain predicts is what the servers report.
    let ex = irisc_ok(&[
        "explain",
        s(&prog),
        "--protocol",
        "fss2",
        "--records",
        "60",
        "--json",
    ]);
    let ex: serde_json::Value = serde_json::from_slice(&ex.stdout).unwrap();
    assert_eq!(ex["rounds_between_servers"], 2);
    let b = &ex["bytes_per_server_per_query"];
    let to_client =
        7 * b["to_client"].as_u64().unwrap() + b["to_client_last_query"].as_u64().unwrap();
    for o in [&s0, &s1] {
        let r = &stdout_json(o)[0];
        assert_eq!(
            r["bytes_to_server"].as_u64().unwrap(),
            8 * b["to_other_server"].as_u64().unwrap()
        );
        assert_eq!(r["bytes_to_client"].as_u64().unwrap(), to_client);
        assert_eq!(r["rounds_per_query"], 2);
        assert_eq!(r["queries"], 8);
        // Per query and template: three ring elements and a 17-byte key request to the other
        // server, plus the input digest and v's opening.
        let per_query = 32 + 8 + 60 * (3 * 8 + 17);
        assert_eq!(r["bytes_to_server"].as_u64().unwrap(), 8 * per_query as u64);
    }
    assert_eq!(stdout_json(&c).len(), 8);
    // The batch is used up: a second run is refused by both servers before they connect.
    let [s0, c, s1] = run_roles(&prog, &config, &d, &m0, &m1, &q, 8);
    for o in [&s0, &s1] {
        assert!(!o.status.success());
        assert!(
            stderr(o).contains("0 unused authentications of 8 left"),
            "{}",
            stderr(o)
        );
    }
    assert!(!c.status.success());
}

#[test]
fn material_that_does_not_belong_is_refused_before_anything_is_sent() {
    let w = Work::new();
    let (g, q) = voices(&w);
    let prog = example("voice_cosine.irs");
    let d = deal(&w, &prog, &g, 2, "dealer");
    let config = keys(&w);
    let (m0, m1) = (d.join("server0.material"), d.join("server1.material"));
    let before = std::fs::read(&m0).unwrap();

    // Another server's material.
    let s0 = server(&prog, "p0", &config, &d.join("server0.gallery"), &m1, 1);
    let o = wait_bounded(s0, LIMIT);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("this is server 1's material, not server 0's"),
        "{}",
        stderr(&o)
    );

    // Another program's (a different threshold).
    let other = w.path("voice_other.irs");
    std::fs::write(
        &other,
        std::fs::read_to_string(&prog)
            .unwrap()
            .replace("0.34", "0.5"),
    )
    .unwrap();
    let s0 = server(&other, "p0", &config, &d.join("server0.gallery"), &m0, 1);
    let o = wait_bounded(s0, LIMIT);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("made for another program"),
        "{}",
        stderr(&o)
    );

    // Asking for more authentications than the batch holds.
    let s0 = server(&prog, "p0", &config, &d.join("server0.gallery"), &m0, 3);
    let o = wait_bounded(s0, LIMIT);
    assert!(
        stderr(&o).contains("2 unused authentications of 2 left, 3 needed"),
        "{}",
        stderr(&o)
    );
    // None of this consumed anything.
    assert_eq!(std::fs::read(&m0).unwrap(), before);

    // Replay: server 0's store copied before a run and put back after it is one authentication
    // behind server 1's: the servers refuse before any mask reaches the client.
    let one = w.path("one.ndjson");
    let first_line = std::fs::read_to_string(&q)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&one, first_line + "\n").unwrap();
    let [a, b, c] = run_roles(&prog, &config, &d, &m0, &m1, &one, 1);
    for o in [&a, &b, &c] {
        assert!(o.status.success(), "{}", stderr(o));
    }
    std::fs::write(&m0, &before).unwrap();
    let [s0, c, s1] = run_roles(&prog, &config, &d, &m0, &m1, &one, 1);
    assert!(!s0.status.success() && !s1.status.success() && !c.status.success());
    let both = stderr(&s0) + &stderr(&s1);
    assert!(both.contains("out of step"), "{both}");
    assert!(!stderr(&c).contains("matches"));
}

#[test]
fn a_program_fss2_cannot_run_is_refused_at_its_source() {
    let w = Work::new();
    let g = w.gen("g.ndjson", &["--kind", "embedding", "--speakers", "2"]);
    // An iris program: not a cosine identification.
    let out = irisc()
        .args([
            "fss2",
            "enroll",
            s(&example("iris_ids.irs")),
            "--gallery",
            s(&g),
            "--out",
            s(&w.path("d")),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(
        e.contains("iris_ids.irs:") && e.contains('^') && e.contains("fss2"),
        "{e}"
    );
    // A cosine program that reveals to a party other than the query's owner.
    let p = w.path("wrong_to.irs");
    std::fs::write(
        &p,
        std::fs::read_to_string(example("voice_cosine.irs"))
            .unwrap()
            .replace("to p1;", "to p0;"),
    )
    .unwrap();
    let out = irisc()
        .args([
            "fss2",
            "enroll",
            s(&p),
            "--gallery",
            s(&g),
            "--out",
            s(&w.path("d")),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("reveals to the client"),
        "{}",
        stderr(&out)
    );
}

/// The malicious variant's roles, server p0 deviating as `deviate` says (empty: honest).
#[allow(clippy::too_many_arguments)]
fn run_star(
    w: &Work,
    prog: &Path,
    g: &Path,
    q: &Path,
    n: usize,
    m: u32,
    deviate: &str,
    tag: &str,
) -> [Output; 3] {
    let d = w.path(&format!("star-{tag}"));
    irisc_ok(&[
        "fss2",
        "enroll",
        s(prog),
        "--gallery",
        s(g),
        "--out",
        s(&d),
        "--malicious",
    ]);
    irisc_ok(&[
        "fss2",
        "deal",
        s(prog),
        "--secret",
        s(&d.join("dealer.secret-star")),
        "--authentications",
        &n.to_string(),
        "--out",
        s(&d),
        "--malicious",
        &m.to_string(),
    ]);
    let config = keys(w);
    let serve = |party: &str, b: usize, dev: &str| {
        irisc()
            .args([
                "fss2",
                "serve",
                s(prog),
                "--party",
                party,
                "--config",
                s(&config),
            ])
            .args(["--gallery", s(&d.join(format!("server{b}.gallery-star")))])
            .args(["--material", s(&d.join(format!("server{b}.material-star")))])
            .args(["--queries", &n.to_string(), "--malicious", &m.to_string()])
            .env("IRISC_FSS2_DEVIATE", dev)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let s0 = serve("p0", 0, deviate);
    let s1 = serve("p2", 1, "");
    let c = irisc()
        .args([
            "fss2",
            "query",
            s(prog),
            "--party",
            "p1",
            "--config",
            s(&config),
            "--queries",
            s(q),
        ])
        .args([
            "--malicious",
            &m.to_string(),
            "--material",
            s(&d.join("client.material-star")),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    [
        wait_bounded(s0, LIMIT),
        wait_bounded(c, LIMIT),
        wait_bounded(s1, LIMIT),
    ]
}

#[test]
fn the_malicious_variant_answers_as_the_plaintext_definition_and_withholds_on_deviation() {
    let w = Work::new();
    let (g, q) = voices(&w);
    let prog = example("voice_cosine.irs");
    // The plaintext-checked answers of the semi-honest run are the reference.
    let reference = irisc()
        .args([
            "run",
            s(&prog),
            "--protocol",
            "fss2",
            "--db",
            s(&g),
            "--query",
            s(&q),
            "--check",
        ])
        .output()
        .unwrap();
    assert!(reference.status.success(), "{}", stderr(&reference));
    let want = stdout_json(&reference);
    let [s0, c, s1] = run_star(&w, &prog, &g, &q, 8, 10, "", "honest");
    for o in [&s0, &c, &s1] {
        assert!(o.status.success(), "{}", stderr(o));
    }
    assert_eq!(stdout_json(&c), want);
    // What explain predicts for m = 10 is what the servers report.
    let ex = irisc_ok(&[
        "explain",
        s(&prog),
        "--protocol",
        "fss2",
        "--records",
        "60",
        "--json",
    ]);
    let ex: serde_json::Value = serde_json::from_slice(&ex.stdout).unwrap();
    let m10 = &ex["malicious"][0];
    assert_eq!(m10["m"], 10);
    for o in [&s0, &s1] {
        let r = &stdout_json(o)[0];
        assert_eq!(
            r["bytes_to_server"].as_u64().unwrap(),
            8 * m10["to_other_server"].as_u64().unwrap()
        );
        assert_eq!(
            r["bytes_to_client"].as_u64().unwrap(),
            8 * m10["to_client"].as_u64().unwrap()
        );
    }
    // `irisc run --protocol fss2 --malicious 10`: every role its own process, the answers
    // checked against the plaintext definition.
    let run = irisc()
        .args(["run", s(&prog), "--protocol", "fss2", "--malicious", "10"])
        .args(["--db", s(&g), "--query", s(&q), "--check"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(stdout_json(&run), want);
    // tau < 0 (`or` of the gates, run as the negated `and` of their complements), checked.
    let neg = w.path("voice_negative.irs");
    std::fs::write(
        &neg,
        std::fs::read_to_string(&prog)
            .unwrap()
            .replace("cosine(v, s) >= TAU", "cosine(v, s) >= -0.05"),
    )
    .unwrap();
    let run = irisc()
        .args(["run", s(&neg), "--protocol", "fss2", "--malicious", "10"])
        .args(["--db", s(&g), "--query", s(&q), "--check"])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", stderr(&run));
    let counts: Vec<usize> = stdout_json(&run)
        .iter()
        .map(|l| l["ids"].as_array().unwrap().len())
        .collect();
    assert!(counts.iter().any(|&c| c > 0 && c < 60), "{counts:?}");
    // One query each: a deviating server is caught and the client prints no answer. m = 40,
    // so that what escapes with probability 2^-m (every instance normal, or one normal
    // instance left) does not make this test fail by chance.
    let one = w.path("one-star.ndjson");
    let first = std::fs::read_to_string(&q)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&one, first + "\n").unwrap();
    for dev in ["flip-output", "alter-delta", "wrong-key", "corrupt-mac"] {
        let [_, c, _] = run_star(&w, &prog, &g, &one, 1, 40, dev, dev);
        assert!(!c.status.success(), "{dev} was not detected");
        assert!(c.stdout.is_empty(), "{dev}: answers printed");
        let e = stderr(&c);
        assert!(
            e.contains("deviated") || e.contains("stopped"),
            "{dev}: {e}"
        );
    }
}

/// `irisc build --protocol fss2 [--malicious M] -o OUT`: the role executables.
fn build_roles(w: &Work, prog: &Path, tag: &str, malicious: Option<u32>) -> [PathBuf; 3] {
    let out = w.path(tag);
    let mut args = vec!["build", s(prog), "--protocol", "fss2", "-o", s(&out)];
    let m = malicious.map(|m| m.to_string());
    if let Some(m) = &m {
        args.extend(["--malicious", m]);
    }
    let o = irisc_ok(&args);
    assert!(
        stderr(&o).contains("fss2: the servers run"),
        "{}",
        stderr(&o)
    );
    ["server", "dealer", "client"].map(|r| {
        let p = w.path(&format!("{tag}-{r}"));
        assert!(p.is_file(), "{} was not written", p.display());
        p
    })
}

fn run_exe(exe: &Path, args: &[&str]) -> Output {
    let o = std::process::Command::new(exe).args(args).output().unwrap();
    assert!(o.status.success(), "{}: {}", exe.display(), stderr(&o));
    o
}

fn spawn_exe(exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Child {
    std::process::Command::new(exe)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The executables `irisc build --protocol fss2` writes run the roles by themselves: the dealer
/// enrolls and deals, two servers (running the SS.IP kernel the compiler generated) and the
/// client over TLS answer as the plaintext definition (`reference`, written from the definition,
/// sharing no code with the compiler or runtime); the malicious build answers the same and
/// withholds the answer when a server deviates.
#[test]
fn built_role_executables_answer_as_the_plaintext_definition() {
    let w = Work::new();
    let (g, q) = voices(&w);
    let prog = example("voice_cosine.irs");
    // voice_cosine.irs: 192 components at scale 2^8, tau = 0.34 = 17/50.
    let want = crate::reference::cosine_matching_ids(&g, &q, 8, 17, 50);
    let hits: usize = want.iter().map(Vec::len).sum();
    assert!(
        hits > 0 && hits < 8 * 60,
        "the inputs make no real test: {want:?}"
    );

    let [server, dealer, client] = build_roles(&w, &prog, "voice", None);
    let v = run_exe(&server, &["--version"]);
    assert!(String::from_utf8_lossy(&v.stdout).contains("server"));
    let ex: serde_json::Value =
        serde_json::from_slice(&run_exe(&client, &["--explain"]).stdout).unwrap();
    assert_eq!(ex["rounds_between_servers"], 2);
    let d = w.path("built-dealer");
    run_exe(&dealer, &["enroll", "--gallery", s(&g), "--out", s(&d)]);
    run_exe(
        &dealer,
        &[
            "deal",
            "--secret",
            s(&d.join("dealer.secret")),
            "--authentications",
            "8",
            "--out",
            s(&d),
        ],
    );
    let config = keys(&w);
    let serve = |exe: &Path, party: &str, b: usize, extra: &[&str], env: &[(&str, &str)]| {
        let gallery = d.join(format!("server{b}.gallery"));
        let material = d.join(format!("server{b}.material"));
        let mut args = vec![
            "--party",
            party,
            "--config",
            s(&config),
            "--gallery",
            s(&gallery),
        ];
        args.extend(["--material", s(&material)]);
        args.extend(extra);
        spawn_exe(exe, &args, env)
    };
    let s0 = serve(&server, "p0", 0, &["--queries", "8"], &[]);
    let s1 = serve(&server, "p2", 1, &["--queries", "8"], &[]);
    let c = spawn_exe(
        &client,
        &["--party", "p1", "--config", s(&config), "--queries", s(&q)],
        &[],
    );
    let [s0, c, s1] = [
        wait_bounded(s0, LIMIT),
        wait_bounded(c, LIMIT),
        wait_bounded(s1, LIMIT),
    ];
    for o in [&s0, &c, &s1] {
        assert!(o.status.success(), "{}", stderr(o));
    }
    assert_eq!(crate::reference::printed_ids(&stdout_json(&c)), want);
    for o in [&s0, &s1] {
        let r = &stdout_json(o)[0];
        assert_eq!(r["ss_ip"], "generated", "{r}");
        assert_eq!(r["rounds_per_query"], 2);
    }

    // The malicious build (m = 10): the same answers; a deviating server is caught.
    let [server, dealer, client] = build_roles(&w, &prog, "voice-star", Some(10));
    let one = w.path("one-built.ndjson");
    let first = std::fs::read_to_string(&q)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&one, first + "\n").unwrap();
    for (n, queries, deviate) in [
        (8, &q, ""),
        (1, &one, "flip-output"),
        (1, &one, "alter-delta"),
    ] {
        let d = w.path(&format!("built-star-{deviate}"));
        run_exe(&dealer, &["enroll", "--gallery", s(&g), "--out", s(&d)]);
        run_exe(
            &dealer,
            &[
                "deal",
                "--secret",
                s(&d.join("dealer.secret-star")),
                "--authentications",
                &n.to_string(),
                "--out",
                s(&d),
            ],
        );
        let n = n.to_string();
        let serve = |exe: &Path, party: &str, b: usize, extra: &[&str], env: &[(&str, &str)]| {
            let gallery = d.join(format!("server{b}.gallery-star"));
            let material = d.join(format!("server{b}.material-star"));
            let mut args = vec![
                "--party",
                party,
                "--config",
                s(&config),
                "--gallery",
                s(&gallery),
            ];
            args.extend(["--material", s(&material)]);
            args.extend(extra);
            spawn_exe(exe, &args, env)
        };
        let s0 = serve(
            &server,
            "p0",
            0,
            &["--queries", &n],
            &[("IRISC_FSS2_DEVIATE", deviate)],
        );
        let s1 = serve(&server, "p2", 1, &["--queries", &n], &[]);
        let material = d.join("client.material-star");
        let c = spawn_exe(
            &client,
            &[
                "--party",
                "p1",
                "--config",
                s(&config),
                "--queries",
                s(queries),
                "--material",
                s(&material),
            ],
            &[],
        );
        let [_, c, _] = [
            wait_bounded(s0, LIMIT),
            wait_bounded(c, LIMIT),
            wait_bounded(s1, LIMIT),
        ];
        if deviate.is_empty() {
            assert!(c.status.success(), "{}", stderr(&c));
            assert_eq!(crate::reference::printed_ids(&stdout_json(&c)), want);
        } else {
            assert!(!c.status.success(), "{deviate} was not detected");
            assert!(c.stdout.is_empty(), "{deviate}: answers printed");
        }
    }
    // The malicious client needs its part of the dealer's material: it says so before
    // connecting.
    let o = std::process::Command::new(&client)
        .args([
            "--party",
            "p1",
            "--config",
            s(&config),
            "--queries",
            s(&one),
        ])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("client.material-star"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn irisc_build_protocol_fss2_refuses_what_the_family_cannot_run() {
    let w = Work::new();
    let out = irisc()
        .args([
            "build",
            s(&example("iris_ids.irs")),
            "--protocol",
            "fss2",
            "-o",
            s(&w.path("x")),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = stderr(&out);
    assert!(
        e.contains("iris_ids.irs:") && e.contains('^') && e.contains("fss2"),
        "{e}"
    );
    let out = irisc()
        .args([
            "build",
            s(&example("voice_cosine.irs")),
            "--malicious",
            "10",
            "-o",
            s(&w.path("y")),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(stderr(&out).contains("--protocol fss2"), "{}", stderr(&out));
    let out = irisc()
        .args([
            "build",
            s(&example("voice_cosine.irs")),
            "--protocol",
            "fss2",
            "--malicious",
            "0",
            "-o",
            s(&w.path("z")),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("at least one trap instance"),
        "{}",
        stderr(&out)
    );
}
