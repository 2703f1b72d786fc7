//! The cost model the planner minimises, per comparison (one `(query rotation, record)` pair).
//!
//! Three measures, each taken from what the runtime does and counts:
//! - **rounds**: communication rounds of the ops one comparison is lowered to, op by op
//!   (a batch of any size pays them once): reshare 1, MSB extraction `k - 1`
//!   ([`Stats::msb`]), MPCLift `k + 3` ([`Stats::mpc_lift`]), LiftP `17 + 2`, BitExtractP
//!   ([`bit_extract_p_cost`]), MSB mod `p*2^m` `2k - m + 1` with `k = 16 + m` (Section 5.2).
//! - **bytes**: bytes the busiest party (party 0, which sends twice the BitInject elements)
//!   sends per comparison: one reshared element per dot product in its storage word (2/4/8
//!   bytes), one bit per AND gate (bit-sliced), BitInject elements ([`bit_inject_bytes`]),
//!   MPCLift ([`mpc_lift_bytes`]), BitExtractP's input bits, `3k - m` bits for MSB mod `p*2^m`.
//! - **work**: local ring-element multiply-adds per party, scaled by the storage width
//!   ([`width_factor`]: 1 for 16-bit, 2 for 32-bit, 4 for 64-bit words; Table 1 of the
//!   Large-Scale MPC paper: Z16 49 vs Z32 24 M dot products/s). A replicated dot product of `l`
//!   elements is `2l` (the second product of the replicated sharing), a Shamir one `l` (one
//!   16-bit dot product, the Lagrange coefficient folded into the query).
//!
//! One score, in estimated nanoseconds per comparison on one core:
//! `score = ROUND_WEIGHT * rounds + BYTE_WEIGHT * bytes + WORK_WEIGHT * work` with
//! - [`ROUND_WEIGHT`] = 1.0: a 100 µs round trip amortised over a batch of 100 000 comparisons;
//! - [`BYTE_WEIGHT`] = 0.8: 10 Gbit/s per link;
//! - [`WORK_WEIGHT`] = 0.05: Table 1, Graviton3, Z16: 49 M replicated dot products of length
//!   12800 (2 × 12800 multiply-adds) per second on 64 cores ≈ 0.051 ns per multiply-add.

use irisc_runtime::protocol::bit_extract_p::bit_extract_p_cost;
use irisc_runtime::protocol::bit_inject::bit_inject_bytes;
use irisc_runtime::protocol::lift::mpc_lift_bytes;
use irisc_runtime::protocol::Stats;

/// Nanoseconds per communication round, per comparison (100 µs / 100 000).
pub const ROUND_WEIGHT: f64 = 1.0;
/// Nanoseconds per byte sent (10 Gbit/s).
pub const BYTE_WEIGHT: f64 = 0.8;
/// Nanoseconds per 16-bit multiply-add.
pub const WORK_WEIGHT: f64 = 0.05;

/// Elements used to evaluate the runtime's per-batch byte counts exactly per element (a
/// multiple of 64, so bit-sliced words are full).
const BATCH: usize = 64;
/// The party that sends the most (BitInject's sender).
const BUSIEST: usize = 0;

/// What one comparison costs.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, Default)]
pub struct TestCost {
    pub rounds: u64,
    /// Bytes the busiest party sends per comparison.
    pub bytes_per_party: f64,
    /// AND gates per comparison (MSB extraction, lifts' bit extractions, BitExtractP).
    pub and_gates: u64,
    /// Width-scaled local multiply-adds per comparison.
    pub work: u64,
    /// `ROUND_WEIGHT * rounds + BYTE_WEIGHT * bytes_per_party + WORK_WEIGHT * work`.
    pub score: f64,
}

/// The weighted score of the three measures.
pub fn score(rounds: u64, bytes: f64, work: u64) -> f64 {
    ROUND_WEIGHT * rounds as f64 + BYTE_WEIGHT * bytes + WORK_WEIGHT * work as f64
}

/// Storage bytes of a share of Z_2^k (the runtime's `storage_for`): 2, 4 or 8.
pub fn word_bytes(k: u32) -> u64 {
    match k {
        0..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}

/// Local work of one multiply-add in Z_2^k relative to 16 bits: 1, 2 or 4.
pub fn width_factor(k: u32) -> u64 {
    word_bytes(k) / 2
}

/// A cost under construction: ops append their rounds, bytes, gates and work.
#[derive(Debug, Clone, Copy, Default)]
pub struct Acc {
    rounds: u64,
    bytes: f64,
    and_gates: u64,
    work: u64,
}

impl Acc {
    /// A replicated dot product of `l` elements in Z_2^k: `2l` multiply-adds.
    pub fn rep3_dot(mut self, l: u32, k: u32) -> Self {
        self.work += 2 * u64::from(l) * width_factor(k);
        self
    }

    /// A Shamir dot product (GR(2^16, d) or F_p): one 16-bit dot product of `l` elements.
    pub fn shamir_dot(mut self, l: u32) -> Self {
        self.work += u64::from(l);
        self
    }

    /// A local linear combination `a*x - b*y` in Z_2^k: two multiply-adds.
    pub fn lin(mut self, k: u32) -> Self {
        self.work += 2 * width_factor(k);
        self
    }

    /// A reshare of one element stored for Z_2^k (F_p: k = 16): one round, one word.
    pub fn reshare(mut self, k: u32) -> Self {
        self.rounds += Stats::reshare().rounds;
        self.bytes += word_bytes(k) as f64;
        self
    }

    /// MSB extraction in Z_2^k (Algorithm 10): `k - 1` rounds, `2k - 3` gates of one bit.
    pub fn msb(mut self, k: u32) -> Self {
        let s = Stats::msb(k);
        self.rounds += s.rounds;
        self.and_gates += s.and_gates;
        self.bytes += s.and_gates as f64 / 8.0;
        self
    }

    /// AdditiveMSB in Z_2^k from additive shares: `k + 1` rounds, `k - 1` gates of one bit;
    /// before them the busiest party sends one k-bit word (party 0) or k input bits (parties 1
    /// and 2): the larger of the two.
    pub fn additive_msb(mut self, k: u32) -> Self {
        let s = Stats::additive_msb(k);
        self.rounds += s.rounds;
        self.and_gates += s.and_gates;
        let input = (word_bytes(k) as f64).max(f64::from(k) / 8.0);
        self.bytes += input + s.and_gates as f64 / 8.0;
        self
    }

    /// Algorithm 12 (BitExtractP) of the MSB mod p: input bits plus gates.
    pub fn msb_p(mut self) -> Self {
        let c = bit_extract_p_cost(1);
        self.rounds += c.rounds;
        self.and_gates += c.and_gates;
        self.bytes += c.bits() as f64 / 8.0;
        self
    }

    /// Algorithm 14 (MPCLift) from Z_2^k by m bits: [`Stats::mpc_lift`], [`mpc_lift_bytes`].
    pub fn mpc_lift(mut self, k: u32, m: u32) -> Self {
        let s = Stats::mpc_lift(k, m);
        self.rounds += s.rounds;
        self.and_gates += s.and_gates;
        self.bytes += mpc_lift_bytes(BUSIEST, BATCH, k, m) as f64 / BATCH as f64;
        self
    }

    /// Algorithm 15 (LiftP) mod p to mod p*2^m: a BitExtract of bit 17 in Z_2^18 on two values
    /// (2 × 33 gates, 17 rounds), then BitInject of the two bits into Z_2^m (2 rounds).
    pub fn lift_p(mut self, m: u32) -> Self {
        let ex = Stats::bit_extract(17);
        self.rounds += ex.rounds + Stats::bit_inject().rounds;
        self.and_gates += 2 * ex.and_gates;
        let inject = match word_bytes(m) {
            2 => bit_inject_bytes::<u16>(BUSIEST, 2 * BATCH),
            4 => bit_inject_bytes::<u32>(BUSIEST, 2 * BATCH),
            _ => bit_inject_bytes::<u64>(BUSIEST, 2 * BATCH),
        };
        self.bytes += (2 * ex.and_gates) as f64 / 8.0 + inject as f64 / BATCH as f64;
        self
    }

    /// MSB mod `t = p*2^m` (Section 5.2: `3k - m` bits in `2k - m + 1` rounds, `k = 16 + m`,
    /// of which `k` are input bits).
    pub fn msb_mod(mut self, m: u32) -> Self {
        let k = 16 + u64::from(m);
        let m = u64::from(m);
        self.rounds += 2 * k - m + 1;
        self.and_gates += 2 * k - m;
        self.bytes += (3 * k - m) as f64 / 8.0;
        self
    }

    pub fn finish(self) -> TestCost {
        TestCost {
            rounds: self.rounds,
            bytes_per_party: self.bytes,
            and_gates: self.and_gates,
            work: self.work,
            score: score(self.rounds, self.bytes, self.work),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primitives_match_the_runtime() {
        let c = Acc::default().msb(16).finish();
        assert_eq!((c.rounds, c.and_gates), (15, 29));
        assert!((c.bytes_per_party - 29.0 / 8.0).abs() < 1e-9);
        // AdditiveMSB in Z_2^16: 17 rounds, 15 gates, a 16-bit word or 16 input bits each.
        let c = Acc::default().additive_msb(16).finish();
        assert_eq!((c.rounds, c.and_gates), (17, 15));
        assert!((c.bytes_per_party - (2.0 + 15.0 / 8.0)).abs() < 1e-9);
        // Z_2^17 is stored in 32-bit words: party 0 sends 4 bytes.
        let c = Acc::default().additive_msb(17).finish();
        assert!((c.bytes_per_party - (4.0 + 16.0 / 8.0)).abs() < 1e-9);
        // MPCLift 16 -> 32: 19 rounds, 33 gates, party 0 injects 2 bits as 2 u16 each.
        let c = Acc::default().mpc_lift(16, 16).finish();
        assert_eq!((c.rounds, c.and_gates), (19, 33));
        assert!(
            (c.bytes_per_party - (33.0 / 8.0 + 8.0)).abs() < 1e-9,
            "{c:?}"
        );
        let c = Acc::default().msb_p().finish();
        assert_eq!(c.and_gates + 16, 48);
        assert_eq!(Acc::default().rep3_dot(12800, 32).finish().work, 51200);
        assert_eq!(Acc::default().shamir_dot(12800).finish().work, 12800);
        assert_eq!(
            (width_factor(16), width_factor(17), width_factor(64)),
            (1, 2, 4)
        );
    }
}
