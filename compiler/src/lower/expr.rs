//! Lowering of reveals and boolean expressions: one `irs` op per node, operands materialised
//! once per program.

use std::collections::HashMap;

use super::layout::Layout;
use super::{append, int, invalid, location, shape_name, string, LowerError};
use crate::mlir::Compiler;
use crate::sema::program::{
    BinderId, BinderKind, BoolExpr, InputId, InputType, MaskKind, Operand, Program, Quantifier,
    Records, Reveal, RevealShape,
};
use crate::syntax::Span;
use irisc_runtime::vocab::InputRole;
use melior::ir::{Block, Location, Value};

pub struct Lowerer<'c, 'b, 'p> {
    cx: &'c Compiler,
    program: &'p Program,
    source: &'p str,
    file: String,
    block: &'b Block<'c>,
    query_values: HashMap<InputId, Value<'c, 'b>>,
    records: HashMap<(BinderId, usize), Value<'c, 'b>>,
    rotations: HashMap<BinderId, Value<'c, 'b>>,
    /// The reveal being lowered, for errors.
    span: Span,
}

impl<'c, 'b, 'p> Lowerer<'c, 'b, 'p> {
    pub fn new(
        cx: &'c Compiler,
        program: &'p Program,
        source: &'p str,
        block: &'b Block<'c>,
    ) -> Self {
        Lowerer {
            cx,
            program,
            source,
            file: format!("{}.irs", program.name),
            block,
            query_values: HashMap::new(),
            records: HashMap::new(),
            rotations: HashMap::new(),
            span: Span::new(0, 0),
        }
    }

    fn at(&self, span: Span) -> Location<'c> {
        location(self.cx, &self.file, self.source, span)
    }

    fn unsupported(&self, message: String, hint: &str) -> LowerError {
        LowerError::Unsupported {
            message,
            hint: hint.into(),
            span: self.span,
        }
    }

    pub fn reveal(&mut self, _index: usize, r: &'p Reveal) -> Result<(), LowerError> {
        self.span = r.span;
        if r.to >= 3 {
            return Err(invalid(format!("party {} does not exist", r.to)));
        }
        let (value, layout) = self.expr(&r.value)?;
        let ctx = self.cx.context();
        let at = self.at(r.span);
        let attrs = [
            int(ctx, "to", r.to as i64),
            string(ctx, "shape", shape_name(r.shape)),
            string(ctx, "label", &r.label),
        ];
        match (r.shape, r.records) {
            (RevealShape::Bit, _) => {
                if !layout.is_query() {
                    return Err(self.unsupported(
                        "this reveal is one bit per query, but its value has one bit per record or rotation".into(),
                        "wrap it in `any ...:` / `all ...:` over its binders, or reveal `ids`",
                    ));
                }
                append(self.block, self.cx, "irs.reveal", at, &[value], &attrs, &[])?;
            }
            (RevealShape::Ids | RevealShape::Count, Some(b)) => {
                let want = Layout {
                    record: Some(b),
                    rotation: None,
                };
                if layout != want {
                    return Err(self.unsupported(
                        "the body must give exactly one bit per record".into(),
                        "use the record binder in the body and reduce rotations with `any c in rotations(...)`",
                    ));
                }
                if r.shape == RevealShape::Ids {
                    let recs = self.record_value(b, 0)?;
                    append(
                        self.block,
                        self.cx,
                        "irs.reveal",
                        at,
                        &[value, recs],
                        &attrs,
                        &[],
                    )?;
                } else {
                    let n = append(
                        self.block,
                        self.cx,
                        "irs.count",
                        at,
                        &[value],
                        &[],
                        &["!irs.number"],
                    )?;
                    append(self.block, self.cx, "irs.reveal", at, &[n[0]], &attrs, &[])?;
                }
            }
            (_, None) => return Err(invalid("an `ids`/`count` reveal without a record binder")),
        }
        Ok(())
    }

    fn expr(&mut self, e: &'p BoolExpr) -> Result<(Value<'c, 'b>, Layout), LowerError> {
        let ctx = self.cx.context();
        let at = self.at(self.span);
        let one = |this: &Self, name: &str, ops: &[Value<'c, 'b>], attrs: &[_]| {
            append(this.block, this.cx, name, at, ops, attrs, &["!irs.bits"]).map(|v| v[0])
        };
        Ok(match e {
            BoolExpr::Const(b) => (
                one(self, "irs.const", &[], &[int(ctx, "value", i64::from(*b))])?,
                Layout::QUERY,
            ),
            BoolExpr::Bit(o) => self.operand(o)?,
            BoolExpr::Fhd(t) => {
                let (q, lq) = self.operand(&t.query)?;
                let (r, lr) = self.operand(&t.record)?;
                let layout = Layout {
                    record: lr.record,
                    rotation: lq.rotation,
                };
                let attrs = [
                    int(ctx, "ratio_num", t.ratio.num as i64),
                    int(ctx, "ratio_den", t.ratio.den as i64),
                    string(
                        ctx,
                        "mask",
                        match t.mask {
                            MaskKind::Public => "public",
                            MaskKind::Secret => "secret",
                        },
                    ),
                ];
                let v = append(
                    self.block,
                    self.cx,
                    "irs.fhd_lt",
                    self.at(t.span),
                    &[q, r],
                    &attrs,
                    &["!irs.bits"],
                )?;
                (v[0], layout)
            }
            BoolExpr::Cosine(t) => {
                let (q, lq) = self.operand(&t.query)?;
                let (r, lr) = self.operand(&t.record)?;
                if !lq.is_query() {
                    return Err(invalid("a cosine test's first operand must be a query"));
                }
                let attrs = [
                    int(ctx, "num", t.tau.abs.num as i64),
                    int(ctx, "den", t.tau.abs.den as i64),
                    int(ctx, "negative", i64::from(t.tau.negative)),
                    int(ctx, "strict", i64::from(t.strict)),
                    int(ctx, "scale_bits", i64::from(t.scale_bits)),
                ];
                let v = append(
                    self.block,
                    self.cx,
                    "irs.cosine_ge",
                    self.at(t.span),
                    &[q, r],
                    &attrs,
                    &["!irs.bits"],
                )?;
                (v[0], lr)
            }
            BoolExpr::Not(x) => {
                let (v, l) = self.expr(x)?;
                (one(self, "irs.not", &[v], &[])?, l)
            }
            BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
                let (va, la) = self.expr(a)?;
                let (vb, lb) = self.expr(b)?;
                let l = self.combine(la, lb)?;
                let name = if matches!(e, BoolExpr::And(..)) {
                    "irs.and"
                } else {
                    "irs.or"
                };
                (one(self, name, &[va, vb], &[])?, l)
            }
            BoolExpr::If { cond, then, els } => {
                let (vc, lc) = self.expr(cond)?;
                let (vt, lt) = self.expr(then)?;
                let (ve, le) = self.expr(els)?;
                let l = self.combine(self.combine(lc, lt)?, le)?;
                (one(self, "irs.select", &[vc, vt, ve], &[])?, l)
            }
            BoolExpr::Quant { op, binders, body } => {
                let (v, l) = self.expr(body)?;
                let names = binders
                    .iter()
                    .filter_map(|b| self.program.binders.get(*b))
                    .map(|b| b.names.join(", "))
                    .collect::<Vec<_>>()
                    .join("`, `");
                let Some((group, rest)) = l.reduce(binders) else {
                    return Err(self.unsupported(
                        format!("this quantifier over `{names}` reduces records while rotations stay free"),
                        "bind both in one quantifier, e.g. `any d in db, c in rotations(q, -15..=15): ...`",
                    ));
                };
                if rest == l {
                    return Err(self.unsupported(
                        format!("the body of this quantifier does not use `{names}`"),
                        "use the bound names in the body, or drop the quantifier",
                    ));
                }
                let name = match op {
                    Quantifier::Any => "irs.any",
                    Quantifier::All => "irs.all",
                };
                (
                    one(self, name, &[v], &[int(ctx, "group", group as i64)])?,
                    rest,
                )
            }
        })
    }

    fn combine(&self, a: Layout, b: Layout) -> Result<Layout, LowerError> {
        a.combine(b).ok_or_else(|| {
            self.unsupported(
                "this expression combines values over different records or rotations".into(),
                "reduce the rotations with `any c in rotations(...)` inside each side first",
            )
        })
    }

    fn value_type(&self, input: InputId, many: bool) -> Result<String, LowerError> {
        let i = self
            .program
            .inputs
            .get(input)
            .ok_or_else(|| invalid(format!("input {input} does not exist")))?;
        let s = if many { "s" } else { "" };
        Ok(match i.ty {
            InputType::Iris { code_bits, .. } => format!("!irs.code{s}<{code_bits}>"),
            InputType::Embedding { dim, .. } => format!("!irs.vector{s}<{dim}>"),
            InputType::Bit => "!irs.bits".into(),
        })
    }

    fn kind(&self, input: InputId) -> &'static str {
        match self.program.inputs[input].ty {
            InputType::Iris { .. } => "iris",
            InputType::Embedding { .. } => "embedding",
            InputType::Bit => "bit",
        }
    }

    /// The value of an operand and its layout.
    fn operand(&mut self, o: &Operand) -> Result<(Value<'c, 'b>, Layout), LowerError> {
        match *o {
            Operand::Query(i) => Ok((self.query_value(i)?, Layout::QUERY)),
            Operand::Rotated(b) => {
                let binder = self
                    .program
                    .binders
                    .get(b)
                    .ok_or_else(|| invalid(format!("binder {b} does not exist")))?;
                let BinderKind::Rotations {
                    query,
                    lo,
                    hi,
                    mirror,
                } = binder.kind
                else {
                    return Err(invalid("a rotated operand bound to records"));
                };
                if lo > hi {
                    return Err(invalid(format!("empty rotation range {lo}..={hi}")));
                }
                let v = match self.rotations.get(&b) {
                    Some(v) => *v,
                    None => {
                        let q = self.query_value(query)?;
                        let ctx = self.cx.context();
                        let ty = self.value_type(query, true)?;
                        let mut attrs = vec![int(ctx, "lo", lo.into()), int(ctx, "hi", hi.into())];
                        if mirror {
                            attrs.push(int(ctx, "mirror", 1));
                        }
                        let v = append(
                            self.block,
                            self.cx,
                            "irs.rotate",
                            self.at(binder.span),
                            &[q],
                            &attrs,
                            &[&ty],
                        )?[0];
                        self.rotations.insert(b, v);
                        v
                    }
                };
                Ok((
                    v,
                    Layout {
                        record: None,
                        rotation: Some((b, (hi - lo + 1) as u32)),
                    },
                ))
            }
            Operand::Record { binder, field } => Ok((
                self.record_value(binder, field)?,
                Layout {
                    record: Some(binder),
                    rotation: None,
                },
            )),
        }
    }

    fn query_value(&mut self, input: InputId) -> Result<Value<'c, 'b>, LowerError> {
        if let Some(v) = self.query_values.get(&input) {
            return Ok(*v);
        }
        let i = &self.program.inputs[input];
        let (InputRole::Query, Some(owner)) = (i.role, i.owner) else {
            return Err(invalid(format!(
                "`{}` is not a query with an owner (a gallery?)",
                i.name
            )));
        };
        let ctx = self.cx.context();
        let ty = self.value_type(input, false)?;
        let v = append(
            self.block,
            self.cx,
            "irs.query_value",
            self.at(i.span),
            &[],
            &[
                string(ctx, "name", &i.name),
                int(ctx, "input", input as i64),
                string(ctx, "kind", self.kind(input)),
                int(ctx, "owner", owner as i64),
            ],
            &[&ty],
        )?[0];
        self.query_values.insert(input, v);
        Ok(v)
    }

    fn record_value(
        &mut self,
        binder: BinderId,
        field: usize,
    ) -> Result<Value<'c, 'b>, LowerError> {
        if let Some(v) = self.records.get(&(binder, field)) {
            return Ok(*v);
        }
        let b = self
            .program
            .binders
            .get(binder)
            .ok_or_else(|| invalid(format!("binder {binder} does not exist")))?;
        let BinderKind::Records(records) = &b.kind else {
            return Err(invalid("a record operand bound to rotations"));
        };
        let input = records
            .field_input(field)
            .ok_or_else(|| invalid(format!("record field {field} does not exist")))?;
        let source = match records {
            Records::Galleries(_) => "gallery",
            Records::Earlier(_) => "earlier",
        };
        let i = &self.program.inputs[input];
        let ctx = self.cx.context();
        let ty = self.value_type(input, true)?;
        let v = append(
            self.block,
            self.cx,
            "irs.records",
            self.at(b.span),
            &[],
            &[
                string(ctx, "name", &i.name),
                int(ctx, "input", input as i64),
                string(ctx, "source", source),
            ],
            &[&ty],
        )?[0];
        self.records.insert((binder, field), v);
        Ok(v)
    }
}
