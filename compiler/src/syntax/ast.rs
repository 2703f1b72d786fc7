//! The syntax tree of a `.irs` program, as written; every node carries its [`Span`].
//!
//! Names are not resolved here (that is `sema`), and numbers are kept as their text so that
//! ratios become exact fractions and oversized integers become diagnostics, not panics.

use super::Span;

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

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputKind {
    /// `gallery db: ...;`: secret-shared among the parties.
    Gallery,
    /// `query q: ... from p0;`: supplied by one party.
    Query { from: Ident },
}

/// `gallery db: iris<CODE_BITS> public mask;` or `query q: iris<...> public mask from p0;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputItem {
    pub kind: InputKind,
    pub name: Ident,
    pub ty: IrisType,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskAnn {
    Public,
    Secret,
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

/// `let NAME = EXPR;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LetItem {
    pub name: Ident,
    pub value: Expr,
    pub span: Span,
}

/// `reveal EXPR to PARTY;` or `reveal ids d in db: EXPR to PARTY;`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevealItem {
    pub body: RevealBody,
    pub to: Ident,
    pub span: Span,
}

#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RevealBody {
    /// One opened bit per query.
    Value(Expr),
    /// The ids of the records `binder` ranges over for which `body` holds.
    Ids { binder: Binder, body: Expr },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// `any b1, b2: body`: true iff `body` holds for some choice of the binders.
    Any(AnyExpr),
    /// `fhd(x, y) < RATIO`
    FhdLt(FhdLt),
    /// A `let` name.
    Name(Ident),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Any(a) => a.span,
            Expr::FhdLt(f) => f.span,
            Expr::Name(n) => n.span,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnyExpr {
    pub binders: Vec<Binder>,
    pub body: Box<Expr>,
    pub span: Span,
}

/// `d in db` or `c in rotations(q, -15..=15)`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binder {
    pub name: Ident,
    pub source: Source,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The records of a gallery (or the codes of a query).
    Input(Ident),
    Rotations(Rotations),
}

/// `rotations(q, lo..=hi)`: the query rotated by every column offset in `lo..=hi`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotations {
    pub of: Ident,
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
