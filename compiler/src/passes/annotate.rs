//! Shared walk of the annotation passes: every comparison op of the `irs` module with its
//! choice.

use super::choices::{Choices, TestChoice};
use super::PassError;
use crate::mlir::get_int;
use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationRefMut},
    Module, RegionLike,
};

pub const COMPARISONS: [&str; 2] = ["irs.fhd_lt", "irs.cosine_ge"];

/// Calls `f` on every `irs.fhd_lt` / `irs.cosine_ge` with the choice of its `test` number.
pub fn for_each_test<'c>(
    pass: &'static str,
    module: &Module<'c>,
    choices: &Choices,
    mut f: impl FnMut(&mut OperationRefMut<'c, '_>, &TestChoice) -> Result<(), String>,
) -> Result<(), PassError> {
    let fail = |message: String| PassError::Unsupported { pass, message };
    let mut func = module.body().first_operation();
    while let Some(fop) = func {
        for region in fop.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                let mut cur = b.first_operation_mut();
                while let Some(mut op) = cur {
                    let name = op.name().as_string_ref().as_str().unwrap_or("").to_string();
                    if COMPARISONS.contains(&name.as_str()) {
                        let test = get_int(&op, "test").map_err(fail)?;
                        let choice = usize::try_from(test)
                            .ok()
                            .and_then(|t| choices.tests.get(t))
                            .ok_or_else(|| {
                                fail(format!("no choice for comparison number {test}"))
                            })?;
                        let fits = matches!(
                            (name.as_str(), choice),
                            ("irs.fhd_lt", TestChoice::Fhd { .. })
                                | ("irs.cosine_ge", TestChoice::Cosine { .. })
                        );
                        if !fits {
                            return Err(fail(format!(
                                "comparison {test} is `{name}` but its choice is for another kind"
                            )));
                        }
                        f(&mut op, choice).map_err(fail)?;
                    }
                    cur = op.next_in_block_mut();
                }
                block = b.next_in_region();
            }
        }
        func = fop.next_in_block();
    }
    Ok(())
}
