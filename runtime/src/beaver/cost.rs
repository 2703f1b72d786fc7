//! What a `beaver` run sends, predicted exactly from the circuit's shape: the numbers
//! `irisc circuit explain` prints and the runs' accounting must match (a test holds them to it).
//!
//! Every figure is bytes sent by ONE party (all parties send the same amounts: the protocols
//! are symmetric in their pairs).

use crate::ot::KAPPA;

use super::mask_gen::MaskGenMethod;
use super::material::words_for;
use super::online::packed_len;
use super::schedule::Schedule;

/// A Ristretto point on the wire.
const POINT: u64 = 32;
/// Bytes of a seed.
const SEED: u64 = 16;

/// IKNP rounds a batch up to whole 128-row blocks; the receiver sends one 128-bit row per OT.
fn iknp_receiver_bytes(n: u64) -> u64 {
    n.div_ceil(KAPPA as u64) * KAPPA as u64 * 16
}

/// A batch of `n` chosen OTs of `len`-byte strings between one ordered pair: the receiver's
/// matrix and the sender's two corrected strings per OT. Returns (receiver, sender) bytes.
fn chosen_ot(n: u64, len: u64) -> (u64, u64) {
    if n == 0 {
        return (0, 0);
    }
    (iknp_receiver_bytes(n), 2 * len * n)
}

/// The preprocessing of `executions` executions at `parties` parties, by parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PreprocessingBytes {
    /// Agreeing on the batch id.
    pub batch: u64,
    /// Base OTs (Chou-Orlandi) for both directions with every other party.
    pub base_ots: u64,
    /// TripleGen (IKNP matrices and the cross terms' corrections).
    pub triple_gen: u64,
    /// MaskGen.
    pub mask_gen: u64,
}

impl PreprocessingBytes {
    pub fn total(&self) -> u64 {
        self.batch + self.base_ots + self.triple_gen + self.mask_gen
    }
}

/// Bytes one party sends in the preprocessing of `schedule` on `lanes` lanes.
pub fn preprocessing_bytes(
    schedule: &Schedule,
    lanes: usize,
    parties: usize,
    method: MaskGenMethod,
    executions: u32,
) -> PreprocessingBytes {
    let peers = parties as u64 - 1;
    let l = lanes as u64;
    let n = schedule.triples * l;
    let triple_gen = if n == 0 {
        0
    } else {
        peers * (iknp_receiver_bytes(n) + n.div_ceil(8))
    };
    let mask_gen: u64 = schedule
        .conds
        .iter()
        .map(|c| {
            let rows = c.mask_rows();
            let pair = |(r, s): (u64, u64)| r + s;
            peers
                * match method {
                    MaskGenMethod::Seed2p => pair(chosen_ot(l, SEED)),
                    MaskGenMethod::Seed3p => pair(chosen_ot(l, 6 * SEED)) + 4 * SEED * l,
                    // Pi-Half-VS-Long: the sender's n-bit ciphertexts and one OT of seeds.
                    MaskGenMethod::Vs => pair(chosen_ot(l, SEED)) + l * rows.div_ceil(8),
                }
        })
        .sum();
    PreprocessingBytes {
        batch: peers * 16,
        base_ots: peers * (POINT + KAPPA as u64 * POINT),
        triple_gen: triple_gen * u64::from(executions),
        mask_gen: mask_gen * u64::from(executions),
    }
}

/// Bytes one party sends in the evaluation itself: each round opens two bits per AND and lane
/// and one per conditional entered and lane, packed, to every other party.
pub fn evaluation_bytes(schedule: &Schedule, lanes: usize, parties: usize) -> u64 {
    let per_round: u64 = schedule
        .rounds
        .iter()
        .filter(|r| !r.ands.is_empty() || !r.conds.is_empty())
        .map(|r| packed_len(2 * r.ands.len() + r.conds.len(), lanes) as u64)
        .sum();
    per_round * (parties as u64 - 1)
}

/// Bytes of the online phase at `party` around the evaluation: the execution check, the input
/// sharing (the owner sends every other party a share) and the opening of the outputs.
pub fn online_extra_bytes(
    schedule: &Schedule,
    outputs: usize,
    lanes: usize,
    parties: usize,
    party: usize,
    owner: usize,
) -> u64 {
    let w = words_for(lanes) as u64 * 8;
    let peers = parties as u64 - 1;
    let inputs = if party == owner {
        peers * schedule.inputs as u64 * w
    } else {
        0
    };
    peers * 20 + inputs + peers * packed_len(outputs, lanes) as u64
}
