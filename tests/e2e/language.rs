//! Every example program, run as three OS processes over TLS by `irisc run --check`, answers as
//! its plaintext definition does: the small examples (one per language feature) on generated
//! inputs chosen so that the answers are not trivial, the sharing x variant matrix, forced
//! choices that do not apply, a property over random seeds and thresholds, every full-size
//! example on small inputs, and the FAR / FRR of the cosine program against a float cosine.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::Value;

use irisc_runtime::io::{ndjson, ndjson_values};

use crate::common;

/// A folder for one test's generated inputs.
pub(crate) struct Work {
    dir: tempfile::TempDir,
}

impl Work {
    pub(crate) fn new() -> Work {
        Work {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `irisc gen ARGS -o DIR/NAME`; returns the file.
    pub(crate) fn gen(&self, name: &str, args: &[&str]) -> PathBuf {
        let out = self.path(name);
        let mut all: Vec<&str> = vec!["gen"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-o", out.to_str().unwrap()]);
        common::irisc_ok(&all);
        out
    }

    /// An iris gallery of `count` records with ids 0..count.
    pub(crate) fn gallery(&self, name: &str, count: usize, seed: u64, bits: u32) -> PathBuf {
        self.gen(
            name,
            &[
                "--count",
                &count.to_string(),
                "--seed",
                &seed.to_string(),
                "--bits",
                &bits.to_string(),
            ],
        )
    }

    /// Queries near `gallery`: near-duplicates under rotation, threshold edge cases at `ratio`
    /// and fresh codes (the bits are the gallery's).
    pub(crate) fn near(
        &self,
        name: &str,
        gallery: &Path,
        count: usize,
        seed: u64,
        ratio: &str,
    ) -> PathBuf {
        self.gen(
            name,
            &[
                "--count",
                &count.to_string(),
                "--seed",
                &seed.to_string(),
                "--near",
                gallery.to_str().unwrap(),
                "--ratio",
                ratio,
            ],
        )
    }

    /// A batch whose later queries are near-duplicates of its earlier ones: `n` queries near
    /// `gallery`, then `n` queries near those, then a copy of the first query with some valid
    /// bits rotated by one column (so that some query surely has an earlier match), renumbered
    /// 0..2n+1.
    pub(crate) fn batch(
        &self,
        name: &str,
        gallery: &Path,
        n: usize,
        seed: u64,
        ratio: &str,
    ) -> PathBuf {
        let first = self.near(&format!("{name}.first"), gallery, n, seed, ratio);
        let second = self.near(&format!("{name}.second"), &first, n, seed + 1, ratio);
        let mut all = ndjson::read_file(&first).unwrap();
        all.extend(ndjson::read_file(&second).unwrap());
        let again = all[..n]
            .iter()
            .find(|r| r.iris.mask.iter().any(|&m| m != 0))
            .expect("a query with valid bits")
            .clone();
        all.push(irisc_runtime::iris::IrisRecord {
            iris: again.iris.rotate(1),
            ..again
        });
        for (i, r) in all.iter_mut().enumerate() {
            r.id = i as u64;
        }
        let out = self.path(name);
        ndjson::write_file(&out, &all).unwrap();
        out
    }
}

pub(crate) fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `irisc run PROGRAM ARGS --threads 1 --check`: asserts that it succeeds and that the check ran,
/// and returns the JSON lines the output parties printed.
pub(crate) fn run_checked(program: &Path, args: &[&str]) -> Vec<Value> {
    run_checked_env(program, args, &["--threads", "1"], &[])
}

/// [`run_checked`] with `threads` arguments and environment variables for the parties.
pub(crate) fn run_checked_env(
    program: &Path,
    args: &[&str],
    threads: &[&str],
    env: &[(&str, &str)],
) -> Vec<Value> {
    let out = common::irisc()
        .arg("run")
        .arg(program)
        .args(args)
        .args(threads)
        .arg("--check")
        .envs(env.iter().copied())
        .output()
        .expect("irisc runs");
    let err = common::stderr(&out);
    assert!(
        out.status.success(),
        "irisc run {} {args:?} --check failed:\n{err}",
        program.display()
    );
    assert!(
        err.contains("checked: the answers equal the plaintext definition"),
        "irisc run {} {args:?}: no check reported:\n{err}",
        program.display()
    );
    assert!(!err.contains("panicked"), "a panic was reported:\n{err}");
    common::stdout_json(&out)
}

/// `irisc run` with choices that do not apply: fails with exit status 1 (an error, not a panic)
/// and a message containing `expect`.
fn run_refused(program: &Path, args: &[&str], expect: &str) {
    let out = common::irisc()
        .arg("run")
        .arg(program)
        .args(args)
        .args(["--threads", "1", "--check"])
        .output()
        .expect("irisc runs");
    let err = common::stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "irisc run {} {args:?} should fail with an error:\n{err}",
        program.display()
    );
    assert!(
        !err.contains("panicked"),
        "a panic instead of an error:\n{err}"
    );
    assert!(
        err.contains(expect),
        "the message should say {expect:?}:\n{err}"
    );
    assert!(out.stdout.is_empty(), "answers printed by a refused run");
}

fn ids_of(v: &Value) -> Vec<u64> {
    v["ids"]
        .as_array()
        .unwrap_or_else(|| panic!("no ids array in {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap_or_else(|| panic!("bad id in {v}")))
        .collect()
}

/// One object per query, in query order, with `query` and the given fields; `match` agrees with
/// a non-empty `ids`, and the ids are record ids of the gallery (`gallery_ids`).
pub(crate) fn check_shape(answers: &[Value], queries: usize, fields: &[&str], gallery_ids: &[u64]) {
    assert_eq!(answers.len(), queries, "one object per query: {answers:?}");
    for (i, a) in answers.iter().enumerate() {
        assert_eq!(a["query"], i as u64, "queries in order: {a}");
        for f in fields {
            assert!(a.get(f).is_some(), "field {f} missing in {a}");
        }
        if fields.contains(&"ids") {
            let ids = ids_of(a);
            assert_eq!(a["match"], !ids.is_empty(), "match disagrees with ids: {a}");
            assert!(
                ids.iter().all(|id| gallery_ids.contains(id)),
                "unknown id in {a}"
            );
            assert!(
                ids.windows(2).all(|w| w[0] < w[1]),
                "ids not ascending: {a}"
            );
        }
    }
}

/// Some query matches and some does not.
pub(crate) fn assert_mixed(answers: &[Value]) {
    assert!(
        answers.iter().any(|a| a["match"] == true),
        "no query matched: the data is trivial: {answers:?}"
    );
    assert!(
        answers.iter().any(|a| a["match"] == false),
        "every query matched: the data is trivial: {answers:?}"
    );
}

pub(crate) fn record_ids(file: &Path) -> Vec<u64> {
    ndjson::read_file(file)
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect()
}

/// The plaintext answers of `program` (default plan) on one gallery and one query file.
fn plain_answers(program: &Path, db: &Path, query: &Path) -> Vec<Value> {
    use irisc::driver::pipeline;
    let checked = pipeline::read_and_check(program).unwrap();
    let planned = pipeline::plan(&checked, &Default::default()).unwrap();
    irisc::driver::plaintext::answers_db_query(&checked.program, &planned.plan, db, query).unwrap()
}

// ---------------------------------------------------------------------------------------------
// 1. Every small example, on generated inputs.

/// Public masks: which records match.
#[test]
fn small_ids_answers_equal_plaintext() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 1, 256);
    let q = w.near("q.ndjson", &db, 10, 2, "0.375");
    let got = run_checked(
        &common::example("small_ids.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(&got, 10, &["query", "match", "ids"], &record_ids(&db));
    assert_mixed(&got);
}

/// Secret masks: which records match.
#[test]
fn small_secret_answers_equal_plaintext() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 1, 256);
    let q = w.near("q.ndjson", &db, 10, 2, "0.375");
    let got = run_checked(
        &common::example("small_secret.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(&got, 10, &["query", "match", "ids"], &record_ids(&db));
    assert_mixed(&got);
}

/// Only the number of matching records is opened.
#[test]
fn small_count_answers_equal_plaintext() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 1, 256);
    let q = w.near("q.ndjson", &db, 10, 2, "0.375");
    let got = run_checked(
        &common::example("small_count.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(&got, 10, &["query", "count"], &[]);
    for a in &got {
        assert!(
            a.get("ids").is_none() && a.get("match").is_none(),
            "more than the count: {a}"
        );
        assert!(a["count"].as_u64().unwrap() <= 20, "{a}");
    }
    assert!(
        got.iter().any(|a| a["count"].as_u64() > Some(0)),
        "no count > 0: {got:?}"
    );
    assert!(
        got.iter().any(|a| a["count"] == 0),
        "every count > 0: {got:?}"
    );
}

/// The gallery and the earlier queries of the batch (`earlier(q)`, field `in_batch`).
#[test]
fn small_batch_answers_equal_plaintext() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 16, 3, 256);
    let q = w.batch("q.ndjson", &db, 6, 4, "0.375");
    let got = run_checked(
        &common::example("small_batch.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(
        &got,
        13,
        &["query", "match", "ids", "in_batch"],
        &record_ids(&db),
    );
    assert_mixed(&got);
    for (i, a) in got.iter().enumerate() {
        let earlier: Vec<u64> = a["in_batch"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap())
            .collect();
        assert!(
            earlier.iter().all(|&j| j < i as u64),
            "in_batch names a later query: {a}"
        );
    }
    assert!(
        got.iter()
            .any(|a| !a["in_batch"].as_array().unwrap().is_empty()),
        "no intra-batch duplicate found: {got:?}"
    );
}

/// Two galleries zipped, AND policy: a subject matches only if both eyes do.
#[test]
fn small_eyes_answers_equal_plaintext() {
    let w = Work::new();
    let left = w.gallery("left.ndjson", 16, 5, 256);
    let right = w.gallery("right.ndjson", 16, 6, 256);
    assert_eq!(record_ids(&left), record_ids(&right));
    // The same seed picks the same source records in both galleries (until the threshold edge
    // cases, whose random draws depend on the masks): query i is mostly one subject's two eyes.
    let ql = w.near("ql.ndjson", &left, 10, 7, "0.375");
    let qr = w.near("qr.ndjson", &right, 10, 7, "0.375");
    let got = run_checked(
        &common::example("small_eyes.irs"),
        &[
            "--input",
            &format!("left={}", s(&left)),
            "--input",
            &format!("right={}", s(&right)),
            "--input",
            &format!("ql={}", s(&ql)),
            "--input",
            &format!("qr={}", s(&qr)),
        ],
    );
    check_shape(&got, 10, &["query", "match", "ids"], &record_ids(&left));
    assert_mixed(&got);
    // AND is not one eye alone: some record matches the left eye but not both.
    let left_only = plain_answers(&common::example("small_secret.irs"), &left, &ql);
    let right_only = plain_answers(&common::example("small_secret.irs"), &right, &qr);
    let mut and_differs = false;
    for ((a, l), r) in got.iter().zip(&left_only).zip(&right_only) {
        let (l, r) = (ids_of(l), ids_of(r));
        let both: Vec<u64> = l.iter().copied().filter(|id| r.contains(id)).collect();
        assert_eq!(ids_of(a), both, "AND of the single-eye answers");
        and_differs |= both != l;
    }
    assert!(and_differs, "no query matches one eye only: {got:?}");
}

/// A secret bit per query chooses the threshold.
#[test]
fn small_tiered_answers_equal_plaintext() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 16, 8, 256);
    // Edge cases at the strict threshold 0.30 match the lenient 0.375: the tier decides them.
    let q = w.near("q.ndjson", &db, 16, 9, "0.30");
    let tier = w.gen(
        "tier.ndjson",
        &["--kind", "bit", "--count", "16", "--seed", "10"],
    );
    let bits = ndjson_values::read_bits(&tier).unwrap();
    assert!(bits.iter().any(|b| b.bit) && bits.iter().any(|b| !b.bit));
    let got = run_checked(
        &common::example("small_tiered.irs"),
        &[
            "--db",
            s(&db),
            "--input",
            &format!("q={}", s(&q)),
            "--input",
            &format!("tier={}", s(&tier)),
        ],
    );
    check_shape(&got, 16, &["query", "match", "ids"], &record_ids(&db));
    assert_mixed(&got);
    // The tier decides some query: with every tier bit set the answers differ.
    let all_strict = tiered_plain(&db, &q, &[true; 16]);
    let all_lenient = tiered_plain(&db, &q, &[false; 16]);
    assert_ne!(all_strict, all_lenient, "no query depends on its tier");
    let mixed: Vec<bool> = bits.iter().map(|b| b.bit).collect();
    assert_eq!(got, tiered_plain(&db, &q, &mixed));
}

/// The plaintext answers of small_tiered.irs (default plan) with the given tier bits.
fn tiered_plain(db: &Path, q: &Path, tiers: &[bool]) -> Vec<Value> {
    use irisc::driver::{pipeline, plaintext};
    let checked = pipeline::read_and_check(&common::example("small_tiered.irs")).unwrap();
    let planned = pipeline::plan(&checked, &Default::default()).unwrap();
    let iris = |p: &Path| {
        plaintext::PlainInput::Iris(
            ndjson::read_file(p)
                .unwrap()
                .into_iter()
                .map(|r| (r.id, r.iris))
                .collect(),
        )
    };
    let bits = plaintext::PlainInput::Bit(
        tiers
            .iter()
            .enumerate()
            .map(|(i, &b)| (i as u64, b))
            .collect(),
    );
    // Inputs in declaration order: db, q, tier.
    let mut answers =
        plaintext::answers(&checked.program, &planned.plan, &[iris(db), iris(q), bits]).unwrap();
    answers.remove(&0).unwrap()
}

/// Cosine similarity of 16-dimensional embeddings, revealed to p1.
#[test]
fn small_voice_answers_equal_plaintext() {
    let w = Work::new();
    let common_args = ["--kind", "embedding", "--dim", "16", "--voices", "3"];
    let mut g = common_args.to_vec();
    g.extend(["--speakers", "6", "--per-speaker", "2", "--seed", "1"]);
    let db = w.gen("db.ndjson", &g);
    // Speakers 6 and 7 are impostors: never enrolled.
    let mut q = common_args.to_vec();
    q.extend(["--speakers", "8", "--per-speaker", "1", "--seed", "2"]);
    let q = w.gen("q.ndjson", &q);
    let got = run_checked(
        &common::example("small_voice.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    let gallery_ids: Vec<u64> = ndjson_values::read_embeddings(&db, Some(16))
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    check_shape(&got, 8, &["query", "match", "ids"], &gallery_ids);
    assert_mixed(&got);
}

// ---------------------------------------------------------------------------------------------
// 2. The sharing x variant matrix, and choices that do not apply.

/// Secret masks: every comparison variant on replicated sharing, and the lifted variant on the
/// Shamir sharings (prime field, Galois rings of degree 2 and 4).
#[test]
fn small_secret_every_variant_and_sharing() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 11, 256);
    let q = w.near("q.ndjson", &db, 12, 12, "0.375");
    let program = common::example("small_secret.irs");
    let mut reference: Option<Vec<Value>> = None;
    for (sharing, variant) in [
        ("rep3", "no-lift"),
        ("rep3", "const-lift"),
        ("rep3", "mpc-lift"),
        ("gr2", "mpc-lift"),
        ("gr4", "mpc-lift"),
        ("fp", "mpc-lift"),
    ] {
        let got = run_checked(
            &program,
            &[
                "--db",
                s(&db),
                "--query",
                s(&q),
                "--sharing",
                sharing,
                "--variant",
                variant,
            ],
        );
        check_shape(&got, 12, &["query", "match", "ids"], &record_ids(&db));
        assert_mixed(&got);
        // At the deployed precision every variant decides the same on these codes.
        match &reference {
            None => reference = Some(got),
            Some(r) => assert_eq!(&got, r, "--sharing {sharing} --variant {variant}"),
        }
    }
}

/// Public masks on every sharing.
#[test]
fn small_ids_every_sharing() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 13, 256);
    let q = w.near("q.ndjson", &db, 12, 14, "0.375");
    let program = common::example("small_ids.irs");
    let mut reference: Option<Vec<Value>> = None;
    for sharing in ["rep3", "gr2", "gr4", "fp"] {
        let got = run_checked(
            &program,
            &["--db", s(&db), "--query", s(&q), "--sharing", sharing],
        );
        check_shape(&got, 12, &["query", "match", "ids"], &record_ids(&db));
        assert_mixed(&got);
        match &reference {
            None => reference = Some(got),
            Some(r) => assert_eq!(&got, r, "--sharing {sharing}"),
        }
    }
}

/// The generated dot-product kernels forced to their portable variant (`IRISC_ISA=portable`,
/// inherited by the three parties), records split over 3 threads: every sharing still answers
/// as the plaintext definition (`--check`) and as the fast paths do.
#[test]
fn every_sharing_with_portable_kernels() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 23, 17, 256);
    let q = w.near("q.ndjson", &db, 5, 18, "0.375");
    let program = common::example("small_ids.irs");
    for sharing in ["rep3", "gr2", "gr4", "fp"] {
        let args = ["--db", s(&db), "--query", s(&q), "--sharing", sharing];
        let portable = run_checked_env(
            &program,
            &args,
            &["--threads", "3"],
            &[("IRISC_ISA", "portable")],
        );
        check_shape(&portable, 5, &["query", "match", "ids"], &record_ids(&db));
        let fast = run_checked_env(&program, &args, &["--threads", "2"], &[]);
        assert_eq!(portable, fast, "--sharing {sharing}");
    }
}

/// An ISA this CPU lacks, or an unknown one, is refused with a message, not silently ignored.
#[test]
fn unknown_isa_is_refused() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 3, 19, 256);
    let q = w.near("q.ndjson", &db, 1, 20, "0.375");
    let out = common::irisc()
        .arg("run")
        .arg(common::example("small_ids.irs"))
        .args(["--db", s(&db), "--query", s(&q), "--sharing", "rep3"])
        .env("IRISC_ISA", "sse9")
        .output()
        .expect("irisc runs");
    assert!(!out.status.success());
    let err = common::stderr(&out);
    assert!(err.contains("IRISC_ISA=sse9"), "{err}");
}

/// plain-mask needs public masks; gr4 needs a gallery on the record side, not earlier(q).
#[test]
fn inapplicable_choices_are_refused_with_a_message() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 4, 15, 256);
    let q = w.near("q.ndjson", &db, 2, 16, "0.375");
    run_refused(
        &common::example("small_secret.irs"),
        &["--db", s(&db), "--query", s(&q), "--variant", "plain-mask"],
        "plain-mask needs public masks",
    );
    run_refused(
        &common::example("small_batch.irs"),
        &["--db", s(&db), "--query", s(&q), "--sharing", "gr4"],
        "gr4 sharing needs a gallery on the record side",
    );
}

// ---------------------------------------------------------------------------------------------
// 3. Random seeds and thresholds, default plan.

proptest! {
    #![proptest_config(ProptestConfig { cases: 4, ..ProptestConfig::default() })]

    /// small_secret.irs with its threshold replaced by a random ratio, on a random gallery and
    /// queries whose edge cases sit exactly at that ratio (and one flip below it): the three
    /// processes answer as the plaintext definition does.
    #[test]
    fn small_secret_random_seeds_and_ratios(seed in 0u64..1_000_000, thousandths in 250u32..=450) {
        let w = Work::new();
        let ratio = format!("0.{thousandths:03}");
        let source = std::fs::read_to_string(common::example("small_secret.irs")).unwrap();
        let line = "const MATCH_RATIO = 0.375;";
        prop_assert!(source.contains(line));
        let program = w.path("small_secret.irs");
        std::fs::write(&program, source.replace(line, &format!("const MATCH_RATIO = {ratio};"))).unwrap();
        let db = w.gallery("db.ndjson", 16, seed, 256);
        let q = w.near("q.ndjson", &db, 24, seed + 1, &ratio);
        let got = run_checked(&program, &["--db", s(&db), "--query", s(&q)]);
        check_shape(&got, 24, &["query", "match", "ids"], &record_ids(&db));
    }
}

// ---------------------------------------------------------------------------------------------
// 4. The full-size examples (12 800-bit codes, 31 rotations; 192-dim embeddings), small inputs.

/// A 20-record gallery and 4 queries near it, 12 800-bit codes.
fn full_size(w: &Work, seed: u64) -> (PathBuf, PathBuf) {
    let db = w.gallery("db.ndjson", 20, seed, 12800);
    let q = w.near("q.ndjson", &db, 4, seed + 1, "0.345");
    (db, q)
}

fn full_ids_program(name: &str) {
    let w = Work::new();
    let (db, q) = full_size(&w, 21);
    let got = run_checked(&common::example(name), &["--db", s(&db), "--query", s(&q)]);
    check_shape(&got, 4, &["query", "match", "ids"], &record_ids(&db));
    assert_mixed(&got);
}

#[test]
fn full_iris_ids() {
    full_ids_program("iris_ids.irs");
}

#[test]
fn full_iris_secret_masks() {
    full_ids_program("iris_secret_masks.irs");
}

/// The mirror-attack check at full size: queries near gallery records, and one presented as
/// the mirror image of a record (as a capture of a mirrored eye gives it): the query matches
/// through `ids`, the mirrored one through `mirror_ids` only; the plaintext definition agrees.
#[test]
fn full_iris_mirror() {
    let w = Work::new();
    let (db, q) = full_size(&w, 23);
    let mut queries = ndjson::read_file(&q).unwrap();
    let gallery = ndjson::read_file(&db).unwrap();
    queries[1].iris = gallery[7].iris.mirror();
    ndjson::write_file(&q, &queries).unwrap();
    let got = run_checked(
        &common::example("iris_mirror.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(
        &got,
        4,
        &["query", "match", "ids", "mirror_ids"],
        &record_ids(&db),
    );
    let ids = |a: &Value, f: &str| a[f].as_array().map_or(0, Vec::len);
    assert!(
        ids(&got[1], "mirror_ids") > 0 && ids(&got[1], "ids") == 0,
        "{:?}",
        got[1]
    );
    assert!(got.iter().any(|a| ids(a, "ids") > 0), "{got:?}");
}

/// The small mirror example (`examples/small_mirror.irs`) against the plaintext definition, on
/// queries of which one is a mirrored capture (the independent reference is in `mirror.rs`).
#[test]
fn small_mirror() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 40, 31, 256);
    let q = w.near("q.ndjson", &db, 4, 32, "0.2");
    let mut queries = ndjson::read_file(&q).unwrap();
    let gallery = ndjson::read_file(&db).unwrap();
    queries[2].iris = gallery[5].iris.mirror();
    ndjson::write_file(&q, &queries).unwrap();
    let got = run_checked(
        &common::example("small_mirror.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(&got, 4, &["query", "ids"], &record_ids(&db));
    let ids = |a: &Value| a["ids"].as_array().map_or(0, Vec::len);
    assert!(
        ids(&got[2]) > 0,
        "the mirrored capture matches: {:?}",
        got[2]
    );
}

#[test]
fn full_iris_unique() {
    let w = Work::new();
    let (db, q) = full_size(&w, 21);
    let got = run_checked(
        &common::example("iris_unique.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(&got, 4, &["query", "match"], &[]);
    assert!(
        got.iter().all(|a| a.get("ids").is_none()),
        "only one bit per query: {got:?}"
    );
    assert_mixed(&got);
}

#[test]
fn full_iris_count() {
    let w = Work::new();
    let (db, q) = full_size(&w, 21);
    let got = run_checked(
        &common::example("iris_count.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(&got, 4, &["query", "count"], &[]);
    assert!(
        got.iter().any(|a| a["count"].as_u64() > Some(0)),
        "no count > 0: {got:?}"
    );
}

#[test]
fn full_iris_batch_unique() {
    let w = Work::new();
    let db = w.gallery("db.ndjson", 20, 21, 12800);
    let q = w.batch("q.ndjson", &db, 3, 24, "0.345");
    let got = run_checked(
        &common::example("iris_batch_unique.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    check_shape(
        &got,
        7,
        &["query", "match", "ids", "in_batch"],
        &record_ids(&db),
    );
    assert_mixed(&got);
    assert!(
        got.iter()
            .any(|a| !a["in_batch"].as_array().unwrap().is_empty()),
        "no intra-batch duplicate found: {got:?}"
    );
}

/// A tiered example: `bits` names its secret tier inputs, each drawn as one bit per query.
fn full_tiers(program: &str, bits: &[&str]) {
    let w = Work::new();
    let (db, q) = full_size(&w, 21);
    let mut args = vec!["--db".to_string(), s(&db).to_string()];
    args.extend(["--input".into(), format!("q={}", s(&q))]);
    for (k, name) in bits.iter().enumerate() {
        let seed = (2 + 3 * k).to_string();
        let file = w.gen(
            &format!("{name}.ndjson"),
            &["--kind", "bit", "--count", "4", "--seed", &seed],
        );
        args.extend(["--input".into(), format!("{name}={}", s(&file))]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let got = run_checked(&common::example(program), &args);
    check_shape(&got, 4, &["query", "match", "ids"], &record_ids(&db));
    assert_mixed(&got);
    // The same program with its comparisons, OR trees and secret ifs under the masked-triple
    // family (paper 004): the same answers as under the honest-majority protocol (both are
    // also checked against the plaintext definition).
    let mut beaver = args.clone();
    beaver.extend(["--protocol", "beaver"]);
    let under_beaver = run_checked(&common::example(program), &beaver);
    assert_eq!(
        under_beaver, got,
        "{program}: beaver and rep3 answers differ"
    );
}

#[test]
fn full_iris_tiered() {
    full_tiers("iris_tiered.irs", &["tier"]);
}

/// Two secret tier bits choose among four thresholds through nested secret `if`s (under both
/// protocol families).
#[test]
fn full_iris_tier4() {
    full_tiers("iris_tier4.irs", &["tier_high", "tier_low"]);
}

fn full_eyes(name: &str) -> Vec<Value> {
    let w = Work::new();
    let left = w.gallery("left.ndjson", 20, 21, 12800);
    let right = w.gallery("right.ndjson", 20, 31, 12800);
    let ql = w.near("ql.ndjson", &left, 4, 22, "0.345");
    let qr = w.near("qr.ndjson", &right, 4, 22, "0.345");
    let got = run_checked(
        &common::example(name),
        &[
            "--input",
            &format!("left={}", s(&left)),
            "--input",
            &format!("right={}", s(&right)),
            "--input",
            &format!("ql={}", s(&ql)),
            "--input",
            &format!("qr={}", s(&qr)),
        ],
    );
    check_shape(&got, 4, &["query", "match", "ids"], &record_ids(&left));
    got
}

#[test]
fn full_iris_both_eyes() {
    let got = full_eyes("iris_both_eyes.irs");
    assert_mixed(&got);
}

#[test]
fn full_iris_eyes_ids() {
    let got = full_eyes("iris_eyes_ids.irs");
    assert_mixed(&got);
}

#[test]
fn full_iris_both_eyes_or() {
    let got = full_eyes("iris_both_eyes_or.irs");
    assert_mixed(&got);
}

#[test]
fn full_voice_cosine() {
    let w = Work::new();
    let db = w.gen(
        "db.ndjson",
        &[
            "--kind",
            "embedding",
            "--speakers",
            "10",
            "--per-speaker",
            "2",
            "--seed",
            "1",
        ],
    );
    let q = w.gen(
        "q.ndjson",
        &[
            "--kind",
            "embedding",
            "--speakers",
            "13",
            "--per-speaker",
            "1",
            "--seed",
            "2",
        ],
    );
    let got = run_checked(
        &common::example("voice_cosine.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );
    let ids: Vec<u64> = ndjson_values::read_embeddings(&db, Some(192))
        .unwrap()
        .iter()
        .map(|r| r.id)
        .collect();
    check_shape(&got, 13, &["query", "match", "ids"], &ids);
    assert_mixed(&got);
}

/// Every example in examples/ is run by a test of this file.
#[test]
fn every_example_is_covered() {
    let covered = [
        "small_ids.irs",
        "small_secret.irs",
        "small_count.irs",
        "small_batch.irs",
        "small_eyes.irs",
        "small_tiered.irs",
        "small_voice.irs",
        "iris_ids.irs",
        "iris_secret_masks.irs",
        "iris_unique.irs",
        "iris_count.irs",
        "iris_batch_unique.irs",
        "iris_tiered.irs",
        "iris_tier4.irs",
        "iris_both_eyes.irs",
        "iris_both_eyes_or.irs",
        "iris_eyes_ids.irs",
        "iris_mirror.irs",
        "small_mirror.irs",
        "voice_cosine.irs",
    ];
    for entry in std::fs::read_dir(common::repo().join("examples")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".irs") {
            assert!(
                covered.contains(&name.as_str()),
                "examples/{name} has no test here"
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 5. Cosine FAR / FRR: the MPC decision against a floating-point cosine.

fn cosine(a: &[f64], b: &[f64]) -> f64 {
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    let na: f64 = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt();
    dot / (na * nb)
}

/// `cosine(x, y) >= num/den` on fixed-point vectors, without square roots: `<x,y> >= 0` and
/// `den² <x,y>² >= num² <x,x> <y,y>` (written here independently of the compiler's oracle).
fn fixed_cosine_at_least(x: &[i64], y: &[i64], num: i128, den: i128) -> bool {
    let dot = |a: &[i64], b: &[i64]| -> i128 {
        a.iter().zip(b).map(|(&p, &q)| p as i128 * q as i128).sum()
    };
    let xy = dot(x, y);
    xy >= 0 && den * den * xy * xy >= num * num * dot(x, x) * dot(y, y)
}

#[derive(Debug, Default)]
struct Rates {
    genuine: usize,
    impostor: usize,
    false_rejects: usize,
    false_accepts: usize,
}

impl Rates {
    fn add(&mut self, genuine: bool, accepted: bool) {
        if genuine {
            self.genuine += 1;
            self.false_rejects += usize::from(!accepted);
        } else {
            self.impostor += 1;
            self.false_accepts += usize::from(accepted);
        }
    }
    fn far(&self) -> f64 {
        self.false_accepts as f64 / self.impostor as f64
    }
    fn frr(&self) -> f64 {
        self.false_rejects as f64 / self.genuine as f64
    }
}

/// voice_cosine.irs (tau = 0.34 = 17/50, scale 2^8) on 20 enrolled speakers x 2 utterances and
/// 2 queries each from those 20 speakers and 5 impostors. The noise (1.3, same-speaker cosine
/// about 1/(1 + 1.3²) = 0.37) puts genuine pairs near the threshold, so that the figures are not
/// trivially zero. FAR / FRR from the MPC answers equal those of the fixed-point rule and are
/// within quantisation of the float cosine's.
#[test]
fn voice_cosine_far_frr() {
    const TAU: f64 = 0.34;
    let w = Work::new();
    let common_args = [
        "--kind",
        "embedding",
        "--dim",
        "192",
        "--noise",
        "1.3",
        "--voices",
        "7",
    ];
    let mut g = common_args.to_vec();
    g.extend(["--speakers", "20", "--per-speaker", "2", "--seed", "1"]);
    let db = w.gen("db.ndjson", &g);
    let mut q = common_args.to_vec();
    q.extend(["--speakers", "25", "--per-speaker", "2", "--seed", "2"]);
    let q = w.gen("q.ndjson", &q);
    let got = run_checked(
        &common::example("voice_cosine.irs"),
        &["--db", s(&db), "--query", s(&q)],
    );

    let gallery = ndjson_values::read_embeddings(&db, Some(192)).unwrap();
    let queries = ndjson_values::read_embeddings(&q, Some(192)).unwrap();
    check_shape(
        &got,
        queries.len(),
        &["query", "match", "ids"],
        &gallery.iter().map(|r| r.id).collect::<Vec<_>>(),
    );
    let quantised =
        |v: &[f64]| -> Vec<i64> { v.iter().map(|&x| ndjson_values::quantise(x, 8)).collect() };
    let (mut mpc, mut float) = (Rates::default(), Rates::default());
    let mut disagreements = Vec::new();
    for (a, qr) in got.iter().zip(&queries) {
        let accepted = ids_of(a);
        let qv = quantised(&qr.embedding);
        for r in &gallery {
            let genuine = qr.id / 1000 == r.id / 1000;
            let by_mpc = accepted.contains(&r.id);
            // The MPC decision is the fixed-point rule's, exactly.
            assert_eq!(
                by_mpc,
                fixed_cosine_at_least(&qv, &quantised(&r.embedding), 17, 50),
                "query {} record {}",
                qr.id,
                r.id
            );
            let c = cosine(&qr.embedding, &r.embedding);
            mpc.add(genuine, by_mpc);
            float.add(genuine, c >= TAU);
            if by_mpc != (c >= TAU) {
                disagreements.push((qr.id, r.id, c));
            }
        }
    }
    eprintln!(
        "voice_cosine.irs, tau {TAU}, {} genuine and {} impostor pairs:\n  \
         MPC:   FAR {:.4} ({}/{}), FRR {:.4} ({}/{})\n  \
         float: FAR {:.4} ({}/{}), FRR {:.4} ({}/{})\n  \
         pairs decided differently (quantisation): {disagreements:?}",
        mpc.genuine,
        mpc.impostor,
        mpc.far(),
        mpc.false_accepts,
        mpc.impostor,
        mpc.frr(),
        mpc.false_rejects,
        mpc.genuine,
        float.far(),
        float.false_accepts,
        float.impostor,
        float.frr(),
        float.false_rejects,
        float.genuine,
    );
    assert_eq!(mpc.genuine, 80);
    assert_eq!(mpc.impostor, 2000 - 80);
    // The data is not trivial: some genuine pairs are rejected, most are accepted.
    assert!(mpc.false_rejects > 0 && mpc.frr() < 0.5, "{mpc:?}");
    // Rounding to 2^-8 moves a cosine by far less than 0.01: only pairs that close to tau may
    // be decided differently, and only a few of them.
    for &(qid, rid, c) in &disagreements {
        assert!(
            (c - TAU).abs() < 0.01,
            "query {qid} record {rid}: cosine {c} decided differently"
        );
    }
    assert!(disagreements.len() <= 2, "{disagreements:?}");
    assert!((mpc.far() - float.far()).abs() <= 2.0 / mpc.impostor as f64);
    assert!((mpc.frr() - float.frr()).abs() <= 2.0 / mpc.genuine as f64);
}
