//! What the compiler embeds in every executable about its program, as JSON.
//!
//! The runtime checks it against the share files it is given (ring, code length, masks, sharing)
//! and refuses to run on a mismatch, so a share file of another program or ring is caught before
//! any protocol message is sent.

use serde::{Deserialize, Serialize};

/// Bumped whenever the C ABI between generated code and the runtime changes.
pub const ABI_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Must equal [`ABI_VERSION`].
    pub abi: u32,
    /// The program's name (file stem).
    pub program: String,
    /// Hex BLAKE3 of the program source; printed in errors and accounting.
    pub fingerprint: String,
    /// Bits per iris code.
    pub code_bits: u32,
    /// k of Z_2^k that the gallery and query shares must use.
    pub ring_bits: u32,
    /// "public" or "secret".
    pub mask: String,
    /// "rep3".
    pub sharing: String,
    /// The party names, in `--party` order.
    pub parties: [String; 3],
    /// The `irisc explain --json` document of the program, for `--explain` on the executable.
    pub explain: serde_json::Value,
}

impl Manifest {
    pub fn from_json(bytes: &[u8]) -> Result<Manifest, String> {
        let m: Manifest =
            serde_json::from_slice(bytes).map_err(|e| format!("corrupt program manifest: {e}"))?;
        if m.abi != ABI_VERSION {
            return Err(format!(
                "this executable was generated for runtime ABI {} but is linked with runtime ABI {}; rebuild it with this irisc",
                m.abi, ABI_VERSION
            ));
        }
        Ok(m)
    }
}
