//! What a party prints: result lines (output party, stdout); the accounting is `accounting.rs`.
//!
//! One compact JSON object a line, written and flushed as soon as the query's answer is known:
//! `{"query": <position>, "id": <query record id>, <fields>}` (README "Outputs"). A party that
//! stops early after printing answers ends its stdout with the trailer
//! `{"complete": false, "answered": N, "error": "..."}`, so partial answers never stand
//! unmarked; a complete run writes no trailer.

use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::contract::{OutputShape, MATCH_FIELD, RESERVED_OUTPUT_FIELDS};
use crate::error::RuntimeError;
use crate::manifest::Manifest;
use crate::vocab::InputRole;

use super::load::Inputs;
use crate::ops::ctx::get;
use crate::ops::value::Value;

/// An answer's fields: JSON names and values, in order.
type Fields = Vec<(String, String)>;

pub use crate::io::answer::KeptAnswer;

/// One reveal's field of an answer: its JSON name and value, and for an ids or bit output
/// whether it found anything (what `"match"` reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub value: String,
    pub found: Option<bool>,
}

/// The fields revealed to this party for the query being answered, in reveal order, as JSON
/// text. `irisc_rt_emit` prints them as one line `{"query": i, "id": ..., <fields>}`.
#[derive(Debug, Default)]
pub struct Outputs {
    /// The record id of each query, by position (the first query input's, in declaration
    /// order); empty for a program without query inputs, whose lines carry no `"id"`.
    query_ids: Vec<u64>,
    pending: Option<Pending>,
    /// Lines printed so far.
    answered: u64,
    /// A serving party's answers of the batch, kept for its requests instead of printed:
    /// (query position in the batch, fields).
    captured: Option<Vec<(u64, Fields)>>,
}

#[derive(Debug)]
struct Pending {
    query: u64,
    fields: Vec<(String, String)>,
}

impl Outputs {
    /// The outputs of a run over `inputs`: lines carry the ids of the program's first query input.
    pub fn new(manifest: &Manifest, inputs: &Inputs) -> Outputs {
        let query_ids = manifest
            .inputs_with(InputRole::Query)
            .first()
            .map(|&i| inputs.ids(i).to_vec())
            .unwrap_or_default();
        Outputs::with_query_ids(query_ids)
    }

    pub fn with_query_ids(query_ids: Vec<u64>) -> Outputs {
        Outputs {
            query_ids,
            ..Outputs::default()
        }
    }

    /// Adds `field` to query `query`'s answer. Fields of another query still pending are printed
    /// first (schedules that never call `emit`). The first ids or bit field of a query also sets
    /// `"match"` (just before it), unless it is itself named `match`.
    pub fn add(&mut self, query: u64, field: Field) -> Result<(), RuntimeError> {
        if self.pending.as_ref().is_some_and(|p| p.query != query) {
            self.flush()?;
        }
        let fields = &mut self
            .pending
            .get_or_insert_with(|| Pending {
                query,
                fields: Vec::new(),
            })
            .fields;
        let name = field.name.as_str();
        if RESERVED_OUTPUT_FIELDS.contains(&name) || fields.iter().any(|(n, _)| n == name) {
            return Err(RuntimeError::Schedule(format!(
                "output field `{name}` given twice for query {query}"
            )));
        }
        let has_match = fields.iter().any(|(n, _)| n == MATCH_FIELD);
        match field.found {
            Some(found) if !has_match && name != MATCH_FIELD => {
                fields.push((MATCH_FIELD.to_string(), found.to_string()));
            }
            None if name == MATCH_FIELD => {
                return Err(RuntimeError::Schedule(format!(
                    "a count output of query {query} is named `{MATCH_FIELD}`, which only an ids or bit output may set"
                )));
            }
            _ => {}
        }
        fields.push((field.name, field.value));
        Ok(())
    }

    /// Prints query `query`'s line if any field was revealed to this party.
    pub fn emit(&mut self, query: u64) -> Result<(), RuntimeError> {
        match &self.pending {
            Some(p) if p.query == query => self.flush(),
            _ => Ok(()),
        }
    }

    /// Outputs of a batch of a serving party: the answers are kept (see
    /// [`Outputs::take_captured`]) for the requests instead of printed.
    pub fn capturing(manifest: &Manifest, inputs: &Inputs) -> Outputs {
        Outputs {
            captured: Some(Vec::new()),
            ..Outputs::new(manifest, inputs)
        }
    }

    /// The answers kept (a capturing `Outputs`): query position, its record id, the fields.
    pub fn take_captured(&mut self) -> Vec<KeptAnswer> {
        let _ = self.flush();
        let ids = &self.query_ids;
        self.captured
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
            .into_iter()
            .map(|(q, fields)| (q, ids.get(q as usize).copied(), fields))
            .collect()
    }

    /// Prints whatever is pending.
    pub fn flush(&mut self) -> Result<(), RuntimeError> {
        if let Some(kept) = &mut self.captured {
            if let Some(p) = self.pending.take() {
                kept.push((p.query, p.fields));
            }
            return Ok(());
        }
        match self.pending.take() {
            Some(p) => {
                let id = self.query_ids.get(p.query as usize).copied();
                if print_answer(&render(p.query, id, &p.fields))? {
                    self.answered += 1;
                }
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// The run stops early because of `error`: a query answered in part is dropped, and if this
    /// party printed answers, the trailer [`incomplete_trailer`] marks them as partial (a party
    /// that printed nothing leaves stdout empty).
    pub fn mark_incomplete(&mut self, error: &str) -> Result<(), RuntimeError> {
        self.pending = None;
        close_with_trailer(error)
    }
}

pub use crate::io::answer::render;

/// Answer lines this process printed, and whether stdout is closed to answers (its trailer is
/// out, or none is needed): the signal thread ([`super::stop`]) marks partial answers too,
/// without access to the [`Outputs`] the party's own thread holds. Both are read and written
/// only while holding stdout's lock, so no answer can follow the trailer and the trailer's
/// count is exact.
static ANSWER_LINES: AtomicU64 = AtomicU64::new(0);
static ANSWERS_CLOSED: AtomicBool = AtomicBool::new(false);

/// Prints one answer line unless the answers are closed; returns whether it printed.
fn print_answer(line: &str) -> Result<bool, RuntimeError> {
    let mut out = std::io::stdout().lock();
    if ANSWERS_CLOSED.load(Ordering::SeqCst) {
        return Ok(false);
    }
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(|e| RuntimeError::Setup(format!("cannot write results: {e}")))?;
    ANSWER_LINES.fetch_add(1, Ordering::SeqCst);
    Ok(true)
}

/// Closes stdout to answers and, if this process printed any, writes the trailer
/// [`incomplete_trailer`] (once: the party's thread and the signal thread may both get here).
fn close_with_trailer(error: &str) -> Result<(), RuntimeError> {
    let mut out = std::io::stdout().lock();
    if ANSWERS_CLOSED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    let answered = ANSWER_LINES.load(Ordering::SeqCst);
    if answered == 0 {
        return Ok(());
    }
    writeln!(out, "{}", incomplete_trailer(answered, error))
        .and_then(|_| out.flush())
        .map_err(|e| RuntimeError::Setup(format!("cannot write results: {e}")))
}

/// Writes the trailer for a party stopped by a signal ([`close_with_trailer`]). The party's own
/// thread may hold stdout (a write blocked on a full pipe): the trailer waits for it at most
/// `bound`, since the process ends right after, whatever happened.
pub(crate) fn mark_incomplete_on_signal(error: &str, bound: std::time::Duration) {
    let error = error.to_string();
    let (done, wait) = std::sync::mpsc::channel();
    let writer = std::thread::Builder::new().spawn(move || {
        let _ = close_with_trailer(&error);
        let _ = done.send(());
    });
    if writer.is_ok() {
        let _ = wait.recv_timeout(bound);
    }
}

/// The last line of a run that stopped early: `{"complete":false,"answered":N,"error":"..."}`
/// (`answered` = answer lines before it). The party and `irisc run` both write it.
pub fn incomplete_trailer(answered: u64, error: &str) -> String {
    format!(
        "{{\"complete\":false,\"answered\":{answered},\"error\":{}}}",
        serde_json::to_string(error).unwrap_or_else(|_| "\"?\"".into())
    )
}

/// The ids of the records whose opened bit is set.
pub fn matching_ids(bits: &[bool], record_ids: &[u64]) -> Vec<u64> {
    bits.iter()
        .zip(record_ids)
        .filter(|(&b, _)| b)
        .map(|(_, &id)| id)
        .collect()
}

/// The field one `irisc_rt_output` adds. `field` None takes the default name of the shape
/// (`match`, `ids`, `count`); ids and bit fields say whether they found anything, which sets
/// `"match"` ([`Outputs::add`]).
pub fn field_for(
    shape: OutputShape,
    field: Option<&str>,
    bits: Option<&[bool]>,
    ints: Option<&[u64]>,
    record_ids: &[u64],
) -> Result<Field, RuntimeError> {
    let bad = |m: String| Err(RuntimeError::Schedule(m));
    let named = |default: &str, value: String, found: Option<bool>| Field {
        name: field.unwrap_or(default).to_string(),
        value,
        found,
    };
    match shape {
        OutputShape::Bit => {
            let Some(bits) = bits else {
                return bad("bit output of a slot that is not opened bits".into());
            };
            if bits.len() != 1 {
                return bad(format!(
                    "bit output of {} opened bits (expected 1)",
                    bits.len()
                ));
            }
            Ok(named(MATCH_FIELD, bits[0].to_string(), Some(bits[0])))
        }
        OutputShape::Ids => {
            let Some(bits) = bits else {
                return bad("ids output of a slot that is not opened bits".into());
            };
            if bits.len() != record_ids.len() {
                return bad(format!(
                    "ids output of {} opened bits for {} records",
                    bits.len(),
                    record_ids.len()
                ));
            }
            let ids = matching_ids(bits, record_ids);
            let list = serde_json::to_string(&ids).unwrap_or_default();
            Ok(named("ids", list, Some(!ids.is_empty())))
        }
        OutputShape::Count => {
            let Some(ints) = ints else {
                return bad("count output of a slot that is not opened integers".into());
            };
            if ints.len() != 1 {
                return bad(format!(
                    "count output of {} opened integers (expected 1)",
                    ints.len()
                ));
            }
            Ok(named("count", ints[0].to_string(), None))
        }
    }
}

/// `mpc.output`: adds the field(s) of one reveal to query `query`'s answer at the output party
/// (`src` opened there; elsewhere nothing happens). `records` is the slot whose records' ids an
/// ids output reports (negative: the program's only gallery, for issue-2 schedules).
#[allow(clippy::too_many_arguments)]
pub fn output(
    slots: &[Option<Value>],
    inputs: &Inputs,
    outputs: &mut Outputs,
    query: u64,
    src: u32,
    records: i32,
    shape: OutputShape,
    field: Option<&str>,
) -> Result<(), RuntimeError> {
    let (bits, ints) = match get(slots, src)? {
        Value::Clear(None) | Value::ClearInts(None) => return Ok(()),
        Value::Clear(Some(b)) => (Some(b.clone()), None),
        Value::ClearInts(Some(v)) => (None, Some(v.clone())),
        other => {
            return Err(RuntimeError::Schedule(format!(
                "output of slot {src}, which holds {}, not opened values",
                other.kind()
            )))
        }
    };
    let ids: Vec<u64> = if shape != OutputShape::Ids {
        Vec::new()
    } else if records < 0 {
        let g = inputs.single(crate::vocab::InputRole::Gallery)?;
        inputs.ids(g).to_vec()
    } else {
        match get(slots, records as u32)? {
            Value::Codes(c) => c.ids.clone(),
            Value::Shamir(c) => c.ids.clone(),
            other => {
                return Err(RuntimeError::Schedule(format!(
                    "ids output over slot {records}, which holds {}, not records",
                    other.kind()
                )))
            }
        }
    };
    let field = field_for(shape, field, bits.as_deref(), ints.as_deref(), &ids)?;
    outputs.add(query, field)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line `outputs` would print for query `q` with the given fields, without printing it.
    fn line(q: u64, id: Option<u64>, fields: Vec<Field>) -> String {
        let mut o = Outputs::default();
        for f in fields {
            o.add(q, f).unwrap();
        }
        let p = o.pending.take().unwrap();
        render(p.query, id, &p.fields)
    }

    #[test]
    fn issue2_lines_keep_their_fields_and_gain_the_id() {
        let ids = field_for(
            OutputShape::Ids,
            None,
            Some(&[false, true, true]),
            None,
            &[5, 17, 9],
        )
        .unwrap();
        assert_eq!(
            line(0, Some(1000), vec![ids]),
            r#"{"query":0,"id":1000,"match":true,"ids":[17,9]}"#
        );
        let none = field_for(OutputShape::Ids, None, Some(&[false]), None, &[5]).unwrap();
        assert_eq!(
            line(3, Some(7), vec![none]),
            r#"{"query":3,"id":7,"match":false,"ids":[]}"#
        );
        let bit = field_for(OutputShape::Bit, None, Some(&[true]), None, &[]).unwrap();
        assert_eq!(line(1, None, vec![bit]), r#"{"query":1,"match":true}"#);
    }

    #[test]
    fn match_is_set_by_the_first_ids_or_bit_output_whatever_its_label() {
        let named = field_for(
            OutputShape::Ids,
            Some("matches"),
            Some(&[false, true]),
            None,
            &[4, 8],
        )
        .unwrap();
        assert_eq!(
            line(0, Some(9), vec![named]),
            r#"{"query":0,"id":9,"match":true,"matches":[8]}"#
        );
        let seen = field_for(OutputShape::Bit, Some("seen"), Some(&[false]), None, &[]).unwrap();
        assert_eq!(
            line(2, Some(5), vec![seen]),
            r#"{"query":2,"id":5,"match":false,"seen":false}"#
        );
        // A later ids output (here over earlier queries) does not change the first one's match.
        let first = field_for(OutputShape::Ids, None, Some(&[false]), None, &[3]).unwrap();
        let later = field_for(
            OutputShape::Ids,
            Some("in_batch"),
            Some(&[true]),
            None,
            &[0],
        )
        .unwrap();
        assert_eq!(
            line(1, Some(6), vec![first, later]),
            r#"{"query":1,"id":6,"match":false,"ids":[],"in_batch":[0]}"#
        );
    }

    #[test]
    fn named_fields_and_counts() {
        let fields = vec![
            field_for(
                OutputShape::Ids,
                Some("both"),
                Some(&[true, false]),
                None,
                &[0, 1],
            )
            .unwrap(),
            field_for(OutputShape::Count, None, None, Some(&[4]), &[]).unwrap(),
            field_for(OutputShape::Bit, Some("dup"), Some(&[false]), None, &[]).unwrap(),
        ];
        assert_eq!(fields[1].found, None);
        assert_eq!(
            line(2, Some(12), fields),
            r#"{"query":2,"id":12,"match":true,"both":[0],"count":4,"dup":false}"#
        );
        let count = field_for(OutputShape::Count, None, None, Some(&[0]), &[]).unwrap();
        assert_eq!(
            line(0, Some(1), vec![count]),
            r#"{"query":0,"id":1,"count":0}"#
        );
    }

    #[test]
    fn trailer_marks_an_early_stop() {
        assert_eq!(
            incomplete_trailer(3, "party 1 \"closed\""),
            r#"{"complete":false,"answered":3,"error":"party 1 \"closed\""}"#
        );
        // Nothing printed: nothing to mark, stdout stays empty.
        let mut o = Outputs::with_query_ids(vec![10, 11]);
        o.add(
            0,
            field_for(OutputShape::Bit, None, Some(&[true]), None, &[]).unwrap(),
        )
        .unwrap();
        o.mark_incomplete("stopped").unwrap();
        assert!(o.pending.is_none());
        assert_eq!(o.answered, 0);
    }

    #[test]
    fn malformed_outputs_are_schedule_errors() {
        assert!(field_for(OutputShape::Bit, None, Some(&[true, false]), None, &[]).is_err());
        assert!(field_for(OutputShape::Ids, None, Some(&[true]), None, &[1, 2]).is_err());
        assert!(field_for(OutputShape::Count, None, Some(&[true]), None, &[]).is_err());
        // An unknown shape never reaches `field_for`: the ABI refuses it.
        assert_eq!(OutputShape::from_i32(7), None);
        let bit = |name: &str| field_for(OutputShape::Bit, Some(name), Some(&[true]), None, &[]);
        let mut o = Outputs::default();
        o.add(0, bit("match").unwrap()).unwrap();
        assert!(o.add(0, bit("match").unwrap()).is_err());
        for reserved in RESERVED_OUTPUT_FIELDS {
            assert!(o.add(0, bit(reserved).unwrap()).is_err(), "{reserved}");
        }
        let count = field_for(OutputShape::Count, Some("match"), None, Some(&[1]), &[]).unwrap();
        assert!(Outputs::default().add(0, count).is_err());
    }
}
