//! `irisc explain`: per comparison, the ranges and ring that Lemma 1's argument proves, the cost
//! model, and the leakage ledger (every value opened, to whom, and why nothing more leaks).

use serde_json::{json, Value};

use super::cost::RevealCost;
use super::ring::{ranges, select_ring, RingChoice};
use crate::sema::{InputRole, Program, Ratio, Reveal, RevealShape};

/// Gallery sizes at which the cost formulas are evaluated for the reader.
pub const EXAMPLE_GALLERY_SIZES: [u64; 2] = [1_000, 1_000_000];

/// The ring chosen for each reveal's comparison, in program order.
pub fn ring_choices(program: &Program) -> Vec<RingChoice> {
    program
        .reveals
        .iter()
        .map(|r| {
            let bits = program.inputs[r.decision.gallery].code_bits;
            select_ring(bits, r.decision.ratio)
        })
        .collect()
}

fn ratio_json(r: Ratio) -> Value {
    json!({ "num": r.num, "den": r.den, "value": r.num as f64 / r.den.max(1) as f64 })
}

/// `f = 1 - 2r` as a signed fraction.
fn f_json(r: Ratio) -> Value {
    let num = r.den as i128 - 2 * r.num as i128;
    json!({ "num": num, "den": r.den, "value": num as f64 / r.den.max(1) as f64 })
}

fn party(program: &Program, i: usize) -> &str {
    program.parties.get(i).map_or("?", String::as_str)
}

fn comparison_json(program: &Program, index: usize, reveal: &Reveal, ring: &RingChoice) -> Value {
    let d = &reveal.decision;
    let l = program.inputs[d.gallery].code_bits;
    let rg = ranges(l, d.ratio);
    let pair = |i: super::range::Interval| json!([i.lo, i.hi]);
    json!({
        "reveal": index,
        "query": program.inputs[d.query].name,
        "gallery": program.inputs[d.gallery].name,
        "code_bits": l,
        "rotations": { "lo": d.rot_lo, "hi": d.rot_hi, "count": d.rot_hi - d.rot_lo + 1 },
        "ratio": ratio_json(d.ratio),
        "f": f_json(d.ratio),
        "test": "match iff MSB(T - dot) = 1, T = floor(f * ml), dot = <c', d'>",
        "ranges": {
            "ml": pair(rg.ml),
            "dot": pair(rg.dot),
            "T": pair(rg.threshold),
            "compared": pair(rg.compared),
        },
        "ring_bits": ring.ring_bits,
        "justification": ring.justification,
        "lemma1_holds": ring.lemma1_holds,
        "lemma1_ring_bits": ring.lemma1_ring_bits,
        "lemma1_at_chosen_ring": ring.lemma1_at_chosen_ring,
        "variant": "public-mask",
        "sharing": "rep3",
    })
}

fn cost_json(index: usize, cost: &RevealCost) -> Value {
    let at: Vec<Value> = EXAMPLE_GALLERY_SIZES
        .iter()
        .map(|&n| {
            json!({
                "n": n,
                "comparisons": cost.comparisons(n),
                "rounds": cost.rounds(n),
                "and_gates": cost.and_gates(n),
                "triples": cost.triples(n),
                "bits_sent_per_party": cost.bits_sent_per_party(n),
                "bytes_per_party_per_comparison": cost.bytes_per_comparison(n),
            })
        })
        .collect();
    json!({
        "reveal": index,
        "ring_bits": cost.ring_bits,
        "rotations": cost.rotations,
        "word_bytes": cost.word_bytes(),
        "msb_and_gates_per_comparison": cost.msb_and_gates(),
        "formulas": cost.formulas(),
        "at": at,
    })
}

/// The leakage ledger: one entry per kind of value any party sees.
fn ledger(program: &Program) -> Vec<Value> {
    let all = program.parties.join(", ");
    let mut out = Vec::new();
    for input in &program.inputs {
        let what = match input.role {
            InputRole::Gallery => "secret-shared among the three parties".to_string(),
            InputRole::Query { owner } => {
                format!(
                    "supplied by {}, secret-shared to the others",
                    party(program, owner)
                )
            }
        };
        out.push(json!({
            "value": format!("masks of `{}`", input.name),
            "to": all,
            "why": format!("masks are public in this program; the codes are {what}"),
        }));
    }
    out.push(json!({
        "value": "ml per (query rotation, record)",
        "to": all,
        "why": "masks are public in this program so every party learns ml per pair (and the threshold T)",
    }));
    out.push(json!({
        "value": "reshare messages of the dot products",
        "to": all,
        "why": "reshare messages are masked with fresh PRSS zero shares: each is uniformly random alone",
    }));
    out.push(json!({
        "value": "AND-gate messages of MSB extraction and the OR tree",
        "to": all,
        "why": "binary shares are re-randomised with PRSS zero shares; no intermediate bit is opened",
    }));
    for (i, r) in program.reveals.iter().enumerate() {
        let to = party(program, r.to);
        let what = match r.shape {
            RevealShape::AnyBit => format!(
                "{to} learns one bit per query: whether any record of `{}` matches any rotation",
                program.inputs[r.decision.gallery].name
            ),
            RevealShape::MatchingIds => format!(
                "{to} learns one bit per (query, record): exactly the revealed ids, not which rotation matched"
            ),
        };
        out.push(json!({
            "value": format!("reveal {i}"),
            "to": to,
            "why": format!("{what}; only {to} receives the missing share, the other parties learn nothing"),
        }));
    }
    out.push(json!({
        "value": "sizes: gallery size, batch size, code length, rotations",
        "to": all,
        "why": "public parameters of the program and of the data sets",
    }));
    out
}

/// Everything `irisc explain --json` prints.
pub fn explain_json(program: &Program) -> Value {
    let rings = ring_choices(program);
    let comparisons: Vec<Value> = program
        .reveals
        .iter()
        .zip(&rings)
        .enumerate()
        .map(|(i, (r, ring))| comparison_json(program, i, r, ring))
        .collect();
    let costs: Vec<Value> = program
        .reveals
        .iter()
        .zip(&rings)
        .enumerate()
        .map(|(i, (r, ring))| cost_json(i, &RevealCost::new(r, ring)))
        .collect();
    json!({
        "program": program.name,
        "parties": program.parties,
        "protocol": "rep3",
        "comparisons": comparisons,
        "costs": costs,
        "leakage": ledger(program),
    })
}

/// The same facts for a human reader.
pub fn explain_text(program: &Program) -> String {
    use std::fmt::Write;
    let rings = ring_choices(program);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "program {} (parties {}; rep3, public masks)",
        program.name,
        program.parties.join(", ")
    );
    for (i, (r, ring)) in program.reveals.iter().zip(&rings).enumerate() {
        let d = &r.decision;
        let l = program.inputs[d.gallery].code_bits;
        let rg = ranges(l, d.ratio);
        let cost = RevealCost::new(r, ring);
        let shape = match r.shape {
            RevealShape::AnyBit => "one bit per query",
            RevealShape::MatchingIds => "matching ids",
        };
        let _ = writeln!(
            s,
            "\nreveal {i}: {shape} to {}; fhd({}, {}) < {}/{} over rotations {}..={}",
            party(program, r.to),
            program.inputs[d.query].name,
            program.inputs[d.gallery].name,
            d.ratio.num,
            d.ratio.den,
            d.rot_lo,
            d.rot_hi
        );
        let _ = writeln!(
            s,
            "  ranges: ml {}, dot {}, T {}, T - dot {}",
            rg.ml, rg.dot, rg.threshold, rg.compared
        );
        let _ = writeln!(s, "  ring: Z_2^{} ({})", ring.ring_bits, ring.justification);
        let _ = writeln!(
            s,
            "  Lemma 1: {} (its ring: Z_2^{})",
            if ring.lemma1_holds {
                "applies"
            } else {
                "does not apply (ratio > 0.5)"
            },
            ring.lemma1_ring_bits
        );
        for n in EXAMPLE_GALLERY_SIZES {
            let _ = writeln!(
                s,
                "  cost at n = {n}: {} rounds, {} AND gates, {} triples for a triple-based backend, \
                 {:.3} bytes per party per comparison",
                cost.rounds(n),
                cost.and_gates(n),
                cost.triples(n),
                cost.bytes_per_comparison(n)
            );
        }
    }
    let _ = writeln!(s, "\nleakage:");
    for e in ledger(program) {
        let _ = writeln!(
            s,
            "  {} -> {}: {}",
            e["value"].as_str().unwrap_or(""),
            e["to"].as_str().unwrap_or(""),
            e["why"].as_str().unwrap_or("")
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sema::frontend;

    fn example(file: &str) -> Program {
        let path = format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).unwrap();
        frontend(&path, &src).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn json_for_the_deployed_program() {
        let v = explain_json(&example("iris_unique.irs"));
        let c = &v["comparisons"][0];
        assert_eq!(c["code_bits"], 12800);
        assert_eq!(c["ring_bits"], 16);
        assert_eq!(c["ranges"]["compared"], json!([-8832, 16768]));
        assert_eq!(c["ranges"]["T"], json!([0, 3968]));
        assert_eq!(c["f"]["num"], 62);
        assert_eq!(c["lemma1_holds"], true);
        assert_eq!(c["variant"], "public-mask");
        assert_eq!(v["costs"][0]["at"][1]["rounds"], 42);
        let ledger = v["leakage"].to_string();
        assert!(ledger.contains("p0 learns one bit per query"), "{ledger}");
        assert!(ledger.contains("fresh PRSS zero shares"));
    }

    #[test]
    fn ids_ledger_and_text() {
        let p = example("iris_ids.irs");
        let v = explain_json(&p);
        assert!(v["leakage"]
            .to_string()
            .contains("exactly the revealed ids"));
        let t = explain_text(&p);
        assert!(t.contains("ring: Z_2^16 (T - dot in [-8832, 16768]"), "{t}");
        assert!(t.contains("matching ids to p0"), "{t}");
    }
}
