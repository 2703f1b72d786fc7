//! Diagnostics: one error with a primary span, secondary labels and an optional hint, rendered
//! like a compiler error (`error: ...`, `file:line:column`, the source line, a caret underline).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label as CsLabel};
use codespan_reporting::files::SimpleFile;
use codespan_reporting::term::{self, termcolor, Chars, Config};

use super::Span;

/// A secondary label: a span with a short note ("first declared here").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub message: String,
    /// The primary span: where the problem is.
    pub span: Span,
    /// Printed under the primary span's caret.
    pub label: String,
    pub secondary: Vec<Label>,
    /// Printed as `= hint: ...`.
    pub hint: Option<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>, span: Span) -> Self {
        Diagnostic {
            message: message.into(),
            span,
            label: String::new(),
            secondary: Vec::new(),
            hint: None,
        }
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    pub fn with_secondary(mut self, span: Span, message: impl Into<String>) -> Self {
        self.secondary.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// 1-based line and column (in characters) of the primary span's start.
    pub fn line_column(&self, source: &str) -> (usize, usize) {
        self.span.line_column(source)
    }
}

pub(super) fn clamp_to_char_boundary(source: &str, mut at: usize) -> usize {
    at = at.min(source.len());
    while !source.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn clamp(source: &str, span: Span) -> std::ops::Range<usize> {
    let start = clamp_to_char_boundary(source, span.start);
    let end = clamp_to_char_boundary(source, span.end.max(start));
    start..end
}

/// Renders diagnostics against `source`, e.g.
/// ```text
/// error: unknown name `MATCH_RATO`
///   --> iris.irs:9:68
///   |
/// 9 | let duplicate = any d in db: fhd(q, d) < MATCH_RATO;
///   |                                          ^^^^^^^^^^ not declared
///   |
///   = hint: did you mean `MATCH_RATIO`?
/// ```
/// `color` adds ANSI escapes for terminals.
pub fn render(file_name: &str, source: &str, diagnostics: &[Diagnostic], color: bool) -> String {
    let file = SimpleFile::new(file_name, source);
    let config = Config {
        chars: Chars::ascii(),
        ..Config::default()
    };
    let mut out = String::new();
    for d in diagnostics {
        let mut labels = vec![CsLabel::primary((), clamp(source, d.span)).with_message(&d.label)];
        labels.extend(
            d.secondary
                .iter()
                .map(|l| CsLabel::secondary((), clamp(source, l.span)).with_message(&l.message)),
        );
        let mut cs = CsDiagnostic::error()
            .with_message(&d.message)
            .with_labels(labels);
        if let Some(h) = &d.hint {
            cs = cs.with_notes(vec![format!("hint: {h}")]);
        }
        let text = if color {
            let mut w = termcolor::Ansi::new(Vec::new());
            term::emit_to_write_style(&mut w, &config, &file, &cs)
                .ok()
                .map(|_| String::from_utf8_lossy(&w.into_inner()).into_owned())
        } else {
            let mut s = String::new();
            term::emit_to_string(&mut s, &config, &file, &cs)
                .ok()
                .map(|_| s)
        };
        // Rendering only fails on spans outside the file, which `clamp` rules out; fall back to
        // a plain line so that an error is never lost.
        out.push_str(&text.unwrap_or_else(|| {
            let (l, c) = d.line_column(source);
            format!("error: {}\n  --> {file_name}:{l}:{c}\n", d.message)
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_location_caret_and_hint() {
        let src = "const A = 1;\nlet x = B;\n";
        let d = Diagnostic::error("unknown name `B`", Span::new(21, 22))
            .with_label("not declared")
            .with_secondary(Span::new(6, 7), "a similar name")
            .with_hint("did you mean `A`?");
        let out = render("t.irs", src, std::slice::from_ref(&d), false);
        assert!(out.starts_with("error: unknown name `B`"), "{out}");
        assert!(out.contains("t.irs:2:9"), "{out}");
        assert!(out.contains("let x = B;"), "{out}");
        assert!(out.contains("^ not declared"), "{out}");
        assert!(out.contains("= hint: did you mean `A`?"), "{out}");
        assert_eq!(d.line_column(src), (2, 9));
        let colored = render("t.irs", src, &[d], true);
        assert!(colored.contains("\u{1b}["), "{colored}");
    }

    #[test]
    fn out_of_range_spans_do_not_panic() {
        let d = Diagnostic::error("x", Span::new(100, 200));
        let out = render("t.irs", "ab", std::slice::from_ref(&d), false);
        assert!(out.contains("error: x"));
        assert_eq!(d.line_column("ab"), (1, 3));
    }
}
