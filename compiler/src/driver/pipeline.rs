//! From a `.irs` path to a checked program, its choices (made by the passes) and its artifacts: the steps `build`,
//! `explain` and `run` share.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use crate::analysis::plan::{Plan, PlanOptions};
use crate::analysis::schedule::TileOptions;
use crate::codegen::{self, Artifact, BuildOptions, CompileError, Emit, Target};
use crate::lower::{lower_program, LowerError};
use crate::mlir::Compiler;
use crate::passes::{PassError, PassManager};
use crate::sema::program::Program;
use crate::syntax::{render, Diagnostic, Span};

/// A source file that passed the front end.
pub struct Checked {
    pub path: PathBuf,
    pub source: String,
    pub program: Program,
}

impl Checked {
    /// A pass's error: a choice that cannot be made is rendered at its comparison.
    pub fn pass_error(&self, e: PassError) -> anyhow::Error {
        match e {
            PassError::Choice { error, .. } => {
                let span = error
                    .at
                    .map_or(Span::default(), |at| at.to_span(&self.source));
                self.render_error(Diagnostic::error(error.message, span).with_hint(error.hint))
            }
            e => anyhow!("{}: {e}", self.path.display()),
        }
    }

    /// A lowering error: an unsupported construct is rendered at its source.
    pub fn lower_error(&self, e: LowerError) -> anyhow::Error {
        match e {
            LowerError::Unsupported {
                message,
                hint,
                span,
            } => self.render_error(Diagnostic::error(message, span).with_hint(hint)),
            e => anyhow!("{}: {e}", self.path.display()),
        }
    }

    /// A diagnostic at `span`, rendered with the file's source line and a caret.
    pub fn render_error(&self, d: Diagnostic) -> anyhow::Error {
        anyhow!(render(
            &self.path.display().to_string(),
            &self.source,
            &[d],
            false
        ))
    }
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

/// A checked program with the choices the passes made for every comparison.
pub struct Planned {
    /// The choices as read back from the module after `variant-select` and `ring-select`.
    pub plan: Plan,
    /// What the user forced: the options of the choice passes when the program is compiled.
    pub options: PlanOptions,
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
        return match super::fss2::of_checked(checked) {
            Ok(f) => super::fss2::explain_json(&f, 1),
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
