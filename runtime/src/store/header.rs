//! The store's header slot and record layout, and the checks a party runs on them.
//!
//! The file starts with two identical 256-byte header slots (a mirror, see `mod.rs` for why),
//! then the records from byte [`RECORDS_OFFSET`]. One slot, all little-endian:
//!
//! | offset | size | field                                                         |
//! |--------|------|---------------------------------------------------------------|
//! | 0      | 8    | magic `b"IRISCGAL"`                                           |
//! | 8      | 4    | format version (u32: 3; versions 1 and 2 are still read, below) |
//! | 12     | 1    | party (0, 1, 2)                                               |
//! | 13     | 1    | sharing (0 rep3, 1 Shamir over GR(2^16, d), 2 Shamir over F_p)|
//! | 14     | 1    | masks (0 public: stored plain; 1 secret: shared after the codes)|
//! | 15     | 1    | input kind (0 iris: stores hold iris galleries only)          |
//! | 16     | 4    | sharing parameter (0 for rep3, d, or p)                       |
//! | 20     | 4    | ring_bits k (u32)                                             |
//! | 24     | 4    | code_bits (u32)                                               |
//! | 28     | 4    | record size in bytes (u32, meta + shares, must match the layout)|
//! | 32     | 8    | committed record count (u64)                                  |
//! | 40     | 8    | commit sequence number (u64)                                  |
//! | 48     | 16   | share-set id (same in the three parties' stores)              |
//! | 64     | 64   | fingerprint of the program that shared it (hex, zero-padded)  |
//! | 128    | 32   | records checksum (see [`RecordsSum`], [`RecordHash`])         |
//! | 160    | 8    | capacity: meta slots reserved (u64, >= count)                 |
//! | 168    | 56   | reserved, zero                                                |
//! | 224    | 32   | BLAKE3 of bytes 0..224 of this slot (derived key)             |
//!
//! A record has two parts kept in two regions of the file, so that the shares of all records
//! are one contiguous array (a party scans them in place from the memory map):
//! - its meta, `id (u64) | public mask (code_bits/8 bytes; none with secret masks)`, padded to
//!   8 bytes, in the meta region from [`RECORDS_OFFSET`], which has room for `capacity` records;
//! - its shares, in the shares region, which starts at the first 4096-byte boundary after the
//!   meta region and grows at the end of the file: rep3 shares are `own (n x W) | prev (n x W)`
//!   (each padded to 8 bytes), Shamir shares are `n x u16`; `n = code_bits`, times two with
//!   secret masks (codes, then mask bits), and `W` the word width of Z_2^k (2, 4 or 8 bytes).
//!
//! An append that would pass the capacity rewrites the file with a larger meta region (to a
//! temporary file, then renamed over the store).
//!
//! A store is keyed by its **schema**, what determines the share layout: input kind, code
//! length, mask mode, sharing with its parameter, and ring. Any program whose gallery input has
//! the same schema may use it ([`check_store_compatible`]), so editing a program (a comment, a
//! threshold) does not make its galleries unusable. The fingerprint field only says which
//! program shared the store (`irisc store info` shows it). Version 1 stores bound the store to
//! that fingerprint; their headers hold the same schema fields (byte 15 was reserved, zero, which
//! reads as iris), so they are read and checked by schema too, and keep version 1 on append.
//!
//! Version 3 changed only the hash of each record in the records checksum ([`RecordHash`]):
//! versions 1 and 2 hash with keyed BLAKE3, version 3 with XXH3-128. The checksum guards
//! against accidental damage only (anyone who can write the file can recompute it), which a
//! 128-bit non-cryptographic hash does as well, at several times the speed: BLAKE3 over the
//! three stores was a third of the dealer's time. Older stores keep their version, and their
//! hash, on append.

use std::fmt;
use std::path::Path;

use twox_hash::xxhash3_128 as xxh3;

use super::error::StoreError;
use crate::io::share_file::RingVec;
use crate::iris::check_code_bits;
use crate::vocab::Sharing;

pub const STORE_MAGIC: [u8; 8] = *b"IRISCGAL";
pub const STORE_VERSION: u32 = 3;
/// The oldest format version this build still reads (its fingerprint was a binding).
pub const STORE_VERSION_OLDEST: u32 = 1;
pub const SLOT_LEN: usize = 256;
/// Two slots; a multiple of 8 so that records (and every field in them) stay 8-byte aligned.
pub const RECORDS_OFFSET: u64 = 2 * SLOT_LEN as u64;
pub const FINGERPRINT_MAX: usize = 64;
/// The shares region starts at a multiple of this (a page), so its map is page-aligned.
pub const SHARES_ALIGN: u64 = 4096;
/// The smallest meta capacity a store is created with.
pub const MIN_CAPACITY: u64 = 1024;

const SLOT_HASHED: usize = 224;
/// Byte 15: the input kind; stores hold iris galleries only.
const STORE_KIND_IRIS: u8 = 0;
const SLOT_KEY: &str = "irisc gallery store 2024 header slot v1";
const RECORD_KEY: &str = "irisc gallery store 2024 record v1";
/// The XXH3 seed of version 3's record hash (the bytes `irisc v3`), so that a record's hash
/// differs from a plain XXH3 of the same bytes.
const RECORD_SEED_V3: u64 = u64::from_le_bytes(*b"irisc v3");

/// The v3 record hasher's seed and secret: the secret XXH3 derives from [`RECORD_SEED_V3`],
/// derived once per process. `XxHash3_128::with_seed` holds the same seed and secret, but
/// derives and allocates the secret for every record (3 % of dealing a gallery). `None` only
/// if the crate refused its own default secret length (then each record derives its own).
fn record_secret_v3() -> Option<xxh3::SecretBuffer<&'static [u8; xxh3::DEFAULT_SECRET_LENGTH]>> {
    xxh3::SecretBuffer::new(RECORD_SEED_V3, record_secret_bytes_v3()?).ok()
}

/// The secret of [`record_secret_v3`], as bytes.
fn record_secret_bytes_v3() -> Option<&'static [u8; xxh3::DEFAULT_SECRET_LENGTH]> {
    static SECRET: std::sync::LazyLock<Option<[u8; xxh3::DEFAULT_SECRET_LENGTH]>> =
        std::sync::LazyLock::new(|| {
            xxh3::SecretBuffer::with_seed(RECORD_SEED_V3, [0u8; xxh3::DEFAULT_SECRET_LENGTH])
                .ok()
                .map(|b| b.into_secret())
        });
    SECRET.as_ref()
}

const _: () = assert!(xxh3::DEFAULT_SECRET_LENGTH == super::xxh3_wide::SECRET_LEN);

/// XXH3-128 of `parts` written one after the other into `h`.
fn xxh3_of<S: xxh3::FixedBuffer>(mut h: xxh3::RawHasher<S>, parts: &[&[u8]]) -> u128 {
    for p in parts {
        h.write(p);
    }
    h.finish_128()
}

/// The secret-sharing scheme of a store's records: the store's on-disk encoding of a
/// [`Sharing`] with its parameter (d of GR(2^16, d), p of F_p), made by `From<Sharing>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreSharing {
    /// 3-party replicated sharing over Z_2^k: two components (x_i, x_{i-1}) per element.
    Rep3,
    /// Shamir sharing over the Galois ring GR(2^16, d): one 16-bit share per code element.
    ShamirGr { degree: u8 },
    /// Shamir sharing over F_p, p < 2^16: one 16-bit share per code element.
    ShamirPrime { modulus: u16 },
}

/// A program's sharing as the store encodes it: F_p with its modulus, GR(2^16, d) with d.
impl From<Sharing> for StoreSharing {
    fn from(sharing: Sharing) -> StoreSharing {
        match sharing {
            Sharing::Rep3 => StoreSharing::Rep3,
            Sharing::Fp => StoreSharing::ShamirPrime {
                modulus: crate::share::fp::P,
            },
            Sharing::Gr2 => StoreSharing::ShamirGr { degree: 2 },
            Sharing::Gr4 => StoreSharing::ShamirGr { degree: 4 },
        }
    }
}

impl StoreSharing {
    /// Share components stored per code element.
    pub fn components(self) -> usize {
        match self {
            StoreSharing::Rep3 => 2,
            StoreSharing::ShamirGr { .. } | StoreSharing::ShamirPrime { .. } => 1,
        }
    }

    /// Bytes of one stored share word; `None` where `ring_bits` does not fit the sharing.
    pub fn element_bytes(self, ring_bits: u32) -> Option<usize> {
        match self {
            StoreSharing::Rep3 => RingVec::word_bytes_for(ring_bits),
            // The Shamir sharings store 16-bit shares whatever the program's ring.
            _ if ring_bits == 16 => Some(2),
            _ => None,
        }
    }

    fn code(self) -> (u8, u32) {
        match self {
            StoreSharing::Rep3 => (0, 0),
            StoreSharing::ShamirGr { degree } => (1, u32::from(degree)),
            StoreSharing::ShamirPrime { modulus } => (2, u32::from(modulus)),
        }
    }

    fn from_code(code: u8, param: u32) -> Result<Self, String> {
        let s = match code {
            0 if param == 0 => StoreSharing::Rep3,
            1 => StoreSharing::ShamirGr {
                degree: u8::try_from(param).map_err(|_| format!("GR degree {param}"))?,
            },
            2 => StoreSharing::ShamirPrime {
                modulus: u16::try_from(param).map_err(|_| format!("modulus {param} >= 2^16"))?,
            },
            _ => return Err(format!("unknown sharing {code} (parameter {param})")),
        };
        s.check()?;
        Ok(s)
    }

    /// Three parties need three distinct non-zero evaluation points whose differences are
    /// invertible: 2^d >= 4 in GR(2^16, d), p > 3 in F_p.
    fn check(self) -> Result<(), String> {
        match self {
            StoreSharing::Rep3 => Ok(()),
            StoreSharing::ShamirGr { degree } if degree < 2 => Err(format!(
                "GR(2^16, {degree}) has too few exceptional points for three parties (d >= 2)"
            )),
            StoreSharing::ShamirPrime { modulus } if modulus <= 3 || !is_prime(modulus) => {
                Err(format!("F_{modulus}: the modulus must be a prime > 3"))
            }
            _ => Ok(()),
        }
    }
}

fn is_prime(p: u16) -> bool {
    let p = u32::from(p);
    p >= 2 && (2..).take_while(|d| d * d <= p).all(|d| p % d != 0)
}

impl fmt::Display for StoreSharing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreSharing::Rep3 => f.write_str("rep3"),
            StoreSharing::ShamirGr { degree } => write!(f, "Shamir over GR(2^16, {degree})"),
            StoreSharing::ShamirPrime { modulus } => write!(f, "Shamir over F_{modulus}"),
        }
    }
}

/// What a store is created with; fixed for its lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreParams {
    /// The fingerprint of the program that shared the gallery (lowercase hex, 1..=64 digits):
    /// information for people; any program with the same schema may use the store.
    pub fingerprint: String,
    pub party: u8,
    pub sharing: StoreSharing,
    pub ring_bits: u32,
    pub code_bits: u32,
    /// Masks secret-shared after the codes (no plain mask stored) instead of public.
    pub secret_mask: bool,
    pub set_id: [u8; 16],
}

/// Sizes and offsets of one record's two parts; every offset and size is a multiple of 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordLayout {
    /// `meta_size + share_size`: the bytes one record takes.
    pub size: usize,
    /// Bytes of `id | mask` in the meta region.
    pub meta_size: usize,
    pub mask_offset: usize,
    /// Public mask bytes (0 with secret masks).
    pub mask_len: usize,
    /// Bytes of one record's shares in the shares region.
    pub share_size: usize,
    /// Elements per component (`code_bits`, doubled with secret masks).
    pub elements: usize,
    /// Bytes of one component, before padding.
    pub component_len: usize,
    /// Distance between the starts of the two rep3 components.
    pub component_stride: usize,
    pub element_bytes: usize,
}

impl RecordLayout {
    /// Where the shares region starts for a meta region of `capacity` records.
    pub fn shares_start(&self, capacity: u64) -> Option<u64> {
        (self.meta_size as u64)
            .checked_mul(capacity)?
            .checked_add(RECORDS_OFFSET)?
            .checked_next_multiple_of(SHARES_ALIGN)
    }

    /// The file length that holds `count` records with a meta region of `capacity`.
    pub fn file_len(&self, capacity: u64, count: u64) -> Option<u64> {
        (self.share_size as u64)
            .checked_mul(count)?
            .checked_add(self.shares_start(capacity)?)
    }
}

fn pad8(n: usize) -> Option<usize> {
    n.checked_add(7).map(|n| n & !7)
}

impl StoreParams {
    /// Checks every field's range and computes the record layout.
    pub fn layout(&self) -> Result<RecordLayout, String> {
        check_fingerprint(&self.fingerprint)?;
        if self.party > 2 {
            return Err(format!("party {} (must be 0, 1 or 2)", self.party));
        }
        self.sharing.check()?;
        let element_bytes = self.sharing.element_bytes(self.ring_bits).ok_or_else(|| {
            format!(
                "ring Z_2^{} does not fit {} (rep3: 1..=64 bits; Shamir: 16-bit shares)",
                self.ring_bits, self.sharing
            )
        })?;
        check_code_bits(self.code_bits as usize).map_err(|e| e.to_string())?;
        if let StoreSharing::ShamirGr { degree } = self.sharing {
            if !self.code_bits.is_multiple_of(u32::from(degree)) {
                return Err(format!(
                    "{}-bit codes do not pack into GR(2^16, {degree}) elements",
                    self.code_bits
                ));
            }
        }
        let too_big = || format!("{}-bit codes make records too large", self.code_bits);
        let sections = if self.secret_mask { 2 } else { 1 };
        let elements = (self.code_bits as usize)
            .checked_mul(sections)
            .ok_or_else(too_big)?;
        let mask_len = if self.secret_mask {
            0
        } else {
            self.code_bits as usize / 8
        };
        let component_len = elements.checked_mul(element_bytes).ok_or_else(too_big)?;
        let component_stride = pad8(component_len).ok_or_else(too_big)?;
        let mask_offset = 8;
        let meta_size = pad8(mask_len)
            .and_then(|m| m.checked_add(mask_offset))
            .ok_or_else(too_big)?;
        let share_size = component_stride
            .checked_mul(self.sharing.components())
            .ok_or_else(too_big)?;
        let size = share_size
            .checked_add(meta_size)
            .filter(|&s| u32::try_from(s).is_ok())
            .ok_or_else(too_big)?;
        Ok(RecordLayout {
            size,
            meta_size,
            mask_offset,
            mask_len,
            share_size,
            elements,
            component_len,
            component_stride,
            element_bytes,
        })
    }
}

pub(crate) fn check_fingerprint(fp: &str) -> Result<(), String> {
    if fp.is_empty() || fp.len() > FINGERPRINT_MAX {
        return Err(format!(
            "a program fingerprint has 1 to {FINGERPRINT_MAX} hex digits, not {}",
            fp.len()
        ));
    }
    if !fp
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!("program fingerprint {fp:?} is not lowercase hex"));
    }
    Ok(())
}

/// How a store hashes one record, `index (u64 LE) | meta | shares`, into its [`RecordsSum`]:
/// fixed by the store's format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordHash {
    /// Versions 1 and 2: BLAKE3 in derive-key mode, 256 bits.
    Blake3,
    /// Version 3: XXH3-128 with a fixed seed, zero-extended to 256 bits.
    Xxh3,
}

impl RecordHash {
    /// The record hash of format `version`.
    pub fn of_version(version: u32) -> RecordHash {
        if version >= 3 {
            RecordHash::Xxh3
        } else {
            RecordHash::Blake3
        }
    }

    /// The checksum term of record `index`, given as its meta bytes and its share bytes.
    pub fn record(self, index: u64, meta: &[u8], shares: &[u8]) -> RecordsSum {
        match self {
            RecordHash::Blake3 => {
                let mut h = blake3::Hasher::new_derive_key(RECORD_KEY);
                h.update(&index.to_le_bytes());
                h.update(meta);
                h.update(shares);
                RecordsSum(*h.finalize().as_bytes())
            }
            RecordHash::Xxh3 => {
                let parts: [&[u8]; 3] = [&index.to_le_bytes(), meta, shares];
                RecordsSum::from_u128(match record_secret_v3() {
                    Some(secret) => xxh3_of(xxh3::RawHasher::new(secret), &parts),
                    None => xxh3_of(
                        xxh3::RawHasher::new(xxh3::SecretBuffer::allocate_with_seed(
                            RECORD_SEED_V3,
                        )),
                        &parts,
                    ),
                })
            }
        }
    }

    /// The checksum term of one record laid out contiguously as `index | meta | shares` (what
    /// the dealer has in cache): equal to [`RecordHash::record`] of its parts.
    pub fn contiguous(self, index_meta_shares: &[u8]) -> RecordsSum {
        match self {
            RecordHash::Blake3 => {
                let mut h = blake3::Hasher::new_derive_key(RECORD_KEY);
                h.update(index_meta_shares);
                RecordsSum(*h.finalize().as_bytes())
            }
            RecordHash::Xxh3 => RecordsSum::from_u128(
                record_secret_bytes_v3()
                    .and_then(|secret| super::xxh3_wide::hash(secret, index_meta_shares))
                    .unwrap_or_else(|| {
                        twox_hash::XxHash3_128::oneshot_with_seed(RECORD_SEED_V3, index_meta_shares)
                    }),
            ),
        }
    }

    /// [`RecordHash::contiguous`] of `index_meta_shares`, with its bytes from `copy_from` on
    /// copied into `dst` by streaming stores ([`crate::sys::copy_streaming`]): in one pass
    /// over the record where the v3 hash runs in AVX-512 registers
    /// ([`super::xxh3_wide::hash_and_stream`]), else the hash and then the copy. The caller
    /// calls [`crate::sys::fence_streaming_stores`] before `dst` is read elsewhere.
    ///
    /// # Panics
    /// If `dst` is not `index_meta_shares.len() - copy_from` bytes long.
    pub fn contiguous_and_stream(
        self,
        index_meta_shares: &[u8],
        copy_from: usize,
        dst: &mut [u8],
    ) -> RecordsSum {
        if self == RecordHash::Xxh3 {
            if let Some(h) = record_secret_bytes_v3().and_then(|secret| {
                super::xxh3_wide::hash_and_stream(secret, index_meta_shares, copy_from, dst)
            }) {
                return RecordsSum::from_u128(h);
            }
        }
        let sum = self.contiguous(index_meta_shares);
        crate::sys::copy_streaming(dst, &index_meta_shares[copy_from..]);
        sum
    }

    /// [`RecordHash::contiguous_and_stream`] of the record whose bytes are `parts` one after
    /// the other (`index | meta` first): the dealer's replicated records, whose components it
    /// writes once for the two parties that hold each.
    ///
    /// # Panics
    /// If `dst` is not the parts' total length less `copy_from` bytes long.
    pub fn parts_and_stream(self, parts: &[&[u8]], copy_from: usize, dst: &mut [u8]) -> RecordsSum {
        if self == RecordHash::Xxh3 {
            if let Some(h) = record_secret_bytes_v3().and_then(|secret| {
                super::xxh3_wide::hash_parts_and_stream(secret, parts, copy_from, dst)
            }) {
                return RecordsSum::from_u128(h);
            }
        }
        let sum = match self {
            RecordHash::Blake3 => {
                let mut h = blake3::Hasher::new_derive_key(RECORD_KEY);
                for p in parts {
                    h.update(p);
                }
                RecordsSum(*h.finalize().as_bytes())
            }
            RecordHash::Xxh3 => RecordsSum::from_u128(xxh3_of(
                xxh3::RawHasher::new(xxh3::SecretBuffer::allocate_with_seed(RECORD_SEED_V3)),
                parts,
            )),
        };
        let (mut start, mut done) = (0, 0);
        for p in parts {
            let end = start + p.len();
            let from = (copy_from + done).max(start);
            if from < end {
                let take = end - from;
                crate::sys::copy_streaming(&mut dst[done..done + take], &p[from - start..]);
                done += take;
            }
            start = end;
        }
        assert_eq!(
            done,
            dst.len(),
            "parts_and_stream: the destination's length"
        );
        sum
    }
}

/// The order-independent sum (mod 2^256) of a hash of each `(index, record)` ([`RecordHash`]).
///
/// A sum instead of one hash over the whole area lets an append extend the checksum from the
/// new records alone, while a reader still checks every byte of every record. It detects
/// accidental damage, not tampering: whoever can write the file can recompute it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordsSum(pub [u8; 32]);

impl RecordsSum {
    fn from_u128(v: u128) -> RecordsSum {
        let mut b = [0u8; 32];
        b[..16].copy_from_slice(&v.to_le_bytes());
        RecordsSum(b)
    }

    /// Adds another sum (of other records): the sum is order-free, so records hashed on
    /// different threads combine.
    pub fn add_sum(&mut self, other: &RecordsSum) {
        let mut carry = 0u128;
        for limb in 0..4 {
            let at = limb * 8;
            let a = u64::from_le_bytes(self.0[at..at + 8].try_into().unwrap_or([0; 8]));
            let b = u64::from_le_bytes(other.0[at..at + 8].try_into().unwrap_or([0; 8]));
            let s = u128::from(a) + u128::from(b) + carry;
            self.0[at..at + 8].copy_from_slice(&(s as u64).to_le_bytes());
            carry = s >> 64;
        }
    }

    /// Adds record `index`, given as its meta bytes and its share bytes, hashed by `hash`.
    pub fn add_record(&mut self, hash: RecordHash, index: u64, meta: &[u8], shares: &[u8]) {
        self.add_sum(&hash.record(index, meta, shares));
    }
}

/// One header slot: the store's parameters and its committed state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreHeader {
    pub version: u32,
    pub params: StoreParams,
    pub count: u64,
    /// Incremented by every commit; the slot with the higher one is the newer state.
    pub seq: u64,
    pub records_sum: RecordsSum,
    /// Records the meta region has room for (`count <= capacity`).
    pub capacity: u64,
}

impl StoreHeader {
    pub fn to_bytes(&self) -> Result<[u8; SLOT_LEN], String> {
        let layout = self.params.layout()?;
        let mut b = [0u8; SLOT_LEN];
        let (code, param) = self.params.sharing.code();
        b[0..8].copy_from_slice(&STORE_MAGIC);
        b[8..12].copy_from_slice(&self.version.to_le_bytes());
        b[12] = self.params.party;
        b[13] = code;
        b[14] = u8::from(self.params.secret_mask);
        b[15] = STORE_KIND_IRIS;
        b[16..20].copy_from_slice(&param.to_le_bytes());
        b[20..24].copy_from_slice(&self.params.ring_bits.to_le_bytes());
        b[24..28].copy_from_slice(&self.params.code_bits.to_le_bytes());
        b[28..32].copy_from_slice(&(layout.size as u32).to_le_bytes());
        b[32..40].copy_from_slice(&self.count.to_le_bytes());
        b[40..48].copy_from_slice(&self.seq.to_le_bytes());
        b[48..64].copy_from_slice(&self.params.set_id);
        let fp = self.params.fingerprint.as_bytes();
        b[64..64 + fp.len()].copy_from_slice(fp);
        b[128..160].copy_from_slice(&self.records_sum.0);
        b[160..168].copy_from_slice(&self.capacity.to_le_bytes());
        let sum = slot_checksum(&b);
        b[SLOT_HASHED..].copy_from_slice(&sum);
        Ok(b)
    }

    /// The file length this header commits (meta region and committed shares), checked
    /// against overflow and `count <= capacity`.
    pub fn file_len(&self) -> Result<u64, String> {
        if self.count > self.capacity {
            return Err(format!(
                "{} records but room for {} in the meta region",
                self.count, self.capacity
            ));
        }
        self.params
            .layout()?
            .file_len(self.capacity, self.count)
            .ok_or_else(|| format!("{} records do not fit in a file", self.capacity))
    }
}

fn slot_checksum(slot: &[u8; SLOT_LEN]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key(SLOT_KEY);
    h.update(&slot[..SLOT_HASHED]);
    *h.finalize().as_bytes()
}

/// Why a slot is unusable; the classes decide which error the store reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SlotFault {
    Magic,
    Version(u32),
    Damaged(String),
}

impl fmt::Display for SlotFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SlotFault::Magic => f.write_str("bad magic"),
            SlotFault::Version(v) => write!(f, "format version {v}"),
            SlotFault::Damaged(d) => f.write_str(d),
        }
    }
}

/// Parses one slot; the checksum is checked before any field is trusted.
pub(crate) fn parse_slot(b: &[u8; SLOT_LEN]) -> Result<StoreHeader, SlotFault> {
    if b[0..8] != STORE_MAGIC {
        return Err(SlotFault::Magic);
    }
    let version = u32_at(b, 8);
    if !(STORE_VERSION_OLDEST..=STORE_VERSION).contains(&version) {
        return Err(SlotFault::Version(version));
    }
    if slot_checksum(b)[..] != b[SLOT_HASHED..] {
        return Err(SlotFault::Damaged("checksum mismatch".into()));
    }
    let bad = SlotFault::Damaged;
    if b[14] > 1 || b[168..SLOT_HASHED].iter().any(|&x| x != 0) {
        return Err(bad("reserved bytes are not zero".into()));
    }
    if b[15] != STORE_KIND_IRIS {
        return Err(bad(format!(
            "input kind {} (stores hold iris galleries only)",
            b[15]
        )));
    }
    let sharing = StoreSharing::from_code(b[13], u32_at(b, 16)).map_err(bad)?;
    let fp_len = b[64..128].iter().position(|&x| x == 0).unwrap_or(64);
    if b[64 + fp_len..128].iter().any(|&x| x != 0) {
        return Err(bad("fingerprint padding is not zero".into()));
    }
    let fingerprint = std::str::from_utf8(&b[64..64 + fp_len])
        .map_err(|_| bad("fingerprint is not text".into()))?
        .to_owned();
    let mut set_id = [0u8; 16];
    set_id.copy_from_slice(&b[48..64]);
    let mut sum = [0u8; 32];
    sum.copy_from_slice(&b[128..160]);
    let header = StoreHeader {
        version,
        params: StoreParams {
            fingerprint,
            party: b[12],
            sharing,
            ring_bits: u32_at(b, 20),
            code_bits: u32_at(b, 24),
            secret_mask: b[14] == 1,
            set_id,
        },
        count: u64_at(b, 32),
        seq: u64_at(b, 40),
        records_sum: RecordsSum(sum),
        capacity: u64_at(b, 160),
    };
    let layout = header.params.layout().map_err(bad)?;
    if layout.size as u64 != u64::from(u32_at(b, 28)) {
        return Err(bad(format!(
            "record size {} but the layout gives {}",
            u32_at(b, 28),
            layout.size
        )));
    }
    header.file_len().map_err(bad)?;
    Ok(header)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap_or([0; 4]))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]))
}

/// What a party's program expects of its gallery store: the schema of its gallery input (and
/// the party). The program itself is not part of it: any program whose input has this schema
/// may use the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreExpected {
    /// The input's name in the program, for messages.
    pub input: String,
    pub party: u8,
    pub sharing: StoreSharing,
    pub ring_bits: u32,
    pub code_bits: u32,
    pub secret_mask: bool,
}

fn masks_text(secret: bool) -> &'static str {
    if secret {
        "secret-shared"
    } else {
        "public"
    }
}

/// The first schema field in which a store's header differs from what a program expects, as
/// (field name, the store's value, the program's value with its verb); `None` when the schema
/// is the same.
pub fn schema_difference(
    params: &StoreParams,
    expected: &StoreExpected,
) -> Option<(&'static str, String, String)> {
    if params.code_bits != expected.code_bits {
        return Some((
            "code length",
            format!("codes of {} bits", params.code_bits),
            format!("is {} bits", expected.code_bits),
        ));
    }
    if params.secret_mask != expected.secret_mask {
        return Some((
            "mask mode",
            format!("{} masks", masks_text(params.secret_mask)),
            format!("has {} masks", masks_text(expected.secret_mask)),
        ));
    }
    if params.sharing != expected.sharing {
        return Some((
            "sharing",
            format!("{} shares", params.sharing),
            format!("is shared as {}", expected.sharing),
        ));
    }
    // Replicated shares over a larger ring reduce locally to the program's (x mod 2^k is a ring
    // homomorphism; the loader reduces them), so a threshold that shrinks the ring keeps the
    // store usable. A smaller ring cannot be lifted without a protocol.
    let reducible = params.sharing == StoreSharing::Rep3 && params.ring_bits > expected.ring_bits;
    if params.ring_bits != expected.ring_bits && !reducible {
        return Some((
            "ring",
            format!("shares over Z_2^{}", params.ring_bits),
            format!("is computed over Z_2^{}", expected.ring_bits),
        ));
    }
    None
}

/// The fields of a store's schema, as `irisc store info` and messages show it.
pub fn schema_text(params: &StoreParams) -> String {
    let sharing = match params.sharing {
        StoreSharing::Rep3 => format!("rep3 over Z_2^{}", params.ring_bits),
        // The Shamir sharings' words are always 16 bits: the ring says nothing more.
        shamir => shamir.to_string(),
    };
    format!(
        "iris codes of {} bits, {} masks, shared as {sharing}",
        params.code_bits,
        masks_text(params.secret_mask),
    )
}

/// Checks that the store at `path` with `header` has the schema of the program's gallery input
/// and is this party's; the error names the field that differs and both values.
pub fn check_store_compatible(
    path: &Path,
    header: &StoreHeader,
    expected: &StoreExpected,
) -> Result<(), StoreError> {
    let p = &header.params;
    let name = &expected.input;
    let fail = |detail: String| {
        Err(StoreError::Incompatible {
            path: path.to_path_buf(),
            detail,
        })
    };
    if p.party != expected.party {
        return fail(format!(
            "holds party {}'s shares but this is party {}: pass this party's own store (the file named p{})",
            p.party, expected.party, expected.party
        ));
    }
    if let Some((field, held, wanted)) = schema_difference(p, expected) {
        return fail(format!(
            "holds {held} but this program's input `{name}` {wanted} (the {field} differs): share the gallery again with `irisc share --program P.irs` and the choices (--sharing, ...) the program is built with, or build the program for the store's schema ({})",
            schema_text(p)
        ));
    }
    Ok(())
}
