//! `irs-to-mpc`: lowers what the user wrote to what the parties compute (Algorithm 2, rep3).
//!
//! Each `irs` op becomes the `mpc` ops of its protocol, with shares typed by the ring that
//! `ring-select` chose. The module is split by when work happens: `@setup` loads the gallery
//! once per run, `@query` does the per-query work and receives the query number (for
//! `load_query` and `output`) and the loaded galleries as arguments.
//!
//! All comparisons of one program share one ring: the gallery shares are loaded once, in the
//! ring the manifest names, so k is the largest ring any comparison needs (a larger ring than
//! Lemma 1's minimum is always sound: the range still fits).
//!
//! Before (after `ring-select`):
//! ```mlir
//! func.func @query() {
//!   %0 = "irs.gallery"() {code_bits = 12800 : i64, mask = "public", name = "db"} : () -> !irs.db<12800 : i64>
//!   %1 = "irs.query"() {code_bits = 12800 : i64, mask = "public", name = "q", owner = 0 : i64} : () -> !irs.code<12800 : i64>
//!   %2 = "irs.rotate"(%1) {hi = 15 : i64, lo = -15 : i64} : (!irs.code<12800 : i64>) -> !irs.codes<12800 : i64>
//!   %3 = "irs.fhd_lt"(%2, %0) {range_hi = 16768 : i64, range_lo = -8832 : i64, ratio_den = 1000 : i64,
//!          ratio_num = 345 : i64, ring_bits = 16 : i64} : (...) -> !irs.secret_matrix
//!   %4 = "irs.any"(%3) {over = "all"} : (!irs.secret_matrix) -> !irs.secret_bit
//!   "irs.reveal"(%4) {shape = "any", to = 0 : i64} : (!irs.secret_bit) -> ()
//!   return
//! }
//! ```
//! After:
//! ```mlir
//! func.func @setup() -> !mpc.code<16 : i64> {
//!   %0 = "mpc.load_gallery"() {code_bits = 12800 : i64, name = "db"} : () -> !mpc.code<16 : i64>
//!   return %0 : !mpc.code<16 : i64>
//! }
//! func.func @query(%arg0: i64, %arg1: !mpc.code<16 : i64>) {
//!   %0 = "mpc.load_query"(%arg0) {code_bits = 12800 : i64, name = "q", owner = 0 : i64} : (i64) -> !mpc.code<16 : i64>
//!   %1 = "mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64} : (!mpc.code<16 : i64>) -> !mpc.code<16 : i64>
//!   %2 = "mpc.masked_dot"(%1, %arg1) {code_bits = 12800 : i64} : (...) -> !mpc.add<16 : i64>
//!   %3 = "mpc.reshare"(%2) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>
//!   %4 = "mpc.mask_len"(%1, %arg1) : (...) -> !mpc.pub<16 : i64>
//!   %5 = "mpc.sub_threshold"(%3, %4) {ratio_den = 1000 : i64, ratio_num = 345 : i64} : (...) -> !mpc.rep<16 : i64>
//!   %6 = "mpc.msb"(%5) : (!mpc.rep<16 : i64>) -> !mpc.bits
//!   %7 = "mpc.or_tree"(%6) {group = "all", rotations = 31 : i64} : (!mpc.bits) -> !mpc.bits
//!   %8 = "mpc.open"(%7) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits
//!   "mpc.output"(%arg0, %8) {shape = "any"} : (i64, !mpc.clear_bits) -> ()
//!   return
//! }
//! ```

use super::{Pass, PassError};
use crate::mlir::{get_int, get_str, int_attr, op_name, parse_type, str_attr, Compiler};
use melior::{
    dialect::func,
    ir::{
        attribute::{StringAttribute, TypeAttribute},
        block::BlockLike,
        operation::{OperationBuilder, OperationLike, OperationRef},
        r#type::{FunctionType, IntegerType},
        Block, Location, Module, Region, RegionLike, Type, Value, ValueLike,
    },
};
use std::collections::HashMap;

pub struct IrsToMpc;

const NAME: &str = "irs-to-mpc";

fn fail(message: impl Into<String>) -> PassError {
    PassError::Unsupported {
        pass: NAME,
        message: message.into(),
    }
}

impl Pass for IrsToMpc {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ops = query_ops(&module)?;
        let ring = module_ring(&ops)?;
        let out = Module::new(module.as_operation().location());
        let ctx = cx.context();
        let code_t = ty(cx, &format!("!mpc.code<{ring}>"))?;
        let i64_t: Type = IntegerType::new(ctx, 64).into();

        // @setup: every gallery, loaded once.
        let galleries: Vec<&OperationRef> = ops.iter().filter(|o| is(*o, "irs.gallery")).collect();
        let setup = Block::new(&[]);
        let mut loaded = Vec::new();
        for g in &galleries {
            check_public_mask(*g)?;
            let op = OperationBuilder::new("mpc.load_gallery", g.location())
                .add_attributes(&[
                    str_attr(ctx, "name", &get_str(*g, "name").map_err(fail)?),
                    int_attr(ctx, "code_bits", get_int(*g, "code_bits").map_err(fail)?),
                ])
                .add_results(&[code_t])
                .build()
                .map_err(|e| fail(e.to_string()))?;
            loaded.push(result(&setup.append_operation(op))?);
        }
        setup.append_operation(func::r#return(&loaded, cx.unknown_location()));
        drop(loaded);
        let gallery_types = vec![code_t; galleries.len()];
        out.body()
            .append_operation(function(cx, "setup", &[], &gallery_types, setup));

        // @query(%query: i64, %galleries...): the rest, op by op.
        let mut arg_types = vec![(i64_t, cx.unknown_location())];
        arg_types.extend(gallery_types.iter().map(|t| (*t, cx.unknown_location())));
        let body = Block::new(&arg_types);
        let query_index: Value = body.argument(0).map_err(|e| fail(e.to_string()))?.into();
        let mut map: HashMap<usize, Value> = HashMap::new();
        // Number of rotations behind each value: or_tree and the runtime need the group size.
        let mut rotations: HashMap<usize, i64> = HashMap::new();
        for (i, g) in galleries.iter().enumerate() {
            map.insert(
                key(result(*g)?),
                body.argument(i + 1)
                    .map_err(|e| fail(e.to_string()))?
                    .into(),
            );
        }
        let mut queries = 0;
        for op in &ops {
            let name = op_name(op);
            let at = op.location();
            let operand = |i: usize| -> Result<Value, PassError> {
                let v = op.operand(i).map_err(|e| fail(e.to_string()))?;
                map.get(&key(v))
                    .copied()
                    .ok_or_else(|| fail(format!("`{name}` uses a value defined outside @query")))
            };
            let new: Option<Value> = match name.as_str() {
                "irs.gallery" | "func.return" => None,
                "irs.query" => {
                    queries += 1;
                    if queries > 1 {
                        return Err(fail(
                            "a program may read one query input; this one reads several",
                        ));
                    }
                    check_public_mask(op)?;
                    Some(emit1(
                        &body,
                        "mpc.load_query",
                        at,
                        &[query_index],
                        &[
                            str_attr(ctx, "name", &get_str(op, "name").map_err(fail)?),
                            int_attr(ctx, "owner", get_int(op, "owner").map_err(fail)?),
                            int_attr(ctx, "code_bits", get_int(op, "code_bits").map_err(fail)?),
                        ],
                        code_t,
                    )?)
                }
                "irs.rotate" => {
                    let (lo, hi) = (
                        get_int(op, "lo").map_err(fail)?,
                        get_int(op, "hi").map_err(fail)?,
                    );
                    let v = emit1(
                        &body,
                        "mpc.rotate",
                        at,
                        &[operand(0)?],
                        &[int_attr(ctx, "lo", lo), int_attr(ctx, "hi", hi)],
                        code_t,
                    )?;
                    rotations.insert(key(result(op)?), hi - lo + 1);
                    Some(v)
                }
                "irs.fhd_lt" => {
                    if !op.has_attribute("ring_bits") {
                        return Err(fail("`irs.fhd_lt` has no ring; run ring-select first"));
                    }
                    let (codes, gallery) = (operand(0)?, operand(1)?);
                    let code_bits = crate::mlir::type_param(
                        op.operand(0).map_err(|e| fail(e.to_string()))?.r#type(),
                    )
                    .ok_or_else(|| fail("cannot read the code length of `irs.fhd_lt`"))?;
                    let dot = emit1(
                        &body,
                        "mpc.masked_dot",
                        at,
                        &[codes, gallery],
                        &[int_attr(ctx, "code_bits", code_bits as i64)],
                        ty(cx, &format!("!mpc.add<{ring}>"))?,
                    )?;
                    let rep_t = ty(cx, &format!("!mpc.rep<{ring}>"))?;
                    let dot = emit1(&body, "mpc.reshare", at, &[dot], &[], rep_t)?;
                    let ml_t = ty(cx, &format!("!mpc.pub<{ring}>"))?;
                    let ml = emit1(&body, "mpc.mask_len", at, &[codes, gallery], &[], ml_t)?;
                    let diff = emit1(
                        &body,
                        "mpc.sub_threshold",
                        at,
                        &[dot, ml],
                        &[
                            int_attr(ctx, "ratio_num", get_int(op, "ratio_num").map_err(fail)?),
                            int_attr(ctx, "ratio_den", get_int(op, "ratio_den").map_err(fail)?),
                        ],
                        rep_t,
                    )?;
                    let n = rotations_of(&rotations, op, 0)?;
                    rotations.insert(key(result(op)?), n);
                    Some(emit1(
                        &body,
                        "mpc.msb",
                        at,
                        &[diff],
                        &[],
                        ty(cx, "!mpc.bits")?,
                    )?)
                }
                "irs.any" => {
                    let over = get_str(op, "over").map_err(fail)?;
                    let n = rotations_of(&rotations, op, 0)?;
                    Some(emit1(
                        &body,
                        "mpc.or_tree",
                        at,
                        &[operand(0)?],
                        &[str_attr(ctx, "group", &over), int_attr(ctx, "rotations", n)],
                        ty(cx, "!mpc.bits")?,
                    )?)
                }
                "irs.reveal" => {
                    let to = get_int(op, "to").map_err(fail)?;
                    let clear = emit1(
                        &body,
                        "mpc.open",
                        at,
                        &[operand(0)?],
                        &[int_attr(ctx, "to", to)],
                        ty(cx, "!mpc.clear_bits")?,
                    )?;
                    let shape = get_str(op, "shape").map_err(fail)?;
                    emit(
                        &body,
                        "mpc.output",
                        at,
                        &[query_index, clear],
                        &[str_attr(ctx, "shape", &shape)],
                        None,
                    )?;
                    None
                }
                other => return Err(fail(format!("no lowering for `{other}`"))),
            };
            if let Some(v) = new {
                map.insert(key(result(op)?), v);
            }
        }
        body.append_operation(func::r#return(&[], cx.unknown_location()));
        drop(map);
        let inputs: Vec<Type> = arg_types.iter().map(|(t, _)| *t).collect();
        out.body()
            .append_operation(function(cx, "query", &inputs, &[], body));
        Ok(out)
    }
}

fn is<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, name: &str) -> bool {
    op.name().as_string_ref().as_str() == Ok(name)
}

/// A map key for an SSA value: its identity in MLIR.
fn key<'c>(v: impl ValueLike<'c>) -> usize {
    v.to_raw().ptr as usize
}

fn result<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Result<Value<'c, 'a>, PassError> {
    Ok(op.result(0).map_err(|e| fail(e.to_string()))?.into())
}

fn ty<'c>(cx: &'c Compiler, text: &str) -> Result<Type<'c>, PassError> {
    parse_type(cx.context(), text).map_err(fail)
}

fn rotations_of<'c: 'a, 'a>(
    rotations: &HashMap<usize, i64>,
    op: &impl OperationLike<'c, 'a>,
    operand: usize,
) -> Result<i64, PassError> {
    let v = op.operand(operand).map_err(|e| fail(e.to_string()))?;
    rotations
        .get(&key(v))
        .copied()
        .ok_or_else(|| fail(format!("`{}` operand is not a rotation batch", op_name(op))))
}

fn check_public_mask<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> Result<(), PassError> {
    match get_str(op, "mask").map_err(fail)?.as_str() {
        "public" => Ok(()),
        _ => Err(fail(format!(
            "input `{}` has secret masks; only public masks (Lemma 1) are supported so far",
            get_str(op, "name").unwrap_or_default()
        ))),
    }
}

/// Appends one op to `block`; returns its result, or `None` for a sink such as `mpc.output`.
fn emit<'c, 'b>(
    block: &'b Block<'c>,
    name: &str,
    at: Location<'c>,
    operands: &[Value<'c, '_>],
    attributes: &[(melior::ir::Identifier<'c>, melior::ir::Attribute<'c>)],
    result_type: Option<Type<'c>>,
) -> Result<Option<Value<'c, 'b>>, PassError> {
    let mut b = OperationBuilder::new(name, at)
        .add_operands(operands)
        .add_attributes(attributes);
    if let Some(t) = result_type {
        b = b.add_results(&[t]);
    }
    let op = block.append_operation(b.build().map_err(|e| fail(e.to_string()))?);
    result_type.map(|_| result(&op)).transpose()
}

/// [`emit`] for an op with one result.
fn emit1<'c, 'b>(
    block: &'b Block<'c>,
    name: &str,
    at: Location<'c>,
    operands: &[Value<'c, '_>],
    attributes: &[(melior::ir::Identifier<'c>, melior::ir::Attribute<'c>)],
    result_type: Type<'c>,
) -> Result<Value<'c, 'b>, PassError> {
    emit(block, name, at, operands, attributes, Some(result_type))?
        .ok_or_else(|| fail(format!("internal error: `{name}` built without a result")))
}

fn function<'c>(
    cx: &'c Compiler,
    name: &str,
    inputs: &[Type<'c>],
    results: &[Type<'c>],
    body: Block<'c>,
) -> melior::ir::Operation<'c> {
    let ctx = cx.context();
    let region = Region::new();
    region.append_block(body);
    func::func(
        ctx,
        StringAttribute::new(ctx, name),
        TypeAttribute::new(FunctionType::new(ctx, inputs, results).into()),
        region,
        &[],
        cx.unknown_location(),
    )
}

/// The ops of `func.func @query` in the `irs` module, in order.
fn query_ops<'c, 'm>(module: &'m Module<'c>) -> Result<Vec<OperationRef<'c, 'm>>, PassError> {
    let mut op = module.body().first_operation();
    while let Some(f) = op {
        if is(&f, "func.func") && get_str(&f, "sym_name").as_deref() == Ok("query") {
            let block = f
                .region(0)
                .ok()
                .and_then(|r| r.first_block())
                .ok_or_else(|| fail("@query has no body"))?;
            let mut ops = Vec::new();
            let mut cur = block.first_operation();
            while let Some(o) = cur {
                cur = o.next_in_block();
                ops.push(o);
            }
            return Ok(ops);
        }
        op = f.next_in_block();
    }
    Err(fail("the module has no `func.func @query`"))
}

/// The ring all shares use: the largest `ring_bits` of any comparison.
fn module_ring(ops: &[OperationRef]) -> Result<i64, PassError> {
    let mut ring = None;
    for op in ops.iter().filter(|o| is(*o, "irs.fhd_lt")) {
        let k = get_int(op, "ring_bits")
            .map_err(|_| fail("`irs.fhd_lt` has no ring; run ring-select first"))?;
        ring = Some(ring.map_or(k, |r: i64| r.max(k)));
    }
    ring.ok_or_else(|| fail("the program compares nothing"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::{lower_program, tests::example_program};
    use crate::passes::{ring_select::RingSelect, PassManager};
    use crate::sema::{MaskKind, RevealShape};

    fn lowered(shape: RevealShape) -> String {
        let cx = Compiler::new().unwrap();
        let m = lower_program(&cx, &example_program(shape), "").unwrap();
        let m = PassManager::irs_to_mpc_pipeline()
            .run(&cx, m, None)
            .unwrap();
        m.as_operation().to_string()
    }

    #[test]
    fn lowers_the_example_to_ring_typed_mpc() {
        let text = lowered(RevealShape::AnyBit);
        for needle in [
            "func.func @setup() -> !mpc.code<16 : i64>",
            r#""mpc.load_gallery"() {code_bits = 12800 : i64, name = "db"} : () -> !mpc.code<16 : i64>"#,
            "func.func @query(%arg0: i64, %arg1: !mpc.code<16 : i64>)",
            r#""mpc.load_query"(%arg0) {code_bits = 12800 : i64, name = "q", owner = 0 : i64}"#,
            r#""mpc.rotate"(%0) {hi = 15 : i64, lo = -15 : i64}"#,
            r#""mpc.masked_dot"(%1, %arg1) {code_bits = 12800 : i64} : (!mpc.code<16 : i64>, !mpc.code<16 : i64>) -> !mpc.add<16 : i64>"#,
            r#""mpc.reshare"(%2) : (!mpc.add<16 : i64>) -> !mpc.rep<16 : i64>"#,
            r#""mpc.mask_len"(%1, %arg1)"#,
            r#""mpc.sub_threshold"(%3, %4) {ratio_den = 1000 : i64, ratio_num = 345 : i64}"#,
            r#""mpc.msb"(%5) : (!mpc.rep<16 : i64>) -> !mpc.bits"#,
            r#""mpc.or_tree"(%6) {group = "all", rotations = 31 : i64}"#,
            r#""mpc.open"(%7) {to = 0 : i64} : (!mpc.bits) -> !mpc.clear_bits"#,
            r#""mpc.output"(%arg0, %8) {shape = "any"} : (i64, !mpc.clear_bits) -> ()"#,
        ] {
            assert!(text.contains(needle), "missing {needle} in\n{text}");
        }
    }

    #[test]
    fn ids_group_by_rotations() {
        let text = lowered(RevealShape::MatchingIds);
        assert!(
            text.contains(r#"{group = "rotations", rotations = 31 : i64}"#),
            "{text}"
        );
        assert!(text.contains(r#"{shape = "ids"}"#), "{text}");
    }

    #[test]
    fn requires_ring_select_first() {
        let cx = Compiler::new().unwrap();
        let m = lower_program(&cx, &example_program(RevealShape::AnyBit), "").unwrap();
        let err = IrsToMpc.run(&cx, m).err().unwrap().to_string();
        assert!(err.contains("ring-select"), "{err}");
    }

    #[test]
    fn rejects_secret_masks() {
        let cx = Compiler::new().unwrap();
        let mut p = example_program(RevealShape::AnyBit);
        p.inputs[0].mask = MaskKind::Secret;
        let m = lower_program(&cx, &p, "").unwrap();
        let m = RingSelect.run(&cx, m).unwrap();
        let err = IrsToMpc.run(&cx, m).err().unwrap().to_string();
        assert!(err.contains("secret masks"), "{err}");
    }
}
