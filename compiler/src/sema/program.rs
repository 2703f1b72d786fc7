//! The typed program: what the user's `.irs` means, independent of how it is computed.
//!
//! This is the contract between the front end (`syntax` + `sema`) and everything after it.
//! A program is a set of inputs and a list of reveals; each reveal is a boolean expression over
//! the current query (every query of the batch is answered in turn) and, for `ids`/`count`, over
//! the records of a record binder. Binders (`d in db`, `(l, r) in zip(left, right)`,
//! `e in earlier(q)`, `c in rotations(q, lo..=hi)`) live in one table, [`Program::binders`], and
//! expressions name them by index; `let`s are inlined by `sema`.

use crate::syntax::Span;
use irisc_runtime::vocab::InputRole;

/// An exact non-negative rational, e.g. a match ratio written `0.345` is `345/1000` (reduced:
/// `69/200`). Kept exact because thresholds must be computed without rounding error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Ratio {
    pub num: u64,
    pub den: u64,
}

/// An exact signed rational (cosine thresholds may be negative).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SignedRatio {
    pub negative: bool,
    /// `|value|`.
    pub abs: Ratio,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MaskKind {
    /// Masks are known to all three parties in plain (Section 4 of the Large-Scale MPC paper).
    Public,
    /// Masks are secret-shared like the codes (Section 5, Algorithm 3).
    Secret,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum InputType {
    /// `iris<BITS> public mask` / `iris<BITS> secret mask`: `BITS` (`l`) a multiple of 64.
    Iris { code_bits: u32, mask: MaskKind },
    /// `embedding<DIM> scale S`: fixed-point vectors, each component `round(v * 2^S)` with
    /// `v in [-1, 1]`.
    Embedding { dim: u32, scale_bits: u32 },
    /// `bit`: one secret bit (per query, or per record).
    Bit,
}

/// A declared input: `gallery db: iris<12800> public mask;` or `query q: ... from p0;`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Input {
    pub name: String,
    /// A gallery (secret-shared among the three parties, one record per enrolled subject) or a
    /// query (one value per query of the batch, supplied and secret-shared by `owner`).
    pub role: InputRole,
    /// The party that supplies a query (`from p0`: 0); `None` for a gallery.
    pub owner: Option<usize>,
    pub ty: InputType,
    #[serde(skip)]
    pub span: Span,
}

/// Index into [`Program::inputs`].
pub type InputId = usize;
/// Index into [`Program::binders`].
pub type BinderId = usize;

/// The records a record binder ranges over.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Records {
    /// One gallery (`d in db`), or several index-aligned galleries (`(l, r) in zip(left, right)`):
    /// record `i` has field `f` from gallery `inputs[f]`.
    Galleries(Vec<InputId>),
    /// The queries before the current one in the batch (`e in earlier(q)`): intra-batch
    /// uniqueness. One field: the query input.
    Earlier(InputId),
}

impl Records {
    /// The input of field `f`.
    pub fn field_input(&self, f: usize) -> Option<InputId> {
        match self {
            Records::Galleries(g) => g.get(f).copied(),
            Records::Earlier(q) => (f == 0).then_some(*q),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BinderKind {
    /// Ranges over records; the names bind the fields, in order.
    Records(Records),
    /// `c in rotations(q, lo..=hi)`: the current query of input `query`, rotated by every column
    /// offset in `lo..=hi` (Section 3 of the Large-Scale MPC paper; 31 rotations deployed).
    /// `mirror`: `rotations(mirror(q), ...)`, the rotations of the query's mirror image (columns
    /// in reverse order, imaginary code bits flipped: `IrisCode::mirror`), the deployed
    /// system's mirror-attack check.
    Rotations {
        query: InputId,
        lo: i32,
        hi: i32,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        mirror: bool,
    },
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Binder {
    /// The names as written: one per field for records, one for rotations.
    pub names: Vec<String>,
    pub kind: BinderKind,
    #[serde(skip)]
    pub span: Span,
}

impl Binder {
    /// Number of rotations, for a rotations binder.
    pub fn rotation_count(&self) -> Option<u32> {
        match self.kind {
            BinderKind::Rotations { lo, hi, .. } => Some((hi - lo + 1) as u32),
            BinderKind::Records(_) => None,
        }
    }
}

/// A code or vector operand of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operand {
    /// The current query of this input, unrotated.
    Query(InputId),
    /// The current query rotated by a rotations binder.
    Rotated(BinderId),
    /// Field `field` of the current record of a record binder.
    Record { binder: BinderId, field: usize },
}

/// `fhd(x, y) < ratio`: the fractional Hamming distance of Algorithm 1.
/// With public masks exact (`hd < ratio * ml`, `ml = 0` never matches); with secret masks decided
/// by `b*(ml - 2hd) > a*ml` with the `(a, b)` the compiler chooses and reports.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct FhdTest {
    /// The query side (a query or its rotation).
    pub query: Operand,
    /// The record side (a gallery record or an earlier query).
    pub record: Operand,
    pub ratio: Ratio,
    pub mask: MaskKind,
    pub code_bits: u32,
    #[serde(skip)]
    pub span: Span,
}

/// `cosine(x, y) >= tau` (or `>` when `strict`), decided without square roots (paper 002,
/// Section 2.4): with `p = <x,y>`, for `tau >= 0`: `p >= 0 and den^2 p^2 >= num^2 <x,x><y,y>`;
/// for `tau < 0`: `p >= 0 or num^2 <x,x><y,y> >= den^2 p^2` (strict comparisons with `>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
pub struct CosineTest {
    pub query: Operand,
    pub record: Operand,
    pub tau: SignedRatio,
    pub strict: bool,
    pub dim: u32,
    pub scale_bits: u32,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantifier {
    /// OR over the binders (false when empty).
    Any,
    /// AND over the binders (true when empty).
    All,
}

/// A secret bit, per query and per combination of the free binders of the expression.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BoolExpr {
    Const(bool),
    /// A `bit` input: the current query's bit (query input) or the current record's bit
    /// (`Operand::Record` of a gallery of bits).
    Bit(Operand),
    Fhd(FhdTest),
    Cosine(CosineTest),
    Not(Box<BoolExpr>),
    And(Box<BoolExpr>, Box<BoolExpr>),
    Or(Box<BoolExpr>, Box<BoolExpr>),
    /// `if cond { then } else { els }`: all three evaluated, a multiplexer selects.
    If {
        cond: Box<BoolExpr>,
        then: Box<BoolExpr>,
        els: Box<BoolExpr>,
    },
    /// `any b1, b2: body` / `all ...`: binds the binders for `body` and reduces over them.
    Quant {
        op: Quantifier,
        binders: Vec<BinderId>,
        body: Box<BoolExpr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RevealShape {
    /// One bit per query.
    Bit,
    /// The ids of the records for which the body holds: one opened bit per (query, record), as
    /// the deployed system does.
    Ids,
    /// How many records satisfy the body: the bits are injected into a ring and summed in
    /// secret (Algorithm 17), only the count is opened.
    Count,
}

/// `reveal <value> to <party> [as <label>];`
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reveal {
    pub shape: RevealShape,
    /// For `Ids` and `Count`: the record binder the body ranges over (its only free binder).
    pub records: Option<BinderId>,
    /// Closed (no free binders) for `Bit`; free in `records` only for `Ids` and `Count`.
    pub value: BoolExpr,
    /// The output party, 0..3.
    pub to: usize,
    /// The JSON field the output party prints it under.
    pub label: String,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ConstDecl {
    pub name: String,
    pub value: ConstValue,
}

#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstValue {
    Int(i64),
    Ratio(Ratio),
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Program {
    /// The program's name: the file stem.
    pub name: String,
    /// The three computing parties' names, in `--party` order.
    pub parties: [String; 3],
    pub consts: Vec<ConstDecl>,
    pub inputs: Vec<Input>,
    pub binders: Vec<Binder>,
    /// At least one.
    pub reveals: Vec<Reveal>,
}

impl BoolExpr {
    /// Calls `f` on every node, parents before children.
    pub fn walk<'a>(&'a self, f: &mut impl FnMut(&'a BoolExpr)) {
        f(self);
        match self {
            BoolExpr::Const(_) | BoolExpr::Bit(_) | BoolExpr::Fhd(_) | BoolExpr::Cosine(_) => {}
            BoolExpr::Not(x) => x.walk(f),
            BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
                a.walk(f);
                b.walk(f);
            }
            BoolExpr::If { cond, then, els } => {
                cond.walk(f);
                then.walk(f);
                els.walk(f);
            }
            BoolExpr::Quant { body, .. } => body.walk(f),
        }
    }

    /// The binders free in this expression, sorted.
    pub fn free_binders(&self) -> Vec<BinderId> {
        fn go(e: &BoolExpr, out: &mut Vec<BinderId>) {
            let operand = |o: &Operand, out: &mut Vec<BinderId>| match *o {
                Operand::Query(_) => {}
                Operand::Rotated(b) | Operand::Record { binder: b, .. } => out.push(b),
            };
            match e {
                BoolExpr::Const(_) => {}
                BoolExpr::Bit(o) => operand(o, out),
                BoolExpr::Fhd(t) => {
                    operand(&t.query, out);
                    operand(&t.record, out);
                }
                BoolExpr::Cosine(t) => {
                    operand(&t.query, out);
                    operand(&t.record, out);
                }
                BoolExpr::Not(x) => go(x, out),
                BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
                    go(a, out);
                    go(b, out);
                }
                BoolExpr::If { cond, then, els } => {
                    go(cond, out);
                    go(then, out);
                    go(els, out);
                }
                BoolExpr::Quant { binders, body, .. } => {
                    let mut inner = Vec::new();
                    go(body, &mut inner);
                    out.extend(inner.into_iter().filter(|b| !binders.contains(b)));
                }
            }
        }
        let mut out = Vec::new();
        go(self, &mut out);
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Every comparison (fhd or cosine test) in evaluation order.
    pub fn tests(&self) -> Vec<&BoolExpr> {
        let mut out = Vec::new();
        self.walk(&mut |e| {
            if matches!(e, BoolExpr::Fhd(_) | BoolExpr::Cosine(_)) {
                out.push(e)
            }
        });
        out
    }
}

impl Program {
    /// The inputs that form the query batch (index-aligned, same count).
    pub fn query_inputs(&self) -> impl Iterator<Item = (InputId, &Input)> {
        self.inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| matches!(i.role, InputRole::Query))
    }

    /// Galleries that some binder zips together (the runtime checks they have equal ids).
    pub fn zips(&self) -> Vec<Vec<InputId>> {
        let mut out: Vec<Vec<InputId>> = Vec::new();
        for b in &self.binders {
            if let BinderKind::Records(Records::Galleries(g)) = &b.kind {
                if g.len() > 1 && !out.contains(g) {
                    out.push(g.clone());
                }
            }
        }
        out
    }
}
