//! The command line: argument definitions (clap) and dispatch to the module of each command
//! (`build`, `explain`, `synth` for `gen`, `keys`, `dealer` for `share`/`enroll`/`repair`,
//! `store_info` for `store info`, `run`). Nothing else happens here.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};

use super::build::Stage;
use super::{build, circuit, dealer, explain, fss2, keys, run, store_info, synth};

#[derive(Debug, Parser)]
#[command(
    name = "irisc",
    version,
    about = "Compiles .irs matching programs to native three-party MPC executables."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The backend that generates the party code (`codegen::backend`).
#[derive(Debug, Clone, Copy, Default, ValueEnum)]
pub enum TargetArg {
    /// The host CPU through LLVM.
    #[default]
    Cpu,
    /// The host CPU for the schedule, an NVIDIA GPU (PTX through LLVM's NVPTX back end) for
    /// the dot products.
    Cuda,
}

impl From<TargetArg> for crate::codegen::Target {
    fn from(t: TargetArg) -> Self {
        match t {
            TargetArg::Cpu => crate::codegen::Target::Cpu,
            TargetArg::Cuda => crate::codegen::Target::Cuda,
        }
    }
}

/// What the compiler may be told to choose instead of its cost model.
#[derive(Debug, Clone, Default, Args)]
pub struct PlanArgs {
    /// Sharing of the iris dot products: rep3 (replicated Z_2^k), fp (Shamir over F_p,
    /// p = 65519), gr2 / gr4 (Shamir over the Galois ring GR(2^16, d)). Default: the cheapest.
    #[arg(long, value_parser = ["rep3", "fp", "gr2", "gr4"])]
    pub sharing: Option<String>,
    /// Comparison variant of every fhd test: plain-mask (public masks), no-lift, const-lift,
    /// mpc-lift (secret masks). Default: the cheapest.
    #[arg(long, value_parser = ["plain-mask", "no-lift", "const-lift", "mpc-lift"])]
    pub variant: Option<String>,
    /// Bits of precision m of the secret-mask threshold a/b with b = 2^m (default 16, as deployed).
    #[arg(long)]
    pub precision: Option<u32>,
    /// Run the comparison ops of each chunk once per query (a batch costs the rounds of all its
    /// queries), not once for the whole batch: the schedule before batching, to compare with.
    #[arg(long)]
    pub per_query_chunks: bool,
    /// Queries whose dot products with a chunk of the gallery are one kernel call (1..=1024;
    /// default 8). Paper 003's GPU benchmark batches 32 people x 2 eyes x 31 rotations.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub query_batch: Option<u32>,
    /// Protocol family: rep3 (three-party replicated throughout), or beaver (dot products as in
    /// rep3; each reveal's comparisons, OR trees and secret ifs as one boolean circuit under
    /// Masked Triples, paper 004, with Beaver triples from a preprocessing phase). Default rep3.
    /// fss2: two servers and a dealer (paper 002), cosine programs; `irisc build` writes one
    /// executable per role (OUT-server, OUT-dealer, OUT-client).
    #[arg(long, value_parser = ["rep3", "beaver", "fss2"])]
    pub protocol: Option<String>,
    /// With --protocol fss2: the malicious variant (CSB.Eval*) with M normal/trap instances
    /// (paper 002 measures 10, 20, 40; a deviating server goes undetected with probability 2^-M).
    #[arg(long, value_name = "M")]
    pub malicious: Option<u32>,
    /// What plain-mask comparisons extract the MSB from: additive (AdditiveMSB straight from
    /// the dot products' additive shares: k - 1 AND gates, no reshare) or replicated (reshare,
    /// then BitExtract: 2k - 3 AND gates, one round fewer). Default: the cheaper by the cost
    /// model under rep3; replicated under beaver and with --target cuda (the GPU runs the
    /// reshare and BitExtract; with additive it runs AdditiveMSB).
    #[arg(long, value_parser = ["additive", "replicated"])]
    pub msb_input: Option<String>,
    /// Which share component adds each plain-mask comparison's public threshold: record_thirds
    /// (the default: component c on the c-th third of the records, so each party computes the
    /// public mask lengths of only the thirds it adds to) or component0 (component 0 on every
    /// record; every party computes every mask length).
    #[arg(long, value_parser = ["record_thirds", "component0"])]
    pub threshold_placement: Option<String>,
}

impl PlanArgs {
    /// [`PlanArgs::options`] for a build or run with `target`: with CUDA the comparisons stay on
    /// replicated shares unless `--msb-input` says otherwise.
    pub fn options_for(&self, target: TargetArg) -> Result<crate::analysis::plan::PlanOptions> {
        Ok(super::pipeline::options_for_target(
            &self.options()?,
            target.into(),
        ))
    }

    pub fn options(&self) -> Result<crate::analysis::plan::PlanOptions> {
        use crate::analysis::plan::PlanOptions;
        use irisc_runtime::vocab::{Protocol, Sharing, Variant};
        let protocol = match self.protocol.as_deref() {
            None => None,
            Some(p) => {
                Some(Protocol::parse(p).ok_or_else(|| anyhow::anyhow!("unknown protocol {p}"))?)
            }
        };
        let sharing = match self.sharing.as_deref() {
            None => None,
            Some(s) => {
                Some(Sharing::parse(s).ok_or_else(|| anyhow::anyhow!("unknown sharing {s}"))?)
            }
        };
        let variant = match self.variant.as_deref() {
            None => None,
            Some(v) => {
                Some(Variant::parse(v).ok_or_else(|| anyhow::anyhow!("unknown variant {v}"))?)
            }
        };
        let msb_input = match self.msb_input.as_deref() {
            None => None,
            Some(m) => Some(
                irisc_runtime::vocab::MsbInput::parse(m)
                    .ok_or_else(|| anyhow::anyhow!("unknown msb input {m}"))?,
            ),
        };
        let threshold_placement = match self.threshold_placement.as_deref() {
            None => None,
            Some(p) => Some(
                irisc_runtime::vocab::ThresholdPlacement::parse(p)
                    .ok_or_else(|| anyhow::anyhow!("unknown threshold placement {p}"))?,
            ),
        };
        Ok(PlanOptions {
            sharing,
            variant,
            precision_bits: self.precision,
            per_query_chunks: self.per_query_chunks,
            query_batch: self.query_batch,
            protocol,
            malicious: self.malicious,
            msb_input,
            threshold_placement,
        })
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compile a program to an executable that each party runs with `--party N`.
    Build {
        program: PathBuf,
        /// Output path (the executable, or the object with --emit=obj).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Stop after a stage and print it (ast, irs, mpc, schedule, llvm, ptx) or write it (obj;
        /// circuit: the reveals' boolean circuit for the `beaver` family, see `irisc circuit`).
        #[arg(long, value_enum)]
        emit: Option<Stage>,
        /// Print the MLIR module after every pass (to stderr).
        #[arg(long)]
        print_ir_after_all: bool,
        /// The backend that generates the party executable.
        #[arg(long, value_enum, default_value_t = TargetArg::Cpu)]
        target: TargetArg,
        #[command(flatten)]
        plan: PlanArgs,
        /// Print the whole explanation (as `irisc explain`) instead of the one-line summary.
        #[arg(long, conflicts_with = "quiet")]
        explain: bool,
        /// Print nothing when the build succeeds.
        #[arg(short, long)]
        quiet: bool,
    },
    /// Show what the compiler chose (rings and why), what it costs, and what each party learns.
    Explain {
        program: PathBuf,
        /// Print the explanation as one JSON document (for programs; the same content).
        #[arg(long)]
        json: bool,
        /// Records per gallery for the per-query totals. Default: the size of the gallery
        /// store or share file given with --db or --input, else 1 (said as assumed).
        #[arg(long)]
        records: Option<u64>,
        /// A gallery store or share file (any party's) whose record count the totals use,
        /// for programs with one gallery.
        #[arg(long, value_name = "FILE", conflicts_with = "inputs")]
        db: Option<PathBuf>,
        /// Gallery input NAME's store or share file, whose record count the totals use.
        #[arg(long = "input", value_name = "NAME=FILE")]
        inputs: Vec<String>,
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Generate synthetic inputs (NDJSON): iris codes (a gallery, or queries near a gallery),
    /// speaker embeddings, or bits.
    Gen {
        /// What to generate.
        #[arg(long, value_enum, default_value_t = synth::Kind::Iris)]
        kind: synth::Kind,
        /// Records (iris, bit).
        #[arg(long, required_unless_present_any = ["speakers"])]
        count: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Bits per code (a multiple of 64).
        #[arg(long, default_value_t = 12800)]
        bits: u32,
        /// Make queries: a mix of near-duplicates of this gallery's records, edge cases and fresh codes.
        /// Each line names the gallery record it was made from (`"near": ID`) and its `"case"`.
        #[arg(long)]
        near: Option<PathBuf>,
        /// The match ratio that the queries' threshold edge cases sit at (with --near).
        #[arg(long, default_value = "0.345", requires = "near")]
        ratio: String,
        /// Embeddings: speakers 0..S (ids are speaker * 1000 + utterance).
        #[arg(long)]
        speakers: Option<usize>,
        /// Embeddings: utterances per speaker (at most 1000).
        #[arg(long, default_value_t = 1)]
        per_speaker: usize,
        /// Embeddings: dimension.
        #[arg(long, default_value_t = 192)]
        dim: usize,
        /// Embeddings: noise relative to the speaker direction (same-speaker cosine ≈ 1/(1+noise²)).
        #[arg(long, default_value_t = 0.5)]
        noise: f64,
        /// Embeddings: seeds the speakers' directions; keep it equal for a gallery and its queries.
        #[arg(long, default_value_t = 7)]
        voices: u64,
        /// Iris: number the records from N (to make new records for `irisc enroll`).
        #[arg(long, value_name = "N", default_value_t = 0)]
        first_id: u64,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Create per-party TLS keys and certificates and a parties.toml (localhost, or the hosts
    /// given with --address).
    Keys {
        #[arg(short, long)]
        output: PathBuf,
        /// How many parties: 3 for rep3, 2 or 3 for the dishonest-majority protocols.
        #[arg(long, value_name = "N", default_value_t = 3,
              value_parser = clap::value_parser!(u8).range(2..=irisc_runtime::net::MAX_PARTIES as i64))]
        parties: u8,
        /// First of N consecutive TCP ports, for the parties on localhost.
        #[arg(long, default_value_t = 7100)]
        base_port: u16,
        /// Where the other parties reach party N, e.g. `--address 0=10.0.0.1:7100` (repeat per
        /// party; a party not given is on localhost at the base port + N).
        #[arg(long = "address", value_name = "N=HOST:PORT")]
        addresses: Vec<String>,
        /// What party N binds, where it differs from its address (behind NAT: `0=0.0.0.0:7100`).
        #[arg(long = "listen", value_name = "N=HOST:PORT")]
        listens: Vec<String>,
        /// Replace existing keys.
        #[arg(long)]
        force: bool,
        /// Make only party I's key, certificate and public files (run on that party's host; no
        /// host then holds another party's key), then `--join` on each host.
        #[arg(long, value_name = "I", conflicts_with = "join")]
        party: Option<u8>,
        /// Build `parties.toml` in the output folder from every party's public files
        /// (`party*.pub.toml`, `party*.crt`, `party*-ca.crt`).
        #[arg(long)]
        join: bool,
        /// Days the certificates are valid (a peer with an expired certificate is refused).
        #[arg(long, value_name = "DAYS", default_value_t = 365)]
        days: u32,
    },
    /// Secret-share inputs into one file per party: `--program P.irs --input NAME=FILE ...`
    /// writes DIR/p{0,1,2}/NAME.shares; `--db` / `--query` write DIR/db.p{0,1,2}.shr (rep3 iris).
    /// With --program, iris gallery inputs are written as gallery stores (durable, memory-mapped
    /// by the parties, appendable with `irisc enroll`); other inputs as share files.
    Share {
        /// Input NAME of the program from the NDJSON FILE (repeatable; needs --program).
        #[arg(long = "input", value_name = "NAME=FILE", requires = "program")]
        inputs: Vec<String>,
        #[arg(long, conflicts_with = "query")]
        db: Option<PathBuf>,
        #[arg(long)]
        query: Option<PathBuf>,
        #[arg(short, long)]
        output: PathBuf,
        /// The program the shares are for (its inputs' kinds, sharings and rings are used).
        #[arg(long, conflicts_with = "ring")]
        program: Option<PathBuf>,
        /// The ring Z_2^k to share over, when no program is given.
        #[arg(long, default_value_t = 16)]
        ring: u32,
        /// The choices the program is compiled with (the shares must match them).
        #[command(flatten)]
        plan: PlanArgs,
        /// Replace existing stores and share files (an enrolled store loses its records).
        #[arg(long)]
        force: bool,
        /// Threads that deal records (default: one per core).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
    },
    /// Append new records to a gallery's three stores (made by `irisc share --program P.irs`):
    /// deals shares of the records for the same program and build choices and appends them
    /// durably to DIR/db.p{0,1,2}.shr (--db) or DIR/p{0,1,2}/NAME.shares (--input NAME=FILE).
    /// Ids must be new. An interrupted enroll leaves each store with its old or its new records.
    Enroll {
        program: PathBuf,
        /// The new records (NDJSON), for programs with one gallery input.
        #[arg(long, conflicts_with = "input", required_unless_present = "input")]
        db: Option<PathBuf>,
        /// Gallery input NAME's new records from the NDJSON FILE.
        #[arg(long = "input", value_name = "NAME=FILE")]
        input: Option<String>,
        /// The folder `irisc share -o` wrote the stores into.
        #[arg(long)]
        store: PathBuf,
        /// If the three stores disagree (an earlier enroll reached only some of them), first
        /// cut them back to the records all three hold.
        #[arg(long)]
        roll_back: bool,
        /// The choices the program is built with (the stores were shared with them).
        #[command(flatten)]
        plan: PlanArgs,
        /// Threads that deal records (default: one per core).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
    },
    /// Rewrite a gallery store's damaged or stale header slot from its intact mirror (after a
    /// power loss during a commit, or disk damage to one slot); loses no committed record.
    Repair {
        /// The stores to repair.
        #[arg(required = true)]
        stores: Vec<PathBuf>,
    },
    /// Look at gallery stores without changing them.
    #[command(subcommand)]
    Store(StoreCommand),
    /// One party of a boolean circuit under the `beaver` family (masked triples, paper 004):
    /// its preprocessing phase, or its online phase.
    #[command(subcommand)]
    Circuit(CircuitCommand),
    /// The roles of a cosine program under the two-server family `fss2` (paper 002): the
    /// dealer's enrollment and preprocessing, the two servers and the client, each its own
    /// process.
    #[command(subcommand)]
    Fss2(Fss2Command),
    /// Send queries to three serving parties (party executables started with --serve):
    /// shares each query input here, sends each party its share only, and prints the answers
    /// revealed to the client's side (one JSON line per query).
    Client {
        program: PathBuf,
        /// Query input NAME's queries from the NDJSON FILE (repeatable; every query input).
        #[arg(
            long = "input",
            value_name = "NAME=FILE",
            required_unless_present = "delete"
        )]
        inputs: Vec<String>,
        /// Delete these record ids from every gallery of the three parties (comma-separated):
        /// durably, and a deleted record never matches again.
        #[arg(long, value_delimiter = ',', conflicts_with_all = ["inputs", "enroll"])]
        delete: Vec<u64>,
        /// Reauthentication: match the queries against the record with this id alone (the
        /// person's claimed identity), not the whole gallery.
        #[arg(long, value_name = "ID", conflicts_with = "enroll")]
        reauth: Option<u64>,
        /// Reset (recovery): replace record ID of every gallery with the person's new capture,
        /// enrolled as --enroll says (its id becomes ID), in all three stores or none; the old
        /// record never matches again.
        #[arg(
            long,
            value_name = "ID",
            requires = "enroll",
            conflicts_with = "reauth"
        )]
        reset: Option<u64>,
        /// The parties' configuration (its CA checks the parties' API certificates; its
        /// entries' `api` give their addresses).
        #[arg(long, default_value = "parties.toml")]
        config: PathBuf,
        /// Party N's client API address, HOST:PORT (overrides the configuration; repeatable).
        #[arg(long = "api", value_name = "N=HOST:PORT")]
        apis: Vec<String>,
        /// File holding the bearer token the parties accept (owner-only).
        #[arg(long)]
        token: PathBuf,
        /// The request's id: a retry with the same id (and queries) is answered, not computed
        /// twice. Default: a fresh random id.
        #[arg(long = "request-id")]
        request_id: Option<String>,
        /// Seconds to keep trying (a party restarting, a batch in progress).
        #[arg(long, default_value_t = 120)]
        timeout: u64,
        /// Uniqueness with enrolment: GALLERY=QUERY enrols query input QUERY's record (one
        /// person) into gallery GALLERY, in all three parties' stores, when no query of the
        /// request matched; the answer says `"enrolled"` (repeatable: one per eye).
        #[arg(long, value_name = "GALLERY=QUERY")]
        enroll: Vec<String>,
        /// The choices the parties' executables were built with.
        #[command(flatten)]
        plan: PlanArgs,
    },
    /// Build, key, share and run all three parties on this machine, and print the answers.
    Run {
        program: PathBuf,
        /// Input NAME of the program from the NDJSON FILE (repeatable).
        #[arg(long = "input", value_name = "NAME=FILE")]
        inputs: Vec<String>,
        /// The gallery, for programs with one gallery input.
        #[arg(long)]
        db: Option<PathBuf>,
        /// The queries, for programs with one query input.
        #[arg(long)]
        query: Option<PathBuf>,
        #[command(flatten)]
        plan: PlanArgs,
        /// Keep the executable, keys and shares here (default: a temporary folder).
        #[arg(long)]
        work: Option<PathBuf>,
        /// Threads per party for the dot products.
        #[arg(long, default_value_t = 1)]
        threads: usize,
        /// Records per chunk of each party's gallery scan (the next chunk's dot products run
        /// while this chunk's comparisons wait on the network); 0, the parties' default: the
        /// whole gallery at once.
        #[arg(long, value_name = "N")]
        record_chunk: Option<usize>,
        /// Seconds a party waits for a peer (connecting and every message); the default is the
        /// runtime's, as in `parties.toml`.
        #[arg(long, default_value_t = irisc_runtime::net::config::DEFAULT_TIMEOUT.as_secs_f64())]
        timeout: f64,
        /// Also evaluate the plaintext definition and fail if the answers differ.
        #[arg(long)]
        check: bool,
        /// The backend the parties' executable is built for (`cuda`: the dot products on the
        /// GPU; the three parties share one GPU, one CUDA context each).
        #[arg(long, value_enum, default_value_t = TargetArg::Cpu)]
        target: TargetArg,
    },
    /// Run passes on a `.mlir` module and print the result (like mlir-opt).
    Opt(super::opt::OptArgs),
}

/// Who runs a circuit, shared by both phases.
#[derive(Debug, Args)]
pub struct CircuitPartyArgs {
    /// This party's index in parties.toml.
    #[arg(long)]
    party: usize,
    /// The parties (2 or more) and their keys.
    #[arg(long)]
    config: PathBuf,
    /// The circuit file.
    #[arg(long)]
    circuit: PathBuf,
    /// Independent evaluations side by side (each with its own triples and masks).
    #[arg(long, default_value_t = 1)]
    lanes: usize,
    /// The standard triple-based protocol (every branch on its own triples) instead of masked
    /// triples: the paper's baseline.
    #[arg(long)]
    standard: bool,
}

impl CircuitPartyArgs {
    fn party(&self) -> circuit::CircuitParty {
        circuit::CircuitParty {
            party: self.party,
            config: self.config.clone(),
            circuit: self.circuit.clone(),
            lanes: self.lanes,
            standard: self.standard,
        }
    }
}

/// `irisc circuit ...`: the two phases of a `beaver` run.
#[derive(Debug, Subcommand)]
pub enum CircuitCommand {
    /// TripleGen and MaskGen with the other parties; writes this party's preprocessing store
    /// (owner-only) and prints what it cost as one JSON line.
    Preprocess {
        #[command(flatten)]
        who: CircuitPartyArgs,
        /// MaskGen protocol: vs (any number of parties), seed-2p, seed-3p (default: the
        /// cheapest for the number of parties).
        #[arg(long)]
        maskgen: Option<String>,
        /// Executions the store holds (each consumed by one online run).
        #[arg(long, default_value_t = 1)]
        executions: u32,
        #[arg(short, long)]
        output: PathBuf,
    },
    /// What a run of the circuit costs, predicted from its shape: triples (longest path and
    /// naive), rounds, MaskGen material, bytes per party by phase, for both protocols.
    Explain {
        circuit: PathBuf,
        #[arg(long, default_value_t = 3)]
        parties: usize,
        #[arg(long, default_value_t = 1)]
        lanes: usize,
        #[arg(long)]
        maskgen: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The online phase on the store's next execution; party 0 owns the inputs (one line of
    /// 0/1 per lane); every party prints the opened outputs and what it cost as one JSON line.
    Run {
        #[command(flatten)]
        who: CircuitPartyArgs,
        #[arg(long)]
        store: PathBuf,
        #[arg(long)]
        inputs: Option<PathBuf>,
    },
}

/// `irisc fss2 ...`: one role of an `fss2` run.
#[derive(Debug, Subcommand)]
pub enum Fss2Command {
    /// The dealer enrolls the gallery: each server's share (`DIR/server0.gallery`,
    /// `DIR/server1.gallery`) and the dealer's secret (`DIR/dealer.secret`), owner-only.
    Enroll {
        program: PathBuf,
        /// The templates, NDJSON `{"id", "embedding"}`.
        #[arg(long)]
        gallery: PathBuf,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Enroll for the malicious variant (MACs on every share).
        #[arg(long)]
        malicious: bool,
    },
    /// The dealer's CS.Setup for a batch of authentications: one material store per server
    /// (`DIR/server0.material`, `DIR/server1.material`), each authentication used once.
    Deal {
        program: PathBuf,
        /// The dealer's secret from `enroll`.
        #[arg(long)]
        secret: PathBuf,
        #[arg(long, default_value_t = 1)]
        authentications: u32,
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The malicious variant with M trap/normal instances (paper 002: 10, 20, 40); the
        /// secret is `enroll --malicious`'s.
        #[arg(long, value_name = "M")]
        malicious: Option<u32>,
    },
    /// One server: serves `--queries` authentications of the client, then prints what it sent.
    Serve {
        program: PathBuf,
        /// This server's party (name or index in parties.toml).
        #[arg(long)]
        party: String,
        #[arg(long)]
        config: PathBuf,
        #[arg(long)]
        gallery: PathBuf,
        #[arg(long)]
        material: PathBuf,
        #[arg(long, default_value_t = 1)]
        queries: u32,
        /// The malicious variant with M instances.
        #[arg(long, value_name = "M")]
        malicious: Option<u32>,
    },
    /// The client: its queries (NDJSON `{"id", "embedding"}`) against the enrolled gallery;
    /// prints the matching ids of each.
    Query {
        program: PathBuf,
        #[arg(long)]
        party: String,
        #[arg(long)]
        config: PathBuf,
        #[arg(long)]
        queries: PathBuf,
        /// Also write the client's report (latency per query, bytes sent) as JSON here.
        #[arg(long)]
        report: Option<PathBuf>,
        /// The malicious variant with M instances: the client verifies every answer with the
        /// dealer's `psi` from `--material`.
        #[arg(long, value_name = "M", requires = "material")]
        malicious: Option<u32>,
        /// The client's store from `deal --malicious M` (`client.material-star`).
        #[arg(long)]
        material: Option<PathBuf>,
    },
}

/// `irisc store ...`: read-only commands on gallery stores.
#[derive(Debug, Subcommand)]
pub enum StoreCommand {
    /// Print each store's records, id range, schema, share set, commits and health (read-only;
    /// exits non-zero when a store is not intact).
    Info {
        /// The stores to look at.
        #[arg(required = true)]
        stores: Vec<PathBuf>,
    },
}

/// Runs the command: each command's logic lives in its module, named after it.
pub fn dispatch(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Opt(args) => super::opt::run(args),
        Command::Build {
            program,
            output,
            emit,
            print_ir_after_all,
            target,
            plan,
            explain,
            quiet,
        } => build::build(
            &program,
            output,
            emit,
            print_ir_after_all,
            target.into(),
            &plan.options_for(target)?,
            match (explain, quiet) {
                (true, _) => build::Report::Explain,
                (_, true) => build::Report::Quiet,
                _ => build::Report::Summary,
            },
        ),
        Command::Explain {
            program,
            json,
            records,
            plan,
            ..
        } if plan.protocol.as_deref() == Some("fss2") => fss2::run_explain(&program, records, json),
        Command::Explain {
            program,
            json,
            records,
            db,
            inputs,
            plan,
        } => explain::explain(&explain::ExplainRequest {
            program,
            json,
            records,
            db,
            inputs,
            plan: plan.options()?,
        }),
        Command::Gen {
            kind,
            count,
            seed,
            bits,
            near,
            ratio,
            speakers,
            per_speaker,
            dim,
            noise,
            voices,
            first_id,
            output,
        } => synth::generate(&synth::GenRequest {
            kind,
            count,
            seed,
            bits,
            near,
            ratio,
            speakers,
            per_speaker,
            dim,
            noise,
            voices,
            first_id,
            output,
        }),
        Command::Keys {
            output,
            join: true,
            force,
            ..
        } => keys::run_join(&output, force),
        Command::Keys {
            output,
            parties,
            base_port,
            addresses,
            listens,
            force,
            party,
            days,
            ..
        } => keys::run_keys(
            &output,
            &keys::Addresses::from_flags(parties.into(), base_port, &addresses, &listens)?,
            force,
            days,
            party.map(usize::from),
        ),
        Command::Share {
            inputs,
            db,
            query,
            output,
            program,
            ring,
            plan,
            force,
            threads,
        } => {
            dealer::dealing_threads(threads)?;
            dealer::run_share(&dealer::ShareRequest {
                inputs,
                db,
                query,
                output,
                program,
                ring,
                plan: plan.options()?,
                force,
            })
        }
        Command::Store(StoreCommand::Info { stores }) => store_info::run(&stores),
        Command::Client {
            program,
            inputs,
            config,
            apis,
            token,
            request_id,
            timeout,
            enroll,
            delete,
            reauth,
            reset,
            plan,
        } => super::client::run_client(&super::client::ClientRequest {
            enroll,
            delete,
            reauth,
            reset,
            program,
            inputs,
            plan: plan.options()?,
            config,
            apis,
            token,
            request_id,
            timeout: std::time::Duration::from_secs(timeout),
        }),
        Command::Fss2(Fss2Command::Enroll {
            program,
            gallery,
            out,
            malicious,
        }) => fss2::run_enroll(&program, &gallery, &out, malicious),
        Command::Fss2(Fss2Command::Deal {
            program,
            secret,
            authentications,
            out,
            malicious,
        }) => fss2::run_deal(&program, &secret, authentications, &out, malicious),
        Command::Fss2(Fss2Command::Serve {
            program,
            party,
            config,
            gallery,
            material,
            queries,
            malicious,
        }) => fss2::run_serve(
            &program, &party, &config, &gallery, &material, queries, malicious,
        ),
        Command::Fss2(Fss2Command::Query {
            program,
            party,
            config,
            queries,
            report,
            malicious,
            material,
        }) => fss2::run_query(
            &program,
            &party,
            &config,
            &queries,
            report.as_deref(),
            malicious.zip(material),
        ),
        Command::Circuit(CircuitCommand::Preprocess {
            who,
            maskgen,
            executions,
            output,
        }) => circuit::run_preprocess(&who.party(), maskgen.as_deref(), executions, &output),
        Command::Circuit(CircuitCommand::Explain {
            circuit: file,
            parties,
            lanes,
            maskgen,
            json,
        }) => circuit::run_explain(&file, parties, lanes, maskgen.as_deref(), json),
        Command::Circuit(CircuitCommand::Run { who, store, inputs }) => {
            circuit::run_online(&who.party(), &store, inputs.as_deref())
        }
        Command::Repair { stores } => dealer::run_repair(&stores),
        Command::Enroll {
            program,
            db,
            input,
            store,
            roll_back,
            plan,
            threads,
        } => {
            dealer::dealing_threads(threads)?;
            dealer::run_enroll(&dealer::EnrollRequest {
                program,
                db,
                input,
                store,
                roll_back,
                plan: plan.options()?,
            })
        }
        Command::Run {
            program,
            inputs,
            db,
            query,
            plan,
            work,
            threads,
            record_chunk,
            timeout,
            check,
            target,
        } if plan.protocol.as_deref() == Some("fss2") => {
            let (Some(db), Some(query)) = (db.as_ref(), query.as_ref()) else {
                anyhow::bail!("irisc run --protocol fss2 takes the gallery as --db and the queries as --query");
            };
            if !inputs.is_empty()
                || !matches!(target, TargetArg::Cpu)
                || threads != 1
                || record_chunk.is_some()
            {
                anyhow::bail!("irisc run --protocol fss2 takes --db, --query, --work, --timeout and --check only");
            }
            fss2::run_local(
                &program,
                db,
                query,
                work.as_deref(),
                timeout,
                check,
                plan.malicious,
            )
        }
        Command::Run {
            program,
            inputs,
            db,
            query,
            plan,
            work,
            threads,
            record_chunk,
            timeout,
            check,
            target,
        } => run::run(&run::RunOptions {
            program,
            inputs,
            db,
            query,
            plan: plan.options_for(target)?,
            work,
            threads,
            record_chunk,
            timeout,
            check,
            target: target.into(),
        }),
    }
}

#[cfg(test)]
mod timeout_tests {
    use super::*;

    #[test]
    fn run_waits_as_long_as_parties_toml_by_default() {
        let cli = Cli::try_parse_from(["irisc", "run", "p.irs"]).unwrap();
        let Command::Run { timeout, .. } = cli.command else {
            panic!("not a run");
        };
        assert_eq!(
            timeout,
            irisc_runtime::net::config::DEFAULT_TIMEOUT.as_secs_f64()
        );
        assert_eq!(
            keys::DEFAULT_TIMEOUT_SECS as f64,
            irisc_runtime::net::config::DEFAULT_TIMEOUT.as_secs_f64()
        );
    }
}
