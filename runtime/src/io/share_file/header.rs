//! The fixed-size little-endian header of a share file, and the checks a party runs on it.
//!
//! | offset | size | field                                         |
//! |--------|------|-----------------------------------------------|
//! | 0      | 8    | magic `b"IRISCSHR"`                           |
//! | 8      | 4    | format version (u32, = 1)                     |
//! | 12     | 1    | kind (0 gallery, 1 query)                     |
//! | 13     | 1    | party (0, 1, 2)                               |
//! | 14     | 1    | sharing (0 = rep3)                            |
//! | 15     | 1    | mask (0 public, 1 secret)                     |
//! | 16     | 4    | ring_bits k (u32)                             |
//! | 20     | 4    | code_bits (u32)                               |
//! | 24     | 8    | count of records (u64)                        |
//! | 32     | 16   | set_id (same in the three files of one run)   |
//! | 48     | 32   | BLAKE3 hash of the body                       |
//!
//! 80 bytes keep every body section 8-byte aligned within the file.

use std::fmt;
use std::path::Path;

use super::error::ShareFileError;
use super::ring_vec::RingVec;
use crate::iris::check_code_bits;

pub const MAGIC: [u8; 8] = *b"IRISCSHR";
pub const FORMAT_VERSION: u32 = 1;
pub const HEADER_LEN: usize = 80;

/// Whether a file holds gallery records or queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareKind {
    Gallery = 0,
    Query = 1,
}

/// The secret-sharing scheme of the components.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// 3-party replicated sharing over Z_2^k: party i holds (x_i, x_{i-1}).
    Rep3 = 0,
}

/// Whether masks are public (plain in every file, Section 4) or secret-shared (Section 5).
///
/// With secret masks the plain mask section is empty and each record has `2 * code_bits`
/// shared elements: the masked bits, then the mask bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaskMode {
    Public = 0,
    Secret = 1,
}

impl fmt::Display for ShareKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShareKind::Gallery => "gallery",
            ShareKind::Query => "query set",
        })
    }
}

impl fmt::Display for MaskMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MaskMode::Public => "public masks",
            MaskMode::Secret => "secret-shared masks",
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareFileHeader {
    pub version: u32,
    pub kind: ShareKind,
    pub party: u8,
    pub sharing: Sharing,
    pub mask: MaskMode,
    pub ring_bits: u32,
    pub code_bits: u32,
    pub count: u64,
    pub set_id: [u8; 16],
    pub body_hash: [u8; 32],
}

/// Byte sizes of the four body sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLayout {
    pub ids: u64,
    pub masks: u64,
    /// Each of `own` and `prev`.
    pub component: u64,
}

impl BodyLayout {
    pub fn total(&self) -> u64 {
        // Cannot overflow: `layout` checked each part and their sum.
        self.ids + self.masks + 2 * self.component
    }
}

impl ShareFileHeader {
    /// A version-1 rep3 header with an empty hash (filled in when the file is written).
    pub fn new(
        kind: ShareKind,
        party: u8,
        mask: MaskMode,
        ring_bits: u32,
        code_bits: u32,
        count: u64,
        set_id: [u8; 16],
    ) -> Self {
        ShareFileHeader {
            version: FORMAT_VERSION,
            kind,
            party,
            sharing: Sharing::Rep3,
            mask,
            ring_bits,
            code_bits,
            count,
            set_id,
            body_hash: [0; 32],
        }
    }

    /// A fresh random set id from the operating system.
    pub fn random_set_id() -> Result<[u8; 16], ShareFileError> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|e| ShareFileError::Random(e.to_string()))?;
        Ok(id)
    }

    /// Shared ring elements per record (masked bits, plus mask bits when masks are secret).
    pub fn elements_per_record(&self) -> u64 {
        match self.mask {
            MaskMode::Public => u64::from(self.code_bits),
            MaskMode::Secret => 2 * u64::from(self.code_bits),
        }
    }

    /// Checks the fields' ranges and computes the body layout; the message says what is wrong.
    pub fn layout(&self) -> Result<BodyLayout, String> {
        if self.party > 2 {
            return Err(format!("party {} (must be 0, 1 or 2)", self.party));
        }
        let word = RingVec::word_bytes_for(self.ring_bits)
            .ok_or_else(|| format!("ring Z_2^{} (k must be 1..=64)", self.ring_bits))?;
        check_code_bits(self.code_bits as usize).map_err(|e| e.to_string())?;
        let too_big = || format!("{} records do not fit in a file", self.count);
        let ids = self.count.checked_mul(8).ok_or_else(too_big)?;
        let masks = match self.mask {
            MaskMode::Public => self
                .count
                .checked_mul(u64::from(self.code_bits) / 8)
                .ok_or_else(too_big)?,
            MaskMode::Secret => 0,
        };
        let component = self
            .count
            .checked_mul(self.elements_per_record())
            .and_then(|n| n.checked_mul(word as u64))
            .ok_or_else(too_big)?;
        component
            .checked_mul(2)
            .and_then(|c| c.checked_add(ids))
            .and_then(|c| c.checked_add(masks))
            .and_then(|c| c.checked_add(HEADER_LEN as u64))
            .ok_or_else(too_big)?;
        Ok(BodyLayout {
            ids,
            masks,
            component,
        })
    }

    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        b[12] = self.kind as u8;
        b[13] = self.party;
        b[14] = self.sharing as u8;
        b[15] = self.mask as u8;
        b[16..20].copy_from_slice(&self.ring_bits.to_le_bytes());
        b[20..24].copy_from_slice(&self.code_bits.to_le_bytes());
        b[24..32].copy_from_slice(&self.count.to_le_bytes());
        b[32..48].copy_from_slice(&self.set_id);
        b[48..80].copy_from_slice(&self.body_hash);
        b
    }

    /// Parses the first bytes of the file at `path` (named in errors). `file_len` is the whole
    /// file's size, used to tell truncation from a bad header.
    pub fn parse(path: &Path, bytes: &[u8], file_len: u64) -> Result<Self, ShareFileError> {
        let p = || path.to_path_buf();
        if bytes.len() < 8 || bytes[0..8] != MAGIC {
            return Err(ShareFileError::NotShareFile { path: p() });
        }
        // The version decides the rest of the layout, so it is checked before anything else.
        if bytes.len() < 12 {
            return Err(ShareFileError::Truncated {
                path: p(),
                expected: HEADER_LEN as u64,
                found: file_len,
            });
        }
        let version = u32_at(bytes, 8);
        if version != FORMAT_VERSION {
            return Err(ShareFileError::Version {
                path: p(),
                found: version,
                supported: FORMAT_VERSION,
            });
        }
        if bytes.len() < HEADER_LEN {
            return Err(ShareFileError::Truncated {
                path: p(),
                expected: HEADER_LEN as u64,
                found: file_len,
            });
        }
        let malformed = |detail: String| ShareFileError::Malformed { path: p(), detail };
        let kind = match bytes[12] {
            0 => ShareKind::Gallery,
            1 => ShareKind::Query,
            k => return Err(malformed(format!("unknown kind {k}"))),
        };
        let sharing = match bytes[14] {
            0 => Sharing::Rep3,
            s => return Err(malformed(format!("unknown sharing scheme {s}"))),
        };
        let mask = match bytes[15] {
            0 => MaskMode::Public,
            1 => MaskMode::Secret,
            m => return Err(malformed(format!("unknown mask mode {m}"))),
        };
        let mut set_id = [0u8; 16];
        set_id.copy_from_slice(&bytes[32..48]);
        let mut body_hash = [0u8; 32];
        body_hash.copy_from_slice(&bytes[48..80]);
        let header = ShareFileHeader {
            version,
            kind,
            party: bytes[13],
            sharing,
            mask,
            ring_bits: u32_at(bytes, 16),
            code_bits: u32_at(bytes, 20),
            count: u64::from_le_bytes(bytes[24..32].try_into().unwrap_or([0; 8])),
            set_id,
            body_hash,
        };
        header.layout().map_err(malformed)?;
        Ok(header)
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]))
}

/// What a party's program expects of an input file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub kind: ShareKind,
    pub party: u8,
    pub ring_bits: u32,
    pub code_bits: u32,
    pub mask: MaskMode,
}

/// Checks that the file at `path` with `header` is what this party's program needs; the error
/// names the mismatch and how to fix it.
pub fn check_compatible(
    path: &Path,
    header: &ShareFileHeader,
    expected: &Expected,
) -> Result<(), ShareFileError> {
    let fail = |detail: String| {
        Err(ShareFileError::Incompatible {
            path: path.to_path_buf(),
            detail,
        })
    };
    let flag = match expected.kind {
        ShareKind::Gallery => "--db",
        ShareKind::Query => "--query",
    };
    if header.kind != expected.kind {
        return fail(format!(
            "holds a {} but a {} was expected: pass the files made by `irisc share {flag}`",
            header.kind, expected.kind
        ));
    }
    if header.party != expected.party {
        return fail(format!(
            "holds party {}'s shares but this is party {}: pass this party's own file (*.p{}.shr)",
            header.party, expected.party, expected.party
        ));
    }
    if header.ring_bits != expected.ring_bits {
        return fail(format!(
            "holds shares over Z_2^{} but this program computes over Z_2^{}: re-share the {} with `irisc share --ring {}` or rebuild the program for Z_2^{}",
            header.ring_bits, expected.ring_bits, expected.kind, expected.ring_bits, header.ring_bits
        ));
    }
    if header.code_bits != expected.code_bits {
        return fail(format!(
            "holds {}-bit iris codes but this program expects {}-bit codes",
            header.code_bits, expected.code_bits
        ));
    }
    if header.mask != expected.mask {
        return fail(format!(
            "holds {} but this program expects {}: re-share the {} for this program",
            header.mask, expected.mask, expected.kind
        ));
    }
    Ok(())
}
