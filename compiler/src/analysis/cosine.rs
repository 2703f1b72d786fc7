//! Ranges and ring of a cosine test (paper 002, Section 2.4: compare without square roots).
//!
//! `x`, `y` are integer vectors of dimension `n` with components in `[-2^s, 2^s]`
//! (`round(v * 2^s)` of `v in [-1, 1]`), `tau = ±num/den`, `p = <x,y>`, `xx = <x,x>`,
//! `yy = <y,y>`, `X = n * 4^s`. The lowering computes, all in one ring Z_2^k:
//! `p`, `xx`, `yy` (dot products), `p*p` and `xx*yy` (secure multiplications),
//! `den^2*p^2` and `num^2*xx*yy` (local scalings) and `E = den^2 p^2 - num^2 xx yy`, and takes the
//! MSB of a sign operand (`p`, or `-p` when strict) and of a magnitude operand (`E` or `-E`):
//!
//! | tau     | `>=`                              | `>`                               |
//! |---------|-----------------------------------|-----------------------------------|
//! | `>= 0`  | `!MSB(p) and !MSB(E)`             | `MSB(-p) and MSB(-E)`             |
//! | `< 0`   | `!MSB(p) or !MSB(-E)`             | `MSB(-p) or MSB(E)`               |
//!
//! Exact ranges. `p in [-X, X]` (`x = ±y = (2^s, ..)`), `xx, yy in [0, X]`, `p^2, xx*yy in
//! [0, X^2]`. By Cauchy–Schwarz `p^2 <= xx*yy`, so `E <= (den^2 - num^2) p^2`, hence
//! `E in [-num^2 X^2, max(0, den^2 - num^2) X^2]`: the top at `x = y = (2^s, ..)` (or at `x = 0`
//! when `num > den`), the bottom at orthogonal full-norm vectors (`x = (2^s, ..)`, `y`
//! alternating `±2^s`; exact for even `n`, a bound for odd `n`, where `p = 0` is not reachable
//! with full norms).
//!
//! The ring is the smallest k whose signed range `[-2^(k-1), 2^(k-1))` holds every one of these
//! values, so that no intermediate wraps (the two MSB operands in particular: then the MSB is the
//! sign). The largest is always a product at `x = y = (2^s, ..)`: `max(den, num)^2 X^2`.

use super::lemma2::MAX_RING_BITS;
use super::range::Interval;
use crate::sema::program::{Ratio, SignedRatio};

/// The exact ranges of every value the cosine lowering materialises.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CosineRanges {
    pub p: Interval,
    /// `<x,x>` and `<y,y>`.
    pub norm: Interval,
    /// `p*p` and `xx*yy`.
    pub product: Interval,
    /// `den^2 * p^2`.
    pub scaled_pp: Interval,
    /// `num^2 * xx * yy`.
    pub scaled_xxyy: Interval,
    /// `E = den^2 p^2 - num^2 xx yy`.
    pub e: Interval,
    /// What the sign MSB is taken of: `p`, or `-p` when strict.
    pub sign_operand: Interval,
    /// What the magnitude MSB is taken of: `E` or `-E` (see the module table).
    pub magnitude_operand: Interval,
}

/// The ring of one cosine test and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CosineRing {
    pub ring_bits: u32,
    pub ranges: CosineRanges,
    pub justification: String,
}

/// Why no ring of at most 64 bits holds the cosine test.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cosine test with dim {dim}, scale 2^{scale_bits} and tau = {sign}{num}/{den} needs a \
     {needed}-bit ring (largest value {largest}), more than {MAX_RING_BITS}"
)]
pub struct CosineError {
    pub dim: u32,
    pub scale_bits: u32,
    pub sign: &'static str,
    pub num: u64,
    pub den: u64,
    /// 127 when the values do not even fit i128.
    pub needed: u32,
    pub largest: String,
}

impl CosineError {
    /// What the user can change.
    pub fn hint(&self) -> String {
        format!(
            "lower the scale (e.g. `scale {}`), use a tau with a smaller denominator than {}, \
             or a smaller dimension",
            self.scale_bits.saturating_sub(1),
            self.den
        )
    }
}

fn x_max(dim: u32, scale_bits: u32) -> Option<i128> {
    let four_s = 1i128.checked_shl(2 * scale_bits).filter(|v| *v > 0)?;
    i128::from(dim).checked_mul(four_s)
}

/// Whether the tests are strict / the threshold negative decide which operands the MSBs see.
fn operands(e: Interval, p: Interval, tau: SignedRatio, strict: bool) -> (Interval, Interval) {
    let sign = if strict { -p } else { p };
    // tau >= 0: E (>=) or -E (>); tau < 0: -E (>=) or E (>).
    let mag = if tau.negative != strict { -e } else { e };
    (sign, mag)
}

/// The exact ranges (see the module comment); `None` when they overflow i128.
pub fn ranges(dim: u32, scale_bits: u32, tau: SignedRatio, strict: bool) -> Option<CosineRanges> {
    let x = x_max(dim, scale_bits)?;
    let x2 = x.checked_mul(x)?;
    let (num, den) = (i128::from(tau.abs.num), i128::from(tau.abs.den));
    let num2 = num.checked_mul(num)?;
    let den2 = den.checked_mul(den)?;
    let scaled_pp = Interval::new(0, den2.checked_mul(x2)?);
    let scaled_xxyy = Interval::new(0, num2.checked_mul(x2)?);
    let top = (den2 - num2).max(0).checked_mul(x2)?;
    let e = Interval::new(-scaled_xxyy.hi, top);
    let p = Interval::new(-x, x);
    let (sign_operand, magnitude_operand) = operands(e, p, tau, strict);
    Some(CosineRanges {
        p,
        norm: Interval::new(0, x),
        product: Interval::new(0, x2),
        scaled_pp,
        scaled_xxyy,
        e,
        sign_operand,
        magnitude_operand,
    })
}

impl CosineRanges {
    /// Every materialised value, named.
    pub fn all(&self) -> [(&'static str, Interval); 8] {
        [
            ("p", self.p),
            ("xx, yy", self.norm),
            ("p^2, xx*yy", self.product),
            ("den^2 p^2", self.scaled_pp),
            ("num^2 xx yy", self.scaled_xxyy),
            ("E", self.e),
            ("sign operand", self.sign_operand),
            ("magnitude operand", self.magnitude_operand),
        ]
    }

    /// The smallest k (>= 2) whose signed range holds every value.
    pub fn ring_bits(&self) -> u32 {
        self.all()
            .iter()
            .map(|(_, i)| i.signed_bits())
            .max()
            .unwrap_or(1)
            .max(2)
    }
}

/// The ring of a cosine test: the smallest k holding every materialised value.
pub fn select_cosine_ring(
    dim: u32,
    scale_bits: u32,
    tau: SignedRatio,
    strict: bool,
) -> Result<CosineRing, CosineError> {
    let err = |needed: u32, largest: String| CosineError {
        dim,
        scale_bits,
        sign: if tau.negative { "-" } else { "" },
        num: tau.abs.num,
        den: tau.abs.den,
        needed,
        largest,
    };
    let Some(r) = ranges(dim, scale_bits, tau, strict) else {
        return Err(err(127, "beyond 2^126".into()));
    };
    let k = r.ring_bits();
    // The first of the widest values, in the order of `all` (products before differences).
    let (name, widest) = r
        .all()
        .into_iter()
        .fold(None::<(&str, Interval)>, |best, (n, i)| match best {
            Some((_, b)) if b.signed_bits() >= i.signed_bits() => best,
            _ => Some((n, i)),
        })
        .expect("eight values");
    if k > MAX_RING_BITS {
        return Err(err(k, format!("{name} in {widest}")));
    }
    let wrap = if widest.fits_signed(k - 1) {
        format!("k = {k} is the smallest ring with an MSB")
    } else {
        let v = if widest.hi > Interval::signed_ring(k - 1).hi {
            widest.hi
        } else {
            widest.lo
        };
        format!("k = {} would wrap {name} = {v}", k - 1)
    };
    let justification = format!(
        "X = n*4^s = {}; p in {}, E = den^2 p^2 - num^2 xx yy in {}, sign operand in {}, \
         magnitude operand in {}; widest: {name} in {widest} ⊂ [-2^{km1}, 2^{km1}); {wrap}",
        r.norm.hi,
        r.p,
        r.e,
        r.sign_operand,
        r.magnitude_operand,
        km1 = k - 1,
    );
    Ok(CosineRing {
        ring_bits: k,
        ranges: r,
        justification,
    })
}

fn dot(x: &[i64], y: &[i64]) -> i128 {
    x.iter()
        .zip(y)
        .map(|(&a, &b)| i128::from(a) * i128::from(b))
        .sum()
}

fn sq(r: Ratio) -> (i128, i128) {
    let (n, d) = (i128::from(r.num), i128::from(r.den));
    (n * n, d * d)
}

/// The language's semantics of `cosine(x, y) >= tau` (or `>`), in exact integers (ARCHITECTURE.md §7).
pub fn decide_exact(x: &[i64], y: &[i64], tau: SignedRatio, strict: bool) -> bool {
    let (p, xx, yy) = (dot(x, y), dot(x, x), dot(y, y));
    let (num2, den2) = sq(tau.abs);
    let e = den2 * p * p - num2 * xx * yy;
    let pos = |v: i128| if strict { v > 0 } else { v >= 0 };
    if tau.negative {
        pos(p) || pos(-e)
    } else {
        pos(p) && pos(e)
    }
}

/// What the lowering computes: every value mod 2^k (wrapping arithmetic mod 2^128, exact mod
/// 2^k for k <= 64), the two MSBs, combined as in the module table. Equal to [`decide_exact`]
/// whenever k holds the operands' ranges.
pub fn decide_in_ring(x: &[i64], y: &[i64], tau: SignedRatio, strict: bool, k: u32) -> bool {
    let k = k.clamp(1, 64);
    let red = |v: u128| {
        if k == 64 {
            v & u128::from(u64::MAX)
        } else {
            v & ((1u128 << k) - 1)
        }
    };
    let msb = |v: u128| (red(v) >> (k - 1)) & 1 == 1;
    let dotw = |a: &[i64], b: &[i64]| {
        a.iter().zip(b).fold(0u128, |acc, (&u, &v)| {
            acc.wrapping_add((u as i128 as u128).wrapping_mul(v as i128 as u128))
        })
    };
    let (p, xx, yy) = (red(dotw(x, y)), red(dotw(x, x)), red(dotw(y, y)));
    let num2 = u128::from(tau.abs.num).wrapping_mul(u128::from(tau.abs.num));
    let den2 = u128::from(tau.abs.den).wrapping_mul(u128::from(tau.abs.den));
    let pp = red(p.wrapping_mul(p));
    let xxyy = red(xx.wrapping_mul(yy));
    let e = red(red(den2.wrapping_mul(pp)).wrapping_sub(red(num2.wrapping_mul(xxyy))));
    let neg = |v: u128| red(v.wrapping_neg());
    let sign = if strict { msb(neg(p)) } else { !msb(p) };
    let mag = match (tau.negative, strict) {
        (false, false) => !msb(e),
        (false, true) => msb(neg(e)),
        (true, false) => !msb(neg(e)),
        (true, true) => msb(e),
    };
    if tau.negative {
        sign || mag
    } else {
        sign && mag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tau(negative: bool, num: u64, den: u64) -> SignedRatio {
        SignedRatio {
            negative,
            abs: Ratio { num, den },
        }
    }

    #[test]
    fn voice_parameters() {
        // dim 192, scale 8, tau = 0.34 = 17/50: X = 192 * 2^16, den^2 X^2 = 2500 * X^2.
        let c = select_cosine_ring(192, 8, tau(false, 17, 50), false).unwrap();
        let x = 192i128 << 16;
        assert_eq!(c.ranges.p, Interval::new(-x, x));
        assert_eq!(c.ranges.scaled_pp.hi, 2500 * x * x);
        assert_eq!(
            c.ranges.e,
            Interval::new(-289 * x * x, (2500 - 289) * x * x)
        );
        assert_eq!(c.ring_bits, Interval::point(2500 * x * x).signed_bits());
        assert_eq!(c.ring_bits, 60);
        assert!(
            c.justification.contains("k = 59 would wrap den^2 p^2"),
            "{}",
            c.justification
        );
    }

    #[test]
    fn operands_follow_the_table() {
        let r = ranges(4, 1, tau(true, 1, 2), true).unwrap();
        assert_eq!(r.sign_operand, -r.p);
        assert_eq!(r.magnitude_operand, r.e);
        let r = ranges(4, 1, tau(true, 1, 2), false).unwrap();
        assert_eq!(r.magnitude_operand, -r.e);
        // |tau| > 1: E <= 0.
        let r = ranges(4, 1, tau(false, 3, 2), false).unwrap();
        assert_eq!(r.e.hi, 0);
    }

    #[test]
    fn too_large_says_what_to_change() {
        let e = select_cosine_ring(192, 12, tau(false, 17, 50), false).unwrap_err();
        assert!(e.needed > 64);
        assert!(e.hint().contains("lower the scale"));
        assert!(select_cosine_ring(u32::MAX, 62, tau(false, 1, 3), false).is_err());
    }

    #[test]
    fn ring_decision_equals_exact_at_witnesses() {
        let t = tau(false, 17, 50);
        let k = select_cosine_ring(4, 3, t, false).unwrap().ring_bits;
        let full = [8i64, 8, 8, 8];
        let alt = [8i64, -8, 8, -8];
        for (x, y) in [(full, full), (full, alt), (full, [-8; 4]), (full, [0; 4])] {
            for strict in [false, true] {
                for t in [t, tau(true, 17, 50)] {
                    assert_eq!(
                        decide_in_ring(&x, &y, t, strict, k),
                        decide_exact(&x, &y, t, strict)
                    );
                }
            }
        }
    }
}
