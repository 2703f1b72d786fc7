//! Synthetic inputs for demos, tests and benchmarks (`irisc gen`), deterministic from seeds:
//! - [`iris`]: iris code galleries (with near-duplicates) and queries near a gallery;
//! - [`values`]: speaker embeddings and secret bits.

pub mod iris;
pub mod values;

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Result};
use clap::ValueEnum;

/// What `irisc gen` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    Iris,
    Embedding,
    Bit,
}

/// One `irisc gen` request (its options as the command line gives them).
#[derive(Debug, Clone)]
pub struct GenRequest {
    pub kind: Kind,
    /// Records (iris, bit).
    pub count: Option<usize>,
    pub seed: u64,
    /// Bits per iris code.
    pub bits: u32,
    /// Make queries near this gallery instead of a gallery.
    pub near: Option<PathBuf>,
    /// The match ratio the queries' threshold edge cases sit at (with `near`), as written.
    pub ratio: String,
    pub speakers: Option<usize>,
    pub per_speaker: usize,
    pub dim: usize,
    pub noise: f64,
    pub voices: u64,
    /// The first id (iris): ids are `first_id..first_id + count`.
    pub first_id: u64,
    pub output: PathBuf,
}

/// Generates what `req` asks for into `req.output` (NDJSON) and says what it wrote.
pub fn generate(req: &GenRequest) -> Result<ExitCode> {
    let kind = req.kind;
    let need_count = || {
        req.count
            .ok_or_else(|| anyhow::anyhow!("--count is required for --kind {kind:?}"))
    };
    let output = &req.output;
    if req.first_id != 0 && kind != Kind::Iris {
        let name = format!("{kind:?}").to_lowercase();
        bail!("--first-id numbers iris codes; --kind {name} has its own ids");
    }
    let written = match kind {
        Kind::Iris => {
            let count = need_count()?;
            match &req.near {
                Some(db) => {
                    let Some(r) = crate::sema::consts::parse_decimal(&req.ratio) else {
                        bail!(
                            "--ratio {:?} is not a decimal ratio such as 0.345",
                            req.ratio
                        );
                    };
                    let opts = iris::QueryOptions {
                        ratio: (r.num, r.den),
                        ..Default::default()
                    };
                    iris::write_queries_from(output, db, count, req.seed, &opts, req.first_id)?
                }
                None => iris::write_gallery_from(
                    output,
                    count,
                    req.seed,
                    req.bits as usize,
                    req.first_id,
                )?,
            }
            match count.checked_sub(1) {
                Some(last) if req.first_id != 0 || req.near.is_none() => format!(
                    "{count} codes (ids {} to {})",
                    req.first_id,
                    req.first_id.saturating_add(last as u64)
                ),
                _ => format!("{count} codes"),
            }
        }
        Kind::Embedding => {
            let Some(speakers) = req.speakers else {
                bail!("--kind embedding needs --speakers S (and --per-speaker N)");
            };
            let opts = values::EmbeddingOptions {
                speakers,
                per_speaker: req.per_speaker,
                dim: req.dim,
                noise: req.noise,
                seed: req.seed,
                voices: req.voices,
            };
            let recs = values::generate_embeddings(&opts)?;
            irisc_runtime::io::ndjson_values::write_embeddings(output, &recs)
                .map_err(anyhow::Error::msg)?;
            format!("{} embeddings", recs.len())
        }
        Kind::Bit => {
            let recs = values::generate_bits(need_count()?, req.seed);
            irisc_runtime::io::ndjson_values::write_bits(output, &recs)
                .map_err(anyhow::Error::msg)?;
            format!("{} bits", recs.len())
        }
    };
    eprintln!("wrote {written} to {}", output.display());
    Ok(ExitCode::SUCCESS)
}
