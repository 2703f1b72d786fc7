//! Declarations: the three parties and the inputs (`gallery` / `query`) with their types.

use super::consts::int_operand;
use super::names::{Globals, SymbolKind};
use super::program::{Input, InputType, MaskKind};
use crate::syntax::ast::{self, MaskAnn, TypeAnn};
use crate::syntax::{Diagnostic, Span};
use irisc_runtime::vocab::InputRole;

/// Longest supported iris code: the dot products and thresholds stay far inside 64-bit rings.
pub const MAX_CODE_BITS: i64 = 1 << 20;
/// Largest embedding dimension: `dim * 2^(2 * scale)` products stay inside the cosine rings.
pub const MAX_EMBEDDING_DIM: i64 = 1 << 16;
/// Largest fixed-point scale of an embedding (`round(v * 2^scale)`).
pub const MAX_SCALE_BITS: i64 = 16;
/// The scale of `embedding<DIM>` written without `scale`.
pub const DEFAULT_SCALE_BITS: u32 = 8;

pub fn check_parties(items: &[&ast::PartiesItem], source: &str) -> Result<[String; 3], Diagnostic> {
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
                .with_secondary(first.span, "first declared here")
                .with_hint("keep one `parties a, b, c;` line"),
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

pub fn check_input(item: &ast::InputItem, globals: &Globals) -> Result<Input, Diagnostic> {
    let ty = match &item.ty {
        TypeAnn::Iris(t) => iris(t, globals)?,
        TypeAnn::Embedding(e) => embedding(e, globals)?,
        TypeAnn::Bit(_) => InputType::Bit,
    };
    let owner = match &item.from {
        Some(from) => Some(party(from, globals)?),
        None => None,
    };
    Ok(Input {
        name: item.name.name.clone(),
        role: item.role,
        owner,
        ty,
        span: item.span,
    })
}

fn iris(t: &ast::IrisType, globals: &Globals) -> Result<InputType, Diagnostic> {
    let bits = int_operand(&t.bits, globals, "a code length")?;
    if bits <= 0 || bits % 64 != 0 || bits > MAX_CODE_BITS {
        let why = if bits <= 0 {
            "must be positive".to_string()
        } else if bits > MAX_CODE_BITS {
            format!("at most {MAX_CODE_BITS} bits are supported")
        } else {
            format!("{bits} is not a multiple of 64")
        };
        return Err(Diagnostic::error(format!("invalid code length {bits}"), t.bits.span())
            .with_label(why)
            .with_hint("an iris code is 16 rows x columns x 4 bits, so its length is a multiple of 64 (e.g. 12800 = 16 x 200 x 4)"));
    }
    let mask = match t.mask {
        MaskAnn::Public => MaskKind::Public,
        MaskAnn::Secret => MaskKind::Secret,
    };
    Ok(InputType::Iris {
        code_bits: bits as u32,
        mask,
    })
}

fn embedding(e: &ast::EmbeddingType, globals: &Globals) -> Result<InputType, Diagnostic> {
    let dim = int_operand(&e.dim, globals, "an embedding dimension")?;
    if !(1..=MAX_EMBEDDING_DIM).contains(&dim) {
        return Err(
            Diagnostic::error(format!("invalid embedding dimension {dim}"), e.dim.span())
                .with_label(format!("must lie in 1..={MAX_EMBEDDING_DIM}"))
                .with_hint("write the number of components of each vector, e.g. `embedding<192>`"),
        );
    }
    let scale_bits = match &e.scale {
        None => DEFAULT_SCALE_BITS,
        Some(s) => {
            let v = int_operand(s, globals, "a scale")?;
            if !(0..=MAX_SCALE_BITS).contains(&v) {
                return Err(Diagnostic::error(format!("invalid scale {v}"), s.span())
                    .with_label(format!("must lie in 0..={MAX_SCALE_BITS}"))
                    .with_hint(format!(
                        "components are stored as round(v * 2^scale); the default `scale {DEFAULT_SCALE_BITS}` keeps the cosine rings small"
                    )));
            }
            v as u32
        }
    };
    Ok(InputType::Embedding {
        dim: dim as u32,
        scale_bits,
    })
}

/// The index of party `name`, or an error naming the parties.
pub fn party(name: &ast::Ident, globals: &Globals) -> Result<usize, Diagnostic> {
    match globals.get(&name.name) {
        Some(sym) => match sym.kind {
            SymbolKind::Party(i) => Ok(i),
            other => Err(Diagnostic::error(
                format!("`{}` is {}, not a party", name.name, other.describe()),
                name.span,
            )
            .with_label("a party is expected here")
            .with_secondary(sym.span, "declared here")
            .with_hint("name one of the parties declared with `parties`")),
        },
        None => Err(globals.unknown(name, "party", &[], |k| matches!(k, SymbolKind::Party(_)))),
    }
}

/// How an input's type is named in messages: "an iris query", "a gallery of embeddings".
pub fn describe(input: &Input) -> String {
    let kind = match input.ty {
        InputType::Iris { .. } => "iris",
        InputType::Embedding { .. } => "embedding",
        InputType::Bit => "bit",
    };
    match input.role {
        InputRole::Gallery => format!("a gallery of {kind} records"),
        InputRole::Query => {
            format!("{} {kind} query", if kind == "bit" { "a" } else { "an" })
        }
    }
}

/// The type as written: `iris<256> secret mask`.
pub fn type_text(ty: &InputType) -> String {
    match *ty {
        InputType::Iris { code_bits, mask } => format!(
            "iris<{code_bits}> {} mask",
            match mask {
                MaskKind::Public => "public",
                MaskKind::Secret => "secret",
            }
        ),
        InputType::Embedding { dim, scale_bits } => format!("embedding<{dim}> scale {scale_bits}"),
        InputType::Bit => "bit".to_string(),
    }
}
