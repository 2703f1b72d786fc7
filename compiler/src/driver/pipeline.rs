//! From a `.irs` path to a checked program and its artifacts: the steps `build`, `explain` and
//! `run` share.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use crate::analysis;
use crate::codegen::{self, Artifact, BuildOptions, Emit};
use crate::sema::Program;

/// A source file that passed the front end.
pub struct Checked {
    pub path: PathBuf,
    pub source: String,
    pub program: Program,
}

pub fn read_and_check(path: &Path) -> Result<Checked> {
    let source =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let program = crate::sema::frontend(&path.display().to_string(), &source)
        .map_err(|rendered| anyhow!(rendered))?;
    Ok(Checked {
        path: path.to_path_buf(),
        source,
        program,
    })
}

/// The ring every share file of this program must use (the largest any comparison needs).
pub fn program_ring_bits(program: &Program) -> u32 {
    program
        .reveals
        .iter()
        .map(|r| {
            let bits = program.inputs[r.decision.gallery].code_bits;
            analysis::ring::select_ring(bits, r.decision.ratio).ring_bits
        })
        .max()
        .unwrap_or(16)
}

/// Compiles a checked program to `emit`; returns the artifact and the compile time.
pub fn compile(
    checked: &Checked,
    emit: Emit,
    output: Option<PathBuf>,
    print_ir_after_all: bool,
) -> Result<(Artifact, Duration)> {
    let started = Instant::now();
    let explain = analysis::explain::explain_json(&checked.program);
    let opts = BuildOptions {
        emit,
        output,
        print_ir_after_all,
    };
    let artifact = codegen::compile(&checked.program, &checked.source, explain, &opts)
        .map_err(|e| anyhow!("{}: {e}", checked.path.display()))?;
    Ok((artifact, started.elapsed()))
}
