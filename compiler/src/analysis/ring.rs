//! Ring selection for public-mask comparisons (Lemma 1 of the Large-Scale MPC paper).
//!
//! A pair matches iff `hd < r * ml`. With masked bitvectors (Appendix B) this is
//! `dot > f * ml` with `dot = <c', d'>` and `f = 1 - 2r`, and since `dot` is an integer,
//! iff `MSB(T - dot) = 1` with the public threshold `T = floor(f * ml)`, provided `T - dot`
//! never wraps in the signed range of Z_2^k. (The paper writes `ceil`; `floor` is the exact form:
//! with `ceil`, `dot = ceil(f * ml)` would be misjudged whenever `f * ml` is not an integer.)

use crate::sema::Ratio;

/// The ring chosen for one comparison and the facts that justify it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RingChoice {
    /// k: the comparison is computed in Z_2^k.
    pub ring_bits: u32,
    /// The exact range of the compared value `T - dot` over all inputs.
    pub lo: i128,
    pub hi: i128,
}

/// `T(ml) = floor((den - 2 num) * ml / den)`, the public threshold for one pair.
pub fn threshold(ratio: Ratio, mask_len: u64) -> i128 {
    let f_num = ratio.den as i128 - 2 * ratio.num as i128;
    (f_num * mask_len as i128).div_euclid(ratio.den as i128)
}

/// The smallest k whose signed range `[-2^(k-1), 2^(k-1))` holds `T - dot` for every
/// `ml in [0, code_bits]` and `|dot| <= ml`.
pub fn select_ring(code_bits: u32, ratio: Ratio) -> RingChoice {
    let l = code_bits as i128;
    // T(ml) + ml and T(ml) - ml are monotone in ml (f is in [-1, 1]), so both extremes sit at ml = l,
    // and both are reached: dot = -l (every unmasked bit differs) and dot = l (identical codes).
    let t = threshold(ratio, code_bits as u64);
    let (lo, hi) = (t - l, t + l);
    let mut k = 2;
    while !(-(1i128 << (k - 1)) <= lo && hi < (1i128 << (k - 1))) {
        k += 1;
    }
    RingChoice { ring_bits: k, lo, hi }
}
