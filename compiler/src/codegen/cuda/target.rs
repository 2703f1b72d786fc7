//! The GPU target: LLVM's NVPTX back end for the architecture of the contract
//! ([`irisc_runtime::contract::gpu::SM_ARCH`], PTX ISA [`irisc_runtime::contract::gpu::PTX_VERSION`]),
//! `default<O3>`, and the module printed as PTX text. No CUDA installation is needed: the PTX
//! is assembled for the card by its driver when a party loads it.

use super::CodegenError;
use inkwell::{
    module::Module,
    passes::PassBuilderOptions,
    targets::{
        CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine, TargetTriple,
    },
    OptimizationLevel,
};
use irisc_runtime::contract::gpu::{PTX_VERSION, SM_ARCH};

/// The triple of 64-bit PTX for the CUDA driver.
pub const TRIPLE: &str = "nvptx64-nvidia-cuda";

/// A target machine for the contract's GPU architecture.
pub fn nvptx_machine() -> Result<TargetMachine, CodegenError> {
    Target::initialize_nvptx(&InitializationConfig::default());
    let triple = TargetTriple::create(TRIPLE);
    let target = Target::from_triple(&triple)
        .map_err(|e| CodegenError(format!("this LLVM has no NVPTX target: {e}")))?;
    target
        .create_target_machine(
            &triple,
            SM_ARCH,
            &format!("+ptx{PTX_VERSION}"),
            OptimizationLevel::Aggressive,
            RelocMode::Default,
            CodeModel::Default,
        )
        .ok_or_else(|| {
            CodegenError(format!(
                "cannot create an NVPTX target machine for {SM_ARCH}"
            ))
        })
}

/// Verifies `module`, sets its triple and data layout for `machine` and runs `default<O3>`.
pub fn optimize(module: &Module, machine: &TargetMachine) -> Result<(), CodegenError> {
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    module
        .verify()
        .map_err(|e| CodegenError(format!("the generated GPU kernels do not verify: {e}")))?;
    module
        .run_passes("default<O3>", machine, PassBuilderOptions::create())
        .map_err(|e| CodegenError(format!("LLVM optimisation of the GPU kernels failed: {e}")))
}

/// The PTX text of `module`.
pub fn ptx(module: &Module, machine: &TargetMachine) -> Result<String, CodegenError> {
    let buf = machine
        .write_to_memory_buffer(module, FileType::Assembly)
        .map_err(|e| CodegenError(format!("the NVPTX back end failed: {e}")))?;
    String::from_utf8(buf.as_slice().to_vec())
        .map_err(|_| CodegenError("the NVPTX back end wrote text that is not UTF-8".into()))
}
