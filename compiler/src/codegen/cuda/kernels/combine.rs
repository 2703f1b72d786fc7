//! `irisc_gpu_combine{w}`: the ring words of a batch from the shift-grouped i32 accumulators
//! that a library int8 GEMM (cuBLAS, `cublasGemmEx` in "TN" form) wrote, one accumulator plane
//! per shift `8 s` (paper 003, Section 4.4: the limb products with `i + j = s` accumulate into
//! plane `s`). This is the epilogue of [`super::dot`], as a kernel of its own: with the library
//! GEMM the tensor-core work is cuBLAS's, and the recombination stays irisc's.
//!
//! Accumulator planes are column-major `codes_pad x records_pad` (`ldc` = the query planes'
//! padded rows), what the GEMM of the query planes (A, transposed) with the gallery planes (B)
//! produces; the output is record-major `out[r*codes + c]`, as every dot kernel's. One thread
//! per output word, grid-stride; the host flavor loops over the same words with the same body.

use super::super::CodegenError;
use super::ir::{declare_kernel, Flavor, Ir, Param};
use super::limbs;
use inkwell::{context::Context, module::Module};
use irisc_runtime::contract::gpu::{combine_kernel_name, LimbWidth};

/// Defines the combine kernel of `width` in `module` for `flavor` (once).
pub fn define<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    width: LimbWidth,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    // (acc, ldc, plane, records, codes, out)
    let params = [Buf, I64, I64, I64, I64, Buf];
    let Some(f) = declare_kernel(cx, module, &combine_kernel_name(width), &params, flavor) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let wt = ir.word(width);
    let acc = ir.ptr_param(0)?;
    let (ldc, plane) = (ir.int_param(1)?, ir.int_param(2)?);
    let (records, codes) = (ir.int_param(3)?, ir.int_param(4)?);
    let out = ir.ptr_param(5)?;
    let n = ir.mul(records, codes)?;

    let (first, step) = ir.grid_stride()?;
    ir.range("e", first, n, step, &mut |ir, e| {
        let r = ir.udiv(e, codes)?;
        let c = ir.urem(e, codes)?;
        let at = ir.add(ir.mul(r, ldc)?, c)?;
        let mut shifts = Vec::with_capacity(width.limbs());
        for s in 0..width.limbs() {
            let i = ir.add(ir.mul(ir.c64(s as u64), plane)?, at)?;
            shifts.push(ir.load(ir.i32t(), ir.at(ir.i32t(), acc, i)?)?);
        }
        let word = limbs::combine(ir, width, &shifts)?;
        ir.store(ir.at(wt, out, e)?, word)
    })?;
    ir.ret()?;
    Ok(())
}
