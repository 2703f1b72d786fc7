//! The CUDA path: dot products on the GPU's int8 tensor cores by limb decomposition (paper
//! 003, Section 4.4), with the kernels the compiler generates as PTX following the contract
//! [`crate::contract::gpu`], and the gallery resident in GPU memory.
//!
//! A program built with `irisc build --target cuda` embeds its PTX and calls
//! `irisc_rt_gpu_attach` after `irisc_rt_start`: that creates the party's [`Session`] (one CUDA
//! context on GPU `IRISC_GPU`, the PTX loaded). From then on every dot product of a ring the
//! GPU has kernels for ([`replicated_on_gpu`]: replicated Z_2^k in 16- or 32-bit storage;
//! [`shamir_on_gpu`]: Galois-ring Shamir GR(2^16, d)) runs on it, batch or single, and returns
//! exactly what the CPU kernels return, so the rest of the schedule is unchanged; F_p and
//! 64-bit rings keep the CPU kernels (counted in `--stats`, [`GpuStats`]). The comparison
//! phase's MSB extractions of those rings run their local steps on the GPU too
//! ([`msb`], unless `IRISC_GPU_COMPARE=cpu`), the rounds' messages unchanged.
//!
//! Everything that touches CUDA is behind the cargo feature `cuda` (cudarc, the driver loaded
//! with `dlopen` at run time): without it [`Session::attach`] fails with
//! [`NO_CUDA_SUPPORT`] and nothing else changes. The parts, one concept each:
//! - [`layout`]: the host description of what the GPU computes (split, limb GEMM, combine),
//!   tested against the CPU reference; no feature needed;
//! - [`errors`]: CUDA failures as messages a user can act on;
//! - [`watchdog`]: a deadline on every blocking CUDA call (`IRISC_GPU_TIMEOUT_S`);
//! - [`device`]: the context, stream and the program's kernels (`IRISC_GPU`);
//! - `planes` (feature `cuda`): operands uploaded and split into limb planes on the GPU;
//! - `resident` (feature `cuda`): gallery chunks kept as planes, uploaded once per process;
//! - `dot` (feature `cuda`): the dot kernel's launch and its record-major result;
//! - `library_gemm` (feature `cuda`): the same limb products by cuBLAS, then the generated
//!   epilogue (`contract::gpu::GemmEngine` chooses; `IRISC_GPU_GEMM`);
//! - [`lanes`]: what the comparison phase needs of a device (buffers, copies, the bit
//!   kernels), one trait; `cuda_lanes` (feature `cuda`) is it on the GPU;
//! - [`mask_len`]: the public mask lengths of a batch, on such a device;
//! - [`prss`]: the party's PRSS streams drawn on such a device;
//! - [`reshare`]: Reshare with its local step on such a device;
//! - [`msb`]: MSB extraction (Algorithm 10) with its local steps on such a device, the CPU
//!   protocol's messages and PRSS draws; [`additive_msb`](mod@additive_msb) likewise for
//!   AdditiveMSB (from the dot products' additive shares, `--msb-input additive`);
//! - [`or_tree`]: the OR trees over the comparison bits, likewise, and [`and`](mod@and) the
//!   ANDs of bit vectors;
//! - [`session`](mod@session): what the runtime holds, and the dot products and MSB
//!   extractions it offers;
//! - [`stats`]: the figures for `--stats`.

pub mod additive_msb;
pub mod and;
#[cfg(feature = "cuda")]
mod cuda_lanes;
pub mod device;
#[cfg(feature = "cuda")]
mod dot;
pub mod errors;
pub mod lanes;
pub mod layout;
#[cfg(feature = "cuda")]
pub mod library_gemm;
pub mod mask_len;
pub mod msb;
pub mod or_tree;
#[cfg(feature = "cuda")]
mod planes;
pub mod prss;
pub mod reshare;
#[cfg(feature = "cuda")]
mod resident;
pub mod session;
pub mod stats;
#[cfg(all(test, feature = "cuda"))]
mod tests;
pub mod watchdog;

use crate::contract::gpu::{k_pad, LimbWidth, MAX_K};

pub use session::{ptx_text, Session, NO_CUDA_SUPPORT};

/// The records each of `shards` GPUs of a party takes of `records`: contiguous, in order,
/// sizes differing by at most one, none empty (fewer parts than GPUs for a short range). The
/// dot products are record-major, so the parts' results, concatenated in order, are the
/// whole range's.
pub fn shard_ranges(records: std::ops::Range<usize>, shards: usize) -> Vec<std::ops::Range<usize>> {
    let n = records.len();
    let k = shards.max(1).min(n.max(1));
    (0..k)
        .map(|i| records.start + n * i / k..records.start + n * (i + 1) / k)
        .filter(|r| !r.is_empty())
        .collect()
}
pub use stats::GpuStats;

/// The limb width of replicated shares (two sides, eq. 6) in `word_bytes`-byte words of codes
/// of `len` elements, if the GPU has kernels for them: 16- or 32-bit storage, rows within
/// [`MAX_K`] limb columns. `None`: the CPU kernels compute them.
pub fn replicated_on_gpu(word_bytes: usize, len: usize) -> Option<LimbWidth> {
    let width = LimbWidth::of_bits(u32::try_from(word_bytes * 8).ok()?)?;
    (k_pad(2, len as u64) <= MAX_K).then_some(width)
}

/// Whether the GPU computes the dot products of Shamir shares of `kind` with `words` u16 words
/// a code: the Galois rings GR(2^16, d) (one side, 16-bit words), not F_p (whose reduction mod
/// p has no GPU kernel).
pub fn shamir_on_gpu(galois_ring: bool, words: usize) -> bool {
    galois_ring && k_pad(1, words as u64) <= MAX_K
}

#[cfg(test)]
mod routing_tests {
    use super::shard_ranges;

    #[test]
    fn shards_cover_the_records_in_order_and_balanced() {
        for start in [0usize, 7, 1000] {
            for n in 0..40usize {
                for k in 1..6usize {
                    let parts = shard_ranges(start..start + n, k);
                    // Contiguous, in order, covering exactly the range.
                    let mut next = start;
                    for p in &parts {
                        assert_eq!(p.start, next, "{n} records on {k} GPUs: {parts:?}");
                        assert!(!p.is_empty());
                        next = p.end;
                    }
                    assert_eq!(next, start + n);
                    assert_eq!(parts.len(), k.min(n));
                    let (lo, hi) = (
                        parts.iter().map(|p| p.len()).min().unwrap_or(0),
                        parts.iter().map(|p| p.len()).max().unwrap_or(0),
                    );
                    assert!(hi - lo <= 1, "{parts:?}");
                }
            }
        }
        assert_eq!(shard_ranges(0..10, 0), vec![0..10]);
    }

    use super::*;

    #[test]
    fn sixteen_and_thirty_two_bit_rings_and_galois_rings_run_on_the_gpu() {
        assert_eq!(replicated_on_gpu(2, 12800), Some(LimbWidth::W16));
        assert_eq!(replicated_on_gpu(4, 12800), Some(LimbWidth::W32));
        assert_eq!(replicated_on_gpu(8, 12800), None);
        assert_eq!(replicated_on_gpu(2, MAX_K as usize), None);
        assert!(shamir_on_gpu(true, 12800));
        assert!(shamir_on_gpu(true, 12800));
        assert!(!shamir_on_gpu(false, 12800));
    }
}
