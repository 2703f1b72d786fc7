//! CUDA failures as messages a user can act on ([`RuntimeError::Setup`]): what the party was
//! doing, the driver's name for the error, and for the failures that have a usual cause (out
//! of memory, kernels the card cannot run, a kernel the program's PTX lacks) what to do. The
//! formatting is plain Rust (tested without a GPU); [`driver`] maps cudarc's errors with it.
//! Nothing here prints: the party's one line saying why it stops is printed by the ABI wrapper.

use crate::error::RuntimeError;

/// The environment variable with the ordinal of the GPU a party uses (default 0).
pub const DEVICE_ENV: &str = "IRISC_GPU";

/// Bytes as a person reads them: `1.50 GiB`, `12.0 MiB`, `512 B`.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = UNITS[0];
    for u in &UNITS[1..] {
        if v < 1024.0 {
            break;
        }
        v /= 1024.0;
        unit = u;
    }
    let digits = if v < 10.0 {
        2
    } else if v < 100.0 {
        1
    } else {
        0
    };
    format!("{v:.digits$} {unit}")
}

/// The message for `CUDA_ERROR_OUT_OF_MEMORY` while `what` asked for `asked` bytes, with the
/// card's free and total memory where the driver said (`cuMemGetInfo`).
pub fn out_of_memory(what: &str, asked: u64, free_total: Option<(u64, u64)>) -> String {
    let card = match free_total {
        Some((free, total)) => format!(
            "the GPU has {} free of {}",
            human_bytes(free),
            human_bytes(total)
        ),
        None => "the GPU did not say how much it has free".to_string(),
    };
    format!(
        "the GPU ran out of memory while {what}: asked for {} ({asked} bytes), {card}; \
         scan the gallery in smaller chunks (--record-chunk) or run fewer parties per GPU \
         (IRISC_GPU selects the device of each)",
        human_bytes(asked)
    )
}

/// The message for any other driver error `name` (`CUDA_ERROR_...`, with the driver's
/// `description`) while `what`.
pub fn driver_failure(what: &str, name: &str, description: &str) -> String {
    let hint = match name {
        "CUDA_ERROR_INVALID_PTX"
        | "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"
        | "CUDA_ERROR_NO_BINARY_FOR_GPU"
        | "CUDA_ERROR_JIT_COMPILER_NOT_FOUND" => format!(
            "; the program's kernels are PTX {}.{} for {} (Hopper: H100, H200): run it on such \
             a GPU with a driver of CUDA 12.0 or later",
            crate::contract::gpu::PTX_VERSION / 10,
            crate::contract::gpu::PTX_VERSION % 10,
            crate::contract::gpu::SM_ARCH
        ),
        "CUDA_ERROR_NO_DEVICE" | "CUDA_ERROR_INVALID_DEVICE" => {
            format!("; check {} and CUDA_VISIBLE_DEVICES", DEVICE_ENV)
        }
        "CUDA_ERROR_ILLEGAL_ADDRESS"
        | "CUDA_ERROR_LAUNCH_FAILED"
        | "CUDA_ERROR_ILLEGAL_INSTRUCTION" => {
            "; a kernel of the program failed (a bug in the generated kernels or the runtime's \
             launch: please report it)"
                .to_string()
        }
        _ => String::new(),
    };
    format!("CUDA error while {what}: {name} ({description}){hint}")
}

/// The message for a kernel the program's PTX does not define.
pub fn missing_kernel(name: &str) -> String {
    format!(
        "the program's GPU kernels have no function `{name}` (the PTX the compiler embedded does \
         not follow this runtime's GPU contract, runtime/src/contract/gpu.rs: rebuild the \
         program with this irisc)"
    )
}

/// The message when no CUDA driver library can be loaded at all.
pub fn no_driver() -> String {
    format!(
        "no CUDA driver on this machine (libcuda.so could not be loaded): this party was built \
         for the GPU (irisc build --target cuda); run it on a host with an NVIDIA GPU and its \
         driver, or rebuild the program for the CPU (--target cpu){}",
        std::env::var("LD_LIBRARY_PATH")
            .ok()
            .filter(|p| !p.is_empty())
            .map(|p| format!("; LD_LIBRARY_PATH is {p}"))
            .unwrap_or_default()
    )
}

/// A [`RuntimeError`] for the GPU path.
pub fn gpu_error(msg: String) -> RuntimeError {
    RuntimeError::Setup(msg)
}

/// cudarc's driver errors to [`RuntimeError`]s.
#[cfg(feature = "cuda")]
pub(crate) mod driver {
    use cudarc::driver::sys::CUresult;
    use cudarc::driver::{CudaContext, DriverError};

    use super::*;

    /// `e` while `what`. Out of memory (`asked` bytes, where known) adds the card's free and
    /// total memory from `ctx`.
    pub(crate) fn error(
        e: DriverError,
        what: &str,
        asked: Option<u64>,
        ctx: Option<&CudaContext>,
    ) -> RuntimeError {
        if e.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let free_total = ctx
                .and_then(|c| c.mem_get_info().ok())
                .map(|(f, t)| (f as u64, t as u64));
            return gpu_error(out_of_memory(what, asked.unwrap_or(0), free_total));
        }
        let name = e
            .error_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{:?}", e.0));
        let description = e
            .error_string()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "no description".into());
        gpu_error(driver_failure(what, &name, &description))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_says_what_was_asked_and_what_is_free() {
        let m = out_of_memory(
            "uploading chunk 3 of the gallery",
            3 << 30,
            Some((1 << 29, 80 << 30)),
        );
        assert_eq!(
            m,
            "the GPU ran out of memory while uploading chunk 3 of the gallery: asked for \
             3.00 GiB (3221225472 bytes), the GPU has 512 MiB free of 80.0 GiB; scan the \
             gallery in smaller chunks (--record-chunk) or run fewer parties per GPU \
             (IRISC_GPU selects the device of each)"
        );
        assert!(out_of_memory("x", 10, None).contains("did not say"));
    }

    #[test]
    fn human_bytes_rounds_by_magnitude() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.00 KiB");
        assert_eq!(human_bytes(150 << 20), "150 MiB");
        assert_eq!(human_bytes(u64::MAX), "16777216 TiB");
    }

    #[test]
    fn driver_failures_name_the_error_and_a_remedy() {
        let m = driver_failure(
            "loading the program's kernels",
            "CUDA_ERROR_INVALID_PTX",
            "a PTX JIT compilation failed",
        );
        assert!(
            m.starts_with("CUDA error while loading the program's kernels: CUDA_ERROR_INVALID_PTX")
        );
        assert!(m.contains("sm_90a"), "{m}");
        assert!(
            driver_failure("x", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device")
                .contains("IRISC_GPU")
        );
        assert_eq!(
            driver_failure("x", "CUDA_ERROR_UNKNOWN", "unknown error"),
            "CUDA error while x: CUDA_ERROR_UNKNOWN (unknown error)"
        );
        assert!(missing_kernel("irisc_gpu_dot16_k25600").contains("`irisc_gpu_dot16_k25600`"));
    }
}
