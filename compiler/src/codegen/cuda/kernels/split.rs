//! `irisc_gpu_split{w}`: ring words to the limb planes the dot kernels read (the layout of
//! [`irisc_runtime::contract::gpu`]). The gallery is split once when it is loaded onto the
//! GPU; a batch of queries once per batch, with the second side of replicated shares negated
//! so that one GEMM computes `<qa, ga> - <qb, gb>` (Appendix C, eq. 6).
//!
//! One thread per element of a plane (row, padded column), grid-stride; the host flavor loops
//! over the same elements with the same body.

use super::super::CodegenError;
use super::ir::{declare_kernel, err, Flavor, Ir, Param};
use super::limbs;
use inkwell::{context::Context, module::Module};
use irisc_runtime::contract::gpu::{split_kernel_name, LimbWidth};

/// Defines the split kernel of `width` in `module` for `flavor` (once).
pub fn define<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    width: LimbWidth,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    // (src_a, src_b, rows, len, sides, negate_b, dst, rows_pad, k_pad)
    let params = [Buf, Buf, I64, I64, I32, I32, Buf, I64, I64];
    let Some(f) = declare_kernel(cx, module, &split_kernel_name(width), &params, flavor) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let wt = ir.word(width);
    let (src_a, src_b) = (ir.ptr_param(0)?, ir.ptr_param(1)?);
    let (rows, len) = (ir.int_param(2)?, ir.int_param(3)?);
    let sides = ir.zext(ir.int_param(4)?, ir.i64t())?;
    let negate_b = ir.ne0(ir.int_param(5)?)?;
    let dst = ir.ptr_param(6)?;
    let (rows_pad, k_pad) = (ir.int_param(7)?, ir.int_param(8)?);
    let plane = ir.mul(rows_pad, k_pad)?;
    let cols = ir.mul(sides, len)?;

    let (first, step) = ir.grid_stride()?;
    ir.range("e", first, plane, step, &mut |ir, e| {
        let r = ir.udiv(e, k_pad)?;
        let i = ir.urem(e, k_pad)?;
        let inside = ir.and(ir.ult(r, rows)?, ir.ult(i, cols)?)?;
        let load_bb = ir.block("load");
        let pad_bb = ir.block("pad");
        let join = ir.block("join");
        ir.cond_br(inside, load_bb, pad_bb)?;

        // A word of the operand: side i / len, column i % len; side b negated on request.
        ir.b.position_at_end(load_bb);
        // i >= len (as i > len - 1 would underflow at len = 0) and a second side exists.
        let on_b = ir.and(
            ir.ult(len, ir.add(i, ir.c64(1))?)?,
            ir.ult(ir.c64(1), sides)?,
        )?;
        let col = ir.select(on_b, ir.sub(i, len)?, i)?;
        let src =
            ir.b.build_select(on_b, src_b, src_a, "side")
                .map_err(err)?
                .into_pointer_value();
        let x = ir.load(wt, ir.at(wt, src, ir.add(ir.mul(r, len)?, col)?)?)?;
        let neg = ir.and(on_b, negate_b)?;
        let x = ir.select(neg, ir.sub(wt.const_zero(), x)?, x)?;
        let limbs = limbs::split(ir, width, x)?;
        for (j, limb) in limbs.iter().enumerate() {
            let at = ir.add(ir.mul(ir.c64(j as u64), plane)?, e)?;
            ir.store(ir.at(ir.i8t(), dst, at)?, *limb)?;
        }
        ir.br(join)?;

        // Padding rows and columns are zero in every plane.
        ir.b.position_at_end(pad_bb);
        for j in 0..width.limbs() {
            let at = ir.add(ir.mul(ir.c64(j as u64), plane)?, e)?;
            ir.store(ir.at(ir.i8t(), dst, at)?, ir.i8t().const_zero())?;
        }
        ir.br(join)?;
        ir.b.position_at_end(join);
        Ok(())
    })?;
    ir.ret()?;
    Ok(())
}
