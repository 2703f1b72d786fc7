//! Operands in GPU memory as limb planes: the host's u16/u32 share words uploaded, split into
//! int8 limb planes on the GPU by the contract's split kernel (`irisc_gpu_split{w}`; paper 003,
//! Section 4.4), and the raw upload freed. Replicated shares are split with both sides
//! (Appendix C, eq. 6), the query's side b negated; Galois-ring Shamir shares with one side.
//! [`super::layout::split_planes`] is the host description of the same planes.

use cudarc::driver::{CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg, ValidAsZeroBits};

use crate::contract::gpu::{split_kernel_name, SPLIT_THREADS};
use crate::error::RuntimeError;

use super::device::Device;
use super::errors::gpu_error;
use super::layout::{LimbWord, PlaneShape};

/// A ring word the GPU path uploads: u16 or u32.
pub(crate) trait GpuWord: LimbWord + DeviceRepr + ValidAsZeroBits {}
impl GpuWord for u16 {}
impl GpuWord for u32 {}

/// The most blocks a split launch uses: the kernel strides over the planes, so any grid
/// covers them; this keeps the grid far below the driver's limit of 2^31 - 1.
const MAX_SPLIT_BLOCKS: u64 = 1 << 16;

/// An operand's limb planes in GPU memory (layout: [`PlaneShape`]).
pub(crate) struct DevicePlanes {
    pub(crate) shape: PlaneShape,
    pub(crate) limbs: CudaSlice<i8>,
}

/// Uploads `rows` rows of `len` words of side `a` (and of side `b` for replicated shares),
/// splits them into limb planes on the GPU (side b negated if `negate_b`) and frees the
/// upload. `what` names the operand in messages ("chunk 2 of the gallery"). `rows` and `len`
/// must be positive (callers skip empty products).
pub(crate) fn upload_and_split<T: GpuWord>(
    device: &Device,
    what: &str,
    a: &[T],
    b: Option<&[T]>,
    rows: usize,
    len: usize,
    negate_b: bool,
) -> Result<DevicePlanes, RuntimeError> {
    let sides = if b.is_some() { 2 } else { 1 };
    let shape = PlaneShape::new(T::WIDTH, rows as u64, sides, len as u64)
        .map_err(|e| gpu_error(format!("{what}: {e}")))?;
    let n = rows
        .checked_mul(len)
        .filter(|&n| n > 0 && a.len() >= n && b.is_none_or(|b| b.len() >= n))
        .ok_or_else(|| {
            gpu_error(format!(
                "{what}: {} words for {rows} rows of {len} (internal error)",
                a.len()
            ))
        })?;
    let side_bytes = (n * std::mem::size_of::<T>()) as u64;
    let copy = format!("copying {what} to the GPU");
    let stream = &device.stream;
    let src_a = device.call(&copy, Some(side_bytes), || stream.clone_htod(&a[..n]))?;
    let src_b = match b {
        Some(b) => Some(device.call(&copy, Some(side_bytes), || stream.clone_htod(&b[..n]))?),
        None => None,
    };
    let mut dst = device.call(
        &format!("allocating the limb planes of {what}"),
        Some(shape.bytes()),
        || stream.alloc_zeros::<i8>(shape.bytes() as usize),
    )?;
    let kernel = device.function(&split_kernel_name(T::WIDTH))?;
    let blocks = shape
        .plane_elems()
        .div_ceil(u64::from(SPLIT_THREADS))
        .clamp(1, MAX_SPLIT_BLOCKS) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (SPLIT_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let (rows64, len64, sides32, negate32) = (rows as u64, len as u64, sides, u32::from(negate_b));
    // A one-sided split never reads side b: it gets side a's address, a valid one.
    let src_b_ref = src_b.as_ref().unwrap_or(&src_a);
    let mut launch = stream.launch_builder(&kernel);
    launch
        .arg(&src_a)
        .arg(src_b_ref)
        .arg(&rows64)
        .arg(&len64)
        .arg(&sides32)
        .arg(&negate32)
        .arg(&mut dst)
        .arg(&shape.rows_pad)
        .arg(&shape.k_pad);
    let name = split_kernel_name(T::WIDTH);
    device.call(&format!("launching {name} for {what}"), None, || {
        // SAFETY: the arguments are the contract's for `irisc_gpu_split{w}`, in its order and
        // types (u{w} sources of `rows·len` words each, u64/u32 scalars, an int8 destination
        // of `limbs·rows_pad·k_pad` bytes, exactly `shape.bytes()`); the kernel writes only
        // inside the planes.
        unsafe { launch.launch(cfg) }
    })?;
    device.synchronize(&format!("{name} on {what}"))?;
    drop((src_a, src_b));
    Ok(DevicePlanes { shape, limbs: dst })
}
