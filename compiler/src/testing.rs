//! Helpers for unit tests of the stages after the front end: a program from source text, with
//! the choices the passes make for it.

use crate::analysis::plan::{Plan, PlanError, PlanOptions};
use crate::lower::lower_program;
use crate::mlir::Compiler;
use crate::passes::{PassError, PassManager};
use crate::sema::Program;
use irisc_runtime::vocab::Sharing;

/// The deduplication program of the README (12 800-bit codes, 31 rotations, ratio 0.345).
pub const DEDUP: &str = "const CODE_BITS = 12800;
const MATCH_RATIO = 0.345;
parties p0, p1, p2;
gallery db: iris<CODE_BITS> public mask;
query q: iris<CODE_BITS> public mask from p0;
let duplicate = any d in db, c in rotations(q, -15..=15): fhd(c, d) < MATCH_RATIO;
reveal duplicate to p0;
";

/// The plan the choice passes (`variant-select`, `ring-select`) record on the lowered
/// `program` (`source` gives the ops their locations), read back from the module; a choice that
/// cannot be made is the pass's error.
pub fn plan_of(program: &Program, source: &str, options: &PlanOptions) -> Result<Plan, PlanError> {
    let cx = Compiler::new().expect("the dialects load");
    let irs = lower_program(&cx, program, source).unwrap_or_else(|e| panic!("{e}"));
    let result = match PassManager::choice_pipeline(options).run(&cx, irs, None) {
        Ok(module) => Ok(Plan::of(&module).unwrap_or_else(|e| panic!("{e}"))),
        Err(PassError::Choice { error, .. }) => Err(error),
        Err(e) => panic!("{e}"),
    };
    result
}

/// `source` checked and planned with `options`; panics with the diagnostic otherwise.
pub fn planned_with(source: &str, options: &PlanOptions) -> (Program, PlanOptions) {
    let program = crate::sema::frontend("dedup.irs", source).unwrap_or_else(|e| panic!("{e}"));
    plan_of(&program, source, options).unwrap_or_else(|e| panic!("{e}"));
    (program, *options)
}

/// `source` planned with replicated sharing (the issue-2 pipeline's choices).
pub fn planned_rep3(source: &str) -> (Program, PlanOptions) {
    planned_with(
        source,
        &PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        },
    )
}
