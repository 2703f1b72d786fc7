//! Tests of the tiled gallery scan, one file per concept, and what they share: stand-ins for
//! the generated kernels, random codes of either sharing, and dot products as plain numbers.

mod append;
mod batch_dot;
mod batched;
mod chunks;
mod pipeline;

use std::sync::Arc;

use rand::Rng;
use rand_chacha::ChaCha12Rng;

use super::DotKernel;
use crate::io::share_file::RingVec;
use crate::kernels::reference::stand_in::{ref_masked, ref_shamir};
use crate::kernels::run::ErasedKernel;
use crate::ops::shamir_codes::{ShamirCodes, ShamirKind, Side};
use crate::ops::value::Value;
use crate::share::fp::P;
use crate::share::Codes;

const L: usize = 128;

fn masked_kernel_for(bytes: usize) -> DotKernel {
    let k = match bytes {
        2 => ref_masked::<u16, L> as *const (),
        4 => ref_masked::<u32, L> as *const (),
        _ => ref_masked::<u64, L> as *const (),
    };
    DotKernel::Masked(ErasedKernel(crate::kernels::nest::Nests::single(k)))
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
