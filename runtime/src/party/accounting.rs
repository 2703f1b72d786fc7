//! What a party did, printed at the end of every run (stderr, one line) and, with
//! `--stats PATH`, written as JSON for tools (the `irisc-bench` benchmarks read it).
//!
//! Times are wall-clock per phase; CPU time and peak memory come from the operating system, so a
//! run on an oversubscribed machine can be judged per core as well as per second.

use std::path::Path;
use std::time::Duration;

use std::collections::BTreeMap;

use serde::Serialize;

use super::PhaseTimes;

/// One party's figures for one run.
#[derive(Debug, Clone, Serialize)]
pub struct Accounting {
    pub party: usize,
    pub program: String,
    pub queries: usize,
    pub records: usize,
    pub threads: usize,
    pub load_s: f64,
    pub connect_s: f64,
    pub dot_s: f64,
    /// Wall time of dot products computed on a background thread while the comparison phase
    /// ran (the tiled scan's pipelined next chunk); not part of `dot_s`.
    pub dot_overlapped_s: f64,
    pub compare_s: f64,
    /// CPU seconds (user + system, every thread) the process spent in the ops of the dot
    /// phase and of the comparison phase: the phases' cost per core, however many other
    /// processes share the cores (wall times then stretch, CPU times do not).
    pub dot_cpu_s: Option<f64>,
    pub compare_cpu_s: Option<f64>,
    /// Page faults (minor and major) the process took in the ops of each phase: a gallery map
    /// touched for the first time, or a fresh buffer, fault page by page.
    pub dot_page_faults: Option<u64>,
    pub compare_page_faults: Option<u64>,
    pub total_s: f64,
    /// User + system CPU seconds of the whole process (every thread), at the end.
    pub cpu_s: Option<f64>,
    /// The same when the links were up, before the first operation: `cpu_s - cpu_ready_s` is
    /// the CPU time of the matching itself.
    pub cpu_ready_s: Option<f64>,
    /// Peak resident memory of the process, in bytes (Linux: VmHWM).
    pub peak_rss_bytes: Option<u64>,
    pub bytes_sent: u64,
    pub messages_sent: u64,
    pub rounds: u64,
    /// Per op kind (named as the `mpc` dialect names it): calls, seconds, rounds and bytes
    /// sent, as the executor measured them around each op.
    pub ops: BTreeMap<&'static str, OpStats>,
    /// Per op kind: CPU seconds of the process (every thread) during its calls, where the OS
    /// says (else empty). The profile of a run by op, on an oversubscribed machine too.
    pub ops_cpu_s: BTreeMap<&'static str, f64>,
    /// What ran on the GPU, when the schedule attached one (`irisc build --target cuda`):
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<crate::gpu::GpuStats>,
    /// What the `beaver` evaluations consumed (`--protocol beaver`): absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub beaver: Option<BeaverStats>,
    /// The loop nests measured against each other in this process and the one each kernel ran
    /// ([`crate::kernels::nest`]): empty where no kernel offered two, or no call was long
    /// enough to measure.
    pub kernel_nests: Vec<crate::kernels::nest::Measured>,
    /// Calls of a polyphase kernel in this process ([`crate::kernels::polyphase`]): 0 where
    /// every dot product ran a plain kernel.
    pub polyphase_kernel_calls: u64,
    /// Records whose dot products ran in an AMX kernel in this process
    /// ([`crate::kernels::amx`]): 0 where the CPU has no AMX or no kernel had one.
    pub amx_kernel_records: u64,
}

/// What the `beaver` evaluations of a run consumed at this party, measured: the same
/// quantities `irisc explain` predicts (per query: one execution of the store).
#[derive(Debug, Clone, Default, Serialize)]
pub struct BeaverStats {
    pub executions: u64,
    pub lanes: u64,
    /// Triples consumed (AND gates on the longest path, per lane, summed).
    pub triples: u64,
    /// Triples the standard protocol would have consumed for the same evaluations.
    pub triples_naive: u64,
    /// MaskGen material consumed: mask bits (M^0 and M^1), summed over lanes.
    pub mask_bits: u64,
    pub maskgen: Option<&'static str>,
}

/// The executor's figures for one op kind, summed over its calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct OpStats {
    pub calls: u64,
    pub seconds: f64,
    /// Communication rounds (the same at every party).
    pub rounds: u64,
    /// Payload bytes this party sent.
    pub bytes: u64,
}

impl OpStats {
    /// Adds one call.
    pub fn add(&mut self, seconds: f64, rounds: u64, bytes: u64) {
        self.calls += 1;
        self.seconds += seconds;
        self.rounds += rounds;
        self.bytes += bytes;
    }
}

impl Accounting {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        party: usize,
        program: &str,
        queries: usize,
        records: usize,
        threads: usize,
        cpu_ready_s: Option<f64>,
        t: &PhaseTimes,
        total: Duration,
        bytes_sent: u64,
        messages_sent: u64,
        rounds: u64,
    ) -> Accounting {
        let cpu_s = process_cpu_seconds();
        // The per-phase figures come from the same source: without it they are unknown, not 0.
        let measured = cpu_s.is_some();
        Accounting {
            party,
            program: program.to_string(),
            queries,
            records,
            threads,
            load_s: t.load.as_secs_f64(),
            connect_s: t.connect.as_secs_f64(),
            dot_s: t.dot.as_secs_f64(),
            dot_overlapped_s: t.dot_overlapped.as_secs_f64(),
            compare_s: t.compare.as_secs_f64(),
            dot_cpu_s: measured.then_some(t.dot_usage.cpu_s),
            compare_cpu_s: measured.then_some(t.compare_usage.cpu_s),
            dot_page_faults: measured.then_some(t.dot_usage.page_faults()),
            compare_page_faults: measured.then_some(t.compare_usage.page_faults()),
            total_s: total.as_secs_f64(),
            cpu_s,
            cpu_ready_s,
            peak_rss_bytes: peak_rss_bytes(),
            bytes_sent,
            messages_sent,
            rounds,
            ops: BTreeMap::new(),
            ops_cpu_s: BTreeMap::new(),
            gpu: None,
            beaver: None,
            kernel_nests: crate::kernels::nest::measurements(),
            polyphase_kernel_calls: crate::kernels::polyphase::calls(),
            amx_kernel_records: crate::kernels::amx::records(),
        }
    }

    /// The same with the GPU's figures (`None`: no GPU attached).
    pub fn with_gpu(self, gpu: Option<crate::gpu::GpuStats>) -> Accounting {
        Accounting { gpu, ..self }
    }

    /// The same with what the `beaver` evaluations consumed.
    pub fn with_beaver(self, beaver: Option<BeaverStats>) -> Accounting {
        Accounting { beaver, ..self }
    }

    /// The same with the per-op figures `ops`.
    pub fn with_ops(self, ops: BTreeMap<&'static str, OpStats>) -> Accounting {
        Accounting { ops, ..self }
    }

    /// The same with the CPU seconds per op kind from `usage` (none where the OS does not say).
    pub fn with_ops_cpu(self, usage: &BTreeMap<&'static str, Usage>) -> Accounting {
        let ops_cpu_s = match self.cpu_s {
            Some(_) => usage.iter().map(|(&op, u)| (op, u.cpu_s)).collect(),
            None => BTreeMap::new(),
        };
        Accounting { ops_cpu_s, ..self }
    }

    /// The human line: `irisc party N (prog): ... sent B bytes in M messages, R rounds`.
    pub fn line(&self) -> String {
        let mut s = format!(
            "irisc party {} ({}): {} queries x {} records, {} thread{}; load {:.3} s, connect {:.3} s, \
             dot phase {:.3} s, comparison phase {:.3} s, total {:.3} s; sent {} bytes in {} messages, {} rounds",
            self.party,
            self.program,
            self.queries,
            self.records,
            self.threads,
            if self.threads == 1 { "" } else { "s" },
            self.load_s,
            self.connect_s,
            self.dot_s,
            self.compare_s,
            self.total_s,
            self.bytes_sent,
            self.messages_sent,
            self.rounds,
        );
        if self.dot_overlapped_s > 0.0 {
            s.push_str(&format!(
                "; dot {:.3} s in the background, overlapped with comparisons",
                self.dot_overlapped_s
            ));
        }
        if let Some(b) = &self.beaver {
            s.push_str(&format!(
                "; beaver: {} executions x {} lanes, {} triples ({} naive), {} mask bits",
                b.executions, b.lanes, b.triples, b.triples_naive, b.mask_bits
            ));
        }
        for m in &self.kernel_nests {
            s.push_str(&format!(
                "; kernel loop nests measured at {} codes per call: {:.1} ns per dot product (compiler's), {:.1} (alternative), ran the {}",
                m.codes,
                m.first_ns_per_dot,
                m.second_ns_per_dot,
                match m.chosen {
                    crate::kernels::nest::Nest::First => "compiler's",
                    crate::kernels::nest::Nest::Second => "alternative",
                }
            ));
        }
        if self.polyphase_kernel_calls > 0 {
            s.push_str(&format!(
                "; {} polyphase kernel calls",
                self.polyphase_kernel_calls
            ));
        }
        if self.amx_kernel_records > 0 {
            s.push_str(&format!(
                "; {} records' dot products in AMX kernels",
                self.amx_kernel_records
            ));
        }
        if let Some(cpu) = self.cpu_s {
            s.push_str(&format!("; cpu {cpu:.3} s"));
        }
        if let Some(rss) = self.peak_rss_bytes {
            s.push_str(&format!(
                "; peak memory {:.1} MiB",
                rss as f64 / (1 << 20) as f64
            ));
        }
        s
    }

    /// Writes the JSON object to `path` (replacing it).
    pub fn write_json(&self, path: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text + "\n")
    }
}

/// User + system CPU time of this process so far.
pub fn process_cpu_seconds() -> Option<f64> {
    rusage().map(|u| Usage::from(&u).cpu_s)
}

/// The process's resource usage (every thread), or `None` where the OS does not say.
fn rusage() -> Option<libc::rusage> {
    crate::sys::rusage()
}

/// CPU time and page faults of the process: a reading ([`Usage::now`]), or what happened
/// between two ([`Usage::since`]), summed per phase ([`Usage::add`]).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Usage {
    /// User + system CPU seconds.
    pub cpu_s: f64,
    /// Faults served without I/O (a page already in memory, or a fresh zeroed one).
    pub minor_faults: u64,
    /// Faults that read the page from disk.
    pub major_faults: u64,
}

impl Usage {
    /// The process's usage so far (zero where the OS does not say).
    pub fn now() -> Usage {
        rusage().map_or_else(Usage::default, |u| Usage::from(&u))
    }

    /// What was used from `earlier` to this reading.
    pub fn since(&self, earlier: &Usage) -> Usage {
        Usage {
            cpu_s: (self.cpu_s - earlier.cpu_s).max(0.0),
            minor_faults: self.minor_faults.saturating_sub(earlier.minor_faults),
            major_faults: self.major_faults.saturating_sub(earlier.major_faults),
        }
    }

    pub fn add(&mut self, other: &Usage) {
        self.cpu_s += other.cpu_s;
        self.minor_faults += other.minor_faults;
        self.major_faults += other.major_faults;
    }

    pub fn page_faults(&self) -> u64 {
        self.minor_faults + self.major_faults
    }
}

impl From<&libc::rusage> for Usage {
    fn from(u: &libc::rusage) -> Usage {
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        Usage {
            cpu_s: tv(u.ru_utime) + tv(u.ru_stime),
            minor_faults: u.ru_minflt.max(0) as u64,
            major_faults: u.ru_majflt.max(0) as u64,
        }
    }
}

/// Peak resident set size: `VmHWM` of /proc/self/status where there is one, else getrusage's
/// `ru_maxrss` (kilobytes on Linux).
fn peak_rss_bytes() -> Option<u64> {
    if let Ok(status) = std::fs::read_to_string("/proc/self/status") {
        for line in status.lines() {
            if let Some(rest) = line.strip_prefix("VmHWM:") {
                let kb: u64 = rest.trim().trim_end_matches("kB").trim().parse().ok()?;
                return Some(kb * 1024);
            }
        }
    }
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as in process_cpu_seconds.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    Some(usage.ru_maxrss as u64 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Touching fresh pages and spinning shows up in a reading taken around them, and the
    /// per-phase sums reach the JSON.
    #[test]
    fn usage_counts_faults_and_cpu_between_readings() {
        // A fresh anonymous mapping: the allocator could hand out memory another test thread
        // already touched (then no fault is taken), the kernel cannot.
        const LEN: usize = 16 << 20;
        // SAFETY: a private anonymous mapping of LEN bytes, unmapped below; only written
        // within its bounds.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        assert_ne!(map, libc::MAP_FAILED);
        let before = Usage::now();
        // SAFETY: the mapping is LEN bytes, readable and writable, owned here.
        let buf = unsafe { std::slice::from_raw_parts_mut(map.cast::<u8>(), LEN) };
        for page in buf.chunks_mut(4096) {
            page[0] = 1;
        }
        let mut x = 0u64;
        let spin = std::time::Instant::now();
        while spin.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
        }
        let used = Usage::now().since(&before);
        assert!(
            used.minor_faults >= 1000,
            "{} faults for 4096 fresh pages",
            used.minor_faults
        );
        assert!(used.cpu_s > 0.0, "{used:?}");
        assert_eq!(
            Usage::default().since(&used),
            Usage::default(),
            "never negative"
        );
        let mut dot_usage = Usage::default();
        dot_usage.add(&used);
        dot_usage.add(&used);
        let times = PhaseTimes {
            dot_usage,
            ..PhaseTimes::default()
        };
        let a = Accounting::new(0, "p", 1, 1, 1, None, &times, Duration::ZERO, 0, 0, 0);
        assert_eq!(a.dot_cpu_s, Some(2.0 * used.cpu_s));
        assert_eq!(a.dot_page_faults, Some(2 * used.page_faults()));
        assert_eq!(a.compare_cpu_s, Some(0.0));
        let v = serde_json::to_value(&a).unwrap();
        assert_eq!(v["dot_page_faults"], 2 * used.page_faults());
        assert!(v["compare_cpu_s"].is_number());
        let per_op = BTreeMap::from([("batch_shamir_dot", used)]);
        let v = serde_json::to_value(a.with_ops_cpu(&per_op)).unwrap();
        assert_eq!(v["ops_cpu_s"]["batch_shamir_dot"], used.cpu_s);
        assert_eq!(
            v["ops"],
            serde_json::json!({}),
            "the per-op figures stay as they were"
        );
        assert!(v.get("gpu").is_none(), "no GPU, no key");
        let gpu = crate::gpu::GpuStats {
            device: "a GPU".into(),
            dot_calls: 3,
            ..Default::default()
        };
        let a = Accounting::new(0, "p", 1, 1, 1, None, &times, Duration::ZERO, 0, 0, 0);
        let v = serde_json::to_value(a.with_gpu(Some(gpu))).unwrap();
        assert_eq!(v["gpu"]["dot_calls"], 3);
        assert_eq!(v["gpu"]["cpu_dot_calls"], 0);
        // SAFETY: the mapping made above, no longer used.
        unsafe { libc::munmap(map, LEN) };
    }

    #[test]
    fn figures_from_the_os_are_present_and_plausible() {
        let _buf = vec![1u8; 8 << 20];
        let a = Accounting::new(
            1,
            "p",
            2,
            3,
            1,
            Some(0.0),
            &PhaseTimes::default(),
            Duration::from_millis(5),
            10,
            2,
            1,
        );
        let rss = a
            .peak_rss_bytes
            .expect("peak memory is readable on this OS");
        assert!(
            rss >= 8 << 20,
            "peak {rss} below the 8 MiB this test touched"
        );
        assert!(a.cpu_s.expect("cpu time readable") >= 0.0);
        let line = a.line();
        assert!(
            line.starts_with("irisc party 1 (p): 2 queries x 3 records, 1 thread;"),
            "{line}"
        );
        assert!(
            line.contains("sent 10 bytes in 2 messages, 1 rounds"),
            "{line}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        a.write_json(&path).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["bytes_sent"], 10);
        assert_eq!(v["rounds"], 1);
        assert_eq!(v["peak_rss_bytes"], rss);
        assert_eq!(v["dot_overlapped_s"], 0.0);
        assert_eq!(v["ops"], serde_json::json!({}));
        let mut msb = OpStats::default();
        msb.add(0.25, 15, 100);
        msb.add(0.5, 15, 60);
        let ops = BTreeMap::from([("msb", msb)]);
        a.clone().with_ops(ops).write_json(&path).unwrap();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v["ops"],
            serde_json::json!({"msb": {"calls": 2, "seconds": 0.75, "rounds": 30, "bytes": 160}})
        );
        assert_eq!(v["rounds"], 1, "the existing fields stay");
        assert!(!line.contains("background"), "{line}");
        let times = PhaseTimes {
            dot_overlapped: Duration::from_millis(1500),
            ..PhaseTimes::default()
        };
        let a = Accounting::new(1, "p", 2, 3, 1, None, &times, Duration::ZERO, 0, 0, 0);
        assert_eq!(a.dot_overlapped_s, 1.5);
        assert!(
            a.line()
                .contains("; dot 1.500 s in the background, overlapped with comparisons"),
            "{}",
            a.line()
        );
    }
}
