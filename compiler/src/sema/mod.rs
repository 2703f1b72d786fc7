//! Semantic analysis: resolves names, checks types, secrecy, owners and binders, and produces the
//! typed [`program::Program`] that every later stage consumes.

mod binders;
mod check;
pub mod consts;
mod expr;
pub mod inputs;
pub mod names;
pub mod program;
mod resolver;

pub use check::check_program;
pub use inputs::MAX_CODE_BITS;
pub use program::*;

use crate::syntax::{self, render, Diagnostic};

/// Parses and checks `source` into the v2 program; on failure returns the rendered diagnostics
/// (no color). `path_display` names the file in messages and gives the program its name (the
/// file stem).
pub fn frontend(path_display: &str, source: &str) -> Result<program::Program, String> {
    check_source(path_display, source).map_err(|ds| render(path_display, source, &ds, false))
}

/// Parses and checks `source`: the diagnostics unrendered.
pub fn check_source(path_display: &str, source: &str) -> Result<program::Program, Vec<Diagnostic>> {
    let module = syntax::parse(source).map_err(|d| vec![d])?;
    check_program(path_display, source, &module)
}

#[cfg(test)]
mod tests;
