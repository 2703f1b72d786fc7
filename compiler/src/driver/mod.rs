//! The `irisc` command line.

pub mod keys;

pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
