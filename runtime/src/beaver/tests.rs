//! Tests of the beaver family's steps over in-process links: Pi_MT against the circuit's
//! cleartext semantics ([`Circuit::eval`], which shares nothing with the schedule), TripleGen's
//! triples, MaskGen's masks, and the preprocessing store's refusals.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::net::memory::MemoryTransport;
use crate::net::Transport;

use super::circuit::{Circuit, Gate, Kind, Netlist};
use super::mask_gen::{mask_gen, MaskGenMethod};
use super::material::{words_for, Material};
use super::online::{evaluate, open};
use super::preprocess::{check_same_execution, preprocess};
use super::schedule::Schedule;
use super::store::{self, Expect, StoreHeader};
use super::triple_gen::triple_gen;
use super::{links::OtLinks, LocalRng, Parties};

/// Runs `f` for parties `0..p` on threads joined by in-memory links.
fn run_parties<R: Send + 'static>(
    p: usize,
    f: impl Fn(Parties, MemoryTransport) -> R + Send + Sync + 'static,
) -> Vec<R> {
    let f = std::sync::Arc::new(f);
    let handles: Vec<_> = MemoryTransport::triple()
        .into_iter()
        .take(p)
        .enumerate()
        .map(|(i, t)| {
            let f = f.clone();
            std::thread::spawn(move || f(Parties::new(i, p), t))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("party thread panicked"))
        .collect()
}

// ---------------------------------------------------------------- references

fn plain(c: &Circuit, inputs: &[bool]) -> Vec<bool> {
    c.eval(inputs)
}

/// Rounds the compiler's analysis predicts (its rules restated: AND-depth, sum, max,
/// `1 + max + mux`).
fn predicted_rounds(c: &Circuit) -> u64 {
    match c.kind() {
        Kind::Netlist(n) => u64::from(n.and_depth()),
        Kind::Seq(a, b) => predicted_rounds(a) + predicted_rounds(b),
        Kind::Par(a, b) => predicted_rounds(a).max(predicted_rounds(b)),
        Kind::Cond(a, b) => {
            1 + predicted_rounds(a).max(predicted_rounds(b)) + u64::from(c.num_outputs() > 0)
        }
    }
}

// ---------------------------------------------------------------- random circuits

fn random_netlist(rng: &mut ChaCha8Rng, inputs: usize, outputs: usize, gates: usize) -> Netlist {
    let mut gs = Vec::new();
    for g in 0..gates {
        let wires = (inputs + g) as u32;
        let pick = |rng: &mut ChaCha8Rng| rng.random_range(0..wires.max(1));
        gs.push(match rng.random_range(0..5) {
            0 | 1 => Gate::And(pick(rng), pick(rng)),
            2 | 3 => Gate::Xor(pick(rng), pick(rng)),
            _ => Gate::Not(pick(rng)),
        });
    }
    let wires = (inputs + gates) as u32;
    // Prefer late wires as outputs so the gates matter.
    let outs = (0..outputs)
        .map(|_| wires - 1 - rng.random_range(0..wires.min(4)))
        .collect();
    Netlist::new(inputs as u32, gs, outs).unwrap()
}

/// A circuit from `inputs` to `outputs` wires with conditionals nested up to `depth`.
fn random_circuit(rng: &mut ChaCha8Rng, inputs: usize, outputs: usize, depth: u32) -> Circuit {
    let leaf = |rng: &mut ChaCha8Rng| {
        let gates = rng.random_range(0..12);
        Circuit::netlist(random_netlist(rng, inputs, outputs, gates))
    };
    // Every circuit has an input (there are no constant gates); a conditional needs two.
    if depth == 0 || inputs < 2 {
        return leaf(rng);
    }
    match rng.random_range(0..4) {
        0 => leaf(rng),
        1 => {
            // The condition is input 0; the branches see the rest.
            let c0 = random_circuit(rng, inputs - 1, outputs, depth - 1);
            let c1 = random_circuit(rng, inputs - 1, outputs, depth - 1);
            Circuit::cond(c0, c1).unwrap()
        }
        2 => {
            let mid = rng.random_range(1..=4);
            let a = random_circuit(rng, inputs, mid, depth - 1);
            let b = random_circuit(rng, mid, outputs, depth - 1);
            Circuit::seq(a, b).unwrap()
        }
        _ if inputs >= 2 && outputs >= 2 => {
            let (ia, oa) = (rng.random_range(1..inputs), rng.random_range(1..outputs));
            let a = random_circuit(rng, ia, oa, depth - 1);
            let b = random_circuit(rng, inputs - ia, outputs - oa, depth - 1);
            Circuit::par(a, b)
        }
        _ => leaf(rng),
    }
}

/// XOR-shares `bits[input][lane]` among `p` parties: rows of words per party.
fn share_inputs(rng: &mut ChaCha8Rng, bits: &[Vec<bool>], p: usize, lanes: usize) -> Vec<Vec<u64>> {
    let w = words_for(lanes);
    let mut shares = vec![vec![0u64; bits.len() * w]; p];
    for (i, lane_bits) in bits.iter().enumerate() {
        for (l, &b) in lane_bits.iter().enumerate() {
            let mut acc = b;
            for share in shares.iter_mut().skip(1) {
                let r: bool = rng.random();
                acc ^= r;
                share[i * w + l / 64] |= u64::from(r) << (l % 64);
            }
            shares[0][i * w + l / 64] |= u64::from(acc) << (l % 64);
        }
    }
    shares
}

/// Runs preprocessing and Pi_MT at `p` parties; returns the reconstructed outputs per lane and
/// the rounds and triples of party 0.
fn run_pi_mt(
    circuit: &Circuit,
    p: usize,
    method: MaskGenMethod,
    inputs: Vec<Vec<u64>>,
    lanes: usize,
) -> (Vec<Vec<bool>>, u64, u64) {
    run_schedule(circuit, Schedule::new(circuit), p, method, inputs, lanes)
}

fn run_schedule(
    circuit: &Circuit,
    schedule: Schedule,
    p: usize,
    method: MaskGenMethod,
    inputs: Vec<Vec<u64>>,
    lanes: usize,
) -> (Vec<Vec<bool>>, u64, u64) {
    let outputs = circuit.num_outputs();
    let inputs = std::sync::Arc::new(inputs);
    let results = run_parties(p, move |parties, mut net| {
        let (batch, material) =
            preprocess(&mut net, parties, &schedule, lanes, method, 1).expect("preprocessing");
        check_same_execution(&mut net, parties, batch, 0).expect("same execution");
        let e = evaluate(
            &mut net,
            parties,
            &schedule,
            &material[0],
            &inputs[parties.me],
        )
        .expect("online phase");
        let opened = open(&mut net, parties, &e.outputs, lanes).expect("opening the outputs");
        (opened, e.rounds, e.triples)
    });
    let w = words_for(lanes);
    let (opened, rounds, triples) = results[0].clone();
    for r in &results {
        assert_eq!(r.0, opened, "every party opens the same outputs");
    }
    let per_lane = (0..lanes)
        .map(|l| {
            (0..outputs)
                .map(|o| opened[o * w + l / 64] >> (l % 64) & 1 == 1)
                .collect()
        })
        .collect();
    (per_lane, rounds, triples)
}

fn check_random_circuit(seed: u64, p: usize, method: MaskGenMethod, lanes: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let inputs = rng.random_range(1..7);
    let outputs = rng.random_range(1..4);
    let circuit = random_circuit(&mut rng, inputs, outputs, 3);
    let bits: Vec<Vec<bool>> = (0..inputs)
        .map(|_| (0..lanes).map(|_| rng.random()).collect())
        .collect();
    let shares = share_inputs(&mut rng, &bits, p, lanes);
    let (got, rounds, triples) = run_pi_mt(&circuit, p, method, shares.clone(), lanes);
    for (l, lane_out) in got.iter().enumerate() {
        let lane_in: Vec<bool> = bits.iter().map(|b| b[l]).collect();
        assert_eq!(
            *lane_out,
            plain(&circuit, &lane_in),
            "lane {l} of {circuit}"
        );
    }
    assert_eq!(rounds, predicted_rounds(&circuit), "{circuit}");
    assert_eq!(triples, circuit.needed_triples());
    // The baseline: the standard protocol computes the same on the naive count of triples.
    let (got, _, triples) = run_schedule(
        &circuit,
        Schedule::naive(&circuit),
        p,
        method,
        shares,
        lanes,
    );
    for (l, lane_out) in got.iter().enumerate() {
        let lane_in: Vec<bool> = bits.iter().map(|b| b[l]).collect();
        assert_eq!(
            *lane_out,
            plain(&circuit, &lane_in),
            "standard, lane {l} of {circuit}"
        );
    }
    assert_eq!(triples, circuit.naive_triples());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Pi_MT == the circuit's plaintext semantics, two parties, seed MaskGen (Fig. 7).
    #[test]
    fn pi_mt_two_parties_equals_plaintext(seed in any::<u64>(), lanes in 1usize..70) {
        check_random_circuit(seed, 2, MaskGenMethod::Seed2p, lanes);
    }

    /// Three parties, the three-party seed MaskGen (Sect. 6.2).
    #[test]
    fn pi_mt_three_parties_equals_plaintext(seed in any::<u64>(), lanes in 1usize..70) {
        check_random_circuit(seed, 3, MaskGenMethod::Seed3p, lanes);
    }

    /// Any p's MaskGen (Figs. 5 and 6) at two and three parties.
    #[test]
    fn pi_mt_with_maskgen_vs_equals_plaintext(seed in any::<u64>(), three in any::<bool>()) {
        check_random_circuit(seed, if three { 3 } else { 2 }, MaskGenMethod::Vs, 5);
    }
}

/// A nested conditional whose branches differ a lot in size: the count is the longest path.
#[test]
fn triples_are_the_longest_path_of_nested_conditionals() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let big = || Circuit::netlist(random_netlist(&mut ChaCha8Rng::seed_from_u64(1), 3, 2, 40));
    let small = Circuit::netlist(random_netlist(&mut rng, 3, 2, 5));
    let inner = Circuit::cond(big(), small.clone()).unwrap(); // 4 inputs
    let outer = Circuit::cond(inner, Circuit::netlist(random_netlist(&mut rng, 4, 2, 3))).unwrap();
    let expected = {
        let b = big().needed_triples();
        let s = small.needed_triples();
        b.max(s) + 2
    };
    assert_eq!(
        outer.needed_triples(),
        expected + 2,
        "the inner conditional is the longer branch"
    );
    assert!(outer.naive_triples() > outer.needed_triples());
    for t in [[false, false], [false, true], [true, false], [true, true]] {
        let lanes = 3;
        let bits: Vec<Vec<bool>> = std::iter::once(vec![t[0]; lanes])
            .chain(std::iter::once(vec![t[1]; lanes]))
            .chain((0..3).map(|_| (0..lanes).map(|_| rng.random()).collect()))
            .collect();
        let shares = share_inputs(&mut rng, &bits, 3, lanes);
        let (got, _, triples) = run_pi_mt(&outer, 3, MaskGenMethod::Seed3p, shares, lanes);
        assert_eq!(triples, outer.needed_triples());
        for (l, out) in got.iter().enumerate() {
            let lane_in: Vec<bool> = bits.iter().map(|b| b[l]).collect();
            assert_eq!(*out, plain(&outer, &lane_in));
        }
    }
}

// ---------------------------------------------------------------- TripleGen and MaskGen

fn reconstruct(shares: &[Vec<u64>]) -> Vec<u64> {
    let mut out = shares[0].clone();
    for s in &shares[1..] {
        for (o, v) in out.iter_mut().zip(s) {
            *o ^= v;
        }
    }
    out
}

#[test]
fn every_generated_triple_is_valid() {
    for p in [2, 3] {
        let lanes = 100;
        let count = 300;
        let shares = run_parties(p, move |parties, mut net| {
            let mut rng = LocalRng::new().unwrap();
            let mut links = OtLinks::setup(&mut net, parties).unwrap();
            triple_gen(&mut net, &mut links, &mut rng, count, lanes).unwrap()
        });
        let a = reconstruct(&shares.iter().map(|t| t.a.clone()).collect::<Vec<_>>());
        let b = reconstruct(&shares.iter().map(|t| t.b.clone()).collect::<Vec<_>>());
        let c = reconstruct(&shares.iter().map(|t| t.c.clone()).collect::<Vec<_>>());
        for i in 0..a.len() {
            assert_eq!(a[i] & b[i], c[i], "p = {p}, word {i}");
        }
        // a and b are uniform: about half of the lanes' bits are ones.
        let ones: u32 = a.iter().map(|w| w.count_ones()).sum();
        let total = (count as usize * lanes) as f64;
        assert!(
            (f64::from(ones) / total - 0.5).abs() < 0.01,
            "{ones} of {total}"
        );
    }
}

#[test]
fn maskgen_masks_one_string_with_zeros_and_the_other_uniformly() {
    for (p, method) in [
        (2, MaskGenMethod::Seed2p),
        (3, MaskGenMethod::Seed3p),
        (2, MaskGenMethod::Vs),
        (3, MaskGenMethod::Vs),
    ] {
        let lanes = 256;
        let rows = [200u64, 1, 0];
        let masks = run_parties(p, move |parties, mut net| {
            let mut rng = LocalRng::new().unwrap();
            let mut links = OtLinks::setup(&mut net, parties).unwrap();
            mask_gen(&mut net, &mut links, &mut rng, method, &rows, lanes).unwrap()
        });
        let w = words_for(lanes);
        let mut s_ones = 0u32;
        let mut uniform_ones = 0u64;
        let mut uniform_bits = 0u64;
        for (c, &r) in rows.iter().enumerate() {
            let s = reconstruct(&masks.iter().map(|m| m[c].s.clone()).collect::<Vec<_>>());
            let m0 = reconstruct(&masks.iter().map(|m| m[c].m0.clone()).collect::<Vec<_>>());
            let m1 = reconstruct(&masks.iter().map(|m| m[c].m1.clone()).collect::<Vec<_>>());
            s_ones += s.iter().map(|x| x.count_ones()).sum::<u32>();
            for l in 0..lanes {
                let s_l = s[l / 64] >> (l % 64) & 1 == 1;
                let (zero, rand) = if s_l { (&m1, &m0) } else { (&m0, &m1) };
                for row in 0..r as usize {
                    let at = row * w + l / 64;
                    assert_eq!(zero[at] >> (l % 64) & 1, 0, "{method:?} p={p}: M^s is zero");
                    uniform_ones += rand[at] >> (l % 64) & 1;
                    uniform_bits += 1;
                }
            }
        }
        // s over 3 x 256 lanes and M^(1-s) over 256 x 201 bits: balanced.
        let s_frac = f64::from(s_ones) / (3.0 * lanes as f64);
        assert!((s_frac - 0.5).abs() < 0.1, "{method:?}: s ones {s_frac}");
        let u_frac = uniform_ones as f64 / uniform_bits as f64;
        assert!(
            (u_frac - 0.5).abs() < 0.01,
            "{method:?}: M^(1-s) ones {u_frac}"
        );
    }
}

#[test]
fn a_maskgen_protocol_for_other_party_counts_is_refused() {
    let errs = run_parties(2, |parties, mut net| {
        let mut rng = LocalRng::new().unwrap();
        let mut links = OtLinks::setup(&mut net, parties).unwrap();
        mask_gen(
            &mut net,
            &mut links,
            &mut rng,
            MaskGenMethod::Seed3p,
            &[2],
            3,
        )
        .unwrap_err()
        .to_string()
    });
    assert!(
        errs[0].contains("not a protocol for 2 parties"),
        "{}",
        errs[0]
    );
}

// ---------------------------------------------------------------- the store

fn small_circuit() -> Circuit {
    let and2 = Circuit::netlist(Netlist::new(2, vec![Gate::And(0, 1)], vec![2]).unwrap());
    let xor2 = Circuit::netlist(Netlist::new(2, vec![Gate::Xor(0, 1)], vec![2]).unwrap());
    Circuit::cond(and2, xor2).unwrap()
}

fn materials(circuit: &Circuit, lanes: usize, executions: u32) -> Vec<([u8; 16], Vec<Material>)> {
    let schedule = Schedule::new(circuit);
    run_parties(3, move |parties, mut net| {
        preprocess(
            &mut net,
            parties,
            &schedule,
            lanes,
            MaskGenMethod::Seed3p,
            executions,
        )
        .unwrap()
    })
}

fn header_for(
    circuit: &Circuit,
    party: u32,
    lanes: u64,
    batch: [u8; 16],
    executions: u32,
) -> StoreHeader {
    let schedule = Schedule::new(circuit);
    StoreHeader {
        party,
        parties: 3,
        lanes,
        method: MaskGenMethod::Seed3p,
        fingerprint: circuit.fingerprint(),
        batch,
        executions,
        triples: schedule.triples,
        rows: schedule.conds.iter().map(|c| c.mask_rows()).collect(),
    }
}

#[test]
fn a_store_is_consumed_once_and_refuses_what_does_not_fit() {
    let dir = tempfile::tempdir().unwrap();
    let circuit = small_circuit();
    let schedule = Schedule::new(&circuit);
    let rows: Vec<u64> = schedule.conds.iter().map(|c| c.mask_rows()).collect();
    let made = materials(&circuit, 70, 2);
    let path = dir.path().join("p0.pre");
    let header = header_for(&circuit, 0, 70, made[0].0, 2);
    store::write(&path, &header, &made[0].1).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "owner-only");
    }
    let fp = circuit.fingerprint();
    let expect = Expect {
        party: 0,
        parties: 3,
        fingerprint: &fp,
        lanes: 70,
        triples: schedule.triples,
        rows: &rows,
    };
    let first = store::take(&path, expect).unwrap();
    assert_eq!(first.execution, 0);
    assert!(
        first.material == made[0].1[0],
        "the stored material comes back"
    );
    let second = store::take(&path, expect).unwrap();
    assert_eq!(second.execution, 1);
    let err = store::take(&path, expect).unwrap_err().to_string();
    assert!(err.contains("all 2 of its executions were used"), "{err}");

    // Fresh store for the other refusals.
    store::write(&path, &header, &made[0].1).unwrap();
    let other = Circuit::seq(
        small_circuit(),
        Circuit::netlist(Netlist::new(1, vec![Gate::Not(0)], vec![1]).unwrap()),
    )
    .unwrap();
    let other_fp = other.fingerprint();
    let err = store::take(
        &path,
        Expect {
            fingerprint: &other_fp,
            ..expect
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("another circuit"), "{err}");
    let err = store::take(&path, Expect { party: 1, ..expect })
        .unwrap_err()
        .to_string();
    assert!(err.contains("belongs to party 0"), "{err}");
    let err = store::take(
        &path,
        Expect {
            triples: schedule.triples + 1,
            ..expect
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("too little material"), "{err}");
    let err = store::take(
        &path,
        Expect {
            lanes: 71,
            ..expect
        },
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("70 lanes"), "{err}");
    // The refusals consumed nothing.
    assert_eq!(store::read_header(&path).unwrap().1, 0);

    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(dir.path().join("cut.pre"), &bytes[..bytes.len() - 8]).unwrap();
    // Readable by group and others (the default mode of a new file here): refused as such.
    let err = store::take(&dir.path().join("cut.pre"), expect)
        .unwrap_err()
        .to_string();
    assert!(err.contains("other users can access it"), "{err}");
    owner_only(&dir.path().join("cut.pre"));
    let err = store::take(&dir.path().join("cut.pre"), expect)
        .unwrap_err()
        .to_string();
    assert!(err.contains("truncated or damaged"), "{err}");
    // A damaged last execution: the first is still whole and taken, the second is refused
    // when it is reached (each execution carries its own checksum and is read alone).
    let mut flipped = bytes.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let flip = dir.path().join("flip.pre");
    std::fs::write(&flip, &flipped).unwrap();
    owner_only(&flip);
    assert!(store::take(&flip, expect).unwrap().material == made[0].1[0]);
    let err = store::take(&flip, expect).unwrap_err().to_string();
    assert!(err.contains("checksum of execution 1"), "{err}");
    // A damaged first execution is refused, and not marked used.
    // The body starts after the 96 fixed header bytes, the rows, the header checksum and `used`.
    let body_at = 96 + 8 * rows.len() + 32 + 4;
    let mut flipped = bytes.clone();
    flipped[body_at] ^= 1;
    std::fs::write(&flip, &flipped).unwrap();
    let err = store::take(&flip, expect).unwrap_err().to_string();
    assert!(err.contains("checksum of execution 0"), "{err}");
    assert_eq!(store::read_header(&flip).unwrap().1, 0);
    // A damaged header (here: the lane count) is refused before anything else.
    let mut flipped = bytes.clone();
    flipped[16] ^= 1;
    std::fs::write(&flip, &flipped).unwrap();
    let err = store::take(&flip, expect).unwrap_err().to_string();
    assert!(err.contains("header checksum"), "{err}");
    std::fs::write(dir.path().join("foreign.pre"), b"{\"id\": 1}\n").unwrap();
    owner_only(&dir.path().join("foreign.pre"));
    let err = store::take(&dir.path().join("foreign.pre"), expect)
        .unwrap_err()
        .to_string();
    assert!(err.contains("not an irisc preprocessing store"), "{err}");
}

#[test]
fn parties_holding_different_executions_stop_before_computing() {
    let errs = run_parties(3, |parties, mut net| {
        let execution = u32::from(parties.me == 2);
        check_same_execution(&mut net, parties, [9; 16], execution)
            .err()
            .map(|e| e.to_string())
    });
    assert!(
        errs[0]
            .as_deref()
            .unwrap_or("")
            .contains("party 2 took execution 1"),
        "{errs:?}"
    );
    let errs = run_parties(2, |parties, mut net| {
        check_same_execution(&mut net, parties, [parties.me as u8; 16], 0)
            .err()
            .map(|e| e.to_string())
    });
    assert!(
        errs[0].as_deref().unwrap_or("").contains("another batch"),
        "{errs:?}"
    );
}

#[test]
fn online_refuses_unfit_material_before_opening_anything() {
    let circuit = small_circuit();
    let made = materials(&circuit, 4, 1);
    let bigger = Circuit::seq(
        circuit.clone(),
        Circuit::netlist(Netlist::new(1, vec![Gate::And(0, 0)], vec![1]).unwrap()),
    )
    .unwrap();
    let schedule = Schedule::new(&bigger);
    let mut net = MemoryTransport::triple().into_iter().next().unwrap();
    let err = evaluate(
        &mut net,
        Parties::new(0, 3),
        &schedule,
        &made[0].1[0],
        &[0; 3],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("too few triples"), "{err}");
    assert_eq!(net.bytes_sent(), 0);
}

/// The accounting the explain figures come from: bytes one party sends in the preprocessing and
/// in the evaluation equal the prediction of [`super::cost`] exactly, for every MaskGen protocol.
#[test]
fn sent_bytes_equal_the_cost_prediction() {
    use super::cost::{evaluation_bytes, preprocessing_bytes};
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let circuit = loop {
        let c = random_circuit(&mut rng, 5, 2, 3);
        if c.conditionals() >= 2 && c.needed_triples() > 0 {
            break c;
        }
    };
    for (p, method) in [
        (2, MaskGenMethod::Seed2p),
        (3, MaskGenMethod::Seed3p),
        (2, MaskGenMethod::Vs),
        (3, MaskGenMethod::Vs),
    ] {
        for lanes in [1usize, 130] {
            let schedule = Schedule::new(&circuit);
            let predicted = preprocessing_bytes(&schedule, lanes, p, method, 2).total();
            let predicted_eval = evaluation_bytes(&schedule, lanes, p);
            let s = schedule.clone();
            let inputs = circuit.num_inputs();
            let sent = run_parties(p, move |parties, mut net| {
                let (_, material) = preprocess(&mut net, parties, &s, lanes, method, 2).unwrap();
                let pre = net.bytes_sent();
                let zeros = vec![0u64; inputs * words_for(lanes)];
                evaluate(&mut net, parties, &s, &material[1], &zeros).unwrap();
                (pre, net.bytes_sent() - pre)
            });
            for (party, &(pre, eval)) in sent.iter().enumerate() {
                assert_eq!(
                    pre, predicted,
                    "{method:?} p={p} lanes={lanes} party {party}: preprocessing"
                );
                assert_eq!(
                    eval, predicted_eval,
                    "{method:?} p={p} lanes={lanes} party {party}: evaluation"
                );
            }
        }
    }
}

/// Makes `path` readable by its owner only, as irisc creates its secret files.
fn owner_only(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}
