//! `irs.cosine_ge` to `mpc` (paper 002, Section 2.4: the threshold test without square roots).
//!
//! With `p = <x, y>`, `xx = <x, x>`, `yy = <y, y>` over Z_2^k (k from the range analysis, so
//! nothing below wraps) and `tau = ±num/den`:
//! - `tau >= 0`: `cos >= tau` iff `p >= 0` and `den^2 p^2 - num^2 xx yy >= 0`: two MSBs, AND;
//! - `tau < 0`: iff `p >= 0` or `num^2 xx yy - den^2 p^2 >= 0`: two MSBs, OR.
//!
//! With `>` the second test is strict (the MSB of the negated difference), and for `tau >= 0` so
//! is the first. Products are ABY3 multiplications with one reshare each.

use super::emitter::{Emitter, Handle, PART_VECTOR};
use super::{fail, PassError};
use crate::mlir::{get_int, type_param};
use melior::ir::{operation::OperationLike, operation::OperationRef, ValueLike};

pub fn lower<'c, 'a>(e: &mut Emitter<'c>, op: &OperationRef<'c, 'a>) -> Result<(), PassError> {
    if e.beaver.is_some() {
        return Err(super::fail(
            "cosine tests have no lowering under --protocol beaver yet (use --protocol rep3)",
        ));
    }
    let int = |n: &str| get_int(op, n).map_err(|m| fail(format!("{m} (did ring-select run?)")));
    let (k, num, den) = (int("ring_bits")?, int("num")?, int("den")?);
    let (negative, strict) = (int("negative")? != 0, int("strict")? != 0);
    let dim = type_param(op.operand(1).map_err(|e| fail(e.to_string()))?.r#type())
        .ok_or_else(|| fail("`irs.cosine_ge` records have no dimension"))? as i64;
    // Vectors are padded with zeros to whole 64-element blocks (the kernel's unit).
    let padded = (dim + 63) / 64 * 64;
    let (num2, den2) = (num * num, den * den);
    let at = op.location();
    let (q, r) = (e.src_of(op, 0)?, e.src_of(op, 1)?);
    let code = format!("!mpc.code<{k}>");
    let (add, rep) = (format!("!mpc.add<{k}>"), format!("!mpc.rep<{k}>"));
    let x = e.load(&q, PART_VECTOR, &code, at)?;
    let y = e.load(&r, PART_VECTOR, &code, at)?;

    let attrs = [e.int("code_bits", padded)];
    let p = e.op1("mpc.masked_dot", at, &[x, y], &attrs, &add)?;
    let p = e.op1("mpc.reshare", at, &[p], &[], &rep)?;
    let xx = e.op1("mpc.self_dot", at, &[x], &[], &add)?;
    let xx = e.op1("mpc.reshare", at, &[xx], &[], &rep)?;
    let yy = e.op1("mpc.self_dot", at, &[y], &[], &add)?;
    let yy = e.op1("mpc.reshare", at, &[yy], &[], &rep)?;
    let pp = e.op1("mpc.mul", at, &[p, p], &[], &add)?;
    let pp = e.op1("mpc.reshare", at, &[pp], &[], &rep)?;
    let norms = e.op1("mpc.mul", at, &[yy, xx], &[], &add)?;
    let norms = e.op1("mpc.reshare", at, &[norms], &[], &rep)?;

    let lin =
        |e: &mut Emitter<'c>, x: Handle, y: Handle, a: i64, b: i64| -> Result<Handle, PassError> {
            let attrs = [e.int("a", a), e.int("b", b)];
            e.op1("mpc.lin", at, &[x, y], &attrs, &rep)
        };
    let msb = |e: &mut Emitter<'c>, v: Handle| e.op1("mpc.msb", at, &[v], &[], "!mpc.bits");
    let not = |e: &mut Emitter<'c>, v: Handle| e.op1("mpc.not", at, &[v], &[], "!mpc.bits");

    // c1: p >= 0 is NOT MSB(p); p > 0 is MSB(-p) = MSB(0*p - 1*p).
    let c1 = if strict && !negative {
        let neg = lin(e, p, p, 0, 1)?;
        msb(e, neg)?
    } else {
        let m = msb(e, p)?;
        not(e, m)?
    };
    let c2 = match (negative, strict) {
        // den^2 p^2 - num^2 xx yy >= 0
        (false, false) => {
            let d = lin(e, pp, norms, den2, num2)?;
            let m = msb(e, d)?;
            not(e, m)?
        }
        // den^2 p^2 - num^2 xx yy > 0  <=>  num^2 xx yy - den^2 p^2 < 0
        (false, true) => {
            let d = lin(e, norms, pp, num2, den2)?;
            msb(e, d)?
        }
        // num^2 xx yy - den^2 p^2 >= 0
        (true, false) => {
            let d = lin(e, norms, pp, num2, den2)?;
            let m = msb(e, d)?;
            not(e, m)?
        }
        // num^2 xx yy - den^2 p^2 > 0  <=>  den^2 p^2 - num^2 xx yy < 0
        (true, true) => {
            let d = lin(e, pp, norms, den2, num2)?;
            msb(e, d)?
        }
    };
    let combine = if negative { "mpc.or" } else { "mpc.and" };
    let bits = e.op1(combine, at, &[c1, c2], &[], "!mpc.bits")?;
    e.set_bits(op, bits)
}
