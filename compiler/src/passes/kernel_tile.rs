//! `kernel-tile`: records on every dot product of `@query` the register tile of its kernel
//! ([`crate::analysis::kernel_tile`]): `tile = [records, codes]`, the codes per kernel call it
//! was chosen for (`tile_codes`: the query batch `mpc.query_batch` x the rotations of the
//! query operand for a batch dot product, the rotations alone for an untiled one) and
//! `code_panel_bytes`, `k_chunk_bytes` and `record_panel_bytes`. Code generation generates the kernel variant the attributes name.
//!
//! Where the query operand is the rotations `lo..=hi` (at least two) of a query in 16-bit
//! words of a wrapping ring (replicated Z_2^k, k <= 16, or GR(2^16, d)), it also records
//! `polyphase = [lo, hi]`: code generation adds the polyphase kernels of those shifts to the
//! op's table ([`crate::codegen::cpu::kernel::polyphase`], about three quarters of the
//! multiply-accumulates), which the runtime runs on whole batches of those rotations.
//!
//! A tile already on an op is checked (registers, sides) and kept, so a hand-written tile can be
//! tried with `irisc opt`/`irisc build` on `.mlir`; a bad one is refused with the reason.
//!
//! Before (`mpc-tile{query-batch=8}` on `iris_ids.irs`):
//! ```mlir
//! %1 = "mpc.rotate"(%0) {hi = 15, lo = -15} : (!mpc.shamir<"gr2">) -> !mpc.shamir<"gr2">
//! %2 = "mpc.batch_shamir_dot"(%1, %arg1) : (...) -> !mpc.add<16>
//! ```
//! After:
//! ```mlir
//! %2 = "mpc.batch_shamir_dot"(%1, %arg1) {alternative_tile = [6, 4], code_panel_bytes = 0, k_chunk_bytes = 4096, nest_alternative = "unchunked", polyphase = [-15, 15], record_panel_bytes = 393216, tile = [4, 6], tile_codes = 248} : (...) -> !mpc.add<16>
//! ```

use super::{Pass, PassError};
use crate::analysis::kernel_tile::{
    check, choose, DotKind, KernelTile, ALT_TILE_ATTR, CODES_ATTR, K_CHUNK_ATTR, NEST_ATTR,
    PANEL_ATTR, RECORD_PANEL_ATTR, TILE_ATTR, UNCHUNKED,
};
use crate::mlir::{get_int, get_str, int_attr, op_name, str_attr, Compiler};
use melior::ir::{
    attribute::{ArrayAttribute, Attribute, IntegerAttribute},
    block::BlockLike,
    operation::{OperationLike, OperationMutLike},
    r#type::IntegerType,
    Module, RegionLike, ValueLike,
};
use std::collections::BTreeMap;

pub(crate) const NAME: &str = "kernel-tile";

/// The shifts `[lo, hi]` of the rotated query rows whose polyphase kernels the op's table holds.
pub const POLYPHASE_ATTR: &str = "polyphase";

/// The dot products whose kernels take a tile.
pub const DOT_OPS: [&str; 4] = [
    "mpc.masked_dot",
    "mpc.shamir_dot",
    "mpc.batch_masked_dot",
    "mpc.batch_shamir_dot",
];

fn fail(message: impl Into<String>) -> PassError {
    PassError::Unsupported {
        pass: NAME,
        message: message.into(),
    }
}

/// The `kernel-tile` pass (no options).
#[derive(Debug, Clone, Copy, Default)]
pub struct KernelTilePass;

/// The tile kind of a dot product from its query operand's type (`!mpc.code<k>`,
/// `!mpc.shamir<"gr2">`, ...).
pub fn dot_kind(operand_type: &str) -> Result<DotKind, String> {
    if operand_type.contains("\"fp\"") {
        return Ok(DotKind::Prime);
    }
    if operand_type.contains("\"gr") {
        return Ok(DotKind::Galois);
    }
    let bits = operand_type
        .strip_prefix("!mpc.code<")
        .and_then(|t| t.split([' ', '>']).next())
        .and_then(|n| n.parse::<u32>().ok())
        .ok_or_else(|| format!("no dot-product kernel for operands of type {operand_type}"))?;
    Ok(DotKind::Replicated {
        storage_bits: irisc_runtime::ring::storage_for(bits.clamp(1, 64)).bits(),
    })
}

/// The tile recorded on `op`, if any: `Ok(None)` without `tile`, an error naming what is wrong
/// with a malformed one.
pub fn read_tile<'c: 'a, 'a>(
    op: &impl OperationLike<'c, 'a>,
) -> Result<Option<KernelTile>, String> {
    let Ok(attr) = op.attribute(TILE_ATTR) else {
        return Ok(None);
    };
    let name = op_name(op);
    let bad = || {
        format!(
            "`{name}`: attribute `{TILE_ATTR}` must be [records, codes] (two integers), not {attr}"
        )
    };
    let (records, codes) = pair(attr).ok_or_else(bad)?;
    let count = |attr: &str| -> Result<u64, String> {
        let v = get_int(op, attr)?;
        u64::try_from(v).map_err(|_| format!("`{name}`: attribute `{attr}` is negative ({v})"))
    };
    let alternative_tile = match op.attribute(ALT_TILE_ATTR) {
        Err(_) => None,
        Ok(a) => Some(pair(a).ok_or_else(|| {
            format!(
                "`{name}`: attribute `{ALT_TILE_ATTR}` must be [records, codes] (two integers), not {a}"
            )
        })?),
    };
    Ok(Some(KernelTile {
        records,
        codes,
        call_codes: count(CODES_ATTR)?,
        panel_bytes: count(PANEL_ATTR)?,
        // Optional: a tile recorded before K chunks were a decision has none.
        k_chunk_bytes: if op.attribute(K_CHUNK_ATTR).is_ok() {
            count(K_CHUNK_ATTR)?
        } else {
            0
        },
        // Optional likewise (before record panels were a decision: none).
        record_panel_bytes: if op.attribute(RECORD_PANEL_ATTR).is_ok() {
            count(RECORD_PANEL_ATTR)?
        } else {
            0
        },
        // Optional: absent, one nest.
        unchunked_alternative: match op.attribute(NEST_ATTR) {
            Err(_) => false,
            Ok(_) => match get_str(op, NEST_ATTR)?.as_str() {
                UNCHUNKED => true,
                other => {
                    return Err(format!(
                        "`{name}`: attribute `{NEST_ATTR}` must be \"{UNCHUNKED}\" (or absent: one nest), not \"{other}\""
                    ))
                }
            },
        },
        alternative_tile,
    }))
}

/// An attribute `[a, b]` of two non-negative integers that fit u32.
fn pair(attr: Attribute) -> Option<(u32, u32)> {
    let array = ArrayAttribute::try_from(attr).ok()?;
    if array.len() != 2 {
        return None;
    }
    let side = |i: usize| -> Option<u32> {
        let a = array.element(i).ok()?;
        u32::try_from(IntegerAttribute::try_from(a).ok()?.value()).ok()
    };
    Some((side(0)?, side(1)?))
}

/// The shifts `(lo, hi)` the op's polyphase kernels are for ([`POLYPHASE_ATTR`]); `Ok(None)`
/// without the attribute, an error where it is malformed, names fewer than two shifts, or sits
/// on a dot product of another ring than the 16-bit wrapping ones.
pub fn polyphase_of<'c: 'a, 'a>(
    op: &impl OperationLike<'c, 'a>,
) -> Result<Option<(i32, i32)>, String> {
    let Ok(attr) = op.attribute(POLYPHASE_ATTR) else {
        return Ok(None);
    };
    let name = op_name(op);
    let bad = || {
        format!("`{name}`: attribute `{POLYPHASE_ATTR}` must be [lo, hi], two shifts with lo < hi, not {attr}")
    };
    let array = ArrayAttribute::try_from(attr).map_err(|_| bad())?;
    let shift = |i: usize| -> Option<i32> {
        let a = array.element(i).ok()?;
        i32::try_from(IntegerAttribute::try_from(a).ok()?.value()).ok()
    };
    let (lo, hi) = match (array.len(), shift(0), shift(1)) {
        (2, Some(lo), Some(hi)) if lo < hi => (lo, hi),
        _ => return Err(bad()),
    };
    let t = op
        .operand(0)
        .map_err(|e| e.to_string())?
        .r#type()
        .to_string();
    match dot_kind(&t)? {
        DotKind::Galois | DotKind::Replicated { storage_bits: 16 } => Ok(Some((lo, hi))),
        _ => Err(format!(
            "`{name}`: attribute `{POLYPHASE_ATTR}`: polyphase kernels exist for 16-bit wrapping rings only, not {t}"
        )),
    }
}

/// The tile of a dot op as code generation takes it: the recorded one, checked against the
/// op's ring; `Ok(None)` where none is recorded (the ISA's default tile).
pub fn tile_of<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Result<Option<KernelTile>, String> {
    let Some(tile) = read_tile(op)? else {
        return Ok(None);
    };
    let t = op
        .operand(0)
        .map_err(|e| e.to_string())?
        .r#type()
        .to_string();
    check(dot_kind(&t)?, &tile).map_err(|e| format!("`{}`: {e}", op_name(op)))?;
    Ok(Some(tile))
}

impl Pass for KernelTilePass {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ctx = cx.context();
        let mut func = module.body().first_operation_mut();
        while let Some(f) = func {
            func = f.next_in_block_mut();
            if op_name(&f) != "func.func" || get_str(&f, "sym_name").as_deref() != Ok("query") {
                continue;
            }
            let batch = get_int(&f, "mpc.query_batch").unwrap_or(1).max(1) as u64;
            let Some(block) = f.region(0).ok().and_then(|r| r.first_block()) else {
                continue;
            };
            // Codes per query: the rotations a value carries (one code otherwise), and their
            // shifts.
            let mut rotations: BTreeMap<usize, u64> = BTreeMap::new();
            let mut shifts: BTreeMap<usize, (i64, i64)> = BTreeMap::new();
            let mut cur = block.first_operation_mut();
            while let Some(mut op) = cur {
                cur = op.next_in_block_mut();
                let name = op_name(&op);
                if name == "mpc.rotate" {
                    let (lo, hi) = (get_int(&op, "lo"), get_int(&op, "hi"));
                    if let (Ok(lo), Ok(hi), Ok(r)) = (lo, hi, op.result(0)) {
                        rotations.insert(r.to_raw().ptr as usize, (hi - lo + 1).max(1) as u64);
                        shifts.insert(r.to_raw().ptr as usize, (lo, hi));
                    }
                    continue;
                }
                if !DOT_OPS.contains(&name.as_str()) {
                    continue;
                }
                let q = op.operand(0).map_err(|e| fail(e.to_string()))?;
                let kind = dot_kind(&q.r#type().to_string()).map_err(fail)?;
                let sixteen = matches!(
                    kind,
                    DotKind::Galois | DotKind::Replicated { storage_bits: 16 }
                );
                match shifts.get(&(q.to_raw().ptr as usize)) {
                    Some(&(lo, hi))
                        if sixteen && hi > lo && op.attribute(POLYPHASE_ATTR).is_err() =>
                    {
                        let i64t = IntegerType::new(ctx, 64).into();
                        let both: Vec<Attribute> = [lo, hi]
                            .iter()
                            .map(|&v| IntegerAttribute::new(i64t, v).into())
                            .collect();
                        op.set_attribute(POLYPHASE_ATTR, ArrayAttribute::new(ctx, &both).into());
                    }
                    _ => {}
                }
                polyphase_of(&op).map_err(fail)?;
                if let Some(tile) = read_tile(&op).map_err(fail)? {
                    check(kind, &tile).map_err(|e| fail(format!("`{name}`: {e}")))?;
                    continue;
                }
                let per_query = rotations
                    .get(&(q.to_raw().ptr as usize))
                    .copied()
                    .unwrap_or(1);
                let codes = if name.starts_with("mpc.batch_") {
                    batch * per_query
                } else {
                    per_query
                };
                let t = choose(kind, codes);
                let i64t = IntegerType::new(ctx, 64).into();
                let pair_attr = |a: u32, b: u32| -> Attribute {
                    let both: Vec<Attribute> = [a, b]
                        .iter()
                        .map(|&v| IntegerAttribute::new(i64t, i64::from(v)).into())
                        .collect();
                    ArrayAttribute::new(ctx, &both).into()
                };
                op.set_attribute(TILE_ATTR, pair_attr(t.records, t.codes));
                op.set_attribute(CODES_ATTR, int_attr(ctx, CODES_ATTR, t.call_codes as i64).1);
                op.set_attribute(
                    PANEL_ATTR,
                    int_attr(ctx, PANEL_ATTR, t.panel_bytes as i64).1,
                );
                op.set_attribute(
                    K_CHUNK_ATTR,
                    int_attr(ctx, K_CHUNK_ATTR, t.k_chunk_bytes as i64).1,
                );
                op.set_attribute(
                    RECORD_PANEL_ATTR,
                    int_attr(ctx, RECORD_PANEL_ATTR, t.record_panel_bytes as i64).1,
                );
                if t.unchunked_alternative {
                    op.set_attribute(NEST_ATTR, str_attr(ctx, NEST_ATTR, UNCHUNKED).1);
                }
                if let Some((records, codes)) = t.alternative_tile {
                    op.set_attribute(ALT_TILE_ATTR, pair_attr(records, codes));
                }
            }
        }
        Ok(module)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_from_operand_types() {
        assert_eq!(
            dot_kind("!mpc.code<16 : i64>"),
            Ok(DotKind::Replicated { storage_bits: 16 })
        );
        assert_eq!(
            dot_kind("!mpc.code<60 : i64>"),
            Ok(DotKind::Replicated { storage_bits: 64 })
        );
        assert_eq!(dot_kind("!mpc.shamir<\"gr4\">"), Ok(DotKind::Galois));
        assert_eq!(dot_kind("!mpc.shamir<\"fp\">"), Ok(DotKind::Prime));
        assert!(dot_kind("i64").is_err());
    }
}
