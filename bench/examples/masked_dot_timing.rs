//! Times one JIT-compiled dot-product kernel variant (u16 words) on the shape of an
//! identification batch: 31 query rotations against a gallery shard, for tuning register tiles.
//!
//! `cargo run -p irisc-bench --release --example masked_dot_timing -- [L] [n_codes] [n_records]
//! [records per tile] [codes per tile] [isa] [ring] [K chunk words]` (defaults 12800, 31, 2000,
//! the compiler's tile, `vnni`, `z16`, the compiler's chunk; ring `z16`, `gr16` or `fp`; chunk 0: none). Prints the best of several runs and dot products
//! per second.

use inkwell::{context::Context, OptimizationLevel};
use irisc::codegen::cpu::{
    kernel::{gemm, DotRing, Isa, IsaCodegen},
    target::{host_machine, optimize},
};
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

type Kernel =
    unsafe extern "C" fn(*const u16, *const u16, i64, *const u16, *const u16, i64, *mut u16);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| {
        args.get(i)
            .map(|a| a.parse().expect("L n_codes n_records R C are integers"))
            .unwrap_or(d)
    };
    let isa = args
        .get(5)
        .map(|s| {
            Isa::ALL
                .into_iter()
                .find(|i| i.name() == s)
                .expect("isa: portable, avx2, avx512 or vnni")
        })
        .unwrap_or(Isa::Vnni);
    let ring = match args.get(6).map(String::as_str) {
        Some("gr16") => DotRing::Gr16,
        Some("fp") => DotRing::Fp,
        _ => DotRing::Z16,
    };
    let (l, nc, nr) = (num(0, 12800), num(1, 31), num(2, 2000));
    let (dr, dc) = isa.tile(ring);
    let tile = (num(3, dr as usize) as u32, num(4, dc as usize) as u32);
    let chunk = num(7, isa.k_chunk(ring) as usize) as u32;

    let cx = Context::create();
    let module = cx.create_module("timing");
    let tm = host_machine().expect("host target");
    gemm::define(&cx, &module, "k", ring, l as u32, isa, tile, chunk).expect("kernel");
    module.verify().expect("valid IR");
    optimize(&module, &tm).expect("O3");
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .expect("JIT");
    let f = unsafe { ee.get_function::<Kernel>("k") }.expect("symbol");

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let top = if ring == DotRing::Fp { 65519 } else { u16::MAX };
    let mut gen = |n: usize| -> Vec<u16> { (0..n).map(|_| rng.random_range(0..top)).collect() };
    let (qa, qb) = (gen(nc * l), gen(nc * l));
    let (ga, gb) = (gen(nr * l), gen(nr * l));
    let mut out = vec![0u16; nc * nr];
    let mut run = || {
        let t = Instant::now();
        // SAFETY: the buffers have the shapes the kernel's contract asks for.
        unsafe {
            f.call(
                qa.as_ptr(),
                qb.as_ptr(),
                nc as i64,
                ga.as_ptr(),
                gb.as_ptr(),
                nr as i64,
                out.as_mut_ptr(),
            )
        };
        t.elapsed()
    };
    run(); // warm-up: page faults on `out`, caches
    let best = (0..7).map(|_| run()).min().unwrap_or(Duration::MAX);
    let dots = (nc * nr) as f64;
    println!(
        "{} {} L = {l}, n_codes = {nc}, n_records = {nr}, tile {tile:?}, chunk {chunk}: best {:.3} ms, {:.3e} dot products/s (checksum {})",
        ring.tag(),
        isa.name(),
        best.as_secs_f64() * 1e3,
        dots / best.as_secs_f64(),
        out.iter().fold(0u16, |a, &x| a.wrapping_add(x))
    );
}
