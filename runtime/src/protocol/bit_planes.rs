//! Bit planes: the arithmetic-to-binary transpose every bit extraction starts from. Plane j of a
//! batch holds bit j of every element, 64 elements a word (the bit-sliced form of Appendix E).
//! AVX-512BW and SSE2 paths on x86_64, a 64x64 word transpose elsewhere; all equal the naive
//! extraction (tests below).

use crate::ring::RingElem;
use crate::share::binary::words_for;

#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
/// Transposes a 64×64 bit matrix in place: afterwards bit r of word c is what bit c of word r was.
/// Swaps off-diagonal blocks of halving size (32, 16, ..., 1): 6 × 32 word operations.
fn transpose64(a: &mut [u64; 64]) {
    let mut j = 32;
    let mut m: u64 = 0x0000_0000_ffff_ffff;
    while j != 0 {
        let mut r = 0;
        while r < 64 {
            // Rows r (bit j clear) and r + j: swap r's high columns with (r + j)'s low columns.
            let t = ((a[r] >> j) ^ a[r + j]) & m;
            a[r] ^= t << j;
            a[r + j] ^= t;
            r = (r + j + 1) & !j;
        }
        j >>= 1;
        m ^= m << j;
    }
}

/// Bit planes of `values`: `planes[j]` holds bit j of every element, bit-sliced.
pub fn bit_planes<T: RingElem>(values: &[T], k: u32) -> Vec<Vec<u64>> {
    let words = words_for(values.len());
    let flat = bit_planes_flat(values, k as usize);
    (0..k as usize)
        .map(|j| flat[j * words..(j + 1) * words].to_vec())
        .collect()
}

/// Bit planes 0..`nb` of `values` in one buffer: plane j is words `j·w .. (j+1)·w` with
/// w = [`words_for`]`(values.len())`. Bits above the storage width read as zero; tail bits of
/// the last word are zero.
pub fn bit_planes_flat<T: RingElem>(values: &[T], nb: usize) -> Vec<u64> {
    let w = words_for(values.len());
    let mut planes = vec![0u64; nb * w];
    let stored = nb.min(T::BITS as usize);
    #[cfg(target_arch = "x86_64")]
    {
        if avx512::usable() {
            let size = std::mem::size_of::<T>();
            if size == 2 {
                avx512::planes16(bytemuck::cast_slice(values), stored, w, &mut planes);
                return planes;
            }
            if size == 4 {
                avx512::planes32(bytemuck::cast_slice(values), stored, w, &mut planes);
                return planes;
            }
        }
    }
    let mut block = [0u64; 64];
    for (wi, chunk) in values.chunks(64).enumerate() {
        planes_of_block(chunk, stored, &mut block);
        for (j, &bits) in block.iter().enumerate().take(stored) {
            planes[j * w + wi] = bits;
        }
    }
    planes
}

/// `out[j]` = bit j of each of the (at most 64) `chunk` elements, for j < `nb`.
#[inline]
fn planes_of_block<T: RingElem>(chunk: &[T], nb: usize, out: &mut [u64; 64]) {
    #[cfg(target_arch = "x86_64")]
    {
        // 16 bits at a time: the 16-bit pieces of the elements, then SSE2 on each piece.
        *out = [0; 64];
        let pieces = (std::mem::size_of::<T>() / 2).min(nb.div_ceil(16));
        for q in 0..pieces {
            let mut half = [0u16; 64];
            for (h, v) in half.iter_mut().zip(chunk) {
                *h = (v.to_u64() >> (16 * q)) as u16;
            }
            sse::block16(&half, 16 * q, nb, out);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = nb;
        for (b, v) in out
            .iter_mut()
            .zip(chunk.iter().map(|v| v.to_u64()).chain(std::iter::repeat(0)))
        {
            *b = v;
        }
        transpose64(out);
    }
}

/// Bit-plane extraction with AVX-512BW: bytes q of 64 elements are narrowed into one vector
/// (VPMOVWB / VPMOVDB), and VPTESTMB against bit b yields plane 8q + b of the 64 elements as one
/// mask word.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// Whether this CPU has AVX-512F and AVX-512BW (detected once, then cached by std).
    pub fn usable() -> bool {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
    }

    /// Stores planes 8q .. 8q + 8 (those below `nb`) of the 64 bytes of `z` as word `wi`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn store_byte_planes(z: __m512i, q: usize, nb: usize, w: usize, wi: usize, planes: &mut [u64]) {
        for b in 0..8 {
            let j = 8 * q + b;
            if j >= nb {
                break;
            }
            planes[j * w + wi] = _mm512_test_epi8_mask(z, _mm512_set1_epi8(1 << b));
        }
    }

    /// Planes 0..`nb` of 16-bit values into `planes` (`nb`·`w` words, zeroed).
    pub fn planes16(values: &[u16], nb: usize, w: usize, planes: &mut [u64]) {
        assert!(usable() && nb <= 16 && planes.len() >= nb * w && values.len() <= 64 * w);
        // SAFETY: the features were checked above.
        unsafe { planes16_impl(values, nb, w, planes) }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    fn planes16_impl(values: &[u16], nb: usize, w: usize, planes: &mut [u64]) {
        for (wi, chunk) in values.chunks(64).enumerate() {
            let mut pad = [0u16; 64];
            pad[..chunk.len()].copy_from_slice(chunk);
            let p = pad.as_ptr() as *const __m512i;
            // SAFETY: `pad` holds 64 u16 = two 64-byte vectors; the loads are unaligned.
            let (v0, v1) = unsafe { (_mm512_loadu_si512(p), _mm512_loadu_si512(p.add(1))) };
            for q in 0..nb.div_ceil(8) {
                let (a, b) = if q == 0 {
                    (v0, v1)
                } else {
                    (_mm512_srli_epi16::<8>(v0), _mm512_srli_epi16::<8>(v1))
                };
                let z = _mm512_inserti64x4::<1>(
                    _mm512_castsi256_si512(_mm512_cvtepi16_epi8(a)),
                    _mm512_cvtepi16_epi8(b),
                );
                store_byte_planes(z, q, nb, w, wi, planes);
            }
        }
    }

    /// Planes 0..`nb` of 32-bit values into `planes` (`nb`·`w` words, zeroed).
    pub fn planes32(values: &[u32], nb: usize, w: usize, planes: &mut [u64]) {
        assert!(usable() && nb <= 32 && planes.len() >= nb * w && values.len() <= 64 * w);
        // SAFETY: the features were checked above.
        unsafe { planes32_impl(values, nb, w, planes) }
    }

    #[target_feature(enable = "avx512f,avx512bw")]
    fn planes32_impl(values: &[u32], nb: usize, w: usize, planes: &mut [u64]) {
        for (wi, chunk) in values.chunks(64).enumerate() {
            let mut pad = [0u32; 64];
            pad[..chunk.len()].copy_from_slice(chunk);
            let p = pad.as_ptr() as *const __m512i;
            // SAFETY: `pad` holds 64 u32 = four 64-byte vectors; the loads are unaligned.
            let v: [__m512i; 4] = std::array::from_fn(|i| unsafe { _mm512_loadu_si512(p.add(i)) });
            for q in 0..nb.div_ceil(8) {
                let sh = _mm_cvtsi32_si128(8 * q as i32);
                let x: [__m128i; 4] =
                    std::array::from_fn(|i| _mm512_cvtepi32_epi8(_mm512_srl_epi32(v[i], sh)));
                let lo = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(x[0]), x[1]);
                let hi = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(x[2]), x[3]);
                let z = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi);
                store_byte_planes(z, q, nb, w, wi, planes);
            }
        }
    }
}

/// Bit-plane extraction with SSE2 (part of every x86-64 CPU): gather byte q of 16 elements
/// into one vector, then `movemask` yields bit 7 of each of the 16 bytes; adding the vector to
/// itself shifts the next bit up.
#[cfg(target_arch = "x86_64")]
mod sse {
    use std::arch::x86_64::*;

    /// ORs planes `base .. base + 8` (those below `nb`) of the 16 bytes of `bv` into `out`, at
    /// bit offset 16·`g`.
    #[inline(always)]
    fn spread(mut bv: __m128i, base: usize, g: usize, nb: usize, out: &mut [u64; 64]) {
        for b in (0..8).rev() {
            // SAFETY: SSE2 is part of the x86-64 baseline.
            let bits = unsafe { _mm_movemask_epi8(bv) } as u32 as u64 & 0xffff;
            if base + b < nb {
                out[base + b] |= bits << (16 * g);
            }
            // SAFETY: as above.
            bv = unsafe { _mm_add_epi8(bv, bv) };
        }
    }

    /// Planes `base .. base + 16` (those below `nb`) of 64 16-bit pieces.
    pub fn block16(vals: &[u16; 64], base: usize, nb: usize, out: &mut [u64; 64]) {
        let p = vals.as_ptr() as *const __m128i;
        for g in 0..4 {
            // SAFETY: SSE2 is part of the x86-64 baseline; the two unaligned loads read
            // elements 16g .. 16g + 16 of the 64.
            let (lo, hi) = unsafe {
                let ff = _mm_set1_epi16(0xff);
                let v0 = _mm_loadu_si128(p.add(2 * g));
                let v1 = _mm_loadu_si128(p.add(2 * g + 1));
                (
                    _mm_packus_epi16(_mm_and_si128(v0, ff), _mm_and_si128(v1, ff)),
                    _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8)),
                )
            };
            spread(lo, base, g, nb, out);
            if nb > base + 8 {
                spread(hi, base + 8, g, nb, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share::binary::pack_bits;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;
    #[test]
    fn transpose_matches_naive() {
        let mut rng = ChaCha12Rng::seed_from_u64(9);
        let vals: Vec<u64> = (0..150).map(|_| rng.random()).collect();
        let planes = bit_planes(&vals, 64);
        for (j, plane) in planes.iter().enumerate() {
            let want = pack_bits(&vals.iter().map(|v| (v >> j) & 1 == 1).collect::<Vec<_>>());
            assert_eq!(plane, &want, "plane {j}");
        }
        let small: Vec<u16> = vec![0xffff, 0x8000, 1];
        let p = bit_planes(&small, 16);
        assert_eq!(p.len(), 16);
        assert_eq!(p[15], vec![0b011]);
        assert_eq!(p[0], vec![0b101]);
    }

    /// The SIMD plane extraction equals the naive one for every storage width, plane count and
    /// batch tail.
    #[test]
    fn planes_match_naive_for_every_width() {
        let mut rng = ChaCha12Rng::seed_from_u64(11);
        for n in [1usize, 63, 64, 65, 200, 1000] {
            let raw: Vec<u64> = (0..n).map(|_| rng.random()).collect();
            let naive = |nb: usize, bits: u32| -> Vec<u64> {
                let mut out = Vec::new();
                for j in 0..nb {
                    let b: Vec<bool> = raw
                        .iter()
                        .map(|v| j < bits as usize && (v >> j) & 1 == 1)
                        .collect();
                    out.extend(pack_bits(&b));
                }
                out
            };
            for nb in [1usize, 7, 8, 9, 16] {
                let v: Vec<u16> = raw.iter().map(|&x| x as u16).collect();
                assert_eq!(bit_planes_flat(&v, nb), naive(nb, 16), "u16 n {n} nb {nb}");
            }
            for nb in [1usize, 15, 17, 24, 31, 32] {
                let v: Vec<u32> = raw.iter().map(|&x| x as u32).collect();
                assert_eq!(bit_planes_flat(&v, nb), naive(nb, 32), "u32 n {n} nb {nb}");
            }
            for nb in [1usize, 33, 64] {
                assert_eq!(
                    bit_planes_flat(&raw, nb),
                    naive(nb, 64),
                    "u64 n {n} nb {nb}"
                );
            }
        }
    }
}
