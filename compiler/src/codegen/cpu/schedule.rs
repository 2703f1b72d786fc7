//! The party schedule: `i32 main(i32 argc, ptr argv)`, generated from the `mpc` module.
//!
//! `main` starts the runtime with the embedded manifest, runs the ops of `@setup` once, then the
//! ops of `@query` for every query, each op one call into the runtime's C ABI. Every op's result
//! lives in a value slot of the runtime, numbered here at compile time (one slot per SSA value;
//! iterations of the query loop reuse them). Every status is checked: a failure jumps to a block
//! that finishes the runtime with a nonzero status.

use super::{
    abi::entry_point,
    kernel,
    tiling::{self, OpInfo, Stage},
    CodegenError,
};
use crate::mlir::{get_int, get_str, op_name, type_name, type_param};
use inkwell::{
    basic_block::BasicBlock,
    builder::Builder,
    context::Context,
    module::{Linkage, Module},
    values::{BasicMetadataValueEnum, FunctionValue, IntValue, PointerValue},
    AddressSpace, IntPredicate,
};
use irisc_runtime::contract::{BatchDotKind, OutputShape};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, Module as MlirModule, OperationRef,
    RegionLike, ValueLike,
};
use std::collections::HashMap;

fn err(e: impl std::fmt::Display) -> CodegenError {
    CodegenError(e.to_string())
}

/// Where an SSA value of the `mpc` module lives at run time.
#[derive(Clone, Copy)]
enum Slot<'ctx> {
    /// A runtime value slot.
    Fixed(u32),
    /// The query number: the loop counter of the schedule.
    Query(IntValue<'ctx>),
    /// One slot per query of a batch: `base + j` for the batch's query `j` (tiled schedules).
    Dyn(u32),
}

/// Queries per batch of a tiled schedule: their dot products against a chunk of the gallery are
/// one kernel call. 8 queries of 31 rotations keep the kernel's code tiles full while the
/// batch's query shares (8 x 31 codes) stay in the core's cache.
pub const QUERY_BATCH: u32 = 8;

struct Schedule<'ctx, 'a> {
    cx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    main: FunctionValue<'ctx>,
    rt: PointerValue<'ctx>,
    fail: BasicBlock<'ctx>,
    slots: HashMap<usize, Slot<'ctx>>,
    next_slot: u32,
    /// Code entries of every input (the manifest's `elements`), by input index.
    input_lens: Vec<u64>,
    /// Code entries of the codes held in a slot (loads and their rotations): the length the
    /// Shamir dot-product kernels are specialised to.
    lens: HashMap<u32, u64>,
    /// The query of the batch being emitted (`i32`), for [`Slot::Dyn`] slots.
    batch_query: Option<IntValue<'ctx>>,
    /// Whether `fresh` hands out one slot per query of the batch.
    dyn_results: bool,
}

fn key<'c>(v: impl ValueLike<'c>) -> usize {
    v.to_raw().ptr as usize
}

/// Generates `main` into `module`, with the manifest JSON as a private constant.
pub fn generate<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    mpc: &MlirModule<'_>,
    manifest_json: &str,
) -> Result<(), CodegenError> {
    let (setup, query) = (body_of(mpc, "setup")?, body_of(mpc, "query")?);
    let i32t = cx.i32_type();
    let i64t = cx.i64_type();
    let ptr = cx.ptr_type(AddressSpace::default());

    let bytes = cx.const_string(manifest_json.as_bytes(), false);
    let manifest = module.add_global(bytes.get_type(), None, "irisc_manifest");
    manifest.set_initializer(&bytes);
    manifest.set_constant(true);
    manifest.set_linkage(Linkage::Private);

    let main = module.add_function(
        "main",
        i32t.fn_type(&[i32t.into(), ptr.into()], false),
        None,
    );
    let b = cx.create_builder();
    let entry = cx.append_basic_block(main, "entry");
    let started = cx.append_basic_block(main, "started");
    let no_rt = cx.append_basic_block(main, "start.failed");
    let fail = cx.append_basic_block(main, "failed");

    b.position_at_end(entry);
    let argc = main
        .get_nth_param(0)
        .ok_or_else(|| err("main has no argc"))?;
    let argv = main
        .get_nth_param(1)
        .ok_or_else(|| err("main has no argv"))?;
    let start =
        entry_point(cx, module, "irisc_rt_start").ok_or_else(|| err("no irisc_rt_start"))?;
    let len = i64t.const_int(manifest_json.len() as u64, false);
    let rt = b
        .build_call(
            start,
            &[
                argc.into(),
                argv.into(),
                manifest.as_pointer_value().into(),
                len.into(),
            ],
            "rt",
        )
        .map_err(err)?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| err("irisc_rt_start returns nothing"))?
        .into_pointer_value();
    let is_null = b.build_is_null(rt, "rt.null").map_err(err)?;
    b.build_conditional_branch(is_null, no_rt, started)
        .map_err(err)?;
    b.position_at_end(no_rt);
    b.build_return(Some(&i32t.const_int(1, false)))
        .map_err(err)?;

    let mut s = Schedule {
        cx,
        module,
        b,
        main,
        rt,
        fail,
        slots: HashMap::new(),
        next_slot: 0,
        input_lens: input_lengths(manifest_json),
        lens: HashMap::new(),
        batch_query: None,
        dyn_results: false,
    };
    s.b.position_at_end(started);

    // @setup, once; its results become @query's gallery arguments.
    let returned = s.ops(setup, None)?;

    let count_fn =
        entry_point(cx, module, "irisc_rt_query_count").ok_or_else(|| err("no query_count"))?;
    let n = s
        .call_value(count_fn, &[rt.into()], "queries")?
        .into_int_value();
    let args = query.argument_count();
    if args != returned.len() + 1 {
        return Err(err(format!(
            "@query takes {args} arguments but @setup returns {} values",
            returned.len()
        )));
    }
    for (i, slot) in returned.iter().enumerate() {
        s.slots
            .insert(key(query.argument(i + 1).map_err(err)?), *slot);
    }
    let body_ops = operations(query);
    let galleries: Vec<usize> = (1..args)
        .map(|i| query.argument(i).map(key).map_err(err))
        .collect::<Result<_, _>>()?;
    let infos: Vec<OpInfo> = body_ops.iter().map(op_info).collect();
    let plan = tiling::plan(&infos, &galleries);
    if let Some(plan) = plan {
        let q_arg = key(query.argument(0).map_err(err)?);
        s.tiled(&body_ops, &plan, q_arg, n)?;
    } else {
        s.untiled(query, n)?;
    }

    let finish =
        entry_point(cx, module, "irisc_rt_finish").ok_or_else(|| err("no irisc_rt_finish"))?;
    let done =
        s.b.get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
    for (block, status) in [(done, 0u64), (fail, 1)] {
        s.b.position_at_end(block);
        let code = s.call_value(
            finish,
            &[rt.into(), i32t.const_int(status, false).into()],
            "exit",
        )?;
        s.b.build_return(Some(&code)).map_err(err)?;
    }
    Ok(())
}

/// The tiling of `@query` as text (`irisc build --emit=schedule`): each op with its stage, what
/// crosses out of the chunks, and which reductions are finished over the chunks' results.
pub fn describe(mpc: &MlirModule<'_>) -> Result<String, CodegenError> {
    use std::fmt::Write;
    let query = body_of(mpc, "query")?;
    let ops = operations(query);
    let galleries: Vec<usize> = (1..query.argument_count())
        .map(|i| query.argument(i).map(key).map_err(err))
        .collect::<Result<_, _>>()?;
    let infos: Vec<OpInfo> = ops.iter().map(op_info).collect();
    // Value names as the op text shows them: %argN, then %N in order of definition.
    let mut names: HashMap<usize, String> = HashMap::new();
    for i in 0..query.argument_count() {
        names.insert(key(query.argument(i).map_err(err)?), format!("%arg{i}"));
    }
    for (n, info) in infos.iter().filter(|i| i.result.is_some()).enumerate() {
        names.insert(info.result.unwrap_or_default(), format!("%{n}"));
    }
    let name = |v: &usize| names.get(v).cloned().unwrap_or_else(|| "?".into());
    let mut out = String::new();
    let Some(plan) = tiling::plan(&infos, &galleries) else {
        out.push_str("untiled: one query at a time, each op over the whole gallery\n");
        for info in &infos {
            let _ = writeln!(out, "  {}", render_op(info, &name));
        }
        return Ok(out);
    };
    let _ = writeln!(
        out,
        "tiled: queries in batches of {QUERY_BATCH}, gallery records in chunks (--record-chunk)"
    );
    for (info, stage) in infos.iter().zip(&plan.stages) {
        let stage = match stage {
            Stage::Query => "query",
            Stage::BatchDot => "batch-dot",
            Stage::Chunk => "chunk",
            Stage::Finish => "finish",
        };
        let _ = writeln!(out, "  {stage:<9} {}", render_op(info, &name));
    }
    let crossings: Vec<String> = plan.crossings.iter().map(name).collect();
    let _ = writeln!(
        out,
        "crossings (appended per chunk): {}",
        crossings.join(", ")
    );
    let reductions: Vec<String> = plan
        .reductions
        .iter()
        .map(|&r| render_op(&infos[r], &name))
        .collect();
    let _ = writeln!(
        out,
        "finished over the chunks' results: {}",
        if reductions.is_empty() {
            "none".to_string()
        } else {
            reductions.join("; ")
        }
    );
    Ok(out)
}

fn render_op(info: &OpInfo, name: &impl Fn(&usize) -> String) -> String {
    let operands: Vec<String> = info.operands.iter().map(name).collect();
    let group = info
        .group
        .map(|g| format!(" {{group = {g}}}"))
        .unwrap_or_default();
    let op = format!("{}({}){group}", info.name, operands.join(", "));
    match &info.result {
        Some(r) => format!("{} = {op}", name(r)),
        None => op,
    }
}

/// The ops of `block` before its terminator.
fn operations<'c, 'm>(block: BlockRef<'c, 'm>) -> Vec<OperationRef<'c, 'm>> {
    let mut out = Vec::new();
    let mut cur = block.first_operation();
    while let Some(op) = cur {
        cur = op.next_in_block();
        if op_name(&op) != "func.return" {
            out.push(op);
        }
    }
    out
}

/// What the tiling planner needs of an op.
fn op_info(op: &OperationRef<'_, '_>) -> OpInfo {
    OpInfo {
        name: op_name(op),
        operands: op.operands().map(key).collect(),
        result: op.result(0).ok().map(key),
        group: get_int(op, "group").ok(),
    }
}

impl<'ctx> Schedule<'ctx, '_> {
    /// `for q in 0..n: @query(q)`: the untiled schedule, op after op over the whole gallery.
    fn untiled(&mut self, query: BlockRef<'_, '_>, n: IntValue<'ctx>) -> Result<(), CodegenError> {
        let q_arg = key(query.argument(0).map_err(err)?);
        let zero = self.cx.i64_type().const_zero();
        self.counted("queries", zero, n, 1, |s, q| {
            s.slots.insert(q_arg, Slot::Query(q));
            s.ops(query, Some(q)).map(|_| ())
        })
    }

    /// `for i in (from..to).step_by(step): body(i)` (i64); the builder ends after the loop.
    fn counted(
        &mut self,
        name: &str,
        from: IntValue<'ctx>,
        to: IntValue<'ctx>,
        step: u64,
        body: impl FnOnce(&mut Self, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let i64t = self.cx.i64_type();
        let pre = self
            .b
            .get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
        let head = self.cx.append_basic_block(self.main, name);
        let inner = self
            .cx
            .append_basic_block(self.main, &format!("{name}.body"));
        let done = self
            .cx
            .append_basic_block(self.main, &format!("{name}.done"));
        self.b.build_unconditional_branch(head).map_err(err)?;
        self.b.position_at_end(head);
        let i = self.b.build_phi(i64t, &format!("{name}.i")).map_err(err)?;
        let i_v = i.as_basic_value().into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::SLT, i_v, to, "more")
            .map_err(err)?;
        self.b
            .build_conditional_branch(more, inner, done)
            .map_err(err)?;
        self.b.position_at_end(inner);
        body(self, i_v)?;
        let next = self
            .b
            .build_int_add(i_v, i64t.const_int(step, false), "next")
            .map_err(err)?;
        let latch = self
            .b
            .get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
        self.b.build_unconditional_branch(head).map_err(err)?;
        i.add_incoming(&[(&from, pre), (&next, latch)]);
        self.b.position_at_end(done);
        Ok(())
    }

    /// The tiled schedule of [`tiling`]: for every batch of [`QUERY_BATCH`] queries, the query
    /// stage per query; then per chunk of records the batch's dot products in one kernel call
    /// and the chunk stage per query, its crossings appended; then the finish stage per query.
    fn tiled(
        &mut self,
        ops: &[OperationRef<'_, '_>],
        plan: &tiling::Plan,
        q_arg: usize,
        n: IntValue<'ctx>,
    ) -> Result<(), CodegenError> {
        let (i32t, i64t) = (self.cx.i32_type(), self.cx.i64_type());
        let batch = u64::from(QUERY_BATCH);
        let staged = |want: Stage| -> Vec<usize> {
            (0..ops.len()).filter(|&i| plan.stages[i] == want).collect()
        };
        let (query_ops, dot_ops, chunk_ops, finish_ops) = (
            staged(Stage::Query),
            staged(Stage::BatchDot),
            staged(Stage::Chunk),
            staged(Stage::Finish),
        );
        // Static slots for the chunk views; per-query slots for the crossings' collections.
        let mut full = HashMap::new();
        let mut views = HashMap::new();
        for &g in &plan.viewed_galleries {
            full.insert(
                g,
                self.slots
                    .get(&g)
                    .copied()
                    .ok_or_else(|| err("unknown gallery"))?,
            );
            views.insert(g, self.next_slot);
            self.next_slot += 1;
        }
        // A view needs the records' shares unless only their ids and public masks are read.
        let mut with_shares: HashMap<usize, i64> = HashMap::new();
        for &i in &chunk_ops {
            if op_name(&ops[i]) == "mpc.mask_len" {
                continue;
            }
            for v in ops[i].operands() {
                if views.contains_key(&key(v)) {
                    with_shares.insert(key(v), 1);
                }
            }
        }
        let mut acc = HashMap::new();
        for &c in &plan.crossings {
            acc.insert(c, self.next_slot);
            self.next_slot += QUERY_BATCH;
        }
        // The gallery whose records are chunked (all galleries of a program have the same).
        let chunked = dot_ops
            .first()
            .map(|&i| ops[i].operand(1).map(key).map_err(err))
            .transpose()?
            .or_else(|| plan.viewed_galleries.first().copied())
            .ok_or_else(|| err("a tiled schedule without a gallery"))?;
        let chunked = match self.slots.get(&chunked) {
            Some(Slot::Fixed(n)) => *n,
            _ => return Err(err("the chunked gallery has no slot")),
        };

        let zero = i64t.const_zero();
        self.counted("batches", zero, n, batch, |s, q0| {
            let left = s.b.build_int_sub(n, q0, "left").map_err(err)?;
            let full_batch = i64t.const_int(batch, false);
            let short =
                s.b.build_int_compare(IntPredicate::SLT, left, full_batch, "short")
                    .map_err(err)?;
            let nb =
                s.b.build_select(short, left, full_batch, "nb")
                    .map_err(err)?
                    .into_int_value();

            // Query stage, per query of the batch, into per-query slots.
            s.for_batch("batch.queries", q0, nb, q_arg, |s, q| {
                s.dyn_results = true;
                for &i in &query_ops {
                    s.op(&op_name(&ops[i]), &ops[i], Some(q))?;
                }
                s.dyn_results = false;
                Ok(())
            })?;

            // Chunks of records.
            let count_fn = entry_point(s.cx, s.module, "irisc_rt_chunk_count")
                .ok_or_else(|| err("no irisc_rt_chunk_count"))?;
            let chunks = s
                .call_value(
                    count_fn,
                    &[s.rt.into(), i32t.const_int(chunked.into(), false).into()],
                    "chunk.count",
                )?
                .into_int_value();
            let bad =
                s.b.build_int_compare(IntPredicate::SLT, chunks, zero, "no.chunks")
                    .map_err(err)?;
            let go = s.cx.append_basic_block(s.main, "chunked");
            s.b.build_conditional_branch(bad, s.fail, go).map_err(err)?;
            s.b.position_at_end(go);
            s.counted("chunks", zero, chunks, 1, |s, c| {
                // The batch's dot products first, while the galleries name the whole ones.
                for (&g, &whole) in &full {
                    s.slots.insert(g, whole);
                }
                for &i in &dot_ops {
                    s.batch_dot(&ops[i], nb, c)?;
                }
                for (&g, &view) in &views {
                    let Slot::Fixed(whole) = full[&g] else {
                        return Err(err("a gallery in a per-query slot"));
                    };
                    let args = [
                        s.rt.into(),
                        s.i32c(view.into()),
                        s.i32c(whole.into()),
                        c.into(),
                        s.i32c(with_shares.get(&g).copied().unwrap_or(0)),
                    ];
                    s.checked_call("irisc_rt_gallery_view", &args, "view")?;
                    s.slots.insert(g, Slot::Fixed(view));
                }
                s.for_batch("chunk.queries", q0, nb, q_arg, |s, q| {
                    for &i in &chunk_ops {
                        s.op(&op_name(&ops[i]), &ops[i], Some(q))?;
                    }
                    let first =
                        s.b.build_int_compare(IntPredicate::EQ, c, zero, "first")
                            .map_err(err)?;
                    let first =
                        s.b.build_int_z_extend(first, i32t, "first.flag")
                            .map_err(err)?;
                    for &x in &plan.crossings {
                        let src = s.resolve(s.slots.get(&x).copied().ok_or_else(|| {
                            err("a crossing value the chunk stage did not define")
                        })?)?;
                        let dst = s.resolve(Slot::Dyn(acc[&x]))?;
                        let args = [s.rt.into(), dst, src, first.into()];
                        s.checked_call("irisc_rt_append", &args, "append")?;
                    }
                    Ok(())
                })
            })?;

            // Finish stage, per query: the whole gallery again, the collected crossings, the
            // reductions over all records finished over their per-chunk results.
            for (&g, &whole) in &full {
                s.slots.insert(g, whole);
            }
            for &x in &plan.crossings {
                s.slots.insert(x, Slot::Dyn(acc[&x]));
            }
            s.for_batch("finish.queries", q0, nb, q_arg, |s, q| {
                for &r in &plan.reductions {
                    let result = ops[r].result(0).map(key).map_err(err)?;
                    let input = ops[r].operand(0).map(key).map_err(err)?;
                    s.slots.insert(input, Slot::Dyn(acc[&result]));
                    s.op(&op_name(&ops[r]), &ops[r], Some(q))?;
                }
                for &i in &finish_ops {
                    s.op(&op_name(&ops[i]), &ops[i], Some(q))?;
                }
                Ok(())
            })
        })
    }

    /// `for j in 0..nb: body(q0 + j)` with `j` the batch query of [`Slot::Dyn`] slots and the
    /// query argument bound to `q0 + j`.
    fn for_batch(
        &mut self,
        name: &str,
        q0: IntValue<'ctx>,
        nb: IntValue<'ctx>,
        q_arg: usize,
        body: impl FnOnce(&mut Self, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let zero = self.cx.i64_type().const_zero();
        self.counted(name, zero, nb, 1, |s, j| {
            let j32 =
                s.b.build_int_truncate(j, s.cx.i32_type(), "j")
                    .map_err(err)?;
            let q = s.b.build_int_add(q0, j, "q").map_err(err)?;
            s.batch_query = Some(j32);
            s.slots.insert(q_arg, Slot::Query(q));
            let r = body(s, q);
            s.batch_query = None;
            r
        })
    }

    /// The dot products of the batch's queries with chunk `c` of the gallery: one
    /// `irisc_rt_batch_dot`, results in per-query slots.
    fn batch_dot(
        &mut self,
        op: &OperationRef<'_, '_>,
        nb: IntValue<'ctx>,
        c: IntValue<'ctx>,
    ) -> Result<(), CodegenError> {
        let name = op_name(op);
        let (table, kind) = self.dot_table(&name, op)?;
        let codes = match self.slot(op.operand(0).map_err(err)?)? {
            Slot::Dyn(base) => base,
            _ => return Err(err("a batch dot product of codes outside the query stage")),
        };
        let gallery = match self.slot(op.operand(1).map_err(err)?)? {
            Slot::Fixed(n) => n,
            _ => return Err(err("a batch dot product with a gallery outside a slot")),
        };
        let dst = self.next_slot;
        self.next_slot += QUERY_BATCH;
        self.slots
            .insert(key(op.result(0).map_err(err)?), Slot::Dyn(dst));
        let args = [
            self.rt.into(),
            self.i32c(dst.into()),
            self.i32c(codes.into()),
            nb.into(),
            self.i32c(gallery.into()),
            c.into(),
            table,
            self.i32c(kind),
        ];
        self.checked_call("irisc_rt_batch_dot", &args, "batch_dot")
    }

    /// `irisc_rt_<callee>(args)`, jumping to the failure block unless it returns 0.
    fn checked_call(
        &mut self,
        callee: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
        label: &str,
    ) -> Result<(), CodegenError> {
        let f = entry_point(self.cx, self.module, callee)
            .ok_or_else(|| err(format!("no runtime entry point {callee}")))?;
        let status = self.call_value(f, args, "status")?.into_int_value();
        let ok = self
            .b
            .build_int_compare(
                IntPredicate::EQ,
                status,
                self.cx.i32_type().const_zero(),
                "ok",
            )
            .map_err(err)?;
        let next = self
            .cx
            .append_basic_block(self.main, &format!("after.{label}"));
        self.b
            .build_conditional_branch(ok, next, self.fail)
            .map_err(err)?;
        self.b.position_at_end(next);
        Ok(())
    }
}

/// `elements` of every input of the manifest, in order (0 where absent).
fn input_lengths(manifest_json: &str) -> Vec<u64> {
    let v: serde_json::Value = serde_json::from_str(manifest_json).unwrap_or_default();
    v.get("inputs")
        .and_then(|i| i.as_array())
        .map(|a| {
            a.iter()
                .map(|i| i.get("elements").and_then(|e| e.as_u64()).unwrap_or(0))
                .collect()
        })
        .unwrap_or_default()
}

/// The entry block of `func.func @name`.
fn body_of<'c, 'm>(mpc: &'m MlirModule<'c>, name: &str) -> Result<BlockRef<'c, 'm>, CodegenError> {
    let mut op = mpc.body().first_operation();
    while let Some(f) = op {
        if op_name(&f) == "func.func" && get_str(&f, "sym_name").as_deref() == Ok(name) {
            return f
                .region(0)
                .ok()
                .and_then(|r| r.first_block())
                .ok_or_else(|| err(format!("@{name} has no body")));
        }
        op = f.next_in_block();
    }
    Err(err(format!("the mpc module has no `func.func @{name}`")))
}

impl<'ctx> Schedule<'ctx, '_> {
    /// Emits the calls for the ops of `block`; returns the slots of its `func.return` operands.
    fn ops(
        &mut self,
        block: BlockRef<'_, '_>,
        query: Option<IntValue<'ctx>>,
    ) -> Result<Vec<Slot<'ctx>>, CodegenError> {
        let mut cur = block.first_operation();
        while let Some(op) = cur {
            cur = op.next_in_block();
            let name = op_name(&op);
            if name == "func.return" {
                return op.operands().map(|v| self.slot(v)).collect();
            }
            self.op(&name, &op, query)?;
        }
        Err(err("a function body has no return"))
    }

    fn slot<'c>(&self, v: impl ValueLike<'c>) -> Result<Slot<'ctx>, CodegenError> {
        self.slots
            .get(&key(v))
            .copied()
            .ok_or_else(|| err("a value is used before the schedule defines it"))
    }

    fn slot_arg<'c: 'a, 'a>(
        &self,
        op: &impl OperationLike<'c, 'a>,
        i: usize,
    ) -> Result<BasicMetadataValueEnum<'ctx>, CodegenError> {
        self.resolve(self.slot(op.operand(i).map_err(err)?)?)
    }

    /// The call argument for `slot`: a constant slot number, the query, or a per-query slot of
    /// the batch query being emitted.
    fn resolve(&self, slot: Slot<'ctx>) -> Result<BasicMetadataValueEnum<'ctx>, CodegenError> {
        let i32t = self.cx.i32_type();
        match slot {
            Slot::Fixed(n) => Ok(i32t.const_int(n.into(), false).into()),
            Slot::Query(q) => Ok(q.into()),
            Slot::Dyn(base) => {
                let j = self
                    .batch_query
                    .ok_or_else(|| err("a per-query slot outside a batch loop"))?;
                let at = self
                    .b
                    .build_int_add(i32t.const_int(base.into(), false), j, "slot")
                    .map_err(err)?;
                Ok(at.into())
            }
        }
    }

    /// Records that the slot `fresh` hands out next holds codes of input `input`.
    fn note_len(&mut self, input: i64) {
        let len = usize::try_from(input)
            .ok()
            .and_then(|i| self.input_lens.get(i).copied());
        if let Some(len) = len {
            self.lens.insert(self.next_slot, len);
        }
    }

    /// The code length of operand `i`'s slot, if known.
    fn slot_len<'c: 'a, 'a>(&self, op: &impl OperationLike<'c, 'a>, i: usize) -> Option<u64> {
        match self.slot(op.operand(i).ok()?).ok()? {
            Slot::Fixed(n) | Slot::Dyn(n) => self.lens.get(&n).copied(),
            Slot::Query(_) => None,
        }
    }

    fn fresh<'c: 'a, 'a>(
        &mut self,
        op: &impl OperationLike<'c, 'a>,
    ) -> Result<BasicMetadataValueEnum<'ctx>, CodegenError> {
        let n = self.next_slot;
        let slot = if self.dyn_results {
            self.next_slot += QUERY_BATCH;
            Slot::Dyn(n)
        } else {
            self.next_slot += 1;
            Slot::Fixed(n)
        };
        self.slots.insert(key(op.result(0).map_err(err)?), slot);
        self.resolve(slot)
    }

    fn i32c(&self, v: i64) -> BasicMetadataValueEnum<'ctx> {
        self.cx.i32_type().const_int(v as u64, true).into()
    }

    fn i64c(&self, v: i64) -> BasicMetadataValueEnum<'ctx> {
        self.cx.i64_type().const_int(v as u64, true).into()
    }

    /// The ring of operand `i` (or of the result with `None`), from its type `!mpc.X<k>`.
    fn ring<'c: 'a, 'a>(
        &self,
        op: &impl OperationLike<'c, 'a>,
        operand: Option<usize>,
    ) -> Result<u32, CodegenError> {
        let t = match operand {
            Some(i) => op.operand(i).map_err(err)?.r#type(),
            None => op.result(0).map_err(err)?.r#type(),
        };
        type_param(t)
            .and_then(|k| u32::try_from(k).ok())
            .filter(|k| (2..=64).contains(k))
            .ok_or_else(|| {
                err(format!(
                    "`{}` has no ring of 2..=64 bits in its type `{t}`",
                    op_name(op)
                ))
            })
    }

    /// The ring a load passes to the runtime: k of `!mpc.code<k>`, 16 for Shamir shares (their
    /// elements are 16-bit), 1 for bits.
    fn load_ring<'c: 'a, 'a>(&self, op: &impl OperationLike<'c, 'a>) -> Result<i64, CodegenError> {
        let t = op.result(0).map_err(err)?.r#type();
        Ok(match type_name(t).as_str() {
            "mpc.code" => self.ring(op, None)?.into(),
            "mpc.shamir" => 16,
            _ => 1,
        })
    }

    /// A pointer to the bytes of `s` as a private constant (output labels).
    fn string_ptr(&mut self, s: &str) -> BasicMetadataValueEnum<'ctx> {
        let bytes = self.cx.const_string(s.as_bytes(), false);
        let g = self
            .module
            .add_global(bytes.get_type(), None, "irisc_label");
        g.set_initializer(&bytes);
        g.set_constant(true);
        g.set_linkage(Linkage::Private);
        g.as_pointer_value().into()
    }

    fn op<'c: 'a, 'a>(
        &mut self,
        name: &str,
        op: &impl OperationLike<'c, 'a>,
        query: Option<IntValue<'ctx>>,
    ) -> Result<(), CodegenError> {
        let rt = self.rt.into();
        let int = |a: &str| get_int(op, a).map_err(err);
        let q = || query.ok_or_else(|| err(format!("`{name}` outside @query")));
        let ring_out = || self.ring(op, None).map(|k| self.i32c(k.into()));
        let ring_in = || self.ring(op, Some(0)).map(|k| self.i32c(k.into()));
        let (callee, args): (&str, Vec<BasicMetadataValueEnum>) = match name {
            "mpc.load_gallery" => {
                let ring = self.i32c(self.load_ring(op)?);
                self.note_len(int("input")?);
                let (input, part) = (self.i32c(int("input")?), self.i32c(int("part")?));
                let dst = self.fresh(op)?;
                (
                    "irisc_rt_load_input",
                    vec![rt, dst, input, part, self.i64c(-1), ring],
                )
            }
            "mpc.load_query" | "mpc.load_earlier" => {
                let ring = self.i32c(self.load_ring(op)?);
                self.note_len(int("input")?);
                let (input, part) = (self.i32c(int("input")?), self.i32c(int("part")?));
                let dst = self.fresh(op)?;
                let callee = if name == "mpc.load_query" {
                    "irisc_rt_load_input"
                } else {
                    "irisc_rt_load_earlier"
                };
                (callee, vec![rt, dst, input, part, q()?.into(), ring])
            }
            "mpc.rotate" => {
                if let Some(len) = self.slot_len(op, 0) {
                    self.lens.insert(self.next_slot, len);
                }
                let src = self.slot_arg(op, 0)?;
                let (lo, hi) = (self.i32c(int("lo")?), self.i32c(int("hi")?));
                ("irisc_rt_rotate", vec![rt, self.fresh(op)?, src, lo, hi])
            }
            "mpc.masked_dot" => {
                let (kptr, _) = self.dot_table(name, op)?;
                let (codes, gallery) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                (
                    "irisc_rt_masked_dot",
                    vec![rt, self.fresh(op)?, codes, gallery, kptr],
                )
            }
            "mpc.reshare" => {
                let (src, k) = (self.slot_arg(op, 0)?, ring_out()?);
                ("irisc_rt_reshare", vec![rt, self.fresh(op)?, src, k])
            }
            "mpc.sub_threshold" | "mpc.sub_threshold_p" => {
                let (dot, ml) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                let (num, den) = (self.i64c(int("ratio_num")?), self.i64c(int("ratio_den")?));
                let dst = self.fresh(op)?;
                if name == "mpc.sub_threshold" {
                    let k = self.i32c(self.ring(op, None)?.into());
                    (
                        "irisc_rt_sub_threshold",
                        vec![rt, dst, dot, ml, num, den, k],
                    )
                } else {
                    ("irisc_rt_sub_threshold_p", vec![rt, dst, dot, ml, num, den])
                }
            }
            "mpc.lin" | "mpc.lin_mod" => {
                let (x, y) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                let (a, b) = (self.i64c(int("a")?), self.i64c(int("b")?));
                let k = ring_out()?;
                let dst = self.fresh(op)?;
                let callee = if name == "mpc.lin" {
                    "irisc_rt_lin"
                } else {
                    "irisc_rt_lin_mod"
                };
                (callee, vec![rt, dst, x, y, a, b, k])
            }
            "mpc.const_lift" => {
                let (src, m, k) = (
                    self.slot_arg(op, 0)?,
                    self.i32c(int("lift_bits")?),
                    ring_out()?,
                );
                ("irisc_rt_const_lift", vec![rt, self.fresh(op)?, src, m, k])
            }
            "mpc.lift" => {
                let (src, kin, kout) = (self.slot_arg(op, 0)?, ring_in()?, ring_out()?);
                ("irisc_rt_lift", vec![rt, self.fresh(op)?, src, kin, kout])
            }
            "mpc.lift_p" | "mpc.const_lift_p" => {
                let (src, m) = (self.slot_arg(op, 0)?, ring_out()?);
                let callee = if name == "mpc.lift_p" {
                    "irisc_rt_lift_p"
                } else {
                    "irisc_rt_const_lift_p"
                };
                (callee, vec![rt, self.fresh(op)?, src, m])
            }
            "mpc.mul" => {
                let (x, y, k) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?, ring_out()?);
                ("irisc_rt_mul", vec![rt, self.fresh(op)?, x, y, k])
            }
            "mpc.msb" | "mpc.msb_mod" | "mpc.bit_inject" => {
                let src = self.slot_arg(op, 0)?;
                let k = if name == "mpc.bit_inject" {
                    ring_out()?
                } else {
                    ring_in()?
                };
                let callee = match name {
                    "mpc.msb" => "irisc_rt_msb",
                    "mpc.msb_mod" => "irisc_rt_msb_mod",
                    _ => "irisc_rt_bit_inject",
                };
                (callee, vec![rt, self.fresh(op)?, src, k])
            }
            "mpc.const_bits" => {
                let v = self.i32c(int("value")?);
                ("irisc_rt_const_bits", vec![rt, self.fresh(op)?, v])
            }
            "mpc.self_dot" | "mpc.reshare_p" | "mpc.msb_p" | "mpc.not" => {
                let src = self.slot_arg(op, 0)?;
                let callee = match name {
                    "mpc.self_dot" => "irisc_rt_self_dot",
                    "mpc.reshare_p" => "irisc_rt_reshare_p",
                    "mpc.msb_p" => "irisc_rt_msb_p",
                    _ => "irisc_rt_not",
                };
                (callee, vec![rt, self.fresh(op)?, src])
            }
            "mpc.shamir_dot" => {
                let (table, _) = self.dot_table(name, op)?;
                let (x, y) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                (
                    "irisc_rt_shamir_dot",
                    vec![rt, self.fresh(op)?, x, y, table],
                )
            }
            "mpc.mask_len" | "mpc.and" | "mpc.or" => {
                let (x, y) = (self.slot_arg(op, 0)?, self.slot_arg(op, 1)?);
                let callee = match name {
                    "mpc.mask_len" => "irisc_rt_mask_len",
                    "mpc.and" => "irisc_rt_and",
                    _ => "irisc_rt_or",
                };
                (callee, vec![rt, self.fresh(op)?, x, y])
            }
            "mpc.mux" => {
                let (c, x, y) = (
                    self.slot_arg(op, 0)?,
                    self.slot_arg(op, 1)?,
                    self.slot_arg(op, 2)?,
                );
                ("irisc_rt_mux", vec![rt, self.fresh(op)?, c, x, y])
            }
            "mpc.or_tree" | "mpc.and_tree" | "mpc.sum" => {
                let (src, group) = (self.slot_arg(op, 0)?, self.i64c(int("group")?));
                let callee = match name {
                    "mpc.or_tree" => "irisc_rt_or_groups",
                    "mpc.and_tree" => "irisc_rt_and_groups",
                    _ => "irisc_rt_sum_groups",
                };
                (callee, vec![rt, self.fresh(op)?, src, group])
            }
            "mpc.open" | "mpc.open_int" => {
                let (src, to) = (self.slot_arg(op, 0)?, self.i32c(int("to")?));
                let callee = if name == "mpc.open" {
                    "irisc_rt_open"
                } else {
                    "irisc_rt_open_int"
                };
                (callee, vec![rt, self.fresh(op)?, src, to])
            }
            "mpc.output" => {
                let shape = OutputShape::from_name(&get_str(op, "shape").map_err(err)?)
                    .unwrap_or(OutputShape::Count)
                    .abi();
                let label = get_str(op, "label").map_err(err)?;
                let records = if op.operand_count() > 2 {
                    self.slot_arg(op, 2)?
                } else {
                    self.i32c(-1)
                };
                let (value, len) = (self.slot_arg(op, 1)?, self.i64c(label.len() as i64));
                let ptr = self.string_ptr(&label);
                (
                    "irisc_rt_output",
                    vec![
                        rt,
                        q()?.into(),
                        value,
                        records,
                        self.i32c(shape.into()),
                        ptr,
                        len,
                    ],
                )
            }
            "mpc.emit" => ("irisc_rt_emit", vec![rt, q()?.into()]),
            other => return Err(err(format!("no code generation for `{other}`"))),
        };
        self.checked_call(callee, &args, &name[4..])
    }

    /// The kernel table a dot-product op passes to the runtime, and the runtime's kind of it
    /// ([`BatchDotKind`]). A Shamir dot product is specialised to the code
    /// length of the gallery (the runtime checks that the query's equals it); without a known
    /// length the table is null and the runtime's reference runs.
    fn dot_table<'c: 'a, 'a>(
        &mut self,
        name: &str,
        op: &impl OperationLike<'c, 'a>,
    ) -> Result<(BasicMetadataValueEnum<'ctx>, i64), CodegenError> {
        if name == "mpc.masked_dot" {
            let code_bits = get_int(op, "code_bits").map_err(err)?;
            let code_bits = u32::try_from(code_bits).map_err(err)?;
            let width = kernel::storage_bits(self.ring(op, Some(0))?);
            let ring = kernel::DotRing::replicated(width)?;
            let table = kernel::table(self.cx, self.module, ring, code_bits)?;
            return Ok((
                table.as_pointer_value().into(),
                BatchDotKind::Masked.abi().into(),
            ));
        }
        let t = op.operand(0).map_err(err)?.r#type().to_string();
        let kind = if t.contains("\"fp\"") {
            Some((kernel::DotRing::Fp, 1))
        } else if t.contains("\"gr2\"") {
            Some((kernel::DotRing::Gr16, 2))
        } else if t.contains("\"gr4\"") {
            Some((kernel::DotRing::Gr16, 4))
        } else {
            None
        };
        let table = match (kind, self.slot_len(op, 1)) {
            (Some((ring, d)), Some(len)) if len > 0 => {
                let words = u32::try_from(len.div_ceil(d) * d).map_err(err)?;
                kernel::table(self.cx, self.module, ring, words)?
                    .as_pointer_value()
                    .into()
            }
            _ => self
                .cx
                .ptr_type(AddressSpace::default())
                .const_null()
                .into(),
        };
        Ok((table, BatchDotKind::Shamir.abi().into()))
    }

    fn call_value(
        &self,
        f: FunctionValue<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
        name: &str,
    ) -> Result<inkwell::values::BasicValueEnum<'ctx>, CodegenError> {
        self.b
            .build_call(f, args, name)
            .map_err(err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| err("a runtime call returned nothing"))
    }
}
