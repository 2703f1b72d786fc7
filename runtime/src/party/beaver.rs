//! A party's `beaver` state for a compiled program built with `--protocol beaver`: its
//! preprocessing store (checked before the links open), the reveals' circuit decoded once, and
//! what the evaluations consumed, for the accounting.

use std::path::PathBuf;

use crate::beaver::circuit::Circuit;
use crate::beaver::party::Evaluation;
use crate::beaver::preprocess::check_same_execution;
use crate::beaver::schedule::Schedule;
use crate::beaver::store::{self, Expect};
use crate::beaver::Parties;
use crate::error::RuntimeError;
use crate::manifest::Manifest;
use crate::ops::beaver::{beaver_error, beaver_eval, parse_inputs, InputSource};
use crate::ops::ctx::{get, sched};
use crate::ops::Value;

use super::accounting::BeaverStats;
use super::executor::Phase;
use super::{load, PartyArgs, Runtime};

struct Compiled {
    key: [u8; 32],
    circuit: Circuit,
    schedule: Schedule,
    inputs: Vec<InputSource>,
}

#[derive(Default)]
pub(crate) struct BeaverState {
    store: Option<PathBuf>,
    compiled: Option<Compiled>,
    pub stats: Option<BeaverStats>,
}

fn unhex32(s: &str) -> Option<[u8; 32]> {
    if s.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

/// The party's `beaver` state: for a `beaver` program, its store must fit the circuit, this
/// party, one lane per gallery record and hold an execution per query, all checked here,
/// before any link opens or anything is computed.
pub(crate) fn prepare(
    args: &PartyArgs,
    manifest: &Manifest,
    inputs: &load::Inputs,
) -> Result<BeaverState, RuntimeError> {
    let Some(m) = &manifest.beaver else {
        if args.preprocessing.is_some() {
            return Err(RuntimeError::Usage(
                "--preprocessing is for programs built with --protocol beaver; this one was not"
                    .into(),
            ));
        }
        return Ok(BeaverState::default());
    };
    let path = args.preprocessing.clone().ok_or_else(|| {
        RuntimeError::Usage(format!(
            "{} runs its reveals under the beaver protocol: give --preprocessing PATH, this \
             party's store from `irisc circuit preprocess` (one execution per query, {} lanes: \
             one per gallery record)",
            manifest.program,
            inputs.records_of(m.lanes_input)
        ))
    })?;
    let binding = unhex32(&m.binding)
        .ok_or_else(|| RuntimeError::Setup("corrupt program manifest: beaver binding".into()))?;
    store::check_available(
        &path,
        Expect {
            party: args.party as u32,
            parties: 3,
            fingerprint: &binding,
            lanes: inputs.records_of(m.lanes_input) as u64,
            triples: m.triples,
            rows: &m.mask_rows,
        },
        u32::try_from(inputs.query_count()).unwrap_or(u32::MAX),
    )
    .map_err(|e| RuntimeError::Input(e.to_string()))?;
    Ok(BeaverState {
        store: Some(path),
        compiled: None,
        stats: Some(BeaverStats::default()),
    })
}

/// `mpc.beaver_eval`: takes the store's next execution (durably marked used first), checks
/// with the peers that all took the same one, and runs Pi_MT on the rows of slot `src`.
pub(crate) fn eval(
    r: &mut Runtime,
    op: &'static str,
    dst: u32,
    src: u32,
    circuit: &[u8],
    table: &str,
) -> Result<(), RuntimeError> {
    let key = {
        let mut h = blake3::Hasher::new();
        h.update(circuit);
        h.update(table.as_bytes());
        *h.finalize().as_bytes()
    };
    let compiled = match r.beaver.compiled.take() {
        Some(c) if c.key == key => c,
        _ => {
            let c = Circuit::decode(circuit)
                .map_err(|e| sched(format!("the embedded circuit: {e}")))?;
            let inputs = parse_inputs(table).map_err(sched)?;
            Compiled {
                key,
                schedule: Schedule::new(&c),
                circuit: c,
                inputs,
            }
        }
    };
    let result = eval_with(r, op, dst, src, &compiled);
    r.beaver.compiled = Some(compiled);
    result
}

fn eval_with(
    r: &mut Runtime,
    op: &'static str,
    dst: u32,
    src: u32,
    c: &Compiled,
) -> Result<(), RuntimeError> {
    let lanes = match get(&r.slots, src)? {
        Value::Xor(x) => x.lanes,
        other => return Err(sched(format!("beaver_eval of {}", other.kind()))),
    };
    let path = r.beaver.store.clone().ok_or_else(|| {
        RuntimeError::Usage("this program needs --preprocessing PATH (its beaver store)".into())
    })?;
    let rows: Vec<u64> = c.schedule.conds.iter().map(|k| k.mask_rows()).collect();
    let binding = Evaluation::MaskedTriples.binding(&c.circuit);
    let taken = store::take(
        &path,
        Expect {
            party: r.party as u32,
            parties: 3,
            fingerprint: &binding,
            lanes: lanes as u64,
            triples: c.schedule.triples,
            rows: &rows,
        },
    )
    .map_err(|e| RuntimeError::Input(e.to_string()))?;
    r.exec_with(op, Phase::Compare, |cx, slots, _| {
        let parties = Parties::new(cx.party(), cx.net.parties());
        check_same_execution(cx.net, parties, taken.batch, taken.execution)
            .map_err(beaver_error)?;
        cx.rounds += 1;
        let v = beaver_eval(
            cx,
            get(slots, src)?,
            &c.circuit,
            &c.schedule,
            &c.inputs,
            &taken.material,
        )?;
        Ok(vec![(dst, v)])
    })?;
    if let Some(s) = r.beaver.stats.as_mut() {
        let l = lanes as u64;
        s.executions += 1;
        s.lanes = l;
        s.triples += c.schedule.triples * l;
        s.triples_naive += c.circuit.naive_triples() * l;
        s.mask_bits += rows.iter().sum::<u64>() * 2 * l;
        if !rows.is_empty() {
            s.maskgen = Some(taken.method.name());
        }
    }
    Ok(())
}
