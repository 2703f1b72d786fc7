//! `irisc build`: compile a program to the executable each party runs, or stop after a stage
//! and print it (`--emit ast|irs|mpc|schedule|llvm`) or write it (`--emit obj`).
//!
//! The stages themselves are [`super::pipeline`]'s; this module picks the output path and
//! reports what was built and what the compiler chose.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::ValueEnum;

use crate::analysis::explain as ex;
use crate::analysis::plan::PlanOptions;
use crate::codegen::{Artifact, Emit, Target};

use super::{pipeline, write_stdout};

/// The stage `--emit` stops after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Stage {
    Ast,
    Irs,
    Mpc,
    Schedule,
    Llvm,
    /// The PTX module of the GPU kernels (`--target cuda`).
    Ptx,
    Obj,
    /// The boolean circuit of every reveal's decision for one record and one query, in the
    /// form the `beaver` family evaluates (`irisc circuit explain|preprocess|run`).
    Circuit,
}

/// What `irisc build` says on stderr once the executable or object is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Report {
    /// One line: the program, each comparison's variant and sharing, rounds, the file written.
    #[default]
    Summary,
    /// The whole `irisc explain` text (`--explain`).
    Explain,
    /// Nothing (`--quiet`).
    Quiet,
}

/// Builds `program` (to `output`, or next to the working folder under the program's name).
pub fn build(
    program: &Path,
    output: Option<PathBuf>,
    stage: Option<Stage>,
    print_ir_after_all: bool,
    target: Target,
    plan: &PlanOptions,
    report: Report,
) -> Result<ExitCode> {
    let checked = pipeline::read_and_check(program)?;
    if plan.protocol == Some(irisc_runtime::vocab::Protocol::Fss2) {
        // The shape the family runs, refused at the source with a caret when it does not fit.
        super::fss2::of_checked(&checked)?;
    }
    let planned = pipeline::plan(&checked, plan)?;
    let emit = match stage {
        Some(Stage::Ast) => {
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
        Some(Stage::Circuit) => {
            // Under `--protocol beaver`, the circuit the executable runs (as `irs-to-mpc` built
            // it); otherwise the analysis' circuit of the reveals.
            let c = match &planned.plan.beaver {
                Some(b) => b.circuit.clone(),
                None => crate::analysis::circuit::lower::program_circuit(
                    &checked.program,
                    &planned.plan,
                )
                .map_err(|e| anyhow::anyhow!("{}: {e}", program.display()))?,
            };
            let out = output.unwrap_or_else(|| {
                PathBuf::from(program.file_stem().unwrap_or_default()).with_extension("circ")
            });
            irisc_runtime::beaver::party::write_circuit(&out, &c)
                .map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
            if report != Report::Quiet {
                eprintln!(
                    "wrote {}: {} inputs, {} outputs, {} conditionals, {} triples on the longest path ({} naive)",
                    out.display(),
                    c.num_inputs(),
                    c.num_outputs(),
                    c.conditionals(),
                    c.needed_triples(),
                    c.naive_triples()
                );
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Stage::Irs) => Emit::Irs,
        Some(Stage::Mpc) => Emit::Mpc,
        Some(Stage::Schedule) => Emit::Schedule,
        Some(Stage::Llvm) => Emit::Llvm,
        Some(Stage::Ptx) => Emit::Ptx,
        Some(Stage::Obj) => Emit::Obj,
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
        pipeline::compile_for(&checked, &planned, emit, output, print_ir_after_all, target)?;
    match artifact {
        Artifact::Text(text) => write_stdout(&text)?,
        Artifact::Files(paths) => {
            // The `fss2` family: one executable per role.
            if report != Report::Quiet {
                let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
                eprintln!(
                    "built {} in {:.2} s (fss2: the servers run `{}`, the dealer `{}`, the client `{}`)",
                    names.join(", "),
                    took.as_secs_f64(),
                    names.first().map(String::as_str).unwrap_or(""),
                    names.get(1).map(String::as_str).unwrap_or(""),
                    names.get(2).map(String::as_str).unwrap_or("")
                );
            }
            if report == Report::Explain {
                super::fss2::run_explain(program, None, false)?;
            }
        }
        Artifact::File(path) => {
            let written = format!("built {} in {:.2} s", path.display(), took.as_secs_f64());
            match report {
                Report::Quiet => {}
                Report::Summary => eprintln!(
                    "{}",
                    ex::build_summary(&checked.program, &planned.plan, &written)
                ),
                Report::Explain => {
                    eprintln!("{written}");
                    eprint!(
                        "{}",
                        ex::explain_program_text_with_source(
                            &checked.program,
                            &planned.plan,
                            ex::ASSUMED_RECORDS,
                            &ex::RecordsSource::Assumed,
                            Some(&checked.source),
                        )
                    );
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
