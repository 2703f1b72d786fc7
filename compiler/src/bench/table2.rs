//! Section `table2`: the comparison phase of each variant of Table 2 of the Large-Scale MPC paper
//! (Plain Mask, MPCLift, ConstLift, NoLift, Or Tree) at batch 100 000, three parties as three
//! threads over the in-memory transport ([`irisc_runtime::bench::table2`], the same ops the
//! compiled programs run), next to the paper's rows.

use anyhow::{anyhow, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use irisc_runtime::bench::table2::{self, Row, Table2Options, Variant, SWEEP_CHUNKS};

use super::plot::{self, RefLine};
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;

fn measurement(r: &Row, name: &str, value: f64, unit: &str) -> Measurement {
    let mut extra = BTreeMap::new();
    extra.insert("protocol".into(), json!(r.protocol));
    extra.insert("source".into(), json!(r.source));
    extra.insert("rings".into(), json!(r.rings));
    extra.insert("batch".into(), json!(r.batch));
    if let Some(c) = r.correct {
        extra.insert("correct".into(), json!(c));
    }
    if let Some(rounds) = r.rounds {
        extra.insert("rounds".into(), json!(rounds));
    }
    if let Some(c) = r.chunk {
        extra.insert("chunk".into(), json!(c));
    }
    if let Some(m) = r.messages {
        extra.insert("messages".into(), json!(m));
    }
    Measurement {
        name: format!("{} {name}", r.protocol),
        value,
        unit: unit.into(),
        extra,
    }
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let t2 = Table2Options {
        batch: if opts.quick { 2_000 } else { 100_000 },
        repeats: if opts.quick { 2 } else { 10 },
        warmup: if opts.quick { 0 } else { 2 },
        ..Default::default()
    };
    let rows = table2::run(&t2).map_err(|e| anyhow!("table2: {e}"))?;
    let (measured, paper): (Vec<&Row>, Vec<&Row>) = rows.iter().partition(|r| r.correct.is_some());
    // Throughput against chunk size (Plain Mask only in a quick run).
    let (sweep_chunks, sweep_variants): (Vec<usize>, Vec<Variant>) = if opts.quick {
        (vec![0, 1024], vec![Variant::PlainMask])
    } else {
        (
            SWEEP_CHUNKS.to_vec(),
            Variant::ALL
                .into_iter()
                .filter(|&v| v != Variant::OrTree)
                .collect(),
        )
    };
    let sweep = table2::chunk_sweep(&t2, &sweep_chunks, &sweep_variants)
        .map_err(|e| anyhow!("table2 chunk sweep: {e}"))?;
    if let Some(bad) = measured
        .iter()
        .copied()
        .chain(&sweep)
        .find(|r| r.correct != Some(true))
    {
        return Err(anyhow!("table2: {} computed wrong bits", bad.protocol));
    }
    let paper_of = |r: &Row| {
        paper
            .iter()
            .find(|p| p.protocol == r.protocol)
            .map_or(f64::NAN, |p| p.mel_per_s)
    };
    let ratio = |a: f64, b: Option<f64>| b.filter(|&b| b > 0.0).map(|b| a / b);
    let mut measurements = Vec::new();
    for r in &measured {
        let cpu = r.mel_per_cpu_s.unwrap_or(f64::NAN);
        let mut wall = measurement(r, "throughput", r.mel_per_s, "M elements/s");
        let mut per_cpu = measurement(r, "throughput per party CPU", cpu, "M elements/s");
        for (m, v) in [(&mut wall, r.mel_per_s), (&mut per_cpu, cpu)] {
            m.extra.insert("paper_mel_per_s".into(), json!(paper_of(r)));
            m.extra
                .insert("ratio_to_paper".into(), json!(ratio(v, Some(paper_of(r)))));
            m.extra
                .insert("target_mel_per_s".into(), json!(r.target_mel_per_s));
            m.extra.insert(
                "ratio_to_target".into(),
                json!(ratio(v, r.target_mel_per_s)),
            );
        }
        measurements.push(measurement(r, "runtime", r.runtime_ms, "ms"));
        measurements.push(wall);
        measurements.push(measurement(
            r,
            "party CPU time",
            r.cpu_ms.unwrap_or(f64::NAN),
            "ms",
        ));
        measurements.push(per_cpu);
        measurements.push(measurement(r, "sent per party", r.kb_sent_per_party, "kB"));
        let mut per_el = measurement(r, "sent per element", r.bytes_per_element, "B");
        per_el.extra.insert(
            "target_max_bytes_per_element".into(),
            json!(r.target_bytes_per_element),
        );
        measurements.push(per_el);
    }
    let references = paper
        .iter()
        .map(|r| measurement(r, "throughput", r.mel_per_s, "M elements/s"))
        .collect();
    let report = Report {
        section: "table2".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config: json!({
            "batch": t2.batch,
            "repeats": t2.repeats,
            "warmup": t2.warmup,
            "parties": "three threads, in-memory transport, one thread each",
            "chunk": t2.chunk,
            "chunk_sweep": sweep.iter().map(|r| json!({
                "protocol": r.protocol,
                "chunk": r.chunk,
                "runtime_ms": r.runtime_ms,
                "mel_per_s": r.mel_per_s,
                "cpu_ms": r.cpu_ms,
                "mel_per_cpu_s": r.mel_per_cpu_s,
                "messages": r.messages,
                "bytes_per_element": r.bytes_per_element,
            })).collect::<Vec<_>>(),
            "targets": measured.iter().map(|r| json!({
                "protocol": r.protocol,
                "min_mel_per_s": r.target_mel_per_s,
                "max_bytes_per_element": r.target_bytes_per_element,
            })).collect::<Vec<_>>(),
        }),
        measurements,
        references,
        notes: vec![
            "runtime: median over the repeats of the slowest party's wall time".into(),
            "kB = 1000 bytes sent by the party that sends most, as in the paper".into(),
            "party CPU time: median over the repeats of the largest per-thread CPU time \
             (CLOCK_THREAD_CPUTIME_ID) of the three parties; throughput per party CPU = batch / \
             that, comparable to the paper's one core per party when the machine has fewer \
             cores than parties"
                .into(),
            "chunk_sweep: the same rows with round messages split into chunks of that many \
             elements (0 = one message per round)"
                .into(),
        ],
    };
    let mut files = vec![report.write(dir)?];
    let groups: Vec<String> = measured.iter().map(|r| r.protocol.clone()).collect();
    let paper_v1: Vec<f64> = measured.iter().map(|m| paper_of(m)).collect();
    let series = vec![
        (
            "irisc, wall clock".to_string(),
            measured.iter().map(|r| r.mel_per_s).collect(),
        ),
        (
            "irisc, per party CPU second".to_string(),
            measured
                .iter()
                .map(|r| r.mel_per_cpu_s.unwrap_or(f64::NAN))
                .collect(),
        ),
        ("paper (first reference row)".to_string(), paper_v1),
        (
            "target".to_string(),
            measured
                .iter()
                .map(|r| r.target_mel_per_s.unwrap_or(f64::NAN))
                .collect(),
        ),
    ];
    let path = dir.join("table2.png");
    plot::grouped_bars(
        &path,
        &format!(
            "Table 2 at batch {}: comparison phase, M elements / s",
            t2.batch
        ),
        "M elements / s",
        &groups,
        &series,
        &[] as &[RefLine],
    )?;
    files.push(path);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `--quick` run writes a report with every row's six figures, correct bits, the chunk
    /// sweep, the paper's rows as references, and a PNG.
    #[test]
    fn quick_run_writes_the_report_and_the_chart() {
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            out: dir.path().to_path_buf(),
            sections: vec!["table2".into()],
            quick: true,
            progress: false,
            records: None,
        };
        let files = run(&opts, dir.path()).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        let m = json["measurements"].as_array().unwrap();
        assert_eq!(m.len(), 5 * 6);
        assert!(m
            .iter()
            .all(|x| x["correct"] == true && x["value"].as_f64().unwrap() > 0.0));
        for p in ["Plain Mask", "MPCLift", "ConstLift", "NoLift", "Or Tree"] {
            assert!(m.iter().any(|x| x["protocol"] == p), "{p}");
        }
        assert!(m
            .iter()
            .any(|x| x["name"] == "Plain Mask throughput per party CPU"
                && x["ratio_to_paper"].as_f64().unwrap() > 0.0));
        let sweep = json["config"]["chunk_sweep"].as_array().unwrap();
        assert_eq!(sweep.len(), 2);
        assert!(sweep.iter().any(|x| x["chunk"] == 1024));
        assert!(!json["references"].as_array().unwrap().is_empty());
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
