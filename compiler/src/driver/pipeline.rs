//! From a `.irs` path to a checked program, its choices (made by the passes) and its artifacts: the steps `build`,
//! `explain` and `run` share.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};

pub use super::checked::{read_and_check, Checked};
use crate::analysis::plan::{Plan, PlanOptions};
use crate::analysis::schedule::TileOptions;
use crate::codegen::{self, Artifact, BuildOptions, CompileError, Emit, Target};
use crate::lower::lower_program;
use crate::mlir::Compiler;
use crate::passes::PassManager;

/// A checked program with the choices the passes made for every comparison.
pub struct Planned {
    /// The choices as read back from the module after `variant-select` and `ring-select`.
    pub plan: Plan,
    /// What the user forced: the options of the choice passes when the program is compiled.
    pub options: PlanOptions,
}

/// `options` for a build for `target`: a CUDA build keeps the comparisons on replicated shares
/// unless `--msb-input` says otherwise (the GPU runs the reshare and BitExtract of the
/// comparison phase, the configuration measured on a GPU; `--msb-input additive` runs
/// AdditiveMSB with its local steps on the GPU, which `irisc-bench --sections gpu` times next
/// to it).
pub fn options_for_target(options: &PlanOptions, target: Target) -> PlanOptions {
    let mut options = *options;
    if target == Target::Cuda && options.msb_input.is_none() {
        options.msb_input = Some(irisc_runtime::vocab::MsbInput::Replicated);
    }
    options
}

/// Lowers the program and runs the choice passes (`variant-select`, `ring-select`) with what
/// `options` force, then `irs-to-mpc` and `mpc-tile`: the plan, its schedule included, is read
/// from the modules the passes produce.
pub fn plan(checked: &Checked, options: &PlanOptions) -> Result<Planned> {
    let cx = Compiler::new().map_err(|e| anyhow!("{e}"))?;
    let irs = lower_program(&cx, &checked.program, &checked.source)
        .map_err(|e| checked.lower_error(e))?;
    let module = PassManager::choice_pipeline(options)
        .run(&cx, irs, None)
        .map_err(|e| checked.pass_error(e))?;
    let mut plan = Plan::of(&module).map_err(|e| anyhow!("{}: {e}", checked.path.display()))?;
    let mpc = PassManager::schedule_pipeline_for(options)
        .run(&cx, module, None)
        .map_err(|e| checked.pass_error(e))?;
    plan.schedule = TileOptions::of(&mpc);
    plan.mask_lengths = Some(crate::analysis::threshold_placement::placement_of(&mpc));
    plan.beaver = crate::codegen::manifest::beaver_circuit(&mpc)
        .map_err(|e| anyhow!("{}: {e}", checked.path.display()))?;
    Ok(Planned {
        plan,
        options: *options,
    })
}

/// The `irisc explain --json` document (embedded in every executable).
pub fn explain_json(checked: &Checked, planned: &Planned) -> serde_json::Value {
    if planned.plan.protocol == irisc_runtime::vocab::Protocol::Fss2 {
        return match super::fss2_program::of_checked(checked) {
            Ok(f) => super::fss2_program::explain_json(&f, 1),
            Err(e) => serde_json::json!({ "protocol": "fss2", "error": e.to_string() }),
        };
    }
    crate::analysis::explain::explain_program_json_with_source(
        &checked.program,
        &planned.plan,
        1,
        Some(&checked.source),
    )
}

/// Compiles a planned program to `emit`; returns the artifact and the compile time.
pub fn compile(
    checked: &Checked,
    planned: &Planned,
    emit: Emit,
    output: Option<PathBuf>,
    print_ir_after_all: bool,
) -> Result<(Artifact, Duration)> {
    compile_for(
        checked,
        planned,
        emit,
        output,
        print_ir_after_all,
        Target::default(),
    )
}

/// [`compile`] with the backend `target` (`irisc build --target`).
pub fn compile_for(
    checked: &Checked,
    planned: &Planned,
    emit: Emit,
    output: Option<PathBuf>,
    print_ir_after_all: bool,
    target: Target,
) -> Result<(Artifact, Duration)> {
    let started = Instant::now();
    let opts = BuildOptions {
        emit,
        output,
        print_ir_after_all,
        target,
    };
    let explain = explain_json(checked, planned);
    let artifact = codegen::compile(
        &checked.program,
        &checked.source,
        &planned.options,
        explain,
        &opts,
    )
    .map_err(|e| match e {
        CompileError::Lower(e) => checked.lower_error(e),
        CompileError::Pass(e) => checked.pass_error(e),
        e => anyhow!("{}: {e}", checked.path.display()),
    })?;
    Ok((artifact, started.elapsed()))
}
