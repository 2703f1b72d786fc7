//! Algorithm 1 (plain iris-code matching) in exact integer arithmetic.
//!
//! `m = qm & dm`, `ml = popcount(m)`, `hd = popcount((qc ^ dc) & m)`; a pair matches iff
//! `hd / ml < num / den`, evaluated as `hd * den < num * ml` (strict, no floats), so `ml = 0`
//! never matches. With rotations, the query rotated by some `s` in `lo..=hi` must match.

use super::code::{IrisCode, IrisRecord};

/// The two counts Algorithm 1 compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap {
    /// Bits valid in both codes (`popcount(qm & dm)`).
    pub ml: u64,
    /// Valid bits that differ (`popcount((qc ^ dc) & qm & dm)`).
    pub hd: u64,
}

impl Overlap {
    /// The masked-bit dot product `<q', d'>` of Appendix B, which equals `ml - 2 hd`.
    pub fn masked_dot(&self) -> i64 {
        self.ml as i64 - 2 * self.hd as i64
    }

    /// `hd / ml < num / den`, exactly. A zero denominator is no ratio at all: never a match.
    pub fn below_ratio(&self, num: u64, den: u64) -> bool {
        den != 0 && (self.hd as u128) * (den as u128) < (num as u128) * (self.ml as u128)
    }

    /// The secret-mask variant of the contract: `b * (ml - 2 hd) > a * ml`, where `a / b`
    /// approximates `1 - 2 * ratio`.
    pub fn above_approx(&self, a: u64, b: u64) -> bool {
        (b as i128) * (self.masked_dot() as i128) > (a as i128) * (self.ml as i128)
    }
}

/// The counts for `q` against `d`, or `None` when their code or mask lengths differ.
pub fn overlap_counts(q: &IrisCode, d: &IrisCode) -> Option<Overlap> {
    let n = q.code.len();
    if q.mask.len() != n || d.code.len() != n || d.mask.len() != n {
        return None;
    }
    let (mut ml, mut hd) = (0u64, 0u64);
    // Whole 64-bit words first (all checked codes are whole words), then any tail bytes.
    let words = n / 8 * 8;
    for i in (0..words).step_by(8) {
        let w = |v: &[u8]| u64::from_le_bytes(v[i..i + 8].try_into().unwrap_or([0; 8]));
        let m = w(&q.mask) & w(&d.mask);
        ml += u64::from(m.count_ones());
        hd += u64::from(((w(&q.code) ^ w(&d.code)) & m).count_ones());
    }
    for i in words..n {
        let m = q.mask[i] & d.mask[i];
        ml += u64::from(m.count_ones());
        hd += u64::from(((q.code[i] ^ d.code[i]) & m).count_ones());
    }
    Some(Overlap { ml, hd })
}

/// Algorithm 1 for one pair: `hd * den < num * ml`. Codes of different lengths never match.
pub fn fhd_match(q: &IrisCode, d: &IrisCode, ratio_num: u64, ratio_den: u64) -> bool {
    overlap_counts(q, d).is_some_and(|o| o.below_ratio(ratio_num, ratio_den))
}

/// True iff `q` rotated by some `s` in `lo..=hi` matches `d` (an empty range never matches).
pub fn matches_any_rotation(
    q: &IrisCode,
    d: &IrisCode,
    ratio_num: u64,
    ratio_den: u64,
    lo: i64,
    hi: i64,
) -> bool {
    (lo..=hi).any(|s| fhd_match(&q.rotate(s), d, ratio_num, ratio_den))
}

/// The uniqueness check over a gallery: for each query, whether any gallery record matches under
/// some rotation in `lo..=hi`, and the ids of all that do, in gallery order.
pub fn plain_unique<Q: AsRef<IrisCode>>(
    queries: &[Q],
    gallery: &[IrisRecord],
    ratio_num: u64,
    ratio_den: u64,
    lo: i64,
    hi: i64,
) -> Vec<(bool, Vec<u64>)> {
    queries
        .iter()
        .map(|q| {
            // Rotate the query once per shift, not once per gallery record.
            let rotations: Vec<IrisCode> = (lo..=hi).map(|s| q.as_ref().rotate(s)).collect();
            let ids: Vec<u64> = gallery
                .iter()
                .filter(|d| {
                    rotations
                        .iter()
                        .any(|r| fhd_match(r, &d.iris, ratio_num, ratio_den))
                })
                .map(|d| d.id)
                .collect();
            (!ids.is_empty(), ids)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iris::code::{bit_index, DEFAULT_CODE_BITS};

    /// A 64-bit code with mask bits `0..valid` set and code bits `ones` set.
    fn small(valid: usize, ones: &[usize]) -> IrisCode {
        let mut c = IrisCode::zeros(64).unwrap();
        for i in 0..valid {
            c.set_mask_bit(i, true);
        }
        for &i in ones {
            c.set_code_bit(i, true);
        }
        c
    }

    #[test]
    fn counts_by_hand() {
        // Masks overlap on bits 0..8 (ml = 8); codes differ on bits 1, 3 (valid) and 40 (masked).
        let q = small(8, &[1, 3, 40]);
        let d = small(10, &[]);
        assert_eq!(overlap_counts(&q, &d), Some(Overlap { ml: 8, hd: 2 }));
        assert_eq!(overlap_counts(&q, &d).unwrap().masked_dot(), 4);
    }

    #[test]
    fn exactly_at_the_threshold_does_not_match() {
        // ml = 20, hd = 7: 7/20 = 0.35, ratio 0.35 -> not strictly below.
        let q = small(20, &[0, 1, 2, 3, 4, 5, 6]);
        let d = small(20, &[]);
        assert!(!fhd_match(&q, &d, 35, 100));
        assert!(!fhd_match(&q, &d, 7, 20));
        // Just above the ratio in the other direction matches.
        assert!(fhd_match(&q, &d, 351, 1000));
        // hd = 6: 0.30 < 0.35.
        let q6 = small(20, &[0, 1, 2, 3, 4, 5]);
        assert!(fhd_match(&q6, &d, 35, 100));
    }

    #[test]
    fn threshold_equal_on_full_codes() {
        // ml = 12 800, hd = 4 480 = 0.35 * 12 800 exactly.
        let mut q = IrisCode::zeros(DEFAULT_CODE_BITS).unwrap();
        q.mask.iter_mut().for_each(|b| *b = 0xFF);
        let d = q.clone();
        for i in 0..4480 {
            q.set_code_bit(i, true);
        }
        assert!(!fhd_match(&q, &d, 35, 100));
        q.set_code_bit(0, false);
        assert!(fhd_match(&q, &d, 35, 100));
    }

    #[test]
    fn no_overlap_never_matches() {
        let q = small(0, &[]);
        let d = small(64, &[]);
        assert!(!fhd_match(&q, &d, 1, 1));
        assert!(!fhd_match(&q, &d, u64::MAX, 1));
        // Zero denominators and mismatched lengths are not matches either.
        let full = small(64, &[]);
        assert!(!fhd_match(&full, &full, 1, 0));
        let long = IrisCode::zeros(128).unwrap();
        assert!(!fhd_match(&full, &long, 1, 1));
        assert_eq!(overlap_counts(&full, &long), None);
    }

    #[test]
    fn identical_codes_match_any_positive_ratio() {
        let q = small(64, &[3, 9, 33]);
        assert!(fhd_match(&q, &q, 1, 1_000_000));
        assert!(!fhd_match(&q, &q, 0, 1));
    }

    #[test]
    fn large_ratios_do_not_overflow() {
        let q = small(64, &[0]);
        let d = small(64, &[]);
        assert!(fhd_match(&q, &d, u64::MAX, u64::MAX));
    }

    #[test]
    fn masked_dot_equals_dot_of_masked_bits() {
        let mut q = IrisCode::zeros(DEFAULT_CODE_BITS).unwrap();
        let mut d = q.clone();
        for i in 0..DEFAULT_CODE_BITS {
            q.set_code_bit(i, (i * 31) % 7 < 3);
            q.set_mask_bit(i, (i * 17) % 10 != 0);
            d.set_code_bit(i, (i * 13) % 5 < 2);
            d.set_mask_bit(i, (i * 23) % 9 != 0);
        }
        let dot: i64 = q
            .masked_bits::<i64>()
            .iter()
            .zip(d.masked_bits::<i64>())
            .map(|(a, b)| a * b)
            .sum();
        let o = overlap_counts(&q, &d).unwrap();
        assert_eq!(dot, o.masked_dot());
        // The Section 4.1.1 rewrite: hd < r*ml  <=>  <q', d'> > (1 - 2r) ml, with r = num/den.
        for (num, den) in [(35u64, 100u64), (1, 2), (1, 3), (0, 1), (45, 100)] {
            let rewritten = (o.masked_dot() as i128) * den as i128
                > (den as i128 - 2 * num as i128) * o.ml as i128;
            assert_eq!(o.below_ratio(num, den), rewritten, "ratio {num}/{den}");
        }
    }

    #[test]
    fn approx_rule_by_hand() {
        // ml = 20, hd = 6: dot = 8. With a/b = 3/10 (ratio 0.35): 10*8 = 80 > 3*20 = 60.
        let o = Overlap { ml: 20, hd: 6 };
        assert!(o.above_approx(3, 10));
        // hd = 7: dot = 6, 60 > 60 is false (strict).
        assert!(!Overlap { ml: 20, hd: 7 }.above_approx(3, 10));
    }

    #[test]
    fn rotation_finds_shifted_copy() {
        let mut d = IrisCode::zeros(DEFAULT_CODE_BITS).unwrap();
        for i in 0..DEFAULT_CODE_BITS {
            d.set_code_bit(i, (i * 7919) % 3 == 0 || (i / 9) % 5 == 1);
            d.set_mask_bit(i, true);
        }
        // q[col] = d[col - 4], so rot(q, 4) = d.
        let q = d.rotate(-4);
        assert!(!fhd_match(&q, &d, 1, 10));
        assert!(matches_any_rotation(&q, &d, 1, 10, -15, 15));
        assert!(matches_any_rotation(&q, &d, 1, 10, 4, 4));
        assert!(!matches_any_rotation(&q, &d, 1, 10, -3, 3));
        assert!(!matches_any_rotation(&q, &d, 1, 10, 5, 4));
        // Column 0 of q's row 0 is d's column 196 (= -4 mod 200).
        assert_eq!(q.code_bit(0), d.code_bit(bit_index(0, 196, 0, 200)));
    }

    #[test]
    fn unique_lists_matching_ids_in_gallery_order() {
        let a = small(64, &[0, 1, 2, 3, 4, 5, 6, 7]);
        let b = small(64, &[40, 41, 42, 43, 44, 45, 46, 47]);
        let gallery = vec![
            IrisRecord {
                id: 30,
                iris: b.clone(),
            },
            IrisRecord {
                id: 10,
                iris: a.clone(),
            },
            IrisRecord {
                id: 20,
                iris: a.clone(),
            },
        ];
        let queries = vec![a.clone(), b.clone(), small(0, &[])];
        let out = plain_unique(&queries, &gallery, 1, 10, 0, 0);
        assert_eq!(out[0], (true, vec![10, 20]));
        assert_eq!(out[1], (true, vec![30]));
        assert_eq!(out[2], (false, vec![]));
        // Records work as queries too.
        let out = plain_unique(&gallery[..1], &gallery, 1, 10, -1, 1);
        assert_eq!(out[0].1, vec![30]);
    }
}

/// The public threshold of a public-mask comparison: `T(ml) = floor((den - 2 num) * ml / den)`.
///
/// With masked bitvectors (Appendix B of the Large-Scale MPC paper) a pair matches iff
/// `hd * den < num * ml` iff `dot > (1 - 2 num/den) * ml` with `dot = ml - 2 hd`, and since `dot`
/// is an integer, iff `T - dot < 0`: the MSB the parties extract. The compiler bounds this value
/// to choose the ring (Lemma 1); the runtime computes it for every pair. One definition serves both.
pub fn public_threshold(num: u64, den: u64, mask_len: u64) -> i128 {
    // A zero denominator never reaches here (the front end rejects it); 1 keeps this total.
    let den = den.max(1);
    if num < 1 << 31 && den < 1 << 31 && mask_len < 1 << 31 {
        // |den − 2·num| < 2^32 and mask_len < 2^31: the product fits i64, and 64-bit division
        // is several times faster than the 128-bit library call (one per element).
        let d = den as i64;
        return ((d - 2 * num as i64) * mask_len as i64).div_euclid(d) as i128;
    }
    let den = den as i128;
    ((den - 2 * num as i128) * mask_len as i128).div_euclid(den)
}

/// The public thresholds [`public_threshold`] of a batch's mask lengths. A mask length is at
/// most the code's bits, so the thresholds of all lengths up to the largest are computed once
/// and looked up: one 64-bit division per pair was most of the threshold step's time at a
/// gallery scan's size (hundreds of millions of pairs).
pub struct Thresholds {
    num: u64,
    den: u64,
    table: Vec<i128>,
}

impl Thresholds {
    /// Lengths up to this many get a table; larger ones (not iris codes) are computed per pair.
    const TABLE_MAX: u64 = 1 << 20;

    pub fn new(num: u64, den: u64, mask_lens: &[u64]) -> Thresholds {
        Thresholds::up_to(num, den, mask_lens.iter().copied().max().unwrap_or(0))
    }

    /// The thresholds of mask lengths up to `max` (others are computed when asked).
    pub fn up_to(num: u64, den: u64, max: u64) -> Thresholds {
        let table = if max <= Self::TABLE_MAX {
            (0..=max).map(|m| public_threshold(num, den, m)).collect()
        } else {
            Vec::new()
        };
        Thresholds { num, den, table }
    }

    /// `public_threshold(num, den, m)`.
    #[inline]
    pub fn of(&self, m: u64) -> i128 {
        match self.table.get(m as usize) {
            Some(&t) => t,
            None => public_threshold(self.num, self.den, m),
        }
    }
}

#[cfg(test)]
mod threshold_tests {
    use super::*;

    /// The table and the per-pair path give `public_threshold`, negative thresholds
    /// (ratios above 1/2) included, and lengths past the table's end.
    #[test]
    fn thresholds_looked_up_equal_the_formula() {
        for (num, den) in [
            (0u64, 1u64),
            (3, 8),
            (1, 2),
            (7, 8),
            (69, 200),
            (1 << 30, 3),
        ] {
            for lens in [vec![0u64, 1, 12_800], vec![5, (1 << 20) + 7]] {
                let t = Thresholds::new(num, den, &lens);
                for m in [0u64, 1, 2, 99, 12_800, (1 << 20) + 7, 1 << 25] {
                    assert_eq!(t.of(m), public_threshold(num, den, m), "{num}/{den} at {m}");
                }
            }
        }
        assert!(Thresholds::new(7, 8, &[100]).of(100) < 0);
    }

    /// The 64-bit fast path and the 128-bit path agree around the boundary between them.
    #[test]
    fn fast_path_equals_the_wide_formula() {
        let wide = |num: u64, den: u64, ml: u64| {
            let den = den.max(1) as i128;
            ((den - 2 * num as i128) * ml as i128).div_euclid(den)
        };
        let edge = [0u64, 1, 2, 3, 69, 200, (1 << 31) - 1, 1 << 31, 1 << 40];
        for &num in &edge {
            for &den in &edge {
                for &ml in &edge {
                    assert_eq!(public_threshold(num, den, ml), wide(num, den, ml));
                }
            }
        }
    }

    /// `T - dot < 0` is exactly Algorithm 1's `hd * den < num * ml`, ties included.
    #[test]
    fn threshold_sign_is_the_match_rule() {
        for (num, den) in [(69u64, 200u64), (3, 8), (0, 1), (1, 2), (1, 1), (7, 10)] {
            for ml in 0..=64u64 {
                for hd in 0..=ml {
                    let dot = ml as i128 - 2 * hd as i128;
                    let by_msb = public_threshold(num, den, ml) - dot < 0;
                    assert_eq!(
                        by_msb,
                        (hd * den) < num * ml,
                        "num {num} den {den} ml {ml} hd {hd}"
                    );
                }
            }
        }
    }
}
