//! Loading inputs: every part and sharing reconstructs to what was shared, and every mistake a
//! user can make with `--input` is refused with a message that names the input. A serving
//! party's galleries follow their stores: through changes read in place, and through the
//! enrolments (`serve::enrol::settle`) and reconciliations (`serve::reconcile`) that write them,
//! run here on real stores by three parties over the in-memory transport.

use std::path::{Path, PathBuf};

use super::*;
use crate::io::share_file::{write, ShareFile, ShareFileHeader};
use crate::manifest::{ManifestInput, ABI_VERSION};
use crate::net::Transport;
use crate::share::{fp, galois};
use crate::vocab::{InputKind, InputMask, Sharing};

/// A deterministic generator, enough for test shares.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 11
    }
}

fn spec(name: &str, role: InputRole, kind: InputKind, elements: u32) -> ManifestInput {
    ManifestInput {
        name: name.into(),
        role,
        owner: (role == InputRole::Query).then_some(0),
        kind,
        elements,
        mask: if kind == InputKind::Iris {
            InputMask::Public
        } else {
            InputMask::None
        },
        sharing: Sharing::Rep3,
        ring_bits: 32,
        scale_bits: if kind == InputKind::Embedding { 8 } else { 0 },
        conjugate: false,
    }
}

fn manifest(inputs: Vec<ManifestInput>) -> Manifest {
    Manifest {
        abi: ABI_VERSION,
        program: "t".into(),
        fingerprint: "fp".into(),
        inputs,
        zips: vec![],
        parties: ["a".into(), "b".into(), "c".into()],
        explain: serde_json::Value::Null,
        record_chunk: 0,
        beaver: None,
    }
}

/// Values of a record: one per shared word (sections concatenated), before sharing.
struct Data {
    ids: Vec<u64>,
    /// `count x elements_per_record` secrets (for GR: the unpacked values, per section).
    values: Vec<u64>,
    masks: Vec<u8>,
}

fn header_for(s: &ManifestInput, party: u8, count: u64, set_id: [u8; 16]) -> ShareFileHeader {
    let mut h = ShareFileHeader::new(
        s.role,
        party,
        s.mask,
        s.ring_bits,
        s.elements,
        count,
        set_id,
    );
    h.sharing = s.sharing;
    h.payload = s.kind;
    h.scale_bits = s.scale_bits as u8;
    h
}

/// Writes the three parties' files of `data` for input `s` into `dir`; returns their paths.
fn deal(dir: &Path, s: &ManifestInput, data: &Data, seed: u64) -> [PathBuf; 3] {
    let mut rng = Lcg(seed);
    let count = data.ids.len() as u64;
    let mut set_id = [0u8; 16];
    set_id[..8].copy_from_slice(&seed.to_le_bytes());
    let h0 = header_for(s, 0, count, set_id);
    let k = s.ring_bits;
    let own: [RingVec; 3] = match s.sharing {
        Sharing::Rep3 => {
            let m = crate::io::share_file::ring_mask(k).unwrap();
            let mut x: [Vec<u64>; 3] = Default::default();
            for &v in &data.values {
                let (a, b) = (rng.next() & m, rng.next() & m);
                x[0].push(a);
                x[1].push(b);
                x[2].push(v.wrapping_sub(a).wrapping_sub(b) & m);
            }
            x.map(|c| RingVec::from_u64s(k, c).unwrap())
        }
        Sharing::Fp => {
            let vals: Vec<u16> = data.values.iter().map(|&v| fp::reduce_u64(v)).collect();
            let mut r = <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::seed_from_u64(seed);
            fp::shamir_share(&vals, &mut r).map(RingVec::U16)
        }
        Sharing::Gr2 | Sharing::Gr4 => {
            let per_section = s.elements as usize;
            let packing = if s.role == InputRole::Query {
                galois::Packing::Plain
            } else {
                galois::Packing::Reversed
            };
            let vals: Vec<u16> = data.values.iter().map(|&v| v as u16).collect();
            let n = vals.len() / per_section;
            let mut r = <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::seed_from_u64(seed);
            if s.sharing == Sharing::Gr2 {
                galois::share_codes::<2>(&vals, n, per_section, packing, &mut r)
                    .map(|v| RingVec::U16(v.coefs))
            } else {
                galois::share_codes::<4>(&vals, n, per_section, packing, &mut r)
                    .map(|v| RingVec::U16(v.coefs))
            }
        }
    };
    let dir_paths = [0, 1, 2].map(|p| dir.join(format!("p{p}-{}.shares", s.name)));
    for p in 0..3 {
        let mut header = h0.clone();
        header.party = p as u8;
        let prev = if s.sharing.is_shamir() {
            RingVec::U16(Vec::new())
        } else {
            own[(p + 2) % 3].clone()
        };
        let file = ShareFile {
            header,
            ids: data.ids.clone(),
            masks: data.masks.clone(),
            own: own[p].clone(),
            prev,
        };
        write(&dir_paths[p], &file).unwrap();
    }
    dir_paths
}

fn args(party: usize, m: &Manifest, extra: &[String]) -> PartyArgs {
    let mut argv: Vec<std::ffi::OsString> =
        vec!["prog".into(), "--party".into(), party.to_string().into()];
    argv.extend(extra.iter().map(Into::into));
    PartyArgs::parse(argv, m).unwrap()
}

fn input_flags(files: &[(&str, &[PathBuf; 3])], party: usize) -> Vec<String> {
    files
        .iter()
        .flat_map(|(n, p)| ["--input".to_string(), format!("{n}={}", p[party].display())])
        .collect()
}

fn load3(m: &Manifest, files: &[(&str, &[PathBuf; 3])]) -> [Inputs; 3] {
    [0, 1, 2].map(|p| Inputs::load(&args(p, m, &input_flags(files, p)), m).unwrap())
}

fn load_err(m: &Manifest, flags: Vec<String>) -> String {
    match Inputs::load(&args(0, m, &flags), m) {
        Ok(_) => panic!("loaded"),
        Err(e) => e.to_string(),
    }
}

/// The secrets of rep3 `Codes` values of the three parties, mod 2^k.
fn open_codes(v: [Value; 3], k: u32) -> (Vec<u64>, Arc<Codes>) {
    let c = v.map(|v| match v {
        Value::Codes(c) => c,
        other => panic!("{}", other.kind()),
    });
    let m = crate::io::share_file::ring_mask(k).unwrap();
    let n = c[0].count * c[0].bits;
    for p in 0..3 {
        assert_eq!(c[p].a.word_bytes(), RingVec::word_bytes_for(k).unwrap());
        // Replication: party p's prev is party p-1's own.
        for i in 0..n {
            assert_eq!(c[p].components(i).1, c[(p + 2) % 3].components(i).0);
        }
    }
    let vals = (0..n)
        .map(|i| (c[0].components(i).0 + c[1].components(i).0 + c[2].components(i).0) & m)
        .collect();
    (vals, c[0].clone())
}

fn load_all(
    ins: &mut [Inputs; 3],
    input: i32,
    part: InputPart,
    q: i64,
    k: i32,
    earlier: bool,
) -> [Value; 3] {
    let mut out = Vec::new();
    for x in ins.iter_mut() {
        out.push(if earlier {
            x.load_earlier(input, part, q, k).unwrap()
        } else {
            x.load_input(input, part, q, k).unwrap()
        });
    }
    out.try_into().ok().unwrap()
}

fn iris_data(count: usize, bits: usize, secret: bool, seed: u64) -> Data {
    let mut r = Lcg(seed);
    let mut values = Vec::new();
    let mut masks = Vec::new();
    for _ in 0..count {
        let code: Vec<u64> = (0..bits)
            .map(|_| [0u64, 1, u64::MAX][(r.next() % 3) as usize])
            .collect();
        values.extend(&code);
        if secret {
            values.extend(code.iter().map(|&v| u64::from(v != 0)));
        } else {
            masks.extend((0..bits / 8).map(|i| (r.next() as u8) | i as u8));
        }
    }
    Data {
        ids: (0..count as u64).map(|i| 100 + 3 * i).collect(),
        values,
        masks,
    }
}

#[test]
fn rep3_iris_gallery_and_queries_at_every_ring() {
    let dir = tempfile::tempdir().unwrap();
    let g = spec("left", InputRole::Gallery, InputKind::Iris, 128);
    let q = spec("ql", InputRole::Query, InputKind::Iris, 128);
    let gd = iris_data(3, 128, false, 1);
    let qd = iris_data(2, 128, false, 2);
    let gf = deal(dir.path(), &g, &gd, 11);
    let qf = deal(dir.path(), &q, &qd, 12);
    let m = manifest(vec![g, q]);
    let mut ins = load3(&m, &[("left", &gf), ("ql", &qf)]);
    assert_eq!(ins[0].query_count(), 2);
    for k in [32u32, 20, 16, 9] {
        let (vals, c) = open_codes(
            load_all(&mut ins, 0, InputPart::Codes, -1, k as i32, false),
            k,
        );
        let m = crate::io::share_file::ring_mask(k).unwrap();
        assert_eq!(
            vals,
            gd.values.iter().map(|v| v & m).collect::<Vec<_>>(),
            "k = {k}"
        );
        assert_eq!(c.ids, gd.ids);
        assert_eq!(c.bits, 128);
        // Public masks travel with the codes.
        assert_eq!(c.masks[0].to_le_bytes()[..], gd.masks[..8]);
        let (vals, c) = open_codes(
            load_all(&mut ins, 1, InputPart::Codes, 1, k as i32, false),
            k,
        );
        assert_eq!(
            vals,
            qd.values[128..].iter().map(|v| v & m).collect::<Vec<_>>()
        );
        assert_eq!(c.ids, vec![103]);
        assert_eq!(c.count, 1);
    }
    // The legacy entry points' view: the only gallery / query.
    assert_eq!(ins[0].single(InputRole::Gallery).unwrap(), 0);
    assert_eq!(ins[0].single(InputRole::Query).unwrap(), 1);
    // A wider ring than the file's cannot be made locally; bad parts and queries are refused.
    let e = ins[0]
        .load_input(0, InputPart::Codes, -1, 33)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("cannot be loaded over Z_2^33"), "{e}");
    assert!(ins[0].load_input(1, InputPart::Codes, 2, 16).is_err());
    assert!(ins[0].load_input(1, InputPart::Codes, -1, 16).is_err());
    let e = ins[0]
        .load_input(0, InputPart::Masks, -1, 16)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("part 1"), "{e}");
    assert!(ins[0].load_input(5, InputPart::Codes, -1, 16).is_err());
}

#[test]
fn secret_masks_embeddings_and_bits() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = spec("g", InputRole::Gallery, InputKind::Iris, 64);
    g.mask = InputMask::Secret;
    let gd = iris_data(2, 64, true, 3);
    let e = spec("v", InputRole::Query, InputKind::Embedding, 100);
    let mut r = Lcg(9);
    let ed = Data {
        ids: vec![7, 8, 9],
        values: (0..300)
            .map(|_| (r.next() % 513).wrapping_sub(256))
            .collect(),
        masks: vec![],
    };
    let mut b = spec("tier", InputRole::Query, InputKind::Bit, 1);
    b.ring_bits = 1;
    let bd = Data {
        ids: vec![7, 8, 9],
        values: vec![1, 0, 1],
        masks: vec![],
    };
    let (gf, ef, bf) = (
        deal(dir.path(), &g, &gd, 21),
        deal(dir.path(), &e, &ed, 22),
        deal(dir.path(), &b, &bd, 23),
    );
    let m = manifest(vec![g, e, b]);
    let mut ins = load3(&m, &[("g", &gf), ("v", &ef), ("tier", &bf)]);
    // Codes section and mask section of every record.
    let (codes, c) = open_codes(load_all(&mut ins, 0, InputPart::Codes, -1, 16, false), 16);
    let (masks, _) = open_codes(load_all(&mut ins, 0, InputPart::Masks, -1, 16, false), 16);
    let w = |r: usize, s: usize| {
        gd.values[r * 128 + s * 64..r * 128 + s * 64 + 64]
            .iter()
            .map(|v| v & 0xFFFF)
    };
    assert_eq!(codes, w(0, 0).chain(w(1, 0)).collect::<Vec<_>>());
    assert_eq!(masks, w(0, 1).chain(w(1, 1)).collect::<Vec<_>>());
    assert_eq!(c.masks, vec![u64::MAX; 2]);
    // Embeddings: 100 values padded with zeros to 128, all-ones masks; signed values mod 2^k.
    let (vals, c) = open_codes(
        load_all(&mut ins, 1, InputPart::Embedding, 2, 24, false),
        24,
    );
    assert_eq!(c.bits, 128);
    assert_eq!(
        &vals[..100],
        &ed.values[200..]
            .iter()
            .map(|v| v & 0xFF_FFFF)
            .collect::<Vec<_>>()[..]
    );
    assert!(vals[100..].iter().all(|&v| v == 0));
    assert_eq!(c.masks, vec![u64::MAX; 2]);
    // Bits: XOR shares, one per query; earlier() gives the bits before.
    for q in 0..3 {
        let v = load_all(&mut ins, 2, InputPart::Bit, q, 1, false).map(|v| match v {
            Value::Bits(b) => b,
            other => panic!("{}", other.kind()),
        });
        assert_eq!(v[0].len, 1);
        let bit = (v[0].own[0] ^ v[1].own[0] ^ v[2].own[0]) & 1;
        assert_eq!(bit, bd.values[q as usize]);
        assert_eq!(v[1].prev, v[0].own);
    }
    let v = load_all(&mut ins, 2, InputPart::Bit, 2, 1, true).map(|v| match v {
        Value::Bits(b) => b,
        _ => panic!(),
    });
    assert_eq!(v[0].len, 2);
    assert_eq!((v[0].own[0] ^ v[1].own[0] ^ v[2].own[0]) & 3, 0b01);
    // Wrong parts for a kind.
    assert!(ins[0].load_input(1, InputPart::Codes, 0, 16).is_err());
    assert!(ins[0].load_input(2, InputPart::Codes, 0, 1).is_err());
}

#[test]
fn earlier_is_the_queries_before() {
    let dir = tempfile::tempdir().unwrap();
    let q = spec("q", InputRole::Query, InputKind::Iris, 64);
    let qd = iris_data(4, 64, false, 5);
    let qf = deal(dir.path(), &q, &qd, 31);
    let m = manifest(vec![q]);
    let mut ins = load3(&m, &[("q", &qf)]);
    let (vals, c) = open_codes(load_all(&mut ins, 0, InputPart::Codes, 0, 32, true), 32);
    assert!(vals.is_empty());
    assert_eq!(c.count, 0);
    let (vals, c) = open_codes(load_all(&mut ins, 0, InputPart::Codes, 3, 16, true), 16);
    assert_eq!(c.ids, vec![0, 1, 2]);
    assert_eq!(c.count, 3);
    assert_eq!(
        vals,
        qd.values[..192]
            .iter()
            .map(|v| v & 0xFFFF)
            .collect::<Vec<_>>()
    );
    assert_eq!(c.masks.len(), 3);
}

fn shamir_data(
    ins: &mut [Inputs; 3],
    input: i32,
    part: InputPart,
    q: i64,
    earlier: bool,
) -> [Arc<ShamirCodes>; 3] {
    load_all(ins, input, part, q, 16, earlier).map(|v| match v {
        Value::Shamir(c) => c,
        other => panic!("{}", other.kind()),
    })
}

#[test]
fn shamir_inputs_reconstruct() {
    let dir = tempfile::tempdir().unwrap();
    let mut g = spec("g", InputRole::Gallery, InputKind::Iris, 64);
    g.sharing = Sharing::Gr4;
    g.ring_bits = 16;
    g.mask = InputMask::Secret;
    let gd = iris_data(2, 64, true, 7);
    let mut q = spec("q", InputRole::Query, InputKind::Embedding, 6);
    q.sharing = Sharing::Fp;
    q.ring_bits = 16;
    let qd = Data {
        ids: vec![1, 2],
        values: vec![1, 65518, 0, 5, 7, 9, 3, 3, 3, 3, 3, 65000],
        masks: vec![],
    };
    let mut q2 = spec("q2", InputRole::Query, InputKind::Embedding, 3);
    q2.sharing = Sharing::Gr4;
    q2.ring_bits = 16;
    let q2d = Data {
        ids: vec![1, 2],
        values: vec![1, 2, 3, 4, 5, 6],
        masks: vec![],
    };
    let (gf, qf, q2f) = (
        deal(
            dir.path(),
            &g,
            &Data {
                values: gd.values.iter().map(|&v| v & 0xFFFF).collect(),
                ..gd
            },
            41,
        ),
        deal(dir.path(), &q, &qd, 42),
        deal(dir.path(), &q2, &q2d, 43),
    );
    let gd = iris_data(2, 64, true, 7);
    let m = manifest(vec![g, q, q2]);
    let mut ins = load3(&m, &[("g", &gf), ("q", &qf), ("q2", &q2f)]);
    // GR(2^16, 4) gallery, secret masks: each section reconstructs (parties 0 and 2).
    for (part, s) in [(InputPart::Codes, 0), (InputPart::Masks, 1)] {
        let c = shamir_data(&mut ins, 0, part, -1, false);
        assert_eq!((c[0].count, c[0].len, c[0].words_per_code()), (2, 64, 64));
        assert_eq!(c[0].side, crate::ops::shamir_codes::Side::Gallery);
        for r in 0..2 {
            let share = |p: usize| galois::ShamirVec::<4> {
                coefs: c[p].words[r * 64..(r + 1) * 64].to_vec(),
            };
            let (a, b) = (share(0), share(2));
            let elems = galois::reconstruct::<4>((0, &a), (2, &b));
            let got = galois::unpack(&elems, 64, galois::Packing::Reversed);
            let want: Vec<u16> = gd.values[r * 128 + s * 64..r * 128 + s * 64 + 64]
                .iter()
                .map(|&v| v as u16)
                .collect();
            assert_eq!(got, want);
        }
    }
    // F_p query: query 1 reconstructs from any two parties.
    let c = shamir_data(&mut ins, 1, InputPart::Embedding, 1, false);
    assert_eq!(
        (c[0].count, c[0].words_per_code(), c[0].ids.clone()),
        (1, 6, vec![2])
    );
    assert_eq!(
        fp::shamir_reconstruct((1, &c[1].words), (2, &c[2].words)),
        vec![3, 3, 3, 3, 3, 65000]
    );
    // earlier() over F_p works; over GR(2^16, 4) queries it is refused with the remedy.
    let c = shamir_data(&mut ins, 1, InputPart::Embedding, 1, true);
    assert_eq!(c[0].ids, vec![0]);
    assert_eq!(
        fp::shamir_reconstruct((0, &c[0].words), (1, &c[1].words)),
        vec![1, 65518, 0, 5, 7, 9]
    );
    let e = ins[0]
        .load_earlier(2, InputPart::Embedding, 1, 16)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("--sharing rep3, fp or gr2"), "{e}");
    // GR embeddings of dimension 3 are padded to one ring element.
    let c = shamir_data(&mut ins, 2, InputPart::Embedding, 0, false);
    assert_eq!((c[0].len, c[0].words_per_code()), (3, 4));
    let share = |p: usize| galois::ShamirVec::<4> {
        coefs: c[p].words.to_vec(),
    };
    let elems = galois::reconstruct::<4>((0, &share(0)), (1, &share(1)));
    assert_eq!(
        galois::unpack(&elems, 3, galois::Packing::Plain),
        vec![1, 2, 3]
    );
}

#[test]
fn command_line_mistakes_name_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let g = spec("left", InputRole::Gallery, InputKind::Iris, 64);
    let g2 = spec("right", InputRole::Gallery, InputKind::Iris, 64);
    let q = spec("ql", InputRole::Query, InputKind::Iris, 64);
    let gf = deal(dir.path(), &g, &iris_data(2, 64, false, 1), 51);
    deal(dir.path(), &g2, &iris_data(2, 64, false, 1), 52);
    let qf = deal(dir.path(), &q, &iris_data(2, 64, false, 2), 53);
    let m = manifest(vec![g.clone(), g2.clone(), q.clone()]);
    let flag = |n: &str, p: &Path| vec!["--input".to_string(), format!("{n}={}", p.display())];

    let e = load_err(&m, [flag("left", &gf[0]), flag("ql", &qf[0])].concat());
    assert_eq!(
        e,
        "no share file for gallery input `right`: pass --input right=PATH"
    );
    let e = load_err(&m, flag("nope", &gf[0]));
    assert!(
        e.contains("no input `nope`; its inputs are `left`, `right`, `ql`"),
        "{e}"
    );
    let e = load_err(&m, vec!["--db".into(), gf[0].display().to_string()]);
    assert!(
        e.contains(
            "--db is a shorthand for programs with exactly one gallery input, but this one has 2"
        ),
        "{e}"
    );
    let e = load_err(&m, vec!["--input".into(), "left".into()]);
    assert!(e.contains("NAME=PATH"), "{e}");
    let e = load_err(&m, [flag("left", &gf[0]), flag("left", &gf[0])].concat());
    assert!(e.contains("`left` is given twice"), "{e}");
    // One gallery: --db names it, and the missing-file message offers it.
    let m1 = manifest(vec![g.clone(), q.clone()]);
    let e = load_err(&m1, vec!["--query".into(), qf[0].display().to_string()]);
    assert_eq!(
        e,
        "no share file for gallery input `left`: pass --input left=PATH (or --db PATH)"
    );
    let ok = Inputs::load(
        &args(
            0,
            &m1,
            &[
                "--db".into(),
                gf[0].display().to_string(),
                "--query".into(),
                qf[0].display().to_string(),
            ],
        ),
        &m1,
    );
    assert!(ok.is_ok());
    // A file of another input kind, another party, or another sharing.
    let e = load_err(&m1, [flag("left", &qf[0]), flag("ql", &qf[0])].concat());
    assert!(
        e.contains("holds a query but input `left` is a gallery"),
        "{e}"
    );
    let e = load_err(&m1, [flag("left", &gf[1]), flag("ql", &qf[0])].concat());
    assert!(
        e.contains("holds party 1's shares but this is party 0"),
        "{e}"
    );
    let mut fp_m = m1.clone();
    fp_m.inputs[0].sharing = Sharing::Fp;
    fp_m.inputs[0].ring_bits = 16;
    let e = load_err(&fp_m, [flag("left", &gf[0]), flag("ql", &qf[0])].concat());
    assert!(e.contains("holds replicated (rep3) shares but this program reads input `left` as Shamir shares over F_p (fp)"), "{e}");
    assert!(e.contains("--sharing fp"), "{e}");
}

#[test]
fn batches_zips_and_session_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let g = spec("left", InputRole::Gallery, InputKind::Iris, 64);
    let g2 = spec("right", InputRole::Gallery, InputKind::Iris, 64);
    let q = spec("ql", InputRole::Query, InputKind::Iris, 64);
    let mut b = spec("tier", InputRole::Query, InputKind::Bit, 1);
    b.ring_bits = 1;
    let gf = deal(dir.path(), &g, &iris_data(2, 64, false, 1), 61);
    let qf = deal(dir.path(), &q, &iris_data(2, 64, false, 2), 62);
    let bits3 = Data {
        ids: vec![0, 1, 2],
        values: vec![1, 1, 0],
        masks: vec![],
    };
    let bf = deal(dir.path(), &b, &bits3, 63);
    let m = manifest(vec![q.clone(), b.clone()]);
    let e = load_err(&m, input_flags(&[("ql", &qf), ("tier", &bf)], 0));
    assert!(
        e.contains("`ql`") && e.contains("holds 2 queries and `tier`") && e.contains("holds 3"),
        "{e}"
    );

    let mut other = iris_data(2, 64, false, 1);
    other.ids[1] = 999;
    let g2f = deal(dir.path(), &g2, &other, 64);
    let mut m = manifest(vec![g.clone(), g2.clone(), q.clone()]);
    m.zips = vec![vec!["left".into(), "right".into()]];
    let e = load_err(
        &m,
        input_flags(&[("left", &gf), ("right", &g2f), ("ql", &qf)], 0),
    );
    assert!(
        e.contains("record 1 has id 103 in one and 999 in the other"),
        "{e}"
    );
    let g2f = deal(dir.path(), &g2, &iris_data(2, 64, false, 1), 65);
    let ins = load3(&m, &[("left", &gf), ("right", &g2f), ("ql", &qf)]);
    let settings = || crate::net::session::Session::new().field("--chunk-size", 7);
    let s = ins[1].session_bytes(&m, settings());
    let mut want = settings()
        .field("program", format!("{} fp", m.program))
        .field(
            "the comparisons' protocols (irisc build --sharing, --variant, --msb-input)",
            "none",
        )
        .field("the query batch (queries)", 2);
    for (name, seed) in [("left", 61u64), ("right", 65), ("ql", 62)] {
        let mut id = [0u8; 16];
        id[..8].copy_from_slice(&seed.to_le_bytes());
        want = want.input_set(name, &id);
    }
    assert_eq!(s, want.to_bytes());
    assert_eq!(ins[0].gallery_records(), 4);
    assert!(ins[0].single(InputRole::Gallery).is_err());
}

/// Party `p`'s gallery store with the contents of its share file `shr`, for program `fp`.
fn store_from_file(shr: &Path, fp: &str) -> PathBuf {
    let count = crate::io::share_file::read(shr).unwrap().ids.len();
    store_from_file_part(shr, fp, count)
}

/// As [`store_from_file`], with the file's first `count` records only.
fn store_from_file_part(shr: &Path, fp: &str, count: usize) -> PathBuf {
    use crate::store::{create, StoreParams};
    let f = crate::io::share_file::read(shr).unwrap();
    let h = &f.header;
    let path = shr.with_extension("store");
    create(
        &path,
        &StoreParams {
            fingerprint: fp.into(),
            party: h.party,
            sharing: h.sharing.into(),
            ring_bits: h.ring_bits,
            code_bits: h.elements,
            secret_mask: h.mask == InputMask::Secret,
            set_id: h.set_id,
        },
    )
    .unwrap();
    append_from_file(&path, shr, 0..count, None);
    path
}

/// Appends records `range` of share file `shr` to the store at `path`, under id `id` when
/// given (a reset's record takes the id of the record it replaces).
fn append_from_file(path: &Path, shr: &Path, range: std::ops::Range<usize>, id: Option<u64>) {
    use crate::store::{Record, Shares, StoreWriter};
    let f = crate::io::share_file::read(shr).unwrap();
    let h = &f.header;
    let per = h.elements_per_record() as usize;
    let ml = if h.mask == InputMask::Public {
        h.elements as usize / 8
    } else {
        0
    };
    let recs: Vec<Record<'_>> = range
        .map(|i| Record {
            id: id.unwrap_or(f.ids[i]),
            mask: &f.masks[i * ml..(i + 1) * ml],
            shares: match (&f.own, &f.prev) {
                (RingVec::U16(o), _) if h.sharing.is_shamir() => {
                    Shares::Shamir(&o[i * per..(i + 1) * per])
                }
                (RingVec::U16(o), RingVec::U16(p)) => Shares::Rep3U16 {
                    own: &o[i * per..(i + 1) * per],
                    prev: &p[i * per..(i + 1) * per],
                },
                (RingVec::U32(o), RingVec::U32(p)) => Shares::Rep3U32 {
                    own: &o[i * per..(i + 1) * per],
                    prev: &p[i * per..(i + 1) * per],
                },
                _ => unreachable!(),
            },
        })
        .collect();
    StoreWriter::open(path).unwrap().append(&recs).unwrap();
}

/// Every value a party reads of gallery input 0, with what the parties compare at connect.
fn gallery_state(ins: &mut Inputs, m: &Manifest, parts: &[InputPart], k: i32) -> Vec<String> {
    let mut out = vec![
        format!(
            "{:?}",
            ins.session_bytes(m, crate::net::session::Session::new())
        ),
        format!("{} {:?}", ins.gallery_records(), ins.ids(0)),
    ];
    for &part in parts {
        out.push(match ins.load_input(0, part, -1, k).unwrap() {
            Value::Codes(c) => format!("{:?} {:?} {:?} {:?}", c.a, c.b, c.ids, c.masks),
            Value::Shamir(c) => {
                format!(
                    "{:?} {:?} {:?} {} {}",
                    &c.words[..],
                    c.ids,
                    c.masks,
                    c.count,
                    c.len
                )
            }
            other => panic!("{}", other.kind()),
        });
    }
    out
}

/// A change made to every party's store (by party), and whether the gallery then follows it
/// by its changes alone.
type Step<'a> = (&'a str, &'a dyn Fn(usize), bool);

/// A serving party's gallery follows its store by reading only what changed (appended records,
/// deleted ids, a reset's record), and then holds exactly what a fresh load of the store
/// (every byte checked, the path every other test covers) holds: values, ids, and what the
/// parties compare at connect (record count, checksum, deleted ids). A store that lost records
/// (a reconciliation's roll-back) is loaded whole.
#[test]
fn a_gallery_follows_its_store_changes_as_a_fresh_load_reads_the_store() {
    let dir = tempfile::tempdir().unwrap();
    for sharing in [Sharing::Rep3, Sharing::Fp, Sharing::Gr2, Sharing::Gr4] {
        for secret in [false, true] {
            let g = iris_gallery_spec(sharing, secret);
            let sub = dir.path().join(format!("follow-{sharing}-{secret}"));
            std::fs::create_dir_all(&sub).unwrap();
            let gd = iris_data(9, 128, secret, 31);
            let gf = deal(&sub, &g, &gd, 32);
            let mut m = manifest(vec![g.clone()]);
            m.fingerprint = "abc123".into();
            let stores = [0, 1, 2].map(|p| store_from_file_part(&gf[p], "abc123", 5));
            let mut served = load3(&m, &[("g", &stores)]);
            let parts = iris_parts(secret);
            let k = g.ring_bits as i32;
            let steps: [Step<'_>; 5] = [
                (
                    "two records enrolled",
                    &|p| append_from_file(&stores[p], &gf[p], 5..7, None),
                    true,
                ),
                (
                    "record 1 deleted",
                    &|p| crate::store::deleted::append(&stores[p], &[gd.ids[1]]).unwrap(),
                    true,
                ),
                (
                    "record 2 reset",
                    &|p| append_from_file(&stores[p], &gf[p], 7..8, Some(gd.ids[2])),
                    true,
                ),
                (
                    "one more enrolled",
                    &|p| append_from_file(&stores[p], &gf[p], 8..9, None),
                    true,
                ),
                (
                    "rolled back",
                    &|p| {
                        crate::store::StoreWriter::open(&stores[p])
                            .unwrap()
                            .roll_back(7)
                            .unwrap()
                    },
                    false,
                ),
            ];
            for (what, change, extended) in steps {
                for (p, ins) in served.iter_mut().enumerate() {
                    change(p);
                    assert_eq!(
                        ins.reload_store(0, p).unwrap(),
                        extended,
                        "{sharing} {secret}: {what}"
                    );
                }
                let mut fresh = load3(&m, &[("g", &stores)]);
                for p in 0..3 {
                    assert_eq!(
                        gallery_state(&mut served[p], &m, parts, k),
                        gallery_state(&mut fresh[p], &m, parts, k),
                        "{sharing} secret {secret}, party {p}: {what}"
                    );
                }
                if sharing.is_shamir() && !secret {
                    // Public masks mark the deleted and replaced rows (an empty mask): the
                    // shares stay read in place from the store's map, whatever was deleted.
                    for ins in [&mut served[0], &mut fresh[0]] {
                        match ins.load_input(0, InputPart::Codes, -1, k).unwrap() {
                            Value::Shamir(c) => assert!(c.words.is_mapped(), "{sharing}: {what}"),
                            other => panic!("{}", other.kind()),
                        }
                    }
                }
            }
        }
    }
}

/// Gallery input `g` of 128-bit iris codes under `sharing`, with secret masks when `secret`.
fn iris_gallery_spec(sharing: Sharing, secret: bool) -> ManifestInput {
    let mut g = spec("g", InputRole::Gallery, InputKind::Iris, 128);
    g.sharing = sharing;
    if sharing.is_shamir() {
        g.ring_bits = 16;
    }
    if secret {
        g.mask = InputMask::Secret;
    }
    g
}

/// The parts of an iris input: the codes, and the masks when they are secret.
fn iris_parts(secret: bool) -> &'static [InputPart] {
    if secret {
        &[InputPart::Codes, InputPart::Masks]
    } else {
        &[InputPart::Codes]
    }
}

#[test]
fn gallery_stores_load_as_their_share_files_do() {
    let dir = tempfile::tempdir().unwrap();
    for sharing in [Sharing::Rep3, Sharing::Fp, Sharing::Gr2, Sharing::Gr4] {
        for secret in [false, true] {
            let g = iris_gallery_spec(sharing, secret);
            let sub = dir.path().join(format!("{sharing}-{secret}"));
            std::fs::create_dir_all(&sub).unwrap();
            let gd = iris_data(5, 128, secret, 21);
            let gf = deal(&sub, &g, &gd, 22);
            let mut m = manifest(vec![g.clone()]);
            m.fingerprint = "abc123".into();
            let stores = gf.clone().map(|p| store_from_file(&p, "abc123"));
            let mut from_files = load3(&m, &[("g", &gf)]);
            let mut from_stores = load3(&m, &[("g", &stores)]);
            let parts = iris_parts(secret);
            for p in 0..3 {
                assert_eq!(from_stores[p].gallery_records(), 5);
                assert_eq!(from_stores[p].ids(0), &gd.ids[..]);
                for &part in parts {
                    let k = g.ring_bits as i32;
                    let a = from_files[p].load_input(0, part, -1, k).unwrap();
                    let b = from_stores[p].load_input(0, part, -1, k).unwrap();
                    match (a, b) {
                        (Value::Codes(a), Value::Codes(b)) => {
                            assert_eq!((&a.a, &a.b), (&b.a, &b.b));
                            assert_eq!((&a.ids, &a.masks), (&b.ids, &b.masks));
                        }
                        (Value::Shamir(a), Value::Shamir(b)) => {
                            assert_eq!(a.words, b.words, "{sharing} secret {secret}");
                            assert_eq!((&a.ids, &a.masks), (&b.ids, &b.masks));
                            assert_eq!((a.count, a.len), (b.count, b.len));
                            // One section: the shares are read in place from the map.
                            assert_eq!(b.words.is_mapped(), !secret);
                        }
                        _ => panic!("{sharing}: different kinds of values"),
                    }
                }
            }
            // Another program whose input has the same schema uses the store (stores are
            // keyed by what they hold, not by program text) ...
            let mut other = m.clone();
            other.fingerprint = "abc124".into();
            let again = load3(&other, &[("g", &stores)]);
            assert_eq!(again[1].ids(0), &gd.ids[..]);
            // ... one whose input differs in the schema is refused with the field named.
            let mut longer = other.clone();
            longer.inputs[0].elements = 256;
            let e = load_err(&longer, input_flags(&[("g", &stores)], 0));
            assert!(
                e.contains("holds codes of 128 bits but this program's input `g` is 256 bits (the code length differs)"),
                "{e}"
            );
            // Another party's store is refused by name.
            let e = load_err(
                &m,
                vec!["--input".into(), format!("g={}", stores[1].display())],
            );
            assert!(
                e.contains("holds party 1's shares but this is party 0"),
                "{e}"
            );
        }
    }
}

/// The hello names each comparison's protocol as its build recorded it, so two builds of one
/// source that compare differently (`--msb-input`) are told apart before any message.
#[test]
fn the_comparisons_protocols_are_read_from_the_explain_document() {
    let mut m = manifest(Vec::new());
    m.explain = serde_json::json!({ "comparisons": [
        { "kind": "fhd", "sharing": "gr2", "variant": "plain-mask", "compare_ring": 16, "msb_input": "additive" },
        { "kind": "fhd", "sharing": "gr2", "variant": "plain-mask", "compare_ring": 16, "msb_input": "replicated" },
        { "kind": "cosine", "sharing": "rep3", "ring": 40 }
    ]});
    assert_eq!(
        comparison_protocols(&m),
        "gr2 plain-mask ring 16 msb from additive; gr2 plain-mask ring 16 msb from replicated; \
         rep3 - ring - msb from -"
    );
    m.explain = serde_json::json!({});
    assert_eq!(comparison_protocols(&m), "none");
}

/// Record `i` of party share file `shr` as a client sends it to enrol: a one-record share file,
/// under id `id` when given.
fn one_record_file(shr: &Path, i: usize, id: Option<u64>) -> ShareFile {
    let f = crate::io::share_file::read(shr).unwrap();
    let per = f.header.elements_per_record() as usize;
    let ml = if f.header.mask == InputMask::Public {
        f.header.elements as usize / 8
    } else {
        0
    };
    let r = i * per..(i + 1) * per;
    let slice = |v: &RingVec| match v {
        RingVec::U16(w) if w.is_empty() => RingVec::U16(Vec::new()),
        RingVec::U16(w) => RingVec::U16(w[r.clone()].to_vec()),
        RingVec::U32(w) => RingVec::U32(w[r.clone()].to_vec()),
        RingVec::U64(w) => RingVec::U64(w[r.clone()].to_vec()),
    };
    let mut header = f.header.clone();
    header.count = 1;
    ShareFile {
        header,
        ids: vec![id.unwrap_or(f.ids[i])],
        masks: f.masks[i * ml..(i + 1) * ml].to_vec(),
        own: slice(&f.own),
        prev: slice(&f.prev),
    }
}

/// The record ids of the store at `path`, read from disk.
fn ids_on_disk(path: &Path) -> Vec<u64> {
    crate::store::Store::open(path).unwrap().ids()
}

/// Two attempts of one enrolment in one batch (a client that heard from only two parties asks
/// again under a derived id with the same shares while its first attempt is still queued):
/// the record is enrolled once and both attempts are answered as enrolled, beside a third
/// request of the batch. Where one party's shares of the later attempt differ from the first's,
/// it is no repeat: it is staged as itself, its id is taken by the first, and the batch's
/// enrolment is refused, nothing enrolled.
#[test]
fn two_attempts_of_one_enrolment_in_one_batch_enrol_it_once() {
    use crate::serve::enrol::{settle, Ask, Outcome};
    let dir = tempfile::tempdir().unwrap();
    for sharing in [Sharing::Rep3, Sharing::Fp] {
        for other_shares in [false, true] {
            let g = iris_gallery_spec(sharing, false);
            let sub = dir.path().join(format!("repeat-{sharing}-{other_shares}"));
            std::fs::create_dir_all(&sub).unwrap();
            let gd = iris_data(8, 128, false, 41);
            let gf = deal(&sub, &g, &gd, 42);
            let mut m = manifest(vec![g]);
            m.fingerprint = "abc123".into();
            let stores = [0, 1, 2].map(|p| store_from_file_part(&gf[p], "abc123", 5));
            let (ids, stores_then) = (gd.ids.clone(), stores.clone());
            let results = crate::net::memory::run_three(move |mut net| {
                let p = net.party();
                let flags = input_flags(&[("g", &stores)], p);
                let mut ins = Inputs::load(&args(p, &m, &flags), &m).unwrap();
                let first = vec![(0, one_record_file(&gf[p], 5, None))];
                let again = if other_shares && p == 2 {
                    vec![(0, one_record_file(&gf[p], 7, Some(ids[5])))]
                } else {
                    first.clone()
                };
                let other = vec![(0, one_record_file(&gf[p], 6, None))];
                let asks: Vec<Ask<'_>> =
                    [("signup", &first), ("signup.1", &again), ("other", &other)]
                        .into_iter()
                        .map(|(id, records)| Ask {
                            id: id.into(),
                            records,
                            matched: (p == 0).then(|| vec![false]),
                            replaces: None,
                        })
                        .collect();
                let outcomes = settle(&mut net, &mut ins, p, &asks).unwrap();
                (outcomes, ins.ids(0).to_vec())
            });
            for (p, (outcomes, in_memory)) in results.iter().enumerate() {
                let on_disk = ids_on_disk(&stores_then[p]);
                assert_eq!(&on_disk, in_memory, "{sharing} party {p}");
                if other_shares {
                    for o in outcomes {
                        match o {
                            Outcome::Refused(why) => assert!(
                                why.contains(&format!(
                                    "record id {} is already enrolled",
                                    gd.ids[5]
                                )),
                                "{sharing} party {p}: {why}"
                            ),
                            other => panic!("{sharing} party {p}: {other:?}"),
                        }
                    }
                    assert_eq!(on_disk, gd.ids[..5], "{sharing} party {p}");
                } else {
                    assert_eq!(outcomes, &vec![Outcome::Enrolled; 3], "{sharing} party {p}");
                    let mut expected = gd.ids[..5].to_vec();
                    expected.extend([gd.ids[5], gd.ids[6]]);
                    assert_eq!(on_disk, expected, "{sharing} party {p}");
                }
            }
        }
    }
}

/// Reconciling reads each store as it is on disk, not as the party last loaded it: a party
/// whose link broke between committing an enrolment and reloading its gallery holds the record
/// in its store only. Where not all three committed, the record is rolled back from every
/// store that holds it; where all three did, every party's gallery holds it afterwards.
#[test]
fn reconciling_sees_records_committed_but_not_yet_loaded() {
    let dir = tempfile::tempdir().unwrap();
    for committed_by in [vec![0usize, 1], vec![0], vec![0, 1, 2]] {
        let g = iris_gallery_spec(Sharing::Rep3, false);
        let sub = dir.path().join(format!(
            "reconcile-{}",
            committed_by.len() * 10 + committed_by[committed_by.len() - 1]
        ));
        std::fs::create_dir_all(&sub).unwrap();
        let gd = iris_data(7, 128, false, 43);
        let gf = deal(&sub, &g, &gd, 44);
        let mut m = manifest(vec![g]);
        m.fingerprint = "abc123".into();
        let stores = [0, 1, 2].map(|p| store_from_file_part(&gf[p], "abc123", 5));
        let (stores_then, by) = (stores.clone(), committed_by.clone());
        let results = crate::net::memory::run_three(move |mut net| {
            let p = net.party();
            let flags = input_flags(&[("g", &stores)], p);
            let mut ins = Inputs::load(&args(p, &m, &flags), &m).unwrap();
            if by.contains(&p) {
                // Committed after the gallery was loaded; the gallery not reloaded.
                append_from_file(&stores[p], &gf[p], 5..6, None);
            }
            let done = crate::serve::reconcile::reconcile(&mut net, &mut ins, p).unwrap();
            (done.rolled_back, ins.ids(0).to_vec())
        });
        let all = committed_by.len() == 3;
        let expected: Vec<u64> = gd.ids[..if all { 6 } else { 5 }].to_vec();
        for (p, (rolled_back, in_memory)) in results.iter().enumerate() {
            let what = format!("committed by {committed_by:?}, party {p}");
            assert_eq!(ids_on_disk(&stores_then[p]), expected, "{what}");
            assert_eq!(in_memory, &expected, "{what}");
            let rolled = usize::from(!all && committed_by.contains(&p));
            assert_eq!(*rolled_back, rolled, "{what}");
        }
    }
}
