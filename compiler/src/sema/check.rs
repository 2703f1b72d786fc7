//! The checker: a parsed module to a typed [`Program`], or every error found.

use super::consts::{int_operand, literal_value};
use super::decision::{Resolver, Var, VarKind};
use super::names::{Globals, SymbolKind};
use super::legacy::*;
use crate::syntax::ast::{self, InputKind, Item, MaskAnn, RevealBody};
use crate::syntax::{Diagnostic, Span};

/// Longest supported iris code: the dot products and thresholds stay far inside 64-bit rings.
pub const MAX_CODE_BITS: i64 = 1 << 20;

/// Checks names, parties, constants, inputs and reveals; collects all independent errors.
pub fn check(
    file_name: &str,
    source: &str,
    module: &ast::Module,
) -> Result<Program, Vec<Diagnostic>> {
    let mut errors = Vec::new();
    let mut globals = Globals::default();
    let mut parties_items = Vec::new();
    let mut input_items = Vec::new();
    for item in &module.items {
        let declared = match item {
            Item::Const(c) => globals.declare(&c.name, SymbolKind::Const(c)),
            Item::Parties(p) => {
                parties_items.push(p);
                p.names
                    .iter()
                    .enumerate()
                    .try_for_each(|(i, n)| globals.declare(n, SymbolKind::Party(i)))
            }
            Item::Input(i) => {
                input_items.push(i);
                globals.declare(&i.name, SymbolKind::Input(input_items.len() - 1, i))
            }
            Item::Let(l) => globals.declare(&l.name, SymbolKind::Let(l)),
            Item::Reveal(_) => Ok(()),
        };
        errors.extend(declared.err());
    }

    let parties = check_parties(&parties_items, source)
        .map_err(|e| errors.push(e))
        .ok();

    for item in &module.items {
        if let Item::Const(c) = item {
            errors.extend(literal_value(&c.value).err());
        }
    }
    let consts = module
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Const(c) => literal_value(&c.value).ok().map(|value| ConstDecl {
                name: c.name.name.clone(),
                value,
            }),
            _ => None,
        })
        .collect();

    let inputs: Vec<Option<Input>> = input_items
        .iter()
        .map(|i| check_input(i, &globals).map_err(|e| errors.push(e)).ok())
        .collect();

    let mut resolver = Resolver {
        globals: &globals,
        inputs: &inputs,
        expanding: Vec::new(),
    };
    // Every `let` is checked, used or not, so that a mistake is not hidden until it is revealed.
    for item in &module.items {
        if let Item::Let(l) = item {
            errors.extend(resolver.decision(&l.value, &mut Vec::new()).err());
        }
    }
    let mut reveals = Vec::new();
    for item in &module.items {
        if let Item::Reveal(r) = item {
            match check_reveal(r, &mut resolver) {
                Ok(rv) => reveals.push(rv),
                Err(e) => errors.push(e),
            }
        }
    }
    let has_reveal = module.items.iter().any(|i| matches!(i, Item::Reveal(_)));
    if !has_reveal {
        let end = source.len();
        errors.push(
            Diagnostic::error("the program reveals nothing", Span::new(end, end))
                .with_label("expected a `reveal` statement")
                .with_hint("add e.g. `reveal ids d in db: fhd(q, d) < 0.345 to p0;`"),
        );
    }

    // A broken `let` is reported where it is checked and again where it is revealed.
    let mut unique: Vec<Diagnostic> = Vec::new();
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    let errors = unique;
    match parties {
        Some(parties) if errors.is_empty() => Ok(Program {
            name: program_name(file_name),
            parties,
            consts,
            inputs: inputs.into_iter().flatten().collect(),
            reveals,
        }),
        _ => Err(errors),
    }
}

/// The file stem: `examples/iris_ids.irs` -> `iris_ids`.
fn program_name(file_name: &str) -> String {
    std::path::Path::new(file_name).file_stem().map_or_else(
        || file_name.to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}

fn check_parties(items: &[&ast::PartiesItem], source: &str) -> Result<[String; 3], Diagnostic> {
    let Some(first) = items.first() else {
        return Err(Diagnostic::error(
            "no `parties` declaration",
            Span::new(0, source.len().min(1)),
        )
        .with_label("the program must name its three computing parties")
        .with_hint("add `parties p0, p1, p2;` (in `--party` order)"));
    };
    if let Some(second) = items.get(1) {
        return Err(
            Diagnostic::error("`parties` is declared twice", second.span)
                .with_label("second declaration")
                .with_secondary(first.span, "first declared here"),
        );
    }
    match <[ast::Ident; 3]>::try_from(first.names.clone()) {
        Ok(names) => Ok(names.map(|n| n.name)),
        Err(names) => Err(Diagnostic::error(
            format!("expected exactly three parties, found {}", names.len()),
            first.span,
        )
        .with_label(format!("{} part{} declared", names.len(), if names.len() == 1 { "y" } else { "ies" }))
        .with_hint("the replicated three-party protocol runs with exactly three parties: `parties p0, p1, p2;`")),
    }
}

fn check_input(item: &ast::InputItem, globals: &Globals) -> Result<Input, Diagnostic> {
    let bits_span = item.ty.bits.span();
    let bits = int_operand(&item.ty.bits, globals, "a code length")?;
    if bits <= 0 || bits % 64 != 0 || bits > MAX_CODE_BITS {
        let why = if bits <= 0 {
            "must be positive".to_string()
        } else if bits > MAX_CODE_BITS {
            format!("at most {MAX_CODE_BITS} bits are supported")
        } else {
            format!("{bits} is not a multiple of 64")
        };
        return Err(Diagnostic::error(format!("invalid code length {bits}"), bits_span)
            .with_label(why)
            .with_hint("an iris code is 16 rows x columns x 4 bits, so its length is a multiple of 64 (e.g. 12800 = 16 x 200 x 4)"));
    }
    if item.ty.mask == MaskAnn::Secret {
        return Err(
            Diagnostic::error("secret masks are not supported yet", item.ty.mask_span)
                .with_label("only public masks are implemented")
                .with_hint(
                    "declare `public mask`: the parties then see the masks in plain (Section 4)",
                ),
        );
    }
    let role = match &item.kind {
        InputKind::Gallery => InputRole::Gallery,
        InputKind::Query { from } => InputRole::Query {
            owner: party(from, globals)?,
        },
    };
    Ok(Input {
        name: item.name.name.clone(),
        role,
        code_bits: bits as u32,
        mask: MaskKind::Public,
        span: item.span,
    })
}

/// The index of party `name`, or an error naming the parties.
fn party(name: &ast::Ident, globals: &Globals) -> Result<usize, Diagnostic> {
    match globals.get(&name.name) {
        Some(sym) => match sym.kind {
            SymbolKind::Party(i) => Ok(i),
            other => Err(Diagnostic::error(
                format!("`{}` is {}, not a party", name.name, other.describe()),
                name.span,
            )
            .with_label("a party is expected here")
            .with_secondary(sym.span, "declared here")),
        },
        None => Err(globals.unknown(name, "party", &[], |k| matches!(k, SymbolKind::Party(_)))),
    }
}

fn check_reveal(r: &ast::RevealItem, resolver: &mut Resolver) -> Result<Reveal, Diagnostic> {
    let (decision, shape) = match &r.body {
        RevealBody::Value(e) => (resolver.decision(e, &mut Vec::new())?, RevealShape::AnyBit),
        RevealBody::Ids { binder, body } => {
            let var = resolver.bind(binder, &[])?;
            if !matches!(var.kind, VarKind::Record { .. }) {
                return Err(Diagnostic::error(
                    "`reveal ids` must range over a gallery",
                    binder.span,
                )
                .with_label("not a gallery's records")
                .with_hint("write `reveal ids d in db: ... to p0;`"));
            }
            let mut env: Vec<Var> = vec![var];
            let d = resolver.decision(body, &mut env)?;
            if !env[0].used {
                return Err(Diagnostic::error(
                    format!("record variable `{}` is never used", binder.name.name),
                    binder.name.span,
                )
                .with_label("bound here")
                .with_secondary(body.span(), "the condition does not mention it"));
            }
            (d, RevealShape::MatchingIds)
        }
    };
    // A condition with no record variable (e.g. `fhd(q, q)`) is rejected in `fhd` already.
    let to = party(&r.to, resolver.globals)?;
    Ok(Reveal {
        decision,
        shape,
        to,
        span: r.span,
    })
}
