//! Galleries as durable stores (`irisc_runtime::store`): `irisc share` writes a program's iris
//! gallery inputs as one store per party, and `irisc enroll` deals new records for the same
//! program and appends them to the three stores.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use irisc_runtime::io::share_file::ShareFile;
use irisc_runtime::manifest::ManifestInput;
use irisc_runtime::party::load::store_expected;
use irisc_runtime::store::{create_with_capacity, Record, Store, StoreParams, StoreWriter};
use irisc_runtime::vocab::{InputKind, InputMask, InputRole};
use rand::TryRngCore;

/// Records appended per batch (bounds the writer's scratch memory).
const BATCH: usize = 4096;

/// Whether `irisc share` writes input `spec` as a store: iris galleries do.
pub fn is_store_input(spec: &ManifestInput) -> bool {
    spec.role == InputRole::Gallery && spec.kind == InputKind::Iris
}

/// Record `i` of a dealt party file, as the store writer takes it.
fn record(file: &ShareFile, i: usize) -> Result<Record<'_>> {
    Record::of_share_file(file, i).map_err(|e| anyhow!(e))
}

/// Appends every record of `file` to `w` (in batches, each committed durably).
fn append_file(w: &mut StoreWriter, file: &ShareFile) -> Result<u64> {
    let count = file.ids.len();
    let mut start = 0;
    while start < count {
        let end = (start + BATCH).min(count);
        let recs = (start..end)
            .map(|i| record(file, i))
            .collect::<Result<Vec<_>>>()?;
        w.append(&recs)?;
        start = end;
    }
    Ok(w.header().count)
}

/// The store parameters of a dealt party file.
fn params_of(fingerprint: &str, file: &ShareFile) -> StoreParams {
    let h = &file.header;
    StoreParams {
        fingerprint: fingerprint.to_string(),
        party: h.party,
        sharing: h.sharing.into(),
        ring_bits: h.ring_bits,
        code_bits: h.elements,
        secret_mask: h.mask == InputMask::Secret,
        set_id: h.set_id,
    }
}

/// A store being built under a temporary name beside `path`, moved into place by [`finish`].
struct NewStore {
    path: PathBuf,
    dir: PathBuf,
    tmp: PathBuf,
    writer: Option<StoreWriter>,
}

impl NewStore {
    fn create(path: &Path, params: &StoreParams, capacity: u64) -> Result<NewStore> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let name = path
            .file_name()
            .ok_or_else(|| anyhow!("{} names no file", path.display()))?
            .to_string_lossy();
        let tmp = dir.join(format!(".{name}.{}.new", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        let mut s = NewStore {
            path: path.to_path_buf(),
            dir,
            tmp,
            writer: None,
        };
        create_with_capacity(&s.tmp, params, capacity)?;
        s.writer = Some(StoreWriter::open(&s.tmp)?);
        Ok(s)
    }

    fn append(&mut self, file: &ShareFile) -> Result<u64> {
        let w = self
            .writer
            .as_mut()
            .ok_or_else(|| anyhow!("the store is already finished"))?;
        append_file(w, file)
    }

    /// Moves the finished store into place (never leaving a partial file at `path`).
    fn finish(mut self) -> Result<()> {
        drop(self.writer.take());
        std::fs::rename(&self.tmp, &self.path)
            .with_context(|| format!("cannot move the new store into {}", self.path.display()))?;
        if let Ok(d) = std::fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for NewStore {
    fn drop(&mut self) {
        // Unfinished (an error on the way): the temporary file goes.
        if self.writer.is_some() {
            drop(self.writer.take());
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Writes party `file.header.party`'s dealt gallery as a new store at `path` for the program
/// with `fingerprint`, replacing any file there: built under a temporary name in the same
/// folder, then renamed into place, so `path` never holds a partial store.
pub fn write_store(path: &Path, fingerprint: &str, file: &ShareFile) -> Result<()> {
    let result = (|| -> Result<()> {
        let mut s = NewStore::create(path, &params_of(fingerprint, file), file.header.count)?;
        s.append(file)?;
        s.finish()
    })();
    result.with_context(|| format!("cannot write the gallery store {}", path.display()))
}

/// Shares the NDJSON file `input` as the program's gallery input `spec` into three stores.
///
/// Dealt [`BATCH`] records at a time into one sharing run (one set id), so memory stays bounded
/// whatever the gallery size: the plaintext is expanded to one value per code bit only per
/// batch, and each batch's shares go to the three stores before the next is dealt.
pub fn share_to_stores(
    fingerprint: &str,
    spec: &ManifestInput,
    input: &Path,
    paths: [PathBuf; 3],
) -> Result<[PathBuf; 3]> {
    let result = share_batched(fingerprint, spec, input, &paths);
    if let Err(e) = result {
        // Never leave a partial set behind: the stores of one run belong together.
        for p in &paths {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    Ok(paths)
}

fn share_batched(
    fingerprint: &str,
    spec: &ManifestInput,
    input: &Path,
    paths: &[PathBuf; 3],
) -> Result<()> {
    let (sharing, ring_bits) = super::share::sharing_for(spec, None);
    let mut set_id = [0u8; 16];
    rand::rngs::OsRng
        .try_fill_bytes(&mut set_id)
        .map_err(|e| anyhow!("the operating system's random generator failed: {e}"))?;
    let params = [0u8, 1, 2].map(|party| StoreParams {
        fingerprint: fingerprint.to_string(),
        party,
        sharing: sharing.into(),
        ring_bits,
        code_bits: spec.elements,
        secret_mask: spec.mask == InputMask::Secret,
        set_id,
    });
    params[0].layout().map_err(|e| {
        anyhow!(
            "cannot share {} as input `{}`: {e}",
            input.display(),
            spec.name
        )
    })?;
    // The meta region is sized for the most records the file can hold.
    let capacity = super::stream::max_records(input, spec.elements as usize / 8)?;
    let mut stores = Vec::new();
    for (p, path) in params.iter().zip(paths) {
        stores.push(
            NewStore::create(path, p, capacity)
                .with_context(|| format!("cannot write the gallery store {}", path.display()))?,
        );
    }
    let bar = crate::driver::progress::progress(capacity as usize, "sharing into stores");
    let staged = {
        let mut appenders = Vec::new();
        for s in stores.iter_mut() {
            let w = s
                .writer
                .as_mut()
                .ok_or_else(|| anyhow!("the store is already finished"))?;
            appenders.push(w.appender(capacity)?);
        }
        let mut appenders: [_; 3] = appenders
            .try_into()
            .map_err(|_| anyhow!("three stores expected"))?;
        let dealt = super::stream::deal_into(
            spec,
            &params[0],
            input,
            &mut appenders,
            &mut HashSet::new(),
            |n| bar.inc(n as u64),
        )?;
        if dealt == 0 {
            bail!(
                "{} holds no records to share (input `{}`)",
                input.display(),
                spec.name
            );
        }
        appenders
            .into_iter()
            .map(|a| a.stage())
            .collect::<Result<Vec<_>, _>>()?
    };
    bar.finish_and_clear();
    for (s, next) in stores.iter_mut().zip(&staged) {
        s.writer
            .as_mut()
            .ok_or_else(|| anyhow!("the store is already finished"))?
            .commit(next)?;
    }
    for s in stores {
        s.finish()?;
    }
    Ok(())
}

/// The least and greatest of `ids` (0, 0 when empty).
fn id_range(ids: &[u64]) -> (u64, u64) {
    let lo = ids.iter().copied().min().unwrap_or(0);
    let hi = ids.iter().copied().max().unwrap_or(0);
    (lo, hi)
}

/// What `irisc enroll` did.
#[derive(Debug)]
pub struct Enrolled {
    pub appended: usize,
    pub count: u64,
    pub rolled_back: Option<u64>,
}

/// `irisc enroll`: deals the records of `input` for gallery input `spec` and appends them
/// durably to the three parties' stores `paths`.
///
/// Refuses, before writing anything, stores of another schema (sharing, ring, code length, mask
/// mode) or party, stores of different sharing runs, stores that disagree on their records (an
/// earlier enroll that reached only some of them; `roll_back` then cuts all three to the records
/// they share), and ids that are already enrolled or repeated. Each store is staged (records
/// written and synced) before any is committed, so an interrupted enroll leaves, per store, the
/// old or the new record count.
pub fn enroll(
    spec: &ManifestInput,
    input: &Path,
    paths: &[PathBuf; 3],
    roll_back: bool,
) -> Result<Enrolled> {
    if !is_store_input(spec) {
        bail!(
            "input `{}` is a {} of {} data: only iris galleries are stores that can be enrolled into",
            spec.name,
            spec.role,
            spec.kind
        );
    }
    let mut counts = [0u64; 3];
    let mut set_ids = [[0u8; 16]; 3];
    let mut ids: Vec<Vec<u64>> = Vec::new();
    let mut store_ring = spec.ring_bits;
    for (party, path) in paths.iter().enumerate() {
        let store = Store::open(path).with_context(|| {
            format!(
                "cannot enroll into {} (create the stores with `irisc share --program P.irs` first)",
                path.display()
            )
        })?;
        store.check_compatible(&store_expected(spec, party as u8))?;
        counts[party] = store.len() as u64;
        store_ring = store.header().params.ring_bits;
        set_ids[party] = store.header().params.set_id;
        ids.push(store.ids());
    }
    if set_ids[1] != set_ids[0] || set_ids[2] != set_ids[0] {
        bail!(
            "{}, {} and {} come from different sharing runs (their set ids differ): pass the three stores of one gallery",
            paths[0].display(),
            paths[1].display(),
            paths[2].display()
        );
    }
    let common = *counts.iter().min().unwrap_or(&0);
    let mut rolled_back = None;
    if counts.iter().any(|&c| c != common) {
        let prefix_ok = ids
            .iter()
            .all(|v| v[..common as usize] == ids[0][..common as usize]);
        if !roll_back || !prefix_ok {
            bail!(
                "the parties' stores hold different numbers of records ({} in party 0's, {} in party 1's, {} in party 2's): an earlier enroll was interrupted after it reached only some of them; run this enroll again with --roll-back to cut all three to the {common} records they share, then enroll the rest again",
                counts[0],
                counts[1],
                counts[2]
            );
        }
        for (party, path) in paths.iter().enumerate() {
            if counts[party] > common {
                StoreWriter::open(path)?.roll_back(common)?;
            }
        }
        ids.iter_mut().for_each(|v| v.truncate(common as usize));
        rolled_back = Some(common);
    }
    // The new records are dealt over the stores' ring, which may be larger than the program's
    // (a rep3 store serves programs over smaller rings; see `check_store_compatible`).
    let dealt_spec = ManifestInput {
        ring_bits: store_ring,
        ..spec.clone()
    };
    let new_ids = super::stream::read_ids(&dealt_spec, input)?;
    let mut taken: HashSet<u64> = ids[0].iter().copied().collect();
    let enrolled: Vec<u64> = new_ids
        .iter()
        .copied()
        .filter(|id| taken.contains(id))
        .collect();
    if !enrolled.is_empty() {
        let (lo, hi) = id_range(&ids[0]);
        bail!(
            "{}: {} {} already enrolled in {} (which holds {} records, ids {lo} to {hi}): ids must be new (`irisc gen --first-id {}` numbers new records after them)",
            input.display(),
            super::ids::some_ids(&enrolled, "record id", "record ids"),
            if enrolled.len() == 1 { "is" } else { "are" },
            paths[0].display(),
            ids[0].len(),
            hi.saturating_add(1)
        );
    }
    // Stage all three (records durable, nothing committed), then commit all three.
    let mut writers = paths
        .iter()
        .map(|p| StoreWriter::open(p))
        .collect::<Result<Vec<_>, _>>()?;
    let params = writers[0].header().params.clone();
    let staged = {
        let mut appenders = Vec::new();
        for w in writers.iter_mut() {
            appenders.push(w.appender(new_ids.len() as u64)?);
        }
        let mut appenders: [_; 3] = appenders
            .try_into()
            .map_err(|_| anyhow!("three stores expected"))?;
        super::stream::deal_into(
            &dealt_spec,
            &params,
            input,
            &mut appenders,
            &mut taken,
            |_| {},
        )?;
        appenders
            .into_iter()
            .map(|a| a.stage())
            .collect::<Result<Vec<_>, _>>()?
    };
    for (w, next) in writers.iter_mut().zip(&staged) {
        w.commit(next)?;
    }
    Ok(Enrolled {
        appended: new_ids.len(),
        count: writers[0].header().count,
        rolled_back,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::synth::iris::{generate, GenOptions};
    use irisc_runtime::io::ndjson;
    use irisc_runtime::io::share_file::RingVec;
    use irisc_runtime::store::Shares;
    use irisc_runtime::vocab::Sharing;

    fn spec(sharing: Sharing, mask: InputMask) -> ManifestInput {
        ManifestInput {
            name: "db".into(),
            role: InputRole::Gallery,
            owner: None,
            kind: InputKind::Iris,
            elements: 128,
            mask,
            sharing,
            ring_bits: if sharing.is_shamir() { 16 } else { 13 },
            scale_bits: 0,
            conjugate: false,
        }
    }

    #[test]
    fn stores_hold_the_dealt_shares_and_enroll_appends() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("db.ndjson");
        let more = dir.path().join("more.ndjson");
        let recs = generate(9, 5, 128, &GenOptions::default()).unwrap();
        ndjson::write_file(&input, &recs[..6]).unwrap();
        ndjson::write_file(&more, &recs[6..]).unwrap();
        for sharing in [Sharing::Rep3, Sharing::Fp, Sharing::Gr2, Sharing::Gr4] {
            for mask in [InputMask::Public, InputMask::Secret] {
                let s = spec(sharing, mask);
                let out = dir.path().join(format!("{sharing}-{mask}"));
                let paths = [0, 1, 2].map(|p| out.join(format!("db.p{p}.shr")));
                share_to_stores("abc", &s, &input, paths.clone()).unwrap();
                let e = enroll(&s, &input, &paths, false).unwrap_err();
                assert!(
                    format!("{e:#}")
                        .contains("6 record ids (0, 1, 2, 3, 4 and 1 more) are already enrolled"),
                    "{e:#}"
                );
                let done = enroll(&s, &more, &paths, false).unwrap();
                assert_eq!((done.appended, done.count), (3, 9));
                // The three stores open to the secrets: reconstruct through the share files'
                // opener by rebuilding share files from the stores.
                let files = [0, 1, 2].map(|p| {
                    let st = Store::open(&paths[p]).unwrap();
                    assert_eq!(st.ids(), (0..9).map(|i| recs[i].id).collect::<Vec<_>>());
                    store_to_file(&st, &s)
                });
                let want: Vec<u64> = recs
                    .iter()
                    .flat_map(|r| super::super::share::encode(&r.iris, 16, mask).unwrap())
                    .collect();
                let got = super::super::deal::open(&files).unwrap();
                let m = if sharing.is_shamir() {
                    0xFFFF
                } else {
                    (1 << 13) - 1
                };
                let fp_minus_one = u64::from(irisc_runtime::share::fp::P) - 1;
                let want: Vec<u64> = want
                    .iter()
                    .map(|&v| match (sharing, v & 0xFFFF) {
                        (Sharing::Fp, 0xFFFF) => fp_minus_one,
                        _ => v & m,
                    })
                    .collect();
                assert_eq!(got, want);
                // A program whose gallery has another code length cannot enroll into them.
                let longer = ManifestInput {
                    elements: 256,
                    ..s.clone()
                };
                let e = enroll(&longer, &more, &paths, false).unwrap_err();
                assert!(
                    format!("{e:#}").contains("holds codes of 128 bits but this program's input `db` is 256 bits (the code length differs)"),
                    "{e:#}"
                );
            }
        }
    }

    /// Galleries larger than a block (several blocks per store, the last one partial) and
    /// enrolments at offsets that are not page-aligned (the head and tail of each write go
    /// through the page cache, the middle direct): every store opens (its records checksum
    /// checks every byte) and opens to the plaintext.
    #[test]
    fn streamed_blocks_and_unaligned_enrolments_reconstruct() {
        let dir = tempfile::tempdir().unwrap();
        let per_block = super::super::stream::BLOCK_PER_THREAD * rayon::current_num_threads();
        let sizes = [2 * per_block + 37, 77, per_block + 5];
        let total: usize = sizes.iter().sum();
        let recs = generate(total, 9, 640, &GenOptions::default()).unwrap();
        let mut files = Vec::new();
        let mut at = 0;
        for (i, n) in sizes.iter().enumerate() {
            let f = dir.path().join(format!("part{i}.ndjson"));
            ndjson::write_file(&f, &recs[at..at + n]).unwrap();
            files.push(f);
            at += n;
        }
        // Replicated over Z_2^13 (dealt record by record) and over Z_2^16 (dealt as three
        // components, hashed and streamed from the parts: `RecordDealer::rep3_components`).
        let cases = [
            (Sharing::Rep3, 13),
            (Sharing::Rep3, 16),
            (Sharing::Fp, 16),
            (Sharing::Gr2, 16),
            (Sharing::Gr4, 16),
        ];
        for (sharing, ring_bits) in cases {
            for mask in [InputMask::Public, InputMask::Secret] {
                let mut s = spec(sharing, mask);
                s.elements = 640;
                s.ring_bits = ring_bits;
                let out = dir.path().join(format!("{sharing}-{ring_bits}-{mask}"));
                let paths = [0, 1, 2].map(|p| out.join(format!("db.p{p}.shr")));
                share_to_stores("abc", &s, &files[0], paths.clone()).unwrap();
                for f in &files[1..] {
                    enroll(&s, f, &paths, false).unwrap();
                }
                let opened = [0, 1, 2].map(|p| {
                    let st = Store::open(&paths[p]).unwrap();
                    assert_eq!(st.ids(), recs.iter().map(|r| r.id).collect::<Vec<_>>());
                    store_to_file(&st, &s)
                });
                let m = (1u64 << ring_bits) - 1;
                let fp_minus_one = u64::from(irisc_runtime::share::fp::P) - 1;
                let want: Vec<u64> = recs
                    .iter()
                    .flat_map(|r| super::super::share::encode(&r.iris, 16, mask).unwrap())
                    .map(|v| match (sharing, v & 0xFFFF) {
                        (Sharing::Fp, 0xFFFF) => fp_minus_one,
                        _ => v & m,
                    })
                    .collect();
                assert_eq!(
                    super::super::deal::open(&opened).unwrap(),
                    want,
                    "{sharing} {mask}"
                );
            }
        }
    }

    /// Rewrites the store at `path` as format version 2 wrote it: its header slots with version 2
    /// and the records checksum of that version, a sum of derive-key BLAKE3 hashes computed here
    /// from the file's bytes.
    fn make_version_2(path: &std::path::Path) {
        use irisc_runtime::store::{RecordsSum, RECORDS_OFFSET, SLOT_LEN};
        let mut h = Store::open(path).unwrap().header().clone();
        let l = h.params.layout().unwrap();
        let mut b = std::fs::read(path).unwrap();
        let start = l.shares_start(h.capacity).unwrap() as usize;
        let mut sum = RecordsSum::default();
        for i in 0..h.count as usize {
            let meta = RECORDS_OFFSET as usize + i * l.meta_size;
            let shares = start + i * l.share_size;
            let mut hasher = blake3::Hasher::new_derive_key("irisc gallery store 2024 record v1");
            hasher.update(&(i as u64).to_le_bytes());
            hasher.update(&b[meta..meta + l.meta_size]);
            hasher.update(&b[shares..shares + l.share_size]);
            sum.add_sum(&RecordsSum(*hasher.finalize().as_bytes()));
        }
        h.version = 2;
        h.records_sum = sum;
        let slot = h.to_bytes().unwrap();
        b[..SLOT_LEN].copy_from_slice(&slot);
        b[SLOT_LEN..2 * SLOT_LEN].copy_from_slice(&slot);
        std::fs::write(path, b).unwrap();
    }

    /// Enrolling into version 2 stores hashes the new records with version 2's BLAKE3 sum (the
    /// streaming dealer's other path): the stores stay version 2, open (every byte checked
    /// against that sum) and reconstruct.
    #[test]
    fn enroll_into_version_2_stores_keeps_version_2() {
        let dir = tempfile::tempdir().unwrap();
        let per_block = super::super::stream::BLOCK_PER_THREAD * rayon::current_num_threads();
        let recs = generate(per_block + 20, 4, 128, &GenOptions::default()).unwrap();
        let (input, more) = (dir.path().join("a.ndjson"), dir.path().join("b.ndjson"));
        ndjson::write_file(&input, &recs[..10]).unwrap();
        ndjson::write_file(&more, &recs[10..]).unwrap();
        for sharing in [Sharing::Rep3, Sharing::Gr2] {
            let s = spec(sharing, InputMask::Public);
            let out = dir.path().join(format!("{sharing}"));
            let paths = [0, 1, 2].map(|p| out.join(format!("db.p{p}.shr")));
            share_to_stores("abc", &s, &input, paths.clone()).unwrap();
            paths.iter().for_each(|p| make_version_2(p));
            enroll(&s, &more, &paths, false).unwrap();
            let files = [0, 1, 2].map(|p| {
                let st = Store::open(&paths[p]).unwrap();
                assert_eq!(st.header().version, 2);
                assert_eq!(st.ids(), recs.iter().map(|r| r.id).collect::<Vec<_>>());
                store_to_file(&st, &s)
            });
            let m = if sharing.is_shamir() {
                0xFFFF
            } else {
                (1 << 13) - 1
            };
            let want: Vec<u64> = recs
                .iter()
                .flat_map(|r| super::super::share::encode(&r.iris, 16, InputMask::Public).unwrap())
                .map(|v| v & m)
                .collect();
            assert_eq!(super::super::deal::open(&files).unwrap(), want, "{sharing}");
        }
    }

    /// A repeated id in a later block stops the run with the reader's message naming every
    /// repeated id, and leaves no store behind.
    #[test]
    fn a_repeated_id_in_a_later_block_is_reported_and_nothing_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let recs = generate(600, 3, 128, &GenOptions::default()).unwrap();
        let input = dir.path().join("db.ndjson");
        ndjson::write_file(&input, &recs).unwrap();
        // Line 600 repeats line 3 (the writer refuses repeated ids, so edit its text).
        let text = std::fs::read_to_string(&input).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        lines[599] = lines[2];
        std::fs::write(&input, lines.join("\n") + "\n").unwrap();
        let out = dir.path().join("out");
        let paths = [0, 1, 2].map(|p| out.join(format!("db.p{p}.shr")));
        let e = share_to_stores(
            "abc",
            &spec(Sharing::Gr2, InputMask::Public),
            &input,
            paths.clone(),
        )
        .unwrap_err();
        assert!(
            format!("{e:#}").contains("1 id appears on more than one line")
                || format!("{e:#}").contains("appear on more than one line"),
            "{e:#}"
        );
        assert!(format!("{e:#}").contains("lines 3, 600"), "{e:#}");
        for p in &paths {
            assert!(!p.exists());
        }
        assert_eq!(
            std::fs::read_dir(&out).unwrap().count(),
            0,
            "no temporary files left"
        );
    }

    /// A share file with the store's contents (for the dealer-side opener).
    fn store_to_file(st: &Store, spec: &ManifestInput) -> ShareFile {
        let p = &st.header().params;
        let mut header = irisc_runtime::io::share_file::ShareFileHeader::new(
            InputRole::Gallery,
            p.party,
            spec.mask,
            p.ring_bits,
            p.code_bits,
            st.len() as u64,
            p.set_id,
        );
        header.sharing = spec.sharing;
        let (mut own, mut prev, mut masks) = (Vec::new(), Vec::new(), Vec::new());
        for r in st.records() {
            masks.extend_from_slice(r.mask);
            match r.shares {
                Shares::Shamir(s) => own.extend(s.iter().map(|&x| u64::from(x))),
                Shares::Rep3U16 { own: o, prev: q } => {
                    own.extend(o.iter().map(|&x| u64::from(x)));
                    prev.extend(q.iter().map(|&x| u64::from(x)));
                }
                _ => unreachable!(),
            }
        }
        ShareFile {
            header,
            ids: st.ids(),
            masks,
            own: RingVec::from_u64s(16, own).unwrap(),
            prev: RingVec::from_u64s(16, prev).unwrap(),
        }
    }
}
