//! From a `.irs` path to a checked program, its plan and its artifacts: the steps `build`,
//! `explain` and `run` share.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use crate::analysis::plan::{self, Plan, PlanOptions, TestPlan};
use crate::codegen::{self, Artifact, BuildOptions, CompileError, Emit, Target};
use crate::lower::LowerError;
use crate::passes::{Choices, TestChoice};
use crate::sema::program::Program;
use crate::syntax::{render, Diagnostic};

/// A source file that passed the front end.
pub struct Checked {
    pub path: PathBuf,
    pub source: String,
    pub program: Program,
}

impl Checked {
    /// A diagnostic at `span`, rendered with the file's source line and a caret.
    fn render(&self, d: Diagnostic) -> anyhow::Error {
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

/// A checked program with the analysis's choices for every comparison.
pub struct Planned {
    pub plan: Plan,
    pub choices: Choices,
}

/// Chooses rings, sharings and variants (the cost model, or what `options` force).
pub fn plan(checked: &Checked, options: &PlanOptions) -> Result<Planned> {
    let plan = plan::plan(&checked.program, options).map_err(|e| {
        checked.render(Diagnostic::error(e.message.clone(), e.span).with_hint(e.hint.clone()))
    })?;
    let choices = choices(&plan);
    Ok(Planned { plan, choices })
}

/// The plan in the form the annotation passes consume.
pub fn choices(plan: &Plan) -> Choices {
    Choices {
        tests: plan
            .tests
            .iter()
            .map(|t| match t {
                TestPlan::Fhd(f) => TestChoice::Fhd {
                    variant: f.variant.name().replace('-', "_"),
                    sharing: f.sharing.name().into(),
                    ring_bits: f.compare_ring,
                    dot_ring: f.dot_ring,
                    ml_ring: f.ml_ring.unwrap_or(f.dot_ring),
                    a: f.a,
                    b: f.b,
                    lift_bits: f.lift_bits.unwrap_or(0),
                    justification: f.justification.clone(),
                },
                TestPlan::Cosine(c) => TestChoice::Cosine {
                    ring_bits: c.ring,
                    justification: c.justification.clone(),
                },
            })
            .collect(),
    }
}

/// The `irisc explain --json` document (embedded in every executable).
pub fn explain_json(checked: &Checked, planned: &Planned) -> serde_json::Value {
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
        &planned.choices,
        explain,
        &opts,
    )
    .map_err(|e| match e {
        CompileError::Lower(LowerError::Unsupported {
            message,
            hint,
            span,
        }) => checked.render(Diagnostic::error(message, span).with_hint(hint)),
        e => anyhow!("{}: {e}", checked.path.display()),
    })?;
    Ok((artifact, started.elapsed()))
}
