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
    /// Random bytes for one record.
    random: Vec<u8>,
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
            random: vec![0; random],
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
        let [o0, o1, o2] = out;
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
        let w = W::BYTES;
        let stride = self.layout.component_stride;
        let k = W::mask(self.ring_bits);
        self.rng.fill(&mut self.random);
        let (r0, r1) = self.random.split_at(n * w);
        let (own0, prev0) = o0.split_at_mut(stride);
        let (own1, prev1) = o1.split_at_mut(stride);
        let (own2, prev2) = o2.split_at_mut(stride);
        // Component padding (a record's components are 8-byte aligned) stays zero.
        for pad in [
            &mut own0[n * w..],
            &mut own1[n * w..],
            &mut own2[n * w..],
            &mut prev0[n * w..],
            &mut prev1[n * w..],
            &mut prev2[n * w..],
        ] {
            pad.fill(0);
        }
        let (own0, prev0) = (&mut own0[..n * w], &mut prev0[..n * w]);
        let (own1, prev1) = (&mut own1[..n * w], &mut prev1[..n * w]);
        let (own2, prev2) = (&mut own2[..n * w], &mut prev2[..n * w]);
        for i in 0..n {
            let at = i * w..(i + 1) * w;
            let x0 = W::load(&r0[at.clone()]).and(k);
            let x1 = W::load(&r1[at.clone()]).and(k);
            let v = W::from_signed16(self.values[i]);
            let x2 = v.sub(x0).sub(x1).and(k);
            x0.store(&mut own0[at.clone()]);
            x0.store(&mut prev1[at.clone()]);
            x1.store(&mut own1[at.clone()]);
            x1.store(&mut prev2[at.clone()]);
            x2.store(&mut own2[at.clone()]);
            x2.store(&mut prev0[at]);
        }
    }

    fn gr<const D: usize>(&mut self, o0: &mut [u8], o1: &mut [u8], o2: &mut [u8]) {
        let n = self.layout.elements;
        let random = &mut self.random[..2 * n];
        self.rng.fill(random);
        let s = &self.values;
        let chunks = o0
            .chunks_exact_mut(2 * D)
            .zip(o1.chunks_exact_mut(2 * D))
            .zip(o2.chunks_exact_mut(2 * D))
            .zip(random.chunks_exact(2 * D))
            .zip(s.chunks_exact(D));
        for ((((a, b), c), r), s) in chunks {
            let r: [u16; D] = std::array::from_fn(|j| u16::from_le_bytes([r[2 * j], r[2 * j + 1]]));
            // r·x: x^D = x + 1 carries the top coefficient into the two lowest.
            let rx: [u16; D] = std::array::from_fn(|j| {
                let shifted = if j >= 1 { r[j - 1] } else { 0 };
                let carried = if j <= 1 { r[D - 1] } else { 0 };
                shifted.wrapping_add(carried)
            });
            for j in 0..D {
                let p0 = s[j].wrapping_add(r[j]);
                let p1 = s[j].wrapping_add(rx[j]);
                let p2 = p1.wrapping_add(r[j]);
                a[2 * j..2 * j + 2].copy_from_slice(&p0.to_le_bytes());
                b[2 * j..2 * j + 2].copy_from_slice(&p1.to_le_bytes());
                c[2 * j..2 * j + 2].copy_from_slice(&p2.to_le_bytes());
            }
        }
    }

    fn fp(&mut self, o0: &mut [u8], o1: &mut [u8], o2: &mut [u8]) {
        const P: u16 = fp::P;
        let n = self.layout.elements;
        let random = &mut self.random[..2 * n];
        self.rng.fill(random);
        // r uniform in F_p by rejection: a 16-bit draw at or above p (17 in 65 536) is drawn
        // again, position by position; chunks with none pass with one comparison.
        for chunk in random.chunks_exact_mut(64) {
            let worst = chunk
                .chunks_exact(2)
                .fold(0u16, |m, w| m.max(u16::from_le_bytes([w[0], w[1]])));
            if worst >= P {
                for w in chunk.chunks_exact_mut(2) {
                    while u16::from_le_bytes([w[0], w[1]]) >= P {
                        self.rng.fill(w);
                    }
                }
            }
        }
        for w in random.chunks_exact_mut(2).skip(n / 32 * 32) {
            while u16::from_le_bytes([w[0], w[1]]) >= P {
                self.rng.fill(w);
            }
        }
        let add = |a: u16, b: u16| -> u16 {
            let t = u32::from(a) + u32::from(b);
            (if t >= u32::from(P) {
                t - u32::from(P)
            } else {
                t
            }) as u16
        };
        let chunks = o0
            .chunks_exact_mut(2)
            .zip(o1.chunks_exact_mut(2))
            .zip(o2.chunks_exact_mut(2))
            .zip(random.chunks_exact(2))
            .zip(&self.values);
        for ((((a, b), c), r), &v) in chunks {
            let r = u16::from_le_bytes([r[0], r[1]]);
            // -1 is p - 1; 0 and 1 are themselves.
            let s = if v == u16::MAX { P - 1 } else { v };
            let y0 = add(s, r);
            let y1 = add(y0, r);
            let y2 = add(y1, r);
            a.copy_from_slice(&y0.to_le_bytes());
            b.copy_from_slice(&y1.to_le_bytes());
            c.copy_from_slice(&y2.to_le_bytes());
        }
    }
}

/// The share word of a rep3 ring: u16, u32 or u64, stored little-endian.
trait Word: Copy {
    const BYTES: usize;
    fn mask(ring_bits: u32) -> Self;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
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
            fn load(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().unwrap_or([0; std::mem::size_of::<$t>()]))
            }
            #[inline(always)]
            fn store(self, b: &mut [u8]) {
                b.copy_from_slice(&self.to_le_bytes());
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
