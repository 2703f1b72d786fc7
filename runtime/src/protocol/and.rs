//! AND of replicated binary shares (ABY3 multiplication over F_2, Appendix C eq. 4 with XOR
//! for + and AND for ·), one round for any number of vectors.
//!
//! Party i computes z_i = x_i y_i ⊕ x_i y_{i−1} ⊕ x_{i−1} y_i ⊕ α_i, which is an XOR share of
//! x ∧ y (the three parties together cover all nine cross terms), re-randomised by the PRSS zero
//! share α_i, and sends it to party i + 1, which stores it as its `prev`.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::share::binary::clear_tail;
use crate::share::BitShares;

use super::{recv_elems, send_elems};

/// `x ∧ y` for every pair, in one round: one message to the next party holding all pairs.
///
/// Panics if the two vectors of a pair differ in length (a caller bug, not peer input).
pub fn and_many(
    net: &mut dyn Transport,
    prss: &mut Prss,
    pairs: &[(&BitShares, &BitShares)],
) -> Result<Vec<BitShares>, NetError> {
    let total: usize = pairs.iter().map(|(x, _)| x.words()).sum();
    if total == 0 {
        // Nothing to multiply: every party knows it, so nobody sends or waits.
        return Ok(pairs.iter().map(|(x, _)| BitShares::zeros(x.len)).collect());
    }
    let alpha = prss.zero_bits(total);
    let mut z = Vec::with_capacity(total);
    for (x, y) in pairs {
        assert_eq!(x.len, y.len, "AND of bit vectors of different lengths");
        let start = z.len();
        push_local_share(&mut z, x, y, &alpha[start..start + x.words()]);
    }
    let to = net.next();
    send_elems(net, to, &z)?;
    let from = net.prev();
    let got: Vec<u64> = recv_elems(net, from, total, "AND shares")?;

    let mut out = Vec::with_capacity(pairs.len());
    let mut at = 0;
    for (x, _) in pairs {
        let w = x.words();
        // from_words clears the tail, so a peer's stray bits there cannot leak into later gates.
        out.push(BitShares::from_words(
            z[at..at + w].to_vec(),
            got[at..at + w].to_vec(),
            x.len,
        ));
        at += w;
    }
    Ok(out)
}

/// Appends this party's AND share of `x ∧ y` to `z`: x_i(y_i ⊕ y_{i−1}) ⊕ x_{i−1} y_i (the
/// three local cross terms with two ANDs) ⊕ the zero share `alpha`, the bits beyond `x.len`
/// clear. What [`and_many`] sends for each pair, and the OR tree's pipelined levels per chunk.
pub(crate) fn push_local_share(z: &mut Vec<u64>, x: &BitShares, y: &BitShares, alpha: &[u64]) {
    let start = z.len();
    z.extend(
        (0..x.words())
            .map(|j| (x.own[j] & (y.own[j] ^ y.prev[j])) ^ (x.prev[j] & y.own[j]) ^ alpha[j]),
    );
    clear_tail(&mut z[start..], x.len);
}

/// `x ∧ y`, one round.
pub fn and(
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &BitShares,
    y: &BitShares,
) -> Result<BitShares, NetError> {
    Ok(and_many(net, prss, &[(x, y)])?
        .pop()
        .expect("one pair in, one result out"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::share::binary::{reconstruct_bits, share_bits};
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn and_many_matches_plain(seed: u64, lens in proptest::collection::vec(0usize..300, 1..5)) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let xs: Vec<Vec<bool>> = lens.iter().map(|&n| (0..n).map(|_| rand::Rng::random(&mut rng)).collect()).collect();
            let ys: Vec<Vec<bool>> = lens.iter().map(|&n| (0..n).map(|_| rand::Rng::random(&mut rng)).collect()).collect();
            let sx: Vec<[BitShares; 3]> = xs.iter().map(|v| share_bits(v, &mut rng)).collect();
            let sy: Vec<[BitShares; 3]> = ys.iter().map(|v| share_bits(v, &mut rng)).collect();
            let inputs: [(Vec<BitShares>, Vec<BitShares>); 3] =
                std::array::from_fn(|i| (sx.iter().map(|s| s[i].clone()).collect(), sy.iter().map(|s| s[i].clone()).collect()));
            let runs = run_protocol(inputs, |net, prss, (x, y): &(Vec<BitShares>, Vec<BitShares>)| {
                let pairs: Vec<(&BitShares, &BitShares)> = x.iter().zip(y).collect();
                and_many(net, prss, &pairs).unwrap()
            });
            let sent = lens.iter().any(|&n| n > 0) as u64;
            for r in &runs {
                prop_assert_eq!(r.messages, sent);
            }
            for (v, (x, y)) in xs.iter().zip(&ys).enumerate() {
                let got = reconstruct_bits(&[runs[0].out[v].clone(), runs[1].out[v].clone(), runs[2].out[v].clone()]);
                let want: Vec<bool> = x.iter().zip(y).map(|(a, b)| a & b).collect();
                prop_assert_eq!(got, Some(want));
            }
        }
    }

    #[test]
    fn short_message_is_a_protocol_error() {
        let out = crate::net::memory::run_three(|mut t| {
            let mut prss = Prss::from_seeds(
                t.party(),
                [t.party() as u8; 16],
                [(t.party() as u8 + 2) % 3; 16],
            );
            if t.party() == 0 {
                let to = t.next();
                t.send(to, vec![1, 2, 3]).unwrap();
                return None;
            }
            if t.party() == 2 {
                // Stay until party 1's message arrived, so its send cannot fail first.
                let _ = t.recv(1);
                return None;
            }
            let x = BitShares::zeros(100);
            Some(and(&mut t, &mut prss, &x, &x).map(|_| ()))
        });
        let err = out[1].as_ref().unwrap().as_ref().unwrap_err();
        assert!(matches!(err, NetError::Protocol { peer: 0, .. }), "{err}");
    }
}
