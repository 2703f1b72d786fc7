//! Galleries as durable stores: `irisc share --program` writes them, the parties map them,
//! `irisc enroll` appends to them, and whatever is wrong with one is refused with a message that
//! names the file, the fault and the fix.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use irisc_runtime::io::ndjson;
use irisc_runtime::iris::IrisRecord as Record;
use irisc_runtime::store::{Shares, Store};

use crate::common::{self, Setup, PLAN};
use crate::data;

fn small() -> PathBuf {
    common::example("small_ids.irs")
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn is_store(p: &Path) -> bool {
    irisc_runtime::store::is_store(p).unwrap()
}

/// The plaintext answers of `program` on NDJSON files.
fn plain_answers(program: &Path, db: &Path, query: &Path) -> Vec<serde_json::Value> {
    use irisc::driver::pipeline;
    let checked = pipeline::read_and_check(program).unwrap();
    let planned = pipeline::plan(&checked, &Default::default()).unwrap();
    irisc::driver::plaintext::answers_db_query(&checked.program, &planned.plan, db, query).unwrap()
}

/// Runs the three parties and returns the output party's answers, asserting all succeeded.
fn answers(setup: &Setup, db: &[PathBuf; 3], q: &[PathBuf; 3]) -> Vec<serde_json::Value> {
    let outs = setup.run_three(db, q, &[]);
    for (p, o) in outs.iter().enumerate() {
        assert!(
            o.status.success(),
            "party {p} failed:\n{}",
            common::stderr(o)
        );
    }
    outs.iter()
        .flat_map(common::stdout_json)
        .collect::<Vec<_>>()
}

/// Runs the three parties expecting a refusal containing `expect`.
fn refused(setup: &Setup, db: &[PathBuf; 3], q: &[PathBuf; 3], expect: &str) -> String {
    let started = Instant::now();
    let outs = setup.run_three(db, q, &["--timeout", "4"]);
    assert!(started.elapsed() < Duration::from_secs(40));
    let all: String = outs
        .iter()
        .map(common::stderr)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!all.contains("panicked"), "a process panicked:\n{all}");
    assert!(
        outs.iter().any(|o| !o.status.success()),
        "all succeeded:\n{all}"
    );
    assert!(all.contains(expect), "expected {expect:?} in:\n{all}");
    all
}

fn inputs(setup: &Setup, seed: u64) -> ([PathBuf; 3], [PathBuf; 3], Vec<Record>) {
    let (gallery, qs) = data::edge_case_set(seed, 256, 4, 2, 3, 8, 2);
    (
        setup.share(&small(), "--db", "db", &gallery),
        setup.share(&small(), "--query", "query", &qs),
        gallery,
    )
}

#[test]
fn share_writes_stores_that_hold_the_shares_and_the_parties_match_the_oracle() {
    let setup = common::setup(&small());
    let (db, q, gallery) = inputs(&setup, 31);
    assert!(db.iter().all(|p| is_store(p)), "galleries are stores");
    assert!(q.iter().all(|p| !is_store(p)), "queries stay share files");
    // Each holds one party's shares: readable by its owner only.
    #[cfg(unix)]
    for p in db.iter().chain(q.iter()) {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{} is {mode:o}", p.display());
    }
    // The three stores: same set, each its own party, and their shares open to the encoded
    // gallery (rep3 over Z_2^16: own_0 + own_1 + own_2).
    let stores = db.clone().map(|p| Store::open(&p).unwrap());
    for (i, st) in stores.iter().enumerate() {
        assert_eq!(st.header().params.party as usize, i);
        assert_eq!(st.header().params.set_id, stores[0].header().params.set_id);
        assert_eq!(st.ids(), gallery.iter().map(|r| r.id).collect::<Vec<_>>());
    }
    for (j, rec) in gallery.iter().enumerate() {
        let own = |i: usize| match stores[i].record(j).unwrap().shares {
            Shares::Rep3U16 { own, prev } => (own.to_vec(), prev.to_vec()),
            other => panic!("{other:?}"),
        };
        let [(a, pa), (b, pb), (c, pc)] = [0, 1, 2].map(own);
        assert_eq!(pa, c, "party 0 holds x_2");
        assert_eq!((pb, pc), (a.clone(), b.clone()));
        let k = stores[0].header().params.ring_bits;
        let m = (1u32 << k) - 1;
        let got: Vec<u32> = (0..a.len())
            .map(|i| u32::from(a[i].wrapping_add(b[i]).wrapping_add(c[i])) & m)
            .collect();
        let want: Vec<u32> = rec
            .iris
            .masked_bits::<u64>()
            .iter()
            .map(|&v| v as u32 & m)
            .collect();
        assert_eq!(got, want, "record {j}");
        assert_eq!(stores[0].record(j).unwrap().mask, &rec.iris.mask[..]);
    }
    let dir = setup.dir.path();
    let want = plain_answers(&small(), &dir.join("db.ndjson"), &dir.join("query.ndjson"));
    assert_eq!(answers(&setup, &db, &q), want);
}

#[test]
fn truncated_or_flipped_stores_are_refused() {
    let setup = common::setup(&small());
    let (db, q, _) = inputs(&setup, 32);
    let keep = setup.dir.path().join("db.p1.keep");
    std::fs::copy(&db[1], &keep).unwrap();
    let len = std::fs::metadata(&db[1]).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&db[1])
        .unwrap();
    f.set_len(len - 100).unwrap();
    drop(f);
    let all = refused(&setup, &db, &q, "is truncated");
    assert!(
        all.contains(s(&db[1])),
        "the message names the file:\n{all}"
    );
    assert!(
        all.contains("copy it again"),
        "the message says what to do:\n{all}"
    );

    std::fs::copy(&keep, &db[1]).unwrap();
    let mut bytes = std::fs::read(&db[1]).unwrap();
    let at = bytes.len() - 10;
    bytes[at] ^= 0x01;
    std::fs::write(&db[1], bytes).unwrap();
    let all = refused(&setup, &db, &q, "is corrupted");
    assert!(all.contains("do not match the checksum"), "{all}");
    assert!(all.contains(s(&db[1])), "{all}");

    // A damaged header slot (one of the mirror): refused, then `irisc repair` mends it.
    std::fs::copy(&keep, &db[1]).unwrap();
    let mut bytes = std::fs::read(&db[1]).unwrap();
    bytes[256 + 70] ^= 0x01;
    std::fs::write(&db[1], bytes).unwrap();
    let all = refused(&setup, &db, &q, "header slot 1 is damaged");
    assert!(all.contains("irisc repair"), "{all}");
    common::irisc_ok(&["repair", s(&db[1])]);
    let dir = setup.dir.path();
    let want = plain_answers(&small(), &dir.join("db.ndjson"), &dir.join("query.ndjson"));
    assert_eq!(answers(&setup, &db, &q), want);
}

#[test]
fn stores_of_another_sharing_program_or_party_are_refused() {
    let setup = common::setup(&small());
    let (db, q, gallery) = inputs(&setup, 33);
    let plain = setup.dir.path().join("db.ndjson");
    let dir = setup.dir.path();

    // Another sharing (and so another ring: Z_2^16 Shamir words of GR(2^16, 4)).
    let gr4 = dir.join("gr4");
    common::irisc_ok(&[
        "share",
        "--db",
        s(&plain),
        "-o",
        s(&gr4),
        "--program",
        s(&small()),
        "--sharing",
        "gr4",
    ]);
    let mixed = [gr4.join("db.p0.shr"), db[1].clone(), db[2].clone()];
    let all = refused(&setup, &mixed, &q, "holds Shamir over GR(2^16, 4) shares");
    assert!(
        all.contains("but this program's input `db` is shared as rep3 (the sharing differs)"),
        "{all}"
    );
    assert!(all.contains("share the gallery again"), "{all}");

    // Another ring: editing the store's parameters is impossible (checksummed), so check the
    // ring message through the library on a store made for this program.
    let st = Store::open(&db[2]).unwrap();
    let mut expected = irisc_runtime::party::load::store_expected(
        &irisc_runtime::manifest::ManifestInput {
            name: "db".into(),
            role: irisc_runtime::vocab::InputRole::Gallery,
            owner: None,
            kind: irisc_runtime::vocab::InputKind::Iris,
            elements: 256,
            mask: irisc_runtime::vocab::InputMask::Public,
            sharing: irisc_runtime::vocab::Sharing::Rep3,
            ring_bits: st.header().params.ring_bits,
            scale_bits: 0,
            conjugate: false,
        },
        2,
    );
    st.check_compatible(&expected).unwrap();
    expected.ring_bits = 32;
    let e = st.check_compatible(&expected).unwrap_err().to_string();
    let k = st.header().params.ring_bits;
    assert!(
        e.contains(&format!(
            "holds shares over Z_2^{k} but this program's input `db` is computed over Z_2^32 (the ring differs)"
        )),
        "{e}"
    );

    // The wrong party's store.
    let swapped = [db[1].clone(), db[0].clone(), db[2].clone()];
    refused(
        &setup,
        &swapped,
        &q,
        "holds party 1's shares but this is party 0",
    );

    // A gallery share file (no program: the old form) still loads and matches.
    let legacy = dir.join("legacy");
    let ring = k.to_string();
    common::irisc_ok(&[
        "share",
        "--db",
        s(&plain),
        "-o",
        s(&legacy),
        "--ring",
        &ring,
    ]);
    let old = [0, 1, 2].map(|p| legacy.join(format!("db.p{p}.shr")));
    assert!(!is_store(&old[0]));
    let want = plain_answers(&small(), &plain, &dir.join("query.ndjson"));
    assert_eq!(answers(&setup, &old, &q), want);
    assert_eq!(gallery.len(), Store::open(&db[0]).unwrap().len());
}

fn enroll_cmd(setup: &Setup, new: &Path, extra: &[&str]) -> Command {
    let mut c = common::irisc();
    c.args(["enroll", s(&small()), "--db", s(new), "--store"])
        .arg(setup.dir.path().join("db-shares"))
        .args(PLAN)
        .args(extra);
    c
}

/// New records with ids after the gallery's.
fn new_records(seed: u64, n: usize) -> Vec<Record> {
    let (g, _) = data::edge_case_set(seed, 256, n, 1, 3, 8, 2);
    g.into_iter()
        .enumerate()
        .map(|(i, mut r)| {
            r.id = 5000 + i as u64;
            r
        })
        .collect()
}

#[test]
fn enroll_appends_and_the_parties_match_the_oracle() {
    let setup = common::setup(&small());
    let (db, q, mut gallery) = inputs(&setup, 34);
    let new = new_records(35, 3);
    let new_path = setup.dir.path().join("new.ndjson");
    ndjson::write_file(&new_path, &new).unwrap();
    // Dealt on one thread (`--threads`): the same records as any number of threads.
    let out = enroll_cmd(&setup, &new_path, &["--threads", "1"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    gallery.extend(new.iter().cloned());
    for p in &db {
        assert_eq!(
            Store::open(p).unwrap().ids(),
            gallery.iter().map(|r| r.id).collect::<Vec<_>>()
        );
    }
    // Enrolling the same ids again is refused and changes nothing.
    let out = enroll_cmd(&setup, &new_path, &[]).output().unwrap();
    assert!(!out.status.success());
    // Every repeated id is counted and the first few named, not only the first.
    assert!(new.len() > 5);
    let counted = format!(
        "{} record ids (5000, 5001, 5002, 5003, 5004 and {} more) are already enrolled",
        new.len(),
        new.len() - 5
    );
    assert!(
        common::stderr(&out).contains(&counted),
        "{}",
        common::stderr(&out)
    );
    let all = setup.dir.path().join("all.ndjson");
    ndjson::write_file(&all, &gallery).unwrap();
    let want = plain_answers(&small(), &all, &setup.dir.path().join("query.ndjson"));
    assert_eq!(answers(&setup, &db, &q), want);
}

/// Starts `irisc enroll` paused at `step` of the store writer, waits until it says so, and
/// kills it there (SIGKILL).
fn kill_enroll_at(setup: &Setup, new: &Path, step: &str) {
    let mut child = enroll_cmd(setup, new, &[])
        .env("IRISC_STORE_PAUSE_AT", step)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let started = Instant::now();
    loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("enroll ended before pausing at {step}"))
            .unwrap();
        if line.contains(&format!("paused at {step}")) {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(120));
    }
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
}

/// The store's first records are byte for byte those of the file `old` (as it was before).
fn assert_same_records(st: &Store, old: &[u8]) {
    let l = st.layout();
    let meta = 512;
    let start = l.shares_start(st.header().capacity).unwrap() as usize;
    let old_count = {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("old");
        std::fs::write(&p, old).unwrap();
        // As irisc writes stores: owner-only (a store other users can read is refused).
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        Store::open(&p).unwrap().len()
    };
    let n = old_count.min(st.len());
    assert_eq!(
        &st.meta_bytes()[..n * l.meta_size],
        &old[meta..meta + n * l.meta_size]
    );
    assert_eq!(
        &st.shares_bytes()[..n * l.share_size],
        &old[start..start + n * l.share_size]
    );
}

#[test]
fn killed_enroll_leaves_old_or_new_stores_and_roll_back_recovers() {
    let setup = common::setup(&small());
    let (db, q, mut gallery) = inputs(&setup, 36);
    let old_count = gallery.len();
    let before: Vec<Vec<u8>> = db.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let new = new_records(37, 4);
    let new_path = setup.dir.path().join("new.ndjson");
    ndjson::write_file(&new_path, &new).unwrap();
    let mut want_ids: Vec<u64> = gallery.iter().map(|r| r.id).collect();

    // Killed with every store's records written but none committed: all keep the old state.
    kill_enroll_at(&setup, &new_path, "staged");
    for (p, old) in db.iter().zip(&before) {
        let st = Store::open(p).unwrap();
        assert_eq!(st.len(), old_count);
        assert_eq!(st.ids(), want_ids);
        assert_same_records(&st, old);
    }

    // Killed after party 0's store committed its first header slot: party 0's store has the
    // new records, the others the old ones; each opens with one or the other, intact.
    kill_enroll_at(&setup, &new_path, "slot1");
    want_ids.extend(new.iter().map(|r| r.id));
    let counts: Vec<usize> = db
        .iter()
        .map(|p| {
            let st = Store::open(p).unwrap();
            assert!(st.len() == old_count || st.len() == old_count + new.len());
            assert_eq!(st.ids(), want_ids[..st.len()]);
            assert_same_records(&st, &before[st.header().params.party as usize]);
            st.len()
        })
        .collect();
    assert_eq!(counts, vec![old_count + new.len(), old_count, old_count]);
    // The parties notice that their stores disagree.
    refused(&setup, &db, &q, "gallery stores holding other records");
    // A plain enroll refuses and says how to recover; --roll-back recovers.
    let out = enroll_cmd(&setup, &new_path, &[]).output().unwrap();
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("--roll-back"),
        "{}",
        common::stderr(&out)
    );
    let out = enroll_cmd(&setup, &new_path, &["--roll-back"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    for p in &db {
        assert_eq!(Store::open(p).unwrap().ids(), want_ids);
    }
    gallery.extend(new.iter().cloned());
    let all = setup.dir.path().join("all.ndjson");
    ndjson::write_file(&all, &gallery).unwrap();
    let want = plain_answers(&small(), &all, &setup.dir.path().join("query.ndjson"));
    assert_eq!(answers(&setup, &db, &q), want);
}

/// Builds the program with source `src` (written beside the setup) with `plan`; returns the
/// program's path and its executable.
fn build_variant(setup: &Setup, name: &str, src: &str, plan: &[&str]) -> (PathBuf, PathBuf) {
    let program = setup.dir.path().join(format!("{name}.irs"));
    std::fs::write(&program, src).unwrap();
    let exe = setup.dir.path().join(name);
    let mut args = vec!["build", s(&program), "-o", s(&exe)];
    args.extend_from_slice(plan);
    common::irisc_ok(&args);
    (program, exe)
}

/// Runs party 0 alone with `exe`, expecting it to refuse its inputs (before any connection)
/// with a message containing `expect`.
fn party0_refuses(setup: &Setup, exe: &Path, db: &Path, q: &Path, expect: &str) {
    let child = Command::new(exe)
        .args(["--party", "0", "--config", s(&setup.config)])
        .args(["--db", s(db), "--query", s(q), "--timeout", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = common::wait_bounded(child, Duration::from_secs(30));
    let err = common::stderr(&out);
    assert!(!out.status.success(), "party 0 accepted:\n{err}");
    assert!(err.contains(expect), "expected {expect:?} in:\n{err}");
}

/// Rewrites both header slots of the store at `path` in format version 1, as irisc wrote
/// stores before they were keyed by schema (same layout; the fingerprint was a binding).
fn make_version_1(path: &Path) {
    let store = Store::open(path).unwrap();
    let mut h = store.header().clone();
    // Version 1 hashed records with BLAKE3 (version 3 with XXH3): the checksum as it wrote it.
    let l = *store.layout();
    let mut sum = irisc_runtime::store::RecordsSum::default();
    for i in 0..store.len() {
        sum.add_record(
            irisc_runtime::store::RecordHash::Blake3,
            i as u64,
            &store.meta_bytes()[i * l.meta_size..(i + 1) * l.meta_size],
            &store.shares_bytes()[i * l.share_size..(i + 1) * l.share_size],
        );
    }
    drop(store);
    h.records_sum = sum;
    h.version = 1;
    let slot = h.to_bytes().unwrap();
    let mut b = std::fs::read(path).unwrap();
    b[..slot.len()].copy_from_slice(&slot);
    b[slot.len()..2 * slot.len()].copy_from_slice(&slot);
    std::fs::write(path, b).unwrap();
}

#[test]
fn stores_and_query_files_serve_every_program_with_the_same_schema() {
    let mut setup = common::setup(&small());
    let (db, q, _) = inputs(&setup, 40);
    let dir = setup.dir.path().to_path_buf();
    let (plain_db, plain_q) = (dir.join("db.ndjson"), dir.join("query.ndjson"));
    let src = std::fs::read_to_string(small()).unwrap();
    assert!(src.contains("MATCH_RATIO = 0.375;"));

    // Program B differs from A by a comment and by its threshold: a different program text
    // (and fingerprint), the same input schema. A's stores and query files serve it, and its
    // answers are B's (the edge-case pairs sit at A's threshold, so they differ from A's).
    let b_src = format!(
        "// B: A with another threshold\n{}",
        src.replace("MATCH_RATIO = 0.375;", "MATCH_RATIO = 0.3125;")
    );
    let (b_program, b_exe) = build_variant(&setup, "b", &b_src, &PLAN);
    let want_a = plain_answers(&small(), &plain_db, &plain_q);
    let want_b = plain_answers(&b_program, &plain_db, &plain_q);
    assert_ne!(
        want_a, want_b,
        "the threshold change must change some answer"
    );
    let a_exe = std::mem::replace(&mut setup.exe, b_exe.clone());
    assert_eq!(answers(&setup, &db, &q), want_b);

    // A schema change is refused, naming the field and both values: the code length ...
    let c_src = src.replace("CODE_BITS = 256;", "CODE_BITS = 512;");
    let (_, c_exe) = build_variant(&setup, "c", &c_src, &PLAN);
    party0_refuses(
        &setup,
        &c_exe,
        &db[0],
        &q[0],
        "holds codes of 256 bits but this program's input `db` is 512 bits (the code length differs): share the gallery again",
    );
    // ... and the sharing (A's own text, built for Shamir over F_p).
    let (_, fp_exe) = build_variant(&setup, "fp", &src, &["--sharing", "fp"]);
    party0_refuses(
        &setup,
        &fp_exe,
        &db[0],
        &q[0],
        "holds rep3 shares but this program's input `db` is shared as Shamir over F_65519 (the sharing differs)",
    );

    // Stores written before stores were keyed by schema (format version 1, bound to A's
    // fingerprint) still load, for A and for B.
    for p in &db {
        make_version_1(p);
        assert_eq!(Store::open(p).unwrap().header().version, 1);
    }
    assert_eq!(answers(&setup, &db, &q), want_b);
    setup.exe = a_exe;
    assert_eq!(answers(&setup, &db, &q), want_a);
    let info = common::irisc_ok(&["store", "info", s(&db[0])]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains(
            "gallery store, format version 1 (older; read and appended in its own format)"
        ),
        "{info}"
    );
}

/// `irisc share ... -o DIR` for `small()`'s gallery from `plain` in the `--db` or the
/// `--input db=` form, with extra arguments.
fn share_gallery(plain: &Path, out: &Path, form: &str, extra: &[&str]) -> std::process::Output {
    let input = format!("db={}", s(plain));
    let mut c = common::irisc();
    c.arg("share");
    if form == "--db" {
        c.args(["--db", s(plain)]);
    } else {
        c.args(["--input", &input]);
    }
    c.args(["-o", s(out), "--program", s(&small())])
        .args(PLAN)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn share_refuses_to_replace_a_store_without_force() {
    let setup = common::setup(&small());
    let (db, _, gallery) = inputs(&setup, 41);
    let dir = setup.dir.path();
    let new = new_records(42, 3);
    let new_path = dir.join("new.ndjson");
    ndjson::write_file(&new_path, &new).unwrap();
    let out = enroll_cmd(&setup, &new_path, &[]).output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let enrolled = gallery.len() + new.len();
    let lo = gallery.iter().map(|r| r.id).min().unwrap();
    let hi = new.iter().map(|r| r.id).max().unwrap();
    let before: Vec<Vec<u8>> = db.iter().map(|p| std::fs::read(p).unwrap()).collect();

    // Sharing the plaintext gallery again over the enrolled stores: refused, nothing changed.
    let out = share_gallery(&dir.join("db.ndjson"), &dir.join("db-shares"), "--db", &[]);
    let err = common::stderr(&out);
    assert!(!out.status.success(), "share replaced the stores:\n{err}");
    assert!(
        err.contains(&format!(
            "{} already exists and holds party 0's gallery store of {enrolled} records, ids {lo} to {hi}",
            s(&db[0])
        )),
        "{err}"
    );
    assert!(err.contains("--force"), "{err}");
    for (p, old) in db.iter().zip(&before) {
        assert_eq!(Store::open(p).unwrap().len(), enrolled);
        assert_eq!(&std::fs::read(p).unwrap(), old, "{} changed", s(p));
    }
    // A query share file is not replaced either.
    let qdir = dir.join("query-shares");
    let out = common::irisc()
        .args([
            "share",
            "--query",
            s(&dir.join("query.ndjson")),
            "-o",
            s(&qdir),
        ])
        .args(["--program", s(&small())])
        .args(PLAN)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        common::stderr(&out).contains("share file of"),
        "{}",
        common::stderr(&out)
    );

    // With --force the stores are replaced by the shared gallery alone.
    let out = share_gallery(
        &dir.join("db.ndjson"),
        &dir.join("db-shares"),
        "--db",
        &["--force"],
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    for p in &db {
        assert_eq!(Store::open(p).unwrap().len(), gallery.len());
    }
}

#[test]
fn gen_first_id_records_enroll_into_stores_of_either_layout() {
    let setup = common::setup(&small());
    let dir = setup.dir.path();
    let (gallery, qs) = data::edge_case_set(43, 256, 4, 2, 3, 8, 2);
    let plain = dir.join("db.ndjson");
    ndjson::write_file(&plain, &gallery).unwrap();
    let qpath = dir.join("query.ndjson");
    ndjson::write_file(&qpath, &qs).unwrap();
    let last = gallery.iter().map(|r| r.id).max().unwrap();
    let first = (last + 1).to_string();
    let new = dir.join("new.ndjson");
    common::irisc_ok(&[
        "gen",
        "--count",
        "3",
        "--bits",
        "256",
        "--seed",
        "5",
        "--first-id",
        &first,
        "-o",
        s(&new),
    ]);
    let new_records = ndjson::read_file(&new).unwrap();
    assert_eq!(
        new_records.iter().map(|r| r.id).collect::<Vec<_>>(),
        (last + 1..last + 4).collect::<Vec<_>>()
    );
    let query_out = dir.join("q");
    common::irisc_ok(&[
        "share",
        "--query",
        s(&qpath),
        "-o",
        s(&query_out),
        "--program",
        s(&small()),
        PLAN[0],
        PLAN[1],
    ]);
    let q = [0, 1, 2].map(|p| query_out.join(format!("query.p{p}.shr")));
    let mut all = gallery.clone();
    all.extend(new_records.iter().cloned());
    let all_path = dir.join("all.ndjson");
    ndjson::write_file(&all_path, &all).unwrap();
    let want = plain_answers(&small(), &all_path, &qpath);

    // Stores made with `--input db=`, enrolled into with `--db` (and the other way round).
    for (made_with, enroll_with) in [("--input", "--db"), ("--db", "--input")] {
        let out_dir = dir.join(format!("stores{made_with}"));
        let out = share_gallery(&plain, &out_dir, made_with, &[]);
        assert!(out.status.success(), "{}", common::stderr(&out));
        let stores = if made_with == "--db" {
            [0, 1, 2].map(|p| out_dir.join(format!("db.p{p}.shr")))
        } else {
            [0, 1, 2].map(|p| out_dir.join(format!("p{p}")).join("db.shares"))
        };
        let input = format!("db={}", s(&new));
        let mut c = common::irisc();
        c.args(["enroll", s(&small()), "--store", s(&out_dir)]);
        if enroll_with == "--db" {
            c.args(["--db", s(&new)]);
        } else {
            c.args(["--input", &input]);
        }
        let out = c.args(PLAN).output().unwrap();
        let err = common::stderr(&out);
        assert!(
            out.status.success(),
            "{made_with} stores, {enroll_with} enroll:\n{err}"
        );
        assert!(!err.contains("No such file"), "{err}");
        for p in &stores {
            assert_eq!(
                Store::open(p).unwrap().ids(),
                all.iter().map(|r| r.id).collect::<Vec<_>>()
            );
        }
        assert_eq!(answers(&setup, &stores, &q), want);
    }

    // A folder with both layouts (the README shares `--input db=` and then `--db` into
    // `shares`): each flag enrolls into its own layout.
    let both = dir.join("both");
    for form in ["--input", "--db"] {
        let out = share_gallery(&plain, &both, form, &[]);
        assert!(out.status.success(), "{}", common::stderr(&out));
    }
    let by_db = both.join("db.p0.shr");
    let by_input = both.join("p0").join("db.shares");
    let input = format!("db={}", s(&new));
    for (flag, value, grows, stays) in [
        ("--db", s(&new), &by_db, &by_input),
        ("--input", input.as_str(), &by_input, &by_db),
    ] {
        let stays_before = Store::open(stays).unwrap().len();
        let out = common::irisc()
            .args(["enroll", s(&small()), "--store", s(&both), flag, value])
            .args(PLAN)
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag}: {}", common::stderr(&out));
        assert_eq!(Store::open(grows).unwrap().len(), all.len(), "{flag}");
        assert_eq!(Store::open(stays).unwrap().len(), stays_before, "{flag}");
    }

    // Enrolling into a folder without stores names the paths it looked for, once each.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let out = common::irisc()
        .args(["enroll", s(&small()), "--db", s(&new), "--store", s(&empty)])
        .args(PLAN)
        .output()
        .unwrap();
    let err = common::stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("holds no gallery stores of input `db`"),
        "{err}"
    );
    assert!(
        err.contains("db.p0.shr") && err.contains("db.shares"),
        "{err}"
    );
}

#[test]
fn gen_near_names_the_gallery_record_each_query_is_near() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db.ndjson");
    let q = dir.path().join("q.ndjson");
    common::irisc_ok(&["gen", "--count", "40", "--bits", "1024", "-o", s(&db)]);
    common::irisc_ok(&[
        "gen",
        "--near",
        s(&db),
        "--count",
        "60",
        "--seed",
        "9",
        "--first-id",
        "100",
        "-o",
        s(&q),
    ]);
    let gallery = ndjson::read_file(&db).unwrap();
    // The record reader ignores the extra fields.
    let queries = ndjson::read_file(&q).unwrap();
    assert_eq!(queries[0].id, 100);
    let text = std::fs::read_to_string(&q).unwrap();
    let (mut near_duplicates, mut rotation_edges) = (0, 0);
    for (line, query) in text.lines().zip(&queries) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let case = v["case"].as_str().unwrap();
        let Some(near) = v.get("near").map(|n| n.as_u64().unwrap()) else {
            assert!(
                matches!(case, "fresh" | "all-masked"),
                "{case} without near"
            );
            continue;
        };
        let target = gallery
            .iter()
            .find(|r| r.id == near)
            .expect("near names a record");
        match case {
            // A new capture of the target: within 0.3 of it under some rotation of the
            // generator's window (-15..=15), while a fresh code is about 0.5 from everything.
            "near-duplicate" => {
                near_duplicates += 1;
                assert!(
                    irisc_runtime::iris::matches_any_rotation(
                        &query.iris,
                        &target.iris,
                        3,
                        10,
                        -15,
                        15
                    ),
                    "query {} is not near record {near}",
                    query.id
                );
            }
            // The target itself, shifted: at some rotation the codes are equal.
            "rotation-edge" => {
                rotation_edges += 1;
                assert!(
                    (-16..=16).any(|s| query.iris.rotate(s).code == target.iris.code),
                    "query {} is not record {near} rotated",
                    query.id
                );
            }
            _ => {}
        }
    }
    assert!(
        near_duplicates > 5 && rotation_edges > 0,
        "{near_duplicates} {rotation_edges}"
    );
}

#[test]
fn every_repeated_id_is_counted_when_sharing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut gallery, _) = data::edge_case_set(44, 256, 8, 1, 3, 8, 2);
    assert!(gallery.len() >= 8);
    // Ids 0 and 1 three times each, 2 twice: three ids repeated, five extra records.
    for (i, r) in gallery.iter_mut().enumerate().take(8) {
        r.id = [0, 1, 2, 0, 1, 0, 1, 2][i];
    }
    let text: String = gallery
        .iter()
        .map(|r| {
            let mut line = Vec::new();
            let mut w = ndjson::NdjsonWriter::new(&mut line);
            w.write(r).unwrap();
            drop(w);
            String::from_utf8(line).unwrap()
        })
        .collect();
    let plain = dir.path().join("db.ndjson");
    std::fs::write(&plain, text).unwrap();
    let out = share_gallery(&plain, &dir.path().join("out"), "--db", &[]);
    let err = common::stderr(&out);
    assert!(!out.status.success());
    assert!(
        err.contains("3 ids appear on more than one line (5 repeated records): 0 (lines 1, 4, 6), 1 (lines 2, 5, 7), 2 (lines 3, 8)"),
        "{err}"
    );
    assert!(!dir.path().join("out").join("db.p0.shr").exists());
}

#[test]
fn store_info_reports_records_schema_commits_and_health_without_writing() {
    let setup = common::setup(&small());
    let (db, _, gallery) = inputs(&setup, 45);
    let new = new_records(46, 2);
    let new_path = setup.dir.path().join("new.ndjson");
    ndjson::write_file(&new_path, &new).unwrap();
    let out = enroll_cmd(&setup, &new_path, &[]).output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let st = Store::open(&db[1]).unwrap();
    let h = st.header().clone();
    drop(st);
    let out = common::irisc_ok(&["store", "info", s(&db[0]), s(&db[1])]);
    let text = String::from_utf8_lossy(&out.stdout);
    let blocks: Vec<&str> = text.split("\n\n").collect();
    assert_eq!(blocks.len(), 2, "{text}");
    let set: String = h.params.set_id.iter().map(|b| format!("{b:02x}")).collect();
    let k = h.params.ring_bits;
    let count = gallery.len() + new.len();
    let lo = gallery.iter().map(|r| r.id).min().unwrap();
    let hi = new.iter().map(|r| r.id).max().unwrap();
    for (party, block) in blocks.iter().enumerate() {
        for want in [
            format!("{}\n", s(&db[party])),
            "kind       gallery store, format version 3\n".to_string(),
            format!("party      {party}\n"),
            // The gallery's ids, then the enrolled ones from 5000: a range with gaps.
            format!("records    {count} (ids {lo} to {hi}, with gaps)\n"),
            format!(
                "schema     iris codes of 256 bits, public masks, shared as rep3 over Z_2^{k}\n"
            ),
            format!("share set  {set}\n"),
            // Created, then one commit for the gallery and one for the enroll.
            format!("commits    {} (room for", h.seq),
            "health     intact (both header slots agree, every record matches the checksum)"
                .to_string(),
        ] {
            assert!(block.contains(&want), "{want:?} not in:\n{block}");
        }
    }
    assert!(h.seq >= 2);

    // A damaged header slot: reported (exit status non-zero) and the file left as it was.
    let mut bytes = std::fs::read(&db[2]).unwrap();
    bytes[256 + 70] ^= 0x01;
    std::fs::write(&db[2], &bytes).unwrap();
    let out = common::irisc()
        .args(["store", "info", s(&db[2])])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("health     NOT INTACT"), "{text}");
    assert!(text.contains("header slot 1 is damaged"), "{text}");
    assert!(
        text.contains(&format!("records    {count} (ids unknown")),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&db[2]).unwrap(),
        bytes,
        "store info wrote to the store"
    );
    // Not a store at all.
    let out = common::irisc()
        .args(["store", "info", s(&new_path)])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("is not an irisc gallery store"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_rep3_store_serves_a_program_whose_threshold_shrinks_the_ring() {
    // Secret masks: the ring depends on the threshold (Z_2^12 at 0.375, Z_2^11 at 0.25).
    let a_program = common::example("small_secret.irs");
    let mut setup = common::setup(&a_program);
    let (gallery, qs) = data::edge_case_set(47, 256, 4, 2, 1, 4, 2);
    let db = setup.share(&a_program, "--db", "db", &gallery);
    let src = std::fs::read_to_string(&a_program).unwrap();
    assert!(src.contains("MATCH_RATIO = 0.375;"));
    let b_src = src.replace("MATCH_RATIO = 0.375;", "MATCH_RATIO = 0.25;");
    let (b_program, b_exe) = build_variant(&setup, "b", &b_src, &PLAN);
    setup.exe = b_exe;
    let store_ring = Store::open(&db[0]).unwrap().header().params.ring_bits;
    // B's queries are shared for B (over B's ring, smaller than the store's).
    let q = setup.share(&b_program, "--query", "query", &qs);
    let q_ring = irisc_runtime::io::share_file::read_header(&q[0])
        .unwrap()
        .ring_bits;
    assert!(
        q_ring < store_ring,
        "B's ring {q_ring}, the store's {store_ring}"
    );

    // Enrolling with B deals the new records over the store's ring.
    let new = new_records(48, 2);
    let new_path = setup.dir.path().join("new.ndjson");
    ndjson::write_file(&new_path, &new).unwrap();
    let out = common::irisc()
        .args(["enroll", s(&b_program), "--db", s(&new_path), "--store"])
        .arg(setup.dir.path().join("db-shares"))
        .args(PLAN)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(
        Store::open(&db[0]).unwrap().header().params.ring_bits,
        store_ring
    );

    let mut all = gallery.clone();
    all.extend(new.iter().cloned());
    let all_path = setup.dir.path().join("all.ndjson");
    ndjson::write_file(&all_path, &all).unwrap();
    use irisc::driver::pipeline;
    let checked = pipeline::read_and_check(&b_program).unwrap();
    let plan = irisc::analysis::plan::PlanOptions {
        sharing: Some(irisc_runtime::vocab::Sharing::Rep3),
        ..Default::default()
    };
    let planned = pipeline::plan(&checked, &plan).unwrap();
    let want = irisc::driver::plaintext::answers_db_query(
        &checked.program,
        &planned.plan,
        &all_path,
        &setup.dir.path().join("query.ndjson"),
    )
    .unwrap();
    assert_eq!(answers(&setup, &db, &q), want);
}
