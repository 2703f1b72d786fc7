//! The plaintext definition of a program's answers (Algorithm 1 with rotations), computed in the
//! clear from NDJSON files: the oracle that `irisc run --check` and the tests compare against.

use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use irisc_runtime::io::ndjson;
use irisc_runtime::iris;

use crate::sema::{Program, RevealShape};

/// One JSON answer per (reveal, query), in the order the output party prints them.
pub fn answers(program: &Program, db: &Path, query: &Path) -> Result<Vec<Value>> {
    let gallery = ndjson::read_file(db).with_context(|| format!("reading {}", db.display()))?;
    let queries =
        ndjson::read_file(query).with_context(|| format!("reading {}", query.display()))?;
    let mut out = Vec::new();
    for (qi, q) in queries.iter().enumerate() {
        for reveal in &program.reveals {
            let d = &reveal.decision;
            let ids: Vec<u64> = gallery
                .iter()
                .filter(|g| {
                    iris::matches_any_rotation(
                        &q.iris,
                        &g.iris,
                        d.ratio.num,
                        d.ratio.den,
                        d.rot_lo as i64,
                        d.rot_hi as i64,
                    )
                })
                .map(|g| g.id)
                .collect();
            out.push(match reveal.shape {
                RevealShape::AnyBit => json!({ "query": qi, "match": !ids.is_empty() }),
                RevealShape::MatchingIds => {
                    json!({ "query": qi, "match": !ids.is_empty(), "ids": ids })
                }
            });
        }
    }
    Ok(out)
}
