//! `irisc run`: everything a user would do by hand, on this machine: build the program, create
//! keys, secret-share gallery and queries, start the three parties as separate processes that
//! talk over TLS on loopback, and relay the output parties' answers as they print them.
//!
//! Its inputs are checked (files given, readable NDJSON of the declared kind and size) before
//! anything is compiled. Answers reach stdout line by line while the parties run, labelled
//! `"party": N` when several parties print; a run that fails after printing answers ends stdout
//! with the trailer `{"complete": false, "answered": N, "error": "..."}` (README "Outputs").

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use irisc_runtime::manifest::Manifest;
use irisc_runtime::vocab::{InputRole, Protocol};

use crate::codegen::Emit;

use super::pipeline;

pub struct RunOptions {
    pub program: PathBuf,
    /// `NAME=FILE` plaintext NDJSON per input.
    pub inputs: Vec<String>,
    /// Shorthands for the only gallery / query input.
    pub db: Option<PathBuf>,
    pub query: Option<PathBuf>,
    /// What the compiler is told to choose (sharing, variant, precision); the shares follow.
    pub plan: crate::analysis::plan::PlanOptions,
    pub work: Option<PathBuf>,
    pub threads: usize,
    /// Records per chunk of the gallery scan (`None`: the party's default).
    pub record_chunk: Option<usize>,
    pub timeout: f64,
    pub check: bool,
    /// The backend of the parties' executable.
    pub target: crate::codegen::Target,
}

/// Three consecutive free TCP ports on loopback ([`free_base_port_for`]).
pub fn free_base_port() -> Result<u16> {
    free_base_port_for(3)
}

/// `n` consecutive TCP ports free on loopback now, for a local all-in-one run: drawn at random
/// from 10 000-19 999, below the system's ephemeral range (32 768 on Linux, 49 152 elsewhere),
/// where no outgoing connection (of this run or another program) is given one of them before
/// the parties listen, and a party dialling a peer not yet listening cannot be connected to
/// itself; from the ephemeral range only if none is free. (The end-to-end tests take fixed
/// ports from 20 000 up, so a local run beside them does not draw theirs.)
pub fn free_base_port_for(n: u16) -> Result<u16> {
    use rand::Rng;
    use std::net::TcpListener;
    let free = |base: u16| (0..n).all(|i| TcpListener::bind(("127.0.0.1", base + i)).is_ok());
    let (ephemeral_low, _) = ephemeral_ports().unwrap_or((32768, 60999));
    let (lo, hi) = (
        10_000u16.min(ephemeral_low / 2),
        20_000u16.min(ephemeral_low).saturating_sub(n),
    );
    let mut rng = rand::rng();
    for _ in 0..200 {
        if lo >= hi {
            break;
        }
        let base = rng.random_range(lo..hi);
        if free(base) {
            return Ok(base);
        }
    }
    for _ in 0..200 {
        let base = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        if base <= u16::MAX - n && free(base) {
            return Ok(base);
        }
    }
    bail!("found no {n} consecutive free ports on 127.0.0.1")
}

/// The range the system gives outgoing connections their local ports from (Linux's
/// `ip_local_port_range`); `None` where it cannot be read.
fn ephemeral_ports() -> Option<(u16, u16)> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let mut it = text.split_whitespace().map(|w| w.parse::<u16>().ok());
    Some((it.next()??, it.next()??))
}

pub fn run(opts: &RunOptions) -> Result<ExitCode> {
    let started = Instant::now();
    // Cheap checks first: a missing file is reported before the program is even read.
    check_given_files(opts)?;
    let checked = pipeline::read_and_check(&opts.program)?;
    let planned = pipeline::plan(&checked, &opts.plan)?;
    // Every input must have a readable file before anything is built.
    let manifest = super::dealer::share::program_manifest(&checked, &planned)?;
    let files = plaintext_files(opts, &manifest)?;
    let plain = plain_inputs(&manifest, &files)?;
    if let Some((spec, _)) = manifest
        .inputs
        .iter()
        .zip(&plain)
        .find(|(s, p)| s.role == InputRole::Query && p.is_empty())
    {
        bail!(
            "query input `{}` ({}) holds no records: give at least one query",
            spec.name,
            files[manifest.input_index(&spec.name).unwrap_or(0)].display()
        );
    }
    let temp;
    let work: &Path = match &opts.work {
        Some(w) => {
            std::fs::create_dir_all(w).with_context(|| format!("cannot create {}", w.display()))?;
            w
        }
        None => {
            temp = tempfile::Builder::new().prefix("irisc-run-").tempdir()?;
            temp.path()
        }
    };

    let exe = work.join(checked.program.name.clone());
    let (_, compile_time) = pipeline::compile_for(
        &checked,
        &planned,
        Emit::Exe,
        Some(exe.clone()),
        false,
        opts.target,
    )?;
    eprintln!(
        "compiled {} in {:.2} s",
        opts.program.display(),
        compile_time.as_secs_f64()
    );

    let keys = work.join("keys");
    let config = super::keys::generate_keys(&keys, free_base_port()?, true)?;
    let shares = work.join("shares");
    let specs = super::dealer::share::input_specs(&manifest);
    let mut party_args: [Vec<String>; 3] = Default::default();
    for (spec, file) in specs.iter().zip(&files) {
        let paths = super::dealer::share::input_paths(&shares, &spec.name);
        let paths = if super::dealer::store::is_store_input(spec) {
            super::dealer::store::share_to_stores(&manifest.fingerprint, spec, file, paths)?
        } else {
            super::dealer::share::share_input_to(spec, None, file, paths)?
        };
        for (args, path) in party_args.iter_mut().zip(&paths) {
            args.push("--input".into());
            args.push(format!("{}={}", spec.name, path.display()));
        }
    }

    if planned.plan.protocol == Protocol::Beaver {
        let stores = preprocess_beaver(&checked, &planned, &manifest, &plain, work, &config, opts)?;
        for (args, store) in party_args.iter_mut().zip(&stores) {
            args.push("--preprocessing".into());
            args.push(store.display().to_string());
        }
    }

    let run_started = Instant::now();
    let mut extra = vec![
        "--threads".to_string(),
        opts.threads.to_string(),
        "--timeout".to_string(),
        opts.timeout.to_string(),
    ];
    if let Some(n) = opts.record_chunk {
        extra.extend(["--record-chunk".to_string(), n.to_string()]);
    }
    let mut output_parties: Vec<usize> = checked.program.reveals.iter().map(|r| r.to).collect();
    output_parties.sort_unstable();
    output_parties.dedup();
    let mut relay = AnswerRelay::new(output_parties.len() > 1);
    let outcome = launch_parties_relaying(
        &exe,
        [config.as_path(); 3],
        &party_args,
        &extra,
        Duration::from_secs_f64(opts.timeout * 3.0 + 60.0),
        &mut |line| relay.line(line),
    )?;
    let took = run_started.elapsed();

    if let Some(error) = failures(&outcome) {
        relay.finish_incomplete(&error);
        bail!("{error} (see the parties' messages above)");
    }
    eprintln!(
        "three parties answered in {:.3} s ({:.3} s in all, with build, keys and sharing)",
        took.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );

    if opts.check {
        let expected = super::plaintext::answers(&checked.program, &planned.plan, &plain)?;
        // Each output party prints its own objects; compare party by party.
        for (party, o) in outcome.iter().enumerate() {
            let got: Vec<serde_json::Value> = o
                .stdout
                .lines()
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()?;
            let want = expected.get(&party).cloned().unwrap_or_default();
            if want != got {
                bail!(
                    "party {party}'s answers differ from the plaintext definition\n  mpc:   {}\n  plain: {}",
                    serde_json::to_string(&got)?,
                    serde_json::to_string(&want)?
                );
            }
        }
        eprintln!("checked: the answers equal the plaintext definition of the program");
    }
    Ok(ExitCode::SUCCESS)
}

/// The preprocessing phase of a `beaver` program on this host (the local all-in-one run): the
/// reveals' circuit written next to the executable, then `irisc circuit preprocess` as three
/// processes over the run's TLS links, one lane per gallery record and one execution per
/// query. Returns each party's store.
fn preprocess_beaver(
    checked: &pipeline::Checked,
    planned: &pipeline::Planned,
    manifest: &Manifest,
    plain: &[super::plaintext::PlainInput],
    work: &Path,
    config: &Path,
    opts: &RunOptions,
) -> Result<Vec<PathBuf>> {
    let Some(beaver) = &planned.plan.beaver else {
        bail!(
            "{}: the beaver program has no circuit",
            checked.path.display()
        );
    };
    let file = work.join(format!("{}.circ", checked.program.name));
    irisc_runtime::beaver::party::write_circuit(&file, &beaver.circuit)
        .with_context(|| format!("cannot write {}", file.display()))?;
    let count = |role: InputRole| -> Vec<usize> {
        manifest
            .inputs
            .iter()
            .zip(plain)
            .filter(|(spec, _)| spec.role == role)
            .map(|(_, p)| p.len())
            .collect()
    };
    // One lane per record of the gallery the circuit's lanes are (zipped galleries have equal
    // counts; the parties check).
    let lanes = plain.get(beaver.lanes_input).map_or(0, |p| p.len());
    let queries = count(InputRole::Query).into_iter().max().unwrap_or(0);
    if lanes == 0 {
        bail!("the beaver protocol evaluates one lane per gallery record: the gallery is empty");
    }
    let pre = work.join("preprocessing");
    std::fs::create_dir_all(&pre).with_context(|| format!("cannot create {}", pre.display()))?;
    let stores: Vec<PathBuf> = (0..3).map(|p| pre.join(format!("party{p}.pre"))).collect();
    let party_args: [Vec<String>; 3] = std::array::from_fn(|p| {
        vec![
            "--circuit".into(),
            file.display().to_string(),
            "--lanes".into(),
            lanes.to_string(),
            "--executions".into(),
            queries.to_string(),
            "-o".into(),
            stores[p].display().to_string(),
        ]
    });
    let started = Instant::now();
    let exe = std::env::current_exe().context("cannot find the irisc executable")?;
    let lead = ["circuit".to_string(), "preprocess".to_string()];
    let outcome = launch_command(
        &exe,
        &lead,
        [config; 3],
        &party_args,
        &[],
        &[],
        Duration::from_secs_f64(opts.timeout * 3.0 + 600.0),
        &mut |_| {},
    )?;
    if let Some(error) = failures(&outcome) {
        bail!("the beaver preprocessing failed: {error}");
    }
    let report: serde_json::Value = serde_json::from_str(outcome[0].stdout.trim())
        .context("the preprocessing report of party 0")?;
    eprintln!(
        "preprocessed {queries} executions x {lanes} lanes for the beaver protocol in {:.2} s: {} triples, {} mask bits, {} bytes sent per party",
        started.elapsed().as_secs_f64(),
        report["triples"],
        report["mask_bits"],
        report["bytes_sent"],
    );
    Ok(stores)
}

/// Every file named by `--db`, `--query` or `--input NAME=FILE` exists and is a file.
fn check_given_files(opts: &RunOptions) -> Result<()> {
    let mut given: Vec<(String, PathBuf)> = Vec::new();
    for arg in &opts.inputs {
        let (name, path) = super::dealer::share::parse_input_arg(arg)?;
        given.push((format!("--input {name}="), path));
    }
    for (flag, path) in [("--db ", &opts.db), ("--query ", &opts.query)] {
        if let Some(p) = path {
            given.push((flag.to_string(), p.clone()));
        }
    }
    for (flag, path) in given {
        match std::fs::metadata(&path) {
            Ok(m) if m.is_file() => {}
            Ok(_) => bail!("{flag}{}: not a file", path.display()),
            Err(e) => bail!("{flag}{}: cannot read: {e}", path.display()),
        }
    }
    Ok(())
}

/// Prints the parties' lines as they come: answers to stdout (with `"party": N` first when
/// several parties print), each flushed; stderr lines with their party. A party's own
/// incomplete-run trailer is not relayed: the run writes one trailer for all.
struct AnswerRelay {
    label_parties: bool,
    answered: u64,
}

impl AnswerRelay {
    fn new(label_parties: bool) -> AnswerRelay {
        AnswerRelay {
            label_parties,
            answered: 0,
        }
    }

    fn line(&mut self, line: PartyLine<'_>) {
        match line {
            PartyLine::Stderr { party, text } => {
                let _ = writeln!(std::io::stderr(), "  [party {party}] {text}");
            }
            PartyLine::Stdout { party, text } => {
                if is_trailer(text) {
                    return;
                }
                let text = if self.label_parties {
                    label_party(party, text)
                } else {
                    text.to_string()
                };
                // A closed stdout (`| head`) does not stop the run; the answers are dropped.
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{text}").and_then(|_| out.flush());
                self.answered += 1;
            }
        }
    }

    /// Marks what was printed as partial (stdout's last line); a run that failed before its
    /// first answer leaves stdout empty, as the parties do.
    fn finish_incomplete(&mut self, error: &str) {
        if self.answered == 0 {
            return;
        }
        let mut out = std::io::stdout().lock();
        let trailer = irisc_runtime::party::incomplete_trailer(self.answered, error);
        let _ = writeln!(out, "{trailer}").and_then(|_| out.flush());
    }
}

/// Whether `line` is a party's `{"complete": false, ...}` trailer rather than an answer.
fn is_trailer(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line)
        .is_ok_and(|v| v.get("complete").is_some() && v.get("query").is_none())
}

/// `{"query":0,...}` from party 1 -> `{"party":1,"query":0,...}`: the party prints compact
/// objects, and `party` names no output (a reserved field).
fn label_party(party: usize, line: &str) -> String {
    match line.strip_prefix('{') {
        Some(rest) if rest.trim_start().starts_with('}') => format!("{{\"party\":{party}}}"),
        Some(rest) => format!("{{\"party\":{party},{rest}"),
        None => line.to_string(),
    }
}

/// Why the run failed: each failed party's cause, in the order their ends were seen (the one
/// that failed first, then those that failed because of it or were stopped); `None` if all
/// succeeded.
pub(crate) fn failures(outcome: &[Outcome]) -> Option<String> {
    let mut failed: Vec<usize> = (0..outcome.len())
        .filter(|&p| !outcome[p].success)
        .collect();
    failed.sort_by_key(|&p| outcome[p].ended);
    let causes: Vec<String> = failed.iter().map(|&p| outcome[p].cause(p)).collect();
    (!causes.is_empty()).then(|| causes.join("; "))
}

/// The plaintext file of every manifest input, in manifest order, from `--input NAME=FILE`,
/// `--db` and `--query`; errors name a missing input and the flag to give it.
pub fn plaintext_files(opts: &RunOptions, manifest: &Manifest) -> Result<Vec<PathBuf>> {
    let mut files: Vec<Option<PathBuf>> = vec![None; manifest.inputs.len()];
    let mut set = |i: usize, p: PathBuf| -> Result<()> {
        if files[i].replace(p).is_some() {
            bail!("input `{}` is given twice", manifest.inputs[i].name);
        }
        Ok(())
    };
    for arg in &opts.inputs {
        let (name, path) = super::dealer::share::parse_input_arg(arg)?;
        super::dealer::share::find_input(manifest, &name)?;
        set(manifest.input_index(&name).unwrap_or(0), path)?;
    }
    for (flag, role, given) in [
        ("--db", InputRole::Gallery, &opts.db),
        ("--query", InputRole::Query, &opts.query),
    ] {
        let Some(p) = given else { continue };
        let of_role = manifest.inputs_with(role);
        if of_role.len() != 1 {
            bail!(
                "{flag} is for programs with exactly one {role} input, but this one has {}: use --input NAME=FILE for each",
                of_role.len()
            );
        }
        set(of_role[0], p.clone())?;
    }
    files
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            f.ok_or_else(|| {
                let spec = &manifest.inputs[i];
                // The shorthand when the program allows it, as the issue-2 command line has it.
                let flag = match spec.role {
                    InputRole::Query if manifest.inputs_with(spec.role).len() == 1 => {
                        "--query FILE.ndjson".to_string()
                    }
                    InputRole::Gallery if manifest.inputs_with(spec.role).len() == 1 => {
                        "--db FILE.ndjson".to_string()
                    }
                    _ => format!("--input {}=FILE.ndjson", spec.name),
                };
                anyhow::anyhow!(
                    "no plaintext file for {} input `{}`: pass {flag}",
                    spec.role,
                    spec.name,
                )
            })
        })
        .collect()
}

/// How one party process ended: its exit status and everything it printed.
pub struct Outcome {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
    /// When it ended (or was stopped).
    pub ended: Instant,
    /// How it ended, in words: "exited with status 1", "was killed by signal 9", ...
    pub how: String,
}

impl Outcome {
    /// Why party `party` failed: its last error line, else how it ended.
    pub fn cause(&self, party: usize) -> String {
        let error = self.stderr.lines().rev().find(|l| l.contains("error"));
        match error.map(str::trim) {
            Some(line) if line.contains(&format!("party {party}")) => line.to_string(),
            Some(line) => format!("party {party}: {line}"),
            None => format!("party {party} {} without an error message", self.how),
        }
    }
}

/// One line a party printed, as it arrives.
#[derive(Debug, Clone, Copy)]
pub enum PartyLine<'a> {
    Stdout { party: usize, text: &'a str },
    Stderr { party: usize, text: &'a str },
}

/// Starts party 0, 1 and 2 of `exe` with `--party N --config CONFIGS[N]`, `party_args[N]` and
/// `extra`, and waits for all three (at most `limit`; see [`wait_all`]).
pub fn launch_parties(
    exe: &Path,
    configs: [&Path; 3],
    party_args: &[Vec<String>; 3],
    extra: &[String],
    limit: Duration,
) -> Result<Vec<Outcome>> {
    launch_parties_relaying(exe, configs, party_args, extra, limit, &mut |_| {})
}

/// [`launch_parties`], handing every line a party prints to `relay` as soon as it arrives.
pub fn launch_parties_relaying(
    exe: &Path,
    configs: [&Path; 3],
    party_args: &[Vec<String>; 3],
    extra: &[String],
    limit: Duration,
    relay: &mut dyn FnMut(PartyLine<'_>),
) -> Result<Vec<Outcome>> {
    launch_command(exe, &[], configs, party_args, extra, &[], limit, relay)
}

/// [`launch_parties`] with `env` set in every party's environment (the GPU path's choices,
/// `IRISC_GPU_GEMM` and `IRISC_GPU_COMPARE`, for a benchmark that measures both).
pub fn launch_parties_with_env(
    exe: &Path,
    configs: [&Path; 3],
    party_args: &[Vec<String>; 3],
    extra: &[String],
    env: &[(String, String)],
    limit: Duration,
) -> Result<Vec<Outcome>> {
    launch_command(
        exe,
        &[],
        configs,
        party_args,
        extra,
        env,
        limit,
        &mut |_| {},
    )
}

/// [`launch_parties_relaying`] with `lead` before `--party` (a subcommand of `exe`).
#[allow(clippy::too_many_arguments)]
fn launch_command(
    exe: &Path,
    lead: &[String],
    configs: [&Path; 3],
    party_args: &[Vec<String>; 3],
    extra: &[String],
    env: &[(String, String)],
    limit: Duration,
    relay: &mut dyn FnMut(PartyLine<'_>),
) -> Result<Vec<Outcome>> {
    let mut children: Vec<Child> = Vec::new();
    for (party, args) in party_args.iter().enumerate() {
        let child = Command::new(exe)
            .args(lead)
            .arg("--party")
            .arg(party.to_string())
            .arg("--config")
            .arg(configs[party])
            .args(args)
            .args(extra)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", exe.display()));
        match child {
            Ok(c) => children.push(c),
            Err(e) => {
                for mut c in children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(e);
            }
        }
    }
    wait_all(children, limit, relay)
}

/// "exited with status 1" or "was killed by signal 9".
fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended".to_string(),
    }
}

/// Which stream a relayed line came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stream {
    Stdout,
    Stderr,
}

/// Reads `from` line by line into `lines`, tagged with its party and stream.
fn forward_lines(
    from: impl Read + Send + 'static,
    party: usize,
    stream: Stream,
    lines: mpsc::Sender<(usize, Stream, String)>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok) {
            if lines.send((party, stream, line)).is_err() {
                break;
            }
        }
    })
}

/// Waits for all parties, relaying their lines as they come; if one fails, the others are given
/// a moment and then stopped, so a run never hangs on a dead peer.
pub(crate) fn wait_all(
    mut children: Vec<Child>,
    limit: Duration,
    relay: &mut dyn FnMut(PartyLine<'_>),
) -> Result<Vec<Outcome>> {
    let (send, lines) = mpsc::channel();
    let mut readers = Vec::new();
    for (party, c) in children.iter_mut().enumerate() {
        let out = c.stdout.take().expect("piped");
        let err = c.stderr.take().expect("piped");
        readers.push(forward_lines(out, party, Stream::Stdout, send.clone()));
        readers.push(forward_lines(err, party, Stream::Stderr, send.clone()));
    }
    drop(send);
    let mut printed: Vec<(Vec<String>, Vec<String>)> = vec![Default::default(); children.len()];
    let mut take = |(party, stream, text): (usize, Stream, String)| {
        relay(match stream {
            Stream::Stdout => PartyLine::Stdout { party, text: &text },
            Stream::Stderr => PartyLine::Stderr { party, text: &text },
        });
        let (out, err) = &mut printed[party];
        match stream {
            Stream::Stdout => out.push(text),
            Stream::Stderr => err.push(text),
        }
    };
    let deadline = Instant::now() + limit;
    let mut status: Vec<Option<(bool, Instant, String)>> = vec![None; children.len()];
    let mut first_failure: Option<Instant> = None;
    while status.iter().any(|s| s.is_none()) {
        for (i, c) in children.iter_mut().enumerate() {
            if status[i].is_none() {
                if let Some(st) = c.try_wait()? {
                    status[i] = Some((st.success(), Instant::now(), describe_exit(st)));
                    if !st.success() && first_failure.is_none() {
                        first_failure = Some(Instant::now());
                    }
                }
            }
        }
        let give_up = Instant::now() > deadline
            || first_failure.is_some_and(|t| t.elapsed() > Duration::from_secs(5));
        if give_up {
            for (i, c) in children.iter_mut().enumerate() {
                if status[i].is_none() {
                    let _ = c.kill();
                    let _ = c.wait();
                    status[i] = Some((
                        false,
                        Instant::now(),
                        "was stopped by irisc run".to_string(),
                    ));
                }
            }
        }
        // Relay what arrived meanwhile; the wait doubles as the poll interval.
        if let Ok(line) = lines.recv_timeout(Duration::from_millis(20)) {
            take(line);
            while let Ok(line) = lines.try_recv() {
                take(line);
            }
        }
    }
    // The pipes close when the processes end (or their children do): the rest arrives now.
    for line in lines.iter() {
        take(line);
    }
    for r in readers {
        let _ = r.join();
    }
    Ok(printed
        .into_iter()
        .zip(status)
        .map(|((out, err), s)| {
            let (success, ended, how) =
                s.unwrap_or((false, Instant::now(), "was stopped".to_string()));
            let join = |v: Vec<String>| {
                let mut s = v.join("\n");
                if !s.is_empty() {
                    s.push('\n');
                }
                s
            };
            Outcome {
                success,
                stdout: join(out),
                stderr: join(err).trim_end_matches('\n').to_string(),
                ended,
                how,
            }
        })
        .collect())
}

/// The plaintext values of every input, as the oracle reads them: iris codes, embeddings
/// quantised exactly as `irisc share` quantises them, bits.
pub fn plain_inputs(
    manifest: &Manifest,
    files: &[PathBuf],
) -> Result<Vec<super::plaintext::PlainInput>> {
    use super::plaintext::PlainInput;
    use irisc_runtime::io::{ndjson, ndjson_values};
    use irisc_runtime::vocab::InputKind;
    manifest
        .inputs
        .iter()
        .zip(files)
        .map(|(spec, path)| {
            Ok(match spec.kind {
                InputKind::Iris => PlainInput::Iris(
                    ndjson::read_file_with_bits(path, spec.elements as usize)
                        .map_err(|e| anyhow::anyhow!("{} input `{}`: {e}", spec.role, spec.name))?
                        .into_iter()
                        .map(|r| (r.id, r.iris))
                        .collect(),
                ),
                InputKind::Embedding => PlainInput::Embedding(
                    ndjson_values::read_embeddings(path, Some(spec.elements as usize))
                        .map_err(|e| anyhow::anyhow!("{} input `{}`: {e}", spec.role, spec.name))?
                        .into_iter()
                        .map(|r| {
                            let v = r
                                .embedding
                                .iter()
                                .map(|&x| ndjson_values::quantise(x, spec.scale_bits))
                                .collect();
                            (r.id, v)
                        })
                        .collect(),
                ),
                InputKind::Bit => PlainInput::Bit(
                    ndjson_values::read_bits(path)
                        .map_err(|e| anyhow::anyhow!("{} input `{}`: {e}", spec.role, spec.name))?
                        .into_iter()
                        .map(|r| (r.id, r.bit))
                        .collect(),
                ),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ports are free, consecutive, and below the ephemeral range where the system states
    /// one (no outgoing connection can be handed one of them), and below the end-to-end tests'
    /// fixed ports.
    #[test]
    fn local_run_ports_are_free_and_below_the_ephemeral_range() {
        for n in [1u16, 2, 3] {
            let base = free_base_port_for(n).unwrap();
            let held: Vec<_> = (0..n)
                .map(|i| std::net::TcpListener::bind(("127.0.0.1", base + i)).unwrap())
                .collect();
            assert_eq!(held.len(), usize::from(n));
            if let Some((low, _)) = ephemeral_ports() {
                assert!(
                    base + n <= low,
                    "{base} + {n} reaches the ephemeral range from {low}"
                );
                if low >= 20_000 {
                    assert!(
                        (10_000..20_000).contains(&base),
                        "{base}: among the tests' ports"
                    );
                }
            }
        }
    }
}
