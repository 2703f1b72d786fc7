//! OR accumulation of comparison bits (Section 4.2, "Accumulating the Resulting Bits"):
//! x ∨ y = x ⊕ y ⊕ (x ∧ y), evaluated as a balanced binary tree so that a group of g bits costs
//! ceil(log2 g) rounds instead of g − 1; every level of every group shares one batched AND.
//! Where the thread sends in message chunks ([`super::set_chunk_elems`]) the levels are cut
//! into chunks of whole groups that pipeline, each chunk's next level leaving as soon as its
//! level is back (the same gates and randomness, bit for bit).

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::share::binary::copy_bits;
use crate::share::BitShares;

use super::{recv_elems, send_elems};

/// ORs each run of `group` consecutive elements of `bits` into one bit: output element g is the
/// OR of elements `g·group .. min((g+1)·group, len)` (the last group may be shorter).
/// `group == bits.len` gives a single bit. Panics if `group == 0`.
pub fn or_groups(
    net: &mut dyn Transport,
    prss: &mut Prss,
    bits: &BitShares,
    group: usize,
) -> Result<BitShares, NetError> {
    assert!(group > 0, "OR over groups of zero elements");
    if group >= bits.len {
        return or_one_group(net, prss, bits);
    }
    let groups = bits.len.div_ceil(group);
    if let Some(per_chunk) = chunk_groups(group).filter(|&g| group > 1 && g < groups) {
        return or_groups_pipelined(net, prss, bits, group, per_chunk);
    }
    // Current sizes of the groups, laid out one after another in `cur`.
    let mut sizes: Vec<usize> = (0..bits.len.div_ceil(group))
        .map(|g| group.min(bits.len - g * group))
        .collect();
    let mut cur = bits.clone();
    while sizes.iter().any(|&s| s > 1) {
        // Each group of size s halves to h = ceil(s/2): element j < s − h pairs with j + h,
        // and the middle element of an odd group passes through. The AND takes the pairs
        // group by group (the gate order, and so the PRSS draws, of the device's OR tree).
        let short = sizes.iter().all(|&s| s <= 64);
        let (l, r) = if short {
            short_pairs(&cur, &sizes)
        } else {
            pairs(&cur, &sizes)
        };
        let both = super::and(net, prss, &l, &r)?;
        let or = l.xor(&r).xor(&both);
        cur = if short {
            short_next(&cur, &or, &mut sizes)
        } else {
            next(&cur, &or, &mut sizes)
        };
    }
    Ok(cur)
}

/// Groups per message chunk when the thread sends in chunks ([`super::set_chunk_elems`]), `None`
/// when it sends one message per round: the chunk size in groups, rounded down to a multiple of
/// 64 (at least 64). Then every level's operands of a chunk of whole groups (s − h pairs of
/// each of its 64·m groups) begin on a word boundary of the level's operands for the whole
/// vector, so the chunked tree sends the same bits and draws the same randomness as the tree
/// in one message per level.
fn chunk_groups(group: usize) -> Option<usize> {
    match super::chunk_elems() {
        0 => None,
        e => Some((e / group / 64).max(1) * 64),
    }
}

/// [`or_groups`] in chunks of `per_chunk` groups whose levels pipeline like the rounds of
/// [`super::additive_msb()`]: level l + 1 of a chunk is sent as soon as that chunk's level l
/// is back from the previous party, while the later chunks' level l messages are still in
/// flight, instead of every level waiting for the whole vector's. Each level's zero bits are
/// drawn as the level starts, one draw for the whole vector, and each chunk's gates are that
/// draw's words at the chunk's place in the level's operands: the same gates, messages (cut
/// into chunks) and shares as [`or_groups`] in one message per level, bit for bit.
fn or_groups_pipelined(
    net: &mut dyn Transport,
    prss: &mut Prss,
    bits: &BitShares,
    group: usize,
    per_chunk: usize,
) -> Result<BitShares, NetError> {
    use crate::share::binary::words_for;
    let groups = bits.len.div_ceil(group);
    /// One chunk's tree: its current level and group sizes, and the level's AND operands and
    /// own AND share while the peer's share is in flight.
    struct Chunk {
        cur: BitShares,
        sizes: Vec<usize>,
        operands: Option<(BitShares, BitShares)>,
        z: Vec<u64>,
    }
    let mut chunks: Vec<Chunk> = (0..groups)
        .step_by(per_chunk)
        .map(|g0| {
            let g1 = (g0 + per_chunk).min(groups);
            let start = g0 * group;
            let len = (g1 * group).min(bits.len) - start;
            Chunk {
                cur: bits.slice(start, len),
                sizes: (g0..g1).map(|g| group.min(bits.len - g * group)).collect(),
                operands: None,
                z: Vec::new(),
            }
        })
        .collect();
    // The level's AND for one chunk: operands, own share (from the level's zero bits at the
    // chunk's word offset), sent to the next party. A chunk without pairs at this level (only
    // short groups left) sends nothing, at every party alike.
    let send_level = |net: &mut dyn Transport, c: &mut Chunk, alpha: &[u64]| {
        let (l, r) = if c.sizes.iter().all(|&s| s <= 64) {
            short_pairs(&c.cur, &c.sizes)
        } else {
            pairs(&c.cur, &c.sizes)
        };
        let mut z = Vec::with_capacity(l.words());
        super::and::push_local_share(&mut z, &l, &r, alpha);
        if !z.is_empty() {
            let to = net.next();
            send_elems(net, to, &z)?;
        }
        c.z = z;
        c.operands = Some((l, r));
        Ok::<(), NetError>(())
    };
    // Words of each chunk's operands at the first level.
    let mut words: Vec<usize> = chunks
        .iter()
        .map(|c| words_for(c.sizes.iter().map(|&s| s - s.div_ceil(2)).sum()))
        .collect();
    let mut alpha = prss.zero_bits(words.iter().sum());
    let mut at = 0;
    for (c, &w) in chunks.iter_mut().zip(&words) {
        send_level(net, c, &alpha[at..at + w])?;
        at += w;
    }
    loop {
        // After this level every chunk halves its groups; the next level's draw comes first,
        // as the unchunked tree draws it when that level starts.
        let next_words: Vec<usize> = chunks
            .iter()
            .map(|c| {
                let halved: Vec<usize> = c.sizes.iter().map(|&s| s.div_ceil(2)).collect();
                words_for(halved.iter().map(|&s| s - s.div_ceil(2)).sum())
            })
            .collect();
        let more = chunks
            .iter()
            .any(|c| c.sizes.iter().any(|&s| s.div_ceil(2) > 1));
        if more {
            alpha = prss.zero_bits(next_words.iter().sum());
        }
        let mut at = 0;
        for (c, (&w, &nw)) in chunks.iter_mut().zip(words.iter().zip(&next_words)) {
            let (l, r) = c.operands.take().expect("every chunk sent this level");
            if w > 0 {
                let from = net.prev();
                let got: Vec<u64> = recv_elems(net, from, w, "OR tree AND shares")?;
                let both = BitShares::from_words(std::mem::take(&mut c.z), got, l.len);
                let or = l.xor(&r).xor(&both);
                c.cur = if c.sizes.iter().all(|&s| s <= 64) {
                    short_next(&c.cur, &or, &mut c.sizes)
                } else {
                    next(&c.cur, &or, &mut c.sizes)
                };
            } else {
                // No pairs: every group is a single bit already.
                debug_assert!(c.sizes.iter().all(|&s| s <= 1));
            }
            if more {
                send_level(net, c, &alpha[at..at + nw])?;
                at += nw;
            }
        }
        if !more {
            break;
        }
        words = next_words;
    }
    let len: usize = chunks.iter().map(|c| c.cur.len).sum();
    let mut out = BitShares::zeros(len);
    let mut at = 0;
    for c in &chunks {
        for (dst, src) in [(&mut out.own, &c.cur.own), (&mut out.prev, &c.cur.prev)] {
            copy_bits(dst, at, src, 0, c.cur.len);
        }
        at += c.cur.len;
    }
    Ok(out)
}

/// A level's AND operands: each group's first s − h elements (l) and the s − h from its h-th
/// on (r), group after group, each group's runs copied as bit ranges.
fn pairs(cur: &BitShares, sizes: &[usize]) -> (BitShares, BitShares) {
    let pairs: usize = sizes.iter().map(|&s| s - s.div_ceil(2)).sum();
    let (mut l, mut r) = (BitShares::zeros(pairs), BitShares::zeros(pairs));
    let (mut at, mut start) = (0, 0);
    for &s in sizes {
        let (h, n) = (s.div_ceil(2), s - s.div_ceil(2));
        for (dst, src) in [(&mut l.own, &cur.own), (&mut l.prev, &cur.prev)] {
            copy_bits(dst, at, src, start, n);
        }
        for (dst, src) in [(&mut r.own, &cur.own), (&mut r.prev, &cur.prev)] {
            copy_bits(dst, at, src, start + h, n);
        }
        at += n;
        start += s;
    }
    (l, r)
}

/// The next level from the pairs' ORs `or`: each group again in order, its paired results,
/// then its passed element; `sizes` become the halved ones.
fn next(cur: &BitShares, or: &BitShares, sizes: &mut [usize]) -> BitShares {
    let mut next = BitShares::zeros(sizes.iter().map(|&s| s.div_ceil(2)).sum());
    let (mut at_next, mut at_or, mut start) = (0, 0, 0);
    for s in sizes.iter_mut() {
        let (h, n) = (s.div_ceil(2), *s - s.div_ceil(2));
        for (dst, src, from_cur) in [
            (&mut next.own, &or.own, &cur.own),
            (&mut next.prev, &or.prev, &cur.prev),
        ] {
            copy_bits(dst, at_next, src, at_or, n);
            if *s % 2 == 1 {
                copy_bits(dst, at_next + n, from_cur, start + h - 1, 1);
            }
        }
        at_next += h;
        at_or += n;
        start += *s;
        *s = h;
    }
    next
}

/// Appends bit runs to a bit-sliced vector, a word at a time.
struct BitWriter {
    words: Vec<u64>,
    /// The word being filled and its bits so far.
    acc: u64,
    used: u32,
}

impl BitWriter {
    fn with_bits(len: usize) -> BitWriter {
        BitWriter {
            words: Vec::with_capacity(crate::share::binary::words_for(len)),
            acc: 0,
            used: 0,
        }
    }

    /// Appends the low `n` bits of `v` (`n <= 64`, the bits above them clear).
    #[inline(always)]
    fn push(&mut self, v: u64, n: u32) {
        if n == 0 {
            return;
        }
        self.acc |= v << self.used;
        let total = self.used + n;
        if total >= 64 {
            self.words.push(self.acc);
            // The bits of v that did not fit (none when the word was empty).
            self.acc = if self.used == 0 {
                0
            } else {
                v >> (64 - self.used)
            };
            self.used = total - 64;
        } else {
            self.used = total;
        }
    }

    fn finish(mut self, len: usize) -> Vec<u64> {
        if self.used > 0 {
            self.words.push(self.acc);
        }
        self.words.resize(crate::share::binary::words_for(len), 0);
        self.words
    }
}

/// The low `n` bits (none for 0).
fn low(n: usize) -> u64 {
    if n == 0 {
        0
    } else {
        crate::share::binary::tail_mask(n)
    }
}

/// [`pairs`] when no group is longer than a word (the 31 rotations of a query, the usual
/// case): each group's bits read once per component as one word and split by shifts, the
/// operands appended word by word, where [`pairs`] copies four bit ranges per group into
/// zeroed vectors. The same operands, bit for bit.
fn short_pairs(cur: &BitShares, sizes: &[usize]) -> (BitShares, BitShares) {
    use crate::share::binary::bits_at;
    let pairs: usize = sizes.iter().map(|&s| s - s.div_ceil(2)).sum();
    let mut sides = [(); 4].map(|_| BitWriter::with_bits(pairs));
    let mut start = 0;
    for &s in sizes {
        let (h, n) = (s.div_ceil(2), s - s.div_ceil(2));
        for (k, comp) in [&cur.own, &cur.prev].into_iter().enumerate() {
            let v = bits_at(comp, start, s);
            sides[k].push(v & low(n), n as u32);
            sides[2 + k].push((v >> h) & low(n), n as u32);
        }
        start += s;
    }
    let [lo, lp, ro, rp] = sides.map(|w| w.finish(pairs));
    (
        BitShares::from_words(lo, lp, pairs),
        BitShares::from_words(ro, rp, pairs),
    )
}

/// [`next`] for the levels of [`short_pairs`], appended word by word. The same level, bit for
/// bit.
fn short_next(cur: &BitShares, or: &BitShares, sizes: &mut [usize]) -> BitShares {
    use crate::share::binary::bits_at;
    let len: usize = sizes.iter().map(|&s| s.div_ceil(2)).sum();
    let mut next = [(); 2].map(|_| BitWriter::with_bits(len));
    let (mut at_or, mut start) = (0, 0);
    for s in sizes.iter_mut() {
        let (h, n) = (s.div_ceil(2), *s - s.div_ceil(2));
        for (k, (ors, comp)) in [(&or.own, &cur.own), (&or.prev, &cur.prev)]
            .into_iter()
            .enumerate()
        {
            next[k].push(bits_at(ors, at_or, n), n as u32);
            if *s % 2 == 1 {
                // The middle element of an odd group passes through.
                next[k].push(bits_at(comp, start + h - 1, 1), 1);
            }
        }
        at_or += n;
        start += *s;
        *s = h;
    }
    let [own, prev] = next.map(|w| w.finish(len));
    BitShares::from_words(own, prev, len)
}

/// [`or_groups`] with a single group, on whole words: the same tree (element j < s − h pairs
/// with j + h, h = ceil(s/2), the middle element of an odd level passes through) and so the
/// same AND gates, rounds and PRSS draws, but each level is two word-shifted slices instead of
/// per-element gathers.
fn or_one_group(
    net: &mut dyn Transport,
    prss: &mut Prss,
    bits: &BitShares,
) -> Result<BitShares, NetError> {
    let mut cur = bits.clone();
    while cur.len > 1 {
        let s = cur.len;
        let h = s.div_ceil(2);
        let l = cur.slice(0, s - h);
        let r = cur.slice(h, s - h);
        let both = super::and(net, prss, &l, &r)?;
        // Keep elements 0..h: the first s − h become l ∨ r = l ⊕ (r ⊕ l∧r), element h − 1 of
        // an odd level stays as it is.
        let w = crate::share::binary::words_for(h);
        cur.own.truncate(w);
        cur.prev.truncate(w);
        cur.len = h;
        crate::share::binary::clear_tail(&mut cur.own, h);
        crate::share::binary::clear_tail(&mut cur.prev, h);
        for (j, (ro, bo)) in r.own.iter().zip(&both.own).enumerate() {
            cur.own[j] ^= ro ^ bo;
        }
        for (j, (rp, bp)) in r.prev.iter().zip(&both.prev).enumerate() {
            cur.prev[j] ^= rp ^ bp;
        }
    }
    Ok(cur)
}

/// OR of all bits into one bit (false for an empty vector).
pub fn or_all(
    net: &mut dyn Transport,
    prss: &mut Prss,
    bits: &BitShares,
) -> Result<BitShares, NetError> {
    if bits.len == 0 {
        // The OR of nothing is false; all parties agree without talking.
        return Ok(BitShares::zeros(1));
    }
    or_groups(net, prss, bits, bits.len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::protocol::Stats;
    use crate::share::binary::{reconstruct_bits, share_bits};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    fn check(bits: Vec<bool>, group: usize, seed: u64) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let shares = share_bits(&bits, &mut rng);
        let runs = run_protocol(shares, move |net, prss, b: &BitShares| {
            or_groups(net, prss, b, group).unwrap()
        });
        let want: Vec<bool> = bits.chunks(group).map(|c| c.iter().any(|&b| b)).collect();
        let got = reconstruct_bits(&[
            runs[0].out.clone(),
            runs[1].out.clone(),
            runs[2].out.clone(),
        ]);
        prop_assert_eq!(got, Some(want));
        let rounds = Stats::or_group(group.min(bits.len())).rounds;
        prop_assert!(
            runs.iter().all(|r| r.messages == rounds),
            "rounds {} want {}",
            runs[0].messages,
            rounds
        );
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        #[test]
        fn or_groups_matches_plain(seed: u64, len in 1usize..400, which in 0usize..7, density in 0u32..4) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            // density 0 gives all-false inputs, the case that must not leak a stray true.
            let bits: Vec<bool> = (0..len).map(|_| density > 0 && rng.random_ratio(1, 1 << (2 * density))).collect();
            let group = [1, 2, 3, 31, len, 64, 100][which];
            check(bits, group, seed)?;
        }
    }

    /// Random components of `len` bits (clear beyond it).
    fn random_shares(len: usize, rng: &mut ChaCha12Rng) -> BitShares {
        let w = crate::share::binary::words_for(len);
        let own = (0..w).map(|_| rng.random()).collect();
        let prev = (0..w).map(|_| rng.random()).collect();
        BitShares::from_words(own, prev, len)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// The word-at-a-time level builds the general level's AND operands and next level bit
        /// for bit, level after level (so the same gates in the same order, and the same PRSS
        /// draws: a party running either, or the device's tree, interoperates).
        #[test]
        fn short_levels_equal_the_general_levels(seed: u64, len in 1usize..700, group in 1usize..=64) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mut cur = random_shares(len, &mut rng);
            let mut sizes: Vec<usize> = (0..len.div_ceil(group))
                .map(|g| group.min(len - g * group))
                .collect();
            while sizes.iter().any(|&s| s > 1) {
                let (l, r) = pairs(&cur, &sizes);
                let (sl, sr) = short_pairs(&cur, &sizes);
                prop_assert_eq!(&sl, &l);
                prop_assert_eq!(&sr, &r);
                let or = random_shares(l.len, &mut rng);
                let mut short_sizes = sizes.clone();
                let want = next(&cur, &or, &mut sizes);
                prop_assert_eq!(&short_next(&cur, &or, &mut short_sizes), &want);
                prop_assert_eq!(&short_sizes, &sizes);
                cur = want;
            }
        }
    }

    /// One party's tree from fixed PRSS seeds (the same streams every call), with `chunk`
    /// elements per message on its thread.
    fn tree_with_seeds(
        net: &mut dyn Transport,
        b: &BitShares,
        group: usize,
        chunk: usize,
    ) -> BitShares {
        let p = net.party() as u8;
        let mut prss = Prss::from_seeds(net.party(), [p + 1; 16], [(p + 2) % 3 + 1; 16]);
        let before = crate::protocol::set_chunk_elems(chunk);
        let out = or_groups(net, &mut prss, b, group).unwrap();
        crate::protocol::set_chunk_elems(before);
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// In message chunks the tree pipelines its levels chunk by chunk, and still computes the
        /// unchunked tree's gates with its randomness: every party's shares are the same bit for
        /// bit, the ORs are right, and each level is cut into the chunks of 64·m groups.
        #[test]
        fn chunked_levels_give_the_unchunked_shares(
            seed: u64,
            groups in 193usize..700,
            which in 0usize..5,
            chunk_groups in 0usize..3,
            short_tail in 0usize..31,
            density in 0u32..4,
        ) {
            let group = [2, 3, 31, 62, 100][which];
            let len = groups * group - short_tail.min(group - 1);
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let bits: Vec<bool> = (0..len).map(|_| density > 0 && rng.random_ratio(1, 1 << (2 * density))).collect();
            let shares = share_bits(&bits, &mut rng);
            // 64, 128 or 192 groups per chunk.
            let chunk = (chunk_groups + 1) * 64 * group;
            let out = crate::net::memory::run_three(move |mut t| {
                let b = shares[t.party()].clone();
                let plain = tree_with_seeds(&mut t, &b, group, 0);
                let m0 = t.messages_sent();
                let chunked = tree_with_seeds(&mut t, &b, group, chunk);
                (plain, chunked, t.messages_sent() - m0)
            });
            for (plain, chunked, _) in &out {
                prop_assert_eq!(plain, chunked);
            }
            let want: Vec<bool> = bits.chunks(group).map(|c| c.iter().any(|&b| b)).collect();
            let got = reconstruct_bits(&[out[0].1.clone(), out[1].1.clone(), out[2].1.clone()]);
            prop_assert_eq!(got, Some(want));
            let levels = Stats::or_group(group).rounds;
            let pieces = len.div_ceil(group).div_ceil((chunk_groups + 1) * 64) as u64;
            prop_assert!(pieces > 1);
            // Every level of every chunk is one message, except the levels a short last chunk
            // no longer needs.
            for (_, _, messages) in &out {
                prop_assert!(*messages <= levels * pieces && *messages >= levels * (pieces - 1), "{} messages", messages);
            }
        }
    }

    #[test]
    fn single_true_anywhere_is_found() {
        for len in [1usize, 2, 63, 64, 65, 130] {
            for pos in [0, len / 2, len - 1] {
                let mut bits = vec![false; len];
                bits[pos] = true;
                check(bits, len, pos as u64).unwrap();
            }
        }
    }

    #[test]
    fn or_all_of_nothing_is_false() {
        let runs = run_protocol(
            std::array::from_fn(|_| BitShares::zeros(0)),
            |net, prss, b: &BitShares| or_all(net, prss, b).unwrap(),
        );
        assert_eq!(
            reconstruct_bits(&[
                runs[0].out.clone(),
                runs[1].out.clone(),
                runs[2].out.clone()
            ]),
            Some(vec![false])
        );
        assert!(runs.iter().all(|r| r.messages == 0));
    }
}
