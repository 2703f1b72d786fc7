//! `variant-select`: decides how every comparison is computed and records it as typed IR.
//!
//! Variants (Table 2 of the Large-Scale MPC paper): `plain-mask` (public masks), `no-lift`,
//! `const-lift`, `mpc-lift` (secret masks); sharings: `rep3` (replicated Z_2^k), `fp` (Shamir
//! over F_p, p = 65519), `gr2`/`gr4` (Shamir over GR(2^16, d)). The pass queries
//! [`ComparisonSites`] of the module, plans every applicable (sharing, variant) with the range
//! analysis and the cost model ([`crate::analysis::plan::choose`]: one sharing for the whole
//! program, each fhd comparison's cheapest variant under it), and records the winner. Its
//! options force a choice (`variant-select{sharing=gr2 variant=mpc-lift precision=16}`); a
//! forced choice that does not apply is an error at the comparison's location.
//!
//! The sharing is one per program (an iris input has one share format): the module gets
//! `irs.sharing`, and the protocol family `irs.protocol` (`rep3` unless `protocol=beaver` is
//! asked for: then F_p, whose comparisons end mod p, is not a candidate; with `protocol=fss2`
//! every comparison must be a cosine test, and `malicious=M` adds `irs.malicious = M`, the trap
//! instances of the two-server family's malicious variant).
//! Cosine comparisons get no variant. `ring-select` runs next.
//!
//! Before:
//! ```mlir
//! module attributes {irs.parties = 3 : i64} {
//!   %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 200 : i64, ratio_num = 69 : i64} : ...
//! ```
//! After:
//! ```mlir
//! module attributes {irs.parties = 3 : i64, irs.protocol = #irs.protocol<"rep3">, irs.sharing = #irs.sharing<"rep3">} {
//!   %3 = "irs.fhd_lt"(%1, %2) {mask = "secret", ratio_den = 200 : i64, ratio_num = 69 : i64,
//!          sharing = #irs.sharing<"rep3">, variant = #irs.variant<"mpc-lift">} : ...
//! ```

use super::{for_each_comparison_mut, Pass, PassError};
use crate::analysis::plan::{choose, PlanOptions};
use crate::analysis::sites::ComparisonSites;
use crate::mlir::{ChoiceAttr, Compiler};
use irisc_runtime::vocab::Protocol;
use melior::ir::{operation::OperationMutLike, Module};

/// `variant-select` with what the user forces (`--sharing`, `--variant`, `--precision`).
pub struct VariantSelect(pub PlanOptions);

pub(crate) const NAME: &str = "variant-select";

impl Pass for VariantSelect {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, mut module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ctx = cx.context();
        let fail = |message| PassError::Unsupported {
            pass: NAME,
            message,
        };
        let sites = ComparisonSites::of(&module).map_err(fail)?;
        let (sharing, plans) =
            choose(&sites, &self.0).map_err(|error| PassError::Choice { pass: NAME, error })?;
        for_each_comparison_mut(&module, |i, op| {
            if let Some(p) = &plans[i] {
                op.set_discardable_attribute("sharing", p.sharing.to_attr(ctx));
                op.set_discardable_attribute("variant", p.variant.to_attr(ctx));
                op.set_discardable_attribute("msb_input", p.msb_input.to_attr(ctx));
            }
            Ok(())
        })?;
        let mut m = module.as_operation_mut();
        m.set_attribute("irs.sharing", sharing.to_attr(ctx));
        let protocol = self.0.protocol.unwrap_or(Protocol::Rep3);
        m.set_attribute("irs.protocol", protocol.to_attr(ctx));
        if let Some(k) = self.0.malicious {
            m.set_attribute(
                "irs.malicious",
                melior::ir::attribute::IntegerAttribute::new(
                    melior::ir::r#type::IntegerType::new(ctx, 64).into(),
                    i64::from(k),
                )
                .into(),
            );
        }
        Ok(module)
    }
}
