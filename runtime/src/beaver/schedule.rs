//! Pi_MT's `eval` (paper 004, Fig. 4) unrolled into rounds.
//!
//! Fig. 4 walks the circuit tree recursively. A party cannot afford one round per gate, so the
//! walk is done once here, ahead of time, and every AND gate and every conditional's opening of
//! `s XOR t` gets the round it opens in:
//! - `Netlist`: an AND opens at the netlist's start plus its AND-level (Sect. 7.1: a layer's
//!   ANDs open together);
//! - `Seq(C', C'')`: `C''` starts when `C'` ends;
//! - `Par(C1, C2)`: both start together;
//! - `Cond(C0, C1)`: `s XOR t` opens in the first round; both branches start after it, side by
//!   side, on the SAME triples (`triples_cond`), each masked by its own mask string
//!   (`applymask(M^b, ..)`); the multiplexer's ANDs (one per output, Eq. (1)) open in the round
//!   after the longer branch, on their own triples (`triples_mux`).
//!
//! So the rounds equal the compiler's count (`analysis::circuit::triples`): AND-depth, plus one
//! per conditional on the path, plus its multiplexer layer. Triples are numbered as Fig. 4 parses
//! them: a sequence's parts take consecutive ranges; a conditional's branches share one range
//! and the multiplexer takes the triples after it. A triple used inside branch `b` of
//! conditional `c` is masked with rows `2k` (onto `a`) and `2k + 1` (onto `b`) of `M^b_c`,
//! where `k` is its position in the conditional's range; nested conditionals mask again.

use super::circuit::{Circuit, Gate, Kind};

/// A wire of the unrolled circuit.
pub type FlatWire = u32;

/// One step of the unrolled circuit, in topological order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Input `i` of the whole circuit.
    Input(u32),
    Xor(FlatWire, FlatWire),
    Not(FlatWire),
    /// An AND gate on `triple`, masked along `chain` (an index into [`Schedule::chains`]).
    And {
        x: FlatWire,
        y: FlatWire,
        triple: u64,
        chain: u32,
    },
}

/// One conditional: where its condition comes from and which triples its branches share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CondPlan {
    /// The condition bit `t`.
    pub t: FlatWire,
    /// The round `s XOR t` opens in.
    pub round: u32,
    /// First triple of `triples_cond`.
    pub first_triple: u64,
    /// Triples both branches share: `max(T(C0), T(C1))`.
    pub shared_triples: u64,
}

impl CondPlan {
    /// Rows of each of `M^0`, `M^1`: two per shared triple (Fig. 4, `MaskGen(2 * |triples|)`).
    pub fn mask_rows(&self) -> u64 {
        2 * self.shared_triples
    }
}

/// What one round opens and what is computed after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Round {
    /// AND steps (indices into `steps`) whose `x ^ a`, `y ^ b` open in this round.
    pub ands: Vec<u32>,
    /// Conditionals whose `s ^ t` opens in this round.
    pub conds: Vec<u32>,
    /// Local steps (inputs, XOR, NOT) whose operands are ready after this round, in order.
    pub local: Vec<u32>,
}

/// The unrolled circuit: steps, the rounds they run in, the conditionals and mask chains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub steps: Vec<Step>,
    /// Round 0 is local work before any opening; round r > 0 opens then computes.
    pub rounds: Vec<Round>,
    pub conds: Vec<CondPlan>,
    /// `(conditional, branch)` pairs, outermost first, whose masks a triple gets.
    pub chains: Vec<Vec<(u32, u8)>>,
    pub outputs: Vec<FlatWire>,
    pub inputs: usize,
    pub triples: u64,
}

impl Schedule {
    /// Unrolls `c` for Pi_MT (see the module comment).
    pub fn new(c: &Circuit) -> Schedule {
        Self::build(c, false)
    }

    /// Unrolls `c` for the standard triple-based protocol (Sect. 2.5), the paper's baseline:
    /// every branch of a conditional runs on triples of its own, unmasked, and no `s ^ t` is
    /// opened; the multiplexer is the same. Consumes `c.naive_triples()`.
    pub fn naive(c: &Circuit) -> Schedule {
        Self::build(c, true)
    }

    fn build(c: &Circuit, naive: bool) -> Schedule {
        let mut b = Builder {
            steps: Vec::new(),
            ready: Vec::new(),
            conds: Vec::new(),
            chains: vec![Vec::new()],
            naive,
        };
        let inputs: Vec<FlatWire> = (0..c.num_inputs() as u32)
            .map(|i| b.push(Step::Input(i), 0))
            .collect();
        let (outputs, rounds) = b.walk(c, &inputs, 0, 0, 0);
        let mut plan = vec![Round::default(); rounds as usize + 1];
        for (i, step) in b.steps.iter().enumerate() {
            let r = &mut plan[b.ready[i] as usize];
            match step {
                Step::And { .. } => r.ands.push(i as u32),
                _ => r.local.push(i as u32),
            }
        }
        for (k, cond) in b.conds.iter().enumerate() {
            plan[cond.round as usize].conds.push(k as u32);
        }
        let triples = b.triples_of(c);
        Schedule {
            steps: b.steps,
            rounds: plan,
            conds: b.conds,
            chains: b.chains,
            outputs,
            inputs: c.num_inputs(),
            triples,
        }
    }

    /// Rounds of openings (the plan's round 0 opens nothing).
    pub fn opening_rounds(&self) -> u64 {
        self.rounds.len() as u64 - 1
    }

    /// AND steps, i.e. AND gates evaluated (both branches of every conditional counted).
    pub fn and_steps(&self) -> u64 {
        self.steps
            .iter()
            .filter(|s| matches!(s, Step::And { .. }))
            .count() as u64
    }

    /// Mask rows over all conditionals.
    pub fn mask_rows(&self) -> u64 {
        self.conds.iter().map(CondPlan::mask_rows).sum()
    }
}

struct Builder {
    steps: Vec<Step>,
    /// Round after which each step's wire is known.
    ready: Vec<u32>,
    conds: Vec<CondPlan>,
    chains: Vec<Vec<(u32, u8)>>,
    naive: bool,
}

impl Builder {
    fn triples_of(&self, c: &Circuit) -> u64 {
        if self.naive {
            c.naive_triples()
        } else {
            c.needed_triples()
        }
    }

    fn push(&mut self, step: Step, ready: u32) -> FlatWire {
        self.steps.push(step);
        self.ready.push(ready);
        (self.steps.len() - 1) as FlatWire
    }

    /// Unrolls `c` on `inputs`, starting after round `start`, with triples from `first` on and
    /// masks along `chain`; returns its outputs and the rounds it takes.
    fn walk(
        &mut self,
        c: &Circuit,
        inputs: &[FlatWire],
        start: u32,
        first: u64,
        chain: u32,
    ) -> (Vec<FlatWire>, u32) {
        match c.kind() {
            Kind::Netlist(n) => {
                let levels = n.and_levels();
                let mut wires: Vec<FlatWire> = inputs.to_vec();
                let mut next_triple = first;
                for (g, gate) in n.gates().iter().enumerate() {
                    let level = levels[n.num_inputs() + g];
                    let w = |i: u32| wires[i as usize];
                    let step = match *gate {
                        Gate::And(x, y) => {
                            next_triple += 1;
                            Step::And {
                                x: w(x),
                                y: w(y),
                                triple: next_triple - 1,
                                chain,
                            }
                        }
                        Gate::Xor(x, y) => Step::Xor(w(x), w(y)),
                        Gate::Not(x) => Step::Not(w(x)),
                    };
                    let ready = match step {
                        Step::Xor(x, y) => self.ready[x as usize].max(self.ready[y as usize]),
                        Step::Not(x) => self.ready[x as usize],
                        _ => start + level,
                    };
                    let fw = self.push(step, ready);
                    wires.push(fw);
                }
                let outs = n.outputs().iter().map(|&o| wires[o as usize]).collect();
                (outs, n.and_depth())
            }
            Kind::Seq(a, b) => {
                let (mid, ra) = self.walk(a, inputs, start, first, chain);
                let (out, rb) = self.walk(b, &mid, start + ra, first + self.triples_of(a), chain);
                (out, ra + rb)
            }
            Kind::Par(a, b) => {
                let (left, right) = inputs.split_at(a.num_inputs());
                let (mut out, ra) = self.walk(a, left, start, first, chain);
                let (rest, rb) = self.walk(b, right, start, first + self.triples_of(a), chain);
                out.extend(rest);
                (out, ra.max(rb))
            }
            Kind::Cond(c0, c1) if self.naive => {
                // Both branches on triples of their own, from the start, then the multiplexer.
                let t = inputs[0];
                let n0 = self.triples_of(c0);
                let (out0, r0) = self.walk(c0, &inputs[1..], start, first, chain);
                let (out1, r1) = self.walk(c1, &inputs[1..], start, first + n0, chain);
                let mux_first = first + n0 + self.triples_of(c1);
                let outs = self.mux(t, &out0, &out1, start + r0.max(r1) + 1, mux_first, chain);
                let rounds = r0.max(r1) + u32::from(!outs.is_empty());
                (outs, rounds)
            }
            Kind::Cond(c0, c1) => {
                let t = inputs[0];
                let shared = c0.needed_triples().max(c1.needed_triples());
                let id = self.conds.len() as u32;
                self.conds.push(CondPlan {
                    t,
                    round: start + 1,
                    first_triple: first,
                    shared_triples: shared,
                });
                let branch = |b: &Circuit, which: u8, me: &mut Builder| {
                    let mut masks = me.chains[chain as usize].clone();
                    masks.push((id, which));
                    me.chains.push(masks);
                    let ch = (me.chains.len() - 1) as u32;
                    me.walk(b, &inputs[1..], start + 1, first, ch)
                };
                let (out0, r0) = branch(c0, 0, self);
                let (out1, r1) = branch(c1, 1, self);
                let body = 1 + r0.max(r1);
                // Eq. (1): x0 ^ t(x0 ^ x1), one AND per output on the triples after the range.
                let outs = self.mux(t, &out0, &out1, start + body + 1, first + shared, chain);
                let rounds = body + u32::from(!outs.is_empty());
                (outs, rounds)
            }
        }
    }

    /// Eq. (1) per output, `x0 ^ t (x0 ^ x1)`: one AND each, opening in `round`, on the triples
    /// from `first` on.
    fn mux(
        &mut self,
        t: FlatWire,
        out0: &[FlatWire],
        out1: &[FlatWire],
        round: u32,
        first: u64,
        chain: u32,
    ) -> Vec<FlatWire> {
        out0.iter()
            .zip(out1)
            .enumerate()
            .map(|(i, (&x0, &x1))| {
                let ready = self.ready[x0 as usize].max(self.ready[x1 as usize]);
                let diff = self.push(Step::Xor(x0, x1), ready);
                let pick = self.push(
                    Step::And {
                        x: t,
                        y: diff,
                        triple: first + i as u64,
                        chain,
                    },
                    round,
                );
                self.push(Step::Xor(x0, pick), round)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::circuit::Netlist;
    use super::*;

    fn and2() -> Circuit {
        Circuit::netlist(Netlist::new(2, vec![Gate::And(0, 1)], vec![2]).unwrap())
    }

    #[test]
    fn a_conditional_opens_then_runs_its_branches_side_by_side_then_muxes() {
        // cond(t; and, and) on two more inputs: open s^t (round 1), both ANDs (round 2) on
        // triple 0, the mux AND (round 3) on triple 1.
        let c = Circuit::cond(and2(), and2()).unwrap();
        let s = Schedule::new(&c);
        assert_eq!(s.opening_rounds(), 3);
        assert_eq!(s.rounds[1].conds, vec![0]);
        assert_eq!(s.rounds[2].ands.len(), 2);
        assert_eq!(s.rounds[3].ands.len(), 1);
        let triples: Vec<u64> = s
            .steps
            .iter()
            .filter_map(|st| match st {
                Step::And { triple, .. } => Some(*triple),
                _ => None,
            })
            .collect();
        assert_eq!(triples, vec![0, 0, 1]);
        assert_eq!(s.triples, 2);
        assert_eq!(s.conds[0].mask_rows(), 2);
    }
}
