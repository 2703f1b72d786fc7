//! Semantic analysis: resolves names, checks types, secrecy and owners, and produces the typed
//! [`Program`] that every later stage consumes.

mod check;
pub mod consts;
mod decision;
pub mod names;
pub mod legacy;
pub mod program;

pub use check::{check, MAX_CODE_BITS};
pub use legacy::*;

use crate::syntax::{self, render};

/// Parses and checks `source`; on failure returns the rendered diagnostics (no color).
/// `path_display` names the file in messages and gives the program its name (the file stem).
pub fn frontend(path_display: &str, source: &str) -> Result<Program, String> {
    let module = syntax::parse(source).map_err(|d| render(path_display, source, &[d], false))?;
    check(path_display, source, &module).map_err(|ds| render(path_display, source, &ds, false))
}

#[cfg(test)]
mod tests;
