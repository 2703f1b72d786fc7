//! What the GPU computes, on the host: the split of ring words into int8 limb planes, the limb
//! GEMM and the combine of the dot kernels, written from the contract's layout definitions
//! alone ([`crate::contract::gpu`]: planes, padding, the negated second side). Not behind the
//! `cuda` feature: it is the description the CUDA path is checked against (the unit tests here
//! compare it with [`crate::kernels::reference`], and the GPU tests compare the device's planes
//! and products with it), and it needs no GPU.
//!
//! The decomposition is paper 003, Section 4.4: a w-bit word is `w/8` balanced signed limbs
//! ([`split_limbs`]), and the product of two words mod 2^w is the sum of the limb products
//! `a_i · b_j · 2^(8(i+j))` with `i + j < w/8`. Replicated shares have two sides (Appendix C,
//! eq. 6: `<qa, ga> − <qb, gb>`); a row holds the two sides one after the other and the query's
//! side b is negated when it is split, so one GEMM computes the difference.

use crate::contract::gpu::{
    combine, k_pad, rows_pad, split_limbs, LimbWidth, BLOCK_COLS, BLOCK_ROWS, MAX_K,
};

/// A ring word the GPU kernels take (u16 or u32 storage).
pub trait LimbWord: Copy + Default + Send + Sync + 'static {
    /// The limb width of this storage.
    const WIDTH: LimbWidth;
    fn to_u64(self) -> u64;
    /// The low bits of `x` (wrapping to the storage width).
    fn from_u64(x: u64) -> Self;
}

impl LimbWord for u16 {
    const WIDTH: LimbWidth = LimbWidth::W16;
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(x: u64) -> u16 {
        x as u16
    }
}

impl LimbWord for u32 {
    const WIDTH: LimbWidth = LimbWidth::W32;
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    fn from_u64(x: u64) -> u32 {
        x as u32
    }
}

/// The shape of an operand's limb planes: `rows` rows of `sides · len` words of `width`,
/// stored as `width.limbs()` planes of `rows_pad × k_pad` int8 limbs (plane `j` first at
/// `j · rows_pad · k_pad`, then row-major), zero in every padding position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaneShape {
    pub width: LimbWidth,
    pub rows: u64,
    pub sides: u32,
    pub len: u64,
    pub rows_pad: u64,
    pub k_pad: u64,
}

impl PlaneShape {
    /// The shape of `rows` rows of `sides` sides of `len` words; an error if it cannot be
    /// addressed in this process or a side count other than 1 or 2.
    pub fn new(width: LimbWidth, rows: u64, sides: u32, len: u64) -> Result<PlaneShape, String> {
        if !(1..=2).contains(&sides) {
            return Err(format!("{sides} sides (1 or 2)"));
        }
        let shape = PlaneShape {
            width,
            rows,
            sides,
            len,
            rows_pad: rows_pad(rows),
            k_pad: k_pad(sides, len),
        };
        shape
            .bytes_checked()
            .ok_or_else(|| format!("{rows} rows of {sides} x {len} words do not fit in memory"))?;
        Ok(shape)
    }

    /// Elements (int8 limbs) of one plane.
    pub fn plane_elems(&self) -> u64 {
        self.rows_pad * self.k_pad
    }

    /// Bytes of all the planes ([`crate::contract::gpu::planes_bytes`]).
    pub fn bytes(&self) -> u64 {
        self.width.limbs() as u64 * self.plane_elems()
    }

    fn bytes_checked(&self) -> Option<usize> {
        let b = (self.width.limbs() as u64)
            .checked_mul(self.rows_pad)?
            .checked_mul(self.k_pad)?;
        usize::try_from(b).ok()
    }

    /// The index in the planes of limb `limb` of column `col` (`< k_pad`) of row `row`
    /// (`< rows_pad`).
    pub fn index(&self, limb: usize, row: u64, col: u64) -> usize {
        (limb as u64 * self.plane_elems() + row * self.k_pad + col) as usize
    }

    /// Whether a dot kernel (`k_pad` a compile-time constant up to [`MAX_K`]) can take rows of
    /// this length.
    pub fn fits_dot_kernel(&self) -> bool {
        self.k_pad <= MAX_K
    }
}

/// An operand split into limb planes, as the split kernel leaves it in GPU memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planes {
    pub shape: PlaneShape,
    pub limbs: Vec<i8>,
}

/// The planes of `rows` rows of `len` words from side `a` and, for replicated shares, side
/// `b` (`sides = 2`), side b negated mod 2^w if `negate_b`: what the contract's split kernel
/// `irisc_gpu_split{w}` writes. Row `r`, column `i < sides·len` reads side `i / len` at
/// `r·len + i % len`. Panics if a side is shorter than `rows · len` (a caller bug).
pub fn split_planes<T: LimbWord>(
    a: &[T],
    b: Option<&[T]>,
    rows: usize,
    len: usize,
    negate_b: bool,
) -> Result<Planes, String> {
    let sides = if b.is_some() { 2 } else { 1 };
    let shape = PlaneShape::new(T::WIDTH, rows as u64, sides, len as u64)?;
    assert!(a.len() >= rows * len, "side a shorter than rows * len");
    assert!(
        b.is_none_or(|b| b.len() >= rows * len),
        "side b shorter than rows * len"
    );
    let mut limbs = vec![0i8; shape.bytes() as usize];
    let top = if T::WIDTH.bits() == 64 {
        u64::MAX
    } else {
        (1u64 << T::WIDTH.bits()) - 1
    };
    for r in 0..rows {
        for i in 0..sides as usize * len {
            let (side, at) = (i / len, r * len + i % len);
            let word = match (side, b) {
                (0, _) => a[at].to_u64(),
                (_, Some(b)) if negate_b => b[at].to_u64().wrapping_neg() & top,
                (_, Some(b)) => b[at].to_u64(),
                (_, None) => unreachable!("one side has columns below len only"),
            };
            let l = split_limbs(T::WIDTH, word);
            for (j, &limb) in l.iter().take(T::WIDTH.limbs()).enumerate() {
                limbs[shape.index(j, r as u64, i as u64)] = limb;
            }
        }
    }
    Ok(Planes { shape, limbs })
}

/// The dot kernel `irisc_gpu_dot{w}_k{k_pad}` on the host: `out[r·codes + c] = Σ_i q_c[i] ·
/// g_r[i] mod 2^w` over the planes, record-major, accumulated per shift in i32 as the kernel
/// does (wrapping; exact for `k_pad ≤ MAX_K`) and combined. Walks the kernel's grid of
/// `BLOCK_COLS × BLOCK_ROWS` tiles, reading padded rows and storing only those in range, so it
/// also checks that the planes cover every row a tile reads. Panics if the two operands'
/// shapes disagree (a caller bug).
pub fn limb_gemm(gallery: &Planes, queries: &Planes, records: usize, codes: usize) -> Vec<u64> {
    let (gs, qs) = (gallery.shape, queries.shape);
    assert_eq!(
        gs.width, qs.width,
        "gallery and queries of different widths"
    );
    assert_eq!(
        gs.k_pad, qs.k_pad,
        "gallery and queries of different padded lengths"
    );
    assert!(records as u64 <= gs.rows && codes as u64 <= qs.rows);
    let width = gs.width;
    let mut out = vec![0u64; records * codes];
    let products = width.products();
    let (blocks_x, blocks_y) = (
        (codes as u64).div_ceil(BLOCK_COLS),
        (records as u64).div_ceil(BLOCK_ROWS),
    );
    for by in 0..blocks_y {
        for bx in 0..blocks_x {
            for r in by * BLOCK_ROWS..(by + 1) * BLOCK_ROWS {
                for c in bx * BLOCK_COLS..(bx + 1) * BLOCK_COLS {
                    // A tile reads whole padded rows: they must be inside the planes.
                    assert!(
                        r < gs.rows_pad && c < qs.rows_pad,
                        "a tile reads past the planes"
                    );
                    if r as usize >= records || c as usize >= codes {
                        // Padding rows: zero products, and the kernel stores nothing.
                        continue;
                    }
                    let mut acc = vec![0i32; width.limbs()];
                    for &(i, j) in &products {
                        let mut sum = 0i32;
                        for k in 0..gs.k_pad {
                            let q = queries.limbs[qs.index(i, c, k)];
                            let g = gallery.limbs[gs.index(j, r, k)];
                            sum = sum.wrapping_add(i32::from(q) * i32::from(g));
                        }
                        acc[i + j] = acc[i + j].wrapping_add(sum);
                    }
                    out[r as usize * codes + c as usize] = combine(width, &acc);
                }
            }
        }
    }
    out
}

/// The two-sided (eq. 6) dot products of `codes` query codes with `records` gallery records,
/// `len` words a side, as the GPU computes them: both split (the query's side b negated),
/// then [`limb_gemm`]. Equals [`crate::kernels::masked_dot_reference`].
#[allow(clippy::too_many_arguments)]
pub fn masked_dot_via_limbs<T: LimbWord>(
    qa: &[T],
    qb: &[T],
    codes: usize,
    ga: &[T],
    gb: &[T],
    records: usize,
    len: usize,
) -> Result<Vec<T>, String> {
    let g = split_planes(ga, Some(gb), records, len, false)?;
    let q = split_planes(qa, Some(qb), codes, len, true)?;
    Ok(limb_gemm(&g, &q, records, codes)
        .into_iter()
        .map(T::from_u64)
        .collect())
}

/// The one-sided dot products (Galois-ring Shamir: the prepared query, Lagrange coefficient
/// folded in, against the gallery words; `words` a code) as the GPU computes them. Equals
/// [`crate::kernels::gr_dot_reference`].
pub fn gr_dot_via_limbs(
    q: &[u16],
    codes: usize,
    g: &[u16],
    records: usize,
    words: usize,
) -> Result<Vec<u16>, String> {
    let gp = split_planes(g, None, records, words, false)?;
    let qp = split_planes(q, None, codes, words, false)?;
    Ok(limb_gemm(&gp, &qp, records, codes)
        .into_iter()
        .map(|x| x as u16)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::gpu::K_STEP;
    use crate::kernels::{gr_dot_reference, masked_dot_reference};
    use proptest::prelude::*;

    /// Words at the ring edges (0, 1, 0x7fff, 0x8000, 0xffff and their 32-bit kin) and the
    /// limb edges, mixed with uniform words.
    fn word16() -> impl Strategy<Value = u16> {
        prop_oneof![
            prop::sample::select(vec![
                0u16, 1, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xff7f, 0xff80, 0xfffe, 0xffff
            ]),
            any::<u16>(),
        ]
    }

    fn word32() -> impl Strategy<Value = u32> {
        prop_oneof![
            prop::sample::select(vec![
                0u32,
                1,
                0x7f,
                0x80,
                0x7fff,
                0x8000,
                0xffff,
                0x1_0000,
                0x7fff_ffff,
                0x8000_0000,
                0x8080_8080,
                0xffff_ff80,
                0xffff_fffe,
                0xffff_ffff,
            ]),
            any::<u32>(),
        ]
    }

    /// `(records, codes, len)` and the shares: records and codes around the block sizes (0,
    /// 1, 63, 64, 65, ...), odd lengths, lengths across a k-step.
    fn shapes() -> impl Strategy<Value = (usize, usize, usize)> {
        (
            prop::sample::select(vec![0usize, 1, 2, 7, 63, 64, 65]),
            prop::sample::select(vec![0usize, 1, 3, 5, 64, 66]),
            prop::sample::select(vec![1usize, 3, 15, 16, 17, 31, 33]),
        )
    }

    /// `qa, qb` (`codes · len` words each) and `ga, gb` (`records · len` each) taken one
    /// after the other from `seed`.
    fn sides<T>(seed: &[T], codes: usize, records: usize, len: usize) -> [&[T]; 4] {
        let (qa, rest) = seed.split_at(codes * len);
        let (qb, rest) = rest.split_at(codes * len);
        let (ga, rest) = rest.split_at(records * len);
        let (gb, _) = rest.split_at(records * len);
        [qa, qb, ga, gb]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        #[test]
        fn two_sided_16_bit_limb_gemm_is_the_reference(
            (records, codes, len) in shapes(),
            seed in prop::collection::vec(word16(), 4 * 66 * 33),
        ) {
            let [qa, qb, ga, gb] = sides(&seed, codes, records, len);
            let mut want = vec![0u16; records * codes];
            masked_dot_reference(qa, qb, codes, ga, gb, records, len, &mut want);
            let got = masked_dot_via_limbs(qa, qb, codes, ga, gb, records, len).unwrap();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn two_sided_32_bit_limb_gemm_is_the_reference(
            (records, codes, len) in shapes(),
            seed in prop::collection::vec(word32(), 4 * 66 * 33),
        ) {
            let [qa, qb, ga, gb] = sides(&seed, codes, records, len);
            let mut want = vec![0u32; records * codes];
            masked_dot_reference(qa, qb, codes, ga, gb, records, len, &mut want);
            let got = masked_dot_via_limbs(qa, qb, codes, ga, gb, records, len).unwrap();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn one_sided_galois_limb_gemm_is_the_reference(
            (records, codes, words) in shapes(),
            seed in prop::collection::vec(word16(), 2 * 66 * 33),
        ) {
            let (q, g) = seed.split_at(66 * words);
            let (q, g) = (&q[..codes * words], &g[..records * words]);
            let mut want = vec![0u16; records * codes];
            gr_dot_reference(q, codes, g, records, words, &mut want);
            prop_assert_eq!(gr_dot_via_limbs(q, codes, g, records, words).unwrap(), want);
        }
    }

    #[test]
    fn planes_follow_the_contract_layout() {
        // Two rows of two sides of 3 words: side b negated, zeros in every padding position.
        let a: Vec<u16> = vec![1, 0x80, 0xffff, 0x7fff, 0x8000, 0];
        let b: Vec<u16> = vec![1, 0, 0x100, 2, 3, 0xffff];
        let p = split_planes(&a, Some(&b), 2, 3, true).unwrap();
        let s = p.shape;
        assert_eq!((s.rows_pad, s.k_pad, s.sides), (BLOCK_ROWS, K_STEP, 2));
        assert_eq!(p.limbs.len() as u64, 2 * BLOCK_ROWS * K_STEP);
        for r in 0..2u64 {
            for col in 0..6u64 {
                let word = if col < 3 {
                    a[(r * 3 + col) as usize]
                } else {
                    b[(r * 3 + col - 3) as usize].wrapping_neg()
                };
                let l = split_limbs(LimbWidth::W16, u64::from(word));
                assert_eq!(p.limbs[s.index(0, r, col)], l[0], "row {r} col {col}");
                assert_eq!(p.limbs[s.index(1, r, col)], l[1], "row {r} col {col}");
            }
        }
        for limb in 0..2 {
            for r in 0..s.rows_pad {
                for col in 0..s.k_pad {
                    if r >= 2 || col >= 6 {
                        assert_eq!(
                            p.limbs[s.index(limb, r, col)],
                            0,
                            "padding {limb} {r} {col}"
                        );
                    }
                }
            }
        }
        // Limb 0 of 0x80 is -128, and the carry moved into limb 1.
        assert_eq!(p.limbs[s.index(0, 0, 1)], -128);
        assert_eq!(p.limbs[s.index(1, 0, 1)], 1);
        // Not negated: side b as it is.
        let plain = split_planes(&a, Some(&b), 2, 3, false).unwrap();
        assert_eq!(plain.limbs[s.index(0, 1, 5)], -1);
        assert_eq!(p.limbs[s.index(0, 1, 5)], 1);
    }

    #[test]
    fn query_planes_cover_the_dot_grid() {
        // The dot grid's x blocks read BLOCK_COLS query rows each: the padded query rows (a
        // multiple of BLOCK_ROWS) must cover them for any code count.
        for codes in [1u64, 63, 64, 65, 1000] {
            assert!(
                codes.div_ceil(BLOCK_COLS) * BLOCK_COLS <= rows_pad(codes),
                "{codes}"
            );
        }
    }

    #[test]
    fn shapes_refuse_what_they_cannot_hold() {
        assert!(PlaneShape::new(LimbWidth::W16, 1, 3, 1).is_err());
        assert!(PlaneShape::new(LimbWidth::W32, u64::MAX / 2, 2, u64::MAX / 4).is_err());
        let s = PlaneShape::new(LimbWidth::W16, 10, 2, 12800).unwrap();
        assert!(s.fits_dot_kernel());
        assert_eq!(
            s.bytes(),
            crate::contract::gpu::planes_bytes(LimbWidth::W16, 10, 2, 12800)
        );
        assert!(!PlaneShape::new(LimbWidth::W16, 1, 2, MAX_K)
            .unwrap()
            .fits_dot_kernel());
    }

    #[test]
    fn the_worst_limbs_over_the_longest_row_stay_exact() {
        // Every word 0x8080 (limbs -128, -127) in both operands over a row just below MAX_K:
        // the i32 accumulators do not wrap, and the result is the plain product sum.
        let len = (MAX_K - K_STEP) as usize;
        let q = vec![0x8080u16; len];
        let g = vec![0x8080u16; len];
        let got = gr_dot_via_limbs(&q, 1, &g, 1, len).unwrap();
        let want = (0..len).fold(0u16, |s, _| s.wrapping_add(0x8080u16.wrapping_mul(0x8080)));
        assert_eq!(got, vec![want]);
    }
}
