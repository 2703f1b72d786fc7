//! The dealer's fast path: one iris record's plaintext code and mask bytes dealt straight into
//! the three parties' store records ([`crate::store::RecordLayout`]), with no intermediate
//! vectors of values and no allocation per record.
//!
//! The sharings are those of the general dealer (`irisc share`), element by element:
//! - rep3 over Z_2^k: x = x0 + x1 + x2 with x0, x1 uniform; party i holds (x_i, x_{i-1});
//! - GR(2^16, d) Shamir, d = 2, 4: the code packed d entries per ring element, reversed (the
//!   gallery side, [`super::galois::Packing::Reversed`]); P(X) = s + r·X with r uniform, party i
//!   holds P(α_i), α = 1, x, x + 1;
//! - F_p Shamir, p = 65519: P(X) = s + r·X with r uniform in F_p, party i holds P(i + 1).
//!
//! The values shared per record are its masked bits `m - 2 (c & m)` (in {-1, 0, 1}), then, with
//! secret masks, its mask bits. Randomness is AES-128 in counter mode under a fresh key from the
//! operating system per [`RecordDealer`] (one per block of records and thread), with AES-NI /
//! VAES ([`crate::rand::aes_ctr`]). Each step is a pass over one record's words that the
//! compiler vectorises.

use crate::rand::aes_ctr::AesCtr;
use crate::store::{RecordLayout, StoreParams, StoreSharing};

use super::fp;

/// Deals records of one store schema; holds the keystream and one record's scratch.
pub struct RecordDealer {
    layout: RecordLayout,
    sharing: StoreSharing,
    ring_bits: u32,
    code_bits: usize,
    secret_mask: bool,
    rng: AesCtr,
    /// One record's values (masked bits, then mask bits), as 16-bit words.
    values: Vec<u16>,
    /// Scratch for outputs not aligned to the share word.
    unaligned: [Vec<u64>; 3],
    /// Random words for one record (`u64`-backed, so any share word can be read from it).
    random: Vec<u64>,
}

impl std::fmt::Debug for RecordDealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordDealer")
            .field("sharing", &self.sharing)
            .field("ring_bits", &self.ring_bits)
            .finish_non_exhaustive()
    }
}

/// Bits `0..8` of a byte as sixteen-bit words, least significant bit first (the iris code bit
/// order, `IrisCode::code_bit`).
const SPREAD: [[u16; 8]; 256] = {
    let mut t = [[0u16; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut j = 0;
        while j < 8 {
            t[b][j] = ((b >> j) & 1) as u16;
            j += 1;
        }
        b += 1;
    }
    t
};

impl RecordDealer {
    /// A dealer for stores with `params` (the party field is ignored) whose randomness is the
    /// AES-CTR keystream of `key`, which must be fresh and secret (the operating system's
    /// generator: [`RecordDealer::from_os`]).
    pub fn with_key(params: &StoreParams, key: &[u8; 16]) -> Result<RecordDealer, String> {
        let layout = params.layout()?;
        if params.sharing == StoreSharing::Rep3 && params.ring_bits < 2 {
            return Err(format!(
                "cannot share iris codes over Z_2^{}: T = -1 and F = 1 would be the same element",
                params.ring_bits
            ));
        }
        let word = layout.element_bytes;
        let random = match params.sharing {
            StoreSharing::Rep3 => 2 * layout.elements * word,
            _ => layout.elements * 2,
        };
        Ok(RecordDealer {
            layout,
            sharing: params.sharing,
            ring_bits: params.ring_bits,
            code_bits: params.code_bits as usize,
            secret_mask: params.secret_mask,
            rng: AesCtr::new(key),
            values: vec![0; layout.elements],
            random: vec![0; random.div_ceil(8)],
            unaligned: Default::default(),
        })
    }

    /// [`RecordDealer::with_key`] with a key from the operating system's generator.
    pub fn from_os(params: &StoreParams) -> Result<RecordDealer, String> {
        let mut key = [0u8; 16];
        getrandom::fill(&mut key)
            .map_err(|e| format!("the operating system's random generator failed: {e}"))?;
        Self::with_key(params, &key)
    }

    pub fn layout(&self) -> &RecordLayout {
        &self.layout
    }

    /// Deals one record: `code` and `mask` are its `code_bits / 8` bytes each; `out[i]` is
    /// party i's share bytes of the record (`layout.share_size` each, overwritten entirely).
    pub fn deal(&mut self, code: &[u8], mask: &[u8], out: [&mut [u8]; 3]) -> Result<(), String> {
        let bytes = self.code_bits / 8;
        if code.len() != bytes || mask.len() != bytes {
            return Err(format!(
                "a record of {} code and {} mask bytes where {bytes} each are expected",
                code.len(),
                mask.len()
            ));
        }
        if out.iter().any(|o| o.len() != self.layout.share_size) {
            return Err("an output record of the wrong size".into());
        }
        self.encode(code, mask);
        let align = self.layout.element_bytes;
        if out.iter().any(|o| (o.as_ptr() as usize) % align != 0) {
            // Unaligned outputs: deal into aligned scratch, then copy.
            let words = self.layout.share_size.div_ceil(8);
            let mut scratch = std::mem::take(&mut self.unaligned);
            scratch.iter_mut().for_each(|s| s.resize(words, 0));
            let [s0, s1, s2] = &mut scratch;
            let size = self.layout.share_size;
            self.deal_aligned(bytes_of(s0, size), bytes_of(s1, size), bytes_of(s2, size))?;
            for (o, s) in out.into_iter().zip(scratch.iter_mut()) {
                o.copy_from_slice(bytes_of(s, size));
            }
            self.unaligned = scratch;
            return Ok(());
        }
        let [o0, o1, o2] = out;
        self.deal_aligned(o0, o1, o2)
    }

    fn deal_aligned(&mut self, o0: &mut [u8], o1: &mut [u8], o2: &mut [u8]) -> Result<(), String> {
        match self.sharing {
            StoreSharing::Rep3 => match self.layout.element_bytes {
                2 => self.rep3::<u16>(o0, o1, o2),
                4 => self.rep3::<u32>(o0, o1, o2),
                _ => self.rep3::<u64>(o0, o1, o2),
            },
            StoreSharing::ShamirGr { degree: 2 } => self.gr::<2>(o0, o1, o2),
            StoreSharing::ShamirGr { degree: 4 } => self.gr::<4>(o0, o1, o2),
            StoreSharing::ShamirGr { degree } => {
                return Err(format!("GR(2^16, {degree}) is not implemented"))
            }
            StoreSharing::ShamirPrime { .. } => self.fp(o0, o1, o2),
        }
        Ok(())
    }

    /// The record's values into `self.values`: masked bits as 16-bit words (-1 = 0xFFFF, the
    /// rep3 kernels sign-extend), then the mask bits with secret masks. Shamir over GR packs
    /// each block of d entries reversed (coefficient j = entry (-j) mod d).
    fn encode(&mut self, code: &[u8], mask: &[u8]) {
        let bits = self.code_bits;
        let (masked, mask_bits) = self.values.split_at_mut(bits);
        for ((out, &c), &m) in masked.chunks_exact_mut(8).zip(code).zip(mask) {
            let (sm, scm) = (&SPREAD[m as usize], &SPREAD[(c & m) as usize]);
            for j in 0..8 {
                out[j] = sm[j].wrapping_sub(scm[j].wrapping_mul(2));
            }
        }
        if self.secret_mask {
            for (out, &m) in mask_bits.chunks_exact_mut(8).zip(mask) {
                out.copy_from_slice(&SPREAD[m as usize]);
            }
        }
        if self.sharing == (StoreSharing::ShamirGr { degree: 4 }) {
            // Reversed packing for d = 4: (v0, v1, v2, v3) -> (v0, v3, v2, v1); d = 2 is the
            // identity.
            for e in self.values.chunks_exact_mut(4) {
                e.swap(1, 3);
            }
        }
    }

    fn rep3<W: Word>(&mut self, o0: &mut [u8], o1: &mut [u8], o2: &mut [u8]) {
        let n = self.layout.elements;
        let stride = self.layout.component_stride;
        let k = W::mask(self.ring_bits);
        let random = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.random)[..2 * n * W::BYTES];
        self.rng.fill(random);
        let random: &[W] = words(random);
        let (r0, r1) = random.split_at(n);
        let (own0, prev0) = o0.split_at_mut(stride);
        let (own1, prev1) = o1.split_at_mut(stride);
        let (own2, prev2) = o2.split_at_mut(stride);
        let mut parts = [own0, prev0, own1, prev1, own2, prev2];
        // Component padding (a record's components are 8-byte aligned) stays zero.
        for p in parts.iter_mut() {
            p[n * W::BYTES..].fill(0);
        }
        let [own0, prev0, own1, prev1, own2, prev2] =
            parts.map(|p| words_mut::<W>(&mut p[..n * W::BYTES]));
        rep3_kernel::<W>(
            k,
            &self.values,
            r0,
            r1,
            [own0, prev0, own1, prev1, own2, prev2],
        );
    }

    fn gr<const D: usize>(&mut self, o0: &mut [u8], o1: &mut [u8], o2: &mut [u8]) {
        let n = self.layout.elements;
        let random = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.random)[..2 * n];
        self.rng.fill(random);
        let r: &[u16] = words(random);
        let [o0, o1, o2] = [o0, o1, o2].map(|o| words_mut::<u16>(o));
        gr_kernel::<D>(&self.values, r, o0, o1, o2);
    }

    fn fp(&mut self, o0: &mut [u8], o1: &mut [u8], o2: &mut [u8]) {
        const P: u16 = fp::P;
        let n = self.layout.elements;
        let random = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.random)[..2 * n];
        self.rng.fill(random);
        let r: &mut [u16] = bytemuck::cast_slice_mut(random);
        // r uniform in F_p by rejection: a 16-bit draw at or above p (17 in 65 536) is drawn
        // again, position by position; chunks with none pass with one comparison.
        for chunk in r.chunks_mut(32) {
            if chunk.iter().fold(0u16, |m, &w| m.max(w)) >= P {
                for w in chunk.iter_mut() {
                    while *w >= P {
                        let mut b = [0u8; 2];
                        self.rng.fill(&mut b);
                        *w = u16::from_le_bytes(b);
                    }
                }
            }
        }
        let [o0, o1, o2] = [o0, o1, o2].map(|o| words_mut::<u16>(o));
        fp_kernel(&self.values, r, o0, o1, o2);
    }
}

/// The first `len` bytes of `words`.
fn bytes_of(words: &mut [u64], len: usize) -> &mut [u8] {
    &mut bytemuck::cast_slice_mut::<u64, u8>(words)[..len]
}

/// The words of a share buffer (aligned by construction: records and components start at
/// multiples of 8 bytes of page-aligned buffers, and scratch is `u64`-backed).
fn words<W: bytemuck::Pod>(b: &[u8]) -> &[W] {
    bytemuck::cast_slice(b)
}

fn words_mut<W: bytemuck::Pod>(b: &mut [u8]) -> &mut [W] {
    bytemuck::cast_slice_mut(b)
}

/// Whether the AVX-512 builds of the kernels may run.
fn wide() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512bw")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// rep3: x0 = r0 & k, x1 = r1 & k, x2 = v - x0 - x1; party i gets (x_i, x_{i-1}).
#[inline(always)]
fn rep3_body<W: Word>(k: W, v: &[u16], r0: &[W], r1: &[W], out: [&mut [W]; 6]) {
    let [own0, prev0, own1, prev1, own2, prev2] = out;
    let n = v.len();
    let (r0, r1) = (&r0[..n], &r1[..n]);
    let (own0, prev0, own1, prev1, own2, prev2) = (
        &mut own0[..n],
        &mut prev0[..n],
        &mut own1[..n],
        &mut prev1[..n],
        &mut own2[..n],
        &mut prev2[..n],
    );
    for i in 0..n {
        let x0 = r0[i].and(k);
        let x1 = r1[i].and(k);
        let x2 = W::from_signed16(v[i]).sub(x0).sub(x1).and(k);
        own0[i] = x0.to_le();
        prev1[i] = x0.to_le();
        own1[i] = x1.to_le();
        prev2[i] = x1.to_le();
        own2[i] = x2.to_le();
        prev0[i] = x2.to_le();
    }
}

/// GR(2^16, D): party shares s + r, s + r·x, s + r·x + r, element by element, with r·x given
/// by x^D = x + 1 (the top coefficient carried into the two lowest).
#[inline(always)]
fn gr_body<const D: usize>(s: &[u16], r: &[u16], o0: &mut [u16], o1: &mut [u16], o2: &mut [u16]) {
    const LANES: usize = 32;
    let n = s.len() / LANES * LANES;
    let blocks = s[..n]
        .chunks_exact(LANES)
        .zip(r[..n].chunks_exact(LANES))
        .zip(o0[..n].chunks_exact_mut(LANES))
        .zip(o1[..n].chunks_exact_mut(LANES))
        .zip(o2[..n].chunks_exact_mut(LANES));
    for ((((s, r), a), b), c) in blocks {
        let rx: [u16; LANES] = std::array::from_fn(|i| {
            let (j, base) = (i % D, i - i % D);
            let shifted = if j >= 1 { r[i - 1] } else { 0 };
            let carried = if j <= 1 { r[base + D - 1] } else { 0 };
            shifted.wrapping_add(carried)
        });
        for i in 0..LANES {
            let p1 = s[i].wrapping_add(rx[i]);
            a[i] = s[i].wrapping_add(r[i]).to_le();
            b[i] = p1.to_le();
            c[i] = p1.wrapping_add(r[i]).to_le();
        }
    }
    for e in (n..s.len()).step_by(D) {
        for j in 0..D {
            let i = e + j;
            let shifted = if j >= 1 { r[i - 1] } else { 0 };
            let carried = if j <= 1 { r[e + D - 1] } else { 0 };
            let p1 = s[i].wrapping_add(shifted.wrapping_add(carried));
            o0[i] = s[i].wrapping_add(r[i]).to_le();
            o1[i] = p1.to_le();
            o2[i] = p1.wrapping_add(r[i]).to_le();
        }
    }
}

/// F_p: party i gets s + (i + 1)·r mod p, by repeated modular addition; -1 is p - 1.
#[inline(always)]
fn fp_body(v: &[u16], r: &[u16], o0: &mut [u16], o1: &mut [u16], o2: &mut [u16]) {
    const P: u32 = fp::P as u32;
    let n = v.len();
    let (r, o0, o1, o2) = (&r[..n], &mut o0[..n], &mut o1[..n], &mut o2[..n]);
    let add = |a: u32, b: u32| -> u32 {
        let t = a + b;
        if t >= P {
            t - P
        } else {
            t
        }
    };
    for i in 0..n {
        let s = if v[i] == u16::MAX {
            P - 1
        } else {
            u32::from(v[i])
        };
        let r = u32::from(r[i]);
        let y0 = add(s, r);
        let y1 = add(y0, r);
        let y2 = add(y1, r);
        o0[i] = (y0 as u16).to_le();
        o1[i] = (y1 as u16).to_le();
        o2[i] = (y2 as u16).to_le();
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::*;

    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn rep3<W: Word>(k: W, v: &[u16], r0: &[W], r1: &[W], out: [&mut [W]; 6]) {
        rep3_body(k, v, r0, r1, out)
    }

    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn gr<const D: usize>(
        s: &[u16],
        r: &[u16],
        o0: &mut [u16],
        o1: &mut [u16],
        o2: &mut [u16],
    ) {
        gr_body::<D>(s, r, o0, o1, o2)
    }

    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn fp(v: &[u16], r: &[u16], o0: &mut [u16], o1: &mut [u16], o2: &mut [u16]) {
        fp_body(v, r, o0, o1, o2)
    }
}

fn rep3_kernel<W: Word>(k: W, v: &[u16], r0: &[W], r1: &[W], out: [&mut [W]; 6]) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: the CPU has AVX-512F/BW (checked just now).
        return unsafe { avx512::rep3(k, v, r0, r1, out) };
    }
    rep3_body(k, v, r0, r1, out)
}

fn gr_kernel<const D: usize>(s: &[u16], r: &[u16], o0: &mut [u16], o1: &mut [u16], o2: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: as above.
        return unsafe { avx512::gr::<D>(s, r, o0, o1, o2) };
    }
    gr_body::<D>(s, r, o0, o1, o2)
}

fn fp_kernel(v: &[u16], r: &[u16], o0: &mut [u16], o1: &mut [u16], o2: &mut [u16]) {
    #[cfg(target_arch = "x86_64")]
    if wide() {
        // SAFETY: as above.
        return unsafe { avx512::fp(v, r, o0, o1, o2) };
    }
    fp_body(v, r, o0, o1, o2)
}

/// The share word of a rep3 ring: u16, u32 or u64, stored little-endian.
trait Word: bytemuck::Pod {
    const BYTES: usize;
    fn to_le(self) -> Self;
    fn mask(ring_bits: u32) -> Self;
    /// A value in {-1, 0, 1} given as a 16-bit word, sign-extended.
    fn from_signed16(v: u16) -> Self;
    fn and(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
}

macro_rules! word {
    ($t:ty, $signed:ty) => {
        impl Word for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            fn mask(ring_bits: u32) -> Self {
                if ring_bits >= <$t>::BITS {
                    <$t>::MAX
                } else {
                    (1 << ring_bits) - 1
                }
            }
            #[inline(always)]
            fn to_le(self) -> Self {
                <$t>::to_le(self)
            }
            #[inline(always)]
            fn from_signed16(v: u16) -> Self {
                v as i16 as $signed as $t
            }
            #[inline(always)]
            fn and(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
        }
    };
}
word!(u16, i16);
word!(u32, i32);
word!(u64, i64);

/// Writes record meta `id | mask` (zero-padded) into `out` (`layout.meta_size` bytes).
pub fn encode_meta(layout: &RecordLayout, id: u64, mask: &[u8], out: &mut [u8]) {
    out.fill(0);
    out[0..8].copy_from_slice(&id.to_le_bytes());
    let at = layout.mask_offset;
    out[at..at + layout.mask_len].copy_from_slice(&mask[..layout.mask_len]);
}
