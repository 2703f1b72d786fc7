//! Record ids as the dealer reports them: every repeated or already enrolled id is counted and
//! the first few are named, so that a user fixes all of them at once instead of one per run.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

use anyhow::{Context, Result};
use irisc_runtime::io::ndjson::NdjsonError;

/// How many ids a message names before it says "and N more".
const NAMED: usize = 5;

/// `"record id 7"`, or `"6 record ids (0, 1, 2, 3, 4 and 1 more)"`.
pub fn some_ids(ids: &[u64], singular: &str, plural: &str) -> String {
    match ids {
        [one] => format!("{singular} {one}"),
        _ => {
            let named: Vec<String> = ids.iter().take(NAMED).map(u64::to_string).collect();
            let rest = ids.len().saturating_sub(NAMED);
            let list = if rest > 0 {
                format!("{} and {rest} more", named.join(", "))
            } else {
                match named.split_last() {
                    Some((last, first)) if !first.is_empty() => {
                        format!("{} and {last}", first.join(", "))
                    }
                    _ => named.join(""),
                }
            };
            format!("{} {plural} ({list})", ids.len())
        }
    }
}

/// Every id that appears on more than one line of the NDJSON file `path`, as a message that
/// counts them and names the first few with their lines; `None` when all ids are distinct.
/// Lines without a readable numeric `id` are skipped (the record reader reports those).
pub fn repeated_ids(path: &Path) -> Result<Option<String>> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: u64,
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    // Per id: the lines it is on, in order.
    let mut lines: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut order = Vec::new();
    for (i, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        let Ok(rec) = serde_json::from_str::<IdOnly>(&line) else {
            continue;
        };
        let at = lines.entry(rec.id).or_default();
        if at.len() == 1 {
            order.push(rec.id);
        }
        at.push(i + 1);
    }
    if order.is_empty() {
        return Ok(None);
    }
    let extra: usize = order.iter().map(|id| lines[id].len() - 1).sum();
    let named: Vec<String> = order
        .iter()
        .take(NAMED)
        .map(|id| {
            let at: Vec<String> = lines[id].iter().map(usize::to_string).collect();
            format!("{id} (lines {})", at.join(", "))
        })
        .collect();
    let more = match order.len().saturating_sub(NAMED) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    let ids = if order.len() == 1 { "id" } else { "ids" };
    Ok(Some(format!(
        "{}: {} {ids} appear on more than one line ({extra} repeated records): {}{more}; every record needs its own id",
        path.display(),
        order.len(),
        named.join(", ")
    )))
}

/// `read`'s records, or its error; a repeated id (the NDJSON reader stops at the first) becomes
/// a message that counts and names every repeated id of the file `path`.
pub fn naming_repeated_ids<T>(path: &Path, read: Result<T, NdjsonError>) -> Result<T> {
    let e = match read {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    let repeated = match &e {
        NdjsonError::InFile { cause, .. } => matches!(**cause, NdjsonError::DuplicateId { .. }),
        NdjsonError::DuplicateId { .. } => true,
        _ => false,
    };
    if repeated {
        if let Some(all) = repeated_ids(path)? {
            anyhow::bail!(all);
        }
    }
    Err(e.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_ids_names_the_first_few_and_counts_the_rest() {
        assert_eq!(some_ids(&[7], "id", "ids"), "id 7");
        assert_eq!(some_ids(&[1, 2], "id", "ids"), "2 ids (1 and 2)");
        assert_eq!(
            some_ids(&[1, 2, 3, 4, 5, 6, 7], "id", "ids"),
            "7 ids (1, 2, 3, 4, 5 and 2 more)"
        );
    }

    #[test]
    fn every_repeated_id_is_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.ndjson");
        let ids = [1u64, 2, 1, 3, 2, 1, 4, 5, 6, 7, 8, 9, 5, 6, 7, 8, 9];
        let text: String = ids
            .iter()
            .map(|id| format!("{{\"id\": {id}, \"code\": \"AA==\", \"mask\": \"AA==\"}}\n"))
            .collect();
        std::fs::write(&path, text).unwrap();
        let msg = repeated_ids(&path).unwrap().unwrap();
        assert!(
            msg.contains("7 ids appear on more than one line (8 repeated records): 1 (lines 1, 3, 6), 2 (lines 2, 5), 5 (lines 8, 13), 6 (lines 9, 14), 7 (lines 10, 15) and 2 more"),
            "{msg}"
        );
        std::fs::write(&path, "{\"id\": 1}\n{\"id\": 2}\n").unwrap();
        assert_eq!(repeated_ids(&path).unwrap(), None);
    }
}
