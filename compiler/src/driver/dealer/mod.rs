//! The dealer: the only place plaintext inputs become the three parties' shares.
//!
//! - [`share`]: `irisc share`, one input file into one share file per party (the record
//!   encodings and the per-kind sharing choices);
//! - [`deal`]: splitting values into rep3, F_p Shamir or GR(2^16, d) Shamir shares;
//! - [`store`]: gallery stores: sharing a gallery into three stores, `irisc enroll` appending to
//!   them, `irisc repair` restoring a damaged header slot.
//!
//! This module holds the commands' entry points; the work is in the submodules.

pub mod deal;
pub mod ids;
mod overwrite;
pub mod share;
pub mod store;
pub mod stream;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Result};

use irisc_runtime::manifest::{Manifest, ManifestInput};
use irisc_runtime::vocab::InputRole;

use crate::analysis::plan::PlanOptions;

use super::pipeline;

/// Sizes the dealing threads' pool (`--threads`; `None`: one thread per core, or
/// `RAYON_NUM_THREADS`). Once per process, before any dealing.
pub fn dealing_threads(threads: Option<u16>) -> Result<()> {
    if let Some(n) = threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .map_err(|e| anyhow::anyhow!("cannot start {n} dealing threads: {e}"))?;
    }
    Ok(())
}

/// One `irisc share` request.
#[derive(Debug, Clone)]
pub struct ShareRequest {
    /// `NAME=FILE` inputs of `program`.
    pub inputs: Vec<String>,
    /// The gallery / the queries of a one-gallery, one-query program (or of no program).
    pub db: Option<PathBuf>,
    pub query: Option<PathBuf>,
    pub output: PathBuf,
    pub program: Option<PathBuf>,
    /// Z_2^k to share `db` / `query` over when no program is given.
    pub ring: u32,
    pub plan: PlanOptions,
    /// Replace existing stores and share files (refused otherwise).
    pub force: bool,
}

/// Every file `irisc share` would write for `req`, so that existing ones are refused before any
/// is written.
fn share_targets(req: &ShareRequest, manifest: Option<&Manifest>) -> Result<Vec<PathBuf>> {
    let mut paths = Vec::new();
    if let Some(manifest) = manifest {
        for arg in &req.inputs {
            let (name, _) = share::parse_input_arg(arg)?;
            let spec = share::find_input(manifest, &name)?;
            paths.extend(share::input_paths(&req.output, &spec.name));
        }
    }
    for (file, stem) in [(&req.db, "db"), (&req.query, "query")] {
        if file.is_some() {
            paths.extend(share::share_paths(&req.output, stem));
        }
    }
    Ok(paths)
}

/// `irisc share`: writes each input's three share files (or gallery stores) into `req.output`.
pub fn run_share(req: &ShareRequest) -> Result<ExitCode> {
    let output = &req.output;
    let manifest = match &req.program {
        Some(p) => {
            let checked = pipeline::read_and_check(p)?;
            let planned = pipeline::plan(&checked, &req.plan)?;
            Some(share::program_manifest(&checked, &planned)?)
        }
        None => None,
    };
    overwrite::refuse_overwrite(&share_targets(req, manifest.as_ref())?, req.force)?;
    let mut written = Vec::new();
    if !req.inputs.is_empty() {
        let manifest = manifest
            .as_ref()
            .ok_or_else(|| anyhow::anyhow!("--input needs --program"))?;
        let specs = share::input_specs(manifest);
        for arg in &req.inputs {
            let (name, file) = share::parse_input_arg(arg)?;
            let spec = specs
                .iter()
                .find(|s| s.name == name)
                .map(Ok)
                .unwrap_or_else(|| share::find_input(manifest, &name))?;
            let paths = share::input_paths(output, &spec.name);
            written.extend(if store::is_store_input(spec) {
                store::share_to_stores(&manifest.fingerprint, spec, &file, paths)?
            } else {
                share::share_input_to(spec, None, &file, paths)?
            });
        }
    } else if req.db.is_none() && req.query.is_none() {
        bail!("give the inputs to share: --program P.irs --input NAME=FILE (repeatable), or --db / --query");
    }
    if req.db.is_some() || req.query.is_some() {
        // With a program: the sharing and ring of its only gallery / query input.
        let spec_for = |role: InputRole| -> Result<Option<&ManifestInput>> {
            let Some(m) = &manifest else { return Ok(None) };
            let of_role = m.inputs_with(role);
            let [i] = of_role[..] else {
                bail!("--db / --query are for programs with one gallery and one query input; use --input NAME=FILE");
            };
            Ok(Some(&m.inputs[i]))
        };
        let ring = req.ring;
        if !(2..=64).contains(&ring) {
            bail!("--ring must be between 2 and 64, not {ring}");
        }
        for (file, role, stem) in [
            (&req.db, InputRole::Gallery, "db"),
            (&req.query, InputRole::Query, "query"),
        ] {
            let Some(file) = file else { continue };
            let paths = share::share_paths(output, stem);
            written.extend(match spec_for(role)? {
                Some(spec) if store::is_store_input(spec) => {
                    let fingerprint = manifest
                        .as_ref()
                        .map(|m| m.fingerprint.clone())
                        .unwrap_or_default();
                    store::share_to_stores(&fingerprint, spec, file, paths)?
                }
                Some(spec) => share::share_input_to(spec, None, file, paths)?,
                None => share::share_file(file, output, role, ring, stem)?,
            });
        }
    }
    for f in written {
        eprintln!("wrote {}", f.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// One `irisc enroll` request.
#[derive(Debug, Clone)]
pub struct EnrollRequest {
    pub program: PathBuf,
    /// The new records of a one-gallery program.
    pub db: Option<PathBuf>,
    /// `NAME=FILE`: gallery input NAME's new records.
    pub input: Option<String>,
    /// The folder `irisc share -o` wrote the stores into (either layout).
    pub store: PathBuf,
    pub roll_back: bool,
    pub plan: PlanOptions,
}

/// `irisc enroll`: deals the new records and appends them durably to the three stores.
pub fn run_enroll(req: &EnrollRequest) -> Result<ExitCode> {
    let checked = pipeline::read_and_check(&req.program)?;
    let planned = pipeline::plan(&checked, &req.plan)?;
    let manifest = share::program_manifest(&checked, &planned)?;
    let (spec, file) = match (&req.db, &req.input) {
        (Some(file), _) => {
            let of_role = manifest.inputs_with(InputRole::Gallery);
            let [i] = of_role[..] else {
                bail!("--db is for programs with one gallery input; use --input NAME=FILE");
            };
            (&manifest.inputs[i], file.clone())
        }
        (None, Some(arg)) => {
            let (name, file) = share::parse_input_arg(arg)?;
            (share::find_input(&manifest, &name)?, file)
        }
        (None, None) => bail!("give the new records: --db FILE or --input NAME=FILE"),
    };
    let paths = enroll_paths(&req.store, &manifest, spec, req.db.is_some())?;
    let done = store::enroll(spec, &file, &paths, req.roll_back)?;
    if let Some(n) = done.rolled_back {
        eprintln!("rolled the three stores back to their {n} common records");
    }
    for p in &paths {
        eprintln!(
            "appended {} records to {} (now {})",
            done.appended,
            p.display(),
            done.count
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// The three stores of gallery input `spec` in the folder `dir`, in either layout `irisc share
/// -o DIR` writes: `DIR/db.p{0,1,2}.shr` (`--db FILE`, for a program with one gallery input) or
/// `DIR/p{0,1,2}/NAME.shares` (`--input NAME=FILE`). The layout of the flag enroll was given
/// (`by_db`) comes first; the other is taken when only it exists.
fn enroll_paths(
    dir: &Path,
    manifest: &Manifest,
    spec: &ManifestInput,
    by_db: bool,
) -> Result<[PathBuf; 3]> {
    let mut layouts = vec![(
        share::input_paths(dir, &spec.name),
        format!("--input {}=FILE", spec.name),
    )];
    if manifest.inputs_with(InputRole::Gallery).len() == 1 {
        let db = (share::share_paths(dir, "db"), "--db FILE".to_string());
        if by_db {
            layouts.insert(0, db);
        } else {
            layouts.push(db);
        }
    }
    let exists = |paths: &[PathBuf; 3]| paths.iter().any(|p| p.exists());
    if let Some((paths, _)) = layouts.iter().find(|(paths, _)| exists(paths)) {
        return Ok(paths.clone());
    }
    let tried: Vec<String> = layouts
        .iter()
        .map(|(paths, how)| format!("{} (from `irisc share {how}`)", paths[0].display()))
        .collect();
    bail!(
        "{} holds no gallery stores of input `{}`: looked for {}; create them with `irisc share --program P.irs` first",
        dir.display(),
        spec.name,
        tried.join(" and ")
    )
}

/// `irisc repair`: rewrites each store's damaged or stale header slot from its mirror, then
/// opens it to check it.
pub fn run_repair(stores: &[PathBuf]) -> Result<ExitCode> {
    for path in stores {
        let header = irisc_runtime::store::repair(path)?;
        irisc_runtime::store::Store::open(path)?;
        eprintln!("{}: intact, {} records", path.display(), header.count);
    }
    Ok(ExitCode::SUCCESS)
}
