//! `irisc_gpu_reshare_local{w}`: a party's local step of Reshare (paper 000, Appendix C):
//! its additive share re-randomised by its PRSS zero share and reduced to k bits, the word it
//! sends to the next party, as the contract ([`irisc_runtime::contract::gpu`]) defines it.

use super::super::CodegenError;
use super::ir::{declare_kernel, Flavor, Ir, Param};
use inkwell::{context::Context, module::Module};
use irisc_runtime::contract::gpu::{reshare_local_kernel_name, LimbWidth};

/// Defines `irisc_gpu_reshare_local{w}` (once).
pub fn define<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    width: LimbWidth,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        &reshare_local_kernel_name(width),
        &[Buf, Buf, I64, I32, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (z, alpha, n) = (ir.ptr_param(0)?, ir.ptr_param(1)?, ir.int_param(2)?);
    let k = ir.int_param(3)?;
    let out = ir.ptr_param(4)?;
    let wt = ir.word(width);
    // The mask of the low k bits, k in 1..=w: all ones shifted right by w − k.
    let shift = ir.sub(ir.c32(u64::from(width.bits())), k)?;
    let mask = ir.lshr(wt.const_all_ones(), ir.trunc(shift, wt)?)?;
    let (first, step) = ir.grid_stride()?;
    ir.range("e", first, n, step, &mut |ir, e| {
        let a = ir.load(wt, ir.at(wt, z, e)?)?;
        let b = ir.load(wt, ir.at(wt, alpha, e)?)?;
        ir.store(ir.at(wt, out, e)?, ir.and(ir.add(a, b)?, mask)?)
    })?;
    ir.ret()?;
    Ok(())
}
