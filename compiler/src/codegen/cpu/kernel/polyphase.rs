//! The polyphase kernel: a batch of rotated codes against the gallery in about three quarters
//! of the multiply-accumulates of the plain kernel.
//!
//! A rotation moves whole grid cells (4 words) along a row: `rot(q, r)[c] = q[c + r]` (cells of
//! one row, cyclic), so the 31 dot products of a record with the rotations of one query are a
//! cyclic correlation of the record's cells with the query's. Splitting the cells by parity
//! (E: even cells, O: odd; rows of an even number of columns keep parities apart under every
//! shift) turns it into half-length products, three per pair of rotations instead of four
//! (Karatsuba's identity on the two phases of the correlation):
//!
//! - even `r`: `<g, rot(q, r)> = <E g, E rot(q, r)> + <O g, O rot(q, r)>`;
//! - odd `r`: `<g, rot(q, r)> = <E g + O g, E rot(q, r) + O rot(q, r)>
//!   - <E g, E rot(q, r + 1)> - <O g, O rot(q, r - 1)>`.
//!
//! For the 31 shifts -15..=15 that is 16 + 16 + 16 half-length products (the E terms of the
//! even shifts in -14..=16, the O terms of those in -16..=14, the sums of the odd ones): 24
//! full-length products' worth of multiply-accumulates against 31. The identities hold in every
//! commutative ring whose sums the kernel takes exactly, Z_2^16 and GR(2^16, d) here (a cell
//! holds whole GR elements, so the prepared query's per-element twist commutes with the
//! split); F_p's kernel splits its gallery words into bytes, whose sums would overflow its
//! lanes, and keeps the plain kernel.
//!
//! The kernel computes the three half-length GEMMs; the caller lays out the query's half rows
//! and combines the outputs (the runtime's `kernels::polyphase`). It has the ABI of every dot
//! kernel, read differently: `n_codes = 3 m` half rows of `L / 2` words, rows `0..m` against
//! `E g`, `m..2m` against `O g`, `2m..3m` against `E g + O g`; `out[r * 3m + j]`.
//!
//! The loop nest: record panels of P records and K chunks of the raw rows. For each (panel,
//! chunk) the gallery words are split once into a scratch buffer (E, O and E + O of each row,
//! in L1 or L2 as [`cache_budget`] sizes it for the ISA), then the three GEMMs run over it
//! with the plain kernel's register tiles, code blocks outside record blocks, each tile
//! prefetching a row of the next (panel, chunk) so the split finds it in cache. The split
//! costs 3 vector instructions and 3 stores per 2 vectors of gallery, against 48
//! multiply-accumulate vectors per 2 vectors for one query's 31 rotations.

use super::gemm::{declare, Codes, Gemm, Records, Shape, Span};
use super::isa::{e, IsaCodegen, Step};
use super::{CodegenError, DotRing, Isa};
use inkwell::{
    context::Context,
    module::Module,
    values::{FunctionValue, IntValue, PointerValue},
    IntPredicate,
};

/// Words of one grid cell (the four filter bits of a position): the unit a rotation moves.
pub const CELL_WORDS: u32 = 4;

/// Raw words per K chunk at most (fewer where the query's half rows of a chunk would not stay
/// in L2, see [`shape_for`]).
pub const K_CHUNK: u32 = 2048;

/// Where a polyphase kernel's loop nest keeps its operands, per ISA: the bytes of query half
/// rows one K chunk may hold (all sides and parts), which stay in L2 while the record panel
/// passes, and the bytes of one part's scratch rows of a record panel (all sides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheBudget {
    pub query_chunk_bytes: u64,
    pub part_scratch_bytes: u64,
}

/// The budget of `isa`'s polyphase kernels.
///
/// - AVX-512 cores (1 MiB of L2 or more per core: Zen 4, Zen 5, Intel's server cores since
///   Skylake): 768 KiB of query half rows and 64 KiB of scratch per part, so a batch of 8 queries
///   runs K chunks of 1 024 (replicated Z16) or 2 048 (GR16) raw words, 16 or 32 vector steps per
///   tile between the accumulators' reductions, over record panels of 32. With the budget below
///   the chunks were 256 and 512 words (4 and 8 steps per tile), and on a Zen 5 core the kernel
///   ran at 0.63-0.67 of the 16-bit peak counted as plain dot products, 0.86-0.87x the tiled
///   plain kernel; with this one at 0.68-0.97 (Z16) and 0.79-1.02 (GR16) across bench
///   processes, 0.99-1.3x the tiled plain kernel of the same process
///   (`bench/results/cpu-2026-12-01-zen5`).
/// - Other ISAs (AVX2 cores from 512 KiB of L2): 192 KiB of query half rows and 16 KiB of
///   scratch per part (one part's panel in L1), measured 1.30-1.42x the plain kernel with 8
///   queries on a Zen 3 core (`bench/results/cpu-2026-11-29-zen3b`).
pub fn cache_budget(isa: Isa) -> CacheBudget {
    match isa {
        Isa::Avx512 | Isa::Vnni => CacheBudget {
            query_chunk_bytes: 768 << 10,
            part_scratch_bytes: 64 << 10,
        },
        _ => CacheBudget {
            query_chunk_bytes: 192 << 10,
            part_scratch_bytes: 16 << 10,
        },
    }
}

/// Whether the polyphase kernel exists for (`ring`, `l` words): the wrapping 16-bit rings, and
/// `l` a multiple of 128: 16 grid rows of an even number of 4-word cells (`l / 64` columns), so
/// that parities stay apart under every shift, in whole pairs of the widest vector (32 words).
pub fn applies(ring: DotRing, l: u32) -> bool {
    matches!(ring, DotRing::Z16 | DotRing::Gr16) && l > 0 && l.is_multiple_of(128)
}

/// The loop nest of the polyphase kernel for `isa` and `half_rows` query half rows per call (3
/// per two shifts, per query: 48 for one query's 31 rotations): the plain kernel's register
/// tile; K chunks of the most raw words, up to [`K_CHUNK`] and halving down to 256, whose
/// half rows fit the ISA's [`CacheBudget::query_chunk_bytes`]; record panels of the most
/// records, up to 32 and at least one tile, whose part of the scratch fits its
/// [`CacheBudget::part_scratch_bytes`].
pub fn shape_for(isa: Isa, ring: DotRing, half_rows: u64) -> Shape {
    let tile = isa.tile(ring);
    let sides = u64::from(ring.sides());
    let budget = cache_budget(isa);
    // Half rows of kc / 2 words of 2 bytes: kc bytes per half row and side.
    let mut kc = K_CHUNK;
    while kc > 256 && sides * half_rows.max(1) * u64::from(kc) > budget.query_chunk_bytes {
        kc /= 2;
    }
    let per_record = sides * u64::from(kc);
    let records = (budget.part_scratch_bytes / per_record).clamp(1, 32) as u32;
    Shape {
        tile,
        k_chunk: kc,
        stream_next: true,
        code_panel: 0,
        record_panel: (records / tile.0).max(1) * tile.0,
        prefetch_bytes: isa.prefetch_bytes().unwrap_or(0) as u32,
    }
}

/// The name suffix of a polyphase kernel's nest: empty for the ISA's shape of one query's 31
/// rotations (48 half rows), `_k{chunk}_r{records}` of its own shape otherwise, so two kernels
/// of one ISA with different nests never share a name.
fn shape_suffix(isa: Isa, ring: DotRing, half_rows: u64) -> String {
    let s = shape_for(isa, ring, half_rows);
    if s == shape_for(isa, ring, 48) {
        return String::new();
    }
    format!("_k{}_r{}", s.k_chunk, s.record_panel)
}

/// `irisc_kernel_dot_{ring}_L{l}_{isa}_polyphase`, for `half_rows` per call (its nest's
/// suffix where that is not one query's 31 rotations').
pub fn kernel_name(ring: DotRing, l: u32, isa: Isa, half_rows: u64) -> String {
    format!(
        "{}_polyphase{}",
        super::kernel_name(ring, l, isa),
        shape_suffix(isa, ring, half_rows)
    )
}

/// Defines polyphase kernel `name` for (`ring`, `l` raw words per code, `isa`) with the loop
/// nest `shape` (its tile, K chunk and record panel).
pub fn define<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    ring: DotRing,
    l: u32,
    isa: Isa,
    shape: Shape,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    if !applies(ring, l) {
        return Err(CodegenError(format!(
            "no polyphase {} kernel for L = {l}: it needs a wrapping 16-bit ring and L a multiple of 128",
            ring.tag()
        )));
    }
    let lanes = isa.lanes(ring);
    let kc = shape.k_chunk;
    if kc == 0 || !kc.is_multiple_of(2 * lanes) || !lanes.is_multiple_of(CELL_WORDS) {
        return Err(CodegenError(format!(
            "polyphase K chunk {kc}: must be a positive multiple of {} words",
            2 * lanes
        )));
    }
    if shape.record_panel == 0 || shape.tile.0 == 0 || shape.tile.1 == 0 {
        return Err(CodegenError(
            "polyphase kernel: empty tile or record panel".into(),
        ));
    }
    let f = declare(cx, module, name, isa);
    let p = |i: u32| {
        f.get_nth_param(i)
            .ok_or_else(|| CodegenError("kernel parameter missing".into()))
    };
    let b = cx.create_builder();
    let step = Step {
        cx,
        module,
        b: &b,
        ring,
        isa,
    };
    let sides = ring.sides() as usize;
    let q: Vec<PointerValue> = (0..sides)
        .map(|s| p([0, 1][s]).map(|v| v.into_pointer_value()))
        .collect::<Result<_, _>>()?;
    let g: Vec<PointerValue> = (0..sides)
        .map(|s| p([3, 4][s]).map(|v| v.into_pointer_value()))
        .collect::<Result<_, _>>()?;
    let (n_codes, n_records) = (p(2)?.into_int_value(), p(5)?.into_int_value());
    let out = p(6)?.into_pointer_value();
    let entry = cx.append_basic_block(f, "entry");
    b.position_at_end(entry);
    let (l, kc, h, hc) = (
        u64::from(l),
        u64::from(kc),
        u64::from(l / 2),
        u64::from(kc / 2),
    );
    let panel = u64::from(shape.record_panel);
    // E, O and E + O of each side's panel rows for one chunk: [side][part][record][hc].
    let word = step.word();
    let scratch_words = sides as u64 * 3 * panel * hc;
    let scratch_t = word.array_type(scratch_words as u32);
    let scratch = e(b.build_alloca(scratch_t, "scratch"))?;
    if let Some(i) = scratch.as_instruction() {
        i.set_alignment(64)
            .map_err(|m| CodegenError(m.to_string()))?;
    }
    let base = Gemm {
        cx,
        f,
        b: &b,
        step,
        q: q.clone(),
        g: g.clone(),
        n_codes,
        n_records,
        out,
        q_stride: h,
        g_stride: hc,
        out_stride: n_codes,
        stream_next: shape.stream_next,
        prefetch: (shape.prefetch_bytes > 0).then_some(u64::from(shape.prefetch_bytes)),
        ahead_scale: 2,
        prefetch_own: false,
    };
    let k = &base;
    let m = e(b.build_int_unsigned_div(n_codes, k.i64c(3), "m"))?;
    let nest = Nest {
        k,
        raw: g,
        q,
        scratch,
        l,
        h,
        hc,
        panel,
        m,
        tile: shape.tile,
    };
    let full = l / kc;
    k.panels("ppanel", n_records, shape.record_panel, &mut |lo, n| {
        let zero = k.i64c(0);
        k.counted("pchunk", zero, k.i64c(full), &mut |c| {
            let k0 = e(b.build_int_mul(c, k.i64c(kc), "k0"))?;
            let first = e(b.build_int_compare(IntPredicate::EQ, c, zero, "first"))?;
            nest.pass(Records { lo, n }, k0, kc, first)
        })?;
        if l % kc != 0 {
            let first = cx.bool_type().const_int(u64::from(full == 0), false);
            nest.pass(Records { lo, n }, k.i64c(full * kc), l % kc, first)
        } else {
            Ok(())
        }
    })?;
    e(b.build_return(None))?;
    Ok(f)
}

/// What every (panel, chunk) pass of one polyphase kernel shares.
struct Nest<'g, 'a, 'ctx> {
    k: &'g Gemm<'a, 'ctx>,
    /// The raw gallery rows of each side (L words each).
    raw: Vec<PointerValue<'ctx>>,
    /// The query half rows of each side (L / 2 words each).
    q: Vec<PointerValue<'ctx>>,
    scratch: PointerValue<'ctx>,
    l: u64,
    h: u64,
    hc: u64,
    panel: u64,
    /// Half rows per part (n_codes / 3).
    m: IntValue<'ctx>,
    tile: (u32, u32),
}

impl<'ctx> Nest<'_, '_, 'ctx> {
    /// `&scratch[((side * 3 + part) * panel + record) * hc]`.
    fn scratch_row(
        &self,
        side: usize,
        part: u64,
        record: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, CodegenError> {
        let (k, b) = (self.k, self.k.b);
        let first = ((side as u64 * 3 + part) * self.panel) * self.hc;
        let off = e(b.build_int_mul(record, k.i64c(self.hc), "s.row"))?;
        let off = e(b.build_int_add(off, k.i64c(first), "s.off"))?;
        // SAFETY: record < panel: inside the scratch buffer.
        e(unsafe { b.build_in_bounds_gep(k.step.word(), self.scratch, &[off], "s.p") })
    }

    /// One (panel, chunk) pass: raw words `k0..k0+len` of the panel's rows split into the
    /// scratch, then the three half-length GEMMs over it.
    fn pass(
        &self,
        records: Records<'ctx>,
        k0: IntValue<'ctx>,
        len: u64,
        first: IntValue<'ctx>,
    ) -> Result<(), CodegenError> {
        let (k, b) = (self.k, self.k.b);
        self.split(records, k0, len)?;
        // The pass after this one: the panel's next chunk, or the next panel's first.
        let next_k0 = e(b.build_int_add(k0, k.i64c(len), "ahead.k0"))?;
        let more =
            e(b.build_int_compare(IntPredicate::ULT, next_k0, k.i64c(self.l), "ahead.more"))?;
        let next_panel = e(b.build_int_add(records.lo, records.n, "ahead.panel"))?;
        let next_r = e(b.build_select(more, records.lo, next_panel, "ahead.r"))?.into_int_value();
        let next_k = e(b.build_select(more, next_k0, k.i64c(0), "ahead.k"))?.into_int_value();
        let k0_half = e(b.build_int_unsigned_div(k0, k.i64c(2), "k0.half"))?;
        let row0 = e(b.build_int_mul(records.lo, k.out_stride, "out.row0"))?;
        let (rt, ct) = self.tile;
        let c_blocks_up = e(b.build_int_add(self.m, k.i64c(u64::from(ct) - 1), "cb.up"))?;
        let c_blocks = e(b.build_int_unsigned_div(c_blocks_up, k.i64c(ct.into()), "cb.n"))?;
        for part in 0..3u64 {
            // Rows part*m.. of the query, at word k0/2 of each half row.
            let q_first = e(b.build_int_mul(self.m, k.i64c(part * self.h), "q.part"))?;
            let q_first = e(b.build_int_add(q_first, k0_half, "q.at"))?;
            let q = self
                .q
                .iter()
                .map(|&q| {
                    // SAFETY: inside the query rows (3 m half rows; k0/2 < L/2).
                    e(unsafe { b.build_in_bounds_gep(k.step.word(), q, &[q_first], "q.p") })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let g = (0..self.q.len())
                .map(|s| self.scratch_row(s, part, k.i64c(0)))
                .collect::<Result<Vec<_>, _>>()?;
            let col = e(b.build_int_mul(self.m, k.i64c(part), "out.col"))?;
            let o = e(b.build_int_add(row0, col, "out.first"))?;
            // SAFETY: record lo < n_records, column part*m < 3m: inside `out`.
            let out = e(unsafe { b.build_in_bounds_gep(k.step.word(), k.out, &[o], "out.p") })?;
            let sub = Gemm {
                q,
                g,
                out,
                ..k.clone()
            };
            let span = Span {
                k0: k.i64c(0),
                len: len / 2,
                first: Some(first),
                codes: Codes {
                    lo: k.i64c(0),
                    n: self.m,
                },
                records: Records {
                    lo: k.i64c(0),
                    n: records.n,
                },
                ahead: None,
            };
            // Code blocks outside record blocks: a code block's half rows stay in L1 while
            // the panel's scratch rows pass under them. Tile t of the pass (over the three
            // parts) prefetches row t of the next pass, one raw line per step, which covers
            // that row's chunk exactly (len / 2 words per tile, 2 raw words per word).
            let r_blocks_up = e(b.build_int_add(records.n, k.i64c(u64::from(rt) - 1), "rb.up"))?;
            let r_blocks = e(b.build_int_unsigned_div(r_blocks_up, k.i64c(rt.into()), "rb.n"))?;
            sub.code_blocks(ct, &span, &mut |c0, cw, cb| {
                sub.record_blocks(rt, &span, &mut |r0, rb| {
                    let ahead = if sub.stream_next && sub.prefetch.is_some() {
                        let rbi = e(b.build_int_unsigned_div(r0, k.i64c(rt.into()), "ahead.rb"))?;
                        let t = e(b.build_int_mul(c_blocks, k.i64c(part), "ahead.p"))?;
                        let t = e(b.build_int_add(t, cb, "ahead.pc"))?;
                        let t = e(b.build_int_mul(t, r_blocks, "ahead.t0"))?;
                        let t = e(b.build_int_add(t, rbi, "ahead.t"))?;
                        let inside =
                            e(b.build_int_compare(IntPredicate::ULT, t, records.n, "ahead.in"))?;
                        let row = e(b.build_int_add(next_r, t, "ahead.row"))?;
                        let own = e(b.build_int_add(records.lo, r0, "ahead.own"))?;
                        let row = e(b.build_select(inside, row, own, "ahead.row.or.own"))?
                            .into_int_value();
                        let shift =
                            e(b.build_select(inside, next_k, k0, "ahead.shift"))?.into_int_value();
                        self.raw
                            .iter()
                            .map(|&g| {
                                let p = sub.row_any(g, self.l, row)?;
                                // SAFETY: a plain (not inbounds) GEP, only prefetched.
                                e(unsafe { b.build_gep(k.step.word(), p, &[shift], "ahead.p") })
                            })
                            .collect::<Result<Vec<_>, _>>()?
                    } else {
                        Vec::new()
                    };
                    sub.tile(r0, rb, c0, cw, &ahead, &span)
                })
            })?;
        }
        Ok(())
    }

    /// Raw words `k0..k0+len` of each record of the panel, split by cell parity into the
    /// scratch: E (the even cells, in order), O (the odd ones) and E + O, wrapping.
    fn split(
        &self,
        records: Records<'ctx>,
        k0: IntValue<'ctx>,
        len: u64,
    ) -> Result<(), CodegenError> {
        let (k, b, cx) = (self.k, self.k.b, self.k.cx);
        let st = &k.step;
        let lanes = st.isa.lanes(st.ring);
        let vt = st.load_type();
        let cells = lanes / CELL_WORDS;
        let mask = |parity: u32| {
            let i32t = cx.i32_type();
            let idx: Vec<_> = (0..cells)
                .flat_map(|c| (0..CELL_WORDS).map(move |w| (2 * c + parity) * CELL_WORDS + w))
                .map(|i| i32t.const_int(u64::from(i), false))
                .collect();
            inkwell::types::VectorType::const_vector(&idx)
        };
        let (even, odd) = (mask(0), mask(1));
        let pairs = len / (2 * u64::from(lanes));
        let lanes = u64::from(lanes);
        let align = (lanes * u64::from(st.ring.bits() / 8)).min(64) as u32;
        k.counted("split.r", k.i64c(0), records.n, &mut |i| {
            let rec = e(b.build_int_add(records.lo, i, "split.rec"))?;
            let row = e(b.build_int_mul(rec, k.i64c(self.l), "split.row"))?;
            let at0 = e(b.build_int_add(row, k0, "split.at0"))?;
            let dst: Vec<[PointerValue; 3]> = (0..self.raw.len())
                .map(|s| -> Result<_, CodegenError> {
                    Ok([
                        self.scratch_row(s, 0, i)?,
                        self.scratch_row(s, 1, i)?,
                        self.scratch_row(s, 2, i)?,
                    ])
                })
                .collect::<Result<_, _>>()?;
            k.counted("split.v", k.i64c(0), k.i64c(pairs), &mut |v| {
                let src = e(b.build_int_mul(v, k.i64c(2 * lanes), "split.src"))?;
                let src = e(b.build_int_add(at0, src, "split.src.at"))?;
                let src2 = e(b.build_int_add(src, k.i64c(lanes), "split.src2"))?;
                let to = e(b.build_int_mul(v, k.i64c(lanes), "split.to"))?;
                for (s, &raw) in self.raw.iter().enumerate() {
                    let x = k.load(raw, src, vt)?;
                    let y = k.load(raw, src2, vt)?;
                    let ev = e(b.build_shuffle_vector(x, y, even, "split.e"))?;
                    let od = e(b.build_shuffle_vector(x, y, odd, "split.o"))?;
                    let sum = e(b.build_int_add(ev, od, "split.s"))?;
                    for (part, val) in [ev, od, sum].into_iter().enumerate() {
                        // SAFETY: v * lanes < hc: inside the scratch row.
                        let p = e(unsafe {
                            b.build_in_bounds_gep(st.word(), dst[s][part], &[to], "split.d")
                        })?;
                        let store = e(b.build_store(p, val))?;
                        store
                            .set_alignment(align)
                            .map_err(|m| CodegenError(m.to_string()))?;
                    }
                }
                Ok(())
            })
        })
    }
}

/// Every ISA variant of the polyphase kernel for (`ring`, `l`) and `half_rows` query half rows
/// per call, for the host target, defined in `module` the first time, in table order.
pub fn variants<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    ring: DotRing,
    l: u32,
    half_rows: u64,
) -> Result<Vec<(Isa, FunctionValue<'ctx>)>, CodegenError> {
    ring.variants(super::host_is_x86())
        .into_iter()
        .map(|isa| {
            let name = kernel_name(ring, l, isa, half_rows);
            let shape = shape_for(isa, ring, half_rows);
            let f = match module.get_function(&name) {
                Some(f) => f,
                None => define(cx, module, &name, ring, l, isa, shape)?,
            };
            Ok((isa, f))
        })
        .collect()
}
