//! The plaintext definition of a program's answers, computed in the clear: the oracle that
//! `irisc run --check` and the tests compare the three-party result against.
//!
//! It evaluates the typed program directly (not the compiled code): Algorithm 1 for public
//! masks, `b*(ml - 2hd) > a*ml` with the compiler's reported `(a, b)` for secret masks, the
//! square-root-free cosine test of paper 002 (Section 2.4) on the quantised vectors, and the
//! boolean structure, quantifiers, ids and counts as the language defines them.

use std::collections::BTreeMap;
use std::rc::Rc;

use anyhow::{bail, Result};
use serde_json::{json, Map, Value};

use irisc_runtime::contract::MATCH_FIELD;
use irisc_runtime::iris::{overlap_counts, IrisCode};

use crate::analysis::plan::{Plan, TestPlan};
use crate::sema::program::{
    BinderKind, BoolExpr, InputId, Operand, Program, Quantifier, Records, RevealShape,
};
use irisc_runtime::vocab::Variant;

/// One input's plaintext values, index-aligned with its records (galleries) or the batch
/// (queries).
#[derive(Debug, Clone)]
pub enum PlainInput {
    Iris(Vec<(u64, IrisCode)>),
    /// Quantised components: `round(v * 2^scale)`.
    Embedding(Vec<(u64, Vec<i64>)>),
    Bit(Vec<(u64, bool)>),
}

impl PlainInput {
    /// Records (galleries) or queries held.
    pub fn len(&self) -> usize {
        match self {
            PlainInput::Iris(v) => v.len(),
            PlainInput::Embedding(v) => v.len(),
            PlainInput::Bit(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn id(&self, i: usize) -> u64 {
        match self {
            PlainInput::Iris(v) => v[i].0,
            PlainInput::Embedding(v) => v[i].0,
            PlainInput::Bit(v) => v[i].0,
        }
    }
}

/// Each comparison node's index in the plan: reveals in order, within a reveal
/// [`BoolExpr::tests`] order (the op order of the lowered module, which the plan follows).
fn test_numbers(program: &Program) -> std::collections::HashMap<usize, usize> {
    let mut tests = std::collections::HashMap::new();
    for r in &program.reveals {
        for t in r.value.tests() {
            let n = tests.len();
            tests.insert(t as *const BoolExpr as usize, n);
        }
    }
    tests
}

/// The objects each output party prints, per query: party -> one JSON object per query with
/// that party's fields (`{"query": i, "id": <the query record's id>, <label>: ...}`; the first
/// ids or bit output to a party also sets `"match"`, as README "Outputs" defines).
pub fn answers(
    program: &Program,
    plan: &Plan,
    inputs: &[PlainInput],
) -> Result<BTreeMap<usize, Vec<Value>>> {
    if inputs.len() != program.inputs.len() {
        bail!(
            "{} inputs given, the program declares {}",
            inputs.len(),
            program.inputs.len()
        );
    }
    let batch = program
        .query_inputs()
        .map(|(i, _)| inputs[i].len())
        .max()
        .unwrap_or(0);
    let tests = test_numbers(program);
    let ev = Eval {
        program,
        plan,
        inputs,
        tests: &tests,
        rotated: Default::default(),
    };
    // Lines name the query by the id of the first query input's record.
    let query_ids = program.query_inputs().next().map(|(i, _)| &inputs[i]);
    let mut out: BTreeMap<usize, Vec<Value>> = BTreeMap::new();
    for q in 0..batch {
        let mut objects: BTreeMap<usize, Map<String, Value>> = BTreeMap::new();
        // Rotations of earlier queries are not needed again.
        ev.rotated
            .borrow_mut()
            .retain(|&(_, row, _, _), _| row >= q);
        for r in &program.reveals {
            let obj = objects.entry(r.to).or_insert_with(|| {
                let mut m = Map::new();
                m.insert("query".into(), json!(q));
                if let Some(ids) = query_ids.filter(|ids| q < ids.len()) {
                    m.insert("id".into(), json!(ids.id(q)));
                }
                m
            });
            // Whether this is the first ids or bit output to the party for this query.
            let sets_match = r.shape != RevealShape::Count && !obj.contains_key(MATCH_FIELD);
            let mut env = Env::default();
            match (r.shape, r.records) {
                (RevealShape::Bit, _) => {
                    let bit = ev.eval(&r.value, q, &mut env)?;
                    if sets_match {
                        obj.insert(MATCH_FIELD.into(), json!(bit));
                    }
                    obj.insert(r.label.clone(), json!(bit));
                }
                (shape, Some(b)) => {
                    let n = ev.record_count(b, q)?;
                    let hits = ev.matching_records(&r.value, b, n, q)?;
                    if shape == RevealShape::Count {
                        obj.insert(r.label.clone(), json!(hits.len()));
                    } else {
                        if sets_match {
                            obj.insert(MATCH_FIELD.into(), json!(!hits.is_empty()));
                        }
                        obj.insert(r.label.clone(), json!(hits));
                    }
                }
                (_, None) => bail!("an ids/count reveal without records"),
            }
        }
        for (party, obj) in objects {
            out.entry(party).or_default().push(Value::Object(obj));
        }
    }
    Ok(out)
}

/// The output party's objects for a program with exactly one gallery and one query input of
/// iris codes, read from NDJSON files (the issue-2 command line: `--db`, `--query`).
pub fn answers_db_query(
    program: &Program,
    plan: &Plan,
    db: &std::path::Path,
    query: &std::path::Path,
) -> Result<Vec<Value>> {
    use irisc_runtime::io::ndjson;
    use irisc_runtime::vocab::InputRole;
    let read = |p: &std::path::Path| -> Result<PlainInput> {
        Ok(PlainInput::Iris(
            ndjson::read_file(p)?
                .into_iter()
                .map(|r| (r.id, r.iris))
                .collect(),
        ))
    };
    let inputs = program
        .inputs
        .iter()
        .map(|i| match i.role {
            InputRole::Gallery => read(db),
            InputRole::Query => read(query),
        })
        .collect::<Result<Vec<_>>>()?;
    let to = program.reveals.first().map_or(0, |r| r.to);
    Ok(answers(program, plan, &inputs)?
        .remove(&to)
        .unwrap_or_default())
}

#[derive(Default)]
struct Env {
    /// Record binder -> record index.
    records: BTreeMap<usize, usize>,
    /// Rotations binder -> shift.
    shifts: BTreeMap<usize, i64>,
}

struct Eval<'a> {
    program: &'a Program,
    plan: &'a Plan,
    inputs: &'a [PlainInput],
    /// Test number by the address of its expression (a key only, never dereferenced).
    tests: &'a std::collections::HashMap<usize, usize>,
    /// Rotated codes already computed, by (input, row, shift): a query's rotations are compared
    /// with every record, so each is rotated once, not once per record.
    #[allow(clippy::type_complexity)]
    rotated:
        std::cell::RefCell<std::collections::HashMap<(InputId, usize, i64, bool), Rc<IrisCode>>>,
}

/// A code as [`Eval::iris`] gives it: an input's row in place, or a cached rotation.
enum Code<'a> {
    Row(&'a IrisCode),
    Rotated(Rc<IrisCode>),
}

impl std::ops::Deref for Code<'_> {
    type Target = IrisCode;
    fn deref(&self) -> &IrisCode {
        match self {
            Code::Row(c) => c,
            Code::Rotated(c) => c,
        }
    }
}

impl Eval<'_> {
    fn records(&self, b: usize) -> Result<&Records> {
        match &self.program.binders[b].kind {
            BinderKind::Records(r) => Ok(r),
            BinderKind::Rotations { .. } => bail!("binder {b} is not a record binder"),
        }
    }

    /// The ids of the records `0..n` of binder `b` for which `value` holds for query `q`, in
    /// order. A large gallery is split among the machine's cores, each part with an
    /// evaluator (and rotation cache) of its own: the records are independent.
    fn matching_records(&self, value: &BoolExpr, b: usize, n: usize, q: usize) -> Result<Vec<u64>> {
        let part = |ev: &Eval<'_>, range: std::ops::Range<usize>| -> Result<Vec<u64>> {
            let mut env = Env::default();
            let mut hits = Vec::new();
            for i in range {
                env.records.insert(b, i);
                if ev.eval(value, q, &mut env)? {
                    hits.push(ev.record_id(b, i)?);
                }
            }
            Ok(hits)
        };
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        // Below a few thousand records a thread costs more than it saves.
        const PER_THREAD_AT_LEAST: usize = 4096;
        let parts = threads.min(n / PER_THREAD_AT_LEAST).max(1);
        if parts == 1 {
            return part(self, 0..n);
        }
        let (program, plan, inputs, tests) = (self.program, self.plan, self.inputs, self.tests);
        let results: Vec<Result<Vec<u64>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..parts)
                .map(|k| {
                    let range = n * k / parts..n * (k + 1) / parts;
                    s.spawn(move || {
                        let ev = Eval {
                            program,
                            plan,
                            inputs,
                            tests,
                            rotated: Default::default(),
                        };
                        part(&ev, range)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| bail!("a plaintext evaluator thread panicked"))
                })
                .collect()
        });
        let mut hits = Vec::new();
        for r in results {
            hits.extend(r?);
        }
        Ok(hits)
    }

    fn record_count(&self, b: usize, q: usize) -> Result<usize> {
        Ok(match self.records(b)? {
            Records::Galleries(g) => self.inputs[g[0]].len(),
            Records::Earlier(_) => q,
        })
    }

    fn record_id(&self, b: usize, i: usize) -> Result<u64> {
        Ok(match self.records(b)? {
            Records::Galleries(g) => self.inputs[g[0]].id(i),
            Records::Earlier(_) => i as u64,
        })
    }

    /// The input and row an operand reads, the rotation applied, and whether to the mirror
    /// image.
    fn locate(&self, o: &Operand, q: usize, env: &Env) -> Result<(InputId, usize, i64, bool)> {
        Ok(match *o {
            Operand::Query(i) => (i, q, 0, false),
            Operand::Rotated(b) => {
                let BinderKind::Rotations { query, mirror, .. } = self.program.binders[b].kind
                else {
                    bail!("binder {b} is not a rotations binder");
                };
                let s = *env
                    .shifts
                    .get(&b)
                    .ok_or_else(|| anyhow::anyhow!("rotation unbound"))?;
                (query, q, s, mirror)
            }
            Operand::Record { binder, field } => {
                let i = *env
                    .records
                    .get(&binder)
                    .ok_or_else(|| anyhow::anyhow!("record unbound"))?;
                let input = self
                    .records(binder)?
                    .field_input(field)
                    .ok_or_else(|| anyhow::anyhow!("no record field {field}"))?;
                (input, i, 0, false)
            }
        })
    }

    fn iris(&self, o: &Operand, q: usize, env: &Env) -> Result<Code<'_>> {
        let (input, row, s, mirror) = self.locate(o, q, env)?;
        let PlainInput::Iris(v) = &self.inputs[input] else {
            bail!("input {input} is not iris codes");
        };
        let code = &v
            .get(row)
            .ok_or_else(|| anyhow::anyhow!("input {input} has no row {row}"))?
            .1;
        if s == 0 && !mirror {
            return Ok(Code::Row(code));
        }
        let mut cache = self.rotated.borrow_mut();
        let rotated = cache.entry((input, row, s, mirror)).or_insert_with(|| {
            Rc::new(if mirror {
                code.mirror().rotate(s)
            } else {
                code.rotate(s)
            })
        });
        Ok(Code::Rotated(rotated.clone()))
    }

    fn vector(&self, o: &Operand, q: usize, env: &Env) -> Result<&[i64]> {
        let (input, row, _, _) = self.locate(o, q, env)?;
        let PlainInput::Embedding(v) = &self.inputs[input] else {
            bail!("input {input} is not embeddings");
        };
        Ok(&v
            .get(row)
            .ok_or_else(|| anyhow::anyhow!("input {input} has no row {row}"))?
            .1)
    }

    fn eval(&self, e: &BoolExpr, q: usize, env: &mut Env) -> Result<bool> {
        Ok(match e {
            BoolExpr::Const(b) => *b,
            BoolExpr::Bit(o) => {
                let (input, row, _, _) = self.locate(o, q, env)?;
                let PlainInput::Bit(v) = &self.inputs[input] else {
                    bail!("input {input} is not bits");
                };
                v.get(row).ok_or_else(|| anyhow::anyhow!("no bit {row}"))?.1
            }
            BoolExpr::Fhd(t) => {
                let (x, y) = (self.iris(&t.query, q, env)?, self.iris(&t.record, q, env)?);
                let o =
                    overlap_counts(&x, &y).ok_or_else(|| anyhow::anyhow!("code lengths differ"))?;
                let test = self.tests[&(e as *const BoolExpr as usize)];
                match &self.plan.tests[test] {
                    TestPlan::Fhd(f) if f.variant != Variant::PlainMask => {
                        let dot = i128::from(o.masked_dot());
                        i128::from(f.b) * dot > i128::from(f.a) * i128::from(o.ml)
                    }
                    _ => o.below_ratio(t.ratio.num, t.ratio.den),
                }
            }
            BoolExpr::Cosine(t) => {
                let (x, y) = (
                    self.vector(&t.query, q, env)?,
                    self.vector(&t.record, q, env)?,
                );
                cosine_holds(x, y, t.tau.negative, t.tau.abs.num, t.tau.abs.den, t.strict)
            }
            BoolExpr::Not(x) => !self.eval(x, q, env)?,
            BoolExpr::And(a, b) => {
                let l = self.eval(a, q, env)?;
                self.eval(b, q, env)? && l
            }
            BoolExpr::Or(a, b) => {
                let l = self.eval(a, q, env)?;
                self.eval(b, q, env)? || l
            }
            BoolExpr::If { cond, then, els } => {
                if self.eval(cond, q, env)? {
                    self.eval(then, q, env)?
                } else {
                    self.eval(els, q, env)?
                }
            }
            BoolExpr::Quant { op, binders, body } => {
                let mut acc = *op == Quantifier::All;
                self.quantify(binders, body, q, env, *op, &mut acc)?;
                acc
            }
        })
    }

    /// Iterates every combination of `binders`, folding the body into `acc`.
    fn quantify(
        &self,
        binders: &[usize],
        body: &BoolExpr,
        q: usize,
        env: &mut Env,
        op: Quantifier,
        acc: &mut bool,
    ) -> Result<()> {
        let Some((&b, rest)) = binders.split_first() else {
            let v = self.eval(body, q, env)?;
            *acc = match op {
                Quantifier::Any => *acc || v,
                Quantifier::All => *acc && v,
            };
            return Ok(());
        };
        match self.program.binders[b].kind {
            BinderKind::Rotations { lo, hi, .. } => {
                for s in lo..=hi {
                    env.shifts.insert(b, s.into());
                    self.quantify(rest, body, q, env, op, acc)?;
                }
                env.shifts.remove(&b);
            }
            BinderKind::Records(_) => {
                for i in 0..self.record_count(b, q)? {
                    env.records.insert(b, i);
                    self.quantify(rest, body, q, env, op, acc)?;
                }
                env.records.remove(&b);
            }
        }
        Ok(())
    }
}

/// `cosine(x, y) >= tau` (`> tau` when `strict`) for `tau = ±num/den`, without square roots
/// (paper 002, Section 2.4): with `p = <x,y>`, for `tau >= 0` iff `p >= 0` (`> 0` strict) and
/// `den^2 p^2 >= num^2 <x,x><y,y>` (`>`); for `tau < 0` iff `p >= 0` or
/// `num^2 <x,x><y,y> >= den^2 p^2` (`>`).
pub fn cosine_holds(
    x: &[i64],
    y: &[i64],
    negative: bool,
    num: u64,
    den: u64,
    strict: bool,
) -> bool {
    let dot = |a: &[i64], b: &[i64]| {
        a.iter()
            .zip(b)
            .map(|(u, v)| i128::from(*u) * i128::from(*v))
            .sum::<i128>()
    };
    let (p, xx, yy) = (dot(x, y), dot(x, x), dot(y, y));
    let (n2, d2) = (i128::from(num).pow(2), i128::from(den).pow(2));
    let (lhs, rhs) = (d2 * p * p, n2 * xx * yy);
    if negative {
        let c2 = if strict { rhs > lhs } else { rhs >= lhs };
        p >= 0 || c2
    } else {
        let c1 = if strict { p > 0 } else { p >= 0 };
        let c2 = if strict { lhs > rhs } else { lhs >= rhs };
        c1 && c2
    }
}

#[cfg(test)]
mod tests {
    use super::cosine_holds;

    /// The integer rule agrees with the floating-point cosine away from the threshold.
    #[test]
    fn cosine_rule_matches_the_real_cosine() {
        let cases: [(&[i64], &[i64]); 4] = [
            (&[256, 0], &[256, 0]),
            (&[256, 0], &[0, 256]),
            (&[256, 0], &[-256, 10]),
            (&[100, 200, -50], &[90, 210, -40]),
        ];
        for (x, y) in cases {
            let f = |v: &[i64]| v.iter().map(|a| *a as f64).collect::<Vec<_>>();
            let (fx, fy) = (f(x), f(y));
            let dot: f64 = fx.iter().zip(&fy).map(|(a, b)| a * b).sum();
            let n = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
            let cos = dot / (n(&fx) * n(&fy));
            for (neg, num, den) in [(false, 34u64, 100u64), (true, 1, 2), (false, 9, 10)] {
                let tau = if neg {
                    -(num as f64) / den as f64
                } else {
                    num as f64 / den as f64
                };
                if (cos - tau).abs() > 1e-9 {
                    assert_eq!(
                        cosine_holds(x, y, neg, num, den, false),
                        cos >= tau,
                        "{x:?} {y:?} {tau}"
                    );
                    assert_eq!(
                        cosine_holds(x, y, neg, num, den, true),
                        cos > tau,
                        "{x:?} {y:?} {tau}"
                    );
                }
            }
        }
    }
}
