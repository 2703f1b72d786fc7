//! The circuit of a reveal's decision (paper 004's `Netlist | Cond | Seq`, plus `Par`), built
//! from its [`BoolExpr`] with the rings the plan chose:
//! - a comparison is the MSB-extraction netlist of its ring ([`library::msb_extraction`]; a
//!   cosine test is two of them and the AND/OR that combines them; for F_p the power-of-two
//!   circuit of the same width stands in for BitExtractP, whose gates the cost model counts);
//! - `not` is a NOT gate, `and`/`or` one gate after both operands side by side (`Par`);
//! - `if c {x} else {y}` is `Seq(Par(C(c), id), Cond(C(y), C(x)))`: the condition bit selects
//!   the branch (`Cond`'s branch 1 is taken when the bit is 1), both branches see the inputs of
//!   both and ignore the other's;
//! - `any`/`all` over binders is the body once per combination (rotation counts from the
//!   binders, `records` per record binder) side by side, then an OR/AND tree; over an empty
//!   set the result is a constant, modelled as one input wire;
//! - a constant or a `bit` input is one input wire.
//!
//! Inputs: for each comparison the `3k` bits of the three additive shares, in evaluation order.
//!
//! [`summarize`] computes the same counts without materialising the circuit (for large record
//! counts): its rules are those of [`super::triples::explain`] applied to what [`build`] makes.

use super::library::{and_tree, msb_extraction, mux, or_tree};
use super::triples::{count, TripleCount};
use super::{Circuit, Kind, Netlist, NetlistBuilder};
use crate::analysis::plan::TestPlan;
use crate::sema::program::{BinderKind, BoolExpr, Program, Quantifier};

/// Why a circuit could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("the expression has more comparisons than the plan ({0})")]
    MissingPlan(usize),
    #[error("{0} copies of a quantifier body are too many to materialise; use summarize")]
    TooLarge(u64),
    #[error("circuit widths: {0}")]
    Widths(#[from] super::CircuitError),
}

/// Above this many body copies, [`build`] refuses (the summary has no limit).
pub const MAX_COPIES: u64 = 1 << 16;

/// The netlist of one comparison.
pub fn comparison_netlist(plan: &TestPlan) -> Netlist {
    let k = plan.msb_bits().max(1);
    let msb = msb_extraction(k);
    let TestPlan::Cosine(c) = plan else {
        return msb;
    };
    let mut b = NetlistBuilder::new();
    let x = b.inputs(3 * k as usize);
    let y = b.inputs(3 * k as usize);
    let s = b.append(&msb, &x)[0];
    let m = b.append(&msb, &y)[0];
    // The table of `analysis::cosine`: non-strict tests use the negated MSBs.
    let (s, m) = if c.strict {
        (s, m)
    } else {
        (b.not(s), b.not(m))
    };
    let out = if c.negative { b.or(s, m) } else { b.and(s, m) };
    b.output(out);
    b.finish()
}

/// Counts of a circuit, as [`count`] gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, Default)]
pub struct Summary {
    /// Triples of the standard protocol: every AND gate, multiplexers included.
    pub naive: u64,
    /// AND gates on the longest execution path (masked triples, paper 004).
    pub masked: u64,
    pub rounds: u64,
    pub conditionals: u64,
}

impl From<TripleCount> for Summary {
    fn from(t: TripleCount) -> Self {
        Summary {
            naive: t.naive,
            masked: t.masked,
            rounds: t.rounds,
            conditionals: t.conditionals,
        }
    }
}

fn ceil_log2(x: u64) -> u64 {
    if x <= 1 {
        0
    } else {
        u64::from(64 - (x - 1).leading_zeros())
    }
}

/// Combinations a quantifier ranges over: rotation counts, `records` per record binder.
pub fn quantifier_size(program: &Program, binders: &[usize], records: u64) -> u64 {
    binders
        .iter()
        .map(|&b| match program.binders.get(b) {
            Some(bd) => match (&bd.kind, bd.rotation_count()) {
                (_, Some(r)) => u64::from(r),
                (BinderKind::Records(_), None) => records,
                _ => 1,
            },
            None => 1,
        })
        .fold(1u64, u64::saturating_mul)
}

/// The counts of [`build`]'s circuit for `expr`, whose comparisons are `plans` (in
/// [`BoolExpr::tests`] order), with `records` records per record binder.
pub fn summarize(
    program: &Program,
    plans: &[TestPlan],
    expr: &BoolExpr,
    records: u64,
) -> Result<Summary, BuildError> {
    let leaves: Vec<Summary> = plans
        .iter()
        .map(|p| {
            let n = comparison_netlist(p);
            Summary {
                naive: n.and_count(),
                masked: n.and_count(),
                rounds: n.and_depth(),
                conditionals: 0,
            }
        })
        .collect();
    let mut idx = 0;
    sum_go(program, &leaves, expr, records, &mut idx)
}

/// [`summarize`] of the boolean logic alone: comparisons count as free leaves (their gates are
/// in the plan's per-test cost).
pub fn summarize_logic(
    program: &Program,
    plans: &[TestPlan],
    expr: &BoolExpr,
    records: u64,
) -> Result<Summary, BuildError> {
    let leaves = vec![Summary::default(); plans.len()];
    let mut idx = 0;
    sum_go(program, &leaves, expr, records, &mut idx)
}

fn sum_go(
    program: &Program,
    leaves: &[Summary],
    e: &BoolExpr,
    records: u64,
    idx: &mut usize,
) -> Result<Summary, BuildError> {
    Ok(match e {
        BoolExpr::Fhd(_) | BoolExpr::Cosine(_) => {
            let s = *leaves.get(*idx).ok_or(BuildError::MissingPlan(*idx))?;
            *idx += 1;
            s
        }
        BoolExpr::Const(_) | BoolExpr::Bit(_) => Summary::default(),
        BoolExpr::Not(x) => sum_go(program, leaves, x, records, idx)?,
        BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
            let a = sum_go(program, leaves, a, records, idx)?;
            let b = sum_go(program, leaves, b, records, idx)?;
            Summary {
                naive: a.naive + b.naive + 1,
                masked: a.masked + b.masked + 1,
                rounds: a.rounds.max(b.rounds) + 1,
                conditionals: a.conditionals + b.conditionals,
            }
        }
        BoolExpr::If { cond, then, els } => {
            let c = sum_go(program, leaves, cond, records, idx)?;
            let t = sum_go(program, leaves, then, records, idx)?;
            let f = sum_go(program, leaves, els, records, idx)?;
            Summary {
                naive: c.naive + t.naive + f.naive + 1,
                masked: c.masked + t.masked.max(f.masked) + 1,
                // The condition, opening s XOR t, the longer branch, the mux layer.
                rounds: c.rounds + 1 + t.rounds.max(f.rounds) + 1,
                conditionals: c.conditionals + t.conditionals + f.conditionals + 1,
            }
        }
        BoolExpr::Quant {
            op: _,
            binders,
            body,
        } => {
            let g = quantifier_size(program, binders, records);
            let s = sum_go(program, leaves, body, records, idx)?;
            if g == 0 {
                // The body is never instantiated: a constant.
                return Ok(Summary::default());
            }
            Summary {
                naive: s.naive.saturating_mul(g) + (g - 1),
                masked: s.masked.saturating_mul(g) + (g - 1),
                rounds: s.rounds + ceil_log2(g),
                conditionals: s.conditionals.saturating_mul(g),
            }
        }
    })
}

/// The circuit of `expr` (see the module comment).
pub fn build(
    program: &Program,
    plans: &[TestPlan],
    expr: &BoolExpr,
    records: u64,
) -> Result<Circuit, BuildError> {
    let leaves: Vec<Netlist> = plans.iter().map(comparison_netlist).collect();
    let mut idx = 0;
    build_go(program, &leaves, expr, records, &mut idx)
}

/// `n` wires in, the same `n` out.
fn identity(n: usize) -> Netlist {
    let mut b = NetlistBuilder::new();
    for w in b.inputs(n) {
        b.output(w);
    }
    b.finish()
}

fn as_netlist(c: &Circuit) -> Option<&Netlist> {
    match c.kind() {
        Kind::Netlist(n) => Some(n),
        _ => None,
    }
}

/// Side by side; one merged netlist when every part is a netlist.
fn par_all(parts: Vec<Circuit>) -> Circuit {
    if parts.iter().all(|p| as_netlist(p).is_some()) {
        let mut b = NetlistBuilder::new();
        let mut outs = Vec::new();
        for p in &parts {
            let nl = as_netlist(p).expect("checked");
            let x = b.inputs(nl.num_inputs());
            outs.extend(b.append(nl, &x));
        }
        for o in outs {
            b.output(o);
        }
        return b.finish().into();
    }
    let mut it = parts.into_iter();
    let first = it.next().expect("at least one part");
    it.fold(first, Circuit::par)
}

/// `c` then `gate` (a netlist), merged when `c` is a netlist.
fn then(c: Circuit, gate: &Netlist) -> Result<Circuit, BuildError> {
    if let Some(nl) = as_netlist(&c) {
        let mut b = NetlistBuilder::new();
        let x = b.inputs(nl.num_inputs());
        let mid = b.append(nl, &x);
        for o in b.append(gate, &mid) {
            b.output(o);
        }
        return Ok(b.finish().into());
    }
    Ok(Circuit::seq(c, gate.clone().into())?)
}

/// `c` on `width` inputs of which it reads the `skip..skip + c.inputs` ones.
fn ignoring(c: Circuit, width: usize, skip: usize) -> Result<Circuit, BuildError> {
    let own = c.num_inputs();
    let mut b = NetlistBuilder::new();
    let x = b.inputs(width);
    if let Some(nl) = as_netlist(&c) {
        for o in b.append(nl, &x[skip..skip + own]) {
            b.output(o);
        }
        return Ok(b.finish().into());
    }
    for &w in &x[skip..skip + own] {
        b.output(w);
    }
    Ok(Circuit::seq(b.finish().into(), c)?)
}

fn gate2(and: bool) -> Netlist {
    let mut b = NetlistBuilder::new();
    let x = b.inputs(2);
    let y = if and {
        b.and(x[0], x[1])
    } else {
        b.or(x[0], x[1])
    };
    b.output(y);
    b.finish()
}

fn build_go(
    program: &Program,
    leaves: &[Netlist],
    e: &BoolExpr,
    records: u64,
    idx: &mut usize,
) -> Result<Circuit, BuildError> {
    Ok(match e {
        BoolExpr::Fhd(_) | BoolExpr::Cosine(_) => {
            let n = leaves.get(*idx).ok_or(BuildError::MissingPlan(*idx))?;
            *idx += 1;
            n.clone().into()
        }
        BoolExpr::Const(_) | BoolExpr::Bit(_) => input_circuit(),
        BoolExpr::Not(x) => not_circuit(build_go(program, leaves, x, records, idx)?)?,
        BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
            let ca = build_go(program, leaves, a, records, idx)?;
            let cb = build_go(program, leaves, b, records, idx)?;
            gate_circuit(ca, cb, matches!(e, BoolExpr::And(..)))?
        }
        BoolExpr::If { cond, then: t, els } => {
            let cc = build_go(program, leaves, cond, records, idx)?;
            let ct = build_go(program, leaves, t, records, idx)?;
            let ce = build_go(program, leaves, els, records, idx)?;
            if_circuit(cc, ct, ce)?
        }
        BoolExpr::Quant { op, binders, body } => {
            let g = quantifier_size(program, binders, records);
            if g > MAX_COPIES {
                return Err(BuildError::TooLarge(g));
            }
            let start = *idx;
            if g == 0 {
                // Skip the body's comparisons; the result is a constant.
                let mut tmp = start;
                build_go(program, leaves, body, records, &mut tmp)?;
                *idx = tmp;
                return Ok(identity(1).into());
            }
            let mut copies = Vec::with_capacity(g as usize);
            for _ in 0..g {
                *idx = start;
                copies.push(build_go(program, leaves, body, records, idx)?);
            }
            quantifier_circuit(copies, *op == Quantifier::Any)?
        }
    })
}

// The circuit of each boolean construct, defined once: [`build`] applies them to the source's
// expressions, `irs-to-mpc` (under `beaver`) to the `irs` ops, so both make the same circuit.

/// A constant or a `bit` input: one input wire.
pub(crate) fn input_circuit() -> Circuit {
    identity(1).into()
}

/// `not c`: a NOT gate after `c`.
pub(crate) fn not_circuit(c: Circuit) -> Result<Circuit, BuildError> {
    let mut b = NetlistBuilder::new();
    let w = b.input();
    let n = b.not(w);
    b.output(n);
    then(c, &b.finish())
}

/// `a and b` / `a or b`: both side by side, then one gate.
pub(crate) fn gate_circuit(a: Circuit, b: Circuit, and: bool) -> Result<Circuit, BuildError> {
    then(par_all(vec![a, b]), &gate2(and))
}

/// `if c {t} else {e}`: `Seq(Par(C(c), id), Cond(C(e), C(t)))`; inputs: the condition's, then
/// the branches' (each branch ignores the other's).
pub(crate) fn if_circuit(cc: Circuit, ct: Circuit, ce: Circuit) -> Result<Circuit, BuildError> {
    let (ti, ei) = (ct.num_inputs(), ce.num_inputs());
    let branch1 = ignoring(ct, ti + ei, 0)?;
    let branch0 = ignoring(ce, ti + ei, ti)?;
    let front = par_all(vec![cc, identity(ti + ei).into()]);
    Ok(Circuit::seq(front, Circuit::cond(branch0, branch1)?)?)
}

/// `any` / `all` over `copies`: side by side, then an OR / AND tree.
pub(crate) fn quantifier_circuit(copies: Vec<Circuit>, any: bool) -> Result<Circuit, BuildError> {
    let g = copies.len();
    let tree = if any { or_tree(g) } else { and_tree(g) };
    then(par_all(copies), &tree)
}

/// The multiplexer of one conditional, for explanations.
pub fn conditional_mux() -> Netlist {
    mux(1)
}

/// [`count`] of [`build`]'s circuit.
pub fn build_and_count(
    program: &Program,
    plans: &[TestPlan],
    expr: &BoolExpr,
    records: u64,
) -> Result<Summary, BuildError> {
    Ok(count(&build(program, plans, expr, records)?).into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::plan::tests::{deployed_plan, program};
    use crate::analysis::plan::PlanOptions;
    use crate::sema::program::*;
    use crate::syntax::Span;
    use irisc_runtime::vocab::Sharing;

    const R345: Ratio = Ratio { num: 69, den: 200 };

    fn fhd(query: Operand) -> BoolExpr {
        BoolExpr::Fhd(FhdTest {
            query,
            record: Operand::Record {
                binder: 0,
                field: 0,
            },
            ratio: R345,
            mask: MaskKind::Public,
            code_bits: 12800,
            span: Span::default(),
        })
    }

    /// `x1 and x2 and ... ` over `n` query bits: `n - 1` ANDs in a chain.
    fn chain(n: usize) -> BoolExpr {
        let bit = || BoolExpr::Bit(Operand::Query(1));
        (1..n).fold(bit(), |acc, _| {
            BoolExpr::And(Box::new(acc), Box::new(bit()))
        })
    }

    fn planned(value: BoolExpr, shape: RevealShape) -> (Program, Vec<TestPlan>) {
        let prog = program(12800, MaskKind::Public, vec![(shape, value)]);
        let o = PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        };
        // Every comparison here is the deployed public-mask test: the passes' choice for it.
        let p = deployed_plan(MaskKind::Public, &o);
        let n = prog.reveals.iter().map(|r| r.value.tests().len()).sum();
        (prog, vec![p.tests[0].clone(); n])
    }

    #[test]
    fn if_takes_the_longer_branch_plus_mux() {
        let value = BoolExpr::If {
            cond: Box::new(fhd(Operand::Query(1))),
            then: Box::new(chain(4)),
            els: Box::new(chain(6)),
        };
        let (prog, plans) = planned(value.clone(), RevealShape::Ids);
        let s = summarize(&prog, &plans, &value, 1).unwrap();
        // cond: MSB of Z_2^16 = 29 ANDs in 15 rounds; branches 3 and 5 ANDs; mux 1.
        assert_eq!((s.masked, s.naive), (29 + 5 + 1, 29 + 8 + 1));
        assert_eq!(s.rounds, 15 + 1 + 5 + 1);
        assert_eq!(s.conditionals, 1);
        let c = build(&prog, &plans, &value, 1).unwrap();
        assert_eq!(build_and_count(&prog, &plans, &value, 1).unwrap(), s);
        // Evaluate: x1 = -1 (all ones, MSB 1), x2 = x3 = 0: the condition holds, the then
        // branch (4 bits, all 1) gives 1; else (6 bits, one 0) would give 0.
        let mut input = vec![true; 16];
        input.extend(vec![false; 32]);
        let (t, f) = (vec![true; 4], [vec![true; 5], vec![false]].concat());
        let run = |cond_bits: &[bool]| c.eval(&[cond_bits, &t[..], &f[..]].concat()).unwrap()[0];
        assert!(run(&input));
        assert!(!run(&[false; 48]));
    }

    #[test]
    fn quantifiers_are_trees_over_their_counts() {
        let body = fhd(Operand::Rotated(1));
        let value = BoolExpr::Quant {
            op: Quantifier::Any,
            binders: vec![1],
            body: Box::new(body),
        };
        let (prog, plans) = planned(value.clone(), RevealShape::Ids);
        let s = summarize(&prog, &plans, &value, 1).unwrap();
        assert_eq!(
            (s.masked, s.naive, s.rounds),
            (31 * 29 + 30, 31 * 29 + 30, 15 + 5)
        );
        assert_eq!(build_and_count(&prog, &plans, &value, 1).unwrap(), s);
        // `any d in db, c in rotations(..)` over 3 records: 93 comparisons, one OR tree.
        let value = BoolExpr::Quant {
            op: Quantifier::All,
            binders: vec![0, 1],
            body: Box::new(fhd(Operand::Rotated(1))),
        };
        let (prog, plans) = planned(value.clone(), RevealShape::Bit);
        let s = summarize(&prog, &plans, &value, 3).unwrap();
        assert_eq!((s.masked, s.rounds), (93 * 29 + 92, 15 + 7));
        assert_eq!(build_and_count(&prog, &plans, &value, 3).unwrap(), s);
        assert_eq!(
            summarize(&prog, &plans, &value, 0).unwrap(),
            Summary::default()
        );
    }

    #[test]
    fn conditionals_side_by_side_add_up() {
        let iff = |a, b| BoolExpr::If {
            cond: Box::new(chain(2)),
            then: Box::new(chain(a)),
            els: Box::new(chain(b)),
        };
        let value = BoolExpr::Or(Box::new(iff(2, 8)), Box::new(iff(4, 1)));
        let (prog, plans) = planned(value.clone(), RevealShape::Ids);
        let s = summarize(&prog, &plans, &value, 1).unwrap();
        // (1 + max(1, 7) + 1) + (1 + max(3, 0) + 1) + 1 OR; naive adds every branch.
        assert_eq!(s.masked, 9 + 5 + 1);
        assert_eq!(
            s.naive,
            (1 + 1 + 7 + 1) + (1 + 3 + 1) + 1,
            "else branch: 0 ANDs"
        );
        assert_eq!(s.conditionals, 2);
        assert_eq!(build_and_count(&prog, &plans, &value, 1).unwrap(), s);
    }
}
