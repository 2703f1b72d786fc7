//! `irisc_gpu_dot{w}_k{K}`: the dot products of every gallery record with every query code of
//! a batch, as int8 GEMMs on the tensor cores (paper 003, Section 4.4), specialised to the
//! padded row length K the compiler knows from the program (code length and sides).
//!
//! `out[r*codes + c] = sum_k q_c[k] * g_r[k] mod 2^w`, from the limb planes of
//! [`irisc_runtime::contract::gpu`]: for every limb pair `(i, j)` with `i + j < w/8` one
//! product `<g_i, q_j>` accumulated in i32 into the accumulator of shift `i + j`; the epilogue
//! recombines ([`super::limbs::combine`]). 16-bit words take 3 limb products per k-step, 32-bit
//! words 10.
//!
//! # The NVPTX flavor
//!
//! A block of [`DOT_THREADS`] threads computes a [`BLOCK_ROWS`] x [`BLOCK_COLS`] tile of
//! (records x codes); each of its four warps a [`WARP_ROWS`] x [`WARP_COLS`] tile: 2 x 4
//! `mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32` tiles, the gallery as the row-major A
//! operand (16 records x 32 limbs) and the queries as the column-major B operand (32 limbs x 8
//! codes, i.e. code rows of limbs). Fragments are read straight from the planes: in the PTX
//! ISA's layout for `.s8` m16n8k32, lane `l` (group `g = l / 4`, `t = l % 4`) holds A's rows
//! `g` and `g + 8`, columns `4t..4t+3` and `16 + 4t..`, B's column (code) `g`, rows (limbs)
//! `4t..4t+3` and `16 + 4t..`, and the accumulators of rows `g`, `g + 8`, columns `2t, 2t + 1`;
//! four consecutive limbs of a row are one aligned 32-bit load. The padding of the planes
//! (zero rows up to a multiple of the block, zero columns up to a multiple of the k-step) makes
//! every load in bounds and adds nothing; only the epilogue checks `r < records`, `c < codes`.
//!
//! # The host flavor
//!
//! The same signature, planes, limb products, epilogue and bounds, with each i32 accumulator
//! summed by scalar int8 multiply-accumulates instead of `mma.sync`: the tests run it on this
//! CPU against the runtime's references.

use super::super::CodegenError;
use super::ir::{declare_kernel, err, Flavor, Ir, Param};
use super::limbs;
use inkwell::{
    context::Context,
    intrinsics::Intrinsic,
    module::Module,
    values::{BasicValue, IntValue, PointerValue},
};
use irisc_runtime::contract::gpu::{
    dot_kernel_name, LimbWidth, BLOCK_COLS, BLOCK_ROWS, DOT_THREADS, K_STEP, MAX_K, WARP_COLS,
    WARP_ROWS,
};

/// The tensor-core instruction the NVPTX flavor issues.
pub const MMA_INTRINSIC: &str = "llvm.nvvm.mma.m16n8k32.row.col.s8";
/// Rows (records) of one `mma` tile.
const MMA_M: u64 = 16;
/// Columns (codes) of one `mma` tile.
const MMA_N: u64 = 8;

/// Defines the dot kernel of `width` over rows of `k_pad` limb columns for `flavor` (once).
pub fn define<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    width: LimbWidth,
    k_pad: u64,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    let name = dot_kernel_name(width, k_pad);
    if k_pad == 0 || !k_pad.is_multiple_of(K_STEP) || k_pad > MAX_K {
        return Err(err(format!(
            "no GPU dot kernel for rows of {k_pad} limbs: a positive multiple of {K_STEP} up to {MAX_K} is needed"
        )));
    }
    use Param::*;
    // (gallery, gallery_rows_pad, queries, query_rows_pad, out, records, codes)
    let params = [Buf, I64, Buf, I64, Buf, I64, I64];
    let Some(f) = declare_kernel(cx, module, &name, &params, flavor) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let operands = Operands {
        gallery: ir.ptr_param(0)?,
        gallery_plane: ir.mul(ir.int_param(1)?, ir.c64(k_pad))?,
        queries: ir.ptr_param(2)?,
        query_plane: ir.mul(ir.int_param(3)?, ir.c64(k_pad))?,
        out: ir.ptr_param(4)?,
        records: ir.int_param(5)?,
        codes: ir.int_param(6)?,
        k_pad,
        width,
    };
    match flavor {
        Flavor::Nvptx => tensor_core_body(&ir, &operands)?,
        Flavor::Host => scalar_body(&ir, &operands)?,
    }
    ir.ret()?;
    Ok(())
}

/// The kernel's parameters, as values.
struct Operands<'ctx> {
    gallery: PointerValue<'ctx>,
    gallery_plane: IntValue<'ctx>,
    queries: PointerValue<'ctx>,
    query_plane: IntValue<'ctx>,
    out: PointerValue<'ctx>,
    records: IntValue<'ctx>,
    codes: IntValue<'ctx>,
    k_pad: u64,
    width: LimbWidth,
}

impl<'ctx> Operands<'ctx> {
    /// The offset of limb column `k` of row `row` in plane `limb` of a plane of `plane` bytes.
    fn offset(
        &self,
        ir: &Ir<'ctx, '_>,
        plane: IntValue<'ctx>,
        limb: usize,
        row: IntValue<'ctx>,
        k: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        let base = ir.mul(ir.c64(limb as u64), plane)?;
        ir.add(base, ir.add(ir.mul(row, ir.c64(self.k_pad))?, k)?)
    }

    /// The epilogue: if `(r, c)` is a real (record, code) pair, its word from the shift-grouped
    /// accumulators, stored record-major.
    fn store(
        &self,
        ir: &Ir<'ctx, '_>,
        r: IntValue<'ctx>,
        c: IntValue<'ctx>,
        acc: &[IntValue<'ctx>],
    ) -> Result<(), CodegenError> {
        let inside = ir.and(ir.ult(r, self.records)?, ir.ult(c, self.codes)?)?;
        let write = ir.block("store");
        let skip = ir.block("stored");
        ir.cond_br(inside, write, skip)?;
        ir.b.position_at_end(write);
        let word = limbs::combine(ir, self.width, acc)?;
        let wt = ir.word(self.width);
        let at = ir.add(ir.mul(r, self.codes)?, c)?;
        ir.store(ir.at(wt, self.out, at)?, word)?;
        ir.br(skip)?;
        ir.b.position_at_end(skip);
        Ok(())
    }
}

/// i32 stack slots (promoted to registers by the optimiser), zeroed.
fn accumulators<'ctx>(
    ir: &Ir<'ctx, '_>,
    n: usize,
) -> Result<Vec<PointerValue<'ctx>>, CodegenError> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let p = ir.b.build_alloca(ir.i32t(), "acc").map_err(err)?;
        ir.store(p, ir.i32t().const_zero())?;
        out.push(p);
    }
    Ok(out)
}

/// The host flavor: every (record, code) pair, each limb product a scalar loop.
fn scalar_body<'ctx>(ir: &Ir<'ctx, '_>, o: &Operands<'ctx>) -> Result<(), CodegenError> {
    let limbs = o.width.limbs();
    let acc = accumulators(ir, limbs)?;
    let (zero, one) = (ir.c64(0), ir.c64(1));
    ir.range("r", zero, o.records, one, &mut |ir, r| {
        ir.range("c", zero, o.codes, one, &mut |ir, c| {
            for a in &acc {
                ir.store(*a, ir.i32t().const_zero())?;
            }
            ir.range("k", zero, ir.c64(o.k_pad), one, &mut |ir, k| {
                for (i, j) in o.width.products() {
                    let g = ir.load(
                        ir.i8t(),
                        ir.at(ir.i8t(), o.gallery, o.offset(ir, o.gallery_plane, i, r, k)?)?,
                    )?;
                    let q = ir.load(
                        ir.i8t(),
                        ir.at(ir.i8t(), o.queries, o.offset(ir, o.query_plane, j, c, k)?)?,
                    )?;
                    let p = ir.mul(ir.sext(g, ir.i32t())?, ir.sext(q, ir.i32t())?)?;
                    let s = acc[i + j];
                    ir.store(s, ir.add(ir.load(ir.i32t(), s)?, p)?)?;
                }
                Ok(())
            })?;
            let sums = acc
                .iter()
                .map(|a| ir.load(ir.i32t(), *a))
                .collect::<Result<Vec<_>, _>>()?;
            o.store(ir, r, c, &sums)
        })
    })
}

/// The NVPTX flavor: one warp's 32 x 32 tile of 2 x 4 `mma` tiles, K in steps of 32 limbs.
fn tensor_core_body<'ctx>(ir: &Ir<'ctx, '_>, o: &Operands<'ctx>) -> Result<(), CodegenError> {
    let mma = Intrinsic::find(MMA_INTRINSIC)
        .and_then(|i| i.get_declaration(ir.module, &[]))
        .ok_or_else(|| err(format!("LLVM has no intrinsic {MMA_INTRINSIC}")))?;
    let limbs = o.width.limbs();
    let (m_tiles, n_tiles) = ((WARP_ROWS / MMA_M) as usize, (WARP_COLS / MMA_N) as usize);
    let warps_across = BLOCK_COLS / WARP_COLS;
    debug_assert_eq!(
        u64::from(DOT_THREADS) / 32,
        (BLOCK_ROWS / WARP_ROWS) * warps_across
    );

    let tid = ir.sreg("tid.x")?;
    let warp = ir.udiv(tid, ir.c64(32))?;
    let lane = ir.urem(tid, ir.c64(32))?;
    let group = ir.udiv(lane, ir.c64(4))?;
    let in_group = ir.urem(lane, ir.c64(4))?;
    let row0 = ir.add(
        ir.mul(ir.sreg("ctaid.y")?, ir.c64(BLOCK_ROWS))?,
        ir.mul(ir.udiv(warp, ir.c64(warps_across))?, ir.c64(WARP_ROWS))?,
    )?;
    let col0 = ir.add(
        ir.mul(ir.sreg("ctaid.x")?, ir.c64(BLOCK_COLS))?,
        ir.mul(ir.urem(warp, ir.c64(warps_across))?, ir.c64(WARP_COLS))?,
    )?;
    // This lane's A rows (records) per m tile, its B column (code) per n tile, and its four
    // limbs' offset inside a k-step's half.
    let a_rows: Vec<IntValue> = (0..m_tiles)
        .map(|mi| ir.add(row0, ir.add(ir.c64(mi as u64 * MMA_M), group)?))
        .collect::<Result<_, _>>()?;
    let b_cols: Vec<IntValue> = (0..n_tiles)
        .map(|ni| ir.add(col0, ir.add(ir.c64(ni as u64 * MMA_N), group)?))
        .collect::<Result<_, _>>()?;
    let k_lane = ir.mul(in_group, ir.c64(4))?;

    // Accumulators: [shift][m tile][n tile][4 registers].
    let acc = accumulators(ir, limbs * m_tiles * n_tiles * 4)?;
    let slot =
        |s: usize, mi: usize, ni: usize, x: usize| acc[((s * m_tiles + mi) * n_tiles + ni) * 4 + x];

    let load32 = |ir: &Ir<'ctx, '_>, base: PointerValue<'ctx>, off: IntValue<'ctx>| {
        let p = ir.at(ir.i8t(), base, off)?;
        let v = ir.b.build_load(ir.i32t(), p, "frag").map_err(err)?;
        if let Some(inst) = v.as_instruction_value() {
            inst.set_alignment(4).map_err(err)?;
        }
        Ok::<_, CodegenError>(v.into_int_value())
    };

    ir.range(
        "k",
        ir.c64(0),
        ir.c64(o.k_pad),
        ir.c64(K_STEP),
        &mut |ir, k| {
            let k_lo = ir.add(k, k_lane)?;
            let k_hi = ir.add(k_lo, ir.c64(K_STEP / 2))?;
            // A fragments [limb][m tile] = (row g: k_lo, row g+8: k_lo, row g: k_hi, row g+8: k_hi).
            let mut a = vec![vec![Vec::new(); m_tiles]; limbs];
            for (limb, per_limb) in a.iter_mut().enumerate() {
                for (mi, frag) in per_limb.iter_mut().enumerate() {
                    let r_lo = a_rows[mi];
                    let r_hi = ir.add(r_lo, ir.c64(8))?;
                    for (row, kk) in [(r_lo, k_lo), (r_hi, k_lo), (r_lo, k_hi), (r_hi, k_hi)] {
                        frag.push(load32(
                            ir,
                            o.gallery,
                            o.offset(ir, o.gallery_plane, limb, row, kk)?,
                        )?);
                    }
                }
            }
            // B fragments [limb][n tile] = (code g: k_lo, code g: k_hi).
            let mut bq = vec![vec![Vec::new(); n_tiles]; limbs];
            for (limb, per_limb) in bq.iter_mut().enumerate() {
                for (ni, frag) in per_limb.iter_mut().enumerate() {
                    for kk in [k_lo, k_hi] {
                        frag.push(load32(
                            ir,
                            o.queries,
                            o.offset(ir, o.query_plane, limb, b_cols[ni], kk)?,
                        )?);
                    }
                }
            }
            for (i, j) in o.width.products() {
                let s = i + j;
                for (mi, a_tile) in a[i].iter().enumerate().take(m_tiles) {
                    for (ni, b_tile) in bq[j].iter().enumerate().take(n_tiles) {
                        let mut args: Vec<inkwell::values::BasicMetadataValueEnum> =
                            Vec::with_capacity(10);
                        args.extend(
                            a_tile
                                .iter()
                                .map(|v| inkwell::values::BasicMetadataValueEnum::from(*v)),
                        );
                        args.extend(
                            b_tile
                                .iter()
                                .map(|v| inkwell::values::BasicMetadataValueEnum::from(*v)),
                        );
                        for x in 0..4 {
                            args.push(ir.load(ir.i32t(), slot(s, mi, ni, x))?.into());
                        }
                        let d =
                            ir.b.build_call(mma, &args, "mma")
                                .map_err(err)?
                                .try_as_basic_value()
                                .basic()
                                .ok_or_else(|| err("mma returns nothing"))?
                                .into_struct_value();
                        for x in 0..4 {
                            let v =
                                ir.b.build_extract_value(d, x as u32, "d")
                                    .map_err(err)?
                                    .into_int_value();
                            ir.store(slot(s, mi, ni, x), v)?;
                        }
                    }
                }
            }
            Ok(())
        },
    )?;

    // Epilogue: accumulator register x of tile (mi, ni) is row g + 8 (x / 2), column
    // 2t + (x % 2).
    for (mi, &row) in a_rows.iter().enumerate().take(m_tiles) {
        for ni in 0..n_tiles {
            for x in 0..4usize {
                let r = ir.add(row, ir.c64(8 * (x as u64 / 2)))?;
                let c = ir.add(
                    ir.add(col0, ir.c64(ni as u64 * MMA_N))?,
                    ir.add(ir.mul(in_group, ir.c64(2))?, ir.c64(x as u64 % 2))?,
                )?;
                let sums = (0..limbs)
                    .map(|s| ir.load(ir.i32t(), slot(s, mi, ni, x)))
                    .collect::<Result<Vec<_>, _>>()?;
                o.store(ir, r, c, &sums)?;
            }
        }
    }
    Ok(())
}
