//! Ring selection for public-mask comparisons (Lemma 1 of the Large-Scale MPC paper).
//!
//! A pair matches iff `hd < r * ml` (Algorithm 1). With masked bitvectors (Section 4.1.1,
//! Appendix B) `hd = (ml - dot)/2` with `dot = <c', d'>`, so this is `dot > f * ml` with
//! `f = 1 - 2r`, and since `dot` is an integer, iff `MSB(T - dot) = 1` with the public threshold
//! `T = floor(f * ml)`, provided `T - dot` never wraps in the signed range of Z_2^k.
//! (The paper writes `ceil`; `floor` is the exact form: with `ceil`, `dot = ceil(f * ml)` would be
//! misjudged whenever `f * ml` is not an integer. At the threshold itself, `hd * den == num * ml`,
//! `T - dot = 0`, whose MSB is 0: no match, as the strict `<` demands.)
//!
//! Lemma 1's proof bounds `ml in [0, l]`, `dot in [-l, l]` and (for `f in [0, 1]`)
//! `T - dot in [-l, 2l]`, and asks Z_t to represent that range in two's complement. We apply the
//! same argument with the program's own `f` and the correlation `|dot| <= ml`:
//! `T(ml) - ml <= T - dot <= T(ml) + ml`, and both bounds are monotone in `ml`
//! (`floor((f - 1) ml)` and `floor((f + 1) ml)`), so the exact range is spanned by `ml = 0` and
//! `ml = l`, where `dot = l` (identical codes) and `dot = -l` (every unmasked bit differs) are
//! reachable. The chosen k is the smallest that holds this range; it is never larger than
//! Lemma 1's, whose `[-l, 2l]` contains it.

use super::range::Interval;
use crate::sema::Ratio;

/// The ring chosen for one comparison and the facts that justify it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RingChoice {
    /// k: the comparison is computed in Z_2^k.
    pub ring_bits: u32,
    /// The exact range of the compared value `T - dot` over all inputs.
    pub lo: i128,
    pub hi: i128,
    /// Why k suffices and why k - 1 does not, e.g.
    /// "T - dot in [-8832, 16768] ⊂ [-2^15, 2^15); k = 15 would wrap 16768".
    pub justification: String,
    /// Lemma 1 applies: its hypothesis `f = 1 - 2r in [0, 1]` holds (every ratio in [0, 0.5]),
    /// so the paper's sufficient condition `l < t/4 and l < t - 2^(ceil(log2 t) - 1)` also
    /// justifies the ring of [`Self::lemma1_ring_bits`] bits.
    pub lemma1_holds: bool,
    /// The smallest k with `t = 2^k` satisfying Lemma 1's two inequalities for this `l`.
    pub lemma1_ring_bits: u32,
    /// Whether Lemma 1's inequalities already hold at the chosen `t = 2^ring_bits` (false when the
    /// exact range proves a smaller ring than the lemma's worst case).
    pub lemma1_at_chosen_ring: bool,
}

/// `T(ml) = floor((den - 2 num) * ml / den)`, the public threshold for one pair.
/// The runtime computes the same value with the same function for every pair.
pub fn threshold(ratio: Ratio, mask_len: u64) -> i128 {
    irisc_runtime::iris::public_threshold(ratio.num, ratio.den, mask_len)
}

/// The ranges that ring selection reasons about, for code length `l` at one ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ComparisonRanges {
    /// `ml`, the number of bits both masks keep: `[0, l]`.
    pub ml: Interval,
    /// `dot = <c', d'>` of the masked bitvectors: `[-l, l]`.
    pub dot: Interval,
    /// `T = floor(f * ml)`.
    pub threshold: Interval,
    /// `T - dot` (exact: uses `|dot| <= ml`).
    pub compared: Interval,
}

pub fn ranges(code_bits: u32, ratio: Ratio) -> ComparisonRanges {
    let l = i128::from(code_bits);
    let ml = Interval::new(0, l);
    let t = |m: i128| threshold(ratio, m as u64);
    let compared =
        Interval::monotone_image(ml, |m| t(m) - m).hull(Interval::monotone_image(ml, |m| t(m) + m));
    ComparisonRanges {
        ml,
        dot: Interval::new(-l, l),
        threshold: Interval::monotone_image(ml, t),
        compared,
    }
}

/// Lemma 1's sufficient condition for `t = 2^k`: `l < t/4` and `l < t - 2^(ceil(log2 t) - 1)`.
pub fn lemma1_conditions(code_bits: u32, k: u32) -> bool {
    if !(2..=100).contains(&k) {
        return false;
    }
    let (l, t) = (i128::from(code_bits), 1i128 << k);
    // ceil(log2 t) = k for a power of two.
    l < t / 4 && l < t - (1i128 << (k - 1))
}

/// The smallest k satisfying [`lemma1_conditions`].
pub fn lemma1_ring_bits(code_bits: u32) -> u32 {
    (2..=100)
        .find(|&k| lemma1_conditions(code_bits, k))
        .unwrap_or(101)
}

/// The smallest k whose signed range `[-2^(k-1), 2^(k-1))` holds `T - dot` for every
/// `ml in [0, code_bits]` and `|dot| <= ml`.
pub fn select_ring(code_bits: u32, ratio: Ratio) -> RingChoice {
    let compared = ranges(code_bits, ratio).compared;
    // k >= 2 so that the MSB is not the only bit.
    let k = compared.signed_bits().max(2);
    let (lo, hi) = (compared.lo, compared.hi);
    let half = Interval::signed_ring(k - 1);
    let wrap = if hi > half.hi { hi } else { lo };
    let justification = if compared.fits_signed(k - 1) {
        format!(
            "T - dot in [{lo}, {hi}] ⊂ [-2^{0}, 2^{0}); k = {k} is the smallest ring with an MSB",
            k - 1
        )
    } else {
        format!(
            "T - dot in [{lo}, {hi}] ⊂ [-2^{0}, 2^{0}); k = {0} would wrap {wrap}",
            k - 1
        )
    };
    let lemma1_holds = 2 * ratio.num <= ratio.den;
    RingChoice {
        ring_bits: k,
        lo,
        hi,
        justification,
        lemma1_holds,
        lemma1_ring_bits: lemma1_ring_bits(code_bits),
        lemma1_at_chosen_ring: lemma1_holds && lemma1_conditions(code_bits, k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const R345: Ratio = Ratio { num: 69, den: 200 };
    const R375: Ratio = Ratio { num: 3, den: 8 };

    #[test]
    fn deployed_parameters() {
        let c = select_ring(12800, R345);
        assert_eq!((c.ring_bits, c.lo, c.hi), (16, -8832, 16768));
        assert_eq!(
            c.justification,
            "T - dot in [-8832, 16768] ⊂ [-2^15, 2^15); k = 15 would wrap 16768"
        );
        assert!(c.lemma1_holds && c.lemma1_at_chosen_ring);
        assert_eq!(c.lemma1_ring_bits, 16);
    }

    #[test]
    fn exact_range_can_beat_lemma1() {
        // f = 1/4: T - dot in [-9600, 16000], which fits 15 bits; Lemma 1's [-l, 2l] needs 16.
        let c = select_ring(12800, R375);
        assert_eq!((c.ring_bits, c.lo, c.hi), (15, -9600, 16000));
        assert!(c.lemma1_holds && !c.lemma1_at_chosen_ring);
        assert_eq!(c.lemma1_ring_bits, 16);
    }

    #[test]
    fn small_codes_and_extreme_ratios() {
        assert_eq!(select_ring(256, R375).ring_bits, 10);
        // r = 0: T = ml, T - dot in [0, 2l].
        let c = select_ring(64, Ratio { num: 0, den: 1 });
        assert_eq!((c.lo, c.hi, c.ring_bits), (0, 128, 9));
        // r = 1: T = -ml, T - dot in [-2l, 0]; Lemma 1's hypothesis fails.
        let c = select_ring(64, Ratio { num: 1, den: 1 });
        assert_eq!((c.lo, c.hi, c.ring_bits), (-128, 0, 8));
        assert!(!c.lemma1_holds);
    }

    #[test]
    fn threshold_is_a_floor() {
        assert_eq!(threshold(R345, 12800), 3968);
        // f = -1/2 at ml = 3: floor(-1.5) = -2.
        assert_eq!(threshold(Ratio { num: 3, den: 4 }, 3), -2);
        assert_eq!(lemma1_ring_bits(12800), 16);
        assert!(!lemma1_conditions(12800, 15));
    }
}
