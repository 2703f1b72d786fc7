//! Section `triples`: the random-circuit experiment of paper 004 (Masked Triples, Sect. 7.2 and
//! 8.2, Fig. 10): a conditional with b = 2..16 branches of random circuits, p = 2 and 3 parties
//! as separate `irisc circuit` processes over TLS, masked triples (Pi_MT) against the standard
//! triple-based protocol, each with its preprocessing (TripleGen by OT, MaskGen) and online
//! phase. Reported per party: bytes sent in each phase, seconds, triples, rounds; the ratio of
//! total communication; the paper's Fig. 10 next to it.
//!
//! The circuit generator follows Sect. 7.2: per branch, the AND and XOR gates are spread over the
//! layers by a uniformly random composition (RANCOM, balls in cells); each gate reads two wires
//! drawn uniformly from the pool of wires assigned so far (branch inputs and earlier layers'
//! outputs); a layer's outputs join the pool when the layer is complete. b = 2^k branches are
//! selected by k secret condition bits, as nested two-way conditionals.

use anyhow::{anyhow, bail, Context, Result};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use irisc::driver::{keys, run as party_run};
use irisc_runtime::beaver::circuit::{Circuit, Gate, Netlist};
use irisc_runtime::beaver::party::write_circuit;

use super::plot;
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;

/// The circuit parameters of Sect. 8 (10 layers, 30 000 AND and 30 000 XOR gates per branch,
/// 128 input and output wires per branch).
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Shape {
    pub layers: usize,
    pub ands: usize,
    pub xors: usize,
    pub io: usize,
}

pub const PAPER: Shape = Shape {
    layers: 10,
    ands: 30_000,
    xors: 30_000,
    io: 128,
};

const QUICK: Shape = Shape {
    layers: 3,
    ands: 300,
    xors: 300,
    io: 8,
};

/// Fig. 10 (2PC, per-party MB): branches, Pi_MT, standard ("Broadcast").
const FIG10: [(usize, f64, f64); 4] = [
    (2, 0.57, 1.11),
    (4, 0.58, 2.19),
    (8, 0.61, 4.10),
    (16, 0.67, 8.19),
];

/// A uniformly random composition of `n` into `parts` non-negative parts (balls in cells).
fn rancom(rng: &mut ChaCha8Rng, n: usize, parts: usize) -> Vec<usize> {
    let mut bars: Vec<usize> = (0..n + parts - 1).collect();
    bars.shuffle(rng);
    let mut cuts: Vec<usize> = bars[..parts - 1].to_vec();
    cuts.sort_unstable();
    let mut out = Vec::with_capacity(parts);
    let mut prev: isize = -1;
    for &c in &cuts {
        out.push((c as isize - prev - 1) as usize);
        prev = c as isize;
    }
    out.push((n + parts - 1) - (prev + 1) as usize);
    out
}

/// One branch (Sect. 7.2).
pub fn random_branch(rng: &mut ChaCha8Rng, s: Shape) -> Netlist {
    let ands = rancom(rng, s.ands, s.layers);
    let xors = rancom(rng, s.xors, s.layers);
    let mut gates = Vec::with_capacity(s.ands + s.xors);
    let mut pool = s.io as u32;
    for layer in 0..s.layers {
        let mut kinds: Vec<bool> = std::iter::repeat_n(true, ands[layer])
            .chain(std::iter::repeat_n(false, xors[layer]))
            .collect();
        kinds.shuffle(rng);
        for is_and in kinds {
            let (a, b) = (rng.random_range(0..pool), rng.random_range(0..pool));
            gates.push(if is_and {
                Gate::And(a, b)
            } else {
                Gate::Xor(a, b)
            });
        }
        pool = s.io as u32 + gates.len() as u32;
    }
    let wires = s.io as u32 + gates.len() as u32;
    let outputs = (wires - s.io.min(wires as usize) as u32..wires).collect();
    Netlist::new(s.io as u32, gates, outputs).expect("operands come from the pool")
}

/// `branches` (a power of two) random branches under nested conditionals.
pub fn random_conditional(rng: &mut ChaCha8Rng, branches: usize, s: Shape) -> Circuit {
    if branches <= 1 {
        return Circuit::netlist(random_branch(rng, s));
    }
    let half = branches / 2;
    let c0 = random_conditional(rng, half, s);
    let c1 = random_conditional(rng, half, s);
    Circuit::cond(c0, c1).expect("equal shapes")
}

/// The `irisc` executable the parties run: `IRISC_BIN`, else next to this executable (or one
/// folder up, for test harnesses in `deps/`).
pub fn irisc_binary() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("IRISC_BIN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()?;
    let name = format!("irisc{}", std::env::consts::EXE_SUFFIX);
    for dir in exe.ancestors().skip(1).take(2) {
        let candidate = dir.join(&name);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    bail!(
        "the `irisc` executable is not next to {} (build it: cargo build --release -p irisc, or set IRISC_BIN)",
        exe.display()
    )
}

/// Runs one phase at every party as its own process; returns each party's JSON report.
fn run_phase(irisc: &Path, p: usize, args: impl Fn(usize) -> Vec<String>) -> Result<Vec<Value>> {
    let children: Vec<_> = (0..p)
        .map(|i| {
            Command::new(irisc)
                .args(args(i))
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .with_context(|| format!("starting {}", irisc.display()))
        })
        .collect::<Result<_>>()?;
    let mut out = Vec::new();
    for (i, child) in children.into_iter().enumerate() {
        let o = child.wait_with_output()?;
        if !o.status.success() {
            bail!(
                "party {i} failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        let line = String::from_utf8_lossy(&o.stdout);
        out.push(
            serde_json::from_str(line.trim())
                .with_context(|| format!("party {i} printed {line:?}"))?,
        );
    }
    Ok(out)
}

/// What one (parties, branches, protocol) run cost, per party.
#[derive(Debug, Clone, serde::Serialize)]
struct Cell {
    parties: usize,
    branches: usize,
    protocol: &'static str,
    triples: u64,
    triples_naive: u64,
    mask_bits: u64,
    maskgen: Option<String>,
    /// Mean over the parties of bytes sent.
    preprocess_bytes: f64,
    online_bytes: f64,
    /// Slowest party.
    preprocess_seconds: f64,
    online_seconds: f64,
    rounds: u64,
}

impl Cell {
    fn total_mb(&self) -> f64 {
        (self.preprocess_bytes + self.online_bytes) / 1e6
    }
}

fn mean(v: &[Value], key: &str) -> f64 {
    v.iter()
        .map(|r| r[key].as_f64().unwrap_or(f64::NAN))
        .sum::<f64>()
        / v.len() as f64
}

fn max(v: &[Value], key: &str) -> f64 {
    v.iter()
        .map(|r| r[key].as_f64().unwrap_or(f64::NAN))
        .fold(0.0, f64::max)
}

#[allow(clippy::too_many_arguments)]
fn measure(
    irisc: &Path,
    work: &Path,
    config: &Path,
    p: usize,
    branches: usize,
    circuit: &Circuit,
    circuit_file: &Path,
    standard: bool,
    inputs: &Path,
) -> Result<(Cell, Vec<String>)> {
    let protocol = if standard {
        "standard"
    } else {
        "masked-triples"
    };
    let common = |i: usize| {
        let mut a: Vec<String> = vec![
            "--party".into(),
            i.to_string(),
            "--config".into(),
            config.display().to_string(),
            "--circuit".into(),
            circuit_file.display().to_string(),
        ];
        if standard {
            a.push("--standard".into());
        }
        a
    };
    let store = |i: usize| work.join(format!("{protocol}-b{branches}-p{p}-{i}.pre"));
    let pre = run_phase(irisc, p, |i| {
        let mut a = vec!["circuit".into(), "preprocess".into()];
        a.extend(common(i));
        a.extend(["-o".into(), store(i).display().to_string()]);
        a
    })?;
    let online = run_phase(irisc, p, |i| {
        let mut a = vec!["circuit".into(), "run".into()];
        a.extend(common(i));
        a.extend(["--store".into(), store(i).display().to_string()]);
        if i == 0 {
            a.extend(["--inputs".into(), inputs.display().to_string()]);
        }
        a
    })?;
    for i in 0..p {
        let _ = std::fs::remove_file(store(i));
    }
    let outputs: Vec<String> = online[0]["outputs"]
        .as_array()
        .ok_or_else(|| anyhow!("party 0 printed no outputs"))?
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect();
    let cell = Cell {
        parties: p,
        branches,
        protocol,
        triples: pre[0]["triples"].as_u64().unwrap_or(0),
        triples_naive: circuit.naive_triples(),
        mask_bits: pre[0]["mask_bits"].as_u64().unwrap_or(0),
        maskgen: pre[0]["maskgen"].as_str().map(str::to_string),
        preprocess_bytes: mean(&pre, "bytes_sent"),
        online_bytes: mean(&online, "bytes_sent"),
        preprocess_seconds: max(&pre, "seconds"),
        online_seconds: max(&online, "seconds"),
        rounds: online[0]["rounds"].as_u64().unwrap_or(0),
    };
    Ok((cell, outputs))
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let shape = if opts.quick { QUICK } else { PAPER };
    let branch_counts: &[usize] = if opts.quick { &[2, 4] } else { &[2, 4, 8, 16] };
    let irisc = irisc_binary()?;
    let work = dir.join("triples-work");
    std::fs::create_dir_all(&work)?;
    let mut rng = ChaCha8Rng::seed_from_u64(2021);
    let mut cells = Vec::new();
    for p in [2usize, 3] {
        let config = keys::generate_keys_for(
            &work.join(format!("keys-{p}")),
            p,
            party_run::free_base_port()?,
            true,
        )?;
        for &b in branch_counts {
            eprintln!("triples: {p} parties, {b} branches");
            let circuit = random_conditional(&mut rng, b, shape);
            let file = work.join(format!("b{b}.circ"));
            write_circuit(&file, &circuit)?;
            let bits: Vec<bool> = (0..circuit.num_inputs()).map(|_| rng.random()).collect();
            let inputs = work.join("inputs.txt");
            std::fs::write(
                &inputs,
                bits.iter()
                    .map(|&x| if x { '1' } else { '0' })
                    .collect::<String>()
                    + "\n",
            )?;
            let want: String = circuit
                .eval(&bits)
                .iter()
                .map(|&x| if x { '1' } else { '0' })
                .collect();
            for standard in [false, true] {
                let (cell, outputs) = measure(
                    &irisc, &work, &config, p, b, &circuit, &file, standard, &inputs,
                )?;
                if outputs != [want.clone()] {
                    bail!("{} with {p} parties, {b} branches: the parties opened {outputs:?}, the circuit computes {want}", cell.protocol);
                }
                if cell.triples
                    != if standard {
                        circuit.naive_triples()
                    } else {
                        circuit.needed_triples()
                    }
                {
                    bail!(
                        "{}: {} triples preprocessed, expected the circuit's count",
                        cell.protocol,
                        cell.triples
                    );
                }
                cells.push(cell);
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);

    let mut measurements = Vec::new();
    for c in &cells {
        let mut extra: BTreeMap<String, Value> = match serde_json::to_value(c)? {
            Value::Object(m) => m.into_iter().collect(),
            _ => BTreeMap::new(),
        };
        extra.insert("total_mb".into(), json!(c.total_mb()));
        measurements.push(Measurement {
            name: format!(
                "{} p={} b={} total per-party communication",
                c.protocol, c.parties, c.branches
            ),
            value: c.total_mb(),
            unit: "MB per party (preprocessing + online)".into(),
            extra,
        });
    }
    for p in [2usize, 3] {
        for &b in branch_counts {
            let find = |proto: &str| {
                cells
                    .iter()
                    .find(|c| c.parties == p && c.branches == b && c.protocol == proto)
            };
            if let (Some(m), Some(s)) = (find("masked-triples"), find("standard")) {
                measurements.push(Measurement {
                    name: format!("p={p} b={b} standard / masked-triples total communication"),
                    value: s.total_mb() / m.total_mb(),
                    unit: "ratio".into(),
                    extra: BTreeMap::from([
                        (
                            "preprocessing_ratio".into(),
                            json!(s.preprocess_bytes / m.preprocess_bytes),
                        ),
                        (
                            "triples_ratio".into(),
                            json!(s.triples as f64 / m.triples as f64),
                        ),
                    ]),
                });
            }
        }
    }
    let references = FIG10
        .iter()
        .flat_map(|&(b, mt, std)| {
            [
                Measurement {
                    name: format!("paper Fig. 10 p=2 b={b} Pi_MT"),
                    value: mt,
                    unit: "MB per party".into(),
                    extra: BTreeMap::new(),
                },
                Measurement {
                    name: format!("paper Fig. 10 p=2 b={b} standard (Broadcast)"),
                    value: std,
                    unit: "MB per party".into(),
                    extra: BTreeMap::new(),
                },
            ]
        })
        .collect();
    let report = Report {
        section: "triples".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config: json!({
            "circuit": shape,
            "branches": branch_counts,
            "parties": [2, 3],
            "lanes": 1,
            "what": "irisc circuit preprocess + run, one process per party over TLS on loopback; per-party bytes are the mean over parties of bytes sent",
            "target": ">= 12x less total communication than the standard protocol at 16 branches (paper 004, Sect. 8.2)",
        }),
        measurements,
        references,
        notes: vec![
            "preprocessing: base OTs (Chou-Orlandi) and IKNP extension per ordered pair, TripleGen by OT, MaskGen seed-2p / seed-3p".into(),
        ],
    };
    let json_path = report.write(dir)?;
    let png = dir.join("triples.png");
    let groups: Vec<String> = [2usize, 3]
        .iter()
        .flat_map(|&p| branch_counts.iter().map(move |&b| format!("p={p} b={b}")))
        .collect();
    let series_of = |proto: &str| -> Vec<f64> {
        [2usize, 3]
            .iter()
            .flat_map(|&p| branch_counts.iter().map(move |&b| (p, b)))
            .map(|(p, b)| {
                cells
                    .iter()
                    .find(|c| c.parties == p && c.branches == b && c.protocol == proto)
                    .map_or(f64::NAN, Cell::total_mb)
            })
            .collect()
    };
    plot::grouped_bars(
        &png,
        "Per-party communication, random circuits (paper 004, Fig. 10)",
        "MB per party",
        &groups,
        &[
            ("masked triples".into(), series_of("masked-triples")),
            ("standard triples".into(), series_of("standard")),
        ],
        &[],
    )?;
    Ok(vec![json_path, png])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rancom_is_a_composition() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for (n, parts) in [(0, 1), (5, 1), (10, 3), (30_000, 10)] {
            let c = rancom(&mut rng, n, parts);
            assert_eq!(c.len(), parts);
            assert_eq!(c.iter().sum::<usize>(), n);
        }
    }

    #[test]
    fn random_branches_have_the_asked_gates_and_depth_at_most_the_layers() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let s = Shape {
            layers: 4,
            ands: 500,
            xors: 300,
            io: 16,
        };
        let n = random_branch(&mut rng, s);
        assert_eq!(n.and_count(), 500);
        assert_eq!(n.gates().len(), 800);
        assert!(n.and_depth() <= 4);
        let c = random_conditional(&mut rng, 8, s);
        assert_eq!(c.num_inputs(), 3 + 16);
        // Three levels of conditionals, one multiplexer layer (16 ANDs) each on the path.
        assert_eq!(c.needed_triples(), 500 + 3 * 16);
        assert_eq!(c.naive_triples(), 8 * 500 + 7 * 16);
    }

    /// The quick section runs every cell as separate processes and checks the opened outputs
    /// against the plaintext circuit (it fails otherwise); masked triples use fewer triples
    /// and less communication than the standard protocol.
    #[test]
    fn quick_section_runs_both_protocols_as_processes() {
        // `cargo test --workspace` builds the irisc executable before any test runs.
        irisc_binary().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            out: dir.path().to_path_buf(),
            sections: vec!["triples".into()],
            quick: true,
            progress: false,
            records: None,
            gpu_dot_records: None,
            store_dirs: Vec::new(),
            gpu_record_chunk: None,
            serve_kills: None,
            serve_threshold_placement: None,
            repeat: 1,
        };
        let files = run(&opts, dir.path()).unwrap();
        assert!(files.iter().any(|f| f.ends_with("triples.png")));
        let report: Report =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        let ratios: Vec<f64> = report
            .measurements
            .iter()
            .filter(|m| m.unit == "ratio")
            .map(|m| m.value)
            .collect();
        assert_eq!(ratios.len(), 4);
        assert!(ratios.iter().all(|&r| r > 1.0), "{ratios:?}");
    }
}
