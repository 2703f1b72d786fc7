//! Creating a store and appending to it durably (the steps and their crash argument: `mod.rs`).

use std::fs::{self, File, TryLockError};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::error::{io_err, StoreError};
use super::header::{RecordLayout, RecordsSum, StoreHeader, StoreParams, StoreSharing};
use super::header::{RECORDS_OFFSET, SLOT_LEN, STORE_VERSION};
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
    };
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
        let mut f = File::options()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(io_err("create", &tmp))?;
        f.write_all(&slot).map_err(io_err("write", &tmp))?;
        f.write_all(&slot).map_err(io_err("write", &tmp))?;
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
    /// fsyncs them; returns the header that would commit them (nothing is committed yet).
    pub(crate) fn stage(&mut self, records: &[Record<'_>]) -> Result<StoreHeader, StoreError> {
        for (i, r) in records.iter().enumerate() {
            self.check(r).map_err(|detail| StoreError::Invalid {
                path: self.path.clone(),
                detail: format!("record {i} (id {}): {detail}", r.id),
            })?;
        }
        let too_many = || StoreError::Invalid {
            path: self.path.clone(),
            detail: format!(
                "{} + {} records do not fit in a file",
                self.header.count,
                records.len()
            ),
        };
        let mut next = self.header.clone();
        next.count = next
            .count
            .checked_add(records.len() as u64)
            .ok_or_else(too_many)?;
        next.seq = next.seq.checked_add(1).ok_or_else(too_many)?;
        next.records_len().map_err(|_| too_many())?;
        let end = RECORDS_OFFSET + self.header.records_len().map_err(|_| too_many())?;
        let path = self.path.clone();
        self.file.set_len(end).map_err(io_err("truncate", &path))?;
        self.file
            .seek(SeekFrom::Start(end))
            .map_err(io_err("seek", &path))?;
        let mut out = BufWriter::with_capacity(1 << 20, &self.file);
        let mut buf = vec![0u8; self.layout.size];
        for (j, r) in records.iter().enumerate() {
            encode(&self.layout, r, &mut buf);
            next.records_sum
                .add_record(self.header.count + j as u64, &buf);
            out.write_all(&buf).map_err(io_err("write", &path))?;
        }
        out.flush().map_err(io_err("write", &path))?;
        drop(out);
        self.file.sync_all().map_err(io_err("sync", &path))?;
        Ok(next)
    }

    /// Steps 3-4: writes slot 1, then slot 0, each followed by an fsync.
    pub(crate) fn commit(&mut self, header: &StoreHeader) -> Result<(), StoreError> {
        self.write_slot(1, header)?;
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

/// Serializes a checked record into `buf` (exactly one record long), little-endian.
fn encode(l: &RecordLayout, r: &Record<'_>, buf: &mut [u8]) {
    buf.fill(0);
    buf[0..8].copy_from_slice(&r.id.to_le_bytes());
    buf[l.mask_offset..l.mask_offset + l.mask_len].copy_from_slice(r.mask);
    let c0 = l.shares_offset;
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
