//! The gallery in record chunks: codes of either sharing ([`Coded`]), the chunks of a gallery
//! ([`chunk_count`], [`chunk_range`]), and a chunk of the gallery as a value of its own
//! ([`view`]).

use std::ops::Range;
use std::sync::Arc;

use crate::error::RuntimeError;
use crate::ops::ctx::sched;
use crate::ops::shamir_codes::ShamirCodes;
use crate::ops::value::Value;
use crate::share::Codes;

use crate::contract::BatchDotKind;

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

    pub(super) fn kind(&self) -> BatchDotKind {
        match self {
            Coded::Rep3(_) => BatchDotKind::Masked,
            Coded::Shamir(_) => BatchDotKind::Shamir,
        }
    }

    /// Whether both are the same value (not merely equal ones).
    pub(super) fn same(&self, other: &Coded) -> bool {
        match (self, other) {
            (Coded::Rep3(a), Coded::Rep3(b)) => Arc::ptr_eq(a, b),
            (Coded::Shamir(a), Coded::Shamir(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    pub(super) fn value(&self) -> Value {
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
/// and shares. Shamir shares are a view of the gallery's words (mapped or owned), never a copy.
/// Replicated shares are copied if `with_shares` (and the gallery has them), else left out
/// ([`Codes::select_without_shares`]: empty shares of the same width, which ops that read
/// shares refuse), for a chunk stage that reads only the ids and public masks. A view of the
/// whole gallery is the gallery, shares and all, either way: nothing is copied.
pub(crate) fn view(g: &Coded, range: Range<usize>, with_shares: bool) -> Value {
    if range == (0..g.count()) {
        return g.value();
    }
    match g {
        Coded::Rep3(c) if with_shares && c.has_shares() => Value::Codes(Arc::new(c.select(range))),
        Coded::Rep3(c) => Value::Codes(Arc::new(c.select_without_shares(range))),
        Coded::Shamir(s) => Value::Shamir(Arc::new(s.select(range))),
    }
}
