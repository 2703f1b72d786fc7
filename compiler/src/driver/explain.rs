//! `irisc explain`: what the compiler chose for a program (sharing, variant, rings and why),
//! what it costs, and what each party learns, as text or JSON
//! ([`crate::analysis::explain`] renders it).
//!
//! The totals are for one gallery size: `--records N`, else the record count of a gallery store
//! or share file given with `--db FILE` / `--input NAME=FILE` (any party's), else an assumed
//! size that the text says is assumed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use irisc_runtime::vocab::InputRole;

use crate::analysis::explain::{self as ex, RecordsSource, ASSUMED_RECORDS};
use crate::analysis::plan::PlanOptions;
use crate::sema::program::Program;

use super::{pipeline, write_stdout};

/// What `irisc explain` was asked.
#[derive(Debug, Clone)]
pub struct ExplainRequest {
    pub program: PathBuf,
    pub json: bool,
    /// `--records N`.
    pub records: Option<u64>,
    /// `--db FILE`: the gallery store or share file of a program with one gallery.
    pub db: Option<PathBuf>,
    /// `--input NAME=FILE`: a gallery input's store or share file.
    pub inputs: Vec<String>,
    pub plan: PlanOptions,
}

/// Prints the explanation of the program, its totals for the gallery size the request gives.
pub fn explain(request: &ExplainRequest) -> Result<ExitCode> {
    let checked = pipeline::read_and_check(&request.program)?;
    let (records, origin) = records_for(&checked.program, request)?;
    let planned = pipeline::plan(&checked, &request.plan)?;
    if request.json {
        let v = ex::explain_program_json_with_source(
            &checked.program,
            &planned.plan,
            records,
            Some(&checked.source),
        );
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    } else {
        write_stdout(&ex::explain_program_text_with_source(
            &checked.program,
            &planned.plan,
            records,
            &origin,
            Some(&checked.source),
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The gallery size of the totals and where it came from.
fn records_for(program: &Program, request: &ExplainRequest) -> Result<(u64, RecordsSource)> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for spec in &request.inputs {
        let (name, file) = spec
            .split_once('=')
            .ok_or_else(|| anyhow!("--input {spec}: expected NAME=FILE"))?;
        let Some(input) = program.inputs.iter().find(|i| i.name == name) else {
            let names: Vec<&str> = program.inputs.iter().map(|i| i.name.as_str()).collect();
            bail!(
                "--input {spec}: the program has no input `{name}` (its inputs: {})",
                names.join(", ")
            );
        };
        if input.role != InputRole::Gallery {
            bail!("--input {spec}: `{name}` is a query; the totals take their size from a gallery");
        }
        files.push((name.to_string(), PathBuf::from(file)));
    }
    if let Some(db) = &request.db {
        let galleries: Vec<&str> = program
            .inputs
            .iter()
            .filter(|i| i.role == InputRole::Gallery)
            .map(|i| i.name.as_str())
            .collect();
        match galleries.as_slice() {
            [one] => files.push((one.to_string(), db.clone())),
            _ => bail!(
                "--db needs a program with exactly one gallery; this one has {}: use --input \
                 NAME=FILE",
                if galleries.is_empty() {
                    "none".to_string()
                } else {
                    galleries.join(", ")
                }
            ),
        }
    }
    let mut sized: Option<(u64, PathBuf)> = None;
    for (name, file) in &files {
        let n = gallery_records(file).with_context(|| format!("gallery {name}"))?;
        if let Some((m, first)) = &sized {
            if *m != n {
                bail!(
                    "{} holds {n} records but {} holds {m}: the galleries of one program are \
                     index-aligned and hold the same number of records",
                    file.display(),
                    first.display()
                );
            }
        } else {
            sized = Some((n, file.clone()));
        }
    }
    Ok(match (request.records, sized) {
        (Some(n), _) => (n, RecordsSource::Flag),
        (None, Some((n, file))) => (n, RecordsSource::Store(file)),
        (None, None) => (ASSUMED_RECORDS, RecordsSource::Assumed),
    })
}

/// The record count of a gallery store or a share file (read from its header; a store is
/// verified as the parties verify it).
pub fn gallery_records(path: &Path) -> Result<u64> {
    use irisc_runtime::io::share_file;
    use irisc_runtime::store::{is_store, Store};
    let store = is_store(path).with_context(|| format!("cannot read {}", path.display()))?;
    if store {
        let s = Store::open_with(path, false).map_err(|e| anyhow!("{e}"))?;
        return Ok(s.len() as u64);
    }
    let header = share_file::read_header(path).map_err(|e| anyhow!("{e}"))?;
    if header.role != InputRole::Gallery {
        bail!(
            "{} holds queries, not a gallery: give the gallery's store or share file",
            path.display()
        );
    }
    Ok(header.count)
}
