//! The global names of a program and "did you mean" suggestions for misspelt ones.

use std::collections::HashMap;

use crate::syntax::ast::{self, Ident};
use crate::syntax::{Diagnostic, Span};
use irisc_runtime::vocab::InputRole;

/// What a global name refers to.
#[derive(Debug, Clone, Copy)]
pub enum SymbolKind<'m> {
    Const(&'m ast::ConstItem),
    /// Index in `--party` order.
    Party(usize),
    /// Index into the program's inputs (declaration order).
    Input(usize, &'m ast::InputItem),
    Let(&'m ast::LetItem),
}

impl SymbolKind<'_> {
    /// "a constant", "a party", ...: for "`x` is a constant, not a party".
    pub fn describe(&self) -> &'static str {
        match self {
            SymbolKind::Const(_) => "a constant",
            SymbolKind::Party(_) => "a party",
            SymbolKind::Input(_, i) => match i.role {
                InputRole::Gallery => "a gallery",
                InputRole::Query => "a query",
            },
            SymbolKind::Let(_) => "a `let` value",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Symbol<'m> {
    pub kind: SymbolKind<'m>,
    /// Where the name is declared.
    pub span: Span,
}

/// Every name declared at the top level, in one namespace so that no name means two things.
#[derive(Debug, Default)]
pub struct Globals<'m> {
    pub map: HashMap<String, Symbol<'m>>,
}

impl<'m> Globals<'m> {
    /// Declares `name`, or reports a duplicate with both places.
    pub fn declare(&mut self, name: &Ident, kind: SymbolKind<'m>) -> Result<(), Diagnostic> {
        if let Some(prev) = self.map.get(&name.name) {
            return Err(duplicate(name, prev.span));
        }
        self.map.insert(
            name.name.clone(),
            Symbol {
                kind,
                span: name.span,
            },
        );
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Symbol<'m>> {
        self.map.get(name)
    }

    /// The error for a name that is not declared, with a suggestion among `extra` and the
    /// globals accepted by `fits`.
    pub fn unknown(
        &self,
        name: &Ident,
        what: &str,
        extra: &[&str],
        fits: impl Fn(&SymbolKind) -> bool,
    ) -> Diagnostic {
        let candidates = self
            .map
            .iter()
            .filter(|(_, s)| fits(&s.kind))
            .map(|(n, _)| n.as_str())
            .chain(extra.iter().copied());
        let d = Diagnostic::error(format!("unknown {what} `{}`", name.name), name.span)
            .with_label("not declared");
        let hint = match suggest(&name.name, candidates) {
            Some(best) => format!("did you mean `{best}`?"),
            None => format!("declare the {what} before this line, or use one that is declared"),
        };
        d.with_hint(hint)
    }
}

pub fn duplicate(name: &Ident, first: Span) -> Diagnostic {
    Diagnostic::error(format!("`{}` is declared twice", name.name), name.span)
        .with_label("declared again here")
        .with_secondary(first, "first declared here")
        .with_hint("give each constant, party, input, value and variable its own name")
}

// The typo suggestions live with the diagnostics (the parser uses them too).
pub use crate::syntax::suggest::{edit_distance, suggest};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("MATCH_RATO", "MATCH_RATIO"), 1);
    }

    #[test]
    fn suggests_only_close_names() {
        let c = ["MATCH_RATIO", "CODE_BITS", "p0"];
        assert_eq!(
            suggest("MATCH_RATO", c.iter().copied()),
            Some("MATCH_RATIO")
        );
        assert_eq!(suggest("p3", c.iter().copied()), Some("p0"));
        assert_eq!(suggest("gallery_x", c.iter().copied()), None);
    }
}
