//! The GPU of a party process: one CUDA context (the primary context of device `IRISC_GPU`,
//! default 0, among those `CUDA_VISIBLE_DEVICES` leaves visible), one stream, and the
//! program's kernels loaded from the PTX the compiler embedded, looked up by the contract's
//! names ([`crate::contract::gpu`]). Several parties sharing a host with several GPUs give
//! each its own with `IRISC_GPU` (ARCHITECTURE section 9: GPUs first).
//!
//! Every call that may block runs under the session's [`Watchdog`]. The driver library is
//! loaded with `dlopen` on first use (cudarc's dynamic loading); its absence is an error, not
//! a panic, since it is checked before the first driver call.

use crate::contract::gpu::SM_ARCH;

pub use super::errors::DEVICE_ENV;

/// The device ordinals for a value of [`DEVICE_ENV`]: one (`2`) or a comma-separated list
/// (`0,1,2,3`: the party shards its gallery by record across them, ARCHITECTURE section 9);
/// `None`, unset or empty: `[0]`. A repeated ordinal is refused.
pub fn ordinals_from_env(v: Option<&str>) -> Result<Vec<usize>, String> {
    let Some(s) = v.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(vec![0]);
    };
    let mut out = Vec::new();
    for part in s.split(',') {
        let n = part.trim().parse::<usize>().map_err(|_| {
            format!(
                "{DEVICE_ENV}={s}: expected a GPU ordinal or a comma-separated list of them \
                 (0, 1, ... as nvidia-smi numbers them)"
            )
        })?;
        if out.contains(&n) {
            return Err(format!("{DEVICE_ENV}={s}: GPU {n} is named twice"));
        }
        out.push(n);
    }
    Ok(out)
}

/// The compute capability the contract's kernels need: `(major, minor, exact)`, `exact` for an
/// architecture-specific target (`sm_90a` runs on compute capability 9.0 only; `sm_80` on 8.0
/// and later). `None` for a name that is not `sm_<digits>[a]`.
pub fn required_capability(arch: &str) -> Option<(i32, i32, bool)> {
    let rest = arch.strip_prefix("sm_")?;
    let (digits, exact) = match rest.strip_suffix('a') {
        Some(d) => (d, true),
        None => (rest, false),
    };
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i32 = digits.parse().ok()?;
    Some((n / 10, n % 10, exact))
}

/// Whether a device of compute capability `(major, minor)` runs kernels for [`SM_ARCH`].
pub fn runs_contract_kernels(major: i32, minor: i32) -> bool {
    match required_capability(SM_ARCH) {
        Some((m, n, true)) => (major, minor) == (m, n),
        Some((m, n, false)) => (major, minor) >= (m, n),
        None => false,
    }
}

#[cfg(feature = "cuda")]
pub(crate) use with_cuda::Device;

#[cfg(feature = "cuda")]
mod with_cuda {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use cudarc::cublas::CudaBlas;
    use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream, DriverError};
    use cudarc::nvrtc::Ptx;

    use super::*;
    use crate::contract::gpu::GemmEngine;
    use crate::error::RuntimeError;
    use crate::gpu::errors::{self, driver, gpu_error};
    use crate::gpu::library_gemm;
    use crate::gpu::watchdog::Watchdog;

    /// One party's GPU: context, stream, the program's module and its functions.
    pub(crate) struct Device {
        pub(crate) ctx: Arc<CudaContext>,
        pub(crate) stream: Arc<CudaStream>,
        /// The schedule thread's stream for the comparison phase and the mask lengths, so
        /// that they overlap the tiled scan's background dot products on `stream`.
        pub(crate) compare_stream: Arc<CudaStream>,
        module: Arc<CudaModule>,
        functions: Mutex<HashMap<String, CudaFunction>>,
        pub(crate) watchdog: Watchdog,
        /// "NVIDIA H100 80GB HBM3 (GPU 0, compute capability 9.0)".
        pub(crate) description: String,
        /// The cuBLAS handle when the dot products' limb GEMMs run in cuBLAS
        /// ([`GemmEngine::Cublas`]); `None`: irisc's own kernel.
        pub(crate) blas: Option<CudaBlas>,
        /// Which GEMM runs, for `--stats` (and why, when the default could not be had).
        pub(crate) gemm: String,
    }

    impl Device {
        /// Opens device `ordinal` and loads `ptx` (the program's kernels, text) into it.
        pub(crate) fn open(
            ordinal: usize,
            ptx: String,
            watchdog: Watchdog,
        ) -> Result<Device, RuntimeError> {
            // SAFETY: only tries to dlopen the driver library (and closes it again).
            if !unsafe { cudarc::driver::sys::is_culib_present() } {
                return Err(gpu_error(errors::no_driver()));
            }
            let what = format!("opening GPU {ordinal} ({DEVICE_ENV})");
            let ctx = watchdog
                .watch(&what, || CudaContext::new(ordinal))
                .map_err(|e| driver::error(e, &what, None, None))?;
            let name = ctx.name().unwrap_or_else(|_| "an unnamed GPU".into());
            let (major, minor) = ctx.compute_capability().map_err(|e| {
                driver::error(e, "reading the GPU's compute capability", None, None)
            })?;
            let description = format!("{name} (GPU {ordinal}, compute capability {major}.{minor})");
            if !runs_contract_kernels(major, minor) {
                return Err(gpu_error(format!(
                    "{description} cannot run the program's kernels, which are generated for \
                     {SM_ARCH} (Hopper: H100, H200); choose another GPU with {DEVICE_ENV} or \
                     build the program for the CPU (--target cpu)"
                )));
            }
            let stream = watchdog
                .watch("creating a CUDA stream", || ctx.new_stream())
                .map_err(|e| driver::error(e, "creating a CUDA stream", None, Some(&ctx)))?;
            let compare_stream = watchdog
                .watch("creating a CUDA stream", || ctx.new_stream())
                .map_err(|e| driver::error(e, "creating a CUDA stream", None, Some(&ctx)))?;
            let what = "loading the program's GPU kernels (PTX JIT)";
            let module = watchdog
                .watch(what, || ctx.load_module(Ptx::from_src(ptx)))
                .map_err(|e| driver::error(e, what, None, Some(&ctx)))?;
            // The limb GEMMs: the faster engine unless IRISC_GPU_GEMM chooses. Without the
            // cuBLAS library the default falls back to irisc's kernel; a named `cublas` fails.
            let chosen = std::env::var(GemmEngine::ENV).is_ok();
            let engine = GemmEngine::from_env().map_err(RuntimeError::Usage)?;
            let (blas, gemm) = match engine {
                GemmEngine::Generated => (None, engine.name().to_string()),
                GemmEngine::Cublas => match library_gemm::cublas_on(&stream) {
                    Ok(b) => (Some(b), engine.name().to_string()),
                    Err(why) if chosen => {
                        return Err(gpu_error(format!(
                            "{}=cublas: {why}; unset it to use irisc's own GEMM kernel",
                            GemmEngine::ENV
                        )))
                    }
                    Err(why) => (None, format!("generated ({why})")),
                },
            };
            Ok(Device {
                ctx,
                stream,
                compare_stream,
                module,
                functions: Mutex::new(HashMap::new()),
                watchdog,
                description,
                blas,
                gemm,
            })
        }

        /// The kernel `name` of the program's module (looked up once).
        pub(crate) fn function(&self, name: &str) -> Result<CudaFunction, RuntimeError> {
            let mut f = self
                .functions
                .lock()
                .map_err(|_| gpu_error("the GPU's function table is poisoned".into()))?;
            if let Some(k) = f.get(name) {
                return Ok(k.clone());
            }
            let k = self.module.load_function(name).map_err(|e| {
                if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND {
                    gpu_error(errors::missing_kernel(name))
                } else {
                    driver::error(
                        e,
                        &format!("looking up kernel {name}"),
                        None,
                        Some(&self.ctx),
                    )
                }
            })?;
            f.insert(name.to_string(), k.clone());
            Ok(k)
        }

        /// Runs `f` (a potentially blocking call) under the watchdog and maps its error:
        /// `what` describes it, `asked` is the bytes it allocates (for out of memory).
        pub(crate) fn call<T>(
            &self,
            what: &str,
            asked: Option<u64>,
            f: impl FnOnce() -> Result<T, DriverError>,
        ) -> Result<T, RuntimeError> {
            self.watchdog
                .watch(what, f)
                .map_err(|e| driver::error(e, what, asked, Some(&self.ctx)))
        }

        /// Waits for the stream's work (under the watchdog).
        pub(crate) fn synchronize(&self, after: &str) -> Result<(), RuntimeError> {
            self.call(&format!("waiting for {after}"), None, || {
                self.stream.synchronize()
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_devices_come_from_the_environment() {
        assert_eq!(ordinals_from_env(None), Ok(vec![0]));
        assert_eq!(ordinals_from_env(Some("")), Ok(vec![0]));
        assert_eq!(ordinals_from_env(Some(" 3 ")), Ok(vec![3]));
        assert_eq!(ordinals_from_env(Some("0, 1,3")), Ok(vec![0, 1, 3]));
        assert!(ordinals_from_env(Some("-1"))
            .unwrap_err()
            .starts_with("IRISC_GPU=-1:"));
        assert!(ordinals_from_env(Some("gpu0")).is_err());
        assert!(ordinals_from_env(Some("0,")).is_err());
        assert!(ordinals_from_env(Some("1,1"))
            .unwrap_err()
            .contains("GPU 1 is named twice"));
    }

    #[test]
    fn the_contract_architecture_runs_on_hopper_only() {
        assert_eq!(required_capability("sm_90a"), Some((9, 0, true)));
        assert_eq!(required_capability("sm_80"), Some((8, 0, false)));
        assert_eq!(required_capability("sm_100a"), Some((10, 0, true)));
        assert_eq!(required_capability("compute_90"), None);
        assert_eq!(required_capability("sm_a"), None);
        assert!(runs_contract_kernels(9, 0));
        assert!(!runs_contract_kernels(8, 9));
        assert!(!runs_contract_kernels(10, 0));
    }
}
