//! The plaintext iris-code format: one JSON object a line,
//! `{"id": <u64>, "code": "<base64>", "mask": "<base64>"}`, code and mask of `bits / 8` bytes each
//! and the same length on every line of a file (ARCHITECTURE.md section 7).
//!
//! Errors name the line and the field, so a user can fix the file by hand. Messages never quote
//! code or mask contents: they are biometric data.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use serde_json::Value;

use crate::iris::{check_code_bits, IrisCode, IrisRecord};

/// What is wrong with an NDJSON iris file.
#[derive(Debug, thiserror::Error)]
pub enum NdjsonError {
    // The causes are part of each message and deliberately not `#[source]`s: an error chain
    // printer (`{:#}`) would otherwise repeat them ("cannot open: X: X").
    #[error("{path}: {cause}")]
    InFile {
        path: PathBuf,
        cause: Box<NdjsonError>,
    },
    #[error("cannot {action}: {cause}")]
    Open {
        action: &'static str,
        cause: io::Error,
    },
    #[error("line {line}: cannot read: {cause}")]
    Io { line: usize, cause: io::Error },
    #[error("line {line}: not valid JSON: {detail}")]
    Json { line: usize, detail: String },
    #[error("line {line}: expected a JSON object with \"id\", \"code\" and \"mask\"")]
    NotObject { line: usize },
    #[error("line {line}: {field} is missing")]
    Missing { line: usize, field: &'static str },
    #[error("line {line}: id must be an unsigned 64-bit integer, found {found}")]
    BadId { line: usize, found: String },
    #[error("line {line}: {field} must be a base64 string: {detail}")]
    BadBase64 {
        line: usize,
        field: &'static str,
        detail: String,
    },
    #[error("line {line}: {field} is {bytes} bytes; an iris code must be a positive multiple of 8 bytes (64 bits: 16 rows x 4 bits per cell)")]
    BadCodeLength {
        line: usize,
        field: &'static str,
        bytes: usize,
    },
    #[error("line {line}: {field} is {found} bytes, expected {expected} like line {first_line}")]
    LengthMismatch {
        line: usize,
        field: &'static str,
        found: usize,
        expected: usize,
        first_line: usize,
    },
    #[error("line {line}: {field} is {found} bytes, expected {expected} ({bits}-bit codes)")]
    WrongBits {
        line: usize,
        field: &'static str,
        found: usize,
        expected: usize,
        bits: usize,
    },
    #[error("line {line}: id {id} is already used on line {first_line}")]
    DuplicateId {
        line: usize,
        id: u64,
        first_line: usize,
    },
}

impl NdjsonError {
    fn in_file(self, path: &Path) -> NdjsonError {
        NdjsonError::InFile {
            path: path.to_path_buf(),
            cause: Box::new(self),
        }
    }
}

/// Checks what must hold across the records of one file: one code length, distinct ids.
#[derive(Default)]
struct Consistency {
    expected_bits: Option<usize>,
    first: Option<(usize, usize)>, // (line, bytes)
    ids: HashMap<u64, usize>,
}

impl Consistency {
    fn check(&mut self, line: usize, rec: &IrisRecord) -> Result<(), NdjsonError> {
        for (field, bytes) in [("code", rec.iris.code.len()), ("mask", rec.iris.mask.len())] {
            if let Some(bits) = self.expected_bits {
                if bytes * 8 != bits {
                    return Err(NdjsonError::WrongBits {
                        line,
                        field,
                        found: bytes,
                        expected: bits / 8,
                        bits,
                    });
                }
            }
            match self.first {
                Some((first_line, expected)) if bytes != expected => {
                    return Err(NdjsonError::LengthMismatch {
                        line,
                        field,
                        found: bytes,
                        expected,
                        first_line,
                    })
                }
                Some(_) => {}
                None => {
                    if check_code_bits(bytes * 8).is_err() {
                        return Err(NdjsonError::BadCodeLength { line, field, bytes });
                    }
                    self.first = Some((line, bytes));
                }
            }
        }
        if let Some(&first_line) = self.ids.get(&rec.id) {
            return Err(NdjsonError::DuplicateId {
                line,
                id: rec.id,
                first_line,
            });
        }
        self.ids.insert(rec.id, line);
        Ok(())
    }
}

/// Streams records from NDJSON text, checking each line. Blank lines are skipped.
pub struct NdjsonReader<R> {
    input: R,
    line: usize,
    buf: String,
    seen: Consistency,
    failed: bool,
}

impl<R: BufRead> NdjsonReader<R> {
    pub fn new(input: R) -> Self {
        NdjsonReader {
            input,
            line: 0,
            buf: String::new(),
            seen: Consistency::default(),
            failed: false,
        }
    }

    /// Also require every code to have exactly `bits` bits (e.g. what a program was built for).
    pub fn expect_bits(mut self, bits: usize) -> Self {
        self.seen.expected_bits = Some(bits);
        self
    }

    /// The code length of the records read so far, in bits.
    pub fn code_bits(&self) -> Option<usize> {
        self.seen.first.map(|(_, bytes)| bytes * 8)
    }

    fn next_record(&mut self) -> Option<Result<IrisRecord, NdjsonError>> {
        loop {
            self.buf.clear();
            self.line += 1;
            let line = self.line;
            match self.input.read_line(&mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(cause) => return Some(Err(NdjsonError::Io { line, cause })),
            }
            if self.buf.trim().is_empty() {
                continue;
            }
            let rec = parse_line(line, &self.buf)
                .and_then(|rec| self.seen.check(line, &rec).map(|()| rec));
            return Some(rec);
        }
    }
}

impl<R: BufRead> Iterator for NdjsonReader<R> {
    type Item = Result<IrisRecord, NdjsonError>;

    /// Stops after the first error: later lines would be reported against a broken state.
    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.next_record();
        self.failed = matches!(item, Some(Err(_)));
        item
    }
}

fn parse_line(line: usize, text: &str) -> Result<IrisRecord, NdjsonError> {
    let value: Value = serde_json::from_str(text).map_err(|e| NdjsonError::Json {
        line,
        // serde_json's message names the column; keep only that, not the input.
        detail: e.to_string(),
    })?;
    let obj = value.as_object().ok_or(NdjsonError::NotObject { line })?;
    let id = match obj.get("id") {
        None => return Err(NdjsonError::Missing { line, field: "id" }),
        Some(v) => v.as_u64().ok_or_else(|| NdjsonError::BadId {
            line,
            found: describe(v),
        })?,
    };
    let bytes = |field: &'static str| -> Result<Vec<u8>, NdjsonError> {
        let v = obj.get(field).ok_or(NdjsonError::Missing { line, field })?;
        let s = v.as_str().ok_or_else(|| NdjsonError::BadBase64 {
            line,
            field,
            detail: format!("found {}", describe(v)),
        })?;
        B64.decode(s).map_err(|e| NdjsonError::BadBase64 {
            line,
            field,
            detail: e.to_string(),
        })
    };
    let code = bytes("code")?;
    let mask = bytes("mask")?;
    Ok(IrisRecord {
        id,
        iris: IrisCode { code, mask },
    })
}

/// A short description of a JSON value's kind for error messages (never its content if large).
fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(_) => "a string".into(),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Reads and checks every record from NDJSON text.
pub fn read_from<R: BufRead>(input: R) -> Result<Vec<IrisRecord>, NdjsonError> {
    NdjsonReader::new(input).collect()
}

/// Opens `path` for streaming; errors from the returned reader do not name the file, so prefer
/// [`read_file`] unless the records must be streamed.
pub fn open(path: &Path) -> Result<NdjsonReader<BufReader<File>>, NdjsonError> {
    let file = File::open(path).map_err(|cause| {
        NdjsonError::Open {
            action: "open",
            cause,
        }
        .in_file(path)
    })?;
    Ok(NdjsonReader::new(BufReader::new(file)))
}

/// Reads and checks every record of the file at `path`; errors name the file and the line.
pub fn read_file(path: &Path) -> Result<Vec<IrisRecord>, NdjsonError> {
    open(path)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.in_file(path))
}

/// [`read_file`], also requiring every code to have exactly `bits` bits (what a program's input
/// declares).
pub fn read_file_with_bits(path: &Path, bits: usize) -> Result<Vec<IrisRecord>, NdjsonError> {
    open(path)?
        .expect_bits(bits)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.in_file(path))
}

/// Writes records as NDJSON, refusing records that would make an invalid file.
pub struct NdjsonWriter<W: Write> {
    out: W,
    line: usize,
    seen: Consistency,
}

impl<W: Write> NdjsonWriter<W> {
    pub fn new(out: W) -> Self {
        NdjsonWriter {
            out,
            line: 0,
            seen: Consistency::default(),
        }
    }

    pub fn write(&mut self, rec: &IrisRecord) -> Result<(), NdjsonError> {
        self.line += 1;
        let line = self.line;
        self.seen.check(line, rec)?;
        writeln!(
            self.out,
            "{{\"id\": {}, \"code\": \"{}\", \"mask\": \"{}\"}}",
            rec.id,
            B64.encode(&rec.iris.code),
            B64.encode(&rec.iris.mask)
        )
        .map_err(|cause| NdjsonError::Io { line, cause })
    }

    /// Flushes and returns the underlying writer.
    pub fn finish(mut self) -> Result<W, NdjsonError> {
        let line = self.line;
        self.out
            .flush()
            .map_err(|cause| NdjsonError::Io { line, cause })?;
        Ok(self.out)
    }
}

/// Writes `records` to a new file at `path` (replacing any old one).
pub fn write_file<'a, I>(path: &Path, records: I) -> Result<(), NdjsonError>
where
    I: IntoIterator<Item = &'a IrisRecord>,
{
    let file = File::create(path).map_err(|cause| {
        NdjsonError::Open {
            action: "create",
            cause,
        }
        .in_file(path)
    })?;
    let mut w = NdjsonWriter::new(BufWriter::new(file));
    for rec in records {
        w.write(rec).map_err(|e| e.in_file(path))?;
    }
    w.finish().map_err(|e| e.in_file(path))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: u64, bytes: usize, fill: u8) -> IrisRecord {
        IrisRecord {
            id,
            iris: IrisCode {
                code: vec![fill; bytes],
                mask: vec![!fill; bytes],
            },
        }
    }

    fn to_text(records: &[IrisRecord]) -> String {
        let mut w = NdjsonWriter::new(Vec::new());
        for r in records {
            w.write(r).unwrap();
        }
        String::from_utf8(w.finish().unwrap()).unwrap()
    }

    fn err(text: &str) -> String {
        read_from(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn round_trip() {
        let records = vec![
            rec(0, 1600, 0x5A),
            rec(u64::MAX, 1600, 0x01),
            rec(17, 1600, 0),
        ];
        let text = to_text(&records);
        assert_eq!(text.lines().count(), 3);
        assert!(text.starts_with("{\"id\": 0, \"code\": \""));
        assert_eq!(read_from(text.as_bytes()).unwrap(), records);
    }

    #[test]
    fn file_round_trip_and_blank_lines() {
        let dir = std::env::temp_dir().join(format!("irisc-ndjson-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("db.ndjson");
        let records = vec![rec(1, 8, 3), rec(2, 8, 4)];
        write_file(&path, &records).unwrap();
        assert_eq!(read_file(&path).unwrap(), records);
        let text = format!("\n{}\n\n", to_text(&records));
        assert_eq!(read_from(text.as_bytes()).unwrap(), records);
        let err = read_file(&dir.join("nope.ndjson")).unwrap_err();
        // The cause is in the message, not also a `source()` that chain printers would repeat.
        assert!(std::error::Error::source(&err).is_none());
        let missing = err.to_string();
        assert!(missing.contains("nope.ndjson: cannot open: "), "{missing}");
        assert_eq!(missing.matches("cannot open").count(), 1, "{missing}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn length_mismatch_names_line_and_field() {
        let mut records: Vec<IrisRecord> = (0..7).map(|i| rec(i, 1600, 1)).collect();
        records[6].iris.code.pop();
        // Bypass the writer's own check to produce the broken file.
        let mut text = to_text(&records[..6]);
        text.push_str(&format!(
            "{{\"id\": 6, \"code\": \"{}\", \"mask\": \"{}\"}}\n",
            B64.encode(&records[6].iris.code),
            B64.encode(&records[6].iris.mask)
        ));
        assert_eq!(
            err(&text),
            "line 7: code is 1599 bytes, expected 1600 like line 1"
        );
    }

    #[test]
    fn mask_length_checked_too() {
        let text = format!(
            "{{\"id\": 1, \"code\": \"{}\", \"mask\": \"{}\"}}",
            B64.encode([0u8; 16]),
            B64.encode([0u8; 8])
        );
        assert_eq!(
            err(&text),
            "line 1: mask is 8 bytes, expected 16 like line 1"
        );
    }

    #[test]
    fn field_errors() {
        assert!(err("{\"id\": 1,").starts_with("line 1: not valid JSON"));
        assert_eq!(
            err("[1, 2]"),
            "line 1: expected a JSON object with \"id\", \"code\" and \"mask\""
        );
        assert_eq!(
            err("{\"code\": \"\", \"mask\": \"\"}"),
            "line 1: id is missing"
        );
        assert_eq!(
            err("{\"id\": -3, \"code\": \"\", \"mask\": \"\"}"),
            "line 1: id must be an unsigned 64-bit integer, found -3"
        );
        assert_eq!(
            err("{\"id\": \"7\", \"code\": \"\", \"mask\": \"\"}"),
            "line 1: id must be an unsigned 64-bit integer, found a string"
        );
        assert_eq!(
            err("{\"id\": 1, \"mask\": \"\"}"),
            "line 1: code is missing"
        );
        assert!(err("{\"id\": 1, \"code\": \"@@@\", \"mask\": \"\"}")
            .starts_with("line 1: code must be a base64 string"));
        assert_eq!(
            err("{\"id\": 1, \"code\": 5, \"mask\": \"\"}"),
            "line 1: code must be a base64 string: found 5"
        );
        let short = format!(
            "{{\"id\": 1, \"code\": \"{0}\", \"mask\": \"{0}\"}}",
            B64.encode([0u8; 5])
        );
        assert!(err(&short).starts_with("line 1: code is 5 bytes; an iris code must be"));
    }

    #[test]
    fn unknown_fields_are_ignored() {
        // `irisc gen --near` may say which record a query targets; readers skip such fields.
        let code = B64.encode([0x5Au8; 8]);
        let text = format!(
            "{{\"id\": 42, \"near\": 7, \"code\": \"{code}\", \"mask\": \"{code}\", \"note\": {{\"x\": [1]}}}}"
        );
        let recs = read_from(text.as_bytes()).unwrap();
        assert_eq!(recs.len(), 1);
        assert_eq!(recs[0].id, 42);
        assert_eq!(recs[0].iris.code, vec![0x5Au8; 8]);
    }

    #[test]
    fn duplicate_ids_rejected() {
        let text = to_text(&[rec(4, 8, 0), rec(5, 8, 0)]) + &to_text(&[rec(4, 8, 0)]);
        assert_eq!(err(&text), "line 3: id 4 is already used on line 1");
    }

    #[test]
    fn expected_bits() {
        let text = to_text(&[rec(1, 8, 0)]);
        let e = NdjsonReader::new(text.as_bytes())
            .expect_bits(12_800)
            .collect::<Result<Vec<_>, _>>()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 1: code is 8 bytes, expected 1600 (12800-bit codes)"
        );
        let mut r = NdjsonReader::new(text.as_bytes()).expect_bits(64);
        assert!(r.next().unwrap().is_ok());
        assert_eq!(r.code_bits(), Some(64));
    }

    #[test]
    fn writer_refuses_inconsistent_records() {
        let mut w = NdjsonWriter::new(Vec::new());
        w.write(&rec(1, 8, 0)).unwrap();
        let e = w.write(&rec(2, 16, 0)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 2: code is 16 bytes, expected 8 like line 1"
        );
    }

    #[test]
    fn errors_do_not_quote_codes() {
        let secret = B64.encode([0xABu8; 8]);
        let text = format!("{{\"id\": 1, \"code\": \"{secret}\", \"mask\": 7}}");
        assert!(!err(&text).contains(&secret));
    }
}
