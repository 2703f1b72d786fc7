//! The `irisc` command line: `build`, `explain`, `gen`, `keys`, `share`, `enroll`, `repair`,
//! `store info`, `run`.
//!
//! One module per concept, each findable by name:
//! - `cli`: the argument definitions (clap) and the dispatch to the modules below, nothing else;
//! - [`checked`]: a source file through the front end, and errors rendered at its source;
//! - [`pipeline`]: read, check, plan and compile a program (the stages in order);
//! - [`build`] (`irisc build`) and [`explain`] (`irisc explain`);
//! - [`synth`]: synthetic inputs (`irisc gen`): iris galleries and queries, embeddings, bits;
//! - [`keys`]: TLS keys and `parties.toml` (`irisc keys`);
//! - [`dealer`]: plaintext inputs into the parties' shares and gallery stores (`irisc share`,
//!   `irisc enroll`, `irisc repair`);
//! - [`store_info`]: what a gallery store holds and whether it is intact (`irisc store info`);
//! - [`circuit`]: one party of a boolean circuit under the `beaver` family (`irisc circuit`);
//! - [`run`]: all three parties on this machine (`irisc run`), with `--check`;
//! - [`fss2_program`]: what a program means under the two-server family; [`fss2`]: its roles
//!   as processes (`irisc fss2`, `irisc run --protocol fss2`);
//! - [`plaintext`]: the plaintext definition of a program's answers, the oracle of `--check` and
//!   of the end-to-end tests;
//! - [`progress`]: progress bars for long jobs.

pub mod build;
pub mod checked;
pub mod circuit;
mod cli;
pub mod client;
pub mod dealer;
pub mod explain;
pub mod fss2;
pub mod fss2_program;
pub mod keys;
pub mod opt;
pub mod pipeline;
pub mod plaintext;
pub mod progress;
pub mod run;
pub mod store_info;
pub mod synth;

use std::process::ExitCode;

use clap::Parser;

pub fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let filter =
        tracing_subscriber::EnvFilter::try_from_env("IRISC_LOG").unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
    match cli::dispatch(cli) {
        Ok(code) => code,
        Err(e) => {
            // Diagnostics arrive already rendered; other errors get the usual prefix.
            let text = format!("{e:#}");
            if text.starts_with("error") {
                eprintln!("{text}");
            } else {
                eprintln!("irisc: error: {text}");
            }
            ExitCode::FAILURE
        }
    }
}

/// Writes a stage or report to stdout. A reader that closes the pipe early (`| head`) is not an
/// error: the rest is simply not wanted.
pub(crate) fn write_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
