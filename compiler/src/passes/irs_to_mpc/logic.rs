//! Boolean structure, counts and reveals to `mpc`.
//!
//! `and`/`or` are one AND gate per element (ABY3), `not` is local, `select` is CMux (Algorithm
//! 11: one AND gate per output bit, both branches computed), `any`/`all` are OR/AND trees over
//! groups, `count` injects the bits into Z_2^32 (Algorithms 16-17) and sums locally. A reveal
//! opens exactly the declared output to its party and records it for that query's JSON line.

use super::emitter::{Emitter, Src};
use super::{fail, PassError};
use crate::mlir::{get_int, get_str, op_name};
use melior::ir::{operation::OperationLike, operation::OperationRef};

/// The ring counts are computed in: up to 2^32 - 1 records per query.
pub const COUNT_RING_BITS: i64 = 32;

pub fn lower<'c, 'a>(e: &mut Emitter<'c>, op: &OperationRef<'c, 'a>) -> Result<(), PassError> {
    if e.beaver.is_some() {
        return lower_beaver(e, op);
    }
    let at = op.location();
    let name = op_name(op);
    if name == "irs.count" {
        let bits = e.bits_of(op, 0)?;
        let rep = format!("!mpc.rep<{COUNT_RING_BITS}>");
        let injected = e.op1("mpc.bit_inject", at, &[bits], &[], &rep)?;
        let attrs = [e.int("group", 0)];
        let sum = e.op1("mpc.sum", at, &[injected], &attrs, &rep)?;
        return e.set_number(op, sum);
    }
    let bits = match name.as_str() {
        "irs.const" => {
            let attrs = [e.int("value", get_int(op, "value").map_err(fail)?)];
            e.op1("mpc.const_bits", at, &[], &attrs, "!mpc.bits")?
        }
        "irs.not" => {
            let x = e.bits_of(op, 0)?;
            e.op1("mpc.not", at, &[x], &[], "!mpc.bits")?
        }
        "irs.and" | "irs.or" => {
            let (x, y) = (e.bits_of(op, 0)?, e.bits_of(op, 1)?);
            let m = if name == "irs.and" {
                "mpc.and"
            } else {
                "mpc.or"
            };
            e.op1(m, at, &[x, y], &[], "!mpc.bits")?
        }
        "irs.select" => {
            let (c, x, y) = (e.bits_of(op, 0)?, e.bits_of(op, 1)?, e.bits_of(op, 2)?);
            e.op1("mpc.mux", at, &[c, x, y], &[], "!mpc.bits")?
        }
        "irs.any" | "irs.all" => {
            let x = e.bits_of(op, 0)?;
            let attrs = [e.int("group", e.group(op)?)];
            let m = if name == "irs.any" {
                "mpc.or_tree"
            } else {
                "mpc.and_tree"
            };
            e.op1(m, at, &[x], &attrs, "!mpc.bits")?
        }
        other => return Err(fail(format!("`{other}` is not a boolean op"))),
    };
    e.set_bits(op, bits)
}

/// The same ops under `beaver`: fragments of the reveals' circuit ([`super::beaver`]).
fn lower_beaver<'c, 'a>(e: &mut Emitter<'c>, op: &OperationRef<'c, 'a>) -> Result<(), PassError> {
    let name = op_name(op);
    let f = match name.as_str() {
        "irs.const" => {
            let v = get_int(op, "value").map_err(fail)? != 0;
            e.beaver_mut()?.constant(v)
        }
        "irs.not" => {
            let x = e.frag_of(op, 0)?;
            e.beaver_mut()?.not(x)?
        }
        "irs.and" | "irs.or" => {
            let (x, y) = (e.frag_of(op, 0)?, e.frag_of(op, 1)?);
            e.beaver_mut()?.gate(x, y, name == "irs.and")?
        }
        "irs.select" => {
            let (c, x, y) = (e.frag_of(op, 0)?, e.frag_of(op, 1)?, e.frag_of(op, 2)?);
            e.beaver_mut()?.select(c, x, y)?
        }
        "irs.any" | "irs.all" => {
            let x = e.frag_of(op, 0)?;
            let group = get_int(op, "group").map_err(fail)?;
            e.beaver_mut()?.reduce(x, group, name == "irs.any")?
        }
        other => {
            return Err(fail(format!(
                "`{other}` has no lowering under --protocol beaver (counts are not supported \
                 yet: use --protocol rep3)"
            )))
        }
    };
    e.set_frag(op, f)
}

pub fn reveal<'c, 'a>(e: &mut Emitter<'c>, op: &OperationRef<'c, 'a>) -> Result<(), PassError> {
    if e.beaver.is_some() {
        return reveal_beaver(e, op);
    }
    let at = op.location();
    let to = get_int(op, "to").map_err(fail)?;
    let shape = get_str(op, "shape").map_err(fail)?;
    let label = get_str(op, "label").map_err(fail)?;
    let out_attrs = [e.string("shape", &shape), e.string("label", &label)];
    let q = e.query_handle();
    match shape.as_str() {
        "bit" => {
            let bits = e.bits_of(op, 0)?;
            let clear = e.op1(
                "mpc.open",
                at,
                &[bits],
                &[e.int("to", to)],
                "!mpc.clear_bits",
            )?;
            e.op("mpc.output", at, &[q, clear], &out_attrs, None)?;
        }
        "ids" => {
            let bits = e.bits_of(op, 0)?;
            let records = e.src_of(op, 1)?;
            if !matches!(records, Src::Records { .. }) {
                return Err(fail("an `ids` reveal names something other than records"));
            }
            let recs = e
                .any_load(&records)
                .ok_or_else(|| fail("the records of an `ids` reveal are never loaded"))?;
            let clear = e.op1(
                "mpc.open",
                at,
                &[bits],
                &[e.int("to", to)],
                "!mpc.clear_bits",
            )?;
            e.op("mpc.output", at, &[q, clear, recs], &out_attrs, None)?;
        }
        "count" => {
            let n = e.number_of(op, 0)?;
            let clear = e.op1(
                "mpc.open_int",
                at,
                &[n],
                &[e.int("to", to)],
                "!mpc.clear_ints",
            )?;
            e.op("mpc.output", at, &[q, clear], &out_attrs, None)?;
        }
        other => return Err(fail(format!("unknown reveal shape `{other}`"))),
    }
    Ok(())
}

/// An `ids` reveal under `beaver`: recorded; [`super::beaver::finish`] evaluates all reveals'
/// circuits at once and opens each.
fn reveal_beaver<'c, 'a>(e: &mut Emitter<'c>, op: &OperationRef<'c, 'a>) -> Result<(), PassError> {
    let to = get_int(op, "to").map_err(fail)?;
    let shape = get_str(op, "shape").map_err(fail)?;
    let label = get_str(op, "label").map_err(fail)?;
    if shape != "ids" {
        return Err(fail(format!(
            "under --protocol beaver a reveal is `ids` over a gallery (one lane per record); \
             this one is `{shape}` (use --protocol rep3)"
        )));
    }
    let x = e.frag_of(op, 0)?;
    let records = e.src_of(op, 1)?;
    let Src::Records {
        input,
        earlier: false,
        ..
    } = records
    else {
        return Err(fail(
            "under --protocol beaver an `ids` reveal names a gallery's records (not earlier queries)",
        ));
    };
    let recs = e
        .any_load(&records)
        .ok_or_else(|| fail("the records of an `ids` reveal are never loaded"))?;
    e.beaver_mut()?.reveal(x, to, label, recs, input)
}
