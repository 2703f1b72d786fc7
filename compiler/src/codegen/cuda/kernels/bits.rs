//! The bit-sliced kernels of the comparison phase, as the contract
//! ([`irisc_runtime::contract::gpu`]) defines them: ring words to bit planes
//! (`irisc_gpu_bit_planes{w}`, the layout of `protocol::bit_planes` that MSB extraction,
//! Algorithms 5-8, works on), a party's local step of a binary AND (`irisc_gpu_and_local`,
//! ABY3 over F_2: the three cross terms it can compute, re-randomised by its PRSS zero bits),
//! and the zero bits themselves (`irisc_gpu_prss_zero_bits`). Only the AND's result crosses to
//! the next party; everything else stays where the values are.

use super::super::CodegenError;
use super::ir::{declare_kernel, err, Flavor, Ir, Param};
use inkwell::{context::Context, module::Module, values::IntValue};
use irisc_runtime::contract::gpu::{
    bit_planes_kernel_name, LimbWidth, AND_LOCAL_KERNEL, PRSS_ZERO_BITS_KERNEL,
};

/// Defines `irisc_gpu_bit_planes{w}` (once).
pub fn define_bit_planes<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    width: LimbWidth,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        &bit_planes_kernel_name(width),
        &[Buf, I64, I32, Buf, I64],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (src, n) = (ir.ptr_param(0)?, ir.int_param(1)?);
    let planes = ir.zext(ir.int_param(2)?, ir.i64t())?;
    let (dst, words) = (ir.ptr_param(3)?, ir.int_param(4)?);
    let wt = ir.word(width);
    let (first, step) = ir.grid_stride()?;
    let total = ir.mul(planes, words)?;
    ir.range("item", first, total, step, &mut |ir, item| {
        let j = ir.udiv(item, words)?;
        let w = ir.urem(item, words)?;
        // Planes above the storage width are zero.
        let in_width = ir.ult(j, ir.c64(u64::from(width.bits())))?;
        let acc = ir.entry_alloca(ir.i64t(), "plane_word")?;
        ir.store(acc, ir.c64(0))?;
        let fill = ir.block("fill");
        let store = ir.block("store");
        ir.cond_br(in_width, fill, store)?;
        ir.b.position_at_end(fill);
        let base = ir.mul(w, ir.c64(64))?;
        // The 64 elements of this word (fewer in the last one).
        let left = ir.sub(n, base)?;
        let count = ir.select(ir.ult(left, ir.c64(64))?, left, ir.c64(64))?;
        ir.range("bit", ir.c64(0), count, ir.c64(1), &mut |ir, b| {
            let x = ir.load(wt, ir.at(wt, src, ir.add(base, b)?)?)?;
            let jw = ir.trunc(j, wt)?;
            let bit = ir.and(ir.lshr(x, jw)?, wt.const_int(1, false))?;
            let bit = ir.shl(ir.zext(bit, ir.i64t())?, b)?;
            let cur = ir.load(ir.i64t(), acc)?;
            ir.store(acc, ir.b.build_or(cur, bit, "").map_err(err)?)
        })?;
        ir.br(store)?;
        ir.b.position_at_end(store);
        let v = ir.load(ir.i64t(), acc)?;
        ir.store(ir.at(ir.i64t(), dst, item)?, v)
    })?;
    ir.ret()?;
    Ok(())
}

/// The AND gate's local share over F_2 (ABY3, Appendix C eq. 4): `x.own (y.own ^ y.prev) ^
/// x.prev y.own ^ alpha`.
pub(super) fn and_share<'ctx>(
    ir: &Ir<'ctx, '_>,
    (xo, xp): (IntValue<'ctx>, IntValue<'ctx>),
    (yo, yp): (IntValue<'ctx>, IntValue<'ctx>),
    alpha: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, CodegenError> {
    let z = ir.xor(ir.and(xo, ir.xor(yo, yp)?)?, ir.and(xp, yo)?)?;
    ir.xor(z, alpha)
}

/// The valid bits of word `w` of a plane of `words` words holding `len` bits: all ones but
/// in the last word of a length that is not a multiple of 64.
pub(super) fn tail_mask<'ctx>(
    ir: &Ir<'ctx, '_>,
    w: IntValue<'ctx>,
    words: IntValue<'ctx>,
    len: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, CodegenError> {
    let rem = ir.urem(len, ir.c64(64))?;
    let partial = ir.sub(ir.shl(ir.c64(1), rem)?, ir.c64(1))?;
    let tail = ir.select(ir.ne0(rem)?, partial, ir.c64(u64::MAX))?;
    let last = ir.eq(w, ir.sub(words, ir.c64(1))?)?;
    ir.select(last, tail, ir.c64(u64::MAX))
}

/// Defines `irisc_gpu_and_local` (once).
pub fn define_and_local<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        AND_LOCAL_KERNEL,
        &[Buf, Buf, Buf, Buf, Buf, I64, I64, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (x_own, x_prev) = (ir.ptr_param(0)?, ir.ptr_param(1)?);
    let (y_own, y_prev) = (ir.ptr_param(2)?, ir.ptr_param(3)?);
    let alpha = ir.ptr_param(4)?;
    let (words, len) = (ir.int_param(5)?, ir.int_param(6)?);
    let out = ir.ptr_param(7)?;
    let t = ir.i64t();
    let (first, step) = ir.grid_stride()?;
    ir.range("w", first, words, step, &mut |ir, w| {
        let ld = |p| ir.load(t, ir.at(t, p, w)?);
        let z = and_share(
            ir,
            (ld(x_own)?, ld(x_prev)?),
            (ld(y_own)?, ld(y_prev)?),
            ld(alpha)?,
        )?;
        ir.store(ir.at(t, out, w)?, ir.and(z, tail_mask(ir, w, words, len)?)?)
    })?;
    ir.ret()?;
    Ok(())
}

/// Defines `irisc_gpu_prss_zero_bits` (once): `out[e] = own[e] ^ prev[e]` over little-endian
/// u64 words read at byte offsets `own_skip`, `prev_skip`.
pub fn define_prss_zero_bits<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        PRSS_ZERO_BITS_KERNEL,
        &[Buf, I64, Buf, I64, I64, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (own, own_skip) = (ir.ptr_param(0)?, ir.int_param(1)?);
    let (prev, prev_skip) = (ir.ptr_param(2)?, ir.int_param(3)?);
    let n = ir.int_param(4)?;
    let out = ir.ptr_param(5)?;
    let t = ir.i64t();
    let (first, step) = ir.grid_stride()?;
    ir.range("e", first, n, step, &mut |ir, e| {
        let at = |skip| ir.add(skip, ir.mul(e, ir.c64(8))?);
        let word = |stream, skip| ir.load_le(t, stream, at(skip)?);
        let v =
            ir.b.build_xor(word(own, own_skip)?, word(prev, prev_skip)?, "")
                .map_err(err)?;
        ir.store(ir.at(t, out, e)?, v)
    })?;
    ir.ret()?;
    Ok(())
}
