//! The `beaver` family inside a compiled program (paper 004 on the three parties of an iris
//! program): the compared values leave the replicated sharing by a local conversion to XOR
//! shares, the reveals' circuit runs under Masked Triples ([`crate::beaver::online`]) on one
//! lane per record, and each reveal's bit per lane is opened to its party.
//!
//! The local conversion: a replicated sharing of `x = x0 + x1 + x2 mod 2^k` gives party `i`
//! the component `x_i`. The three components are the circuit's three summands, each XOR-shared
//! trivially: party `i`'s share of summand `j` is `x_j` when `j = i` and 0 otherwise (no message;
//! the circuit's full adders add them, as the compiler's MSB-extraction netlist does). A binary replicated
//! sharing `b = b0 ^ b1 ^ b2` is already an XOR sharing once each party keeps `b_i`.

use crate::beaver::circuit::Circuit;
use crate::beaver::material::{words_for, Material};
use crate::beaver::online::{evaluate, open_to};
use crate::beaver::schedule::Schedule;
use crate::beaver::{BeaverError, Parties};
use crate::error::RuntimeError;
use crate::share::binary::tail_mask;

use super::ctx::{sched, Ctx};
use super::value::Value;
pub use super::xor_rows::XorRows;

/// `mpc.to_xor`: the local conversion of `v` to XOR shares, `group` consecutive elements per
/// lane. Replicated Z_2^k shares give `group * 3k` rows per lane (element, summand, bit from
/// the least significant: the order of the MSB-extraction circuit's inputs); binary shares give
/// `group` rows.
pub fn to_xor(cx: &Ctx<'_>, v: &Value, k: u32, group: usize) -> Result<Value, RuntimeError> {
    let me = cx.party();
    let (n, per_element) = match v {
        Value::Replicated { own, .. } => (own.len(), 3 * k as usize),
        Value::Bits(b) => (b.len, 1),
        other => {
            return Err(sched(format!(
                "to_xor of {}: only replicated Z_2^k shares and binary shares convert locally",
                other.kind()
            )))
        }
    };
    if group == 0 || !n.is_multiple_of(group) || n == 0 {
        return Err(sched(format!(
            "to_xor: {n} elements do not split into lanes of {group}"
        )));
    }
    let lanes = n / group;
    let mut out = XorRows::zeros(lanes, group * per_element);
    match v {
        Value::Replicated { own, .. } => {
            let k = k as usize;
            for lane in 0..lanes {
                for g in 0..group {
                    let x = own.get(lane * group + g).expect("in range");
                    // Only this party's own summand is nonzero in its share.
                    let base = g * 3 * k + me * k;
                    for bit in 0..k {
                        if x >> bit & 1 == 1 {
                            out.set(base + bit, lane);
                        }
                    }
                }
            }
        }
        Value::Bits(b) => {
            for e in 0..n {
                if b.own[e / 64] >> (e % 64) & 1 == 1 {
                    out.set(e % group, e / group);
                }
            }
        }
        _ => unreachable!("checked above"),
    }
    Ok(Value::Xor(out))
}

/// `mpc.xor_concat`: the rows of `a` then those of `b`, on the same lanes (a one-lane operand,
/// e.g. a query's bit, is broadcast to the other's lanes).
pub fn xor_concat(a: &Value, b: &Value) -> Result<Value, RuntimeError> {
    let (Value::Xor(a), Value::Xor(b)) = (a, b) else {
        return Err(sched(format!(
            "xor_concat of {} and {}",
            a.kind(),
            b.kind()
        )));
    };
    let lanes = a.lanes.max(b.lanes);
    let (a, b) = (a.broadcast(lanes)?, b.broadcast(lanes)?);
    let mut words = a.words;
    words.extend(b.words);
    Ok(Value::Xor(XorRows {
        lanes,
        rows: a.rows + b.rows,
        words,
    }))
}

/// Where each input of the circuit comes from: a row of the converted operand, or a public
/// constant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputSource {
    Row(usize),
    Const(bool),
}

/// Parses the input table of `mpc.beaver_eval` (`inputs`): space-separated items, `a..b` (rows
/// a to b - 1), `a` (row a), `c0` / `c1` (the constant).
pub fn parse_inputs(text: &str) -> Result<Vec<InputSource>, String> {
    let mut out = Vec::new();
    for item in text.split_whitespace() {
        let num = |s: &str| {
            s.parse::<usize>()
                .map_err(|_| format!("input table item `{item}` is not a row, a range or c0/c1"))
        };
        match item {
            "c0" => out.push(InputSource::Const(false)),
            "c1" => out.push(InputSource::Const(true)),
            _ => match item.split_once("..") {
                Some((a, b)) => {
                    let (a, b) = (num(a)?, num(b)?);
                    if b < a {
                        return Err(format!("input table range `{item}` runs backwards"));
                    }
                    out.extend((a..b).map(InputSource::Row));
                }
                None => out.push(InputSource::Row(num(item)?)),
            },
        }
    }
    Ok(out)
}

/// The circuit's input rows gathered from `x` as `inputs` says; party 0 holds the constants.
pub fn gather_inputs(
    x: &XorRows,
    inputs: &[InputSource],
    party: usize,
) -> Result<Vec<u64>, RuntimeError> {
    let w = words_for(x.lanes);
    let mut out = Vec::with_capacity(inputs.len() * w);
    for s in inputs {
        match *s {
            InputSource::Row(r) => {
                if r >= x.rows {
                    return Err(sched(format!(
                        "the circuit reads input row {r}, the operand has {} rows",
                        x.rows
                    )));
                }
                out.extend_from_slice(x.row(r));
            }
            InputSource::Const(bit) => {
                let start = out.len();
                out.resize(start + w, 0);
                if bit && party == 0 {
                    out[start..].fill(u64::MAX);
                    if let Some(last) = out.last_mut() {
                        *last &= tail_mask(x.lanes);
                    }
                }
            }
        }
    }
    Ok(out)
}

/// `mpc.beaver_eval`: Pi_MT (Fig. 4) of `circuit` (as `schedule`) on the gathered rows of `x`,
/// one lane per lane of `x`, with `material` (one execution, checked against the schedule and
/// the lanes before anything is opened). Returns the outputs' XOR shares and the rounds.
pub fn beaver_eval(
    cx: &mut Ctx<'_>,
    x: &Value,
    circuit: &Circuit,
    schedule: &Schedule,
    inputs: &[InputSource],
    material: &Material,
) -> Result<Value, RuntimeError> {
    let Value::Xor(x) = x else {
        return Err(sched(format!("beaver_eval of {}", x.kind())));
    };
    if inputs.len() != circuit.num_inputs() {
        return Err(sched(format!(
            "the input table names {} inputs, the circuit takes {}",
            inputs.len(),
            circuit.num_inputs()
        )));
    }
    let rows = gather_inputs(x, inputs, cx.party())?;
    let parties = Parties::new(cx.party(), cx.net.parties());
    let e = evaluate(cx.net, parties, schedule, material, &rows).map_err(beaver_error)?;
    cx.rounds += e.rounds;
    Ok(Value::Xor(XorRows {
        lanes: x.lanes,
        rows: circuit.num_outputs(),
        words: e.outputs,
    }))
}

/// `mpc.beaver_open`: row `row` of XOR-shared `y` opened to party `to` (one round: the others
/// send it their shares).
pub fn beaver_open(
    cx: &mut Ctx<'_>,
    y: &Value,
    row: usize,
    to: usize,
) -> Result<Value, RuntimeError> {
    let Value::Xor(y) = y else {
        return Err(sched(format!("beaver_open of {}", y.kind())));
    };
    if row >= y.rows {
        return Err(sched(format!(
            "beaver_open of output {row}, the circuit has {}",
            y.rows
        )));
    }
    let parties = Parties::new(cx.party(), cx.net.parties());
    let opened = open_to(cx.net, parties, y.row(row), y.lanes, to)?;
    cx.rounds += 1;
    Ok(Value::Clear(opened.map(|words| {
        (0..y.lanes)
            .map(|l| words[l / 64] >> (l % 64) & 1 == 1)
            .collect()
    })))
}

/// `mpc.xor_to_bits`: rows `first..first + width` of XOR-shared `y` as binary replicated shares
/// of `lanes * width` elements, lane-major (record-major, as the honest-majority ops lay out a
/// record's rotations). One round: party i re-randomises its XOR share with a PRSS zero share
/// and sends it to party i + 1, which keeps it as its `prev` (the reshare of an AND gate's
/// output, ABY3).
pub fn xor_to_bits(
    cx: &mut Ctx<'_>,
    y: &Value,
    first: usize,
    width: usize,
) -> Result<Value, RuntimeError> {
    let Value::Xor(y) = y else {
        return Err(sched(format!("xor_to_bits of {}", y.kind())));
    };
    if width == 0 || first + width > y.rows {
        return Err(sched(format!(
            "xor_to_bits of rows {first}..{} of {}",
            first + width,
            y.rows
        )));
    }
    let n = y.lanes * width;
    let words = crate::share::binary::words_for(n);
    let mut z = vec![0u64; words];
    for g in 0..width {
        let row = y.row(first + g);
        for lane in 0..y.lanes {
            if row[lane / 64] >> (lane % 64) & 1 == 1 {
                let e = lane * width + g;
                z[e / 64] |= 1 << (e % 64);
            }
        }
    }
    let alpha = cx.prss.zero_bits(words);
    for (zi, a) in z.iter_mut().zip(&alpha) {
        *zi ^= a;
    }
    crate::share::binary::clear_tail(&mut z, n);
    let to = cx.net.next();
    crate::protocol::send_elems(cx.net, to, &z)?;
    let from = cx.net.prev();
    let got: Vec<u64> = crate::protocol::recv_elems(cx.net, from, words, "XOR reshare")?;
    cx.rounds += 1;
    Ok(Value::Bits(crate::share::BitShares::from_words(z, got, n)))
}

pub(crate) fn beaver_error(e: BeaverError) -> RuntimeError {
    match e {
        BeaverError::Net(n) => RuntimeError::Net(n),
        other => RuntimeError::Setup(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::memory::MemoryTransport;
    use crate::rand::Prss;
    use crate::share::RingVec;
    use proptest::prelude::*;

    /// XOR of the three parties' rows.
    fn combine(parts: &[XorRows]) -> Vec<u64> {
        let mut out = parts[0].words.clone();
        for p in &parts[1..] {
            for (o, w) in out.iter_mut().zip(&p.words) {
                *o ^= w;
            }
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// The local conversion: the XOR of the parties' rows is the three summands' bits, so
        /// the sum of the summands (what the circuit adds) is the shared value.
        #[test]
        fn to_xor_gives_the_summands_bits(
            k in 2u32..=20,
            group in 1usize..4,
            lanes in 1usize..70,
            seed in any::<u64>(),
        ) {
            let n = lanes * group;
            let mask = (1u64 << k) - 1;
            let mut s = seed;
            let mut next = || { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); s >> 11 };
            let comps: Vec<Vec<u64>> = (0..3).map(|_| (0..n).map(|_| next()).collect()).collect();
            let mut parts = Vec::new();
            for me in 0..3 {
                let mut nets = MemoryTransport::group(3);
                let net = &mut nets[me];
                let mut prss = Prss::from_seeds(me, [me as u8; 16], [0; 16]);
                let cx = Ctx::new(net, &mut prss);
                let own = RingVec::from_u64s(k, comps[me].iter().copied()).unwrap();
                let prev = RingVec::from_u64s(k, comps[(me + 2) % 3].iter().copied()).unwrap();
                let Value::Xor(x) = to_xor(&cx, &Value::Replicated { own, prev }, k, group).unwrap() else { unreachable!() };
                parts.push(x);
            }
            let all = combine(&parts);
            let w = words_for(lanes);
            for lane in 0..lanes {
                for g in 0..group {
                    let e = lane * group + g;
                    let mut sum = 0u64;
                    for (j, comp) in comps.iter().enumerate() {
                        let mut v = 0u64;
                        for bit in 0..k as usize {
                            let r = g * 3 * k as usize + j * k as usize + bit;
                            v |= (all[r * w + lane / 64] >> (lane % 64) & 1) << bit;
                        }
                        prop_assert_eq!(v, comp[e] & mask);
                        sum = sum.wrapping_add(v);
                    }
                    let want = comps.iter().fold(0u64, |a, c| a.wrapping_add(c[e])) & mask;
                    prop_assert_eq!(sum & mask, want);
                }
            }
        }
    }

    #[test]
    fn input_tables_parse_and_refuse() {
        assert_eq!(
            parse_inputs("0..3 7 c1 c0").unwrap(),
            vec![
                InputSource::Row(0),
                InputSource::Row(1),
                InputSource::Row(2),
                InputSource::Row(7),
                InputSource::Const(true),
                InputSource::Const(false)
            ]
        );
        assert!(parse_inputs("3..1").unwrap_err().contains("backwards"));
        assert!(parse_inputs("x").unwrap_err().contains("not a row"));
    }

    #[test]
    fn one_lane_broadcasts_and_constants_are_party_zeros() {
        let one = XorRows {
            lanes: 1,
            rows: 2,
            words: vec![1, 0],
        };
        let wide = XorRows::zeros(70, 1);
        let Value::Xor(j) = xor_concat(&Value::Xor(wide), &Value::Xor(one)).unwrap() else {
            unreachable!()
        };
        assert_eq!((j.lanes, j.rows), (70, 3));
        assert_eq!(j.row(1), &[u64::MAX, (1 << 6) - 1]);
        assert_eq!(j.row(2), &[0, 0]);
        let consts = [InputSource::Const(true), InputSource::Row(1)];
        assert_eq!(
            gather_inputs(&j, &consts, 0).unwrap(),
            vec![u64::MAX, 63, u64::MAX, 63]
        );
        assert_eq!(
            gather_inputs(&j, &consts, 1).unwrap(),
            vec![0, 0, u64::MAX, 63]
        );
        let bad = XorRows::zeros(3, 1);
        assert!(xor_concat(&Value::Xor(bad), &Value::Xor(XorRows::zeros(5, 1))).is_err());
    }
}
