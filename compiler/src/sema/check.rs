//! The checker: a parsed module to a typed [`Program`] (v2), or every error found.

use super::consts::literal_value;
use super::inputs::{check_input, check_parties, party};
use super::names::{Globals, SymbolKind};
use super::program::*;
use super::resolver::{Resolver, RevealValue};
use crate::syntax::ast::{self, Item};
use crate::syntax::{Diagnostic, Span};
use irisc_runtime::contract::{MATCH_FIELD, RESERVED_OUTPUT_FIELDS};
use irisc_runtime::vocab::InputRole;

/// Checks names, parties, constants, inputs, `let`s and reveals; collects all independent errors
/// (one per declaration or statement).
pub fn check_program(
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

    let mut consts = Vec::new();
    for item in &module.items {
        if let Item::Const(c) = item {
            match literal_value(&c.value) {
                Ok(value) => consts.push(ConstDecl {
                    name: c.name.name.clone(),
                    value,
                }),
                Err(e) => errors.push(e),
            }
        }
    }

    let inputs: Vec<Option<Input>> = input_items
        .iter()
        .map(|i| check_input(i, &globals).map_err(|e| errors.push(e)).ok())
        .collect();
    let has_query = input_items.iter().any(|i| i.role == InputRole::Query);
    if !has_query {
        let at = input_items
            .first()
            .map_or(Span::new(0, source.len().min(1)), |i| i.span);
        errors.push(
            Diagnostic::error("the program has no query input", at)
                .with_label("every reveal is answered once per query of the batch")
                .with_hint("declare the batch, e.g. `query q: iris<12800> public mask from p0;`"),
        );
    }

    let mut resolver = Resolver::new(&globals, &inputs);
    // Every `let` is checked, used or not, so that a mistake is not hidden until it is revealed;
    // its binders are entered again at each use (a `let` is inlined).
    for item in &module.items {
        if let Item::Let(l) = item {
            let mark = resolver.binders.len();
            errors.extend(resolver.reveal(&l.value).err());
            resolver.binders.truncate(mark);
        }
    }
    let mut checked: Vec<(RevealValue, usize, &ast::RevealItem)> = Vec::new();
    for item in &module.items {
        if let Item::Reveal(r) = item {
            let value = resolver.reveal(&r.value);
            let to = party(&r.to, &globals);
            match (value, to) {
                (Ok(v), Ok(to)) => checked.push((v, to, r)),
                (v, to) => errors.extend(v.err().into_iter().chain(to.err())),
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
    let labels = labels(&checked).map_err(|e| errors.extend(e)).ok();
    let binders = resolver.binders;

    // A broken `let` is reported where it is checked and again where it is revealed.
    let mut unique: Vec<Diagnostic> = Vec::new();
    for e in errors {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    match (parties, labels) {
        (Some(parties), Some(labels)) if unique.is_empty() => {
            let reveals = checked
                .into_iter()
                .zip(labels)
                .map(|((v, to, r), label)| Reveal {
                    shape: v.shape,
                    records: v.records,
                    value: v.value,
                    to,
                    label,
                    span: r.span,
                })
                .collect();
            Ok(Program {
                name: program_name(file_name),
                parties,
                consts,
                inputs: inputs.into_iter().flatten().collect(),
                binders,
                reveals,
            })
        }
        _ => Err(unique),
    }
}

/// The JSON field of each reveal (ARCHITECTURE.md §7): `as NAME` if given; otherwise, for the first
/// reveal to a party, `match` (bit), `ids` (ids) or `count` (count); for later ones to the same
/// party, the `let` name revealed or `reveal<i>` (`i` = the reveal's 0-based index in the
/// program). The first ids or bit output to a party also prints `match` (README "Outputs"), so
/// that field is taken too; only a bit output may be named `match`, and the fields the runtime
/// writes itself ([`RESERVED_OUTPUT_FIELDS`]) name no output.
fn labels(
    reveals: &[(RevealValue, usize, &ast::RevealItem)],
) -> Result<Vec<String>, Vec<Diagnostic>> {
    let mut taken: Vec<(usize, String, Span)> = Vec::new();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, (v, to, r)) in reveals.iter().enumerate() {
        let first_to_party = !reveals[..i].iter().any(|(_, t, _)| t == to);
        let (label, span) = match &r.label {
            Some(l) => (l.name.clone(), l.span),
            None if first_to_party => (
                match v.shape {
                    RevealShape::Bit => "match",
                    RevealShape::Ids => "ids",
                    RevealShape::Count => "count",
                }
                .to_string(),
                r.span,
            ),
            None => (
                v.let_name.clone().unwrap_or_else(|| format!("reveal{i}")),
                r.span,
            ),
        };
        if RESERVED_OUTPUT_FIELDS.contains(&label.as_str()) {
            errors.push(
                Diagnostic::error(format!("`{label}` cannot name an output"), span)
                    .with_label("reserved")
                    .with_hint("each output object starts with `\"query\": i, \"id\": ...`, and `irisc run` adds `\"party\"` and `\"complete\"`; choose another name with `as NAME`"),
            );
        }
        let first_found = !reveals[..i]
            .iter()
            .any(|(w, t, _)| t == to && w.shape != RevealShape::Count);
        // When an earlier output took `match`, the duplicate-name error below says so.
        if label == MATCH_FIELD && v.shape != RevealShape::Bit && first_found {
            errors.push(
                Diagnostic::error(
                    format!("only a bit output can be named `{MATCH_FIELD}`"),
                    span,
                )
                .with_label(if v.shape == RevealShape::Ids {
                    "an ids output"
                } else {
                    "a count output"
                })
                .with_hint("`match` says whether the query matched (true or false); choose another name with `as NAME`"),
            );
        }
        let mut fields = vec![label.clone()];
        if v.shape != RevealShape::Count && first_found && label != MATCH_FIELD {
            fields.push(MATCH_FIELD.to_string());
        }
        for f in &fields {
            if let Some((_, _, prev)) = taken.iter().find(|(p, n, _)| p == to && n == f) {
                errors.push(
                    Diagnostic::error(
                        format!("two outputs to the same party are named `{f}`"),
                        span,
                    )
                    .with_label(format!("also printed as `{f}`"))
                    .with_secondary(*prev, "the first one")
                    .with_hint(
                        "name this output with `as NAME`, e.g. `reveal ... to p0 as second;`",
                    ),
                );
            }
        }
        for f in fields {
            taken.push((*to, f, span));
        }
        out.push(label);
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The file stem: `examples/iris_ids.irs` -> `iris_ids`.
fn program_name(file_name: &str) -> String {
    std::path::Path::new(file_name).file_stem().map_or_else(
        || file_name.to_string(),
        |s| s.to_string_lossy().into_owned(),
    )
}
