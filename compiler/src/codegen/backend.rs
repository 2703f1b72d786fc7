//! The backend interface: what a code generator supplies to turn the tiled `mpc` module into a
//! party executable, selected by `irisc build --target NAME`.
//!
//! Everything before the backend is shared: lowering, the choice passes, `irs-to-mpc` and
//! `mpc-tile` decide *what* the parties compute and in which stages (`--emit=mpc` shows it).
//! A backend decides *how*: which ops run as generated kernels, the code of the party schedule,
//! which runtime it calls and links, and which stages after `mpc` it can print or write.
//!
//! The program tells the backend who runs it ([`PartyProgram`]): the number of parties and the
//! protocol family are read from the `mpc` module, not assumed, so a backend says which it can
//! generate ([`Backend::supports`]) and a new family is a new module attribute value, not a new
//! constant in every backend.
//!
//! # Worked example: the CPU backend ([`super::cpu::CpuBackend`])
//!
//! | method | the CPU backend | a CUDA backend would supply |
//! |---|---|---|
//! | [`Backend::name`] | `"cpu"` | `"cuda"` |
//! | [`Backend::supports`] | the three-party replicated family (`rep3`: ABY3 / Appendix C, with the Shamir dot products of Section 4.3.2) | the same family first; a two-server-plus-dealer family later, with one executable per role |
//! | [`Backend::kernel_ops`] | the dot products (`masked_dot`, `shamir_dot` and their batch forms): tables of ISA variants (portable, AVX2, AVX-512, VNNI) the runtime dispatches at run time | the same ops as PTX kernels (LLVM's NVPTX target) loaded through the CUDA driver |
//! | [`Backend::emits`] | `llvm` (the optimised module), `obj` (host object), `exe` | `llvm`/`ptx` of the kernels, `exe` |
//! | [`Backend::generate`] | `i32 main` calling the runtime's `irisc_rt_*` C ABI op by op, following the stages `mpc-tile` wrote; `default<O3>` for the host CPU; the object | the same host schedule, with the batch dot products launching PTX kernels on device buffers |
//! | [`Backend::link_inputs`] | the runtime archive `libirisc_runtime.a` and the system libraries it needs, linked by `cc` | the runtime built with its CUDA feature, and the driver library |
//!
//! [`super::compile`] runs the shared stages, checks the backend supports the program, and hands
//! it a [`Job`]; it contains nothing specific to any backend. [`super::Target`] lists the
//! backends.

use super::artifact::{Artifact, CodegenError, CompileError, Emit};
use crate::mlir::{get_int, get_str, op_name};
use melior::ir::{operation::OperationLike, Module};
use std::path::PathBuf;

/// The protocol family of the current `mpc` dialect: semi-honest three-party replicated secret
/// sharing (ABY3; Appendix C of the Large-Scale MPC paper), with degree-1 Shamir dot products
/// over three parties (Section 4.3.2).
pub const REP3: &str = "rep3";
/// The `beaver` family: `rep3` dot products, the reveals' circuits by Masked Triples.
pub const BEAVER: &str = "beaver";
/// The two-server family of paper 002 (one executable per role: server, dealer, client).
pub const FSS2: &str = "fss2";

/// Who runs a program: read from its `mpc` module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyProgram {
    /// Computing parties (3 for `rep3`; 2 for a two-server family, whose dealer is a role, not
    /// a computing party).
    pub parties: u32,
    /// The protocol family, e.g. `rep3`.
    pub protocol: String,
}

impl PartyProgram {
    /// The parties and protocol of `mpc`: its module attributes `mpc.parties` (integer) and
    /// `mpc.protocol` (string), which `irs-to-mpc` copies from the program's `irs` module (the
    /// `parties` declaration and `variant-select`'s protocol family); a module without them is
    /// refused. Every `open` must name one of the parties.
    pub fn of(mpc: &Module<'_>) -> Result<PartyProgram, CodegenError> {
        let module = mpc.as_operation();
        let parties = match get_int(&module, "mpc.parties") {
            Ok(n) => u32::try_from(n)
                .ok()
                .filter(|n| *n >= 2)
                .ok_or_else(|| CodegenError(format!("`mpc.parties = {n}` is not a party count")))?,
            Err(_) => return Err(missing("mpc.parties")),
        };
        let protocol = get_str(&module, "mpc.protocol").map_err(|_| missing("mpc.protocol"))?;
        let program = PartyProgram { parties, protocol };
        program.check_openings(mpc)?;
        Ok(program)
    }

    /// Every `open`/`open_int` reveals to one of the program's parties.
    fn check_openings(&self, mpc: &Module<'_>) -> Result<(), CodegenError> {
        let mut bad = None;
        mpc.as_operation()
            .walk(melior::ir::operation::WalkOrder::PreOrder, |op| {
                let name = op_name(&op);
                if name == "mpc.open" || name == "mpc.open_int" {
                    let to = get_int(&op, "to").unwrap_or(-1);
                    if !(0..i64::from(self.parties)).contains(&to) {
                        bad = Some(format!("`{name}` opens to party {to} of {}", self.parties));
                    }
                }
                melior::ir::operation::WalkResult::Advance
            });
        bad.map_or(Ok(()), |e| Err(CodegenError(e)))
    }
}

/// What a backend generates from.
pub struct Job<'a, 'c> {
    /// The tiled `mpc` module (after every pass).
    pub mpc: &'a Module<'c>,
    /// Who runs it.
    pub program: &'a PartyProgram,
    /// The program's name (file stem): the module name and the default output name.
    pub name: &'a str,
    /// The manifest JSON the executable embeds (inputs, parties, explain document).
    pub manifest_json: &'a str,
    /// The stage to stop after: one of [`Backend::emits`].
    pub emit: Emit,
    /// Where the object or executable goes, if not the default.
    pub output: Option<PathBuf>,
}

/// The libraries a backend's party executable links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkInputs {
    /// The runtime archive's file name (found next to `irisc` or through `IRISC_RUNTIME_LIB`).
    pub runtime: &'static str,
    /// System libraries, as linker flags.
    pub system: &'static [&'static str],
}

/// A code generator for party executables (see the module docs for the CPU backend as the worked
/// example).
pub trait Backend {
    /// The name `irisc build --target` selects it by.
    fn name(&self) -> &'static str;
    /// Whether this backend can generate the party code of `program`; the error says what it
    /// supports.
    fn supports(&self, program: &PartyProgram) -> Result<(), CodegenError>;
    /// The `mpc` ops this backend runs as generated kernels (the others are runtime calls).
    fn kernel_ops(&self) -> &'static [&'static str];
    /// The `--emit` stages after `mpc` this backend produces.
    fn emits(&self) -> &'static [Emit];
    /// Generates the party code of `job.mpc`: the schedule, the kernels and the manifest, up to
    /// `job.emit` (printed text, or the written object or executable).
    fn generate(&self, job: &Job<'_, '_>) -> Result<Artifact, CompileError>;
    /// What the party executable links.
    fn link_inputs(&self) -> LinkInputs;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlir::Compiler;

    fn module<'c>(cx: &'c Compiler, attrs: &str, to: i64) -> Module<'c> {
        cx.parse_module(&format!(
            r#"module attributes {{{attrs}}} {{
  func.func @setup() {{ return }}
  func.func @query(%arg0: i64) {{
    %0 = "mpc.const_bits"() {{value = 1 : i64}} : () -> !mpc.bits
    %1 = "mpc.open"(%0) {{to = {to} : i64}} : (!mpc.bits) -> !mpc.clear_bits
    return
  }}
}}"#
        ))
        .unwrap()
    }

    #[test]
    fn parties_and_protocol_come_from_the_module() {
        let cx = Compiler::new().unwrap();
        // Nothing is assumed: a module that does not say who runs it is refused.
        let m = module(&cx, "", 0);
        assert!(PartyProgram::of(&m).unwrap_err().0.contains("mpc.parties"));
        let m = module(&cx, "mpc.parties = 3 : i64", 0);
        assert!(PartyProgram::of(&m).unwrap_err().0.contains("mpc.protocol"));
        let m = module(&cx, r#"mpc.parties = 3 : i64, mpc.protocol = "rep3""#, 0);
        assert_eq!(
            PartyProgram::of(&m).unwrap(),
            PartyProgram {
                parties: 3,
                protocol: "rep3".into()
            }
        );
        let m = module(&cx, r#"mpc.parties = 2 : i64, mpc.protocol = "dealer2""#, 1);
        let p = PartyProgram::of(&m).unwrap();
        assert_eq!((p.parties, p.protocol.as_str()), (2, "dealer2"));
        // An opening to a party the program does not have.
        let m = module(&cx, r#"mpc.parties = 2 : i64, mpc.protocol = "dealer2""#, 2);
        assert!(PartyProgram::of(&m).unwrap_err().0.contains("party 2 of 2"));
    }
}

/// The error for an `mpc` module without the program property `attr` (`irs-to-mpc` copies
/// `irs.parties` and `irs.protocol` onto the `mpc` module).
fn missing(attr: &str) -> CodegenError {
    CodegenError(format!(
        "the mpc module does not say `{attr}`: it is written by irs-to-mpc from the program"
    ))
}
