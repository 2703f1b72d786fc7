//! Diagnostics written for the mistakes a newcomer makes most: a function the language does not
//! have, a comparison other than the one the protocol computes, a reveal to several parties.
//! The parser raises them where the generic "expected X, found Y" would not say what to write.

use super::ast::Ident;
use super::lexer::{Tok, Token};
use super::suggest::suggest;
use super::{Diagnostic, Span};

/// The calls the language has, as a user writes them.
pub const KNOWN_FUNCTIONS: [(&str, &str); 6] = [
    (
        "fhd",
        "`fhd(q, d) < r`: the fractional Hamming distance of two iris codes is below r",
    ),
    (
        "cosine",
        "`cosine(x, y) >= tau`: the cosine of two embeddings is at least tau",
    ),
    (
        "rotations",
        "`rotations(q, -15..=15)`: the query's rotations",
    ),
    ("zip", "`zip(left, right)`: index-aligned galleries"),
    ("earlier", "`earlier(q)`: the batch's earlier queries"),
    (
        "mirror",
        "`rotations(mirror(q), -15..=15)`: the rotations of the query's mirror image",
    ),
];

/// Names people reach for, and the function of the language that computes it.
const SYNONYMS: [(&str, &str); 14] = [
    ("hamming", "fhd"),
    ("hamming_distance", "fhd"),
    ("hd", "fhd"),
    ("fractional_hamming", "fhd"),
    ("distance", "fhd"),
    ("cos", "cosine"),
    ("cos_sim", "cosine"),
    ("cosine_similarity", "cosine"),
    ("similarity", "cosine"),
    ("rotate", "rotations"),
    ("rotation", "rotations"),
    ("previous", "earlier"),
    ("mirrored", "mirror"),
    ("flip", "mirror"),
];

/// `name(` where `name` is not a function of the language.
pub fn unknown_function(name: &Ident) -> Diagnostic {
    let known: Vec<&str> = KNOWN_FUNCTIONS.iter().map(|(n, _)| *n).collect();
    let lower = name.name.to_lowercase();
    let close = SYNONYMS
        .iter()
        .find(|(s, _)| *s == lower)
        .map(|(_, f)| *f)
        .or_else(|| suggest(&name.name, known.iter().copied()))
        .or_else(|| known.iter().copied().find(|k| same_letters(k, &lower)));
    let list = known
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut d = Diagnostic::error(
        format!(
            "unknown function `{}`; the known ones are {list}",
            name.name
        ),
        name.span,
    )
    .with_label("not a function of the language");
    let forms = KNOWN_FUNCTIONS
        .iter()
        .map(|(_, form)| *form)
        .collect::<Vec<_>>()
        .join("; ");
    d = match close.and_then(|c| KNOWN_FUNCTIONS.iter().find(|(n, _)| *n == c)) {
        Some((n, form)) => d.with_hint(format!("did you mean `{n}`? {form}")),
        None => d.with_hint(format!("the calls are {forms}")),
    };
    d
}

/// Whether `a` and `b` are the same letters in another order (`fdh` for `fhd`).
fn same_letters(a: &str, b: &str) -> bool {
    let sorted = |s: &str| {
        let mut v: Vec<char> = s.chars().collect();
        v.sort_unstable();
        v
    };
    a.len() == b.len() && sorted(a) == sorted(b)
}

/// The comparison operator at the start of `tokens` (`<=` and `==` are two tokens), if any.
pub fn comparison_at(tokens: &[Token]) -> Option<(&'static str, Span)> {
    let first = tokens.first()?;
    let joined = |second: &Tok| match tokens.get(1) {
        Some(t) if t.tok == *second && t.span.start == first.span.end => Some(t.span),
        _ => None,
    };
    match first.tok {
        Tok::Lt => Some(match joined(&Tok::Eq) {
            Some(s) => ("<=", first.span.to(s)),
            None => ("<", first.span),
        }),
        Tok::Gt => Some((">", first.span)),
        Tok::Ge => Some((">=", first.span)),
        Tok::Eq => Some(match joined(&Tok::Eq) {
            Some(s) => ("==", first.span.to(s)),
            None => ("=", first.span),
        }),
        _ => None,
    }
}

/// `fhd(..)` followed by a comparison other than `<`.
pub fn fhd_comparison(op: &str, span: Span) -> Diagnostic {
    Diagnostic::error(
        format!("`fhd(..) {op}` is not allowed: only `<` is allowed after `fhd`"),
        span,
    )
    .with_label(format!("`{op}` here; write `<`"))
    .with_hint(
        "the protocol computes one comparison, Algorithm 1's strict test hd < r * ml (the sign \
         bit of floor((1 - 2r) * ml) - dot, or of a*ml - b*dot with secret masks), so a test is \
         written `fhd(c, d) < r`; for \"at least r\" write `not (fhd(c, d) < r)`; for `<=`, a \
         ratio slightly above r",
    )
}

/// `cosine(..) <` or `<=`: the generic message (the next token, what is allowed) with a hint
/// that says why only `>=`/`>` exist and how to test "below".
pub fn cosine_comparison(op: &str, span: Span) -> Diagnostic {
    Diagnostic::error("expected one of `>=` or `>`, found `<`", span)
        .with_label(format!("`{op}` here; write `>=` or `>`"))
        .with_hint(
            "the protocol computes whether the cosine is above a threshold (the sign of \
             num^2 - tau^2 <x,x><y,y> with num >= 0, no square roots), so a test is written \
             `cosine(x, y) >= tau` or `> tau`; for \"below tau\" write \
             `not (cosine(x, y) >= tau)`",
        )
}

/// `reveal ... to p0, p1`: a second party after the first.
pub fn several_parties(first: &Ident, span: Span, second: &Token) -> Diagnostic {
    let other = match &second.tok {
        Tok::Ident(n) => n.clone(),
        _ => "p1".to_string(),
    };
    Diagnostic::error("a reveal goes to exactly one party", span)
        .with_label("a second party here")
        .with_secondary(first.span, "the party that learns this output")
        .with_hint(format!(
            "write one `reveal` per party, each opened to that party alone: \
             `reveal ... to {}; reveal ... to {other};` (a `let` names the value once: \
             `let m = ...; reveal m to {}; reveal m to {other};`)",
            first.name, first.name
        ))
}
