//! Lemma 2 and cosine ring soundness and minimality, by property tests: the chosen ring makes
//! the MSB equal to the comparison at the extreme witnesses and at random inputs, and one bit
//! less fails at an extreme.

use irisc::analysis::approx::{approx_pow2, Approximation, Rounding};
use irisc::analysis::cosine::{decide_exact, decide_in_ring, select_cosine_ring};
use irisc::analysis::lemma2::{extreme_witnesses, select_secret_ring};
use irisc::analysis::range::Interval;
use irisc::sema::program::{Ratio, SignedRatio};
use proptest::prelude::*;

/// MSB of `(a*ml - b*dot) mod 2^k`.
fn msb(a: i64, b: u64, ml: u32, hd: u32, k: u32) -> bool {
    let dot = i128::from(ml) - 2 * i128::from(hd);
    let v = i128::from(a) * i128::from(ml) - i128::from(b) * dot;
    (v.rem_euclid(1i128 << k) >> (k - 1)) & 1 == 1
}

fn matches(a: i64, b: u64, ml: u32, hd: u32) -> bool {
    let dot = i128::from(ml) - 2 * i128::from(hd);
    i128::from(b) * dot > i128::from(a) * i128::from(ml)
}

fn check(l: u32, ap: &Approximation, samples: &[(u32, u32)]) -> Result<(), TestCaseError> {
    let c = select_secret_ring(l, ap).unwrap();
    let k = c.ring_bits;
    let ex = extreme_witnesses(l);
    for &(ml, hd) in ex.iter().chain(samples) {
        prop_assert_eq!(
            msb(ap.a, ap.b, ml, hd, k),
            matches(ap.a, ap.b, ml, hd),
            "ml {} hd {} k {}",
            ml,
            hd,
            k
        );
    }
    // Minimal: unless the range fits one bit (k = 2 is the floor), k - 1 misjudges an extreme.
    if Interval::new(c.lo, c.hi).signed_bits() >= 2 {
        prop_assert!(
            ex.iter()
                .any(|&(ml, hd)| msb(ap.a, ap.b, ml, hd, k - 1) != matches(ap.a, ap.b, ml, hd)),
            "k - 1 = {} still decides both extremes",
            k - 1
        );
    }
    Ok(())
}

fn samples(l: u32, raw: &[(u32, u32)]) -> Vec<(u32, u32)> {
    raw.iter()
        .map(|&(x, y)| {
            let ml = x % (l + 1);
            (ml, y % (ml + 1))
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn lemma2_ring_is_sound_and_minimal(
        blocks in 1u32..=200,
        b in 1u64..=(1 << 24),
        a_frac in 0.0f64..=1.0,
        neg in any::<bool>(),
        raw in proptest::collection::vec((any::<u32>(), any::<u32>()), 16),
    ) {
        let l = 64 * blocks;
        let mut a = (a_frac * b as f64) as i64;
        if neg { a = -a; }
        let ap = Approximation { ratio: Ratio { num: 0, den: 1 }, a, b, m: None, rounding: Rounding::Conservative };
        check(l, &ap, &samples(l, &raw))?;
    }

    #[test]
    fn pow2_approximations_as_planned(
        blocks in 1u32..=200,
        num in 0u64..=1000,
        m in 1u32..=24,
        raw in proptest::collection::vec((any::<u32>(), any::<u32>()), 16),
    ) {
        let l = 64 * blocks;
        let ap = approx_pow2(Ratio { num, den: 1000 }, m, Rounding::Conservative).unwrap();
        check(l, &ap, &samples(l, &raw))?;
    }
}

fn cosine_witness_bits(dim: u32, s: u32, tau: SignedRatio) -> u32 {
    // x = y = (2^s, ..): p = xx = yy = X, the products X^2 and their scalings.
    let x = i128::from(dim) << (2 * s);
    let (n2, d2) = (
        i128::from(tau.abs.num).pow(2),
        i128::from(tau.abs.den).pow(2),
    );
    let vals = [
        x,
        -x,
        x * x,
        d2 * x * x,
        n2 * x * x,
        (d2 - n2) * x * x,
        (n2 - d2) * x * x,
    ];
    vals.iter()
        .map(|&v| Interval::point(v).signed_bits())
        .max()
        .unwrap()
        .max(2)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn cosine_ring_is_sound_and_minimal(
        half_dim in 1u32..=32,
        s in 0u32..=8,
        num in 0u64..=120,
        den in 1u64..=100,
        negative in any::<bool>(),
        strict in any::<bool>(),
        seeds in proptest::collection::vec(any::<u64>(), 6),
    ) {
        let dim = 2 * half_dim;
        let tau = SignedRatio { negative, abs: Ratio { num, den } };
        let Ok(c) = select_cosine_ring(dim, s, tau, strict) else {
            prop_assert!(cosine_witness_bits(dim, s, tau) > 64);
            return Ok(());
        };
        let k = c.ring_bits;
        let top = 1i64 << s;
        let full = vec![top; dim as usize];
        let alt: Vec<i64> = (0..dim).map(|i| if i % 2 == 0 { top } else { -top }).collect();
        let neg: Vec<i64> = full.iter().map(|v| -v).collect();
        let zero = vec![0i64; dim as usize];
        let mut pairs = vec![(full.clone(), full.clone()), (full.clone(), alt), (full.clone(), neg), (full.clone(), zero)];
        for w in seeds.chunks(2) {
            // A small deterministic generator: components in [-2^s, 2^s].
            let gen = |seed: u64| -> Vec<i64> {
                let mut x = seed | 1;
                (0..dim).map(|_| {
                    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                    (x % (2 * top as u64 + 1)) as i64 - top
                }).collect()
            };
            pairs.push((gen(w[0]), gen(w[1])));
        }
        for (x, y) in &pairs {
            prop_assert_eq!(decide_in_ring(x, y, tau, strict, k), decide_exact(x, y, tau, strict));
        }
        // Minimal: some value at the witness x = y = (2^s, ..) needs all k bits.
        prop_assert_eq!(cosine_witness_bits(dim, s, tau), k);
    }
}
