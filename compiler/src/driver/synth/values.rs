//! `irisc gen --kind embedding | bit`: synthetic speaker embeddings and secret bits,
//! deterministic from seeds.
//!
//! Embeddings: speaker s has a direction u_s, a uniform unit vector drawn from a generator
//! seeded by (`voices`, s) only, so that the same speaker has the same direction in every file
//! made with the same `--voices` (default 7). Utterance j of speaker s is
//! `normalise(u_s + noise * g)`, with g Gaussian of per-component variance 1/dim (so |g| ≈ 1)
//! drawn from `--seed`: its components lie in [-1, 1] and two utterances of one speaker have
//! cosine about 1 / (1 + noise²), while two speakers' are near 0 (±3/sqrt(dim)).
//!
//! Ids encode the speaker: `id = speaker * 1000 + utterance` (utterances 0..1000), so a pair
//! (query, record) is genuine iff `query_id / 1000 == record_id / 1000` and FAR/FRR can be
//! computed from the revealed ids. A gallery `--speakers 100 --per-speaker 2 --seed 1` and
//! queries `--speakers 120 --per-speaker 1 --seed 2` give 100 genuine speakers (same
//! directions, fresh noise) and 20 impostors (speakers 100..119, never enrolled).
//!
//! Bits: `--count N` uniform bits with ids 0..N from `--seed`.

use anyhow::{bail, Result};
use irisc_runtime::io::ndjson_values::{BitRecord, EmbeddingRecord};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

/// Utterances per speaker are numbered below this (the id's low part).
pub const UTTERANCES_PER_ID_BLOCK: u64 = 1000;

#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingOptions {
    pub speakers: usize,
    pub per_speaker: usize,
    pub dim: usize,
    pub noise: f64,
    pub seed: u64,
    /// Seeds the speakers' directions (the same across gallery and query files).
    pub voices: u64,
}

impl Default for EmbeddingOptions {
    fn default() -> Self {
        EmbeddingOptions {
            speakers: 10,
            per_speaker: 2,
            dim: 192,
            noise: 0.5,
            seed: 1,
            voices: 7,
        }
    }
}

/// A standard normal sample (Box-Muller).
fn gaussian(rng: &mut impl Rng) -> f64 {
    let u1: f64 = 1.0 - rng.random::<f64>(); // (0, 1]
    let u2: f64 = rng.random();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

fn normalise(v: &mut [f64]) {
    let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n > 0.0 {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Speaker `s`'s unit direction for the voice seed `voices`.
pub fn direction(voices: u64, speaker: u64, dim: usize) -> Vec<f64> {
    let mut rng = ChaCha20Rng::seed_from_u64(voices ^ speaker.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut v: Vec<f64> = (0..dim).map(|_| gaussian(&mut rng)).collect();
    normalise(&mut v);
    v
}

/// `speakers x per_speaker` embeddings, speaker-major, ids `speaker * 1000 + utterance`.
pub fn generate_embeddings(o: &EmbeddingOptions) -> Result<Vec<EmbeddingRecord>> {
    if o.dim == 0 {
        bail!("--dim must be at least 1");
    }
    if o.per_speaker as u64 > UTTERANCES_PER_ID_BLOCK {
        bail!("--per-speaker must be at most {UTTERANCES_PER_ID_BLOCK} (ids are speaker * 1000 + utterance)");
    }
    if !(o.noise.is_finite() && o.noise >= 0.0) {
        bail!("--noise must be a non-negative number");
    }
    let mut rng = ChaCha20Rng::seed_from_u64(o.seed);
    let sd = 1.0 / (o.dim as f64).sqrt();
    let mut out = Vec::with_capacity(o.speakers * o.per_speaker);
    for s in 0..o.speakers as u64 {
        let u = direction(o.voices, s, o.dim);
        for j in 0..o.per_speaker as u64 {
            let mut v: Vec<f64> = u
                .iter()
                .map(|&x| x + o.noise * sd * gaussian(&mut rng))
                .collect();
            normalise(&mut v);
            out.push(EmbeddingRecord {
                id: s * UTTERANCES_PER_ID_BLOCK + j,
                embedding: v,
            });
        }
    }
    Ok(out)
}

/// `count` uniform bits, ids `0..count`.
pub fn generate_bits(count: usize, seed: u64) -> Vec<BitRecord> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..count as u64)
        .map(|id| BitRecord {
            id,
            bit: rng.random_bool(0.5),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &[f64], b: &[f64]) -> f64 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn speakers_are_separable_and_ids_encode_them() {
        let g = generate_embeddings(&EmbeddingOptions {
            speakers: 6,
            per_speaker: 3,
            seed: 1,
            ..Default::default()
        })
        .unwrap();
        let q = generate_embeddings(&EmbeddingOptions {
            speakers: 8,
            per_speaker: 1,
            seed: 2,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(g.len(), 18);
        assert_eq!(g[4].id, 1001);
        for r in g.iter().chain(&q) {
            assert_eq!(r.embedding.len(), 192);
            assert!(r.embedding.iter().all(|x| (-1.0..=1.0).contains(x)));
            assert!((cos(&r.embedding, &r.embedding) - 1.0).abs() < 1e-9);
        }
        // Genuine pairs (same speaker across files) are far more similar than impostor pairs.
        for a in &q {
            for b in &g {
                let c = cos(&a.embedding, &b.embedding);
                if a.id / 1000 == b.id / 1000 {
                    assert!(c > 0.6, "genuine {} {}: {c}", a.id, b.id);
                } else {
                    assert!(c < 0.4, "impostor {} {}: {c}", a.id, b.id);
                }
            }
        }
        // Deterministic from the seeds.
        let again = generate_embeddings(&EmbeddingOptions {
            speakers: 6,
            per_speaker: 3,
            seed: 1,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(again, g);
        assert!(generate_embeddings(&EmbeddingOptions {
            per_speaker: 1001,
            ..Default::default()
        })
        .is_err());
        assert!(generate_embeddings(&EmbeddingOptions {
            dim: 0,
            ..Default::default()
        })
        .is_err());
    }

    #[test]
    fn bits_are_random_and_seeded() {
        let b = generate_bits(200, 3);
        let ones = b.iter().filter(|r| r.bit).count();
        assert!((60..140).contains(&ones), "{ones}");
        assert_eq!(b[7].id, 7);
        assert_eq!(generate_bits(200, 3), b);
        assert_ne!(generate_bits(200, 4), b);
    }
}
