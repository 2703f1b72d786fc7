//! The loops of a tiled `@query`, as `mpc-tile` staged it ([`crate::passes::mpc_tile`]): for
//! every batch of `mpc.query_batch` queries, the query stage per query; then per chunk of
//! records the batch dot products (one call each for the whole batch), the chunk's gallery views,
//! and the chunk stage per query with its appends; then the finish stage per query.
//!
//! Slots: the views and the appends' collections first (they outlive the chunk loop), then in
//! emission order; values read across a per-query loop (query stage, batch dot products,
//! appends) get one slot per query of the batch.

use super::{err, key, slots::Slot, Schedule};
use crate::codegen::{cpu::abi::entry_point, CodegenError};
use crate::mlir::{get_int, op_name};
use crate::passes::mpc_tile::Stage;
use inkwell::{values::IntValue, IntPredicate};
use melior::ir::{operation::OperationLike, OperationRef};
use std::collections::HashMap;

impl<'ctx> Schedule<'ctx, '_> {
    pub(super) fn tiled(
        &mut self,
        stages: &[(Stage, OperationRef<'_, '_>)],
        q_arg: usize,
        n: IntValue<'ctx>,
    ) -> Result<(), CodegenError> {
        let (i32t, i64t) = (self.cx.i32_type(), self.cx.i64_type());
        let batch = u64::from(self.query_batch);
        let of = |want: Stage| -> Vec<OperationRef<'_, '_>> {
            stages
                .iter()
                .filter(|(s, _)| *s == want)
                .map(|(_, op)| *op)
                .collect()
        };
        let (query_ops, dot_ops, chunk_all, batch_finish_ops, finish_ops) = (
            of(Stage::Query),
            of(Stage::BatchDot),
            of(Stage::Chunk),
            of(Stage::BatchFinish),
            of(Stage::Finish),
        );
        let batched = self.batched_chunks;
        if !batched && !batch_finish_ops.is_empty() {
            return Err(err(
                "a batch_finish stage in a body whose chunks run per query",
            ));
        }
        let is = |name: &'static str| move |op: &OperationRef<'_, '_>| op_name(op) == name;
        let views: Vec<_> = chunk_all
            .iter()
            .copied()
            .filter(is("mpc.gallery_view"))
            .collect();
        let per_query: Vec<_> = chunk_all
            .iter()
            .copied()
            .filter(|op| !is("mpc.gallery_view")(op))
            .collect();

        // Views: one fixed slot each; appends: one collection per query of the batch.
        let mut view_slots = Vec::new();
        for view in &views {
            let slot = self.next_slot;
            self.next_slot += 1;
            self.slots
                .insert(key(view.result(0).map_err(err)?), Slot::Fixed(slot));
            view_slots.push(slot);
        }
        // (Batched: one collection for the whole batch, in the batch layout.)
        let mut collections = HashMap::new();
        for op in per_query.iter().filter(|op| is("mpc.append")(op)) {
            let result = key(op.result(0).map_err(err)?);
            let slot = if batched {
                Slot::Fixed(self.next_slot)
            } else {
                Slot::Dyn(self.next_slot)
            };
            collections.insert(result, slot);
            self.slots.insert(result, slot);
            self.next_slot += if batched { 1 } else { self.query_batch };
        }
        // The gallery whose records are chunked (all galleries of a program have the same).
        let chunked = dot_ops
            .first()
            .map(|op| op.operand(1))
            .or_else(|| views.first().map(|v| v.operand(0)))
            .ok_or_else(|| err("a tiled schedule without a gallery"))?
            .map_err(err)?;
        let chunked = match self.slot(chunked)? {
            Slot::Fixed(n) => n,
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
                for op in &query_ops {
                    s.op(&op_name(op), op, Some(q))?;
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
                for op in &dot_ops {
                    s.batch_dot(op, nb, c, batched)?;
                }
                for (view, &slot) in views.iter().zip(&view_slots) {
                    let whole = match s.slot(view.operand(0).map_err(err)?)? {
                        Slot::Fixed(n) => n,
                        _ => return Err(err("a gallery in a per-query slot")),
                    };
                    let shares = get_int(view, "shares").map_err(err)?;
                    let args = [
                        s.rt.into(),
                        s.i32c(slot.into()),
                        s.i32c(whole.into()),
                        c.into(),
                        s.i32c(shares),
                    ];
                    s.checked_call("irisc_rt_gallery_view", &args, "view")?;
                }
                if batched {
                    // Once for the whole batch: each protocol op one op per round.
                    let mut first = None;
                    for op in &per_query {
                        if op_name(op) == "mpc.append" {
                            s.append(op, c, &mut first, &collections)?;
                        } else {
                            s.batch_op(op, nb)?;
                        }
                    }
                    return Ok(());
                }
                s.for_batch("chunk.queries", q0, nb, q_arg, |s, q| {
                    let mut first = None;
                    for op in &per_query {
                        if op_name(op) != "mpc.append" {
                            s.op(&op_name(op), op, Some(q))?;
                            continue;
                        }
                        // The first chunk starts the collection; later ones append to it.
                        let first = match first {
                            Some(f) => f,
                            None => {
                                let f =
                                    s.b.build_int_compare(IntPredicate::EQ, c, zero, "first")
                                        .map_err(err)?;
                                let f =
                                    s.b.build_int_z_extend(f, i32t, "first.flag").map_err(err)?;
                                *first.insert(f)
                            }
                        };
                        let src = s.slot_arg(op, 0)?;
                        let result = key(op.result(0).map_err(err)?);
                        let dst = s.resolve(collections[&result])?;
                        let args = [s.rt.into(), dst, src, first.into()];
                        s.checked_call("irisc_rt_append", &args, "append")?;
                    }
                    Ok(())
                })
            })?;

            // Finish stage, per query: reductions over all records finished over the appended
            // per-chunk results, then openings and outputs.
            // Batched: the openings (and reductions over the chunks' results) once for the
            // batch, then each query's part picked out for its outputs.
            for op in &batch_finish_ops {
                s.batch_op(op, nb)?;
            }
            s.for_batch("finish.queries", q0, nb, q_arg, |s, q| {
                for op in &finish_ops {
                    if op_name(op) == "mpc.batch_pick" {
                        s.batch_pick(op, nb)?;
                    } else {
                        s.op(&op_name(op), op, Some(q))?;
                    }
                }
                Ok(())
            })
        })
    }

    /// `append` of a batched chunk stage: the first chunk (`c` = 0) starts the batch's
    /// collection, later ones append to it. `first` caches the flag within the chunk's body.
    fn append(
        &mut self,
        op: &OperationRef<'_, '_>,
        c: IntValue<'ctx>,
        first: &mut Option<IntValue<'ctx>>,
        collections: &HashMap<usize, Slot<'ctx>>,
    ) -> Result<(), CodegenError> {
        let flag = match first {
            Some(f) => *f,
            None => {
                let zero = self.cx.i64_type().const_zero();
                let f = self
                    .b
                    .build_int_compare(IntPredicate::EQ, c, zero, "first")
                    .map_err(err)?;
                let f = self
                    .b
                    .build_int_z_extend(f, self.cx.i32_type(), "first.flag")
                    .map_err(err)?;
                *first.insert(f)
            }
        };
        let src = self.slot_arg(op, 0)?;
        let result = key(op.result(0).map_err(err)?);
        let dst = self.resolve(collections[&result])?;
        let args = [self.rt.into(), dst, src, flag.into()];
        self.checked_call("irisc_rt_append", &args, "append")
    }
}
