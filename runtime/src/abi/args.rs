//! How the wrappers read each argument kind of the contract ([`crate::contract::ArgKind`]):
//! one marker type per kind, named like the kind, with its C type and its checked conversion.

use std::ffi::{c_char, c_void};

use crate::error::RuntimeError;

/// An argument kind: its C type and the value the runtime reads from it.
pub trait FromC {
    type C;
    type Rust;
    fn from_c(c: Self::C) -> Result<Self::Rust, RuntimeError>;
}

macro_rules! plain {
    ($($(#[$m:meta])* $K:ident: $C:ty;)*) => {$(
        $(#[$m])*
        pub struct $K;
        impl FromC for $K {
            type C = $C;
            type Rust = $C;
            fn from_c(c: $C) -> Result<$C, RuntimeError> {
                Ok(c)
            }
        }
    )*};
}

plain! {
    /// A plain i32 parameter, range-checked by the op that reads it.
    I32: i32;
    /// A plain i64 parameter, range-checked by the op that reads it.
    I64: i64;
    /// The length of the preceding byte pointer.
    BytesLen: i64;
    Argc: i32;
    Argv: *const *const c_char;
    /// Bytes read (within their length) by the entry point's body.
    BytesPtr: *const u8;
}

/// A slot number: never negative.
pub struct Slot;
impl FromC for Slot {
    type C = i32;
    type Rust = u32;
    fn from_c(c: i32) -> Result<u32, RuntimeError> {
        u32::try_from(c).map_err(|_| RuntimeError::Schedule(format!("negative slot {c}")))
    }
}

/// A kernel table, or null.
pub struct KernelTable;
impl FromC for KernelTable {
    type C = *const c_void;
    type Rust = *const crate::kernels::KernelTable;
    fn from_c(c: *const c_void) -> Result<Self::Rust, RuntimeError> {
        Ok(c.cast())
    }
}

/// The runtime handle (frame entries only; op entries take it first, implicitly).
pub struct Runtime;
impl FromC for Runtime {
    type C = *mut crate::party::Runtime;
    type Rust = *mut crate::party::Runtime;
    fn from_c(c: Self::C) -> Result<Self::C, RuntimeError> {
        Ok(c)
    }
}

/// A generated SS.IP kernel, or null (the runtime's own loop).
pub struct SsIpKernel;
impl FromC for SsIpKernel {
    type C = Option<crate::fss2::kernel::SsIpFn>;
    type Rust = Option<crate::fss2::kernel::SsIpFn>;
    fn from_c(c: Self::C) -> Result<Self::Rust, RuntimeError> {
        Ok(c)
    }
}
