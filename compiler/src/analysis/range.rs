//! A small interval domain over i128: the value ranges that ring selection (Lemma 1) reasons
//! about (`ml`, `dot`, the threshold `T` and the compared value `T - dot`).

/// The closed integer interval `[lo, hi]` (always `lo <= hi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Interval {
    pub lo: i128,
    pub hi: i128,
}

impl Interval {
    /// The interval between two endpoints, in either order.
    pub fn new(a: i128, b: i128) -> Self {
        Interval {
            lo: a.min(b),
            hi: a.max(b),
        }
    }

    pub fn point(v: i128) -> Self {
        Interval { lo: v, hi: v }
    }

    /// The smallest interval containing both.
    pub fn hull(self, other: Interval) -> Self {
        Interval {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    pub fn contains(self, v: i128) -> bool {
        (self.lo..=self.hi).contains(&v)
    }

    pub fn contains_interval(self, other: Interval) -> bool {
        self.lo <= other.lo && other.hi <= self.hi
    }

    /// The exact image of `domain` under a monotone (non-decreasing or non-increasing) `f`:
    /// the extremes of a monotone function sit at the endpoints.
    pub fn monotone_image(domain: Interval, f: impl Fn(i128) -> i128) -> Self {
        Interval::new(f(domain.lo), f(domain.hi))
    }

    /// The signed range of Z_2^k in two's complement: `[-2^(k-1), 2^(k-1) - 1]`.
    pub fn signed_ring(k: u32) -> Self {
        let half = 1i128 << (k - 1);
        Interval {
            lo: -half,
            hi: half - 1,
        }
    }

    /// Whether every value is represented without wrapping in Z_2^k's signed range.
    pub fn fits_signed(self, k: u32) -> bool {
        (1..=126).contains(&k) && Interval::signed_ring(k).contains_interval(self)
    }

    /// The smallest k >= 1 with [`Self::fits_signed`].
    pub fn signed_bits(self) -> u32 {
        (1..=126).find(|&k| self.fits_signed(k)).unwrap_or(127)
    }
}

impl std::ops::Add for Interval {
    type Output = Interval;
    fn add(self, other: Interval) -> Interval {
        Interval {
            lo: self.lo + other.lo,
            hi: self.hi + other.hi,
        }
    }
}

impl std::ops::Neg for Interval {
    type Output = Interval;
    fn neg(self) -> Interval {
        Interval {
            lo: -self.hi,
            hi: -self.lo,
        }
    }
}

impl std::ops::Sub for Interval {
    type Output = Interval;
    fn sub(self, other: Interval) -> Interval {
        self + -other
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "[{}, {}]", self.lo, self.hi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_hull() {
        let a = Interval::new(3, -2);
        assert_eq!(a, Interval { lo: -2, hi: 3 });
        assert_eq!(a - Interval::new(0, 5), Interval::new(-7, 3));
        assert_eq!(a.hull(Interval::point(10)), Interval::new(-2, 10));
        assert_eq!(
            Interval::monotone_image(Interval::new(0, 4), |x| -3 * x),
            Interval::new(-12, 0)
        );
    }

    #[test]
    fn signed_bits_is_minimal() {
        assert_eq!(Interval::new(-8832, 16768).signed_bits(), 16);
        assert_eq!(Interval::new(-16384, 16383).signed_bits(), 15);
        assert_eq!(Interval::new(-16385, 0).signed_bits(), 16);
        assert_eq!(Interval::new(0, 16384).signed_bits(), 16);
        assert_eq!(Interval::point(0).signed_bits(), 1);
        assert_eq!(Interval::point(-1).signed_bits(), 1);
    }
}
