//! Lifting replicated shares mod p to shares mod p · 2^m (Section 5.1, "Lifting in Prime
//! Fields", and Appendix E Algorithm 15, LiftP, whose printed text is garbled; this follows
//! Section 5.1).
//!
//! Read as integers, the three components x_0, x_1, x_2 ∈ [0, p) sum to x' ∈ [0, 3p), and
//! x = x' − p·[x' ≥ p] − p·[x' ≥ 2p]. So:
//! 1. (local) each component is read in Z_{2^(ℓ+2)}, where x' is exact (3p < 2^(ℓ+2));
//! 2. the overflow bits o_1 = msb(x' − p) and o_2 = msb(x' − 2p) of Z_{2^(ℓ+2)} (bit ℓ + 1: both
//!    differences lie in the signed (ℓ + 2)-bit range) come from one batched BitExtract
//!    (Algorithm 10), so ¬o_1 = [x' ≥ p] and ¬o_2 = [x' ≥ 2p];
//! 3. ¬o_1, ¬o_2 are bit-injected into Z_{2^m} (Algorithm 17, BitInject);
//! 4. (local) ConstLift (Algorithm 13) turns [¬o]_{2^m} into [p·¬o]_{p·2^m} by multiplying each
//!    component by p, and the result is [x']_{p·2^m} − [p·¬o_1] − [p·¬o_2].
//!
//! Step 3 is [`crate::protocol::bit_inject`]; the halves around it ([`lift_p_overflow_bits`],
//! [`lift_p_combine`]) are public so a caller can batch the injection with other bits.
//!
//! Shares mod N = p · 2^m are [`Rep3Vec<u64>`] with every component in [0, N); this needs
//! 1 ≤ m ≤ 47 so that N < 2^63 and a sum of two components does not overflow u64.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::mask;
use crate::share::fp::{Rep3Fp, L, P};
use crate::share::{BitShares, Rep3Vec};

use super::bit_extract;

/// The ring the overflow bits are extracted in: Z_{2^(ℓ+2)}.
const K_OVERFLOW: u32 = L + 2;

/// The target modulus p · 2^m. Panics unless 1 ≤ m ≤ 47 (m is fixed by the program).
pub fn lifted_modulus(m: u32) -> u64 {
    assert!((1..=47).contains(&m), "LiftP: m = {m} is not in 1..=47");
    (P as u64) << m
}

/// Steps 1–2: binary shares of [¬o_1 ‖ ¬o_2] = [x' ≥ p] ‖ [x' ≥ 2p], 2n bits for n elements.
/// ℓ + 1 = 17 rounds and 2 × 33 AND gates per element (one BitExtract of bit 17 in Z_{2^18},
/// batched over both differences).
pub fn lift_p_overflow_bits(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Fp,
) -> Result<BitShares, NetError> {
    let party = net.party();
    let n = x.len();
    let widen = |v: &[u16]| -> Vec<u32> { v.iter().map(|&c| c as u32).collect() };
    let base = Rep3Vec {
        own: widen(&x.own),
        prev: widen(&x.prev),
    };
    let ring = mask(K_OVERFLOW) as u32 + 1;
    let mut y = Rep3Vec {
        own: [base.own.clone(), base.own].concat(),
        prev: [base.prev.clone(), base.prev].concat(),
    };
    let minus: Vec<u32> = (0..2 * n)
        .map(|j| ring - if j < n { P as u32 } else { 2 * P as u32 })
        .collect();
    y.add_public(party, K_OVERFLOW, &minus);
    let o = bit_extract(net, prss, &y, K_OVERFLOW, &[K_OVERFLOW as usize - 1])?
        .pop()
        .expect("one index in, one bit out");
    Ok(o.not(party))
}

/// Step 4 (ConstLift and the correction), local: shares mod p·2^m of x, from the shares of x
/// and the injected [¬o_1 ‖ ¬o_2] as shares mod 2^m (length 2n; components are reduced mod 2^m
/// here).
pub fn lift_p_combine(x: &Rep3Fp, injected: &Rep3Vec<u64>, m: u32) -> Rep3Vec<u64> {
    let n = x.len();
    assert_eq!(
        injected.len(),
        2 * n,
        "LiftP: injected bits are not 2 × the batch"
    );
    let big = lifted_modulus(m);
    let p = P as u64;
    let sub = |a: u64, b: u64| if a >= b { a - b } else { a + (big - b) };
    let side = |xs: &[u16], inj: &[u64]| -> Vec<u64> {
        xs.iter()
            .enumerate()
            .map(|(j, &xj)| {
                // ConstLift: a component of Z_{2^m} times p is a component of Z_{p·2^m}.
                let a = p * (inj[j] & mask(m));
                let b = p * (inj[n + j] & mask(m));
                sub(sub(xj as u64, a), b)
            })
            .collect()
    };
    Rep3Vec {
        own: side(&x.own, &injected.own),
        prev: side(&x.prev, &injected.prev),
    }
}

/// Algorithm 15, LiftP: replicated shares mod p·2^m of the canonical x ∈ [0, p), from
/// replicated shares mod p. The overflow bits are injected into Z_{2^m} with Algorithm 17
/// (BitInject), once, on all 2n bits.
/// Cost: ℓ + 1 rounds and 66 AND gates per element, plus the injection's 2 rounds.
#[doc(alias = "LiftP")]
pub fn lift_p(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Fp,
    m: u32,
) -> Result<Rep3Vec<u64>, NetError> {
    lifted_modulus(m);
    let bits = lift_p_overflow_bits(net, prss, x)?;
    let injected = crate::protocol::bit_inject::bit_inject::<u64>(net, prss, &bits, m)?;
    Ok(lift_p_combine(x, &injected, m))
}

/// Dealer side (tests): recombines shares mod p·2^m.
pub fn reconstruct_lifted(shares: &[Rep3Vec<u64>; 3], m: u32) -> Vec<u64> {
    let big = lifted_modulus(m) as u128;
    (0..shares[0].len())
        .map(|j| {
            let s: u128 = shares.iter().map(|s| s.own[j] as u128).sum();
            (s % big) as u64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::share::binary::reconstruct_bits;
    use crate::share::fp::share_fp;
    use crate::share::rep3::consistent;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    fn values(n: usize, rng: &mut ChaCha12Rng) -> Vec<u16> {
        let mut v: Vec<u16> = (0..n).map(|_| rng.random_range(0..P)).collect();
        v.extend([0, 1, P - 1, P - 2, (P - 1) / 2, P.div_ceil(2), 1 << 15]);
        v
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn overflow_bits_count_the_reductions(seed: u64, n in 0usize..100) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let v = values(n, &mut rng);
            let shares = share_fp(&v, &mut rng);
            let sums: Vec<u32> = (0..v.len())
                .map(|j| shares.iter().map(|s| s.own[j] as u32).sum())
                .collect();
            let runs = run_protocol(shares, |net, prss, x: &Rep3Fp| lift_p_overflow_bits(net, prss, x).unwrap());
            prop_assert!(runs.iter().all(|r| r.messages == 17));
            let got = reconstruct_bits(&[runs[0].out.clone(), runs[1].out.clone(), runs[2].out.clone()]).unwrap();
            let p = P as u32;
            let want: Vec<bool> = sums.iter().map(|&s| s >= p).chain(sums.iter().map(|&s| s >= 2 * p)).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn lift_p_keeps_the_value(seed: u64, n in 0usize..100, m in prop_oneof![Just(1u32), Just(2), Just(20), Just(47), 1u32..=47]) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let v = values(n, &mut rng);
            let shares = share_fp(&v, &mut rng);
            let runs = run_protocol(shares, move |net, prss, x: &Rep3Fp| lift_p(net, prss, x, m).unwrap());
            let out = [runs[0].out.clone(), runs[1].out.clone(), runs[2].out.clone()];
            prop_assert!(consistent(&out, 64));
            let big = lifted_modulus(m);
            prop_assert!(out.iter().all(|s| s.own.iter().all(|&c| c < big)));
            let want: Vec<u64> = v.iter().map(|&x| x as u64).collect();
            prop_assert_eq!(reconstruct_lifted(&out, m), want);
        }
    }

    #[test]
    fn combine_handles_the_largest_component_sum() {
        // x' = 3(p − 1) = 2p + (p − 3): both overflow bits set, x = p − 3.
        let c = P - 1;
        let x: [Rep3Fp; 3] = std::array::from_fn(|_| Rep3Fp {
            own: vec![c],
            prev: vec![c],
        });
        let inj: [Rep3Vec<u64>; 3] = std::array::from_fn(|i| Rep3Vec {
            own: if i == 0 { vec![1, 1] } else { vec![0, 0] },
            prev: if i == 1 { vec![1, 1] } else { vec![0, 0] },
        });
        let out: [Rep3Vec<u64>; 3] = std::array::from_fn(|i| lift_p_combine(&x[i], &inj[i], 5));
        assert_eq!(reconstruct_lifted(&out, 5), vec![(P - 3) as u64]);
    }

    #[test]
    fn malformed_extraction_message_is_an_error() {
        let out = crate::net::memory::run_three(|mut t| {
            let mut prss = Prss::from_seeds(t.party(), [1; 16], [2; 16]);
            let x = Rep3Fp::zeros(10);
            if t.party() == 2 {
                let to = t.next();
                t.send(to, vec![0; 3]).unwrap();
                // Stay connected until the third party's first message, so that its sends
                // (and the checked party's) cannot fail for a closed link instead.
                let from = t.prev();
                let _ = t.recv(from);
                return None;
            }
            Some(lift_p_overflow_bits(&mut t, &mut prss, &x).map(|_| ()))
        });
        assert!(matches!(
            out[0].as_ref().unwrap(),
            Err(NetError::Protocol { peer: 2, .. })
        ));
    }
}
