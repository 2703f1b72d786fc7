//! Binary subtraction on bit-sliced shares (Appendix E, Algorithms 8 FS and 9 BinSub), the
//! conditional reduction step of BitExtractP (Algorithm 12).
//!
//! Operands are given least significant bit first, one [`BitShares`] per bit position holding
//! that bit of every element (64 elements a word), so every gate acts on the whole batch and
//! each position of the ripple-borrow chain is one round.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::share::BitShares;

use super::{and, and_many, Stats};

/// Algorithm 8, FS, on many bit positions at once: differences s = a ⊕ b ⊕ c and borrows
/// o = (a ⊕ b)(b ⊕ c) ⊕ c (the majority of ¬a, b, c), one AND each, all in one round.
/// Returns `(differences, borrows)`.
#[doc(alias = "FS")]
pub fn full_subtractor(
    net: &mut dyn Transport,
    prss: &mut Prss,
    a: &[BitShares],
    b: &[BitShares],
    c: &[BitShares],
) -> Result<(Vec<BitShares>, Vec<BitShares>), NetError> {
    assert!(
        a.len() == b.len() && b.len() == c.len(),
        "full subtractor: operand widths differ"
    );
    let t1: Vec<BitShares> = a.iter().zip(b).map(|(a, b)| a.xor(b)).collect();
    let t2: Vec<BitShares> = b.iter().zip(c).map(|(b, c)| b.xor(c)).collect();
    let diffs = t1.iter().zip(c).map(|(t, c)| t.xor(c)).collect();
    let pairs: Vec<(&BitShares, &BitShares)> = t1.iter().zip(&t2).collect();
    let mut borrows = and_many(net, prss, &pairs)?;
    for (o, c) in borrows.iter_mut().zip(c) {
        o.xor_assign(c);
    }
    Ok((diffs, borrows))
}

/// Algorithm 9, BinSub (ripple borrow): a − b mod 2^m for m-bit shared operands, least
/// significant bit first. Returns the m difference bits and, if `borrow_out`, the borrow out of
/// the top bit as bit m (set iff a < b). Rounds and AND gates: m with the borrow out, m − 1
/// without (the top difference bit needs only the borrow in).
#[doc(alias = "BinSub")]
pub fn bin_sub(
    net: &mut dyn Transport,
    prss: &mut Prss,
    a: &[BitShares],
    b: &[BitShares],
    borrow_out: bool,
) -> Result<Vec<BitShares>, NetError> {
    assert_eq!(a.len(), b.len(), "binary subtractor: operand widths differ");
    let m = a.len();
    let mut out = Vec::with_capacity(m + 1);
    let mut borrow: Option<BitShares> = None;
    for i in 0..m {
        let need_borrow = i + 1 < m || borrow_out;
        match borrow.take() {
            None => {
                let s = a[i].xor(&b[i]);
                if need_borrow {
                    // Algorithm 9's first step: c = s[0] · b[0] = ¬a[0] ∧ b[0].
                    borrow = Some(and(net, prss, &s, &b[i])?);
                }
                out.push(s);
            }
            Some(c) if !need_borrow => out.push(a[i].xor(&b[i]).xor(&c)),
            Some(c) => {
                let (mut s, mut o) =
                    full_subtractor(net, prss, &a[i..=i], &b[i..=i], std::slice::from_ref(&c))?;
                out.push(s.pop().expect("one difference"));
                borrow = o.pop();
            }
        }
    }
    if let Some(c) = borrow {
        out.push(c);
    }
    Ok(out)
}

/// Algorithm 9 with a public subtrahend `b` (bits above m ignored): a − b mod 2^m, and the
/// borrow out as bit m if `borrow_out`.
///
/// A public bit β turns the gates of Algorithm 8 into: difference a ⊕ β ⊕ c (local), and
/// borrow (a ⊕ β)(β ⊕ c) ⊕ c, which is local while the incoming borrow is still known to be
/// zero (it is then β ∧ ¬a). So the chain costs one AND per position from the first set bit
/// of b on, except the top position when its borrow out is not wanted; [`bin_sub_public_cost`]
/// counts them.
pub fn bin_sub_public(
    net: &mut dyn Transport,
    prss: &mut Prss,
    a: &[BitShares],
    b: u64,
    borrow_out: bool,
) -> Result<Vec<BitShares>, NetError> {
    let party = net.party();
    let m = a.len();
    let flip = |x: &BitShares, beta: bool| if beta { x.not(party) } else { x.clone() };
    let mut out = Vec::with_capacity(m + 1);
    let mut borrow: Option<BitShares> = None;
    for (i, ai) in a.iter().enumerate() {
        let beta = i < 64 && (b >> i) & 1 == 1;
        let need_borrow = i + 1 < m || borrow_out;
        let t1 = flip(ai, beta);
        match borrow.take() {
            None => {
                if need_borrow && beta {
                    borrow = Some(ai.not(party));
                }
                out.push(t1);
            }
            Some(c) => {
                out.push(t1.xor(&c));
                if need_borrow {
                    let mut o = and(net, prss, &t1, &flip(&c, beta))?;
                    o.xor_assign(&c);
                    borrow = Some(o);
                }
            }
        }
    }
    if borrow_out {
        // No set bit of b at all: there is never a borrow.
        out.push(borrow.unwrap_or_else(|| BitShares::zeros(a.first().map_or(0, |x| x.len))));
    }
    Ok(out)
}

/// Rounds and AND gates (per element) of [`bin_sub_public`] on m-bit operands.
pub fn bin_sub_public_cost(m: u32, b: u64, borrow_out: bool) -> Stats {
    let positions = if borrow_out { m } else { m.saturating_sub(1) };
    // Positions that produce a borrow out with a borrow in that may be set: above the lowest set bit.
    let first = if b == 0 { u32::MAX } else { b.trailing_zeros() };
    let gates = (0..positions).filter(|&i| i > first).count() as u64;
    Stats {
        rounds: gates,
        and_gates: gates,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::share::binary::{reconstruct_bits, share_bits};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// Bit planes of `v` (m bits), each dealt as binary shares.
    fn deal(v: &[u64], m: usize, rng: &mut ChaCha12Rng) -> Vec<[BitShares; 3]> {
        (0..m)
            .map(|j| {
                share_bits(
                    &v.iter().map(|x| (x >> j) & 1 == 1).collect::<Vec<_>>(),
                    rng,
                )
            })
            .collect()
    }

    fn party(planes: &[[BitShares; 3]], i: usize) -> Vec<BitShares> {
        planes.iter().map(|p| p[i].clone()).collect()
    }

    /// Recombines bit planes into integers.
    fn values(out: [&Vec<BitShares>; 3], n: usize) -> Vec<u64> {
        let bits: Vec<Vec<bool>> = (0..out[0].len())
            .map(|j| {
                reconstruct_bits(&[out[0][j].clone(), out[1][j].clone(), out[2][j].clone()])
                    .expect("consistent shares")
            })
            .collect();
        (0..n)
            .map(|e| (0..bits.len()).map(|j| (bits[j][e] as u64) << j).sum())
            .collect()
    }

    /// The plain reference: a − b mod 2^m and, as bit m, whether a < b.
    fn plain(a: u64, b: u64, m: usize, borrow_out: bool) -> u64 {
        let mask = (1u64 << m) - 1;
        let d = a.wrapping_sub(b) & mask;
        d | if borrow_out && a < b { 1 << m } else { 0 }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn bin_sub_is_subtraction_with_borrow(seed: u64, m in 1usize..=20, n in 1usize..150, borrow_out: bool) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mask = (1u64 << m) - 1;
            let mut a: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & mask).collect();
            let mut b: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & mask).collect();
            // Edge pairs: equal, 0 − max, max − 0, 0 − 1.
            a.extend([5 & mask, 0, mask, 0]);
            b.extend([5 & mask, mask, 0, 1]);
            let (pa, pb) = (deal(&a, m, &mut rng), deal(&b, m, &mut rng));
            let inputs: [(Vec<BitShares>, Vec<BitShares>); 3] = std::array::from_fn(|i| (party(&pa, i), party(&pb, i)));
            let runs = run_protocol(inputs, move |net, prss, (a, b): &(Vec<BitShares>, Vec<BitShares>)| {
                bin_sub(net, prss, a, b, borrow_out).unwrap()
            });
            let want_rounds = if borrow_out { m } else { m - 1 } as u64;
            prop_assert!(runs.iter().all(|r| r.messages == want_rounds));
            let got = values([&runs[0].out, &runs[1].out, &runs[2].out], a.len());
            for e in 0..a.len() {
                prop_assert_eq!(got[e], plain(a[e], b[e], m, borrow_out), "{} - {}", a[e], b[e]);
            }
        }

        #[test]
        fn bin_sub_public_matches_plain_and_cost(seed: u64, m in 1usize..=20, n in 1usize..150, raw_b: u64, borrow_out: bool) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mask = (1u64 << m) - 1;
            let b = match raw_b % 4 { 0 => 0, 1 => mask, 2 => 65519 & mask, _ => raw_b & mask };
            let mut a: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & mask).collect();
            a.extend([0, b, b.wrapping_sub(1) & mask, (b + 1) & mask, mask]);
            let pa = deal(&a, m, &mut rng);
            let inputs: [Vec<BitShares>; 3] = std::array::from_fn(|i| party(&pa, i));
            let runs = run_protocol(inputs, move |net, prss, a: &Vec<BitShares>| {
                bin_sub_public(net, prss, a, b, borrow_out).unwrap()
            });
            let cost = bin_sub_public_cost(m as u32, b, borrow_out);
            let words = a.len().div_ceil(64) as u64;
            for r in &runs {
                prop_assert_eq!(r.messages, cost.rounds);
                prop_assert_eq!(r.bytes, cost.and_gates * words * 8);
            }
            let got = values([&runs[0].out, &runs[1].out, &runs[2].out], a.len());
            for e in 0..a.len() {
                prop_assert_eq!(got[e], plain(a[e], b, m, borrow_out), "{} - {}", a[e], b);
            }
        }
    }

    #[test]
    fn public_cost_for_p() {
        // 17-bit c − p (p = 0xFFEF, bit 0 set): positions 1..=15 borrow with an AND, the top
        // difference bit is local. This is the subtractor of Algorithm 12.
        assert_eq!(
            bin_sub_public_cost(17, 65519, false),
            Stats {
                rounds: 15,
                and_gates: 15
            }
        );
        assert_eq!(bin_sub_public_cost(8, 0, true), Stats::default());
        assert_eq!(bin_sub_public_cost(8, 0b100, true).and_gates, 5);
    }

    #[test]
    fn malformed_borrow_message_is_an_error() {
        let out = crate::net::memory::run_three(|mut t| {
            let mut prss = Prss::from_seeds(t.party(), [1; 16], [2; 16]);
            let a = vec![BitShares::zeros(100); 4];
            if t.party() == 1 {
                let to = t.next();
                t.send(to, vec![0; 9]).unwrap();
                // Stay connected until the third party's first message, so that its sends
                // (and the checked party's) cannot fail for a closed link instead.
                let from = t.prev();
                let _ = t.recv(from);
                return None;
            }
            Some(bin_sub(&mut t, &mut prss, &a, &a, true).map(|_| ()))
        });
        assert!(matches!(
            out[2].as_ref().unwrap(),
            Err(NetError::Protocol { peer: 1, .. })
        ));
    }
}
