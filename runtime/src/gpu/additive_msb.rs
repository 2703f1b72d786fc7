//! AdditiveMSB on a device ([`crate::protocol::additive_msb()`]): the MSB of values the three
//! parties hold as additive shares, by two private binary inputs and one ripple-carry adder,
//! every local step in the contract's kernels:
//! - step 1, the masked share z_0 + r (party 0) and the operands a = z_1 + (z_0 + r) (party 1)
//!   and b = z_2 − r (party 2): the stream r drawn on the device (`irisc_gpu_aes_ctr`; its
//!   words, or their negations, by `irisc_gpu_prss_zero{w}` against a zero stream) and added
//!   mod 2^k (`irisc_gpu_reshare_local{w}`);
//! - step 2, the binary inputs of a and b: their bit planes (`irisc_gpu_bit_planes{w}`) XOR the
//!   input stream (drawn on the device, XORed by `irisc_gpu_prss_zero_bits`);
//! - step 3, the k − 1 AND rounds of the adder's carries: each round's AND of (a_i ⊕ c_i) and
//!   (b_i ⊕ c_i) in `irisc_gpu_ripple_local` (the gate of BitExtract's ripple-carry rounds),
//!   the PRSS zero bits drawn on the device.
//!
//! Only the messages cross to the host: the CPU protocol's messages, bytes, rounds and PRSS
//! draws (each stream skipped on the CPU as far as the device drew it), so a party here runs
//! with parties on the CPU and its output shares equal the CPU's bit for bit.
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

use super::lanes::{all, from, out, pack, unpack, Lanes, Words, WordsMut};
use super::prss::{stream_ring_on, stream_words_on, zero_bits_on, Stream};

/// Binary shares of the MSB of z = z_0 + z_1 + z_2 mod 2^k, this party holding `z` (16- or
/// 32-bit storage), on `lanes`: what [`crate::protocol::additive_msb()`] computes, with the
/// same messages and PRSS draws. k + 1 rounds, k − 1 AND gates per value.
pub fn additive_msb_on<L: Lanes, T: RingElem>(
    lanes: &L,
    net: &mut dyn Transport,
    prss: &mut Prss,
    z: &[T],
    k: u32,
) -> Result<BitShares, RuntimeError> {
    let width = match LimbWidth::of_bits(T::BITS) {
        Some(w) if (1..=T::BITS).contains(&k) => w,
        _ => {
            return Err(RuntimeError::Schedule(format!(
                "internal error: additive msb of Z_2^{k} in {}-bit words on a GPU",
                T::BITS
            )))
        }
    };
    let n = z.len();
    let w = words_for(n);
    if w == 0 {
        // The length is public: every party returns here, nothing is sent.
        return Ok(BitShares::zeros(0));
    }
    let planes = k as usize;
    let (pw, top) = (planes * w, planes - 1);
    let (party, to, from_party) = (net.party(), net.next(), net.prev());
    let tail = tail_mask(n);
    let clear_tails = |v: &mut [u64]| {
        for plane in v.chunks_exact_mut(w) {
            plane[w - 1] &= tail;
        }
    };
    let packed_z = pack(z);
    let ring_words = packed_z.len();
    let z_dev = lanes.upload(&packed_z)?;
    // (x + y) mod 2^k of two device vectors of ring words.
    let add = |x: &L::Buf, y: &L::Buf| -> Result<L::Buf, RuntimeError> {
        let mut sum = lanes.zeros(ring_words)?;
        lanes.reshare_local(width, all(x), all(y), n as u64, k, out(&mut sum))?;
        Ok(sum)
    };
    // Step 2 for the value this party alone knows: its bit planes XOR the input stream `m`
    // (the component the next party holds), sent with the tails clear; the device keeps it.
    let input = |net: &mut dyn Transport, values: &L::Buf, m: &L::Buf| {
        let mut bits = lanes.zeros(pw)?;
        lanes.bit_planes(
            width,
            all(values),
            n as u64,
            planes as u32,
            out(&mut bits),
            w as u64,
        )?;
        let mut c = lanes.zeros(pw)?;
        lanes.prss_zero_bits(all(&bits), 0, all(m), 0, pw as u64, out(&mut c))?;
        let mut sent = lanes.read(&c, 0, pw)?;
        clear_tails(&mut sent);
        send_elems(net, to, &sent)?;
        Ok::<_, RuntimeError>(c)
    };
    let recv_planes = |net: &mut dyn Transport, what: &str| {
        let mut v: Vec<u64> = recv_elems(net, from_party, pw, what)?;
        clear_tails(&mut v);
        lanes.upload(&v)
    };
    // Each operand's (own, prev) components, as the CPU protocol's steps 1 and 2 give them:
    // the input streams' tail bits are left as drawn here (the CPU clears them), which only
    // reaches tail bits that every AND share and the output clear.
    let (a_own, a_prev, b_own, b_prev) = match party {
        0 => {
            // r with party 2; z_0 + r to party 1.
            let r = stream_ring_on(lanes, prss, Stream::Prev, width, n, false)?;
            let masked = add(&z_dev, &r)?;
            let sent: Vec<T> = unpack(&lanes.read(&masked, 0, ring_words)?, n);
            send_elems(net, to, &sent)?;
            // a: component 0 is the stream shared with party 1, component 2 is zero; b:
            // component 0 is zero, component 2 comes from party 2.
            let m = stream_words_on(lanes, prss, Stream::Own, pw)?;
            let b_prev = recv_planes(net, "AdditiveMSB input b")?;
            (m, lanes.zeros(pw)?, lanes.zeros(pw)?, b_prev)
        }
        1 => {
            // a = z_1 + (z_0 + r): component 1 goes to party 2, component 0 is the stream
            // with party 0.
            let m = stream_words_on(lanes, prss, Stream::Prev, pw)?;
            let got: Vec<T> = recv_elems(net, from_party, n, "AdditiveMSB masked share")?;
            let a = add(&z_dev, &lanes.upload(&pack(&got))?)?;
            let c1 = input(net, &a, &m)?;
            // b: component 1 is the stream shared with party 2, component 0 is zero.
            let m2 = stream_words_on(lanes, prss, Stream::Own, pw)?;
            (c1, m, m2, lanes.zeros(pw)?)
        }
        _ => {
            // b = z_2 − r: component 2 goes to party 0, component 1 is the stream with party 1.
            let minus_r = stream_ring_on(lanes, prss, Stream::Own, width, n, true)?;
            let b = add(&z_dev, &minus_r)?;
            let m = stream_words_on(lanes, prss, Stream::Prev, pw)?;
            let c2 = input(net, &b, &m)?;
            // a: component 2 is zero, component 1 comes from party 1.
            let a_prev = recv_planes(net, "AdditiveMSB input a")?;
            (lanes.zeros(pw)?, a_prev, c2, m)
        }
    };
    // Bit k − 1 of a + b: the top planes and the carry into them, XORed (tails cleared).
    let top_bits = |carry_own: &[u64], carry_prev: &[u64]| {
        let at = top * w;
        let xor3 = |x: &L::Buf, y: &L::Buf, c: &[u64]| -> Result<Vec<u64>, RuntimeError> {
            let (x, y) = (lanes.read(x, at, w)?, lanes.read(y, at, w)?);
            Ok((0..w).map(|j| x[j] ^ y[j] ^ c[j]).collect())
        };
        Ok::<_, RuntimeError>(BitShares::from_words(
            xor3(&a_own, &b_own, carry_own)?,
            xor3(&a_prev, &b_prev, carry_prev)?,
            n,
        ))
    };
    if top == 0 {
        return top_bits(&vec![0; w], &vec![0; w]);
    }
    // The zero bits of every AND, one plane per carry round (the CPU protocol's draw).
    let alpha = zero_bits_on(lanes, prss, top * w)?;
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
    top_bits(&carry_own, &carry_prev)
}
