//! The dot products of a batch of queries with records of the gallery in one kernel call: the
//! kernel ([`DotKernel`]), the batch as one query ([`concat_queries`]), and the call and the
//! split of its record-major result per query ([`batch_dot_local`]).

use std::ops::Range;
use std::sync::Arc;

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::kernels::nest::Nests;
use crate::kernels::run::{masked_dot_records, ErasedKernel};
use crate::ops::ctx::sched;
use crate::ops::shamir::{shamir_dot_records, shamir_dot_records_gpu};
use crate::ops::shamir_codes::ShamirCodes;
use crate::ops::value::Value;
use crate::share::Codes;
use crate::share::RingVecExt;

use super::Coded;

/// The kernel of a batch dot product, resolved from the schedule's table once per call.
#[derive(Debug, Clone)]
pub(crate) enum DotKernel {
    /// Replicated codes: a generated two-sided (eq. 6) kernel of the shares' storage width.
    Masked(ErasedKernel),
    /// Shamir codes: a generated one-sided 16-bit kernel's nests, or `None` for the scalar
    /// reference.
    Shamir(Option<Nests>),
    /// The party's GPU ([`crate::gpu`]): replicated codes in 16- or 32-bit storage, or
    /// Galois-ring Shamir codes, with the gallery chunk resident there.
    Gpu(Arc<crate::gpu::Session>),
}

impl DotKernel {
    /// Whether both run the same code.
    pub(super) fn same(&self, other: &DotKernel) -> bool {
        match (self, other) {
            (DotKernel::Masked(a), DotKernel::Masked(b)) => a.0.first == b.0.first,
            (DotKernel::Shamir(a), DotKernel::Shamir(b)) => {
                a.map(|k| k.first) == b.map(|k| k.first)
            }
            (DotKernel::Gpu(a), DotKernel::Gpu(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// One query of all the queries' codes, in order: the batch the kernel reads. The queries must
/// be of one kind with the same number of codes of the same length (and storage width or
/// sharing), else a schedule error. A single query is itself.
pub(crate) fn concat_queries(queries: &[Coded]) -> Result<Coded, RuntimeError> {
    let first = queries
        .first()
        .ok_or_else(|| sched("batch_dot: a batch of no queries"))?;
    if queries.len() == 1 {
        return Ok(first.clone());
    }
    let n = queries.len();
    let differ = |what: &str| {
        sched(format!(
            "batch_dot: the queries of a batch differ in {what}"
        ))
    };
    match first {
        Coded::Rep3(f) => {
            let mut qs = Vec::with_capacity(n);
            for q in queries {
                let Coded::Rep3(q) = q else {
                    return Err(differ("sharing"));
                };
                if q.count != f.count {
                    return Err(differ("code count"));
                }
                if q.bits != f.bits {
                    return Err(differ("code length"));
                }
                if q.a.word_bytes() != f.a.word_bytes() || q.b.word_bytes() != f.a.word_bytes() {
                    return Err(differ("storage width"));
                }
                qs.push(q.as_ref());
            }
            let cat = |side: fn(&Codes) -> &RingVec| {
                let mut out = side(f).clone();
                for q in &qs[1..] {
                    out.extend_with(side(q));
                }
                out
            };
            Ok(Coded::Rep3(Arc::new(Codes {
                count: f.count * n,
                bits: f.bits,
                ids: qs.iter().flat_map(|q| q.ids.iter().copied()).collect(),
                masks: qs.iter().flat_map(|q| q.masks.iter().copied()).collect(),
                a: cat(|c| &c.a),
                b: cat(|c| &c.b),
            })))
        }
        Coded::Shamir(f) => {
            let mut qs = Vec::with_capacity(n);
            for q in queries {
                let Coded::Shamir(q) = q else {
                    return Err(differ("sharing"));
                };
                if q.kind != f.kind || q.side != f.side {
                    return Err(differ("sharing"));
                }
                if q.count != f.count {
                    return Err(differ("code count"));
                }
                if q.len != f.len {
                    return Err(differ("code length"));
                }
                qs.push(q.as_ref());
            }
            Ok(Coded::Shamir(Arc::new(ShamirCodes {
                kind: f.kind,
                side: f.side,
                count: f.count * n,
                len: f.len,
                ids: qs.iter().flat_map(|q| q.ids.iter().copied()).collect(),
                masks: qs.iter().flat_map(|q| q.masks.iter().copied()).collect(),
                words: qs
                    .iter()
                    .flat_map(|q| q.words.iter().copied())
                    .collect::<Vec<u16>>()
                    .into(),
            })))
        }
    }
}

/// Record-major `[r][j·c + code]` (n·c values per record) to the n queries' `[r][code]`.
fn split<T: Copy>(out: &[T], n: usize, c: usize) -> Vec<Vec<T>> {
    let row = n * c;
    let records = out.len().checked_div(row).unwrap_or(0);
    let mut parts: Vec<Vec<T>> = (0..n).map(|_| Vec::with_capacity(records * c)).collect();
    if row == 0 {
        return parts;
    }
    for r in out.chunks_exact(row) {
        for (j, p) in parts.iter_mut().enumerate() {
            p.extend_from_slice(&r[j * c..(j + 1) * c]);
        }
    }
    parts
}

/// [`split`] of a dot product's value (additive shares over Z_2^k or mod p).
fn split_value(v: Value, n: usize, c: usize) -> Result<Vec<Value>, RuntimeError> {
    if n == 1 {
        return Ok(vec![v]);
    }
    let add = |parts: Vec<RingVec>| parts.into_iter().map(Value::Additive).collect();
    Ok(match v {
        Value::Additive(RingVec::U16(x)) => {
            add(split(&x, n, c).into_iter().map(RingVec::U16).collect())
        }
        Value::Additive(RingVec::U32(x)) => {
            add(split(&x, n, c).into_iter().map(RingVec::U32).collect())
        }
        Value::Additive(RingVec::U64(x)) => {
            add(split(&x, n, c).into_iter().map(RingVec::U64).collect())
        }
        Value::AdditiveP(x) => split(&x, n, c).into_iter().map(Value::AdditiveP).collect(),
        other => {
            return Err(sched(format!(
                "batch_dot: a dot product gave {}",
                other.kind()
            )))
        }
    })
}

/// The dot products of each of the `n` queries whose codes `batch` concatenates (see
/// [`concat_queries`]) with records `records` of `gallery`, computed with one kernel call over
/// the whole batch and split per query: value j is what the single-query op (`masked_dot` for
/// [`DotKernel::Masked`], `shamir_dot` for [`DotKernel::Shamir`], with the same kernel) gives
/// for query j against those records; [`DotKernel::Gpu`] computes the same words on the GPU. `joined`: not split, the kernel's record-major output
/// `[r][j·c + code]` as one value (the batch layout of a batched chunk stage). Only reads its
/// operands, so it runs on any thread.
///
/// # Safety
/// A [`DotKernel::Masked`] kernel must be a generated masked-dot kernel for the storage width
/// and code length of these shares (as `masked_dot` requires of its table), a
/// [`DotKernel::Shamir`] one a generated one-sided kernel for this sharing and length.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn batch_dot_local(
    party: usize,
    batch: &Coded,
    n: usize,
    gallery: &Coded,
    records: Range<usize>,
    kernel: DotKernel,
    threads: usize,
    joined: bool,
) -> Result<Vec<Value>, RuntimeError> {
    if n == 0 || !batch.count().is_multiple_of(n) {
        return Err(sched(format!(
            "batch_dot: {} codes for {n} queries",
            batch.count()
        )));
    }
    let c = batch.count() / n;
    let out = match (batch, gallery, kernel) {
        (Coded::Rep3(q), Coded::Rep3(g), DotKernel::Masked(k)) => {
            // SAFETY: the caller's contract.
            Value::Additive(unsafe { masked_dot_records(q, g, records, k, threads) }?)
        }
        (Coded::Shamir(q), Coded::Shamir(g), DotKernel::Shamir(k)) => {
            // SAFETY: the caller's contract.
            unsafe { shamir_dot_records(party, q, g, records, k, threads) }?
        }
        (Coded::Rep3(q), Coded::Rep3(g), DotKernel::Gpu(gpu)) => {
            Value::Additive(gpu.masked_dot_records(q, g, records)?)
        }
        (Coded::Shamir(q), Coded::Shamir(g), DotKernel::Gpu(gpu)) => {
            shamir_dot_records_gpu(party, &gpu, q, g, records)?
        }
        _ => {
            return Err(sched(
                "batch_dot: queries, gallery and kernel are not of one sharing",
            ))
        }
    };
    if joined {
        return Ok(vec![out]);
    }
    split_value(out, n, c)
}
