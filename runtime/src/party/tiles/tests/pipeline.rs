//! Background jobs are taken when they match the call, discarded otherwise, and joined when
//! the pipeline is dropped.

use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha12Rng;

use super::{flat, masked_kernel_for, rep3};
use crate::party::tiles::{batch_dot, Coded, Pipeline};

/// Chunk 0 then chunk 1 through one pipeline takes chunk 1 from the background job, and it
/// equals chunk 1 computed directly; a call for another batch, or another chunk, discards
/// the pending job and still returns its own right result.
#[test]
fn pipelined_jobs_are_taken_or_discarded() {
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    let g = Coded::Rep3(rep3(10, 32, &mut rng));
    let kernel = masked_kernel_for(4);
    let batch = |rng: &mut ChaCha12Rng| -> Vec<Coded> {
        (0..3).map(|_| Coded::Rep3(rep3(2, 32, rng))).collect()
    };
    let (a, b) = (batch(&mut rng), batch(&mut rng));
    let call = |p: &mut Pipeline, q: &[Coded], chunk: i64| {
        // SAFETY: the reference kernel matches the shares.
        let (v, job) =
            unsafe { batch_dot(p, 9, 1, q.to_vec(), g.clone(), chunk, 4, kernel.clone(), 2) }
                .unwrap();
        (v.iter().map(flat).collect::<Vec<_>>(), job.is_some())
    };
    let direct = |q: &[Coded], chunk| call(&mut Pipeline::default(), q, chunk).0;

    let mut p = Pipeline::default();
    assert!(!call(&mut p, &a, 0).1);
    assert_eq!(p.pending(9), Some(1));
    let (got, from_job) = call(&mut p, &a, 1);
    assert!(from_job, "chunk 1 came from the background job");
    assert_eq!(got, direct(&a, 1));
    assert_eq!(p.pending(9), Some(2));

    // Another batch (other codes) for chunk 2: the job for a's chunk 2 is not used.
    let (got, from_job) = call(&mut p, &b, 2);
    assert!(!from_job);
    assert_eq!(got, direct(&b, 2));
    assert_ne!(got, direct(&a, 2));
    assert_eq!(p.pending(9), None, "chunk 2 is the last");

    // Equal codes in new values are another batch too (recomputed, same result).
    call(&mut p, &a, 0);
    let a2: Vec<Coded> = a
        .iter()
        .map(|q| match q {
            Coded::Rep3(c) => Coded::Rep3(Arc::new(c.select(0..c.count))),
            _ => unreachable!(),
        })
        .collect();
    let (got, from_job) = call(&mut p, &a2, 1);
    assert!(!from_job);
    assert_eq!(got, direct(&a, 1));

    // The same batch, another chunk: the pending job (chunk 2) is discarded.
    assert_eq!(p.pending(9), Some(2));
    let (got, from_job) = call(&mut p, &a2, 0);
    assert!(!from_job);
    assert_eq!(got, direct(&a, 0));
    assert_eq!(p.pending(9), Some(1));

    // Jobs under other result slots are independent.
    // SAFETY: as above.
    unsafe { batch_dot(&mut p, 10, 1, b.clone(), g.clone(), 0, 4, kernel.clone(), 1) }.unwrap();
    assert_eq!((p.pending(9), p.pending(10)), (Some(1), Some(1)));
}

/// Dropping the pipeline joins its jobs: they release the gallery they shared.
#[test]
fn pending_jobs_are_joined_on_drop() {
    let mut rng = ChaCha12Rng::seed_from_u64(6);
    let g = rep3(40, 64, &mut rng);
    let q = vec![Coded::Rep3(rep3(31, 64, &mut rng))];
    let mut p = Pipeline::default();
    // SAFETY: the reference kernel matches the shares.
    unsafe {
        batch_dot(
            &mut p,
            0,
            0,
            q.clone(),
            Coded::Rep3(g.clone()),
            0,
            8,
            masked_kernel_for(8),
            2,
        )
    }
    .unwrap();
    assert_eq!(p.pending(0), Some(1));
    assert!(Arc::strong_count(&g) > 1);
    drop(p);
    assert_eq!(
        Arc::strong_count(&g),
        1,
        "the job ended and dropped its operands"
    );
    let mut p = Pipeline::default();
    // SAFETY: as above.
    unsafe {
        batch_dot(
            &mut p,
            0,
            0,
            q,
            Coded::Rep3(g.clone()),
            0,
            8,
            masked_kernel_for(8),
            1,
        )
    }
    .unwrap();
    p.discard_all();
    assert_eq!((p.pending(0), Arc::strong_count(&g)), (None, 1));
}
