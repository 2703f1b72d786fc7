//! What the comparison phase needs of a device: buffers of 64-bit words, copies to and from
//! the host, and the generated kernels of the contract ([`crate::contract::gpu`]) that work on
//! them. The protocol rounds ([`super::msb`]) are written once against this trait; the CUDA
//! implementation (feature `cuda`) launches the PTX kernels, and the compiler's tests
//! implement it with the kernels' host twins, so the same orchestration runs, bit for bit,
//! on a machine without a GPU.
//!
//! Every buffer argument is a [`Words`] view: a buffer and the word offset the kernel's
//! pointer starts at. Ring words (u16, u32) travel packed in the 64-bit words, little-endian,
//! so one buffer type serves every kernel.

use crate::contract::gpu::LimbWidth;
use crate::error::RuntimeError;

/// A kernel's buffer argument: `buf` from word `at` on.
pub struct Words<'a, B> {
    pub buf: &'a B,
    pub at: usize,
}

/// A kernel's output buffer argument: `buf` from word `at` on.
pub struct WordsMut<'a, B> {
    pub buf: &'a mut B,
    pub at: usize,
}

/// `buf` from word 0.
pub fn all<B>(buf: &B) -> Words<'_, B> {
    Words { buf, at: 0 }
}

/// `buf` from word `at`.
pub fn from<B>(buf: &B, at: usize) -> Words<'_, B> {
    Words { buf, at }
}

/// `buf` from word 0, written.
pub fn out<B>(buf: &mut B) -> WordsMut<'_, B> {
    WordsMut { buf, at: 0 }
}

/// A device that runs the comparison phase's kernels. Each method is one copy or one launch
/// of the contract kernel it names, with the contract's parameters; a launch may return
/// before the kernel has run, and a read waits for everything launched before it.
pub trait Lanes {
    /// A device buffer of u64 words.
    type Buf;

    /// A buffer of `words` zero words.
    fn zeros(&self, words: usize) -> Result<Self::Buf, RuntimeError>;
    /// A buffer holding `host`.
    fn upload(&self, host: &[u64]) -> Result<Self::Buf, RuntimeError>;
    /// Copies `host` into `dst` at word `at`.
    fn write(&self, dst: &mut Self::Buf, at: usize, host: &[u64]) -> Result<(), RuntimeError>;
    /// Words `at .. at + n` of `src`.
    fn read(&self, src: &Self::Buf, at: usize, n: usize) -> Result<Vec<u64>, RuntimeError>;

    /// `irisc_gpu_aes_ctr`: `blocks` keystream blocks from counter `first` under the 44
    /// round-key words in `round_keys` (packed two to a word), into `out`.
    fn aes_ctr(
        &self,
        round_keys: Words<'_, Self::Buf>,
        first: u128,
        blocks: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_prss_zero_bits`: `n` zero-share words from two keystreams.
    fn prss_zero_bits(
        &self,
        own: Words<'_, Self::Buf>,
        own_skip: u64,
        prev: Words<'_, Self::Buf>,
        prev_skip: u64,
        n: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_prss_zero{w}`: `n` zero shares mod 2^w from two keystreams.
    #[allow(clippy::too_many_arguments)]
    fn prss_zero(
        &self,
        width: LimbWidth,
        own: Words<'_, Self::Buf>,
        own_skip: u64,
        prev: Words<'_, Self::Buf>,
        prev_skip: u64,
        n: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_reshare_local{w}`: `(z + alpha) mod 2^k` of `n` ring words.
    fn reshare_local(
        &self,
        width: LimbWidth,
        z: Words<'_, Self::Buf>,
        alpha: Words<'_, Self::Buf>,
        n: u64,
        k: u32,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_bit_planes{w}`: planes `0..planes` of `n` ring words of `width`.
    fn bit_planes(
        &self,
        width: LimbWidth,
        src: Words<'_, Self::Buf>,
        n: u64,
        planes: u32,
        dst: WordsMut<'_, Self::Buf>,
        words: u64,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_fa_local`.
    #[allow(clippy::too_many_arguments)]
    fn fa_local(
        &self,
        own: Words<'_, Self::Buf>,
        prev: Words<'_, Self::Buf>,
        alpha: Words<'_, Self::Buf>,
        party: u32,
        words: u64,
        planes: u64,
        len: u64,
        z: WordsMut<'_, Self::Buf>,
        cc_own: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_fa_finish`.
    fn fa_finish(
        &self,
        got: Words<'_, Self::Buf>,
        prev: Words<'_, Self::Buf>,
        party: u32,
        n: u64,
        cc_prev: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_and_local`: `xy` is (x_own, x_prev, y_own, y_prev).
    fn and_local(
        &self,
        xy: [Words<'_, Self::Buf>; 4],
        alpha: Words<'_, Self::Buf>,
        words: u64,
        len: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_or_pairs`: `outs` is (l_own, l_prev, r_own, r_prev, z).
    #[allow(clippy::too_many_arguments)]
    fn or_pairs(
        &self,
        cur: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        alpha: Words<'_, Self::Buf>,
        groups: u64,
        s: u64,
        h: u64,
        outs: [WordsMut<'_, Self::Buf>; 5],
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_or_combine`: `pairs` is (l_own, l_prev, r_own, r_prev, z, got).
    fn or_combine(
        &self,
        pairs: [Words<'_, Self::Buf>; 6],
        cur: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        groups: u64,
        s: u64,
        h: u64,
        next: (WordsMut<'_, Self::Buf>, WordsMut<'_, Self::Buf>),
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_mask_len`: the mask lengths of `records` gallery masks and `codes` query
    /// masks of `words` words each, record-major.
    fn mask_len(
        &self,
        gallery: Words<'_, Self::Buf>,
        queries: Words<'_, Self::Buf>,
        words: u64,
        records: u64,
        codes: u64,
        out: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;

    /// `irisc_gpu_ripple_local`: `carry` is (k_own, written; k_prev).
    #[allow(clippy::too_many_arguments)]
    fn ripple_local(
        &self,
        cc: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        s: (Words<'_, Self::Buf>, Words<'_, Self::Buf>),
        carry: (WordsMut<'_, Self::Buf>, Words<'_, Self::Buf>),
        alpha: Words<'_, Self::Buf>,
        words: u64,
        len: u64,
        z: WordsMut<'_, Self::Buf>,
    ) -> Result<(), RuntimeError>;
}

/// Ring words packed into u64 words, little-endian (the layout a u16 or u32 array has in a
/// buffer of u64 words on a little-endian device).
pub fn pack<T: crate::ring::RingElem>(values: &[T]) -> Vec<u64> {
    let size = std::mem::size_of::<T>();
    let per = 8 / size;
    values
        .chunks(per)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u64, |w, (i, v)| w | (v.to_u64() << (8 * size * i)))
        })
        .collect()
}

/// The first `n` ring words of `words` (packed by [`pack`]).
pub fn unpack<T: crate::ring::RingElem>(words: &[u64], n: usize) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    let per = 8 / size;
    let mask = crate::ring::mask(T::BITS);
    (0..n)
        .map(|i| T::from_u64((words[i / per] >> (8 * size * (i % per))) & mask))
        .collect()
}

/// The 44 round-key words packed two to a u64 word (little-endian: word 2i in the low half).
pub fn pack_round_keys(rk: &[u32; 44]) -> Vec<u64> {
    rk.chunks(2)
        .map(|p| u64::from(p[0]) | (u64::from(p[1]) << 32))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packing_is_the_little_endian_memory_layout() {
        let v16: Vec<u16> = (1..=5).map(|i| i * 0x0101).collect();
        let p = pack(&v16);
        let bytes: Vec<u8> = p.iter().flat_map(|w| w.to_le_bytes()).collect();
        let want: Vec<u8> = v16.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(&bytes[..want.len()], &want[..]);
        assert!(bytes[want.len()..].iter().all(|&b| b == 0));
        assert_eq!(unpack::<u16>(&p, v16.len()), v16);
        let v32: Vec<u32> = vec![0xdead_beef, 7, u32::MAX];
        assert_eq!(unpack::<u32>(&pack(&v32), 3), v32);
        let bytes: Vec<u8> = pack(&v32).iter().flat_map(|w| w.to_le_bytes()).collect();
        let want: Vec<u8> = v32.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(&bytes[..12], &want[..]);
        let rk: [u32; 44] = std::array::from_fn(|i| i as u32 * 0x0102_0304);
        let bytes: Vec<u8> = pack_round_keys(&rk)
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let want: Vec<u8> = rk.iter().flat_map(|w| w.to_le_bytes()).collect();
        assert_eq!(bytes, want);
    }
}
