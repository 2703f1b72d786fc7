//! Compute kernels. The compiler generates the dot-product kernels in LLVM (CPU, one variant per
//! instruction set, picked at run time by [`dispatch`]) and PTX (GPU);
//! [`reference`](mod@reference) is their portable reference and the fallback the runtime uses
//! without them; [`run`](mod@run) runs a generated kernel over codes, split across threads, in
//! the loop nest [`nest`] measured fastest on this machine.

pub mod amx;
pub mod dispatch;
pub mod nest;
pub mod polyphase;
pub mod reference;
pub mod run;
mod shards;

pub use dispatch::{Isa, KernelTable};
pub use reference::{
    fp_dot_reference, gr_dot_reference, masked_dot_reference, MaskedDotKernel, MaskedDotKernelU16,
    MaskedDotKernelU32, MaskedDotKernelU64,
};
