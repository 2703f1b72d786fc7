//! The CUDA backend (`irisc build --target cuda`): the party schedule on the host CPU, as the
//! CPU backend writes it, and the dot products of the gallery scan on an NVIDIA GPU, in
//! kernels irisc generates through LLVM's NVPTX back end (no hand-written CUDA).
//!
//! What it adds to the CPU backend's executable:
//! - a PTX module ([`kernels`]) with, for every dot product of the schedule that has a GPU
//!   form ([`GpuDot::of`]), a limb-split kernel and an int8 tensor-core GEMM specialised to
//!   the padded row length (paper 003, Section 4.4); `--emit=ptx` prints it, headed by the
//!   list of dot products and where each runs;
//! - the module embedded as a constant, and a call of `irisc_rt_gpu_attach` right after the
//!   runtime starts: the party loads the module on its GPU and runs those dot products there,
//!   the gallery resident in GPU memory as limb planes.
//!
//! The CPU kernel tables stay in the executable: the ops without a GPU form (F_p and 64-bit
//! rings) run on them. The runtime's CUDA path is its cargo feature `cuda` (the CUDA driver
//! through `cudarc`, loaded at run time); a runtime built without it refuses to attach, with a
//! message that says how to rebuild it.

pub mod kernels;
pub mod target;

use super::artifact::{Artifact, CompileError, Emit};
use super::backend::{Backend, Job, LinkInputs, PartyProgram};
use super::cpu::{self, schedule};
use super::link;
use inkwell::context::Context;
use std::path::PathBuf;

pub use super::artifact::CodegenError;
pub use kernels::GpuDot;

/// The dot products on an NVIDIA GPU (`irisc build --target cuda`).
pub struct CudaBackend;

impl Backend for CudaBackend {
    fn name(&self) -> &'static str {
        irisc_runtime::contract::gpu::BACKEND
    }

    fn supports(&self, program: &PartyProgram) -> Result<(), CodegenError> {
        // The host schedule is the CPU backend's: the same family.
        cpu::CpuBackend
            .supports(program)
            .map_err(|e| CodegenError(e.0.replace("the cpu backend", "the cuda backend")))
    }

    fn kernel_ops(&self) -> &'static [&'static str] {
        cpu::CpuBackend.kernel_ops()
    }

    fn emits(&self) -> &'static [Emit] {
        &[Emit::Llvm, Emit::Ptx, Emit::Obj, Emit::Exe]
    }

    fn generate(&self, job: &Job<'_, '_>) -> Result<Artifact, CompileError> {
        let dots = gpu_dots(job)?;
        let image = ptx_image(job.name, &dots)?;
        if job.emit == Emit::Ptx {
            return Ok(Artifact::Text(image));
        }
        let llcx = Context::create();
        let module = llcx.create_module(job.name);
        schedule::generate_with_gpu(&llcx, &module, job.mpc, job.manifest_json, Some(&image))?;
        module
            .verify()
            .map_err(|e| CodegenError(format!("the generated LLVM module does not verify: {e}")))?;
        let machine = cpu::target::host_machine()?;
        cpu::target::optimize(&module, &machine)?;
        match job.emit {
            Emit::Llvm => Ok(Artifact::Text(module.print_to_string().to_string())),
            Emit::Obj => {
                let out = job
                    .output
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(format!("{}.o", job.name)));
                cpu::target::write_object(&module, &machine, &out)?;
                Ok(Artifact::File(out))
            }
            _ => {
                let out = job
                    .output
                    .clone()
                    .unwrap_or_else(|| PathBuf::from(job.name));
                let dir = tempfile::tempdir().map_err(|e| {
                    CompileError::Io(format!("cannot create a temporary directory: {e}"))
                })?;
                let object = dir.path().join(format!("{}.o", job.name));
                cpu::target::write_object(&module, &machine, &object)?;
                link::link(&object, &out)?;
                Ok(Artifact::File(out))
            }
        }
    }

    fn link_inputs(&self) -> LinkInputs {
        // The same archive: its GPU path is compiled in with the runtime's `cuda` feature and
        // loads the CUDA driver at run time, so nothing CUDA is linked.
        LinkInputs {
            runtime: link::RUNTIME_LIB,
            system: link::NATIVE_LIBS,
        }
    }
}

/// The dot products of the schedule, each with its GPU form or none: read off the kernels the
/// CPU schedule passes to the runtime (generated into a scratch module).
pub fn schedule_dots(
    job: &Job<'_, '_>,
) -> Result<Vec<(cpu::kernel::DotRing, u32, Option<GpuDot>)>, CodegenError> {
    let scratch = Context::create();
    let module = scratch.create_module("scan");
    let used = schedule::generate_with_gpu(&scratch, &module, job.mpc, job.manifest_json, None)?;
    Ok(used
        .into_iter()
        .map(|(ring, words)| (ring, words, GpuDot::of(ring, words)))
        .collect())
}

/// The dot products that run on the GPU; an error if there are none (the program would not
/// use the GPU at all).
fn gpu_dots(
    job: &Job<'_, '_>,
) -> Result<Vec<(cpu::kernel::DotRing, u32, Option<GpuDot>)>, CodegenError> {
    let dots = schedule_dots(job)?;
    if dots.iter().all(|d| d.2.is_none()) {
        let on_cpu: Vec<String> = dots
            .iter()
            .map(|(r, w, _)| format!("{} over {w} words", r.tag()))
            .collect();
        return Err(CodegenError(format!(
            "--target cuda: no dot product of `{}` has a GPU kernel ({}); the GPU runs replicated \
             Z_2^k up to 32 bits and Galois-ring Shamir: build for the cpu target, or choose \
             --sharing rep3, gr2 or gr4",
            job.name,
            if on_cpu.is_empty() {
                "it has none".to_string()
            } else {
                on_cpu.join(", ")
            }
        )));
    }
    Ok(dots)
}

/// The program's PTX module: a header saying which dot products run on the GPU and which stay
/// on the CPU (and why), then the kernels LLVM's NVPTX back end wrote.
pub fn ptx_image(
    name: &str,
    dots: &[(cpu::kernel::DotRing, u32, Option<GpuDot>)],
) -> Result<String, CodegenError> {
    let cx = Context::create();
    let module = cx.create_module(&format!("{name}.gpu"));
    let on_gpu: Vec<GpuDot> = dots.iter().filter_map(|d| d.2).collect();
    kernels::define_all(&cx, &module, &on_gpu, kernels::Flavor::Nvptx)?;
    let machine = target::nvptx_machine()?;
    target::optimize(&module, &machine)?;
    let body = target::ptx(&module, &machine)?;
    let mut head = format!("// irisc: the GPU kernels of `{name}`\n");
    for (ring, words, gpu) in dots {
        match gpu {
            Some(g) => {
                let [split, dot] = g.kernel_names();
                head.push_str(&format!(
                    "//   dot {} over {words} words x {} side(s): GPU, {split} + {dot} ({} int8 limb products per k-step)\n",
                    ring.tag(),
                    g.sides,
                    g.width.products().len()
                ));
            }
            None => head.push_str(&format!(
                "//   dot {} over {words} words: CPU (no GPU kernel for this ring)\n",
                ring.tag()
            )),
        }
    }
    use irisc_runtime::contract::gpu as c;
    head.push_str(&format!(
        "//   PRSS: {} (AES-128 counter mode, the CPU runtime's streams), {}, {}, {}\n",
        c::AES_CTR_KERNEL,
        c::prss_zero_kernel_name(c::LimbWidth::W16),
        c::prss_zero_kernel_name(c::LimbWidth::W32),
        c::PRSS_ZERO_BITS_KERNEL,
    ));
    head.push_str(&format!(
        "//   reshares of 16- and 32-bit rings (IRISC_GPU_COMPARE=cpu keeps them on the CPU): {}, {}\n",
        c::reshare_local_kernel_name(c::LimbWidth::W16),
        c::reshare_local_kernel_name(c::LimbWidth::W32),
    ));
    head.push_str(&format!(
        "//   public mask lengths of a batch: {}\n",
        c::MASK_LEN_KERNEL
    ));
    head.push_str(&format!(
        "//   msb of 16- and 32-bit rings (Algorithm 10; IRISC_GPU_COMPARE=cpu keeps it on the CPU): {}, {}, {}, {}, {}\n",
        c::bit_planes_kernel_name(c::LimbWidth::W16),
        c::bit_planes_kernel_name(c::LimbWidth::W32),
        c::FA_LOCAL_KERNEL,
        c::FA_FINISH_KERNEL,
        c::RIPPLE_LOCAL_KERNEL,
    ));
    head.push_str(&format!(
        "//   OR trees over groups of equal size (Section 4.2; IRISC_GPU_COMPARE=cpu keeps them on the CPU): {}, {}\n",
        c::OR_PAIRS_KERNEL,
        c::OR_COMBINE_KERNEL,
    ));
    head.push_str(&format!(
        "//   ANDs and ORs of bit vectors (IRISC_GPU_COMPARE=cpu keeps them on the CPU): {}\n",
        c::AND_LOCAL_KERNEL,
    ));
    Ok(head + &body)
}

#[cfg(test)]
mod lanes_tests;
#[cfg(test)]
mod tests;
