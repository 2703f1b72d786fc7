//! `irs.fhd_lt` to `mpc`: the four comparison variants of the Large-Scale MPC paper (Table 2) in
//! the three sharings.
//!
//! Every variant ends with one MSB extraction whose bit is the match bit (negative iff match):
//! - `plain_mask` (public masks, Lemma 1): `T - <c', d'>` with the public threshold
//!   `T = floor((1 - 2r) ml)`; where variant-select recorded `msb_input = additive`, on the
//!   dot product's additive shares by `mpc.additive_msb` (no reshare), else reshared and
//!   `mpc.msb`;
//! - `no_lift` (secret masks, Algorithm 3): both dot products directly in the comparison ring,
//!   `a*ml - b*dot` with small `a, b`;
//! - `const_lift`: the code dot product in Z_2^16 multiplied by `b = 2^m` for free (Algorithm 13),
//!   the mask dot product in the comparison ring;
//! - `mpc_lift`: both in Z_2^16 (or F_p, or GR(2^16, d)); `ml` lifted by Algorithm 14 (LiftP,
//!   Algorithm 15, over F_p), `dot` by Algorithm 13.

use super::emitter::{Emitter, Handle, Src, PART_CODE, PART_MASK};
use super::{fail, PassError};
use crate::mlir::{get_int, type_param, ChoiceAttr};
use irisc_runtime::vocab::{MsbInput, Sharing, Variant};
use melior::ir::{operation::OperationLike, operation::OperationRef, Location, ValueLike};

/// The choices `variant-select` and `ring-select` record on a comparison.
struct Choice {
    variant: Variant,
    msb_input: MsbInput,
    sharing: Sharing,
    ring: i64,
    dot_ring: i64,
    ml_ring: i64,
    a: i64,
    b: i64,
    lift_bits: i64,
    num: i64,
    den: i64,
    code_bits: i64,
}

fn choice<'c, 'a>(op: &OperationRef<'c, 'a>) -> Result<Choice, PassError> {
    let int = |n: &str| {
        get_int(op, n).map_err(|e| fail(format!("{e} (did ring-select and variant-select run?)")))
    };
    let code_bits = type_param(op.operand(1).map_err(|e| fail(e.to_string()))?.r#type())
        .ok_or_else(|| fail("`irs.fhd_lt` records have no code length"))?
        as i64;
    Ok(Choice {
        variant: op
            .attribute("variant")
            .ok()
            .and_then(Variant::from_attr)
            .ok_or_else(|| fail("`irs.fhd_lt` has no `variant` (did variant-select run?)"))?,
        // Absent on modules written before the choice existed: the reshare.
        msb_input: op
            .attribute("msb_input")
            .ok()
            .and_then(MsbInput::from_attr)
            .unwrap_or(MsbInput::Replicated),
        sharing: op
            .attribute("sharing")
            .ok()
            .and_then(Sharing::from_attr)
            .ok_or_else(|| fail("`irs.fhd_lt` has no `sharing` (did variant-select run?)"))?,
        ring: int("ring_bits")?,
        dot_ring: int("dot_ring")?,
        ml_ring: int("ml_ring")?,
        a: int("a")?,
        b: int("b")?,
        lift_bits: int("lift_bits")?,
        num: int("ratio_num")?,
        den: int("ratio_den")?,
        code_bits,
    })
}

pub fn lower<'c, 'a>(e: &mut Emitter<'c>, op: &OperationRef<'c, 'a>) -> Result<(), PassError> {
    let c = choice(op)?;
    let (q, r) = (e.src_of(op, 0)?, e.src_of(op, 1)?);
    let at = op.location();
    if e.beaver.is_some() && c.sharing == Sharing::Fp {
        return Err(fail(
            "under --protocol beaver the compared values must be Z_2^k shares; F_p comparisons \
             end mod p (use --sharing rep3, gr2 or gr4)",
        ));
    }
    let bits = match (c.variant, c.sharing) {
        (Variant::PlainMask, _) => plain_mask(e, &c, &q, &r, at)?,
        (Variant::NoLift, Sharing::Rep3) => no_lift(e, &c, &q, &r, at)?,
        (Variant::ConstLift, Sharing::Rep3) => const_lift(e, &c, &q, &r, at)?,
        (Variant::MpcLift, Sharing::Rep3 | Sharing::Gr2 | Sharing::Gr4) => {
            mpc_lift(e, &c, &q, &r, at)?
        }
        (Variant::MpcLift, Sharing::Fp) => mpc_lift_fp(e, &c, &q, &r, at)?,
        (v, s) => {
            return Err(fail(format!(
                "no lowering of variant `{v}` with sharing `{s}`"
            )))
        }
    };
    if e.beaver.is_some() {
        // `bits` is the compared value (see `msb`): its MSB is extracted inside the circuit.
        let ring = crate::mlir::type_param(e.get(bits).r#type())
            .and_then(|k| u32::try_from(k).ok())
            .ok_or_else(|| fail("the compared value has no ring"))?;
        let (group, input) = super::beaver::group_of(&q, &r)?;
        let f = e.beaver_mut()?.compared(bits, ring, group, input);
        return e.set_frag(op, f);
    }
    e.set_bits(op, bits)
}

fn code_ty(k: i64) -> String {
    format!("!mpc.code<{k}>")
}

/// Additive shares of `<x, y>` over Z_2^k (replicated dot product, Appendix C, eq. 6).
fn rep3_dot_additive<'c>(
    e: &mut Emitter<'c>,
    (q, r): (&Src, &Src),
    part: i64,
    k: i64,
    code_bits: i64,
    at: Location<'c>,
) -> Result<(Handle, Handle, Handle), PassError> {
    let (x, y) = (
        e.load(q, part, &code_ty(k), at)?,
        e.load(r, part, &code_ty(k), at)?,
    );
    let attrs = [e.int("code_bits", code_bits)];
    // The same pair's dot product serves every comparison of it.
    let add = e.op1_memo(
        "mpc.masked_dot",
        at,
        &[x, y],
        &attrs,
        &format!("!mpc.add<{k}>"),
    )?;
    Ok((add, x, y))
}

/// Additive then replicated shares of `<x, y>` over Z_2^k (it is reshared once).
fn rep3_dot<'c>(
    e: &mut Emitter<'c>,
    (q, r): (&Src, &Src),
    part: i64,
    k: i64,
    code_bits: i64,
    at: Location<'c>,
) -> Result<(Handle, Handle, Handle), PassError> {
    let (add, x, y) = rep3_dot_additive(e, (q, r), part, k, code_bits, at)?;
    Ok((reshared(e, Sharing::Rep3, add, k, at)?, x, y))
}

/// The replicated shares of additive dot products (memoised: one reshare per dot product).
fn reshared<'c>(
    e: &mut Emitter<'c>,
    sharing: Sharing,
    add: Handle,
    k: i64,
    at: Location<'c>,
) -> Result<Handle, PassError> {
    if sharing == Sharing::Fp {
        e.op1_memo("mpc.reshare_p", at, &[add], &[], "!mpc.rep_p")
    } else {
        e.op1_memo("mpc.reshare", at, &[add], &[], &format!("!mpc.rep<{k}>"))
    }
}

/// The Shamir dot product of a part as additive shares: Z_2^16 for Galois rings, F_p for `fp`.
fn shamir_dot_additive<'c>(
    e: &mut Emitter<'c>,
    c: &Choice,
    (q, r): (&Src, &Src),
    part: i64,
    at: Location<'c>,
) -> Result<(Handle, Handle, Handle), PassError> {
    let ty = format!("!mpc.shamir<\"{}\">", c.sharing);
    let (x, y) = (e.load(q, part, &ty, at)?, e.load(r, part, &ty, at)?);
    let add_ty = if c.sharing == Sharing::Fp {
        "!mpc.add_p"
    } else {
        "!mpc.add<16>"
    };
    let add = e.op1_memo("mpc.shamir_dot", at, &[x, y], &[], add_ty)?;
    Ok((add, x, y))
}

/// The Shamir dot product of a part and its reshare.
fn shamir_dot<'c>(
    e: &mut Emitter<'c>,
    c: &Choice,
    (q, r): (&Src, &Src),
    part: i64,
    at: Location<'c>,
) -> Result<(Handle, Handle, Handle), PassError> {
    let (add, x, y) = shamir_dot_additive(e, c, (q, r), part, at)?;
    let rep = reshared(e, c.sharing, add, 16, at)?;
    Ok((rep, x, y))
}

/// The comparison bit of `x` (`mpc.msb`); under `beaver`, `x` itself: the reveals' circuit
/// extracts the MSB ([`super::beaver`]).
fn msb<'c>(e: &mut Emitter<'c>, x: Handle, at: Location<'c>) -> Result<Handle, PassError> {
    if e.beaver.is_some() {
        return Ok(x);
    }
    e.op1("mpc.msb", at, &[x], &[], "!mpc.bits")
}

/// Plain Mask (Lemma 1): `MSB(T - dot)` with the public threshold `T` from the public masks;
/// the dot product in the choice's sharing (GR ends in Z_2^16, F_p compares mod p with
/// BitExtractP, Algorithm 12).
fn plain_mask<'c>(
    e: &mut Emitter<'c>,
    c: &Choice,
    q: &Src,
    r: &Src,
    at: Location<'c>,
) -> Result<Handle, PassError> {
    // AdditiveMSB where variant-select chose it: `T - dot` stays additive, no reshare.
    let additive = c.msb_input == MsbInput::Additive && e.beaver.is_none();
    if additive && c.sharing == Sharing::Fp {
        return Err(fail("AdditiveMSB is over Z_2^k; F_p comparisons end mod p"));
    }
    let (add, x, y, k) = match c.sharing {
        Sharing::Rep3 => {
            let (add, x, y) = rep3_dot_additive(e, (q, r), PART_CODE, c.ring, c.code_bits, at)?;
            (add, x, y, c.ring)
        }
        Sharing::Gr2 | Sharing::Gr4 if c.ring != 16 => {
            return Err(fail(format!(
                "Galois-ring dot products end in Z_2^16, not Z_2^{}",
                c.ring
            )))
        }
        _ => {
            let (add, x, y) = shamir_dot_additive(e, c, (q, r), PART_CODE, at)?;
            (add, x, y, 16)
        }
    };
    let dot = if additive {
        add
    } else {
        reshared(e, c.sharing, add, k, at)?
    };
    let ml = e.op1_memo("mpc.mask_len", at, &[x, y], &[], &format!("!mpc.pub<{k}>"))?;
    let attrs = [e.int("ratio_num", c.num), e.int("ratio_den", c.den)];
    if c.sharing == Sharing::Fp {
        let diff = e.op1("mpc.sub_threshold_p", at, &[dot, ml], &attrs, "!mpc.rep_p")?;
        return e.op1("mpc.msb_p", at, &[diff], &[], "!mpc.bits");
    }
    if additive {
        let diff = e.op1(
            "mpc.sub_threshold",
            at,
            &[dot, ml],
            &attrs,
            &format!("!mpc.add<{k}>"),
        )?;
        return e.op1("mpc.additive_msb", at, &[diff], &[], "!mpc.bits");
    }
    let diff = e.op1(
        "mpc.sub_threshold",
        at,
        &[dot, ml],
        &attrs,
        &format!("!mpc.rep<{k}>"),
    )?;
    msb(e, diff, at)
}

/// `MSB(a*ml - y)` over Z_2^k with `y` already `b*dot` (or `dot` with `b` applied by `lin`).
fn compare<'c>(
    e: &mut Emitter<'c>,
    ml: Handle,
    y: Handle,
    a: i64,
    b: i64,
    k: i64,
    at: Location<'c>,
) -> Result<Handle, PassError> {
    let attrs = [e.int("a", a), e.int("b", b)];
    let v = e.op1("mpc.lin", at, &[ml, y], &attrs, &format!("!mpc.rep<{k}>"))?;
    msb(e, v, at)
}

fn no_lift<'c>(
    e: &mut Emitter<'c>,
    c: &Choice,
    q: &Src,
    r: &Src,
    at: Location<'c>,
) -> Result<Handle, PassError> {
    let k = c.ring;
    let (dot, ..) = rep3_dot(e, (q, r), PART_CODE, k, c.code_bits, at)?;
    let (ml, ..) = rep3_dot(e, (q, r), PART_MASK, k, c.code_bits, at)?;
    compare(e, ml, dot, c.a, c.b, k, at)
}

/// ConstLift turns `[dot]` over Z_2^n into `[2^m dot]` over Z_2^(n+m); any comparison ring
/// k <= n + m is then reached by local reduction (a sharing mod 2^(n+m) is one mod 2^k).
fn check_lift(c: &Choice) -> Result<(), PassError> {
    if c.b != 1i64 << c.lift_bits || c.ring > c.dot_ring + c.lift_bits {
        return Err(fail(format!(
            "ConstLift needs b = 2^m and a comparison ring of at most dot_ring + m bits; got b = {}, m = {}, rings {} and {}",
            c.b, c.lift_bits, c.dot_ring, c.ring
        )));
    }
    Ok(())
}

fn const_lift<'c>(
    e: &mut Emitter<'c>,
    c: &Choice,
    q: &Src,
    r: &Src,
    at: Location<'c>,
) -> Result<Handle, PassError> {
    check_lift(c)?;
    let k = c.ring;
    let (dot, ..) = rep3_dot(e, (q, r), PART_CODE, c.dot_ring, c.code_bits, at)?;
    let attrs = [e.int("lift_bits", c.lift_bits)];
    let lifted = e.op1(
        "mpc.const_lift",
        at,
        &[dot],
        &attrs,
        &format!("!mpc.rep<{k}>"),
    )?;
    let (ml, ..) = rep3_dot(e, (q, r), PART_MASK, c.ml_ring, c.code_bits, at)?;
    if c.ml_ring != k {
        return Err(fail(
            "ConstLift computes the mask dot product in the comparison ring",
        ));
    }
    compare(e, ml, lifted, c.a, 1, k, at)
}

fn mpc_lift<'c>(
    e: &mut Emitter<'c>,
    c: &Choice,
    q: &Src,
    r: &Src,
    at: Location<'c>,
) -> Result<Handle, PassError> {
    check_lift(c)?;
    let k = c.ring;
    let (dot, ml) = if c.sharing == Sharing::Rep3 {
        let (dot, ..) = rep3_dot(e, (q, r), PART_CODE, c.dot_ring, c.code_bits, at)?;
        let (ml, ..) = rep3_dot(e, (q, r), PART_MASK, c.ml_ring, c.code_bits, at)?;
        (dot, ml)
    } else {
        let (dot, ..) = shamir_dot(e, c, (q, r), PART_CODE, at)?;
        let (ml, ..) = shamir_dot(e, c, (q, r), PART_MASK, at)?;
        (dot, ml)
    };
    let rep_k = format!("!mpc.rep<{k}>");
    let ml = e.op1("mpc.lift", at, &[ml], &[], &rep_k)?;
    let attrs = [e.int("lift_bits", c.lift_bits)];
    let lifted = e.op1("mpc.const_lift", at, &[dot], &attrs, &rep_k)?;
    compare(e, ml, lifted, c.a, 1, k, at)
}

fn mpc_lift_fp<'c>(
    e: &mut Emitter<'c>,
    c: &Choice,
    q: &Src,
    r: &Src,
    at: Location<'c>,
) -> Result<Handle, PassError> {
    if c.b != 1i64 << c.lift_bits {
        return Err(fail(format!(
            "LiftP needs b = 2^m; got b = {}, m = {}",
            c.b, c.lift_bits
        )));
    }
    let (dot, ..) = shamir_dot(e, c, (q, r), PART_CODE, at)?;
    let (ml, ..) = shamir_dot(e, c, (q, r), PART_MASK, at)?;
    let t = format!("!mpc.rep_mod<{}>", c.lift_bits);
    let ml = e.op1("mpc.lift_p", at, &[ml], &[], &t)?;
    let lifted = e.op1("mpc.const_lift_p", at, &[dot], &[], &t)?;
    let attrs = [e.int("a", c.a), e.int("b", 1)];
    let v = e.op1("mpc.lin_mod", at, &[ml, lifted], &attrs, &t)?;
    e.op1("mpc.msb_mod", at, &[v], &[], "!mpc.bits")
}
