//! One party's run of a compiled program.
//!
//! The generated `main` calls [`crate::abi`], which forwards to a [`Runtime`]: it parses the
//! command line, loads and checks this party's share files against the program's manifest,
//! connects to the two other parties over mutually authenticated TLS, agrees PRSS seeds, and then
//! executes the operations of the generated schedule one by one on its value slots
//! ([`executor`]: every op is one function of [`crate::ops`] over a [`crate::ops::Ctx`] and its
//! operand values).

pub mod accounting;
mod args;
pub(crate) mod beaver;
pub(crate) mod executor;
pub mod load;
pub(crate) mod output;
pub mod stop;
pub(crate) mod tiles;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::RuntimeError;
use crate::manifest::{BuildInfo, Manifest};
use crate::net::link::{TlsTransport, Waiting};
use crate::net::session::Session;
use crate::net::{NetError, Transport};
use crate::rand::prss::Prss;

use crate::ops::Value;
pub use args::{PartyArgs, DEFAULT_RECORD_CHUNK};
pub use output::incomplete_trailer;

/// Wall time spent per phase, for the accounting line printed at the end.
#[derive(Debug, Default, Clone, Copy)]
pub struct PhaseTimes {
    pub load: Duration,
    pub connect: Duration,
    /// Dot products on the main thread (computing, or waiting for a background job).
    pub dot: Duration,
    /// Wall time of the dot products of the tiled scan computed in the background (the next
    /// gallery chunk's, while this one is compared) whose results were used: dot-product work
    /// hidden behind the comparison phase, as far as it did not show up as waiting in `dot`.
    pub dot_overlapped: Duration,
    pub compare: Duration,
    /// CPU time (user + system, every thread of the process) and page faults during the ops
    /// of the dot phase and of the comparison phase: what a phase costs the party, whatever
    /// else shares its cores.
    pub dot_usage: accounting::Usage,
    pub compare_usage: accounting::Usage,
}

pub struct Runtime {
    pub(crate) party: usize,
    pub(crate) manifest: Manifest,
    pub(crate) args: PartyArgs,
    pub(crate) net: TlsTransport,
    pub(crate) prss: Prss,
    pub(crate) inputs: load::Inputs,
    pub(crate) outputs: output::Outputs,
    pub(crate) slots: Vec<Option<Value>>,
    pub(crate) times: PhaseTimes,
    pub(crate) rounds: u64,
    /// The executor's figures per op kind, for `--stats`.
    pub(crate) ops: BTreeMap<&'static str, accounting::OpStats>,
    /// The process's CPU time and page faults per op kind, for `--stats`.
    pub(crate) ops_cpu: BTreeMap<&'static str, accounting::Usage>,
    /// Background dot-product jobs of the tiled scan; joined before the runtime ends (by
    /// `finish`, or when the runtime is dropped, which drops this).
    pub(crate) tiles: tiles::Pipeline,
    /// The `beaver` family's store, circuit and figures (empty for other programs).
    pub(crate) beaver: beaver::BeaverState,
    /// The party's GPU, once the schedule attached one (`irisc_rt_gpu_attach`): every later
    /// dot product of a ring it has kernels for runs there. Shared with the tiled scan's
    /// background jobs.
    pub(crate) gpu: Option<Arc<crate::gpu::Session>>,
    /// The last query announced with `--verbose`.
    announced: Option<i64>,
    /// The query the schedule is on (the last one an op loaded), for the line saying why the
    /// party stopped.
    pub(crate) query: Option<i64>,
    /// The op being executed, for the same line.
    pub(crate) op: Option<&'static str>,
    started: Instant,
    /// Process CPU seconds when the links were up (for the accounting).
    cpu_ready: Option<f64>,
    /// A serving party's client API and batches (`--serve`).
    serve: Option<crate::serve::Service>,
    /// Batches started (`irisc_rt_next_batch`).
    batches: u64,
    /// Set when a step between batches failed (said already): the run ends with status 1.
    pub(crate) failed: bool,
    /// A serving party's way back to its peers after a failed batch: the configuration and
    /// the settings its hellos carry.
    relink: Option<Relink>,
}

/// What a serving party needs to connect again ([`Runtime::recover`]).
struct Relink {
    config: crate::net::config::PartiesConfig,
    protocol: String,
    schedule: String,
}

impl Runtime {
    /// With `--verbose`, says (once per query) that query `query` starts.
    pub(crate) fn announce_query(&mut self, query: i64) {
        if query >= 0 {
            self.query = Some(query);
        }
        if query >= 0 && self.args.verbose && self.announced != Some(query) {
            self.announced = Some(query);
            crate::say!(
                "{}: query {} of {}",
                stop::prefix(),
                query + 1,
                self.inputs.query_count()
            );
        }
    }

    /// Stops this party because of `e`: prints the one line saying why (with where the
    /// schedule was) and tells both peers with an abort frame. A failure that a peer's
    /// failure explains (it sent an abort, or its link broke) is reported as that cause.
    pub(crate) fn fail(&mut self, e: &RuntimeError) {
        if stop::signalled() {
            // The signal's thread says why and tells the peers.
            return;
        }
        if self.serve.is_some() {
            // A serving party abandons the batch, not the service (`recover`): it says why
            // and tells the peers, which abandon theirs too.
            let why = match e {
                RuntimeError::Net(NetError::Aborted { .. }) => e.to_string(),
                _ => self
                    .net
                    .peer_stopped()
                    .map_or(e.to_string(), |c| c.to_string()),
            };
            crate::say!("{}: the batch failed: {why}", stop::prefix());
            if let Some(service) = &mut self.serve {
                service.fail_batch(&why);
            }
            stop::abort_peers(&why);
            return;
        }
        let cause = match e {
            RuntimeError::Net(NetError::Aborted { .. }) => None,
            _ => self.net.peer_stopped(),
        };
        let why = match cause {
            Some(c) => c.to_string(),
            None => e.to_string(),
        };
        let at = match (self.op, self.query) {
            (Some(op), Some(q)) => format!(
                " (during {op}, query {} of {})",
                q + 1,
                self.inputs.query_count()
            ),
            (Some(op), None) => format!(" (during {op})"),
            _ => String::new(),
        };
        stop::final_line(&format!("{why}{at}"));
        // The peers print `party P stopped: <why>`: a sentence that names the party at fault
        // when it is another one, so the blame survives being relayed.
        stop::abort_peers(&why);
    }

    /// Everything before the first operation: arguments, inputs, links, seeds.
    pub fn start(
        argv: Vec<std::ffi::OsString>,
        manifest: Manifest,
        build: &BuildInfo,
    ) -> Result<Runtime, RuntimeError> {
        let started = Instant::now();
        stop::set_program(&manifest.program);
        let args = PartyArgs::parse_built(argv, &manifest, build)?;
        let party = args.party;
        stop::set_party(party);
        crate::log::set_format(args.log_format);
        crate::sys::tune_allocator();
        // The protocols run on this thread.
        crate::protocol::set_chunk_elems(args.chunk_size);

        let t = Instant::now();
        let mut config = crate::net::config::PartiesConfig::load(&args.config)
            .map_err(|e| RuntimeError::Setup(e.to_string()))?;
        // The compiled programs are three-party (rep3 and the Shamir sharings).
        config
            .expect_count(3)
            .map_err(|e| RuntimeError::Setup(e.to_string()))?;
        if let Some(t) = args.timeout {
            config.timeout = Duration::from_secs_f64(t);
        }
        stop::register_config(&config);
        let inputs = match load::Inputs::load(&args, &manifest) {
            Ok(i) => i,
            Err(e) => {
                // Say it now, then tell the peers, which would otherwise wait for this party
                // until their timeout.
                let line = e.to_string();
                if stop::final_line(&line) {
                    stop::abort_peers(&line);
                }
                return Err(e);
            }
        };
        let beaver = match beaver::prepare(&args, &manifest, &inputs) {
            Ok(b) => b,
            Err(e) => {
                let line = e.to_string();
                if stop::final_line(&line) {
                    stop::abort_peers(&line);
                }
                return Err(e);
            }
        };
        let load = t.elapsed();

        let t = Instant::now();
        let relink = args.serve.as_ref().map(|_| Relink {
            config: config.clone(),
            protocol: protocol_of(&manifest, build),
            schedule: or_unknown(&build.schedule).to_string(),
        });
        let settings = Session::new()
            .field("the protocol", protocol_of(&manifest, build))
            // The schedule, not the backend: a CPU party and GPU parties interoperate.
            .field("the message schedule", or_unknown(&build.schedule))
            .field("--chunk-size", args.chunk_size)
            .field("--record-chunk", args.record_chunk);
        let mut inputs = inputs;
        // A serving party answers on its API from the start (`/healthz`; `/readyz` once
        // linked); requests wait for the links.
        let serve = match &args.serve {
            Some(addr) => {
                let token = args.api_token.clone().unwrap_or_default();
                let mut service = crate::serve::Service::start(
                    addr,
                    &token,
                    &config,
                    party,
                    &manifest,
                    &inputs,
                    args.max_batch,
                )
                .inspect_err(|e| {
                    let line = e.to_string();
                    stop::final_line(&line);
                    stop::abort_peers(&line);
                })?;
                service.stop_when(stop::draining);
                if !args.quiet {
                    crate::say!(
                        "{}: serving client requests at https://{addr}",
                        stop::prefix()
                    );
                }
                Some(service)
            }
            None => None,
        };
        let (net, prss) = match &relink {
            // A serving party waits for its peers as long as it takes.
            Some(relink) => connect_serving(relink, &args, &manifest, &mut inputs, party)
                .ok_or_else(|| RuntimeError::Setup("stopped while connecting".into()))?,
            None => {
                let session = inputs.session_bytes(&manifest, settings);
                let waiting = Waiting {
                    label: Some(stop::prefix()),
                    at_once: args.verbose,
                };
                let mut net = TlsTransport::connect_with(&config, party, &session, &waiting)
                    .map_err(|e| RuntimeError::Setup(e.to_string()))?;
                stop::register_links(Some(net.abort_handle()));
                match Prss::setup(&mut net) {
                    Ok(p) => (net, p),
                    Err(e) => {
                        let e = RuntimeError::from(e);
                        let line = net.peer_stopped().map_or(e.to_string(), |c| c.to_string());
                        stop::final_line(&line);
                        stop::abort_peers(&line);
                        return Err(e);
                    }
                }
            }
        };
        stop::register_links(Some(net.abort_handle()));
        if args.verbose {
            crate::say!("{}: connected to the other two parties", stop::prefix());
        }
        let connect = t.elapsed();
        let cpu_ready = accounting::process_cpu_seconds();

        if let Some(service) = &serve {
            service.set_ready(true);
            // From now on SIGTERM drains (before, it stops the party at once).
            stop::set_serving();
        }
        let outputs = if serve.is_some() {
            output::Outputs::capturing(&manifest, &inputs)
        } else {
            output::Outputs::new(&manifest, &inputs)
        };
        Ok(Runtime {
            party,
            manifest,
            args,
            net,
            prss,
            inputs,
            outputs,
            slots: Vec::new(),
            times: PhaseTimes {
                load,
                connect,
                ..Default::default()
            },
            rounds: 0,
            ops: BTreeMap::new(),
            ops_cpu: BTreeMap::new(),
            tiles: tiles::Pipeline::default(),
            beaver,
            gpu: None,
            announced: None,
            query: None,
            op: None,
            started,
            cpu_ready,
            serve,
            batches: 0,
            failed: false,
            relink,
        })
    }

    /// Attaches the party's GPU with the program's kernels (`ptx`, the PTX text the compiler
    /// embedded): from now on the dot products of the rings it has kernels for run there
    /// ([`crate::gpu`]). Fails, saying why, without CUDA support or a usable GPU.
    pub fn attach_gpu(&mut self, ptx: &[u8]) -> Result<(), RuntimeError> {
        let session = crate::gpu::Session::attach(ptx, Arc::new(end_party_on_gpu_timeout))?;
        if self.args.verbose {
            crate::say!(
                "{}: dot products on {}",
                stop::prefix(),
                session.description()
            );
        }
        self.gpu = Some(Arc::new(session));
        Ok(())
    }

    pub fn query_count(&self) -> u64 {
        self.inputs.query_count() as u64
    }

    /// After a failed batch (`irisc_rt_recover`): a serving party answers the batch's requests
    /// with a retryable error, connects to the other two parties again (as often as it takes,
    /// while its API keeps answering: `/readyz` says it is not ready) and agrees new seeds;
    /// then the schedule goes on with the next batch. Any other party stops (false).
    pub fn recover(&mut self) -> bool {
        let (Some(service), Some(relink)) = (&mut self.serve, &self.relink) else {
            return false;
        };
        service.fail_batch("the batch failed (a party stopped or a link broke)");
        service.set_ready(false);
        self.tiles.discard_all();
        let _ = self.outputs.take_captured();
        stop::register_links(None);
        let Some((net, prss)) = connect_serving(
            relink,
            &self.args,
            &self.manifest,
            &mut self.inputs,
            self.party,
        ) else {
            return false;
        };
        // The old links (to peers that are gone or restarted) are dropped.
        drop(std::mem::replace(&mut self.net, net));
        self.prss = prss;
        stop::register_links(Some(self.net.abort_handle()));
        stop::clear_reported();
        if let Some(service) = &self.serve {
            service.set_ready(true);
        }
        crate::say!(
            "{}: connected to the other two parties again",
            stop::prefix()
        );
        true
    }

    /// The number of queries of the next batch, -1 when there is none (`irisc_rt_next_batch`).
    /// Share files hold one batch; a serving party answers the batch just computed and waits
    /// for the next one the three parties agree on.
    pub fn next_batch(&mut self) -> Result<i64, RuntimeError> {
        self.batches += 1;
        let Some(service) = &mut self.serve else {
            return Ok(if self.batches == 1 {
                self.inputs.query_count() as i64
            } else {
                -1
            });
        };
        let kept = self.outputs.take_captured();
        let files = match service.next_batch(&mut self.net, &mut self.inputs, kept) {
            Ok(Some(files)) => files,
            // Stopping (SIGTERM): the schedule ends; the links close, and the peers wait for
            // this party to come back.
            Ok(None) => {
                crate::say!("{}: stopped (SIGTERM) between batches", stop::prefix());
                return Ok(-1);
            }
            Err(e) => {
                // A peer failed between batches: abandon, reconnect, wait for the next.
                self.fail(&e);
                if !self.recover() {
                    return Err(e);
                }
                self.batches -= 1;
                return self.next_batch();
            }
        };
        let Some(_) = &self.serve else {
            return Ok(-1);
        };
        self.inputs.replace_queries(self.party, files)?;
        self.outputs = output::Outputs::capturing(&self.manifest, &self.inputs);
        Ok(self.inputs.query_count() as i64)
    }

    /// Closes the links (flushing what is queued) and prints this party's accounting to stderr.
    pub fn finish(mut self, status: i32) -> i32 {
        let status = if self.failed { status.max(1) } else { status };
        // A job still pending (a schedule that stopped early) is joined before anything ends.
        self.tiles.discard_all();
        // Fields of a query whose `emit` the schedule did not reach (or, for issue-2 schedules,
        // never calls) are printed now.
        let flushed = if status == 0 {
            self.outputs.flush()
        } else {
            let reason = stop::reason().unwrap_or_else(|| {
                format!(
                    "party {} stopped early; its error is on its stderr",
                    self.party
                )
            });
            self.outputs.mark_incomplete(&reason)
        };
        let status = match flushed {
            Ok(()) => status,
            Err(e) => {
                self.fail(&e);
                status.max(1)
            }
        };
        let bytes = self.net.bytes_sent();
        let messages = self.net.messages_sent();
        stop::register_links(None);
        let close = self.net.close();
        let accounting = accounting::Accounting::new(
            self.party,
            &self.manifest.program,
            self.inputs.query_count(),
            self.inputs.gallery_records(),
            self.args.threads,
            self.cpu_ready,
            &self.times,
            self.started.elapsed(),
            bytes,
            messages,
            self.rounds,
        )
        .with_ops(std::mem::take(&mut self.ops))
        .with_ops_cpu(&self.ops_cpu)
        .with_gpu(self.gpu.as_ref().map(|g| g.stats()))
        .with_beaver(self.beaver.stats.take());
        // A party that failed has printed its one line saying why; the figures would only
        // bury it.
        if !self.args.quiet && status == 0 {
            crate::say!("{}", accounting.line());
        }
        let stats = match &self.args.stats {
            Some(path) => accounting
                .write_json(path)
                .map_err(|e| format!("cannot write the accounting to {}: {e}", path.display())),
            None => Ok(()),
        };
        let status = match (status, stats) {
            (0, Err(e)) => {
                stop::final_line(&e);
                1
            }
            (s, _) => s,
        };
        match (status, close) {
            (0, Ok(())) => 0,
            (0, Err(e)) => {
                stop::final_line(&e.to_string());
                1
            }
            (s, _) => s,
        }
    }
}

/// A serving party's links: connects to the other two, agrees seeds and reconciles the stores,
/// as often as it takes (a peer restarting, a peer that died during setup), saying once that
/// it waits and why; None only when a signal stops the party.
fn connect_serving(
    relink: &Relink,
    args: &PartyArgs,
    manifest: &Manifest,
    inputs: &mut load::Inputs,
    party: usize,
) -> Option<(TlsTransport, Prss)> {
    let waiting = Waiting {
        label: None,
        at_once: false,
    };
    let mut last_said: Option<String> = None;
    loop {
        if stop::signalled() || stop::draining() {
            return None;
        }
        let settings = Session::new()
            .field("the protocol", &relink.protocol)
            .field("the message schedule", &relink.schedule)
            .field("--chunk-size", args.chunk_size)
            .field("--record-chunk", args.record_chunk);
        let session = inputs.session_bytes(manifest, settings);
        let attempt = TlsTransport::rejoin(&relink.config, party, &session, &waiting)
            .map_err(|e| e.to_string())
            .and_then(|mut net| {
                let prss = Prss::setup(&mut net).map_err(|e| e.to_string())?;
                reconcile_stores(&mut net, inputs, party).map_err(|e| e.to_string())?;
                Ok((net, prss))
            });
        match attempt {
            Ok(linked) => return Some(linked),
            Err(e) => {
                if last_said.as_deref() != Some(e.as_str()) {
                    crate::say!(
                        "{}: waiting for the other parties to connect: {e}",
                        stop::prefix()
                    );
                    last_said = Some(e);
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
    }
}

/// A serving party's stores brought to what all three agree on (`serve::reconcile`), said
/// when anything changed.
fn reconcile_stores(
    net: &mut TlsTransport,
    inputs: &mut load::Inputs,
    party: usize,
) -> Result<(), RuntimeError> {
    let done = crate::serve::reconcile::reconcile(net, inputs, party)?;
    if done.rolled_back > 0 {
        crate::say!(
            "{}: rolled back {} record(s) of an enrolment not all parties committed (never acknowledged)",
            stop::prefix(),
            done.rolled_back
        );
    }
    if done.deletions_added > 0 {
        crate::say!(
            "{}: applied {} deletion(s) the other parties had made",
            stop::prefix(),
            done.deletions_added
        );
    }
    Ok(())
}

/// The protocol the parties run: the `mpc` module's family and the sharing of every input.
fn protocol_of(manifest: &Manifest, build: &BuildInfo) -> String {
    let mut sharings: Vec<String> = manifest
        .inputs
        .iter()
        .map(|i| format!("{} {}", i.name, i.sharing))
        .collect();
    sharings.dedup();
    format!("{} ({})", or_unknown(&build.protocol), sharings.join(", "))
}

fn or_unknown(s: &str) -> &str {
    if s.is_empty() {
        "unrecorded"
    } else {
        s
    }
}

/// Ends the party when its GPU stops answering (the GPU watchdog's expiry): its one line, the partial-answer trailer, the abort frames, `_exit`.
pub(crate) fn end_party_on_gpu_timeout(msg: String) {
    use crate::party::stop;
    stop::final_line(&msg);
    crate::party::output::mark_incomplete_on_signal(
        &format!("{}: {msg}", stop::prefix()),
        stop::ABORT_BOUND,
    );
    stop::abort_peers(&format!("its GPU did not answer ({msg})"));
    // SAFETY: ends the process at once. The thread blocked in the driver cannot be unwound,
    // and exit handlers (the driver's own among them) could block on the same call.
    unsafe { libc::_exit(crate::gpu::watchdog::EXIT_CODE) }
}
