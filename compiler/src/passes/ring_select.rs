//! `ring-select`: chooses the ring of every comparison (Lemma 1, public masks).
//!
//! For `fhd(c, d) < r` the parties compute `T - <c', d'>` with `T = floor((1 - 2r) * ml)` and
//! take its MSB; that is the comparison only if the value never wraps in Z_2^k. The range
//! analysis ([`crate::analysis::ring::select_ring`]) gives the exact range of `T - dot` over all
//! inputs and the smallest k whose signed range holds it. This pass records both on the op,
//! as discardable attributes that `irs-to-mpc` consumes and `explain` can cite.
//!
//! Before:
//! ```mlir
//! %3 = "irs.fhd_lt"(%2, %0) {ratio_den = 1000 : i64, ratio_num = 345 : i64}
//!        : (!irs.codes<12800 : i64>, !irs.db<12800 : i64>) -> !irs.secret_matrix
//! ```
//! After:
//! ```mlir
//! %3 = "irs.fhd_lt"(%2, %0) {range_hi = 16768 : i64, range_lo = -8832 : i64,
//!        ratio_den = 1000 : i64, ratio_num = 345 : i64, ring_bits = 16 : i64}
//!        : (!irs.codes<12800 : i64>, !irs.db<12800 : i64>) -> !irs.secret_matrix
//! ```

use super::{Pass, PassError};
use crate::analysis::ring::select_ring;
use crate::mlir::{get_int, int_attr, type_param, Compiler};
use crate::sema::Ratio;
use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationMutLike},
    Module, RegionLike, ValueLike,
};

pub struct RingSelect;

const NAME: &str = "ring-select";

impl Pass for RingSelect {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ctx = cx.context();
        // Functions at the top level, their ops one level down: the shape `lower` produces.
        let mut func = module.body().first_operation();
        while let Some(f) = func {
            for region in f.regions() {
                let mut block = region.first_block();
                while let Some(b) = block {
                    let mut cur = b.first_operation_mut();
                    while let Some(mut op) = cur {
                        if op.name().as_string_ref().as_str() == Ok("irs.fhd_lt") {
                            let (k, lo, hi) =
                                choose(&op).map_err(|message| PassError::Unsupported {
                                    pass: NAME,
                                    message,
                                })?;
                            for (name, v) in [("ring_bits", k), ("range_lo", lo), ("range_hi", hi)]
                            {
                                let (_, attr) = int_attr(ctx, name, v);
                                op.set_discardable_attribute(name, attr);
                            }
                        }
                        cur = op.next_in_block_mut();
                    }
                    block = b.next_in_region();
                }
            }
            func = f.next_in_block();
        }
        Ok(module)
    }
}

/// `(ring_bits, range_lo, range_hi)` for one `irs.fhd_lt`.
fn choose<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Result<(i64, i64, i64), String> {
    let num = get_int(op, "ratio_num")?;
    let den = get_int(op, "ratio_den")?;
    if den <= 0 || num < 0 || num > den {
        return Err(format!("match ratio {num}/{den} is not in [0, 1]"));
    }
    let codes = op.operand(0).map_err(|e| e.to_string())?;
    let bits = type_param(codes.r#type())
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| format!("cannot read the code length of `{}`", codes.r#type()))?;
    let choice = select_ring(
        bits,
        Ratio {
            num: num as u64,
            den: den as u64,
        },
    );
    if choice.ring_bits > 64 {
        return Err(format!(
            "codes of {bits} bits need a ring of {} bits; at most 64 are supported",
            choice.ring_bits
        ));
    }
    let lo = i64::try_from(choice.lo).map_err(|_| "range out of i64".to_string())?;
    let hi = i64::try_from(choice.hi).map_err(|_| "range out of i64".to_string())?;
    Ok((choice.ring_bits.into(), lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::ring::select_ring;

    fn module_with(bits: u32, num: u64, den: u64) -> String {
        format!(
            r#"func.func @query() {{
              %0 = "irs.gallery"() {{name = "db", code_bits = {bits} : i64, mask = "public"}} : () -> !irs.db<{bits}>
              %1 = "irs.query"() {{name = "q", owner = 0 : i64, code_bits = {bits} : i64, mask = "public"}} : () -> !irs.code<{bits}>
              %2 = "irs.rotate"(%1) {{lo = 0 : i64, hi = 0 : i64}} : (!irs.code<{bits}>) -> !irs.codes<{bits}>
              %3 = "irs.fhd_lt"(%2, %0) {{ratio_num = {num} : i64, ratio_den = {den} : i64}} : (!irs.codes<{bits}>, !irs.db<{bits}>) -> !irs.secret_matrix
              return
            }}"#
        )
    }

    #[test]
    fn annotates_with_the_lemma_1_ring() {
        let cx = Compiler::new().unwrap();
        for (bits, num, den) in [(12800, 345, 1000), (64, 1, 3), (1024, 0, 1), (12800, 1, 2)] {
            let m = cx.parse_module(&module_with(bits, num, den)).unwrap();
            let text = RingSelect.run(&cx, m).unwrap().as_operation().to_string();
            let c = select_ring(bits, Ratio { num, den });
            let want = format!("range_hi = {} : i64, range_lo = {} : i64", c.hi, c.lo);
            assert!(text.contains(&want), "{want} not in {text}");
            assert!(
                text.contains(&format!("ring_bits = {} : i64", c.ring_bits)),
                "{text}"
            );
        }
    }

    #[test]
    fn the_example_needs_16_bits() {
        let cx = Compiler::new().unwrap();
        let m = cx.parse_module(&module_with(12800, 345, 1000)).unwrap();
        let text = RingSelect.run(&cx, m).unwrap().as_operation().to_string();
        assert!(text.contains("ring_bits = 16 : i64"), "{text}");
    }

    #[test]
    fn rejects_a_ratio_above_one() {
        let cx = Compiler::new().unwrap();
        let m = cx.parse_module(&module_with(64, 3, 2)).unwrap();
        assert!(RingSelect.run(&cx, m).is_err());
    }
}
