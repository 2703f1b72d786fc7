//! `irisc client`: a request to three serving parties (`--serve`). The plaintext queries are
//! secret-shared here, on the client's machine, and each party receives its own share only;
//! the answer comes from the party the program reveals to. A retry (after a network error or
//! a party's restart) resends the same shares under the same request id, which the parties
//! answer once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use base64::Engine;
use rand::SeedableRng;

use irisc_runtime::io::share_file;
use irisc_runtime::net::config::PartiesConfig;
use irisc_runtime::serve::client::{self, Reply};
use irisc_runtime::serve::wire::{Answer, Submit};
use irisc_runtime::vocab::InputRole;

use crate::analysis::plan::PlanOptions;

use super::dealer::{deal, share};
use super::pipeline;

/// One `irisc client` request.
#[derive(Debug, Clone)]
pub struct ClientRequest {
    pub program: PathBuf,
    /// `NAME=FILE`: the plaintext queries of each query input.
    pub inputs: Vec<String>,
    pub plan: PlanOptions,
    pub config: PathBuf,
    /// `N=HOST:PORT`: party N's client API (default: its `api` in the configuration).
    pub apis: Vec<String>,
    pub token: PathBuf,
    /// The request's id (default: a random one, printed on stderr).
    pub request_id: Option<String>,
    /// How long to keep trying, in all.
    pub timeout: Duration,
    /// `GALLERY=QUERY`: enrol query input QUERY's record into gallery GALLERY when no query of
    /// the request matched (uniqueness with enrolment).
    pub enroll: Vec<String>,
    /// Record ids to delete (then no queries).
    pub delete: Vec<u64>,
    /// Reauthentication: the claimed record id the queries are matched against, alone.
    pub reauth: Option<u64>,
    /// Reset: the record id whose records the `enroll` ones replace (they take this id).
    pub reset: Option<u64>,
}

/// The three parties' requests for `req`: each party's share of every query input.
pub fn prepare(req: &ClientRequest, id: &str) -> Result<[Submit; 3]> {
    let checked = pipeline::read_and_check(&req.program)?;
    let planned = pipeline::plan(&checked, &req.plan)?;
    let manifest = share::program_manifest(&checked, &planned)?;
    let mut rng = rand_chacha::ChaCha20Rng::try_from_os_rng()
        .map_err(|e| anyhow!("the operating system's random generator failed: {e}"))?;
    let mut submits: [Submit; 3] = std::array::from_fn(|_| Submit {
        request_id: id.to_string(),
        inputs: BTreeMap::new(),
        enroll: BTreeMap::new(),
        delete: Vec::new(),
        only: req.reauth,
        reset: req.reset,
    });
    let mut files_of = BTreeMap::new();
    for arg in &req.inputs {
        let (name, file) = share::parse_input_arg(arg)?;
        let spec = share::find_input(&manifest, &name)?;
        if spec.role != InputRole::Query {
            bail!(
                "input `{name}` is a gallery: a serving party's galleries are enrolled into its stores, a request brings only queries"
            );
        }
        files_of.insert(name.clone(), file.clone());
        for (p, b64) in deal_b64(spec, &file, None, &mut rng)?
            .into_iter()
            .enumerate()
        {
            submits[p].inputs.insert(name.clone(), b64);
        }
    }
    for arg in &req.enroll {
        let (gallery, query) = arg
            .split_once('=')
            .ok_or_else(|| anyhow!("--enroll {arg:?} must have the form GALLERY=QUERY_INPUT"))?;
        let spec = share::find_input(&manifest, gallery)?;
        if spec.role != InputRole::Gallery {
            bail!("--enroll {arg}: `{gallery}` is not a gallery input");
        }
        let file = files_of
            .get(query)
            .ok_or_else(|| anyhow!("--enroll {arg}: no --input {query}=FILE to enrol from"))?;
        // The same records, dealt afresh in the gallery's form (a Shamir gallery packs its
        // codes differently from a query); a reset's take the id they replace.
        for (p, b64) in deal_b64(spec, file, req.reset, &mut rng)?
            .into_iter()
            .enumerate()
        {
            submits[p].enroll.insert(gallery.to_string(), b64);
        }
    }
    for i in manifest.inputs_with(InputRole::Query) {
        let name = &manifest.inputs[i].name;
        if !submits[0].inputs.contains_key(name) {
            bail!("no queries for query input `{name}`: pass --input {name}=FILE");
        }
    }
    Ok(submits)
}

/// The three parties' share files (base64) of the NDJSON `file` dealt as input `spec`, every
/// record under id `id` when given (a reset's).
fn deal_b64(
    spec: &irisc_runtime::manifest::ManifestInput,
    file: &Path,
    id: Option<u64>,
    rng: &mut rand_chacha::ChaCha20Rng,
) -> Result<Vec<String>> {
    let mut plain = share::read_plain(spec, file)?;
    if let Some(id) = id {
        plain.ids.iter_mut().for_each(|x| *x = id);
    }
    let (sharing, ring_bits) = share::sharing_for(spec, None);
    let files = deal::deal(&plain, sharing, ring_bits, rng)
        .with_context(|| format!("cannot share {} as input `{}`", file.display(), spec.name))?;
    files
        .iter()
        .map(|f| Ok(base64::engine::general_purpose::STANDARD.encode(share_file::to_bytes(f)?)))
        .collect()
}

/// The client API address of each party: `--api N=ADDR`, else the configuration's `api`.
fn api_addresses(config: &PartiesConfig, flags: &[String]) -> Result<[String; 3]> {
    let mut out: [Option<String>; 3] =
        std::array::from_fn(|i| config.parties.get(i).and_then(|p| p.api.clone()));
    for f in flags {
        let (n, addr) = f
            .split_once('=')
            .ok_or_else(|| anyhow!("--api {f:?} must have the form N=HOST:PORT"))?;
        let n: usize = n
            .parse()
            .ok()
            .filter(|n| *n < 3)
            .ok_or_else(|| anyhow!("--api {f:?}: the party must be 0, 1 or 2"))?;
        out[n] = Some(addr.to_string());
    }
    let mut addrs = Vec::new();
    for (i, a) in out.into_iter().enumerate() {
        addrs.push(a.ok_or_else(|| {
            anyhow!("no client API address for party {i}: pass --api {i}=HOST:PORT or set `api` in its [[party]] entry")
        })?);
    }
    Ok([addrs[0].clone(), addrs[1].clone(), addrs[2].clone()])
}

/// Reads the bearer token (first line) of a file readable by its owner only.
pub fn read_token(path: &Path) -> Result<String> {
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    irisc_runtime::io::owner_only::check(path, &meta, "the API token").map_err(|e| anyhow!(e))?;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(text.lines().next().unwrap_or("").trim().to_string())
}

/// What talks to the parties' client APIs: TLS trusting the parties' CA, and a runtime of
/// this thread's.
fn api_client(config: &PartiesConfig) -> Result<(client::ClientTls, tokio::runtime::Runtime)> {
    let ca = std::fs::read(&config.ca)
        .with_context(|| format!("cannot read the CA {}", config.ca.display()))?;
    let tls = client::tls_config(&ca).map_err(|e| anyhow!(e))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok((tls, runtime))
}

/// `GET path` of each party's client API (`/metrics`, `/readyz`): status and body, or why
/// not, within `timeout` each.
pub fn get_each(
    config: &PartiesConfig,
    apis: &[String; 3],
    path: &str,
    timeout: Duration,
) -> Result<[std::result::Result<(u16, String), String>; 3]> {
    let (tls, runtime) = api_client(config)?;
    Ok(std::array::from_fn(|p| {
        runtime.block_on(client::get(tls.clone(), p, &apis[p], path, timeout))
    }))
}

/// Sends the three requests (retrying a party that cannot be reached, with the same shares,
/// until `timeout`) and returns the three answers.
pub fn send(
    config: &PartiesConfig,
    apis: &[String; 3],
    token: &str,
    submits: &[Submit; 3],
    timeout: Duration,
) -> Result<[Answer; 3]> {
    let (tls, runtime) = api_client(config)?;
    let deadline = Instant::now() + timeout;
    // Attempts: the request under its id, then (when a party restarted after the others had
    // answered, and so never hears of it again) the same shares under a derived id, which all
    // three compute afresh. An enrolment is never applied twice: the parties find the first
    // attempt's records, these very shares, in their stores and answer with the first
    // attempt's answer.
    let mut attempt = 0;
    let results = loop {
        let this: [Submit; 3] = std::array::from_fn(|p| Submit {
            request_id: if attempt == 0 {
                submits[p].request_id.clone()
            } else {
                irisc_runtime::serve::wire::derived_request_id(&submits[p].request_id, attempt)
            },
            inputs: submits[p].inputs.clone(),
            enroll: submits[p].enroll.clone(),
            delete: submits[p].delete.clone(),
            only: submits[p].only,
            reset: submits[p].reset,
        });
        let bound = (Instant::now() + ATTEMPT).min(deadline);
        let results = runtime.block_on(async {
            let one = |p: usize| {
                let tls = tls.clone();
                let submit = &this[p];
                async move {
                    loop {
                        let left = bound.saturating_duration_since(Instant::now());
                        match client::submit(tls.clone(), p, &apis[p], token, submit, left).await {
                            Ok(reply) => return Ok(reply),
                            // Unreachable or cut off: the party may be restarting; the same
                            // id and shares are answered once.
                            Err(e) if Instant::now() + Duration::from_millis(200) < bound => {
                                tracing::debug!("party {p}: {e}; retrying");
                                tokio::time::sleep(Duration::from_millis(200)).await;
                            }
                            Err(e) => return Err(e),
                        }
                    }
                }
            };
            tokio::join!(one(0), one(1), one(2))
        });
        let all = results.0.is_ok() && results.1.is_ok() && results.2.is_ok();
        if all || Instant::now() + Duration::from_millis(500) >= deadline {
            break results;
        }
        attempt += 1;
        tracing::debug!("attempt {attempt}: not all parties answered; again under a new id");
    };
    let results = [results.0, results.1, results.2];
    // Every party that failed is named (a party down shows as unreachable, the others as not
    // answering).
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| r.as_ref().err().cloned())
        .collect();
    if !failed.is_empty() {
        bail!("{}", failed.join("; "));
    }
    let mut answers = Vec::new();
    for (p, r) in results.into_iter().enumerate() {
        match r.map_err(|e| anyhow!(e))? {
            Reply::Answer(a) => match &a.error {
                Some(why) => bail!("party {p} did not compute request {}: {why}", a.request_id),
                None => answers.push(a),
            },
            Reply::Refused(status, why) => {
                bail!("party {p} refused the request (HTTP {status}): {why}")
            }
        }
    }
    let [a, b, c]: [Answer; 3] = answers
        .try_into()
        .map_err(|_| anyhow!("not three answers"))?;
    Ok([a, b, c])
}

/// How long one attempt of a request waits for all three parties before it is made again
/// under a derived id (a party that restarted after answering the others' batch).
const ATTEMPT: Duration = Duration::from_secs(15);

/// A fresh request id: 16 random bytes, hex.
pub fn random_id() -> Result<String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b)
        .map_err(|e| anyhow!("the operating system's random generator failed: {e}"))?;
    Ok(b.iter().map(|x| format!("{x:02x}")).collect())
}

/// `irisc client`: prints the revealed answers, one JSON line per query.
pub fn run_client(req: &ClientRequest) -> Result<ExitCode> {
    let id = match &req.request_id {
        Some(id) => id.clone(),
        None => {
            let id = random_id()?;
            eprintln!("request id {id}");
            id
        }
    };
    if !irisc_runtime::serve::wire::valid_request_id(&id) {
        bail!("--request-id must be 1 to 128 letters, digits, '.', '_' or '-'");
    }
    let token = read_token(&req.token)?;
    let submits = if req.delete.is_empty() {
        prepare(req, &id)?
    } else {
        std::array::from_fn(|_| Submit {
            request_id: id.clone(),
            inputs: BTreeMap::new(),
            enroll: BTreeMap::new(),
            delete: req.delete.clone(),
            only: None,
            reset: None,
        })
    };
    let config = PartiesConfig::load(&req.config)?;
    let apis = api_addresses(&config, &req.apis)?;
    let answers = send(&config, &apis, &token, &submits, req.timeout)?;
    if !req.delete.is_empty() {
        println!("{}", serde_json::json!({ "deleted": answers[0].deleted }));
    }
    if let Some(id) = req.reset {
        // Made in all three stores (a refusal was an error above).
        println!(
            "{}",
            serde_json::json!({ "reset": id, "replaced": answers[0].enrolled == Some(true) })
        );
    }
    for a in &answers {
        for line in &a.answers {
            println!("{}", line.get());
        }
    }
    Ok(ExitCode::SUCCESS)
}
