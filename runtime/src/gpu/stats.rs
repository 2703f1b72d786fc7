//! What ran on the GPU, for `--stats` (key `"gpu"`, present only when the schedule attached a
//! GPU): which device, how many dot products ran there and how many stayed on the CPU (rings
//! without GPU kernels: F_p, 64-bit storage), what moved to the card, and how many MSB
//! extractions of the comparison phase ran there.

use serde::Serialize;

/// One party's GPU figures for one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GpuStats {
    /// The device: name, ordinal, compute capability.
    pub device: String,
    /// The int8 GEMM of the dot products: `cublas` or `generated` (irisc's kernel).
    pub gemm: String,
    /// Dot-product calls (a query, or a batch against a gallery chunk) computed on the GPU.
    pub dot_calls: u64,
    /// Their wall seconds, uploads and downloads included.
    pub dot_s: f64,
    /// Dot-product calls left to the CPU kernels: rings the GPU has no kernel for (F_p,
    /// 64-bit storage) or codes longer than its kernels take.
    pub cpu_dot_calls: u64,
    /// Gallery chunks uploaded and split into limb planes (each once per process).
    pub gallery_uploads: u64,
    /// Bytes copied to the GPU (gallery chunks and query batches).
    pub bytes_uploaded: u64,
    /// Bytes of gallery limb planes resident at the end.
    pub resident_bytes: u64,
    /// Batches whose public mask lengths were computed on the GPU.
    pub mask_len_calls: u64,
    /// Their wall seconds, copies included.
    pub mask_len_s: f64,
    /// Reshares (Appendix C) whose zero shares and local step ran on the GPU.
    pub reshare_calls: u64,
    /// Their wall seconds, the round's network wait included.
    pub reshare_s: f64,
    /// MSB extractions (Algorithm 10) whose local steps ran on the GPU.
    pub msb_calls: u64,
    /// Their wall seconds, the rounds' network waits included.
    pub msb_s: f64,
    /// MSB extractions left to the CPU protocol (chunked rounds, 64-bit storage, or
    /// `IRISC_GPU_COMPARE=cpu`).
    pub cpu_msb_calls: u64,
    /// ANDs (and ORs) of bit vectors whose local step ran on the GPU.
    pub and_calls: u64,
    /// OR trees whose levels ran on the GPU.
    pub or_calls: u64,
    /// Their wall seconds, the rounds' network waits included.
    pub or_s: f64,
    /// Reshares left to the CPU protocol (64-bit storage, or `IRISC_GPU_COMPARE=cpu`).
    pub cpu_reshare_calls: u64,
}
