//! Section `serve`: the load and fault test of three serving parties (`--serve`), on loopback,
//! bounded in time and in kill events, stopping by itself.
//!
//! The program is `examples/iris_eyes_ids.irs` (both eyes, 31 rotations) against a generated
//! gallery (100 000 records by default) in each party's stores. Requests go through the client
//! library (`irisc::driver::client`: shared on this side, one share to each party), as
//! `irisc client` sends them. Three phases:
//!
//! 1. **latency**: one uniqueness check at a time (no other load): p50 and p99;
//! 2. **throughput**: as many concurrent clients as the parties batch (`--max-batch`), next to
//!    the batch executable's rate on the same stores, measured in the same run (its query
//!    phases, from `--stats`, without loading and connecting);
//! 3. **faults**: concurrent clients with a mix of request types (uniqueness with enrolment of
//!    new people, matches of enrolled people, reauthentication against the right and a wrong
//!    id, deletion of people enrolled earlier) while a party, chosen at random, is killed with
//!    SIGKILL at a random instant and started again, until the kill count or the time bound.
//!
//! Every answer is checked against what the generated data says (a query made as a
//! near-duplicate of record r matches r alone; a fresh person matches nothing until enrolled; a
//! deleted person never again). The audit at the end reads the three stores: the same records
//! in all three, every acknowledged enrolment present, every acknowledged deletion recorded by
//! all three; then the parties are started again and every deleted person is queried (no match)
//! and every enrolled one (a match on its own id).

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use irisc::analysis::plan::PlanOptions;
use irisc::codegen::Target;
use irisc::driver::client::{self, ClientRequest};
use irisc::driver::dealer::{share, store};
use irisc::driver::synth::iris;
use irisc::driver::{keys, run as party_run};
use irisc_runtime::iris::{IrisCode, IrisRecord};
use irisc_runtime::net::config::PartiesConfig;
use irisc_runtime::vocab::InputRole;

use super::plot;
use super::report::{MachineInfo, Measurement, Report};
use super::BenchOptions;

const PROGRAM: &str = include_str!("../../examples/iris_eyes_ids.irs");
/// The parties' batch bound, and the concurrent clients of the throughput phase.
const MAX_BATCH: usize = 8;
/// The latency target for one uniqueness check (both eyes, 31 rotations, 100 000
/// records, three parties on this machine).
const TARGET_P50_SECS: f64 = 1.5;
/// Ids of the people the load enrols (the gallery's are `0..records`).
const NEW_PEOPLE_BASE: u64 = 10_000_000;

/// The section's sizes: full, or `--quick`.
struct Sizes {
    latency_requests: usize,
    throughput_secs: u64,
    fault_clients: usize,
    kills: usize,
    /// Milliseconds between kills, drawn uniformly: long enough for a restart (loading the
    /// stores, linking) and a batch in between, or the parties only ever restart.
    kill_every: (u64, u64),
    fault_bound: Duration,
}

impl Sizes {
    fn of(opts: &BenchOptions) -> Sizes {
        let mut sizes = Sizes::default_for(opts);
        if let Some(k) = opts.serve_kills {
            sizes.kills = k;
        }
        sizes
    }

    fn default_for(opts: &BenchOptions) -> Sizes {
        if opts.quick {
            Sizes {
                latency_requests: 3,
                throughput_secs: 6,
                fault_clients: 3,
                kills: 3,
                kill_every: (1_000, 5_000),
                fault_bound: Duration::from_secs(90),
            }
        } else {
            Sizes {
                latency_requests: 20,
                throughput_secs: 60,
                fault_clients: 4,
                kills: 100,
                kill_every: (4_000, 12_000),
                fault_bound: Duration::from_secs(3600),
            }
        }
    }
}

pub fn about(opts: &BenchOptions) -> String {
    let s = Sizes::of(opts);
    format!(
        "serving parties under load and faults: iris_eyes_ids against {} records; {} single uniqueness checks, {} s of {MAX_BATCH} concurrent clients vs the batch executable, then {} clients with {} SIGKILL restarts and the durability audit",
        super::thousands(opts.gallery_records()),
        s.latency_requests,
        s.throughput_secs,
        s.fault_clients,
        s.kills
    )
}

/// The three serving parties: their processes, how to start one again, and their stores.
struct Parties {
    exe: PathBuf,
    config: PathBuf,
    token: PathBuf,
    apis: [String; 3],
    stores: [[PathBuf; 2]; 3],
    logs: PathBuf,
    children: [Option<Child>; 3],
}

impl Parties {
    fn spawn(&mut self, p: usize) -> Result<()> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.logs.join(format!("party{p}.log")))?;
        let child = Command::new(&self.exe)
            .args(["--party", &p.to_string()])
            .arg("--config")
            .arg(&self.config)
            .arg("--input")
            .arg(format!("left={}", self.stores[p][0].display()))
            .arg("--input")
            .arg(format!("right={}", self.stores[p][1].display()))
            .args(["--serve", &self.apis[p]])
            .arg("--api-token")
            .arg(&self.token)
            .args(["--max-batch", &MAX_BATCH.to_string(), "--timeout", "30"])
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .spawn()
            .with_context(|| format!("cannot start party {p}"))?;
        self.children[p] = Some(child);
        Ok(())
    }

    /// SIGKILL, and reaped.
    fn kill(&mut self, p: usize) {
        if let Some(mut c) = self.children[p].take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn kill_all(&mut self) {
        for p in 0..3 {
            self.kill(p);
        }
    }

    fn start_all(&mut self) -> Result<()> {
        for p in 0..3 {
            self.spawn(p)?;
        }
        Ok(())
    }
}

impl Drop for Parties {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// One person: both eyes' codes, and the id it is (or would be) enrolled under.
#[derive(Clone)]
struct Person {
    id: u64,
    left: IrisCode,
    right: IrisCode,
}

/// What a request asks, and so what its answer must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    /// Uniqueness with enrolment of a person never seen.
    Unique,
    /// Uniqueness (no enrolment) of a person in the gallery or enrolled.
    Match,
    /// Reauthentication against the person's own id.
    ReauthRight,
    /// Reauthentication against another record's id.
    ReauthWrong,
    /// Deletion of a person enrolled earlier.
    Delete,
    /// Reset of a person enrolled earlier: a new capture (the person's codes from then on)
    /// replaces their record.
    Reset,
    /// A query of a deleted person (the audit): matches nothing.
    Gone,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Unique => "uniqueness+enrol",
            Kind::Match => "uniqueness (known person)",
            Kind::ReauthRight => "reauth (right id)",
            Kind::ReauthWrong => "reauth (wrong id)",
            Kind::Delete => "deletion",
            Kind::Reset => "reset",
            Kind::Gone => "uniqueness (deleted person)",
        }
    }
}

/// One finished request.
struct Outcome {
    kind: Kind,
    phase: &'static str,
    secs: f64,
    /// `None`: answered as the data says; else why not (an error, or a wrong answer).
    failure: Option<String>,
    wrong: bool,
}

/// Shared by the client threads: the people, what is enrolled and deleted (acknowledged), and
/// the outcomes.
struct Load {
    work: PathBuf,
    program: PathBuf,
    plan: PlanOptions,
    config: PartiesConfig,
    config_path: PathBuf,
    apis: [String; 3],
    token: String,
    gallery: Vec<Person>,
    /// Near-duplicates of gallery records: the person's fresh captures.
    next_new: AtomicUsize,
    enrolled: Mutex<Vec<Person>>,
    deleted: Mutex<Vec<Person>>,
    /// Enrolled people a request is in flight for: a match and a deletion of the same person
    /// never overlap (the expected answer would depend on which the parties batch first).
    busy: Mutex<BTreeSet<u64>>,
    outcomes: Mutex<Vec<Outcome>>,
    requests: AtomicUsize,
}

impl Load {
    /// Sends one request of `kind` for `person` (a near-duplicate capture of it), checks the
    /// answer, and records the outcome.
    fn request(&self, kind: Kind, person: &Person, claimed: Option<u64>, phase: &'static str) {
        let n = self.requests.fetch_add(1, Ordering::SeqCst);
        let id = format!("{phase}-{n}");
        let started = Instant::now();
        let result = self.exchange(kind, person, claimed, &id);
        let secs = started.elapsed().as_secs_f64();
        let (failure, wrong) = match result {
            Ok(None) => (None, false),
            Ok(Some(wrong)) => (Some(wrong), true),
            Err(e) => (Some(error_cause(&format!("{e:#}"))), false),
        };
        if let Ok(mut o) = self.outcomes.lock() {
            o.push(Outcome {
                kind,
                phase,
                secs,
                failure,
                wrong,
            });
        }
    }

    /// `Ok(None)`: the answer is right; `Ok(Some(why))`: it is wrong.
    fn exchange(
        &self,
        kind: Kind,
        person: &Person,
        claimed: Option<u64>,
        id: &str,
    ) -> Result<Option<String>> {
        let timeout = Duration::from_secs(120);
        if kind == Kind::Delete {
            let submits = std::array::from_fn(|_| irisc_runtime::serve::wire::Submit {
                request_id: id.to_string(),
                inputs: BTreeMap::new(),
                enroll: BTreeMap::new(),
                delete: vec![person.id],
                only: None,
                reset: None,
            });
            let answers = client::send(&self.config, &self.apis, &self.token, &submits, timeout)?;
            if !answers[0].deleted.contains(&person.id) {
                return Ok(Some(format!("deletion of {} not acknowledged", person.id)));
            }
            if let Ok(mut d) = self.deleted.lock() {
                d.push(person.clone());
            }
            return Ok(None);
        }
        let mut rng = rand_chacha::ChaCha20Rng::from_os_rng();
        let opts = iris::GenOptions::default();
        let capture = |code: &IrisCode, rng: &mut rand_chacha::ChaCha20Rng| {
            iris::near_duplicate(rng, code, &opts).rotate(rng.random_range(-3..=3))
        };
        let dir = self.work.join("requests");
        std::fs::create_dir_all(&dir)?;
        let files = [("ql", &person.left), ("qr", &person.right)].map(|(name, code)| {
            let path = dir.join(format!("{id}-{name}.ndjson"));
            (name, path, capture(code, &mut rng))
        });
        let mut inputs = Vec::new();
        for (name, path, code) in &files {
            iris::write_records(
                path,
                &[IrisRecord {
                    id: person.id,
                    iris: code.clone(),
                }],
            )?;
            inputs.push(format!("{name}={}", path.display()));
        }
        let req = ClientRequest {
            program: self.program.clone(),
            inputs,
            plan: self.plan,
            config: self.config_path.clone(),
            apis: Vec::new(),
            token: PathBuf::new(),
            request_id: Some(id.to_string()),
            timeout,
            enroll: if matches!(kind, Kind::Unique | Kind::Reset) {
                vec!["left=ql".into(), "right=qr".into()]
            } else {
                Vec::new()
            },
            delete: Vec::new(),
            reauth: claimed,
            reset: (kind == Kind::Reset).then_some(person.id),
        };
        let submits = client::prepare(&req, id)?;
        for (_, path, _) in &files {
            let _ = std::fs::remove_file(path);
        }
        let answers = client::send(&self.config, &self.apis, &self.token, &submits, timeout)?;
        let lines: Vec<serde_json::Value> = answers[0]
            .answers
            .iter()
            .map(|l| serde_json::from_str(l.get()))
            .collect::<Result<_, _>>()?;
        let ids: Vec<u64> = lines
            .first()
            .and_then(|l| l.get("ids"))
            .and_then(|v| v.as_array())
            .ok_or_else(|| anyhow!("the answer has no ids: {lines:?}"))?
            .iter()
            .filter_map(|x| x.as_u64())
            .collect();
        let expected: Vec<u64> = match kind {
            // A fresh person matches nothing. A retry under a derived id after the first
            // attempt enrolled it is answered with the first attempt's answer from the parties'
            // journals; where a party could not replay it (killed between its commit and its
            // journal line), the retry computed afresh matches the person's own new record.
            Kind::Unique => {
                let enrolled = answers[0].enrolled == Some(true);
                if enrolled {
                    if let Ok(mut e) = self.enrolled.lock() {
                        e.push(person.clone());
                    }
                }
                if ids.is_empty() || ids == [person.id] {
                    return Ok(None);
                }
                return Ok(Some(format!(
                    "a fresh person {} matched {ids:?} (enrolled: {enrolled})",
                    person.id
                )));
            }
            // The new capture is compared before it replaces the record: a fresh code that
            // matches nothing (or, retried and computed afresh as above, its own new record).
            Kind::Reset => {
                if answers[0].enrolled != Some(true) {
                    return Ok(Some(format!("reset of {} not made", person.id)));
                }
                if let Ok(mut e) = self.enrolled.lock() {
                    if let Some(old) = e.iter_mut().find(|p| p.id == person.id) {
                        *old = person.clone();
                    }
                }
                if ids == [person.id] {
                    return Ok(None);
                }
                Vec::new()
            }
            Kind::Match | Kind::ReauthRight => vec![person.id],
            Kind::ReauthWrong | Kind::Delete | Kind::Gone => Vec::new(),
        };
        if ids != expected {
            return Ok(Some(format!(
                "{} of {}: ids {ids:?}, expected {expected:?}",
                kind.name(),
                person.id
            )));
        }
        Ok(None)
    }

    fn fresh_person(&self) -> Person {
        let k = self.next_new.fetch_add(1, Ordering::SeqCst) as u64;
        let bits = self.gallery[0].left.bits();
        let gen = iris::GenOptions::default();
        let eye = |seed: u64| {
            iris::generate(1, seed, bits, &gen)
                .ok()
                .and_then(|mut v| v.pop())
                .map(|r| r.iris)
                .unwrap_or_else(|| self.gallery[0].left.clone())
        };
        Person {
            id: NEW_PEOPLE_BASE + k,
            left: eye(1_000_000 + 2 * k),
            right: eye(1_000_001 + 2 * k),
        }
    }

    /// An enrolled person, not deleted and not in a request now (`pick` chooses among them),
    /// marked busy until [`Load::release`].
    fn claim_enrolled(&self, pick: usize) -> Option<Person> {
        let enrolled = self.enrolled.lock().ok()?;
        let deleted = self.deleted.lock().ok()?;
        let mut busy = self.busy.lock().ok()?;
        let free: Vec<&Person> = enrolled
            .iter()
            .filter(|p| !busy.contains(&p.id) && !deleted.iter().any(|d| d.id == p.id))
            .collect();
        let p = (*free.get(pick % free.len().max(1))?).clone();
        busy.insert(p.id);
        Some(p)
    }

    fn release(&self, p: &Person) {
        if let Ok(mut b) = self.busy.lock() {
            b.remove(&p.id);
        }
    }

    /// One request of the fault phase's mix.
    fn mixed_request(&self, rng: &mut impl Rng) {
        let roll = rng.random_range(0..100);
        let pick = rng.random_range(0..self.gallery.len());
        let known = || -> Person { self.gallery[pick].clone() };
        match roll {
            0..40 => self.request(Kind::Unique, &self.fresh_person(), None, "faults"),
            // Half of the matches are of people the load enrolled (claimed only then: a
            // claimed person is busy until released).
            40..65 => match (roll % 2 == 0).then(|| self.claim_enrolled(pick)).flatten() {
                Some(p) => {
                    self.request(Kind::Match, &p, None, "faults");
                    self.release(&p);
                }
                None => self.request(Kind::Match, &known(), None, "faults"),
            },
            65..80 => {
                let p = known();
                self.request(Kind::ReauthRight, &p, Some(p.id), "faults")
            }
            80..90 => {
                let p = known();
                let other = (p.id + 1) % self.gallery.len() as u64;
                self.request(Kind::ReauthWrong, &p, Some(other), "faults")
            }
            90..95 => match self.claim_enrolled(pick) {
                Some(p) => {
                    let new = self.fresh_person();
                    let replacement = Person { id: p.id, ..new };
                    self.request(Kind::Reset, &replacement, None, "faults");
                    // A reset that failed may or may not have been made: that person stays
                    // busy, never queried again.
                    let made = self.enrolled.lock().is_ok_and(|e| {
                        e.iter().any(|x| x.id == p.id && x.left == replacement.left)
                    });
                    if made {
                        self.release(&p);
                    }
                }
                None => self.request(Kind::Unique, &self.fresh_person(), None, "faults"),
            },
            _ => match self.claim_enrolled(pick) {
                Some(p) => {
                    self.request(Kind::Delete, &p, None, "faults");
                    // A deletion that failed may or may not have been made: that person stays
                    // busy, never queried again.
                    if self
                        .deleted
                        .lock()
                        .is_ok_and(|d| d.iter().any(|x| x.id == p.id))
                    {
                        self.release(&p);
                    }
                }
                None => self.request(Kind::Unique, &self.fresh_person(), None, "faults"),
            },
        }
    }
}

/// The cause of a failed request, without the request's own ids (so causes group).
fn error_cause(e: &str) -> String {
    let first = e.lines().next().unwrap_or(e);
    let mut out = String::new();
    let mut digits = false;
    for c in first.chars() {
        if c.is_ascii_digit() {
            if !digits {
                out.push('N');
            }
            digits = true;
        } else {
            digits = false;
            out.push(c);
        }
    }
    out.chars().take(160).collect()
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let records = opts.gallery_records();
    if records < 16 {
        bail!("serve: --records must be at least 16");
    }
    let sizes = Sizes::of(opts);
    let work = tempfile::Builder::new()
        .prefix("irisc-serve-")
        .tempdir_in(std::env::temp_dir())?;
    let work = work.path().to_path_buf();
    let plan = PlanOptions {
        threshold_placement: opts.serve_threshold_placement,
        ..PlanOptions::default()
    };
    let super::Built {
        program,
        manifest,
        exe,
        ..
    } = super::build_program(&work, "iris_eyes_ids", PROGRAM, &plan, Target::Cpu)?;
    let bits = manifest
        .inputs
        .iter()
        .find(|i| i.role == InputRole::Gallery)
        .map(|i| i.elements as usize)
        .ok_or_else(|| anyhow!("serve: the program has no gallery"))?;

    // The gallery: people 0..records, both eyes.
    eprintln!("serve: generating and sharing {records} records (both eyes)");
    let gen = iris::GenOptions::default();
    let left = iris::generate(records, 7, bits, &gen)?;
    let right = iris::generate(records, 8, bits, &gen)?;
    let gallery: Vec<Person> = left
        .iter()
        .zip(&right)
        .map(|(l, r)| Person {
            id: l.id,
            left: l.iris.clone(),
            right: r.iris.clone(),
        })
        .collect();
    let mut stores: [[PathBuf; 2]; 3] = Default::default();
    for (e, (name, recs)) in [("left", &left), ("right", &right)].into_iter().enumerate() {
        let file = work.join(format!("{name}.ndjson"));
        iris::write_records(&file, recs)?;
        let spec = share::find_input(&manifest, name)?;
        let paths = [0, 1, 2].map(|p| work.join(format!("p{p}")).join(format!("{name}.store")));
        let paths = store::share_to_stores(&manifest.fingerprint, spec, &file, paths)?;
        for p in 0..3 {
            stores[p][e] = paths[p].clone();
        }
        let _ = std::fs::remove_file(&file);
    }
    drop(left);
    drop(right);

    let base = party_run::free_base_port()?;
    let config_path = keys::generate_keys(&work.join("keys"), base, true)?;
    let config = PartiesConfig::load(&config_path)?;
    let api_base = party_run::free_base_port()?;
    let apis: [String; 3] = [0, 1, 2].map(|p| format!("127.0.0.1:{}", api_base + p as u16));
    let token_path = work.join("keys").join("api.token");
    let token = client::random_id()?;
    write_owner_only(&token_path, token.as_bytes())?;

    // The batch executable's rate on the same stores: MAX_BATCH queries, one run.
    let batch = batch_baseline(&exe, &config_path, &manifest, &stores, &gallery, &work)?;
    eprintln!(
        "serve: batch executable: {MAX_BATCH} queries in {:.2} s of query phases ({:.2} queries/s)",
        batch.secs,
        MAX_BATCH as f64 / batch.secs
    );

    let logs = work.join("logs");
    std::fs::create_dir_all(&logs)?;
    let mut parties = Parties {
        exe,
        config: config_path.clone(),
        token: token_path,
        apis: apis.clone(),
        stores: stores.clone(),
        logs: logs.clone(),
        children: [None, None, None],
    };
    parties.start_all()?;
    let load = Arc::new(Load {
        work: work.clone(),
        program,
        plan,
        config,
        config_path: config_path.clone(),
        apis,
        token,
        gallery,
        next_new: AtomicUsize::new(0),
        enrolled: Mutex::new(Vec::new()),
        deleted: Mutex::new(Vec::new()),
        busy: Mutex::new(BTreeSet::new()),
        outcomes: Mutex::new(Vec::new()),
        requests: AtomicUsize::new(0),
    });
    let result = phases(&load, &mut parties, &sizes, opts);
    let party_logs = || {
        (0..3)
            .map(|p| {
                std::fs::read_to_string(logs.join(format!("party{p}.log"))).unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (kills, fault_secs, audit, throughput_use) = match result {
        Ok(r) => r,
        Err(e) => bail!("serve: {e:#}\nparty logs:\n{}", party_logs()),
    };
    parties.kill_all();
    write(
        dir,
        opts,
        records,
        &load,
        &batch,
        kills,
        fault_secs,
        &audit,
        &throughput_use,
    )
}

fn write_owner_only(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    o.open(path)?.write_all(bytes)?;
    Ok(())
}

/// The batch executable's time for [`MAX_BATCH`] queries (near-duplicates of gallery records)
/// on the same stores: the sum of its query phases as party 0's `--stats` reports them.
struct Baseline {
    secs: f64,
}

fn batch_baseline(
    exe: &Path,
    config: &Path,
    manifest: &irisc_runtime::manifest::Manifest,
    stores: &[[PathBuf; 2]; 3],
    gallery: &[Person],
    work: &Path,
) -> Result<Baseline> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
    let gen = iris::GenOptions::default();
    let people: Vec<&Person> = (0..MAX_BATCH)
        .map(|_| &gallery[rng.random_range(0..gallery.len())])
        .collect();
    let mut args: [Vec<String>; 3] = std::array::from_fn(|p| {
        vec![
            "--input".into(),
            format!("left={}", stores[p][0].display()),
            "--input".into(),
            format!("right={}", stores[p][1].display()),
        ]
    });
    for (name, eye) in [("ql", 0), ("qr", 1)] {
        let recs: Vec<IrisRecord> = people
            .iter()
            .enumerate()
            .map(|(i, p)| IrisRecord {
                id: i as u64,
                iris: iris::near_duplicate(
                    &mut rng,
                    if eye == 0 { &p.left } else { &p.right },
                    &gen,
                ),
            })
            .collect();
        let file = work.join(format!("baseline-{name}.ndjson"));
        iris::write_records(&file, &recs)?;
        let spec = share::find_input(manifest, name)?;
        let paths = share::input_paths(&work.join("baseline"), name);
        let paths = share::share_input_to(spec, None, &file, paths)?;
        for (a, p) in args.iter_mut().zip(&paths) {
            a.push("--input".into());
            a.push(format!("{name}={}", p.display()));
        }
    }
    let stats: Vec<PathBuf> = (0..3)
        .map(|p| work.join(format!("baseline-stats-{p}.json")))
        .collect();
    for (a, s) in args.iter_mut().zip(&stats) {
        a.push("--stats".into());
        a.push(s.display().to_string());
    }
    let outcome = party_run::launch_parties_with_env(
        exe,
        [config; 3],
        &args,
        &["--timeout".to_string(), "600".to_string()],
        &[],
        Duration::from_secs(1800),
    )?;
    for (p, o) in outcome.iter().enumerate() {
        if !o.success {
            bail!(
                "serve: the batch executable's party {p} failed:\n{}",
                o.stderr
            );
        }
    }
    // Every printed answer names its person's record.
    let lines: Vec<serde_json::Value> = outcome[0]
        .stdout
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    for (i, (l, p)) in lines.iter().zip(&people).enumerate() {
        let ids = l["ids"].as_array().cloned().unwrap_or_default();
        if !ids.iter().any(|x| x.as_u64() == Some(p.id)) {
            bail!(
                "serve: the batch executable's query {i} does not match record {}: {l}",
                p.id
            );
        }
    }
    let acc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&stats[0])?)?;
    let field = |k: &str| {
        acc[k]
            .as_f64()
            .ok_or_else(|| anyhow!("serve: the batch executable's stats have no {k}: {acc}"))
    };
    let secs = field("total_s")? - field("load_s")? - field("connect_s")?;
    Ok(Baseline { secs })
}

/// The three phases; returns the kill count, the fault phase's seconds and the audit.
fn phases(
    load: &Arc<Load>,
    parties: &mut Parties,
    sizes: &Sizes,
    opts: &BenchOptions,
) -> Result<(usize, f64, serde_json::Value, serde_json::Value)> {
    // Warm up: the first request waits for the parties to link.
    eprintln!("serve: waiting for the parties");
    let first = load.gallery[0].clone();
    load.request(Kind::Match, &first, None, "warmup");
    if let Some(f) = load
        .outcomes
        .lock()
        .unwrap()
        .last()
        .and_then(|o| o.failure.clone())
    {
        bail!("the first request failed: {f}");
    }

    eprintln!(
        "serve: latency, {} single uniqueness checks",
        sizes.latency_requests
    );
    for i in 0..sizes.latency_requests {
        let p = load.gallery[(i * 7919) % load.gallery.len()].clone();
        load.request(Kind::Match, &p, None, "latency");
    }

    eprintln!(
        "serve: throughput, {MAX_BATCH} concurrent clients for {} s",
        sizes.throughput_secs
    );
    let before = Snapshot::take(load);
    let until = Instant::now() + Duration::from_secs(sizes.throughput_secs);
    std::thread::scope(|s| {
        for c in 0..MAX_BATCH {
            let load = load.clone();
            s.spawn(move || {
                let mut k = c;
                while Instant::now() < until {
                    let p = load.gallery[(k * 104_729) % load.gallery.len()].clone();
                    load.request(Kind::Match, &p, None, "throughput");
                    k += MAX_BATCH;
                }
            });
        }
    });

    // The phase's wall time runs until the last request sent in the window is answered.
    let throughput_wall_s =
        (Instant::now() - (until - Duration::from_secs(sizes.throughput_secs))).as_secs_f64();
    let throughput_use = Snapshot::take(load).since(&before);
    eprintln!("serve: throughput phase ({throughput_wall_s:.1} s): {throughput_use}");
    let mut throughput_json = throughput_use.to_json();
    throughput_json["wall_seconds"] = json!(throughput_wall_s);

    eprintln!(
        "serve: faults, {} clients, {} SIGKILL restarts",
        sizes.fault_clients, sizes.kills
    );
    let bar = if opts.progress {
        let b = ProgressBar::new(sizes.kills as u64);
        b.set_style(
            ProgressStyle::with_template("serve: {bar:40} {pos}/{len} kills, {msg} [{elapsed}]")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let mut kills = 0;
    std::thread::scope(|s| -> Result<()> {
        for c in 0..sizes.fault_clients {
            let load = load.clone();
            let stop = &stop;
            s.spawn(move || {
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(100 + c as u64);
                while !stop.load(Ordering::SeqCst) {
                    load.mixed_request(&mut rng);
                }
            });
        }
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(31);
        while kills < sizes.kills && started.elapsed() < sizes.fault_bound {
            std::thread::sleep(Duration::from_millis(
                rng.random_range(sizes.kill_every.0..sizes.kill_every.1),
            ));
            let victim = rng.random_range(0..3);
            parties.kill(victim);
            parties.spawn(victim)?;
            kills += 1;
            bar.set_position(kills as u64);
            bar.set_message(format!("{} requests", load.requests.load(Ordering::SeqCst)));
        }
        stop.store(true, Ordering::SeqCst);
        Ok(())
    })?;
    bar.finish_and_clear();
    let fault_secs = started.elapsed().as_secs_f64();

    // The audit: the stores as the parties left them (stopped between requests).
    eprintln!("serve: audit");
    // One more request so every party has reconnected and reconciled after the last restart.
    load.request(Kind::Match, &first, None, "audit");
    parties.kill_all();
    let audit = audit(load, parties)?;
    Ok((kills, fault_secs, audit, throughput_json))
}

/// What the parties and the machine have done so far, read from each party's `/metrics` and
/// `/proc/meminfo`: the difference of two is what a phase cost, to tell a slow phase's cause
/// (batches too small, CPU, or gallery pages read back from disk).
#[derive(Debug, Clone, Default)]
struct Snapshot {
    /// Per party: batches, queries in them, seconds in them, CPU seconds, major page faults.
    parties: [[f64; 5]; 3],
    /// MemAvailable and Cached of the machine (bytes).
    mem_available: u64,
    cached: u64,
}

impl Snapshot {
    const METRICS: [&'static str; 5] = [
        "irisc_batches_total",
        "irisc_batch_queries_sum",
        "irisc_batch_seconds_sum",
        "irisc_process_cpu_seconds_total",
        "irisc_process_major_page_faults_total",
    ];

    fn take(load: &Load) -> Snapshot {
        let mut snap = Snapshot::default();
        let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let kb = |key: &str| -> u64 {
            text.lines()
                .find_map(|l| {
                    l.strip_prefix(key)?
                        .trim()
                        .trim_end_matches("kB")
                        .trim()
                        .parse()
                        .ok()
                })
                .unwrap_or(0)
                * 1024
        };
        snap.mem_available = kb("MemAvailable:");
        snap.cached = kb("Cached:");
        let Ok(replies) = client::get_each(
            &load.config,
            &load.apis,
            "/metrics",
            Duration::from_secs(10),
        ) else {
            return snap;
        };
        for (row, got) in snap.parties.iter_mut().zip(replies) {
            let Ok((200, text)) = got else { continue };
            for (k, name) in Self::METRICS.iter().enumerate() {
                row[k] = text
                    .lines()
                    .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
                    .unwrap_or(0.0);
            }
        }
        snap
    }

    fn since(&self, earlier: &Snapshot) -> Snapshot {
        let mut d = self.clone();
        for (row, old) in d.parties.iter_mut().zip(&earlier.parties) {
            for (v, o) in row.iter_mut().zip(old) {
                *v -= o;
            }
        }
        // The machine's memory: before and after, not a difference.
        d.mem_available = self.mem_available.min(earlier.mem_available);
        d.cached = self.cached.min(earlier.cached);
        d
    }

    fn to_json(&self) -> serde_json::Value {
        json!({
            "per_party": self.parties.iter().map(|r| json!({
                "batches": r[0],
                "mean_batch_queries": if r[0] > 0.0 { r[1] / r[0] } else { 0.0 },
                "batch_seconds": r[2],
                "cpu_seconds": r[3],
                "major_page_faults": r[4],
            })).collect::<Vec<_>>(),
            "least_mem_available_bytes": self.mem_available,
            "least_page_cache_bytes": self.cached,
        })
    }
}

impl std::fmt::Display for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (p, r) in self.parties.iter().enumerate() {
            write!(
                f,
                "party {p}: {} batches of {:.1} queries, {:.1} s, {:.1} CPU s, {} major faults; ",
                r[0],
                if r[0] > 0.0 { r[1] / r[0] } else { 0.0 },
                r[2],
                r[3],
                r[4]
            )?;
        }
        write!(
            f,
            "memory available at least {:.1} GB, page cache {:.1} GB",
            self.mem_available as f64 / 1e9,
            self.cached as f64 / 1e9
        )
    }
}

/// Reads the three parties' stores; then starts them again and queries every deleted person
/// (no match) and every enrolled one (a match on its own id).
fn audit(load: &Arc<Load>, parties: &mut Parties) -> Result<serde_json::Value> {
    use irisc_runtime::store::{deleted, Store};
    let mut ids: Vec<Vec<Vec<u64>>> = Vec::new();
    let mut tombstones: Vec<Vec<BTreeSet<u64>>> = Vec::new();
    for p in 0..3 {
        let mut per_eye = Vec::new();
        let mut dels = Vec::new();
        for path in &parties.stores[p] {
            let s = Store::open(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
            per_eye.push(s.ids());
            let d = deleted::read(path).map_err(|e| anyhow!(e))?;
            dels.push(d.into_iter().collect::<BTreeSet<u64>>());
        }
        ids.push(per_eye);
        tombstones.push(dels);
    }
    let same = ids.iter().all(|x| x == &ids[0]) && tombstones.iter().all(|x| x == &tombstones[0]);
    let enrolled = load.enrolled.lock().unwrap().clone();
    let deleted_people = load.deleted.lock().unwrap().clone();
    let held: BTreeSet<u64> = ids[0][0].iter().copied().collect();
    let lost: Vec<u64> = enrolled
        .iter()
        .map(|p| p.id)
        .filter(|id| !held.contains(id))
        .collect();
    let deletions_missing: Vec<u64> = deleted_people
        .iter()
        .map(|p| p.id)
        .filter(|id| !(0..3).all(|p| tombstones[p].iter().all(|t| t.contains(id))))
        .collect();
    // People whose deletion or reset failed on the client's side are in doubt: the parties
    // may have made it (all three, or none: the stores are compared above). They are not
    // queried; a deletion made without its answer shows in all three parties' tombstones.
    let in_doubt: BTreeSet<u64> = load.busy.lock().map(|b| b.clone()).unwrap_or_default();
    let deleted_unacknowledged: Vec<u64> = in_doubt
        .iter()
        .copied()
        .filter(|id| (0..3).all(|p| tombstones[p].iter().all(|t| t.contains(id))))
        .collect();
    // Queries after a restart of all three.
    parties.start_all()?;
    let deleted_ids: BTreeSet<u64> = deleted_people.iter().map(|p| p.id).collect();
    for p in &deleted_people {
        load.request(Kind::Gone, p, None, "audit-deleted");
    }
    for p in enrolled
        .iter()
        .filter(|p| !deleted_ids.contains(&p.id) && !in_doubt.contains(&p.id))
        .take(20)
    {
        load.request(Kind::Match, p, None, "audit-enrolled");
    }
    let outcomes = load.outcomes.lock().unwrap();
    let audit_wrong = outcomes
        .iter()
        .filter(|o| o.phase.starts_with("audit-") && o.failure.is_some())
        .count();
    Ok(json!({
        "stores_identical": same,
        "records_per_party": ids[0][0].len(),
        "acknowledged_enrolments": enrolled.len(),
        "acknowledged_enrolments_lost": lost,
        "acknowledged_deletions": deleted_people.len(),
        "deletions_not_recorded_by_all": deletions_missing,
        "in_doubt_after_a_failed_deletion_or_reset": in_doubt,
        "of_which_deleted_by_all_without_an_answer": deleted_unacknowledged,
        "audit_queries_not_as_expected": audit_wrong,
    }))
}

#[allow(clippy::too_many_arguments)]
fn write(
    dir: &Path,
    opts: &BenchOptions,
    records: usize,
    load: &Load,
    batch: &Baseline,
    kills: usize,
    fault_secs: f64,
    audit: &serde_json::Value,
    throughput_use: &serde_json::Value,
) -> Result<Vec<PathBuf>> {
    let sizes = Sizes::of(opts);
    let outcomes = load.outcomes.lock().unwrap();
    let mut measurements = Vec::new();
    let mut m = |name: &str, value: f64, unit: &str, extra: serde_json::Value| {
        measurements.push(Measurement {
            name: name.to_string(),
            value,
            unit: unit.to_string(),
            extra: extra
                .as_object()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .collect(),
        });
    };
    let secs_of = |phase: &str, kind: Option<Kind>| -> Vec<f64> {
        let mut v: Vec<f64> = outcomes
            .iter()
            .filter(|o| o.phase == phase && o.failure.is_none() && kind.is_none_or(|k| o.kind == k))
            .map(|o| o.secs)
            .collect();
        v.sort_by(f64::total_cmp);
        v
    };
    let lat = secs_of("latency", None);
    m(
        "uniqueness check latency p50 (alone)",
        percentile(&lat, 0.5),
        "s",
        json!({"p99_s": percentile(&lat, 0.99), "requests": lat.len(), "target_s": TARGET_P50_SECS,
               "comparisons": records * 2 * 31}),
    );
    let thr = secs_of("throughput", None);
    // Requests answered over the phase's wall time (the window and the answers of the requests
    // sent in it), not over the window alone: those answered after it would inflate the rate.
    let wall = throughput_use["wall_seconds"]
        .as_f64()
        .unwrap_or_else(|| opts_throughput_secs(opts));
    let served = thr.len() as f64 / wall;
    let batch_rate = MAX_BATCH as f64 / batch.secs;
    m(
        "service throughput",
        served,
        "requests/s",
        json!({"clients": MAX_BATCH, "batch_executable_queries_per_s": batch_rate,
               "ratio_to_batch_executable": served / batch_rate,
               "p50_s": percentile(&thr, 0.5), "p99_s": percentile(&thr, 0.99),
               "parties_during_phase": throughput_use}),
    );
    let mut kinds: Vec<Kind> = outcomes
        .iter()
        .filter(|o| o.phase == "faults")
        .map(|o| o.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    // The single check alone first: the bar the target line is for.
    let mut groups = vec!["uniqueness check alone".to_string()];
    let (mut p50s, mut p99s) = (vec![percentile(&lat, 0.5)], vec![percentile(&lat, 0.99)]);
    for k in kinds {
        let v = secs_of("faults", Some(k));
        let all = outcomes
            .iter()
            .filter(|o| o.phase == "faults" && o.kind == k)
            .count();
        m(
            &format!("under faults: {}", k.name()),
            percentile(&v, 0.5),
            "s (p50)",
            json!({"p99_s": percentile(&v, 0.99), "answered": v.len(), "requests": all,
                   "per_s": v.len() as f64 / fault_secs}),
        );
        groups.push(k.name().to_string());
        p50s.push(percentile(&v, 0.5));
        p99s.push(percentile(&v, 0.99));
    }
    let mut causes: BTreeMap<String, usize> = BTreeMap::new();
    for o in outcomes.iter().filter(|o| o.failure.is_some()) {
        *causes
            .entry(format!(
                "{}{}: {}",
                o.phase,
                if o.wrong { " WRONG ANSWER" } else { "" },
                o.failure.as_deref().unwrap_or("")
            ))
            .or_default() += 1;
    }
    let wrong = outcomes.iter().filter(|o| o.wrong).count();
    m(
        "wrong answers",
        wrong as f64,
        "requests",
        json!({"requests": outcomes.len(), "kill_events": kills, "fault_phase_s": fault_secs}),
    );
    m(
        "acknowledged enrolments lost",
        audit["acknowledged_enrolments_lost"]
            .as_array()
            .map_or(0, Vec::len) as f64,
        "records",
        audit.clone(),
    );
    let report = Report {
        section: "serve".into(),
        quick: opts.quick,
        machine: MachineInfo::collect(),
        config: json!({
            "program": "examples/iris_eyes_ids.irs (both eyes, 31 rotations)",
            "threshold_placement": opts
                .serve_threshold_placement
                .map_or("the compiler's default (record_thirds)", |p| p.name()),
            "records": records,
            "max_batch": MAX_BATCH,
            "parties": "three serving processes (--serve), mutually authenticated TLS over loopback; clients over HTTPS with a bearer token",
            "client": "irisc::driver::client (shares each request here, one share to each party), as `irisc client`",
            "kills": format!("SIGKILL of a random party every {} to {} s, started again at once", sizes.kill_every.0 / 1000, sizes.kill_every.1 / 1000),
            "errors_by_cause": causes,
        }),
        measurements,
        references: vec![Measurement {
            name: "target: uniqueness check p50 (100 000 records, both eyes)".into(),
            value: TARGET_P50_SECS,
            unit: "s".into(),
            extra: Default::default(),
        }],
        notes: vec![
            "Answers are checked against the generated data: a capture of record r matches r alone, a fresh person nothing until enrolled, a deleted person never again.".into(),
            "Throughput's baseline is the batch executable's query phases (--stats, without loading and connecting) for the same batch size on the same stores, in the same run.".into(),
        ],
    };
    let json_path = report.write(dir)?;
    let png = dir.join("serve.png");
    plot::grouped_bars(
        &png,
        &format!(
            "Serving: a check alone, then under SIGKILL restarts ({kills} kills), {} records",
            super::thousands(records)
        ),
        "latency (s)",
        &groups,
        &[("p50".into(), p50s), ("p99".into(), p99s)],
        &[plot::RefLine {
            label: "target p50 alone".into(),
            value: TARGET_P50_SECS,
        }],
    )?;
    Ok(vec![json_path, png])
}

fn opts_throughput_secs(opts: &BenchOptions) -> f64 {
    Sizes::of(opts).throughput_secs as f64
}
