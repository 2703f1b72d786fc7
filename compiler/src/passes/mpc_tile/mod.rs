//! `mpc-tile`: rewrites `@query` of the `mpc` module into the tiled schedule the parties run.
//!
//! [`plan`] sorts the ops of `@query` into the stages query / batch dot / chunk / finish (see its
//! docs for why the stages exist and which bodies fit). This pass then makes the plan IR, with
//! the ops `dialects/mpc.irdl.mlir` defines for it:
//!
//! - `mpc.stage {name = "..."}` opens each stage; the ops after it, up to the next one, run in
//!   that stage (query: once per query of the batch; batch_dot: once per chunk for the whole
//!   batch; chunk: per chunk, per query; finish: once per query after the chunks);
//! - a dot product of a query-stage value with a gallery becomes `mpc.batch_masked_dot` /
//!   `mpc.batch_shamir_dot`: one call for every query of the batch over the current chunk;
//! - chunk-stage ops read `mpc.gallery_view` of a gallery (the current chunk; `shares = 0`
//!   where only the public masks are read), not the gallery;
//! - a chunk-stage value the finish stage reads goes through `mpc.append` (collected chunk
//!   after chunk);
//! - a reduction over all records (`group = 0`) runs twice: in the chunk stage on each chunk,
//!   and again in the finish stage over the appended per-chunk results.
//!
//! The options `query-batch` (8) and `record-chunk` (0: the whole gallery as one chunk; the
//! parties' `--record-chunk` overrides it at run time) are recorded on `@query` as
//! `mpc.query_batch` and `mpc.record_chunk`. A body the planner cannot tile keeps its ops and
//! gets `mpc.untiled = "<why>"`. With `batch-chunks=1` (the default) the chunk stage runs once
//! per chunk for the whole batch where every op of it has a batch form ([`batch`]):
//! `mpc.batched_chunks` on `@query`, the `batch_finish` stage and the batch ops; otherwise
//! `mpc.unbatched = "<why>"` and the chunk stage per query (the example below).
//!
//! Before (`iris_ids.irs`, after `irs-to-mpc`):
//! ```mlir
//! func.func @query(%arg0: i64, %arg1: !mpc.code<16>) {
//!   %0 = "mpc.load_query"(%arg0) {input = 1, name = "q", part = 0} : (i64) -> !mpc.code<16>
//!   %1 = "mpc.rotate"(%0) {hi = 15, lo = -15} : (!mpc.code<16>) -> !mpc.code<16>
//!   %2 = "mpc.masked_dot"(%1, %arg1) {code_bits = 12800} : (...) -> !mpc.add<16>
//!   %3 = "mpc.reshare"(%2) : (!mpc.add<16>) -> !mpc.rep<16>
//!   %4 = "mpc.mask_len"(%1, %arg1) : (...) -> !mpc.pub<16>
//!   ...
//!   %7 = "mpc.or_tree"(%6) {group = 31} : (!mpc.bits) -> !mpc.bits
//!   %8 = "mpc.open"(%7) {to = 0} : (!mpc.bits) -> !mpc.clear_bits
//!   "mpc.output"(%arg0, %8, %arg1) {label = "ids", shape = "ids"} : (...) -> ()
//!   "mpc.emit"(%arg0) : (i64) -> ()
//! }
//! ```
//! After (`mpc-tile{query-batch=8 record-chunk=0 batch-chunks=0}`: the chunk stage per query):
//! ```mlir
//! func.func @query(%arg0: i64, %arg1: !mpc.code<16>) attributes {mpc.query_batch = 8, mpc.record_chunk = 0, mpc.unbatched = "..."} {
//!   "mpc.stage"() {name = "query"} : () -> ()
//!   %0 = "mpc.load_query"(%arg0) {input = 1, name = "q", part = 0} : (i64) -> !mpc.code<16>
//!   %1 = "mpc.rotate"(%0) {hi = 15, lo = -15} : (!mpc.code<16>) -> !mpc.code<16>
//!   "mpc.stage"() {name = "batch_dot"} : () -> ()
//!   %2 = "mpc.batch_masked_dot"(%1, %arg1) {code_bits = 12800} : (...) -> !mpc.add<16>
//!   "mpc.stage"() {name = "chunk"} : () -> ()
//!   %3 = "mpc.gallery_view"(%arg1) {shares = 0} : (!mpc.code<16>) -> !mpc.code<16>
//!   %4 = "mpc.reshare"(%2) : (!mpc.add<16>) -> !mpc.rep<16>
//!   %5 = "mpc.mask_len"(%1, %3) : (...) -> !mpc.pub<16>
//!   ...
//!   %8 = "mpc.or_tree"(%7) {group = 31} : (!mpc.bits) -> !mpc.bits
//!   %9 = "mpc.append"(%8) : (!mpc.bits) -> !mpc.bits
//!   "mpc.stage"() {name = "finish"} : () -> ()
//!   %10 = "mpc.open"(%9) {to = 0} : (!mpc.bits) -> !mpc.clear_bits
//!   "mpc.output"(%arg0, %10, %arg1) {label = "ids", shape = "ids"} : (...) -> ()
//!   "mpc.emit"(%arg0) : (i64) -> ()
//! }
//! ```

pub mod batch;
pub mod op_class;
pub mod plan;
mod stages;

use crate::analysis::schedule::TileOptions;
use batch::Convert;
pub use plan::{OpInfo, Plan, Stage};
pub use stages::{describe, query_body, stages_of};

use super::{Pass, PassError};
use crate::mlir::{get_int, get_str, int_attr, op_name, str_attr, Compiler};
use melior::ir::{
    attribute::StringAttribute,
    block::BlockLike,
    operation::{OperationBuilder, OperationLike, OperationMutLike, OperationRefMut},
    BlockRef, Module, Operation, RegionLike, Value, ValueLike,
};

pub(crate) const NAME: &str = "mpc-tile";

/// Queries per batch unless `query-batch` says otherwise: their dot products against a chunk of
/// the gallery are one kernel call. 8 queries of 31 rotations keep the kernel's code tiles full
/// while the batch's query shares (8 x 31 codes) stay in the core's cache.
pub const DEFAULT_QUERY_BATCH: u32 = 8;

/// The op that opens a stage of the tiled `@query`.
pub const STAGE_OP: &str = "mpc.stage";

/// On `@query`: its chunk stage runs once per chunk for the whole batch ([`batch`]).
pub const BATCHED_ATTR: &str = "mpc.batched_chunks";
/// On `@query`: why its chunk stage runs per query (an op without a batch form).
pub const UNBATCHED_ATTR: &str = "mpc.unbatched";

fn fail(message: impl Into<String>) -> PassError {
    PassError::Unsupported {
        pass: NAME,
        message: message.into(),
    }
}

/// The `mpc-tile` pass with its options (`mpc-tile{query-batch=8 record-chunk=0}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MpcTile {
    /// Queries whose dot products with a chunk are one kernel call (1..=1024).
    pub query_batch: u32,
    /// Gallery records per chunk; 0 scans the whole gallery as one chunk.
    pub record_chunk: u64,
    /// Whether the chunk stage runs once for the whole batch where it can (`batch-chunks=1`,
    /// the default); 0 keeps the per-query loop.
    pub batch_chunks: bool,
}

impl Default for MpcTile {
    fn default() -> Self {
        MpcTile {
            query_batch: DEFAULT_QUERY_BATCH,
            record_chunk: 0,
            batch_chunks: true,
        }
    }
}

impl MpcTile {
    /// The options as this pass records them on `@query`.
    pub fn recorded(&self) -> TileOptions {
        TileOptions {
            query_batch: self.query_batch,
            record_chunk: self.record_chunk,
            batched_chunks: self.batch_chunks,
        }
    }

    /// The pass with the options of `text`: `query-batch=N record-chunk=M` (space or comma
    /// separated, optionally in braces as `--passes` writes them; either may be left out).
    pub fn from_options(text: &str) -> Result<MpcTile, String> {
        let text = text.trim();
        let text = text
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or(text);
        let mut pass = MpcTile::default();
        for item in text.split([' ', ',']).filter(|s| !s.is_empty()) {
            let (key, value) = item
                .split_once('=')
                .ok_or_else(|| format!("option `{item}` is not `name=value`"))?;
            let number = |max: u64| -> Result<u64, String> {
                value
                    .parse::<u64>()
                    .ok()
                    .filter(|v| *v <= max)
                    .ok_or_else(|| {
                        format!("option `{key}` needs an integer in 0..={max}, not `{value}`")
                    })
            };
            match key {
                "query-batch" => {
                    let n = number(1024)?;
                    if n == 0 {
                        return Err("option `query-batch` must be at least 1".into());
                    }
                    pass.query_batch = n as u32;
                }
                "record-chunk" => pass.record_chunk = number(i64::MAX as u64)?,
                "batch-chunks" => pass.batch_chunks = number(1)? == 1,
                other => {
                    return Err(format!(
                    "unknown option `{other}` (expected query-batch, record-chunk, batch-chunks)"
                ))
                }
            }
        }
        Ok(pass)
    }
}

impl Pass for MpcTile {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        if crate::mlir::get_str(&module.as_operation(), "mpc.protocol").as_deref() == Ok("fss2") {
            return Err(fail(
                "an fss2 module has nothing to tile: its servers run Protocol 2 over the whole gallery in two rounds",
            ));
        }
        {
            let mut func = query_func(&module)?;
            let block = func
                .region(0)
                .ok()
                .and_then(|r| r.first_block())
                .ok_or_else(|| fail("@query has no body"))?;
            if func.has_attribute("mpc.query_batch") || stages_of(block).is_some() {
                return Err(fail("@query is already tiled"));
            }
            let ctx = cx.context();
            let (batch, chunk) = (i64::from(self.query_batch), self.record_chunk as i64);
            func.set_discardable_attribute(
                "mpc.query_batch",
                int_attr(ctx, "mpc.query_batch", batch).1,
            );
            func.set_discardable_attribute(
                "mpc.record_chunk",
                int_attr(ctx, "mpc.record_chunk", chunk).1,
            );
            let ops = body_ops(block);
            let galleries: Vec<usize> = (1..block.argument_count())
                .map(|i| block.argument(i).map(key).map_err(|e| fail(e.to_string())))
                .collect::<Result<_, _>>()?;
            let infos: Vec<OpInfo> = ops.iter().map(op_info).collect();
            match plan::plan(&infos, &galleries) {
                Err(why) => func.set_discardable_attribute(
                    "mpc.untiled",
                    StringAttribute::new(ctx, &why).into(),
                ),
                Ok(plan) => {
                    let batch_plan = if self.batch_chunks {
                        batch::plan_batch(&infos, &plan, &galleries)
                    } else {
                        Err("per-query chunks asked for (batch-chunks=0)".to_string())
                    };
                    let batched = match batch_plan {
                        Ok(b) => {
                            func.set_discardable_attribute(
                                BATCHED_ATTR,
                                melior::ir::attribute::BoolAttribute::new(ctx, true).into(),
                            );
                            Some(b)
                        }
                        Err(why) => {
                            func.set_discardable_attribute(
                                UNBATCHED_ATTR,
                                StringAttribute::new(ctx, &why).into(),
                            );
                            None
                        }
                    };
                    rewrite(cx, block, &ops, &plan, batched.as_ref())?
                }
            }
        }
        Ok(module)
    }
}

/// The key of a value: the planner sees values as opaque keys.
fn key<'c>(v: impl ValueLike<'c>) -> usize {
    v.to_raw().ptr as usize
}

/// What the planner needs of an op.
fn op_info<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>) -> OpInfo {
    OpInfo {
        name: op_name(op),
        operands: op.operands().map(key).collect(),
        result: op.result(0).ok().map(key),
        group: get_int(op, "group").ok(),
        rotations: match (get_int(op, "lo"), get_int(op, "hi")) {
            (Ok(lo), Ok(hi)) if op_name(op) == "mpc.rotate" && hi >= lo => Some(hi - lo + 1),
            _ => None,
        },
    }
}

fn query_func<'c, 'm>(module: &'m Module<'c>) -> Result<OperationRefMut<'c, 'm>, PassError> {
    let mut cur = module.body().first_operation_mut();
    while let Some(f) = cur {
        if op_name(&f) == "func.func" && get_str(&f, "sym_name").as_deref() == Ok("query") {
            return Ok(f);
        }
        cur = f.next_in_block_mut();
    }
    Err(fail("the module has no `func.func @query`"))
}

/// The ops of `block` before its terminator.
fn body_ops<'c, 'a>(block: BlockRef<'c, 'a>) -> Vec<OperationRefMut<'c, 'a>> {
    let mut out = Vec::new();
    let mut cur = block.first_operation_mut();
    while let Some(op) = cur {
        cur = op.next_in_block_mut();
        if op_name(&op) != "func.return" {
            out.push(op);
        }
    }
    out
}

/// Rewrites `ops` (the body of `block`) into the stages of `plan`, in stage order: every stage
/// reads only values of its own or earlier stages, so the order keeps every use after its
/// definition.
fn rewrite<'c, 'a>(
    cx: &'c Compiler,
    block: BlockRef<'c, 'a>,
    ops: &[OperationRefMut<'c, 'a>],
    plan: &Plan,
    batched: Option<&batch::BatchPlan>,
) -> Result<(), PassError> {
    let ctx = cx.context();
    let ret = block
        .terminator()
        .ok_or_else(|| fail("@query has no return"))?;
    let err = |e: melior::Error| fail(e.to_string());
    let add = |op: Operation<'c>| -> OperationRefMut<'c, 'a> {
        let op = block.insert_operation_before(ret, op);
        // SAFETY: `op` was just inserted into `block`, which outlives the returned reference.
        unsafe { OperationRefMut::from_raw(op.to_raw()) }
    };
    let stage_marker = |stage: Stage| -> Result<Operation<'c>, PassError> {
        OperationBuilder::new(STAGE_OP, cx.unknown_location())
            .add_attributes(&[str_attr(ctx, "name", stage.name())])
            .build()
            .map_err(err)
    };
    // A copy of `like` named `name` reading `operands`, with its attributes and result type.
    let derived = |name: &str,
                   like: &OperationRefMut<'c, 'a>,
                   operands: &[Value<'c, 'a>],
                   attrs: &[(melior::ir::Identifier<'c>, melior::ir::Attribute<'c>)]|
     -> Result<OperationRefMut<'c, 'a>, PassError> {
        let result = like.result(0).map_err(err)?.r#type();
        // `attrs` replace attributes of `like` of the same name.
        let mut all: Vec<_> = like
            .attributes()
            .filter(|(n, _)| !attrs.iter().any(|(m, _)| m == n))
            .collect();
        all.extend_from_slice(attrs);
        let op = OperationBuilder::new(name, like.location())
            .add_operands(operands)
            .add_attributes(&all)
            .add_results(&[result])
            .build()
            .map_err(err)?;
        Ok(add(op))
    };
    let in_stage = |want: Stage| -> Vec<usize> {
        (0..ops.len()).filter(|&i| plan.stages[i] == want).collect()
    };
    let (query_ops, dot_ops, chunk_ops, finish_ops) = (
        in_stage(Stage::Query),
        in_stage(Stage::BatchDot),
        in_stage(Stage::Chunk),
        in_stage(Stage::Finish),
    );
    // Replaces the operand `of` by `with` in the ops `at`.
    let replace = |at: &[OperationRefMut<'c, 'a>], of: usize, with: Value<'c, 'a>| {
        for op in at {
            let mut op = *op;
            for i in 0..op.operand_count() {
                if op.operand(i).map(key).ok() == Some(of) {
                    op.set_operand(i, with);
                }
            }
        }
    };
    let pick =
        |idx: &[usize]| -> Vec<OperationRefMut<'c, 'a>> { idx.iter().map(|&i| ops[i]).collect() };
    let mut chunk = pick(&chunk_ops);
    let mut finish = pick(&finish_ops);

    // Batch dot products, replacing the per-query ones.
    let mut batch = Vec::new();
    for &i in &dot_ops {
        let old = ops[i];
        let name = match op_name(&old).as_str() {
            "mpc.masked_dot" => "mpc.batch_masked_dot",
            "mpc.shamir_dot" => "mpc.batch_shamir_dot",
            other => return Err(fail(format!("no batch form of `{other}`"))),
        };
        let operands: Vec<Value> = old.operands().collect();
        let new = derived(name, &old, &operands, &[])?;
        let (of, with) = (
            key(old.result(0).map_err(err)?),
            new.result(0).map_err(err)?.into(),
        );
        replace(&chunk, of, with);
        replace(&finish, of, with);
        batch.push(new);
    }
    for &i in &dot_ops {
        let mut old = ops[i];
        old.remove_from_parent();
        // SAFETY: `old` is detached and nothing uses its result any more; this destroys it.
        drop(unsafe { Operation::from_raw(old.to_raw()) });
    }

    // The batch form of the chunk and finish stages: ops replaced, operands converted into (or
    // picked out of) the batch layout; which finish ops run once for the batch.
    let mut finish_once: Vec<bool> = vec![false; finish.len()];
    if let Some(b) = batched {
        let convert = |op: &mut OperationRefMut<'c, 'a>,
                       k: usize,
                       with: Convert|
         -> Result<OperationRefMut<'c, 'a>, PassError> {
            let x: Value = op.operand(k).map_err(err)?;
            let (name, width, mut operands) = match with {
                Convert::Repeat(w) => ("mpc.batch_repeat", w, vec![x]),
                Convert::Spread { width, like } => (
                    "mpc.batch_spread",
                    width,
                    vec![x, op.operand(like).map_err(err)?],
                ),
                Convert::Pick(w) => ("mpc.batch_pick", w, vec![x]),
            };
            let new = OperationBuilder::new(name, op.location())
                .add_operands(&std::mem::take(&mut operands))
                .add_attributes(&[int_attr(ctx, "width", width)])
                .add_results(&[x.r#type()])
                .build()
                .map_err(err)?;
            let new = add(new);
            op.set_operand(k, new.result(0).map_err(err)?.into());
            Ok(new)
        };
        // Repeats before spreads: a spread's `like` may be a repeated operand.
        let converts_of = |i: usize| -> Vec<(usize, Convert)> {
            let mut c: Vec<(usize, Convert)> = b
                .converts
                .iter()
                .filter(|(at, _, _)| *at == i)
                .map(|&(_, k, c)| (k, c))
                .collect();
            c.sort_by_key(|(_, c)| !matches!(c, Convert::Repeat(_)));
            c
        };
        let mut new_chunk = Vec::new();
        for (n, &i) in chunk_ops.iter().enumerate() {
            let mut op = chunk[n];
            for (k, c) in converts_of(i) {
                new_chunk.push(convert(&mut op, k, c)?);
            }
            if b.mask_lens.contains(&i) {
                let operands: Vec<Value> = op.operands().collect();
                let new = derived("mpc.batch_mask_len", &op, &operands, &[])?;
                let with: Value = new.result(0).map_err(err)?.into();
                let of = key(op.result(0).map_err(err)?);
                replace(&chunk[n + 1..], of, with);
                replace(&finish, of, with);
                op.remove_from_parent();
                // SAFETY: `op` is detached and nothing uses its result any more.
                drop(unsafe { Operation::from_raw(op.to_raw()) });
                new_chunk.push(new);
                continue;
            }
            if let Some(&w) = b.per_query.get(&i) {
                op.set_discardable_attribute("per_query", int_attr(ctx, "per_query", w).1);
            }
            new_chunk.push(op);
        }
        chunk = new_chunk;
        let (mut new_finish, mut once) = (Vec::new(), Vec::new());
        for (n, &i) in finish_ops.iter().enumerate() {
            let mut op = finish[n];
            for (k, c) in converts_of(i) {
                new_finish.push(convert(&mut op, k, c)?);
                once.push(false);
            }
            new_finish.push(op);
            once.push(b.batch_finish.contains(&i));
        }
        finish = new_finish;
        finish_once = once;
    }

    // Views of the chunk for the chunk stage.
    let mut views = Vec::new();
    for &g in &plan.viewed_galleries {
        let arg = (1..block.argument_count())
            .filter_map(|i| block.argument(i).ok())
            .find(|a| key(*a) == g)
            .ok_or_else(|| fail("a viewed gallery that is no argument of @query"))?;
        // Only mask_len reads just the public masks; anything else needs the records' shares.
        let shares = chunk
            .iter()
            .any(|op| !op_name(op).ends_with("mask_len") && op.operands().any(|v| key(v) == g));
        let op = OperationBuilder::new("mpc.gallery_view", cx.unknown_location())
            .add_operands(&[arg.into()])
            .add_attributes(&[int_attr(ctx, "shares", i64::from(shares))])
            .add_results(&[arg.r#type()])
            .build()
            .map_err(err)?;
        let view = add(op);
        replace(&chunk, g, view.result(0).map_err(err)?.into());
        views.push(view);
    }

    // Crossings, appended per chunk; reductions over all records finished over them.
    let mut appends = Vec::new();
    let mut finishing = Vec::new();
    for &x in &plan.crossings {
        let def = chunk
            .iter()
            .chain(&batch)
            .find(|op| op.result(0).map(key).ok() == Some(x))
            .copied()
            .ok_or_else(|| fail("a crossing no chunk-stage op defines"))?;
        let value: Value = def.result(0).map_err(err)?.into();
        let op = OperationBuilder::new("mpc.append", cx.unknown_location())
            .add_operands(&[value])
            .add_results(&[value.r#type()])
            .build()
            .map_err(err)?;
        let append = add(op);
        let collected: Value = append.result(0).map_err(err)?.into();
        replace(&finish, x, collected);
        if let Some(&r) = plan
            .reductions
            .iter()
            .find(|&&r| ops[r].result(0).map(key).ok() == Some(x))
        {
            // Batched: one partial result per query per chunk, reduced per query.
            let per_query: Vec<_> = batched
                .map(|_| int_attr(ctx, "per_query", 1))
                .into_iter()
                .collect();
            let again = derived(&op_name(&ops[r]), &ops[r], &[collected], &per_query)?;
            replace(
                &finish,
                key(collected),
                again.result(0).map_err(err)?.into(),
            );
            finishing.push(again);
        }
        appends.push(append);
    }
    chunk.splice(0..0, views);
    chunk.extend(appends);
    let batch_finish = match batched {
        None => {
            finish.splice(0..0, finishing);
            Vec::new()
        }
        Some(_) => {
            let mut once = finishing;
            let mut each = Vec::new();
            for (op, &o) in finish.iter().zip(&finish_once) {
                if o {
                    once.push(*op);
                } else {
                    each.push(*op);
                }
            }
            finish = each;
            once
        }
    };

    // The stages in order, each opened by its marker.
    for (stage, stage_ops) in [
        (Stage::Query, pick(&query_ops)),
        (Stage::BatchDot, batch),
        (Stage::Chunk, chunk),
        (Stage::BatchFinish, batch_finish),
        (Stage::Finish, finish),
    ] {
        if stage_ops.is_empty() {
            continue;
        }
        add(stage_marker(stage)?);
        for mut op in stage_ops {
            op.move_before(ret);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
