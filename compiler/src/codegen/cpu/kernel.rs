//! The masked dot-product kernel (Appendix C, eq. 6), generated per (code length, storage type).
//!
//! `out[r*n_codes + c] = sum_{i<L} qa[c*L+i]*ga[r*L+i] - qb[c*L+i]*gb[r*L+i]`, wrapping in T.
//! Each party holds its share pre-processed as `(x'_i, x'_{i-1})`, so the product of two shared
//! vectors is two plain dot products; this kernel computes both for every (record, code) pair.
//! `L` is a constant of the generated code, so LLVM unrolls and vectorises the inner loop for
//! the host; the runtime calls it through `irisc_rt_masked_dot`.

use super::CodegenError;
use inkwell::{
    attributes::{Attribute, AttributeLoc},
    context::Context,
    module::{Linkage, Module},
    types::IntType,
    values::FunctionValue,
    IntPredicate,
};

/// Bits of the storage type of a ring Z_2^k: u16 for k <= 16, u32 for k <= 32, u64 otherwise,
/// as the runtime stores shares (one definition, the runtime's).
pub fn storage_bits(ring_bits: u32) -> u32 {
    irisc_runtime::ring::storage_for(ring_bits.clamp(1, 64)).bits()
}

/// `irisc_kernel_masked_dot_L{bits}_u{width}`: the symbol the runtime's reference matches.
pub fn kernel_name(code_bits: u32, width: u32) -> String {
    format!("irisc_kernel_masked_dot_L{code_bits}_u{width}")
}

fn e<T>(r: Result<T, inkwell::builder::BuilderError>) -> Result<T, CodegenError> {
    r.map_err(|e| CodegenError(e.to_string()))
}

/// Returns the kernel for (`code_bits`, `width`), defining it in `module` the first time.
pub fn masked_dot<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    code_bits: u32,
    width: u32,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    let name = kernel_name(code_bits, width);
    if let Some(f) = module.get_function(&name) {
        return Ok(f);
    }
    if code_bits == 0 || !matches!(width, 16 | 32 | 64) {
        return Err(CodegenError(format!(
            "no masked-dot kernel for L = {code_bits}, u{width}"
        )));
    }
    let t: IntType = match width {
        16 => cx.i16_type(),
        32 => cx.i32_type(),
        _ => cx.i64_type(),
    };
    let i64t = cx.i64_type();
    let ptr = cx.ptr_type(Default::default());
    let fn_t = cx.void_type().fn_type(
        &[
            ptr.into(),
            ptr.into(),
            i64t.into(),
            ptr.into(),
            ptr.into(),
            i64t.into(),
            ptr.into(),
        ],
        false,
    );
    let f = module.add_function(&name, fn_t, Some(Linkage::External));
    // The runtime passes distinct buffers and writes only `out`: telling LLVM so lets it keep
    // the accumulators in vector registers.
    let noalias = cx.create_enum_attribute(Attribute::get_named_enum_kind_id("noalias"), 0);
    let readonly = cx.create_enum_attribute(Attribute::get_named_enum_kind_id("readonly"), 0);
    for i in [0u32, 1, 3, 4, 6] {
        f.add_attribute(AttributeLoc::Param(i), noalias);
    }
    for i in [0u32, 1, 3, 4] {
        f.add_attribute(AttributeLoc::Param(i), readonly);
    }
    let nounwind = cx.create_enum_attribute(Attribute::get_named_enum_kind_id("nounwind"), 0);
    f.add_attribute(AttributeLoc::Function, nounwind);

    let p = |i: u32| {
        f.get_nth_param(i)
            .ok_or_else(|| CodegenError("kernel parameter missing".into()))
    };
    let (qa, qb, n_codes) = (
        p(0)?.into_pointer_value(),
        p(1)?.into_pointer_value(),
        p(2)?.into_int_value(),
    );
    let (ga, gb, n_records) = (
        p(3)?.into_pointer_value(),
        p(4)?.into_pointer_value(),
        p(5)?.into_int_value(),
    );
    let out = p(6)?.into_pointer_value();
    let names = ["qa", "qb", "n_codes", "ga", "gb", "n_records", "out"];
    for (i, n) in names.iter().enumerate() {
        if let Some(v) = f.get_nth_param(i as u32) {
            v.set_name(n);
        }
    }

    let b = cx.create_builder();
    let entry = cx.append_basic_block(f, "entry");
    let r_head = cx.append_basic_block(f, "records");
    let r_body = cx.append_basic_block(f, "record");
    let c_head = cx.append_basic_block(f, "codes");
    let c_body = cx.append_basic_block(f, "code");
    let i_loop = cx.append_basic_block(f, "bits");
    let c_next_bb = cx.append_basic_block(f, "code.done");
    let r_next_bb = cx.append_basic_block(f, "record.done");
    let exit = cx.append_basic_block(f, "exit");
    let l = i64t.const_int(code_bits.into(), false);

    b.position_at_end(entry);
    e(b.build_unconditional_branch(r_head))?;

    // for r in 0..n_records
    b.position_at_end(r_head);
    let r = e(b.build_phi(i64t, "r"))?;
    let r_v = r.as_basic_value().into_int_value();
    let more = e(b.build_int_compare(IntPredicate::ULT, r_v, n_records, "more.records"))?;
    e(b.build_conditional_branch(more, r_body, exit))?;
    b.position_at_end(r_body);
    let g_off = e(b.build_int_mul(r_v, l, "g.off"))?;
    let out_row = e(b.build_int_mul(r_v, n_codes, "out.row"))?;
    e(b.build_unconditional_branch(c_head))?;

    // for c in 0..n_codes
    b.position_at_end(c_head);
    let c = e(b.build_phi(i64t, "c"))?;
    let c_v = c.as_basic_value().into_int_value();
    let more = e(b.build_int_compare(IntPredicate::ULT, c_v, n_codes, "more.codes"))?;
    e(b.build_conditional_branch(more, c_body, r_next_bb))?;
    b.position_at_end(c_body);
    let q_off = e(b.build_int_mul(c_v, l, "q.off"))?;
    e(b.build_unconditional_branch(i_loop))?;

    // for i in 0..L (L > 0): acc += qa*ga - qb*gb, wrapping in T
    b.position_at_end(i_loop);
    let i = e(b.build_phi(i64t, "i"))?;
    let acc = e(b.build_phi(t, "acc"))?;
    let i_v = i.as_basic_value().into_int_value();
    let qi = e(b.build_int_add(q_off, i_v, "qi"))?;
    let gi = e(b.build_int_add(g_off, i_v, "gi"))?;
    let load = |base, idx, name: &str| -> Result<inkwell::values::IntValue<'ctx>, CodegenError> {
        // SAFETY: idx < n * L for the buffers the caller passes (the ABI's contract).
        let at = e(unsafe { b.build_in_bounds_gep(t, base, &[idx], &format!("{name}.p")) })?;
        Ok(e(b.build_load(t, at, name))?.into_int_value())
    };
    let (xa, ya) = (load(qa, qi, "qa.i")?, load(ga, gi, "ga.i")?);
    let (xb, yb) = (load(qb, qi, "qb.i")?, load(gb, gi, "gb.i")?);
    let pa = e(b.build_int_mul(xa, ya, "pa"))?;
    let pb = e(b.build_int_mul(xb, yb, "pb"))?;
    let d = e(b.build_int_sub(pa, pb, "d"))?;
    let acc_next = e(b.build_int_add(acc.as_basic_value().into_int_value(), d, "acc.next"))?;
    let i_next = e(b.build_int_add(i_v, i64t.const_int(1, false), "i.next"))?;
    let done = e(b.build_int_compare(IntPredicate::EQ, i_next, l, "bits.done"))?;
    e(b.build_conditional_branch(done, c_next_bb, i_loop))?;
    i.add_incoming(&[(&i64t.const_zero(), c_body), (&i_next, i_loop)]);
    acc.add_incoming(&[(&t.const_zero(), c_body), (&acc_next, i_loop)]);

    b.position_at_end(c_next_bb);
    let o = e(b.build_int_add(out_row, c_v, "o"))?;
    // SAFETY: r < n_records and c < n_codes, so o < n_records * n_codes, the size of `out`.
    let at = e(unsafe { b.build_in_bounds_gep(t, out, &[o], "out.p") })?;
    e(b.build_store(at, acc_next))?;
    let c_next = e(b.build_int_add(c_v, i64t.const_int(1, false), "c.next"))?;
    e(b.build_unconditional_branch(c_head))?;
    c.add_incoming(&[(&i64t.const_zero(), r_body), (&c_next, c_next_bb)]);

    b.position_at_end(r_next_bb);
    let r_next = e(b.build_int_add(r_v, i64t.const_int(1, false), "r.next"))?;
    e(b.build_unconditional_branch(r_head))?;
    r.add_incoming(&[(&i64t.const_zero(), entry), (&r_next, r_next_bb)]);

    b.position_at_end(exit);
    e(b.build_return(None))?;
    Ok(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::cpu::target::{host_machine, optimize};
    use inkwell::OptimizationLevel;
    use rand::{Rng, SeedableRng};

    type Kernel<T> = unsafe extern "C" fn(*const T, *const T, i64, *const T, *const T, i64, *mut T);

    fn reference<T: Copy + Into<u64>>(
        qa: &[T],
        qb: &[T],
        gc: (&[T], &[T]),
        l: usize,
        bits: u32,
    ) -> Vec<u64> {
        let (ga, gb) = gc;
        let (nc, nr) = (qa.len() / l, ga.len() / l);
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let mut out = vec![0u64; nc * nr];
        for r in 0..nr {
            for c in 0..nc {
                let mut acc = 0u64;
                for i in 0..l {
                    let a = qa[c * l + i].into().wrapping_mul(ga[r * l + i].into());
                    let b = qb[c * l + i].into().wrapping_mul(gb[r * l + i].into());
                    acc = acc.wrapping_add(a).wrapping_sub(b);
                }
                out[r * nc + c] = acc & mask;
            }
        }
        out
    }

    macro_rules! check_width {
        ($t:ty, $bits:expr, $l:expr) => {{
            let cx = Context::create();
            let module = cx.create_module("kernel_test");
            let tm = host_machine().unwrap();
            masked_dot(&cx, &module, $l, $bits).unwrap();
            module.verify().unwrap();
            optimize(&module, &tm).unwrap();
            let ee = module
                .create_jit_execution_engine(OptimizationLevel::Aggressive)
                .unwrap();
            let f = unsafe { ee.get_function::<Kernel<$t>>(&kernel_name($l, $bits)) }.unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64($l as u64 * $bits);
            let l = $l as usize;
            let (nc, nr) = (3usize, 5usize);
            let gen = |n: usize, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<$t> {
                (0..n).map(|_| rng.random()).collect()
            };
            let (qa, qb) = (gen(nc * l, &mut rng), gen(nc * l, &mut rng));
            let (ga, gb) = (gen(nr * l, &mut rng), gen(nr * l, &mut rng));
            let mut out = vec![0 as $t; nc * nr];
            unsafe {
                f.call(
                    qa.as_ptr(),
                    qb.as_ptr(),
                    nc as i64,
                    ga.as_ptr(),
                    gb.as_ptr(),
                    nr as i64,
                    out.as_mut_ptr(),
                )
            };
            let want = reference(&qa, &qb, (&ga, &gb), l, $bits);
            assert_eq!(
                out.iter().map(|&x| x as u64).collect::<Vec<_>>(),
                want,
                "L = {}, u{}",
                $l,
                $bits
            );
            // Empty batches write nothing and do not fault.
            unsafe {
                f.call(
                    qa.as_ptr(),
                    qb.as_ptr(),
                    0,
                    ga.as_ptr(),
                    gb.as_ptr(),
                    nr as i64,
                    out.as_mut_ptr(),
                )
            };
            unsafe {
                f.call(
                    qa.as_ptr(),
                    qb.as_ptr(),
                    nc as i64,
                    ga.as_ptr(),
                    gb.as_ptr(),
                    0,
                    out.as_mut_ptr(),
                )
            };
        }};
    }

    #[test]
    fn jit_kernels_match_a_plain_loop() {
        for l in [64u32, 192, 12800] {
            check_width!(u16, 16, l);
            check_width!(u32, 32, l);
            check_width!(u64, 64, l);
        }
    }

    #[test]
    fn kernels_are_shared_per_length_and_width() {
        let cx = Context::create();
        let module = cx.create_module("k");
        let a = masked_dot(&cx, &module, 64, 16).unwrap();
        let b = masked_dot(&cx, &module, 64, 16).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, masked_dot(&cx, &module, 64, 32).unwrap());
        assert!(masked_dot(&cx, &module, 64, 8).is_err());
        assert_eq!(storage_bits(16), 16);
        assert_eq!(storage_bits(17), 32);
        assert_eq!(storage_bits(33), 64);
    }
}
