//! The circuit analysis' circuits in the runtime's form ([`irisc_runtime::beaver::circuit`]):
//! what the `beaver` family evaluates. The tree is kept as it is (`Netlist | Cond | Seq | Par`);
//! a netlist's gate DAG becomes a flat gate array in node-index order, which is topological
//! (see [`Netlist`]), with wires numbered inputs first, then one per gate.
//!
//! [`program_circuit`] is the decision of every reveal of a program for one record and one
//! query, side by side: its inputs are, for each comparison, the `3k` bits of the three
//! additive shares of the compared value, in evaluation order.

use irisc_runtime::beaver::circuit as rt;
use petgraph::visit::EdgeRef;
use petgraph::Direction;

use super::build::{build, BuildError};
use super::gates::Gate;
use super::{Circuit, Kind, Netlist};
use crate::analysis::plan::Plan;
use crate::sema::program::Program;

/// `c` in the runtime's form; its semantics, triples and rounds are unchanged.
pub fn to_runtime(c: &Circuit) -> rt::Circuit {
    match c.kind() {
        Kind::Netlist(n) => rt::Circuit::netlist(netlist(n)),
        Kind::Cond(a, b) => {
            rt::Circuit::cond(to_runtime(a), to_runtime(b)).expect("widths checked by the analysis")
        }
        Kind::Seq(a, b) => {
            rt::Circuit::seq(to_runtime(a), to_runtime(b)).expect("widths checked by the analysis")
        }
        Kind::Par(a, b) => rt::Circuit::par(to_runtime(a), to_runtime(b)),
    }
}

fn netlist(n: &Netlist) -> rt::Netlist {
    let g = n.graph();
    let inputs = n.num_inputs() as u32;
    // Wire of each node: inputs keep their number, gates are numbered after the inputs in node
    // order, an output node aliases the wire it exposes.
    let mut wire = vec![u32::MAX; g.node_count()];
    let mut gates = Vec::new();
    let mut outputs = vec![0u32; n.num_outputs()];
    for node in g.node_indices() {
        let mut ops = [u32::MAX; 2];
        for e in g.edges_directed(node, Direction::Incoming) {
            ops[usize::from(*e.weight())] = wire[e.source().index()];
        }
        wire[node.index()] = match g[node] {
            Gate::Input(i) => i as u32,
            Gate::Output(i) => {
                outputs[i] = ops[0];
                ops[0]
            }
            gate => {
                gates.push(match gate {
                    Gate::And => rt::Gate::And(ops[0], ops[1]),
                    Gate::Xor => rt::Gate::Xor(ops[0], ops[1]),
                    _ => rt::Gate::Not(ops[0]),
                });
                inputs + gates.len() as u32 - 1
            }
        };
    }
    rt::Netlist::new(inputs, gates, outputs).expect("node order is topological")
}

/// Every reveal's decision for one record and one query, side by side (`Par`), in the
/// runtime's form.
pub fn program_circuit(program: &Program, plan: &Plan) -> Result<rt::Circuit, BuildError> {
    let mut offset = 0;
    let mut out: Option<rt::Circuit> = None;
    for r in &program.reveals {
        let count = r.value.tests().len();
        let plans =
            &plan.tests[offset.min(plan.tests.len())..(offset + count).min(plan.tests.len())];
        offset += count;
        let c = to_runtime(&build(program, plans, &r.value, 1)?);
        out = Some(match out {
            None => c,
            Some(prev) => rt::Circuit::par(prev, c),
        });
    }
    out.ok_or(BuildError::MissingPlan(0))
}

#[cfg(test)]
mod tests {
    use super::super::library::msb_extraction;
    use super::super::NetlistBuilder;
    use super::*;
    use proptest::prelude::*;

    /// Nested conditionals over an MSB extraction and its negation: cond(t1; cond(t2; msb,
    /// not msb), cond(t2; not msb, msb)) on 3 x 4 share bits, 14 inputs.
    fn sample() -> Circuit {
        let msb = || Circuit::netlist(msb_extraction(4));
        let neg = || {
            let mut b = NetlistBuilder::new();
            let x = b.inputs(12);
            let m = b.append(&msb_extraction(4), &x)[0];
            let n = b.not(m);
            b.output(n);
            Circuit::netlist(b.finish())
        };
        let inner0 = Circuit::cond(msb(), neg()).unwrap();
        let inner1 = Circuit::cond(neg(), msb()).unwrap();
        Circuit::cond(inner0, inner1).unwrap()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// The runtime's circuit computes what the analysis' circuit computes, and costs the same.
        #[test]
        fn lowering_keeps_semantics_and_counts(bits in proptest::collection::vec(any::<bool>(), 14)) {
            let c = sample();
            let r = to_runtime(&c);
            prop_assert_eq!(r.num_inputs(), c.num_inputs());
            let input = &bits[..c.num_inputs()];
            prop_assert_eq!(r.eval(input), c.eval(input).unwrap());
            let t = super::super::triples::count(&c);
            prop_assert_eq!(r.needed_triples(), t.masked);
            prop_assert_eq!(r.naive_triples(), t.naive);
        }
    }
}
