//! Boolean circuits with explicit secret conditionals, the syntax of the Masked Triples paper
//! (paper 004, Sect. 5.1, after Stacked Garbling):
//!
//! `C ::= Netlist(gates) | Cond(C0, C1) | Seq(C', C'')`
//!
//! plus one convenience, `Par(C1, C2)`: both side by side on disjoint wires (inputs and outputs
//! concatenated). It equals `Seq(C1 ⊗ id, id ⊗ C2)` with identity wires that bypass every
//! conditional inside `C1`/`C2` instead of passing through its multiplexer, which the paper's
//! syntax cannot say (there every wire next to a `Cond` would cost a mux gate). Triples: the sum.
//!
//! A conditional's first input bit is the branch condition `t`; branch `C_t` gets the remaining
//! inputs and its outputs are the conditional's. A sequence feeds the outputs of `C'` to `C''`.
//! [`triples`] counts what evaluating such a circuit costs, naively and with masked triples
//! (Fig. 4, `neededtriples`). [`lower`] gives a circuit in the runtime's form, which the
//! `beaver` protocol family evaluates (`irisc build --emit=circuit`, `irisc circuit`).

pub mod build;
pub mod gates;
pub mod library;
pub mod lower;
pub mod triples;

pub use gates::{Gate, Netlist, NetlistBuilder, Wire};

/// A circuit whose wire widths agree at every `Cond` and `Seq` (checked on construction).
#[derive(Debug, Clone)]
pub struct Circuit {
    node: Node,
    inputs: usize,
    outputs: usize,
}

#[derive(Debug, Clone)]
enum Node {
    Netlist(Netlist),
    Cond(Box<Circuit>, Box<Circuit>),
    Seq(Box<Circuit>, Box<Circuit>),
    Par(Box<Circuit>, Box<Circuit>),
}

/// A borrowed view of a circuit's top-level constructor.
#[derive(Debug, Clone, Copy)]
pub enum Kind<'a> {
    Netlist(&'a Netlist),
    Cond(&'a Circuit, &'a Circuit),
    Seq(&'a Circuit, &'a Circuit),
    Par(&'a Circuit, &'a Circuit),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CircuitError {
    #[error("branches of a conditional differ: {0} -> {1} wires against {2} -> {3}")]
    BranchWidths(usize, usize, usize, usize),
    #[error("sequence joins {0} output wires to {1} input wires")]
    SeqWidths(usize, usize),
    #[error("circuit takes {expected} input bits, got {got}")]
    InputWidth { expected: usize, got: usize },
}

impl From<Netlist> for Circuit {
    fn from(n: Netlist) -> Self {
        Circuit::netlist(n)
    }
}

impl Circuit {
    pub fn netlist(n: Netlist) -> Self {
        Circuit {
            inputs: n.num_inputs(),
            outputs: n.num_outputs(),
            node: Node::Netlist(n),
        }
    }

    /// `Cond(c0, c1)`: both branches must take and return the same number of wires; the
    /// conditional takes one more, the condition bit, first.
    pub fn cond(c0: Circuit, c1: Circuit) -> Result<Self, CircuitError> {
        if (c0.inputs, c0.outputs) != (c1.inputs, c1.outputs) {
            return Err(CircuitError::BranchWidths(
                c0.inputs, c0.outputs, c1.inputs, c1.outputs,
            ));
        }
        Ok(Circuit {
            inputs: 1 + c0.inputs,
            outputs: c0.outputs,
            node: Node::Cond(Box::new(c0), Box::new(c1)),
        })
    }

    /// `Seq(first, then)`: `first`'s outputs are `then`'s inputs.
    pub fn seq(first: Circuit, then: Circuit) -> Result<Self, CircuitError> {
        if first.outputs != then.inputs {
            return Err(CircuitError::SeqWidths(first.outputs, then.inputs));
        }
        Ok(Circuit {
            inputs: first.inputs,
            outputs: then.outputs,
            node: Node::Seq(Box::new(first), Box::new(then)),
        })
    }

    /// `Par(a, b)`: `a` on the first inputs, `b` on the rest; outputs `a`'s then `b`'s.
    pub fn par(a: Circuit, b: Circuit) -> Self {
        Circuit {
            inputs: a.inputs + b.inputs,
            outputs: a.outputs + b.outputs,
            node: Node::Par(Box::new(a), Box::new(b)),
        }
    }

    pub fn kind(&self) -> Kind<'_> {
        match &self.node {
            Node::Netlist(n) => Kind::Netlist(n),
            Node::Cond(a, b) => Kind::Cond(a, b),
            Node::Seq(a, b) => Kind::Seq(a, b),
            Node::Par(a, b) => Kind::Par(a, b),
        }
    }

    pub fn num_inputs(&self) -> usize {
        self.inputs
    }

    pub fn num_outputs(&self) -> usize {
        self.outputs
    }

    /// Conditionals in the whole tree, inactive-looking ones included: every one of them runs
    /// MaskGen, since no party knows which branches are inactive.
    pub fn conditionals(&self) -> usize {
        match &self.node {
            Node::Netlist(_) => 0,
            Node::Cond(a, b) => 1 + a.conditionals() + b.conditionals(),
            Node::Seq(a, b) | Node::Par(a, b) => a.conditionals() + b.conditionals(),
        }
    }

    /// The multiplexer netlist a conditional leaves through (Fig. 4 `mux`); `None` for the
    /// other constructors.
    pub fn mux(&self) -> Option<Netlist> {
        matches!(self.node, Node::Cond(..)).then(|| library::mux(self.outputs))
    }

    /// Cleartext semantics (Sect. 5.1): what the protocol computes on sharings.
    pub fn eval(&self, inputs: &[bool]) -> Result<Vec<bool>, CircuitError> {
        if inputs.len() != self.inputs {
            return Err(CircuitError::InputWidth {
                expected: self.inputs,
                got: inputs.len(),
            });
        }
        match &self.node {
            Node::Netlist(n) => Ok(n.eval(inputs)),
            Node::Cond(a, b) => {
                let branch = if inputs[0] { b } else { a };
                branch.eval(&inputs[1..])
            }
            Node::Seq(a, b) => b.eval(&a.eval(inputs)?),
            Node::Par(a, b) => {
                let mut out = a.eval(&inputs[..a.inputs])?;
                out.extend(b.eval(&inputs[a.inputs..])?);
                Ok(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn and2() -> Netlist {
        let mut b = NetlistBuilder::new();
        let x = b.inputs(2);
        let y = b.and(x[0], x[1]);
        b.output(y);
        b.finish()
    }

    fn xor2() -> Netlist {
        let mut b = NetlistBuilder::new();
        let x = b.inputs(2);
        let y = b.xor(x[0], x[1]);
        b.output(y);
        b.finish()
    }

    #[test]
    fn cond_selects_by_its_first_bit() {
        let c = Circuit::cond(and2().into(), xor2().into()).unwrap();
        assert_eq!((c.num_inputs(), c.num_outputs()), (3, 1));
        assert_eq!(c.eval(&[false, true, true]).unwrap(), vec![true]);
        assert_eq!(c.eval(&[true, true, true]).unwrap(), vec![false]);
        assert_eq!(c.conditionals(), 1);
        assert_eq!(c.mux().unwrap().and_count(), 1);
    }

    #[test]
    fn seq_threads_outputs_into_inputs() {
        // (a AND b, a XOR b), then the AND of the two: never both, so always 0.
        let mut b = NetlistBuilder::new();
        let x = b.inputs(2);
        let p = b.and(x[0], x[1]);
        let q = b.xor(x[0], x[1]);
        b.output(p);
        b.output(q);
        let s = Circuit::seq(b.finish().into(), and2().into()).unwrap();
        for (a, c) in [(false, false), (false, true), (true, false), (true, true)] {
            assert_eq!(s.eval(&[a, c]).unwrap(), vec![false]);
        }
        assert!(s.mux().is_none());
        assert_eq!(s.conditionals(), 0);
    }

    #[test]
    fn widths_are_checked() {
        assert_eq!(
            Circuit::seq(and2().into(), and2().into()).unwrap_err(),
            CircuitError::SeqWidths(1, 2)
        );
        assert_eq!(
            Circuit::cond(and2().into(), library::mux(1).into()).unwrap_err(),
            CircuitError::BranchWidths(2, 1, 3, 1)
        );
        let c: Circuit = and2().into();
        assert_eq!(
            c.eval(&[true]).unwrap_err(),
            CircuitError::InputWidth {
                expected: 2,
                got: 1
            }
        );
    }
}
