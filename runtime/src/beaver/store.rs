//! The preprocessing store: one file per party holding the triples and masks of a number of
//! executions of one circuit, each consumed exactly once.
//!
//! Layout (little-endian):
//! ```text
//! magic "IRSPRE02" | party u32 | parties u32 | lanes u64 | method u8 | pad [u8; 7]
//! | fingerprint [u8; 32] (the circuit's) | batch [u8; 16] (agreed by the parties)
//! | executions u32 | conditionals u32 | triples u64 | rows u64 x conditionals
//! | header checksum [u8; 32] (blake3 of everything above)
//! | used u32 (executions consumed; the one field written after creation)
//! | per execution: triples a, b, c, then per conditional s, M^0, M^1 (u64 words),
//!   then its checksum [u8; 32] (blake3 of the header checksum, its index and its words)
//! ```
//! The store is written execution by execution as the preprocessing makes them
//! ([`StoreWriter`]: one execution in memory, not the whole batch), and an execution is read
//! alone when it is taken: a store for many queries costs a query one execution's I/O. An
//! execution is marked used, durably, before its material is handed out; a store whose
//! executions are all used, of another circuit, of another party, truncated or damaged is
//! refused with a message that says which (a damaged execution when it is reached).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::mask_gen::MaskGenMethod;
use super::material::{words_for, Masks, Material, Triples};

const MAGIC: &[u8; 8] = b"IRSPRE02";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {detail}")]
    Io { path: PathBuf, detail: String },
    #[error("{path} is not an irisc preprocessing store ({detail})")]
    Foreign { path: PathBuf, detail: String },
    #[error("{path}: {detail}")]
    Refused { path: PathBuf, detail: String },
    /// Other users can access the file ([`crate::io::owner_only`]).
    #[error("{0}")]
    Exposed(String),
}

/// What a store is for: checked against the run before anything is consumed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreHeader {
    pub party: u32,
    pub parties: u32,
    pub lanes: u64,
    pub method: MaskGenMethod,
    pub fingerprint: [u8; 32],
    pub batch: [u8; 16],
    pub executions: u32,
    pub triples: u64,
    /// Mask rows per conditional.
    pub rows: Vec<u64>,
}

impl StoreHeader {
    fn words(&self) -> usize {
        words_for(self.lanes as usize)
    }

    /// Words of one execution's material.
    pub fn execution_words(&self) -> u64 {
        let w = self.words() as u64;
        3 * self.triples * w + self.rows.iter().map(|r| (1 + 2 * r) * w).sum::<u64>()
    }

    /// Bytes of one execution in the file: its words and its checksum.
    fn execution_bytes(&self) -> u64 {
        self.execution_words().saturating_mul(8).saturating_add(32)
    }

    fn encode(&self) -> Vec<u8> {
        let mut h = Vec::new();
        h.extend_from_slice(MAGIC);
        h.extend_from_slice(&self.party.to_le_bytes());
        h.extend_from_slice(&self.parties.to_le_bytes());
        h.extend_from_slice(&self.lanes.to_le_bytes());
        h.push(
            MaskGenMethod::ALL
                .iter()
                .position(|m| *m == self.method)
                .expect("listed") as u8,
        );
        h.extend_from_slice(&[0u8; 7]);
        h.extend_from_slice(&self.fingerprint);
        h.extend_from_slice(&self.batch);
        h.extend_from_slice(&self.executions.to_le_bytes());
        h.extend_from_slice(&(self.rows.len() as u32).to_le_bytes());
        h.extend_from_slice(&self.triples.to_le_bytes());
        for r in &self.rows {
            h.extend_from_slice(&r.to_le_bytes());
        }
        h
    }
}

/// Bytes before the variable-length rows.
const FIXED: usize = 8 + 4 + 4 + 8 + 8 + 32 + 16 + 4 + 4 + 8;

/// Writes a store for `executions` (one [`Material`] each), readable by its owner only.
pub fn write(path: &Path, header: &StoreHeader, executions: &[Material]) -> Result<(), StoreError> {
    let mut w = StoreWriter::create(path, header)?;
    for m in executions {
        w.append(m)?;
    }
    w.finish()
}

/// A store being written, one execution at a time, into `PATH.partial` (owner-only), renamed to
/// `PATH` by [`StoreWriter::finish`] once every execution is durable: a store is never seen
/// half-written.
pub struct StoreWriter {
    path: PathBuf,
    tmp: PathBuf,
    file: std::io::BufWriter<File>,
    header_sum: [u8; 32],
    header: StoreHeader,
    written: u32,
}

impl StoreWriter {
    pub fn create(path: &Path, header: &StoreHeader) -> Result<StoreWriter, StoreError> {
        let tmp = path.with_extension("partial");
        let io = |e: std::io::Error| StoreError::Io {
            path: tmp.clone(),
            detail: e.to_string(),
        };
        let mut opts = OpenOptions::new();
        opts.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        let mut file = std::io::BufWriter::new(opts.open(&tmp).map_err(io)?);
        let head = header.encode();
        let header_sum = header_checksum(&head);
        file.write_all(&head).map_err(io)?;
        file.write_all(&header_sum).map_err(io)?;
        file.write_all(&0u32.to_le_bytes()).map_err(io)?;
        Ok(StoreWriter {
            path: path.to_path_buf(),
            tmp,
            file,
            header_sum,
            header: header.clone(),
            written: 0,
        })
    }

    /// Appends the next execution (its words, then its checksum).
    pub fn append(&mut self, m: &Material) -> Result<(), StoreError> {
        assert!(
            self.written < self.header.executions,
            "more executions than the header says"
        );
        let mut bytes = Vec::with_capacity(self.header.execution_words() as usize * 8);
        for v in [&m.triples.a, &m.triples.b, &m.triples.c] {
            bytes.extend(v.iter().flat_map(|w| w.to_le_bytes()));
        }
        for k in &m.masks {
            for v in [&k.s, &k.m0, &k.m1] {
                bytes.extend(v.iter().flat_map(|w| w.to_le_bytes()));
            }
        }
        assert_eq!(
            bytes.len() as u64,
            self.header.execution_words() * 8,
            "material of the header's shape"
        );
        let sum = execution_checksum(&self.header_sum, self.written, &bytes);
        let io = |e: std::io::Error| StoreError::Io {
            path: self.tmp.clone(),
            detail: e.to_string(),
        };
        self.file.write_all(&bytes).map_err(io)?;
        self.file.write_all(&sum).map_err(io)?;
        self.written += 1;
        Ok(())
    }

    /// Syncs the file and gives it its name.
    pub fn finish(self) -> Result<(), StoreError> {
        assert_eq!(
            self.written, self.header.executions,
            "one material per execution"
        );
        let io = |e: std::io::Error| StoreError::Io {
            path: self.tmp.clone(),
            detail: e.to_string(),
        };
        let file = self.file.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        drop(file);
        std::fs::rename(&self.tmp, &self.path).map_err(io)?;
        Ok(())
    }
}

fn header_checksum(head: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"irisc preprocessing store header");
    h.update(head);
    *h.finalize().as_bytes()
}

fn execution_checksum(header_sum: &[u8; 32], index: u32, bytes: &[u8]) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    h.update(b"irisc preprocessing store execution");
    h.update(header_sum);
    h.update(&index.to_le_bytes());
    h.update(bytes);
    *h.finalize().as_bytes()
}

/// What the run expects of the store.
#[derive(Debug, Clone, Copy)]
pub struct Expect<'a> {
    pub party: u32,
    pub parties: u32,
    pub fingerprint: &'a [u8; 32],
    pub lanes: u64,
    pub triples: u64,
    pub rows: &'a [u64],
}

/// One execution taken from a store: its index (the parties compare it with the batch id
/// before computing) and its material.
#[derive(Debug)]
pub struct Taken {
    pub batch: [u8; 16],
    pub execution: u32,
    pub method: MaskGenMethod,
    pub material: Material,
}

/// Reads the header only (for `irisc explain`-like reports and checks).
pub fn read_header(path: &Path) -> Result<(StoreHeader, u32), StoreError> {
    let mut f = File::open(path).map_err(|e| StoreError::Io {
        path: path.to_path_buf(),
        detail: format!("cannot open the preprocessing store: {e}"),
    })?;
    let (header, used, _) = header_of(&mut f, path)?;
    Ok((header, used))
}

fn header_of(f: &mut File, path: &Path) -> Result<(StoreHeader, u32, u64), StoreError> {
    let io = |detail: String| StoreError::Io {
        path: path.to_path_buf(),
        detail,
    };
    let meta = f.metadata().map_err(|e| io(e.to_string()))?;
    crate::io::owner_only::check(path, &meta, "one party's preprocessing (masked triples)")
        .map_err(StoreError::Exposed)?;
    let foreign = |detail: String| StoreError::Foreign {
        path: path.to_path_buf(),
        detail,
    };
    let mut fixed = [0u8; FIXED];
    f.read_exact(&mut fixed)
        .map_err(|_| foreign("shorter than a header".into()))?;
    if &fixed[..8] != MAGIC {
        return Err(foreign("wrong magic bytes".into()));
    }
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().expect("4"));
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().expect("8"));
    let method = *MaskGenMethod::ALL
        .get(fixed[24] as usize)
        .ok_or_else(|| foreign(format!("unknown MaskGen method {}", fixed[24])))?;
    let conds = u32_at(&fixed, 84) as usize;
    let len = f.metadata().map_err(|e| foreign(e.to_string()))?.len();
    if conds as u64 * 8 > len {
        return Err(foreign(format!("header claims {conds} conditionals")));
    }
    let mut rows_bytes = vec![0u8; conds * 8];
    f.read_exact(&mut rows_bytes)
        .map_err(|_| foreign("truncated in the header".into()))?;
    let header = StoreHeader {
        party: u32_at(&fixed, 8),
        parties: u32_at(&fixed, 12),
        lanes: u64_at(&fixed, 16),
        method,
        fingerprint: fixed[32..64].try_into().expect("32"),
        batch: fixed[64..80].try_into().expect("16"),
        executions: u32_at(&fixed, 80),
        triples: u64_at(&fixed, 88),
        rows: rows_bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect(),
    };
    let mut tail = [0u8; 36];
    f.read_exact(&mut tail)
        .map_err(|_| foreign("truncated after the header".into()))?;
    let mut head = fixed.to_vec();
    head.extend_from_slice(&rows_bytes);
    if header_checksum(&head) != tail[..32] {
        return Err(StoreError::Refused {
            path: path.to_path_buf(),
            detail: "its header checksum does not match: the file was damaged".into(),
        });
    }
    let used = u32_at(&tail, 32);
    let body_at = (FIXED + conds * 8 + 36) as u64;
    let want = body_at.saturating_add(
        header
            .execution_bytes()
            .saturating_mul(u64::from(header.executions)),
    );
    if len != want {
        return Err(StoreError::Refused {
            path: path.to_path_buf(),
            detail: format!(
                "the store is {len} bytes, its header describes {want}: it was truncated or damaged"
            ),
        });
    }
    Ok((header, used, body_at))
}

/// Checks, without consuming anything, that the store at `path` fits `expect` and still holds
/// `executions` unused executions: what a compiled program checks before its first query.
pub fn check_available(
    path: &Path,
    expect: Expect<'_>,
    executions: u32,
) -> Result<StoreHeader, StoreError> {
    let mut f = File::open(path).map_err(|e| StoreError::Io {
        path: path.to_path_buf(),
        detail: format!("cannot open the preprocessing store: {e}"),
    })?;
    let (h, used, _) = header_of(&mut f, path)?;
    check(&h, used, &expect, executions).map_err(|detail| StoreError::Refused {
        path: path.to_path_buf(),
        detail,
    })?;
    Ok(h)
}

/// Why a store with header `h` (`used` executions consumed) cannot give `executions` more
/// executions to the run `expect` describes.
fn check(h: &StoreHeader, used: u32, expect: &Expect<'_>, executions: u32) -> Result<(), String> {
    if h.fingerprint != *expect.fingerprint {
        return Err(
            "it was made for another circuit (fingerprints differ): rerun the preprocessing for this program".into(),
        );
    }
    if h.party != expect.party || h.parties != expect.parties {
        return Err(format!(
            "it belongs to party {} of {}, this is party {} of {}",
            h.party, h.parties, expect.party, expect.parties
        ));
    }
    if h.lanes != expect.lanes {
        return Err(format!(
            "it was made for {} lanes, the run has {}",
            h.lanes, expect.lanes
        ));
    }
    if h.triples < expect.triples || h.rows != expect.rows {
        return Err(format!(
            "too little material: {} triples and {} mask strings per execution, the circuit needs {} and {}",
            h.triples,
            h.rows.len(),
            expect.triples,
            expect.rows.len()
        ));
    }
    if used >= h.executions {
        return Err(format!(
            "all {} of its executions were used; preprocessing is never reused, run the preprocessing again",
            h.executions
        ));
    }
    let left = h.executions - used;
    if left < executions {
        return Err(format!(
            "{left} unused executions of {} left, the run needs {executions}: run the preprocessing for at least {executions} executions",
            h.executions
        ));
    }
    Ok(())
}

/// Takes the next unused execution: checks the store against `expect`, verifies its checksum,
/// marks the execution used (durably) and returns its material.
pub fn take(path: &Path, expect: Expect<'_>) -> Result<Taken, StoreError> {
    let refused = |detail: String| StoreError::Refused {
        path: path.to_path_buf(),
        detail,
    };
    let io = |e: std::io::Error| StoreError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    };
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| StoreError::Io {
            path: path.to_path_buf(),
            detail: format!("cannot open the preprocessing store: {e}"),
        })?;
    let (h, used, body_at) = header_of(&mut f, path)?;
    check(&h, used, &expect, 1).map_err(refused)?;
    // Only this execution is read, and checked before it is marked used.
    let head_len = FIXED + h.rows.len() * 8;
    let mut header_sum = [0u8; 32];
    f.seek(SeekFrom::Start(head_len as u64)).map_err(io)?;
    f.read_exact(&mut header_sum).map_err(io)?;
    let per = h.execution_words() as usize * 8;
    let mut bytes = vec![0u8; per + 32];
    f.seek(SeekFrom::Start(
        body_at + u64::from(used) * h.execution_bytes(),
    ))
    .map_err(io)?;
    f.read_exact(&mut bytes).map_err(io)?;
    let (body, stored) = bytes.split_at(per);
    if execution_checksum(&header_sum, used, body) != stored {
        return Err(refused(format!(
            "the checksum of execution {used} does not match: the file was damaged"
        )));
    }
    // Mark the execution used before anyone computes with it.
    f.seek(SeekFrom::Start(head_len as u64 + 32)).map_err(io)?;
    f.write_all(&(used + 1).to_le_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    let mut words = body
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8")));
    let w = h.words();
    let mut take_n = |n: usize| -> Vec<u64> { words.by_ref().take(n).collect() };
    let t = h.triples as usize * w;
    let triples = Triples {
        count: h.triples,
        words: w,
        a: take_n(t),
        b: take_n(t),
        c: take_n(t),
    };
    let masks = h
        .rows
        .iter()
        .map(|&r| Masks {
            rows: r,
            s: take_n(w),
            m0: take_n(r as usize * w),
            m1: take_n(r as usize * w),
        })
        .collect();
    Ok(Taken {
        batch: h.batch,
        execution: used,
        method: h.method,
        material: Material {
            lanes: h.lanes as usize,
            triples,
            masks,
        },
    })
}
