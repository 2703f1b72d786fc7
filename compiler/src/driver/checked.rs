//! A `.irs` file through the front end: its path, text and typed program, and how errors of
//! later stages are rendered at its source (file:line:column, caret, hint).

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use crate::lower::LowerError;
use crate::passes::PassError;
use crate::sema::program::Program;
use crate::syntax::{render, Diagnostic, Span};

/// A source file that passed the front end.
pub struct Checked {
    pub path: PathBuf,
    pub source: String,
    pub program: Program,
}

impl Checked {
    /// A pass's error: a choice that cannot be made is rendered at its comparison.
    pub fn pass_error(&self, e: PassError) -> anyhow::Error {
        match e {
            PassError::Choice { error, .. } => {
                let span = error
                    .at
                    .map_or(Span::default(), |at| at.to_span(&self.source));
                self.render_error(Diagnostic::error(error.message, span).with_hint(error.hint))
            }
            e => anyhow!("{}: {e}", self.path.display()),
        }
    }

    /// A lowering error: an unsupported construct is rendered at its source.
    pub fn lower_error(&self, e: LowerError) -> anyhow::Error {
        match e {
            LowerError::Unsupported {
                message,
                hint,
                span,
            } => self.render_error(Diagnostic::error(message, span).with_hint(hint)),
            e => anyhow!("{}: {e}", self.path.display()),
        }
    }

    /// A diagnostic at `span`, rendered with the file's source line and a caret.
    pub fn render_error(&self, d: Diagnostic) -> anyhow::Error {
        anyhow!(render(
            &self.path.display().to_string(),
            &self.source,
            &[d],
            false
        ))
    }
}

pub fn read_and_check(path: &Path) -> Result<Checked> {
    let source =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let program = crate::sema::frontend(&path.display().to_string(), &source)
        .map_err(|rendered| anyhow!(rendered))?;
    Ok(Checked {
        path: path.to_path_buf(),
        source,
        program,
    })
}
