//! The PRSS on the GPU: `irisc_gpu_aes_ctr` (the keystream of a pairwise seed, AES-128 in
//! counter mode with T-table rounds) and `irisc_gpu_prss_zero{w}` (zero shares
//! `F(s_i) - F(s_{i-1})` from two keystreams), as the contract
//! ([`irisc_runtime::contract::gpu`]) defines them. The streams are the CPU runtime's
//! ([`irisc_runtime::rand::aes_ctr`]), so GPU and CPU parties agree; the host twins are tested
//! against that stream.
//!
//! The tables ([`irisc_runtime::rand::aes_tables`]) are module constants (4 KiB per round
//! table, 256 bytes of S-box) in the flavor's global address space: on the GPU, read-only data
//! the loads may take through the non-coherent cache.

use super::super::CodegenError;
use super::ir::{declare_kernel, err, Flavor, Ir, Param};
use inkwell::{
    context::Context,
    intrinsics::Intrinsic,
    module::{Linkage, Module},
    values::{GlobalValue, IntValue, PointerValue},
};
use irisc_runtime::contract::gpu::{prss_zero_kernel_name, LimbWidth, AES_CTR_KERNEL};
use irisc_runtime::rand::aes_tables::{sbox, t_tables};

/// The four round tables and the S-box as module constants (once per module).
fn tables<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> ([GlobalValue<'ctx>; 4], GlobalValue<'ctx>) {
    let space = flavor.address_space();
    let te = t_tables();
    let tables = std::array::from_fn(|k| {
        let name = format!("irisc_aes_te{k}");
        module.get_global(&name).unwrap_or_else(|| {
            let vals: Vec<_> = te[k]
                .iter()
                .map(|&v| cx.i32_type().const_int(u64::from(v), false))
                .collect();
            let init = cx.i32_type().const_array(&vals);
            let g = module.add_global(init.get_type(), Some(space), &name);
            g.set_initializer(&init);
            g.set_constant(true);
            g.set_linkage(Linkage::Internal);
            g
        })
    });
    let s = module.get_global("irisc_aes_sbox").unwrap_or_else(|| {
        let vals: Vec<_> = sbox()
            .iter()
            .map(|&v| cx.i8_type().const_int(u64::from(v), false))
            .collect();
        let init = cx.i8_type().const_array(&vals);
        let g = module.add_global(init.get_type(), Some(space), "irisc_aes_sbox");
        g.set_initializer(&init);
        g.set_constant(true);
        g.set_linkage(Linkage::Internal);
        g
    });
    (tables, s)
}

fn bswap<'ctx>(ir: &Ir<'ctx, '_>, v: IntValue<'ctx>) -> Result<IntValue<'ctx>, CodegenError> {
    let f = Intrinsic::find("llvm.bswap")
        .and_then(|i| i.get_declaration(ir.module, &[v.get_type().into()]))
        .ok_or_else(|| err("LLVM has no llvm.bswap"))?;
    Ok(ir
        .b
        .build_call(f, &[v.into()], "bswap")
        .map_err(err)?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| err("bswap returns nothing"))?
        .into_int_value())
}

/// `table[index]` (i32 entries) for a byte index in an i32.
fn lookup<'ctx>(
    ir: &Ir<'ctx, '_>,
    table: GlobalValue<'ctx>,
    elem: inkwell::types::IntType<'ctx>,
    index: IntValue<'ctx>,
) -> Result<IntValue<'ctx>, CodegenError> {
    let i = ir.zext(index, ir.i64t())?;
    ir.load(elem, ir.at(elem, table.as_pointer_value(), i)?)
}

/// Byte `k` (0 = most significant) of a big-endian column word, as i32.
fn byte<'ctx>(
    ir: &Ir<'ctx, '_>,
    w: IntValue<'ctx>,
    k: u32,
) -> Result<IntValue<'ctx>, CodegenError> {
    let shifted = ir.lshr(w, ir.c32(u64::from(24 - 8 * k)))?;
    ir.and(shifted, ir.c32(0xff))
}

/// AES-128 of the state columns `st` (big-endian words, the input block already loaded) under
/// the round-key words at `rk`: FIPS-197's rounds in T-table form.
fn encrypt<'ctx>(
    ir: &Ir<'ctx, '_>,
    rk: PointerValue<'ctx>,
    te: &[GlobalValue<'ctx>; 4],
    sb: GlobalValue<'ctx>,
    block: [IntValue<'ctx>; 4],
) -> Result<[IntValue<'ctx>; 4], CodegenError> {
    let key = |i: u64| ir.load(ir.i32t(), ir.at(ir.i32t(), rk, ir.c64(i))?);
    let mut st = [block[0]; 4];
    for c in 0..4 {
        st[c] = ir.b.build_xor(block[c], key(c as u64)?, "").map_err(err)?;
    }
    for r in 1..10u64 {
        let mut t = st;
        for c in 0..4 {
            let mut v = key(4 * r + c as u64)?;
            for k in 0..4 {
                let part = lookup(ir, te[k], ir.i32t(), byte(ir, st[(c + k) % 4], k as u32)?)?;
                v = ir.b.build_xor(v, part, "").map_err(err)?;
            }
            t[c] = v;
        }
        st = t;
    }
    let mut out = st;
    for c in 0..4 {
        let mut v = key(40 + c as u64)?;
        for k in 0..4u32 {
            let s = lookup(ir, sb, ir.i8t(), byte(ir, st[(c + k as usize) % 4], k)?)?;
            let s = ir.shl(ir.zext(s, ir.i32t())?, ir.c32(u64::from(24 - 8 * k)))?;
            v = ir.b.build_xor(v, s, "").map_err(err)?;
        }
        out[c] = v;
    }
    Ok(out)
}

/// Defines `irisc_gpu_aes_ctr` for `flavor` (once).
pub fn define_aes_ctr<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    let (te, sb) = tables(cx, module, flavor);
    // (round_keys, first_lo, first_hi, blocks, out)
    let Some(f) = declare_kernel(
        cx,
        module,
        AES_CTR_KERNEL,
        &[Buf, I64, I64, I64, Buf],
        flavor,
    ) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let rk = ir.ptr_param(0)?;
    let (first_lo, first_hi) = (ir.int_param(1)?, ir.int_param(2)?);
    let blocks = ir.int_param(3)?;
    let out = ir.ptr_param(4)?;
    let (first, step) = ir.grid_stride()?;
    ir.range("block", first, blocks, step, &mut |ir, b| {
        // The 128-bit little-endian counter first + b.
        let lo = ir.add(first_lo, b)?;
        let carry = ir.zext(ir.ult(lo, first_lo)?, ir.i64t())?;
        let hi = ir.add(first_hi, carry)?;
        // Column c is bytes 4c..4c+4 of the counter, read big-endian.
        let mut cols = [lo; 4];
        for (c, half, shift) in [(0, lo, 0u64), (1, lo, 32), (2, hi, 0), (3, hi, 32)] {
            let w = ir.trunc(ir.lshr(half, ir.c64(shift))?, ir.i32t())?;
            cols[c] = bswap(ir, w)?;
        }
        let ct = encrypt(ir, rk, &te, sb, cols)?;
        for (c, w) in ct.iter().enumerate() {
            let at = ir.add(ir.mul(b, ir.c64(16))?, ir.c64(4 * c as u64))?;
            let p = ir.at(ir.i8t(), out, at)?;
            let st = ir.b.build_store(p, bswap(ir, *w)?).map_err(err)?;
            st.set_alignment(4).map_err(err)?;
        }
        Ok(())
    })?;
    ir.ret()?;
    Ok(())
}

/// Defines `irisc_gpu_prss_zero{w}` for `flavor` (once).
pub fn define_prss_zero<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    width: LimbWidth,
    flavor: Flavor,
) -> Result<(), CodegenError> {
    use Param::*;
    // (own, own_skip, prev, prev_skip, n, out)
    let params = [Buf, I64, Buf, I64, I64, Buf];
    let Some(f) = declare_kernel(cx, module, &prss_zero_kernel_name(width), &params, flavor) else {
        return Ok(());
    };
    let ir = Ir::new(cx, module, f, flavor);
    let (own, own_skip) = (ir.ptr_param(0)?, ir.int_param(1)?);
    let (prev, prev_skip) = (ir.ptr_param(2)?, ir.int_param(3)?);
    let n = ir.int_param(4)?;
    let out = ir.ptr_param(5)?;
    let wt = ir.word(width);
    let bytes = u64::from(width.bits() / 8);
    let (first, step) = ir.grid_stride()?;
    ir.range("e", first, n, step, &mut |ir, e| {
        // The skip may leave a word unaligned.
        let at = |skip| ir.add(skip, ir.mul(e, ir.c64(bytes))?);
        let word = |stream, skip| ir.load_le(wt, stream, at(skip)?);
        let v = ir.sub(word(own, own_skip)?, word(prev, prev_skip)?)?;
        ir.store(ir.at(wt, out, e)?, v)
    })?;
    ir.ret()?;
    Ok(())
}
