//! Section `dot`: one party's local dot-product work per second, per core, at l = 12 800 and
//! l = 1 024, for every ring irisc uses, next to a naive loop over the same ring compiled in this
//! binary.
//!
//! A "dot product" is one (query code, gallery record) pair; the batch is 31 rotations of a query
//! against N records. What one party computes per pair, each by every ISA variant of the kernel
//! irisc generates (JIT-compiled, see [`super::jit`]) that this CPU runs:
//! - Z16/Z32/Z64 replicated: two plain dot products of length l per pair (Appendix C eq. 6);
//! - GR(2^16, d), d = 2, 4: one 16-bit dot product of length d·⌈l/d⌉ per pair (Section 4.3.2);
//! - F_p (p = 2^16 − 17): one dot product of length l, reduced once mod p.
//!
//! Each figure's `peak_fraction` is its multiply-accumulates per second per core over the peak
//! [`super::peak`] measures first on this machine for the ring's lane width. Kernels are timed
//! as the peak is: the fastest of at least five runs of a fifth of the measurement each (a run
//! on a shared machine can only lose time to other work); `mean_per_core` and
//! `peak_fraction_mean` give the mean over all runs next to it.
//!
//! The gallery operands live in memory as a CPU party holds them: replicated components as
//! loaded (advised to take huge pages, `RingVec::with_capacity`), Shamir words as in the
//! store's map (ordinary pages).

use super::peak::{self, LaneWidth};
use super::report::{MachineInfo, Measurement, Report};
use super::{jit, plot, tile_loads, BenchOptions};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use irisc::analysis::kernel_tile::{choose, DotKind, KernelTile};
use irisc::codegen::cpu::kernel::amx::{form as amx_form, kernel_name as amx_kernel_name};
use irisc::codegen::cpu::kernel::polyphase::kernel_name as polyphase_kernel_name;
use irisc::codegen::cpu::kernel::{kernel_name, kernel_name_tiled, shape, DotRing, Isa};
use irisc_runtime::kernels::amx as amx_rt;
use irisc_runtime::kernels::dispatch::Isa as RtIsa;
use irisc_runtime::kernels::polyphase::Polyphase;
use irisc_runtime::ring::RingElem;
use irisc_runtime::share::fp;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Query rotations per batch (R = 15: s in -15..=15).
pub const ROTATIONS: usize = 31;
/// Code lengths measured.
pub const LENGTHS: [usize; 2] = [12_800, 1_024];
/// Paper 003, Table 1: GR(2^16) dot products per second per core on AWS Graviton3, l = 12 800.
pub const PAPER_GR16_PER_CORE: f64 = 1.53e6;
/// The target: 16-bit dot products per second per core at l = 12 800.
pub const TARGET_PER_CORE: f64 = 6.0e6;
/// Records a measurement of `codes` codes per call reads at (`ring`, `l`): the gallery bytes
/// of [`peak::gallery_bytes_for`] (all arrays; a gallery that streams from memory for few
/// codes) over the bytes per record, at least `2 * all`.
/// A row's limits next to its rate (`per_core` dot products/s): the memory roofline (one
/// thread's read bandwidth over the gallery bytes per dot product) and `limit_fraction`, the
/// rate over the lower of the 16-bit (lane) peak's dot products/s and that roofline: the
/// fraction of what this machine allows one core where the gallery stream, not the multiply,
/// is the ceiling.
fn insert_limits(
    extra: &mut BTreeMap<String, serde_json::Value>,
    ring: Ring,
    l: usize,
    codes: usize,
    per_core: f64,
    peak_macs_per_s: f64,
    stream_bytes_per_s: f64,
) {
    let bytes_per_dot = ring.gallery_bytes_per_record(l) as f64 / codes as f64;
    let memory = stream_bytes_per_s / bytes_per_dot;
    let compute = peak_macs_per_s / ring.macs_per_dot(l) as f64;
    extra.insert("gallery_bytes_per_dot".into(), json!(bytes_per_dot));
    extra.insert("memory_roofline_per_core".into(), json!(memory));
    extra.insert("compute_peak_per_core".into(), json!(compute));
    extra.insert(
        "limit".into(),
        json!(if memory < compute {
            "memory"
        } else {
            "compute"
        }),
    );
    extra.insert(
        "limit_fraction".into(),
        json!(per_core / memory.min(compute)),
    );
}

/// Gallery bytes of the overview rows (every ring and length, generated and naive, one and two
/// threads; not the targets' rows): 64 MiB, which may sit in a large last-level cache (a
/// streaming gallery made the naive loops' rows take most of a 16-minute section).
const OVERVIEW_GALLERY_BYTES: usize = 64 << 20;

fn records_for(ring: Ring, l: usize, codes: usize, all: usize) -> usize {
    (peak::gallery_bytes_for(codes) / ring.gallery_bytes_per_record(l)).max(2 * all)
}
/// Codes per kernel call of the batch shapes measured at l = 12 800: one query's 31 rotations,
/// a batch of 8 queries (the default `query-batch`), 32 queries of 62 rotations.
pub const BATCH_CODES: [usize; 3] = [31, 248, 1984];
/// Queries per call of the polyphase measurements (31 rotations each) at l = 12 800.
pub const POLYPHASE_QUERIES: [usize; 2] = [1, 8];
/// The rings the polyphase kernel exists for (GR(2^16, 4) runs GR(2^16, 2)'s kernel).
pub const POLYPHASE_RINGS: [Ring; 2] = [Ring::Z16, Ring::Gr2];

/// The rings whose batch shapes are measured (the 16-bit ones the targets are set for).
/// The rings an AMX kernel exists for, measured where the CPU runs AMX.
pub const AMX_RINGS: [Ring; 4] = [Ring::Z16, Ring::Gr2, Ring::Gr4, Ring::Fp];

pub const BATCH_RINGS: [Ring; 4] = [Ring::Z16, Ring::Gr2, Ring::Gr4, Ring::Fp];

/// The target fraction of the measured 16-bit peak for a ring's kernel.
pub fn target_fraction(ring: Ring) -> Option<f64> {
    match ring {
        Ring::Gr2 | Ring::Gr4 => Some(0.8),
        Ring::Z16 | Ring::Fp => Some(0.7),
        _ => None,
    }
}

/// The compiler's tile analysis input for a ring ([`irisc::analysis::kernel_tile`]).
fn tile_kind(ring: Ring) -> DotKind {
    match ring {
        Ring::Z16 => DotKind::Replicated { storage_bits: 16 },
        Ring::Z32 => DotKind::Replicated { storage_bits: 32 },
        Ring::Z64 => DotKind::Replicated { storage_bits: 64 },
        Ring::Gr2 | Ring::Gr4 => DotKind::Galois,
        Ring::Fp => DotKind::Prime,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ring {
    Z16,
    Z32,
    Z64,
    Gr2,
    Gr4,
    Fp,
}

pub const RINGS: [Ring; 6] = [
    Ring::Z16,
    Ring::Z32,
    Ring::Z64,
    Ring::Gr2,
    Ring::Gr4,
    Ring::Fp,
];

impl Ring {
    pub fn name(self) -> &'static str {
        match self {
            Ring::Z16 => "Z16",
            Ring::Z32 => "Z32",
            Ring::Z64 => "Z64",
            Ring::Gr2 => "GR16 d=2",
            Ring::Gr4 => "GR16 d=4",
            Ring::Fp => "F_p",
        }
    }
    /// Words per code entry stored by the gallery (bytes) and gallery arrays.
    fn gallery_bytes_per_record(self, l: usize) -> usize {
        match self {
            Ring::Z16 => 4 * l,
            Ring::Z32 => 8 * l,
            Ring::Z64 => 16 * l,
            Ring::Gr2 | Ring::Gr4 | Ring::Fp => 2 * self.words(l),
        }
    }
    /// Words per code for the Galois rings (d·⌈l/d⌉), l otherwise.
    fn words(self, l: usize) -> usize {
        match self {
            Ring::Gr2 => l.div_ceil(2) * 2,
            Ring::Gr4 => l.div_ceil(4) * 4,
            _ => l,
        }
    }
    /// Multiply-accumulates one party does per pair.
    pub fn macs_per_dot(self, l: usize) -> usize {
        match self {
            Ring::Z16 | Ring::Z32 | Ring::Z64 => 2 * l,
            _ => self.words(l),
        }
    }
}

// ---- the naive loops: plain Rust, same binary, inputs through black_box ----

/// Replicated local step, written plainly.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn naive_rep<T: RingElem>(
    qa: &[T],
    qb: &[T],
    n_codes: usize,
    ga: &[T],
    gb: &[T],
    n_records: usize,
    l: usize,
    out: &mut [T],
) {
    let (qa, qb, ga, gb) = (black_box(qa), black_box(qb), black_box(ga), black_box(gb));
    for r in 0..n_records {
        for c in 0..n_codes {
            let mut acc = T::ZERO;
            for i in 0..l {
                acc = acc
                    .wrapping_add(qa[c * l + i].wrapping_mul(ga[r * l + i]))
                    .wrapping_sub(qb[c * l + i].wrapping_mul(gb[r * l + i]));
            }
            out[r * n_codes + c] = acc;
        }
    }
}

/// Galois-ring local step (one 16-bit dot product per pair), written plainly.
#[inline(never)]
pub fn naive_gr(q: &[u16], n_codes: usize, g: &[u16], n_records: usize, w: usize, out: &mut [u16]) {
    let (q, g) = (black_box(q), black_box(g));
    for r in 0..n_records {
        for c in 0..n_codes {
            let mut acc = 0u16;
            for i in 0..w {
                acc = acc.wrapping_add(q[c * w + i].wrapping_mul(g[r * w + i]));
            }
            out[r * n_codes + c] = acc;
        }
    }
}

/// F_p local step (inputs below p < 2^16, so a u64 sum of l < 2^32 products cannot overflow).
#[inline(never)]
pub fn naive_fp(q: &[u16], n_codes: usize, g: &[u16], n_records: usize, l: usize, out: &mut [u16]) {
    let (q, g) = (black_box(q), black_box(g));
    for r in 0..n_records {
        for c in 0..n_codes {
            let mut acc = 0u64;
            for i in 0..l {
                acc += q[c * l + i] as u64 * g[r * l + i] as u64;
            }
            out[r * n_codes + c] = (acc % fp::P as u64) as u16;
        }
    }
}

// ---- timing ----

type Pass<'a> = Box<dyn Fn(Range<usize>) + Sync + 'a>;

/// Seconds for `reps` passes over records 0..n split evenly over `threads` threads.
fn time(threads: usize, n: usize, reps: usize, pass: &(dyn Fn(Range<usize>) + Sync)) -> f64 {
    let start = Instant::now();
    if threads <= 1 {
        for _ in 0..reps {
            pass(0..n);
        }
    } else {
        std::thread::scope(|s| {
            for t in 0..threads {
                let r = t * n / threads..(t + 1) * n / threads;
                s.spawn(move || {
                    for _ in 0..reps {
                        pass(r.clone());
                    }
                });
            }
        });
    }
    start.elapsed().as_secs_f64()
}

/// A kernel's timing, taken as the peak's ([`peak::measure`]): runs of `passes` passes each,
/// at least [`peak::RUNS`] of them and `min_secs` in all; the fastest run is the figure (on a
/// shared machine a run can only lose time to other work), the mean is reported next to it.
#[derive(Clone)]
struct Timing {
    /// Passes per run.
    passes: usize,
    /// The fastest run's seconds.
    best_secs: f64,
    runs: usize,
    /// Seconds of all runs.
    total_secs: f64,
}

impl Timing {
    /// Passes per second in the fastest run.
    fn best_rate(&self) -> f64 {
        self.passes as f64 / self.best_secs.max(1e-12)
    }

    /// Passes per second over all runs.
    fn mean_rate(&self) -> f64 {
        (self.passes * self.runs) as f64 / self.total_secs.max(1e-12)
    }
}

/// One warm-up pass (also the calibration), then runs of `min_secs / peak::RUNS` each.
fn measure(
    threads: usize,
    n: usize,
    min_secs: f64,
    pass: &(dyn Fn(Range<usize>) + Sync),
) -> Timing {
    let t1 = time(threads, n, 1, pass).max(1e-9);
    let per_run = min_secs / peak::RUNS as f64;
    let passes = ((per_run / t1).ceil() as usize).max(1);
    let (mut best_secs, mut total_secs, mut runs) = (f64::INFINITY, 0.0, 0);
    while runs < peak::RUNS || total_secs < min_secs {
        let s = time(threads, n, passes, pass);
        best_secs = best_secs.min(s);
        total_secs += s;
        runs += 1;
    }
    Timing {
        passes,
        best_secs,
        runs,
        total_secs,
    }
}

fn random<T>(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T>
where
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    (0..n).map(|_| rng.random()).collect()
}

/// Random replicated operands for `codes` query codes and `n` records: (qa, qb) for the codes,
/// (ga, gb) for the records.
fn rep_data<T>(
    codes: usize,
    n: usize,
    l: usize,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> (Vec<T>, Vec<T>, Vec<T>, Vec<T>)
where
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    // The gallery's components as a party loads them (`RingVec::with_capacity`): advised to
    // take huge pages. (Shamir galleries stay in their store's map: ordinary pages, as below.)
    let mut loaded = |n: usize| -> Vec<T> {
        let mut v = Vec::with_capacity(n);
        irisc_runtime::sys::advise_huge_pages(&mut v);
        v.extend((0..n).map(|_| rng.random::<T>()));
        v
    };
    let (ga, gb) = (loaded(n * l), loaded(n * l));
    (random(codes * l, rng), random(codes * l, rng), ga, gb)
}

/// A generated-kernel pass for a replicated ring with storage `T`.
fn rep_pass<'a, T: RingElem>(
    f: jit::KernelFn<T>,
    data: &'a (Vec<T>, Vec<T>, Vec<T>, Vec<T>),
    l: usize,
) -> Pass<'a> {
    rep_pass_codes(f, data, l, ROTATIONS)
}

/// [`rep_pass`] for `codes` codes per call (the query arrays hold them).
fn rep_pass_codes<'a, T: RingElem>(
    f: jit::KernelFn<T>,
    data: &'a (Vec<T>, Vec<T>, Vec<T>, Vec<T>),
    l: usize,
    codes: usize,
) -> Pass<'a> {
    Box::new(move |r: Range<usize>| {
        let (qa, qb, ga, gb) = data;
        let mut out = vec![T::ZERO; codes * r.len()];
        // SAFETY: the buffers hold ROTATIONS codes and r.end <= N records of l words each.
        unsafe {
            f(
                qa.as_ptr(),
                qb.as_ptr(),
                codes as i64,
                ga[r.start * l..].as_ptr(),
                gb[r.start * l..].as_ptr(),
                r.len() as i64,
                out.as_mut_ptr(),
            )
        };
        black_box(&out);
    })
}

/// The naive pass for a replicated ring.
fn naive_rep_pass<'a, T: RingElem>(
    data: &'a (Vec<T>, Vec<T>, Vec<T>, Vec<T>),
    l: usize,
) -> Pass<'a> {
    Box::new(move |r: Range<usize>| {
        let (qa, qb, ga, gb) = data;
        let mut out = vec![T::ZERO; ROTATIONS * r.len()];
        let (ga, gb) = (&ga[r.start * l..r.end * l], &gb[r.start * l..r.end * l]);
        naive_rep(qa, qb, ROTATIONS, ga, gb, r.len(), l, &mut out);
        black_box(&out);
    })
}

/// One-sided kernel pass (GR16, F_p): `w` words per code.
fn one_side_pass<'a>(f: jit::KernelFn<u16>, q: &'a [u16], g: &'a [u16], w: usize) -> Pass<'a> {
    let codes = q.len() / w.max(1);
    Box::new(move |r: Range<usize>| {
        let mut out = vec![0u16; codes * r.len()];
        // SAFETY: q holds ROTATIONS codes and g r.end <= N records of w words each; one-sided
        // kernels do not read the side-b pointers.
        unsafe {
            f(
                q.as_ptr(),
                std::ptr::null(),
                codes as i64,
                g[r.start * w..].as_ptr(),
                std::ptr::null(),
                r.len() as i64,
                out.as_mut_ptr(),
            )
        };
        black_box(&out);
    })
}

/// The measured peak a ring's multiply-accumulates are judged against: 16-bit lanes for Z16,
/// GR16 and F_p (16-bit words, `vpdpwssd`/`vpmaddwd`), 32-bit for Z32, 64-bit for Z64.
fn peak_lane(ring: Ring) -> LaneWidth {
    match ring {
        Ring::Z16 | Ring::Gr2 | Ring::Gr4 | Ring::Fp => LaneWidth::W16,
        Ring::Z32 => LaneWidth::W32,
        Ring::Z64 => LaneWidth::W64,
    }
}

/// The generated kernel family of a ring and its words per code at length `l`.
fn dot_ring(ring: Ring, l: usize) -> (DotRing, u32) {
    let r = match ring {
        Ring::Z16 => DotRing::Z16,
        Ring::Z32 => DotRing::Z32,
        Ring::Z64 => DotRing::Z64,
        Ring::Gr2 | Ring::Gr4 => DotRing::Gr16,
        Ring::Fp => DotRing::Fp,
    };
    (r, ring.words(l) as u32)
}

/// Runs the section: writes `dot.json` and `dot-l<l>.png` per length into `dir`.
pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let machine = MachineInfo::collect();
    let all = machine.logical_cpus.max(1);
    let thread_counts: Vec<usize> = if all > 1 { vec![1, all] } else { vec![1] };
    let min_secs = if opts.quick { 0.005 } else { 0.5 };
    let isas: Vec<Isa> = Isa::ALL
        .into_iter()
        .filter(|i| RtIsa::ALL[i.index()].supported())
        .collect();
    let skipped: Vec<&str> = Isa::ALL
        .into_iter()
        .filter(|i| !isas.contains(i))
        .map(|i| i.name())
        .collect();
    let total = LENGTHS.len() * RINGS.len() * (isas.len() + 1) * thread_counts.len()
        + BATCH_RINGS.len() * BATCH_CODES.len()
        + POLYPHASE_RINGS.len() * POLYPHASE_QUERIES.len();
    let bar = if opts.progress {
        let b = ProgressBar::new(total as u64);
        if let Ok(s) = ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}") {
            b.set_style(s);
        }
        b
    } else {
        ProgressBar::hidden()
    };
    let mut kernels: Vec<(DotRing, u32)> = LENGTHS
        .iter()
        .flat_map(|&l| RINGS.iter().map(move |&r| dot_ring(r, l)))
        .collect();
    kernels.sort();
    kernels.dedup();
    // The denominators of every peak_fraction: measured here, on one thread, before the kernels.
    let peak_secs = if opts.quick { 0.02 } else { 1.0 };
    let peaks: Vec<peak::Peak> = LaneWidth::ALL
        .iter()
        .map(|&lane| peak::measure(lane, peak_secs))
        .collect();
    let other_peaks = peak::others(peak_secs);
    let amx_peak = peak::amx(peak_secs);
    // The memory ceiling of kernels that stream their gallery (few codes per call).
    let stream_bytes_per_s = peak::stream_read_bytes_per_s(peak_secs);
    let peak_of = |ring: Ring| {
        let lane = peak_lane(ring);
        peaks
            .iter()
            .find(|p| p.lane == lane)
            .expect("every lane width is measured")
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
    let mut records_used = BTreeMap::new();
    let mut ms: Vec<Measurement> = Vec::new();
    // The batch shapes: the tile the compiler's analysis chooses for each code count.
    let batch_l = LENGTHS[0];
    let batch_codes: Vec<usize> = if opts.quick {
        vec![BATCH_CODES[0], BATCH_CODES[1]]
    } else {
        BATCH_CODES.to_vec()
    };
    let batch_tiles: Vec<(Ring, usize, KernelTile)> = BATCH_RINGS
        .iter()
        .flat_map(|&r| {
            batch_codes
                .iter()
                .map(move |&c| (r, c, choose(tile_kind(r), c as u64)))
        })
        .collect();
    let mut jit_kernels: Vec<(DotRing, u32, Option<KernelTile>)> =
        kernels.iter().map(|&(r, w)| (r, w, None)).collect();
    for &(ring, _, tile) in &batch_tiles {
        let (dr, words) = dot_ring(ring, batch_l);
        jit_kernels.push((dr, words, Some(tile)));
        if tile.unchunked_alternative {
            jit_kernels.push((dr, words, Some(tile.unchunked())));
        }
    }
    jit_kernels.sort();
    jit_kernels.dedup();
    let best_isa = isas.last().copied().unwrap_or(Isa::Portable);
    // Half rows per call: 3 x 16 per query of 31 rotations.
    let half_rows = |queries: usize| (48 * queries) as u64;
    let polyphase_kernels: Vec<(DotRing, u32, u64)> = POLYPHASE_RINGS
        .iter()
        .flat_map(|&r| {
            let (dr, words) = dot_ring(r, batch_l);
            POLYPHASE_QUERIES
                .iter()
                .map(move |&q| (dr, words, half_rows(q)))
        })
        .collect();
    jit::with_all_kernels(&jit_kernels, &polyphase_kernels, |k| -> Result<()> {
        for &l in &LENGTHS {
            for ring in RINGS {
                let n = if opts.quick {
                    all
                } else {
                    (OVERVIEW_GALLERY_BYTES / ring.gallery_bytes_per_record(l)).clamp(2 * all, 8192)
                };
                records_used.insert(format!("{} l={l}", ring.name()), n);
                let w = ring.words(l);
                let (dr, words) = dot_ring(ring, l);
                // Data for this (ring, l); dropped before the next.
                let d16 = (ring == Ring::Z16).then(|| rep_data::<u16>(ROTATIONS, n, l, &mut rng));
                let d32 = (ring == Ring::Z32).then(|| rep_data::<u32>(ROTATIONS, n, l, &mut rng));
                let d64 = (ring == Ring::Z64).then(|| rep_data::<u64>(ROTATIONS, n, l, &mut rng));
                let (q, g): (Vec<u16>, Vec<u16>) = match ring {
                    Ring::Gr2 | Ring::Gr4 => {
                        (random(ROTATIONS * w, &mut rng), random(n * w, &mut rng))
                    }
                    Ring::Fp => (
                        (0..ROTATIONS * l)
                            .map(|_| rng.random_range(0..fp::P))
                            .collect(),
                        (0..n * l).map(|_| rng.random_range(0..fp::P)).collect(),
                    ),
                    _ => (Vec::new(), Vec::new()),
                };
                let (q, g) = (&q, &g);
                let missing = |isa: Isa| anyhow::anyhow!("JIT kernel {ring:?} l = {l} {isa:?}");
                let mut passes: Vec<(String, String, Pass)> = Vec::new();
                for &isa in &isas {
                    if !k.variants(dr, words).contains(&isa) {
                        continue;
                    }
                    let pass: Pass = match ring {
                        Ring::Z16 => {
                            let f = unsafe { k.get::<u16>(dr, words, isa) };
                            rep_pass(f.ok_or_else(|| missing(isa))?, d16.as_ref().unwrap(), l)
                        }
                        Ring::Z32 => {
                            let f = unsafe { k.get::<u32>(dr, words, isa) };
                            rep_pass(f.ok_or_else(|| missing(isa))?, d32.as_ref().unwrap(), l)
                        }
                        Ring::Z64 => {
                            let f = unsafe { k.get::<u64>(dr, words, isa) };
                            rep_pass(f.ok_or_else(|| missing(isa))?, d64.as_ref().unwrap(), l)
                        }
                        Ring::Gr2 | Ring::Gr4 | Ring::Fp => {
                            let f = unsafe { k.get::<u16>(dr, words, isa) };
                            one_side_pass(f.ok_or_else(|| missing(isa))?, q, g, w)
                        }
                    };
                    passes.push((
                        isa.name().to_string(),
                        format!(
                            "irisc LLVM kernel {} ({}, JIT)",
                            kernel_name(dr, words, isa),
                            isa.name()
                        ),
                        pass,
                    ));
                }
                let naive: Pass = match ring {
                    Ring::Z16 => naive_rep_pass(d16.as_ref().unwrap(), l),
                    Ring::Z32 => naive_rep_pass(d32.as_ref().unwrap(), l),
                    Ring::Z64 => naive_rep_pass(d64.as_ref().unwrap(), l),
                    Ring::Gr2 | Ring::Gr4 => Box::new(move |r: Range<usize>| {
                        let mut out = vec![0u16; ROTATIONS * r.len()];
                        naive_gr(
                            q,
                            ROTATIONS,
                            &g[r.start * w..r.end * w],
                            r.len(),
                            w,
                            &mut out,
                        );
                        black_box(&out);
                    }),
                    Ring::Fp => Box::new(move |r: Range<usize>| {
                        let mut out = vec![0u16; ROTATIONS * r.len()];
                        naive_fp(
                            q,
                            ROTATIONS,
                            &g[r.start * l..r.end * l],
                            r.len(),
                            l,
                            &mut out,
                        );
                        black_box(&out);
                    }),
                };
                passes.push((
                    "naive".into(),
                    "naive Rust loop (#[inline(never)], black_box inputs)".into(),
                    naive,
                ));
                for (kind, implementation, pass) in &passes {
                    for &threads in &thread_counts {
                        let name = format!("dot/{}/{kind}/l={l}/threads={threads}", ring.name());
                        bar.set_message(name.clone());
                        let t = measure(threads, n, min_secs, pass.as_ref());
                        let (reps, secs) = (t.passes, t.best_secs);
                        let dots = (reps * n * ROTATIONS) as f64;
                        let total_rate = dots / secs;
                        let per_core = total_rate / threads as f64;
                        let per_core_mean = t.mean_rate() * (n * ROTATIONS) as f64 / threads as f64;
                        let macs = ring.macs_per_dot(l);
                        let mut extra = BTreeMap::new();
                        extra.insert("ring".into(), json!(ring.name()));
                        extra.insert("kind".into(), json!(kind));
                        extra.insert("implementation".into(), json!(implementation));
                        extra.insert("l".into(), json!(l));
                        extra.insert("words_per_code".into(), json!(w));
                        extra.insert("threads".into(), json!(threads));
                        extra.insert("records".into(), json!(n));
                        extra.insert("codes_per_record".into(), json!(ROTATIONS));
                        extra.insert("passes".into(), json!(reps));
                        extra.insert("seconds".into(), json!(secs));
                        extra.insert("runs".into(), json!(t.runs));
                        extra.insert("mean_per_core".into(), json!(per_core_mean));
                        extra.insert("dot_products".into(), json!(dots));
                        extra.insert("total_rate".into(), json!(total_rate));
                        extra.insert(
                            "total_rate_unit".into(),
                            json!("dot products/s (all threads)"),
                        );
                        extra.insert("macs_per_dot".into(), json!(macs));
                        let peak = peak_of(ring);
                        extra.insert("peak_macs_per_s_per_core".into(), json!(peak.macs_per_s));
                        extra.insert("peak_instruction".into(), json!(peak.instruction));
                        extra.insert(
                            "peak_fraction".into(),
                            json!(per_core * macs as f64 / peak.macs_per_s),
                        );
                        extra.insert(
                            "peak_fraction_mean".into(),
                            json!(per_core_mean * macs as f64 / peak.macs_per_s),
                        );
                        if l == 12_800 {
                            extra.insert(
                                "ratio_to_paper_gr16_graviton3".into(),
                                json!(per_core / PAPER_GR16_PER_CORE),
                            );
                            extra.insert(
                                "ratio_to_target_6m".into(),
                                json!(per_core / TARGET_PER_CORE),
                            );
                        }
                        ms.push(Measurement {
                            name,
                            value: per_core,
                            unit: "dot products/s per core".into(),
                            extra,
                        });
                        bar.inc(1);
                    }
                }
            }
        }
        // The batch shapes at l = 12 800, one thread, the dispatched variant with the tile the
        // compiler chose for the shape's codes per call.
        for &(ring, codes, tile) in &batch_tiles {
            let l = batch_l;
            let n = if opts.quick {
                all
            } else {
                records_for(ring, l, codes, all)
            };
            let w = ring.words(l);
            let (dr, words) = dot_ring(ring, l);
            let name = format!("dot/{}/batch/codes={codes}/l={l}/threads=1", ring.name());
            bar.set_message(name.clone());
            let d16 = (ring == Ring::Z16).then(|| rep_data::<u16>(codes, n, l, &mut rng));
            let top = if ring == Ring::Fp { fp::P } else { u16::MAX };
            let (q, g): (Vec<u16>, Vec<u16>) = if ring == Ring::Z16 {
                (Vec::new(), Vec::new())
            } else {
                (
                    (0..codes * w).map(|_| rng.random_range(0..top)).collect(),
                    (0..n * w).map(|_| rng.random_range(0..top)).collect(),
                )
            };
            let time = |tile: &KernelTile| -> Result<Timing> {
                // SAFETY: u16 is the storage word of every batch ring.
                let f = unsafe { k.get_tiled::<u16>(dr, words, Some(*tile), best_isa) }
                    .ok_or_else(|| anyhow::anyhow!("JIT kernel {ring:?} {codes} codes"))?;
                let pass: Pass = match &d16 {
                    Some(d) => rep_pass_codes(f, d, l, codes),
                    None => one_side_pass(f, &q, &g, w),
                };
                Ok(measure(1, n, min_secs, pass.as_ref()))
            };
            // Where the table offers the unchunked nest too, the parties measure both and run
            // the faster (`irisc_runtime::kernels::nest`): so does the bench, and it reports
            // both.
            let compilers = time(&tile)?;
            let unchunked = match tile.unchunked_alternative {
                true => Some(time(&tile.unchunked())?),
                false => None,
            };
            let rate = |t: &Timing| t.best_rate() * (n * codes) as f64;
            let (t, ran_unchunked) = match &unchunked {
                Some(u) if rate(u) > rate(&compilers) => (u.clone(), true),
                _ => (compilers.clone(), false),
            };
            let (reps, secs) = (t.passes, t.best_secs);
            let per_core = t.best_rate() * (n * codes) as f64;
            let per_core_mean = t.mean_rate() * (n * codes) as f64;
            let macs = ring.macs_per_dot(l);
            let peak = peak_of(ring);
            let fraction = per_core * macs as f64 / peak.macs_per_s;
            let fraction_mean = per_core_mean * macs as f64 / peak.macs_per_s;
            let ran = if ran_unchunked {
                tile.unchunked()
            } else {
                tile
            };
            let nest = shape(best_isa, dr, words, Some(&ran));
            let mut extra = BTreeMap::new();
            extra.insert("compiler_nest_per_core".into(), json!(rate(&compilers)));
            if let Some(u) = &unchunked {
                extra.insert("unchunked_nest_per_core".into(), json!(rate(u)));
            }
            extra.insert(
                "nest_ran".into(),
                json!(if ran_unchunked {
                    "unchunked"
                } else {
                    "compiler's"
                }),
            );
            extra.insert("ring".into(), json!(ring.name()));
            extra.insert("kind".into(), json!("batch"));
            extra.insert("isa".into(), json!(best_isa.name()));
            extra.insert(
                "implementation".into(),
                json!(format!(
                    "irisc LLVM kernel {} (JIT)",
                    kernel_name_tiled(dr, words, best_isa, Some(&ran))
                )),
            );
            extra.insert("l".into(), json!(l));
            extra.insert("words_per_code".into(), json!(w));
            extra.insert("threads".into(), json!(1));
            extra.insert("records".into(), json!(n));
            extra.insert("codes_per_call".into(), json!(codes));
            extra.insert("tile".into(), json!([tile.records, tile.codes]));
            extra.insert("tile_used".into(), json!([nest.tile.0, nest.tile.1]));
            extra.insert("code_panel_bytes".into(), json!(tile.panel_bytes));
            extra.insert("code_panel_codes".into(), json!(nest.code_panel));
            extra.insert("k_chunk_words".into(), json!(nest.k_chunk));
            extra.insert("record_panel_bytes".into(), json!(tile.record_panel_bytes));
            extra.insert("record_panel_records".into(), json!(nest.record_panel));
            extra.insert("passes".into(), json!(reps));
            extra.insert("seconds".into(), json!(secs));
            extra.insert("macs_per_dot".into(), json!(macs));
            extra.insert("peak_macs_per_s_per_core".into(), json!(peak.macs_per_s));
            extra.insert("peak_instruction".into(), json!(peak.instruction));
            extra.insert("peak_fraction".into(), json!(fraction));
            extra.insert("runs".into(), json!(t.runs));
            extra.insert("mean_per_core".into(), json!(per_core_mean));
            extra.insert("peak_fraction_mean".into(), json!(fraction_mean));
            insert_limits(
                &mut extra,
                ring,
                l,
                codes,
                per_core,
                peak.macs_per_s,
                stream_bytes_per_s,
            );
            if let Some(t) = target_fraction(ring) {
                extra.insert("target_fraction".into(), json!(t));
                extra.insert("meets_target".into(), json!(fraction >= t));
            }
            ms.push(Measurement {
                name,
                value: per_core,
                unit: "dot products/s per core".into(),
                extra,
            });
            bar.inc(1);
        }
        // The polyphase kernel against the plain one, one thread, the dispatched variant, in
        // one process: 31 rotations of 1 and 8 queries, its output combined per rotation (the
        // query's half rows are laid out once per query, outside the timing).
        for &ring in &POLYPHASE_RINGS {
            for &queries in &POLYPHASE_QUERIES {
                let l = batch_l;
                let codes = queries * ROTATIONS;
                let n = if opts.quick {
                    all
                } else {
                    records_for(ring, l, codes, all)
                };
                let (dr, words) = dot_ring(ring, l);
                let name = format!(
                    "dot/{}/polyphase/codes={codes}/l={l}/threads=1",
                    ring.name()
                );
                bar.set_message(name.clone());
                let form = Polyphase::new(-15, 15, words as usize)
                    .ok_or_else(|| anyhow::anyhow!("no polyphase form at l = {l}"))?;
                let data = rep_data::<u16>(codes, n, l, &mut rng);
                let sides = dr.sides() as usize;
                let qa = form.query_rows(&data.0, queries);
                let qb = form.query_rows(&data.1, queries);
                // The plain kernel the parties would run instead: the compiler's tile for these
                // codes per call, or its unchunked nest where the table offers it and it is
                // faster (as the batch shapes above and the runtime choose).
                let tile = choose(tile_kind(ring), codes as u64);
                let mut plain_tiles = vec![tile];
                if tile.unchunked_alternative {
                    plain_tiles.push(tile.unchunked());
                }
                let poly_f = unsafe { k.get_polyphase(dr, words, half_rows(queries), best_isa) }
                    .ok_or_else(|| anyhow::anyhow!("JIT polyphase kernel {ring:?}"))?;
                let wide = form.kernel_rows(queries);
                let (qa, qb, data) = (&qa, &qb, &data);
                let side_b = move |v: &[u16]| {
                    if sides == 2 {
                        v.as_ptr()
                    } else {
                        std::ptr::null()
                    }
                };
                let plain_pass = |t: &KernelTile| -> Result<Pass> {
                    // SAFETY: u16 is the storage word of both rings.
                    let plain_f = unsafe { k.get_tiled::<u16>(dr, words, Some(*t), best_isa) }
                        .ok_or_else(|| anyhow::anyhow!("JIT kernel {ring:?} {codes} codes"))?;
                    Ok(Box::new(move |r: Range<usize>| {
                        let mut out = vec![0u16; codes * r.len()];
                        // SAFETY: the buffers hold `codes` codes and r.end <= n records of l
                        // words.
                        unsafe {
                            plain_f(
                                data.0.as_ptr(),
                                side_b(&data.1),
                                codes as i64,
                                data.2[r.start * l..].as_ptr(),
                                side_b(&data.3[r.start * l..]),
                                r.len() as i64,
                                out.as_mut_ptr(),
                            )
                        };
                        black_box(&out);
                    }))
                };
                let poly: Pass = Box::new(move |r: Range<usize>| {
                    let mut wide_out = Vec::new();
                    let mut out = vec![0u16; codes * r.len()];
                    fn side(v: &[u16], sides: usize) -> Option<&[u16]> {
                        (sides == 2).then_some(v)
                    }
                    // SAFETY: a polyphase kernel of this ring's sides; r.end <= n records.
                    unsafe {
                        jit::call_polyphase(
                            poly_f,
                            &form,
                            queries,
                            (qa, side(qb, sides)),
                            (&data.2[r.start * l..], side(&data.3[r.start * l..], sides)),
                            r.len(),
                            &mut wide_out,
                            &mut out,
                        )
                    };
                    black_box(&out);
                });
                let per_dot = |t: &Timing| t.best_rate() * (n * codes) as f64;
                let mut plain_rate: f64 = 0.0;
                for t in &plain_tiles {
                    let pass = plain_pass(t)?;
                    plain_rate = plain_rate.max(per_dot(&measure(1, n, min_secs, pass.as_ref())));
                }
                let rate = per_dot(&measure(1, n, min_secs, poly.as_ref()));
                let macs = ring.macs_per_dot(l);
                let peak = peak_of(ring);
                let mut extra = BTreeMap::new();
                extra.insert("ring".into(), json!(ring.name()));
                extra.insert("kind".into(), json!("polyphase"));
                extra.insert("isa".into(), json!(best_isa.name()));
                extra.insert(
                    "implementation".into(),
                    json!(format!(
                        "irisc LLVM kernel {} (JIT) and the runtime's combination",
                        polyphase_kernel_name(dr, words, best_isa, half_rows(queries))
                    )),
                );
                extra.insert("l".into(), json!(l));
                extra.insert("queries".into(), json!(queries));
                extra.insert("codes_per_call".into(), json!(codes));
                extra.insert("half_rows_per_call".into(), json!(wide));
                extra.insert("records".into(), json!(n));
                extra.insert("threads".into(), json!(1));
                extra.insert(
                    "plain_kernel".into(),
                    json!("the compiler's tiled plain kernel for these codes per call (the faster of its nests)"),
                );
                extra.insert("plain_per_core".into(), json!(plain_rate));
                extra.insert("ratio_to_plain".into(), json!(rate / plain_rate));
                extra.insert("macs_per_dot_plain".into(), json!(macs));
                extra.insert(
                    "macs_issued_per_dot".into(),
                    json!(macs as f64 * (wide as f64 / 2.0) / codes as f64),
                );
                extra.insert("peak_macs_per_s_per_core".into(), json!(peak.macs_per_s));
                extra.insert("peak_instruction".into(), json!(peak.instruction));
                // Dot products at the plain kernel's L multiply-accumulates each over the
                // peak: above 1 where the polyphase form saves more than the kernel loses.
                extra.insert(
                    "plain_equivalent_peak_fraction".into(),
                    json!(rate * macs as f64 / peak.macs_per_s),
                );
                extra.insert(
                    "plain_peak_fraction".into(),
                    json!(plain_rate * macs as f64 / peak.macs_per_s),
                );
                ms.push(Measurement {
                    name,
                    value: rate,
                    unit: "dot products/s per core".into(),
                    extra,
                });
                bar.inc(1);
            }
        }
        // The AMX kernels, where this CPU runs them: the batch shapes' codes per call, one
        // thread, whole record blocks, the query's columns laid out once outside the timing
        // (as the runtime lays them out once per call), against the same vector kernel rows.
        if let Some(amx_peak) = &amx_peak {
            for &ring in &AMX_RINGS {
                for &codes in &batch_codes {
                    let l = batch_l;
                    let (dr, words) = dot_ring(ring, l);
                    let Some(f) = k.get_amx(dr, words) else {
                        continue;
                    };
                    let name = format!("dot/{}/amx/codes={codes}/l={l}/threads=1", ring.name());
                    bar.set_message(name.clone());
                    let n = if opts.quick {
                        all
                    } else {
                        records_for(ring, l, codes, all)
                    }
                    .next_multiple_of(amx_rt::RECORD_BLOCK);
                    let w = words as usize;
                    let mut data = rep_data::<u16>(codes, n, w, &mut rng);
                    let form = amx_form(dr).ok_or_else(|| anyhow::anyhow!("no AMX form"))?;
                    if ring == Ring::Fp {
                        // F_p words are below p.
                        let p = irisc_runtime::share::fp::P;
                        for v in [&mut data.0, &mut data.2] {
                            v.iter_mut().for_each(|x| *x %= p);
                        }
                    }
                    let two = dr.sides() == 2;
                    let cols = amx_rt::Columns::of_form(
                        form,
                        (&data.0, two.then_some(&data.1[..])),
                        codes,
                        w,
                    );
                    let (cols, data) = (&cols, &data);
                    let pass: Pass = Box::new(move |r: Range<usize>| {
                        let mut out = vec![0u16; codes * r.len()];
                        let g = (&data.2[r.start * w..], two.then(|| &data.3[r.start * w..]));
                        // SAFETY: an AMX kernel of this ring's sides and words; AMX is
                        // available (amx_peak was measured); r.end <= n records of w words,
                        // whole blocks but for a last range's records, which the vector
                        // kernel cannot be asked for here: the ranges are whole blocks.
                        unsafe {
                            amx_rt::run_blocks(f, cols, g, w, &mut out, &mut |_, _, _| {
                                unreachable!("whole record blocks")
                            })
                        };
                        black_box(&out);
                    });
                    let t = measure(1, n, min_secs, pass.as_ref());
                    let rate = t.best_rate() * (n * codes) as f64;
                    // The nest's tile loads alone over the same gallery and columns.
                    let nest = tile_loads::Nest {
                        records: n,
                        steps: w / amx_rt::STEP_WORDS,
                        tiles: cols.tiles(),
                    };
                    let ceiling = tile_loads::ceiling(
                        nest,
                        codes,
                        dr.sides() as usize,
                        bytemuck::cast_slice(&data.2[..n * w]),
                        cols.bytes(),
                        3,
                    );
                    let macs = ring.macs_per_dot(l);
                    let peak = peak_of(ring);
                    // Byte products issued per dot product: 4 per word product (two columns of
                    // two bytes; 6 for F_p's three), the code tiles padded to whole pairs.
                    let padded = cols.tiles() * form.codes_per_tile();
                    let per_word = 2.0 * form.columns() as f64;
                    let byte_macs = per_word * macs as f64 * padded as f64 / codes as f64;
                    let vector = ms
                        .iter()
                        .find(|m| {
                            m.name
                                == format!(
                                    "dot/{}/batch/codes={codes}/l={l}/threads=1",
                                    ring.name()
                                )
                        })
                        .map(|m| m.value);
                    let mut extra = BTreeMap::new();
                    extra.insert("ring".into(), json!(ring.name()));
                    extra.insert("kind".into(), json!("amx"));
                    extra.insert(
                        "implementation".into(),
                        json!(format!(
                            "irisc LLVM kernel {} (JIT) over the runtime's query columns",
                            amx_kernel_name(dr, words)
                        )),
                    );
                    extra.insert("l".into(), json!(l));
                    extra.insert("codes_per_call".into(), json!(codes));
                    extra.insert("records".into(), json!(n));
                    extra.insert("threads".into(), json!(1));
                    extra.insert("macs_per_dot".into(), json!(macs));
                    extra.insert("peak_macs_per_s_per_core".into(), json!(peak.macs_per_s));
                    extra.insert("peak_instruction".into(), json!(peak.instruction));
                    // Over the 16-bit vector peak (above 1: the tiles do more than the vector
                    // units can) and over the tile multiply's own peak.
                    extra.insert(
                        "peak_fraction".into(),
                        json!(rate * macs as f64 / peak.macs_per_s),
                    );
                    extra.insert("byte_macs_issued_per_dot".into(), json!(byte_macs));
                    extra.insert(
                        "amx_peak_byte_macs_per_s".into(),
                        json!(amx_peak.macs_per_s),
                    );
                    extra.insert(
                        "amx_peak_fraction".into(),
                        json!(rate * byte_macs / amx_peak.macs_per_s),
                    );
                    insert_limits(
                        &mut extra,
                        ring,
                        l,
                        codes,
                        rate,
                        peak.macs_per_s,
                        stream_bytes_per_s,
                    );
                    if let Some(c) = ceiling {
                        extra.insert("tile_load_ceiling_per_core".into(), json!(c));
                        extra.insert("tile_load_fraction".into(), json!(rate / c));
                    }
                    if let Some(v) = vector {
                        extra.insert("vector_batch_per_core".into(), json!(v));
                        extra.insert("ratio_to_vector_batch".into(), json!(rate / v));
                    }
                    if let Some(t) = target_fraction(ring) {
                        extra.insert("target_fraction".into(), json!(t));
                    }
                    extra.insert("passes".into(), json!(t.passes));
                    extra.insert("seconds".into(), json!(t.best_secs));
                    ms.push(Measurement {
                        name,
                        value: rate,
                        unit: "dot products/s per core".into(),
                        extra,
                    });
                }
            }
        }
        Ok(())
    })??;
    bar.finish_and_clear();

    // "generated": the variant the runtime dispatches to on this CPU (the best one generated),
    // a copy of that variant's figure; ratios of it to its naive twin.
    let rates: BTreeMap<String, f64> = ms.iter().map(|m| (m.name.clone(), m.value)).collect();
    let mut best = Vec::new();
    for &l in &LENGTHS {
        for ring in RINGS {
            for &threads in &thread_counts {
                let pick = isas.iter().rev().find_map(|isa| {
                    let n = format!("dot/{}/{}/l={l}/threads={threads}", ring.name(), isa.name());
                    ms.iter().find(|m| m.name == n)
                });
                if let Some(m) = pick {
                    let mut m = m.clone();
                    let naive = format!("dot/{}/naive/l={l}/threads={threads}", ring.name());
                    m.name = format!("dot/{}/generated/l={l}/threads={threads}", ring.name());
                    m.extra.insert("isa".into(), m.extra["kind"].clone());
                    m.extra.insert("kind".into(), json!("generated"));
                    if let Some(&nv) = rates.get(&naive) {
                        m.extra.insert("ratio_to_naive".into(), json!(m.value / nv));
                    }
                    best.push(m);
                }
            }
        }
    }
    ms.extend(best);
    let rates: BTreeMap<String, f64> = ms.iter().map(|m| (m.name.clone(), m.value)).collect();

    let mut files = Vec::new();
    for &l in &LENGTHS {
        let groups: Vec<String> = RINGS.iter().map(|r| r.name().to_string()).collect();
        let mut series = Vec::new();
        for &threads in &thread_counts {
            let kinds = isas.iter().map(|i| i.name()).chain(["naive"]);
            for kind in kinds {
                let vals = RINGS
                    .iter()
                    .map(|r| {
                        let n = format!("dot/{}/{kind}/l={l}/threads={threads}", r.name());
                        rates.get(&n).map_or(f64::NAN, |v| v / 1e6)
                    })
                    .collect();
                series.push((format!("{kind}, {threads} thr"), vals));
            }
        }
        let refs = if l == 12_800 {
            vec![
                plot::RefLine {
                    label: "paper GR16 Graviton3 1.53 M/s".into(),
                    value: PAPER_GR16_PER_CORE / 1e6,
                },
                plot::RefLine {
                    label: "target 6 M/s".into(),
                    value: TARGET_PER_CORE / 1e6,
                },
            ]
        } else {
            Vec::new()
        };
        let path = dir.join(format!("dot-l{l}.png"));
        plot::grouped_bars(
            &path,
            &format!(
                "dot products per second per core, l = {l}, {ROTATIONS} rotations x N records"
            ),
            "M dot products / s / core",
            &groups,
            &series,
            &refs,
        )?;
        files.push(path);
    }

    // The batch shapes' fractions of the measured peak against the targets.
    {
        let groups: Vec<String> = BATCH_RINGS.iter().map(|r| r.name().to_string()).collect();
        let series: Vec<(String, Vec<f64>)> = batch_codes
            .iter()
            .map(|&c| {
                let vals = BATCH_RINGS
                    .iter()
                    .map(|r| {
                        let n = format!("dot/{}/batch/codes={c}/l={}/threads=1", r.name(), batch_l);
                        ms.iter()
                            .find(|m| m.name == n)
                            .and_then(|m| m.extra.get("peak_fraction"))
                            .and_then(|v| v.as_f64())
                            .map_or(f64::NAN, |f| 100.0 * f)
                    })
                    .collect();
                (format!("{c} codes per call"), vals)
            })
            .collect();
        let refs = vec![
            plot::RefLine {
                label: "target GR16 80 %".into(),
                value: 80.0,
            },
            plot::RefLine {
                label: "target Z16, F_p 70 %".into(),
                value: 70.0,
            },
        ];
        let path = dir.join("dot-peak-fraction.png");
        plot::grouped_bars(
            &path,
            &format!(
                "fraction of the measured 16-bit peak, l = {batch_l}, 1 thread, compiler's tile per batch shape"
            ),
            "% of the measured vpdpwssd zmm peak",
            &groups,
            &series,
            &refs,
        )?;
        files.push(path);
    }

    // The AMX kernels next to the vector kernels, same run, where the CPU runs AMX: both as
    // fractions of the 16-bit vector peak (the targets' measure).
    if ms.iter().any(|m| m.name.contains("/amx/")) {
        let groups: Vec<String> = AMX_RINGS
            .iter()
            .flat_map(|r| batch_codes.iter().map(move |c| format!("{} {c}", r.name())))
            .collect();
        let pick = |kind: &str| -> Vec<f64> {
            AMX_RINGS
                .iter()
                .flat_map(|r| {
                    batch_codes.iter().map(move |c| {
                        format!("dot/{}/{kind}/codes={c}/l={batch_l}/threads=1", r.name())
                    })
                })
                .map(|n| {
                    ms.iter()
                        .find(|m| m.name == n)
                        .and_then(|m| m.extra.get("peak_fraction"))
                        .and_then(|v| v.as_f64())
                        .map_or(f64::NAN, |f| 100.0 * f)
                })
                .collect()
        };
        let series = vec![
            ("vector kernel (compiler's tile)".to_string(), pick("batch")),
            ("AMX kernel".to_string(), pick("amx")),
        ];
        let refs = vec![
            plot::RefLine {
                label: "target GR16 80 %".into(),
                value: 80.0,
            },
            plot::RefLine {
                label: "target Z16, F_p 70 %".into(),
                value: 70.0,
            },
        ];
        let path = dir.join("dot-amx.png");
        plot::grouped_bars(
            &path,
            &format!("AMX and vector kernels, l = {batch_l}, 1 thread, by ring and codes per call"),
            "% of the measured vpdpwssd zmm peak",
            &groups,
            &series,
            &refs,
        )?;
        files.push(path);
    }

    // The polyphase kernel next to the plain one, same run.
    {
        let groups: Vec<String> = POLYPHASE_RINGS
            .iter()
            .flat_map(|r| {
                POLYPHASE_QUERIES
                    .iter()
                    .map(move |q| format!("{} {} codes", r.name(), q * ROTATIONS))
            })
            .collect();
        let ms = &ms;
        let pick = |key: &'static str| -> Vec<f64> {
            POLYPHASE_RINGS
                .iter()
                .flat_map(|r| {
                    POLYPHASE_QUERIES.iter().map(move |q| {
                        let n = format!(
                            "dot/{}/polyphase/codes={}/l={}/threads=1",
                            r.name(),
                            q * ROTATIONS,
                            batch_l
                        );
                        ms.iter()
                            .find(|m| m.name == n)
                            .and_then(|m| m.extra.get(key))
                            .and_then(|v| v.as_f64())
                            .map_or(f64::NAN, |f| 100.0 * f)
                    })
                })
                .collect()
        };
        let series = vec![
            (
                "tiled plain kernel".to_string(),
                pick("plain_peak_fraction"),
            ),
            (
                "polyphase kernel (plain-equivalent)".to_string(),
                pick("plain_equivalent_peak_fraction"),
            ),
        ];
        let path = dir.join("dot-polyphase.png");
        plot::grouped_bars(
            &path,
            &format!(
                "31 rotations per query, l = {batch_l}, 1 thread: dot products x L MACs over the measured peak"
            ),
            "% of the measured 16-bit peak",
            &groups,
            &series,
            &[],
        )?;
        files.push(path);
    }

    let report = Report {
        section: "dot".into(),
        quick: opts.quick,
        machine: machine.clone(),
        config: json!({
            "rotations": ROTATIONS,
            "lengths": LENGTHS,
            "records": records_used,
            "gallery_bytes": if opts.quick { None } else { Some(json!({
                "streaming": peak::streaming_gallery_bytes(),
                "streaming_up_to_codes_per_call": peak::STREAMING_MAX_CODES,
                "more_codes": peak::gallery_bytes_for(peak::STREAMING_MAX_CODES + 1),
                "last_level_cache": peak::last_level_cache_bytes(),
                "overview_rows": OVERVIEW_GALLERY_BYTES,
                "rule": "the batch, polyphase and AMX rows (the targets'): a call of at most streaming_up_to_codes_per_call codes reads twice the last-level cache (64 MiB to 1 GiB), so that its gallery streams from memory; more codes are compute-bound and read 64 MiB; the overview rows (generated and naive per ring and length) read overview_rows",
            })) },
            "stream_read": {
                "bytes_per_s_per_core": stream_bytes_per_s,
                "method": "one thread sums the 64-bit words of a buffer of the streaming gallery size, fastest of at least 5 passes; memory_roofline_per_core of a row = this over the gallery bytes per dot product (record bytes / codes per call), roofline_fraction = its rate over the lower of that and the compute peak",
            },
            "min_seconds_per_measurement": min_secs,
            "thread_counts": thread_counts,
            "isas_measured": isas.iter().map(|i| i.name()).collect::<Vec<_>>(),
            "isas_skipped_cpu_lacks": skipped,
            "peak": {
                "method": "measured: one thread runs `chains` independent accumulator chains of the widest multiply-accumulate instruction this CPU has, in at least 5 runs totalling at least `seconds_at_least` after a warm-up; the fastest run is kept (on a shared machine other work can only slow a run); peak_fraction = rate per core x macs_per_dot / the measured peak of the ring's lane width",
                "seconds_at_least": peak_secs,
                "lanes": peaks.iter().map(|p| json!({
                    "lane_bits": p.lane.bits(),
                    "rings": RINGS.iter().filter(|&&r| peak_lane(r) == p.lane).map(|r| r.name()).collect::<Vec<_>>(),
                    "instruction": p.instruction,
                    "macs_per_instruction_step": p.macs_per_step,
                    "chains": p.chains,
                    "iterations_per_run": p.iterations,
                    "runs": p.runs,
                    "fastest_run_seconds": p.seconds,
                    "macs_per_s_per_core": p.macs_per_s,
                })).collect::<Vec<_>>(),
                "others": other_peaks.iter().map(|(bits, p)| json!({
                    "lane_bits": bits,
                    "instruction": p.instruction,
                    "macs_per_instruction_step": p.macs_per_step,
                    "chains": p.chains,
                    "runs": p.runs,
                    "fastest_run_seconds": p.seconds,
                    "macs_per_s_per_core": p.macs_per_s,
                    "fraction_of_the_16_bit_peak": p.macs_per_s / peak_of(Ring::Gr2).macs_per_s,
                })).collect::<Vec<_>>(),
                "amx": amx_peak.as_ref().map(|p| json!({
                    "lane_bits": 8,
                    "instruction": p.instruction,
                    "macs_per_instruction_step": p.macs_per_step,
                    "chains": p.chains,
                    "runs": p.runs,
                    "fastest_run_seconds": p.seconds,
                    "byte_macs_per_s_per_core": p.macs_per_s,
                    "sixteen_bit_macs_per_s_per_core": p.macs_per_s / 4.0,
                    "fraction_of_the_16_bit_peak": p.macs_per_s / 4.0 / peak_of(Ring::Gr2).macs_per_s,
                    "note": "AMX-INT8 tile multiplies (u8 x u8): the AMX kernels issue four byte products per 16-bit word product (irisc::codegen::cpu::kernel::amx), so their 16-bit ceiling is a quarter of this; `amx` rows give amx_peak_fraction over it and peak_fraction over the 16-bit vector peak (above 1: more than the vector units can do). Null where the CPU or OS does not run AMX.",
                })),
                "which_peak": "The 16-bit rings' (Z16, GR16, F_p) peak_fraction is over the `lanes` entry of 16 bits: vpdpwssd zmm where the CPU has AVX-512 VNNI, the fastest instruction that multiplies 16-bit words (32 products and their sums per instruction; one per cycle on a core with 256-bit data paths, two on a full 512-bit one: the measurement says which). `others` are measured for comparison only: vpdpwssd ymm and vpmullw + vpaddw zmm are other ways to the same 16-bit products; vpdpbusd zmm multiplies 8-bit by 8-bit values (64 products per instruction, twice the 16-bit rate), which 16-bit ring elements cannot use without splitting every product into four 8-bit ones (no gain).",
            },
            "batch_shapes": {
                "l": batch_l,
                "codes_per_call": batch_codes,
                "rings": BATCH_RINGS.iter().map(|r| r.name()).collect::<Vec<_>>(),
                "isa": best_isa.name(),
                "tiles": batch_tiles.iter().map(|(r, c, t)| json!({
                    "ring": r.name(),
                    "codes_per_call": c,
                    "tile": [t.records, t.codes],
                    "code_panel_bytes": t.panel_bytes,
                    "k_chunk_bytes": t.k_chunk_bytes,
                    "record_panel_bytes": t.record_panel_bytes,
                })).collect::<Vec<_>>(),
                "targets": {"GR16": 0.8, "Z16": 0.7, "F_p": 0.7},
                "f_p_ceiling": "F_p's exact products need two vpdpwssd per 32 word pairs (one per byte of the gallery word), so its kernel can reach at most half of the 16-bit peak: see compiler/src/codegen/cpu/kernel/isa.rs",
            },
        }),
        measurements: ms,
        references: vec![
            Measurement {
                name: "paper 003 Table 1: GR16 on AWS Graviton3".into(),
                value: PAPER_GR16_PER_CORE,
                unit: "dot products/s per core".into(),
                extra: BTreeMap::from([("l".into(), json!(12_800)), ("ring".into(), json!("GR16"))]),
            },
            Measurement {
                name: "issue target: 16-bit dot products".into(),
                value: TARGET_PER_CORE,
                unit: "dot products/s per core".into(),
                extra: BTreeMap::from([("l".into(), json!(12_800))]),
            },
        ],
        notes: vec![
            "A dot product is one (query code, gallery record) pair of one party's local work (the paper's unit, one length-l product of a code pair); macs_per_dot says how many multiply-adds it costs: 2l for the replicated rings (two plain dot products, Appendix C eq. 6), d*ceil(l/d) for GR(2^16, d), l for F_p (reduced once mod p).".into(),
            "Kinds: one per ISA variant of irisc's generated kernel (portable, avx2, avx512, vnni; those this CPU lacks are not run), 'generated' = the variant the runtime dispatches to on this CPU, 'naive' = a plain Rust loop in this binary.".into(),
            "Per core = all-thread rate / threads; threads = logical CPUs available (SMT siblings count as cores).".into(),
            "The kernels are irisc's LLVM output (all variants of one table, each with its own target attributes), JIT-compiled after the same default<O3> pipeline as irisc build.".into(),
            "The naive loops are plain Rust compiled in this binary; rustc may auto-vectorise them for the binary's target CPU.".into(),
            "The gallery is at most 64 MiB per measurement and is re-read every pass; the input values are random (timings do not depend on them).".into(),
            "peak_fraction = per-core rate x macs_per_dot / the peak measured for the ring's lane width (config.peak): 16-bit lanes for Z16, GR16 and F_p, 32-bit for Z32, 64-bit for Z64. A kernel can exceed 1 where it does the ring's arithmetic with other instructions than the peak's (e.g. Z64 without vpmullq).".into(),
            "AMX rows: tile_load_ceiling_per_core = the dot products/s the kernel's own loop nest allows when it only loads its tiles (the gallery's and the query columns', one load per tile product; irisc_bench::tile_loads), timed over the row's gallery and columns in this run; tile_load_fraction = the kernel's rate over it. It bounds the kernel whatever the tile multiplier's speed.".into(),
            "Timings on shared or virtual machines vary between runs; nothing here is asserted by a test.".into(),
        ],
    };
    files.insert(0, report.write(dir)?);
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_dot_section_writes_json_and_png() {
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            out: dir.path().to_path_buf(),
            sections: vec!["dot".into()],
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
        let files = crate::run(&opts).unwrap();
        let json: Report =
            serde_json::from_str(&std::fs::read_to_string(dir.path().join("dot.json")).unwrap())
                .unwrap();
        assert_eq!(json.section, "dot");
        assert!(json.quick);
        for ring in RINGS {
            for kind in ["generated", "naive"] {
                for l in LENGTHS {
                    let name = format!("dot/{}/{kind}/l={l}/threads=1", ring.name());
                    let m = json
                        .measurements
                        .iter()
                        .find(|m| m.name == name)
                        .unwrap_or_else(|| panic!("{name} missing"));
                    assert!(m.value > 0.0 && m.value.is_finite(), "{name}: {}", m.value);
                    assert_eq!(m.unit, "dot products/s per core");
                }
            }
        }
        assert!(json
            .references
            .iter()
            .any(|r| r.value == PAPER_GR16_PER_CORE));
        // The batch shapes (quick: 31 and 248 codes), each with the compiler's tile and its
        // fraction of the measured peak next to the target.
        for ring in BATCH_RINGS {
            for codes in [31, 248] {
                let name = format!("dot/{}/batch/codes={codes}/l=12800/threads=1", ring.name());
                let m = json
                    .measurements
                    .iter()
                    .find(|m| m.name == name)
                    .unwrap_or_else(|| panic!("{name} missing"));
                let want = choose(tile_kind(ring), codes as u64);
                assert_eq!(m.extra["tile"], json!([want.records, want.codes]), "{name}");
                let f = m.extra["peak_fraction"].as_f64().unwrap();
                assert!(f > 0.0 && f.is_finite(), "{name}: {f}");
                assert_eq!(
                    m.extra["target_fraction"].as_f64(),
                    target_fraction(ring),
                    "{name}"
                );
                // The limits: the lower of compute and memory, the rate over it.
                let get = |k: &str| m.extra[k].as_f64().unwrap();
                let (memory, compute) = (
                    get("memory_roofline_per_core"),
                    get("compute_peak_per_core"),
                );
                assert!(memory > 0.0 && compute > 0.0, "{name}");
                assert!((get("limit_fraction") - m.value / memory.min(compute)).abs() < 1e-9);
                let bytes = ring.gallery_bytes_per_record(12_800) as f64 / codes as f64;
                assert!(
                    (get("gallery_bytes_per_dot") - bytes).abs() < 1e-9,
                    "{name}"
                );
            }
        }
        assert!(
            json.config["stream_read"]["bytes_per_s_per_core"]
                .as_f64()
                .unwrap()
                > 0.0
        );
        let peak = &json.config["peak"];
        assert!(peak["which_peak"]
            .as_str()
            .unwrap()
            .contains("vpdpwssd zmm"));
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512vnni") {
            assert_eq!(peak["others"].as_array().unwrap().len(), 3, "{peak}");
        }
        assert!(files.contains(&dir.path().join("dot-peak-fraction.png")));
        // Where the CPU runs AMX: its peak, a row per AMX ring and batch shape, and their chart;
        // elsewhere none of them.
        let amx = irisc_runtime::kernels::amx::available();
        assert_eq!(peak["amx"].is_null(), !amx, "{peak}");
        for ring in AMX_RINGS {
            for codes in [31, 248] {
                let name = format!("dot/{}/amx/codes={codes}/l=12800/threads=1", ring.name());
                let m = json.measurements.iter().find(|m| m.name == name);
                assert_eq!(m.is_some(), amx, "{name}");
                if let Some(m) = m {
                    assert!(m.value > 0.0 && m.extra["amx_peak_fraction"].as_f64().unwrap() > 0.0);
                    // The load ceiling of the same nest, and the row's rate over it.
                    let c = m.extra["tile_load_ceiling_per_core"].as_f64().unwrap();
                    let f = m.extra["tile_load_fraction"].as_f64().unwrap();
                    assert!(
                        c > 0.0 && (f - m.value / c).abs() < 1e-9 * f.max(1.0),
                        "{name}"
                    );
                }
            }
        }
        assert_eq!(files.contains(&dir.path().join("dot-amx.png")), amx);
        for l in LENGTHS {
            let png = dir.path().join(format!("dot-l{l}.png"));
            assert!(files.contains(&png));
            let bytes = std::fs::read(&png).unwrap();
            assert!(
                bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
                "{} is not a PNG",
                png.display()
            );
        }
    }

    #[test]
    fn unknown_sections_are_refused() {
        let opts = BenchOptions {
            out: std::env::temp_dir(),
            sections: vec!["nope".into()],
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
        let e = crate::run(&opts).unwrap_err().to_string();
        assert!(e.contains("unknown bench section"), "{e}");
    }
}
