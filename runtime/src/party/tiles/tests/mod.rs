//! Tests of the tiled gallery scan, one file per concept, and what they share: stand-ins for
//! the generated kernels, random codes of either sharing, and dot products as plain numbers.

mod append;
mod batch_dot;
mod chunks;
mod pipeline;

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha12Rng;

use super::DotKernel;
use crate::io::share_file::RingVec;
use crate::kernels::{fp_dot_reference, gr_dot_reference, masked_dot_reference};
use crate::party::codes::Codes;
use crate::party::ops::ErasedKernel;
use crate::party::shamir_codes::{ShamirCodes, ShamirKind, Side};
use crate::party::values::Value;
use crate::ring::RingElem;
use crate::share::fp::P;

/// A stand-in for a generated replicated kernel over codes of `L` elements.
unsafe extern "C" fn ref_masked<T: RingElem, const L: usize>(
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
unsafe extern "C" fn ref_shamir<const FP: bool, const W: usize>(
    q: *const u16,
    _qb: *const u16,
    n_codes: i64,
    g: *const u16,
    _gb: *const u16,
    n_records: i64,
    out: *mut u16,
) {
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

const L: usize = 128;

fn masked_kernel_for(bytes: usize) -> DotKernel {
    let k = match bytes {
        2 => ref_masked::<u16, L> as *const (),
        4 => ref_masked::<u32, L> as *const (),
        _ => ref_masked::<u64, L> as *const (),
    };
    DotKernel::Masked(ErasedKernel(k))
}

/// Replicated codes of random shares in Z_2^k (k picks the storage width).
fn rep3(count: usize, k: u32, rng: &mut ChaCha12Rng) -> Arc<Codes> {
    let mut vals =
        |n: usize| RingVec::from_u64s(k, (0..n).map(|_| rng.random::<u64>() >> (64 - k))).unwrap();
    let (own, prev) = (vals(count * L), vals(count * L));
    let ids = (0..count as u64).map(|i| 1000 + i).collect();
    let masks = (0..count * L / 64)
        .map(|i| i as u64 * 0x9e37_79b9)
        .collect();
    Arc::new(Codes::from_components(own, prev, count, L, ids, masks))
}

/// Shamir codes of random (valid for the kind) words, `len` entries each.
fn shamir(
    kind: ShamirKind,
    side: Side,
    count: usize,
    len: usize,
    rng: &mut ChaCha12Rng,
) -> Arc<ShamirCodes> {
    let words: Vec<u16> = (0..count * kind.words_per_code(len))
        .map(|_| rng.random_range(0..P))
        .collect();
    let masks = (0..count * len.div_ceil(64))
        .map(|_| rng.random())
        .collect();
    let ids = (0..count as u64).map(|i| 7 * i).collect();
    Arc::new(ShamirCodes::new(kind, side, count, len, ids, masks, words).unwrap())
}

/// A dot product's value as (storage bytes, elements).
fn flat(v: &Value) -> (usize, Vec<u64>) {
    match v {
        Value::Additive(a) => (a.word_bytes(), a.iter_u64().collect()),
        Value::AdditiveP(a) => (0, a.iter().map(|&x| x as u64).collect()),
        other => panic!("unexpected {}", other.kind()),
    }
}
