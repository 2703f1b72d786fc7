//! Opening shared values.
//!
//! Party p holds components x_p and x_{p−1}; the one it lacks, x_{p+1}, is party p+1's `own`.
//! So opening to p costs one message from p+1 to p, and the third party learns nothing.

use crate::net::{NetError, Transport};
use crate::ring::{mask_slice, RingElem};
use crate::share::binary::{clear_tail, unpack_bits};
use crate::share::{BitShares, Rep3Vec};

use super::{recv_elems, send_elems};

/// Reveals `bits` to party `to` only: returns `Some(bits)` there and `None` at the others.
/// One message (party `to + 1` → `to`), no randomness needed.
pub fn open_bits(
    net: &mut dyn Transport,
    bits: &BitShares,
    to: usize,
) -> Result<Option<Vec<bool>>, NetError> {
    assert!(to < 3, "output party {to} does not exist");
    let me = net.party();
    if me == (to + 1) % 3 {
        send_elems(net, to, &bits.own)?;
        Ok(None)
    } else if me == to {
        let from = (to + 1) % 3;
        let mut missing: Vec<u64> = recv_elems(net, from, bits.words(), "opened bits")?;
        clear_tail(&mut missing, bits.len);
        let value: Vec<u64> = bits
            .own
            .iter()
            .zip(&bits.prev)
            .zip(&missing)
            .map(|((a, b), c)| a ^ b ^ c)
            .collect();
        Ok(Some(unpack_bits(&value, bits.len)))
    } else {
        Ok(None)
    }
}

/// Reveals arithmetic values of Z_2^k to all three parties (tests, debugging, public outputs).
/// One round: each party sends its `own` to the previous party, which lacks exactly that one.
pub fn open_all<T: RingElem>(
    net: &mut dyn Transport,
    x: &Rep3Vec<T>,
    k: u32,
) -> Result<Vec<T>, NetError> {
    let to = net.prev();
    send_elems(net, to, &x.own)?;
    let from = net.next();
    let missing: Vec<T> = recv_elems(net, from, x.len(), "opened values")?;
    let mut out: Vec<T> = x
        .own
        .iter()
        .zip(&x.prev)
        .zip(missing)
        .map(|((&a, &b), c)| a.wrapping_add(b).wrapping_add(c))
        .collect();
    mask_slice(&mut out, k);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::{edge_values, run_protocol};
    use crate::share::binary::share_bits;
    use crate::share::rep3::share_vec;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn open_bits_reveals_only_to_target(seed: u64, bits in proptest::collection::vec(any::<bool>(), 0..200), to in 0usize..3) {
            let shares = share_bits(&bits, &mut ChaCha12Rng::seed_from_u64(seed));
            let runs = run_protocol(shares, move |net, _prss, b: &BitShares| open_bits(net, b, to).unwrap());
            for (p, r) in runs.iter().enumerate() {
                if p == to {
                    prop_assert_eq!(r.out.as_ref(), Some(&bits));
                } else {
                    prop_assert!(r.out.is_none());
                }
                // Only the party after the target sends, and only to the target.
                prop_assert_eq!(r.messages, (p == (to + 1) % 3) as u64);
            }
        }

        #[test]
        fn open_all_reconstructs(seed: u64, k in 1u32..=64, raw in proptest::collection::vec(any::<u64>(), 0..50)) {
            let mut v = raw;
            v.extend(edge_values(k.max(2)));
            let v: Vec<u64> = v.iter().map(|x| x & crate::ring::mask(k)).collect();
            let shares = share_vec(&v, k, &mut ChaCha12Rng::seed_from_u64(seed));
            let runs = run_protocol(shares, move |net, _prss, x: &Rep3Vec<u64>| open_all(net, x, k).unwrap());
            for r in &runs {
                prop_assert_eq!(&r.out, &v);
                prop_assert_eq!(r.messages, 1);
            }
        }
    }

    #[test]
    fn third_party_sees_nothing() {
        // Party 2 is neither target (0) nor sender (1): it must receive no message at all.
        let shares = share_bits(&[true, false, true], &mut ChaCha12Rng::seed_from_u64(1));
        let out = crate::net::memory::run_three(move |mut t| {
            let p = t.party();
            let r = open_bits(&mut t, &shares[p], 0).unwrap();
            // Each party then says "done" to party 2, so party 2 can check what arrived first.
            if p != 2 {
                t.send(2, b"done".to_vec()).unwrap();
                return (r, true);
            }
            let first_from_0 = t.recv(0).unwrap();
            let first_from_1 = t.recv(1).unwrap();
            (r, first_from_0 == b"done" && first_from_1 == b"done")
        });
        assert_eq!(out[0].0, Some(vec![true, false, true]));
        assert!(out[2].0.is_none() && out[2].1);
    }
}
