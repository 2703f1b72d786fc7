//! The `.irs` front end: lexer and parser (nom), spans and diagnostics.
//!
//! A program states Algorithm 1 of the Large-Scale MPC paper (the iris code membership check)
//! declaratively: which inputs exist, who supplies them, which pairs are compared with which
//! fractional Hamming distance threshold, and what is revealed to whom.

pub mod ast;
pub mod diagnostic;
pub mod hints;
pub mod lexer;
pub mod parser;
pub mod print;
pub mod suggest;

pub use diagnostic::{render, Diagnostic, Label};
pub use parser::parse;
pub use print::print_tree;

/// A byte range in the source file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// 1-based line and column (in characters) of the span's start in `source`.
    pub fn line_column(self, source: &str) -> (usize, usize) {
        let start = diagnostic::clamp_to_char_boundary(source, self.start);
        let before = &source[..start];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}
