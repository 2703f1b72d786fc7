//! Algorithm 17, BitInject: binary shares \[x\]_2 to arithmetic shares \[x\]_2^k (after Mohassel
//! and Rindal), batched over a bit-sliced vector.
//!
//! Let x = x_0 ⊕ x_1 ⊕ x_2 (party i holds x_i and x_{i−1}). The output components are
//! c_0, c_1, c_2 with c_0 + c_1 + c_2 = x mod 2^k:
//! - c_0 is drawn from seed s_0 (parties 0 and 1), c_2 from s_2 (parties 2 and 0);
//! - party 0 knows x_0 ⊕ x_2, so it offers m_b = (b ⊕ x_0 ⊕ x_2) − c_0 − c_2 for b ∈ {0, 1};
//! - parties 1 and 2 both know x_1, so party 1 obtains c_1 = m_{x_1} = x − c_0 − c_2 by the
//!   3-party OT ([`super::ot3()`], sender 0, receiver 1, helper 2) and forwards it to party 2,
//!   which lacks that component.
//!
//! In the paper's numbering (parties 1..3, seed_i held by parties i and i+1) this is exactly
//! Algorithm 17: paper party j is party j − 1 here, seed_1 is s_0 and seed_3 is s_2, and c_1,
//! c_2, c_3 of the paper are c_0, c_1, c_2 here. c_0 and c_2 are fresh PRSS values and c_1 is
//! x minus them, so the output shares are fresh whatever the input shares were.
//!
//! Cost for n bits: 2 rounds (the OT, then party 1 → party 2), one message per party, 4n ring
//! elements in all in the storage width of `T`: party 0 sends 2n, party 1 n, party 2 n (see
//! [`bit_inject_bytes`]). No AND gates. An empty batch sends nothing.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::{mask_slice, RingElem};
use crate::share::{BitShares, Rep3Vec};

use super::ot3::{expand_bits, ot3, Ot3Input, Ot3Roles};
use super::{recv_elems, send_elems};

/// Bytes party `party` sends in [`bit_inject`] of `n` bits into storage `T`.
pub fn bit_inject_bytes<T: RingElem>(party: usize, n: usize) -> u64 {
    let elems = if party == 0 { 2 * n } else { n };
    (elems * std::mem::size_of::<T>()) as u64
}

/// Algorithm 17, BitInject(\[x\]_2, 2^k) → \[x\]_2^k for every bit of `bits`, in 2 rounds.
///
/// Panics unless `1 <= k <= T::BITS` (fixed by the compiler). A malformed peer message is
/// [`NetError::Protocol`].
#[doc(alias = "BitInject")]
pub fn bit_inject<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    bits: &BitShares,
    k: u32,
) -> Result<Rep3Vec<T>, NetError> {
    assert!(
        k >= 1 && k <= T::BITS,
        "bit injection: Z_2^{k} does not fit {}-bit storage",
        T::BITS
    );
    let n = bits.len;
    let me = net.party();
    // own = F(s_me), prev = F(s_{me−1}): c_0 at parties 0 (own) and 1 (prev), c_2 at parties 2
    // (own) and 0 (prev). Party 1's own and party 2's prev (s_1) are not needed but are drawn
    // so that all streams stay aligned.
    let mut c = prss.random_rep3::<T>(n);
    c.reduce(k);
    let roles = Ot3Roles::new(0, 1);
    match me {
        0 => {
            let (c0, c2) = (&c.own, &c.prev);
            let x02: Vec<u64> = bits
                .own
                .iter()
                .zip(&bits.prev)
                .map(|(a, b)| a ^ b)
                .collect();
            let x02: Vec<T> = expand_bits(&x02, n);
            let base: Vec<T> = c0
                .iter()
                .zip(c2)
                .map(|(&a, &b)| T::ZERO.wrapping_sub(a).wrapping_sub(b))
                .collect();
            let m0: Vec<T> = base
                .iter()
                .zip(&x02)
                .map(|(&b, &x)| b.wrapping_add(x))
                .collect();
            let m1: Vec<T> = base
                .iter()
                .zip(&x02)
                .map(|(&b, &x)| b.wrapping_add(T::ONE).wrapping_sub(x))
                .collect();
            ot3(
                net,
                prss,
                roles,
                Ot3Input::Sender { m0: &m0, m1: &m1 },
                n,
                k,
            )?;
            Ok(c)
        }
        1 => {
            let c1 = ot3::<T>(
                net,
                prss,
                roles,
                Ot3Input::Receiver { choice: &bits.own },
                n,
                k,
            )?
            .expect("the receiver gets the chosen messages");
            if n > 0 {
                send_elems(net, 2, &c1)?;
            }
            Ok(Rep3Vec {
                own: c1,
                prev: c.prev,
            })
        }
        _ => {
            ot3::<T>(
                net,
                prss,
                roles,
                Ot3Input::Helper { choice: &bits.prev },
                n,
                k,
            )?;
            let mut c1: Vec<T> = if n > 0 {
                recv_elems(net, 1, n, "injected component")?
            } else {
                Vec::new()
            };
            // A peer's bits above k would otherwise survive into later arithmetic.
            mask_slice(&mut c1, k);
            Ok(Rep3Vec {
                own: c.own,
                prev: c1,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::protocol::Stats;
    use crate::ring::{mask, storage_for, Width};
    use crate::share::binary::share_bits;
    use crate::share::rep3::{consistent, reconstruct};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    /// Shares `bits`, injects them twice into Z_2^k, and checks values, costs and freshness.
    fn check<T: RingElem>(bits: &[bool], k: u32, seed: u64) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let shares = share_bits(bits, &mut rng);
        let runs = run_protocol(shares, move |net, prss, b: &BitShares| {
            let x = bit_inject::<T>(net, prss, b, k).unwrap();
            let y = bit_inject::<T>(net, prss, b, k).unwrap();
            (x, y)
        });
        let n = bits.len();
        for (p, r) in runs.iter().enumerate() {
            // Two calls, one message each (none for an empty batch).
            prop_assert_eq!(r.messages, 2 * (n > 0) as u64);
            prop_assert_eq!(r.bytes, 2 * bit_inject_bytes::<T>(p, n));
        }
        let want: Vec<T> = bits.iter().map(|&b| T::from_u64(b as u64)).collect();
        let x: [Rep3Vec<T>; 3] = std::array::from_fn(|i| runs[i].out.0.clone());
        let y: [Rep3Vec<T>; 3] = std::array::from_fn(|i| runs[i].out.1.clone());
        for s in [&x, &y] {
            prop_assert!(consistent(s, k));
            prop_assert_eq!(reconstruct(s, k), want.clone());
            prop_assert!(s.iter().all(|p| p
                .own
                .iter()
                .chain(&p.prev)
                .all(|v| v.to_u64() & !mask(k) == 0)));
        }
        if k >= 16 && n >= 4 {
            for p in 0..3 {
                prop_assert_ne!(&x[p].own, &y[p].own);
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn injects_every_bit(k in 1u32..=64, seed: u64, bits in proptest::collection::vec(any::<bool>(), 0..200)) {
            match storage_for(k) {
                Width::U16 => check::<u16>(&bits, k, seed)?,
                Width::U32 => check::<u32>(&bits, k, seed)?,
                Width::U64 => check::<u64>(&bits, k, seed)?,
            }
        }

        #[test]
        fn injects_into_wider_storage(seed: u64, bits in proptest::collection::vec(any::<bool>(), 1..130)) {
            // Z_2^5 in u64 words: the storage need not be the smallest one.
            check::<u64>(&bits, 5, seed)?;
            check::<u32>(&bits, 32, seed)?;
        }
    }

    #[test]
    fn cost_matches_stats() {
        assert_eq!(
            Stats::bit_inject(),
            Stats {
                rounds: 2,
                and_gates: 0
            }
        );
        assert_eq!(bit_inject_bytes::<u16>(0, 10), 40);
        assert_eq!(bit_inject_bytes::<u64>(2, 10), 80);
    }

    /// Runs party `bad` as a sender of `junk` to `to` instead of the protocol; returns what the
    /// honest parties got.
    fn with_junk(bad: usize, to: usize, junk: Vec<u8>) -> [Option<Result<(), NetError>>; 3] {
        crate::net::memory::run_three(move |mut t| {
            let mut prss = Prss::from_seeds(t.party(), [3; 16], [3; 16]);
            let b = BitShares::zeros(100);
            if t.party() == bad {
                t.send(to, junk.clone()).unwrap();
                if bad == 1 {
                    // Party 1 also has to hear the OT messages before it may misbehave.
                    let _ = t.recv(0);
                    let _ = t.recv(2);
                }
                return None;
            }
            Some(bit_inject::<u32>(&mut t, &mut prss, &b, 20).map(|_| ()))
        })
    }

    #[test]
    fn malformed_messages_are_protocol_errors() {
        // Sender's masked messages too short, helper's pads too long, forwarded component short.
        for (bad, to, len, victim) in [(0, 1, 799, 1), (2, 1, 401, 1), (1, 2, 396, 2)] {
            let out = with_junk(bad, to, vec![0xff; len]);
            let err = out[victim].as_ref().unwrap().as_ref().unwrap_err();
            assert!(
                matches!(err, NetError::Protocol { peer, .. } if *peer == bad),
                "{err}"
            );
        }
    }
}
