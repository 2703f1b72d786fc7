//! The [`Plan`] of a module after `variant-select` and `ring-select`: read from the IR (the
//! typed choice attributes), for `irisc explain` and the plaintext reference. The costs and
//! ranges are the pure functions of the recorded choices ([`super::plan_fhd_site`]); a ring on
//! an op that disagrees with them is an error, so the IR stays the one source of the choices.

use super::{assemble, plan_fhd_site, Plan, TestPlan};
use crate::analysis::sites::{for_each_comparison, ComparisonSites, SiteKind};
use crate::mlir::{get_int, op_name, ChoiceAttr};
use irisc_runtime::vocab::{MsbInput, Protocol, Sharing, Variant};
use melior::ir::{operation::OperationLike, Module};

/// The choices recorded on one fhd comparison.
struct Recorded {
    variant: Variant,
    msb_input: MsbInput,
    ring_bits: i64,
    dot_ring: i64,
    ml_ring: i64,
    a: i64,
    b: i64,
    lift_bits: i64,
}

impl Plan {
    /// The plan recorded on `module` (after `variant-select` and `ring-select`).
    pub fn of(module: &Module<'_>) -> Result<Plan, String> {
        let sites = ComparisonSites::of(module)?;
        let sharing = module
            .as_operation()
            .attribute("irs.sharing")
            .ok()
            .and_then(Sharing::from_attr)
            .ok_or("the module has no `irs.sharing` (did variant-select run?)")?;
        let protocol = module
            .as_operation()
            .attribute("irs.protocol")
            .ok()
            .and_then(Protocol::from_attr)
            .ok_or("the module has no `irs.protocol` (did variant-select run?)")?;
        let mut recorded = Vec::with_capacity(sites.len());
        for_each_comparison(module, |op| {
            if op_name(op) != "irs.fhd_lt" {
                recorded.push(None);
                return Ok(());
            }
            let variant = op
                .attribute("variant")
                .ok()
                .and_then(Variant::from_attr)
                .ok_or("an `irs.fhd_lt` has no `variant` (did variant-select run?)")?;
            let int = |n: &str| get_int(op, n).map_err(|e| format!("{e} (did ring-select run?)"));
            recorded.push(Some(Recorded {
                variant,
                // Absent on modules from before the choice existed: the reshare.
                msb_input: op
                    .attribute("msb_input")
                    .ok()
                    .and_then(MsbInput::from_attr)
                    .unwrap_or(MsbInput::Replicated),
                ring_bits: int("ring_bits")?,
                dot_ring: int("dot_ring")?,
                ml_ring: int("ml_ring")?,
                a: int("a")?,
                b: int("b")?,
                lift_bits: int("lift_bits")?,
            }));
            Ok(())
        })?;
        let mut fhd_plans = Vec::with_capacity(sites.len());
        for (site, rec) in sites.iter().zip(recorded) {
            let (SiteKind::Fhd(_), Some(r)) = (&site.kind, rec) else {
                fhd_plans.push(None);
                continue;
            };
            let m = match u32::try_from(r.lift_bits) {
                Ok(0) | Err(_) => crate::analysis::approx::DEFAULT_M,
                Ok(m) => m,
            };
            let p =
                plan_fhd_site(site, sharing, r.variant, m, r.msb_input).map_err(|e| e.message)?;
            let agrees = i64::from(p.compare_ring) == r.ring_bits
                && i64::from(p.dot_ring) == r.dot_ring
                && i64::from(p.ml_ring.unwrap_or(p.dot_ring)) == r.ml_ring
                && p.a == r.a
                && i64::try_from(p.b).ok() == Some(r.b)
                && i64::from(p.lift_bits.unwrap_or(0)) == r.lift_bits
                && p.msb_input == r.msb_input;
            if !agrees {
                return Err(format!(
                    "the rings recorded on an `irs.fhd_lt` ({} {}, msb input {}) are not those of \
                     its choices",
                    sharing,
                    r.variant,
                    r.msb_input.name()
                ));
            }
            fhd_plans.push(Some(p));
        }
        let plan = assemble(protocol, sharing, &sites, fhd_plans).map_err(|e| e.message)?;
        debug_assert!(plan.tests.iter().all(|t| match t {
            TestPlan::Fhd(f) => f.sharing == sharing,
            TestPlan::Cosine(_) => true,
        }));
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::plan::PlanOptions;
    use crate::mlir::Compiler;
    use crate::passes::PassManager;
    use crate::testing::DEDUP;

    #[test]
    fn the_plan_is_read_from_the_module_and_must_agree_with_its_rings() {
        let cx = Compiler::new().unwrap();
        let program = crate::sema::frontend("dedup.irs", DEDUP).unwrap();
        let irs = crate::lower::lower_program(&cx, &program, DEDUP).unwrap();
        let options = PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        };
        // Before the passes there is nothing to read.
        let e = Plan::of(&irs).unwrap_err();
        assert!(e.contains("did variant-select run?"), "{e}");
        let module = PassManager::choice_pipeline(&options)
            .run(&cx, irs, None)
            .unwrap();
        let plan = Plan::of(&module).unwrap();
        assert_eq!(plan.sharing, Sharing::Rep3);
        let TestPlan::Fhd(f) = &plan.tests[0] else {
            panic!("{plan:?}")
        };
        assert_eq!(
            (f.variant, f.compare_ring, f.a, f.b),
            (Variant::PlainMask, 16, 69, 200)
        );
        assert_eq!(plan.cost.comparisons_per_record, 31);
        // A ring edited by hand no longer matches the recorded choices.
        let text = module
            .as_operation()
            .to_string()
            .replace("ring_bits = 16 : i64", "ring_bits = 15 : i64");
        let edited = cx.parse_module(&text).unwrap();
        let e = Plan::of(&edited).unwrap_err();
        assert!(e.contains("are not those of its choices"), "{e}");
    }
}
