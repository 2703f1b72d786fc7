//! OT extension: IKNP (Ishai, Kilian, Nissim and Petrank, "Extending Oblivious Transfers
//! Efficiently", CRYPTO 2003, §3, semi-honest protocol), κ = 128, in its random-OT form.
//!
//! Setup (the base OTs, run in the reverse direction): the extension's sender draws s ∈ {0,1}^κ
//! and, as the base OTs' receiver with choices s, learns k^i_{s_i} of the extension receiver's
//! κ seed pairs (k^i_0, k^i_1).
//!
//! Each extension of m OTs (m: the batch rounded up to a multiple of 128), with the receiver's
//! choice vector r ∈ {0,1}^m:
//! 1. the receiver expands t^i = G(k^i_0) and sends u^i = t^i ⊕ G(k^i_1) ⊕ r for i < κ (the
//!    columns of the matrix U; one message of 16·m bytes);
//! 2. the sender forms q^i = G(k^i_{s_i}) ⊕ s_i·u^i = t^i ⊕ s_i·r, so that the rows of the m x κ
//!    matrices satisfy q_j = t_j ⊕ r_j·s;
//! 3. the sender outputs (H(j, q_j), H(j, q_j ⊕ s)) and the receiver H(j, t_j) = the r_j-th of
//!    them.
//!
//! G is AES-128-CTR keyed by the seed; each of the 2κ streams is kept and continues from one
//! extension to the next, so a setup serves any number of extensions and no pad is reused. The
//! tweak j of H ([`super::hash::Tccr`]) counts every OT of the setup, padding rows included, so
//! no tweak repeats either. The rows are turned into columns and back by 64 x 64 word
//! transposes ([`super::transpose`]), a chunk of rows at a time to stay in cache.

use super::base::{base_receive, base_send};
use super::hash::Tccr;
use super::transpose::transpose_128_cols;
use super::Block;
use crate::net::{NetError, Transport};
use crate::rand::aes_ctr::AesCtr;

/// κ: the computational security parameter, the number of base OTs and the width of a row.
pub const KAPPA: usize = 128;

/// Rows transposed per pass: 128 columns of 512 bytes (64 KiB) plus the rows stay in L2.
const CHUNK: usize = 4096;

/// The batch rounded up to whole 128-row blocks of the transpose.
fn padded(n: usize) -> usize {
    n.div_ceil(KAPPA) * KAPPA
}

/// Overwrites `words` with the next `8 * words.len()` bytes of `prg`, read little-endian.
fn fill_words(prg: &mut AesCtr, words: &mut [u64]) {
    prg.fill(bytemuck::cast_slice_mut(words));
    for w in words.iter_mut() {
        *w = u64::from_le(*w);
    }
}

/// A caller's bug, not the peer's: OT with oneself. (A peer out of range is the transport's to
/// report.)
fn check_peer(net: &dyn Transport, peer: usize) {
    assert!(
        peer != net.party(),
        "OT with party {peer} from party {}: the peer must be another party",
        net.party()
    );
}

/// The extension's sender for one ordered pair (this party, `peer`): holds s and the κ seeds
/// k^i_{s_i}. Secret; its `Debug` shows the peer only.
pub struct OtSender {
    pub(super) peer: usize,
    /// s, bit i the choice of base OT i.
    delta: Block,
    /// G(k^i_{s_i}), i < κ, at the position the receiver's G(k^i_0), G(k^i_1) have reached.
    prgs: Vec<AesCtr>,
    /// OTs extended so far (padding included): the next OT's tweak.
    done: u64,
    hash: Tccr,
}

impl std::fmt::Debug for OtSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtSender")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl OtSender {
    /// Runs the base OTs with `peer` (as their receiver). One round trip.
    ///
    /// The peer calls [`OtReceiver::setup`] with this party at the same point of its message
    /// sequence.
    ///
    /// # Panics
    /// If `peer` is this party.
    pub fn setup(net: &mut dyn Transport, peer: usize) -> Result<OtSender, NetError> {
        check_peer(net, peer);
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes).map_err(|e| NetError::Io {
            peer: net.party(),
            detail: format!("cannot draw the OT extension's secret from the operating system: {e}"),
        })?;
        let delta = u128::from_le_bytes(bytes);
        bytes.fill(0);
        let choices: Vec<bool> = (0..KAPPA).map(|i| (delta >> i) & 1 == 1).collect();
        let keys = base_receive(net, peer, &choices)?;
        Ok(OtSender {
            peer,
            delta,
            prgs: keys.iter().map(|k| AesCtr::new(&k.to_le_bytes())).collect(),
            done: 0,
            hash: Tccr::new(),
        })
    }

    /// `n` random OTs: pairs (m0, m1) of 128-bit messages; the receiver learns m_{c} for its
    /// chosen c. The peer calls [`OtReceiver::random`] with `n` choices; receives one message
    /// (none when `n` is 0).
    pub fn random(
        &mut self,
        net: &mut dyn Transport,
        n: usize,
    ) -> Result<Vec<(Block, Block)>, NetError> {
        if n == 0 {
            return Ok(Vec::new());
        }
        let m = padded(n);
        let u = net.recv(self.peer)?;
        if u.len() != 16 * m {
            return Err(NetError::Protocol {
                peer: self.peer,
                detail: format!(
                    "IKNP OT extension: expected the receiver's matrix U for {n} OTs ({} bytes), got {} bytes (do both sides ask for the same number of OTs?)",
                    16 * m,
                    u.len()
                ),
            });
        }
        let mut out = vec![(0u128, 0u128); m];
        let mut cols = vec![0u64; KAPPA * CHUNK / 64];
        let mut rows = vec![0u128; CHUNK];
        let mut u_at = 0;
        for start in (0..m).step_by(CHUNK) {
            let len = (m - start).min(CHUNK);
            let w = len / 64;
            for (i, (col, prg)) in cols.chunks_exact_mut(w).zip(&mut self.prgs).enumerate() {
                fill_words(prg, col);
                // q^i = G(k^i_{s_i}) ⊕ s_i·u^i, without a branch on s_i.
                let mask = 0u64.wrapping_sub(((self.delta >> i) & 1) as u64);
                for (q, b) in col.iter_mut().zip(u[u_at..u_at + 8 * w].chunks_exact(8)) {
                    *q ^= u64::from_le_bytes(b.try_into().expect("8 bytes")) & mask;
                }
                u_at += 8 * w;
            }
            transpose_128_cols(&cols[..KAPPA * w], w, &mut rows[..len]);
            let tweak = self.done + start as u64;
            self.hash.hash_pairs(
                tweak,
                &rows[..len],
                self.delta,
                &mut out[start..start + len],
            );
        }
        self.done += m as u64;
        out.truncate(n);
        Ok(out)
    }
}

/// The extension's receiver for one ordered pair (`peer`, this party): holds the κ seed pairs.
/// Secret; its `Debug` shows the peer only.
pub struct OtReceiver {
    pub(super) peer: usize,
    /// G(k^i_0) and G(k^i_1), i < κ.
    prgs: Vec<(AesCtr, AesCtr)>,
    /// OTs extended so far (padding included): the next OT's tweak.
    done: u64,
    hash: Tccr,
}

impl std::fmt::Debug for OtReceiver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtReceiver")
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl OtReceiver {
    /// Runs the base OTs with `peer` (as their sender). One round trip.
    ///
    /// The peer calls [`OtSender::setup`] with this party at the same point of its message
    /// sequence.
    ///
    /// # Panics
    /// If `peer` is this party.
    pub fn setup(net: &mut dyn Transport, peer: usize) -> Result<OtReceiver, NetError> {
        check_peer(net, peer);
        let keys = base_send(net, peer, KAPPA)?;
        Ok(OtReceiver {
            peer,
            prgs: keys
                .iter()
                .map(|(k0, k1)| {
                    (
                        AesCtr::new(&k0.to_le_bytes()),
                        AesCtr::new(&k1.to_le_bytes()),
                    )
                })
                .collect(),
            done: 0,
            hash: Tccr::new(),
        })
    }

    /// Random OTs with chosen choice bits: returns m_{choice[i]} of the sender's i-th pair. The
    /// peer calls [`OtSender::random`] with `choices.len()`; sends one message (none when there
    /// are no choices).
    pub fn random(
        &mut self,
        net: &mut dyn Transport,
        choices: &[bool],
    ) -> Result<Vec<Block>, NetError> {
        let n = choices.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let m = padded(n);
        // r packed as columns are (the padding chooses 0; its OTs are dropped).
        let mut r = vec![0u64; m / 64];
        for (j, &c) in choices.iter().enumerate() {
            r[j / 64] |= (c as u64) << (j % 64);
        }
        let mut u = vec![0u8; 16 * m];
        let mut out = vec![0u128; m];
        let mut cols = vec![0u64; KAPPA * CHUNK / 64];
        let mut g1 = vec![0u64; CHUNK / 64];
        let mut u_at = 0;
        for start in (0..m).step_by(CHUNK) {
            let len = (m - start).min(CHUNK);
            let w = len / 64;
            let r_chunk = &r[start / 64..start / 64 + w];
            for (col, (prg0, prg1)) in cols.chunks_exact_mut(w).zip(&mut self.prgs) {
                fill_words(prg0, col);
                fill_words(prg1, &mut g1[..w]);
                // u^i = t^i ⊕ G(k^i_1) ⊕ r
                let u_col = u[u_at..u_at + 8 * w].chunks_exact_mut(8);
                for (((b, t), g), rr) in u_col.zip(col.iter()).zip(&g1[..w]).zip(r_chunk) {
                    b.copy_from_slice(&(t ^ g ^ rr).to_le_bytes());
                }
                u_at += 8 * w;
            }
            transpose_128_cols(&cols[..KAPPA * w], w, &mut out[start..start + len]);
        }
        // Send before hashing, so the sender's work overlaps ours.
        net.send(self.peer, u)?;
        self.hash.hash_in_place(self.done, &mut out);
        self.done += m as u64;
        out.truncate(n);
        Ok(out)
    }
}
