//! Times the JIT-compiled masked-dot kernel (u16 storage) on the shape of an identification
//! batch: 31 query rotations against a gallery shard.
//!
//! `cargo run -p irisc --release --example masked_dot_timing -- [L] [n_codes] [n_records] [codes per block]`
//! (defaults 12800, 31, 2000 and the compiler's tiling). Prints the best of several runs and dot products per second.

use inkwell::{context::Context, OptimizationLevel};
use irisc::codegen::cpu::{
    kernel::{kernel_name, masked_dot_blocked, CODE_BLOCK},
    target::{host_machine, optimize},
};
use rand::{Rng, SeedableRng};
use std::time::{Duration, Instant};

type Kernel =
    unsafe extern "C" fn(*const u16, *const u16, i64, *const u16, *const u16, i64, *mut u16);

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("arguments are integers: L n_codes n_records codes")
        })
        .collect();
    let arg = |i: usize, d: usize| args.get(i).copied().unwrap_or(d);
    let (l, nc, nr) = (arg(0, 12800), arg(1, 31), arg(2, 2000));
    let cb = arg(3, CODE_BLOCK as usize);

    let cx = Context::create();
    let module = cx.create_module("timing");
    let tm = host_machine().expect("host target");
    masked_dot_blocked(&cx, &module, l as u32, 16, cb as u32).expect("kernel");
    module.verify().expect("valid IR");
    optimize(&module, &tm).expect("O3");
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .expect("JIT");
    let f = unsafe { ee.get_function::<Kernel>(&kernel_name(l as u32, 16)) }.expect("symbol");

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut gen = |n: usize| -> Vec<u16> { (0..n).map(|_| rng.random()).collect() };
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
        "L = {l}, n_codes = {nc}, n_records = {nr}, u16, {cb} codes per block: best {:.3} ms, {:.3e} dot products/s (checksum {})",
        best.as_secs_f64() * 1e3,
        dots / best.as_secs_f64(),
        out.iter().fold(0u16, |a, &x| a.wrapping_add(x))
    );
}
