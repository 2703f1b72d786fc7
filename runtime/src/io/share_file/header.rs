//! The fixed-size little-endian header of a share file (format version 2), and the checks a
//! party runs on it.
//!
//! | offset | size | field                                                     |
//! |--------|------|-----------------------------------------------------------|
//! | 0      | 8    | magic `b"IRISCSHR"`                                       |
//! | 8      | 4    | format version (u32, = 2)                                 |
//! | 12     | 1    | role (0 gallery, 1 query)                                 |
//! | 13     | 1    | party (0, 1, 2)                                           |
//! | 14     | 1    | sharing (0 rep3, 1 Shamir F_p, 2 Shamir GR(2^16,2), 3 GR(2^16,4)) |
//! | 15     | 1    | mask (0 public, 1 secret, 2 none)                         |
//! | 16     | 4    | ring_bits k (u32; 16 for Shamir sharings)                 |
//! | 20     | 4    | elements per record (u32: code bits, dimension, or 1)     |
//! | 24     | 8    | count of records (u64)                                    |
//! | 32     | 16   | set_id (same in the three files of one run)               |
//! | 48     | 32   | BLAKE3 hash of the body                                   |
//! | 80     | 1    | payload kind (0 iris, 1 embedding, 2 bit)                 |
//! | 81     | 1    | scale_bits (embeddings; 0 otherwise)                      |
//! | 82     | 1    | conjugate (1: a query's records also hold their codes'     |
//! |        |      | conjugates, a third section; 0 otherwise)                 |
//! | 83     | 5    | reserved, zero                                            |
//!
//! 88 bytes keep every body section 8-byte aligned within the file. Version 1 files (80-byte
//! header, rep3 iris only) are refused with a message that says to re-share.
//!
//! The header records the input's schema (kind, role, sharing, ring, elements, mask mode,
//! scale) and no program fingerprint: any program whose input has that schema reads the file
//! ([`check_compatible`] names the field that differs). The set id binds the three files of
//! one `irisc share` run.

use std::path::Path;

use super::error::ShareFileError;
use super::RingVec;
use crate::iris::check_code_bits;
use crate::vocab::{InputKind, InputMask, InputRole, Sharing};

pub const MAGIC: [u8; 8] = *b"IRISCSHR";
pub const FORMAT_VERSION: u32 = 2;
pub const HEADER_LEN: usize = 88;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareFileHeader {
    pub version: u32,
    pub role: InputRole,
    pub party: u8,
    pub sharing: Sharing,
    pub mask: InputMask,
    pub ring_bits: u32,
    /// Elements per record: bits per iris code, an embedding's dimension, or 1 for a bit.
    pub elements: u32,
    pub count: u64,
    pub set_id: [u8; 16],
    pub body_hash: [u8; 32],
    pub payload: InputKind,
    pub scale_bits: u8,
    /// Each record also holds its code's conjugate (each cell's imaginary entries negated),
    /// after its code and secret-mask sections: the owner's dealing of a query for
    /// `mirror(q)` under a Galois-ring sharing ([`crate::contract::InputPart::Conjugate`]).
    pub conjugate: bool,
}

/// Byte sizes of the body sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLayout {
    pub ids: u64,
    pub masks: u64,
    /// Each share component (two for rep3: own and prev; one for Shamir).
    pub component: u64,
    pub components: u64,
}

impl BodyLayout {
    pub fn total(&self) -> u64 {
        // Cannot overflow: `layout` checked each part and their sum.
        self.ids + self.masks + self.components * self.component
    }
}

/// The GR extension degree d of a Galois-ring sharing, `None` for rep3 and F_p.
pub fn galois_degree(sharing: Sharing) -> Option<usize> {
    match sharing {
        Sharing::Gr2 => Some(2),
        Sharing::Gr4 => Some(4),
        _ => None,
    }
}

fn role_byte(k: InputRole) -> u8 {
    match k {
        InputRole::Gallery => 0,
        InputRole::Query => 1,
    }
}

fn sharing_byte(s: Sharing) -> u8 {
    match s {
        Sharing::Rep3 => 0,
        Sharing::Fp => 1,
        Sharing::Gr2 => 2,
        Sharing::Gr4 => 3,
    }
}

fn mask_byte(m: InputMask) -> u8 {
    match m {
        InputMask::Public => 0,
        InputMask::Secret => 1,
        InputMask::None => 2,
    }
}

fn payload_byte(p: InputKind) -> u8 {
    match p {
        InputKind::Iris => 0,
        InputKind::Embedding => 1,
        InputKind::Bit => 2,
    }
}

/// How a file's sharing is named to users.
pub fn sharing_text(s: Sharing) -> &'static str {
    match s {
        Sharing::Rep3 => "replicated (rep3) shares",
        Sharing::Fp => "Shamir shares over F_p (fp)",
        Sharing::Gr2 => "Shamir shares over GR(2^16, 2) (gr2)",
        Sharing::Gr4 => "Shamir shares over GR(2^16, 4) (gr4)",
    }
}

fn mask_text(m: InputMask) -> &'static str {
    match m {
        InputMask::Public => "public masks",
        InputMask::Secret => "secret-shared masks",
        InputMask::None => "no masks",
    }
}

impl ShareFileHeader {
    /// A rep3 iris header with an empty hash (filled in when the file is written).
    pub fn new(
        role: InputRole,
        party: u8,
        mask: InputMask,
        ring_bits: u32,
        code_bits: u32,
        count: u64,
        set_id: [u8; 16],
    ) -> Self {
        ShareFileHeader {
            version: FORMAT_VERSION,
            role,
            party,
            sharing: Sharing::Rep3,
            mask,
            ring_bits,
            elements: code_bits,
            count,
            set_id,
            body_hash: [0; 32],
            payload: InputKind::Iris,
            scale_bits: 0,
            conjugate: false,
        }
    }

    /// A fresh random set id from the operating system.
    pub fn random_set_id() -> Result<[u8; 16], ShareFileError> {
        let mut id = [0u8; 16];
        getrandom::fill(&mut id).map_err(|e| ShareFileError::Random(e.to_string()))?;
        Ok(id)
    }

    /// Shared sections per record: the values, plus the mask bits when iris masks are secret,
    /// plus the code's conjugate when the file carries it.
    pub fn sections(&self) -> u64 {
        let iris = self.payload == InputKind::Iris;
        1 + u64::from(iris && self.mask == InputMask::Secret) + u64::from(iris && self.conjugate)
    }

    /// The section of each record that holds `part`, if the file has it: codes (and
    /// embeddings, bits) first, then secret masks, then conjugates.
    pub fn section_of(&self, part: crate::contract::InputPart) -> Option<u64> {
        use crate::contract::InputPart;
        let secret = self.payload == InputKind::Iris && self.mask == InputMask::Secret;
        match (self.payload, part) {
            (InputKind::Iris, InputPart::Codes) => Some(0),
            (InputKind::Iris, InputPart::Masks) => secret.then_some(1),
            (InputKind::Iris, InputPart::Conjugate) => {
                self.conjugate.then_some(1 + u64::from(secret))
            }
            (InputKind::Embedding, InputPart::Embedding) | (InputKind::Bit, InputPart::Bit) => {
                Some(0)
            }
            _ => None,
        }
    }

    /// Share words per section of one record: `elements`, rounded up to a multiple of d for
    /// GR(2^16, d) (each d entries are packed into one ring element's coefficients).
    pub fn words_per_section(&self) -> u64 {
        let e = u64::from(self.elements);
        match galois_degree(self.sharing) {
            Some(d) => e.div_ceil(d as u64) * d as u64,
            None => e,
        }
    }

    /// Share words per record in each component.
    pub fn elements_per_record(&self) -> u64 {
        self.sections() * self.words_per_section()
    }

    /// Checks the fields' ranges and their combination and computes the body layout; the
    /// message says what is wrong.
    pub fn layout(&self) -> Result<BodyLayout, String> {
        if self.party > 2 {
            return Err(format!("party {} (must be 0, 1 or 2)", self.party));
        }
        let word = RingVec::word_bytes_for(self.ring_bits)
            .ok_or_else(|| format!("ring Z_2^{} (k must be 1..=64)", self.ring_bits))?;
        if self.sharing.is_shamir() && self.ring_bits != 16 {
            return Err(format!(
                "{} stored over Z_2^{} (Shamir shares are 16-bit words)",
                sharing_text(self.sharing),
                self.ring_bits
            ));
        }
        if self.conjugate && (self.payload != InputKind::Iris || self.role != InputRole::Query) {
            return Err(format!(
                "conjugates in a file of {} (only an iris query's owner deals them)",
                if self.payload == InputKind::Iris {
                    "gallery records"
                } else {
                    "non-iris values"
                }
            ));
        }
        match self.payload {
            InputKind::Iris => {
                check_code_bits(self.elements as usize).map_err(|e| e.to_string())?;
                if self.mask == InputMask::None {
                    return Err("iris codes without a mask mode".into());
                }
            }
            InputKind::Embedding => {
                if self.elements == 0 {
                    return Err("embeddings of dimension 0".into());
                }
                if self.mask != InputMask::None {
                    return Err(format!("embeddings with {}", mask_text(self.mask)));
                }
            }
            InputKind::Bit => {
                if self.elements != 1 || self.mask != InputMask::None {
                    return Err(format!(
                        "bits must have 1 element and no mask, found {} elements and {}",
                        self.elements,
                        mask_text(self.mask)
                    ));
                }
                if self.sharing != Sharing::Rep3 {
                    return Err(format!(
                        "bits as {} (bits are always rep3)",
                        sharing_text(self.sharing)
                    ));
                }
            }
        }
        let too_big = || format!("{} records do not fit in a file", self.count);
        let ids = self.count.checked_mul(8).ok_or_else(too_big)?;
        let masks = match (self.payload, self.mask) {
            (InputKind::Iris, InputMask::Public) => self
                .count
                .checked_mul(u64::from(self.elements) / 8)
                .ok_or_else(too_big)?,
            _ => 0,
        };
        let component = self
            .count
            .checked_mul(self.elements_per_record())
            .and_then(|n| n.checked_mul(word as u64))
            .ok_or_else(too_big)?;
        let components = if self.sharing.is_shamir() { 1 } else { 2 };
        component
            .checked_mul(components)
            .and_then(|c| c.checked_add(ids))
            .and_then(|c| c.checked_add(masks))
            .and_then(|c| c.checked_add(HEADER_LEN as u64))
            .ok_or_else(too_big)?;
        Ok(BodyLayout {
            ids,
            masks,
            component,
            components,
        })
    }

    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        b[12] = role_byte(self.role);
        b[13] = self.party;
        b[14] = sharing_byte(self.sharing);
        b[15] = mask_byte(self.mask);
        b[16..20].copy_from_slice(&self.ring_bits.to_le_bytes());
        b[20..24].copy_from_slice(&self.elements.to_le_bytes());
        b[24..32].copy_from_slice(&self.count.to_le_bytes());
        b[32..48].copy_from_slice(&self.set_id);
        b[48..80].copy_from_slice(&self.body_hash);
        b[80] = payload_byte(self.payload);
        b[81] = self.scale_bits;
        b[82] = u8::from(self.conjugate);
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
        let role = match bytes[12] {
            0 => InputRole::Gallery,
            1 => InputRole::Query,
            k => return Err(malformed(format!("unknown role {k}"))),
        };
        let sharing = match bytes[14] {
            0 => Sharing::Rep3,
            1 => Sharing::Fp,
            2 => Sharing::Gr2,
            3 => Sharing::Gr4,
            s => return Err(malformed(format!("unknown sharing scheme {s}"))),
        };
        let mask = match bytes[15] {
            0 => InputMask::Public,
            1 => InputMask::Secret,
            2 => InputMask::None,
            m => return Err(malformed(format!("unknown mask mode {m}"))),
        };
        let payload = match bytes[80] {
            0 => InputKind::Iris,
            1 => InputKind::Embedding,
            2 => InputKind::Bit,
            k => return Err(malformed(format!("unknown payload kind {k}"))),
        };
        let conjugate = match bytes[82] {
            0 => false,
            1 => true,
            c => return Err(malformed(format!("conjugate flag {c} (must be 0 or 1)"))),
        };
        if bytes[83..88].iter().any(|&b| b != 0) {
            return Err(malformed("reserved header bytes are not zero".into()));
        }
        let mut set_id = [0u8; 16];
        set_id.copy_from_slice(&bytes[32..48]);
        let mut body_hash = [0u8; 32];
        body_hash.copy_from_slice(&bytes[48..80]);
        let header = ShareFileHeader {
            version,
            role,
            party: bytes[13],
            sharing,
            mask,
            ring_bits: u32_at(bytes, 16),
            elements: u32_at(bytes, 20),
            count: u64::from_le_bytes(bytes[24..32].try_into().unwrap_or([0; 8])),
            set_id,
            body_hash,
            payload,
            scale_bits: bytes[81],
            conjugate,
        };
        header.layout().map_err(malformed)?;
        Ok(header)
    }
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]))
}

/// What a party's program expects of one input file (from its manifest entry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The input's name in the program, for messages.
    pub input: String,
    pub role: InputRole,
    pub party: u8,
    pub sharing: Sharing,
    pub payload: InputKind,
    pub ring_bits: u32,
    pub elements: u32,
    pub mask: InputMask,
    pub scale_bits: u8,
    /// The program reads the query's conjugates (`mirror(q)` under a Galois-ring sharing).
    pub conjugate: bool,
}

impl Expected {
    /// What the manifest entry `input` needs of party `party`'s file.
    pub fn for_input(input: &crate::manifest::ManifestInput, party: u8) -> Expected {
        Expected {
            input: input.name.clone(),
            role: input.role,
            party,
            sharing: input.sharing,
            payload: input.kind,
            ring_bits: input.ring_bits,
            elements: input.elements,
            mask: input.mask,
            scale_bits: input.scale_bits.min(255) as u8,
            conjugate: input.conjugate,
        }
    }
}

fn elements_text(payload: InputKind, n: u32) -> String {
    match payload {
        InputKind::Iris => format!("{n}-bit iris codes"),
        InputKind::Embedding => format!("{n}-dimensional embeddings"),
        InputKind::Bit => "bits".into(),
    }
}

/// Checks that the file at `path` with `header` is what this party's program needs for the
/// input `expected.input`; the error names the mismatch and how to fix it.
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
    let name = &expected.input;
    let reshare = format!("re-share it with `irisc share --program P.irs --input {name}=FILE`");
    if header.payload != expected.payload {
        return fail(format!(
            "holds {} data but input `{name}` is {}: pass the file made for `{name}` ({reshare})",
            header.payload, expected.payload
        ));
    }
    if header.role != expected.role {
        return fail(format!(
            "holds a {} but input `{name}` is a {}: pass the file made for `{name}`",
            header.role, expected.role
        ));
    }
    if header.party != expected.party {
        return fail(format!(
            "holds party {}'s shares but this is party {}: pass this party's own file (p{}/{name}.shares)",
            header.party, expected.party, expected.party
        ));
    }
    if header.sharing != expected.sharing {
        return fail(format!(
            "holds {} but this program reads input `{name}` as {}: re-share it with `irisc share --program P.irs --input {name}=FILE --sharing {}`",
            sharing_text(header.sharing),
            sharing_text(expected.sharing),
            expected.sharing
        ));
    }
    if header.ring_bits != expected.ring_bits {
        return fail(format!(
            "holds shares over Z_2^{} but this program computes input `{name}` over Z_2^{}: {reshare} (or `--ring {}`), or rebuild the program for Z_2^{}",
            header.ring_bits, expected.ring_bits, expected.ring_bits, header.ring_bits
        ));
    }
    if header.elements != expected.elements {
        let field = match header.payload {
            InputKind::Iris => "code length",
            InputKind::Embedding => "dimension",
            InputKind::Bit => "element count",
        };
        return fail(format!(
            "holds {} but this program expects {} for input `{name}` (the {field} differs): {reshare}",
            elements_text(header.payload, header.elements),
            elements_text(expected.payload, expected.elements)
        ));
    }
    if header.mask != expected.mask {
        return fail(format!(
            "holds {} but this program expects {} for input `{name}` (the mask mode differs): {reshare}",
            mask_text(header.mask),
            mask_text(expected.mask)
        ));
    }
    if header.payload == InputKind::Embedding && header.scale_bits != expected.scale_bits {
        return fail(format!(
            "holds embeddings at scale 2^{} but this program expects scale 2^{} for input `{name}`: {reshare}",
            header.scale_bits, expected.scale_bits
        ));
    }
    if header.conjugate && !expected.conjugate {
        // Exact, like every other field: a serving party appends requests' records one after
        // the other, which needs one record layout.
        return fail(format!(
            "holds query codes with their conjugates (dealt for a program that compares `mirror({name})` over a Galois ring), but this program does not read them: {reshare}"
        ));
    }
    if expected.conjugate && !header.conjugate {
        return fail(format!(
            "holds query codes without their conjugates, which this program's `mirror({name})` over {} reads (a Galois-ring share cannot negate a cell's imaginary entries locally, so the query's owner deals them): {reshare} (irisc share reads from the program that it needs them)",
            sharing_text(expected.sharing)
        ));
    }
    Ok(())
}
