//! TRANSITIONAL: the issue-2 program model, kept only while the later stages move to
//! [`super::program`]. [`from_v2`] converts the subset of the v2 language these stages lower:
//! public-mask iris inputs, and reveals that are `ids d in db: <one fhd test, possibly over the
//! query's rotations>` or one bit `any d in db, c in rotations(q, ..): fhd(c, d) < r`.

use super::program::{self as v2, BinderKind, BoolExpr, InputType, Quantifier, Records};
pub use super::program::{ConstDecl, ConstValue, InputRole, MaskKind, Ratio};
use crate::syntax::{Diagnostic, Span};

/// A declared input: `gallery db: iris<12800> public mask;` or `query q: ... from p0;`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Input {
    pub name: String,
    pub role: InputRole,
    /// Bits per iris code (`l` in the papers); a multiple of 64 (16 rows x columns x 4 bits).
    pub code_bits: u32,
    pub mask: MaskKind,
    #[serde(skip)]
    pub span: Span,
}

/// One thresholded matching decision, per query and gallery record:
/// "some rotation `s` in `rot_lo..=rot_hi` of the query has `fhd(rot(q, s), d) < ratio`".
#[derive(Debug, Clone, serde::Serialize)]
pub struct Decision {
    /// Index into [`Program::inputs`] of the query.
    pub query: usize,
    /// Index into [`Program::inputs`] of the gallery.
    pub gallery: usize,
    /// Rotations of the query, inclusive; `(0, 0)` when the program does not rotate.
    pub rot_lo: i32,
    pub rot_hi: i32,
    /// The match ratio: a pair matches iff `hd < ratio * ml` (strict; `ml = 0` never matches).
    pub ratio: Ratio,
    /// The span of the `fhd(..) < ..` test, for diagnostics and `explain`.
    #[serde(skip)]
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RevealShape {
    /// One bit per query: the OR over all records and rotations.
    AnyBit,
    /// The ids of the matching records: one opened bit per (query, record), as the deployed system does.
    MatchingIds,
}

/// `reveal <value> to <party>;`
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reveal {
    pub decision: Decision,
    pub shape: RevealShape,
    /// The output party, 0..3.
    pub to: usize,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct Program {
    /// The program's name: the file stem.
    pub name: String,
    /// The three computing parties' names, in `--party` order.
    pub parties: [String; 3],
    pub consts: Vec<ConstDecl>,
    pub inputs: Vec<Input>,
    /// At least one.
    pub reveals: Vec<Reveal>,
}

fn not_yet(what: &str, span: Span, hint: &str) -> Diagnostic {
    Diagnostic::error(format!("this stage does not lower {what} yet"), span)
        .with_label("checked, but not compiled yet")
        .with_hint(hint.to_string())
}

const SUBSET_HINT: &str = "the code generator handles `reveal ids d in db: any c in \
rotations(q, -15..=15): fhd(c, d) < 0.345 to p0;` (or `fhd(q, d)`) and the bit \
`reveal any d in db, c in rotations(q, -15..=15): fhd(c, d) < 0.345 to p0;`";

/// The issue-2 model of `p`, or a diagnostic naming the first construct it cannot express.
pub fn from_v2(p: &v2::Program) -> Result<Program, Diagnostic> {
    let mut inputs = Vec::new();
    for i in &p.inputs {
        let code_bits =
            match i.ty {
                InputType::Iris {
                    code_bits,
                    mask: MaskKind::Public,
                } => code_bits,
                InputType::Iris { .. } => return Err(not_yet(
                    "secret masks",
                    i.span,
                    "declare `public mask`: the parties then see the masks in plain (Section 4)",
                )),
                InputType::Embedding { .. } => {
                    return Err(not_yet("embedding inputs", i.span, SUBSET_HINT))
                }
                InputType::Bit => return Err(not_yet("bit inputs", i.span, SUBSET_HINT)),
            };
        inputs.push(Input {
            name: i.name.clone(),
            role: i.role,
            code_bits,
            mask: MaskKind::Public,
            span: i.span,
        });
    }
    let mut reveals = Vec::new();
    for r in &p.reveals {
        let shape = match r.shape {
            v2::RevealShape::Bit => RevealShape::AnyBit,
            v2::RevealShape::Ids => RevealShape::MatchingIds,
            v2::RevealShape::Count => return Err(not_yet("`count` reveals", r.span, SUBSET_HINT)),
        };
        reveals.push(Reveal {
            decision: decision(p, r)?,
            shape,
            to: r.to,
            span: r.span,
        });
    }
    Ok(Program {
        name: p.name.clone(),
        parties: p.parties.clone(),
        consts: p.consts.clone(),
        inputs,
        reveals,
    })
}

/// The one `fhd` test of `r` under `any` binders (and, for `ids`, the reveal's record binder).
fn decision(p: &v2::Program, r: &v2::Reveal) -> Result<Decision, Diagnostic> {
    let mut binders: Vec<v2::BinderId> = r.records.into_iter().collect();
    let mut e = &r.value;
    while let BoolExpr::Quant {
        op: Quantifier::Any,
        binders: bs,
        body,
    } = e
    {
        binders.extend(bs);
        e = body;
    }
    let BoolExpr::Fhd(t) = e else {
        return Err(not_yet(describe(e), r.span, SUBSET_HINT));
    };
    let mut gallery = None;
    let mut rotation = None;
    for &b in &binders {
        match &p.binders[b].kind {
            BinderKind::Records(Records::Galleries(g)) if g.len() == 1 && gallery.is_none() => {
                gallery = Some((b, g[0]))
            }
            BinderKind::Records(Records::Galleries(g)) if g.len() > 1 => {
                return Err(not_yet("`zip`", p.binders[b].span, SUBSET_HINT))
            }
            BinderKind::Records(Records::Earlier(_)) => {
                return Err(not_yet("`earlier`", p.binders[b].span, SUBSET_HINT))
            }
            BinderKind::Rotations { query, lo, hi } if rotation.is_none() => {
                rotation = Some((b, *query, *lo, *hi))
            }
            _ => {
                return Err(not_yet(
                    "several binders of one kind",
                    p.binders[b].span,
                    SUBSET_HINT,
                ))
            }
        }
    }
    let Some((record_binder, gallery)) = gallery else {
        return Err(not_yet(
            "a reveal without a gallery record",
            r.span,
            SUBSET_HINT,
        ));
    };
    if t.record
        != (v2::Operand::Record {
            binder: record_binder,
            field: 0,
        })
    {
        return Err(not_yet("this comparison", t.span, SUBSET_HINT));
    }
    let (query, rot_lo, rot_hi) = match (t.query, rotation) {
        (v2::Operand::Query(q), None) => (q, 0, 0),
        (v2::Operand::Rotated(c), Some((b, q, lo, hi))) if c == b => (q, lo, hi),
        _ => return Err(not_yet("this comparison", t.span, SUBSET_HINT)),
    };
    Ok(Decision {
        query,
        gallery,
        rot_lo,
        rot_hi,
        ratio: t.ratio,
        span: t.span,
    })
}

fn describe(e: &BoolExpr) -> &'static str {
    match e {
        BoolExpr::Const(_) => "`true`/`false`",
        BoolExpr::Bit(_) => "bit inputs",
        BoolExpr::Fhd(_) => "this comparison",
        BoolExpr::Cosine(_) => "`cosine`",
        BoolExpr::Not(_) => "`not`",
        BoolExpr::And(..) => "`and`",
        BoolExpr::Or(..) => "`or`",
        BoolExpr::If { .. } => "`if`",
        BoolExpr::Quant {
            op: Quantifier::All,
            ..
        } => "`all`",
        BoolExpr::Quant { .. } => "nested quantifiers",
    }
}
