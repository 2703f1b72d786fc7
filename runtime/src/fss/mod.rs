//! Function secret sharing for the two-server `fss2` family (paper 002, "privacy-preserving
//! cosine similarity with malicious security"): its comparisons are interval-containment gates
//! (the paper's Definition 1, built as in its reference [10], Boyle et al., "Function Secret
//! Sharing for Mixed-Mode and Fixed-Point Secure Computation", Sect. 4.1) over a distributed
//! comparison function.
//!
//! - [`dcf`]: the distributed comparison function (DCF) of [10], Fig. 1 (its tree construction
//!   with a fixed-key AES Matyas-Meyer-Oseas PRG, 127-bit seeds), keys over Z_2^64 inputs with
//!   outputs in Z_2^64, and their byte encoding for the dealer's files;
//! - [`ic`]: the interval-containment gate: a dealer's key pair for `[p, q]` with input mask
//!   `r_in` and output mask `r_out`; each server evaluates its key on the masked input alone,
//!   and the two outputs add up to `1{p <= x <= q} + r_out`.
//!
//! Why not the `fss-rs` crate: it was checked (0.6: [10]'s DCF, fixed-key AES PRG, 127-bit
//! seeds; its SIMD path needs nightly Rust unless `stable`), but its keys reconstruct only over
//! the XOR group its tests cover, not over Z_2^64, which the IC gates need; the DCF here is
//! written from [10], Fig. 1, and tested against the definition.
//!
//! - [`condeval`]: CondEval (paper 002, Section 4): Table 3 (semi-honest) and Table 4's
//!   normal and trap instances with their tags (the malicious variant's building block).

pub mod condeval;
pub mod dcf;
pub mod ic;

#[cfg(test)]
mod tests;
