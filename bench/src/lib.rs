//! `irisc-bench`: measurements of the code irisc emits and of the programs it compiles, written
//! as one JSON report (`DIR/<section>.json`, with machine information and units) and PNG charts
//! per section.
//!
//! This crate sits outside the library crates on purpose: neither `irisc` nor `irisc-runtime`
//! (linked into every generated executable) carries benchmark code, plotting or fonts. It uses
//! the compiler as a library exactly as `irisc build`, `irisc share` and `irisc run` do.
//!
//! - [`peak`]: the machine's measured multiply-accumulate peak (the denominator of every
//!   `peak_fraction`);
//! - [`dot`]: the generated dot-product kernels ([`jit`]) against naive loops;
//! - [`table2`]: Table 2 of the Large-Scale MPC paper from compiled programs
//!   (`bench/programs/*.irs`), three processes over TLS;
//! - [`e2e`], [`net`] ([`netsim`]): whole programs end to end, on loopback and simulated networks,
//!   their dot phase next to the kernel's own rate ([`kernel_rate`]);
//! - [`gpu`]: the CUDA backend's dot kernels (int8 tensor cores) against paper 003's Table 1 and
//!   the card's cuBLAS int8 peak, and Table 3's batch end to end with three parties on one GPU
//!   (cargo feature `cuda`; without it, or without a GPU, the section reports why it skipped);
//! - [`triples`]: paper 004's random-circuit experiment (Fig. 10), masked triples against the
//!   standard triple-based protocol, p = 2 and 3 processes over TLS;
//! - [`serve`]: three serving parties under concurrent clients and SIGKILL restarts (latency,
//!   throughput against the batch executable, errors by cause, the durability audit);
//! - [`report`], [`plot`]: the JSON reports and the charts.
//!
//! Timings are reported, never asserted: the tests only check that a `--quick` run produces
//! well-formed output.

pub mod cosine;
pub mod dot;
pub mod e2e;
pub mod gpu;
pub mod jit;
pub mod kernel_rate;
pub mod net;
pub mod netsim;
pub mod peak;
pub mod plot;
pub mod report;
pub mod serve;
pub mod share;
pub mod summary;
pub mod table2;
pub mod tile_loads;
pub mod triples;

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// What one `irisc-bench` run does.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Folder for the JSON reports and PNG charts (created).
    pub out: PathBuf,
    /// Section names (see [`SECTIONS`]); empty means all.
    pub sections: Vec<String>,
    /// Tiny sizes and short timings: checks the pipeline, the figures mean nothing.
    pub quick: bool,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// Gallery records for the end-to-end, network and Table 2 sections (default 100 000; small
    /// with `quick`).
    pub records: Option<usize>,
    /// Gallery records resident on the GPU for the `gpu` section's dot-product timings
    /// (default [`gpu::DEFAULT_DOT_RECORDS`], capped by the card's memory).
    pub gpu_dot_records: Option<usize>,
    /// Folders for the three parties' gallery stores in the `gpu` section's end-to-end run
    /// (empty: the work folder; else exactly three, party 0, 1, 2).
    pub store_dirs: Vec<PathBuf>,
    /// Records per chunk of the `gpu` section's end-to-end run (default
    /// [`gpu::E2E_RECORD_CHUNK`]): the comparison phase's rounds run per chunk.
    pub gpu_record_chunk: Option<usize>,
    /// SIGKILL restarts of the `serve` section's fault phase (default 100; 0 skips the phase,
    /// for a look at latency and throughput alone).
    pub serve_kills: Option<usize>,
    /// The `serve` section's build with `--threshold-placement` (None: the compiler's default),
    /// to compare the placements' latency on one machine.
    pub serve_threshold_placement: Option<irisc_runtime::vocab::ThresholdPlacement>,
    /// Runs of each end-to-end and network setting (round robin); the reports give the median
    /// run and the spread (0 or 1: once).
    pub repeat: usize,
}

/// Gallery records of the sections that run compiled programs, without `--records`.
pub const DEFAULT_RECORDS: usize = 100_000;
/// The same with `--quick`: enough to check the pipeline, not to measure it.
pub const QUICK_RECORDS: usize = 200;

impl BenchOptions {
    /// The gallery records the end-to-end, network and Table 2 sections run with.
    pub fn gallery_records(&self) -> usize {
        self.records.unwrap_or(if self.quick {
            QUICK_RECORDS
        } else {
            DEFAULT_RECORDS
        })
    }
}

/// A section: name, one-line description (with the sizes it runs), and the function that
/// measures and writes it.
pub struct Section {
    pub name: &'static str,
    pub about: fn(&BenchOptions) -> String,
    pub run: fn(&BenchOptions, &Path) -> Result<Vec<PathBuf>>,
}

/// Every section, in the order they run.
pub const SECTIONS: &[Section] = &[
    Section {
        name: "dot",
        about: |o| {
            format!(
                "dot products per second per core: Z16/Z32/Z64 (LLVM kernel), GR16 d=2,4, F_p, vs naive loops{}",
                if o.quick { " (quick: small galleries, short timings)" } else { "" }
            )
        },
        run: dot::run,
    },
    Section {
        name: "table2",
        about: |o| {
            format!(
                "Table 2 rows (Plain Mask, MPCLift, ConstLift, NoLift, Or Tree) from compiled programs, {} records, three processes over TLS",
                thousands(o.gallery_records())
            )
        },
        run: table2::run,
    },
    Section {
        name: "e2e",
        about: |o| {
            format!(
                "end to end: {}-record gallery, one query (31 rotations, one and both eyes), three processes over TLS, 1 thread and all threads",
                thousands(o.gallery_records())
            )
        },
        run: e2e::run,
    },
    Section {
        name: "net",
        about: |o| {
            format!(
                "end to end under paper 001's networks: 1.5 ms / 6.6 Gbit/s and 32 ms / 477 Mbit/s (simulated links), {}-record gallery",
                thousands(o.gallery_records())
            )
        },
        run: net::run,
    },
    Section {
        name: "share",
        about: share::about,
        run: share::run,
    },
    Section {
        name: "triples",
        about: |o| {
            format!(
                "paper 004's random-circuit experiment: masked triples vs standard triples, {}, p = 2 and 3, separate processes over TLS",
                if o.quick {
                    "b = 2, 4 branches of 300 AND + 300 XOR gates (quick)"
                } else {
                    "b = 2..16 branches of 30 000 AND + 30 000 XOR gates"
                }
            )
        },
        run: triples::run,
    },
    Section {
        name: "cosine",
        about: cosine::about,
        run: cosine::run,
    },
    Section {
        name: "gpu",
        about: gpu::about,
        run: gpu::run,
    },
    Section {
        name: "serve",
        about: serve::about,
        run: serve::run,
    },
];

/// A program built as `irisc build` builds it: `source` written to `work/NAME.irs`, checked,
/// planned with `plan` and compiled for `target` to the executable `work/NAME`.
pub struct Built {
    pub program: PathBuf,
    pub checked: irisc::driver::pipeline::Checked,
    pub planned: irisc::driver::pipeline::Planned,
    pub manifest: irisc_runtime::manifest::Manifest,
    pub exe: PathBuf,
}

pub fn build_program(
    work: &Path,
    name: &str,
    source: &str,
    plan: &irisc::analysis::plan::PlanOptions,
    target: irisc::codegen::Target,
) -> Result<Built> {
    let program = work.join(format!("{name}.irs"));
    std::fs::write(&program, source)?;
    let checked = irisc::driver::pipeline::read_and_check(&program)?;
    let plan = irisc::driver::pipeline::options_for_target(plan, target);
    let planned = irisc::driver::pipeline::plan(&checked, &plan)?;
    let manifest = irisc::driver::dealer::share::program_manifest(&checked, &planned)?;
    let exe = work.join(name);
    irisc::driver::pipeline::compile_for(
        &checked,
        &planned,
        irisc::codegen::Emit::Exe,
        Some(exe.clone()),
        false,
        target,
    )?;
    Ok(Built {
        program,
        checked,
        planned,
        manifest,
        exe,
    })
}

/// `100000` as `100 000` (as `irisc explain` groups digits).
pub fn thousands(n: usize) -> String {
    irisc::analysis::explain::group(n as u64)
}

/// Runs the selected sections; returns the files written.
pub fn run(opts: &BenchOptions) -> Result<Vec<PathBuf>> {
    let selected: Vec<&Section> = if opts.sections.is_empty() {
        SECTIONS.iter().collect()
    } else {
        let mut v = Vec::new();
        for name in &opts.sections {
            match SECTIONS.iter().find(|s| s.name == name.trim()) {
                Some(s) => v.push(s),
                None => bail!(
                    "unknown bench section `{name}` (known: {})",
                    SECTIONS
                        .iter()
                        .map(|s| s.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
        v
    };
    std::fs::create_dir_all(&opts.out)?;
    let mut files = Vec::new();
    for s in selected {
        eprintln!("irisc-bench: section `{}`: {}", s.name, (s.about)(opts));
        files.extend((s.run)(opts, &opts.out)?);
    }
    Ok(files)
}
