//! Where the AMX kernel's time goes for few codes from memory: the kernel's own loop nest
//! (`irisc::codegen::cpu::kernel::amx`: record panels, K chunks (16 steps for few tiles), blocks of 32
//! records, pairs of B tiles) written out by hand in four forms, each timed over the same
//! gallery, one thread, and printed as gallery bytes per second and the GR16 dot products per
//! second they would carry:
//!
//! - `stream`: the gallery read with plain 64-bit loads (the bench's memory peak);
//! - `a-loads`: the nest's gallery tile loads alone;
//! - `ab-loads`: the gallery and the query-column tile loads, no products;
//! - `nest`: the loads and the tile products (what the kernel does, less its sums'
//!   bookkeeping and the final combine).
//!
//! The nest's ceiling is the slowest of its loads, not the tile multiplier: with two pairs of B
//! tiles (31 codes) each record block's 2 KiB a step meets four products, and a tile register
//! is loaded once per product.
//!
//! `cargo run -p irisc-bench --release --example amx_loads -- [n_codes] [n_records] [L]`
//! (defaults 31, 40 000, 12 800; the gallery is `n_records` rows of `2 L` bytes, in huge pages
//! where the system grants them). x86-64 Linux with AMX only.

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn main() {
    nest::main()
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn main() {
    eprintln!("amx_loads: x86-64 Linux with AMX only");
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod nest {
    use irisc_runtime::kernels::amx::{
        available, panel_records, CODES_PER_TILE, FEW_TILES, K_CHUNK_STEPS,
        K_CHUNK_STEPS_MANY_TILES, RECORD_BLOCK, STEP_BYTES, TILE_BYTES,
    };
    use std::arch::asm;
    use std::time::Instant;

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Form {
        Stream,
        ALoads,
        AbLoads,
        Nest,
    }

    /// `ldtilecfg`'s 64-byte operand: palette 1, eight tiles of 16 rows x 64 bytes.
    #[repr(C, align(64))]
    struct TileConfig([u8; 64]);

    pub fn main() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let num = |i: usize, d: usize| {
            args.get(i)
                .map(|a| a.parse().expect("n_codes n_records L are integers"))
                .unwrap_or(d)
        };
        let (codes, records, l) = (num(0, 31), num(1, 40_000), num(2, 12_800));
        let records = records.next_multiple_of(RECORD_BLOCK);
        assert!(l % 32 == 0, "L a multiple of 32 words");
        assert!(available(), "this CPU or OS does not run AMX");
        let row = 2 * l;
        let steps = l / 32;
        // B tiles per side, in pairs (as `Columns` pads them).
        let tiles = codes.div_ceil(CODES_PER_TILE).next_multiple_of(2);
        let gallery = huge_buffer(records * row);
        let cols = vec![1u8; tiles * steps * TILE_BYTES];
        let panel = panel_records(tiles);
        let mut config = TileConfig([0; 64]);
        config.0[0] = 1;
        for t in 0..8 {
            config.0[16 + 2 * t] = 64;
            config.0[48 + t] = 16;
        }
        let forms = [Form::Stream, Form::ALoads, Form::AbLoads, Form::Nest];
        let mut best = [f64::INFINITY; 4];
        for _ in 0..6 {
            for (i, &form) in forms.iter().enumerate() {
                let t = Instant::now();
                // SAFETY: AMX is available (checked); every address lies in `gallery` or `cols`
                // (rows of `row` bytes, steps of 64 bytes below `row`; tiles x steps columns).
                unsafe {
                    run(
                        form, &config, gallery, &cols, records, row, steps, tiles, panel,
                    )
                };
                best[i] = best[i].min(t.elapsed().as_secs_f64());
            }
        }
        let bytes = (records * row) as f64;
        println!(
            "{codes} codes ({tiles} B tiles), {records} records of {l} words, panels of {panel}:"
        );
        for (form, secs) in forms.iter().zip(best) {
            println!(
                "  {form:?}: {:.2} GB/s of gallery, {:.2} M GR16 dot products/s",
                bytes / secs / 1e9,
                (records * codes) as f64 / secs / 1e6
            );
        }
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn run(
        form: Form,
        config: &TileConfig,
        gallery: &[u8],
        cols: &[u8],
        records: usize,
        row: usize,
        steps: usize,
        tiles: usize,
        panel: usize,
    ) {
        if form == Form::Stream {
            // SAFETY: the gallery's bytes as u64 words (the buffer is 2 MiB aligned).
            let words: &[u64] =
                unsafe { std::slice::from_raw_parts(gallery.as_ptr().cast(), gallery.len() / 8) };
            let mut acc = [0u64; 8];
            for c in words.chunks_exact(8) {
                for (a, x) in acc.iter_mut().zip(c) {
                    *a = a.wrapping_add(*x);
                }
            }
            std::hint::black_box(acc);
            return;
        }
        let g = gallery.as_ptr();
        let b = cols.as_ptr();
        let column = |t: usize, s: usize| unsafe { b.add((t * steps + s) * TILE_BYTES) };
        let chunk = if tiles <= FEW_TILES {
            K_CHUNK_STEPS
        } else {
            K_CHUNK_STEPS_MANY_TILES
        } as usize;
        // SAFETY: the caller's contract.
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) config.0.as_ptr());
            let mut p0 = 0;
            while p0 < records {
                let np = panel.min(records - p0);
                let mut c = 0;
                while c < steps {
                    let end = (c + chunk).min(steps);
                    let mut r0 = 0;
                    while r0 < np {
                        for pair in 0..tiles / 2 {
                            asm!(
                                "tilezero tmm0",
                                "tilezero tmm1",
                                "tilezero tmm2",
                                "tilezero tmm3"
                            );
                            for s in c..end {
                                let a0 = g.add((p0 + r0) * row + s * STEP_BYTES);
                                let a1 = a0.add(RECORD_BLOCK / 2 * row);
                                let (b0, b1) = (column(2 * pair, s), column(2 * pair + 1, s));
                                match form {
                                    Form::ALoads => asm!(
                                        "tileloadd tmm4, [{a0} + {rs}*1]",
                                        "tileloadd tmm5, [{a1} + {rs}*1]",
                                        a0 = in(reg) a0, a1 = in(reg) a1, rs = in(reg) row,
                                    ),
                                    Form::AbLoads => asm!(
                                        "tileloadd tmm4, [{a0} + {rs}*1]",
                                        "tileloadd tmm5, [{a1} + {rs}*1]",
                                        "tileloadd tmm6, [{b0} + {bs}*1]",
                                        "tileloadd tmm7, [{b1} + {bs}*1]",
                                        a0 = in(reg) a0, a1 = in(reg) a1, rs = in(reg) row,
                                        b0 = in(reg) b0, b1 = in(reg) b1, bs = in(reg) 64usize,
                                    ),
                                    _ => asm!(
                                        "tileloadd tmm4, [{a0} + {rs}*1]",
                                        "tileloadd tmm5, [{a1} + {rs}*1]",
                                        "tileloadd tmm6, [{b0} + {bs}*1]",
                                        "tileloadd tmm7, [{b1} + {bs}*1]",
                                        "tdpbuud tmm0, tmm4, tmm6",
                                        "tdpbuud tmm1, tmm4, tmm7",
                                        "tdpbuud tmm2, tmm5, tmm6",
                                        "tdpbuud tmm3, tmm5, tmm7",
                                        a0 = in(reg) a0, a1 = in(reg) a1, rs = in(reg) row,
                                        b0 = in(reg) b0, b1 = in(reg) b1, bs = in(reg) 64usize,
                                    ),
                                }
                            }
                        }
                        r0 += RECORD_BLOCK;
                    }
                    c = end;
                }
                p0 += np;
            }
            asm!("tilerelease");
        }
    }

    /// `bytes` of gallery in memory advised to use huge pages (as a party's loaded gallery
    /// is), filled, leaked (the process is short-lived).
    fn huge_buffer(bytes: usize) -> &'static [u8] {
        const HUGE: usize = 2 << 20;
        let size = bytes.div_ceil(HUGE).max(1) * HUGE;
        let layout = std::alloc::Layout::from_size_align(size, HUGE).expect("layout");
        // SAFETY: a non-zero size; advised before the first touch; every byte is written
        // before the slice is made.
        unsafe {
            let p = std::alloc::alloc(layout);
            assert!(!p.is_null(), "out of memory");
            libc::madvise(p.cast(), size, libc::MADV_HUGEPAGE);
            for i in 0..bytes {
                p.add(i).write((i.wrapping_mul(0x9e37) >> 3) as u8);
            }
            std::slice::from_raw_parts(p, bytes)
        }
    }
}
