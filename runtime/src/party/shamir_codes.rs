//! Inputs shared with degree-1 Shamir sharings (F_p, p = 65519, or GR(2^16, d), d = 2, 4), as
//! one party holds them: its evaluation of every record's polynomial, one 16-bit word per
//! packed element (Bloemen et al., Section 4.3.2).

use crate::manifest::{InputRole, InputSharing};

/// `count` records of `elements` values each, as this party's Shamir shares.
///
/// Layout of `data`: record after record, `words` u16 words per record. For F_p a word is one
/// canonical field element (`words == elements`). For GR(2^16, d) every d values are packed into
/// the d coefficients of one ring element — plainly for queries, reversed for galleries
/// ([`crate::share::galois::Packing`]), so that the constant term of a query-gallery product is
/// their dot product — and `words` is `elements` rounded up to a multiple of d (zero padding,
/// which adds nothing to a dot product).
pub struct ShamirCodes {
    pub sharing: InputSharing,
    /// How the records were packed (GR: queries plainly, galleries reversed; equal for d = 2).
    pub packed_as: InputRole,
    pub count: usize,
    /// Values per record (bits of an iris code, or an embedding's dimension).
    pub elements: usize,
    /// Share words per record in `data`.
    pub words: usize,
    /// Record ids (gallery) or query ids; query indices for `earlier(q)`.
    pub ids: Vec<u64>,
    /// Public iris masks, `elements / 64` little-endian words per record (bit i of a record is
    /// bit i % 64 of word i / 64); all ones for secret masks, mask sections and embeddings.
    pub masks: Vec<u64>,
    /// This party's Shamir share of every word.
    pub data: Vec<u16>,
}

impl ShamirCodes {
    /// Mask words per record.
    pub fn mask_words(&self) -> usize {
        self.elements.div_ceil(64)
    }

    /// The records with indices in `range` (same packing).
    pub fn select(&self, range: std::ops::Range<usize>) -> ShamirCodes {
        let (w, m) = (self.words, self.mask_words());
        ShamirCodes {
            sharing: self.sharing,
            packed_as: self.packed_as,
            count: range.len(),
            elements: self.elements,
            words: self.words,
            ids: self.ids[range.clone()].to_vec(),
            masks: self.masks[range.start * m..range.end * m].to_vec(),
            data: self.data[range.start * w..range.end * w].to_vec(),
        }
    }
}

// Shares must never reach a log: show the shape only.
impl std::fmt::Debug for ShamirCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ShamirCodes({} x {} {} words, values hidden)",
            self.count, self.words, self.sharing
        )
    }
}
