//! A party's durable gallery store: the enrolled records it scans, memory-mapped, and appends to.
//!
//! File: two mirrored header slots (`header.rs`), then a meta region of `capacity` fixed-size
//! slots (`id | public mask`) from byte [`RECORDS_OFFSET`], then, page-aligned, the shares region:
//! record `i`'s shares start at `shares_start + i * share_size`, so the shares of all records
//! form one array that a party uses in place from the memory map ([`Store::shamir_words`]).
//! Only the first `count` records (the count of the chosen slot) exist; bytes past them are the
//! remains of an interrupted append and are ignored, then overwritten or cut off by the next
//! append.
//!
//! # Crash safety
//!
//! An append ([`StoreWriter::append`]) runs four steps, each finished by an fsync:
//! 1. cut the file to its committed length, write the new records' meta into the free meta
//!    slots and their shares after the committed shares;
//! 2. fsync: the records are durable before any header points at them;
//! 3. write header slot 1 with the new count, records checksum and `seq + 1`; fsync;
//! 4. write header slot 0 with the same content; fsync.
//!
//! At rest both slots are valid and identical. A crash (or power loss) leaves:
//! - during 1-2: both slots old, an ignored tail -> the old store;
//! - during 3: slot 0 old and valid, slot 1 torn (power loss) or still old -> the old store;
//! - between 3 and 4: slot 1 new, slot 0 old, both valid -> the higher `seq` wins: the new store;
//! - during 4: slot 1 new and valid, slot 0 torn or old -> the new store.
//!
//! A slot is valid only if its BLAKE3 checksum matches, so a torn slot is never mistaken for a
//! commit, and a committed count never covers records that are not durable (step 2 precedes 3).
//! Killing the process cannot tear a 256-byte write within one page; only power loss can, and
//! then one slot is damaged while the other holds the right state. Since the same symptom is what
//! disk damage to a header looks like, a reader refuses a store with one damaged slot and names
//! the intact one; [`repair`] (or the next append) rewrites the mirror from it, losing nothing.
//!
//! An append past the meta capacity first rewrites the whole store with a larger meta region
//! into a temporary file, fsyncs it and renames it over the store (then fsyncs the directory):
//! a crash leaves the old file or the new one, both complete.
//!
//! The records checksum is a sum of per-record hashes ([`RecordsSum`], hashed by the version's
//! [`RecordHash`]), so an append hashes
//! only its new records while [`Store::open`] still checks every byte of every record. Creation
//! writes a temporary file, fsyncs it, links it to the final name (never overwriting) and
//! fsyncs the directory. One writer at a time: [`StoreWriter`] holds an exclusive lock on the file.

pub mod deleted;
mod direct;
mod error;
mod header;
mod words;
mod writer;
pub mod xxh3_wide;

pub use direct::{PageBuf, DIRECT_ALIGN};
pub use error::StoreError;
pub use header::{
    check_store_compatible, schema_difference, schema_text, RecordHash, RecordLayout, RecordsSum,
    StoreExpected, StoreHeader, StoreParams, StoreSharing, FINGERPRINT_MAX, MIN_CAPACITY,
    RECORDS_OFFSET, SHARES_ALIGN, SLOT_LEN, STORE_MAGIC, STORE_VERSION, STORE_VERSION_OLDEST,
};
pub use words::Words;
pub use writer::{create, create_with_capacity, repair, Appender, CanonicalCheck, StoreWriter};

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use error::io_err;
use header::{parse_slot, SlotFault};

/// Records area size above which opening shows a progress bar while checking it.
const PROGRESS_ABOVE: u64 = 64 << 20;

/// The shares of one record, borrowed (zero-copy from the map when read).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Shares<'a> {
    Rep3U16 {
        own: &'a [u16],
        prev: &'a [u16],
    },
    Rep3U32 {
        own: &'a [u32],
        prev: &'a [u32],
    },
    Rep3U64 {
        own: &'a [u64],
        prev: &'a [u64],
    },
    /// One 16-bit Shamir share per code element (GR(2^16, d) or F_p).
    Shamir(&'a [u16]),
}

/// One enrolled record: its id, public mask bits and this party's shares of the code bits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Record<'a> {
    pub id: u64,
    pub mask: &'a [u8],
    pub shares: Shares<'a>,
}

impl<'a> Record<'a> {
    /// Record `i` of a party's share file of a gallery (as dealt, or as a client sent it to a
    /// serving party to enrol), as the store writer takes it.
    pub fn of_share_file(
        file: &'a crate::io::share_file::ShareFile,
        i: usize,
    ) -> Result<Record<'a>, String> {
        use crate::io::share_file::RingVec;
        let h = &file.header;
        let per = h.elements_per_record() as usize;
        let r = i * per..(i + 1) * per;
        let mask_len = if h.mask == crate::vocab::InputMask::Public {
            h.elements as usize / 8
        } else {
            0
        };
        let mask = file
            .masks
            .get(i * mask_len..(i + 1) * mask_len)
            .ok_or_else(|| format!("record {i} has no mask"))?;
        let missing = || format!("record {i} has no shares");
        let shares = match (h.sharing.is_shamir(), &file.own, &file.prev) {
            (true, RingVec::U16(own), _) => Shares::Shamir(own.get(r).ok_or_else(missing)?),
            (false, RingVec::U16(own), RingVec::U16(prev)) => Shares::Rep3U16 {
                own: own.get(r.clone()).ok_or_else(missing)?,
                prev: prev.get(r).ok_or_else(missing)?,
            },
            (false, RingVec::U32(own), RingVec::U32(prev)) => Shares::Rep3U32 {
                own: own.get(r.clone()).ok_or_else(missing)?,
                prev: prev.get(r).ok_or_else(missing)?,
            },
            (false, RingVec::U64(own), RingVec::U64(prev)) => Shares::Rep3U64 {
                own: own.get(r.clone()).ok_or_else(missing)?,
                prev: prev.get(r).ok_or_else(missing)?,
            },
            _ => return Err("the shares have an unexpected word width".into()),
        };
        Ok(Record {
            id: *file.ids.get(i).ok_or_else(missing)?,
            mask,
            shares,
        })
    }
}

// Shares must never reach a log: print only the shape.
impl std::fmt::Debug for Record<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (kind, n) = match self.shares {
            Shares::Rep3U16 { own, .. } => ("rep3 u16", own.len()),
            Shares::Rep3U32 { own, .. } => ("rep3 u32", own.len()),
            Shares::Rep3U64 { own, .. } => ("rep3 u64", own.len()),
            Shares::Shamir(s) => ("shamir u16", s.len()),
        };
        write!(f, "Record(id {}, {kind} x {n})", self.id)
    }
}

impl std::fmt::Debug for Shares<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Shares(..)")
    }
}

/// Whether `path` starts with the store magic (in either header slot), as opposed to a share
/// file or anything else. Errors only when the file cannot be read at all.
pub fn is_store(path: &Path) -> std::io::Result<bool> {
    let mut b = Vec::with_capacity(RECORDS_OFFSET as usize);
    File::open(path)?.take(RECORDS_OFFSET).read_to_end(&mut b)?;
    Ok(b.get(0..8) == Some(&STORE_MAGIC[..])
        || b.get(SLOT_LEN..SLOT_LEN + 8) == Some(&STORE_MAGIC[..]))
}

/// An opened, fully verified store; records are read straight from the memory maps.
pub struct Store {
    path: PathBuf,
    header: StoreHeader,
    layout: RecordLayout,
    /// The committed records' meta slots; `None` for an empty store.
    meta: Option<memmap2::Mmap>,
    /// The committed records' shares (page-aligned); `None` for an empty store.
    shares: Option<Arc<memmap2::Mmap>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("path", &self.path)
            .field("count", &self.header.count)
            .field("record_size", &self.layout.size)
            .finish()
    }
}

/// The slot a store is in, as chosen from its two header slots.
pub(crate) struct Chosen {
    pub header: StoreHeader,
    /// A damaged slot and why, when the other one was taken.
    pub damaged: Option<(usize, String)>,
    /// Whether both slots are valid and identical (nothing to repair).
    pub in_sync: bool,
}

/// Reads both slots from the start of `file` (of length `len`) and picks the committed state.
pub(crate) fn read_slots(path: &Path, file: &mut File, len: u64) -> Result<Chosen, StoreError> {
    let mut bytes = Vec::with_capacity(RECORDS_OFFSET as usize);
    file.take(RECORDS_OFFSET)
        .read_to_end(&mut bytes)
        .map_err(io_err("read", path))?;
    if bytes.len() < 8 || bytes[0..8] != STORE_MAGIC {
        let second_magic = bytes.get(SLOT_LEN..SLOT_LEN + 8) == Some(&STORE_MAGIC[..]);
        if !second_magic {
            return Err(StoreError::NotStore {
                path: path.to_path_buf(),
            });
        }
    }
    if (bytes.len() as u64) < RECORDS_OFFSET {
        return Err(StoreError::Malformed {
            path: path.to_path_buf(),
            detail: format!(
                "the file has {len} bytes but its two header slots need {RECORDS_OFFSET}"
            ),
        });
    }
    let slot = |i: usize| -> [u8; SLOT_LEN] {
        let mut s = [0u8; SLOT_LEN];
        s.copy_from_slice(&bytes[i * SLOT_LEN..(i + 1) * SLOT_LEN]);
        s
    };
    choose(path, parse_slot(&slot(0)), parse_slot(&slot(1)))
}

fn choose(
    path: &Path,
    s0: Result<StoreHeader, SlotFault>,
    s1: Result<StoreHeader, SlotFault>,
) -> Result<Chosen, StoreError> {
    let p = || path.to_path_buf();
    match (s0, s1) {
        (Ok(a), Ok(b)) => {
            if a.params != b.params {
                return Err(StoreError::Malformed {
                    path: p(),
                    detail: "the two header slots disagree on the store's parameters".into(),
                });
            }
            if a.capacity != b.capacity {
                return Err(StoreError::Malformed {
                    path: p(),
                    detail: "the two header slots disagree on the meta capacity".into(),
                });
            }
            if a.seq == b.seq && a != b {
                return Err(StoreError::Malformed {
                    path: p(),
                    detail: format!("both header slots claim commit {} but differ", a.seq),
                });
            }
            let in_sync = a == b;
            let header = if b.seq > a.seq { b } else { a };
            Ok(Chosen {
                header,
                damaged: None,
                in_sync,
            })
        }
        (Ok(h), Err(f)) => Ok(Chosen {
            header: h,
            damaged: Some((1, f.to_string())),
            in_sync: false,
        }),
        (Err(f), Ok(h)) => Ok(Chosen {
            header: h,
            damaged: Some((0, f.to_string())),
            in_sync: false,
        }),
        (Err(f0), Err(f1)) => Err(match (&f0, &f1) {
            (SlotFault::Magic, SlotFault::Magic) => StoreError::NotStore { path: p() },
            (SlotFault::Version(v), _) | (_, SlotFault::Version(v)) => StoreError::Version {
                path: p(),
                found: *v,
                oldest: STORE_VERSION_OLDEST,
                supported: STORE_VERSION,
            },
            _ => StoreError::HeaderCorrupted {
                path: p(),
                first: format!("slot 0: {f0}"),
                second: format!("slot 1: {f1}"),
            },
        }),
    }
}

/// What a read-only look at a store finds (`irisc store info`): the committed header, the state
/// of the two header slots, and the store as [`Store::open`] checks it.
pub struct Inspection {
    /// The committed state (from the newer valid slot).
    pub header: StoreHeader,
    /// A damaged header slot and why.
    pub damaged: Option<(usize, String)>,
    /// Whether both slots are valid and identical.
    pub in_sync: bool,
    /// The store opened and every record checked, or why it cannot be used.
    pub opened: Result<Store, StoreError>,
}

/// Looks at the store at `path` without changing it: reads both header slots, then opens it
/// (checking its length and every record). Errors only when no header slot can be read.
pub fn inspect(path: &Path) -> Result<Inspection, StoreError> {
    let mut file = File::open(path).map_err(io_err("open", path))?;
    let len = file.metadata().map_err(io_err("read", path))?.len();
    let chosen = read_slots(path, &mut file, len)?;
    drop(file);
    Ok(Inspection {
        header: chosen.header,
        damaged: chosen.damaged,
        in_sync: chosen.in_sync,
        opened: Store::open_with(path, false),
    })
}

/// The committed file length, refusing a file too short to hold it.
pub(crate) fn committed_len(
    path: &Path,
    header: &StoreHeader,
    len: u64,
) -> Result<u64, StoreError> {
    let need = header.file_len().map_err(|detail| StoreError::Malformed {
        path: path.to_path_buf(),
        detail,
    })?;
    if len < need {
        return Err(StoreError::Truncated {
            path: path.to_path_buf(),
            count: header.count,
            found: len,
            expected: need,
        });
    }
    Ok(need)
}

/// Maps `len` bytes of `file` from `offset` read-only; `None` when `len` is 0.
fn map_range(
    path: &Path,
    file: &File,
    offset: u64,
    len: u64,
) -> Result<Option<memmap2::Mmap>, StoreError> {
    if len == 0 {
        return Ok(None);
    }
    let len = usize::try_from(len).map_err(|_| StoreError::Invalid {
        path: path.to_path_buf(),
        detail: format!("{len} bytes of records do not fit in this address space"),
    })?;
    // SAFETY: the maps cover only committed records. No irisc writer ever changes them
    // (appends write past them, a capacity change writes a new file and renames it), and the
    // header slots, which a commit rewrites, are outside the maps.
    let map = unsafe {
        memmap2::MmapOptions::new()
            .offset(offset)
            .len(len)
            .map(file)
    }
    .map_err(io_err("map", path))?;
    // The typed slices below rely on 8-byte alignment (page base plus an 8-aligned offset).
    if map.as_ptr().align_offset(8) != 0 {
        return Err(StoreError::Invalid {
            path: path.to_path_buf(),
            detail: "the records map is not 8-byte aligned".into(),
        });
    }
    Ok(Some(map))
}

/// Bytes of records each thread checks at the least when a store is opened.
const VERIFY_BYTES_PER_THREAD: usize = 256 << 20;

impl Store {
    /// Opens the store read-only: checks both header slots, the file's length and every
    /// record against the records checksum, then maps the committed records. Shows a progress
    /// bar on stderr while checking a large store (when stderr is a terminal).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_with(path, true)
    }

    /// As [`Store::open`]; `progress` false never shows a bar.
    pub fn open_with(path: &Path, progress: bool) -> Result<Store, StoreError> {
        Store::open_checked(path, progress, VERIFY_BYTES_PER_THREAD)
    }

    /// As [`Store::open_with`], the records checked in parts of at least `per_thread` bytes.
    fn open_checked(path: &Path, progress: bool, per_thread: usize) -> Result<Store, StoreError> {
        let store = Store::map_committed(path)?;
        store.verify_split(progress, per_thread)?;
        Ok(store)
    }

    /// The store again after this process's own appends to it, checking only what is new: the
    /// records past the first `known_count`, whose checksum `known_sum` was checked when this
    /// process opened the store (or computed when it appended them). The records checksum is
    /// an order-free sum, so the new records' sum added to `known_sum` must give the committed
    /// one. `None` when that is not so, or the store holds fewer records (a reconciliation cut
    /// its tail): then open it with [`Store::open_with`], which checks every record.
    ///
    /// Sound because an append never writes inside the committed records (see the module's
    /// crash-safety steps): the first `known_count` records are the bytes already checked. A
    /// serving party adds a few records to a gallery of millions; a full check would make each
    /// enrolment cost as much as a restart.
    pub fn open_extending(
        path: &Path,
        known_count: u64,
        known_sum: &RecordsSum,
    ) -> Result<Option<Store>, StoreError> {
        let store = Store::map_committed(path)?;
        if store.header.count < known_count {
            return Ok(None);
        }
        let mut sum = *known_sum;
        sum.add_sum(&store.sum_of(known_count as usize..store.len()));
        Ok((sum == store.header.records_sum).then_some(store))
    }

    /// The records checksum of the records `range` (each hashed by the store's version's
    /// [`RecordHash`] with its index).
    fn sum_of(&self, range: std::ops::Range<usize>) -> RecordsSum {
        let (meta, shares) = (self.meta_bytes(), self.shares_bytes());
        let hash = RecordHash::of_version(self.header.version);
        let (m, s) = (self.layout.meta_size, self.layout.share_size);
        let mut sum = RecordsSum::default();
        for i in range {
            sum.add_record(
                hash,
                i as u64,
                &meta[i * m..(i + 1) * m],
                &shares[i * s..(i + 1) * s],
            );
        }
        sum
    }

    /// The committed records mapped, the header slots and lengths checked, the records not.
    fn map_committed(path: &Path) -> Result<Store, StoreError> {
        if cfg!(target_endian = "big") {
            return Err(StoreError::Invalid {
                path: path.to_path_buf(),
                detail:
                    "records are mapped in place and are little-endian: this machine is big-endian"
                        .into(),
            });
        }
        let mut file = File::open(path).map_err(io_err("open", path))?;
        let meta = file.metadata().map_err(io_err("read", path))?;
        crate::io::owner_only::check(path, &meta, "one party's gallery shares")
            .map_err(StoreError::Exposed)?;
        let len = meta.len();
        let chosen = read_slots(path, &mut file, len)?;
        if let Some((slot, detail)) = chosen.damaged {
            return Err(StoreError::HeaderSlotDamaged {
                path: path.to_path_buf(),
                slot,
                other: 1 - slot,
                detail,
                count: chosen.header.count,
            });
        }
        let header = chosen.header;
        let layout = header
            .params
            .layout()
            .map_err(|detail| StoreError::Malformed {
                path: path.to_path_buf(),
                detail,
            })?;
        committed_len(path, &header, len)?;
        let malformed = || StoreError::Malformed {
            path: path.to_path_buf(),
            detail: "the record count overflows".into(),
        };
        let meta_len = (layout.meta_size as u64)
            .checked_mul(header.count)
            .ok_or_else(malformed)?;
        let shares_start = layout.shares_start(header.capacity).ok_or_else(malformed)?;
        let shares_len = (layout.share_size as u64)
            .checked_mul(header.count)
            .ok_or_else(malformed)?;
        let meta = map_range(path, &file, RECORDS_OFFSET, meta_len)?;
        let shares = map_range(path, &file, shares_start, shares_len)?.map(Arc::new);
        Ok(Store {
            path: path.to_path_buf(),
            header,
            layout,
            meta,
            shares,
        })
    }

    /// Checks every record against the records checksum, the records split among the
    /// machine's cores in parts of at least `per_thread` bytes: the sum is order-free
    /// ([`RecordsSum::add_sum`]), so the parts' sums add up to the whole store's. A party
    /// restarting with a large gallery waits for this before it serves.
    fn verify_split(&self, progress: bool, per_thread: usize) -> Result<(), StoreError> {
        let (meta, shares) = (self.meta_bytes(), self.shares_bytes());
        let total = (meta.len() + shares.len()) as u64;
        let bar = (progress && total > PROGRESS_ABOVE).then(|| {
            let bar = indicatif::ProgressBar::new(total);
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "checking {msg} {bar:40} {bytes}/{total_bytes} ({eta})",
            ) {
                bar.set_style(style);
            }
            bar.set_message(self.path.display().to_string());
            bar
        });
        let hash = RecordHash::of_version(self.header.version);
        let (meta_size, share_size) = (self.layout.meta_size, self.layout.share_size);
        let count = self.len();
        // The records `range`'s sum, the bar moved every 4 MiB.
        let part = |range: std::ops::Range<usize>| -> RecordsSum {
            let mut sum = RecordsSum::default();
            let mut since = 0usize;
            for i in range {
                let m = &meta[i * meta_size..(i + 1) * meta_size];
                let s = &shares[i * share_size..(i + 1) * share_size];
                sum.add_record(hash, i as u64, m, s);
                since += m.len() + s.len();
                if since >= 1 << 22 {
                    if let Some(bar) = &bar {
                        bar.inc(since as u64);
                    }
                    since = 0;
                }
            }
            sum
        };
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let parts = cores
            .min(total as usize / per_thread.max(1))
            .clamp(1, count.max(1));
        let sum = if parts == 1 {
            part(0..count)
        } else {
            let sums: Vec<RecordsSum> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..parts)
                    .map(|k| {
                        let range = count * k / parts..count * (k + 1) / parts;
                        let part = &part;
                        s.spawn(move || part(range))
                    })
                    .collect();
                handles
                    .into_iter()
                    // A part that panicked counts as a mismatch: the store is refused.
                    .map(|h| h.join().unwrap_or(RecordsSum([0xFF; 32])))
                    .collect()
            });
            let mut sum = RecordsSum::default();
            for p in &sums {
                sum.add_sum(p);
            }
            sum
        };
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        if sum != self.header.records_sum {
            return Err(StoreError::RecordsCorrupted {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn header(&self) -> &StoreHeader {
        &self.header
    }

    pub fn layout(&self) -> &RecordLayout {
        &self.layout
    }

    /// Committed records.
    pub fn len(&self) -> usize {
        self.header.count as usize
    }

    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The committed records' meta slots, `len() * layout().meta_size` bytes, 8-byte aligned.
    pub fn meta_bytes(&self) -> &[u8] {
        self.meta.as_deref().unwrap_or(&[])
    }

    /// The committed records' shares, `len() * layout().share_size` bytes, page-aligned.
    pub fn shares_bytes(&self) -> &[u8] {
        self.shares.as_deref().map_or(&[], |m| &m[..])
    }

    /// The Shamir shares of every record as one array of `len() * layout().elements` words,
    /// zero-copy: the result keeps the map alive. `None` for a rep3 store.
    pub fn shamir_words(&self) -> Option<Words> {
        if self.header.params.sharing == StoreSharing::Rep3 {
            return None;
        }
        // Shamir records are `elements` u16 words with no padding (code_bits is a multiple
        // of 64), so record after record they form one array.
        debug_assert_eq!(self.layout.share_size, 2 * self.layout.elements);
        Some(match &self.shares {
            Some(map) => Words::mapped(map.clone(), 0, self.len() * self.layout.elements)
                .unwrap_or_else(|| Words::from(Vec::new())),
            None => Words::from(Vec::new()),
        })
    }

    /// Record `i`, zero-copy, or `None` past the end.
    pub fn record(&self, i: usize) -> Option<Record<'_>> {
        if i >= self.len() {
            return None;
        }
        let (m, s) = (self.layout.meta_size, self.layout.share_size);
        let meta = self.meta_bytes().get(i * m..(i + 1) * m)?;
        let shares = self.shares_bytes().get(i * s..(i + 1) * s)?;
        Some(view(&self.layout, self.header.params.sharing, meta, shares))
    }

    /// All committed records in order, zero-copy.
    pub fn records(&self) -> impl ExactSizeIterator<Item = Record<'_>> + '_ {
        (0..self.len()).map(move |i| {
            let (m, s) = (self.layout.meta_size, self.layout.share_size);
            view(
                &self.layout,
                self.header.params.sharing,
                &self.meta_bytes()[i * m..(i + 1) * m],
                &self.shares_bytes()[i * s..(i + 1) * s],
            )
        })
    }

    /// The ids of all committed records, in order.
    pub fn ids(&self) -> Vec<u64> {
        self.meta_bytes()
            .chunks_exact(self.layout.meta_size)
            .map(|m| u64::from_le_bytes(m[0..8].try_into().unwrap_or([0; 8])))
            .collect()
    }

    /// Checks that this store is the one the program expects.
    pub fn check_compatible(&self, expected: &StoreExpected) -> Result<(), StoreError> {
        check_store_compatible(&self.path, &self.header, expected)
    }
}

/// Typed views into one record's two parts. Both are 8-byte aligned (checked at open) and
/// every offset in the layout is a multiple of 8, so the casts cannot fail.
fn view<'a>(
    layout: &RecordLayout,
    sharing: StoreSharing,
    meta: &'a [u8],
    bytes: &'a [u8],
) -> Record<'a> {
    let id = u64::from_le_bytes(meta[0..8].try_into().unwrap_or([0; 8]));
    let mask = &meta[layout.mask_offset..layout.mask_offset + layout.mask_len];
    let c0 = 0;
    let c1 = c0 + layout.component_stride;
    let own = &bytes[c0..c0 + layout.component_len];
    let shares = match (sharing, layout.element_bytes) {
        (StoreSharing::Rep3, w) => {
            let prev = &bytes[c1..c1 + layout.component_len];
            match w {
                2 => Shares::Rep3U16 {
                    own: bytemuck::cast_slice(own),
                    prev: bytemuck::cast_slice(prev),
                },
                4 => Shares::Rep3U32 {
                    own: bytemuck::cast_slice(own),
                    prev: bytemuck::cast_slice(prev),
                },
                _ => Shares::Rep3U64 {
                    own: bytemuck::cast_slice(own),
                    prev: bytemuck::cast_slice(prev),
                },
            }
        }
        _ => Shares::Shamir(bytemuck::cast_slice(own)),
    };
    Record { id, mask, shares }
}

#[cfg(test)]
mod tests;
