//! `irisc run`: everything a user would do by hand, on this machine: build the program, create
//! keys, secret-share gallery and queries, start the three parties as separate processes that
//! talk over TLS on loopback, and print the output party's answers.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use irisc_runtime::manifest::{InputRole, InputSharing, Manifest};

use crate::codegen::Emit;

use super::pipeline;

pub struct RunOptions {
    pub program: PathBuf,
    /// `NAME=FILE` plaintext NDJSON per input.
    pub inputs: Vec<String>,
    /// Shorthands for the only gallery / query input.
    pub db: Option<PathBuf>,
    pub query: Option<PathBuf>,
    /// Forces a sharing for every input (else the program's).
    pub sharing: Option<InputSharing>,
    pub work: Option<PathBuf>,
    pub threads: usize,
    pub timeout: f64,
    pub check: bool,
}

/// Three consecutive free TCP ports on loopback.
fn free_base_port() -> Result<u16> {
    use std::net::TcpListener;
    for _ in 0..200 {
        let base = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        if base > 65000 {
            continue;
        }
        if (1..3).all(|i| TcpListener::bind(("127.0.0.1", base + i)).is_ok()) {
            return Ok(base);
        }
    }
    bail!("found no three consecutive free ports on 127.0.0.1")
}

pub fn run(opts: &RunOptions) -> Result<ExitCode> {
    let started = Instant::now();
    let checked = pipeline::read_and_check(&opts.program)?;
    // Every input must have its file before anything is built.
    let manifest = super::share::program_manifest(&checked)?;
    let files = plaintext_files(opts, &manifest)?;
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
    let (_, compile_time) = pipeline::compile(&checked, Emit::Exe, Some(exe.clone()), false)?;
    eprintln!(
        "compiled {} in {:.2} s",
        opts.program.display(),
        compile_time.as_secs_f64()
    );

    let keys = work.join("keys");
    let config = super::keys::generate_keys(&keys, free_base_port()?, true)?;
    let shares = work.join("shares");
    let specs = super::share::input_specs(&manifest);
    let mut party_args: [Vec<String>; 3] = Default::default();
    for (spec, file) in specs.iter().zip(&files) {
        let paths = super::share::share_input(spec, opts.sharing, file, &shares)?;
        for (args, path) in party_args.iter_mut().zip(&paths) {
            args.push("--input".into());
            args.push(format!("{}={}", spec.name, path.display()));
        }
    }

    let run_started = Instant::now();
    let mut children: Vec<Child> = Vec::new();
    for party in 0..3 {
        let child = Command::new(&exe)
            .arg("--party")
            .arg(party.to_string())
            .arg("--config")
            .arg(&config)
            .args(&party_args[party])
            .arg("--threads")
            .arg(opts.threads.to_string())
            .arg("--timeout")
            .arg(opts.timeout.to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", exe.display()));
        match child {
            Ok(c) => children.push(c),
            Err(e) => {
                for mut c in children {
                    let _ = c.kill();
                }
                return Err(e);
            }
        }
    }
    let outcome = wait_all(children, Duration::from_secs_f64(opts.timeout * 3.0 + 60.0))?;
    let took = run_started.elapsed();

    let mut failed = false;
    for (party, o) in outcome.iter().enumerate() {
        for line in o.stderr.lines() {
            eprintln!("  [party {party}] {line}");
        }
        if !o.success {
            failed = true;
        }
    }
    if failed {
        bail!("a party failed (see its messages above)");
    }
    let answers: String = outcome.iter().map(|o| o.stdout.as_str()).collect();
    print!("{answers}");
    eprintln!(
        "three parties answered in {:.3} s ({:.3} s in all, with build, keys and sharing)",
        took.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );

    if opts.check {
        // The plaintext oracle covers programs with one gallery and one query input.
        let one = |role: InputRole| {
            let of_role = manifest.inputs_with(role);
            (of_role.len() == 1).then(|| files[of_role[0]].clone())
        };
        let (Some(db), Some(query)) = (one(InputRole::Gallery), one(InputRole::Query)) else {
            bail!("--check supports programs with exactly one gallery and one query input for now");
        };
        let expected = super::plain::answers(&checked.program, &db, &query)?;
        let got: Vec<serde_json::Value> = answers
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        if expected != got {
            bail!(
                "the three-party answers differ from the plaintext definition\n  mpc:   {}\n  plain: {}",
                serde_json::to_string(&got)?,
                serde_json::to_string(&expected)?
            );
        }
        eprintln!("checked: the answers equal the plaintext definition (Algorithm 1)");
    }
    Ok(ExitCode::SUCCESS)
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
        let (name, path) = super::share::parse_input_arg(arg)?;
        super::share::find_input(manifest, &name)?;
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
                anyhow::anyhow!(
                    "no plaintext file for {} input `{}`: pass --input {}=FILE.ndjson",
                    spec.role,
                    spec.name,
                    spec.name
                )
            })
        })
        .collect()
}

struct Outcome {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Waits for all parties; if one fails, the others are given a moment and then stopped, so a run
/// never hangs on a dead peer.
fn wait_all(mut children: Vec<Child>, limit: Duration) -> Result<Vec<Outcome>> {
    let readers: Vec<_> = children
        .iter_mut()
        .map(|c| {
            let mut out = c.stdout.take().expect("piped");
            let err = c.stderr.take().expect("piped");
            let o = std::thread::spawn(move || {
                let mut s = String::new();
                let _ = out.read_to_string(&mut s);
                s
            });
            let e = std::thread::spawn(move || {
                BufReader::new(err)
                    .lines()
                    .map_while(Result::ok)
                    .collect::<Vec<_>>()
                    .join("\n")
            });
            (o, e)
        })
        .collect();
    let deadline = Instant::now() + limit;
    let mut status: Vec<Option<bool>> = vec![None; children.len()];
    let mut first_failure: Option<Instant> = None;
    while status.iter().any(|s| s.is_none()) {
        for (i, c) in children.iter_mut().enumerate() {
            if status[i].is_none() {
                if let Some(st) = c.try_wait()? {
                    status[i] = Some(st.success());
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
                    status[i] = Some(false);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(readers
        .into_iter()
        .zip(status)
        .map(|((o, e), s)| Outcome {
            success: s.unwrap_or(false),
            stdout: o.join().unwrap_or_default(),
            stderr: e.join().unwrap_or_default(),
        })
        .collect())
}
