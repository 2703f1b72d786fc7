//! Creating a store and appending to it durably (the steps and their crash argument: `mod.rs`).

use std::fs::{self, File, TryLockError};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::{io_err, StoreError};
use super::header::{RecordHash, RecordLayout, RecordsSum, StoreHeader, StoreParams, StoreSharing};
use super::header::{MIN_CAPACITY, RECORDS_OFFSET, SLOT_LEN, STORE_VERSION};
use super::{committed_len, read_slots, Record, Shares};
use crate::io::share_file::ring_mask;

fn dir_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Makes a directory entry change durable; not all platforms can sync a directory.
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

/// Creates an empty store at `path`, atomically, refusing to replace an existing file.
pub fn create(path: &Path, params: &StoreParams) -> Result<StoreHeader, StoreError> {
    create_with_capacity(path, params, 0)
}

/// The meta capacity a store holding `count` records gets: room to double, at least
/// [`MIN_CAPACITY`].
fn capacity_for(count: u64) -> u64 {
    count
        .saturating_mul(2)
        .max(MIN_CAPACITY)
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX)
}

/// As [`create`], with room in the meta region for at least `records` records before the
/// first append has to grow it (pass the size of the first batch).
pub fn create_with_capacity(
    path: &Path,
    params: &StoreParams,
    records: u64,
) -> Result<StoreHeader, StoreError> {
    let invalid = |detail: String| StoreError::Invalid {
        path: path.to_path_buf(),
        detail,
    };
    params.layout().map_err(invalid)?;
    let header = StoreHeader {
        version: STORE_VERSION,
        params: params.clone(),
        count: 0,
        seq: 1,
        records_sum: RecordsSum::default(),
        capacity: capacity_for(records),
    };
    let len = header.file_len().map_err(invalid)?;
    let slot = header.to_bytes().map_err(invalid)?;
    let dir = dir_of(path);
    let name = path
        .file_name()
        .ok_or_else(|| invalid("the path does not name a file".into()))?
        .to_string_lossy()
        .into_owned();
    let mut tag = [0u8; 8];
    getrandom::fill(&mut tag).map_err(|e| StoreError::Random(e.to_string()))?;
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        u64::from_le_bytes(tag)
    ));
    let result = (|| {
        let mut f = owner_only(File::options().write(true).create_new(true))
            .open(&tmp)
            .map_err(io_err("create", &tmp))?;
        f.write_all(&slot).map_err(io_err("write", &tmp))?;
        f.write_all(&slot).map_err(io_err("write", &tmp))?;
        // The empty meta region (a hole on most file systems).
        f.set_len(len).map_err(io_err("write", &tmp))?;
        f.sync_all().map_err(io_err("sync", &tmp))?;
        // A link, unlike a rename, fails instead of replacing an existing store.
        fs::hard_link(&tmp, path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                StoreError::Exists {
                    path: path.to_path_buf(),
                }
            } else {
                io_err("link into place", path)(e)
            }
        })
    })();
    let _ = fs::remove_file(&tmp);
    result?;
    sync_dir(&dir);
    Ok(header)
}

/// Rewrites a damaged or stale header slot from the intact one; returns the committed header.
pub fn repair(path: &Path) -> Result<StoreHeader, StoreError> {
    Ok(StoreWriter::open(path)?.header().clone())
}

/// The single appender of a store; holds an exclusive lock on the file while it lives.
pub struct StoreWriter {
    path: PathBuf,
    file: File,
    header: StoreHeader,
    layout: RecordLayout,
}

impl std::fmt::Debug for StoreWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreWriter")
            .field("path", &self.path)
            .field("count", &self.header.count)
            .finish()
    }
}

impl StoreWriter {
    /// Opens the store for appending: locks it, takes its committed state from the header
    /// slots and, if the slots are not an intact mirror, rewrites both from that state.
    ///
    /// Records are not re-hashed here (that is [`super::Store::open`]'s job), so opening a
    /// writer costs the same for any store size.
    pub fn open(path: &Path) -> Result<StoreWriter, StoreError> {
        let mut file = File::options()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io_err("open", path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                return Err(StoreError::Locked {
                    path: path.to_path_buf(),
                })
            }
            Err(TryLockError::Error(e)) => return Err(io_err("lock", path)(e)),
        }
        let len = file.metadata().map_err(io_err("read", path))?.len();
        let chosen = read_slots(path, &mut file, len)?;
        committed_len(path, &chosen.header, len)?;
        let layout = chosen
            .header
            .params
            .layout()
            .map_err(|detail| StoreError::Malformed {
                path: path.to_path_buf(),
                detail,
            })?;
        let mut writer = StoreWriter {
            path: path.to_path_buf(),
            file,
            header: chosen.header.clone(),
            layout,
        };
        if !chosen.in_sync {
            writer.commit(&chosen.header)?;
        }
        Ok(writer)
    }

    /// The committed state.
    pub fn header(&self) -> &StoreHeader {
        &self.header
    }

    /// Appends `records` durably and returns the new record count. An empty batch commits
    /// nothing. On error the store still holds its previous committed state.
    pub fn append(&mut self, records: &[Record<'_>]) -> Result<u64, StoreError> {
        if records.is_empty() {
            return Ok(self.header.count);
        }
        let staged = self.stage(records)?;
        self.commit(&staged)?;
        Ok(self.header.count)
    }

    /// Steps 1-2: cuts any uncommitted tail, writes `records` after the committed ones and
    /// fsyncs them; returns the header that would commit them (nothing is committed yet;
    /// [`StoreWriter::commit`] does). Grows the meta region first if it is full.
    pub fn stage(&mut self, records: &[Record<'_>]) -> Result<StoreHeader, StoreError> {
        for (i, r) in records.iter().enumerate() {
            self.check(r).map_err(|detail| StoreError::Invalid {
                path: self.path.clone(),
                detail: format!("record {i} (id {}): {detail}", r.id),
            })?;
        }
        let (have, path0) = (self.header.count, self.path.clone());
        let too_many = || StoreError::Invalid {
            path: path0.clone(),
            detail: format!("{have} + {} records do not fit in a file", records.len()),
        };
        let mut next = self.header.clone();
        next.count = next
            .count
            .checked_add(records.len() as u64)
            .ok_or_else(too_many)?;
        next.seq = next.seq.checked_add(1).ok_or_else(too_many)?;
        if next.count > self.header.capacity {
            self.grow(capacity_for(next.count))?;
            next.capacity = self.header.capacity;
            next.seq = self.header.seq.checked_add(1).ok_or_else(too_many)?;
        }
        next.file_len().map_err(|_| too_many())?;
        let end = self.header.file_len().map_err(|_| too_many())?;
        let path = self.path.clone();
        let l = self.layout;
        self.file.set_len(end).map_err(io_err("truncate", &path))?;
        let mut metas = vec![0u8; l.meta_size * records.len()];
        let mut shares = vec![0u8; l.share_size];
        // The shares, after the committed ones.
        self.file
            .seek(SeekFrom::Start(end))
            .map_err(io_err("seek", &path))?;
        let mut out = BufWriter::with_capacity(1 << 20, &self.file);
        for (j, r) in records.iter().enumerate() {
            let meta = &mut metas[j * l.meta_size..(j + 1) * l.meta_size];
            encode(&l, r, meta, &mut shares);
            next.records_sum.add_record(
                RecordHash::of_version(self.header.version),
                self.header.count + j as u64,
                meta,
                &shares,
            );
            out.write_all(&shares).map_err(io_err("write", &path))?;
        }
        out.flush().map_err(io_err("write", &path))?;
        drop(out);
        // The meta, into the free slots after the committed ones.
        let meta_at = RECORDS_OFFSET + self.header.count * l.meta_size as u64;
        self.file
            .seek(SeekFrom::Start(meta_at))
            .map_err(io_err("seek", &path))?;
        self.file
            .write_all(&metas)
            .map_err(io_err("write", &path))?;
        pause_point("staged");
        self.file.sync_all().map_err(io_err("sync", &path))?;
        Ok(next)
    }

    /// Starts appending `records` new records given already encoded (the dealer's streaming
    /// path, [`Appender`]): cuts any uncommitted tail and grows the meta region first if the
    /// records would not fit, so the blocks that follow are plain writes at known offsets.
    pub fn appender(&mut self, records: u64) -> Result<Appender<'_>, StoreError> {
        let (have, path) = (self.header.count, self.path.clone());
        let too_many = || StoreError::Invalid {
            path: path.clone(),
            detail: format!("{have} + {records} records do not fit in a file"),
        };
        let wanted = have.checked_add(records).ok_or_else(too_many)?;
        if wanted > self.header.capacity {
            self.grow(capacity_for(wanted))?;
        }
        let end = self.header.file_len().map_err(|_| too_many())?;
        self.file.set_len(end).map_err(io_err("truncate", &path))?;
        let mut next = self.header.clone();
        next.seq = next.seq.checked_add(1).ok_or_else(too_many)?;
        Ok(Appender {
            limit: wanted,
            next,
            direct: super::direct::open_direct(&path),
            writer: self,
        })
    }

    /// Rewrites the store with a meta region of `capacity` slots: a temporary file with the
    /// committed records, fsynced, renamed over the store, then the directory fsynced. A crash
    /// leaves either file whole. Readers that have the old file mapped keep reading it.
    fn grow(&mut self, capacity: u64) -> Result<(), StoreError> {
        let path = self.path.clone();
        let l = self.layout;
        let mut next = self.header.clone();
        next.capacity = capacity;
        next.seq = next.seq.saturating_add(1);
        let invalid = |detail: String| StoreError::Invalid {
            path: path.clone(),
            detail,
        };
        let new_start = l
            .shares_start(capacity)
            .ok_or_else(|| invalid("too large".into()))?;
        let new_len = next.file_len().map_err(invalid)?;
        let old_start = l
            .shares_start(self.header.capacity)
            .ok_or_else(|| invalid("too large".into()))?;
        let count = self.header.count;
        let slot = next.to_bytes().map_err(invalid)?;
        let dir = dir_of(&path);
        let mut tag = [0u8; 8];
        getrandom::fill(&mut tag).map_err(|e| StoreError::Random(e.to_string()))?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = dir.join(format!(
            ".{name}.{}.{}.grow",
            std::process::id(),
            u64::from_le_bytes(tag)
        ));
        let result = (|| -> Result<File, StoreError> {
            let mut f = owner_only(File::options().read(true).write(true).create_new(true))
                .open(&tmp)
                .map_err(io_err("create", &tmp))?;
            f.write_all(&slot).map_err(io_err("write", &tmp))?;
            f.write_all(&slot).map_err(io_err("write", &tmp))?;
            let copy = |f: &mut File, from: u64, to: u64, len: u64| -> Result<(), StoreError> {
                let mut src = &self.file;
                src.seek(SeekFrom::Start(from))
                    .map_err(io_err("seek", &path))?;
                f.seek(SeekFrom::Start(to)).map_err(io_err("seek", &tmp))?;
                let n = std::io::copy(&mut std::io::Read::take(src, len), f)
                    .map_err(io_err("copy", &path))?;
                if n != len {
                    return Err(invalid(format!("{n} of {len} bytes could be read")));
                }
                Ok(())
            };
            copy(
                &mut f,
                RECORDS_OFFSET,
                RECORDS_OFFSET,
                count * l.meta_size as u64,
            )?;
            copy(&mut f, old_start, new_start, count * l.share_size as u64)?;
            f.set_len(new_len).map_err(io_err("write", &tmp))?;
            f.sync_all().map_err(io_err("sync", &tmp))?;
            match f.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => {
                    return Err(StoreError::Locked { path: tmp.clone() })
                }
                Err(TryLockError::Error(e)) => return Err(io_err("lock", &tmp)(e)),
            }
            fs::rename(&tmp, &path).map_err(io_err("rename into place", &path))?;
            Ok(f)
        })();
        let f = match result {
            Ok(f) => f,
            Err(e) => {
                let _ = fs::remove_file(&tmp);
                return Err(e);
            }
        };
        sync_dir(&dir);
        self.file = f;
        self.header = next;
        Ok(())
    }

    /// Rolls the store back to its first `count` records (fewer than it holds): recomputes the
    /// records checksum from them and commits. For a dealer repairing the three parties' stores
    /// after an append that reached only some of them; never while a party scans the store,
    /// since the next append overwrites the dropped records in place.
    pub fn roll_back(&mut self, count: u64) -> Result<(), StoreError> {
        if count >= self.header.count {
            return Ok(());
        }
        let path = self.path.clone();
        let l = self.layout;
        let start = l
            .shares_start(self.header.capacity)
            .ok_or_else(|| StoreError::Invalid {
                path: path.clone(),
                detail: "too large".into(),
            })?;
        let mut sum = RecordsSum::default();
        let (mut meta, mut shares) = (vec![0u8; l.meta_size], vec![0u8; l.share_size]);
        for i in 0..count {
            let mut f = &self.file;
            f.seek(SeekFrom::Start(RECORDS_OFFSET + i * l.meta_size as u64))
                .map_err(io_err("seek", &path))?;
            std::io::Read::read_exact(&mut f, &mut meta).map_err(io_err("read", &path))?;
            f.seek(SeekFrom::Start(start + i * l.share_size as u64))
                .map_err(io_err("seek", &path))?;
            std::io::Read::read_exact(&mut f, &mut shares).map_err(io_err("read", &path))?;
            sum.add_record(
                RecordHash::of_version(self.header.version),
                i,
                &meta,
                &shares,
            );
        }
        let mut next = self.header.clone();
        next.count = count;
        next.seq = next.seq.saturating_add(1);
        next.records_sum = sum;
        self.commit(&next)
    }

    /// Steps 3-4: writes slot 1, then slot 0, each followed by an fsync.
    pub fn commit(&mut self, header: &StoreHeader) -> Result<(), StoreError> {
        self.write_slot(1, header)?;
        pause_point("slot1");
        self.write_slot(0, header)?;
        self.header = header.clone();
        Ok(())
    }

    /// Writes one header slot and fsyncs it.
    pub(crate) fn write_slot(
        &mut self,
        slot: usize,
        header: &StoreHeader,
    ) -> Result<(), StoreError> {
        let bytes = header.to_bytes().map_err(|detail| StoreError::Invalid {
            path: self.path.clone(),
            detail,
        })?;
        let path = self.path.clone();
        self.file
            .seek(SeekFrom::Start((slot * SLOT_LEN) as u64))
            .map_err(io_err("seek", &path))?;
        // One write call inside one page: killing the process cannot leave it half done.
        self.file
            .write_all(&bytes)
            .map_err(io_err("write", &path))?;
        self.file.sync_data().map_err(io_err("sync", &path))?;
        Ok(())
    }

    /// Checks that a record has this store's shape and canonical share values.
    fn check(&self, r: &Record<'_>) -> Result<(), String> {
        let l = &self.layout;
        let p = &self.header.params;
        if r.mask.len() != l.mask_len {
            return Err(format!(
                "{} mask bytes, expected {}",
                r.mask.len(),
                l.mask_len
            ));
        }
        let n = l.elements;
        let len_ok = |a: usize, b: usize| a == n && b == n;
        let limit = match p.sharing {
            StoreSharing::Rep3 => ring_mask(p.ring_bits).unwrap_or(u64::MAX),
            StoreSharing::ShamirGr { .. } => u64::from(u16::MAX),
            StoreSharing::ShamirPrime { modulus } => u64::from(modulus) - 1,
        };
        let reduced = |mut v: Box<dyn Iterator<Item = u64> + '_>| -> Result<(), String> {
            match v.position(|x| x > limit) {
                Some(i) => Err(format!("share element {i} is not a canonical residue")),
                None => Ok(()),
            }
        };
        match (p.sharing, l.element_bytes, r.shares) {
            (StoreSharing::Rep3, 2, Shares::Rep3U16 { own, prev })
                if len_ok(own.len(), prev.len()) =>
            {
                reduced(Box::new(own.iter().chain(prev).map(|&x| u64::from(x))))
            }
            (StoreSharing::Rep3, 4, Shares::Rep3U32 { own, prev })
                if len_ok(own.len(), prev.len()) =>
            {
                reduced(Box::new(own.iter().chain(prev).map(|&x| u64::from(x))))
            }
            (StoreSharing::Rep3, 8, Shares::Rep3U64 { own, prev })
                if len_ok(own.len(), prev.len()) =>
            {
                reduced(Box::new(own.iter().chain(prev).copied()))
            }
            (
                StoreSharing::ShamirGr { .. } | StoreSharing::ShamirPrime { .. },
                2,
                Shares::Shamir(s),
            ) if s.len() == n => reduced(Box::new(s.iter().map(|&x| u64::from(x)))),
            _ => Err(format!(
                "shares do not fit a {} store over Z_2^{} with {n} elements per component",
                p.sharing, p.ring_bits
            )),
        }
    }
}

/// Appends records that arrive already encoded in the store's layout, block after block, with
/// no per-record work in the writer: a block's metas go into the meta region and its shares
/// after the staged ones, each in one positioned write. Nothing is durable or visible until
/// [`Appender::stage`] (one fsync) and [`StoreWriter::commit`].
pub struct Appender<'w> {
    writer: &'w mut StoreWriter,
    /// The header that commits what has been written so far.
    next: StoreHeader,
    /// The record count the meta region was sized for.
    limit: u64,
    /// The store opened again with `O_DIRECT`, for the page-aligned part of each write.
    direct: Option<File>,
}

impl Appender<'_> {
    /// The index the next record written gets (its place in [`RecordsSum`]).
    pub fn next_index(&self) -> u64 {
        self.next.count
    }

    /// How this store hashes its records (its format version's [`RecordHash`]).
    pub fn record_hash(&self) -> RecordHash {
        RecordHash::of_version(self.next.version)
    }

    /// Where the next record's meta and shares go in the file: a caller that places its
    /// buffers at these offsets modulo a page ([`super::PageBuf::window`]) gets direct writes.
    pub fn next_offsets(&self) -> (u64, u64) {
        let l = &self.writer.layout;
        let meta = RECORDS_OFFSET + self.next.count * l.meta_size as u64;
        let shares = l
            .shares_start(self.writer.header.capacity)
            .unwrap_or(0)
            .saturating_add(self.next.count.saturating_mul(l.share_size as u64));
        (meta, shares)
    }

    /// Writes `count` records: `metas` holds their meta slots and `shares` their shares, both
    /// in the store's layout ([`RecordLayout`]); `sum` is the [`RecordsSum`] of these records
    /// alone at their indices from [`Appender::next_index`] (the dealer hashes each record
    /// where it deals it, while it is in cache). The share words are checked to be canonical
    /// residues; the ids and the sum are the caller's word, and [`super::Store::open`] checks
    /// the sum against every byte.
    pub fn write(
        &mut self,
        count: usize,
        metas: &[u8],
        shares: &[u8],
        sum: &RecordsSum,
    ) -> Result<(), StoreError> {
        let w = &*self.writer;
        CanonicalCheck::new(&w.header.params, &w.layout)
            .check(shares)
            .map_err(|detail| StoreError::Invalid {
                path: w.path.clone(),
                detail,
            })?;
        self.write_checked(count, metas, shares, sum)
    }

    /// [`Appender::write`] for a caller that ran this store's [`CanonicalCheck`] on every
    /// record's share bytes as it made them (the streaming dealer, in cache): the same writes,
    /// without a second pass over the block.
    pub fn write_checked(
        &mut self,
        count: usize,
        metas: &[u8],
        shares: &[u8],
        sum: &RecordsSum,
    ) -> Result<(), StoreError> {
        let w = &mut *self.writer;
        let l = w.layout;
        let path = w.path.clone();
        let invalid = |detail: String| StoreError::Invalid {
            path: path.clone(),
            detail,
        };
        if metas.len() != count * l.meta_size || shares.len() != count * l.share_size {
            return Err(invalid(format!(
                "{count} encoded records need {} meta and {} share bytes, not {} and {}",
                count * l.meta_size,
                count * l.share_size,
                metas.len(),
                shares.len()
            )));
        }
        let first = self.next.count;
        let after = first + count as u64;
        if after > self.limit {
            return Err(invalid(format!(
                "{after} records written where {} were announced",
                self.limit
            )));
        }
        let shares_at = l
            .shares_start(w.header.capacity)
            .and_then(|s| s.checked_add(first.checked_mul(l.share_size as u64)?))
            .ok_or_else(|| invalid("too large".into()))?;
        let meta_at = RECORDS_OFFSET + first * l.meta_size as u64;
        super::direct::write_at(&w.file, &mut self.direct, shares, shares_at)
            .map_err(io_err("write", &path))?;
        super::direct::write_at(&w.file, &mut self.direct, metas, meta_at)
            .map_err(io_err("write", &path))?;
        self.next.count = after;
        self.next.records_sum.add_sum(sum);
        Ok(())
    }

    /// Step 2: makes everything written durable (one fsync) and returns the header that
    /// commits it; [`StoreWriter::commit`] commits it.
    pub fn stage(self) -> Result<StoreHeader, StoreError> {
        let path = self.writer.path.clone();
        pause_point("staged");
        self.writer.file.sync_all().map_err(io_err("sync", &path))?;
        Ok(self.next)
    }
}

/// Whether share words are canonical residues of a store's sharing: the check every append
/// runs on the share bytes it writes (a dealer's bug must not reach a store), and that the
/// streaming dealer runs on each record as it deals it, while the record is in cache
/// ([`Appender::write_checked`]): run by the appender over a block of tens of megabytes that
/// streaming stores had just sent to memory, it was a fifth of dealing F_p on one core.
#[derive(Debug, Clone, Copy)]
pub struct CanonicalCheck {
    /// The largest canonical word, where some words of the storage width are not canonical.
    limit: Option<u64>,
    element_bytes: usize,
}

impl CanonicalCheck {
    /// The check for records of `layout` in a store with `params`.
    pub fn new(p: &StoreParams, l: &RecordLayout) -> CanonicalCheck {
        let limit = match p.sharing {
            StoreSharing::Rep3 => ring_mask(p.ring_bits).unwrap_or(u64::MAX),
            StoreSharing::ShamirGr { .. } => u64::from(u16::MAX),
            StoreSharing::ShamirPrime { modulus } => u64::from(modulus) - 1,
        };
        let words_bound = match l.element_bytes {
            2 => u64::from(u16::MAX),
            4 => u64::from(u32::MAX),
            _ => u64::MAX,
        };
        CanonicalCheck {
            // Every word is canonical when the limit is the word's own: padding bytes are zero
            // by construction of the layout and are the caller's to keep so.
            limit: (limit < words_bound).then_some(limit),
            element_bytes: l.element_bytes,
        }
    }

    /// Checks every share word of `shares` (whole encoded records' share bytes).
    pub fn check(&self, shares: &[u8]) -> Result<(), String> {
        let Some(limit) = self.limit else {
            return Ok(());
        };
        let bad = match self.element_bytes {
            2 => largest_u16(shares) > limit as u16,
            4 => {
                shares.chunks_exact(4).fold(0u32, |m, w| {
                    m.max(u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
                }) > limit as u32
            }
            _ => shares
                .chunks_exact(8)
                .any(|w| u64::from_le_bytes(w.try_into().unwrap_or([0; 8])) > limit),
        };
        if bad {
            return Err("a share word is not a canonical residue".into());
        }
        Ok(())
    }
}

/// The largest little-endian u16 word of `bytes` (an odd last byte is ignored), with AVX2
/// where the CPU has it (the runtime is built for baseline x86-64, whose SSE2 has no unsigned
/// 16-bit maximum).
fn largest_u16(bytes: &[u8]) -> u16 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: AVX2 is present (checked above).
        return unsafe { largest_u16_avx2(bytes) };
    }
    largest_u16_lanes(bytes)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn largest_u16_avx2(bytes: &[u8]) -> u16 {
    largest_u16_lanes(bytes)
}

/// [`largest_u16`] in 32 independent lanes, which the compiler keeps in vector registers:
/// over the bytes as u16 words where they are 2-byte aligned (a little-endian target), else
/// word by word from the bytes.
#[inline(always)]
fn largest_u16_lanes(bytes: &[u8]) -> u16 {
    let even = &bytes[..bytes.len() / 2 * 2];
    if cfg!(target_endian = "little") {
        if let Ok(words) = bytemuck::try_cast_slice::<u8, u16>(even) {
            let mut lanes = [0u16; 32];
            let blocks = words.chunks_exact(32);
            let tail = blocks.remainder().iter().copied().fold(0u16, u16::max);
            for block in blocks {
                for (lane, &w) in lanes.iter_mut().zip(block) {
                    *lane = (*lane).max(w);
                }
            }
            return lanes.into_iter().fold(tail, u16::max);
        }
    }
    even.chunks_exact(2)
        .fold(0u16, |m, w| m.max(u16::from_le_bytes([w[0], w[1]])))
}

/// Serializes a checked record into `meta` and `buf` (exactly one record's parts long),
/// little-endian.
fn encode(l: &RecordLayout, r: &Record<'_>, meta: &mut [u8], buf: &mut [u8]) {
    meta.fill(0);
    meta[0..8].copy_from_slice(&r.id.to_le_bytes());
    meta[l.mask_offset..l.mask_offset + l.mask_len].copy_from_slice(r.mask);
    buf.fill(0);
    let c0 = 0;
    let c1 = c0 + l.component_stride;
    fn put<const W: usize, T: Copy>(dst: &mut [u8], src: &[T], le: impl Fn(T) -> [u8; W]) {
        for (d, &x) in dst.chunks_exact_mut(W).zip(src) {
            d.copy_from_slice(&le(x));
        }
    }
    match r.shares {
        Shares::Rep3U16 { own, prev } => {
            put(&mut buf[c0..], own, u16::to_le_bytes);
            put(&mut buf[c1..], prev, u16::to_le_bytes);
        }
        Shares::Rep3U32 { own, prev } => {
            put(&mut buf[c0..], own, u32::to_le_bytes);
            put(&mut buf[c1..], prev, u32::to_le_bytes);
        }
        Shares::Rep3U64 { own, prev } => {
            put(&mut buf[c0..], own, u64::to_le_bytes);
            put(&mut buf[c1..], prev, u64::to_le_bytes);
        }
        Shares::Shamir(s) => put(&mut buf[c0..], s, u16::to_le_bytes),
    }
}

/// Test hook for crash tests: with `IRISC_STORE_PAUSE_AT` set to `step` (`staged`: records
/// written, nothing committed; `slot1`: slot 1 committed, slot 0 not yet), the writer says so
/// on stderr and sleeps, so that a test can kill the process at that point.
fn pause_point(step: &str) {
    if std::env::var("IRISC_STORE_PAUSE_AT").is_ok_and(|v| v == step) {
        eprintln!("store writer paused at {step} (IRISC_STORE_PAUSE_AT)");
        std::thread::sleep(std::time::Duration::from_secs(120));
    }
}

/// A store holds one party's shares: created readable and writable by its owner only (mode
/// 0600), from the first byte on.
pub(crate) fn owner_only(o: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(o, 0o600);
    o
}
