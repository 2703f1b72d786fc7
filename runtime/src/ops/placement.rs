//! The threshold placed by record thirds ([`ThresholdPlacement::RecordThirds`]): the public
//! mask lengths each party computes, and `T(ml) − dot` with the threshold added by one share
//! component per third of the records.
//!
//! Lemma 1's plain-mask test adds the public threshold `T(ml)` to one share component and
//! negates the others. Only the parties holding that component read `ml`; computing every
//! mask length at every party (what [`ThresholdPlacement::Component0`] does) repeats the same
//! public popcounts three times. Here component c adds the threshold on the c-th third of each
//! call's records, so a party computes the mask lengths of the thirds whose component it holds:
//! one third of them under additive shares, two thirds under replicated ones.
//!
//! The other use of `ml` at every party was the empty-mask rule: a pair with `ml = 0` compared
//! the public 0 whatever its shares, because a deleted record keeps its shares under an
//! emptied public mask. Every party now reads that from the record's gallery mask (empty: all
//! of the record's pairs compare the public 0, shared as zeros). A pair with `ml = 0` in a
//! record whose mask is not empty has dot product 0 (masked bits are 0 outside their own mask)
//! and `T(0) = 0`, so it compares 0 too, with its shares as computed.

use crate::error::RuntimeError;
use crate::iris::matching::Thresholds;
use crate::ring::RingElem;
use crate::vocab::{holds_component, record_third};

/// A schedule error (as `ctx::sched`, which this module cannot use: `ctx` reads values).
fn sched(m: impl Into<String>) -> RuntimeError {
    RuntimeError::Schedule(m.into())
}

/// Mask lengths of (record, code) pairs computed on the record thirds this party holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicThirds {
    /// `ml` of every pair, record-major (`width` per record); 0 on the records of the thirds
    /// this party does not hold, where nothing reads them.
    pub values: Vec<u32>,
    /// Pairs per record.
    pub width: usize,
    /// The thirds whose mask lengths were computed here.
    pub held: [bool; 3],
    /// Records whose gallery mask is empty (deleted): their pairs compare the public 0.
    pub empty: Vec<bool>,
    /// The largest value computed (what the threshold table must reach).
    pub max: u64,
}

impl PublicThirds {
    pub fn records(&self) -> usize {
        self.empty.len()
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The mask lengths of `g_count` gallery masks (`w` words each) with `q_count` query masks,
/// computed by `compute(gallery_masks, records, out)` (into `out`, record-major, `q_count` per
/// record) on the thirds `party` holds when each component is held by `holders` parties (1 or
/// 2). The values of the other thirds are never written, so their pages are never touched.
pub(crate) fn mask_lengths_by_thirds(
    party: usize,
    holders: usize,
    q_count: usize,
    g: &[u64],
    g_count: usize,
    w: usize,
    mut compute: impl FnMut(&[u64], usize, &mut [u32]) -> Result<(), RuntimeError>,
) -> Result<PublicThirds, RuntimeError> {
    if !(1..=2).contains(&holders) || party > 2 {
        return Err(sched(format!(
            "mask lengths by record thirds: {holders} holders per component at party {party}"
        )));
    }
    if g.len() < g_count * w {
        return Err(sched(
            "mask lengths: gallery masks shorter than their count",
        ));
    }
    let held = [0, 1, 2].map(|c| holds_component(party, c, holders));
    let mut values = vec![0u32; g_count * q_count];
    let mut max = 0;
    for (c, _) in held.iter().enumerate().filter(|(_, h)| **h) {
        let r = record_third(c, g_count);
        if r.is_empty() {
            continue;
        }
        let out = &mut values[r.start * q_count..r.end * q_count];
        compute(&g[r.start * w..r.end * w], r.len(), out)?;
        max = max.max(out.iter().copied().max().map_or(0, u64::from));
    }
    let empty = (0..g_count)
        .map(|r| g[r * w..(r + 1) * w].iter().all(|&m| m == 0))
        .collect();
    Ok(PublicThirds {
        values,
        width: q_count,
        held,
        empty,
        max,
    })
}

/// The third on which share component `c` adds the threshold (the c-th), checked against the
/// thirds `ml` holds.
pub(crate) fn adds_on(ml: &PublicThirds, c: usize) -> Result<usize, RuntimeError> {
    if ml.held[c % 3] {
        return Ok(c % 3);
    }
    Err(sched(format!(
        "sub_threshold: component {} adds the threshold on record third {}, but this party's \
         mask lengths are of thirds {:?} (mask-length and threshold placements differ)",
        c % 3,
        c % 3,
        ml.held
    )))
}

/// `T(ml) − x` on the records of third `adds` and `−x` on the others, reduced to k bits; zeros
/// on records with an empty gallery mask. On up to `threads` threads.
pub(crate) fn sub_from_thirds<T: RingElem>(
    x: &[T],
    ml: &PublicThirds,
    thresholds: &Thresholds,
    adds: usize,
    k: u32,
    threads: usize,
) -> Vec<T> {
    let (w, records) = (ml.width, ml.records());
    let mut out = vec![T::ZERO; x.len()];
    if w == 0 || records == 0 {
        return out;
    }
    let adding = record_third(adds, records);
    let fill = |out: &mut [T], x: &[T], first: usize| {
        for (i, (o, x)) in out.chunks_exact_mut(w).zip(x.chunks_exact(w)).enumerate() {
            let r = first + i;
            if ml.empty[r] {
                continue;
            }
            if adding.contains(&r) {
                for ((o, &x), &m) in o.iter_mut().zip(x).zip(&ml.values[r * w..(r + 1) * w]) {
                    let t = T::from_u64(thresholds.of(u64::from(m)) as u64);
                    *o = x.wrapping_neg().wrapping_add(t).mask_to(k);
                }
            } else {
                for (o, &x) in o.iter_mut().zip(x) {
                    *o = x.wrapping_neg().mask_to(k);
                }
            }
        }
    };
    // Pieces of whole records, at least 64 Ki pairs: below that a thread costs more than it
    // saves.
    let per = records.div_ceil(threads.max(1)).max((1 << 16) / w).max(1);
    if per >= records {
        fill(&mut out, x, 0);
        return out;
    }
    std::thread::scope(|s| {
        for (i, (o, x)) in out.chunks_mut(per * w).zip(x.chunks(per * w)).enumerate() {
            let fill = &fill;
            s.spawn(move || fill(o, x, i * per));
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition: the popcount of every pair, bit by bit.
    fn popcounts(q: &[u64], q_count: usize, g: &[u64], g_count: usize, w: usize) -> Vec<u64> {
        let mut out = Vec::new();
        for r in 0..g_count {
            for c in 0..q_count {
                let n: u32 = (0..w)
                    .map(|i| (q[c * w + i] & g[r * w + i]).count_ones())
                    .sum();
                out.push(u64::from(n));
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Each party computes exactly the thirds of the components it holds, equal there to the
        /// popcounts; between them the holders of every component cover every record; empty
        /// gallery masks are flagged.
        #[test]
        fn thirds_are_computed_where_their_component_is_held(
            g_count in 0usize..40,
            q_count in 1usize..5,
            w in 1usize..4,
            holders in 1usize..=2,
            seed in any::<u64>(),
            deleted in proptest::collection::vec(any::<bool>(), 40),
        ) {
            let mut x = seed | 1;
            let mut next = || { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x };
            let q: Vec<u64> = (0..q_count * w).map(|_| next()).collect();
            let mut g: Vec<u64> = (0..g_count * w).map(|_| next()).collect();
            for r in 0..g_count {
                if deleted[r] {
                    g[r * w..(r + 1) * w].fill(0);
                }
            }
            let want = popcounts(&q, q_count, &g, g_count, w);
            let mut covered = vec![0usize; g_count];
            for party in 0..3 {
                let t = mask_lengths_by_thirds(party, holders, q_count, &g, g_count, w, |gs, n, out| {
                    for (o, v) in out.iter_mut().zip(popcounts(&q, q_count, gs, n, w)) {
                        *o = v as u32;
                    }
                    Ok(())
                })
                .unwrap();
                let held_max = (0..3)
                    .filter(|&c| holds_component(party, c, holders))
                    .flat_map(|c| record_third(c, g_count))
                    .flat_map(|r| want[r * q_count..(r + 1) * q_count].iter().copied())
                    .max()
                    .unwrap_or(0);
                prop_assert_eq!(t.max, held_max);
                prop_assert_eq!(t.len(), g_count * q_count);
                prop_assert_eq!(&t.empty, &deleted[..g_count].to_vec());
                for c in 0..3 {
                    prop_assert_eq!(t.held[c], holds_component(party, c, holders));
                    for r in record_third(c, g_count) {
                        let got = &t.values[r * q_count..(r + 1) * q_count];
                        if t.held[c] {
                            covered[r] += 1;
                            let got: Vec<u64> = got.iter().map(|&v| u64::from(v)).collect();
                            prop_assert_eq!(&got[..], &want[r * q_count..(r + 1) * q_count]);
                        } else {
                            prop_assert!(got.iter().all(|&v| v == 0));
                        }
                    }
                }
            }
            // Every record's third is computed by exactly its component's holders.
            prop_assert!(covered.iter().all(|&n| n == holders));
        }
    }

    #[test]
    fn thirds_cover_every_record_once() {
        for n in 0..50 {
            let all: Vec<usize> = (0..3).flat_map(|c| record_third(c, n)).collect();
            assert_eq!(all, (0..n).collect::<Vec<_>>(), "{n} records");
        }
    }

    #[test]
    fn a_component_not_held_is_refused() {
        let t = mask_lengths_by_thirds(1, 1, 1, &[1, 2, 3], 3, 1, |_, _, out| {
            out.fill(1);
            Ok(())
        })
        .unwrap();
        assert_eq!(t.held, [false, true, false]);
        assert_eq!(adds_on(&t, 1).unwrap(), 1);
        let e = adds_on(&t, 0).unwrap_err().to_string();
        assert!(e.contains("placements differ"), "{e}");
        assert!(mask_lengths_by_thirds(0, 3, 1, &[1], 1, 1, |_, _, _| Ok(())).is_err());
    }
}
