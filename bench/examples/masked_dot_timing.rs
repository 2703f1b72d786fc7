//! Times JIT-compiled dot-product kernel shapes (u16 words) against each other on the shape of
//! an identification batch (31 query rotations against a gallery shard), for tuning register
//! tiles: the shapes run in turns in one process, so that other work on the machine slows them
//! alike, and each one's best run is printed.
//!
//! `cargo run -p irisc-bench --release --example masked_dot_timing -- [L] [n_codes]
//! [n_records] [ring] [isa] [shape...]` (defaults 12800, 31, 2000, `z16`, `vnni`, the
//! compiler's default shape; ring `z16`, `gr16` or `fp`). A shape is `RxC` with optional
//! suffixes `:kN` (K chunks of N words, 0: none), `:pN` (code panels of N codes), `:rN` (record
//! panels of N records), `:dN` (prefetch each gallery row N bytes ahead, 0: none) and `:nonext`
//! (no streaming of the next record block). `IRISC_KERNEL_ASM=path` also writes the kernels' assembly.

use inkwell::{context::Context, OptimizationLevel};
use irisc::codegen::cpu::{
    kernel::{gemm, DotRing, Isa},
    target::{host_machine, optimize},
};
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

type Kernel =
    unsafe extern "C" fn(*const u16, *const u16, i64, *const u16, *const u16, i64, *mut u16);

fn parse_shape(s: &str, default: gemm::Shape) -> gemm::Shape {
    let mut parts = s.split(':');
    let mut shape = default;
    let (r, c) = parts
        .next()
        .and_then(|t| t.split_once('x'))
        .expect("shape RxC");
    shape.tile = (r.parse().expect("R"), c.parse().expect("C"));
    for p in parts {
        if let Some(k) = p.strip_prefix('k') {
            shape.k_chunk = k.parse().expect("K chunk");
        } else if let Some(n) = p.strip_prefix('p') {
            shape.code_panel = n.parse().expect("code panel");
        } else if let Some(n) = p.strip_prefix('r') {
            shape.record_panel = n.parse().expect("record panel");
        } else if let Some(n) = p.strip_prefix('d') {
            shape.prefetch_bytes = n.parse().expect("prefetch distance");
        } else if p == "nonext" {
            shape.stream_next = false;
        } else {
            panic!("unknown shape suffix {p}");
        }
    }
    shape
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| {
        args.get(i)
            .map(|a| a.parse().expect("L n_codes n_records are integers"))
            .unwrap_or(d)
    };
    let (l, nc, nr) = (num(0, 12800), num(1, 31), num(2, 2000));
    let ring = match args.get(3).map(String::as_str) {
        Some("gr16") => DotRing::Gr16,
        Some("fp") => DotRing::Fp,
        _ => DotRing::Z16,
    };
    let isa = args
        .get(4)
        .map(|s| {
            Isa::ALL
                .into_iter()
                .find(|i| i.name() == s)
                .expect("isa: portable, avx2, avx512 or vnni")
        })
        .unwrap_or(Isa::Vnni);
    let default = gemm::Shape::default_for(isa, ring);
    let mut shapes: Vec<gemm::Shape> = args
        .iter()
        .skip(5)
        .map(|s| parse_shape(s, default))
        .collect();
    if shapes.is_empty() {
        shapes.push(default);
    }

    let cx = Context::create();
    let module = cx.create_module("timing");
    let tm = host_machine().expect("host target");
    for (i, &shape) in shapes.iter().enumerate() {
        gemm::define(&cx, &module, &format!("k{i}"), ring, l as u32, isa, shape).expect("kernel");
    }
    module.verify().expect("valid IR");
    optimize(&module, &tm).expect("O3");
    if let Ok(path) = std::env::var("IRISC_KERNEL_ASM") {
        tm.write_to_file(
            &module,
            inkwell::targets::FileType::Assembly,
            std::path::Path::new(&path),
        )
        .expect("assembly");
    }
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .expect("JIT");
    let fs: Vec<_> = (0..shapes.len())
        .map(|i| unsafe { ee.get_function::<Kernel>(&format!("k{i}")) }.expect("symbol"))
        .collect();

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let top = if ring == DotRing::Fp { 65519 } else { u16::MAX };
    let mut gen = |n: usize| -> Vec<u16> { (0..n).map(|_| rng.random_range(0..top)).collect() };
    let (qa_words, qb_words) = (gen(nc * l), gen(nc * l));
    let (ga_words, gb_words) = (gen(nr * l), gen(nr * l));
    // `IRISC_TIMING_HUGE=1`: the gallery in 2 MiB pages (as a loaded shard's buffers are, where
    // the system grants them), to tell TLB misses from memory latency.
    let huge = std::env::var("IRISC_TIMING_HUGE").is_ok_and(|v| v == "1");
    let (ga, gb): (&[u16], &[u16]) = if huge {
        (in_huge_pages(&ga_words), in_huge_pages(&gb_words))
    } else {
        (&ga_words, &gb_words)
    };
    let (qa, qb): (&[u16], &[u16]) = if huge {
        (in_huge_pages(&qa_words), in_huge_pages(&qb_words))
    } else {
        (&qa_words, &qb_words)
    };
    let mut out = vec![0u16; nc * nr];
    // Calls of `call_records` records in turn over the gallery (each call's rows cold, as in a
    // scan), every shape on the same calls: a short call is rarely interrupted by other work,
    // so the 10th percentile of the per-call times is the undisturbed figure.
    // `IRISC_TIMING_CALL_RECORDS=N`: calls of N records instead (record panels wider than a
    // call are cut to it).
    let call_records: usize = std::env::var("IRISC_TIMING_CALL_RECORDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48);
    let calls = nr.div_ceil(call_records);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); shapes.len()];
    let mut sums = vec![0u16; shapes.len()];
    let start = Instant::now();
    let mut turns = 0;
    while turns < 3 || start.elapsed() < Duration::from_secs(4) {
        for (i, f) in fs.iter().enumerate() {
            for c in 0..calls {
                let r0 = c * call_records;
                let n = call_records.min(nr - r0);
                let t = Instant::now();
                // SAFETY: the buffers have the shapes the kernel's contract asks for.
                unsafe {
                    f.call(
                        qa.as_ptr(),
                        qb.as_ptr(),
                        nc as i64,
                        ga[r0 * l..].as_ptr(),
                        gb[r0 * l..].as_ptr(),
                        n as i64,
                        out[r0 * nc..].as_mut_ptr(),
                    )
                };
                times[i].push(t.elapsed().as_secs_f64() / (n * nc) as f64);
            }
            sums[i] = out.iter().fold(0u16, |a, &x| a.wrapping_add(x));
        }
        turns += 1;
    }
    let best: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort_by(f64::total_cmp);
            Duration::from_secs_f64(t[t.len() / 10] * (nc * nr) as f64)
        })
        .collect();
    for (i, shape) in shapes.iter().enumerate() {
        let dots = (nc * nr) as f64;
        println!(
            "{} {} L = {l}, n_codes = {nc}, n_records = {nr}, {shape:?}: p10 {:.3} ms, {:.3e} dot products/s (checksum {})",
            ring.tag(),
            isa.name(),
            best[i].as_secs_f64() * 1e3,
            dots / best[i].as_secs_f64(),
            sums[i]
        );
    }
}

/// A copy of `words` in memory advised to use huge pages, leaked (the process is short-lived).
fn in_huge_pages(words: &[u16]) -> &'static [u16] {
    const HUGE: usize = 2 << 20;
    let bytes = (words.len() * 2).div_ceil(HUGE).max(1) * HUGE;
    let layout = std::alloc::Layout::from_size_align(bytes, HUGE).expect("layout");
    // SAFETY: a non-zero size, advised before the first touch; the copy fills the first
    // `words.len()` words of the allocation, which is never freed.
    unsafe {
        let p = std::alloc::alloc(layout);
        assert!(!p.is_null(), "out of memory");
        libc::madvise(p.cast(), bytes, libc::MADV_HUGEPAGE);
        std::ptr::copy_nonoverlapping(words.as_ptr(), p.cast::<u16>(), words.len());
        std::slice::from_raw_parts(p.cast::<u16>(), words.len())
    }
}
