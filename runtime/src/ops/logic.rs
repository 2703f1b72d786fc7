//! Boolean ops on replicated binary shares: NOT (local), AND (ABY3 multiplication over
//! F_2, one round), OR (x ⊕ y ⊕ x∧y), the multiplexer (Algorithm 11, CMux) and AND over groups
//! (a balanced tree, by De Morgan from the OR tree of Section 4.2).
//!
//! Elementwise ops broadcast operands of length 1 (the condition of a multiplexer included);
//! every op accepts length 0 and then sends nothing.

use crate::error::RuntimeError;
use crate::protocol::{self, Stats};
use crate::share::BitShares;

use super::ctx::{bits, broadcast_bits, broadcast_len, sched, Ctx};
use super::value::Value;

/// NOT of every bit (XOR with the public all-ones vector). Local.
pub fn not(cx: &mut Ctx<'_>, src: &Value) -> Result<Value, RuntimeError> {
    Ok(Value::Bits(bits(src, "not")?.not(cx.party())))
}

/// The two operands of a binary gate, broadcast to a common length.
fn pair(x: &Value, y: &Value, op: &str) -> Result<(BitShares, BitShares), RuntimeError> {
    let (x, y) = (bits(x, op)?, bits(y, op)?);
    let n = broadcast_len(&[x.len, y.len], op)?;
    Ok((broadcast_bits(x, n), broadcast_bits(y, n)))
}

/// x ∧ y: one round, one AND gate per element.
pub fn and(cx: &mut Ctx<'_>, x: &Value, y: &Value) -> Result<Value, RuntimeError> {
    let (x, y) = pair(x, y, "and")?;
    let z = and_where(cx, &x, &y)?;
    if z.len > 0 {
        cx.rounds += Stats::and().rounds;
    }
    Ok(Value::Bits(z))
}

/// `x ∧ y` on the party's GPU when it runs the comparison phase, else the CPU protocol: the
/// same message and shares either way.
fn and_where(
    cx: &mut Ctx<'_>,
    x: &crate::share::BitShares,
    y: &crate::share::BitShares,
) -> Result<crate::share::BitShares, RuntimeError> {
    match &cx.gpu {
        Some(g) if g.compares() => g.and(cx.net, cx.prss, x, y),
        _ => Ok(protocol::and(cx.net, cx.prss, x, y)?),
    }
}

/// x ∨ y = x ⊕ y ⊕ (x ∧ y): one round, one AND gate per element.
pub fn or(cx: &mut Ctx<'_>, x: &Value, y: &Value) -> Result<Value, RuntimeError> {
    let (x, y) = pair(x, y, "or")?;
    let both = and_where(cx, &x, &y)?;
    if both.len > 0 {
        cx.rounds += Stats::and().rounds;
    }
    Ok(Value::Bits(x.xor(&y).xor(&both)))
}

/// Algorithm 11, CMux: `c ? x : y` elementwise (each of c, x, y may have length 1). One round,
/// one AND gate per element.
#[doc(alias = "CMux")]
pub fn mux(cx: &mut Ctx<'_>, c: &Value, x: &Value, y: &Value) -> Result<Value, RuntimeError> {
    let (c, x, y) = (bits(c, "mux")?, bits(x, "mux")?, bits(y, "mux")?);
    let n = broadcast_len(&[c.len, x.len, y.len], "mux")?;
    let (c, x, y) = (
        broadcast_bits(c, n),
        broadcast_bits(x, n),
        broadcast_bits(y, n),
    );
    let z = protocol::cmux(cx.net, cx.prss, &c, &x, &y)?;
    if n > 0 {
        cx.rounds += Stats::and().rounds;
    }
    Ok(Value::Bits(z))
}

/// AND over consecutive groups of `group` bits (0 = all bits, one result; the AND of no bits is
/// true). ¬OR(¬x): the OR tree of Section 4.2, ⌈log2 group⌉ rounds and group − 1 gates per group.
pub fn and_groups(cx: &mut Ctx<'_>, src: &Value, group: u64) -> Result<Value, RuntimeError> {
    let b = bits(src, "and_groups")?;
    let party = cx.party();
    if b.len == 0 && group == 0 {
        // The empty conjunction: a public true, known to every party without talking.
        return Ok(Value::Bits(BitShares::zeros(1).not(party)));
    }
    let group = if group == 0 { b.len } else { group as usize };
    if b.len % group != 0 {
        return Err(sched(format!(
            "and_groups: groups of {group} over {} bits",
            b.len
        )));
    }
    if b.len == 0 {
        return Ok(Value::Bits(BitShares::zeros(0)));
    }
    let any_zero = protocol::or_groups(cx.net, cx.prss, &b.not(party), group)?;
    cx.rounds += Stats::or_group(group).rounds;
    Ok(Value::Bits(any_zero.not(party)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ctx::testkit::{open_bits, run3};
    use crate::share::binary::share_bits;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Not,
        And,
        Or,
        Mux,
    }

    fn plain(op: Op, v: &[Vec<bool>]) -> Vec<bool> {
        let n = v.iter().map(|x| x.len()).find(|&l| l != 1).unwrap_or(1);
        let g = |j: usize, i: usize| if v[j].len() == 1 { v[j][0] } else { v[j][i] };
        (0..n)
            .map(|i| match op {
                Op::Not => !g(0, i),
                Op::And => g(0, i) & g(1, i),
                Op::Or => g(0, i) | g(1, i),
                Op::Mux => {
                    if g(0, i) {
                        g(1, i)
                    } else {
                        g(2, i)
                    }
                }
            })
            .collect()
    }

    /// Shares the operands, runs `op` at the three parties, returns the opened result and the
    /// rounds and messages of party 0.
    fn run(op: Op, v: Vec<Vec<bool>>, seed: u64) -> (Vec<bool>, u64, u64) {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let dealt: Vec<[BitShares; 3]> = v.iter().map(|x| share_bits(x, &mut rng)).collect();
        let inputs: [Vec<BitShares>; 3] =
            std::array::from_fn(|p| dealt.iter().map(|d| d[p].clone()).collect());
        let runs = run3(inputs, move |cx, ins: &Vec<BitShares>| {
            let vals: Vec<Value> = ins.iter().cloned().map(Value::Bits).collect();
            let out = match op {
                Op::Not => not(cx, &vals[0]),
                Op::And => and(cx, &vals[0], &vals[1]),
                Op::Or => or(cx, &vals[0], &vals[1]),
                Op::Mux => mux(cx, &vals[0], &vals[1], &vals[2]),
            }
            .unwrap();
            let Value::Bits(b) = out else {
                panic!("bits expected")
            };
            b
        });
        let (r, m) = (runs[0].rounds, runs[0].messages);
        let [a, b, c] = runs;
        (open_bits([a.out, b.out, c.out]), r, m)
    }

    fn arity(op: Op) -> usize {
        match op {
            Op::Not => 1,
            Op::Mux => 3,
            _ => 2,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn gates_match_plain(
            seed: u64,
            which in 0usize..4,
            n in prop_oneof![Just(0usize), Just(1), 2usize..150],
            ones in proptest::collection::vec(any::<bool>(), 3),
            raw in proptest::collection::vec(any::<bool>(), 450),
        ) {
            let op = [Op::Not, Op::And, Op::Or, Op::Mux][which];
            // Each operand has length n, or 1 (broadcast) where `ones` says so.
            let v: Vec<Vec<bool>> = (0..arity(op))
                .map(|j| {
                    let len = if ones[j] { 1 } else { n };
                    raw[j * 150..j * 150 + len].to_vec()
                })
                .collect();
            let want = plain(op, &v);
            let (got, rounds, messages) = run(op, v, seed);
            prop_assert_eq!(&got, &want, "{:?}", op);
            let interactive = matches!(op, Op::And | Op::Or | Op::Mux) && !want.is_empty();
            prop_assert_eq!(rounds, interactive as u64);
            prop_assert_eq!(messages, interactive as u64);
        }

        #[test]
        fn and_groups_match_plain(seed: u64, len in 0usize..200, which in 0usize..4, dense in any::<bool>()) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            // Dense inputs are mostly true, so that both outcomes of a group occur.
            let v: Vec<bool> = (0..len).map(|_| rand::Rng::random_ratio(&mut rng, if dense { 15 } else { 1 }, 16)).collect();
            let group = [0usize, 1, 7, len.max(1)][which];
            if group != 0 && len % group != 0 {
                return Ok(());
            }
            let want: Vec<bool> = if group == 0 {
                vec![v.iter().all(|&b| b)]
            } else {
                v.chunks(group).map(|c| c.iter().all(|&b| b)).collect()
            };
            let s = share_bits(&v, &mut rng);
            let runs = run3(s, move |cx, b: &BitShares| {
                let Value::Bits(b) = and_groups(cx, &Value::Bits(b.clone()), group as u64).unwrap() else { panic!() };
                b
            });
            let g = if group == 0 { len } else { group };
            let rounds = if len == 0 { 0 } else { Stats::or_group(g).rounds };
            prop_assert!(runs.iter().all(|r| r.rounds == rounds && r.messages == rounds));
            let [a, b, c] = runs;
            prop_assert_eq!(open_bits([a.out, b.out, c.out]), want);
        }
    }

    #[test]
    fn errors_not_panics() {
        let runs = run3([(), (), ()], |cx, _| {
            let a = Value::Bits(BitShares::zeros(3));
            let b = Value::Bits(BitShares::zeros(2));
            let p = Value::Public(vec![1]);
            [
                and(cx, &a, &b).err().map(|e| e.to_string()),
                mux(cx, &a, &a, &b).err().map(|e| e.to_string()),
                not(cx, &p).err().map(|e| e.to_string()),
                and_groups(cx, &a, 2).err().map(|e| e.to_string()),
            ]
        });
        for r in &runs {
            for e in &r.out {
                let e = e.as_ref().expect("an error");
                assert!(
                    e.contains("internal error in the generated schedule"),
                    "{e}"
                );
            }
            assert_eq!(r.messages, 0);
        }
    }
}
