//! Helpers for unit tests of the stages after the front end: a program from source text, with
//! the analysis's choices.

use crate::analysis::plan::{plan, PlanOptions, Sharing};
use crate::passes::Choices;
use crate::sema::Program;

/// The deduplication program of the README (12 800-bit codes, 31 rotations, ratio 0.345).
pub const DEDUP: &str = "const CODE_BITS = 12800;
const MATCH_RATIO = 0.345;
parties p0, p1, p2;
gallery db: iris<CODE_BITS> public mask;
query q: iris<CODE_BITS> public mask from p0;
let duplicate = any d in db, c in rotations(q, -15..=15): fhd(c, d) < MATCH_RATIO;
reveal duplicate to p0;
";

/// `source` checked and planned with `options`; panics with the diagnostic otherwise.
pub fn planned_with(source: &str, options: &PlanOptions) -> (Program, Choices) {
    let program = crate::sema::frontend("dedup.irs", source).unwrap_or_else(|e| panic!("{e}"));
    let plan = plan(&program, options).unwrap_or_else(|e| panic!("{e}"));
    (program, crate::driver::pipeline::choices(&plan))
}

/// `source` planned with replicated sharing (the issue-2 pipeline's choices).
pub fn planned_rep3(source: &str) -> (Program, Choices) {
    planned_with(
        source,
        &PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        },
    )
}
