//! Matching conditions: flattens `any` binders and one `fhd(x, y) < RATIO` test into a
//! [`Decision`], the per-(query, record) test of Algorithm 1 with the query's rotations.

use super::consts::{int_operand, ratio_operand};
use super::names::{duplicate, Globals, SymbolKind};
use super::legacy::{Decision, Input, InputRole};
use crate::syntax::ast::{Binder, Bound, Expr, FhdLt, Ident, Rotations, Source};
use crate::syntax::{Diagnostic, Span};

/// A variable bound by `any` or `reveal ids`.
#[derive(Debug, Clone)]
pub struct Var {
    pub name: Ident,
    pub kind: VarKind,
    /// Set when the `fhd` test mentions it; an unused binder is almost always a mistake.
    pub used: bool,
}

#[derive(Debug, Clone, Copy)]
pub enum VarKind {
    /// One record of the gallery at this input index.
    Record { gallery: usize },
    /// One rotation of the query at this input index.
    Rotation { query: usize, lo: i32, hi: i32 },
}

/// Resolves conditions against the globals and the checked inputs (`None` for an input whose
/// declaration had errors, to avoid reporting the same mistake twice).
pub struct Resolver<'a, 'm> {
    pub globals: &'a Globals<'m>,
    pub inputs: &'a [Option<Input>],
    /// `let` names being expanded, to report `let a = b; let b = a;` instead of looping.
    pub expanding: Vec<String>,
}

/// One side of `fhd`: the query (possibly rotated) or a gallery record.
enum Side {
    Query { input: usize, var: Option<usize> },
    Record { gallery: usize },
}

impl Resolver<'_, '_> {
    /// Binds one `name in source`, checking that the name is fresh.
    pub fn bind(&self, b: &Binder, env: &[Var]) -> Result<Var, Diagnostic> {
        if let Some(sym) = self.globals.get(&b.name.name) {
            return Err(duplicate(&b.name, sym.span));
        }
        if let Some(prev) = env.iter().find(|v| v.name.name == b.name.name) {
            return Err(duplicate(&b.name, prev.name.span));
        }
        let kind = match &b.source {
            Source::Input(src) => {
                let (index, role) = self.input(src)?;
                match role {
                    InputRole::Gallery => VarKind::Record { gallery: index },
                    InputRole::Query { .. } => {
                        return Err(Diagnostic::error(
                            format!("`{}` is a query, not a gallery", src.name),
                            src.span,
                        )
                        .with_label("`any` ranges over a gallery's records here")
                        .with_hint(format!(
                            "use `{0}` directly, or bind its rotations: `{1} in rotations({0}, -15..=15)`",
                            src.name, b.name.name
                        )))
                    }
                }
            }
            Source::Rotations(r) => self.rotations(r)?,
        };
        if matches!(kind, VarKind::Record { .. })
            && env.iter().any(|v| matches!(v.kind, VarKind::Record { .. }))
        {
            let first = env
                .iter()
                .find(|v| matches!(v.kind, VarKind::Record { .. }))
                .map_or(b.span, |v| v.name.span);
            return Err(Diagnostic::error(
                "a condition may range over only one gallery record",
                b.span,
            )
            .with_label("a second record variable")
            .with_secondary(first, "the record variable is bound here")
            .with_hint("compare the query with one record: `any d in db: fhd(q, d) < RATIO`"));
        }
        if matches!(kind, VarKind::Rotation { .. })
            && env
                .iter()
                .any(|v| matches!(v.kind, VarKind::Rotation { .. }))
        {
            return Err(Diagnostic::error(
                "a condition may range over only one set of rotations",
                b.span,
            )
            .with_label("a second rotation variable"));
        }
        Ok(Var {
            name: b.name.clone(),
            kind,
            used: false,
        })
    }

    /// The input `name` refers to, with its role; errors for other kinds of names.
    fn input(&self, name: &Ident) -> Result<(usize, InputRole), Diagnostic> {
        match self.globals.get(&name.name) {
            Some(sym) => match sym.kind {
                SymbolKind::Input(i, _) => match &self.inputs[i] {
                    Some(input) => Ok((i, input.role.clone())),
                    // Already reported at the declaration.
                    None => Err(Diagnostic::error(
                        format!("`{}` has an invalid declaration", name.name),
                        name.span,
                    )
                    .with_secondary(sym.span, "declared here")
                    .with_hint("fix the error reported at its declaration first")),
                },
                other => Err(Diagnostic::error(
                    format!(
                        "`{}` is {}, not a gallery or query",
                        name.name,
                        other.describe()
                    ),
                    name.span,
                )
                .with_label("an input is expected here")
                .with_secondary(sym.span, "declared here")),
            },
            None => Err(self
                .globals
                .unknown(name, "input", &[], |k| matches!(k, SymbolKind::Input(..)))),
        }
    }

    /// `rotations(q, lo..=hi)`: q must be a query; the range is non-empty and within
    /// `±(columns - 1)`, since rotating by a whole row (`columns`) is the identity.
    fn rotations(&self, r: &Rotations) -> Result<VarKind, Diagnostic> {
        let (query, role) = self.input(&r.of)?;
        if !matches!(role, InputRole::Query { .. }) {
            return Err(Diagnostic::error(
                format!("only a query can be rotated; `{}` is a gallery", r.of.name),
                r.of.span,
            )
            .with_label("a gallery")
            .with_hint("rotate the query and compare it with each record"));
        }
        let columns = self.inputs[query]
            .as_ref()
            .map_or(1, |i| i64::from(i.code_bits / 64));
        let max = columns - 1;
        let lo = self.bound(&r.lo, max, &r.of)?;
        let hi = self.bound(&r.hi, max, &r.of)?;
        if lo > hi {
            return Err(Diagnostic::error(
                format!("empty rotation range {lo}..={hi}"),
                r.lo.span.to(r.hi.span),
            )
            .with_label("the lower bound is above the upper bound")
            .with_hint(format!("write `{hi}..={lo}`")));
        }
        Ok(VarKind::Rotation { query, lo, hi })
    }

    fn bound(&self, b: &Bound, max: i64, query: &Ident) -> Result<i32, Diagnostic> {
        let v = int_operand(&b.value, self.globals, "a rotation")?;
        let v = if b.negative { -v } else { v };
        if v.abs() > max {
            return Err(Diagnostic::error(format!("rotation {v} is out of range"), b.span)
                .with_label(if max == 0 {
                    "must be 0: the code has a single column".to_string()
                } else {
                    format!("must lie in -{max}..={max}")
                })
                .with_hint(format!(
                    "`{}` has {} columns; a rotation shifts whole columns, so at most {max} either way",
                    query.name,
                    max + 1
                )));
        }
        // |v| <= 2^20 / 64, so it fits.
        Ok(v as i32)
    }

    /// Flattens `expr` under the variables in `env` into one decision.
    pub fn decision(&mut self, expr: &Expr, env: &mut Vec<Var>) -> Result<Decision, Diagnostic> {
        match expr {
            Expr::Any(any) => {
                let depth = env.len();
                for b in &any.binders {
                    let v = self.bind(b, env)?;
                    env.push(v);
                }
                let d = self.decision(&any.body, env)?;
                if let Some(unused) = env[depth..].iter().find(|v| !v.used) {
                    return Err(unused_var(unused, d.span));
                }
                env.truncate(depth);
                Ok(d)
            }
            Expr::Name(n) => {
                let Some(sym) = self.globals.get(&n.name) else {
                    return Err(self
                        .globals
                        .unknown(n, "value", &[], |k| matches!(k, SymbolKind::Let(_))));
                };
                let SymbolKind::Let(item) = sym.kind else {
                    return Err(Diagnostic::error(
                        format!(
                            "`{}` is {}, not a matching condition",
                            n.name,
                            sym.kind.describe()
                        ),
                        n.span,
                    )
                    .with_label("a condition such as `any d in db: fhd(q, d) < RATIO` is expected")
                    .with_secondary(sym.span, "declared here"));
                };
                if self.expanding.contains(&n.name) {
                    return Err(Diagnostic::error(
                        format!("`{}` is defined in terms of itself", n.name),
                        n.span,
                    )
                    .with_label("refers back to its own definition")
                    .with_secondary(sym.span, "defined here"));
                }
                self.expanding.push(n.name.clone());
                let d = self.decision(&item.value, env);
                self.expanding.pop();
                d
            }
            Expr::FhdLt(test) => self.fhd(test, env),
        }
    }

    fn side(&self, name: &Ident, env: &mut [Var]) -> Result<Side, Diagnostic> {
        if let Some(i) = env.iter().rposition(|v| v.name.name == name.name) {
            env[i].used = true;
            return Ok(match env[i].kind {
                VarKind::Record { gallery } => Side::Record { gallery },
                VarKind::Rotation { query, .. } => Side::Query {
                    input: query,
                    var: Some(i),
                },
            });
        }
        if self.globals.get(&name.name).is_none() {
            let locals: Vec<&str> = env.iter().map(|v| v.name.name.as_str()).collect();
            return Err(self.globals.unknown(name, "name", &locals, |k| {
                matches!(k, SymbolKind::Input(..))
            }));
        }
        let (input, role) = self.input(name)?;
        match role {
            InputRole::Query { .. } => Ok(Side::Query { input, var: None }),
            InputRole::Gallery => Err(Diagnostic::error(
                format!("`{}` is the whole gallery, not one record", name.name),
                name.span,
            )
            .with_label("a gallery")
            .with_hint(format!(
                "bind one record first: `any d in {}: fhd(q, d) < RATIO`",
                name.name
            ))),
        }
    }

    fn fhd(&self, test: &FhdLt, env: &mut [Var]) -> Result<Decision, Diagnostic> {
        let lhs = self.side(&test.lhs, env)?;
        let rhs = self.side(&test.rhs, env)?;
        // The Hamming distance is symmetric, so either order is accepted.
        let (query, rot, gallery) = match (lhs, rhs) {
            (Side::Query { input, var }, Side::Record { gallery, .. })
            | (Side::Record { gallery, .. }, Side::Query { input, var }) => (input, var, gallery),
            (Side::Query { .. }, Side::Query { .. }) => {
                return Err(mismatch(test, "both operands are queries"))
            }
            (Side::Record { .. }, Side::Record { .. }) => {
                return Err(mismatch(test, "both operands are gallery records"))
            }
        };
        let (Some(q), Some(g)) = (&self.inputs[query], &self.inputs[gallery]) else {
            return Err(Diagnostic::error("comparison of invalid inputs", test.span));
        };
        if q.code_bits != g.code_bits {
            return Err(Diagnostic::error(
                format!(
                    "type mismatch: `{}` has {}-bit codes but `{}` has {}-bit codes",
                    q.name, q.code_bits, g.name, g.code_bits
                ),
                test.lhs.span.to(test.rhs.span),
            )
            .with_label("codes of different lengths")
            .with_secondary(q.span, format!("iris<{}>", q.code_bits))
            .with_secondary(g.span, format!("iris<{}>", g.code_bits))
            .with_hint("declare the query and the gallery with the same `iris<BITS>`"));
        }
        let (rot_lo, rot_hi) = match rot.map(|i| env[i].kind) {
            Some(VarKind::Rotation { lo, hi, query: rq }) if rq == query => (lo, hi),
            _ => (0, 0),
        };
        let ratio = ratio_operand(&test.ratio, self.globals)?;
        Ok(Decision {
            query,
            gallery,
            rot_lo,
            rot_hi,
            ratio,
            span: test.span,
        })
    }
}

fn mismatch(test: &FhdLt, what: &str) -> Diagnostic {
    Diagnostic::error(
        format!("type mismatch: `fhd` compares a query with a gallery record, but {what}"),
        test.lhs.span.to(test.rhs.span),
    )
    .with_label("these operands")
    .with_hint("write `fhd(c, d)` with `c` the query (or one of its rotations) and `d` a record")
}

fn unused_var(v: &Var, test: Span) -> Diagnostic {
    let what = match v.kind {
        VarKind::Record { .. } => "record",
        VarKind::Rotation { .. } => "rotation",
    };
    Diagnostic::error(
        format!("{what} variable `{}` is never used", v.name.name),
        v.name.span,
    )
    .with_label("bound here")
    .with_secondary(test, "the comparison does not mention it")
    .with_hint(format!("compare with `{}` in `fhd(..)`", v.name.name))
}
