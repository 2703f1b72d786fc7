//! Reshare: additive shares back to replicated shares, with re-randomisation (Appendix C).
//!
//! After a local product or dot product, party i holds only an additive share z_i whose
//! distribution depends on its inputs. It adds the PRSS zero share α_i (so z_i + α_i is
//! uniformly random to anyone but i), reduces to k bits and sends it to party i + 1, which
//! stores it as its `prev` component. One round, one message per party.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::{mask_slice, RingElem};
use crate::share::fp::{self, Rep3Fp};
use crate::share::{AddVec, Rep3Vec};

use super::{recv_elems, send_elems};

/// Turns additive shares of values in Z_2^k into fresh replicated shares.
pub fn reshare<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    z: AddVec<T>,
    k: u32,
) -> Result<Rep3Vec<T>, NetError> {
    let n = z.own.len();
    let alpha = prss.zero_shares::<T>(n);
    let mut own = z.own;
    for (x, a) in own.iter_mut().zip(alpha) {
        *x = x.wrapping_add(a);
    }
    mask_slice(&mut own, k);
    let to = net.next();
    send_elems(net, to, &own)?;
    let from = net.prev();
    let mut prev: Vec<T> = recv_elems(net, from, n, "reshare")?;
    // A peer's bits above k would otherwise survive into later arithmetic.
    mask_slice(&mut prev, k);
    Ok(Rep3Vec { own, prev })
}

/// Additive shares mod p to fresh replicated shares mod p (Section 4.3.2): party i adds a PRSS
/// zero share mod p, sends the result to party i + 1 and keeps it as `own`; what it receives
/// from party i − 1 is its `prev`. One round, one message per party.
///
/// The zero shares are F(s_i) − F(s_{i−1}) with each PRF output reduced mod p first, so they
/// telescope to zero mod p. A received element ≥ p is a [`NetError::Protocol`].
pub fn reshare_p(net: &mut dyn Transport, prss: &mut Prss, z: &[u16]) -> Result<Rep3Fp, NetError> {
    let n = z.len();
    let r = prss.random_rep3::<u64>(n);
    let own: Vec<u16> = z
        .iter()
        .zip(r.own.iter().zip(&r.prev))
        .map(|(&v, (&a, &b))| {
            fp::add(
                fp::reduce_u32(v as u32),
                fp::sub(fp::reduce_u64(a), fp::reduce_u64(b)),
            )
        })
        .collect();
    let to = net.next();
    send_elems(net, to, &own)?;
    let from = net.prev();
    let prev: Vec<u16> = recv_elems(net, from, n, "F_p reshare")?;
    if let Some(bad) = prev.iter().position(|&v| v >= fp::P) {
        return Err(NetError::Protocol {
            peer: from,
            detail: format!("F_p reshare: element {bad} is not below p = {}", fp::P),
        });
    }
    Ok(Rep3Fp { own, prev })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::{edge_values, run_protocol};
    use crate::ring::mask;
    use crate::share::rep3::{consistent, reconstruct, share_vec};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    /// Splits `values` additively (dealer side) and reshares them twice from the same input.
    fn run<T: RingElem>(values: &[u64], k: u32, seed: u64) -> ([Rep3Vec<T>; 3], [Rep3Vec<T>; 3]) {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let v: Vec<T> = values.iter().map(|&x| T::from_u64(x)).collect();
        let shares = share_vec(&v, k, &mut rng);
        let inputs: [AddVec<T>; 3] = std::array::from_fn(|i| AddVec {
            own: shares[i].own.clone(),
        });
        let runs = run_protocol(inputs, move |net, prss, z: &AddVec<T>| {
            let a = reshare(net, prss, z.clone(), k).unwrap();
            let b = reshare(net, prss, z.clone(), k).unwrap();
            (a, b)
        });
        for r in &runs {
            assert_eq!(r.messages, 2, "one message per reshare");
        }
        let [r0, r1, r2] = runs;
        (
            [r0.out.0, r1.out.0, r2.out.0],
            [r0.out.1, r1.out.1, r2.out.1],
        )
    }

    fn check<T: RingElem>(values: &[u64], k: u32, seed: u64) -> Result<(), TestCaseError> {
        let want: Vec<T> = values.iter().map(|&x| T::from_u64(x & mask(k))).collect();
        let (a, b) = run::<T>(values, k, seed);
        prop_assert!(consistent(&a, k) && consistent(&b, k));
        prop_assert_eq!(reconstruct(&a, k), want.clone());
        prop_assert_eq!(reconstruct(&b, k), want);
        if k >= 8 && values.len() >= 4 {
            // Same input, fresh masks: the shares themselves must differ.
            prop_assert_ne!(&a[0].own, &b[0].own);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn reshare_reconstructs_and_rerandomises(k in 2u32..=64, seed: u64, raw in proptest::collection::vec(any::<u64>(), 1..50)) {
            let mut values = raw;
            values.extend(edge_values(k));
            match crate::ring::storage_for(k) {
                crate::ring::Width::U16 => check::<u16>(&values, k, seed)?,
                crate::ring::Width::U32 => check::<u32>(&values, k, seed)?,
                crate::ring::Width::U64 => check::<u64>(&values, k, seed)?,
            }
        }
    }
}
