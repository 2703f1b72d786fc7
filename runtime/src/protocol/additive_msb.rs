//! AdditiveMSB: the most significant bit of a value the three parties hold as additive shares,
//! by two private binary inputs and one ripple-carry adder, its messages split between both
//! directions of the ring.
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
//! **Both directions of every link.** As written, every message goes from party i to party
//! i + 1, so each link carries its whole load one way and nothing back; on a link of limited
//! rate (a WAN) the comparison phase waits for those bytes. The batch is therefore cut in two
//! halves ([`halves`]): the first runs the steps above ([`Way::Next`]); the second runs their
//! mirror image ([`Way::Prev`]), every message sent to party i − 1, party i playing the role of
//! party −i mod 3 (party 0 keeps its role, 1 and 2 swap) and drawing from the other of its two
//! PRSS streams wherever the steps name one. The mirrored half ends with its shares held as
//! (own, next) components instead of (own, prev); its last AND round converts them at no cost:
//! instead of the round's AND share each party sends its component of the MSB (the carry's
//! component, which that round's zero share masks, XOR the top bits of a and b) to party i + 1,
//! which then holds (own, prev) like the first half. Same bytes and rounds as one direction,
//! two messages per round instead of one, and each way of a link carries about half: 16
//! against 31 bits per element for k = 16. The halves' word counts balance the two ways,
//! counting that last message.
//!
//! Batched and bit-sliced as [`super::bit_extract()`]: plane j holds bit j of every element,
//! 64 elements a word; with a chunk size ([`super::set_chunk_elems`]) steps 1 and 2 and each AND
//! round are sent in element chunks: party 1 inputs a chunk of a as soon as that chunk of
//! z_0 + r has arrived, and the AND chain is pipelined as there.

use std::ops::Range;

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

/// Which way a half of the batch sends its messages round the ring of parties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Party i sends to party i + 1, as the steps are written.
    Next,
    /// The mirror image: party i sends to party i − 1, in the role of party −i mod 3.
    Prev,
}

impl Way {
    /// This party's role (the party of the written steps it plays) in a half going this way.
    pub fn role(self, party: usize) -> usize {
        match self {
            Way::Next => party,
            Way::Prev => (3 - party) % 3,
        }
    }

    /// The party this half's messages go to.
    pub fn to(self, net: &dyn Transport) -> usize {
        match self {
            Way::Next => net.next(),
            Way::Prev => net.prev(),
        }
    }

    /// The party this half's messages come from.
    pub fn from(self, net: &dyn Transport) -> usize {
        match self {
            Way::Next => net.prev(),
            Way::Prev => net.next(),
        }
    }

    /// Whether the stream the steps call "shared with the next party" is this party's own
    /// stream (the one it shares with party i + 1) rather than the one it shares with party
    /// i − 1.
    pub fn next_stream_is_own(self) -> bool {
        self == Way::Next
    }

    /// The next `n` elements of the stream the steps share with the half's next party.
    fn with_next<T: RingElem>(self, prss: &mut Prss, n: usize) -> Vec<T> {
        match self {
            Way::Next => prss.with_next(n),
            Way::Prev => prss.with_prev(n),
        }
    }

    /// The next `n` elements of the stream the steps share with the half's previous party.
    fn with_prev<T: RingElem>(self, prss: &mut Prss, n: usize) -> Vec<T> {
        match self {
            Way::Next => prss.with_prev(n),
            Way::Prev => prss.with_next(n),
        }
    }
}

/// The halves of a batch of `words` words (64 elements each) in Z_2^k: word ranges and their
/// ways, in the order every party runs them. One half ([`Way::Next`]) when there is no AND
/// round to convert the mirrored half's shares in (k = 1) or fewer than two words. Otherwise
/// the first half's words h balance the bits each way of a link carries: the first half sends
/// 2k − 1 bits per element one way, the second 2k − 2 the other way and 1 (its last message)
/// the first way, so h (2k − 1) + (words − h) = (words − h)(2k − 2).
pub fn halves(words: usize, k: u32) -> Vec<(Way, Range<usize>)> {
    if k < 2 || words < 2 {
        return vec![(Way::Next, 0..words)];
    }
    let k = k as usize;
    let h = (words * (2 * k - 3) / (4 * k - 4)).clamp(1, words - 1);
    vec![(Way::Next, 0..h), (Way::Prev, h..words)]
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
    let Some(halves) = inputs(net, prss, z, k)? else {
        return Ok(BitShares::zeros(0));
    };
    let top = k as usize - 1;
    if top == 0 {
        // One half ([`halves`] does not split without an AND round).
        let ops = &halves[0];
        let w = ops.words;
        return Ok(ops.top_bits(&vec![0; w], &vec![0; w]));
    }
    let total: usize = halves.iter().map(|h| h.words).sum();
    let mut chains: Vec<Chain> = Vec::with_capacity(halves.len());
    let mut start = 0;
    for ops in &halves {
        let w = ops.words;
        chains.push(Chain {
            start,
            co: vec![0; w],
            cp: vec![0; w],
            msb_own: vec![0; w],
            msb_prev: vec![0; w],
            chunks: super::chunk_ranges(w),
        });
        start += w;
    }
    // Step 3: carries c_1..c_top, c_1 = a_0 b_0 and c_(i+1) = (a_i ⊕ c_i)(b_i ⊕ c_i) ⊕ c_i,
    // round i of every half in half order, each half's chunks in order. The zero bits of round
    // i are drawn as the round starts, one word per batch word (the first half's words first):
    // the streams give the same bits as one draw of every round's, and no more than one
    // round's are held.
    let mut alpha = prss.zero_bits(total);
    for (ops, chain) in halves.iter().zip(chains.iter_mut()) {
        for c in 0..chain.chunks.len() {
            chain.send_round(net, ops, &alpha, 0, c, top)?;
        }
    }
    for i in 0..top {
        if i + 1 < top {
            alpha = prss.zero_bits(total);
        }
        for (ops, chain) in halves.iter().zip(chains.iter_mut()) {
            for c in 0..chain.chunks.len() {
                chain.recv_round(net, ops, i, c, top)?;
                if i + 1 < top {
                    chain.send_round(net, ops, &alpha, i + 1, c, top)?;
                }
            }
        }
    }
    let (mut own, mut prev) = (Vec::with_capacity(total), Vec::with_capacity(total));
    for (ops, chain) in halves.iter().zip(chains) {
        let bits = match ops.way {
            Way::Next => ops.top_bits(&chain.co, &chain.cp),
            Way::Prev => BitShares::from_words(chain.msb_own, chain.msb_prev, ops.len),
        };
        own.extend_from_slice(&bits.own);
        prev.extend_from_slice(&bits.prev);
    }
    Ok(BitShares::from_words(own, prev, z.len()))
}

/// One half's carry chain (step 3): its first word in the batch, the carry's (own, prev)
/// components in the half's orientation, and for a mirrored half the MSB's components after
/// the conversion round.
struct Chain {
    start: usize,
    co: Vec<u64>,
    cp: Vec<u64>,
    msb_own: Vec<u64>,
    msb_prev: Vec<u64>,
    chunks: Vec<(usize, usize)>,
}

impl Chain {
    /// Round i's AND on chunk `c` with the round's zero bits `alpha` (the batch's), folded
    /// into the carry's own component and sent to the half's next party; the last round of a
    /// mirrored half sends this party's component of the MSB to party i + 1 instead (the
    /// conversion to (own, prev)).
    fn send_round(
        &mut self,
        net: &mut dyn Transport,
        ops: &Operands,
        alpha: &[u64],
        i: usize,
        c: usize,
        top: usize,
    ) -> Result<(), NetError> {
        let (a, b) = self.chunks[c];
        let w = ops.words;
        let tail = tail_mask(ops.len);
        let (ao, ap) = (ops.a_own.plane(i, w), ops.a_prev.plane(i, w));
        let (bo, bp) = (ops.b_own.plane(i, w), ops.b_prev.plane(i, w));
        let al = &alpha[self.start..self.start + w];
        let mut zs = Vec::with_capacity(b - a);
        for j in a..b {
            // x = a_i ⊕ c_i, y = b_i ⊕ c_i; Algorithm 2's AND of replicated bits:
            // z = x_own (y_own ⊕ y_prev) ⊕ x_prev y_own ⊕ α.
            let (xo, xp) = (ao[j] ^ self.co[j], ap[j] ^ self.cp[j]);
            let (yo, yp) = (bo[j] ^ self.co[j], bp[j] ^ self.cp[j]);
            let mut zj = (xo & (yo ^ yp)) ^ (xp & yo) ^ al[j];
            if j + 1 == w {
                zj &= tail;
            }
            // The new carry's own component: the AND's, plus c_i (the ⊕ c_i of the carry).
            self.co[j] ^= zj;
            zs.push(zj);
        }
        if ops.converts_in(i, top) {
            let (at, bt) = (ops.a_own.plane(top, w), ops.b_own.plane(top, w));
            for (n, j) in (a..b).enumerate() {
                let msb = at[j] ^ bt[j] ^ self.co[j];
                self.msb_own[j] = msb;
                zs[n] = msb;
            }
            let to = net.next();
            return send_elems(net, to, &zs);
        }
        let to = ops.way.to(net);
        send_elems(net, to, &zs)
    }

    /// Round i's AND shares of chunk `c` from the half's previous party, folded into the
    /// carry's prev component (the conversion's MSB component from party i − 1 in the last
    /// round of a mirrored half).
    fn recv_round(
        &mut self,
        net: &mut dyn Transport,
        ops: &Operands,
        i: usize,
        c: usize,
        top: usize,
    ) -> Result<(), NetError> {
        let (a, b) = self.chunks[c];
        let last_mirrored = ops.converts_in(i, top);
        let (from, what) = if last_mirrored {
            (net.prev(), "AdditiveMSB mirrored half's MSB shares")
        } else {
            (ops.way.from(net), "AdditiveMSB AND shares")
        };
        let mut got: Vec<u64> = recv_elems(net, from, b - a, what)?;
        if b == ops.words {
            // A peer's stray bits beyond the batch must not reach later gates.
            got[b - a - 1] &= tail_mask(ops.len);
        }
        let into = if last_mirrored {
            &mut self.msb_prev[a..b]
        } else {
            &mut self.cp[a..b]
        };
        // Carry c_(i+1)'s prev component for this chunk is complete.
        for (c, g) in into.iter_mut().zip(&got) {
            *c ^= g;
        }
        Ok(())
    }
}

/// One share component of an operand, bit-sliced: plane j is `words[j·stride ..][..w]`. A
/// component a role holds as zero (one of a's and one of b's, per role) is a single plane of
/// zeros read for every j (stride 0) instead of k planes: that saves the memory, and the page
/// mappings the AND rounds would take reading it, of up to two operands' components per party.
pub(crate) struct Planes {
    words: Vec<u64>,
    stride: usize,
}

impl Planes {
    /// `words`, planes of `w` words one after another.
    fn of(words: Vec<u64>, w: usize) -> Planes {
        Planes { words, stride: w }
    }

    /// Zero in every plane of `w` words.
    fn zero(w: usize) -> Planes {
        Planes {
            words: vec![0; w],
            stride: 0,
        }
    }

    /// Plane `j` (`w` words).
    fn plane(&self, j: usize, w: usize) -> &[u64] {
        &self.words[j * self.stride..j * self.stride + w]
    }
}

/// The two operands of AdditiveMSB's adder for one half of the batch, as replicated binary
/// shares in the half's orientation ("prev" is the component of the half's previous party),
/// bit-sliced: steps 1 and 2 of [`additive_msb`], the tails beyond `len` clear.
pub(crate) struct Operands {
    pub way: Way,
    /// Components of a = z_0 + z_1 + r (the value of the party in role 1).
    pub a_own: Planes,
    pub a_prev: Planes,
    /// Components of b = z_2 − r (the value of the party in role 2).
    pub b_own: Planes,
    pub b_prev: Planes,
    /// Words per plane.
    pub words: usize,
    /// Planes (k).
    pub planes: usize,
    /// Elements.
    pub len: usize,
}

impl Operands {
    /// Whether AND round i of `top` is this half's conversion round: the last one of a
    /// mirrored half.
    fn converts_in(&self, i: usize, top: usize) -> bool {
        self.way == Way::Prev && i + 1 == top
    }

    /// Bit k − 1 of a + b, given the (own, prev) components of the carry into it: the top
    /// planes of a and b and the carry, XORed.
    fn top_bits(&self, carry_own: &[u64], carry_prev: &[u64]) -> BitShares {
        let (w, t) = (self.words, self.planes - 1);
        let xor3 = |x: &[u64], y: &[u64], c: &[u64]| -> Vec<u64> {
            x.iter()
                .zip(y)
                .zip(c)
                .map(|((x, y), c)| x ^ y ^ c)
                .collect()
        };
        BitShares::from_words(
            xor3(self.a_own.plane(t, w), self.b_own.plane(t, w), carry_own),
            xor3(self.a_prev.plane(t, w), self.b_prev.plane(t, w), carry_prev),
            self.len,
        )
    }
}

/// What one half draws from the PRSS before any message, per role: the streams of steps 1
/// and 2 (every half's draws come before the next half's, so each stream is drawn in the same
/// order by the two parties that share it).
enum Draws<T> {
    /// Role 0: r (with the half's previous party) and a's component 0 (with the next).
    Zero { r: Vec<T>, a0: Vec<u64> },
    /// Role 1: a's input stream (with the previous party) and b's component 1 (with the next).
    One { m: Vec<u64>, b1: Vec<u64> },
    /// Role 2: r (with the next party) and b's input stream (with the previous).
    Two { r: Vec<T>, m: Vec<u64> },
}

/// One half's geometry: its way, its elements of the batch, its words and planes.
struct Half {
    way: Way,
    elems: Range<usize>,
    words: usize,
    planes: usize,
}

impl Half {
    fn len(&self) -> usize {
        self.elems.len()
    }

    /// Clears the bits beyond the half's elements in the last word of every plane.
    fn clear_tails(&self, v: &mut [u64]) {
        let (w, tail) = (self.words, tail_mask(self.len()));
        for plane in v.chunks_exact_mut(w) {
            plane[w - 1] &= tail;
        }
    }

    /// Elements (of the half) of the chunk of words `[a, b)`.
    fn chunk_elems(&self, (a, b): (usize, usize)) -> Range<usize> {
        64 * a..(64 * b).min(self.len())
    }

    /// Words `[a, b)` of every plane of `v`, as one message to the half's next party.
    fn send_planes(
        &self,
        net: &mut dyn Transport,
        v: &[u64],
        (a, b): (usize, usize),
    ) -> Result<(), NetError> {
        let w = self.words;
        let mut msg = Vec::with_capacity(self.planes * (b - a));
        for j in 0..self.planes {
            msg.extend_from_slice(&v[j * w + a..j * w + b]);
        }
        let to = self.way.to(net);
        send_elems(net, to, &msg)
    }

    /// Every plane from the half's previous party, chunk by chunk.
    fn recv_planes(&self, net: &mut dyn Transport, what: &str) -> Result<Vec<u64>, NetError> {
        let w = self.words;
        let mut v = vec![0u64; self.planes * w];
        for (a, b) in super::chunk_ranges(w) {
            let from = self.way.from(net);
            let got: Vec<u64> = recv_elems(net, from, self.planes * (b - a), what)?;
            for (j, part) in got.chunks_exact(b - a).enumerate() {
                v[j * w + a..j * w + b].copy_from_slice(part);
            }
        }
        self.clear_tails(&mut v);
        Ok(v)
    }

    /// A value this party alone knows, input as binary shares for the chunk of words
    /// `[a, b)`: the component the half's next party must hold is the value ⊕ the stream `m`
    /// shared with the previous party (which holds that stream as its own component), put in
    /// `c` and sent; the third component is zero.
    fn input_chunk<T: RingElem>(
        &self,
        net: &mut dyn Transport,
        m: &[u64],
        c: &mut [u64],
        (a, b): (usize, usize),
        values: &[T],
    ) -> Result<(), NetError> {
        let w = self.words;
        let tail = tail_mask(self.len());
        let part = bit_planes_flat(values, self.planes);
        for (j, plane) in part.chunks_exact(b - a).enumerate() {
            let at = j * w + a..j * w + b;
            for ((c, &p), &m) in c[at.clone()].iter_mut().zip(plane).zip(&m[at]) {
                *c = p ^ m;
            }
            if b == w {
                c[j * w + w - 1] &= tail;
            }
        }
        self.send_planes(net, c, (a, b))
    }

    /// The half's PRSS draws for this party's role.
    fn draws<T: RingElem>(&self, prss: &mut Prss, role: usize) -> Draws<T> {
        let pw = self.planes * self.words;
        let bits = |v: Vec<u64>| {
            let mut v = v;
            self.clear_tails(&mut v);
            v
        };
        match role {
            0 => {
                let r = self.way.with_prev(prss, self.len());
                let a0 = bits(self.way.with_next(prss, pw));
                Draws::Zero { r, a0 }
            }
            1 => {
                let m = bits(self.way.with_prev(prss, pw));
                let b1 = bits(self.way.with_next(prss, pw));
                Draws::One { m, b1 }
            }
            _ => {
                let r = self.way.with_next(prss, self.len());
                let m = bits(self.way.with_prev(prss, pw));
                Draws::Two { r, m }
            }
        }
    }
}

/// Steps 1 and 2 of [`additive_msb`] for every half (in message chunks where the thread has a
/// chunk size): the operands a and b as binary shares, or `None` for an empty batch (nothing
/// sent). Messages that wait for nothing go first (role 0's z_0 + r, role 2's input of b),
/// then role 1's input of a as the masked share arrives, then the receipts, so that the two
/// halves' steps overlap instead of following one another. The device's AdditiveMSB
/// ([`crate::gpu::additive_msb`]) runs the same steps in kernels. Panics unless
/// `1 <= k <= T::BITS`.
pub(crate) fn inputs<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    z: &[T],
    k: u32,
) -> Result<Option<Vec<Operands>>, NetError> {
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
    let party = net.party();
    let halves: Vec<Half> = halves(w, k)
        .into_iter()
        .map(|(way, words)| Half {
            way,
            elems: 64 * words.start..(64 * words.end).min(n),
            words: words.len(),
            planes: k as usize,
        })
        .collect();
    let mut draws: Vec<Draws<T>> = halves
        .iter()
        .map(|h| h.draws(prss, h.way.role(party)))
        .collect();
    let zeros = |h: &Half| vec![0u64; h.planes * h.words];

    // Sends that wait for nothing: role 0's z_0 + r, role 2's input of b = z_2 − r.
    let mut sent: Vec<Option<Vec<u64>>> = Vec::with_capacity(halves.len());
    for (h, d) in halves.iter().zip(draws.iter_mut()) {
        let z = &z[h.elems.clone()];
        let chunks = super::chunk_ranges(h.words);
        sent.push(match d {
            Draws::Zero { r, .. } => {
                // z_0 + r in r's place (r is not needed again).
                let mut u = std::mem::take(r);
                for (u, &x) in u.iter_mut().zip(z) {
                    *u = x.wrapping_add(*u);
                }
                mask_slice(&mut u, k);
                for &c in &chunks {
                    let to = h.way.to(net);
                    send_elems(net, to, &u[h.chunk_elems(c)])?;
                }
                None
            }
            Draws::Two { r, m } => {
                // z_2 − r in r's place.
                let mut b = std::mem::take(r);
                for (b, &x) in b.iter_mut().zip(z) {
                    *b = x.wrapping_sub(*b);
                }
                let mut c2 = zeros(h);
                for &c in &chunks {
                    h.input_chunk(net, m, &mut c2, c, &b[h.chunk_elems(c)])?;
                }
                Some(c2)
            }
            Draws::One { .. } => None,
        });
    }
    // Role 1: a = z_1 + (z_0 + r), input chunk by chunk as the masked share arrives.
    for ((h, d), sent) in halves.iter().zip(&draws).zip(sent.iter_mut()) {
        if let Draws::One { m, .. } = d {
            let z = &z[h.elems.clone()];
            let mut c1 = zeros(h);
            for c in super::chunk_ranges(h.words) {
                let at = h.chunk_elems(c);
                let from = h.way.from(net);
                // a = z_1 + (z_0 + r) in the received vector's place.
                let mut a: Vec<T> = recv_elems(net, from, at.len(), "AdditiveMSB masked share")?;
                for (a, &x) in a.iter_mut().zip(&z[at]) {
                    *a = x.wrapping_add(*a);
                }
                h.input_chunk(net, m, &mut c1, c, &a)?;
            }
            *sent = Some(c1);
        }
    }
    // The receipts, and each operand as (own, prev) components of the half's orientation.
    let mut out = Vec::with_capacity(halves.len());
    for ((h, d), sent) in halves.iter().zip(draws).zip(sent) {
        let (w, of) = (h.words, |v: Vec<u64>| Planes::of(v, h.words));
        let ((a_own, a_prev), (b_own, b_prev)) = match d {
            // a: component 0 is the stream shared with role 1, component 2 is zero; b:
            // component 0 is zero, component 2 comes from role 2.
            Draws::Zero { a0, .. } => {
                let b_prev = h.recv_planes(net, "AdditiveMSB input b")?;
                ((of(a0), Planes::zero(w)), (Planes::zero(w), of(b_prev)))
            }
            // a: component 1 was sent to role 2, component 0 is the stream with role 0; b:
            // component 1 is the stream shared with role 2, component 0 is zero.
            Draws::One { m, b1 } => (
                (of(sent.unwrap_or_default()), of(m)),
                (of(b1), Planes::zero(w)),
            ),
            // a: component 2 is zero, component 1 comes from role 1; b: component 2 was sent
            // to role 0, component 1 is the stream with role 1.
            Draws::Two { m, .. } => {
                let a_prev = h.recv_planes(net, "AdditiveMSB input a")?;
                (
                    (Planes::zero(w), of(a_prev)),
                    (of(sent.unwrap_or_default()), of(m)),
                )
            }
        };
        out.push(Operands {
            way: h.way,
            a_own,
            a_prev,
            b_own,
            b_prev,
            words: h.words,
            planes: h.planes,
            len: h.len(),
        });
    }
    Ok(Some(out))
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
        // Every half sends its inputs and AND rounds in its own chunks.
        let chunks: u64 = halves(w as usize, k)
            .iter()
            .map(|(_, words)| {
                if chunk == 0 {
                    1
                } else {
                    words.len().div_ceil(chunk.div_ceil(64)).max(1) as u64
                }
            })
            .sum();
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

    /// A transport that counts the bytes sent to each peer.
    struct PerPeer<'a> {
        inner: &'a mut dyn Transport,
        bytes_to: [u64; 3],
    }

    impl Transport for PerPeer<'_> {
        fn party(&self) -> usize {
            self.inner.party()
        }
        fn parties(&self) -> usize {
            self.inner.parties()
        }
        fn send(&mut self, to: usize, message: Vec<u8>) -> Result<(), NetError> {
            self.bytes_to[to] += message.len() as u64;
            self.inner.send(to, message)
        }
        fn recv(&mut self, from: usize) -> Result<Vec<u8>, NetError> {
            self.inner.recv(from)
        }
        fn bytes_sent(&self) -> u64 {
            self.inner.bytes_sent()
        }
        fn messages_sent(&self) -> u64 {
            self.inner.messages_sent()
        }
    }

    /// Each way of every link carries its half's bytes: the first half's inputs and AND rounds
    /// to the next party, the mirrored half's to the previous one but for its last round (the
    /// conversion, to the next party); for k = 16 neither way carries more than 52 % of a
    /// party's bytes (the one-way protocol put all of them on one way). The opened bits are
    /// the sign bits.
    #[test]
    fn each_way_of_a_link_carries_about_half() {
        for (n, k) in [
            (64 * 100, 16u32),
            (64 * 7 + 5, 16),
            (64 * 3, 2),
            (200, 32),
            (64, 16),
        ] {
            let mut rng = ChaCha12Rng::seed_from_u64(n as u64 + u64::from(k));
            let values: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & mask(k)).collect();
            let shares = deal::<u32>(&values, k, &mut rng);
            let runs = run_protocol(shares, move |net, prss, z: &Vec<u32>| {
                let (next, prev) = (net.next(), net.prev());
                let mut counted = PerPeer {
                    inner: net,
                    bytes_to: [0; 3],
                };
                let bits = additive_msb(&mut counted, prss, z, k).unwrap();
                (bits, counted.bytes_to[next], counted.bytes_to[prev])
            });
            let got = reconstruct_bits(&[
                runs[0].out.0.clone(),
                runs[1].out.0.clone(),
                runs[2].out.0.clone(),
            ]);
            let want: Vec<bool> = values.iter().map(|&v| v >> (k - 1) & 1 == 1).collect();
            assert_eq!(got, Some(want), "n {n} k {k}");
            let w = words_for(n);
            for (p, r) in runs.iter().enumerate() {
                let (mut to_next, mut to_prev) = (0u64, 0u64);
                for (way, words) in halves(w, k) {
                    let wh = words.len() as u64;
                    let elems = ((64 * words.end).min(n) - 64 * words.start) as u64;
                    let input = if way.role(p) == 0 {
                        4 * elems
                    } else {
                        u64::from(k) * wh * 8
                    };
                    let ands = and_gates(k) * wh * 8;
                    match way {
                        Way::Next => to_next += input + ands,
                        Way::Prev => {
                            to_prev += input + ands - wh * 8;
                            to_next += wh * 8;
                        }
                    }
                }
                assert_eq!(
                    (r.out.1, r.out.2),
                    (to_next, to_prev),
                    "party {p} n {n} k {k}"
                );
                if k == 16 && w >= 100 {
                    let most = r.out.1.max(r.out.2) as f64 / (r.out.1 + r.out.2) as f64;
                    assert!(most <= 0.52, "party {p}: {most} of its bytes one way");
                }
            }
            if w < 2 {
                assert_eq!(halves(w, k), vec![(Way::Next, 0..w)]);
            }
        }
    }

    /// The halves cover the batch's words in order, both non-empty from two words on.
    #[test]
    fn halves_cover_the_words() {
        for k in 1..=64u32 {
            for w in 0..300usize {
                let h = halves(w, k);
                let covered: Vec<usize> = h.iter().flat_map(|(_, r)| r.clone()).collect();
                assert_eq!(covered, (0..w).collect::<Vec<_>>(), "w {w} k {k}");
                if w >= 2 && k >= 2 {
                    assert_eq!(h.len(), 2);
                    assert!(h.iter().all(|(_, r)| !r.is_empty()), "w {w} k {k}");
                    assert_eq!((h[0].0, h[1].0), (Way::Next, Way::Prev));
                }
            }
        }
    }

    /// An empty batch sends nothing and opens to nothing.
    #[test]
    fn an_empty_batch_is_empty() {
        check::<u16>(&[], 16, 1, 0).unwrap();
    }
}
