//! Approximating `f = 1 - 2r` by `a/b` for secret-mask comparisons (Section 5, Algorithm 3).
//!
//! With secret masks, `ml` is shared and the parties cannot compute `floor(f * ml)` as Lemma 1's
//! public threshold; Algorithm 3 instead compares `MSB(a*ml - b*dot)` with `a/b ~ f`, `a <= b`.
//! A pair matches under `(a, b)` iff `b*dot > a*ml` (ARCHITECTURE §7, `dot = ml - 2 hd`), and
//! under the exact ratio `r = num/den` iff `den*dot > (den - 2 num)*ml`.
//!
//! Two families of `(a, b)`:
//! - `b = 2^m` ([`approx_pow2`]): lifting `dot` into the comparison ring is free (ConstLift,
//!   Algorithm 13), the paper's MPCLift/ConstLift variants;
//! - small `b <= B` ([`approx_bounded`]): the best rational approximation from the Stern–Brocot
//!   tree, for NoLift (both dot products already in the large ring, "16-bit a, b").
//!
//! Rounding. The default is [`Rounding::Conservative`]: `a/b` is the smallest value `>= f` of its
//! family, so every pair that matches under `a/b` also matches under `f` (the approximation can
//! only lose matches, never add a false one: a false match is the security failure of a biometric
//! system). [`Rounding::Nearest`] minimises `|f - a/b|` and may err in both directions.
//!
//! Error bound. If the two rules disagree on `(ml, dot)`, then `dot` lies between `f*ml` and
//! `(a/b)*ml`, so in integers
//! `b * |den*dot - (den - 2 num)*ml| <= |a*den - (den - 2 num)*b| * ml`  (see [`Approximation::error_num`]),
//! i.e. `|dot - f*ml| <= |f - a/b| * ml`; with `b = 2^m`, `|f - a/b| < 2^-m` (conservative) or
//! `<= 2^-(m+1)` (nearest).
//!
//! Negative `f` (`r > 1/2`) is allowed: `a` is then negative (`-b <= a < 0`). Lemma 2's proof
//! assumes `a >= 0`, so its sufficient condition does not apply; the exact range of
//! [`super::lemma2`] accounts for it.

use crate::sema::Ratio;

/// The largest `m` for `b = 2^m`: `a*ml - b*dot` must fit a 64-bit ring for codes of at least one
/// bit, and every product below stays inside i128.
pub const MAX_M: u32 = 62;

/// The deployed precision: `b = 2^16`.
pub const DEFAULT_M: u32 = 16;

/// How `a` is rounded from `f * b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rounding {
    /// `a/b >= f`, as small as possible: the approximation never adds a match.
    Conservative,
    /// `|f - a/b|` as small as possible; ties go to the conservative side.
    Nearest,
}

/// Why no approximation could be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApproxError {
    #[error("match ratio {num}/{den} is not in [0, 1]")]
    BadRatio { num: u64, den: u64 },
    #[error("b = 2^{m} is too large: at most 2^{MAX_M} (fewer bits of precision m)")]
    PrecisionTooLarge { m: u32 },
    #[error("the denominator bound must be at least 1, got {bound}")]
    BadBound { bound: u64 },
    #[error(
        "no m <= {MAX_M} reaches the requested accuracy for {num}/{den} \
         (a/b = 2^-m can never be exact when den has an odd factor)"
    )]
    Unreachable { num: u64, den: u64 },
}

/// `f = 1 - 2r` as the exact fraction `fnum / den` (`den > 0`).
fn f_parts(ratio: Ratio) -> Result<(i128, i128), ApproxError> {
    if ratio.den == 0 || ratio.num > ratio.den {
        return Err(ApproxError::BadRatio {
            num: ratio.num,
            den: ratio.den,
        });
    }
    let den = i128::from(ratio.den);
    Ok((den - 2 * i128::from(ratio.num), den))
}

/// `a/b ~ f = 1 - 2r`, as Algorithm 3 uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Approximation {
    pub ratio: Ratio,
    /// `-b <= a <= b`; negative exactly when `r > 1/2` (rounded up to 0 near 1/2 when conservative).
    pub a: i64,
    pub b: u64,
    /// `Some(m)` when `b = 2^m` (ConstLift applies).
    pub m: Option<u32>,
    pub rounding: Rounding,
}

impl Approximation {
    fn parts(&self) -> (i128, i128, i128, i128) {
        let (fnum, den) = f_parts(self.ratio).expect("validated on construction");
        (i128::from(self.a), i128::from(self.b), fnum, den)
    }

    /// `a*den - (den - 2 num)*b`: `f - a/b` scaled by `b*den`; `>= 0` when conservative.
    pub fn error_num(&self) -> i128 {
        let (a, b, fnum, den) = self.parts();
        a * den - fnum * b
    }

    /// `b*den`, the denominator of `a/b - f = error_num / error_den`.
    pub fn error_den(&self) -> i128 {
        let (_, b, _, den) = self.parts();
        b * den
    }

    /// `a/b == f`: both rules decide alike on every input.
    pub fn is_exact(&self) -> bool {
        self.error_num() == 0
    }

    /// The secret-mask rule: match iff `b*dot > a*ml`, i.e. `MSB(a*ml - b*dot) = 1` without wrap.
    pub fn matches(&self, ml: i128, dot: i128) -> bool {
        let (a, b, _, _) = self.parts();
        b * dot > a * ml
    }

    /// The exact rule (Algorithm 1): `hd < r*ml`, i.e. `den*dot > (den - 2 num)*ml`.
    pub fn exact_matches(&self, ml: i128, dot: i128) -> bool {
        let (_, _, fnum, den) = self.parts();
        den * dot > fnum * ml
    }

    /// The proved bound on disagreements: when `matches` and `exact_matches` differ at
    /// `(ml, dot)`, then `b * |den*dot - fnum*ml| <= |error_num| * ml`. Returns whether `(ml, dot)`
    /// lies inside that band (a disagreement outside it would contradict the bound).
    pub fn within_error_band(&self, ml: i128, dot: i128) -> bool {
        let (_, b, fnum, den) = self.parts();
        b * (den * dot - fnum * ml).abs() <= self.error_num().abs() * ml
    }

    /// Whether both rules decide alike for every reachable pair with `ml <= code_bits`
    /// (`|dot| <= ml`, `dot = ml mod 2`). For each `ml`, the matching `dot`s of either rule are an
    /// upward-closed set of the reachable ones, so comparing the smallest matching `dot` suffices.
    pub fn same_decisions(&self, code_bits: u32) -> bool {
        let (a, b, fnum, den) = self.parts();
        (0..=i128::from(code_bits))
            .all(|ml| first_match(fnum * ml, den, ml) == first_match(a * ml, b, ml))
    }
}

/// The smallest reachable `dot` at `ml` with `q*dot > p` (`q > 0`), or `None`.
fn first_match(p: i128, q: i128, ml: i128) -> Option<i128> {
    // Smallest integer > p/q, then up to the parity of ml and at least -ml.
    let mut d = p.div_euclid(q) + 1;
    if (d - ml).rem_euclid(2) != 0 {
        d += 1;
    }
    let d = d.max(-ml);
    (d <= ml).then_some(d)
}

/// `a/b` with `b = 2^m`, rounded as `rounding` says (Section 5.1: `b = 2^m` makes lifting `dot`
/// free). The worst-case error is `|f - a/b| < 2^-m` (conservative) or `<= 2^-(m+1)` (nearest);
/// exact whenever `f * 2^m` is whole (e.g. `r = 3/8`, `f = 1/4`, for every `m >= 2`).
pub fn approx_pow2(ratio: Ratio, m: u32, rounding: Rounding) -> Result<Approximation, ApproxError> {
    let (fnum, den) = f_parts(ratio)?;
    if m > MAX_M {
        return Err(ApproxError::PrecisionTooLarge { m });
    }
    let b = 1i128 << m;
    let scaled = fnum * b;
    let a = match rounding {
        // ceil(fnum*b/den)
        Rounding::Conservative => -(-scaled).div_euclid(den),
        // floor(x + 1/2) rounds ties up, the conservative side.
        Rounding::Nearest => (2 * scaled + den).div_euclid(2 * den),
    };
    Ok(Approximation {
        ratio,
        a: a as i64,
        b: b as u64,
        m: Some(m),
        rounding,
    })
}

/// What [`choose_m`] must reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Accuracy {
    /// The deployed `b = 2^16` ([`DEFAULT_M`]).
    Deployed,
    /// `|f - a/b| <= 2^-bits`.
    ErrorBits(u32),
    /// `a/b == f` (possible only when `den` divides `2^m * (den - 2 num)`).
    Exact,
    /// The same decision as the exact ratio for every reachable pair with `ml <= code_bits`
    /// (conservative: always reached once `2^m > (den - 1) * code_bits`; nearest may never reach
    /// it, since `a/b < f` makes the tie `dot = f*ml` match, which the strict exact rule rejects).
    SameDecisions { code_bits: u32 },
}

/// The smallest `m` whose `b = 2^m` approximation reaches `accuracy`.
pub fn choose_m(ratio: Ratio, accuracy: Accuracy, rounding: Rounding) -> Result<u32, ApproxError> {
    f_parts(ratio)?;
    let reaches = |m: u32| -> bool {
        let ap = approx_pow2(ratio, m, rounding).expect("m <= MAX_M");
        match accuracy {
            Accuracy::Deployed => m >= DEFAULT_M,
            // |e| / (b*den) <= 2^-bits, all in i128: |e| < den < 2^64, 2^bits <= 2^MAX_M.
            Accuracy::ErrorBits(bits) => {
                bits <= MAX_M && ap.error_num().abs() << bits <= ap.error_den()
            }
            Accuracy::Exact => ap.is_exact(),
            Accuracy::SameDecisions { code_bits } => ap.same_decisions(code_bits),
        }
    };
    (0..=MAX_M)
        .find(|&m| reaches(m))
        .ok_or(ApproxError::Unreachable {
            num: ratio.num,
            den: ratio.den,
        })
}

/// The best approximation `a/b` of `f` with `1 <= b <= bound` (NoLift: small `a, b`).
///
/// Walks the Stern–Brocot tree (in batches, i.e. along the continued fraction of `f`, so it takes
/// `O(log bound)` steps) to the Farey neighbours `lo <= f <= hi` of order `bound`; conservative
/// takes `hi`, nearest the closer one. Both are in lowest terms and satisfy `-1 <= a/b <= 1`
/// because `-1/1` and `1/1` are candidates; the error is at most `1 / (b * (bound + 1 - b))`.
pub fn approx_bounded(
    ratio: Ratio,
    bound: u64,
    rounding: Rounding,
) -> Result<Approximation, ApproxError> {
    let (p, q) = f_parts(ratio)?;
    if bound == 0 {
        return Err(ApproxError::BadBound { bound });
    }
    let big_b = i128::from(bound);
    let fl = p.div_euclid(q);
    // lo = (a, b) <= f <= hi, neighbours in the Stern–Brocot tree.
    let (mut lo, mut hi) = ((fl, 1i128), (fl + 1, 1i128));
    let (lo, hi) = loop {
        // how far below/above f: p/q - a/b scaled by b*q.
        let below = |x: (i128, i128)| p * x.1 - x.0 * q;
        if below(lo) == 0 {
            break (lo, lo);
        }
        if below(hi) == 0 {
            break (hi, hi);
        }
        // lo + j*hi stays <= f for j <= below(lo) / -below(hi).
        let j = (below(lo) / -below(hi)).min((big_b - lo.1) / hi.1);
        lo = (lo.0 + j * hi.0, lo.1 + j * hi.1);
        if below(lo) == 0 {
            break (lo, lo);
        }
        // hi + j*lo stays >= f for j <= -below(hi) / below(lo).
        let j2 = (-below(hi) / below(lo)).min((big_b - hi.1) / lo.1);
        hi = (hi.0 + j2 * lo.0, hi.1 + j2 * lo.1);
        if j == 0 && j2 == 0 {
            break (lo, hi);
        }
    };
    let pick = match rounding {
        Rounding::Conservative => hi,
        Rounding::Nearest => {
            // compare f - lo with hi - f over the common denominator q*lo.b*hi.b.
            let d_lo = (p * lo.1 - lo.0 * q) * hi.1;
            let d_hi = (hi.0 * q - p * hi.1) * lo.1;
            if d_lo < d_hi {
                lo
            } else {
                hi
            }
        }
    };
    let m = (pick.1 as u64)
        .is_power_of_two()
        .then(|| pick.1.trailing_zeros());
    Ok(Approximation {
        ratio,
        a: pick.0 as i64,
        b: pick.1 as u64,
        m,
        rounding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const R345: Ratio = Ratio { num: 69, den: 200 };
    const R375: Ratio = Ratio { num: 3, den: 8 };

    #[test]
    fn deployed_345() {
        // f = 0.31, 0.31 * 2^16 = 20316.16.
        let c = approx_pow2(R345, 16, Rounding::Conservative).unwrap();
        assert_eq!((c.a, c.b, c.m), (20317, 65536, Some(16)));
        // a/b - f = 0.84 / 2^16.
        assert_eq!((c.error_num(), c.error_den()), (168, 200 << 16));
        let n = approx_pow2(R345, 16, Rounding::Nearest).unwrap();
        assert_eq!(n.a, 20316);
        assert!(n.error_num() < 0);
        assert_eq!(
            choose_m(R345, Accuracy::Deployed, Rounding::Conservative),
            Ok(16)
        );
    }

    #[test]
    fn exact_375() {
        for m in 2..=MAX_M {
            let c = approx_pow2(R375, m, Rounding::Conservative).unwrap();
            assert!(c.is_exact());
            assert_eq!(c.a, 1 << (m - 2));
        }
        assert!(!approx_pow2(R375, 1, Rounding::Conservative)
            .unwrap()
            .is_exact());
        assert_eq!(
            choose_m(R375, Accuracy::Exact, Rounding::Conservative),
            Ok(2)
        );
        assert!(choose_m(R345, Accuracy::Exact, Rounding::Conservative).is_err());
        let s = approx_bounded(R375, 10, Rounding::Nearest).unwrap();
        assert_eq!((s.a, s.b, s.m), (1, 4, Some(2)));
    }

    #[test]
    fn bounded_and_negative() {
        // 0.31 = [0; 3, 4, 2, 1, 1, 2]: convergents 1/3, 4/13, 9/29, ...
        let c = approx_bounded(R345, 13, Rounding::Nearest).unwrap();
        assert_eq!((c.a, c.b), (4, 13));
        let c = approx_bounded(R345, 10, Rounding::Conservative).unwrap();
        assert_eq!((c.a, c.b), (1, 3));
        // r = 3/4: f = -1/2.
        let neg = Ratio { num: 3, den: 4 };
        let c = approx_bounded(neg, 1000, Rounding::Nearest).unwrap();
        assert_eq!((c.a, c.b), (-1, 2));
        let c = approx_pow2(Ratio { num: 7, den: 10 }, 4, Rounding::Conservative).unwrap();
        // f = -0.4, -0.4 * 16 = -6.4, ceil = -6.
        assert_eq!(c.a, -6);
        assert!(approx_bounded(R345, 0, Rounding::Nearest).is_err());
        assert!(approx_pow2(Ratio { num: 3, den: 2 }, 4, Rounding::Nearest).is_err());
    }

    #[test]
    fn same_decisions_needs_fewer_bits_than_the_crude_bound() {
        let m = choose_m(
            R345,
            Accuracy::SameDecisions { code_bits: 12800 },
            Rounding::Conservative,
        )
        .unwrap();
        // 2^m > (den - 1) * l guarantees it at m = 22; parity and the gaps make m = 20 enough
        // (a = 325059, b = 2^20).
        assert_eq!(m, 20);
        let ap = |m| approx_pow2(R345, m, Rounding::Conservative).unwrap();
        assert!(ap(m).same_decisions(12800));
        assert!(!ap(m - 1).same_decisions(12800));
    }
}
