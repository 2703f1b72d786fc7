//! C ABI entry points of the tiled gallery scan (`party::tiles`): the gallery in record chunks
//! (`--record-chunk`), the dot products of a batch of queries with one chunk in one kernel call
//! (the next chunk's computed in the background while this one is compared), and the
//! collection of per-chunk results.

use std::ffi::c_void;

use super::with_rt;
use crate::kernels::KernelTable;
use crate::party::Runtime;

/// The number of record chunks of the gallery in slot `gallery` (at least 1), or -1 after
/// printing the error (the slot holds no codes, or the runtime is missing).
#[no_mangle]
pub extern "C" fn irisc_rt_chunk_count(rt: *mut Runtime, gallery: i32) -> i64 {
    let mut n = -1;
    let status = with_rt(rt, |r| {
        n = r.chunk_count(gallery as u32)?;
        Ok(())
    });
    if status == 0 {
        n
    } else {
        -1
    }
}

/// Slot `dst` = the records of chunk `chunk` of the gallery in slot `gallery`, of the same
/// kind (codes or Shamir codes) with those records' ids, masks and shares. `with_shares` = 0
/// (the chunk stage reads only the records' ids and public masks, e.g. `mask_len`) leaves the
/// shares of replicated codes out: the view's shares are empty, and an op that reads them
/// (`masked_dot`, `self_dot`) fails with a schedule error. Shamir views never copy shares, and
/// a view of the whole gallery is the gallery, so `with_shares` changes nothing for them.
#[no_mangle]
pub extern "C" fn irisc_rt_gallery_view(
    rt: *mut Runtime,
    dst: i32,
    gallery: i32,
    chunk: i64,
    with_shares: i32,
) -> i32 {
    with_rt(rt, |r| {
        r.gallery_view(dst as u32, gallery as u32, chunk, with_shares != 0)
    })
}

/// For j in 0..n: slot `dst_base + j` = the dot products of the codes in slot `codes_base + j`
/// with chunk `chunk` of the gallery in slot `gallery`: `kind` 0 as `irisc_rt_masked_dot`,
/// 1 as `irisc_rt_shamir_dot` (null `table`: the scalar reference), computed in one kernel call
/// for the batch.
///
/// # Safety
/// `table` must be what `irisc_rt_masked_dot` (kind 0) or `irisc_rt_shamir_dot` (kind 1)
/// takes for these codes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn irisc_rt_batch_dot(
    rt: *mut Runtime,
    dst_base: i32,
    codes_base: i32,
    n: i64,
    gallery: i32,
    chunk: i64,
    table: *const c_void,
    kind: i32,
) -> i32 {
    // SAFETY: forwarded from this function's contract.
    with_rt(rt, |r| unsafe {
        r.batch_dot(
            dst_base as u32,
            codes_base as u32,
            n,
            gallery as u32,
            chunk,
            table as *const KernelTable,
            kind,
        )
    })
}

/// `first` != 0: slot `acc` = slot `src`; else slot `acc` = slot `acc` followed by slot `src`
/// (shares, public values or bits of one kind).
#[no_mangle]
pub extern "C" fn irisc_rt_append(rt: *mut Runtime, acc: i32, src: i32, first: i32) -> i32 {
    with_rt(rt, |r| r.append(acc as u32, src as u32, first != 0))
}
