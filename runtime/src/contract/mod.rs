//! The compiler–runtime contract, defined once for both crates.
//!
//! The party schedule the compiler emits is a native `main` that calls the runtime's C entry
//! points, one per `mpc` dialect op. What those calls are (their C names, the op each
//! implements, the kind and name of every argument, the result) is written once, in the single
//! invocation of `entry_points!` in `abi`: that invocation emits
//! both the `extern "C"` wrappers and the table [`crate::abi::ENTRY_POINTS`] the compiler builds
//! its LLVM declarations from, so the two cannot disagree. The numbers both sides must agree on
//! (input parts, output shapes, batched-dot kinds, the ISA slots of a kernel table) are the
//! enums of [`constants`], whose explicit discriminants are the values that cross the ABI.
//!
//! The manifest's [`crate::manifest::ABI_VERSION`] is bumped whenever this contract changes.

pub mod constants;
pub mod gpu;

pub use constants::{
    BatchDotKind, Fss2Role, InputPart, Isa, OutputShape, MATCH_FIELD, RESERVED_OUTPUT_FIELDS,
};

/// A C type of the ABI, in LLVM terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CType {
    Ptr,
    I32,
    I64,
}

/// What an argument of an entry point carries, and so how the runtime reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// The runtime handle `irisc_rt_start` returned.
    Runtime,
    /// A value slot number (i32, never negative).
    Slot,
    /// A plain i32 parameter (a ring size, a rotation, a party, a flag, an enum of
    /// [`constants`]).
    I32,
    /// A plain i64 parameter (a query index, a ratio, a group size, a count, a chunk).
    I64,
    /// A kernel table ([`crate::kernels::KernelTable`]), or null where the ABI allows it.
    KernelTable,
    /// A pointer to bytes whose length is the next argument (UTF-8 text or the manifest).
    BytesPtr,
    /// The length of the preceding [`ArgKind::BytesPtr`], as i64.
    BytesLen,
    /// `argc` of `main`.
    Argc,
    /// `argv` of `main`.
    Argv,
    /// A generated SS.IP kernel ([`crate::fss2::kernel::SsIpFn`]), or null.
    SsIpKernel,
}

impl ArgKind {
    pub const fn c_type(self) -> CType {
        match self {
            ArgKind::Runtime
            | ArgKind::KernelTable
            | ArgKind::BytesPtr
            | ArgKind::Argv
            | ArgKind::SsIpKernel => CType::Ptr,
            ArgKind::Slot | ArgKind::I32 | ArgKind::Argc => CType::I32,
            ArgKind::I64 | ArgKind::BytesLen => CType::I64,
        }
    }
}

/// What an entry point returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultKind {
    /// i32: 0 on success; nonzero after the runtime printed why.
    Status,
    /// i64: a count, negative after the runtime printed why.
    Count,
    /// The runtime handle (a pointer), null after the runtime printed why.
    Runtime,
    /// i32: the process exit code.
    ExitCode,
}

impl ResultKind {
    pub const fn c_type(self) -> CType {
        match self {
            ResultKind::Status | ResultKind::ExitCode => CType::I32,
            ResultKind::Count => CType::I64,
            ResultKind::Runtime => CType::Ptr,
        }
    }
}

/// Ops of the `mpc` dialect that structure the schedule and run nothing: `mpc.stage` opens a
/// stage of the tiled `@query` (`mpc-tile`); code generation emits the loops it implies, and no
/// entry point implements it.
pub const STRUCTURAL_OPS: &[&str] = &["stage"];

/// What an entry point implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Implements {
    /// These ops of the `mpc` dialect (`dialects/mpc.irdl.mlir`), by name without `mpc.`.
    Mpc(&'static [&'static str]),
    /// A step of the tiled gallery scan that is no op of the dialect: the schedule asks it
    /// for its loop bound (the name is the step's in the accounting).
    Tiling(&'static str),
    /// The frame of the schedule: start, the query loop's bound, finish.
    Schedule,
    /// One role of a protocol family whose schedule is fixed by its paper (the `fss2` server,
    /// dealer and client, paper 002 Protocols 1 and 2): the entry runs the whole role, these
    /// ops of the dialect included, with the kernels the compiler generated for them.
    Role(&'static [&'static str]),
}

/// One argument: its name (as the runtime's wrapper names it) and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    pub name: &'static str,
    pub kind: ArgKind,
}

/// One entry point of the C ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryPoint {
    /// The C symbol.
    pub name: &'static str,
    pub implements: Implements,
    pub args: &'static [Arg],
    pub result: ResultKind,
}

impl Implements {
    /// The name of the op in the per-op accounting (`--stats`, key `"ops"`): the first `mpc`
    /// op it implements or the tiling step's name; "schedule" for the frame.
    pub const fn op_name(self) -> &'static str {
        match self {
            Implements::Mpc(ops) => ops[0],
            Implements::Tiling(op) => op,
            Implements::Schedule => "schedule",
            Implements::Role(_) => "role",
        }
    }
}

/// The entry point named `name` in `table`.
pub fn find(table: &'static [EntryPoint], name: &str) -> Option<&'static EntryPoint> {
    table.iter().find(|e| e.name == name)
}

/// The entry point that implements `mpc` op `op` (name without `mpc.`) in `table`.
pub fn implementing(table: &'static [EntryPoint], op: &str) -> Option<&'static EntryPoint> {
    table
        .iter()
        .find(|e| matches!(e.implements, Implements::Mpc(ops) if ops.contains(&op)))
}
