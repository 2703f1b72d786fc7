//! Per-chunk values collected by `append` give the whole value; mismatched kinds are refused.

use std::ops::Range;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

use super::rep3;
use crate::io::share_file::RingVec;
use crate::ops::value::Value;
use crate::party::tiles::{append_value, copy_appendable};
use crate::share::binary::BitShares;
use crate::share::fp::{Rep3Fp, P};
use crate::share::Rep3Vec;
use crate::share::RingVecExt;

/// Values whose equality the append tests check.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Bits(x), Value::Bits(y)) => x == y,
        (Value::Replicated { own: a, prev: b }, Value::Replicated { own: c, prev: d }) => {
            a == c && b == d
        }
        (Value::Public(x), Value::Public(y)) => x == y,
        (Value::ReplicatedP(x), Value::ReplicatedP(y)) => x == y,
        (Value::ReplicatedMod { m, x }, Value::ReplicatedMod { m: n, x: y }) => m == n && x == y,
        (Value::Additive(x), Value::Additive(y)) => x == y,
        (Value::AdditiveP(x), Value::AdditiveP(y)) => x == y,
        _ => false,
    }
}

/// Elements `r` of a value of an appendable kind.
fn part(v: &Value, r: Range<usize>) -> Value {
    match v {
        Value::Bits(b) => Value::Bits(b.slice(r.start, r.len())),
        Value::Replicated { own, prev } => Value::Replicated {
            own: own.slice(r.clone()),
            prev: prev.slice(r),
        },
        Value::Public(p) => Value::Public(p[r].to_vec()),
        Value::ReplicatedP(x) => Value::ReplicatedP(Rep3Fp {
            own: x.own[r.clone()].to_vec(),
            prev: x.prev[r].to_vec(),
        }),
        Value::ReplicatedMod { m, x } => Value::ReplicatedMod {
            m: *m,
            x: Rep3Vec {
                own: x.own[r.clone()].to_vec(),
                prev: x.prev[r].to_vec(),
            },
        },
        Value::Additive(a) => Value::Additive(a.slice(r)),
        Value::AdditiveP(a) => Value::AdditiveP(a[r].to_vec()),
        other => panic!("{}", other.kind()),
    }
}

fn every_kind(n: usize, rng: &mut ChaCha12Rng) -> Vec<Value> {
    let mut u64s = |n: usize| -> Vec<u64> { (0..n).map(|_| rng.random()).collect() };
    let w = n.div_ceil(64);
    let (o, p, x, y) = (u64s(n), u64s(n), u64s(w), u64s(w));
    let ring = |k: u32, v: &[u64]| RingVec::from_u64s(k, v.iter().map(|x| x >> (64 - k))).unwrap();
    let modp = |v: &[u64]| -> Vec<u16> { v.iter().map(|&x| (x % P as u64) as u16).collect() };
    vec![
        Value::Bits(BitShares::from_words(x, y, n)),
        Value::Replicated {
            own: ring(16, &o),
            prev: ring(16, &p),
        },
        Value::Replicated {
            own: ring(40, &o),
            prev: ring(40, &p),
        },
        Value::Public(o.clone()),
        Value::ReplicatedP(Rep3Fp {
            own: modp(&o),
            prev: modp(&p),
        }),
        Value::ReplicatedMod {
            m: 5,
            x: Rep3Vec {
                own: o.clone(),
                prev: p.clone(),
            },
        },
        Value::Additive(ring(32, &o)),
        Value::Additive(ring(64, &p)),
        Value::AdditiveP(modp(&p)),
    ]
}

/// Collecting the chunks of a value (ragged, some empty) gives the value, for every kind.
#[test]
fn append_of_chunks_is_the_whole() {
    let mut rng = ChaCha12Rng::seed_from_u64(12);
    for n in [0usize, 1, 130] {
        for whole in every_kind(n, &mut rng) {
            for cuts in [vec![n], vec![0, n], vec![n / 3, n / 3, n / 2, n]] {
                let mut start = 0;
                let mut acc: Option<Value> = None;
                for end in cuts {
                    let chunk = part(&whole, start..end);
                    match &mut acc {
                        None => acc = Some(copy_appendable(&chunk).unwrap()),
                        Some(a) => append_value(a, &chunk).unwrap(),
                    }
                    start = end;
                }
                assert!(
                    same(acc.as_ref().unwrap(), &whole),
                    "{} of {n}",
                    whole.kind()
                );
            }
        }
    }
}

#[test]
fn append_refuses_mismatched_kinds() {
    let mut rng = ChaCha12Rng::seed_from_u64(13);
    let kinds = every_kind(70, &mut rng);
    let mut bad: Vec<(Value, Value)> = Vec::new();
    for (i, a) in kinds.iter().enumerate() {
        for (j, b) in kinds.iter().enumerate() {
            if i != j {
                bad.push((copy_appendable(a).unwrap(), copy_appendable(b).unwrap()));
            }
        }
    }
    let mut other_m = copy_appendable(&kinds[5]).unwrap();
    if let Value::ReplicatedMod { m, .. } = &mut other_m {
        *m = 6;
    }
    bad.push((copy_appendable(&kinds[5]).unwrap(), other_m));
    let codes = Value::Codes(rep3(1, 16, &mut rng));
    bad.push((Value::Public(vec![1]), codes));
    bad.push((Value::Clear(None), Value::Clear(None)));
    for (mut acc, src) in bad {
        let before = copy_appendable(&acc).ok();
        let e = append_value(&mut acc, &src).unwrap_err().to_string();
        assert!(
            e.contains("internal error in the generated schedule"),
            "{e}"
        );
        if let Some(b) = before {
            assert!(same(&acc, &b), "unchanged after the error");
        }
    }
    assert!(copy_appendable(&Value::Codes(rep3(1, 16, &mut rng))).is_err());
}
