//! Every input of the program, loaded from this party's share files and checked against the
//! manifest, and the values `irisc_rt_load_input` / `irisc_rt_load_earlier` make of them.
//!
//! Files are named on the command line with `--input NAME=PATH` (or `--db` / `--query` when the
//! program has exactly one gallery / one query input). Before anything is sent the runtime
//! checks that every input is given, that each file is this party's share of that input (kind,
//! role, sharing, ring, elements, mask), that all query inputs hold the same number of queries
//! (they form one batch), and that zipped galleries hold the same ids in the same order.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::contract::InputPart;
use crate::error::RuntimeError;
use crate::io::share_file::{self, Expected, RingVec, ShareFile, ShareFileHeader};
use crate::manifest::{Manifest, ManifestInput};
use crate::share::binary::{words_for, BitShares};
use crate::store::{self, Store, StoreExpected};
use crate::vocab::{InputKind, InputMask, InputRole, Sharing};

use super::args::PartyArgs;
use crate::ops::shamir_codes::{ShamirCodes, ShamirKind, Side};
use crate::ops::value::Value;
use crate::share::Codes;

/// One input as loaded: rep3 inputs in the prepared form of [`Codes`] (all sections of each
/// record, at the file's ring), Shamir inputs as the party's words.
enum Stored {
    Rep3(Arc<Codes>),
    Shamir(Arc<ShamirCodes>),
}

struct LoadedInput {
    spec: ManifestInput,
    /// The share file's header, or for a gallery store the equivalent one.
    header: ShareFileHeader,
    stored: Stored,
    /// Loaded from a gallery store (whose record count the parties also compare).
    from_store: bool,
    /// The store's path (a serving party appends enrolled records to it and reloads).
    source: Option<PathBuf>,
    /// A store's deleted records, as the parties compare them ([`deleted_digest`]).
    deleted: String,
}

/// All inputs of one party's run.
pub struct Inputs {
    list: Vec<LoadedInput>,
    query_count: usize,
    /// Views of whole inputs made for a (part, ring): galleries are loaded once per query by
    /// the schedule, so they are built once.
    rep3_views: HashMap<(usize, InputPart, u32), Arc<Codes>>,
    shamir_views: HashMap<(usize, InputPart), Arc<ShamirCodes>>,
    /// A reauthentication batch of a serving party: the galleries are loaded as the one record
    /// with this id.
    only: Option<u64>,
    /// A serving party's inputs: the queries come from requests, batch by batch.
    serving: bool,
}

fn input_err(msg: String) -> RuntimeError {
    RuntimeError::Input(msg)
}

/// The file of every manifest input, in manifest order, from `--input NAME=PATH`, `--db` and
/// `--query`.
pub fn resolve_paths(args: &PartyArgs, manifest: &Manifest) -> Result<Vec<PathBuf>, RuntimeError> {
    let names = || {
        manifest
            .inputs
            .iter()
            .map(|i| format!("`{}`", i.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut paths: Vec<Option<PathBuf>> = vec![None; manifest.inputs.len()];
    let mut set = |i: usize, p: PathBuf, how: &str| -> Result<(), RuntimeError> {
        if paths[i].is_some() {
            return Err(RuntimeError::Usage(format!(
                "input `{}` is given twice (again by {how})",
                manifest.inputs[i].name
            )));
        }
        paths[i] = Some(p);
        Ok(())
    };
    for spec in &args.inputs {
        let Some((name, path)) = spec.split_once('=') else {
            return Err(RuntimeError::Usage(format!(
                "--input {spec:?} must have the form NAME=PATH"
            )));
        };
        let Some(i) = manifest.input_index(name) else {
            return Err(RuntimeError::Usage(format!(
                "this program has no input `{name}`; its inputs are {}",
                names()
            )));
        };
        if path.is_empty() {
            return Err(RuntimeError::Usage(format!(
                "--input {name}= names no file"
            )));
        }
        set(i, PathBuf::from(path), &format!("--input {name}=..."))?;
    }
    for (flag, role, given) in [
        ("--db", InputRole::Gallery, &args.db),
        ("--query", InputRole::Query, &args.query),
    ] {
        let Some(path) = given else { continue };
        let of_role = manifest.inputs_with(role);
        if of_role.len() != 1 {
            return Err(RuntimeError::Usage(format!(
                "{flag} is a shorthand for programs with exactly one {role} input, but this one has {}: name each file with --input NAME=PATH (inputs: {})",
                of_role.len(),
                names()
            )));
        }
        set(of_role[0], path.clone(), flag)?;
    }
    if args.serve.is_some() {
        if let Some(i) = (0..paths.len())
            .find(|&i| manifest.inputs[i].role == InputRole::Query && paths[i].is_some())
        {
            return Err(RuntimeError::Usage(format!(
                "a serving party (--serve) takes its queries from client requests: drop the share file of query input `{}`",
                manifest.inputs[i].name
            )));
        }
        // Query inputs start empty (serve::EMPTY_QUERIES); each batch brings its own.
        for (i, p) in paths.iter_mut().enumerate() {
            if manifest.inputs[i].role == InputRole::Query {
                *p = Some(PathBuf::from(EMPTY_QUERIES));
            }
        }
    }
    paths
        .into_iter()
        .enumerate()
        .map(|(i, p)| {
            p.ok_or_else(|| {
                let spec = &manifest.inputs[i];
                let short = match spec.role {
                    InputRole::Gallery if manifest.inputs_with(InputRole::Gallery).len() == 1 => {
                        " (or --db PATH)"
                    }
                    InputRole::Query if manifest.inputs_with(InputRole::Query).len() == 1 => {
                        " (or --query PATH)"
                    }
                    _ => "",
                };
                RuntimeError::Usage(format!(
                    "no share file for {} input `{}`: pass {}{short}",
                    spec.role,
                    spec.name,
                    spec.flag()
                ))
            })
        })
        .collect()
}

/// The stand-in path of a serving party's query inputs before its first batch.
pub const EMPTY_QUERIES: &str = "<client requests>";

/// An input of no records in the form `spec` needs of party `party`'s share file: a serving
/// party's query inputs between batches.
pub fn empty_share_file(spec: &ManifestInput, party: u8) -> Result<ShareFile, RuntimeError> {
    let e = Expected::for_input(spec, party);
    let header = ShareFileHeader {
        version: share_file::FORMAT_VERSION,
        role: e.role,
        party,
        sharing: e.sharing,
        mask: e.mask,
        ring_bits: e.ring_bits,
        elements: e.elements,
        count: 0,
        set_id: [0; 16],
        body_hash: [0; 32],
        payload: e.payload,
        scale_bits: e.scale_bits,
        conjugate: e.conjugate,
    };
    let empty = || {
        RingVec::zeros(e.ring_bits, 0).ok_or_else(|| {
            input_err(format!(
                "input `{}`: ring of {} bits",
                spec.name, e.ring_bits
            ))
        })
    };
    Ok(ShareFile {
        header,
        ids: Vec::new(),
        masks: Vec::new(),
        own: empty()?,
        prev: empty()?,
    })
}

/// Input `spec` from a share file already read (`origin` names it in messages), checked
/// against what the program needs of party `party`.
fn loaded_from_file(
    origin: &Path,
    file: ShareFile,
    spec: &ManifestInput,
    party: usize,
) -> Result<LoadedInput, RuntimeError> {
    let expected = Expected::for_input(spec, party as u8);
    share_file::check_compatible(origin, &file.header, &expected)
        .map_err(|e| input_err(e.to_string()))?;
    let header = file.header.clone();
    let stored = if header.sharing.is_shamir() {
        Stored::Shamir(Arc::new(shamir_from_file(file)?))
    } else {
        Stored::Rep3(Arc::new(codes_of_share_file(file)))
    };
    Ok(LoadedInput {
        spec: spec.clone(),
        header,
        stored,
        from_store: false,
        source: None,
        deleted: String::new(),
    })
}

fn load_one(
    path: &Path,
    spec: &ManifestInput,
    party: usize,
    progress: bool,
) -> Result<LoadedInput, RuntimeError> {
    if path == Path::new(EMPTY_QUERIES) {
        return loaded_from_file(path, empty_share_file(spec, party as u8)?, spec, party);
    }
    let is_store = store::is_store(path)
        .map_err(|e| input_err(format!("cannot read {}: {e}", path.display())))?;
    if is_store {
        return load_store(path, spec, party, progress);
    }
    let file = share_file::read(path).map_err(|e| input_err(e.to_string()))?;
    loaded_from_file(path, file, spec, party)
}

/// What the program's manifest entry `spec` needs of party `party`'s gallery store: the input's
/// schema (not the program: a store serves every program whose input has the same schema).
pub fn store_expected(spec: &ManifestInput, party: u8) -> StoreExpected {
    StoreExpected {
        input: spec.name.clone(),
        party,
        sharing: spec.sharing.into(),
        ring_bits: spec.ring_bits,
        code_bits: spec.elements,
        secret_mask: spec.mask == InputMask::Secret,
    }
}

/// A gallery from a store: checked (every byte, against the header's checksum) and mapped.
/// Shamir shares stay in the map (zero-copy); rep3 shares are copied into the prepared form.
fn load_store(
    path: &Path,
    spec: &ManifestInput,
    party: usize,
    progress: bool,
) -> Result<LoadedInput, RuntimeError> {
    if spec.role != InputRole::Gallery || spec.kind != InputKind::Iris {
        return Err(input_err(format!(
            "{} is a gallery store, but input `{}` is a {} of {} data: pass the share file made for it by `irisc share` (stores hold iris galleries only)",
            path.display(),
            spec.name,
            spec.role,
            spec.kind
        )));
    }
    let store = Store::open_with(path, progress).map_err(|e| input_err(e.to_string()))?;
    store
        .check_compatible(&store_expected(spec, party as u8))
        .map_err(|e| input_err(e.to_string()))?;
    let h = store.header();
    let header = ShareFileHeader {
        version: share_file::FORMAT_VERSION,
        role: InputRole::Gallery,
        party: party as u8,
        sharing: spec.sharing,
        mask: spec.mask,
        ring_bits: h.params.ring_bits,
        elements: h.params.code_bits,
        count: h.count,
        set_id: h.params.set_id,
        body_hash: h.records_sum.0,
        payload: InputKind::Iris,
        scale_bits: 0,
        conjugate: false,
    };
    let count = store.len();
    let per = header.elements_per_record() as usize;
    let ids = store.ids();
    let masks: Vec<u64> = if spec.mask == InputMask::Public {
        public_masks(&store, 0..count)
    } else {
        vec![u64::MAX; count * per.div_ceil(64)]
    };
    // Deleted records can never match (store::deleted); nor can records a reset replaced (of
    // the records with one id, the last one appended is the live one). With public masks they
    // get an empty mask: their mask overlap with any query is 0, and a pair with none compares
    // the public 0 whatever its shares (`sub_threshold`), so `hd * den < num * ml` never holds
    // and their shares stay as stored (a Shamir gallery stays read in place from the map).
    // With secret masks they get shares of 0 (the code and the mask section of each record),
    // so `b (ml - 2 hd) > a ml` never holds.
    let deleted = store::deleted::read(path).map_err(input_err)?;
    let mut masks = masks;
    let deleted_rows = dead_rows(&ids, &deleted);
    if spec.mask == InputMask::Public {
        let words = per.div_ceil(64);
        for &r in &deleted_rows {
            masks[r * words..(r + 1) * words].fill(0);
        }
    }
    let deleted_digest = deleted_digest(&deleted);
    let stored = match store.shamir_words() {
        Some(mut words) => {
            if !deleted_rows.is_empty() && count > 0 && spec.mask == InputMask::Secret {
                // The deleted records' words, zeroed in a copy (the map stays as written).
                let mut owned = words.to_vec();
                let per_record = owned.len() / count;
                for &r in &deleted_rows {
                    owned[r * per_record..(r + 1) * per_record].fill(0);
                }
                words = owned.into();
            }
            let kind = shamir_kind(spec.sharing);
            if header.sections() == 1 {
                let elements = header.elements as usize;
                Stored::Shamir(Arc::new(ShamirCodes::new(
                    kind,
                    Side::Gallery,
                    count,
                    elements,
                    ids,
                    masks,
                    words,
                )?))
            } else {
                Stored::Shamir(Arc::new(ShamirCodes {
                    kind,
                    side: Side::Gallery,
                    count,
                    len: per,
                    ids,
                    masks,
                    words,
                }))
            }
        }
        None => {
            let (mut own, mut prev) = rep3_components(&store, 0..count, header.ring_bits, per)?;
            for &r in &deleted_rows {
                own.zero(r * per..(r + 1) * per);
                prev.zero(r * per..(r + 1) * per);
            }
            Stored::Rep3(Arc::new(Codes::from_components(
                own, prev, count, per, ids, masks,
            )))
        }
    };
    Ok(LoadedInput {
        spec: spec.clone(),
        header,
        stored,
        from_store: true,
        source: Some(path.to_path_buf()),
        deleted: deleted_digest,
    })
}

/// The replicated components of `store`'s records `rows`, in the ring Z_2^`k`'s word type:
/// record by record, block copies in the store's word type (a 100 000-record gallery is
/// billions of elements: widening each through a u64 vector of its own was most of a party's
/// load time).
fn rep3_components(
    store: &Store,
    rows: std::ops::Range<usize>,
    k: u32,
    per: usize,
) -> Result<(RingVec, RingVec), RuntimeError> {
    let bad = || {
        input_err(format!(
            "{}: the ring Z_2^{k} is not supported",
            store.path().display()
        ))
    };
    let n = rows.len() * per;
    let (mut own, mut prev) = (
        RingVec::with_capacity(k, n).ok_or_else(bad)?,
        RingVec::with_capacity(k, n).ok_or_else(bad)?,
    );
    for r in rows.filter_map(|i| store.record(i)) {
        match r.shares {
            store::Shares::Rep3U16 { own: o, prev: p } => {
                own.extend_u16(o);
                prev.extend_u16(p);
            }
            store::Shares::Rep3U32 { own: o, prev: p } => {
                own.extend_u32(o);
                prev.extend_u32(p);
            }
            store::Shares::Rep3U64 { own: o, prev: p } => {
                own.extend_u64(o);
                prev.extend_u64(p);
            }
            store::Shares::Shamir(_) => return Err(bad()),
        }
    }
    Ok((own, prev))
}

/// The public masks of `store`'s records `rows` as little-endian u64 words.
fn public_masks(store: &Store, rows: std::ops::Range<usize>) -> Vec<u64> {
    rows.filter_map(|i| store.record(i))
        .flat_map(|r| {
            r.mask.chunks(8).map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
        })
        .collect()
}

/// [`Inputs::reload_store`]'s fast path: brings `loaded` (a gallery from its store) in line with
/// the store after this process appended to it or deleted from it. The new records are checked
/// against the records checksum and appended ([`Store::open_extending`]); the rows deleted or
/// replaced so far get an empty public mask, or shares of 0 under secret masks, as
/// [`load_store`] gives them.
/// `false`, changing nothing, when the store cannot be read this way (fewer records than
/// loaded, a checksum that does not add up) or the gallery is still shared with a running scan.
fn extend_from_store(loaded: &mut LoadedInput, party: usize) -> Result<bool, RuntimeError> {
    let Some(path) = loaded.source.clone() else {
        return Ok(false);
    };
    let known = store::RecordsSum(loaded.header.body_hash);
    let Some(store) = Store::open_extending(&path, loaded.header.count, &known)
        .map_err(|e| input_err(e.to_string()))?
    else {
        return Ok(false);
    };
    store
        .check_compatible(&store_expected(&loaded.spec, party as u8))
        .map_err(|e| input_err(e.to_string()))?;
    let (old, count) = (loaded.header.count as usize, store.len());
    let per = loaded.header.elements_per_record() as usize;
    let words = per.div_ceil(64);
    let public = loaded.spec.mask == InputMask::Public;
    let ids = store.ids();
    let new_masks: Vec<u64> = if public {
        public_masks(&store, old..count)
    } else {
        vec![u64::MAX; (count - old) * words]
    };
    let deleted = store::deleted::read(&path).map_err(input_err)?;
    let dead = dead_rows(&ids, &deleted);
    match &mut loaded.stored {
        Stored::Rep3(codes) => {
            let Some(codes) = Arc::get_mut(codes) else {
                return Ok(false);
            };
            let k = loaded.header.ring_bits;
            let (own, prev) = rep3_components(&store, old..count, k, per)?;
            let tail = Codes::from_components(own, prev, count - old, per, Vec::new(), Vec::new());
            if !(codes.a.append(tail.a) && codes.b.append(tail.b)) {
                return Err(input_err(format!(
                    "{}: the new records' shares are not of the gallery's word type",
                    path.display()
                )));
            }
            codes.count = count;
            codes.ids = ids;
            codes.masks.extend_from_slice(&new_masks);
            for &r in &dead {
                codes.a.zero(r * per..(r + 1) * per);
                codes.b.zero(r * per..(r + 1) * per);
                if public {
                    codes.masks[r * words..(r + 1) * words].fill(0);
                }
            }
        }
        Stored::Shamir(codes) => {
            let Some(codes) = Arc::get_mut(codes) else {
                return Ok(false);
            };
            let Some(all) = store.shamir_words() else {
                return Ok(false);
            };
            let per_record = all.len() / count.max(1);
            let fresh = &all[old * per_record..];
            if codes.kind == ShamirKind::Fp {
                if let Some(i) = fresh.iter().position(|&w| w >= crate::share::fp::P) {
                    return Err(input_err(format!(
                        "{}: record {} holds an element that is not below p",
                        path.display(),
                        old + i / per_record.max(1)
                    )));
                }
            }
            codes.words = if (dead.is_empty() || public) && codes.words.is_mapped() {
                // Nothing to zero (public masks mark the dead rows): all of it read in place
                // from the map, as at load.
                all
            } else {
                // Rows to zero (secret masks): words of the party's own (copied from the map
                // once, the first time a record is deleted or replaced), the new records
                // appended.
                let mut owned = std::mem::take(&mut codes.words).into_vec();
                owned.extend_from_slice(fresh);
                for &r in &dead {
                    owned[r * per_record..(r + 1) * per_record].fill(0);
                }
                owned.into()
            };
            codes.count = count;
            codes.ids = ids;
            codes.masks.extend_from_slice(&new_masks);
            if public {
                for &r in &dead {
                    codes.masks[r * words..(r + 1) * words].fill(0);
                }
            }
        }
    }
    let h = store.header();
    loaded.header.count = h.count;
    loaded.header.body_hash = h.records_sum.0;
    loaded.deleted = deleted_digest(&deleted);
    Ok(true)
}

/// The rows that can never match: those whose id was deleted, and those whose id appears again
/// later (a reset appended the record that replaces them).
fn dead_rows(ids: &[u64], deleted: &[u64]) -> Vec<usize> {
    let mut rows = superseded_rows(ids);
    if !deleted.is_empty() {
        let gone: std::collections::HashSet<u64> = deleted.iter().copied().collect();
        rows.extend(
            ids.iter()
                .enumerate()
                .filter(|(_, id)| gone.contains(id))
                .map(|(r, _)| r),
        );
    }
    rows
}

/// The rows whose id appears again later (a reset appended the record that replaces them).
fn superseded_rows(ids: &[u64]) -> Vec<usize> {
    let mut last: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for (r, &id) in ids.iter().enumerate() {
        last.insert(id, r);
    }
    ids.iter()
        .enumerate()
        .filter(|(r, id)| last[id] != *r)
        .map(|(r, _)| r)
        .collect()
}

/// What the parties compare of a store's deleted ids: their number and a digest of the set.
fn deleted_digest(deleted: &[u64]) -> String {
    let mut sorted = deleted.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut h = blake3::Hasher::new();
    sorted.iter().for_each(|id| {
        h.update(&id.to_le_bytes());
    });
    format!("{} ({})", sorted.len(), &h.finalize().to_hex()[..16])
}

fn shamir_kind(sharing: Sharing) -> ShamirKind {
    match sharing {
        Sharing::Fp => ShamirKind::Fp,
        Sharing::Gr2 => ShamirKind::Gr2,
        _ => ShamirKind::Gr4,
    }
}

fn shamir_side(role: InputRole) -> Side {
    match role {
        InputRole::Gallery => Side::Gallery,
        InputRole::Query => Side::Query,
    }
}

/// The Shamir shares of a file, all sections of a record together (one code of
/// `sections * words_per_section` words); [`Inputs::shamir_view`] splits the sections.
fn shamir_from_file(file: ShareFile) -> Result<ShamirCodes, RuntimeError> {
    let h = &file.header;
    let count = h.count as usize;
    let elements = h.elements as usize;
    let sections = h.sections() as usize;
    let masks = if file.masks.is_empty() {
        vec![u64::MAX; count * (sections * elements).div_ceil(64)]
    } else {
        // Public masks cover the code section only; the loader pairs them with the codes.
        file.masks
            .chunks(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect()
    };
    let data = match file.own {
        RingVec::U16(v) => v,
        other => other.iter_u64().map(|x| x as u16).collect(),
    };
    let kind = shamir_kind(h.sharing);
    let side = shamir_side(h.role);
    if sections == 1 {
        return ShamirCodes::new(kind, side, count, elements, file.ids, masks, data);
    }
    // Keep the whole record as one code; the views re-wrap each section.
    Ok(ShamirCodes {
        kind,
        side,
        count,
        len: sections * elements,
        ids: file.ids,
        masks,
        words: data.into(),
    })
}

impl Inputs {
    /// Loads and checks every input named on the command line.
    pub fn load(args: &PartyArgs, manifest: &Manifest) -> Result<Inputs, RuntimeError> {
        let paths = resolve_paths(args, manifest)?;
        let list = paths
            .iter()
            .zip(&manifest.inputs)
            .map(|(p, spec)| load_one(p, spec, args.party, !args.quiet))
            .collect::<Result<Vec<_>, _>>()?;
        let mut inputs = Inputs::from_loaded(list, manifest, &paths)?;
        inputs.serving = args.serve.is_some();
        Ok(inputs)
    }

    fn from_loaded(
        list: Vec<LoadedInput>,
        manifest: &Manifest,
        paths: &[PathBuf],
    ) -> Result<Inputs, RuntimeError> {
        let mut query_count = None;
        for (i, l) in list.iter().enumerate() {
            if l.spec.role != InputRole::Query {
                continue;
            }
            match query_count {
                None => query_count = Some((i, l.header.count)),
                Some((first, n)) if n != l.header.count => {
                    return Err(input_err(format!(
                        "query inputs form one batch, but `{}` ({}) holds {n} queries and `{}` ({}) holds {}: share the same number of queries for every query input",
                        list[first].spec.name,
                        paths[first].display(),
                        l.spec.name,
                        paths[i].display(),
                        l.header.count
                    )))
                }
                Some(_) => {}
            }
        }
        for group in &manifest.zips {
            let idx = group
                .iter()
                .map(|name| {
                    manifest.input_index(name).ok_or_else(|| {
                        RuntimeError::Setup(format!("the manifest zips unknown input `{name}`"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let Some((&first, rest)) = idx.split_first() else {
                continue;
            };
            for &j in rest {
                let (a, b) = (list[first].ids(), list[j].ids());
                if a != b {
                    let at = a.iter().zip(b).position(|(x, y)| x != y);
                    let detail = match at {
                        Some(k) => format!(
                            "record {k} has id {} in one and {} in the other",
                            a[k], b[k]
                        ),
                        None => format!("they hold {} and {} records", a.len(), b.len()),
                    };
                    return Err(input_err(format!(
                        "galleries `{}` ({}) and `{}` ({}) are zipped, so they must hold the same ids in the same order, but {detail}",
                        list[first].spec.name,
                        paths[first].display(),
                        list[j].spec.name,
                        paths[j].display()
                    )));
                }
            }
        }
        Ok(Inputs {
            list,
            // A program without query inputs answers once.
            query_count: query_count.map_or(1, |(_, n)| n as usize),
            rep3_views: HashMap::new(),
            shamir_views: HashMap::new(),
            only: None,
            serving: false,
        })
    }

    /// Replaces the query inputs by the next batch's (a serving party): `files[k]` is query
    /// input `index`'s share file, whose records are the batch's queries in order. Every query
    /// input must hold the same number of queries.
    pub fn replace_queries(
        &mut self,
        party: usize,
        files: Vec<(usize, ShareFile)>,
    ) -> Result<(), RuntimeError> {
        let mut count = None;
        for (index, file) in files {
            let spec = self
                .list
                .get(index)
                .map(|l| l.spec.clone())
                .filter(|s| s.role == InputRole::Query)
                .ok_or_else(|| {
                    RuntimeError::Schedule(format!("input {index} is no query input"))
                })?;
            let origin = PathBuf::from(format!("the batch's `{}`", spec.name));
            let loaded = loaded_from_file(&origin, file, &spec, party)?;
            let n = loaded.header.count as usize;
            if *count.get_or_insert(n) != n {
                return Err(input_err(format!(
                    "the batch's query inputs hold different numbers of queries ({} and {n})",
                    count.unwrap_or(0)
                )));
            }
            self.list[index] = loaded;
            self.rep3_views.retain(|(i, _, _), _| *i != index);
            self.shamir_views.retain(|(i, _), _| *i != index);
        }
        self.query_count = count.unwrap_or(1);
        Ok(())
    }

    /// Loads the galleries as the one record with id `only` (a reauthentication batch), or
    /// whole (`None`).
    pub fn restrict_galleries(&mut self, only: Option<u64>) {
        self.only = only;
    }

    /// Whether every gallery input holds a record with id `id`.
    pub fn galleries_hold(&self, id: u64) -> bool {
        self.list
            .iter()
            .filter(|l| l.spec.role == InputRole::Gallery)
            .all(|l| l.ids().contains(&id))
    }

    /// The number of inputs (the manifest's).
    pub fn count(&self) -> usize {
        self.list.len()
    }

    /// The store gallery input `index` was loaded from (None: a share file or no gallery).
    pub fn store_path(&self, index: usize) -> Option<&Path> {
        self.list.get(index).and_then(|l| l.source.as_deref())
    }

    /// Brings gallery input `index` in line with its store after this party changed it (a
    /// serving party's enrolment, deletion or reset): later scans see the new records, and
    /// never again a deleted or replaced one. Only what changed is read and checked
    /// ([`extend_from_store`]): the records appended, the deleted ids. When that cannot be done
    /// (the store lost records to a reconciliation, or the gallery is shared with a scan still
    /// running), the store is loaded again whole, checked byte by byte.
    /// Returns whether only the changes were read (`false`: the whole store was).
    pub fn reload_store(&mut self, index: usize, party: usize) -> Result<bool, RuntimeError> {
        // The views share nothing the gallery must change, but are made from its old state.
        self.rep3_views.retain(|(i, _, _), _| *i != index);
        self.shamir_views.retain(|(i, _), _| *i != index);
        let extended = match self.list.get_mut(index) {
            Some(loaded) if loaded.source.is_some() => extend_from_store(loaded, party)?,
            _ => false,
        };
        if !extended {
            self.load_store_again(index, party)?;
        }
        Ok(extended)
    }

    /// Whether gallery input `index`'s store holds `record` byte for byte as the live record
    /// of its id (the last record with the id, not deleted). Reads the store as this party
    /// last checked it ([`Store::open_extending`] with nothing new: no record is hashed again).
    pub fn holds_identical(&self, index: usize, record: &store::Record<'_>) -> bool {
        let Some(l) = self.list.get(index) else {
            return false;
        };
        let Some(path) = l.source.as_deref() else {
            return false;
        };
        let known = store::RecordsSum(l.header.body_hash);
        let Ok(Some(store)) = Store::open_extending(path, l.header.count, &known) else {
            return false;
        };
        let Some(row) = store.ids().iter().rposition(|&id| id == record.id) else {
            return false;
        };
        let deleted = store::deleted::read(path).unwrap_or_default();
        !deleted.contains(&record.id) && store.record(row).is_some_and(|r| r == *record)
    }

    /// [`Inputs::reload_store`] the slow way: the whole store opened, checked and loaded.
    fn load_store_again(&mut self, index: usize, party: usize) -> Result<(), RuntimeError> {
        let (path, spec) = match self.list.get(index) {
            Some(LoadedInput {
                source: Some(p),
                spec,
                ..
            }) => (p.clone(), spec.clone()),
            _ => {
                return Err(RuntimeError::Schedule(format!(
                    "input {index} was not loaded from a gallery store"
                )))
            }
        };
        self.list[index] = load_store(&path, &spec, party, false)?;
        self.rep3_views.retain(|(i, _, _), _| *i != index);
        self.shamir_views.retain(|(i, _), _| *i != index);
        Ok(())
    }

    /// The number of queries in the batch.
    pub fn query_count(&self) -> usize {
        self.query_count
    }

    /// Records of input `input` (its count; 0 for an unknown input).
    pub fn records_of(&self, input: usize) -> usize {
        self.list.get(input).map_or(0, |l| l.header.count as usize)
    }

    /// Records of all galleries together (for the accounting line).
    pub fn gallery_records(&self) -> usize {
        self.list
            .iter()
            .filter(|l| l.spec.role == InputRole::Gallery)
            .map(|l| l.header.count as usize)
            .sum()
    }

    /// What the three parties must agree on before computing, sent in the hello of every link:
    /// `settings` (the run's own, e.g. `--chunk-size`), then the same program, the same query
    /// batch, and share files of the same sharing runs: every input's set id by name, in
    /// manifest input order, so that a mismatch names the input.
    pub fn session_bytes(
        &self,
        manifest: &Manifest,
        settings: crate::net::session::Session,
    ) -> Vec<u8> {
        let mut s = settings
            .field(
                crate::net::session::PROGRAM,
                format!("{} {}", manifest.program, manifest.fingerprint),
            )
            .field(
                "the comparisons' protocols (irisc build --sharing, --variant, --msb-input)",
                comparison_protocols(manifest),
            )
            .field(
                "the query batch (queries)",
                // A serving party's queries come batch by batch, agreed on per batch.
                if self.serving {
                    "per request".to_string()
                } else {
                    self.query_count.to_string()
                },
            );
        for l in &self.list {
            if self.serving && l.spec.role == InputRole::Query {
                continue;
            }
            s = s.input_set(&l.spec.name, &l.header.set_id);
            // A store keeps its set id across appends: its record count tells whether the
            // three parties' stores hold the same records.
            // A serving party's stores are reconciled right after connect (serve::reconcile):
            // an interrupted enrolment leaves them with different counts, which must not keep
            // the parties apart.
            if l.from_store && !self.serving {
                s = s.input_records(&l.spec.name, l.header.count);
                // The count first (its message is the plainer one), then which records.
                let ids = match &l.stored {
                    Stored::Rep3(c) => &c.ids,
                    Stored::Shamir(c) => &c.ids,
                };
                s = s.input_ids(&l.spec.name, ids);
                s = s.field(
                    &format!("the deleted records of `{}`", l.spec.name),
                    &l.deleted,
                );
            }
        }
        s.to_bytes()
    }

    /// The index of the only input with `role` (the issue-2 entry points `load_query` and
    /// `load_gallery` serve programs with one gallery and one query).
    pub fn single(&self, role: InputRole) -> Result<usize, RuntimeError> {
        let of_role: Vec<usize> = (0..self.list.len())
            .filter(|&i| self.list[i].spec.role == role)
            .collect();
        match of_role[..] {
            [i] => Ok(i),
            _ => Err(RuntimeError::Schedule(format!(
                "load of the {role} in a program with {} {role} inputs; use irisc_rt_load_input",
                of_role.len()
            ))),
        }
    }

    /// The share ring of input `input`.
    pub fn ring_bits(&self, input: usize) -> u32 {
        self.list.get(input).map_or(0, |l| l.header.ring_bits)
    }

    fn get(&self, input: i32) -> Result<&LoadedInput, RuntimeError> {
        usize::try_from(input)
            .ok()
            .and_then(|i| self.list.get(i))
            .ok_or_else(|| {
                RuntimeError::Schedule(format!(
                    "input {input} of a program with {} inputs",
                    self.list.len()
                ))
            })
    }

    /// `irisc_rt_load_input`: part `part` of input `input` for query `query` (-1 for a
    /// gallery), its shares reduced locally mod 2^`ring_bits` (rep3).
    pub fn load_input(
        &mut self,
        input: i32,
        part: InputPart,
        query: i64,
        ring_bits: i32,
    ) -> Result<Value, RuntimeError> {
        let l = self.get(input)?;
        let range = match l.spec.role {
            InputRole::Gallery => match self.only {
                // Reauthentication: the claimed record alone (its presence was checked); the
                // last with its id, which a reset may have appended.
                Some(id) => match l.ids().iter().rposition(|&x| x == id) {
                    Some(k) => k..k + 1,
                    None => 0..0,
                },
                None => 0..l.header.count as usize,
            },
            InputRole::Query => {
                let q = self.query_index(query, &l.spec)?;
                q..q + 1
            }
        };
        self.load_range(input, part, range, ring_bits, false)
    }

    /// `irisc_rt_load_earlier`: the queries `0..query` of query input `input`, in gallery form,
    /// their ids the query indices. Empty for query 0.
    pub fn load_earlier(
        &mut self,
        input: i32,
        part: InputPart,
        query: i64,
        ring_bits: i32,
    ) -> Result<Value, RuntimeError> {
        let l = self.get(input)?;
        if l.spec.role != InputRole::Query {
            return Err(RuntimeError::Schedule(format!(
                "earlier() of gallery `{}`",
                l.spec.name
            )));
        }
        if l.header.sharing == Sharing::Gr4 && part != InputPart::Bit {
            return Err(RuntimeError::Input(format!(
                "earlier({}) compares queries with each other, but `{}` is shared over GR(2^16, 4), whose queries are packed for query-side use only: share it with --sharing rep3, fp or gr2",
                l.spec.name, l.spec.name
            )));
        }
        let q = self.query_index(query, &l.spec)?;
        self.load_range(input, part, 0..q, ring_bits, true)
    }

    fn query_index(&self, query: i64, spec: &ManifestInput) -> Result<usize, RuntimeError> {
        usize::try_from(query)
            .ok()
            .filter(|&q| q < self.query_count)
            .ok_or_else(|| {
                RuntimeError::Schedule(format!(
                    "query {query} of query input `{}`, which has {}",
                    spec.name, self.query_count
                ))
            })
    }

    fn load_range(
        &mut self,
        input: i32,
        part: InputPart,
        range: std::ops::Range<usize>,
        ring_bits: i32,
        index_ids: bool,
    ) -> Result<Value, RuntimeError> {
        let i = input as usize;
        let l = &self.list[i];
        check_part(l, part)?;
        if part == InputPart::Bit {
            let Stored::Rep3(codes) = &l.stored else {
                return Err(RuntimeError::Schedule(format!(
                    "bit input `{}` is not rep3",
                    l.spec.name
                )));
            };
            return Ok(Value::Bits(bits_of(codes, range)));
        }
        let full_ids = index_ids.then(|| (range.start as u64..range.end as u64).collect());
        match &l.stored {
            Stored::Rep3(_) => {
                let k = u32::try_from(ring_bits).unwrap_or(0);
                let view = self.rep3_view(i, part, k)?;
                let mut c = if range.len() == view.count {
                    return Ok(Value::Codes(match full_ids {
                        Some(ids) => Arc::new(Codes {
                            ids,
                            ..view.select(range)
                        }),
                        None => view,
                    }));
                } else {
                    view.select(range)
                };
                if let Some(ids) = full_ids {
                    c.ids = ids;
                }
                Ok(Value::Codes(Arc::new(c)))
            }
            Stored::Shamir(_) => {
                let view = self.shamir_view(i, part)?;
                if range.len() == view.count && full_ids.is_none() {
                    return Ok(Value::Shamir(view));
                }
                let mut c = view.select(range);
                if let Some(ids) = full_ids {
                    c.ids = ids;
                }
                Ok(Value::Shamir(Arc::new(c)))
            }
        }
    }

    /// Part `part` of every record of rep3 input `i`, reduced mod 2^k, each record padded with
    /// zeros to a multiple of 64 elements.
    fn rep3_view(&mut self, i: usize, part: InputPart, k: u32) -> Result<Arc<Codes>, RuntimeError> {
        if let Some(v) = self.rep3_views.get(&(i, part, k)) {
            return Ok(v.clone());
        }
        let l = &self.list[i];
        let Stored::Rep3(full) = &l.stored else {
            unreachable!("rep3_view of a Shamir input")
        };
        let file_k = l.header.ring_bits;
        if !(1..=64).contains(&k) || k > file_k {
            return Err(RuntimeError::Schedule(format!(
                "input `{}` is shared over Z_2^{file_k}: it cannot be loaded over Z_2^{k} locally (only smaller rings are; lift it instead)",
                l.spec.name
            )));
        }
        let elements = l.header.elements as usize;
        let padded = elements.div_ceil(64) * 64;
        let whole = l.header.sections() == 1 && padded == elements;
        let view = if whole && k == file_k {
            full.clone()
        } else {
            let offset = l.header.section_of(part).unwrap_or(0) as usize * elements;
            let per = full.bits;
            let m = crate::io::share_file::ring_mask(k).unwrap_or(u64::MAX);
            let n = full.count * padded;
            let (mut own, mut prev) = (Vec::with_capacity(n), Vec::with_capacity(n));
            for r in 0..full.count {
                for j in 0..padded {
                    let (o, p) = if j < elements {
                        full.components(r * per + offset + j)
                    } else {
                        (0, 0)
                    };
                    own.push(o & m);
                    prev.push(p & m);
                }
            }
            let masks = if matches!(part, InputPart::Codes | InputPart::Conjugate)
                && l.header.mask == InputMask::Public
            {
                full.masks.clone()
            } else {
                vec![u64::MAX; full.count * padded / 64]
            };
            let own = RingVec::from_u64s(k, own).unwrap_or(RingVec::U64(Vec::new()));
            let prev = RingVec::from_u64s(k, prev).unwrap_or(RingVec::U64(Vec::new()));
            Arc::new(Codes::from_components(
                own,
                prev,
                full.count,
                padded,
                full.ids.clone(),
                masks,
            ))
        };
        self.rep3_views.insert((i, part, k), view.clone());
        Ok(view)
    }

    /// Part `part` (one section) of every record of Shamir input `i`.
    fn shamir_view(&mut self, i: usize, part: InputPart) -> Result<Arc<ShamirCodes>, RuntimeError> {
        if let Some(v) = self.shamir_views.get(&(i, part)) {
            return Ok(v.clone());
        }
        let l = &self.list[i];
        let Stored::Shamir(full) = &l.stored else {
            unreachable!("shamir_view of a rep3 input")
        };
        let view = if l.header.sections() == 1 {
            full.clone()
        } else {
            let words = l.header.words_per_section() as usize;
            let per = l.header.elements_per_record() as usize;
            let offset = l.header.section_of(part).unwrap_or(0) as usize * words;
            let data = full
                .words
                .chunks_exact(per)
                .flat_map(|r| r[offset..offset + words].iter().copied())
                .collect::<Vec<u16>>();
            let elements = l.header.elements as usize;
            let masks = if matches!(part, InputPart::Codes | InputPart::Conjugate)
                && l.header.mask == InputMask::Public
            {
                full.masks.clone()
            } else {
                vec![u64::MAX; full.count * elements.div_ceil(64)]
            };
            Arc::new(ShamirCodes::new(
                full.kind,
                full.side,
                full.count,
                elements,
                full.ids.clone(),
                masks,
                data,
            )?)
        };
        self.shamir_views.insert((i, part), view.clone());
        Ok(view)
    }

    /// The record ids of input `input`.
    pub fn ids(&self, input: usize) -> &[u64] {
        self.list.get(input).map_or(&[], |l| l.ids())
    }
}

impl LoadedInput {
    fn ids(&self) -> &[u64] {
        match &self.stored {
            Stored::Rep3(c) => &c.ids,
            Stored::Shamir(s) => &s.ids,
        }
    }
}

/// Whether `part` exists for this input's kind.
fn check_part(l: &LoadedInput, part: InputPart) -> Result<(), RuntimeError> {
    if l.header.section_of(part).is_some() {
        Ok(())
    } else {
        Err(RuntimeError::Schedule(format!(
            "part {} ({}) of {} input `{}` ({}{}): parts are 0 codes, 1 secret masks, 2 embedding, 3 bit, 4 the conjugates its owner dealt",
            part.abi(),
            part.name(),
            l.header.payload,
            l.spec.name,
            l.header.mask,
            if l.header.conjugate { ", with conjugates" } else { "" }
        )))
    }
}

/// Binary replicated shares of bits `range` of a rep3 bit input: additive shares mod 2^k of a
/// bit reduced mod 2 are XOR shares of it (x mod 2 is a ring homomorphism), so this is local.
fn bits_of(codes: &Codes, range: std::ops::Range<usize>) -> BitShares {
    let len = range.len();
    let (mut own, mut prev) = (vec![0u64; words_for(len)], vec![0u64; words_for(len)]);
    for (j, r) in range.enumerate() {
        let (o, p) = codes.components(r * codes.bits);
        own[j / 64] |= (o & 1) << (j % 64);
        prev[j / 64] |= (p & 1) << (j % 64);
    }
    BitShares::from_words(own, prev, len)
}

/// Public masks in the contract's byte order, as little-endian u64 words.
fn mask_words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(w)
        })
        .collect()
}

/// All of a rep3 file's records at the file's ring: `bits` = the shared elements per record
/// (both sections when iris masks are secret), masks the file's public masks or all ones.
fn codes_of_share_file(file: ShareFile) -> Codes {
    let count = file.header.count as usize;
    let bits = file.header.elements_per_record() as usize;
    let masks = if file.masks.is_empty() {
        vec![u64::MAX; count * bits.div_ceil(64)]
    } else {
        mask_words(&file.masks)
    };
    Codes::from_components(file.own, file.prev, count, bits, file.ids, masks)
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;

impl crate::serve::Galleries for Inputs {
    fn count(&self) -> usize {
        Inputs::count(self)
    }
    fn store_path(&self, index: usize) -> Option<&Path> {
        Inputs::store_path(self, index)
    }
    fn ids(&self, index: usize) -> &[u64] {
        Inputs::ids(self, index)
    }
    fn reload_store(&mut self, index: usize, party: usize) -> Result<(), RuntimeError> {
        let started = std::time::Instant::now();
        let extended = Inputs::reload_store(self, index, party)?;
        tracing::debug!(
            input = index,
            records = self.records_of(index),
            seconds = started.elapsed().as_secs_f64(),
            "gallery follows its store ({})",
            if extended {
                "changes read"
            } else {
                "store loaded whole"
            }
        );
        Ok(())
    }
    fn gallery_records(&self) -> usize {
        Inputs::gallery_records(self)
    }
    fn galleries_hold(&self, id: u64) -> bool {
        Inputs::galleries_hold(self, id)
    }
    fn restrict_galleries(&mut self, only: Option<u64>) {
        Inputs::restrict_galleries(self, only)
    }
    fn holds_identical(&self, index: usize, record: &store::Record<'_>) -> bool {
        Inputs::holds_identical(self, index, record)
    }
    fn deleted(&self, id: u64) -> bool {
        self.list
            .iter()
            .filter_map(|l| l.source.as_deref())
            .any(|p| store::deleted::read(p).is_ok_and(|d| d.contains(&id)))
    }
}

/// How each comparison of the program is computed, as its build recorded it (`irisc explain`):
/// sharing, variant, comparison ring and MSB input per comparison. Parties built from the same
/// source with other choices (`--msb-input` differs between a CPU and a GPU build by default)
/// would exchange messages of another protocol; the hello names the difference instead.
pub fn comparison_protocols(manifest: &Manifest) -> String {
    let Some(comparisons) = manifest.explain["comparisons"].as_array() else {
        return "none".into();
    };
    let one = |c: &serde_json::Value| -> String {
        let word = |k: &str| match &c[k] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "-".into(),
            other => other.to_string(),
        };
        format!(
            "{} {} ring {} msb from {}",
            word("sharing"),
            word("variant"),
            word("compare_ring"),
            word("msb_input")
        )
    };
    let all: Vec<String> = comparisons.iter().map(one).collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join("; ")
    }
}
