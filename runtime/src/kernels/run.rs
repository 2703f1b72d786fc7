//! Running the generated kernels: the variant a kernel table offers for this CPU
//! ([`super::dispatch`]), kernels type-erased as the table holds them, and one call split over
//! `--threads` by records (each thread writes its own block of the record-major output).

use std::ops::Range;

use crate::error::RuntimeError;
use crate::ring::RingElem;
use crate::share::{Codes, RingVec};

use super::dispatch;
use super::nest::Nests;
use super::{KernelTable, MaskedDotKernel};

/// A generated two-sided (eq. 6) masked-dot kernel as the dispatch table holds it: type-erased,
/// since the table is generated for one storage width and the shares say which.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErasedKernel(pub(crate) Nests);

/// The variant of the masked-dot kernel `table` [`dispatch`] picks for codes of `bits` elements.
///
/// # Safety
/// `table` must be null (an error) or point to a [`KernelTable`].
pub(crate) unsafe fn masked_kernel(
    table: *const KernelTable,
    bits: usize,
) -> Result<ErasedKernel, RuntimeError> {
    // SAFETY: the caller's contract.
    let (_, kernel) = unsafe { dispatch::pick_nests_from(table, bits) }?;
    Ok(ErasedKernel(kernel))
}

/// This party's additive shares of the masked dot products (eq. 6) of every code of `q` with
/// records `records` of the gallery `g`, record-major (`out[r·q.count + c]`, r counted from
/// `records.start`), records split across `threads`: what `masked_dot` computes for the whole
/// gallery and the tiled scan for one chunk of it (with `q` a batch of queries' codes). Codes
/// without their shares (a gallery view taken without them) are a schedule error.
///
/// # Safety
/// `kernel` must be a generated masked-dot kernel for the storage width of these shares and
/// codes of `q.bits` elements.
pub(crate) unsafe fn masked_dot_records(
    q: &Codes,
    g: &Codes,
    records: Range<usize>,
    kernel: ErasedKernel,
    threads: usize,
) -> Result<RingVec, RuntimeError> {
    check_masked_operands(q, g, &records)?;
    let (n, l) = (records.len(), g.bits);
    let span = records.start * l..records.end * l;
    let kernel = kernel.0;
    // One arm per storage width, the same call in each.
    macro_rules! per_width {
        ($($W:ident),*) => {
            match (&q.a, &q.b, &g.a, &g.b) {
                $((RingVec::$W(qa), RingVec::$W(qb), RingVec::$W(ga), RingVec::$W(gb)) => {
                    let gallery = (&ga[span.clone()], Some(&gb[span.clone()]));
                    // SAFETY: the caller promises two-sided kernels of this storage width.
                    RingVec::$W(unsafe {
                        run_nests(kernel, (qa, Some(qb)), q.count, gallery, n, l, threads)
                    }?)
                })*
                _ => {
                    return Err(RuntimeError::Schedule(
                        "query and gallery shares differ in width".into(),
                    ))
                }
            }
        };
    }
    Ok(per_width!(U16, U32, U64))
}

/// The checks of a masked dot product's operands (CPU or GPU): codes of one length, records
/// within the gallery, the shares of both present.
pub(crate) fn check_masked_operands(
    q: &Codes,
    g: &Codes,
    records: &Range<usize>,
) -> Result<(), RuntimeError> {
    if q.bits != g.bits {
        return Err(RuntimeError::Schedule(
            "dot product of codes of different lengths".into(),
        ));
    }
    if records.start > records.end || records.end > g.count {
        return Err(RuntimeError::Schedule(format!(
            "records {records:?} of a gallery of {}",
            g.count
        )));
    }
    q.check_shares("dot product", "query codes")?;
    g.check_shares("dot product", "gallery codes")
}

/// 16-bit shares as the u16 words they are (a panic for any other width: callers check
/// `T::BITS`).
fn as_words<T: RingElem>(s: &[T]) -> &[u16] {
    bytemuck::cast_slice(s)
}

/// The shares one side of a kernel call reads: side a, and side b for replicated shares (two
/// sides, eq. 6) or `None` for the one-sided Shamir kernels.
pub(crate) type Sides<'a, T> = (&'a [T], Option<&'a [T]>);

/// [`run_nests`] with one kernel, a function of the right type.
#[cfg(test)]
pub(crate) fn run_kernel<T: RingElem + Send + Sync>(
    kernel: MaskedDotKernel<T>,
    q: Sides<'_, T>,
    n_codes: usize,
    g: Sides<'_, T>,
    n_records: usize,
    words: usize,
    threads: usize,
) -> Vec<T> {
    let nests = Nests::single(kernel as *const ());
    // SAFETY: the one nest is `kernel`, of the signature `run_nests` calls.
    unsafe { run_nests(nests, q, n_codes, g, n_records, words, threads) }
        .expect("a single nest runs under any policy")
}

/// Runs a generated dot kernel with storage word `T` over `n_codes` codes and `n_records`
/// records of `words` words each, the records split in contiguous shards across `threads`
/// threads (each writes its own block of the record-major output), in the loop nest of
/// `nests` this process runs for `n_codes` codes per call ([`Nests::run`]: measured on the
/// first large call's records); each shard is one call, or the measured slices and the rest.
///
/// # Safety
/// Both nests must be generated dot kernels with storage word `T` (the signature of
/// [`MaskedDotKernel`]) computing the same words.
pub(crate) unsafe fn run_nests<T: RingElem + Send + Sync>(
    nests: Nests,
    q: Sides<'_, T>,
    n_codes: usize,
    g: Sides<'_, T>,
    n_records: usize,
    words: usize,
    threads: usize,
) -> Result<Vec<T>, RuntimeError> {
    assert!(
        q.0.len() >= n_codes * words && q.1.is_none_or(|b| b.len() >= n_codes * words),
        "query shares shorter than n_codes * words"
    );
    assert!(
        g.0.len() >= n_records * words && g.1.is_none_or(|b| b.len() >= n_records * words),
        "gallery shares shorter than n_records * words"
    );
    let mut out = vec![T::ZERO; n_codes * n_records];
    if n_records == 0 || n_codes == 0 || words == 0 {
        return Ok(out);
    }
    // The AMX kernel where this process runs one (several times the vector kernels' rate, the
    // polyphase form's included): whole blocks of records there, the rest in the vector nest.
    if let Some((amx, form)) = nests.amx {
        if T::BITS == 16
            && form.applies(words)
            && n_records >= super::amx::RECORD_BLOCK
            && n_codes <= super::amx::MAX_CODES
        {
            let (qa, qb) = (as_words(q.0), q.1.map(as_words));
            let g16 = (as_words(g.0), g.1.map(as_words));
            // SAFETY: the caller's contract: the table's AMX kernel takes these shares, and the
            // plain nest is a 16-bit kernel of the same sides.
            let out16 = bytemuck::cast_slice_mut(&mut out);
            unsafe {
                run_amx(
                    amx,
                    form,
                    nests.first,
                    (qa, qb),
                    n_codes,
                    g16,
                    n_records,
                    words,
                    threads,
                    out16,
                )
            };
            return Ok(out);
        }
    }
    // Codes that are whole batches of the rotations the table's polyphase kernel is for (the
    // compiler generates one only for the rotations of the dot op's query operand, in 16-bit
    // words), at least `MIN_QUERIES` of them: that kernel, about three quarters of the
    // multiply-accumulates.
    if let Some((kernel, form)) = nests.polyphase {
        let whole = n_codes.is_multiple_of(form.rotations())
            && n_codes / form.rotations() >= super::polyphase::MIN_QUERIES;
        if T::BITS == 16 && form.words() == words && whole {
            // SAFETY: the caller's contract: the table's polyphase kernels take these shares.
            unsafe {
                super::polyphase::run(
                    kernel,
                    &form,
                    (as_words(q.0), q.1.map(as_words)),
                    n_codes,
                    (as_words(g.0), g.1.map(as_words)),
                    n_records,
                    threads,
                    bytemuck::cast_slice_mut(&mut out),
                )
            };
            return Ok(out);
        }
    }
    let per = n_records.div_ceil(threads.clamp(1, n_records));
    let ptr = |s: Option<&[T]>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    let run = |first: usize, out_chunk: &mut [T]| -> Result<(), RuntimeError> {
        let n = out_chunk.len() / n_codes;
        let out_ptr = out_chunk.as_mut_ptr();
        nests.run(n_codes, n, &mut |kernel, part| {
            let (r0, len) = (first + part.start, part.len());
            let range = r0 * words..(r0 + len) * words;
            let (ga, gb) = (&g.0[range.clone()], g.1.map(|b| &b[range]));
            // SAFETY: the caller's contract: every nest has this signature in its width.
            let k: MaskedDotKernel<T> = unsafe { std::mem::transmute(kernel) };
            // SAFETY: every pointer covers what the kernel reads and writes: n_codes * words
            // (queries), len * words (these records), len * n_codes (out, within this shard's
            // chunk: `part` lies in 0..n); side b pointers are null only for one-sided
            // kernels, which do not read them.
            unsafe {
                k(
                    q.0.as_ptr(),
                    ptr(q.1),
                    n_codes as i64,
                    ga.as_ptr(),
                    ptr(gb),
                    len as i64,
                    out_ptr.add(part.start * n_codes),
                )
            }
        })
    };
    if per >= n_records {
        run(0, &mut out)?;
        return Ok(out);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = out
            .chunks_mut(per * n_codes)
            .enumerate()
            .map(|(chunk, out_chunk)| {
                let run = &run;
                s.spawn(move || run(chunk * per, out_chunk))
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().expect("a kernel thread panicked"))
    })?;
    Ok(out)
}

/// `out[r * n_codes + c]` through the AMX kernel `amx`: the query's columns laid out once,
/// the records split across `threads` in shards of whole record blocks, each shard's blocks in
/// the AMX kernel and its last records (fewer than a block) in the vector kernel `plain`.
///
/// # Safety
/// `amx` must be a generated AMX kernel and `plain` a generated 16-bit dot kernel, both for
/// `words`-word codes and as many sides as `q` holds (two where `q.1` is given, and `g.1`
/// with it); the process must have tile data permission.
#[allow(clippy::too_many_arguments)]
unsafe fn run_amx(
    amx: *const (),
    form: super::amx::Form,
    plain: *const (),
    q: (&[u16], Option<&[u16]>),
    n_codes: usize,
    g: (&[u16], Option<&[u16]>),
    n_records: usize,
    words: usize,
    threads: usize,
    out: &mut [u16],
) {
    use super::amx::{AmxDotKernel, Columns, RECORD_BLOCK};
    let columns = Columns::of_form(form, q, n_codes, words);
    // SAFETY: the caller's contract: kernels of these signatures.
    let (amx, plain) = unsafe {
        (
            std::mem::transmute::<*const (), AmxDotKernel>(amx),
            std::mem::transmute::<*const (), MaskedDotKernel<u16>>(plain),
        )
    };
    let ptr = |s: Option<&[u16]>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    let part = |first: usize, out: &mut [u16]| {
        let at = first * words;
        let gallery = (&g.0[at..], g.1.map(|b| &b[at..]));
        let mut rest = |r0: usize, len: usize, out: &mut [u16]| {
            let from = r0 * words;
            // SAFETY: the caller's contract; records r0..r0 + len of this shard lie inside the
            // gallery (run_nests checked its length), `out` holds len x n_codes.
            unsafe {
                plain(
                    q.0.as_ptr(),
                    ptr(q.1),
                    n_codes as i64,
                    gallery.0[from..].as_ptr(),
                    gallery.1.map_or(std::ptr::null(), |b| b[from..].as_ptr()),
                    len as i64,
                    out.as_mut_ptr(),
                )
            }
        };
        // SAFETY: the caller's contract; the shard's records lie inside the gallery.
        unsafe { super::amx::run_blocks(amx, &columns, gallery, words, out, &mut rest) };
    };
    // Shards of whole blocks: only the last has records the vector kernel takes.
    super::shards::in_record_shards(n_records, n_codes, threads, RECORD_BLOCK, out, part);
}

/// The variant of the Shamir dot-product kernel `table` [`dispatch`] picks for codes of `words`
/// u16 words; `None` (the scalar reference) for a null table.
///
/// # Safety
/// `table` must be null or point to the compiler's kernel table for this sharing and code
/// length.
pub(crate) unsafe fn shamir_kernel(
    table: *const KernelTable,
    words: usize,
) -> Result<Option<Nests>, RuntimeError> {
    if table.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's contract; every Shamir kernel takes u16 words.
    let (_, k) = unsafe { dispatch::pick_nests_from(table, words) }?;
    Ok(Some(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::polyphase::Polyphase;
    use crate::kernels::reference::stand_in::{ref_masked, ref_polyphase, ref_shamir};
    use crate::kernels::{gr_dot_reference, masked_dot_reference};
    use std::sync::atomic::{AtomicUsize, Ordering};

    const WORDS: usize = 9;

    static CALLS: AtomicUsize = AtomicUsize::new(0);

    /// [`ref_polyphase`] for 256 words, counting its calls.
    unsafe extern "C" fn counted(
        qa: *const u16,
        qb: *const u16,
        n_codes: i64,
        ga: *const u16,
        gb: *const u16,
        n_records: i64,
        out: *mut u16,
    ) {
        CALLS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the caller's contract, passed on.
        unsafe { ref_polyphase::<256>(qa, qb, n_codes, ga, gb, n_records, out) }
    }

    /// Nests with a polyphase kernel run it where the codes are whole batches of its rotations
    /// (one and two sides, 1 to 3 queries, thread splits, shares of several record blocks) and
    /// give the plain kernel's words;
    /// codes of another count run the plain kernel.
    #[test]
    fn nests_with_a_polyphase_kernel_give_the_plain_words() {
        const W: usize = 256;
        let mut x = 7u32;
        let mut next = || {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 16) as u16
        };
        let form = Polyphase::new(-3, 4, W).unwrap();
        let plain = |two: bool| {
            if two {
                Nests::single(ref_masked::<u16, W> as *const ())
            } else {
                Nests::single(ref_shamir::<false, W> as *const ())
            }
        };
        for two in [false, true] {
            // 2 x RECORD_BLOCK + 37 records: whole and partial blocks of kernel calls within
            // a thread's share.
            let blocks = 2 * crate::kernels::polyphase::RECORD_BLOCK + 37;
            for (queries, nr) in [(1usize, 5usize), (3, 11), (2, 0), (2, blocks)] {
                // Rotated rows: each query's 8 rotations of one base code.
                let rotated = |next: &mut dyn FnMut() -> u16| -> Vec<u16> {
                    let mut rows = Vec::new();
                    for _ in 0..queries {
                        let base: Vec<u16> = (0..W).map(|_| next()).collect();
                        for s in -3..=4i64 {
                            for row in 0..16 {
                                for col in 0..W / 64 {
                                    let from = (col as i64 + s).rem_euclid(W as i64 / 64) as usize;
                                    rows.extend_from_slice(&base[row * W / 16 + from * 4..][..4]);
                                }
                            }
                        }
                    }
                    rows
                };
                let (qa, qb) = (rotated(&mut next), rotated(&mut next));
                let ga: Vec<u16> = (0..nr * W).map(|_| next()).collect();
                let gb: Vec<u16> = (0..nr * W).map(|_| next()).collect();
                let nc = queries * form.rotations();
                let side_b = |v: &[u16]| -> Option<Vec<u16>> { two.then(|| v.to_vec()) };
                let (qb, gb) = (side_b(&qb), side_b(&gb));
                for threads in [1usize, 2, 3] {
                    let run = |nests: Nests, nc: usize| {
                        // SAFETY: stand-in kernels of these shapes.
                        unsafe {
                            run_nests::<u16>(
                                nests,
                                (&qa, qb.as_deref()),
                                nc,
                                (&ga, gb.as_deref()),
                                nr,
                                W,
                                threads,
                            )
                        }
                        .unwrap()
                    };
                    let want = run(plain(two), nc);
                    let mut with = plain(two);
                    with.polyphase = Some((counted as *const (), form));
                    let calls = CALLS.load(Ordering::SeqCst);
                    assert_eq!(run(with, nc), want, "two sides {two}, {queries} queries");
                    // From MIN_QUERIES queries per call (one query: the plain kernel).
                    let ran = CALLS.load(Ordering::SeqCst) > calls;
                    assert_eq!(
                        ran,
                        nr > 0 && queries >= crate::kernels::polyphase::MIN_QUERIES,
                        "{queries} queries, {nr} records"
                    );
                    // One code short of whole batches: the plain kernel.
                    if nc > 1 {
                        assert_eq!(run(with, nc - 1), run(plain(two), nc - 1));
                    }
                }
            }
        }
    }

    /// Records split over any number of threads give the single-call result, for one- and
    /// two-sided kernels, including more threads than records and empty shapes.
    #[test]
    fn thread_splits_equal_one_call() {
        let mut x = 1u32;
        let mut next = || {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            x
        };
        for (nc, nr) in [(0usize, 4usize), (3, 0), (1, 1), (31, 7), (5, 13)] {
            let q: Vec<u16> = (0..nc * WORDS).map(|_| next() as u16).collect();
            let g: Vec<u16> = (0..nr * WORDS).map(|_| next() as u16).collect();
            let mut want = vec![0u16; nc * nr];
            gr_dot_reference(&q, nc, &g, nr, WORDS, &mut want);
            let q4: Vec<u32> = (0..2 * nc * WORDS).map(|_| next()).collect();
            let g4: Vec<u32> = (0..2 * nr * WORDS).map(|_| next()).collect();
            let (qa, qb) = q4.split_at(nc * WORDS);
            let (ga, gb) = g4.split_at(nr * WORDS);
            let mut want4 = vec![0u32; nc * nr];
            masked_dot_reference(qa, qb, nc, ga, gb, nr, WORDS, &mut want4);
            for threads in [1usize, 2, 3, 8, 20] {
                let got = run_kernel(
                    ref_shamir::<false, WORDS>,
                    (&q, None),
                    nc,
                    (&g, None),
                    nr,
                    WORDS,
                    threads,
                );
                assert_eq!(got, want, "{nc} x {nr}, {threads} threads");
                let got4 = run_kernel(
                    ref_masked::<u32, WORDS>,
                    (qa, Some(qb)),
                    nc,
                    (ga, Some(gb)),
                    nr,
                    WORDS,
                    threads,
                );
                assert_eq!(got4, want4, "{nc} x {nr}, {threads} threads");
            }
        }
    }
}
