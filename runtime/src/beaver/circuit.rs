//! The boolean circuits the `beaver` family evaluates: the syntax of the Masked Triples paper
//! (paper 004, Sect. 5.1, after Stacked Garbling),
//!
//! `C ::= Netlist(gates) | Cond(C0, C1) | Seq(C', C'')`,
//!
//! plus `Par(C1, C2)` (both side by side on disjoint wires), as the compiler's circuit analysis
//! writes them. This is the runtime's form of that analysis' circuits: gates in a flat array in
//! topological order, so a party walks them without a graph library, and a compact binary
//! encoding that the compiler embeds and the preprocessing store fingerprints.
//!
//! A conditional's first input bit is its branch condition `t`; branch `C_t` gets the remaining
//! inputs. A sequence feeds the outputs of `C'` to `C''`.

use std::fmt;

/// A wire of a netlist: `w < inputs` is input `w`, otherwise the output of gate `w - inputs`.
pub type Wire = u32;

/// One gate; operands are wires of the same netlist that come before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Gate {
    And(Wire, Wire),
    Xor(Wire, Wire),
    Not(Wire),
}

/// `Netlist(gates)`: evaluated by the standard triple-based protocol (Sect. 2.5).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Netlist {
    inputs: u32,
    gates: Vec<Gate>,
    outputs: Vec<Wire>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Node {
    Netlist(Netlist),
    Cond(Box<Circuit>, Box<Circuit>),
    Seq(Box<Circuit>, Box<Circuit>),
    Par(Box<Circuit>, Box<Circuit>),
}

/// A circuit whose widths agree at every `Cond` and `Seq` (checked on construction).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Circuit {
    node: Node,
    inputs: usize,
    outputs: usize,
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
    #[error("gate {gate} reads wire {wire}, which is not before it")]
    Operand { gate: usize, wire: u32 },
    #[error("output {index} is wire {wire}, beyond the netlist's {wires} wires")]
    Output {
        index: usize,
        wire: u32,
        wires: usize,
    },
    #[error("branches of a conditional differ: {0} -> {1} wires against {2} -> {3}")]
    BranchWidths(usize, usize, usize, usize),
    #[error("sequence joins {0} output wires to {1} input wires")]
    SeqWidths(usize, usize),
    #[error("circuit encoding: {0}")]
    Encoding(String),
}

impl Netlist {
    /// Checks that every gate reads earlier wires and every output names a wire.
    pub fn new(inputs: u32, gates: Vec<Gate>, outputs: Vec<Wire>) -> Result<Netlist, CircuitError> {
        for (g, gate) in gates.iter().enumerate() {
            let own = inputs as u64 + g as u64;
            let ops: &[Wire] = match gate {
                Gate::And(a, b) | Gate::Xor(a, b) => &[*a, *b],
                Gate::Not(a) => &[*a],
            };
            if let Some(&w) = ops.iter().find(|&&w| u64::from(w) >= own) {
                return Err(CircuitError::Operand { gate: g, wire: w });
            }
        }
        let wires = inputs as usize + gates.len();
        if let Some((index, &wire)) = outputs
            .iter()
            .enumerate()
            .find(|(_, &w)| w as usize >= wires)
        {
            return Err(CircuitError::Output { index, wire, wires });
        }
        Ok(Netlist {
            inputs,
            gates,
            outputs,
        })
    }

    pub fn num_inputs(&self) -> usize {
        self.inputs as usize
    }

    pub fn gates(&self) -> &[Gate] {
        &self.gates
    }

    pub fn outputs(&self) -> &[Wire] {
        &self.outputs
    }

    pub fn and_count(&self) -> u64 {
        self.gates
            .iter()
            .filter(|g| matches!(g, Gate::And(..)))
            .count() as u64
    }

    /// AND-depth of every wire (ANDs on the longest path from an input, the wire's gate
    /// included): the round, counted from the netlist's start, in which an AND opens.
    pub fn and_levels(&self) -> Vec<u32> {
        let mut level = vec![0u32; self.inputs as usize + self.gates.len()];
        for (g, gate) in self.gates.iter().enumerate() {
            let w = self.inputs as usize + g;
            level[w] = match *gate {
                Gate::And(a, b) => level[a as usize].max(level[b as usize]) + 1,
                Gate::Xor(a, b) => level[a as usize].max(level[b as usize]),
                Gate::Not(a) => level[a as usize],
            };
        }
        level
    }

    /// Rounds of openings: the AND-depth (Sect. 7.1: a layer's ANDs open together).
    pub fn and_depth(&self) -> u32 {
        self.and_levels().into_iter().max().unwrap_or(0)
    }
}

impl Circuit {
    pub fn netlist(n: Netlist) -> Circuit {
        Circuit {
            inputs: n.num_inputs(),
            outputs: n.outputs.len(),
            node: Node::Netlist(n),
        }
    }

    pub fn cond(c0: Circuit, c1: Circuit) -> Result<Circuit, CircuitError> {
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

    pub fn seq(first: Circuit, then: Circuit) -> Result<Circuit, CircuitError> {
        if first.outputs != then.inputs {
            return Err(CircuitError::SeqWidths(first.outputs, then.inputs));
        }
        Ok(Circuit {
            inputs: first.inputs,
            outputs: then.outputs,
            node: Node::Seq(Box::new(first), Box::new(then)),
        })
    }

    pub fn par(a: Circuit, b: Circuit) -> Circuit {
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

    /// Triples Pi_MT consumes: the AND gates on the longest execution path (Fig. 4,
    /// `neededtriples`), the multiplexers included.
    pub fn needed_triples(&self) -> u64 {
        match &self.node {
            Node::Netlist(n) => n.and_count(),
            Node::Seq(a, b) | Node::Par(a, b) => a.needed_triples() + b.needed_triples(),
            Node::Cond(a, b) => a.needed_triples().max(b.needed_triples()) + self.outputs as u64,
        }
    }

    /// Triples the standard protocol consumes: every AND of every branch, and the multiplexers.
    pub fn naive_triples(&self) -> u64 {
        match &self.node {
            Node::Netlist(n) => n.and_count(),
            Node::Seq(a, b) | Node::Par(a, b) => a.naive_triples() + b.naive_triples(),
            Node::Cond(a, b) => a.naive_triples() + b.naive_triples() + self.outputs as u64,
        }
    }

    /// Conditionals in the tree, each of which runs MaskGen whether or not it is active.
    pub fn conditionals(&self) -> usize {
        match &self.node {
            Node::Netlist(_) => 0,
            Node::Cond(a, b) => 1 + a.conditionals() + b.conditionals(),
            Node::Seq(a, b) | Node::Par(a, b) => a.conditionals() + b.conditionals(),
        }
    }

    /// Cleartext semantics (Sect. 5.1): what the protocols compute on sharings. The reference
    /// of their tests; it shares nothing with the schedule.
    ///
    /// # Panics
    /// If `inputs` is not `num_inputs()` long.
    pub fn eval(&self, inputs: &[bool]) -> Vec<bool> {
        assert_eq!(inputs.len(), self.inputs, "circuit input width");
        match &self.node {
            Node::Netlist(n) => {
                let mut w = inputs.to_vec();
                for g in &n.gates {
                    w.push(match *g {
                        Gate::And(a, b) => w[a as usize] & w[b as usize],
                        Gate::Xor(a, b) => w[a as usize] ^ w[b as usize],
                        Gate::Not(a) => !w[a as usize],
                    });
                }
                n.outputs.iter().map(|&o| w[o as usize]).collect()
            }
            Node::Cond(a, b) => (if inputs[0] { b } else { a }).eval(&inputs[1..]),
            Node::Seq(a, b) => b.eval(&a.eval(inputs)),
            Node::Par(a, b) => {
                let mut out = a.eval(&inputs[..a.inputs]);
                out.extend(b.eval(&inputs[a.inputs..]));
                out
            }
        }
    }

    /// Fingerprint of the encoding: what a preprocessing store is bound to.
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(b"irisc beaver circuit v1");
        h.update(&self.encode());
        *h.finalize().as_bytes()
    }

    /// [`Circuit::encode`] as lowercase hex (how the compiler writes it into the `mpc` IR).
    pub fn to_hex(&self) -> String {
        self.encode().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The circuit of [`Circuit::to_hex`]'s text.
    pub fn from_hex(text: &str) -> Result<Circuit, String> {
        if !text.len().is_multiple_of(2) {
            return Err("circuit hex of odd length".into());
        }
        let bytes = (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(text.get(i..i + 2).unwrap_or("?"), 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| "circuit hex holds a non-hex digit".to_string())?;
        Circuit::decode(&bytes).map_err(|e| e.to_string())
    }

    /// Compact binary form: one tag byte per node (0 netlist, 1 cond, 2 seq, 3 par), children
    /// in order; a netlist as `inputs, gates, outputs` counts (u32 little-endian) then each gate
    /// as a tag byte (0 AND, 1 XOR, 2 NOT) and its operands, then the output wires.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(&mut out);
        out
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        let put = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
        match &self.node {
            Node::Netlist(n) => {
                out.push(0);
                put(out, n.inputs);
                put(out, n.gates.len() as u32);
                put(out, n.outputs.len() as u32);
                for g in &n.gates {
                    match *g {
                        Gate::And(a, b) => {
                            out.push(0);
                            put(out, a);
                            put(out, b);
                        }
                        Gate::Xor(a, b) => {
                            out.push(1);
                            put(out, a);
                            put(out, b);
                        }
                        Gate::Not(a) => {
                            out.push(2);
                            put(out, a);
                        }
                    }
                }
                for &w in &n.outputs {
                    put(out, w);
                }
            }
            Node::Cond(a, b) | Node::Seq(a, b) | Node::Par(a, b) => {
                out.push(match self.node {
                    Node::Cond(..) => 1,
                    Node::Seq(..) => 2,
                    _ => 3,
                });
                a.encode_into(out);
                b.encode_into(out);
            }
        }
    }

    /// Reads [`encode`](Circuit::encode)'s form back, checking every width and operand.
    pub fn decode(bytes: &[u8]) -> Result<Circuit, CircuitError> {
        let mut r = Reader { bytes, at: 0 };
        let c = r.circuit(0)?;
        if r.at != bytes.len() {
            return Err(CircuitError::Encoding(format!(
                "{} bytes after the circuit",
                bytes.len() - r.at
            )));
        }
        Ok(c)
    }
}

/// Nesting beyond this is refused when decoding (the recursion would exhaust the stack first).
const MAX_NESTING: usize = 512;

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn short(&self, what: &str) -> CircuitError {
        CircuitError::Encoding(format!("truncated at byte {} reading {what}", self.at))
    }

    fn byte(&mut self, what: &str) -> Result<u8, CircuitError> {
        let b = *self.bytes.get(self.at).ok_or_else(|| self.short(what))?;
        self.at += 1;
        Ok(b)
    }

    fn u32(&mut self, what: &str) -> Result<u32, CircuitError> {
        let end = self.at + 4;
        let s = self
            .bytes
            .get(self.at..end)
            .ok_or_else(|| self.short(what))?;
        self.at = end;
        Ok(u32::from_le_bytes(s.try_into().expect("4 bytes")))
    }

    fn circuit(&mut self, depth: usize) -> Result<Circuit, CircuitError> {
        if depth > MAX_NESTING {
            return Err(CircuitError::Encoding(format!(
                "nesting deeper than {MAX_NESTING}"
            )));
        }
        match self.byte("a node tag")? {
            0 => {
                let inputs = self.u32("netlist inputs")?;
                let gates = self.u32("gate count")? as usize;
                let outputs = self.u32("output count")? as usize;
                // Each gate is at least 5 bytes: refuse counts the rest cannot hold before
                // allocating for them.
                if gates.saturating_mul(5) > self.bytes.len() - self.at {
                    return Err(self.short("gates"));
                }
                let mut gs = Vec::with_capacity(gates);
                for _ in 0..gates {
                    gs.push(match self.byte("a gate tag")? {
                        0 => Gate::And(self.u32("operand")?, self.u32("operand")?),
                        1 => Gate::Xor(self.u32("operand")?, self.u32("operand")?),
                        2 => Gate::Not(self.u32("operand")?),
                        t => {
                            return Err(CircuitError::Encoding(format!(
                                "unknown gate tag {t} at byte {}",
                                self.at - 1
                            )))
                        }
                    });
                }
                if outputs.saturating_mul(4) > self.bytes.len() - self.at {
                    return Err(self.short("outputs"));
                }
                let outs = (0..outputs)
                    .map(|_| self.u32("output wire"))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(Circuit::netlist(Netlist::new(inputs, gs, outs)?))
            }
            tag @ 1..=3 => {
                let a = self.circuit(depth + 1)?;
                let b = self.circuit(depth + 1)?;
                match tag {
                    1 => Circuit::cond(a, b),
                    2 => Circuit::seq(a, b),
                    _ => Ok(Circuit::par(a, b)),
                }
            }
            t => Err(CircuitError::Encoding(format!(
                "unknown node tag {t} at byte {}",
                self.at - 1
            ))),
        }
    }
}

impl fmt::Display for Circuit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.node {
            Node::Netlist(n) => write!(
                f,
                "netlist({} in, {} gates, {} AND, {} out)",
                n.inputs,
                n.gates.len(),
                n.and_count(),
                n.outputs.len()
            ),
            Node::Cond(a, b) => write!(f, "cond({a}, {b})"),
            Node::Seq(a, b) => write!(f, "seq({a}, {b})"),
            Node::Par(a, b) => write!(f, "par({a}, {b})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn and2() -> Circuit {
        Circuit::netlist(Netlist::new(2, vec![Gate::And(0, 1)], vec![2]).unwrap())
    }

    fn xor2() -> Circuit {
        Circuit::netlist(Netlist::new(2, vec![Gate::Xor(0, 1)], vec![2]).unwrap())
    }

    #[test]
    fn operands_must_come_first() {
        assert_eq!(
            Netlist::new(1, vec![Gate::Not(1)], vec![1]).unwrap_err(),
            CircuitError::Operand { gate: 0, wire: 1 }
        );
        assert!(matches!(
            Netlist::new(1, vec![], vec![1]).unwrap_err(),
            CircuitError::Output { .. }
        ));
    }

    #[test]
    fn counts_follow_fig4() {
        let c = Circuit::cond(and2(), xor2()).unwrap();
        assert_eq!((c.needed_triples(), c.naive_triples()), (2, 2));
        let c = Circuit::cond(and2(), and2()).unwrap();
        assert_eq!((c.needed_triples(), c.naive_triples()), (2, 3));
        assert_eq!(c.conditionals(), 1);
    }

    #[test]
    fn encoding_round_trips_and_refuses_damage() {
        let inner = Circuit::cond(and2(), xor2()).unwrap();
        let c = Circuit::seq(
            Circuit::par(
                inner.clone(),
                Circuit::netlist(Netlist::new(1, vec![Gate::Not(0)], vec![1]).unwrap()),
            ),
            and2(),
        )
        .unwrap();
        let bytes = c.encode();
        assert_eq!(Circuit::decode(&bytes).unwrap(), c);
        for cut in 0..bytes.len() {
            assert!(Circuit::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(Circuit::decode(&extra).is_err());
        assert_ne!(c.fingerprint(), inner.fingerprint());
    }
}
