//! Synthetic iris codes (`irisc gen --kind iris`) for demos and tests, deterministic from a seed.
//!
//! Gallery records have uniformly random code bits and masks with about 10% of bits cleared, in
//! pairs (bits 2j and 2j+1 of a cell: the two parts of one filter response are valid together).
//! A fraction of records are near-duplicates of earlier ones (a few code bits flipped, a fresh
//! mask, then a rotation in -15..=15), so a uniqueness check has something to find. Queries mix
//! near-duplicates of gallery records, fresh codes and edge cases around the threshold, the
//! rotation window and empty masks.

use std::path::Path;

use crate::driver::progress::progress;

use anyhow::{bail, Context, Result};
use irisc_runtime::io::ndjson::{self, NdjsonWriter};
use irisc_runtime::iris::{check_code_bits, IrisCode, IrisRecord, DEFAULT_CODE_BITS};
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// How synthetic gallery records are made.
#[derive(Debug, Clone, PartialEq)]
pub struct GenOptions {
    /// Probability that a mask bit pair is cleared (about this fraction of bits is masked out).
    pub mask_clear_fraction: f64,
    /// Fraction of records (after the first) that are near-duplicates of an earlier record.
    pub duplicate_fraction: f64,
    /// Near-duplicates flip a fraction of code bits drawn uniformly from this range.
    pub flip_fraction: (f64, f64),
    /// Near-duplicates are rotated by a shift drawn uniformly from `-max_rotation..=max_rotation`.
    pub max_rotation: i64,
}

impl Default for GenOptions {
    fn default() -> Self {
        GenOptions {
            mask_clear_fraction: 0.10,
            duplicate_fraction: 0.10,
            flip_fraction: (0.02, 0.12),
            max_rotation: 15,
        }
    }
}

impl GenOptions {
    fn check(&self) -> Result<()> {
        let unit = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                bail!("{name} must be between 0 and 1, not {v}")
            }
        };
        unit("mask_clear_fraction", self.mask_clear_fraction)?;
        unit("duplicate_fraction", self.duplicate_fraction)?;
        unit("flip_fraction (low)", self.flip_fraction.0)?;
        unit("flip_fraction (high)", self.flip_fraction.1)?;
        if self.flip_fraction.0 > self.flip_fraction.1 {
            bail!("flip_fraction's low end is above its high end");
        }
        if self.max_rotation < 0 {
            bail!("max_rotation must not be negative");
        }
        Ok(())
    }
}

/// `count` gallery records with ids `0..count`, a pure function of `seed` and the options.
pub fn generate(
    count: usize,
    seed: u64,
    code_bits: usize,
    opts: &GenOptions,
) -> Result<Vec<IrisRecord>> {
    check_code_bits(code_bits)?;
    opts.check()?;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let bar = progress(count, "generating");
    let mut out: Vec<IrisRecord> = Vec::with_capacity(count);
    for id in 0..count {
        let iris = if id > 0 && rng.random_bool(opts.duplicate_fraction) {
            let src = rng.random_range(0..id);
            let s = rng.random_range(-opts.max_rotation..=opts.max_rotation);
            near_duplicate(&mut rng, &out[src].iris, opts).rotate(s)
        } else {
            fresh_code(&mut rng, code_bits, opts.mask_clear_fraction)
        };
        out.push(IrisRecord {
            id: id as u64,
            iris,
        });
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(out)
}

/// Uniformly random code bits; a mask with each bit pair cleared with probability `clear`.
pub fn fresh_code(rng: &mut impl Rng, code_bits: usize, clear: f64) -> IrisCode {
    let mut code = vec![0u8; code_bits / 8];
    rng.fill_bytes(&mut code);
    IrisCode {
        code,
        mask: paired_mask(rng, code_bits, clear),
    }
}

fn paired_mask(rng: &mut impl Rng, code_bits: usize, clear: f64) -> Vec<u8> {
    let mut mask = vec![0xFFu8; code_bits / 8];
    for pair in 0..code_bits / 2 {
        if rng.random_bool(clear) {
            // Bits 2j and 2j+1 sit in the same byte: clear both at once.
            mask[pair / 4] &= !(0b11 << (2 * (pair % 4)));
        }
    }
    mask
}

/// A new capture of the same eye: some code bits flipped and a fresh mask (not yet rotated).
pub fn near_duplicate(rng: &mut impl Rng, src: &IrisCode, opts: &GenOptions) -> IrisCode {
    let bits = src.bits();
    let (lo, hi) = opts.flip_fraction;
    let fraction = if hi > lo {
        rng.random_range(lo..hi)
    } else {
        lo
    };
    let mut iris = IrisCode {
        code: src.code.clone(),
        mask: paired_mask(rng, bits, opts.mask_clear_fraction),
    };
    let flips = ((bits as f64) * fraction).round() as usize;
    for i in sample(rng, bits, flips.min(bits)) {
        let v = iris.code_bit(i);
        iris.set_code_bit(i, !v);
    }
    iris
}

/// What a generated query was made to test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryKind {
    /// Near-duplicate of gallery record `source`, rotated by `shift` (within the window).
    NearDuplicate { source: u64, shift: i64 },
    /// Fresh random code: should match nothing.
    Fresh,
    /// Every mask bit cleared: `ml = 0` never matches.
    AllMasked,
    /// Gallery record `source` with all code bits inverted under the same mask: `hd = ml`.
    Complement { source: u64 },
    /// Gallery record `source` with exactly enough valid bits flipped that `hd * den >= num * ml`
    /// and no fewer: the smallest distance that does not match at shift 0.
    AtThreshold { source: u64 },
    /// As `AtThreshold` with one flip fewer: the largest distance that still matches.
    BelowThreshold { source: u64 },
    /// Exact copy of gallery record `source` shifted by `shift`, at the edge of the window or
    /// one column outside it.
    RotationEdge { source: u64, shift: i64 },
}

/// How synthetic queries are made.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOptions {
    pub gen: GenOptions,
    /// Fraction of queries that are near-duplicates of gallery records.
    pub near_duplicate_fraction: f64,
    /// Fraction of queries that are edge cases (the rest are fresh codes).
    pub edge_fraction: f64,
    /// The matching ratio the threshold edge cases are built around (`num / den`).
    pub ratio: (u64, u64),
}

impl Default for QueryOptions {
    fn default() -> Self {
        QueryOptions {
            gen: GenOptions::default(),
            near_duplicate_fraction: 0.4,
            edge_fraction: 0.2,
            ratio: (3, 8),
        }
    }
}

/// `count` queries with ids `0..count` built against `gallery`, deterministic from `seed`.
pub fn generate_queries(
    gallery: &[IrisRecord],
    count: usize,
    seed: u64,
    opts: &QueryOptions,
) -> Result<Vec<IrisRecord>> {
    Ok(generate_labelled_queries(gallery, count, seed, opts)?
        .into_iter()
        .map(|(rec, _)| rec)
        .collect())
}

/// As [`generate_queries`], with what each query was made to test.
pub fn generate_labelled_queries(
    gallery: &[IrisRecord],
    count: usize,
    seed: u64,
    opts: &QueryOptions,
) -> Result<Vec<(IrisRecord, QueryKind)>> {
    opts.gen.check()?;
    let (near, edge) = (opts.near_duplicate_fraction, opts.edge_fraction);
    if !(0.0..=1.0).contains(&near) || !(0.0..=1.0).contains(&edge) || near + edge > 1.0 {
        bail!("near-duplicate and edge-case fractions must be in 0..=1 and sum to at most 1");
    }
    if opts.ratio.1 == 0 {
        bail!("the matching ratio's denominator must not be zero");
    }
    let code_bits = match gallery.first() {
        Some(r) => r.iris.bits(),
        None => DEFAULT_CODE_BITS,
    };
    check_code_bits(code_bits)?;
    if let Some(bad) = gallery.iter().find(|r| r.iris.bits() != code_bits) {
        bail!(
            "gallery record {} has {} bits but the first has {code_bits}",
            bad.id,
            bad.iris.bits()
        );
    }
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let bar = progress(count, "generating queries");
    let mut out = Vec::with_capacity(count);
    let mut edge_case = 0usize;
    for id in 0..count {
        let roll: f64 = rng.random();
        let (iris, kind) = if gallery.is_empty() || roll >= near + edge {
            let clear = opts.gen.mask_clear_fraction;
            (fresh_code(&mut rng, code_bits, clear), QueryKind::Fresh)
        } else if roll < near {
            let src = &gallery[rng.random_range(0..gallery.len())];
            let r = opts.gen.max_rotation;
            let shift = rng.random_range(-r..=r);
            let iris = near_duplicate(&mut rng, &src.iris, &opts.gen).rotate(-shift);
            let kind = QueryKind::NearDuplicate {
                source: src.id,
                shift,
            };
            (iris, kind)
        } else {
            // Cycle through the edge cases so that even a few queries cover all of them.
            edge_case += 1;
            edge_query(&mut rng, gallery, edge_case - 1, opts)
        };
        out.push((
            IrisRecord {
                id: id as u64,
                iris,
            },
            kind,
        ));
        bar.inc(1);
    }
    bar.finish_and_clear();
    Ok(out)
}

fn edge_query(
    rng: &mut impl Rng,
    gallery: &[IrisRecord],
    which: usize,
    opts: &QueryOptions,
) -> (IrisCode, QueryKind) {
    let src = &gallery[rng.random_range(0..gallery.len())];
    let source = src.id;
    let r = opts.gen.max_rotation;
    match which % 6 {
        0 => {
            let mut iris = src.iris.clone();
            iris.mask.iter_mut().for_each(|b| *b = 0);
            (iris, QueryKind::AllMasked)
        }
        1 => {
            let mut iris = src.iris.clone();
            iris.code.iter_mut().for_each(|b| *b = !*b);
            (iris, QueryKind::Complement { source })
        }
        2 => (
            flip_valid(rng, &src.iris, threshold_flips(&src.iris, opts.ratio)),
            QueryKind::AtThreshold { source },
        ),
        3 => {
            let flips = threshold_flips(&src.iris, opts.ratio).saturating_sub(1);
            let kind = if matches_with(flips, &src.iris, opts.ratio) {
                QueryKind::BelowThreshold { source }
            } else {
                // No valid bits at all: nothing can match, so this is an at-threshold case.
                QueryKind::AtThreshold { source }
            };
            (flip_valid(rng, &src.iris, flips), kind)
        }
        // rot(q, shift) must equal the source, so q = rot(src, -shift).
        4 => {
            let shift = if rng.random_bool(0.5) { r } else { -r };
            let kind = QueryKind::RotationEdge { source, shift };
            (src.iris.rotate(-shift), kind)
        }
        _ => {
            let shift = if rng.random_bool(0.5) {
                r + 1
            } else {
                -(r + 1)
            };
            let kind = QueryKind::RotationEdge { source, shift };
            (src.iris.rotate(-shift), kind)
        }
    }
}

fn valid_bits(iris: &IrisCode) -> Vec<usize> {
    (0..iris.bits()).filter(|&i| iris.mask_bit(i)).collect()
}

/// The least `h` with `h * den >= num * ml` against the record itself (same mask, so `ml` is
/// the record's valid-bit count), capped at `ml`.
fn threshold_flips(iris: &IrisCode, (num, den): (u64, u64)) -> usize {
    let ml = valid_bits(iris).len() as u128;
    let h = (u128::from(num) * ml).div_ceil(u128::from(den));
    h.min(ml) as usize
}

fn matches_with(flips: usize, iris: &IrisCode, (num, den): (u64, u64)) -> bool {
    let ml = valid_bits(iris).len() as u128;
    (flips as u128) * u128::from(den) < u128::from(num) * ml
}

fn flip_valid(rng: &mut impl Rng, iris: &IrisCode, flips: usize) -> IrisCode {
    let valid = valid_bits(iris);
    let mut out = iris.clone();
    for j in sample(rng, valid.len(), flips.min(valid.len())) {
        let i = valid[j];
        let v = out.code_bit(i);
        out.set_code_bit(i, !v);
    }
    out
}

/// `irisc gen --count N --seed S [--bits B] -o OUT`: writes a synthetic gallery.
pub fn write_gallery(out: &Path, count: usize, seed: u64, code_bits: usize) -> Result<()> {
    write_gallery_from(out, count, seed, code_bits, 0)
}

/// [`write_gallery`] with ids `first_id..first_id + count` (`irisc gen --first-id N`), so that
/// new records can be enrolled into a gallery that already holds ids below `first_id`.
pub fn write_gallery_from(
    out: &Path,
    count: usize,
    seed: u64,
    code_bits: usize,
    first_id: u64,
) -> Result<()> {
    let mut records = generate(count, seed, code_bits, &GenOptions::default())?;
    renumber(&mut records, first_id)?;
    write_records(out, &records)
}

/// Adds `first_id` to every id (the generators number from 0).
fn renumber(records: &mut [IrisRecord], first_id: u64) -> Result<()> {
    let count = records.len();
    for r in records.iter_mut() {
        r.id = r.id.checked_add(first_id).ok_or_else(|| {
            anyhow::anyhow!("--first-id {first_id}: {count} ids from it pass 2^64 - 1")
        })?;
    }
    Ok(())
}

/// `irisc gen --queries Q --from-db DB --seed S -o OUT`: writes queries against a gallery file.
pub fn write_queries(out: &Path, from_db: &Path, count: usize, seed: u64) -> Result<()> {
    write_queries_with(out, from_db, count, seed, &QueryOptions::default())
}

/// [`write_queries`] with explicit options (e.g. the ratio the edge cases sit at).
pub fn write_queries_with(
    out: &Path,
    from_db: &Path,
    count: usize,
    seed: u64,
    opts: &QueryOptions,
) -> Result<()> {
    write_queries_from(out, from_db, count, seed, opts, 0)
}

/// [`write_queries_with`] with query ids from `first_id`. Each line also says which gallery
/// record the query was made from (`"near": ID`, absent for fresh codes) and what it tests
/// (`"case"`); readers of the NDJSON format ignore both fields.
pub fn write_queries_from(
    out: &Path,
    from_db: &Path,
    count: usize,
    seed: u64,
    opts: &QueryOptions,
    first_id: u64,
) -> Result<()> {
    let gallery =
        crate::driver::dealer::ids::naming_repeated_ids(from_db, ndjson::read_file(from_db))?;
    let labelled = generate_labelled_queries(&gallery, count, seed, opts)?;
    let (mut queries, kinds): (Vec<IrisRecord>, Vec<QueryKind>) = labelled.into_iter().unzip();
    renumber(&mut queries, first_id)?;
    write_labelled(out, &queries, &kinds)
}

impl QueryKind {
    /// The gallery record the query was made from, if any.
    pub fn source(&self) -> Option<u64> {
        match *self {
            QueryKind::NearDuplicate { source, .. }
            | QueryKind::Complement { source }
            | QueryKind::AtThreshold { source }
            | QueryKind::BelowThreshold { source }
            | QueryKind::RotationEdge { source, .. } => Some(source),
            QueryKind::Fresh | QueryKind::AllMasked => None,
        }
    }

    /// A short name of what the query tests, as `irisc gen --near` writes it.
    pub fn name(&self) -> &'static str {
        match self {
            QueryKind::NearDuplicate { .. } => "near-duplicate",
            QueryKind::Fresh => "fresh",
            QueryKind::AllMasked => "all-masked",
            QueryKind::Complement { .. } => "complement",
            QueryKind::AtThreshold { .. } => "at-threshold",
            QueryKind::BelowThreshold { .. } => "below-threshold",
            QueryKind::RotationEdge { .. } => "rotation-edge",
        }
    }
}

/// Writes queries as NDJSON with each one's `"near"` gallery id and `"case"` appended to its
/// line (the record itself is written by [`NdjsonWriter`]; the generator made the ids distinct
/// and the codes of one length).
fn write_labelled(out: &Path, records: &[IrisRecord], kinds: &[QueryKind]) -> Result<()> {
    use std::io::Write;
    let file =
        std::fs::File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut file = std::io::BufWriter::new(file);
    let bar = progress(records.len(), "writing");
    for (rec, kind) in records.iter().zip(kinds) {
        let mut line = Vec::new();
        NdjsonWriter::new(&mut line)
            .write(rec)
            .with_context(|| format!("cannot write {}", out.display()))?;
        // The writer ends each record with `}\n`: reopen the object for the two fields.
        line.truncate(line.len().saturating_sub(2));
        if let Some(source) = kind.source() {
            write!(line, ", \"near\": {source}")?;
        }
        writeln!(line, ", \"case\": \"{}\"}}", kind.name())?;
        file.write_all(&line)
            .with_context(|| format!("cannot write {}", out.display()))?;
        bar.inc(1);
    }
    file.flush()
        .with_context(|| format!("cannot write {}", out.display()))?;
    bar.finish_and_clear();
    Ok(())
}

/// Writes `records` to `out` as NDJSON, one record a line.
pub fn write_records(out: &Path, records: &[IrisRecord]) -> Result<()> {
    let file =
        std::fs::File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut w = NdjsonWriter::new(std::io::BufWriter::new(file));
    let bar = progress(records.len(), "writing");
    for rec in records {
        w.write(rec)
            .with_context(|| format!("cannot write {}", out.display()))?;
        bar.inc(1);
    }
    w.finish()
        .with_context(|| format!("cannot write {}", out.display()))?;
    bar.finish_and_clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use irisc_runtime::iris::{fhd_match, matches_any_rotation, plain_unique};

    const BITS: usize = DEFAULT_CODE_BITS;
    const RATIO: (u64, u64) = (3, 8);

    #[test]
    fn deterministic_from_the_seed() {
        let a = generate(30, 7, BITS, &GenOptions::default()).unwrap();
        let b = generate(30, 7, BITS, &GenOptions::default()).unwrap();
        let c = generate(30, 8, BITS, &GenOptions::default()).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(
            a.iter().map(|r| r.id).collect::<Vec<_>>(),
            (0..30).collect::<Vec<_>>()
        );
    }

    #[test]
    fn masks_clear_about_ten_percent_in_pairs() {
        let recs = generate(20, 1, BITS, &GenOptions::default()).unwrap();
        let (mut cleared, mut total) = (0usize, 0usize);
        for r in &recs {
            assert_eq!(r.iris.code.len(), BITS / 8);
            for j in 0..BITS / 2 {
                // Rotation moves whole cells, so pairs stay pairs in near-duplicates too.
                assert_eq!(r.iris.mask_bit(2 * j), r.iris.mask_bit(2 * j + 1));
            }
            cleared += BITS
                - r.iris
                    .mask
                    .iter()
                    .map(|b| b.count_ones() as usize)
                    .sum::<usize>();
            total += BITS;
        }
        let fraction = cleared as f64 / total as f64;
        assert!((0.08..0.12).contains(&fraction), "{fraction}");
    }

    #[test]
    fn near_duplicates_match_their_source_and_fresh_codes_do_not() {
        let opts = GenOptions {
            duplicate_fraction: 0.5,
            ..GenOptions::default()
        };
        let recs = generate(12, 3, BITS, &opts).unwrap();
        // Without rotation, record pairs match only if one is a near-duplicate of the other (or
        // of a common ancestor); count matches under rotation instead of guessing lineage.
        let mut matched = 0;
        for (i, a) in recs.iter().enumerate() {
            for b in &recs[..i] {
                if matches_any_rotation(&a.iris, &b.iris, RATIO.0, RATIO.1, -15, 15) {
                    matched += 1;
                }
            }
        }
        assert!(matched > 0, "no near-duplicates matched");
        // Two independent fresh codes never match at 3/8 (their distance is about 1/2).
        let mut rng = ChaCha20Rng::seed_from_u64(99);
        let x = fresh_code(&mut rng, BITS, 0.1);
        let y = fresh_code(&mut rng, BITS, 0.1);
        assert!(!matches_any_rotation(&x, &y, RATIO.0, RATIO.1, -15, 15));
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(generate(1, 0, 100, &GenOptions::default()).is_err());
        let bad = GenOptions {
            mask_clear_fraction: 1.5,
            ..GenOptions::default()
        };
        assert!(generate(1, 0, BITS, &bad).is_err());
        let bad = QueryOptions {
            near_duplicate_fraction: 0.9,
            edge_fraction: 0.2,
            ..QueryOptions::default()
        };
        assert!(generate_queries(&[], 1, 0, &bad).is_err());
    }

    #[test]
    fn queries_do_what_their_kind_says() {
        let gallery = generate(40, 11, BITS, &GenOptions::default()).unwrap();
        let opts = QueryOptions::default();
        let queries = generate_labelled_queries(&gallery, 60, 5, &opts).unwrap();
        assert_eq!(
            queries,
            generate_labelled_queries(&gallery, 60, 5, &opts).unwrap()
        );
        let by_id = |id: u64| &gallery[id as usize].iris;
        let mut seen = std::collections::HashSet::new();
        for (q, kind) in &queries {
            seen.insert(std::mem::discriminant(kind));
            match *kind {
                QueryKind::NearDuplicate { source, shift } => {
                    assert!(matches_any_rotation(
                        &q.iris,
                        by_id(source),
                        3,
                        8,
                        shift,
                        shift
                    ))
                }
                QueryKind::AllMasked => {
                    assert!(q.iris.mask.iter().all(|&b| b == 0));
                    assert!(gallery.iter().all(|g| !fhd_match(&q.iris, &g.iris, 3, 8)));
                }
                QueryKind::Complement { source } => {
                    assert!(!fhd_match(&q.iris, by_id(source), 3, 8))
                }
                QueryKind::AtThreshold { source } => {
                    assert!(!fhd_match(&q.iris, by_id(source), 3, 8))
                }
                QueryKind::BelowThreshold { source } => {
                    assert!(fhd_match(&q.iris, by_id(source), 3, 8))
                }
                QueryKind::RotationEdge { source, shift } => {
                    let inside = shift.abs() <= 15;
                    let hit = matches_any_rotation(&q.iris, by_id(source), 3, 8, -15, 15);
                    assert_eq!(hit, inside, "shift {shift}");
                }
                QueryKind::Fresh => {}
            }
        }
        // 60 queries with 20% edge cases cover all kinds.
        assert!(seen.len() >= 6, "only {} kinds", seen.len());
        // The threshold cases sit exactly at the boundary: one flip fewer would match.
        for (q, kind) in &queries {
            if let QueryKind::AtThreshold { source } = kind {
                let d = by_id(*source);
                let ml = d.mask.iter().map(|m| m.count_ones() as u64).sum::<u64>();
                let hd = (q.iris.code.iter().zip(&d.code).zip(&d.mask))
                    .map(|((a, b), m)| ((a ^ b) & m).count_ones() as u64)
                    .sum::<u64>();
                assert!(ml > 0 && hd * 8 >= 3 * ml && (hd - 1) * 8 < 3 * ml);
            }
        }
        // plain_unique agrees with the labels for near-duplicates.
        let results = plain_unique(
            &queries.iter().map(|(r, _)| r.clone()).collect::<Vec<_>>(),
            &gallery,
            3,
            8,
            -15,
            15,
        );
        for ((_, kind), (hit, ids)) in queries.iter().zip(&results) {
            if let QueryKind::NearDuplicate { source, .. } = kind {
                assert!(*hit && ids.contains(source));
            }
            if let QueryKind::AllMasked = kind {
                assert!(!hit);
            }
        }
    }

    #[test]
    fn queries_without_a_gallery_are_fresh() {
        let q = generate_labelled_queries(&[], 5, 1, &QueryOptions::default()).unwrap();
        assert!(q
            .iter()
            .all(|(r, k)| *k == QueryKind::Fresh && r.iris.bits() == BITS));
    }

    #[test]
    fn files_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db.ndjson");
        let q = dir.path().join("q.ndjson");
        write_gallery(&db, 25, 4, 6400).unwrap();
        write_queries(&q, &db, 10, 4).unwrap();
        let gallery = ndjson::read_file(&db).unwrap();
        assert_eq!(
            gallery,
            generate(25, 4, 6400, &GenOptions::default()).unwrap()
        );
        let queries = ndjson::read_file(&q).unwrap();
        assert_eq!(queries.len(), 10);
        assert!(queries.iter().all(|r| r.iris.bits() == 6400));
    }
}
