//! The loop nest of a dot-product kernel, GEMM-like: `out = Q x G^T` over (codes x records),
//! with the reduction dimension (the code words, L of them, a constant) innermost.
//!
//! Records go outermost in blocks of R: a block's words stay in cache while every code passes
//! over it, so the gallery streams from memory once per call (the codes, 31 rotations of a
//! query, are the small operand). Inside, blocks of C codes: an R x C register tile of vector
//! accumulators, each K step loading R + C vectors per side and issuing R x C
//! multiply-accumulates ([`super::isa::Step::mac`]). Remainders (n_records % R, n_codes % C)
//! use tiles of 1 record / 1 code; the last L % lanes words of a code go through one partial
//! vector (legalised by LLVM without reading past the code).
//!
//! The gallery streams at an even rate: each tile also prefetches, one line per K step, a row of
//! the next record block (code block j fetches row j % R), so the block's first code block finds
//! its rows in cache instead of asking memory for R rows at the compute rate.
//!
//! Code panels ([`Shape::code_panel`], from the tile the IR records,
//! [`crate::analysis::kernel_tile`]): with many codes per call (1 984) their rows exceed the
//! cache and every record block would read them all from memory; panels of P codes then run
//! outermost, each over all records.
//!
//! Record panels ([`Shape::record_panel`], with K chunks): the records run in panels, and inside
//! a panel and a K chunk the code blocks run outside the record blocks. A code block's chunk
//! rows then stay in L1 while the panel's gallery rows (sized to stay in L2) pass under them;
//! in the default order every record block re-reads all code rows of the chunk from L2, about
//! as many bytes per cycle as L2 delivers at the multiply-accumulate rate.
//!
//! K chunks ([`super::Isa::k_chunk`]): the whole nest can run once per chunk of K words, the
//! first chunk storing its sums and the later ones adding to `out` (wrapping, or mod p). F_p
//! needs them (its i32 lanes hold 128 steps); as cache blocking for the replicated rings they
//! did not measure faster than software prefetching of the gallery rows
//! ([`super::Isa::prefetch_bytes`]), so those run unchunked.

use super::isa::{e, Isa, IsaCodegen, Step};
use super::{CodegenError, DotRing, P};
use inkwell::{
    attributes::{Attribute, AttributeLoc},
    builder::Builder,
    context::Context,
    module::{Linkage, Module},
    types::VectorType,
    values::{BasicValue, FunctionValue, IntValue, PointerValue, VectorValue},
    IntPredicate,
};

/// How one kernel's loop nest is shaped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shape {
    /// The register tile (records, codes).
    pub tile: (u32, u32),
    /// K chunks of this many words (a multiple of the ISA's lanes; 0 or >= l: no chunking).
    pub k_chunk: u32,
    /// Whether each tile streams a row of the next record block towards the cache.
    pub stream_next: bool,
    /// Codes per panel, the outermost loop (0: all codes in one).
    pub code_panel: u32,
    /// Records per panel (0: none): each panel's chunk of gallery rows is computed against
    /// every code block before the next chunk, code blocks outside record blocks (see the
    /// module doc).
    pub record_panel: u32,
    /// How far ahead (bytes) each tile prefetches its gallery rows; 0: no prefetches.
    pub prefetch_bytes: u32,
}

impl Shape {
    /// The ISA's default shape for `ring`.
    pub fn default_for(isa: Isa, ring: DotRing) -> Shape {
        Shape {
            tile: isa.tile(ring),
            k_chunk: isa.k_chunk(ring),
            stream_next: true,
            code_panel: 0,
            record_panel: 0,
            prefetch_bytes: isa.prefetch_bytes().unwrap_or(0) as u32,
        }
    }
}

/// Defines kernel `name` for (`ring`, `l` words, `isa`) with the loop nest `shape`.
#[allow(clippy::too_many_arguments)]
pub fn define<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    ring: DotRing,
    l: u32,
    isa: Isa,
    shape: Shape,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    let (tile, chunk) = (shape.tile, shape.k_chunk);
    if tile.0 == 0 || tile.1 == 0 {
        return Err(CodegenError(format!(
            "register tile {}x{}: both sides must be at least 1",
            tile.0, tile.1
        )));
    }
    let lanes = isa.lanes(ring);
    let max = isa.k_chunk(ring);
    if ring == DotRing::Fp && max != 0 && (chunk == 0 || chunk > max) && l > max {
        return Err(CodegenError(format!(
            "F_p {} kernels need K chunks of at most {max} words",
            isa.name()
        )));
    }
    if chunk != 0 && !chunk.is_multiple_of(lanes) {
        return Err(CodegenError(format!(
            "K chunk {chunk} is not a multiple of {lanes} lanes"
        )));
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
    let sides = ring.sides();
    let q = [p(0)?.into_pointer_value(), p(1)?.into_pointer_value()];
    let g = [p(3)?.into_pointer_value(), p(4)?.into_pointer_value()];
    let k = Gemm {
        cx,
        f,
        b: &b,
        step,
        q: q[..sides as usize].to_vec(),
        g: g[..sides as usize].to_vec(),
        n_codes: p(2)?.into_int_value(),
        n_records: p(5)?.into_int_value(),
        out: p(6)?.into_pointer_value(),
        q_stride: l.into(),
        g_stride: l.into(),
        out_stride: p(2)?.into_int_value(),
        stream_next: shape.stream_next,
        prefetch: (shape.prefetch_bytes > 0).then_some(u64::from(shape.prefetch_bytes)),
        ahead_scale: 1,
        prefetch_own: true,
    };
    let entry = cx.append_basic_block(f, "entry");
    b.position_at_end(entry);
    let l = u64::from(l);
    let chunk = u64::from(chunk);
    let zero = k.i64c(0);
    let all_records = Records {
        lo: zero,
        n: k.n_records,
    };
    // The K chunks of the codes `codes` against the records `records`; `codes_outer`: code
    // blocks outside record blocks (a record panel).
    let chunks = |codes: Codes<'ctx>, records: Records<'ctx>, codes_outer: bool| {
        let pass = |span: &Span<'ctx>| {
            if codes_outer {
                k.nest_codes_outer(tile, span)
            } else {
                k.nest(tile, span)
            }
        };
        if chunk == 0 || chunk >= l {
            return pass(&Span::whole(cx, l, codes, records));
        }
        // The pass after the one at k0 (len words): the panel's next chunk, or after its last
        // chunk the next panel's first.
        let ahead = |k0: IntValue<'ctx>, len: u64| -> Result<_, CodegenError> {
            let next_k0 = e(b.build_int_add(k0, k.i64c(len), "ahead.k0"))?;
            let more = e(b.build_int_compare(IntPredicate::ULT, next_k0, k.i64c(l), "ahead.more"))?;
            let next_panel = e(b.build_int_add(records.lo, records.n, "ahead.panel"))?;
            let r = e(b.build_select(more, records.lo, next_panel, "ahead.r"))?;
            let k = e(b.build_select(more, next_k0, zero, "ahead.k"))?;
            Ok(Some((r.into_int_value(), k.into_int_value())))
        };
        // Full chunks in a loop (the first stores, the others add to out), then the rest.
        let full = l / chunk;
        k.counted("kchunk", zero, k.i64c(full), &mut |c| {
            let k0 = e(b.build_int_mul(c, k.i64c(chunk), "k0"))?;
            let first = e(b.build_int_compare(IntPredicate::EQ, c, zero, "first"))?;
            pass(&Span {
                k0,
                len: chunk,
                first: Some(first),
                codes,
                records,
                ahead: ahead(k0, chunk)?,
            })
        })?;
        if l % chunk != 0 {
            let k0 = k.i64c(full * chunk);
            pass(&Span {
                k0,
                len: l % chunk,
                first: Some(cx.bool_type().const_zero()),
                codes,
                records,
                ahead: ahead(k0, l % chunk)?,
            })?;
        }
        Ok(())
    };
    // Record panels of R_p records: each panel's chunk of rows stays in L2 while every code
    // block passes over it.
    let records = |codes: Codes<'ctx>| -> Result<(), CodegenError> {
        if shape.record_panel == 0 {
            return chunks(codes, all_records, false);
        }
        k.panels("rpanel", k.n_records, shape.record_panel, &mut |lo, n| {
            chunks(codes, Records { lo, n }, true)
        })
    };
    if shape.code_panel == 0 {
        records(Codes {
            lo: zero,
            n: k.n_codes,
        })?;
    } else {
        // Panels of P codes, outermost: one panel's K chunk stays in cache while every record
        // passes over it (the gallery is read once per panel).
        k.panels("cpanel", k.n_codes, shape.code_panel, &mut |lo, n| {
            records(Codes { lo, n })
        })?;
    }
    e(b.build_return(None))?;
    Ok(f)
}

/// Adds kernel `name` with the C signature of every dot kernel
/// (`qa, qb, n_codes, ga, gb, n_records, out`), its buffers marked distinct and read-only but
/// `out`, and `isa`'s target attributes.
pub(super) fn declare<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    isa: Isa,
) -> FunctionValue<'ctx> {
    let (i64t, ptr) = (cx.i64_type(), cx.ptr_type(Default::default()));
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
    let f = module.add_function(name, fn_t, Some(Linkage::External));
    // The runtime passes distinct buffers and writes only `out`: telling LLVM so lets it keep
    // the accumulators in registers.
    let enum_attr = |n: &str| cx.create_enum_attribute(Attribute::get_named_enum_kind_id(n), 0);
    for i in [0u32, 1, 3, 4, 6] {
        f.add_attribute(AttributeLoc::Param(i), enum_attr("noalias"));
    }
    for i in [0u32, 1, 3, 4] {
        f.add_attribute(AttributeLoc::Param(i), enum_attr("readonly"));
    }
    f.add_attribute(AttributeLoc::Function, enum_attr("nounwind"));
    isa.apply(cx, f, super::host_is_x86());
    let names = ["qa", "qb", "n_codes", "ga", "gb", "n_records", "out"];
    for (i, n) in names.iter().enumerate() {
        if let Some(p) = f.get_nth_param(i as u32) {
            p.set_name(n);
        }
    }
    f
}

/// The words `k0..k0+len` of every code that one pass of the loop nest covers; `first` says
/// whether the pass stores its sums (true) or adds them to `out` (a later K chunk); `None`:
/// the pass covers whole codes and stores.
/// The locality hint of the prefetches of the next record block's rows (`llvm.prefetch`: 3 =
/// keep in every level, 2 = L2 and out, ...).
const NEXT_BLOCK_LOCALITY: u64 = 2;

pub(super) struct Span<'ctx> {
    pub(super) k0: IntValue<'ctx>,
    pub(super) len: u64,
    pub(super) first: Option<IntValue<'ctx>>,
    pub(super) codes: Codes<'ctx>,
    pub(super) records: Records<'ctx>,
    /// Where the gallery words of the pass after this one start (first record, first word),
    /// for a record panel's streaming ([`Gemm::nest_codes_outer`]); `None` outside panels.
    pub(super) ahead: Option<(IntValue<'ctx>, IntValue<'ctx>)>,
}

/// The codes `lo..lo+n` one pass of the loop nest covers (a code panel, or all of them).
#[derive(Clone, Copy)]
pub(super) struct Codes<'ctx> {
    pub(super) lo: IntValue<'ctx>,
    pub(super) n: IntValue<'ctx>,
}

/// The records `lo..lo+n` one pass of the loop nest covers (a record panel, or all of them).
#[derive(Clone, Copy)]
pub(super) struct Records<'ctx> {
    pub(super) lo: IntValue<'ctx>,
    pub(super) n: IntValue<'ctx>,
}

impl<'ctx> Span<'ctx> {
    fn whole(cx: &'ctx Context, l: u64, codes: Codes<'ctx>, records: Records<'ctx>) -> Self {
        Span {
            k0: cx.i64_type().const_zero(),
            len: l,
            first: None,
            codes,
            records,
            ahead: None,
        }
    }
}

#[derive(Clone)]
pub(super) struct Gemm<'a, 'ctx> {
    pub(super) cx: &'ctx Context,
    pub(super) f: FunctionValue<'ctx>,
    pub(super) b: &'a Builder<'ctx>,
    pub(super) step: Step<'a, 'ctx>,
    pub(super) q: Vec<PointerValue<'ctx>>,
    pub(super) g: Vec<PointerValue<'ctx>>,
    pub(super) n_codes: IntValue<'ctx>,
    pub(super) n_records: IntValue<'ctx>,
    pub(super) out: PointerValue<'ctx>,
    /// Words from one query row to the next (L; the polyphase kernel's half rows: L / 2).
    pub(super) q_stride: u64,
    /// Words from one gallery row to the next (L; the polyphase kernel's scratch: its chunk).
    pub(super) g_stride: u64,
    /// Words from one record's outputs to the next (n_codes; the polyphase kernel: 3 m).
    pub(super) out_stride: IntValue<'ctx>,
    pub(super) stream_next: bool,
    /// [`Shape::prefetch_bytes`]; `None`: no prefetches.
    pub(super) prefetch: Option<u64>,
    /// Words of the next pass's rows per word of this pass's K index (1; the polyphase
    /// kernel's scratch covers half of each raw word range: 2).
    pub(super) ahead_scale: u64,
    /// Whether each tile prefetches its own rows `prefetch` bytes ahead (false where they are
    /// in L1 already: the polyphase kernel's scratch).
    pub(super) prefetch_own: bool,
}

impl<'ctx> Gemm<'_, 'ctx> {
    pub(super) fn i64c(&self, v: u64) -> IntValue<'ctx> {
        self.cx.i64_type().const_int(v, false)
    }

    /// `for i in from..to { body(i) }` at the builder's position; leaves the builder after it.
    pub(super) fn counted(
        &self,
        name: &str,
        from: IntValue<'ctx>,
        to: IntValue<'ctx>,
        body: &mut dyn FnMut(IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let (b, cx, i64t) = (self.b, self.cx, self.cx.i64_type());
        let pre = b
            .get_insert_block()
            .ok_or_else(|| CodegenError("builder not positioned".into()))?;
        let head = cx.append_basic_block(self.f, &format!("{name}.head"));
        let bodyb = cx.append_basic_block(self.f, name);
        let exit = cx.append_basic_block(self.f, &format!("{name}.done"));
        e(b.build_unconditional_branch(head))?;
        b.position_at_end(head);
        let i = e(b.build_phi(i64t, name))?;
        let iv = i.as_basic_value().into_int_value();
        let more = e(b.build_int_compare(IntPredicate::ULT, iv, to, "more"))?;
        e(b.build_conditional_branch(more, bodyb, exit))?;
        b.position_at_end(bodyb);
        body(iv)?;
        let next = e(b.build_int_add(iv, self.i64c(1), "next"))?;
        let latch = b
            .get_insert_block()
            .ok_or_else(|| CodegenError("builder not positioned".into()))?;
        e(b.build_unconditional_branch(head))?;
        i.add_incoming(&[(&from, pre), (&next, latch)]);
        b.position_at_end(exit);
        Ok(())
    }

    /// `for p in panels of size { body(lo, n) }` over `0..total`, the last panel short.
    pub(super) fn panels(
        &self,
        name: &str,
        total: IntValue<'ctx>,
        size: u32,
        body: &mut dyn FnMut(IntValue<'ctx>, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let b = self.b;
        let panel = self.i64c(size.into());
        let last = e(b.build_int_add(total, self.i64c(u64::from(size) - 1), "p.up"))?;
        let count = e(b.build_int_unsigned_div(last, panel, "panels"))?;
        self.counted(name, self.i64c(0), count, &mut |pi| {
            let lo = e(b.build_int_mul(pi, panel, "p.lo"))?;
            let left = e(b.build_int_sub(total, lo, "p.left"))?;
            let fits = e(b.build_int_compare(IntPredicate::ULT, left, panel, "p.fits"))?;
            let n = e(b.build_select(fits, left, panel, "p.n"))?.into_int_value();
            body(lo, n)
        })
    }

    /// The code blocks of `span`: `body(c0, width)` for each block of C codes, then once for
    /// the n_codes % C codes left (a switch over the C - 1 possible widths, so that 31
    /// rotations still run mostly in wide tiles). `body` gets the block's index too.
    pub(super) fn code_blocks(
        &self,
        ct: u32,
        span: &Span<'ctx>,
        body: &mut dyn FnMut(IntValue<'ctx>, u32, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let b = self.b;
        let full_c = e(b.build_int_unsigned_div(span.codes.n, self.i64c(ct.into()), "cblocks"))?;
        let c_full = e(b.build_int_mul(full_c, self.i64c(ct.into()), "c.full"))?;
        let c_tail = e(b.build_int_add(span.codes.lo, c_full, "c.tail"))?;
        self.counted("cblock", self.i64c(0), full_c, &mut |cb| {
            let c0 = e(b.build_int_mul(cb, self.i64c(ct.into()), "c0"))?;
            let c0 = e(b.build_int_add(span.codes.lo, c0, "c0.at"))?;
            body(c0, ct, cb)
        })?;
        let rem = e(b.build_int_sub(span.codes.n, c_full, "c.rem"))?;
        let merge = self.cx.append_basic_block(self.f, "c.rem.done");
        let cases = (1..ct)
            .map(|w| {
                let bb = self.cx.append_basic_block(self.f, &format!("c.rem{w}"));
                (self.i64c(w.into()), bb)
            })
            .collect::<Vec<_>>();
        e(b.build_switch(rem, merge, &cases))?;
        for (w, (_, bb)) in (1..ct).zip(&cases) {
            b.position_at_end(*bb);
            body(c_tail, w, full_c)?;
            e(b.build_unconditional_branch(merge))?;
        }
        b.position_at_end(merge);
        Ok(())
    }

    /// The record blocks of `span`: `body(r0, height)` for each block of R records, then for
    /// each record left.
    pub(super) fn record_blocks(
        &self,
        rt: u32,
        span: &Span<'ctx>,
        body: &mut dyn FnMut(IntValue<'ctx>, u32) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let b = self.b;
        let recs = span.records;
        let full_r = e(b.build_int_unsigned_div(recs.n, self.i64c(rt.into()), "rblocks"))?;
        let r_full = e(b.build_int_mul(full_r, self.i64c(rt.into()), "r.full"))?;
        let r_tail = e(b.build_int_add(recs.lo, r_full, "r.tail"))?;
        let r_end = e(b.build_int_add(recs.lo, recs.n, "r.end"))?;
        self.counted("rblock", self.i64c(0), full_r, &mut |rb| {
            let r0 = e(b.build_int_mul(rb, self.i64c(rt.into()), "r0"))?;
            let r0 = e(b.build_int_add(recs.lo, r0, "r0.at"))?;
            body(r0, rt)
        })?;
        self.counted("record", r_tail, r_end, &mut |r0| body(r0, 1))
    }

    /// Record blocks of R (then single records), each against every code block of C: the
    /// default order, a block's rows in cache while the codes pass over them.
    fn nest(&self, (rt, ct): (u32, u32), span: &Span<'ctx>) -> Result<(), CodegenError> {
        let b = self.b;
        // The record whose row a tile streams towards the cache while it computes: code block
        // j of records r0..r0+rb fetches row j % rb of the next block (see [`Gemm::tile`]).
        let ahead_row = |r0: IntValue<'ctx>, rb: u32, cb: IntValue<'ctx>| {
            let j = e(b.build_int_unsigned_rem(cb, self.i64c(rb.into()), "next.j"))?;
            let next = e(b.build_int_add(r0, self.i64c(rb.into()), "next.r0"))?;
            e(b.build_int_add(next, j, "next.row"))
        };
        self.record_blocks(rt, span, &mut |r0, rb| {
            self.code_blocks(ct, span, &mut |c0, cw, cb| {
                let ahead = match self.stream_next {
                    true => {
                        let row = ahead_row(r0, rb, cb)?;
                        self.g
                            .iter()
                            .map(|&g| self.row_any(g, self.g_stride, row))
                            .collect::<Result<Vec<_>, _>>()?
                    }
                    false => Vec::new(),
                };
                self.tile(r0, rb, c0, cw, &ahead, span)
            })
        })
    }

    /// Code blocks of C, each against every record block of the span (a record panel): the
    /// block's query rows stay in L1 while the panel's rows of this K chunk come from L2.
    ///
    /// The next pass's rows stream into L2 meanwhile: tile t of the pass (code block major)
    /// prefetches, one line per K step, row t of the next chunk (or of the next panel after
    /// the last chunk), which is one row's chunk per tile; tiles past the panel's rows prefetch
    /// their own first row (in L1 already). Without it the panel's rows came from memory in
    /// its first code block only, at the compute rate: on a 512-bit core with 31 codes the
    /// kernel ran at 0.78 of its rate with the gallery in L2.
    fn nest_codes_outer(
        &self,
        (rt, ct): (u32, u32),
        span: &Span<'ctx>,
    ) -> Result<(), CodegenError> {
        let b = self.b;
        let recs = span.records;
        let blocks_up = e(b.build_int_add(recs.n, self.i64c(u64::from(rt) - 1), "ahead.up"))?;
        let blocks = e(b.build_int_unsigned_div(blocks_up, self.i64c(rt.into()), "ahead.blocks"))?;
        self.code_blocks(ct, span, &mut |c0, cw, cb| {
            self.record_blocks(rt, span, &mut |r0, rb| {
                let ahead = match (self.stream_next, span.ahead) {
                    (true, Some((next_r, next_k))) => {
                        let rel = e(b.build_int_sub(r0, recs.lo, "ahead.rel"))?;
                        let rbi =
                            e(b.build_int_unsigned_div(rel, self.i64c(rt.into()), "ahead.rb"))?;
                        let t = e(b.build_int_mul(cb, blocks, "ahead.t0"))?;
                        let t = e(b.build_int_add(t, rbi, "ahead.t"))?;
                        let inside =
                            e(b.build_int_compare(IntPredicate::ULT, t, recs.n, "ahead.in"))?;
                        let row = e(b.build_int_add(next_r, t, "ahead.row"))?;
                        let row = e(b.build_select(inside, row, r0, "ahead.row.or.own"))?
                            .into_int_value();
                        // Shifted so that the tile's word index `at` lands on the next pass's.
                        let shift = e(b.build_int_sub(next_k, span.k0, "ahead.shift"))?;
                        let shift =
                            e(b.build_select(inside, shift, self.i64c(0), "ahead.shift.or.own"))?
                                .into_int_value();
                        self.g
                            .iter()
                            .map(|&g| {
                                let p = self.row_any(g, self.g_stride, row)?;
                                // SAFETY: a plain (not inbounds) GEP, only prefetched.
                                e(
                                    unsafe {
                                        b.build_gep(self.step.word(), p, &[shift], "ahead.p")
                                    },
                                )
                            })
                            .collect::<Result<Vec<_>, _>>()?
                    }
                    _ => Vec::new(),
                };
                self.tile(r0, rb, c0, cw, &ahead, span)
            })
        })
    }

    fn prefetch_fn(&self) -> FunctionValue<'ctx> {
        let name = "llvm.prefetch.p0";
        self.step.module.get_function(name).unwrap_or_else(|| {
            let i32t = self.cx.i32_type();
            let t = self.cx.void_type().fn_type(
                &[
                    self.cx.ptr_type(Default::default()).into(),
                    i32t.into(),
                    i32t.into(),
                    i32t.into(),
                ],
                false,
            );
            self.step.module.add_function(name, t, None)
        })
    }

    /// `&base[(first + j) * stride]`.
    fn row(
        &self,
        base: PointerValue<'ctx>,
        stride: u64,
        first: IntValue<'ctx>,
        j: u32,
    ) -> Result<PointerValue<'ctx>, CodegenError> {
        let b = self.b;
        let i = e(b.build_int_add(first, self.i64c(j.into()), "row"))?;
        let off = e(b.build_int_mul(i, self.i64c(stride), "row.off"))?;
        // SAFETY: the row is inside the buffer (the ABI's contract: n * L words).
        e(unsafe { b.build_in_bounds_gep(self.step.word(), base, &[off], "row.p") })
    }

    /// `&base[row * stride]` as a plain GEP: the row may lie past the end (prefetched only).
    pub(super) fn row_any(
        &self,
        base: PointerValue<'ctx>,
        stride: u64,
        row: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, CodegenError> {
        let b = self.b;
        let off = e(b.build_int_mul(row, self.i64c(stride), "next.off"))?;
        // SAFETY: a plain (not inbounds) GEP, only prefetched.
        e(unsafe { b.build_gep(self.step.word(), base, &[off], "next.p") })
    }

    /// A vector of `t` words at `&p[k]`, aligned only to the word (codes are not padded).
    pub(super) fn load(
        &self,
        p: PointerValue<'ctx>,
        k: IntValue<'ctx>,
        t: VectorType<'ctx>,
    ) -> Result<VectorValue<'ctx>, CodegenError> {
        let b = self.b;
        // SAFETY: k + lanes <= L inside the row (the K loop's bound).
        let at = e(unsafe { b.build_in_bounds_gep(self.step.word(), p, &[k], "v.p") })?;
        let v = e(b.build_load(t, at, "v"))?;
        if let Some(i) = v.as_instruction_value() {
            i.set_alignment(self.step.ring.bits() / 8)
                .map_err(|m| CodegenError(m.to_string()))?;
        }
        Ok(v.into_vector_value())
    }

    /// One rb x cb tile: out[(r0+i)*n_codes + c0+j] for i < rb, j < cb.
    pub(super) fn tile(
        &self,
        r0: IntValue<'ctx>,
        rb: u32,
        c0: IntValue<'ctx>,
        cb: u32,
        next_rows: &[PointerValue<'ctx>],
        span: &Span<'ctx>,
    ) -> Result<(), CodegenError> {
        let (b, st) = (self.b, &self.step);
        let sides = self.q.len();
        let mut g_rows = Vec::new();
        let mut q_rows = Vec::new();
        for s in 0..sides {
            g_rows.push(
                (0..rb)
                    .map(|i| self.row(self.g[s], self.g_stride, r0, i))
                    .collect::<Result<Vec<_>, _>>()?,
            );
            q_rows.push(
                (0..cb)
                    .map(|j| self.row(self.q[s], self.q_stride, c0, j))
                    .collect::<Result<Vec<_>, _>>()?,
            );
        }
        let lanes = u64::from(st.isa.lanes(st.ring));
        let steps = span.len / lanes;
        let acc_t = st.acc_type();
        let n = (rb * cb) as usize;
        let mut accs: Vec<VectorValue<'ctx>> = vec![acc_t.const_zero(); n];
        if steps > 0 {
            // for k in 0..steps: the K loop, accumulators in phis.
            let pre = b
                .get_insert_block()
                .ok_or_else(|| CodegenError("builder not positioned".into()))?;
            let body = self.cx.append_basic_block(self.f, "k");
            let done = self.cx.append_basic_block(self.f, "k.done");
            e(b.build_unconditional_branch(body))?;
            b.position_at_end(body);
            let kphi = e(b.build_phi(self.cx.i64_type(), "k"))?;
            let phis = (0..n)
                .map(|_| e(b.build_phi(acc_t, "acc")))
                .collect::<Result<Vec<_>, _>>()?;
            let kv = kphi.as_basic_value().into_int_value();
            let at = e(b.build_int_mul(kv, self.i64c(lanes), "k.word"))?;
            let at = e(b.build_int_add(span.k0, at, "k.at"))?;
            let mut next: Vec<VectorValue<'ctx>> = phis
                .iter()
                .map(|p| p.as_basic_value().into_vector_value())
                .collect();
            if !next_rows.is_empty() && self.prefetch.is_some() {
                // The row of the next record block this tile is given: one line per step, so
                // the first code block of the next block finds its rows in cache and the
                // gallery streams from memory at an even rate over the whole block instead of
                // in a burst at its first code block (6 rows x 64 bytes per 24 cycles there:
                // more than the memory delivers).
                let pf = self.prefetch_fn();
                let i8t = self.cx.i8_type();
                let i32t = self.cx.i32_type();
                // One line per step of this pass's rows; the polyphase kernel's steps cover
                // `ahead_scale` times as many words of the rows it prefetches.
                let step_bytes = lanes * u64::from(st.ring.bits() / 8) * self.ahead_scale;
                let scaled = self.i64c(u64::from(st.ring.bits() / 8) * self.ahead_scale);
                for &p in next_rows {
                    let off = e(b.build_int_mul(at, scaled, "pf.next.bytes"))?;
                    for line in 0..step_bytes.div_ceil(64) {
                        let off = e(b.build_int_add(off, self.i64c(64 * line), "pf.next.line"))?;
                        // SAFETY: a plain (not inbounds) GEP; prefetch never faults.
                        let a = e(unsafe { b.build_gep(i8t, p, &[off], "pf.next.p") })?;
                        e(b.build_call(
                            pf,
                            &[
                                a.into(),
                                i32t.const_zero().into(),
                                i32t.const_int(NEXT_BLOCK_LOCALITY, false).into(),
                                i32t.const_int(1, false).into(),
                            ],
                            "",
                        ))?;
                    }
                }
            }
            if let Some(d) = self.prefetch.filter(|_| self.prefetch_own) {
                // The gallery streams from memory: prefetch `d` bytes ahead in every row of
                // the tile (x86 ignores prefetches of addresses past the end).
                let pf = self.prefetch_fn();
                let i8t = self.cx.i8_type();
                for rows in &g_rows {
                    for &p in rows {
                        let bytes = self.i64c(u64::from(st.ring.bits() / 8));
                        let off = e(b.build_int_mul(at, bytes, "pf.bytes"))?;
                        let off = e(b.build_int_add(off, self.i64c(d), "pf.off"))?;
                        // SAFETY: a plain (not inbounds) GEP; prefetch never faults.
                        let a = e(unsafe { b.build_gep(i8t, p, &[off], "pf.p") })?;
                        let i32t = self.cx.i32_type();
                        e(b.build_call(
                            pf,
                            &[
                                a.into(),
                                i32t.const_zero().into(),
                                i32t.const_int(3, false).into(),
                                i32t.const_int(1, false).into(),
                            ],
                            "",
                        ))?;
                    }
                }
            }
            for s in 0..sides {
                let gs = g_rows[s]
                    .iter()
                    .map(|&p| st.prep_g(self.load(p, at, st.load_type())?))
                    .collect::<Result<Vec<_>, _>>()?;
                let qs = q_rows[s]
                    .iter()
                    .map(|&p| st.prep_q(self.load(p, at, st.load_type())?, s as u32))
                    .collect::<Result<Vec<_>, _>>()?;
                for (i, gv) in gs.iter().enumerate() {
                    for (j, qv) in qs.iter().enumerate() {
                        let a = &mut next[i * cb as usize + j];
                        *a = st.mac(*a, *qv, *gv, s as u32)?;
                    }
                }
            }
            let k_next = e(b.build_int_add(kv, self.i64c(1), "k.next"))?;
            let fin = e(b.build_int_compare(IntPredicate::EQ, k_next, self.i64c(steps), "k.last"))?;
            e(b.build_conditional_branch(fin, done, body))?;
            kphi.add_incoming(&[(&self.i64c(0), pre), (&k_next, body)]);
            for (p, v) in phis.iter().zip(&next) {
                p.add_incoming(&[(&acc_t.const_zero(), pre), (v, body)]);
            }
            b.position_at_end(done);
            accs = next;
        }
        let tail = (span.len % lanes) as u32;
        let at = e(b.build_int_add(span.k0, self.i64c(steps * lanes), "tail.at"))?;
        let tail_of = |i: usize, j: usize| {
            self.tail(
                &(0..sides).map(|s| q_rows[s][j]).collect::<Vec<_>>(),
                &(0..sides).map(|s| g_rows[s][i]).collect::<Vec<_>>(),
                at,
                tail,
            )
        };
        if st.sums_by_rows(cb) {
            // One vector of sums per record: its codes' words are adjacent in `out`.
            for i in 0..rb as usize {
                let row = &accs[i * cb as usize..(i + 1) * cb as usize];
                let mut sums = st.lane_sums(row)?;
                if tail > 0 {
                    for j in 0..cb as usize {
                        let lane = self.cx.i32_type().const_int(j as u64, false);
                        let s = e(b.build_extract_element(sums, lane, "sum"))?.into_int_value();
                        let s = e(b.build_int_add(s, tail_of(i, j)?, "sum.tail"))?;
                        sums = e(b.build_insert_element(sums, s, lane, "sums.tail"))?;
                    }
                }
                self.store_row(r0, i as u32, c0, sums, span.first)?;
            }
            return Ok(());
        }
        for i in 0..rb as usize {
            for j in 0..cb as usize {
                let mut sum = st.finish(accs[i * cb as usize + j])?;
                if tail > 0 {
                    sum = e(b.build_int_add(sum, tail_of(i, j)?, "sum.tail"))?;
                }
                self.store(r0, i as u32, c0, j as u32, sum, span.first)?;
            }
        }
        Ok(())
    }

    /// The last `t` (< lanes) words of one pair, in plain vector IR: in the storage word for
    /// the wrapping rings, in i64 for F_p (unsigned products).
    fn tail(
        &self,
        q: &[PointerValue<'ctx>],
        g: &[PointerValue<'ctx>],
        at: IntValue<'ctx>,
        t: u32,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        let (b, st) = (self.b, &self.step);
        let vt = st.word().vec_type(t);
        let fp = st.ring == DotRing::Fp;
        let wide = if fp {
            self.cx.i64_type().vec_type(t)
        } else {
            vt
        };
        let mut acc = wide.const_zero();
        for s in 0..q.len() {
            let (mut x, mut y) = (self.load(q[s], at, vt)?, self.load(g[s], at, vt)?);
            if fp {
                x = e(b.build_int_z_extend(x, wide, "t.q"))?;
                y = e(b.build_int_z_extend(y, wide, "t.g"))?;
            }
            let p = e(b.build_int_mul(x, y, "t.prod"))?;
            acc = if s == 1 {
                e(b.build_int_sub(acc, p, "t.acc"))?
            } else {
                e(b.build_int_add(acc, p, "t.acc"))?
            };
        }
        st.reduce_add(acc)
    }

    /// `out[(r0+i)*n_codes + c0..][..cb] = sums` (the wrapping rings: `cb` words, adjacent);
    /// where `first` is false, `+= sums` instead (K chunks after the first).
    fn store_row(
        &self,
        r0: IntValue<'ctx>,
        i: u32,
        c0: IntValue<'ctx>,
        sums: VectorValue<'ctx>,
        first: Option<IntValue<'ctx>>,
    ) -> Result<(), CodegenError> {
        let b = self.b;
        let word = self.step.word();
        let r = e(b.build_int_add(r0, self.i64c(i.into()), "r"))?;
        let row = e(b.build_int_mul(r, self.out_stride, "o.row"))?;
        let o = e(b.build_int_add(row, c0, "o"))?;
        // SAFETY: r < n_records and c0 + cb <= n_codes: the words lie inside `out`.
        let at = e(unsafe { b.build_in_bounds_gep(word, self.out, &[o], "out.p") })?;
        let align = |v: inkwell::values::InstructionValue<'ctx>| {
            v.set_alignment(word.get_bit_width() / 8)
                .map_err(|m| CodegenError(m.to_string()))
        };
        let v = match first {
            None => sums,
            Some(first) => {
                let old = e(b.build_load(sums.get_type(), at, "out.old"))?;
                if let Some(i) = old.as_instruction_value() {
                    align(i)?;
                }
                let acc = e(b.build_int_add(old.into_vector_value(), sums, "out.acc"))?;
                e(b.build_select(first, sums, acc, "out.new"))?.into_vector_value()
            }
        };
        align(e(b.build_store(at, v))?)?;
        Ok(())
    }

    /// `out[(r0+i)*n_codes + c0+j] = sum`, reduced mod p first for F_p; where `first` is
    /// false, `out[..] += sum` (wrapping, or mod p) instead: K chunks after the first.
    fn store(
        &self,
        r0: IntValue<'ctx>,
        i: u32,
        c0: IntValue<'ctx>,
        j: u32,
        sum: IntValue<'ctx>,
        first: Option<IntValue<'ctx>>,
    ) -> Result<(), CodegenError> {
        let b = self.b;
        let word = self.step.word();
        let v = if self.step.ring == DotRing::Fp {
            // The one reduction: sum is congruent to the dot product mod p, |sum| < 2^63.
            let i64t = self.cx.i64_type();
            let p = i64t.const_int(P, false);
            let r = e(b.build_int_signed_rem(sum, p, "mod.p"))?;
            let neg = e(b.build_int_compare(IntPredicate::SLT, r, i64t.const_zero(), "neg"))?;
            let up = e(b.build_int_add(r, p, "mod.p.up"))?;
            let r = e(b.build_select(neg, up, r, "mod.p.canon"))?.into_int_value();
            e(b.build_int_truncate(r, word, "mod.p.word"))?
        } else {
            sum
        };
        let r = e(b.build_int_add(r0, self.i64c(i.into()), "r"))?;
        let c = e(b.build_int_add(c0, self.i64c(j.into()), "c"))?;
        let row = e(b.build_int_mul(r, self.out_stride, "o.row"))?;
        let o = e(b.build_int_add(row, c, "o"))?;
        // SAFETY: r < n_records and c < n_codes, so o < n_records * n_codes, the size of `out`.
        let at = e(unsafe { b.build_in_bounds_gep(word, self.out, &[o], "out.p") })?;
        let v = match first {
            None => v,
            Some(first) => {
                let old = e(b.build_load(word, at, "out.old"))?.into_int_value();
                let mut acc = e(b.build_int_add(old, v, "out.acc"))?;
                if self.step.ring == DotRing::Fp {
                    // old, v < p < 2^16: the sum fits 17 bits; in 16-bit words compare first.
                    let p = word.const_int(P, false);
                    let room = e(b.build_int_sub(p, v, "room"))?;
                    let wraps = e(b.build_int_compare(IntPredicate::UGE, old, room, "ge.p"))?;
                    let less = e(b.build_int_sub(acc, p, "out.acc.p"))?;
                    acc = e(b.build_select(wraps, less, acc, "out.mod.p"))?.into_int_value();
                }
                e(b.build_select(first, v, acc, "out.new"))?.into_int_value()
            }
        };
        e(b.build_store(at, v))?;
        Ok(())
    }
}
