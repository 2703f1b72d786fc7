//! Section `gpu`: the CUDA backend (`irisc build --target cuda`) on one GPU.
//!
//! - Dot products: the PTX irisc generates (`irisc::codegen::cuda::ptx_image`, int8 tensor-core
//!   GEMMs by limb decomposition, paper 003 Section 4.4) for GR(2^16) Shamir (one side),
//!   replicated Z16 and Z32 (two sides, eq. 6), l = 12 800, loaded with cudarc and launched with
//!   the contract's names, parameters and grid (`irisc_runtime::contract::gpu`) against a
//!   random gallery resident on the GPU as limb planes, for batches of 31, 248 (8 x 31) and
//!   1 984 (32 people x 2 eyes x 31 rotations) codes. Each configuration is checked once against
//!   the CPU reference kernels on a slice of records (first and last, so the padded last block
//!   too) before it is timed (CUDA events, warm-up first, the median of the repetitions).
//!   Reported: dot products/s, next to paper 003 Table 1 (H100: GR16 6 292 M/s, replicated Z16
//!   3 146 M/s) and the target (GR16 >= 10 G/s), and the kernel's effective int8 rate (limb
//!   products x 2 x records x codes x K / s) next to the card's int8 GEMM peak measured in the
//!   same run with cuBLAS (`cublasGemmEx`, int8 in, int32 out, square matrices).
//! - End to end: paper 003 Table 3's shape (a batch of 32 people x 2 eyes x 31 rotations, the
//!   queries also matched against the earlier ones of the batch: `bench/programs/gpu_table3.irs`)
//!   built with `--target cuda`, three party processes over TLS on loopback, all three on the
//!   one GPU, against the largest gallery that fits three parties on the card (and this host's
//!   memory and disk), answers checked against the plaintext definition. Reported:
//!   comparisons/s (records x 2 eyes x 31 rotations x 32 queries over the slowest party's
//!   matching phases), next to Table 3's 179 M per GPU and the 60 M target; and the same run
//!   with two batches, whose difference from the first is one batch at the steady state (the
//!   gallery resident on the GPU since the first batch), as Table 3 measures.
//!
//! Without the cargo feature `cuda`, or without a CUDA device (driver), the section writes a
//! `gpu.json` whose `config.status` is `"skipped"` with the reason, and no figures and no chart.

#[cfg(feature = "cuda")]
mod cuda;

use anyhow::{Context, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use irisc::codegen::cpu::kernel::DotRing;
use irisc::codegen::cuda::GpuDot;
use irisc_runtime::contract::gpu::{GemmEngine, LimbWidth};

use super::plot::{self, RefLine};
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;

/// Paper 003, Table 1: GR(2^16) dot products per second on one H100 (l = 12 800).
pub const PAPER_GR16_DOT_PER_S: f64 = 6_292e6;
/// Paper 003, Table 1: replicated Z_2^16 dot products per second on one H100 (l = 12 800).
pub const PAPER_Z16_DOT_PER_S: f64 = 3_146e6;
/// Paper 003, Table 3: comparisons per second per GPU (H100), end to end.
pub const PAPER_TABLE3_CMP_PER_S: f64 = 179e6;
/// The targets: GR16 dot products per second on one H100, and comparisons per second
/// end to end with the three parties on one GPU.
pub const TARGET_GR16_DOT_PER_S: f64 = 10e9;
pub const TARGET_E2E_CMP_PER_S: f64 = 60e6;
/// The code length of every dot product measured (16 rows x 200 columns x 4 bits).
pub const CODE_LEN: u32 = 12_800;
/// Codes per kernel call: one query's 31 rotations, the schedule's default batch of 8 queries,
/// and Table 3's batch (32 people x 2 eyes x 31 rotations).
pub const BATCH_CODES: [usize; 3] = [31, 248, 1984];
/// Table 3's batch: people, eyes, rotations.
pub const TABLE3_PEOPLE: usize = 32;
pub const EYES: usize = 2;
pub const ROTATIONS: usize = 31;
/// The gallery an H100 must hold for three parties (records of both eyes), per the issue.
pub const MIN_H100_RECORDS: usize = 250_000;
/// Gallery records resident on the GPU for the dot-product timings, without
/// `--gpu-dot-records`, and with `--quick`.
pub const DEFAULT_DOT_RECORDS: usize = 200_000;
pub const QUICK_DOT_RECORDS: usize = 4_096;
/// Records per chunk of the end-to-end run's gallery scan (`--record-chunk`): bounds what a
/// party uploads at once (the raw shares of a chunk) next to the resident planes.
pub const E2E_RECORD_CHUNK: usize = 16_384;
/// GPU memory set aside per party beyond its resident gallery planes: its CUDA context, a
/// chunk's raw upload (16 384 records x 12 800 words x 2 sides x 2 bytes = 0.84 GB), the query
/// planes and the dot products of a batch.
pub const E2E_GPU_RESERVE_PER_PARTY: u64 = 3 << 29;

/// Why the section did not run without the cargo feature.
pub const NO_FEATURE: &str = "irisc-bench was built without its `cuda` feature";
/// How to build it with the feature.
pub const HOW_TO_BUILD: &str = "cargo build --release -p irisc-runtime --features cuda && \
    cargo build --release -p irisc-bench --features cuda";

/// The Table 3 program (both eyes, intra-batch matching).
pub const PROGRAM: &str = include_str!("../../programs/gpu_table3.irs");

/// A ring whose dot products the GPU runs, as the section measures it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuRing {
    /// Galois-ring Shamir GR(2^16, d): one side of u16 words (the prepared query).
    Gr16,
    /// Replicated Z_2^16: two sides of u16 words (eq. 6).
    Z16,
    /// Replicated Z_2^32: two sides of u32 words.
    Z32,
}

impl GpuRing {
    pub const ALL: [GpuRing; 3] = [GpuRing::Gr16, GpuRing::Z16, GpuRing::Z32];

    pub fn name(self) -> &'static str {
        match self {
            GpuRing::Gr16 => "GR16",
            GpuRing::Z16 => "Z16 replicated",
            GpuRing::Z32 => "Z32 replicated",
        }
    }

    pub fn dot_ring(self) -> DotRing {
        match self {
            GpuRing::Gr16 => DotRing::Gr16,
            GpuRing::Z16 => DotRing::Z16,
            GpuRing::Z32 => DotRing::Z32,
        }
    }

    /// The kernels' description (width, sides, words) at l = [`CODE_LEN`].
    pub fn gpu_dot(self) -> GpuDot {
        GpuDot::of(self.dot_ring(), CODE_LEN).expect("the three rings have GPU kernels")
    }

    pub fn width(self) -> LimbWidth {
        self.gpu_dot().width
    }

    pub fn sides(self) -> u32 {
        self.gpu_dot().sides
    }

    /// The int8 limb products per dot product (3 for 16-bit words, 10 for 32-bit words).
    pub fn limb_products(self) -> usize {
        self.width().products().len()
    }

    /// Bytes of one record's limb planes on the GPU (padding of the row count aside).
    pub fn plane_bytes_per_record(self) -> u64 {
        self.width().limbs() as u64 * self.gpu_dot().k_pad()
    }

    /// Paper 003 Table 1's rate on one H100 for this ring, where it has one.
    pub fn paper_per_s(self) -> Option<f64> {
        match self {
            GpuRing::Gr16 => Some(PAPER_GR16_DOT_PER_S),
            GpuRing::Z16 => Some(PAPER_Z16_DOT_PER_S),
            GpuRing::Z32 => None,
        }
    }

    /// The target for this ring, where it sets one.
    pub fn target_per_s(self) -> Option<f64> {
        match self {
            GpuRing::Gr16 => Some(TARGET_GR16_DOT_PER_S),
            _ => None,
        }
    }
}

// ---- the pure computations ----

/// Comparisons of a run: `records x eyes x rotations x queries` (against the gallery).
pub fn comparisons(records: usize, eyes: usize, rotations: usize, queries: usize) -> u64 {
    records as u64 * eyes as u64 * rotations as u64 * queries as u64
}

/// Comparisons within a batch of `queries` (each against the earlier ones), all eyes and
/// rotations: `eyes x rotations x queries (queries - 1) / 2`.
pub fn intra_batch_comparisons(eyes: usize, rotations: usize, queries: usize) -> u64 {
    eyes as u64 * rotations as u64 * (queries as u64 * queries.saturating_sub(1) as u64 / 2)
}

/// `count / seconds`; NaN for a non-positive time.
pub fn per_second(count: f64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count / seconds
    } else {
        f64::NAN
    }
}

/// The int8 operations of our dot kernel: `limb products x 2 x records x codes x k_pad` (a
/// multiply and an add per limb product per column).
pub fn effective_int8_ops(limb_products: usize, records: usize, codes: usize, k_pad: u64) -> f64 {
    limb_products as f64 * 2.0 * records as f64 * codes as f64 * k_pad as f64
}

/// The operations of a GEMM of `m x k` by `k x n`: `2 m n k`.
pub fn gemm_ops(m: usize, n: usize, k: usize) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

/// Tera-operations per second.
pub fn tops(ops: f64, seconds: f64) -> f64 {
    per_second(ops, seconds) / 1e12
}

/// `x / of`, where `of` is a positive finite figure.
pub fn fraction(x: f64, of: f64) -> Option<f64> {
    (of.is_finite() && of > 0.0 && x.is_finite()).then(|| x / of)
}

/// The median of `v` (sorted in place); NaN when empty.
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// GPU bytes one party keeps per gallery record of the end-to-end program: the limb planes of
/// both eyes, replicated Z16 (two sides of 12 800 words: 2 limbs x 25 600 columns per eye).
pub fn e2e_gpu_bytes_per_record() -> u64 {
    EYES as u64 * GpuRing::Z16.plane_bytes_per_record()
}

/// Host bytes one party keeps per record: its two replicated shares of both eyes' codes, u16.
pub fn e2e_share_bytes_per_record() -> u64 {
    EYES as u64 * 2 * u64::from(CODE_LEN) * 2
}

/// The end-to-end gallery: its size and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    pub records: usize,
    /// The most three parties' planes hold in the GPU's free memory.
    pub gpu_bound: usize,
    /// The most this host's available memory holds (three parties' shares, the plaintext copy).
    pub host_bound: Option<usize>,
    /// The most the output folder's file system holds (three parties' stores, the NDJSON).
    pub disk_bound: Option<usize>,
    pub why: String,
}

/// A file system the end-to-end run writes to: its free bytes (`None`: unknown), and which of
/// the run's files it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct DiskUse {
    /// Where it is mounted, or a folder on it, for the reason line.
    pub name: String,
    pub free: Option<u64>,
    /// How many parties' gallery stores it holds (0..=3).
    pub parties: u64,
    /// Whether it holds the work folder (the generated NDJSON).
    pub work: bool,
}

impl DiskUse {
    /// Its bytes per record: the stores of its parties and, with the work folder, the
    /// plaintext of both eyes.
    pub fn per_record(&self, plain_bytes_per_record: u64) -> u64 {
        self.parties * e2e_share_bytes_per_record()
            + if self.work {
                EYES as u64 * plain_bytes_per_record
            } else {
                0
            }
    }
}

/// The file system of `dir`: its id and free bytes.
fn file_system(dir: &Path) -> Option<(u64, u64)> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a zeroed statvfs to fill.
    (unsafe { libc::statvfs(c.as_ptr(), &mut s) } == 0)
        .then(|| (s.f_fsid as u64, s.f_bavail as u64 * s.f_frsize as u64))
}

/// The file systems the run writes to: the work folder `dir` (the NDJSON, and the stores of
/// the parties without a folder of their own) and each party's store folder (created).
pub fn disk_uses(dir: &Path, roots: Option<&[PathBuf; 3]>) -> Result<Vec<DiskUse>> {
    let mut places: Vec<(&Path, u64, bool)> = vec![(dir, 0, true)];
    match roots {
        Some(r) => {
            for root in r {
                std::fs::create_dir_all(root)
                    .with_context(|| format!("cannot create {}", root.display()))?;
                places.push((root, 1, false));
            }
        }
        None => places[0].1 = 3,
    }
    let mut uses: Vec<(Option<u64>, DiskUse)> = Vec::new();
    for (path, parties, work) in places {
        let fs = file_system(path);
        match uses
            .iter_mut()
            .find(|u| u.0.is_some() && u.0 == fs.map(|f| f.0))
        {
            Some((_, u)) => {
                u.parties += parties;
                u.work |= work;
            }
            None => uses.push((
                fs.map(|f| f.0),
                DiskUse {
                    name: path.display().to_string(),
                    free: fs.map(|f| f.1),
                    parties,
                    work,
                },
            )),
        }
    }
    Ok(uses.into_iter().map(|u| u.1).collect())
}

/// The end-to-end gallery for a GPU with `gpu_free` bytes free, `host_available` bytes of host
/// memory available, the file systems `disks` it writes to, `plain_bytes_per_record` bytes of
/// NDJSON per record and eye, and `asked` records (`--records`; `None`: the largest that
/// fits).
pub fn e2e_fit(
    gpu_free: u64,
    host_available: Option<u64>,
    disks: &[DiskUse],
    plain_bytes_per_record: u64,
    asked: Option<usize>,
) -> Fit {
    let usable_gpu = gpu_free.saturating_sub(3 * E2E_GPU_RESERVE_PER_PARTY);
    let gpu_bound = (usable_gpu / (3 * e2e_gpu_bytes_per_record())) as usize;
    // The parties map their stores (touched pages resident); the bench holds the plaintext.
    let host_per_record = 3 * e2e_share_bytes_per_record() + EYES as u64 * plain_bytes_per_record;
    let host_bound = host_available.map(|b| (b / 10 * 8 / host_per_record) as usize);
    // The tightest file system: 90% of its free bytes over what a record puts there.
    let disk = disks
        .iter()
        .filter_map(|d| {
            let per = d.per_record(plain_bytes_per_record);
            let free = d.free?;
            (per > 0).then(|| ((free / 10 * 9 / per) as usize, d, per))
        })
        .min_by_key(|b| b.0);
    let disk_bound = disk.map(|b| b.0);
    let mut bounds = vec![(
        gpu_bound,
        format!(
            "the GPU's free memory holds three parties' limb planes of both eyes ({} bytes per \
             record per party, {} GiB set aside per party) for {gpu_bound} records",
            e2e_gpu_bytes_per_record(),
            E2E_GPU_RESERVE_PER_PARTY as f64 / (1u64 << 30) as f64
        ),
    )];
    if let Some(h) = host_bound {
        bounds.push((
            h,
            format!(
                "80% of this host's available memory holds three parties' shares and the \
                 plaintext ({host_per_record} bytes per record) for {h} records"
            ),
        ));
    }
    if let Some((d, fs, per)) = disk {
        let what = match (fs.parties, fs.work) {
            (3, true) => "three parties' stores and the NDJSON".to_string(),
            (p, true) => format!("{p} parties' stores and the NDJSON"),
            (p, false) => format!("{p} parties' stores"),
        };
        bounds.push((
            d,
            format!(
                "90% of the free space of {} holds {what} ({per} bytes per record) for {d} \
                 records",
                fs.name
            ),
        ));
    }
    let (fit, fit_why) = bounds
        .iter()
        .min_by_key(|b| b.0)
        .cloned()
        .expect("the GPU bound is always there");
    let (records, why) = match asked {
        Some(n) if n <= fit => (
            n,
            format!("--records {n} (the largest that fits: {fit}, as {fit_why})"),
        ),
        Some(n) => (
            fit,
            format!("--records {n} asked for more than fits: {fit_why}"),
        ),
        None => (fit, format!("the largest gallery that fits: {fit_why}")),
    };
    Fit {
        records,
        gpu_bound,
        host_bound,
        disk_bound,
        why,
    }
}

// ---- what the device part measures (filled by the `cuda` module) ----

/// One timed dot-kernel configuration.
#[derive(Debug, Clone)]
pub struct DotRow {
    pub ring: GpuRing,
    /// Which int8 GEMM computed the limb products (irisc's kernel or cuBLAS).
    pub engine: GemmEngine,
    pub codes: usize,
    pub records: usize,
    pub k_pad: u64,
    /// Median seconds of one kernel launch (CUDA events), and the repetitions timed.
    pub seconds: f64,
    pub reps: usize,
    /// The kernel's output equalled the CPU reference on the checked slice.
    pub verified: bool,
    /// Why the row failed (a mismatch or a CUDA error); no figures then.
    pub error: Option<String>,
}

impl DotRow {
    pub fn dots_per_s(&self) -> f64 {
        per_second(self.records as f64 * self.codes as f64, self.seconds)
    }

    pub fn effective_tops(&self) -> f64 {
        tops(
            effective_int8_ops(
                self.ring.limb_products(),
                self.records,
                self.codes,
                self.k_pad,
            ),
            self.seconds,
        )
    }

    fn ok(&self) -> bool {
        self.error.is_none() && self.verified && self.seconds.is_finite()
    }
}

/// One cuBLAS int8 GEMM size.
#[derive(Debug, Clone)]
pub struct GemmRow {
    pub n: usize,
    pub seconds: f64,
    pub reps: usize,
}

impl GemmRow {
    pub fn tops(&self) -> f64 {
        tops(gemm_ops(self.n, self.n, self.n), self.seconds)
    }
}

/// The end-to-end run's outcome.
pub struct E2eRow {
    pub fit: Fit,
    pub queries: usize,
    pub threads_per_party: usize,
    /// The run as deployed: dot products and MSB extractions on the GPU.
    pub figures: super::e2e::RunFigures,
    /// The same run with two batches of `queries` (the second one against the resident
    /// gallery), when it ran: the difference is one batch at the steady state.
    pub two_batches: Option<super::e2e::RunFigures>,
    /// The two-batch run again, built with `--msb-input additive`: the comparisons by
    /// AdditiveMSB from the dot products' additive shares, no reshare; or why it did not run.
    pub additive: Option<Result<super::e2e::RunFigures, String>>,
    /// The file systems the run wrote to (the parties' stores, the NDJSON).
    pub disks: Vec<DiskUse>,
}

/// What the AdditiveMSB run is compared with: the default build's two-batch run.
pub const ADDITIVE_HOW: &str = "the two-batch run built with --msb-input additive (AdditiveMSB \
    from the dot products' additive shares, every local step on the GPU, no \
    reshare) against the same run of the default build (reshare, then BitExtract \
    with its local steps on the GPU): the same gallery size, queries and threads, matching time \
    of both batches";

/// What the device part measured.
pub struct Measured {
    pub device: String,
    pub gpu_total_bytes: u64,
    pub gpu_free_bytes: u64,
    pub dots: Vec<DotRow>,
    pub dot_error: Option<String>,
    pub gemm: Vec<GemmRow>,
    pub gemm_error: Option<String>,
    pub e2e: Option<E2eRow>,
    pub e2e_error: Option<String>,
    pub notes: Vec<String>,
}

/// The best int8 GEMM rate measured (TOPS), if any.
pub fn gemm_peak(rows: &[GemmRow]) -> Option<f64> {
    rows.iter()
        .map(GemmRow::tops)
        .filter(|t| t.is_finite())
        .reduce(f64::max)
}

// ---- the section ----

/// The section's header.
pub fn about(opts: &BenchOptions) -> String {
    let dot = opts.gpu_dot_records.unwrap_or(if opts.quick {
        QUICK_DOT_RECORDS
    } else {
        DEFAULT_DOT_RECORDS
    });
    let gallery = match (opts.records, opts.quick) {
        (Some(n), _) => format!("a {}-record gallery (--records)", super::thousands(n)),
        (None, true) => format!("a {}-record gallery", super::thousands(super::QUICK_RECORDS)),
        (None, false) => format!(
            "the largest gallery that fits three parties on the GPU (at least {} records on an H100)",
            super::thousands(MIN_H100_RECORDS)
        ),
    };
    format!(
        "GPU (--target cuda, feature `cuda`): dot products/s of GR16, Z16 and Z32 for 31, 248 and 1 984 codes against {} resident records, vs paper 003 Table 1 and cuBLAS int8 peak; end to end, 32 people x 2 eyes x 31 rotations against {gallery}, three parties on one GPU, vs Table 3",
        super::thousands(dot)
    )
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    #[cfg(not(feature = "cuda"))]
    {
        skipped(opts, dir, NO_FEATURE)
    }
    #[cfg(feature = "cuda")]
    {
        match cuda::probe() {
            Err(why) => skipped(opts, dir, &format!("no CUDA device ({why})")),
            Ok(gpu) => {
                let measured = cuda::measure(opts, dir, gpu)?;
                write(opts, dir, &measured)
            }
        }
    }
}

/// Writes the report of a section that could not run: `config.status = "skipped"` and the
/// reason, no measurements, no chart.
pub fn skipped(opts: &BenchOptions, dir: &Path, reason: &str) -> Result<Vec<PathBuf>> {
    eprintln!("irisc-bench: gpu: skipped: {reason}");
    Ok(vec![skipped_report(opts, reason).write(dir)?])
}

/// The report of a skipped section.
pub fn skipped_report(opts: &BenchOptions, reason: &str) -> Report {
    Report {
        section: "gpu".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config: json!({
            "status": "skipped",
            "reason": reason,
            "build": HOW_TO_BUILD,
        }),
        measurements: Vec::new(),
        references: references(),
        notes: vec![format!("skipped: {reason}")],
    }
}

/// Paper 003's figures and the targets.
pub fn references() -> Vec<Measurement> {
    let r = |name: &str, value: f64, unit: &str, source: &str| Measurement {
        name: name.into(),
        value,
        unit: unit.into(),
        extra: BTreeMap::from([("source".into(), json!(source))]),
    };
    vec![
        r(
            "GR16 dot products per second, H100",
            PAPER_GR16_DOT_PER_S / 1e6,
            "M/s",
            "paper 003, Table 1 (l = 12 800)",
        ),
        r(
            "Z16 replicated dot products per second, H100",
            PAPER_Z16_DOT_PER_S / 1e6,
            "M/s",
            "paper 003, Table 1 (l = 12 800)",
        ),
        r(
            "comparisons per second per GPU, end to end",
            PAPER_TABLE3_CMP_PER_S / 1e6,
            "M cmp/s",
            "paper 003, Table 3 (H100; 32 people x 2 eyes x 31 rotations a batch)",
        ),
        r(
            "target: GR16 dot products per second, one H100",
            TARGET_GR16_DOT_PER_S / 1e6,
            "M/s",
            "issue target",
        ),
        r(
            "target: comparisons per second, three parties on one GPU",
            TARGET_E2E_CMP_PER_S / 1e6,
            "M cmp/s",
            "issue target",
        ),
    ]
}

/// The name of a dot row's rate measurement: the default engine's rows plainly, the other's
/// with the engine named.
pub fn dot_name(ring: GpuRing, codes: usize, engine: GemmEngine) -> String {
    if engine == GemmEngine::DEFAULT {
        format!("{} codes={codes} dot products per second", ring.name())
    } else {
        format!(
            "{} codes={codes} dot products per second ({} GEMM)",
            ring.name(),
            engine.name()
        )
    }
}

/// The measurements of the dot rows, with the int8 peak (TOPS) where it was measured.
pub fn dot_measurements(rows: &[DotRow], peak_tops: Option<f64>) -> Vec<Measurement> {
    let mut out = Vec::new();
    for row in rows {
        let mut extra = BTreeMap::new();
        extra.insert("ring".into(), json!(row.ring.name()));
        extra.insert("gemm".into(), json!(row.engine.name()));
        extra.insert("code_len".into(), json!(CODE_LEN));
        extra.insert("sides".into(), json!(row.ring.sides()));
        extra.insert("limb_products".into(), json!(row.ring.limb_products()));
        extra.insert("k_pad".into(), json!(row.k_pad));
        extra.insert("codes_per_call".into(), json!(row.codes));
        extra.insert("records".into(), json!(row.records));
        extra.insert("verified".into(), json!(row.verified));
        if !row.ok() {
            extra.insert("status".into(), json!("failed"));
            extra.insert(
                "error".into(),
                json!(row
                    .error
                    .clone()
                    .unwrap_or_else(|| "not verified against the CPU reference".into())),
            );
            out.push(Measurement {
                name: dot_name(row.ring, row.codes, row.engine),
                value: f64::NAN,
                unit: "M/s".into(),
                extra,
            });
            continue;
        }
        extra.insert("status".into(), json!("ok"));
        let rate = row.dots_per_s();
        extra.insert("seconds_median".into(), json!(row.seconds));
        extra.insert("repetitions".into(), json!(row.reps));
        if let Some(p) = row.ring.paper_per_s() {
            extra.insert("paper_table1".into(), json!(p / 1e6));
            extra.insert("fraction_of_table1".into(), json!(rate / p));
        }
        if let Some(t) = row.ring.target_per_s() {
            extra.insert("target".into(), json!(t / 1e6));
            extra.insert("fraction_of_target".into(), json!(rate / t));
        }
        let eff = row.effective_tops();
        extra.insert("effective_int8_tops".into(), json!(eff));
        if let Some(f) = peak_tops.and_then(|p| fraction(eff, p)) {
            extra.insert("fraction_of_int8_peak".into(), json!(f));
        }
        out.push(Measurement {
            name: dot_name(row.ring, row.codes, row.engine),
            value: rate / 1e6,
            unit: "M/s".into(),
            extra: extra.clone(),
        });
        let mut e = extra;
        e.retain(|k, _| {
            matches!(
                k.as_str(),
                "ring"
                    | "gemm"
                    | "codes_per_call"
                    | "records"
                    | "k_pad"
                    | "limb_products"
                    | "verified"
            )
        });
        if let Some(f) = peak_tops.and_then(|p| fraction(eff, p)) {
            e.insert("fraction_of_int8_peak".into(), json!(f));
        }
        out.push(Measurement {
            name: format!(
                "{} codes={} effective int8 rate ({} GEMM)",
                row.ring.name(),
                row.codes,
                row.engine.name()
            ),
            value: eff,
            unit: "TOPS".into(),
            extra: e,
        });
    }
    out
}

/// How the steady-state figures are obtained.
pub const STEADY_STATE_HOW: &str = "the run with two batches of 32 minus the run with one: \
    the second batch's matching time (slowest party's dot + comparison phases), its gallery \
    resident on the GPU since the first";

/// One batch at the steady state: the two-batch run minus the one-batch run.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyState {
    pub comparisons: u64,
    pub matching_s: f64,
    pub dot_s: f64,
    pub compare_s: f64,
    pub per_s: f64,
    /// Party 0's wall seconds per op in the second batch (the two runs' difference).
    pub party0_op_seconds: Option<BTreeMap<String, f64>>,
    /// Party 0's process CPU seconds per op in the second batch.
    pub party0_op_cpu_seconds: Option<BTreeMap<String, f64>>,
}

/// Party 0's wall seconds per op in a run's `--stats`.
fn op_seconds(f: &super::e2e::RunFigures) -> Option<BTreeMap<String, f64>> {
    let map = f.accounts.first()?.get("ops")?.as_object()?;
    Some(
        map.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.get("seconds")?.as_f64()?)))
            .collect(),
    )
}

/// Party 0's process CPU seconds per op in a run's `--stats` (every thread): next to the
/// wall seconds, what an op computed on the host and what it waited for (peers, the GPU).
fn op_cpu_seconds(f: &super::e2e::RunFigures) -> Option<BTreeMap<String, f64>> {
    let map = f.accounts.first()?.get("ops_cpu_s")?.as_object()?;
    Some(
        map.iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
            .collect(),
    )
}

/// `b - a` per key (a key `a` lacks counts from 0).
fn difference(a: BTreeMap<String, f64>, b: BTreeMap<String, f64>) -> BTreeMap<String, f64> {
    b.iter()
        .map(|(k, v)| (k.clone(), v - a.get(k).copied().unwrap_or(0.0)))
        .collect()
}

/// The second batch's figures, when the two-batch run ran and took longer than the first.
pub fn steady_state(e: &E2eRow) -> Option<SteadyState> {
    let (one, two) = (&e.figures, e.two_batches.as_ref()?);
    let matching_s = two.matching_s - one.matching_s;
    let comparisons = two.comparisons.checked_sub(one.comparisons)?;
    if matching_s <= 0.0 || comparisons == 0 {
        return None;
    }
    let party0_op_seconds = match (op_seconds(one), op_seconds(two)) {
        (Some(a), Some(b)) => Some(difference(a, b)),
        _ => None,
    };
    let party0_op_cpu_seconds = match (op_cpu_seconds(one), op_cpu_seconds(two)) {
        (Some(a), Some(b)) => Some(difference(a, b)),
        _ => None,
    };
    Some(SteadyState {
        comparisons,
        matching_s,
        dot_s: two.dot_s - one.dot_s,
        compare_s: two.compare_s - one.compare_s,
        per_s: per_second(comparisons as f64, matching_s),
        party0_op_seconds,
        party0_op_cpu_seconds,
    })
}

/// The measurements of the end-to-end run.
pub fn e2e_measurements(e: &E2eRow) -> Vec<Measurement> {
    let f = &e.figures;
    let base = || {
        let mut extra = BTreeMap::new();
        extra.insert("program".into(), json!("bench/programs/gpu_table3.irs"));
        extra.insert("records".into(), json!(e.fit.records));
        extra.insert("records_why".into(), json!(e.fit.why));
        extra.insert("queries".into(), json!(e.queries));
        extra.insert("eyes".into(), json!(EYES));
        extra.insert("rotations".into(), json!(ROTATIONS));
        extra.insert("comparisons".into(), json!(f.comparisons));
        extra.insert(
            "intra_batch_comparisons".into(),
            json!(intra_batch_comparisons(EYES, ROTATIONS, e.queries)),
        );
        extra.insert("threads_per_party".into(), json!(e.threads_per_party));
        extra.insert("correct".into(), json!(true));
        extra
    };
    let rate = per_second(f.comparisons as f64, f.matching_s);
    let mut head = base();
    head.insert("matching_s".into(), json!(f.matching_s));
    head.insert("paper_table3".into(), json!(PAPER_TABLE3_CMP_PER_S / 1e6));
    head.insert(
        "fraction_of_table3".into(),
        json!(rate / PAPER_TABLE3_CMP_PER_S),
    );
    head.insert("target".into(), json!(TARGET_E2E_CMP_PER_S / 1e6));
    head.insert(
        "fraction_of_target".into(),
        json!(rate / TARGET_E2E_CMP_PER_S),
    );
    let mut out = vec![Measurement {
        name: "end to end comparisons per second (matching)".into(),
        value: rate / 1e6,
        unit: "M cmp/s".into(),
        extra: head,
    }];
    let m = |name: &str, value: f64, unit: &str| Measurement {
        name: format!("end to end {name}"),
        value,
        unit: unit.into(),
        extra: base(),
    };
    out.push(m(
        "comparisons per second (whole run, slowest party)",
        per_second(f.comparisons as f64, f.total_s) / 1e6,
        "M cmp/s",
    ));
    let mut matching = m("matching time", f.matching_s, "s");
    // Where party 0's time went, op by op (wall seconds), to find what the GPU does not yet
    // take.
    if let Some(ops) = f.accounts.first().and_then(|a| a.get("ops")) {
        if let Some(map) = ops.as_object() {
            let secs: BTreeMap<String, serde_json::Value> = map
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.get("seconds")?.clone())))
                .collect();
            matching
                .extra
                .insert("party0_op_seconds".into(), json!(secs));
        }
    }
    out.push(matching);
    out.push(m("dot phase", f.dot_s, "s"));
    out.push(m("comparison phase", f.compare_s, "s"));
    out.push(m("load", f.load_s, "s"));
    out.push(m("total", f.total_s, "s"));
    out.push(m("sent per comparison per party", f.bytes_per_cmp, "B"));
    out.push(m("rounds", f.rounds as f64, "rounds"));
    if let Some(s) = steady_state(e) {
        let mut x = m(
            "comparisons per second (steady state: the second batch, gallery resident)",
            s.per_s / 1e6,
            "M cmp/s",
        );
        x.extra
            .insert("paper_table3".into(), json!(PAPER_TABLE3_CMP_PER_S / 1e6));
        x.extra.insert(
            "fraction_of_table3".into(),
            json!(s.per_s / PAPER_TABLE3_CMP_PER_S),
        );
        x.extra
            .insert("target".into(), json!(TARGET_E2E_CMP_PER_S / 1e6));
        x.extra.insert(
            "fraction_of_target".into(),
            json!(s.per_s / TARGET_E2E_CMP_PER_S),
        );
        x.extra.insert("how".into(), json!(STEADY_STATE_HOW));
        out.push(x);
        out.push(m("second batch: matching time", s.matching_s, "s"));
        out.push(m("second batch: dot phase", s.dot_s, "s"));
        out.push(m("second batch: comparison phase", s.compare_s, "s"));
        if let Some(ops) = s.party0_op_seconds {
            let mut x = m("second batch: party 0's ops", s.matching_s, "s");
            x.extra.insert("party0_op_seconds".into(), json!(ops));
            if let Some(cpu) = s.party0_op_cpu_seconds {
                x.extra.insert("party0_op_cpu_seconds".into(), json!(cpu));
            }
            out.push(x);
        }
    }
    match (&e.additive, &e.two_batches) {
        (Some(Ok(a)), Some(two)) => {
            let mut x = m(
                "two batches with AdditiveMSB: matching time",
                a.matching_s,
                "s",
            );
            x.extra.insert("how".into(), json!(ADDITIVE_HOW));
            x.extra.insert("comparisons".into(), json!(a.comparisons));
            x.extra
                .insert("default_matching_s".into(), json!(two.matching_s));
            x.extra.insert(
                "ratio_to_default".into(),
                json!(a.matching_s / two.matching_s.max(1e-12)),
            );
            x.extra.insert("compare_s".into(), json!(a.compare_s));
            x.extra
                .insert("default_compare_s".into(), json!(two.compare_s));
            x.extra
                .insert("bytes_per_cmp".into(), json!(a.bytes_per_cmp));
            x.extra
                .insert("default_bytes_per_cmp".into(), json!(two.bytes_per_cmp));
            if let Some(ops) = op_seconds(a) {
                x.extra.insert("party0_op_seconds".into(), json!(ops));
            }
            if let Some(ops) = op_cpu_seconds(a) {
                x.extra.insert("party0_op_cpu_seconds".into(), json!(ops));
            }
            out.push(x);
            out.push(m(
                "two batches with AdditiveMSB: comparisons per second (matching)",
                per_second(a.comparisons as f64, a.matching_s) / 1e6,
                "M cmp/s",
            ));
            out.push(m(
                "two batches, default build: comparisons per second (matching)",
                per_second(two.comparisons as f64, two.matching_s) / 1e6,
                "M cmp/s",
            ));
        }
        (Some(Err(why)), _) => {
            let mut x = m("two batches with AdditiveMSB: matching time", f64::NAN, "s");
            x.extra.insert("error".into(), json!(why));
            out.push(x);
        }
        _ => {}
    }
    // Each party's GPU figures (`--stats`), of each run.
    let runs = [(f, "")]
        .into_iter()
        .chain(e.two_batches.iter().map(|t| (t, ", two batches")));
    for (run, which) in runs {
        for (p, a) in run.accounts.iter().enumerate() {
            if let Some(g) = a.get("gpu") {
                let mut x = m(
                    &format!("party {p} GPU{which}"),
                    g["dot_calls"].as_f64().unwrap_or(f64::NAN),
                    "dot calls",
                );
                x.extra.insert("gpu".into(), g.clone());
                out.push(x);
            }
        }
    }
    out
}

/// Writes `gpu.json` and `gpu.png` from what the device part measured.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
fn write(opts: &BenchOptions, dir: &Path, m: &Measured) -> Result<Vec<PathBuf>> {
    let peak = gemm_peak(&m.gemm);
    let mut measurements = dot_measurements(&m.dots, peak);
    for g in &m.gemm {
        measurements.push(Measurement {
            name: format!("cuBLAS int8 GEMM {0}x{0}x{0}", g.n),
            value: g.tops(),
            unit: "TOPS".into(),
            extra: BTreeMap::from([
                ("seconds_median".into(), json!(g.seconds)),
                ("repetitions".into(), json!(g.reps)),
                (
                    "what".into(),
                    json!("cublasGemmEx, CUDA_R_8I A^T x B, CUDA_R_32I out, CUBLAS_COMPUTE_32I"),
                ),
            ]),
        });
    }
    if let Some(p) = peak {
        measurements.push(Measurement {
            name: "int8 GEMM peak (cuBLAS, best size)".into(),
            value: p,
            unit: "TOPS".into(),
            extra: BTreeMap::new(),
        });
    }
    if let Some(e) = &m.e2e {
        measurements.extend(e2e_measurements(e));
    }
    let failed = |e: &Option<String>| e.as_ref().map(|s| json!({"status": "failed", "error": s}));
    let config = json!({
        "status": "ran",
        "device": m.device,
        "gpu_memory_total_bytes": m.gpu_total_bytes,
        "gpu_memory_free_bytes": m.gpu_free_bytes,
        "dot": {
            "code_len": CODE_LEN,
            "codes_per_call": BATCH_CODES,
            "rings": GpuRing::ALL.iter().map(|r| r.name()).collect::<Vec<_>>(),
            "records": m.dots.iter().map(|d| (d.ring.name().to_string(), json!(d.records))).collect::<serde_json::Map<_, _>>(),
            "ptx": "irisc::codegen::cuda::ptx_image of the three rings at l = 12 800, loaded with cudarc",
            "timing": "CUDA events around one launch of the dot kernel (gallery planes resident, query planes split before), warm-up first, median of the repetitions",
            "verified": "each configuration's output on the first and last 8 records against irisc_runtime::kernels::reference, before timing",
            "error": m.dot_error,
        },
        "gemm": failed(&m.gemm_error).unwrap_or(json!({
            "sizes": m.gemm.iter().map(|g| g.n).collect::<Vec<_>>(),
        })),
        "e2e": match (&m.e2e, &m.e2e_error) {
            (Some(e), _) => json!({
                "status": "ok",
                "program": "bench/programs/gpu_table3.irs (both eyes, public masks, intra-batch matching per eye)",
                "target": "cuda",
                "records": e.fit.records,
                "records_why": e.fit.why,
                "gpu_bound": e.fit.gpu_bound,
                "host_bound": e.fit.host_bound,
                "disk_bound": e.fit.disk_bound,
                "file_systems": e.disks.iter().map(|d| json!({
                    "name": d.name,
                    "free_bytes": d.free,
                    "party_stores": d.parties,
                    "ndjson": d.work,
                })).collect::<Vec<_>>(),
                "queries": e.queries,
                "schedule_query_batch": TABLE3_PEOPLE,
                "record_chunk": opts.gpu_record_chunk.unwrap_or(E2E_RECORD_CHUNK),
                "threads_per_party": e.threads_per_party,
                "parties": "three processes on this host, mutually authenticated TLS over loopback, all on the one GPU (IRISC_GPU unset: device 0)",
                "comparisons": "records x 2 eyes x 31 rotations x queries; matching = the slowest party's dot + comparison phases",
            }),
            (None, Some(err)) => json!({"status": "failed", "error": err}),
            (None, None) => json!({"status": "not run"}),
        },
    });
    let mut notes = m.notes.clone();
    notes.push(
        "effective int8 rate = limb products (3 for 16-bit words, 10 for 32-bit) x 2 x records x \
         codes x k_pad / seconds; the int8 peak is the best cuBLAS int8 GEMM of this run"
            .into(),
    );
    notes.push(
        "end to end: built with --query-batch 32, so the batch of 32 people is one kernel call \
         per eye (32 x 31 codes) and one set of comparison rounds; the gallery is uploaded to \
         the GPU in the first batch (its time is in the dot phase)"
            .into(),
    );
    let report = Report {
        section: "gpu".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config,
        measurements,
        references: references(),
        notes,
    };
    let mut files = vec![report.write(dir)?];
    files.extend(charts(dir, m)?);
    Ok(files)
}

#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
/// `gpu-dot.png`: dot products/s per ring and batch shape next to Table 1 and the GR16
/// target (G/s); `gpu-e2e.png` (when the end-to-end run ran): comparisons/s next to Table 3
/// and the target (M/s).
fn charts(dir: &Path, m: &Measured) -> Result<Vec<PathBuf>> {
    let mut groups = Vec::new();
    let mut measured: Vec<Vec<f64>> = vec![Vec::new(); GemmEngine::ALL.len()];
    let mut paper = Vec::new();
    for ring in GpuRing::ALL {
        for codes in BATCH_CODES {
            groups.push(format!("{} {codes} codes", ring.name()));
            for (e, engine) in GemmEngine::ALL.iter().enumerate() {
                let row = m
                    .dots
                    .iter()
                    .find(|d| d.ring == ring && d.codes == codes && d.engine == *engine && d.ok());
                measured[e].push(row.map_or(f64::NAN, |r| r.dots_per_s() / 1e9));
            }
            paper.push(ring.paper_per_s().map_or(f64::NAN, |p| p / 1e9));
        }
    }
    let mut series: Vec<(String, Vec<f64>)> = GemmEngine::ALL
        .iter()
        .zip(measured)
        .map(|(e, v)| (format!("measured, {} GEMM", e.name()), v))
        .collect();
    series.push(("paper 003 Table 1 (H100)".to_string(), paper));
    let dot = dir.join("gpu-dot.png");
    plot::grouped_bars(
        &dot,
        &format!("GPU dot products per second, l = 12 800 ({})", m.device),
        "G dot products / s",
        &groups,
        &series,
        &[RefLine {
            label: "target: GR16 10 G/s".into(),
            value: TARGET_GR16_DOT_PER_S / 1e9,
        }],
    )?;
    let mut files = vec![dot];
    if let Some(e) = &m.e2e {
        let path = dir.join("gpu-e2e.png");
        plot::grouped_bars(
            &path,
            &format!(
                "End to end, {} records x 2 eyes x 31 rotations x {} queries, three parties on one GPU",
                e.fit.records, e.queries
            ),
            "M comparisons / s",
            &[
                "measured (one batch, gallery uploaded)".to_string(),
                "measured (steady state, gallery resident)".to_string(),
                "two batches, default build".to_string(),
                "two batches, --msb-input additive".to_string(),
                "paper 003 Table 3 (per GPU)".to_string(),
            ],
            &[(
                "comparisons / s".to_string(),
                vec![
                    per_second(e.figures.comparisons as f64, e.figures.matching_s) / 1e6,
                    steady_state(e).map_or(f64::NAN, |s| s.per_s / 1e6),
                    e.two_batches
                        .as_ref()
                        .map_or(f64::NAN, |t| per_second(t.comparisons as f64, t.matching_s) / 1e6),
                    match &e.additive {
                        Some(Ok(a)) => per_second(a.comparisons as f64, a.matching_s) / 1e6,
                        _ => f64::NAN,
                    },
                    PAPER_TABLE3_CMP_PER_S / 1e6,
                ],
            )],
            &[RefLine {
                label: "target: 60 M/s".into(),
                value: TARGET_E2E_CMP_PER_S / 1e6,
            }],
        )?;
        files.push(path);
    }
    Ok(files)
}

#[cfg(test)]
mod tests;
