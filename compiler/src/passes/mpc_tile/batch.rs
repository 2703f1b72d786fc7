//! Whether the chunk stage of a tiled body runs once for the whole batch of queries, and how.
//!
//! Batched, every chunk-stage op runs once per chunk over the values of all the batch's queries
//! laid out `[record][query][width]` (the batch dot product's own record-major output), so one
//! protocol op is one op per round for the whole batch and a batch costs one query's rounds.
//! Elementwise ops do not see the layout; what does is marked here:
//!
//! - `mask_len` reads the query itself: its batch form `batch_mask_len` reads every query of the
//!   batch and writes the batch layout;
//! - a grouped reduction whose group divides the width (`or_tree {group = 31}` over a record's
//!   rotations) stays as it is: its groups are contiguous in the layout; a reduction over all
//!   records (`group = 0`) reduces each query's elements apart (`per_query = width`);
//! - a per-query value of the query stage read by an elementwise op (one element per query, or
//!   one per code) is `batch_spread` to the layout of another operand; a value of the gallery
//!   alone (`[record][width]`) is `batch_repeat`ed for every query;
//! - in the finish stage, openings of chunk results run once for the batch too (the
//!   `batch_finish` stage, with the reductions finished over the chunks' results), and each
//!   query's output reads its part through `batch_pick`.
//!
//! A body with an op that has no batch form keeps the per-query chunk loop, with the reason
//! recorded on `@query` as `mpc.unbatched`.

use std::collections::HashMap;

use super::op_class::{class_of, is, OpClass};
use super::{OpInfo, Plan, Stage};

/// The shape of a value of the tiled body, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A value of the query stage, held per query: `Some(n)` elements (codes for code values),
    /// or unknown.
    PerQuery(Option<i64>),
    /// A value of the gallery alone (or the gallery itself), the same for every query: `width`
    /// elements per record.
    Gallery(i64),
    /// A value of the whole batch: `[record][query][width]`.
    Batched(i64),
}

/// How an operand of a batched op is brought into the batch layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convert {
    /// `batch_repeat {width}`: a value of the gallery alone, repeated for every query.
    Repeat(i64),
    /// `batch_spread {width}` of the per-query values to the layout of operand `like`.
    Spread { width: i64, like: usize },
    /// `batch_pick {width}`: the query's part, for an op that stays per query.
    Pick(i64),
}

/// The batch form of a tiled body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchPlan {
    /// `(op, operand)` conversions, in body order.
    pub converts: Vec<(usize, usize, Convert)>,
    /// `mask_len` ops that become `batch_mask_len`.
    pub mask_lens: Vec<usize>,
    /// Reductions over all records (chunk or finish stage) and the width they reduce per query.
    pub per_query: HashMap<usize, i64>,
    /// Finish-stage ops that run once for the batch (`batch_finish`); the others stay per query.
    pub batch_finish: Vec<usize>,
    /// The width of each crossing (by value key) in the batch layout.
    pub crossing_width: HashMap<usize, i64>,
}

/// The elements per query of a query-stage op's result, where known.
fn query_width(op: &OpInfo, shape: &HashMap<usize, Shape>) -> Option<i64> {
    let of = |v: &usize| match shape.get(v) {
        Some(Shape::PerQuery(w)) => *w,
        _ => None,
    };
    let name = op.name.as_str();
    match name {
        "mpc.load_query" | "mpc.const_bits" => Some(1),
        "mpc.rotate" => Some(op.rotations? * of(op.operands.first()?)?),
        "mpc.self_dot" => of(op.operands.first()?),
        _ if is(name, OpClass::Reduction) => match op.group? {
            0 => Some(1),
            g => of(op.operands.first()?)
                .filter(|w| w % g == 0)
                .map(|w| w / g),
        },
        _ if matches!(
            class_of(name),
            Some(OpClass::Elementwise | OpClass::MaskLength)
        ) =>
        {
            op.operands
                .iter()
                .map(of)
                .collect::<Option<Vec<i64>>>()
                .map(|ws| ws.into_iter().max().unwrap_or(1))
        }
        _ => None,
    }
}

/// The batch form of `ops` tiled as `plan` (gallery arguments `galleries`), or why the chunk
/// stage must stay per query.
pub fn plan_batch(ops: &[OpInfo], plan: &Plan, galleries: &[usize]) -> Result<BatchPlan, String> {
    let mut shape: HashMap<usize, Shape> =
        galleries.iter().map(|&g| (g, Shape::Gallery(1))).collect();
    let mut out = BatchPlan::default();
    for (i, (op, stage)) in ops.iter().zip(&plan.stages).enumerate() {
        let name = op.name.as_str();
        let result = match stage {
            Stage::Query => Shape::PerQuery(query_width(op, &shape)),
            Stage::BatchDot => match shape.get(&op.operands[0]) {
                Some(Shape::PerQuery(Some(w))) => Shape::Batched(*w),
                _ => return Err(format!("the codes per query of `{name}` are not known")),
            },
            Stage::Chunk => chunk_op(i, op, &shape, &mut out)?,
            Stage::Finish | Stage::BatchFinish => finish_op(i, op, &shape, &mut out)?,
        };
        if let Some(r) = op.result {
            shape.insert(r, result);
        }
    }
    for &x in &plan.crossings {
        match shape.get(&x) {
            Some(Shape::Batched(w)) => {
                out.crossing_width.insert(x, *w);
            }
            _ => return Err("a value of the gallery alone is used after the chunks".into()),
        }
    }
    Ok(out)
}

/// The shape of chunk-stage op `i`'s result, with its batch form recorded in `out`.
fn chunk_op(
    i: usize,
    op: &OpInfo,
    shape: &HashMap<usize, Shape>,
    out: &mut BatchPlan,
) -> Result<Shape, String> {
    let name = op.name.as_str();
    let shapes: Vec<Shape> = op
        .operands
        .iter()
        .map(|v| shape.get(v).copied().unwrap_or(Shape::PerQuery(None)))
        .collect();
    let no_form = |why: &str| Err(format!("`{name}` {why}"));
    if name == "mpc.mask_len" {
        return match shapes.as_slice() {
            [Shape::PerQuery(Some(w)), Shape::Gallery(1)] => {
                out.mask_lens.push(i);
                Ok(Shape::Batched(*w))
            }
            _ => no_form("reads no query and gallery of known codes"),
        };
    }
    if name == "mpc.self_dot" {
        return match shapes.as_slice() {
            [Shape::Gallery(w)] => Ok(Shape::Gallery(*w)),
            _ => no_form("of a batch value has no batch form"),
        };
    }
    if is(name, OpClass::Reduction) {
        let group = op.group.unwrap_or(0);
        return match (shapes.as_slice(), group) {
            ([Shape::Batched(w)], 0) => {
                out.per_query.insert(i, *w);
                Ok(Shape::Batched(1))
            }
            ([Shape::Batched(w)], g) if w % g == 0 => Ok(Shape::Batched(w / g)),
            ([Shape::Gallery(w)], g) if g > 0 && w % g == 0 => Ok(Shape::Gallery(w / g)),
            _ => no_form(&format!(
                "groups of {group} do not divide a record's values"
            )),
        };
    }
    if !is(name, OpClass::Elementwise) {
        return no_form("in the chunk stage has no batch form");
    }
    // The width of the batch layout the op runs on: its batch operands', else its gallery ones'.
    let width_of = |want: fn(&Shape) -> Option<i64>| -> Result<Option<i64>, String> {
        let ws: Vec<i64> = shapes.iter().filter_map(want).collect();
        match ws.first() {
            Some(&w) if ws.iter().all(|&x| x == w) => Ok(Some(w)),
            Some(_) => Err(format!("`{name}` mixes values of different widths")),
            None => Ok(None),
        }
    };
    let batched = width_of(|s| match s {
        Shape::Batched(w) => Some(*w),
        _ => None,
    })?;
    let gallery = width_of(|s| match s {
        Shape::Gallery(w) => Some(*w),
        _ => None,
    })?;
    let per_query = shapes.iter().any(|s| matches!(s, Shape::PerQuery(_)));
    if batched.is_none() && !per_query {
        return Ok(Shape::Gallery(gallery.unwrap_or(1)));
    }
    let width = batched
        .or(gallery)
        .ok_or_else(|| format!("`{name}` reads no records"))?;
    if gallery.is_some_and(|g| g != width) {
        return no_form("mixes gallery values and batch values of different widths");
    }
    let like = shapes
        .iter()
        .position(|s| matches!(s, Shape::Batched(_) | Shape::Gallery(_)))
        .expect("a batched or gallery operand");
    for (k, s) in shapes.iter().enumerate() {
        match s {
            Shape::Gallery(w) => out.converts.push((i, k, Convert::Repeat(*w))),
            Shape::PerQuery(Some(e)) if *e == 1 || *e == width => {
                out.converts.push((i, k, Convert::Spread { width, like }))
            }
            Shape::PerQuery(_) => {
                return no_form("reads a per-query value of unknown or other width")
            }
            Shape::Batched(_) => {}
        }
    }
    Ok(Shape::Batched(width))
}

/// The shape of finish-stage op `i`'s result, with its batch form recorded in `out`.
fn finish_op(
    i: usize,
    op: &OpInfo,
    shape: &HashMap<usize, Shape>,
    out: &mut BatchPlan,
) -> Result<Shape, String> {
    let name = op.name.as_str();
    let batched: Vec<(usize, i64)> = op
        .operands
        .iter()
        .enumerate()
        .filter_map(|(k, v)| match shape.get(v) {
            Some(Shape::Batched(w)) => Some((k, *w)),
            _ => None,
        })
        .collect();
    if is(name, OpClass::Opening) && batched.len() == op.operands.len() && !batched.is_empty() {
        out.batch_finish.push(i);
        return Ok(Shape::Batched(batched[0].1));
    }
    for (k, w) in batched {
        out.converts.push((i, k, Convert::Pick(w)));
    }
    Ok(Shape::PerQuery(None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::passes::mpc_tile::plan::plan;

    fn op(name: &str, operands: &[usize], result: Option<usize>) -> OpInfo {
        OpInfo {
            name: format!("mpc.{name}"),
            operands: operands.to_vec(),
            result,
            group: None,
            rotations: None,
        }
    }

    /// `iris_ids.irs` (31 rotations), query = 0, gallery = 1; a reduction over all records with
    /// `group = 0`.
    fn ids_body(group: i64) -> Vec<OpInfo> {
        vec![
            op("load_query", &[0], Some(10)),
            OpInfo {
                rotations: Some(31),
                ..op("rotate", &[10], Some(11))
            },
            op("masked_dot", &[11, 1], Some(12)),
            op("reshare", &[12], Some(13)),
            op("mask_len", &[11, 1], Some(14)),
            op("sub_threshold", &[13, 14], Some(15)),
            op("msb", &[15], Some(16)),
            OpInfo {
                group: Some(group),
                ..op("or_tree", &[16], Some(17))
            },
            op("open", &[17], Some(18)),
            op("output", &[0, 18, 1], None),
            op("emit", &[0], None),
        ]
    }

    #[test]
    fn ids_batch_with_their_mask_lengths_and_openings() {
        let body = ids_body(31);
        let p = plan(&body, &[1]).unwrap();
        let b = plan_batch(&body, &p, &[1]).unwrap();
        assert_eq!(b.mask_lens, vec![4]);
        assert!(b.per_query.is_empty());
        assert_eq!(b.batch_finish, vec![8]);
        assert_eq!(b.converts, vec![(9, 1, Convert::Pick(1))]);
        assert_eq!(b.crossing_width[&17], 1);
    }

    #[test]
    fn a_reduction_over_all_records_reduces_each_query_apart() {
        let body = ids_body(0);
        let p = plan(&body, &[1]).unwrap();
        let b = plan_batch(&body, &p, &[1]).unwrap();
        assert_eq!(b.per_query.get(&7), Some(&31));
    }

    #[test]
    fn per_query_and_gallery_values_are_brought_into_the_layout() {
        // tier (a bit per query) muxes two batch values; a gallery-only norm times a query norm.
        let mut body = ids_body(31);
        body.insert(2, op("load_query", &[0], Some(20)));
        body.insert(8, op("mux", &[20, 16, 16], Some(21)));
        body[9].operands = vec![21];
        let p = plan(&body, &[1]).unwrap();
        let b = plan_batch(&body, &p, &[1]).unwrap();
        assert!(b
            .converts
            .contains(&(8, 0, Convert::Spread { width: 31, like: 1 })));
        let body = vec![
            op("load_query", &[0], Some(10)),
            op("self_dot", &[10], Some(11)),
            op("masked_dot", &[10, 1], Some(12)),
            op("self_dot", &[1], Some(13)),
            op("mul", &[13, 11], Some(14)),
            op("lin", &[14, 12], Some(15)),
            op("msb", &[15], Some(16)),
            op("open", &[16], Some(17)),
            op("output", &[0, 17, 1], None),
        ];
        let p = plan(&body, &[1]).unwrap();
        let b = plan_batch(&body, &p, &[1]).unwrap();
        assert_eq!(
            b.converts[..2],
            [
                (4, 0, Convert::Repeat(1)),
                (4, 1, Convert::Spread { width: 1, like: 0 })
            ]
        );
    }

    #[test]
    fn bodies_without_a_batch_form_say_why() {
        // Unknown codes per query (no rotation count).
        let mut body = ids_body(31);
        body[1].rotations = None;
        let p = plan(&body, &[1]).unwrap();
        assert!(plan_batch(&body, &p, &[1])
            .unwrap_err()
            .contains("codes per query"));
        // A group that does not divide a record's rotations.
        let body = ids_body(4);
        let p = plan(&body, &[1]).unwrap();
        assert!(plan_batch(&body, &p, &[1])
            .unwrap_err()
            .contains("groups of 4 do not divide"));
    }
}
