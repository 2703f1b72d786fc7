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
//!   not copied), and [`append_value`] collects per-chunk results record-major where the schedule
//!   needs a whole-gallery value; the memory of one batch is bounded by the chunk, not the
//!   gallery;
//! - **pipelines** the two phases: when the dot product of chunk i of a batch is done, the one
//!   of chunk i + 1 starts on a background thread ([`Pipeline`]) while the main thread runs the
//!   comparison rounds of chunk i (network-bound), so the dot products hide behind the
//!   comparison. The job owns `Arc` clones of its operands; the next call for the same result
//!   slots joins it if it was started for the same chunk of the same batch (same operands, by
//!   address, kept alive by the job so an address cannot be reused) and else discards it.
//!
//! Everything here is local: the parties only need the same `--record-chunk` so that their
//! chunks, and so the messages of the comparison rounds, agree.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::kernels::{KernelTable, MaskedDotKernelU16};
use crate::share::binary::BitShares;

use super::codes::Codes;
use super::exec::{get, sched, MAX_SLOTS};
use super::ops::{masked_dot_records, masked_kernel, ErasedKernel};
use super::ops_shamir::{shamir_dot_records, shamir_kernel};
use super::shamir_codes::ShamirCodes;
use super::values::{RingVecExt, Value};
use super::Runtime;

/// `kind` of `irisc_rt_batch_dot`: replicated codes, the `masked_dot` kernel.
pub const KIND_MASKED: i32 = 0;
/// `kind` of `irisc_rt_batch_dot`: Shamir codes, the `shamir_dot` kernel.
pub const KIND_SHAMIR: i32 = 1;

/// Codes of either sharing, shared: a gallery, one query's codes, or a batch of them.
#[derive(Clone)]
pub(crate) enum Coded {
    Rep3(Arc<Codes>),
    Shamir(Arc<ShamirCodes>),
}

impl Coded {
    /// The codes of `v`, or a schedule error naming `op` and what `v` holds.
    pub(crate) fn of(v: &Value, op: &str) -> Result<Coded, RuntimeError> {
        match v {
            Value::Codes(c) => Ok(Coded::Rep3(c.clone())),
            Value::Shamir(s) => Ok(Coded::Shamir(s.clone())),
            other => Err(sched(format!(
                "{op}: operand holds {}, expected codes",
                other.kind()
            ))),
        }
    }

    pub(crate) fn count(&self) -> usize {
        match self {
            Coded::Rep3(c) => c.count,
            Coded::Shamir(s) => s.count,
        }
    }

    fn kind(&self) -> i32 {
        match self {
            Coded::Rep3(_) => KIND_MASKED,
            Coded::Shamir(_) => KIND_SHAMIR,
        }
    }

    /// Whether both are the same value (not merely equal ones).
    fn same(&self, other: &Coded) -> bool {
        match (self, other) {
            (Coded::Rep3(a), Coded::Rep3(b)) => Arc::ptr_eq(a, b),
            (Coded::Shamir(a), Coded::Shamir(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    fn value(&self) -> Value {
        match self {
            Coded::Rep3(c) => Value::Codes(c.clone()),
            Coded::Shamir(s) => Value::Shamir(s.clone()),
        }
    }
}

/// The number of record chunks of a gallery of `records` records, `record_chunk` records each
/// (0: one chunk). At least 1: an empty gallery is one empty chunk.
pub fn chunk_count(records: usize, record_chunk: usize) -> usize {
    if record_chunk == 0 {
        1
    } else {
        records.div_ceil(record_chunk).max(1)
    }
}

/// The records of chunk `chunk`: `chunk·C .. min((chunk + 1)·C, records)`; an error if there
/// is no such chunk.
pub fn chunk_range(
    records: usize,
    record_chunk: usize,
    chunk: i64,
) -> Result<Range<usize>, RuntimeError> {
    let n = chunk_count(records, record_chunk);
    let c = usize::try_from(chunk)
        .ok()
        .filter(|&c| c < n)
        .ok_or_else(|| {
            sched(format!(
                "chunk {chunk} of a gallery of {records} records in {n} chunk{}",
                if n == 1 { "" } else { "s" }
            ))
        })?;
    if record_chunk == 0 {
        return Ok(0..records);
    }
    let start = c * record_chunk;
    Ok(start..records.min(start + record_chunk))
}

/// Records `range` of gallery `g` as a value of the same kind, with those records' ids, masks
/// and shares. Shamir shares are a view of the gallery's words (mapped or owned), never a copy;
/// replicated shares are copied, except for a view of the whole gallery, which is the gallery.
pub(crate) fn view(g: &Coded, range: Range<usize>) -> Value {
    if range == (0..g.count()) {
        return g.value();
    }
    match g {
        Coded::Rep3(c) => Value::Codes(Arc::new(c.select(range))),
        Coded::Shamir(s) => Value::Shamir(Arc::new(s.select(range))),
    }
}

/// The kernel of a batch dot product, resolved from the schedule's table once per call.
#[derive(Debug, Clone, Copy)]
pub(crate) enum DotKernel {
    /// Replicated codes: a generated two-sided (eq. 6) kernel of the shares' storage width.
    Masked(ErasedKernel),
    /// Shamir codes: a generated one-sided 16-bit kernel, or `None` for the scalar reference.
    Shamir(Option<MaskedDotKernelU16>),
}

impl DotKernel {
    /// Whether both run the same code.
    fn same(&self, other: &DotKernel) -> bool {
        match (self, other) {
            (DotKernel::Masked(a), DotKernel::Masked(b)) => a.0 == b.0,
            (DotKernel::Shamir(a), DotKernel::Shamir(b)) => {
                a.map(|k| k as usize) == b.map(|k| k as usize)
            }
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
/// for query j against those records. Only reads its operands, so it runs on any thread.
///
/// # Safety
/// A [`DotKernel::Masked`] kernel must be a generated masked-dot kernel for the storage width
/// and code length of these shares (as `masked_dot` requires of its table).
pub(crate) unsafe fn batch_dot_local(
    party: usize,
    batch: &Coded,
    n: usize,
    gallery: &Coded,
    records: Range<usize>,
    kernel: DotKernel,
    threads: usize,
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
            shamir_dot_records(party, q, g, records, k, threads)?
        }
        _ => {
            return Err(sched(
                "batch_dot: queries, gallery and kernel are not of one sharing",
            ))
        }
    };
    split_value(out, n, c)
}

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
}

impl Batch {
    fn same_operands(&self, queries: &[Coded], gallery: &Coded, kernel: &DotKernel) -> bool {
        self.queries.len() == queries.len()
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
    fn pending(&self, key: u32) -> Option<usize> {
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
/// Returns the per-query values and, when they came from a job, its wall time.
///
/// # Safety
/// As [`batch_dot_local`], for `kernel`.
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
    let count = gallery.count();
    let records = chunk_range(count, record_chunk, chunk)?;
    let chunk = chunk as usize;
    let pending = pipeline.jobs.remove(&key);
    let (batch, out, overlapped) = match pending {
        Some(job)
            if job.chunk == chunk
                && job.records == records
                && job.batch.same_operands(&queries, &gallery, &kernel) =>
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
                kernel,
                codes,
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

/// Whether `append` collects values of `v`'s kind.
fn appendable(v: &Value) -> bool {
    matches!(
        v,
        Value::Bits(_)
            | Value::Replicated { .. }
            | Value::Public(_)
            | Value::ReplicatedP(_)
            | Value::ReplicatedMod { .. }
            | Value::Additive(_)
            | Value::AdditiveP(_)
    )
}

/// A copy of `v` if it is of a kind `append` collects, else a schedule error.
pub(crate) fn copy_appendable(v: &Value) -> Result<Value, RuntimeError> {
    Ok(match v {
        Value::Bits(b) => Value::Bits(b.clone()),
        Value::Replicated { own, prev } => Value::Replicated {
            own: own.clone(),
            prev: prev.clone(),
        },
        Value::Public(p) => Value::Public(p.clone()),
        Value::ReplicatedP(x) => Value::ReplicatedP(x.clone()),
        Value::ReplicatedMod { m, x } => Value::ReplicatedMod {
            m: *m,
            x: x.clone(),
        },
        Value::Additive(a) => Value::Additive(a.clone()),
        Value::AdditiveP(a) => Value::AdditiveP(a.clone()),
        other => return Err(not_appendable(other)),
    })
}

fn not_appendable(v: &Value) -> RuntimeError {
    sched(format!(
        "append: {} cannot be collected chunk by chunk",
        v.kind()
    ))
}

/// `acc` followed by `src`, in place: both of one kind (and storage width, or modulus) among
/// those [`copy_appendable`] accepts, else a schedule error and `acc` is unchanged.
pub(crate) fn append_value(acc: &mut Value, src: &Value) -> Result<(), RuntimeError> {
    let mismatch = |acc: &Value| {
        Err(sched(format!(
            "append: {} after {}",
            src.kind(),
            acc.kind()
        )))
    };
    let width = |a: &RingVec, b: &RingVec| a.word_bytes() == b.word_bytes();
    match (&mut *acc, src) {
        (Value::Bits(a), Value::Bits(b)) => *a = BitShares::concat(&[a, b]),
        (Value::Replicated { own, prev }, Value::Replicated { own: o, prev: p }) => {
            if !(width(own, o) && width(prev, p) && width(own, prev)) {
                return Err(sched("append: replicated shares of different widths"));
            }
            own.extend_with(o);
            prev.extend_with(p);
        }
        (Value::Public(a), Value::Public(b)) => a.extend_from_slice(b),
        (Value::ReplicatedP(a), Value::ReplicatedP(b)) => {
            a.own.extend_from_slice(&b.own);
            a.prev.extend_from_slice(&b.prev);
        }
        (Value::ReplicatedMod { m, x }, Value::ReplicatedMod { m: mb, x: b }) => {
            if m != mb {
                return Err(sched(format!(
                    "append: shares mod p*2^{mb} after shares mod p*2^{m}"
                )));
            }
            x.own.extend_from_slice(&b.own);
            x.prev.extend_from_slice(&b.prev);
        }
        (Value::Additive(a), Value::Additive(b)) => {
            if !a.extend_with(b) {
                return Err(sched("append: additive shares of different widths"));
            }
        }
        (Value::AdditiveP(a), Value::AdditiveP(b)) => a.extend_from_slice(b),
        _ => {
            for v in [&*acc, src] {
                if !appendable(v) {
                    return Err(not_appendable(v));
                }
            }
            return mismatch(acc);
        }
    }
    Ok(())
}

impl Runtime {
    /// The gallery in slot `gallery` (codes of either sharing).
    fn gallery_in(&self, gallery: u32, op: &str) -> Result<Coded, RuntimeError> {
        Coded::of(get(&self.slots, gallery)?, op)
    }

    /// The number of record chunks of the gallery in slot `gallery` under `--record-chunk`.
    pub fn chunk_count(&self, gallery: u32) -> Result<i64, RuntimeError> {
        let g = self.gallery_in(gallery, "chunk_count")?;
        Ok(chunk_count(g.count(), self.args.record_chunk) as i64)
    }

    /// Slot `dst` = chunk `chunk` of the gallery in slot `gallery` ([`view`]).
    pub fn gallery_view(&mut self, dst: u32, gallery: u32, chunk: i64) -> Result<(), RuntimeError> {
        let t = Instant::now();
        check_slots(dst, 1)?;
        let g = self.gallery_in(gallery, "gallery_view")?;
        let records = chunk_range(g.count(), self.args.record_chunk, chunk)?;
        self.put(dst, view(&g, records));
        self.times.dot += t.elapsed();
        Ok(())
    }

    /// Slots `dst_base + j` = the dot products of the codes in slot `codes_base + j` (j < n)
    /// with chunk `chunk` of the gallery in slot `gallery`, as `masked_dot` (`kind` 0) or
    /// `shamir_dot` (`kind` 1) computes them with `table`, in one kernel call for the batch
    /// ([`batch_dot`]); starts the next chunk's in the background. The time spent here goes to
    /// the dot phase; the wall time of a background job whose result is taken to
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
        kind: i32,
    ) -> Result<(), RuntimeError> {
        let t = Instant::now();
        if kind != KIND_MASKED && kind != KIND_SHAMIR {
            return Err(sched(format!(
                "batch_dot: kind {kind} (0: masked_dot, 1: shamir_dot)"
            )));
        }
        let n = usize::try_from(n).map_err(|_| sched(format!("batch_dot: {n} queries")))?;
        check_slots(dst_base, n)?;
        check_slots(codes_base, n)?;
        let g = self.gallery_in(gallery, "batch_dot")?;
        if g.kind() != kind {
            return Err(sched(format!(
                "batch_dot: kind {kind} over a gallery of {}",
                g.value().kind()
            )));
        }
        let mut queries = Vec::with_capacity(n);
        for j in 0..n as u32 {
            let q = Coded::of(get(&self.slots, codes_base + j)?, "batch_dot")?;
            if q.kind() != kind {
                return Err(sched(format!(
                    "batch_dot: kind {kind} over queries of {}",
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{fp_dot_reference, gr_dot_reference, masked_dot_reference};
    use crate::party::exec::testkit::run3;
    use crate::party::shamir_codes::{ShamirKind, Side};
    use crate::ring::RingElem;
    use crate::share::fp::{Rep3Fp, P};
    use crate::share::Rep3Vec;
    use crate::store::Words;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// A stand-in for a generated replicated kernel over codes of `L` elements.
    unsafe extern "C" fn ref_masked<T: RingElem, const L: usize>(
        qa: *const T,
        qb: *const T,
        n_codes: i64,
        ga: *const T,
        gb: *const T,
        n_records: i64,
        out: *mut T,
    ) {
        let (nc, nr) = (n_codes as usize, n_records as usize);
        // SAFETY: run_kernel's contract.
        unsafe {
            let s = |p: *const T, n: usize| std::slice::from_raw_parts(p, n * L);
            let out = std::slice::from_raw_parts_mut(out, nc * nr);
            masked_dot_reference(s(qa, nc), s(qb, nc), nc, s(ga, nr), s(gb, nr), nr, L, out);
        }
    }

    /// A stand-in for a generated one-sided Shamir kernel over codes of `W` words.
    unsafe extern "C" fn ref_shamir<const FP: bool, const W: usize>(
        q: *const u16,
        _qb: *const u16,
        n_codes: i64,
        g: *const u16,
        _gb: *const u16,
        n_records: i64,
        out: *mut u16,
    ) {
        let (nc, nr) = (n_codes as usize, n_records as usize);
        // SAFETY: run_kernel's contract.
        unsafe {
            let (q, g) = (
                std::slice::from_raw_parts(q, nc * W),
                std::slice::from_raw_parts(g, nr * W),
            );
            let out = std::slice::from_raw_parts_mut(out, nc * nr);
            if FP {
                fp_dot_reference(q, nc, g, nr, W, out);
            } else {
                gr_dot_reference(q, nc, g, nr, W, out);
            }
        }
    }

    const L: usize = 128;

    fn masked_kernel_for(bytes: usize) -> DotKernel {
        let k = match bytes {
            2 => ref_masked::<u16, L> as *const (),
            4 => ref_masked::<u32, L> as *const (),
            _ => ref_masked::<u64, L> as *const (),
        };
        DotKernel::Masked(ErasedKernel(k))
    }

    /// Replicated codes of random shares in Z_2^k (k picks the storage width).
    fn rep3(count: usize, k: u32, rng: &mut ChaCha12Rng) -> Arc<Codes> {
        let mut vals = |n: usize| {
            RingVec::from_u64s(k, (0..n).map(|_| rng.random::<u64>() >> (64 - k))).unwrap()
        };
        let (own, prev) = (vals(count * L), vals(count * L));
        let ids = (0..count as u64).map(|i| 1000 + i).collect();
        let masks = (0..count * L / 64)
            .map(|i| i as u64 * 0x9e37_79b9)
            .collect();
        Arc::new(Codes::from_components(own, prev, count, L, ids, masks))
    }

    /// Shamir codes of random (valid for the kind) words, `len` entries each.
    fn shamir(
        kind: ShamirKind,
        side: Side,
        count: usize,
        len: usize,
        rng: &mut ChaCha12Rng,
    ) -> Arc<ShamirCodes> {
        let words: Vec<u16> = (0..count * kind.words_per_code(len))
            .map(|_| rng.random_range(0..P))
            .collect();
        let masks = (0..count * len.div_ceil(64))
            .map(|_| rng.random())
            .collect();
        let ids = (0..count as u64).map(|i| 7 * i).collect();
        Arc::new(ShamirCodes::new(kind, side, count, len, ids, masks, words).unwrap())
    }

    /// A dot product's value as (storage bytes, elements).
    fn flat(v: &Value) -> (usize, Vec<u64>) {
        match v {
            Value::Additive(a) => (a.word_bytes(), a.iter_u64().collect()),
            Value::AdditiveP(a) => (0, a.iter().map(|&x| x as u64).collect()),
            other => panic!("unexpected {}", other.kind()),
        }
    }

    /// Records `range` of a record-major value of `c` codes per record.
    fn restrict(whole: &(usize, Vec<u64>), range: &Range<usize>, c: usize) -> (usize, Vec<u64>) {
        (whole.0, whole.1[range.start * c..range.end * c].to_vec())
    }

    /// For every chunk: batch_dot of the queries (fresh pipeline, and in order through one
    /// pipeline, so the pipelined jobs are taken) equals each query's whole-gallery `whole[j]`
    /// restricted to the chunk. Returns how many results came from background jobs.
    fn check_chunks(
        party: usize,
        queries: &[Coded],
        gallery: &Coded,
        kernel: DotKernel,
        record_chunk: usize,
        threads: usize,
        whole: &[(usize, Vec<u64>)],
    ) -> usize {
        let c = queries[0].count();
        let chunks = chunk_count(gallery.count(), record_chunk);
        let mut piped = Pipeline::default();
        let mut from_jobs = 0;
        for chunk in 0..chunks {
            let range = chunk_range(gallery.count(), record_chunk, chunk as i64).unwrap();
            for p in [&mut Pipeline::default(), &mut piped] {
                // SAFETY: the reference kernels match the shares' width and length.
                let (got, job) = unsafe {
                    batch_dot(
                        p,
                        5,
                        party,
                        queries.to_vec(),
                        gallery.clone(),
                        chunk as i64,
                        record_chunk,
                        kernel,
                        threads,
                    )
                }
                .unwrap();
                from_jobs += job.is_some() as usize;
                assert_eq!(got.len(), queries.len());
                for (j, v) in got.iter().enumerate() {
                    assert_eq!(
                        flat(v),
                        restrict(&whole[j], &range, c),
                        "query {j}, chunk {chunk} ({range:?}) of {} records by {record_chunk}",
                        gallery.count()
                    );
                }
            }
            let next = (chunk + 1 < chunks).then_some(chunk + 1);
            assert_eq!(piped.pending(5), next, "the next chunk is computing");
        }
        from_jobs
    }

    #[test]
    fn chunks_cover_the_gallery() {
        assert_eq!(chunk_count(0, 4), 1);
        assert_eq!(chunk_count(8, 4), 2);
        assert_eq!(chunk_count(10, 4), 3);
        assert_eq!(chunk_count(10, 0), 1);
        assert_eq!(chunk_count(3, 10), 1);
        assert_eq!(chunk_range(10, 4, 0).unwrap(), 0..4);
        assert_eq!(chunk_range(10, 4, 2).unwrap(), 8..10);
        assert_eq!(chunk_range(10, 0, 0).unwrap(), 0..10);
        assert_eq!(chunk_range(3, 10, 0).unwrap(), 0..3);
        assert_eq!(chunk_range(0, 4, 0).unwrap(), 0..0);
        for (n, c, k) in [(10, 4, 3), (10, 4, -1), (0, 4, 1), (10, 0, 1)] {
            let e = chunk_range(n, c, k).unwrap_err().to_string();
            assert!(
                e.contains("internal error in the generated schedule"),
                "{e}"
            );
        }
    }

    /// Replicated codes, every storage width: a batch of 1 or 3 queries over every chunking
    /// (ragged last chunk, chunk larger than the gallery, empty gallery, whole gallery) gives
    /// each query's whole-gallery `masked_dot` restricted to the chunk, on 1 and 3 threads.
    #[test]
    fn masked_batch_dot_equals_per_query_op() {
        let mut rng = ChaCha12Rng::seed_from_u64(11);
        for k in [16u32, 32, 64] {
            for records in [0usize, 1, 7, 10] {
                let g = rep3(records, k, &mut rng);
                let kernel = masked_kernel_for(g.a.word_bytes());
                for (n, c) in [(1usize, 3usize), (3, 2), (3, 31)] {
                    let qs: Vec<Arc<Codes>> = (0..n).map(|_| rep3(c, k, &mut rng)).collect();
                    let DotKernel::Masked(ek) = kernel else {
                        unreachable!()
                    };
                    let whole: Vec<_> = qs
                        .iter()
                        .map(|q| {
                            // SAFETY: the kernel matches the width; this is masked_dot's body.
                            let v = unsafe { masked_dot_records(q, &g, 0..records, ek, 1) };
                            let v = (g.a.word_bytes(), v.unwrap().iter_u64().collect());
                            // Anchor: the reference over the whole gallery.
                            if let (
                                RingVec::U32(qa),
                                RingVec::U32(qb),
                                RingVec::U32(ga),
                                RingVec::U32(gb),
                            ) = (&q.a, &q.b, &g.a, &g.b)
                            {
                                let mut want = vec![0u32; c * records];
                                masked_dot_reference(qa, qb, c, ga, gb, records, L, &mut want);
                                assert_eq!(v.1, want.iter().map(|&x| x as u64).collect::<Vec<_>>());
                            }
                            v
                        })
                        .collect();
                    let queries: Vec<Coded> = qs.into_iter().map(Coded::Rep3).collect();
                    for record_chunk in [0usize, 1, 3, 4, 10, 64] {
                        for threads in [1, 3] {
                            let jobs = check_chunks(
                                0,
                                &queries,
                                &Coded::Rep3(g.clone()),
                                kernel,
                                record_chunk,
                                threads,
                                &whole,
                            );
                            assert_eq!(jobs, chunk_count(records, record_chunk) - 1);
                        }
                    }
                }
            }
        }
    }

    /// Shamir codes over F_p, GR(2^16, 2) and GR(2^16, 4), at each party (the Lagrange
    /// coefficients differ), with the scalar reference (null table) and a kernel: the batch
    /// equals each query's whole-gallery `shamir_dot` restricted to every chunk.
    #[test]
    fn shamir_batch_dot_equals_per_query_op() {
        let runs = run3([(), (), ()], |cx, _| {
            let party = cx.party();
            let mut rng = ChaCha12Rng::seed_from_u64(21);
            let len = 64;
            let mut checked = 0;
            for kind in [ShamirKind::Fp, ShamirKind::Gr2, ShamirKind::Gr4] {
                let with_kernel = match kind {
                    ShamirKind::Fp => ref_shamir::<true, 64> as MaskedDotKernelU16,
                    _ => ref_shamir::<false, 64> as MaskedDotKernelU16,
                };
                for records in [0usize, 1, 7, 10] {
                    let g = shamir(kind, Side::Gallery, records, len, &mut rng);
                    for n in [1usize, 3] {
                        let qs: Vec<Arc<ShamirCodes>> = (0..n)
                            .map(|_| shamir(kind, Side::Query, 4, len, &mut rng))
                            .collect();
                        for (k, threads) in
                            [(None, 1), (Some(with_kernel), 1), (Some(with_kernel), 3)]
                        {
                            let whole: Vec<_> = qs
                                .iter()
                                .map(|q| {
                                    let (qv, gv) =
                                        (Value::Shamir(q.clone()), Value::Shamir(g.clone()));
                                    let v = match k {
                                        None => crate::party::ops_shamir::shamir_dot(cx, &qv, &gv),
                                        Some(_) => crate::party::ops_shamir::shamir_dot_kernel(
                                            cx, &qv, &gv, k, threads,
                                        ),
                                    };
                                    flat(&v.unwrap())
                                })
                                .collect();
                            let queries: Vec<Coded> =
                                qs.iter().cloned().map(Coded::Shamir).collect();
                            for record_chunk in [0usize, 3, 4, 64] {
                                check_chunks(
                                    party,
                                    &queries,
                                    &Coded::Shamir(g.clone()),
                                    DotKernel::Shamir(k),
                                    record_chunk,
                                    threads,
                                    &whole,
                                );
                                checked += 1;
                            }
                        }
                    }
                }
            }
            checked
        });
        assert!(runs
            .iter()
            .all(|r| r.out == 3 * 4 * 2 * 3 * 4 && r.messages == 0));
    }

    /// Chunk 0 then chunk 1 through one pipeline takes chunk 1 from the background job, and it
    /// equals chunk 1 computed directly; a call for another batch, or another chunk, discards
    /// the pending job and still returns its own right result.
    #[test]
    fn pipelined_jobs_are_taken_or_discarded() {
        let mut rng = ChaCha12Rng::seed_from_u64(5);
        let g = Coded::Rep3(rep3(10, 32, &mut rng));
        let kernel = masked_kernel_for(4);
        let batch = |rng: &mut ChaCha12Rng| -> Vec<Coded> {
            (0..3).map(|_| Coded::Rep3(rep3(2, 32, rng))).collect()
        };
        let (a, b) = (batch(&mut rng), batch(&mut rng));
        let call = |p: &mut Pipeline, q: &[Coded], chunk: i64| {
            // SAFETY: the reference kernel matches the shares.
            let (v, job) =
                unsafe { batch_dot(p, 9, 1, q.to_vec(), g.clone(), chunk, 4, kernel, 2) }.unwrap();
            (v.iter().map(flat).collect::<Vec<_>>(), job.is_some())
        };
        let direct = |q: &[Coded], chunk| call(&mut Pipeline::default(), q, chunk).0;

        let mut p = Pipeline::default();
        assert!(!call(&mut p, &a, 0).1);
        assert_eq!(p.pending(9), Some(1));
        let (got, from_job) = call(&mut p, &a, 1);
        assert!(from_job, "chunk 1 came from the background job");
        assert_eq!(got, direct(&a, 1));
        assert_eq!(p.pending(9), Some(2));

        // Another batch (other codes) for chunk 2: the job for a's chunk 2 is not used.
        let (got, from_job) = call(&mut p, &b, 2);
        assert!(!from_job);
        assert_eq!(got, direct(&b, 2));
        assert_ne!(got, direct(&a, 2));
        assert_eq!(p.pending(9), None, "chunk 2 is the last");

        // Equal codes in new values are another batch too (recomputed, same result).
        call(&mut p, &a, 0);
        let a2: Vec<Coded> = a
            .iter()
            .map(|q| match q {
                Coded::Rep3(c) => Coded::Rep3(Arc::new(c.select(0..c.count))),
                _ => unreachable!(),
            })
            .collect();
        let (got, from_job) = call(&mut p, &a2, 1);
        assert!(!from_job);
        assert_eq!(got, direct(&a, 1));

        // The same batch, another chunk: the pending job (chunk 2) is discarded.
        assert_eq!(p.pending(9), Some(2));
        let (got, from_job) = call(&mut p, &a2, 0);
        assert!(!from_job);
        assert_eq!(got, direct(&a, 0));
        assert_eq!(p.pending(9), Some(1));

        // Jobs under other result slots are independent.
        // SAFETY: as above.
        unsafe { batch_dot(&mut p, 10, 1, b.clone(), g.clone(), 0, 4, kernel, 1) }.unwrap();
        assert_eq!((p.pending(9), p.pending(10)), (Some(1), Some(1)));
    }

    /// Dropping the pipeline joins its jobs: they release the gallery they shared.
    #[test]
    fn pending_jobs_are_joined_on_drop() {
        let mut rng = ChaCha12Rng::seed_from_u64(6);
        let g = rep3(40, 64, &mut rng);
        let q = vec![Coded::Rep3(rep3(31, 64, &mut rng))];
        let mut p = Pipeline::default();
        // SAFETY: the reference kernel matches the shares.
        unsafe {
            batch_dot(
                &mut p,
                0,
                0,
                q.clone(),
                Coded::Rep3(g.clone()),
                0,
                8,
                masked_kernel_for(8),
                2,
            )
        }
        .unwrap();
        assert_eq!(p.pending(0), Some(1));
        assert!(Arc::strong_count(&g) > 1);
        drop(p);
        assert_eq!(
            Arc::strong_count(&g),
            1,
            "the job ended and dropped its operands"
        );
        let mut p = Pipeline::default();
        // SAFETY: as above.
        unsafe {
            batch_dot(
                &mut p,
                0,
                0,
                q,
                Coded::Rep3(g.clone()),
                0,
                8,
                masked_kernel_for(8),
                1,
            )
        }
        .unwrap();
        p.discard_all();
        assert_eq!((p.pending(0), Arc::strong_count(&g)), (None, 1));
    }

    #[test]
    fn batches_of_mismatched_queries_are_schedule_errors() {
        let mut rng = ChaCha12Rng::seed_from_u64(8);
        let g = Coded::Rep3(rep3(5, 32, &mut rng));
        let sg = Coded::Shamir(shamir(ShamirKind::Fp, Side::Gallery, 5, 64, &mut rng));
        let q = |c: usize, k: u32, rng: &mut ChaCha12Rng| Coded::Rep3(rep3(c, k, rng));
        let sq = |kind, rng: &mut ChaCha12Rng| Coded::Shamir(shamir(kind, Side::Query, 2, 64, rng));
        let k32 = masked_kernel_for(4);
        let cases: Vec<(Vec<Coded>, Coded, DotKernel, i64)> = vec![
            (
                vec![q(2, 32, &mut rng), q(3, 32, &mut rng)],
                g.clone(),
                k32,
                0,
            ),
            (
                vec![q(2, 32, &mut rng), q(2, 64, &mut rng)],
                g.clone(),
                k32,
                0,
            ),
            (
                vec![q(2, 32, &mut rng), sq(ShamirKind::Fp, &mut rng)],
                g.clone(),
                k32,
                0,
            ),
            (
                vec![sq(ShamirKind::Fp, &mut rng), sq(ShamirKind::Gr2, &mut rng)],
                sg.clone(),
                DotKernel::Shamir(None),
                0,
            ),
            (vec![q(2, 32, &mut rng)], sg.clone(), k32, 0),
            (vec![sq(ShamirKind::Fp, &mut rng)], sg.clone(), k32, 0),
            (vec![q(2, 32, &mut rng)], g.clone(), k32, 1),
            (vec![], g.clone(), k32, 0),
        ];
        for (i, (qs, g, k, chunk)) in cases.into_iter().enumerate() {
            let mut p = Pipeline::default();
            // SAFETY: the reference kernel matches the shares that reach it (none does).
            let e = unsafe { batch_dot(&mut p, 0, 0, qs, g, chunk, 0, k, 1) }
                .err()
                .unwrap_or_else(|| panic!("case {i} succeeded"))
                .to_string();
            assert!(
                e.contains("internal error in the generated schedule"),
                "case {i}: {e}"
            );
            assert_eq!(p.pending(0), None);
        }
    }

    /// A chunk of a Shamir gallery reads the gallery's words in place: in the memory map for a
    /// mapped gallery (and in the shared vector for an owned one); ids, masks and shares are
    /// the chunk's records'. Replicated views copy their records; the one chunk of a gallery is
    /// the gallery itself.
    #[test]
    fn views_are_the_chunks_records_without_copying_shamir_shares() {
        let mut rng = ChaCha12Rng::seed_from_u64(9);
        let (count, len) = (10usize, 64usize);
        let data: Vec<u16> = (0..count * len).map(|_| rng.random_range(0..P)).collect();
        let bytes: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &bytes).unwrap();
        // SAFETY: a private temporary file nothing else writes.
        let map = Arc::new(unsafe { memmap2::Mmap::map(&file) }.unwrap());
        let mapped = Words::mapped(map.clone(), 0, data.len()).unwrap();
        let masks: Vec<u64> = (0..count).map(|_| rng.random()).collect();
        let ids: Vec<u64> = (0..count as u64).map(|i| 500 + i).collect();
        let owned = Words::from(data.clone());
        let owned_at = owned.as_ptr() as usize;
        for words in [mapped, owned] {
            let is_mapped = words.is_mapped();
            let base = if is_mapped {
                map.as_ptr() as usize
            } else {
                owned_at
            };
            let g = Coded::Shamir(Arc::new(
                ShamirCodes::new(
                    ShamirKind::Fp,
                    Side::Gallery,
                    count,
                    len,
                    ids.clone(),
                    masks.clone(),
                    words,
                )
                .unwrap(),
            ));
            for chunk in 0..3 {
                let r = chunk_range(count, 4, chunk).unwrap();
                let Value::Shamir(v) = view(&g, r.clone()) else {
                    panic!()
                };
                assert_eq!(v.words.is_mapped(), is_mapped);
                let at = v.words.as_ptr() as usize;
                assert_eq!(
                    at,
                    base + 2 * r.start * len,
                    "in place, at the chunk's first record"
                );
                if is_mapped {
                    assert!(at + 2 * v.words.len() <= map.as_ptr() as usize + map.len());
                }
                assert_eq!(
                    (v.count, v.len, v.kind, v.side),
                    (r.len(), len, ShamirKind::Fp, Side::Gallery)
                );
                assert_eq!(v.ids, ids[r.clone()]);
                assert_eq!(v.masks, masks[r.clone()]);
                assert_eq!(&v.words[..], &data[r.start * len..r.end * len]);
                // A view of a view is still in place.
                let inner = v.words.slice(len..2 * len);
                assert_eq!(inner.as_ptr() as usize, at + 2 * len);
                assert_eq!(&inner[..], &data[(r.start + 1) * len..(r.start + 2) * len]);
            }
            let Value::Shamir(all) = view(&g, 0..count) else {
                panic!()
            };
            let Coded::Shamir(gs) = &g else {
                unreachable!()
            };
            assert!(Arc::ptr_eq(&all, gs));
        }

        let g = rep3(10, 16, &mut rng);
        for chunk in 0..3 {
            let r = chunk_range(10, 4, chunk).unwrap();
            let Value::Codes(v) = view(&Coded::Rep3(g.clone()), r.clone()) else {
                panic!()
            };
            assert_eq!((v.count, v.bits), (r.len(), L));
            assert_eq!(v.ids, g.ids[r.clone()]);
            assert_eq!(v.masks, g.masks[r.start * L / 64..r.end * L / 64]);
            for i in 0..r.len() * L {
                assert_eq!(v.components(i), g.components(r.start * L + i));
            }
        }
        let Value::Codes(all) = view(&Coded::Rep3(g.clone()), 0..10) else {
            panic!()
        };
        assert!(Arc::ptr_eq(&all, &g));
    }

    /// Values whose equality the append tests check.
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Bits(x), Value::Bits(y)) => x == y,
            (Value::Replicated { own: a, prev: b }, Value::Replicated { own: c, prev: d }) => {
                a == c && b == d
            }
            (Value::Public(x), Value::Public(y)) => x == y,
            (Value::ReplicatedP(x), Value::ReplicatedP(y)) => x == y,
            (Value::ReplicatedMod { m, x }, Value::ReplicatedMod { m: n, x: y }) => {
                m == n && x == y
            }
            (Value::Additive(x), Value::Additive(y)) => x == y,
            (Value::AdditiveP(x), Value::AdditiveP(y)) => x == y,
            _ => false,
        }
    }

    /// Elements `r` of a value of an appendable kind.
    fn part(v: &Value, r: Range<usize>) -> Value {
        match v {
            Value::Bits(b) => Value::Bits(b.slice(r.start, r.len())),
            Value::Replicated { own, prev } => Value::Replicated {
                own: own.slice(r.clone()),
                prev: prev.slice(r),
            },
            Value::Public(p) => Value::Public(p[r].to_vec()),
            Value::ReplicatedP(x) => Value::ReplicatedP(Rep3Fp {
                own: x.own[r.clone()].to_vec(),
                prev: x.prev[r].to_vec(),
            }),
            Value::ReplicatedMod { m, x } => Value::ReplicatedMod {
                m: *m,
                x: Rep3Vec {
                    own: x.own[r.clone()].to_vec(),
                    prev: x.prev[r].to_vec(),
                },
            },
            Value::Additive(a) => Value::Additive(a.slice(r)),
            Value::AdditiveP(a) => Value::AdditiveP(a[r].to_vec()),
            other => panic!("{}", other.kind()),
        }
    }

    fn every_kind(n: usize, rng: &mut ChaCha12Rng) -> Vec<Value> {
        let mut u64s = |n: usize| -> Vec<u64> { (0..n).map(|_| rng.random()).collect() };
        let w = n.div_ceil(64);
        let (o, p, x, y) = (u64s(n), u64s(n), u64s(w), u64s(w));
        let ring =
            |k: u32, v: &[u64]| RingVec::from_u64s(k, v.iter().map(|x| x >> (64 - k))).unwrap();
        let modp = |v: &[u64]| -> Vec<u16> { v.iter().map(|&x| (x % P as u64) as u16).collect() };
        vec![
            Value::Bits(BitShares::from_words(x, y, n)),
            Value::Replicated {
                own: ring(16, &o),
                prev: ring(16, &p),
            },
            Value::Replicated {
                own: ring(40, &o),
                prev: ring(40, &p),
            },
            Value::Public(o.clone()),
            Value::ReplicatedP(Rep3Fp {
                own: modp(&o),
                prev: modp(&p),
            }),
            Value::ReplicatedMod {
                m: 5,
                x: Rep3Vec {
                    own: o.clone(),
                    prev: p.clone(),
                },
            },
            Value::Additive(ring(32, &o)),
            Value::Additive(ring(64, &p)),
            Value::AdditiveP(modp(&p)),
        ]
    }

    /// Collecting the chunks of a value (ragged, some empty) gives the value, for every kind.
    #[test]
    fn append_of_chunks_is_the_whole() {
        let mut rng = ChaCha12Rng::seed_from_u64(12);
        for n in [0usize, 1, 130] {
            for whole in every_kind(n, &mut rng) {
                for cuts in [vec![n], vec![0, n], vec![n / 3, n / 3, n / 2, n]] {
                    let mut start = 0;
                    let mut acc: Option<Value> = None;
                    for end in cuts {
                        let chunk = part(&whole, start..end);
                        match &mut acc {
                            None => acc = Some(copy_appendable(&chunk).unwrap()),
                            Some(a) => append_value(a, &chunk).unwrap(),
                        }
                        start = end;
                    }
                    assert!(
                        same(acc.as_ref().unwrap(), &whole),
                        "{} of {n}",
                        whole.kind()
                    );
                }
            }
        }
    }

    #[test]
    fn append_refuses_mismatched_kinds() {
        let mut rng = ChaCha12Rng::seed_from_u64(13);
        let kinds = every_kind(70, &mut rng);
        let mut bad: Vec<(Value, Value)> = Vec::new();
        for (i, a) in kinds.iter().enumerate() {
            for (j, b) in kinds.iter().enumerate() {
                if i != j {
                    bad.push((copy_appendable(a).unwrap(), copy_appendable(b).unwrap()));
                }
            }
        }
        let mut other_m = copy_appendable(&kinds[5]).unwrap();
        if let Value::ReplicatedMod { m, .. } = &mut other_m {
            *m = 6;
        }
        bad.push((copy_appendable(&kinds[5]).unwrap(), other_m));
        let codes = Value::Codes(rep3(1, 16, &mut rng));
        bad.push((Value::Public(vec![1]), codes));
        bad.push((Value::Clear(None), Value::Clear(None)));
        for (mut acc, src) in bad {
            let before = copy_appendable(&acc).ok();
            let e = append_value(&mut acc, &src).unwrap_err().to_string();
            assert!(
                e.contains("internal error in the generated schedule"),
                "{e}"
            );
            if let Some(b) = before {
                assert!(same(&acc, &b), "unchanged after the error");
            }
        }
        assert!(copy_appendable(&Value::Codes(rep3(1, 16, &mut rng))).is_err());
    }
}
