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
            total_s: total.as_secs_f64(),
            cpu_s: process_cpu_seconds(),
            cpu_ready_s,
            peak_rss_bytes: peak_rss_bytes(),
            bytes_sent,
            messages_sent,
            rounds,
            ops: BTreeMap::new(),
        }
    }

    /// The same with the per-op figures `ops`.
    pub fn with_ops(self, ops: BTreeMap<&'static str, OpStats>) -> Accounting {
        Accounting { ops, ..self }
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
    // SAFETY: getrusage writes one rusage struct into the zeroed value we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Some(tv(usage.ru_utime) + tv(usage.ru_stime))
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
