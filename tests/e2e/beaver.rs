//! The `beaver` family end to end: `irisc build --emit=circuit` and circuits made here, run by
//! `irisc circuit preprocess` and `irisc circuit run` as one OS process per party over TLS, two
//! and three parties. The opened outputs are compared with the circuit's cleartext semantics;
//! the bytes each party reports are those `irisc circuit explain` predicts; a store is consumed
//! once and a store of another party is refused.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use irisc_runtime::beaver::circuit::{Circuit, Gate, Netlist};
use irisc_runtime::beaver::party::read_circuit;

use crate::common::{base_port, example, irisc, irisc_ok, stderr, stdout_json, wait_bounded};

const LIMIT: Duration = Duration::from_secs(120);

fn keys(dir: &Path, parties: usize) -> PathBuf {
    let out = dir.join(format!("keys{parties}"));
    irisc_ok(&[
        "keys",
        "-o",
        out.to_str().unwrap(),
        "--parties",
        &parties.to_string(),
        "--base-port",
        &base_port().to_string(),
    ]);
    out.join("parties.toml")
}

/// Runs `irisc circuit ARGS(party)` at every party at once; returns each party's output.
fn phase(parties: usize, args: impl Fn(usize) -> Vec<String>) -> Vec<std::process::Output> {
    let children: Vec<_> = (0..parties)
        .map(|i| {
            irisc()
                .args(args(i))
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| wait_bounded(c, LIMIT))
        .collect()
}

fn who(i: usize, config: &Path, circuit: &Path, lanes: usize) -> Vec<String> {
    [
        "--party",
        &i.to_string(),
        "--config",
        config.to_str().unwrap(),
        "--circuit",
        circuit.to_str().unwrap(),
        "--lanes",
        &lanes.to_string(),
    ]
    .map(String::from)
    .to_vec()
}

struct Case<'a> {
    dir: &'a Path,
    circuit: PathBuf,
    parties: usize,
    lanes: usize,
    maskgen: Option<&'a str>,
}

/// Preprocesses, runs and checks one circuit; returns the stores (all consumed).
fn run_case(case: &Case, seed: u64) -> Vec<PathBuf> {
    let Case {
        dir,
        circuit,
        parties,
        lanes,
        maskgen,
    } = case;
    let (parties, lanes) = (*parties, *lanes);
    let config = keys(dir, parties);
    let c = read_circuit(circuit).unwrap();
    let stores: Vec<PathBuf> = (0..parties)
        .map(|i| dir.join(format!("p{i}.pre")))
        .collect();
    let outs = phase(parties, |i| {
        let mut a = vec!["circuit".into(), "preprocess".into()];
        a.extend(who(i, &config, circuit, lanes));
        a.extend(["-o".into(), stores[i].display().to_string()]);
        if let Some(m) = maskgen {
            a.extend(["--maskgen".into(), m.to_string()]);
        }
        a
    });
    for (i, o) in outs.iter().enumerate() {
        assert!(o.status.success(), "preprocess {i}: {}", stderr(o));
    }
    let pre: Vec<_> = outs.iter().map(|o| stdout_json(o).remove(0)).collect();
    std::fs::write(dir.join("pre0.json"), pre[0].to_string()).unwrap();

    // The owner's inputs, random per lane.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let bits: Vec<Vec<bool>> = (0..lanes)
        .map(|_| (0..c.num_inputs()).map(|_| rng.random()).collect())
        .collect();
    let inputs = dir.join("inputs.txt");
    let text: String = bits
        .iter()
        .map(|row| {
            row.iter()
                .map(|&b| if b { '1' } else { '0' })
                .collect::<String>()
                + "\n"
        })
        .collect();
    std::fs::write(&inputs, text).unwrap();
    let outs = phase(parties, |i| {
        let mut a = vec!["circuit".into(), "run".into()];
        a.extend(who(i, &config, circuit, lanes));
        a.extend(["--store".into(), stores[i].display().to_string()]);
        if i == 0 {
            a.extend(["--inputs".into(), inputs.display().to_string()]);
        }
        a
    });
    for (i, o) in outs.iter().enumerate() {
        assert!(o.status.success(), "run {i}: {}", stderr(o));
    }
    let online: Vec<_> = outs.iter().map(|o| stdout_json(o).remove(0)).collect();
    let want: Vec<String> = bits
        .iter()
        .map(|row| {
            c.eval(row)
                .iter()
                .map(|&b| if b { '1' } else { '0' })
                .collect()
        })
        .collect();
    for (i, r) in online.iter().enumerate() {
        let got: Vec<String> = r["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            got, want,
            "party {i} opened other outputs than the circuit computes"
        );
        assert_eq!(r["triples"], c.needed_triples() * lanes as u64);
        assert_eq!(r["triples_naive"], c.naive_triples() * lanes as u64);
    }

    // The accounting of the runs is what explain predicts, to the byte.
    let mut args = vec![
        "circuit".to_string(),
        "explain".into(),
        circuit.display().to_string(),
        "--json".into(),
        "--parties".into(),
        parties.to_string(),
        "--lanes".into(),
        lanes.to_string(),
    ];
    if let Some(m) = maskgen {
        args.extend(["--maskgen".into(), m.to_string()]);
    }
    let explain: serde_json::Value = serde_json::from_slice(
        &irisc_ok(&args.iter().map(String::as_str).collect::<Vec<_>>()).stdout,
    )
    .unwrap();
    let masked = &explain["protocols"][0];
    assert_eq!(masked["protocol"], "masked-triples");
    for (i, r) in pre.iter().enumerate() {
        assert_eq!(
            r["bytes_sent"], masked["preprocessing_bytes_per_party_total"],
            "party {i}"
        );
        assert_eq!(r["triples"], masked["triples"]);
        assert_eq!(r["mask_bits"], masked["mask_bits"]);
    }
    for (i, r) in online.iter().enumerate() {
        let key = if i == 0 {
            "online_bytes_input_owner"
        } else {
            "online_bytes_other_parties"
        };
        assert_eq!(r["bytes_sent"], masked[key], "party {i}");
        assert_eq!(r["rounds"], masked["rounds"]);
    }
    stores
}

/// cond(t1; cond(t2; f, g), cond(t2; g, h)) over random netlists: nested conditionals whose
/// branches differ in size.
fn nested_circuit(seed: u64) -> Circuit {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut branch = |gates: usize| {
        let inputs = 6u32;
        let mut gs = Vec::new();
        for g in 0..gates {
            let wires = inputs + g as u32;
            let (a, b) = (rng.random_range(0..wires), rng.random_range(0..wires));
            gs.push(match g % 3 {
                0 => Gate::And(a, b),
                1 => Gate::Xor(a, b),
                _ => Gate::Not(a),
            });
        }
        let w = inputs + gates as u32;
        Circuit::netlist(Netlist::new(inputs, gs, vec![w - 1, w - 2, w - 3]).unwrap())
    };
    let inner0 = Circuit::cond(branch(60), branch(9)).unwrap();
    let inner1 = Circuit::cond(branch(12), branch(90)).unwrap();
    Circuit::cond(inner0, inner1).unwrap()
}

#[test]
fn a_program_circuit_under_beaver_three_parties() {
    let dir = tempfile::tempdir().unwrap();
    let circuit = dir.path().join("tiered.circ");
    irisc_ok(&[
        "build",
        example("small_tiered.irs").to_str().unwrap(),
        "--emit=circuit",
        "-o",
        circuit.to_str().unwrap(),
    ]);
    let c = read_circuit(&circuit).unwrap();
    assert!(c.conditionals() > 0 && c.needed_triples() < c.naive_triples());
    let case = Case {
        dir: dir.path(),
        circuit: circuit.clone(),
        parties: 3,
        lanes: 70,
        maskgen: None,
    };
    let stores = run_case(&case, 1);

    // `irisc explain` of the program reports the same material for 70 records as the run took.
    let explain: serde_json::Value = serde_json::from_slice(
        &irisc_ok(&[
            "explain",
            example("small_tiered.irs").to_str().unwrap(),
            "--json",
            "--records",
            "70",
        ])
        .stdout,
    )
    .unwrap();
    let b = &explain["beaver"];
    let measured: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(dir.path().join("pre0.json"))
            .unwrap()
            .trim(),
    )
    .unwrap();
    assert_eq!(b["triples_longest_path"], measured["triples"]);
    assert_eq!(b["mask_bits"], measured["mask_bits"]);
    assert_eq!(b["preprocessing_bytes_per_party"], measured["bytes_sent"]);

    // Consumed: a second online run is refused at every party, before any link.
    let config = dir.path().join("keys3/parties.toml");
    let outs = phase(3, |i| {
        let mut a = vec!["circuit".into(), "run".into()];
        a.extend(who(i, &config, &circuit, 70));
        a.extend(["--store".into(), stores[i].display().to_string()]);
        a.extend([
            "--inputs".into(),
            dir.path().join("inputs.txt").display().to_string(),
        ]);
        a
    });
    for o in &outs {
        assert!(!o.status.success());
        assert!(stderr(o).contains("executions were used"), "{}", stderr(o));
    }
}

#[test]
fn nested_conditionals_two_parties_every_maskgen() {
    for (k, maskgen) in [None, Some("vs")].into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let circuit = dir.path().join("nested.circ");
        irisc_runtime::beaver::party::write_circuit(&circuit, &nested_circuit(k as u64)).unwrap();
        let case = Case {
            dir: dir.path(),
            circuit: circuit.clone(),
            parties: 2,
            lanes: 5,
            maskgen,
        };
        run_case(&case, 2 + k as u64);
    }
}

#[test]
fn another_partys_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let circuit = dir.path().join("nested.circ");
    irisc_runtime::beaver::party::write_circuit(&circuit, &nested_circuit(9)).unwrap();
    let config = keys(dir.path(), 3);
    let stores: Vec<PathBuf> = (0..3)
        .map(|i| dir.path().join(format!("p{i}.pre")))
        .collect();
    let outs = phase(3, |i| {
        let mut a = vec!["circuit".into(), "preprocess".into()];
        a.extend(who(i, &config, &circuit, 1));
        a.extend(["-o".into(), stores[i].display().to_string()]);
        a
    });
    assert!(outs.iter().all(|o| o.status.success()));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&stores[0]).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "a store is readable by its owner only");
    }
    let mut a = vec!["circuit", "run"];
    let w = who(0, &config, &circuit, 1);
    a.extend(w.iter().map(String::as_str));
    let s1 = stores[1].display().to_string();
    let inputs = dir.path().join("inputs.txt");
    std::fs::write(&inputs, "0".repeat(nested_circuit(9).num_inputs()) + "\n").unwrap();
    let inputs = inputs.display().to_string();
    a.extend(["--store", &s1, "--inputs", &inputs]);
    let out = irisc().args(&a).output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("belongs to party 1"),
        "{}",
        stderr(&out)
    );
}
