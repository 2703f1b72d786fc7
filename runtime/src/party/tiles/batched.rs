//! The ops of a batched chunk stage that see the batch layout ([`layout`](super::layout)):
//! the mask lengths of every query of the batch, per-query values brought into the layout,
//! a query's part picked out of it, and reductions over all of each query's elements. Each
//! runs once for the batch: a reduction's rounds are one query's.

use crate::error::RuntimeError;
use crate::ops::ctx::{get, sched, Ctx};
use crate::ops::value::Value;
use crate::ops::{arith, logic, rep3};

use super::layout;

/// A reduction over all of a query's elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduction {
    Or,
    And,
    Sum,
}

impl Reduction {
    fn run(self, cx: &mut Ctx<'_>, v: &Value, group: u64) -> Result<Value, RuntimeError> {
        match self {
            Reduction::Or => rep3::or_groups(cx, v, group),
            Reduction::And => logic::and_groups(cx, v, group),
            Reduction::Sum => arith::sum_groups(cx, v, group),
        }
    }
}

/// A batch size from the ABI: at least 1.
pub fn batch_size(n: i64, op: &str) -> Result<usize, RuntimeError> {
    usize::try_from(n)
        .ok()
        .filter(|&n| n > 0)
        .ok_or_else(|| sched(format!("{op}: a batch of {n} queries")))
}

/// A width from the ABI: at least 1.
pub fn width(w: i64, op: &str) -> Result<usize, RuntimeError> {
    usize::try_from(w)
        .ok()
        .filter(|&w| w > 0)
        .ok_or_else(|| sched(format!("{op}: width {w}")))
}

/// The values in slots `base .. base + n`.
fn per_query<'s>(
    slots: &'s [Option<Value>],
    base: u32,
    n: usize,
) -> Result<Vec<&'s Value>, RuntimeError> {
    (0..n as u32).map(|j| get(slots, base + j)).collect()
}

/// `mask_len` of each query of the batch (slots `codes_base + j`) with `gallery`, in the batch
/// layout `[record][query][code]`.
pub fn batch_mask_len(
    cx: &mut Ctx<'_>,
    slots: &[Option<Value>],
    codes_base: u32,
    n: usize,
    gallery: &Value,
) -> Result<Value, RuntimeError> {
    let records = match gallery {
        Value::Codes(c) => c.count,
        Value::Shamir(s) => s.count,
        other => {
            return Err(sched(format!(
                "batch_mask_len: gallery holds {}",
                other.kind()
            )))
        }
    };
    let parts = per_query(slots, codes_base, n)?
        .into_iter()
        .map(|q| rep3::mask_len(cx, q, gallery))
        .collect::<Result<Vec<Value>, _>>()?;
    let refs: Vec<&Value> = parts.iter().collect();
    interleave(&refs, records)
}

/// Per-query values of `records` records each (`[record][width]`, the same width) in the batch
/// layout `[record][query][width]`.
pub fn interleave(parts: &[&Value], records: usize) -> Result<Value, RuntimeError> {
    let n = parts.len();
    // Public values (the mask lengths) are copied run by run into one buffer: no concatenated
    // copy and no index of every element, which at a batch of 8 cost as much as the mask
    // lengths themselves.
    let public: Option<Vec<&[u64]>> = parts
        .iter()
        .map(|p| match p {
            Value::Public(v) => Some(v.as_slice()),
            _ => None,
        })
        .collect();
    if let Some(public) = public.filter(|_| records > 0 && n > 0) {
        let per = public[0].len();
        if public.iter().any(|p| p.len() != per) || !per.is_multiple_of(records) {
            return Err(sched(format!(
                "batch layout: {n} queries of unequal lengths or not of {records} records"
            )));
        }
        let w = per / records;
        let mut out = Vec::with_capacity(per * n);
        for r in 0..records {
            for part in &public {
                out.extend_from_slice(&part[r * w..(r + 1) * w]);
            }
        }
        return Ok(Value::Public(out));
    }
    let all = layout::concat(parts)?;
    let len = layout::len_of(&all)?;
    if records == 0 {
        return Ok(all);
    }
    let per = len / n.max(1);
    if n == 0 || len % n != 0 || per % records != 0 {
        return Err(sched(format!(
            "batch layout: {len} values are not {n} queries of {records} records"
        )));
    }
    let w = per / records;
    let mut index = Vec::with_capacity(len);
    for r in 0..records {
        for j in 0..n {
            let at = j * per + r * w;
            index.extend(at..at + w);
        }
    }
    layout::gather(&all, &index)
}

/// The per-query values in slots `src_base + j` broadcast into the batch layout of `like`.
pub fn batch_spread(
    slots: &[Option<Value>],
    src_base: u32,
    n: usize,
    like: &Value,
    width: usize,
) -> Result<Value, RuntimeError> {
    let parts = per_query(slots, src_base, n)?;
    layout::spread(&parts, layout::len_of(like)?, width)
}

/// The reduction `op` over all of each query's elements of the batch value `v` (`width` per
/// record and query): one result per query, in one reduction for the whole batch.
pub fn per_query_reduce(
    cx: &mut Ctx<'_>,
    v: &Value,
    n: usize,
    width: usize,
    op: Reduction,
) -> Result<Value, RuntimeError> {
    let len = layout::len_of(v)?;
    if len == 0 {
        // Nothing per query: each query's reduction of nothing, as the per-query op gives it.
        let parts = (0..n)
            .map(|_| op.run(cx, v, 0))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&Value> = parts.iter().collect();
        return layout::concat(&refs);
    }
    let major = layout::per_query_major(v, n, width)?;
    op.run(cx, &major, (len / n) as u64)
}
