//! `irisc fss2 enroll|deal|serve|query`: the roles of a program under the two-server family
//! `fss2` (paper 002), each as its own process. The program decides the plan: a cosine
//! identification `reveal ids s in G: cosine(q, s) >= TAU to X;` where `X` supplies the query `q`;
//! `X` is the client, the two other parties are the servers `S_0`, `S_1` in declaration order,
//! and the dealer works offline (enrollment and preprocessing into files).
//!
//! The range analysis of the cosine test (`analysis::cosine`) must prove that every value the
//! servers materialise fits the signed range of Z_2^64 (the paper's `l_0 = 64`); then the
//! decision is exact and no truncation is needed (`rho = 0`: the paper truncates to shrink the
//! FSS input domain, at the price of a decision that can differ from the fixed-point one next to
//! the threshold, which the FAR/FRR target rules out).

use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use irisc_runtime::fss2::party::{self, ClientRun, ServerRun};
use irisc_runtime::io::ndjson_values::{quantise, read_embeddings};

pub use super::fss2_program::{explain_json, fss2_program, of_checked, Fss2Program};
use super::pipeline::read_and_check;
use irisc_runtime::vocab::InputRole;

/// `irisc fss2 enroll`.
pub fn run_enroll(program: &Path, gallery: &Path, out: &Path, malicious: bool) -> Result<ExitCode> {
    let f = fss2_program(program)?;
    let report = if malicious {
        party::star::enroll(&f.plan, gallery, out)
    } else {
        party::enroll(&f.plan, gallery, out)
    }
    .map_err(|e| anyhow!(e))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(ExitCode::SUCCESS)
}

/// `irisc fss2 deal`.
pub fn run_deal(
    program: &Path,
    secret: &Path,
    authentications: u32,
    out: &Path,
    malicious: Option<u32>,
) -> Result<ExitCode> {
    let f = fss2_program(program)?;
    if let Some(m) = malicious {
        let report =
            party::star::deal(&f.plan, secret, m, authentications, out).map_err(|e| anyhow!(e))?;
        println!("{}", serde_json::to_string(&report)?);
        return Ok(ExitCode::SUCCESS);
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(u64::from(authentications)),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_message("dealing authentications");
    let report = party::deal(&f.plan, secret, authentications, out, |i| {
        bar.set_position(u64::from(i))
    })
    .map_err(|e| anyhow!(e))?;
    bar.finish_and_clear();
    println!("{}", serde_json::to_string(&report)?);
    Ok(ExitCode::SUCCESS)
}

/// Which link index the named or numbered party is.
fn party_index(f: &Fss2Program, party: &str) -> Result<usize> {
    if let Some(i) = f.parties.iter().position(|p| p == party) {
        return Ok(i);
    }
    match party.parse::<usize>() {
        Ok(i) if i < 3 => Ok(i),
        _ => bail!(
            "--party {party}: the program's parties are {}",
            f.parties.join(", ")
        ),
    }
}

/// `irisc fss2 serve`.
#[allow(clippy::too_many_arguments)]
pub fn run_serve(
    program: &Path,
    party: &str,
    config: &Path,
    gallery: &Path,
    material: &Path,
    queries: u32,
    malicious: Option<u32>,
) -> Result<ExitCode> {
    let f = fss2_program(program)?;
    let me = party_index(&f, party)?;
    let run = ServerRun {
        party: me,
        config: config.to_path_buf(),
        roles: f.roles,
        plan: f.plan,
        gallery: gallery.to_path_buf(),
        material: material.to_path_buf(),
        queries,
        ip: irisc_runtime::fss2::kernel::IpKernel::PORTABLE,
    };
    let report = match malicious {
        Some(m) => party::star::serve(&run, m),
        None => party::serve(&run),
    }
    .map_err(|e| anyhow!("{}: {e}", f.parties[me]))?;
    println!("{}", serde_json::to_string(&report)?);
    Ok(ExitCode::SUCCESS)
}

/// `irisc fss2 query`: prints one JSON line per query with the matching ids, then the report.
pub fn run_query(
    program: &Path,
    party: &str,
    config: &Path,
    queries: &Path,
    report_to: Option<&Path>,
    malicious: Option<(u32, std::path::PathBuf)>,
) -> Result<ExitCode> {
    let f = fss2_program(program)?;
    let me = party_index(&f, party)?;
    let records = read_embeddings(queries, Some(f.plan.dim)).map_err(|e| anyhow!(e))?;
    let run = ClientRun {
        party: me,
        config: config.to_path_buf(),
        roles: f.roles,
        plan: f.plan,
        queries: records
            .iter()
            .map(|r| {
                r.embedding
                    .iter()
                    .map(|&v| quantise(v, f.plan.scale_bits))
                    .collect()
            })
            .collect(),
    };
    let report = match &malicious {
        Some((m, material)) => party::star::query(&run, material, *m),
        None => party::query(&run),
    }
    .map_err(|e| anyhow!("{}: {e}", f.parties[me]))?;
    // The objects of README "Outputs", as the rep3 output party prints them.
    for (q, (r, m)) in records.iter().zip(&report.matches).enumerate() {
        println!(
            "{}",
            irisc_runtime::fss2::entry::answer_line(q, r.id, m, &f.label)
        );
    }
    if let Some(path) = report_to {
        std::fs::write(path, serde_json::to_string(&report)?)?;
    }
    eprintln!(
        "{}: {} queries, {:.3} ms per query (median), {} bytes sent",
        f.parties[me],
        records.len(),
        median_ms(&report.seconds_per_query),
        report.bytes_sent
    );
    Ok(ExitCode::SUCCESS)
}

fn median_ms(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(s.len() / 2).copied().unwrap_or(0.0) * 1e3
}

/// A party's file name from its index.
type FileName = fn(usize) -> String;

/// `irisc run P.irs --protocol fss2`: the whole run on this machine, every role its own process
/// (the dealer's enrollment and preprocessing, the two servers, the client), over TLS on
/// loopback; relays the client's answers and, with `check`, compares them with the plaintext
/// definition of the program.
pub fn run_local(
    program: &Path,
    db: &Path,
    queries: &Path,
    work: Option<&Path>,
    timeout: f64,
    check: bool,
    malicious: Option<u32>,
) -> Result<ExitCode> {
    use super::run::{failures, free_base_port, wait_all, PartyLine};
    use std::process::{Command, Stdio};
    let started = std::time::Instant::now();
    let checked = read_and_check(program)?;
    let f = of_checked(&checked)?;
    let count = read_embeddings(queries, Some(f.plan.dim))
        .map_err(|e| anyhow!(e))?
        .len();
    if count == 0 {
        bail!("{}: no queries", queries.display());
    }
    read_embeddings(db, Some(f.plan.dim)).map_err(|e| anyhow!(e))?;
    let temp;
    let work = match work {
        Some(w) => {
            std::fs::create_dir_all(w)?;
            w.to_path_buf()
        }
        None => {
            temp = tempfile::Builder::new().prefix("irisc-fss2-").tempdir()?;
            temp.path().to_path_buf()
        }
    };
    let me = std::env::current_exe()?;
    let dealer = work.join("dealer");
    let config = super::keys::generate_keys(&work.join("keys"), free_base_port()?, true)?;
    let prog = program.display().to_string();
    // The malicious variant's files and flags (CSB.Eval*), or the semi-honest ones.
    let m = malicious.map(|m| m.to_string());
    let (secret, gallery_name, material_name): (&str, FileName, FileName) = if m.is_some() {
        (
            party::star::SECRET_NAME,
            party::star::gallery_name,
            party::star::material_name,
        )
    } else {
        (
            party::SECRET_NAME,
            party::gallery_name,
            party::material_name,
        )
    };
    let with_m = |mut args: Vec<String>, flag_only: bool| {
        if let Some(m) = &m {
            args.push("--malicious".into());
            if !flag_only {
                args.push(m.clone());
            }
        }
        args
    };
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
    // The dealer, offline: enrollment, then one authentication's material per query.
    for args in [
        with_m(
            owned(&[
                "fss2",
                "enroll",
                &prog,
                "--gallery",
                &db.display().to_string(),
                "--out",
                &dealer.display().to_string(),
            ]),
            true,
        ),
        with_m(
            owned(&[
                "fss2",
                "deal",
                &prog,
                "--secret",
                &dealer.join(secret).display().to_string(),
                "--authentications",
                &count.to_string(),
                "--out",
                &dealer.display().to_string(),
            ]),
            false,
        ),
    ] {
        let out = Command::new(&me)
            .args(&args)
            .stderr(Stdio::inherit())
            .output()?;
        if !out.status.success() {
            bail!("the dealer's `{}` failed", args[1]);
        }
    }
    let dealt = std::time::Instant::now();
    let mut children = Vec::new();
    for p in 0..3 {
        let mut c = Command::new(&me);
        c.arg("fss2");
        match f.roles.server_of(p) {
            Some(s) => {
                c.args(["serve", &prog, "--gallery"])
                    .arg(dealer.join(gallery_name(s)))
                    .arg("--material")
                    .arg(dealer.join(material_name(s)))
                    .args(["--queries", &count.to_string()]);
            }
            None => {
                c.args(["query", &prog, "--queries"]).arg(queries);
                if m.is_some() {
                    c.arg("--material").arg(dealer.join(material_name(2)));
                }
            }
        }
        if let Some(m) = &m {
            c.args(["--malicious", m]);
        }
        c.args(["--party", &p.to_string(), "--config"])
            .arg(&config)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        children.push(c.spawn()?);
    }
    let client = f.roles.client;
    let outcome = wait_all(
        children,
        std::time::Duration::from_secs_f64(timeout * 3.0 + 60.0),
        &mut |line| match line {
            PartyLine::Stdout { party, text } if party == client => println!("{text}"),
            PartyLine::Stdout { .. } => {}
            PartyLine::Stderr { party, text } => eprintln!("[{}] {text}", f.parties[party]),
        },
    )?;
    if let Some(error) = failures(&outcome) {
        bail!("{error} (see the parties' messages above)");
    }
    eprintln!(
        "two servers answered {count} queries in {:.3} s ({:.3} s in all, with keys and the dealer)",
        dealt.elapsed().as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    if check {
        let planned =
            super::pipeline::plan(&checked, &crate::analysis::plan::PlanOptions::default())?;
        let plain: Vec<super::plaintext::PlainInput> = checked
            .program
            .inputs
            .iter()
            .map(|i| {
                let file = if i.role == InputRole::Gallery {
                    db
                } else {
                    queries
                };
                let records = read_embeddings(file, Some(f.plan.dim)).map_err(|e| anyhow!(e))?;
                Ok(super::plaintext::PlainInput::Embedding(
                    records
                        .into_iter()
                        .map(|r| {
                            (
                                r.id,
                                r.embedding
                                    .iter()
                                    .map(|&v| quantise(v, f.plan.scale_bits))
                                    .collect(),
                            )
                        })
                        .collect(),
                ))
            })
            .collect::<Result<_>>()?;
        let expected = super::plaintext::answers(&checked.program, &planned.plan, &plain)?;
        let want = expected.get(&client).cloned().unwrap_or_default();
        let got: Vec<serde_json::Value> = outcome[client]
            .stdout
            .lines()
            .map(serde_json::from_str)
            .collect::<Result<_, _>>()?;
        if want != got {
            bail!(
                "the client's answers differ from the plaintext definition\n  fss2:  {}\n  plain: {}",
                serde_json::to_string(&got)?,
                serde_json::to_string(&want)?
            );
        }
        eprintln!("checked: the answers equal the plaintext definition of the program");
    }
    Ok(ExitCode::SUCCESS)
}

/// `irisc explain P.irs --protocol fss2 [--json] [--records N]`.
pub fn run_explain(program: &Path, records: Option<u64>, json: bool) -> Result<ExitCode> {
    let f = fss2_program(program)?;
    let n = records.unwrap_or(1);
    let v = explain_json(&f, n);
    if json {
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    let b = &v["bytes_per_server_per_query"];
    println!(
        "Protocol fss2 (paper 002): servers {} and {}, client {}, dealer offline.",
        v["roles"]["servers"][0].as_str().unwrap_or(""),
        v["roles"]["servers"][1].as_str().unwrap_or(""),
        v["roles"]["client"].as_str().unwrap_or("")
    );
    println!(
        "  threat model: {}",
        v["threat_model"].as_str().unwrap_or("")
    );
    println!(
        "  test: cosine >= {} on {} components at scale 2^{}, decided as {}",
        v["test"]["tau"].as_str().unwrap_or(""),
        f.plan.dim,
        f.plan.scale_bits,
        f.plan_text()
    );
    println!(
        "  ring: Z_2^64 (l0 = 64; the values need {} bits: {}); truncation rho = 0; FSS domain 64 bits",
        f.ring.ring_bits, f.ring.justification
    );
    println!(
        "  per query, {} template{}{}: {} rounds between the servers; each server sends {} bytes to the other and {} to the client; the client sends {} bytes",
        n,
        if n == 1 { "" } else { "s" },
        if records.is_none() { " (assumed; --records N)" } else { "" },
        cost_rounds(),
        b["to_other_server"],
        b["to_client"],
        v["client_bytes_per_query"]
    );
    println!(
        "  dealer material: {} bytes per server per authentication",
        v["dealer_material_per_server_per_authentication"]
    );
    println!("  what each party learns:");
    for e in v["ledger"].as_array().into_iter().flatten() {
        println!(
            "    {}: {}",
            e["who"].as_str().unwrap_or(""),
            e["learns"].as_str().unwrap_or("")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn cost_rounds() -> u32 {
    irisc_runtime::fss2::cost::ROUNDS
}
