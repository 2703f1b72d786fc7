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
    basic_block::BasicBlock,
    builder::Builder,
    context::Context,
    module::{Linkage, Module},
    types::IntType,
    values::{FunctionValue, IntValue, PointerValue},
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

/// Query codes that share one pass over a gallery record: each pass loads the record's words
/// once for all of them and keeps one (vector) accumulator per code. Chosen by measurement
/// (`examples/masked_dot_timing.rs`).
pub const CODE_BLOCK: u32 = 8;

/// Returns the kernel for (`code_bits`, `width`), defining it in `module` the first time.
pub fn masked_dot<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    code_bits: u32,
    width: u32,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    masked_dot_blocked(cx, module, code_bits, width, CODE_BLOCK)
}

/// As [`masked_dot`], with `codes_per_block` (>= 1) query codes per pass over a record.
pub fn masked_dot_blocked<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    code_bits: u32,
    width: u32,
    codes_per_block: u32,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    let name = kernel_name(code_bits, width);
    if let Some(f) = module.get_function(&name) {
        return Ok(f);
    }
    if code_bits == 0 || !matches!(width, 16 | 32 | 64) || codes_per_block == 0 {
        return Err(CodegenError(format!(
            "no masked-dot kernel for L = {code_bits}, u{width}, {codes_per_block} codes per block"
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

    let names = ["qa", "qb", "n_codes", "ga", "gb", "n_records", "out"];
    let mut params = Vec::with_capacity(names.len());
    for (i, n) in names.iter().enumerate() {
        let v = f
            .get_nth_param(i as u32)
            .ok_or_else(|| CodegenError("kernel parameter missing".into()))?;
        v.set_name(n);
        params.push(v);
    }
    let b = cx.create_builder();
    let k = Kernel {
        cx,
        f,
        b: &b,
        t,
        l: code_bits.into(),
        codes: codes_per_block,
        qa: params[0].into_pointer_value(),
        qb: params[1].into_pointer_value(),
        n_codes: params[2].into_int_value(),
        ga: params[3].into_pointer_value(),
        gb: params[4].into_pointer_value(),
        n_records: params[5].into_int_value(),
        out: params[6].into_pointer_value(),
    };

    let entry = cx.append_basic_block(f, "entry");
    b.position_at_end(entry);
    k.pass()?;
    e(b.build_return(None))?;
    Ok(f)
}

fn e<T>(r: Result<T, inkwell::builder::BuilderError>) -> Result<T, CodegenError> {
    r.map_err(|e| CodegenError(e.to_string()))
}

/// What the loops of one kernel share.
struct Kernel<'a, 'ctx> {
    cx: &'ctx Context,
    f: FunctionValue<'ctx>,
    b: &'a Builder<'ctx>,
    t: IntType<'ctx>,
    /// The code length L.
    l: u64,
    /// Query codes per block.
    codes: u32,
    qa: PointerValue<'ctx>,
    qb: PointerValue<'ctx>,
    n_codes: IntValue<'ctx>,
    ga: PointerValue<'ctx>,
    gb: PointerValue<'ctx>,
    n_records: IntValue<'ctx>,
    out: PointerValue<'ctx>,
}

impl<'ctx> Kernel<'_, 'ctx> {
    /// Emits, at the builder's position, `out[r*n_codes + c] = Σ_{i<L} ...` for every record r
    /// and code c: records outermost, then blocks of `codes` codes, then the n_codes % codes
    /// left one at a time. Leaves the builder at the end of its last block, unterminated.
    fn pass(&self) -> Result<(), CodegenError> {
        let name = "dot";
        let (cx, b, f, i64t) = (self.cx, self.b, self.f, self.cx.i64_type());
        let bb = |s: &str| cx.append_basic_block(f, &format!("{name}.{s}"));
        let from = b
            .get_insert_block()
            .ok_or_else(|| CodegenError("builder not positioned".into()))?;
        let (r_head, r_body) = (bb("records"), bb("record"));
        let (blk_head, blk_body, blk_done) = (bb("blocks"), bb("block"), bb("block.done"));
        let (tail_head, tail_body, tail_done) = (bb("tail"), bb("tail.code"), bb("tail.done"));
        let (r_next_bb, exit) = (bb("record.done"), bb("done"));
        let l = i64t.const_int(self.l, false);
        let one = i64t.const_int(1, false);
        let cb = i64t.const_int(self.codes.into(), false);
        e(b.build_unconditional_branch(r_head))?;

        // for r in 0..n_records
        b.position_at_end(r_head);
        let r = e(b.build_phi(i64t, "r"))?;
        let r_v = r.as_basic_value().into_int_value();
        let more = e(b.build_int_compare(IntPredicate::ULT, r_v, self.n_records, "more.records"))?;
        e(b.build_conditional_branch(more, r_body, exit))?;
        b.position_at_end(r_body);
        let g_off = e(b.build_int_mul(r_v, l, "g.off"))?;
        let out_row = e(b.build_int_mul(r_v, self.n_codes, "out.row"))?;
        e(b.build_unconditional_branch(blk_head))?;

        // while c + CB <= n_codes: the CB codes c..c+CB share one pass over the record.
        b.position_at_end(blk_head);
        let c = e(b.build_phi(i64t, "c"))?;
        let c_blk = c.as_basic_value().into_int_value();
        let c_end = e(b.build_int_add(c_blk, cb, "c.end"))?;
        let fits = e(b.build_int_compare(IntPredicate::ULE, c_end, self.n_codes, "block.fits"))?;
        e(b.build_conditional_branch(fits, blk_body, tail_head))?;
        b.position_at_end(blk_body);
        let mut codes = Vec::with_capacity(self.codes as usize);
        for j in 0..self.codes {
            let cj = e(b.build_int_add(c_blk, i64t.const_int(j.into(), false), "cj"))?;
            codes.push((cj, e(b.build_int_mul(cj, l, "q.off"))?));
        }
        let q_offs: Vec<_> = codes.iter().map(|&(_, q)| q).collect();
        let accs = self.dot_loop(blk_body, &q_offs, g_off, blk_done, name)?;
        b.position_at_end(blk_done);
        for (&(cj, _), acc) in codes.iter().zip(accs) {
            self.store(out_row, cj, acc)?;
        }
        e(b.build_unconditional_branch(blk_head))?;
        c.add_incoming(&[(&i64t.const_zero(), r_body), (&c_end, blk_done)]);

        // The n_codes % CB codes left, one at a time.
        b.position_at_end(tail_head);
        let c = e(b.build_phi(i64t, "c.tail"))?;
        let c_v = c.as_basic_value().into_int_value();
        let more = e(b.build_int_compare(IntPredicate::ULT, c_v, self.n_codes, "more.codes"))?;
        e(b.build_conditional_branch(more, tail_body, r_next_bb))?;
        b.position_at_end(tail_body);
        let q_off = e(b.build_int_mul(c_v, l, "q.off"))?;
        let acc = self.dot_loop(tail_body, &[q_off], g_off, tail_done, name)?;
        b.position_at_end(tail_done);
        self.store(out_row, c_v, acc[0])?;
        let c_next = e(b.build_int_add(c_v, one, "c.next"))?;
        e(b.build_unconditional_branch(tail_head))?;
        c.add_incoming(&[(&c_blk, blk_head), (&c_next, tail_done)]);

        b.position_at_end(r_next_bb);
        let r_next = e(b.build_int_add(r_v, one, "r.next"))?;
        e(b.build_unconditional_branch(r_head))?;
        r.add_incoming(&[(&i64t.const_zero(), from), (&r_next, r_next_bb)]);

        b.position_at_end(exit);
        Ok(())
    }

    fn load(
        &self,
        base: PointerValue<'ctx>,
        idx: IntValue<'ctx>,
        name: &str,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        // SAFETY: idx < n * L for the buffers the caller passes (the ABI's contract).
        let at = e(unsafe {
            self.b
                .build_in_bounds_gep(self.t, base, &[idx], &format!("{name}.p"))
        })?;
        Ok(e(self.b.build_load(self.t, at, name))?.into_int_value())
    }

    /// `for i in 0..L` (L > 0): one accumulator per query offset in `q_offs`, each
    /// `acc += qa[q+i]*ga[g+i] - qb[q+i]*gb[g+i]`, wrapping in T; the gallery words are loaded
    /// once per i for all of them. Entered from `from`, leaves to `done`; returns the sums.
    fn dot_loop(
        &self,
        from: BasicBlock<'ctx>,
        q_offs: &[IntValue<'ctx>],
        g_off: IntValue<'ctx>,
        done: BasicBlock<'ctx>,
        name: &str,
    ) -> Result<Vec<IntValue<'ctx>>, CodegenError> {
        let (b, t, i64t) = (self.b, self.t, self.cx.i64_type());
        let body = self
            .cx
            .insert_basic_block_after(from, &format!("{name}.bits"));
        e(b.build_unconditional_branch(body))?;
        b.position_at_end(body);
        let i = e(b.build_phi(i64t, "i"))?;
        let accs = q_offs
            .iter()
            .map(|_| e(b.build_phi(t, "acc")))
            .collect::<Result<Vec<_>, _>>()?;
        let i_v = i.as_basic_value().into_int_value();
        let gi = e(b.build_int_add(g_off, i_v, "gi"))?;
        let (ya, yb) = (
            self.load(self.ga, gi, "ga.i")?,
            self.load(self.gb, gi, "gb.i")?,
        );
        let mut next = Vec::with_capacity(q_offs.len());
        for (&q_off, acc) in q_offs.iter().zip(&accs) {
            let qi = e(b.build_int_add(q_off, i_v, "qi"))?;
            let (xa, xb) = (
                self.load(self.qa, qi, "qa.i")?,
                self.load(self.qb, qi, "qb.i")?,
            );
            let pa = e(b.build_int_mul(xa, ya, "pa"))?;
            let pb = e(b.build_int_mul(xb, yb, "pb"))?;
            let d = e(b.build_int_sub(pa, pb, "d"))?;
            let acc_v = acc.as_basic_value().into_int_value();
            next.push(e(b.build_int_add(acc_v, d, "acc.next"))?);
        }
        let i_next = e(b.build_int_add(i_v, i64t.const_int(1, false), "i.next"))?;
        let l = i64t.const_int(self.l, false);
        let fin = e(b.build_int_compare(IntPredicate::EQ, i_next, l, "bits.done"))?;
        e(b.build_conditional_branch(fin, done, body))?;
        i.add_incoming(&[(&i64t.const_zero(), from), (&i_next, body)]);
        for (acc, n) in accs.iter().zip(&next) {
            acc.add_incoming(&[(&t.const_zero(), from), (n, body)]);
        }
        Ok(next)
    }

    /// `out[row + c] = v`.
    fn store(
        &self,
        row: IntValue<'ctx>,
        c: IntValue<'ctx>,
        v: IntValue<'ctx>,
    ) -> Result<(), CodegenError> {
        let o = e(self.b.build_int_add(row, c, "o"))?;
        // SAFETY: r < n_records and c < n_codes, so o < n_records * n_codes, the size of `out`.
        let at = e(unsafe { self.b.build_in_bounds_gep(self.t, self.out, &[o], "out.p") })?;
        e(self.b.build_store(at, v))?;
        Ok(())
    }
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

    /// JIT-compiles the kernel for (`$l`, `$bits`) with `$cb` codes per block and compares it
    /// with the plain loop for every n_codes in `$codes` and n_records in 0..=5: each covers
    /// full blocks, the remainder path, or both. `out` has one extra word that must stay put.
    macro_rules! check_width {
        ($t:ty, $bits:expr, $l:expr, $cb:expr, $codes:expr) => {{
            let cx = Context::create();
            let module = cx.create_module("kernel_test");
            let tm = host_machine().unwrap();
            masked_dot_blocked(&cx, &module, $l, $bits, $cb).unwrap();
            module.verify().unwrap();
            optimize(&module, &tm).unwrap();
            let ee = module
                .create_jit_execution_engine(OptimizationLevel::Aggressive)
                .unwrap();
            let f = unsafe { ee.get_function::<Kernel<$t>>(&kernel_name($l, $bits)) }.unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64($l as u64 * $bits);
            let l = $l as usize;
            let gen = |n: usize, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<$t> {
                (0..n).map(|_| rng.random()).collect()
            };
            for nc in $codes {
                for nr in 0usize..=5 {
                    let (qa, qb) = (gen(nc * l, &mut rng), gen(nc * l, &mut rng));
                    let (ga, gb) = (gen(nr * l, &mut rng), gen(nr * l, &mut rng));
                    let sentinel = <$t>::MAX - 1;
                    let mut out = vec![sentinel; nc * nr + 1];
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
                    let mut want = reference(&qa, &qb, (&ga, &gb), l, $bits);
                    want.push(sentinel as u64);
                    assert_eq!(
                        out.iter().map(|&x| x as u64).collect::<Vec<_>>(),
                        want,
                        "L = {}, u{}, {} codes per block, n_codes = {nc}, n_records = {nr}",
                        $l,
                        $bits,
                        $cb
                    );
                }
            }
        }};
    }

    #[test]
    fn jit_kernels_match_a_plain_loop() {
        for l in [64u32, 192, 12800] {
            check_width!(u16, 16, l, CODE_BLOCK, [0usize, 3, 31]);
            check_width!(u32, 32, l, CODE_BLOCK, [0usize, 3, 31]);
            check_width!(u64, 64, l, CODE_BLOCK, [0usize, 3, 31]);
        }
    }

    #[test]
    fn block_remainders_match_a_plain_loop() {
        for l in [1u32, 7, 64, 65, 192, 12800] {
            check_width!(u16, 16, l, CODE_BLOCK, 1usize..=9);
            check_width!(u32, 32, l, CODE_BLOCK, 1usize..=9);
            check_width!(u64, 64, l, CODE_BLOCK, 1usize..=9);
        }
        // Other block sizes, on lengths that exercise the vector remainder too.
        for cb in [1u32, 2, 3, 4, 5] {
            for l in [7u32, 65] {
                check_width!(u16, 16, l, cb, 1usize..=9);
                check_width!(u64, 64, l, cb, 1usize..=9);
            }
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
        assert!(masked_dot_blocked(&cx, &module, 128, 16, 0).is_err());
        assert!(masked_dot(&cx, &module, 0, 16).is_err());
        assert_eq!(storage_bits(16), 16);
        assert_eq!(storage_bits(17), 32);
        assert_eq!(storage_bits(33), 64);
    }
}
