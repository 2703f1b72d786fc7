//! `irisc-bench`: measures the kernels irisc generates and the programs it compiles, and writes
//! `DIR/<section>.json` and PNG charts per section.
//!
//! `cargo run --release -p irisc-bench -- [--sections dot,table2,e2e,net,share,triples,gpu] [--out DIR]
//! [--records N] [--quick]`

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(
    name = "irisc-bench",
    version,
    about = "Measure the generated kernels and compiled programs; writes DIR/<section>.json and PNG charts."
)]
struct Cli {
    /// Folder for the reports and charts.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// Sections to run, comma-separated (default: all). Known: dot, table2, e2e, net, share, triples, gpu.
    #[arg(long, value_delimiter = ',')]
    sections: Vec<String>,
    /// Tiny sizes and short timings (checks the pipeline; the figures mean little).
    #[arg(long)]
    quick: bool,
    /// Gallery records of the end-to-end, network and Table 2 sections (default 100 000).
    #[arg(long)]
    records: Option<usize>,
    /// Gallery records resident on the GPU for the `gpu` section's dot-product timings (default
    /// 200 000, fewer where the card's memory does not hold them).
    #[arg(long)]
    gpu_dot_records: Option<usize>,
    /// Folders for the three parties' gallery stores of the `gpu` section's end-to-end run,
    /// comma-separated (party 0, 1, 2; default: all in the work folder): on one host whose disk
    /// cannot hold three parties' stores, put some on another file system (e.g. /dev/shm).
    #[arg(long, value_delimiter = ',')]
    store_dirs: Vec<PathBuf>,
    /// Records per chunk of the `gpu` section's end-to-end run (default 16 384): the
    /// comparison phase's rounds run once per chunk and eye.
    #[arg(long)]
    gpu_record_chunk: Option<usize>,
    /// SIGKILL restarts of the `serve` section's fault phase (default 100; 0 skips the phase,
    /// to look at latency and throughput alone).
    #[arg(long)]
    serve_kills: Option<usize>,
    /// The `serve` section's build with `--threshold-placement record_thirds|component0`
    /// (default: the compiler's, record thirds).
    #[arg(long, value_parser = ["record_thirds", "component0"])]
    serve_threshold_placement: Option<String>,
    /// Runs of each `e2e` and `net` setting, round robin: the reports give the median run and
    /// the spread of the target figures (on a small shared machine one run can be 30 % off the
    /// next).
    #[arg(long, default_value_t = 1)]
    repeat: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match irisc_bench::run(&irisc_bench::BenchOptions {
        out: cli.out,
        sections: cli.sections,
        quick: cli.quick,
        progress: true,
        records: cli.records,
        gpu_dot_records: cli.gpu_dot_records,
        store_dirs: cli.store_dirs,
        gpu_record_chunk: cli.gpu_record_chunk,
        serve_kills: cli.serve_kills,
        serve_threshold_placement: cli
            .serve_threshold_placement
            .as_deref()
            .and_then(irisc_runtime::vocab::ThresholdPlacement::parse),
        repeat: cli.repeat,
    }) {
        Ok(files) => {
            for f in &files {
                println!("{}", f.display());
            }
            print!("{}", irisc_bench::summary::summary(&files));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("irisc-bench: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
