//! The dealer's fast path: one iris record's plaintext code and mask bytes dealt straight into
//! the three parties' store records ([`crate::store::RecordLayout`]), with no intermediate
//! vectors of values and no allocation per record.
//!
//! The sharings are those of the general dealer (`irisc share`), element by element:
//! - rep3 over Z_2^k: x = x0 + x1 + x2 with x0, x1 uniform; party i holds (x_i, x_{i-1});
//! - GR(2^16, d) Shamir, d = 2, 4: the code packed d entries per ring element, reversed (the
//!   gallery side, [`crate::share::galois::Packing::Reversed`]); P(X) = s + r·X with r uniform, party i
//!   holds P(α_i), α = 1, x, x + 1;
//! - F_p Shamir, p = 65519: P(X) = s + r·X with r uniform in F_p, party i holds P(i + 1).
//!
//! The values shared per record are its masked bits `m - 2 (c & m)` (in {-1, 0, 1}), then, with
//! secret masks, its mask bits. Randomness is AES-128 in counter mode under a fresh key from the
//! operating system per [`RecordDealer`] (one per block of records and thread), with AES-NI /
//! VAES ([`crate::rand::aes_ctr`]). Each step is a pass over one record's words, built for the
//! widest vectors the CPU has ([`Simd`]: AVX-512BW, AVX2, or the baseline the compiler
//! vectorises for); rep3 over 16-bit words makes its shares straight from the record's bits.

use crate::rand::aes_ctr::AesCtr;
use crate::store::{RecordLayout, StoreParams, StoreSharing};

use crate::share::fp;

/// Deals records of one store schema; holds the keystream and one record's scratch.
pub struct RecordDealer {
    layout: RecordLayout,
    sharing: StoreSharing,
    ring_bits: u32,
    code_bits: usize,
    secret_mask: bool,
    simd: Simd,
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

/// Byte by byte through [`SPREAD`]: each masked bit as m - 2 (c & m) (1, -1, or 0 where the
/// mask is clear), and with `mask_bits` the mask bits as 0 / 1.
fn encode_bytes(code: &[u8], mask: &[u8], masked: &mut [u16], mask_bits: Option<&mut [u16]>) {
    for ((out, &c), &m) in masked.chunks_exact_mut(8).zip(code).zip(mask) {
        let (sm, scm) = (&SPREAD[m as usize], &SPREAD[(c & m) as usize]);
        for j in 0..8 {
            out[j] = sm[j].wrapping_sub(scm[j].wrapping_mul(2));
        }
    }
    if let Some(mask_bits) = mask_bits {
        for (out, &m) in mask_bits.chunks_exact_mut(8).zip(mask) {
            out.copy_from_slice(&SPREAD[m as usize]);
        }
    }
}

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
            simd: Simd::detect(),
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

    /// The same dealer with its loops built for `simd`, which the CPU must run (the tests deal
    /// with every level the CPU has, whatever the widest one).
    #[cfg(test)]
    fn with_simd(mut self, simd: Simd) -> RecordDealer {
        assert!(simd.supported(), "this CPU does not run {simd:?}");
        self.simd = simd;
        self
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
        if !self.rep3_from_bits() {
            self.encode(code, mask);
        }
        let align = self.layout.element_bytes;
        if out
            .iter()
            .any(|o| !(o.as_ptr() as usize).is_multiple_of(align))
        {
            // Unaligned outputs: deal into aligned scratch, then copy.
            let words = self.layout.share_size.div_ceil(8);
            let mut scratch = std::mem::take(&mut self.unaligned);
            scratch.iter_mut().for_each(|s| s.resize(words, 0));
            let [s0, s1, s2] = &mut scratch;
            let size = self.layout.share_size;
            self.deal_aligned(
                (code, mask),
                [bytes_of(s0, size), bytes_of(s1, size), bytes_of(s2, size)],
            )?;
            for (o, s) in out.into_iter().zip(scratch.iter_mut()) {
                o.copy_from_slice(bytes_of(s, size));
            }
            self.unaligned = scratch;
            return Ok(());
        }
        self.deal_aligned((code, mask), out)
    }

    /// Whether rep3 shares are made straight from the record's bits, with no `values` pass
    /// between: 16-bit words on AVX-512 or AVX2, whole 32-bit groups of code bits.
    /// Deals one record of replicated shares over Z_2^16 as its three components, where the
    /// dealer makes them from the bits (AVX2 or AVX-512): `x0` and `x1` are the keystream's
    /// words themselves (uniform in Z_2^16, so no copy is made), `x2 = v - x0 - x1`; party i
    /// holds `(x_i, x_{i-1})`. The same components as [`RecordDealer::deal`] deals from the
    /// same keystream, without writing each twice: [`RecordHash::parts_and_stream`] hashes and
    /// stores each party's record from them. `None` (nothing drawn) for any other sharing,
    /// ring or CPU, which [`RecordDealer::deal`] takes.
    ///
    /// [`RecordHash::parts_and_stream`]: crate::store::RecordHash::parts_and_stream
    pub fn rep3_components(
        &mut self,
        code: &[u8],
        mask: &[u8],
    ) -> Result<Option<[&[u8]; 3]>, String> {
        #[cfg(target_arch = "x86_64")]
        if self.rep3_from_bits() && self.ring_bits == 16 {
            let bytes = self.code_bits / 8;
            if code.len() != bytes || mask.len() != bytes {
                return Err(format!(
                    "a record of {} code and {} mask bytes where {bytes} each are expected",
                    code.len(),
                    mask.len()
                ));
            }
            let n = self.layout.elements;
            let random = &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.random)[..4 * n];
            self.rng.fill(random);
            let (r0, r1) = bytemuck::cast_slice::<u8, u16>(random).split_at(n);
            let x2 = &mut self.values[..n];
            let bits = (code, mask, self.secret_mask);
            // SAFETY: the CPU runs `self.simd`, which is not the baseline (`rep3_from_bits`).
            unsafe {
                match self.simd {
                    Simd::Avx512 => avx512::rep3_third_from_bits(bits, r0, r1, x2),
                    _ => avx2::rep3_third_from_bits(bits, r0, r1, x2),
                }
            };
            let (r0, r1) = random.split_at(2 * n);
            return Ok(Some([r0, r1, bytemuck::cast_slice(&self.values[..n])]));
        }
        Ok(None)
    }

    fn rep3_from_bits(&self) -> bool {
        self.sharing == StoreSharing::Rep3
            && self.layout.element_bytes == 2
            && self.code_bits.is_multiple_of(32)
            && self.simd != Simd::Baseline
    }

    fn deal_aligned(
        &mut self,
        bits: (&[u8], &[u8]),
        [o0, o1, o2]: [&mut [u8]; 3],
    ) -> Result<(), String> {
        match self.sharing {
            StoreSharing::Rep3 => match self.layout.element_bytes {
                2 => self.rep3::<u16>(bits, o0, o1, o2),
                4 => self.rep3::<u32>(bits, o0, o1, o2),
                _ => self.rep3::<u64>(bits, o0, o1, o2),
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
        let mask_bits = self.secret_mask.then_some(mask_bits);
        // SAFETY (each arm): the CPU runs `self.simd` (detected, or checked by `with_simd`).
        match self.simd {
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { avx512::encode(code, mask, masked, mask_bits) },
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { avx2::encode(code, mask, masked, mask_bits) },
            _ => encode_bytes(code, mask, masked, mask_bits),
        }
        if self.sharing == (StoreSharing::ShamirGr { degree: 4 }) {
            // Reversed packing for d = 4: (v0, v1, v2, v3) -> (v0, v3, v2, v1); d = 2 is the
            // identity.
            for e in self.values.chunks_exact_mut(4) {
                e.swap(1, 3);
            }
        }
    }

    fn rep3<W: Word>(
        &mut self,
        (code, mask): (&[u8], &[u8]),
        o0: &mut [u8],
        o1: &mut [u8],
        o2: &mut [u8],
    ) {
        let from_bits = self.rep3_from_bits();
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
        #[cfg(target_arch = "x86_64")]
        if from_bits {
            let k = bytemuck::cast_slice::<W, u16>(&[k])[0];
            let bits = (code, mask, self.secret_mask);
            let (r0, r1) = (bytemuck::cast_slice(r0), bytemuck::cast_slice(r1));
            let out = [own0, prev0, own1, prev1, own2, prev2].map(words_mut_as_u16);
            // SAFETY: the CPU runs `self.simd`, which is not the baseline (`rep3_from_bits`).
            unsafe {
                match self.simd {
                    Simd::Avx512 => avx512::rep3_from_bits(k, bits, r0, r1, out),
                    _ => avx2::rep3_from_bits(k, bits, r0, r1, out),
                }
            };
            return;
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (from_bits, code, mask);
        rep3_kernel::<W>(
            self.simd,
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
        let [o0, o1, o2] = [o0, o1, o2].map(words_mut::<u16>);
        gr_kernel::<D>(self.simd, &self.values, r, o0, o1, o2);
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
        let [o0, o1, o2] = [o0, o1, o2].map(words_mut::<u16>);
        fp_kernel(self.simd, &self.values, r, o0, o1, o2);
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

#[cfg(target_arch = "x86_64")]
fn words_mut_as_u16<W: bytemuck::Pod>(w: &mut [W]) -> &mut [u16] {
    bytemuck::cast_slice_mut(w)
}

fn words_mut<W: bytemuck::Pod>(b: &mut [u8]) -> &mut [W] {
    bytemuck::cast_slice_mut(b)
}

/// The vector instructions the dealer's loops are built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Simd {
    /// AVX-512F/BW: 32 sixteen-bit lanes, lane masks from the record's bits.
    Avx512,
    /// AVX2: 16 sixteen-bit lanes (a Zen 3 or Skylake client core).
    Avx2,
    /// What the compiler vectorises for the target's baseline.
    Baseline,
}

impl Simd {
    /// The widest level this CPU runs.
    fn detect() -> Simd {
        [Simd::Avx512, Simd::Avx2]
            .into_iter()
            .find(|s| s.supported())
            .unwrap_or(Simd::Baseline)
    }

    fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            match self {
                Simd::Avx512 => std::arch::is_x86_feature_detected!("avx512bw"),
                Simd::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
                Simd::Baseline => true,
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Simd::Baseline
        }
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
        // A plain loop over whole elements (D words each), which the compiler unrolls and
        // vectorises; `array::from_fn` with a per-word closure stayed a call per block, 6 % of
        // dealing a GR gallery.
        let mut rx = [0u16; LANES];
        for e in (0..LANES).step_by(D) {
            for j in 0..D {
                let shifted = if j >= 1 { r[e + j - 1] } else { 0 };
                let carried = if j <= 1 { r[e + D - 1] } else { 0 };
                rx[e + j] = shifted.wrapping_add(carried);
            }
        }
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
    const P: u16 = fp::P;
    let n = v.len();
    let (r, o0, o1, o2) = (&r[..n], &mut o0[..n], &mut o1[..n], &mut o2[..n]);
    for i in 0..n {
        let s = if v[i] == u16::MAX { P - 1 } else { v[i] };
        let y0 = add_mod_p(s, r[i]);
        let y1 = add_mod_p(y0, r[i]);
        let y2 = add_mod_p(y1, r[i]);
        o0[i] = y0.to_le();
        o1[i] = y1.to_le();
        o2[i] = y2.to_le();
    }
}

/// `a + b mod p` for `a, b < p` in 16-bit words (so that a vector holds 32 of them, not 16):
/// p = 2^16 - 17, so where the sum reaches p (the 16-bit add carried, or its word is at least
/// p) the reduced sum is the word plus 17, wrapping.
#[inline(always)]
fn add_mod_p(a: u16, b: u16) -> u16 {
    const FOLD: u16 = 0u16.wrapping_sub(fp::P);
    let (t, carried) = a.overflowing_add(b);
    if carried || t >= fp::P {
        t.wrapping_add(FOLD)
    } else {
        t
    }
}

/// The sharing loops' builds for one vector level (`$features`): the bodies, inlined into
/// functions compiled with those target features, which the compiler vectorises for them.
#[cfg(target_arch = "x86_64")]
macro_rules! sharing_loops {
    ($features:literal) => {
        #[target_feature(enable = $features)]
        pub(super) unsafe fn rep3<W: Word>(
            k: W,
            v: &[u16],
            r0: &[W],
            r1: &[W],
            out: [&mut [W]; 6],
        ) {
            rep3_body(k, v, r0, r1, out)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn gr<const D: usize>(
            s: &[u16],
            r: &[u16],
            o0: &mut [u16],
            o1: &mut [u16],
            o2: &mut [u16],
        ) {
            gr_body::<D>(s, r, o0, o1, o2)
        }

        #[target_feature(enable = $features)]
        pub(super) unsafe fn fp(
            v: &[u16],
            r: &[u16],
            o0: &mut [u16],
            o1: &mut [u16],
            o2: &mut [u16],
        ) {
            fp_body(v, r, o0, o1, o2)
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::*;
    use std::arch::x86_64::{
        __m512i, _mm512_and_si512, _mm512_loadu_si512, _mm512_mask_mov_epi16,
        _mm512_maskz_mov_epi16, _mm512_set1_epi16, _mm512_storeu_si512, _mm512_sub_epi16,
    };

    /// Bits `32 i .. 32 i + 32` of `bytes` as a lane mask: the bits of a little-endian u32
    /// (bit 8b + j is byte b's bit j, the element order).
    fn lanes_of(bytes: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"))
    }

    /// 32 elements' values from their code bits `c` and mask bits `m`: (m - 2 (c & m), m), as
    /// 16-bit words (two masked moves).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    fn values_of(c: u32, m: u32) -> (__m512i, __m512i) {
        let present = _mm512_maskz_mov_epi16(m, _mm512_set1_epi16(1));
        let v = _mm512_mask_mov_epi16(present, c & m, _mm512_set1_epi16(-1));
        (v, present)
    }

    /// [`super::encode_bytes`] 32 bits at a time ([`values_of`]).
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn encode(
        code: &[u8],
        mask: &[u8],
        masked: &mut [u16],
        mut mask_bits: Option<&mut [u16]>,
    ) {
        let whole = code.len().min(mask.len()).min(masked.len() / 8) / 4;
        for i in 0..whole {
            let (v, present) = values_of(lanes_of(code, i), lanes_of(mask, i));
            let out = &mut masked[32 * i..32 * i + 32];
            // SAFETY: `out` holds 32 words (64 bytes); unaligned stores.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) };
            if let Some(bits) = mask_bits.as_deref_mut() {
                let out = &mut bits[32 * i..32 * i + 32];
                // SAFETY: as above.
                unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), present) };
            }
        }
        let done = 4 * whole;
        super::encode_bytes(
            &code[done..],
            &mask[done..],
            &mut masked[8 * done..],
            mask_bits.map(|b| &mut b[8 * done..]),
        );
    }

    /// rep3 over 16-bit words made from the record's bits 32 at a time ([`values_of`]) inside
    /// the sharing loop, so the values never pass through memory: the masked bits, then with
    /// `secret` the mask bits. `code.len()` is a multiple of 4.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn rep3_from_bits(
        k: u16,
        (code, mask, secret): (&[u8], &[u8], bool),
        r0: &[u16],
        r1: &[u16],
        out: [&mut [u16]; 6],
    ) {
        let groups = code.len() / 4;
        let n = groups * 32 * if secret { 2 } else { 1 };
        assert!(r0.len() >= n && r1.len() >= n && out.iter().all(|o| o.len() >= n));
        let kv = _mm512_set1_epi16(k as i16);
        let [own0, prev0, own1, prev1, own2, prev2] = out;
        for g in 0..n / 32 {
            let v = if g < groups {
                values_of(lanes_of(code, g), lanes_of(mask, g)).0
            } else {
                values_of(0, lanes_of(mask, g - groups)).1
            };
            let at = 32 * g;
            // SAFETY: every slice holds at least n >= at + 32 words (asserted); unaligned
            // loads and stores.
            unsafe {
                let load = |w: &[u16]| _mm512_loadu_si512(w.as_ptr().add(at).cast::<__m512i>());
                let x0 = _mm512_and_si512(load(r0), kv);
                let x1 = _mm512_and_si512(load(r1), kv);
                let x2 = _mm512_and_si512(_mm512_sub_epi16(_mm512_sub_epi16(v, x0), x1), kv);
                for (o, x) in [
                    (&mut *own0, x0),
                    (&mut *prev1, x0),
                    (&mut *own1, x1),
                    (&mut *prev2, x1),
                    (&mut *own2, x2),
                    (&mut *prev0, x2),
                ] {
                    _mm512_storeu_si512(o.as_mut_ptr().add(at).cast::<__m512i>(), x);
                }
            }
        }
    }

    /// The third component alone of [`rep3_from_bits`] over Z_2^16, where the first two are
    /// the random words themselves: `x2 = v - r0 - r1`.
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub(super) unsafe fn rep3_third_from_bits(
        (code, mask, secret): (&[u8], &[u8], bool),
        r0: &[u16],
        r1: &[u16],
        x2: &mut [u16],
    ) {
        let groups = code.len() / 4;
        let n = groups * 32 * if secret { 2 } else { 1 };
        assert!(r0.len() >= n && r1.len() >= n && x2.len() >= n);
        for g in 0..n / 32 {
            let v = if g < groups {
                values_of(lanes_of(code, g), lanes_of(mask, g)).0
            } else {
                values_of(0, lanes_of(mask, g - groups)).1
            };
            let at = 32 * g;
            // SAFETY: every slice holds at least n >= at + 32 words (asserted); unaligned
            // loads and stores.
            unsafe {
                let load = |w: &[u16]| _mm512_loadu_si512(w.as_ptr().add(at).cast::<__m512i>());
                let x = _mm512_sub_epi16(_mm512_sub_epi16(v, load(r0)), load(r1));
                _mm512_storeu_si512(x2.as_mut_ptr().add(at).cast::<__m512i>(), x);
            }
        }
    }

    sharing_loops!("avx512f,avx512bw,avx2");
}

// The sharing loops at `simd` (SAFETY, every arm: the dealer's level runs on this CPU).

fn rep3_kernel<W: Word>(simd: Simd, k: W, v: &[u16], r0: &[W], r1: &[W], out: [&mut [W]; 6]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::rep3(k, v, r0, r1, out) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::rep3(k, v, r0, r1, out) },
        _ => rep3_body(k, v, r0, r1, out),
    }
}

fn gr_kernel<const D: usize>(
    simd: Simd,
    s: &[u16],
    r: &[u16],
    o0: &mut [u16],
    o1: &mut [u16],
    o2: &mut [u16],
) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::gr::<D>(s, r, o0, o1, o2) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::gr::<D>(s, r, o0, o1, o2) },
        _ => gr_body::<D>(s, r, o0, o1, o2),
    }
}

fn fp_kernel(simd: Simd, v: &[u16], r: &[u16], o0: &mut [u16], o1: &mut [u16], o2: &mut [u16]) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { avx512::fp(v, r, o0, o1, o2) },
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { avx2::fp(v, r, o0, o1, o2) },
        _ => fp_body(v, r, o0, o1, o2),
    }
}

/// The AVX2 builds: 16 sixteen-bit lanes, each lane testing its own bit of a 16-bit group
/// (AVX2 has no lane masks).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::*;
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi16, _mm256_and_si256, _mm256_cmpeq_epi16, _mm256_loadu_si256,
        _mm256_set1_epi16, _mm256_setr_epi16, _mm256_srli_epi16, _mm256_storeu_si256,
        _mm256_sub_epi16,
    };

    /// Bits `16 i .. 16 i + 16` of `bytes` (bit 8b + j is byte b's bit j, the element order).
    fn group_of(bytes: &[u8], i: usize) -> u16 {
        u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]])
    }

    /// 16 elements' values from their code bits `c` and mask bits `m`: (m - 2 (c & m), m) as
    /// 16-bit words. Lane j is all ones where bit j is set (`set`), so the masked bit is
    /// 2 set(c & m) - set(m) (-2 + 1, 0 + 1, or 0) and the mask bit set(m) >> 15.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn values_of(c: u16, m: u16) -> (__m256i, __m256i) {
        let bit = _mm256_setr_epi16(
            1,
            2,
            4,
            8,
            16,
            32,
            64,
            128,
            256,
            512,
            1024,
            2048,
            4096,
            8192,
            16384,
            i16::MIN,
        );
        let set =
            |x: u16| _mm256_cmpeq_epi16(_mm256_and_si256(_mm256_set1_epi16(x as i16), bit), bit);
        let (both, present) = (set(c & m), set(m));
        let v = _mm256_sub_epi16(_mm256_add_epi16(both, both), present);
        (v, _mm256_srli_epi16(present, 15))
    }

    /// [`super::encode_bytes`] 16 bits at a time ([`values_of`]).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn encode(
        code: &[u8],
        mask: &[u8],
        masked: &mut [u16],
        mut mask_bits: Option<&mut [u16]>,
    ) {
        let whole = code.len().min(mask.len()).min(masked.len() / 8) / 2;
        for i in 0..whole {
            let (v, present) = values_of(group_of(code, i), group_of(mask, i));
            let out = &mut masked[16 * i..16 * i + 16];
            // SAFETY: `out` holds 16 words (32 bytes); unaligned stores.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
            if let Some(bits) = mask_bits.as_deref_mut() {
                let out = &mut bits[16 * i..16 * i + 16];
                // SAFETY: as above.
                unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), present) };
            }
        }
        let done = 2 * whole;
        super::encode_bytes(
            &code[done..],
            &mask[done..],
            &mut masked[8 * done..],
            mask_bits.map(|b| &mut b[8 * done..]),
        );
    }

    /// rep3 over 16-bit words made from the record's bits 16 at a time ([`values_of`]) inside
    /// the sharing loop, as [`super::avx512::rep3_from_bits`]. `code.len()` is even.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn rep3_from_bits(
        k: u16,
        (code, mask, secret): (&[u8], &[u8], bool),
        r0: &[u16],
        r1: &[u16],
        out: [&mut [u16]; 6],
    ) {
        let groups = code.len() / 2;
        let n = groups * 16 * if secret { 2 } else { 1 };
        assert!(r0.len() >= n && r1.len() >= n && out.iter().all(|o| o.len() >= n));
        let kv = _mm256_set1_epi16(k as i16);
        let [own0, prev0, own1, prev1, own2, prev2] = out;
        for g in 0..n / 16 {
            let v = if g < groups {
                values_of(group_of(code, g), group_of(mask, g)).0
            } else {
                values_of(0, group_of(mask, g - groups)).1
            };
            let at = 16 * g;
            // SAFETY: every slice holds at least n >= at + 16 words (asserted); unaligned
            // loads and stores.
            unsafe {
                let load = |w: &[u16]| _mm256_loadu_si256(w.as_ptr().add(at).cast::<__m256i>());
                let x0 = _mm256_and_si256(load(r0), kv);
                let x1 = _mm256_and_si256(load(r1), kv);
                let x2 = _mm256_and_si256(_mm256_sub_epi16(_mm256_sub_epi16(v, x0), x1), kv);
                for (o, x) in [
                    (&mut *own0, x0),
                    (&mut *prev1, x0),
                    (&mut *own1, x1),
                    (&mut *prev2, x1),
                    (&mut *own2, x2),
                    (&mut *prev0, x2),
                ] {
                    _mm256_storeu_si256(o.as_mut_ptr().add(at).cast::<__m256i>(), x);
                }
            }
        }
    }

    /// The third component alone, as [`super::avx512::rep3_third_from_bits`].
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn rep3_third_from_bits(
        (code, mask, secret): (&[u8], &[u8], bool),
        r0: &[u16],
        r1: &[u16],
        x2: &mut [u16],
    ) {
        let groups = code.len() / 2;
        let n = groups * 16 * if secret { 2 } else { 1 };
        assert!(r0.len() >= n && r1.len() >= n && x2.len() >= n);
        for g in 0..n / 16 {
            let v = if g < groups {
                values_of(group_of(code, g), group_of(mask, g)).0
            } else {
                values_of(0, group_of(mask, g - groups)).1
            };
            let at = 16 * g;
            // SAFETY: every slice holds at least n >= at + 16 words (asserted); unaligned
            // loads and stores.
            unsafe {
                let load = |w: &[u16]| _mm256_loadu_si256(w.as_ptr().add(at).cast::<__m256i>());
                let x = _mm256_sub_epi16(_mm256_sub_epi16(v, load(r0)), load(r1));
                _mm256_storeu_si256(x2.as_mut_ptr().add(at).cast::<__m256i>(), x);
            }
        }
    }

    sharing_loops!("avx2");
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

#[cfg(test)]
mod tests {
    //! Reconstruction against the plaintext definition of each sharing, and uniformity: a
    //! chi-squared test at a false-alarm rate of 10^-6, shown to reject deliberately biased
    //! dealers built from the same kernels.

    use super::*;
    use crate::share::galois::{self, Packing, ShamirVec};
    use proptest::prelude::*;

    fn params(sharing: StoreSharing, ring_bits: u32, code_bits: u32, secret: bool) -> StoreParams {
        StoreParams {
            fingerprint: "abc".into(),
            party: 0,
            sharing,
            ring_bits,
            code_bits,
            secret_mask: secret,
            set_id: [0; 16],
        }
    }

    /// The plaintext values of a record, from the bits one at a time (LSB first): masked bits
    /// m - 2 (c & m) as integers, then the mask bits with secret masks.
    fn plain_values(code: &[u8], mask: &[u8], secret: bool) -> Vec<i64> {
        let bit = |b: &[u8], i: usize| i64::from((b[i / 8] >> (i % 8)) & 1);
        let n = code.len() * 8;
        let mut v: Vec<i64> = (0..n)
            .map(|i| bit(mask, i) - 2 * (bit(code, i) & bit(mask, i)))
            .collect();
        if secret {
            v.extend((0..n).map(|i| bit(mask, i)));
        }
        v
    }

    /// The vector levels this CPU runs, widest first.
    fn levels() -> Vec<Simd> {
        [Simd::Avx512, Simd::Avx2, Simd::Baseline]
            .into_iter()
            .filter(|s| s.supported())
            .collect()
    }

    /// Deals one record at `simd` and returns the three parties' share bytes.
    fn deal_at(simd: Simd, p: &StoreParams, code: &[u8], mask: &[u8]) -> [Vec<u8>; 3] {
        let mut d = RecordDealer::from_os(p).unwrap().with_simd(simd);
        let size = d.layout().share_size;
        let mut out = [vec![0u8; size], vec![0u8; size], vec![0u8; size]];
        let [a, b, c] = &mut out;
        d.deal(code, mask, [a, b, c]).unwrap();
        out
    }

    /// Deals one record at every vector level this CPU runs and returns each level's shares.
    fn deal_one(p: &StoreParams, code: &[u8], mask: &[u8]) -> Vec<(Simd, [Vec<u8>; 3])> {
        levels()
            .into_iter()
            .map(|s| (s, deal_at(s, p, code, mask)))
            .collect()
    }

    fn le_words(b: &[u8], w: usize) -> Vec<u64> {
        b.chunks_exact(w)
            .map(|c| {
                let mut x = [0u8; 8];
                x[..w].copy_from_slice(c);
                u64::from_le_bytes(x)
            })
            .collect()
    }

    /// Opens one record's three shares to its values (rep3 mod 2^k, GR unpacked mod 2^16, F_p
    /// mod p), checking on the way what every pair of parties holds.
    fn open(p: &StoreParams, shares: &[Vec<u8>; 3]) -> Vec<u64> {
        let l = p.layout().unwrap();
        let n = l.elements;
        match p.sharing {
            StoreSharing::Rep3 => {
                let w = l.element_bytes;
                let own: Vec<Vec<u64>> = shares.iter().map(|s| le_words(&s[..n * w], w)).collect();
                let prev: Vec<Vec<u64>> = shares
                    .iter()
                    .map(|s| le_words(&s[l.component_stride..l.component_stride + n * w], w))
                    .collect();
                for i in 0..3 {
                    assert_eq!(prev[i], own[(i + 2) % 3], "party {i}'s copy of x_{{i-1}}");
                }
                let m = if p.ring_bits == 64 {
                    u64::MAX
                } else {
                    (1 << p.ring_bits) - 1
                };
                (0..n)
                    .map(|i| {
                        assert!(own.iter().all(|o| o[i] <= m), "canonical residues");
                        own[0][i].wrapping_add(own[1][i]).wrapping_add(own[2][i]) & m
                    })
                    .collect()
            }
            StoreSharing::ShamirPrime { .. } => {
                let w: Vec<Vec<u16>> = shares
                    .iter()
                    .map(|s| le_words(s, 2).into_iter().map(|x| x as u16).collect())
                    .collect();
                let a = fp::shamir_reconstruct((0, &w[0]), (1, &w[1]));
                assert_eq!(a, fp::shamir_reconstruct((0, &w[0]), (2, &w[2])));
                assert_eq!(a, fp::shamir_reconstruct((1, &w[1]), (2, &w[2])));
                a.into_iter().map(u64::from).collect()
            }
            StoreSharing::ShamirGr { degree } => {
                let w: Vec<Vec<u16>> = shares
                    .iter()
                    .map(|s| le_words(s, 2).into_iter().map(|x| x as u16).collect())
                    .collect();
                fn open_gr<const D: usize>(w: &[Vec<u16>], n: usize) -> Vec<u16> {
                    let v: Vec<ShamirVec<D>> =
                        w.iter().map(|c| ShamirVec { coefs: c.clone() }).collect();
                    let a = galois::unpack(
                        &galois::reconstruct((0, &v[0]), (1, &v[1])),
                        n,
                        Packing::Reversed,
                    );
                    let b = galois::unpack(
                        &galois::reconstruct((0, &v[0]), (2, &v[2])),
                        n,
                        Packing::Reversed,
                    );
                    let c = galois::unpack(
                        &galois::reconstruct((1, &v[1]), (2, &v[2])),
                        n,
                        Packing::Reversed,
                    );
                    assert_eq!(a, b);
                    assert_eq!(a, c);
                    a
                }
                let v = if degree == 2 {
                    open_gr::<2>(&w, n)
                } else {
                    open_gr::<4>(&w, n)
                };
                v.into_iter().map(u64::from).collect()
            }
        }
    }

    fn expected(p: &StoreParams, plain: &[i64]) -> Vec<u64> {
        plain
            .iter()
            .map(|&v| match p.sharing {
                StoreSharing::Rep3 if p.ring_bits == 64 => v as u64,
                StoreSharing::Rep3 => (v as u64) & ((1 << p.ring_bits) - 1),
                StoreSharing::ShamirPrime { .. } => v.rem_euclid(i64::from(fp::P)) as u64,
                StoreSharing::ShamirGr { .. } => (v as u64) & 0xFFFF,
            })
            .collect()
    }

    fn every_sharing() -> Vec<(StoreSharing, u32)> {
        let mut v = vec![
            (StoreSharing::ShamirGr { degree: 2 }, 16),
            (StoreSharing::ShamirGr { degree: 4 }, 16),
            (StoreSharing::ShamirPrime { modulus: fp::P }, 16),
        ];
        for k in [2, 3, 15, 16, 17, 31, 32, 33, 63, 64] {
            v.push((StoreSharing::Rep3, k));
        }
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Random records of every sharing and ring reconstruct to their plaintext values.
        #[test]
        fn random_records_reconstruct(
            words in 1usize..4,
            secret in any::<bool>(),
            seed in prop::collection::vec(any::<u8>(), 2 * 8 * 3),
        ) {
            let bytes = 8 * words;
            let code: Vec<u8> = (0..bytes).map(|i| seed[i % seed.len()].rotate_left(i as u32)).collect();
            let mask: Vec<u8> = (0..bytes).map(|i| seed[(i + 7) % seed.len()] ^ (i as u8)).collect();
            for (sharing, k) in every_sharing() {
                let p = params(sharing, k, 8 * bytes as u32, secret);
                for (simd, shares) in deal_one(&p, &code, &mask) {
                    let got = open(&p, &shares);
                    prop_assert_eq!(got, expected(&p, &plain_values(&code, &mask, secret)), "{:?} k={} {:?}", sharing, k, simd);
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Replicated records over Z_2^16 dealt as three components: they add up to the
        /// plaintext values, and they are exactly the components `deal` writes from the same
        /// keystream (party i's record is `x_i | x_{i-1}`); other rings, sharings and the
        /// baseline level take `deal` (`None`).
        #[test]
        fn rep3_components_are_the_dealt_records(
            words in 1usize..5,
            secret in any::<bool>(),
            key in any::<[u8; 16]>(),
            seed in prop::collection::vec(any::<u8>(), 48),
        ) {
            let bytes = 8 * words;
            let code: Vec<u8> = (0..bytes).map(|i| seed[i % 48].rotate_left(i as u32)).collect();
            let mask: Vec<u8> = (0..bytes).map(|i| seed[(i + 5) % 48] | (i % 4 == 0) as u8).collect();
            let p = params(StoreSharing::Rep3, 16, 8 * bytes as u32, secret);
            for simd in levels() {
                let mut split = RecordDealer::with_key(&p, &key).unwrap().with_simd(simd);
                let mut whole = RecordDealer::with_key(&p, &key).unwrap().with_simd(simd);
                let Some(parts) = split.rep3_components(&code, &mask).unwrap() else {
                    prop_assert_eq!(simd, Simd::Baseline);
                    continue;
                };
                let x: Vec<Vec<u16>> = parts.iter().map(|c| le_words(c, 2).into_iter().map(|w| w as u16).collect()).collect();
                let want = plain_values(&code, &mask, secret);
                for (i, v) in want.iter().enumerate() {
                    prop_assert_eq!(x[0][i].wrapping_add(x[1][i]).wrapping_add(x[2][i]), *v as u16);
                }
                let size = whole.layout().share_size;
                let stride = whole.layout().component_stride;
                let mut out = [vec![0u8; size], vec![0u8; size], vec![0u8; size]];
                let [a, b, c] = &mut out;
                whole.deal(&code, &mask, [a, b, c]).unwrap();
                for party in 0..3 {
                    let n = parts[party].len();
                    prop_assert_eq!(&out[party][..n], parts[party]);
                    prop_assert_eq!(&out[party][stride..stride + n], parts[(party + 2) % 3]);
                }
            }
            for (sharing, k) in [(StoreSharing::Rep3, 13), (StoreSharing::Rep3, 32), (StoreSharing::ShamirGr { degree: 2 }, 16)] {
                let p = params(sharing, k, 8 * bytes as u32, secret);
                let mut d = RecordDealer::with_key(&p, &key).unwrap();
                prop_assert!(d.rep3_components(&code, &mask).unwrap().is_none());
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        /// The vector encoders (32 or 16 bits a step, the rest byte by byte) and the byte
        /// encoder all give the bit-by-bit values, at every length including those with a rest.
        #[test]
        fn both_encoders_give_the_values_bit_by_bit(
            code in prop::collection::vec(any::<u8>(), 0..70),
            mask_seed in any::<u64>(),
        ) {
            let bytes = code.len();
            let mask: Vec<u8> = (0..bytes)
                .map(|i| (mask_seed.rotate_left(7 * i as u32) as u8) | (i % 3 == 0) as u8)
                .collect();
            for secret in [false, true] {
                let want: Vec<u16> = plain_values(&code, &mask, secret)
                    .into_iter()
                    .map(|v| v as u16)
                    .collect();
                let n = 8 * bytes;
                let mut scalar = vec![0x5555u16; if secret { 2 * n } else { n }];
                let (masked, bits) = scalar.split_at_mut(n);
                encode_bytes(&code, &mask, masked, secret.then_some(bits));
                prop_assert_eq!(&scalar, &want);
                #[cfg(target_arch = "x86_64")]
                for simd in levels() {
                    let mut vector = vec![0x5555u16; if secret { 2 * n } else { n }];
                    let (masked, bits) = vector.split_at_mut(n);
                    let bits = secret.then_some(bits);
                    // SAFETY: the CPU runs `simd` (`levels`).
                    match simd {
                        Simd::Avx512 => unsafe { avx512::encode(&code, &mask, masked, bits) },
                        Simd::Avx2 => unsafe { avx2::encode(&code, &mask, masked, bits) },
                        Simd::Baseline => continue,
                    }
                    prop_assert_eq!(&vector, &want, "{:?}", simd);
                }
            }
        }
    }

    /// Edge records: all unmasked, all -1 (code and mask all ones), all +1, alternating; and the
    /// deployed length (12 800 bits, which the kernels' 32-lane blocks divide with no rest).
    #[test]
    fn the_sixteen_bit_add_mod_p_equals_the_wide_one_for_every_pair_near_the_edges() {
        let p = u32::from(fp::P);
        // Every residue against the values where the 16-bit add carries or lands on p, and a
        // stride through the rest.
        let edges: Vec<u16> = (0..=40u16)
            .chain((fp::P - 40)..fp::P)
            .chain((0..fp::P).step_by(97))
            .collect();
        for a in 0..fp::P {
            for &b in &edges {
                let want = ((u32::from(a) + u32::from(b)) % p) as u16;
                assert_eq!(super::add_mod_p(a, b), want, "{a} + {b}");
                assert_eq!(super::add_mod_p(b, a), want, "{b} + {a}");
            }
        }
    }

    #[test]
    fn edge_records_reconstruct() {
        for bytes in [8usize, 24, 1600] {
            let cases: Vec<(Vec<u8>, Vec<u8>)> = vec![
                (vec![0; bytes], vec![0; bytes]),
                (vec![0xFF; bytes], vec![0xFF; bytes]),
                (vec![0; bytes], vec![0xFF; bytes]),
                (vec![0xAA; bytes], vec![0x5F; bytes]),
            ];
            for (code, mask) in &cases {
                for secret in [false, true] {
                    for (sharing, k) in every_sharing() {
                        let p = params(sharing, k, 8 * bytes as u32, secret);
                        for (simd, shares) in deal_one(&p, code, mask) {
                            assert_eq!(
                                open(&p, &shares),
                                expected(&p, &plain_values(code, mask, secret)),
                                "{sharing:?} k={k} {simd:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Outputs at an odd address (not aligned to the share word) take the scratch path and
    /// give the same reconstruction.
    #[test]
    fn unaligned_outputs_reconstruct() {
        let (code, mask) = (vec![0x3Cu8; 16], vec![0xF0u8; 16]);
        for (sharing, k) in every_sharing() {
            let p = params(sharing, k, 128, false);
            let mut d = RecordDealer::from_os(&p).unwrap();
            let size = d.layout().share_size;
            let mut bufs = [
                vec![0u8; size + 1],
                vec![0u8; size + 1],
                vec![0u8; size + 1],
            ];
            let [a, b, c] = &mut bufs;
            d.deal(&code, &mask, [&mut a[1..], &mut b[1..], &mut c[1..]])
                .unwrap();
            let shares = bufs.map(|b| b[1..].to_vec());
            assert_eq!(
                open(&p, &shares),
                expected(&p, &plain_values(&code, &mask, false))
            );
        }
    }

    #[test]
    fn bad_records_are_refused() {
        let p = params(StoreSharing::Rep3, 16, 64, false);
        let mut d = RecordDealer::from_os(&p).unwrap();
        let mut o = [vec![0u8; 256], vec![0u8; 256], vec![0u8; 256]];
        let [a, b, c] = &mut o;
        assert!(d.deal(&[0; 7], &[0; 8], [a, b, c]).is_err());
        let p1 = params(StoreSharing::Rep3, 1, 64, false);
        assert!(RecordDealer::from_os(&p1).is_err());
    }

    // ---------------------------------------------------------------------------------------
    // Uniformity.

    /// The upper 10^-6 quantile of chi-squared with `df` degrees of freedom (Wilson-Hilferty;
    /// z = 4.753 is the standard normal's upper 10^-6 quantile).
    fn chi2_critical(df: f64) -> f64 {
        let z = 4.753_424;
        let a = 2.0 / (9.0 * df);
        df * (1.0 - a + z * a.sqrt()).powi(3)
    }

    /// Whether `counts` is consistent with cell probabilities `probs` at a false-alarm rate of
    /// 10^-6; the statistic and its critical value for the message.
    fn uniform_enough(counts: &[u64], probs: &[f64]) -> (bool, f64, f64) {
        let total: u64 = counts.iter().sum();
        let stat: f64 = counts
            .iter()
            .zip(probs)
            .map(|(&c, &p)| {
                let e = p * total as f64;
                (c as f64 - e).powi(2) / e
            })
            .sum();
        let crit = chi2_critical((counts.len() - 1) as f64);
        (stat <= crit, stat, crit)
    }

    fn flat(cells: usize) -> Vec<f64> {
        vec![1.0 / cells as f64; cells]
    }

    /// A fixed secret record of `bytes` bytes: every element -1 (code and mask all ones).
    const BYTES: usize = 1600;

    /// rep3 over Z_2^3: the distribution of x2 (party 2's own share, the one computed from the
    /// secret) over 8 values, and the joint distribution of (x0, x1) over 64 cells (uniform iff
    /// the two random components are uniform and independent), over many dealings of one secret.
    fn rep3_histograms(deal: &mut dyn FnMut(&mut [[Vec<u16>; 2]; 3])) -> ([u64; 8], [u64; 64]) {
        let n = BYTES * 8;
        let mut single = [0u64; 8];
        let mut joint = [0u64; 64];
        let mut parts: [[Vec<u16>; 2]; 3] = std::array::from_fn(|_| [vec![0; n], vec![0; n]]);
        for _ in 0..40 {
            deal(&mut parts);
            for i in 0..n {
                let (x0, x1, x2) = (parts[0][0][i], parts[1][0][i], parts[2][0][i]);
                single[x2 as usize] += 1;
                joint[(x0 * 8 + x1) as usize] += 1;
            }
        }
        (single, joint)
    }

    fn rep3_dealer(r_bias: bool) -> impl FnMut(&mut [[Vec<u16>; 2]; 3]) {
        let p = params(StoreSharing::Rep3, 3, 8 * BYTES as u32, false);
        let mut d = RecordDealer::from_os(&p).unwrap();
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).unwrap();
        let mut rng = AesCtr::new(&key);
        move |parts| {
            if !r_bias {
                let size = d.layout().share_size;
                let mut out = [vec![0u8; size], vec![0u8; size], vec![0u8; size]];
                let [a, b, c] = &mut out;
                d.deal(&[0xFF; BYTES], &[0xFF; BYTES], [a, b, c]).unwrap();
                let n = BYTES * 8;
                for (party, o) in out.iter().enumerate() {
                    let w = le_words(o, 2);
                    parts[party][0] = w[..n].iter().map(|&x| x as u16).collect();
                }
            } else {
                // The same kernel fed a biased generator: x1 drawn as x0 + (a 1-in-8 chance of
                // +1), so x0 and x1 are each uniform but not independent.
                let n = BYTES * 8;
                let mut raw = vec![0u8; 2 * n];
                rng.fill(&mut raw);
                let r0: Vec<u16> = raw[..n].iter().map(|&b| u16::from(b)).collect();
                let r1: Vec<u16> = raw[..n]
                    .iter()
                    .zip(&raw[n..])
                    .map(|(&a, &b)| u16::from(a) + u16::from(b & 7 == 0))
                    .collect();
                let v = vec![u16::MAX; n];
                let mut o: [Vec<u16>; 6] = std::array::from_fn(|_| vec![0; n]);
                let [a, b, c, dd, e, f] = &mut o;
                rep3_body::<u16>(7, &v, &r0, &r1, [a, b, c, dd, e, f]);
                parts[0][0] = o[0].clone();
                parts[1][0] = o[2].clone();
                parts[2][0] = o[4].clone();
            }
        }
    }

    #[test]
    fn rep3_shares_are_uniform_and_independent() {
        let (single, joint) = rep3_histograms(&mut rep3_dealer(false));
        let (ok, stat, crit) = uniform_enough(&single, &flat(8));
        assert!(ok, "x2 over Z_8: chi2 {stat:.1} > {crit:.1}");
        let (ok, stat, crit) = uniform_enough(&joint, &flat(64));
        assert!(ok, "(x0, x1) over Z_8^2: chi2 {stat:.1} > {crit:.1}");
    }

    #[test]
    fn the_rep3_test_rejects_a_biased_dealer() {
        let (_, joint) = rep3_histograms(&mut rep3_dealer(true));
        let (ok, stat, crit) = uniform_enough(&joint, &flat(64));
        assert!(
            !ok,
            "a dependent (x0, x1) passed: chi2 {stat:.1} <= {crit:.1}"
        );
    }

    /// GR(2^16, d): the low byte of every coefficient of each party's share of one fixed
    /// secret, over 256 cells per party. The biased dealer draws r with its lowest bit clear
    /// half as often (1 in 3 instead of 1 in 2).
    fn gr_counts<const D: usize>(biased: bool) -> [[u64; 256]; 3] {
        let n = BYTES * 8;
        let mut counts = [[0u64; 256]; 3];
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).unwrap();
        let mut rng = AesCtr::new(&key);
        let p = params(
            StoreSharing::ShamirGr { degree: D as u8 },
            16,
            n as u32,
            false,
        );
        let mut d = RecordDealer::from_os(&p).unwrap();
        for _ in 0..40 {
            let out: [Vec<u16>; 3] = if biased {
                let mut raw = vec![0u8; 3 * n];
                rng.fill(&mut raw);
                let r: Vec<u16> = (0..n)
                    .map(|i| {
                        let x = u16::from_le_bytes([raw[2 * i], raw[2 * i + 1]]);
                        if raw[2 * n + i] % 3 == 0 {
                            x & !1
                        } else {
                            x | 1
                        }
                    })
                    .collect();
                let s = vec![u16::MAX; n];
                let mut o: [Vec<u16>; 3] = std::array::from_fn(|_| vec![0; n]);
                let [a, b, c] = &mut o;
                gr_body::<D>(&s, &r, a, b, c);
                o
            } else {
                let size = d.layout().share_size;
                let mut o = [vec![0u8; size], vec![0u8; size], vec![0u8; size]];
                let [a, b, c] = &mut o;
                d.deal(&[0xFF; BYTES], &[0xFF; BYTES], [a, b, c]).unwrap();
                o.map(|b| le_words(&b, 2).into_iter().map(|x| x as u16).collect())
            };
            for (party, o) in out.iter().enumerate() {
                for &x in o {
                    counts[party][(x & 0xFF) as usize] += 1;
                }
            }
        }
        counts
    }

    #[test]
    fn gr_shares_are_uniform() {
        for counts in [gr_counts::<2>(false), gr_counts::<4>(false)] {
            for (party, c) in counts.iter().enumerate() {
                let (ok, stat, crit) = uniform_enough(c, &flat(256));
                assert!(ok, "party {party}: chi2 {stat:.1} > {crit:.1}");
            }
        }
    }

    #[test]
    fn the_gr_test_rejects_a_biased_dealer() {
        for counts in [gr_counts::<2>(true), gr_counts::<4>(true)] {
            // Party 0 holds s + r: the bias of r shows in its low bit.
            let (ok, stat, crit) = uniform_enough(&counts[0], &flat(256));
            assert!(!ok, "a biased r passed: chi2 {stat:.1} <= {crit:.1}");
        }
    }

    /// F_p: each party's share of one fixed secret over 65 cells: the 17 values below 17 (the
    /// ones `x mod p` of a 16-bit x would make twice as likely) and 64 near-equal buckets of
    /// the rest, with exact cell probabilities.
    fn fp_cells() -> (Vec<f64>, impl Fn(u16) -> usize) {
        let p = u32::from(fp::P);
        let rest = p - 17;
        let cell = move |x: u16| -> usize {
            let x = u32::from(x);
            if x < 17 {
                0
            } else {
                1 + ((x - 17) * 64 / rest) as usize
            }
        };
        let mut probs = vec![0f64; 65];
        for x in 0..p {
            probs[cell(x as u16)] += 1.0 / f64::from(p);
        }
        (probs, cell)
    }

    fn fp_counts(biased: bool) -> [Vec<u64>; 3] {
        let n = BYTES * 8;
        let (_, cell) = fp_cells();
        let mut counts: [Vec<u64>; 3] = std::array::from_fn(|_| vec![0; 65]);
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).unwrap();
        let mut rng = AesCtr::new(&key);
        let p = params(
            StoreSharing::ShamirPrime { modulus: fp::P },
            16,
            n as u32,
            false,
        );
        let mut d = RecordDealer::from_os(&p).unwrap();
        for _ in 0..100 {
            let out: [Vec<u16>; 3] = if biased {
                // The classic mistake: a 16-bit draw reduced mod p.
                let mut raw = vec![0u8; 2 * n];
                rng.fill(&mut raw);
                let r: Vec<u16> = raw
                    .chunks_exact(2)
                    .map(|w| u16::from_le_bytes([w[0], w[1]]) % fp::P)
                    .collect();
                let v = vec![u16::MAX; n];
                let mut o: [Vec<u16>; 3] = std::array::from_fn(|_| vec![0; n]);
                let [a, b, c] = &mut o;
                fp_body(&v, &r, a, b, c);
                o
            } else {
                let size = d.layout().share_size;
                let mut o = [vec![0u8; size], vec![0u8; size], vec![0u8; size]];
                let [a, b, c] = &mut o;
                d.deal(&[0xFF; BYTES], &[0xFF; BYTES], [a, b, c]).unwrap();
                o.map(|b| le_words(&b, 2).into_iter().map(|x| x as u16).collect())
            };
            for (party, o) in out.iter().enumerate() {
                for &x in o {
                    counts[party][cell(x)] += 1;
                }
            }
        }
        counts
    }

    #[test]
    fn fp_shares_are_uniform() {
        let (probs, _) = fp_cells();
        for (party, c) in fp_counts(false).iter().enumerate() {
            let (ok, stat, crit) = uniform_enough(c, &probs);
            assert!(ok, "party {party}: chi2 {stat:.1} > {crit:.1}");
        }
    }

    #[test]
    fn the_fp_test_rejects_a_biased_dealer() {
        let (probs, _) = fp_cells();
        // Party 0 holds s + r = r - 1: r's excess at 0..16 shows at p - 1, 0..15.
        let counts = fp_counts(true);
        let (ok, stat, crit) = uniform_enough(&counts[0], &probs);
        assert!(!ok, "r = x mod p passed: chi2 {stat:.1} <= {crit:.1}");
    }
}
