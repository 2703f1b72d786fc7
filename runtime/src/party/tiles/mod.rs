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
//! the `Runtime` methods the ABI calls.

mod append;
mod batch_dot;
mod chunks;
mod pipeline;
#[cfg(test)]
mod tests;

use std::time::Instant;

use crate::contract::BatchDotKind;
use crate::error::RuntimeError;
use crate::kernels::KernelTable;

use super::exec::{get, sched, MAX_SLOTS};
use super::ops::masked_kernel;
use super::ops_shamir::shamir_kernel;
use super::Runtime;

pub(crate) use append::{append_value, copy_appendable};
pub(crate) use batch_dot::{batch_dot_local, concat_queries, DotKernel};
pub(crate) use chunks::{chunk_count, chunk_range, view, Coded};
pub(crate) use pipeline::{batch_dot, Pipeline};

impl Runtime {
    /// The gallery in slot `gallery` (codes of either sharing).
    fn gallery_in(&self, gallery: u32, op: &str) -> Result<Coded, RuntimeError> {
        Coded::of(get(&self.slots, gallery)?, op)
    }

    /// The number of record chunks of the gallery in slot `gallery` under `--record-chunk`.
    pub fn chunk_count(&mut self, gallery: u32) -> Result<i64, RuntimeError> {
        let g = self.gallery_in(gallery, "chunk_count")?;
        Ok(chunk_count(g.count(), self.args.record_chunk) as i64)
    }

    /// Slot `dst` = chunk `chunk` of the gallery in slot `gallery` ([`view`]), replicated
    /// shares copied only `with_shares`.
    pub fn gallery_view(
        &mut self,
        dst: u32,
        gallery: u32,
        chunk: i64,
        with_shares: bool,
    ) -> Result<(), RuntimeError> {
        let t = Instant::now();
        check_slots(dst, 1)?;
        let g = self.gallery_in(gallery, "gallery_view")?;
        let records = chunk_range(g.count(), self.args.record_chunk, chunk)?;
        self.put(dst, view(&g, records, with_shares));
        self.times.dot += t.elapsed();
        Ok(())
    }

    /// Slots `dst_base + j` = the dot products of the codes in slot `codes_base + j` (j < n)
    /// with chunk `chunk` of the gallery in slot `gallery`, as `masked_dot` (`kind` 0) or
    /// `shamir_dot` (`kind` 1) computes them with `table`, in one kernel call for the batch
    /// ([`batch_dot`](fn@batch_dot)); starts the next chunk's in the background. The time spent
    /// here goes to the dot phase; the wall time of a background job whose result is taken to
    /// `dot_overlapped`. `n` = 0 writes nothing.
    ///
    /// # Safety
    /// `table` as `masked_dot` (kind 0) or `shamir_dot_with` (kind 1) require it.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn batch_dot(
        &mut self,
        dst_base: u32,
        codes_base: u32,
        n: i64,
        gallery: u32,
        chunk: i64,
        table: *const KernelTable,
        kind: BatchDotKind,
    ) -> Result<(), RuntimeError> {
        let t = Instant::now();
        let n = usize::try_from(n).map_err(|_| sched(format!("batch_dot: {n} queries")))?;
        check_slots(dst_base, n)?;
        check_slots(codes_base, n)?;
        let g = self.gallery_in(gallery, "batch_dot")?;
        if g.kind() != kind {
            return Err(sched(format!(
                "batch_dot: kind {} over a gallery of {}",
                kind.name(),
                g.value().kind()
            )));
        }
        let mut queries = Vec::with_capacity(n);
        for j in 0..n as u32 {
            let q = Coded::of(get(&self.slots, codes_base + j)?, "batch_dot")?;
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
            chunk_range(g.count(), self.args.record_chunk, chunk)?;
            return Ok(());
        };
        let kernel = match (first, &g) {
            // SAFETY: the caller's contract.
            (Coded::Rep3(q), _) => DotKernel::Masked(unsafe { masked_kernel(table, q.bits) }?),
            (_, Coded::Shamir(g)) => {
                DotKernel::Shamir(unsafe { shamir_kernel(table, g.words_per_code()) }?)
            }
            _ => unreachable!("kinds checked above"),
        };
        // SAFETY: the kernel was picked from the caller's table for these operands.
        let (values, overlapped) = unsafe {
            batch_dot(
                &mut self.tiles,
                dst_base,
                self.party,
                queries,
                g,
                chunk,
                self.args.record_chunk,
                kernel,
                self.args.threads,
            )
        }?;
        for (j, v) in values.into_iter().enumerate() {
            self.put(dst_base + j as u32, v);
        }
        if let Some(d) = overlapped {
            self.times.dot_overlapped += d;
        }
        self.times.dot += t.elapsed();
        Ok(())
    }

    /// `first`: slot `acc` = a copy of slot `src`; else slot `acc` = slot `acc` followed by
    /// slot `src` ([`append_value`]). Collects a record-major value chunk by chunk.
    pub fn append(&mut self, acc: u32, src: u32, first: bool) -> Result<(), RuntimeError> {
        let t = Instant::now();
        check_slots(acc, 1)?;
        if first {
            let v = copy_appendable(get(&self.slots, src)?)?;
            self.put(acc, v);
        } else {
            get(&self.slots, src)?;
            let mut a = self
                .slots
                .get_mut(acc as usize)
                .and_then(Option::take)
                .ok_or_else(|| sched(format!("slot {acc} read before it was written")))?;
            let r = if acc == src {
                copy_appendable(&a).and_then(|copy| append_value(&mut a, &copy))
            } else {
                append_value(&mut a, get(&self.slots, src)?)
            };
            self.slots[acc as usize] = Some(a);
            r?;
        }
        self.times.compare += t.elapsed();
        Ok(())
    }
}

/// Slots `base .. base + n` are within range.
fn check_slots(base: u32, n: usize) -> Result<(), RuntimeError> {
    if (base as usize).saturating_add(n) > MAX_SLOTS {
        return Err(sched(format!("slots {base}..{base}+{n} are out of range")));
    }
    Ok(())
}
