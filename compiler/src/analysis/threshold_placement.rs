//! Threshold placement: which share component adds each plain-mask comparison's public
//! threshold, and so which parties need its public mask lengths.
//!
//! Lemma 1's test `MSB(T(ml) − dot)` adds the public `T(ml)` to one share component and negates
//! the others; only the parties holding that component read `ml`. The runtime's
//! [`ThresholdPlacement::RecordThirds`] lets component c add it on the c-th third of each
//! call's records, so the popcounts that every party used to repeat are shared out: a party
//! computes the mask lengths of one third of the records under additive shares (each
//! component held by one party) and of two thirds under replicated ones (each held by two).
//!
//! The analysis reads, for every mask-length op (`mpc.mask_len`, `mpc.batch_mask_len`), who
//! reads its value: a threshold op (`mpc.sub_threshold`, `mpc.sub_threshold_p`) as its mask
//! lengths, whose dot-product operand's type says how many parties hold a component, or any
//! other op (which needs every value at every party). A value read only by threshold ops can
//! be computed by record thirds; the pass `threshold-placement` records the decision:
//!
//! - on the mask-length op `computed_by = "record_thirds"` and `holders = 1|2` (absent: every
//!   party computes every mask length);
//! - on each threshold op reading it `threshold_by = "record_thirds"` (absent: component 0).

use irisc_runtime::vocab::ThresholdPlacement;
use melior::ir::operation::OperationLike;

use crate::mlir::{get_int, get_str, op_name};

/// The attribute naming where a threshold op adds its threshold.
pub const THRESHOLD_ATTR: &str = "threshold_by";
/// The attribute naming which parties compute a mask-length op's values.
pub const COMPUTED_ATTR: &str = "computed_by";
/// Parties holding each share component, on a mask-length op computed by record thirds.
pub const HOLDERS_ATTR: &str = "holders";

/// The ops whose result is the public mask lengths of (record, code) pairs.
pub const MASK_LENGTH_OPS: [&str; 2] = ["mpc.mask_len", "mpc.batch_mask_len"];
/// The ops that add a public threshold computed from mask lengths (their operand 1).
pub const THRESHOLD_OPS: [&str; 2] = ["mpc.sub_threshold", "mpc.sub_threshold_p"];

/// How one op reads a mask-length value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskRead {
    /// A threshold op, as its mask lengths, over shares whose components are each held by
    /// `holders` parties.
    Threshold { holders: usize },
    /// Anything else: every party needs every value.
    Other,
}

/// Parties holding each component of a threshold op's dot-product operand, from its type:
/// additive shares (`!mpc.add<k>`) one, replicated ones (`!mpc.rep<k>`, `!mpc.rep_p`) two.
pub fn holders_of(dot_type: &str) -> Option<usize> {
    if dot_type.starts_with("!mpc.add<") {
        Some(1)
    } else if dot_type.starts_with("!mpc.rep<") || dot_type.starts_with("!mpc.rep_p") {
        Some(2)
    } else {
        None
    }
}

/// The holders a mask-length value computed by record thirds needs for these reads: the most
/// any read needs (a third computed by parties c and c + 1 serves an additive read by party c
/// as well); `None` where some read needs every value, or nothing reads it.
pub fn thirds_holders(reads: &[MaskRead]) -> Option<usize> {
    let mut most = None;
    for r in reads {
        match r {
            MaskRead::Threshold { holders } => most = most.max(Some(*holders)),
            MaskRead::Other => return None,
        }
    }
    most
}

/// The placement recorded on a threshold op (absent: [`ThresholdPlacement::Component0`]).
pub fn threshold_placement_of<'c: 'a, 'a>(
    op: &impl OperationLike<'c, 'a>,
) -> Result<ThresholdPlacement, String> {
    if op.attribute(THRESHOLD_ATTR).is_err() {
        return Ok(ThresholdPlacement::Component0);
    }
    let v = get_str(op, THRESHOLD_ATTR)?;
    ThresholdPlacement::parse(&v).ok_or_else(|| {
        format!(
            "`{}`: attribute `{THRESHOLD_ATTR}` must be \"component0\" or \"record_thirds\", not \"{v}\"",
            op_name(op)
        )
    })
}

/// The holders per component recorded on a mask-length op: 0 where every party computes every
/// value (no `computed_by`, or `"every_party"`), else 1 or 2 (`computed_by = "record_thirds"`).
pub fn mask_holders_of<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Result<usize, String> {
    let name = op_name(op);
    if op.attribute(COMPUTED_ATTR).is_err() {
        if op.attribute(HOLDERS_ATTR).is_ok() {
            return Err(format!(
                "`{name}`: attribute `{HOLDERS_ATTR}` without `{COMPUTED_ATTR} = \"record_thirds\"`"
            ));
        }
        return Ok(0);
    }
    match get_str(op, COMPUTED_ATTR)?.as_str() {
        "every_party" if op.attribute(HOLDERS_ATTR).is_err() => Ok(0),
        "every_party" => Err(format!(
            "`{name}`: attribute `{HOLDERS_ATTR}` without `{COMPUTED_ATTR} = \"record_thirds\"`"
        )),
        "record_thirds" => match get_int(op, HOLDERS_ATTR) {
            Ok(h @ 1..=2) => Ok(h as usize),
            Ok(h) => Err(format!(
                "`{name}`: `{HOLDERS_ATTR} = {h}`: each share component is held by 1 (additive) or 2 (replicated) parties"
            )),
            Err(_) => Err(format!(
                "`{name}`: `{COMPUTED_ATTR} = \"record_thirds\"` needs `{HOLDERS_ATTR}` (1 or 2)"
            )),
        },
        other => Err(format!(
            "`{name}`: attribute `{COMPUTED_ATTR}` must be \"every_party\" or \"record_thirds\", not \"{other}\""
        )),
    }
}

/// Whether a read is served by a mask-length value computed with `holders` (0: everywhere):
/// `Err` with the reason where it is not. `placement` is the reading op's own, for threshold
/// reads.
pub fn check_read(
    read: MaskRead,
    placement: ThresholdPlacement,
    holders: usize,
) -> Result<(), String> {
    match (read, placement, holders) {
        (MaskRead::Other, _, 0) => Ok(()),
        (MaskRead::Other, _, _) => Err(
            "it reads mask lengths computed by record thirds, which only a threshold op can read"
                .into(),
        ),
        (MaskRead::Threshold { .. }, ThresholdPlacement::Component0, 0) => Ok(()),
        (MaskRead::Threshold { .. }, ThresholdPlacement::Component0, _) => Err(
            "component 0 adds its threshold on every record, but its mask lengths are computed by record thirds"
                .into(),
        ),
        (MaskRead::Threshold { .. }, ThresholdPlacement::RecordThirds, 0) => Err(
            "it adds its threshold by record thirds, but its mask lengths are not computed by record thirds"
                .into(),
        ),
        (MaskRead::Threshold { holders: need }, ThresholdPlacement::RecordThirds, h) => {
            if need <= h {
                Ok(())
            } else {
                Err(format!(
                    "its shares' components are each held by {need} parties, but its mask lengths by {h}"
                ))
            }
        }
    }
}

/// How the mask-length ops of a module are computed, for `irisc explain`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MaskLengthPlacement {
    /// Mask-length ops in the module.
    pub ops: usize,
    /// Of them, computed by record thirds with each component held by one party (additive
    /// shares read them) or by two (replicated).
    pub thirds_additive: usize,
    pub thirds_replicated: usize,
}

/// The blocks of every function of `module` (where mask-length ops and their readers live),
/// in order: what the analysis reads and the pass writes.
pub fn function_blocks<'c, 'a>(
    module: &'a melior::ir::Module<'c>,
) -> Vec<melior::ir::BlockRef<'c, 'a>> {
    use melior::ir::{block::BlockLike, RegionLike};
    let mut blocks = Vec::new();
    let mut func = module.body().first_operation();
    while let Some(f) = func {
        func = f.next_in_block();
        for region in f.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                block = b.next_in_region();
                blocks.push(b);
            }
        }
    }
    blocks
}

/// [`MaskLengthPlacement`] of the ops in `module`'s functions (a malformed placement counts as
/// computed by every party: the pass refuses it before anything runs).
pub fn placement_of(module: &melior::ir::Module<'_>) -> MaskLengthPlacement {
    use melior::ir::block::BlockLike;
    let mut p = MaskLengthPlacement::default();
    for b in function_blocks(module) {
        let mut cur = b.first_operation();
        while let Some(op) = cur {
            cur = op.next_in_block();
            if !MASK_LENGTH_OPS.contains(&op_name(&op).as_str()) {
                continue;
            }
            p.ops += 1;
            match mask_holders_of(&op) {
                Ok(1) => p.thirds_additive += 1,
                Ok(2) => p.thirds_replicated += 1,
                _ => {}
            }
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holders_from_share_types() {
        assert_eq!(holders_of("!mpc.add<16 : i64>"), Some(1));
        assert_eq!(holders_of("!mpc.rep<32 : i64>"), Some(2));
        assert_eq!(holders_of("!mpc.rep_p"), Some(2));
        assert_eq!(holders_of("!mpc.bits"), None);
    }

    #[test]
    fn a_value_by_thirds_only_when_thresholds_alone_read_it() {
        use MaskRead::*;
        assert_eq!(thirds_holders(&[]), None);
        assert_eq!(thirds_holders(&[Threshold { holders: 1 }]), Some(1));
        assert_eq!(
            thirds_holders(&[Threshold { holders: 1 }, Threshold { holders: 2 }]),
            Some(2)
        );
        assert_eq!(thirds_holders(&[Threshold { holders: 1 }, Other]), None);
    }

    #[test]
    fn reads_are_checked_against_the_computation() {
        use MaskRead::*;
        use ThresholdPlacement::*;
        let t1 = Threshold { holders: 1 };
        let t2 = Threshold { holders: 2 };
        assert!(check_read(t1, Component0, 0).is_ok());
        assert!(check_read(t1, RecordThirds, 1).is_ok());
        assert!(check_read(t1, RecordThirds, 2).is_ok());
        assert!(check_read(t2, RecordThirds, 2).is_ok());
        assert!(check_read(Other, Component0, 0).is_ok());
        assert!(check_read(t2, RecordThirds, 1)
            .unwrap_err()
            .contains("held by 2"));
        assert!(check_read(t1, RecordThirds, 0).is_err());
        assert!(check_read(t1, Component0, 1).is_err());
        assert!(check_read(Other, Component0, 2).is_err());
    }
}
