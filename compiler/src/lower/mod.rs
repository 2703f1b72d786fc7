//! Lowering of the typed [`Program`] to the `irs` dialect.
//!
//! The module (with `irs.parties`, the number of parties the program declares) holds one
//! `func.func @query()`: the program as it applies to the current query.
//! Every operand is materialised once (`irs.query_value`, `irs.records`, `irs.rotate`), then
//! every reveal becomes a chain of comparisons and boolean ops ending in `irs.reveal`:
//!
//! ```mlir
//! %0 = "irs.query_value"() {input = 1, kind = "iris", name = "q", owner = 0} : () -> !irs.code<12800>
//! %1 = "irs.rotate"(%0) {hi = 15, lo = -15} : (!irs.code<12800>) -> !irs.codes<12800>
//! %2 = "irs.records"() {input = 0, name = "db", source = "gallery"} : () -> !irs.codes<12800>
//! %3 = "irs.fhd_lt"(%1, %2) {mask = "public", ratio_den = 200, ratio_num = 69} : (...) -> !irs.bits
//! %4 = "irs.any"(%3) {group = 31} : (!irs.bits) -> !irs.bits
//! "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0} : (!irs.bits, !irs.codes<12800>) -> ()
//! ```
//!
//! Secret bits are laid out record-major, rotation-minor ([`layout::Layout`]); quantifiers
//! become `irs.any`/`irs.all` over groups of that layout. The front end has checked names and
//! types; the checks here guard the contract, so a malformed `Program` is an error, not a panic.

mod expr;
pub mod layout;

use crate::mlir::{parse_type, Compiler, MlirError};
use crate::sema::program::{InputType, Program, RevealShape};
use crate::syntax::Span;
use melior::{
    dialect::func,
    ir::{
        attribute::{StringAttribute, TypeAttribute},
        block::BlockLike,
        operation::{OperationBuilder, OperationMutLike},
        r#type::FunctionType,
        Attribute, Block, Identifier, Location, Module, Region, RegionLike, Value,
    },
};

#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    #[error("invalid program: {0}")]
    Invalid(String),
    /// A program the front end accepted but this compiler cannot lower; points at the source.
    #[error("{message}")]
    Unsupported {
        message: String,
        hint: String,
        span: Span,
    },
    #[error("{0}")]
    Mlir(#[from] MlirError),
}

pub(crate) fn invalid(msg: impl Into<String>) -> LowerError {
    LowerError::Invalid(msg.into())
}

/// Lowers `program` to a verified `irs` module. `source` (the program text) only gives
/// operations their file locations.
pub fn lower_program<'c>(
    cx: &'c Compiler,
    program: &Program,
    source: &str,
) -> Result<Module<'c>, LowerError> {
    if program.reveals.is_empty() {
        return Err(invalid("the program reveals nothing"));
    }
    for input in &program.inputs {
        if let Some(owner) = input.owner {
            if owner >= 3 {
                return Err(invalid(format!(
                    "`{}` comes from party {owner}, which does not exist",
                    input.name
                )));
            }
        }
        if let InputType::Iris { code_bits, .. } = input.ty {
            if code_bits == 0 || !code_bits.is_multiple_of(64) {
                return Err(invalid(format!(
                    "`{}` has {code_bits} bits per code; it must be a positive multiple of 64",
                    input.name
                )));
            }
        }
    }
    let mut module = Module::new(cx.unknown_location());
    // The parties the program declares, for the backends (`irs.parties`).
    module.as_operation_mut().set_attribute(
        "irs.parties",
        int(cx.context(), "irs.parties", program.parties.len() as i64).1,
    );
    let block = Block::new(&[]);
    {
        let mut l = expr::Lowerer::new(cx, program, source, &block);
        for (i, reveal) in program.reveals.iter().enumerate() {
            l.reveal(i, reveal)?;
        }
    }
    block.append_operation(func::r#return(&[], cx.unknown_location()));
    let region = Region::new();
    region.append_block(block);
    let ctx = cx.context();
    let f = func::func(
        ctx,
        StringAttribute::new(ctx, "query"),
        TypeAttribute::new(FunctionType::new(ctx, &[], &[]).into()),
        region,
        &[],
        cx.unknown_location(),
    );
    module.body().append_operation(f);
    cx.verify(&module, "the lowered `irs` module")?;
    Ok(module)
}

/// Appends one op with the given operands, attributes and result types; returns its results.
pub(crate) fn append<'c, 'b>(
    block: &'b Block<'c>,
    cx: &'c Compiler,
    name: &str,
    at: Location<'c>,
    operands: &[Value<'c, 'b>],
    attrs: &[(Identifier<'c>, Attribute<'c>)],
    results: &[&str],
) -> Result<Vec<Value<'c, 'b>>, LowerError> {
    let types = results
        .iter()
        .map(|t| parse_type(cx.context(), t).map_err(invalid))
        .collect::<Result<Vec<_>, _>>()?;
    let op = OperationBuilder::new(name, at)
        .add_operands(operands)
        .add_attributes(attrs)
        .add_results(&types)
        .build()
        .map_err(|e| invalid(format!("building `{name}`: {e}")))?;
    let op = block.append_operation(op);
    (0..results.len())
        .map(|i| op.result(i).map(Into::into))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(e.to_string()))
}

pub(crate) fn shape_name(shape: RevealShape) -> &'static str {
    match shape {
        RevealShape::Bit => "bit",
        RevealShape::Ids => "ids",
        RevealShape::Count => "count",
    }
}

/// The range `file:line:col to line:col` of `span` (1-based), or an unknown location for an
/// empty source. Passes point their diagnostics at it.
pub(crate) fn location<'c>(cx: &'c Compiler, file: &str, source: &str, span: Span) -> Location<'c> {
    if source.is_empty() || span.start > source.len() {
        return cx.unknown_location();
    }
    crate::mlir::SourceRange::of_span(source, span).location(cx.context(), file)
}

pub(crate) use crate::mlir::{int_attr as int, str_attr as string};
