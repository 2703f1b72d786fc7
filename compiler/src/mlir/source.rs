//! Source positions on ops: `lower` gives every op the range of the source it comes from
//! (`loc("p.irs":6:52 to :75)`), so a pass's diagnostic points at the program text.

use melior::ir::Location;

/// A range of source text, 1-based lines and columns (columns count bytes).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceRange {
    /// The source file's name as the location gives it.
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub end_line: u32,
    pub end_col: u32,
}

impl SourceRange {
    /// The range of `span` in `source`.
    pub fn of_span(source: &str, span: crate::syntax::Span) -> SourceRange {
        let (line, col) = line_col(source, span.start);
        let (end_line, end_col) = line_col(source, span.end.max(span.start));
        SourceRange {
            file: String::new(),
            line,
            col,
            end_line,
            end_col,
        }
    }

    /// The byte span of this range in `source` (clamped to it).
    pub fn to_span(&self, source: &str) -> crate::syntax::Span {
        let start = offset(source, self.line, self.col);
        let end = offset(source, self.end_line, self.end_col).max(start);
        crate::syntax::Span::new(start, end)
    }

    /// The MLIR location of this range in `file`.
    pub fn location<'c>(&self, cx: &'c melior::Context, file: &str) -> Location<'c> {
        let file = melior::ir::Identifier::new(cx, file);
        // SAFETY: the context and the identifier are live; MLIR copies the file name.
        unsafe {
            Location::from_raw(mlir_sys::mlirLocationFileLineColRangeGet(
                cx.to_raw(),
                mlir_sys::mlirIdentifierStr(file.to_raw()),
                self.line,
                self.col,
                self.end_line,
                self.end_col,
            ))
        }
    }

    /// The range of a file location (a single position gives an empty range); `None` for any
    /// other location (unknown, fused, ...).
    pub fn of_location(at: Location<'_>) -> Option<SourceRange> {
        let raw = at.to_raw();
        // SAFETY: `raw` is a live location; the getters are only called on a file range.
        unsafe {
            if !mlir_sys::mlirLocationIsAFileLineColRange(raw) {
                return None;
            }
            let file = melior::ir::Identifier::from_raw(
                mlir_sys::mlirLocationFileLineColRangeGetFilename(raw),
            );
            Some(SourceRange {
                file: file.as_string_ref().as_str().unwrap_or("").to_string(),
                line: mlir_sys::mlirLocationFileLineColRangeGetStartLine(raw) as u32,
                col: mlir_sys::mlirLocationFileLineColRangeGetStartColumn(raw) as u32,
                end_line: mlir_sys::mlirLocationFileLineColRangeGetEndLine(raw) as u32,
                end_col: mlir_sys::mlirLocationFileLineColRangeGetEndColumn(raw) as u32,
            })
        }
    }
}

impl std::fmt::Display for SourceRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

fn line_col(source: &str, at: usize) -> (u32, u32) {
    let before = &source[..at.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line as u32, col as u32)
}

fn offset(source: &str, line: u32, col: u32) -> usize {
    let mut start = 0;
    for _ in 1..line.max(1) {
        match source[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return source.len(),
        }
    }
    (start + col.max(1) as usize - 1).min(source.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::Span;

    #[test]
    fn spans_round_trip_through_locations() {
        let cx = crate::mlir::Compiler::new().unwrap();
        let source = "ab\ncdef\n  fhd(c, d) < r;\n";
        for span in [
            Span::new(0, 2),
            Span::new(3, 7),
            Span::new(10, 23),
            Span::new(5, 5),
        ] {
            let r = SourceRange::of_span(source, span);
            let at = r.location(cx.context(), "p.irs");
            let back = SourceRange::of_location(at).unwrap();
            assert_eq!(back.to_span(source), span, "{at}");
        }
        assert_eq!(SourceRange::of_location(cx.unknown_location()), None);
    }
}
