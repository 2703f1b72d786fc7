//! The command line of a generated executable.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use crate::error::RuntimeError;
use crate::manifest::Manifest;

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
    #[arg(long = "party", value_name = "N", value_parser = clap::value_parser!(u8).range(0..3), required_unless_present = "explain")]
    party_flag: Option<u8>,
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
    /// one. All three parties must pass the same value.
    #[arg(long = "chunk-size", value_name = "N", default_value_t = crate::protocol::DEFAULT_CHUNK_ELEMS)]
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
    /// Report progress (links up, each query) on stderr.
    #[arg(long)]
    pub verbose: bool,
    /// Do not print the accounting line.
    #[arg(long)]
    pub quiet: bool,
    /// Also write the accounting (bytes, messages, rounds, phase times, CPU time, peak memory)
    /// as JSON to PATH.
    #[arg(long, value_name = "PATH")]
    pub stats: Option<PathBuf>,
    /// Print what the compiler chose for this program (rings, costs, leakage) and exit.
    #[arg(long)]
    pub explain: bool,
    #[arg(skip)]
    pub party: usize,
}

impl PartyArgs {
    pub fn parse(argv: Vec<OsString>, manifest: &Manifest) -> Result<PartyArgs, RuntimeError> {
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
        args.party = args.party_flag.unwrap_or(0) as usize;
        args.record_chunk = args.record_chunk_flag.unwrap_or(manifest.record_chunk);
        if args.threads == 0 {
            return Err(RuntimeError::Usage("--threads must be at least 1".into()));
        }
        Ok(args)
    }
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
        }
    }

    fn parse(flags: &[&str], m: &Manifest) -> PartyArgs {
        let mut argv: Vec<OsString> = vec!["p".into(), "--party".into(), "1".into()];
        argv.extend(flags.iter().map(OsString::from));
        PartyArgs::parse(argv, m).unwrap()
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
