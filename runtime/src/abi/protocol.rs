//! C ABI entry points for the protocol steps of the whole language: lifts, bit injection,
//! boolean logic and multiplexers, products, Shamir dot products and F_p comparisons.
//!
//! Each forwards to one `Runtime` method (see `party::ops_arith`, `party::ops_logic`,
//! `party::ops_shamir`) through [`with_rt`]: 0 on success, nonzero after a clear message on
//! stderr, never a panic across the boundary. Slots are i32 indexes into the value table;
//! negative rings, exponents or parties are rejected as out of range by the methods.

use super::with_rt;
use crate::party::Runtime;

/// A slot or parameter as the methods take it: negative values become huge and are rejected
/// by their range checks (slots: read-before-write error; rings: out of range).
#[inline]
fn u(v: i32) -> u32 {
    v as u32
}

/// `dst = a·x − b·y` over Z_2^k (replicated; x or y may be public).
#[no_mangle]
pub extern "C" fn irisc_rt_lin(
    rt: *mut Runtime,
    dst: i32,
    x: i32,
    y: i32,
    a: i64,
    b: i64,
    k: i32,
) -> i32 {
    with_rt(rt, |r| r.lin(u(dst), u(x), u(y), a, b, u(k)))
}

/// Algorithm 13: `dst = [2^m·src]` over Z_2^k_out from `src` over Z_2^(k_out − m).
#[no_mangle]
pub extern "C" fn irisc_rt_const_lift(
    rt: *mut Runtime,
    dst: i32,
    src: i32,
    m: i32,
    k_out: i32,
) -> i32 {
    with_rt(rt, |r| r.const_lift(u(dst), u(src), u(m), u(k_out)))
}

/// Algorithm 14 (MPCLift): Z_2^k_in to Z_2^k_out.
#[no_mangle]
pub extern "C" fn irisc_rt_lift(
    rt: *mut Runtime,
    dst: i32,
    src: i32,
    k_in: i32,
    k_out: i32,
) -> i32 {
    with_rt(rt, |r| r.lift(u(dst), u(src), u(k_in), u(k_out)))
}

/// Elementwise product of replicated shares over Z_2^k: additive shares (then `reshare`).
#[no_mangle]
pub extern "C" fn irisc_rt_mul(rt: *mut Runtime, dst: i32, x: i32, y: i32, k: i32) -> i32 {
    with_rt(rt, |r| r.mul(u(dst), u(x), u(y), u(k)))
}

/// Algorithms 16–17 (BitInject): binary shares to replicated shares over Z_2^k.
#[no_mangle]
pub extern "C" fn irisc_rt_bit_inject(rt: *mut Runtime, dst: i32, src: i32, k: i32) -> i32 {
    with_rt(rt, |r| r.bit_inject(u(dst), u(src), u(k)))
}

/// Local sums over consecutive groups of `group` elements (0 = all).
#[no_mangle]
pub extern "C" fn irisc_rt_sum_groups(rt: *mut Runtime, dst: i32, src: i32, group: i64) -> i32 {
    with_rt(rt, |r| {
        if group < 0 {
            return Err(crate::error::RuntimeError::Schedule(format!(
                "sum_groups: group {group}"
            )));
        }
        r.sum_groups(u(dst), u(src), group as u64)
    })
}

#[no_mangle]
pub extern "C" fn irisc_rt_not(rt: *mut Runtime, dst: i32, src: i32) -> i32 {
    with_rt(rt, |r| r.not_bits(u(dst), u(src)))
}

#[no_mangle]
pub extern "C" fn irisc_rt_and(rt: *mut Runtime, dst: i32, x: i32, y: i32) -> i32 {
    with_rt(rt, |r| r.and_bits(u(dst), u(x), u(y)))
}

#[no_mangle]
pub extern "C" fn irisc_rt_or(rt: *mut Runtime, dst: i32, x: i32, y: i32) -> i32 {
    with_rt(rt, |r| r.or_bits(u(dst), u(x), u(y)))
}

#[no_mangle]
pub extern "C" fn irisc_rt_xor(rt: *mut Runtime, dst: i32, x: i32, y: i32) -> i32 {
    with_rt(rt, |r| r.xor_bits(u(dst), u(x), u(y)))
}

/// Algorithm 11 (CMux): `dst = c ? x : y`.
#[no_mangle]
pub extern "C" fn irisc_rt_mux(rt: *mut Runtime, dst: i32, c: i32, x: i32, y: i32) -> i32 {
    with_rt(rt, |r| r.mux_bits(u(dst), u(c), u(x), u(y)))
}

/// AND over consecutive groups of `group` bits (0 = all; the AND of no bits is true).
#[no_mangle]
pub extern "C" fn irisc_rt_and_groups(rt: *mut Runtime, dst: i32, src: i32, group: i64) -> i32 {
    with_rt(rt, |r| {
        if group < 0 {
            return Err(crate::error::RuntimeError::Schedule(format!(
                "and_groups: group {group}"
            )));
        }
        r.and_groups(u(dst), u(src), group as u64)
    })
}

/// Opens replicated arithmetic shares to party `to` (Value::ClearInts).
#[no_mangle]
pub extern "C" fn irisc_rt_open_int(rt: *mut Runtime, dst: i32, src: i32, to: i32) -> i32 {
    with_rt(rt, |r| r.open_int(u(dst), u(src), u(to)))
}

/// Dot products of Shamir shares (GR(2^16, d) or F_p): additive shares, record-major, by the
/// generated kernel variants in `kernels` (null: the runtime's scalar reference).
///
/// # Safety
/// `kernels` must be null or the table of kernel variants the compiler generated for this
/// sharing and code length (`[portable, avx2, avx512, vnni]`, null where absent).
#[no_mangle]
pub unsafe extern "C" fn irisc_rt_shamir_dot(
    rt: *mut Runtime,
    dst: i32,
    codes: i32,
    gallery: i32,
    kernels: *const crate::kernels::KernelTable,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    with_rt(rt, |r| unsafe {
        r.shamir_dot_with(u(dst), u(codes), u(gallery), kernels)
    })
}

/// Additive shares mod p to replicated shares mod p.
#[no_mangle]
pub extern "C" fn irisc_rt_reshare_p(rt: *mut Runtime, dst: i32, src: i32) -> i32 {
    with_rt(rt, |r| r.reshare_p(u(dst), u(src)))
}

/// `T(ml) − dot` mod p (public masks).
#[no_mangle]
pub extern "C" fn irisc_rt_sub_threshold_p(
    rt: *mut Runtime,
    dst: i32,
    dot: i32,
    ml: i32,
    num: i64,
    den: i64,
) -> i32 {
    with_rt(rt, |r| r.sub_threshold_p(u(dst), u(dot), u(ml), num, den))
}

/// Algorithm 12 (BitExtractP): the MSB over F_p.
#[no_mangle]
pub extern "C" fn irisc_rt_msb_p(rt: *mut Runtime, dst: i32, src: i32) -> i32 {
    with_rt(rt, |r| r.msb_p(u(dst), u(src)))
}

/// Algorithm 15 (LiftP): mod p to mod p·2^m.
#[no_mangle]
pub extern "C" fn irisc_rt_lift_p(rt: *mut Runtime, dst: i32, src: i32, m: i32) -> i32 {
    with_rt(rt, |r| r.lift_p(u(dst), u(src), u(m)))
}

/// Algorithm 13 mod p: `[2^m·x]` mod p·2^m.
#[no_mangle]
pub extern "C" fn irisc_rt_const_lift_p(rt: *mut Runtime, dst: i32, src: i32, m: i32) -> i32 {
    with_rt(rt, |r| r.const_lift_p(u(dst), u(src), u(m)))
}

/// `a·x − b·y` mod p·2^m.
#[no_mangle]
pub extern "C" fn irisc_rt_lin_mod(
    rt: *mut Runtime,
    dst: i32,
    x: i32,
    y: i32,
    a: i64,
    b: i64,
    m: i32,
) -> i32 {
    with_rt(rt, |r| r.lin_mod(u(dst), u(x), u(y), a, b, u(m)))
}

/// The comparison bit of Lemma 2 over Z_(p·2^m).
#[no_mangle]
pub extern "C" fn irisc_rt_msb_mod(rt: *mut Runtime, dst: i32, src: i32, m: i32) -> i32 {
    with_rt(rt, |r| r.msb_mod(u(dst), u(src), u(m)))
}
