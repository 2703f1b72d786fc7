//! What an `fss2` query costs, from the protocol's shape alone: the figures `irisc explain`
//! prints and the servers' reports are checked against.

use super::dealer::AuthMaterial;
use crate::fss::condeval::KeyRequest;

/// Rounds between the two servers per query (CS.Eval, Protocol 2).
pub const ROUNDS: u32 = 2;

/// Bytes one server sends per query.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct QueryBytes {
    /// Round 1 (the input digest, `v + r_1`, per template `u + alpha_1` and `w + r_2`) and
    /// round 2 (per template `E + r` and a key-decryption message).
    pub to_server: u64,
    /// The decisions' shares (a bit per template) and, unless it is the last query, the next
    /// query's input mask share.
    pub to_client: u64,
}

pub fn query_bytes(_dim: usize, records: usize, another_query_follows: bool) -> QueryBytes {
    let n = records as u64;
    QueryBytes {
        to_server: 32 + 8 + n * (2 * 8) + n * (8 + KeyRequest::BYTES as u64),
        to_client: records.div_ceil(8) as u64 + if another_query_follows { 16 } else { 0 },
    }
}

/// The client's bytes per query: its masked input, to each server.
pub fn client_bytes(dim: usize) -> u64 {
    2 * 8 * dim as u64
}

/// Dealer material per server per authentication, as stored (with its checksum).
pub fn material_bytes(dim: usize, records: usize) -> u64 {
    AuthMaterial::encoded_bytes(dim, records) as u64 + 32
}

/// Bytes one server sends per query in the malicious variant with `m` instances: round 1 (the
/// input digest, `v + r_1`, per template `u + alpha_1` and `w + r_2`, each in Z_2^112), round 2
/// (per template and instance `E + r_i` and a key-decryption message); to the client its input
/// mask share (the next query's, with this one's output; the first at connect), `m` output
/// shares per template and the 32-byte check digest.
pub fn query_bytes_star(_dim: usize, records: usize, m: usize) -> QueryBytes {
    let (n, m) = (records as u64, m as u64);
    QueryBytes {
        to_server: 32 + 16 + n * 2 * 16 + n * m * (16 + KeyRequest::BYTES as u64),
        to_client: 16 + (n * m).div_ceil(8) + 32,
    }
}
