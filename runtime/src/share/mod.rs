//! Secret shares: replicated arithmetic shares over Z_2^k ([`rep3`]), replicated binary shares
//! bit-sliced in u64 words ([`binary`]) and Shamir shares over Galois rings ([`galois`]).
//! Everything here is local; the interactive steps are in [`crate::protocol`].

pub mod binary;
pub mod galois;
pub mod rep3;

pub use binary::BitShares;
pub use rep3::{AddVec, Rep3Vec};
