//! `irisc circuit preprocess|run`: one party of a boolean circuit under the `beaver` protocol
//! family (paper 004), as its own process over the TLS links of `parties.toml`. The
//! preprocessing phase writes this party's store (triples and masks, bound to the circuit, each
//! execution consumed once); the online phase takes the store's next execution. Each prints one
//! JSON line with what the phase cost at this party, measured.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Result};
use irisc_runtime::beaver::mask_gen::MaskGenMethod;
use irisc_runtime::beaver::party::{self, Evaluation, Run};

/// What both phases are told.
#[derive(Debug, Clone)]
pub struct CircuitParty {
    pub party: usize,
    pub config: PathBuf,
    pub circuit: PathBuf,
    pub lanes: usize,
    /// The standard triple-based protocol instead of masked triples (the baseline).
    pub standard: bool,
}

impl CircuitParty {
    fn run(&self) -> Run {
        Run {
            party: self.party,
            config: self.config.clone(),
            circuit: self.circuit.clone(),
            lanes: self.lanes,
            evaluation: if self.standard {
                Evaluation::Standard
            } else {
                Evaluation::MaskedTriples
            },
        }
    }
}

pub fn run_preprocess(
    who: &CircuitParty,
    maskgen: Option<&str>,
    executions: u32,
    output: &std::path::Path,
) -> Result<ExitCode> {
    let method = maskgen
        .map(|m| {
            MaskGenMethod::parse(m).ok_or_else(|| {
                anyhow!("unknown MaskGen protocol {m:?}: one of vs, seed-2p, seed-3p")
            })
        })
        .transpose()?;
    let report = party::run_preprocess(&who.run(), method, executions, output)
        .map_err(|e| anyhow!("party {}: {e}", who.party))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(ExitCode::SUCCESS)
}

pub fn run_online(
    who: &CircuitParty,
    store: &std::path::Path,
    inputs: Option<&std::path::Path>,
) -> Result<ExitCode> {
    let report = party::run_online(&who.run(), store, inputs)
        .map_err(|e| anyhow!("party {}: {e}", who.party))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(ExitCode::SUCCESS)
}

/// `irisc circuit explain`: what a run of the circuit costs, predicted from its shape alone:
/// triples (longest path and naive), rounds, MaskGen material and bytes per party by phase.
pub fn run_explain(
    circuit: &std::path::Path,
    parties: usize,
    lanes: usize,
    maskgen: Option<&str>,
    json: bool,
) -> Result<ExitCode> {
    use irisc_runtime::beaver::cost::{evaluation_bytes, online_extra_bytes, preprocessing_bytes};
    use irisc_runtime::beaver::schedule::Schedule;
    if !(2..=irisc_runtime::net::config::MAX_PARTIES).contains(&parties) {
        return Err(anyhow!(
            "--parties {parties}: a run has 2 to {} parties",
            irisc_runtime::net::config::MAX_PARTIES
        ));
    }
    if lanes == 0 {
        return Err(anyhow!("--lanes 0: a run has at least one lane"));
    }
    let c = party::read_circuit(circuit).map_err(|e| anyhow!(e))?;
    let method = match maskgen {
        Some(m) => MaskGenMethod::parse(m).ok_or_else(|| {
            anyhow!("unknown MaskGen protocol {m:?}: one of vs, seed-2p, seed-3p")
        })?,
        None => MaskGenMethod::cheapest(parties),
    };
    let mut rows = Vec::new();
    for (name, schedule) in [
        ("masked-triples", Schedule::new(&c)),
        ("standard", Schedule::naive(&c)),
    ] {
        let pre = preprocessing_bytes(&schedule, lanes, parties, method, 1);
        let eval = evaluation_bytes(&schedule, lanes, parties);
        rows.push(serde_json::json!({
            "protocol": name,
            "triples": schedule.triples * lanes as u64,
            "mask_bits": schedule.mask_rows() * 2 * lanes as u64,
            "rounds": schedule.opening_rounds(),
            "preprocessing_bytes_per_party": pre,
            "preprocessing_bytes_per_party_total": pre.total(),
            "evaluation_bytes_per_party": eval,
            "online_bytes_input_owner": eval + online_extra_bytes(&schedule, c.num_outputs(), lanes, parties, 0, 0),
            "online_bytes_other_parties": eval + online_extra_bytes(&schedule, c.num_outputs(), lanes, parties, 1, 0),
        }));
    }
    let summary = serde_json::json!({
        "circuit": circuit.display().to_string(),
        "inputs": c.num_inputs(),
        "outputs": c.num_outputs(),
        "conditionals": c.conditionals(),
        "parties": parties,
        "lanes": lanes,
        "maskgen": method.name(),
        "threat_model": format!(
            "semi-honest, secure against {} of {parties} parties colluding (dishonest majority, paper 004 Theorems 2, 6 and 8)",
            parties - 1
        ),
        "protocols": rows,
    });
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{}: {} inputs, {} outputs, {} conditionals; {parties} parties, {lanes} lanes",
        circuit.display(),
        c.num_inputs(),
        c.num_outputs(),
        c.conditionals()
    );
    println!(
        "  threat model  {}",
        summary["threat_model"].as_str().unwrap_or_default()
    );
    println!(
        "  MaskGen       {} (the cheapest for {parties} parties unless --maskgen)",
        method.name()
    );
    println!(
        "  {:<16} {:>14} {:>14} {:>8} {:>18} {:>16}",
        "protocol", "triples", "mask bits", "rounds", "preprocessing B", "evaluation B"
    );
    for r in &rows {
        println!(
            "  {:<16} {:>14} {:>14} {:>8} {:>18} {:>16}",
            r["protocol"].as_str().unwrap_or_default(),
            r["triples"].to_string(),
            r["mask_bits"].to_string(),
            r["rounds"].to_string(),
            r["preprocessing_bytes_per_party_total"].to_string(),
            r["evaluation_bytes_per_party"].to_string()
        );
    }
    println!("  bytes are sent per party; the runs' JSON reports measure the same quantities");
    Ok(ExitCode::SUCCESS)
}
