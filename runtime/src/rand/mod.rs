//! Correlated randomness: pairwise PRF seeds and the pseudo-random secret sharing derived from
//! them ([`prss`]), so that re-randomisation costs no communication.

pub mod aes_ctr;
pub mod aes_tables;
pub mod prss;

pub use prss::Prss;
