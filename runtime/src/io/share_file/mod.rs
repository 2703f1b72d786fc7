//! One party's share file: a fixed header (`header.rs`) then the body
//! `ids (count x u64) | public masks (count x bits/8) | own | prev`, all little-endian, each
//! component `count x elements_per_record x W` bytes (W = 2/4/8).
//!
//! - rep3: `own = x_party`, `prev = x_{party-1}` of x = x_0 + x_1 + x_2 mod 2^k;
//! - Shamir (F_p, GR(2^16, d)): one component, `own` = this party's evaluation of the degree-1
//!   polynomial; `prev` is absent from the file (and empty in [`ShareFile`]). F_p words are
//!   canonical (< p = 65519); GR words are the coefficients of packed ring elements (galleries
//!   packed reversed, queries plainly, see [`crate::share::galois`]), each section (codes, then
//!   secret masks) padded to a multiple of d.
//!
//! A record's shared elements are its payload: an iris code's masked bits (then its mask bits
//! when masks are secret), an embedding's fixed-point values, or one bit.
//!
//! Files are written to a temporary name in the same directory and renamed, so a crash never
//! leaves a torn file under the real name; the body hash catches later damage.

mod error;
mod header;

pub use crate::share::ring_vec::{ring_mask, RingVec};
pub use error::ShareFileError;
pub use header::{
    check_compatible, galois_degree, sharing_text, BodyLayout, Expected, ShareFileHeader,
    FORMAT_VERSION, HEADER_LEN, MAGIC,
};

use std::fs::{self, File};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::vocab::Sharing;

/// Everything one party's file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareFile {
    pub header: ShareFileHeader,
    pub ids: Vec<u64>,
    /// Plain masks, `code_bits / 8` bytes per record (empty with secret masks).
    pub masks: Vec<u8>,
    /// This party's component x_party of every element (rep3), or its Shamir share.
    pub own: RingVec,
    /// The previous party's component x_{party-1 mod 3} (rep3); empty for Shamir sharings.
    pub prev: RingVec,
}

/// Elements moved per I/O call: large enough to be fast, small enough to bound scratch memory.
const CHUNK: usize = 1 << 16;

/// Words stored little-endian in the file.
trait LeWord: bytemuck::Pod {
    fn swap_le(self) -> Self;
}

macro_rules! le_word {
    ($($t:ty),*) => {$(
        impl LeWord for $t {
            fn swap_le(self) -> Self {
                <$t>::from_le(self)
            }
        }
    )*};
}
le_word!(u8, u16, u32, u64);

fn io_err(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> ShareFileError {
    let path = path.to_path_buf();
    move |cause| ShareFileError::Io {
        action,
        path,
        cause,
    }
}

/// Writes `file` to `path` atomically and returns the header as written (with its body hash).
pub fn write(path: &Path, file: &ShareFile) -> Result<ShareFileHeader, ShareFileError> {
    validate(path, file)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .ok_or_else(|| ShareFileError::Invalid {
            path: path.to_path_buf(),
            detail: "the path does not name a file".into(),
        })?
        .to_string_lossy()
        .into_owned();
    let mut tag = [0u8; 8];
    getrandom::fill(&mut tag).map_err(|e| ShareFileError::Random(e.to_string()))?;
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        u64::from_le_bytes(tag)
    ));
    let result = write_body_then_header(&tmp, file).and_then(|header| {
        fs::rename(&tmp, path).map_err(io_err("rename into place", path))?;
        // Make the rename itself durable; not all platforms can sync a directory.
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(header)
    });
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn write_body_then_header(tmp: &Path, file: &ShareFile) -> Result<ShareFileHeader, ShareFileError> {
    // One party's shares: readable by its owner only (mode 0600), from the first byte on.
    let mut options = File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let f = options.open(tmp).map_err(io_err("create", tmp))?;
    let mut out = BufWriter::with_capacity(1 << 20, f);
    let header = encode(&mut out, file, tmp)?;
    let f = out
        .into_inner()
        .map_err(|e| io_err("write", tmp)(e.into_error()))?;
    f.sync_all().map_err(io_err("sync", tmp))?;
    Ok(header)
}

/// Writes the header (with the body's hash) and the body of `file` to `out`.
fn encode<W: Write + Seek>(
    out: &mut W,
    file: &ShareFile,
    tmp: &Path,
) -> Result<ShareFileHeader, ShareFileError> {
    // Placeholder header: the hash is known only after the body.
    out.write_all(&[0u8; HEADER_LEN])
        .map_err(io_err("write", tmp))?;
    let mut hasher = blake3::Hasher::new();
    put(out, &mut hasher, &file.ids, tmp)?;
    put(out, &mut hasher, &file.masks, tmp)?;
    let components: &[&RingVec] = if file.header.sharing.is_shamir() {
        &[&file.own]
    } else {
        &[&file.own, &file.prev]
    };
    for component in components {
        match component {
            RingVec::U16(v) => put(out, &mut hasher, v, tmp)?,
            RingVec::U32(v) => put(out, &mut hasher, v, tmp)?,
            RingVec::U64(v) => put(out, &mut hasher, v, tmp)?,
        }
    }
    let mut header = file.header.clone();
    header.body_hash = *hasher.finalize().as_bytes();
    out.seek(SeekFrom::Start(0)).map_err(io_err("write", tmp))?;
    out.write_all(&header.to_bytes())
        .map_err(io_err("write", tmp))?;
    Ok(header)
}

fn put<T: LeWord>(
    out: &mut impl Write,
    hasher: &mut blake3::Hasher,
    data: &[T],
    path: &Path,
) -> Result<(), ShareFileError> {
    let mut scratch: Vec<T> = Vec::new();
    for chunk in data.chunks(CHUNK) {
        let bytes: &[u8] = if cfg!(target_endian = "little") {
            bytemuck::cast_slice(chunk)
        } else {
            scratch.clear();
            scratch.extend(chunk.iter().map(|&x| x.swap_le()));
            bytemuck::cast_slice(&scratch)
        };
        hasher.update(bytes);
        out.write_all(bytes).map_err(io_err("write", path))?;
    }
    Ok(())
}

/// Refuses to write a file whose parts disagree with its header.
fn validate(path: &Path, file: &ShareFile) -> Result<(), ShareFileError> {
    let invalid = |detail: String| ShareFileError::Invalid {
        path: path.to_path_buf(),
        detail,
    };
    let h = &file.header;
    if h.version != FORMAT_VERSION {
        return Err(invalid(format!(
            "format version {} (this build writes {FORMAT_VERSION})",
            h.version
        )));
    }
    let layout = h.layout().map_err(&invalid)?;
    if file.ids.len() as u64 != h.count {
        return Err(invalid(format!(
            "{} ids for {} records",
            file.ids.len(),
            h.count
        )));
    }
    if file.masks.len() as u64 != layout.masks {
        return Err(invalid(format!(
            "{} mask bytes, expected {}",
            file.masks.len(),
            layout.masks
        )));
    }
    let word = RingVec::word_bytes_for(h.ring_bits).unwrap_or(0);
    if h.sharing.is_shamir() && !file.prev.is_empty() {
        return Err(invalid(format!(
            "{} hold one component, but `prev` has {} elements",
            sharing_text(h.sharing),
            file.prev.len()
        )));
    }
    let components: &[(&str, &RingVec)] = if h.sharing.is_shamir() {
        &[("own", &file.own)]
    } else {
        &[("own", &file.own), ("prev", &file.prev)]
    };
    for &(name, c) in components {
        if c.word_bytes() != word {
            return Err(invalid(format!(
                "{name} holds {}-byte words but Z_2^{} uses {word}-byte words",
                c.word_bytes(),
                h.ring_bits
            )));
        }
        if (c.len() * word) as u64 != layout.component {
            return Err(invalid(format!(
                "{name} has {} elements, expected {}",
                c.len(),
                layout.component / word as u64
            )));
        }
        if let Some(detail) = out_of_range(h, name, c) {
            return Err(invalid(detail));
        }
    }
    Ok(())
}

/// The first element that is not a canonical residue of the file's ring (mod 2^k, or mod p for
/// F_p), described; `None` if all are.
fn out_of_range(h: &ShareFileHeader, name: &str, c: &RingVec) -> Option<String> {
    if h.sharing == Sharing::Fp {
        let p = u64::from(crate::share::fp::P);
        return c
            .iter_u64()
            .position(|x| x >= p)
            .map(|i| format!("{name} element {i} is not reduced mod p = {p}"));
    }
    c.first_out_of_range(h.ring_bits)
        .map(|i| format!("{name} element {i} is not reduced mod 2^{}", h.ring_bits))
}

/// Reads and checks only the header (and that the file has the size the header implies).
pub fn read_header(path: &Path) -> Result<ShareFileHeader, ShareFileError> {
    let (header, _) = open_checked(path)?;
    Ok(header)
}

/// Opens the file, parses its header and checks its size; returns the reader at the body.
fn open_checked(path: &Path) -> Result<(ShareFileHeader, File), ShareFileError> {
    let mut f = File::open(path).map_err(io_err("open", path))?;
    let meta = f.metadata().map_err(io_err("read", path))?;
    crate::io::owner_only::check(path, &meta, "one party's shares")
        .map_err(ShareFileError::Exposed)?;
    let len = meta.len();
    let mut bytes = Vec::with_capacity(HEADER_LEN);
    (&mut f)
        .take(HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .map_err(io_err("read", path))?;
    let header = ShareFileHeader::parse(path, &bytes, len)?;
    check_size(path, &header, len)?;
    Ok((header, f))
}

/// Checks that a file of `len` bytes has the size `header` implies.
fn check_size(path: &Path, header: &ShareFileHeader, len: u64) -> Result<(), ShareFileError> {
    let expected = header
        .layout()
        .map_err(|detail| ShareFileError::Malformed {
            path: path.to_path_buf(),
            detail,
        })?
        .total()
        + HEADER_LEN as u64;
    if len < expected {
        return Err(ShareFileError::Truncated {
            path: path.to_path_buf(),
            expected,
            found: len,
        });
    }
    if len > expected {
        return Err(ShareFileError::TrailingData {
            path: path.to_path_buf(),
            expected,
            found: len,
        });
    }
    Ok(())
}

/// Reads the whole file, checking its header, size, body hash and that every element is a
/// canonical residue mod 2^k.
pub fn read(path: &Path) -> Result<ShareFile, ShareFileError> {
    let (header, mut f) = open_checked(path)?;
    read_body(path, header, &mut f)
}

/// A share file received as bytes (a client's request to a serving party), checked as [`read`]
/// checks a file; `origin` names it in messages.
pub fn from_bytes(origin: &Path, bytes: &[u8]) -> Result<ShareFile, ShareFileError> {
    let head = &bytes[..bytes.len().min(HEADER_LEN)];
    let header = ShareFileHeader::parse(origin, head, bytes.len() as u64)?;
    check_size(origin, &header, bytes.len() as u64)?;
    let mut body = &bytes[HEADER_LEN..];
    read_body(origin, header, &mut body)
}

/// The bytes of `file` as [`write`] stores them (header with the body's hash, then the body).
pub fn to_bytes(file: &ShareFile) -> Result<Vec<u8>, ShareFileError> {
    let origin = Path::new("<memory>");
    validate(origin, file)?;
    let mut out = std::io::Cursor::new(Vec::new());
    encode(&mut out, file, origin)?;
    Ok(out.into_inner())
}

fn read_body(
    path: &Path,
    header: ShareFileHeader,
    f: &mut impl Read,
) -> Result<ShareFile, ShareFileError> {
    let f = &mut *f;
    let layout = header
        .layout()
        .map_err(|detail| ShareFileError::Malformed {
            path: path.to_path_buf(),
            detail,
        })?;
    let mut hasher = blake3::Hasher::new();
    // Sizes were checked against the file's length, so these allocations are bounded by it.
    let ids: Vec<u64> = take(f, &mut hasher, layout.ids as usize / 8, path)?;
    let masks: Vec<u8> = take(f, &mut hasher, layout.masks as usize, path)?;
    let n = layout.component as usize / RingVec::word_bytes_for(header.ring_bits).unwrap_or(8);
    let mut component = || -> Result<RingVec, ShareFileError> {
        Ok(match RingVec::word_bytes_for(header.ring_bits) {
            Some(2) => RingVec::U16(take(f, &mut hasher, n, path)?),
            Some(4) => RingVec::U32(take(f, &mut hasher, n, path)?),
            _ => RingVec::U64(take(f, &mut hasher, n, path)?),
        })
    };
    let own = component()?;
    let prev = if layout.components == 2 {
        component()?
    } else {
        RingVec::zeros(header.ring_bits, 0).unwrap_or(RingVec::U16(Vec::new()))
    };
    if *hasher.finalize().as_bytes() != header.body_hash {
        return Err(ShareFileError::Corrupted {
            path: path.to_path_buf(),
        });
    }
    for (name, c) in [("own", &own), ("prev", &prev)] {
        if let Some(detail) = out_of_range(&header, name, c) {
            return Err(ShareFileError::Malformed {
                path: path.to_path_buf(),
                detail,
            });
        }
    }
    Ok(ShareFile {
        header,
        ids,
        masks,
        own,
        prev,
    })
}

/// Reads `n` little-endian words straight into their vector (no second copy) and hashes them.
fn take<T: LeWord>(
    f: &mut impl Read,
    hasher: &mut blake3::Hasher,
    n: usize,
    path: &Path,
) -> Result<Vec<T>, ShareFileError> {
    let mut v: Vec<T> = vec![T::zeroed(); n];
    for chunk in v.chunks_mut(CHUNK) {
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(chunk);
        f.read_exact(bytes).map_err(io_err("read", path))?;
        hasher.update(bytes);
        if cfg!(target_endian = "big") {
            chunk.iter_mut().for_each(|x| *x = x.swap_le());
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests;
