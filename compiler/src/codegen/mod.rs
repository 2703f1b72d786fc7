//! From a typed program to what `irisc build` produces, stage by stage.
//!
//! `Program` -> `irs` ([`crate::lower`]) -> passes ([`crate::passes`], ending with `mpc-tile`)
//! -> the tiled `mpc` module -> the backend `--target` selects ([`backend`]; [`cpu`]: party
//! schedule, kernels and manifest as LLVM, `default<O3>`, object, executable). [`compile`] stops
//! after the stage [`Emit`] names and returns its text or file; nothing here is specific to a
//! backend.

pub mod artifact;
pub mod backend;
pub mod cpu;
pub mod cuda;
pub mod fss2_manifest;
pub mod link;
pub mod manifest;

pub use artifact::{Artifact, CodegenError, CompileError, Emit};
pub use backend::{Backend, PartyProgram};
pub use link::LinkError;

use crate::analysis::plan::PlanOptions;
use crate::lower::lower_program;
use crate::mlir::Compiler;
use crate::passes::PassManager;
use crate::sema::program::Program;
use std::path::PathBuf;

/// The backends `irisc build --target` offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// The host CPU through LLVM ([`cpu::CpuBackend`]).
    #[default]
    Cpu,
    /// The dot products on an NVIDIA GPU, PTX through LLVM's NVPTX back end
    /// ([`cuda::CudaBackend`]).
    Cuda,
}

impl Target {
    pub fn backend(self) -> Box<dyn Backend> {
        match self {
            Target::Cpu => Box::new(cpu::CpuBackend),
            Target::Cuda => Box::new(cuda::CudaBackend),
        }
    }
}

#[derive(Debug, Clone)]
pub struct BuildOptions {
    pub emit: Emit,
    /// Where the object or executable goes; default `<program name>.o` / `<program name>`.
    pub output: Option<PathBuf>,
    /// Print the module to stderr after lowering and after every pass.
    pub print_ir_after_all: bool,
    /// The backend that generates the party code (`--target`).
    pub target: Target,
}

/// Compiles `program` (whose text is `source`, for locations and the fingerprint) up to
/// `opts.emit`; the choice passes get what the user forces (`options`). `explain` is the
/// `irisc explain --json` document embedded in the manifest.
pub fn compile(
    program: &Program,
    source: &str,
    options: &PlanOptions,
    explain: serde_json::Value,
    opts: &BuildOptions,
) -> Result<Artifact, CompileError> {
    if opts.emit == Emit::Ast {
        let json =
            serde_json::to_string_pretty(program).map_err(|e| CompileError::Io(e.to_string()))?;
        return Ok(Artifact::Text(json));
    }
    let cx = Compiler::new()?;
    let irs = lower_program(&cx, program, source)?;
    if opts.print_ir_after_all {
        print_ir("lower", &irs.as_operation().to_string());
    }
    if opts.emit == Emit::Irs {
        return Ok(Artifact::Text(irs.as_operation().to_string()));
    }
    let mut printer = |pass: &str, ir: &str| print_ir(pass, ir);
    let printer: Option<&mut crate::passes::IrPrinter> = if opts.print_ir_after_all {
        Some(&mut printer)
    } else {
        None
    };
    let mpc = PassManager::irs_to_mpc_pipeline(options).run(&cx, irs, printer)?;
    if opts.emit == Emit::Mpc {
        return Ok(Artifact::Text(mpc.as_operation().to_string()));
    }
    if opts.emit == Emit::Schedule {
        let listing = crate::passes::mpc_tile::describe(&mpc).map_err(CodegenError)?;
        return Ok(Artifact::Text(listing));
    }

    let party = PartyProgram::of(&mpc)?;
    let backend = opts.target.backend();
    backend.supports(&party)?;
    if !backend.emits().contains(&opts.emit) {
        return Err(CompileError::Codegen(CodegenError(format!(
            "the {} backend cannot emit {:?}",
            backend.name(),
            opts.emit
        ))));
    }
    // Who built it: for the executable's `--version` and the session hello.
    let build = irisc_runtime::manifest::BuildInfo {
        compiler: env!("CARGO_PKG_VERSION").to_string(),
        protocol: party.protocol.clone(),
        backend: backend.name().to_string(),
        schedule: manifest::fingerprint(&mpc.as_operation().to_string()),
    };
    let manifest_json = if party.protocol == backend::FSS2 {
        let manifest = fss2_manifest::build(program, source, explain, &mpc)?;
        let mut v = serde_json::to_value(&manifest).map_err(|e| CompileError::Io(e.to_string()))?;
        v["build"] = serde_json::to_value(&build).map_err(|e| CompileError::Io(e.to_string()))?;
        v.to_string()
    } else {
        let manifest = manifest::build(program, source, explain, &mpc)?;
        irisc_runtime::manifest::BuildInfo::embed(&manifest, &build)
            .map_err(|e| CompileError::Io(e.to_string()))?
    };
    backend.generate(&backend::Job {
        mpc: &mpc,
        program: &party,
        name: &program.name,
        manifest_json: &manifest_json,
        emit: opts.emit,
        output: opts.output.clone(),
    })
}

fn print_ir(after: &str, ir: &str) {
    eprintln!("// -----// IR Dump After {after} //----- //\n{ir}");
}
