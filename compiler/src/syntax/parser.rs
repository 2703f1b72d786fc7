//! The parser: tokens to [`crate::syntax::ast::Module`], written with nom combinators over a token slice.
//!
//! Grammar (`;` ends every item; `//` comments are dropped by the lexer):
//! ```text
//! module   = item* EOF
//! item     = "const" NAME "=" (INT | DECIMAL) ";"
//!          | "parties" NAME ("," NAME)* ";"
//!          | "gallery" NAME ":" type ";"
//!          | "query" NAME ":" type "from" NAME ";"
//!          | "let" NAME "=" expr ";"
//!          | "reveal" ("ids" binder ":" expr | expr) "to" NAME ";"
//! type     = "iris" "<" operand ">" ("public" | "secret") "mask"
//! expr     = "any" binder ("," binder)* ":" expr
//!          | "fhd" "(" NAME "," NAME ")" "<" operand
//!          | NAME
//! binder   = NAME "in" (NAME | "rotations" "(" NAME "," bound "..=" bound ")")
//! bound    = "-"? operand
//! operand  = INT | DECIMAL | NAME
//! ```
//! After an item's keyword the parser commits (`cut`), so an error names the token that broke
//! that item rather than "expected an item".

use nom::branch::alt;
use nom::combinator::{cut, map, opt};
use nom::multi::many0;
use nom::sequence::{pair, preceded};
use nom::{Err, IResult, Input, Needed, Parser};

use super::ast::*;
use super::lexer::{lex, Kw, Tok, Token};
use super::{Diagnostic, Span};

/// Parses a whole `.irs` source; the error points at the first offending token.
pub fn parse(source: &str) -> Result<Module, Diagnostic> {
    let tokens = lex(source)?;
    let input = Toks(&tokens);
    let at = |rest: usize| tokens.len() - rest;
    let result = many0(item).parse(input);
    match result {
        Ok((rest, items)) => {
            let next = &rest.0[0];
            if next.tok == Tok::Eof {
                let span = Span::new(0, source.len());
                return Ok(Module { items, span });
            }
            let expected = ["const", "parties", "gallery", "query", "let", "reveal"]
                .iter()
                .map(|k| format!("`{k}`"))
                .collect();
            Err(to_diagnostic(&tokens, at(rest.0.len()), expected))
        }
        Err(Err::Error(e)) | Err(Err::Failure(e)) => {
            Err(to_diagnostic(&tokens, at(e.rest), e.expected))
        }
        // Only streaming parsers ask for more input, and none are used.
        Err(Err::Incomplete(_)) => Err(Diagnostic::error(
            "unexpected end of file",
            Span::new(source.len(), source.len()),
        )
        .with_hint("the file ends in the middle of a declaration")),
    }
}

fn to_diagnostic(tokens: &[Token], index: usize, mut expected: Vec<String>) -> Diagnostic {
    let index = index.min(tokens.len() - 1);
    let found = &tokens[index];
    expected.dedup();
    let mut unique: Vec<String> = Vec::new();
    for e in expected {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    let list = match unique.len() {
        0 => "something else".to_string(),
        1 => unique[0].clone(),
        n => format!("one of {} or {}", unique[..n - 1].join(", "), unique[n - 1]),
    };
    let mut d = Diagnostic::error(
        format!("expected {list}, found {}", found.tok.describe()),
        found.span,
    )
    .with_label(format!("expected {list} here"));
    let prev = index.checked_sub(1).map(|i| tokens[i].span);
    if unique.iter().any(|e| e == "`;`") {
        if let Some(p) = prev {
            d = d.with_secondary(p, "this declaration is not finished");
        }
        d = d.with_hint("every declaration and statement ends with `;`");
    } else if found.tok == Tok::Eof {
        d = d.with_hint("the file ends in the middle of a declaration");
    } else if matches!(&found.tok, Tok::Kw(_)) && unique.iter().any(|e| e.starts_with("a name")) {
        d = d.with_hint(format!(
            "{} is a keyword and cannot be used as a name",
            found.tok.describe()
        ));
    } else {
        d = d.with_hint(STATEMENT_FORMS);
    }
    d
}

/// The hint for a statement that is not recognised: the form of each one.
const STATEMENT_FORMS: &str = "statements have these forms (see examples/): `const N = 12800;`, \
`parties a, b, c;`, `gallery db: iris<N> public mask;`, `query q: iris<N> public mask from a;`, \
`let m = any d in db: fhd(q, d) < 0.345;`, `reveal m to a;`";

/// A token slice as nom input. The slice always ends with [`Tok::Eof`], which is never consumed.
#[derive(Debug, Clone, Copy)]
pub struct Toks<'a>(&'a [Token]);

impl<'a> Input for Toks<'a> {
    type Item = &'a Token;
    type Iter = std::slice::Iter<'a, Token>;
    type IterIndices = std::iter::Enumerate<std::slice::Iter<'a, Token>>;

    fn input_len(&self) -> usize {
        self.0.len()
    }
    fn take(&self, index: usize) -> Self {
        Toks(&self.0[..index])
    }
    fn take_from(&self, index: usize) -> Self {
        Toks(&self.0[index..])
    }
    fn take_split(&self, index: usize) -> (Self, Self) {
        let (prefix, suffix) = self.0.split_at(index);
        (Toks(suffix), Toks(prefix))
    }
    fn position<P: Fn(Self::Item) -> bool>(&self, predicate: P) -> Option<usize> {
        self.0.iter().position(predicate)
    }
    fn iter_elements(&self) -> Self::Iter {
        self.0.iter()
    }
    fn iter_indices(&self) -> Self::IterIndices {
        self.0.iter().enumerate()
    }
    fn slice_index(&self, count: usize) -> Result<usize, Needed> {
        if self.0.len() >= count {
            Ok(count)
        } else {
            Err(Needed::new(count - self.0.len()))
        }
    }
}

/// A parse error: how many tokens were left when it happened and what would have been accepted.
#[derive(Debug, Clone)]
pub struct PErr {
    rest: usize,
    expected: Vec<String>,
}

impl<'a> nom::error::ParseError<Toks<'a>> for PErr {
    fn from_error_kind(input: Toks<'a>, _kind: nom::error::ErrorKind) -> Self {
        PErr {
            rest: input.0.len(),
            expected: Vec::new(),
        }
    }
    fn append(_input: Toks<'a>, _kind: nom::error::ErrorKind, other: Self) -> Self {
        other
    }
    /// Between alternatives, the one that got further explains the error best; at the same
    /// token, both sets of expectations are listed.
    fn or(mut self, other: Self) -> Self {
        match self.rest.cmp(&other.rest) {
            std::cmp::Ordering::Less => self,
            std::cmp::Ordering::Greater => other,
            std::cmp::Ordering::Equal => {
                self.expected.extend(other.expected);
                self
            }
        }
    }
}

type R<'a, T> = IResult<Toks<'a>, T, PErr>;

fn fail<'a, T>(input: Toks<'a>, expected: impl Into<String>) -> R<'a, T> {
    Err(Err::Error(PErr {
        rest: input.0.len(),
        expected: vec![expected.into()],
    }))
}

/// One token equal to `want`.
fn tok<'a>(want: Tok) -> impl Fn(Toks<'a>) -> R<'a, Span> {
    move |input: Toks<'a>| match input.0.first() {
        Some(t) if t.tok == want && want != Tok::Eof => Ok((Toks(&input.0[1..]), t.span)),
        _ => fail(input, want.describe()),
    }
}

fn kw<'a>(k: Kw) -> impl Fn(Toks<'a>) -> R<'a, Span> {
    tok(Tok::Kw(k))
}

/// A name; `what` says which kind, for the error ("a party name").
fn name<'a>(what: &'static str) -> impl Fn(Toks<'a>) -> R<'a, Ident> + Clone {
    move |input: Toks<'a>| match input.0.first() {
        Some(Token {
            tok: Tok::Ident(s),
            span,
        }) => Ok((
            Toks(&input.0[1..]),
            Ident {
                name: s.clone(),
                span: *span,
            },
        )),
        _ => fail(input, format!("a name ({what})")),
    }
}

fn literal(input: Toks<'_>) -> R<'_, Literal> {
    match input.0.first() {
        Some(Token { tok, span }) => {
            let kind = match tok {
                Tok::Int(s) => LitKind::Int(s.clone()),
                Tok::Decimal(s) => LitKind::Decimal(s.clone()),
                _ => return fail(input, "a number"),
            };
            Ok((Toks(&input.0[1..]), Literal { kind, span: *span }))
        }
        None => fail(input, "a number"),
    }
}

fn operand(input: Toks<'_>) -> R<'_, Operand> {
    alt((
        map(literal, Operand::Lit),
        map(name("a constant"), Operand::Name),
    ))
    .parse(input)
}

/// `first ("," rest)*`, committing after each comma.
fn comma_list<'a, T>(
    p: impl Fn(Toks<'a>) -> R<'a, T> + Clone,
) -> impl Fn(Toks<'a>) -> R<'a, Vec<T>> {
    move |input| {
        let (input, (first, rest)) =
            pair(p.clone(), many0(preceded(tok(Tok::Comma), cut(p.clone())))).parse(input)?;
        let mut all = vec![first];
        all.extend(rest);
        Ok((input, all))
    }
}

fn item(input: Toks<'_>) -> R<'_, Item> {
    alt((
        map(const_item, Item::Const),
        map(parties_item, Item::Parties),
        map(input_item, Item::Input),
        map(let_item, Item::Let),
        map(reveal_item, Item::Reveal),
    ))
    .parse(input)
}

fn const_item(input: Toks<'_>) -> R<'_, ConstItem> {
    let (input, start) = kw(Kw::Const)(input)?;
    let (input, (name, _, value, end)) = cut((
        name("the constant's name"),
        tok(Tok::Eq),
        literal,
        tok(Tok::Semi),
    ))
    .parse(input)?;
    let span = start.to(end);
    Ok((input, ConstItem { name, value, span }))
}

fn parties_item(input: Toks<'_>) -> R<'_, PartiesItem> {
    let (input, start) = kw(Kw::Parties)(input)?;
    let (input, (names, end)) =
        cut((comma_list(name("a party name")), tok(Tok::Semi))).parse(input)?;
    Ok((
        input,
        PartiesItem {
            names,
            span: start.to(end),
        },
    ))
}

fn input_item(input: Toks<'_>) -> R<'_, InputItem> {
    let gallery = map(
        (
            kw(Kw::Gallery),
            cut((
                name("the gallery's name"),
                tok(Tok::Colon),
                iris_type,
                tok(Tok::Semi),
            )),
        ),
        |(start, (name, _, ty, end))| InputItem {
            kind: InputKind::Gallery,
            name,
            ty,
            span: start.to(end),
        },
    );
    let query = map(
        (
            kw(Kw::Query),
            cut((
                name("the query's name"),
                tok(Tok::Colon),
                iris_type,
                kw(Kw::From),
                name("the party that supplies the query"),
                tok(Tok::Semi),
            )),
        ),
        |(start, (name, _, ty, _, from, end))| InputItem {
            kind: InputKind::Query { from },
            name,
            ty,
            span: start.to(end),
        },
    );
    alt((gallery, query)).parse(input)
}

fn iris_type(input: Toks<'_>) -> R<'_, IrisType> {
    let (input, start) = kw(Kw::Iris)(input)?;
    let mask = alt((
        map(kw(Kw::Public), |s| (MaskAnn::Public, s)),
        map(kw(Kw::Secret), |s| (MaskAnn::Secret, s)),
    ));
    let (input, (_, bits, _, (mask, mask_start), mask_end)) =
        cut((tok(Tok::Lt), operand, tok(Tok::Gt), mask, kw(Kw::Mask))).parse(input)?;
    Ok((
        input,
        IrisType {
            bits,
            mask,
            mask_span: mask_start.to(mask_end),
            span: start.to(mask_end),
        },
    ))
}

fn let_item(input: Toks<'_>) -> R<'_, LetItem> {
    let (input, start) = kw(Kw::Let)(input)?;
    let (input, (name, _, value, end)) = cut((
        name("the new value's name"),
        tok(Tok::Eq),
        expr,
        tok(Tok::Semi),
    ))
    .parse(input)?;
    Ok((
        input,
        LetItem {
            name,
            value,
            span: start.to(end),
        },
    ))
}

fn reveal_item(input: Toks<'_>) -> R<'_, RevealItem> {
    let (input, start) = kw(Kw::Reveal)(input)?;
    let ids = map(
        (kw(Kw::Ids), cut((binder, tok(Tok::Colon), expr))),
        |(_, (binder, _, body))| RevealBody::Ids { binder, body },
    );
    let (input, (body, _, to, end)) = cut((
        alt((ids, map(expr, RevealBody::Value))),
        kw(Kw::To),
        name("the party that learns the result"),
        tok(Tok::Semi),
    ))
    .parse(input)?;
    Ok((
        input,
        RevealItem {
            body,
            to,
            span: start.to(end),
        },
    ))
}

fn expr(input: Toks<'_>) -> R<'_, Expr> {
    alt((
        map(any_expr, Expr::Any),
        map(fhd_lt, Expr::FhdLt),
        map(name("a value"), Expr::Name),
    ))
    .parse(input)
}

fn any_expr(input: Toks<'_>) -> R<'_, AnyExpr> {
    let (input, start) = kw(Kw::Any)(input)?;
    let (input, (binders, _, body)) =
        cut((comma_list(binder), tok(Tok::Colon), expr)).parse(input)?;
    let span = start.to(body.span());
    Ok((
        input,
        AnyExpr {
            binders,
            body: Box::new(body),
            span,
        },
    ))
}

fn binder(input: Toks<'_>) -> R<'_, Binder> {
    let (input, (name, _, source)) = (
        name("a variable"),
        cut(kw(Kw::In)),
        cut(alt((
            map(rotations, Source::Rotations),
            map(self::name("a gallery or query"), Source::Input),
        ))),
    )
        .parse(input)?;
    let end = match &source {
        Source::Input(i) => i.span,
        Source::Rotations(r) => r.span,
    };
    let span = name.span.to(end);
    Ok((input, Binder { name, source, span }))
}

fn rotations(input: Toks<'_>) -> R<'_, Rotations> {
    let (input, start) = kw(Kw::Rotations)(input)?;
    let (input, (_, of, _, lo, _, hi, end)) = cut((
        tok(Tok::LParen),
        name("the query to rotate"),
        tok(Tok::Comma),
        bound,
        tok(Tok::DotDotEq),
        bound,
        tok(Tok::RParen),
    ))
    .parse(input)?;
    Ok((
        input,
        Rotations {
            of,
            lo,
            hi,
            span: start.to(end),
        },
    ))
}

fn bound(input: Toks<'_>) -> R<'_, Bound> {
    let (input, (minus, value)) = (opt(tok(Tok::Minus)), operand).parse(input)?;
    let span = minus.unwrap_or(value.span()).to(value.span());
    Ok((
        input,
        Bound {
            negative: minus.is_some(),
            value,
            span,
        },
    ))
}

fn fhd_lt(input: Toks<'_>) -> R<'_, FhdLt> {
    let (input, start) = kw(Kw::Fhd)(input)?;
    let (input, (_, lhs, _, rhs, _, _, ratio)) = cut((
        tok(Tok::LParen),
        name("a query or its rotation"),
        tok(Tok::Comma),
        name("a gallery record"),
        tok(Tok::RParen),
        tok(Tok::Lt),
        operand,
    ))
    .parse(input)?;
    let span = start.to(ratio.span());
    Ok((
        input,
        FhdLt {
            lhs,
            rhs,
            ratio,
            span,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIQUE: &str =
        "const CODE_BITS = 12800;\nconst MATCH_RATIO = 0.345;\nparties p0, p1, p2;\n\
        gallery db: iris<CODE_BITS> public mask;\nquery q: iris<CODE_BITS> public mask from p0;\n\
        let duplicate = any d in db, c in rotations(q, -15..=15): fhd(c, d) < MATCH_RATIO;\n\
        reveal duplicate to p0;\n";

    #[test]
    fn parses_the_any_bit_program() {
        let m = parse(UNIQUE).unwrap();
        assert_eq!(m.items.len(), 7);
        let Item::Let(l) = &m.items[5] else {
            panic!("expected let")
        };
        let Expr::Any(a) = &l.value else {
            panic!("expected any")
        };
        assert_eq!(a.binders.len(), 2);
        let Source::Rotations(r) = &a.binders[1].source else {
            panic!("expected rotations")
        };
        assert!(r.lo.negative && !r.hi.negative);
        assert_eq!(&UNIQUE[r.span.start..r.span.end], "rotations(q, -15..=15)");
        assert_eq!(
            &UNIQUE[a.body.span().start..a.body.span().end],
            "fhd(c, d) < MATCH_RATIO"
        );
    }

    #[test]
    fn parses_reveal_ids() {
        let src = "reveal ids d in db: any c in rotations(q, -2..=2): fhd(c, d) < 0.375 to p0;";
        let m = parse(src).unwrap();
        let Item::Reveal(r) = &m.items[0] else {
            panic!("expected reveal")
        };
        assert_eq!(r.to.name, "p0");
        assert!(matches!(&r.body, RevealBody::Ids { binder, .. } if binder.name.name == "d"));
        assert_eq!(r.span, Span::new(0, src.len()));
    }

    #[test]
    fn missing_semicolon_points_at_the_next_token() {
        let src = "const A = 1\nconst B = 2;";
        let d = parse(src).unwrap_err();
        assert_eq!(d.message, "expected `;`, found `const`");
        assert_eq!(d.span, Span::new(12, 17));
        assert_eq!(d.secondary[0].span, Span::new(10, 11));
        assert!(d.hint.is_some());
    }

    #[test]
    fn alternatives_are_listed() {
        let d = parse("gallery db: iris<64> hidden mask;").unwrap_err();
        assert_eq!(
            d.message,
            "expected one of `public` or `secret`, found name `hidden`"
        );
        let d = parse("banana").unwrap_err();
        assert!(
            d.message.starts_with("expected one of `const`"),
            "{}",
            d.message
        );
    }

    #[test]
    fn keyword_as_name_gets_a_hint() {
        let d = parse("let any = 1;").unwrap_err();
        assert!(d.hint.unwrap().contains("keyword"));
    }

    #[test]
    fn end_of_file_is_reported_at_the_end() {
        let src = "reveal any d in db: fhd(q, d) <";
        let d = parse(src).unwrap_err();
        assert_eq!(d.span, Span::new(src.len(), src.len()));
        assert!(d.message.ends_with("found end of file"), "{}", d.message);
    }
}
