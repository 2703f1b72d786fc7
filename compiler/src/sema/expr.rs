//! Expressions: resolves names against the globals and the binders in scope, checks operand
//! types and the binder rules, and builds [`BoolExpr`] trees (with `let`s inlined).
//!
//! Binder rules:
//! - every binder a quantifier lists must be used in its body (names starting with `_` excepted);
//! - `and`/`or`/`if` may combine values that range over the same free binders, or closed values:
//!   a test per (record, rotation) cannot be combined with a test per record, because the
//!   rotation would have no quantifier to reduce it;
//! - `ids`/`count` only as the whole revealed value, over exactly one record binder;
//! - a `let` is closed: it cannot use the binders around the place where it is used.

use super::consts::{operand_value, ratio_operand};
use super::inputs::{describe, type_text};
use super::names::SymbolKind;
use super::program::*;
use super::resolver::{Resolver, RevealValue};
use crate::syntax::ast::{self, Ident, QuantOp};
use crate::syntax::{Diagnostic, Span};
use irisc_runtime::vocab::InputRole;

/// Whether an operand of a test is the query side or the record side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Query,
    Record,
}

/// A test operand with the input that gives its type.
type Typed<'a> = (Operand, &'a Input);

impl<'a, 'm> Resolver<'a, 'm> {
    /// The value of `reveal e to ...`: `ids`/`count` at the top (directly or through `let`s),
    /// otherwise a closed bit.
    pub fn reveal(&mut self, e: &ast::Expr) -> Result<RevealValue, Diagnostic> {
        self.scope.clear();
        self.barrier = 0;
        self.expanding.clear();
        let mut v = self.reveal_value(e)?;
        if let ast::Expr::Name(n) = e {
            if matches!(
                self.globals.get(&n.name).map(|s| s.kind),
                Some(SymbolKind::Let(_))
            ) {
                v.let_name = Some(n.name.clone());
            }
        }
        Ok(v)
    }

    fn reveal_value(&mut self, e: &ast::Expr) -> Result<RevealValue, Diagnostic> {
        match e {
            ast::Expr::Quant(q) if matches!(q.op, QuantOp::Ids | QuantOp::Count) => {
                let (records, value) = self.over_records(q)?;
                let shape = if q.op == QuantOp::Ids {
                    RevealShape::Ids
                } else {
                    RevealShape::Count
                };
                Ok(RevealValue {
                    shape,
                    records: Some(records),
                    value,
                    let_name: None,
                })
            }
            ast::Expr::Name(n) => match self.globals.get(&n.name).map(|s| (s.kind, s.span)) {
                Some((SymbolKind::Let(item), span)) => {
                    self.enter_let(n, span)?;
                    let v = self.reveal_value(&item.value);
                    self.expanding.pop();
                    v
                }
                _ => self.bit(e),
            },
            _ => self.bit(e),
        }
    }

    fn bit(&mut self, e: &ast::Expr) -> Result<RevealValue, Diagnostic> {
        Ok(RevealValue {
            shape: RevealShape::Bit,
            records: None,
            value: self.expr(e)?,
            let_name: None,
        })
    }

    /// Cycle check before expanding `let` `n` (declared at `span`).
    fn enter_let(&mut self, n: &Ident, span: Span) -> Result<(), Diagnostic> {
        if self.expanding.contains(&n.name) {
            return Err(Diagnostic::error(
                format!("`{}` is defined in terms of itself", n.name),
                n.span,
            )
            .with_label("refers back to its own definition")
            .with_secondary(span, "defined here")
            .with_hint("write the condition out in one of the `let`s"));
        }
        self.expanding.push(n.name.clone());
        Ok(())
    }

    /// `ids b: body` / `count b: body`: exactly one record binder, used by the body.
    fn over_records(&mut self, q: &ast::QuantExpr) -> Result<(BinderId, BoolExpr), Diagnostic> {
        let what = q.op.text();
        if let Some(extra) = q.binders.get(1) {
            return Err(Diagnostic::error(
                format!("`{what}` ranges over exactly one set of records"),
                extra.span,
            )
            .with_label("a second binder")
            .with_hint(format!(
                "bind the rest in an inner `any`, e.g. `{what} d in db: any c in rotations(q, -15..=15): fhd(c, d) < 0.345`"
            )));
        }
        let mark = self.scope.len();
        let b = self.bind(&q.binders[0])?;
        if let BinderKind::Rotations { .. } = self.binders[b].kind {
            return Err(Diagnostic::error(
                format!("`{what}` must range over records, not rotations"),
                q.binders[0].span,
            )
            .with_label("rotations of a query")
            .with_hint(format!(
                "range over a gallery, `zip(..)` or `earlier(q)`, and put the rotations in an inner `any`: `{what} d in db: any c in rotations(q, -15..=15): fhd(c, d) < 0.345`"
            )));
        }
        let body = self.expr(&q.body)?;
        self.check_used(mark, q.body.span())?;
        self.scope.truncate(mark);
        Ok((b, body))
    }

    pub fn expr(&mut self, e: &ast::Expr) -> Result<BoolExpr, Diagnostic> {
        match e {
            ast::Expr::Quant(q) => self.quant(q),
            ast::Expr::Or(a, b, _) | ast::Expr::And(a, b, _) => {
                let x = self.expr(a)?;
                let y = self.expr(b)?;
                let op = if matches!(e, ast::Expr::Or(..)) {
                    "or"
                } else {
                    "and"
                };
                self.same_binders(&[(&x, a.span()), (&y, b.span())], op)?;
                let (x, y) = (Box::new(x), Box::new(y));
                Ok(if op == "or" {
                    BoolExpr::Or(x, y)
                } else {
                    BoolExpr::And(x, y)
                })
            }
            ast::Expr::Not(a, _) => Ok(BoolExpr::Not(Box::new(self.expr(a)?))),
            ast::Expr::Bool(b, _) => Ok(BoolExpr::Const(*b)),
            ast::Expr::If(i) => {
                let cond = self.expr(&i.cond)?;
                let then = self.expr(&i.then)?;
                let els = self.expr(&i.els)?;
                self.same_binders(
                    &[
                        (&cond, i.cond.span()),
                        (&then, i.then.span()),
                        (&els, i.els.span()),
                    ],
                    "if",
                )?;
                Ok(BoolExpr::If {
                    cond: Box::new(cond),
                    then: Box::new(then),
                    els: Box::new(els),
                })
            }
            ast::Expr::FhdLt(t) => self.fhd(t),
            ast::Expr::Cosine(t) => self.cosine(t),
            ast::Expr::Name(n) => self.name_value(n),
        }
    }

    fn quant(&mut self, q: &ast::QuantExpr) -> Result<BoolExpr, Diagnostic> {
        let op = match q.op {
            QuantOp::Any => Quantifier::Any,
            QuantOp::All => Quantifier::All,
            QuantOp::Ids | QuantOp::Count => {
                let what = q.op.text();
                return Err(Diagnostic::error(
                    format!("`{what}` is only allowed as the whole revealed value"),
                    q.op_span,
                )
                .with_label(if q.op == QuantOp::Ids {
                    "a list of records, not a bit"
                } else {
                    "a number, not a bit"
                })
                .with_hint(format!(
                    "reveal it on its own (`reveal {what} d in db: ... to p0;`), or use `any`/`all` for a bit"
                )));
            }
        };
        let mark = self.scope.len();
        let mut binders = Vec::new();
        for b in &q.binders {
            binders.push(self.bind(b)?);
        }
        let body = self.expr(&q.body)?;
        self.check_used(mark, q.body.span())?;
        self.scope.truncate(mark);
        Ok(BoolExpr::Quant {
            op,
            binders,
            body: Box::new(body),
        })
    }

    /// The rule for `and`/`or`/`if`: the parts that are not closed range over the same binders.
    fn same_binders(&self, parts: &[(&BoolExpr, Span)], op: &str) -> Result<(), Diagnostic> {
        let sets: Vec<(Vec<BinderId>, Span)> = parts
            .iter()
            .map(|(e, s)| (e.free_binders(), *s))
            .filter(|(f, _)| !f.is_empty())
            .collect();
        let Some((first, first_span)) = sets.first() else {
            return Ok(());
        };
        let Some((other, other_span)) = sets.iter().find(|(f, _)| f != first) else {
            return Ok(());
        };
        let (wide, narrow) = if other.len() > first.len() {
            (other, first)
        } else {
            (first, other)
        };
        let extra: Vec<BinderId> = wide
            .iter()
            .filter(|b| !narrow.contains(b))
            .copied()
            .collect();
        Err(Diagnostic::error(
            format!(
                "`{op}` combines a value over {} with a value over {}",
                self.binder_list(first),
                self.binder_list(other)
            ),
            *other_span,
        )
        .with_label(format!("ranges over {}", self.binder_list(other)))
        .with_secondary(
            *first_span,
            format!("ranges over {}", self.binder_list(first)),
        )
        .with_hint(format!(
            "move the test that uses {} inside a quantifier that binds it, so that both sides range \
             over the same variables, e.g. `any d in db: (any c in rotations(q, -15..=15): fhd(c, d) < 0.345) {op} ...`",
            self.binder_list(&extra)
        )))
    }

    fn binder_list(&self, ids: &[BinderId]) -> String {
        let names: Vec<String> = ids
            .iter()
            .map(|b| {
                let n = &self.binders[*b].names;
                if n.len() == 1 {
                    format!("`{}`", n[0])
                } else {
                    format!("`({})`", n.join(", "))
                }
            })
            .collect();
        names.join(" and ")
    }

    /// A name used as a boolean: a bound bit, a `bit` query input, or a `let`.
    fn name_value(&mut self, n: &Ident) -> Result<BoolExpr, Diagnostic> {
        if let Some((binder, field)) = self.use_local(n)? {
            return match &self.binders[binder].kind {
                BinderKind::Records(r) => {
                    let input = r.field_input(field).unwrap_or_default();
                    match self.inputs[input].as_ref().map(|i| i.ty) {
                        Some(InputType::Bit) => {
                            Ok(BoolExpr::Bit(Operand::Record { binder, field }))
                        }
                        _ => Err(self.not_boolean(n, input)),
                    }
                }
                BinderKind::Rotations { .. } => Err(Diagnostic::error(
                    format!("`{}` is a rotated iris code, not a condition", n.name),
                    n.span,
                )
                .with_label("a rotation of a query")
                .with_hint(format!(
                    "compare it with a record: `fhd({}, d) < 0.345`",
                    n.name
                ))),
            };
        }
        let Some(sym) = self.globals.get(&n.name).copied() else {
            return Err(self.unknown(n, "value", |k| {
                matches!(k, SymbolKind::Let(_) | SymbolKind::Input(..))
            }));
        };
        match sym.kind {
            SymbolKind::Let(item) => {
                self.enter_let(n, sym.span)?;
                // A `let` is closed: the binders around this use are invisible inside it.
                let barrier = std::mem::replace(&mut self.barrier, self.scope.len());
                let v = self.expr(&item.value);
                self.barrier = barrier;
                self.expanding.pop();
                v
            }
            SymbolKind::Input(i, _) => {
                let input = self.input_at(n, i, sym.span)?;
                match (input.ty, input.role) {
                    (InputType::Bit, InputRole::Query) => Ok(BoolExpr::Bit(Operand::Query(i))),
                    (InputType::Bit, InputRole::Gallery) => Err(Diagnostic::error(
                        format!("`{}` is a whole gallery of bits, not one bit", n.name),
                        n.span,
                    )
                    .with_label("a gallery")
                    .with_hint(format!(
                        "bind one record first, e.g. `count f in {}: f`",
                        n.name
                    ))),
                    _ => Err(self.not_boolean(n, i)),
                }
            }
            other => Err(Diagnostic::error(
                format!("`{}` is {}, not a condition", n.name, other.describe()),
                n.span,
            )
            .with_label("a condition such as `fhd(q, d) < 0.345` is expected here")
            .with_secondary(sym.span, "declared here")
            .with_hint("use a test (`fhd`, `cosine`), a `bit` input, a `let` or `true`/`false`")),
        }
    }

    fn not_boolean(&self, n: &Ident, input: InputId) -> Diagnostic {
        let (what, hint) = match self.inputs[input].as_ref() {
            Some(i) => {
                let query = matches!(i.role, InputRole::Query);
                let hint = match (i.ty, query) {
                    (InputType::Embedding { .. }, true) => {
                        format!("compare it with a record: `cosine({}, s) >= 0.34`", n.name)
                    }
                    (InputType::Embedding { .. }, false) => {
                        format!("compare it with the query: `cosine(v, {}) >= 0.34`", n.name)
                    }
                    (_, true) => format!("compare it with a record: `fhd({}, d) < 0.345`", n.name),
                    (_, false) => {
                        format!("compare it with the query: `fhd(q, {}) < 0.345`", n.name)
                    }
                };
                (describe(i), hint)
            }
            None => ("an input".to_string(), "fix its declaration".to_string()),
        };
        Diagnostic::error(
            format!("`{}` is {what} value, not a condition", n.name),
            n.span,
        )
        .with_label("not a bit")
        .with_hint(hint)
    }

    /// The binder field `n` names, marking it used; `None` if `n` is not a visible binder.
    fn use_local(&mut self, n: &Ident) -> Result<Option<(BinderId, usize)>, Diagnostic> {
        let barrier = self.barrier;
        if let Some(l) = self.scope[barrier..]
            .iter_mut()
            .rev()
            .find(|l| l.name.name == n.name)
        {
            l.used = true;
            return Ok(Some((l.binder, l.field)));
        }
        if let Some(l) = self.scope[..barrier].iter().find(|l| l.name.name == n.name) {
            return Err(Diagnostic::error(
                format!("`{}` is bound outside this `let`", n.name),
                n.span,
            )
            .with_label("not visible inside the `let`")
            .with_secondary(l.name.span, "bound here")
            .with_hint(format!(
                "a `let` must be closed: bind `{}` inside the `let` or write the condition in place",
                n.name
            )));
        }
        Ok(None)
    }

    pub(super) fn unknown(
        &self,
        n: &Ident,
        what: &str,
        fits: impl Fn(&SymbolKind) -> bool,
    ) -> Diagnostic {
        let locals: Vec<&str> = self.scope[self.barrier..]
            .iter()
            .map(|l| l.name.name.as_str())
            .collect();
        self.globals.unknown(n, what, &locals, fits)
    }

    /// The checked input at index `i` (named `n`, declared at `decl`).
    pub(super) fn input_at(
        &self,
        n: &Ident,
        i: InputId,
        decl: Span,
    ) -> Result<&'a Input, Diagnostic> {
        let inputs: &'a [Option<Input>] = self.inputs;
        inputs[i].as_ref().ok_or_else(|| {
            Diagnostic::error(format!("`{}` has an invalid declaration", n.name), n.span)
                .with_label("its declaration has an error")
                .with_secondary(decl, "declared here")
                .with_hint("fix the error reported at its declaration first")
        })
    }

    /// One operand of `fhd`/`cosine`: a query, a rotation or a record field.
    fn operand(&mut self, n: &Ident) -> Result<(Operand, InputId, Side), Diagnostic> {
        if let Some((binder, field)) = self.use_local(n)? {
            return Ok(match &self.binders[binder].kind {
                BinderKind::Rotations { query, .. } => {
                    (Operand::Rotated(binder), *query, Side::Query)
                }
                BinderKind::Records(r) => (
                    Operand::Record { binder, field },
                    r.field_input(field).unwrap_or_default(),
                    Side::Record,
                ),
            });
        }
        let Some(sym) = self.globals.get(&n.name).copied() else {
            return Err(self.unknown(n, "name", |k| matches!(k, SymbolKind::Input(..))));
        };
        match sym.kind {
            SymbolKind::Input(i, _) => {
                let input = self.input_at(n, i, sym.span)?;
                match input.role {
                    InputRole::Query => Ok((Operand::Query(i), i, Side::Query)),
                    InputRole::Gallery => Err(Diagnostic::error(
                        format!("`{}` is the whole gallery, not one record", n.name),
                        n.span,
                    )
                    .with_label("a gallery")
                    .with_hint(format!(
                        "bind one record first: `any d in {}: fhd(q, d) < 0.345`",
                        n.name
                    ))),
                }
            }
            other => Err(Diagnostic::error(
                format!(
                    "`{}` is {}, not a query or a record",
                    n.name,
                    other.describe()
                ),
                n.span,
            )
            .with_label("a query, a rotation or a record is expected here")
            .with_secondary(sym.span, "declared here")
            .with_hint(
                "compare a query (or a bound rotation of it) with a bound record: `fhd(c, d)`",
            )),
        }
    }

    /// Both operands of a test, in (query, record) order.
    fn sides(
        &mut self,
        test: &str,
        lhs: &Ident,
        rhs: &Ident,
    ) -> Result<(Typed<'a>, Typed<'a>), Diagnostic> {
        let (lo, li, ls) = self.operand(lhs)?;
        let (ro, ri, rs) = self.operand(rhs)?;
        let span = lhs.span.to(rhs.span);
        let mismatch = |what: &str| {
            Diagnostic::error(
                format!(
                    "type mismatch: `{test}` compares a query with a gallery record, but {what}"
                ),
                span,
            )
            .with_label("these operands")
            .with_hint(format!(
                "write `{test}(c, d)` with `c` the query (or one of its rotations) and `d` a record"
            ))
        };
        match (ls, rs) {
            (Side::Query, Side::Record) => {}
            (Side::Record, Side::Query) => {
                return Err(Diagnostic::error(
                    format!("`{test}` takes the query first and the record second"),
                    span,
                )
                .with_label("a record, then a query")
                .with_hint(format!(
                    "swap the operands: `{test}({}, {})`",
                    rhs.name, lhs.name
                )))
            }
            (Side::Query, Side::Query) => return Err(mismatch("both operands are queries")),
            (Side::Record, Side::Record) => {
                return Err(mismatch("both operands are gallery records"))
            }
        }
        let inputs: &'a [Option<Input>] = self.inputs;
        let q = inputs[li].as_ref().ok_or_else(|| invalid_input(span))?;
        let r = inputs[ri].as_ref().ok_or_else(|| invalid_input(span))?;
        Ok(((lo, q), (ro, r)))
    }

    fn fhd(&mut self, t: &ast::FhdLt) -> Result<BoolExpr, Diagnostic> {
        let ((query, q), (record, r)) = self.sides("fhd", &t.lhs, &t.rhs)?;
        let span = t.lhs.span.to(t.rhs.span);
        let (code_bits, mask) = match (q.ty, r.ty) {
            (
                InputType::Iris {
                    code_bits: qb,
                    mask: qm,
                },
                InputType::Iris {
                    code_bits: rb,
                    mask: rm,
                },
            ) => {
                if qb != rb {
                    return Err(Diagnostic::error(
                        format!(
                            "type mismatch: `{}` has {qb}-bit codes but `{}` has {rb}-bit codes",
                            q.name, r.name
                        ),
                        span,
                    )
                    .with_label("codes of different lengths")
                    .with_secondary(q.span, format!("iris<{qb}>"))
                    .with_secondary(r.span, format!("iris<{rb}>"))
                    .with_hint("declare the query and the gallery with the same `iris<BITS>`"));
                }
                if qm != rm {
                    return Err(Diagnostic::error(
                        format!(
                            "type mismatch: `{}` has {} but `{}` has {}",
                            q.name,
                            mask_text(qm),
                            r.name,
                            mask_text(rm)
                        ),
                        span,
                    )
                    .with_label("different mask kinds")
                    .with_secondary(q.span, type_text(&q.ty))
                    .with_secondary(r.span, type_text(&r.ty))
                    .with_hint("declare both with `public mask` or both with `secret mask`"));
                }
                (qb, qm)
            }
            _ => {
                let (bad, bad_name) = if matches!(q.ty, InputType::Iris { .. }) {
                    (r, &t.rhs)
                } else {
                    (q, &t.lhs)
                };
                let hint = if matches!(bad.ty, InputType::Embedding { .. }) {
                    "compare embeddings with `cosine(v, s) >= 0.34`"
                } else {
                    "`fhd` takes an iris query (or rotation) and an iris record"
                };
                return Err(Diagnostic::error(
                    format!(
                        "type mismatch: `fhd` compares iris codes, but `{}` is {}",
                        bad_name.name,
                        describe(bad)
                    ),
                    bad_name.span,
                )
                .with_label(format!("`{}`: {}", bad.name, type_text(&bad.ty)))
                .with_hint(hint));
            }
        };
        let ratio = ratio_operand(&t.ratio, self.globals)?;
        if ratio.num == 0 || 2 * ratio.num >= ratio.den {
            return Err(Diagnostic::error(
                format!("match ratio {}/{} is out of range", ratio.num, ratio.den),
                t.ratio.span(),
            )
            .with_label("must lie strictly between 0 and 0.5")
            .with_hint(
                "`fhd(x, y) < r` needs 0 < r < 1/2 (the deployed threshold is 0.345); \
                 at 1/2 unrelated iris codes match",
            ));
        }
        Ok(BoolExpr::Fhd(FhdTest {
            query,
            record,
            ratio,
            mask,
            code_bits,
            span: t.span,
        }))
    }

    fn cosine(&mut self, t: &ast::CosineCmp) -> Result<BoolExpr, Diagnostic> {
        let ((query, q), (record, r)) = self.sides("cosine", &t.lhs, &t.rhs)?;
        let span = t.lhs.span.to(t.rhs.span);
        let (dim, scale_bits) = match (q.ty, r.ty) {
            (
                InputType::Embedding {
                    dim: qd,
                    scale_bits: qs,
                },
                InputType::Embedding {
                    dim: rd,
                    scale_bits: rs,
                },
            ) => {
                if (qd, qs) != (rd, rs) {
                    return Err(Diagnostic::error(
                        format!(
                            "type mismatch: `{}` is {} but `{}` is {}",
                            q.name,
                            type_text(&q.ty),
                            r.name,
                            type_text(&r.ty)
                        ),
                        span,
                    )
                    .with_label("embeddings of different shapes")
                    .with_secondary(q.span, type_text(&q.ty))
                    .with_secondary(r.span, type_text(&r.ty))
                    .with_hint("declare both with the same `embedding<DIM> scale S`"));
                }
                (qd, qs)
            }
            _ => {
                let (bad, bad_name) = if matches!(q.ty, InputType::Embedding { .. }) {
                    (r, &t.rhs)
                } else {
                    (q, &t.lhs)
                };
                return Err(Diagnostic::error(
                    format!(
                        "type mismatch: `cosine` compares embeddings, but `{}` is {}",
                        bad_name.name,
                        describe(bad)
                    ),
                    bad_name.span,
                )
                .with_label(format!("`{}`: {}", bad.name, type_text(&bad.ty)))
                .with_hint("compare iris codes with `fhd(q, d) < 0.345`"));
            }
        };
        let abs = match operand_value(&t.tau.value, self.globals)? {
            ConstValue::Ratio(r) => r,
            ConstValue::Int(v @ (0 | 1)) => Ratio {
                num: v as u64,
                den: 1,
            },
            ConstValue::Int(v) => {
                return Err(Diagnostic::error(
                    format!("cosine threshold {v} is out of range"),
                    t.tau.span,
                )
                .with_label("must lie in -1..=1")
                .with_hint("write the threshold as a decimal, e.g. `cosine(v, s) >= 0.34`"))
            }
        };
        Ok(BoolExpr::Cosine(CosineTest {
            query,
            record,
            tau: SignedRatio {
                negative: t.tau.negative && abs.num != 0,
                abs,
            },
            strict: t.strict,
            dim,
            scale_bits,
            span: t.span,
        }))
    }

    /// Every binder in `scope[mark..]` is used (names starting with `_` may stay unused).
    fn check_used(&self, mark: usize, body: Span) -> Result<(), Diagnostic> {
        let Some(l) = self.scope[mark..]
            .iter()
            .find(|l| !l.used && !l.name.name.starts_with('_'))
        else {
            return Ok(());
        };
        let what = match self.binders[l.binder].kind {
            BinderKind::Records(_) => "record",
            BinderKind::Rotations { .. } => "rotation",
        };
        Err(Diagnostic::error(
            format!("{what} variable `{}` is never used", l.name.name),
            l.name.span,
        )
        .with_label("bound here")
        .with_secondary(body, "the condition does not mention it")
        .with_hint(format!(
            "use `{0}` in the condition, or name it `_{0}` if it is deliberately unused",
            l.name.name
        )))
    }
}

fn mask_text(m: MaskKind) -> &'static str {
    match m {
        MaskKind::Public => "public masks",
        MaskKind::Secret => "secret masks",
    }
}

fn invalid_input(span: Span) -> Diagnostic {
    Diagnostic::error("comparison of an input whose declaration has errors", span)
        .with_label("see the error at its declaration")
        .with_hint("fix the error reported at the input's declaration first")
}
