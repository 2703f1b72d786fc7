//! The cost of each protocol, as the compiler's cost summary and the tests count it.

/// Communication rounds and AND gates of one protocol invocation, per element (AND gates) and
/// per batch (rounds: a batch of any size costs the same number of rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub rounds: u64,
    pub and_gates: u64,
}

impl Stats {
    /// One AND (or [`super::cmux()`]) layer: one round, one gate.
    pub fn and() -> Stats {
        Stats {
            rounds: 1,
            and_gates: 1,
        }
    }

    /// [`super::reshare()`]: one round, no gates.
    pub fn reshare() -> Stats {
        Stats {
            rounds: 1,
            and_gates: 0,
        }
    }

    /// [`super::bit_extract()`] of bits up to index `m` (the highest requested): one full-adder
    /// layer on bits 0..m (m gates) and a ripple-carry chain for bits 1..=m that skips the carry
    /// out of the top bit (m − 1 gates, m − 1 rounds). So 2m − 1 gates in m rounds for m ≥ 1.
    pub fn bit_extract(m: u32) -> Stats {
        if m == 0 {
            Stats::default()
        } else {
            Stats {
                rounds: m as u64,
                and_gates: 2 * m as u64 - 1,
            }
        }
    }

    /// [`super::msb()`] in Z_2^k: k − 1 rounds and 2k − 3 gates (29 gates, 15 rounds for k = 16).
    pub fn msb(k: u32) -> Stats {
        Stats::bit_extract(k.saturating_sub(1))
    }

    /// [`super::additive_msb()`] in Z_2^k: the two input rounds and k − 1 AND rounds, k − 1
    /// gates (17 rounds, 15 gates for k = 16).
    pub fn additive_msb(k: u32) -> Stats {
        Stats {
            rounds: super::additive_msb::rounds(k),
            and_gates: super::additive_msb::and_gates(k),
        }
    }

    /// [`super::bit_inject()`] (Algorithm 17): the 3-party OT, then the receiver forwards its
    /// component; two rounds, no gates, one message per party.
    pub fn bit_inject() -> Stats {
        Stats {
            rounds: 2,
            and_gates: 0,
        }
    }

    /// [`super::mpc_lift()`] (Algorithm 14) from Z_2^k to Z_2^(k+m): BitExtract of the overflow
    /// bits k and k+1 (only k when m = 1), then one BitInject; nothing for m = 0 (a local
    /// re-reading). k + 3 rounds and 2k + 1 gates for m ≥ 2 (19 rounds, 33 gates for k = 16).
    pub fn mpc_lift(k: u32, m: u32) -> Stats {
        if m == 0 {
            return Stats::default();
        }
        let top = if m >= 2 { k + 1 } else { k };
        let ex = Stats::bit_extract(top);
        Stats {
            rounds: ex.rounds + Stats::bit_inject().rounds,
            and_gates: ex.and_gates,
        }
    }

    /// [`super::or_groups()`] on one group of `group` bits: a tree of ceil(log2 group) rounds and
    /// group − 1 gates.
    pub fn or_group(group: usize) -> Stats {
        let rounds = if group <= 1 {
            0
        } else {
            (usize::BITS - (group - 1).leading_zeros()) as u64
        };
        Stats {
            rounds,
            and_gates: group.saturating_sub(1) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_costs() {
        assert_eq!(
            Stats::msb(16),
            Stats {
                rounds: 15,
                and_gates: 29
            }
        );
        assert_eq!(
            Stats::msb(2),
            Stats {
                rounds: 1,
                and_gates: 1
            }
        );
        assert_eq!(Stats::or_group(1).rounds, 0);
        assert_eq!(Stats::or_group(2).rounds, 1);
        assert_eq!(Stats::or_group(3).rounds, 2);
        assert_eq!(Stats::or_group(64).rounds, 6);
        assert_eq!(Stats::or_group(65).rounds, 7);
    }
}
