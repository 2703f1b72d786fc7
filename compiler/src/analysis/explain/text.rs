//! `irisc explain` as text for people: prose and aligned tables, read from the same document as
//! `--json` (so the two never disagree), with no JSON syntax, no `null` (a choice that does not
//! apply says "not used" or is left out), names unquoted and each total printed once.

use std::fmt::Write;

use serde_json::Value;

use crate::sema::program::Program;

use super::{explain_program_json_with_source, RecordsSource};
use crate::analysis::plan::{test_sites, Plan};

/// The explanation as text. `records` is the gallery size the totals are for and `origin`
/// says where it came from; `source` (the program text) gives `line:column` positions and
/// quotes each comparison as written.
pub fn render(
    program: &Program,
    plan: &Plan,
    records: u64,
    origin: &RecordsSource,
    source: Option<&str>,
) -> String {
    let j = explain_program_json_with_source(program, plan, records, source);
    let mut s = String::new();
    let comparisons = j["comparisons"].as_array().map_or(0, Vec::len);
    let outputs = j["reveals"].as_array().map_or(0, Vec::len);
    let head = format!(
        "{}: {} comparison{}, {} output{}; dot products shared as {}",
        program.name,
        comparisons,
        plural(comparisons as u64),
        outputs,
        plural(outputs as u64),
        sharing_words(text(&j["sharing"]).as_str()),
    );
    paragraph(&mut s, 0, &head);
    paragraph(&mut s, 0, &records_line(records, origin));
    paragraph(
        &mut s,
        0,
        &format!(
            "Protocol {}: {}.",
            text(&j["protocol"]),
            text(&j["threat_model"])
        ),
    );

    let sites = test_sites(program);
    for (c, site) in j["comparisons"]
        .as_array()
        .into_iter()
        .flatten()
        .zip(&sites)
    {
        s.push('\n');
        comparison(&mut s, c, program, site.expr, source);
    }
    for r in j["reveals"].as_array().into_iter().flatten() {
        s.push('\n');
        let _ = writeln!(
            s,
            "Output {} ({}) to {}{}",
            text(&r["label"]),
            shape_words(text(&r["shape"]).as_str()),
            text(&r["to"]),
            at(&r["span"])
        );
        let mut rows = vec![row(&["step", "AND gates", "rounds", "what it does"])];
        for n in r["boolean_nodes"].as_array().into_iter().flatten() {
            rows.push(vec![
                text(&n["op"]),
                group(n["and_gates"].as_u64().unwrap_or(0)),
                group(n["rounds"].as_u64().unwrap_or(0)),
                text(&n["note"]),
            ]);
        }
        if rows.len() > 1 {
            let _ = writeln!(
                s,
                "  boolean steps over the comparisons (per record, per query):"
            );
            table(&mut s, &rows, 4, 1..3);
        } else {
            let _ = writeln!(s, "  no boolean steps: the comparison is the output");
        }
    }

    s.push('\n');
    totals(&mut s, &j, records);

    s.push('\n');
    let cost_model = format!(
        "Cost model (what chose the sharing, variants and MSB inputs): score = {} ns x rounds + {} ns x \
         bytes sent + {} ns x multiply-adds, per comparison (a multiply-add of 32-bit words \
         counts 2, of 64-bit words 4); this plan scores {:.1} ns per record.",
        j["cost_model"]["round_weight"],
        j["cost_model"]["byte_weight"],
        j["cost_model"]["work_weight"],
        j["plan_cost_per_record"]["score_per_record"]
            .as_f64()
            .unwrap_or(0.0),
    );
    paragraph(&mut s, 0, &cost_model);
    schedule(&mut s, &j["schedule"]);
    mask_lengths(&mut s, &j["mask_lengths"]);
    beaver(&mut s, &j["beaver"]);

    s.push('\n');
    let _ = writeln!(s, "What each party learns:");
    for l in j["leakage"].as_array().into_iter().flatten() {
        let open = text(&l["open"]);
        let bits = text(&l["bits_per_query"]);
        let bits = match bits.parse::<u64>() {
            Ok(1) => "1 bit per query".to_string(),
            Ok(n) => format!("{} bits per query", group(n)),
            // An output over the batch's earlier queries: query i opens i bits.
            Err(_) if bits.starts_with("i ") => "i bits for query i of the batch".to_string(),
            Err(_) => bits,
        };
        let to = text(&l["to"]);
        let what = text(&l["value"]);
        let why = text(&l["why"]);
        let line = if open == "(nothing else)" {
            format!("nothing else is opened: {why}")
        } else if open == "(none)" {
            format!("{what}, to {to}, opened to no one: {why}")
        } else {
            format!("{open}, to {to}: {what} ({bits}); {why}")
        };
        paragraph(&mut s, 2, &format!("- {line}"));
    }
    s
}

/// The sentence that says which gallery size the totals are for, and why.
pub fn records_line(records: u64, origin: &RecordsSource) -> String {
    let n = format!("{} record{}", group(records), plural(records));
    match origin {
        RecordsSource::Flag => format!("Totals are for {n} per gallery (--records)."),
        RecordsSource::Store(path) => format!(
            "Totals are for {n} per gallery (the size of {}).",
            path.display()
        ),
        RecordsSource::Assumed => format!(
            "Totals are for {n} per gallery, an assumed size: no gallery store or share file \
             was given (--db FILE or --input NAME=FILE takes the size from it, --records N sets it)."
        ),
    }
}

fn comparison(
    s: &mut String,
    c: &Value,
    program: &Program,
    expr: &crate::sema::program::BoolExpr,
    source: Option<&str>,
) {
    let written = source
        .and_then(|src| {
            let span = expr_span(expr)?;
            src.get(span.start..span.end)
        })
        .map(|w| format!(": {}", w.split_whitespace().collect::<Vec<_>>().join(" ")))
        .unwrap_or_default();
    let reveal = c["reveal"].as_u64().unwrap_or(0) as usize;
    let output = program
        .reveals
        .get(reveal)
        .map_or_else(String::new, |r| format!(" (output {})", r.label));
    let _ = writeln!(
        s,
        "Comparison {}{}{written}{output}",
        c["index"],
        at(&c["span"])
    );
    let ops = c["operands"].as_array();
    let operand = |i: usize| ops.and_then(|o| o.get(i)).map(text).unwrap_or_default();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut add = |k: &str, v: String| rows.push(vec![k.to_string(), v]);
    if c["kind"] == "fhd" {
        let masks = text(&c["mask"]);
        add(
            "compares",
            format!(
                "{} with {}: {}-bit iris codes, {masks} masks, ratio {}/{}",
                operand(0),
                operand(1),
                group(c["code_bits"].as_u64().unwrap_or(0)),
                c["ratio"]["num"],
                c["ratio"]["den"]
            ),
        );
        add(
            "variant",
            format!(
                "{}, dot products shared as {}",
                text(&c["variant"]),
                sharing_words(text(&c["sharing"]).as_str())
            ),
        );
        add("test", text(&c["test"]));
        let k = c["compare_ring"].as_u64().unwrap_or(0);
        match c["msb_input"].as_str() {
            Some("additive") => add(
                "msb",
                format!(
                    "AdditiveMSB of the additive T - dot: party 0 masks its share to party 1, parties 1 \
                     and 2 input their sums as bits, one adder ({} AND gates, {} rounds; no reshare); \
                     the second half of each batch runs mirrored, its messages to the previous party",
                    k.saturating_sub(1),
                    k + 1
                ),
            ),
            // The choice exists for plain-mask tests in Z_2^k; elsewhere the variant says it.
            Some("replicated")
                if text(&c["variant"]) == "plain-mask" && text(&c["sharing"]) != "fp" =>
            {
                add(
                    "msb",
                    format!(
                        "reshare, then BitExtract (Algorithm 10) on replicated shares ({} AND \
                         gates, {} rounds)",
                        (2 * k).saturating_sub(3),
                        k
                    ),
                )
            }
            _ => {}
        }
        let ml = match c["ml_ring"].as_u64() {
            Some(k) => format!(", mask dot product Z_2^{k}"),
            None => String::new(),
        };
        add(
            "rings",
            format!(
                "code dot product Z_2^{}{ml}, comparison Z_2^{}",
                c["dot_ring"], c["compare_ring"]
            ),
        );
        if c["ml_ring"].is_u64() {
            add(
                "threshold",
                format!("a/b = {}/{} (approximates 1 - 2r)", c["a"], c["b"]),
            );
        }
        add(
            "lift",
            match c["lift_bits"].as_u64() {
                Some(k) => format!("{k} bits"),
                None => "not used".into(),
            },
        );
        let r = &c["ranges"];
        add(
            "ranges",
            format!(
                "ml {}, dot {}, compared value {}",
                interval(&r["ml"]),
                interval(&r["dot"]),
                interval(&r["compared"])
            ),
        );
    } else {
        add(
            "compares",
            format!(
                "{} with {}: {}-dimensional embeddings at scale 2^{}",
                operand(0),
                operand(1),
                c["dim"],
                c["scale_bits"]
            ),
        );
        let tau = &c["tau"];
        add(
            "threshold",
            format!(
                "cosine {} {}{}/{}",
                if c["strict"] == true { ">" } else { ">=" },
                if tau["negative"] == true { "-" } else { "" },
                tau["num"],
                tau["den"]
            ),
        );
        add(
            "ring",
            format!("replicated Z_2^{} (rep3)", c["ring"].as_u64().unwrap_or(0)),
        );
        if let Some(m) = c["ranges"].as_object() {
            let list: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k} {}", interval(v)))
                .collect();
            add("ranges", list.join(", "));
        }
    }
    add("why", text(&c["justification"]));
    let cost = &c["cost"];
    add(
        "cost",
        format!(
            "{} rounds, {} sent per party, {} AND gates, {} multiply-adds (score {:.1} ns)",
            group(cost["rounds"].as_u64().unwrap_or(0)),
            bytes(cost["bytes_per_party"].as_f64().unwrap_or(0.0)),
            group(cost["and_gates"].as_u64().unwrap_or(0)),
            group(cost["work"].as_u64().unwrap_or(0)),
            cost["score"].as_f64().unwrap_or(0.0)
        ),
    );
    table(s, &rows, 2, 0..0);
}

/// The per-query totals: one column per output, and a total column only when there are
/// several outputs (so that each total is printed once).
fn totals(s: &mut String, j: &Value, records: u64) {
    let reveals: Vec<&Value> = j["reveals"].as_array().into_iter().flatten().collect();
    let _ = writeln!(
        s,
        "Per query, with {} record{} per gallery:",
        group(records),
        plural(records)
    );
    let mut header = vec![String::new()];
    header.extend(
        reveals
            .iter()
            .map(|r| format!("{} to {}", text(&r["label"]), text(&r["to"]))),
    );
    let several = reveals.len() > 1;
    if several {
        header.push("program".into());
    }
    let measures: [(&str, &str); 8] = [
        ("comparisons", "comparisons"),
        ("rounds, as scheduled", "rounds"),
        ("rounds, critical path", "rounds_critical_path"),
        ("bytes sent per party", "bytes_per_party"),
        ("AND gates", "and_gates"),
        ("Beaver triples, longest path", "triples_longest_path"),
        ("Beaver triples, naive", "triples_naive"),
        ("bits opened", "opened_bits"),
    ];
    let mut rows = vec![header];
    for (label, key) in measures {
        let cell = |v: &Value| {
            if key == "bytes_per_party" {
                bytes(v.as_f64().unwrap_or(0.0))
            } else {
                group(v.as_u64().unwrap_or(0))
            }
        };
        let mut row = vec![label.to_string()];
        row.extend(reveals.iter().map(|r| cell(&r["per_query"][key])));
        if several {
            let total = &j["per_query"][key];
            // The document has no program total of the opened bits: their sum over the outputs.
            row.push(if total.is_null() {
                group(
                    reveals
                        .iter()
                        .filter_map(|r| r["per_query"][key].as_u64())
                        .sum(),
                )
            } else {
                cell(total)
            });
        }
        rows.push(row);
    }
    let cols = rows[0].len();
    table(s, &rows, 2, 1..cols);
    paragraph(
        s,
        2,
        "Rounds as scheduled: the generated schedule runs its ops one after another; critical \
         path: what merging independent rounds could reach. Beaver triples: what a \
         triple-based backend would need, on the longest execution path of each secret `if` \
         and naively over both branches.",
    );
}

/// The dishonest-majority alternative for the boolean part (`beaver`, paper 004).
fn beaver(s: &mut String, b: &Value) {
    let Some(lanes) = b["lanes"].as_u64() else {
        return;
    };
    let n = |k: &str| group(b[k].as_u64().unwrap_or(0));
    let runs = if b["runs_under_beaver"].as_bool() == Some(true) {
        "This program runs it (--protocol beaver): each party needs a preprocessing store"
    } else {
        "With --protocol beaver this program would run it"
    };
    let line =
        format!(
        "{runs}. Masked triples (irisc build --emit=circuit; irisc circuit): the boolean circuit of the \
         reveals (MSB extractions, OR trees, multiplexers; not the lifts) on {} lanes, one per \
         record, under the beaver family ({}): {} triples preprocessed on the longest path \
         against {} naive, {} mask bits by MaskGen {}, {} rounds; per party {} preprocessing \
         ({} naive) and {} evaluation.",
        group(lanes),
        text(&b["threat_model"]),
        n("triples_longest_path"),
        n("triples_naive"),
        n("mask_bits"),
        text(&b["maskgen"]),
        n("rounds"),
        bytes(b["preprocessing_bytes_per_party"].as_f64().unwrap_or(0.0)),
        bytes(b["preprocessing_bytes_per_party_naive"].as_f64().unwrap_or(0.0)),
        bytes(b["evaluation_bytes_per_party"].as_f64().unwrap_or(0.0)),
    );
    paragraph(s, 0, &line);
}

/// Which parties compute the public mask lengths (`threshold-placement`).
fn mask_lengths(s: &mut String, m: &Value) {
    let n = |k: &str| m[k].as_u64().unwrap_or(0);
    let (ops, additive, replicated) = (n("ops"), n("thirds_additive"), n("thirds_replicated"));
    if ops == 0 {
        return;
    }
    let line = if additive + replicated == 0 {
        "Mask lengths: every party computes every public mask length (component 0 adds each \
         threshold)."
            .to_string()
    } else {
        let which = match (additive, replicated) {
            (_, 0) => "one third of them (additive shares: component c is party c's)".to_string(),
            (0, _) => "two thirds of them (replicated shares: component c is held by parties c \
                       and c + 1)"
                .to_string(),
            _ => "one third of them under additive shares, two under replicated ones".to_string(),
        };
        let rest = ops - additive - replicated;
        let rest = if rest == 0 {
            String::new()
        } else {
            format!(" The other {rest} (read by more than a threshold) every party computes.")
        };
        format!(
            "Mask lengths: {} of {ops} computed by record thirds: component c adds the public \
             threshold on the c-th third of each call's records, so each party computes the \
             popcounts of {which}; a record whose public mask is empty (deleted) compares the \
             public 0 at every party.{rest}",
            additive + replicated
        )
    };
    paragraph(s, 0, &line);
}

fn schedule(s: &mut String, sched: &Value) {
    let Some(batch) = sched["query_batch"].as_u64() else {
        return;
    };
    let chunk = sched["record_chunk"].as_u64().unwrap_or(0);
    let chunks = sched["chunks"].as_u64().unwrap_or(1);
    let scan = if chunk == 0 {
        "scans each gallery as one chunk".to_string()
    } else {
        format!(
            "scans each gallery in chunks of {} records ({} chunk{}; the comparison rounds \
             above repeat per chunk)",
            group(chunk),
            group(chunks),
            plural(chunks)
        )
    };
    let compare = if sched["batched_chunks"].as_bool().unwrap_or(false) {
        "their comparisons run as one vector, so a batch costs one query's rounds"
    } else {
        "their comparisons run once per query"
    };
    paragraph(
        s,
        0,
        &format!(
            "Schedule: queries in batches of {batch} (their dot products are one kernel call; \
             {compare}); the schedule {scan}; the parties' --record-chunk N overrides the chunk \
             size."
        ),
    );
}

/// `line:column` of a span, as " at 16:17", or nothing without the source.
fn at(span: &Value) -> String {
    span["text"]
        .as_str()
        .map_or_else(String::new, |t| format!(" at {t}"))
}

fn expr_span(e: &crate::sema::program::BoolExpr) -> Option<crate::syntax::Span> {
    use crate::sema::program::BoolExpr;
    match e {
        BoolExpr::Fhd(t) => Some(t.span),
        BoolExpr::Cosine(t) => Some(t.span),
        _ => None,
    }
}

/// A JSON string without quotes; a number as written; anything absent as empty.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn interval(v: &Value) -> String {
    let end = |i: usize| {
        v.get(i)
            .map(text)
            .map(|t| t.parse::<i128>().map_or(t.clone(), group_signed))
            .unwrap_or_default()
    };
    format!("[{}, {}]", end(0), end(1))
}

fn sharing_words(s: &str) -> String {
    let long = match s {
        "rep3" => "replicated Z_2^k",
        "fp" => "Shamir over F_p, p = 65519",
        "gr2" => "Shamir over the Galois ring GR(2^16, 2)",
        "gr4" => "Shamir over the Galois ring GR(2^16, 4)",
        _ => return s.to_string(),
    };
    format!("{long} ({s})")
}

fn shape_words(s: &str) -> &str {
    match s {
        "bit" => "one bit per query",
        "ids" => "the matching ids",
        "count" => "a count",
        other => other,
    }
}

fn plural(n: u64) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `1234567` as `1 234 567`.
pub fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

fn group_signed(n: i128) -> String {
    let abs = group(n.unsigned_abs().min(u128::from(u64::MAX)) as u64);
    if n < 0 {
        format!("-{abs}")
    } else {
        abs
    }
}

/// Bytes with a unit: `5.75 B`, `17.8 MB`.
fn bytes(b: f64) -> String {
    const UNITS: [(&str, f64); 3] = [("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    for (unit, size) in UNITS {
        if b >= size {
            return format!("{:.1} {unit}", b / size);
        }
    }
    if b.fract() == 0.0 {
        format!("{b:.0} B")
    } else {
        format!("{b:.2} B")
    }
}

/// Writes `text` wrapped at 100 columns, indented by `indent` (continuation lines by two more).
fn paragraph(s: &mut String, indent: usize, text: &str) {
    const WIDTH: usize = 100;
    let mut line = " ".repeat(indent);
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            let _ = writeln!(s, "{line}");
            line = " ".repeat(indent + 2);
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    let _ = writeln!(s, "{line}");
}

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|c| c.to_string()).collect()
}

/// Writes `rows` as an aligned table indented by `indent`; the columns in `numbers` are
/// right-aligned, as numbers are; the last column is not padded.
fn table(s: &mut String, rows: &[Vec<String>], indent: usize, numbers: std::ops::Range<usize>) {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|x| x.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for r in rows {
        let mut line = " ".repeat(indent);
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            if numbers.contains(&c) {
                let _ = write!(line, "{cell:>w$}", w = widths[c]);
            } else if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<w$}", w = widths[c]);
            }
        }
        let _ = writeln!(s, "{}", line.trim_end());
    }
}
