//! Portable reference of the masked dot-product kernel (the local step of Appendix C eq. 6).
//!
//! For every gallery record r and query code c it computes one party's additive share of the
//! dot product from prepared shares (see `protocol::dot::prepare`):
//! `out[r * n_codes + c] = Σ_i qa[c·len + i]·ga[r·len + i] − qb[c·len + i]·gb[r·len + i]`,
//! wrapping in the storage width. The output is record-major so that a gallery shard writes one
//! contiguous block. Generated kernels must produce exactly these words.

use crate::ring::RingElem;

/// The C signature of a generated dot-product kernel over storage `T`. The code length is a
/// compile-time constant of the generated kernel, so it is not an argument; one-sided kernels
/// (GR16, F_p) ignore `qb`/`gb`.
pub type MaskedDotKernel<T> = unsafe extern "C" fn(
    qa: *const T,
    qb: *const T,
    n_codes: i64,
    ga: *const T,
    gb: *const T,
    n_records: i64,
    out: *mut T,
);
/// [`MaskedDotKernel`] over Z_2^k stored in u16.
pub type MaskedDotKernelU16 = MaskedDotKernel<u16>;
/// [`MaskedDotKernel`], storage u32.
pub type MaskedDotKernelU32 = MaskedDotKernel<u32>;
/// [`MaskedDotKernel`], storage u64.
pub type MaskedDotKernelU64 = MaskedDotKernel<u64>;

/// The reference kernel. Panics if a slice is shorter than its shape says (a caller bug).
#[allow(clippy::too_many_arguments)]
pub fn masked_dot_reference<T: RingElem>(
    qa: &[T],
    qb: &[T],
    n_codes: usize,
    ga: &[T],
    gb: &[T],
    n_records: usize,
    len: usize,
    out: &mut [T],
) {
    assert!(
        qa.len() >= n_codes * len && qb.len() >= n_codes * len,
        "query shares shorter than n_codes * len"
    );
    assert!(
        ga.len() >= n_records * len && gb.len() >= n_records * len,
        "gallery shares shorter than n_records * len"
    );
    assert!(
        out.len() >= n_records * n_codes,
        "output shorter than n_records * n_codes"
    );
    for r in 0..n_records {
        let (gar, gbr) = (&ga[r * len..(r + 1) * len], &gb[r * len..(r + 1) * len]);
        for c in 0..n_codes {
            let (qac, qbc) = (&qa[c * len..(c + 1) * len], &qb[c * len..(c + 1) * len]);
            let mut acc = T::ZERO;
            for i in 0..len {
                acc = acc
                    .wrapping_add(qac[i].wrapping_mul(gar[i]))
                    .wrapping_sub(qbc[i].wrapping_mul(gbr[i]));
            }
            out[r * n_codes + c] = acc;
        }
    }
}

/// Reference of the one-sided 16-bit kernel of GR(2^16, d) Shamir shares (Section 4.3.2): the
/// prepared query (Lagrange coefficient folded in) against the gallery words, wrapping mod
/// 2^16, record-major; `words` = d*ceil(len/d) per code. What
/// `protocol::galois_dot::galois_dot_local` computes.
pub fn gr_dot_reference(
    q: &[u16],
    n_codes: usize,
    g: &[u16],
    n_records: usize,
    words: usize,
    out: &mut [u16],
) {
    let out = &mut out[..n_records * n_codes];
    out.fill(0);
    if words == 0 {
        return;
    }
    for (gr, row) in g
        .chunks_exact(words)
        .take(n_records)
        .zip(out.chunks_exact_mut(n_codes.max(1)))
    {
        for (qc, o) in q.chunks_exact(words).take(n_codes).zip(row.iter_mut()) {
            *o = qc
                .iter()
                .zip(gr)
                .fold(0u16, |acc, (&a, &b)| acc.wrapping_add(a.wrapping_mul(b)));
        }
    }
}

/// Reference of the F_p kernel: `out[r*n_codes + c] = <q_c, g_r> mod p` with every word below
/// p ([`crate::share::fp::dot`] per pair), record-major.
pub fn fp_dot_reference(
    q: &[u16],
    n_codes: usize,
    g: &[u16],
    n_records: usize,
    len: usize,
    out: &mut [u16],
) {
    for r in 0..n_records {
        for c in 0..n_codes {
            out[r * n_codes + c] =
                crate::share::fp::dot(&q[c * len..(c + 1) * len], &g[r * len..(r + 1) * len]);
        }
    }
}

/// Stand-ins for the generated kernels in the runtime's tests (no compiler at hand): the same C
/// signature, computed by the references above.
#[cfg(test)]
pub mod stand_in {
    use super::*;

    /// A stand-in for a generated replicated kernel over codes of `L` elements.
    ///
    /// # Safety
    /// The pointers and counts must satisfy `run_kernel`'s contract.
    pub unsafe extern "C" fn ref_masked<T: RingElem, const L: usize>(
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
    ///
    /// # Safety
    /// The pointers and counts must satisfy `run_kernel`'s contract.
    pub unsafe extern "C" fn ref_shamir<const FP: bool, const W: usize>(
        q: *const u16,
        qb: *const u16,
        n_codes: i64,
        g: *const u16,
        gb: *const u16,
        n_records: i64,
        out: *mut u16,
    ) {
        assert!(
            qb.is_null() && gb.is_null(),
            "a one-sided kernel got a second side"
        );
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

    /// A stand-in for a generated polyphase kernel over codes of `W` words (the compiler's
    /// `codegen::cpu::kernel::polyphase`): half row `j` of the `n_codes = 3 m` rows against the
    /// even cells of each record (j < m), the odd cells (j < 2 m), or their sum; two sides
    /// (eq. 6) where `qb` is not null.
    ///
    /// # Safety
    /// The pointers and counts must satisfy the kernel ABI's contract.
    pub unsafe extern "C" fn ref_polyphase<const W: usize>(
        qa: *const u16,
        qb: *const u16,
        n_codes: i64,
        ga: *const u16,
        gb: *const u16,
        n_records: i64,
        out: *mut u16,
    ) {
        let (nc, nr, h) = (n_codes as usize, n_records as usize, W / 2);
        let m = nc / 3;
        // SAFETY: the ABI's contract.
        unsafe {
            let out = std::slice::from_raw_parts_mut(out, nc * nr);
            let sides: Vec<(&[u16], &[u16])> = [(qa, ga), (qb, gb)]
                .into_iter()
                .filter(|(q, _)| !q.is_null())
                .map(|(q, g)| {
                    (
                        std::slice::from_raw_parts(q, nc * h),
                        std::slice::from_raw_parts(g, nr * W),
                    )
                })
                .collect();
            for r in 0..nr {
                for j in 0..nc {
                    let mut acc = 0u16;
                    for (s, (q, g)) in sides.iter().enumerate() {
                        let row = &g[r * W..][..W];
                        let mut dot = 0u16;
                        for (i, &x) in q[j * h..][..h].iter().enumerate() {
                            let (cell, w) = (i / 4, i % 4);
                            let (e, o) = (row[8 * cell + w], row[8 * cell + 4 + w]);
                            let y = match j / m.max(1) {
                                0 => e,
                                1 => o,
                                _ => e.wrapping_add(o),
                            };
                            dot = dot.wrapping_add(x.wrapping_mul(y));
                        }
                        acc = if s == 0 {
                            acc.wrapping_add(dot)
                        } else {
                            acc.wrapping_sub(dot)
                        };
                    }
                    out[r * nc + j] = acc;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_major_layout_and_wrapping() {
        // Two codes of length 2, three records.
        let qa: Vec<u16> = vec![1, 2, 3, 4];
        let qb: Vec<u16> = vec![0, 1, 1, 0];
        let ga: Vec<u16> = vec![1, 1, 0xffff, 0, 5, 6];
        let gb: Vec<u16> = vec![1, 0, 0, 1, 2, 2];
        let mut out = vec![0u16; 6];
        masked_dot_reference(&qa, &qb, 2, &ga, &gb, 3, 2, &mut out);
        // record 0: c0 = 1+2 - 0 = 3; c1 = 3+4 - 1 = 6
        // record 1: c0 = -1 - 1 = -2; c1 = -3 - 0 = -3
        // record 2: c0 = 5+12 - 2 = 15; c1 = 15+24 - 2 = 37
        assert_eq!(out, vec![3, 6, 0xfffe, 0xfffd, 15, 37]);
    }
}
