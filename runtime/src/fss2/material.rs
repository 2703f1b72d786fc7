//! The dealer's files for the `fss2` family, each readable by its owner only:
//!
//! - a **gallery share** per server (`IRSFSG01`): the enrolled templates' `delta_y` and the
//!   server's share of `r_y`;
//! - the **dealer secret** (`IRSFSD01`), kept by the dealer to correlate later preprocessing
//!   with the gallery;
//! - a **material store** per server per batch (`IRSFSM01`): the CS.Setup output of a number of
//!   authentications, each consumed exactly once.
//!
//! Material store layout (little-endian):
//! ```text
//! magic "IRSFSM01" | server u32 | authentications u32 | variant u32 (0: semi-honest, else the
//! malicious variant's m) | dim u64 | records u64 | bytes per authentication u64
//! | gallery id [16] | plan fingerprint [32] | batch [16]
//! | header checksum [32] (blake3 of everything above)
//! | used u32 (authentications consumed; the one field written after creation)
//! | per authentication: its material, then its checksum [32]
//!   (blake3 of the header checksum, its index and its bytes)
//! ```
//! An authentication is marked used, durably, before its material is handed out. A store of
//! another server, program or gallery, exhausted, truncated or damaged is refused with a message
//! that says which, before the server connects to anyone.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::dealer::{AuthMaterial, DealerSecret, GalleryShare};

const STORE_MAGIC: &[u8; 8] = b"IRSFSM01";
const GALLERY_MAGIC: &[u8; 8] = b"IRSFSG01";
const SECRET_MAGIC: &[u8; 8] = b"IRSFSD01";
const HEAD: usize = 8 + 4 + 4 + 4 + 8 + 8 + 8 + 16 + 32 + 16;

#[derive(Debug, thiserror::Error)]
pub enum MaterialError {
    #[error("{path}: {detail}")]
    Io { path: PathBuf, detail: String },
    #[error("{path} is not an irisc {what} ({detail})")]
    Foreign {
        path: PathBuf,
        what: &'static str,
        detail: String,
    },
    #[error("{path}: {detail}")]
    Refused { path: PathBuf, detail: String },
    /// Other users can access the file ([`crate::io::owner_only`]).
    #[error("{0}")]
    Exposed(String),
}

fn io_err(path: &Path) -> impl Fn(std::io::Error) -> MaterialError + '_ {
    move |e| MaterialError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    }
}

/// Writes `bytes` to `path` through `path.partial`, readable by its owner only.
pub(crate) fn write_private(path: &Path, parts: &[&[u8]]) -> Result<(), MaterialError> {
    let tmp = path.with_extension("partial");
    let mut o = OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
    let mut f = std::io::BufWriter::new(o.open(&tmp).map_err(io_err(&tmp))?);
    for p in parts {
        f.write_all(p).map_err(io_err(&tmp))?;
    }
    let f = f.into_inner().map_err(|e| io_err(&tmp)(e.into_error()))?;
    f.sync_all().map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

pub(crate) fn checksum(context: &str, parts: &[&[u8]]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(context);
    for p in parts {
        h.update(p);
    }
    *h.finalize().as_bytes()
}

fn words(v: &[u64]) -> Vec<u8> {
    v.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4"))
}

/// Writes one server's gallery share.
pub fn write_gallery(path: &Path, g: &GalleryShare) -> Result<(), MaterialError> {
    let mut head = Vec::new();
    head.extend_from_slice(GALLERY_MAGIC);
    head.extend_from_slice(&(g.server as u32).to_le_bytes());
    head.extend_from_slice(&(g.dim as u64).to_le_bytes());
    head.extend_from_slice(&(g.records as u64).to_le_bytes());
    head.extend_from_slice(&g.gallery_id);
    let (ids, d, m) = (words(&g.ids), words(&g.delta), words(&g.mask));
    let sum = checksum("irisc 2026 fss2 gallery share", &[&head, &ids, &d, &m]);
    write_private(path, &[&head, &sum, &ids, &d, &m])
}

/// Reads server `server`'s gallery share.
pub fn read_gallery(path: &Path, server: usize) -> Result<GalleryShare, MaterialError> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let foreign = |detail: &str| MaterialError::Foreign {
        path: path.to_path_buf(),
        what: "fss2 gallery share",
        detail: detail.to_string(),
    };
    let head = 8 + 4 + 8 + 8 + 16;
    if bytes.len() < head + 32 || &bytes[..8] != GALLERY_MAGIC {
        return Err(foreign("its first bytes are not those of one"));
    }
    let (s, dim, records) = (
        u32_at(&bytes, 8) as usize,
        u64_at(&bytes, 12),
        u64_at(&bytes, 20),
    );
    let body = (records as u128) * 8 + (dim as u128) * (records as u128) * 16;
    if body != (bytes.len() - head - 32) as u128 {
        return Err(foreign("it is truncated or has bytes after its end"));
    }
    let (h, rest) = bytes.split_at(head);
    let (sum, body) = rest.split_at(32);
    let (ids, body) = body.split_at(records as usize * 8);
    let (d, m) = body.split_at(body.len() / 2);
    if checksum("irisc 2026 fss2 gallery share", &[h, ids, d, m]) != sum {
        return Err(foreign("its checksum does not match: the file was damaged"));
    }
    if s != server {
        return Err(MaterialError::Refused {
            path: path.to_path_buf(),
            detail: format!("this is server {s}'s gallery share, not server {server}'s"),
        });
    }
    let to_words = |b: &[u8]| {
        b.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect()
    };
    Ok(GalleryShare {
        server: s,
        gallery_id: bytes[28..44].try_into().expect("16"),
        dim: dim as usize,
        records: records as usize,
        ids: to_words(ids),
        delta: to_words(d),
        mask: to_words(m),
    })
}

/// Writes the dealer's secret.
pub fn write_secret(path: &Path, s: &DealerSecret) -> Result<(), MaterialError> {
    let body = s.encode();
    let sum = checksum("irisc 2026 fss2 dealer secret", &[&body]);
    write_private(path, &[SECRET_MAGIC, &body, &sum])
}

pub fn read_secret(path: &Path) -> Result<DealerSecret, MaterialError> {
    let bytes = std::fs::read(path).map_err(io_err(path))?;
    let foreign = |detail: &str| MaterialError::Foreign {
        path: path.to_path_buf(),
        what: "fss2 dealer secret",
        detail: detail.to_string(),
    };
    if bytes.len() != 8 + DealerSecret::ENCODED_BYTES + 32 || &bytes[..8] != SECRET_MAGIC {
        return Err(foreign("its size or first bytes are not those of one"));
    }
    let body = &bytes[8..8 + DealerSecret::ENCODED_BYTES];
    if checksum("irisc 2026 fss2 dealer secret", &[body])
        != bytes[8 + DealerSecret::ENCODED_BYTES..]
    {
        return Err(foreign("its checksum does not match: the file was damaged"));
    }
    DealerSecret::decode(body).ok_or_else(|| foreign("its sizes do not fit this machine"))
}

/// What a material store is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreHeader {
    /// 0 and 1 the servers, 2 the client's (the malicious variant's `psi`).
    pub server: u32,
    pub authentications: u32,
    /// 0: semi-honest; else the malicious variant's `m`.
    pub variant: u32,
    pub dim: u64,
    pub records: u64,
    pub auth_bytes: u64,
    pub gallery_id: [u8; 16],
    pub plan: [u8; 32],
    pub batch: [u8; 16],
}

impl StoreHeader {
    fn encode(&self) -> Vec<u8> {
        let mut h = Vec::with_capacity(HEAD);
        h.extend_from_slice(STORE_MAGIC);
        h.extend_from_slice(&self.server.to_le_bytes());
        h.extend_from_slice(&self.authentications.to_le_bytes());
        h.extend_from_slice(&self.variant.to_le_bytes());
        h.extend_from_slice(&self.dim.to_le_bytes());
        h.extend_from_slice(&self.records.to_le_bytes());
        h.extend_from_slice(&self.auth_bytes.to_le_bytes());
        h.extend_from_slice(&self.gallery_id);
        h.extend_from_slice(&self.plan);
        h.extend_from_slice(&self.batch);
        h
    }

    fn auth_bytes(&self) -> u64 {
        self.auth_bytes
    }
}

/// A material store being written, one authentication at a time (memory holds one).
pub struct StoreWriter {
    path: PathBuf,
    tmp: PathBuf,
    file: std::io::BufWriter<File>,
    header_sum: [u8; 32],
    header: StoreHeader,
    written: u32,
}

impl StoreWriter {
    pub fn create(path: &Path, header: &StoreHeader) -> Result<StoreWriter, MaterialError> {
        let tmp = path.with_extension("partial");
        let mut o = OpenOptions::new();
        o.write(true).create(true).truncate(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
        let mut file = std::io::BufWriter::new(o.open(&tmp).map_err(io_err(&tmp))?);
        let head = header.encode();
        let header_sum = checksum("irisc 2026 fss2 material header", &[&head]);
        file.write_all(&head).map_err(io_err(&tmp))?;
        file.write_all(&header_sum).map_err(io_err(&tmp))?;
        file.write_all(&0u32.to_le_bytes()).map_err(io_err(&tmp))?;
        Ok(StoreWriter {
            path: path.to_path_buf(),
            tmp,
            file,
            header_sum,
            header: header.clone(),
            written: 0,
        })
    }

    pub fn append(&mut self, m: &AuthMaterial) -> Result<(), MaterialError> {
        assert_eq!(m.server as u32, self.header.server);
        self.append_bytes(&m.encode())
    }

    /// Appends one authentication's encoded material.
    pub fn append_bytes(&mut self, bytes: &[u8]) -> Result<(), MaterialError> {
        assert!(
            self.written < self.header.authentications,
            "more authentications than announced"
        );
        assert_eq!(bytes.len() as u64, self.header.auth_bytes());
        let sum = checksum(
            "irisc 2026 fss2 material authentication",
            &[&self.header_sum, &self.written.to_le_bytes(), bytes],
        );
        self.file.write_all(bytes).map_err(io_err(&self.tmp))?;
        self.file.write_all(&sum).map_err(io_err(&self.tmp))?;
        self.written += 1;
        Ok(())
    }

    pub fn finish(self) -> Result<(), MaterialError> {
        assert_eq!(
            self.written, self.header.authentications,
            "fewer authentications than announced"
        );
        let f = self
            .file
            .into_inner()
            .map_err(|e| io_err(&self.tmp)(e.into_error()))?;
        f.sync_all().map_err(io_err(&self.tmp))?;
        std::fs::rename(&self.tmp, &self.path).map_err(io_err(&self.path))
    }
}

/// What the server expects of its store.
#[derive(Debug, Clone, Copy)]
pub struct Expect<'a> {
    pub server: u32,
    pub variant: u32,
    pub plan: &'a [u8; 32],
    pub gallery_id: &'a [u8; 16],
    pub dim: u64,
    pub records: u64,
}

/// One authentication taken from a store.
#[derive(Debug)]
pub struct Taken {
    pub batch: [u8; 16],
    pub index: u32,
    pub material: AuthMaterial,
}

/// One authentication's bytes taken from a store (the caller decodes them for its variant).
pub struct TakenBytes {
    pub batch: [u8; 16],
    pub index: u32,
    pub server: u32,
    pub bytes: Vec<u8>,
}

fn read_header(f: &mut File, path: &Path) -> Result<(StoreHeader, [u8; 32], u32), MaterialError> {
    let meta = f.metadata().map_err(|e| MaterialError::Io {
        path: path.to_path_buf(),
        detail: e.to_string(),
    })?;
    crate::io::owner_only::check(path, &meta, "one server's dealer material")
        .map_err(MaterialError::Exposed)?;
    let foreign = |detail: &str| MaterialError::Foreign {
        path: path.to_path_buf(),
        what: "fss2 material store",
        detail: detail.to_string(),
    };
    let mut head = vec![0u8; HEAD + 32 + 4];
    f.read_exact(&mut head)
        .map_err(|_| foreign("it is shorter than a header"))?;
    if &head[..8] != STORE_MAGIC {
        return Err(foreign("its first bytes are not those of one"));
    }
    let sum: [u8; 32] = head[HEAD..HEAD + 32].try_into().expect("32");
    if checksum("irisc 2026 fss2 material header", &[&head[..HEAD]]) != sum {
        return Err(foreign(
            "its header checksum does not match: the file was damaged",
        ));
    }
    let h = StoreHeader {
        server: u32_at(&head, 8),
        authentications: u32_at(&head, 12),
        variant: u32_at(&head, 16),
        dim: u64_at(&head, 20),
        records: u64_at(&head, 28),
        auth_bytes: u64_at(&head, 36),
        gallery_id: head[44..60].try_into().expect("16"),
        plan: head[60..92].try_into().expect("32"),
        batch: head[92..108].try_into().expect("16"),
    };
    let used = u32_at(&head, HEAD + 32);
    let len = f.metadata().map_err(io_err(path))?.len();
    let want = (HEAD + 36) as u64 + u64::from(h.authentications) * (h.auth_bytes() + 32);
    if len != want {
        return Err(foreign(&format!(
            "it holds {len} bytes where its header announces {want}: it is truncated or was appended to"
        )));
    }
    Ok((h, sum, used))
}

fn check(h: &StoreHeader, used: u32, e: &Expect<'_>, needed: u32) -> Result<(), String> {
    if h.server != e.server {
        return Err(format!(
            "this is server {}'s material, not server {}'s",
            h.server, e.server
        ));
    }
    if h.variant != e.variant {
        let name = |v: u32| {
            if v == 0 {
                "the semi-honest protocol".to_string()
            } else {
                format!("the malicious variant with m = {v}")
            }
        };
        return Err(format!(
            "this material is for {}, the run is {}",
            name(h.variant),
            name(e.variant)
        ));
    }
    if &h.plan != e.plan {
        return Err(
            "this material was made for another program (its plan fingerprint differs)".into(),
        );
    }
    if &h.gallery_id != e.gallery_id || h.dim != e.dim || h.records != e.records {
        return Err(format!(
            "this material was made for another gallery ({} records of dimension {}; this server holds {} of dimension {})",
            h.records, h.dim, e.records, e.dim
        ));
    }
    let left = h.authentications.saturating_sub(used);
    if left < needed {
        return Err(format!(
            "{left} unused authentications of {} left, {needed} needed: every authentication's material is used once; ask the dealer for a new batch",
            h.authentications
        ));
    }
    Ok(())
}

/// Checks that the store at `path` can serve `needed` authentications, consuming nothing: its
/// header and how many authentications are already used.
pub fn check_available(
    path: &Path,
    expect: Expect<'_>,
    needed: u32,
) -> Result<(StoreHeader, u32), MaterialError> {
    let mut f = File::open(path).map_err(|e| MaterialError::Io {
        path: path.to_path_buf(),
        detail: format!("cannot open the material store: {e}"),
    })?;
    let (h, _, used) = read_header(&mut f, path)?;
    check(&h, used, &expect, needed).map_err(|detail| MaterialError::Refused {
        path: path.to_path_buf(),
        detail,
    })?;
    Ok((h, used))
}

/// The next unused semi-honest authentication: [`take_bytes`], decoded.
pub fn take(path: &Path, expect: Expect<'_>) -> Result<Taken, MaterialError> {
    let t = take_bytes(path, expect)?;
    let material = AuthMaterial::decode(
        &t.bytes,
        t.server as usize,
        expect.dim as usize,
        expect.records as usize,
    )
    .map_err(|detail| MaterialError::Refused {
        path: path.to_path_buf(),
        detail,
    })?;
    Ok(Taken {
        batch: t.batch,
        index: t.index,
        material,
    })
}

/// The next unused authentication: checked against `expect`, its checksum verified, marked used
/// (durably) and returned.
pub fn take_bytes(path: &Path, expect: Expect<'_>) -> Result<TakenBytes, MaterialError> {
    let refused = |detail: String| MaterialError::Refused {
        path: path.to_path_buf(),
        detail,
    };
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| MaterialError::Io {
            path: path.to_path_buf(),
            detail: format!("cannot open the material store: {e}"),
        })?;
    let (h, sum, used) = read_header(&mut f, path)?;
    check(&h, used, &expect, 1).map_err(refused)?;
    let per = h.auth_bytes();
    let mut bytes = vec![0u8; per as usize + 32];
    f.seek(SeekFrom::Start(
        (HEAD + 36) as u64 + u64::from(used) * (per + 32),
    ))
    .map_err(io_err(path))?;
    f.read_exact(&mut bytes).map_err(io_err(path))?;
    let (body, stored) = bytes.split_at(per as usize);
    if checksum(
        "irisc 2026 fss2 material authentication",
        &[&sum, &used.to_le_bytes(), body],
    ) != stored
    {
        return Err(refused(format!(
            "the checksum of authentication {used} does not match: the file was damaged"
        )));
    }
    f.seek(SeekFrom::Start((HEAD + 32) as u64))
        .map_err(io_err(path))?;
    f.write_all(&(used + 1).to_le_bytes())
        .map_err(io_err(path))?;
    f.sync_all().map_err(io_err(path))?;
    Ok(TakenBytes {
        batch: h.batch,
        index: used,
        server: h.server,
        bytes: body.to_vec(),
    })
}

/// A store's header and used count, checked for integrity only (for a reader that learns what to
/// expect of it later, like the client of the malicious variant).
pub fn peek_header(path: &Path) -> Result<(StoreHeader, u32), MaterialError> {
    let mut f = File::open(path).map_err(|e| MaterialError::Io {
        path: path.to_path_buf(),
        detail: format!("cannot open the material store: {e}"),
    })?;
    let (h, _, used) = read_header(&mut f, path)?;
    Ok((h, used))
}
