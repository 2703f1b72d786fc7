//! What can be wrong with a share file, said so that the user knows what to do.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ShareFileError {
    // The cause is part of the message and deliberately not a `#[source]`: an error chain
    // printer (`{:#}`) would otherwise repeat it ("No such file or directory" twice).
    #[error("cannot {action} {path}: {cause}")]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: io::Error,
    },
    #[error("{path} is not an irisc share file (bad magic)")]
    NotShareFile { path: PathBuf },
    #[error("{path} is share-file format version {found}, but this build reads version {supported}{}: re-share the input with this irisc (`irisc share --program P.irs --input NAME=FILE`)", if *found < *supported { " (older files have no payload kind or sharing scheme)" } else { "" })]
    Version {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error("{path}: expected {expected} bytes, found {found}: the file is truncated")]
    Truncated {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error("{path}: expected {expected} bytes, found {found}: the file has trailing data (corrupted, or not written by irisc)")]
    TrailingData {
        path: PathBuf,
        expected: u64,
        found: u64,
    },
    #[error("{path} is corrupted: its body does not match the BLAKE3 hash in its header")]
    Corrupted { path: PathBuf },
    #[error("{0}")]
    Exposed(String),
    #[error("{path}: malformed share file: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("cannot write {path}: {detail}")]
    Invalid { path: PathBuf, detail: String },
    #[error("{path} {detail}")]
    Incompatible { path: PathBuf, detail: String },
    #[error("the operating system's random generator failed: {0}")]
    Random(String),
}
