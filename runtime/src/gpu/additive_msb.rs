//! AdditiveMSB on a device ([`crate::protocol::additive_msb()`]): the MSB of values the three
//! parties hold as additive shares, by two private binary inputs and one ripple-carry adder.
//! Steps 1 and 2 (the masked share, the binary inputs of a and b) are the CPU protocol's own
//! code ([`crate::protocol::additive_msb::inputs`]); step 3, the k − 1 AND rounds of the
//! adder's carries, runs its local steps in the contract's kernels: the PRSS zero bits drawn
//! on the device (`irisc_gpu_aes_ctr`, `irisc_gpu_prss_zero_bits`) and each round's AND of
//! (a_i ⊕ c_i) and (b_i ⊕ c_i) in `irisc_gpu_ripple_local` (the same gate as BitExtract's
//! ripple-carry rounds). Only the AND shares cross to the host, one message per round: the
//! CPU protocol's messages, bytes, rounds and PRSS draws, so a party here runs with parties
//! on the CPU and its output shares equal the CPU's bit for bit.
//!
//! Unchunked rounds only: with a message chunk size ([`crate::protocol::set_chunk_elems`])
//! the caller runs the CPU protocol, whose chunked messages every party then sends alike.

use crate::contract::gpu::LimbWidth;
use crate::error::RuntimeError;
use crate::net::Transport;
use crate::protocol::additive_msb::inputs;
use crate::protocol::{recv_elems, send_elems};
use crate::rand::Prss;
use crate::ring::RingElem;
use crate::share::binary::tail_mask;
use crate::share::BitShares;

use super::lanes::{from, out, Lanes, Words, WordsMut};
use super::prss::zero_bits_on;

/// Binary shares of the MSB of z = z_0 + z_1 + z_2 mod 2^k, this party holding `z` (16- or
/// 32-bit storage), the adder's rounds on `lanes`: what
/// [`crate::protocol::additive_msb()`] computes, with the same messages and PRSS draws.
/// k + 1 rounds, k − 1 AND gates per value.
pub fn additive_msb_on<L: Lanes, T: RingElem>(
    lanes: &L,
    net: &mut dyn Transport,
    prss: &mut Prss,
    z: &[T],
    k: u32,
) -> Result<BitShares, RuntimeError> {
    if LimbWidth::of_bits(T::BITS).is_none() || !(1..=T::BITS).contains(&k) {
        return Err(RuntimeError::Schedule(format!(
            "internal error: additive msb of Z_2^{k} in {}-bit words on a GPU",
            T::BITS
        )));
    }
    let Some(ops) = inputs(net, prss, z, k)? else {
        return Ok(BitShares::zeros(0));
    };
    let (w, n, top) = (ops.words, ops.len, ops.planes - 1);
    if top == 0 {
        return Ok(ops.top_bits(&vec![0; w], &vec![0; w]));
    }
    // The zero bits of every AND, one plane per carry round (the CPU protocol's draw).
    let alpha = zero_bits_on(lanes, prss, top * w)?;
    let (a_own, a_prev) = (lanes.upload(&ops.a_own)?, lanes.upload(&ops.a_prev)?);
    let (b_own, b_prev) = (lanes.upload(&ops.b_own)?, lanes.upload(&ops.b_prev)?);
    let tail = tail_mask(n);
    let (to, from_party) = (net.next(), net.prev());
    // The carry c_i as (own, prev) components: own on the device (the kernel folds each
    // round's share into it), prev on the host (what the previous party sends, folded here)
    // and copied to the device for the next round.
    let mut carry_own = lanes.zeros(w)?;
    let mut carry_prev_dev = lanes.zeros(w)?;
    let mut carry_prev = vec![0u64; w];
    let mut z_round = lanes.zeros(w)?;
    for i in 0..top {
        if i > 0 {
            lanes.write(&mut carry_prev_dev, 0, &carry_prev)?;
        }
        let at = i * w;
        // x = a_i ⊕ c_i, y = b_i ⊕ c_i; z = x_own (y_own ⊕ y_prev) ⊕ x_prev y_own ⊕ α;
        // then c_(i+1)'s own component is c_i's ⊕ z.
        lanes.ripple_local(
            (from(&a_own, at), from(&a_prev, at)),
            (from(&b_own, at), from(&b_prev, at)),
            (
                WordsMut {
                    buf: &mut carry_own,
                    at: 0,
                },
                Words {
                    buf: &carry_prev_dev,
                    at: 0,
                },
            ),
            from(&alpha, at),
            w as u64,
            n as u64,
            out(&mut z_round),
        )?;
        send_elems(net, to, &lanes.read(&z_round, 0, w)?)?;
        let mut got: Vec<u64> = recv_elems(net, from_party, w, "AdditiveMSB AND shares")?;
        // A peer's stray bits beyond the batch must not reach later gates.
        got[w - 1] &= tail;
        for (c, g) in carry_prev.iter_mut().zip(&got) {
            *c ^= g;
        }
    }
    let carry_own = lanes.read(&carry_own, 0, w)?;
    Ok(ops.top_bits(&carry_own, &carry_prev))
}
