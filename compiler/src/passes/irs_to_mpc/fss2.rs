//! `irs` to `mpc` under the two-server family `fss2` (paper 002): a cosine identification
//! `reveal ids s in G: cosine(q, s) >= tau to X` becomes CS.Eval (Protocol 2) op by op.
//!
//! The client is `X` (it must supply `q`); the servers are the other two parties in declaration
//! order. With `p = <x,y>`, `E = den^2 p^2 - num^2 <x,x><y,y>` over Z_2^64 (the paper's
//! `l0 = 64`; the range analysis behind `ring-select` has proved the values need at most
//! `ring_bits <= 64` bits, so nothing wraps and no truncation is needed: `rho = 0`):
//!
//! ```mlir
//! %x  = "mpc.masked_input"(%q) {from = 1, ...}          // Fig. 3
//! %u  = "mpc.ss_ip"(%x, %y) {dim = 16}                  // SS.IP per template
//! %v  = "mpc.ss_ip"(%x, %x) ; %w = "mpc.ss_ip"(%y, %y)
//! %du = "mpc.ss_open"(%u) {round = 1}                   // and dv, dw: round 1
//! %c1 = "mpc.ic_gate"(%du) {interval = "non_negative", negate = 0}
//! %e  = "mpc.ss_lin"(ss_mul(du, du), ss_mul(dv, dw)) {a = den^2, b = num^2}
//! %d  = "mpc.condeval"(%c1, %e) {conj = "and", round = 2, ...}
//! %o  = "mpc.reveal_xor"(%d) {to = 1}
//! ```
//!
//! The gates are the runtime's reading of the threshold ([`CosinePlan::sign_test`],
//! [`CosinePlan::magnitude_gate`]), so the IR, the executable's manifest and the servers agree
//! by construction; the role executables check it again at start.

use super::emitter::{Emitter, Src, PART_VECTOR};
use super::{fail, PassError};
use crate::mlir::{get_int, get_str, op_name, type_param, Compiler};
use irisc_runtime::fss::condeval::Conj;
use irisc_runtime::fss::ic::{NEGATIVE, NON_NEGATIVE};
use irisc_runtime::fss2::plan::CosinePlan;
use melior::ir::{
    attribute::{IntegerAttribute, StringAttribute},
    operation::{OperationLike, OperationMutLike, OperationRef},
    r#type::IntegerType,
    Attribute, Module, ValueLike,
};

/// The ring of the family (the paper's `l0`) and of its MACs (`l1`).
pub const RING_BITS: i64 = 64;
pub const MAC_BITS: i64 = 48;

const MASKED: &str = "!mpc.masked<64>";
const ADD: &str = "!mpc.add<64>";

fn interval_name(i: (u64, u64)) -> Result<&'static str, PassError> {
    if i == NON_NEGATIVE {
        Ok("non_negative")
    } else if i == NEGATIVE {
        Ok("negative")
    } else {
        Err(fail(format!("no dialect spelling for the interval {i:?}")))
    }
}

/// Lowers the `@query` ops of an `irs` module whose protocol is `fss2`.
pub fn lower_module<'c>(
    cx: &'c Compiler,
    from: &Module<'c>,
    ops: &[OperationRef<'c, '_>],
) -> Result<Module<'c>, PassError> {
    let mut e = Emitter::new(cx, false);
    let mut owners = std::collections::HashMap::new();
    let mut client = None;
    for op in ops {
        match op_name(op).as_str() {
            "irs.query_value" => {
                owners.insert(
                    get_int(op, "input").map_err(fail)?,
                    get_int(op, "owner").map_err(fail)?,
                );
                e.source(op)?;
            }
            "irs.records" => e.source(op)?,
            "irs.cosine_ge" => cosine(&mut e, op, &owners)?,
            "irs.reveal" => {
                if client.is_some() {
                    return Err(fail("fss2 runs one reveal"));
                }
                client = Some(reveal(&mut e, op, &owners)?);
            }
            "func.return" => {}
            other => {
                return Err(fail(format!(
                    "`{other}` has no lowering under fss2, which decides one cosine test per \
                     template and reveals the matching ids to the query's owner"
                )))
            }
        }
    }
    let client = client.ok_or_else(|| fail("an fss2 program reveals the matching ids"))?;
    let mut mpc = e.finish(from.as_operation().location())?;
    let ctx = cx.context();
    let servers: Vec<i64> = (0..3).filter(|&p| p != client).collect();
    let i64_attr = |v: i64| -> Attribute<'c> {
        IntegerAttribute::new(IntegerType::new(ctx, 64).into(), v).into()
    };
    let mut to = mpc.as_operation_mut();
    to.set_attribute("mpc.parties", i64_attr(2));
    to.set_attribute("mpc.protocol", StringAttribute::new(ctx, "fss2").into());
    to.set_attribute(
        "mpc.servers",
        Attribute::parse(
            ctx,
            &format!("[{} : i64, {} : i64]", servers[0], servers[1]),
        )
        .ok_or_else(|| fail("cannot build `mpc.servers`"))?,
    );
    to.set_attribute("mpc.client", i64_attr(client));
    to.set_attribute("mpc.ring_bits", i64_attr(RING_BITS));
    to.set_attribute("mpc.truncation_bits", i64_attr(0));
    if let Ok(m) = get_int(&from.as_operation(), "irs.malicious") {
        to.set_attribute("mpc.malicious", i64_attr(m));
        to.set_attribute("mpc.mac_bits", i64_attr(MAC_BITS));
    }
    Ok(mpc)
}

/// CS.Eval of one `irs.cosine_ge` (module comment).
fn cosine<'c>(
    e: &mut Emitter<'c>,
    op: &OperationRef<'c, '_>,
    owners: &std::collections::HashMap<i64, i64>,
) -> Result<(), PassError> {
    let int = |n: &str| get_int(op, n).map_err(|m| fail(format!("{m} (did ring-select run?)")));
    let (bits, num, den) = (int("ring_bits")?, int("num")?, int("den")?);
    let (negative, strict, scale) = (
        int("negative")? != 0,
        int("strict")? != 0,
        int("scale_bits")?,
    );
    if bits > RING_BITS {
        return Err(fail(format!(
            "the cosine test needs {bits} bits and fss2 computes in Z_2^{RING_BITS}: lower the dimension or the scale"
        )));
    }
    let dim = type_param(op.operand(1).map_err(|e| fail(e.to_string()))?.r#type())
        .ok_or_else(|| fail("`irs.cosine_ge` records have no dimension"))? as i64;
    let (Src::Query { input, name }, records @ Src::Records { earlier: false, .. }) =
        (e.src_of(op, 0)?, e.src_of(op, 1)?)
    else {
        return Err(fail(
            "under fss2 a cosine test compares the query with a gallery's templates",
        ));
    };
    let plan = CosinePlan {
        dim: dim as usize,
        scale_bits: scale as u32,
        tau_negative: negative,
        tau_num: num as u64,
        tau_den: den as u64,
        strict,
    };
    let at = op.location();
    let from = *owners
        .get(&input)
        .ok_or_else(|| fail("the cosine query has no owner"))?;
    let q = e.query_handle();
    let attrs = [
        e.string("name", &name),
        e.int("input", input),
        e.int("from", from),
        e.int("scale_bits", scale),
    ];
    let x = e.op1("mpc.masked_input", at, &[q], &attrs, MASKED)?;
    let y = e.load(&records, PART_VECTOR, MASKED, at)?;
    let ip = [e.int("dim", dim)];
    let u = e.op1("mpc.ss_ip", at, &[x, y], &ip, ADD)?;
    let v = e.op1("mpc.ss_ip", at, &[x, x], &ip, ADD)?;
    let w = e.op1("mpc.ss_ip", at, &[y, y], &ip, ADD)?;
    let round1 = [e.int("round", 1)];
    let du = e.op1("mpc.ss_open", at, &[u], &round1, MASKED)?;
    let dv = e.op1("mpc.ss_open", at, &[v], &round1, MASKED)?;
    let dw = e.op1("mpc.ss_open", at, &[w], &round1, MASKED)?;
    let sign = plan.sign_test();
    let attrs = [
        e.string("interval", interval_name(sign.interval)?),
        e.int("negate", i64::from(sign.negate)),
    ];
    let c1 = e.op1("mpc.ic_gate", at, &[du], &attrs, "!mpc.xor")?;
    let uu = e.op1("mpc.ss_mul", at, &[du, du], &[], ADD)?;
    let vw = e.op1("mpc.ss_mul", at, &[dv, dw], &[], ADD)?;
    let (den2, num2) = plan.squares();
    let attrs = [e.int("a", den2 as i64), e.int("b", num2 as i64)];
    let big_e = e.op1("mpc.ss_lin", at, &[uu, vw], &attrs, ADD)?;
    let gate = plan.magnitude_gate();
    let attrs = [
        e.string("interval", interval_name(gate.interval)?),
        e.int("negate", i64::from(gate.negate)),
        e.string(
            "conj",
            match gate.conj {
                Conj::And => "and",
                Conj::Or => "or",
            },
        ),
        e.int("round", 2),
        e.int("num", num),
        e.int("den", den),
        e.int("negative", i64::from(negative)),
        e.int("strict", i64::from(strict)),
    ];
    let d = e.op1("mpc.condeval", at, &[c1, big_e], &attrs, "!mpc.xor")?;
    e.set_bits(op, d)
}

/// The `ids` reveal to the query's owner; returns the client's party index.
fn reveal<'c>(
    e: &mut Emitter<'c>,
    op: &OperationRef<'c, '_>,
    owners: &std::collections::HashMap<i64, i64>,
) -> Result<i64, PassError> {
    let at = op.location();
    let to = get_int(op, "to").map_err(fail)?;
    let shape = get_str(op, "shape").map_err(fail)?;
    let label = get_str(op, "label").map_err(fail)?;
    if shape != "ids" {
        return Err(fail(format!(
            "fss2 reveals the matching ids (`reveal ids s in G: ...`), not a `{shape}`"
        )));
    }
    if !owners.values().any(|&o| o == to) {
        return Err(fail(format!(
            "fss2 reveals to the client, the party that supplies the query; party {to} supplies none"
        )));
    }
    let bits = e.bits_of(op, 0)?;
    let records = e.src_of(op, 1)?;
    let recs = e
        .any_load(&records)
        .ok_or_else(|| fail("the records of an `ids` reveal are never loaded"))?;
    let clear = e.op1(
        "mpc.reveal_xor",
        at,
        &[bits],
        &[e.int("to", to)],
        "!mpc.clear_bits",
    )?;
    let q = e.query_handle();
    let out_attrs = [e.string("shape", "ids"), e.string("label", &label)];
    e.op("mpc.output", at, &[q, clear, recs], &out_attrs, None)?;
    Ok(to)
}
