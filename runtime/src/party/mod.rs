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
pub(crate) mod executor;
pub mod load;
pub(crate) mod output;
pub(crate) mod tiles;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::error::RuntimeError;
use crate::manifest::Manifest;
use crate::net::link::TlsTransport;
use crate::net::Transport;
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
    /// Background dot-product jobs of the tiled scan; joined before the runtime ends (by
    /// `finish`, or when the runtime is dropped, which drops this).
    pub(crate) tiles: tiles::Pipeline,
    /// The last query announced with `--verbose`.
    announced: Option<i64>,
    started: Instant,
    /// Process CPU seconds when the links were up (for the accounting).
    cpu_ready: Option<f64>,
}

impl Runtime {
    /// With `--verbose`, says (once per query) that query `query` starts.
    pub(crate) fn announce_query(&mut self, query: i64) {
        if query >= 0 && self.args.verbose && self.announced != Some(query) {
            self.announced = Some(query);
            crate::say!(
                "irisc party {}: query {} of {}",
                self.party,
                query + 1,
                self.inputs.query_count()
            );
        }
    }

    /// Everything before the first operation: arguments, inputs, links, seeds.
    pub fn start(
        argv: Vec<std::ffi::OsString>,
        manifest: Manifest,
    ) -> Result<Runtime, RuntimeError> {
        let started = Instant::now();
        let args = PartyArgs::parse(argv, &manifest)?;
        let party = args.party;
        crate::sys::tune_allocator();
        // The protocols run on this thread.
        crate::protocol::set_chunk_elems(args.chunk_size);

        let t = Instant::now();
        let inputs = load::Inputs::load(&args, &manifest)?;
        let load = t.elapsed();

        let t = Instant::now();
        let mut config = crate::net::config::PartiesConfig::load(&args.config)
            .map_err(|e| RuntimeError::Setup(e.to_string()))?;
        if let Some(t) = args.timeout {
            config.timeout = Duration::from_secs_f64(t);
        }
        let session = inputs.session_bytes(&manifest);
        let mut net = TlsTransport::connect(&config, party, &session)
            .map_err(|e| RuntimeError::Setup(format!("party {party}: {e}")))?;
        if args.verbose {
            crate::say!("irisc party {party}: connected to the other two parties");
        }
        let prss = Prss::setup(&mut net)?;
        let connect = t.elapsed();
        let cpu_ready = accounting::process_cpu_seconds();

        let outputs = output::Outputs::new(&manifest, &inputs);
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
            tiles: tiles::Pipeline::default(),
            announced: None,
            started,
            cpu_ready,
        })
    }

    pub fn query_count(&self) -> u64 {
        self.inputs.query_count() as u64
    }

    /// Closes the links (flushing what is queued) and prints this party's accounting to stderr.
    pub fn finish(mut self, status: i32) -> i32 {
        // A job still pending (a schedule that stopped early) is joined before anything ends.
        self.tiles.discard_all();
        // Fields of a query whose `emit` the schedule did not reach (or, for issue-2 schedules,
        // never calls) are printed now.
        let flushed = if status == 0 {
            self.outputs.flush()
        } else {
            let reason = format!(
                "party {} stopped early; its error is on its stderr",
                self.party
            );
            self.outputs.mark_incomplete(&reason)
        };
        let status = match flushed {
            Ok(()) => status,
            Err(e) => {
                crate::say!("irisc party {}: error: {e}", self.party);
                status.max(1)
            }
        };
        let bytes = self.net.bytes_sent();
        let messages = self.net.messages_sent();
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
        .with_ops(std::mem::take(&mut self.ops));
        if !self.args.quiet {
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
                crate::say!("irisc party {}: error: {e}", self.party);
                1
            }
            (s, _) => s,
        };
        match (status, close) {
            (0, Ok(())) => 0,
            (0, Err(e)) => {
                crate::say!("irisc party {}: error: {e}", self.party);
                1
            }
            (s, _) => s,
        }
    }
}
