//! The public mask lengths `ml = popcount(qm & dm)` of every (record, code) pair: the public
//! half of the masked dot product, as many pairs as the dot product and in its order
//! (record-major, code-minor), so it must keep its pace. The runtime archive is compiled for
//! the baseline x86-64, which has no popcount instruction: here the loop is compiled once more
//! per instruction set that has one (`popcnt`; AVX2, whose byte shuffle looks up the counts of
//! 64 nibbles at once; AVX-512 `vpopcntq`, 8 words per instruction; the vector variants load
//! each query word once for a block of records) and the widest the CPU runs is picked at run
//! time. Every variant computes the same integers.

/// How the popcounts are computed: the variants of [`mask_lengths_with`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PopcountIsa {
    /// Baseline code (a bit-twiddling popcount).
    Portable,
    /// The scalar `popcnt` instruction.
    Popcnt,
    /// AVX2: nibble counts by byte shuffle (`vpshufb`), summed by `vpsadbw`.
    Avx2,
    /// AVX-512 with `vpopcntq`.
    Avx512,
}

impl PopcountIsa {
    /// The widest variant this CPU runs.
    pub(crate) fn best() -> PopcountIsa {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
            {
                return PopcountIsa::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("popcnt")
            {
                return PopcountIsa::Avx2;
            }
            if std::arch::is_x86_feature_detected!("popcnt") {
                return PopcountIsa::Popcnt;
            }
        }
        PopcountIsa::Portable
    }

    /// Whether this CPU runs the variant (each needs what the one before it needs).
    fn runs_here(self) -> bool {
        self as u8 <= PopcountIsa::best() as u8
    }

    /// Every variant this CPU runs, the portable one first.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<PopcountIsa> {
        [
            PopcountIsa::Portable,
            PopcountIsa::Popcnt,
            PopcountIsa::Avx2,
            PopcountIsa::Avx512,
        ]
        .into_iter()
        .filter(|isa| isa.runs_here())
        .collect()
    }
}

/// The integer a mask length is written as: `u64` for the public values, `u32` where a batch's
/// lengths are kept by record thirds (a popcount of up to 2^32 − 1 bits; half the memory the
/// dot phase writes and maps for them).
pub(crate) trait Count: Copy + Default {
    /// `n` (a popcount of masks the compiler sized, which fits).
    fn of(n: u64) -> Self;
}

impl Count for u64 {
    #[inline(always)]
    fn of(n: u64) -> u64 {
        n
    }
}

impl Count for u32 {
    #[inline(always)]
    fn of(n: u64) -> u32 {
        debug_assert!(n <= u64::from(u32::MAX), "a mask length of {n} bits");
        n as u32
    }
}

/// `ml` of every pair of the `g_count` gallery masks `g` and the `q_count` query masks `q`
/// (`w` words per mask), record-major: `out[r·q_count + c] = Σ popcount(q_c & g_r)`.
pub(crate) fn mask_lengths(
    q: &[u64],
    q_count: usize,
    g: &[u64],
    g_count: usize,
    w: usize,
) -> Vec<u64> {
    let mut out = vec![0u64; q_count * g_count];
    mask_lengths_into(q, q_count, g, g_count, w, &mut out);
    out
}

/// [`mask_lengths`] into `out` (`q_count * g_count` values), with the widest variant.
pub(crate) fn mask_lengths_into<C: Count>(
    q: &[u64],
    q_count: usize,
    g: &[u64],
    g_count: usize,
    w: usize,
    out: &mut [C],
) {
    fill_with(PopcountIsa::best(), q, q_count, g, g_count, w, out)
}

/// [`mask_lengths`] with the variant `isa` (a variant this CPU does not run is replaced by the
/// portable one).
#[cfg(test)]
pub(crate) fn mask_lengths_with(
    isa: PopcountIsa,
    q: &[u64],
    q_count: usize,
    g: &[u64],
    g_count: usize,
    w: usize,
) -> Vec<u64> {
    let mut out = vec![0u64; q_count * g_count];
    fill_with(isa, q, q_count, g, g_count, w, &mut out);
    out
}

/// The popcounts of [`mask_lengths_with`] into `out`.
fn fill_with<C: Count>(
    isa: PopcountIsa,
    q: &[u64],
    q_count: usize,
    g: &[u64],
    g_count: usize,
    w: usize,
    out: &mut [C],
) {
    assert!(
        q.len() >= q_count * w && g.len() >= g_count * w,
        "masks shorter than their count"
    );
    assert_eq!(out.len(), q_count * g_count, "mask lengths: output size");
    if w == 0 || q_count == 0 {
        out.fill(C::default());
        return;
    }
    let (q, g) = (&q[..q_count * w], &g[..g_count * w]);
    let isa = if isa.runs_here() {
        isa
    } else {
        PopcountIsa::Portable
    };
    match isa {
        PopcountIsa::Portable => fill(q, g, w, out),
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has popcnt (checked above).
        PopcountIsa::Popcnt => unsafe { fill_popcnt(q, g, w, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX2 and popcnt (checked above).
        PopcountIsa::Avx2 => unsafe { fill_avx2(q, g, w, out) },
        #[cfg(target_arch = "x86_64")]
        // SAFETY: the CPU has AVX-512F and VPOPCNTDQ (checked above).
        PopcountIsa::Avx512 => unsafe { fill_avx512(q, g, w, out) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => fill(q, g, w, out),
    }
}

/// The loop every variant compiles: one gallery mask (in L1) against all query masks.
#[inline(always)]
fn fill<C: Count>(q: &[u64], g: &[u64], w: usize, out: &mut [C]) {
    let q_count = q.len() / w;
    for (gm, row) in g.chunks_exact(w).zip(out.chunks_exact_mut(q_count)) {
        for (qm, o) in q.chunks_exact(w).zip(row) {
            *o = C::of(
                qm.iter()
                    .zip(gm)
                    .map(|(a, b)| (a & b).count_ones() as u64)
                    .sum::<u64>(),
            );
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
unsafe fn fill_popcnt<C: Count>(q: &[u64], g: &[u64], w: usize, out: &mut [C]) {
    fill(q, g, w, out)
}

/// The pairs of a tiled variant's record block (rows from record `r`) with the codes from
/// `blocked_codes` on, which no whole tile covers, through [`fill`].
#[inline(always)]
fn fill_codes_left<C: Count>(
    q: &[u64],
    rows: &[&[u64]],
    r: usize,
    blocked_codes: usize,
    w: usize,
    out: &mut [C],
) {
    let q_count = q.len() / w;
    for (k, row) in rows.iter().enumerate().filter(|_| blocked_codes < q_count) {
        let at = (r + k) * q_count;
        fill(
            &q[blocked_codes * w..],
            row,
            w,
            &mut out[at + blocked_codes..at + q_count],
        );
    }
}

/// The AVX2 variant's register tile: this many records by [`AVX2_CODE_BLOCK`] codes, one
/// byte accumulator per pair, with the nibble table, the nibble mask and a step's five masks
/// (13 of the 16 vector registers).
#[cfg(target_arch = "x86_64")]
const AVX2_RECORD_BLOCK: usize = 3;
/// See [`AVX2_RECORD_BLOCK`].
#[cfg(target_arch = "x86_64")]
const AVX2_CODE_BLOCK: usize = 2;
/// 4-word steps a byte accumulator takes before it is summed out: each step adds at most 8 to
/// a byte (two nibbles of 4 bits), and 31 x 8 = 248 < 256.
#[cfg(target_arch = "x86_64")]
const AVX2_STEPS_PER_FLUSH: usize = 31;

/// [`fill`] with AVX2 intrinsics over [`AVX2_RECORD_BLOCK`] x [`AVX2_CODE_BLOCK`] tiles: per
/// 4-word step and pair, `q & g` split into nibbles, each counted by a 16-entry table in a
/// byte shuffle, the counts summed per byte; the bytes are summed into words (`vpsadbw`) every
/// [`AVX2_STEPS_PER_FLUSH`] steps. The words left over past the last whole step, and the codes
/// and records left over, go through [`fill`] (compiled here with the same features).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn fill_avx2<C: Count>(q: &[u64], g: &[u64], w: usize, out: &mut [C]) {
    use std::arch::x86_64::*;
    const RB: usize = AVX2_RECORD_BLOCK;
    const CB: usize = AVX2_CODE_BLOCK;
    let q_count = q.len() / w;
    let g_count = g.len() / w;
    let (steps, vector_words) = (w / 4, w / 4 * 4);
    let blocked_records = g_count - g_count % RB;
    let blocked_codes = q_count - q_count % CB;
    let nibbles = _mm256_setr_epi8(
        0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3,
        3, 4,
    );
    let low = _mm256_set1_epi8(0x0f);
    // The bit count of each byte of a 4-word vector, by its two nibbles.
    let count = |v: __m256i| {
        let lo = _mm256_shuffle_epi8(nibbles, _mm256_and_si256(v, low));
        let hi = _mm256_shuffle_epi8(nibbles, _mm256_and_si256(_mm256_srli_epi16::<4>(v), low));
        _mm256_add_epi8(lo, hi)
    };
    for r in (0..blocked_records).step_by(RB) {
        let rows: [&[u64]; RB] = std::array::from_fn(|k| &g[(r + k) * w..(r + k + 1) * w]);
        for c in (0..blocked_codes).step_by(CB) {
            let codes: [&[u64]; CB] = std::array::from_fn(|k| &q[(c + k) * w..(c + k + 1) * w]);
            let mut sums = [[_mm256_setzero_si256(); CB]; RB];
            let mut step = 0;
            while step < steps {
                let end = (step + AVX2_STEPS_PER_FLUSH).min(steps);
                let mut bytes = [[_mm256_setzero_si256(); CB]; RB];
                for i in step..end {
                    // SAFETY: words i·4 .. i·4 + 4 <= w of masks of w words.
                    let load =
                        |m: &[u64]| unsafe { _mm256_loadu_si256(m.as_ptr().add(i * 4).cast()) };
                    let qv = codes.map(load);
                    for (row_bytes, row) in bytes.iter_mut().zip(&rows) {
                        let gv = load(row);
                        for (b, qv) in row_bytes.iter_mut().zip(&qv) {
                            *b = _mm256_add_epi8(*b, count(_mm256_and_si256(*qv, gv)));
                        }
                    }
                }
                for (row_sums, row_bytes) in sums.iter_mut().zip(&bytes) {
                    for (s, b) in row_sums.iter_mut().zip(row_bytes) {
                        *s = _mm256_add_epi64(*s, _mm256_sad_epu8(*b, _mm256_setzero_si256()));
                    }
                }
                step = end;
            }
            for (k, row_sums) in sums.iter().enumerate() {
                for (j, s) in row_sums.iter().enumerate() {
                    let mut lanes = [0u64; 4];
                    // SAFETY: four u64 lanes into a four-word array.
                    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), *s) };
                    // The words past the last whole step.
                    let tail: u64 = codes[j][vector_words..]
                        .iter()
                        .zip(&rows[k][vector_words..])
                        .map(|(a, b)| (a & b).count_ones() as u64)
                        .sum();
                    out[(r + k) * q_count + c + j] = C::of(lanes.iter().sum::<u64>() + tail);
                }
            }
        }
        fill_codes_left(q, &rows, r, blocked_codes, w, out);
    }
    fill(
        q,
        &g[blocked_records * w..],
        w,
        &mut out[blocked_records * q_count..],
    );
}

/// The AVX-512 variant's register tile: this many records by [`CODE_BLOCK`] codes, one
/// accumulator per pair (12 of the 32 vector registers). Each gallery word loaded serves two
/// codes and each query word six records, so the loop is bound by its popcounts, not its
/// loads. Measured at 200-word masks, 248 codes (one core, Zen 5): 8.7 ns per pair for 4 x 1,
/// 6.0 for 4 x 2, 5.7 for 6 x 2 and 5 x 2, 6.0 for 8 x 2, 6.2 for 4 x 4. A carry-save
/// (Harley-Seal) count, which trades popcounts for ternary-logic ops, ran at 9.8.
#[cfg(target_arch = "x86_64")]
const RECORD_BLOCK: usize = 6;
/// See [`RECORD_BLOCK`].
#[cfg(target_arch = "x86_64")]
const CODE_BLOCK: usize = 2;

/// One 8-word step of a tile: `load` reads the step's words of a mask.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tile_step(
    acc: &mut [[std::arch::x86_64::__m512i; CODE_BLOCK]; RECORD_BLOCK],
    rows: &[&[u64]; RECORD_BLOCK],
    codes: &[&[u64]; CODE_BLOCK],
    load: impl Fn(&[u64]) -> std::arch::x86_64::__m512i,
) {
    use std::arch::x86_64::*;
    let qv = codes.map(&load);
    for (row_acc, row) in acc.iter_mut().zip(rows) {
        let gv = load(row);
        for (a, qv) in row_acc.iter_mut().zip(&qv) {
            // SAFETY: called from `fill_avx512`, on a CPU with AVX-512F and VPOPCNTDQ.
            *a = unsafe { _mm512_add_epi64(*a, _mm512_popcnt_epi64(_mm512_and_si512(*qv, gv))) };
        }
    }
}

/// [`fill`] with AVX-512 intrinsics over [`RECORD_BLOCK`] x [`CODE_BLOCK`] tiles; the codes
/// and records left over go through [`fill`] (compiled here with the same features).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vpopcntdq,popcnt")]
unsafe fn fill_avx512<C: Count>(q: &[u64], g: &[u64], w: usize, out: &mut [C]) {
    use std::arch::x86_64::*;
    let q_count = q.len() / w;
    let g_count = g.len() / w;
    let (full, rem) = (w / 8, w % 8);
    let tail: __mmask8 = ((1u32 << rem) - 1) as u8;
    let blocked_records = g_count - g_count % RECORD_BLOCK;
    let blocked_codes = q_count - q_count % CODE_BLOCK;
    for r in (0..blocked_records).step_by(RECORD_BLOCK) {
        let rows: [&[u64]; RECORD_BLOCK] =
            std::array::from_fn(|k| &g[(r + k) * w..(r + k + 1) * w]);
        for c in (0..blocked_codes).step_by(CODE_BLOCK) {
            let codes: [&[u64]; CODE_BLOCK] =
                std::array::from_fn(|k| &q[(c + k) * w..(c + k + 1) * w]);
            let mut acc = [[_mm512_setzero_si512(); CODE_BLOCK]; RECORD_BLOCK];
            // SAFETY: every load reads words i·8 .. i·8 + 8 <= w of a mask of w words (the
            // tail only the `rem` words the mask keeps), and the CPU has these features.
            unsafe {
                for i in 0..full {
                    tile_step(&mut acc, &rows, &codes, |m| {
                        _mm512_loadu_si512(m.as_ptr().add(i * 8).cast())
                    });
                }
                if rem > 0 {
                    tile_step(&mut acc, &rows, &codes, |m| {
                        _mm512_maskz_loadu_epi64(tail, m.as_ptr().add(full * 8).cast())
                    });
                }
            }
            for (k, row_acc) in acc.iter().enumerate() {
                for (j, a) in row_acc.iter().enumerate() {
                    out[(r + k) * q_count + c + j] = C::of(_mm512_reduce_add_epi64(*a) as u64);
                }
            }
        }
        fill_codes_left(q, &rows, r, blocked_codes, w, out);
    }
    fill(
        q,
        &g[blocked_records * w..],
        w,
        &mut out[blocked_records * q_count..],
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition, bit by bit: no popcount at all.
    fn by_bits(q: &[u64], q_count: usize, g: &[u64], g_count: usize, w: usize) -> Vec<u64> {
        let mut out = Vec::new();
        for r in 0..g_count {
            for c in 0..q_count {
                let mut n = 0u64;
                for i in 0..w * 64 {
                    let bit = |m: &[u64], k: usize| (m[k * w + i / 64] >> (i % 64)) & 1;
                    n += bit(q, c) & bit(g, r);
                }
                out.push(n);
            }
        }
        out
    }

    /// Masks from a seed, mostly ones with zeros in runs (as iris masks), or edge patterns.
    fn masks(seed: u64, n: usize, kind: u8) -> Vec<u64> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                match kind {
                    0 => u64::MAX,
                    1 => 0,
                    2 => x | (x >> 3),
                    _ => x,
                }
            })
            .collect()
    }

    /// Every variant this CPU runs, and the dispatched one, against the bitwise definition on
    /// masks of `kinds` from `seed`.
    fn check_every_variant(
        w: usize,
        q_count: usize,
        g_count: usize,
        seed: u64,
        kinds: (u8, u8),
    ) -> Result<(), TestCaseError> {
        let q = masks(seed, q_count * w, kinds.0);
        let g = masks(seed.rotate_left(17) ^ 0x9e37, g_count * w, kinds.1);
        let want = by_bits(&q, q_count, &g, g_count, w);
        for isa in PopcountIsa::available() {
            prop_assert_eq!(
                &mask_lengths_with(isa, &q, q_count, &g, g_count, w),
                &want,
                "{:?}",
                isa
            );
        }
        prop_assert_eq!(mask_lengths(&q, q_count, &g, g_count, w), want.clone());
        // The u32 lengths record thirds keep: the same integers.
        let mut narrow = vec![0u32; q_count * g_count];
        mask_lengths_into(&q, q_count, &g, g_count, w, &mut narrow);
        let narrow: Vec<u64> = narrow.into_iter().map(u64::from).collect();
        prop_assert_eq!(narrow, want);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Every variant this CPU runs equals the bitwise definition, at widths that fill no,
        /// one and several 8-word vectors with a remainder, all-ones and all-zeros masks
        /// included.
        #[test]
        fn every_variant_counts_like_the_definition(
            w in 0usize..=27,
            q_count in 0usize..=33,
            g_count in 0usize..=14,
            seed in any::<u64>(),
            kinds in (0u8..4, 0u8..4),
        ) {
            check_every_variant(w, q_count, g_count, seed, kinds)?;
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Long masks (more 4-word steps than a byte accumulator of the AVX2 variant takes
        /// before it is summed out, with a remainder), all-ones ones included: every variant
        /// equals the definition.
        #[test]
        fn long_masks_count_like_the_definition(
            w in 120usize..=260,
            q_count in 1usize..=7,
            g_count in 1usize..=8,
            seed in any::<u64>(),
            kinds in (0u8..4, 0u8..4),
        ) {
            check_every_variant(w, q_count, g_count, seed, kinds)?;
        }
    }

    /// Iris-sized masks (200 words): full masks give the code length, and the best variant
    /// agrees with the definition on 31 rotations' worth of queries.
    #[test]
    fn iris_sized_masks() {
        let w = 200;
        let ones = vec![u64::MAX; 2 * w];
        assert_eq!(mask_lengths(&ones, 2, &ones, 1, w), vec![12_800, 12_800]);
        let q = masks(5, 31 * w, 2);
        let g = masks(6, 3 * w, 3);
        assert_eq!(mask_lengths(&q, 31, &g, 3, w), by_bits(&q, 31, &g, 3, w));
    }
}
