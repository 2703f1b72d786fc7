//! XXH3-128 of long inputs (more than 240 bytes) in AVX-512 registers, and the same hash
//! computed while the input is copied out with streaming stores: the v3 record hash
//! ([`super::RecordHash::Xxh3`]) at the pace the dealer needs.
//!
//! Why not only the `twox-hash` crate: it picks an AVX2 loop at run time, which needs twice
//! the instructions of one 512-bit lane set per 64-byte stripe, and it hashes a record in a
//! pass of its own. The dealer hashed each record in cache and then read it once more to
//! stream it into the block that goes to disk: on the AMX Xeon, dealing rep3 spent 18 % of
//! its time in the hash and 25 % in that copy. Here one pass does both. Every result equals
//! `twox-hash`'s XXH3-128 (`xxh3_wide_equals_the_crate_at_every_length` checks lengths around
//! every stripe and block boundary and random inputs); inputs of at most 240 bytes, and CPUs
//! without AVX-512, are hashed by the crate.
//!
//! The algorithm is XXH3's long-input path: eight 64-bit accumulators; each 64-byte stripe
//! adds `lo32(d ^ s) * hi32(d ^ s)` to its lane and the data word to the neighbouring lane;
//! every 16 stripes (one block of the 192-byte secret) the accumulators are scrambled; the
//! last partial block and the input's last 64 bytes close it, and two merges of the lanes
//! give the low and high halves of the 128-bit result.

/// The XXH3 secret's length: the crate's default secret, from which a seed derives its own.
pub const SECRET_LEN: usize = 192;

/// Inputs up to this length take XXH3's short paths (the crate's).
const SHORT_MAX: usize = 240;

const STRIPE: usize = 64;
/// Stripes per block: the secret advances 8 bytes a stripe over its first 128 bytes.
const STRIPES_PER_BLOCK: usize = (SECRET_LEN - STRIPE) / 8;
const BLOCK: usize = STRIPE * STRIPES_PER_BLOCK;

const PRIME32_1: u64 = 0x9E37_79B1;
const PRIME32_2: u64 = 0x85EB_CA77;
const PRIME32_3: u64 = 0xC2B2_AE3D;
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME64_5: u64 = 0x27D4_EB2F_1656_67C5;
const PRIME_MX1: u64 = 0x1656_6791_9E37_79F9;

const INITIAL_ACCUMULATORS: [u64; 8] = [
    PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
];

/// Whether this CPU runs the AVX-512 loop.
pub fn available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// XXH3-128 of `input` under `secret` (a seed's derived secret), where this module computes
/// it: inputs longer than 240 bytes on a CPU with AVX-512. `None` otherwise.
pub fn hash(secret: &[u8; SECRET_LEN], input: &[u8]) -> Option<u128> {
    if input.len() <= SHORT_MAX || !available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX-512F is present (checked above) and the input is longer than a stripe.
    return Some(unsafe { avx512::hash_long(secret, Parts::new(&[input]), None) });
    #[allow(unreachable_code)]
    None
}

/// [`hash`] of `input`, with `input[copy_from..]` copied into `dst` (of that length) in the
/// same pass: whole 64-byte lines of `dst` by streaming stores (not read first, not kept in
/// cache), its unaligned ends by ordinary ones. `None` (and nothing copied) where [`hash`]
/// gives `None`.
///
/// Streaming stores are weakly ordered and this function does not fence them: call
/// [`crate::sys::fence_streaming_stores`] before another thread or the kernel reads `dst`,
/// once for a batch of records (a fence per record waited for each record's lines to reach
/// memory before the next was dealt).
///
/// # Panics
/// If `copy_from > input.len()` or `dst` is not `input.len() - copy_from` bytes long.
pub fn hash_and_stream(
    secret: &[u8; SECRET_LEN],
    input: &[u8],
    copy_from: usize,
    dst: &mut [u8],
) -> Option<u128> {
    hash_parts_and_stream(secret, &[input], copy_from, dst)
}

/// [`hash_and_stream`] of the concatenation of `parts` (which is never built: a stripe that
/// spans parts is gathered into 64 bytes of its own). The dealer hands a replicated record's
/// components this way, each written once and read for both parties that hold it.
///
/// # Panics
/// If `copy_from` is past the parts' total length or `dst` is not the rest's length.
pub fn hash_parts_and_stream(
    secret: &[u8; SECRET_LEN],
    parts: &[&[u8]],
    copy_from: usize,
    dst: &mut [u8],
) -> Option<u128> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    assert!(
        copy_from <= len && dst.len() == len - copy_from,
        "hash_and_stream: {} bytes to copy from byte {copy_from} of {len}",
        dst.len(),
    );
    if len <= SHORT_MAX || !available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: AVX-512F is present (checked above); the lengths were checked.
    return Some(unsafe { avx512::hash_long(secret, Parts::new(parts), Some((copy_from, dst))) });
    #[allow(unreachable_code)]
    None
}

/// Byte slices read as their concatenation.
#[derive(Clone, Copy)]
pub(crate) struct Parts<'a> {
    parts: &'a [&'a [u8]],
    len: usize,
}

impl<'a> Parts<'a> {
    fn new(parts: &'a [&'a [u8]]) -> Parts<'a> {
        Parts {
            parts,
            len: parts.iter().map(|p| p.len()).sum(),
        }
    }

    /// Bytes `at .. at + out.len()` into `out`.
    fn copy_to(&self, at: usize, out: &mut [u8]) {
        let (mut start, mut done) = (0, 0);
        for p in self.parts {
            let end = start + p.len();
            let from = at + done;
            if from < end && done < out.len() {
                let take = (end - from).min(out.len() - done);
                out[done..done + take].copy_from_slice(&p[from - start..from - start + take]);
                done += take;
            }
            start = end;
        }
        debug_assert_eq!(done, out.len(), "bytes past the parts");
    }
}

/// A reader of [`Parts`] at offsets that never decrease: where the part holding an offset
/// starts, found by moving forward from the last one (one comparison per read in the usual
/// case, where the scan stays inside one part).
struct Cursor<'a> {
    parts: Parts<'a>,
    /// The part holding the last offset read, and where it starts.
    index: usize,
    start: usize,
}

impl<'a> Cursor<'a> {
    fn new(parts: Parts<'a>) -> Cursor<'a> {
        Cursor {
            parts,
            index: 0,
            start: 0,
        }
    }

    /// The `n` bytes from `at` where one part holds them all (`at` at least the last
    /// offset read).
    #[inline(always)]
    fn span(&mut self, at: usize, n: usize) -> Option<&'a [u8]> {
        let parts = self.parts.parts;
        while self.index < parts.len() && at >= self.start + parts[self.index].len() {
            self.start += parts[self.index].len();
            self.index += 1;
        }
        let part = parts.get(self.index)?;
        let from = at - self.start;
        part.get(from..from + n)
    }

    /// The 64 bytes from `at` (`at + 64 <= len`, `at` at least the last offset read): in
    /// place where one part holds them, else gathered into `bounce`.
    #[inline(always)]
    fn line(&mut self, at: usize, bounce: &mut [u8; 64]) -> *const u8 {
        match self.span(at, 64) {
            Some(line) => line.as_ptr(),
            None => {
                self.parts.copy_to(at, bounce);
                bounce.as_ptr()
            }
        }
    }
}

fn read_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn avalanche(mut x: u64) -> u64 {
    x ^= x >> 37;
    x = x.wrapping_mul(PRIME_MX1);
    x ^ (x >> 32)
}

/// XXH3's merge of the eight lanes under 64 bytes of the secret from `at`.
fn merge(acc: &[u64; 8], start: u64, secret: &[u8], at: usize) -> u64 {
    let mut result = start;
    for i in 0..4 {
        let a = u128::from(acc[2 * i] ^ read_u64(secret, at + 16 * i));
        let b = u128::from(acc[2 * i + 1] ^ read_u64(secret, at + 16 * i + 8));
        let m = a.wrapping_mul(b);
        result = result.wrapping_add((m as u64) ^ ((m >> 64) as u64));
    }
    avalanche(result)
}

/// The 128-bit result from the accumulators after the last stripe.
fn finish_128(acc: &[u64; 8], secret: &[u8; SECRET_LEN], len: usize) -> u128 {
    let len = len as u64;
    let low = merge(acc, len.wrapping_mul(PRIME64_1), secret, 11);
    let high = merge(
        acc,
        !len.wrapping_mul(PRIME64_2),
        secret,
        SECRET_LEN - STRIPE - 11,
    );
    (u128::from(high) << 64) | u128::from(low)
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use super::*;

    /// One stripe into the accumulators.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn accumulate(acc: __m512i, stripe: *const u8, secret: *const u8) -> __m512i {
        // SAFETY: the caller's: 64 readable bytes at each pointer.
        let (data, key) = unsafe {
            (
                _mm512_loadu_si512(stripe.cast()),
                _mm512_loadu_si512(secret.cast()),
            )
        };
        let data_key = _mm512_xor_si512(data, key);
        // Each 64-bit lane's high half moved to its low half, for the 32 x 32-bit product.
        let data_key_hi = _mm512_shuffle_epi32::<0b00_11_00_01>(data_key);
        let product = _mm512_mul_epu32(data_key, data_key_hi);
        // The data words of each pair of lanes swapped: lane i adds the word of lane i ^ 1.
        let swapped = _mm512_shuffle_epi32::<0b01_00_11_10>(data);
        _mm512_add_epi64(product, _mm512_add_epi64(acc, swapped))
    }

    /// The scramble at the end of each block: `acc = (acc ^ acc >> 47 ^ key) * PRIME32_1`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn scramble(acc: __m512i, secret_end: *const u8) -> __m512i {
        // SAFETY: the caller's: 64 readable bytes.
        let key = unsafe { _mm512_loadu_si512(secret_end.cast()) };
        let shifted = _mm512_xor_si512(acc, _mm512_srli_epi64::<47>(acc));
        let data_key = _mm512_xor_si512(shifted, key);
        let prime = _mm512_set1_epi64(PRIME32_1 as i64);
        let hi = _mm512_shuffle_epi32::<0b00_11_00_01>(data_key);
        let lo_product = _mm512_mul_epu32(data_key, prime);
        let hi_product = _mm512_mul_epu32(hi, prime);
        _mm512_add_epi64(lo_product, _mm512_slli_epi64::<32>(hi_product))
    }

    /// Copies the parts' bytes from `from` into `dst` as the hash advances: ordinary stores up
    /// to `dst`'s first 64-byte boundary, streaming stores for whole lines, ordinary stores
    /// for the tail.
    struct Streamer<'a> {
        src: Parts<'a>,
        lines: Cursor<'a>,
        from: usize,
        dst: &'a mut [u8],
        /// Bytes copied so far.
        done: usize,
        /// Bytes up to `dst`'s first line boundary.
        head: usize,
    }

    impl<'a> Streamer<'a> {
        fn new(src: Parts<'a>, from: usize, dst: &'a mut [u8]) -> Streamer<'a> {
            let head = dst.as_ptr().align_offset(64).min(dst.len());
            Streamer {
                src,
                lines: Cursor::new(src),
                from,
                dst,
                done: 0,
                head,
            }
        }

        /// Copies the whole lines of `dst` whose source bytes lie below `upto` (an offset in
        /// the parts).
        #[inline]
        #[target_feature(enable = "avx512f")]
        unsafe fn advance(&mut self, upto: usize) {
            let upto = upto.saturating_sub(self.from).min(self.dst.len());
            if self.done < self.head {
                let end = self.head.min(upto);
                self.src
                    .copy_to(self.from + self.done, &mut self.dst[self.done..end]);
                self.done = end;
            }
            if self.done < self.head {
                return;
            }
            let lines_end = self.done + (upto.saturating_sub(self.done)) / 64 * 64;
            let d = self.dst.as_mut_ptr();
            if let Some(run) = self
                .lines
                .span(self.from + self.done, lines_end - self.done)
            {
                // The usual case: one part holds the lines' source bytes.
                let s = run.as_ptr();
                for k in (0..lines_end - self.done).step_by(64) {
                    // SAFETY: k + 64 <= the run's length; d + done + k is 64-byte aligned (as
                    // below) and within the destination.
                    unsafe {
                        let v = _mm512_loadu_si512(s.add(k).cast());
                        _mm512_stream_si512(d.add(self.done + k).cast(), v);
                    }
                }
                self.done = lines_end;
                return;
            }
            let mut bounce = [0u8; 64];
            while self.done < lines_end {
                let line = self.lines.line(self.from + self.done, &mut bounce);
                // SAFETY: `line` points to 64 readable bytes; done + 64 <= lines_end <= the
                // destination's length, and d + done is 64-byte aligned (done - head is a
                // multiple of 64 and d + head is aligned).
                unsafe {
                    let v = _mm512_loadu_si512(line.cast());
                    _mm512_stream_si512(d.add(self.done).cast(), v);
                }
                self.done += 64;
            }
        }

        /// Copies what is left (the caller fences: see [`hash_and_stream`]).
        #[target_feature(enable = "avx512f")]
        unsafe fn finish(mut self) {
            let n = self.from + self.dst.len();
            // SAFETY: AVX-512F is present (this function's requirement).
            unsafe { self.advance(n) };
            let at = self.done;
            self.src.copy_to(self.from + at, &mut self.dst[at..]);
        }
    }

    /// XXH3-128 of the parts' concatenation (longer than 240 bytes) under `secret`; with
    /// `copy`, its bytes from the given offset copied into the destination as the blocks are
    /// hashed (the block just hashed is in L1).
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn hash_long(
        secret: &[u8; SECRET_LEN],
        input: Parts<'_>,
        copy: Option<(usize, &mut [u8])>,
    ) -> u128 {
        let len = input.len;
        debug_assert!(len > SHORT_MAX);
        let s = secret.as_ptr();
        let mut streamer = copy.map(|(from, dst)| Streamer::new(input, from, dst));
        let mut stripes_of = Cursor::new(input);
        let mut bounce = [0u8; 64];
        // SAFETY: the initial accumulators are 64 bytes.
        let mut acc = unsafe { _mm512_loadu_si512(INITIAL_ACCUMULATORS.as_ptr().cast()) };
        // Every block but the last, which is never empty (a whole last block is hashed as
        // the last one, without its scramble).
        let blocks = (len - 1) / BLOCK;
        for b in 0..blocks {
            if let Some(block) = stripes_of.span(b * BLOCK, BLOCK) {
                // The usual case: one part holds the whole block.
                let p = block.as_ptr();
                for i in 0..STRIPES_PER_BLOCK {
                    // SAFETY: stripe i lies in the block's 1 024 bytes; the secret's stripe i
                    // ends at 8 i + 64 <= 184.
                    acc = unsafe { accumulate(acc, p.add(i * STRIPE), s.add(i * 8)) };
                }
            } else {
                for i in 0..STRIPES_PER_BLOCK {
                    let stripe = stripes_of.line(b * BLOCK + i * STRIPE, &mut bounce);
                    // SAFETY: `stripe` is 64 readable bytes (stripe i of block b < blocks lies
                    // within the input); the secret's stripe as above.
                    acc = unsafe { accumulate(acc, stripe, s.add(i * 8)) };
                }
            }
            // SAFETY: the secret's last 64 bytes.
            acc = unsafe { scramble(acc, s.add(SECRET_LEN - STRIPE)) };
            if let Some(st) = streamer.as_mut() {
                // SAFETY: AVX-512F is present (this function's requirement).
                unsafe { st.advance((b + 1) * BLOCK) };
            }
        }
        let last = blocks * BLOCK;
        let stripes = (len - 1 - last) / STRIPE;
        for i in 0..stripes {
            let stripe = stripes_of.line(last + i * STRIPE, &mut bounce);
            // SAFETY: stripes end below len - 1 + 1; the secret's stripe i as above (i < 16).
            acc = unsafe { accumulate(acc, stripe, s.add(i * 8)) };
        }
        // The input's last 64 bytes, under the secret 7 bytes before its last 64.
        let stripe = stripes_of.line(len - STRIPE, &mut bounce);
        // SAFETY: len > 240; 192 - 64 - 7 + 64 <= 192.
        acc = unsafe { accumulate(acc, stripe, s.add(SECRET_LEN - STRIPE - 7)) };
        if let Some(st) = streamer {
            // SAFETY: AVX-512F is present (this function's requirement).
            unsafe { st.finish() };
        }
        let mut lanes = [0u64; 8];
        // SAFETY: 64 writable bytes.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), acc) };
        finish_128(&lanes, secret, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use twox_hash::xxhash3_128 as xxh3;

    const SEED: u64 = 0x1F2E_3D4C_5B6A_7988;

    fn derived_secret(seed: u64) -> [u8; SECRET_LEN] {
        match xxh3::SecretBuffer::with_seed(seed, [0u8; SECRET_LEN]) {
            Ok(secret) => secret.into_secret(),
            Err(_) => panic!("the crate refused its default secret length"),
        }
    }

    fn bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (x >> 56) as u8
            })
            .collect()
    }

    /// Lengths at and around every boundary the long path treats apart: the short-path
    /// limit, stripes, blocks, and several blocks.
    fn boundary_lengths() -> Vec<usize> {
        let mut n = vec![241, 242, 255, 256, 257, 319, 320, 321];
        for blocks in 1..5 {
            for d in [-65i64, -64, -63, -2, -1, 0, 1, 2, 63, 64, 65] {
                n.push((blocks * BLOCK as i64 + d) as usize);
            }
        }
        n.extend([25_608, 51_208, 77_000]);
        n
    }

    #[test]
    fn xxh3_wide_equals_the_crate_at_every_length() {
        if !available() {
            eprintln!("no AVX-512 here: the crate hashes every input (nothing to compare)");
            return;
        }
        for seed in [0u64, SEED, u64::MAX] {
            let secret = derived_secret(seed);
            for n in boundary_lengths() {
                let input = bytes(n, n as u64 ^ seed);
                let want = xxh3::Hasher::oneshot_with_seed(seed, &input);
                assert_eq!(
                    hash(&secret, &input),
                    Some(want),
                    "length {n}, seed {seed:#x}"
                );
            }
        }
        // Short inputs are the crate's.
        assert_eq!(hash(&derived_secret(SEED), &[7u8; 240]), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Random inputs, lengths, copy starts and destination alignments: the hash is the
        /// crate's and the copy is exact, with nothing written outside the destination.
        #[test]
        fn hash_and_stream_hashes_and_copies(
            n in 241usize..5000,
            from_frac in 0.0f64..=1.0,
            offset in 0usize..64,
            seed in any::<u64>(),
        ) {
            if !available() {
                return Ok(());
            }
            let secret = derived_secret(seed);
            let input = bytes(n, seed);
            let from = ((n as f64) * from_frac) as usize;
            let len = n - from;
            // The destination at every alignment, between guard bytes.
            let mut buf = vec![0xA5u8; len + 256];
            let dst = &mut buf[64 + offset..64 + offset + len];
            let got = hash_and_stream(&secret, &input, from, dst);
            crate::sys::fence_streaming_stores();
            prop_assert_eq!(got, Some(xxh3::Hasher::oneshot_with_seed(seed, &input)));
            prop_assert_eq!(&buf[64 + offset..64 + offset + len], &input[from..]);
            prop_assert!(buf[..64 + offset].iter().all(|&b| b == 0xA5));
            prop_assert!(buf[64 + offset + len..].iter().all(|&b| b == 0xA5));
        }

        /// The same for the input cut into up to five parts anywhere (empty ones and parts
        /// shorter than a stripe included): hash and copy as of the whole.
        #[test]
        fn parts_hash_and_copy_as_their_concatenation(
            n in 241usize..5000,
            cuts in proptest::collection::vec(0.0f64..=1.0, 0..5),
            from_frac in 0.0f64..=1.0,
            offset in 0usize..64,
            seed in any::<u64>(),
        ) {
            if !available() {
                return Ok(());
            }
            let secret = derived_secret(seed);
            let input = bytes(n, seed);
            let mut at: Vec<usize> = cuts.iter().map(|c| ((n as f64) * c) as usize).collect();
            at.push(0);
            at.push(n);
            at.sort_unstable();
            let parts: Vec<&[u8]> = at.windows(2).map(|w| &input[w[0]..w[1]]).collect();
            let from = ((n as f64) * from_frac) as usize;
            let len = n - from;
            let mut buf = vec![0xA5u8; len + 256];
            let dst = &mut buf[64 + offset..64 + offset + len];
            let got = hash_parts_and_stream(&secret, &parts, from, dst);
            crate::sys::fence_streaming_stores();
            prop_assert_eq!(got, Some(xxh3::Hasher::oneshot_with_seed(seed, &input)));
            prop_assert_eq!(&buf[64 + offset..64 + offset + len], &input[from..]);
            prop_assert!(buf[..64 + offset].iter().all(|&b| b == 0xA5));
            prop_assert!(buf[64 + offset + len..].iter().all(|&b| b == 0xA5));
        }
    }
}
