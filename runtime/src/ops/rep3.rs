//! The ops of the iris test over replicated codes (rotation, masked dot product, mask lengths,
//! reshare, threshold, MSB, OR tree, opening): one function per `mpc` dialect op, from its
//! operand values to its result.

use std::sync::Arc;

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::iris::Thresholds;
use crate::kernels::run::{masked_dot_records, masked_kernel};
use crate::kernels::KernelTable;
use crate::protocol;
use crate::ring::RingElem;
use crate::share::rep3::{AddVec, Rep3Vec};

use super::ctx::{sched, Ctx};
use super::placement::{self, PublicThirds};
use super::value::Value;
use crate::share::ring_vec::on_pair;
use crate::share::Codes;
use crate::vocab::ThresholdPlacement;

fn codes<'v>(v: &'v Value, op: &str) -> Result<&'v Arc<Codes>, RuntimeError> {
    match v {
        Value::Codes(c) => Ok(c),
        other => Err(sched(format!(
            "{op}: operand holds {}, expected codes",
            other.kind()
        ))),
    }
}

/// Every code (its mirror image, of a code or of a mask, as `mirror` says) rotated by each
/// shift in `lo..=hi` (local; replicated or Shamir codes).
pub fn rotate(
    _cx: &mut Ctx<'_>,
    src: &Value,
    lo: i32,
    hi: i32,
    mirror: crate::vocab::Mirror,
) -> Result<Value, RuntimeError> {
    if let Value::Shamir(s) = src {
        return Ok(Value::Shamir(Arc::new(s.rotations_of(lo, hi, mirror)?)));
    }
    let codes = codes(src, "rotate")?;
    codes.check_shares("rotate", "codes")?;
    Ok(Value::Codes(Arc::new(codes.rotations_of(lo, hi, mirror))))
}

/// The local half of the dot product of Appendix C (eq. 6): the generated kernel computes
/// each party's additive share `<a_q, a_g> - <b_q, b_g>` for every (record, code) pair,
/// records split across the context's threads ([`masked_dot_records`] over the whole gallery).
///
/// # Safety
/// `table` must be the compiler-generated table of masked-dot kernel variants for the
/// storage width of these shares (the schedule passes the one generated for the ring).
pub unsafe fn masked_dot(
    cx: &mut Ctx<'_>,
    query: &Value,
    gallery: &Value,
    table: *const KernelTable,
) -> Result<Value, RuntimeError> {
    let (q, g) = (codes(query, "masked_dot")?, codes(gallery, "masked_dot")?);
    // With a GPU attached, 16- and 32-bit rings run there ([`crate::gpu`]).
    if let Some(gpu) = cx.gpu.clone() {
        if crate::gpu::replicated_on_gpu(g.a.word_bytes(), g.bits).is_some() {
            return Ok(Value::Additive(gpu.masked_dot_records(q, g, 0..g.count)?));
        }
        gpu.note_cpu_dot();
    }
    // SAFETY: the caller's contract.
    let kernel = unsafe { masked_kernel(table, q.bits) }?;
    // SAFETY: the caller promises the kernels of this storage width.
    let out = unsafe { masked_dot_records(q, g, 0..g.count, kernel, cx.threads) }?;
    Ok(Value::Additive(out))
}

/// `ml` of every (record, code) pair from the public masks (replicated or Shamir codes).
///
/// `holders` 0: every pair's mask length; 1 or 2: only those of the record thirds whose share
/// component this party holds when each is held by that many parties
/// ([`ThresholdPlacement::RecordThirds`]).
pub fn mask_len(
    cx: &mut Ctx<'_>,
    query: &Value,
    gallery: &Value,
    holders: usize,
) -> Result<Value, RuntimeError> {
    let (q_masks, q_count, g_masks, g_count, w) = match (query, gallery) {
        (Value::Shamir(q), Value::Shamir(g)) => {
            if holders == 0 {
                return Ok(Value::Public(super::shamir_codes::mask_lengths(q, g)?));
            }
            if q.len != g.len {
                return Err(sched(format!(
                    "mask_len: codes of {} and {} entries",
                    q.len, g.len
                )));
            }
            (
                &q.masks,
                q.count,
                &g.masks,
                g.count,
                q.mask_words_per_code(),
            )
        }
        _ => {
            let (q, g) = (codes(query, "mask_len")?, codes(gallery, "mask_len")?);
            if holders == 0 {
                return Ok(Value::Public(mask_lengths(q, g)));
            }
            if q.bits != g.bits {
                return Err(sched("mask_len: query and gallery codes differ in length"));
            }
            (&q.masks, q.count, &g.masks, g.count, q.words_per_code())
        }
    };
    let thirds = placement::mask_lengths_by_thirds(
        cx.party(),
        holders,
        q_count,
        g_masks,
        g_count,
        w,
        |g, n, out| {
            super::mask_lengths::mask_lengths_into(q_masks, q_count, g, n, w, out);
            Ok(())
        },
    )?;
    Ok(Value::PublicThirds(Arc::new(thirds)))
}

/// Additive shares over Z_2^k to fresh replicated shares (Appendix C): one round.
pub fn reshare(cx: &mut Ctx<'_>, src: &Value, ring_bits: u32) -> Result<Value, RuntimeError> {
    let Value::Additive(add) = src else {
        return Err(sched(format!(
            "reshare of {}, which is not additive",
            src.kind()
        )));
    };
    let (net, prss) = (&mut *cx.net, &mut *cx.prss);
    let gpu = cx.gpu.clone();
    let (own, prev) = on_pair!(add, add, |v, _same| {
        let r = reshare_where(gpu.as_deref(), net, prss, v, ring_bits)?;
        (RingVec::from(r.own), RingVec::from(r.prev))
    })?;
    cx.rounds += 1;
    Ok(Value::Replicated { own, prev })
}

/// `T - dot` for every pair, with the public threshold added to component 0 only
/// ([`ThresholdPlacement::Component0`]), or by component c on the c-th third of the records
/// ([`ThresholdPlacement::RecordThirds`], [`super::placement`]).
pub fn sub_threshold(
    cx: &mut Ctx<'_>,
    dot: &Value,
    mask_len: &Value,
    num: i64,
    den: i64,
    ring_bits: u32,
    placement: ThresholdPlacement,
) -> Result<Value, RuntimeError> {
    if den <= 0 || num < 0 {
        return Err(sched(format!("invalid ratio {num}/{den}")));
    }
    match (placement, mask_len) {
        (ThresholdPlacement::RecordThirds, Value::PublicThirds(ml)) => {
            return sub_threshold_by_thirds(cx, dot, ml, num, den, ring_bits)
        }
        (ThresholdPlacement::Component0, Value::Public(_)) => {}
        (p, v) => {
            return Err(sched(format!(
                "sub_threshold placed as {} reads {}",
                p.name(),
                v.kind()
            )))
        }
    }
    let Value::Public(ml) = mask_len else {
        return Err(sched(format!(
            "sub_threshold: {} is not public",
            mask_len.kind()
        )));
    };
    let thresholds = Thresholds::new(num as u64, den as u64, ml);
    let party = cx.party();
    let threads = cx.threads;
    if let Value::Additive(z) = dot {
        // Additive shares: party 0 adds the threshold to its share, every party negates.
        if ml.len() != z.len() {
            return Err(sched("threshold and dot product sizes differ".to_string()));
        }
        let out = on_pair!(z, z, |v, _same| {
            let (o, _) = sub_from_public(
                v,
                &[],
                ml,
                &thresholds,
                party == 0,
                false,
                ring_bits,
                threads,
            );
            RingVec::from(o)
        })?;
        return Ok(Value::Additive(out));
    }
    let Value::Replicated { own, prev } = dot else {
        return Err(sched(format!(
            "sub_threshold: {} is neither additive nor replicated",
            dot.kind()
        )));
    };
    if ml.len() != own.len() {
        return Err(sched("threshold and dot product sizes differ".to_string()));
    }
    // Party 0 holds component 0 as `own`, party 1 as `prev`.
    let (add_own, add_prev) = (party == 0, party == 1);
    let (own, prev) = on_pair!(own, prev, |o, p| {
        let (o, p) = sub_from_public(o, p, ml, &thresholds, add_own, add_prev, ring_bits, threads);
        (RingVec::from(o), RingVec::from(p))
    })?;
    Ok(Value::Replicated { own, prev })
}

/// [`sub_threshold`] placed by record thirds: party p's own component is component p, its
/// previous one (replicated shares) component p − 1; component c adds the threshold on the
/// c-th third of the records.
fn sub_threshold_by_thirds(
    cx: &mut Ctx<'_>,
    dot: &Value,
    ml: &PublicThirds,
    num: i64,
    den: i64,
    ring_bits: u32,
) -> Result<Value, RuntimeError> {
    let thresholds = Thresholds::up_to(num as u64, den as u64, ml.max);
    let (party, threads) = (cx.party(), cx.threads);
    let same_size = |n: usize| {
        if n == ml.len() {
            Ok(())
        } else {
            Err(sched("threshold and dot product sizes differ".to_string()))
        }
    };
    if let Value::Additive(z) = dot {
        same_size(z.len())?;
        let adds = placement::adds_on(ml, party)?;
        let out = on_pair!(z, z, |v, _same| RingVec::from(placement::sub_from_thirds(
            v,
            ml,
            &thresholds,
            adds,
            ring_bits,
            threads
        )))?;
        return Ok(Value::Additive(out));
    }
    let Value::Replicated { own, prev } = dot else {
        return Err(sched(format!(
            "sub_threshold: {} is neither additive nor replicated",
            dot.kind()
        )));
    };
    same_size(own.len())?;
    let own_adds = placement::adds_on(ml, party)?;
    let prev_adds = placement::adds_on(ml, party + 2)?;
    let (own, prev) = on_pair!(own, prev, |o, p| {
        let o = placement::sub_from_thirds(o, ml, &thresholds, own_adds, ring_bits, threads);
        let p = placement::sub_from_thirds(p, ml, &thresholds, prev_adds, ring_bits, threads);
        (RingVec::from(o), RingVec::from(p))
    })?;
    Ok(Value::Replicated { own, prev })
}

/// Algorithm 10 (BitExtract) for the most significant bit of each value: k - 1 rounds.
pub fn msb(cx: &mut Ctx<'_>, src: &Value, ring_bits: u32) -> Result<Value, RuntimeError> {
    let Value::Replicated { own, prev } = src else {
        return Err(sched(format!(
            "msb of {}, which is not replicated",
            src.kind()
        )));
    };
    let (net, prss) = (&mut *cx.net, &mut *cx.prss);
    let gpu = cx.gpu.clone();
    let bits = on_pair!(own, prev, |o, p| msb_where(
        gpu.as_deref(),
        net,
        prss,
        o,
        p,
        ring_bits
    )?)?;
    cx.rounds += ring_bits.saturating_sub(1) as u64;
    Ok(Value::Bits(bits))
}

/// Reshare on the party's GPU when it has one that runs the comparison phase and the storage
/// is 16- or 32-bit; otherwise on the CPU, counted for `--stats`. The message and the shares
/// are the same either way.
fn reshare_where<T: RingElem>(
    gpu: Option<&crate::gpu::Session>,
    net: &mut dyn crate::net::Transport,
    prss: &mut crate::rand::prss::Prss,
    z: &[T],
    k: u32,
) -> Result<Rep3Vec<T>, RuntimeError> {
    if let Some(g) = gpu {
        if g.compares() && crate::contract::gpu::LimbWidth::of_bits(T::BITS).is_some() {
            return g.reshare(net, prss, z, k);
        }
        g.note_cpu_reshare();
    }
    Ok(protocol::reshare::reshare(
        net,
        prss,
        AddVec { own: z.to_vec() },
        k,
    )?)
}

/// AdditiveMSB on the party's GPU when it has one that runs the comparison phase, the storage
/// is 16- or 32-bit and the rounds are unchunked (as [`msb_where`]); otherwise on the CPU,
/// counted for `--stats`. The messages and the output shares are the same either way.
fn additive_msb_where<T: RingElem>(
    gpu: Option<&crate::gpu::Session>,
    net: &mut dyn crate::net::Transport,
    prss: &mut crate::rand::prss::Prss,
    z: &[T],
    k: u32,
) -> Result<crate::share::binary::BitShares, RuntimeError> {
    if let Some(g) = gpu {
        let fits = crate::contract::gpu::LimbWidth::of_bits(T::BITS).is_some();
        if g.compares() && fits && protocol::chunk_elems() == 0 {
            return g.additive_msb(net, prss, z, k);
        }
        if g.compares() {
            g.note_cpu_msb();
        }
    }
    Ok(protocol::additive_msb(net, prss, z, k)?)
}

/// [`msb_of`] on the party's GPU when it has one that runs the comparison phase, the storage
/// is 16- or 32-bit and the rounds are unchunked (all parties chunk alike, so a chunked run
/// stays on the CPU everywhere); otherwise on the CPU, counted for `--stats`. The messages
/// and the output shares are the same either way.
fn msb_where<T: RingElem>(
    gpu: Option<&crate::gpu::Session>,
    net: &mut dyn crate::net::Transport,
    prss: &mut crate::rand::prss::Prss,
    own: &[T],
    prev: &[T],
    k: u32,
) -> Result<crate::share::binary::BitShares, RuntimeError> {
    if let Some(g) = gpu {
        let fits = crate::contract::gpu::LimbWidth::of_bits(T::BITS).is_some();
        if g.compares() && fits && protocol::chunk_elems() == 0 {
            return g.msb(net, prss, own, prev, k);
        }
        g.note_cpu_msb();
    }
    msb_of(net, prss, own, prev, k)
}

/// AdditiveMSB ([`protocol::additive_msb()`]): the most significant bit of each value held as
/// additive shares, k + 1 rounds; its local steps on the party's GPU where it has one that
/// runs the comparison phase ([`additive_msb_where`]).
pub fn additive_msb(cx: &mut Ctx<'_>, src: &Value, ring_bits: u32) -> Result<Value, RuntimeError> {
    let Value::Additive(z) = src else {
        return Err(sched(format!(
            "additive_msb of {}, which is not additive",
            src.kind()
        )));
    };
    let (net, prss) = (&mut *cx.net, &mut *cx.prss);
    let gpu = cx.gpu.clone();
    let bits = on_pair!(z, z, |v, _same| additive_msb_where(
        gpu.as_deref(),
        net,
        prss,
        v,
        ring_bits
    )?)?;
    cx.rounds += protocol::additive_msb::rounds(ring_bits);
    Ok(Value::Bits(bits))
}

/// OR over consecutive groups of `group` bits (0: all), by a tree of AND gates.
pub fn or_groups(cx: &mut Ctx<'_>, src: &Value, group: u64) -> Result<Value, RuntimeError> {
    let Value::Bits(bits) = src else {
        return Err(sched(format!(
            "or over {}, which is not binary",
            src.kind()
        )));
    };
    let group = if group == 0 { bits.len } else { group as usize };
    if group == 0 || bits.len % group != 0 {
        return Err(sched(format!(
            "or groups of {group} over {} bits",
            bits.len
        )));
    }
    // On the party's GPU when it runs the comparison phase (the groups are of equal size,
    // checked above); the messages and shares are the CPU protocol's either way.
    let out = match &cx.gpu {
        Some(g) if g.compares() => g.or_groups(cx.net, cx.prss, bits, group)?,
        _ => protocol::or_tree::or_groups(cx.net, cx.prss, bits, group)?,
    };
    cx.rounds += (group as f64).log2().ceil() as u64;
    Ok(Value::Bits(out))
}

/// Opens binary shares to party `to`: one round.
pub fn open(cx: &mut Ctx<'_>, src: &Value, to: u32) -> Result<Value, RuntimeError> {
    let Value::Bits(bits) = src else {
        return Err(sched(format!(
            "open of {}, which is not binary",
            src.kind()
        )));
    };
    let opened = protocol::open::open_bits(cx.net, bits, to as usize)?;
    cx.rounds += 1;
    Ok(Value::Clear(opened))
}

/// `ml` of every (record, code) pair of gallery `g` and codes `q`, record-major, from the
/// public masks alone: the shares are not read, so `g` may be a gallery view without shares.
pub(crate) fn mask_lengths(q: &Codes, g: &Codes) -> Vec<u64> {
    let w = q.words_per_code();
    super::mask_lengths::mask_lengths(&q.masks, q.count, &g.masks, g.count, w)
}

/// `threshold(ml) - x` on the share component that holds component 0 (`add_*`), `-x` on the
/// others, reduced to k bits; on up to `threads` threads.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sub_from_public<T: RingElem>(
    own: &[T],
    prev: &[T],
    mask_lens: &[u64],
    thresholds: &Thresholds,
    add_own: bool,
    add_prev: bool,
    k: u32,
    threads: usize,
) -> (Vec<T>, Vec<T>) {
    let fill = |out: &mut [T], v: &[T], ml: &[u64], add: bool| {
        for ((o, &x), &m) in out.iter_mut().zip(v).zip(ml) {
            let neg = x.wrapping_neg();
            let y = if m == 0 {
                // No position valid in both: masked bits are 0 outside their own mask, so
                // the dot product is 0 and so is `T(0) - dot`, public. Its sharing is fixed
                // here, whatever the dot product's shares: a deleted record, whose public mask
                // is emptied while its shares stay as stored (mapped), then never matches.
                T::ZERO
            } else if add {
                neg.wrapping_add(T::from_u64(thresholds.of(m) as u64))
            } else {
                neg
            };
            *o = y.mask_to(k);
        }
    };
    let f = |v: &[T], add: bool| -> Vec<T> {
        let mut out = vec![T::ZERO; v.len()];
        // Pieces of at least 64 Ki pairs: below that a thread costs more than it saves.
        let per = v.len().div_ceil(threads.max(1)).max(1 << 16);
        if per >= v.len() {
            fill(&mut out, v, mask_lens, add);
            return out;
        }
        std::thread::scope(|s| {
            for (i, piece) in out.chunks_mut(per).enumerate() {
                let at = i * per..i * per + piece.len();
                let (v, ml, fill) = (&v[at.clone()], &mask_lens[at], &fill);
                s.spawn(move || fill(piece, v, ml, add));
            }
        });
        out
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

#[cfg(test)]
mod threshold_tests {
    use super::sub_from_public;
    use crate::iris::Thresholds;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// The plain threshold of the fractional Hamming distance test, `⌊(1 − 2·num/den)·ml⌋`,
    /// written out here apart from the runtime's.
    fn plain_threshold(num: u64, den: u64, ml: u64) -> i128 {
        let (num, den, ml) = (num as i128, den as i128, ml as i128);
        ((den - 2 * num) * ml).div_euclid(den)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// Three parties' `sub_from_public` outputs open to `T(ml) − x` mod 2^k, whether the
        /// thresholds come from the table or per pair (lengths past its end), on one thread
        /// or several (more than 64 Ki pairs are split), at ring edges; pairs with no common
        /// valid bit (`ml` = 0) open to the public 0 whatever `x` their shares hold (a
        /// deleted record's).
        #[test]
        fn shares_open_to_the_threshold_minus_the_value(
            seed in any::<u64>(),
            k in prop::sample::select(vec![1u32, 15, 16, 17, 31, 32, 48, 64]),
            num in 0u64..100, den in 1u64..100,
            n in prop::sample::select(vec![0usize, 1, 7, 70_000, 200_001]),
            wide in any::<bool>(), threads in 1usize..5,
        ) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mask = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
            let ml_max = if wide { 1u64 << 22 } else { 12_800 };
            let edge = [0u64, 1, mask, mask >> 1, (mask >> 1) + 1];
            let xs: Vec<u64> = (0..n)
                .map(|i| if i < edge.len() { edge[i] } else { rng.random::<u64>() & mask })
                .collect();
            let ml: Vec<u64> = (0..n)
                .map(|i| match i % 97 {
                    0 => ml_max,
                    3 | 50 => 0,
                    _ => rng.random_range(0..=ml_max),
                })
                .collect();
            // Additive shares a + b + c = x.
            let a: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & mask).collect();
            let b: Vec<u64> = (0..n).map(|_| rng.random::<u64>() & mask).collect();
            let c: Vec<u64> = (0..n)
                .map(|i| xs[i].wrapping_sub(a[i]).wrapping_sub(b[i]) & mask)
                .collect();
            let t = Thresholds::new(num, den, &ml);
            // Component 0 (a) gets the threshold; the replicated pairs are (a, c), (b, a), (c, b).
            let (a0, c0) = sub_from_public(&a, &c, &ml, &t, true, false, k, threads);
            let (b1, a1) = sub_from_public(&b, &a, &ml, &t, false, true, k, threads);
            let (c2, b2) = sub_from_public(&c, &b, &ml, &t, false, false, k, threads);
            // Each component as its two holders hold it.
            prop_assert_eq!(&a0, &a1);
            prop_assert_eq!(&b1, &b2);
            prop_assert_eq!(&c2, &c0);
            for i in 0..n {
                let want = if ml[i] == 0 {
                    0
                } else {
                    (plain_threshold(num, den, ml[i]) as u64).wrapping_sub(xs[i]) & mask
                };
                let got = a0[i].wrapping_add(b1[i]).wrapping_add(c2[i]) & mask;
                prop_assert_eq!(got, want, "pair {} (x {}, ml {})", i, xs[i], ml[i]);
            }
        }
    }
}

#[cfg(test)]
mod additive_compare_tests {
    use super::{additive_msb, msb, sub_threshold};
    use crate::io::share_file::RingVec;
    use crate::ops::ctx::testkit::{deal, open_bits, rep_value, run3};
    use crate::ops::placement::mask_lengths_by_thirds;
    use crate::ops::value::Value;
    use crate::vocab::ThresholdPlacement;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;
    use std::sync::Arc;

    /// The fractional Hamming distance test with public masks, from its definition: the pair
    /// matches iff hd / ml < num / den (no match when ml = 0).
    fn plain_match(ml: u64, hd: u64, num: u64, den: u64) -> bool {
        (hd as u128) * (den as u128) < (num as u128) * (ml as u128)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// `sub_threshold` on additive dot products, then `additive_msb`, at three parties:
        /// the opened bits are the plain test's, on random pairs, exact ties, both ends of
        /// the masks and the deployed ratio.
        #[test]
        fn additive_threshold_and_msb_give_the_plain_matches(
            seed: u64,
            // T - dot spans up to [-12 800, 25 600]: Z_2^16 is the smallest ring that holds it.
            k in prop::sample::select(vec![16u32, 17, 32, 64]),
            num in prop::sample::select(vec![69u64, 1, 0, 99]),
        ) {
            let den = 200u64;
            let l = 12_800u64;
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mut pairs: Vec<(u64, u64)> = (0..300)
                .map(|_| {
                    let ml = rng.random_range(0..=l);
                    (ml, rng.random_range(0..=ml))
                })
                .collect();
            // Both ends, and ties hd = r * ml (ml a multiple of den).
            pairs.extend([(0, 0), (l, 0), (l, l), (1, 0), (1, 1), (den * 64, num * 64), (den, num)]);
            let mask = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
            let dots: Vec<u64> = pairs.iter().map(|&(ml, hd)| (ml as i64 - 2 * hd as i64) as u64 & mask).collect();
            let ml: Vec<u64> = pairs.iter().map(|p| p.0).collect();
            let mut shares: [Vec<u64>; 3] = Default::default();
            for &d in &dots {
                let (a, b): (u64, u64) = (rng.random(), rng.random());
                for (s, z) in shares.iter_mut().zip([a & mask, b & mask, d.wrapping_sub(a).wrapping_sub(b) & mask]) {
                    s.push(z);
                }
            }
            let value = |v: &Vec<u64>| -> Value {
                if k <= 16 {
                    Value::Additive(RingVec::from(v.iter().map(|&x| x as u16).collect::<Vec<u16>>()))
                } else if k <= 32 {
                    Value::Additive(RingVec::from(v.iter().map(|&x| x as u32).collect::<Vec<u32>>()))
                } else {
                    Value::Additive(RingVec::from(v.clone()))
                }
            };
            let inputs = [0, 1, 2].map(|p| (value(&shares[p]), Value::Public(ml.clone())));
            let runs = run3(inputs, move |cx, (dot, ml): &(Value, Value)| {
                let diff = sub_threshold(cx, dot, ml, num as i64, den as i64, k, ThresholdPlacement::Component0).unwrap();
                match additive_msb(cx, &diff, k).unwrap() {
                    Value::Bits(b) => b,
                    other => panic!("additive_msb gave {}", other.kind()),
                }
            });
            prop_assert!(runs.iter().all(|r| r.rounds == u64::from(k) + 1));
            let [a, b, c] = runs.map(|r| r.out);
            let got = open_bits([a, b, c]);
            let want: Vec<bool> = pairs.iter().map(|&(ml, hd)| plain_match(ml, hd, num, den)).collect();
            prop_assert_eq!(got, want);
        }
    }

    /// A gallery of `records` records of `w` mask words against `width` query masks: its masks
    /// (some records deleted: mask emptied), every pair's popcount, and dot products
    /// `ml - 2 hd` for a random `hd <= ml`, stale for deleted records (their shares are kept).
    struct Gallery {
        q: Vec<u64>,
        g: Vec<u64>,
        ml: Vec<u64>,
        hd: Vec<u64>,
        dots: Vec<u64>,
        deleted: Vec<bool>,
    }

    fn gallery(rng: &mut ChaCha12Rng, records: usize, width: usize, w: usize) -> Gallery {
        let mask = |rng: &mut ChaCha12Rng| -> u64 {
            match rng.random_range(0..6) {
                0 => 0,
                1 => u64::MAX,
                _ => rng.random::<u64>() | rng.random::<u64>(),
            }
        };
        let q: Vec<u64> = (0..width * w).map(|_| mask(rng)).collect();
        let deleted: Vec<bool> = (0..records).map(|_| rng.random_range(0..5) == 0).collect();
        let mut g: Vec<u64> = (0..records * w).map(|_| mask(rng)).collect();
        let (mut ml, mut hd, mut dots) = (vec![], vec![], vec![]);
        for r in 0..records {
            // The masks the record was dealt with; a deleted record's public mask is emptied.
            let dealt: Vec<u64> = g[r * w..(r + 1) * w].to_vec();
            if deleted[r] {
                g[r * w..(r + 1) * w].fill(0);
            }
            for c in 0..width {
                let pop = |m: &[u64]| -> u64 {
                    (0..w)
                        .map(|i| u64::from((q[c * w + i] & m[i]).count_ones()))
                        .sum()
                };
                let (now, then) = (pop(&g[r * w..(r + 1) * w]), pop(&dealt));
                let h = rng.random_range(0..=then);
                ml.push(now);
                hd.push(h);
                dots.push((then as i64 - 2 * h as i64) as u64);
            }
        }
        Gallery {
            q,
            g,
            ml,
            hd,
            dots,
            deleted,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The threshold placed by record thirds: each party computes only the mask lengths of
        /// the thirds its components add to, and `sub_threshold` then the MSB (AdditiveMSB on
        /// additive shares, BitExtract on replicated ones) opens exactly the plain test's bits,
        /// with deleted records (emptied masks, stale shares) never matching. Galleries of 0 to
        /// 40 records (thirds of 0 records included), disjoint and full masks among them.
        #[test]
        fn record_thirds_give_the_plain_matches(
            seed: u64,
            records in 0usize..40,
            width in 1usize..6,
            w in 1usize..3,
            replicated: bool,
            num in prop::sample::select(vec![69u64, 0, 100, 1]),
        ) {
            let (den, k) = (200u64, 16u32);
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let gal = gallery(&mut rng, records, width, w);
            let holders = if replicated { 2 } else { 1 };
            let thirds = [0, 1, 2].map(|p| {
                Arc::new(mask_lengths_by_thirds(p, holders, width, &gal.g, records, w, |g, n, out| {
                    { super::super::mask_lengths::mask_lengths_into(&gal.q, width, g, n, w, out); Ok(()) }
                })
                .unwrap())
            });
            let dots = deal(&gal.dots, k, seed ^ 1);
            let inputs: [(Value, Value); 3] = std::array::from_fn(|p| {
                let dot = if replicated {
                    rep_value(&dots[p], k)
                } else {
                    // Party p's additive share: its own replicated component.
                    Value::Additive(RingVec::from(dots[p].own.iter().map(|&x| x as u16).collect::<Vec<u16>>()))
                };
                (dot, Value::PublicThirds(thirds[p].clone()))
            });
            let runs = run3(inputs, move |cx, (dot, ml): &(Value, Value)| {
                let diff = sub_threshold(cx, dot, ml, num as i64, den as i64, k, ThresholdPlacement::RecordThirds).unwrap();
                let bits = if replicated { msb(cx, &diff, k) } else { additive_msb(cx, &diff, k) };
                match bits.unwrap() {
                    Value::Bits(b) => b,
                    other => panic!("msb gave {}", other.kind()),
                }
            });
            let [a, b, c] = runs.map(|r| r.out);
            let got = open_bits([a, b, c]);
            let want: Vec<bool> = (0..records * width)
                .map(|i| !gal.deleted[i / width] && plain_match(gal.ml[i], gal.hd[i], num, den))
                .collect();
            prop_assert_eq!(got, want);
        }
    }

    /// Matches really occur in every third (the property above is not vacuous): at the
    /// deployed ratio, a 30-record gallery has matching pairs in each third and none in a
    /// deleted record.
    #[test]
    fn thirds_gallery_has_matches_in_every_third() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        let (records, width) = (30, 4);
        let gal = gallery(&mut rng, records, width, 2);
        for c in 0..3 {
            let r = crate::vocab::record_third(c, records);
            let n = (r.start * width..r.end * width)
                .filter(|&i| !gal.deleted[i / width] && plain_match(gal.ml[i], gal.hd[i], 69, 200))
                .count();
            assert!(n > 0, "third {c} has no match");
        }
        assert!(gal.deleted.iter().any(|&d| d));
    }

    /// A placement and mask lengths that disagree are refused, not computed.
    #[test]
    fn placements_that_disagree_are_refused() {
        let mut rng = ChaCha12Rng::seed_from_u64(9);
        let gal = gallery(&mut rng, 6, 2, 1);
        let dots = deal(&gal.dots, 16, 2);
        let inputs: [(Value, Value, Value); 3] = std::array::from_fn(|p| {
            // Party p was given the thirds of party p + 1.
            let t = mask_lengths_by_thirds((p + 1) % 3, 1, 2, &gal.g, 6, 1, |g, n, out| {
                super::super::mask_lengths::mask_lengths_into(&gal.q, 2, g, n, 1, out);
                Ok(())
            })
            .unwrap();
            let add = Value::Additive(RingVec::from(
                dots[p].own.iter().map(|&x| x as u16).collect::<Vec<u16>>(),
            ));
            (
                add,
                Value::PublicThirds(Arc::new(t)),
                Value::Public(gal.ml.clone()),
            )
        });
        let runs = run3(inputs, |cx, (dot, thirds, full): &(Value, Value, Value)| {
            let errors = [
                sub_threshold(
                    cx,
                    dot,
                    thirds,
                    69,
                    200,
                    16,
                    ThresholdPlacement::RecordThirds,
                ),
                sub_threshold(cx, dot, thirds, 69, 200, 16, ThresholdPlacement::Component0),
                sub_threshold(cx, dot, full, 69, 200, 16, ThresholdPlacement::RecordThirds),
            ];
            errors.map(|e| e.err().map(|e| e.to_string()))
        });
        for r in runs {
            let [a, b, c] = r.out;
            assert!(a.unwrap().contains("placements differ"));
            assert!(b.unwrap().contains("reads mask lengths of record thirds"));
            assert!(c.unwrap().contains("reads public values"));
        }
    }
}
