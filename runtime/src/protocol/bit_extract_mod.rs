//! The comparison bit of Lemma 2 over Z_t for a modulus t that is not a power of two, e.g. the
//! t = p·2^m of the Shamir instantiation (Section 5.1, "Ring Choices", and Section 5.2, "Final
//! MSB Extraction": "Algorithm 12 for other moduli").
//!
//! This is Algorithm 12 (BitExtractP, see [`super::bit_extract_p`]) with p replaced by t and
//! ℓ by K = ⌈log2 t⌉. Party mapping as there: code parties 0, 1, 2 are the paper's 1, 2, 3.
//! 1. Code party 1 knows x_0 and x_1 and inputs the K bits of a = x_0 + x_1 mod t: every party
//!    takes a PRSS XOR-zero share, party 1 XORs a into its own, all send to the next party. One
//!    round, K bits per element.
//! 2. b = x_2 by InpLocal (known to parties 2 and 0), locally.
//! 3. c = a + b on K + 1 bits (BinAdd, Algorithm 7; c < 2t ≤ 2^(K+1)): K gates, K rounds.
//! 4. d = c − t on K + 1 bits (BinSub with the public t, Algorithm 9). c − t ∈ [−t, t) fits the
//!    signed (K + 1)-bit range, so d[K] is set iff c < t. The borrow chain starts at the lowest
//!    set bit of t, so for t = p·2^m it costs K − m − 1 gates: the paper's "3k − m" saving.
//! 5. The canonical x ∈ [0, t) is c if c < t, else c − t, so its bit K − 1 is
//!    CMux(d[K], c[K−1], d[K−1]) (Algorithm 11): one round.
//!
//! Why bit K − 1 is the comparison (Lemma 2): the value a·ml − b·hd lies in [−b·l, (a+b)·l].
//! Non-negative values are their own representative, below 2^(K−1) when (a+b)·l < t/2; negative
//! values v have representative t + v ≥ t − b·l ≥ 2^(K−1) when b·l < t − 2^(K−1). So under the
//! lemma's conditions the bit is 1 exactly for the negative values.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::share::binary::{clear_tail, words_for};
use crate::share::{BitShares, Rep3Vec};

use super::bin_sub::{bin_sub_public, bin_sub_public_cost};
use super::bit_extract::bit_planes;
use super::{and_many, bin_add, recv_elems, send_elems};

/// The code party that inputs x_0 + x_1 mod t.
const INPUT_PARTY: usize = 1;
/// The component shared by InpLocal, known to parties 2 and 0.
const LOCAL_COMPONENT: usize = 2;

/// K = ⌈log2 t⌉.
pub fn bits_of_modulus(t: u64) -> u32 {
    64 - (t - 1).leading_zeros()
}

/// Rounds and bits each party sends per element for [`msb_mod`] with modulus t: 1 + K + (the
/// public subtraction's chain) + 1 rounds; K input bits plus that many AND gates.
pub fn msb_mod_cost(t: u64) -> (u64, u64) {
    let k = bits_of_modulus(t);
    let sub = bin_sub_public_cost(k + 1, t, false);
    let rounds = 1 + k as u64 + sub.rounds + 1;
    let bits = k as u64 + (k as u64 + sub.and_gates + 1);
    (rounds, bits)
}

/// Step 1: binary shares of the K bit planes of x_0 + x_1 mod t, input by code party 1.
fn input_sum(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Vec<u64>,
    t: u64,
    k: u32,
) -> Result<Vec<BitShares>, NetError> {
    let (n, kk) = (x.len(), k as usize);
    let w = words_for(n);
    let mut comp = prss.zero_bits(w * kk);
    if net.party() == INPUT_PARTY {
        // Components are below t < 2^63, so the sum does not overflow.
        let sum: Vec<u64> = x
            .own
            .iter()
            .zip(&x.prev)
            .map(|(&a, &b)| {
                let s = a + b;
                if s >= t {
                    s - t
                } else {
                    s
                }
            })
            .collect();
        for (j, plane) in bit_planes(&sum, k).iter().enumerate() {
            for (c, &bits) in comp[j * w..(j + 1) * w].iter_mut().zip(plane) {
                *c ^= bits;
            }
        }
    }
    for plane in comp.chunks_mut(w.max(1)) {
        clear_tail(plane, n);
    }
    let to = net.next();
    send_elems(net, to, &comp)?;
    let from = net.prev();
    let got: Vec<u64> = recv_elems(net, from, w * kk, "msb mod t input")?;
    Ok((0..kk)
        .map(|j| {
            BitShares::from_words(
                comp[j * w..(j + 1) * w].to_vec(),
                got[j * w..(j + 1) * w].to_vec(),
                n,
            )
        })
        .collect())
}

/// Binary shares of bit K − 1 (K = ⌈log2 t⌉) of the representative in [0, t) of x, from
/// replicated shares mod t whose components are all below t: 1 iff the value is "negative" in
/// the sense of Lemma 2. Cost [`msb_mod_cost`]; an empty batch sends nothing.
///
/// Panics unless 2 ≤ t < 2^63 (fixed by the program). The caller checks the components.
pub fn msb_mod(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Vec<u64>,
    t: u64,
) -> Result<BitShares, NetError> {
    assert!((2..1 << 63).contains(&t), "msb mod t: t = {t} out of range");
    assert_eq!(x.own.len(), x.prev.len(), "component lengths differ");
    let n = x.len();
    if n == 0 {
        return Ok(BitShares::zeros(0));
    }
    let k = bits_of_modulus(t);
    let party = net.party();
    let a = input_sum(net, prss, x, t, k)?;
    let known: Vec<Vec<u64>> = if party == LOCAL_COMPONENT {
        bit_planes(&x.own, k)
    } else if party == (LOCAL_COMPONENT + 1) % 3 {
        bit_planes(&x.prev, k)
    } else {
        Vec::new()
    };
    let b: Vec<BitShares> = (0..k as usize)
        .map(|j| {
            BitShares::inp_local(
                party,
                LOCAL_COMPONENT,
                known.get(j).map_or(&[][..], |v| v),
                n,
            )
        })
        .collect();
    let c = bin_add(net, prss, &a, &b, true)?;
    let d = bin_sub_public(net, prss, &c, t, false)?;
    let top = k as usize - 1;
    let diff = c[top].xor(&d[top]);
    let sel = and_many(net, prss, &[(&d[k as usize], &diff)])?
        .pop()
        .expect("one pair in, one result out");
    Ok(d[top].xor(&sel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::share::binary::reconstruct_bits;
    use crate::share::fp::P;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// Replicated shares mod t with components chosen uniformly below t.
    fn deal(v: &[u64], t: u64, rng: &mut ChaCha12Rng) -> [Rep3Vec<u64>; 3] {
        let c0: Vec<u64> = v.iter().map(|_| rng.random_range(0..t)).collect();
        let c1: Vec<u64> = v.iter().map(|_| rng.random_range(0..t)).collect();
        let c2: Vec<u64> = v
            .iter()
            .zip(c0.iter().zip(&c1))
            .map(|(&x, (&a, &b))| {
                ((x as u128 + 2 * t as u128 - a as u128 - b as u128) % t as u128) as u64
            })
            .collect();
        [
            Rep3Vec {
                own: c0.clone(),
                prev: c2.clone(),
            },
            Rep3Vec {
                own: c1.clone(),
                prev: c0,
            },
            Rep3Vec { own: c2, prev: c1 },
        ]
    }

    fn check(v: Vec<u64>, t: u64, seed: u64) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let s = deal(&v, t, &mut rng);
        let runs = run_protocol(s, move |net, prss, x: &Rep3Vec<u64>| {
            msb_mod(net, prss, x, t).unwrap()
        });
        let k = bits_of_modulus(t);
        let (rounds, bits) = msb_mod_cost(t);
        let words = v.len().div_ceil(64) as u64;
        for r in &runs {
            prop_assert_eq!(r.messages, if v.is_empty() { 0 } else { rounds });
            prop_assert_eq!(r.bytes, bits * words * 8);
        }
        let got = reconstruct_bits(&[
            runs[0].out.clone(),
            runs[1].out.clone(),
            runs[2].out.clone(),
        ])
        .unwrap();
        let want: Vec<bool> = v.iter().map(|&x| x >= 1 << (k - 1)).collect();
        prop_assert_eq!(got, want, "t = {}", t);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn msb_mod_is_bit_k_minus_1(seed: u64, m in prop_oneof![Just(1u32), Just(20), Just(47), 1u32..=47], n in 0usize..80, other in any::<bool>()) {
            // t = p·2^m, or an arbitrary odd-ish modulus of the same size.
            let t = if other { ((P as u64) << m) - 3 } else { (P as u64) << m };
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let k = bits_of_modulus(t);
            let h = 1u64 << (k - 1);
            let mut v: Vec<u64> = (0..n).map(|_| rng.random_range(0..t)).collect();
            v.extend([0, 1, h - 1, h, h + 1, t - 1, t - 2]);
            check(v, t, seed)?;
        }
    }

    #[test]
    fn cost_for_p_times_2_to_m() {
        // K = 16 + m; the subtraction chain starts at bit m: 3K − m bits (+1 for the CMux
        // gate and the top position) as Section 5.2 counts.
        let t = (P as u64) << 20;
        assert_eq!(bits_of_modulus(t), 36);
        let (rounds, bits) = msb_mod_cost(t);
        assert_eq!(bits, 36 + 36 + 15 + 1);
        assert_eq!(rounds, 1 + 36 + 15 + 1);
        assert_eq!(bits_of_modulus(1 << 20), 20);
        assert_eq!(bits_of_modulus((1 << 20) + 1), 21);
    }
}
