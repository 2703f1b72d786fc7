//! What can be wrong with a gallery store, said so that the operator knows what to do.

use std::io;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    // The cause is part of the message and deliberately not a `#[source]`: an error chain
    // printer (`{:#}`) would otherwise repeat it ("No such file or directory" twice).
    #[error("{0}")]
    Exposed(String),
    #[error("cannot {action} {path}: {cause}")]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: io::Error,
    },
    #[error("{path} is not an irisc gallery store (bad magic)")]
    NotStore { path: PathBuf },
    #[error(
        "{path} is gallery-store format version {found}, but this build reads versions {oldest} to {supported}"
    )]
    Version {
        path: PathBuf,
        found: u32,
        oldest: u32,
        supported: u32,
    },
    #[error("{path} is truncated: its header commits {count} records in {expected} bytes but the file has {found}: the file was cut short (copied incompletely or the disk filled up); copy it again from its source or share the gallery again")]
    Truncated {
        path: PathBuf,
        count: u64,
        found: u64,
        expected: u64,
    },
    #[error(
        "{path}: both header slots are damaged ({first}; {second}): the store cannot be trusted"
    )]
    HeaderCorrupted {
        path: PathBuf,
        first: String,
        second: String,
    },
    #[error("{path}: header slot {slot} is damaged ({detail}); slot {other} is intact with {count} records: the last commit was interrupted or the disk damaged the header; repair the store with `irisc repair {path}` (an append also repairs it) before scanning")]
    HeaderSlotDamaged {
        path: PathBuf,
        slot: usize,
        other: usize,
        detail: String,
        count: u64,
    },
    #[error("{path} is corrupted: its records do not match the checksum in its header (a damaged disk or a changed byte); restore the file from a copy or share the gallery again")]
    RecordsCorrupted { path: PathBuf },
    #[error("{path}: malformed gallery store: {detail}")]
    Malformed { path: PathBuf, detail: String },
    #[error("cannot use {path}: {detail}")]
    Invalid { path: PathBuf, detail: String },
    #[error("{path} {detail}")]
    Incompatible { path: PathBuf, detail: String },
    #[error("{path} is locked by another writer: only one process may append at a time")]
    Locked { path: PathBuf },
    #[error("{path} already exists: refusing to overwrite a gallery store")]
    Exists { path: PathBuf },
    #[error("the operating system's random generator failed: {0}")]
    Random(String),
}

pub(crate) fn io_err(
    action: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |cause| StoreError::Io {
        action,
        path,
        cause,
    }
}
