//! The layout of a secret-bit vector: which binders its entries range over.
//!
//! A value depends on at most one record binder and at most one rotations binder; entries are
//! record-major, rotation-minor (the order `mpc.masked_dot` produces). A value that depends on
//! neither has one entry per query and is broadcast when combined with a larger one.

use crate::sema::program::BinderId;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Layout {
    /// The record binder the entries range over.
    pub record: Option<BinderId>,
    /// The rotations binder and its number of rotations.
    pub rotation: Option<(BinderId, u32)>,
}

impl Layout {
    pub const QUERY: Layout = Layout {
        record: None,
        rotation: None,
    };

    pub fn is_query(self) -> bool {
        self.record.is_none() && self.rotation.is_none()
    }

    /// The layout of an elementwise combination, if the two can be combined: equal layouts, or
    /// one of them per query (broadcast).
    pub fn combine(self, other: Layout) -> Option<Layout> {
        if self == other || other.is_query() {
            Some(self)
        } else if self.is_query() {
            Some(other)
        } else {
            None
        }
    }

    /// How a quantifier over `binders` reduces this layout: the group size of the reduction
    /// (0: everything) and the layout left, or `None` when the reduction would not be over
    /// consecutive entries (records reduced while rotations stay).
    pub fn reduce(self, binders: &[BinderId]) -> Option<(u64, Layout)> {
        let rec = self.record.filter(|b| binders.contains(b));
        let rot = self.rotation.filter(|(b, _)| binders.contains(b));
        match (rec, rot) {
            (Some(_), Some(_)) => Some((0, Layout::QUERY)),
            (None, Some((_, n))) if self.record.is_some() => Some((
                u64::from(n),
                Layout {
                    record: self.record,
                    rotation: None,
                },
            )),
            (None, Some(_)) => Some((0, Layout::QUERY)),
            (Some(_), None) if self.rotation.is_none() => Some((0, Layout::QUERY)),
            (Some(_), None) => None,
            (None, None) => Some((0, self)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REC: Layout = Layout {
        record: Some(0),
        rotation: None,
    };
    const REC_ROT: Layout = Layout {
        record: Some(0),
        rotation: Some((1, 31)),
    };
    const ROT: Layout = Layout {
        record: None,
        rotation: Some((1, 31)),
    };

    #[test]
    fn combining_broadcasts_only_per_query_values() {
        assert_eq!(REC.combine(Layout::QUERY), Some(REC));
        assert_eq!(Layout::QUERY.combine(REC_ROT), Some(REC_ROT));
        assert_eq!(REC.combine(REC), Some(REC));
        assert_eq!(REC.combine(REC_ROT), None);
        assert_eq!(ROT.combine(REC), None);
    }

    #[test]
    fn quantifiers_reduce_consecutive_groups() {
        // any c in rotations: per record, groups of 31.
        assert_eq!(REC_ROT.reduce(&[1]), Some((31, REC)));
        // any d in db, c in rotations: everything.
        assert_eq!(REC_ROT.reduce(&[0, 1]), Some((0, Layout::QUERY)));
        assert_eq!(ROT.reduce(&[1]), Some((0, Layout::QUERY)));
        assert_eq!(REC.reduce(&[0]), Some((0, Layout::QUERY)));
        // Records reduced while rotations stay: strided, refused.
        assert_eq!(REC_ROT.reduce(&[0]), None);
    }
}
