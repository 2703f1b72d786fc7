//! Lowering of the typed [`Program`] to the `irs` dialect.
//!
//! The module holds one `func.func @query()`: the program as it applies to one query. Its body
//! declares every input once (`irs.gallery`, `irs.query`), then one chain per `reveal`:
//!
//! ```mlir
//! %2 = "irs.rotate"(%1) {hi = 15 : i64, lo = -15 : i64} : (!irs.code<12800>) -> !irs.codes<12800>
//! %3 = "irs.fhd_lt"(%2, %0) {ratio_den = 200 : i64, ratio_num = 69 : i64} : (...) -> !irs.secret_matrix
//! %4 = "irs.any"(%3) {over = "all"} : (!irs.secret_matrix) -> !irs.secret_bit
//! "irs.reveal"(%4) {shape = "any", to = 0 : i64} : (!irs.secret_bit) -> ()
//! ```
//! The front end has already checked names and types; the checks here guard the contract
//! (indices, roles, lengths) so a malformed `Program` is an error, not a panic.

use crate::mlir::{int_attr, parse_type, str_attr, Compiler, MlirError};
use crate::sema::{Input, InputRole, MaskKind, Program, RevealShape};
use crate::syntax::Span;
use melior::{
    dialect::func,
    ir::{
        attribute::{StringAttribute, TypeAttribute},
        block::BlockLike,
        operation::{OperationBuilder, OperationLike},
        r#type::FunctionType,
        Block, Location, Module, Region, RegionLike, Type, Value,
    },
};

#[derive(Debug, thiserror::Error)]
pub enum LowerError {
    #[error("invalid program: {0}")]
    Invalid(String),
    #[error("{0}")]
    Mlir(#[from] MlirError),
}

fn invalid(msg: impl Into<String>) -> LowerError {
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
    let ctx = cx.context();
    let file = format!("{}.irs", program.name);
    let loc = |span: Span| location(cx, &file, source, span);
    let module = Module::new(cx.unknown_location());
    let block = Block::new(&[]);

    let mut inputs: Vec<Value> = Vec::new();
    for input in &program.inputs {
        let op = input_op(cx, input, loc(input.span))?;
        inputs.push(
            block
                .append_operation(op)
                .result(0)
                .map_err(|e| invalid(e.to_string()))?
                .into(),
        );
    }

    for reveal in &program.reveals {
        let d = &reveal.decision;
        let (q, g) = match (program.inputs.get(d.query), program.inputs.get(d.gallery)) {
            (Some(q), Some(g)) => (q, g),
            _ => return Err(invalid("a decision names an input that does not exist")),
        };
        if !matches!(q.role, InputRole::Query { .. }) || g.role != InputRole::Gallery {
            return Err(invalid(format!(
                "`fhd` compares a query with a gallery, not `{}` with `{}`",
                q.name, g.name
            )));
        }
        if q.code_bits != g.code_bits {
            return Err(invalid(format!(
                "`{}` has {} bits per code but `{}` has {}",
                q.name, q.code_bits, g.name, g.code_bits
            )));
        }
        if d.rot_lo > d.rot_hi {
            return Err(invalid(format!(
                "empty rotation range {}..={}",
                d.rot_lo, d.rot_hi
            )));
        }
        if d.ratio.den == 0 || d.ratio.num > d.ratio.den {
            return Err(invalid(format!(
                "match ratio {}/{} is not in [0, 1]",
                d.ratio.num, d.ratio.den
            )));
        }
        if reveal.to >= 3 {
            return Err(invalid(format!(
                "party {} does not exist (parties are 0, 1, 2)",
                reveal.to
            )));
        }
        let l = q.code_bits;
        let at = loc(d.span);
        let rotated = block.append_operation(
            OperationBuilder::new("irs.rotate", at)
                .add_operands(&[inputs[d.query]])
                .add_attributes(&[
                    int_attr(ctx, "lo", d.rot_lo.into()),
                    int_attr(ctx, "hi", d.rot_hi.into()),
                ])
                .add_results(&[parse_type(ctx, &format!("!irs.codes<{l}>")).map_err(invalid)?])
                .build()
                .map_err(|e| invalid(e.to_string()))?,
        );
        let matrix = block.append_operation(
            OperationBuilder::new("irs.fhd_lt", at)
                .add_operands(&[value(&rotated)?, inputs[d.gallery]])
                .add_attributes(&[
                    int_attr(ctx, "ratio_num", d.ratio.num as i64),
                    int_attr(ctx, "ratio_den", d.ratio.den as i64),
                ])
                .add_results(&[parse_type(ctx, "!irs.secret_matrix").map_err(invalid)?])
                .build()
                .map_err(|e| invalid(e.to_string()))?,
        );
        let (over, result, shape) = match reveal.shape {
            RevealShape::AnyBit => ("all", "!irs.secret_bit", "any"),
            RevealShape::MatchingIds => ("rotations", "!irs.secret_bits", "ids"),
        };
        let at = loc(reveal.span);
        let any = block.append_operation(
            OperationBuilder::new("irs.any", at)
                .add_operands(&[value(&matrix)?])
                .add_attributes(&[str_attr(ctx, "over", over)])
                .add_results(&[parse_type(ctx, result).map_err(invalid)?])
                .build()
                .map_err(|e| invalid(e.to_string()))?,
        );
        block.append_operation(
            OperationBuilder::new("irs.reveal", at)
                .add_operands(&[value(&any)?])
                .add_attributes(&[
                    int_attr(ctx, "to", reveal.to as i64),
                    str_attr(ctx, "shape", shape),
                ])
                .build()
                .map_err(|e| invalid(e.to_string()))?,
        );
    }
    block.append_operation(func::r#return(&[], cx.unknown_location()));
    drop(inputs);

    let region = Region::new();
    region.append_block(block);
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

fn value<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Result<Value<'c, 'a>, LowerError> {
    Ok(op.result(0).map_err(|e| invalid(e.to_string()))?.into())
}

fn input_op<'c>(
    cx: &'c Compiler,
    input: &Input,
    at: Location<'c>,
) -> Result<melior::ir::Operation<'c>, LowerError> {
    let ctx = cx.context();
    let mask = match input.mask {
        MaskKind::Public => "public",
        MaskKind::Secret => "secret",
    };
    let l = input.code_bits;
    if l == 0 || !l.is_multiple_of(64) {
        return Err(invalid(format!(
            "`{}` has {l} bits per code; it must be a positive multiple of 64",
            input.name
        )));
    }
    let mut attrs = vec![
        str_attr(ctx, "name", &input.name),
        int_attr(ctx, "code_bits", l.into()),
        str_attr(ctx, "mask", mask),
    ];
    let (name, ty): (&str, Type) = match input.role {
        InputRole::Gallery => (
            "irs.gallery",
            parse_type(ctx, &format!("!irs.db<{l}>")).map_err(invalid)?,
        ),
        InputRole::Query { owner } => {
            if owner >= 3 {
                return Err(invalid(format!(
                    "`{}` comes from party {owner}, which does not exist",
                    input.name
                )));
            }
            attrs.push(int_attr(ctx, "owner", owner as i64));
            (
                "irs.query",
                parse_type(ctx, &format!("!irs.code<{l}>")).map_err(invalid)?,
            )
        }
    };
    OperationBuilder::new(name, at)
        .add_attributes(&attrs)
        .add_results(&[ty])
        .build()
        .map_err(|e| invalid(e.to_string()))
}

/// `file:line:col` of the start of `span` (1-based), or an unknown location for an empty source.
fn location<'c>(cx: &'c Compiler, file: &str, source: &str, span: Span) -> Location<'c> {
    if source.is_empty() || span.start > source.len() {
        return cx.unknown_location();
    }
    let before = &source[..span.start.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Location::new(cx.context(), file, line, col)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sema::{ConstDecl, ConstValue, Decision, Ratio, Reveal};

    /// The example program of the README, built by hand (the parser is another stage).
    pub(crate) fn example_program(shape: RevealShape) -> Program {
        let ratio = Ratio {
            num: 345,
            den: 1000,
        };
        Program {
            name: "dedup".into(),
            parties: ["p0".into(), "p1".into(), "p2".into()],
            consts: vec![
                ConstDecl {
                    name: "CODE_BITS".into(),
                    value: ConstValue::Int(12800),
                },
                ConstDecl {
                    name: "MATCH_RATIO".into(),
                    value: ConstValue::Ratio(ratio),
                },
            ],
            inputs: vec![
                Input {
                    name: "db".into(),
                    role: InputRole::Gallery,
                    code_bits: 12800,
                    mask: MaskKind::Public,
                    span: Span::default(),
                },
                Input {
                    name: "q".into(),
                    role: InputRole::Query { owner: 0 },
                    code_bits: 12800,
                    mask: MaskKind::Public,
                    span: Span::default(),
                },
            ],
            reveals: vec![Reveal {
                decision: Decision {
                    query: 1,
                    gallery: 0,
                    rot_lo: -15,
                    rot_hi: 15,
                    ratio,
                    span: Span::default(),
                },
                shape,
                to: 0,
                span: Span::default(),
            }],
        }
    }

    #[test]
    fn lowers_the_example() {
        let cx = Compiler::new().unwrap();
        let m = lower_program(&cx, &example_program(RevealShape::AnyBit), "").unwrap();
        let text = m.as_operation().to_string();
        for needle in [
            r#""irs.gallery"() {code_bits = 12800 : i64, mask = "public", name = "db"} : () -> !irs.db<12800 : i64>"#,
            r#""irs.rotate"(%1) {hi = 15 : i64, lo = -15 : i64}"#,
            r#""irs.fhd_lt"(%2, %0) {ratio_den = 1000 : i64, ratio_num = 345 : i64}"#,
            r#""irs.any"(%3) {over = "all"} : (!irs.secret_matrix) -> !irs.secret_bit"#,
            r#""irs.reveal"(%4) {shape = "any", to = 0 : i64}"#,
        ] {
            assert!(text.contains(needle), "missing {needle} in\n{text}");
        }
    }

    #[test]
    fn ids_reveal_ors_over_rotations() {
        let cx = Compiler::new().unwrap();
        let text = lower_program(&cx, &example_program(RevealShape::MatchingIds), "")
            .unwrap()
            .as_operation()
            .to_string();
        assert!(
            text.contains(r#"{over = "rotations"} : (!irs.secret_matrix) -> !irs.secret_bits"#),
            "{text}"
        );
    }

    #[test]
    fn rejects_malformed_programs() {
        let cx = Compiler::new().unwrap();
        let mut p = example_program(RevealShape::AnyBit);
        p.inputs[0].code_bits = 640;
        assert!(lower_program(&cx, &p, "")
            .unwrap_err()
            .to_string()
            .contains("bits per code"));
        let mut p = example_program(RevealShape::AnyBit);
        p.reveals[0].decision.gallery = 1;
        assert!(lower_program(&cx, &p, "").is_err());
        let mut p = example_program(RevealShape::AnyBit);
        p.reveals[0].to = 3;
        assert!(lower_program(&cx, &p, "").is_err());
        let mut p = example_program(RevealShape::AnyBit);
        p.reveals.clear();
        assert!(lower_program(&cx, &p, "").is_err());
    }
}
