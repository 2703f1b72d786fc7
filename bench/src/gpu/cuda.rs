//! The device part of the `gpu` section (cargo feature `cuda`): the device probe, the dot
//! kernels timed with cudarc by the contract's names, parameters and grid
//! (`irisc_runtime::contract::gpu`), the cuBLAS int8 GEMM peak, and the end-to-end run.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{anyhow, Result};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut,
    DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use cudarc::nvrtc::Ptx;

use irisc::codegen::Target;
use irisc_runtime::contract::gpu::{
    combine_kernel_name, dot_kernel_name, k_pad, rows_pad, split_kernel_name, GemmEngine,
    BLOCK_COLS, BLOCK_ROWS, DOT_THREADS, SM_ARCH, SPLIT_THREADS,
};
use irisc_runtime::gpu::device::runs_contract_kernels;
use irisc_runtime::gpu::layout::LimbWord;
use irisc_runtime::gpu::library_gemm::{self, PlanesRef};
use irisc_runtime::kernels::{gr_dot_reference, masked_dot_reference};
use irisc_runtime::ring::RingElem;

use super::{
    disk_uses, e2e_fit, median, DotRow, E2eRow, GemmRow, GpuRing, Measured, BATCH_CODES, CODE_LEN,
    DEFAULT_DOT_RECORDS, E2E_RECORD_CHUNK, EYES, PROGRAM, QUICK_DOT_RECORDS, ROTATIONS,
    TABLE3_PEOPLE,
};
use crate::e2e::{self, Case, Setting};
use crate::BenchOptions;

/// The variable the parties read their GPU from; the section measures the first it names.
const DEVICE_ENV: &str = "IRISC_GPU";

/// The first ordinal of a value of `IRISC_GPU` (`2`, or a list `0,1`); 0 when unset or empty.
fn first_ordinal(v: Option<&str>) -> Result<usize, String> {
    match v.map(str::trim).filter(|s| !s.is_empty()) {
        None => Ok(0),
        Some(s) => s
            .split(',')
            .next()
            .and_then(|o| o.trim().parse().ok())
            .ok_or_else(|| format!("{DEVICE_ENV}={s}: expected a GPU ordinal")),
    }
}

/// The opened device.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    description: String,
}

/// The device `IRISC_GPU` (default 0), if there is one that runs the contract's kernels;
/// otherwise why not (the driver's words).
pub fn probe() -> Result<Gpu, String> {
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("the CUDA driver library (libcuda.so) was not found".into());
    }
    let ordinal = first_ordinal(std::env::var(DEVICE_ENV).ok().as_deref())?;
    let ctx = CudaContext::new(ordinal).map_err(|e| format!("GPU {ordinal}: {e}"))?;
    let name = ctx.name().unwrap_or_else(|_| "an unnamed GPU".into());
    let (major, minor) = ctx
        .compute_capability()
        .map_err(|e| format!("compute capability: {e}"))?;
    let description = format!("{name} (GPU {ordinal}, compute capability {major}.{minor})");
    if !runs_contract_kernels(major, minor) {
        return Err(format!(
            "{description} cannot run the kernels irisc generates for {SM_ARCH} (Hopper: H100, H200)"
        ));
    }
    Ok(Gpu { ctx, description })
}

/// Everything the section measures on `gpu`.
pub fn measure(opts: &BenchOptions, dir: &std::path::Path, gpu: Gpu) -> Result<Measured> {
    let (free, total) = gpu
        .ctx
        .mem_get_info()
        .map_err(|e| anyhow!("reading the GPU's memory: {e}"))?;
    eprintln!(
        "gpu: {}: {:.1} GiB free of {:.1} GiB",
        gpu.description,
        free as f64 / (1u64 << 30) as f64,
        total as f64 / (1u64 << 30) as f64
    );
    let mut m = Measured {
        device: gpu.description.clone(),
        gpu_total_bytes: total as u64,
        gpu_free_bytes: free as u64,
        dots: Vec::new(),
        dot_error: None,
        gemm: Vec::new(),
        gemm_error: None,
        e2e: None,
        e2e_error: None,
        notes: Vec::new(),
    };
    let stream = gpu
        .ctx
        .new_stream()
        .map_err(|e| anyhow!("creating a CUDA stream: {e}"))?;
    let min_secs = if opts.quick { 0.02 } else { 1.0 };
    match gemm_peak(&stream, opts.quick, min_secs) {
        Ok(rows) => m.gemm = rows,
        Err(e) => {
            eprintln!("gpu: cuBLAS int8 GEMM: {e}");
            m.gemm_error = Some(e);
        }
    }
    match dots(&gpu, &stream, opts, min_secs) {
        Ok(rows) => m.dots = rows,
        Err(e) => {
            eprintln!("gpu: dot kernels: {e:#}");
            m.dot_error = Some(format!("{e:#}"));
        }
    }
    drop(stream);
    // The parties open their own contexts: this one goes first.
    drop(gpu);
    match end_to_end(opts, dir, free as u64) {
        Ok(row) => m.e2e = Some(row),
        Err(e) => {
            eprintln!("gpu: end to end: {e:#}");
            m.e2e_error = Some(format!("{e:#}"));
        }
    }
    Ok(m)
}

// ---- random shares, reproducible per element (a slice can be regenerated to check) ----

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Words `first..first + out.len()` of stream `seed`, on every core.
fn fill<T: LimbWord>(seed: u64, first: u64, out: &mut [T]) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let per = out.len().div_ceil(threads).max(1 << 16);
    std::thread::scope(|s| {
        for (k, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move || {
                let base = first + (k * per) as u64;
                for (i, w) in chunk.iter_mut().enumerate() {
                    *w = T::from_u64(splitmix(seed ^ splitmix(base + i as u64)));
                }
            });
        }
    });
}

fn rows<T: LimbWord>(seed: u64, from: usize, count: usize, len: usize) -> Vec<T> {
    let mut v = vec![T::default(); count * len];
    fill(seed, (from * len) as u64, &mut v);
    v
}

// ---- the dot kernels ----

/// A word the section uploads (u16, u32).
trait Word: LimbWord + RingElem + DeviceRepr + ValidAsZeroBits + PartialEq + std::fmt::Debug {}
impl Word for u16 {}
impl Word for u32 {}

struct Planes {
    limbs: CudaSlice<i8>,
    rows_pad: u64,
}

/// Uploads `rows` rows of `len` words of side a (and b) and splits them into limb planes with
/// the contract's split kernel (side b negated if `negate_b`).
#[allow(clippy::too_many_arguments)]
fn upload_split<T: Word>(
    stream: &Arc<CudaStream>,
    split: &CudaFunction,
    a: &[T],
    b: Option<&[T]>,
    rows: usize,
    len: usize,
    negate_b: bool,
) -> Result<Planes> {
    let sides: u32 = if b.is_some() { 2 } else { 1 };
    let kp = k_pad(sides, len as u64);
    let rp = rows_pad(rows as u64);
    let bytes = T::WIDTH.limbs() as u64 * rp * kp;
    let src_a = stream.clone_htod(a).map_err(|e| anyhow!("upload: {e}"))?;
    let src_b = match b {
        Some(b) => Some(stream.clone_htod(b).map_err(|e| anyhow!("upload: {e}"))?),
        None => None,
    };
    let mut dst = stream
        .alloc_zeros::<i8>(bytes as usize)
        .map_err(|e| anyhow!("allocating {bytes} bytes of limb planes: {e}"))?;
    let blocks = (rp * kp)
        .div_ceil(u64::from(SPLIT_THREADS))
        .clamp(1, 1 << 16) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (SPLIT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (rows64, len64, neg) = (rows as u64, len as u64, u32::from(negate_b));
    let b_ref = src_b.as_ref().unwrap_or(&src_a);
    let mut l = stream.launch_builder(split);
    l.arg(&src_a)
        .arg(b_ref)
        .arg(&rows64)
        .arg(&len64)
        .arg(&sides)
        .arg(&neg)
        .arg(&mut dst)
        .arg(&rp)
        .arg(&kp);
    // SAFETY: the contract's parameters of `irisc_gpu_split{w}`, in order and type: u{w}
    // sources of rows x len words, the scalars, int8 planes of limbs x rows_pad x k_pad bytes.
    unsafe { l.launch(cfg) }.map_err(|e| anyhow!("launching the split kernel: {e}"))?;
    stream
        .synchronize()
        .map_err(|e| anyhow!("the split kernel: {e}"))?;
    Ok(Planes {
        limbs: dst,
        rows_pad: rp,
    })
}

/// One launch of the dot kernel over `records` x `codes`.
fn launch_dot<T: Word>(
    stream: &Arc<CudaStream>,
    dot: &CudaFunction,
    g: &Planes,
    q: &Planes,
    out: &mut CudaSlice<T>,
    records: usize,
    codes: usize,
) -> Result<()> {
    let cfg = LaunchConfig {
        grid_dim: (
            (codes as u64).div_ceil(BLOCK_COLS) as u32,
            (records as u64).div_ceil(BLOCK_ROWS) as u32,
            1,
        ),
        block_dim: (DOT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (r64, c64) = (records as u64, codes as u64);
    let mut l = stream.launch_builder(dot);
    l.arg(&g.limbs)
        .arg(&g.rows_pad)
        .arg(&q.limbs)
        .arg(&q.rows_pad)
        .arg(out)
        .arg(&r64)
        .arg(&c64);
    // SAFETY: the contract's parameters of `irisc_gpu_dot{w}_k{k_pad}`: planes of the kernel's
    // k_pad with at least `records` / `codes` rows, an output of records x codes words.
    unsafe { l.launch(cfg) }.map_err(|e| anyhow!("launching the dot kernel: {e}"))?;
    Ok(())
}

/// Records for `ring` that fit in 80% of the free memory (the raw upload, the planes, the
/// output of the largest batch), at most `asked`.
fn fit_records(ring: GpuRing, word: usize, free: u64, asked: usize) -> usize {
    let len = CODE_LEN as u64;
    // Raw upload, limb planes, the largest batch's output and the library GEMM's i32
    // accumulator planes (one per shift) for it.
    let per = ring.sides() as u64 * len * word as u64
        + ring.plane_bytes_per_record()
        + BATCH_CODES[2] as u64 * word as u64
        + (ring.width().limbs() * BATCH_CODES[2] * 4) as u64;
    let fit = (free / 10 * 8 / per) as usize;
    asked.min(fit).max(BLOCK_ROWS as usize)
}

fn dots(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    opts: &BenchOptions,
    min_secs: f64,
) -> Result<Vec<DotRow>> {
    let list: Vec<_> = GpuRing::ALL
        .iter()
        .map(|r| (r.dot_ring(), CODE_LEN, Some(r.gpu_dot())))
        .collect();
    let ptx = irisc::codegen::cuda::ptx_image("irisc_bench_gpu", &list)
        .map_err(|e| anyhow!("generating the PTX: {}", e.0))?;
    let module = gpu
        .ctx
        .load_module(Ptx::from_src(ptx))
        .map_err(|e| anyhow!("loading the generated PTX: {e}"))?;
    let asked = opts.gpu_dot_records.unwrap_or(if opts.quick {
        QUICK_DOT_RECORDS
    } else {
        DEFAULT_DOT_RECORDS
    });
    let mut out = Vec::new();
    for ring in GpuRing::ALL {
        let (free, _) = gpu
            .ctx
            .mem_get_info()
            .map_err(|e| anyhow!("reading the GPU's memory: {e}"))?;
        let rows = match ring.width().bits() {
            16 => ring_rows::<u16>(
                stream,
                &module,
                ring,
                asked,
                free as u64,
                min_secs,
                opts.quick,
            ),
            _ => ring_rows::<u32>(
                stream,
                &module,
                ring,
                asked,
                free as u64,
                min_secs,
                opts.quick,
            ),
        };
        match rows {
            Ok(r) => out.extend(r),
            Err(e) => {
                eprintln!("gpu: {}: {e:#}", ring.name());
                for codes in BATCH_CODES {
                    out.push(DotRow {
                        ring,
                        engine: GemmEngine::DEFAULT,
                        codes,
                        records: 0,
                        k_pad: ring.gpu_dot().k_pad(),
                        seconds: f64::NAN,
                        reps: 0,
                        verified: false,
                        error: Some(format!("{e:#}")),
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The records the check compares: the first and the last 8 (the last block is padded).
#[allow(clippy::single_range_in_vec_init)]
fn checked_records(records: usize) -> Vec<std::ops::Range<usize>> {
    if records <= 16 {
        vec![0..records]
    } else {
        vec![0..8, records - 8..records]
    }
}

#[allow(clippy::too_many_arguments)]
fn ring_rows<T: Word>(
    stream: &Arc<CudaStream>,
    module: &Arc<CudaModule>,
    ring: GpuRing,
    asked: usize,
    free: u64,
    min_secs: f64,
    quick: bool,
) -> Result<Vec<DotRow>> {
    let len = CODE_LEN as usize;
    let word = std::mem::size_of::<T>();
    let records = fit_records(ring, word, free, asked);
    let two = ring.sides() == 2;
    let kp = ring.gpu_dot().k_pad();
    let [split_name, dot_name] = ring.gpu_dot().kernel_names();
    debug_assert_eq!(split_name, split_kernel_name(T::WIDTH));
    debug_assert_eq!(dot_name, dot_kernel_name(T::WIDTH, kp));
    let split = module
        .load_function(&split_name)
        .map_err(|e| anyhow!("{split_name}: {e}"))?;
    let dot = module
        .load_function(&dot_name)
        .map_err(|e| anyhow!("{dot_name}: {e}"))?;
    eprintln!(
        "gpu: {}: {records} records resident ({:.1} GiB of limb planes)",
        ring.name(),
        (records as u64 * ring.plane_bytes_per_record()) as f64 / (1u64 << 30) as f64
    );
    // Seeds: gallery side a / b, queries side a / b (per ring).
    let seed = 0x1215c_u64.wrapping_mul(ring as u64 + 1);
    let gallery = {
        let ga: Vec<T> = rows(seed, 0, records, len);
        let gb: Option<Vec<T>> = two.then(|| rows(seed ^ 1, 0, records, len));
        upload_split(stream, &split, &ga, gb.as_deref(), records, len, false)?
    };
    // The library path: a cuBLAS handle and the generated epilogue (none without cuBLAS:
    // only the generated kernel's rows then).
    let library = match library_gemm::cublas_on(stream) {
        Ok(blas) => {
            let name = combine_kernel_name(T::WIDTH);
            let combine = module
                .load_function(&name)
                .map_err(|e| anyhow!("{name}: {e}"))?;
            Some((blas, combine))
        }
        Err(why) => {
            eprintln!("gpu: {}: no cuBLAS rows: {why}", ring.name());
            None
        }
    };
    let most = BATCH_CODES[2];
    let qa: Vec<T> = rows(seed ^ 2, 0, most, len);
    let qb: Option<Vec<T>> = two.then(|| rows(seed ^ 3, 0, most, len));
    let mut out_rows = Vec::new();
    for codes in BATCH_CODES {
        let q = upload_split(
            stream,
            &split,
            &qa[..codes * len],
            qb.as_deref().map(|b| &b[..codes * len]),
            codes,
            len,
            two,
        )?;
        let mut out = stream
            .alloc_zeros::<T>(records * codes)
            .map_err(|e| anyhow!("allocating the dot products: {e}"))?;
        for engine in GemmEngine::ALL {
            let mut acc = match engine {
                GemmEngine::Generated => None,
                GemmEngine::Cublas => {
                    let Some(lib) = &library else {
                        continue;
                    };
                    let len = library_gemm::accumulator_len(T::WIDTH, records, codes);
                    // SAFETY: the first GEMM of each shift writes every element (beta = 0).
                    let acc = unsafe { stream.alloc::<i32>(len) }
                        .map_err(|e| anyhow!("allocating the limb GEMMs' accumulators: {e}"))?;
                    Some((lib, acc))
                }
            };
            let mut launch = |out: &mut CudaSlice<T>| -> Result<()> {
                match acc.as_mut() {
                    None => launch_dot(stream, &dot, &gallery, &q, out, records, codes),
                    Some(((blas, combine), acc)) => {
                        let g = PlanesRef {
                            limbs: &gallery.limbs,
                            rows_pad: gallery.rows_pad,
                        };
                        let qp = PlanesRef {
                            limbs: &q.limbs,
                            rows_pad: q.rows_pad,
                        };
                        library_gemm::limb_products(
                            blas,
                            stream,
                            T::WIDTH,
                            kp,
                            g,
                            qp,
                            records,
                            codes,
                            acc,
                        )
                        .map_err(|e| anyhow!(e))?;
                        library_gemm::launch_combine(stream, combine, acc, records, codes, out)
                            .map_err(|e| anyhow!(e))
                    }
                }
            };
            // The check, once, before timing (the output cleared, so a path that writes nothing
            // cannot pass on the other's words).
            stream
                .memset_zeros(&mut out)
                .map_err(|e| anyhow!("clearing the dot products: {e}"))?;
            launch(&mut out)?;
            stream
                .synchronize()
                .map_err(|e| anyhow!("the dot kernel: {e}"))?;
            let mut verified = true;
            let mut error = None;
            for range in checked_records(records) {
                let view = out.slice(range.start * codes..range.end * codes);
                let got: Vec<T> = stream
                    .clone_dtoh(&view)
                    .map_err(|e| anyhow!("downloading the dot products: {e}"))?;
                let n = range.len();
                let ga: Vec<T> = rows(seed, range.start, n, len);
                let mut want = vec![T::default(); n * codes];
                if two {
                    let gb: Vec<T> = rows(seed ^ 1, range.start, n, len);
                    let qb = qb.as_ref().expect("two sides");
                    masked_dot_reference(&qa, qb, codes, &ga, &gb, n, len, &mut want);
                } else {
                    // GR16: one 16-bit side (T is u16 here).
                    let q16: Vec<u16> = qa[..codes * len]
                        .iter()
                        .map(|&w| LimbWord::to_u64(w) as u16)
                        .collect();
                    let g16: Vec<u16> = ga.iter().map(|&w| LimbWord::to_u64(w) as u16).collect();
                    let mut w16 = vec![0u16; n * codes];
                    gr_dot_reference(&q16, codes, &g16, n, len, &mut w16);
                    want = w16
                        .into_iter()
                        .map(|w| <T as LimbWord>::from_u64(u64::from(w)))
                        .collect();
                }
                if let Some(i) = (0..want.len()).find(|&i| got[i] != want[i]) {
                    verified = false;
                    error = Some(format!(
                        "record {}, code {}: the GPU gave {:?}, the CPU reference {:?}",
                        range.start + i / codes,
                        i % codes,
                        got[i],
                        want[i]
                    ));
                    break;
                }
            }
            if !verified {
                eprintln!(
                    "gpu: {} {codes} codes ({} GEMM): MISMATCH: {}",
                    ring.name(),
                    engine.name(),
                    error.as_deref().unwrap_or("")
                );
                out_rows.push(DotRow {
                    ring,
                    engine,
                    codes,
                    records,
                    k_pad: kp,
                    seconds: f64::NAN,
                    reps: 0,
                    verified,
                    error,
                });
                continue;
            }
            // Warm-up, then launches timed one by one with events until min_secs have passed.
            for _ in 0..2 {
                launch(&mut out)?;
            }
            stream
                .synchronize()
                .map_err(|e| anyhow!("the dot kernel: {e}"))?;
            let ctx = stream.context();
            let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
            let (start, end) = (
                ctx.new_event(timing).map_err(|e| anyhow!("event: {e}"))?,
                ctx.new_event(timing).map_err(|e| anyhow!("event: {e}"))?,
            );
            let (min_reps, max_reps) = if quick { (2, 20) } else { (5, 500) };
            let mut times = Vec::new();
            let began = Instant::now();
            while times.len() < max_reps
                && (times.len() < min_reps || began.elapsed().as_secs_f64() < min_secs)
            {
                start.record(stream).map_err(|e| anyhow!("event: {e}"))?;
                launch(&mut out)?;
                end.record(stream).map_err(|e| anyhow!("event: {e}"))?;
                let ms = start
                    .elapsed_ms(&end)
                    .map_err(|e| anyhow!("the dot kernel: {e}"))?;
                times.push(f64::from(ms) / 1e3);
            }
            let reps = times.len();
            let row = DotRow {
                ring,
                engine,
                codes,
                records,
                k_pad: kp,
                seconds: median(&mut times),
                reps,
                verified,
                error,
            };
            eprintln!(
            "gpu: {} {codes} codes x {records} records, {} GEMM: {:.0} M dot products/s ({:.1} effective int8 TOPS), verified",
            ring.name(),
            engine.name(),
            row.dots_per_s() / 1e6,
            row.effective_tops()
        );
            out_rows.push(row);
        }
    }
    Ok(out_rows)
}

// ---- the cuBLAS int8 peak ----

fn gemm_peak(stream: &Arc<CudaStream>, quick: bool, min_secs: f64) -> Result<Vec<GemmRow>, String> {
    let handle =
        library_gemm::cublas_on(stream).map_err(|e| format!("{e}: no int8 peak measured"))?;
    let sizes: &[usize] = if quick {
        &[2048]
    } else {
        &[8192, 12288, 16384]
    };
    let mut out = Vec::new();
    for &n in sizes {
        let mut host = vec![0u8; n * n];
        for (i, b) in host.iter_mut().enumerate() {
            *b = splitmix(i as u64) as u8;
        }
        let host: Vec<i8> = host.into_iter().map(|b| b as i8).collect();
        let a = stream
            .clone_htod(&host)
            .map_err(|e| format!("upload: {e}"))?;
        let b = stream
            .clone_htod(&host)
            .map_err(|e| format!("upload: {e}"))?;
        let mut c = stream
            .alloc_zeros::<i32>(n * n)
            .map_err(|e| format!("allocating C: {e}"))?;
        let ni = n as i32;
        let mut once = || -> Result<(), String> {
            let (pa, _ra) = a.device_ptr(stream);
            let (pb, _rb) = b.device_ptr(stream);
            let (pc, _rc) = c.device_ptr_mut(stream);
            // SAFETY: A and B are n x n int8, C n x n int32, all on this stream's context.
            unsafe {
                library_gemm::gemm_s8_tn(&handle, (ni, ni, ni), (pa, ni), (pb, ni), 0, (pc, ni))
            }
            .map_err(|e| format!("cublasGemmEx {n}^3 int8: {e:?}"))
        };
        for _ in 0..3 {
            once()?;
        }
        stream.synchronize().map_err(|e| format!("GEMM: {e}"))?;
        let ctx = stream.context();
        let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = ctx.new_event(timing).map_err(|e| format!("event: {e}"))?;
        let end = ctx.new_event(timing).map_err(|e| format!("event: {e}"))?;
        let mut times = Vec::new();
        let began = Instant::now();
        while times.len() < 200 && (times.len() < 5 || began.elapsed().as_secs_f64() < min_secs) {
            start.record(stream).map_err(|e| format!("event: {e}"))?;
            once()?;
            end.record(stream).map_err(|e| format!("event: {e}"))?;
            times.push(f64::from(start.elapsed_ms(&end).map_err(|e| format!("GEMM: {e}"))?) / 1e3);
        }
        let reps = times.len();
        let row = GemmRow {
            n,
            seconds: median(&mut times),
            reps,
        };
        eprintln!("gpu: cuBLAS int8 GEMM {n}^3: {:.0} TOPS", row.tops());
        out.push(row);
    }
    Ok(out)
}

// ---- end to end ----

fn host_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// NDJSON bytes per generated record (one eye), measured on a few.
fn plain_bytes_per_record(dir: &std::path::Path) -> Result<u64> {
    use irisc::driver::synth::iris;
    let n = 16;
    let recs = iris::generate(n, 1, CODE_LEN as usize, &iris::GenOptions::default())?;
    let path = dir.join("gpu-sample.ndjson");
    iris::write_records(&path, &recs)?;
    let bytes = std::fs::metadata(&path)?.len();
    let _ = std::fs::remove_file(&path);
    Ok(bytes.div_ceil(n as u64))
}

fn end_to_end(opts: &BenchOptions, dir: &std::path::Path, gpu_free: u64) -> Result<E2eRow> {
    let plain = plain_bytes_per_record(dir)?;
    let asked = opts.records.or(opts.quick.then_some(crate::QUICK_RECORDS));
    let roots: Option<[PathBuf; 3]> = match opts.store_dirs.as_slice() {
        [] => None,
        [a, b, c] => Some([a.clone(), b.clone(), c.clone()]),
        other => {
            return Err(anyhow!(
                "--store-dirs takes three folders (party 0, 1, 2), not {}",
                other.len()
            ))
        }
    };
    let disks = disk_uses(dir, roots.as_ref())?;
    let fit = e2e_fit(gpu_free, host_available(), &disks, plain, asked);
    if fit.records == 0 {
        return Err(anyhow!("no gallery fits: {}", fit.why));
    }
    eprintln!("gpu: end to end: {} records: {}", fit.records, fit.why);
    let threads = (std::thread::available_parallelism().map_or(1, |n| n.get()) / 3).max(1);
    let case = Case {
        name: "gpu_table3",
        source: PROGRAM,
        eyes: EYES,
        rotations: ROTATIONS,
        // `earlier(..)` needs replicated shares (rep3: Z16 on the GPU).
        sharing: Some("rep3"),
        variant: None,
        per_query_chunks: false,
        // Paper 003 Table 3: the batch of 32 people is one kernel call per eye.
        query_batch: Some(TABLE3_PEOPLE as u32),
        msb_input: None,
        threshold_placement: None,
    };
    let setting = Setting {
        threads,
        net: None,
        queries: TABLE3_PEOPLE,
        record_chunk: Some(
            opts.gpu_record_chunk
                .unwrap_or(E2E_RECORD_CHUNK)
                .clamp(1, fit.records.max(1)),
        ),
        message_chunk: None,
        env: Vec::new(),
        msb_input: None,
        threshold_placement: None,
    };
    // The same run with two batches of 32: the second finds the gallery resident (its limb
    // planes uploaded by the first), so the difference of the two runs is one batch at the
    // steady state paper 003's Table 3 measures.
    let two_batches = Setting {
        queries: 2 * TABLE3_PEOPLE,
        ..setting.clone()
    };
    // The two-batch run again with AdditiveMSB (`ADDITIVE_HOW`), on the same gallery and
    // shares, unless `--quick`: which comparison protocol a GPU party should default to. Its
    // failure is reported, not fatal.
    let also: Vec<Setting> = match opts.quick {
        true => Vec::new(),
        false => vec![Setting {
            msb_input: Some("additive"),
            ..two_batches.clone()
        }],
    };
    let (runs, more) = e2e::measure_placed_also(
        dir,
        &case,
        fit.records,
        &[setting, two_batches],
        &also,
        opts.quick,
        Target::Cuda,
        roots.as_ref(),
    )?;
    let mut runs = runs.into_iter();
    let figures = runs
        .next()
        .ok_or_else(|| anyhow!("the end-to-end run returned nothing"))?;
    let two_batches = runs.next();
    let additive = more.into_iter().next();
    Ok(E2eRow {
        fit,
        queries: TABLE3_PEOPLE,
        threads_per_party: threads,
        figures,
        two_batches,
        additive,
        disks,
    })
}
