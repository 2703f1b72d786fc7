//! Plaintext NDJSON of the non-iris input kinds, one JSON object a line:
//!
//! - embeddings: `{"id": <u64>, "embedding": [<f64>, ...]}`, the same dimension on every line;
//! - bits: `{"id": <u64>, "bit": <bool>}`.
//!
//! Errors name the line and the field; they never quote values (biometric data). Blank lines
//! are skipped; ids must be distinct.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::Path;

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct EmbeddingRecord {
    pub id: u64,
    pub embedding: Vec<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BitRecord {
    pub id: u64,
    pub bit: bool,
}

/// Fixed point as the language defines it: round(v * 2^scale), clamped to [-2^scale, 2^scale]
/// (so a unit vector's components stay within one unit).
pub fn quantise(v: f64, scale_bits: u32) -> i64 {
    let one = (1i64 << scale_bits.min(62)) as f64;
    (v * one).round().clamp(-one, one) as i64
}

fn parse_lines<T>(
    path: &Path,
    mut parse: impl FnMut(usize, &serde_json::Map<String, Value>) -> Result<(u64, T), String>,
) -> Result<Vec<T>, String> {
    let file = File::open(path).map_err(|e| format!("{}: cannot open: {e}", path.display()))?;
    let mut out = Vec::new();
    let mut seen: HashMap<u64, usize> = HashMap::new();
    for (i, line) in BufReader::new(file).lines().enumerate() {
        let n = i + 1;
        let at = |m: String| format!("{}: line {n}: {m}", path.display());
        let line = line.map_err(|e| at(format!("cannot read: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(&line).map_err(|e| at(format!("not valid JSON: {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| at("expected a JSON object".into()))?;
        let (id, rec) = parse(n, obj).map_err(at)?;
        if let Some(first) = seen.insert(id, n) {
            return Err(at(format!("id {id} is already used on line {first}")));
        }
        out.push(rec);
    }
    Ok(out)
}

fn id_of(obj: &serde_json::Map<String, Value>) -> Result<u64, String> {
    obj.get("id")
        .ok_or("id is missing")?
        .as_u64()
        .ok_or_else(|| "id must be an unsigned 64-bit integer".to_string())
}

/// Reads an embedding file; `dim`, if given, is the dimension every line must have.
pub fn read_embeddings(path: &Path, dim: Option<usize>) -> Result<Vec<EmbeddingRecord>, String> {
    let mut first: Option<(usize, usize)> = None;
    parse_lines(path, |line, obj| {
        let id = id_of(obj)?;
        let arr = obj
            .get("embedding")
            .ok_or("embedding is missing")?
            .as_array()
            .ok_or("embedding must be an array of numbers")?;
        let embedding = arr
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_f64()
                    .ok_or_else(|| format!("embedding element {i} is not a number"))
            })
            .collect::<Result<Vec<f64>, String>>()?;
        if let Some(d) = dim {
            if embedding.len() != d {
                return Err(format!(
                    "embedding has {} elements, but the program's input has dimension {d}",
                    embedding.len()
                ));
            }
        }
        match first {
            Some((l, d)) if d != embedding.len() => {
                return Err(format!(
                    "embedding has {} elements, expected {d} like line {l}",
                    embedding.len()
                ))
            }
            None if embedding.is_empty() => return Err("embedding is empty".into()),
            None => first = Some((line, embedding.len())),
            _ => {}
        }
        Ok((id, EmbeddingRecord { id, embedding }))
    })
}

pub fn read_bits(path: &Path) -> Result<Vec<BitRecord>, String> {
    parse_lines(path, |_, obj| {
        let id = id_of(obj)?;
        let bit = obj
            .get("bit")
            .ok_or("bit is missing")?
            .as_bool()
            .ok_or("bit must be true or false")?;
        Ok((id, BitRecord { id, bit }))
    })
}

fn write_lines(path: &Path, lines: impl Iterator<Item = String>) -> Result<(), String> {
    let err = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    let mut out = BufWriter::new(File::create(path).map_err(err)?);
    for l in lines {
        writeln!(out, "{l}").map_err(err)?;
    }
    out.flush().map_err(err)
}

pub fn write_embeddings(path: &Path, records: &[EmbeddingRecord]) -> Result<(), String> {
    write_lines(
        path,
        records.iter().map(|r| {
            let values = serde_json::to_string(&r.embedding).unwrap_or_else(|_| "[]".into());
            format!("{{\"id\": {}, \"embedding\": {values}}}", r.id)
        }),
    )
}

pub fn write_bits(path: &Path, records: &[BitRecord]) -> Result<(), String> {
    write_lines(
        path,
        records
            .iter()
            .map(|r| format!("{{\"id\": {}, \"bit\": {}}}", r.id, r.bit)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_errors() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("e.ndjson");
        let recs = vec![
            EmbeddingRecord {
                id: 1,
                embedding: vec![0.5, -0.25, 1.0],
            },
            EmbeddingRecord {
                id: 2000,
                embedding: vec![0.0, 0.125, -1.0],
            },
        ];
        write_embeddings(&p, &recs).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(
            text.starts_with("{\"id\": 1, \"embedding\": [0.5,-0.25,1.0]}\n"),
            "{text}"
        );
        assert_eq!(read_embeddings(&p, Some(3)).unwrap(), recs);
        let e = read_embeddings(&p, Some(192)).unwrap_err();
        assert!(
            e.ends_with(
                "line 1: embedding has 3 elements, but the program's input has dimension 192"
            ),
            "{e}"
        );
        std::fs::write(
            &p,
            "{\"id\":1,\"embedding\":[1,2]}\n\n{\"id\":2,\"embedding\":[1]}\n",
        )
        .unwrap();
        let e = read_embeddings(&p, None).unwrap_err();
        assert!(
            e.ends_with("line 3: embedding has 1 elements, expected 2 like line 1"),
            "{e}"
        );
        std::fs::write(&p, "{\"id\":1,\"embedding\":[1,\"x\"]}\n").unwrap();
        assert!(read_embeddings(&p, None)
            .unwrap_err()
            .contains("element 1 is not a number"));
        let b = dir.path().join("b.ndjson");
        let bits = vec![
            BitRecord { id: 0, bit: true },
            BitRecord { id: 1, bit: false },
        ];
        write_bits(&b, &bits).unwrap();
        assert_eq!(
            std::fs::read_to_string(&b).unwrap(),
            "{\"id\": 0, \"bit\": true}\n{\"id\": 1, \"bit\": false}\n"
        );
        assert_eq!(read_bits(&b).unwrap(), bits);
        std::fs::write(&b, "{\"id\":1,\"bit\":1}\n").unwrap();
        assert!(read_bits(&b)
            .unwrap_err()
            .ends_with("line 1: bit must be true or false"));
        std::fs::write(&b, "{\"id\":1,\"bit\":true}\n{\"id\":1,\"bit\":true}\n").unwrap();
        assert!(read_bits(&b)
            .unwrap_err()
            .ends_with("line 2: id 1 is already used on line 1"));
    }

    #[test]
    fn quantisation_rounds_and_clamps() {
        assert_eq!(quantise(0.5, 8), 128);
        assert_eq!(quantise(-0.5, 8), -128);
        assert_eq!(quantise(0.00195, 8), 0);
        assert_eq!(quantise(0.002, 8), 1);
        assert_eq!(quantise(1.7, 8), 256);
        assert_eq!(quantise(-3.0, 8), -256);
        assert_eq!(quantise(1.0, 0), 1);
    }
}
