//! How the wrappers return each result kind of the contract ([`crate::contract::ResultKind`]):
//! one marker type per kind, named like the kind.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::RuntimeError;
use crate::party::Runtime as Party;

use super::report;

/// A result kind's C type.
pub trait ResultC {
    type C;
}

/// A result kind of op entries: runs the body on the runtime, errors and panics reported.
pub trait Wrap: ResultC {
    type Value;
    fn wrap(
        rt: *mut Party,
        f: impl FnOnce(&mut Party) -> Result<Self::Value, RuntimeError>,
    ) -> Self::C;
}

/// Runs `f` on the runtime: `Some` of its value, or `None` after printing why (an error, a
/// panic, or a runtime used before it started). Panics never cross the C boundary.
fn run<V>(rt: *mut Party, f: impl FnOnce(&mut Party) -> Result<V, RuntimeError>) -> Result<V, i32> {
    // SAFETY: `rt` comes from `irisc_rt_start` and is used by one thread until `irisc_rt_finish`.
    let Some(rt) = (unsafe { rt.as_mut() }) else {
        report(&RuntimeError::Schedule(
            "runtime used before it started".into(),
        ));
        return Err(1);
    };
    match catch_unwind(AssertUnwindSafe(|| f(rt))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => {
            rt.fail(&e);
            Err(1)
        }
        Err(_) => {
            let e = RuntimeError::Setup("internal error (panic); stopping".into());
            rt.fail(&e);
            Err(2)
        }
    }
}

/// i32: 0 on success, else 1 (an error) or 2 (a panic).
pub struct Status;
impl ResultC for Status {
    type C = i32;
}
impl Wrap for Status {
    type Value = ();
    fn wrap(rt: *mut Party, f: impl FnOnce(&mut Party) -> Result<(), RuntimeError>) -> i32 {
        run(rt, f).err().unwrap_or(0)
    }
}

/// i64: the count, or -1.
pub struct Count;
impl ResultC for Count {
    type C = i64;
}
impl Wrap for Count {
    type Value = i64;
    fn wrap(rt: *mut Party, f: impl FnOnce(&mut Party) -> Result<i64, RuntimeError>) -> i64 {
        run(rt, f).unwrap_or(-1)
    }
}

/// The runtime handle, null on failure.
pub struct Runtime;
impl ResultC for Runtime {
    type C = *mut Party;
}

/// The process exit code.
pub struct ExitCode;
impl ResultC for ExitCode {
    type C = i32;
}
