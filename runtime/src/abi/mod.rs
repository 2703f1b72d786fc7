//! The C ABI between generated code and the runtime.
//!
//! The compiler's party schedule is a native `main` that calls these functions in order, one per
//! `mpc` dialect op, looping over the queries. Values live in slots of the [`Runtime`] numbered
//! by the compiler. Every function returns 0 on success; on failure it has already printed a clear
//! message to stderr and returns nonzero, and the schedule jumps to `irisc_rt_finish`.
//! Panics never cross this boundary: they are caught and reported as failures.

use std::ffi::{c_char, c_void, CStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::error::RuntimeError;
use crate::manifest::Manifest;
use crate::party::Runtime;

pub(crate) fn report(party: Option<usize>, e: &RuntimeError) {
    match party {
        Some(p) => crate::say!("irisc party {p}: error: {e}"),
        None => crate::say!("irisc: error: {e}"),
    }
}

/// Runs `f` on the runtime, turning errors and panics into a nonzero status.
pub(crate) fn with_rt(
    rt: *mut Runtime,
    f: impl FnOnce(&mut Runtime) -> Result<(), RuntimeError>,
) -> i32 {
    // SAFETY: `rt` comes from `irisc_rt_start` and is used by one thread until `irisc_rt_finish`.
    let Some(rt) = (unsafe { rt.as_mut() }) else {
        crate::say!("irisc: error: runtime used before it started");
        return 1;
    };
    let party = rt.party;
    match catch_unwind(AssertUnwindSafe(|| f(rt))) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            report(Some(party), &e);
            1
        }
        Err(_) => {
            crate::say!("irisc party {party}: internal error (panic); stopping");
            2
        }
    }
}

/// Starts a party: parses `argv`, checks the inputs against the manifest, connects to the peers.
/// Returns null on failure.
///
/// # Safety
/// `argv` must hold `argc` valid C strings and `manifest` `manifest_len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn irisc_rt_start(
    argc: i32,
    argv: *const *const c_char,
    manifest: *const u8,
    manifest_len: i64,
) -> *mut Runtime {
    let result = catch_unwind(|| {
        let args: Vec<OsString> = (0..argc.max(0) as usize)
            .map(|i| OsString::from_vec(CStr::from_ptr(*argv.add(i)).to_bytes().to_vec()))
            .collect();
        let bytes = std::slice::from_raw_parts(manifest, manifest_len.max(0) as usize);
        let manifest = Manifest::from_json(bytes).map_err(RuntimeError::Setup)?;
        Runtime::start(args, manifest)
    });
    match result {
        Ok(Ok(rt)) => Box::into_raw(Box::new(rt)),
        Ok(Err(e)) => {
            report(None, &e);
            std::ptr::null_mut()
        }
        Err(_) => {
            crate::say!("irisc: internal error (panic) while starting");
            std::ptr::null_mut()
        }
    }
}

/// # Safety
/// `rt` must come from [`irisc_rt_start`].
#[no_mangle]
pub unsafe extern "C" fn irisc_rt_query_count(rt: *mut Runtime) -> i64 {
    rt.as_ref().map(|r| r.query_count() as i64).unwrap_or(0)
}

#[no_mangle]
pub extern "C" fn irisc_rt_rotate(rt: *mut Runtime, dst: i32, src: i32, lo: i32, hi: i32) -> i32 {
    with_rt(rt, |r| r.rotate(dst as u32, src as u32, lo, hi))
}

/// # Safety
/// `kernels` must be the table of masked-dot kernel variants the compiler generated for the
/// program's ring (`[portable, avx2, avx512, vnni]`, null where absent).
#[no_mangle]
pub unsafe extern "C" fn irisc_rt_masked_dot(
    rt: *mut Runtime,
    dst: i32,
    codes: i32,
    gallery: i32,
    kernels: *const c_void,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    with_rt(rt, |r| unsafe {
        r.masked_dot(
            dst as u32,
            codes as u32,
            gallery as u32,
            kernels as *const crate::kernels::KernelTable,
        )
    })
}

#[no_mangle]
pub extern "C" fn irisc_rt_reshare(rt: *mut Runtime, dst: i32, src: i32, ring_bits: i32) -> i32 {
    with_rt(rt, |r| r.reshare(dst as u32, src as u32, ring_bits as u32))
}

#[no_mangle]
pub extern "C" fn irisc_rt_mask_len(rt: *mut Runtime, dst: i32, codes: i32, gallery: i32) -> i32 {
    with_rt(rt, |r| r.mask_len(dst as u32, codes as u32, gallery as u32))
}

#[no_mangle]
pub extern "C" fn irisc_rt_sub_threshold(
    rt: *mut Runtime,
    dst: i32,
    dot: i32,
    mask_len: i32,
    num: i64,
    den: i64,
    ring_bits: i32,
) -> i32 {
    with_rt(rt, |r| {
        if den <= 0 || num < 0 {
            return Err(RuntimeError::Schedule(format!("invalid ratio {num}/{den}")));
        }
        r.sub_threshold(
            dst as u32,
            dot as u32,
            mask_len as u32,
            num,
            den,
            ring_bits as u32,
        )
    })
}

#[no_mangle]
pub extern "C" fn irisc_rt_msb(rt: *mut Runtime, dst: i32, src: i32, ring_bits: i32) -> i32 {
    with_rt(rt, |r| r.msb(dst as u32, src as u32, ring_bits as u32))
}

#[no_mangle]
pub extern "C" fn irisc_rt_or_groups(rt: *mut Runtime, dst: i32, src: i32, group: i64) -> i32 {
    with_rt(rt, |r| {
        r.or_groups(dst as u32, src as u32, group.max(0) as u64)
    })
}

#[no_mangle]
pub extern "C" fn irisc_rt_open(rt: *mut Runtime, dst: i32, src: i32, to_party: i32) -> i32 {
    with_rt(rt, |r| r.open(dst as u32, src as u32, to_party as u32))
}

/// Ends the run and returns the process exit code.
///
/// # Safety
/// `rt` must come from [`irisc_rt_start`] (or be null) and is freed here.
#[no_mangle]
pub unsafe extern "C" fn irisc_rt_finish(rt: *mut Runtime, status: i32) -> i32 {
    if rt.is_null() {
        return if status == 0 { 1 } else { status };
    }
    let rt = Box::from_raw(rt);
    catch_unwind(AssertUnwindSafe(|| rt.finish(status))).unwrap_or(2)
}

// The entry points added with the whole language, one file per concern.
mod inputs;
mod protocol;
mod tiles;
mod vector;
