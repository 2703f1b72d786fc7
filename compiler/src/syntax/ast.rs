//! The syntax tree of a `.irs` program, as written; every node carries its [`Span`].
//!
//! Names are not resolved here (that is `sema`), and numbers are kept as their text so that
//! ratios become exact fractions and oversized integers become diagnostics, not panics.

use super::Span;
use irisc_runtime::vocab::InputRole;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LitKind {
    /// `12800`
    Int(String),
    /// `0.345`
    Decimal(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub kind: LitKind,
    pub span: Span,
}

/// A number written in place or through a `const` name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operand {
    Lit(Literal),
    Name(Ident),
}

impl Operand {
    pub fn span(&self) -> Span {
        match self {
            Operand::Lit(l) => l.span,
            Operand::Name(n) => n.span,
        }
    }
}

/// A whole `.irs` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Module {
    pub items: Vec<Item>,
    pub span: Span,
}

// Few nodes per program: boxing the large variants would only add noise.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    Const(ConstItem),
    Parties(PartiesItem),
    Input(InputItem),
    Let(LetItem),
    Reveal(RevealItem),
}

impl Item {
    pub fn span(&self) -> Span {
        match self {
            Item::Const(i) => i.span,
            Item::Parties(i) => i.span,
            Item::Input(i) => i.span,
            Item::Let(i) => i.span,
            Item::Reveal(i) => i.span,
        }
    }
}

/// `const NAME = 12800;` or `const NAME = 0.345;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstItem {
    pub name: Ident,
    pub value: Literal,
    pub span: Span,
}

/// `parties p0, p1, p2;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartiesItem {
    pub names: Vec<Ident>,
    pub span: Span,
}

/// `gallery db: iris<CODE_BITS> public mask;` or `query q: iris<...> public mask from p0;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputItem {
    /// `gallery` (secret-shared among the parties) or `query` (supplied by one party).
    pub role: InputRole,
    /// `from p0`: the party that supplies a query; `None` for a gallery.
    pub from: Option<Ident>,
    pub name: Ident,
    pub ty: TypeAnn,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskAnn {
    Public,
    Secret,
}

/// The type of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypeAnn {
    Iris(IrisType),
    Embedding(EmbeddingType),
    /// `bit`: one secret bit.
    Bit(Span),
}

impl TypeAnn {
    pub fn span(&self) -> Span {
        match self {
            TypeAnn::Iris(t) => t.span,
            TypeAnn::Embedding(t) => t.span,
            TypeAnn::Bit(s) => *s,
        }
    }
}

/// `iris<BITS> public mask`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IrisType {
    pub bits: Operand,
    pub mask: MaskAnn,
    /// The span of `public mask` / `secret mask`.
    pub mask_span: Span,
    pub span: Span,
}

/// `embedding<DIM>` or `embedding<DIM> scale S`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmbeddingType {
    pub dim: Operand,
    pub scale: Option<Operand>,
    pub span: Span,
}

/// `let NAME = EXPR;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LetItem {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `reveal EXPR to PARTY [as NAME];`, e.g. `reveal ids d in db: fhd(q, d) < 0.345 to p0;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevealItem {
    pub value: Expr,
    pub to: Ident,
    /// `as NAME`: the JSON field the output is printed under.
    pub label: Option<Ident>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantOp {
    /// `any`: true iff the body holds for some choice of the binders.
    Any,
    /// `all`: true iff the body holds for every choice.
    All,
    /// `count`: how many records satisfy the body (only as the whole revealed value).
    Count,
    /// `ids`: which records satisfy the body (only as the whole revealed value).
    Ids,
}

impl QuantOp {
    pub fn text(self) -> &'static str {
        match self {
            QuantOp::Any => "any",
            QuantOp::All => "all",
            QuantOp::Count => "count",
            QuantOp::Ids => "ids",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// `any|all|count|ids b1, b2: body`
    Quant(QuantExpr),
    Or(Box<Expr>, Box<Expr>, Span),
    And(Box<Expr>, Box<Expr>, Span),
    Not(Box<Expr>, Span),
    /// `true` / `false`
    Bool(bool, Span),
    /// `if c { x } else { y }`
    If(IfExpr),
    /// `fhd(x, y) < RATIO`
    FhdLt(FhdLt),
    /// `cosine(x, y) >= TAU` / `> TAU`
    Cosine(CosineCmp),
    /// A `let` name or a `bit` input (or a binder of bits).
    Name(Ident),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Quant(a) => a.span,
            Expr::Or(_, _, s) | Expr::And(_, _, s) | Expr::Not(_, s) | Expr::Bool(_, s) => *s,
            Expr::If(i) => i.span,
            Expr::FhdLt(f) => f.span,
            Expr::Cosine(c) => c.span,
            Expr::Name(n) => n.span,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantExpr {
    pub op: QuantOp,
    /// The span of the keyword.
    pub op_span: Span,
    pub binders: Vec<Binder>,
    pub body: Box<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IfExpr {
    pub cond: Box<Expr>,
    pub then: Box<Expr>,
    pub els: Box<Expr>,
    pub span: Span,
}

/// `d in db`, `(l, r) in zip(left, right)`, `e in earlier(q)` or `c in rotations(q, -15..=15)`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binder {
    /// One name, or one per zipped gallery.
    pub names: Vec<Ident>,
    /// Whether the names were written as a tuple `(a, b)`.
    pub tuple: bool,
    pub source: Source,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The records of a gallery (or the codes of a query).
    Input(Ident),
    /// `zip(g1, g2, ...)`: index-aligned galleries.
    Zip(Vec<Ident>, Span),
    /// `earlier(q)`: the queries before the current one in the batch.
    Earlier(Ident, Span),
    Rotations(Rotations),
}

impl Source {
    pub fn span(&self) -> Span {
        match self {
            Source::Input(i) => i.span,
            Source::Zip(_, s) | Source::Earlier(_, s) => *s,
            Source::Rotations(r) => r.span,
        }
    }
}

/// `rotations(q, lo..=hi)`: the query rotated by every column offset in `lo..=hi`;
/// `rotations(mirror(q), lo..=hi)`: the same of the query's mirror image (the mirror-attack
/// check: a capture of a mirrored eye matches its enrolment only this way).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotations {
    pub of: Ident,
    /// `mirror(q)` was written.
    pub mirror: bool,
    pub lo: Bound,
    pub hi: Bound,
    pub span: Span,
}

/// A rotation bound: an optional `-` and an integer or const name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bound {
    pub negative: bool,
    pub value: Operand,
    pub span: Span,
}

/// `fhd(x, y) < RATIO`: the fractional Hamming distance `hd / ml` of Algorithm 1 is below RATIO.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FhdLt {
    pub lhs: Ident,
    pub rhs: Ident,
    pub ratio: Operand,
    pub span: Span,
}

/// `cosine(x, y) >= TAU`, `> TAU`, with TAU optionally negated (`>= -0.2`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CosineCmp {
    pub lhs: Ident,
    pub rhs: Ident,
    /// `>` rather than `>=`.
    pub strict: bool,
    pub tau: Bound,
    pub span: Span,
}
