//! Multiplication triples a circuit needs, naively and with masked triples (paper 004).
//!
//! Rules, node by node (Fig. 4, `eval` and `neededtriples`):
//! - `Netlist`: one triple per AND gate (Sect. 2.5), under either protocol.
//! - `Seq(C', C'')`: both parts run on disjoint triples: the sum.
//! - `Cond(C0, C1)`: the multiplexer needs one triple per output bit (Eq. (1), `triples_mux`).
//!   Naively both branches consume their own triples: `T(C0) + T(C1) + mux`. With masked
//!   triples both branches reuse one set, masked by MaskGen so the inactive branch sees uniform
//!   one-time pads (Sect. 4.1): `max(T(C0), T(C1)) + mux`.
//!
//! So the masked count is the AND gates on the longest execution path (Sect. 5.2,
//! `neededtriples`). MaskGen consumes no triples: its cost is mask material, `2 *
//! max(T(C0), T(C1))` bits per conditional (`MaskGen(2 * |triples_cond|)` in Fig. 4: two mask
//! bits per triple, for its `a` and `b`), made in preprocessing for every conditional, those in
//! inactive branches included, plus one opening of `s XOR t` on entering it.

use super::{Circuit, Kind};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Netlist,
    Cond,
    Seq,
    Par,
}

/// Why one node of the circuit tree costs what it costs; children in constructor order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Explanation {
    pub kind: NodeKind,
    /// AND gates of the node itself: a netlist's gates, a conditional's multiplexer, 0 for a
    /// sequence.
    pub own_and_gates: u64,
    /// Triples of the standard protocol, which evaluates every branch (Sect. 2.5).
    pub naive: u64,
    /// Triples of Pi_MT (Fig. 4): AND gates on the longest execution path.
    pub masked: u64,
    /// Mask bits MaskGen makes for this conditional (0 for the other constructors).
    pub mask_bits: u64,
    /// Rounds of openings under Pi_MT: AND-depth for a netlist (Sect. 7.1), the sum for a
    /// sequence; a conditional opens `s XOR t` once, runs its independent branches side by
    /// side, then its multiplexer (one AND layer).
    pub rounds: u64,
    /// The masked count as a formula over the children.
    pub rule: String,
    pub children: Vec<Explanation>,
}

/// The totals over a whole circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct TripleCount {
    pub naive: u64,
    pub masked: u64,
    /// Mask bits over all conditionals.
    pub mask_bits: u64,
    pub conditionals: u64,
    pub rounds: u64,
}

impl TripleCount {
    /// Triples masked triples save against the standard protocol.
    pub fn saved(&self) -> u64 {
        self.naive - self.masked
    }
}

/// Explains every node of `c` (see the module comment for the rules).
pub fn explain(c: &Circuit) -> Explanation {
    match c.kind() {
        Kind::Netlist(n) => {
            let ands = n.and_count();
            Explanation {
                kind: NodeKind::Netlist,
                own_and_gates: ands,
                naive: ands,
                masked: ands,
                mask_bits: 0,
                rounds: n.and_depth(),
                rule: format!("{ands} AND gates"),
                children: Vec::new(),
            }
        }
        Kind::Seq(a, b) => {
            let (a, b) = (explain(a), explain(b));
            Explanation {
                kind: NodeKind::Seq,
                own_and_gates: 0,
                naive: a.naive.saturating_add(b.naive),
                masked: a.masked.saturating_add(b.masked),
                mask_bits: 0,
                rounds: a.rounds.saturating_add(b.rounds),
                rule: format!("{} + {} (both parts run)", a.masked, b.masked),
                children: vec![a, b],
            }
        }
        Kind::Par(a, b) => {
            let (a, b) = (explain(a), explain(b));
            Explanation {
                kind: NodeKind::Par,
                own_and_gates: 0,
                naive: a.naive.saturating_add(b.naive),
                masked: a.masked.saturating_add(b.masked),
                mask_bits: 0,
                rounds: a.rounds.max(b.rounds),
                rule: format!("{} + {} (side by side)", a.masked, b.masked),
                children: vec![a, b],
            }
        }
        Kind::Cond(c0, c1) => {
            let mux = c.num_outputs() as u64;
            let (a, b) = (explain(c0), explain(c1));
            let shared = a.masked.max(b.masked);
            Explanation {
                kind: NodeKind::Cond,
                own_and_gates: mux,
                naive: a.naive.saturating_add(b.naive).saturating_add(mux),
                masked: shared.saturating_add(mux),
                mask_bits: shared.saturating_mul(2),
                rounds: 1 + a.rounds.max(b.rounds) + u64::from(mux > 0),
                rule: format!(
                    "max({}, {}) (branches share masked triples) + {mux} (mux)",
                    a.masked, b.masked
                ),
                children: vec![a, b],
            }
        }
    }
}

/// Triples of the standard protocol: every AND gate of every branch, plus the multiplexers.
pub fn naive_triples(c: &Circuit) -> u64 {
    match c.kind() {
        Kind::Netlist(n) => n.and_count(),
        Kind::Seq(a, b) | Kind::Par(a, b) => naive_triples(a).saturating_add(naive_triples(b)),
        Kind::Cond(a, b) => naive_triples(a)
            .saturating_add(naive_triples(b))
            .saturating_add(c.num_outputs() as u64),
    }
}

/// `neededtriples(C)` of Fig. 4: the AND gates on the longest execution path.
pub fn masked_triples(c: &Circuit) -> u64 {
    match c.kind() {
        Kind::Netlist(n) => n.and_count(),
        Kind::Seq(a, b) | Kind::Par(a, b) => masked_triples(a).saturating_add(masked_triples(b)),
        Kind::Cond(a, b) => masked_triples(a)
            .max(masked_triples(b))
            .saturating_add(c.num_outputs() as u64),
    }
}

/// Totals over the whole circuit.
pub fn count(c: &Circuit) -> TripleCount {
    fn mask_bits(e: &Explanation) -> u64 {
        e.children
            .iter()
            .map(mask_bits)
            .fold(e.mask_bits, u64::saturating_add)
    }
    let e = explain(c);
    TripleCount {
        naive: e.naive,
        masked: e.masked,
        mask_bits: mask_bits(&e),
        conditionals: c.conditionals() as u64,
        rounds: e.rounds,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{library, NetlistBuilder};
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// A netlist of `ands` chained AND gates (depth `ands`) with the given widths.
    fn chain(ands: u64, inputs: usize, outputs: usize) -> Circuit {
        let mut b = NetlistBuilder::new();
        let x = b.inputs(inputs);
        let mut w = x[0];
        for i in 0..ands as usize {
            w = b.and(w, x[i % inputs]);
        }
        for _ in 0..outputs {
            b.output(w);
        }
        b.finish().into()
    }

    fn cond(a: Circuit, b: Circuit) -> Circuit {
        Circuit::cond(a, b).unwrap()
    }

    fn seq(a: Circuit, b: Circuit) -> Circuit {
        Circuit::seq(a, b).unwrap()
    }

    #[test]
    fn cond_costs_its_dearer_branch_plus_mux() {
        let c = cond(chain(10, 2, 1), chain(3, 2, 1));
        assert_eq!(masked_triples(&c), 10 + 1);
        assert_eq!(naive_triples(&c), 10 + 3 + 1);
        let t = count(&c);
        assert_eq!(t.saved(), 3);
        assert_eq!(t.mask_bits, 2 * 10);
        // Open s XOR t, 10 AND layers, one mux layer.
        assert_eq!(t.rounds, 1 + 10 + 1);
        assert_eq!(t.conditionals, 1);

        // A wider output widens the mux, under both protocols.
        let c = cond(chain(10, 3, 4), chain(3, 3, 4));
        assert_eq!((masked_triples(&c), naive_triples(&c)), (14, 17));
    }

    #[test]
    fn sequence_of_conditionals_adds_their_longest_paths() {
        // Outputs of the first conditional: condition bit + 2 branch inputs of the second.
        let first = cond(chain(10, 2, 3), chain(3, 2, 3));
        let second = cond(chain(4, 2, 1), chain(7, 2, 1));
        let c = seq(first, second);
        assert_eq!(masked_triples(&c), (10 + 3) + (7 + 1));
        assert_eq!(naive_triples(&c), (13 + 3) + (11 + 1));
        let t = count(&c);
        assert_eq!(t.mask_bits, 2 * 10 + 2 * 7);
        assert_eq!(t.rounds, (1 + 10 + 1) + (1 + 7 + 1));
        assert_eq!(t.conditionals, 2);
    }

    #[test]
    fn nested_conditionals_take_the_longest_path() {
        // Cond(Cond(5, 20), Seq(8, 8)) with one output bit everywhere.
        let inner = cond(chain(5, 2, 1), chain(20, 2, 1));
        let other = seq(chain(8, 3, 1), chain(8, 1, 1));
        let c = cond(inner, other);
        assert_eq!(masked_triples(&c), (20 + 1) + 1);
        assert_eq!(naive_triples(&c), (5 + 20 + 1) + 16 + 1);
        let t = count(&c);
        // The inner conditional's masks are made even when it turns out inactive.
        assert_eq!(t.mask_bits, 2 * 21 + 2 * 20);
        assert_eq!(t.conditionals, 2);
        let e = explain(&c);
        assert_eq!(e.kind, NodeKind::Cond);
        assert_eq!(e.own_and_gates, 1);
        assert_eq!(e.children[0].masked, 21);
        assert_eq!(e.children[1].kind, NodeKind::Seq);
        assert_eq!(e.children[1].masked, 16);
        assert_eq!(
            e.rule,
            "max(21, 16) (branches share masked triples) + 1 (mux)"
        );
    }

    #[test]
    fn without_conditionals_both_counts_are_the_and_gates() {
        let msb = library::msb_extraction(16);
        let c: Circuit = msb.into();
        assert_eq!((masked_triples(&c), naive_triples(&c)), (29, 29));
        assert_eq!(count(&c).rounds, 15);
        let s = seq(chain(4, 2, 3), library::mux(1).into());
        assert_eq!((masked_triples(&s), naive_triples(&s)), (5, 5));
        assert_eq!(count(&s).mask_bits, 0);
    }

    #[test]
    fn explanation_serializes() {
        let c = cond(chain(2, 1, 1), chain(1, 1, 1));
        let j = serde_json::to_value(explain(&c)).unwrap();
        assert_eq!(j["kind"], "cond");
        assert_eq!(j["masked"], 3);
        assert_eq!(j["children"][1]["kind"], "netlist");
        assert_eq!(j["children"][1]["own_and_gates"], 1);
    }

    /// A random netlist of the given widths, wired as in Sect. 7.2: each gate reads two wires
    /// drawn from the pool of inputs and earlier gate outputs.
    fn random_netlist(rng: &mut ChaCha8Rng, inputs: usize, outputs: usize) -> Circuit {
        let mut b = NetlistBuilder::new();
        let mut pool = b.inputs(inputs);
        for _ in 0..rng.random_range(0..16) {
            let x = pool[rng.random_range(0..pool.len())];
            let y = pool[rng.random_range(0..pool.len())];
            let w = match rng.random_range(0..5) {
                0 | 1 => b.and(x, y),
                2 | 3 => b.xor(x, y),
                _ => b.not(x),
            };
            pool.push(w);
        }
        for _ in 0..outputs {
            b.output(pool[rng.random_range(0..pool.len())]);
        }
        b.finish().into()
    }

    /// A random tree of `Seq`/`Cond` of the given widths, at most `conds` conditionals.
    fn random_circuit(
        rng: &mut ChaCha8Rng,
        inputs: usize,
        outputs: usize,
        depth: u32,
        conds: &mut u32,
    ) -> Circuit {
        if depth == 0 || rng.random_bool(0.25) {
            return random_netlist(rng, inputs, outputs);
        }
        // A branch needs one input wire to compute from, so a Cond needs two.
        if inputs >= 2 && *conds > 0 && rng.random_bool(0.5) {
            *conds -= 1;
            let a = random_circuit(rng, inputs - 1, outputs, depth - 1, conds);
            let b = random_circuit(rng, inputs - 1, outputs, depth - 1, conds);
            cond(a, b)
        } else {
            let mid = rng.random_range(1..5);
            let a = random_circuit(rng, inputs, mid, depth - 1, conds);
            let b = random_circuit(rng, mid, outputs, depth - 1, conds);
            seq(a, b)
        }
    }

    /// Conditionals in pre-order, by address, so bit `i` of a choice vector picks the branch
    /// of the `i`-th one.
    fn number(c: &Circuit, ids: &mut Vec<*const Circuit>) {
        match c.kind() {
            Kind::Netlist(_) => {}
            Kind::Cond(a, b) => {
                ids.push(c as *const _);
                number(a, ids);
                number(b, ids);
            }
            Kind::Seq(a, b) | Kind::Par(a, b) => {
                number(a, ids);
                number(b, ids);
            }
        }
    }

    /// AND gates executed when every conditional takes the branch `choice` gives it.
    fn path_ands(c: &Circuit, ids: &[*const Circuit], choice: u32) -> u64 {
        match c.kind() {
            Kind::Netlist(n) => n.and_count(),
            Kind::Seq(a, b) | Kind::Par(a, b) => {
                path_ands(a, ids, choice) + path_ands(b, ids, choice)
            }
            Kind::Cond(a, b) => {
                let i = ids.iter().position(|p| std::ptr::eq(*p, c)).unwrap();
                let taken = if choice >> i & 1 == 1 { b } else { a };
                c.mux().unwrap().and_count() + path_ands(taken, ids, choice)
            }
        }
    }

    /// Brute force: the maximum over every assignment of branch choices.
    fn longest_path(c: &Circuit) -> u64 {
        let mut ids = Vec::new();
        number(c, &mut ids);
        (0..1u32 << ids.len())
            .map(|choice| path_ands(c, &ids, choice))
            .max()
            .unwrap()
    }

    fn all_ands(c: &Circuit) -> u64 {
        match c.kind() {
            Kind::Netlist(n) => n.and_count(),
            Kind::Seq(a, b) | Kind::Par(a, b) => all_ands(a) + all_ands(b),
            Kind::Cond(a, b) => c.mux().unwrap().and_count() + all_ands(a) + all_ands(b),
        }
    }

    /// Guards the generator: the property below is only worth something if random trees do
    /// nest conditionals whose branches differ.
    #[test]
    fn random_circuits_branch() {
        let (mut nested, mut cheaper) = (0, 0);
        for seed in 0..200 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let c = random_circuit(&mut rng, 4, 2, 5, &mut 10);
            nested += usize::from(c.conditionals() >= 3);
            let t = count(&c);
            cheaper += usize::from(t.masked < t.naive);
            assert_eq!(t.masked, longest_path(&c));
        }
        assert!(nested >= 20, "{nested} of 200 with 3+ conditionals");
        assert!(
            cheaper >= 40,
            "{cheaper} of 200 cheaper with masked triples"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn masked_count_is_the_longest_execution_path(
            seed: u64,
            inputs in 1usize..6,
            outputs in 1usize..4,
            depth in 0u32..6,
            max_conds in 0u32..11,
        ) {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let mut conds = max_conds;
            let c = random_circuit(&mut rng, inputs, outputs, depth, &mut conds);
            let t = count(&c);
            prop_assert_eq!(t.masked, longest_path(&c));
            prop_assert_eq!(t.masked, masked_triples(&c));
            prop_assert_eq!(t.naive, naive_triples(&c));
            prop_assert_eq!(t.naive, all_ands(&c));
            prop_assert!(t.masked <= t.naive);
            if c.conditionals() == 0 {
                prop_assert_eq!(t.masked, t.naive);
                prop_assert_eq!(t.mask_bits, 0);
            }
            prop_assert_eq!(t.conditionals, u64::from(max_conds - conds));
        }
    }
}
