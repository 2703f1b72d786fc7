//! `--emit=ast`: the syntax tree as an indented outline, one node per line with its kind, its
//! contents and where it starts (`line:column`), so a user can see how the parser read a program.

use std::fmt::Write;

use super::ast::*;
use super::Span;

/// The outline of `module`; positions are computed from `source`.
pub fn print_tree(module: &Module, source: &str) -> String {
    let mut p = Printer {
        out: String::new(),
        source,
    };
    p.node(0, "module", "", module.span);
    for item in &module.items {
        p.item(1, item);
    }
    p.out
}

struct Printer<'s> {
    out: String,
    source: &'s str,
}

fn operand(o: &Operand) -> String {
    match o {
        Operand::Lit(l) => match &l.kind {
            LitKind::Int(s) | LitKind::Decimal(s) => s.clone(),
        },
        Operand::Name(n) => n.name.clone(),
    }
}

fn bound(b: &Bound) -> String {
    format!("{}{}", if b.negative { "-" } else { "" }, operand(&b.value))
}

fn type_ann(t: &TypeAnn) -> String {
    match t {
        TypeAnn::Iris(t) => {
            let mask = match t.mask {
                MaskAnn::Public => "public",
                MaskAnn::Secret => "secret",
            };
            format!("iris<{}> {mask} mask", operand(&t.bits))
        }
        TypeAnn::Embedding(e) => match &e.scale {
            Some(s) => format!("embedding<{}> scale {}", operand(&e.dim), operand(s)),
            None => format!("embedding<{}>", operand(&e.dim)),
        },
        TypeAnn::Bit(_) => "bit".to_string(),
    }
}

fn names(ns: &[Ident]) -> String {
    ns.iter()
        .map(|n| n.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn binder(b: &Binder) -> String {
    let lhs = if b.tuple {
        format!("({})", names(&b.names))
    } else {
        names(&b.names)
    };
    let src = match &b.source {
        Source::Input(i) => i.name.clone(),
        Source::Zip(gs, _) => format!("zip({})", names(gs)),
        Source::Earlier(q, _) => format!("earlier({})", q.name),
        Source::Rotations(r) => format!(
            "rotations({}, {}..={})",
            if r.mirror {
                format!("mirror({})", r.of.name)
            } else {
                r.of.name.clone()
            },
            bound(&r.lo),
            bound(&r.hi)
        ),
    };
    format!("{lhs} in {src}")
}

impl Printer<'_> {
    fn node(&mut self, depth: usize, kind: &str, text: &str, span: Span) {
        let (line, col) = span.line_column(self.source);
        let head = format!("{}{kind} {text}", "  ".repeat(depth));
        let _ = writeln!(self.out, "{:<64} {line}:{col}", head.trim_end());
    }

    fn item(&mut self, d: usize, item: &Item) {
        match item {
            Item::Const(c) => {
                let v = match &c.value.kind {
                    LitKind::Int(s) | LitKind::Decimal(s) => s,
                };
                self.node(d, "const", &format!("{} = {v}", c.name.name), c.span)
            }
            Item::Parties(p) => self.node(d, "parties", &names(&p.names), p.span),
            Item::Input(i) => {
                let text = match &i.from {
                    None => format!("{}: {}", i.name.name, type_ann(&i.ty)),
                    Some(from) => {
                        format!("{}: {} from {}", i.name.name, type_ann(&i.ty), from.name)
                    }
                };
                self.node(d, i.role.name(), &text, i.span)
            }
            Item::Let(l) => {
                self.node(d, "let", &l.name.name, l.span);
                self.expr(d + 1, &l.value);
            }
            Item::Reveal(r) => {
                let text = match &r.label {
                    Some(l) => format!("to {} as {}", r.to.name, l.name),
                    None => format!("to {}", r.to.name),
                };
                self.node(d, "reveal", &text, r.span);
                self.expr(d + 1, &r.value);
            }
        }
    }

    fn expr(&mut self, d: usize, e: &Expr) {
        match e {
            Expr::Quant(q) => {
                self.node(d, q.op.text(), "", q.span);
                for b in &q.binders {
                    self.node(d + 1, "binder", &binder(b), b.span);
                }
                self.expr(d + 1, &q.body);
            }
            Expr::Or(a, b, s) | Expr::And(a, b, s) => {
                let kind = if matches!(e, Expr::Or(..)) {
                    "or"
                } else {
                    "and"
                };
                self.node(d, kind, "", *s);
                self.expr(d + 1, a);
                self.expr(d + 1, b);
            }
            Expr::Not(a, s) => {
                self.node(d, "not", "", *s);
                self.expr(d + 1, a);
            }
            Expr::Bool(b, s) => self.node(d, "bool", &b.to_string(), *s),
            Expr::If(i) => {
                self.node(d, "if", "", i.span);
                self.expr(d + 1, &i.cond);
                self.expr(d + 1, &i.then);
                self.expr(d + 1, &i.els);
            }
            Expr::FhdLt(f) => self.node(
                d,
                "fhd_lt",
                &format!(
                    "fhd({}, {}) < {}",
                    f.lhs.name,
                    f.rhs.name,
                    operand(&f.ratio)
                ),
                f.span,
            ),
            Expr::Cosine(c) => self.node(
                d,
                if c.strict { "cosine_gt" } else { "cosine_ge" },
                &format!(
                    "cosine({}, {}) {} {}",
                    c.lhs.name,
                    c.rhs.name,
                    if c.strict { ">" } else { ">=" },
                    bound(&c.tau)
                ),
                c.span,
            ),
            Expr::Name(n) => self.node(d, "name", &n.name, n.span),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outline_shows_every_statement_with_its_position() {
        let src = "const R = 0.345;\nparties a, b, c;\ngallery db: iris<256> public mask;\n\
                   query q: iris<256> public mask from a;\n\
                   reveal ids d in db: any c in rotations(q, -2..=2): fhd(c, d) < R to a;\n";
        let tree = print_tree(&crate::syntax::parse(src).unwrap(), src);
        let lines: Vec<&str> = tree.lines().map(str::trim).collect();
        assert!(
            lines[0].starts_with("module") && lines[0].ends_with("1:1"),
            "{tree}"
        );
        assert!(
            lines[1].starts_with("const R = 0.345") && lines[1].ends_with("1:1"),
            "{tree}"
        );
        assert!(
            lines[2].starts_with("parties a, b, c") && lines[2].ends_with("2:1"),
            "{tree}"
        );
        assert!(
            lines[3].starts_with("gallery db: iris<256> public mask"),
            "{tree}"
        );
        assert!(
            lines[4].starts_with("query q: iris<256> public mask from a"),
            "{tree}"
        );
        assert!(
            lines[5].starts_with("reveal to a") && lines[5].ends_with("5:1"),
            "{tree}"
        );
        assert!(
            lines[6].starts_with("ids") && lines[6].ends_with("5:8"),
            "{tree}"
        );
        assert!(
            lines[7].starts_with("binder d in db") && lines[7].ends_with("5:12"),
            "{tree}"
        );
        assert!(lines[8].starts_with("any"), "{tree}");
        assert!(
            lines[9].starts_with("binder c in rotations(q, -2..=2)"),
            "{tree}"
        );
        assert!(lines[10].starts_with("fhd_lt fhd(c, d) < R"), "{tree}");
    }

    #[test]
    fn outline_of_the_v2_constructs() {
        let src = "query t: bit from a;\ngallery v: embedding<16> scale 4;\n\
                   reveal count (l, r) in zip(x, y): not (if t { true } else { cosine(w, l) > -0.5 }) \
                   to a as n;\n";
        let tree = print_tree(&crate::syntax::parse(src).unwrap(), src);
        let lines: Vec<&str> = tree.lines().map(str::trim).collect();
        assert!(lines[1].starts_with("query t: bit from a"), "{tree}");
        assert!(
            lines[2].starts_with("gallery v: embedding<16> scale 4"),
            "{tree}"
        );
        assert!(lines[3].starts_with("reveal to a as n"), "{tree}");
        assert!(lines[4].starts_with("count"), "{tree}");
        assert!(lines[5].starts_with("binder (l, r) in zip(x, y)"), "{tree}");
        assert!(lines[6].starts_with("not"), "{tree}");
        assert!(lines[7].starts_with("if"), "{tree}");
        assert!(lines[8].starts_with("name t"), "{tree}");
        assert!(lines[9].starts_with("bool true"), "{tree}");
        assert!(
            lines[10].starts_with("cosine_gt cosine(w, l) > -0.5"),
            "{tree}"
        );
    }
}
