//! `irisc share`: dealer-side secret sharing of a plaintext NDJSON file into one file per party.
//!
//! Each record's code becomes its masked-bit vector (Section 4.1.1: `m - 2 (c & m)` in Z_2^k) and
//! every element x is split as `x = x0 + x1 + x2 mod 2^k` with x0, x1 fresh from the operating
//! system's CSPRNG. Party i's file holds `own = x_i` and `prev = x_{i-1 mod 3}` (rep3 / ABY3), the
//! record ids, the masks in plain (public-mask programs), and one random set id shared by the
//! three files of a run so that parties can detect mixed-up inputs.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use irisc_runtime::io::share_file::{self, ring_mask, RingVec, ShareFile, ShareFileHeader};
use irisc_runtime::io::{ndjson, ndjson_values};
use irisc_runtime::iris::{IrisCode, IrisRecord};
use irisc_runtime::manifest::{Manifest, ManifestInput};
use irisc_runtime::vocab::{InputKind, InputMask, InputRole, Sharing};
use rand::rngs::OsRng;
use rand::{SeedableRng, TryCryptoRng};

use super::deal::Plain;

use crate::driver::progress::progress;

/// The three additive components of every shared element, with what the file headers need.
/// (`Debug` prints only shapes: [`RingVec`] hides its values.)
#[derive(Debug)]
pub struct Dealt {
    pub role: InputRole,
    pub mask: InputMask,
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
            self.role,
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
pub fn encode(iris: &IrisCode, ring_bits: u32, mask: InputMask) -> Result<Vec<u64>> {
    let m = ring_mask(ring_bits).ok_or_else(|| anyhow!("ring Z_2^{ring_bits} is not supported"))?;
    let mut out: Vec<u64> = iris.masked_bits::<u64>().iter().map(|v| v & m).collect();
    if mask == InputMask::Secret {
        out.extend((0..iris.bits()).map(|i| u64::from(iris.mask_bit(i))));
    }
    Ok(out)
}

/// Splits every record into three additive sharings over Z_2^k, drawing x0 and x1 from `rng`.
pub fn deal<R: TryCryptoRng>(
    records: &[IrisRecord],
    role: InputRole,
    ring_bits: u32,
    mask: InputMask,
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
        InputMask::Public | InputMask::None => code_bits,
        InputMask::Secret => 2 * code_bits,
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
        if mask == InputMask::Public {
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
        role,
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
    role: InputRole,
    ring_bits: u32,
    stem: &str,
) -> Result<[PathBuf; 3]> {
    share_file_with_mask(input, out_dir, role, ring_bits, InputMask::Public, stem)
}

/// As [`share_file()`], choosing whether masks stay public or are secret-shared too.
pub fn share_file_with_mask(
    input: &Path,
    out_dir: &Path,
    role: InputRole,
    ring_bits: u32,
    mask: InputMask,
    stem: &str,
) -> Result<[PathBuf; 3]> {
    if stem.is_empty() || stem.contains(['/', '\\']) || stem.starts_with('.') {
        bail!("the output name `{stem}` must be a plain file name such as `db`");
    }
    let records = super::ids::naming_repeated_ids(input, ndjson::read_file(input))?;
    if records.is_empty() {
        bail!("{} holds no records to share", input.display());
    }
    let dealt = deal(&records, role, ring_bits, mask, &mut OsRng)
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

// ---------------------------------------------------------------------------------------
// Named inputs of any kind (manifest v2): `irisc share --program P.irs --input NAME=FILE`.

/// The manifest the compiler would embed in `checked`'s executable under `planned`: lowering
/// and passes, no LLVM. The single place the share path learns a program's inputs from.
pub fn program_manifest(
    checked: &super::pipeline::Checked,
    planned: &super::pipeline::Planned,
) -> Result<Manifest> {
    let explain = super::pipeline::explain_json(checked, planned);
    let cx = crate::mlir::Compiler::new().map_err(|e| anyhow!("{e}"))?;
    let irs = crate::lower::lower_program(&cx, &checked.program, &checked.source)
        .map_err(|e| anyhow!("{}: {e}", checked.path.display()))?;
    let mpc = crate::passes::PassManager::irs_to_mpc_pipeline(&planned.options)
        .run(&cx, irs, None)
        .map_err(|e| anyhow!("{}: {e}", checked.path.display()))?;
    crate::codegen::manifest::build(&checked.program, &checked.source, explain, &mpc)
        .map_err(|e| anyhow!("{}: {e}", checked.path.display()))
}

/// Every input's sharing plan (kind, elements, mask, sharing, ring, scale, owner), taken from
/// the manifest, so that `irisc share` follows whatever the compiler decides.
pub fn input_specs(manifest: &Manifest) -> Vec<ManifestInput> {
    manifest.inputs.clone()
}

/// `DIR/p0/NAME.shares`, `DIR/p1/NAME.shares`, `DIR/p2/NAME.shares`.
pub fn input_paths(out_dir: &Path, name: &str) -> [PathBuf; 3] {
    [0, 1, 2].map(|i| out_dir.join(format!("p{i}")).join(format!("{name}.shares")))
}

/// Reads the plaintext NDJSON of input `spec` (iris, embedding or bit records) and encodes it
/// as the values the share file holds.
/// The iris records of NDJSON file `path` for input `spec` (codes of `spec.elements` bits).
pub fn read_iris(spec: &ManifestInput, path: &Path) -> Result<Vec<IrisRecord>> {
    let records = ndjson::open(path)?
        .expect_bits(spec.elements as usize)
        .collect::<Result<Vec<_>, _>>();
    super::ids::naming_repeated_ids(path, records)
        .with_context(|| format!("{} (input `{}`)", path.display(), spec.name))
}

/// An embedding or bit file's read error for input `spec`; a repeated id (the reader stops at
/// the first, "id N is already used on line M") becomes the count and list of all of them.
fn values_error(path: &Path, spec: &ManifestInput, e: String) -> anyhow::Error {
    if e.contains("is already used on line") {
        if let Ok(Some(all)) = super::ids::repeated_ids(path) {
            return anyhow!("{all} (input `{}`)", spec.name);
        }
    }
    anyhow!("{e} (input `{}`)", spec.name)
}

/// The plaintext of iris `records` as input `spec`: one value per code bit (masked bits in
/// {-1, 0, 1}), then the mask bits when masks are secret, then the code's conjugate when the
/// program reads it; public masks as bytes.
pub fn plain_iris(spec: &ManifestInput, records: &[IrisRecord]) -> Result<Plain> {
    let mut values = Vec::with_capacity(records.len() * spec.elements as usize);
    let mut masks = Vec::new();
    for r in records {
        let masked: Vec<i64> = r
            .iris
            .masked_bits::<u64>()
            .iter()
            .map(|&v| v as i64)
            .collect();
        values.extend_from_slice(&masked);
        match spec.mask {
            InputMask::Secret => {
                values.extend((0..r.iris.bits()).map(|i| i64::from(r.iris.mask_bit(i))))
            }
            _ => masks.extend_from_slice(&r.iris.mask),
        }
        if spec.conjugate {
            values.extend(conjugate(&masked));
        }
    }
    Ok(Plain {
        role: spec.role,
        payload: spec.kind,
        mask: spec.mask,
        elements: spec.elements,
        scale_bits: u8::try_from(spec.scale_bits)
            .map_err(|_| anyhow!("scale 2^{} is too large", spec.scale_bits))?,
        ids: records.iter().map(|r| r.id).collect(),
        masks,
        conjugate: spec.conjugate,
        values,
    })
}

/// The conjugate of a code's masked bits: each 4-entry cell's imaginary (odd) entries negated.
/// Flipping a valid code bit negates its masked bit and a masked-out 0 stays 0, so this is the
/// masked bits of the code with its imaginary bits flipped (its mirror image before the
/// columns are reversed, which the parties do locally).
pub fn conjugate(masked_bits: &[i64]) -> impl Iterator<Item = i64> + '_ {
    masked_bits
        .iter()
        .enumerate()
        .map(|(i, &v)| if i % 4 % 2 == 1 { -v } else { v })
}

pub fn read_plain(spec: &ManifestInput, path: &Path) -> Result<Plain> {
    let mask = spec.mask;
    let (ids, masks, values) = match spec.kind {
        InputKind::Iris => {
            let records = read_iris(spec, path)?;
            if records.is_empty() {
                bail!(
                    "{} holds no records to share (input `{}`)",
                    path.display(),
                    spec.name
                );
            }
            return plain_iris(spec, &records);
        }
        InputKind::Embedding => {
            let records = ndjson_values::read_embeddings(path, Some(spec.elements as usize))
                .map_err(|e| values_error(path, spec, e))?;
            let values = records
                .iter()
                .flat_map(|r| {
                    r.embedding
                        .iter()
                        .map(|&v| ndjson_values::quantise(v, spec.scale_bits))
                })
                .collect();
            (
                records.iter().map(|r| r.id).collect::<Vec<u64>>(),
                Vec::new(),
                values,
            )
        }
        InputKind::Bit => {
            let records =
                ndjson_values::read_bits(path).map_err(|e| values_error(path, spec, e))?;
            let values = records.iter().map(|r| i64::from(r.bit)).collect();
            (records.iter().map(|r| r.id).collect(), Vec::new(), values)
        }
    };
    if ids.is_empty() {
        bail!(
            "{} holds no records to share (input `{}`)",
            path.display(),
            spec.name
        );
    }
    Ok(Plain {
        role: spec.role,
        payload: spec.kind,
        mask,
        elements: spec.elements,
        scale_bits: u8::try_from(spec.scale_bits)
            .map_err(|_| anyhow!("scale 2^{} is too large", spec.scale_bits))?,
        ids,
        masks,
        conjugate: false,
        values,
    })
}

/// The sharing and ring a file of `spec` is made with: the manifest's, or `sharing` when the
/// user forces one (Shamir sharings are always 16-bit words; bits always stay rep3).
pub fn sharing_for(spec: &ManifestInput, sharing: Option<Sharing>) -> (Sharing, u32) {
    match sharing {
        None => (spec.sharing, spec.ring_bits),
        Some(_) if spec.kind == InputKind::Bit => (Sharing::Rep3, spec.ring_bits),
        Some(s) if s.is_shamir() => (s, 16),
        Some(s) if spec.sharing.is_shamir() => (s, 16),
        Some(s) => (s, spec.ring_bits),
    }
}

/// Shares the NDJSON file `input` as the program's input `spec` into `DIR/p{0,1,2}/NAME.shares`.
pub fn share_input(
    spec: &ManifestInput,
    sharing: Option<Sharing>,
    input: &Path,
    out_dir: &Path,
) -> Result<[PathBuf; 3]> {
    share_input_to(spec, sharing, input, input_paths(out_dir, &spec.name))
}

/// [`share_input`] into the given three files (party 0, 1, 2).
pub fn share_input_to(
    spec: &ManifestInput,
    sharing: Option<Sharing>,
    input: &Path,
    paths: [PathBuf; 3],
) -> Result<[PathBuf; 3]> {
    let plain = read_plain(spec, input)?;
    let (sharing, ring_bits) = sharing_for(spec, sharing);
    let mut rng = rand_chacha::ChaCha20Rng::try_from_os_rng()
        .map_err(|e| anyhow!("the operating system's random generator failed: {e}"))?;
    let files = super::deal::deal(&plain, sharing, ring_bits, &mut rng)
        .with_context(|| format!("cannot share {} as input `{}`", input.display(), spec.name))?;
    drop(plain);
    let result = (|| -> Result<()> {
        for (file, path) in files.iter().zip(&paths) {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
            }
            share_file::write(path, file)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        // Never leave a partial set behind: the files of one run belong together.
        for p in &paths {
            let _ = std::fs::remove_file(p);
        }
        return Err(e);
    }
    Ok(paths)
}

/// Splits `NAME=PATH`.
pub fn parse_input_arg(arg: &str) -> Result<(String, PathBuf)> {
    match arg.split_once('=') {
        Some((n, p)) if !n.is_empty() && !p.is_empty() => Ok((n.to_string(), PathBuf::from(p))),
        _ => bail!("--input {arg:?} must have the form NAME=PATH"),
    }
}

/// The input of `manifest` called `name`, or an error listing the program's inputs.
pub fn find_input<'m>(manifest: &'m Manifest, name: &str) -> Result<&'m ManifestInput> {
    manifest
        .inputs
        .iter()
        .find(|i| i.name == name)
        .ok_or_else(|| {
            let names: Vec<String> = manifest
                .inputs
                .iter()
                .map(|i| format!("`{}`", i.name))
                .collect();
            anyhow!(
                "the program has no input `{name}`; its inputs are {}",
                names.join(", ")
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::driver::synth::iris::{generate, GenOptions};
    use irisc_runtime::io::share_file::{check_compatible, read, Expected};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn gallery(bits: usize) -> Vec<IrisRecord> {
        generate(6, 21, bits, &GenOptions::default()).unwrap()
    }

    fn expected_values(records: &[IrisRecord], k: u32, mask: InputMask) -> Vec<u64> {
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
            &encode(&iris, 12, InputMask::Public).unwrap()[..3],
            &[1, 0xFFF, 0]
        );
        assert_eq!(
            &encode(&iris, 64, InputMask::Public).unwrap()[..3],
            &[1, u64::MAX, 0]
        );
        let secret = encode(&iris, 16, InputMask::Secret).unwrap();
        assert_eq!(secret.len(), 128);
        assert_eq!(&secret[64..67], &[1, 1, 0]);
    }

    #[test]
    fn reconstructs_in_memory_for_all_rings() {
        let recs = gallery(640);
        for k in [2, 16, 17, 32, 36, 64] {
            for mask in [InputMask::Public, InputMask::Secret] {
                let mut rng = ChaCha20Rng::seed_from_u64(u64::from(k));
                let dealt = deal(&recs, InputRole::Gallery, k, mask, &mut rng).unwrap();
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
        let paths = share_file(&input, &out, InputRole::Gallery, 16, "db").unwrap();
        assert_eq!(paths[1], out.join("db.p1.shr"));
        let files = paths.clone().map(|p| read(&p).unwrap());
        assert_eq!(
            reconstruct(&files).unwrap(),
            expected_values(&recs, 16, InputMask::Public)
        );
        for (i, f) in files.iter().enumerate() {
            assert_eq!(f.header.party as usize, i);
            assert_eq!(f.ids, (0..6).collect::<Vec<u64>>());
            assert_eq!(f.masks.len(), 6 * 1600);
            assert_eq!(&f.masks[1600..3200], &recs[1].iris.mask[..]);
            let expected = Expected {
                input: "db".into(),
                role: InputRole::Gallery,
                party: i as u8,
                sharing: Sharing::Rep3,
                payload: InputKind::Iris,
                ring_bits: 16,
                elements: 12_800,
                mask: InputMask::Public,
                scale_bits: 0,
                conjugate: false,
            };
            check_compatible(&paths[i], &f.header, &expected).unwrap();
        }
        // A second run draws fresh randomness: other shares, other set id, same secrets.
        let again = share_file(
            &input,
            &dir.path().join("again"),
            InputRole::Gallery,
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
        let dealt = deal(&recs, InputRole::Query, 16, InputMask::Public, &mut OsRng).unwrap();
        let secret = expected_values(&recs, 16, InputMask::Public);
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
                InputRole::Gallery,
                k,
                InputMask::Public,
                &mut rng.clone(),
            )
            .err()
            .map(|e| e.to_string())
        };
        assert!(err(1).unwrap().contains("2 to 64 bits"));
        assert!(err(65).is_some());
        assert!(deal(&[], InputRole::Gallery, 16, InputMask::Public, &mut rng).is_err());
        let mut mixed = recs.clone();
        mixed[3].iris = IrisCode::zeros(64).unwrap();
        let e = deal(&mixed, InputRole::Gallery, 16, InputMask::Public, &mut rng).unwrap_err();
        assert!(e.to_string().contains("record 3"), "{e}");

        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("db.ndjson");
        ndjson::write_file(&input, &recs).unwrap();
        assert!(share_file(&input, dir.path(), InputRole::Gallery, 16, "../x").is_err());
        std::fs::write(&input, "").unwrap();
        let e = share_file(&input, dir.path(), InputRole::Gallery, 16, "db").unwrap_err();
        assert!(e.to_string().contains("no records"), "{e}");
        std::fs::write(&input, "{\"id\": 1}\n").unwrap();
        let e = share_file(&input, dir.path(), InputRole::Gallery, 16, "db").unwrap_err();
        assert!(e.to_string().contains("line 1: code is missing"), "{e}");
        assert!(!dir.path().join("db.p0.shr").exists());
    }

    fn spec(name: &str, role: InputRole, kind: InputKind, elements: u32) -> ManifestInput {
        ManifestInput {
            name: name.into(),
            role,
            owner: (role == InputRole::Query).then_some(0),
            kind,
            elements,
            mask: if kind == InputKind::Iris {
                InputMask::Secret
            } else {
                InputMask::None
            },
            sharing: Sharing::Rep3,
            ring_bits: if kind == InputKind::Bit { 1 } else { 20 },
            scale_bits: if kind == InputKind::Embedding { 8 } else { 0 },
            conjugate: false,
        }
    }

    #[test]
    fn named_inputs_of_every_kind_are_shared_for_the_program() {
        use irisc_runtime::io::ndjson_values::{
            write_bits, write_embeddings, BitRecord, EmbeddingRecord,
        };
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("shares");
        // Iris with secret masks, forced to GR(2^16, 4).
        let iris = dir.path().join("left.ndjson");
        let recs = gallery(128);
        ndjson::write_file(&iris, &recs).unwrap();
        let g = spec("left", InputRole::Gallery, InputKind::Iris, 128);
        let paths = share_input(&g, Some(Sharing::Gr4), &iris, &out).unwrap();
        assert_eq!(paths[2], out.join("p2").join("left.shares"));
        let files = paths.clone().map(|p| read(&p).unwrap());
        assert_eq!(files[0].header.sharing, Sharing::Gr4);
        assert_eq!(files[0].header.ring_bits, 16);
        let want: Vec<u64> = expected_values(&recs, 16, InputMask::Secret);
        assert_eq!(super::super::deal::open(&files).unwrap(), want);
        // The runtime's check accepts them for a gr4 program and names the input otherwise.
        let mut g4 = g.clone();
        (g4.sharing, g4.ring_bits) = (Sharing::Gr4, 16);
        check_compatible(&paths[1], &files[1].header, &Expected::for_input(&g4, 1)).unwrap();
        let e =
            check_compatible(&paths[1], &files[1].header, &Expected::for_input(&g, 1)).unwrap_err();
        assert!(e.to_string().contains("input `left`"), "{e}");

        // Embeddings: quantised round(v * 2^8), clamped.
        let emb = dir.path().join("v.ndjson");
        write_embeddings(
            &emb,
            &[
                EmbeddingRecord {
                    id: 5,
                    embedding: vec![0.5, -0.25, 1.5],
                },
                EmbeddingRecord {
                    id: 6,
                    embedding: vec![-2.0, 0.0, 0.00390625],
                },
            ],
        )
        .unwrap();
        let v = spec("v", InputRole::Query, InputKind::Embedding, 3);
        let files = share_input(&v, None, &emb, &out)
            .unwrap()
            .map(|p| read(&p).unwrap());
        let m = (1u64 << 20) - 1;
        let want: Vec<u64> = [128i64, -64, 256, -256, 0, 1]
            .iter()
            .map(|&x| x as u64 & m)
            .collect();
        assert_eq!(super::super::deal::open(&files).unwrap(), want);
        assert_eq!(files[0].ids, vec![5, 6]);
        assert_eq!(files[0].header.scale_bits, 8);
        let wrong_dim = spec("v", InputRole::Query, InputKind::Embedding, 4);
        let e = share_input(&wrong_dim, None, &emb, &out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("dimension 4") && e.contains("input `v`"), "{e}");

        // Bits, and an iris file given for a bit input.
        let bits = dir.path().join("tier.ndjson");
        write_bits(
            &bits,
            &[
                BitRecord { id: 0, bit: true },
                BitRecord { id: 1, bit: false },
            ],
        )
        .unwrap();
        let b = spec("tier", InputRole::Query, InputKind::Bit, 1);
        let files = share_input(&b, None, &bits, &out)
            .unwrap()
            .map(|p| read(&p).unwrap());
        assert_eq!(super::super::deal::open(&files).unwrap(), vec![1, 0]);
        let e = share_input(&b, None, &iris, &out).unwrap_err().to_string();
        assert!(
            e.contains("bit is missing") && e.contains("input `tier`"),
            "{e}"
        );
        let e = share_input(&g, None, &bits, &out).unwrap_err();
        assert!(format!("{e:#}").contains("code is missing"), "{e:#}");
    }

    #[test]
    fn sharing_plans_follow_the_manifest() {
        let g = spec("left", InputRole::Gallery, InputKind::Iris, 128);
        assert_eq!(sharing_for(&g, None), (Sharing::Rep3, 20));
        assert_eq!(sharing_for(&g, Some(Sharing::Fp)), (Sharing::Fp, 16));
        let m = irisc_runtime::manifest::Manifest {
            abi: irisc_runtime::manifest::ABI_VERSION,
            program: "p".into(),
            fingerprint: "f".into(),
            inputs: vec![g.clone()],
            zips: vec![],
            parties: ["a".into(), "b".into(), "c".into()],
            explain: serde_json::Value::Null,
            record_chunk: 0,
            beaver: None,
        };
        assert_eq!(input_specs(&m), vec![g]);
        assert!(find_input(&m, "right")
            .unwrap_err()
            .to_string()
            .contains("its inputs are `left`"));
        assert_eq!(
            parse_input_arg("a=b/c=d").unwrap(),
            ("a".to_string(), PathBuf::from("b/c=d"))
        );
        assert!(parse_input_arg("a").is_err());
    }

    #[test]
    fn program_manifest_gives_the_sharing_plan() {
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/iris_ids.irs");
        let checked = super::super::pipeline::read_and_check(&path).unwrap();
        // Forced to rep3: the ring is then Lemma 1's 16 bits for 12 800-bit codes.
        let options = crate::analysis::plan::PlanOptions {
            sharing: Some(irisc_runtime::vocab::Sharing::Rep3),
            ..Default::default()
        };
        let planned = super::super::pipeline::plan(&checked, &options).unwrap();
        let specs = input_specs(&program_manifest(&checked, &planned).unwrap());
        let ring = 16;
        let summary: Vec<_> = specs
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.role,
                    s.owner,
                    s.kind,
                    s.elements,
                    s.mask,
                    s.sharing,
                    s.ring_bits,
                )
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                (
                    "db",
                    InputRole::Gallery,
                    None,
                    InputKind::Iris,
                    12_800,
                    InputMask::Public,
                    Sharing::Rep3,
                    ring
                ),
                (
                    "q",
                    InputRole::Query,
                    Some(0),
                    InputKind::Iris,
                    12_800,
                    InputMask::Public,
                    Sharing::Rep3,
                    ring
                ),
            ]
        );
    }

    #[test]
    fn every_repeated_id_of_a_bit_file_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bits.ndjson");
        let ids = [4u64, 5, 4, 6, 5, 4];
        let text: String = ids
            .iter()
            .map(|id| format!("{{\"id\": {id}, \"bit\": true}}\n"))
            .collect();
        std::fs::write(&path, text).unwrap();
        let spec = ManifestInput {
            name: "flag".into(),
            role: InputRole::Gallery,
            owner: None,
            kind: InputKind::Bit,
            elements: 1,
            mask: InputMask::None,
            sharing: Sharing::Rep3,
            ring_bits: 2,
            scale_bits: 0,
            conjugate: false,
        };
        let e = format!("{:#}", read_plain(&spec, &path).err().unwrap());
        assert!(
            e.contains("2 ids appear on more than one line (3 repeated records): 4 (lines 1, 3, 6), 5 (lines 2, 5)"),
            "{e}"
        );
        assert!(e.contains("(input `flag`)"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// A query dealt for `mirror(q)` under a Galois ring ends each record with its code's
        /// conjugate: the masked bits of the code whose imaginary (odd-in-cell) bits are
        /// flipped, written here bit by bit from the contract, with any mask, after the
        /// secret masks when those are shared; and the three files open to those values.
        #[test]
        fn a_conjugate_is_the_code_with_its_imaginary_bits_flipped(
            code in proptest::collection::vec(proptest::prelude::any::<u8>(), 32),
            mask in proptest::collection::vec(proptest::prelude::any::<u8>(), 32),
            secret in proptest::prelude::any::<bool>(),
            seed in proptest::prelude::any::<u64>(),
        ) {
            let iris = IrisCode { code: code.clone(), mask: mask.clone() };
            let mut flipped = iris.clone();
            for i in 0..256 {
                if i % 4 % 2 == 1 {
                    flipped.code[i / 8] ^= 1 << (i % 8);
                }
            }
            let mut spec = spec("q", InputRole::Query, InputKind::Iris, 256);
            spec.mask = if secret { InputMask::Secret } else { InputMask::Public };
            spec.sharing = Sharing::Gr2;
            spec.ring_bits = 16;
            spec.conjugate = true;
            let plain = plain_iris(&spec, &[IrisRecord { id: 3, iris }]).unwrap();
            let at = if secret { 512 } else { 256 };
            proptest::prop_assert_eq!(plain.values.len(), at + 256);
            let want: Vec<i64> = flipped.masked_bits::<u64>().iter().map(|&v| v as i64).collect();
            proptest::prop_assert_eq!(&plain.values[at..], &want[..]);
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let files = super::super::deal::deal(&plain, Sharing::Gr2, 16, &mut rng).unwrap();
            proptest::prop_assert!(files.iter().all(|f| f.header.conjugate));
            let opened = super::super::deal::open(&files).unwrap();
            let want_open: Vec<u64> = plain.values.iter().map(|&v| (v as u64) & 0xFFFF).collect();
            proptest::prop_assert_eq!(opened, want_open);
        }
    }
}
