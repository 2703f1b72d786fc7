//! The tiled gallery scan: record chunks, query batches, and the pipelined dot product.
//!
//! Without tiling the schedule runs every op over the whole gallery, once per query: the dot
//! product of one query streams the whole gallery from memory, and its result (records × codes
//! values) lives until the comparison of that query ends. A tiled schedule instead
//!
//! - takes the queries in **batches** of B, and computes the dot products of a whole batch with
//!   **one kernel call** ([`batch_dot_local`]): the B queries' codes are concatenated into one
//!   query of B·c codes, so the generated kernels (GEMM-blocked over codes × records) stream each
//!   gallery record from memory once per batch instead of once per query; the record-major
//!   result `out[r][j·c + code]` is then split into the B queries' `[r][code]` values, each
//!   exactly what the single-query op (`masked_dot`, `shamir_dot`) gives for that query;
//! - scans the gallery in **record chunks** of `--record-chunk` records ([`chunk_count`],
//!   [`chunk_range`]): every op after the dot product works on one chunk's values at a time
//!   ([`view`] gives a chunk of the gallery itself, e.g. for the mask lengths; Shamir shares are
//!   not copied, replicated ones only where the chunk stage reads them), and [`append_value`]
//!   collects per-chunk results record-major where the schedule needs a whole-gallery value;
//!   the memory of one batch is bounded by the chunk, not the gallery;
//! - **pipelines** the two phases: when the dot product of chunk i of a batch is done, the one
//!   of chunk i + 1 starts on a background thread ([`Pipeline`]) while the main thread runs the
//!   comparison rounds of chunk i (network-bound), so the dot products hide behind the
//!   comparison. The job owns `Arc` clones of its operands; the next call for the same result
//!   slots joins it if it was started for the same chunk of the same batch (same operands, by
//!   address, kept alive by the job so an address cannot be reused) and else discards it.
//!
//! Everything here is local: the parties only need the same `--record-chunk` so that their
//! chunks, and so the messages of the comparison rounds, agree.
//!
//! The parts, one concept each: [`chunks`] (the gallery in record chunks),
//! [`batch_dot`](mod@batch_dot) (one kernel call for a batch of queries), [`pipeline`] (the next
//! chunk's dot products in the background), [`append`] (per-chunk results collected); here,
//! the ops the ABI runs through the executor.

mod append;
mod batch_dot;
pub(crate) mod batched;
mod chunks;
pub(crate) mod layout;
mod pipeline;
#[cfg(test)]
mod tests;

use crate::contract::BatchDotKind;
use crate::error::RuntimeError;
use crate::kernels::KernelTable;

use crate::kernels::run::{masked_kernel, shamir_kernel};
use crate::ops::ctx::{get, sched, Ctx, MAX_SLOTS};
use crate::ops::value::Value;

pub(crate) use append::{append_value, copy_appendable};
pub(crate) use batch_dot::{batch_dot_local, concat_queries, DotKernel};
pub(crate) use chunks::{chunk_count, chunk_range, view, Coded};
#[cfg(test)]
pub(crate) use pipeline::batch_dot;
pub(crate) use pipeline::{batch_dot_as, Pipeline};

/// The number of record chunks of `gallery` (codes of either sharing) under the context's
/// record chunk.
pub fn chunk_count_of(cx: &Ctx<'_>, gallery: &Value) -> Result<i64, RuntimeError> {
    let g = Coded::of(gallery, "chunk_count")?;
    Ok(chunk_count(g.count(), cx.record_chunk) as i64)
}

/// Chunk `chunk` of `gallery` ([`view`]), replicated shares copied only `with_shares`.
pub fn gallery_view(
    cx: &mut Ctx<'_>,
    gallery: &Value,
    chunk: i64,
    with_shares: bool,
) -> Result<Value, RuntimeError> {
    let g = Coded::of(gallery, "gallery_view")?;
    let records = chunk_range(g.count(), cx.record_chunk, chunk)?;
    Ok(view(&g, records, with_shares))
}

/// For the slots `dst_base + j` (j < n, their codes in `slots[codes_base + j]`): the dot
/// products of those codes with chunk `chunk` of the gallery in slot `gallery`, as
/// `masked_dot` or `shamir_dot` (`kind`) computes them with `table`, in one kernel call for the
/// batch ([`batch_dot`](fn@batch_dot)), with their slots; starts the next chunk's in the
/// background (`scan`). The wall time of a background job whose result is taken goes to
/// `cx.overlapped`. `n` = 0 gives nothing. `joined`: the batch's one value in the batch layout
/// `[record][query][code]` (the kernel's own output, not split), in slot `dst_base`.
///
/// # Safety
/// `table` as `masked_dot` (kind masked) or `shamir_dot` (kind Shamir) require it.
#[allow(clippy::too_many_arguments)]
pub unsafe fn batch_dot_slots(
    cx: &mut Ctx<'_>,
    scan: &mut Pipeline,
    slots: &[Option<Value>],
    dst_base: u32,
    codes_base: u32,
    n: i64,
    gallery: u32,
    chunk: i64,
    table: *const KernelTable,
    kind: BatchDotKind,
    joined: bool,
) -> Result<Vec<(u32, Value)>, RuntimeError> {
    let n = usize::try_from(n).map_err(|_| sched(format!("batch_dot: {n} queries")))?;
    check_slots(dst_base, n)?;
    check_slots(codes_base, n)?;
    let g = Coded::of(get(slots, gallery)?, "batch_dot")?;
    if g.kind() != kind {
        return Err(sched(format!(
            "batch_dot: kind {} over a gallery of {}",
            kind.name(),
            g.value().kind()
        )));
    }
    let mut queries = Vec::with_capacity(n);
    for j in 0..n as u32 {
        let q = Coded::of(get(slots, codes_base + j)?, "batch_dot")?;
        if q.kind() != kind {
            return Err(sched(format!(
                "batch_dot: kind {} over queries of {}",
                kind.name(),
                q.value().kind()
            )));
        }
        queries.push(q);
    }
    let Some(first) = queries.first() else {
        chunk_range(g.count(), cx.record_chunk, chunk)?;
        return Ok(Vec::new());
    };
    let kernel = match (gpu_kernel(cx, &g), first, &g) {
        (Some(gpu), _, _) => gpu,
        // SAFETY: the caller's contract.
        (None, Coded::Rep3(q), _) => DotKernel::Masked(unsafe { masked_kernel(table, q.bits) }?),
        (None, _, Coded::Shamir(g)) => {
            DotKernel::Shamir(unsafe { shamir_kernel(table, g.words_per_code()) }?)
        }
        _ => unreachable!("kinds checked above"),
    };
    // SAFETY: the kernel was picked from the caller's table for these operands.
    let (values, overlapped) = unsafe {
        batch_dot_as(
            scan,
            dst_base,
            cx.party(),
            queries,
            g,
            chunk,
            cx.record_chunk,
            kernel,
            cx.threads,
            joined,
        )
    }?;
    if let Some(d) = overlapped {
        cx.overlapped += d;
    }
    Ok(values
        .into_iter()
        .enumerate()
        .map(|(j, v)| (dst_base + j as u32, v))
        .collect())
}

/// The party's GPU as the kernel of a batch dot product over `gallery`, if one is attached and
/// has kernels for its ring ([`crate::gpu::replicated_on_gpu`], [`crate::gpu::shamir_on_gpu`]);
/// `None`: the CPU kernels (then, with a GPU attached, counted as a dot product left to the
/// CPU). The queries are checked to be of the gallery's kind and length by the dot product.
fn gpu_kernel(cx: &Ctx<'_>, gallery: &Coded) -> Option<DotKernel> {
    let gpu = cx.gpu.as_ref()?;
    let on_gpu = match gallery {
        Coded::Rep3(g) => crate::gpu::replicated_on_gpu(g.a.word_bytes(), g.bits).is_some(),
        Coded::Shamir(g) => crate::gpu::shamir_on_gpu(g.kind.is_galois_ring(), g.words_per_code()),
    };
    if !on_gpu {
        gpu.note_cpu_dot();
        return None;
    }
    Some(DotKernel::Gpu(gpu.clone()))
}

/// `acc` followed by `src` ([`append_value`]); `None`: `acc` followed by a copy of itself.
/// Collects a record-major value chunk by chunk.
pub fn append(acc: &mut Value, src: Option<&Value>) -> Result<(), RuntimeError> {
    match src {
        Some(v) => append_value(acc, v),
        None => copy_appendable(acc).and_then(|copy| append_value(acc, &copy)),
    }
}

/// Slots `base .. base + n` are within range.
fn check_slots(base: u32, n: usize) -> Result<(), RuntimeError> {
    if (base as usize).saturating_add(n) > MAX_SLOTS {
        return Err(sched(format!("slots {base}..{base}+{n} are out of range")));
    }
    Ok(())
}
