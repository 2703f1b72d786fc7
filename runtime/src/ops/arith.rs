//! Arithmetic ops on replicated shares over Z_2^k: linear combinations, lifts (Algorithms 13
//! and 14), products, bit injection (Algorithms 16–17), group sums and opening an integer.
//!
//! Every op reduces its result mod 2^k and stores it in the word for Z_2^k (u16 for k ≤ 16,
//! u32 for k ≤ 32, u64 above). Operands may be stored in a wider word (shares of a larger ring
//! are reduced, which is exact); a narrower word is an error.

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::protocol::{self, recv_elems, send_elems, Stats};
use crate::ring::{mask, storage_for, RingElem, Width};

use super::ctx::{
    at, bits, broadcast_len, rep_as, rep_u64, replicated, ring, sched, with_width, Ctx,
};
use super::value::Value;

/// a·x − b·y over Z_2^k for every element (length-1 operands broadcast). Local. Either operand
/// may be public (it enters as the trivial sharing: component 0 carries it).
pub fn lin(
    cx: &mut Ctx<'_>,
    x: &Value,
    y: &Value,
    a: i64,
    b: i64,
    k: u32,
) -> Result<Value, RuntimeError> {
    let k = ring(k, "lin")?;
    if let Some(v) = lin_same_width(x, y, a as u64, b as u64, k) {
        return Ok(v);
    }
    let party = cx.party();
    let (xo, xp) = rep_u64(party, x, k, "lin")?;
    let (yo, yp) = rep_u64(party, y, k, "lin")?;
    let n = broadcast_len(&[xo.len(), yo.len()], "lin")?;
    let (a, b, m) = (a as u64, b as u64, mask(k));
    let f = |xs: &[u64], ys: &[u64]| -> Vec<u64> {
        if xs.len() == n && ys.len() == n {
            // No broadcast: a plain zip that the compiler vectorizes.
            return xs
                .iter()
                .zip(ys)
                .map(|(&x, &y)| a.wrapping_mul(x).wrapping_sub(b.wrapping_mul(y)) & m)
                .collect();
        }
        (0..n)
            .map(|i| {
                a.wrapping_mul(at(xs, i))
                    .wrapping_sub(b.wrapping_mul(at(ys, i)))
                    & m
            })
            .collect()
    };
    Ok(replicated(k, f(&xo, &yo), f(&xp, &yp)))
}

/// [`lin`] when both operands are replicated shares of the same length stored in the word for
/// Z_2^k: computed in that word, without widening to u64 and narrowing back (the common case in
/// the comparison chains; the bits above k do not affect the bits below it). `None` otherwise.
fn lin_same_width(x: &Value, y: &Value, a: u64, b: u64, k: u32) -> Option<Value> {
    fn go<T: RingElem>(x: &[T], y: &[T], a: u64, b: u64, k: u32) -> Vec<T> {
        let (a, b) = (T::from_u64(a), T::from_u64(b));
        x.iter()
            .zip(y)
            .map(|(&x, &y)| a.wrapping_mul(x).wrapping_sub(b.wrapping_mul(y)).mask_to(k))
            .collect()
    }
    let (Value::Replicated { own: xo, prev: xp }, Value::Replicated { own: yo, prev: yp }) = (x, y)
    else {
        return None;
    };
    let n = xo.len();
    if [xp.len(), yo.len(), yp.len()].iter().any(|&l| l != n) {
        return None;
    }
    let (own, prev) = match (storage_for(k), xo, xp, yo, yp) {
        (Width::U16, RingVec::U16(xo), RingVec::U16(xp), RingVec::U16(yo), RingVec::U16(yp)) => (
            RingVec::from(go(xo, yo, a, b, k)),
            RingVec::from(go(xp, yp, a, b, k)),
        ),
        (Width::U32, RingVec::U32(xo), RingVec::U32(xp), RingVec::U32(yo), RingVec::U32(yp)) => (
            RingVec::from(go(xo, yo, a, b, k)),
            RingVec::from(go(xp, yp, a, b, k)),
        ),
        (Width::U64, RingVec::U64(xo), RingVec::U64(xp), RingVec::U64(yo), RingVec::U64(yp)) => (
            RingVec::from(go(xo, yo, a, b, k)),
            RingVec::from(go(xp, yp, a, b, k)),
        ),
        _ => return None,
    };
    Some(Value::Replicated { own, prev })
}

/// Algorithm 13 (ConstLift) on replicated shares: \[2^m·x\] over Z_2^k_out from \[x\] over
/// Z_2^(k_out − m). Each component, reduced mod 2^(k_out − m), is read in Z_2^k_out and
/// multiplied by 2^m: the three products sum to 2^m·x plus a multiple of 2^k_out. Local.
#[doc(alias = "ConstLift")]
pub fn const_lift(
    cx: &mut Ctx<'_>,
    src: &Value,
    m: u32,
    k_out: u32,
) -> Result<Value, RuntimeError> {
    let k_out = ring(k_out, "const_lift")?;
    if m >= k_out - 1 {
        return Err(sched(format!(
            "const_lift: shift 2^{m} leaves no ring below Z_2^{k_out} (need m <= {})",
            k_out - 2
        )));
    }
    let k_in = k_out - m;
    if let Value::Replicated { own, prev } = src {
        // Shares in a word at least as wide as Z_2^k_in needs: shift them straight into the
        // word for Z_2^k_out, without the u64 round trip.
        let wide_enough = |v: &RingVec| (v.word_bytes() as u32) * 8 >= storage_for(k_in).bits();
        if own.len() == prev.len() && own.word_bytes() == prev.word_bytes() && wide_enough(own) {
            let (mi, mo) = (mask(k_in), mask(k_out));
            let f = |v: &RingVec| -> RingVec {
                with_width!(k_out, U => {
                    let lift = |x: u64| U::from_u64(((x & mi) << m) & mo);
                    let out: Vec<U> = match v {
                        RingVec::U16(v) => v.iter().map(|&x| lift(u64::from(x))).collect(),
                        RingVec::U32(v) => v.iter().map(|&x| lift(u64::from(x))).collect(),
                        RingVec::U64(v) => v.iter().map(|&x| lift(x)).collect(),
                    };
                    RingVec::from(out)
                })
            };
            return Ok(Value::Replicated {
                own: f(own),
                prev: f(prev),
            });
        }
    }
    let (o, p) = rep_u64(cx.party(), src, k_in, "const_lift")?;
    let shift =
        |v: Vec<u64>| -> Vec<u64> { v.into_iter().map(|c| (c << m) & mask(k_out)).collect() };
    Ok(replicated(k_out, shift(o), shift(p)))
}

/// Algorithm 14 (Lift, MPCLift): \[x\] over Z_2^k_in to \[x\] over Z_2^k_out, keeping the
/// unsigned residue in [0, 2^k_in) ([`protocol::mpc_lift`]). Cost [`Stats::mpc_lift`].
#[doc(alias = "MPCLift")]
pub fn lift(cx: &mut Ctx<'_>, src: &Value, k_in: u32, k_out: u32) -> Result<Value, RuntimeError> {
    let k_in = ring(k_in, "lift")?;
    let k_out = ring(k_out, "lift")?;
    if k_out < k_in {
        return Err(sched(format!(
            "lift: Z_2^{k_in} to the smaller Z_2^{k_out}"
        )));
    }
    let m = k_out - k_in;
    let party = cx.party();
    let (own, prev) = with_width!(k_in, T => {
        let x = rep_as::<T>(party, src, k_in, "lift")?;
        with_width!(k_out, U => {
            let y = protocol::mpc_lift::<T, U>(cx.net, cx.prss, &x, k_in, m)?;
            (RingVec::from(y.own), RingVec::from(y.prev))
        })
    });
    if !own.is_empty() {
        cx.rounds += Stats::mpc_lift(k_in, m).rounds;
    }
    Ok(Value::Replicated { own, prev })
}

/// The local half of the ABY3 product (Appendix C, eq. 4): party i's additive share
/// x_i·y_i + x_i·y_(i−1) + x_(i−1)·y_i of x·y over Z_2^k, elementwise with broadcast. Pass it to
/// `reshare` (which re-randomises it) before it is sent anywhere.
pub fn mul(cx: &mut Ctx<'_>, x: &Value, y: &Value, k: u32) -> Result<Value, RuntimeError> {
    let k = ring(k, "mul")?;
    let party = cx.party();
    let (xo, xp) = rep_u64(party, x, k, "mul")?;
    let (yo, yp) = rep_u64(party, y, k, "mul")?;
    let n = broadcast_len(&[xo.len(), yo.len()], "mul")?;
    let z = (0..n).map(|i| {
        let (a, b, c, d) = (at(&xo, i), at(&xp, i), at(&yo, i), at(&yp, i));
        a.wrapping_mul(c)
            .wrapping_add(a.wrapping_mul(d))
            .wrapping_add(b.wrapping_mul(c))
    });
    Ok(Value::Additive(
        RingVec::from_u64s(k, z).expect("k checked to be in 2..=64"),
    ))
}

/// Algorithm 17 (BitInject, with the 3-party OT of Algorithm 16): binary shares to replicated
/// shares of the same bits over Z_2^k. Two rounds.
#[doc(alias = "BitInject")]
pub fn bit_inject(cx: &mut Ctx<'_>, src: &Value, k: u32) -> Result<Value, RuntimeError> {
    let k = ring(k, "bit_inject")?;
    let b = bits(src, "bit_inject")?;
    let (own, prev) = with_width!(k, T => {
        let y = protocol::bit_inject::<T>(cx.net, cx.prss, b, k)?;
        (RingVec::from(y.own), RingVec::from(y.prev))
    });
    if b.len > 0 {
        cx.rounds += Stats::bit_inject().rounds;
    }
    Ok(Value::Replicated { own, prev })
}

/// Sums of runs of `group` elements; `group == 0` sums everything (one sum, 0 if empty).
fn sum_runs<T: RingElem>(v: &[T], group: usize) -> Vec<T> {
    if group == 0 {
        return vec![v.iter().fold(T::ZERO, |s, &x| s.wrapping_add(x))];
    }
    v.chunks(group)
        .map(|c| c.iter().fold(T::ZERO, |s, &x| s.wrapping_add(x)))
        .collect()
}

fn sum_vec(v: &RingVec, group: usize) -> RingVec {
    match v {
        RingVec::U16(v) => RingVec::U16(sum_runs(v, group)),
        RingVec::U32(v) => RingVec::U32(sum_runs(v, group)),
        RingVec::U64(v) => RingVec::U64(sum_runs(v, group)),
    }
}

/// Sums of replicated (or additive) shares over consecutive groups of `group` elements
/// (0 = all elements, one sum; the sum of nothing is 0). Local: shares are linear.
///
/// No ring is named, so the sums wrap in the storage word (16, 32 or 64 bits): exact mod 2^k
/// for the ring Z_2^k of the shares, but components are not reduced below the word.
pub fn sum_groups(_cx: &mut Ctx<'_>, src: &Value, group: u64) -> Result<Value, RuntimeError> {
    let len = match src {
        Value::Replicated { own, .. } | Value::Additive(own) => own.len(),
        other => {
            return Err(sched(format!(
                "sum_groups: operand holds {}, expected replicated or additive shares",
                other.kind()
            )))
        }
    };
    let group = group as usize;
    if group != 0 && len % group != 0 {
        return Err(sched(format!(
            "sum_groups: groups of {group} over {len} elements"
        )));
    }
    Ok(match src {
        Value::Replicated { own, prev } => Value::Replicated {
            own: sum_vec(own, group),
            prev: sum_vec(prev, group),
        },
        Value::Additive(v) => Value::Additive(sum_vec(v, group)),
        _ => unreachable!("checked above"),
    })
}

fn open_to<T: RingElem>(
    cx: &mut Ctx<'_>,
    own: &[T],
    prev: &[T],
    to: usize,
) -> Result<Option<Vec<u64>>, RuntimeError> {
    let me = cx.party();
    if me == (to + 1) % 3 {
        send_elems(cx.net, to, own)?;
        Ok(None)
    } else if me == to {
        let missing: Vec<T> = recv_elems(cx.net, (to + 1) % 3, own.len(), "opened integers")?;
        Ok(Some(
            own.iter()
                .zip(prev)
                .zip(missing)
                .map(|((&a, &b), c)| a.wrapping_add(b).wrapping_add(c).to_u64())
                .collect(),
        ))
    } else {
        Ok(None)
    }
}

/// Opens replicated arithmetic shares to party `to` only: party `to + 1` sends its component
/// x_(to+1), the one `to` lacks; the third party sends and learns nothing. One round.
///
/// The result is the sum of the components in the storage word (mod 2^16, 2^32 or 2^64). Shares
/// of Z_2^k with k below the word width must be reduced before (e.g. use k = 16, 32 or 64 for
/// a count), or the opened integer is the value plus a multiple of 2^k.
pub fn open_int(cx: &mut Ctx<'_>, src: &Value, to: u32) -> Result<Value, RuntimeError> {
    if to > 2 {
        return Err(sched(format!("open_int: party {to} does not exist")));
    }
    let Value::Replicated { own, prev } = src else {
        return Err(sched(format!(
            "open_int: operand holds {}, expected replicated shares",
            src.kind()
        )));
    };
    if own.is_empty() {
        return Ok(Value::ClearInts((cx.party() == to as usize).then(Vec::new)));
    }
    let to = to as usize;
    let opened = match (own, prev) {
        (RingVec::U16(o), RingVec::U16(p)) => open_to(cx, o, p, to)?,
        (RingVec::U32(o), RingVec::U32(p)) => open_to(cx, o, p, to)?,
        (RingVec::U64(o), RingVec::U64(p)) => open_to(cx, o, p, to)?,
        _ => return Err(sched("open_int: share components differ in width")),
    };
    cx.rounds += 1;
    Ok(Value::ClearInts(opened))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ctx::testkit::{edges, signed, RINGS};
    use crate::ops::ctx::testrun::{errors, rep_result, run_op, In, Res};
    use crate::share::binary::share_bits;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    /// Random values of Z_2^k with the ring edges, `n` of them (edges only if n ≥ 5).
    fn values(raw: &[u64], k: u32, n: usize) -> Vec<u64> {
        let mut v = edges(k);
        v.extend(raw.iter().map(|x| x & mask(k)));
        v.truncate(n);
        v
    }

    fn shape(n: usize, one: bool) -> usize {
        if one {
            1
        } else {
            n
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn lin_matches_plain(
            ki in 0usize..9, seed: u64,
            n in prop_oneof![Just(0usize), Just(1), 5usize..60],
            raw in proptest::collection::vec(any::<u64>(), 60),
            a in prop_oneof![Just(0i64), Just(1), Just(-1), Just(i64::MIN), any::<i64>()],
            b in prop_oneof![Just(0i64), Just(1), Just(-1), Just(1 << 20), any::<i64>()],
            bx in any::<bool>(), by in any::<bool>(), public_x in any::<bool>(),
        ) {
            let k = RINGS[ki];
            let x = values(&raw, k, shape(n, bx));
            let y = values(&raw.iter().map(|v| v.rotate_left(17)).collect::<Vec<_>>(), k, shape(n, by));
            let xin = if public_x { In::Public(x.clone()) } else { In::rep(&x, k, seed) };
            let out = run_op(vec![xin, In::rep(&y, k, seed ^ 1)], move |cx, v| lin(cx, &v[0], &v[1], a, b, k));
            let (got, rounds) = rep_result(out, k);
            let len = if x.len() == 1 { y.len() } else { x.len() };
            let g = |v: &[u64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
            let want: Vec<u64> = (0..len)
                .map(|i| (a as u64).wrapping_mul(g(&x, i)).wrapping_sub((b as u64).wrapping_mul(g(&y, i))) & mask(k))
                .collect();
            prop_assert_eq!(got, want);
            prop_assert_eq!(rounds, 0);
        }

        #[test]
        fn const_lift_multiplies(ki in 0usize..9, m_frac in 0.0f64..1.0, seed: u64, raw in proptest::collection::vec(any::<u64>(), 0..50)) {
            let k_out = RINGS[ki].max(3);
            let m = ((k_out - 2) as f64 * m_frac) as u32;
            let k_in = k_out - m;
            let x = values(&raw, k_in, 5 + raw.len());
            let out = run_op(vec![In::rep(&x, k_in, seed)], move |cx, v| const_lift(cx, &v[0], m, k_out));
            let (got, _) = rep_result(out, k_out);
            let want: Vec<u64> = x.iter().map(|&v| (v << m) & mask(k_out)).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn lift_keeps_the_residue(ki in 0usize..9, m_frac in 0.0f64..1.0, seed: u64, raw in proptest::collection::vec(any::<u64>(), 0..50)) {
            let k_in = RINGS[ki].min(62);
            let k_out = k_in + ((64 - k_in) as f64 * m_frac) as u32;
            let x = values(&raw, k_in, 5 + raw.len());
            let out = run_op(vec![In::rep(&x, k_in, seed)], move |cx, v| lift(cx, &v[0], k_in, k_out));
            let (got, rounds) = rep_result(out, k_out);
            prop_assert_eq!(got, x);
            prop_assert_eq!(rounds, Stats::mpc_lift(k_in, k_out - k_in).rounds);
        }

        #[test]
        fn mul_then_reshare_multiplies(
            ki in 0usize..9, seed: u64,
            n in prop_oneof![Just(0usize), Just(1), 5usize..60],
            raw in proptest::collection::vec(any::<u64>(), 60),
            bx in any::<bool>(), by in any::<bool>(),
        ) {
            let k = RINGS[ki];
            let x = values(&raw, k, shape(n, bx));
            let y = values(&raw.iter().map(|v| v.rotate_left(29)).collect::<Vec<_>>(), k, shape(n, by));
            let out = run_op(vec![In::rep(&x, k, seed), In::rep(&y, k, seed ^ 7)], move |cx, v| {
                let z = mul(cx, &v[0], &v[1], k)?;
                let Value::Additive(a) = &z else { panic!("additive expected") };
                let r = with_width!(k, T => {
                    let own: Vec<T> = a.iter_u64().map(T::from_u64).collect();
                    let r = crate::protocol::reshare(cx.net, cx.prss, crate::share::AddVec { own }, k)?;
                    Value::Replicated { own: RingVec::from(r.own), prev: RingVec::from(r.prev) }
                });
                Ok(r)
            });
            let (got, _) = rep_result(out, k);
            let len = if x.len() == 1 { y.len() } else { x.len() };
            let g = |v: &[u64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
            let want: Vec<u64> = (0..len).map(|i| g(&x, i).wrapping_mul(g(&y, i)) & mask(k)).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn bit_inject_injects(ki in 0usize..9, seed: u64, bits in proptest::collection::vec(any::<bool>(), 0..130)) {
            let k = RINGS[ki];
            let s = share_bits(&bits, &mut ChaCha12Rng::seed_from_u64(seed));
            let out = run_op(vec![In::Bits(s)], move |cx, v| bit_inject(cx, &v[0], k));
            let (got, rounds) = rep_result(out, k);
            prop_assert_eq!(got, bits.iter().map(|&b| b as u64).collect::<Vec<_>>());
            prop_assert_eq!(rounds, if bits.is_empty() { 0 } else { 2 });
        }

        #[test]
        fn sum_groups_sums(w in 0usize..3, seed: u64, groups in 0usize..6, group in 1usize..9, all in any::<bool>(), raw in proptest::collection::vec(any::<u64>(), 60)) {
            // Rings whose storage word is exactly the ring: the sums are canonical.
            let k = [16u32, 32, 64][w];
            let n = groups * group;
            let x = values(&raw, k, n);
            let g = if all { 0 } else { group as u64 };
            let out = run_op(vec![In::rep(&x, k, seed)], move |cx, v| sum_groups(cx, &v[0], g));
            let (got, _) = rep_result(out, k);
            let sum = |c: &[u64]| c.iter().fold(0u64, |s, &v| s.wrapping_add(v)) & mask(k);
            let want: Vec<u64> = if all { vec![sum(&x)] } else { x.chunks(group).map(sum).collect() };
            prop_assert_eq!(got, want);
        }

        #[test]
        fn open_int_reveals_to_one_party(ki in 0usize..9, to in 0u32..3, seed: u64, raw in proptest::collection::vec(any::<u64>(), 0..40)) {
            let k = [16u32, 32, 64, 16, 32, 64, 16, 32, 64][ki];
            let x = values(&raw, k, 5 + raw.len());
            let out = run_op(vec![In::rep(&x, k, seed)], move |cx, v| open_int(cx, &v[0], to));
            for (p, (r, rounds, messages)) in out.into_iter().enumerate() {
                let Res::Ints(got) = r else { panic!("opened integers expected") };
                prop_assert_eq!(rounds, 1);
                prop_assert_eq!(messages, (p == (to as usize + 1) % 3) as u64);
                if p == to as usize {
                    prop_assert_eq!(got, Some(x.clone()));
                } else {
                    prop_assert_eq!(got, None);
                }
            }
        }
    }

    #[test]
    fn lin_paper_setting_signed() {
        // a·ml − b·dot over Z_2^36 with negative results: the signed reading is exact.
        let k = 36;
        let ml = vec![12_800u64, 0, 6_000];
        let dot: Vec<u64> = [-12_800i64, 0, 5_999]
            .iter()
            .map(|&d| d as u64 & mask(k))
            .collect();
        let out = run_op(
            vec![In::rep(&ml, k, 1), In::rep(&dot, k, 2)],
            move |cx, v| lin(cx, &v[0], &v[1], 21_000, 1 << 16, k),
        );
        let (got, _) = rep_result(out, k);
        let want = [
            21_000i128 * 12_800 + (1 << 16) * 12_800,
            0,
            21_000 * 6_000 - (1 << 16) * 5_999,
        ];
        for (g, w) in got.iter().zip(want) {
            assert_eq!(signed(*g, k), w);
        }
    }

    #[test]
    fn empty_operands_everywhere() {
        let k = 20;
        let e = || In::rep(&[], k, 3);
        let check = |out: [(Res, u64, u64); 3], kk: u32| {
            assert!(out.iter().all(|o| o.2 == 0), "nothing sent for length 0");
            assert_eq!(rep_result(out, kk).0, Vec::<u64>::new());
        };
        check(
            run_op(vec![e(), e()], move |cx, v| lin(cx, &v[0], &v[1], 3, 4, k)),
            k,
        );
        check(
            run_op(vec![e()], move |cx, v| const_lift(cx, &v[0], 4, k + 4)),
            k + 4,
        );
        check(run_op(vec![e()], move |cx, v| lift(cx, &v[0], k, 40)), 40);
        let bits = In::Bits(std::array::from_fn(|_| crate::share::BitShares::zeros(0)));
        check(run_op(vec![bits], move |cx, v| bit_inject(cx, &v[0], k)), k);
        // The sum of no elements is one zero.
        let out = run_op(vec![e()], |cx, v| sum_groups(cx, &v[0], 0));
        assert_eq!(rep_result(out, k).0, vec![0]);
    }

    type Case = Box<dyn Fn(&mut Ctx<'_>, &[Value]) -> Result<Value, RuntimeError> + Send + Sync>;

    #[test]
    fn bad_operands_are_schedule_errors() {
        let r = |v: &[u64], k| In::rep(v, k, 1);
        let cases: Vec<(Vec<In>, Case)> = vec![
            (
                vec![r(&[1, 2], 16), r(&[1, 2, 3], 16)],
                Box::new(|cx, v| lin(cx, &v[0], &v[1], 1, 1, 16)),
            ),
            (
                vec![r(&[1], 16), r(&[1], 16)],
                Box::new(|cx, v| lin(cx, &v[0], &v[1], 1, 1, 65)),
            ),
            (
                vec![r(&[1], 16), r(&[1], 16)],
                Box::new(|cx, v| lin(cx, &v[0], &v[1], 1, 1, 1)),
            ),
            // Z_2^16 shares in u16 words cannot be shares of Z_2^32.
            (
                vec![r(&[1], 16), r(&[1], 16)],
                Box::new(|cx, v| mul(cx, &v[0], &v[1], 32)),
            ),
            (vec![r(&[1], 16)], Box::new(|cx, v| lift(cx, &v[0], 20, 16))),
            (
                vec![r(&[1], 16)],
                Box::new(|cx, v| const_lift(cx, &v[0], 15, 16)),
            ),
            (
                vec![r(&[1], 16)],
                Box::new(|cx, v| bit_inject(cx, &v[0], 16)),
            ),
            (
                vec![r(&[1, 2, 3], 16)],
                Box::new(|cx, v| sum_groups(cx, &v[0], 2)),
            ),
            (vec![r(&[1], 16)], Box::new(|cx, v| open_int(cx, &v[0], 3))),
            (
                vec![In::Public(vec![1])],
                Box::new(|cx, v| open_int(cx, &v[0], 0)),
            ),
        ];
        for (ins, f) in cases {
            for e in errors(run_op(ins, move |cx, v| f(cx, v))) {
                assert!(
                    e.contains("internal error in the generated schedule"),
                    "{e}"
                );
            }
        }
    }
}
