//! Where the AMX kernel's time goes for few codes from memory: the kernel's loop nest
//! (`irisc_bench::tile_loads`, the generated kernel's panels, K chunks, blocks and pairs)
//! timed in four forms over the same gallery, one thread, and printed as gallery bytes per
//! second and the GR16 dot products per second they would carry:
//!
//! - `stream`: the gallery read with plain 64-bit loads (the bench's memory peak);
//! - `gallery loads`: the nest's gallery tile loads alone;
//! - `all loads`: the gallery and the query-column tile loads, no products (the `dot`
//!   section's `tile_load_ceiling`);
//! - `loads and products`: what the kernel does, less its sums' bookkeeping and the combine.
//!
//! `cargo run -p irisc-bench --release --example amx_loads -- [n_codes] [n_records] [L]`
//! (defaults 31, 40 000, 12 800; the gallery is `n_records` rows of `2 L` bytes, in memory
//! advised to take huge pages, as a party's loaded gallery is).

use irisc_bench::tile_loads::{time_walk, Nest, Work};
use irisc_runtime::kernels::amx::{CODES_PER_TILE, RECORD_BLOCK};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| {
        args.get(i)
            .map(|a| a.parse().expect("n_codes n_records L are integers"))
            .unwrap_or(d)
    };
    let (codes, records, l) = (num(0, 31), num(1, 40_000), num(2, 12_800));
    assert!(l.is_multiple_of(32), "L a multiple of 32 words");
    let nest = Nest {
        records: records.next_multiple_of(RECORD_BLOCK),
        steps: l / 32,
        // B tiles per side, in pairs (as the runtime's columns pad them).
        tiles: codes.div_ceil(CODES_PER_TILE).next_multiple_of(2),
    };
    let mut gallery: Vec<u8> = Vec::with_capacity(nest.records * nest.row());
    irisc_runtime::sys::advise_huge_pages(&mut gallery);
    gallery.extend((0..nest.records * nest.row()).map(|i| (i.wrapping_mul(0x9e37) >> 3) as u8));
    let columns = vec![1u8; nest.column_bytes()];
    let bytes = gallery.len() as f64;
    let show = |what: &str, secs: f64| {
        println!(
            "  {what}: {:.2} GB/s of gallery, {:.2} M GR16 dot products/s",
            bytes / secs / 1e9,
            (nest.records * codes) as f64 / secs / 1e6
        )
    };
    println!("{codes} codes: {nest:?}");
    let mut stream = f64::INFINITY;
    for _ in 0..4 {
        let t = Instant::now();
        let mut acc = [0u64; 8];
        for c in gallery.chunks_exact(64) {
            for (a, x) in acc.iter_mut().zip(c.chunks_exact(8)) {
                *a = a.wrapping_add(u64::from_le_bytes(x.try_into().expect("8 bytes")));
            }
        }
        std::hint::black_box(acc);
        stream = stream.min(t.elapsed().as_secs_f64());
    }
    show("stream", stream);
    for (what, work) in [
        ("gallery loads", Work::GalleryLoads),
        ("all loads", Work::AllLoads),
        ("loads and products", Work::LoadsAndProducts),
    ] {
        match time_walk(nest, work, &gallery, &columns, 4) {
            Some(secs) => show(what, secs),
            None => {
                println!("  this CPU or operating system does not run AMX");
                return;
            }
        }
    }
}
