//! One iris code: packed code and mask bits, their grid layout, rotation and masked-bit encoding.
//!
//! Layout (the contract of ARCHITECTURE.md section 7): bit `i` is bit `i % 8` (least significant
//! first) of byte `i / 8`, and `i = row * (cols * 4) + col * 4 + k` with `row < 16`, `col < cols`,
//! `k < 4`, where `cols = bits / 64` (200 columns for the deployed 12 800-bit codes).

use std::fmt;

/// Rows of the iris grid.
pub const ROWS: usize = 16;
/// Bits per grid cell (the four Gabor filter responses of one position).
pub const BITS_PER_CELL: usize = 4;
/// Code length of the deployed system: l = 12 800 (Section 3 of the Large-Scale MPC paper); the
/// 16 rows x 200 columns x 4 bits layout is the deployed system's (its public code), not the
/// paper's.
pub const DEFAULT_CODE_BITS: usize = 12_800;

/// Why a code length or a pair of code and mask is not a valid iris code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IrisError {
    #[error("an iris code must have a positive number of bits that is a multiple of 64 (16 rows x 4 bits per cell), not {0}")]
    BadBitCount(usize),
    #[error("code is {code} bytes but mask is {mask} bytes: they must have the same length")]
    LengthMismatch { code: usize, mask: usize },
}

/// Checks that `bits` is a valid code length and returns the number of grid columns.
pub fn check_code_bits(bits: usize) -> Result<usize, IrisError> {
    if bits == 0 || !bits.is_multiple_of(ROWS * BITS_PER_CELL) {
        return Err(IrisError::BadBitCount(bits));
    }
    Ok(bits / (ROWS * BITS_PER_CELL))
}

/// The bit index of grid position (`row`, `col`, `k`) in a code with `cols` columns.
pub fn bit_index(row: usize, col: usize, k: usize, cols: usize) -> usize {
    row * (cols * BITS_PER_CELL) + col * BITS_PER_CELL + k
}

/// A plaintext iris code with its mask (a set mask bit means the code bit is valid).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct IrisCode {
    pub code: Vec<u8>,
    pub mask: Vec<u8>,
}

// Iris codes are biometric data: keep them out of logs and panic messages.
impl fmt::Debug for IrisCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IrisCode({} bits)", self.code.len() * 8)
    }
}

/// An iris code with the record id it is stored under.
#[derive(Clone, PartialEq, Eq, Debug, Default)]
pub struct IrisRecord {
    pub id: u64,
    pub iris: IrisCode,
}

impl AsRef<IrisCode> for IrisCode {
    fn as_ref(&self) -> &IrisCode {
        self
    }
}

impl AsRef<IrisCode> for IrisRecord {
    fn as_ref(&self) -> &IrisCode {
        &self.iris
    }
}

impl IrisCode {
    /// A checked code: equal lengths and a valid bit count.
    pub fn new(code: Vec<u8>, mask: Vec<u8>) -> Result<Self, IrisError> {
        if code.len() != mask.len() {
            return Err(IrisError::LengthMismatch {
                code: code.len(),
                mask: mask.len(),
            });
        }
        check_code_bits(code.len() * 8)?;
        Ok(IrisCode { code, mask })
    }

    /// All code bits zero and all mask bits clear (nothing valid).
    pub fn zeros(bits: usize) -> Result<Self, IrisError> {
        check_code_bits(bits)?;
        Ok(IrisCode {
            code: vec![0; bits / 8],
            mask: vec![0; bits / 8],
        })
    }

    /// Number of code bits.
    pub fn bits(&self) -> usize {
        self.code.len() * 8
    }

    /// Number of grid columns (`bits / 64`).
    pub fn cols(&self) -> usize {
        self.bits() / (ROWS * BITS_PER_CELL)
    }

    /// Code bit `i`. Panics if `i >= bits()`, like slice indexing.
    pub fn code_bit(&self, i: usize) -> bool {
        get_bit(&self.code, i)
    }

    /// Mask bit `i`. Panics if `i >= bits()`, like slice indexing.
    pub fn mask_bit(&self, i: usize) -> bool {
        get_bit(&self.mask, i)
    }

    /// Sets code bit `i`. Panics if `i >= bits()`, like slice indexing.
    pub fn set_code_bit(&mut self, i: usize, value: bool) {
        set_bit(&mut self.code, i, value)
    }

    /// Sets mask bit `i`. Panics if `i >= bits()`, like slice indexing.
    pub fn set_mask_bit(&mut self, i: usize, value: bool) {
        set_bit(&mut self.mask, i, value)
    }

    /// The code rotated by `s` columns: `rot(q, s)[row][col][k] = q[row][(col + s) mod cols][k]`,
    /// for code and mask alike; any `s` (negative too) works.
    ///
    /// Bits past the last full 64-bit group (only possible in an unchecked code) belong to no grid
    /// cell and are kept where they are.
    pub fn rotate(&self, s: i64) -> IrisCode {
        IrisCode {
            code: rotate_bits(&self.code, s),
            mask: rotate_bits(&self.mask, s),
        }
    }

    /// The code's mirror image, as a capture of the mirrored eye gives it (the deployed
    /// system's mirror-attack check compares it with the gallery): columns in reverse order,
    /// `mirror(q)[row][col][k] = q[row][cols - 1 - col][k]`, with the code bit flipped for odd
    /// `k` (a cell's bits are two filters' real and imaginary signs, and mirroring negates the
    /// odd-symmetric imaginary parts); the mask is mirrored without a flip. An involution.
    pub fn mirror(&self) -> IrisCode {
        let bits = self.bits();
        let cols = self.cols();
        let mut out = IrisCode {
            code: vec![0; self.code.len()],
            mask: vec![0; self.mask.len()],
        };
        for row in 0..ROWS {
            for col in 0..cols {
                for k in 0..BITS_PER_CELL {
                    let to = bit_index(row, col, k, cols);
                    let from = bit_index(row, cols - 1 - col, k, cols);
                    if from >= bits {
                        continue;
                    }
                    out.set_code_bit(to, self.code_bit(from) ^ (k % 2 == 1));
                    out.set_mask_bit(to, self.mask_bit(from));
                }
            }
        }
        out
    }

    /// The masked-bit vector of Section 4.1.1: `m - 2 (c & m)` per bit, i.e. T = -1 (valid one),
    /// U = 0 (masked out), F = 1 (valid zero), embedded in the ring of `T`.
    pub fn masked_bits<T: MaskedBitWord>(&self) -> Vec<T> {
        (0..self.bits().min(self.mask.len() * 8))
            .map(|i| match (self.mask_bit(i), self.code_bit(i)) {
                (false, _) => T::ZERO,
                (true, false) => T::ONE,
                (true, true) => T::MINUS_ONE,
            })
            .collect()
    }
}

/// Word types that can hold a masked bit (-1 is the all-ones word for unsigned rings Z_2^k).
pub trait MaskedBitWord: Copy {
    const ZERO: Self;
    const ONE: Self;
    const MINUS_ONE: Self;
}

macro_rules! masked_bit_word {
    ($($t:ty),*) => {$(
        impl MaskedBitWord for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            const MINUS_ONE: Self = (0 as $t).wrapping_sub(1);
        }
    )*};
}
masked_bit_word!(u8, u16, u32, u64, u128, i8, i16, i32, i64, i128);

fn get_bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

fn set_bit(bytes: &mut [u8], i: usize, value: bool) {
    let bit = 1u8 << (i % 8);
    if value {
        bytes[i / 8] |= bit;
    } else {
        bytes[i / 8] &= !bit;
    }
}

fn rotate_bits(src: &[u8], s: i64) -> Vec<u8> {
    let mut dst = src.to_vec();
    let cols = src.len() * 8 / (ROWS * BITS_PER_CELL);
    if cols == 0 {
        return dst;
    }
    let shift = s.rem_euclid(cols as i64) as usize;
    if shift == 0 {
        return dst;
    }
    for row in 0..ROWS {
        for col in 0..cols {
            let from = (col + shift) % cols;
            for k in 0..BITS_PER_CELL {
                let v = get_bit(src, bit_index(row, from, k, cols));
                set_bit(&mut dst, bit_index(row, col, k, cols), v);
            }
        }
    }
    dst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_with(bits: usize, ones: &[usize], mask_ones: &[usize]) -> IrisCode {
        let mut c = IrisCode::zeros(bits).unwrap();
        for &i in ones {
            c.set_code_bit(i, true);
        }
        for &i in mask_ones {
            c.set_mask_bit(i, true);
        }
        c
    }

    #[test]
    fn bit_order_is_lsb_first() {
        let c = code_with(64, &[0, 9], &[7]);
        assert_eq!(c.code[0], 0b0000_0001);
        assert_eq!(c.code[1], 0b0000_0010);
        assert_eq!(c.mask[0], 0b1000_0000);
    }

    #[test]
    fn layout_of_deployed_codes() {
        assert_eq!(check_code_bits(DEFAULT_CODE_BITS), Ok(200));
        assert_eq!(bit_index(1, 0, 0, 200), 800);
        assert_eq!(bit_index(15, 199, 3, 200), 12_799);
        assert_eq!(check_code_bits(0), Err(IrisError::BadBitCount(0)));
        assert_eq!(check_code_bits(100), Err(IrisError::BadBitCount(100)));
    }

    #[test]
    fn new_rejects_bad_shapes() {
        assert_eq!(
            IrisCode::new(vec![0; 8], vec![0; 16]),
            Err(IrisError::LengthMismatch { code: 8, mask: 16 })
        );
        assert_eq!(
            IrisCode::new(vec![0; 4], vec![0; 4]),
            Err(IrisError::BadBitCount(32))
        );
        assert!(IrisCode::new(vec![0; 8], vec![0; 8]).is_ok());
    }

    #[test]
    fn rotation_follows_the_contract() {
        // 128 bits: 16 rows x 2 columns. Mark (row 3, col 1, k 2) and rotate by 1: it must move to
        // col 0 because rot(q, 1)[row][0][k] = q[row][1][k].
        let cols = 2;
        let c = code_with(
            128,
            &[bit_index(3, 1, 2, cols)],
            &[bit_index(5, 0, 1, cols)],
        );
        let r = c.rotate(1);
        assert!(r.code_bit(bit_index(3, 0, 2, cols)));
        assert_eq!(r.code.iter().map(|b| b.count_ones()).sum::<u32>(), 1);
        assert!(r.mask_bit(bit_index(5, 1, 1, cols)));
        assert_eq!(r.mask.iter().map(|b| b.count_ones()).sum::<u32>(), 1);
    }

    #[test]
    fn rotation_pointwise_on_full_codes() {
        let mut c = IrisCode::zeros(DEFAULT_CODE_BITS).unwrap();
        // A deterministic, irregular pattern.
        for i in 0..DEFAULT_CODE_BITS {
            c.set_code_bit(i, (i * 7919) % 13 < 5);
            c.set_mask_bit(i, (i * 104_729) % 11 < 9);
        }
        let cols = c.cols();
        for s in [-15i64, -1, 1, 7, 15, 200, -401] {
            let r = c.rotate(s);
            for row in 0..ROWS {
                for col in 0..cols {
                    let from = (col as i64 + s).rem_euclid(cols as i64) as usize;
                    for k in 0..BITS_PER_CELL {
                        let d = bit_index(row, col, k, cols);
                        let o = bit_index(row, from, k, cols);
                        assert_eq!(r.code_bit(d), c.code_bit(o));
                        assert_eq!(r.mask_bit(d), c.mask_bit(o));
                    }
                }
            }
        }
        assert_eq!(c.rotate(5).rotate(-5), c);
        assert_eq!(c.rotate(200), c);
        assert_eq!(c.rotate(3).rotate(4), c.rotate(7));
    }

    #[test]
    fn rotation_of_unchecked_lengths_does_not_panic() {
        let c = IrisCode {
            code: vec![0xAB; 3],
            mask: vec![0xCD; 3],
        };
        assert_eq!(c.rotate(4), c);
    }

    #[test]
    fn masked_bits_encoding() {
        // bit 0: mask 0 -> U = 0; bit 1: mask 1, code 0 -> F = 1; bit 2: mask 1, code 1 -> T = -1;
        // bit 3: mask 0, code 1 -> U = 0.
        let c = code_with(64, &[2, 3], &[1, 2]);
        let m16: Vec<u16> = c.masked_bits();
        assert_eq!(&m16[..4], &[0, 1, 0xFFFF, 0]);
        let m64: Vec<u64> = c.masked_bits();
        assert_eq!(m64[2], u64::MAX);
        let mi: Vec<i32> = c.masked_bits();
        assert_eq!(&mi[..4], &[0, 1, -1, 0]);
        assert_eq!(m16.len(), 64);
        // m - 2 (c & m) for every bit.
        for (i, v) in mi.iter().enumerate() {
            let (m, b) = (c.mask_bit(i) as i32, c.code_bit(i) as i32);
            assert_eq!(*v, m - 2 * (b & m));
        }
    }

    #[test]
    fn debug_does_not_print_bits() {
        let c = code_with(64, &[1], &[1]);
        assert_eq!(format!("{c:?}"), "IrisCode(64 bits)");
    }

    /// Codes of `bits` bits from a seed (xorshift), about half the bits set in code and mask.
    fn pseudo_random(bits: usize, seed: u64) -> IrisCode {
        let mut state = seed | 1;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        };
        IrisCode {
            code: (0..bits / 8).map(|_| next()).collect(),
            mask: (0..bits / 8).map(|_| next() | next()).collect(),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Mirroring twice gives the code back; mirroring reverses the direction of rotation;
        /// the overlap of two codes (and so their distance) is the overlap of their mirrors.
        #[test]
        fn mirror_is_an_involution_that_reverses_rotation(
            seed in 1u64..u64::MAX, other in 1u64..u64::MAX, cols in 1usize..12, s in -20i64..20
        ) {
            let bits = cols * 64;
            let (a, b) = (pseudo_random(bits, seed), pseudo_random(bits, other));
            proptest::prop_assert_eq!(a.mirror().mirror(), a.clone());
            proptest::prop_assert_eq!(a.rotate(s).mirror(), a.mirror().rotate(-s));
            proptest::prop_assert_eq!(
                crate::iris::matching::overlap_counts(&a.mirror(), &b.mirror()),
                crate::iris::matching::overlap_counts(&a, &b)
            );
        }
    }

    /// Cell by cell: columns reversed, the odd (imaginary) bits flipped, masks unflipped.
    #[test]
    fn mirror_reverses_columns_and_flips_imaginary_bits() {
        let bits = 3 * 64;
        let cols = 3;
        // Row 2, column 0: bits k = 0 and 1 set, valid.
        let one = |k| bit_index(2, 0, k, cols);
        let c = code_with(bits, &[one(0), one(1)], &[one(0), one(1), one(2)]);
        let m = c.mirror();
        let at = |k| bit_index(2, cols - 1, k, cols);
        assert!(m.code_bit(at(0)), "real bit kept");
        assert!(!m.code_bit(at(1)), "imaginary bit flipped");
        assert!(!m.code_bit(at(2)), "real bit kept (0)");
        assert!(m.code_bit(at(3)), "imaginary bit flipped (0 to 1)");
        assert!(m.mask_bit(at(0)) && m.mask_bit(at(1)) && m.mask_bit(at(2)) && !m.mask_bit(at(3)));
        // Everything else of the mirror's last column of row 2 came from column 0 only.
        assert!(!m.mask_bit(bit_index(2, 0, 0, cols)));
    }
}
