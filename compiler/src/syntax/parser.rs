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
//!          | "reveal" expr "to" NAME ("as" NAME)? ";"
//! type     = "iris" "<" operand ">" ("public" | "secret") "mask"
//!          | "embedding" "<" operand ">" ("scale" operand)?
//!          | "bit"
//! expr     = quant | or_expr                      (precedence low to high: or, and, not)
//! quant    = ("any" | "all" | "count" | "ids") binder ("," binder)* ":" expr
//! or_expr  = and_expr ("or" and_expr)*
//! and_expr = not_expr ("and" not_expr)*
//! not_expr = "not" not_expr | primary
//! primary  = "(" expr ")" | "true" | "false"
//!          | "if" expr "{" expr "}" "else" "{" expr "}"
//!          | "fhd" "(" NAME "," NAME ")" "<" operand
//!          | "cosine" "(" NAME "," NAME ")" (">=" | ">") bound
//!          | NAME                                 (a `let`, a `bit` input or a bound bit)
//! binder   = NAME "in" source
//!          | "(" NAME ("," NAME)+ ")" "in" source  (source: a `zip`)
//! source   = "rotations" "(" NAME "," bound "..=" bound ")"
//!          | "zip" "(" NAME ("," NAME)* ")"
//!          | "earlier" "(" NAME ")"
//!          | NAME
//! bound    = "-"? operand
//! operand  = INT | DECIMAL | NAME
//! ```
//! A quantifier's body extends as far right as possible, so a quantifier combined with `and`/`or`
//! is written in parentheses. `ids`/`count` parse anywhere; `sema` allows them only as the whole
//! revealed value.
//! After an item's keyword the parser commits (`cut`), so an error names the token that broke
//! that item rather than "expected an item".

use nom::branch::alt;
use nom::combinator::{cut, map, opt};
use nom::multi::many0;
use nom::sequence::{pair, preceded};
use nom::{Err, IResult, Input, Needed, Parser};

use super::ast::*;
use super::hints::{cosine_comparison, fhd_comparison, several_parties, unknown_function};
use super::lexer::{lex, Kw, Tok, Token};
use super::{Diagnostic, Span};
use irisc_runtime::vocab::InputRole;

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
        Err(Err::Error(e)) | Err(Err::Failure(e)) => match e.custom {
            Some(d) => Err(*d),
            None => Err(to_diagnostic(&tokens, at(e.rest), e.expected)),
        },
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
    } else if matches!(&found.tok, Tok::Kw(Kw::Any | Kw::All | Kw::Count | Kw::Ids))
        && unique.iter().any(|e| e == "`(`")
    {
        d = d.with_hint(format!(
            "a quantifier's body extends to the end of the expression: to combine {} with \
             `and`/`or`/`not`, put it in parentheses, e.g. `(any c in rotations(q, -15..=15): \
             fhd(c, d) < 0.345) and ...`",
            found.tok.describe()
        ));
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
`parties a, b, c;`, `gallery db: iris<N> public mask;`, `query q: iris<N> secret mask from a;`, \
`query v: embedding<192> scale 8 from a;`, `query t: bit from a;`, \
`let m = any d in db: fhd(q, d) < 0.345;`, `reveal m to a;`, \
`reveal ids d in db: fhd(q, d) < 0.345 to a as matches;`";

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
    /// A diagnostic written for this mistake (an unknown function, `<=` after `fhd`), which
    /// replaces the generic "expected X, found Y".
    custom: Option<Box<Diagnostic>>,
}

impl<'a> nom::error::ParseError<Toks<'a>> for PErr {
    fn from_error_kind(input: Toks<'a>, _kind: nom::error::ErrorKind) -> Self {
        PErr {
            rest: input.0.len(),
            expected: Vec::new(),
            custom: None,
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
        custom: None,
    }))
}

/// Stops the parse with a diagnostic written for the mistake at `input`'s first token.
fn refuse<'a, T>(input: Toks<'a>, diagnostic: Diagnostic) -> R<'a, T> {
    Err(Err::Failure(PErr {
        rest: input.0.len(),
        expected: Vec::new(),
        custom: Some(Box::new(diagnostic)),
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
                type_ann,
                tok(Tok::Semi),
            )),
        ),
        |(start, (name, _, ty, end))| InputItem {
            role: InputRole::Gallery,
            from: None,
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
                type_ann,
                kw(Kw::From),
                name("the party that supplies the query"),
                tok(Tok::Semi),
            )),
        ),
        |(start, (name, _, ty, _, from, end))| InputItem {
            role: InputRole::Query,
            from: Some(from),
            name,
            ty,
            span: start.to(end),
        },
    );
    alt((gallery, query)).parse(input)
}

fn type_ann(input: Toks<'_>) -> R<'_, TypeAnn> {
    alt((
        map(iris_type, TypeAnn::Iris),
        map(embedding_type, TypeAnn::Embedding),
        map(kw(Kw::Bit), TypeAnn::Bit),
    ))
    .parse(input)
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

fn embedding_type(input: Toks<'_>) -> R<'_, EmbeddingType> {
    let (input, start) = kw(Kw::Embedding)(input)?;
    let (input, (_, dim, gt, scale)) = cut((
        tok(Tok::Lt),
        operand,
        tok(Tok::Gt),
        opt(preceded(kw(Kw::Scale), cut(operand))),
    ))
    .parse(input)?;
    let end = scale.as_ref().map_or(gt, Operand::span);
    Ok((
        input,
        EmbeddingType {
            dim,
            scale,
            span: start.to(end),
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
    let (input, (value, _, to)) =
        cut((expr, kw(Kw::To), name("the party that learns the result"))).parse(input)?;
    // `to p0, p1` or `to p0 and p1`: a second party.
    if let [sep @ Token {
        tok: Tok::Comma | Tok::Kw(Kw::And),
        ..
    }, next @ Token {
        tok: Tok::Ident(_), ..
    }, ..] = input.0
    {
        return refuse(input, several_parties(&to, sep.span.to(next.span), next));
    }
    let (input, (label, end)) =
        cut((opt(preceded(kw(Kw::As), cut(label))), tok(Tok::Semi))).parse(input)?;
    Ok((
        input,
        RevealItem {
            value,
            to,
            label,
            span: start.to(end),
        },
    ))
}

/// The output's field name after `as`: a name, or a keyword (`as count`, `as ids`), since JSON
/// field names are not reserved.
fn label(input: Toks<'_>) -> R<'_, Ident> {
    match input.0.first() {
        Some(Token {
            tok: Tok::Kw(k),
            span,
        }) => Ok((
            Toks(&input.0[1..]),
            Ident {
                name: k.text().to_string(),
                span: *span,
            },
        )),
        _ => name("the output's field name")(input),
    }
}

/// `quant | or_expr`.
pub fn expr(input: Toks<'_>) -> R<'_, Expr> {
    alt((map(quant, Expr::Quant), or_expr)).parse(input)
}

fn quant(input: Toks<'_>) -> R<'_, QuantExpr> {
    let (input, (op, op_span)) = alt((
        map(kw(Kw::Any), |s| (QuantOp::Any, s)),
        map(kw(Kw::All), |s| (QuantOp::All, s)),
        map(kw(Kw::Count), |s| (QuantOp::Count, s)),
        map(kw(Kw::Ids), |s| (QuantOp::Ids, s)),
    ))
    .parse(input)?;
    let (input, (binders, _, body)) =
        cut((comma_list(binder), tok(Tok::Colon), expr)).parse(input)?;
    let span = op_span.to(body.span());
    Ok((
        input,
        QuantExpr {
            op,
            op_span,
            binders,
            body: Box::new(body),
            span,
        },
    ))
}

/// A left-associative chain `first (op next)*`, committing after each operator.
fn chain<'a>(
    input: Toks<'a>,
    op: Kw,
    next: fn(Toks<'a>) -> R<'a, Expr>,
    build: fn(Box<Expr>, Box<Expr>, Span) -> Expr,
) -> R<'a, Expr> {
    let (mut input, mut acc) = next(input)?;
    loop {
        match kw(op)(input) {
            Ok((rest, _)) => {
                let (rest, rhs) = cut(next).parse(rest)?;
                let span = acc.span().to(rhs.span());
                acc = build(Box::new(acc), Box::new(rhs), span);
                input = rest;
            }
            Err(Err::Error(_)) => return Ok((input, acc)),
            Err(e) => return Err(e),
        }
    }
}

fn or_expr(input: Toks<'_>) -> R<'_, Expr> {
    chain(input, Kw::Or, and_expr, Expr::Or)
}

fn and_expr(input: Toks<'_>) -> R<'_, Expr> {
    chain(input, Kw::And, not_expr, Expr::And)
}

fn not_expr(input: Toks<'_>) -> R<'_, Expr> {
    alt((not_op, primary)).parse(input)
}

fn not_op(input: Toks<'_>) -> R<'_, Expr> {
    let (rest, start) = kw(Kw::Not)(input)?;
    let (rest, inner) = cut(not_expr).parse(rest)?;
    let span = start.to(inner.span());
    Ok((rest, Expr::Not(Box::new(inner), span)))
}

fn primary(input: Toks<'_>) -> R<'_, Expr> {
    alt((
        paren,
        map(kw(Kw::True), |s| Expr::Bool(true, s)),
        map(kw(Kw::False), |s| Expr::Bool(false, s)),
        map(if_expr, Expr::If),
        map(fhd_lt, Expr::FhdLt),
        map(cosine, Expr::Cosine),
        unknown_call,
        map(name("a value"), Expr::Name),
    ))
    .parse(input)
}

/// `( expr )`: the inner expression (its span excludes the parentheses).
fn paren(input: Toks<'_>) -> R<'_, Expr> {
    let (input, _) = tok(Tok::LParen)(input)?;
    let (input, (e, _)) = cut((expr, tok(Tok::RParen))).parse(input)?;
    Ok((input, e))
}

fn if_expr(input: Toks<'_>) -> R<'_, IfExpr> {
    let (input, start) = kw(Kw::If)(input)?;
    let (input, (cond, _, then, _, _, _, els, end)) = cut((
        expr,
        tok(Tok::LBrace),
        expr,
        tok(Tok::RBrace),
        kw(Kw::Else),
        tok(Tok::LBrace),
        expr,
        tok(Tok::RBrace),
    ))
    .parse(input)?;
    Ok((
        input,
        IfExpr {
            cond: Box::new(cond),
            then: Box::new(then),
            els: Box::new(els),
            span: start.to(end),
        },
    ))
}

fn binder(input: Toks<'_>) -> R<'_, Binder> {
    let tuple = map(
        (
            tok(Tok::LParen),
            cut((
                comma_list(name("a variable")),
                tok(Tok::RParen),
                kw(Kw::In),
                source,
            )),
        ),
        |(start, (names, _, _, source))| (start, names, true, source),
    );
    let single = map(
        (name("a variable"), cut(kw(Kw::In)), cut(source)),
        |(n, _, source)| (n.span, vec![n], false, source),
    );
    let (input, (start, names, tuple, source)) = alt((tuple, single)).parse(input)?;
    let span = start.to(source.span());
    Ok((
        input,
        Binder {
            names,
            tuple,
            source,
            span,
        },
    ))
}

fn source(input: Toks<'_>) -> R<'_, Source> {
    alt((
        map(rotations, Source::Rotations),
        zip,
        earlier,
        mirror_alone,
        unknown_call,
        map(name("a gallery or query"), Source::Input),
    ))
    .parse(input)
}

fn zip(input: Toks<'_>) -> R<'_, Source> {
    let (input, start) = kw(Kw::Zip)(input)?;
    let (input, (_, names, end)) = cut((
        tok(Tok::LParen),
        comma_list(name("a gallery")),
        tok(Tok::RParen),
    ))
    .parse(input)?;
    Ok((input, Source::Zip(names, start.to(end))))
}

fn earlier(input: Toks<'_>) -> R<'_, Source> {
    let (input, start) = kw(Kw::Earlier)(input)?;
    let (input, (_, q, end)) =
        cut((tok(Tok::LParen), name("a query"), tok(Tok::RParen))).parse(input)?;
    Ok((input, Source::Earlier(q, start.to(end))))
}

fn rotations(input: Toks<'_>) -> R<'_, Rotations> {
    let (input, start) = kw(Kw::Rotations)(input)?;
    let (input, (_, (mirror, of), _, lo, _, hi, end)) = cut((
        tok(Tok::LParen),
        alt((
            map(
                (
                    kw(Kw::Mirror),
                    tok(Tok::LParen),
                    name("the query to mirror"),
                    tok(Tok::RParen),
                ),
                |(_, _, q, _)| (true, q),
            ),
            map(name("the query to rotate"), |q| (false, q)),
        )),
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
            mirror,
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

/// `name(` where `name` is not a function of the language: refused with the known ones.
/// `mirror(q)` outside `rotations(...)`: refused with what to write (the mirror image is compared
/// through its rotations, as the query is).
fn mirror_alone<'a, T>(input: Toks<'a>) -> R<'a, T> {
    match input.0 {
        [Token {
            tok: Tok::Kw(Kw::Mirror),
            span,
        }, ..] => refuse(
            input,
            Diagnostic::error(
                "`mirror(q)` stands only inside `rotations(...)`".to_string(),
                *span,
            )
            .with_hint(
                "write `any c in rotations(mirror(q), -15..=15): ...`, or `rotations(mirror(q), 0..=0)` for the mirror image as it is",
            ),
        ),
        _ => Err(Err::Error(PErr {
            rest: input.0.len(),
            expected: Vec::new(),
            custom: None,
        })),
    }
}

fn unknown_call<'a, T>(input: Toks<'a>) -> R<'a, T> {
    match input.0 {
        [Token {
            tok: Tok::Ident(n),
            span,
        }, Token {
            tok: Tok::LParen, ..
        }, ..] => refuse(
            input,
            unknown_function(&Ident {
                name: n.clone(),
                span: *span,
            }),
        ),
        // Not a call: adds nothing to what the error lists as expected.
        _ => Err(Err::Error(PErr {
            rest: input.0.len(),
            expected: Vec::new(),
            custom: None,
        })),
    }
}

fn fhd_lt(input: Toks<'_>) -> R<'_, FhdLt> {
    let (input, start) = kw(Kw::Fhd)(input)?;
    let (input, (_, lhs, _, rhs, _)) = cut((
        tok(Tok::LParen),
        name("a query or its rotation"),
        tok(Tok::Comma),
        name("a gallery record"),
        tok(Tok::RParen),
    ))
    .parse(input)?;
    if let Some((op, span)) = super::hints::comparison_at(input.0) {
        if op != "<" {
            return refuse(input, fhd_comparison(op, span));
        }
    }
    let (input, (_, ratio)) = cut((tok(Tok::Lt), operand)).parse(input)?;
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

fn cosine(input: Toks<'_>) -> R<'_, CosineCmp> {
    let (input, start) = kw(Kw::Cosine)(input)?;
    let cmp = alt((map(tok(Tok::Ge), |_| false), map(tok(Tok::Gt), |_| true)));
    let (input, (_, lhs, _, rhs, _)) = cut((
        tok(Tok::LParen),
        name("a query"),
        tok(Tok::Comma),
        name("a gallery record"),
        tok(Tok::RParen),
    ))
    .parse(input)?;
    if let Some((op, span)) = super::hints::comparison_at(input.0) {
        // `=` (a typo of `>=`, say) keeps the generic message.
        if op == "<" || op == "<=" {
            return refuse(input, cosine_comparison(op, span));
        }
    }
    let (input, (strict, tau)) = cut((cmp, bound)).parse(input)?;
    let span = start.to(tau.span);
    Ok((
        input,
        CosineCmp {
            lhs,
            rhs,
            strict,
            tau,
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
        let Expr::Quant(a) = &l.value else {
            panic!("expected any")
        };
        assert_eq!(a.op, QuantOp::Any);
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
        assert!(r.label.is_none());
        let Expr::Quant(q) = &r.value else {
            panic!("expected ids")
        };
        assert_eq!(q.op, QuantOp::Ids);
        assert_eq!(q.binders[0].names[0].name, "d");
        assert_eq!(r.span, Span::new(0, src.len()));
    }

    fn reveal_value(src: &str) -> Expr {
        let m = parse(src).unwrap_or_else(|d| panic!("{}: {src}", d.message));
        let Some(Item::Reveal(r)) = m.items.into_iter().last() else {
            panic!("expected reveal")
        };
        r.value
    }

    /// The expression with explicit parentheses, to check precedence.
    fn show(e: &Expr) -> String {
        match e {
            Expr::Quant(q) => format!("{}[{}]({})", q.op.text(), q.binders.len(), show(&q.body)),
            Expr::Or(a, b, _) => format!("({} or {})", show(a), show(b)),
            Expr::And(a, b, _) => format!("({} and {})", show(a), show(b)),
            Expr::Not(a, _) => format!("not {}", show(a)),
            Expr::Bool(b, _) => b.to_string(),
            Expr::If(i) => format!(
                "if {} {{{}}} else {{{}}}",
                show(&i.cond),
                show(&i.then),
                show(&i.els)
            ),
            Expr::FhdLt(f) => format!("fhd({},{})", f.lhs.name, f.rhs.name),
            Expr::Cosine(c) => format!(
                "cos({},{}){}{}",
                c.lhs.name,
                c.rhs.name,
                if c.strict { ">" } else { ">=" },
                if c.tau.negative { "-" } else { "" }
            ),
            Expr::Name(n) => n.name.clone(),
        }
    }

    #[test]
    fn precedence_or_and_not() {
        let e = reveal_value("reveal a or b and not c or not not d to p0;");
        assert_eq!(show(&e), "((a or (b and not c)) or not not d)");
        let e = reveal_value("reveal (a or b) and c to p0;");
        assert_eq!(show(&e), "((a or b) and c)");
        let e = reveal_value("reveal any d in db: x and y or true to p0;");
        assert_eq!(show(&e), "any[1](((x and y) or true))");
        let e = reveal_value("reveal if t { a and b } else { false } or c to p0;");
        assert_eq!(show(&e), "(if t {(a and b)} else {false} or c)");
    }

    #[test]
    fn parses_every_test_and_binder_form() {
        let src = "reveal ids (l, r) in zip(left, right): (all c in rotations(ql, -1..=1): \
            fhd(c, l) < 0.3) and cosine(v, r) > -0.25 to p1 as both;";
        let m = parse(src).unwrap();
        let Item::Reveal(r) = &m.items[0] else {
            panic!()
        };
        assert_eq!(r.label.as_ref().unwrap().name, "both");
        let Expr::Quant(q) = &r.value else { panic!() };
        let b = &q.binders[0];
        assert!(b.tuple);
        assert_eq!(b.names.len(), 2);
        assert!(matches!(&b.source, Source::Zip(g, _) if g.len() == 2));
        assert_eq!(&src[b.span.start..b.span.end], "(l, r) in zip(left, right)");
        assert_eq!(show(&q.body), "(all[1](fhd(c,l)) and cos(v,r)>-)");
        let e = reveal_value("reveal count e in earlier(q): cosine(v, e) >= 0.5 to p0;");
        let Expr::Quant(q) = &e else { panic!() };
        assert!(matches!(&q.binders[0].source, Source::Earlier(n, _) if n.name == "q"));
        assert_eq!(show(&e), "count[1](cos(v,e)>=)");
    }

    #[test]
    fn parses_every_input_type() {
        let src = "gallery a: embedding<192> scale 8;\nquery b: embedding<16> from p0;\n\
                   query t: bit from p0;\ngallery g: iris<256> secret mask;";
        let m = parse(src).unwrap();
        let tys: Vec<&TypeAnn> = m
            .items
            .iter()
            .map(|i| match i {
                Item::Input(i) => &i.ty,
                _ => panic!(),
            })
            .collect();
        assert!(matches!(tys[0], TypeAnn::Embedding(e) if e.scale.is_some()));
        assert!(matches!(tys[1], TypeAnn::Embedding(e) if e.scale.is_none()));
        assert!(matches!(tys[2], TypeAnn::Bit(_)));
        assert!(matches!(tys[3], TypeAnn::Iris(i) if i.mask == MaskAnn::Secret));
        assert_eq!(
            &src[tys[0].span().start..tys[0].span().end],
            "embedding<192> scale 8"
        );
    }

    #[test]
    fn quantifier_after_and_gets_a_parenthesis_hint() {
        let d = parse("reveal x and any d in db: y to p0;").unwrap_err();
        assert!(d.message.ends_with("found `any`"), "{}", d.message);
        assert!(d.hint.unwrap().contains("parentheses"));
        let d = parse("reveal if x { y } { z } to p0;").unwrap_err();
        assert_eq!(d.message, "expected `else`, found `{`");
        let d = parse("reveal cosine(v, s) < 0.3 to p0;").unwrap_err();
        assert_eq!(d.message, "expected one of `>=` or `>`, found `<`");
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
