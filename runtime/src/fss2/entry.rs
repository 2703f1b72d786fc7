//! The role executables of an `fss2` program (paper 002): `irisc build --protocol fss2` writes
//! one per role (server, dealer, client), each a generated `main` that calls
//! [`irisc_rt_fss2_main`](crate::abi::irisc_rt_fss2_main) with its role, the program's
//! [`Fss2Manifest`] and, for the server, the SS.IP kernel the compiler generated for the
//! program's dimension.
//!
//! The manifest is what the compiler read from the program's `mpc` module: the dimension and
//! scale, the threshold, the two gates (`mpc.ic_gate`, `mpc.condeval`), the ring and truncation,
//! the roles and, with `--malicious M`, the trap instances. Before anything runs, the runtime
//! checks that the gates in the manifest are the ones its reading of the threshold gives
//! ([`CosinePlan::sign_test`], [`CosinePlan::magnitude_gate`]), so an executable whose IR and
//! runtime disagree refuses to start.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use serde::{Deserialize, Serialize};

use crate::contract::{Fss2Role, MATCH_FIELD};
use crate::fss::condeval::Conj;
use crate::fss::ic::{NEGATIVE, NON_NEGATIVE};
use crate::io::ndjson_values::{quantise, read_embeddings};

use super::eval::Roles;
use super::kernel::{IpKernel, SsIpFn};
use super::party::{self, ClientRun, ServerRun};
use super::plan::CosinePlan;

/// Bumped when the manifest or the role entry changes.
pub const FSS2_ABI: u32 = 1;

/// One gate as the IR spells it: the interval (`non_negative`: `[0, 2^63)`, `negative`:
/// `[2^63, 2^64)`) applied to the value or its negation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateSpec {
    pub interval: String,
    pub negate: bool,
    /// CondEval's combination with `c_1` (`and`/`or`); absent for the sign gate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conj: Option<String>,
}

/// What the compiler embeds in each role executable of an `fss2` program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fss2Manifest {
    pub abi: u32,
    pub protocol: String,
    pub program: String,
    /// Hex BLAKE3 of the program source.
    pub fingerprint: String,
    /// The party names, by link index of `parties.toml`.
    pub parties: [String; 3],
    /// Link indices of `S_0`, `S_1` and the client.
    pub servers: [usize; 2],
    pub client: usize,
    pub query: String,
    pub gallery: String,
    /// The JSON field the client prints the matching ids under.
    pub label: String,
    pub dim: usize,
    pub scale_bits: u32,
    pub tau_negative: bool,
    pub tau_num: u64,
    pub tau_den: u64,
    pub strict: bool,
    pub sign_gate: GateSpec,
    pub magnitude_gate: GateSpec,
    /// The ring (l0) and the truncation (rho) the compiler chose.
    pub ring_bits: u32,
    pub truncation_bits: u32,
    /// `--malicious M`: the trap instances of CSB.Eval* (None: semi-honest).
    #[serde(default)]
    pub malicious: Option<u32>,
    /// `irisc explain --protocol fss2 --json` of the program, for `--explain`.
    pub explain: serde_json::Value,
}

fn interval_name(i: (u64, u64)) -> &'static str {
    if i == NON_NEGATIVE {
        "non_negative"
    } else if i == NEGATIVE {
        "negative"
    } else {
        "other"
    }
}

impl Fss2Manifest {
    pub fn plan(&self) -> CosinePlan {
        CosinePlan {
            dim: self.dim,
            scale_bits: self.scale_bits,
            tau_negative: self.tau_negative,
            tau_num: self.tau_num,
            tau_den: self.tau_den,
            strict: self.strict,
        }
    }

    pub fn roles(&self) -> Roles {
        Roles {
            servers: self.servers,
            client: self.client,
        }
    }

    /// The gates the runtime derives from the threshold, spelled as the IR spells them.
    pub fn expected_gates(plan: &CosinePlan) -> (GateSpec, GateSpec) {
        let s = plan.sign_test();
        let g = plan.magnitude_gate();
        (
            GateSpec {
                interval: interval_name(s.interval).into(),
                negate: s.negate,
                conj: None,
            },
            GateSpec {
                interval: interval_name(g.interval).into(),
                negate: g.negate,
                conj: Some(match g.conj {
                    Conj::And => "and".into(),
                    Conj::Or => "or".into(),
                }),
            },
        )
    }

    /// Parses and checks the embedded manifest.
    pub fn from_json(bytes: &[u8]) -> Result<Fss2Manifest, String> {
        let m: Fss2Manifest = serde_json::from_slice(bytes)
            .map_err(|e| format!("the embedded fss2 manifest does not parse: {e}"))?;
        if m.abi != FSS2_ABI || m.protocol != "fss2" {
            return Err(format!(
                "this executable was built for fss2 ABI {} (protocol `{}`); this runtime speaks ABI {FSS2_ABI}: rebuild it with this irisc",
                m.abi, m.protocol
            ));
        }
        if m.ring_bits != 64 || m.truncation_bits != 0 {
            return Err(format!(
                "the program asks for Z_2^{} with truncation {}; this runtime runs Z_2^64 without truncation",
                m.ring_bits, m.truncation_bits
            ));
        }
        let mut links = [m.servers[0], m.servers[1], m.client];
        links.sort_unstable();
        if links != [0, 1, 2] {
            return Err(format!(
                "servers {:?} and client {} are not three distinct parties",
                m.servers, m.client
            ));
        }
        let (sign, magnitude) = Fss2Manifest::expected_gates(&m.plan());
        if sign != m.sign_gate || magnitude != m.magnitude_gate {
            return Err(format!(
                "the executable's gates ({:?}, {:?}) are not the runtime's reading of the threshold ({:?}, {:?}): rebuild it with this irisc",
                m.sign_gate, m.magnitude_gate, sign, magnitude
            ));
        }
        Ok(m)
    }
}

#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
struct ServerArgs {
    /// This server's party (name or index in parties.toml).
    #[arg(long)]
    party: String,
    #[arg(long)]
    config: PathBuf,
    /// This server's share of the enrolled gallery (the dealer's `enroll`).
    #[arg(long)]
    gallery: PathBuf,
    /// This server's material store (the dealer's `deal`).
    #[arg(long)]
    material: PathBuf,
    /// Authentications to serve.
    #[arg(long, default_value_t = 1)]
    queries: u32,
}

#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
struct ClientArgs {
    #[arg(long)]
    party: String,
    #[arg(long)]
    config: PathBuf,
    /// The queries, NDJSON `{"id", "embedding"}`.
    #[arg(long)]
    queries: PathBuf,
    /// The malicious variant: the client's part of the dealer's material (`client.material-star`).
    #[arg(long)]
    material: Option<PathBuf>,
    /// Also write the client's report (latency per query, bytes sent) as JSON here.
    #[arg(long)]
    report: Option<PathBuf>,
}

#[derive(Debug, Parser)]
#[command(no_binary_name = true)]
struct DealerArgs {
    #[command(subcommand)]
    command: DealerCommand,
}

#[derive(Debug, Subcommand)]
enum DealerCommand {
    /// Enrolls the templates (NDJSON `{"id", "embedding"}`): each server's gallery share and the
    /// dealer's secret into DIR, owner-only.
    Enroll {
        #[arg(long)]
        gallery: PathBuf,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// CS.Setup for a batch of authentications: one material store per server into DIR.
    Deal {
        /// The dealer's secret from `enroll`.
        #[arg(long)]
        secret: PathBuf,
        #[arg(long, default_value_t = 1)]
        authentications: u32,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// The role `role` with `args` (`argv`, program name first) under the embedded `manifest`;
/// returns the exit code. Every failure is one line on stderr.
pub fn main(role: i32, args: Vec<OsString>, manifest: &[u8], ss_ip: Option<SsIpFn>) -> i32 {
    let m = match Fss2Manifest::from_json(manifest) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let Some(role) = Fss2Role::from_i32(role) else {
        eprintln!("error: role {role} is not an fss2 role");
        return 1;
    };
    let rest: Vec<OsString> = args.into_iter().skip(1).collect();
    if rest.iter().any(|a| a == "--explain") {
        println!(
            "{}",
            serde_json::to_string_pretty(&m.explain).unwrap_or_default()
        );
        return 0;
    }
    if rest.iter().any(|a| a == "--version") {
        println!(
            "{} {} of `{}` (fss2{}, program {})",
            m.program,
            role.name(),
            m.program,
            m.malicious
                .map(|k| format!(", malicious with {k} instances"))
                .unwrap_or_default(),
            &m.fingerprint[..m.fingerprint.len().min(16)]
        );
        return 0;
    }
    let result = match role {
        Role::Server => server(&m, rest, ss_ip),
        Role::Dealer => dealer(&m, rest),
        Role::Client => client(&m, rest),
    };
    match result {
        Ok(()) => 0,
        Err(Exit::Usage(e)) => {
            let _ = e.print();
            e.exit_code()
        }
        Err(Exit::Failed(e)) => {
            eprintln!("error: {}: {e}", m.program);
            1
        }
    }
}

use Fss2Role as Role;

enum Exit {
    Usage(clap::Error),
    Failed(String),
}

impl From<String> for Exit {
    fn from(e: String) -> Exit {
        Exit::Failed(e)
    }
}

fn parse<T: Parser>(args: Vec<OsString>) -> Result<T, Exit> {
    T::try_parse_from(args).map_err(Exit::Usage)
}

/// The link index of the party named (or numbered) `party`.
fn party_index(m: &Fss2Manifest, party: &str) -> Result<usize, String> {
    if let Some(i) = m.parties.iter().position(|p| p == party) {
        return Ok(i);
    }
    match party.parse::<usize>() {
        Ok(i) if i < 3 => Ok(i),
        _ => Err(format!(
            "--party {party}: the program's parties are {}",
            m.parties.join(", ")
        )),
    }
}

fn server(m: &Fss2Manifest, args: Vec<OsString>, ss_ip: Option<SsIpFn>) -> Result<(), Exit> {
    let a: ServerArgs = parse(args)?;
    let ip = match ss_ip {
        // SAFETY: the compiler generated the kernel for the manifest's dimension.
        Some(f) => unsafe { IpKernel::generated(f, m.dim) },
        None => IpKernel::PORTABLE,
    };
    let run = ServerRun {
        party: party_index(m, &a.party)?,
        config: a.config,
        roles: m.roles(),
        plan: m.plan(),
        gallery: a.gallery,
        material: a.material,
        queries: a.queries,
        ip,
    };
    let report = match m.malicious {
        Some(k) => party::star::serve(&run, k),
        None => party::serve(&run),
    }
    .map_err(|e| format!("{}: {e}", m.parties[run.party]))?;
    println!("{}", serde_json::to_string(&report).unwrap_or_default());
    Ok(())
}

fn dealer(m: &Fss2Manifest, args: Vec<OsString>) -> Result<(), Exit> {
    let a: DealerArgs = parse(args)?;
    let plan = m.plan();
    let line = match (a.command, m.malicious) {
        (DealerCommand::Enroll { gallery, out }, None) => {
            serde_json::to_string(&party::enroll(&plan, &gallery, &out)?)
        }
        (DealerCommand::Enroll { gallery, out }, Some(_)) => {
            serde_json::to_string(&party::star::enroll(&plan, &gallery, &out)?)
        }
        (
            DealerCommand::Deal {
                secret,
                authentications,
                out,
            },
            None,
        ) => serde_json::to_string(&party::deal(&plan, &secret, authentications, &out, |_| {})?),
        (
            DealerCommand::Deal {
                secret,
                authentications,
                out,
            },
            Some(k),
        ) => serde_json::to_string(&party::star::deal(
            &plan,
            &secret,
            k,
            authentications,
            &out,
        )?),
    };
    println!("{}", line.unwrap_or_default());
    Ok(())
}

fn client(m: &Fss2Manifest, args: Vec<OsString>) -> Result<(), Exit> {
    let a: ClientArgs = parse(args)?;
    let me = party_index(m, &a.party)?;
    let plan = m.plan();
    let records = read_embeddings(&a.queries, Some(plan.dim))?;
    let run = ClientRun {
        party: me,
        config: a.config,
        roles: m.roles(),
        plan,
        queries: records
            .iter()
            .map(|r| {
                r.embedding
                    .iter()
                    .map(|&v| quantise(v, plan.scale_bits))
                    .collect()
            })
            .collect(),
    };
    let report = match (m.malicious, &a.material) {
        (Some(k), Some(material)) => party::star::query(&run, material, k),
        (Some(k), None) => {
            return Err(Exit::Failed(format!(
                "this program runs the malicious variant ({k} instances): the client needs its part of the dealer's material (--material DIR/{})",
                party::star::material_name(2)
            )))
        }
        (None, Some(_)) => {
            return Err(Exit::Failed(
                "--material is the malicious variant's client material; this program is semi-honest".into(),
            ))
        }
        (None, None) => party::query(&run),
    }
    .map_err(|e| format!("{}: {e}", m.parties[me]))?;
    for (q, (r, ids)) in records.iter().zip(&report.matches).enumerate() {
        println!("{}", answer_line(q, r.id, ids, &m.label));
    }
    if let Some(path) = &a.report {
        std::fs::write(path, serde_json::to_string(&report).unwrap_or_default())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// The client's line for query number `q` (its id `id`): the matching ids under `label`, as
/// the `rep3` output party prints them.
pub fn answer_line(q: usize, id: u64, matches: &[u64], label: &str) -> serde_json::Value {
    let mut o = serde_json::Map::new();
    o.insert("query".into(), q.into());
    o.insert("id".into(), id.into());
    o.insert(MATCH_FIELD.into(), (!matches.is_empty()).into());
    o.insert(label.into(), serde_json::json!(matches));
    serde_json::Value::Object(o)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(negative: bool, strict: bool) -> Fss2Manifest {
        let plan = CosinePlan {
            dim: 4,
            scale_bits: 8,
            tau_negative: negative,
            tau_num: 17,
            tau_den: 50,
            strict,
        };
        let (sign_gate, magnitude_gate) = Fss2Manifest::expected_gates(&plan);
        Fss2Manifest {
            abi: FSS2_ABI,
            protocol: "fss2".into(),
            program: "t".into(),
            fingerprint: "00".repeat(32),
            parties: ["a".into(), "b".into(), "c".into()],
            servers: [0, 2],
            client: 1,
            query: "v".into(),
            gallery: "g".into(),
            label: "ids".into(),
            dim: 4,
            scale_bits: 8,
            tau_negative: negative,
            tau_num: 17,
            tau_den: 50,
            strict,
            sign_gate,
            magnitude_gate,
            ring_bits: 64,
            truncation_bits: 0,
            malicious: None,
            explain: serde_json::json!({}),
        }
    }

    #[test]
    fn the_manifest_is_checked_against_the_runtimes_gates() {
        for (neg, strict) in [(false, false), (false, true), (true, false), (true, true)] {
            let m = manifest(neg, strict);
            let bytes = serde_json::to_vec(&m).unwrap();
            assert_eq!(Fss2Manifest::from_json(&bytes).unwrap(), m);
        }
        // The IR's `and` where the threshold needs `or`.
        let mut m = manifest(true, false);
        m.magnitude_gate.conj = Some("and".into());
        let e = Fss2Manifest::from_json(&serde_json::to_vec(&m).unwrap()).unwrap_err();
        assert!(e.contains("not the runtime's reading"), "{e}");
        let mut m = manifest(false, false);
        m.ring_bits = 48;
        let e = Fss2Manifest::from_json(&serde_json::to_vec(&m).unwrap()).unwrap_err();
        assert!(e.contains("Z_2^48"), "{e}");
        let mut m = manifest(false, false);
        m.client = 0;
        let e = Fss2Manifest::from_json(&serde_json::to_vec(&m).unwrap()).unwrap_err();
        assert!(e.contains("three distinct"), "{e}");
        let e = Fss2Manifest::from_json(b"{\"abi\": 1}").unwrap_err();
        assert!(e.contains("does not parse"), "{e}");
    }

    #[test]
    fn answer_lines_name_the_matches_under_the_programs_label() {
        let v = answer_line(3, 70, &[5, 9], "who");
        assert_eq!(v["query"], 3);
        assert_eq!(v["id"], 70);
        assert_eq!(v[MATCH_FIELD], true);
        assert_eq!(v["who"], serde_json::json!([5, 9]));
        assert_eq!(answer_line(0, 1, &[], "who")[MATCH_FIELD], false);
    }
}
