//! `irisc share` never replaces a store or share file silently: an enrolled gallery store holds
//! records that may exist nowhere else in plaintext.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};
use irisc_runtime::io::share_file;
use irisc_runtime::store;

/// Refuses (unless `force`) when any of `paths` exists, naming the first such file and what it
/// holds. Called before anything is written, so a refusal leaves every file as it was.
pub fn refuse_overwrite(paths: &[PathBuf], force: bool) -> Result<()> {
    if force {
        return Ok(());
    }
    let existing: Vec<&PathBuf> = paths.iter().filter(|p| p.exists()).collect();
    let Some(first) = existing.first() else {
        return Ok(());
    };
    let others = match existing.len() - 1 {
        0 => String::new(),
        1 => " (and 1 more of the files to write exists)".into(),
        n => format!(" (and {n} more of the files to write exist)"),
    };
    bail!(
        "{} already exists and holds {}{others}: `irisc share` would replace it; pass --force to replace it, write to another folder (-o), or add records to a gallery store with `irisc enroll`",
        first.display(),
        describe(first)
    )
}

/// What the file at `path` holds, in a few words.
pub fn describe(path: &Path) -> String {
    if let Ok(true) = store::is_store(path) {
        return match store::inspect(path) {
            Ok(found) => {
                let h = &found.header;
                let ids = match &found.opened {
                    Ok(st) => {
                        let ids = st.ids();
                        match (ids.iter().min(), ids.iter().max()) {
                            (Some(lo), Some(hi)) => format!(", ids {lo} to {hi}"),
                            _ => String::new(),
                        }
                    }
                    Err(_) => ", not intact (see `irisc store info`)".into(),
                };
                format!(
                    "party {}'s gallery store of {} records{ids}",
                    h.params.party, h.count
                )
            }
            Err(e) => format!("a gallery store that cannot be read ({e})"),
        };
    }
    match share_file::read_header(path) {
        Ok(h) => format!(
            "party {}'s share file of {} {} records ({})",
            h.party, h.count, h.role, h.payload
        ),
        Err(_) => match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => "a folder".into(),
            Ok(m) => format!("{} bytes that irisc did not write", m.len()),
            Err(e) => format!("something that cannot be read ({e})"),
        },
    }
}
