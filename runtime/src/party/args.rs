//! The command line of a generated executable.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use crate::error::RuntimeError;
use crate::manifest::{BuildInfo, Manifest, ABI_VERSION};

/// Gallery records per chunk of the tiled scan when `--record-chunk` is not given: 0, the
/// whole gallery in one chunk. Chunks let the next chunk's dot products run in the background
/// while this chunk's comparisons wait on the network, but every chunk repeats the comparison's
/// rounds; that pays only where a party has a core to spare and the round trip is short, so it
/// is asked for, not assumed (README, "Tiled schedule").
pub const DEFAULT_RECORD_CHUNK: usize = 0;

/// Runs one of the three parties of an irisc program.
#[derive(Debug, Clone, Parser)]
#[command(about = "Runs one party of an irisc three-party matching program.")]
pub struct PartyArgs {
    /// This party's index: 0, 1 or 2.
    #[arg(long = "party", value_name = "N", allow_hyphen_values = true, required_unless_present_any = ["explain", "version"])]
    party_flag: Option<String>,
    /// The parties file written by `irisc keys`.
    #[arg(long, default_value = "parties.toml")]
    pub config: PathBuf,
    /// This party's share file of input NAME (from `irisc share --input NAME=...`); repeat for
    /// every input of the program.
    #[arg(long = "input", value_name = "NAME=PATH")]
    pub inputs: Vec<String>,
    /// This party's gallery share file, for programs with exactly one gallery input.
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// This party's query share file, for programs with exactly one query input.
    #[arg(long)]
    pub query: Option<PathBuf>,
    /// Seconds to wait for a peer (connecting and every message); overrides parties.toml.
    #[arg(long)]
    pub timeout: Option<f64>,
    /// Threads for the dot-product kernels.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Elements per message chunk of the comparison rounds (0: one message per round). A
    /// round's message is sent in chunks so that computing the next chunk overlaps sending this
    /// one. Default: 1048576 (2^20), or 0 for a party built with `--target cuda`. All three
    /// parties must use the same value.
    #[arg(long = "chunk-size", value_name = "N")]
    chunk_size_flag: Option<usize>,
    /// The elements per message chunk in effect: `--chunk-size`, else the build's default
    /// ([`crate::protocol::default_chunk_elems`]).
    #[arg(skip = crate::protocol::DEFAULT_CHUNK_ELEMS)]
    pub chunk_size: usize,
    /// Gallery records per chunk of the tiled gallery scan (default: the program's, as compiled
    /// with `mpc-tile{record-chunk=N}`; 0, the whole gallery in one chunk, unless compiled
    /// otherwise). With chunks the schedule computes the dot products of the next chunk in the
    /// background while this one is compared; smaller chunks need less memory per batch and
    /// overlap more, larger ones repeat the comparison's rounds fewer times. All three parties
    /// must pass the same value.
    #[arg(long = "record-chunk", value_name = "N")]
    record_chunk_flag: Option<usize>,
    /// The records per chunk in effect: `--record-chunk`, else the manifest's.
    #[arg(skip = DEFAULT_RECORD_CHUNK)]
    pub record_chunk: usize,
    /// This party's preprocessing store (`irisc circuit preprocess`), for programs built with
    /// `--protocol beaver`: one execution is consumed per query.
    #[arg(long, value_name = "PATH")]
    pub preprocessing: Option<PathBuf>,
    /// Report progress (links up, each query) on stderr.
    #[arg(long)]
    pub verbose: bool,
    /// Do not print the accounting line.
    #[arg(long)]
    pub quiet: bool,
    /// How lines reach stderr: `text` (sentences) or `json` (one object per line: time,
    /// program, party, level, event, message; a serving party adds one per request).
    #[arg(
        long = "log-format",
        value_name = "FORMAT",
        value_enum,
        default_value = "text"
    )]
    pub log_format: crate::log::LogFormat,
    /// Also write the accounting (bytes, messages, rounds, phase times, CPU time, peak memory)
    /// as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub stats: Option<PathBuf>,
    /// Run as a long-lived service: load the galleries and connect once, then answer client
    /// requests (`irisc client`) on HTTPS at ADDR (host:port), batch after batch. Query inputs
    /// come from the requests, not from share files.
    #[arg(long, value_name = "ADDR")]
    pub serve: Option<String>,
    /// With --serve: the file holding the clients' bearer token (owner-only, 0600).
    #[arg(long = "api-token", value_name = "PATH", requires = "serve")]
    pub api_token: Option<PathBuf>,
    /// With --serve: most queries in one batch (requests are never split).
    #[arg(long = "max-batch", value_name = "N", default_value_t = 64)]
    pub max_batch: usize,
    /// Print what the compiler chose for this program (rings, costs, leakage) and exit.
    #[arg(long)]
    pub explain: bool,
    /// Print the program's name and fingerprint and the compiler's version, and exit.
    #[arg(long, short = 'V')]
    pub version: bool,
    #[arg(skip)]
    pub party: usize,
}

impl PartyArgs {
    pub fn parse(argv: Vec<OsString>, manifest: &Manifest) -> Result<PartyArgs, RuntimeError> {
        Self::parse_built(argv, manifest, &BuildInfo::default())
    }

    /// [`PartyArgs::parse`] for an executable built as `build` says (for `--version`).
    pub fn parse_built(
        argv: Vec<OsString>,
        manifest: &Manifest,
        build: &BuildInfo,
    ) -> Result<PartyArgs, RuntimeError> {
        let mut args = match PartyArgs::try_parse_from(argv) {
            Ok(a) => a,
            Err(e) => {
                use clap::error::ErrorKind;
                if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                    print!("{e}");
                    std::process::exit(0);
                }
                let text = e.to_string();
                let text = text.trim_end().trim_start_matches("error: ");
                return Err(RuntimeError::Usage(text.to_string()));
            }
        };
        if args.explain {
            println!(
                "{}",
                serde_json::to_string_pretty(&manifest.explain).unwrap_or_default()
            );
            std::process::exit(0);
        }
        if args.version {
            println!("{}", version_line(manifest, build));
            std::process::exit(0);
        }
        args.party = match args.party_flag.as_deref() {
            None => 0,
            Some(p) => match p.trim().parse::<usize>() {
                Ok(i) if i < 3 => i,
                _ => {
                    return Err(RuntimeError::Usage(format!(
                        "--party must be 0, 1 or 2 (got {p})"
                    )))
                }
            },
        };
        args.record_chunk = args.record_chunk_flag.unwrap_or(manifest.record_chunk);
        args.chunk_size = args
            .chunk_size_flag
            .unwrap_or_else(|| crate::protocol::default_chunk_elems(&build.backend));
        if args.serve.is_some() && args.api_token.is_none() {
            return Err(RuntimeError::Usage(
                "--serve needs --api-token PATH: the clients' bearer token (a file readable by its owner only)".into(),
            ));
        }
        if args.max_batch == 0 {
            return Err(RuntimeError::Usage("--max-batch must be at least 1".into()));
        }
        if args.threads == 0 {
            return Err(RuntimeError::Usage("--threads must be at least 1".into()));
        }
        Ok(args)
    }
}

/// What `--version` prints: the program, its fingerprint, and what built it.
pub fn version_line(manifest: &Manifest, build: &BuildInfo) -> String {
    let compiler = if build.compiler.is_empty() {
        "an irisc that did not record its version".to_string()
    } else {
        format!("irisc {}", build.compiler)
    };
    format!(
        "{} (program fingerprint {}), compiled by {compiler}, runtime {} (ABI {ABI_VERSION})",
        manifest.program,
        manifest.fingerprint,
        env!("CARGO_PKG_VERSION"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::ABI_VERSION;

    fn manifest(record_chunk: usize) -> Manifest {
        Manifest {
            abi: ABI_VERSION,
            program: "p".into(),
            fingerprint: "f".into(),
            inputs: vec![],
            zips: vec![],
            parties: ["a".into(), "b".into(), "c".into()],
            explain: serde_json::Value::Null,
            record_chunk,
            beaver: None,
        }
    }

    fn parse(flags: &[&str], m: &Manifest) -> PartyArgs {
        let mut argv: Vec<OsString> = vec!["p".into(), "--party".into(), "1".into()];
        argv.extend(flags.iter().map(OsString::from));
        PartyArgs::parse(argv, m).unwrap()
    }

    fn parse_err(flags: &[&str]) -> String {
        let mut argv: Vec<OsString> = vec!["p".into()];
        argv.extend(flags.iter().map(OsString::from));
        PartyArgs::parse(argv, &manifest(0))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn party_out_of_range_names_the_flag_and_the_value() {
        assert_eq!(
            parse_err(&["--party", "3"]),
            "--party must be 0, 1 or 2 (got 3)"
        );
        assert_eq!(
            parse_err(&["--party", "-1"]),
            "--party must be 0, 1 or 2 (got -1)"
        );
        assert_eq!(
            parse_err(&["--party", "two"]),
            "--party must be 0, 1 or 2 (got two)"
        );
        assert_eq!(parse(&[], &manifest(0)).party, 1);
    }

    #[test]
    fn version_names_program_fingerprint_and_compiler() {
        let build = BuildInfo {
            compiler: "9.8.7".into(),
            ..Default::default()
        };
        let line = version_line(&manifest(0), &build);
        assert!(
            line.starts_with("p (program fingerprint f), compiled by irisc 9.8.7, runtime "),
            "{line}"
        );
    }

    #[test]
    fn message_chunks_default_to_the_builds_unless_the_flag_overrides_them() {
        let built = |backend: &str, flags: &[&str]| {
            let mut argv: Vec<OsString> = vec!["p".into(), "--party".into(), "0".into()];
            argv.extend(flags.iter().map(OsString::from));
            let build = BuildInfo {
                backend: backend.into(),
                ..Default::default()
            };
            PartyArgs::parse_built(argv, &manifest(0), &build)
                .unwrap()
                .chunk_size
        };
        assert_eq!(built("cpu", &[]), 1 << 20);
        assert_eq!(
            built("cuda", &[]),
            0,
            "the device's MSB extraction runs unchunked"
        );
        assert_eq!(built("cpu", &["--chunk-size", "0"]), 0);
        assert_eq!(built("cuda", &["--chunk-size", "4096"]), 4096);
    }

    #[test]
    fn record_chunk_is_the_compiled_default_unless_the_flag_overrides_it() {
        assert_eq!(parse(&[], &manifest(0)).record_chunk, 0);
        assert_eq!(parse(&[], &manifest(1000)).record_chunk, 1000);
        let flagged = parse(&["--record-chunk", "5"], &manifest(1000));
        assert_eq!(flagged.record_chunk, 5);
        assert_eq!(
            parse(&["--record-chunk", "0"], &manifest(7)).record_chunk,
            0
        );
    }
}
