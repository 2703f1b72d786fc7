//! Ring selection for secret-mask comparisons (Lemma 2 of the Large-Scale MPC paper,
//! Algorithm 3).
//!
//! With secret masks, Algorithm 3 decides a pair by `MSB(a*ml - b*dot)` over Z_t, where
//! `a/b ~ f = 1 - 2r` ([`super::approx`]) and `dot = ml - 2 hd` is the masked-bitvector dot
//! product (the paper's Lemma 2 calls it `hd`). Without wrap, the MSB is 1 iff `b*dot > a*ml`:
//! the pair matches.
//!
//! Exact range. For fixed `ml`, `dot` ranges over `{-ml, -ml + 2, ..., ml}`, so
//! `a*ml - b*dot` spans `[(a - b)*ml, (a + b)*ml]` with both ends reached (`dot = ml`: identical
//! codes; `dot = -ml`: every kept bit differs, both of the parity of `ml`). Both ends are linear in
//! `ml in [0, l]`, and `-b <= a <= b`, so the exact range is
//! `[(a - b)*l, (a + b)*l]`, reached at `ml = l` with `hd = 0` and `hd = l`.
//! Lemma 2's proof bounds it by `[-b*l, (a + b)*l]` (it needs `a >= 0`), and its sufficient
//! condition `b*l < t/4` and `b*l < t - 2^(ceil(log2 t) - 1)` covers `[-b*l, 2*b*l]`; the chosen k
//! is the smallest ring whose signed range holds the exact range, never larger than Lemma 2's.
//!
//! Lifting (Section 5.1): with `b = 2^m`, `b*[dot]_{2^n} = [b*dot]_{2^(n+m)}` costs nothing
//! (ConstLift, Algorithm 13); any `n >= k - m` then yields the comparison ring Z_2^k by local
//! truncation.

use super::approx::Approximation;
use super::range::Interval;

/// The largest ring the runtime supports (shares live in u16/u32/u64).
pub const MAX_RING_BITS: u32 = 64;

/// The ring chosen for one secret-mask comparison and the facts that justify it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SecretRingChoice {
    /// `a/b ~ 1 - 2r`.
    pub a: i64,
    pub b: u64,
    /// k: the comparison `MSB(a*ml - b*dot)` is computed in Z_2^k.
    pub ring_bits: u32,
    /// The exact range of `a*ml - b*dot` over all inputs.
    pub lo: i128,
    pub hi: i128,
    /// Why k suffices and why k - 1 does not, e.g.
    /// "a*ml - b*dot in [-578803200, 1098918400] ⊂ [-2^31, 2^31); k = 31 would wrap 1098918400".
    pub justification: String,
    /// Lemma 2's hypothesis holds: `0 <= a <= b` (its proof uses `a*l >= 0`).
    pub lemma2_holds: bool,
    /// The smallest k with `t = 2^k` satisfying Lemma 2's two inequalities for this `b*l`.
    pub lemma2_ring_bits: u32,
    /// Whether Lemma 2's inequalities already hold at `t = 2^ring_bits`.
    pub lemma2_at_chosen_ring: bool,
    /// With `b = 2^m`: the fewest bits of the ring `dot` may be computed in so that ConstLift
    /// reaches Z_2^k (`k - m`, at least 1).
    pub const_lift_dot_bits: Option<u32>,
}

/// Why no ring of at most 64 bits works.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Lemma2Error {
    #[error(
        "a*ml - b*dot in [{lo}, {hi}] (a = {a}, b = {b}, l = {code_bits}) needs a {needed}-bit ring, \
         more than {MAX_RING_BITS}: use fewer bits of precision m (b = 2^m), a smaller b, or \
         shorter codes"
    )]
    RingTooLarge {
        a: i64,
        b: u64,
        code_bits: u32,
        lo: i128,
        hi: i128,
        needed: u32,
    },
}

/// The exact range of `a*ml - b*dot` over `ml in [0, l]`, `|dot| <= ml`, `dot = ml mod 2`.
pub fn compared_range(code_bits: u32, a: i64, b: u64) -> Interval {
    let (a, b) = (i128::from(a), i128::from(b));
    let ml = Interval::new(0, i128::from(code_bits));
    // dot = ml gives the low end, dot = -ml the high end; both monotone in ml.
    Interval::monotone_image(ml, |m| (a - b) * m)
        .hull(Interval::monotone_image(ml, |m| (a + b) * m))
}

/// The reachable inputs `(ml, hd)` at which [`compared_range`]'s `lo` and `hi` are attained.
pub fn extreme_witnesses(code_bits: u32) -> [(u32, u32); 2] {
    [(code_bits, 0), (code_bits, code_bits)]
}

/// Lemma 2's sufficient condition for `t = 2^k`: `b*l < t/4` and `b*l < t - 2^(ceil(log2 t) - 1)`.
pub fn lemma2_conditions(code_bits: u32, b: u64, k: u32) -> bool {
    if !(2..=126).contains(&k) {
        return false;
    }
    let (bl, t) = (i128::from(b) * i128::from(code_bits), 1i128 << k);
    // ceil(log2 t) = k for a power of two.
    bl < t / 4 && bl < t - (1i128 << (k - 1))
}

/// The smallest k satisfying [`lemma2_conditions`] (127 when none up to 126 does).
pub fn lemma2_ring_bits(code_bits: u32, b: u64) -> u32 {
    (2..=126)
        .find(|&k| lemma2_conditions(code_bits, b, k))
        .unwrap_or(127)
}

/// The smallest k whose signed range `[-2^(k-1), 2^(k-1))` holds `a*ml - b*dot` for every
/// reachable input, so that `MSB(a*ml - b*dot) = 1` iff `b*dot > a*ml` (Algorithm 3's
/// comparison); an error when it exceeds 64 bits.
pub fn select_secret_ring(
    code_bits: u32,
    ap: &Approximation,
) -> Result<SecretRingChoice, Lemma2Error> {
    let (a, b) = (ap.a, ap.b);
    let compared = compared_range(code_bits, a, b);
    let (lo, hi) = (compared.lo, compared.hi);
    // k >= 2 so that the MSB is not the only bit.
    let k = compared.signed_bits().max(2);
    if k > MAX_RING_BITS {
        return Err(Lemma2Error::RingTooLarge {
            a,
            b,
            code_bits,
            lo,
            hi,
            needed: k,
        });
    }
    let half = Interval::signed_ring(k - 1);
    let wrap = if hi > half.hi { hi } else { lo };
    let justification = if compared.fits_signed(k - 1) {
        format!(
            "a*ml - b*dot in [{lo}, {hi}] ⊂ [-2^{0}, 2^{0}); k = {k} is the smallest ring with an MSB",
            k - 1
        )
    } else {
        format!(
            "a*ml - b*dot in [{lo}, {hi}] ⊂ [-2^{0}, 2^{0}); k = {0} would wrap {wrap}",
            k - 1
        )
    };
    let lemma2_holds = 0 <= i128::from(a) && i128::from(a) <= i128::from(b);
    Ok(SecretRingChoice {
        a,
        b,
        ring_bits: k,
        lo,
        hi,
        justification,
        lemma2_holds,
        lemma2_ring_bits: lemma2_ring_bits(code_bits, b),
        lemma2_at_chosen_ring: lemma2_holds && lemma2_conditions(code_bits, b, k),
        const_lift_dot_bits: ap.m.map(|m| k.saturating_sub(m).max(1)),
    })
}

#[cfg(test)]
mod tests {
    use super::super::approx::{approx_bounded, approx_pow2, Rounding};
    use super::*;
    use crate::sema::Ratio;

    const R345: Ratio = Ratio { num: 69, den: 200 };
    const R375: Ratio = Ratio { num: 3, den: 8 };

    #[test]
    fn deployed_parameters() {
        let ap = approx_pow2(R345, 16, Rounding::Conservative).unwrap();
        let c = select_secret_ring(12800, &ap).unwrap();
        // (20317 - 65536) * 12800 and (20317 + 65536) * 12800.
        assert_eq!((c.ring_bits, c.lo, c.hi), (32, -578_803_200, 1_098_918_400));
        assert_eq!(
            c.justification,
            "a*ml - b*dot in [-578803200, 1098918400] ⊂ [-2^31, 2^31); k = 31 would wrap 1098918400"
        );
        // The paper's t = 2^(16 + m).
        assert!(c.lemma2_holds && c.lemma2_at_chosen_ring);
        assert_eq!(c.lemma2_ring_bits, 32);
        assert_eq!(c.const_lift_dot_bits, Some(16));
    }

    #[test]
    fn exact_range_can_beat_lemma2() {
        // f = 1/4 exactly: (a + b) l = 5 * 2^14 * 12800 < 2^30, so k = 31; Lemma 2 needs 32.
        let ap = approx_pow2(R375, 16, Rounding::Conservative).unwrap();
        let c = select_secret_ring(12800, &ap).unwrap();
        assert_eq!(c.ring_bits, 31);
        assert!(c.lemma2_holds && !c.lemma2_at_chosen_ring);
        assert_eq!(c.lemma2_ring_bits, 32);
    }

    #[test]
    fn negative_a_and_no_lift() {
        // r = 3/4: a/b = -1/2, range [-3l, l] with l = 64.
        let ap = approx_bounded(Ratio { num: 3, den: 4 }, 100, Rounding::Nearest).unwrap();
        let c = select_secret_ring(64, &ap).unwrap();
        assert_eq!((c.lo, c.hi, c.ring_bits), (-192, 64, 9));
        assert!(!c.lemma2_holds && !c.lemma2_at_chosen_ring);
        assert_eq!(c.const_lift_dot_bits, Some(8));
        // 16-bit a, b (NoLift): b <= 2^16 keeps l = 12800 within 32 bits.
        let ap = approx_bounded(R345, 1 << 16, Rounding::Conservative).unwrap();
        let c = select_secret_ring(12800, &ap).unwrap();
        assert!(c.ring_bits <= 32 && c.ring_bits <= c.lemma2_ring_bits);
    }

    #[test]
    fn too_large_is_an_error() {
        let ap = approx_pow2(R345, 48, Rounding::Conservative).unwrap();
        let e = select_secret_ring(1 << 20, &ap).unwrap_err();
        assert!(
            matches!(e, Lemma2Error::RingTooLarge { needed: 70, .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains("fewer bits of precision m"));
        assert!(select_secret_ring(1 << 14, &ap).is_ok());
    }
}
