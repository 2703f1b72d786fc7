//! Netlists the cost model talks about, built gate by gate so their counts can be checked
//! against the closed forms of `analysis::cost`: MSB extraction (Appendix E of the Large-Scale
//! MPC paper, Algorithms 6, 7 and 10), the OR tree, and the conditional's multiplexer
//! (Algorithm 11 CMux; Eq. (1) of the Masked Triples paper).

use super::gates::{Netlist, NetlistBuilder, Wire};

/// Full adder (Algorithm 6): one AND. A carry-in of `None` is the constant 0, for which the
/// adder degenerates to a half adder (still one AND) and no constant gate is needed.
fn full_adder(b: &mut NetlistBuilder, x: Wire, y: Wire, c: Option<Wire>) -> (Wire, Wire) {
    match c {
        Some(c) => {
            let t1 = b.xor(x, c);
            let t2 = b.xor(y, c);
            let s = b.xor(t1, y);
            let t = b.and(t1, t2);
            (s, b.xor(t, c))
        }
        None => (b.xor(x, y), b.and(x, y)),
    }
}

/// MSB of `x1 + x2 + x3 mod 2^k` from the bits of the three additive shares (inputs: the `k`
/// bits of `x1`, then of `x2`, then of `x3`, least significant first; one output).
///
/// Algorithm 10 with `I = {k - 1}`: full adders reduce three summands to two (one AND per bit,
/// one round), then the ripple-carry adder of Algorithm 7 adds `2c + s`. Gates that cannot reach
/// the MSB are left out: the top full adder's carry and the adder's final carry fall off mod
/// `2^k`, and bit 0 of `2c` is the constant 0 so it carries nothing. That leaves `k - 1 + k - 2 =
/// 2k - 3` ANDs in `1 + (k - 2) = k - 1` rounds for `k >= 2` (the 29 ANDs in 15 rounds of
/// Sect. 4.3.1 for `k = 16`); `k = 1` is three XORs.
///
/// # Panics
/// If `k == 0`.
pub fn msb_extraction(k: u32) -> Netlist {
    assert!(k >= 1, "MSB of a 0-bit ring");
    let k = k as usize;
    let mut b = NetlistBuilder::new();
    let x1 = b.inputs(k);
    let x2 = b.inputs(k);
    let x3 = b.inputs(k);
    // Bits 0..k-1: sum and carry; bit k-1: sum only.
    let mut s = Vec::with_capacity(k);
    let mut c = Vec::with_capacity(k - 1);
    for i in 0..k - 1 {
        let (si, ci) = full_adder(&mut b, x1[i], x2[i], Some(x3[i]));
        s.push(si);
        c.push(ci);
    }
    let top = b.xor(x1[k - 1], x2[k - 1]);
    s.push(b.xor(top, x3[k - 1]));
    // Ripple-carry over bits 1..k-2 of s + 2c; the carry into bit 1 is 0.
    let mut carry = None;
    for i in 1..k.saturating_sub(1) {
        let (_, co) = full_adder(&mut b, s[i], c[i - 1], carry);
        carry = Some(co);
    }
    let mut msb = s[k - 1];
    if k >= 2 {
        msb = b.xor(msb, c[k - 2]);
    }
    if let Some(carry) = carry {
        msb = b.xor(msb, carry);
    }
    b.output(msb);
    b.finish()
}

/// OR of `n` bits as a balanced tree: `n - 1` ANDs in `ceil(log2 n)` rounds, as in
/// `RevealCost::or_and_gates` and `RevealCost::rounds`.
///
/// # Panics
/// If `n == 0`.
pub fn or_tree(n: usize) -> Netlist {
    assert!(n >= 1, "OR of no bits");
    let mut b = NetlistBuilder::new();
    let mut layer = b.inputs(n);
    while layer.len() > 1 {
        let mut next = Vec::with_capacity(layer.len().div_ceil(2));
        for pair in layer.chunks(2) {
            next.push(match *pair {
                [x, y] => b.or(x, y),
                [x] => x,
                _ => unreachable!("chunks(2) yields one or two wires"),
            });
        }
        layer = next;
    }
    b.output(layer[0]);
    b.finish()
}

/// AND of `n` bits as a balanced tree: `n - 1` ANDs in `ceil(log2 n)` rounds (`all`).
///
/// # Panics
/// If `n == 0`.
pub fn and_tree(n: usize) -> Netlist {
    assert!(n >= 1, "AND of no bits");
    let mut b = NetlistBuilder::new();
    let mut layer = b.inputs(n);
    while layer.len() > 1 {
        let mut next = Vec::with_capacity(layer.len().div_ceil(2));
        for pair in layer.chunks(2) {
            next.push(match *pair {
                [x, y] => b.and(x, y),
                [x] => x,
                _ => unreachable!("chunks(2) yields one or two wires"),
            });
        }
        layer = next;
    }
    b.output(layer[0]);
    b.finish()
}

/// The multiplexer that leaves a conditional (Fig. 4 `mux`, Eq. (1)): inputs `t`, then the
/// `width` outputs of branch 0, then those of branch 1; output `x0 XOR t(x0 XOR x1) = x_t`.
/// One AND per output bit, all in one round (Algorithm 11 CMux, bit by bit).
pub fn mux(width: usize) -> Netlist {
    let mut b = NetlistBuilder::new();
    let t = b.input();
    let x0 = b.inputs(width);
    let x1 = b.inputs(width);
    for (&a, &c) in x0.iter().zip(&x1) {
        let d = b.xor(a, c);
        let td = b.and(t, d);
        let o = b.xor(a, td);
        b.output(o);
    }
    b.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use irisc_runtime::protocol::stats::Stats;
    use proptest::prelude::*;

    fn bits(v: u64, k: u32) -> impl Iterator<Item = bool> {
        (0..k).map(move |i| (v >> i) & 1 == 1)
    }

    #[test]
    fn msb_counts_match_cost_model() {
        for k in 2..=64u32 {
            let nl = msb_extraction(k);
            assert_eq!(nl.and_count(), u64::from(2 * k - 3), "k = {k}");
            assert_eq!(nl.and_depth(), u64::from(k - 1), "k = {k}");
            // The runtime counts the same gates and rounds for its MSB extraction.
            let st = Stats::msb(k);
            assert_eq!(nl.and_count(), st.and_gates, "k = {k}");
            assert_eq!(nl.and_depth(), st.rounds, "k = {k}");
            assert_eq!((nl.num_inputs(), nl.num_outputs()), (3 * k as usize, 1));
        }
        let one = msb_extraction(1);
        assert_eq!((one.and_count(), one.and_depth()), (0, 0));
        assert_eq!(one.and_count(), Stats::msb(1).and_gates);
    }

    #[test]
    fn msb_of_sixteen_bits_is_the_papers_29_in_15() {
        let nl = msb_extraction(16);
        assert_eq!((nl.and_count(), nl.and_depth()), (29, 15));
    }

    #[test]
    fn or_tree_counts_match_cost_model() {
        for n in 1..=300usize {
            let nl = or_tree(n);
            // n - 1 ORs of one AND each, in ceil(log2 n) levels.
            assert_eq!(nl.and_count(), n as u64 - 1, "n = {n}");
            assert_eq!(
                nl.and_depth(),
                u64::from(usize::BITS - (n - 1).leading_zeros()),
                "n = {n}"
            );
        }
        let nl = or_tree(5);
        for v in 0..32u64 {
            let x: Vec<bool> = bits(v, 5).collect();
            assert_eq!(nl.eval(&x), vec![v != 0]);
        }
    }

    #[test]
    fn mux_selects_and_costs_one_and_per_bit() {
        for w in 0..=8usize {
            let nl = mux(w);
            assert_eq!(nl.and_count(), w as u64);
            assert_eq!(nl.and_depth(), u64::from(w > 0));
            assert_eq!((nl.num_inputs(), nl.num_outputs()), (1 + 2 * w, w));
        }
        let nl = mux(3);
        let x0 = [true, false, true];
        let x1 = [false, true, true];
        for t in [false, true] {
            let mut inp = vec![t];
            inp.extend(x0);
            inp.extend(x1);
            assert_eq!(nl.eval(&inp), if t { x1.to_vec() } else { x0.to_vec() });
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn msb_netlist_computes_the_msb(k in 1u32..=64, x1: u64, x2: u64, x3: u64) {
            let mask = if k == 64 { u64::MAX } else { (1u64 << k) - 1 };
            let (x1, x2, x3) = (x1 & mask, x2 & mask, x3 & mask);
            let sum = x1.wrapping_add(x2).wrapping_add(x3) & mask;
            let inp: Vec<bool> = bits(x1, k).chain(bits(x2, k)).chain(bits(x3, k)).collect();
            prop_assert_eq!(msb_extraction(k).eval(&inp), vec![(sum >> (k - 1)) & 1 == 1]);
        }
    }
}
