use std::fs;
use std::path::{Path, PathBuf};

use super::*;

const CODE_BITS: u32 = 128;

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// Owned test data for one record.
#[derive(Debug, Clone, PartialEq)]
enum Owned {
    R16(Vec<u16>, Vec<u16>),
    R32(Vec<u32>, Vec<u32>),
    R64(Vec<u64>, Vec<u64>),
    Shamir(Vec<u16>),
}

struct Rec {
    id: u64,
    mask: Vec<u8>,
    shares: Owned,
}

impl Rec {
    fn as_record(&self) -> Record<'_> {
        let shares = match &self.shares {
            Owned::R16(a, b) => Shares::Rep3U16 { own: a, prev: b },
            Owned::R32(a, b) => Shares::Rep3U32 { own: a, prev: b },
            Owned::R64(a, b) => Shares::Rep3U64 { own: a, prev: b },
            Owned::Shamir(s) => Shares::Shamir(s),
        };
        Record {
            id: self.id,
            mask: &self.mask,
            shares,
        }
    }
}

fn params(sharing: StoreSharing, ring_bits: u32) -> StoreParams {
    StoreParams {
        fingerprint: "0123456789abcdef".into(),
        party: 1,
        sharing,
        ring_bits,
        code_bits: CODE_BITS,
        secret_mask: false,
        set_id: [7; 16],
    }
}

/// Record `id` of a store with `p`, derived from the id so that any copy can be checked.
fn rec(p: &StoreParams, id: u64) -> Rec {
    let n = p.code_bits as usize;
    let v = |j: usize, salt: u64| splitmix(id ^ (salt << 56) ^ ((j as u64) << 20));
    let ring = crate::io::share_file::ring_mask(p.ring_bits).unwrap_or(u64::MAX);
    let comp = |salt| (0..n).map(|j| v(j, salt) & ring).collect::<Vec<u64>>();
    let shares = match (p.sharing, p.sharing.element_bytes(p.ring_bits)) {
        (StoreSharing::Rep3, Some(2)) => Owned::R16(
            comp(1).iter().map(|&x| x as u16).collect(),
            comp(2).iter().map(|&x| x as u16).collect(),
        ),
        (StoreSharing::Rep3, Some(4)) => Owned::R32(
            comp(1).iter().map(|&x| x as u32).collect(),
            comp(2).iter().map(|&x| x as u32).collect(),
        ),
        (StoreSharing::Rep3, _) => Owned::R64(comp(1), comp(2)),
        (StoreSharing::ShamirPrime { modulus }, _) => Owned::Shamir(
            (0..n)
                .map(|j| (v(j, 3) % u64::from(modulus)) as u16)
                .collect(),
        ),
        _ => Owned::Shamir((0..n).map(|j| v(j, 3) as u16).collect()),
    };
    Rec {
        id,
        mask: (0..n / 8).map(|j| v(j, 4) as u8).collect(),
        shares,
    }
}

fn append_ids(path: &Path, p: &StoreParams, ids: std::ops::Range<u64>) -> u64 {
    let recs: Vec<Rec> = ids.map(|i| rec(p, i)).collect();
    let refs: Vec<Record<'_>> = recs.iter().map(Rec::as_record).collect();
    StoreWriter::open(path).unwrap().append(&refs).unwrap()
}

/// Asserts the store holds exactly records `0..count` as `rec` makes them.
fn assert_holds(path: &Path, p: &StoreParams, count: u64) {
    let store = Store::open(path).unwrap();
    assert_eq!(store.len() as u64, count);
    assert_eq!(store.records().len() as u64, count);
    for (i, r) in store.records().enumerate() {
        let want = rec(p, i as u64);
        assert_eq!(r, want.as_record(), "record {i}");
        assert_eq!(store.record(i), Some(want.as_record()));
    }
    assert!(store.record(count as usize).is_none());
}

fn setup(sharing: StoreSharing, ring_bits: u32) -> (tempfile::TempDir, PathBuf, StoreParams) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gallery.p1.store");
    let p = params(sharing, ring_bits);
    create(&path, &p).unwrap();
    (dir, path, p)
}

fn flip(path: &Path, at: u64) {
    let mut b = fs::read(path).unwrap();
    b[at as usize] ^= 0x10;
    fs::write(path, b).unwrap();
}

fn err(path: &Path) -> String {
    Store::open(path).unwrap_err().to_string()
}

#[test]
fn round_trip_each_sharing() {
    for (sharing, ring) in [
        (StoreSharing::Rep3, 16),
        (StoreSharing::Rep3, 13),
        (StoreSharing::Rep3, 32),
        (StoreSharing::Rep3, 64),
        (StoreSharing::ShamirGr { degree: 4 }, 16),
        (StoreSharing::ShamirPrime { modulus: 65521 }, 16),
    ] {
        let (_d, path, p) = setup(sharing, ring);
        assert_holds(&path, &p, 0);
        assert_eq!(append_ids(&path, &p, 0..5), 5);
        assert_eq!(append_ids(&path, &p, 5..8), 8);
        assert_holds(&path, &p, 8);
        let store = Store::open(&path).unwrap();
        assert_eq!(store.header().params, p);
        assert_eq!(store.meta_bytes().as_ptr().align_offset(8), 0);
        assert_eq!(store.shares_bytes().as_ptr().align_offset(4096), 0);
        let l = store.layout();
        assert_eq!(l.size % 8, 0);
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            l.shares_start(MIN_CAPACITY).unwrap() + 8 * l.share_size as u64
        );
        if let Some(words) = store.shamir_words() {
            assert!(words.is_mapped());
            assert_eq!(words.len(), 8 * CODE_BITS as usize);
            for (i, r) in store.records().enumerate() {
                let n = CODE_BITS as usize;
                assert_eq!(r.shares, Shares::Shamir(&words[i * n..(i + 1) * n]));
            }
        }
    }
}

#[test]
fn layout_sizes() {
    let l = params(StoreSharing::Rep3, 16).layout().unwrap();
    assert_eq!((l.meta_size, l.share_size), (8 + 16, 2 * 256));
    assert_eq!(l.size, 8 + 16 + 2 * 256);
    let l = params(StoreSharing::Rep3, 64).layout().unwrap();
    assert_eq!(l.size, 8 + 16 + 2 * 1024);
    let l = params(StoreSharing::ShamirPrime { modulus: 65521 }, 16)
        .layout()
        .unwrap();
    assert_eq!(l.size, 8 + 16 + 256);
    // Secret masks: no plain mask, the mask bits shared after the code bits.
    let l = StoreParams {
        secret_mask: true,
        ..params(StoreSharing::ShamirGr { degree: 4 }, 16)
    }
    .layout()
    .unwrap();
    assert_eq!((l.meta_size, l.share_size, l.elements), (8, 512, 256));
    assert_eq!(
        l.shares_start(1024),
        Some(RECORDS_OFFSET + 8192 + 4096 - 512)
    );
}

#[test]
fn truncated_store_is_refused() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 16);
    append_ids(&path, &p, 0..4);
    let len = fs::metadata(&path).unwrap().len();
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 10)
        .unwrap();
    let e = err(&path);
    assert!(
        e.contains(&format!(
            "is truncated: its header commits 4 records in {len} bytes but the file has {}",
            len - 10
        )),
        "{e}"
    );
    assert!(matches!(
        StoreWriter::open(&path),
        Err(StoreError::Truncated { count: 4, .. })
    ));
    // Shorter than the header slots.
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(300)
        .unwrap();
    assert!(
        err(&path).contains("header slots need 512"),
        "{}",
        err(&path)
    );
}

#[test]
fn uncommitted_tail_is_ignored_then_cut() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 32);
    append_ids(&path, &p, 0..3);
    let len = fs::metadata(&path).unwrap().len();
    let mut b = fs::read(&path).unwrap();
    b.extend_from_slice(&[0xAB; 1000]);
    fs::write(&path, b).unwrap();
    assert_holds(&path, &p, 3);
    append_ids(&path, &p, 3..4);
    assert_holds(&path, &p, 4);
    assert_eq!(
        fs::metadata(&path).unwrap().len(),
        len + p.layout().unwrap().share_size as u64
    );
}

#[test]
fn damaged_header_slot_is_refused_then_repaired() {
    // Offsets: count (32), fingerprint (70), records checksum (130), slot checksum (240), magic.
    for (slot, field) in [
        (0u64, 32u64),
        (1, 32),
        (0, 70),
        (1, 130),
        (0, 240),
        (1, 255),
        (0, 1),
    ] {
        let (_d, path, p) = setup(StoreSharing::Rep3, 16);
        append_ids(&path, &p, 0..3);
        flip(&path, slot * SLOT_LEN as u64 + field);
        let e = err(&path);
        assert!(
            e.contains(&format!("header slot {slot} is damaged"))
                && e.contains(&format!("slot {} is intact with 3 records", 1 - slot)),
            "{e}"
        );
        assert_eq!(repair(&path).unwrap().count, 3);
        assert_holds(&path, &p, 3);
    }
}

#[test]
fn both_slots_damaged_is_refused() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 16);
    append_ids(&path, &p, 0..2);
    flip(&path, 130);
    flip(&path, SLOT_LEN as u64 + 40);
    let e = err(&path);
    assert!(e.contains("both header slots are damaged"), "{e}");
    assert!(matches!(
        StoreWriter::open(&path),
        Err(StoreError::HeaderCorrupted { .. })
    ));
}

#[test]
fn flipped_record_byte_is_refused() {
    let (_d, path, p) = setup(StoreSharing::ShamirGr { degree: 8 }, 16);
    append_ids(&path, &p, 0..5);
    let l = p.layout().unwrap();
    let (meta, size) = (l.meta_size as u64, l.share_size as u64);
    let start = l.shares_start(MIN_CAPACITY).unwrap();
    for at in [
        RECORDS_OFFSET,
        RECORDS_OFFSET + 3,
        RECORDS_OFFSET + 8 + 2,
        RECORDS_OFFSET + 4 * meta + 5,
        start,
        start + 2 * size + 100,
        start + 5 * size - 1,
    ] {
        let (_d2, copy, _) = setup(StoreSharing::Rep3, 16);
        fs::copy(&path, &copy).unwrap();
        flip(&copy, at);
        let e = err(&copy);
        assert!(
            e.contains("is corrupted: its records do not match the checksum"),
            "{e}"
        );
    }
    assert_holds(&path, &p, 5);
}

#[test]
fn not_a_store_and_other_versions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x");
    let mut b = vec![0u8; 4096];
    b[..8].copy_from_slice(b"IRISCSHR");
    fs::write(&path, &b).unwrap();
    // A new file with the default mode (0644 here): refused before it is read.
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let e = err(&path);
        assert!(
            e.contains("other users can access it (mode 0644)") && e.contains("chmod 600"),
            "{e}"
        );
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    }
    assert!(err(&path).contains("is not an irisc gallery store"));
    let (_d, path, _) = setup(StoreSharing::Rep3, 16);
    let mut b = fs::read(&path).unwrap();
    for slot in [0, SLOT_LEN] {
        b[slot + 8..slot + 12].copy_from_slice(&9u32.to_le_bytes());
    }
    fs::write(&path, b).unwrap();
    let e = err(&path);
    assert!(
        e.contains("format version 9") && e.contains("reads versions 1 to 3"),
        "{e}"
    );
}

#[test]
fn stores_are_accepted_by_schema_and_a_schema_change_names_the_field() {
    let (_d, path, _p) = setup(StoreSharing::Rep3, 16);
    let store = Store::open(&path).unwrap();
    // No program fingerprint in what a program expects: any program with this schema.
    let ok = StoreExpected {
        input: "db".into(),
        party: 1,
        sharing: StoreSharing::Rep3,
        ring_bits: 16,
        code_bits: CODE_BITS,
        secret_mask: false,
    };
    store.check_compatible(&ok).unwrap();
    // A rep3 store over a larger ring serves a program over a smaller one (reduced locally).
    store
        .check_compatible(&StoreExpected {
            ring_bits: 12,
            ..ok.clone()
        })
        .unwrap();
    let cases: [(StoreExpected, &str); 5] = [
        (
            StoreExpected {
                secret_mask: true,
                ..ok.clone()
            },
            "holds public masks but this program's input `db` has secret-shared masks (the mask mode differs)",
        ),
        (
            StoreExpected {
                ring_bits: 32,
                ..ok.clone()
            },
            "holds shares over Z_2^16 but this program's input `db` is computed over Z_2^32 (the ring differs)",
        ),
        (
            StoreExpected {
                sharing: StoreSharing::ShamirPrime { modulus: 65521 },
                ..ok.clone()
            },
            "holds rep3 shares but this program's input `db` is shared as Shamir over F_65521 (the sharing differs)",
        ),
        (
            StoreExpected {
                code_bits: 64,
                ..ok.clone()
            },
            "holds codes of 128 bits but this program's input `db` is 64 bits (the code length differs)",
        ),
        (
            StoreExpected {
                party: 2,
                ..ok.clone()
            },
            "holds party 1's shares but this is party 2",
        ),
    ];
    for (expected, msg) in cases {
        let e = store.check_compatible(&expected).unwrap_err().to_string();
        assert!(e.contains(msg), "{e}");
        assert!(e.contains(&path.display().to_string()), "{e}");
    }
    let e = store
        .check_compatible(&StoreExpected {
            code_bits: 64,
            ..ok.clone()
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("share the gallery again"), "{e}");
    assert!(
        e.contains("for the store's schema (iris codes of 128 bits, public masks, shared as rep3 over Z_2^16)"),
        "{e}"
    );
    let shamir = StoreParams {
        sharing: StoreSharing::ShamirGr { degree: 2 },
        secret_mask: true,
        ..params(StoreSharing::Rep3, 16)
    };
    assert_eq!(
        schema_text(&shamir),
        "iris codes of 128 bits, secret-shared masks, shared as Shamir over GR(2^16, 2)"
    );
}

/// Rewrites both header slots of the store at `path` as format `version` (1 or 2: the layout
/// of version 1 is that of version 2 with byte 15 reserved, zero, and the fingerprint a
/// binding; both hash records with BLAKE3), with the records checksum recomputed the old way
/// from the records, by hand: what a build of that version wrote.
fn make_old_version(path: &Path, version: u32) {
    let store = Store::open(path).unwrap();
    let mut h = store.header().clone();
    let l = *store.layout();
    let mut sum = RecordsSum::default();
    for i in 0..store.len() {
        let meta = &store.meta_bytes()[i * l.meta_size..(i + 1) * l.meta_size];
        let shares = &store.shares_bytes()[i * l.share_size..(i + 1) * l.share_size];
        let mut hasher = blake3::Hasher::new_derive_key("irisc gallery store 2024 record v1");
        hasher.update(&(i as u64).to_le_bytes());
        hasher.update(meta);
        hasher.update(shares);
        sum.add_sum(&RecordsSum(*hasher.finalize().as_bytes()));
    }
    drop(store);
    h.version = version;
    h.records_sum = sum;
    let slot = h.to_bytes().unwrap();
    let mut b = fs::read(path).unwrap();
    b[..SLOT_LEN].copy_from_slice(&slot);
    b[SLOT_LEN..2 * SLOT_LEN].copy_from_slice(&slot);
    fs::write(path, b).unwrap();
}

fn make_version_1(path: &Path) {
    make_old_version(path, 1);
}

/// A version 2 store (BLAKE3 record hashes) opens, is checked with its own hash (a flipped
/// share byte is found), and stays version 2 with BLAKE3 hashes on append.
#[test]
fn version_2_stores_are_checked_with_their_hash_and_stay_version_2_on_append() {
    let (_d, path, p) = setup(StoreSharing::ShamirGr { degree: 2 }, 16);
    let recs: Vec<Rec> = (0..4).map(|i| rec(&p, i)).collect();
    let refs: Vec<Record<'_>> = recs.iter().map(Rec::as_record).collect();
    StoreWriter::open(&path).unwrap().append(&refs).unwrap();
    let v3_sum = Store::open(&path).unwrap().header().records_sum;
    make_old_version(&path, 2);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.header().version, 2);
    assert_ne!(
        store.header().records_sum,
        v3_sum,
        "the two versions hash differently"
    );
    drop(store);
    assert_holds(&path, &p, 4);
    let more: Vec<Rec> = (4..7).map(|i| rec(&p, i)).collect();
    let refs: Vec<Record<'_>> = more.iter().map(Rec::as_record).collect();
    StoreWriter::open(&path).unwrap().append(&refs).unwrap();
    assert_eq!(Store::open(&path).unwrap().header().version, 2);
    assert_holds(&path, &p, 7);
    // A version 2 checksum recomputed by hand over all seven records is what the header holds.
    let held = Store::open(&path).unwrap().header().records_sum;
    make_old_version(&path, 2);
    assert_eq!(Store::open(&path).unwrap().header().records_sum, held);
    // One flipped byte in the last record's shares is found.
    let mut b = fs::read(&path).unwrap();
    let last = b.len() - 3;
    b[last] ^= 0x10;
    fs::write(&path, b).unwrap();
    assert!(err(&path).contains("its records do not match the checksum"));
}

/// Version 3's record hash is XXH3-128 with the format's seed over `index | meta | shares`,
/// zero-extended, summed: recomputed here from the XXH3 definition, independently of the
/// store's own code.
#[test]
fn version_3_checksums_are_seeded_xxh3_sums() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 16);
    let recs: Vec<Rec> = (0..5).map(|i| rec(&p, i)).collect();
    let refs: Vec<Record<'_>> = recs.iter().map(Rec::as_record).collect();
    StoreWriter::open(&path).unwrap().append(&refs).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.header().version, 3);
    let l = *store.layout();
    let mut total = [0u128; 2];
    for i in 0..5 {
        let mut bytes = (i as u64).to_le_bytes().to_vec();
        bytes.extend_from_slice(&store.meta_bytes()[i * l.meta_size..(i + 1) * l.meta_size]);
        bytes.extend_from_slice(&store.shares_bytes()[i * l.share_size..(i + 1) * l.share_size]);
        let h = xxhash_rust::xxh3::xxh3_128_with_seed(&bytes, u64::from_le_bytes(*b"irisc v3"));
        let (lo, carry) = total[0].overflowing_add(h);
        total = [lo, total[1] + u128::from(carry)];
    }
    let mut want = [0u8; 32];
    want[..16].copy_from_slice(&total[0].to_le_bytes());
    want[16..].copy_from_slice(&total[1].to_le_bytes());
    assert_eq!(store.header().records_sum.0, want);
}

#[test]
fn version_1_stores_load_by_schema_and_stay_version_1_on_append() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 16);
    let recs: Vec<Rec> = (0..3).map(|i| rec(&p, i)).collect();
    let refs: Vec<Record<'_>> = recs.iter().map(Rec::as_record).collect();
    StoreWriter::open(&path).unwrap().append(&refs).unwrap();
    make_version_1(&path);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.header().version, 1);
    assert_eq!(store.header().params.fingerprint, p.fingerprint);
    assert_holds(&path, &p, 3);
    let ok = StoreExpected {
        input: "db".into(),
        party: 1,
        sharing: StoreSharing::Rep3,
        ring_bits: 16,
        code_bits: CODE_BITS,
        secret_mask: false,
    };
    store.check_compatible(&ok).unwrap();
    let e = store
        .check_compatible(&StoreExpected {
            code_bits: 256,
            ..ok
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("the code length differs"), "{e}");
    drop(store);
    let more: Vec<Rec> = (3..5).map(|i| rec(&p, i)).collect();
    let refs: Vec<Record<'_>> = more.iter().map(Rec::as_record).collect();
    StoreWriter::open(&path).unwrap().append(&refs).unwrap();
    assert_holds(&path, &p, 5);
    assert_eq!(Store::open(&path).unwrap().header().version, 1);
}

#[test]
fn new_stores_are_version_3_with_the_iris_kind_byte() {
    let (_d, path, _p) = setup(StoreSharing::Rep3, 16);
    let b = fs::read(&path).unwrap();
    for slot in [0, SLOT_LEN] {
        assert_eq!(b[slot + 8..slot + 12], 3u32.to_le_bytes());
        assert_eq!(b[slot + 15], 0, "input kind iris");
    }
}

#[test]
fn invalid_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bad = [
        StoreParams {
            fingerprint: "XYZ".into(),
            ..params(StoreSharing::Rep3, 16)
        },
        StoreParams {
            fingerprint: "a".repeat(65),
            ..params(StoreSharing::Rep3, 16)
        },
        params(StoreSharing::ShamirPrime { modulus: 65535 }, 16),
        params(StoreSharing::ShamirGr { degree: 1 }, 16),
        params(StoreSharing::ShamirGr { degree: 4 }, 32),
        params(StoreSharing::Rep3, 65),
        StoreParams {
            code_bits: 100,
            ..params(StoreSharing::Rep3, 16)
        },
        StoreParams {
            party: 3,
            ..params(StoreSharing::Rep3, 16)
        },
    ];
    for (i, p) in bad.iter().enumerate() {
        let path = dir.path().join(format!("s{i}"));
        assert!(
            matches!(create(&path, p), Err(StoreError::Invalid { .. })),
            "{p:?}"
        );
        assert!(!path.exists());
    }
}

#[test]
fn create_never_overwrites() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 16);
    append_ids(&path, &p, 0..2);
    assert!(matches!(create(&path, &p), Err(StoreError::Exists { .. })));
    assert_holds(&path, &p, 2);
    let leftovers = fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(leftovers, 1);
}

#[test]
fn bad_records_are_refused_and_change_nothing() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 13);
    append_ids(&path, &p, 0..2);
    let mut w = StoreWriter::open(&path).unwrap();
    let good = rec(&p, 2);
    let mut big = rec(&p, 2);
    if let Owned::R16(own, _) = &mut big.shares {
        own[5] = 1 << 13;
    }
    let mut short_mask = rec(&p, 2);
    short_mask.mask.pop();
    let wrong_width = rec(&params(StoreSharing::Rep3, 32), 2);
    for bad in [&big, &short_mask, &wrong_width] {
        let e = w
            .append(&[good.as_record(), bad.as_record()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("record 1 (id 2)"), "{e}");
    }
    drop(w);
    assert_holds(&path, &p, 2);

    let (_d, path, p) = setup(StoreSharing::ShamirPrime { modulus: 251 }, 16);
    let mut r = rec(&p, 0);
    if let Owned::Shamir(s) = &mut r.shares {
        s[0] = 251;
    }
    let e = StoreWriter::open(&path)
        .unwrap()
        .append(&[r.as_record()])
        .unwrap_err();
    assert!(e.to_string().contains("not a canonical residue"), "{e}");
}

#[test]
fn one_writer_at_a_time() {
    let (_d, path, _) = setup(StoreSharing::Rep3, 16);
    let w = StoreWriter::open(&path).unwrap();
    assert!(matches!(
        StoreWriter::open(&path),
        Err(StoreError::Locked { .. })
    ));
    drop(w);
    StoreWriter::open(&path).unwrap();
}

#[test]
fn debug_never_shows_shares() {
    let p = params(StoreSharing::Rep3, 16);
    let r = rec(&p, 42);
    let shown = format!("{:?}", r.as_record());
    assert_eq!(shown, "Record(id 42, rep3 u16 x 128)");
}

/// Crash points of an append, simulated by running its steps partway and damaging the file
/// as a power loss could.
mod crash_between_steps {
    use super::*;

    fn staged(path: &Path, p: &StoreParams) -> (StoreWriter, StoreHeader) {
        append_ids(path, p, 0..3);
        let recs: Vec<Rec> = (3..7).map(|i| rec(p, i)).collect();
        let refs: Vec<Record<'_>> = recs.iter().map(Rec::as_record).collect();
        let mut w = StoreWriter::open(path).unwrap();
        let next = w.stage(&refs).unwrap();
        (w, next)
    }

    fn tear_slot(path: &Path, slot: usize, header: &StoreHeader) {
        let mut b = fs::read(path).unwrap();
        let new = header.to_bytes().unwrap();
        let at = slot * SLOT_LEN;
        b[at..at + SLOT_LEN / 2].copy_from_slice(&new[..SLOT_LEN / 2]);
        fs::write(path, b).unwrap();
    }

    #[test]
    fn before_any_header_write_the_old_store_stands() {
        let (_d, path, p) = setup(StoreSharing::Rep3, 16);
        let (w, _) = staged(&path, &p);
        drop(w);
        assert_holds(&path, &p, 3);
        // The next append cuts the staged tail and commits its own records.
        append_ids(&path, &p, 3..5);
        assert_holds(&path, &p, 5);
    }

    #[test]
    fn records_half_written_the_old_store_stands() {
        let (_d, path, p) = setup(StoreSharing::Rep3, 64);
        let (w, _) = staged(&path, &p);
        drop(w);
        let l = p.layout().unwrap();
        let size = l.share_size as u64;
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(l.shares_start(MIN_CAPACITY).unwrap() + 4 * size + size / 2)
            .unwrap();
        assert_holds(&path, &p, 3);
    }

    #[test]
    fn torn_first_slot_keeps_the_old_store() {
        let (_d, path, p) = setup(StoreSharing::ShamirGr { degree: 4 }, 16);
        let (w, next) = staged(&path, &p);
        drop(w);
        tear_slot(&path, 1, &next);
        let e = err(&path);
        assert!(
            e.contains("header slot 1 is damaged") && e.contains("slot 0 is intact with 3 records"),
            "{e}"
        );
        assert_eq!(repair(&path).unwrap().count, 3);
        assert_holds(&path, &p, 3);
    }

    #[test]
    fn first_slot_written_the_new_store_stands() {
        let (_d, path, p) = setup(StoreSharing::Rep3, 32);
        let (mut w, next) = staged(&path, &p);
        w.write_slot(1, &next).unwrap();
        drop(w);
        assert_holds(&path, &p, 7);
        // A writer brings the mirror back in step.
        let w = StoreWriter::open(&path).unwrap();
        assert_eq!(w.header().count, 7);
        drop(w);
        let b = fs::read(&path).unwrap();
        assert_eq!(b[..SLOT_LEN], b[SLOT_LEN..2 * SLOT_LEN]);
    }

    #[test]
    fn torn_second_slot_keeps_the_new_store() {
        let (_d, path, p) = setup(StoreSharing::ShamirPrime { modulus: 65521 }, 16);
        let (mut w, next) = staged(&path, &p);
        w.write_slot(1, &next).unwrap();
        drop(w);
        tear_slot(&path, 0, &next);
        let e = err(&path);
        assert!(
            e.contains("header slot 0 is damaged") && e.contains("slot 1 is intact with 7 records"),
            "{e}"
        );
        assert_eq!(repair(&path).unwrap().count, 7);
        assert_holds(&path, &p, 7);
    }

    #[test]
    fn full_commit_the_new_store_stands() {
        let (_d, path, p) = setup(StoreSharing::Rep3, 16);
        let (mut w, next) = staged(&path, &p);
        w.commit(&next).unwrap();
        drop(w);
        assert_holds(&path, &p, 7);
    }
}

#[test]
fn appends_past_the_capacity_grow_the_store() {
    let (_d, path, p) = setup(StoreSharing::ShamirGr { degree: 4 }, 16);
    append_ids(&path, &p, 0..1000);
    let reader = Store::open(&path).unwrap();
    let before: Vec<u16> = reader.shamir_words().unwrap().to_vec();
    // 1000 + 100 passes the 1024 slots: the file is rewritten with room for 4096.
    assert_eq!(append_ids(&path, &p, 1000..1100), 1100);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.header().capacity, 4096);
    assert_holds(&path, &p, 1100);
    // A reader of the old file still sees its records.
    assert_eq!(reader.len(), 1000);
    assert_eq!(&reader.shamir_words().unwrap()[..], &before[..]);
    assert_eq!(store.ids(), (0..1100).collect::<Vec<u64>>());
    let leftovers = fs::read_dir(path.parent().unwrap()).unwrap().count();
    assert_eq!(leftovers, 1);
}

#[test]
fn roll_back_drops_the_last_records() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 16);
    append_ids(&path, &p, 0..6);
    StoreWriter::open(&path).unwrap().roll_back(4).unwrap();
    assert_holds(&path, &p, 4);
    append_ids(&path, &p, 4..9);
    assert_holds(&path, &p, 9);
}

#[test]
fn secret_mask_records_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s");
    let p = StoreParams {
        secret_mask: true,
        ..params(StoreSharing::ShamirPrime { modulus: 65519 }, 16)
    };
    create(&path, &p).unwrap();
    let shares: Vec<Vec<u16>> = (0..3u16)
        .map(|i| (0..2 * CODE_BITS as u16).map(|j| j * 3 + i).collect())
        .collect();
    let recs: Vec<Record<'_>> = shares
        .iter()
        .enumerate()
        .map(|(i, s)| Record {
            id: 10 + i as u64,
            mask: &[],
            shares: Shares::Shamir(s),
        })
        .collect();
    StoreWriter::open(&path).unwrap().append(&recs).unwrap();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.records().collect::<Vec<_>>(), recs);
    assert_eq!(store.ids(), vec![10, 11, 12]);
}

/// The records checksum checked in parts on several threads: an intact store passes however
/// it is split, and a flipped byte in any part (first record, a middle one, the last) is
/// found.
#[test]
fn records_checked_in_parallel_parts_find_a_flip_in_any_part() {
    let (_d, path, p) = setup(StoreSharing::Rep3, 16);
    append_ids(&path, &p, 0..37);
    let store = Store::open_with(&path, false).unwrap();
    for per_thread in [1usize, 1000, 1 << 20, usize::MAX] {
        assert!(
            store.verify_split(false, per_thread).is_ok(),
            "{per_thread}"
        );
    }
    let l = p.layout().unwrap();
    let start = l.shares_start(MIN_CAPACITY).unwrap();
    let size = l.share_size as u64;
    for record in [0u64, 18, 36] {
        let (_d2, copy, _) = setup(StoreSharing::Rep3, 16);
        fs::copy(&path, &copy).unwrap();
        flip(&copy, start + record * size + 3);
        // Refused at open (the default split)...
        assert!(err(&copy).contains("do not match the checksum"));
        // And by each split.
        for per_thread in [1usize, 1000] {
            let e = Store::open_checked(&copy, false, per_thread)
                .err()
                .expect("a flipped record is refused")
                .to_string();
            assert!(
                e.contains("do not match the checksum"),
                "record {record}: {e}"
            );
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
    /// Both ways of hashing a v3 record (in parts, as readers and appends do, and contiguous,
    /// as the dealer does) equal XXH3-128 of `index | meta | shares` as an independent
    /// implementation computes it, at every length around the hash's block edges.
    #[test]
    fn the_v3_record_hash_in_parts_and_contiguous_equals_xxh3(
        index in proptest::prelude::any::<u64>(),
        meta in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        shares in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
    ) {
        let hash = RecordHash::of_version(3);
        let mut whole = index.to_le_bytes().to_vec();
        whole.extend_from_slice(&meta);
        whole.extend_from_slice(&shares);
        let want = xxhash_rust::xxh3::xxh3_128_with_seed(&whole, u64::from_le_bytes(*b"irisc v3"));
        let mut expected = [0u8; 32];
        expected[..16].copy_from_slice(&want.to_le_bytes());
        proptest::prop_assert_eq!(hash.record(index, &meta, &shares).0, expected);
        proptest::prop_assert_eq!(hash.contiguous(&whole).0, expected);
    }
}

/// A store reopened after appends checks only the new records: it is taken when the new
/// records' checksum added to the one already checked gives the committed one, and refused
/// (`None`, for a full open) when the known checksum is not the prefix's, when a new record's
/// bytes are damaged, or when the store holds fewer records than known (a rolled-back tail).
#[test]
fn reopening_after_appends_checks_the_new_records_against_the_known_prefix() {
    for sharing in [StoreSharing::Rep3, StoreSharing::ShamirGr { degree: 2 }] {
        let (_d, path, p) = setup(sharing, 16);
        append_ids(&path, &p, 0..4);
        let first = Store::open(&path).unwrap();
        let (known, sum) = (first.len() as u64, first.header().records_sum);
        append_ids(&path, &p, 4..7);
        let again = Store::open_extending(&path, known, &sum).unwrap().unwrap();
        assert_eq!(again.len(), 7);
        assert_eq!(
            again.header().records_sum,
            Store::open(&path).unwrap().header().records_sum
        );
        for (i, r) in again.records().enumerate() {
            assert_eq!(r, rec(&p, i as u64).as_record(), "record {i}");
        }
        // Nothing new: the same store.
        let s7 = again.header().records_sum;
        assert_eq!(
            Store::open_extending(&path, 7, &s7).unwrap().unwrap().len(),
            7
        );
        // A known checksum that is not the prefix's.
        let mut wrong = sum;
        wrong.0[3] ^= 1;
        assert!(Store::open_extending(&path, known, &wrong)
            .unwrap()
            .is_none());
        // More records known than the store holds.
        assert!(Store::open_extending(&path, 8, &s7).unwrap().is_none());
        // A damaged byte in a new record's shares.
        let (_d2, copy, _) = setup(StoreSharing::Rep3, 16);
        fs::copy(&path, &copy).unwrap();
        let l = p.layout().unwrap();
        flip(
            &copy,
            l.shares_start(MIN_CAPACITY).unwrap() + 5 * l.share_size as u64 + 3,
        );
        assert!(Store::open_extending(&copy, known, &sum).unwrap().is_none());
        // Rolled back to fewer records than known.
        StoreWriter::open(&path).unwrap().roll_back(5).unwrap();
        assert!(Store::open_extending(&path, 7, &s7).unwrap().is_none());
    }
}

/// The canonical-word check against its definition, word by word: every storage width and
/// sharing with non-canonical words, random blocks with the largest word put at a random
/// place, at the limit (canonical) and one past it (not), odd lengths included.
#[test]
fn canonical_check_finds_any_word_past_the_limit() {
    use proptest::prelude::*;
    let cases = [
        (StoreSharing::ShamirPrime { modulus: 65_521 }, 16, 2usize),
        (StoreSharing::ShamirPrime { modulus: 251 }, 16, 2),
        (StoreSharing::Rep3, 13, 2),
        (StoreSharing::Rep3, 20, 4),
        (StoreSharing::Rep3, 40, 8),
    ];
    for (sharing, ring_bits, width) in cases {
        let p = params(sharing, ring_bits);
        let check = CanonicalCheck::new(&p, &p.layout().unwrap());
        let limit: u64 = match sharing {
            StoreSharing::ShamirPrime { modulus } => u64::from(modulus) - 1,
            _ => (1u64 << ring_bits) - 1,
        };
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(300));
        runner
            .run(
                &(0usize..300, any::<u64>(), any::<usize>(), any::<bool>()),
                |(words, seed, at, over)| {
                    let mut bytes: Vec<u8> = (0..words as u64)
                        .flat_map(|i| {
                            let w = splitmix(seed ^ i) % (limit + 1);
                            w.to_le_bytes()[..width].to_vec()
                        })
                        .collect();
                    if words > 0 {
                        let i = at % words;
                        let w = if over { limit + 1 } else { limit };
                        bytes[i * width..(i + 1) * width]
                            .copy_from_slice(&w.to_le_bytes()[..width]);
                    }
                    // A trailing partial word is not a word.
                    bytes.push(0xff);
                    let reference = words > 0 && over;
                    prop_assert_eq!(check.check(&bytes).is_err(), reference);
                    Ok(())
                },
            )
            .unwrap();
    }
    // Sharings whose every word is canonical are not scanned.
    let p = params(StoreSharing::ShamirGr { degree: 4 }, 16);
    let check = CanonicalCheck::new(&p, &p.layout().unwrap());
    assert!(check.check(&[0xff; 1000]).is_ok());
}
