//! A serving party (`--serve ADDR`): the galleries are loaded and the links to the other two
//! parties set up once, then the party answers client requests batch after batch.
//!
//! - [`api`]: the client API, HTTPS (axum) on a thread of its own: a request brings this
//!   party's share of each query input; the handler waits for the batch that computes it.
//! - [`agree`]: the parties agree on each batch (party 0 decides among the requests all three
//!   hold with the same shares).
//! - [`client`]: what `irisc client` uses to send a request to one party.
//! - The schedule runs its query loop once per batch (`irisc_rt_next_batch`): between two
//!   batches, [`Service::next_batch`] answers the batch just computed and installs the next.

pub mod agree;
pub mod api;
pub mod client;
pub mod enrol;
pub mod journal;
pub mod metrics;
pub mod reconcile;
pub mod wire;

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::RuntimeError;
use crate::io::share_file::{RingVec, ShareFile};
use crate::manifest::{Manifest, ManifestInput};
use crate::net::Transport;
use crate::vocab::InputRole;

use wire::{Answer, Offered};

/// What a serving party's galleries offer the service: the party's loaded inputs implement it
/// (`party::load::Inputs`), so the service depends on no party internals.
pub trait Galleries {
    /// The number of inputs (the program's).
    fn count(&self) -> usize;
    /// The store gallery input `index` was loaded from, if it was.
    fn store_path(&self, index: usize) -> Option<&std::path::Path>;
    /// The record ids of input `index`.
    fn ids(&self, index: usize) -> &[u64];
    /// Loads gallery input `index` again from its store (after an enrolment or a deletion).
    fn reload_store(&mut self, index: usize, party: usize) -> Result<(), RuntimeError>;
    /// Records of all galleries together.
    fn gallery_records(&self) -> usize;
    /// Whether every gallery holds a record with id `id`.
    fn galleries_hold(&self, id: u64) -> bool;
    /// Loads the galleries as the one record `only` (a reauthentication batch), or whole.
    fn restrict_galleries(&mut self, only: Option<u64>);
    /// Whether record `id` was deleted (in any gallery store).
    fn deleted(&self, id: u64) -> bool;
    /// Whether gallery input `index`'s store holds `record` byte for byte (id, mask and this
    /// party's shares) as the live record of its id: neither deleted nor replaced since.
    fn holds_identical(&self, index: usize, record: &crate::store::Record<'_>) -> bool;
}

/// How long the parties wait between two agreement exchanges while no request is held by all
/// three (a new request cuts the wait short at the party that receives it).
const IDLE_TICK: Duration = Duration::from_millis(20);
/// A request that not all three parties received within this time is dropped with an error
/// (its client died half-way, or sent it to one party only).
pub const PENDING_LIMIT: Duration = Duration::from_secs(60);
/// Finished requests remembered for idempotent retries.
const REMEMBERED: usize = 100_000;

/// A request received and checked, waiting for a batch.
pub(crate) struct Pending {
    pub id: String,
    /// blake3 of the set ids of its share files, in query-input order (hex).
    pub digest: String,
    /// Per query input (manifest index), the request's share file.
    pub files: Vec<(usize, ShareFile)>,
    pub queries: usize,
    pub arrived: Instant,
    /// Records to enrol when the request is unique (empty: match only).
    pub enrol: enrol::Enrolment,
    /// A deletion's record ids (then no queries).
    pub delete: Vec<u64>,
    /// A reauthentication's claimed record id.
    pub only: Option<u64>,
    /// A reset's record id (its enrolment replaces that record).
    pub reset: Option<u64>,
}

#[derive(Default)]
pub(crate) struct State {
    pub pending: Vec<Pending>,
    /// Requests in the batch being computed.
    pub running: HashSet<String>,
    /// Answers of finished requests, for retries (oldest first in `order`).
    pub answers: HashMap<String, Answer>,
    order: VecDeque<String>,
    /// Handlers waiting for a request's answer.
    pub waiters: HashMap<String, Vec<tokio::sync::oneshot::Sender<Answer>>>,
}

impl State {
    /// Stores `answer` for retries and hands it to the waiting handlers.
    pub fn finish(&mut self, answer: Answer) {
        let id = answer.request_id.clone();
        for w in self.waiters.remove(&id).unwrap_or_default() {
            let _ = w.send(answer.clone());
        }
        self.running.remove(&id);
        if self.answers.insert(id.clone(), answer).is_none() {
            self.order.push_back(id);
        }
        while self.order.len() > REMEMBERED {
            if let Some(old) = self.order.pop_front() {
                self.answers.remove(&old);
            }
        }
    }

    pub fn knows(&self, id: &str) -> bool {
        self.answers.contains_key(id)
            || self.running.contains(id)
            || self.pending.iter().any(|p| p.id == id)
    }
}

/// What the API thread and the party's thread share.
pub(crate) struct Shared {
    pub state: Mutex<State>,
    /// Signalled when a request arrives.
    pub arrived: Condvar,
    pub party: usize,
    /// The program's query inputs: (manifest index, spec).
    pub query_inputs: Vec<(usize, ManifestInput)>,
    /// The gallery inputs loaded from stores, which requests may enrol into.
    pub stores: Vec<(usize, ManifestInput)>,
    pub max_batch: usize,
    /// Links up and seeds agreed (`/readyz`).
    pub ready: std::sync::atomic::AtomicBool,
}

/// A request of the batch being computed: its queries are `first..first + queries`.
struct InBatch {
    id: String,
    first: usize,
    queries: usize,
    enrol: enrol::Enrolment,
    /// A reset: the record id it replaces (enrolled whatever the match).
    reset: Option<u64>,
}

/// The serving side of one party.
pub struct Service {
    shared: Arc<Shared>,
    current: Vec<InBatch>,
    /// When the batch being computed was agreed on.
    batch_started: Option<Instant>,
    /// Keeps the API's thread (and its runtime) alive.
    _api: api::ApiHandle,
    /// Whether the party was asked to stop (SIGTERM): checked between batches.
    draining: Option<fn() -> bool>,
    /// The answers of writes, on disk (beside the first gallery store; none without stores).
    journal: Option<journal::Journal>,
}

impl Service {
    /// Starts the client API at `addr` with this party's certificate and key (from the
    /// parties' configuration) and the bearer token in `token_path`.
    pub fn start(
        addr: &str,
        token_path: &std::path::Path,
        config: &crate::net::config::PartiesConfig,
        party: usize,
        manifest: &Manifest,
        inputs: &dyn Galleries,
        max_batch: usize,
    ) -> Result<Service, RuntimeError> {
        let stores = manifest
            .inputs
            .iter()
            .enumerate()
            .filter(|(k, _)| inputs.store_path(*k).is_some())
            .map(|(k, i)| (k, i.clone()))
            .collect();
        let query_inputs = manifest
            .inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.role == InputRole::Query)
            .map(|(k, i)| (k, i.clone()))
            .collect::<Vec<_>>();
        if query_inputs.is_empty() {
            return Err(RuntimeError::Usage(format!(
                "{} has no query input: a serving party answers requests that bring queries",
                manifest.program
            )));
        }
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            arrived: Condvar::new(),
            party,
            query_inputs,
            stores,
            max_batch,
            ready: std::sync::atomic::AtomicBool::new(false),
        });
        // Writes answered before this start (a restart after a kill) are answered again.
        let journal = shared
            .stores
            .first()
            .and_then(|(k, _)| inputs.store_path(*k))
            .map(journal::Journal::beside);
        if let Some(j) = &journal {
            let answers = j.read()?;
            j.keep_last(&answers, REMEMBERED)?;
            let mut st = lock(&shared.state);
            for a in answers {
                st.finish(a);
            }
        }
        metrics::install();
        let token = api::read_token(token_path)?;
        let api = api::start(addr, config, party, token, shared.clone())?;
        Ok(Service {
            shared,
            current: Vec::new(),
            batch_started: None,
            draining: None,
            journal,
            _api: api,
        })
    }

    /// `stopping` says, between batches, whether the party is asked to stop: then the
    /// waiting requests are answered with a retryable error and no further batch starts.
    pub fn stop_when(&mut self, stopping: fn() -> bool) {
        self.draining = Some(stopping);
    }

    /// Marks the party ready (links up, seeds agreed) or not (reconnecting).
    pub fn set_ready(&self, ready: bool) {
        self.shared
            .ready
            .store(ready, std::sync::atomic::Ordering::SeqCst);
    }

    /// The batch being computed failed (a peer stopped, a link broke): its requests are
    /// answered with a retryable error and forgotten, so a retry under the same id computes
    /// them.
    pub fn fail_batch(&mut self, why: &str) {
        self.batch_started = None;
        let mut st = lock(&self.shared.state);
        for r in std::mem::take(&mut self.current) {
            let mut answer = self.error_answer(&r.id, r.queries, why);
            answer.retry = true;
            for w in st.waiters.remove(&r.id).unwrap_or_default() {
                let _ = w.send(answer.clone());
            }
            st.running.remove(&r.id);
        }
    }

    /// Answers the batch just computed from `kept` (the output party's revealed fields by
    /// query position; empty elsewhere), then agrees on the next batch with the other parties
    /// and returns its requests' share files, concatenated per query input.
    pub fn next_batch(
        &mut self,
        net: &mut impl Transport,
        inputs: &mut dyn Galleries,
        kept: Vec<crate::io::answer::KeptAnswer>,
    ) -> Result<Option<Vec<(usize, ShareFile)>>, RuntimeError> {
        let outcomes = self.settle_enrolments(net, inputs, &kept)?;
        if let Some(t) = self.batch_started.take() {
            let queries: usize = self.current.iter().map(|r| r.queries).sum();
            ::metrics::counter!(metrics::BATCHES).increment(1);
            ::metrics::histogram!(metrics::BATCH_QUERIES).record(queries as f64);
            ::metrics::histogram!(metrics::BATCH_SECONDS).record(t.elapsed().as_secs_f64());
            if let Some(u) = crate::sys::rusage() {
                let cpu = (u.ru_utime.tv_sec + u.ru_stime.tv_sec).max(0) as u64;
                ::metrics::counter!(metrics::CPU_SECONDS).absolute(cpu);
                ::metrics::counter!(metrics::MAJOR_PAGE_FAULTS).absolute(u.ru_majflt.max(0) as u64);
            }
            let enrolled = outcomes
                .values()
                .filter(|o| **o == enrol::Outcome::Enrolled)
                .count();
            ::metrics::counter!(metrics::ENROLLED).increment(enrolled as u64);
        }
        ::metrics::gauge!(metrics::GALLERY_RECORDS).set(inputs.gallery_records() as f64);
        ::metrics::counter!(metrics::SENT_BYTES).absolute(net.bytes_sent());
        ::metrics::counter!(metrics::SENT_MESSAGES).absolute(net.messages_sent());
        self.answer(kept, &outcomes);
        loop {
            if self.draining.as_ref().is_some_and(|d| d()) {
                let mut st = lock(&self.shared.state);
                for p in std::mem::take(&mut st.pending) {
                    let mut answer =
                        self.error_answer(&p.id, p.queries, "the party is shutting down");
                    answer.retry = true;
                    for w in st.waiters.remove(&p.id).unwrap_or_default() {
                        let _ = w.send(answer.clone());
                    }
                }
                return Ok(None);
            }
            let mine = self.offer();
            let decision = agree::exchange(net, mine, self.shared.max_batch)?;
            let mut st = lock(&self.shared.state);
            for (id, why) in &decision.rejected {
                st.pending.retain(|p| &p.id != id);
                let answer = self.error_answer(id, 0, why);
                st.finish(answer);
            }
            if !decision.delete.is_empty() {
                let deletions: Vec<Pending> = decision
                    .delete
                    .iter()
                    .filter_map(|id| {
                        let k = st.pending.iter().position(|p| &p.id == id)?;
                        Some(st.pending.remove(k))
                    })
                    .collect();
                drop(st);
                let asks: Vec<(String, Vec<u64>)> =
                    deletions.into_iter().map(|p| (p.id, p.delete)).collect();
                let outcomes = enrol::delete(net, inputs, self.shared.party, &asks)?;
                let mut answers = Vec::new();
                for ((id, ids), outcome) in asks.into_iter().zip(outcomes) {
                    answers.push(match outcome {
                        Ok(()) => Answer {
                            request_id: id,
                            party: self.shared.party,
                            queries: 0,
                            answers: Vec::new(),
                            enrolled: None,
                            deleted: ids,
                            error: None,
                            retry: false,
                        },
                        Err(why) => self.error_answer(&id, 0, &why),
                    });
                }
                self.journal_writes(&answers);
                let mut st = lock(&self.shared.state);
                for answer in answers {
                    st.finish(answer);
                }
                continue;
            }
            if decision.batch.is_empty() {
                // Nothing all three hold: wait a tick (or for a request) and ask again.
                let _ = self.shared.arrived.wait_timeout(st, IDLE_TICK);
                continue;
            }
            let mut taken = Vec::with_capacity(decision.batch.len());
            for id in &decision.batch {
                let Some(k) = st.pending.iter().position(|p| &p.id == id) else {
                    return Err(RuntimeError::Setup(format!(
                        "party 0 put request {id} in the batch, but this party does not hold it"
                    )));
                };
                let p = st.pending.remove(k);
                st.running.insert(p.id.clone());
                taken.push(p);
            }
            // A reauthentication or reset against an id the galleries do not hold (or deleted)
            // is answered at once (every party holds the same records, so all answer the same).
            let only = taken.first().and_then(|p| p.only);
            let mut refused = Vec::new();
            for (k, p) in taken.iter().enumerate() {
                if let Some(why) = refusal(p, &*inputs) {
                    refused.push((k, why));
                }
            }
            for (k, why) in refused.into_iter().rev() {
                let p = taken.remove(k);
                let answer = self.error_answer(&p.id, p.queries, &why);
                st.finish(answer);
            }
            if taken.is_empty() {
                continue;
            }
            inputs.restrict_galleries(only);
            ::metrics::gauge!(metrics::PENDING).set(st.pending.len() as f64);
            drop(st);
            self.batch_started = Some(Instant::now());
            return Ok(Some(self.install(taken)));
        }
    }

    /// Enrols the batch's unique requests that asked for it ([`enrol::settle`]): each such
    /// request's outcome by id.
    fn settle_enrolments(
        &mut self,
        net: &mut impl Transport,
        inputs: &mut dyn Galleries,
        kept: &[crate::io::answer::KeptAnswer],
    ) -> Result<HashMap<String, enrol::Outcome>, RuntimeError> {
        let asks: Vec<enrol::Ask<'_>> = self
            .current
            .iter()
            .filter(|r| !r.enrol.is_empty())
            .map(|r| {
                let range = r.first as u64..(r.first + r.queries) as u64;
                let ask = |matched| enrol::Ask {
                    id: r.id.clone(),
                    records: &r.enrol,
                    matched,
                    replaces: r.reset,
                };
                if r.reset.is_some() {
                    // A reset replaces the record whatever the match (the person may match
                    // their own old record).
                    return ask(Some(vec![false; r.queries]));
                }
                let matched: Option<Vec<bool>> = range
                    .map(|q| {
                        kept.iter()
                            .find(|(k, _, _)| *k == q)
                            .and_then(|(_, _, fields)| {
                                fields
                                    .iter()
                                    .find(|(n, _)| n == crate::contract::MATCH_FIELD)
                                    .map(|(_, v)| v == "true")
                            })
                    })
                    .collect();
                ask(matched)
            })
            .collect();
        if asks.is_empty() {
            return Ok(HashMap::new());
        }
        let outcomes = enrol::settle(net, inputs, self.shared.party, &asks)?;
        Ok(asks.iter().map(|a| a.id.clone()).zip(outcomes).collect())
    }

    /// This party's offer: its pending requests in arrival order (those that waited too long
    /// for the other parties are dropped first, with an error to their clients).
    fn offer(&self) -> Vec<Offered> {
        let mut st = lock(&self.shared.state);
        let now = Instant::now();
        let (old, keep): (Vec<Pending>, Vec<Pending>) = std::mem::take(&mut st.pending)
            .into_iter()
            .partition(|p| now.duration_since(p.arrived) > PENDING_LIMIT);
        st.pending = keep;
        for p in old {
            let why = format!(
                "not all three parties received this request within {} s",
                PENDING_LIMIT.as_secs()
            );
            let answer = self.error_answer(&p.id, p.queries, &why);
            st.finish(answer);
        }
        st.pending
            .iter()
            .map(|p| Offered {
                id: p.id.clone(),
                digest: p.digest.clone(),
                queries: p.queries,
                delete: !p.delete.is_empty(),
                alone: p.only.is_some() || p.reset.is_some(),
            })
            .collect()
    }

    fn error_answer(&self, id: &str, queries: usize, why: &str) -> Answer {
        Answer {
            request_id: id.to_string(),
            party: self.shared.party,
            queries,
            answers: Vec::new(),
            enrolled: None,
            deleted: Vec::new(),
            error: Some(why.to_string()),
            retry: false,
        }
    }

    /// The batch's share files: per query input, the requests' records one after the other.
    fn install(&mut self, taken: Vec<Pending>) -> Vec<(usize, ShareFile)> {
        self.current.clear();
        let mut first = 0;
        let mut merged: Vec<(usize, ShareFile)> = Vec::new();
        for p in taken {
            self.current.push(InBatch {
                id: p.id,
                first,
                queries: p.queries,
                enrol: p.enrol,
                reset: p.reset,
            });
            first += p.queries;
            for (index, file) in p.files {
                match merged.iter_mut().find(|(i, _)| *i == index) {
                    Some((_, m)) => append(m, file),
                    None => merged.push((index, file)),
                }
            }
        }
        merged
    }

    /// Answers every request of the batch just computed.
    fn answer(
        &mut self,
        kept: Vec<crate::io::answer::KeptAnswer>,
        outcomes: &HashMap<String, enrol::Outcome>,
    ) {
        if self.current.is_empty() {
            return;
        }
        let st = lock(&self.shared.state);
        let mut answers = Vec::new();
        for r in std::mem::take(&mut self.current) {
            let enrolled = match outcomes.get(&r.id) {
                Some(enrol::Outcome::Refused(why)) => {
                    answers.push(self.error_answer(&r.id, r.queries, why));
                    continue;
                }
                Some(enrol::Outcome::EnrolledEarlier) => {
                    // The first attempt's answer, where this party gave one: computed now,
                    // the queries would match the records they enrolled then.
                    let first = wire::first_attempt_id(&r.id)
                        .and_then(|base| st.answers.get(base))
                        .filter(|a| a.error.is_none() && a.enrolled == Some(true));
                    if let Some(first) = first {
                        let mut again = first.clone();
                        again.request_id = r.id.clone();
                        answers.push(again);
                        continue;
                    }
                    Some(true)
                }
                Some(o) => Some(*o == enrol::Outcome::Enrolled),
                None => None,
            };
            let range = r.first as u64..(r.first + r.queries) as u64;
            let lines = kept
                .iter()
                .filter(|(q, _, _)| range.contains(q))
                .filter_map(|(q, id, fields)| {
                    let mut fields = fields.clone();
                    if let Some(e) = enrolled {
                        fields.push(("enrolled".into(), e.to_string()));
                    }
                    let line = crate::io::answer::render(q - range.start, *id, &fields);
                    serde_json::value::RawValue::from_string(line).ok()
                })
                .collect();
            answers.push(Answer {
                request_id: r.id,
                party: self.shared.party,
                queries: r.queries,
                answers: lines,
                enrolled,
                deleted: Vec::new(),
                error: None,
                retry: false,
            });
        }
        drop(st);
        self.journal_writes(&answers);
        let mut st = lock(&self.shared.state);
        for answer in answers {
            st.finish(answer);
        }
    }

    /// Appends the answers of writes (enrolments, resets, deletions) to the journal before any
    /// client hears them. A journal that cannot be written loses only the replay after a
    /// restart (the writes are in the stores): logged, and the clients answered.
    fn journal_writes(&self, answers: &[Answer]) {
        let writes: Vec<&Answer> = answers
            .iter()
            .filter(|a| a.error.is_none() && (a.enrolled == Some(true) || !a.deleted.is_empty()))
            .collect();
        if let Some(j) = &self.journal {
            if let Err(e) = j.append_keeping(&writes, REMEMBERED) {
                tracing::warn!("answers of writes not kept for replay after a restart: {e}");
            }
        }
    }
}

/// Appends `more`'s records to `to` (two share files of one query input).
fn append(to: &mut ShareFile, more: ShareFile) {
    to.header.count += more.header.count;
    to.ids.extend(more.ids);
    to.masks.extend(more.masks);
    append_ring(&mut to.own, more.own);
    append_ring(&mut to.prev, more.prev);
}

fn append_ring(to: &mut RingVec, more: RingVec) {
    match (to, more) {
        (RingVec::U16(a), RingVec::U16(b)) => a.extend(b),
        (RingVec::U32(a), RingVec::U32(b)) => a.extend(b),
        (RingVec::U64(a), RingVec::U64(b)) => a.extend(b),
        // Checked against the program's ring when received: one input has one word type.
        _ => {}
    }
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why a request taken into a batch cannot be computed, if it cannot: a reauthentication or a
/// reset of a record the galleries do not hold, or that was deleted.
fn refusal(p: &Pending, inputs: &dyn Galleries) -> Option<String> {
    let id = p.only.or(p.reset)?;
    if !inputs.galleries_hold(id) {
        return Some(format!("record id {id} is not enrolled"));
    }
    if inputs.deleted(id) {
        return Some(format!("record id {id} was deleted"));
    }
    None
}
