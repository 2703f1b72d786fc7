//! Algorithm 11, CMux: oblivious selection between binary shares.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::share::BitShares;

use super::and;

/// Algorithm 11, CMux: d = b ⊕ c ∧ (a ⊕ b), i.e. `a` where `c` is set and `b` elsewhere,
/// element-wise. One round, one AND gate per element.
#[doc(alias = "CMux")]
pub fn cmux(
    net: &mut dyn Transport,
    prss: &mut Prss,
    c: &BitShares,
    a: &BitShares,
    b: &BitShares,
) -> Result<BitShares, NetError> {
    let diff = a.xor(b);
    let sel = and(net, prss, c, &diff)?;
    Ok(b.xor(&sel))
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
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn cmux_selects(seed: u64, v in proptest::collection::vec(any::<(bool, bool, bool)>(), 0..150)) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let c: Vec<bool> = v.iter().map(|t| t.0).collect();
            let a: Vec<bool> = v.iter().map(|t| t.1).collect();
            let b: Vec<bool> = v.iter().map(|t| t.2).collect();
            let (sc, sa, sb) = (share_bits(&c, &mut rng), share_bits(&a, &mut rng), share_bits(&b, &mut rng));
            let inputs: [(BitShares, BitShares, BitShares); 3] = std::array::from_fn(|i| (sc[i].clone(), sa[i].clone(), sb[i].clone()));
            let runs = run_protocol(inputs, |net, prss, (c, a, b): &(BitShares, BitShares, BitShares)| cmux(net, prss, c, a, b).unwrap());
            let got = reconstruct_bits(&[runs[0].out.clone(), runs[1].out.clone(), runs[2].out.clone()]);
            let want: Vec<bool> = v.iter().map(|&(c, a, b)| if c { a } else { b }).collect();
            prop_assert_eq!(got, Some(want));
        }
    }
}
