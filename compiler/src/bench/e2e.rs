//! Section `e2e`: whole programs, end to end, as a user runs them: `irisc build`, keys, shares,
//! three party processes over TLS on loopback, one person's query against a generated gallery of
//! 100 000 records (31 rotations; both eyes for `iris_eyes_ids.irs`), once with one thread per
//! party and once with all the machine's threads. Every run's answer is checked against the
//! plaintext definition; the figures come from each party's `--stats` accounting.
//!
//! Reported per run: comparisons per second over the matching phases (dot + comparison, the
//! slowest party), per phase, per party CPU-second (so an oversubscribed machine, three parties on
//! fewer cores, can be judged per core too), bytes sent per comparison per party, and the peak
//! resident memory of each party and of the three together.

use anyhow::{anyhow, bail, Context, Result};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use irisc_runtime::iris::IrisRecord;
use irisc_runtime::manifest::InputRole;

use super::netsim::{NetProfile, Relays};
use super::plot::{self, RefLine};
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;
use crate::analysis::plan::PlanOptions;
use crate::codegen::Emit;
use crate::driver::{gen, keys, pipeline, plain, run as party_run, share, store};

/// A program measured end to end.
pub(crate) struct Case {
    pub name: &'static str,
    pub source: &'static str,
    /// Gallery inputs compared per record (eyes).
    pub eyes: usize,
    /// Rotations of each query code.
    pub rotations: usize,
}

pub(crate) const CASES: &[Case] = &[
    Case {
        name: "iris_ids",
        source: include_str!("../../../examples/iris_ids.irs"),
        eyes: 1,
        rotations: 31,
    },
    Case {
        name: "iris_eyes_ids",
        source: include_str!("../../../examples/iris_eyes_ids.irs"),
        eyes: 2,
        rotations: 31,
    },
];

/// The paper's end-to-end figure (comparisons per second per CPU core) and this target.
const PAPER_CMP_PER_S: f64 = 690e3;
const TARGET_CMP_PER_S: f64 = 2e6;
const MACHINE_BUDGET_BYTES: f64 = 24.0 * (1u64 << 30) as f64;

/// How one run is made: threads per party, and the network between the parties (`None`:
/// loopback as it is).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Setting {
    pub threads: usize,
    pub net: Option<NetProfile>,
}

impl Setting {
    fn label(&self) -> String {
        match self.net {
            None => format!("x{}", self.threads),
            Some(n) => format!(
                "x{} {}",
                self.threads,
                n.name.split(' ').next().unwrap_or("net")
            ),
        }
    }
}

/// One run's figures, from the three parties' accounting.
pub(crate) struct RunFigures {
    case: &'static str,
    setting: Setting,
    records: usize,
    comparisons: u64,
    /// Slowest party's dot phase, comparison phase, their sum, and whole run (s).
    dot_s: f64,
    compare_s: f64,
    matching_s: f64,
    total_s: f64,
    load_s: f64,
    /// Comparisons per CPU-second of the busiest party during matching.
    cmp_per_cpu_s: Option<f64>,
    bytes_per_cmp: f64,
    rounds: u64,
    messages: u64,
    peak_rss: [u64; 3],
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let records = opts
        .records
        .unwrap_or(if opts.quick { 200 } else { 100_000 });
    if records == 0 {
        bail!("e2e: --records must be at least 1");
    }
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut thread_counts = vec![1];
    if all > 1 {
        thread_counts.push(all);
    }
    let settings: Vec<Setting> = thread_counts
        .iter()
        .map(|&threads| Setting { threads, net: None })
        .collect();
    let mut runs = Vec::new();
    for case in CASES {
        runs.extend(measure_in(dir, case, records, &settings, opts.quick)?);
    }
    let config = json!({
        "records": records,
        "queries": 1,
        "programs": CASES.iter().map(|c| json!({
            "program": format!("examples/{}.irs", c.name),
            "eyes": c.eyes,
            "rotations": c.rotations,
            "comparisons": records * c.eyes * c.rotations,
        })).collect::<Vec<_>>(),
        "threads_per_party": thread_counts,
        "parties": "three processes, mutually authenticated TLS over loopback",
        "plan": "the cost model's default choices (irisc explain shows them)",
    });
    write_report(
        dir,
        "e2e",
        &format!("End to end, one query against {records} records (three processes, TLS)"),
        opts.quick,
        config,
        &runs,
        Vec::new(),
    )
}

/// Writes `dir/<section>.json` and `dir/<section>.png` from the runs' figures.
pub(crate) fn write_report(
    dir: &Path,
    section: &str,
    title: &str,
    quick: bool,
    config: serde_json::Value,
    runs: &[RunFigures],
    extra_notes: Vec<String>,
) -> Result<Vec<PathBuf>> {
    let mut measurements = Vec::new();
    for r in runs {
        let m = |name: &str, value: f64, unit: &str| {
            let mut extra = BTreeMap::new();
            extra.insert("program".into(), json!(r.case));
            extra.insert("threads_per_party".into(), json!(r.setting.threads));
            if let Some(n) = r.setting.net {
                extra.insert("network".into(), json!(n.name));
            }
            extra.insert("comparisons".into(), json!(r.comparisons));
            extra.insert("records".into(), json!(r.records));
            extra.insert("correct".into(), json!(true));
            Measurement {
                name: format!("{} {} {name}", r.case, r.setting.label()),
                value,
                unit: unit.into(),
                extra,
            }
        };
        let rate = r.comparisons as f64 / r.matching_s;
        measurements.push(m(
            "comparisons per second (matching)",
            rate / 1e6,
            "M cmp/s",
        ));
        measurements.push(m(
            "comparisons per second (dot phase)",
            r.comparisons as f64 / r.dot_s.max(1e-9) / 1e6,
            "M cmp/s",
        ));
        measurements.push(m(
            "comparisons per second (comparison phase)",
            r.comparisons as f64 / r.compare_s.max(1e-9) / 1e6,
            "M cmp/s",
        ));
        if let Some(c) = r.cmp_per_cpu_s {
            measurements.push(m("comparisons per party CPU-second", c / 1e6, "M cmp/s"));
        }
        measurements.push(m("matching time", r.matching_s, "s"));
        measurements.push(m("dot phase", r.dot_s, "s"));
        measurements.push(m("comparison phase", r.compare_s, "s"));
        measurements.push(m("load", r.load_s, "s"));
        measurements.push(m("total", r.total_s, "s"));
        measurements.push(m("sent per comparison per party", r.bytes_per_cmp, "B"));
        measurements.push(m("rounds", r.rounds as f64, "rounds"));
        measurements.push(m("messages", r.messages as f64, "messages"));
        for (p, rss) in r.peak_rss.iter().enumerate() {
            measurements.push(m(
                &format!("party {p} peak memory"),
                *rss as f64 / (1u64 << 30) as f64,
                "GiB",
            ));
        }
        let sum: u64 = r.peak_rss.iter().sum();
        measurements.push(m(
            "three parties' peak memory",
            sum as f64 / (1u64 << 30) as f64,
            "GiB",
        ));
        measurements.push(m(
            "ratio to the paper (690 k cmp/s per core)",
            rate / PAPER_CMP_PER_S,
            "x",
        ));
        measurements.push(m(
            "ratio to the target (2 M cmp/s)",
            rate / TARGET_CMP_PER_S,
            "x",
        ));
        measurements.push(m(
            "three parties' peak memory / 24 GiB",
            sum as f64 / MACHINE_BUDGET_BYTES,
            "fraction",
        ));
    }
    let reference = |name: &str, value: f64, unit: &str, source: &str| {
        let mut extra = BTreeMap::new();
        extra.insert("source".into(), json!(source));
        Measurement {
            name: name.into(),
            value,
            unit: unit.into(),
            extra,
        }
    };
    let machine = MachineInfo::collect();
    let oversubscribed = 3 > machine.logical_cpus;
    let report = Report {
        section: section.into(),
        quick,
        machine,
        config,
        measurements,
        references: vec![
            reference(
                "comparisons per second per CPU core",
                PAPER_CMP_PER_S / 1e6,
                "M cmp/s",
                "paper 003, end to end",
            ),
            reference(
                "target: comparisons per second, one thread per party",
                TARGET_CMP_PER_S / 1e6,
                "M cmp/s",
                "issue target",
            ),
            reference(
                "target: memory of three parties, 100 000 records",
                24.0,
                "GiB",
                "issue target",
            ),
        ],
        notes: {
            let mut n = vec![
                "comparisons = records x rotations x eyes for one query; matching = dot phase + \
                 comparison phase of the slowest party (loading and connecting excluded, reported \
                 apart)"
                    .to_string(),
                "per party CPU-second: comparisons / the busiest party's CPU time during \
                 matching (every thread of the process)"
                    .to_string(),
                "peak memory: each party's VmHWM; mapped gallery pages count when touched".into(),
            ];
            n.extend(extra_notes);
            if oversubscribed {
                n.push(format!(
                    "three parties share {} logical CPUs here, so one thread per party gets less \
                     than a core: the per-CPU-second figure is the per-core one",
                    std::thread::available_parallelism().map_or(1, |n| n.get())
                ));
            }
            n
        },
    };
    let mut files = vec![report.write(dir)?];
    let groups: Vec<String> = runs
        .iter()
        .map(|r| format!("{} {}", r.case, r.setting.label()))
        .collect();
    let series = vec![
        (
            "M cmp/s (matching, wall)".to_string(),
            runs.iter()
                .map(|r| r.comparisons as f64 / r.matching_s / 1e6)
                .collect(),
        ),
        (
            "M cmp/s per party CPU-second".to_string(),
            runs.iter()
                .map(|r| r.cmp_per_cpu_s.map_or(f64::NAN, |c| c / 1e6))
                .collect(),
        ),
    ];
    let path = dir.join(format!("{section}.png"));
    plot::grouped_bars(
        &path,
        title,
        "M comparisons / s",
        &groups,
        &series,
        &[
            RefLine {
                label: "paper: 0.69 M/s per core".into(),
                value: PAPER_CMP_PER_S / 1e6,
            },
            RefLine {
                label: "target: 2 M/s".into(),
                value: TARGET_CMP_PER_S / 1e6,
            },
        ],
    )?;
    files.push(path);
    Ok(files)
}

/// [`measure_case`] in `dir/e2e-work/<case>`, removed afterwards whatever happened: the shares
/// of a large gallery are gigabytes.
pub(crate) fn measure_in(
    dir: &Path,
    case: &Case,
    records: usize,
    settings: &[Setting],
    quick: bool,
) -> Result<Vec<RunFigures>> {
    let root = dir.join("e2e-work");
    let work = root.join(case.name);
    let result = measure_case(case, records, settings, &work, quick);
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir(&root);
    result
}

/// Builds `case`, generates and shares its inputs in `work`, and runs it once per setting.
fn measure_case(
    case: &Case,
    records: usize,
    settings: &[Setting],
    work: &Path,
    quick: bool,
) -> Result<Vec<RunFigures>> {
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let program = work.join(format!("{}.irs", case.name));
    std::fs::write(&program, case.source)?;
    let checked = pipeline::read_and_check(&program)?;
    let planned = pipeline::plan(&checked, &PlanOptions::default())?;
    let manifest = share::program_manifest(&checked, &planned)?;
    let exe = work.join(case.name);
    pipeline::compile(&checked, &planned, Emit::Exe, Some(exe.clone()), false)?;
    eprintln!("e2e: {}: built; generating {records} records", case.name);

    let files = generate_inputs(&manifest, records, work, case.eyes)?;
    let plain_inputs = party_run::plain_inputs(&manifest, &files)?;
    let expected = plain::answers(&checked.program, &planned.choices, &plain_inputs)?;
    drop(plain_inputs);
    let matched = expected
        .get(&0)
        .and_then(|v| v.first())
        .and_then(|a| a["ids"].as_array().map(|ids| ids.len()))
        .unwrap_or(0);
    if matched == 0 && !quick {
        bail!(
            "e2e: the generated query matches no record; the benchmark would not exercise a match"
        );
    }

    let shares = work.join("shares");
    let mut party_args: [Vec<String>; 3] = Default::default();
    for (spec, file) in share::input_specs(&manifest).iter().zip(&files) {
        eprintln!("e2e: {}: sharing input `{}`", case.name, spec.name);
        let paths = share::input_paths(&shares, &spec.name);
        let paths = if store::is_store_input(spec) {
            store::share_to_stores(&manifest.fingerprint, spec, file, paths)?
        } else {
            share::share_input_to(spec, None, file, paths)?
        };
        for (args, path) in party_args.iter_mut().zip(&paths) {
            args.push("--input".into());
            args.push(format!("{}={}", spec.name, path.display()));
        }
    }
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    let config = keys::generate_keys(&work.join("keys"), party_run::free_base_port()?, true)?;

    let comparisons = (records * case.eyes * case.rotations) as u64;
    let mut out = Vec::new();
    for (i, setting) in settings.iter().enumerate() {
        let threads = setting.threads;
        eprintln!(
            "e2e: {}: three parties, {threads} thread(s) each, {}, {comparisons} comparisons",
            case.name,
            setting.net.map_or("loopback", |n| n.name)
        );
        let stats: Vec<PathBuf> = (0..3)
            .map(|p| work.join(format!("stats-{i}-p{p}.json")))
            .collect();
        let relays = match setting.net {
            Some(profile) => Some(Relays::start(&config, profile)?),
            None => None,
        };
        let configs: [&Path; 3] = match &relays {
            Some(r) => [&r.configs[0], &r.configs[1], &r.configs[2]],
            None => [config.as_path(); 3],
        };
        let mut args = party_args.clone();
        for (a, s) in args.iter_mut().zip(&stats) {
            a.push("--stats".into());
            a.push(s.display().to_string());
        }
        let extra = [
            "--threads".to_string(),
            threads.to_string(),
            "--timeout".to_string(),
            "600".to_string(),
        ];
        let outcome =
            party_run::launch_parties(&exe, configs, &args, &extra, Duration::from_secs(1800))?;
        drop(relays);
        for (p, o) in outcome.iter().enumerate() {
            if !o.success {
                bail!("e2e: {}: party {p} failed:\n{}", case.name, o.stderr);
            }
            let got: Vec<serde_json::Value> = o
                .stdout
                .lines()
                .map(serde_json::from_str)
                .collect::<Result<_, _>>()?;
            let want = expected.get(&p).cloned().unwrap_or_default();
            if got != want {
                bail!(
                    "e2e: {}: party {p}'s answer differs from the plaintext definition\n  mpc:   {}\n  plain: {}",
                    case.name,
                    serde_json::to_string(&got)?,
                    serde_json::to_string(&want)?
                );
            }
        }
        let acc: Vec<serde_json::Value> = stats
            .iter()
            .map(|s| -> Result<serde_json::Value> {
                Ok(serde_json::from_str(
                    &std::fs::read_to_string(s)
                        .with_context(|| format!("party accounting {} missing", s.display()))?,
                )?)
            })
            .collect::<Result<_>>()?;
        let mut f = figures(case.name, *setting, comparisons, &acc)?;
        f.records = records;
        out.push(f);
    }
    Ok(out)
}

/// The gallery files (records `0..records`, one per gallery input) and one query per query input:
/// the k-th query input holds a near-duplicate of one record of the k-th gallery, the same record
/// and the same rotation for every eye, so the query is one person.
fn generate_inputs(
    manifest: &irisc_runtime::manifest::Manifest,
    records: usize,
    work: &Path,
    eyes: usize,
) -> Result<Vec<PathBuf>> {
    let galleries: Vec<_> = manifest
        .inputs
        .iter()
        .filter(|i| i.role == InputRole::Gallery)
        .collect();
    if galleries.len() != eyes {
        bail!(
            "e2e: expected {eyes} gallery inputs, the program has {}",
            galleries.len()
        );
    }
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2026);
    let person = rng.random_range(0..records);
    let shift = rng.random_range(-15i64..=15);
    let opts = gen::GenOptions::default();
    let mut query_codes = Vec::new();
    let mut files = Vec::new();
    let mut gallery_index = 0;
    for input in &manifest.inputs {
        let path = work.join(format!("{}.ndjson", input.name));
        match input.role {
            InputRole::Gallery => {
                let code_bits = input.elements as usize;
                let gallery = gen::generate(records, 7 + gallery_index, code_bits, &opts)?;
                let src = &gallery[person].iris;
                query_codes.push(gen::near_duplicate(&mut rng, src, &opts).rotate(shift));
                gen::write_records(&path, &gallery)?;
                gallery_index += 1;
            }
            InputRole::Query => {
                let k = files.len() - galleries.len();
                let iris = query_codes
                    .get(k)
                    .cloned()
                    .ok_or_else(|| anyhow!("e2e: query input `{}` has no gallery", input.name))?;
                gen::write_records(&path, &[IrisRecord { id: 0, iris }])?;
            }
        }
        files.push(path);
    }
    Ok(files)
}

fn figures(
    case: &'static str,
    setting: Setting,
    comparisons: u64,
    acc: &[serde_json::Value],
) -> Result<RunFigures> {
    let f = |v: &serde_json::Value, k: &str| -> Result<f64> {
        v[k].as_f64()
            .ok_or_else(|| anyhow!("party accounting lacks `{k}`"))
    };
    let max = |k: &str| -> Result<f64> {
        acc.iter()
            .map(|v| f(v, k))
            .try_fold(0.0f64, |m, x| Ok(m.max(x?)))
    };
    let mut matching: f64 = 0.0;
    let mut busiest_cpu: Option<f64> = Some(0.0);
    for v in acc {
        matching = matching.max(f(v, "dot_s")? + f(v, "compare_s")?);
        let cpu = match (v["cpu_s"].as_f64(), v["cpu_ready_s"].as_f64()) {
            (Some(end), Some(start)) => Some(end - start),
            _ => None,
        };
        busiest_cpu = match (busiest_cpu, cpu) {
            (Some(b), Some(c)) => Some(b.max(c)),
            _ => None,
        };
    }
    let mut peak_rss = [0u64; 3];
    for (p, v) in acc.iter().enumerate().take(3) {
        peak_rss[p] = v["peak_rss_bytes"].as_u64().unwrap_or(0);
    }
    Ok(RunFigures {
        case,
        setting,
        records: 0,
        comparisons,
        dot_s: max("dot_s")?,
        compare_s: max("compare_s")?,
        matching_s: matching.max(1e-9),
        total_s: max("total_s")?,
        load_s: max("load_s")?,
        cmp_per_cpu_s: busiest_cpu
            .filter(|c| *c > 0.0)
            .map(|c| comparisons as f64 / c),
        bytes_per_cmp: max("bytes_sent")? / comparisons as f64,
        rounds: max("rounds")? as u64,
        messages: max("messages_sent")? as u64,
        peak_rss,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `--quick` run builds both programs, runs each with one thread and with all, checks the
    /// answers against the plaintext definition (an error otherwise) and writes JSON and PNG.
    #[test]
    fn quick_run_checks_answers_and_writes_the_report() {
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            out: dir.path().to_path_buf(),
            sections: vec!["e2e".into()],
            quick: true,
            progress: false,
            records: Some(40),
        };
        let files = run(&opts, dir.path()).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        let m = json["measurements"].as_array().unwrap();
        for case in ["iris_ids", "iris_eyes_ids"] {
            let rate = m
                .iter()
                .find(|x| {
                    x["program"] == case && x["name"].as_str().unwrap().ends_with("(matching)")
                })
                .unwrap_or_else(|| panic!("{case}: no matching rate"));
            assert!(rate["value"].as_f64().unwrap() > 0.0);
            assert_eq!(
                rate["comparisons"],
                40 * 31 * if case == "iris_ids" { 1 } else { 2 }
            );
            let mem = m
                .iter()
                .find(|x| {
                    x["program"] == case
                        && x["name"]
                            .as_str()
                            .unwrap()
                            .ends_with("x1 three parties' peak memory")
                })
                .unwrap();
            assert!(mem["value"].as_f64().unwrap() > 0.0);
        }
        assert!(!dir.path().join("e2e-work").exists(), "shares left behind");
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
