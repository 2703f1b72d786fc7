//! irisc: a compiler for privacy-preserving biometric matching.
//!
//! Stages, in the order data flows (each readable alone):
//! - [`syntax`]: the `.irs` parser (nom), spans and diagnostics;
//! - [`sema`]: names, types, secrecy and owners; produces a [`sema::Program`];
//! - [`analysis`]: value ranges, ring selection (Lemma 1), costs and the leakage ledger;
//! - [`mlir`]: the MLIR context with the `irs` and `mpc` IRDL dialects loaded;
//! - [`lower`]: `sema::Program` -> `irs` dialect module;
//! - [`passes`]: one module per pass (`ring-select`, `irs-to-mpc`, ...);
//! - [`codegen`]: `mpc` module -> LLVM IR (party schedule and kernels) -> object -> executable;
//! - [`driver`]: the `irisc` command line;

pub mod analysis;
pub mod codegen;
pub mod driver;
pub mod lower;
pub mod mlir;
pub mod passes;
pub mod sema;
pub mod syntax;
#[cfg(test)]
pub(crate) mod testing;
