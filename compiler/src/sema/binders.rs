//! Binders: `d in db`, `(l, r) in zip(left, right)`, `e in earlier(q)` and
//! `c in rotations(q, lo..=hi)`, checked and entered into the program's binder table.

use super::consts::int_operand;
use super::inputs::{describe, type_text};
use super::names::{duplicate, SymbolKind};
use super::program::*;
use super::resolver::{Local, Resolver};
use crate::syntax::ast::{self, Ident, Source};
use crate::syntax::Diagnostic;
use irisc_runtime::vocab::InputRole;

impl<'a> Resolver<'a, '_> {
    /// Checks `b`, adds it to the binder table and brings its names into scope.
    pub fn bind(&mut self, b: &ast::Binder) -> Result<BinderId, Diagnostic> {
        for (i, n) in b.names.iter().enumerate() {
            if let Some(sym) = self.globals.get(&n.name) {
                return Err(duplicate(n, sym.span));
            }
            if let Some(prev) = self.scope[self.barrier..]
                .iter()
                .find(|l| l.name.name == n.name)
            {
                return Err(duplicate(n, prev.name.span));
            }
            if let Some(prev) = b.names[..i].iter().find(|p| p.name == n.name) {
                return Err(duplicate(n, prev.span));
            }
        }
        let kind = match &b.source {
            Source::Input(src) => {
                let (i, input) = self.named_input(src)?;
                match input.role {
                    InputRole::Gallery => BinderKind::Records(Records::Galleries(vec![i])),
                    InputRole::Query => {
                        let var = &b.names[0].name;
                        return Err(Diagnostic::error(
                            format!("`{}` is a query, not a gallery", src.name),
                            src.span,
                        )
                        .with_label("a binder ranges over a gallery's records here")
                        .with_hint(format!(
                            "use `{0}` directly, bind its rotations (`{1} in rotations({0}, -15..=15)`) \
                             or the earlier queries of the batch (`{1} in earlier({0})`)",
                            src.name, var
                        )));
                    }
                }
            }
            Source::Zip(gs, span) => {
                if gs.len() < 2 {
                    return Err(Diagnostic::error("`zip` of a single gallery", *span)
                        .with_label("one gallery")
                        .with_hint(format!(
                            "write `{} in {}`, or zip two or more galleries: `(a, b) in zip(g1, g2)`",
                            b.names[0].name, gs[0].name
                        )));
                }
                let mut ids = Vec::new();
                let mut first: Option<&'a Input> = None;
                for g in gs {
                    let (i, input) = self.named_input(g)?;
                    if input.role != InputRole::Gallery {
                        return Err(Diagnostic::error(
                            format!("`zip` takes galleries; `{}` is {}", g.name, describe(input)),
                            g.span,
                        )
                        .with_label("not a gallery")
                        .with_hint(
                            "zip index-aligned galleries, e.g. `(l, r) in zip(left, right)`",
                        ));
                    }
                    if ids.contains(&i) {
                        return Err(Diagnostic::error(
                            format!("`{}` is zipped with itself", g.name),
                            g.span,
                        )
                        .with_label("already in this `zip`")
                        .with_hint("zip different galleries"));
                    }
                    if let Some(f) = first {
                        if f.ty != input.ty {
                            return Err(Diagnostic::error(
                                format!(
                                    "type mismatch: `zip` of `{}` ({}) and `{}` ({})",
                                    f.name,
                                    type_text(&f.ty),
                                    g.name,
                                    type_text(&input.ty)
                                ),
                                g.span,
                            )
                            .with_label("a different type")
                            .with_secondary(f.span, type_text(&f.ty))
                            .with_secondary(input.span, type_text(&input.ty))
                            .with_hint("zip only galleries declared with the same type"));
                        }
                    }
                    first.get_or_insert(input);
                    ids.push(i);
                }
                BinderKind::Records(Records::Galleries(ids))
            }
            Source::Earlier(q, _) => {
                let (i, input) = self.named_input(q)?;
                if input.role == InputRole::Gallery {
                    return Err(Diagnostic::error(
                        format!("`earlier` takes a query input; `{}` is a gallery", q.name),
                        q.span,
                    )
                    .with_label("a gallery")
                    .with_hint(format!(
                        "write `{} in {}` to range over the gallery, or `earlier(q)` with a query `q`",
                        b.names[0].name, q.name
                    )));
                }
                BinderKind::Records(Records::Earlier(i))
            }
            Source::Rotations(r) => self.rotations(r)?,
        };
        let fields = match &kind {
            BinderKind::Records(Records::Galleries(g)) => g.len(),
            _ => 1,
        };
        if b.names.len() != fields {
            let d = if fields == 1 {
                Diagnostic::error(
                    format!("{} names bound to one value per record", b.names.len()),
                    b.span,
                )
                .with_label("a tuple of names")
                .with_hint("a tuple binds the galleries of a `zip`: write one name, e.g. `d in db`")
            } else {
                Diagnostic::error(
                    format!(
                        "`zip` of {fields} galleries binds {fields} names, found {}",
                        b.names.len()
                    ),
                    b.span,
                )
                .with_label("one name per gallery is needed")
                .with_hint("write one name per gallery, e.g. `(l, r) in zip(left, right)`")
            };
            return Err(d);
        }
        let id = self.binders.len();
        self.binders.push(Binder {
            names: b.names.iter().map(|n| n.name.clone()).collect(),
            kind,
            span: b.span,
        });
        for (field, n) in b.names.iter().enumerate() {
            self.scope.push(Local {
                name: n.clone(),
                binder: id,
                field,
                used: false,
            });
        }
        Ok(id)
    }

    /// The input `name` refers to; errors for other kinds of names.
    fn named_input(&self, name: &Ident) -> Result<(InputId, &'a Input), Diagnostic> {
        match self.globals.get(&name.name) {
            Some(sym) => match sym.kind {
                SymbolKind::Input(i, _) => Ok((i, self.input_at(name, i, sym.span)?)),
                other => Err(Diagnostic::error(
                    format!(
                        "`{}` is {}, not a gallery or query",
                        name.name,
                        other.describe()
                    ),
                    name.span,
                )
                .with_label("an input is expected here")
                .with_secondary(sym.span, "declared here")
                .with_hint("name an input declared with `gallery` or `query`")),
            },
            None => Err(self.unknown(name, "input", |k| matches!(k, SymbolKind::Input(..)))),
        }
    }

    /// `rotations(q, lo..=hi)`: q must be an iris query; the range is non-empty and within
    /// `±(columns - 1)`, since rotating by a whole row (`columns`) is the identity.
    fn rotations(&self, r: &ast::Rotations) -> Result<BinderKind, Diagnostic> {
        let (query, input) = self.named_input(&r.of)?;
        if input.role == InputRole::Gallery {
            return Err(Diagnostic::error(
                format!("only a query can be rotated; `{}` is a gallery", r.of.name),
                r.of.span,
            )
            .with_label("a gallery")
            .with_hint("rotate the query and compare it with each record"));
        }
        let InputType::Iris { code_bits, .. } = input.ty else {
            return Err(Diagnostic::error(
                format!(
                    "only iris codes can be rotated; `{}` is {}",
                    r.of.name,
                    describe(input)
                ),
                r.of.span,
            )
            .with_label(type_text(&input.ty))
            .with_hint("compare embeddings directly: `cosine(v, s) >= 0.34`"));
        };
        let max = i64::from(code_bits / 64) - 1;
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
        Ok(BinderKind::Rotations {
            query,
            lo,
            hi,
            mirror: r.mirror,
        })
    }

    fn bound(&self, b: &ast::Bound, max: i64, query: &Ident) -> Result<i32, Diagnostic> {
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
}
