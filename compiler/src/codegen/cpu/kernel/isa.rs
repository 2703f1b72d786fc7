//! The instruction sets a kernel is generated for, and each one's multiply-accumulate step.
//!
//! - `vnni` (AVX-512 VNNI): `vpdpwssd` multiplies 32 pairs of i16 and adds each adjacent pair
//!   of products into one of 16 i32 lanes of the accumulator. The words are read as signed,
//!   but a signed product is congruent to the unsigned one mod 2^16 and i32 lanes wrap mod
//!   2^32, so the lanes are exact mod 2^16: truncating their sum gives the Z_2^16 dot product.
//! - `avx512` (AVX-512BW): the same with `vpmaddwd` then `vpaddd`.
//! - `avx2`: `vpmaddwd` on 256-bit vectors.
//! - `portable`: plain LLVM vector IR with no target features beyond the baseline (x86-64 on
//!   x86, the host otherwise), correct on every CPU of the target architecture.
//!
//! The second side of a replicated product (eq. 6, `- <q_b, g_b>`) subtracts its pair sums
//! (`vpsubd`); on VNNI, whose fused add has no subtracting form, it negates the query words
//! once per load (reused by every record of the tile) so one accumulator holds both sides.
//!
//! F_p: the query words (below p) are mapped to their signed representatives in (-p/2, p/2),
//! congruent mod p (two instructions per query vector, reused by the tile's records); the
//! gallery words are split into their unsigned bytes, g = 256 hi + lo exactly (two
//! instructions, no sign fix-up of the gallery), so that `vpdpwssd` / `vpmaddwd` pair sums stay
//! below 2 x 32759 x 255 < 2^24 and i32 lanes accumulate 128 steps (one K chunk); each chunk's
//! sum (lo + 256 hi, in i64) is reduced mod p once and added to `out` mod p.
//!
//! Why F_p cannot reach 70 % of the 16-bit peak (the peak is one `vpdpwssd zmm`, 32 products, per
//! cycle): an exact product of two 16-bit residues needs |x| <= 32759 at best, so one product
//! reaches 2^30 and a `vpdpwssd` pair sum 2 x 32759^2 = 2 146 368 162, just below 2^31: a second
//! instruction into the same i32 lane can overflow, and the lane then wraps mod 2^32, which is
//! not a multiple of p, so the residue is lost. Keeping full products therefore costs a widening
//! (2 `vpmovsxdq` + 2 `vpaddq`) or a reduction per MAC instruction; splitting one operand into
//! bytes costs a second MAC instruction per 32 word pairs instead (the cheapest); 8-bit VNNI
//! (`vpdpbusd`, 64 byte products per instruction) needs four byte products per word product,
//! again two instructions' worth. Every exact scheme thus issues at least 2 MAC instructions per
//! 32 word pairs: F_p's ceiling is 50 % of the measured 16-bit peak, before the split and
//! signed-representative instructions (16 vector ALU instructions per 24 `vpdpwssd` in the 6 x 2
//! tile) and the per-chunk reduction. Splitting the query instead of the gallery (the query is
//! reused by every record) would need the gallery's signed representative (2 instructions per
//! gallery vector) on top of the query's split: more instructions, not fewer. Nor does 8-bit
//! VNNI with the query as signed-byte digits mod p (q ≡ x + 256u, 256q ≡ y + 256v; the gallery's
//! bytes multiplied in place, no instruction on either operand): measured 51 against 54 M/s in
//! cache at L = 2 048, and slower from memory, its two digit planes doubling the query's bytes
//! (`bench/results/cpu-2026-11-28/runs/fp-no-record-panels/README.md`). Where the CPU has
//! AMX-INT8 the tile multiplies lift that ceiling: the AMX kernel ([`super::amx`]) ran F_p at
//! 0.61-0.62 of this peak on an Intel Xeon, 2.8x the vector kernel
//! (`bench/results/cpu-2026-12-02-xeon-amx`).

use super::{CodegenError, DotRing, P};
use inkwell::{
    attributes::AttributeLoc,
    builder::Builder,
    context::Context,
    module::Module,
    types::{BasicTypeEnum, IntType, VectorType},
    values::{BasicValueEnum, FunctionValue, IntValue, VectorValue},
};

/// An instruction-set variant: the contract's, whose discriminant is its slot in the kernel
/// table the runtime reads (the same enum on both sides).
pub use irisc_runtime::contract::Isa;

/// What code generation needs of an ISA beyond the contract (its name, table slot and x86
/// features are the contract's).
pub trait IsaCodegen: Copy {
    fn apply(self, cx: &Context, f: FunctionValue, x86: bool);
    fn tile(self, ring: DotRing) -> (u32, u32);
    fn k_chunk(self, ring: DotRing) -> u32;
    fn prefetch_bytes(self) -> Option<u64>;
    fn lanes(self, ring: DotRing) -> u32;
}

impl IsaCodegen for Isa {
    /// Sets the function attributes that select this ISA, overriding the target machine's
    /// (host) CPU so that `portable` really is the baseline. Tuning stays the host's.
    fn apply(self, cx: &Context, f: FunctionValue, x86: bool) {
        if !x86 {
            return;
        }
        let host = inkwell::targets::TargetMachine::get_host_cpu_name();
        let tune = host.to_str().unwrap_or("generic");
        let attrs = [
            ("target-cpu", "x86-64"),
            ("target-features", self.x86_features()),
            ("tune-cpu", tune),
        ];
        for (k, v) in attrs {
            f.add_attribute(AttributeLoc::Function, cx.create_string_attribute(k, v));
        }
        if matches!(self, Isa::Avx512 | Isa::Vnni) {
            for k in ["prefer-vector-width", "min-legal-vector-width"] {
                f.add_attribute(AttributeLoc::Function, cx.create_string_attribute(k, "512"));
            }
        }
    }

    /// The register tile (records, codes): records x codes accumulators live in registers
    /// while the K loop streams R + C vectors per step (32 zmm, 16 ymm/xmm).
    fn tile(self, ring: DotRing) -> (u32, u32) {
        match (self, ring) {
            // 4 gallery and 6 query vectors per 24 accumulators (see `analysis::kernel_tile`).
            (Isa::Avx512 | Isa::Vnni, DotRing::Z16 | DotRing::Gr16) => (4, 6),
            // Two accumulators per pair (low and high byte of the gallery): 24 in all.
            (Isa::Avx512 | Isa::Vnni, DotRing::Fp) => (6, 2),
            (Isa::Avx512 | Isa::Vnni, _) => (2, 4),
            (Isa::Avx2, DotRing::Fp) => (2, 2),
            (Isa::Avx2, _) => (2, 4),
            (Isa::Portable, DotRing::Fp) => (1, 2),
            (Isa::Portable, _) => (2, 2),
        }
    }

    /// Words of K per chunk (see [`super::gemm`]); 0: none. Only F_p on the pair paths needs
    /// chunks: its i32 lanes take at most 128 steps (see [`Step::mac`]).
    fn k_chunk(self, ring: DotRing) -> u32 {
        if ring == DotRing::Fp && self != Isa::Portable {
            128 * self.lanes(ring)
        } else {
            0
        }
    }

    /// How far ahead (bytes) the x86 variants prefetch every gallery row of a tile: the rows
    /// stream from memory once per call and R x sides concurrent streams (12 for Z16) are more
    /// than the hardware prefetcher follows. Measured: +10 % for Z16 at L = 12 800 from DRAM.
    fn prefetch_bytes(self) -> Option<u64> {
        (self != Isa::Portable).then_some(512)
    }

    /// Storage words per K step (one vector load).
    fn lanes(self, ring: DotRing) -> u32 {
        let bytes = match self {
            Isa::Avx512 | Isa::Vnni => 64,
            Isa::Avx2 => 32,
            // Two SSE registers: enough independent work for the baseline.
            Isa::Portable => match ring {
                DotRing::Fp => 16,
                _ => 32,
            },
        };
        bytes * 8 / ring.bits()
    }
}

/// Emits one ISA's multiply-accumulate steps for one ring.
#[derive(Clone, Copy)]
pub struct Step<'a, 'ctx> {
    pub cx: &'ctx Context,
    pub module: &'a Module<'ctx>,
    pub b: &'a Builder<'ctx>,
    pub ring: DotRing,
    pub isa: Isa,
}

pub(super) fn e<T>(r: Result<T, inkwell::builder::BuilderError>) -> Result<T, CodegenError> {
    r.map_err(|e| CodegenError(e.to_string()))
}

impl<'ctx> Step<'_, 'ctx> {
    /// The storage word.
    pub fn word(&self) -> IntType<'ctx> {
        match self.ring.bits() {
            16 => self.cx.i16_type(),
            32 => self.cx.i32_type(),
            _ => self.cx.i64_type(),
        }
    }

    /// Whether this step uses `vpmaddwd`-style pair products (x86, 16-bit words).
    fn pairs(&self) -> bool {
        self.isa != Isa::Portable && self.ring.bits() == 16
    }

    pub fn load_type(&self) -> VectorType<'ctx> {
        self.word().vec_type(self.isa.lanes(self.ring))
    }

    /// The accumulator of one (record, code) pair.
    pub fn acc_type(&self) -> VectorType<'ctx> {
        let w = self.isa.lanes(self.ring);
        match (self.ring, self.pairs()) {
            // Two halves of i32 lanes: products with the low and the high byte of the gallery.
            (DotRing::Fp, true) => self.cx.i32_type().vec_type(w),
            (DotRing::Fp, false) => self.cx.i64_type().vec_type(w),
            (_, true) => self.cx.i32_type().vec_type(w / 2),
            _ => self.load_type(),
        }
    }

    fn intrinsic(
        &self,
        name: &str,
        ret: BasicTypeEnum<'ctx>,
        args: &[BasicTypeEnum<'ctx>],
    ) -> FunctionValue<'ctx> {
        self.module.get_function(name).unwrap_or_else(|| {
            let args: Vec<_> = args.iter().map(|&t| t.into()).collect();
            let t = match ret {
                BasicTypeEnum::IntType(t) => t.fn_type(&args, false),
                BasicTypeEnum::VectorType(t) => t.fn_type(&args, false),
                _ => unreachable!("intrinsics here return integers or vectors"),
            };
            self.module.add_function(name, t, None)
        })
    }

    fn call(
        &self,
        f: FunctionValue<'ctx>,
        args: &[BasicValueEnum<'ctx>],
        name: &str,
    ) -> Result<BasicValueEnum<'ctx>, CodegenError> {
        let args: Vec<_> = args.iter().map(|&a| a.into()).collect();
        e(self.b.build_call(f, &args, name))?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| CodegenError(format!("{name}: intrinsic returned void")))
    }

    /// The loaded query words of side `side`, made ready for [`Step::mac`].
    pub fn prep_q(
        &self,
        v: VectorValue<'ctx>,
        side: u32,
    ) -> Result<VectorValue<'ctx>, CodegenError> {
        if self.ring == DotRing::Fp && self.pairs() {
            return self.signed_mod_p(v);
        }
        // VNNI's fused add has no subtracting form: negate the query words once per load
        // (reused by the tile's records). `vpmaddwd` paths subtract the pair sums instead
        // ([`Step::mac`]): no extra instruction at all.
        if side == 1 && self.pairs() && self.isa == Isa::Vnni {
            return e(self.b.build_int_neg(v, "q.neg"));
        }
        Ok(v)
    }

    /// The loaded gallery words, made ready for [`Step::mac`].
    /// For F_p on the pair paths: g split into its unsigned bytes, g = 256*hi + lo with lo and
    /// hi in [0, 256), returned as the vector `lo ++ hi`.
    pub fn prep_g(&self, v: VectorValue<'ctx>) -> Result<VectorValue<'ctx>, CodegenError> {
        if self.ring == DotRing::Fp && self.pairs() {
            // Unsigned bytes: g = 256*hi + lo exactly (g < 2^16), no fix-up of g's sign.
            let b = self.b;
            let n = v.get_type().get_size();
            let splat = |x: u64| {
                let c = self.word().const_int(x, false);
                VectorType::const_vector(&vec![c; n as usize])
            };
            let lo = e(b.build_and(v, splat(0xff), "g.lo"))?;
            let hi = e(b.build_right_shift(v, splat(8), false, "g.hi"))?;
            return self.concat(lo, hi);
        }
        Ok(v)
    }

    /// `a ++ b` (same vector types).
    fn concat(
        &self,
        a: VectorValue<'ctx>,
        b: VectorValue<'ctx>,
    ) -> Result<VectorValue<'ctx>, CodegenError> {
        let n = a.get_type().get_size() * 2;
        let i32t = self.cx.i32_type();
        let mask: Vec<_> = (0..n).map(|i| i32t.const_int(i.into(), false)).collect();
        e(self
            .b
            .build_shuffle_vector(a, b, VectorType::const_vector(&mask), "concat"))
    }

    /// Half `h` (0: low, 1: high) of `v`.
    fn half(&self, v: VectorValue<'ctx>, h: u32) -> Result<VectorValue<'ctx>, CodegenError> {
        let n = v.get_type().get_size() / 2;
        let i32t = self.cx.i32_type();
        let mask: Vec<_> = (0..n)
            .map(|i| i32t.const_int((h * n + i).into(), false))
            .collect();
        e(self.b.build_shuffle_vector(
            v,
            v.get_type().get_undef(),
            VectorType::const_vector(&mask),
            "half",
        ))
    }

    /// `acc + pair sums of q*g` in i32 lanes: `vpdpwssd` on VNNI, else `vpmaddwd` + add, or
    /// `- pair sums` (`vpsubd`) where `subtract` (side 1 of a replicated product, not on VNNI).
    fn pair_mac(
        &self,
        acc: VectorValue<'ctx>,
        q: VectorValue<'ctx>,
        g: VectorValue<'ctx>,
        subtract: bool,
    ) -> Result<VectorValue<'ctx>, CodegenError> {
        let i16v = q.get_type();
        let half = self.cx.i32_type().vec_type(i16v.get_size() / 2);
        let pairs = match self.isa {
            Isa::Vnni => {
                let f = self.intrinsic(
                    "llvm.x86.avx512.vpdpwssd.512",
                    half.into(),
                    &[half.into(), i16v.into(), i16v.into()],
                );
                return Ok(self
                    .call(f, &[acc.into(), q.into(), g.into()], "dpwssd")?
                    .into_vector_value());
            }
            Isa::Avx512 => "llvm.x86.avx512.pmaddw.d.512",
            _ => "llvm.x86.avx2.pmadd.wd",
        };
        let f = self.intrinsic(pairs, half.into(), &[i16v.into(), i16v.into()]);
        let p = self
            .call(f, &[q.into(), g.into()], "pmaddwd")?
            .into_vector_value();
        if subtract {
            e(self.b.build_int_sub(acc, p, "acc"))
        } else {
            e(self.b.build_int_add(acc, p, "acc"))
        }
    }

    /// v in [0, p) to its representative in (-p/2, p/2) as i16: v - p where v > p/2, which in
    /// 16-bit arithmetic is v + 17.
    fn signed_mod_p(&self, v: VectorValue<'ctx>) -> Result<VectorValue<'ctx>, CodegenError> {
        let t = v.get_type();
        let n = t.get_size();
        let splat = |x: u64| {
            let c = self.word().const_int(x, false);
            VectorType::const_vector(&vec![c; n as usize])
        };
        let big =
            e(self
                .b
                .build_int_compare(inkwell::IntPredicate::UGT, v, splat(P / 2), "fp.big"))?;
        let shifted = e(self.b.build_int_add(v, splat((1 << 16) - P), "fp.neg"))?;
        Ok(e(self.b.build_select(big, shifted, v, "fp.signed"))?.into_vector_value())
    }

    /// `acc + sign * q*g` for one step (side 1 negative: negated by [`Step::prep_q`] on VNNI,
    /// a subtraction everywhere else).
    pub fn mac(
        &self,
        acc: VectorValue<'ctx>,
        q: VectorValue<'ctx>,
        g: VectorValue<'ctx>,
        side: u32,
    ) -> Result<VectorValue<'ctx>, CodegenError> {
        let b = self.b;
        if self.pairs() {
            if self.ring == DotRing::Fp {
                // |q| <= 32759, lo, hi < 256: a pair sum is below 2^24, so i32 lanes
                // take 128 steps (the K chunk, [`Isa::k_chunk`]) before the store reduces them.
                let lo = self.pair_mac(self.half(acc, 0)?, q, self.half(g, 0)?, false)?;
                let hi = self.pair_mac(self.half(acc, 1)?, q, self.half(g, 1)?, false)?;
                return self.concat(lo, hi);
            }
            return self.pair_mac(acc, q, g, side == 1 && self.isa != Isa::Vnni);
        }
        let (q, g) = if self.ring == DotRing::Fp {
            // Products below 2^32 summed in u64: exact for any length the ABI allows.
            (
                e(b.build_int_z_extend(q, acc.get_type(), "q.wide"))?,
                e(b.build_int_z_extend(g, acc.get_type(), "g.wide"))?,
            )
        } else {
            (q, g)
        };
        let p = e(b.build_int_mul(q, g, "prod"))?;
        if side == 1 {
            e(b.build_int_sub(acc, p, "acc"))
        } else {
            e(b.build_int_add(acc, p, "acc"))
        }
    }

    /// Whether a tile's sums go through [`Step::lane_sums`] (the wrapping 16-bit rings on the
    /// pair paths, with at most one lane per code of a row block): `cb` codes per record.
    pub fn sums_by_rows(&self, cb: u32) -> bool {
        self.pairs()
            && self.ring != DotRing::Fp
            && cb.next_power_of_two() <= self.acc_type().get_size()
    }

    /// The sums of `accs` (one accumulator per code of a record's row block), as a vector of
    /// `accs.len()` storage words, lane j the wrapped sum of `accs[j]`: a transposed reduction
    /// tree. Each level adds the even and the odd lanes of two vectors into one (2 shuffles
    /// and 1 add per pair of vectors), where a reduction per accumulator costs about 9
    /// instructions: at a K chunk of 2 048 words the per-accumulator reductions took about a
    /// tenth of a 6 x 4 tile's time on a 512-bit core.
    ///
    /// After log2(m) levels (m: `accs.len()` padded to a power of two with zero vectors) the one
    /// vector left holds m blocks of w/m lanes, block j summing to `accs[j]`'s sum; halving it
    /// (even lanes + odd lanes) log2(w/m) times leaves one lane per block.
    pub fn lane_sums(&self, accs: &[VectorValue<'ctx>]) -> Result<VectorValue<'ctx>, CodegenError> {
        let b = self.b;
        let t = accs
            .first()
            .ok_or_else(|| CodegenError("lane sums of no accumulators".into()))?
            .get_type();
        let w = t.get_size();
        let n = accs.len() as u32;
        let m = n.next_power_of_two();
        if m > w {
            return Err(CodegenError(format!(
                "{n} accumulators of {w} lanes: more sums than lanes"
            )));
        }
        let i32t = self.cx.i32_type();
        let mask = |idx: &mut dyn Iterator<Item = u32>| {
            let c: Vec<_> = idx.map(|i| i32t.const_int(i.into(), false)).collect();
            VectorType::const_vector(&c)
        };
        // Lanes 2t + parity of `a` then of `b` (w lanes of the pair).
        let parity = |a: VectorValue<'ctx>, bv: VectorValue<'ctx>, parity: u32| {
            let mut both = (0..w).map(|i| 2 * (i % (w / 2)) + parity + (i / (w / 2)) * w);
            e(b.build_shuffle_vector(a, bv, mask(&mut both), "pairs"))
        };
        let mut level: Vec<VectorValue<'ctx>> = accs.to_vec();
        level.resize(m as usize, t.const_zero());
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|p| {
                    let even = parity(p[0], p[1], 0)?;
                    let odd = parity(p[0], p[1], 1)?;
                    e(b.build_int_add(even, odd, "sums"))
                })
                .collect::<Result<_, _>>()?;
        }
        let mut v = level[0];
        let mut lanes = w;
        while lanes > m {
            lanes /= 2;
            let undef = v.get_type().get_undef();
            let even =
                e(b.build_shuffle_vector(v, undef, mask(&mut (0..lanes).map(|t| 2 * t)), "even"))?;
            let odd = e(b.build_shuffle_vector(
                v,
                undef,
                mask(&mut (0..lanes).map(|t| 2 * t + 1)),
                "odd",
            ))?;
            v = e(b.build_int_add(even, odd, "halves"))?;
        }
        let words = e(b.build_int_truncate(v, self.word().vec_type(m), "sums.word"))?;
        if n == m {
            return Ok(words);
        }
        e(b.build_shuffle_vector(
            words,
            words.get_type().get_undef(),
            mask(&mut (0..n)),
            "sums.n",
        ))
    }

    /// `llvm.vector.reduce.add` of `v`.
    pub fn reduce_add(&self, v: VectorValue<'ctx>) -> Result<IntValue<'ctx>, CodegenError> {
        let t = v.get_type();
        let elem = t.get_element_type().into_int_type();
        let name = format!(
            "llvm.vector.reduce.add.v{}i{}",
            t.get_size(),
            elem.get_bit_width()
        );
        let f = self.intrinsic(&name, elem.into(), &[t.into()]);
        Ok(self.call(f, &[v.into()], "sum")?.into_int_value())
    }

    /// The sum of one accumulator: for the wrapping rings truncated to the storage word, for
    /// F_p a 64-bit integer congruent to the dot product mod p (signed on the pair paths).
    pub fn finish(&self, acc: VectorValue<'ctx>) -> Result<IntValue<'ctx>, CodegenError> {
        if self.ring == DotRing::Fp && self.pairs() {
            // lo + 256*hi, each half summed in i64 (16 lanes of up to 2^31 overflow i32).
            let b = self.b;
            let wide = self.cx.i64_type().vec_type(acc.get_type().get_size() / 2);
            let lo = e(b.build_int_s_extend(self.half(acc, 0)?, wide, "lo.wide"))?;
            let hi = e(b.build_int_s_extend(self.half(acc, 1)?, wide, "hi.wide"))?;
            let (lo, hi) = (self.reduce_add(lo)?, self.reduce_add(hi)?);
            let i64t = self.cx.i64_type();
            let hi = e(b.build_int_mul(hi, i64t.const_int(256, false), "hi.256"))?;
            return e(b.build_int_add(lo, hi, "fp.sum"));
        }
        let s = self.reduce_add(acc)?;
        if self.ring == DotRing::Fp {
            return Ok(s);
        }
        let w = self.word();
        if s.get_type().get_bit_width() > w.get_bit_width() {
            e(self.b.build_int_truncate(s, w, "sum.word"))
        } else {
            Ok(s)
        }
    }
}
