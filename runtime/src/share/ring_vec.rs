//! A vector of Z_2^k elements stored in the narrowest of u16/u32/u64 that holds k bits.

/// Share components of one party, stored as canonical residues (`< 2^k`).
#[derive(Clone, PartialEq, Eq)]
pub enum RingVec {
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

// Shares must never reach a log: print only the shape.
impl std::fmt::Debug for RingVec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RingVec(u{} x {})", self.word_bytes() * 8, self.len())
    }
}

impl RingVec {
    /// Bytes per element for Z_2^k: 2, 4 or 8 for k <= 16, 32, 64; `None` outside `1..=64`.
    pub fn word_bytes_for(ring_bits: u32) -> Option<usize> {
        match ring_bits {
            1..=16 => Some(2),
            17..=32 => Some(4),
            33..=64 => Some(8),
            _ => None,
        }
    }

    /// `len` zeros in the word type for Z_2^k, or `None` if `k` is not in `1..=64`.
    pub fn zeros(ring_bits: u32, len: usize) -> Option<RingVec> {
        Some(match Self::word_bytes_for(ring_bits)? {
            2 => RingVec::U16(vec![0; len]),
            4 => RingVec::U32(vec![0; len]),
            _ => RingVec::U64(vec![0; len]),
        })
    }

    /// Reduces each value mod 2^k and stores it in the word type for Z_2^k.
    pub fn from_u64s(ring_bits: u32, values: impl IntoIterator<Item = u64>) -> Option<RingVec> {
        let mask = ring_mask(ring_bits)?;
        let values = values.into_iter().map(|v| v & mask);
        Some(match Self::word_bytes_for(ring_bits)? {
            2 => RingVec::U16(values.map(|v| v as u16).collect()),
            4 => RingVec::U32(values.map(|v| v as u32).collect()),
            _ => RingVec::U64(values.collect()),
        })
    }

    /// An empty vector for Z_2^k with room for `capacity` elements, or `None` if `k` is not in
    /// `1..=64`. Its memory is advised to take huge pages (a loaded gallery's components are
    /// made this way and read by the dot kernels: [`crate::sys::advise_huge_pages`]).
    pub fn with_capacity(ring_bits: u32, capacity: usize) -> Option<RingVec> {
        fn advised<T>(capacity: usize) -> Vec<T> {
            let mut v = Vec::with_capacity(capacity);
            crate::sys::advise_huge_pages(&mut v);
            v
        }
        Some(match Self::word_bytes_for(ring_bits)? {
            2 => RingVec::U16(advised(capacity)),
            4 => RingVec::U32(advised(capacity)),
            _ => RingVec::U64(advised(capacity)),
        })
    }

    /// Appends `value`, keeping its low 16/32/64 bits: reduce it mod 2^k first.
    pub fn push(&mut self, value: u64) {
        match self {
            RingVec::U16(v) => v.push(value as u16),
            RingVec::U32(v) => v.push(value as u32),
            RingVec::U64(v) => v.push(value),
        }
    }

    /// Appends `words`: one block copy when this vector stores u16 words, else each widened.
    pub fn extend_u16(&mut self, words: &[u16]) {
        match self {
            RingVec::U16(v) => v.extend_from_slice(words),
            other => words.iter().for_each(|&x| other.push(u64::from(x))),
        }
    }

    /// Appends `words`: one block copy when this vector stores u32 words, else each converted.
    pub fn extend_u32(&mut self, words: &[u32]) {
        match self {
            RingVec::U32(v) => v.extend_from_slice(words),
            other => words.iter().for_each(|&x| other.push(u64::from(x))),
        }
    }

    /// Appends `words`: one block copy when this vector stores u64 words, else each converted.
    pub fn extend_u64(&mut self, words: &[u64]) {
        match self {
            RingVec::U64(v) => v.extend_from_slice(words),
            other => words.iter().for_each(|&x| other.push(x)),
        }
    }

    /// Appends `more`'s elements; `false` (nothing appended) when its word type differs.
    pub fn append(&mut self, more: RingVec) -> bool {
        match (self, more) {
            (RingVec::U16(a), RingVec::U16(b)) => a.extend(b),
            (RingVec::U32(a), RingVec::U32(b)) => a.extend(b),
            (RingVec::U64(a), RingVec::U64(b)) => a.extend(b),
            _ => return false,
        }
        true
    }

    /// Sets the elements `range` to 0 (a deleted record's shares: shares of 0 at every party).
    pub fn zero(&mut self, range: std::ops::Range<usize>) {
        match self {
            RingVec::U16(v) => v[range].fill(0),
            RingVec::U32(v) => v[range].fill(0),
            RingVec::U64(v) => v[range].fill(0),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            RingVec::U16(v) => v.len(),
            RingVec::U32(v) => v.len(),
            RingVec::U64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn word_bytes(&self) -> usize {
        match self {
            RingVec::U16(_) => 2,
            RingVec::U32(_) => 4,
            RingVec::U64(_) => 8,
        }
    }

    /// Element `i` widened to u64.
    pub fn get(&self, i: usize) -> Option<u64> {
        match self {
            RingVec::U16(v) => v.get(i).map(|&x| u64::from(x)),
            RingVec::U32(v) => v.get(i).map(|&x| u64::from(x)),
            RingVec::U64(v) => v.get(i).copied(),
        }
    }

    /// All elements widened to u64.
    pub fn iter_u64(&self) -> Box<dyn Iterator<Item = u64> + '_> {
        match self {
            RingVec::U16(v) => Box::new(v.iter().map(|&x| u64::from(x))),
            RingVec::U32(v) => Box::new(v.iter().map(|&x| u64::from(x))),
            RingVec::U64(v) => Box::new(v.iter().copied()),
        }
    }

    /// Index of the first element that is not a canonical residue mod 2^k.
    pub fn first_out_of_range(&self, ring_bits: u32) -> Option<usize> {
        let mask = ring_mask(ring_bits)?;
        self.iter_u64().position(|x| x & !mask != 0)
    }
}

/// `2^k - 1`, or `None` if `k` is not in `1..=64`.
pub fn ring_mask(ring_bits: u32) -> Option<u64> {
    match ring_bits {
        64 => Some(u64::MAX),
        1..=63 => Some((1u64 << ring_bits) - 1),
        _ => None,
    }
}

impl From<Vec<u16>> for RingVec {
    fn from(v: Vec<u16>) -> Self {
        RingVec::U16(v)
    }
}

impl From<Vec<u32>> for RingVec {
    fn from(v: Vec<u32>) -> Self {
        RingVec::U32(v)
    }
}

impl From<Vec<u64>> for RingVec {
    fn from(v: Vec<u64>) -> Self {
        RingVec::U64(v)
    }
}

/// Runs `$body` with the components of replicated shares bound as `$o` and `$p`, slices of one
/// storage width; an error if the two differ in width (a bug in the schedule, never user input).
macro_rules! on_pair {
    ($own:expr, $prev:expr, |$o:ident, $p:ident| $body:expr) => {
        match ($own, $prev) {
            ($crate::share::RingVec::U16($o), $crate::share::RingVec::U16($p)) => Ok($body),
            ($crate::share::RingVec::U32($o), $crate::share::RingVec::U32($p)) => Ok($body),
            ($crate::share::RingVec::U64($o), $crate::share::RingVec::U64($p)) => Ok($body),
            _ => Err($crate::error::RuntimeError::Schedule(
                "share components differ in width".into(),
            )),
        }
    };
}
pub(crate) use on_pair;

/// Width-generic helpers on ring vectors.
pub trait RingVecExt {
    fn slice(&self, range: std::ops::Range<usize>) -> RingVec;
    fn gather(&self, index: &[usize]) -> RingVec;
    /// [`RingVecExt::gather`], negating (mod 2^k) the output elements `negate` names.
    fn gather_negating(&self, index: &[usize], negate: &dyn Fn(usize) -> bool) -> RingVec;
    /// Appends `other`'s elements; false (and `self` unchanged) if the widths differ.
    fn extend_with(&mut self, other: &RingVec) -> bool;
}

impl RingVecExt for RingVec {
    fn slice(&self, r: std::ops::Range<usize>) -> RingVec {
        match self {
            RingVec::U16(v) => RingVec::U16(v[r].to_vec()),
            RingVec::U32(v) => RingVec::U32(v[r].to_vec()),
            RingVec::U64(v) => RingVec::U64(v[r].to_vec()),
        }
    }
    fn gather(&self, index: &[usize]) -> RingVec {
        match self {
            RingVec::U16(v) => RingVec::U16(index.iter().map(|&i| v[i]).collect()),
            RingVec::U32(v) => RingVec::U32(index.iter().map(|&i| v[i]).collect()),
            RingVec::U64(v) => RingVec::U64(index.iter().map(|&i| v[i]).collect()),
        }
    }
    fn gather_negating(&self, index: &[usize], negate: &dyn Fn(usize) -> bool) -> RingVec {
        macro_rules! go {
            ($v:expr) => {
                index
                    .iter()
                    .enumerate()
                    .map(|(j, &i)| {
                        if negate(j) {
                            $v[i].wrapping_neg()
                        } else {
                            $v[i]
                        }
                    })
                    .collect()
            };
        }
        match self {
            RingVec::U16(v) => RingVec::U16(go!(v)),
            RingVec::U32(v) => RingVec::U32(go!(v)),
            RingVec::U64(v) => RingVec::U64(go!(v)),
        }
    }
    fn extend_with(&mut self, other: &RingVec) -> bool {
        match (self, other) {
            (RingVec::U16(a), RingVec::U16(b)) => a.extend_from_slice(b),
            (RingVec::U32(a), RingVec::U32(b)) => a.extend_from_slice(b),
            (RingVec::U64(a), RingVec::U64(b)) => a.extend_from_slice(b),
            _ => return false,
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_reduction() {
        assert_eq!(RingVec::word_bytes_for(0), None);
        assert_eq!(RingVec::word_bytes_for(16), Some(2));
        assert_eq!(RingVec::word_bytes_for(17), Some(4));
        assert_eq!(RingVec::word_bytes_for(64), Some(8));
        assert_eq!(RingVec::word_bytes_for(65), None);
        let v = RingVec::from_u64s(12, [u64::MAX, 5]).unwrap();
        assert_eq!(v, RingVec::U16(vec![0xFFF, 5]));
        assert_eq!(v.first_out_of_range(12), None);
        assert_eq!(
            RingVec::U16(vec![1, 0x1000]).first_out_of_range(12),
            Some(1)
        );
        assert_eq!(
            RingVec::from_u64s(64, [u64::MAX]).unwrap().get(0),
            Some(u64::MAX)
        );
        assert_eq!(format!("{v:?}"), "RingVec(u16 x 2)");
        let mut w = RingVec::with_capacity(20, 2).unwrap();
        w.push(0xFFFFF);
        w.push(3);
        assert_eq!(w, RingVec::U32(vec![0xFFFFF, 3]));
    }

    /// Block appends equal element-by-element pushes, into every storage width.
    #[test]
    fn extends_equal_pushes_in_every_width() {
        let (a, b, c) = ([0u16, 1, 0xFFFF], [7u32, 0xFFFF_FFFF], [u64::MAX, 2]);
        for k in [16, 32, 64] {
            let mut fast = RingVec::with_capacity(k, 0).unwrap();
            let mut slow = RingVec::with_capacity(k, 0).unwrap();
            fast.extend_u16(&a);
            fast.extend_u32(&b);
            fast.extend_u64(&c);
            a.iter().for_each(|&x| slow.push(u64::from(x)));
            b.iter().for_each(|&x| slow.push(u64::from(x)));
            c.iter().for_each(|&x| slow.push(x));
            assert_eq!(fast, slow, "k = {k}");
            assert_eq!(fast.len(), 7);
        }
    }
}
