//! The GPU kernels irisc generates for a program: which it needs ([`GpuDot`], read off the
//! dot products the party schedule runs) and their definitions, each a body emitted once for
//! two flavors ([`ir::Flavor`]): the NVPTX kernel and a host twin the tests run on the CPU.
//!
//! - [`limbs`]: the limb split and recombination (paper 003, Section 4.4);
//! - [`split`]: ring words to limb planes (`irisc_gpu_split{w}`);
//! - [`dot`]: the int8 tensor-core GEMM of a batch (`irisc_gpu_dot{w}_k{K}`);
//! - [`mask_len`]: the public mask lengths of a batch (`irisc_gpu_mask_len`);
//! - [`combine`]: the epilogue of a library int8 GEMM (`irisc_gpu_combine{w}`);
//! - [`prss`]: the PRSS keystream (`irisc_gpu_aes_ctr`) and zero shares
//!   (`irisc_gpu_prss_zero{w}`), the CPU runtime's streams;
//! - [`reshare`]: Reshare's local step (`irisc_gpu_reshare_local{w}`);
//! - [`bit_extract`]: MSB extraction's local steps (ShareSplit and the full adders, the
//!   ripple-carry rounds), the rest of the comparison phase's Algorithm 10;
//! - [`or_tree`]: an OR tree level's local steps (`irisc_gpu_or_pairs`, `irisc_gpu_or_combine`);
//! - [`bits`]: the bit-sliced comparison phase's local steps: bit planes, a binary AND's local
//!   step, zero bits.
//!
//! Names, parameters and layouts are the contract's ([`irisc_runtime::contract::gpu`]).

pub mod bit_extract;
pub mod bits;
pub mod combine;
pub mod dot;
pub mod ir;
pub mod limbs;
pub mod mask_len;
pub mod or_tree;
pub mod prss;
pub mod reshare;
pub mod split;

use super::super::cpu::kernel::DotRing;
use super::CodegenError;
use inkwell::{context::Context, module::Module};
use irisc_runtime::contract::gpu::{self, LimbWidth};

pub use ir::Flavor;

/// A dot product the GPU runs: the storage width of its ring, its sides (2 for replicated
/// shares, eq. 6; 1 for Galois-ring Shamir with the Lagrange coefficient in the query) and its
/// words per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GpuDot {
    pub width: LimbWidth,
    pub sides: u32,
    pub words: u32,
}

impl GpuDot {
    /// The GPU form of the CPU schedule's dot kernel (`ring`, `words`), if there is one:
    /// replicated Z_2^k in u16 or u32 words and GR(2^16, d). F_p (an exact sum mod p needs
    /// the fourth limb product and a wide reduction) and 64-bit rings have none; their dot
    /// products stay on the CPU.
    pub fn of(ring: DotRing, words: u32) -> Option<GpuDot> {
        let (width, sides) = match ring {
            DotRing::Z16 => (LimbWidth::W16, 2),
            DotRing::Z32 => (LimbWidth::W32, 2),
            DotRing::Gr16 => (LimbWidth::W16, 1),
            DotRing::Z64 | DotRing::Fp => return None,
        };
        Some(GpuDot {
            width,
            sides,
            words,
        })
    }

    /// The padded row length of its limb planes: the K its kernel is specialised to.
    pub fn k_pad(&self) -> u64 {
        gpu::k_pad(self.sides, u64::from(self.words))
    }

    /// The names of the kernels it runs: the split and the dot kernel.
    pub fn kernel_names(&self) -> [String; 2] {
        [
            gpu::split_kernel_name(self.width),
            gpu::dot_kernel_name(self.width, self.k_pad()),
        ]
    }
}

/// Defines the kernels of every dot in `dots` for `flavor` (each once).
pub fn define_all<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    dots: &[GpuDot],
    flavor: Flavor,
) -> Result<(), CodegenError> {
    for d in dots {
        split::define(cx, module, d.width, flavor)?;
        dot::define(cx, module, d.width, d.k_pad(), flavor)?;
        combine::define(cx, module, d.width, flavor)?;
    }
    // The correlated randomness of the reshares that follow the dot products, drawn where
    // their results are (16- and 32-bit rings).
    prss::define_aes_ctr(cx, module, flavor)?;
    for width in [LimbWidth::W16, LimbWidth::W32] {
        prss::define_prss_zero(cx, module, width, flavor)?;
        reshare::define(cx, module, width, flavor)?;
        bits::define_bit_planes(cx, module, width, flavor)?;
    }
    bits::define_prss_zero_bits(cx, module, flavor)?;
    bits::define_and_local(cx, module, flavor)?;
    bit_extract::define_fa_local(cx, module, flavor)?;
    bit_extract::define_fa_finish(cx, module, flavor)?;
    bit_extract::define_ripple_local(cx, module, flavor)?;
    mask_len::define(cx, module, flavor)?;
    or_tree::define_pairs(cx, module, flavor)?;
    or_tree::define_combine(cx, module, flavor)?;
    Ok(())
}
