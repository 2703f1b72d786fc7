//! The values the generated schedule names by slot number.

use std::rc::Rc;

#[allow(unused_imports)] // used by the `on_pair!` expansions
use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::share::binary::BitShares;

use super::codes::Codes;

pub enum Value {
    /// Shares of codes with their public masks (a query's rotations, or the gallery).
    Codes(Rc<Codes>),
    /// Additive shares, one per (record, code) pair, record-major.
    Additive(RingVec),
    /// Replicated shares (x_i, x_{i-1}) over Z_2^k.
    Replicated { own: RingVec, prev: RingVec },
    /// Public values known to every party, one per pair (e.g. combined mask lengths).
    Public(Vec<u64>),
    /// Binary replicated shares, bit-sliced.
    Bits(BitShares),
    /// Opened bits: the values at the output party, `None` at the others.
    Clear(Option<Vec<bool>>),
    // --- Added with named inputs and outputs (party/load.rs, party/output.rs). ---
    /// An input shared with Shamir (F_p or GR(2^16, d)): this party's shares.
    ShamirCodes(Rc<super::shamir_codes::ShamirCodes>),
    /// Opened integers (e.g. a revealed count): the values at the output party, `None` at the
    /// others.
    ClearInts(Option<Vec<u64>>),
}

impl Value {
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Codes(_) => "codes",
            Value::Additive(_) => "additive shares",
            Value::Replicated { .. } => "replicated shares",
            Value::Public(_) => "public values",
            Value::Bits(_) => "binary shares",
            Value::Clear(_) => "opened bits",
            Value::ShamirCodes(_) => "Shamir shares",
            Value::ClearInts(_) => "opened integers",
        }
    }
}

/// Runs `$body` with the components of replicated shares bound as `$o` and `$p`, slices of one
/// storage width; an error if the two differ in width (a bug in the schedule, never user input).
macro_rules! on_pair {
    ($own:expr, $prev:expr, |$o:ident, $p:ident| $body:expr) => {
        match ($own, $prev) {
            (RingVec::U16($o), RingVec::U16($p)) => Ok($body),
            (RingVec::U32($o), RingVec::U32($p)) => Ok($body),
            (RingVec::U64($o), RingVec::U64($p)) => Ok($body),
            _ => Err(RuntimeError::Schedule(
                "share components differ in width".into(),
            )),
        }
    };
}
pub(crate) use on_pair;

/// Width-generic helpers on ring vectors.
pub trait RingVecExt {
    fn slice(&self, range: std::ops::Range<usize>) -> RingVec;
    fn gather(&self, index: &[usize]) -> RingVec;
}

impl RingVecExt for RingVec {
    fn slice(&self, r: std::ops::Range<usize>) -> RingVec {
        match self {
            RingVec::U16(v) => RingVec::U16(v[r].to_vec()),
            RingVec::U32(v) => RingVec::U32(v[r].to_vec()),
            RingVec::U64(v) => RingVec::U64(v[r].to_vec()),
        }
    }
    fn gather(&self, index: &[usize]) -> RingVec {
        match self {
            RingVec::U16(v) => RingVec::U16(index.iter().map(|&i| v[i]).collect()),
            RingVec::U32(v) => RingVec::U32(index.iter().map(|&i| v[i]).collect()),
            RingVec::U64(v) => RingVec::U64(index.iter().map(|&i| v[i]).collect()),
        }
    }
}
