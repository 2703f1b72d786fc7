//! Argument definitions (clap) and dispatch to the subcommands.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use irisc_runtime::io::share_file::ShareKind;
use irisc_runtime::manifest::InputRole;

use crate::codegen::{Artifact, Emit};

use super::pipeline;

#[derive(Debug, Parser)]
#[command(
    name = "irisc",
    version,
    about = "Compiles .irs matching programs to native three-party MPC executables."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum EmitArg {
    Ast,
    Irs,
    Mpc,
    Schedule,
    Llvm,
    Obj,
}

/// The backend that generates the party code (`codegen::backend`).
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum TargetArg {
    /// The host CPU through LLVM.
    #[default]
    Cpu,
}

/// What the compiler may be told to choose instead of its cost model.
#[derive(Debug, Clone, Default, Args)]
pub struct PlanArgs {
    /// Sharing of the iris dot products: rep3 (replicated Z_2^k), fp (Shamir over F_p,
    /// p = 65519), gr2 / gr4 (Shamir over the Galois ring GR(2^16, d)). Default: the cheapest.
    #[arg(long, value_parser = ["rep3", "fp", "gr2", "gr4"])]
    pub sharing: Option<String>,
    /// Comparison variant of every fhd test: plain-mask (public masks), no-lift, const-lift,
    /// mpc-lift (secret masks). Default: the cheapest.
    #[arg(long, value_parser = ["plain-mask", "no-lift", "const-lift", "mpc-lift"])]
    pub variant: Option<String>,
    /// Bits of precision m of the secret-mask threshold a/b with b = 2^m (default 16, as deployed).
    #[arg(long)]
    pub precision: Option<u32>,
}

impl PlanArgs {
    pub fn options(&self) -> Result<crate::analysis::plan::PlanOptions> {
        use crate::analysis::plan::{PlanOptions, Sharing, Variant};
        let sharing = match self.sharing.as_deref() {
            None => None,
            Some(s) => {
                Some(Sharing::parse(s).ok_or_else(|| anyhow::anyhow!("unknown sharing {s}"))?)
            }
        };
        let variant = match self.variant.as_deref() {
            None => None,
            Some(v) => {
                Some(Variant::parse(v).ok_or_else(|| anyhow::anyhow!("unknown variant {v}"))?)
            }
        };
        Ok(PlanOptions {
            sharing,
            variant,
            precision_bits: self.precision,
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GenKind {
    Iris,
    Embedding,
    Bit,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a program to an executable that each party runs with `--party N`.
    Build {
        program: PathBuf,
        /// Output path (the executable, or the object with --emit=obj).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Stop after a stage and print it (ast, irs, mpc, llvm) or write it (obj).
        #[arg(long, value_enum)]
        emit: Option<EmitArg>,
        /// Print the MLIR module after every pass (to stderr).
        #[arg(long)]
        print_ir_after_all: bool,
        /// The backend that generates the party executable.
        #[arg(long, value_enum, default_value_t = TargetArg::Cpu)]
        target: TargetArg,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Show what the compiler chose (rings and why), what it costs, and what each party learns.
    Explain {
        program: PathBuf,
        #[arg(long)]
        json: bool,
        /// Records per query for the per-query totals (rounds do not depend on it).
        #[arg(long, default_value_t = 1)]
        records: u64,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Generate synthetic inputs (NDJSON): iris codes (a gallery, or queries near a gallery),
    /// speaker embeddings, or bits.
    Gen {
        /// What to generate.
        #[arg(long, value_enum, default_value_t = GenKind::Iris)]
        kind: GenKind,
        /// Records (iris, bit).
        #[arg(long, required_unless_present_any = ["speakers"])]
        count: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Bits per code (a multiple of 64).
        #[arg(long, default_value_t = 12800)]
        bits: u32,
        /// Make queries: a mix of near-duplicates of this gallery's records, edge cases and fresh codes.
        #[arg(long)]
        near: Option<PathBuf>,
        /// The match ratio that the queries' threshold edge cases sit at (with --near).
        #[arg(long, default_value = "0.345", requires = "near")]
        ratio: String,
        /// Embeddings: speakers 0..S (ids are speaker * 1000 + utterance).
        #[arg(long)]
        speakers: Option<usize>,
        /// Embeddings: utterances per speaker (at most 1000).
        #[arg(long, default_value_t = 1)]
        per_speaker: usize,
        /// Embeddings: dimension.
        #[arg(long, default_value_t = 192)]
        dim: usize,
        /// Embeddings: noise relative to the speaker direction (same-speaker cosine ≈ 1/(1+noise²)).
        #[arg(long, default_value_t = 0.5)]
        noise: f64,
        /// Embeddings: seeds the speakers' directions; keep it equal for a gallery and its queries.
        #[arg(long, default_value_t = 7)]
        voices: u64,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Create per-party TLS keys and certificates and a parties.toml for localhost.
    Keys {
        #[arg(short, long)]
        output: PathBuf,
        /// First of three consecutive TCP ports.
        #[arg(long, default_value_t = 7100)]
        base_port: u16,
        /// Replace existing keys.
        #[arg(long)]
        force: bool,
    },
    /// Secret-share inputs into one file per party: `--program P.irs --input NAME=FILE ...`
    /// writes DIR/p{0,1,2}/NAME.shares; `--db` / `--query` write DIR/db.p{0,1,2}.shr (rep3 iris).
    /// With --program, iris gallery inputs are written as gallery stores (durable, memory-mapped
    /// by the parties, appendable with `irisc enroll`); other inputs as share files.
    Share {
        /// Input NAME of the program from the NDJSON FILE (repeatable; needs --program).
        #[arg(long = "input", value_name = "NAME=FILE", requires = "program")]
        inputs: Vec<String>,
        #[arg(long, conflicts_with = "query")]
        db: Option<PathBuf>,
        #[arg(long)]
        query: Option<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
        /// The program the shares are for (its inputs' kinds, sharings and rings are used).
        #[arg(long, conflicts_with = "ring")]
        program: Option<PathBuf>,
        /// The ring Z_2^k to share over, when no program is given.
        #[arg(long, default_value_t = 16)]
        ring: u32,
        /// The choices the program is compiled with (the shares must match them).
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Append new records to a gallery's three stores (made by `irisc share --program P.irs`):
    /// deals shares of the records for the same program and build choices and appends them
    /// durably to DIR/db.p{0,1,2}.shr (--db) or DIR/p{0,1,2}/NAME.shares (--input NAME=FILE).
    /// Ids must be new. An interrupted enroll leaves each store with its old or its new records.
    Enroll {
        program: PathBuf,
        /// The new records (NDJSON), for programs with one gallery input.
        #[arg(long, conflicts_with = "input", required_unless_present = "input")]
        db: Option<PathBuf>,
        /// Gallery input NAME's new records from the NDJSON FILE.
        #[arg(long = "input", value_name = "NAME=FILE")]
        input: Option<String>,
        /// The folder `irisc share -o` wrote the stores into.
        #[arg(long)]
        store: PathBuf,
        /// If the three stores disagree (an earlier enroll reached only some of them), first
        /// cut them back to the records all three hold.
        #[arg(long)]
        roll_back: bool,
        /// The choices the program is built with (the stores were shared with them).
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Rewrite a gallery store's damaged or stale header slot from its intact mirror (after a
    /// power loss during a commit, or disk damage to one slot); loses no committed record.
    Repair {
        /// The stores to repair.
        #[arg(required = true)]
        stores: Vec<PathBuf>,
    },
    /// Build, key, share and run all three parties on this machine, and print the answers.
    Run {
        program: PathBuf,
        /// Input NAME of the program from the NDJSON FILE (repeatable).
        #[arg(long = "input", value_name = "NAME=FILE")]
        inputs: Vec<String>,
        /// The gallery, for programs with one gallery input.
        #[arg(long)]
        db: Option<PathBuf>,
        /// The queries, for programs with one query input.
        #[arg(long)]
        query: Option<PathBuf>,
        #[command(flatten)]
        plan: PlanArgs,
        /// Keep the executable, keys and shares here (default: a temporary folder).
        #[arg(long)]
        work: Option<PathBuf>,
        /// Threads per party for the dot products.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Records per chunk of each party's gallery scan (the next chunk's dot products run
        /// while this chunk's comparisons wait on the network); 0, the parties' default: the
        /// whole gallery at once.
        #[arg(long, value_name = "N")]
        record_chunk: Option<usize>,
        /// Seconds a party waits for a peer.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// Also evaluate the plaintext definition and fail if the answers differ.
        #[arg(long)]
        check: bool,
    },
    /// Measure the generated kernels and the runtime; writes DIR/<section>.json and PNG charts.
    Bench {
        /// Folder for the reports and charts.
        #[arg(long, default_value = "bench-out")]
        out: PathBuf,
        /// Sections to run, comma-separated (default: all). Known: dot, table2, e2e.
        #[arg(long, value_delimiter = ',')]
        sections: Vec<String>,
        /// Tiny sizes and short timings (checks the pipeline; the figures mean little).
        #[arg(long)]
        quick: bool,
        /// Gallery records of the end-to-end section (default 100 000).
        #[arg(long)]
        records: Option<usize>,
    },
}

pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Build {
            program,
            output,
            emit,
            print_ir_after_all,
            target,
            plan,
        } => build(program, output, emit, print_ir_after_all, target, &plan),
        Command::Explain {
            program,
            json,
            records,
            plan,
        } => {
            let checked = pipeline::read_and_check(&program)?;
            let planned = pipeline::plan(&checked, &plan.options()?)?;
            use crate::analysis::explain as ex;
            if json {
                let v = ex::explain_program_json_with_source(
                    &checked.program,
                    &planned.plan,
                    records,
                    Some(&checked.source),
                );
                write_stdout(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
            } else {
                write_stdout(&ex::explain_program_text_with_source(
                    &checked.program,
                    &planned.plan,
                    records,
                    Some(&checked.source),
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Gen {
            kind,
            count,
            seed,
            bits,
            near,
            ratio,
            speakers,
            per_speaker,
            dim,
            noise,
            voices,
            output,
        } => {
            let need_count =
                || count.ok_or_else(|| anyhow::anyhow!("--count is required for --kind {kind:?}"));
            let written = match kind {
                GenKind::Iris => {
                    let count = need_count()?;
                    match near {
                        Some(db) => {
                            let Some(r) = crate::sema::consts::parse_decimal(&ratio) else {
                                bail!("--ratio {ratio:?} is not a decimal ratio such as 0.345");
                            };
                            let opts = super::gen::QueryOptions {
                                ratio: (r.num, r.den),
                                ..Default::default()
                            };
                            super::gen::write_queries_with(&output, &db, count, seed, &opts)?
                        }
                        None => super::gen::write_gallery(&output, count, seed, bits as usize)?,
                    }
                    format!("{count} codes")
                }
                GenKind::Embedding => {
                    let Some(speakers) = speakers else {
                        bail!("--kind embedding needs --speakers S (and --per-speaker N)");
                    };
                    let opts = super::gen_values::EmbeddingOptions {
                        speakers,
                        per_speaker,
                        dim,
                        noise,
                        seed,
                        voices,
                    };
                    let recs = super::gen_values::generate_embeddings(&opts)?;
                    irisc_runtime::io::ndjson_values::write_embeddings(&output, &recs)
                        .map_err(anyhow::Error::msg)?;
                    format!("{} embeddings", recs.len())
                }
                GenKind::Bit => {
                    let recs = super::gen_values::generate_bits(need_count()?, seed);
                    irisc_runtime::io::ndjson_values::write_bits(&output, &recs)
                        .map_err(anyhow::Error::msg)?;
                    format!("{} bits", recs.len())
                }
            };
            eprintln!("wrote {written} to {}", output.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Keys {
            output,
            base_port,
            force,
        } => {
            let toml = super::keys::generate_keys(&output, base_port, force)?;
            eprintln!("wrote keys and {}", toml.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Share {
            inputs,
            db,
            query,
            output,
            program,
            ring,
            plan,
        } => {
            let manifest = match &program {
                Some(p) => {
                    let checked = pipeline::read_and_check(p)?;
                    let planned = pipeline::plan(&checked, &plan.options()?)?;
                    Some(super::share::program_manifest(&checked, &planned)?)
                }
                None => None,
            };
            let mut written = Vec::new();
            if !inputs.is_empty() {
                let manifest = manifest
                    .as_ref()
                    .ok_or_else(|| anyhow::anyhow!("--input needs --program"))?;
                let specs = super::share::input_specs(manifest);
                for arg in &inputs {
                    let (name, file) = super::share::parse_input_arg(arg)?;
                    let spec = specs
                        .iter()
                        .find(|s| s.name == name)
                        .map(Ok)
                        .unwrap_or_else(|| super::share::find_input(manifest, &name))?;
                    let paths = super::share::input_paths(&output, &spec.name);
                    written.extend(if super::store::is_store_input(spec) {
                        super::store::share_to_stores(&manifest.fingerprint, spec, &file, paths)?
                    } else {
                        super::share::share_input_to(spec, None, &file, paths)?
                    });
                }
            } else if db.is_none() && query.is_none() {
                bail!("give the inputs to share: --program P.irs --input NAME=FILE (repeatable), or --db / --query");
            }
            if db.is_some() || query.is_some() {
                // With a program: the sharing and ring of its only gallery / query input.
                let spec_for =
                    |role: InputRole| -> Result<Option<&irisc_runtime::manifest::ManifestInput>> {
                        let Some(m) = &manifest else { return Ok(None) };
                        let of_role = m.inputs_with(role);
                        let [i] = of_role[..] else {
                            bail!("--db / --query are for programs with one gallery and one query input; use --input NAME=FILE");
                        };
                        Ok(Some(&m.inputs[i]))
                    };
                if !(2..=64).contains(&ring) {
                    bail!("--ring must be between 2 and 64, not {ring}");
                }
                for (file, role, kind, stem) in [
                    (&db, InputRole::Gallery, ShareKind::Gallery, "db"),
                    (&query, InputRole::Query, ShareKind::Query, "query"),
                ] {
                    let Some(file) = file else { continue };
                    let paths = super::share::share_paths(&output, stem);
                    written.extend(match spec_for(role)? {
                        Some(spec) if super::store::is_store_input(spec) => {
                            let fingerprint = manifest
                                .as_ref()
                                .map(|m| m.fingerprint.clone())
                                .unwrap_or_default();
                            super::store::share_to_stores(&fingerprint, spec, file, paths)?
                        }
                        Some(spec) => super::share::share_input_to(spec, None, file, paths)?,
                        None => super::share::share_file(file, &output, kind, ring, stem)?,
                    });
                }
            }
            for f in written {
                eprintln!("wrote {}", f.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Repair { stores } => {
            for path in &stores {
                let header = irisc_runtime::store::repair(path)?;
                irisc_runtime::store::Store::open(path)?;
                eprintln!("{}: intact, {} records", path.display(), header.count);
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Enroll {
            program,
            db,
            input,
            store,
            roll_back,
            plan,
        } => {
            let checked = pipeline::read_and_check(&program)?;
            let planned = pipeline::plan(&checked, &plan.options()?)?;
            let manifest = super::share::program_manifest(&checked, &planned)?;
            let (spec, file, paths) = match (&db, &input) {
                (Some(file), _) => {
                    let of_role = manifest.inputs_with(InputRole::Gallery);
                    let [i] = of_role[..] else {
                        bail!("--db is for programs with one gallery input; use --input NAME=FILE");
                    };
                    let spec = &manifest.inputs[i];
                    (spec, file.clone(), super::share::share_paths(&store, "db"))
                }
                (None, Some(arg)) => {
                    let (name, file) = super::share::parse_input_arg(arg)?;
                    let spec = super::share::find_input(&manifest, &name)?;
                    (spec, file, super::share::input_paths(&store, &spec.name))
                }
                (None, None) => bail!("give the new records: --db FILE or --input NAME=FILE"),
            };
            let done = super::store::enroll(&manifest.fingerprint, spec, &file, &paths, roll_back)?;
            if let Some(n) = done.rolled_back {
                eprintln!("rolled the three stores back to their {n} common records");
            }
            for p in &paths {
                eprintln!(
                    "appended {} records to {} (now {})",
                    done.appended,
                    p.display(),
                    done.count
                );
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            program,
            inputs,
            db,
            query,
            plan,
            work,
            threads,
            record_chunk,
            timeout,
            check,
        } => super::run::run(&super::run::RunOptions {
            program,
            inputs,
            db,
            query,
            plan: plan.options()?,
            work,
            threads,
            record_chunk,
            timeout,
            check,
        }),
        Command::Bench {
            out,
            sections,
            quick,
            records,
        } => {
            let files = crate::bench::run(&crate::bench::BenchOptions {
                out,
                sections,
                quick,
                progress: true,
                records,
            })?;
            for f in files {
                println!("{}", f.display());
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn build(
    program: PathBuf,
    output: Option<PathBuf>,
    emit: Option<EmitArg>,
    print_ir_after_all: bool,
    target: TargetArg,
    plan: &PlanArgs,
) -> Result<ExitCode> {
    let checked = pipeline::read_and_check(&program)?;
    let planned = pipeline::plan(&checked, &plan.options()?)?;
    let emit = match emit {
        Some(EmitArg::Ast) => {
            let ast = crate::syntax::parse(&checked.source).map_err(|d| {
                anyhow::anyhow!(crate::syntax::render(
                    &program.display().to_string(),
                    &checked.source,
                    &[d],
                    false
                ))
            })?;
            write_stdout(&crate::syntax::print_tree(&ast, &checked.source))?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(EmitArg::Irs) => Emit::Irs,
        Some(EmitArg::Mpc) => Emit::Mpc,
        Some(EmitArg::Schedule) => Emit::Schedule,
        Some(EmitArg::Llvm) => Emit::Llvm,
        Some(EmitArg::Obj) => Emit::Obj,
        None => Emit::Exe,
    };
    let default_out = || {
        let stem = program
            .file_stem()
            .map(|s| s.to_os_string())
            .unwrap_or_else(|| "a.out".into());
        let mut p = PathBuf::from(stem);
        if matches!(emit, Emit::Obj) {
            p.set_extension("o");
        }
        p
    };
    let output = match emit {
        Emit::Exe | Emit::Obj => Some(output.unwrap_or_else(default_out)),
        _ => output,
    };
    let target = match target {
        TargetArg::Cpu => crate::codegen::Target::Cpu,
    };
    let (artifact, took) =
        pipeline::compile_for(&checked, &planned, emit, output, print_ir_after_all, target)?;
    match artifact {
        Artifact::Text(text) => write_stdout(&text)?,
        Artifact::File(path) => {
            eprintln!("built {} in {:.2} s", path.display(), took.as_secs_f64());
            eprint!(
                "{}",
                crate::analysis::explain::explain_program_text_with_source(
                    &checked.program,
                    &planned.plan,
                    1,
                    Some(&checked.source),
                )
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes a stage or report to stdout. A reader that closes the pipe early (`| head`) is not an
/// error: the rest is simply not wanted.
fn write_stdout(text: &str) -> Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
