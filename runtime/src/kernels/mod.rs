//! Compute kernels. The compiler generates the dot-product kernels in LLVM (CPU) and PTX (GPU);
//! [`reference`](mod@reference) is their portable reference and the fallback the runtime uses without them.

pub mod reference;

pub use reference::{
    masked_dot_reference, MaskedDotKernelU16, MaskedDotKernelU32, MaskedDotKernelU64,
};
