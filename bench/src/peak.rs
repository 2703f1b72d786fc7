//! The machine's peak multiply-accumulate rate, measured: independent chains of the widest
//! multiply-accumulate instruction this CPU has, timed on one thread. Every `peak_fraction` of
//! the `dot` section is a rate over this measurement, never over a figure assumed from the
//! clock (`cpu MHz` is the current clock, not the one the vector units run at under load).
//!
//! Three peaks, one per lane width the kernels multiply in ([`LaneWidth`]):
//! - 16-bit MACs (Z16, GR(2^16, d), F_p on 16-bit words): AVX-512 VNNI `vpdpwssd zmm` (16
//!   lanes x 2 MACs, the add fused), else `vpmaddwd` + `vpaddd` (zmm with AVX-512BW, ymm with
//!   AVX2), else scalar `imul` + `add`;
//! - 32-bit (Z32): `vpmulld` + `vpaddd` (zmm, else ymm), else scalar;
//! - 64-bit (Z64): `vpmullq` + `vpaddq` (zmm with AVX-512DQ), else scalar.
//!
//! Each chain accumulates into its own register, so the adds of different chains do not wait on
//! each other; [`CHAINS`] chains hide the latency of the multiply (3-5 cycles for
//! `vpdpwssd`/`vpmaddwd`, 10 for `vpmulld`) at one or two instructions per cycle.

use std::time::Instant;

/// Independent accumulators per loop iteration.
pub const CHAINS: usize = 10;

/// The lane width of the multiply-accumulates a ring's kernel needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaneWidth {
    W16,
    W32,
    W64,
}

impl LaneWidth {
    pub const ALL: [LaneWidth; 3] = [LaneWidth::W16, LaneWidth::W32, LaneWidth::W64];

    pub fn bits(self) -> u32 {
        match self {
            LaneWidth::W16 => 16,
            LaneWidth::W32 => 32,
            LaneWidth::W64 => 64,
        }
    }
}

/// One measured peak.
#[derive(Debug, Clone)]
pub struct Peak {
    pub lane: LaneWidth,
    /// The instruction sequence timed (one MAC step of one chain), e.g. `vpdpwssd zmm`.
    pub instruction: &'static str,
    /// Multiply-accumulates one step of one chain does.
    pub macs_per_step: u64,
    pub chains: usize,
    /// Loop iterations of each run (each `chains` steps).
    pub iterations: u64,
    /// Runs timed; the fastest is kept.
    pub runs: usize,
    /// The fastest run's time.
    pub seconds: f64,
    /// Multiply-accumulates per second on one thread.
    pub macs_per_s: f64,
}

/// A timed kernel: runs `iterations` loop iterations of [`CHAINS`] steps.
struct Kernel {
    instruction: &'static str,
    macs_per_step: u64,
    run: fn(u64),
}

/// The widest kernel this CPU runs for `lane`.
fn kernel(lane: LaneWidth) -> Kernel {
    #[cfg(target_arch = "x86_64")]
    {
        let has = |f: &str| match f {
            "avx512vnni" => std::arch::is_x86_feature_detected!("avx512vnni"),
            "avx512bw" => std::arch::is_x86_feature_detected!("avx512bw"),
            "avx512dq" => std::arch::is_x86_feature_detected!("avx512dq"),
            "avx512f" => std::arch::is_x86_feature_detected!("avx512f"),
            "avx2" => std::arch::is_x86_feature_detected!("avx2"),
            _ => false,
        };
        match lane {
            LaneWidth::W16 if has("avx512vnni") && has("avx512f") => {
                return Kernel {
                    instruction: "vpdpwssd zmm",
                    macs_per_step: 32,
                    run: x86::vpdpwssd_zmm,
                }
            }
            LaneWidth::W16 if has("avx512bw") => {
                return Kernel {
                    instruction: "vpmaddwd zmm + vpaddd zmm",
                    macs_per_step: 32,
                    run: x86::vpmaddwd_zmm,
                }
            }
            LaneWidth::W16 if has("avx2") => {
                return Kernel {
                    instruction: "vpmaddwd ymm + vpaddd ymm",
                    macs_per_step: 16,
                    run: x86::vpmaddwd_ymm,
                }
            }
            LaneWidth::W32 if has("avx512f") => {
                return Kernel {
                    instruction: "vpmulld zmm + vpaddd zmm",
                    macs_per_step: 16,
                    run: x86::vpmulld_zmm,
                }
            }
            LaneWidth::W32 if has("avx2") => {
                return Kernel {
                    instruction: "vpmulld ymm + vpaddd ymm",
                    macs_per_step: 8,
                    run: x86::vpmulld_ymm,
                }
            }
            LaneWidth::W64 if has("avx512dq") => {
                return Kernel {
                    instruction: "vpmullq zmm + vpaddq zmm",
                    macs_per_step: 8,
                    run: x86::vpmullq_zmm,
                }
            }
            _ => {}
        }
    }
    Kernel {
        instruction: "scalar wrapping multiply + add",
        macs_per_step: 1,
        run: scalar_chains,
    }
}

/// The portable fallback: [`CHAINS`] scalar multiply-add chains (64-bit words: the multiply of
/// any narrower lane costs the same on scalar units).
fn scalar_chains(iterations: u64) {
    let mut acc = [0u64; CHAINS];
    let (a, b) = (
        std::hint::black_box(0x9e37_79b9_7f4a_7c15u64),
        std::hint::black_box(3u64),
    );
    for _ in 0..iterations {
        for (i, x) in acc.iter_mut().enumerate() {
            *x = x.wrapping_add(a.wrapping_mul(b ^ i as u64));
        }
        acc = std::hint::black_box(acc);
    }
    std::hint::black_box(acc);
}

/// Timed runs per measurement at least; the best is kept.
pub const RUNS: usize = 5;

/// Times the widest kernel for `lane`: [`RUNS`] or more runs of about `min_secs / RUNS` each,
/// at least `min_secs` in all, after a calibration that doubles as the warm-up (and lets the
/// core settle at its vector clock). The fastest run is kept: on a shared machine a run can only
/// lose time to other work, never gain it, so the best run is the closest to the core's peak.
pub fn measure(lane: LaneWidth, min_secs: f64) -> Peak {
    time_kernel(lane, kernel(lane), min_secs)
}

/// Other multiply-accumulate peaks of this CPU, for comparison (no kernel's fraction is taken
/// over them), as (lane bits, peak): `vpdpwssd ymm` (16-bit, 256-bit vectors), `vpmullw` +
/// `vpaddw zmm` (16-bit products kept mod 2^16, the wrapping rings' other way) and `vpdpbusd
/// zmm` (8-bit x 8-bit, four products per 32-bit lane: twice the 16-bit rate, which 16-bit
/// words cannot use). Empty where the CPU lacks AVX-512 VNNI.
pub fn others(min_secs: f64) -> Vec<(u32, Peak)> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("avx512vnni") && has!("avx512bw") && has!("avx512vl") {
            let ks = [
                (16, "vpdpwssd ymm", 16, x86::vpdpwssd_ymm as fn(u64)),
                (16, "vpmullw zmm + vpaddw zmm", 32, x86::vpmullw_zmm),
                (8, "vpdpbusd zmm", 64, x86::vpdpbusd_zmm),
            ];
            return ks
                .into_iter()
                .map(|(bits, instruction, macs_per_step, run)| {
                    let k = Kernel {
                        instruction,
                        macs_per_step,
                        run,
                    };
                    (bits, time_kernel(LaneWidth::W16, k, min_secs))
                })
                .collect();
        }
    }
    let _ = min_secs;
    Vec::new()
}

/// The last-level cache of cpu0 in bytes, as Linux reports it (the highest `cache/index*`
/// level of data or unified cache); None where it reports none.
pub fn last_level_cache_bytes() -> Option<usize> {
    let dir = std::path::Path::new("/sys/devices/system/cpu/cpu0/cache");
    let mut best: Option<(u32, usize)> = None;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |f: &str| std::fs::read_to_string(entry.path().join(f)).ok();
        let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
        else {
            continue;
        };
        if kind.trim() == "Instruction" {
            continue;
        }
        let Ok(level) = level.trim().parse::<u32>() else {
            continue;
        };
        let Some(bytes) = parse_cache_size(size.trim()) else {
            continue;
        };
        if best.is_none_or(|(l, _)| level > l) {
            best = Some((level, bytes));
        }
    }
    best.map(|(_, bytes)| bytes)
}

/// `48K`, `2048K`, `480M` (sysfs cache sizes) in bytes.
fn parse_cache_size(s: &str) -> Option<usize> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: usize = digits.parse().ok()?;
    Some(match unit {
        "" => n,
        "K" => n << 10,
        "M" => n << 20,
        "G" => n << 30,
        _ => return None,
    })
}

/// Gallery bytes a timing pass of few codes reads so that the gallery streams from memory:
/// twice the last-level cache, at least 64 MiB, at most 1 GiB. (A 64 MiB gallery sat in the
/// 480 MiB last-level cache one 2-vCPU Xeon reports: its AMX kernel ran 9.5-12.5 M dot
/// products/s there against 7-10 M from a 2.56 GB gallery, 31 codes.)
pub fn streaming_gallery_bytes() -> usize {
    let llc = last_level_cache_bytes().unwrap_or(0);
    (2 * llc).clamp(64 << 20, 1 << 30)
}

/// Codes per call up to which a kernel timing reads [`streaming_gallery_bytes`]; more codes
/// make the kernel compute-bound (each byte of gallery meets many codes), and a pass over a
/// streaming gallery would take tens of seconds, so they read 64 MiB.
pub const STREAMING_MAX_CODES: usize = 512;

/// Gallery bytes a kernel timing of `codes` codes per call reads.
pub fn gallery_bytes_for(codes: usize) -> usize {
    if codes <= STREAMING_MAX_CODES {
        streaming_gallery_bytes()
    } else {
        64 << 20
    }
}

/// One thread's read bandwidth from memory in bytes/s: the sum of the 64-bit words of a buffer
/// of [`streaming_gallery_bytes`], in [`RUNS`] or more passes of at least `min_secs` in all; the
/// fastest pass is kept. The ceiling of a kernel that streams its gallery: its dot products per
/// second cannot pass this over the gallery bytes per dot product.
pub fn stream_read_bytes_per_s(min_secs: f64) -> f64 {
    let words = streaming_gallery_bytes() / 8;
    let mut buf: Vec<u64> = Vec::with_capacity(words);
    irisc_runtime::sys::advise_huge_pages(&mut buf);
    buf.extend((0..words as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    let pass = |b: &[u64]| {
        // Eight sums, so that the adds are not one chain.
        let mut acc = [0u64; 8];
        for c in b.chunks_exact(8) {
            for (a, x) in acc.iter_mut().zip(c) {
                *a = a.wrapping_add(*x);
            }
        }
        std::hint::black_box(acc);
    };
    pass(&buf);
    let (mut best, mut total, mut runs) = (f64::INFINITY, 0.0, 0);
    while runs < RUNS || total < min_secs {
        let t = Instant::now();
        pass(std::hint::black_box(&buf));
        let s = t.elapsed().as_secs_f64();
        best = best.min(s);
        total += s;
        runs += 1;
    }
    (words * 8) as f64 / best
}

/// The AMX-INT8 tile multiply's peak where this CPU and its operating system run AMX
/// (`irisc_runtime::kernels::amx::available`), else None: `tdpbuud` (16 x 64 u8 by 64 x 16 u8
/// into 16 x 16 i32, 16 384 byte products per instruction) into four accumulator tiles in
/// turn, [`CHAINS`] per loop iteration. Its MACs are 8-bit products: the AMX kernels need four
/// per 16-bit product (`irisc::codegen::cpu::kernel::amx`).
pub fn amx(min_secs: f64) -> Option<Peak> {
    #[cfg(target_arch = "x86_64")]
    if irisc_runtime::kernels::amx::available() {
        let k = Kernel {
            instruction: "tdpbuud (AMX-INT8 tile, 16x16x64 u8)",
            macs_per_step: 16 * 16 * 64,
            run: x86::tdpbuud,
        };
        return Some(time_kernel(LaneWidth::W16, k, min_secs));
    }
    let _ = min_secs;
    None
}

fn time_kernel(lane: LaneWidth, k: Kernel, min_secs: f64) -> Peak {
    let time = |iters: u64| {
        let t = Instant::now();
        (k.run)(iters);
        t.elapsed().as_secs_f64()
    };
    let per_run = min_secs / RUNS as f64;
    let mut iters = 1u64 << 10;
    // Calibrate: grow until one run takes a fifth of a run's share, then scale to the share.
    loop {
        let s = time(iters);
        if s >= per_run / 5.0 || iters >= 1 << 40 {
            iters = ((iters as f64) * per_run / s.max(1e-9)).ceil().max(1.0) as u64;
            break;
        }
        iters *= 4;
    }
    let (mut best, mut total, mut runs) = (f64::INFINITY, 0.0, 0);
    while runs < RUNS || total < min_secs {
        let s = time(iters);
        best = best.min(s);
        total += s;
        runs += 1;
    }
    let macs = (iters * CHAINS as u64 * k.macs_per_step) as f64;
    Peak {
        lane,
        instruction: k.instruction,
        macs_per_step: k.macs_per_step,
        chains: CHAINS,
        iterations: iters,
        runs,
        seconds: best,
        macs_per_s: macs / best,
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The timed loops, in `asm!` so that nothing is reordered, vectorised differently or removed:
    //! [`super::CHAINS`] (10) accumulators, each step independent of the other chains.

    use std::arch::asm;

    /// # Safety
    /// The CPU has AVX-512F and AVX-512 VNNI (checked by the caller).
    #[target_feature(enable = "avx512f,avx512vnni")]
    unsafe fn vpdpwssd_zmm_inner(iterations: u64) {
        // SAFETY: registers only; every one written is declared clobbered.
        unsafe {
            asm!(
                "vpternlogd zmm10, zmm10, zmm10, 0xff",
                "vpternlogd zmm11, zmm11, zmm11, 0xff",
                "2:",
                "vpdpwssd zmm0, zmm10, zmm11",
                "vpdpwssd zmm1, zmm10, zmm11",
                "vpdpwssd zmm2, zmm10, zmm11",
                "vpdpwssd zmm3, zmm10, zmm11",
                "vpdpwssd zmm4, zmm10, zmm11",
                "vpdpwssd zmm5, zmm10, zmm11",
                "vpdpwssd zmm6, zmm10, zmm11",
                "vpdpwssd zmm7, zmm10, zmm11",
                "vpdpwssd zmm8, zmm10, zmm11",
                "vpdpwssd zmm9, zmm10, zmm11",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iterations => _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
                out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
                out("zmm10") _, out("zmm11") _,
                options(nostack, nomem),
            );
        }
    }

    pub fn vpdpwssd_zmm(iterations: u64) {
        assert!(std::arch::is_x86_feature_detected!("avx512vnni"));
        // SAFETY: the feature was checked just above.
        unsafe { vpdpwssd_zmm_inner(iterations.max(1)) }
    }

    /// `vpmaddwd` into a scratch register (t0/t1 alternate so consecutive steps do not wait on a
    /// rename), `vpaddd` into the chain's accumulator.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn vpmaddwd_zmm_inner(iterations: u64) {
        // SAFETY: registers only; every one written is declared clobbered.
        unsafe {
            asm!(
                "vpternlogd zmm20, zmm20, zmm20, 0xff",
                "vpternlogd zmm21, zmm21, zmm21, 0xff",
                "2:",
                "vpmaddwd zmm10, zmm20, zmm21", "vpaddd zmm0, zmm0, zmm10",
                "vpmaddwd zmm11, zmm20, zmm21", "vpaddd zmm1, zmm1, zmm11",
                "vpmaddwd zmm12, zmm20, zmm21", "vpaddd zmm2, zmm2, zmm12",
                "vpmaddwd zmm13, zmm20, zmm21", "vpaddd zmm3, zmm3, zmm13",
                "vpmaddwd zmm14, zmm20, zmm21", "vpaddd zmm4, zmm4, zmm14",
                "vpmaddwd zmm15, zmm20, zmm21", "vpaddd zmm5, zmm5, zmm15",
                "vpmaddwd zmm16, zmm20, zmm21", "vpaddd zmm6, zmm6, zmm16",
                "vpmaddwd zmm17, zmm20, zmm21", "vpaddd zmm7, zmm7, zmm17",
                "vpmaddwd zmm18, zmm20, zmm21", "vpaddd zmm8, zmm8, zmm18",
                "vpmaddwd zmm19, zmm20, zmm21", "vpaddd zmm9, zmm9, zmm19",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iterations => _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
                out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
                out("zmm10") _, out("zmm11") _, out("zmm12") _, out("zmm13") _, out("zmm14") _,
                out("zmm15") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("zmm20") _, out("zmm21") _,
                options(nostack, nomem),
            );
        }
    }

    pub fn vpmaddwd_zmm(iterations: u64) {
        assert!(std::arch::is_x86_feature_detected!("avx512bw"));
        // SAFETY: the feature was checked just above.
        unsafe { vpmaddwd_zmm_inner(iterations.max(1)) }
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn vpmulld_zmm_inner(iterations: u64) {
        // SAFETY: registers only; every one written is declared clobbered.
        unsafe {
            asm!(
                "vpternlogd zmm20, zmm20, zmm20, 0xff",
                "vpternlogd zmm21, zmm21, zmm21, 0xff",
                "2:",
                "vpmulld zmm10, zmm20, zmm21", "vpaddd zmm0, zmm0, zmm10",
                "vpmulld zmm11, zmm20, zmm21", "vpaddd zmm1, zmm1, zmm11",
                "vpmulld zmm12, zmm20, zmm21", "vpaddd zmm2, zmm2, zmm12",
                "vpmulld zmm13, zmm20, zmm21", "vpaddd zmm3, zmm3, zmm13",
                "vpmulld zmm14, zmm20, zmm21", "vpaddd zmm4, zmm4, zmm14",
                "vpmulld zmm15, zmm20, zmm21", "vpaddd zmm5, zmm5, zmm15",
                "vpmulld zmm16, zmm20, zmm21", "vpaddd zmm6, zmm6, zmm16",
                "vpmulld zmm17, zmm20, zmm21", "vpaddd zmm7, zmm7, zmm17",
                "vpmulld zmm18, zmm20, zmm21", "vpaddd zmm8, zmm8, zmm18",
                "vpmulld zmm19, zmm20, zmm21", "vpaddd zmm9, zmm9, zmm19",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iterations => _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
                out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
                out("zmm10") _, out("zmm11") _, out("zmm12") _, out("zmm13") _, out("zmm14") _,
                out("zmm15") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("zmm20") _, out("zmm21") _,
                options(nostack, nomem),
            );
        }
    }

    /// The tile configuration: palette 1, tiles 0-7 of 16 rows x 64 bytes.
    #[repr(C, align(64))]
    struct TileConfig([u8; 64]);

    fn tile_config() -> TileConfig {
        let mut c = [0u8; 64];
        c[0] = 1;
        for t in 0..8 {
            c[16 + 2 * t..18 + 2 * t].copy_from_slice(&64u16.to_le_bytes());
            c[48 + t] = 16;
        }
        TileConfig(c)
    }

    /// `tdpbuud` into tmm0-3 in turn from zeroed tmm4-7, [`super::CHAINS`] per iteration.
    pub fn tdpbuud(iterations: u64) {
        assert!(irisc_runtime::kernels::amx::available());
        let cfg = tile_config();
        // SAFETY: the process has tile data permission (checked just above); the tile state
        // is configured here and released before the block ends; registers only besides the
        // configuration read.
        unsafe {
            asm!(
                "ldtilecfg [{cfg}]",
                "tilezero tmm0", "tilezero tmm1", "tilezero tmm2", "tilezero tmm3",
                "tilezero tmm4", "tilezero tmm5", "tilezero tmm6", "tilezero tmm7",
                "2:",
                "tdpbuud tmm0, tmm4, tmm6", "tdpbuud tmm1, tmm4, tmm7",
                "tdpbuud tmm2, tmm5, tmm6", "tdpbuud tmm3, tmm5, tmm7",
                "tdpbuud tmm0, tmm4, tmm6", "tdpbuud tmm1, tmm4, tmm7",
                "tdpbuud tmm2, tmm5, tmm6", "tdpbuud tmm3, tmm5, tmm7",
                "tdpbuud tmm0, tmm4, tmm6", "tdpbuud tmm1, tmm4, tmm7",
                "dec {n}",
                "jnz 2b",
                "tilerelease",
                cfg = in(reg) cfg.0.as_ptr(),
                n = inout(reg) iterations.max(1) => _,
                options(nostack, readonly),
            );
        }
    }

    pub fn vpmulld_zmm(iterations: u64) {
        assert!(std::arch::is_x86_feature_detected!("avx512f"));
        // SAFETY: the feature was checked just above.
        unsafe { vpmulld_zmm_inner(iterations.max(1)) }
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn vpmullq_zmm_inner(iterations: u64) {
        // SAFETY: registers only; every one written is declared clobbered.
        unsafe {
            asm!(
                "vpternlogd zmm20, zmm20, zmm20, 0xff",
                "vpternlogd zmm21, zmm21, zmm21, 0xff",
                "2:",
                "vpmullq zmm10, zmm20, zmm21", "vpaddq zmm0, zmm0, zmm10",
                "vpmullq zmm11, zmm20, zmm21", "vpaddq zmm1, zmm1, zmm11",
                "vpmullq zmm12, zmm20, zmm21", "vpaddq zmm2, zmm2, zmm12",
                "vpmullq zmm13, zmm20, zmm21", "vpaddq zmm3, zmm3, zmm13",
                "vpmullq zmm14, zmm20, zmm21", "vpaddq zmm4, zmm4, zmm14",
                "vpmullq zmm15, zmm20, zmm21", "vpaddq zmm5, zmm5, zmm15",
                "vpmullq zmm16, zmm20, zmm21", "vpaddq zmm6, zmm6, zmm16",
                "vpmullq zmm17, zmm20, zmm21", "vpaddq zmm7, zmm7, zmm17",
                "vpmullq zmm18, zmm20, zmm21", "vpaddq zmm8, zmm8, zmm18",
                "vpmullq zmm19, zmm20, zmm21", "vpaddq zmm9, zmm9, zmm19",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iterations => _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
                out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
                out("zmm10") _, out("zmm11") _, out("zmm12") _, out("zmm13") _, out("zmm14") _,
                out("zmm15") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("zmm20") _, out("zmm21") _,
                options(nostack, nomem),
            );
        }
    }

    pub fn vpmullq_zmm(iterations: u64) {
        assert!(std::arch::is_x86_feature_detected!("avx512dq"));
        // SAFETY: the feature was checked just above.
        unsafe { vpmullq_zmm_inner(iterations.max(1)) }
    }

    /// The same chains as [`vpdpwssd_zmm`] with an instruction named by `$ins` and registers
    /// of kind `$r` (sources 10 and 11).
    macro_rules! fused_chains {
        ($name:ident, $inner:ident, $features:literal, $ins:literal, $($reg:literal),*) => {
            #[target_feature(enable = $features)]
            unsafe fn $inner(iterations: u64) {
                // SAFETY: registers only; every one written is declared clobbered.
                unsafe {
                    asm!(
                        "vpternlogd zmm10, zmm10, zmm10, 0xff",
                        "vpternlogd zmm11, zmm11, zmm11, 0xff",
                        "2:",
                        $(concat!($ins, " ", $reg),)*
                        "dec {n}",
                        "jnz 2b",
                        n = inout(reg) iterations => _,
                        out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
                        out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
                        out("zmm10") _, out("zmm11") _,
                        options(nostack, nomem),
                    );
                }
            }

            pub fn $name(iterations: u64) {
                assert!(std::arch::is_x86_feature_detected!("avx512vnni"));
                // SAFETY: the feature was checked just above (the caller checks BW and VL).
                unsafe { $inner(iterations.max(1)) }
            }
        };
    }

    fused_chains!(
        vpdpwssd_ymm,
        vpdpwssd_ymm_inner,
        "avx512f,avx512vl,avx512vnni",
        "vpdpwssd",
        "ymm0, ymm10, ymm11",
        "ymm1, ymm10, ymm11",
        "ymm2, ymm10, ymm11",
        "ymm3, ymm10, ymm11",
        "ymm4, ymm10, ymm11",
        "ymm5, ymm10, ymm11",
        "ymm6, ymm10, ymm11",
        "ymm7, ymm10, ymm11",
        "ymm8, ymm10, ymm11",
        "ymm9, ymm10, ymm11"
    );
    fused_chains!(
        vpdpbusd_zmm,
        vpdpbusd_zmm_inner,
        "avx512f,avx512vnni",
        "vpdpbusd",
        "zmm0, zmm10, zmm11",
        "zmm1, zmm10, zmm11",
        "zmm2, zmm10, zmm11",
        "zmm3, zmm10, zmm11",
        "zmm4, zmm10, zmm11",
        "zmm5, zmm10, zmm11",
        "zmm6, zmm10, zmm11",
        "zmm7, zmm10, zmm11",
        "zmm8, zmm10, zmm11",
        "zmm9, zmm10, zmm11"
    );

    /// `vpmullw` (16-bit products mod 2^16) into a scratch register, `vpaddw` into the chain.
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn vpmullw_zmm_inner(iterations: u64) {
        // SAFETY: registers only; every one written is declared clobbered.
        unsafe {
            asm!(
                "vpternlogd zmm20, zmm20, zmm20, 0xff",
                "vpternlogd zmm21, zmm21, zmm21, 0xff",
                "2:",
                "vpmullw zmm10, zmm20, zmm21", "vpaddw zmm0, zmm0, zmm10",
                "vpmullw zmm11, zmm20, zmm21", "vpaddw zmm1, zmm1, zmm11",
                "vpmullw zmm12, zmm20, zmm21", "vpaddw zmm2, zmm2, zmm12",
                "vpmullw zmm13, zmm20, zmm21", "vpaddw zmm3, zmm3, zmm13",
                "vpmullw zmm14, zmm20, zmm21", "vpaddw zmm4, zmm4, zmm14",
                "vpmullw zmm15, zmm20, zmm21", "vpaddw zmm5, zmm5, zmm15",
                "vpmullw zmm16, zmm20, zmm21", "vpaddw zmm6, zmm6, zmm16",
                "vpmullw zmm17, zmm20, zmm21", "vpaddw zmm7, zmm7, zmm17",
                "vpmullw zmm18, zmm20, zmm21", "vpaddw zmm8, zmm8, zmm18",
                "vpmullw zmm19, zmm20, zmm21", "vpaddw zmm9, zmm9, zmm19",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iterations => _,
                out("zmm0") _, out("zmm1") _, out("zmm2") _, out("zmm3") _, out("zmm4") _,
                out("zmm5") _, out("zmm6") _, out("zmm7") _, out("zmm8") _, out("zmm9") _,
                out("zmm10") _, out("zmm11") _, out("zmm12") _, out("zmm13") _, out("zmm14") _,
                out("zmm15") _, out("zmm16") _, out("zmm17") _, out("zmm18") _, out("zmm19") _,
                out("zmm20") _, out("zmm21") _,
                options(nostack, nomem),
            );
        }
    }

    pub fn vpmullw_zmm(iterations: u64) {
        assert!(std::arch::is_x86_feature_detected!("avx512bw"));
        // SAFETY: the feature was checked just above.
        unsafe { vpmullw_zmm_inner(iterations.max(1)) }
    }

    /// AVX2 has 16 ymm registers: 10 accumulators, 4 rotating scratch registers, 2 sources.
    #[target_feature(enable = "avx2")]
    unsafe fn vpmaddwd_ymm_inner(iterations: u64) {
        // SAFETY: registers only; every one written is declared clobbered.
        unsafe {
            asm!(
                "vpcmpeqd ymm14, ymm14, ymm14",
                "vpcmpeqd ymm15, ymm15, ymm15",
                "2:",
                "vpmaddwd ymm10, ymm14, ymm15", "vpaddd ymm0, ymm0, ymm10",
                "vpmaddwd ymm11, ymm14, ymm15", "vpaddd ymm1, ymm1, ymm11",
                "vpmaddwd ymm12, ymm14, ymm15", "vpaddd ymm2, ymm2, ymm12",
                "vpmaddwd ymm13, ymm14, ymm15", "vpaddd ymm3, ymm3, ymm13",
                "vpmaddwd ymm10, ymm14, ymm15", "vpaddd ymm4, ymm4, ymm10",
                "vpmaddwd ymm11, ymm14, ymm15", "vpaddd ymm5, ymm5, ymm11",
                "vpmaddwd ymm12, ymm14, ymm15", "vpaddd ymm6, ymm6, ymm12",
                "vpmaddwd ymm13, ymm14, ymm15", "vpaddd ymm7, ymm7, ymm13",
                "vpmaddwd ymm10, ymm14, ymm15", "vpaddd ymm8, ymm8, ymm10",
                "vpmaddwd ymm11, ymm14, ymm15", "vpaddd ymm9, ymm9, ymm11",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iterations => _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _, out("ymm4") _,
                out("ymm5") _, out("ymm6") _, out("ymm7") _, out("ymm8") _, out("ymm9") _,
                out("ymm10") _, out("ymm11") _, out("ymm12") _, out("ymm13") _, out("ymm14") _,
                out("ymm15") _,
                options(nostack, nomem),
            );
        }
    }

    pub fn vpmaddwd_ymm(iterations: u64) {
        assert!(std::arch::is_x86_feature_detected!("avx2"));
        // SAFETY: the feature was checked just above.
        unsafe { vpmaddwd_ymm_inner(iterations.max(1)) }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn vpmulld_ymm_inner(iterations: u64) {
        // SAFETY: registers only; every one written is declared clobbered.
        unsafe {
            asm!(
                "vpcmpeqd ymm14, ymm14, ymm14",
                "vpcmpeqd ymm15, ymm15, ymm15",
                "2:",
                "vpmulld ymm10, ymm14, ymm15", "vpaddd ymm0, ymm0, ymm10",
                "vpmulld ymm11, ymm14, ymm15", "vpaddd ymm1, ymm1, ymm11",
                "vpmulld ymm12, ymm14, ymm15", "vpaddd ymm2, ymm2, ymm12",
                "vpmulld ymm13, ymm14, ymm15", "vpaddd ymm3, ymm3, ymm13",
                "vpmulld ymm10, ymm14, ymm15", "vpaddd ymm4, ymm4, ymm10",
                "vpmulld ymm11, ymm14, ymm15", "vpaddd ymm5, ymm5, ymm11",
                "vpmulld ymm12, ymm14, ymm15", "vpaddd ymm6, ymm6, ymm12",
                "vpmulld ymm13, ymm14, ymm15", "vpaddd ymm7, ymm7, ymm13",
                "vpmulld ymm10, ymm14, ymm15", "vpaddd ymm8, ymm8, ymm10",
                "vpmulld ymm11, ymm14, ymm15", "vpaddd ymm9, ymm9, ymm11",
                "dec {n}",
                "jnz 2b",
                n = inout(reg) iterations => _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _, out("ymm4") _,
                out("ymm5") _, out("ymm6") _, out("ymm7") _, out("ymm8") _, out("ymm9") _,
                out("ymm10") _, out("ymm11") _, out("ymm12") _, out("ymm13") _, out("ymm14") _,
                out("ymm15") _,
                options(nostack, nomem),
            );
        }
    }

    pub fn vpmulld_ymm(iterations: u64) {
        assert!(std::arch::is_x86_feature_detected!("avx2"));
        // SAFETY: the feature was checked just above.
        unsafe { vpmulld_ymm_inner(iterations.max(1)) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(super::parse_cache_size("48K"), Some(48 << 10));
        assert_eq!(super::parse_cache_size("480M"), Some(480 << 20));
        assert_eq!(super::parse_cache_size("1G"), Some(1 << 30));
        assert_eq!(super::parse_cache_size("512"), Some(512));
        assert_eq!(super::parse_cache_size("12Q"), None);
        assert_eq!(super::parse_cache_size(""), None);
        let b = super::streaming_gallery_bytes();
        assert!((64 << 20..=1 << 30).contains(&b));
        assert_eq!(
            super::gallery_bytes_for(super::STREAMING_MAX_CODES + 1),
            64 << 20
        );
    }

    use super::*;

    /// Every lane width measures a finite, positive rate with the instruction this CPU's
    /// features call for, and 16-bit MACs are at least as fast as 64-bit ones (an independent
    /// fact of every ISA: a vector holds four times as many 16-bit lanes).
    #[test]
    fn peaks_are_measured_with_the_widest_instruction() {
        let peaks: Vec<Peak> = LaneWidth::ALL.iter().map(|&l| measure(l, 0.02)).collect();
        for p in &peaks {
            assert!(p.macs_per_s.is_finite() && p.macs_per_s > 0.0, "{p:?}");
            assert_eq!(p.chains, CHAINS);
            assert!(p.seconds > 0.0);
        }
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512vnni") {
            assert_eq!(peaks[0].instruction, "vpdpwssd zmm");
        }
        assert!(peaks[0].macs_per_s > peaks[2].macs_per_s, "{peaks:?}");
    }

    /// The comparison peaks are measured where the CPU has VNNI, each with its own instruction.
    #[test]
    fn other_peaks_are_measured_with_their_instructions() {
        let others = others(0.02);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx512vnni") {
            let names: Vec<_> = others.iter().map(|(_, p)| p.instruction).collect();
            assert_eq!(
                names,
                ["vpdpwssd ymm", "vpmullw zmm + vpaddw zmm", "vpdpbusd zmm"]
            );
        }
        for (bits, p) in &others {
            assert!(p.macs_per_s.is_finite() && p.macs_per_s > 0.0, "{p:?}");
            assert!(*bits == 8 || *bits == 16);
        }
    }
}
