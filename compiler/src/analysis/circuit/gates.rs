//! One netlist as a gate DAG: the `Netlist(gates)` case of the circuit syntax of the Masked
//! Triples paper (paper 004, Sect. 5.1), evaluated by the standard triple-based protocol
//! (Sect. 2.5). XOR and NOT are local; each AND consumes one triple and one round of openings,
//! and ANDs in the same layer open together (Sect. 7.1), so rounds = AND-depth.

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use petgraph::Direction;

/// A node of the gate DAG. Edges run from an operand to the gate that reads it; the edge weight
/// is the operand's position (0 or 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Gate {
    /// The i-th input wire of the netlist.
    Input(usize),
    And,
    Xor,
    Not,
    /// The i-th output of the netlist; its one operand is the wire it exposes.
    Output(usize),
}

/// A wire of a netlist under construction: the output of an input or of a gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Wire(NodeIndex);

/// An immutable netlist. Built only by [`NetlistBuilder`], whose gates can only read wires that
/// already exist, so node indices are a topological order and the graph is acyclic.
#[derive(Debug, Clone)]
pub struct Netlist {
    graph: DiGraph<Gate, u8>,
    inputs: Vec<NodeIndex>,
    outputs: Vec<NodeIndex>,
}

/// Builds a [`Netlist`] gate by gate. Wires are only valid in the builder that made them.
#[derive(Debug, Clone, Default)]
pub struct NetlistBuilder {
    graph: DiGraph<Gate, u8>,
    inputs: Vec<NodeIndex>,
    outputs: Vec<NodeIndex>,
}

impl NetlistBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A fresh input wire; inputs are numbered in creation order.
    pub fn input(&mut self) -> Wire {
        let n = self.graph.add_node(Gate::Input(self.inputs.len()));
        self.inputs.push(n);
        Wire(n)
    }

    /// `n` fresh input wires.
    pub fn inputs(&mut self, n: usize) -> Vec<Wire> {
        (0..n).map(|_| self.input()).collect()
    }

    fn gate(&mut self, gate: Gate, operands: &[Wire]) -> Wire {
        let n = self.graph.add_node(gate);
        for (pos, w) in operands.iter().enumerate() {
            // Panics for a wire of another (larger) builder; a smaller one's wire would alias,
            // which the type cannot rule out, hence "only valid in the builder that made them".
            self.graph.add_edge(w.0, n, pos as u8);
        }
        Wire(n)
    }

    pub fn and(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate(Gate::And, &[a, b])
    }

    pub fn xor(&mut self, a: Wire, b: Wire) -> Wire {
        self.gate(Gate::Xor, &[a, b])
    }

    pub fn not(&mut self, a: Wire) -> Wire {
        self.gate(Gate::Not, &[a])
    }

    /// `a OR b = NOT(NOT a AND NOT b)`: one AND gate.
    pub fn or(&mut self, a: Wire, b: Wire) -> Wire {
        let na = self.not(a);
        let nb = self.not(b);
        let both = self.and(na, nb);
        self.not(both)
    }

    /// Exposes `w` as the next output; outputs are numbered in call order.
    pub fn output(&mut self, w: Wire) {
        let n = self.gate(Gate::Output(self.outputs.len()), &[w]);
        self.outputs.push(n.0);
    }

    /// Copies `nl`'s gates into this builder, its inputs read from `inputs`; returns the wires of
    /// its outputs (in order).
    ///
    /// # Panics
    /// If `inputs.len()` differs from `nl.num_inputs()`.
    pub fn append(&mut self, nl: &Netlist, inputs: &[Wire]) -> Vec<Wire> {
        assert_eq!(
            inputs.len(),
            nl.num_inputs(),
            "appended netlist input width"
        );
        let mut map: Vec<Option<Wire>> = vec![None; nl.graph.node_count()];
        let mut outs: Vec<Option<Wire>> = vec![None; nl.num_outputs()];
        // Index order is topological (see [`Netlist`]), so operands are mapped first.
        for n in nl.graph.node_indices() {
            let [a, b] = nl.operands(n).map(|o| o.and_then(|o| map[o.index()]));
            let w = match nl.graph[n] {
                Gate::Input(i) => inputs[i],
                Gate::And => self.and(a.expect("AND operand"), b.expect("AND operand")),
                Gate::Xor => self.xor(a.expect("XOR operand"), b.expect("XOR operand")),
                Gate::Not => self.not(a.expect("NOT operand")),
                Gate::Output(i) => {
                    outs[i] = a;
                    a.expect("output operand")
                }
            };
            map[n.index()] = Some(w);
        }
        outs.into_iter()
            .map(|o| o.expect("every output is driven"))
            .collect()
    }

    pub fn finish(self) -> Netlist {
        Netlist {
            graph: self.graph,
            inputs: self.inputs,
            outputs: self.outputs,
        }
    }
}

impl Netlist {
    /// The gate DAG, for analyses beyond the counts here.
    pub fn graph(&self) -> &DiGraph<Gate, u8> {
        &self.graph
    }

    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    fn count(&self, gate: Gate) -> u64 {
        self.graph.node_weights().filter(|g| **g == gate).count() as u64
    }

    /// AND gates: the triples this netlist consumes under the standard protocol (Sect. 2.5).
    pub fn and_count(&self) -> u64 {
        self.count(Gate::And)
    }

    pub fn xor_count(&self) -> u64 {
        self.count(Gate::Xor)
    }

    pub fn not_count(&self) -> u64 {
        self.count(Gate::Not)
    }

    /// Operands of `n` in position order.
    fn operands(&self, n: NodeIndex) -> [Option<NodeIndex>; 2] {
        let mut ops = [None, None];
        for e in self.graph.edges_directed(n, Direction::Incoming) {
            ops[usize::from(*e.weight())] = Some(e.source());
        }
        ops
    }

    /// AND-depth of every node (ANDs on the longest path from an input up to and including it),
    /// indexed by node index; one pass in index order, which is topological (see [`Netlist`]).
    fn and_depths(&self) -> Vec<u64> {
        let mut depth = vec![0u64; self.graph.node_count()];
        for n in self.graph.node_indices() {
            let deepest = self
                .operands(n)
                .iter()
                .flatten()
                .map(|o| depth[o.index()])
                .max()
                .unwrap_or(0);
            let own = u64::from(self.graph[n] == Gate::And);
            depth[n.index()] = deepest + own;
        }
        depth
    }

    /// AND-depth: the most AND gates on any path of the DAG, i.e. the rounds of openings
    /// (Sect. 7.1: ANDs are listed in layers whose openings go out together).
    pub fn and_depth(&self) -> u64 {
        self.and_depths().into_iter().max().unwrap_or(0)
    }

    /// Evaluates the netlist on cleartext bits (the semantics the protocol computes on sharings).
    ///
    /// # Panics
    /// If `inputs.len()` differs from [`Netlist::num_inputs`].
    pub fn eval(&self, inputs: &[bool]) -> Vec<bool> {
        assert_eq!(inputs.len(), self.inputs.len(), "netlist input width");
        let mut value = vec![false; self.graph.node_count()];
        let mut out = vec![false; self.outputs.len()];
        for n in self.graph.node_indices() {
            let [a, b] = self.operands(n).map(|o| o.map(|o| value[o.index()]));
            value[n.index()] = match self.graph[n] {
                Gate::Input(i) => inputs[i],
                Gate::And => a.unwrap() & b.unwrap(),
                Gate::Xor => a.unwrap() ^ b.unwrap(),
                Gate::Not => !a.unwrap(),
                Gate::Output(i) => {
                    out[i] = a.unwrap();
                    a.unwrap()
                }
            };
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Longest AND chain by enumerating every path backwards from every node: independent of
    /// the index-order pass of `and_depth`.
    fn brute_and_chain(nl: &Netlist) -> u64 {
        fn from(nl: &Netlist, n: NodeIndex) -> u64 {
            let own = u64::from(nl.graph[n] == Gate::And);
            own + nl
                .graph
                .neighbors_directed(n, Direction::Incoming)
                .map(|p| from(nl, p))
                .max()
                .unwrap_or(0)
        }
        nl.graph
            .node_indices()
            .map(|n| from(nl, n))
            .max()
            .unwrap_or(0)
    }

    /// A netlist from a gate list: `(kind, x, y)` reads pool wires `x`, `y` (mod pool size);
    /// the pool grows by each gate's output, as in the generator of Sect. 7.2.
    fn netlist_from(inputs: usize, gates: &[(u8, usize, usize)], outs: &[usize]) -> Netlist {
        let mut b = NetlistBuilder::new();
        let mut pool = b.inputs(inputs);
        for &(kind, x, y) in gates {
            let (x, y) = (pool[x % pool.len()], pool[y % pool.len()]);
            let w = match kind % 3 {
                0 => b.and(x, y),
                1 => b.xor(x, y),
                _ => b.not(x),
            };
            pool.push(w);
        }
        for &o in outs {
            b.output(pool[o % pool.len()]);
        }
        b.finish()
    }

    #[test]
    fn chain_and_parallel_depths() {
        let mut b = NetlistBuilder::new();
        let x = b.inputs(4);
        // Two parallel ANDs then one: depth 2, three gates.
        let l = b.and(x[0], x[1]);
        let r = b.and(x[2], x[3]);
        let lr = b.xor(l, r);
        let top = b.and(lr, x[0]);
        b.output(top);
        let nl = b.finish();
        assert_eq!(nl.and_count(), 3);
        assert_eq!(nl.xor_count(), 1);
        assert_eq!(nl.and_depth(), 2);
        assert_eq!(nl.num_inputs(), 4);
        assert_eq!(nl.num_outputs(), 1);
        assert_eq!(nl.eval(&[true, true, false, false]), vec![true]);
        assert_eq!(nl.eval(&[true, true, true, true]), vec![false]);
    }

    #[test]
    fn xor_and_not_are_free() {
        let mut b = NetlistBuilder::new();
        let x = b.inputs(2);
        let y = b.xor(x[0], x[1]);
        let z = b.not(y);
        b.output(z);
        let nl = b.finish();
        assert_eq!((nl.and_count(), nl.and_depth()), (0, 0));
        assert_eq!(nl.eval(&[true, false]), vec![false]);
        assert_eq!(nl.eval(&[true, true]), vec![true]);
    }

    #[test]
    fn or_is_one_and() {
        let mut b = NetlistBuilder::new();
        let x = b.inputs(2);
        let o = b.or(x[0], x[1]);
        b.output(o);
        let nl = b.finish();
        assert_eq!((nl.and_count(), nl.and_depth()), (1, 1));
        for (a, c) in [(false, false), (false, true), (true, false), (true, true)] {
            assert_eq!(nl.eval(&[a, c]), vec![a | c]);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn and_depth_is_longest_and_chain(
            inputs in 1usize..5,
            gates in proptest::collection::vec((0u8..3, 0usize..64, 0usize..64), 0..40),
            outs in proptest::collection::vec(0usize..64, 0..4),
        ) {
            let nl = netlist_from(inputs, &gates, &outs);
            prop_assert_eq!(nl.and_depth(), brute_and_chain(&nl));
            prop_assert!(!petgraph::algo::is_cyclic_directed(nl.graph()));
            let ands = gates.iter().filter(|g| g.0 % 3 == 0).count() as u64;
            prop_assert_eq!(nl.and_count(), ands);
            prop_assert!(nl.and_depth() <= nl.and_count());
        }
    }
}
