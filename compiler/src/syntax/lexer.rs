//! The lexer: source text to tokens with byte spans, written with nom over `&str`.
//!
//! Lexing first keeps the grammar in `parser.rs` free of whitespace handling and lets every
//! parse error name the token it stopped at.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_while};
use nom::character::complete::{char, digit1, multispace1, satisfy};
use nom::combinator::{recognize, value};
use nom::sequence::pair;
use nom::{IResult, Parser};

use super::{Diagnostic, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kw {
    Const,
    Parties,
    Gallery,
    Query,
    From,
    Iris,
    Public,
    Secret,
    Mask,
    Let,
    Reveal,
    Ids,
    Any,
    In,
    To,
    Rotations,
    Fhd,
    All,
    Count,
    And,
    Or,
    Not,
    True,
    False,
    If,
    Else,
    Cosine,
    Zip,
    Earlier,
    Mirror,
    Embedding,
    Scale,
    Bit,
    As,
}

impl Kw {
    pub const ALL: [Kw; 34] = [
        Kw::Const,
        Kw::Parties,
        Kw::Gallery,
        Kw::Query,
        Kw::From,
        Kw::Iris,
        Kw::Public,
        Kw::Secret,
        Kw::Mask,
        Kw::Let,
        Kw::Reveal,
        Kw::Ids,
        Kw::Any,
        Kw::In,
        Kw::To,
        Kw::Rotations,
        Kw::Fhd,
        Kw::All,
        Kw::Count,
        Kw::And,
        Kw::Or,
        Kw::Not,
        Kw::True,
        Kw::False,
        Kw::If,
        Kw::Else,
        Kw::Cosine,
        Kw::Zip,
        Kw::Earlier,
        Kw::Mirror,
        Kw::Embedding,
        Kw::Scale,
        Kw::Bit,
        Kw::As,
    ];

    pub fn text(self) -> &'static str {
        match self {
            Kw::Const => "const",
            Kw::Parties => "parties",
            Kw::Gallery => "gallery",
            Kw::Query => "query",
            Kw::From => "from",
            Kw::Iris => "iris",
            Kw::Public => "public",
            Kw::Secret => "secret",
            Kw::Mask => "mask",
            Kw::Let => "let",
            Kw::Reveal => "reveal",
            Kw::Ids => "ids",
            Kw::Any => "any",
            Kw::In => "in",
            Kw::To => "to",
            Kw::Rotations => "rotations",
            Kw::Fhd => "fhd",
            Kw::All => "all",
            Kw::Count => "count",
            Kw::And => "and",
            Kw::Or => "or",
            Kw::Not => "not",
            Kw::True => "true",
            Kw::False => "false",
            Kw::If => "if",
            Kw::Else => "else",
            Kw::Cosine => "cosine",
            Kw::Zip => "zip",
            Kw::Earlier => "earlier",
            Kw::Mirror => "mirror",
            Kw::Embedding => "embedding",
            Kw::Scale => "scale",
            Kw::Bit => "bit",
            Kw::As => "as",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tok {
    Kw(Kw),
    Ident(String),
    /// Digits only, kept as text so that overflow is reported with a span, not a panic.
    Int(String),
    /// `digits.digits`, kept as text so that it becomes an exact ratio.
    Decimal(String),
    Semi,
    Comma,
    Colon,
    Eq,
    Lt,
    Gt,
    /// `>=`
    Ge,
    LParen,
    RParen,
    LBrace,
    RBrace,
    Minus,
    /// `..=`, the inclusive range of rotations.
    DotDotEq,
    Eof,
}

impl Tok {
    /// How the token is named in "expected X, found Y" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Kw(k) => format!("`{}`", k.text()),
            Tok::Ident(s) => format!("name `{s}`"),
            Tok::Int(s) | Tok::Decimal(s) => format!("number `{s}`"),
            Tok::Eof => "end of file".to_string(),
            other => format!("`{}`", other.punct_text()),
        }
    }

    fn punct_text(&self) -> &'static str {
        match self {
            Tok::Semi => ";",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Eq => "=",
            Tok::Lt => "<",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::Minus => "-",
            Tok::DotDotEq => "..=",
            _ => "",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Splits `source` into tokens; the last one is always [`Tok::Eof`] (spanning the end).
pub fn lex(source: &str) -> Result<Vec<Token>, Diagnostic> {
    let mut tokens = Vec::new();
    let mut rest = source;
    loop {
        rest = skip_trivia(rest);
        let start = source.len() - rest.len();
        if rest.is_empty() {
            tokens.push(Token {
                tok: Tok::Eof,
                span: Span::new(start, start),
            });
            return Ok(tokens);
        }
        match token(rest) {
            Ok((next, tok)) => {
                let end = source.len() - next.len();
                tokens.push(Token {
                    tok,
                    span: Span::new(start, end),
                });
                rest = next;
            }
            Err(_) => {
                let c = rest.chars().next().unwrap_or(' ');
                let span = Span::new(start, start + c.len_utf8());
                return Err(lex_error(rest, c, span));
            }
        }
    }
}

fn lex_error(rest: &str, c: char, span: Span) -> Diagnostic {
    if rest.starts_with("..") {
        return Diagnostic::error(
            format!("unexpected `{}`", &rest[..2]),
            span.to(Span::new(span.start, span.start + 2)),
        )
        .with_label("a range of rotations is written `lo..=hi`")
        .with_hint("write the inclusive range as `-15..=15`");
    }
    if rest.starts_with("/*") {
        return Diagnostic::error(
            "block comments are not supported",
            Span::new(span.start, span.start + 2),
        )
        .with_label("comment starts here")
        .with_hint("use `//` line comments");
    }
    Diagnostic::error(
        format!("unexpected character `{}`", c.escape_default()),
        span,
    )
    .with_label("not part of any token")
    .with_hint(
        "programs use names, numbers, `//` comments and the symbols `= ; : , < > >= ( ) { } - ..=`",
    )
}

/// Whitespace and `//` line comments.
fn skip_trivia(mut input: &str) -> &str {
    loop {
        let r: IResult<&str, &str> = alt((
            multispace1,
            recognize(pair(tag("//"), take_while(|c| c != '\n'))),
        ))
        .parse(input);
        match r {
            Ok((next, _)) => input = next,
            Err(_) => return input,
        }
    }
}

fn token(input: &str) -> IResult<&str, Tok> {
    alt((number, word, punct)).parse(input)
}

fn number(input: &str) -> IResult<&str, Tok> {
    // A decimal needs a digit after the dot, so `15..=` lexes as `15` then `..=`.
    let decimal = recognize((digit1, char('.'), digit1)).map(|s: &str| Tok::Decimal(s.to_string()));
    let int = digit1.map(|s: &str| Tok::Int(s.to_string()));
    alt((decimal, int)).parse(input)
}

fn word(input: &str) -> IResult<&str, Tok> {
    let (rest, w) = recognize(pair(
        satisfy(|c| c.is_ascii_alphabetic() || c == '_'),
        take_while(|c: char| c.is_ascii_alphanumeric() || c == '_'),
    ))
    .parse(input)?;
    let tok = match Kw::ALL.iter().find(|k| k.text() == w) {
        Some(k) => Tok::Kw(*k),
        None => Tok::Ident(w.to_string()),
    };
    Ok((rest, tok))
}

fn punct(input: &str) -> IResult<&str, Tok> {
    alt((
        value(Tok::DotDotEq, tag("..=")),
        value(Tok::Semi, char(';')),
        value(Tok::Comma, char(',')),
        value(Tok::Colon, char(':')),
        value(Tok::Eq, char('=')),
        value(Tok::Lt, char('<')),
        value(Tok::Ge, tag(">=")),
        value(Tok::Gt, char('>')),
        value(Tok::LBrace, char('{')),
        value(Tok::RBrace, char('}')),
        value(Tok::LParen, char('(')),
        value(Tok::RParen, char(')')),
        value(Tok::Minus, char('-')),
    ))
    .parse(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn lexes_declarations_and_ranges() {
        assert_eq!(
            kinds("const R = 0.345; // comment\nrotations(q, -15..=15)"),
            vec![
                Tok::Kw(Kw::Const),
                Tok::Ident("R".into()),
                Tok::Eq,
                Tok::Decimal("0.345".into()),
                Tok::Semi,
                Tok::Kw(Kw::Rotations),
                Tok::LParen,
                Tok::Ident("q".into()),
                Tok::Comma,
                Tok::Minus,
                Tok::Int("15".into()),
                Tok::DotDotEq,
                Tok::Int("15".into()),
                Tok::RParen,
                Tok::Eof,
            ]
        );
    }

    #[test]
    fn spans_are_byte_offsets() {
        let toks = lex("  let x").unwrap();
        assert_eq!(toks[0].span, Span::new(2, 5));
        assert_eq!(toks[1].span, Span::new(6, 7));
        assert_eq!(toks[2].span, Span::new(7, 7));
    }

    #[test]
    fn rejects_unknown_characters_with_a_span() {
        let d = lex("let x = é;").unwrap_err();
        assert!(d.message.contains("unexpected character"));
        assert_eq!(d.span, Span::new(8, 10));
        let d = lex("x ..y").unwrap_err();
        assert!(d.message.contains("`..`"), "{}", d.message);
    }
}
