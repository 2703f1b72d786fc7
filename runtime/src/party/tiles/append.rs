//! Per-chunk results collected into whole-gallery values: which kinds can be collected
//! ([`copy_appendable`]), and one chunk's value appended to what the chunks before gave
//! ([`append_value`]).

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::ops::ctx::sched;
use crate::ops::value::Value;
use crate::share::binary::BitShares;
use crate::share::RingVecExt;

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
