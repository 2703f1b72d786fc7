//! How the schedule tiles `@query`: queries in batches, the gallery in record chunks.
//!
//! Every value of `@query` that depends on a gallery is record-major: one entry (or one group of
//! entries, e.g. 31 rotations) per record, and every op on such values works record by record,
//! until a reduction over all records (`group = 0`) or an opening. So the schedule may run that
//! part of the body on one chunk of records at a time and collect what crosses out of it. That
//! is what makes two things possible:
//!
//! - the dot products of a whole **batch of queries** against one chunk are one kernel call
//!   (a GEMM over (queries x rotations) x records), so the gallery streams from memory once per
//!   batch, not once per query;
//! - the kernel for the **next chunk** runs in the background while this chunk's comparisons
//!   wait on the network (the runtime's `irisc_rt_batch_dot` starts it).
//!
//! [`plan`] sorts the ops of `@query` into four stages:
//!
//! | stage | ops | runs |
//! |---|---|---|
//! | [`Stage::Query`] | what depends on the query alone (`load_query`, `rotate`, ...) | once per query, before the chunks |
//! | [`Stage::BatchDot`] | `shamir_dot` / `masked_dot` of a query-stage value with a gallery | once per chunk, for the whole batch |
//! | [`Stage::Chunk`] | record-local ops on gallery-dependent values | per chunk, per query |
//! | [`Stage::Finish`] | openings, outputs, and what uses them | once per query, after the chunks |
//!
//! A chunk-stage value used by the finish stage is a **crossing**: the schedule appends it chunk
//! after chunk, so the finish stage sees the whole record-major vector, as it would untiled. A
//! reduction over all records (`or_tree`/`and_tree`/`sum` with `group = 0`) runs twice: on each
//! chunk (its result a crossing) and once more in the finish stage over the per-chunk results,
//! which gives the same value because OR, AND and + are associative. Nothing is opened per
//! chunk, so tiling reveals nothing the untiled program does not.
//!
//! A body this does not fit (no gallery-dependent op, or a shape the stages cannot express)
//! gets the reason, and is scheduled untiled, query by query (`mpc.untiled = "<reason>"`).
//!
//! ```text
//! %0 = load_query(%q)            Query
//! %1 = rotate(%0)                Query
//! %2 = shamir_dot(%1, %db)       BatchDot   (one kernel call per chunk for the batch)
//! %3 = reshare(%2)               Chunk
//! %4 = mask_len(%1, %db)         Chunk      (%db is the chunk's view)
//! %5 = sub_threshold(%3, %4)     Chunk
//! %6 = msb(%5)                   Chunk
//! %7 = or_tree(%6) {group = 31}  Chunk      crossing: appended per chunk
//! %8 = open(%7)                  Finish
//! output(%q, %8, %db)            Finish     (%db is the whole gallery)
//! ```

use super::op_class::{class_of, is, is_record_local, OpClass};
use std::collections::{HashMap, HashSet};

/// Where an op of `@query` runs in the tiled schedule (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Query,
    BatchDot,
    Chunk,
    /// The finish-stage ops of a batched chunk stage that run once for the whole batch
    /// (openings, reductions over the chunks' results), before the per-query finish.
    BatchFinish,
    Finish,
}

impl Stage {
    /// The stage's name in `mpc.stage {name = ...}`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Query => "query",
            Stage::BatchDot => "batch_dot",
            Stage::Chunk => "chunk",
            Stage::BatchFinish => "batch_finish",
            Stage::Finish => "finish",
        }
    }

    pub fn from_name(name: &str) -> Option<Stage> {
        [
            Stage::Query,
            Stage::BatchDot,
            Stage::Chunk,
            Stage::BatchFinish,
            Stage::Finish,
        ]
        .into_iter()
        .find(|s| s.name() == name)
    }
}

/// One op of `@query` as the planner sees it: its name, the values it reads and the value it
/// defines (values are opaque keys).
#[derive(Debug, Clone)]
pub struct OpInfo {
    pub name: String,
    pub operands: Vec<usize>,
    pub result: Option<usize>,
    /// `group` for the group reductions.
    pub group: Option<i64>,
    /// The shifts of a rotation (`hi - lo + 1`): how many codes it makes of each.
    pub rotations: Option<i64>,
}

/// The stages of `@query`'s ops and what crosses between them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The stage of each op, in body order.
    pub stages: Vec<Stage>,
    /// Chunk-stage values the finish stage reads, in order of definition: appended per chunk.
    pub crossings: Vec<usize>,
    /// Ops (by index) that reduce over all records: run per chunk, then again on the crossing.
    pub reductions: Vec<usize>,
    /// Gallery arguments the chunk stage reads (it reads the chunk's view of them).
    pub viewed_galleries: Vec<usize>,
}

/// The tiling of a `@query` body whose gallery arguments are `galleries`, or why the body does
/// not fit the stages.
pub fn plan(ops: &[OpInfo], galleries: &[usize]) -> Result<Plan, String> {
    let galleries: HashSet<usize> = galleries.iter().copied().collect();
    let mut stage_of: HashMap<usize, Stage> = HashMap::new();
    let mut stages = Vec::with_capacity(ops.len());
    let mut reductions = Vec::new();
    let mut viewed = Vec::new();
    let mut crossings: Vec<usize> = Vec::new();

    for (i, op) in ops.iter().enumerate() {
        let reads = |s: Stage| op.operands.iter().any(|v| stage_of.get(v) == Some(&s));
        let reads_gallery = op.operands.iter().any(|v| galleries.contains(v));
        let record_dependent = reads_gallery || reads(Stage::Chunk) || reads(Stage::BatchDot);
        let name = op.name.as_str();
        let stage = if is(name, OpClass::GalleryDot)
            && op.operands.len() == 2
            && stage_of.get(&op.operands[0]) == Some(&Stage::Query)
            && galleries.contains(&op.operands[1])
        {
            Stage::BatchDot
        } else if matches!(class_of(name), Some(OpClass::Opening | OpClass::Output))
            || reads(Stage::Finish)
        {
            Stage::Finish
        } else if record_dependent {
            if !is_record_local(name) {
                return Err(format!(
                    "`{name}` reads gallery records but cannot run on a chunk"
                ));
            }
            if is(name, OpClass::Reduction) && op.group == Some(0) {
                reductions.push(i);
            }
            Stage::Chunk
        } else {
            Stage::Query
        };
        if stage == Stage::Chunk || stage == Stage::BatchDot {
            for v in &op.operands {
                if galleries.contains(v) && stage == Stage::Chunk && !viewed.contains(v) {
                    viewed.push(*v);
                }
            }
        }
        if stage == Stage::Finish {
            for v in &op.operands {
                if matches!(stage_of.get(v), Some(Stage::Chunk | Stage::BatchDot))
                    && !crossings.contains(v)
                {
                    crossings.push(*v);
                }
            }
        }
        if let Some(r) = op.result {
            stage_of.insert(r, stage);
        }
        stages.push(stage);
    }
    // A batch dot's result crossing directly would be appended whole; it is always reshared
    // first in the lowering, so such a body is left untiled rather than handled.
    let batch_results: HashSet<usize> = ops
        .iter()
        .zip(&stages)
        .filter(|(_, s)| **s == Stage::BatchDot)
        .filter_map(|(o, _)| o.result)
        .collect();
    if crossings.iter().any(|c| batch_results.contains(c)) {
        return Err("a batch dot product's result is used after the chunks".into());
    }
    // Every reduction's result must cross (it is finished in the finish stage), and its input
    // must not also cross whole.
    for &r in &reductions {
        let what = &ops[r].name;
        let result = ops[r]
            .result
            .ok_or_else(|| format!("`{what}` has no result"))?;
        if !crossings.contains(&result) || crossings.contains(&ops[r].operands[0]) {
            return Err(format!(
                "`{what}` over all records is not the only use of its input after the chunks"
            ));
        }
        // The reduced chunk result must not feed another chunk-stage op (it is partial there).
        let used_in_chunk = ops
            .iter()
            .zip(&stages)
            .any(|(o, s)| *s == Stage::Chunk && o.operands.contains(&result));
        if used_in_chunk {
            return Err(format!(
                "the partial result of `{what}` over all records is used within the chunk"
            ));
        }
    }
    if !stages
        .iter()
        .any(|s| matches!(s, Stage::Chunk | Stage::BatchDot))
    {
        return Err("no op reads gallery records".into());
    }
    Ok(Plan {
        stages,
        crossings,
        reductions,
        viewed_galleries: viewed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(name: &str, operands: &[usize], result: Option<usize>) -> OpInfo {
        OpInfo {
            name: format!("mpc.{name}"),
            operands: operands.to_vec(),
            result,
            group: None,
            rotations: None,
        }
    }

    fn grouped(name: &str, operand: usize, result: usize, group: i64) -> OpInfo {
        OpInfo {
            group: Some(group),
            ..op(name, &[operand], Some(result))
        }
    }

    /// `iris_ids.irs`: the module docs' example. Query = 0, gallery = 1.
    fn ids_body(group: i64) -> Vec<OpInfo> {
        vec![
            op("load_query", &[0], Some(10)),
            op("rotate", &[10], Some(11)),
            op("shamir_dot", &[11, 1], Some(12)),
            op("reshare", &[12], Some(13)),
            op("mask_len", &[11, 1], Some(14)),
            op("sub_threshold", &[13, 14], Some(15)),
            op("msb", &[15], Some(16)),
            grouped("or_tree", 16, 17, group),
            op("open", &[17], Some(18)),
            op("output", &[0, 18, 1], None),
            op("emit", &[0], None),
        ]
    }

    #[test]
    fn ids_tiles_with_one_crossing() {
        use Stage::*;
        let p = plan(&ids_body(31), &[1]).unwrap();
        assert_eq!(
            p.stages,
            vec![Query, Query, BatchDot, Chunk, Chunk, Chunk, Chunk, Chunk, Finish, Finish, Finish]
        );
        assert_eq!(p.crossings, vec![17]);
        assert!(p.reductions.is_empty());
        assert_eq!(p.viewed_galleries, vec![1]);
    }

    #[test]
    fn a_reduction_over_all_records_runs_per_chunk_and_again() {
        let p = plan(&ids_body(0), &[1]).unwrap();
        assert_eq!(p.reductions, vec![7]);
        assert_eq!(p.crossings, vec![17]);
    }

    #[test]
    fn query_only_work_stays_in_the_query_stage() {
        // A comparison of the query with an earlier query (no gallery) is query-stage work even
        // when it is interactive.
        let mut body = vec![
            op("load_query", &[0], Some(20)),
            op("load_earlier", &[0], Some(21)),
            op("masked_dot", &[20, 21], Some(22)),
            op("reshare", &[22], Some(23)),
        ];
        body.extend(ids_body(31));
        let p = plan(&body, &[1]).unwrap();
        assert_eq!(&p.stages[..4], &[Stage::Query; 4]);
    }

    #[test]
    fn bodies_that_do_not_fit_are_left_untiled() {
        // No gallery at all.
        let body = vec![
            op("load_query", &[0], Some(10)),
            op("open", &[10], Some(11)),
            op("output", &[0, 11], None),
        ];
        assert_eq!(plan(&body, &[]), Err("no op reads gallery records".into()));
        // A reduced value that is also read whole.
        let mut body = ids_body(0);
        body.insert(8, op("open", &[16], Some(30)));
        assert!(plan(&body, &[1])
            .unwrap_err()
            .contains("only use of its input"));
        // A record-dependent op the chunks cannot run.
        let mut body = ids_body(31);
        body[5].name = "mpc.something_new".into();
        assert_eq!(
            plan(&body, &[1]),
            Err("`mpc.something_new` reads gallery records but cannot run on a chunk".into())
        );
    }
}
