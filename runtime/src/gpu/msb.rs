//! MSB extraction on a device (paper 000, Appendix E, Algorithm 10 for bit k − 1: the
//! comparison of Lemma 1), the rounds of [`crate::protocol::bit_extract::bit_extract`] with
//! every local step in the contract's kernels: the bit planes, the PRSS zero bits (the party's
//! two AES-CTR streams drawn on the device from where its CPU streams stand, which then skip
//! the same bytes), ShareSplit and the full-adder layer, and the ripple-carry rounds. Only the
//! AND shares cross to the host, one message per round, and the result: the same messages,
//! bytes and rounds as the CPU protocol, so a GPU party and CPU parties run one protocol
//! together, and the party's output shares equal the CPU's bit for bit.
//!
//! Unchunked rounds only: with a message chunk size ([`crate::protocol::set_chunk_elems`])
//! the caller runs the CPU protocol, whose chunked messages every party then sends alike.

use crate::contract::gpu::LimbWidth;
use crate::error::RuntimeError;
use crate::net::Transport;
use crate::protocol::{recv_elems, send_elems};
use crate::rand::Prss;
use crate::ring::RingElem;
use crate::share::binary::{tail_mask, words_for};
use crate::share::BitShares;

use super::lanes::{all, from, out, pack, Lanes, Words, WordsMut};
use super::prss::zero_bits_on;

/// The most significant bit of each of the values whose replicated shares are `own`, `prev`
/// in Z_2^k (16- or 32-bit storage), on `lanes`: what [`crate::protocol::msb`] computes, with
/// the same messages and PRSS draws. k − 1 rounds, 2k − 3 AND gates per value.
pub fn msb_on<L: Lanes, T: RingElem>(
    lanes: &L,
    net: &mut dyn Transport,
    prss: &mut Prss,
    own: &[T],
    prev: &[T],
    k: u32,
) -> Result<BitShares, RuntimeError> {
    let width = LimbWidth::of_bits(T::BITS).ok_or_else(|| {
        RuntimeError::Schedule(format!(
            "internal error: no GPU bit planes for {}-bit storage",
            T::BITS
        ))
    })?;
    if !(1..=T::BITS).contains(&k) || own.len() != prev.len() {
        return Err(RuntimeError::Schedule(format!(
            "internal error: msb of Z_2^{k} in {}-bit words, shares of {} and {} values",
            T::BITS,
            own.len(),
            prev.len()
        )));
    }
    let n = own.len();
    let w = words_for(n);
    if w == 0 {
        return Ok(BitShares::zeros(0));
    }
    let m = k as usize - 1;
    let nb = m + 1;
    let party = net.party() as u32;
    let planes_of = |values: &[T]| -> Result<L::Buf, RuntimeError> {
        let src = lanes.upload(&pack(values))?;
        let mut planes = lanes.zeros(nb * w)?;
        lanes.bit_planes(
            width,
            all(&src),
            n as u64,
            nb as u32,
            out(&mut planes),
            w as u64,
        )?;
        Ok(planes)
    };
    // s = a ⊕ b ⊕ c of ShareSplit is the party's own components: (own, prev) planes.
    let (s_own, s_prev) = (planes_of(own)?, planes_of(prev)?);
    if m == 0 {
        return Ok(BitShares::from_words(
            lanes.read(&s_own, 0, w)?,
            lanes.read(&s_prev, 0, w)?,
            n,
        ));
    }
    // The zero bits of every AND: m·w for the adder layer, w per ripple round but the last.
    let alpha = zero_bits_on(lanes, prss, (2 * m - 1) * w)?;
    let tail = tail_mask(n);
    let (to, from_party) = (net.next(), net.prev());

    // ShareSplit and the full adders of planes 0..m: one message of m planes.
    let mut z = lanes.zeros(m * w)?;
    let mut cc_own = lanes.zeros(m * w)?;
    lanes.fa_local(
        all(&s_own),
        all(&s_prev),
        all(&alpha),
        party,
        w as u64,
        m as u64,
        n as u64,
        out(&mut z),
        out(&mut cc_own),
    )?;
    send_elems(net, to, &lanes.read(&z, 0, m * w)?)?;

    let mut cc_prev = lanes.zeros(m * w)?;
    let mut k_own = lanes.zeros(w)?;
    let mut k_prev_dev = lanes.zeros(w)?;
    let mut k_prev = vec![0u64; w];
    let mut z_round = lanes.zeros(w)?;
    for i in 0..m {
        let planes = if i == 0 { m } else { 1 };
        let mut got: Vec<u64> = recv_elems(net, from_party, planes * w, "AND shares")?;
        // A peer's stray bits beyond the batch must not reach later gates.
        for g in got.chunks_exact_mut(w) {
            g[w - 1] &= tail;
        }
        if i == 0 {
            let g = lanes.upload(&got)?;
            lanes.fa_finish(
                all(&g),
                all(&s_prev),
                party,
                (m * w) as u64,
                out(&mut cc_prev),
            )?;
        } else {
            for (k, g) in k_prev.iter_mut().zip(&got) {
                *k ^= g;
            }
        }
        let (cc, ss) = (i * w, (i + 1) * w);
        if i + 1 == m {
            // Bit m = cc_(m−1) ⊕ s_m ⊕ carry_(m−1).
            let word = |b: &L::Buf, at: usize| lanes.read(b, at, w);
            let (cco, ccp) = (word(&cc_own, cc)?, word(&cc_prev, cc)?);
            let (so, sp) = (word(&s_own, ss)?, word(&s_prev, ss)?);
            let ko = word(&k_own, 0)?;
            let bit_own = (0..w).map(|j| cco[j] ^ so[j] ^ ko[j]).collect();
            let bit_prev = (0..w).map(|j| ccp[j] ^ sp[j] ^ k_prev[j]).collect();
            return Ok(BitShares::from_words(bit_own, bit_prev, n));
        }
        if i > 0 {
            lanes.write(&mut k_prev_dev, 0, &k_prev)?;
        }
        lanes.ripple_local(
            (from(&cc_own, cc), from(&cc_prev, cc)),
            (from(&s_own, ss), from(&s_prev, ss)),
            (
                WordsMut {
                    buf: &mut k_own,
                    at: 0,
                },
                Words {
                    buf: &k_prev_dev,
                    at: 0,
                },
            ),
            from(&alpha, (m + i) * w),
            w as u64,
            n as u64,
            out(&mut z_round),
        )?;
        send_elems(net, to, &lanes.read(&z_round, 0, w)?)?;
    }
    unreachable!("the last round returns")
}
