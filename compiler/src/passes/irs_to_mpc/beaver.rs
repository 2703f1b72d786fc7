//! Under the `beaver` protocol family (paper 004): the boolean part of every reveal becomes one
//! circuit, evaluated by Masked Triples with one lane per gallery record.
//!
//! The dot products and the compared values are lowered as under `rep3`; where `rep3` would
//! extract their MSBs (`mpc.msb`), the compared value becomes a *leaf* of the circuit instead.
//! The `irs` boolean ops then build, per lane, a circuit from the same constructors as the
//! circuit analysis ([`crate::analysis::circuit::build`]): a comparison is the MSB-extraction
//! netlist of its ring, `select` a conditional (`Cond`) whose branches share their triples,
//! `any`/`all` a tree. At the end of `@query` the leaves are converted to XOR shares locally
//! (`mpc.to_xor`), joined (`mpc.xor_concat`), evaluated once (`mpc.beaver_eval`, the circuit of
//! all reveals side by side: the one `irisc build --emit=circuit` writes), and each `ids`
//! reveal's bit per record is opened to its party (`mpc.beaver_open`).
//!
//! What reduces across records (`any d in db`, `count d in db`) runs after the circuit in the
//! honest-majority part: the ops that do ([`runs_after_circuit`]) wait until the circuit is
//! emitted, the values they read become extra circuit outputs (a record's own OR over its
//! rotations first moves inside the circuit, [`reduce_inside_records`]), and
//! `mpc.xor_to_bits` reshares those outputs to binary replicated shares for them.
//!
//! A value is a vector per lane: a comparison with a query's rotations has one element per
//! rotation (the record-major layout of the dot products), a query's bit one element for every
//! lane. An op on elements of different counts broadcasts a one-element operand, as `rep3` does.
//!
//! ```mlir
//! %7 = "mpc.lin"(%6, %5) {a = 2, b = 5} : (...) -> !mpc.rep<12>
//! %9 = "mpc.lin"(%6, %5) {a = 1, b = 4} : (...) -> !mpc.rep<12>
//! %10 = "mpc.to_xor"(%7) {group = 5} : (!mpc.rep<12>) -> !mpc.xor
//! %11 = "mpc.to_xor"(%9) {group = 5} : (!mpc.rep<12>) -> !mpc.xor
//! %12 = "mpc.to_xor"(%4) {group = 1} : (!mpc.bits) -> !mpc.xor
//! %13 = "mpc.xor_concat"(%10, %11) ...
//! %14 = "mpc.xor_concat"(%13, %12) ...
//! %15 = "mpc.beaver_eval"(%14) {circuit = "...", conditionals = 5, inputs = "360 0..36 180..216 ...", lanes_input = 0, naive_triples = 219, triples = 114} ...
//! %16 = "mpc.beaver_open"(%15) {row = 0, to = 0} : (!mpc.xor) -> !mpc.clear_bits
//! ```

use super::emitter::{Emitter, Src};
use super::handle::Handle;
use super::lanes::{InputRef, Leaf};
use super::{fail, PassError};
use crate::analysis::circuit::lower::to_runtime;
use crate::mlir::{get_int, get_str, op_name};
use melior::ir::{operation::OperationLike, Location, OperationRef};
use std::collections::HashSet;

/// The input table of `mpc.beaver_eval`: rows of the joined leaves, in circuit input order,
/// adjacent rows merged into ranges.
fn input_table(leaves: &[Leaf], inputs: &[InputRef]) -> String {
    let mut offset = Vec::with_capacity(leaves.len());
    let mut at = 0;
    for l in leaves {
        offset.push(at);
        at += l.rows();
    }
    let mut items: Vec<String> = Vec::new();
    let mut run: Option<(usize, usize)> = None;
    let flush = |run: &mut Option<(usize, usize)>, items: &mut Vec<String>| {
        if let Some((a, b)) = run.take() {
            items.push(if b == a + 1 {
                a.to_string()
            } else {
                format!("{a}..{b}")
            });
        }
    };
    for i in inputs {
        let (a, b) = match *i {
            InputRef::Compared { leaf, element } => {
                let Leaf::Compared { ring, .. } = leaves[leaf] else {
                    unreachable!("a compared input names a compared leaf")
                };
                let k = 3 * ring as usize;
                let a = offset[leaf] + element * k;
                (a, a + k)
            }
            InputRef::Bit { leaf } => (offset[leaf], offset[leaf] + 1),
            InputRef::Const(v) => {
                flush(&mut run, &mut items);
                items.push(if v { "c1" } else { "c0" }.into());
                continue;
            }
        };
        run = match run {
            Some((ra, rb)) if rb == a => Some((ra, b)),
            other => {
                let mut o = other;
                flush(&mut o, &mut items);
                Some((a, b))
            }
        };
    }
    flush(&mut run, &mut items);
    items.join(" ")
}

/// Emits the conversion, the evaluation, the openings of every `ids` reveal with their
/// outputs, and the reshare of every materialized value to binary replicated shares (the ops
/// lowered after this read them as `rep3` bits).
pub fn finish<'c>(e: &mut Emitter<'c>, at: Location<'c>) -> Result<(), PassError> {
    let Some(b) = e.beaver.take() else {
        return Ok(());
    };
    if b.reveals.is_empty() && b.materialized.is_empty() {
        return Ok(());
    }
    if !b.leaves.iter().any(|l| matches!(l, Leaf::Compared { .. })) {
        return Err(fail(
            "under --protocol beaver every reveal compares with a gallery (one lane per record); \
             this program's reveals read no comparison",
        ));
    }
    let (circuit, inputs) = b.circuit()?;
    let table = input_table(&b.leaves, &inputs);
    let rt = to_runtime(&circuit);
    let mut joined: Option<Handle> = None;
    for l in &b.leaves {
        let (value, group) = match *l {
            Leaf::Compared { value, group, .. } => (value, group),
            Leaf::Bit { value } => (value, 1),
        };
        let attrs = [e.int("group", group as i64)];
        let x = e.op1("mpc.to_xor", at, &[value], &attrs, "!mpc.xor")?;
        joined = Some(match joined {
            None => x,
            Some(j) => e.op1("mpc.xor_concat", at, &[j, x], &[], "!mpc.xor")?,
        });
    }
    let joined = joined.expect("at least one leaf");
    let sched = irisc_runtime::beaver::schedule::Schedule::new(&rt);
    let lanes_input = b
        .reveals
        .first()
        .map(|r| r.input)
        .or(b.lanes_input)
        .expect("a comparison names its gallery");
    let attrs = [
        e.string("circuit", &rt.to_hex()),
        e.string("inputs", &table),
        e.int("triples", sched.triples as i64),
        e.int("naive_triples", rt.naive_triples() as i64),
        e.int("conditionals", sched.conds.len() as i64),
        e.int("lanes_input", lanes_input),
    ];
    let outputs = e.op1("mpc.beaver_eval", at, &[joined], &attrs, "!mpc.xor")?;
    let q = e.query_handle();
    for (row, r) in b.reveals.iter().enumerate() {
        let attrs = [e.int("row", row as i64), e.int("to", r.to)];
        let clear = e.op1("mpc.beaver_open", at, &[outputs], &attrs, "!mpc.clear_bits")?;
        let out_attrs = [e.string("shape", "ids"), e.string("label", &r.label)];
        e.op("mpc.output", at, &[q, clear, r.records], &out_attrs, None)?;
    }
    let mut first = b.reveals.len();
    for (key, frag) in &b.materialized {
        let width = frag.elems.len();
        let attrs = [e.int("first", first as i64), e.int("width", width as i64)];
        let bits = e.op1("mpc.xor_to_bits", at, &[outputs], &attrs, "!mpc.bits")?;
        e.set_bits_key(*key, bits);
        first += width;
    }
    Ok(())
}

/// An `any`/`all` over the records of a value the circuit computes (its only use), in groups
/// that hold whole records: the reduction inside each record moves into the circuit (so the
/// circuit outputs one bit per record, not one per rotation), and the op reduces the records'
/// bits after it. Returns whether it did (the reduced value is then materialized).
pub fn reduce_inside_records<'c>(
    e: &mut Emitter<'c>,
    op: &OperationRef<'c, '_>,
    uses: &std::collections::HashMap<usize, usize>,
) -> Result<bool, PassError> {
    let name = op_name(op);
    if name != "irs.any" && name != "irs.all" {
        return Ok(false);
    }
    let Some((k, f)) = e.frag_operand(op, 0) else {
        return Ok(false);
    };
    let group = get_int(op, "group").map_err(fail)?;
    let b = e.beaver_mut()?;
    let w = b.width(f);
    let whole_records = group == 0 || (group > 0 && (group as usize).is_multiple_of(w));
    if w == 1 || !whole_records || uses.get(&k) != Some(&1) {
        return Ok(false);
    }
    let reduced = b.reduce(f, w as i64, name == "irs.any")?;
    b.materialize(k, reduced)?;
    let after = if group == 0 { 0 } else { group / w as i64 };
    e.group_after_circuit
        .insert(op.to_raw().ptr as usize, after);
    Ok(true)
}

/// Whether `op` runs after the circuit, in the honest-majority part: a reduction across records
/// (`any`/`all` whose groups do not lie inside a record's elements), a count, a `bit` or `count`
/// reveal, or any op reading such a result (`post` holds their keys).
pub fn runs_after_circuit<'c>(
    e: &Emitter<'c>,
    op: &OperationRef<'c, '_>,
    post: &HashSet<usize>,
) -> Result<bool, PassError> {
    let reads_post = op
        .operands()
        .any(|v| post.contains(&super::emitter::key(v)));
    if reads_post {
        return Ok(true);
    }
    Ok(match op_name(op).as_str() {
        "irs.count" => true,
        "irs.any" | "irs.all" => {
            let group = get_int(op, "group").map_err(fail)?;
            match e.frag_width(op, 0) {
                Some(w) => group <= 0 || w % group as usize != 0,
                None => false,
            }
        }
        "irs.reveal" => {
            let shape = get_str(op, "shape").map_err(fail)?;
            if shape != "ids" && e.frag_width(op, 0).is_some() {
                return Err(fail(format!(
                    "under --protocol beaver a `{shape}` reveal reads a value per record: only \
                     `ids` reveals (one bit per record) or reductions over the records are \
                     revealed"
                )));
            }
            shape != "ids"
        }
        _ => false,
    })
}

/// Elements per record of a comparison of `q` with `r`: the rotations of the query (the dot
/// products are record-major).
pub fn group_of(q: &Src, r: &Src) -> Result<(usize, i64), PassError> {
    let refused = || {
        fail(
            "under --protocol beaver a comparison reads a query (or its rotations) and a \
             gallery's records",
        )
    };
    let Src::Records {
        input,
        earlier: false,
        ..
    } = r
    else {
        return Err(refused());
    };
    match q {
        Src::Query { .. } => Ok((1, *input)),
        Src::Rotated { lo, hi, .. } if hi >= lo => Ok(((hi - lo + 1) as usize, *input)),
        _ => Err(refused()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::circuit::lower::program_circuit;
    use crate::analysis::plan::PlanOptions;
    use crate::lower::lower_program;
    use crate::mlir::Compiler;
    use crate::passes::PassManager;
    use irisc_runtime::beaver::party::Evaluation;
    use irisc_runtime::vocab::Protocol;

    fn beaver() -> PlanOptions {
        PlanOptions {
            protocol: Some(Protocol::Beaver),
            ..Default::default()
        }
    }

    fn example(name: &str) -> String {
        let path = format!("{}/../examples/{name}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// `source` lowered to `mpc` under `beaver`: the module's manifest entry, or the error.
    fn lowered(
        name: &str,
        source: &str,
    ) -> Result<irisc_runtime::manifest::BeaverManifest, String> {
        let program = crate::sema::frontend(name, source).map_err(|e| e.to_string())?;
        let cx = Compiler::new().expect("the dialects load");
        let irs = lower_program(&cx, &program, source).map_err(|e| e.to_string())?;
        let mpc = PassManager::irs_to_mpc_pipeline(&beaver())
            .run(&cx, irs, None)
            .map_err(|e| e.to_string())?;
        crate::codegen::manifest::beaver_manifest(&mpc)
            .map_err(|e| e.0)?
            .ok_or_else(|| "no mpc.beaver_eval".to_string())
    }

    /// The circuit the pass builds from the `irs` ops is, gate for gate, the one the circuit
    /// analysis builds from the source (`irisc build --emit=circuit`, `irisc explain`): the
    /// store the preprocessing makes for one is the store the executable takes.
    #[test]
    fn the_pass_builds_the_analysis_circuit() {
        for name in [
            "small_tiered.irs",
            "iris_tiered.irs",
            "iris_tier4.irs",
            "small_ids.irs",
            "iris_ids.irs",
            "small_secret.irs",
            "small_eyes.irs",
            "iris_eyes_ids.irs",
        ] {
            let source = example(name);
            let got = lowered(name, &source).unwrap_or_else(|e| panic!("{name}: {e}"));
            let program = crate::sema::frontend(name, &source).unwrap();
            let plan = crate::testing::plan_of(&program, &source, &beaver()).unwrap();
            let c = program_circuit(&program, &plan).unwrap();
            let binding: String = Evaluation::MaskedTriples
                .binding(&c)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(got.binding, binding, "{name}");
            assert_eq!(got.triples, c.needed_triples(), "{name}");
            assert_eq!((got.inputs, got.outputs), (c.num_inputs(), c.num_outputs()));
        }
    }

    /// What `beaver` cannot run is refused by name, not miscompiled.
    #[test]
    fn unsupported_programs_are_refused_with_the_reason() {
        for (name, why) in [
            ("small_voice.irs", "cosine"),
            ("small_batch.irs", "a gallery's records"),
        ] {
            let e = lowered(name, &example(name)).unwrap_err();
            assert!(e.contains(why), "{name}: {e}");
        }
        let fp = PlanOptions {
            sharing: Some(irisc_runtime::vocab::Sharing::Fp),
            ..beaver()
        };
        let source = example("small_ids.irs");
        let program = crate::sema::frontend("small_ids.irs", &source).unwrap();
        let e = crate::testing::plan_of(&program, &source, &fp).unwrap_err();
        assert!(e.message.contains("mod p"), "{}", e.message);
    }

    /// A reduction over the records or a count reads the circuit's per-record bits after a
    /// reshare to the honest-majority sharing: the circuit outputs one bit per record (the
    /// rotations' OR inside it), and no reveal opens a per-record value.
    #[test]
    fn reductions_over_records_read_the_circuit_outputs() {
        for name in ["small_count.irs", "iris_unique.irs", "iris_count.irs"] {
            let m = lowered(name, &example(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(m.outputs, 1, "{name}: one bit per record");
            assert!(m.triples > 0, "{name}");
        }
    }

    #[test]
    fn input_tables_merge_adjacent_rows() {
        let leaves = [
            Leaf::Compared {
                value: Handle::test(0),
                ring: 2,
                group: 2,
            },
            Leaf::Bit {
                value: Handle::test(1),
            },
        ];
        let inputs = [
            InputRef::Bit { leaf: 1 },
            InputRef::Compared {
                leaf: 0,
                element: 0,
            },
            InputRef::Compared {
                leaf: 0,
                element: 1,
            },
            InputRef::Const(true),
            InputRef::Compared {
                leaf: 0,
                element: 0,
            },
            InputRef::Bit { leaf: 1 },
        ];
        assert_eq!(input_table(&leaves, &inputs), "12 0..12 c1 0..6 12");
    }
}
