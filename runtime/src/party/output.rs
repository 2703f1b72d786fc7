//! What a party prints: result lines (output party, stdout) and accounting (stderr).

use std::io::Write;
use std::time::Duration;

use crate::error::RuntimeError;
use crate::manifest::Manifest;

use super::PhaseTimes;

/// One answer line, with the fields in the contract's order: `{"query":0,"match":true,"ids":[17]}`.
#[derive(serde::Serialize)]
struct Answer {
    query: u64,
    #[serde(rename = "match")]
    matched: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    ids: Option<Vec<u64>>,
}

fn line(a: &Answer) -> String {
    serde_json::to_string(a).expect("plain data serialises")
}

pub fn any_line(query: u64, bits: &[bool]) -> String {
    line(&Answer {
        query,
        matched: bits.iter().any(|&b| b),
        ids: None,
    })
}

pub fn ids_line(query: u64, bits: &[bool], record_ids: &[u64]) -> String {
    let ids: Vec<u64> = bits
        .iter()
        .zip(record_ids)
        .filter(|(&b, _)| b)
        .map(|(_, &id)| id)
        .collect();
    line(&Answer {
        query,
        matched: !ids.is_empty(),
        ids: Some(ids),
    })
}

pub fn print_line(line: &str) -> Result<(), RuntimeError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(|e| RuntimeError::Setup(format!("cannot write results: {e}")))
}

#[allow(clippy::too_many_arguments)]
pub fn print_accounting(
    party: usize,
    manifest: &Manifest,
    queries: usize,
    records: usize,
    t: &PhaseTimes,
    total: Duration,
    bytes: u64,
    messages: u64,
    rounds: u64,
) {
    eprintln!(
        "irisc party {party} ({}): {queries} queries x {records} records; load {:.3} s, connect {:.3} s, \
         dot phase {:.3} s, comparison phase {:.3} s, total {:.3} s; sent {} bytes in {messages} messages, {rounds} rounds",
        manifest.program,
        t.load.as_secs_f64(),
        t.connect.as_secs_f64(),
        t.dot.as_secs_f64(),
        t.compare.as_secs_f64(),
        total.as_secs_f64(),
        bytes,
    );
}
