//! Lifting replicated shares to a larger power-of-two ring (Section 5, Appendix E Algorithms 13
//! and 14).
//!
//! [`const_lift`] (Algorithm 13, ConstLift) is local: a component a_i of \[a\]_c read as an
//! element of Z_{c·d} and multiplied by d gives d·Σa_i = d·a + (multiple of c·d), so the
//! products share d·a mod c·d.
//!
//! [`mpc_lift`] (Algorithm 14, Lift) turns \[x\]_2^k into \[x\]_2^(k+m). Read as integers,
//! the three components of \[x\]_2^k (each in [0, 2^k)) sum to x' = x + 2^k·q with
//! q = b_k + 2·b_(k+1) ∈ {0, 1, 2}, where b_k, b_(k+1) are bits k and k+1 of x'. Reading the
//! components in Z_2^(k+m) (InpLocal per component, no interaction) therefore shares x';
//! BitExtract (Algorithm 10) yields \[b_k\]_2 and \[b_(k+1)\]_2; BitInject (Algorithm 17)
//! turns them into shares of the smaller ring Z_2^m, as Section 5 suggests (which here also
//! allows narrower storage words on the wire); \[q\]_2^m = \[b_k\] + 2·\[b_(k+1)\]; ConstLift
//! by 2^k gives \[2^k·q\]_2^(k+m); and the result is \[x'\]_2^(k+m) − \[2^k·q\]_2^(k+m).
//! For m = 1 the term 2^(k+1)·b_(k+1) vanishes mod 2^(k+1), so only bit k is extracted.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::{mask, mask_slice, storage_for, RingElem, Width};
use crate::share::{BitShares, Rep3Vec};

use super::bit_extract::bit_extract;
use super::bit_inject::{bit_inject, bit_inject_bytes};
use super::Stats;

/// Algorithm 13, ConstLift(\[a\]_c, d) → \[a·d\]_(c·d) for c = 2^`c_bits` and d = 2^`d_bits`: each
/// component, reduced to Z_c, is read in Z_(c·d) and multiplied by d. Local, and the storage
/// may change (`T` holds Z_c, `U` holds Z_(c·d)).
///
/// Panics unless `c_bits <= T::BITS` and `c_bits + d_bits <= U::BITS` (fixed by the compiler).
#[doc(alias = "ConstLift")]
pub fn const_lift<T: RingElem, U: RingElem>(
    a: &Rep3Vec<T>,
    c_bits: u32,
    d_bits: u32,
) -> Rep3Vec<U> {
    assert!(
        c_bits <= T::BITS && c_bits + d_bits <= U::BITS,
        "ConstLift: Z_2^{c_bits} in {}-bit words to Z_2^{} in {}-bit words does not fit",
        T::BITS,
        c_bits + d_bits,
        U::BITS
    );
    let lift = |v: &[T]| -> Vec<U> {
        v.iter()
            // c + d ≤ 64, so the shift overflows only when d = 64 and c = 0, i.e. the value is 0.
            .map(|x| U::from_u64((x.to_u64() & mask(c_bits)).checked_shl(d_bits).unwrap_or(0)))
            .collect()
    };
    Rep3Vec {
        own: lift(&a.own),
        prev: lift(&a.prev),
    }
}

/// The bits of x' that [`mpc_lift`] extracts: k and k+1 (only k when m = 1).
fn overflow_bits(k: u32, m: u32) -> Vec<usize> {
    if m >= 2 {
        vec![k as usize, k as usize + 1]
    } else {
        vec![k as usize]
    }
}

/// Bytes party `party` sends in [`mpc_lift`] of `n` elements: the AND layers of BitExtract
/// (one bit-sliced word vector per gate) and the BitInject of the overflow bits into Z_2^m,
/// stored in the smallest word for m bits.
pub fn mpc_lift_bytes(party: usize, n: usize, k: u32, m: u32) -> u64 {
    if m == 0 || n == 0 {
        return 0;
    }
    let words = crate::share::binary::words_for(n) as u64;
    let gates = Stats::mpc_lift(k, m).and_gates;
    let bits = overflow_bits(k, m).len() * n;
    let inject = match storage_for(m) {
        Width::U16 => bit_inject_bytes::<u16>(party, bits),
        Width::U32 => bit_inject_bytes::<u32>(party, bits),
        Width::U64 => bit_inject_bytes::<u64>(party, bits),
    };
    gates * words * 8 + inject
}

/// Algorithm 14, Lift(\[x\]_2^k, 2^(k+m)) → \[x\]_2^(k+m).
///
/// Semantics: the result shares the unsigned residue of x mod 2^k, i.e. the integer in
/// [0, 2^k) that x represents, now as an element of Z_2^(k+m). It is NOT a sign extension:
/// −1 ∈ Z_2^k lifts to 2^k − 1, not to 2^(k+m) − 1. Bits of the input storage above k are
/// ignored; the output is reduced to k+m bits. The storage may change (`T` holds Z_2^k, `U`
/// holds Z_2^(k+m)), e.g. u16 shares of Z_2^16 to u32 shares of Z_2^32.
///
/// Cost: [`Stats::mpc_lift`] (k+3 rounds and 2k+1 AND gates per element for m ≥ 2) and
/// [`mpc_lift_bytes`]. Each party sends rounds − 1 messages for a non-empty batch (BitInject's
/// two rounds carry one message per party). m = 0 is a local re-reading that keeps the input
/// components (no fresh randomness).
///
/// Panics unless `1 <= k <= T::BITS` and `k + m <= U::BITS` (fixed by the compiler). A
/// malformed peer message is [`NetError::Protocol`].
#[doc(alias = "Lift")]
#[doc(alias = "MPCLift")]
pub fn mpc_lift<T: RingElem, U: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &Rep3Vec<T>,
    k: u32,
    m: u32,
) -> Result<Rep3Vec<U>, NetError> {
    assert!(
        k >= 1 && k <= T::BITS && k + m <= U::BITS,
        "Lift: Z_2^{k} in {}-bit words to Z_2^{} in {}-bit words does not fit",
        T::BITS,
        k + m,
        U::BITS
    );
    // The sum of the three InpLocal shares of the components is the components themselves.
    let wide: Rep3Vec<U> = const_lift(x, k, 0);
    if m == 0 {
        return Ok(wide);
    }
    let idx = overflow_bits(k, m);
    let bits = bit_extract(net, prss, &wide, k + m, &idx)?;
    let refs: Vec<&BitShares> = bits.iter().collect();
    let all = BitShares::concat(&refs);
    let corr: Rep3Vec<U> = match storage_for(m) {
        Width::U16 => correction::<u16, U>(net, prss, &all, k, m)?,
        Width::U32 => correction::<u32, U>(net, prss, &all, k, m)?,
        Width::U64 => correction::<u64, U>(net, prss, &all, k, m)?,
    };
    let mut out = wide.sub(&corr);
    out.reduce(k + m);
    Ok(out)
}

/// \[2^k·q\]_2^(k+m) from the overflow bits `bits` (b_k for all elements, then b_(k+1) if
/// m ≥ 2): BitInject into Z_2^m in storage `V`, q = b_k + 2·b_(k+1), ConstLift by 2^k.
fn correction<V: RingElem, U: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    bits: &BitShares,
    k: u32,
    m: u32,
) -> Result<Rep3Vec<U>, NetError> {
    let injected: Rep3Vec<V> = bit_inject(net, prss, bits, m)?;
    let n = if m >= 2 { bits.len / 2 } else { bits.len };
    let mut q = Rep3Vec {
        own: injected.own[..n].to_vec(),
        prev: injected.prev[..n].to_vec(),
    };
    if m >= 2 {
        let hi = Rep3Vec {
            own: injected.own[n..].to_vec(),
            prev: injected.prev[n..].to_vec(),
        };
        q = q.add(&hi.add(&hi));
    }
    mask_slice(&mut q.own, m);
    mask_slice(&mut q.prev, m);
    Ok(const_lift(&q, m, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::{edge_values, run_protocol};
    use crate::share::rep3::{consistent, reconstruct, share_vec};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    /// Shares `values` in Z_2^k (storage T), lifts twice to Z_2^(k+m) (storage U) and checks
    /// the value, the replication, the costs and the freshness of the shares.
    fn check<T: RingElem, U: RingElem>(
        values: &[u64],
        k: u32,
        m: u32,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let v: Vec<T> = values.iter().map(|&x| T::from_u64(x & mask(k))).collect();
        let shares = share_vec(&v, k, &mut rng);
        let runs = run_protocol(shares, move |net, prss, x: &Rep3Vec<T>| {
            let a: Rep3Vec<U> = mpc_lift(net, prss, x, k, m).unwrap();
            let b: Rep3Vec<U> = mpc_lift(net, prss, x, k, m).unwrap();
            (a, b)
        });
        let n = values.len();
        let st = Stats::mpc_lift(k, m);
        for (p, r) in runs.iter().enumerate() {
            let msgs = if n == 0 || m == 0 { 0 } else { st.rounds - 1 };
            prop_assert_eq!(r.messages, 2 * msgs, "party {} k {} m {}", p, k, m);
            prop_assert_eq!(r.bytes, 2 * mpc_lift_bytes(p, n, k, m));
        }
        let want: Vec<U> = values.iter().map(|&x| U::from_u64(x & mask(k))).collect();
        let a: [Rep3Vec<U>; 3] = std::array::from_fn(|i| runs[i].out.0.clone());
        let b: [Rep3Vec<U>; 3] = std::array::from_fn(|i| runs[i].out.1.clone());
        for s in [&a, &b] {
            prop_assert!(consistent(s, k + m));
            prop_assert_eq!(reconstruct(s, k + m), want.clone(), "k {} m {}", k, m);
            prop_assert!(s.iter().all(|p| p
                .own
                .iter()
                .chain(&p.prev)
                .all(|v| v.to_u64() & !mask(k + m) == 0)));
        }
        // m = 0 is a local re-reading, which keeps the input components.
        if m > 0 && k + m >= 16 && n >= 4 {
            for p in 0..3 {
                prop_assert_ne!(&a[p].own, &b[p].own);
            }
        }
        Ok(())
    }

    fn dispatch(values: &[u64], k: u32, m: u32, seed: u64) -> Result<(), TestCaseError> {
        match (storage_for(k), storage_for(k + m)) {
            (Width::U16, Width::U16) => check::<u16, u16>(values, k, m, seed),
            (Width::U16, Width::U32) => check::<u16, u32>(values, k, m, seed),
            (Width::U16, Width::U64) => check::<u16, u64>(values, k, m, seed),
            (Width::U32, Width::U32) => check::<u32, u32>(values, k, m, seed),
            (Width::U32, Width::U64) => check::<u32, u64>(values, k, m, seed),
            (Width::U64, _) => check::<u64, u64>(values, k, m, seed),
            (Width::U32, Width::U16) => unreachable!("k + m >= k"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn lift_keeps_the_unsigned_residue(
            k in 2u32..=48,
            m_frac in 0.0f64..1.0,
            seed: u64,
            raw in proptest::collection::vec(any::<u64>(), 0..140),
        ) {
            let m = 1 + ((64 - k) as f64 * m_frac) as u32;
            let mut values = raw;
            values.extend(edge_values(k));
            dispatch(&values, k, m, seed)?;
        }

        #[test]
        fn const_lift_multiplies(
            c in 1u32..=32,
            d in 0u32..=32,
            seed: u64,
            raw in proptest::collection::vec(any::<u64>(), 0..100),
        ) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mut values = raw;
            values.extend(edge_values(c.max(2)));
            let v: Vec<u64> = values.iter().map(|x| x & mask(c)).collect();
            let s = share_vec(&v, c, &mut rng);
            let out: [Rep3Vec<u64>; 3] = std::array::from_fn(|i| const_lift(&s[i], c, d));
            prop_assert!(consistent(&out, c + d));
            let want: Vec<u64> = v.iter().map(|x| (x << d) & mask(c + d)).collect();
            prop_assert_eq!(reconstruct(&out, c + d), want);
        }
    }

    #[test]
    fn paper_setting_u16_to_u32_and_to_36_bits() {
        // Section 6: 16-bit values lifted by b = 2^20 to 36 bits; also Z_2^16 → Z_2^32.
        let mut values = edge_values(16);
        values.extend((0..200u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
        for (k, m) in [(16, 16), (16, 20), (16, 1), (16, 2), (16, 0)] {
            let seed = (k * 100 + m) as u64;
            match storage_for(k + m) {
                Width::U16 => check::<u16, u16>(&values, k, m, seed).unwrap(),
                Width::U32 => check::<u16, u32>(&values, k, m, seed).unwrap(),
                Width::U64 => check::<u16, u64>(&values, k, m, seed).unwrap(),
            }
        }
        assert_eq!(
            Stats::mpc_lift(16, 20),
            Stats {
                rounds: 19,
                and_gates: 33
            }
        );
        assert_eq!(Stats::mpc_lift(16, 0), Stats::default());
    }

    #[test]
    fn empty_batch_sends_nothing() {
        check::<u32, u64>(&[], 20, 30, 1).unwrap();
    }

    #[test]
    fn lifted_negative_is_not_sign_extended() {
        let s = share_vec(&[u16::MAX], 16, &mut ChaCha12Rng::seed_from_u64(5));
        let runs = run_protocol(s, |net, prss, x: &Rep3Vec<u16>| {
            mpc_lift::<u16, u64>(net, prss, x, 16, 48).unwrap()
        });
        let out = [
            runs[0].out.clone(),
            runs[1].out.clone(),
            runs[2].out.clone(),
        ];
        assert_eq!(reconstruct(&out, 64), vec![0xffff]);
    }

    #[test]
    fn malformed_message_is_a_protocol_error() {
        let out = crate::net::memory::run_three(|mut t| {
            let mut prss = Prss::from_seeds(t.party(), [9; 16], [9; 16]);
            let x: Rep3Vec<u16> = Rep3Vec::zeros(70);
            if t.party() == 2 {
                let to = t.next();
                t.send(to, vec![0; 3]).unwrap();
                // Stay until party 1's first message, so its send cannot fail first.
                let from = t.prev();
                let _ = t.recv(from);
                return None;
            }
            Some(mpc_lift::<u16, u32>(&mut t, &mut prss, &x, 16, 16).map(|_| ()))
        });
        let err = out[0].as_ref().unwrap().as_ref().unwrap_err();
        assert!(matches!(err, NetError::Protocol { peer: 2, .. }), "{err}");
    }
}
