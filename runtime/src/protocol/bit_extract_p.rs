//! Bit extraction from replicated shares mod p, p = 2^16 − 17 (Section 4.3.2, Appendix E
//! Algorithm 12, BitExtractP), and the MSB used for the comparison of Lemma 1 over F_p.
//!
//! Party mapping (paper → code): parties 1, 2, 3 → 0, 1, 2; components x_1, x_2, x_3 → x_0,
//! x_1, x_2. So "party 2 computes x_1 + x_2 mod p" is code party 1 computing x_0 + x_1 mod p
//! from its `prev` and `own`, and "InpLocal(x_3, 3, 2)" is `BitShares::inp_local` with owner 2
//! (known to code parties 2 and 0).
//!
//! Steps, with ℓ = 16 and every step batched over all elements:
//! 1. Input of the ℓ bits of a = x_0 + x_1 mod p by code party 1 (Section 4.3.2): every party
//!    takes a PRSS XOR-zero share r_i, party 1 XORs a into its r_1, and every party sends its
//!    component to the next party. One round, ℓ bits per element, no AND gate.
//! 2. b = x_2 is shared by InpLocal, locally.
//! 3. c = a + b with BinAdd (Algorithm 7), ℓ + 1 bits (c < 2p < 2^(ℓ+1)): ℓ gates, ℓ rounds.
//! 4. d = c − p on ℓ + 1 bits with BinSub (Algorithm 9). Since c − p ∈ [−p, p) fits the
//!    signed (ℓ + 1)-bit range, d[ℓ] is set iff c < p.
//! 5. r[i] = CMux(d[ℓ], c[i], d[i]) (Algorithm 11) for the requested i: one round.
//!
//! Cost, and why it is below Section 4.3.2's count. That count, 3k + 2 bits of communication
//! ("AND gates", counting the k input bits) in 2k + 3 rounds (50 and 35 for k = 16), charges
//! the subtractor k + 1 gates and rounds, as Algorithm 9 does for two shared operands. Here p
//! is public, so (a) the borrow out of bit 0 is p[0] ∧ ¬c[0], local, and (b) the top bit d[ℓ]
//! needs only its borrow in, never a borrow out: the subtractor costs k − 1 gates in k − 1
//! rounds ([`super::bin_sub::bin_sub_public_cost`]). The MSB then costs 3k bits (2k ANDs plus
//! the k input bits) in 2k + 1 rounds: 48 bits and 33 rounds for k = 16, which is the count
//! Section 5.2 gives for the Shamir instantiation.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::share::binary::{clear_tail, words_for};
use crate::share::fp::{self, Rep3Fp, L, P};
use crate::share::BitShares;

use super::bin_sub::{bin_sub_public, bin_sub_public_cost};
use super::bit_extract::bit_planes;
use super::{and_many, bin_add, recv_elems, send_elems};

/// The code party that inputs x_0 + x_1 mod p (the paper's party 2).
const INPUT_PARTY: usize = 1;
/// The component shared by InpLocal (x_2, the paper's x_3), known to parties 2 and 0.
const LOCAL_COMPONENT: usize = 2;

/// Cost of one BitExtractP call, per element (gates, bits) and per batch (rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CostP {
    pub rounds: u64,
    /// AND gates (each one bit sent per party).
    pub and_gates: u64,
    /// Bits sent per party by the input step, which the paper counts as gates.
    pub input_bits: u64,
}

impl CostP {
    /// Bits each party sends per element: the paper's "AND gates" of Section 4.3.2.
    pub fn bits(&self) -> u64 {
        self.and_gates + self.input_bits
    }
}

/// The cost of [`bit_extract_p`] for `n_indices` requested bits (see the module comment).
pub fn bit_extract_p_cost(n_indices: usize) -> CostP {
    if n_indices == 0 {
        return CostP::default();
    }
    let l = L as u64;
    let sub = bin_sub_public_cost(L + 1, P as u64, false);
    CostP {
        rounds: 1 + l + sub.rounds + 1,
        and_gates: l + sub.and_gates + n_indices as u64,
        input_bits: l,
    }
}

/// Algorithm 12 step 1 (Section 4.3.2's input): binary shares of the ℓ bit planes of
/// x_0 + x_1 mod p, input by code party 1. One round.
fn input_sum(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Fp,
) -> Result<Vec<BitShares>, NetError> {
    let (n, l) = (x.len(), L as usize);
    let w = words_for(n);
    let mut comp = prss.zero_bits(w * l);
    if net.party() == INPUT_PARTY {
        let sum: Vec<u16> = x
            .own
            .iter()
            .zip(&x.prev)
            .map(|(&a, &b)| fp::add(a, b))
            .collect();
        for (j, plane) in bit_planes(&sum, L).iter().enumerate() {
            for (c, &bits) in comp[j * w..(j + 1) * w].iter_mut().zip(plane) {
                *c ^= bits;
            }
        }
    }
    // The zero shares are random past `len`; the invariant wants those bits clear.
    for plane in comp.chunks_mut(w) {
        clear_tail(plane, n);
    }
    let to = net.next();
    send_elems(net, to, &comp)?;
    let from = net.prev();
    let got: Vec<u64> = recv_elems(net, from, w * l, "BitExtractP input")?;
    Ok((0..l)
        .map(|j| {
            BitShares::from_words(
                comp[j * w..(j + 1) * w].to_vec(),
                got[j * w..(j + 1) * w].to_vec(),
                n,
            )
        })
        .collect())
}

/// Algorithm 12, BitExtractP: binary shares of bits `indices` (in that order) of the canonical
/// representative in [0, p) of x, from replicated shares mod p. 2ℓ + 1 rounds whatever the
/// batch size ([`bit_extract_p_cost`]).
///
/// Panics if an index is not below ℓ = 16 (fixed by the caller's program, not by peers).
#[doc(alias = "BitExtractP")]
pub fn bit_extract_p(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Fp,
    indices: &[usize],
) -> Result<Vec<BitShares>, NetError> {
    assert!(
        indices.iter().all(|&i| i < L as usize),
        "BitExtractP: bit index beyond ℓ = {L}"
    );
    assert_eq!(
        x.own.len(),
        x.prev.len(),
        "F_p shares: component lengths differ"
    );
    let n = x.len();
    if n == 0 {
        // Every party knows the batch is empty: nothing is sent.
        return Ok(indices.iter().map(|_| BitShares::zeros(0)).collect());
    }
    if indices.is_empty() {
        return Ok(Vec::new());
    }
    let party = net.party();
    let a = input_sum(net, prss, x)?;
    let known: Vec<Vec<u64>> = if party == LOCAL_COMPONENT {
        bit_planes(&x.own, L)
    } else if party == (LOCAL_COMPONENT + 1) % 3 {
        bit_planes(&x.prev, L)
    } else {
        Vec::new()
    };
    let b: Vec<BitShares> = (0..L as usize)
        .map(|j| {
            let k = known.get(j).map_or(&[][..], |v| v);
            BitShares::inp_local(party, LOCAL_COMPONENT, k, n)
        })
        .collect();
    let c = bin_add(net, prss, &a, &b, true)?;
    let d = bin_sub_public(net, prss, &c, P as u64, false)?;
    let under = &d[L as usize];
    // CMux(d[ℓ], c[i], d[i]) = d[i] ⊕ d[ℓ] ∧ (c[i] ⊕ d[i]) for all i in one round.
    let diffs: Vec<BitShares> = indices.iter().map(|&i| c[i].xor(&d[i])).collect();
    let pairs: Vec<(&BitShares, &BitShares)> = diffs.iter().map(|t| (under, t)).collect();
    let sel = and_many(net, prss, &pairs)?;
    Ok(indices
        .iter()
        .zip(sel)
        .map(|(&i, s)| d[i].xor(&s))
        .collect())
}

/// The MSB over F_p: bit ℓ − 1 = 15 of the canonical representative in [0, p), i.e. x ≥ 2^15.
///
/// This is the paper's MSB (Lemma 1 with t = p and ⌈log2 t⌉ − 1 = 15), not the sign under the
/// centred representation (x > (p − 1)/2): the two differ exactly for x in
/// [(p + 1)/2, 2^15) = [32760, 32767]. Lemma 1's condition l < t − 2^(⌈log2 t⌉−1) = p − 2^15
/// keeps the compared values away from that gap, so for them the MSB is the sign.
/// Cost: 3ℓ bits in 2ℓ + 1 rounds (see the module comment).
pub fn msb_p(net: &mut dyn Transport, prss: &mut Prss, x: &Rep3Fp) -> Result<BitShares, NetError> {
    Ok(bit_extract_p(net, prss, x, &[L as usize - 1])?
        .pop()
        .expect("one index in, one bit out"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::share::binary::reconstruct_bits;
    use crate::share::fp::share_fp;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    fn edge_values() -> Vec<u16> {
        vec![
            0,
            1,
            2,
            P - 1,
            P - 2,
            (P - 1) / 2,
            P.div_ceil(2),
            (1 << 15) - 1,
            1 << 15,
            (1 << 15) + 1,
            u16::MAX - 1 - 17,
            u16::MAX - 17,
            0x00ff,
            0x7ff0,
        ]
    }

    fn reconstruct(
        runs: &[crate::protocol::testutil::Run<Vec<BitShares>>; 3],
        n: usize,
    ) -> Vec<bool> {
        reconstruct_bits(&[
            runs[0].out[n].clone(),
            runs[1].out[n].clone(),
            runs[2].out[n].clone(),
        ])
        .expect("consistent bit shares")
    }

    /// Extracts `indices` of the dealt shares and checks bits, rounds and bytes.
    fn check(
        shares: [Rep3Fp; 3],
        values: &[u16],
        indices: Vec<usize>,
    ) -> Result<(), TestCaseError> {
        let idx = indices.clone();
        let runs = run_protocol(shares, move |net, prss, x: &Rep3Fp| {
            bit_extract_p(net, prss, x, &idx).unwrap()
        });
        let cost = bit_extract_p_cost(indices.len());
        let words = values.len().div_ceil(64) as u64;
        for r in &runs {
            prop_assert_eq!(r.messages, if values.is_empty() { 0 } else { cost.rounds });
            prop_assert_eq!(r.bytes, cost.bits() * words * 8);
        }
        for (n, &i) in indices.iter().enumerate() {
            let want: Vec<bool> = values.iter().map(|&v| (v >> i) & 1 == 1).collect();
            prop_assert_eq!(reconstruct(&runs, n), want, "bit {}", i);
        }
        Ok(())
    }

    /// Replicated shares with chosen components (x_0, x_1, x_2), to pin the sum c = (x_0 + x_1
    /// mod p) + x_2 at its extremes.
    fn with_components(comps: &[(u16, u16, u16)]) -> [Rep3Fp; 3] {
        let col = |j: usize| -> Vec<u16> { comps.iter().map(|c| [c.0, c.1, c.2][j]).collect() };
        std::array::from_fn(|i| Rep3Fp {
            own: col(i),
            prev: col((i + 2) % 3),
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn bit_extract_p_is_the_bits_of_x_mod_p(seed: u64, n in 0usize..140, picks in proptest::collection::vec(0usize..16, 1..5)) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mut values: Vec<u16> = (0..n).map(|_| rng.random_range(0..P)).collect();
            values.extend(edge_values().iter().map(|&v| v % P));
            let shares = share_fp(&values, &mut rng);
            check(shares, &values, picks)?;
        }

        #[test]
        fn msb_p_over_random_shares(seed: u64, n in 1usize..200) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let values: Vec<u16> = (0..n).map(|_| rng.random_range(0..P)).collect();
            let shares = share_fp(&values, &mut rng);
            let runs = run_protocol(shares, |net, prss, x: &Rep3Fp| msb_p(net, prss, x).unwrap());
            let got = reconstruct_bits(&[runs[0].out.clone(), runs[1].out.clone(), runs[2].out.clone()]).unwrap();
            let want: Vec<bool> = values.iter().map(|&v| v >= 1 << 15).collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn extreme_component_sums() {
        let m = P - 1;
        let comps = vec![
            (0, 0, 0),
            (m, m, m),             // a = p − 2, c = 2p − 3
            (m, 1, m),             // a = 0, c = p − 1
            (m, 2, m),             // a = 1, c = p: exactly one reduction to 0
            (m, 0, m),             // a = p − 1, c = 2p − 2, the largest sum
            (0, 0, m),             // c = p − 1, no reduction
            (1 << 14, 1 << 14, 0), // x = 2^15
            (P - 17, 17 + 32760, 0),
        ];
        let values: Vec<u16> = comps
            .iter()
            .map(|&(a, b, c)| fp::add(fp::add(a, b), c))
            .collect();
        assert_eq!(values[3], 0);
        check(with_components(&comps), &values, (0..16).collect()).unwrap();
    }

    #[test]
    fn paper_cost_for_the_msb() {
        let k = L as u64;
        let c = bit_extract_p_cost(1);
        // Section 5.2: 3k bits in 2k + 1 rounds.
        assert_eq!((c.bits(), c.rounds), (3 * k, 2 * k + 1));
        assert_eq!((c.bits(), c.rounds), (48, 33));
        // Section 4.3.2 counts the generic subtractor: two gates and two rounds more.
        assert_eq!((c.bits() + 2, c.rounds + 2), (3 * k + 2, 2 * k + 3));
        assert_eq!(c.and_gates, 2 * k);
    }

    #[test]
    fn msb_p_counts_on_a_batch() {
        // 128 elements = 2 words per plane: bytes = bits × 2 words × 8.
        let values: Vec<u16> = (0..128u32).map(|i| (i * 517 % P as u32) as u16).collect();
        let shares = share_fp(&values, &mut ChaCha12Rng::seed_from_u64(5));
        let runs = run_protocol(shares, |net, prss, x: &Rep3Fp| msb_p(net, prss, x).unwrap());
        for r in &runs {
            assert_eq!(r.messages, 33);
            assert_eq!(r.bytes, 48 * 2 * 8);
        }
    }

    #[test]
    fn malformed_input_message_is_an_error() {
        let out = crate::net::memory::run_three(|mut t| {
            let mut prss = Prss::from_seeds(t.party(), [1; 16], [2; 16]);
            let x = Rep3Fp::zeros(70);
            if t.party() == 0 {
                let to = t.next();
                t.send(to, vec![0; 17]).unwrap();
                // Stay connected until the third party's first message, so that its sends
                // (and the checked party's) cannot fail for a closed link instead.
                let from = t.prev();
                let _ = t.recv(from);
                return None;
            }
            Some(msb_p(&mut t, &mut prss, &x).map(|_| ()))
        });
        assert!(matches!(
            out[1].as_ref().unwrap(),
            Err(NetError::Protocol { peer: 0, .. })
        ));
    }
}
