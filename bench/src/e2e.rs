//! Section `e2e`: whole programs, end to end, as a user runs them: `irisc build`, keys, shares,
//! three party processes over TLS on loopback, one person's query against a generated gallery of
//! 100 000 records (31 rotations; both eyes for `iris_eyes_ids.irs`), once with one thread per
//! party and once with all the machine's threads; then, next to those, the same query with the
//! gallery in chunks of 32 768 records (the next chunk's dot products in the background; the
//! baseline is the one-chunk run) and a batch of 8 people's queries (whose dot products stream
//! the gallery once for all 8: the baseline is the one-query run). Every run's answer is checked against the plaintext
//! definition; the figures come from each party's `--stats` accounting.
//!
//! Reported per run: comparisons per second over the matching phases (dot + comparison, the
//! slowest party), per phase, per party CPU-second (so an oversubscribed machine, three parties on
//! fewer cores, can be judged per core too), bytes sent per comparison per party, and the peak
//! resident memory of each party and of the three together. The dot phase is reported per party
//! CPU-second next to the generated kernel's own rate for the same shape, timed in this process
//! in the same run ([`super::kernel_rate`]), with their ratio: what the parties lose around the
//! kernel (mask lengths, copies, page faults, hand-offs). The CPU time of the dot-product op
//! itself and of the mask lengths come from the parties' per-op accounting.

use anyhow::{anyhow, bail, Context, Result};
use irisc_runtime::kernels::amx::{self, AMX_ENV};
use irisc_runtime::kernels::polyphase::{self, POLYPHASE_ENV};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

use irisc_runtime::iris::IrisRecord;
use irisc_runtime::vocab::InputRole;

use super::kernel_rate::{self, KernelRate, KernelShape};
use super::netsim::{NetProfile, Relays};
use super::plot::{self, RefLine};
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;
use irisc::analysis::plan::PlanOptions;
use irisc::codegen::Target;
use irisc::driver::dealer::{share, store};
use irisc::driver::synth::iris;
use irisc::driver::{keys, plaintext, run as party_run};
use irisc_runtime::vocab::{MsbInput, Sharing, ThresholdPlacement, Variant};

/// A program measured end to end.
pub struct Case {
    pub name: &'static str,
    pub source: &'static str,
    /// Gallery inputs compared per record (eyes).
    pub eyes: usize,
    /// Rotations of each query code (1: the query is compared as it is).
    pub rotations: usize,
    /// `--sharing` of the build, or the cost model's choice.
    pub sharing: Option<&'static str>,
    /// `--variant` of the build, or the cost model's choice.
    pub variant: Option<&'static str>,
    /// `--per-query-chunks`: each query of a batch runs its own comparison rounds (the
    /// schedule before a batch's comparisons ran as one vector), to compare against.
    pub per_query_chunks: bool,
    /// `--query-batch N` of the build (None: the default, 8).
    pub query_batch: Option<u32>,
    /// `--msb-input` of the build (None: the target's default).
    pub msb_input: Option<&'static str>,
    /// `--threshold-placement` of the build (None: the compiler's default, record thirds).
    pub threshold_placement: Option<&'static str>,
}

impl Case {
    /// The build's choices, as `irisc build --sharing S --variant V` takes them.
    fn plan_options(&self) -> Result<PlanOptions> {
        Ok(PlanOptions {
            sharing: match self.sharing {
                Some(s) => Some(Sharing::parse(s).ok_or_else(|| anyhow!("unknown sharing {s}"))?),
                None => None,
            },
            variant: match self.variant {
                Some(v) => Some(Variant::parse(v).ok_or_else(|| anyhow!("unknown variant {v}"))?),
                None => None,
            },
            precision_bits: None,
            per_query_chunks: self.per_query_chunks,
            query_batch: self.query_batch,
            protocol: None,
            malicious: None,
            msb_input: match self.msb_input {
                Some(m) => {
                    Some(MsbInput::parse(m).ok_or_else(|| anyhow!("unknown msb input {m}"))?)
                }
                None => None,
            },
            threshold_placement: match self.threshold_placement {
                Some(p) => Some(
                    ThresholdPlacement::parse(p)
                        .ok_or_else(|| anyhow!("unknown threshold placement {p}"))?,
                ),
                None => None,
            },
        })
    }
}

pub const CASES: &[Case] = &[
    Case {
        name: "iris_ids",
        source: include_str!("../../examples/iris_ids.irs"),
        eyes: 1,
        rotations: 31,
        sharing: None,
        variant: None,
        per_query_chunks: false,
        query_batch: None,
        msb_input: None,
        threshold_placement: None,
    },
    Case {
        name: "iris_eyes_ids",
        source: include_str!("../../examples/iris_eyes_ids.irs"),
        eyes: 2,
        rotations: 31,
        sharing: None,
        variant: None,
        per_query_chunks: false,
        query_batch: None,
        msb_input: None,
        threshold_placement: None,
    },
];

/// The paper's end-to-end figure (comparisons per second per CPU core) and this target.
const PAPER_CMP_PER_S: f64 = 690e3;
const TARGET_CMP_PER_S: f64 = 2e6;
const MACHINE_BUDGET_BYTES: f64 = 24.0 * (1u64 << 30) as f64;
/// The CPU issue's targets: comparisons per party CPU-second for one eye and for both eyes, and
/// the dot phase's rate as a fraction of the kernel's own.
const TARGET_CMP_PER_CPU_S_ONE_EYE: f64 = 8e6;
const TARGET_CMP_PER_CPU_S_TWO_EYES: f64 = 4e6;
const TARGET_DOT_PHASE_OF_KERNEL: f64 = 0.85;
/// The per-op names of the parties' accounting that run the generated dot-product kernel.
const DOT_KERNEL_OPS: [&str; 4] = [
    "batch_shamir_dot",
    "batch_masked_dot",
    "shamir_dot",
    "masked_dot",
];
/// Queries of the batch run: one schedule batch, so one kernel call per chunk for all of them.
const BATCH_QUERIES: usize = 8;
/// Records per chunk of the pipelined runs (4 chunks of a 100 000-record gallery).
pub const PIPELINE_CHUNK: usize = 32_768;

/// How one run is made: threads per party, the network between the parties (`None`:
/// loopback as it is), the queries in the batch, and the party's `--record-chunk` (`None`: its
/// default, the whole gallery in one chunk; `Some(n)`: chunks of n records, the next chunk's dot
/// products overlapping this chunk's comparisons).
#[derive(Debug, Clone)]
pub struct Setting {
    pub threads: usize,
    pub net: Option<NetProfile>,
    pub queries: usize,
    pub record_chunk: Option<usize>,
    /// The parties' `--chunk-size` (protocol messages in chunks of this many elements, so that
    /// the rounds of one op pipeline; 0: one message per round); `None`: the parties' default.
    pub message_chunk: Option<usize>,
    /// Variables set in the parties' environment (the GPU path's choices).
    pub env: Vec<(String, String)>,
    /// `Some(m)`: the run uses a build of the same program with `--msb-input m` instead of the
    /// case's (same inputs, so the same manifest fingerprint and the same shares).
    pub msb_input: Option<&'static str>,
    /// `Some(p)`: likewise with `--threshold-placement p` (e.g. `component0`, every party
    /// computing every mask length, against the default's record thirds).
    pub threshold_placement: Option<&'static str>,
}

impl Setting {
    /// The value of the runtime switch `name` the parties of this setting see: the setting's
    /// environment, else this process's (which the parties inherit).
    fn switch(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    }

    /// One query, the default chunks, over `net`.
    pub fn one_query(threads: usize, net: Option<NetProfile>) -> Setting {
        Setting {
            threads,
            net,
            queries: 1,
            record_chunk: None,
            message_chunk: None,
            env: Vec::new(),
            msb_input: None,
            threshold_placement: None,
        }
    }

    fn label(&self) -> String {
        let mut l = format!("x{}", self.threads);
        if let Some(n) = self.net {
            l.push(' ');
            l.push_str(n.name.split(' ').next().unwrap_or("net"));
        }
        if self.queries != 1 {
            l.push_str(&format!(" q{}", self.queries));
        }
        match self.record_chunk {
            Some(0) => l.push_str(" unchunked"),
            Some(n) => l.push_str(&format!(" chunk {n}")),
            None => {}
        }
        match self.message_chunk {
            Some(0) => l.push_str(" one message per round"),
            Some(n) => l.push_str(&format!(" messages of {n}")),
            None => {}
        }
        if let Some(m) = self.msb_input {
            l.push_str(&format!(" msb-input {m}"));
        }
        if let Some(p) = self.threshold_placement {
            l.push_str(&format!(" threshold {p}"));
        }
        let off = |name: &str| self.env.iter().any(|(k, v)| k == name && v == "off");
        if off(POLYPHASE_ENV) {
            l.push_str(" plain kernel");
        } else if off(AMX_ENV) {
            l.push_str(" vector kernels");
        }
        l
    }
}

/// One run's figures, from the three parties' accounting.
pub struct RunFigures {
    pub case: &'static str,
    pub setting: Setting,
    pub records: usize,
    pub comparisons: u64,
    /// Slowest party's dot phase, comparison phase, their sum, and whole run (s).
    pub dot_s: f64,
    /// Slowest party's dot-product time spent in the background, hidden behind comparisons.
    pub dot_overlapped_s: f64,
    pub compare_s: f64,
    pub matching_s: f64,
    pub total_s: f64,
    pub load_s: f64,
    /// Comparisons per CPU-second of the busiest party during matching.
    pub cmp_per_cpu_s: Option<f64>,
    pub bytes_per_cmp: f64,
    pub rounds: u64,
    pub messages: u64,
    pub peak_rss: [u64; 3],
    /// The busiest party's CPU seconds in the dot phase and in the comparison phase, and the
    /// most page faults a party took in its dot phase (`None`: not reported by the parties).
    pub dot_cpu_s: Option<f64>,
    pub compare_cpu_s: Option<f64>,
    pub dot_page_faults: Option<u64>,
    /// The busiest party's CPU seconds in the dot-product ops themselves (the kernel calls and
    /// what surrounds them: query preparation, the result's buffers and split) and in `mask_len`.
    pub dot_op_cpu_s: Option<f64>,
    pub mask_len_cpu_s: Option<f64>,
    /// The kernel's own rate for this run's shape (ring, length, codes per call, ISA), timed in
    /// this process; `None` where it could not be timed.
    pub kernel: Option<KernelRate>,
    /// The three parties' `--stats` JSON as written, for figures beyond these.
    pub accounts: Vec<serde_json::Value>,
    /// With `--repeat N` (N > 1): the figures of all N runs of this setting, in run order;
    /// the figures above are those of the median run ([`by_median`]). Empty otherwise.
    pub repeats: Vec<Repeat>,
}

/// The figures a target is read from, of one of the runs of a repeated setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repeat {
    pub cmp_per_cpu_s: Option<f64>,
    /// The dot phase's dot products per party CPU-second over the kernel alone's rate.
    pub dot_phase_of_kernel: Option<f64>,
    pub compare_s: f64,
}

impl RunFigures {
    /// This run's [`Repeat`] figures.
    pub fn repeat_figures(&self) -> Repeat {
        let dot_rate = self
            .dot_cpu_s
            .filter(|c| *c > 0.0)
            .map(|c| self.comparisons as f64 / c);
        Repeat {
            cmp_per_cpu_s: self.cmp_per_cpu_s,
            dot_phase_of_kernel: dot_rate
                .zip(self.kernel.as_ref())
                .map(|(r, k)| r / k.per_cpu_s),
            compare_s: self.compare_s,
        }
    }
}

/// `settings` `n` times over, round robin (every setting once, then again), so that a drift
/// of the machine's speed during the runs falls on all of them alike.
pub fn repeated(settings: &[Setting], n: usize) -> Vec<Setting> {
    (0..n.max(1))
        .flat_map(|_| settings.iter().cloned())
        .collect()
}

/// The index of the median of `values` (the lower one of the middle two for an even count);
/// `None` when empty. NaNs sort last.
pub fn median_index(values: &[f64]) -> Option<usize> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    order.get(values.len().saturating_sub(1) / 2).copied()
}

/// The runs of [`repeated`] (`per_round` settings per round) back as one run per setting: the
/// run whose `key` is the median of its repeats, carrying every repeat's figures. On a small
/// shared machine one run can be 30 % off the next; the median run is a real run (its figures
/// belong together), and the spread is reported beside it.
pub fn by_median(
    runs: Vec<RunFigures>,
    per_round: usize,
    key: impl Fn(&RunFigures) -> f64,
) -> Vec<RunFigures> {
    if per_round == 0 || runs.len() <= per_round {
        return runs;
    }
    let mut groups: Vec<Vec<RunFigures>> = (0..per_round).map(|_| Vec::new()).collect();
    for (i, r) in runs.into_iter().enumerate() {
        groups[i % per_round].push(r);
    }
    groups
        .into_iter()
        .filter_map(|mut g| {
            let keys: Vec<f64> = g.iter().map(&key).collect();
            let repeats: Vec<Repeat> = g.iter().map(RunFigures::repeat_figures).collect();
            let mut median = g.swap_remove(median_index(&keys)?);
            median.repeats = repeats;
            Some(median)
        })
        .collect()
}

/// The median run's key for the e2e section: comparisons per party CPU-second (its target),
/// or the comparison phase's speed where the parties report no CPU time.
pub fn cpu_key(r: &RunFigures) -> f64 {
    r.cmp_per_cpu_s.unwrap_or(1.0 / r.compare_s.max(1e-12))
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let records = opts.gallery_records();
    if records == 0 {
        bail!("e2e: --records must be at least 1");
    }
    let all = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut thread_counts = vec![1];
    if all > 1 {
        thread_counts.push(all);
    }
    // One query with one thread and with all; the same without chunks (nothing overlapped); and
    // a batch of 8 queries, whose dot products stream the gallery once per chunk for all 8.
    let mut settings: Vec<Setting> = thread_counts
        .iter()
        .map(|&threads| Setting::one_query(threads, None))
        .collect();
    settings.push(Setting {
        record_chunk: Some(PIPELINE_CHUNK),
        ..Setting::one_query(1, None)
    });
    settings.push(Setting {
        queries: BATCH_QUERIES,
        ..Setting::one_query(1, None)
    });
    // One query and the batch again with the plain kernels instead of the polyphase ones (and
    // the vector kernels, not the AMX ones), in the same run.
    for queries in [1, BATCH_QUERIES] {
        settings.push(Setting {
            queries,
            env: vec![
                (POLYPHASE_ENV.to_string(), "off".to_string()),
                (AMX_ENV.to_string(), "off".to_string()),
            ],
            ..Setting::one_query(1, None)
        });
    }
    // Where this CPU runs AMX: one query and the batch again with the vector kernels, in the
    // same run.
    if amx::available() {
        for queries in [1, BATCH_QUERIES] {
            settings.push(Setting {
                queries,
                env: vec![(AMX_ENV.to_string(), "off".to_string())],
                ..Setting::one_query(1, None)
            });
        }
    }
    // One query and the batch again with every party computing every mask length (the
    // threshold on component 0), against the default's record thirds, in the same run.
    for queries in [1, BATCH_QUERIES] {
        settings.push(Setting {
            queries,
            threshold_placement: Some("component0"),
            ..Setting::one_query(1, None)
        });
    }
    let repeat = opts.repeat.max(1);
    let mut runs = Vec::new();
    for case in CASES {
        let all = measure_in(dir, case, records, &repeated(&settings, repeat), opts.quick)?;
        runs.extend(by_median(all, settings.len(), cpu_key));
    }
    let config = json!({
        "records": records,
        "repeat": repeat,
        "repeat_rule": "each setting `repeat` times, round robin; every figure is the median run's (by comparisons per party CPU-second), with the repeats' median, min and max of the target figures beside it",
        "queries": [1, BATCH_QUERIES],
        "programs": CASES.iter().map(|c| json!({
            "program": format!("examples/{}.irs", c.name),
            "eyes": c.eyes,
            "rotations": c.rotations,
            "comparisons_per_query": records * c.eyes * c.rotations,
        })).collect::<Vec<_>>(),
        "record_chunk": "the party default (the whole gallery in one chunk), or `chunk N` (--record-chunk N: pipelined)",
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
pub fn write_report(
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
            extra.insert("queries".into(), json!(r.setting.queries));
            extra.insert(
                "record_chunk".into(),
                json!(r
                    .setting
                    .record_chunk
                    .map_or("default".to_string(), |n| n.to_string())),
            );
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
            let mut x = m("comparisons per party CPU-second", c / 1e6, "M cmp/s");
            if let Some(target) = cpu_target(r.case) {
                x.extra.insert("target".into(), json!(target / 1e6));
                x.extra
                    .insert("fraction_of_target".into(), json!(c / target));
            }
            measurements.push(x);
        }
        let dots = r.comparisons as f64;
        let dot_rate = r.dot_cpu_s.filter(|c| *c > 0.0).map(|c| dots / c);
        if let (Some(rate), Some(cpu)) = (dot_rate, r.dot_cpu_s) {
            measurements.push(m(
                "dot phase: dot products per party CPU-second",
                rate / 1e6,
                "M/s",
            ));
            measurements.push(m("dot phase CPU", cpu, "s"));
        }
        if let Some(c) = r.compare_cpu_s {
            measurements.push(m("comparison phase CPU", c, "s"));
        }
        if let Some(f) = r.dot_page_faults {
            measurements.push(m("dot phase page faults", f as f64, "faults"));
        }
        let op_rate = r.dot_op_cpu_s.filter(|c| *c > 0.0).map(|c| dots / c);
        if let Some(rate) = op_rate {
            measurements.push(m(
                "dot-product op: dot products per party CPU-second",
                rate / 1e6,
                "M/s",
            ));
        }
        if let Some(c) = r.mask_len_cpu_s {
            measurements.push(m("mask lengths CPU", c, "s"));
        }
        if let Some(k) = &r.kernel {
            let describe = |mut x: Measurement| {
                x.extra.insert("ring".into(), json!(k.shape.ring.tag()));
                x.extra
                    .insert("words_per_code".into(), json!(k.shape.words));
                x.extra.insert("codes_per_call".into(), json!(k.codes));
                x.extra.insert("isa".into(), json!(k.isa.name()));
                x.extra.insert("kernel".into(), json!(k.kernel));
                x.extra.insert("threads".into(), json!(1));
                x
            };
            let mut x = describe(m(
                "kernel alone: dot products per CPU-second",
                k.per_cpu_s / 1e6,
                "M/s",
            ));
            x.extra.insert("records_per_pass".into(), json!(k.records));
            x.extra.insert("passes".into(), json!(k.passes));
            x.extra
                .insert("per_second_wall".into(), json!(k.per_s / 1e6));
            measurements.push(x);
            for (what, rate) in [
                ("dot phase / kernel alone", dot_rate),
                ("dot-product op / kernel alone", op_rate),
            ] {
                if let Some(rate) = rate {
                    let mut x = describe(m(what, rate / k.per_cpu_s, "x"));
                    x.extra
                        .insert("target".into(), json!(TARGET_DOT_PHASE_OF_KERNEL));
                    measurements.push(x);
                }
            }
        }
        if r.repeats.len() > 1 {
            let n = r.repeats.len();
            let figures: [(&str, Vec<f64>, f64, &str); 3] = [
                (
                    "comparisons per party CPU-second",
                    r.repeats.iter().filter_map(|x| x.cmp_per_cpu_s).collect(),
                    1e-6,
                    "M cmp/s",
                ),
                (
                    "dot phase / kernel alone",
                    r.repeats
                        .iter()
                        .filter_map(|x| x.dot_phase_of_kernel)
                        .collect(),
                    1.0,
                    "x",
                ),
                (
                    "comparison phase",
                    r.repeats.iter().map(|x| x.compare_s).collect(),
                    1.0,
                    "s",
                ),
            ];
            for (what, values, scale, unit) in figures {
                let Some(mid) = median_index(&values) else {
                    continue;
                };
                let min = values.iter().copied().fold(f64::INFINITY, f64::min);
                let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                for (stat, v) in [("median", values[mid]), ("min", min), ("max", max)] {
                    let mut x = m(&format!("{what} over {n} runs: {stat}"), v * scale, unit);
                    x.extra.insert(
                        "runs".into(),
                        json!(values.iter().map(|v| v * scale).collect::<Vec<_>>()),
                    );
                    measurements.push(x);
                }
            }
        }
        measurements.push(m("matching time", r.matching_s, "s"));
        measurements.push(m("dot phase", r.dot_s, "s"));
        measurements.push(m(
            "dot products in the background (overlapped)",
            r.dot_overlapped_s,
            "s",
        ));
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
    // Ratios against the baselines measured in the same run: the batch against one query (the
    // gallery streamed once for the whole batch) and the pipelined chunks against one chunk.
    for r in runs.iter().filter(|r| r.setting.net.is_none()) {
        let base = runs.iter().find(|b| {
            b.case == r.case
                && b.setting.net.is_none()
                && b.setting.threads == r.setting.threads
                && b.setting.queries == 1
                && b.setting.record_chunk.is_none()
                && build_choice(&b.setting) == build_choice(&r.setting)
        });
        let Some(base) = base.filter(|b| !std::ptr::eq(*b, r)) else {
            continue;
        };
        let (what, value) = if r.setting.queries != 1 {
            (
                "dot products per second, batch / one query",
                (r.comparisons as f64 / r.dot_s.max(1e-9))
                    / (base.comparisons as f64 / base.dot_s.max(1e-9)),
            )
        } else if r.setting.record_chunk.is_some_and(|n| n > 0) {
            (
                "matching time, pipelined chunks / one chunk",
                r.matching_s / base.matching_s,
            )
        } else {
            continue;
        };
        let mut extra = BTreeMap::new();
        extra.insert("program".into(), json!(r.case));
        extra.insert("baseline".into(), json!(base.setting.label()));
        measurements.push(Measurement {
            name: format!("{} {} {what}", r.case, r.setting.label()),
            value,
            unit: "x".into(),
            extra,
        });
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
            reference(
                "target: iris_ids, comparisons per party CPU-second",
                TARGET_CMP_PER_CPU_S_ONE_EYE / 1e6,
                "M cmp/s",
                "CPU issue target (one query and a batch of 8)",
            ),
            reference(
                "target: iris_eyes_ids, comparisons per party CPU-second",
                TARGET_CMP_PER_CPU_S_TWO_EYES / 1e6,
                "M cmp/s",
                "CPU issue target (one query and a batch of 8)",
            ),
            reference(
                "target: dot phase / kernel alone",
                TARGET_DOT_PHASE_OF_KERNEL,
                "x",
                "CPU issue target (per party CPU-second)",
            ),
        ],
        notes: {
            let mut n = vec![
                "comparisons = records x rotations x eyes x queries; matching = dot phase + \
                 comparison phase of the slowest party (loading and connecting excluded, reported \
                 apart); with chunks, the dot phase is the time the party waited for dot \
                 products, and the time they ran in the background is reported apart"
                    .to_string(),
                "per party CPU-second: comparisons / the busiest party's CPU time during \
                 matching (every thread of the process)"
                    .to_string(),
                "peak memory: each party's VmHWM; mapped gallery pages count when touched".into(),
                "dot phase per party CPU-second: dot products (= comparisons) / the busiest \
                 party's CPU time in the ops of its dot phase (the dot-product op, the mask \
                 lengths, the gallery views); the dot-product op alone from the per-op CPU \
                 times; the kernel alone is the generated kernel the parties dispatch to (same \
                 ring, code length, codes per call and ISA; the polyphase kernel and its \
                 combination per rotation where the parties run it), timed in this process on one thread \
                 over 64 MiB of random shares re-read every pass, in CPU seconds of that thread"
                    .into(),
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
        (
            "dot phase, M/s per party CPU-second".to_string(),
            runs.iter()
                .map(|r| {
                    r.dot_cpu_s
                        .filter(|c| *c > 0.0)
                        .map_or(f64::NAN, |c| r.comparisons as f64 / c / 1e6)
                })
                .collect(),
        ),
        (
            "kernel alone, M/s per CPU-second".to_string(),
            runs.iter()
                .map(|r| r.kernel.as_ref().map_or(f64::NAN, |k| k.per_cpu_s / 1e6))
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
            RefLine {
                label: "target: 8 M/s per party CPU-s (one eye)".into(),
                value: TARGET_CMP_PER_CPU_S_ONE_EYE / 1e6,
            },
            RefLine {
                label: "target: 4 M/s per party CPU-s (both eyes)".into(),
                value: TARGET_CMP_PER_CPU_S_TWO_EYES / 1e6,
            },
        ],
    )?;
    files.push(path);
    Ok(files)
}

/// The CPU issue's target of comparisons per party CPU-second for `case` (by its eyes).
fn cpu_target(case: &str) -> Option<f64> {
    match CASES.iter().find(|c| c.name == case)?.eyes {
        1 => Some(TARGET_CMP_PER_CPU_S_ONE_EYE),
        2 => Some(TARGET_CMP_PER_CPU_S_TWO_EYES),
        _ => None,
    }
}

/// [`measure_case`] in `dir/e2e-work/<case>`, removed afterwards whatever happened: the shares
/// of a large gallery are gigabytes.
pub fn measure_in(
    dir: &Path,
    case: &Case,
    records: usize,
    settings: &[Setting],
    quick: bool,
) -> Result<Vec<RunFigures>> {
    measure_in_for(dir, case, records, settings, quick, Target::Cpu)
}

/// [`measure_in`] for the backend `target` (`irisc build --target`). With [`Target::Cuda`] the
/// parties run their dot products on the GPU, so the CPU kernel's own rate is not timed next to
/// them.
pub fn measure_in_for(
    dir: &Path,
    case: &Case,
    records: usize,
    settings: &[Setting],
    quick: bool,
    target: Target,
) -> Result<Vec<RunFigures>> {
    measure_placed(dir, case, records, settings, quick, target, None)
}

/// [`measure_in_for`] with party i's gallery stores under `store_roots[i]` (`None`: all in
/// the work folder): on one host whose disk cannot hold three parties' stores, some go to
/// another file system (its memory). Each root's stores are removed afterwards.
pub fn measure_placed(
    dir: &Path,
    case: &Case,
    records: usize,
    settings: &[Setting],
    quick: bool,
    target: Target,
    store_roots: Option<&[PathBuf; 3]>,
) -> Result<Vec<RunFigures>> {
    measure_placed_also(
        dir,
        case,
        records,
        settings,
        &[],
        quick,
        target,
        store_roots,
    )
    .map(|(runs, _)| runs)
}

/// [`measure_placed`], then the runs of `also` on the same gallery and shares, each of which
/// may fail without failing the others (its error as text).
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn measure_placed_also(
    dir: &Path,
    case: &Case,
    records: usize,
    settings: &[Setting],
    also: &[Setting],
    quick: bool,
    target: Target,
    store_roots: Option<&[PathBuf; 3]>,
) -> Result<(Vec<RunFigures>, Vec<Result<RunFigures, String>>)> {
    let root = dir.join("e2e-work");
    let work = root.join(case.name);
    let roots: Option<[PathBuf; 3]> =
        store_roots.map(|r| [0, 1, 2].map(|i| r[i].join(format!("{}-p{i}", case.name))));
    let result = measure_case(
        case,
        records,
        settings,
        also,
        &work,
        quick,
        target,
        roots.as_ref(),
    );
    let _ = std::fs::remove_dir_all(&work);
    let _ = std::fs::remove_dir(&root);
    for r in roots.iter().flatten() {
        let _ = std::fs::remove_dir_all(r);
    }
    result
}

/// A setting's build choices beyond the case's: `--msb-input`, `--threshold-placement`.
type BuildChoice = (Option<&'static str>, Option<&'static str>);

fn build_choice(s: &Setting) -> BuildChoice {
    (s.msb_input, s.threshold_placement)
}

/// Builds `case`, generates and shares its inputs in `work`, and runs it once per setting, then
/// once per setting of `also` (whose failures are returned, not raised).
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn measure_case(
    case: &Case,
    records: usize,
    settings: &[Setting],
    also: &[Setting],
    work: &Path,
    quick: bool,
    target: Target,
    store_roots: Option<&[PathBuf; 3]>,
) -> Result<(Vec<RunFigures>, Vec<Result<RunFigures, String>>)> {
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    let super::Built {
        checked,
        planned,
        manifest,
        exe,
        ..
    } = super::build_program(work, case.name, case.source, &case.plan_options()?, target)?;
    // The builds that settings ask for with another `--msb-input` or `--threshold-placement`:
    // the same inputs, so the same fingerprint, shares and answers.
    let mut exes: BTreeMap<BuildChoice, PathBuf> = BTreeMap::from([((None, None), exe)]);
    for key in settings.iter().chain(also).map(build_choice) {
        if exes.contains_key(&key) {
            continue;
        }
        let (m, p) = key;
        let other = Case {
            msb_input: m.or(case.msb_input),
            threshold_placement: p.or(case.threshold_placement),
            ..*case
        };
        let mut name = case.name.to_string();
        for (what, v) in [("msb", m), ("threshold", p)] {
            if let Some(v) = v {
                name.push_str(&format!("-{what}-{v}"));
            }
        }
        let built = super::build_program(work, &name, case.source, &other.plan_options()?, target)?;
        if built.manifest.fingerprint != manifest.fingerprint {
            bail!(
                "e2e: {}: the build {name} has another manifest fingerprint",
                case.name
            );
        }
        exes.insert(key, built.exe);
    }
    eprintln!("e2e: {}: built; generating {records} records", case.name);

    let mut batches: Vec<usize> = settings.iter().chain(also).map(|s| s.queries).collect();
    batches.sort_unstable();
    batches.dedup();
    let most = batches.last().copied().unwrap_or(1);
    let files = generate_inputs(&manifest, records, work, case.eyes, case.rotations, most)?;

    let shares = work.join("shares");
    let specs = share::input_specs(&manifest);
    // The galleries' shares, once; the queries' per batch size.
    let mut gallery_args: [Vec<String>; 3] = Default::default();
    for (spec, file) in specs.iter().zip(&files) {
        if spec.role != InputRole::Gallery {
            continue;
        }
        eprintln!("e2e: {}: sharing input `{}`", case.name, spec.name);
        let mut paths = share::input_paths(&shares, &spec.name);
        if let (Some(roots), true) = (store_roots, store::is_store_input(spec)) {
            for (p, r) in paths.iter_mut().zip(roots) {
                *p = r.join(format!("{}.shares", spec.name));
            }
        }
        let paths = if store::is_store_input(spec) {
            store::share_to_stores(&manifest.fingerprint, spec, file, paths)?
        } else {
            share::share_input_to(spec, None, file, paths)?
        };
        for (args, path) in gallery_args.iter_mut().zip(&paths) {
            args.push("--input".into());
            args.push(format!("{}={}", spec.name, path.display()));
        }
    }
    // Per batch size: the parties' input arguments and the expected answers per party.
    type Batch = ([Vec<String>; 3], BTreeMap<usize, Vec<serde_json::Value>>);
    let mut per_batch: HashMap<usize, Batch> = HashMap::new();
    // A query's answer depends on the gallery and the queries before it only, so the plaintext
    // answers of the largest batch hold every smaller batch's as their first queries: computed
    // once, for the largest (the first one the loop below sees).
    let mut largest: Option<BTreeMap<usize, Vec<serde_json::Value>>> = None;
    for &n in batches.iter().rev() {
        let mut args = gallery_args.clone();
        let mut inputs = Vec::new();
        for (spec, file) in specs.iter().zip(&files) {
            if spec.role == InputRole::Gallery {
                inputs.push(file.clone());
                continue;
            }
            // The first n queries.
            let all = irisc_runtime::io::ndjson::read_file(file)?;
            let path = work.join(format!("{}.q{n}.ndjson", spec.name));
            iris::write_records(&path, &all[..n.min(all.len())])?;
            let dir = shares.join(format!("q{n}"));
            let paths = share::input_paths(&dir, &spec.name);
            let paths = share::share_input_to(spec, None, &path, paths)?;
            for (a, p) in args.iter_mut().zip(&paths) {
                a.push("--input".into());
                a.push(format!("{}={}", spec.name, p.display()));
            }
            inputs.push(path);
        }
        let expected = match &largest {
            Some(all) => all
                .iter()
                .map(|(&p, v)| (p, v[..n.min(v.len())].to_vec()))
                .collect(),
            None => {
                let plain_inputs = party_run::plain_inputs(&manifest, &inputs)?;
                let all = plaintext::answers(&checked.program, &planned.plan, &plain_inputs)?;
                largest = Some(all.clone());
                all
            }
        };
        let matched = expected
            .get(&0)
            .map(|v| {
                v.iter()
                    .filter(|a| a["ids"].as_array().is_some_and(|ids| !ids.is_empty()))
                    .count()
            })
            .unwrap_or(0);
        if matched < n && !quick {
            bail!(
                "e2e: {} of {n} generated queries match no record; the benchmark would not \
                 exercise a match",
                n - matched
            );
        }
        per_batch.insert(n, (args, expected));
    }
    for f in &files {
        let _ = std::fs::remove_file(f);
    }
    let config = keys::generate_keys(&work.join("keys"), party_run::free_base_port()?, true)?;

    // The kernel's own rate for each run's shape is timed right before the run, so that both
    // see the machine as it is then.
    let shape = match target {
        Target::Cpu => manifest
            .inputs
            .iter()
            .find(|i| i.role == InputRole::Gallery)
            .map(KernelShape::of)
            .transpose()?,
        Target::Cuda => None,
    };
    let kernel_secs = if quick { 0.01 } else { 0.5 };
    let run_one = |i: usize,
                   setting: &Setting,
                   timer: Option<&kernel_rate::Timer>|
     -> Result<RunFigures> {
        {
            let (party_args, expected) = &per_batch[&setting.queries];
            let comparisons = (records * case.eyes * case.rotations * setting.queries) as u64;
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
            let mut extra = vec![
                "--threads".to_string(),
                threads.to_string(),
                "--timeout".to_string(),
                "600".to_string(),
            ];
            if let Some(n) = setting.record_chunk {
                extra.extend(["--record-chunk".to_string(), n.to_string()]);
            }
            if let Some(n) = setting.message_chunk {
                extra.extend(["--chunk-size".to_string(), n.to_string()]);
            }
            // The kernel the parties run: polyphase unless the run's environment (or this
            // process's, which the parties inherit) turns it off.
            let polyphase_on = polyphase::enabled_for(setting.switch(POLYPHASE_ENV).as_deref())
                .map_err(|e| anyhow!("e2e: {e}"))?;
            let amx_on = amx::enabled_for(setting.switch(AMX_ENV).as_deref())
                .map_err(|e| anyhow!("e2e: {e}"))?;
            let kernel = match timer {
                Some(t) => Some(t.measure(
                    case.rotations * setting.queries,
                    kernel_secs,
                    polyphase_on,
                    amx_on,
                )?),
                None => None,
            };
            let outcome = party_run::launch_parties_with_env(
                &exes[&build_choice(setting)],
                configs,
                &args,
                &extra,
                &setting.env,
                Duration::from_secs(1800),
            )?;
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
            let mut f = figures(case.name, setting.clone(), comparisons, &acc)?;
            f.records = records;
            f.kernel = kernel;
            Ok(f)
        }
    };
    let run_all = |timer: Option<&kernel_rate::Timer>| -> Result<_> {
        let runs = settings
            .iter()
            .enumerate()
            .map(|(i, s)| run_one(i, s, timer))
            .collect::<Result<Vec<_>>>()?;
        let more = also
            .iter()
            .enumerate()
            .map(|(i, s)| run_one(settings.len() + i, s, timer).map_err(|e| format!("{e:#}")))
            .collect();
        Ok((runs, more))
    };
    match shape {
        Some(shape) => {
            let codes: Vec<usize> = settings
                .iter()
                .chain(also)
                .map(|s| case.rotations * s.queries)
                .collect();
            // The shifts `kernel-tile` records for the query's rotations (`-r..=r`).
            let half = (case.rotations / 2) as i32;
            let shifts = (case.rotations > 1).then_some((-half, half));
            kernel_rate::with_timer(shape, &codes, shifts, |t| run_all(Some(t)))?
        }
        None => run_all(None),
    }
}

/// The gallery files (records `0..records`, one per gallery input) and `queries` queries per
/// query input: query j of the k-th query input is a near-duplicate of one record of the k-th
/// gallery, the same record and the same rotation for every eye, so query j is one person. The
/// rotation lies within the program's `rotations` (none when it compares the query as it is).
fn generate_inputs(
    manifest: &irisc_runtime::manifest::Manifest,
    records: usize,
    work: &Path,
    eyes: usize,
    rotations: usize,
    queries: usize,
) -> Result<Vec<PathBuf>> {
    let max_shift = (rotations.saturating_sub(1) / 2) as i64;
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
    let people: Vec<(usize, i64)> = (0..queries)
        .map(|_| {
            (
                rng.random_range(0..records),
                rng.random_range(-max_shift..=max_shift),
            )
        })
        .collect();
    let opts = iris::GenOptions::default();
    let mut query_codes = Vec::new();
    let mut files = Vec::new();
    let mut gallery_index = 0;
    for input in &manifest.inputs {
        let path = work.join(format!("{}.ndjson", input.name));
        match input.role {
            InputRole::Gallery => {
                let code_bits = input.elements as usize;
                let gallery = iris::generate(records, 7 + gallery_index, code_bits, &opts)?;
                query_codes.push(
                    people
                        .iter()
                        .map(|&(person, shift)| {
                            iris::near_duplicate(&mut rng, &gallery[person].iris, &opts)
                                .rotate(shift)
                        })
                        .collect::<Vec<_>>(),
                );
                iris::write_records(&path, &gallery)?;
                gallery_index += 1;
            }
            InputRole::Query => {
                let k = files.len() - galleries.len();
                let codes = query_codes
                    .get(k)
                    .cloned()
                    .ok_or_else(|| anyhow!("e2e: query input `{}` has no gallery", input.name))?;
                let records: Vec<IrisRecord> = codes
                    .into_iter()
                    .enumerate()
                    .map(|(id, iris)| IrisRecord {
                        id: id as u64,
                        iris,
                    })
                    .collect();
                iris::write_records(&path, &records)?;
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
    // The busiest party's figure, where every party reports it.
    let busiest = |get: &dyn Fn(&serde_json::Value) -> Option<f64>| -> Option<f64> {
        acc.iter()
            .map(get)
            .try_fold(0.0f64, |m, x| x.map(|x| m.max(x)))
    };
    let op_cpu = |ops: &[&str]| {
        busiest(&|v| {
            let per_op = v["ops_cpu_s"].as_object()?;
            Some(ops.iter().filter_map(|o| per_op.get(*o)?.as_f64()).sum())
        })
    };
    Ok(RunFigures {
        case,
        setting,
        records: 0,
        comparisons,
        dot_s: max("dot_s")?,
        dot_overlapped_s: max("dot_overlapped_s")?,
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
        dot_cpu_s: busiest(&|v| v["dot_cpu_s"].as_f64()),
        compare_cpu_s: busiest(&|v| v["compare_cpu_s"].as_f64()),
        dot_page_faults: busiest(&|v| v["dot_page_faults"].as_f64()).map(|f| f as u64),
        dot_op_cpu_s: op_cpu(&DOT_KERNEL_OPS),
        // A batched chunk stage (every program now, one query included) runs `batch_mask_len`.
        mask_len_cpu_s: op_cpu(&["mask_len", "batch_mask_len"]),
        kernel: None,
        accounts: acc.to_vec(),
        repeats: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The median of an odd count is its middle value, of an even count the lower middle one,
    /// whatever the order; nothing for no values.
    #[test]
    fn median_index_picks_the_middle_value() {
        assert_eq!(median_index(&[]), None);
        assert_eq!(median_index(&[4.0]), Some(0));
        assert_eq!(median_index(&[9.0, 1.0, 5.0]), Some(2));
        assert_eq!(median_index(&[3.0, 8.0, 1.0, 6.0]), Some(0));
        assert_eq!(median_index(&[2.0, 2.0, 7.0]).map(|i| i < 2), Some(true));
    }

    /// Round-robin runs come back one per setting, as the median run by the key, with every
    /// repeat's figures in run order.
    #[test]
    fn repeated_runs_fold_back_to_their_median_run() {
        let settings = [
            Setting::one_query(1, None),
            Setting {
                queries: 8,
                ..Setting::one_query(1, None)
            },
        ];
        let order = repeated(&settings, 3);
        assert_eq!(order.len(), 6);
        assert_eq!(order[2].queries, 1);
        assert_eq!(order[3].queries, 8);
        let run = |s: &Setting, compare_s: f64| {
            let mut r = figures("iris_ids", s.clone(), 100, &[json!({"dot_s": 1.0, "compare_s": compare_s, "total_s": 3.0, "load_s": 0.1, "dot_overlapped_s": 0.0, "bytes_sent": 400.0, "rounds": 23.0, "messages_sent": 40.0})]).unwrap();
            r.records = 10;
            r
        };
        // Setting 0's compare times 3, 1, 2; setting 1's 6, 4, 5.
        let times = [3.0, 6.0, 1.0, 4.0, 2.0, 5.0];
        let runs: Vec<RunFigures> = order.iter().zip(times).map(|(s, t)| run(s, t)).collect();
        let folded = by_median(runs, 2, |r| r.compare_s);
        assert_eq!(folded.len(), 2);
        assert_eq!(folded[0].setting.queries, 1);
        assert_eq!(folded[0].compare_s, 2.0);
        assert_eq!(folded[1].compare_s, 5.0);
        let seen: Vec<f64> = folded[1].repeats.iter().map(|x| x.compare_s).collect();
        assert_eq!(seen, [6.0, 4.0, 5.0]);
        // One round: the runs as they are, no repeats recorded.
        let once = by_median(vec![run(&settings[0], 1.0)], 2, |r| r.compare_s);
        assert!(once[0].repeats.is_empty());
    }

    /// A run of `also` with another `--msb-input` uses its own build on the same shares: its
    /// answers are checked against the plaintext, its bytes per comparison are the other
    /// protocol's (reshare + BitExtract sends more than AdditiveMSB), and a failing one is
    /// returned as an error without failing the runs before it.
    #[test]
    fn a_setting_may_run_the_other_msb_input_on_the_same_shares() {
        let dir = tempfile::tempdir().unwrap();
        let one = Setting::one_query(1, None);
        let replicated = Setting {
            msb_input: Some("replicated"),
            ..one.clone()
        };
        // Parties refuse `--threads 0`.
        let failing = Setting {
            threads: 0,
            ..replicated.clone()
        };
        let (runs, more) = measure_placed_also(
            dir.path(),
            &CASES[0],
            40,
            std::slice::from_ref(&one),
            &[replicated, failing],
            true,
            Target::Cpu,
            None,
        )
        .unwrap();
        assert_eq!(runs.len(), 1);
        let other = more[0].as_ref().expect("the replicated build's run");
        assert_eq!(other.setting.msb_input, Some("replicated"));
        assert!(
            other.bytes_per_cmp > runs[0].bytes_per_cmp,
            "replicated {} B against additive {} B per comparison",
            other.bytes_per_cmp,
            runs[0].bytes_per_cmp
        );
        assert!(
            more[1].is_err(),
            "{:?}",
            more[1].as_ref().map(|f| f.matching_s)
        );
    }

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
            gpu_dot_records: None,
            store_dirs: Vec::new(),
            gpu_record_chunk: None,
            serve_kills: None,
            serve_threshold_placement: None,
            repeat: 1,
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
            // The batch of 8 queries ran (and was checked), with its ratio to one query; so did
            // the pipelined scan, with its ratio to one chunk.
            let named = |suffix: &str| {
                m.iter()
                    .find(|x| x["program"] == case && x["name"].as_str().unwrap().ends_with(suffix))
                    .unwrap_or_else(|| panic!("{case}: no `{suffix}`"))
            };
            let batch = named("x1 q8 comparisons per second (matching)");
            assert_eq!(
                batch["comparisons"],
                8 * 40 * 31 * if case == "iris_ids" { 1 } else { 2 }
            );
            assert!(
                named("x1 q8 dot products per second, batch / one query")["value"].as_f64()
                    > Some(0.0)
            );
            assert!(
                named("x1 chunk 32768 matching time, pipelined chunks / one chunk")["value"]
                    .as_f64()
                    > Some(0.0)
            );
            // Per party CPU-second, for one query and a batch of 8, with rounds and the CPU
            // issue's target; the dot phase next to the kernel alone, timed for each batch's
            // shape (31 codes per call, 8 x 31 for the batch) on the ISA the parties dispatch.
            let eyes_target = if case == "iris_ids" { 8.0 } else { 4.0 };
            for run in ["x1", "x1 q8"] {
                let per_cpu = named(&format!("{run} comparisons per party CPU-second"));
                assert!(per_cpu["value"].as_f64() > Some(0.0), "{case} {run}");
                assert_eq!(per_cpu["target"], eyes_target, "{case} {run}");
                let rounds = named(&format!("{run} rounds"))["value"].as_f64().unwrap();
                assert!(rounds >= 1.0, "{case} {run}: {rounds} rounds");
                for what in [
                    "dot phase: dot products per party CPU-second",
                    "dot-product op: dot products per party CPU-second",
                    "dot phase CPU",
                ] {
                    let x = named(&format!("{run} {what}"));
                    assert!(x["value"].as_f64() > Some(0.0), "{case} {run} {what}");
                }
                assert!(named(&format!("{run} dot phase page faults"))["value"].is_number());
                assert!(named(&format!("{run} mask lengths CPU"))["value"].is_number());
                let kernel = named(&format!("{run} kernel alone: dot products per CPU-second"));
                assert!(kernel["value"].as_f64() > Some(0.0), "{case} {run}");
                let codes = if run == "x1" { 31 } else { 8 * 31 };
                assert_eq!(kernel["codes_per_call"], codes, "{case} {run}");
                assert_eq!(kernel["threads"], 1);
                assert_eq!(
                    kernel["isa"],
                    kernel_rate::dispatched_isa().unwrap().name(),
                    "the ISA the parties dispatch to"
                );
                let ratio = named(&format!("{run} dot phase / kernel alone"));
                assert!(ratio["value"].as_f64() > Some(0.0), "{case} {run}");
                assert_eq!(ratio["target"], 0.85);
                assert_eq!(ratio["codes_per_call"], codes);
                assert!(
                    named(&format!("{run} dot-product op / kernel alone"))["value"].as_f64()
                        > Some(0.0)
                );
            }
        }
        let refs = json["references"].as_array().unwrap();
        for name in [
            "target: iris_ids, comparisons per party CPU-second",
            "target: iris_eyes_ids, comparisons per party CPU-second",
            "target: dot phase / kernel alone",
        ] {
            assert!(
                refs.iter().any(|r| r["name"] == name),
                "no reference {name}"
            );
        }
        assert!(!dir.path().join("e2e-work").exists(), "shares left behind");
        let png = std::fs::read(&files[1]).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    }
}
