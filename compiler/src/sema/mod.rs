//! Semantic analysis: resolves names, checks types, secrecy and owners, and produces the typed
//! [`Program`] that every later stage consumes.

mod program;

pub use program::*;
