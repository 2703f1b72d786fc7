//! `irisc_gpu_mask_len`: the public mask lengths `ml = popcount(q_mask & g_mask)` of every
//! (record, code) pair of a batch (paper 000, Section 3: the denominator of the fractional
//! Hamming distance, public when the masks are), as the contract
//! ([`irisc_runtime::contract::gpu`]) defines it. As many pairs as the dot products and in
//! their order (record-major), so the scan's public half keeps the GPU's pace.

use super::super::CodegenError;
use super::ir::{declare_kernel, err, Flavor, Ir, Param};
use inkwell::{context::Context, intrinsics::Intrinsic, module::Module};
use irisc_runtime::contract::gpu::MASK_LEN_KERNEL;

/// Defines `irisc_gpu_mask_len` (once).
pub fn define<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let Some(f) = declare_kernel(
        cx,
        module,
        MASK_LEN_KERNEL,
        &[Buf, Buf, I64, I64, I64, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (gallery, queries) = (ir.ptr_param(0)?, ir.ptr_param(1)?);
    let (words, records, codes) = (ir.int_param(2)?, ir.int_param(3)?, ir.int_param(4)?);
    let out = ir.ptr_param(5)?;
    let t = ir.i64t();
    let ctpop = Intrinsic::find("llvm.ctpop")
        .and_then(|i| i.get_declaration(module, &[t.into()]))
        .ok_or_else(|| err("LLVM has no llvm.ctpop"))?;
    let (first, step) = ir.grid_stride()?;
    let pairs = ir.mul(records, codes)?;
    ir.range("pair", first, pairs, step, &mut |ir, pair| {
        // Consecutive threads take consecutive codes of one record: the record's mask words
        // are read once per warp, the batch's from cache.
        let r = ir.udiv(pair, codes)?;
        let c = ir.urem(pair, codes)?;
        let (g_row, q_row) = (ir.mul(r, words)?, ir.mul(c, words)?);
        let acc = ir.entry_alloca(t, "ml")?;
        ir.store(acc, ir.c64(0))?;
        ir.range("w", ir.c64(0), words, ir.c64(1), &mut |ir, w| {
            let g = ir.load(t, ir.at(t, gallery, ir.add(g_row, w)?)?)?;
            let q = ir.load(t, ir.at(t, queries, ir.add(q_row, w)?)?)?;
            let both = ir.and(g, q)?;
            let bits =
                ir.b.build_call(ctpop, &[both.into()], "popcount")
                    .map_err(err)?
                    .try_as_basic_value()
                    .basic()
                    .ok_or_else(|| err("llvm.ctpop returns nothing"))?
                    .into_int_value();
            let cur = ir.load(t, acc)?;
            ir.store(acc, ir.add(cur, bits)?)
        })?;
        let ml = ir.load(t, acc)?;
        ir.store(ir.at(t, out, pair)?, ml)
    })?;
    ir.ret()?;
    Ok(())
}
