//! Argument definitions (clap) and dispatch to the subcommands.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use irisc_runtime::io::share_file::ShareKind;

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
    Llvm,
    Obj,
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
            Some(s) => Some(Sharing::parse(s).ok_or_else(|| anyhow::anyhow!("unknown sharing {s}"))?),
        };
        let variant = match self.variant.as_deref() {
            None => None,
            Some(v) => Some(Variant::parse(v).ok_or_else(|| anyhow::anyhow!("unknown variant {v}"))?),
        };
        Ok(PlanOptions {
            sharing,
            variant,
            precision_bits: self.precision,
        })
    }
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
    /// Generate synthetic iris codes (NDJSON): a gallery, or queries near a gallery.
    Gen {
        #[arg(long)]
        count: usize,
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
    /// Secret-share a gallery (--db) or queries (--query) into one file per party.
    Share {
        #[arg(long, conflicts_with = "query", required_unless_present = "query")]
        db: Option<PathBuf>,
        #[arg(long)]
        query: Option<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
        /// The program the shares are for (its ring is used).
        #[arg(long, conflicts_with = "ring")]
        program: Option<PathBuf>,
        /// The ring Z_2^k to share over, when no program is given.
        #[arg(long, default_value_t = 16)]
        ring: u32,
    },
    /// Build, key, share and run all three parties on this machine, and print the answers.
    Run {
        program: PathBuf,
        #[arg(long)]
        db: PathBuf,
        #[arg(long)]
        query: PathBuf,
        /// Keep the executable, keys and shares here (default: a temporary folder).
        #[arg(long)]
        work: Option<PathBuf>,
        /// Threads per party for the dot products.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Seconds a party waits for a peer.
        #[arg(long, default_value_t = 60.0)]
        timeout: f64,
        /// Also evaluate the plaintext definition and fail if the answers differ.
        #[arg(long)]
        check: bool,
    },
}

pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Build {
            program,
            output,
            emit,
            print_ir_after_all,
            plan,
        } => build(program, output, emit, print_ir_after_all, &plan),
        Command::Explain {
            program,
            json,
            records,
            plan,
        } => {
            let checked = pipeline::read_and_check(&program)?;
            let planned = pipeline::plan(&checked, &plan.options()?)?;
            use crate::analysis::explain_v2 as ex;
            if json {
                let v = ex::explain_program_json(&checked.program, &planned.plan, records);
                write_stdout(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
            } else {
                write_stdout(&ex::explain_program_text(&checked.program, &planned.plan, records))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Gen {
            count,
            seed,
            bits,
            near,
            ratio,
            output,
        } => {
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
            eprintln!("wrote {count} codes to {}", output.display());
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
            db,
            query,
            output,
            program,
            ring,
        } => {
            let ring = match program {
                Some(p) => pipeline::program_ring_bits(&pipeline::read_and_check(&p)?.program),
                None => ring,
            };
            if !(2..=64).contains(&ring) {
                bail!("--ring must be between 2 and 64, not {ring}");
            }
            let files = match (db, query) {
                (Some(db), None) => {
                    super::share::share_file(&db, &output, ShareKind::Gallery, ring, "db")?
                }
                (None, Some(q)) => {
                    super::share::share_file(&q, &output, ShareKind::Query, ring, "query")?
                }
                _ => bail!("give exactly one of --db and --query"),
            };
            for f in files {
                eprintln!("wrote {}", f.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run {
            program,
            db,
            query,
            work,
            threads,
            timeout,
            check,
        } => super::run::run(&super::run::RunOptions {
            program,
            db,
            query,
            work,
            threads,
            timeout,
            check,
        }),
    }
}

fn build(
    program: PathBuf,
    output: Option<PathBuf>,
    emit: Option<EmitArg>,
    print_ir_after_all: bool,
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
    let (artifact, took) =
        pipeline::compile(&checked, &planned, emit, output, print_ir_after_all)?;
    match artifact {
        Artifact::Text(text) => write_stdout(&text)?,
        Artifact::File(path) => {
            eprintln!("built {} in {:.2} s", path.display(), took.as_secs_f64());
            eprint!(
                "{}",
                crate::analysis::explain_v2::explain_program_text(&checked.program, &planned.plan, 1)
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
