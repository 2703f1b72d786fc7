//! The party schedule: `i32 main(i32 argc, ptr argv)`, generated from the `mpc` module.
//!
//! `main` starts the runtime with the embedded manifest, runs the ops of `@setup` once, then the
//! ops of `@query` for every query (in the stages `mpc-tile` wrote, or one query at a time where
//! it left the body untiled), each op one call into the runtime's C ABI. Every op's result
//! lives in a value slot of the runtime, numbered here at compile time (one slot per SSA value;
//! iterations of the query loop reuse them). Every status is checked: a failure jumps to a block
//! that finishes the runtime with a nonzero status.
//!
//! `mpc-tile` decides how `@query` runs ([`crate::passes::mpc_tile`]); this module follows what
//! the IR says, split by concept: [`slots`] (where values live), [`calls`] (one runtime call per
//! op), [`control`] (loops and checked calls), [`tiled`] (the loops of the tiled stages).

mod calls;
mod control;
mod slots;
mod tiled;

use super::{abi::entry_point, CodegenError};
use crate::analysis::schedule::TileOptions;
use crate::mlir::op_name;
use crate::passes::mpc_tile::{self, stages_of};
use inkwell::{
    basic_block::BasicBlock,
    builder::Builder,
    context::Context,
    module::{Linkage, Module},
    values::{FunctionValue, IntValue, PointerValue},
    AddressSpace,
};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, Module as MlirModule, ValueLike,
};
use slots::Slot;
use std::collections::HashMap;

fn err(e: impl std::fmt::Display) -> CodegenError {
    CodegenError(e.to_string())
}

struct Schedule<'ctx, 'a> {
    cx: &'ctx Context,
    module: &'a Module<'ctx>,
    b: Builder<'ctx>,
    main: FunctionValue<'ctx>,
    rt: PointerValue<'ctx>,
    fail: BasicBlock<'ctx>,
    /// The head of the loop over batches (`irisc_rt_next_batch`), where a recovered serving
    /// party goes on.
    batch_head: Option<BasicBlock<'ctx>>,
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
    /// Queries per batch of the tiled schedule (`mpc.query_batch`): the stride of per-query
    /// slots.
    query_batch: u32,
    /// Whether the chunk stage runs once for the batch (`mpc.batched_chunks`).
    batched_chunks: bool,
    /// The dot-product kernels the schedule passes to the runtime, (ring, words), in order of
    /// first use: what a GPU backend must also generate.
    dots: Vec<(super::kernel::DotRing, u32)>,
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
    generate_with_gpu(cx, module, mpc, manifest_json, None).map(|_| ())
}

/// The manifest JSON as the private constant `@irisc_manifest` every executable embeds.
pub fn embed_manifest<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    manifest_json: &str,
) -> inkwell::values::GlobalValue<'ctx> {
    let bytes = cx.const_string(manifest_json.as_bytes(), false);
    let manifest = module.add_global(bytes.get_type(), None, "irisc_manifest");
    manifest.set_initializer(&bytes);
    manifest.set_constant(true);
    manifest.set_linkage(Linkage::Private);
    manifest
}

/// [`generate`], and with `gpu_image` (the program's PTX module) a call of
/// `irisc_rt_gpu_attach` right after the runtime starts, so the runtime runs the dot products
/// it can on the GPU; the image is a private constant. Returns the dot-product kernels the
/// schedule uses, (ring, words), in order of first use.
pub fn generate_with_gpu<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    mpc: &MlirModule<'_>,
    manifest_json: &str,
    gpu_image: Option<&str>,
) -> Result<Vec<(super::kernel::DotRing, u32)>, CodegenError> {
    let (setup, query) = (body_of(mpc, "setup")?, body_of(mpc, "query")?);
    let i32t = cx.i32_type();
    let i64t = cx.i64_type();
    let ptr = cx.ptr_type(AddressSpace::default());

    let manifest = embed_manifest(cx, module, manifest_json);

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
        query_batch: TileOptions::of(mpc).map_or(1, |o| o.query_batch),
        batched_chunks: crate::analysis::schedule::batched_chunks(mpc),
        dots: Vec::new(),
        batch_head: None,
    };
    s.b.position_at_end(started);
    if let Some(image) = gpu_image {
        let bytes = cx.const_string(image.as_bytes(), false);
        let g = module.add_global(bytes.get_type(), None, "irisc_gpu_image");
        g.set_initializer(&bytes);
        g.set_constant(true);
        g.set_linkage(Linkage::Private);
        let len = i64t.const_int(image.len() as u64, false);
        s.checked_call(
            "irisc_rt_gpu_attach",
            &[rt.into(), g.as_pointer_value().into(), len.into()],
            "gpu_attach",
        )?;
    }

    // Once per batch of queries (one for share files; one per agreed batch of client
    // requests for a serving party, whose galleries may have grown by enrolments since the
    // last): @setup, whose results become @query's gallery arguments (loading a gallery
    // again is a view of what is loaded), then the stages `mpc-tile` wrote, or (untiled) the
    // body op by op.
    let q_arg = key(query.argument(0).map_err(err)?);
    let stages = stages_of(query);
    s.batches(|s, n| {
        let returned = s.ops(setup, None)?;
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
        match &stages {
            Some(stages) => s.tiled(stages, q_arg, n),
            None => s.untiled(query, n),
        }
    })?;

    let finish =
        entry_point(cx, module, "irisc_rt_finish").ok_or_else(|| err("no irisc_rt_finish"))?;
    let done =
        s.b.get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
    // A failed op: a serving party that reconnects goes on with the next batch
    // (`irisc_rt_recover`), any other run finishes with status 1.
    s.b.position_at_end(fail);
    let recover =
        entry_point(cx, module, "irisc_rt_recover").ok_or_else(|| err("no irisc_rt_recover"))?;
    let again = s
        .call_value(recover, &[rt.into()], "recovered")?
        .into_int_value();
    let again =
        s.b.build_int_compare(inkwell::IntPredicate::NE, again, i64t.const_zero(), "again")
            .map_err(err)?;
    let finish_failed = cx.append_basic_block(main, "failed.finish");
    let head = s
        .batch_head
        .ok_or_else(|| err("the schedule has no batch loop"))?;
    s.b.build_conditional_branch(again, head, finish_failed)
        .map_err(err)?;
    for (block, status) in [(done, 0u64), (finish_failed, 1)] {
        s.b.position_at_end(block);
        let code = s.call_value(
            finish,
            &[rt.into(), i32t.const_int(status, false).into()],
            "exit",
        )?;
        s.b.build_return(Some(&code)).map_err(err)?;
    }
    Ok(s.dots)
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
    mpc_tile::query_body(mpc, name).map_err(err)
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
}
