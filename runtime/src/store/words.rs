//! 16-bit share words that are either owned or borrowed in place from a store's memory map.

use std::ops::{Deref, Range};
use std::sync::Arc;

/// A `[u16]` that is either a range of a shared `Vec` or a range of a read-only memory map kept
/// alive by an `Arc`, so that a gallery scanned from a store costs page cache, not heap, and a
/// slice of either (a chunk of a gallery) is a view, not a copy. Cloning is cheap.
#[derive(Clone)]
pub struct Words(Repr);

#[derive(Clone)]
enum Repr {
    /// Words `start..start + len` of the vector.
    Owned {
        vec: Arc<Vec<u16>>,
        start: usize,
        len: usize,
    },
    /// Words `start..start + len` of the map, read as little-endian u16 (the map's start is
    /// page-aligned, checked at construction).
    Mapped {
        map: Arc<memmap2::Mmap>,
        start: usize,
        len: usize,
    },
}

impl Words {
    /// Words `start..start + len` of `map` in place; `None` if the range is outside the map or
    /// the map is not 2-byte aligned.
    pub fn mapped(map: Arc<memmap2::Mmap>, start: usize, len: usize) -> Option<Words> {
        let end = start.checked_add(len)?.checked_mul(2)?;
        if end > map.len() || map.as_ptr().align_offset(2) != 0 || cfg!(target_endian = "big") {
            return None;
        }
        Some(Words(Repr::Mapped { map, start, len }))
    }

    /// Whether the words are read in place from a map.
    pub fn is_mapped(&self) -> bool {
        matches!(self.0, Repr::Mapped { .. })
    }

    /// Words `range` of these words, sharing their storage (mapped or owned): nothing is
    /// copied. Panics if `range` is not within `0..self.len()`, like slicing a `[u16]`.
    pub fn slice(&self, range: Range<usize>) -> Words {
        assert!(
            range.start <= range.end && range.end <= self.len(),
            "words {range:?} of {}",
            self.len()
        );
        let mut w = self.clone();
        match &mut w.0 {
            Repr::Owned { start, len, .. } | Repr::Mapped { start, len, .. } => {
                *start += range.start;
                *len = range.len();
            }
        }
        w
    }
}

impl Words {
    /// The words as a vector of their own: without a copy when they are all of an owned
    /// vector no one else holds, else copied (a map's words, or a shared vector's).
    pub fn into_vec(self) -> Vec<u16> {
        match self.0 {
            Repr::Owned { vec, start, len } if start == 0 && len == vec.len() => {
                Arc::try_unwrap(vec).unwrap_or_else(|shared| shared.to_vec())
            }
            _ => self.to_vec(),
        }
    }
}

impl Deref for Words {
    type Target = [u16];

    fn deref(&self) -> &[u16] {
        match &self.0 {
            Repr::Owned { vec, start, len } => &vec[*start..start + len],
            Repr::Mapped { map, start, len } => {
                let bytes = &map[2 * start..2 * (start + len)];
                // Alignment and bounds were checked in `mapped`; the cast cannot fail.
                bytemuck::try_cast_slice(bytes).unwrap_or(&[])
            }
        }
    }
}

impl From<Vec<u16>> for Words {
    fn from(v: Vec<u16>) -> Words {
        let len = v.len();
        Words(Repr::Owned {
            vec: Arc::new(v),
            start: 0,
            len,
        })
    }
}

impl Default for Words {
    fn default() -> Words {
        Words::from(Vec::new())
    }
}

impl PartialEq for Words {
    fn eq(&self, other: &Words) -> bool {
        self[..] == other[..]
    }
}

impl Eq for Words {}

// Shares must never reach a log: print only the shape.
impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let how = if self.is_mapped() { "mapped" } else { "owned" };
        write!(f, "Words({how}, {} words)", self.len())
    }
}
