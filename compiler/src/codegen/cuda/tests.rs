//! The CUDA backend without a GPU: the host twins of the kernels (the same emitted bodies,
//! JIT-compiled for this CPU) against the contract's limb definitions and the runtime's dot
//! references, and the PTX of every example assembled by `ptxas` for the contract's
//! architecture. What needs the card itself (the tensor-core kernels' results) is checked by
//! `scripts/gpu_check.sh` on a machine with a GPU.

use super::kernels::{combine, dot, split, Flavor, GpuDot};
use super::*;
use crate::analysis::plan::PlanOptions;
use crate::codegen::Target;
use crate::driver::pipeline;
use inkwell::OptimizationLevel;
use irisc_runtime::contract::gpu::{self, split_limbs, LimbWidth};
use irisc_runtime::kernels::{gr_dot_reference, masked_dot_reference};
use irisc_runtime::vocab::Sharing;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::path::{Path, PathBuf};

type SplitFn<T> = unsafe extern "C" fn(*const T, *const T, u64, u64, u32, u32, *mut i8, u64, u64);
type DotFn<T> = unsafe extern "C" fn(*const i8, u64, *const i8, u64, *mut T, u64, u64);
type CombineFn<T> = unsafe extern "C" fn(*const i32, u64, u64, u64, u64, *mut T);

/// Code lengths (words per side) the host twins are generated for: one word, odd, one k-step
/// exactly, just over, and several steps.
const LENS: [u64; 5] = [1, 7, 32, 33, 100];

/// The host twins of the split and dot kernels of `width` for every length of [`LENS`] and
/// both side counts, JIT-compiled: (split, [(len, sides, dot)]).
struct HostKernels<T> {
    _ee: inkwell::execution_engine::ExecutionEngine<'static>,
    split: SplitFn<T>,
    dots: Vec<(u64, u32, DotFn<T>)>,
    combine: CombineFn<T>,
}

fn host_kernels<T>(width: LimbWidth) -> HostKernels<T> {
    // The context lives as long as the test process: the engine borrows it.
    let cx: &'static inkwell::context::Context =
        Box::leak(Box::new(inkwell::context::Context::create()));
    let module = cx.create_module("gpu_twins");
    split::define(cx, &module, width, Flavor::Host).unwrap();
    combine::define(cx, &module, width, Flavor::Host).unwrap();
    let mut wanted = Vec::new();
    for len in LENS {
        for sides in [1u32, 2] {
            let k = gpu::k_pad(sides, len);
            dot::define(cx, &module, width, k, Flavor::Host).unwrap();
            wanted.push((len, sides, gpu::dot_kernel_name(width, k)));
        }
    }
    module.verify().unwrap();
    let tm = crate::codegen::cpu::target::host_machine().unwrap();
    crate::codegen::cpu::target::optimize(&module, &tm).unwrap();
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .unwrap();
    let split_addr = ee
        .get_function_address(&gpu::split_kernel_name(width))
        .unwrap();
    let dots = wanted
        .into_iter()
        .map(|(len, sides, name)| {
            let addr = ee.get_function_address(&name).unwrap();
            // SAFETY: a generated host twin with this signature.
            (len, sides, unsafe {
                std::mem::transmute::<usize, DotFn<T>>(addr)
            })
        })
        .collect();
    let combine_addr = ee
        .get_function_address(&gpu::combine_kernel_name(width))
        .unwrap();
    HostKernels {
        // SAFETY: as above.
        split: unsafe { std::mem::transmute::<usize, SplitFn<T>>(split_addr) },
        // SAFETY: as above.
        combine: unsafe { std::mem::transmute::<usize, CombineFn<T>>(combine_addr) },
        dots,
        _ee: ee,
    }
}

impl<T: Copy + Default> HostKernels<T> {
    /// The limb planes of `rows` rows of one or two sides of `len` words.
    fn planes(
        &self,
        width: LimbWidth,
        a: &[T],
        b: Option<&[T]>,
        rows: u64,
        len: u64,
        negate_b: bool,
    ) -> Vec<i8> {
        let sides = if b.is_some() { 2 } else { 1 };
        let (rp, kp) = (gpu::rows_pad(rows), gpu::k_pad(sides, len));
        // Filled with a sentinel so that every position the kernel should write is checked.
        let mut dst = vec![0x5bi8; width.limbs() * (rp * kp) as usize];
        let bp = b.map_or(std::ptr::null(), |b| b.as_ptr());
        // SAFETY: the buffers have the contract's sizes.
        unsafe {
            (self.split)(
                a.as_ptr(),
                bp,
                rows,
                len,
                sides,
                negate_b as u32,
                dst.as_mut_ptr(),
                rp,
                kp,
            )
        };
        dst
    }

    fn dot(&self, len: u64, sides: u32) -> DotFn<T> {
        self.dots
            .iter()
            .find(|d| d.0 == len && d.1 == sides)
            .map(|d| d.2)
            .expect("a twin for this length")
    }
}

/// Words at the ring and limb edges, or uniform.
fn words(width: LimbWidth, n: usize) -> impl Strategy<Value = Vec<u64>> {
    let top = (1u64 << width.bits()) - 1;
    let edges = vec![
        0,
        1,
        0x7f,
        0x80,
        0xff,
        0x100,
        0x7fff,
        0x8000,
        0xff80,
        0xffff & top,
        top,
        top - 1,
        (top >> 1) + 1,
    ];
    prop::collection::vec(prop_oneof![prop::sample::select(edges), 0..=top], n)
}

#[test]
fn host_split_writes_the_contracts_limbs_and_zero_padding() {
    for width in [LimbWidth::W16, LimbWidth::W32] {
        let k16 = (width == LimbWidth::W16).then(|| host_kernels::<u16>(width));
        let k32 = (width == LimbWidth::W32).then(|| host_kernels::<u32>(width));
        let mut runner = TestRunner::new(Config::with_cases(256));
        let strat = (
            0u64..70,
            prop::sample::select(LENS.to_vec()),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_flat_map(move |(rows, len, two, neg)| {
                let n = (rows * len) as usize;
                (
                    Just((rows, len, two, neg)),
                    words(width, n),
                    words(width, n),
                )
            });
        runner
            .run(&strat, |((rows, len, two, neg), a, b)| {
                let sides = if two { 2 } else { 1 };
                let planes = match width {
                    LimbWidth::W16 => {
                        let (a16, b16): (Vec<u16>, Vec<u16>) = (
                            a.iter().map(|&x| x as u16).collect(),
                            b.iter().map(|&x| x as u16).collect(),
                        );
                        k16.as_ref().unwrap().planes(
                            width,
                            &a16,
                            two.then_some(&b16[..]),
                            rows,
                            len,
                            neg,
                        )
                    }
                    LimbWidth::W32 => {
                        let (a32, b32): (Vec<u32>, Vec<u32>) = (
                            a.iter().map(|&x| x as u32).collect(),
                            b.iter().map(|&x| x as u32).collect(),
                        );
                        k32.as_ref().unwrap().planes(
                            width,
                            &a32,
                            two.then_some(&b32[..]),
                            rows,
                            len,
                            neg,
                        )
                    }
                };
                let (rp, kp) = (gpu::rows_pad(rows), gpu::k_pad(sides, len));
                let top = (1u64 << width.bits()) - 1;
                for r in 0..rp {
                    for i in 0..kp {
                        let want = if r < rows && i < u64::from(sides) * len {
                            let (side, col) = (i / len, i % len);
                            let x = if side == 0 {
                                a[(r * len + col) as usize]
                            } else {
                                b[(r * len + col) as usize]
                            };
                            let x = if side == 1 && neg {
                                x.wrapping_neg() & top
                            } else {
                                x
                            };
                            split_limbs(width, x)
                        } else {
                            [0; 4]
                        };
                        for j in 0..width.limbs() {
                            let got = planes[(j as u64 * rp * kp + r * kp + i) as usize];
                            prop_assert_eq!(got, want[j], "row {} column {} limb {}", r, i, j);
                        }
                    }
                }
                Ok(())
            })
            .unwrap();
    }
}

/// Runs the twin pipeline (split both operands, dot) and returns `out` (one extra word that
/// must stay put).
fn twin_dot<T: Copy + Default + PartialEq + std::fmt::Debug + From<u8>>(
    k: &HostKernels<T>,
    width: LimbWidth,
    (ga, gb): (&[T], Option<&[T]>),
    (qa, qb): (&[T], Option<&[T]>),
    records: u64,
    codes: u64,
    len: u64,
) -> Vec<T> {
    let sides = if gb.is_some() { 2 } else { 1 };
    let g = k.planes(width, ga, gb, records, len, false);
    let q = k.planes(width, qa, qb, codes, len, true);
    let sentinel = T::from(0x5a);
    let mut out = vec![sentinel; (records * codes) as usize + 1];
    // SAFETY: planes and output of the contract's sizes.
    unsafe {
        (k.dot(len, sides))(
            g.as_ptr(),
            gpu::rows_pad(records),
            q.as_ptr(),
            gpu::rows_pad(codes),
            out.as_mut_ptr(),
            records,
            codes,
        )
    };
    assert_eq!(
        out[(records * codes) as usize],
        sentinel,
        "the kernel wrote past its output"
    );
    out.truncate((records * codes) as usize);
    // The library-GEMM path on the same planes must give the same words.
    let library = twin_library_dot(k, width, &g, &q, records, codes, len, sides);
    assert_eq!(
        library, out,
        "the library-GEMM path (i32 planes by shift, then irisc_gpu_combine) differs from the generated kernel"
    );
    out
}

/// The cuBLAS path of [`gpu::GemmEngine::Cublas`] on the host: a plain loop stands for
/// `cublasGemmEx` ("TN", int8 in, i32 out, accumulated over the limb pairs of one shift into
/// column-major `codes_pad x records_pad` planes), then the host twin of
/// `irisc_gpu_combine{w}`.
#[allow(clippy::too_many_arguments)]
fn twin_library_dot<T: Copy + Default + PartialEq + std::fmt::Debug + From<u8>>(
    k: &HostKernels<T>,
    width: LimbWidth,
    g: &[i8],
    q: &[i8],
    records: u64,
    codes: u64,
    len: u64,
    sides: u32,
) -> Vec<T> {
    let (grp, qrp, kp) = (
        gpu::rows_pad(records),
        gpu::rows_pad(codes),
        gpu::k_pad(sides, len),
    );
    let (ldc, plane) = (qrp, qrp * grp);
    let mut acc = vec![0i32; width.limbs() * plane as usize];
    for (i, j) in width.products() {
        let s = i + j;
        for r in 0..grp {
            for c in 0..qrp {
                let gi = &g[(i as u64 * grp * kp + r * kp) as usize..][..kp as usize];
                let qj = &q[(j as u64 * qrp * kp + c * kp) as usize..][..kp as usize];
                let sum = gi.iter().zip(qj).fold(0i32, |a, (&x, &y)| {
                    a.wrapping_add(i32::from(x) * i32::from(y))
                });
                let at = s * plane as usize + (r * ldc + c) as usize;
                acc[at] = acc[at].wrapping_add(sum);
            }
        }
    }
    let sentinel = T::from(0x5a);
    let mut out = vec![sentinel; (records * codes) as usize + 1];
    // SAFETY: accumulators of limbs x plane i32 and an output of records x codes words.
    unsafe { (k.combine)(acc.as_ptr(), ldc, plane, records, codes, out.as_mut_ptr()) };
    assert_eq!(
        out[(records * codes) as usize],
        sentinel,
        "combine wrote past its output"
    );
    out.truncate((records * codes) as usize);
    out
}

#[test]
fn host_dot_twins_equal_the_runtime_references() {
    let k16 = host_kernels::<u16>(LimbWidth::W16);
    let k32 = host_kernels::<u32>(LimbWidth::W32);
    let mut runner = TestRunner::new(Config::with_cases(192));
    let strat =
        (0u64..70, 0u64..40, prop::sample::select(LENS.to_vec())).prop_flat_map(|(r, c, len)| {
            let (gn, qn) = ((r * len) as usize, (c * len) as usize);
            (
                Just((r, c, len)),
                (
                    words(LimbWidth::W16, gn),
                    words(LimbWidth::W16, gn),
                    words(LimbWidth::W16, qn),
                    words(LimbWidth::W16, qn),
                ),
                (
                    words(LimbWidth::W32, gn),
                    words(LimbWidth::W32, gn),
                    words(LimbWidth::W32, qn),
                    words(LimbWidth::W32, qn),
                ),
            )
        });
    runner
        .run(&strat, |((records, codes, len), w16, w32)| {
            let (nr, nc, l) = (records as usize, codes as usize, len as usize);
            let to16 = |v: &Vec<u64>| v.iter().map(|&x| x as u16).collect::<Vec<u16>>();
            let (ga, gb, qa, qb) = (to16(&w16.0), to16(&w16.1), to16(&w16.2), to16(&w16.3));
            // Replicated Z_2^16, two sides (eq. 6).
            let got = twin_dot(
                &k16,
                LimbWidth::W16,
                (&ga, Some(&gb)),
                (&qa, Some(&qb)),
                records,
                codes,
                len,
            );
            let mut want = vec![0u16; nr * nc];
            masked_dot_reference(&qa, &qb, nc, &ga, &gb, nr, l, &mut want);
            prop_assert_eq!(&got, &want, "z16 replicated");
            // GR(2^16, d) Shamir: one side, the prepared query.
            let got = twin_dot(
                &k16,
                LimbWidth::W16,
                (&ga, None),
                (&qa, None),
                records,
                codes,
                len,
            );
            let mut want = vec![0u16; nr * nc];
            gr_dot_reference(&qa, nc, &ga, nr, l, &mut want);
            prop_assert_eq!(&got, &want, "gr16");
            // Replicated Z_2^32, ten limb products.
            let to32 = |v: &Vec<u64>| v.iter().map(|&x| x as u32).collect::<Vec<u32>>();
            let (ga, gb, qa, qb) = (to32(&w32.0), to32(&w32.1), to32(&w32.2), to32(&w32.3));
            let got = twin_dot(
                &k32,
                LimbWidth::W32,
                (&ga, Some(&gb)),
                (&qa, Some(&qb)),
                records,
                codes,
                len,
            );
            let mut want = vec![0u32; nr * nc];
            masked_dot_reference(&qa, &qb, nc, &ga, &gb, nr, l, &mut want);
            prop_assert_eq!(&got, &want, "z32 replicated");
            Ok(())
        })
        .unwrap();
}

#[test]
fn host_dot_twin_at_the_full_code_length_with_extreme_words() {
    // l = 12 800, both sides, every word the most negative limb pattern or the top word: the
    // accumulators' largest magnitudes at the deployed length.
    let len = 12_800u64;
    let cx: &'static inkwell::context::Context =
        Box::leak(Box::new(inkwell::context::Context::create()));
    let module = cx.create_module("full");
    split::define(cx, &module, LimbWidth::W16, Flavor::Host).unwrap();
    combine::define(cx, &module, LimbWidth::W16, Flavor::Host).unwrap();
    dot::define(
        cx,
        &module,
        LimbWidth::W16,
        gpu::k_pad(2, len),
        Flavor::Host,
    )
    .unwrap();
    let tm = crate::codegen::cpu::target::host_machine().unwrap();
    crate::codegen::cpu::target::optimize(&module, &tm).unwrap();
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .unwrap();
    // SAFETY: generated host twins with these signatures.
    let k = HostKernels::<u16> {
        split: unsafe {
            std::mem::transmute::<usize, SplitFn<u16>>(
                ee.get_function_address("irisc_gpu_split16").unwrap(),
            )
        },
        dots: vec![(len, 2, unsafe {
            std::mem::transmute::<usize, DotFn<u16>>(
                ee.get_function_address(&gpu::dot_kernel_name(LimbWidth::W16, gpu::k_pad(2, len)))
                    .unwrap(),
            )
        })],
        combine: unsafe {
            std::mem::transmute::<usize, CombineFn<u16>>(
                ee.get_function_address("irisc_gpu_combine16").unwrap(),
            )
        },
        _ee: ee,
    };
    for pattern in [0x8080u16, 0xffff, 0x7f7f, 0x8000] {
        let (records, codes) = (3u64, 2u64);
        let g: Vec<u16> = (0..records * len)
            .map(|i| if i % 3 == 0 { pattern } else { 0x8080 })
            .collect();
        let q: Vec<u16> = (0..codes * len)
            .map(|i| if i % 5 == 0 { 0xffff } else { pattern })
            .collect();
        let got = twin_dot(
            &k,
            LimbWidth::W16,
            (&g, Some(&g)),
            (&q, Some(&q)),
            records,
            codes,
            len,
        );
        let mut want = vec![0u16; (records * codes) as usize];
        masked_dot_reference(
            &q,
            &q,
            codes as usize,
            &g,
            &g,
            records as usize,
            len as usize,
            &mut want,
        );
        assert_eq!(got, want, "pattern {pattern:#x}");
    }
}

/// `ptxas` from the project's virtual environment (`scripts/setup.sh`) or `IRISC_PTXAS`.
pub fn ptxas() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("IRISC_PTXAS") {
        return Ok(PathBuf::from(p));
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv-cuda/lib");
    let found = std::fs::read_dir(&venv).ok().and_then(|dirs| {
        dirs.flatten()
            .map(|d| d.path().join("site-packages/nvidia/cuda_nvcc/bin/ptxas"))
            .find(|p| p.is_file())
    });
    found.ok_or_else(|| {
        format!(
            "no ptxas in {} and IRISC_PTXAS is not set: run scripts/setup.sh (it installs the \
             nvidia-cuda-nvcc wheel there)",
            venv.display()
        )
    })
}

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "irs"))
        .collect();
    v.sort();
    v
}

fn build(
    path: &Path,
    options: PlanOptions,
    emit: Emit,
    target: Target,
) -> anyhow::Result<Artifact> {
    let checked = pipeline::read_and_check(path)?;
    let planned = pipeline::plan(&checked, &options)?;
    Ok(pipeline::compile_for(&checked, &planned, emit, None, false, target)?.0)
}

fn assemble(ptxas: &Path, ptx: &str, what: &str) {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.ptx");
    std::fs::write(&src, ptx).unwrap();
    let out = std::process::Command::new(ptxas)
        .arg(format!("-arch={}", gpu::SM_ARCH))
        .arg(&src)
        .arg("-o")
        .arg(dir.path().join("k.cubin"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", ptxas.display()));
    assert!(
        out.status.success(),
        "ptxas refused the PTX of {what}:\n{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        ptx.lines().take(40).collect::<Vec<_>>().join("\n")
    );
    assert!(std::fs::metadata(dir.path().join("k.cubin")).unwrap().len() > 0);
}

#[test]
fn the_ptx_of_every_example_assembles_for_the_contracts_architecture() {
    let ptxas = ptxas().unwrap_or_else(|e| panic!("{e}"));
    let mut assembled = 0;
    for path in examples() {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        // The default plan, and every sharing the program accepts.
        let mut plans = vec![(String::from("default"), PlanOptions::default())];
        for s in [Sharing::Rep3, Sharing::Gr2, Sharing::Gr4] {
            plans.push((
                s.name().to_string(),
                PlanOptions {
                    sharing: Some(s),
                    ..Default::default()
                },
            ));
        }
        for (label, options) in plans {
            let what = format!("{name} ({label})");
            let checked = pipeline::read_and_check(&path).unwrap();
            let Ok(planned) = pipeline::plan(&checked, &options) else {
                continue; // a sharing the program refuses (e.g. an embedding under gr2)
            };
            match pipeline::compile_for(&checked, &planned, Emit::Ptx, None, false, Target::Cuda) {
                Ok((Artifact::Text(ptx), _)) => {
                    assert!(ptx.starts_with("// irisc: the GPU kernels of"), "{what}");
                    assert!(ptx.contains(&format!(".target {}", gpu::SM_ARCH)), "{what}");
                    assert!(
                        ptx.contains("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"),
                        "{what}"
                    );
                    assert!(ptx.contains(".entry irisc_gpu_split"), "{what}");
                    assemble(&ptxas, &ptx, &what);
                    assembled += 1;
                }
                Ok(other) => panic!("{what}: --emit=ptx gave {other:?}"),
                Err(e) => {
                    // Only a program without any GPU dot product may be refused, and it must
                    // say why.
                    let e = format!("{e:#}");
                    assert!(e.contains("has a GPU kernel"), "{what}: {e}");
                }
            }
        }
    }
    // Every iris example has GPU dot products under at least its default plan.
    assert!(assembled >= 15, "only {assembled} programs assembled");
}

#[test]
fn each_dot_kernel_issues_the_limb_products_its_ring_needs() {
    // One dot kernel per module, its k loop one step per iteration at most unrolled by LLVM:
    // the count of mma instructions is a multiple of (limb products x 8 warp tiles).
    for (width, per_step) in [(LimbWidth::W16, 3 * 8), (LimbWidth::W32, 10 * 8)] {
        let dots = [(
            crate::codegen::cpu::kernel::DotRing::Z16,
            64u32,
            Some(GpuDot {
                width,
                sides: 2,
                words: 64,
            }),
        )];
        let ptx = ptx_image("t", &dots).unwrap();
        let n = ptx.matches("mma.sync.aligned.m16n8k32").count();
        assert!(
            n > 0 && n % per_step == 0,
            "{width:?}: {n} mma instructions"
        );
        assert!(ptx.contains(&gpu::dot_kernel_name(width, 128)), "{ptx}");
    }
}

#[test]
fn fp_programs_are_refused_for_the_gpu_with_the_reason() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/small_ids.irs");
    let options = PlanOptions {
        sharing: Some(Sharing::Fp),
        ..Default::default()
    };
    let e = build(&path, options, Emit::Ptx, Target::Cuda).unwrap_err();
    let e = format!("{e:#}");
    assert!(
        e.contains("no dot product of `small_ids` has a GPU kernel"),
        "{e}"
    );
    assert!(e.contains("fp over"), "{e}");
    assert!(e.contains("--sharing rep3, gr2 or gr4"), "{e}");
}

#[test]
fn the_cuda_executable_attaches_its_gpu_image_and_the_cpu_one_does_not() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/small_ids.irs");
    let Artifact::Text(host) =
        build(&path, PlanOptions::default(), Emit::Llvm, Target::Cuda).unwrap()
    else {
        panic!("no text");
    };
    // The embedded image is the PTX --emit=ptx prints, attached right after the start.
    let Artifact::Text(ptx) =
        build(&path, PlanOptions::default(), Emit::Ptx, Target::Cuda).unwrap()
    else {
        panic!("no text");
    };
    let attach = host
        .lines()
        .find(|l| l.contains("call i32 @irisc_rt_gpu_attach("))
        .unwrap_or_else(|| panic!("no attach call:\n{host}"));
    assert!(
        attach.contains(&format!("@irisc_gpu_image, i64 {})", ptx.len())),
        "{attach}"
    );
    assert!(host.contains(&format!(
        "@irisc_gpu_image = private constant [{} x i8]",
        ptx.len()
    )));
    let start = host.find("@irisc_rt_start(").unwrap();
    let attached = host.find("@irisc_rt_gpu_attach(ptr").unwrap();
    let first_load = host.find("@irisc_rt_load_input(").unwrap();
    assert!(
        start < attached && attached < first_load,
        "attach is not between start and the loads"
    );
    let Artifact::Text(cpu) =
        build(&path, PlanOptions::default(), Emit::Llvm, Target::Cpu).unwrap()
    else {
        panic!("no text");
    };
    assert!(!cpu.contains("irisc_rt_gpu_attach") && !cpu.contains("irisc_gpu_image"));
}

type AesCtrFn = unsafe extern "C" fn(*const u32, u64, u64, u64, *mut u8);
type PrssZeroFn<T> = unsafe extern "C" fn(*const u8, u64, *const u8, u64, u64, *mut T);

/// The host twins of the PRSS kernels, JIT-compiled.
struct PrssTwins {
    _ee: inkwell::execution_engine::ExecutionEngine<'static>,
    aes_ctr: AesCtrFn,
    zero16: PrssZeroFn<u16>,
    zero32: PrssZeroFn<u32>,
}

fn prss_twins() -> PrssTwins {
    let cx: &'static inkwell::context::Context =
        Box::leak(Box::new(inkwell::context::Context::create()));
    let module = cx.create_module("prss_twins");
    super::kernels::prss::define_aes_ctr(cx, &module, Flavor::Host).unwrap();
    for w in [LimbWidth::W16, LimbWidth::W32] {
        super::kernels::prss::define_prss_zero(cx, &module, w, Flavor::Host).unwrap();
    }
    module.verify().unwrap();
    let tm = crate::codegen::cpu::target::host_machine().unwrap();
    crate::codegen::cpu::target::optimize(&module, &tm).unwrap();
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .unwrap();
    let addr = |n: &str| ee.get_function_address(n).unwrap();
    // SAFETY: generated host twins with these signatures.
    unsafe {
        PrssTwins {
            aes_ctr: std::mem::transmute::<usize, AesCtrFn>(addr(gpu::AES_CTR_KERNEL)),
            zero16: std::mem::transmute::<usize, PrssZeroFn<u16>>(addr(
                &gpu::prss_zero_kernel_name(LimbWidth::W16),
            )),
            zero32: std::mem::transmute::<usize, PrssZeroFn<u32>>(addr(
                &gpu::prss_zero_kernel_name(LimbWidth::W32),
            )),
            _ee: ee,
        }
    }
}

impl PrssTwins {
    /// Keystream blocks `first..first + blocks` of `key` from the twin.
    fn keystream(&self, key: &[u8; 16], first: u128, blocks: u64) -> Vec<u8> {
        let rk = irisc_runtime::rand::aes_tables::expand_key(key);
        // u32 storage keeps the output 4-byte aligned, as the kernel's stores assume.
        let mut out = vec![0u32; blocks as usize * 4];
        // SAFETY: round keys of 44 words, room for `blocks` blocks.
        unsafe {
            (self.aes_ctr)(
                rk.as_ptr(),
                first as u64,
                (first >> 64) as u64,
                blocks,
                out.as_mut_ptr().cast(),
            )
        };
        out.iter().flat_map(|w| w.to_ne_bytes()).collect()
    }
}

#[test]
fn host_aes_ctr_twin_is_the_cpu_runtimes_prss_stream() {
    let twins = prss_twins();
    let mut runner = TestRunner::new(Config::with_cases(64));
    runner
        .run(
            &(any::<[u8; 16]>(), 0u64..40, 1u64..70),
            |(key, first, blocks)| {
                let mut cpu = irisc_runtime::rand::aes_ctr::AesCtr::portable(&key);
                let mut want = vec![0u8; ((first + blocks) * 16) as usize];
                cpu.fill(&mut want);
                let got = twins.keystream(&key, u128::from(first), blocks);
                prop_assert_eq!(&got[..], &want[(first * 16) as usize..]);
                Ok(())
            },
        )
        .unwrap();
    // The counter's carry from the low into the high 64 bits.
    let key = [7u8; 16];
    let first = u128::from(u64::MAX) - 1;
    let got = twins.keystream(&key, first, 4);
    let rk = irisc_runtime::rand::aes_tables::expand_key(&key);
    for b in 0..4u128 {
        let block = (first + b).to_le_bytes();
        let want = irisc_runtime::rand::aes_tables::encrypt_block(&rk, &block);
        assert_eq!(
            &got[(b * 16) as usize..(b * 16 + 16) as usize],
            &want,
            "block {b}"
        );
    }
}

#[test]
fn host_prss_zero_twins_equal_the_cpu_prss_after_draws_of_other_sizes() {
    use irisc_runtime::rand::prss::Prss;
    let twins = prss_twins();
    let mut runner = TestRunner::new(Config::with_cases(64));
    let strat = (
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        0usize..3,
        0usize..23,
        0usize..300,
        any::<bool>(),
    );
    runner
        .run(&strat, |(own, prev, party, before, n, wide)| {
            // The CPU party: some u16 draws first, so the next draw starts mid-block.
            let mut cpu = Prss::from_seeds(party, own, prev);
            let _ = cpu.zero_shares::<u16>(before);
            let pos = (before * 2) as u64;
            let bytes = if wide { 4 } else { 2 };
            let (first_block, skip) = (pos / 16, pos % 16);
            let blocks = (skip + (n as u64) * bytes).div_ceil(16).max(1);
            let ks_own = twins.keystream(&own, u128::from(first_block), blocks);
            let ks_prev = twins.keystream(&prev, u128::from(first_block), blocks);
            if wide {
                let want = cpu.zero_shares::<u32>(n);
                let mut got = vec![0u32; n];
                // SAFETY: keystreams cover skip + n words.
                unsafe {
                    (twins.zero32)(
                        ks_own.as_ptr(),
                        skip,
                        ks_prev.as_ptr(),
                        skip,
                        n as u64,
                        got.as_mut_ptr(),
                    )
                };
                prop_assert_eq!(got, want);
            } else {
                let want = cpu.zero_shares::<u16>(n);
                let mut got = vec![0u16; n];
                // SAFETY: as above.
                unsafe {
                    (twins.zero16)(
                        ks_own.as_ptr(),
                        skip,
                        ks_prev.as_ptr(),
                        skip,
                        n as u64,
                        got.as_mut_ptr(),
                    )
                };
                prop_assert_eq!(got, want);
            }
            Ok(())
        })
        .unwrap();
}

type BitPlanesFn<T> = unsafe extern "C" fn(*const T, u64, u32, *mut u64, u64);
type AndLocalFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    u64,
    u64,
    *mut u64,
);
type ZeroBitsFn = unsafe extern "C" fn(*const u8, u64, *const u8, u64, u64, *mut u64);

struct BitTwins {
    _ee: inkwell::execution_engine::ExecutionEngine<'static>,
    planes16: BitPlanesFn<u16>,
    planes32: BitPlanesFn<u32>,
    and_local: AndLocalFn,
    zero_bits: ZeroBitsFn,
}

fn bit_twins() -> BitTwins {
    use super::kernels::bits;
    let cx: &'static inkwell::context::Context =
        Box::leak(Box::new(inkwell::context::Context::create()));
    let module = cx.create_module("bit_twins");
    bits::define_bit_planes(cx, &module, LimbWidth::W16, Flavor::Host).unwrap();
    bits::define_bit_planes(cx, &module, LimbWidth::W32, Flavor::Host).unwrap();
    bits::define_and_local(cx, &module, Flavor::Host).unwrap();
    bits::define_prss_zero_bits(cx, &module, Flavor::Host).unwrap();
    module.verify().unwrap();
    let tm = crate::codegen::cpu::target::host_machine().unwrap();
    crate::codegen::cpu::target::optimize(&module, &tm).unwrap();
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .unwrap();
    let addr = |n: &str| ee.get_function_address(n).unwrap();
    // SAFETY: generated host twins with these signatures.
    unsafe {
        BitTwins {
            planes16: std::mem::transmute::<usize, BitPlanesFn<u16>>(addr(
                &gpu::bit_planes_kernel_name(LimbWidth::W16),
            )),
            planes32: std::mem::transmute::<usize, BitPlanesFn<u32>>(addr(
                &gpu::bit_planes_kernel_name(LimbWidth::W32),
            )),
            and_local: std::mem::transmute::<usize, AndLocalFn>(addr(gpu::AND_LOCAL_KERNEL)),
            zero_bits: std::mem::transmute::<usize, ZeroBitsFn>(addr(gpu::PRSS_ZERO_BITS_KERNEL)),
            _ee: ee,
        }
    }
}

#[test]
fn host_bit_plane_twins_equal_the_runtimes_bit_planes() {
    use irisc_runtime::protocol::bit_planes::bit_planes_flat;
    let twins = bit_twins();
    let mut runner = TestRunner::new(Config::with_cases(128));
    let strat = (prop::collection::vec(any::<u32>(), 0..300), 0u32..40);
    runner
        .run(&strat, |(values, planes)| {
            let n = values.len();
            let words = n.div_ceil(64);
            let v16: Vec<u16> = values.iter().map(|&x| x as u16).collect();
            let mut got = vec![0xa5a5_a5a5_a5a5_a5a5u64; planes as usize * words];
            // SAFETY: room for `planes` planes of `words` words.
            unsafe {
                (twins.planes16)(
                    v16.as_ptr(),
                    n as u64,
                    planes,
                    got.as_mut_ptr(),
                    words as u64,
                )
            };
            prop_assert_eq!(&got, &bit_planes_flat(&v16, planes as usize), "u16");
            let mut got = vec![0xa5a5_a5a5_a5a5_a5a5u64; planes as usize * words];
            // SAFETY: as above.
            unsafe {
                (twins.planes32)(
                    values.as_ptr(),
                    n as u64,
                    planes,
                    got.as_mut_ptr(),
                    words as u64,
                )
            };
            prop_assert_eq!(&got, &bit_planes_flat(&values, planes as usize), "u32");
            Ok(())
        })
        .unwrap();
}

#[test]
fn host_and_local_twins_of_three_parties_reconstruct_the_and() {
    use irisc_runtime::rand::prss::Prss;
    use irisc_runtime::share::binary::{reconstruct_bits, share_bits};
    use rand::SeedableRng;
    let twins = bit_twins();
    let p = prss_twins();
    let mut runner = TestRunner::new(Config::with_cases(96));
    let strat = (
        prop::collection::vec((any::<bool>(), any::<bool>()), 0..400),
        any::<u64>(),
        any::<[[u8; 16]; 3]>(),
        0usize..9,
    );
    runner
        .run(&strat, |(pairs, seed, seeds, before)| {
            let len = pairs.len();
            let words = len.div_ceil(64);
            let (xb, yb): (Vec<bool>, Vec<bool>) = pairs.iter().copied().unzip();
            let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
            let (xs, ys) = (share_bits(&xb, &mut rng), share_bits(&yb, &mut rng));
            // Each party's zero bits from the GPU kernel over its two keystreams, after other
            // draws (mid-block), and checked against the CPU PRSS.
            let mut z = Vec::new();
            for i in 0..3 {
                let (own, prev) = (seeds[i], seeds[(i + 2) % 3]);
                let mut cpu = Prss::from_seeds(i, own, prev);
                let _ = cpu.zero_shares::<u16>(before);
                let want_alpha = cpu.zero_bits(words);
                let pos = (before * 2) as u64;
                let blocks = (pos % 16 + 8 * words as u64).div_ceil(16).max(1);
                let (ko, kp) = (
                    p.keystream(&own, u128::from(pos / 16), blocks),
                    p.keystream(&prev, u128::from(pos / 16), blocks),
                );
                let mut alpha = vec![0u64; words];
                // SAFETY: keystreams cover skip + 8 * words bytes.
                unsafe {
                    (twins.zero_bits)(
                        ko.as_ptr(),
                        pos % 16,
                        kp.as_ptr(),
                        pos % 16,
                        words as u64,
                        alpha.as_mut_ptr(),
                    )
                };
                prop_assert_eq!(&alpha, &want_alpha, "zero bits of party {}", i);
                let mut out = vec![u64::MAX; words];
                // SAFETY: every buffer holds `words` words.
                unsafe {
                    (twins.and_local)(
                        xs[i].own.as_ptr(),
                        xs[i].prev.as_ptr(),
                        ys[i].own.as_ptr(),
                        ys[i].prev.as_ptr(),
                        alpha.as_ptr(),
                        words as u64,
                        len as u64,
                        out.as_mut_ptr(),
                    )
                };
                z.push(out);
            }
            // Party i sends z_i to party i + 1: the replicated shares (z_i, z_{i-1}).
            let shares: [irisc_runtime::share::BitShares; 3] = std::array::from_fn(|i| {
                irisc_runtime::share::BitShares::from_words(
                    z[i].clone(),
                    z[(i + 2) % 3].clone(),
                    len,
                )
            });
            let got = reconstruct_bits(&shares).expect("consistent shares");
            let want: Vec<bool> = pairs.iter().map(|(x, y)| *x && *y).collect();
            prop_assert_eq!(got, want);
            // The tails are clear.
            if len % 64 != 0 {
                for zi in &z {
                    prop_assert_eq!(zi[words - 1] >> (len % 64), 0);
                }
            }
            Ok(())
        })
        .unwrap();
}
