//! The masked-dot kernels exactly as irisc generates them ([`crate::codegen::cpu::kernel`]),
//! optimised with the same host target machine and `default<O3>` pipeline as `irisc build`, then
//! compiled in-process by LLVM's MCJIT.
//!
//! MCJIT alone would code-generate for a generic CPU; the kernels therefore carry the host's
//! `target-cpu`/`target-features` function attributes (what `irisc build`'s target machine
//! uses), so the JIT selects the same instructions as the object file that `irisc build` emits.

use crate::codegen::cpu::kernel::{kernel_name, masked_dot};
use crate::codegen::cpu::target::{host_machine, optimize};
use anyhow::{anyhow, Result};
use inkwell::attributes::AttributeLoc;
use inkwell::context::Context;
use inkwell::targets::TargetMachine;
use inkwell::OptimizationLevel;
use std::collections::BTreeMap;

/// The C ABI of a generated kernel with storage word `T`.
pub type KernelFn<T> =
    unsafe extern "C" fn(*const T, *const T, i64, *const T, *const T, i64, *mut T);

/// Addresses of the JIT-compiled kernels, keyed by (code length, width in bits). Valid only
/// inside the closure passed to [`with_kernels`].
pub struct Kernels {
    addrs: BTreeMap<(u32, u32), usize>,
}

impl Kernels {
    /// # Safety
    /// `T` must be the storage type of `width` (u16 for 16, u32 for 32, u64 for 64).
    pub unsafe fn get<T>(&self, len: u32, width: u32) -> Option<KernelFn<T>> {
        assert_eq!(
            std::mem::size_of::<T>() * 8,
            width as usize,
            "storage type of u{width}"
        );
        let addr = *self.addrs.get(&(len, width))?;
        // SAFETY: the address is the entry of a function with this signature (see module docs).
        Some(unsafe { std::mem::transmute::<usize, KernelFn<T>>(addr) })
    }
}

/// Generates, optimises and JIT-compiles the kernels for every (length, width) in `kernels`
/// and calls `f` with them; the code is freed when `f` returns.
pub fn with_kernels<R>(kernels: &[(u32, u32)], f: impl FnOnce(&Kernels) -> R) -> Result<R> {
    let cx = Context::create();
    let module = cx.create_module("irisc_bench_kernels");
    let tm = host_machine().map_err(|e| anyhow!("{e}"))?;
    let cpu = TargetMachine::get_host_cpu_name();
    let features = TargetMachine::get_host_cpu_features();
    let cpu_attr = cx.create_string_attribute("target-cpu", cpu.to_str().unwrap_or("generic"));
    let feat_attr = cx.create_string_attribute("target-features", features.to_str().unwrap_or(""));
    for &(len, width) in kernels {
        let func = masked_dot(&cx, &module, len, width).map_err(|e| anyhow!("{e}"))?;
        func.add_attribute(AttributeLoc::Function, cpu_attr);
        func.add_attribute(AttributeLoc::Function, feat_attr);
    }
    module.verify().map_err(|e| anyhow!("kernel module: {e}"))?;
    optimize(&module, &tm).map_err(|e| anyhow!("{e}"))?;
    let ee = module
        .create_jit_execution_engine(OptimizationLevel::Aggressive)
        .map_err(|e| anyhow!("JIT: {e}"))?;
    let mut addrs = BTreeMap::new();
    for &(len, width) in kernels {
        let name = kernel_name(len, width);
        let a = ee
            .get_function_address(&name)
            .map_err(|e| anyhow!("JIT lookup {name}: {e}"))?;
        addrs.insert((len, width), a);
    }
    Ok(f(&Kernels { addrs }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use irisc_runtime::kernels::reference::masked_dot_reference;
    use irisc_runtime::ring::RingElem;
    use rand::{Rng, SeedableRng};

    fn check<T: RingElem>(k: &Kernels, len: u32, width: u32, rng: &mut rand_chacha::ChaCha8Rng)
    where
        rand::distr::StandardUniform: rand::distr::Distribution<T>,
    {
        let f = unsafe { k.get::<T>(len, width) }.unwrap();
        let l = len as usize;
        for (nc, nr) in [(31usize, 3usize), (1, 1), (9, 2), (0, 2)] {
            let mut gen = |n: usize| -> Vec<T> { (0..n).map(|_| rng.random()).collect() };
            let (qa, qb, ga, gb) = (gen(nc * l), gen(nc * l), gen(nr * l), gen(nr * l));
            let mut got = vec![T::ZERO; nc * nr];
            let mut want = vec![T::ZERO; nc * nr];
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
            masked_dot_reference(&qa, &qb, nc, &ga, &gb, nr, l, &mut want);
            assert_eq!(got, want, "L = {len}, u{width}, {nc} codes x {nr} records");
        }
    }

    /// The JIT-compiled kernels the benchmark times equal the runtime's reference kernel.
    #[test]
    fn jit_kernels_equal_the_runtime_reference() {
        let lens = [1u32, 7, 64, 100, 1024, 12800];
        let ks: Vec<(u32, u32)> = lens
            .iter()
            .flat_map(|&l| [(l, 16), (l, 32), (l, 64)])
            .collect();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        with_kernels(&ks, |k| {
            for &l in &lens {
                check::<u16>(k, l, 16, &mut rng);
                check::<u32>(k, l, 32, &mut rng);
                check::<u64>(k, l, 64, &mut rng);
            }
        })
        .unwrap();
    }
}
