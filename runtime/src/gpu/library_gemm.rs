//! The limb products of a GPU dot product by cuBLAS (paper 003, Section 4.4, as the deployed
//! system computes them): one `cublasGemmEx` per limb pair `(i, j)`, int8 planes in, i32 out,
//! accumulated (beta = 1) into the plane of its shift `i + j`, then the generated epilogue
//! `irisc_gpu_combine{w}` recombines the planes into ring words. The same words as irisc's own
//! kernel `irisc_gpu_dot{w}_k{K}` ([`GemmEngine`] chooses; the bench measures both).
//!
//! Orientation: the planes are row-major (rows x `k_pad` limbs), which is column-major
//! `k_pad x rows`; `C = Q_j^T * G_i` is then cuBLAS's int8 "TN" form with `lda = ldb = k_pad`
//! and `C` column-major `codes_pad x records_pad` (`ldc = codes_pad`): element `(c, r)` at
//! `r * ldc + c`, the layout `irisc_gpu_combine{w}` reads. Both row counts are padded to the
//! contract's block, whose rows are zero in the planes, so every GEMM dimension is a multiple
//! of 4 as the int8 tensor-core path of cuBLAS wants.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::cublas::{result as blas, sys as blas_sys, CudaBlas};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
use cudarc::driver::{LaunchConfig, PushKernelArg};

pub use crate::contract::gpu::GemmEngine;
use crate::contract::gpu::{rows_pad, LimbWidth, SPLIT_THREADS};

/// The shape of the accumulator planes of one call: `(ldc, plane)` for `records` x `codes`.
pub fn accumulator_shape(records: usize, codes: usize) -> (u64, u64) {
    let ldc = rows_pad(codes as u64);
    (ldc, ldc * rows_pad(records as u64))
}

/// The i32 elements the accumulators of one call take.
pub fn accumulator_len(width: LimbWidth, records: usize, codes: usize) -> usize {
    width.limbs() * accumulator_shape(records, codes).1 as usize
}

/// Whether the cuBLAS library can be loaded on this machine.
pub fn cublas_present() -> bool {
    // SAFETY: only tries to dlopen the cuBLAS library (and closes it again).
    unsafe { blas_sys::is_culib_present() }
}

/// A cuBLAS handle on `stream`.
pub fn cublas_on(stream: &Arc<CudaStream>) -> Result<CudaBlas, String> {
    if !cublas_present() {
        return Err("the cuBLAS library (libcublas.so) was not found".into());
    }
    CudaBlas::new(stream.clone()).map_err(|e| format!("creating a cuBLAS handle: {e:?}"))
}

/// The limb planes of one operand: the int8 planes (`limbs x rows_pad x k_pad`) and `rows_pad`.
pub struct PlanesRef<'a> {
    pub limbs: &'a CudaSlice<i8>,
    pub rows_pad: u64,
}

/// Enqueues on `stream` the limb products of the first `records` gallery rows with the first
/// `codes` query rows into `acc` (at least [`accumulator_len`] elements), one plane per shift.
#[allow(clippy::too_many_arguments)]
pub fn limb_products(
    blas: &CudaBlas,
    stream: &Arc<CudaStream>,
    width: LimbWidth,
    k_pad: u64,
    gallery: PlanesRef<'_>,
    queries: PlanesRef<'_>,
    records: usize,
    codes: usize,
    acc: &mut CudaSlice<i32>,
) -> Result<(), String> {
    let (ldc, plane) = accumulator_shape(records, codes);
    let (m, n) = (ldc, rows_pad(records as u64));
    if m > queries.rows_pad || n > gallery.rows_pad {
        return Err(format!(
            "internal error: {records} x {codes} of planes of {} x {} rows",
            gallery.rows_pad, queries.rows_pad
        ));
    }
    if acc.len() < accumulator_len(width, records, codes) {
        return Err("internal error: the accumulator planes are too small".into());
    }
    let to_i32 = |v: u64, what: &str| {
        i32::try_from(v).map_err(|_| format!("{what} = {v} is more than one cuBLAS call takes"))
    };
    let (mi, ni, ki) = (
        to_i32(m, "codes")?,
        to_i32(n, "records")?,
        to_i32(k_pad, "k")?,
    );
    let ldc_i = to_i32(ldc, "ldc")?;
    let (g_ptr, _g_sync) = gallery.limbs.device_ptr(stream);
    let (q_ptr, _q_sync) = queries.limbs.device_ptr(stream);
    let (acc_ptr, _acc_sync) = acc.device_ptr_mut(stream);
    let mut first_of_shift = vec![true; width.limbs()];
    for (i, j) in width.products() {
        let s = i + j;
        let beta = if std::mem::replace(&mut first_of_shift[s], false) {
            0i32
        } else {
            1i32
        };
        let a = q_ptr + j as u64 * queries.rows_pad * k_pad;
        let b = g_ptr + i as u64 * gallery.rows_pad * k_pad;
        let c = acc_ptr + (s as u64 * plane) * std::mem::size_of::<i32>() as u64;
        // SAFETY: A is plane j of the queries (m rows of k_pad int8 inside its rows_pad rows),
        // B plane i of the gallery (n rows inside its rows_pad), C plane s of the accumulators
        // (m x n i32, checked above).
        unsafe { gemm_s8_tn(blas, (mi, ni, ki), (a, ki), (b, ki), beta, (c, ldc_i)) }
            .map_err(|e| format!("cublasGemmEx (limbs {i} x {j}, {m} x {n} x {k_pad}): {e:?}"))?;
    }
    Ok(())
}

/// Enqueues `C = A^T B + beta C` on `blas`'s stream: the int8 tensor-core GEMM in cuBLAS's
/// "TN" form, int8 in, i32 out (`CUBLAS_COMPUTE_32I`); A is `k x m` and B `k x n` column-major
/// (row-major `m x k` and `n x k`), C `m x n` column-major. `(m, n, k)`, then each matrix as
/// (device address, leading dimension).
///
/// # Safety
/// The addresses must be device memory of the handle's context holding those matrices.
pub unsafe fn gemm_s8_tn(
    blas: &CudaBlas,
    (m, n, k): (i32, i32, i32),
    (a, lda): (u64, i32),
    (b, ldb): (u64, i32),
    beta: i32,
    (c, ldc): (u64, i32),
) -> Result<(), cudarc::cublas::result::CublasError> {
    let alpha = 1i32;
    // SAFETY: the caller's matrices; alpha and beta are host i32 (the default pointer mode).
    unsafe {
        blas::gemm_ex(
            *blas.handle(),
            blas_sys::cublasOperation_t::CUBLAS_OP_T,
            blas_sys::cublasOperation_t::CUBLAS_OP_N,
            m,
            n,
            k,
            &alpha as *const i32 as *const c_void,
            a as *const c_void,
            blas_sys::cudaDataType::CUDA_R_8I,
            lda,
            b as *const c_void,
            blas_sys::cudaDataType::CUDA_R_8I,
            ldb,
            &beta as *const i32 as *const c_void,
            c as *mut c_void,
            blas_sys::cudaDataType::CUDA_R_32I,
            ldc,
            blas_sys::cublasComputeType_t::CUBLAS_COMPUTE_32I,
            blas_sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
        )
    }
}

/// Enqueues `irisc_gpu_combine{w}` (`combine`): `out[r * codes + c]` from the planes in `acc`.
pub fn launch_combine<T: DeviceRepr>(
    stream: &Arc<CudaStream>,
    combine: &CudaFunction,
    acc: &CudaSlice<i32>,
    records: usize,
    codes: usize,
    out: &mut CudaSlice<T>,
) -> Result<(), String> {
    let (ldc, plane) = accumulator_shape(records, codes);
    let n = (records * codes) as u64;
    let blocks = n.div_ceil(u64::from(SPLIT_THREADS)).clamp(1, 1 << 16) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (SPLIT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (r64, c64) = (records as u64, codes as u64);
    let mut l = stream.launch_builder(combine);
    l.arg(acc)
        .arg(&ldc)
        .arg(&plane)
        .arg(&r64)
        .arg(&c64)
        .arg(out);
    // SAFETY: the contract's parameters of `irisc_gpu_combine{w}`: accumulators of
    // limbs x plane i32 (the caller's, from [`limb_products`] of the same shape) and an output
    // of records x codes words.
    unsafe { l.launch(cfg) }
        .map(|_| ())
        .map_err(|e| format!("launching the combine kernel: {e}"))
}
