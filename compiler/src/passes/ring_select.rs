//! `ring-select`: records on every comparison the rings the analysis proves sufficient for the
//! variant `variant-select` recorded.
//!
//! For `fhd(c, d) < r` with public masks the ring comes from Lemma 1 (the exact range of
//! `T - <c', d'>`), with secret masks from Lemma 2 (the range of `a*ml - b*dot`, with `a/b` the
//! conservative approximation of `1 - 2r`: `b = 2^m` for ConstLift/MPCLift, `b < 2^16` for
//! NoLift), for cosine tests from the range of `den^2 p^2 - num^2 <x,x><y,y>`
//! ([`crate::analysis`]). The pass queries [`ComparisonSites`] of the module and records the
//! rings, `(a, b)` and the lift width as integer attributes with the justification `ring_why`,
//! so the printed IR shows why each ring is enough. Option: `ring-select{precision=M}` (m of
//! `b = 2^m`, default 16). A range no ring of at most 64 bits holds is an error at the
//! comparison's location; an fhd comparison without `variant` (variant-select did not run) is
//! an error too.
//!
//! Before:
//! ```mlir
//! %3 = "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 200 : i64, ratio_num = 69 : i64,
//!        sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">} : ...
//! ```
//! After:
//! ```mlir
//! %3 = "irs.fhd_lt"(%1, %2) {a = 69 : i64, b = 200 : i64, dot_ring = 16 : i64, lift_bits = 0 : i64,
//!        mask = "public", ml_ring = 16 : i64, ratio_den = 200 : i64, ratio_num = 69 : i64,
//!        ring_bits = 16 : i64, ring_why = "T - dot in [-8832, 16768] ...",
//!        sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">} : ...
//! ```

use super::{for_each_comparison_mut, Pass, PassError};
use crate::analysis::plan::{plan_cosine_site, plan_fhd_site};
use crate::analysis::sites::{ComparisonSites, SiteKind};
use crate::mlir::{int_attr, str_attr, ChoiceAttr, Compiler};
use irisc_runtime::vocab::{MsbInput, Sharing, Variant};
use melior::ir::{
    operation::{OperationLike, OperationMutLike},
    Module,
};

/// `ring-select` with m of `b = 2^m` (`--precision`).
pub struct RingSelect {
    pub precision_bits: Option<u32>,
}

pub(crate) const NAME: &str = "ring-select";

impl Pass for RingSelect {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ctx = cx.context();
        let fail = |message: String| PassError::Unsupported {
            pass: NAME,
            message,
        };
        let choice = |error| PassError::Choice { pass: NAME, error };
        let m = self
            .precision_bits
            .unwrap_or(crate::analysis::approx::DEFAULT_M);
        let sites = ComparisonSites::of(&module).map_err(fail)?;
        for_each_comparison_mut(&module, |i, op| {
            let site = &sites[i];
            let mut ints: Vec<(&str, i64)> = Vec::new();
            let why = match site.kind {
                SiteKind::Fhd(_) => {
                    let missing = |what: &str| {
                        fail(format!(
                            "an `irs.fhd_lt` has no `{what}`: run variant-select first"
                        ))
                    };
                    let sharing = op
                        .attribute("sharing")
                        .ok()
                        .and_then(Sharing::from_attr)
                        .ok_or_else(|| missing("sharing"))?;
                    let variant = op
                        .attribute("variant")
                        .ok()
                        .and_then(Variant::from_attr)
                        .ok_or_else(|| missing("variant"))?;
                    // The rings do not depend on what the MSB starts from.
                    let msb = op
                        .attribute("msb_input")
                        .ok()
                        .and_then(MsbInput::from_attr)
                        .unwrap_or(MsbInput::Replicated);
                    let p = plan_fhd_site(site, sharing, variant, m, msb).map_err(choice)?;
                    let b = i64::try_from(p.b)
                        .map_err(|_| fail(format!("b = {} exceeds 63 bits", p.b)))?;
                    ints.extend([
                        ("ring_bits", p.compare_ring.into()),
                        ("dot_ring", p.dot_ring.into()),
                        ("ml_ring", p.ml_ring.unwrap_or(p.dot_ring).into()),
                        ("a", p.a),
                        ("b", b),
                        ("lift_bits", p.lift_bits.unwrap_or(0).into()),
                    ]);
                    p.justification
                }
                SiteKind::Cosine(_) => {
                    let p = plan_cosine_site(site).map_err(choice)?;
                    ints.push(("ring_bits", p.ring.into()));
                    p.justification
                }
            };
            for (name, v) in ints {
                op.set_discardable_attribute(name, int_attr(ctx, name, v).1);
            }
            op.set_discardable_attribute("ring_why", str_attr(ctx, "ring_why", &why).1);
            Ok(())
        })?;
        Ok(module)
    }
}
