//! `irisc run`: everything a user would do by hand, on this machine: build the program, create
//! keys, secret-share gallery and queries, start the three parties as separate processes that
//! talk over TLS on loopback, and print the output party's answers.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use irisc_runtime::manifest::Manifest;
use irisc_runtime::vocab::InputRole;

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
}

/// Three consecutive free TCP ports on loopback.
pub fn free_base_port() -> Result<u16> {
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
    let planned = pipeline::plan(&checked, &opts.plan)?;
    // Every input must have its file before anything is built.
    let manifest = super::dealer::share::program_manifest(&checked, &planned)?;
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
    let (_, compile_time) =
        pipeline::compile(&checked, &planned, Emit::Exe, Some(exe.clone()), false)?;
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
    let outcome = launch_parties(
        &exe,
        [config.as_path(); 3],
        &party_args,
        &extra,
        Duration::from_secs_f64(opts.timeout * 3.0 + 60.0),
    )?;
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
        let plain = plain_inputs(&manifest, &files)?;
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

/// How one party process ended: its exit status and everything it printed.
pub struct Outcome {
    pub success: bool,
    pub stdout: String,
    pub stderr: String,
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
    let mut children: Vec<Child> = Vec::new();
    for (party, args) in party_args.iter().enumerate() {
        let child = Command::new(exe)
            .arg("--party")
            .arg(party.to_string())
            .arg("--config")
            .arg(configs[party])
            .args(args)
            .args(extra)
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
    wait_all(children, limit)
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
                    ndjson::read_file(path)
                        .with_context(|| format!("reading {}", path.display()))?
                        .into_iter()
                        .map(|r| (r.id, r.iris))
                        .collect(),
                ),
                InputKind::Embedding => PlainInput::Embedding(
                    ndjson_values::read_embeddings(path, Some(spec.elements as usize))
                        .map_err(|e| anyhow::anyhow!("{e}"))?
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
                        .map_err(|e| anyhow::anyhow!("{e}"))?
                        .into_iter()
                        .map(|r| (r.id, r.bit))
                        .collect(),
                ),
            })
        })
        .collect()
}
