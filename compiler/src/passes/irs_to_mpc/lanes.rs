//! The reveals' circuit under `beaver`, per lane (one lane per gallery record), as
//! `irs-to-mpc` builds it from the `irs` boolean ops ([`super::beaver`] emits it): leaves
//! (compared values, `bit` inputs), fragments (a value's elements per lane, each a circuit and
//! where its inputs come from), and the reveals.

use super::handle::Handle;
use super::{fail, PassError};
use crate::analysis::circuit::build::{
    gate_circuit, if_circuit, input_circuit, not_circuit, quantifier_circuit,
};
use crate::analysis::circuit::library::msb_extraction;
use crate::analysis::circuit::Circuit;

/// What the circuit reads: a compared value (its MSB is the comparison) or a `bit` input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf {
    /// Replicated Z_2^`ring` shares, `group` elements per lane.
    Compared {
        value: Handle,
        ring: u32,
        group: usize,
    },
    /// Binary shares of a query's bit (one element for all lanes).
    Bit { value: Handle },
}

impl Leaf {
    /// Rows of the leaf's XOR shares per lane.
    pub(super) fn rows(self) -> usize {
        match self {
            Leaf::Compared { ring, group, .. } => group * 3 * ring as usize,
            Leaf::Bit { .. } => 1,
        }
    }
}

/// Where a block of circuit inputs comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InputRef {
    /// The `3k` summand bits of element `element` of a compared leaf.
    Compared {
        leaf: usize,
        element: usize,
    },
    /// The bit of a bit leaf.
    Bit {
        leaf: usize,
    },
    Const(bool),
}

/// One element of a value per lane: its circuit and where its inputs come from.
#[derive(Debug, Clone)]
pub(super) struct Elem {
    pub(super) circuit: Circuit,
    pub(super) inputs: Vec<InputRef>,
}

/// A boolean value under `beaver`: its elements per lane.
#[derive(Debug, Clone)]
pub struct Frag {
    pub(super) elems: Vec<Elem>,
}

pub(super) struct Reveal {
    pub(super) frag: Frag,
    pub(super) to: i64,
    pub(super) label: String,
    pub(super) records: Handle,
    /// The gallery input whose records are the lanes.
    pub(super) input: i64,
}

/// The state of the `beaver` lowering.
#[derive(Default)]
pub struct BeaverLowering {
    pub(super) leaves: Vec<Leaf>,
    frags: Vec<Frag>,
    pub(super) reveals: Vec<Reveal>,
    /// Values the honest-majority part reads after the circuit (cross-record reductions,
    /// counts): the key of the `irs` value and its fragment, in the order they were asked for.
    pub(super) materialized: Vec<(usize, Frag)>,
    /// The gallery input of the first comparison (the lanes when no `ids` reveal names one).
    pub(super) lanes_input: Option<i64>,
}

fn circuit_error(e: impl std::fmt::Display) -> PassError {
    fail(format!("beaver circuit: {e}"))
}

impl BeaverLowering {
    fn leaf(&mut self, l: Leaf) -> usize {
        if let Some(i) = self.leaves.iter().position(|x| *x == l) {
            return i;
        }
        self.leaves.push(l);
        self.leaves.len() - 1
    }

    /// A comparison with the records of gallery input `input`: the MSB-extraction netlist of
    /// each element.
    pub fn compared(&mut self, value: Handle, ring: u32, group: usize, input: i64) -> usize {
        self.lanes_input.get_or_insert(input);
        let leaf = self.leaf(Leaf::Compared { value, ring, group });
        let elems = (0..group)
            .map(|element| Elem {
                circuit: msb_extraction(ring).into(),
                inputs: vec![InputRef::Compared { leaf, element }],
            })
            .collect();
        self.push(Frag { elems })
    }

    /// A query's `bit` input (its binary shares).
    pub fn bit(&mut self, value: Handle) -> usize {
        let leaf = self.leaf(Leaf::Bit { value });
        self.push(Frag {
            elems: vec![Elem {
                circuit: input_circuit(),
                inputs: vec![InputRef::Bit { leaf }],
            }],
        })
    }

    pub fn constant(&mut self, v: bool) -> usize {
        self.push(Frag {
            elems: vec![Elem {
                circuit: input_circuit(),
                inputs: vec![InputRef::Const(v)],
            }],
        })
    }

    fn push(&mut self, f: Frag) -> usize {
        self.frags.push(f);
        self.frags.len() - 1
    }

    /// Elements per lane of fragment `f`.
    pub fn width(&self, f: usize) -> usize {
        self.frags[f].elems.len()
    }

    /// Asks for fragment `f` (the `irs` value `key`) as binary replicated shares after the
    /// circuit: one output row per element, reshared by `mpc.xor_to_bits`.
    pub fn materialize(&mut self, key: usize, f: usize) -> Result<(), PassError> {
        if self.materialized.iter().any(|(k, _)| *k == key) {
            return Ok(());
        }
        let frag = self.frags[f].clone();
        let per_record = frag.elems.iter().any(|e| {
            e.inputs
                .iter()
                .any(|i| matches!(i, InputRef::Compared { .. }))
        });
        if !per_record {
            return Err(fail(
                "under --protocol beaver a boolean value that reads no gallery comparison cannot \
                 feed a reduction over records or a count (use --protocol rep3)",
            ));
        }
        self.materialized.push((key, frag));
        Ok(())
    }

    pub fn not(&mut self, x: usize) -> Result<usize, PassError> {
        let elems = self.frags[x]
            .elems
            .clone()
            .into_iter()
            .map(|e| {
                Ok(Elem {
                    circuit: not_circuit(e.circuit).map_err(circuit_error)?,
                    inputs: e.inputs,
                })
            })
            .collect::<Result<_, PassError>>()?;
        Ok(self.push(Frag { elems }))
    }

    /// Elementwise over operands of `w` elements or one (broadcast).
    fn zip(&self, ops: &[usize], what: &str) -> Result<Vec<Vec<Elem>>, PassError> {
        let w = ops
            .iter()
            .map(|&i| self.frags[i].elems.len())
            .max()
            .unwrap_or(1);
        for &i in ops {
            let n = self.frags[i].elems.len();
            if n != w && n != 1 {
                return Err(fail(format!(
                    "`{what}` of values with {n} and {w} elements per record"
                )));
            }
        }
        Ok((0..w)
            .map(|g| {
                ops.iter()
                    .map(|&i| {
                        let e = &self.frags[i].elems;
                        e[g.min(e.len() - 1)].clone()
                    })
                    .collect()
            })
            .collect())
    }

    pub fn gate(&mut self, a: usize, b: usize, and: bool) -> Result<usize, PassError> {
        let rows = self.zip(&[a, b], if and { "and" } else { "or" })?;
        let elems = rows
            .into_iter()
            .map(|mut r| {
                let (y, x) = (r.pop().expect("two"), r.pop().expect("two"));
                let mut inputs = x.inputs;
                inputs.extend(y.inputs);
                Ok(Elem {
                    circuit: gate_circuit(x.circuit, y.circuit, and).map_err(circuit_error)?,
                    inputs,
                })
            })
            .collect::<Result<_, PassError>>()?;
        Ok(self.push(Frag { elems }))
    }

    /// `select(c, x, y)`: per element a conditional on `c` whose branches are `x` and `y`.
    pub fn select(&mut self, c: usize, x: usize, y: usize) -> Result<usize, PassError> {
        let rows = self.zip(&[c, x, y], "select")?;
        let elems = rows
            .into_iter()
            .map(|mut r| {
                let ce = r.pop().expect("three");
                let ct = r.pop().expect("three");
                let cc = r.pop().expect("three");
                let mut inputs = cc.inputs;
                inputs.extend(ct.inputs);
                inputs.extend(ce.inputs);
                Ok(Elem {
                    circuit: if_circuit(cc.circuit, ct.circuit, ce.circuit)
                        .map_err(circuit_error)?,
                    inputs,
                })
            })
            .collect::<Result<_, PassError>>()?;
        Ok(self.push(Frag { elems }))
    }

    /// `any`/`all` over consecutive groups of `group` elements of each lane.
    pub fn reduce(&mut self, x: usize, group: i64, any: bool) -> Result<usize, PassError> {
        let elems = &self.frags[x].elems;
        let w = elems.len();
        let g = usize::try_from(group).unwrap_or(0);
        if g == 0 || !w.is_multiple_of(g) {
            return Err(fail(format!(
                "under --protocol beaver an `{}` must range over a record's own elements \
                 (its rotations); this one takes groups of {group} of the {w} per record \
                 (a quantifier over the records themselves is not supported yet)",
                if any { "any" } else { "all" }
            )));
        }
        let out = elems
            .chunks(g)
            .map(|chunk| {
                let inputs = chunk.iter().flat_map(|e| e.inputs.clone()).collect();
                let copies = chunk.iter().map(|e| e.circuit.clone()).collect();
                Ok(Elem {
                    circuit: quantifier_circuit(copies, any).map_err(circuit_error)?,
                    inputs,
                })
            })
            .collect::<Result<_, PassError>>()?;
        Ok(self.push(Frag { elems: out }))
    }

    /// Records an `ids` reveal of `x` (one bit per record) to party `to`.
    pub fn reveal(
        &mut self,
        x: usize,
        to: i64,
        label: String,
        records: Handle,
        input: i64,
    ) -> Result<(), PassError> {
        let frag = self.frags[x].clone();
        if frag.elems.len() != 1 {
            return Err(fail(format!(
                "the revealed value has {} elements per record, not one",
                frag.elems.len()
            )));
        }
        if let Some(other) = self.reveals.iter().find(|r| r.input != input) {
            return Err(fail(format!(
                "under --protocol beaver all reveals range over one gallery's records (one lane \
                 per record): inputs {} and {input} differ",
                other.input
            )));
        }
        self.reveals.push(Reveal {
            frag,
            to,
            label,
            records,
            input,
        });
        Ok(())
    }

    /// The circuit of every reveal side by side (as `analysis::circuit::lower::program_circuit`
    /// builds it from the source) and its input table.
    ///
    /// Outputs: one per `ids` reveal, then the elements of every materialized value.
    pub(super) fn circuit(&self) -> Result<(Circuit, Vec<InputRef>), PassError> {
        let mut out: Option<Circuit> = None;
        let mut inputs = Vec::new();
        let pieces = self
            .reveals
            .iter()
            .map(|r| &r.frag.elems[0])
            .chain(self.materialized.iter().flat_map(|(_, f)| f.elems.iter()));
        for e in pieces {
            inputs.extend(e.inputs.iter().copied());
            let c = e.circuit.clone();
            out = Some(match out {
                None => c,
                Some(prev) => Circuit::par(prev, c),
            });
        }
        out.map(|c| (c, inputs))
            .ok_or_else(|| fail("a beaver program reveals nothing"))
    }
}
