//! `cosine`: paper 002's setting (Table 5) under irisc's two-server family `fss2`: 1:1
//! authentications and 1:N identification of a 192-dimensional voice embedding at
//! `tau = 0.34` (`examples/voice_cosine.irs`), every role its own process (the executables
//! `irisc build --protocol fss2 [--malicious M]` writes, the servers running the generated SS.IP
//! kernel), on loopback and through the user-space relay at the paper's LAN (0.47 ms,
//! 1.8 Gbit/s) and WAN (152 ms, 130 Mbit/s); the same program on the three-party `rep3` backend
//! on loopback in the same run; FAR/FRR of the servers' decisions against the plaintext
//! fixed-point decision (which they must equal on every pair) and the float one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use serde_json::{json, Value};

use irisc::driver::keys;
use irisc::driver::plaintext::cosine_holds;
use irisc::driver::run as party_run;
use irisc_runtime::io::ndjson_values::{quantise, read_embeddings};

use super::netsim::{NetProfile, Relays};
use super::plot;
use super::report::{MachineInfo, Measurement, Report};
use super::triples::irisc_binary;
use super::BenchOptions;

/// Paper 002, Section 6.2.
pub const PAPER_LAN: NetProfile = NetProfile {
    name: "lan 0.47 ms / 1.8 Gbit/s",
    rtt: Duration::from_micros(470),
    bits_per_s: 1.8e9,
};
pub const PAPER_WAN: NetProfile = NetProfile {
    name: "wan 152 ms / 130 Mbit/s",
    rtt: Duration::from_millis(152),
    bits_per_s: 130e6,
};

/// Table 5: (row, LAN ms, WAN ms, KB per party).
const TABLE5: [(&str, f64, f64, f64); 4] = [
    ("spdz2k", 74.0, 8020.0, 1789.0),
    ("m=10", 57.0, 457.0, 3.5),
    ("m=20", 102.0, 500.0, 6.9),
    ("m=40", 201.0, 628.0, 13.72),
];

const TAU: f64 = 0.34;

pub fn about(o: &BenchOptions) -> String {
    format!(
        "paper 002's Table 5 setting: fss2 (two servers + dealer) 1:1 and 1:N (N = {}) on loopback, LAN 0.47 ms and WAN 152 ms; rep3 on loopback; FAR/FRR vs plaintext",
        sizes(o)
            .iter()
            .map(|n| super::thousands(*n))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Gallery sizes of the 1:N runs (`--records N`: that size alone).
fn sizes(o: &BenchOptions) -> Vec<usize> {
    if let Some(n) = o.records {
        vec![n]
    } else if o.quick {
        vec![200]
    } else {
        vec![1000, 100_000]
    }
}

/// What one fss2 run measured.
#[derive(Debug, Clone, serde::Serialize)]
struct Cell {
    /// 0: semi-honest; else the malicious variant's m.
    m: u32,
    setting: String,
    records: usize,
    queries: usize,
    /// Client: from sending its masked input to holding the decisions, median.
    latency_ms: f64,
    latency_p90_ms: f64,
    /// Queries one after the other over one connection.
    authentications_per_s: f64,
    /// The relay's own error: how late it delivered messages after their due time (mean and
    /// maximum, microseconds; 0 on loopback).
    relay_late_us: f64,
    relay_late_max_us: f64,
    /// Server to server and server to client, per query, mean of the two servers.
    bytes_per_server: f64,
    bytes_to_other_server: f64,
    /// The servers' evaluation from the masked input to the output sent, median.
    server_ms: f64,
    dealer_seconds: f64,
    material_bytes_per_server: u64,
}

fn gen(
    irisc: &Path,
    out: &Path,
    speakers: usize,
    per: usize,
    seed: u64,
    noise: &str,
) -> Result<()> {
    let st = Command::new(irisc)
        .args([
            "gen",
            "--kind",
            "embedding",
            "--speakers",
            &speakers.to_string(),
        ])
        .args([
            "--per-speaker",
            &per.to_string(),
            "--seed",
            &seed.to_string(),
            "--noise",
            noise,
        ])
        .arg("-o")
        .arg(out)
        .stdout(Stdio::null())
        .status()?;
    if !st.success() {
        bail!("irisc gen failed");
    }
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn p90(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get((v.len() * 9) / 10).copied().unwrap_or(f64::NAN)
}

/// The role executables `irisc build --protocol fss2 [--malicious M]` writes for `program`
/// (built once per variant into `work`): server, dealer, client.
fn role_executables(
    irisc: &Path,
    work: &Path,
    program: &Path,
    malicious: Option<u32>,
) -> Result<[PathBuf; 3]> {
    let dir = work.join(format!("exe-m{}", malicious.unwrap_or(0)));
    let out = dir.join("voice");
    let paths = ["server", "dealer", "client"].map(|r| dir.join(format!("voice-{r}")));
    if paths.iter().all(|p| p.is_file()) {
        return Ok(paths);
    }
    std::fs::create_dir_all(&dir)?;
    let mut c = Command::new(irisc);
    c.arg("build")
        .arg(program)
        .args(["--protocol", "fss2", "--quiet", "-o"])
        .arg(&out);
    if let Some(m) = malicious {
        c.args(["--malicious", &m.to_string()]);
    }
    let o = c.stderr(Stdio::inherit()).output()?;
    if !o.status.success() {
        bail!("irisc build --protocol fss2 failed");
    }
    Ok(paths)
}

/// Runs `exe` with `args`; its last stdout line as JSON.
fn quiet_exe(exe: &Path, args: &[&str]) -> Result<Value> {
    let out = Command::new(exe)
        .args(args)
        .stderr(Stdio::inherit())
        .output()?;
    if !out.status.success() {
        bail!("{} {} failed", exe.display(), args.first().unwrap_or(&""));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(serde_json::from_str(text.lines().last().unwrap_or("{}"))?)
}

/// One fss2 run of the compiled role executables: dealer, two servers and the client, the links
/// shaped by `net`.
#[allow(clippy::too_many_arguments)]
fn measure(
    irisc: &Path,
    work: &Path,
    program: &Path,
    gallery: &Path,
    queries: &Path,
    count: usize,
    net: Option<NetProfile>,
    setting: &str,
    malicious: Option<u32>,
) -> Result<(Cell, Vec<Vec<u64>>)> {
    let [server_exe, dealer_exe, client_exe] = role_executables(irisc, work, program, malicious)?;
    let dealer = work.join("dealer");
    let star = if malicious.is_some() { "-star" } else { "" };
    let d = |name: String| dealer.join(name).display().to_string();
    quiet_exe(
        &dealer_exe,
        &[
            "enroll",
            "--gallery",
            &gallery.display().to_string(),
            "--out",
            &dealer.display().to_string(),
        ],
    )?;
    let dealt = quiet_exe(
        &dealer_exe,
        &[
            "deal",
            "--secret",
            &d(format!("dealer.secret{star}")),
            "--authentications",
            &count.to_string(),
            "--out",
            &dealer.display().to_string(),
        ],
    )?;
    let config = keys::generate_keys(&work.join("keys"), party_run::free_base_port()?, true)?;
    super::netsim::LATENESS.reset();
    let relays = match net {
        Some(p) => Some(Relays::start(&config, p)?),
        None => None,
    };
    let configs: Vec<PathBuf> = match &relays {
        Some(r) => r.configs.clone(),
        None => vec![config.clone(); 3],
    };
    let report = work.join("client.json");
    // voice_cosine.irs: p1 supplies the query (the client), p0 and p2 are the servers.
    let spawn = |exe: &Path, args: Vec<String>| {
        Command::new(exe)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    let server = |p: usize, s: usize| -> Vec<String> {
        vec![
            "--party".into(),
            p.to_string(),
            "--config".into(),
            configs[p].display().to_string(),
            "--gallery".into(),
            d(format!("server{s}.gallery{star}")),
            "--material".into(),
            d(format!("server{s}.material{star}")),
            "--queries".into(),
            count.to_string(),
        ]
    };
    let s0 = spawn(&server_exe, server(0, 0))?;
    let s1 = spawn(&server_exe, server(2, 1))?;
    let mut client: Vec<String> = vec![
        "--party".into(),
        "1".into(),
        "--config".into(),
        configs[1].display().to_string(),
        "--queries".into(),
        queries.display().to_string(),
        "--report".into(),
        report.display().to_string(),
    ];
    if malicious.is_some() {
        client.push("--material".into());
        client.push(d("client.material-star".into()));
    }
    let c = spawn(&client_exe, client)?;
    let outs = [s0, c, s1].map(|ch| ch.wait_with_output());
    drop(relays);
    let (_, relay_late_us, relay_late_max_us) = super::netsim::LATENESS.read();
    let mut reports = Vec::new();
    for (i, o) in outs.into_iter().enumerate() {
        let o = o?;
        if !o.status.success() {
            bail!(
                "fss2 {setting}: party {i} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        reports.push(o.stdout);
    }
    let servers: Vec<Value> = [&reports[0], &reports[2]]
        .iter()
        .map(|r| serde_json::from_str(String::from_utf8_lossy(r).lines().last().unwrap_or("{}")))
        .collect::<Result<_, _>>()?;
    let matches: Vec<Vec<u64>> = String::from_utf8_lossy(&reports[1])
        .lines()
        .map(|l| -> Result<Vec<u64>> {
            let v: Value = serde_json::from_str(l)?;
            Ok(v["ids"]
                .as_array()
                .context("ids")?
                .iter()
                .filter_map(Value::as_u64)
                .collect())
        })
        .collect::<Result<_>>()?;
    let client: Value = serde_json::from_str(&std::fs::read_to_string(&report)?)?;
    let mut lat: Vec<f64> = client["seconds_per_query"]
        .as_array()
        .context("client report")?
        .iter()
        .filter_map(Value::as_f64)
        .map(|s| s * 1e3)
        .collect();
    let total: f64 = lat.iter().sum::<f64>() / 1e3;
    let mut server_ms: Vec<f64> = servers
        .iter()
        .flat_map(|s| {
            s["seconds_per_query"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|v| v.as_f64())
        .map(|s| s * 1e3)
        .collect();
    let per_server = |key: &str| {
        servers
            .iter()
            .map(|s| s[key].as_f64().unwrap_or(0.0))
            .sum::<f64>()
            / 2.0
            / count as f64
    };
    let records = servers[0]["records"].as_u64().unwrap_or(0) as usize;
    let cell = Cell {
        m: malicious.unwrap_or(0),
        setting: setting.into(),
        records,
        queries: count,
        latency_ms: median(&mut lat),
        latency_p90_ms: p90(&mut lat),
        authentications_per_s: count as f64 / total.max(1e-9),
        bytes_per_server: per_server("bytes_to_server") + per_server("bytes_to_client"),
        bytes_to_other_server: per_server("bytes_to_server"),
        server_ms: median(&mut server_ms),
        dealer_seconds: dealt["seconds"].as_f64().unwrap_or(f64::NAN),
        material_bytes_per_server: dealt["bytes_per_authentication"].as_u64().unwrap_or(0),
        relay_late_us,
        relay_late_max_us,
    };
    let _ = std::fs::remove_dir_all(&dealer);
    Ok((cell, matches))
}

/// The first `n` lines of `from` into `to`.
fn head(from: &Path, to: &Path, n: usize) -> Result<()> {
    let text = std::fs::read_to_string(from)?;
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(n)
        .collect();
    std::fs::write(to, lines.join("\n") + "\n")?;
    Ok(())
}

/// `rep3` on the same program and data, on loopback: seconds per query as `irisc run` reports
/// the three parties' run (connection and loading included), divided by the queries.
fn rep3(irisc: &Path, program: &Path, gallery: &Path, queries: &Path, count: usize) -> Result<f64> {
    let out = Command::new(irisc)
        .args(["run", &program.display().to_string()])
        .args([
            "--db",
            &gallery.display().to_string(),
            "--query",
            &queries.display().to_string(),
        ])
        .output()?;
    if !out.status.success() {
        bail!("rep3 run failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let secs = err
        .lines()
        .find_map(|l| l.strip_prefix("three parties answered in "))
        .and_then(|r| r.split(' ').next())
        .and_then(|v| v.parse::<f64>().ok())
        .context("rep3 timing line")?;
    Ok(secs / count as f64)
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let irisc = irisc_binary()?;
    let program = irisc::driver::fss2::fss2_program(&repo_example("voice_cosine.irs"))?;
    let prog_path = repo_example("voice_cosine.irs");
    let work = dir.join("cosine-work");
    std::fs::create_dir_all(&work)?;
    // Voices: 500 speakers x 2 utterances enrolled at most; queries are other utterances of
    // the first speakers (genuine pairs) against everyone else (impostor pairs).
    let noise = "1.25";
    let big = sizes(opts).into_iter().max().unwrap_or(1000);
    let gallery_all = work.join("gallery.ndjson");
    gen(&irisc, &gallery_all, big.div_ceil(2), 2, 11, noise)?;
    let queries_all = work.join("queries.ndjson");
    let q_count = if opts.quick { 6 } else { 200 };
    gen(&irisc, &queries_all, q_count, 1, 12, noise)?;

    let settings: [(&str, Option<NetProfile>); 3] = [
        ("loopback", None),
        ("lan", Some(PAPER_LAN)),
        ("wan", Some(PAPER_WAN)),
    ];
    let mut cells = Vec::new();
    // 1:1: one enrolled template (speaker 0's first utterance), a query per speaker.
    let one = work.join("one.ndjson");
    head(&gallery_all, &one, 1)?;
    for (name, net) in settings {
        let k = match (opts.quick, name) {
            (true, _) => 4,
            (false, "wan") => 10,
            (false, "lan") => 100,
            _ => 200,
        };
        let q = work.join(format!("q1-{name}.ndjson"));
        head(&queries_all, &q, k)?;
        eprintln!("cosine: 1:1 {name}, {k} authentications");
        let (cell, _) = measure(&irisc, &work, &prog_path, &one, &q, k, net, name, None)?;
        cells.push(cell);
        // The malicious variant, m = 10, 20, 40 (Table 5's rows).
        for m in [10u32, 20, 40] {
            let k = k.min(if name == "wan" { 5 } else { 50 });
            let q = work.join(format!("q1m-{name}.ndjson"));
            head(&queries_all, &q, k)?;
            eprintln!("cosine: 1:1 {name}, malicious m = {m}, {k} authentications");
            let (cell, _) = measure(&irisc, &work, &prog_path, &one, &q, k, net, name, Some(m))?;
            cells.push(cell);
        }
    }
    // 1:N.
    let mut far_frr = None;
    for n in sizes(opts) {
        let g = work.join(format!("gallery-{n}.ndjson"));
        head(&gallery_all, &g, n)?;
        for (name, net) in settings {
            let k = match (opts.quick, name, n) {
                (true, _, _) => 2,
                (false, "loopback", 1000) => 200,
                (false, _, 1000) => 3,
                _ => 1,
            };
            let q = work.join(format!("qn-{n}-{name}.ndjson"));
            head(&queries_all, &q, k)?;
            eprintln!("cosine: 1:{n} {name}, {k} queries");
            let (cell, matches) = measure(&irisc, &work, &prog_path, &g, &q, k, net, name, None)?;
            if name == "loopback" && far_frr.is_none() {
                far_frr = Some(error_rates(&g, &q, &matches, &program.plan)?);
            }
            cells.push(cell);
            // The malicious variant 1:N, up to N = 1 000: its material is m x 3.5 KB per
            // template per authentication and server (140 MB for m = 40 at N = 1 000; at
            // N = 100 000 it would be 3.5-14 GB per authentication, more than this machine holds
            // for a batch).
            if n <= 1000 {
                for m in [10u32, 20, 40] {
                    let k = if opts.quick { 1 } else { 2 };
                    let q = work.join(format!("qnm-{n}-{name}.ndjson"));
                    head(&queries_all, &q, k)?;
                    eprintln!("cosine: 1:{n} {name}, malicious m = {m}, {k} queries");
                    let (cell, _) =
                        measure(&irisc, &work, &prog_path, &g, &q, k, net, name, Some(m))?;
                    cells.push(cell);
                }
            }
        }
    }
    // rep3 on the same programs, loopback.
    let mut rep3_cells = Vec::new();
    for (n, k) in [
        (1usize, if opts.quick { 4 } else { 20 }),
        (sizes(opts)[0], if opts.quick { 2 } else { 3 }),
    ] {
        let g = work.join(format!("rep3-g{n}.ndjson"));
        head(&gallery_all, &g, n)?;
        let q = work.join(format!("rep3-q{n}.ndjson"));
        head(&queries_all, &q, k)?;
        eprintln!("cosine: rep3 1:{n} loopback, {k} queries");
        let s = rep3(&irisc, &prog_path, &g, &q, k)?;
        rep3_cells.push(json!({"records": n, "queries": k, "seconds_per_query": s}));
    }
    let _ = std::fs::remove_dir_all(&work);

    let mut measurements = Vec::new();
    for c in &cells {
        let extra: BTreeMap<String, Value> = match serde_json::to_value(c)? {
            Value::Object(m) => m.into_iter().collect(),
            _ => BTreeMap::new(),
        };
        let variant = if c.m == 0 {
            "semi-honest".to_string()
        } else {
            format!("malicious m={}", c.m)
        };
        measurements.push(Measurement {
            name: format!("fss2 {variant} 1:{} {} latency", c.records, c.setting),
            value: c.latency_ms,
            unit: "ms (median, client)".into(),
            extra,
        });
    }
    for r in &rep3_cells {
        measurements.push(Measurement {
            name: format!("rep3 1:{} loopback seconds per query", r["records"]),
            value: r["seconds_per_query"].as_f64().unwrap_or(f64::NAN) * 1e3,
            unit:
                "ms per query (irisc run's party time / queries, connection and loading included)"
                    .into(),
            extra: BTreeMap::new(),
        });
    }
    if let Some(f) = &far_frr {
        measurements.push(Measurement {
            name: "FAR/FRR fss2 vs plaintext".into(),
            value: f["fss2_disagreements_with_fixed_point"]
                .as_f64()
                .unwrap_or(f64::NAN),
            unit: "pairs where fss2 differs from the fixed-point decision".into(),
            extra: match f {
                Value::Object(m) => m.clone().into_iter().collect(),
                _ => BTreeMap::new(),
            },
        });
    }
    let references = TABLE5
        .iter()
        .flat_map(|&(row, lan, wan, kb)| {
            [
                (format!("paper Table 5 {row} LAN"), lan, "ms"),
                (format!("paper Table 5 {row} WAN"), wan, "ms"),
                (
                    format!("paper Table 5 {row} communication"),
                    kb,
                    "KB per party",
                ),
            ]
        })
        .map(|(name, value, unit)| Measurement {
            name,
            value,
            unit: unit.into(),
            extra: BTreeMap::new(),
        })
        .collect();
    let report = Report {
        section: "cosine".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config: json!({
            "program": "examples/voice_cosine.irs (dim 192, scale 2^8, tau = 0.34)",
            "plan": {"ring": "Z_2^64", "ring_bits_needed": program.ring.ring_bits, "truncation_rho": 0, "dcf_domain_bits": 64},
            "roles": "the executables of irisc build --protocol fss2 [--malicious M]: dealer (enroll + deal), server x 2, client; one process each; TLS",
            "networks": {"lan": PAPER_LAN.name, "wan": PAPER_WAN.name, "shaping": "user-space relay (delay + rate) on every link"},
            "latency": "client: from sending its masked input to holding the decisions (its input masks arrive with the previous answer)",
            "targets": "1:1 m=10: LAN <= 2 ms, WAN <= two round trips + 10 ms (314 ms), <= 3.5 KB per server",
            "rep3": rep3_cells,
        }),
        measurements,
        references,
        notes: vec![
            "the malicious variant (m = 10/20/40) runs 1:1 and 1:N up to N = 1 000 (its material at N = 100 000 would be 3.5-14 GB per authentication and server); its input masks travel ahead of the queries as in the semi-honest pipeline, in Z_2^112 (16 bytes a component)".into(),
            "bytes per server count everything a server sends per query: to the other server (two rounds) and to the client (its decisions and the next query's input mask)".into(),
        ],
    };
    let json_path = report.write(dir)?;
    let png = dir.join("cosine.png");
    let groups: Vec<String> = ["loopback", "lan", "wan"]
        .iter()
        .map(|s| format!("1:1 {s}"))
        .collect();
    let ours = |m: u32| -> Vec<f64> {
        ["loopback", "lan", "wan"]
            .iter()
            .map(|s| {
                cells
                    .iter()
                    .find(|c| c.records == 1 && c.setting == *s && c.m == m)
                    .map_or(f64::NAN, |c| c.latency_ms)
            })
            .collect()
    };
    plot::grouped_bars(
        &png,
        "1:1 cosine authentication latency (paper 002, Table 5)",
        "ms",
        &groups,
        &[
            ("irisc fss2 semi-honest".into(), ours(0)),
            ("irisc fss2 malicious m=10".into(), ours(10)),
            ("irisc fss2 malicious m=40".into(), ours(40)),
            ("paper m=10 (malicious)".into(), vec![f64::NAN, 57.0, 457.0]),
        ],
        &[],
    )?;
    Ok(vec![json_path, png])
}

fn repo_example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("examples")
        .join(name)
}

/// FAR and FRR of the servers' decisions on every (query, template) pair, next to the plaintext
/// fixed-point and float decisions; genuine pairs are those of one speaker (`id / 1000`).
fn error_rates(
    gallery: &Path,
    queries: &Path,
    matches: &[Vec<u64>],
    plan: &irisc_runtime::fss2::plan::CosinePlan,
) -> Result<Value> {
    let g = read_embeddings(gallery, Some(plan.dim)).map_err(anyhow::Error::msg)?;
    let q = read_embeddings(queries, Some(plan.dim)).map_err(anyhow::Error::msg)?;
    let fixed =
        |v: &[f64]| -> Vec<i64> { v.iter().map(|&x| quantise(x, plan.scale_bits)).collect() };
    let (mut genuine, mut impostor) = (0u64, 0u64);
    let mut rejected = [0u64; 3];
    let mut accepted = [0u64; 3];
    let (mut differ_fixed, mut differ_float) = (0u64, 0u64);
    for (qi, qr) in q.iter().enumerate() {
        let qx = fixed(&qr.embedding);
        for gr in &g {
            let same = qr.id / 1000 == gr.id / 1000;
            let mpc = matches[qi].contains(&gr.id);
            let fx = cosine_holds(
                &qx,
                &fixed(&gr.embedding),
                plan.tau_negative,
                plan.tau_num,
                plan.tau_den,
                plan.strict,
            );
            let dot: f64 = qr
                .embedding
                .iter()
                .zip(&gr.embedding)
                .map(|(a, b)| a * b)
                .sum();
            let n = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>().sqrt();
            let fl = dot / (n(&qr.embedding) * n(&gr.embedding)) >= TAU;
            differ_fixed += u64::from(mpc != fx);
            differ_float += u64::from(mpc != fl);
            for (k, d) in [mpc, fx, fl].into_iter().enumerate() {
                if same {
                    rejected[k] += u64::from(!d);
                } else {
                    accepted[k] += u64::from(d);
                }
            }
            if same {
                genuine += 1;
            } else {
                impostor += 1;
            }
        }
    }
    let rate = |x: u64, of: u64| {
        if of == 0 {
            f64::NAN
        } else {
            100.0 * x as f64 / of as f64
        }
    };
    Ok(json!({
        "pairs": genuine + impostor,
        "genuine_pairs": genuine,
        "impostor_pairs": impostor,
        "fss2_far_percent": rate(accepted[0], impostor),
        "fss2_frr_percent": rate(rejected[0], genuine),
        "fixed_point_far_percent": rate(accepted[1], impostor),
        "fixed_point_frr_percent": rate(rejected[1], genuine),
        "float_far_percent": rate(accepted[2], impostor),
        "float_frr_percent": rate(rejected[2], genuine),
        "fss2_disagreements_with_fixed_point": differ_fixed,
        "fss2_disagreements_with_float": differ_float,
    }))
}
