//! The local steps of MSB extraction (paper 000, Appendix E: Algorithm 10, BitExtract, built
//! from ShareSplit, Algorithm 5; FA, Algorithm 6; BinAdd, Algorithm 7) as the contract
//! ([`irisc_runtime::contract::gpu`]) defines them: `irisc_gpu_fa_local` (the split and the
//! full-adder layer's AND shares, all planes in one launch), `irisc_gpu_fa_finish` (the
//! carries once the next party's shares are in) and `irisc_gpu_ripple_local` (one round of
//! the ripple-carry chain). The runtime's `protocol::bit_extract` is the same computation on
//! the CPU; the host twins are tested against it, bit for bit, in three-party runs.

use super::super::CodegenError;
use super::bits::{and_share, tail_mask};
use super::ir::{declare_kernel, Flavor, Ir, Param};
use inkwell::{context::Context, module::Module, values::IntValue};
use irisc_runtime::contract::gpu::{FA_FINISH_KERNEL, FA_LOCAL_KERNEL, RIPPLE_LOCAL_KERNEL};

/// `v` if `cond`, else zero.
fn when<'ctx>(
    ir: &Ir<'ctx, '_>,
    cond: IntValue<'ctx>,
    v: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, CodegenError> {
    ir.select(cond, v, ir.c64(0))
}

/// Defines `irisc_gpu_fa_local` (once).
pub fn define_fa_local<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        FA_LOCAL_KERNEL,
        &[Buf, Buf, Buf, I32, I64, I64, I64, Buf, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (own, prev, alpha) = (ir.ptr_param(0)?, ir.ptr_param(1)?, ir.ptr_param(2)?);
    let party = ir.int_param(3)?;
    let (words, planes, len) = (ir.int_param(4)?, ir.int_param(5)?, ir.int_param(6)?);
    let (z_out, cc_out) = (ir.ptr_param(7)?, ir.ptr_param(8)?);
    let t = ir.i64t();
    let is = |p: u64| ir.eq(party, ir.c32(p));
    let (first, step) = ir.grid_stride()?;
    let total = ir.mul(planes, words)?;
    ir.range("item", first, total, step, &mut |ir, item| {
        let w = ir.urem(item, words)?;
        let o = ir.load(t, ir.at(t, own, item)?)?;
        let p = ir.load(t, ir.at(t, prev, item)?)?;
        // ShareSplit: component j is (own if j == party, prev if j + 1 == party mod 3).
        let comp = |j: u64| -> Result<(IntValue<'ctx>, IntValue<'ctx>), CodegenError> {
            Ok((when(ir, is(j)?, o)?, when(ir, is((j + 1) % 3)?, p)?))
        };
        let (a, b, c) = (comp(0)?, comp(1)?, comp(2)?);
        let t1 = (ir.xor(a.0, c.0)?, ir.xor(a.1, c.1)?);
        let t2 = (ir.xor(b.0, c.0)?, ir.xor(b.1, c.1)?);
        let al = ir.load(t, ir.at(t, alpha, item)?)?;
        let z = ir.and(and_share(ir, t1, t2, al)?, tail_mask(ir, w, words, len)?)?;
        ir.store(ir.at(t, z_out, item)?, z)?;
        ir.store(ir.at(t, cc_out, item)?, ir.xor(z, c.0)?)
    })?;
    ir.ret()?;
    Ok(())
}

/// Defines `irisc_gpu_fa_finish` (once).
pub fn define_fa_finish<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        FA_FINISH_KERNEL,
        &[Buf, Buf, I32, I64, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (got, prev) = (ir.ptr_param(0)?, ir.ptr_param(1)?);
    let party = ir.int_param(2)?;
    let (n, out) = (ir.int_param(3)?, ir.ptr_param(4)?);
    let t = ir.i64t();
    // Component 2's prev side is the party's own prev share at party 0 (2 + 1 == 0 mod 3).
    let holds = ir.eq(party, ir.c32(0))?;
    let (first, step) = ir.grid_stride()?;
    ir.range("e", first, n, step, &mut |ir, e| {
        let g = ir.load(t, ir.at(t, got, e)?)?;
        let p = ir.load(t, ir.at(t, prev, e)?)?;
        ir.store(ir.at(t, out, e)?, ir.xor(g, when(ir, holds, p)?)?)
    })?;
    ir.ret()?;
    Ok(())
}

/// Defines `irisc_gpu_ripple_local` (once).
pub fn define_ripple_local<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        RIPPLE_LOCAL_KERNEL,
        &[Buf, Buf, Buf, Buf, Buf, Buf, Buf, I64, I64, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (cc_own, cc_prev) = (ir.ptr_param(0)?, ir.ptr_param(1)?);
    let (s_own, s_prev) = (ir.ptr_param(2)?, ir.ptr_param(3)?);
    let (k_own, k_prev, alpha) = (ir.ptr_param(4)?, ir.ptr_param(5)?, ir.ptr_param(6)?);
    let (words, len, z_out) = (ir.int_param(7)?, ir.int_param(8)?, ir.ptr_param(9)?);
    let t = ir.i64t();
    let (first, step) = ir.grid_stride()?;
    ir.range("w", first, words, step, &mut |ir, w| {
        let ld = |p| ir.load(t, ir.at(t, p, w)?);
        let (ko, kp) = (ld(k_own)?, ld(k_prev)?);
        let t1 = (ir.xor(ld(cc_own)?, ko)?, ir.xor(ld(cc_prev)?, kp)?);
        let t2 = (ir.xor(ld(s_own)?, ko)?, ir.xor(ld(s_prev)?, kp)?);
        let z = ir.and(
            and_share(ir, t1, t2, ld(alpha)?)?,
            tail_mask(ir, w, words, len)?,
        )?;
        ir.store(ir.at(t, z_out, w)?, z)?;
        ir.store(ir.at(t, k_own, w)?, ir.xor(ko, z)?)
    })?;
    ir.ret()?;
    Ok(())
}
