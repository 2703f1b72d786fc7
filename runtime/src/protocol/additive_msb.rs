//! AdditiveMSB: the most significant bit of a value the three parties hold as additive shares,
//! by two private binary inputs and one ripple-carry adder.
//!
//! A dot product leaves party i with an additive share z_i (Appendix C, eq. 6, for replicated
//! codes; Section 4.3.2 of the later version, after the Lagrange weights, for Shamir over
//! GR(2^16, d)). The papers reshare it (one k-bit word per element and party) and run
//! BitExtract (Algorithm 10): a full-adder layer over the three components, then the
//! ripple-carry adder, 2k − 3 AND gates. Here the parties first bring the sum to two
//! operands, each known to one party, as ABY3's bit decomposition does with the component sum
//! one party knows (Mohassel and Rindal, ABY3, Section 5.3), so one adder suffices:
//!
//! 1. party 0 sends z_0 + r to party 1, with r from the PRSS stream that parties 0 and 2 share:
//!    party 1 knows a = z_0 + z_1 + r, party 2 knows b = z_2 − r, and a + b = z (mod 2^k);
//! 2. party 1 inputs a and party 2 inputs b as binary shares, one message each: of the three
//!    components, one is zero, one is a PRSS stream the owner shares with one other party, and
//!    the owner sends the third (its value XOR that stream) to the party that must hold it;
//! 3. BinAdd (Algorithm 7) of a and b over k bits, without the carry out of the top bit: the
//!    carries into bits 1..k−1 are k − 1 AND gates, one per round; bit k − 1 of the sum is the
//!    MSB.
//!
//! Cost per element: every party sends one k-bit word (party 0) or k input bits (parties 1 and
//! 2) and k − 1 AND bits: 2 + 15/8 bytes for k = 16, against 2 + 29/8 for a reshare and
//! BitExtract; k + 1 rounds against 1 + (k − 1). Semi-honest, one corruption: party 1 sees
//! z_0 masked by a stream it does not know; party 2 sees a masked by a stream it does not know,
//! party 0 b likewise; the AND gates reveal nothing (their messages carry fresh zero shares).
//!
//! Batched and bit-sliced as [`super::bit_extract()`]: plane j holds bit j of every element,
//! 64 elements a word; with a chunk size ([`super::set_chunk_elems`]) steps 1 and 2 and each AND
//! round are sent in element chunks: party 1 inputs a chunk of a as soon as that chunk of
//! z_0 + r has arrived, and the AND chain is pipelined as there.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::{mask_slice, RingElem};
use crate::share::binary::{tail_mask, words_for};
use crate::share::BitShares;

use super::bit_planes::bit_planes_flat;
use super::{recv_elems, send_elems};

/// The rounds of [`additive_msb`] in Z_2^k: the two input rounds, then k − 1 AND rounds.
pub fn rounds(k: u32) -> u64 {
    u64::from(k) + 1
}

/// The AND gates per element of [`additive_msb`] in Z_2^k: k − 1.
pub fn and_gates(k: u32) -> u64 {
    u64::from(k.saturating_sub(1))
}

/// Binary shares of the MSB of z = z_0 + z_1 + z_2 mod 2^k, where this party holds `z`, its
/// additive share (elements reduced or not: only their low k bits are read). Panics unless
/// `1 <= k <= T::BITS` (fixed by the compiler, not by peers).
#[doc(alias = "AdditiveMSB")]
pub fn additive_msb<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    z: &[T],
    k: u32,
) -> Result<BitShares, NetError> {
    let Some(ops) = inputs(net, prss, z, k)? else {
        return Ok(BitShares::zeros(0));
    };
    let (w, n, top) = (ops.words, ops.len, ops.planes - 1);
    if top == 0 {
        return Ok(ops.top_bits(&vec![0; w], &vec![0; w]));
    }
    let (to, from) = (net.next(), net.prev());
    let tail = tail_mask(n);
    let chunks = super::chunk_ranges(w);
    let plane = |j: usize| j * w..(j + 1) * w;
    let (a_own, a_prev, b_own, b_prev) = (&ops.a_own, &ops.a_prev, &ops.b_own, &ops.b_prev);

    // Step 3: carries c_1..c_top, c_1 = a_0 b_0 and c_(i+1) = (a_i ⊕ c_i)(b_i ⊕ c_i) ⊕ c_i.
    // Round i computes the AND of x = a_i ⊕ c_i and y = b_i ⊕ c_i (c_0 = 0) as in
    // Algorithm 2's AND of replicated bits: z = x_own (y_own ⊕ y_prev) ⊕ x_prev y_own ⊕ α.
    let alpha = prss.zero_bits(top * w);
    let (mut co, mut cp) = (vec![0u64; w], vec![0u64; w]);
    let and_round = |i: usize, co: &mut [u64], cp: &[u64], a: usize, b: usize| -> Vec<u64> {
        let r = plane(i);
        let (ao, ap) = (
            &a_own[r.start + a..r.start + b],
            &a_prev[r.start + a..r.start + b],
        );
        let (bo, bp) = (
            &b_own[r.start + a..r.start + b],
            &b_prev[r.start + a..r.start + b],
        );
        let al = &alpha[i * w + a..i * w + b];
        let (co, cp) = (&mut co[a..b], &cp[a..b]);
        let mut zs = Vec::with_capacity(b - a);
        for j in 0..b - a {
            let (xo, xp) = (ao[j] ^ co[j], ap[j] ^ cp[j]);
            let (yo, yp) = (bo[j] ^ co[j], bp[j] ^ cp[j]);
            let mut zj = (xo & (yo ^ yp)) ^ (xp & yo) ^ al[j];
            if b == w && j + 1 == b - a {
                zj &= tail;
            }
            // The new carry's own component: the AND's, plus c_i (the ⊕ c_i of the carry).
            co[j] ^= zj;
            zs.push(zj);
        }
        zs
    };
    for &(a, b) in &chunks {
        let zs = and_round(0, &mut co, &cp, a, b);
        send_elems(net, to, &zs)?;
    }
    for i in 0..top {
        let last = i + 1 == top;
        for &(a, b) in &chunks {
            let mut got: Vec<u64> = recv_elems(net, from, b - a, "AdditiveMSB AND shares")?;
            if b == w {
                got[b - a - 1] &= tail;
            }
            // Carry c_(i+1)'s prev component for this chunk is complete.
            for (c, g) in cp[a..b].iter_mut().zip(&got) {
                *c ^= g;
            }
            if !last {
                let zs = and_round(i + 1, &mut co, &cp, a, b);
                send_elems(net, to, &zs)?;
            }
        }
    }
    Ok(ops.top_bits(&co, &cp))
}

/// The two operands of AdditiveMSB's adder as replicated binary shares, bit-sliced: steps 1
/// and 2 of [`additive_msb`]. Plane j of each component is words `j·words .. (j+1)·words`,
/// the tails beyond `len` clear.
pub(crate) struct Operands {
    /// Components of a = z_0 + z_1 + r (party 1's value).
    pub a_own: Vec<u64>,
    pub a_prev: Vec<u64>,
    /// Components of b = z_2 − r (party 2's value).
    pub b_own: Vec<u64>,
    pub b_prev: Vec<u64>,
    /// k planes per component.
    pub planes: usize,
    /// Words per plane.
    pub words: usize,
    /// Elements.
    pub len: usize,
}

impl Operands {
    /// Bit k − 1 of a + b, given the (own, prev) components of the carry into it: the top
    /// planes of a and b and the carry, XORed.
    fn top_bits(&self, carry_own: &[u64], carry_prev: &[u64]) -> BitShares {
        let w = self.words;
        let t = (self.planes - 1) * w..self.planes * w;
        let xor3 = |x: &[u64], y: &[u64], c: &[u64]| -> Vec<u64> {
            x.iter()
                .zip(y)
                .zip(c)
                .map(|((x, y), c)| x ^ y ^ c)
                .collect()
        };
        BitShares::from_words(
            xor3(&self.a_own[t.clone()], &self.b_own[t.clone()], carry_own),
            xor3(&self.a_prev[t.clone()], &self.b_prev[t], carry_prev),
            self.len,
        )
    }
}

/// Steps 1 and 2 of [`additive_msb`] (in message chunks where the thread has a chunk size):
/// the operands a and b as binary shares, or `None` for an empty batch (nothing sent). The
/// device's AdditiveMSB ([`crate::gpu::additive_msb`]) runs the same steps in kernels. Panics
/// unless `1 <= k <= T::BITS`.
pub(crate) fn inputs<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    z: &[T],
    k: u32,
) -> Result<Option<Operands>, NetError> {
    assert!(
        k >= 1 && k <= T::BITS,
        "additive MSB: k = {k} does not fit the {}-bit storage",
        T::BITS
    );
    let n = z.len();
    let w = words_for(n);
    if w == 0 {
        // The length is public: every party returns here, nothing is sent.
        return Ok(None);
    }
    let planes = k as usize;
    let (party, to, from) = (net.party(), net.next(), net.prev());
    let tail = tail_mask(n);
    // Bits beyond the batch in the last word of every plane: zero in what is sent, and cleared
    // in what is received, so a peer's stray bits never reach a gate.
    let clear_tails = |v: &mut [u64]| {
        for plane in v.chunks_exact_mut(w) {
            plane[w - 1] &= tail;
        }
    };

    // Steps 1 and 2 run in the AND rounds' chunks of elements (64 per word): party 1 inputs
    // chunk c of a as soon as chunk c of z_0 + r has arrived, so on a slow link the transfer
    // of a (party 1 to 2) overlaps that of z_0 + r (party 0 to 1) instead of following it.
    // The PRSS streams are drawn whole first, in the same order as unchunked.
    let chunks = super::chunk_ranges(w);
    let elems = |(a, b): (usize, usize)| 64 * a..(64 * b).min(n);
    // Words [a, b) of every plane of `v`, as one message.
    let send_planes = |net: &mut dyn Transport, v: &[u64], (a, b): (usize, usize)| {
        let mut msg = Vec::with_capacity(planes * (b - a));
        for j in 0..planes {
            msg.extend_from_slice(&v[j * w + a..j * w + b]);
        }
        send_elems(net, to, &msg)
    };
    // Every plane, received chunk by chunk (words [a, b) of every plane per message).
    let recv_planes = |net: &mut dyn Transport, what: &str| -> Result<Vec<u64>, NetError> {
        let mut v = vec![0u64; planes * w];
        for &(a, b) in &chunks {
            let got: Vec<u64> = recv_elems(net, from, planes * (b - a), what)?;
            for (j, part) in got.chunks_exact(b - a).enumerate() {
                v[j * w + a..j * w + b].copy_from_slice(part);
            }
        }
        clear_tails(&mut v);
        Ok(v)
    };
    // A value this party alone knows is input as binary shares, one message per chunk: the
    // component the next party must hold is the value ⊕ the stream shared with the previous
    // party (which holds that stream as its own component); the third component is zero.
    // `input_stream` draws that stream (whole, before any chunk); `input_chunk` puts the
    // component of the values of `chunk` into `c` and sends it.
    let input_stream = |prss: &mut Prss| {
        let mut m: Vec<u64> = prss.with_prev(planes * w);
        clear_tails(&mut m);
        m
    };
    let input_chunk = |net: &mut dyn Transport,
                       m: &[u64],
                       c: &mut [u64],
                       (a, b): (usize, usize),
                       values: &[T]|
     -> Result<(), NetError> {
        let part = bit_planes_flat(values, planes);
        for (j, plane) in part.chunks_exact(b - a).enumerate() {
            let at = j * w + a..j * w + b;
            for ((c, &p), &m) in c[at.clone()].iter_mut().zip(plane).zip(&m[at]) {
                *c = p ^ m;
            }
            if b == w {
                c[j * w + w - 1] &= tail;
            }
        }
        send_planes(net, c, (a, b))
    };

    // Step 1 and the inputs. Each operand as (own, prev) components, planes * w words each.
    let zeros = || vec![0u64; planes * w];
    let ((a_own, a_prev), (b_own, b_prev)) = match party {
        0 => {
            // r with party 2; z_0 + r to party 1.
            let r: Vec<T> = prss.with_prev(n);
            let mut u: Vec<T> = z.iter().zip(&r).map(|(&x, &r)| x.wrapping_add(r)).collect();
            mask_slice(&mut u, k);
            for &c in &chunks {
                send_elems(net, to, &u[elems(c)])?;
            }
            // a: component 0 is the stream shared with party 1, component 2 is zero.
            let mut m: Vec<u64> = prss.with_next(planes * w);
            clear_tails(&mut m);
            // b: component 0 is zero, component 2 comes from party 2.
            let b_prev = recv_planes(net, "AdditiveMSB input b")?;
            ((m, zeros()), (zeros(), b_prev))
        }
        1 => {
            // a = z_1 + (z_0 + r), chunk by chunk as the masked share arrives.
            // a: component 1 goes to party 2; component 0 is the stream with party 0.
            let m = input_stream(prss);
            let mut c1 = zeros();
            for &chunk in &chunks {
                let at = elems(chunk);
                let u: Vec<T> = recv_elems(net, from, at.len(), "AdditiveMSB masked share")?;
                let a: Vec<T> = z[at]
                    .iter()
                    .zip(&u)
                    .map(|(&x, &u)| x.wrapping_add(u))
                    .collect();
                input_chunk(net, &m, &mut c1, chunk, &a)?;
            }
            // b: component 1 is the stream shared with party 2, component 0 is zero.
            let mut m2: Vec<u64> = prss.with_next(planes * w);
            clear_tails(&mut m2);
            ((c1, m), (m2, zeros()))
        }
        _ => {
            let r: Vec<T> = prss.with_next(n);
            let b: Vec<T> = z.iter().zip(&r).map(|(&x, &r)| x.wrapping_sub(r)).collect();
            // b: component 2 goes to party 0; component 1 is the stream with party 1.
            let m = input_stream(prss);
            let mut c2 = zeros();
            for &chunk in &chunks {
                input_chunk(net, &m, &mut c2, chunk, &b[elems(chunk)])?;
            }
            // a: component 2 is zero, component 1 comes from party 1.
            let a_prev = recv_planes(net, "AdditiveMSB input a")?;
            ((zeros(), a_prev), (c2, m))
        }
    };

    Ok(Some(Operands {
        a_own,
        a_prev,
        b_own,
        b_prev,
        planes,
        words: w,
        len: n,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::{edge_values, run_protocol};
    use crate::ring::{mask, storage_for, Width};
    use crate::share::binary::reconstruct_bits;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// Additive shares of `values` in Z_2^k: two uniform, the third the difference, each
    /// with random bits above k (the protocol must read only the low k bits).
    fn deal<T: RingElem>(values: &[u64], k: u32, rng: &mut ChaCha12Rng) -> [Vec<T>; 3] {
        let mut s: [Vec<T>; 3] = Default::default();
        for &v in values {
            let (z0, z1): (u64, u64) = (rng.random(), rng.random());
            let z2 = v.wrapping_sub(z0).wrapping_sub(z1) & mask(k);
            let high = if k < 64 { rng.random::<u64>() << k } else { 0 };
            for (s, z) in s.iter_mut().zip([z0, z1, z2 | high]) {
                s.push(T::from_u64(z));
            }
        }
        s
    }

    /// The MSB of every value opens to bit k − 1 of the value mod 2^k, computed here from the
    /// plain value; messages and bytes are the module's count.
    fn check<T: RingElem>(
        values: &[u64],
        k: u32,
        seed: u64,
        chunk: usize,
    ) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let shares = deal::<T>(values, k, &mut rng);
        let runs = run_protocol(shares, move |net, prss, z: &Vec<T>| {
            crate::protocol::set_chunk_elems(chunk);
            let out = additive_msb(net, prss, z, k);
            crate::protocol::set_chunk_elems(0);
            out.unwrap()
        });
        let got = reconstruct_bits(&[
            runs[0].out.clone(),
            runs[1].out.clone(),
            runs[2].out.clone(),
        ]);
        let want: Vec<bool> = values
            .iter()
            .map(|&v| (v & mask(k)) >> (k - 1) & 1 == 1)
            .collect();
        prop_assert_eq!(got, Some(want), "k = {}", k);
        let n = values.len();
        let w = words_for(n) as u64;
        let chunks = if chunk == 0 {
            1
        } else {
            (w as usize).div_ceil(chunk.div_ceil(64)).max(1) as u64
        };
        let ands = and_gates(k);
        for (p, r) in runs.iter().enumerate() {
            let input = if p == 0 {
                n as u64 * std::mem::size_of::<T>() as u64
            } else {
                u64::from(k) * w * 8
            };
            if w == 0 {
                prop_assert_eq!((r.messages, r.bytes), (0, 0), "party {} k {}", p, k);
                continue;
            }
            // The inputs and every AND round: one message per chunk.
            prop_assert_eq!(r.messages, (1 + ands) * chunks, "party {} k {}", p, k);
            prop_assert_eq!(r.bytes, input + ands * w * 8, "party {} k {}", p, k);
        }
        Ok(())
    }

    fn dispatch(values: &[u64], k: u32, seed: u64, chunk: usize) -> Result<(), TestCaseError> {
        match storage_for(k) {
            Width::U16 => check::<u16>(values, k, seed, chunk),
            Width::U32 => check::<u32>(values, k, seed, chunk),
            Width::U64 => check::<u64>(values, k, seed, chunk),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Random values with every edge of Z_2^k (0, 1, −1, the largest positive, the
        /// smallest negative), every k from 1 to 64, batch lengths across word boundaries.
        #[test]
        fn the_msb_of_additive_shares_is_the_sign_bit(
            k in 1u32..=64,
            seed: u64,
            raw in proptest::collection::vec(any::<u64>(), 0..200),
        ) {
            let mut values = raw;
            values.extend(edge_values(k));
            dispatch(&values, k, seed, 0)?;
        }

        /// With a chunk size the inputs and the AND rounds are sent in chunks: the same bits and
        /// bytes.
        #[test]
        fn chunked_rounds_give_the_same_bits(
            seed: u64,
            chunk in prop::sample::select(vec![64usize, 100, 300, 1 << 20]),
            raw in proptest::collection::vec(any::<u64>(), 1..700),
        ) {
            dispatch(&raw, 16, seed, chunk)?;
        }
    }

    /// The comparisons of the deployed program: T − dot in [−8 832, 16 768] over Z_2^16, with
    /// the ties and both ends, and a match (negative) exactly below zero.
    #[test]
    fn compared_values_of_iris_ids_give_their_sign() {
        let values: Vec<u64> = [-8832i64, -1, 0, 1, 16768, -2, 2, 3968, -3968]
            .iter()
            .map(|&v| v as u64 & 0xFFFF)
            .collect();
        check::<u16>(&values, 16, 7, 0).unwrap();
    }

    /// An empty batch sends nothing and opens to nothing.
    #[test]
    fn an_empty_batch_is_empty() {
        check::<u16>(&[], 16, 1, 0).unwrap();
    }
}
