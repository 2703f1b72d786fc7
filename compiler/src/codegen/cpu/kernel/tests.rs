//! Every generated variant (ring x ISA, portable included) against the runtime's plain
//! references, JIT-compiled for this host; ISA paths this CPU lacks are skipped and said so.

use super::*;
use crate::codegen::cpu::target::{host_machine, optimize};
use inkwell::OptimizationLevel;
use irisc_runtime::kernels::{fp_dot_reference, gr_dot_reference, masked_dot_reference};
use irisc_runtime::ring::RingElem;
use rand::{Rng, SeedableRng};

type Kernel<T> = unsafe extern "C" fn(*const T, *const T, i64, *const T, *const T, i64, *mut T);

/// 4103 = one F_p K chunk on AVX-512 (4096 words) + 7 words.
const LENGTHS: [u32; 8] = [1, 7, 31, 33, 64, 100, 4103, 12800];
/// (n_codes, n_records): empty, single, and not multiples of any tile.
const SHAPES: [(usize, usize); 8] = [
    (0, 3),
    (3, 0),
    (1, 1),
    (3, 5),
    (31, 3),
    (5, 9),
    (62, 2),
    (4, 4),
];

/// Runs `check(ring variant, isa)` for every variant of `ring` at `l` that this CPU runs.
fn each_variant<T: RingElem>(ring: DotRing, l: u32, check: &mut dyn FnMut(Kernel<T>, Isa)) {
    let cx = Context::create();
    let module = cx.create_module("kernel_test");
    let tm = host_machine().unwrap();
    table(&cx, &module, ring, l).unwrap();
    module.verify().unwrap();
    optimize(&module, &tm).unwrap();
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .unwrap();
    for isa in ring.variants(host_is_x86()) {
        if !isa.supported() {
            eprintln!(
                "SKIPPED: {} L = {l} {}: this CPU lacks the ISA",
                ring.tag(),
                isa.name()
            );
            continue;
        }
        let addr = ee.get_function_address(&kernel_name(ring, l, isa)).unwrap();
        // SAFETY: the address of a generated kernel, whose signature this is.
        check(
            unsafe { std::mem::transmute::<usize, Kernel<T>>(addr) },
            isa,
        );
    }
}

fn random<T>(n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<T>
where
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    (0..n).map(|_| rng.random()).collect()
}

/// Calls a kernel; `out` has one extra word that must stay put.
#[allow(clippy::too_many_arguments)]
fn call<T: RingElem>(
    f: Kernel<T>,
    qa: &[T],
    qb: Option<&[T]>,
    nc: usize,
    ga: &[T],
    gb: Option<&[T]>,
    nr: usize,
) -> Vec<T> {
    let sentinel = T::from_u64(0x5a5a);
    let mut out = vec![sentinel; nc * nr + 1];
    let p = |s: Option<&[T]>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    unsafe {
        f(
            qa.as_ptr(),
            p(qb),
            nc as i64,
            ga.as_ptr(),
            p(gb),
            nr as i64,
            out.as_mut_ptr(),
        )
    };
    assert_eq!(out.pop(), Some(sentinel), "kernel wrote past out");
    out
}

fn check_replicated<T: RingElem>(ring: DotRing)
where
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    for l in LENGTHS {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(l) * 7 + 1);
        each_variant::<T>(ring, l, &mut |f, isa| {
            let lu = l as usize;
            for (nc, nr) in SHAPES {
                let (qa, qb) = (random::<T>(nc * lu, &mut rng), random(nc * lu, &mut rng));
                let (ga, gb) = (random::<T>(nr * lu, &mut rng), random(nr * lu, &mut rng));
                let got = call(f, &qa, Some(&qb), nc, &ga, Some(&gb), nr);
                let mut want = vec![T::ZERO; nc * nr];
                masked_dot_reference(&qa, &qb, nc, &ga, &gb, nr, lu, &mut want);
                assert!(
                    got == want,
                    "{} {} L = {l}, {nc} codes x {nr} records",
                    ring.tag(),
                    isa.name()
                );
            }
        });
    }
}

#[test]
fn z16_variants_equal_the_reference() {
    check_replicated::<u16>(DotRing::Z16);
}

#[test]
fn z32_variants_equal_the_reference() {
    check_replicated::<u32>(DotRing::Z32);
}

#[test]
fn z64_variants_equal_the_reference() {
    check_replicated::<u64>(DotRing::Z64);
}

#[test]
fn gr16_variants_equal_the_reference() {
    // Words per code are d*ceil(len/d) for d = 2, 4; the kernel only sees the word count.
    for l in LENGTHS {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(l) * 13 + 5);
        each_variant::<u16>(DotRing::Gr16, l, &mut |f, isa| {
            let lu = l as usize;
            for (nc, nr) in SHAPES {
                let (q, g) = (random::<u16>(nc * lu, &mut rng), random(nr * lu, &mut rng));
                let got = call(f, &q, None, nc, &g, None, nr);
                let mut want = vec![0u16; nc * nr];
                gr_dot_reference(&q, nc, &g, nr, lu, &mut want);
                assert!(got == want, "gr16 {} L = {l}, {nc} x {nr}", isa.name());
            }
        });
    }
}

#[test]
fn fp_variants_equal_the_reference() {
    for l in LENGTHS {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(l) * 17 + 3);
        each_variant::<u16>(DotRing::Fp, l, &mut |f, isa| {
            let lu = l as usize;
            let p = P as u16;
            for (nc, nr) in SHAPES {
                let below_p = |n: usize, rng: &mut rand_chacha::ChaCha8Rng| -> Vec<u16> {
                    // Include the extremes 0, p/2, p/2 + 1 and p - 1 (the signed-representative
                    // boundary of the pair paths).
                    (0..n)
                        .map(|i| match i % 11 {
                            0 => p - 1,
                            1 => p / 2,
                            2 => p / 2 + 1,
                            3 => 0,
                            _ => rng.random_range(0..p),
                        })
                        .collect()
                };
                let (q, g) = (below_p(nc * lu, &mut rng), below_p(nr * lu, &mut rng));
                let got = call(f, &q, None, nc, &g, None, nr);
                let mut want = vec![0u16; nc * nr];
                fp_dot_reference(&q, nc, &g, nr, lu, &mut want);
                assert!(got == want, "fp {} L = {l}, {nc} x {nr}", isa.name());
            }
        });
    }
}

#[test]
fn tables_hold_the_variants_and_are_shared() {
    let cx = Context::create();
    let module = cx.create_module("k");
    let a = table(&cx, &module, DotRing::Z16, 64).unwrap();
    let b = table(&cx, &module, DotRing::Z16, 64).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, table(&cx, &module, DotRing::Z32, 64).unwrap());
    assert!(kernel(&cx, &module, DotRing::Fp, 0, Isa::Portable).is_err());
    assert!(DotRing::replicated(8).is_err());
    module.verify().unwrap();
    let ir = module.print_to_string().to_string();
    for isa in DotRing::Z16.variants(host_is_x86()) {
        assert!(
            ir.contains(&format!("@{}", kernel_name(DotRing::Z16, 64, isa))),
            "{ir}"
        );
    }
    if host_is_x86() {
        assert!(ir.contains("llvm.x86.avx512.vpdpwssd.512"), "{ir}");
        assert!(ir.contains("\"target-features\"=\"+avx2\""), "{ir}");
    }
    assert_eq!(storage_bits(16), 16);
    assert_eq!(storage_bits(17), 32);
    assert_eq!(storage_bits(33), 64);
}

/// Small K chunks (64 words) for every ring and ISA, including the one-sided rings that do not
/// chunk by default: the later chunks add to `out` (wrapping, or mod p for F_p).
#[test]
fn chunked_kernels_equal_the_reference() {
    let l = 200u32;
    let lu = l as usize;
    for ring in DotRing::ALL {
        let cx = Context::create();
        let module = cx.create_module("chunks");
        let tm = host_machine().unwrap();
        let variants = ring.variants(host_is_x86());
        for &isa in &variants {
            gemm::define(
                &cx,
                &module,
                &format!("k_{}", isa.name()),
                ring,
                l,
                isa,
                gemm::Shape {
                    k_chunk: 64,
                    ..gemm::Shape::default_for(isa, ring)
                },
            )
            .unwrap();
        }
        module.verify().unwrap();
        optimize(&module, &tm).unwrap();
        let ee = module
            .create_jit_execution_engine(OptimizationLevel::Aggressive)
            .unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(99);
        for isa in variants {
            if !isa.supported() {
                eprintln!(
                    "SKIPPED: chunked {} {}: this CPU lacks the ISA",
                    ring.tag(),
                    isa.name()
                );
                continue;
            }
            let addr = ee
                .get_function_address(&format!("k_{}", isa.name()))
                .unwrap();
            let (nc, nr) = (13usize, 7usize);
            macro_rules! rep {
                ($t:ty) => {{
                    // SAFETY: a generated kernel with this signature.
                    let f = unsafe { std::mem::transmute::<usize, Kernel<$t>>(addr) };
                    let (qa, qb) = (random::<$t>(nc * lu, &mut rng), random(nc * lu, &mut rng));
                    let (ga, gb) = (random::<$t>(nr * lu, &mut rng), random(nr * lu, &mut rng));
                    let got = call(f, &qa, Some(&qb), nc, &ga, Some(&gb), nr);
                    let mut want = vec![0 as $t; nc * nr];
                    masked_dot_reference(&qa, &qb, nc, &ga, &gb, nr, lu, &mut want);
                    assert!(got == want, "chunked {} {}", ring.tag(), isa.name());
                }};
            }
            match ring {
                DotRing::Z16 => rep!(u16),
                DotRing::Z32 => rep!(u32),
                DotRing::Z64 => rep!(u64),
                DotRing::Gr16 | DotRing::Fp => {
                    // SAFETY: a generated kernel with this signature.
                    let f = unsafe { std::mem::transmute::<usize, Kernel<u16>>(addr) };
                    let p = P as u16;
                    let mut gen = |n: usize| -> Vec<u16> {
                        (0..n)
                            .map(|i| {
                                if i % 5 == 0 {
                                    p - 1
                                } else {
                                    rng.random_range(0..p)
                                }
                            })
                            .collect()
                    };
                    let (q, g) = (gen(nc * lu), gen(nr * lu));
                    let got = call(f, &q, None, nc, &g, None, nr);
                    let mut want = vec![0u16; nc * nr];
                    if ring == DotRing::Fp {
                        fp_dot_reference(&q, nc, &g, nr, lu, &mut want);
                    } else {
                        gr_dot_reference(&q, nc, &g, nr, lu, &mut want);
                    }
                    assert!(got == want, "chunked {} {}", ring.tag(), isa.name());
                }
            }
        }
    }
}

/// Ring-edge words: the extremes of u16, of the signed range, and (below p) of F_p's signed
/// representatives and byte split.
fn edgy(ring: DotRing, n: usize, rng: &mut rand_chacha::ChaCha8Rng) -> Vec<u16> {
    let p = P as u16;
    let edges: &[u16] = if ring == DotRing::Fp {
        &[0, 1, p - 1, p / 2, p / 2 + 1, 255, 256, 0xff00, p - 256]
    } else {
        &[0, 1, 0xffff, 0x8000, 0x7fff, 0xff00, 0x00ff]
    };
    let top = if ring == DotRing::Fp { p } else { u16::MAX };
    (0..n)
        .map(|i| {
            if rng.random_range(0..3) == 0 {
                edges[i % edges.len()]
            } else {
                rng.random_range(0..=top.saturating_sub(u16::from(ring == DotRing::Fp)))
            }
        })
        .collect()
}

/// Runs every variant this CPU has of the 16-bit kernel (`ring`, `l`) generated with `shape`
/// (the 512-bit ones; the others with their own tile and `shape`'s panels and streaming) on
/// `nc` codes x `nr` records of edge-heavy words and compares with the runtime's reference.
fn check_shape(ring: DotRing, l: u32, shape: gemm::Shape, nc: usize, nr: usize, seed: u64) {
    let cx = Context::create();
    let module = cx.create_module("shapes");
    let tm = host_machine().unwrap();
    let variants = ring.variants(host_is_x86());
    for &isa in &variants {
        let mut s = shape;
        if !matches!(isa, Isa::Avx512 | Isa::Vnni) {
            s.tile = isa.tile(ring);
        }
        if ring == DotRing::Fp {
            s.k_chunk = isa.k_chunk(ring).min(s.k_chunk.max(isa.lanes(ring)));
            if isa.k_chunk(ring) == 0 {
                s.k_chunk = 0;
            }
        }
        gemm::define(&cx, &module, &format!("k_{}", isa.name()), ring, l, isa, s).unwrap();
    }
    module.verify().unwrap();
    optimize(&module, &tm).unwrap();
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let lu = l as usize;
    let sides = ring.sides() as usize;
    let q: Vec<Vec<u16>> = (0..sides).map(|_| edgy(ring, nc * lu, &mut rng)).collect();
    let g: Vec<Vec<u16>> = (0..sides).map(|_| edgy(ring, nr * lu, &mut rng)).collect();
    let mut want = vec![0u16; nc * nr];
    match ring {
        DotRing::Z16 => masked_dot_reference(&q[0], &q[1], nc, &g[0], &g[1], nr, lu, &mut want),
        DotRing::Gr16 => gr_dot_reference(&q[0], nc, &g[0], nr, lu, &mut want),
        _ => fp_dot_reference(&q[0], nc, &g[0], nr, lu, &mut want),
    }
    for isa in variants {
        if !isa.supported() {
            continue;
        }
        let addr = ee
            .get_function_address(&format!("k_{}", isa.name()))
            .unwrap();
        // SAFETY: a generated kernel with this signature.
        let f = unsafe { std::mem::transmute::<usize, Kernel<u16>>(addr) };
        let got = call(
            f,
            &q[0],
            q.get(1).map(|v| v.as_slice()),
            nc,
            &g[0],
            g.get(1).map(|v| v.as_slice()),
            nr,
        );
        assert!(
            got == want,
            "{} {} L = {l}, {shape:?}, {nc} codes x {nr} records",
            ring.tag(),
            isa.name()
        );
    }
}

/// Every tile the compiler's analysis chooses for the batch shapes (1..8 codes, 31, 248, and
/// 1 984 with its code panels) equals the reference, at odd lengths and on ring edges; panels
/// small enough that several run (a few codes each) included.
#[test]
fn the_analysis_tiles_equal_the_reference() {
    use crate::analysis::kernel_tile::{choose, DotKind};
    let kinds = [
        (DotRing::Z16, DotKind::Replicated { storage_bits: 16 }),
        (DotRing::Gr16, DotKind::Galois),
        (DotRing::Fp, DotKind::Prime),
    ];
    let mut seed = 1;
    for (ring, kind) in kinds {
        for codes in [1u64, 2, 3, 5, 31, 248, 1984] {
            let tile = choose(kind, codes);
            for l in [7u32, 33, 4103] {
                let nc = (codes as usize).min(if l > 1000 { 9 } else { 70 });
                let mut s = shape(Isa::Vnni, ring, l, Some(&tile));
                if tile.panel_bytes > 0 {
                    // Panels of a few codes at these lengths: the panel loop and its last,
                    // partial panel run.
                    s.code_panel = 2 * s.tile.1 + 1;
                }
                if s.record_panel > 0 {
                    // Likewise record panels of one record tile: three panels, the last short.
                    s.record_panel = s.tile.0;
                }
                seed += 1;
                check_shape(ring, l, s, nc, 2 * tile.records as usize + 1, seed);
            }
        }
    }
}

/// The names of a recorded tile's kernels and table differ from the default's (so that two
/// tiles of one (ring, L) in one module do not collide) and the default keeps its name.
#[test]
fn recorded_tiles_name_their_kernels() {
    use crate::analysis::kernel_tile::{choose, DotKind};
    let cx = Context::create();
    let module = cx.create_module("names");
    use inkwell::values::AnyValue;
    let default = table(&cx, &module, DotRing::Gr16, 64).unwrap();
    let same = choose(DotKind::Galois, 248);
    let t = table_tiled(&cx, &module, DotRing::Gr16, 64, Some(&same), None).unwrap();
    // The analysis' 248-code tile is the default one (its kernels keep their names); too
    // short for K chunks, its second nest differs in the register tile only, and only for
    // the 512-bit variants, the ones that take the recorded tile.
    assert_eq!(
        t.get_name().to_str().unwrap(),
        "irisc_kernels_dot_gr16_L64_or_t6x4"
    );
    let rows = t.get_initializer().unwrap().print_to_string().to_string();
    assert!(
        rows.contains("[ptr @irisc_kernel_dot_gr16_L64_portable, ptr @irisc_kernel_dot_gr16_L64_avx2, ptr @irisc_kernel_dot_gr16_L64_avx512, ptr @irisc_kernel_dot_gr16_L64_vnni]"),
        "{rows}"
    );
    if host_is_x86() {
        assert!(
            rows.contains("[ptr null, ptr null, ptr @irisc_kernel_dot_gr16_L64_avx512_t6x4, ptr @irisc_kernel_dot_gr16_L64_vnni_t6x4]"),
            "{rows}"
        );
    }
    let narrow = choose(DotKind::Galois, 3);
    let n = table_tiled(&cx, &module, DotRing::Gr16, 64, Some(&narrow), None).unwrap();
    assert_ne!(default, n);
    assert!(n.get_name().to_str().unwrap().ends_with("_t9x3"), "{n:?}");
    // 1 984 codes: panels of 126 codes, the codes whose 4 KiB K chunks fill 512 KiB (sized by
    // whole 25.6 kB rows, a panel would hold 18, and the gallery is read once per panel).
    let big = choose(DotKind::Galois, 1984);
    let b = kernel_name_tiled(DotRing::Gr16, 12800, Isa::Vnni, Some(&big));
    assert_eq!(b, "irisc_kernel_dot_gr16_L12800_vnni_t4x6_p126_k2048_r48");
    let z = choose(DotKind::Replicated { storage_bits: 16 }, 1984);
    let z = kernel_name_tiled(DotRing::Z16, 12800, Isa::Vnni, Some(&z));
    assert_eq!(z, "irisc_kernel_dot_z16_L12800_vnni_t4x6_p126_k1024_r48");
    // Where K chunks run, the 31-code tile's table offers the unchunked nest in the transposed
    // tile as each x86 variant's second (the portable variant runs no chunks and no recorded
    // tile: one nest).
    let few = choose(DotKind::Galois, 31);
    assert!(few.unchunked_alternative);
    let long = table_tiled(&cx, &module, DotRing::Gr16, 12800, Some(&few), None).unwrap();
    assert_eq!(
        long.get_name().to_str().unwrap(),
        "irisc_kernels_dot_gr16_L12800_t4x6_k2048_r48_or_t6x4"
    );
    let text = long
        .get_initializer()
        .unwrap()
        .print_to_string()
        .to_string();
    let unchunked = |isa: Isa| {
        format!(
            "ptr @{}",
            kernel_name_tiled(DotRing::Gr16, 12800, isa, Some(&few.unchunked()))
        )
    };
    if host_is_x86() {
        for isa in [Isa::Avx2, Isa::Avx512, Isa::Vnni] {
            assert!(text.contains(&unchunked(isa)), "{isa:?}: {text}");
        }
        assert!(
            text.contains("[ptr null, ptr @"),
            "no portable second nest: {text}"
        );
    }
    module.verify().unwrap();
}

mod shapes {
    use super::*;
    use proptest::prelude::*;

    fn ring() -> impl Strategy<Value = DotRing> {
        prop_oneof![Just(DotRing::Z16), Just(DotRing::Gr16), Just(DotRing::Fp)]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(40))]

        /// Any tile within the registers, any code panel, record panel (code blocks outside
        /// record blocks), K chunk and streaming choice, any shape of call: every variant equals
        /// the reference.
        #[test]
        fn any_shape_equals_the_reference(
            ring in ring(),
            l in 1u32..300,
            records in 1u32..13,
            codes in 1u32..7,
            panel in prop_oneof![Just(0u32), 1u32..9],
            record_panel in prop_oneof![Just(0u32), 1u32..20],
            chunk_steps in 0u32..5,
            stream_next in any::<bool>(),
            nc in 0usize..23,
            nr in 0usize..17,
            seed in any::<u64>(),
        ) {
            use crate::analysis::kernel_tile::{check, DotKind, KernelTile};
            let kind = match ring {
                DotRing::Z16 => DotKind::Replicated { storage_bits: 16 },
                DotRing::Gr16 => DotKind::Galois,
                _ => DotKind::Prime,
            };
            let t = KernelTile {
                records,
                codes,
                call_codes: nc as u64,
                panel_bytes: 0,
                k_chunk_bytes: 0,
                record_panel_bytes: 0,
                unchunked_alternative: false,
                alternative_tile: None,
            };
            prop_assume!(check(kind, &t).is_ok());
            let lanes = Isa::Vnni.lanes(ring);
            let k_chunk = if ring == DotRing::Fp && chunk_steps == 0 {
                Isa::Vnni.k_chunk(ring)
            } else {
                chunk_steps * lanes
            };
            let s = gemm::Shape {
                tile: (records, codes),
                k_chunk,
                stream_next,
                code_panel: panel,
                record_panel,
                prefetch_bytes: Isa::Vnni.prefetch_bytes().unwrap_or(0) as u32,
            };
            check_shape(ring, l, s, nc, nr, seed);
        }
    }
}

/// The polyphase kernels' split, written out: the even cells of a row, the odd cells, or their
/// sum (part 0, 1, 2), each cell 4 words.
fn split_row(row: &[u16], part: usize) -> Vec<u16> {
    row.chunks_exact(8)
        .flat_map(|pair| {
            (0..4).map(move |w| match part {
                0 => pair[w],
                1 => pair[4 + w],
                _ => pair[w].wrapping_add(pair[4 + w]),
            })
        })
        .collect()
}

/// JIT-compiles the polyphase table of (`ring`, `l`) and runs `check` on each variant this CPU
/// runs.
fn each_polyphase_variant(
    ring: DotRing,
    l: u32,
    half_rows: u64,
    check: &mut dyn FnMut(Kernel<u16>, Isa),
) {
    let cx = Context::create();
    let module = cx.create_module("polyphase_test");
    let tm = host_machine().unwrap();
    polyphase::variants(&cx, &module, ring, l, half_rows).unwrap();
    module.verify().unwrap();
    optimize(&module, &tm).unwrap();
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .unwrap();
    for isa in ring.variants(host_is_x86()) {
        if !isa.supported() {
            eprintln!(
                "SKIPPED: polyphase {} {}: this CPU lacks the ISA",
                ring.tag(),
                isa.name()
            );
            continue;
        }
        let addr = ee
            .get_function_address(&polyphase::kernel_name(ring, l, isa, half_rows))
            .unwrap();
        // SAFETY: the address of a generated kernel, whose signature this is.
        check(
            unsafe { std::mem::transmute::<usize, Kernel<u16>>(addr) },
            isa,
        );
    }
}

/// Every polyphase variant computes, for each record and each of the 3 m half rows, the dot
/// product with the record's E, O or E + O half (rows 0..m, m..2m, 2m..3m), both sides of a
/// replicated ring: at one chunk, a chunk and a tail (2 176 = 2 048 + 128), two chunks, and
/// the deployed length; record counts around the panel and tile, and past two panels of 32;
/// edge-heavy words; the nests for one query (48 half rows: K chunks of 2 048) and for 8 (384:
/// chunks of 1 024 or 2 048 on AVX-512, shorter on AVX2, panels of 32).
#[test]
fn polyphase_variants_equal_the_split_reference() {
    for ring in [DotRing::Z16, DotRing::Gr16] {
        for (l, half_rows) in [
            (128u32, 48),
            (2176, 48),
            (4096, 48),
            (12_800, 48),
            (2176, 384),
            (12_800, 384),
        ] {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(l) + 11);
            each_polyphase_variant(ring, l, half_rows, &mut |f, isa| {
                let (lu, h) = (l as usize, l as usize / 2);
                let sides = ring.sides() as usize;
                for (m, nr) in [
                    (0, 3),
                    (1, 0),
                    (1, 1),
                    (5, 9),
                    (16, 8),
                    (16, 17),
                    (17, 3),
                    (3, 70),
                ] {
                    let nc = 3 * m;
                    let q: Vec<Vec<u16>> = (0..2).map(|_| edgy(ring, nc * h, &mut rng)).collect();
                    let g: Vec<Vec<u16>> = (0..2).map(|_| edgy(ring, nr * lu, &mut rng)).collect();
                    let got = call(
                        f,
                        &q[0],
                        (sides == 2).then_some(&q[1][..]),
                        nc,
                        &g[0],
                        (sides == 2).then_some(&g[1][..]),
                        nr,
                    );
                    let mut want = vec![0u16; nc * nr];
                    for r in 0..nr {
                        for j in 0..nc {
                            let mut acc = 0u16;
                            for s in 0..sides {
                                let half = split_row(&g[s][r * lu..][..lu], j / m);
                                let dot = q[s][j * h..][..h]
                                    .iter()
                                    .zip(&half)
                                    .fold(0u16, |a, (x, y)| a.wrapping_add(x.wrapping_mul(*y)));
                                acc = if s == 0 {
                                    acc.wrapping_add(dot)
                                } else {
                                    acc.wrapping_sub(dot)
                                };
                            }
                            want[r * nc + j] = acc;
                        }
                    }
                    assert!(
                        got == want,
                        "polyphase {} {} L = {l}, m = {m}, {nr} records",
                        ring.tag(),
                        isa.name()
                    );
                }
            });
        }
    }
}

/// The whole polyphase path (the runtime's query rows, the kernel, the runtime's combination)
/// gives every rotation's dot product, as the plain reference over the rotated rows written
/// out here: 31 shifts of the deployed length, batches of 1 and 3 queries, both rings.
#[test]
fn polyphase_rotations_equal_the_plain_reference() {
    use irisc_runtime::kernels::polyphase::Polyphase;
    let l = 12_800u32;
    let (lu, cols) = (l as usize, l as usize / 64);
    let rotate = |q: &[u16], r: i32| -> Vec<u16> {
        let mut d = vec![0u16; lu];
        for row in 0..16 {
            for col in 0..cols {
                let from = (col as i32 + r).rem_euclid(cols as i32) as usize;
                for k in 0..4 {
                    d[row * cols * 4 + col * 4 + k] = q[row * cols * 4 + from * 4 + k];
                }
            }
        }
        d
    };
    for ring in [DotRing::Z16, DotRing::Gr16] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(29);
        each_polyphase_variant(ring, l, 48, &mut |f, isa| {
            let sides = ring.sides() as usize;
            for (lo, hi, queries, nr) in [(-15, 15, 1, 11), (-15, 15, 3, 5), (-2, 3, 2, 9)] {
                let p = Polyphase::new(lo, hi, lu).unwrap();
                let n = p.rotations();
                let rows: Vec<Vec<u16>> = (0..2)
                    .map(|_| {
                        (0..queries)
                            .flat_map(|_| {
                                let base = edgy(ring, lu, &mut rng);
                                (lo..=hi)
                                    .flat_map(move |r| rotate(&base, r))
                                    .collect::<Vec<_>>()
                            })
                            .collect()
                    })
                    .collect();
                let g: Vec<Vec<u16>> = (0..2).map(|_| edgy(ring, nr * lu, &mut rng)).collect();
                let mut want = vec![0u16; queries * n * nr];
                masked_dot_reference(
                    &rows[0],
                    &if sides == 2 {
                        rows[1].clone()
                    } else {
                        vec![0; rows[0].len()]
                    },
                    queries * n,
                    &g[0],
                    &g[1],
                    nr,
                    lu,
                    &mut want,
                );
                let q: Vec<Vec<u16>> = rows.iter().map(|r| p.query_rows(r, queries)).collect();
                let nc = p.kernel_rows(queries);
                let k = call(
                    f,
                    &q[0],
                    (sides == 2).then_some(&q[1][..]),
                    nc,
                    &g[0],
                    (sides == 2).then_some(&g[1][..]),
                    nr,
                );
                let mut got = vec![0u16; queries * n * nr];
                p.combine(&k, nr, queries, &mut got);
                assert!(
                    got == want,
                    "polyphase {} {} shifts {lo}..={hi}, {queries} queries",
                    ring.tag(),
                    isa.name()
                );
            }
        });
    }
}

/// The polyphase nests as [`polyphase::cache_budget`] sizes them: on AVX-512 a batch of 8
/// queries (384 half rows) keeps K chunks of 1 024 (replicated Z16) and 2 048 (GR16) words over
/// panels of 32 records, on AVX2 chunks of 256 and 512; one query's 48 half rows get chunks of
/// 2 048 everywhere. Each shape of an ISA has its own kernel name.
#[test]
fn polyphase_nests_follow_the_isa_cache_budget() {
    let chunk_and_panel = |isa, ring, half_rows| {
        let s = polyphase::shape_for(isa, ring, half_rows);
        (s.k_chunk, s.record_panel)
    };
    for isa in [Isa::Vnni, Isa::Avx512] {
        assert_eq!(chunk_and_panel(isa, DotRing::Z16, 384), (1024, 32));
        assert_eq!(chunk_and_panel(isa, DotRing::Gr16, 384), (2048, 32));
        assert_eq!(chunk_and_panel(isa, DotRing::Z16, 48), (2048, 16));
        assert_eq!(chunk_and_panel(isa, DotRing::Gr16, 48), (2048, 32));
    }
    assert_eq!(chunk_and_panel(Isa::Avx2, DotRing::Z16, 384), (256, 32));
    assert_eq!(chunk_and_panel(Isa::Avx2, DotRing::Gr16, 384), (512, 32));
    assert_eq!(chunk_and_panel(Isa::Avx2, DotRing::Gr16, 48).0, 2048);
    for isa in [Isa::Vnni, Isa::Avx2] {
        for ring in [DotRing::Z16, DotRing::Gr16] {
            let (one, eight) = (
                polyphase::kernel_name(ring, 12_800, isa, 48),
                polyphase::kernel_name(ring, 12_800, isa, 384),
            );
            let differ =
                polyphase::shape_for(isa, ring, 48) != polyphase::shape_for(isa, ring, 384);
            assert_eq!(one != eight, differ, "{one} / {eight}");
        }
    }
}

/// A table for rotated query rows holds each variant's polyphase kernel and the shifts, and is
/// named for them; where the polyphase form does not exist (64 words, or F_p) the table is the
/// plain one.
#[test]
fn polyphase_tables_hold_the_kernels_and_shifts() {
    use inkwell::values::AnyValue;
    let cx = Context::create();
    let module = cx.create_module("poly_tables");
    let t = table_tiled(&cx, &module, DotRing::Gr16, 12_800, None, Some((-15, 15))).unwrap();
    assert_eq!(
        t.get_name().to_str().unwrap(),
        "irisc_kernels_dot_gr16_L12800_polym15_15"
    );
    let text = t.get_initializer().unwrap().print_to_string().to_string();
    for isa in DotRing::Gr16.variants(host_is_x86()) {
        let k = format!(
            "ptr @{}",
            polyphase::kernel_name(DotRing::Gr16, 12_800, isa, 48)
        );
        assert!(text.contains(&k), "{k} in {text}");
    }
    assert!(text.contains("[2 x i64] [i64 -15, i64 15]"), "{text}");
    for (ring, l) in [(DotRing::Gr16, 64), (DotRing::Fp, 12_800)] {
        let plain = table(&cx, &module, ring, l).unwrap();
        let t = table_tiled(&cx, &module, ring, l, None, Some((-15, 15))).unwrap();
        assert_eq!(plain, t, "{} L = {l}", ring.tag());
        let text = t.get_initializer().unwrap().print_to_string().to_string();
        assert!(!text.contains("polyphase"), "{text}");
    }
}

/// The AMX kernel's IR lowers to tile instructions on any x86-64 host (whether or not its CPU
/// has AMX): a tile configuration, tile loads, the u8 x u8 tile multiply and the release of
/// the tile state before return; both rings that have one, and none for F_p or unaligned L.
#[test]
fn amx_kernels_lower_to_tile_instructions() {
    if !host_is_x86() {
        eprintln!("SKIPPED: AMX kernels: not an x86-64 host");
        return;
    }
    assert!(!amx::applies(DotRing::Fp, 16_416) && !amx::applies(DotRing::Z16, 100));
    assert!(!amx::applies(DotRing::Z32, 12_800) && amx::applies(DotRing::Fp, 12_800));
    for (ring, l) in [
        (DotRing::Z16, 12_800),
        (DotRing::Gr16, 64),
        (DotRing::Fp, 12_800),
    ] {
        let cx = Context::create();
        let module = cx.create_module("amx_test");
        let tm = host_machine().unwrap();
        table(&cx, &module, ring, l).unwrap();
        module.verify().unwrap();
        optimize(&module, &tm).unwrap();
        let asm = tm
            .write_to_memory_buffer(&module, inkwell::targets::FileType::Assembly)
            .unwrap();
        let asm = String::from_utf8_lossy(asm.as_slice()).to_string();
        let name = amx::kernel_name(ring, l);
        let body = asm
            .split(&format!("{name}:"))
            .nth(1)
            .unwrap_or_else(|| panic!("{name} not in the assembly"));
        let body = body.split(".Lfunc_end").next().unwrap();
        for insn in [
            "ldtilecfg",
            "tileloadd",
            "tdpbuud",
            "tilestored",
            "tilerelease",
        ] {
            assert!(body.contains(insn), "{name}: no {insn}");
        }
        // One loop of four tile multiplies (a 2 x 2 block; LLVM may unroll it).
        let muls = body.matches("tdpbuud").count();
        assert!(
            muls >= 4 && muls.is_multiple_of(4),
            "{name}: {muls} tile multiplies"
        );
    }
}

/// The AMX kernel equals the plain references where this CPU runs AMX (else skipped, said
/// so): replicated Z16 (eq. 6), GR16 and F_p words (below p, p - 1 the largest sums), random and all-ones and edge words, record
/// counts with and without a vector-kernel remainder and over several record panels, code
/// counts around the tile widths, one K chunk, several and a short last one.
#[test]
fn amx_kernels_equal_the_reference() {
    use irisc_runtime::kernels::amx::{self as rt, AmxDotKernel, Columns};
    if !host_is_x86() || !rt::available() {
        eprintln!("SKIPPED: AMX kernels: this CPU or OS does not run AMX-INT8");
        return;
    }
    for (ring, l) in [
        (DotRing::Z16, 64u32),
        (DotRing::Z16, 12_800),
        (DotRing::Gr16, 160),
        // 20 steps: one chunk of 16 and a rest of 4 for few tiles, two of 8 and a rest of 4
        // for many (`K_CHUNK_STEPS_MANY_TILES`), on both sides.
        (DotRing::Z16, 640),
        (DotRing::Fp, 96),
        (DotRing::Fp, 640),
        (DotRing::Fp, 12_800),
    ] {
        let cx = Context::create();
        let module = cx.create_module("amx_test");
        let tm = host_machine().unwrap();
        table(&cx, &module, ring, l).unwrap();
        module.verify().unwrap();
        optimize(&module, &tm).unwrap();
        let ee = module
            .create_jit_execution_engine(OptimizationLevel::Aggressive)
            .unwrap();
        let addr = ee.get_function_address(&amx::kernel_name(ring, l)).unwrap();
        // SAFETY: the address of a generated AMX kernel, whose signature this is.
        let kernel: AmxDotKernel = unsafe { std::mem::transmute(addr) };
        let lu = l as usize;
        let two = ring.sides() == 2;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(u64::from(l) + 17);
        let shapes: &[(usize, usize)] = if l > 1000 {
            &[(31, 64), (248, 32)]
        } else {
            // 248 codes x 330 records: panels of 192 records, a short one, and a remainder.
            &[
                (1, 32),
                (7, 37),
                (16, 64),
                (17, 96),
                (31, 33),
                (62, 70),
                (248, 330),
            ]
        };
        for &(nc, nr) in shapes {
            for fill in 0..3 {
                // F_p words are below p: its edges are p - 1 and the byte boundaries.
                let fp = ring == DotRing::Fp;
                let top = irisc_runtime::share::fp::P;
                let edges = [
                    0u16,
                    1,
                    0xff,
                    0x100,
                    0x8000,
                    if fp { top - 1 } else { 0xffff },
                ];
                let mut word = |_: usize| -> u16 {
                    match (fill, fp) {
                        (0, false) => rng.random(),
                        (0, true) => rng.random_range(0..top),
                        (1, _) => edges[5],
                        _ => edges[rng.random_range(0..6)],
                    }
                };
                let qa: Vec<u16> = (0..nc * lu).map(&mut word).collect();
                let qb: Vec<u16> = (0..nc * lu).map(&mut word).collect();
                let ga: Vec<u16> = (0..nr * lu).map(&mut word).collect();
                let gb: Vec<u16> = (0..nr * lu).map(&mut word).collect();
                let mut want = vec![0u16; nc * nr];
                if two {
                    masked_dot_reference(&qa, &qb, nc, &ga, &gb, nr, lu, &mut want);
                } else if fp {
                    fp_dot_reference(&qa, nc, &ga, nr, lu, &mut want);
                } else {
                    let zero = vec![0u16; nc * lu];
                    masked_dot_reference(&qa, &zero, nc, &ga, &ga, nr, lu, &mut want);
                }
                let form = amx::form(ring).unwrap();
                let cols = Columns::of_form(form, (&qa, two.then_some(&qb[..])), nc, lu);
                let sentinel = 0x5a5a;
                let mut got = vec![sentinel; nc * nr + 1];
                let mut rest_records = 0;
                let g = (&ga[..], two.then_some(&gb[..]));
                // SAFETY: a generated AMX kernel for these codes and sides; AMX available.
                unsafe {
                    rt::run_blocks(
                        kernel,
                        &cols,
                        g,
                        lu,
                        &mut got[..nc * nr],
                        &mut |r0, n, out| {
                            rest_records += n;
                            let (a, b) = (&ga[r0 * lu..], &gb[r0 * lu..]);
                            let zero = vec![0u16; nc * lu];
                            let qb = if two { &qb[..] } else { &zero[..] };
                            let b = if two { b } else { a };
                            if fp {
                                fp_dot_reference(&qa, nc, a, n, lu, out);
                            } else {
                                masked_dot_reference(&qa, qb, nc, a, b, n, lu, out);
                            }
                        },
                    )
                };
                assert_eq!(got.pop(), Some(sentinel), "AMX kernel wrote past out");
                assert_eq!(rest_records, nr % rt::RECORD_BLOCK);
                assert!(
                    got == want,
                    "{} L = {l} AMX, {nc} codes x {nr} records, fill {fill}",
                    ring.tag()
                );
            }
        }
    }
}
