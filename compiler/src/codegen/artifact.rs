//! What `compile` stops after and produces, and how it fails: shared by the driver and every
//! backend.

use super::link::LinkError;
use crate::lower::LowerError;
use crate::mlir::MlirError;
use crate::passes::PassError;
use std::path::PathBuf;

/// A code-generation failure, with what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("code generation: {0}")]
pub struct CodegenError(pub String);

/// The stage after which `compile` stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    /// The typed program, as JSON.
    Ast,
    /// The `irs` module as lowered.
    Irs,
    /// The `mpc` module after all passes.
    Mpc,
    /// How the party schedule tiles `@query` (stages, crossings), as text.
    Schedule,
    /// The optimised LLVM module.
    Llvm,
    /// The PTX module of the GPU kernels (a GPU backend).
    Ptx,
    /// An object file.
    Obj,
    /// A linked executable.
    Exe,
}

/// What `compile` produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Artifact {
    /// The printed stage (Ast, Irs, Mpc, Llvm): the driver prints it.
    Text(String),
    /// The path of the written object or executable.
    File(PathBuf),
    /// One executable (or object) per role: the `fss2` family's server, dealer and client.
    Files(Vec<PathBuf>),
}

#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error(transparent)]
    Mlir(#[from] MlirError),
    #[error(transparent)]
    Lower(#[from] LowerError),
    #[error(transparent)]
    Pass(#[from] PassError),
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    #[error(transparent)]
    Link(#[from] LinkError),
    #[error("{0}")]
    Io(String),
}
