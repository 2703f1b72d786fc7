//! `irisc share`: dealer-side secret sharing of a plaintext NDJSON file into one file per party.
//!
//! Each record's code becomes its masked-bit vector (Section 4.1.1: `m - 2 (c & m)` in Z_2^k) and
//! every element x is split as `x = x0 + x1 + x2 mod 2^k` with x0, x1 fresh from the operating
//! system's CSPRNG. Party i's file holds `own = x_i` and `prev = x_{i-1 mod 3}` (rep3 / ABY3), the
//! record ids, the masks in plain (public-mask programs), and one random set id shared by the
//! three files of a run so that parties can detect mixed-up inputs.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use irisc_runtime::io::ndjson;
use irisc_runtime::io::share_file::{self, ring_mask, RingVec, ShareFile, ShareFileHeader};
use irisc_runtime::iris::{IrisCode, IrisRecord};
use rand::rngs::OsRng;
use rand::TryCryptoRng;

pub use irisc_runtime::io::share_file::{MaskMode, ShareKind};

use super::gen::progress;

/// The three additive components of every shared element, with what the file headers need.
/// (`Debug` prints only shapes: [`RingVec`] hides its values.)
#[derive(Debug)]
pub struct Dealt {
    pub kind: ShareKind,
    pub mask: MaskMode,
    pub ring_bits: u32,
    pub code_bits: u32,
    pub set_id: [u8; 16],
    pub ids: Vec<u64>,
    /// Plain masks (public-mask mode), `code_bits / 8` bytes per record.
    pub masks: Vec<u8>,
    /// `x[j]` is component x_j of every element, record after record.
    pub x: [RingVec; 3],
}

impl Dealt {
    fn header(&self, party: u8) -> ShareFileHeader {
        ShareFileHeader::new(
            self.kind,
            party,
            self.mask,
            self.ring_bits,
            self.code_bits,
            self.ids.len() as u64,
            self.set_id,
        )
    }

    /// Party i's file contents: `own = x_i`, `prev = x_{i-1 mod 3}` (copies the components).
    pub fn party_file(&self, party: u8) -> ShareFile {
        let i = usize::from(party % 3);
        ShareFile {
            header: self.header(party % 3),
            ids: self.ids.clone(),
            masks: self.masks.clone(),
            own: self.x[i].clone(),
            prev: self.x[(i + 2) % 3].clone(),
        }
    }
}

/// The ring elements shared for one record: its masked bits, then (secret masks only) its mask
/// bits, each reduced mod 2^k.
pub fn encode(iris: &IrisCode, ring_bits: u32, mask: MaskMode) -> Result<Vec<u64>> {
    let m = ring_mask(ring_bits).ok_or_else(|| anyhow!("ring Z_2^{ring_bits} is not supported"))?;
    let mut out: Vec<u64> = iris.masked_bits::<u64>().iter().map(|v| v & m).collect();
    if mask == MaskMode::Secret {
        out.extend((0..iris.bits()).map(|i| u64::from(iris.mask_bit(i))));
    }
    Ok(out)
}

/// Splits every record into three additive sharings over Z_2^k, drawing x0 and x1 from `rng`.
pub fn deal<R: TryCryptoRng>(
    records: &[IrisRecord],
    kind: ShareKind,
    ring_bits: u32,
    mask: MaskMode,
    rng: &mut R,
) -> Result<Dealt> {
    if !(2..=64).contains(&ring_bits) {
        // With k = 1, T = -1 and F = 1 would be the same element.
        bail!("cannot share over Z_2^{ring_bits}: the ring must have 2 to 64 bits");
    }
    let first = records
        .first()
        .ok_or_else(|| anyhow!("there are no records to share"))?;
    let code_bits = first.iris.bits();
    irisc_runtime::iris::check_code_bits(code_bits)?;
    let k_mask = ring_mask(ring_bits).unwrap_or(u64::MAX);
    let word = RingVec::word_bytes_for(ring_bits).unwrap_or(8);
    let per_record = match mask {
        MaskMode::Public => code_bits,
        MaskMode::Secret => 2 * code_bits,
    };
    let total = records.len() * per_record;
    let new_vec = || RingVec::with_capacity(ring_bits, total).unwrap_or(RingVec::U64(Vec::new()));
    let mut x = [new_vec(), new_vec(), new_vec()];
    let mut ids = Vec::with_capacity(records.len());
    let mut masks = Vec::new();
    let mut set_id = [0u8; 16];
    let rng_failed = |e: R::Error| anyhow!("the operating system's random generator failed: {e}");
    rng.try_fill_bytes(&mut set_id).map_err(rng_failed)?;
    let mut random = vec![0u8; 2 * per_record * word];
    let bar = progress(records.len(), "sharing");
    for rec in records {
        if rec.iris.code.len() != rec.iris.mask.len() || rec.iris.bits() != code_bits {
            bail!(
                "record {} has a {}-bit code and a {}-bit mask, but record {} has {code_bits}-bit codes",
                rec.id,
                rec.iris.bits(),
                rec.iris.mask.len() * 8,
                first.id
            );
        }
        ids.push(rec.id);
        if mask == MaskMode::Public {
            masks.extend_from_slice(&rec.iris.mask);
        }
        rng.try_fill_bytes(&mut random).map_err(rng_failed)?;
        let values = encode(&rec.iris, ring_bits, mask)?;
        for (v, r) in values.iter().zip(random.chunks_exact(2 * word)) {
            let (r0, r1) = r.split_at(word);
            let x0 = le_word(r0) & k_mask;
            let x1 = le_word(r1) & k_mask;
            x[0].push(x0);
            x[1].push(x1);
            x[2].push(v.wrapping_sub(x0).wrapping_sub(x1) & k_mask);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(Dealt {
        kind,
        mask,
        ring_bits,
        code_bits: code_bits as u32,
        set_id,
        ids,
        masks,
        x,
    })
}

fn le_word(bytes: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    b[..bytes.len().min(8)].copy_from_slice(&bytes[..bytes.len().min(8)]);
    u64::from_le_bytes(b)
}

/// The paths `DIR/{stem}.p0.shr`, `.p1.shr`, `.p2.shr`.
pub fn share_paths(out_dir: &Path, stem: &str) -> [PathBuf; 3] {
    [0, 1, 2].map(|i| out_dir.join(format!("{stem}.p{i}.shr")))
}

/// Shares an NDJSON file with public masks into `DIR/{stem}.p{0,1,2}.shr`.
pub fn share_file(
    input: &Path,
    out_dir: &Path,
    kind: ShareKind,
    ring_bits: u32,
    stem: &str,
) -> Result<[PathBuf; 3]> {
    share_file_with_mask(input, out_dir, kind, ring_bits, MaskMode::Public, stem)
}

/// As [`share_file()`], choosing whether masks stay public or are secret-shared too.
pub fn share_file_with_mask(
    input: &Path,
    out_dir: &Path,
    kind: ShareKind,
    ring_bits: u32,
    mask: MaskMode,
    stem: &str,
) -> Result<[PathBuf; 3]> {
    if stem.is_empty() || stem.contains(['/', '\\']) || stem.starts_with('.') {
        bail!("the output name `{stem}` must be a plain file name such as `db`");
    }
    let records = ndjson::read_file(input)?;
    if records.is_empty() {
        bail!("{} holds no records to share", input.display());
    }
    let dealt = deal(&records, kind, ring_bits, mask, &mut OsRng)
        .with_context(|| format!("cannot share {}", input.display()))?;
    drop(records);
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let paths = share_paths(out_dir, stem);
    if let Err(e) = write_parties(dealt, &paths) {
        // Never leave a partial set behind: the files of one run belong together.
        for p in &paths {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    Ok(paths)
}

/// Writes the three files, moving each component from file to file instead of copying it, so
/// memory stays at three components.
fn write_parties(dealt: Dealt, paths: &[PathBuf; 3]) -> Result<()> {
    let headers = [dealt.header(0), dealt.header(1), dealt.header(2)];
    let Dealt {
        ids,
        masks,
        x: [x0, x1, x2],
        ..
    } = dealt;
    let [h0, h1, h2] = headers;
    let f = ShareFile {
        header: h0,
        ids,
        masks,
        own: x0,
        prev: x2,
    };
    share_file::write(&paths[0], &f)?;
    let ShareFile {
        ids,
        masks,
        own: x0,
        prev: x2,
        ..
    } = f;
    let f = ShareFile {
        header: h1,
        ids,
        masks,
        own: x1,
        prev: x0,
    };
    share_file::write(&paths[1], &f)?;
    let ShareFile {
        ids,
        masks,
        own: x1,
        ..
    } = f;
    let f = ShareFile {
        header: h2,
        ids,
        masks,
        own: x2,
        prev: x1,
    };
    share_file::write(&paths[2], &f)?;
    Ok(())
}

/// Opens the three parties' files of one run and returns every shared element. For tests and
/// debugging on the dealer side only: no party ever holds all three files.
pub fn reconstruct(files: &[ShareFile; 3]) -> Result<Vec<u64>> {
    let h = &files[0].header;
    for (i, f) in files.iter().enumerate() {
        if usize::from(f.header.party) != i {
            bail!("file {i} belongs to party {}", f.header.party);
        }
        if f.header.set_id != h.set_id {
            bail!("the files come from different sharing runs (set ids differ)");
        }
        if f.header.ring_bits != h.ring_bits || f.own.len() != files[0].own.len() {
            bail!("the files have different rings or sizes");
        }
    }
    // Replication: party i's `prev` is party (i-1)'s `own`.
    for i in 0..3 {
        if files[i].prev != files[(i + 2) % 3].own {
            bail!(
                "party {i}'s copy of x_{} disagrees with party {}'s",
                (i + 2) % 3,
                (i + 2) % 3
            );
        }
    }
    let m = ring_mask(h.ring_bits).ok_or_else(|| anyhow!("bad ring"))?;
    let (a, b, c) = (
        files[0].own.iter_u64(),
        files[1].own.iter_u64(),
        files[2].own.iter_u64(),
    );
    Ok(a.zip(b)
        .zip(c)
        .map(|((x0, x1), x2)| x0.wrapping_add(x1).wrapping_add(x2) & m)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::gen::{generate, GenOptions};
    use irisc_runtime::io::share_file::{check_compatible, read, Expected};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn gallery(bits: usize) -> Vec<IrisRecord> {
        generate(6, 21, bits, &GenOptions::default()).unwrap()
    }

    fn expected_values(records: &[IrisRecord], k: u32, mask: MaskMode) -> Vec<u64> {
        records
            .iter()
            .flat_map(|r| encode(&r.iris, k, mask).unwrap())
            .collect()
    }

    #[test]
    fn encoding_is_masked_bits_mod_2k() {
        let mut iris = IrisCode::zeros(64).unwrap();
        iris.set_mask_bit(0, true); // F = 1
        iris.set_mask_bit(1, true);
        iris.set_code_bit(1, true); // T = -1
        iris.set_code_bit(2, true); // masked: U = 0
        assert_eq!(
            &encode(&iris, 12, MaskMode::Public).unwrap()[..3],
            &[1, 0xFFF, 0]
        );
        assert_eq!(
            &encode(&iris, 64, MaskMode::Public).unwrap()[..3],
            &[1, u64::MAX, 0]
        );
        let secret = encode(&iris, 16, MaskMode::Secret).unwrap();
        assert_eq!(secret.len(), 128);
        assert_eq!(&secret[64..67], &[1, 1, 0]);
    }

    #[test]
    fn reconstructs_in_memory_for_all_rings() {
        let recs = gallery(640);
        for k in [2, 16, 17, 32, 36, 64] {
            for mask in [MaskMode::Public, MaskMode::Secret] {
                let mut rng = ChaCha20Rng::seed_from_u64(u64::from(k));
                let dealt = deal(&recs, ShareKind::Gallery, k, mask, &mut rng).unwrap();
                let files = [0, 1, 2].map(|p| dealt.party_file(p));
                assert_eq!(
                    reconstruct(&files).unwrap(),
                    expected_values(&recs, k, mask)
                );
            }
        }
    }

    #[test]
    fn files_reconstruct_and_differ_between_runs() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("db.ndjson");
        let recs = gallery(12_800);
        ndjson::write_file(&input, &recs).unwrap();
        let out = dir.path().join("shares");
        let paths = share_file(&input, &out, ShareKind::Gallery, 16, "db").unwrap();
        assert_eq!(paths[1], out.join("db.p1.shr"));
        let files = paths.clone().map(|p| read(&p).unwrap());
        assert_eq!(
            reconstruct(&files).unwrap(),
            expected_values(&recs, 16, MaskMode::Public)
        );
        for (i, f) in files.iter().enumerate() {
            assert_eq!(f.header.party as usize, i);
            assert_eq!(f.ids, (0..6).collect::<Vec<u64>>());
            assert_eq!(f.masks.len(), 6 * 1600);
            assert_eq!(&f.masks[1600..3200], &recs[1].iris.mask[..]);
            let expected = Expected {
                kind: ShareKind::Gallery,
                party: i as u8,
                ring_bits: 16,
                code_bits: 12_800,
                mask: MaskMode::Public,
            };
            check_compatible(&paths[i], &f.header, &expected).unwrap();
        }
        // A second run draws fresh randomness: other shares, other set id, same secrets.
        let again = share_file(
            &input,
            &dir.path().join("again"),
            ShareKind::Gallery,
            16,
            "db",
        )
        .unwrap()
        .map(|p| read(&p).unwrap());
        assert_ne!(again[0].header.set_id, files[0].header.set_id);
        for i in 0..3 {
            assert_ne!(again[i].own, files[i].own);
        }
        assert_eq!(reconstruct(&again).unwrap(), reconstruct(&files).unwrap());
        // Mixing files of two runs is detected.
        let mixed = [files[0].clone(), again[1].clone(), files[2].clone()];
        assert!(reconstruct(&mixed).is_err());
    }

    #[test]
    fn one_component_alone_is_not_the_secret() {
        let recs = gallery(640);
        let dealt = deal(&recs, ShareKind::Query, 16, MaskMode::Public, &mut OsRng).unwrap();
        let secret = expected_values(&recs, 16, MaskMode::Public);
        for x in &dealt.x {
            let same = x.iter_u64().zip(&secret).filter(|(a, b)| a == *b).count();
            // A uniform 16-bit share equals the secret about once in 65 536 elements.
            assert!(same < secret.len() / 100, "{same} of {}", secret.len());
        }
    }

    #[test]
    fn bad_requests_are_refused() {
        let recs = gallery(640);
        let mut rng = ChaCha20Rng::seed_from_u64(0);
        let err = |k| {
            deal(
                &recs,
                ShareKind::Gallery,
                k,
                MaskMode::Public,
                &mut rng.clone(),
            )
            .err()
            .map(|e| e.to_string())
        };
        assert!(err(1).unwrap().contains("2 to 64 bits"));
        assert!(err(65).is_some());
        assert!(deal(&[], ShareKind::Gallery, 16, MaskMode::Public, &mut rng).is_err());
        let mut mixed = recs.clone();
        mixed[3].iris = IrisCode::zeros(64).unwrap();
        let e = deal(&mixed, ShareKind::Gallery, 16, MaskMode::Public, &mut rng).unwrap_err();
        assert!(e.to_string().contains("record 3"), "{e}");

        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("db.ndjson");
        ndjson::write_file(&input, &recs).unwrap();
        assert!(share_file(&input, dir.path(), ShareKind::Gallery, 16, "../x").is_err());
        std::fs::write(&input, "").unwrap();
        let e = share_file(&input, dir.path(), ShareKind::Gallery, 16, "db").unwrap_err();
        assert!(e.to_string().contains("no records"), "{e}");
        std::fs::write(&input, "{\"id\": 1}\n").unwrap();
        let e = share_file(&input, dir.path(), ShareKind::Gallery, 16, "db").unwrap_err();
        assert!(e.to_string().contains("line 1: code is missing"), "{e}");
        assert!(!dir.path().join("db.p0.shr").exists());
    }
}
