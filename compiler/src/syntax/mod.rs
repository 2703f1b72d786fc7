//! The `.irs` front end: parser (nom), spans and diagnostics.

/// A byte range in the source file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}
