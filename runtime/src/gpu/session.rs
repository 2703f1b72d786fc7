//! The GPU session of a party: what `irisc_rt_gpu_attach` creates and every later dot product
//! of a supported ring runs on. With the `cuda` feature it owns the [`super::device`], the
//! resident galleries and the figures; without it, it cannot be created
//! ([`Session::attach`] fails with [`NO_CUDA_SUPPORT`]) and its methods are unreachable, so
//! the dispatch in the rest of the runtime is the same code in both builds.

use std::ops::Range;
use std::sync::Arc;

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;

/// A Galois-ring Shamir gallery as the GPU path sees it: its words, and the value that owns
/// them (kept while the planes made from them are resident, and identifying them).
pub struct ShamirGallery<'a> {
    pub holder: Arc<dyn std::any::Any + Send + Sync>,
    pub words: &'a [u16],
    pub words_per_code: usize,
    pub count: usize,
}
use crate::share::Codes;

use super::stats::GpuStats;

/// Why a party built for the GPU stops when its runtime was built without the `cuda` feature.
pub const NO_CUDA_SUPPORT: &str = "this party was built for the GPU (irisc build --target cuda) \
    but its runtime was built without CUDA support: rebuild the runtime with `cargo build \
    --release -p irisc-runtime --features cuda`";

/// The PTX text of `bytes` (the program's kernels, as the schedule passes them): UTF-8,
/// trailing NULs dropped (a C string's terminator), no other NUL.
pub fn ptx_text(bytes: &[u8]) -> Result<String, RuntimeError> {
    let bad = |why: &str| {
        Err(RuntimeError::Schedule(format!(
            "gpu_attach: the program's PTX {why}"
        )))
    };
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let bytes = &bytes[..end];
    if bytes.is_empty() {
        return bad("is empty");
    }
    if bytes.contains(&0) {
        return bad("contains a NUL byte");
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.to_string()),
        Err(_) => bad("is not UTF-8 text"),
    }
}

#[cfg(not(feature = "cuda"))]
mod imp {
    use super::*;

    /// Never created in a runtime without the `cuda` feature.
    pub struct Session {
        never: std::convert::Infallible,
    }

    impl Session {
        /// Fails: this runtime has no CUDA support ([`NO_CUDA_SUPPORT`]).
        pub fn attach(
            _ptx: &[u8],
            _end: crate::gpu::watchdog::Expiry,
        ) -> Result<Session, RuntimeError> {
            Err(RuntimeError::Setup(NO_CUDA_SUPPORT.to_string()))
        }

        pub fn description(&self) -> &str {
            match self.never {}
        }

        pub fn masked_dot_records(
            &self,
            _q: &Codes,
            _g: &Arc<Codes>,
            _records: Range<usize>,
        ) -> Result<RingVec, RuntimeError> {
            match self.never {}
        }

        pub fn gr_dot_records(
            &self,
            _prepared: &[u16],
            _codes: usize,
            _g: &ShamirGallery<'_>,
            _records: Range<usize>,
        ) -> Result<Vec<u16>, RuntimeError> {
            match self.never {}
        }

        pub fn note_cpu_dot(&self) {
            match self.never {}
        }

        pub fn msb<T: crate::ring::RingElem>(
            &self,
            _net: &mut dyn crate::net::Transport,
            _prss: &mut crate::rand::Prss,
            _own: &[T],
            _prev: &[T],
            _k: u32,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            match self.never {}
        }

        pub fn note_cpu_msb(&self) {
            match self.never {}
        }

        pub fn additive_msb<T: crate::ring::RingElem>(
            &self,
            _net: &mut dyn crate::net::Transport,
            _prss: &mut crate::rand::Prss,
            _z: &[T],
            _k: u32,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            match self.never {}
        }

        pub fn reshare<T: crate::ring::RingElem>(
            &self,
            _net: &mut dyn crate::net::Transport,
            _prss: &mut crate::rand::Prss,
            _z: &[T],
            _k: u32,
        ) -> Result<crate::share::Rep3Vec<T>, RuntimeError> {
            match self.never {}
        }

        pub fn note_cpu_reshare(&self) {
            match self.never {}
        }

        pub fn and(
            &self,
            _net: &mut dyn crate::net::Transport,
            _prss: &mut crate::rand::Prss,
            _x: &crate::share::BitShares,
            _y: &crate::share::BitShares,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            match self.never {}
        }

        pub fn or_groups(
            &self,
            _net: &mut dyn crate::net::Transport,
            _prss: &mut crate::rand::Prss,
            _bits: &crate::share::BitShares,
            _group: usize,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            match self.never {}
        }

        pub fn compares(&self) -> bool {
            match self.never {}
        }

        pub fn mask_lengths(
            &self,
            _q: &[u64],
            _q_count: usize,
            _g: &[u64],
            _g_count: usize,
            _w: usize,
            _threads: usize,
        ) -> Result<Vec<u64>, RuntimeError> {
            match self.never {}
        }

        pub fn stats(&self) -> GpuStats {
            match self.never {}
        }
    }
}

#[cfg(feature = "cuda")]
mod imp {
    use std::sync::Mutex;
    use std::time::Instant;

    use super::*;
    use crate::gpu::device::Device;
    use crate::gpu::device::{ordinals_from_env, DEVICE_ENV};
    use crate::gpu::dot::dot;
    use crate::gpu::errors::gpu_error;
    use crate::gpu::planes::{upload_and_split, GpuWord};
    use crate::gpu::resident::{Held, ResidentCache};
    use crate::gpu::shard_ranges;
    use crate::gpu::watchdog::Watchdog;
    use crate::kernels::run::check_masked_operands;

    /// One party's GPUs (`IRISC_GPU`: one, or several that shard its gallery by record):
    /// each device with its resident galleries and figures. Shared by the main thread and the
    /// tiled scan's background job; one dot product at a time runs on each GPU.
    pub struct Session {
        shards: Vec<Shard>,
        description: String,
        /// Whether MSB extractions run their local steps here (`IRISC_GPU_COMPARE`).
        compare: bool,
    }

    /// One GPU of the party.
    struct Shard {
        device: Device,
        /// Held by a dot product for its whole run (one at a time on each GPU).
        state: Mutex<State>,
        /// The figures, under a lock of their own: a comparison op on the comparison stream
        /// counts itself without waiting for the background dot product to end.
        figures: Mutex<GpuStats>,
    }

    struct State {
        resident: ResidentCache,
    }

    impl Session {
        /// Opens the party's GPU (`IRISC_GPU`) and loads `ptx`, the program's kernels.
        pub fn attach(
            ptx: &[u8],
            end: crate::gpu::watchdog::Expiry,
        ) -> Result<Session, RuntimeError> {
            let text = ptx_text(ptx)?;
            let compare =
                crate::contract::gpu::compare_on_gpu_from_env().map_err(RuntimeError::Usage)?;
            let ordinals = ordinals_from_env(std::env::var(DEVICE_ENV).ok().as_deref())
                .map_err(RuntimeError::Usage)?;
            let mut shards = Vec::with_capacity(ordinals.len());
            for ordinal in ordinals {
                let device =
                    Device::open(ordinal, text.clone(), Watchdog::for_party(end.clone())?)?;
                let stats = GpuStats {
                    device: device.description.clone(),
                    gemm: device.gemm.clone(),
                    ..GpuStats::default()
                };
                shards.push(Shard {
                    device,
                    state: Mutex::new(State {
                        resident: ResidentCache::default(),
                    }),
                    figures: Mutex::new(stats),
                });
            }
            let description = shards
                .iter()
                .map(|s| s.device.description.as_str())
                .collect::<Vec<_>>()
                .join(" + ");
            Ok(Session {
                shards,
                description,
                compare,
            })
        }

        /// The devices, for messages: name, ordinal, compute capability of each.
        pub fn description(&self) -> &str {
            &self.description
        }

        /// This party's additive shares of the two-sided dot products (Appendix C, eq. 6) of
        /// every code of `q` with records `records` of gallery `g`, record-major: what
        /// `kernels::run::masked_dot_records` computes, on the GPU. Storage u16 or u32.
        pub fn masked_dot_records(
            &self,
            q: &Codes,
            g: &Arc<Codes>,
            records: Range<usize>,
        ) -> Result<RingVec, RuntimeError> {
            check_masked_operands(q, g, &records)?;
            let held = Held::Replicated(g.clone());
            let span = records.start * g.bits..records.end * g.bits;
            Ok(match (&q.a, &q.b, &g.a, &g.b) {
                (RingVec::U16(qa), RingVec::U16(qb), RingVec::U16(ga), RingVec::U16(gb)) => {
                    RingVec::U16(self.run(
                        (qa, Some(qb)),
                        q.count,
                        &held,
                        (&ga[span.clone()], Some(&gb[span])),
                        records,
                        g.bits,
                    )?)
                }
                (RingVec::U32(qa), RingVec::U32(qb), RingVec::U32(ga), RingVec::U32(gb)) => {
                    RingVec::U32(self.run(
                        (qa, Some(qb)),
                        q.count,
                        &held,
                        (&ga[span.clone()], Some(&gb[span])),
                        records,
                        g.bits,
                    )?)
                }
                _ => {
                    return Err(RuntimeError::Schedule(
                        "masked dot product on the GPU of shares that are not both 16- or \
                         32-bit"
                            .into(),
                    ))
                }
            })
        }

        /// The one-sided dot products of Galois-ring Shamir shares (Section 4.3.2) of the
        /// `codes` prepared query codes (`prepared`, Lagrange coefficient folded in) with
        /// records `records` of gallery `g`, mod 2^16, record-major: what
        /// `kernels::gr_dot_reference` computes, on the GPU.
        pub fn gr_dot_records(
            &self,
            prepared: &[u16],
            codes: usize,
            g: &ShamirGallery<'_>,
            records: Range<usize>,
        ) -> Result<Vec<u16>, RuntimeError> {
            let words = g.words_per_code;
            if records.start > records.end || records.end > g.count {
                return Err(RuntimeError::Schedule(format!(
                    "shamir_dot: records {records:?} of a gallery of {}",
                    g.count
                )));
            }
            let gw: &[u16] = &g.words[records.start * words..records.end * words];
            let held = Held::Shamir(g.holder.clone());
            self.run((prepared, None), codes, &held, (gw, None), records, words)
        }

        /// With the session attached, a dot product that runs on the CPU (a ring without GPU
        /// kernels): counted for `--stats`.
        pub fn note_cpu_dot(&self) {
            if let Ok(mut s) = self.shards[0].figures.lock() {
                s.cpu_dot_calls += 1;
            }
        }

        /// The most significant bits of the values whose replicated shares are `own`, `prev`
        /// in Z_2^k (16- or 32-bit storage), the local steps on the party's first GPU
        /// ([`crate::gpu::msb::msb_on`]): the CPU protocol's messages, PRSS draws and
        /// output shares.
        pub fn msb<T: crate::ring::RingElem>(
            &self,
            net: &mut dyn crate::net::Transport,
            prss: &mut crate::rand::Prss,
            own: &[T],
            prev: &[T],
            k: u32,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            let started = Instant::now();
            let shard = &self.shards[0];
            // No lock while it runs: the comparison stream is the schedule thread's, and the
            // background dot products keep the device's main stream meanwhile.
            let lanes = crate::gpu::cuda_lanes::CudaLanes::comparing(&shard.device);
            let bits = crate::gpu::msb::msb_on(&lanes, net, prss, own, prev, k)?;
            let mut stats = shard.figures()?;
            stats.msb_calls += 1;
            stats.msb_s += started.elapsed().as_secs_f64();
            Ok(bits)
        }

        /// The most significant bits of the values whose additive shares this party holds in
        /// `z` in Z_2^k (16- or 32-bit storage), AdditiveMSB's local steps on the party's
        /// first GPU ([`crate::gpu::additive_msb::additive_msb_on`]): the CPU protocol's
        /// messages, PRSS draws and output shares. Counted with the MSB extractions.
        pub fn additive_msb<T: crate::ring::RingElem>(
            &self,
            net: &mut dyn crate::net::Transport,
            prss: &mut crate::rand::Prss,
            z: &[T],
            k: u32,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            let started = Instant::now();
            let shard = &self.shards[0];
            // No lock while it runs, as `msb`.
            let lanes = crate::gpu::cuda_lanes::CudaLanes::comparing(&shard.device);
            let bits = crate::gpu::additive_msb::additive_msb_on(&lanes, net, prss, z, k)?;
            let mut stats = shard.figures()?;
            stats.msb_calls += 1;
            stats.msb_s += started.elapsed().as_secs_f64();
            Ok(bits)
        }

        /// The public mask lengths of every (record, code) pair of gallery masks `g` and query
        /// masks `q` (`w` words each), record-major, on the party's first GPU
        /// ([`crate::gpu::mask_len::mask_lengths_on`]), unpacked on up to `threads` threads.
        #[allow(clippy::too_many_arguments)]
        pub fn mask_lengths(
            &self,
            q: &[u64],
            q_count: usize,
            g: &[u64],
            g_count: usize,
            w: usize,
            threads: usize,
        ) -> Result<Vec<u64>, RuntimeError> {
            let started = Instant::now();
            let shard = &self.shards[0];
            // No lock while it runs: the comparison stream is the schedule thread's, and the
            // background dot products keep the device's main stream meanwhile.
            let lanes = crate::gpu::cuda_lanes::CudaLanes::comparing(&shard.device);
            let out =
                crate::gpu::mask_len::mask_lengths_on(&lanes, q, q_count, g, g_count, w, threads)?;
            let mut stats = shard.figures()?;
            stats.mask_len_calls += 1;
            stats.mask_len_s += started.elapsed().as_secs_f64();
            stats.bytes_uploaded += 8 * ((q_count + g_count) * w) as u64;
            Ok(out)
        }

        /// Whether the comparison phase's MSB extractions run their local steps on the GPU
        /// (`IRISC_GPU_COMPARE`, read when the session was attached).
        pub fn compares(&self) -> bool {
            self.compare
        }

        /// Fresh replicated shares in Z_2^k of this party's additive shares `z` (16- or
        /// 32-bit storage), the zero shares and local step on the party's first GPU
        /// ([`crate::gpu::reshare::reshare_on`]): the CPU protocol's message and draws.
        pub fn reshare<T: crate::ring::RingElem>(
            &self,
            net: &mut dyn crate::net::Transport,
            prss: &mut crate::rand::Prss,
            z: &[T],
            k: u32,
        ) -> Result<crate::share::Rep3Vec<T>, RuntimeError> {
            let started = Instant::now();
            let shard = &self.shards[0];
            // No lock while it runs: the comparison stream is the schedule thread's, and the
            // background dot products keep the device's main stream meanwhile.
            let lanes = crate::gpu::cuda_lanes::CudaLanes::comparing(&shard.device);
            let out = crate::gpu::reshare::reshare_on(&lanes, net, prss, z, k)?;
            let mut stats = shard.figures()?;
            stats.reshare_calls += 1;
            stats.reshare_s += started.elapsed().as_secs_f64();
            Ok(out)
        }

        /// `x ∧ y` of binary shares, the local step on the party's first GPU
        /// ([`crate::gpu::and::and_on`]).
        pub fn and(
            &self,
            net: &mut dyn crate::net::Transport,
            prss: &mut crate::rand::Prss,
            x: &crate::share::BitShares,
            y: &crate::share::BitShares,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            let shard = &self.shards[0];
            let lanes = crate::gpu::cuda_lanes::CudaLanes::comparing(&shard.device);
            let out = crate::gpu::and::and_on(&lanes, net, prss, x, y)?;
            shard.figures()?.and_calls += 1;
            Ok(out)
        }

        /// The OR of each group of `group` bits of `bits` (groups of equal size), the levels'
        /// local steps on the party's first GPU ([`crate::gpu::or_tree::or_groups_on`]).
        pub fn or_groups(
            &self,
            net: &mut dyn crate::net::Transport,
            prss: &mut crate::rand::Prss,
            bits: &crate::share::BitShares,
            group: usize,
        ) -> Result<crate::share::BitShares, RuntimeError> {
            let started = Instant::now();
            let shard = &self.shards[0];
            // No lock while it runs: the comparison stream is the schedule thread's, and the
            // background dot products keep the device's main stream meanwhile.
            let lanes = crate::gpu::cuda_lanes::CudaLanes::comparing(&shard.device);
            let out = crate::gpu::or_tree::or_groups_on(&lanes, net, prss, bits, group)?;
            let mut stats = shard.figures()?;
            stats.or_calls += 1;
            stats.or_s += started.elapsed().as_secs_f64();
            Ok(out)
        }

        /// With the session attached, a reshare that runs on the CPU: counted.
        pub fn note_cpu_reshare(&self) {
            if let Ok(mut s) = self.shards[0].figures.lock() {
                s.cpu_reshare_calls += 1;
            }
        }

        /// With the session attached, an MSB extraction that runs on the CPU: counted.
        pub fn note_cpu_msb(&self) {
            if let Ok(mut s) = self.shards[0].figures.lock() {
                s.cpu_msb_calls += 1;
            }
        }

        /// The figures so far, summed over the party's GPUs (`dot_s`: GPU-busy seconds, the
        /// shards' summed).
        pub fn stats(&self) -> GpuStats {
            let mut gemm: Vec<&str> = self.shards.iter().map(|s| s.device.gemm.as_str()).collect();
            gemm.dedup();
            let mut total = GpuStats {
                device: self.description.clone(),
                gemm: gemm.join(" + "),
                ..GpuStats::default()
            };
            for shard in &self.shards {
                if let Ok(s) = shard.state.lock() {
                    total.resident_bytes += s.resident.bytes();
                }
                if let Ok(s) = shard.figures.lock() {
                    total.dot_calls += s.dot_calls;
                    total.dot_s += s.dot_s;
                    total.cpu_dot_calls += s.cpu_dot_calls;
                    total.gallery_uploads += s.gallery_uploads;
                    total.bytes_uploaded += s.bytes_uploaded;
                    total.mask_len_calls += s.mask_len_calls;
                    total.mask_len_s += s.mask_len_s;
                    total.msb_calls += s.msb_calls;
                    total.msb_s += s.msb_s;
                    total.cpu_msb_calls += s.cpu_msb_calls;
                    total.and_calls += s.and_calls;
                    total.or_calls += s.or_calls;
                    total.or_s += s.or_s;
                    total.reshare_calls += s.reshare_calls;
                    total.reshare_s += s.reshare_s;
                    total.cpu_reshare_calls += s.cpu_reshare_calls;
                }
            }
            total
        }

        /// [`Shard::run`] over the party's GPUs: the records split by [`shard_ranges`], each
        /// part on its GPU at the same time, the record-major results concatenated in order.
        fn run<T: GpuWord + Send + Sync>(
            &self,
            q: (&[T], Option<&[T]>),
            codes: usize,
            gallery: &Held,
            g: (&[T], Option<&[T]>),
            records: Range<usize>,
            len: usize,
        ) -> Result<Vec<T>, RuntimeError> {
            let parts = shard_ranges(records.clone(), self.shards.len());
            if parts.len() <= 1 {
                return self.shards[0].run(q, codes, gallery, g, records, len);
            }
            let results: Vec<Result<Vec<T>, RuntimeError>> = std::thread::scope(|scope| {
                let jobs: Vec<_> = parts
                    .iter()
                    .zip(&self.shards)
                    .map(|(part, shard)| {
                        // The part's rows of the gallery words, which start at `records.start`.
                        let rows =
                            (part.start - records.start) * len..(part.end - records.start) * len;
                        let gp = (&g.0[rows.clone()], g.1.map(|b| &b[rows]));
                        let part = part.clone();
                        scope.spawn(move || shard.run(q, codes, gallery, gp, part, len))
                    })
                    .collect();
                jobs.into_iter()
                    .map(|j| {
                        j.join().unwrap_or_else(|_| {
                            Err(gpu_error("a GPU shard's thread panicked".into()))
                        })
                    })
                    .collect()
            });
            let mut out = Vec::with_capacity(records.len() * codes);
            for r in results {
                out.extend(r?);
            }
            Ok(out)
        }
    }

    impl Shard {
        fn figures(&self) -> Result<std::sync::MutexGuard<'_, GpuStats>, RuntimeError> {
            self.figures
                .lock()
                .map_err(|_| gpu_error("the GPU session is poisoned by an earlier panic".into()))
        }

        fn state(&self) -> Result<std::sync::MutexGuard<'_, State>, RuntimeError> {
            self.state
                .lock()
                .map_err(|_| gpu_error("the GPU session is poisoned by an earlier panic".into()))
        }

        /// The dot products of `codes` query rows (`q`: sides a and, replicated, b; `len`
        /// words a side) with the gallery rows `g` (records `records` of `gallery`): the
        /// chunk's resident planes (uploaded and split now if they are not), the queries
        /// uploaded and split (side b negated), the dot kernel, the result downloaded.
        fn run<T: GpuWord>(
            &self,
            q: (&[T], Option<&[T]>),
            codes: usize,
            gallery: &Held,
            g: (&[T], Option<&[T]>),
            records: Range<usize>,
            len: usize,
        ) -> Result<Vec<T>, RuntimeError> {
            let n = records.len();
            if n == 0 || codes == 0 || len == 0 {
                return Ok(vec![T::default(); n * codes]);
            }
            let started = Instant::now();
            let word = std::mem::size_of::<T>() as u64;
            let sides = if q.1.is_some() { 2 } else { 1 };
            let mut state = self.state()?;
            let what = format!("records {}..{} of the gallery", records.start, records.end);
            let (planes, uploaded) = state.resident.get_or_upload(gallery, records, || {
                upload_and_split(&self.device, &what, g.0, g.1, n, len, false)
            })?;
            let mut bytes = 0;
            if uploaded {
                bytes += sides * (n * len) as u64 * word;
            }
            let queries = upload_and_split(
                &self.device,
                "the batch's query codes",
                q.0,
                q.1,
                codes,
                len,
                q.1.is_some(),
            )?;
            bytes += sides * (codes * len) as u64 * word;
            let out = dot::<T>(&self.device, &planes, &queries, n, codes)?;
            drop(state);
            let mut stats = self.figures()?;
            stats.gallery_uploads += u64::from(uploaded);
            stats.bytes_uploaded += bytes;
            stats.dot_calls += 1;
            stats.dot_s += started.elapsed().as_secs_f64();
            Ok(out)
        }
    }
}

pub use imp::Session;

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "gpu::Session({})", self.description())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptx_text_takes_a_c_string_and_refuses_what_cudas_loader_cannot() {
        assert_eq!(ptx_text(b".version 8.0\n\0").unwrap(), ".version 8.0\n");
        assert_eq!(ptx_text(b".target sm_90a").unwrap(), ".target sm_90a");
        for (bad, why) in [
            (&b""[..], "is empty"),
            (b"\0\0", "is empty"),
            (b"a\0b", "NUL"),
            (b"\xff\xfe", "UTF-8"),
        ] {
            let e = ptx_text(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{e}");
        }
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn attaching_without_cuda_support_says_how_to_rebuild() {
        let e = Session::attach(b".version 8.0", Arc::new(|_| {}))
            .expect_err("no session without CUDA");
        assert_eq!(e.to_string(), NO_CUDA_SUPPORT);
        assert!(NO_CUDA_SUPPORT.contains("cargo build --release -p irisc-runtime --features cuda"));
        assert!(NO_CUDA_SUPPORT.starts_with(
            "this party was built for the GPU (irisc build --target cuda) but its runtime was \
             built without CUDA support"
        ));
    }
}
