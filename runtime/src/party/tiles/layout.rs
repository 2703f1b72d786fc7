//! The batch layout of a batched chunk stage: the values of the n queries of a batch held as
//! one vector, record-major, `[record][query][width]` (query j's `width` elements of record r at
//! `(r·n + j)·width ..`). It is the layout of the batch dot product's own output
//! (`out[r][j·c + code]`), so the comparison ops run once over it, one op per round for the
//! whole batch; elementwise ops do not care about the layout. What does care is here:
//!
//! - [`pick`]: query j's part of a batch value, `[record][width]` (what the per-query value
//!   would be), for the per-query outputs;
//! - [`per_query_major`]: the batch value reordered query by query, so that a reduction over
//!   all of a query's elements (`group = 0`) becomes a grouped reduction of `len / n` elements;
//! - [`spread`]: per-query values of the query stage (one element, or `width`) broadcast to the
//!   batch layout of a value `like`;
//! - [`repeat`]: a value of the gallery alone (`[record][width]`, the same for every query)
//!   repeated for every query of the batch.
//!
//! All of them are local permutations (no messages); [`gather`] applies one to any vector value.

use crate::error::RuntimeError;
use crate::ops::ctx::sched;
use crate::ops::value::Value;
use crate::share::binary::BitShares;
use crate::share::fp::Rep3Fp;
use crate::share::rep3::Rep3Vec;
use crate::share::RingVecExt;

/// Checks that a batch value of `len` elements splits into `n` queries of `width` per record.
fn check(len: usize, n: usize, width: usize, op: &str) -> Result<usize, RuntimeError> {
    let row = n.checked_mul(width).filter(|&r| r > 0);
    match row {
        Some(row) if len.is_multiple_of(row) => Ok(len / row),
        _ => Err(sched(format!(
            "{op}: {len} values are not records of {n} queries x {width}"
        ))),
    }
}

/// The positions of query `j`'s elements in a batch value of `len` elements, record-major.
pub(crate) fn pick_index(
    len: usize,
    n: usize,
    width: usize,
    j: usize,
) -> Result<Vec<usize>, RuntimeError> {
    let records = check(len, n, width, "batch_pick")?;
    if j >= n {
        return Err(sched(format!("batch_pick: query {j} of a batch of {n}")));
    }
    let mut index = Vec::with_capacity(records * width);
    for r in 0..records {
        let at = (r * n + j) * width;
        index.extend(at..at + width);
    }
    Ok(index)
}

/// The positions of a batch value's elements query by query: query 0's (record-major), then
/// query 1's, ...
pub(crate) fn query_major_index(
    len: usize,
    n: usize,
    width: usize,
) -> Result<Vec<usize>, RuntimeError> {
    check(len, n, width, "per-query reduction")?;
    let mut index = Vec::with_capacity(len);
    for j in 0..n {
        index.extend(pick_index(len, n, width, j)?);
    }
    Ok(index)
}

/// The number of elements of `v` (vector values only).
pub(crate) fn len_of(v: &Value) -> Result<usize, RuntimeError> {
    Ok(match v {
        Value::Bits(b) => b.len,
        Value::Replicated { own, .. } | Value::Additive(own) => own.len(),
        Value::Public(p) => p.len(),
        Value::Clear(Some(c)) => c.len(),
        Value::ClearInts(Some(c)) => c.len(),
        Value::Clear(None) | Value::ClearInts(None) => 0,
        Value::AdditiveP(a) => a.len(),
        Value::ReplicatedP(x) => x.own.len(),
        Value::ReplicatedMod { x, .. } => x.own.len(),
        other => return Err(sched(format!("the batch layout holds no {}", other.kind()))),
    })
}

/// `out[i] = v[index[i]]` for any vector value (opened values stay unknown where they are).
pub(crate) fn gather(v: &Value, index: &[usize]) -> Result<Value, RuntimeError> {
    let len = len_of(v)?;
    if let Some(&bad) = index.iter().find(|&&i| i >= len) {
        return Err(sched(format!(
            "batch layout: element {bad} of a value of {len}"
        )));
    }
    let pick = |x: &[u16]| index.iter().map(|&i| x[i]).collect::<Vec<u16>>();
    let pick64 = |x: &[u64]| index.iter().map(|&i| x[i]).collect::<Vec<u64>>();
    Ok(match v {
        Value::Bits(b) => Value::Bits(b.gather(index)),
        Value::Replicated { own, prev } => Value::Replicated {
            own: own.gather(index),
            prev: prev.gather(index),
        },
        Value::Additive(a) => Value::Additive(a.gather(index)),
        Value::Public(p) => Value::Public(pick64(p)),
        Value::Clear(c) => Value::Clear(c.as_ref().map(|c| index.iter().map(|&i| c[i]).collect())),
        Value::ClearInts(c) => Value::ClearInts(c.as_ref().map(|c| pick64(c))),
        Value::AdditiveP(a) => Value::AdditiveP(pick(a)),
        Value::ReplicatedP(x) => Value::ReplicatedP(Rep3Fp {
            own: pick(&x.own),
            prev: pick(&x.prev),
        }),
        Value::ReplicatedMod { m, x } => Value::ReplicatedMod {
            m: *m,
            x: Rep3Vec {
                own: pick64(&x.own),
                prev: pick64(&x.prev),
            },
        },
        other => return Err(sched(format!("the batch layout holds no {}", other.kind()))),
    })
}

/// Query `j`'s part (`[record][width]`) of a batch value of `n` queries.
pub(crate) fn pick(v: &Value, n: usize, width: usize, j: usize) -> Result<Value, RuntimeError> {
    gather(v, &pick_index(len_of(v)?, n, width, j)?)
}

/// A batch value reordered query by query (see [`query_major_index`]).
pub(crate) fn per_query_major(v: &Value, n: usize, width: usize) -> Result<Value, RuntimeError> {
    gather(v, &query_major_index(len_of(v)?, n, width)?)
}

/// `parts` one after the other (of one kind).
pub(crate) fn concat(parts: &[&Value]) -> Result<Value, RuntimeError> {
    let first = parts
        .first()
        .ok_or_else(|| sched("batch layout: no values to concatenate"))?;
    if let Value::Bits(_) = first {
        let mut bits = Vec::with_capacity(parts.len());
        for p in parts {
            let Value::Bits(b) = p else {
                return Err(sched("batch layout: values of different kinds"));
            };
            bits.push(b);
        }
        return Ok(Value::Bits(BitShares::concat(&bits)));
    }
    let mut acc = super::copy_appendable(first)?;
    for p in &parts[1..] {
        super::append_value(&mut acc, p)?;
    }
    Ok(acc)
}

/// The per-query values `parts` (query j's: 1 element, broadcast, or `width` elements) in the
/// batch layout of `like_len` elements: element `(r, j, c)` is `parts[j][c]` (or `parts[j][0]`).
pub(crate) fn spread(
    parts: &[&Value],
    like_len: usize,
    width: usize,
) -> Result<Value, RuntimeError> {
    let n = parts.len();
    check(like_len, n, width, "batch_spread")?;
    let lens = parts
        .iter()
        .map(|p| len_of(p))
        .collect::<Result<Vec<_>, _>>()?;
    let each = lens[0];
    if lens.iter().any(|&l| l != each) || !(each == 1 || each == width) {
        return Err(sched(format!(
            "batch_spread: per-query values of {lens:?} elements over {width} per record"
        )));
    }
    let all = concat(parts)?;
    let index: Vec<usize> = (0..like_len)
        .map(|i| {
            let j = (i / width) % n;
            j * each + if each == 1 { 0 } else { i % width }
        })
        .collect();
    gather(&all, &index)
}

/// A value of the gallery alone, `[record][width]`, repeated for each of `n` queries:
/// `[record][query][width]`.
pub(crate) fn repeat(v: &Value, n: usize, width: usize) -> Result<Value, RuntimeError> {
    let len = len_of(v)?;
    let records = check(len, 1, width, "batch_repeat")?;
    let mut index = Vec::with_capacity(len * n);
    for r in 0..records {
        for _ in 0..n {
            index.extend(r * width..(r + 1) * width);
        }
    }
    gather(v, &index)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn public(v: &Value) -> Vec<u64> {
        match v {
            Value::Public(p) => p.clone(),
            _ => panic!("not public"),
        }
    }

    /// The batch layout built by hand from per-query values: `[r][j][c]`.
    fn interleave(per_query: &[Vec<u64>], width: usize) -> Vec<u64> {
        let records = per_query[0].len() / width;
        let mut out = Vec::new();
        for r in 0..records {
            for q in per_query {
                out.extend_from_slice(&q[r * width..(r + 1) * width]);
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        #[test]
        fn pick_and_query_major_undo_the_interleaving(
            n in 1usize..12, width in 1usize..5, records in 0usize..7, seed in any::<u64>()
        ) {
            let per_query: Vec<Vec<u64>> = (0..n)
                .map(|j| (0..records * width).map(|i| seed ^ ((j * 1000 + i) as u64)).collect())
                .collect();
            let batch = Value::Public(interleave(&per_query, width));
            for (j, want) in per_query.iter().enumerate() {
                prop_assert_eq!(&public(&pick(&batch, n, width, j).unwrap()), want);
            }
            let major = public(&per_query_major(&batch, n, width).unwrap());
            prop_assert_eq!(major, per_query.concat());
        }

        #[test]
        fn spread_and_repeat_match_per_query_broadcasts(
            n in 1usize..12, width in 1usize..5, records in 0usize..7, seed in any::<u64>()
        ) {
            let scalars: Vec<Value> = (0..n).map(|j| Value::Public(vec![seed ^ j as u64])).collect();
            let refs: Vec<&Value> = scalars.iter().collect();
            let like = records * n * width;
            let spread_out = spread(&refs, like, width).unwrap();
            let want: Vec<Vec<u64>> = (0..n).map(|j| vec![seed ^ j as u64; records * width]).collect();
            prop_assert_eq!(public(&spread_out), interleave(&want, width));
            let gallery: Vec<u64> = (0..records * width).map(|i| seed.wrapping_add(i as u64)).collect();
            let rep = repeat(&Value::Public(gallery.clone()), n, width).unwrap();
            prop_assert_eq!(public(&rep), interleave(&vec![gallery; n], width));
        }
    }

    #[test]
    fn shapes_that_do_not_split_are_errors() {
        let v = Value::Public(vec![0; 10]);
        assert!(pick(&v, 3, 1, 0).is_err());
        assert!(pick(&v, 2, 5, 2).is_err());
        assert!(per_query_major(&v, 0, 1).is_err());
        assert!(spread(&[&Value::Public(vec![1, 2])], 4, 1).is_err());
    }
}
