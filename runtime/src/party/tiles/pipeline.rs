//! The pipelined batch dot product: while the main thread compares chunk i of a batch, the dot
//! products of chunk i + 1 compute on a background thread ([`Job`]), kept per result slot in
//! the [`Pipeline`] until the [`batch_dot`] call for that chunk takes them.

use std::collections::HashMap;
use std::ops::Range;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::RuntimeError;
use crate::ops::value::Value;

use super::{batch_dot_local, chunk_count, chunk_range, concat_queries, Coded, DotKernel};

/// The operands of a batch dot product: what identifies a batch between calls.
#[derive(Clone)]
struct Batch {
    /// Each query's codes as the schedule passed them. Kept alive while a job holds them, so
    /// that comparing addresses compares values (an address cannot be reused meanwhile).
    queries: Vec<Coded>,
    gallery: Coded,
    kernel: DotKernel,
    /// The queries' codes concatenated: what the kernel reads.
    codes: Coded,
    /// Whether the result is the batch's one value, not split per query.
    joined: bool,
}

impl Batch {
    fn same_operands(
        &self,
        queries: &[Coded],
        gallery: &Coded,
        kernel: &DotKernel,
        joined: bool,
    ) -> bool {
        self.joined == joined
            && self.queries.len() == queries.len()
            && self.queries.iter().zip(queries).all(|(a, b)| a.same(b))
            && self.gallery.same(gallery)
            && self.kernel.same(kernel)
    }
}

/// What a background job returns: the split dot products, and its wall time.
type JobResult = (Result<Vec<Value>, RuntimeError>, Duration);

/// A batch dot product of one chunk computing on a background thread.
struct Job {
    batch: Batch,
    chunk: usize,
    records: Range<usize>,
    handle: JoinHandle<JobResult>,
}

impl Job {
    /// Starts the dot products of `records` (chunk `chunk`) of `batch` on a new thread; `None`
    /// if no thread could be started (the next call then computes them itself).
    ///
    /// # Safety
    /// As [`batch_dot_local`], for `batch.kernel`.
    unsafe fn start(
        party: usize,
        batch: Batch,
        chunk: usize,
        records: Range<usize>,
        threads: usize,
    ) -> Option<Job> {
        let (b, r) = (batch.clone(), records.clone());
        let handle = std::thread::Builder::new()
            .name(format!("irisc-dot-chunk-{chunk}"))
            .spawn(move || {
                let t = Instant::now();
                // SAFETY: the caller's contract, moved to this thread with the operands.
                let out = unsafe {
                    batch_dot_local(
                        party,
                        &b.codes,
                        b.queries.len(),
                        &b.gallery,
                        r,
                        b.kernel,
                        threads,
                        b.joined,
                    )
                };
                (out, t.elapsed())
            })
            .ok()?;
        Some(Job {
            batch,
            chunk,
            records,
            handle,
        })
    }

    /// Waits for the job; a panic in it resumes here (and is reported like any op's panic).
    fn join(self) -> (Batch, JobResult) {
        match self.handle.join() {
            Ok(r) => (self.batch, r),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Waits for the job and drops what it computed (a job must not outlive its runtime).
    fn discard(self) {
        let _ = self.handle.join();
    }
}

/// The background dot-product jobs of the tiled scan, keyed by the first result slot of the
/// `batch_dot` call that will take them. Every job is joined before this is dropped.
#[derive(Default)]
pub(crate) struct Pipeline {
    jobs: HashMap<u32, Job>,
}

impl Pipeline {
    /// Joins every pending job and drops its results.
    pub(crate) fn discard_all(&mut self) {
        for (_, job) in self.jobs.drain() {
            job.discard();
        }
    }

    /// The chunk a job for result slot `key` is computing, if there is one.
    #[cfg(test)]
    pub(super) fn pending(&self, key: u32) -> Option<usize> {
        self.jobs.get(&key).map(|j| j.chunk)
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        self.discard_all();
    }
}

/// One `batch_dot` call on values: the dot products of each of `queries` with chunk `chunk` of
/// `gallery` (see [`batch_dot_local`]). If the job pending under `key` was started for this
/// chunk of these operands it is joined; any other pending job under `key` is discarded and
/// the products are computed here. Then, if there is a next chunk, its job starts under `key`.
/// Returns the per-query values (`joined`: the batch's one value) and, when they came from a
/// job, its wall time.
///
/// # Safety
/// As [`batch_dot_local`], for `kernel`.
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn batch_dot(
    pipeline: &mut Pipeline,
    key: u32,
    party: usize,
    queries: Vec<Coded>,
    gallery: Coded,
    chunk: i64,
    record_chunk: usize,
    kernel: DotKernel,
    threads: usize,
) -> Result<(Vec<Value>, Option<Duration>), RuntimeError> {
    // SAFETY: the caller's contract.
    unsafe {
        batch_dot_as(
            pipeline,
            key,
            party,
            queries,
            gallery,
            chunk,
            record_chunk,
            kernel,
            threads,
            false,
        )
    }
}

/// [`batch_dot`], the result split per query or (`joined`) the batch's one value in the batch
/// layout `[record][query][code]`.
///
/// # Safety
/// As [`batch_dot_local`], for `kernel`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn batch_dot_as(
    pipeline: &mut Pipeline,
    key: u32,
    party: usize,
    queries: Vec<Coded>,
    gallery: Coded,
    chunk: i64,
    record_chunk: usize,
    kernel: DotKernel,
    threads: usize,
    joined: bool,
) -> Result<(Vec<Value>, Option<Duration>), RuntimeError> {
    let count = gallery.count();
    let records = chunk_range(count, record_chunk, chunk)?;
    let chunk = chunk as usize;
    let pending = pipeline.jobs.remove(&key);
    let (batch, out, overlapped) = match pending {
        Some(job)
            if job.chunk == chunk
                && job.records == records
                && job.batch.same_operands(&queries, &gallery, &kernel, joined) =>
        {
            let (batch, (out, wall)) = job.join();
            (batch, out?, Some(wall))
        }
        other => {
            if let Some(job) = other {
                job.discard();
            }
            let n = queries.len();
            let codes = concat_queries(&queries)?;
            let batch = Batch {
                queries,
                gallery,
                kernel: kernel.clone(),
                codes,
                joined,
            };
            // SAFETY: the caller's contract.
            let out = unsafe {
                batch_dot_local(
                    party,
                    &batch.codes,
                    n,
                    &batch.gallery,
                    records,
                    kernel,
                    threads,
                    joined,
                )
            }?;
            (batch, out, None)
        }
    };
    if chunk + 1 < chunk_count(count, record_chunk) {
        let next = chunk_range(count, record_chunk, chunk as i64 + 1)?;
        // SAFETY: the caller's contract, for the same operands.
        if let Some(job) = unsafe { Job::start(party, batch, chunk + 1, next, threads) } {
            pipeline.jobs.insert(key, job);
        }
    }
    Ok((out, overlapped))
}
