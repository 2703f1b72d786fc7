//! `threshold-placement`: decides, for every mask-length op, whether its public mask lengths
//! are computed by record thirds ([`crate::analysis::threshold_placement`]), and records it on
//! the op and on the threshold ops that read it.
//!
//! A value that only threshold ops read is placed by record thirds (unless the option says
//! `component0`); one that any other op reads stays computed by every party. Placements
//! already in the module (a hand-written `.mlir`) are checked, not changed: an unknown value,
//! a threshold op by thirds whose mask lengths are not, a reader of thirds that is not a
//! threshold op, or too few holders for the shares read are refused with the reason.
//!
//! Before (after `mpc-tile` on `iris_ids.irs`):
//! ```mlir
//! %4 = "mpc.batch_mask_len"(%1, %3) : (...) -> !mpc.pub<16>
//! %5 = "mpc.sub_threshold"(%2, %4) {ratio_den = 200, ratio_num = 69} : (!mpc.add<16>, !mpc.pub<16>) -> !mpc.add<16>
//! ```
//! After:
//! ```mlir
//! %4 = "mpc.batch_mask_len"(%1, %3) {computed_by = "record_thirds", holders = 1} : (...) -> !mpc.pub<16>
//! %5 = "mpc.sub_threshold"(%2, %4) {ratio_den = 200, ratio_num = 69, threshold_by = "record_thirds"} : (...) -> !mpc.add<16>
//! ```

use super::{Pass, PassError};
use crate::analysis::threshold_placement::{
    check_read, function_blocks, holders_of, mask_holders_of, thirds_holders,
    threshold_placement_of, MaskRead, COMPUTED_ATTR, HOLDERS_ATTR, MASK_LENGTH_OPS, THRESHOLD_ATTR,
    THRESHOLD_OPS,
};
use crate::mlir::{int_attr, op_name, str_attr, Compiler};
use irisc_runtime::vocab::ThresholdPlacement;
use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationMutLike},
    BlockRef, Module, ValueLike,
};
use std::collections::{BTreeMap, BTreeSet};

pub(crate) const NAME: &str = "threshold-placement";

fn fail(message: impl Into<String>) -> PassError {
    PassError::Unsupported {
        pass: NAME,
        message: message.into(),
    }
}

/// The `threshold-placement` pass: `placement` is what a value only thresholds read gets.
#[derive(Debug, Clone, Copy)]
pub struct ThresholdPlacementPass {
    pub placement: ThresholdPlacement,
}

impl Default for ThresholdPlacementPass {
    fn default() -> Self {
        ThresholdPlacementPass {
            placement: ThresholdPlacement::RecordThirds,
        }
    }
}

impl ThresholdPlacementPass {
    /// From the pipeline option `placement=component0|record_thirds`.
    pub fn from_options(o: &super::PassOptions) -> Result<ThresholdPlacementPass, String> {
        let mut pass = ThresholdPlacementPass::default();
        for (k, v) in o {
            match k.as_str() {
                "placement" => {
                    pass.placement = ThresholdPlacement::parse(v).ok_or_else(|| {
                        format!("unknown placement `{v}` (component0 or record_thirds)")
                    })?
                }
                other => return Err(format!("threshold-placement has no option `{other}`")),
            }
        }
        Ok(pass)
    }
}

/// An op's identity within one walk.
fn key<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> usize {
    op.to_raw().ptr as usize
}

/// What one block decides: the mask-length ops to place by thirds (with their holders) and
/// the threshold ops that read them.
#[derive(Default)]
struct Decisions {
    masks: BTreeMap<usize, usize>,
    thresholds: BTreeSet<usize>,
}

/// Reads every mask-length value of `block`, checks recorded placements and decides the rest.
fn decide(block: &BlockRef<'_, '_>, placement: ThresholdPlacement) -> Result<Decisions, PassError> {
    // The mask-length ops by result value, with their recorded holders and whether anything
    // about their placement is recorded (on them or on a reader).
    struct Mask {
        op: usize,
        name: String,
        holders: usize,
        recorded: bool,
        reads: Vec<(usize, String, MaskRead, ThresholdPlacement)>,
    }
    let mut masks: BTreeMap<usize, Mask> = BTreeMap::new();
    let mut cur = block.first_operation();
    while let Some(op) = cur {
        cur = op.next_in_block();
        let name = op_name(&op);
        // Operands first: an op's own result is not among them.
        let placement_here = if THRESHOLD_OPS.contains(&name.as_str()) {
            Some(threshold_placement_of(&op).map_err(fail)?)
        } else {
            None
        };
        for i in 0..op.operand_count() {
            let v = op.operand(i).map_err(|e| fail(e.to_string()))?;
            let Some(mask) = masks.get_mut(&(v.to_raw().ptr as usize)) else {
                if i == 1 && placement_here == Some(ThresholdPlacement::RecordThirds) {
                    return Err(fail(format!(
                        "`{name}` adds its threshold by record thirds, but its mask lengths are \
                         not the result of a mask-length op ({})",
                        MASK_LENGTH_OPS.join(", ")
                    )));
                }
                continue;
            };
            let read = match placement_here {
                Some(_) if i == 1 => {
                    let dot = op.operand(0).map_err(|e| fail(e.to_string()))?;
                    match holders_of(&dot.r#type().to_string()) {
                        Some(holders) => MaskRead::Threshold { holders },
                        None => MaskRead::Other,
                    }
                }
                _ => MaskRead::Other,
            };
            let p = placement_here.unwrap_or(ThresholdPlacement::Component0);
            mask.recorded |= op.attribute(THRESHOLD_ATTR).is_ok();
            mask.reads.push((key(&op), name.clone(), read, p));
        }
        if MASK_LENGTH_OPS.contains(&name.as_str()) {
            let r = op.result(0).map_err(|e| fail(e.to_string()))?;
            masks.insert(
                r.to_raw().ptr as usize,
                Mask {
                    op: key(&op),
                    name: name.clone(),
                    holders: mask_holders_of(&op).map_err(fail)?,
                    recorded: op.attribute(COMPUTED_ATTR).is_ok(),
                    reads: Vec::new(),
                },
            );
        }
    }
    let mut out = Decisions::default();
    for mask in masks.values() {
        if mask.recorded {
            for (_, reader, read, p) in &mask.reads {
                check_read(*read, *p, mask.holders).map_err(|why| {
                    fail(format!(
                        "`{reader}` cannot read the mask lengths of `{}`: {why}",
                        mask.name
                    ))
                })?;
            }
            continue;
        }
        if placement != ThresholdPlacement::RecordThirds {
            continue;
        }
        let reads: Vec<MaskRead> = mask.reads.iter().map(|r| r.2).collect();
        if let Some(holders) = thirds_holders(&reads) {
            out.masks.insert(mask.op, holders);
            out.thresholds.extend(mask.reads.iter().map(|r| r.0));
        }
    }
    Ok(out)
}

impl Pass for ThresholdPlacementPass {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ctx = cx.context();
        for b in function_blocks(&module) {
            let d = decide(&b, self.placement)?;
            if d.masks.is_empty() {
                continue;
            }
            let mut cur = b.first_operation_mut();
            while let Some(mut op) = cur {
                cur = op.next_in_block_mut();
                let k = key(&op);
                if let Some(&holders) = d.masks.get(&k) {
                    op.set_attribute(
                        COMPUTED_ATTR,
                        str_attr(ctx, COMPUTED_ATTR, "record_thirds").1,
                    );
                    op.set_attribute(HOLDERS_ATTR, int_attr(ctx, HOLDERS_ATTR, holders as i64).1);
                } else if d.thresholds.contains(&k) {
                    op.set_attribute(
                        THRESHOLD_ATTR,
                        str_attr(ctx, THRESHOLD_ATTR, ThresholdPlacement::RecordThirds.name()).1,
                    );
                }
            }
        }
        Ok(module)
    }
}
