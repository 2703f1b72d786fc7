//! What the servers and the dealer of one `fss2` cosine program agree on: the dimension, the
//! threshold and the two gates that decide `cosine(x, y) >= tau` (or `>`) without square roots.
//!
//! With `p = <x,y>` and `E = den^2 p^2 - num^2 <x,x><y,y>` (`tau = ±num/den`), the decision is
//! (the compiler's cosine analysis, ARCHITECTURE.md §7):
//!
//! | tau     | `>=`                   | `>`                    |
//! |---------|------------------------|------------------------|
//! | `>= 0`  | `p >= 0 and E >= 0`    | `p > 0 and E > 0`      |
//! | `< 0`   | `p >= 0 or E <= 0`     | `p >= 0 or E < 0`      |
//!
//! (For `tau < 0` a non-negative `p` alone decides, strict or not: `cosine >= 0 > tau`; this is
//! the plaintext definition's reading, which differs from `p > 0` only for a zero vector.)
//!
//! Each test is an interval-containment gate on `p` or `E` or their negation in Z_2^64 (sound
//! when the range analysis proves no value wraps, which the compiler checks before it picks
//! `fss2`): `v >= 0` is `v in [0, 2^63)`, `v > 0` is `-v in [2^63, 2^64)`, `v <= 0` is
//! `-v in [0, 2^63)`, `v < 0` is `v in [2^63, 2^64)`. The sign test is the first gate (`c_1`
//! of Protocol 2, an IC gate alone); the magnitude test is CondEval's `f`, combined with `c_1`
//! by `and` or `or`.

use crate::fss::condeval::{Conj, Gate};
use crate::fss::ic::{NEGATIVE, NON_NEGATIVE};

/// The other of the two intervals that partition Z_2^64.
fn complement(i: (u64, u64)) -> (u64, u64) {
    if i == NON_NEGATIVE {
        NEGATIVE
    } else {
        NON_NEGATIVE
    }
}

/// A cosine threshold test as the servers run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CosinePlan {
    pub dim: usize,
    /// Components are `round(v * 2^scale_bits)`.
    pub scale_bits: u32,
    pub tau_negative: bool,
    pub tau_num: u64,
    pub tau_den: u64,
    pub strict: bool,
}

/// One sign test: the interval and whether it is applied to the negated value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignTest {
    pub interval: (u64, u64),
    pub negate: bool,
}

impl CosinePlan {
    /// `c_1`: the test on `p`.
    pub fn sign_test(&self) -> SignTest {
        if self.strict && !self.tau_negative {
            SignTest {
                interval: NEGATIVE,
                negate: true,
            }
        } else {
            SignTest {
                interval: NON_NEGATIVE,
                negate: false,
            }
        }
    }

    /// CondEval's gate: the test on `E` and how it joins `c_1`.
    pub fn magnitude_gate(&self) -> Gate {
        let (interval, negate) = match (self.tau_negative, self.strict) {
            (false, false) => (NON_NEGATIVE, false),
            (false, true) => (NEGATIVE, true),
            (true, false) => (NON_NEGATIVE, true),
            (true, true) => (NEGATIVE, false),
        };
        Gate {
            interval,
            negate,
            conj: if self.tau_negative {
                Conj::Or
            } else {
                Conj::And
            },
        }
    }

    /// The gates of the malicious variant, whose CondEval* composes by `and` only (its trap
    /// instances cancel their tags when both servers decrypt the same entry, i.e. when the
    /// sign bit is 0): for `tau < 0`, `c_1 or f = not(not c_1 and not f)`, so the dealer keys
    /// both gates on the complementary interval (the two intervals partition Z_2^64) and the
    /// client negates the verified decision. Returns the sign test, the magnitude gate (`and`)
    /// and whether the decision is negated.
    pub fn star_gates(&self) -> (SignTest, Gate, bool) {
        let (sign, gate) = (self.sign_test(), self.magnitude_gate());
        match gate.conj {
            Conj::And => (sign, gate, false),
            Conj::Or => (
                SignTest {
                    interval: complement(sign.interval),
                    negate: sign.negate,
                },
                Gate {
                    interval: complement(gate.interval),
                    negate: gate.negate,
                    conj: Conj::And,
                },
                true,
            ),
        }
    }

    /// `den^2` and `num^2` in Z_2^64.
    pub fn squares(&self) -> (u64, u64) {
        (
            self.tau_den.wrapping_mul(self.tau_den),
            self.tau_num.wrapping_mul(self.tau_num),
        )
    }

    /// The fingerprint material files and servers are bound to.
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new_derive_key("irisc 2026 fss2 cosine plan");
        h.update(&(self.dim as u64).to_le_bytes());
        h.update(&self.scale_bits.to_le_bytes());
        h.update(&[u8::from(self.tau_negative), u8::from(self.strict)]);
        h.update(&self.tau_num.to_le_bytes());
        h.update(&self.tau_den.to_le_bytes());
        *h.finalize().as_bytes()
    }
}
