//! Section `share`: how fast the dealer deals a gallery: `irisc share --program` run as its own
//! process (read the NDJSON, deal the three parties' shares, write the three gallery stores,
//! fsync), per sharing, for the deployed program `iris_ids.irs` (12 800-bit codes, public
//! masks).
//!
//! Reported per sharing: records per second of wall time and per CPU-second of the command
//! (user + system of every thread it ran: records per second per core, whatever the number of
//! cores), and bytes written per record. The target of the CPU issue (50 000 records/s per
//! core) is drawn as a reference line.
//!
//! The gallery is the other sections' size (`--records`): the dealer streams (one block of
//! records in memory per thread), so memory does not bound it. The stores are written with
//! direct I/O where the file system takes it (the page-aligned part of each block), so the
//! kernel's page-cache copy is not in the figures; `IRISC_STORE_BUFFERED=1` writes through the
//! page cache instead.

use anyhow::{bail, Context, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use irisc::driver::dealer::share;
use irisc::driver::synth::iris;

use super::plot::{self, RefLine};
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;

/// The rate issue 13 asks of sharing and enrolment, per core.
const TARGET_RECORDS_PER_CORE_S: f64 = 50_000.0;

/// The deployed program, as the examples hold it.
const PROGRAM: &str = include_str!("../../examples/iris_ids.irs");

/// The records the section deals: the gallery size (streamed: no cap).
pub fn records(opts: &BenchOptions) -> usize {
    opts.gallery_records()
}

/// The section's header: the records it deals, and the cap when it applies.
pub fn about(opts: &BenchOptions) -> String {
    let (n, asked) = (records(opts), opts.gallery_records());
    let size = if n < asked {
        format!(
            "{}-record gallery (the {} of the other sections, capped: dealing holds every share in memory)",
            super::thousands(n),
            super::thousands(asked)
        )
    } else {
        format!("{}-record gallery", super::thousands(n))
    };
    format!("dealing: irisc share of a {size} into three stores, per sharing, records/s per core")
}

struct Figures {
    sharing: &'static str,
    /// The sharing, and "one thread" for the run with `--threads 1`.
    label: String,
    seconds: f64,
    cpu_seconds: f64,
    bytes: u64,
}

/// Deals `plain` (an NDJSON gallery) for `sharing` into fresh stores under `work`, timed: the
/// `irisc share` a user runs, as a process of its own, so the figures are that command's
/// (its CPU time from the operating system's accounting of the child) and not shaped by this
/// process's own memory (the gallery it generated leaves the heap fragmented, and a dealer
/// whose buffers then get no huge pages pins 512 times as many pages per direct write).
fn deal_once(
    irisc: &Path,
    work: &Path,
    plain: &Path,
    sharing: &'static str,
    threads: Option<u16>,
) -> Result<Figures> {
    let program = work.join("iris_ids.irs");
    std::fs::write(&program, PROGRAM)?;
    let out = work.join(format!("shares-{sharing}"));
    let _ = std::fs::remove_dir_all(&out);
    let mut input = std::ffi::OsString::from("db=");
    input.push(plain);
    let cpu = children_cpu_seconds();
    let started = Instant::now();
    let result = Command::new(irisc)
        .arg("share")
        .arg("--program")
        .arg(&program)
        .arg("--input")
        .arg(&input)
        .args(["--sharing", sharing])
        .args(threads.map(|t| format!("--threads={t}")))
        .arg("-o")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .with_context(|| format!("starting {}", irisc.display()))?;
    let seconds = started.elapsed().as_secs_f64();
    let cpu_seconds = children_cpu_seconds() - cpu;
    if !result.status.success() {
        bail!(
            "irisc share --sharing {sharing} failed: {}",
            String::from_utf8_lossy(&result.stderr).trim()
        );
    }
    let bytes = share::input_paths(&out, "db")
        .iter()
        .map(|p| std::fs::metadata(p).map(|m| m.len()))
        .sum::<std::io::Result<u64>>()
        .with_context(|| format!("irisc share --sharing {sharing} wrote no store"))?;
    let _ = std::fs::remove_dir_all(&out);
    Ok(Figures {
        sharing,
        label: match threads {
            Some(1) => format!("{sharing} one thread"),
            Some(t) => format!("{sharing} {t} threads"),
            None => sharing.to_string(),
        },
        seconds,
        cpu_seconds,
        bytes,
    })
}

/// User + system CPU seconds of this process's children that have been waited for.
fn children_cpu_seconds() -> f64 {
    // SAFETY: getrusage writes one rusage struct into the zeroed value we pass.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return f64::NAN;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let n = records(opts);
    let work = dir.join("share-work");
    std::fs::create_dir_all(&work)?;
    let plain = work.join("db.ndjson");
    let gallery = iris::generate(n, 11, 12_800, &iris::GenOptions::default())?;
    iris::write_records(&plain, &gallery)?;
    drop(gallery);
    let mut figures = Vec::new();
    let irisc = super::triples::irisc_binary()?;
    for sharing in ["rep3", "gr2", "gr4", "fp"] {
        eprintln!("share: dealing {n} records, {sharing}");
        figures.push(deal_once(&irisc, &work, &plain, sharing, None)?);
    }
    // rep3 once more on one thread: what one core deals when no other dealing thread shares
    // its memory bandwidth (the rate per CPU-second of the run above is of every core at once).
    eprintln!("share: dealing {n} records, rep3 on one thread");
    figures.push(deal_once(&irisc, &work, &plain, "rep3", Some(1))?);
    let _ = std::fs::remove_dir_all(&work);

    let mut measurements = Vec::new();
    for f in &figures {
        let per_core = n as f64 / f.cpu_seconds;
        let extra = |fraction: Option<f64>| {
            let mut m = BTreeMap::new();
            m.insert("sharing".into(), json!(f.sharing));
            m.insert(
                "threads".into(),
                json!(if f.label == f.sharing {
                    "every core"
                } else {
                    "one"
                }),
            );
            m.insert("records".into(), json!(n));
            m.insert("seconds".into(), json!(f.seconds));
            m.insert("cpu_seconds".into(), json!(f.cpu_seconds));
            if let Some(x) = fraction {
                m.insert("fraction_of_target".into(), json!(x));
            }
            m
        };
        measurements.push(Measurement {
            name: format!("{} records per second per core", f.label),
            value: per_core,
            unit: "records/s per CPU-second".into(),
            extra: extra(Some(per_core / TARGET_RECORDS_PER_CORE_S)),
        });
        measurements.push(Measurement {
            name: format!("{} records per second (wall)", f.label),
            value: n as f64 / f.seconds,
            unit: "records/s".into(),
            extra: extra(None),
        });
        measurements.push(Measurement {
            name: format!("{} bytes written per record", f.label),
            value: f.bytes as f64 / n as f64,
            unit: "bytes (three stores)".into(),
            extra: extra(None),
        });
    }
    let report = Report {
        section: "share".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config: json!({
            "records": n,
            "program": "examples/iris_ids.irs (12 800-bit codes, public masks)",
            "what": "irisc share --program: read NDJSON, deal, write and fsync three gallery stores",
            "memory": "streamed: one block of records per thread in memory, whatever the gallery size",
        }),
        measurements,
        references: vec![Measurement {
            name: "target records per second per core".into(),
            value: TARGET_RECORDS_PER_CORE_S,
            unit: "records/s per CPU-second".into(),
            extra: BTreeMap::from([("source".into(), json!("the CPU issue's target"))]),
        }],
        notes: vec![
            "per core = records / (user + system CPU seconds of the `irisc share` process)".into(),
            "`one thread`: `irisc share --threads 1`; the other runs deal on one thread per core"
                .into(),
        ],
    };
    let json_path = report.write(dir)?;
    let png = dir.join("share.png");
    plot::grouped_bars(
        &png,
        &format!("Dealing a {n}-record gallery into three stores"),
        "records/s",
        &figures.iter().map(|f| f.label.clone()).collect::<Vec<_>>(),
        &[
            (
                "per CPU-second".into(),
                figures.iter().map(|f| n as f64 / f.cpu_seconds).collect(),
            ),
            (
                "per second (wall)".into(),
                figures.iter().map(|f| n as f64 / f.seconds).collect(),
            ),
        ],
        &[RefLine {
            label: "target per core".into(),
            value: TARGET_RECORDS_PER_CORE_S,
        }],
    )?;
    Ok(vec![json_path, png])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick section deals every sharing into real stores: each rate is finite and
    /// positive, and the stores hold at least every record's shares (12 800 elements of at
    /// least 2 bytes for each of three parties), so nothing was skipped.
    #[test]
    fn quick_section_deals_every_sharing_into_stores() {
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            out: dir.path().to_path_buf(),
            sections: vec!["share".into()],
            quick: true,
            progress: false,
            records: None,
            gpu_dot_records: None,
            store_dirs: Vec::new(),
            gpu_record_chunk: None,
            serve_kills: None,
            serve_threshold_placement: None,
            repeat: 1,
        };
        let files = run(&opts, dir.path()).unwrap();
        assert!(files.iter().any(|f| f.ends_with("share.png")));
        let report: Report =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        for sharing in ["rep3", "gr2", "gr4", "fp", "rep3 one thread"] {
            let get = |what: &str| {
                report
                    .measurements
                    .iter()
                    .find(|m| m.name == format!("{sharing} {what}"))
                    .unwrap_or_else(|| panic!("{sharing} {what}"))
                    .value
            };
            let rate = get("records per second per core");
            assert!(rate.is_finite() && rate > 0.0, "{sharing}: {rate}");
            assert!(
                get("bytes written per record") >= 3.0 * 12_800.0 * 2.0,
                "{sharing}: stores smaller than the shares"
            );
        }
        assert!(
            !dir.path().join("share-work").exists(),
            "work files removed"
        );
    }
}
