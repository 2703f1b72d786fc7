//! Section `table2`: the comparison phase of each row of Table 2 of the Large-Scale MPC paper
//! (Plain Mask, MPCLift, ConstLift, NoLift, Or Tree), measured on COMPILED programs
//! (`bench/programs/*.irs`), next to the paper's rows.
//!
//! Each row is one small program: one query code, no rotations, against N gallery records, so
//! its comparison phase handles N elements (the paper's batch). The program is built with the
//! irisc library as `irisc build --sharing rep3 [--variant V]` does (the paper's Z_2^k column),
//! its inputs generated and shared, and the three parties run as three processes over TLS on
//! loopback with `--stats` (the machinery of the [`super::e2e`] section, which also checks every
//! answer against the plaintext definition). The row's figures come from the parties'
//! accounting: the per-op breakdown (`"ops"`) where the parties write one, summed over the ops
//! that make the row, else the comparison phase as a whole.

use anyhow::{bail, Result};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::e2e::{measure_in, Case, RunFigures, Setting};
use super::plot::{self, RefLine};
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;

/// One row of Table 2: its program and the `mpc` ops that make its comparison phase.
pub struct Row {
    /// The row's name as the paper prints it.
    pub protocol: &'static str,
    pub case: Case,
    /// The ops (names in the `mpc` dialect) whose time, bytes and rounds are the row's figures
    /// when the parties' accounting breaks them down.
    pub ops: &'static [&'static str],
    /// The paper's figures: (version 1 Z_2^k, version 1 F_p, version 2 Z_2^k), each
    /// (ms, M elements/s, kB sent per party) at batch 100 000.
    pub paper: [(f64, f64, f64); 3],
    /// The targets: at least this many M elements/s, at most this many bytes/element.
    pub target: (f64, Option<f64>),
}

const fn case(name: &'static str, source: &'static str, variant: Option<&'static str>) -> Case {
    Case {
        name,
        source,
        eyes: 1,
        rotations: 1,
        sharing: Some("rep3"),
        variant,
        per_query_chunks: false,
        query_batch: None,
        msb_input: None,
        threshold_placement: None,
    }
}

/// The rows, in the paper's order.
pub const ROWS: [Row; 5] = [
    Row {
        protocol: "Plain Mask",
        case: case(
            "plain_mask",
            include_str!("../programs/plain_mask.irs"),
            Some("plain-mask"),
        ),
        ops: &["sub_threshold", "msb"],
        paper: [
            (1.85, 54.1, 362.0),
            (2.60, 38.5, 625.0),
            (3.18, 31.4, 362.0),
        ],
        target: (1.5 * 54.1, None),
    },
    Row {
        protocol: "MPCLift",
        case: case(
            "mpc_lift",
            include_str!("../programs/mpc_lift.irs"),
            Some("mpc-lift"),
        ),
        ops: &["lift", "const_lift", "lin", "msb"],
        paper: [
            (9.96, 10.0, 2238.0),
            (12.38, 8.1, 2925.0),
            (14.47, 6.9, 2138.0),
        ],
        target: (10.0, Some(21.4)),
    },
    Row {
        protocol: "ConstLift",
        case: case(
            "const_lift",
            include_str!("../programs/const_lift.irs"),
            Some("const-lift"),
        ),
        ops: &["const_lift", "lin", "msb"],
        paper: [
            (4.38, 22.8, 863.0),
            (5.48, 18.2, 1100.0),
            (5.32, 18.8, 763.0),
        ],
        target: (1.5 * 22.8, None),
    },
    Row {
        protocol: "NoLift",
        case: case(
            "no_lift",
            include_str!("../programs/no_lift.irs"),
            Some("no-lift"),
        ),
        ops: &["lin", "msb"],
        paper: [
            (2.55, 39.2, 763.0),
            (3.45, 29.0, 1200.0),
            (5.27, 19.0, 763.0),
        ],
        target: (1.5 * 39.2, None),
    },
    Row {
        protocol: "Or Tree",
        case: case("or_tree", include_str!("../programs/or_tree.irs"), None),
        ops: &["or_tree"],
        paper: [
            (0.26, 384.6, 12.0),
            (0.26, 384.6, 12.0),
            (0.87, 114.9, 12.0),
        ],
        target: (1.5 * 384.6, None),
    },
];

/// The paper's columns, in the order of [`Row::paper`].
pub const PAPER_SOURCES: [&str; 3] = [
    "paper v1 (000), Z_2^k, Ryzen 9 7950X",
    "paper v1 (000), F_p",
    "paper v2 (003), Z_2^k",
];

/// The paper's batch.
pub const PAPER_BATCH: usize = 100_000;

/// A row's comparison-phase figures from one run, the slowest (most sending) party's.
#[derive(Debug, Clone, PartialEq)]
pub struct PhaseFigures {
    pub seconds: f64,
    pub bytes: u64,
    pub rounds: u64,
    /// "ops: a, b" (the per-op breakdown) or "comparison phase" (its total).
    pub source: String,
}

/// The row's figures from the three parties' `--stats` JSON: the sum over the row's ops of
/// `"ops"` (`{"<mpc op>": {"calls", "seconds", "rounds", "bytes"}}`, names with or without the
/// `mpc.` prefix) when every party has that breakdown and it names at least one of the ops; the
/// comparison phase (`compare_s`, and the run's bytes and rounds) otherwise. Each figure is the
/// maximum over the parties.
pub fn phase_figures(row_ops: &[&str], accounts: &[Value]) -> Result<PhaseFigures> {
    let op_sums = |acc: &Value| -> Option<(f64, u64, u64, Vec<String>)> {
        let ops = acc.get("ops")?.as_object()?;
        let (mut s, mut b, mut r, mut used) = (0.0, 0u64, 0u64, Vec::new());
        for (name, v) in ops {
            let short = name.strip_prefix("mpc.").unwrap_or(name);
            if row_ops.contains(&short) {
                s += v.get("seconds")?.as_f64()?;
                b += v.get("bytes")?.as_u64()?;
                r += v.get("rounds")?.as_u64()?;
                used.push(short.to_string());
            }
        }
        (!used.is_empty()).then_some((s, b, r, used))
    };
    let per_op: Option<Vec<_>> = accounts.iter().map(op_sums).collect();
    if let Some(per_op) = per_op.filter(|v| !v.is_empty()) {
        let mut used: Vec<String> = per_op.iter().flat_map(|p| p.3.clone()).collect();
        used.sort();
        used.dedup();
        return Ok(PhaseFigures {
            seconds: per_op.iter().map(|p| p.0).fold(0.0, f64::max),
            bytes: per_op.iter().map(|p| p.1).max().unwrap_or(0),
            rounds: per_op.iter().map(|p| p.2).max().unwrap_or(0),
            source: format!("ops: {}", used.join(", ")),
        });
    }
    let field = |acc: &Value, k: &str| {
        acc.get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| anyhow::anyhow!("party accounting lacks `{k}`"))
    };
    let mut f = PhaseFigures {
        seconds: 0.0,
        bytes: 0,
        rounds: 0,
        source: "comparison phase".into(),
    };
    for acc in accounts {
        f.seconds = f.seconds.max(field(acc, "compare_s")?);
        f.bytes = f.bytes.max(field(acc, "bytes_sent")? as u64);
        f.rounds = f.rounds.max(field(acc, "rounds")? as u64);
    }
    Ok(f)
}

/// The median of the repeats' figures (by seconds).
fn median(mut runs: Vec<PhaseFigures>) -> PhaseFigures {
    runs.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    runs.swap_remove(runs.len() / 2)
}

fn measurement(row: &Row, name: &str, value: f64, unit: &str, extra: &Value) -> Measurement {
    let mut e: BTreeMap<String, Value> = extra
        .as_object()
        .map(|o| o.clone().into_iter().collect())
        .unwrap_or_default();
    e.insert("protocol".into(), json!(row.protocol));
    Measurement {
        name: format!("{} {name}", row.protocol),
        value,
        unit: unit.into(),
        extra: e,
    }
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    // The default is the paper's batch (`DEFAULT_RECORDS` = `PAPER_BATCH`).
    let records = opts.gallery_records();
    if records == 0 {
        bail!("table2: --records must be at least 1");
    }
    let repeats = if opts.quick { 1 } else { 3 };
    let settings = vec![Setting::one_query(1, None); repeats];
    let mut measurements = Vec::new();
    let mut measured = Vec::new();
    for row in &ROWS {
        let requested = records;
        let records = records_that_fit(row, requested);
        if records < requested {
            eprintln!(
                "table2: {}: {requested} records of secret-mask replicated shares do not fit three \
                 parties in this machine's memory: {records} records",
                row.protocol
            );
        }
        eprintln!("table2: {}: {records} records", row.protocol);
        // measure_in checks every run's answer against the plaintext definition (an error
        // otherwise), so every figure below is of a correct run.
        let runs: Vec<RunFigures> = measure_in(dir, &row.case, records, &settings, opts.quick)?;
        let figs: Vec<PhaseFigures> = runs
            .iter()
            .map(|r| phase_figures(row.ops, &r.accounts))
            .collect::<Result<_>>()?;
        let fig = median(figs);
        let mel_per_s = records as f64 / fig.seconds.max(1e-9) / 1e6;
        let bytes_per_element = fig.bytes as f64 / records as f64;
        let (target_mel, target_bytes) = row.target;
        let paper = row.paper[0];
        let extra = json!({
            "program": format!("bench/programs/{}.irs", row.case.name),
            "build": {
                "sharing": row.case.sharing,
                "variant": row.case.variant.unwrap_or("the cost model's choice"),
            },
            "batch": records,
            "batch_requested": requested,
            "batch_note": if records < requested {
                "scaled down: three parties' secret-mask replicated galleries of the requested \
                 size do not fit this machine's memory (see records_that_fit)"
            } else {
                "as requested"
            },
            "correct": true,
            "repeats": repeats,
            "figures_from": fig.source,
            "row_ops": row.ops,
            "rounds": fig.rounds,
            "paper_mel_per_s": paper.1,
            "ratio_to_paper": mel_per_s / paper.1,
            "target_mel_per_s": target_mel,
            "ratio_to_target": mel_per_s / target_mel,
            "target_max_bytes_per_element": target_bytes,
        });
        measurements.push(measurement(row, "runtime", fig.seconds * 1e3, "ms", &extra));
        measurements.push(measurement(
            row,
            "throughput",
            mel_per_s,
            "M elements/s",
            &extra,
        ));
        measurements.push(measurement(
            row,
            "sent per party",
            fig.bytes as f64 / 1000.0,
            "kB",
            &extra,
        ));
        measurements.push(measurement(
            row,
            "sent per element",
            bytes_per_element,
            "B",
            &extra,
        ));
        measurements.push(measurement(
            row,
            "rounds",
            fig.rounds as f64,
            "rounds",
            &extra,
        ));
        measured.push((row, mel_per_s));
    }
    let mut references = Vec::new();
    for row in &ROWS {
        for (source, (ms, mel, kb)) in PAPER_SOURCES.iter().zip(row.paper) {
            let extra = json!({ "source": source, "batch": PAPER_BATCH, "runtime_ms": ms, "kb_sent_per_party": kb });
            references.push(measurement(row, "throughput", mel, "M elements/s", &extra));
        }
    }
    let report = Report {
        section: "table2".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config: json!({
            "records": records,
            "repeats": repeats,
            "parties": "three processes on this machine, mutually authenticated TLS over loopback, one thread each (the paper ran one party per core)",
            "programs": ROWS.iter().map(|r| json!({
                "protocol": r.protocol,
                "program": format!("bench/programs/{}.irs", r.case.name),
                "sharing": r.case.sharing,
                "variant": r.case.variant,
                "row_ops": r.ops,
            })).collect::<Vec<_>>(),
            "query": "one query code, no rotations: the comparison phase handles one element per record",
        }),
        measurements,
        references,
        notes: vec![
            "Each row is a compiled .irs program (bench/programs), built with the irisc library as `irisc build --sharing rep3 --variant V` does, run as three party processes over TLS on loopback; every run's answer is checked against the plaintext definition.".into(),
            "figures_from says where a row's figures come from: `ops: ...` is the sum of those ops in the parties' per-op accounting (`--stats` key \"ops\"); `comparison phase` is the parties' comparison phase as a whole (compare_s), with the bytes and rounds of the whole run (the dot products' resharing and the output's opening included), used when the parties write no per-op breakdown.".into(),
            "Each figure is the maximum over the three parties; with repeats, the run of median time.".into(),
            "kB = 1000 bytes, as in the paper.".into(),
            "The three parties share this machine's cores; the paper ran one party per core.".into(),
        ],
    };
    let mut files = vec![report.write(dir)?];
    let groups: Vec<String> = measured
        .iter()
        .map(|(r, _)| r.protocol.to_string())
        .collect();
    let series = vec![
        (
            "irisc, compiled, TLS loopback".to_string(),
            measured.iter().map(|(_, v)| *v).collect(),
        ),
        (
            "paper (first reference row)".to_string(),
            measured.iter().map(|(r, _)| r.paper[0].1).collect(),
        ),
        (
            "target".to_string(),
            measured.iter().map(|(r, _)| r.target.0).collect(),
        ),
    ];
    let path = dir.join("table2.png");
    plot::grouped_bars(
        &path,
        &format!("Table 2 at batch {records}: comparison phase, M elements / s"),
        "M elements / s",
        &groups,
        &series,
        &[] as &[RefLine],
    )?;
    files.push(path);
    Ok(files)
}

/// Per party, what one gallery record of a secret-mask program over replicated shares costs in
/// memory at 12 800 bits: measured 7.45 GiB per party for 20 000 records (`irisc run
/// bench/programs/mpc_lift.irs --sharing rep3 --variant mpc-lift`, peak memory of the
/// accounting), so about 400 KB per record (codes and masks as replicated pairs, their prepared
/// form and the load's copies).
const SECRET_MASK_BYTES_PER_RECORD: u64 = 400_000;

/// The records a row can run with here: the request, or for the secret-mask rows as many as
/// three parties hold in 60 % of the memory available now (the public-mask rows keep public
/// masks and Shamir-free 16-bit codes and fit at the paper's batch).
fn records_that_fit(row: &Row, requested: usize) -> usize {
    let secret_masks = row.case.source.contains("secret mask");
    if !secret_masks {
        return requested;
    }
    let Some(available) = mem_available_bytes() else {
        return requested;
    };
    let fit = available * 6 / 10 / (3 * SECRET_MASK_BYTES_PER_RECORD);
    requested.min(usize::try_from(fit.max(1)).unwrap_or(usize::MAX))
}

/// `MemAvailable` of /proc/meminfo in bytes, where the system says it.
fn mem_available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The per-op breakdown is used when present (summing only the row's ops, `mpc.` prefixes
    /// or not, the slowest party's), the comparison phase otherwise.
    #[test]
    fn figures_come_from_the_ops_when_the_parties_break_them_down() {
        let party = |s: f64| {
            json!({
                "compare_s": 1.0, "bytes_sent": 500, "rounds": 40,
                "ops": {
                    "mpc.msb": {"calls": 1, "seconds": s, "rounds": 16, "bytes": 100},
                    "sub_threshold": {"calls": 1, "seconds": 0.5, "rounds": 0, "bytes": 0},
                    "reshare": {"calls": 1, "seconds": 9.0, "rounds": 1, "bytes": 300},
                }
            })
        };
        let f = phase_figures(
            &["sub_threshold", "msb"],
            &[party(0.1), party(0.3), party(0.2)],
        )
        .unwrap();
        assert_eq!(f.seconds, 0.8);
        assert_eq!((f.bytes, f.rounds), (100, 16));
        assert_eq!(f.source, "ops: msb, sub_threshold");
        let plain = json!({"compare_s": 1.5, "bytes_sent": 500, "rounds": 40});
        let f = phase_figures(&["or_tree"], &[party(0.1), plain.clone(), plain]).unwrap();
        assert_eq!((f.seconds, f.bytes, f.rounds), (1.5, 500, 40));
        assert_eq!(f.source, "comparison phase");
    }

    /// A `--quick` run builds the five programs, checks their answers, and writes each row's
    /// figures (with where they came from), the paper's rows as references, and a PNG.
    #[test]
    fn quick_run_writes_the_report_and_the_chart() {
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            out: dir.path().to_path_buf(),
            sections: vec!["table2".into()],
            quick: true,
            progress: false,
            records: Some(40),
            gpu_dot_records: None,
            store_dirs: Vec::new(),
            gpu_record_chunk: None,
            serve_kills: None,
            serve_threshold_placement: None,
            repeat: 1,
        };
        let files = run(&opts, dir.path()).unwrap();
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        let m = json["measurements"].as_array().unwrap();
        assert_eq!(m.len(), 5 * 5);
        for p in ["Plain Mask", "MPCLift", "ConstLift", "NoLift", "Or Tree"] {
            let t = m
                .iter()
                .find(|x| x["name"] == format!("{p} throughput"))
                .unwrap_or_else(|| panic!("{p}"));
            assert!(t["value"].as_f64().unwrap() > 0.0, "{p}");
            assert_eq!(t["correct"], true);
            assert_eq!(t["batch"], 40);
            assert!(t["figures_from"].as_str().unwrap().len() > 3);
        }
        assert_eq!(json["references"].as_array().unwrap().len(), 5 * 3);
        assert!(json["config"]["parties"]
            .as_str()
            .unwrap()
            .contains("TLS over loopback"));
        assert!(!dir.path().join("e2e-work").exists(), "shares left behind");
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
