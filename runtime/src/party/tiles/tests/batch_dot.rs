//! A batch's dot products, chunk by chunk, equal each query's single-query op over the chunk;
//! batches that cannot be one kernel call are schedule errors.

use std::ops::Range;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

use super::{flat, masked_kernel_for, ref_shamir, rep3, shamir, L};
use crate::io::share_file::RingVec;
use crate::kernels::run::masked_dot_records;
use crate::kernels::{masked_dot_reference, MaskedDotKernelU16};
use crate::ops::ctx::testkit::run3;
use crate::ops::shamir_codes::{ShamirCodes, ShamirKind, Side};
use crate::ops::value::Value;
use crate::party::tiles::{batch_dot, chunk_count, chunk_range, Coded, DotKernel, Pipeline};
use crate::share::Codes;

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
                    kernel.clone(),
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
                let DotKernel::Masked(ek) = kernel.clone() else {
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
                            kernel.clone(),
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
                    for (k, threads) in [(None, 1), (Some(with_kernel), 1), (Some(with_kernel), 3)]
                    {
                        let whole: Vec<_> = qs
                            .iter()
                            .map(|q| {
                                let (qv, gv) = (Value::Shamir(q.clone()), Value::Shamir(g.clone()));
                                let v = match k {
                                    None => crate::ops::shamir::shamir_dot(cx, &qv, &gv),
                                    Some(_) => crate::ops::shamir::shamir_dot_kernel(
                                        cx, &qv, &gv, k, threads,
                                    ),
                                };
                                flat(&v.unwrap())
                            })
                            .collect();
                        let queries: Vec<Coded> = qs.iter().cloned().map(Coded::Shamir).collect();
                        for record_chunk in [0usize, 3, 4, 64] {
                            check_chunks(
                                party,
                                &queries,
                                &Coded::Shamir(g.clone()),
                                DotKernel::Shamir(
                                    k.map(|k| crate::kernels::nest::Nests::single(k as *const ())),
                                ),
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
            k32.clone(),
            0,
        ),
        (
            vec![q(2, 32, &mut rng), q(2, 64, &mut rng)],
            g.clone(),
            k32.clone(),
            0,
        ),
        (
            vec![q(2, 32, &mut rng), sq(ShamirKind::Fp, &mut rng)],
            g.clone(),
            k32.clone(),
            0,
        ),
        (
            vec![sq(ShamirKind::Fp, &mut rng), sq(ShamirKind::Gr2, &mut rng)],
            sg.clone(),
            DotKernel::Shamir(None),
            0,
        ),
        (vec![q(2, 32, &mut rng)], sg.clone(), k32.clone(), 0),
        (
            vec![sq(ShamirKind::Fp, &mut rng)],
            sg.clone(),
            k32.clone(),
            0,
        ),
        (vec![q(2, 32, &mut rng)], g.clone(), k32.clone(), 1),
        (vec![], g.clone(), k32.clone(), 0),
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
