//! Secret shares: replicated arithmetic shares over Z_2^k ([`rep3`]), replicated binary shares
//! bit-sliced in u64 words ([`binary`]), Shamir shares over Galois rings ([`galois`]) and
//! replicated and Shamir shares over F_p ([`fp`]). Everything here is local except `fp`'s
//! resharing; the other interactive steps are in [`crate::protocol`].

pub mod binary;
pub mod codes;
pub mod fp;
pub mod galois;
pub mod rep3;
pub mod ring_vec;

pub use binary::BitShares;
pub use codes::Codes;
pub use rep3::{AddVec, Rep3Vec};
pub use ring_vec::{ring_mask, RingVec, RingVecExt};
