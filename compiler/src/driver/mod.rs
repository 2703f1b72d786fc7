//! The `irisc` command line: `build`, `explain`, `gen`, `keys`, `share`, `enroll`, `repair`, `run`.
//!
//! Each subcommand lives in its own module; this file only parses arguments and dispatches.

mod cli;
pub mod deal;
pub mod gen;
pub mod gen_values;
pub mod keys;
pub mod opt;
pub mod pipeline;
pub mod plain;
pub mod run;
pub mod share;
pub mod store;

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
