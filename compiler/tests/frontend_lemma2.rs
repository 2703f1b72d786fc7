//! Property tests of secret-mask ring selection (Lemma 2, Algorithm 3): MSB over Z_2^k of
//! `a*ml - b*dot` equals `b*(ml - 2hd) > a*ml`, k is minimal and never exceeds Lemma 2's, and the
//! approximation `a/b ~ 1 - 2r` disagrees with the exact ratio only inside its proved band.

use irisc::analysis::approx::{
    approx_bounded, approx_pow2, choose_m, Accuracy, Approximation, Rounding, MAX_M,
};
use irisc::analysis::lemma2::{
    compared_range, extreme_witnesses, select_secret_ring, Lemma2Error, MAX_RING_BITS,
};
use irisc::sema::Ratio;
use proptest::prelude::*;

/// MSB of `x` in k-bit two's complement.
fn msb(x: i128, k: u32) -> bool {
    (x.rem_euclid(1i128 << k) >> (k - 1)) & 1 == 1
}

/// Algorithm 3's comparison over Z_2^k.
fn mpc_match(ap: &Approximation, k: u32, ml: i128, hd: i128) -> bool {
    msb(i128::from(ap.a) * ml - i128::from(ap.b) * (ml - 2 * hd), k)
}

/// ARCHITECTURE §7's secret-mask rule, written out independently.
fn rule(ap: &Approximation, ml: i128, hd: i128) -> bool {
    i128::from(ap.b) * (ml - 2 * hd) > i128::from(ap.a) * ml
}

/// Algorithm 1's exact rule: `hd < r*ml`.
fn plain_match(r: Ratio, ml: i128, hd: i128) -> bool {
    i128::from(r.den) * hd < i128::from(r.num) * ml
}

fn ratio() -> impl Strategy<Value = Ratio> {
    (1u64..=1_000_000).prop_flat_map(|den| (0..=den).prop_map(move |num| Ratio { num, den }))
}

fn code_bits() -> impl Strategy<Value = u32> {
    (1u32..=(1 << 14)).prop_map(|c| c * 64)
}

fn rounding() -> impl Strategy<Value = Rounding> {
    prop_oneof![Just(Rounding::Conservative), Just(Rounding::Nearest)]
}

/// `(ml, hd)` from two random words: `ml in [0, l]`, `hd in [0, ml]`.
fn pair(l: u32, x: u64, y: u64) -> (i128, i128) {
    let ml = i128::from(x) % (i128::from(l) + 1);
    (ml, i128::from(y) % (ml + 1))
}

/// Checks correctness at the extremes and a random pair, exactness of the range, minimality of k
/// and k <= Lemma 2's k.
fn check_ring(l: u32, ap: &Approximation, x: u64, y: u64) -> Result<(), TestCaseError> {
    let c = select_secret_ring(l, ap).unwrap();
    let k = c.ring_bits;
    prop_assert!((2..=MAX_RING_BITS).contains(&k));
    let (ml, hd) = pair(l, x, y);
    let mut points = vec![(ml, hd), (0, 0)];
    points.extend(
        extreme_witnesses(l)
            .iter()
            .map(|&(m, h)| (i128::from(m), i128::from(h))),
    );
    for &(ml, hd) in &points {
        prop_assert_eq!(
            mpc_match(ap, k, ml, hd),
            rule(ap, ml, hd),
            "ml={} hd={}",
            ml,
            hd
        );
        prop_assert_eq!(rule(ap, ml, hd), ap.matches(ml, ml - 2 * hd));
    }
    // The range is attained at the witnesses, so it is exact.
    let value = |(m, h): (u32, u32)| {
        let (m, h) = (i128::from(m), i128::from(h));
        i128::from(ap.a) * m - i128::from(ap.b) * (m - 2 * h)
    };
    let [w_lo, w_hi] = extreme_witnesses(l);
    prop_assert_eq!((value(w_lo), value(w_hi)), (c.lo, c.hi));
    prop_assert_eq!(compared_range(l, ap.a, ap.b).lo, c.lo);
    // Minimality: one reachable extreme is misjudged at k - 1.
    prop_assert!(
        [w_lo, w_hi].iter().any(|&(m, h)| {
            let (m, h) = (i128::from(m), i128::from(h));
            mpc_match(ap, k - 1, m, h) != rule(ap, m, h)
        }),
        "k - 1 = {} works too: {}",
        k - 1,
        c.justification
    );
    if c.lemma2_holds {
        prop_assert!(k <= c.lemma2_ring_bits);
        // Lemma 2's own ring is also correct at the extremes.
        let k2 = c.lemma2_ring_bits;
        for &(ml, hd) in &points {
            prop_assert_eq!(mpc_match(ap, k2, ml, hd), rule(ap, ml, hd));
        }
    }
    Ok(())
}

/// The error band: where the approximate and exact rules disagree,
/// `b * |den*dot - (den - 2num)*ml| <= |a*den - (den - 2num)*b| * ml`; conservative rounding never
/// adds a match.
fn check_band(r: Ratio, ap: &Approximation, ml: i128, dot: i128) -> Result<(), TestCaseError> {
    let hd = (ml - dot) / 2;
    let (a, b) = (i128::from(ap.a), i128::from(ap.b));
    let (den, fnum) = (i128::from(r.den), i128::from(r.den) - 2 * i128::from(r.num));
    prop_assert_eq!(ap.exact_matches(ml, dot), plain_match(r, ml, hd));
    if rule(ap, ml, hd) != plain_match(r, ml, hd) {
        prop_assert!(b * (den * dot - fnum * ml).abs() <= (a * den - fnum * b).abs() * ml);
        prop_assert!(ap.within_error_band(ml, dot));
    }
    if ap.rounding == Rounding::Conservative && rule(ap, ml, hd) {
        prop_assert!(plain_match(r, ml, hd));
    }
    Ok(())
}

/// A reachable `dot` near the approximate threshold `(a/b)*ml`, where the rules may disagree.
fn near_threshold(ap: &Approximation, ml: i128, offset: i128) -> i128 {
    let t = (i128::from(ap.a) * ml).div_euclid(i128::from(ap.b));
    let d = t + offset;
    let d = if (d - ml).rem_euclid(2) == 0 {
        d
    } else {
        d + 1
    };
    d.clamp(-ml, ml)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn pow2_msb_equals_comparison(
        l in code_bits(), r in ratio(), m in 0u32..=40, rd in rounding(),
        x in any::<u64>(), y in any::<u64>(),
    ) {
        let ap = approx_pow2(r, m, rd).unwrap();
        prop_assert!(-(ap.b as i128) <= ap.a as i128 && ap.a as i128 <= ap.b as i128);
        check_ring(l, &ap, x, y)?;
    }

    #[test]
    fn bounded_msb_equals_comparison(
        l in code_bits(), r in ratio(), big_b in 1u64..=(1 << 24), rd in rounding(),
        x in any::<u64>(), y in any::<u64>(),
    ) {
        let ap = approx_bounded(r, big_b, rd).unwrap();
        prop_assert!(1 <= ap.b && ap.b <= big_b);
        prop_assert!(-(ap.b as i128) <= ap.a as i128 && ap.a as i128 <= ap.b as i128);
        check_ring(l, &ap, x, y)?;
    }

    #[test]
    fn pow2_error_bound(
        l in code_bits(), r in ratio(), m in 0u32..=40, rd in rounding(),
        x in any::<u64>(), y in any::<u64>(), off in -6i128..=6,
    ) {
        let ap = approx_pow2(r, m, rd).unwrap();
        // |f - a/b| < 1/b (conservative: 0 <= e < den) or <= 1/(2b) (nearest).
        let (e, den) = (ap.error_num(), i128::from(r.den));
        match rd {
            Rounding::Conservative => prop_assert!((0..den).contains(&e)),
            Rounding::Nearest => prop_assert!(2 * e.abs() <= den),
        }
        let (ml, hd) = pair(l, x, y);
        check_band(r, &ap, ml, ml - 2 * hd)?;
        check_band(r, &ap, ml, near_threshold(&ap, ml, off))?;
    }

    #[test]
    fn bounded_error_bound_and_optimality(
        r in ratio(), big_b in 1u64..=64, rd in rounding(),
        ml in 0i128..=4096, off in -6i128..=6,
    ) {
        let ap = approx_bounded(r, big_b, rd).unwrap();
        let (a, b) = (i128::from(ap.a), i128::from(ap.b));
        let (den, fnum) = (i128::from(r.den), i128::from(r.den) - 2 * i128::from(r.num));
        // |f - a/b| = |e|/(b*den) <= 1/(b*(B + 1 - b)).
        prop_assert!(ap.error_num().abs() * (i128::from(big_b) + 1 - b) <= den);
        // Brute force over every denominator q <= B: no closer (or, conservative, no closer
        // upper) fraction p/q.
        for q in 1..=i128::from(big_b) {
            let lo_p = (fnum * q).div_euclid(den);
            for p in [lo_p, lo_p + 1] {
                let err = p * den - fnum * q; // (p/q - f) * q * den
                let better = |e1: i128, q1: i128| e1.abs() * b < ap.error_num().abs() * q1;
                match rd {
                    Rounding::Conservative => {
                        prop_assert!(ap.error_num() >= 0);
                        prop_assert!(err < 0 || !better(err, q), "{}/{} beats {}/{}", p, q, a, b);
                    }
                    Rounding::Nearest => {
                        prop_assert!(!better(err, q), "{}/{} beats {}/{}", p, q, a, b);
                    }
                }
            }
        }
        check_band(r, &ap, ml, near_threshold(&ap, ml, off))?;
    }

    #[test]
    fn error_bits_choice_is_minimal(r in ratio(), bits in 0u32..=40, rd in rounding()) {
        let m = choose_m(r, Accuracy::ErrorBits(bits), rd).unwrap();
        let ok = |m: u32| {
            let ap = approx_pow2(r, m, rd).unwrap();
            ap.error_num().abs() << bits <= ap.error_den()
        };
        prop_assert!(ok(m) && m <= bits);
        prop_assert!(m == 0 || !ok(m - 1));
    }

    #[test]
    fn over_64_bits_is_an_error(l in code_bits(), r in ratio(), m in 0u32..=MAX_M) {
        let ap = approx_pow2(r, m, Rounding::Conservative).unwrap();
        let fits = compared_range(l, ap.a, ap.b).fits_signed(MAX_RING_BITS);
        match select_secret_ring(l, &ap) {
            Ok(c) => prop_assert!(fits && c.ring_bits <= MAX_RING_BITS),
            Err(e @ Lemma2Error::RingTooLarge { needed, .. }) => {
                prop_assert!(!fits && needed > MAX_RING_BITS);
                prop_assert!(e.to_string().contains("a smaller b, or shorter codes"));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// `SameDecisions` is minimal, and at that m no reachable pair is decided differently.
    #[test]
    fn same_decisions_choice(
        l in (1u32..=16).prop_map(|c| c * 64), den in 1u64..=1000, n in any::<u64>(),
        rd in rounding(), x in any::<u64>(), off in -6i128..=6,
    ) {
        let r = Ratio { num: n % (den + 1), den };
        let m = match choose_m(r, Accuracy::SameDecisions { code_bits: l }, rd) {
            Ok(m) => m,
            Err(_) => {
                // Only nearest rounding can miss it (an `a/b < f` tie), and then even at MAX_M.
                prop_assert_eq!(rd, Rounding::Nearest);
                prop_assert!(!approx_pow2(r, MAX_M, rd).unwrap().same_decisions(l));
                return Ok(());
            }
        };
        let ap = approx_pow2(r, m, rd).unwrap();
        prop_assert!(ap.same_decisions(l));
        prop_assert!(m == 0 || !approx_pow2(r, m - 1, rd).unwrap().same_decisions(l));
        if rd == Rounding::Conservative {
            // 2^m > (den - 1) * l always suffices.
            prop_assert!(1u128 << m <= 2 * u128::from(den) * u128::from(l));
        }
        let ml = i128::from(x) % (i128::from(l) + 1);
        let dot = near_threshold(&ap, ml, off);
        prop_assert_eq!(rule(&ap, ml, (ml - dot) / 2), plain_match(r, ml, (ml - dot) / 2));
    }
}

#[test]
fn deployed_345() {
    let r = Ratio { num: 69, den: 200 };
    let ap = approx_pow2(r, 16, Rounding::Conservative).unwrap();
    assert_eq!((ap.a, ap.b), (20317, 65536));
    assert_eq!(
        choose_m(r, Accuracy::Deployed, Rounding::Conservative),
        Ok(16)
    );
    let c = select_secret_ring(12800, &ap).unwrap();
    assert_eq!((c.ring_bits, c.lemma2_ring_bits), (32, 32));
    assert_eq!((c.lo, c.hi), (-578_803_200, 1_098_918_400));
    // ConstLift: dot computed over 16 bits, lifted by b = 2^16 to Z_2^32.
    assert_eq!(c.const_lift_dot_bits, Some(16));
}

#[test]
fn r375_is_exact() {
    let r = Ratio { num: 3, den: 8 };
    for m in [2, 16, 20, 40] {
        let ap = approx_pow2(r, m, Rounding::Conservative).unwrap();
        assert!(ap.is_exact() && ap.same_decisions(12800));
        assert_eq!(ap.a * 4, ap.b as i64);
    }
    assert_eq!(choose_m(r, Accuracy::Exact, Rounding::Nearest), Ok(2));
    let small = approx_bounded(r, 4, Rounding::Conservative).unwrap();
    assert_eq!((small.a, small.b), (1, 4));
}
