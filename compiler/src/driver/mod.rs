//! The `irisc` command line.

pub mod gen;
pub mod share;

pub fn main() -> std::process::ExitCode {
    std::process::ExitCode::SUCCESS
}
