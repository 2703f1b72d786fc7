//! The correlation-robust hash of IKNP's last step, and the PRG that expands κ-bit seeds.
//!
//! IKNP's sender hashes `q_j` and `q_j ⊕ s` with one secret `s` shared by every row, so the
//! hash must hide the correlation (correlation robustness, Ishai et al. 2003, §3). We use the
//! tweakable Matyas–Meyer–Oseas construction over fixed-key AES of Guo, Katz, Wang and Yu
//! ("Efficient and Secure Multiparty Computation from Fixed-Key Block Ciphers", IEEE S&P 2020,
//! §7.3): H(i, x) = π(π(x) ⊕ i) ⊕ π(x), which they prove tweakable circular correlation robust
//! (the property IKNP needs, with the OT index as the tweak) when π is an ideal permutation.
//! Why it and not blake3: two AES calls per hash on AES-NI, pipelined eight blocks at a time
//! with no key schedule per call, are many times cheaper than one blake3 call on a
//! 16-byte input, and hashing is the largest share of IKNP's work after the network.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes128;
use ctr::cipher::{KeyIvInit, StreamCipher};

use super::Block;
use crate::rand::aes_ctr::AesCtr;

/// Blocks in flight per AES call: enough to fill the AES-NI pipeline (the `aes` crate encrypts
/// eight at a time).
const BATCH: usize = 16;

/// π: AES-128 under a fixed public key. Any fixed key serves in the ideal-permutation model;
/// ours is derived from a label so that it is evidently not chosen to be special.
pub struct Tccr {
    pi: Aes128,
}

impl Default for Tccr {
    fn default() -> Self {
        Self::new()
    }
}

impl Tccr {
    pub fn new() -> Tccr {
        let full = blake3::derive_key("irisc ot: fixed AES key of the TMMO hash (GKWY20)", b"");
        let mut key = [0u8; 16];
        key.copy_from_slice(&full[..16]);
        Tccr {
            pi: Aes128::new(&key.into()),
        }
    }

    /// π on a batch of blocks, in place.
    #[inline]
    fn permute(&self, xs: &mut [aes::Block]) {
        self.pi.encrypt_blocks(xs);
    }

    /// Overwrites `xs[k]` with H(`first_tweak + k`, `xs[k]`).
    pub fn hash_in_place(&self, first_tweak: u64, xs: &mut [Block]) {
        let mut a = [aes::Block::default(); BATCH];
        let mut b = [aes::Block::default(); BATCH];
        for (c, chunk) in xs.chunks_mut(BATCH).enumerate() {
            let m = chunk.len();
            let tweak = first_tweak.wrapping_add((c * BATCH) as u64);
            for (blk, x) in a.iter_mut().zip(chunk.iter()) {
                *blk = x.to_le_bytes().into();
            }
            self.permute(&mut a[..m]);
            // b = π(x) ⊕ i
            for (k, (bb, aa)) in b.iter_mut().zip(a.iter()).take(m).enumerate() {
                let px = u128::from_le_bytes((*aa).into());
                *bb = (px ^ tweak.wrapping_add(k as u64) as u128)
                    .to_le_bytes()
                    .into();
            }
            self.permute(&mut b[..m]);
            for ((x, aa), bb) in chunk.iter_mut().zip(a.iter()).zip(b.iter()) {
                *x = u128::from_le_bytes((*aa).into()) ^ u128::from_le_bytes((*bb).into());
            }
        }
    }

    /// `out[k] = (H(t, q[k]), H(t, q[k] ⊕ delta))` with `t = first_tweak + k`: the IKNP
    /// sender's pair of messages.
    pub fn hash_pairs(
        &self,
        first_tweak: u64,
        qs: &[Block],
        delta: Block,
        out: &mut [(Block, Block)],
    ) {
        assert_eq!(qs.len(), out.len());
        const HALF: usize = BATCH / 2;
        let mut a = [aes::Block::default(); BATCH];
        let mut b = [aes::Block::default(); BATCH];
        for (c, (qc, oc)) in qs.chunks(HALF).zip(out.chunks_mut(HALF)).enumerate() {
            let m = qc.len();
            let tweak = first_tweak.wrapping_add((c * HALF) as u64);
            for (k, q) in qc.iter().enumerate() {
                a[2 * k] = q.to_le_bytes().into();
                a[2 * k + 1] = (q ^ delta).to_le_bytes().into();
            }
            self.permute(&mut a[..2 * m]);
            for k in 0..2 * m {
                let px = u128::from_le_bytes(a[k].into());
                b[k] = (px ^ tweak.wrapping_add((k / 2) as u64) as u128)
                    .to_le_bytes()
                    .into();
            }
            self.permute(&mut b[..2 * m]);
            for (k, o) in oc.iter_mut().enumerate() {
                let h =
                    |i: usize| u128::from_le_bytes(a[i].into()) ^ u128::from_le_bytes(b[i].into());
                *o = (h(2 * k), h(2 * k + 1));
            }
        }
    }
}

/// From this many bytes on, [`prg_expand`] uses the bulk AES-CTR of [`crate::rand::aes_ctr`]
/// (whose setup allocates, but which runs 8 or 32 blocks in flight); below, the `ctr` crate
/// on the stack. Both produce the same keystream.
const BULK_BYTES: usize = 4096;

/// G: expands a κ-bit seed into `out.len()` pseudorandom bytes, AES-128 in counter mode keyed by
/// the seed (little-endian bytes), counter blocks 0, 1, .. (little-endian), zero IV.
///
/// A PRG from a PRF in the standard way; it stretches a random OT's 128-bit message into a pad
/// of any length, and any other protocol's κ-bit seeds (e.g. the G of the triple generation) the
/// same way. Seeds must be uniform and used for one purpose only.
pub fn prg_expand(seed: Block, out: &mut [u8]) {
    let key = seed.to_le_bytes();
    if out.len() >= BULK_BYTES {
        AesCtr::new(&key).fill(out);
    } else {
        out.fill(0);
        let mut c = ctr::Ctr128LE::<Aes128>::new(&key.into(), &[0u8; 16].into());
        c.apply_keystream(out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::BlockEncrypt;

    /// The reference: the formula, one block at a time.
    fn tmmo(pi: &Aes128, i: u64, x: Block) -> Block {
        let p = |v: u128| {
            let mut b: aes::Block = v.to_le_bytes().into();
            pi.encrypt_block(&mut b);
            u128::from_le_bytes(b.into())
        };
        let px = p(x);
        p(px ^ i as u128) ^ px
    }

    #[test]
    fn batched_hashes_match_the_formula() {
        let h = Tccr::new();
        let xs: Vec<Block> = (0..37u128)
            .map(|k| k.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835))
            .collect();
        let first = u64::MAX - 5; // the tweak wraps within the batch
        let mut got = xs.clone();
        h.hash_in_place(first, &mut got);
        let delta = 0x0123_4567_89ab_cdef_fedc_ba98_7654_3210u128;
        let mut pairs = vec![(0, 0); xs.len()];
        h.hash_pairs(first, &xs, delta, &mut pairs);
        for (k, x) in xs.iter().enumerate() {
            let t = first.wrapping_add(k as u64);
            assert_eq!(got[k], tmmo(&h.pi, t, *x));
            assert_eq!(pairs[k], (tmmo(&h.pi, t, *x), tmmo(&h.pi, t, x ^ delta)));
        }
        // The tweak matters.
        assert_ne!(tmmo(&h.pi, 0, xs[3]), tmmo(&h.pi, 1, xs[3]));
    }

    /// Both paths of G give the `ctr` crate's keystream, so short and long expansions of one seed
    /// are prefixes of each other.
    #[test]
    fn prg_paths_agree() {
        let seed = 0x7777_0000_1234_5678_9abc_def0_1111_2222u128;
        let mut long = vec![0u8; BULK_BYTES + 100];
        prg_expand(seed, &mut long);
        for len in [0, 1, 16, 17, 1000, BULK_BYTES - 1] {
            let mut short = vec![0xffu8; len];
            prg_expand(seed, &mut short);
            assert_eq!(short[..], long[..len], "len {len}");
        }
        let mut other = vec![0u8; 64];
        prg_expand(seed ^ 1, &mut other);
        assert_ne!(other[..], long[..64]);
    }
}
