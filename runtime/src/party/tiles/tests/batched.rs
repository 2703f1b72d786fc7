//! The batched forms of the chunk stage's ops against their per-query forms, at three parties:
//! an op run once over the batch layout `[record][query][width]` gives, query by query, what
//! the op gives on that query's own values (and the plaintext definition), in one query's
//! rounds.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

use super::super::batched::{batch_mask_len, interleave, per_query_reduce, Reduction};
use super::super::layout;
use super::{rep3, shamir};
use crate::ops::ctx::testkit::{deal, open_bits, open_rep, rep_value, run3};
use crate::ops::ctx::Ctx;
use crate::ops::placement::PublicThirds;
use crate::ops::rep3 as rep3_ops;
use crate::ops::shamir_codes::{ShamirKind, Side};
use crate::ops::value::Value;
use crate::share::binary::{share_bits, BitShares};
use crate::share::rep3::Rep3Vec;

/// `per_query` values (`records x width` each) interleaved by hand: `[r][j][c]`.
fn by_hand<T: Copy>(per_query: &[Vec<T>], width: usize) -> Vec<T> {
    let records = per_query[0].len() / width;
    let mut out = Vec::new();
    for r in 0..records {
        for q in per_query {
            out.extend_from_slice(&q[r * width..(r + 1) * width]);
        }
    }
    out
}

fn bits_of(v: &Value) -> BitShares {
    match v {
        Value::Bits(b) => b.clone(),
        other => panic!("expected bits, got {}", other.kind()),
    }
}

fn rep_of(v: &Value) -> Rep3Vec<u64> {
    match v {
        Value::Replicated { own, prev } => Rep3Vec {
            own: own.iter_u64().collect(),
            prev: prev.iter_u64().collect(),
        },
        other => panic!("expected replicated shares, got {}", other.kind()),
    }
}

/// What one party computes: the batched reduction and each query's own reduction (of its part
/// picked out of the batch), with the rounds of each.
type Both = (Value, u64, Vec<Value>, u64);

fn both(cx: &mut Ctx<'_>, v: &Value, n: usize, width: usize, op: Reduction) -> Both {
    let before = cx.rounds;
    let batched = per_query_reduce(cx, v, n, width, op).unwrap();
    let batch_rounds = cx.rounds - before;
    let mut each = Vec::new();
    let mut one_rounds = 0;
    for j in 0..n {
        let part = layout::pick(v, n, width, j).unwrap();
        let before = cx.rounds;
        each.push(per_query_reduce(cx, &part, 1, width, op).unwrap());
        one_rounds = cx.rounds - before;
    }
    (batched, batch_rounds, each, one_rounds)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// OR and AND over all of each query's bits, batched, equal each query's own OR / AND and
    /// the plaintext, in the rounds of one query's reduction.
    #[test]
    fn or_and_over_each_query_equal_their_per_query_forms(
        n in 1usize..12, width in 1usize..6, records in 1usize..7, seed in any::<u64>(),
        density in 0u32..4,
    ) {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        // Sparse bits, so that some queries' ORs are false and some ANDs true (density 0: all
        // zero; 3: all one).
        let per_query: Vec<Vec<bool>> = (0..n)
            .map(|_| (0..records * width).map(|_| match density {
                0 => false,
                3 => true,
                d => rng.random_range(0..records * width * 2) < d as usize,
            }).collect())
            .collect();
        let batch = by_hand(&per_query, width);
        let dealt = share_bits(&batch, &mut rng);
        for op in [Reduction::Or, Reduction::And] {
            let runs = run3(dealt.clone(), move |cx, b: &BitShares| {
                both(cx, &Value::Bits(b.clone()), n, width, op)
            });
            let rounds = runs[0].out.1;
            let batched = open_bits(runs.each_ref().map(|r| bits_of(&r.out.0)));
            let want: Vec<bool> = per_query
                .iter()
                .map(|q| match op {
                    Reduction::Or => q.iter().any(|&b| b),
                    _ => q.iter().all(|&b| b),
                })
                .collect();
            prop_assert_eq!(&batched, &want, "{:?}", op);
            for j in 0..n {
                let one = open_bits(runs.each_ref().map(|r| bits_of(&r.out.2[j])));
                prop_assert_eq!(one, vec![want[j]]);
            }
            prop_assert_eq!(rounds, runs[0].out.3, "a batch costs one query's rounds");
        }
    }

    /// Sums over all of each query's elements (replicated shares), batched, equal each query's
    /// own sum and the plaintext, at ring edges.
    #[test]
    fn sums_over_each_query_equal_their_per_query_forms(
        n in 1usize..12, width in 1usize..4, records in 1usize..6, seed in any::<u64>(),
        k in prop::sample::select(vec![16u32, 32, 64]),
    ) {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let mask = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
        let edges = [0, 1, mask, mask >> 1, (mask >> 1) + 1];
        let per_query: Vec<Vec<u64>> = (0..n)
            .map(|_| (0..records * width)
                .map(|_| if rng.random() { edges[rng.random_range(0..5)] } else { rng.random::<u64>() & mask })
                .collect())
            .collect();
        let dealt = deal(&by_hand(&per_query, width), k, seed);
        let runs = run3(dealt, move |cx, x: &Rep3Vec<u64>| {
            both(cx, &rep_value(x, k), n, width, Reduction::Sum)
        });
        let got = open_rep(runs.each_ref().map(|r| rep_of(&r.out.0)), k);
        let want: Vec<u64> = per_query
            .iter()
            .map(|q| q.iter().fold(0u64, |a, &x| a.wrapping_add(x)) & mask)
            .collect();
        prop_assert_eq!(&got, &want);
        for j in 0..n {
            let one = open_rep(runs.each_ref().map(|r| rep_of(&r.out.2[j])), k);
            prop_assert_eq!(one, vec![want[j]]);
        }
        prop_assert_eq!(runs[0].out.1, 0, "sums are local");
    }

    /// The comparison of the chunk stage (T(ml) − dot, its MSB, the OR over a record's codes)
    /// run once over the batch layout equals, query by query, the same ops on the query's own
    /// values, in one query's rounds.
    #[test]
    fn a_comparison_over_the_batch_equals_each_querys(
        n in 1usize..12, codes in 1usize..6, records in 1usize..5, seed in any::<u64>(),
    ) {
        let k = 16u32;
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        // Pairs as masked codes give them: ml valid positions, hd of them differing, dot =
        // ml - 2 hd in [-ml, ml] (so ml = 0 gives dot 0), mod 2^16.
        let pairs: Vec<Vec<(u64, i64)>> = (0..n)
            .map(|_| (0..records * codes).map(|_| {
                let ml = if rng.random_range(0..8) == 0 { 0 } else { rng.random_range(0..600u64) };
                let hd = rng.random_range(0..=ml);
                (ml, ml as i64 - 2 * hd as i64)
            }).collect())
            .collect();
        let dots: Vec<Vec<u64>> = pairs
            .iter()
            .map(|q| q.iter().map(|&(_, d)| d as u64 & 0xFFFF).collect())
            .collect();
        let mls: Vec<Vec<u64>> = pairs.iter().map(|q| q.iter().map(|p| p.0).collect()).collect();
        let batch_ml = by_hand(&mls, codes);
        let mut dealt: Vec<[Rep3Vec<u64>; 3]> = vec![deal(&by_hand(&dots, codes), k, seed)];
        dealt.extend(dots.iter().enumerate().map(|(j, d)| deal(d, k, seed ^ (j as u64 + 1))));
        let inputs: [Vec<Rep3Vec<u64>>; 3] =
            std::array::from_fn(|p| dealt.iter().map(|d| d[p].clone()).collect());
        let mls_c = mls.clone();
        let runs = run3(inputs, move |cx, x: &Vec<Rep3Vec<u64>>| {
            let compare = |cx: &mut Ctx<'_>, dot: &Rep3Vec<u64>, ml: &[u64]| {
                let before = cx.rounds;
                let d = rep_value(dot, k);
                let t = rep3_ops::sub_threshold(cx, &d, &Value::Public(ml.to_vec()), 3, 8, k, crate::vocab::ThresholdPlacement::Component0)
                    .unwrap();
                let b = rep3_ops::msb(cx, &t, k).unwrap();
                let or = rep3_ops::or_groups(cx, &b, codes as u64).unwrap();
                (bits_of(&or), cx.rounds - before)
            };
            let batched = compare(cx, &x[0], &batch_ml);
            let each: Vec<_> = (0..n).map(|j| compare(cx, &x[j + 1], &mls_c[j])).collect();
            (batched, each)
        });
        let batched = open_bits(runs.each_ref().map(|r| r.out.0 .0.clone()));
        for j in 0..n {
            let one = open_bits(runs.each_ref().map(|r| r.out.1[j].0.clone()));
            let picked: Vec<bool> = (0..records).map(|r| batched[r * n + j]).collect();
            prop_assert_eq!(&picked, &one, "query {}", j);
            // The plaintext: some code of the record has dot > T(ml) = floor((1 - 2*3/8) ml).
            let want: Vec<bool> = (0..records)
                .map(|r| (0..codes).any(|c| {
                    let i = r * codes + c;
                    let t = (mls[j][i] as i64 * 2) / 8;
                    t - pairs[j][i].1 < 0
                }))
                .collect();
            prop_assert_eq!(&one, &want, "query {} against the plaintext", j);
        }
        prop_assert_eq!(runs[0].out.0 .1, runs[0].out.1[0].1, "one query's rounds");
    }
}

/// `batch_mask_len` of a batch of queries is each query's `mask_len`, interleaved record by
/// record (replicated and Shamir codes).
#[test]
fn batch_mask_lengths_are_each_querys_interleaved() {
    let mut rng = ChaCha12Rng::seed_from_u64(11);
    for n in [1usize, 3, 8, 11] {
        let codes = 1 + n % 4;
        let gallery = rep3(7, 16, &mut rng);
        let queries: Vec<Value> = (0..n)
            .map(|_| {
                let q = rep3(codes, 16, &mut rng);
                let mut q = std::sync::Arc::try_unwrap(q).unwrap();
                q.masks = (0..q.masks.len()).map(|_| rng.random()).collect();
                Value::Codes(std::sync::Arc::new(q))
            })
            .collect();
        let sg = shamir(ShamirKind::Gr2, Side::Gallery, 5, 128, &mut rng);
        let sq: Vec<Value> = (0..n)
            .map(|_| Value::Shamir(shamir(ShamirKind::Gr2, Side::Query, codes, 128, &mut rng)))
            .collect();
        let runs = run3([(); 3], move |cx, _| {
            let mut out = Vec::new();
            for (qs, g, records) in [
                (&queries, Value::Codes(gallery.clone()), 7),
                (&sq, Value::Shamir(sg.clone()), 5),
            ] {
                let slots: Vec<Option<Value>> = qs.iter().map(|q| Some(clone_codes(q))).collect();
                let batched = batch_mask_len(cx, &slots, 0, n, &g, 0).unwrap();
                let each: Vec<Value> = qs
                    .iter()
                    .map(|q| rep3_ops::mask_len(cx, q, &g, 0).unwrap())
                    .collect();
                let refs: Vec<&Value> = each.iter().collect();
                let by_query = interleave(&refs, records).unwrap();
                // The plaintext definition from the masks alone: `[r][j][c]` popcounts.
                let (qm, gm, w): (Vec<&[u64]>, &[u64], usize) = match &g {
                    Value::Codes(gc) => (
                        qs.iter()
                            .map(|q| match q {
                                Value::Codes(q) => q.masks.as_slice(),
                                _ => unreachable!(),
                            })
                            .collect(),
                        &gc.masks,
                        gc.bits / 64,
                    ),
                    Value::Shamir(gs) => (
                        qs.iter()
                            .map(|q| match q {
                                Value::Shamir(q) => q.masks.as_slice(),
                                _ => unreachable!(),
                            })
                            .collect(),
                        &gs.masks,
                        gs.len.div_ceil(64),
                    ),
                    _ => unreachable!(),
                };
                let mut plain = Vec::new();
                for r in 0..records {
                    for q in &qm {
                        for c in 0..q.len() / w {
                            plain.push(
                                (0..w)
                                    .map(|i| (q[c * w + i] & gm[r * w + i]).count_ones() as u64)
                                    .sum::<u64>(),
                            );
                        }
                    }
                }
                // By record thirds (1 and 2 holders per component): this party's thirds, batched
                // and per query.
                let mut thirds = Vec::new();
                for holders in [1, 2] {
                    let t = batch_mask_len(cx, &slots, 0, n, &g, holders).unwrap();
                    let each: Vec<PublicThirds> = qs
                        .iter()
                        .map(|q| match rep3_ops::mask_len(cx, q, &g, holders).unwrap() {
                            Value::PublicThirds(t) => (*t).clone(),
                            other => panic!("mask_len gave {}", other.kind()),
                        })
                        .collect();
                    match t {
                        Value::PublicThirds(t) => thirds.push((holders, (*t).clone(), each)),
                        other => panic!("batch_mask_len gave {}", other.kind()),
                    }
                }
                out.push((
                    public(&batched),
                    public(&by_query),
                    each.iter().map(public).collect::<Vec<_>>(),
                    plain,
                    thirds,
                    cx.party(),
                ));
            }
            out
        });
        for run in &runs {
            for (batched, interleaved, each, plain, thirds, party) in &run.out {
                assert_eq!(batched, plain, "n = {n}");
                assert_eq!(batched, interleaved, "n = {n}");
                let width = codes;
                let by_hand_ml = by_hand(each, width);
                assert_eq!(batched, &by_hand_ml, "n = {n}");
                let records = plain.len() / (n * width);
                for (holders, t, per_query) in thirds {
                    assert_eq!(t.width, n * width);
                    for c in 0..3 {
                        let held = crate::vocab::holds_component(*party, c, *holders);
                        assert_eq!(t.held[c], held, "party {party}, third {c}");
                        let r = crate::vocab::record_third(c, records);
                        let rows = r.start * n * width..r.end * n * width;
                        let want = if held {
                            plain[rows.clone()].to_vec()
                        } else {
                            vec![0; rows.len()]
                        };
                        let got: Vec<u64> = t.values[rows].iter().map(|&v| u64::from(v)).collect();
                        assert_eq!(got, want, "party {party}, third {c}");
                        for (j, q) in per_query.iter().enumerate() {
                            assert_eq!(q.held, t.held);
                            for rec in r.clone() {
                                let got = &q.values[rec * width..(rec + 1) * width];
                                let at = (rec * n + j) * width;
                                assert_eq!(got, &t.values[at..at + width], "query {j}");
                            }
                        }
                    }
                }
            }
        }
    }
}

fn clone_codes(v: &Value) -> Value {
    match v {
        Value::Codes(c) => Value::Codes(c.clone()),
        Value::Shamir(s) => Value::Shamir(s.clone()),
        other => panic!("not codes: {}", other.kind()),
    }
}

fn public(v: &Value) -> Vec<u64> {
    match v {
        Value::Public(p) => p.clone(),
        other => panic!("expected public values, got {}", other.kind()),
    }
}

/// The batch layout's ops refuse shapes that do not split into the batch's queries, with a
/// schedule error naming the op.
#[test]
fn batch_values_that_do_not_split_are_schedule_errors() {
    let v = Value::Bits(BitShares::zeros(10));
    let runs = run3([(); 3], move |cx, _| {
        per_query_reduce(cx, &v, 3, 1, Reduction::Or)
            .err()
            .map(|e| e.to_string())
    });
    let e = runs[0].out.clone().expect("an error");
    assert!(e.contains("10 values are not records of 3 queries"), "{e}");
}

/// A batch whose queries differ in code count has no one layout: a schedule error, not a
/// misread of the masks.
#[test]
fn batch_mask_len_refuses_queries_of_different_code_counts() {
    let mut rng = ChaCha12Rng::seed_from_u64(12);
    let gallery = Value::Codes(rep3(3, 16, &mut rng));
    let qs = [rep3(2, 16, &mut rng), rep3(3, 16, &mut rng)];
    let runs = run3([(); 3], move |cx, _| {
        let slots: Vec<Option<Value>> = qs.iter().map(|q| Some(Value::Codes(q.clone()))).collect();
        batch_mask_len(cx, &slots, 0, 2, &gallery, 0)
            .err()
            .map(|e| e.to_string())
    });
    let err = runs[0].out.clone().expect("an error");
    assert!(err.contains("code count"), "{err}");
}
