//! How each `mpc` op may be moved by the tiling: the one table that [`super::plan`] (which ops
//! may run on a chunk of records) and [`super::batch`] (which run unchanged over a batch of
//! queries) read, so a new op is classified once.

/// What the tiling may do with an op.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpClass {
    /// Applies element by element (a length-1 operand broadcasts): runs on any chunk of records
    /// and, unchanged, on the batch layout `[record][query][width]`.
    Elementwise,
    /// Counts the mask bits record by record (`mpc.mask_len`): a chunk runs it; a batch runs its
    /// batch form.
    MaskLength,
    /// OR / AND / sum of consecutive groups (`group = 0`: all): a chunk runs it when the groups
    /// lie inside a record.
    Reduction,
    /// A dot product of the gallery with the queries: the batch dot stage.
    GalleryDot,
    /// The dot product of a record with itself: record-local.
    SelfDot,
    /// Reveals a value: once per batch where all its operands are batch values.
    Opening,
    /// Prints or emits an answer: always in the finish stage, per query.
    Output,
}

const TABLE: &[(&str, OpClass)] = &[
    ("mpc.reshare", OpClass::Elementwise),
    ("mpc.reshare_p", OpClass::Elementwise),
    ("mpc.sub_threshold", OpClass::Elementwise),
    ("mpc.sub_threshold_p", OpClass::Elementwise),
    ("mpc.lin", OpClass::Elementwise),
    ("mpc.lin_mod", OpClass::Elementwise),
    ("mpc.lift", OpClass::Elementwise),
    ("mpc.const_lift", OpClass::Elementwise),
    ("mpc.lift_p", OpClass::Elementwise),
    ("mpc.const_lift_p", OpClass::Elementwise),
    ("mpc.mul", OpClass::Elementwise),
    ("mpc.msb", OpClass::Elementwise),
    ("mpc.additive_msb", OpClass::Elementwise),
    ("mpc.msb_mod", OpClass::Elementwise),
    ("mpc.msb_p", OpClass::Elementwise),
    ("mpc.bit_inject", OpClass::Elementwise),
    ("mpc.not", OpClass::Elementwise),
    ("mpc.and", OpClass::Elementwise),
    ("mpc.or", OpClass::Elementwise),
    ("mpc.mux", OpClass::Elementwise),
    ("mpc.mask_len", OpClass::MaskLength),
    ("mpc.or_tree", OpClass::Reduction),
    ("mpc.and_tree", OpClass::Reduction),
    ("mpc.sum", OpClass::Reduction),
    ("mpc.shamir_dot", OpClass::GalleryDot),
    ("mpc.masked_dot", OpClass::GalleryDot),
    ("mpc.self_dot", OpClass::SelfDot),
    ("mpc.open", OpClass::Opening),
    ("mpc.open_int", OpClass::Opening),
    ("mpc.output", OpClass::Output),
    ("mpc.emit", OpClass::Output),
];

/// The class of op `name`; `None` for ops the tiling does not move (they keep a body
/// untiled).
pub fn class_of(name: &str) -> Option<OpClass> {
    TABLE.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// Whether `name` works record by record on record-major values (group reductions inside a
/// record included), and so may run on a chunk of records.
pub fn is_record_local(name: &str) -> bool {
    matches!(
        class_of(name),
        Some(
            OpClass::Elementwise
                | OpClass::MaskLength
                | OpClass::Reduction
                | OpClass::GalleryDot
                | OpClass::SelfDot
        )
    )
}

pub fn is(name: &str, class: OpClass) -> bool {
    class_of(name) == Some(class)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every op the table names is an op of the dialect, named once.
    #[test]
    fn every_classified_op_is_defined_once() {
        let dialect = include_str!("../../../../dialects/mpc.irdl.mlir");
        for (i, (name, _)) in TABLE.iter().enumerate() {
            let short = name.strip_prefix("mpc.").unwrap();
            assert!(
                dialect.contains(&format!("irdl.operation @{short} ")),
                "{name} is not an operation of dialects/mpc.irdl.mlir"
            );
            assert!(
                TABLE[i + 1..].iter().all(|(n, _)| n != name),
                "{name} is classified twice"
            );
        }
    }

    #[test]
    fn openings_and_outputs_are_not_record_local() {
        for name in [
            "mpc.open",
            "mpc.open_int",
            "mpc.output",
            "mpc.emit",
            "mpc.unknown",
        ] {
            assert!(!is_record_local(name), "{name}");
        }
        assert!(is_record_local("mpc.masked_dot"));
        assert!(is_record_local("mpc.mask_len"));
    }
}
