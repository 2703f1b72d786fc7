use super::*;
use crate::vocab::{InputKind, InputMask, InputRole};

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let mut r = [0u8; 8];
        getrandom::fill(&mut r).unwrap();
        let p = std::env::temp_dir().join(format!(
            "irisc-shr-{tag}-{}-{}",
            std::process::id(),
            u64::from_le_bytes(r)
        ));
        fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn sample(ring_bits: u32, mask: InputMask, count: u64) -> ShareFile {
    let code_bits = 128u32;
    let header = ShareFileHeader::new(
        InputRole::Gallery,
        1,
        mask,
        ring_bits,
        code_bits,
        count,
        [7; 16],
    );
    let per = header.elements_per_record() as usize * count as usize;
    let masks = match mask {
        InputMask::Public => (0..count as usize * 16).map(|i| i as u8).collect(),
        InputMask::Secret | InputMask::None => Vec::new(),
    };
    let vals = |salt: u64| {
        RingVec::from_u64s(
            ring_bits,
            (0..per as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt),
        )
        .unwrap()
    };
    ShareFile {
        header,
        ids: (0..count).map(|i| 1000 + i).collect(),
        masks,
        own: vals(1),
        prev: vals(2),
    }
}

#[test]
fn round_trip_all_widths() {
    let dir = TempDir::new("rt");
    for ring_bits in [1, 12, 16, 17, 32, 33, 64] {
        for mask in [InputMask::Public, InputMask::Secret] {
            let file = sample(ring_bits, mask, 3);
            let path = dir.path(&format!("db{ring_bits}.p1.shr"));
            let written = write(&path, &file).unwrap();
            assert_ne!(written.body_hash, [0; 32]);
            let back = read(&path).unwrap();
            assert_eq!(back.header, written);
            assert_eq!(back.ids, file.ids);
            assert_eq!(back.masks, file.masks);
            assert_eq!(back.own, file.own);
            assert_eq!(back.prev, file.prev);
            assert_eq!(read_header(&path).unwrap(), written);
            let layout = written.layout().unwrap();
            assert_eq!(
                fs::metadata(&path).unwrap().len(),
                HEADER_LEN as u64 + layout.total()
            );
        }
    }
    // No temporary files are left behind.
    let names: Vec<_> = fs::read_dir(&dir.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| n.ends_with(".shr")), "{names:?}");
}

#[test]
fn empty_file_round_trips() {
    let dir = TempDir::new("empty");
    let path = dir.path("q.p0.shr");
    let file = sample(16, InputMask::Public, 0);
    write(&path, &file).unwrap();
    assert_eq!(read(&path).unwrap().ids, Vec::<u64>::new());
}

#[test]
fn header_bytes_are_little_endian_at_fixed_offsets() {
    let mut h = ShareFileHeader::new(
        InputRole::Query,
        2,
        InputMask::Public,
        16,
        12_800,
        0x0102,
        [9; 16],
    );
    h.body_hash = [5; 32];
    let b = h.to_bytes();
    assert_eq!(&b[0..8], b"IRISCSHR");
    assert_eq!(&b[8..12], &[2, 0, 0, 0]);
    assert_eq!(&b[12..16], &[1, 2, 0, 0]);
    assert_eq!(&b[16..20], &[16, 0, 0, 0]);
    assert_eq!(&b[20..24], &12_800u32.to_le_bytes());
    assert_eq!(&b[24..32], &[2, 1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(&b[32..48], &[9; 16]);
    assert_eq!(&b[48..80], &[5; 32]);
    assert_eq!(&b[80..88], &[0; 8]);
    assert_eq!(ShareFileHeader::parse(Path::new("x"), &b, 88).unwrap(), h);
    h.sharing = Sharing::Gr4;
    h.payload = InputKind::Embedding;
    h.mask = InputMask::None;
    h.elements = 192;
    h.scale_bits = 8;
    let b = h.to_bytes();
    assert_eq!(&b[12..16], &[1, 2, 3, 2]);
    assert_eq!(&b[80..82], &[1, 8]);
    assert_eq!(ShareFileHeader::parse(Path::new("x"), &b, 88).unwrap(), h);
}

fn written(tag: &str) -> (TempDir, PathBuf, Vec<u8>) {
    let dir = TempDir::new(tag);
    let path = dir.path("db.p1.shr");
    write(&path, &sample(17, InputMask::Public, 4)).unwrap();
    let bytes = fs::read(&path).unwrap();
    (dir, path, bytes)
}

#[test]
fn truncated() {
    let (_dir, path, bytes) = written("trunc");
    fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
    let e = read(&path).unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "{}: expected {} bytes, found {}: the file is truncated",
            path.display(),
            bytes.len(),
            bytes.len() - 3
        )
    );
    // Inside the header too.
    fs::write(&path, &bytes[..40]).unwrap();
    assert!(matches!(
        read_header(&path),
        Err(ShareFileError::Truncated {
            expected: 88,
            found: 40,
            ..
        })
    ));
    // Extra bytes are not silently ignored either.
    let mut longer = bytes.clone();
    longer.push(0);
    fs::write(&path, &longer).unwrap();
    assert!(matches!(
        read(&path),
        Err(ShareFileError::TrailingData { .. })
    ));
}

#[test]
fn flipped_body_byte_is_corruption() {
    let (_dir, path, mut bytes) = written("flip");
    let last = bytes.len() - 1;
    bytes[last] ^= 0x01;
    fs::write(&path, &bytes).unwrap();
    let e = read(&path).unwrap_err();
    assert!(matches!(e, ShareFileError::Corrupted { .. }));
    assert!(e.to_string().contains("corrupted"), "{e}");
    // Flipping the hash itself is caught the same way.
    let (_dir, path, mut bytes) = written("fliphash");
    bytes[50] ^= 0x80;
    fs::write(&path, &bytes).unwrap();
    assert!(matches!(read(&path), Err(ShareFileError::Corrupted { .. })));
}

#[test]
fn wrong_magic_and_version() {
    let (_dir, path, mut bytes) = written("magic");
    bytes[0] = b'J';
    fs::write(&path, &bytes).unwrap();
    assert_eq!(
        read(&path).unwrap_err().to_string(),
        format!("{} is not an irisc share file (bad magic)", path.display())
    );
    fs::write(&path, b"{\"id\": 1}").unwrap();
    assert!(matches!(
        read(&path),
        Err(ShareFileError::NotShareFile { .. })
    ));
    fs::write(&path, b"").unwrap();
    assert!(matches!(
        read(&path),
        Err(ShareFileError::NotShareFile { .. })
    ));

    let (_dir, path, mut bytes) = written("version");
    bytes[8] = 3;
    fs::write(&path, &bytes).unwrap();
    let e = read(&path).unwrap_err();
    assert!(matches!(e, ShareFileError::Version { found: 3, .. }), "{e}");
    // A version-1 file (80-byte header) is named as such, with the remedy.
    bytes[8] = 1;
    fs::write(&path, &bytes[..80]).unwrap();
    let e = read(&path).unwrap_err().to_string();
    assert!(
        e.contains("is share-file format version 1, but this build reads version 2 (older files have no payload kind or sharing scheme): re-share the input"),
        "{e}"
    );
}

#[test]
fn malformed_header_fields() {
    for (offset, value, needle) in [
        (12usize, 9u8, "unknown role 9"),
        (13, 3, "party 3"),
        (14, 4, "unknown sharing scheme 4"),
        (14, 1, "Shamir shares over F_p (fp) stored over Z_2^17"),
        (15, 3, "unknown mask mode 3"),
        (15, 2, "iris codes without a mask mode"),
        (16, 65, "Z_2^65"),
        (20, 100, "multiple of 64"),
        (80, 3, "unknown payload kind 3"),
        (80, 2, "bits must have 1 element and no mask"),
        (82, 2, "conjugate flag 2"),
        (82, 1, "conjugates in a file of gallery records"),
        (84, 1, "reserved header bytes are not zero"),
    ] {
        let (_dir, path, mut bytes) = written("malformed");
        bytes[offset] = value;
        fs::write(&path, &bytes).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(e.contains(needle), "{e}");
    }
    // A count that would overflow is refused before any allocation.
    let (_dir, path, mut bytes) = written("count");
    bytes[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    fs::write(&path, &bytes).unwrap();
    assert!(matches!(read(&path), Err(ShareFileError::Malformed { .. })));
}

#[test]
fn unreduced_values_are_rejected() {
    let dir = TempDir::new("unreduced");
    let mut file = sample(12, InputMask::Public, 2);
    if let RingVec::U16(v) = &mut file.own {
        v[3] = 0x1000;
    }
    let e = write(&dir.path("x.shr"), &file).unwrap_err().to_string();
    assert!(e.contains("own element 3 is not reduced mod 2^12"), "{e}");
}

#[test]
fn inconsistent_files_are_not_written() {
    let dir = TempDir::new("inconsistent");
    let path = dir.path("x.shr");
    let mut f = sample(16, InputMask::Public, 2);
    f.ids.pop();
    assert!(write(&path, &f)
        .unwrap_err()
        .to_string()
        .contains("1 ids for 2 records"));
    let mut f = sample(16, InputMask::Public, 2);
    f.prev = RingVec::from_u64s(32, f.prev.iter_u64()).unwrap();
    assert!(write(&path, &f)
        .unwrap_err()
        .to_string()
        .contains("4-byte words"));
    let mut f = sample(16, InputMask::Public, 2);
    f.masks.push(0);
    assert!(write(&path, &f).is_err());
    assert!(!path.exists());
}

#[test]
fn compatibility_names_the_mismatch() {
    let header = ShareFileHeader::new(
        InputRole::Gallery,
        1,
        InputMask::Public,
        32,
        12_800,
        10,
        [0; 16],
    );
    let path = Path::new("p1/left.shares");
    let ok = Expected {
        input: "left".into(),
        role: InputRole::Gallery,
        party: 1,
        sharing: Sharing::Rep3,
        payload: InputKind::Iris,
        ring_bits: 32,
        elements: 12_800,
        mask: InputMask::Public,
        scale_bits: 0,
        conjugate: false,
    };
    check_compatible(path, &header, &ok).unwrap();
    let msg = |e: Expected| check_compatible(path, &header, &e).unwrap_err().to_string();
    assert_eq!(
        msg(Expected { ring_bits: 16, ..ok.clone() }),
        "p1/left.shares holds shares over Z_2^32 but this program computes input `left` over Z_2^16: re-share it with `irisc share --program P.irs --input left=FILE` (or `--ring 16`), or rebuild the program for Z_2^32"
    );
    assert_eq!(
        msg(Expected { party: 0, ..ok.clone() }),
        "p1/left.shares holds party 1's shares but this is party 0: pass this party's own file (p0/left.shares)"
    );
    assert_eq!(
        msg(Expected {
            role: InputRole::Query,
            ..ok.clone()
        }),
        "p1/left.shares holds a gallery but input `left` is a query: pass the file made for `left`"
    );
    assert_eq!(
        msg(Expected { sharing: Sharing::Gr4, ring_bits: 16, ..ok.clone() }),
        "p1/left.shares holds replicated (rep3) shares but this program reads input `left` as Shamir shares over GR(2^16, 4) (gr4): re-share it with `irisc share --program P.irs --input left=FILE --sharing gr4`"
    );
    assert_eq!(
        msg(Expected { payload: InputKind::Embedding, elements: 192, mask: InputMask::None, ..ok.clone() }),
        "p1/left.shares holds iris data but input `left` is embedding: pass the file made for `left` (re-share it with `irisc share --program P.irs --input left=FILE`)"
    );
    assert!(msg(Expected {
        elements: 6400,
        ..ok.clone()
    })
    .contains(
        "holds 12800-bit iris codes but this program expects 6400-bit iris codes for input `left` (the code length differs): re-share it"
    ));
    assert!(msg(Expected {
        mask: InputMask::Secret,
        ..ok.clone()
    })
    .contains("holds public masks but this program expects secret-shared masks for input `left`"));
    let mut emb = header.clone();
    emb.payload = InputKind::Embedding;
    emb.mask = InputMask::None;
    emb.elements = 192;
    emb.scale_bits = 8;
    let want = Expected {
        payload: InputKind::Embedding,
        elements: 192,
        mask: InputMask::None,
        scale_bits: 10,
        ..ok
    };
    let e = check_compatible(path, &emb, &want).unwrap_err().to_string();
    assert!(
        e.contains("scale 2^8 but this program expects scale 2^10"),
        "{e}"
    );
}

/// A file of `payload` shared with `sharing` (values need not be a real sharing here).
fn kinded(
    sharing: Sharing,
    payload: InputKind,
    mask: InputMask,
    elements: u32,
    count: u64,
) -> ShareFile {
    let ring_bits = if sharing.is_shamir() {
        16
    } else if payload == InputKind::Bit {
        1
    } else {
        24
    };
    let mut header = ShareFileHeader::new(
        InputRole::Query,
        2,
        mask,
        ring_bits,
        elements,
        count,
        [3; 16],
    );
    header.sharing = sharing;
    header.payload = payload;
    header.scale_bits = if payload == InputKind::Embedding {
        8
    } else {
        0
    };
    let n = (count * header.elements_per_record()) as usize;
    let vals = |salt: u64| {
        RingVec::from_u64s(ring_bits, (0..n as u64).map(|i| (i * 7 + salt) % 65519)).unwrap()
    };
    let masks = if payload == InputKind::Iris && mask == InputMask::Public {
        vec![0xA5; (count * u64::from(elements) / 8) as usize]
    } else {
        Vec::new()
    };
    ShareFile {
        header,
        ids: (0..count).collect(),
        masks,
        own: vals(1),
        prev: if sharing.is_shamir() {
            RingVec::U16(Vec::new())
        } else {
            vals(2)
        },
    }
}

#[test]
fn every_sharing_and_payload_round_trips() {
    let dir = TempDir::new("kinds");
    let cases = [
        (
            Sharing::Rep3,
            InputKind::Embedding,
            InputMask::None,
            192,
            192,
        ),
        (Sharing::Rep3, InputKind::Bit, InputMask::None, 1, 1),
        (Sharing::Rep3, InputKind::Iris, InputMask::Secret, 128, 256),
        (Sharing::Fp, InputKind::Iris, InputMask::Public, 128, 128),
        (Sharing::Fp, InputKind::Iris, InputMask::Secret, 64, 128),
        (Sharing::Fp, InputKind::Embedding, InputMask::None, 5, 5),
        (Sharing::Gr2, InputKind::Iris, InputMask::Secret, 64, 128),
        (Sharing::Gr2, InputKind::Embedding, InputMask::None, 5, 6),
        (Sharing::Gr4, InputKind::Iris, InputMask::Public, 128, 128),
        (Sharing::Gr4, InputKind::Embedding, InputMask::None, 5, 8),
    ];
    for (i, (sharing, payload, mask, elements, words)) in cases.into_iter().enumerate() {
        let file = kinded(sharing, payload, mask, elements, 3);
        assert_eq!(file.header.elements_per_record(), words, "case {i}");
        let path = dir.path(&format!("{i}.shares"));
        let h = write(&path, &file).unwrap();
        let back = read(&path).unwrap();
        assert_eq!(back.header, h, "case {i}");
        assert_eq!(back.own, file.own, "case {i}");
        assert_eq!(back.prev.len(), file.prev.len(), "case {i}");
        assert_eq!(back.masks, file.masks);
        let layout = h.layout().unwrap();
        let components = if sharing.is_shamir() { 1 } else { 2 };
        assert_eq!(layout.components, components);
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            HEADER_LEN as u64
                + 24
                + layout.masks
                + components
                    * 3
                    * words
                    * 2
                    * if sharing.is_shamir() || payload == InputKind::Bit {
                        1
                    } else {
                        2
                    }
        );
        // Truncating any of these is caught before the body is read.
        let bytes = fs::read(&path).unwrap();
        fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(
            matches!(read(&path), Err(ShareFileError::Truncated { .. })),
            "case {i}"
        );
    }
}

#[test]
fn shamir_and_bit_files_are_checked() {
    let dir = TempDir::new("shamir");
    let path = dir.path("x.shares");
    // F_p words must be canonical.
    let mut f = kinded(Sharing::Fp, InputKind::Embedding, InputMask::None, 4, 2);
    if let RingVec::U16(v) = &mut f.own {
        v[5] = 65519;
    }
    let e = write(&path, &f).unwrap_err().to_string();
    assert!(
        e.contains("own element 5 is not reduced mod p = 65519"),
        "{e}"
    );
    // And a canonical file whose word is later made non-canonical (hash fixed) is refused on read.
    let f = kinded(Sharing::Fp, InputKind::Embedding, InputMask::None, 4, 2);
    write(&path, &f).unwrap();
    let mut bytes = fs::read(&path).unwrap();
    let at = HEADER_LEN + 16;
    bytes[at..at + 2].copy_from_slice(&65535u16.to_le_bytes());
    let mut hasher = blake3::Hasher::new();
    hasher.update(&bytes[HEADER_LEN..]);
    bytes[48..80].copy_from_slice(hasher.finalize().as_bytes());
    fs::write(&path, &bytes).unwrap();
    let e = read(&path).unwrap_err().to_string();
    assert!(
        e.contains("malformed share file: own element 0 is not reduced mod p"),
        "{e}"
    );
    // Shamir files hold one component.
    let mut f = kinded(Sharing::Gr2, InputKind::Embedding, InputMask::None, 4, 2);
    f.prev = f.own.clone();
    let e = write(&path, &f).unwrap_err().to_string();
    assert!(e.contains("hold one component"), "{e}");
    // Bits are rep3 only; embeddings have no masks.
    let mut f = kinded(Sharing::Rep3, InputKind::Bit, InputMask::None, 1, 2);
    f.header.sharing = Sharing::Fp;
    f.header.ring_bits = 16;
    let e = write(&path, &f).unwrap_err().to_string();
    assert!(e.contains("bits are always rep3"), "{e}");
    let mut f = kinded(Sharing::Rep3, InputKind::Embedding, InputMask::None, 8, 2);
    f.header.mask = InputMask::Secret;
    assert!(write(&path, &f)
        .unwrap_err()
        .to_string()
        .contains("embeddings with secret-shared masks"));
}

#[test]
fn debug_output_hides_shares() {
    let f = sample(16, InputMask::Public, 1);
    let s = format!("{f:?}");
    assert!(s.contains("RingVec(u16 x 128)"), "{s}");
}

#[test]
fn random_set_ids_differ() {
    assert_ne!(
        ShareFileHeader::random_set_id().unwrap(),
        ShareFileHeader::random_set_id().unwrap()
    );
}

#[test]
fn a_share_file_other_users_can_read_is_refused_before_it_is_read() {
    use std::os::unix::fs::PermissionsExt;
    let (_dir, path, _) = written("exposed");
    // irisc writes it owner-only.
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    for mode in [0o644, 0o640, 0o604] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let e = read(&path).unwrap_err().to_string();
        assert!(
            e.contains(&format!("other users can access it (mode {mode:04o})"))
                && e.contains("chmod 600"),
            "{e}"
        );
        assert!(read_header(&path).is_err());
    }
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    assert!(read(&path).is_ok());
}

/// A query dealt for `mirror(q)` under a Galois ring holds its codes' conjugates as the last
/// section of each record: after the codes, and after the secret masks when they are shared.
/// The flag survives a write and a read, sizes the body, and both programs that do and do not
/// read conjugates refuse the other kind of file, saying what to do.
#[test]
fn conjugates_are_the_last_section_of_a_query_record() {
    use crate::contract::InputPart;
    let dir = TempDir::new("conjugate");
    for (mask, sections, at) in [(InputMask::Public, 2, 1), (InputMask::Secret, 3, 2)] {
        let count = 3u64;
        let mut header = ShareFileHeader::new(InputRole::Query, 2, mask, 16, 128, count, [9; 16]);
        header.sharing = Sharing::Gr2;
        header.conjugate = true;
        assert_eq!(header.sections(), sections);
        assert_eq!(header.section_of(InputPart::Codes), Some(0));
        assert_eq!(header.section_of(InputPart::Conjugate), Some(at));
        assert_eq!(
            header.section_of(InputPart::Masks),
            (mask == InputMask::Secret).then_some(1)
        );
        let words = (count * sections * 128) as usize;
        let file = ShareFile {
            header: header.clone(),
            ids: vec![4, 5, 6],
            masks: if mask == InputMask::Public {
                vec![0xA5; 48]
            } else {
                Vec::new()
            },
            own: RingVec::U16((0..words).map(|i| (i * 7919) as u16).collect()),
            prev: RingVec::U16(Vec::new()),
        };
        let path = dir.path(&format!("q-{mask}.shr"));
        write(&path, &file).unwrap();
        let back = read(&path).unwrap();
        assert!(back.header.conjugate);
        assert_eq!(back.own, file.own);
        let reads = Expected {
            input: "q".into(),
            role: InputRole::Query,
            party: 2,
            sharing: Sharing::Gr2,
            payload: InputKind::Iris,
            ring_bits: 16,
            elements: 128,
            mask,
            scale_bits: 0,
            conjugate: true,
        };
        check_compatible(&path, &back.header, &reads).unwrap();
        let e = check_compatible(
            &path,
            &back.header,
            &Expected {
                conjugate: false,
                ..reads.clone()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("with their conjugates") && e.contains("irisc share"),
            "{e}"
        );
        let mut plain = back.header.clone();
        plain.conjugate = false;
        let e = check_compatible(&path, &plain, &reads)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("without their conjugates")
                && e.contains("mirror(q)")
                && e.contains("irisc share"),
            "{e}"
        );
        // One word short of the three sections is a truncated body, not a misread.
        let mut short = file;
        if let RingVec::U16(v) = &mut short.own {
            v.pop();
        }
        assert!(write(&dir.path("short.shr"), &short).is_err());
    }
}
