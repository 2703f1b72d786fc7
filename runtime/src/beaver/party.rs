//! One party of a `beaver` run, as its own OS process over the TLS links: the preprocessing
//! phase (TripleGen and MaskGen, written to this party's store) and the online phase (the store's
//! next execution, the owner's inputs shared, Pi_MT, the outputs opened).
//!
//! Both phases report what they cost at this party, measured: bytes and messages sent, rounds,
//! triples and mask bits, seconds.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::net::session::Session;
use crate::net::{PartiesConfig, TlsTransport, Transport};

use super::circuit::Circuit;
use super::mask_gen::MaskGenMethod;
use super::material::{words_for, Needs};
use super::online::{evaluate, open};
use super::preprocess::{check_same_execution, Preprocessing};
use super::schedule::Schedule;
use super::store::{self, Expect, StoreHeader, StoreWriter};
use super::{BeaverError, LocalRng, Parties};

/// The circuit file: magic bytes, then [`Circuit::encode`].
const CIRCUIT_MAGIC: &[u8; 8] = b"IRSCIRC1";

/// Writes `c` as a circuit file.
pub fn write_circuit(path: &Path, c: &Circuit) -> std::io::Result<()> {
    let mut bytes = CIRCUIT_MAGIC.to_vec();
    bytes.extend(c.encode());
    std::fs::write(path, bytes)
}

/// Reads a circuit file, with a message that names the file when it is not one.
pub fn read_circuit(path: &Path) -> Result<Circuit, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let body = bytes
        .strip_prefix(CIRCUIT_MAGIC)
        .ok_or_else(|| format!("{} is not an irisc circuit file", path.display()))?;
    Circuit::decode(body).map_err(|e| format!("{}: {e}", path.display()))
}

/// Which protocol evaluates the conditionals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evaluation {
    /// Pi_MT: one set of masked triples for all branches.
    MaskedTriples,
    /// The standard triple-based protocol: every branch on its own triples (the baseline).
    Standard,
}

impl Evaluation {
    pub fn schedule(self, c: &Circuit) -> Schedule {
        match self {
            Evaluation::MaskedTriples => Schedule::new(c),
            Evaluation::Standard => Schedule::naive(c),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Evaluation::MaskedTriples => "masked-triples",
            Evaluation::Standard => "standard",
        }
    }

    /// What a store is bound to: the circuit and the schedule (their triples differ).
    pub fn binding(self, c: &Circuit) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        h.update(&c.fingerprint());
        h.update(self.name().as_bytes());
        *h.finalize().as_bytes()
    }
}

/// Who this party is and what it runs.
#[derive(Debug, Clone)]
pub struct Run {
    pub party: usize,
    pub config: PathBuf,
    pub circuit: PathBuf,
    pub lanes: usize,
    pub evaluation: Evaluation,
}

/// What one phase cost at this party.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseReport {
    pub party: usize,
    pub parties: usize,
    pub phase: &'static str,
    pub evaluation: Evaluation,
    pub lanes: usize,
    /// Triples preprocessed or consumed, over all lanes (each lane has its own).
    pub triples: u64,
    /// What the standard protocol would take, over all lanes.
    pub triples_naive: u64,
    pub mask_bits: u64,
    pub maskgen: Option<&'static str>,
    pub bytes_sent: u64,
    pub messages_sent: u64,
    /// Rounds of the circuit's evaluation (the online phase's agreement on the execution, the
    /// input sharing and the output opening take one more each).
    pub rounds: u64,
    pub seconds: f64,
    /// The opened outputs, one string of 0/1 per lane (online phase only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<String>,
}

fn connect(run: &Run, phase: &str, c: &Circuit) -> Result<(TlsTransport, Parties), String> {
    let cfg = PartiesConfig::load(&run.config).map_err(|e| e.to_string())?;
    let count = cfg.parties.len();
    if run.party >= count {
        return Err(format!(
            "party {} does not exist: {} lists {count} parties",
            run.party,
            run.config.display()
        ));
    }
    let fp: String = run
        .evaluation
        .binding(c)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let session = Session::new()
        .field("protocol", "beaver")
        .field("phase", phase)
        .field("circuit", fp)
        .field("evaluation", run.evaluation.name())
        .field("lanes", run.lanes);
    let net =
        TlsTransport::connect(&cfg, run.party, &session.to_bytes()).map_err(|e| e.to_string())?;
    Ok((net, Parties::new(run.party, count)))
}

/// The preprocessing phase: `executions` executions' material into this party's store `out`.
pub fn run_preprocess(
    run: &Run,
    method: Option<MaskGenMethod>,
    executions: u32,
    out: &Path,
) -> Result<PhaseReport, String> {
    let c = read_circuit(&run.circuit)?;
    let schedule = run.evaluation.schedule(&c);
    let (mut net, parties) = connect(run, "preprocess", &c)?;
    let method = method.unwrap_or_else(|| MaskGenMethod::cheapest(parties.count));
    let started = Instant::now();
    // Each execution goes to the store as it is made: memory holds one execution.
    let made = (|| -> Result<(), String> {
        let mut session =
            Preprocessing::start(&mut net, parties, run.lanes).map_err(|e| e.to_string())?;
        let header = StoreHeader {
            party: run.party as u32,
            parties: parties.count as u32,
            lanes: run.lanes as u64,
            method,
            fingerprint: run.evaluation.binding(&c),
            batch: session.batch,
            executions,
            triples: schedule.triples,
            rows: schedule.conds.iter().map(|k| k.mask_rows()).collect(),
        };
        let mut writer = StoreWriter::create(out, &header).map_err(|e| e.to_string())?;
        for _ in 0..executions {
            let m = session
                .next_execution(&mut net, &schedule, method)
                .map_err(|e| e.to_string())?;
            writer.append(&m).map_err(|e| e.to_string())?;
        }
        writer.finish().map_err(|e| e.to_string())
    })();
    if let Err(e) = made {
        net.abort(&e, Duration::from_secs(2));
        let _ = std::fs::remove_file(out.with_extension("partial"));
        return Err(e);
    }
    let seconds = started.elapsed().as_secs_f64();
    let report = PhaseReport {
        party: run.party,
        parties: parties.count,
        phase: "preprocess",
        evaluation: run.evaluation,
        lanes: run.lanes,
        triples: schedule.triples * run.lanes as u64 * executions as u64,
        triples_naive: c.naive_triples() * run.lanes as u64 * executions as u64,
        mask_bits: schedule.mask_rows() * 2 * run.lanes as u64 * executions as u64,
        maskgen: (!schedule.conds.is_empty()).then_some(method.name()),
        bytes_sent: net.bytes_sent(),
        messages_sent: net.messages_sent(),
        rounds: 0,
        seconds,
        outputs: Vec::new(),
    };
    net.close().map_err(|e| e.to_string())?;
    Ok(report)
}

/// Reads the owner's plaintext inputs: one line per lane, one `0`/`1` per circuit input.
fn read_inputs(path: &Path, inputs: usize, lanes: usize) -> Result<Vec<Vec<bool>>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let rows: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    if rows.len() != lanes {
        return Err(format!(
            "{}: {} lines, the run has {lanes} lanes (one line per lane)",
            path.display(),
            rows.len()
        ));
    }
    rows.iter()
        .enumerate()
        .map(|(i, row)| {
            let row = row.trim();
            if row.len() != inputs || !row.bytes().all(|b| b == b'0' || b == b'1') {
                return Err(format!(
                    "{}:{}: expected {inputs} characters 0 or 1 (the circuit's inputs), got {:?}",
                    path.display(),
                    i + 1,
                    row
                ));
            }
            Ok(row.bytes().map(|b| b == b'1').collect())
        })
        .collect()
}

/// `shareinput` (Fig. 4): the owner XOR-shares its inputs, sending each other party a uniform
/// share (one message); the others receive theirs.
fn share_inputs(
    net: &mut dyn Transport,
    parties: Parties,
    owner: usize,
    plain: Option<&[Vec<bool>]>,
    inputs: usize,
    lanes: usize,
) -> Result<Vec<u64>, BeaverError> {
    let w = words_for(lanes);
    if parties.me != owner {
        let got = net.recv(owner)?;
        if got.len() != inputs * w * 8 {
            return Err(crate::net::NetError::Protocol {
                peer: owner,
                detail: format!(
                    "input shares of {} bytes, expected {}",
                    got.len(),
                    inputs * w * 8
                ),
            }
            .into());
        }
        return Ok(got
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect());
    }
    let plain = plain.expect("the owner holds the inputs");
    let mut mine = vec![0u64; inputs * w];
    for (l, row) in plain.iter().enumerate() {
        for (i, &b) in row.iter().enumerate() {
            mine[i * w + l / 64] |= u64::from(b) << (l % 64);
        }
    }
    let mut rng = LocalRng::new()?;
    for peer in parties.peers() {
        let share = rng.words(inputs * w);
        for (m, s) in mine.iter_mut().zip(&share) {
            *m ^= s;
        }
        net.send(peer, share.iter().flat_map(|x| x.to_le_bytes()).collect())?;
    }
    Ok(mine)
}

/// The online phase: takes the store's next execution, shares party 0's `inputs`, evaluates and
/// opens the outputs to every party.
pub fn run_online(
    run: &Run,
    store_path: &Path,
    inputs: Option<&Path>,
) -> Result<PhaseReport, String> {
    let c = read_circuit(&run.circuit)?;
    let schedule = run.evaluation.schedule(&c);
    let cfg = PartiesConfig::load(&run.config).map_err(|e| e.to_string())?;
    let count = cfg.parties.len();
    let plain = match (run.party, inputs) {
        (0, Some(p)) => Some(read_inputs(p, c.num_inputs(), run.lanes)?),
        (0, None) => return Err("party 0 owns the inputs: give --inputs FILE".into()),
        _ => None,
    };
    let rows: Vec<u64> = schedule.conds.iter().map(|k| k.mask_rows()).collect();
    let fp = run.evaluation.binding(&c);
    // Everything local is checked before the store is touched or a link opened.
    let taken = store::take(
        store_path,
        Expect {
            party: run.party as u32,
            parties: count as u32,
            fingerprint: &fp,
            lanes: run.lanes as u64,
            triples: schedule.triples,
            rows: &rows,
        },
    )
    .map_err(|e| e.to_string())?;
    let (mut net, parties) = connect(run, "online", &c)?;
    let started = Instant::now();
    let result = (|| -> Result<(Vec<u64>, u64), BeaverError> {
        check_same_execution(&mut net, parties, taken.batch, taken.execution)?;
        let shares = share_inputs(
            &mut net,
            parties,
            0,
            plain.as_deref(),
            c.num_inputs(),
            run.lanes,
        )?;
        let e = evaluate(&mut net, parties, &schedule, &taken.material, &shares)?;
        let opened = open(&mut net, parties, &e.outputs, run.lanes)?;
        Ok((opened, e.rounds))
    })();
    let (opened, rounds) = match result {
        Ok(r) => r,
        Err(e) => {
            let msg = e.to_string();
            net.abort(&msg, Duration::from_secs(2));
            return Err(msg);
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    let w = words_for(run.lanes);
    let outputs = (0..run.lanes)
        .map(|l| {
            (0..c.num_outputs())
                .map(|o| {
                    if opened[o * w + l / 64] >> (l % 64) & 1 == 1 {
                        '1'
                    } else {
                        '0'
                    }
                })
                .collect()
        })
        .collect();
    let needs = Needs::of(&schedule, run.lanes);
    let report = PhaseReport {
        party: run.party,
        parties: parties.count,
        phase: "online",
        evaluation: run.evaluation,
        lanes: run.lanes,
        triples: schedule.triples * run.lanes as u64,
        triples_naive: c.naive_triples() * run.lanes as u64,
        mask_bits: needs.mask_rows * 2 * run.lanes as u64,
        maskgen: (!schedule.conds.is_empty()).then_some(taken.method.name()),
        bytes_sent: net.bytes_sent(),
        messages_sent: net.messages_sent(),
        rounds,
        seconds,
        outputs,
    };
    net.close().map_err(|e| e.to_string())?;
    Ok(report)
}
