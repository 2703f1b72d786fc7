//! `variant-select`: records on every comparison the protocol variant and the sharing of its dot
//! products.
//!
//! Variants (Table 2 of the Large-Scale MPC paper): `plain_mask` (public masks), `no_lift`,
//! `const_lift`, `mpc_lift` (secret masks); sharings: `rep3` (replicated Z_2^k), `fp` (Shamir over
//! F_p, p = 65519), `gr2`/`gr4` (Shamir over GR(2^16, d)). The choice is the analysis's (its cost
//! model, or the user's `--variant`/`--sharing`); `irs-to-mpc` expands each variant.
//!
//! Before: `"irs.fhd_lt"(...) {..., test = 0}`; after:
//! `"irs.fhd_lt"(...) {..., sharing = "rep3", test = 0, variant = "plain_mask"}`.

use super::annotate::for_each_test;
use super::choices::{Choices, TestChoice};
use super::{Pass, PassError};
use crate::mlir::{str_attr, Compiler};
use melior::ir::{operation::OperationMutLike, Module};

pub struct VariantSelect(pub std::rc::Rc<Choices>);

const NAME: &str = "variant-select";

pub const VARIANTS: [&str; 4] = ["plain_mask", "no_lift", "const_lift", "mpc_lift"];
pub const SHARINGS: [&str; 4] = ["rep3", "fp", "gr2", "gr4"];

impl Pass for VariantSelect {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ctx = cx.context();
        for_each_test(NAME, &module, &self.0, |op, choice| {
            let (variant, sharing) = match choice {
                TestChoice::Fhd {
                    variant, sharing, ..
                } => (variant.as_str(), sharing.as_str()),
                TestChoice::Cosine { .. } => ("cosine", "rep3"),
            };
            if variant != "cosine" && !VARIANTS.contains(&variant) {
                return Err(format!("unknown variant `{variant}`"));
            }
            if !SHARINGS.contains(&sharing) {
                return Err(format!("unknown sharing `{sharing}`"));
            }
            op.set_discardable_attribute("variant", str_attr(ctx, "variant", variant).1);
            op.set_discardable_attribute("sharing", str_attr(ctx, "sharing", sharing).1);
            Ok(())
        })?;
        Ok(module)
    }
}
