//! `irisc explain` for the whole language (program v2): per comparison its ranges, ring,
//! sharing, variant, `(a, b)`, lift bits and justification; per boolean node its gates and
//! rounds; per reveal and for the program the rounds, bytes per party, AND gates and triples
//! (longest execution path and naive, paper 004) per query for `records` records; and the
//! leakage ledger (every opening, to whom, how many bits, and why nothing beyond the declared
//! outputs is revealed).

use serde_json::{json, Value};

use super::circuit::build::comparison_netlist;
use super::circuit::build::{quantifier_size, summarize, summarize_logic, Summary};
use super::plan::{cost, test_sites, Plan, TestPlan};
use crate::analysis::schedule::TileOptions;
use crate::sema::program::{BinderKind, BoolExpr, Operand, Program, Records, RevealShape};
use crate::syntax::Span;
use irisc_runtime::vocab::{MsbInput, Protocol};

mod text;

pub use text::group;
pub use text::records_line;

fn span_json(span: Span, source: Option<&str>) -> Value {
    match source {
        Some(src) => {
            let (l, c) = span.line_column(src);
            json!({ "line": l, "column": c, "text": format!("{l}:{c}") })
        }
        None => json!({ "start": span.start, "end": span.end }),
    }
}

/// Human words for an operand.
pub fn operand_name(program: &Program, o: &Operand) -> String {
    match *o {
        Operand::Query(i) => program.inputs.get(i).map_or("?".into(), |x| x.name.clone()),
        Operand::Rotated(b) => match program.binders.get(b) {
            Some(bd) => match bd.kind {
                BinderKind::Rotations {
                    query,
                    lo,
                    hi,
                    mirror,
                } => format!(
                    "{} (rotations of {}{} {lo}..={hi})",
                    bd.names.join(", "),
                    if mirror { "the mirror image of " } else { "" },
                    program.inputs.get(query).map_or("?", |x| x.name.as_str())
                ),
                _ => bd.names.join(", "),
            },
            None => "?".into(),
        },
        Operand::Record { binder, field } => match program.binders.get(binder) {
            Some(bd) => {
                let name = bd.names.get(field).cloned().unwrap_or_default();
                let src = match &bd.kind {
                    BinderKind::Records(Records::Galleries(g)) => g
                        .get(field)
                        .and_then(|&i| program.inputs.get(i))
                        .map_or("?".to_string(), |x| format!("record of {}", x.name)),
                    BinderKind::Records(Records::Earlier(q)) => format!(
                        "earlier query of {}",
                        program.inputs.get(*q).map_or("?", |x| x.name.as_str())
                    ),
                    _ => "?".into(),
                };
                format!("{name} ({src})")
            }
            None => "?".into(),
        },
    }
}

fn pair(lo: i128, hi: i128) -> Value {
    json!([lo.to_string(), hi.to_string()])
}

fn test_json(program: &Program, e: &BoolExpr, plan: &TestPlan, source: Option<&str>) -> Value {
    match (e, plan) {
        (BoolExpr::Fhd(t), TestPlan::Fhd(p)) => {
            let rg = crate::analysis::ring::ranges(t.code_bits, t.ratio);
            json!({
                "kind": "fhd",
                "span": span_json(t.span, source),
                "operands": [operand_name(program, &t.query), operand_name(program, &t.record)],
                "code_bits": t.code_bits,
                "ratio": { "num": t.ratio.num, "den": t.ratio.den },
                "mask": t.mask,
                "test": if p.ml_ring.is_some() {
                    "match iff MSB(a*ml - b*dot) = 1, i.e. b*dot > a*ml (dot = ml - 2hd)"
                } else {
                    "match iff MSB(T - dot) = 1, T = floor((1 - 2r) * ml) (Algorithm 1)"
                },
                "ranges": {
                    "ml": pair(rg.ml.lo, rg.ml.hi),
                    "dot": pair(rg.dot.lo, rg.dot.hi),
                    "compared": pair(p.compared_lo, p.compared_hi),
                },
                "sharing": p.sharing,
                "variant": p.variant,
                "dot_ring": p.dot_ring,
                "ml_ring": p.ml_ring,
                "compare_ring": p.compare_ring,
                "a": p.a,
                "b": p.b,
                "lift_bits": p.lift_bits,
                "msb_input": p.msb_input,
                "justification": p.justification,
                "cost": p.cost,
            })
        }
        (BoolExpr::Cosine(t), TestPlan::Cosine(p)) => {
            let r = crate::analysis::cosine::ranges(t.dim, t.scale_bits, t.tau, t.strict);
            let rj = r.map(|r| {
                let mut m = serde_json::Map::new();
                for (name, i) in r.all() {
                    m.insert(name.into(), pair(i.lo, i.hi));
                }
                Value::Object(m)
            });
            json!({
                "kind": "cosine",
                "span": span_json(t.span, source),
                "operands": [operand_name(program, &t.query), operand_name(program, &t.record)],
                "dim": t.dim,
                "scale_bits": t.scale_bits,
                "tau": { "negative": p.negative, "num": p.num, "den": p.den },
                "strict": p.strict,
                "ranges": rj,
                "sharing": "rep3",
                "ring": p.ring,
                "justification": p.justification,
                "cost": p.cost,
            })
        }
        _ => json!({ "kind": "mismatch", "error": "plan and program disagree" }),
    }
}

/// Every boolean (non-comparison) node in pre-order: op, own AND gates, own rounds.
fn node_list(program: &Program, e: &BoolExpr, records: u64, out: &mut Vec<Value>) {
    let own = |op: &str, gates: u64, rounds: u64, note: String| json!({ "op": op, "and_gates": gates, "rounds": rounds, "note": note });
    match e {
        BoolExpr::Fhd(_) | BoolExpr::Cosine(_) => {}
        BoolExpr::Const(b) => out.push(own("const", 0, 0, format!("{b}, public"))),
        BoolExpr::Bit(o) => out.push(own("bit", 0, 0, operand_name(program, o))),
        BoolExpr::Not(x) => {
            out.push(own("not", 0, 0, "local".into()));
            node_list(program, x, records, out);
        }
        BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
            let op = if matches!(e, BoolExpr::And(..)) {
                "and"
            } else {
                "or"
            };
            out.push(own(op, 1, 1, "one AND gate".into()));
            node_list(program, a, records, out);
            node_list(program, b, records, out);
        }
        BoolExpr::If { cond, then, els } => {
            out.push(own(
                "if",
                1,
                2,
                "mux (Algorithm 11, one AND); masked triples: the branches share triples, \
                 one opening of s XOR t"
                    .into(),
            ));
            for x in [cond, then, els] {
                node_list(program, x, records, out);
            }
        }
        BoolExpr::Quant { op, binders, body } => {
            let g = quantifier_size(program, binders, records);
            let depth = if g <= 1 {
                0
            } else {
                u64::from(64 - (g - 1).leading_zeros())
            };
            let name = match op {
                crate::sema::program::Quantifier::Any => "any",
                crate::sema::program::Quantifier::All => "all",
            };
            out.push(own(
                name,
                g.saturating_sub(1),
                depth,
                format!(
                    "{} tree over {g} combinations",
                    if name == "any" { "OR" } else { "AND" }
                ),
            ));
            node_list(program, body, records, out);
        }
    }
}

/// Per-query totals of one reveal.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct RevealTotals {
    pub comparisons: u64,
    /// Rounds of the generated schedule, which runs its ops one after another.
    pub rounds: u64,
    /// Rounds on the circuit's critical path: what merging independent rounds could reach.
    pub rounds_critical_path: u64,
    pub bytes_per_party: f64,
    pub and_gates: u64,
    pub triples_longest_path: u64,
    pub triples_naive: u64,
    pub opened_bits: u64,
}

/// Rounds of the schedule `irs-to-mpc` generates for `e` (ops run one after another: the two
/// sides of `and`/`or` and the three parts of an `if` add up; a quantifier adds its tree), and
/// the bytes per record that comparisons save by sharing an earlier comparison's dot products
/// (same operands, sharing and rings: `irs-to-mpc` computes and reshares them once).
fn schedule_rounds(
    program: &Program,
    plans: &[TestPlan],
    e: &BoolExpr,
    records: u64,
    idx: &mut usize,
    seen: &mut std::collections::HashSet<String>,
) -> (u64, f64) {
    match e {
        BoolExpr::Fhd(t) => {
            let Some(p) = plans.get(*idx) else {
                return (0, 0.0);
            };
            *idx += 1;
            let TestPlan::Fhd(f) = p else {
                return (p.cost().rounds, 0.0);
            };
            let key = format!(
                "{:?} {:?} {} {} {:?}",
                t.query, t.record, f.sharing, f.dot_ring, f.ml_ring
            );
            if !seen.insert(key) && f.msb_input == MsbInput::Replicated {
                // The reshares of the shared dot products: one round and one element each
                // (AdditiveMSB has none: its comparisons share only the local dot products).
                let (reshares, bytes) = match f.ml_ring {
                    Some(ml) => (2, cost::word_bytes(f.dot_ring) + cost::word_bytes(ml)),
                    None => (1, cost::word_bytes(f.dot_ring)),
                };
                let per_record = t_rotations(program, &t.query) as f64 * bytes as f64;
                return (p.cost().rounds.saturating_sub(reshares), per_record);
            }
            (p.cost().rounds, 0.0)
        }
        BoolExpr::Cosine(_) => {
            let r = plans.get(*idx).map_or(0, |p| p.cost().rounds);
            *idx += 1;
            (r, 0.0)
        }
        BoolExpr::Const(_) | BoolExpr::Bit(_) => (0, 0.0),
        BoolExpr::Not(x) => schedule_rounds(program, plans, x, records, idx, seen),
        BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
            let (ra, sa) = schedule_rounds(program, plans, a, records, idx, seen);
            let (rb, sb) = schedule_rounds(program, plans, b, records, idx, seen);
            (ra + rb + 1, sa + sb)
        }
        BoolExpr::If { cond, then, els } => {
            let (rc, sc) = schedule_rounds(program, plans, cond, records, idx, seen);
            let (rt, st) = schedule_rounds(program, plans, then, records, idx, seen);
            let (re, se) = schedule_rounds(program, plans, els, records, idx, seen);
            // CMux: one AND layer.
            (rc + rt + re + 1, sc + st + se)
        }
        BoolExpr::Quant { binders, body, .. } => {
            let g = quantifier_size(program, binders, records);
            let (r, s) = schedule_rounds(program, plans, body, records, idx, seen);
            let tree = if g <= 1 {
                0
            } else {
                u64::from(64 - (g - 1).leading_zeros())
            };
            (r + tree, s)
        }
    }
}

/// The number of codes an fhd test's query side stands for (its rotations, or 1).
fn t_rotations(program: &Program, o: &Operand) -> u64 {
    match *o {
        Operand::Rotated(b) => program
            .binders
            .get(b)
            .and_then(|b| b.rotation_count())
            .map_or(1, u64::from),
        _ => 1,
    }
}

fn bits_for(n: u64) -> u64 {
    u64::from(64 - n.leading_zeros()).max(1)
}

/// The per-query totals of every reveal, for `records` records per record binder.
pub fn reveal_totals(program: &Program, plan: &Plan, records: u64) -> Vec<RevealTotals> {
    let sites = test_sites(program);
    let mut out = Vec::new();
    let mut offset = 0;
    for (ri, r) in program.reveals.iter().enumerate() {
        let count = r.value.tests().len();
        let plans =
            &plan.tests[offset.min(plan.tests.len())..(offset + count).min(plan.tests.len())];
        let per_reveal = matches!(r.shape, RevealShape::Ids | RevealShape::Count);
        let copies = if per_reveal { records } else { 1 };
        let circuit = summarize(program, plans, &r.value, records).unwrap_or_default();
        let logic = summarize_logic(program, plans, &r.value, records).unwrap_or_default();
        let mut t = RevealTotals::default();
        let mut extra_gates = 0u64;
        // AND gates the plan's own comparisons save against the circuit's MSB netlist
        // (AdditiveMSB: k - 1 instead of 2k - 3); a triple-based backend runs the netlist.
        let mut fewer_gates = 0u64;
        let mut pre_msb_rounds = 0u64;
        for (site, p) in sites.iter().filter(|s| s.reveal == ri).zip(plans) {
            let n = site
                .per_record
                .saturating_mul(records.saturating_pow(site.record_quantifiers))
                .saturating_mul(copies);
            let c = p.cost();
            t.comparisons += n;
            t.bytes_per_party += c.bytes_per_party * n as f64;
            let nl = comparison_netlist(p);
            extra_gates += c.and_gates.saturating_sub(nl.and_count()).saturating_mul(n);
            fewer_gates += nl.and_count().saturating_sub(c.and_gates).saturating_mul(n);
            pre_msb_rounds += c.rounds.saturating_sub(nl.and_depth());
        }
        let logic_gates = logic.naive.saturating_mul(copies);
        t.bytes_per_party += logic_gates as f64 / 8.0;
        let (out_rounds, opened, out_bytes) = match r.shape {
            RevealShape::Bit => (1, 1, 1.0 / 8.0),
            RevealShape::Ids => (1, records, records as f64 / 8.0),
            RevealShape::Count => {
                let w = cost::word_bytes(bits_for(records) as u32) as f64;
                // BitInject of one bit per record (party 0 sends 2 elements each), one opening.
                (3, bits_for(records), 2.0 * records as f64 * w + w)
            }
        };
        t.bytes_per_party += out_bytes;
        t.opened_bits = opened;
        t.rounds_critical_path = pre_msb_rounds + circuit.rounds + out_rounds;
        let mut seen = std::collections::HashSet::new();
        let mut idx = 0;
        let (rounds, shared) =
            schedule_rounds(program, plans, &r.value, records, &mut idx, &mut seen);
        t.rounds = rounds + out_rounds;
        // Comparisons of the same pair share their dot products (and their reshares).
        t.bytes_per_party -= shared * copies as f64;
        t.triples_longest_path = circuit.masked.saturating_mul(copies) + extra_gates;
        t.triples_naive = circuit.naive.saturating_mul(copies) + extra_gates;
        t.and_gates = t.triples_naive.saturating_sub(fewer_gates);
        out.push(t);
        offset += count;
    }
    out
}

/// The security the whole program has under `protocol`: the weakest of its parts.
pub fn threat_model(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Rep3 => {
            "semi-honest, honest majority: secure against one corrupted party of the three \
             (replicated sharing, ABY3); two colluding parties can reconstruct every shared value"
        }
        Protocol::Beaver => {
            "semi-honest, honest majority for the program as a whole: the dot products and \
             reshares run in the replicated sharing (secure against one corrupted party; two \
             colluding parties hold all three components of the compared values), the reveals' \
             boolean circuit under Masked Triples (paper 004, XOR shares and Beaver triples: \
             that part alone is secure against two colluding parties); the preprocessing is \
             made by the parties themselves (OT-based TripleGen and MaskGen), no dealer is trusted"
        }
        Protocol::Fss2 => {
            "two non-colluding servers, semi-honest, or one actively corrupted server with              `--malicious M` (CSB.Eval*: MACs over Z_2^112, M normal/trap instances, the client              withholds the output on any deviation, undetected with probability 2^-M); the              dealer is trusted for preprocessing only and is offline during queries"
        }
    }
}

fn leakage(program: &Program, records: u64, protocol: Protocol) -> Vec<Value> {
    let party = |i: usize| {
        program
            .parties
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("p{i}"))
    };
    let mut out: Vec<Value> = program
        .reveals
        .iter()
        .map(|r| {
            let earlier = r
                .records
                .and_then(|b| program.binders.get(b))
                .is_some_and(|b| matches!(b.kind, BinderKind::Records(Records::Earlier(_))));
            let (what, bits, why) = match r.shape {
                RevealShape::Bit => (
                    "one bit per query".to_string(),
                    "1".to_string(),
                    "the opened bit is the declared output itself".to_string(),
                ),
                RevealShape::Ids => (
                    "one bit per record per query".into(),
                    if earlier {
                        "i (query i has i earlier queries)".into()
                    } else {
                        records.to_string()
                    },
                    "bit i is whether record i is among the declared ids: the ids are exactly \
                     the positions of the 1 bits, so the bits are the output"
                        .into(),
                ),
                RevealShape::Count => (
                    "one integer per query".into(),
                    bits_for(records).to_string(),
                    "the opened integer is the declared count; the per-record bits are \
                     bit-injected (Algorithm 17) and summed in secret, never opened"
                        .into(),
                ),
            };
            json!({
                "open": r.label,
                "value": what,
                "to": party(r.to),
                "bits_per_query": bits,
                "why": why,
            })
        })
        .collect();
    out.push(json!({
        "open": "(none)",
        "value": "reshares, AND-gate and MSB-extraction messages",
        "to": "the next party; under AdditiveMSB also the previous one (the mirrored half of each batch)",
        "bits_per_query": "see bytes_per_party",
        "why": "every sent component is masked by fresh PRSS zero-sharing randomness: each \
                message alone is uniformly random and independent of the inputs",
    }));
    out.push(json!({
        "open": "(none)",
        "value": "BitInject / 3-party OT messages (MPCLift, LiftP, count)",
        "to": "the parties of the OT",
        "bits_per_query": "see bytes_per_party",
        "why": "the OT messages are masked by the PRSS pads c_0, c_2 (Algorithm 17): the \
                receiver learns a uniformly random component",
    }));
    if protocol == Protocol::Beaver {
        out.push(json!({
            "open": "(none)",
            "value": "Beaver openings (x^a, y^b per AND gate) and s^t per conditional",
            "to": "every party",
            "bits_per_query": "see beaver.evaluation_bytes_per_party",
            "why": "each opened value is masked by a one-time uniform triple share (a, b) or \
                    MaskGen bit t that no party knows alone (paper 004, Fig. 4 and Theorem 8): \
                    it is uniform and independent of the inputs and of which branch is taken",
        }));
        out.push(json!({
            "open": "(none)",
            "value": "oblivious-transfer messages of TripleGen and MaskGen (preprocessing)",
            "to": "each pair of parties",
            "bits_per_query": "see beaver.preprocessing_bytes_per_party",
            "why": "base OTs (Chou-Orlandi) and IKNP extension: the receiver learns only the \
                    chosen message, the sender nothing; inputs are not involved yet",
        }));
    }
    out.push(json!({
        "open": "(nothing else)",
        "value": "no other value is opened",
        "to": "-",
        "bits_per_query": "0",
        "why": "the rings, (a, b) and the schedule depend only on the program, not on the data; \
                public masks and the numbers of queries and records are public by declaration",
    }));
    out
}

/// The explanation as JSON, spans as byte offsets.
pub fn explain_program_json(program: &Program, plan: &Plan, records: u64) -> Value {
    explain_program_json_with_source(program, plan, records, None)
}

/// The explanation as JSON; with the source text, spans as `line:column`.
pub fn explain_program_json_with_source(
    program: &Program,
    plan: &Plan,
    records: u64,
    source: Option<&str>,
) -> Value {
    let sites = test_sites(program);
    let comparisons: Vec<Value> = sites
        .iter()
        .zip(&plan.tests)
        .enumerate()
        .map(|(i, (s, p))| {
            let mut v = test_json(program, s.expr, p, source);
            v["index"] = json!(i);
            v["reveal"] = json!(s.reveal);
            v["per_record"] = json!(s.per_record);
            v
        })
        .collect();
    let totals = reveal_totals(program, plan, records);
    let mut offset = 0;
    let reveals: Vec<Value> = program
        .reveals
        .iter()
        .zip(&totals)
        .map(|(r, t)| {
            let count = r.value.tests().len();
            let plans =
                &plan.tests[offset.min(plan.tests.len())..(offset + count).min(plan.tests.len())];
            offset += count;
            let mut nodes = Vec::new();
            node_list(program, &r.value, records, &mut nodes);
            let per_record: Option<Summary> = summarize(program, plans, &r.value, 1).ok();
            json!({
                "label": r.label,
                "to": program.parties.get(r.to),
                "shape": crate::analysis::plan::shape_name(r.shape),
                "span": span_json(r.span, source),
                "boolean_nodes": nodes,
                "circuit_one_record": per_record,
                "per_query": t,
            })
        })
        .collect();
    let sum = |f: fn(&RevealTotals) -> u64| totals.iter().map(f).sum::<u64>();
    json!({
        "program": program.name,
        "protocol": plan.protocol,
        "threat_model": threat_model(plan.protocol),
        "sharing": plan.sharing,
        "records": records,
        "cost_model": {
            "score": "ROUND_WEIGHT*rounds + BYTE_WEIGHT*bytes_per_party + WORK_WEIGHT*work (ns per comparison)",
            "round_weight": cost::ROUND_WEIGHT,
            "byte_weight": cost::BYTE_WEIGHT,
            "work_weight": cost::WORK_WEIGHT,
            "work": "ring multiply-adds per party, x1 for 16-bit, x2 for 32-bit, x4 for 64-bit words",
        },
        "comparisons": comparisons,
        "reveals": reveals,
        "per_query": {
            "comparisons": sum(|t| t.comparisons),
            "rounds": sum(|t| t.rounds),
            "rounds_critical_path": sum(|t| t.rounds_critical_path),
            "bytes_per_party": totals.iter().map(|t| t.bytes_per_party).sum::<f64>(),
            "and_gates": sum(|t| t.and_gates),
            "triples_longest_path": sum(|t| t.triples_longest_path),
            "triples_naive": sum(|t| t.triples_naive),
        },
        "plan_cost_per_record": plan.cost,
        "beaver": beaver_costs(program, plan, records),
        "schedule": plan.schedule.map(|tile| schedule_note(records, &tile)),
        "mask_lengths": plan.mask_lengths,
        "leakage": leakage(program, records, plan.protocol),
    })
}

/// What the reveals' boolean circuit (`irisc build --emit=circuit`) costs per query under the
/// `beaver` family, one lane per record, three parties: triples on the longest path and naive,
/// MaskGen material, bytes per party of the preprocessing and of the evaluation
/// ([`irisc_runtime::beaver::cost`], the figures the runs' accounting matches). The circuit
/// holds the MSB extractions, OR trees and multiplexers; lifts before them are not in it.
/// `None` where the circuit is too large to build.
pub fn beaver_costs(program: &Program, plan: &Plan, records: u64) -> Option<Value> {
    use irisc_runtime::beaver::cost::{evaluation_bytes, preprocessing_bytes};
    use irisc_runtime::beaver::mask_gen::MaskGenMethod;
    use irisc_runtime::beaver::schedule::Schedule;
    // The circuit the program runs under `beaver`; for other programs, the analysis' circuit
    // of the reveals (what `--protocol beaver` would run for `ids` reveals).
    let c = match &plan.beaver {
        Some(b) => b.circuit.clone(),
        None => super::circuit::lower::program_circuit(program, plan).ok()?,
    };
    let parties = 3;
    let lanes = records.max(1) as usize;
    let method = MaskGenMethod::cheapest(parties);
    let masked = Schedule::new(&c);
    let pre = preprocessing_bytes(&masked, lanes, parties, method, 1);
    let naive = Schedule::naive(&c);
    Some(json!({
        "parties": parties,
        "threat_model": "semi-honest, the circuit alone secure against 2 of the 3 parties colluding (paper 004); the program's threat model is the top-level threat_model",
        "runs_under_beaver": plan.protocol == Protocol::Beaver,
        "circuit": "the reveals' MSB extractions, OR trees and multiplexers for one record (irisc build --emit=circuit); one lane per record",
        "lanes": lanes,
        "conditionals_per_lane": c.conditionals(),
        "triples_longest_path": masked.triples * lanes as u64,
        "triples_naive": naive.triples * lanes as u64,
        "maskgen": method.name(),
        "mask_bits": masked.mask_rows() * 2 * lanes as u64,
        "rounds": masked.opening_rounds(),
        "preprocessing_bytes_per_party": pre.total(),
        "preprocessing_bytes_per_party_naive": preprocessing_bytes(&naive, lanes, parties, method, 1).total(),
        "evaluation_bytes_per_party": evaluation_bytes(&masked, lanes, parties),
    }))
}

/// How the tiled schedule scans `records` with the options `mpc-tile` records on `@query`
/// (`tile`, read from the module by [`TileOptions::of`]): the rounds above are one chunk's; the
/// comparison rounds repeat per chunk.
pub fn schedule_note(records: u64, tile: &TileOptions) -> Value {
    let chunk = tile.record_chunk;
    let chunks = if chunk == 0 {
        1
    } else {
        records.div_ceil(chunk).max(1)
    };
    let batch = if tile.batched_chunks {
        "the comparison ops of a chunk run once for the whole batch of queries, so a batch costs \
         one query's rounds"
    } else {
        "the comparison ops of a chunk run once per query of the batch"
    };
    json!({
        "query_batch": tile.query_batch,
        "record_chunk": chunk,
        "chunks": chunks,
        "batched_chunks": tile.batched_chunks,
        "note": format!("the rounds above are for one chunk of records: with several chunks the \
                 comparison rounds repeat per chunk (and ORs or sums over all records add the \
                 rounds of combining the chunks' results); {batch}; the parties' default \
                 (record_chunk 0) scans the whole gallery as one chunk"),
    })
}

/// Where the gallery size of the totals came from, for the sentence that says so.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordsSource {
    /// `--records N`.
    Flag,
    /// The record count of this gallery store or share file.
    Store(std::path::PathBuf),
    /// Nothing said it: the default size, stated as assumed.
    Assumed,
}

/// The records the totals assume when no gallery store, share file or `--records` says.
pub const ASSUMED_RECORDS: u64 = 1;

/// The explanation as text, for `records` records asked for (positions as byte offsets).
pub fn explain_program_text(program: &Program, plan: &Plan, records: u64) -> String {
    text::render(program, plan, records, &RecordsSource::Flag, None)
}

/// The explanation as text for people; with the source text, positions as `line:column` and
/// each comparison quoted as written. `origin` says where `records` came from.
pub fn explain_program_text_with_source(
    program: &Program,
    plan: &Plan,
    records: u64,
    origin: &RecordsSource,
    source: Option<&str>,
) -> String {
    text::render(program, plan, records, origin, source)
}

/// One line for `irisc build`: the program, each comparison's variant and sharing, the rounds
/// per query and what was written.
pub fn build_summary(program: &Program, plan: &Plan, outputs: &str) -> String {
    let rounds_at = |records| {
        reveal_totals(program, plan, records)
            .iter()
            .map(|t| t.rounds)
            .sum::<u64>()
    };
    // An OR, AND or count over the records adds a tree whose depth grows with the gallery.
    let rounds = match (rounds_at(1), rounds_at(1 << 20)) {
        (one, many) if one == many => format!("{one} rounds per query"),
        (one, _) => format!("{one} rounds per query for one record, plus log2 of the records"),
    };
    let mut choices: Vec<String> = Vec::new();
    for p in &plan.tests {
        let c = match p {
            TestPlan::Fhd(f) => format!("{} over {}", f.variant, f.sharing),
            TestPlan::Cosine(c) => format!("cosine over rep3 Z_2^{}", c.ring),
        };
        if !choices.contains(&c) {
            choices.push(c);
        }
    }
    let n = plan.tests.len();
    format!(
        "{}: {n} comparison{} ({}), {rounds}; {outputs} (irisc explain says why)",
        program.name,
        if n == 1 { "" } else { "s" },
        choices.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::plan::tests::{deployed_plan, program};
    use crate::analysis::plan::PlanOptions;
    use crate::sema::program::*;
    use irisc_runtime::vocab::Sharing;

    fn deployed(mask: MaskKind) -> Program {
        let body = BoolExpr::Fhd(FhdTest {
            query: Operand::Rotated(1),
            record: Operand::Record {
                binder: 0,
                field: 0,
            },
            ratio: Ratio { num: 69, den: 200 },
            mask,
            code_bits: 12800,
            span: Span::new(4, 9),
        });
        let any = BoolExpr::Quant {
            op: Quantifier::Any,
            binders: vec![1],
            body: Box::new(body),
        };
        program(12800, mask, vec![(RevealShape::Ids, any)])
    }

    /// The threat model and the ledger say what the protocol family makes true: under `beaver`
    /// the Beaver openings and the OT messages are in the ledger, and the program as a whole
    /// stays honest-majority (its dot products are replicated).
    #[test]
    fn the_ledger_follows_the_protocol_family() {
        let prog = deployed(MaskKind::Public);
        let o = PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        };
        let mut p = deployed_plan(MaskKind::Public, &o);
        let beaver_entries = |j: &Value| {
            j["leakage"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|l| {
                    let v = l["value"].as_str().unwrap();
                    v.contains("Beaver openings") || v.contains("oblivious-transfer")
                })
                .count()
        };
        let j = explain_program_json(&prog, &p, 10);
        assert_eq!(j["protocol"], "rep3");
        assert_eq!(beaver_entries(&j), 0);
        assert_eq!(j["beaver"]["runs_under_beaver"], false);
        assert!(j["threat_model"]
            .as_str()
            .unwrap()
            .contains("one corrupted party"));
        p.protocol = Protocol::Beaver;
        let j = explain_program_json(&prog, &p, 10);
        assert_eq!(j["protocol"], "beaver");
        assert_eq!(beaver_entries(&j), 2);
        assert_eq!(j["beaver"]["runs_under_beaver"], true);
        let t = j["threat_model"].as_str().unwrap();
        assert!(
            t.contains("honest majority") && t.contains("two colluding"),
            "{t}"
        );
        // The text says it too.
        let text = super::text::render(&prog, &p, 10, &RecordsSource::Flag, None);
        assert!(
            text.contains("Protocol beaver: semi-honest, honest majority"),
            "{text}"
        );
        assert!(
            text.contains("This program runs it (--protocol beaver)"),
            "{text}"
        );
    }

    #[test]
    fn public_mask_ids_totals_and_ledger() {
        let prog = deployed(MaskKind::Public);
        let o = PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        };
        let p = deployed_plan(MaskKind::Public, &o);
        let j = explain_program_json_with_source(&prog, &p, 1000, Some("a\n  fhd(c, d)"));
        let c = &j["comparisons"][0];
        assert_eq!(c["kind"], "fhd");
        assert_eq!(c["span"]["text"], "2:3");
        assert_eq!(c["variant"], "plain-mask");
        assert_eq!(c["compare_ring"], 16);
        assert_eq!(c["ranges"]["compared"], json!(["-8832", "16768"]));
        assert_eq!(c["operands"][1], "d (record of db)");
        let q = &j["per_query"];
        assert_eq!(q["comparisons"], 31_000);
        assert_eq!(c["msb_input"], "additive");
        // Per record: 31 MSBs of 29 ANDs and an OR tree of 30 for a triple-based backend
        // (BitExtract's netlist); no conditionals.
        assert_eq!(q["triples_longest_path"], 1000 * (31 * 29 + 30));
        assert_eq!(q["triples_naive"], q["triples_longest_path"]);
        // This plan runs AdditiveMSB: 15 ANDs per comparison.
        assert_eq!(q["and_gates"], 1000 * (31 * 15 + 30));
        // AdditiveMSB's two input rounds and 15 AND rounds, OR tree 5, open 1.
        assert_eq!(q["rounds"], 2 + 15 + 5 + 1);
        let ledger = j["leakage"].as_array().unwrap();
        assert_eq!(ledger[0]["to"], "p0");
        assert_eq!(ledger[0]["bits_per_query"], "1000");
        assert!(ledger
            .iter()
            .any(|l| l["why"].as_str().unwrap().contains("PRSS")));
        let nodes = j["reveals"][0]["boolean_nodes"].as_array().unwrap();
        assert_eq!(
            (nodes[0]["op"].as_str(), nodes[0]["and_gates"].as_u64()),
            (Some("any"), Some(30))
        );
        let text = explain_program_text(&prog, &p, 1000);
        assert!(
            text.contains("What each party learns") && text.contains("plain-mask"),
            "{text}"
        );
    }

    #[test]
    fn mpc_lift_gates_count_on_every_path() {
        let prog = deployed(MaskKind::Secret);
        let o = PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        };
        let p = deployed_plan(MaskKind::Secret, &o);
        let j = explain_program_json(&prog, &p, 10);
        // MSB in Z_2^32: 61 ANDs; MPCLift 16 -> 32: 33 ANDs outside the boolean circuit.
        assert_eq!(
            j["per_query"]["triples_longest_path"],
            10 * (31 * (61 + 33) + 30)
        );
        assert_eq!(j["comparisons"][0]["lift_bits"], 16);
        assert_eq!(j["comparisons"][0]["span"]["start"], 4);
    }
}
