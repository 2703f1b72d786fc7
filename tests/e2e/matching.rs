//! Three processes over TLS answer exactly as the plaintext definition does.

use std::path::PathBuf;
use std::sync::OnceLock;

use proptest::prelude::*;

use crate::common::{self, Setup};
use crate::data;

fn small_ids() -> PathBuf {
    common::example("small_ids.irs")
}

fn small_any() -> PathBuf {
    common::repo().join("tests/e2e/programs/small_any.irs")
}

/// The plaintext answers of `program` (with the compiler's default choices) on NDJSON files.
fn plain_answers(
    program: &std::path::Path,
    db: &std::path::Path,
    query: &std::path::Path,
) -> Vec<serde_json::Value> {
    use irisc::driver::pipeline;
    let checked = pipeline::read_and_check(program).unwrap();
    let planned = pipeline::plan(&checked, &Default::default()).unwrap();
    irisc::driver::plaintext::answers_db_query(&checked.program, &planned.plan, db, query).unwrap()
}

/// The plaintext answers for `program` on NDJSON files written by [`Setup::share`].
fn plain(setup: &Setup, program: &std::path::Path) -> Vec<serde_json::Value> {
    let dir = setup.dir.path();
    plain_answers(program, &dir.join("db.ndjson"), &dir.join("query.ndjson"))
}

fn output_party(outs: &[std::process::Output], party: usize) -> Vec<serde_json::Value> {
    for (p, o) in outs.iter().enumerate() {
        assert!(
            o.status.success(),
            "party {p} failed:\n{}",
            common::stderr(o)
        );
        if p != party {
            assert!(
                o.stdout.is_empty(),
                "party {p} is not the output party but printed results"
            );
        }
    }
    common::stdout_json(&outs[party])
}

/// A random small gallery with pairs just below, at and above the threshold under rotation,
/// run by `setup`'s build of `small_ids` on 1 to 3 kernel threads per party (the gallery cut
/// into uneven chunks): the ids the output party prints equal Algorithm 1's.
fn ids_equal_plaintext(
    setup: &Setup,
    seed: u64,
    n_random: usize,
    queries: usize,
    extra: &[&str],
) -> Result<(), TestCaseError> {
    let (gallery, qs) = data::edge_case_set(seed, 256, n_random, queries, 3, 8, 2);
    prop_assume!(!gallery.is_empty());
    let db = setup.share(&small_ids(), "--db", "db", &gallery);
    let q = setup.share(&small_ids(), "--query", "query", &qs);
    let threads = (1 + seed % 3).to_string();
    let mut args = vec!["--timeout", "20", "--threads", &threads];
    args.extend_from_slice(extra);
    let outs = setup.run_three(&db, &q, &args);
    let got = output_party(&outs, 0);
    prop_assert_eq!(got, plain(setup, &small_ids()));
    Ok(())
}

static IDS: OnceLock<Setup> = OnceLock::new();
static IDS_ADDITIVE: OnceLock<Setup> = OnceLock::new();
static IDS_COMPONENT0: OnceLock<Setup> = OnceLock::new();
static ANY: OnceLock<Setup> = OnceLock::new();

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Random small galleries with pairs just below, at and above the threshold under rotation:
    /// the ids the output party prints equal Algorithm 1's.
    #[test]
    fn ids_equal_plaintext_definition(seed in any::<u64>(), n_random in 0usize..12, queries in 1usize..4) {
        let setup = IDS.get_or_init(|| common::setup(&small_ids()));
        ids_equal_plaintext(setup, seed, n_random, queries, &[])?;
    }

    /// The same with AdditiveMSB forced (`--msb-input additive`; at this program's Z_2^10 the
    /// cost model keeps the reshare): the comparisons start from the dot products' additive
    /// shares, and the ids still equal Algorithm 1's, pairs at the threshold included; with
    /// and without message chunks (`--chunk-size`: its inputs and AND rounds sent in chunks of
    /// 64 or 128 comparisons, the last one short).
    #[test]
    fn ids_from_additive_msb_equal_plaintext_definition(
        seed in any::<u64>(),
        n_random in 0usize..12,
        queries in 1usize..4,
        chunk in prop::sample::select(vec!["0", "64", "128"]),
    ) {
        let setup = IDS_ADDITIVE.get_or_init(|| common::setup_with(&small_ids(), &["--msb-input", "additive"]));
        ids_equal_plaintext(setup, seed, n_random, queries, &["--chunk-size", chunk])?;
    }

    /// Both threshold placements against the definition: the default (record thirds: each
    /// party computes the mask lengths of the thirds its components add to) is the build of
    /// the two tests above, on replicated shares (two holders per third) and on additive ones
    /// (one); here `--threshold-placement component0` (every party computes every mask length,
    /// component 0 adds every threshold).
    #[test]
    fn ids_with_the_threshold_on_component0_equal_plaintext_definition(
        seed in any::<u64>(),
        n_random in 0usize..12,
        queries in 1usize..4,
    ) {
        let setup = IDS_COMPONENT0.get_or_init(|| {
            common::setup_with(&small_ids(), &["--threshold-placement", "component0", "--msb-input", "additive"])
        });
        ids_equal_plaintext(setup, seed, n_random, queries, &[])?;
    }

    /// The one-bit form: the OR over every record and rotation, revealed to party 1.
    #[test]
    fn any_bit_equals_plaintext_definition(seed in any::<u64>(), n_random in 0usize..8) {
        let setup = ANY.get_or_init(|| common::setup(&small_any()));
        let (gallery, qs) = data::edge_case_set(seed, 256, n_random, 3, 3, 8, 2);
        prop_assume!(!gallery.is_empty());
        let db = setup.share(&small_any(), "--db", "db", &gallery);
        let q = setup.share(&small_any(), "--query", "query", &qs);
        let outs = setup.run_three(&db, &q, &["--timeout", "20"]);
        let got = output_party(&outs, 1);
        prop_assert_eq!(got, plain(setup, &small_any()));
    }
}

/// The deployed shape: 12 800-bit codes, 31 rotations, ratio 0.345, on codes from `irisc gen`.
#[test]
fn example_program_on_generated_codes() {
    let program = common::example("iris_ids.irs");
    let setup = common::setup(&program);
    let dir = setup.dir.path();
    let db = dir.join("db.ndjson");
    let q = dir.join("query.ndjson");
    common::irisc_ok(&[
        "gen",
        "--count",
        "60",
        "--seed",
        "11",
        "-o",
        db.to_str().unwrap(),
    ]);
    common::irisc_ok(&[
        "gen",
        "--count",
        "4",
        "--seed",
        "12",
        "--near",
        db.to_str().unwrap(),
        "-o",
        q.to_str().unwrap(),
    ]);
    let out = common::irisc_ok(&[
        "run",
        program.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--query",
        q.to_str().unwrap(),
        "--check",
    ]);
    let got: Vec<serde_json::Value> = common::stdout_json(&out);
    let expected = plain_answers(&program, &db, &q);
    assert_eq!(got, expected);
    assert!(
        expected.iter().any(|v| v["match"] == true),
        "the generated queries should include near-duplicates of enrolled codes"
    );
}

/// The plaintext evaluator splits a large gallery among threads, each with its own rotation
/// cache: over 20 000 records, with matches planted at both ends and around every border the
/// split can have (multiples of 4 096), its ids equal the reference's, in gallery order.
#[test]
fn plaintext_answers_of_a_large_gallery_equal_the_reference() {
    use irisc_runtime::iris::IrisRecord;
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(77);
    let n = 20_000usize;
    let gallery: Vec<IrisRecord> = (0..n)
        .map(|i| IrisRecord {
            id: 1_000 + i as u64,
            iris: data::random_code(&mut rng, 256),
        })
        .collect();
    let planted = [
        0usize, 4_095, 4_096, 6_666, 6_667, 8_191, 8_192, 10_000, 16_384, 19_999,
    ];
    let queries: Vec<IrisRecord> = planted
        .iter()
        .enumerate()
        .map(|(k, &p)| IrisRecord {
            id: k as u64,
            iris: data::near(
                &mut rng,
                &gallery[p].iris,
                (k % 5) as i32 - 2,
                3,
                8,
                data::Edge::JustBelow,
            ),
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let (db, q) = (dir.path().join("db.ndjson"), dir.path().join("q.ndjson"));
    irisc::driver::synth::iris::write_records(&db, &gallery).unwrap();
    irisc::driver::synth::iris::write_records(&q, &queries).unwrap();
    let got = crate::reference::printed_ids(&plain_answers(&small_ids(), &db, &q));
    let want = crate::reference::matching_ids(&gallery, &queries, -2..=2, 3, 8);
    assert_eq!(got, want);
    for (k, &p) in planted.iter().enumerate() {
        assert!(
            got[k].contains(&(1_000 + p as u64)),
            "query {k} misses record {p}"
        );
    }
}
