//! The operations of the generated schedule, one method per `mpc` dialect op.
//!
//! Each reads its operands from slots, runs the protocol step, and writes its result slot.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::iris::public_threshold;
use crate::kernels::dispatch;
use crate::kernels::{KernelTable, MaskedDotKernel};
use crate::protocol;
use crate::protocol::reshare::reshare;
use crate::ring::RingElem;
use crate::share::rep3::{AddVec, Rep3Vec};

use super::codes::Codes;
use super::values::{on_pair, Value};
use super::Runtime;

/// Slot `i`, borrowed from the slot table alone so the links stay free for the protocol.
fn slot(slots: &[Option<Value>], i: u32) -> Result<&Value, RuntimeError> {
    slots
        .get(i as usize)
        .and_then(|v| v.as_ref())
        .ok_or_else(|| RuntimeError::Schedule(format!("slot {i} read before it was written")))
}

impl Runtime {
    pub(crate) fn slot(&self, i: u32) -> Result<&Value, RuntimeError> {
        slot(&self.slots, i)
    }

    pub(crate) fn put(&mut self, i: u32, v: Value) {
        let i = i as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i] = Some(v);
    }

    fn codes(&self, i: u32) -> Result<Arc<Codes>, RuntimeError> {
        match self.slot(i)? {
            Value::Codes(c) => Ok(c.clone()),
            other => Err(RuntimeError::Schedule(format!(
                "slot {i} holds {}, expected codes",
                other.kind()
            ))),
        }
    }

    pub fn rotate(&mut self, dst: u32, src: u32, lo: i32, hi: i32) -> Result<(), RuntimeError> {
        if let Value::Shamir(s) = self.slot(src)? {
            let rotated = s.rotations(lo, hi)?;
            self.put(dst, Value::Shamir(Arc::new(rotated)));
            return Ok(());
        }
        let codes = self.codes(src)?;
        codes.check_shares("rotate", "codes")?;
        let rotated = codes.rotations(lo, hi);
        self.put(dst, Value::Codes(Arc::new(rotated)));
        Ok(())
    }

    /// The local half of the dot product of Appendix C (eq. 6): the generated kernel computes
    /// each party's additive share `<a_q, a_g> - <b_q, b_g>` for every (record, code) pair,
    /// records split across `--threads` ([`masked_dot_records`] over the whole gallery).
    ///
    /// # Safety
    /// `table` must be the compiler-generated table of masked-dot kernel variants for the
    /// storage width of these shares (the schedule passes the one generated for the ring).
    pub unsafe fn masked_dot(
        &mut self,
        dst: u32,
        codes: u32,
        gallery: u32,
        table: *const KernelTable,
    ) -> Result<(), RuntimeError> {
        let t = Instant::now();
        let (q, g) = (self.codes(codes)?, self.codes(gallery)?);
        // SAFETY: the caller's contract.
        let kernel = unsafe { masked_kernel(table, q.bits) }?;
        // SAFETY: the caller promises the kernels of this storage width.
        let out = unsafe { masked_dot_records(&q, &g, 0..g.count, kernel, self.args.threads) }?;
        self.put(dst, Value::Additive(out));
        self.times.dot += t.elapsed();
        Ok(())
    }

    /// `ml` of every (record, code) pair from the public masks.
    pub fn mask_len(&mut self, dst: u32, codes: u32, gallery: u32) -> Result<(), RuntimeError> {
        let t = Instant::now();
        if let (Value::Shamir(q), Value::Shamir(g)) = (self.slot(codes)?, self.slot(gallery)?) {
            let out = super::ops_shamir::mask_lengths(q, g)?;
            self.put(dst, Value::Public(out));
            self.times.dot += t.elapsed();
            return Ok(());
        }
        let (q, g) = (self.codes(codes)?, self.codes(gallery)?);
        let out = mask_lengths(&q, &g);
        self.put(dst, Value::Public(out));
        self.times.dot += t.elapsed();
        Ok(())
    }

    pub fn reshare(&mut self, dst: u32, src: u32, ring_bits: u32) -> Result<(), RuntimeError> {
        let t = Instant::now();
        let Value::Additive(add) = slot(&self.slots, src)? else {
            return Err(RuntimeError::Schedule(format!(
                "reshare of slot {src}, which is not additive"
            )));
        };
        let (own, prev) = on_pair!(add, add, |v, _same| {
            let r = reshare(
                &mut self.net,
                &mut self.prss,
                AddVec { own: v.clone() },
                ring_bits,
            )?;
            (RingVec::from(r.own), RingVec::from(r.prev))
        })?;
        self.rounds += 1;
        self.put(dst, Value::Replicated { own, prev });
        self.times.compare += t.elapsed();
        Ok(())
    }

    /// `T - dot` for every pair, with the public threshold added to component 0 only.
    pub fn sub_threshold(
        &mut self,
        dst: u32,
        dot: u32,
        mask_len: u32,
        num: i64,
        den: i64,
        ring_bits: u32,
    ) -> Result<(), RuntimeError> {
        let t = Instant::now();
        let Value::Public(ml) = self.slot(mask_len)? else {
            return Err(RuntimeError::Schedule(format!(
                "slot {mask_len} is not public"
            )));
        };
        let Value::Replicated { own, prev } = self.slot(dot)? else {
            return Err(RuntimeError::Schedule(format!(
                "slot {dot} is not replicated"
            )));
        };
        if ml.len() != own.len() {
            return Err(RuntimeError::Schedule(
                "threshold and dot product sizes differ".into(),
            ));
        }
        let thresholds: Vec<u64> = ml
            .iter()
            .map(|&m| public_threshold(num as u64, den as u64, m) as u64)
            .collect();
        // Party 0 holds component 0 as `own`, party 1 as `prev`.
        let (add_own, add_prev) = (self.party == 0, self.party == 1);
        let (own, prev) = on_pair!(own, prev, |o, p| {
            let (o, p) = sub_from_public(o, p, &thresholds, add_own, add_prev, ring_bits);
            (RingVec::from(o), RingVec::from(p))
        })?;
        self.put(dst, Value::Replicated { own, prev });
        self.times.compare += t.elapsed();
        Ok(())
    }

    /// Algorithm 10 (BitExtract) for the most significant bit of each value.
    pub fn msb(&mut self, dst: u32, src: u32, ring_bits: u32) -> Result<(), RuntimeError> {
        let t = Instant::now();
        let Value::Replicated { own, prev } = slot(&self.slots, src)? else {
            return Err(RuntimeError::Schedule(format!(
                "msb of slot {src}, which is not replicated"
            )));
        };
        let (net, prss) = (&mut self.net, &mut self.prss);
        let bits = on_pair!(own, prev, |o, p| msb_of(net, prss, o, p, ring_bits)?)?;
        self.rounds += ring_bits.saturating_sub(1) as u64;
        self.put(dst, Value::Bits(bits));
        self.times.compare += t.elapsed();
        Ok(())
    }

    pub fn or_groups(&mut self, dst: u32, src: u32, group: u64) -> Result<(), RuntimeError> {
        let t = Instant::now();
        let Value::Bits(bits) = self.slot(src)? else {
            return Err(RuntimeError::Schedule(format!(
                "or over slot {src}, which is not binary"
            )));
        };
        let group = if group == 0 { bits.len } else { group as usize };
        if group == 0 || bits.len % group != 0 {
            return Err(RuntimeError::Schedule(format!(
                "or groups of {group} over {} bits",
                bits.len
            )));
        }
        let bits = bits.clone();
        let out = protocol::or_tree::or_groups(&mut self.net, &mut self.prss, &bits, group)?;
        self.rounds += (group as f64).log2().ceil() as u64;
        self.put(dst, Value::Bits(out));
        self.times.compare += t.elapsed();
        Ok(())
    }

    pub fn open(&mut self, dst: u32, src: u32, to: u32) -> Result<(), RuntimeError> {
        let t = Instant::now();
        let Value::Bits(bits) = self.slot(src)? else {
            return Err(RuntimeError::Schedule(format!(
                "open of slot {src}, which is not binary"
            )));
        };
        let bits = bits.clone();
        let opened = protocol::open::open_bits(&mut self.net, &bits, to as usize)?;
        self.rounds += 1;
        self.put(dst, Value::Clear(opened));
        self.times.compare += t.elapsed();
        Ok(())
    }
}

/// `ml` of every (record, code) pair of gallery `g` and codes `q`, record-major, from the
/// public masks alone: the shares are not read, so `g` may be a gallery view without shares.
pub(crate) fn mask_lengths(q: &Codes, g: &Codes) -> Vec<u64> {
    let w = q.words_per_code();
    let mut out = Vec::with_capacity(q.count * g.count);
    for r in 0..g.count {
        let gm = &g.masks[r * w..(r + 1) * w];
        for c in 0..q.count {
            let qm = &q.masks[c * w..(c + 1) * w];
            out.push(
                qm.iter()
                    .zip(gm)
                    .map(|(a, b)| (a & b).count_ones() as u64)
                    .sum(),
            );
        }
    }
    out
}

pub(crate) fn sub_from_public<T: RingElem>(
    own: &[T],
    prev: &[T],
    t: &[u64],
    add_own: bool,
    add_prev: bool,
    k: u32,
) -> (Vec<T>, Vec<T>) {
    let f = |v: &[T], add: bool| -> Vec<T> {
        v.iter()
            .zip(t)
            .map(|(&x, &th)| {
                let neg = x.wrapping_neg();
                let y = if add {
                    neg.wrapping_add(T::from_u64(th))
                } else {
                    neg
                };
                y.mask_to(k)
            })
            .collect()
    };
    (f(own, add_own), f(prev, add_prev))
}

pub(crate) fn msb_of<T: RingElem>(
    net: &mut dyn crate::net::Transport,
    prss: &mut crate::rand::prss::Prss,
    own: &[T],
    prev: &[T],
    k: u32,
) -> Result<crate::share::binary::BitShares, RuntimeError> {
    let x = Rep3Vec {
        own: own.to_vec(),
        prev: prev.to_vec(),
    };
    Ok(protocol::bit_extract::msb(net, prss, &x, k)?)
}

/// A generated two-sided (eq. 6) masked-dot kernel as the dispatch table holds it: type-erased,
/// since the table is generated for one storage width and the shares say which.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ErasedKernel(pub(crate) *const ());

// SAFETY: the pointer is the address of generated machine code, which is immutable and has no
// thread affinity; calling it from another thread is as safe as from this one.
unsafe impl Send for ErasedKernel {}
unsafe impl Sync for ErasedKernel {}

/// The variant of the masked-dot kernel `table` [`dispatch`] picks for codes of `bits` elements.
///
/// # Safety
/// `table` must be null (an error) or point to a [`KernelTable`].
pub(crate) unsafe fn masked_kernel(
    table: *const KernelTable,
    bits: usize,
) -> Result<ErasedKernel, RuntimeError> {
    // SAFETY: the caller's contract.
    let (_, kernel) = unsafe { dispatch::pick_from(table, bits) }?;
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
    g.check_shares("dot product", "gallery codes")?;
    let (n, l) = (records.len(), g.bits);
    let span = records.start * l..records.end * l;
    let kernel = kernel.0;
    // One arm per storage width, the same call in each.
    macro_rules! per_width {
        ($($W:ident),*) => {
            match (&q.a, &q.b, &g.a, &g.b) {
                $((RingVec::$W(qa), RingVec::$W(qb), RingVec::$W(ga), RingVec::$W(gb)) => {
                    let gallery = (&ga[span.clone()], &gb[span.clone()]);
                    // SAFETY: the caller promises the kernels of this storage width.
                    RingVec::$W(unsafe {
                        run_erased(kernel, (qa, qb), q.count, gallery, n, l, threads)
                    })
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

/// The shares one side of a kernel call reads: side a, and side b for replicated shares (two
/// sides, eq. 6) or `None` for the one-sided Shamir kernels.
pub(crate) type Sides<'a, T> = (&'a [T], Option<&'a [T]>);

/// Runs `kernel` (any generated dot kernel with storage word `T`) over `n_codes` codes and
/// `n_records` records of `words` words each, the records split in contiguous shards across
/// `threads` threads (each writes its own block of the record-major output).
/// [`run_kernel`] for a two-sided (eq. 6) kernel given type-erased, as the dispatch table holds it.
///
/// # Safety
/// `kernel` must be a generated masked-dot kernel for storage `T`.
#[allow(clippy::too_many_arguments)]
unsafe fn run_erased<T: RingElem + Send + Sync>(
    kernel: *const (),
    q: (&[T], &[T]),
    n_codes: usize,
    g: (&[T], &[T]),
    n_records: usize,
    words: usize,
    threads: usize,
) -> Vec<T> {
    // SAFETY: the caller's contract; every generated kernel has this signature in its width.
    let k: MaskedDotKernel<T> = unsafe { std::mem::transmute(kernel) };
    run_kernel(
        k,
        (q.0, Some(q.1)),
        n_codes,
        (g.0, Some(g.1)),
        n_records,
        words,
        threads,
    )
}

pub(crate) fn run_kernel<T: RingElem + Send + Sync>(
    kernel: MaskedDotKernel<T>,
    q: Sides<'_, T>,
    n_codes: usize,
    g: Sides<'_, T>,
    n_records: usize,
    words: usize,
    threads: usize,
) -> Vec<T> {
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
        return out;
    }
    let per = n_records.div_ceil(threads.clamp(1, n_records));
    let ptr = |s: Option<&[T]>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    let run = |first: usize, out_chunk: &mut [T]| {
        let n = out_chunk.len() / n_codes;
        let range = first * words..(first + n) * words;
        let (ga, gb) = (&g.0[range.clone()], g.1.map(|b| &b[range]));
        // SAFETY: every pointer covers what the kernel reads and writes: n_codes * words
        // (queries), n * words (this shard's records), n * n_codes (out); side b pointers are
        // null only for one-sided kernels, which do not read them.
        unsafe {
            kernel(
                q.0.as_ptr(),
                ptr(q.1),
                n_codes as i64,
                ga.as_ptr(),
                ptr(gb),
                n as i64,
                out_chunk.as_mut_ptr(),
            )
        }
    };
    if per >= n_records {
        run(0, &mut out);
        return out;
    }
    std::thread::scope(|s| {
        for (chunk, out_chunk) in out.chunks_mut(per * n_codes).enumerate() {
            let run = &run;
            s.spawn(move || run(chunk * per, out_chunk));
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::reference::stand_in::{ref_masked, ref_shamir};
    use crate::kernels::{gr_dot_reference, masked_dot_reference};

    const WORDS: usize = 9;

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
