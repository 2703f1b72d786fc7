//! The OR tree's local steps (paper 000, Section 4.2, "Accumulating the Resulting Bits":
//! x ∨ y = x ⊕ y ⊕ (x ∧ y) over a balanced tree per group) as the contract
//! ([`irisc_runtime::contract::gpu`]) defines them, for groups of equal size `s` on bit-sliced
//! replicated shares: `irisc_gpu_or_pairs` gathers each level's pairs (element j < s − h of a
//! group with element j + h, h = ⌈s/2⌉) and computes the AND's local share, and
//! `irisc_gpu_or_combine`, once the next party's share of the AND is in, writes the level's
//! result (each group's ORed pairs, then the middle element of an odd group). The runtime's
//! `protocol::or_tree::or_groups` is the same tree on the CPU.

use super::super::CodegenError;
use super::bits::{and_share, tail_mask};
use super::ir::{declare_kernel, Flavor, Ir, Param};
use inkwell::{
    context::Context,
    module::Module,
    values::{IntValue, PointerValue},
};
use irisc_runtime::contract::gpu::{OR_COMBINE_KERNEL, OR_PAIRS_KERNEL};

/// Bit `index` of the bit-sliced vector at `words`, as an i64 0 or 1.
fn bit_at<'ctx>(
    ir: &Ir<'ctx, '_>,
    words: PointerValue<'ctx>,
    index: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, CodegenError> {
    let t = ir.i64t();
    let w = ir.load(t, ir.at(t, words, ir.udiv(index, ir.c64(64))?)?)?;
    ir.and(ir.lshr(w, ir.urem(index, ir.c64(64))?)?, ir.c64(1))
}

/// The bits one element of a gathered word takes from its sources.
type ElementBits<'a, 'ctx> =
    dyn FnMut(&Ir<'ctx, '_>, IntValue<'ctx>) -> Result<Vec<IntValue<'ctx>>, CodegenError> + 'a;

/// Builds word `wi` of a vector of `len` bits from `bit(i)` for its elements i (fewer in the
/// last word; the tail stays zero): `acc` is a scratch slot.
fn gather_word<'ctx>(
    ir: &Ir<'ctx, '_>,
    wi: IntValue<'ctx>,
    len: IntValue<'ctx>,
    accs: &[PointerValue<'ctx>],
    bit: &mut ElementBits<'_, 'ctx>,
) -> Result<(), CodegenError> {
    for a in accs {
        ir.store(*a, ir.c64(0))?;
    }
    let base = ir.mul(wi, ir.c64(64))?;
    let left = ir.sub(len, base)?;
    let count = ir.select(ir.ult(left, ir.c64(64))?, left, ir.c64(64))?;
    ir.range("bit", ir.c64(0), count, ir.c64(1), &mut |ir, b| {
        let bits = bit(ir, ir.add(base, b)?)?;
        for (a, v) in accs.iter().zip(bits) {
            let cur = ir.load(ir.i64t(), *a)?;
            ir.store(
                *a,
                ir.b.build_or(cur, ir.shl(v, b)?, "")
                    .map_err(super::ir::err)?,
            )?;
        }
        Ok(())
    })
}

/// Defines `irisc_gpu_or_pairs` (once).
pub fn define_pairs<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        OR_PAIRS_KERNEL,
        &[Buf, Buf, Buf, I64, I64, I64, Buf, Buf, Buf, Buf, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (cur_own, cur_prev, alpha) = (ir.ptr_param(0)?, ir.ptr_param(1)?, ir.ptr_param(2)?);
    let (groups, s, h) = (ir.int_param(3)?, ir.int_param(4)?, ir.int_param(5)?);
    let (l_own, l_prev) = (ir.ptr_param(6)?, ir.ptr_param(7)?);
    let (r_own, r_prev, z_out) = (ir.ptr_param(8)?, ir.ptr_param(9)?, ir.ptr_param(10)?);
    let t = ir.i64t();
    let half = ir.sub(s, h)?;
    let pairs = ir.mul(groups, half)?;
    let words = ir.udiv(ir.add(pairs, ir.c64(63))?, ir.c64(64))?;
    let accs: Vec<PointerValue<'ctx>> = ["lo", "lp", "ro", "rp"]
        .iter()
        .map(|n| ir.entry_alloca(t, n))
        .collect::<Result<_, _>>()?;
    let (first, step) = ir.grid_stride()?;
    ir.range("w", first, words, step, &mut |ir, wi| {
        gather_word(ir, wi, pairs, &accs, &mut |ir, p| {
            // Pair p: element j of group g with element j + h.
            let g = ir.udiv(p, half)?;
            let j = ir.urem(p, half)?;
            let li = ir.add(ir.mul(g, s)?, j)?;
            let ri = ir.add(li, h)?;
            Ok(vec![
                bit_at(ir, cur_own, li)?,
                bit_at(ir, cur_prev, li)?,
                bit_at(ir, cur_own, ri)?,
                bit_at(ir, cur_prev, ri)?,
            ])
        })?;
        let v: Vec<IntValue<'ctx>> = accs
            .iter()
            .map(|a| ir.load(t, *a))
            .collect::<Result<_, _>>()?;
        let (lo, lp, ro, rp) = (v[0], v[1], v[2], v[3]);
        for (out, val) in [(l_own, lo), (l_prev, lp), (r_own, ro), (r_prev, rp)] {
            ir.store(ir.at(t, out, wi)?, val)?;
        }
        // ABY3's AND over F_2 (Appendix C eq. 4), the tail beyond the pairs cleared.
        let al = ir.load(t, ir.at(t, alpha, wi)?)?;
        let z = and_share(ir, (lo, lp), (ro, rp), al)?;
        let mask = tail_mask(ir, wi, words, pairs)?;
        ir.store(ir.at(t, z_out, wi)?, ir.and(z, mask)?)
    })?;
    ir.ret()?;
    Ok(())
}

/// Defines `irisc_gpu_or_combine` (once).
pub fn define_combine<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        OR_COMBINE_KERNEL,
        &[
            Buf, Buf, Buf, Buf, Buf, Buf, Buf, Buf, I64, I64, I64, Buf, Buf,
        ],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (l_own, l_prev, r_own, r_prev) = (
        ir.ptr_param(0)?,
        ir.ptr_param(1)?,
        ir.ptr_param(2)?,
        ir.ptr_param(3)?,
    );
    let (z, got) = (ir.ptr_param(4)?, ir.ptr_param(5)?);
    let (cur_own, cur_prev) = (ir.ptr_param(6)?, ir.ptr_param(7)?);
    let (groups, s, h) = (ir.int_param(8)?, ir.int_param(9)?, ir.int_param(10)?);
    let (next_own, next_prev) = (ir.ptr_param(11)?, ir.ptr_param(12)?);
    let t = ir.i64t();
    let half = ir.sub(s, h)?;
    let len = ir.mul(groups, h)?;
    let words = ir.udiv(ir.add(len, ir.c64(63))?, ir.c64(64))?;
    let accs: Vec<PointerValue<'ctx>> = ["no", "np"]
        .iter()
        .map(|n| ir.entry_alloca(t, n))
        .collect::<Result<_, _>>()?;
    let (first, step) = ir.grid_stride()?;
    ir.range("w", first, words, step, &mut |ir, wi| {
        gather_word(ir, wi, len, &accs, &mut |ir, q| {
            // Element j of group g in the next level: a pair's OR for j < s − h, else (the
            // middle of an odd group) the element itself.
            let g = ir.udiv(q, h)?;
            let j = ir.urem(q, h)?;
            let paired = ir.ult(j, half)?;
            let p = ir.add(ir.mul(g, half)?, j)?;
            // Clamp the pair index of a passed element so that its (unused) loads stay in
            // the buffers.
            let p = ir.select(paired, p, ir.c64(0))?;
            let or = |x: PointerValue<'ctx>, y: PointerValue<'ctx>, both: PointerValue<'ctx>| {
                ir.xor(
                    ir.xor(bit_at(ir, x, p)?, bit_at(ir, y, p)?)?,
                    bit_at(ir, both, p)?,
                )
            };
            let kept = ir.add(ir.mul(g, s)?, j)?;
            let po = ir.select(paired, or(l_own, r_own, z)?, bit_at(ir, cur_own, kept)?)?;
            let pp = ir.select(
                paired,
                or(l_prev, r_prev, got)?,
                bit_at(ir, cur_prev, kept)?,
            )?;
            Ok(vec![po, pp])
        })?;
        for (a, out) in accs.iter().zip([next_own, next_prev]) {
            let v = ir.load(t, *a)?;
            ir.store(ir.at(t, out, wi)?, v)?;
        }
        Ok(())
    })?;
    ir.ret()?;
    Ok(())
}
