//! The summary `irisc-bench` prints at the end: per section the sizes it ran and its headline
//! figures, read back from the JSON reports it wrote (so the summary and the files agree).

use std::fmt::Write;
use std::path::PathBuf;

use crate::report::{Measurement, Report};

/// The headline measurements of a section: the ones a reader looks for first.
fn headline(section: &str, m: &Measurement) -> bool {
    match section {
        // The variant the runtime dispatches to, one thread, at the deployed code length.
        "dot" => m.name.contains("/generated/") && m.name.ends_with("/l=12800/threads=1"),
        "table2" => m.name.ends_with(" throughput"),
        "e2e" | "net" => m.name.ends_with(" comparisons per second (matching)"),
        "share" => m.name.ends_with(" records per second per core"),
        // Table 3's batch shape per ring, and the end-to-end rate.
        "gpu" => {
            m.name.ends_with("codes=1984 dot products per second")
                || m.name == "end to end comparisons per second (matching)"
                || m.name.starts_with("int8 GEMM peak")
        }
        _ => false,
    }
}

/// The summary of the reports among `files` (the `.json` ones), as text.
pub fn summary(files: &[PathBuf]) -> String {
    let mut s = String::new();
    let reports: Vec<Report> = files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .filter_map(|t| serde_json::from_str(&t).ok())
        .collect();
    if reports.iter().any(|r| r.quick) {
        let _ = writeln!(
            s,
            "summary (--quick: tiny sizes that check the pipeline; the figures mean little):"
        );
    } else {
        let _ = writeln!(s, "summary:");
    }
    for r in &reports {
        let size = match r.config.get("records") {
            Some(serde_json::Value::Number(n)) => {
                format!(
                    ", {} records",
                    crate::thousands(n.as_u64().unwrap_or(0) as usize)
                )
            }
            // The dot section records the gallery size of each ring and code length.
            Some(serde_json::Value::Object(m)) => {
                let sizes: Vec<String> = m
                    .iter()
                    .map(|(k, v)| {
                        format!(
                            "{k}: {}",
                            v.as_u64()
                                .map_or(v.to_string(), |n| crate::thousands(n as usize))
                        )
                    })
                    .collect();
                format!(", records per kernel {}", sizes.join(", "))
            }
            _ => String::new(),
        };
        if r.config.get("status").and_then(|v| v.as_str()) == Some("skipped") {
            let _ = writeln!(
                s,
                "  {}: skipped: {}",
                r.section,
                r.config["reason"].as_str().unwrap_or("no reason given")
            );
            continue;
        }
        let _ = writeln!(
            s,
            "  {}{size}: {} measurements",
            r.section,
            r.measurements.len()
        );
        let rows: Vec<&Measurement> = r
            .measurements
            .iter()
            .filter(|m| headline(&r.section, m))
            .collect();
        if matches!(r.section.as_str(), "e2e" | "net") && !rows.is_empty() {
            let _ = writeln!(
                s,
                "    (xN: N threads per party; qN: a batch of N queries; chunk N: --record-chunk N)"
            );
        }
        let width = rows.iter().map(|m| m.name.len()).max().unwrap_or(0);
        for m in rows {
            let _ = writeln!(s, "    {:<width$}  {:>10.3} {}", m.name, m.value, m.unit);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::MachineInfo;
    use std::collections::BTreeMap;

    fn measurement(name: &str, value: f64, unit: &str) -> Measurement {
        Measurement {
            name: name.into(),
            value,
            unit: unit.into(),
            extra: BTreeMap::new(),
        }
    }

    #[test]
    fn summary_says_the_sizes_run_and_the_headline_figures() {
        let dir = tempfile::tempdir().unwrap();
        let report = Report {
            section: "e2e".into(),
            quick: true,
            machine: MachineInfo::from_cpuinfo(""),
            config: serde_json::json!({ "records": 200 }),
            measurements: vec![
                measurement(
                    "iris_ids x1 comparisons per second (matching)",
                    0.25,
                    "M cmp/s",
                ),
                measurement("iris_ids x1 dot phase", 0.01, "s"),
            ],
            references: Vec::new(),
            notes: Vec::new(),
        };
        let json = report.write(dir.path()).unwrap();
        let png = dir.path().join("e2e.png");
        let text = summary(&[json, png]);
        assert!(text.starts_with("summary (--quick"), "{text}");
        assert!(text.contains("e2e, 200 records: 2 measurements"), "{text}");
        assert!(!text.contains("100 000"), "{text}");
        assert!(
            text.contains("iris_ids x1 comparisons per second (matching)       0.250 M cmp/s"),
            "{text}"
        );
        assert!(!text.contains("dot phase"), "{text}");
    }

    #[test]
    fn section_headers_state_the_sizes_they_run() {
        let opts = |quick, records| crate::BenchOptions {
            out: "unused".into(),
            sections: Vec::new(),
            quick,
            progress: false,
            records,
            gpu_dot_records: None,
            store_dirs: Vec::new(),
            gpu_record_chunk: None,
            serve_kills: None,
            serve_threshold_placement: None,
            repeat: 1,
        };
        // `dot` states its gallery per kernel; `gpu` by default the largest gallery the GPU holds;
        // `triples` runs circuits, not galleries, and states their sizes.
        for s in crate::SECTIONS
            .iter()
            .filter(|s| !["dot", "gpu", "triples"].contains(&s.name))
        {
            let quick = (s.about)(&opts(true, None));
            assert!(quick.contains("200"), "{}: {quick}", s.name);
            assert!(!quick.contains("100 000"), "{}: {quick}", s.name);
            assert!(
                (s.about)(&opts(false, None)).contains("100 000"),
                "{}",
                s.name
            );
            assert!(
                (s.about)(&opts(true, Some(5000))).contains("5 000"),
                "{}",
                s.name
            );
        }
    }
}
