//! The plaintext iris-code model: the reference every secret-shared computation is tested against.
//!
//! - [`code`]: [`IrisCode`] and its packed bit layout (16 rows x `cols` columns x 4 bits), rotation,
//!   and the masked-bit encoding of Section 4.1.1;
//! - [`matching`]: Algorithm 1 in exact integer arithmetic, with rotations and over a gallery.

pub mod code;
pub mod matching;

pub use code::{
    bit_index, check_code_bits, IrisCode, IrisError, IrisRecord, MaskedBitWord, BITS_PER_CELL,
    DEFAULT_CODE_BITS, ROWS,
};
pub use matching::{
    fhd_match, matches_any_rotation, overlap_counts, plain_unique, public_threshold, Overlap,
    Thresholds,
};
