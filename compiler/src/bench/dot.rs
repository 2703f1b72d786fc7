//! Section `dot`: one party's local dot-product work per second, per core, at l = 12 800 and
//! l = 1 024, for every ring irisc uses, next to a naive loop over the same ring compiled in this
//! binary.
//!
//! A "dot product" is one (query code, gallery record) pair; the batch is 31 rotations of a query
//! against N records. What one party computes per pair:
//! - Z16/Z32/Z64 replicated: the LLVM kernel irisc generates (JIT-compiled, see [`super::jit`]),
//!   two plain dot products of length l per pair (Appendix C eq. 6);
//! - GR(2^16, d), d = 2, 4: the runtime's `galois_dot_local`, one 16-bit dot product of length
//!   d·⌈l/d⌉ per pair;
//! - F_p (p = 2^16 − 17): the runtime's `fp::dot` per pair, as `ops_shamir::shamir_dot` calls it.

use super::report::{MachineInfo, Measurement, Report};
use super::{jit, plot, BenchOptions};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressStyle};
use irisc_runtime::protocol::galois_dot::galois_dot_local;
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
/// Gallery bytes per measurement (all arrays); N records is this over the bytes per record.
const GALLERY_BUDGET: usize = 64 << 20;

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
    fn generated(self) -> &'static str {
        match self {
            Ring::Z16 | Ring::Z32 | Ring::Z64 => "irisc LLVM masked-dot kernel (JIT, host CPU)",
            Ring::Gr2 | Ring::Gr4 => "runtime protocol::galois_dot::galois_dot_local",
            Ring::Fp => "runtime share::fp::dot per pair (as party::ops_shamir)",
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
    /// Lane width the multiply-accumulates need (F_p products need 32 bits).
    pub fn lane_bits(self) -> u32 {
        match self {
            Ring::Z16 | Ring::Gr2 | Ring::Gr4 => 16,
            Ring::Z32 | Ring::Fp => 32,
            Ring::Z64 => 64,
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

/// One warm-up pass (also the calibration), then enough passes for `min_secs`: (passes, secs).
fn measure(
    threads: usize,
    n: usize,
    min_secs: f64,
    pass: &(dyn Fn(Range<usize>) + Sync),
) -> (usize, f64) {
    let t1 = time(threads, n, 1, pass).max(1e-9);
    let mut reps = ((min_secs * 1.1 / t1).ceil() as usize).max(1);
    // The warm-up pass can be slower or faster than the rest: re-measure until long enough.
    for _ in 0..4 {
        let secs = time(threads, n, reps, pass);
        if secs >= min_secs {
            return (reps, secs);
        }
        reps = ((reps as f64 * min_secs * 1.2 / secs.max(1e-9)).ceil() as usize).max(reps + 1);
    }
    (reps, time(threads, n, reps, pass))
}

fn random<T>(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T>
where
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    (0..n).map(|_| rng.random()).collect()
}

/// (generated, naive) passes for a replicated ring with storage `T`.
fn rep_passes<'a, T: RingElem>(
    f: jit::KernelFn<T>,
    data: &'a (Vec<T>, Vec<T>, Vec<T>, Vec<T>),
    l: usize,
) -> (Pass<'a>, Pass<'a>) {
    let gen: Pass<'a> = Box::new(move |r: Range<usize>| {
        let (qa, qb, ga, gb) = data;
        let mut out = vec![T::ZERO; ROTATIONS * r.len()];
        // SAFETY: the buffers hold ROTATIONS codes and r.end <= N records of l words each.
        unsafe {
            f(
                qa.as_ptr(),
                qb.as_ptr(),
                ROTATIONS as i64,
                ga[r.start * l..].as_ptr(),
                gb[r.start * l..].as_ptr(),
                r.len() as i64,
                out.as_mut_ptr(),
            )
        };
        black_box(&out);
    });
    let naive: Pass<'a> = Box::new(move |r: Range<usize>| {
        let (qa, qb, ga, gb) = data;
        let mut out = vec![T::ZERO; ROTATIONS * r.len()];
        let (ga, gb) = (&ga[r.start * l..r.end * l], &gb[r.start * l..r.end * l]);
        naive_rep(qa, qb, ROTATIONS, ga, gb, r.len(), l, &mut out);
        black_box(&out);
    });
    (gen, naive)
}

/// Peak integer multiply-accumulates per second per core for `lane_bits` lanes (an estimate).
fn peak_macs(machine: &MachineInfo, lane_bits: u32) -> Option<f64> {
    Some(vector_bits(machine) as f64 / lane_bits as f64 * PORTS * machine.cpu_mhz? * 1e6)
}

const PORTS: f64 = 2.0;

fn vector_bits(machine: &MachineInfo) -> u32 {
    if machine.has("avx512f") && machine.has("avx512bw") {
        512
    } else if machine.has("avx2") {
        256
    } else {
        128
    }
}

/// Runs the section: writes `dot.json` and `dot-l<l>.png` per length into `dir`.
pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let machine = MachineInfo::collect();
    let all = machine.logical_cpus.max(1);
    let thread_counts: Vec<usize> = if all > 1 { vec![1, all] } else { vec![1] };
    let min_secs = if opts.quick { 0.005 } else { 0.5 };
    let total = LENGTHS.len() * RINGS.len() * 2 * thread_counts.len();
    let bar = if opts.progress {
        let b = ProgressBar::new(total as u64);
        if let Ok(s) = ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}") {
            b.set_style(s);
        }
        b
    } else {
        ProgressBar::hidden()
    };
    let kernels: Vec<(u32, u32)> = LENGTHS
        .iter()
        .flat_map(|&l| [(l as u32, 16), (l as u32, 32), (l as u32, 64)])
        .collect();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
    let mut records_used = BTreeMap::new();
    let mut ms: Vec<Measurement> = Vec::new();
    jit::with_kernels(&kernels, |k| -> Result<()> {
        for &l in &LENGTHS {
            for ring in RINGS {
                let n = if opts.quick {
                    all
                } else {
                    (GALLERY_BUDGET / ring.gallery_bytes_per_record(l)).clamp(2 * all, 8192)
                };
                records_used.insert(format!("{} l={l}", ring.name()), n);
                let w = ring.words(l);
                // Data for this (ring, l); dropped before the next.
                let d16 = match ring {
                    Ring::Z16 => Some((
                        random::<u16>(ROTATIONS * l, &mut rng),
                        random::<u16>(ROTATIONS * l, &mut rng),
                        random::<u16>(n * l, &mut rng),
                        random::<u16>(n * l, &mut rng),
                    )),
                    _ => None,
                };
                let d32 = match ring {
                    Ring::Z32 => Some((
                        random::<u32>(ROTATIONS * l, &mut rng),
                        random::<u32>(ROTATIONS * l, &mut rng),
                        random::<u32>(n * l, &mut rng),
                        random::<u32>(n * l, &mut rng),
                    )),
                    _ => None,
                };
                let d64 = match ring {
                    Ring::Z64 => Some((
                        random::<u64>(ROTATIONS * l, &mut rng),
                        random::<u64>(ROTATIONS * l, &mut rng),
                        random::<u64>(n * l, &mut rng),
                        random::<u64>(n * l, &mut rng),
                    )),
                    _ => None,
                };
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
                let lu = l as u32;
                let missing = || anyhow::anyhow!("JIT kernel for l = {l} missing");
                let (gen, naive): (Pass, Pass) = match ring {
                    Ring::Z16 => rep_passes(
                        unsafe { k.get::<u16>(lu, 16) }.ok_or_else(missing)?,
                        d16.as_ref().unwrap(),
                        l,
                    ),
                    Ring::Z32 => rep_passes(
                        unsafe { k.get::<u32>(lu, 32) }.ok_or_else(missing)?,
                        d32.as_ref().unwrap(),
                        l,
                    ),
                    Ring::Z64 => rep_passes(
                        unsafe { k.get::<u64>(lu, 64) }.ok_or_else(missing)?,
                        d64.as_ref().unwrap(),
                        l,
                    ),
                    Ring::Gr2 | Ring::Gr4 => (
                        Box::new(move |r: Range<usize>| {
                            let z = galois_dot_local(
                                q,
                                ROTATIONS,
                                &g[r.start * w..r.end * w],
                                r.len(),
                                w,
                            );
                            black_box(&z.own);
                        }),
                        Box::new(move |r: Range<usize>| {
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
                    ),
                    Ring::Fp => (
                        Box::new(move |r: Range<usize>| {
                            let mut out = Vec::with_capacity(ROTATIONS * r.len());
                            for row in g[r.start * l..r.end * l].chunks_exact(l) {
                                for c in q.chunks_exact(l) {
                                    out.push(fp::dot(c, row));
                                }
                            }
                            black_box(&out);
                        }),
                        Box::new(move |r: Range<usize>| {
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
                    ),
                };
                for (kind, implementation, pass) in [
                    ("generated", ring.generated(), &gen),
                    (
                        "naive",
                        "naive Rust loop (#[inline(never)], black_box inputs)",
                        &naive,
                    ),
                ] {
                    for &threads in &thread_counts {
                        let name = format!("dot/{}/{kind}/l={l}/threads={threads}", ring.name());
                        bar.set_message(name.clone());
                        let (passes, secs) = measure(threads, n, min_secs, pass.as_ref());
                        let dots = (passes * n * ROTATIONS) as f64;
                        let total_rate = dots / secs;
                        let per_core = total_rate / threads as f64;
                        let macs = ring.macs_per_dot(l);
                        let peak = peak_macs(&machine, ring.lane_bits());
                        let mut extra = BTreeMap::new();
                        extra.insert("ring".into(), json!(ring.name()));
                        extra.insert("kind".into(), json!(kind));
                        extra.insert("implementation".into(), json!(implementation));
                        extra.insert("l".into(), json!(l));
                        extra.insert("threads".into(), json!(threads));
                        extra.insert("records".into(), json!(n));
                        extra.insert("codes_per_record".into(), json!(ROTATIONS));
                        extra.insert("passes".into(), json!(passes));
                        extra.insert("seconds".into(), json!(secs));
                        extra.insert("dot_products".into(), json!(dots));
                        extra.insert("total_rate".into(), json!(total_rate));
                        extra.insert(
                            "total_rate_unit".into(),
                            json!("dot products/s (all threads)"),
                        );
                        extra.insert("macs_per_dot".into(), json!(macs));
                        extra.insert("lane_bits".into(), json!(ring.lane_bits()));
                        if let Some(p) = peak {
                            extra.insert("peak_macs_per_s_per_core".into(), json!(p));
                            extra.insert("peak_fraction".into(), json!(per_core * macs as f64 / p));
                        }
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
        Ok(())
    })??;
    bar.finish_and_clear();

    // Ratios of each generated figure to its naive twin.
    let rates: BTreeMap<String, f64> = ms.iter().map(|m| (m.name.clone(), m.value)).collect();
    for m in ms.iter_mut() {
        if m.extra.get("kind") == Some(&json!("generated")) {
            let naive_name = m.name.replace("/generated/", "/naive/");
            if let Some(&nv) = rates.get(&naive_name) {
                m.extra.insert("ratio_to_naive".into(), json!(m.value / nv));
            }
        }
    }

    let mut files = Vec::new();
    for &l in &LENGTHS {
        let groups: Vec<String> = RINGS.iter().map(|r| r.name().to_string()).collect();
        let mut series = Vec::new();
        for &threads in &thread_counts {
            for kind in ["generated", "naive"] {
                let vals = RINGS
                    .iter()
                    .map(|r| {
                        let n = format!("dot/{}/{kind}/l={l}/threads={threads}", r.name());
                        rates.get(&n).map_or(f64::NAN, |v| v / 1e6)
                    })
                    .collect();
                let label = if kind == "generated" {
                    "irisc/runtime"
                } else {
                    "naive loop"
                };
                series.push((format!("{label}, {threads} thread(s)"), vals));
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

    let vb = vector_bits(&machine);
    let report = Report {
        section: "dot".into(),
        quick: opts.quick,
        machine: machine.clone(),
        config: json!({
            "rotations": ROTATIONS,
            "lengths": LENGTHS,
            "records": records_used,
            "gallery_budget_bytes": if opts.quick { None } else { Some(GALLERY_BUDGET) },
            "min_seconds_per_measurement": min_secs,
            "thread_counts": thread_counts,
            "peak": {
                "formula": "peak MAC/s per core = (vector_bits / lane_bits) x ports x cpu_MHz x 1e6; peak_fraction = rate per core x macs_per_dot / peak",
                "vector_bits": vb,
                "ports": PORTS,
                "cpu_mhz": machine.cpu_mhz,
                "estimate": true,
                "caveats": "an estimate: assumes two vector multiply-add-equivalent issue ports at the /proc/cpuinfo 'cpu MHz' clock (current, not turbo/base); real multiply throughput differs per CPU and per width (e.g. 64-bit vector multiplies are much slower; AMD Zen 4 executes 512-bit operations as two 256-bit halves)",
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
            "A dot product is one (query code, gallery record) pair of one party's local work; the replicated rings do two plain dot products of length l per pair, the Galois rings one of length d*ceil(l/d), F_p one of length l (reduced once).".into(),
            "Per core = all-thread rate / threads; threads = logical CPUs available (SMT siblings count as cores).".into(),
            "The replicated kernels are irisc's LLVM output, JIT-compiled with the host CPU's target-cpu/target-features attributes after the same default<O3> pipeline as irisc build; the GR and F_p figures time runtime Rust code, built for this binary's target (rustc's default CPU unless RUSTFLAGS says otherwise).".into(),
            "The naive loops are plain Rust compiled in this binary; rustc may auto-vectorise them for the binary's target CPU.".into(),
            "The gallery is at most 64 MiB per measurement and is re-read every pass; the input values are random (timings do not depend on them).".into(),
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
        };
        let files = super::super::run(&opts).unwrap();
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
        };
        let e = super::super::run(&opts).unwrap_err().to_string();
        assert!(e.contains("unknown bench section"), "{e}");
    }
}
