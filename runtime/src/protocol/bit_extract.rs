//! Arithmetic-to-binary bit extraction in Z_2^k (Appendix E, Algorithms 5, 6, 7 and 10) and
//! MSB extraction, the comparison of Lemma 1.
//!
//! The replicated share x = x_0 + x_1 + x_2 is viewed as three binary values that every pair of
//! parties can share without interaction (ShareSplit); a layer of full adders reduces the three
//! to two (sums s and carries c, all bit positions in one round), and a ripple-carry adder adds
//! s and 2c. Batches are bit-sliced: plane j holds bit j of every element, 64 elements a word.
//!
//! Cost for the bits up to index m: m AND gates in the full-adder layer (the carry out of bit m
//! is never needed) and m − 1 in the ripple chain (bit 0 of 2c is zero, so there is no carry out
//! of bit 0, and the carry out of bit m is not needed), in 1 + (m − 1) rounds. For the MSB
//! (m = k − 1) that is 2k − 3 gates in k − 1 rounds: 29 gates and 15 rounds for k = 16.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::RingElem;
use crate::share::binary::{tail_mask, words_for};
use crate::share::{BitShares, Rep3Vec};

pub use super::bit_planes::{bit_planes, bit_planes_flat};
use super::{and_many, recv_elems, send_elems};

/// Algorithm 5, ShareSplit: the bit planes of each component x_0, x_1, x_2 as binary shares,
/// each by InpLocal (Algorithm 4, [`BitShares::inp_local`]): component j is known to parties j
/// and j + 1. Local, no interaction. Returns `[planes of x_0, planes of x_1, planes of x_2]`.
#[doc(alias = "ShareSplit")]
pub fn share_split<T: RingElem>(party: usize, x: &Rep3Vec<T>, k: u32) -> [Vec<BitShares>; 3] {
    let len = x.len();
    let own = bit_planes(&x.own, k);
    let prev = bit_planes(&x.prev, k);
    std::array::from_fn(|j| {
        // Party i knows x_i (own) and x_{i−1} (prev); the third party knows nothing of x_j.
        let known: &[Vec<u64>] = if party == j {
            &own
        } else if party == (j + 1) % 3 {
            &prev
        } else {
            &[]
        };
        (0..k as usize)
            .map(|b| BitShares::inp_local(party, j, known.get(b).map_or(&[][..], |v| v), len))
            .collect()
    })
}

/// Algorithm 6, FA, on many bit positions at once: sums s = a ⊕ b ⊕ c and carries
/// o = (a ⊕ c)(b ⊕ c) ⊕ c, one AND each, all in one round. Returns `(sums, carries)`.
#[doc(alias = "FA")]
pub fn full_adder(
    net: &mut dyn Transport,
    prss: &mut Prss,
    a: &[BitShares],
    b: &[BitShares],
    c: &[BitShares],
) -> Result<(Vec<BitShares>, Vec<BitShares>), NetError> {
    assert!(
        a.len() == b.len() && b.len() == c.len(),
        "full adder: operand widths differ"
    );
    let t1: Vec<BitShares> = a.iter().zip(c).map(|(a, c)| a.xor(c)).collect();
    let t2: Vec<BitShares> = b.iter().zip(c).map(|(b, c)| b.xor(c)).collect();
    let sums = t1.iter().zip(b).map(|(t, b)| t.xor(b)).collect();
    let pairs: Vec<(&BitShares, &BitShares)> = t1.iter().zip(&t2).collect();
    let mut carries = and_many(net, prss, &pairs)?;
    for (o, c) in carries.iter_mut().zip(c) {
        o.xor_assign(c);
    }
    Ok((sums, carries))
}

/// Algorithm 7, BinAdd (ripple carry): a + b for m-bit operands given least significant bit
/// first. Returns the m sum bits and, if `carry_out`, the carry out of the top bit as bit m.
/// Rounds: m with the carry out, m − 1 without (the top bit's sum needs only the carry in).
#[doc(alias = "BinAdd")]
pub fn bin_add(
    net: &mut dyn Transport,
    prss: &mut Prss,
    a: &[BitShares],
    b: &[BitShares],
    carry_out: bool,
) -> Result<Vec<BitShares>, NetError> {
    assert_eq!(a.len(), b.len(), "binary adder: operand widths differ");
    let m = a.len();
    let mut out = Vec::with_capacity(m + 1);
    let mut carry: Option<BitShares> = None;
    for i in 0..m {
        let last = i + 1 == m;
        match carry.take() {
            None => {
                out.push(a[i].xor(&b[i]));
                if !last || carry_out {
                    carry = Some(super::and(net, prss, &a[i], &b[i])?);
                }
            }
            Some(c) => {
                if last && !carry_out {
                    out.push(a[i].xor(&b[i]).xor(&c));
                } else {
                    let (mut s, mut o) =
                        full_adder(net, prss, &a[i..=i], &b[i..=i], std::slice::from_ref(&c))?;
                    out.push(s.pop().expect("one sum"));
                    carry = o.pop();
                }
            }
        }
    }
    if let Some(c) = carry {
        out.push(c);
    }
    Ok(out)
}

/// Algorithm 10, BitExtract: binary shares of bits `indices` of x ∈ Z_2^k (in that order).
///
/// Only bits up to the highest index are computed. Panics unless every index is below k and
/// `k <= T::BITS` (both fixed by the compiler, not by peers).
///
/// Runs Algorithms 5–7 on flat bit-sliced buffers: the full-adder layer is one round (all bit
/// positions in one message), then the ripple-carry chain one AND per round. With a chunk size
/// ([`super::set_chunk_elems`]) every round is sent in element chunks and the chain is
/// pipelined: round r + 1 of chunk c starts as soon as round r of chunk c has arrived. The AND
/// gates, rounds, bytes and PRSS draws are those of [`full_adder`] and [`bin_add`].
#[doc(alias = "BitExtract")]
pub fn bit_extract<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Vec<T>,
    k: u32,
    indices: &[usize],
) -> Result<Vec<BitShares>, NetError> {
    assert!(
        k >= 1 && k <= T::BITS,
        "bit extraction: k = {k} does not fit the {}-bit storage",
        T::BITS
    );
    assert!(
        indices.iter().all(|&i| i < k as usize),
        "bit extraction: index beyond k = {k}"
    );
    let Some(&m) = indices.iter().max() else {
        return Ok(Vec::new());
    };
    let n = x.len();
    let w = words_for(n);
    if w == 0 {
        return Ok(indices.iter().map(|_| BitShares::zeros(0)).collect());
    }
    let nb = m + 1;
    let own = bit_planes_flat(&x.own, nb);
    let prev = bit_planes_flat(&x.prev, nb);
    let zero = vec![0u64; nb * w];
    // ShareSplit (InpLocal): party p holds component p as (own, 0), component p − 1 as
    // (0, prev) and component p + 1 as (0, 0).
    let p = net.party();
    let comp = |j: usize| -> (&[u64], &[u64]) {
        (
            if j == p { &own } else { &zero },
            if (j + 1) % 3 == p { &prev } else { &zero },
        )
    };
    let ((ao, ap), (bo, bp), (co, cp)) = (comp(0), comp(1), comp(2));
    let tail = tail_mask(n);

    // The sums s = a ⊕ b ⊕ c of every position 0..=m.
    let so: Vec<u64> = (0..nb * w).map(|i| ao[i] ^ bo[i] ^ co[i]).collect();
    let sp: Vec<u64> = (0..nb * w).map(|i| ap[i] ^ bp[i] ^ cp[i]).collect();

    // Zero shares of every AND: m·w for the adder layer now, then w as each ripple round
    // starts (the streams give the bits of one draw of all (2m − 1)·w, which the device's
    // BitExtract makes; a round's words stay in cache, and only one round's are held).
    let fa_alpha = prss.zero_bits(m * w);
    let chunks = super::chunk_ranges(w);
    let (to, from) = (net.next(), net.prev());

    // Full adders on positions 0..m: carries (a ⊕ c)(b ⊕ c) ⊕ c, one message per chunk.
    let mut cco = vec![0u64; m * w];
    let mut ccp = vec![0u64; m * w];
    if m == 0 {
        let r = BitShares::from_words(so, sp, n);
        return Ok(indices.iter().map(|_| r.clone()).collect());
    }
    for &(a, b) in &chunks {
        let cw = b - a;
        let mut z = vec![0u64; m * cw];
        for (i, zi) in z.chunks_exact_mut(cw).enumerate() {
            let r = i * w + a..i * w + b;
            let (ao, ap, bo, bp) = (
                &ao[r.clone()],
                &ap[r.clone()],
                &bo[r.clone()],
                &bp[r.clone()],
            );
            let (co, cp, al) = (&co[r.clone()], &cp[r.clone()], &fa_alpha[r.clone()]);
            let out = &mut cco[r];
            for j in 0..cw {
                let (t1o, t1p) = (ao[j] ^ co[j], ap[j] ^ cp[j]);
                let (t2o, t2p) = (bo[j] ^ co[j], bp[j] ^ cp[j]);
                zi[j] = (t1o & (t2o ^ t2p)) ^ (t1p & t2o) ^ al[j];
            }
            if b == w {
                zi[cw - 1] &= tail;
            }
            for j in 0..cw {
                out[j] = zi[j] ^ co[j];
            }
        }
        send_elems(net, to, &z)?;
    }

    // Ripple chain: r[i + 1] = cc_i ⊕ s_(i+1) ⊕ carry_i, carry_(i+1) = (cc_i ⊕ carry_i)(s_(i+1)
    // ⊕ carry_i) ⊕ carry_i for i < m − 1, carry_0 = 0. Round i's chunk c is computed as soon as
    // the previous round's chunk c has arrived.
    let mut want = vec![None; nb];
    for (slot, &i) in indices.iter().enumerate() {
        want[i].get_or_insert(slot);
    }
    let mut outs: Vec<(Vec<u64>, Vec<u64>)> = vec![(Vec::new(), Vec::new()); indices.len()];
    for (&i, out) in indices.iter().zip(outs.iter_mut()) {
        if want[i].is_some() && out.0.is_empty() {
            *out = if i == 0 {
                (so[..w].to_vec(), sp[..w].to_vec())
            } else {
                (vec![0u64; w], vec![0u64; w])
            };
        }
    }
    let (mut kco, mut kcp) = (vec![0u64; w], vec![0u64; w]);
    for i in 0..m {
        let planes = if i == 0 { m } else { 1 };
        let last = i + 1 == m;
        let round_alpha = if last { Vec::new() } else { prss.zero_bits(w) };
        for &(a, b) in &chunks {
            let cw = b - a;
            let mut got: Vec<u64> = recv_elems(net, from, planes * cw, "AND shares")?;
            if b == w {
                // A peer's stray bits beyond the batch must not reach later gates.
                for g in got.chunks_exact_mut(cw) {
                    g[cw - 1] &= tail;
                }
            }
            if i == 0 {
                for (pl, g) in got.chunks_exact(cw).enumerate() {
                    let r = pl * w + a..pl * w + b;
                    let c = &cp[r.clone()];
                    for ((o, &g), &c) in ccp[r].iter_mut().zip(g).zip(c) {
                        *o = g ^ c;
                    }
                }
            } else {
                for (o, &g) in kcp[a..b].iter_mut().zip(&got) {
                    *o ^= g;
                }
            }
            // Carry into position i + 1 is now complete for this chunk.
            let (cc, ss) = (i * w, (i + 1) * w);
            let (cco_, ccp_) = (&cco[cc + a..cc + b], &ccp[cc + a..cc + b]);
            let (so_, sp_) = (&so[ss + a..ss + b], &sp[ss + a..ss + b]);
            if let Some(slot) = want[i + 1] {
                let (oo, op) = &mut outs[slot];
                let (kco_, kcp_) = (&kco[a..b], &kcp[a..b]);
                let (oo, op) = (&mut oo[a..b], &mut op[a..b]);
                for j in 0..cw {
                    oo[j] = cco_[j] ^ so_[j] ^ kco_[j];
                    op[j] = ccp_[j] ^ sp_[j] ^ kcp_[j];
                }
            }
            if last {
                continue;
            }
            let al = &round_alpha[a..b];
            let (kco_, kcp_) = (&mut kco[a..b], &kcp[a..b]);
            let mut z = vec![0u64; cw];
            for j in 0..cw {
                let (t1o, t1p) = (cco_[j] ^ kco_[j], ccp_[j] ^ kcp_[j]);
                let (t2o, t2p) = (so_[j] ^ kco_[j], sp_[j] ^ kcp_[j]);
                z[j] = (t1o & (t2o ^ t2p)) ^ (t1p & t2o) ^ al[j];
            }
            if b == w {
                z[cw - 1] &= tail;
            }
            for j in 0..cw {
                kco_[j] ^= z[j];
            }
            send_elems(net, to, &z)?;
        }
    }
    let done: Vec<Option<BitShares>> = outs
        .into_iter()
        .map(|(o, p)| (!o.is_empty()).then(|| BitShares::from_words(o, p, n)))
        .collect();
    Ok(indices
        .iter()
        .map(|&i| {
            done[want[i].expect("every index is wanted")]
                .clone()
                .expect("computed")
        })
        .collect())
}

/// The most significant bit of x ∈ Z_2^k (bit k − 1): with Lemma 1, the comparison x < 0 in the
/// signed reading of Z_2^k. k − 1 rounds, 2k − 3 AND gates per element.
pub fn msb<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Vec<T>,
    k: u32,
) -> Result<BitShares, NetError> {
    Ok(bit_extract(net, prss, x, k, &[k as usize - 1])?
        .pop()
        .expect("one index in, one bit out"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::{edge_values, run_protocol};
    use crate::protocol::Stats;
    use crate::ring::{mask, storage_for, Width};
    use crate::share::binary::{reconstruct_bits, share_bits};
    use crate::share::rep3::share_vec;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// With a chunk size the rounds are split into chunks and pipelined: the same bits, bytes
    /// and rounds, ceil(words / chunk words) messages per round, and a chunk size that does not
    /// divide the batch.
    #[test]
    fn chunked_rounds_give_the_same_bits_and_bytes() {
        let n = 1000usize; // 16 words
        let k = 16u32;
        let mut rng = ChaCha12Rng::seed_from_u64(5);
        let v: Vec<u16> = (0..n).map(|_| rng.random()).collect();
        let shares = share_vec(&v, k, &mut rng);
        for chunk in [0usize, 64, 300, 512, 1 << 20] {
            let runs = run_protocol(shares.clone(), move |net, prss, x: &Rep3Vec<u16>| {
                crate::protocol::set_chunk_elems(chunk);
                let out = bit_extract(net, prss, x, k, &[3, 15, 3]).unwrap();
                crate::protocol::set_chunk_elems(0);
                out
            });
            let per_round = match chunk {
                0 => 1,
                c => 16usize.div_ceil(c.div_ceil(64)) as u64,
            };
            let st = Stats::msb(k);
            for r in &runs {
                assert_eq!(r.messages, st.rounds * per_round, "chunk {chunk}");
                assert_eq!(r.bytes, st.and_gates * 16 * 8, "chunk {chunk}");
            }
            for (slot, bit) in [(0usize, 3u32), (1, 15), (2, 3)] {
                let got = reconstruct_bits(&[
                    runs[0].out[slot].clone(),
                    runs[1].out[slot].clone(),
                    runs[2].out[slot].clone(),
                ])
                .unwrap();
                let want: Vec<bool> = v.iter().map(|x| (x >> bit) & 1 == 1).collect();
                assert_eq!(got, want, "chunk {chunk} bit {bit}");
            }
        }
    }

    /// Shares `values` in Z_2^k, extracts bits `indices`, and checks them and the round count.
    fn check<T: RingElem>(
        values: &[u64],
        k: u32,
        indices: Vec<usize>,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let v: Vec<T> = values.iter().map(|&x| T::from_u64(x & mask(k))).collect();
        let shares = share_vec(&v, k, &mut rng);
        let idx = indices.clone();
        let runs = run_protocol(shares, move |net, prss, x: &Rep3Vec<T>| {
            bit_extract(net, prss, x, k, &idx).unwrap()
        });
        let m = *indices.iter().max().unwrap() as u32;
        let want_rounds = Stats::bit_extract(m).rounds;
        prop_assert!(
            runs.iter().all(|r| r.messages == want_rounds),
            "rounds {} want {}",
            runs[0].messages,
            want_rounds
        );
        for (n, &i) in indices.iter().enumerate() {
            let got = reconstruct_bits(&[
                runs[0].out[n].clone(),
                runs[1].out[n].clone(),
                runs[2].out[n].clone(),
            ]);
            let want: Vec<bool> = values
                .iter()
                .map(|&x| (x & mask(k)) >> i & 1 == 1)
                .collect();
            prop_assert_eq!(got, Some(want), "bit {} of k = {}", i, k);
        }
        Ok(())
    }

    fn dispatch(
        values: &[u64],
        k: u32,
        indices: Vec<usize>,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        match storage_for(k) {
            Width::U16 => check::<u16>(values, k, indices, seed),
            Width::U32 => check::<u32>(values, k, indices, seed),
            Width::U64 => check::<u64>(values, k, indices, seed),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn msb_is_the_sign_bit(k in 2u32..=64, seed: u64, raw in proptest::collection::vec(any::<u64>(), 0..140)) {
            let mut values = raw;
            values.extend(edge_values(k));
            dispatch(&values, k, vec![k as usize - 1], seed)?;
        }

        #[test]
        fn bit_extract_matches_plain_bits(k in 1u32..=64, seed: u64, raw in proptest::collection::vec(any::<u64>(), 1..70), picks in proptest::collection::vec(any::<u32>(), 1..4)) {
            let mut values = raw;
            values.extend(edge_values(k.max(1)));
            let indices: Vec<usize> = picks.iter().map(|p| (p % k) as usize).collect();
            dispatch(&values, k, indices, seed)?;
        }
    }

    #[test]
    fn msb_rounds_and_gates_for_every_k() {
        // 128 elements = 2 words per plane, so bytes sent = gates × 2 words × 8 bytes.
        for k in 2u32..=64 {
            let values: Vec<u64> = (0..128u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            let v: Vec<u64> = values.iter().map(|x| x & mask(k)).collect();
            let shares = share_vec(&v, k, &mut ChaCha12Rng::seed_from_u64(k as u64));
            let runs = run_protocol(shares, move |net, prss, x: &Rep3Vec<u64>| {
                msb(net, prss, x, k).unwrap()
            });
            let want = Stats::msb(k);
            assert_eq!(
                want,
                Stats {
                    rounds: k as u64 - 1,
                    and_gates: 2 * k as u64 - 3
                }
            );
            for r in &runs {
                assert_eq!(r.messages, want.rounds, "k = {k}");
                assert_eq!(r.bytes, want.and_gates * 2 * 8, "k = {k}");
            }
            let got = reconstruct_bits(&[
                runs[0].out.clone(),
                runs[1].out.clone(),
                runs[2].out.clone(),
            ])
            .unwrap();
            assert!(
                got.iter()
                    .zip(&v)
                    .all(|(&b, &x)| b == ((x >> (k - 1)) & 1 == 1)),
                "k = {k}"
            );
        }
    }

    #[test]
    fn bin_add_adds() {
        let mut rng = ChaCha12Rng::seed_from_u64(4);
        let a: Vec<u8> = (0..100).map(|_| rng.random()).collect();
        let b: Vec<u8> = (0..100).map(|_| rng.random()).collect();
        let planes = |v: &[u8], rng: &mut ChaCha12Rng| -> Vec<[BitShares; 3]> {
            (0..8)
                .map(|j| {
                    share_bits(
                        &v.iter().map(|x| (x >> j) & 1 == 1).collect::<Vec<_>>(),
                        rng,
                    )
                })
                .collect()
        };
        let (pa, pb) = (planes(&a, &mut rng), planes(&b, &mut rng));
        let inputs: [(Vec<BitShares>, Vec<BitShares>); 3] = std::array::from_fn(|i| {
            (
                pa.iter().map(|p| p[i].clone()).collect(),
                pb.iter().map(|p| p[i].clone()).collect(),
            )
        });
        let runs = run_protocol(
            inputs,
            |net, prss, (a, b): &(Vec<BitShares>, Vec<BitShares>)| {
                bin_add(net, prss, a, b, true).unwrap()
            },
        );
        assert!(runs.iter().all(|r| r.messages == 8));
        let bits: Vec<Vec<bool>> = (0..9)
            .map(|j| {
                reconstruct_bits(&[
                    runs[0].out[j].clone(),
                    runs[1].out[j].clone(),
                    runs[2].out[j].clone(),
                ])
                .unwrap()
            })
            .collect();
        for e in 0..100 {
            let sum: u32 = (0..9).map(|j| (bits[j][e] as u32) << j).sum();
            assert_eq!(sum, a[e] as u32 + b[e] as u32);
        }
    }

    #[test]
    fn malformed_carry_message_is_an_error() {
        let out = crate::net::memory::run_three(|mut t| {
            let mut prss = Prss::from_seeds(t.party(), [1; 16], [2; 16]);
            let x: Rep3Vec<u16> = Rep3Vec::zeros(10);
            if t.party() == 2 {
                let to = t.next();
                t.send(to, vec![0; 5]).unwrap();
                // Stay until party 1's first message, so its send cannot fail first.
                let from = t.prev();
                let _ = t.recv(from);
                return None;
            }
            Some(msb(&mut t, &mut prss, &x, 16).map(|_| ()))
        });
        assert!(matches!(
            out[0].as_ref().unwrap(),
            Err(NetError::Protocol { peer: 2, .. })
        ));
    }
}

/// Correctness at the batch size the paper benchmarks (timings belong to the benchmarks).
#[cfg(test)]
mod large_batch {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::share::binary::reconstruct_bits;
    use crate::share::rep3::share_vec;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    #[test]
    fn msb_and_or_tree_on_400k_elements() {
        let n = 400_000;
        let mut rng = ChaCha12Rng::seed_from_u64(1);
        let v: Vec<u16> = (0..n).map(|_| rng.random()).collect();
        let shares = share_vec(&v, 16, &mut rng);
        let runs = run_protocol(shares, |net, prss, x: &Rep3Vec<u16>| {
            let b = msb(net, prss, x, 16).unwrap();
            let any = crate::protocol::or_groups(net, prss, &b, b.len).unwrap();
            (b, any)
        });
        let got = reconstruct_bits(&[
            runs[0].out.0.clone(),
            runs[1].out.0.clone(),
            runs[2].out.0.clone(),
        ])
        .unwrap();
        assert!(got.iter().zip(&v).all(|(&b, &x)| b == (x >> 15 == 1)));
        let any = reconstruct_bits(&[
            runs[0].out.1.clone(),
            runs[1].out.1.clone(),
            runs[2].out.1.clone(),
        ])
        .unwrap();
        assert_eq!(any, vec![true]);
    }
}
