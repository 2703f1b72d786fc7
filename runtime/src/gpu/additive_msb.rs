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
//! with parties on the CPU and its output shares equal the CPU's bit for bit. That includes
//! the CPU protocol's two halves ([`halves`]): the second runs mirrored, its messages to the
//! previous party, and converts its shares to (own, prev) in its last round.
//!
//! Unchunked rounds only: with a message chunk size ([`crate::protocol::set_chunk_elems`])
//! the caller runs the CPU protocol, whose chunked messages every party then sends alike.

use crate::contract::gpu::LimbWidth;
use crate::error::RuntimeError;
use crate::net::Transport;
use crate::protocol::additive_msb::{halves, Way};
use crate::protocol::{recv_elems, send_elems};
use crate::rand::Prss;
use crate::ring::RingElem;
use crate::share::binary::{tail_mask, words_for};
use crate::share::BitShares;

use super::lanes::{all, from, out, pack, unpack, Lanes, Words, WordsMut};
use super::prss::{stream_ring_on, stream_words_on, zero_bits_on, Stream};

/// One half of the batch on the device: its way, its elements' additive shares, what this
/// party drew for it, and (roles 1 and 2) its input once made.
struct HalfOn<B> {
    at: HalfGeometry,
    z: B,
    draws: DrawsOn<B>,
    /// This party's input, as sent (roles 1 and 2, from the step that sends it).
    sent: Option<B>,
}

/// A half's place in the batch: its way, and its elements and words.
struct HalfGeometry {
    way: Way,
    len: usize,
    words: usize,
}

/// What one half draws from the PRSS before any message, per role: the CPU protocol's
/// `Draws`, on the device.
enum DrawsOn<B> {
    /// Role 0: r (with the half's previous party) and a's component 0 (with the next).
    Zero { r: B, a0: B },
    /// Role 1: a's input stream (with the previous party) and b's component 1 (with the
    /// next).
    One { m: B, b1: B },
    /// Role 2: −r (drawn negated, with the next party) and b's input stream (with the
    /// previous).
    Two { r: B, m: B },
}

/// The streams the steps call "shared with the next party" and "with the previous party" in a
/// half going `way`.
fn streams(way: Way) -> (Stream, Stream) {
    if way.next_stream_is_own() {
        (Stream::Own, Stream::Prev)
    } else {
        (Stream::Prev, Stream::Own)
    }
}

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
    let top = planes - 1;
    let party = net.party();
    // Words of `len` ring elements packed as `pack` packs them.
    let packed = |len: usize| (len * std::mem::size_of::<T>()).div_ceil(8);
    // (x + y) mod 2^k of two device vectors of `len` ring elements.
    let add = |x: &L::Buf, y: &L::Buf, len: usize| -> Result<L::Buf, RuntimeError> {
        let mut sum = lanes.zeros(packed(len))?;
        lanes.reshare_local(width, all(x), all(y), len as u64, k, out(&mut sum))?;
        Ok(sum)
    };
    // Step 2 for the value this party alone knows in `half`: its bit planes XOR the input
    // stream `m` (the component the half's next party holds), sent with the tails clear; the
    // device keeps it.
    let input = |net: &mut dyn Transport, half: &HalfGeometry, values: &L::Buf, m: &L::Buf| {
        let (hw, pw) = (half.words, planes * half.words);
        let mut bits = lanes.zeros(pw)?;
        lanes.bit_planes(
            width,
            all(values),
            half.len as u64,
            planes as u32,
            out(&mut bits),
            hw as u64,
        )?;
        let mut c = lanes.zeros(pw)?;
        lanes.prss_zero_bits(all(&bits), 0, all(m), 0, pw as u64, out(&mut c))?;
        let mut sent = lanes.read(&c, 0, pw)?;
        clear_tails(&mut sent, hw, half.len);
        let to = half.way.to(net);
        send_elems(net, to, &sent)?;
        Ok::<_, RuntimeError>(c)
    };
    let recv_planes = |net: &mut dyn Transport, half: &HalfGeometry, what: &str| {
        let from_party = half.way.from(net);
        let mut v: Vec<u64> = recv_elems(net, from_party, planes * half.words, what)?;
        clear_tails(&mut v, half.words, half.len);
        lanes.upload(&v)
    };

    // Every half's PRSS draws first, in half order (the CPU protocol's order on each stream).
    let mut halves_on = Vec::new();
    for (way, words) in halves(w, k) {
        let elems = 64 * words.start..(64 * words.end).min(n);
        let (hw, len) = (words.len(), elems.len());
        let pw = planes * hw;
        let (next_s, prev_s) = streams(way);
        let draws = match way.role(party) {
            0 => DrawsOn::Zero {
                r: stream_ring_on(lanes, prss, prev_s, width, len, false)?,
                a0: stream_words_on(lanes, prss, next_s, pw)?,
            },
            1 => DrawsOn::One {
                m: stream_words_on(lanes, prss, prev_s, pw)?,
                b1: stream_words_on(lanes, prss, next_s, pw)?,
            },
            _ => DrawsOn::Two {
                r: stream_ring_on(lanes, prss, next_s, width, len, true)?,
                m: stream_words_on(lanes, prss, prev_s, pw)?,
            },
        };
        halves_on.push(HalfOn {
            at: HalfGeometry {
                way,
                len,
                words: hw,
            },
            z: lanes.upload(&pack(&z[elems]))?,
            draws,
            sent: None,
        });
    }
    // Sends that wait for nothing: role 0's z_0 + r, role 2's input of b = z_2 − r.
    for half in halves_on.iter_mut() {
        match &half.draws {
            DrawsOn::Zero { r, .. } => {
                let len = half.at.len;
                let masked = add(&half.z, r, len)?;
                let sent: Vec<T> = unpack(&lanes.read(&masked, 0, packed(len))?, len);
                let to = half.at.way.to(net);
                send_elems(net, to, &sent)?;
            }
            DrawsOn::Two { r, m } => {
                let b = add(&half.z, r, half.at.len)?;
                half.sent = Some(input(net, &half.at, &b, m)?);
            }
            DrawsOn::One { .. } => {}
        }
    }
    // Role 1: a = z_1 + (z_0 + r), input once the masked share has arrived.
    for half in halves_on.iter_mut() {
        let DrawsOn::One { m, .. } = &half.draws else {
            continue;
        };
        let from_party = half.at.way.from(net);
        let got: Vec<T> = recv_elems(net, from_party, half.at.len, "AdditiveMSB masked share")?;
        let a = add(&half.z, &lanes.upload(&pack(&got))?, half.at.len)?;
        half.sent = Some(input(net, &half.at, &a, m)?);
    }
    // The receipts: each operand's (own, prev) components in the half's orientation, as the
    // CPU protocol's steps 1 and 2 give them (the input streams' tail bits are left as drawn
    // here, the CPU clears them: they only reach tail bits that every AND share and the output
    // clear).
    let mut operands = Vec::with_capacity(halves_on.len());
    let mut geometry = Vec::with_capacity(halves_on.len());
    for half in halves_on {
        let pw = planes * half.at.words;
        let sent = |sent: Option<L::Buf>| {
            sent.ok_or_else(|| {
                RuntimeError::Schedule("internal error: additive msb input not made".into())
            })
        };
        let ops = match half.draws {
            DrawsOn::Zero { a0, .. } => {
                let b_prev = recv_planes(net, &half.at, "AdditiveMSB input b")?;
                [a0, lanes.zeros(pw)?, lanes.zeros(pw)?, b_prev]
            }
            DrawsOn::One { m, b1 } => [sent(half.sent)?, m, b1, lanes.zeros(pw)?],
            DrawsOn::Two { m, .. } => {
                let a_prev = recv_planes(net, &half.at, "AdditiveMSB input a")?;
                [lanes.zeros(pw)?, a_prev, sent(half.sent)?, m]
            }
        };
        operands.push(ops);
        geometry.push(half.at);
    }
    // Bit k − 1 of a + b in one half: the top planes and the carry into them, XORed.
    let top_plane = |ops: &[L::Buf; 4], half: &HalfGeometry, own: bool| {
        let (x, y) = if own {
            (&ops[0], &ops[2])
        } else {
            (&ops[1], &ops[3])
        };
        let at = top * half.words;
        let (x, y) = (
            lanes.read(x, at, half.words)?,
            lanes.read(y, at, half.words)?,
        );
        Ok::<_, RuntimeError>((0..half.words).map(|j| x[j] ^ y[j]).collect::<Vec<u64>>())
    };
    let xor =
        |x: Vec<u64>, c: &[u64]| -> Vec<u64> { x.iter().zip(c).map(|(x, c)| x ^ c).collect() };
    if top == 0 {
        // One half ([`halves`] does not split without an AND round).
        let (ops, half) = (&operands[0], &geometry[0]);
        return Ok(BitShares::from_words(
            top_plane(ops, half, true)?,
            top_plane(ops, half, false)?,
            half.len,
        ));
    }
    // The zero bits of every AND in one draw: round i's are words i · w .. (i + 1) · w, a
    // word per batch word (the first half's first), the bits the CPU protocol draws round by
    // round.
    let alpha = zero_bits_on(lanes, prss, top * w)?;
    // Each half's carry c_i as (own, prev) components: own on the device (the kernel folds
    // each round's share into it), prev on the host (what the half's previous party sends,
    // folded here) and copied to the device for the next round; and the mirrored half's MSB
    // components after its conversion round.
    struct Chain<B> {
        start: usize,
        own: B,
        prev_dev: B,
        prev: Vec<u64>,
        z_round: B,
        msb: Option<(Vec<u64>, Vec<u64>)>,
    }
    let mut chains = Vec::with_capacity(geometry.len());
    let mut start = 0;
    for half in &geometry {
        chains.push(Chain {
            start,
            own: lanes.zeros(half.words)?,
            prev_dev: lanes.zeros(half.words)?,
            prev: vec![0u64; half.words],
            z_round: lanes.zeros(half.words)?,
            msb: None,
        });
        start += half.words;
    }
    for i in 0..top {
        let last = i + 1 == top;
        for ((half, ops), chain) in geometry.iter().zip(&operands).zip(chains.iter_mut()) {
            let hw = half.words;
            if i > 0 {
                lanes.write(&mut chain.prev_dev, 0, &chain.prev)?;
            }
            let at = i * hw;
            // x = a_i ⊕ c_i, y = b_i ⊕ c_i; z = x_own (y_own ⊕ y_prev) ⊕ x_prev y_own ⊕ α;
            // then c_(i+1)'s own component is c_i's ⊕ z.
            lanes.ripple_local(
                (from(&ops[0], at), from(&ops[1], at)),
                (from(&ops[2], at), from(&ops[3], at)),
                (
                    WordsMut {
                        buf: &mut chain.own,
                        at: 0,
                    },
                    Words {
                        buf: &chain.prev_dev,
                        at: 0,
                    },
                ),
                from(&alpha, i * w + chain.start),
                hw as u64,
                half.len as u64,
                out(&mut chain.z_round),
            )?;
            if last && half.way == Way::Prev {
                // The conversion: this party's component of the MSB to party i + 1.
                let carry = lanes.read(&chain.own, 0, hw)?;
                let mut msb = xor(top_plane(ops, half, true)?, &carry);
                msb[hw - 1] &= tail_mask(half.len);
                let to = net.next();
                send_elems(net, to, &msb)?;
                chain.msb = Some((msb, Vec::new()));
            } else {
                let to = half.way.to(net);
                send_elems(net, to, &lanes.read(&chain.z_round, 0, hw)?)?;
            }
        }
        for (half, chain) in geometry.iter().zip(chains.iter_mut()) {
            let hw = half.words;
            if let (true, Some((_, msb_prev))) = (last, chain.msb.as_mut()) {
                let from_party = net.prev();
                let mut got: Vec<u64> = recv_elems(
                    net,
                    from_party,
                    hw,
                    "AdditiveMSB mirrored half's MSB shares",
                )?;
                got[hw - 1] &= tail_mask(half.len);
                *msb_prev = got;
                continue;
            }
            let from_party = half.way.from(net);
            let mut got: Vec<u64> = recv_elems(net, from_party, hw, "AdditiveMSB AND shares")?;
            // A peer's stray bits beyond the batch must not reach later gates.
            got[hw - 1] &= tail_mask(half.len);
            for (c, g) in chain.prev.iter_mut().zip(&got) {
                *c ^= g;
            }
        }
    }
    let (mut own, mut prev) = (Vec::with_capacity(w), Vec::with_capacity(w));
    for ((half, ops), chain) in geometry.iter().zip(&operands).zip(chains) {
        let (o, p) = match chain.msb {
            Some(msb) => msb,
            None => {
                let carry = lanes.read(&chain.own, 0, half.words)?;
                (
                    xor(top_plane(ops, half, true)?, &carry),
                    xor(top_plane(ops, half, false)?, &chain.prev),
                )
            }
        };
        // Each half's words, its tail cleared (only the last half has one).
        let bits = BitShares::from_words(o, p, half.len);
        own.extend_from_slice(&bits.own);
        prev.extend_from_slice(&bits.prev);
    }
    Ok(BitShares::from_words(own, prev, n))
}

/// Clears the bits beyond `len` elements in the last word of every `words`-word plane.
fn clear_tails(v: &mut [u64], words: usize, len: usize) {
    let tail = tail_mask(len);
    for plane in v.chunks_exact_mut(words) {
        plane[words - 1] &= tail;
    }
}
