//! The JSON reports: one `DIR/<section>.json` per section, with the machine it ran on and every
//! measurement with its unit.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The machine and build a report was measured with.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MachineInfo {
    /// `model name` (x86) or `CPU part`/`Hardware` from /proc/cpuinfo, or "unknown".
    pub cpu_model: String,
    /// CPUs this process may use (`available_parallelism`).
    pub logical_cpus: usize,
    /// Distinct (physical id, core id) pairs in /proc/cpuinfo; the logical count if absent.
    pub physical_cores: usize,
    /// `cpu MHz` of the first CPU in /proc/cpuinfo (the current clock, not a guaranteed one).
    pub cpu_mhz: Option<f64>,
    /// The SIMD/ISA flags of interest that /proc/cpuinfo lists.
    pub isa_flags: Vec<String>,
    pub arch: String,
    pub rustc_version: String,
    pub irisc_version: String,
    /// UTC, ISO 8601.
    pub date: String,
}

/// One measured figure.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub name: String,
    pub value: f64,
    pub unit: String,
    /// Parameters and derived figures (each self-describing by name).
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_json::Value>,
}

/// A section's report.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub section: String,
    pub quick: bool,
    pub machine: MachineInfo,
    /// How the figures were taken (free-form but structured).
    pub config: serde_json::Value,
    pub measurements: Vec<Measurement>,
    /// Figures from elsewhere (papers, targets) for comparison; not measured here.
    pub references: Vec<Measurement>,
    pub notes: Vec<String>,
}

impl Report {
    /// Writes `dir/<section>.json` (pretty); returns its path.
    pub fn write(&self, dir: &Path) -> anyhow::Result<PathBuf> {
        let path = dir.join(format!("{}.json", self.section));
        std::fs::write(&path, serde_json::to_string_pretty(self)? + "\n")?;
        Ok(path)
    }
}

const FLAGS: &[&str] = &[
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "bmi2",
    "avx512f",
    "avx512bw",
    "avx512vl",
    "avx512dq",
    "avx512ifma",
    "avx512_vnni",
    "avx512_bf16",
    "avx_vnni",
    "amx_int8",
    "asimd",
    "asimddp",
    "sve",
    "sve2",
    "i8mm",
];

impl MachineInfo {
    pub fn collect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        Self::from_cpuinfo(&cpuinfo)
    }

    pub fn from_cpuinfo(cpuinfo: &str) -> Self {
        let field = |key: &str| {
            cpuinfo.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let cpu_model = field("model name")
            .or_else(|| field("Hardware"))
            .or_else(|| field("CPU part").map(|p| format!("CPU part {p}")))
            .unwrap_or_else(|| "unknown".into());
        let flags = field("flags")
            .or_else(|| field("Features"))
            .unwrap_or_default();
        let have: Vec<&str> = flags.split_whitespace().collect();
        let isa_flags = FLAGS
            .iter()
            .filter(|f| have.contains(f))
            .map(|f| f.to_string())
            .collect();
        let logical_cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut cores = std::collections::BTreeSet::new();
        let mut phys = String::new();
        for l in cpuinfo.lines() {
            if let Some((k, v)) = l.split_once(':') {
                match k.trim() {
                    "physical id" => phys = v.trim().to_string(),
                    "core id" => {
                        cores.insert((phys.clone(), v.trim().to_string()));
                    }
                    _ => {}
                }
            }
        }
        MachineInfo {
            cpu_model,
            logical_cpus,
            physical_cores: if cores.is_empty() {
                logical_cpus
            } else {
                cores.len()
            },
            cpu_mhz: field("cpu MHz").and_then(|v| v.parse().ok()),
            isa_flags,
            arch: std::env::consts::ARCH.into(),
            rustc_version: env!("IRISC_RUSTC_VERSION").into(),
            irisc_version: env!("CARGO_PKG_VERSION").into(),
            date: utc_now(),
        }
    }

    pub fn has(&self, flag: &str) -> bool {
        self.isa_flags.iter().any(|f| f == flag)
    }
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_fields_and_date() {
        let info = MachineInfo::from_cpuinfo(
            "processor\t: 0\nmodel name\t: Test CPU\ncpu MHz\t\t: 2000.5\nphysical id\t: 0\n\
             core id\t\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni\n\nprocessor\t: 1\n\
             physical id\t: 0\ncore id\t\t: 1\n",
        );
        assert_eq!(info.cpu_model, "Test CPU");
        assert_eq!(info.cpu_mhz, Some(2000.5));
        assert_eq!(info.physical_cores, 2);
        assert_eq!(info.isa_flags, ["avx2", "avx512f", "avx512_vnni"]);
        let d = utc_now();
        assert_eq!(d.len(), 20, "{d}");
        assert!(d.starts_with("20") && d.ends_with('Z'), "{d}");
    }
}
