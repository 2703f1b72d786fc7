//! Bit-matrix transposition for IKNP: the 128 columns the base OTs' PRGs produce become one
//! 128-bit row per OT.
//!
//! Bit order everywhere: bit `c` of a `u64` (or `u128`) word is column `c` (least significant
//! first), and bit `j` of a column stored as words is bit `j % 64` of word `j / 64`.

/// The masks of the six swap stages of [`transpose_64x64`]: at stage `j` (32, 16, .., 1), the
/// columns whose index has bit `j` clear.
const STAGES: [(usize, u64); 6] = [
    (32, 0x0000_0000_ffff_ffff),
    (16, 0x0000_ffff_0000_ffff),
    (8, 0x00ff_00ff_00ff_00ff),
    (4, 0x0f0f_0f0f_0f0f_0f0f),
    (2, 0x3333_3333_3333_3333),
    (1, 0x5555_5555_5555_5555),
];

/// Transposes a 64 x 64 bit matrix in place: on return, bit `r` of `a[c]` is what bit `c` of
/// `a[r]` was.
///
/// The recursive block method (Hacker's Delight, 2nd ed., §7-3): at each stage the matrix is
/// seen as 2 x 2 blocks of size `j`, and the off-diagonal blocks of every row pair (`k`,
/// `k + j`) are swapped with one masked xor-swap on whole words, so 64 x 64 bits take
/// 6 x 32 word operations rather than 4096 bit moves.
#[inline]
pub fn transpose_64x64(a: &mut [u64; 64]) {
    for (j, mask) in STAGES {
        let mut base = 0;
        while base < 64 {
            for k in base..base + j {
                // Row k's high-half columns trade places with row k+j's low-half columns.
                let t = ((a[k] >> j) ^ a[k + j]) & mask;
                a[k + j] ^= t;
                a[k] ^= t << j;
            }
            base += 2 * j;
        }
    }
}

/// Transposes a 128 x `64 * w` bit matrix given by columns into `64 * w` rows of 128 bits.
///
/// `cols` holds 128 columns of `w` words each, column `i` at `cols[i * w .. (i + 1) * w]`
/// (`w` even: whole 128-row blocks); `rows` receives `64 * w` words, bit `i` of `rows[j]` being
/// bit `j` of column `i`. Each 128 x 128 block is four 64 x 64 transposes.
pub fn transpose_128_cols(cols: &[u64], w: usize, rows: &mut [u128]) {
    assert!(
        w.is_multiple_of(2),
        "columns must hold whole 128-row blocks"
    );
    assert_eq!(cols.len(), 128 * w, "128 columns of {w} words");
    assert_eq!(rows.len(), 64 * w, "one row per column bit");
    let mut quad = [0u64; 64];
    for (b, out) in rows.chunks_exact_mut(128).enumerate() {
        // Quadrant (h, v): columns 64h.., rows 64v.. of this block; it fills the low (h = 0)
        // or high (h = 1) half of rows 64v .. 64v + 64.
        for h in 0..2 {
            for v in 0..2 {
                for (c, q) in quad.iter_mut().enumerate() {
                    *q = cols[(64 * h + c) * w + 2 * b + v];
                }
                transpose_64x64(&mut quad);
                let half = &mut out[64 * v..64 * v + 64];
                if h == 0 {
                    for (o, q) in half.iter_mut().zip(quad.iter()) {
                        *o = *q as u128;
                    }
                } else {
                    for (o, q) in half.iter_mut().zip(quad.iter()) {
                        *o |= (*q as u128) << 64;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bit64(a: &[u64], i: usize) -> bool {
        (a[i / 64] >> (i % 64)) & 1 == 1
    }

    proptest! {
        /// Against a bit-by-bit reference.
        #[test]
        fn square_matches_reference(words in proptest::collection::vec(any::<u64>(), 64)) {
            let mut a: [u64; 64] = words.clone().try_into().unwrap();
            transpose_64x64(&mut a);
            for (r, word) in words.iter().enumerate() {
                for (c, col) in a.iter().enumerate() {
                    prop_assert_eq!((col >> r) & 1, (word >> c) & 1);
                }
            }
        }

        /// 128 columns of 128, 256 or 384 bits, against a bit-by-bit reference; the rows start
        /// as garbage, which must not show through.
        #[test]
        fn columns_match_reference(
            blocks in 1usize..4,
            seed in proptest::collection::vec(any::<u64>(), 128 * 6),
        ) {
            let w = 2 * blocks;
            let cols = &seed[..128 * w];
            let mut rows = vec![u128::MAX; 64 * w];
            transpose_128_cols(cols, w, &mut rows);
            for (j, row) in rows.iter().enumerate() {
                for i in 0..128 {
                    prop_assert_eq!((row >> i) & 1 == 1, bit64(&cols[i * w..(i + 1) * w], j));
                }
            }
        }
    }

    /// Twice is the identity.
    #[test]
    fn square_is_an_involution() {
        let orig: [u64; 64] =
            std::array::from_fn(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0xabcdef);
        let mut a = orig;
        transpose_64x64(&mut a);
        assert_ne!(a, orig);
        transpose_64x64(&mut a);
        assert_eq!(a, orig);
    }
}
