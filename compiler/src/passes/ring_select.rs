//! `ring-select`: records on every comparison the rings the analysis proved sufficient.
//!
//! For `fhd(c, d) < r` with public masks the ring comes from Lemma 1 (the exact range of
//! `T - <c', d'>`), with secret masks from Lemma 2 (the range of `a*ml - b*dot`), for cosine
//! tests from the range of `den^2 p^2 - num^2 <x,x><y,y>` ([`crate::analysis`]). This pass copies
//! the rings, `(a, b)` and the lift width onto the op as discardable attributes, with the
//! justification, so the printed IR shows why each ring is enough.
//!
//! Before:
//! ```mlir
//! %3 = "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 200, ratio_num = 69, test = 0} : ...
//! ```
//! After:
//! ```mlir
//! %3 = "irs.fhd_lt"(%1, %2) {a = 69, b = 200, dot_ring = 16, lift_bits = 0, mask = "public", ml_ring = 16,
//!        ratio_den = 200, ratio_num = 69, ring_bits = 16, ring_why = "T - dot in [-8832, 16768] ...", test = 0} : ...
//! ```

use super::annotate::for_each_test;
use super::choices::{Choices, TestChoice};
use super::{Pass, PassError};
use crate::mlir::{int_attr, str_attr, Compiler};
use melior::ir::{operation::OperationMutLike, Module};

pub struct RingSelect(pub std::rc::Rc<Choices>);

const NAME: &str = "ring-select";

impl Pass for RingSelect {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ctx = cx.context();
        for_each_test(NAME, &module, &self.0, |op, choice| {
            let mut set = |name: &str, v: i64| {
                op.set_discardable_attribute(name, int_attr(ctx, name, v).1);
            };
            let why = match choice {
                TestChoice::Fhd {
                    ring_bits,
                    dot_ring,
                    ml_ring,
                    a,
                    b,
                    lift_bits,
                    justification,
                    ..
                } => {
                    set("ring_bits", (*ring_bits).into());
                    set("dot_ring", (*dot_ring).into());
                    set("ml_ring", (*ml_ring).into());
                    set("a", *a);
                    set(
                        "b",
                        i64::try_from(*b).map_err(|_| format!("b = {b} exceeds 63 bits"))?,
                    );
                    set("lift_bits", (*lift_bits).into());
                    justification
                }
                TestChoice::Cosine {
                    ring_bits,
                    justification,
                } => {
                    set("ring_bits", (*ring_bits).into());
                    justification
                }
            };
            op.set_discardable_attribute("ring_why", str_attr(ctx, "ring_why", why).1);
            Ok(())
        })?;
        Ok(module)
    }
}
