//! The cost model of one reveal under semi-honest rep3 (ABY3, Section 4.3.1 of the Large-Scale
//! MPC paper), as functions of the gallery size `n` (records per query).
//!
//! Per comparison: the dot product is local, then one reshare (one ring element per party,
//! stored in a 2/4/8-byte word), then MSB extraction by a ripple-carry adder (Appendix E:
//! `k - 1` rounds, `2k - 3` AND gates of one bit each), then an OR tree (`group - 1` AND gates in
//! `ceil(log2 group)` rounds), then one opening round.

use super::ring::RingChoice;
use crate::sema::{Reveal, RevealShape};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RevealCost {
    /// k of Z_2^k.
    pub ring_bits: u32,
    /// r: rotations of the query per record.
    pub rotations: u64,
    pub shape: RevealShape,
}

fn ceil_log2(x: u64) -> u64 {
    if x <= 1 {
        0
    } else {
        u64::from(64 - (x - 1).leading_zeros())
    }
}

impl RevealCost {
    pub fn new(reveal: &Reveal, ring: &RingChoice) -> Self {
        let d = &reveal.decision;
        RevealCost {
            ring_bits: ring.ring_bits,
            rotations: (i64::from(d.rot_hi) - i64::from(d.rot_lo) + 1).max(1) as u64,
            shape: reveal.shape,
        }
    }

    /// Comparisons per query: `n * r`.
    pub fn comparisons(&self, n: u64) -> u64 {
        n.saturating_mul(self.rotations)
    }

    /// How many comparison bits one OR tree combines: all `n * r` for one bit per query,
    /// the `r` rotations of one record for ids.
    pub fn or_group(&self, n: u64) -> u64 {
        match self.shape {
            RevealShape::AnyBit => self.comparisons(n),
            RevealShape::MatchingIds => self.rotations,
        }
    }

    /// Communication rounds per query batch: reshare 1 + MSB (k - 1) + OR ceil(log2 group) + open 1.
    pub fn rounds(&self, n: u64) -> u64 {
        1 + u64::from(self.ring_bits - 1) + ceil_log2(self.or_group(n)) + 1
    }

    /// AND gates of one MSB extraction: `2k - 3`.
    pub fn msb_and_gates(&self) -> u64 {
        (2 * u64::from(self.ring_bits)).saturating_sub(3)
    }

    /// AND gates of the OR trees per query: `n*r - 1` (one tree) or `n*(r - 1)` (one per record).
    pub fn or_and_gates(&self, n: u64) -> u64 {
        match self.shape {
            RevealShape::AnyBit => self.comparisons(n).saturating_sub(1),
            RevealShape::MatchingIds => n.saturating_mul(self.rotations - 1),
        }
    }

    /// Beaver triples a triple-based backend would consume per query: one per AND gate on the
    /// longest execution path (paper 004). Without secret conditionals every gate is on it.
    pub fn triples(&self, n: u64) -> u64 {
        self.and_gates(n)
    }

    /// All AND gates per query.
    pub fn and_gates(&self, n: u64) -> u64 {
        self.comparisons(n)
            .saturating_mul(self.msb_and_gates())
            .saturating_add(self.or_and_gates(n))
    }

    /// Bytes of the storage word of one Z_2^k share: 2, 4 or 8.
    pub fn word_bytes(&self) -> u64 {
        match self.ring_bits {
            0..=16 => 2,
            17..=32 => 4,
            _ => 8,
        }
    }

    /// Bits opened to the output party per query: 1, or one per record.
    pub fn opened_bits(&self, n: u64) -> u64 {
        match self.shape {
            RevealShape::AnyBit => 1,
            RevealShape::MatchingIds => n,
        }
    }

    /// Bits one party sends per query: reshare words, one bit per AND gate, opened bits.
    pub fn bits_sent_per_party(&self, n: u64) -> u64 {
        self.comparisons(n)
            .saturating_mul(8 * self.word_bytes())
            .saturating_add(self.and_gates(n))
            .saturating_add(self.opened_bits(n))
    }

    /// Bytes one party sends per comparison, averaged over the `n * r` comparisons.
    pub fn bytes_per_comparison(&self, n: u64) -> f64 {
        let c = self.comparisons(n).max(1);
        self.bits_sent_per_party(n) as f64 / 8.0 / c as f64
    }

    /// The formulas in words, for `explain` (k and r substituted).
    pub fn formulas(&self) -> serde_json::Value {
        let k = self.ring_bits;
        let r = self.rotations;
        let (group, or_gates, opened) = match self.shape {
            RevealShape::AnyBit => (format!("{r}*n"), format!("{r}*n - 1"), "1".to_string()),
            RevealShape::MatchingIds => (r.to_string(), format!("{}*n", r - 1), "n".to_string()),
        };
        serde_json::json!({
            "comparisons": format!("{r}*n"),
            "rounds": format!("1 (reshare) + {} (MSB) + ceil(log2({group})) (OR) + 1 (open)", k - 1),
            "and_gates_per_comparison": format!("{} (MSB, 2k-3)", self.msb_and_gates()),
            "and_gates_or": or_gates,
            "bits_sent_per_party": format!(
                "{r}*n*({} + {}) + {or_gates_expr} + {opened}",
                8 * self.word_bytes(),
                self.msb_and_gates(),
                or_gates_expr = match self.shape {
                    RevealShape::AnyBit => format!("({r}*n - 1)"),
                    RevealShape::MatchingIds => format!("{}*n", r - 1),
                }
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(k: u32, r: u64, shape: RevealShape) -> RevealCost {
        RevealCost {
            ring_bits: k,
            rotations: r,
            shape,
        }
    }

    #[test]
    fn any_bit_one_million_records() {
        let c = cost(16, 31, RevealShape::AnyBit);
        let n = 1_000_000;
        // 31e6 leaves need 25 OR levels.
        assert_eq!(c.rounds(n), 1 + 15 + 25 + 1);
        assert_eq!(c.msb_and_gates(), 29);
        assert_eq!(c.and_gates(n), 31_000_000 * 29 + 31_000_000 - 1);
        assert_eq!(c.word_bytes(), 2);
        // Per comparison: 16 bits reshare + 29 + (almost) 1 OR gate.
        let b = c.bytes_per_comparison(n);
        assert!((b - 46.0 / 8.0).abs() < 1e-6, "{b}");
    }

    #[test]
    fn ids_open_one_bit_per_record() {
        let c = cost(16, 31, RevealShape::MatchingIds);
        assert_eq!(c.rounds(1000), 1 + 15 + 5 + 1);
        assert_eq!(c.or_and_gates(1000), 30_000);
        assert_eq!(c.opened_bits(1000), 1000);
        assert_eq!(
            c.bits_sent_per_party(1000),
            31_000 * (16 + 29) + 30_000 + 1000
        );
        assert_eq!(cost(17, 1, RevealShape::MatchingIds).word_bytes(), 4);
        assert_eq!(cost(40, 1, RevealShape::AnyBit).word_bytes(), 8);
        assert_eq!(
            cost(10, 1, RevealShape::AnyBit).rounds(0),
            11,
            "no OR levels without records"
        );
    }
}
