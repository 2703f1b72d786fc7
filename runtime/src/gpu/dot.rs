//! A batch dot product on the GPU: the contract's dot kernel `irisc_gpu_dot{w}_k{k_pad}` over
//! a gallery chunk's resident limb planes and a batch's query planes, launched with the
//! contract's grid, its record-major output (`out[r·codes + c]`, what the CPU kernels of
//! [`crate::kernels`] produce) downloaded. The limb products are combined by shift inside the
//! kernel (paper 003, Section 4.4); [`super::layout::limb_gemm`] is the host description.
//! With a cuBLAS handle on the device ([`crate::contract::gpu::GemmEngine::Cublas`]) the limb
//! products are cuBLAS GEMMs instead and `irisc_gpu_combine{w}` recombines
//! ([`super::library_gemm`]).

use cudarc::driver::{LaunchConfig, PushKernelArg};

use crate::contract::gpu::{
    combine_kernel_name, dot_kernel_name, BLOCK_COLS, BLOCK_ROWS, DOT_THREADS, MAX_K,
};
use crate::error::RuntimeError;

use super::device::Device;
use super::errors::gpu_error;
use super::library_gemm::{self, PlanesRef};
use super::planes::{DevicePlanes, GpuWord};

/// The driver's limit on the grid's y dimension (records / BLOCK_ROWS).
const MAX_GRID_Y: u64 = 65_535;
/// The driver's limit on the grid's x dimension (codes / BLOCK_COLS).
const MAX_GRID_X: u64 = (1 << 31) - 1;

/// The dot products of the first `codes` rows of `queries` with the first `records` rows of
/// `gallery`, record-major, mod 2^w. Both must be positive.
pub(crate) fn dot<T: GpuWord>(
    device: &Device,
    gallery: &DevicePlanes,
    queries: &DevicePlanes,
    records: usize,
    codes: usize,
) -> Result<Vec<T>, RuntimeError> {
    let (gs, qs) = (gallery.shape, queries.shape);
    if gs.width != T::WIDTH || qs.width != T::WIDTH || gs.k_pad != qs.k_pad {
        return Err(gpu_error(format!(
            "internal error: dot product of planes {gs:?} and {qs:?} into u{}",
            T::WIDTH.bits()
        )));
    }
    if records as u64 > gs.rows || codes as u64 > qs.rows {
        return Err(gpu_error(format!(
            "internal error: {records} records x {codes} codes of planes of {} x {}",
            gs.rows, qs.rows
        )));
    }
    if gs.k_pad > MAX_K {
        return Err(gpu_error(format!(
            "codes of {} limb columns are longer than the GPU kernels take ({MAX_K})",
            gs.k_pad
        )));
    }
    let (grid_x, grid_y) = (
        (codes as u64).div_ceil(BLOCK_COLS),
        (records as u64).div_ceil(BLOCK_ROWS),
    );
    if grid_y > MAX_GRID_Y || grid_x > MAX_GRID_X {
        return Err(gpu_error(format!(
            "{records} records x {codes} codes in one GPU call is more than one launch covers \
             ({} records at most): scan the gallery in smaller chunks (--record-chunk)",
            MAX_GRID_Y * BLOCK_ROWS
        )));
    }
    let name = dot_kernel_name(T::WIDTH, gs.k_pad);
    let kernel = device.function(&name)?;
    let n = records.checked_mul(codes).ok_or_else(|| {
        gpu_error(format!(
            "{records} records x {codes} codes do not fit in memory"
        ))
    })?;
    let stream = &device.stream;
    let mut out = device.call(
        "allocating the dot products",
        Some((n * std::mem::size_of::<T>()) as u64),
        || stream.alloc_zeros::<T>(n),
    )?;
    if let Some(blas) = &device.blas {
        let name = combine_kernel_name(T::WIDTH);
        let combine = device.function(&name)?;
        let len = library_gemm::accumulator_len(T::WIDTH, records, codes);
        let mut acc = device.call(
            "allocating the limb GEMMs' accumulators",
            Some((len * std::mem::size_of::<i32>()) as u64),
            // SAFETY: every element is written by the first GEMM of its shift (beta = 0)
            // before anything reads it.
            || unsafe { stream.alloc::<i32>(len) },
        )?;
        let g = PlanesRef {
            limbs: &gallery.limbs,
            rows_pad: gs.rows_pad,
        };
        let q = PlanesRef {
            limbs: &queries.limbs,
            rows_pad: qs.rows_pad,
        };
        library_gemm::limb_products(
            blas,
            stream,
            T::WIDTH,
            gs.k_pad,
            g,
            q,
            records,
            codes,
            &mut acc,
        )
        .map_err(gpu_error)?;
        library_gemm::launch_combine(stream, &combine, &acc, records, codes, &mut out)
            .map_err(gpu_error)?;
        device.synchronize("the limb GEMMs (cuBLAS) and irisc_gpu_combine")?;
        return device.call("copying the dot products from the GPU", None, || {
            stream.clone_dtoh(&out)
        });
    }
    let cfg = LaunchConfig {
        grid_dim: (grid_x as u32, grid_y as u32, 1),
        block_dim: (DOT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (records64, codes64) = (records as u64, codes as u64);
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&gallery.limbs)
        .arg(&gs.rows_pad)
        .arg(&queries.limbs)
        .arg(&qs.rows_pad)
        .arg(&mut out)
        .arg(&records64)
        .arg(&codes64);
    device.call(&format!("launching {name}"), None, || {
        // SAFETY: the arguments are the contract's for `irisc_gpu_dot{w}_k{k_pad}`, in its
        // order and types: int8 planes of `rows_pad · k_pad` per limb (k_pad the kernel's
        // constant, checked equal above), their padded row counts, a u{w} output of
        // `records · codes` words, and counts within the planes' rows (checked above).
        unsafe { launch.launch(cfg) }
    })?;
    device.synchronize(&name)?;
    device.call("copying the dot products from the GPU", None, || {
        stream.clone_dtoh(&out)
    })
}
