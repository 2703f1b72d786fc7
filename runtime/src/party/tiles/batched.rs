//! The ops of a batched chunk stage that see the batch layout ([`layout`](super::layout)):
//! the mask lengths of every query of the batch, per-query values brought into the layout,
//! a query's part picked out of it, and reductions over all of each query's elements. Each
//! runs once for the batch: a reduction's rounds are one query's.

use crate::error::RuntimeError;
use crate::ops::ctx::{get, sched, Ctx};
use crate::ops::mask_lengths::{mask_lengths, mask_lengths_into};
use crate::ops::placement::mask_lengths_by_thirds;
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
fn per_query(slots: &[Option<Value>], base: u32, n: usize) -> Result<Vec<&Value>, RuntimeError> {
    (0..n as u32).map(|j| get(slots, base + j)).collect()
}

/// `mask_len` of each query of the batch (slots `codes_base + j`) with `gallery`, in the batch
/// layout `[record][query][code]`. That layout is the record-major order of the mask lengths of
/// the batch's codes taken as one query (query j's code c is code `j·codes + c`), so the
/// popcount pass runs once over the batch's masks and writes the layout directly: no per-query
/// results and no gather into the layout.
pub fn batch_mask_len(
    cx: &mut Ctx<'_>,
    slots: &[Option<Value>],
    codes_base: u32,
    n: usize,
    gallery: &Value,
    holders: usize,
) -> Result<Value, RuntimeError> {
    let queries = per_query(slots, codes_base, n)?;
    let differ = |what: &str| {
        sched(format!(
            "batch_mask_len: the queries of a batch differ in {what}"
        ))
    };
    // Each query's (code count, mask words), checked against the gallery's code length.
    let (count, words, g_masks, g_count) = match gallery {
        Value::Codes(g) => {
            let mut count = None;
            for q in &queries {
                let Value::Codes(q) = q else {
                    return Err(differ("sharing"));
                };
                if q.bits != g.bits {
                    return Err(sched(
                        "batch_mask_len: query and gallery codes differ in length",
                    ));
                }
                if *count.get_or_insert(q.count) != q.count {
                    return Err(differ("code count"));
                }
            }
            (count.unwrap_or(0), g.words_per_code(), &g.masks, g.count)
        }
        Value::Shamir(g) => {
            let mut count = None;
            for q in &queries {
                let Value::Shamir(q) = q else {
                    return Err(differ("sharing"));
                };
                if q.len != g.len {
                    return Err(sched(format!(
                        "mask_len: codes of {} and {} entries",
                        q.len, g.len
                    )));
                }
                if *count.get_or_insert(q.count) != q.count {
                    return Err(differ("code count"));
                }
            }
            (
                count.unwrap_or(0),
                g.mask_words_per_code(),
                &g.masks,
                g.count,
            )
        }
        other => {
            return Err(sched(format!(
                "batch_mask_len: gallery holds {}",
                other.kind()
            )))
        }
    };
    let mut masks = Vec::with_capacity(n * count * words);
    for q in &queries {
        match q {
            Value::Codes(q) => masks.extend_from_slice(&q.masks),
            Value::Shamir(q) => masks.extend_from_slice(&q.masks),
            _ => unreachable!("checked above"),
        }
    }
    if masks.len() != n * count * words || g_masks.len() < g_count * words {
        return Err(sched("batch_mask_len: masks are not their codes' words"));
    }
    // On the party's GPU when it has one: the scan's public half at the GPU's pace.
    let (gpu, threads) = (cx.gpu.clone(), cx.threads);
    if holders == 0 {
        return Ok(Value::Public(match &gpu {
            Some(gpu) => gpu.mask_lengths(&masks, n * count, g_masks, g_count, words, threads)?,
            None => mask_lengths(&masks, n * count, g_masks, g_count, words),
        }));
    }
    let compute = |g: &[u64], records: usize, out: &mut [u32]| {
        match &gpu {
            Some(gpu) => {
                let lengths = gpu.mask_lengths(&masks, n * count, g, records, words, threads)?;
                for (o, l) in out.iter_mut().zip(lengths) {
                    *o = l as u32;
                }
            }
            None => mask_lengths_into(&masks, n * count, g, records, words, out),
        }
        Ok(())
    };
    // Only the record thirds whose threshold this party's components add.
    let thirds = mask_lengths_by_thirds(
        cx.party(),
        holders,
        n * count,
        g_masks,
        g_count,
        words,
        compute,
    )?;
    Ok(Value::PublicThirds(std::sync::Arc::new(thirds)))
}

/// Per-query values of `records` records each (`[record][width]`, the same width) in the batch
/// layout `[record][query][width]`: the reference the batched ops are tested against.
#[cfg(test)]
pub(crate) fn interleave(parts: &[&Value], records: usize) -> Result<Value, RuntimeError> {
    let n = parts.len();
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
