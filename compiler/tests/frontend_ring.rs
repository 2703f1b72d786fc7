//! Property tests of ring selection (Lemma 1 applied with the program's ratio): MSB over
//! Z_2^k of `T - dot` equals the plaintext comparison `den*hd < num*ml`, k is minimal, and
//! k never exceeds Lemma 1's.

use irisc::analysis::ring::{lemma1_ring_bits, select_ring, threshold};
use irisc::sema::Ratio;
use proptest::prelude::*;

/// MSB of `x` in k-bit two's complement.
fn msb(x: i128, k: u32) -> bool {
    (x.rem_euclid(1i128 << k) >> (k - 1)) & 1 == 1
}

/// Algorithm 1's test on plaintext: `hd < ratio * ml` with `hd = (ml - dot)/2`.
fn plain_match(ratio: Ratio, ml: i128, dot: i128) -> bool {
    let hd = (ml - dot) / 2;
    i128::from(ratio.den) * hd < i128::from(ratio.num) * ml
}

fn mpc_match(ratio: Ratio, k: u32, ml: i128, dot: i128) -> bool {
    msb(threshold(ratio, ml as u64) - dot, k)
}

fn ratio() -> impl Strategy<Value = Ratio> {
    (1u64..=1_000_000).prop_flat_map(|den| (0..=den).prop_map(move |num| Ratio { num, den }))
}

fn code_bits() -> impl Strategy<Value = u32> {
    (1u32..=(1 << 14)).prop_map(|c| c * 64)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn msb_equals_comparison(l in code_bits(), r in ratio(), a in any::<u64>(), b in any::<u64>()) {
        let c = select_ring(l, r);
        let k = c.ring_bits;
        let l = i128::from(l);
        let ml = i128::from(a) % (l + 1);
        // |dot| <= ml and dot ≡ ml (mod 2): dot = ml - 2 hd with hd in [0, ml].
        let hd = i128::from(b) % (ml + 1);
        let dot = ml - 2 * hd;
        for (m, d) in [(l, l), (l, -l), (0, 0), (ml, dot)] {
            prop_assert_eq!(mpc_match(r, k, m, d), plain_match(r, m, d), "ml={} dot={} k={}", m, d, k);
            let x = threshold(r, m as u64) - d;
            prop_assert!(c.lo <= x && x <= c.hi);
        }
        prop_assert!(k <= lemma1_ring_bits(l as u32));
    }

    #[test]
    fn one_bit_less_fails_at_an_extreme(l in code_bits(), r in ratio()) {
        let k = select_ring(l, r).ring_bits;
        let l = i128::from(l);
        let wrong = [(l, l), (l, -l)]
            .iter()
            .any(|&(m, d)| mpc_match(r, k - 1, m, d) != plain_match(r, m, d));
        prop_assert!(wrong, "k - 1 = {} still correct", k - 1);
    }

    #[test]
    fn threshold_ties_do_not_match(l in code_bits(), den in 1u64..=64, n in any::<u64>(), a in any::<u64>()) {
        // Denominators up to 64 divide some ml <= l, so every case has a tie.
        let r = Ratio { num: n % (den + 1), den };
        let k = select_ring(l, r).ring_bits;
        // ml a multiple of den, so that hd = num/den * ml is an integer tie.
        let den = i128::from(r.den);
        let steps = i128::from(l) / den;
        let ml = (i128::from(a) % steps + 1) * den;
        let hd = i128::from(r.num) * ml / den;
        let dot = ml - 2 * hd;
        prop_assert!(!plain_match(r, ml, dot));
        prop_assert!(!mpc_match(r, k, ml, dot));
    }
}

#[test]
fn full_length_codes() {
    // The largest supported code length and the deployed one.
    for (l, r, k) in [
        (1u32 << 20, Ratio { num: 69, den: 200 }, 22),
        (12800, Ratio { num: 69, den: 200 }, 16),
    ] {
        let c = select_ring(l, r);
        assert_eq!(c.ring_bits, k);
        assert!(c.ring_bits <= lemma1_ring_bits(l));
    }
}
