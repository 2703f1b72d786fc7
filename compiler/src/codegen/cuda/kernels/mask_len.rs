//! `irisc_gpu_mask_len`: the public mask lengths `ml = popcount(q_mask & g_mask)` of every
//! (record, code) pair of a batch (paper 000, Section 3: the denominator of the fractional
//! Hamming distance, public when the masks are), as the contract
//! ([`irisc_runtime::contract::gpu`]) defines it. As many pairs as the dot products and in
//! their order (record-major), so the scan's public half keeps the GPU's pace.

use super::super::CodegenError;
use super::ir::{declare_kernel, err, Flavor, Ir, Param};
use inkwell::{context::Context, intrinsics::Intrinsic, module::Module};
use irisc_runtime::contract::gpu::{MASK_LEN_KERNEL, MASK_LEN_TILE_CODES, MASK_LEN_TILE_RECORDS};

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
    // One thread per tile of TR records x TC codes: per mask word it loads TR gallery words
    // and TC query words and adds TR·TC popcounts, instead of two loads per popcount. Edge
    // tiles clamp their indices to the last record and code (the loads stay in bounds) and
    // store only their real pairs.
    let (tr, tc) = (MASK_LEN_TILE_RECORDS, MASK_LEN_TILE_CODES);
    let code_tiles = ir.udiv(ir.add(codes, ir.c64(tc - 1))?, ir.c64(tc))?;
    let record_tiles = ir.udiv(ir.add(records, ir.c64(tr - 1))?, ir.c64(tr))?;
    let tiles = ir.mul(record_tiles, code_tiles)?;
    let (first, step) = ir.grid_stride()?;
    let accs: Vec<_> = (0..tr * tc)
        .map(|i| ir.entry_alloca(t, &format!("ml{i}")))
        .collect::<Result<_, _>>()?;
    ir.range("tile", first, tiles, step, &mut |ir, tile| {
        // Consecutive threads take consecutive code tiles of one record tile: the records'
        // mask words are read once per warp, the batch's from cache.
        let r0 = ir.mul(ir.udiv(tile, code_tiles)?, ir.c64(tr))?;
        let c0 = ir.mul(ir.urem(tile, code_tiles)?, ir.c64(tc))?;
        let last_r = ir.sub(records, ir.c64(1))?;
        let last_c = ir.sub(codes, ir.c64(1))?;
        let clamp = |ir: &Ir<'ctx, '_>, v, last| -> Result<_, CodegenError> {
            ir.select(ir.ult(last, v)?, last, v)
        };
        let mut rows = Vec::new();
        for i in 0..tr {
            let r = ir.add(r0, ir.c64(i))?;
            rows.push((r, ir.mul(clamp(ir, r, last_r)?, words)?));
        }
        let mut cols = Vec::new();
        for j in 0..tc {
            let c = ir.add(c0, ir.c64(j))?;
            cols.push((c, ir.mul(clamp(ir, c, last_c)?, words)?));
        }
        for a in &accs {
            ir.store(*a, ir.c64(0))?;
        }
        ir.range("w", ir.c64(0), words, ir.c64(1), &mut |ir, w| {
            let mut g = Vec::new();
            for (_, row) in &rows {
                g.push(ir.load(t, ir.at(t, gallery, ir.add(*row, w)?)?)?);
            }
            let mut q = Vec::new();
            for (_, col) in &cols {
                q.push(ir.load(t, ir.at(t, queries, ir.add(*col, w)?)?)?);
            }
            for (i, gi) in g.iter().enumerate() {
                for (j, qj) in q.iter().enumerate() {
                    let both = ir.and(*gi, *qj)?;
                    let bits =
                        ir.b.build_call(ctpop, &[both.into()], "popcount")
                            .map_err(err)?
                            .try_as_basic_value()
                            .basic()
                            .ok_or_else(|| err("llvm.ctpop returns nothing"))?
                            .into_int_value();
                    let acc = accs[i * tc as usize + j];
                    let cur = ir.load(t, acc)?;
                    ir.store(acc, ir.add(cur, bits)?)?;
                }
            }
            Ok(())
        })?;
        for (i, (r, _)) in rows.iter().enumerate() {
            for (j, (c, _)) in cols.iter().enumerate() {
                let real = ir.and(ir.ult(*r, records)?, ir.ult(*c, codes)?)?;
                let store = ir.block("ml_store");
                let next = ir.block("ml_next");
                ir.cond_br(real, store, next)?;
                ir.b.position_at_end(store);
                // 32-bit lengths (codes of fewer than 2^32 bits): half the bytes back to the host.
                let ml = ir.trunc(ir.load(t, accs[i * tc as usize + j])?, ir.i32t())?;
                let pair = ir.add(ir.mul(*r, codes)?, *c)?;
                ir.store(ir.at(ir.i32t(), out, pair)?, ml)?;
                ir.br(next)?;
                ir.b.position_at_end(next);
            }
        }
        Ok(())
    })?;
    ir.ret()?;
    Ok(())
}
