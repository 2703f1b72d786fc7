//! The host target: a machine for this CPU (name and features, so AVX2/AVX-512 are used where
//! present), LLVM's `default<O3>` pipeline, and object emission.

use super::CodegenError;
use inkwell::{
    module::Module,
    passes::PassBuilderOptions,
    targets::{CodeModel, FileType, InitializationConfig, RelocMode, Target, TargetMachine},
    OptimizationLevel,
};
use std::path::Path;

/// A target machine for the host CPU, position-independent (the linker may build a PIE).
pub fn host_machine() -> Result<TargetMachine, CodegenError> {
    Target::initialize_native(&InitializationConfig::default())
        .map_err(|e| CodegenError(format!("cannot initialise the native LLVM target: {e}")))?;
    let triple = TargetMachine::get_default_triple();
    let target = Target::from_triple(&triple).map_err(|e| {
        CodegenError(format!(
            "no LLVM target for {}: {e}",
            triple.as_str().to_string_lossy()
        ))
    })?;
    let cpu = TargetMachine::get_host_cpu_name();
    let features = TargetMachine::get_host_cpu_features();
    target
        .create_target_machine(
            &triple,
            cpu.to_str().unwrap_or("generic"),
            features.to_str().unwrap_or(""),
            OptimizationLevel::Aggressive,
            RelocMode::PIC,
            CodeModel::Default,
        )
        .ok_or_else(|| CodegenError("cannot create a target machine for the host".into()))
}

/// Sets the module's triple and data layout to the machine's and runs `default<O3>`.
pub fn optimize(module: &Module, machine: &TargetMachine) -> Result<(), CodegenError> {
    module.set_triple(&machine.get_triple());
    module.set_data_layout(&machine.get_target_data().get_data_layout());
    module
        .run_passes("default<O3>", machine, PassBuilderOptions::create())
        .map_err(|e| CodegenError(format!("LLVM optimisation failed: {e}")))
}

/// Writes `module` as an object file for `machine`.
pub fn write_object(
    module: &Module,
    machine: &TargetMachine,
    path: &Path,
) -> Result<(), CodegenError> {
    machine
        .write_to_file(module, FileType::Object, path)
        .map_err(|e| {
            CodegenError(format!(
                "cannot write the object file {}: {e}",
                path.display()
            ))
        })
}
