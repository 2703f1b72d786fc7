//! The dot-product kernels exactly as irisc generates them ([`irisc::codegen::cpu::kernel`]):
//! every ISA variant of each (ring, length) table, optimised with the same host target machine
//! and `default<O3>` pipeline as `irisc build`, then compiled in-process by LLVM's MCJIT. Each
//! variant carries its own `target-cpu`/`target-features` attributes, as in the object file.

use anyhow::{anyhow, Result};
use inkwell::context::Context;
use inkwell::OptimizationLevel;
use irisc::codegen::cpu::kernel::amx;
use irisc::codegen::cpu::kernel::polyphase as poly;
use irisc::codegen::cpu::kernel::{kernel_name_tiled, table_tiled, DotRing, Isa, KernelTile};
use irisc::codegen::cpu::target::{host_machine, optimize};
use irisc_runtime::kernels::amx::AmxDotKernel;
use irisc_runtime::kernels::polyphase::Polyphase;
use std::collections::BTreeMap;

/// The C ABI of a generated kernel with storage word `T`.
pub type KernelFn<T> =
    unsafe extern "C" fn(*const T, *const T, i64, *const T, *const T, i64, *mut T);

/// Addresses of the JIT-compiled kernels, keyed by (ring, words per code, ISA). Valid only
/// inside the closure passed to [`with_kernels`].
pub struct Kernels {
    addrs: BTreeMap<(DotRing, u32, Option<KernelTile>, Isa), usize>,
    /// The polyphase kernels ([`irisc::codegen::cpu::kernel::polyphase`]), by half rows per
    /// call too.
    polyphase: BTreeMap<(DotRing, u32, u64, Isa), usize>,
    /// The AMX kernels ([`irisc::codegen::cpu::kernel::amx`]) of the tables that have one.
    amx: BTreeMap<(DotRing, u32), usize>,
}

impl Kernels {
    /// The variant `isa` of the kernel for (`ring`, `words`), if generated.
    ///
    /// # Safety
    /// `T` must be the storage word of `ring` (u16, or u32/u64 for Z32/Z64).
    pub unsafe fn get<T>(&self, ring: DotRing, words: u32, isa: Isa) -> Option<KernelFn<T>> {
        // SAFETY: the caller's contract.
        unsafe { self.get_tiled(ring, words, None, isa) }
    }

    /// [`Kernels::get`] for the kernel generated with `tile` (None: the default tile).
    ///
    /// # Safety
    /// As [`Kernels::get`].
    pub unsafe fn get_tiled<T>(
        &self,
        ring: DotRing,
        words: u32,
        tile: Option<KernelTile>,
        isa: Isa,
    ) -> Option<KernelFn<T>> {
        assert_eq!(
            std::mem::size_of::<T>() * 8,
            ring.bits() as usize,
            "storage word of {}",
            ring.tag()
        );
        let addr = *self.addrs.get(&(ring, words, tile, isa))?;
        // SAFETY: the address is the entry of a function with this signature (see module docs).
        Some(unsafe { std::mem::transmute::<usize, KernelFn<T>>(addr) })
    }

    /// The variant `isa` of the polyphase kernel for (`ring`, `words`), if generated.
    ///
    /// # Safety
    /// As [`Kernels::get`] (u16 words).
    pub unsafe fn get_polyphase(
        &self,
        ring: DotRing,
        words: u32,
        half_rows: u64,
        isa: Isa,
    ) -> Option<KernelFn<u16>> {
        let addr = *self.polyphase.get(&(ring, words, half_rows, isa))?;
        // SAFETY: the address is the entry of a function with this signature (see module docs).
        Some(unsafe { std::mem::transmute::<usize, KernelFn<u16>>(addr) })
    }

    /// The AMX kernel for (`ring`, `words`), if the table has one (x86-64 hosts, the rings and
    /// lengths it exists for); whether this CPU runs it is `irisc_runtime::kernels::amx::available`.
    pub fn get_amx(&self, ring: DotRing, words: u32) -> Option<AmxDotKernel> {
        let addr = *self.amx.get(&(ring, words))?;
        // SAFETY: the address is the entry of an AMX kernel, whose signature this is.
        Some(unsafe { std::mem::transmute::<usize, AmxDotKernel>(addr) })
    }

    /// The variants generated for (`ring`, `words`), in table order.
    pub fn variants(&self, ring: DotRing, words: u32) -> Vec<Isa> {
        self.addrs
            .keys()
            .filter(|k| k.0 == ring && k.1 == words && k.2.is_none())
            .map(|k| k.3)
            .collect()
    }
}

/// Generates, optimises and JIT-compiles the kernel tables for every (ring, words) in
/// `kernels` and calls `f` with them; the code is freed when `f` returns.
pub fn with_kernels<R>(kernels: &[(DotRing, u32)], f: impl FnOnce(&Kernels) -> R) -> Result<R> {
    let all: Vec<_> = kernels.iter().map(|&(r, w)| (r, w, None)).collect();
    with_tiled_kernels(&all, f)
}

/// [`with_kernels`] for (ring, words, tile) triples: the tile the compiler records on a batch
/// dot op (None: the ISA's default tile).
pub fn with_tiled_kernels<R>(
    kernels: &[(DotRing, u32, Option<KernelTile>)],
    f: impl FnOnce(&Kernels) -> R,
) -> Result<R> {
    with_all_kernels(kernels, &[], f)
}

/// [`with_tiled_kernels`] and the polyphase kernels of each (ring, words, half rows per call)
/// in `polyphase`.
pub fn with_all_kernels<R>(
    kernels: &[(DotRing, u32, Option<KernelTile>)],
    polyphase: &[(DotRing, u32, u64)],
    f: impl FnOnce(&Kernels) -> R,
) -> Result<R> {
    let cx = Context::create();
    let module = cx.create_module("irisc_bench_kernels");
    let tm = host_machine().map_err(|e| anyhow!("{e}"))?;
    for &(ring, words, tile) in kernels {
        table_tiled(&cx, &module, ring, words, tile.as_ref(), None).map_err(|e| anyhow!("{e}"))?;
    }
    for &(ring, words, half_rows) in polyphase {
        poly::variants(&cx, &module, ring, words, half_rows).map_err(|e| anyhow!("{e}"))?;
    }
    module.verify().map_err(|e| anyhow!("kernel module: {e}"))?;
    optimize(&module, &tm).map_err(|e| anyhow!("{e}"))?;
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .map_err(|e| anyhow!("JIT: {e}"))?;
    let mut addrs = BTreeMap::new();
    for &(ring, words, tile) in kernels {
        for isa in Isa::ALL {
            let name = kernel_name_tiled(ring, words, isa, tile.as_ref());
            if module.get_function(&name).is_some() {
                let a = ee
                    .get_function_address(&name)
                    .map_err(|e| anyhow!("JIT lookup {name}: {e}"))?;
                addrs.insert((ring, words, tile, isa), a);
            }
        }
    }
    let mut amx_addrs = BTreeMap::new();
    for &(ring, words, _) in kernels {
        let name = amx::kernel_name(ring, words);
        if module.get_function(&name).is_some() {
            let a = ee
                .get_function_address(&name)
                .map_err(|e| anyhow!("JIT lookup {name}: {e}"))?;
            amx_addrs.insert((ring, words), a);
        }
    }
    let mut poly_addrs = BTreeMap::new();
    for &(ring, words, half_rows) in polyphase {
        for isa in Isa::ALL {
            let name = poly::kernel_name(ring, words, isa, half_rows);
            if module.get_function(&name).is_some() {
                let a = ee
                    .get_function_address(&name)
                    .map_err(|e| anyhow!("JIT lookup {name}: {e}"))?;
                poly_addrs.insert((ring, words, half_rows, isa), a);
            }
        }
    }
    Ok(f(&Kernels {
        addrs,
        polyphase: poly_addrs,
        amx: amx_addrs,
    }))
}

/// The calls the runtime makes on a part of the gallery, through its own
/// `irisc_runtime::kernels::polyphase::run_blocks`: per block of `RECORD_BLOCK` records, the
/// polyphase kernel `f` over the query's half rows `q` (from [`Polyphase::query_rows`],
/// `form.kernel_rows(queries)` rows of each side given) and the block's records of `g`, into
/// `wide_out`, then the sums per rotation into `out` (`records x queries x rotations`).
///
/// # Safety
/// `f` must be a polyphase kernel for `form.words()` words and as many sides as are given (a
/// second side in both `q` and `g`, or in neither); `g` must hold `records` records.
#[allow(clippy::too_many_arguments)]
pub unsafe fn call_polyphase(
    f: KernelFn<u16>,
    form: &Polyphase,
    queries: usize,
    q: (&[u16], Option<&[u16]>),
    g: (&[u16], Option<&[u16]>),
    records: usize,
    wide_out: &mut Vec<u16>,
    out: &mut [u16],
) {
    let n_codes = queries * form.rotations();
    assert!(out.len() >= records * n_codes);
    // SAFETY: the caller's contract; run_blocks checks the lengths.
    unsafe {
        irisc_runtime::kernels::polyphase::run_blocks(
            f,
            form,
            queries,
            q,
            g,
            wide_out,
            &mut out[..records * n_codes],
        )
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use irisc_runtime::kernels::dispatch::Isa as RtIsa;
    use irisc_runtime::kernels::reference::masked_dot_reference;
    use rand::{Rng, SeedableRng};

    /// The variant the runtime would pick for this CPU, as the benchmark times it, equals the
    /// runtime's reference kernel (every variant is checked in `codegen::cpu::kernel::tests`).
    #[test]
    fn jit_kernels_equal_the_runtime_reference() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let lens = [1u32, 100, 12800];
        let ks: Vec<_> = lens.iter().map(|&l| (DotRing::Z16, l)).collect();
        with_kernels(&ks, |k| {
            for &l in &lens {
                let best = k
                    .variants(DotRing::Z16, l)
                    .into_iter()
                    .filter(|i| RtIsa::ALL[i.index()].supported())
                    .max()
                    .unwrap();
                let f = unsafe { k.get::<u16>(DotRing::Z16, l, best) }.unwrap();
                let lu = l as usize;
                let (nc, nr) = (31usize, 3usize);
                let mut gen = |n: usize| -> Vec<u16> { (0..n).map(|_| rng.random()).collect() };
                let (qa, qb, ga, gb) = (gen(nc * lu), gen(nc * lu), gen(nr * lu), gen(nr * lu));
                let (mut got, mut want) = (vec![0u16; nc * nr], vec![0u16; nc * nr]);
                unsafe {
                    f(
                        qa.as_ptr(),
                        qb.as_ptr(),
                        nc as i64,
                        ga.as_ptr(),
                        gb.as_ptr(),
                        nr as i64,
                        got.as_mut_ptr(),
                    )
                };
                masked_dot_reference(&qa, &qb, nc, &ga, &gb, nr, lu, &mut want);
                assert_eq!(got, want, "L = {l}, {}", best.name());
            }
        })
        .unwrap();
    }
}
