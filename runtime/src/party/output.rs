//! What a party prints: result lines (output party, stdout); the accounting is `accounting.rs`.

use std::io::Write;

use crate::contract::OutputShape;
use crate::error::RuntimeError;

use super::load::Inputs;
use crate::ops::ctx::get;
use crate::ops::value::Value;

/// The fields revealed to this party for the query being answered, in reveal order, as JSON
/// text. `irisc_rt_emit` prints them as one line `{"query": i, <fields>}`.
#[derive(Debug, Default)]
pub struct Outputs {
    pending: Option<(u64, Vec<(String, String)>)>,
}

impl Outputs {
    /// Adds field `name` (JSON text `value`) to query `query`'s answer. Fields of another query
    /// still pending are printed first (schedules that never call `emit`).
    pub fn add(&mut self, query: u64, name: &str, value: String) -> Result<(), RuntimeError> {
        if self.pending.as_ref().is_some_and(|(q, _)| *q != query) {
            self.flush()?;
        }
        let (_, fields) = self.pending.get_or_insert_with(|| (query, Vec::new()));
        if name == "query" || fields.iter().any(|(n, _)| n == name) {
            return Err(RuntimeError::Schedule(format!(
                "output field `{name}` given twice for query {query}"
            )));
        }
        fields.push((name.to_string(), value));
        Ok(())
    }

    /// Prints query `query`'s line if any field was revealed to this party.
    pub fn emit(&mut self, query: u64) -> Result<(), RuntimeError> {
        match &self.pending {
            Some((q, _)) if *q == query => self.flush(),
            _ => Ok(()),
        }
    }

    /// Prints whatever is pending.
    pub fn flush(&mut self) -> Result<(), RuntimeError> {
        match self.pending.take() {
            Some((q, fields)) => print_line(&render(q, &fields)),
            None => Ok(()),
        }
    }
}

/// `{"query":0,"match":true,"ids":[17]}`: compact, fields in the order given.
pub fn render(query: u64, fields: &[(String, String)]) -> String {
    let mut s = format!("{{\"query\":{query}");
    for (name, value) in fields {
        s.push(',');
        s.push_str(&serde_json::to_string(name).unwrap_or_else(|_| "\"?\"".into()));
        s.push(':');
        s.push_str(value);
    }
    s.push('}');
    s
}

/// The ids of the records whose opened bit is set.
pub fn matching_ids(bits: &[bool], record_ids: &[u64]) -> Vec<u64> {
    bits.iter()
        .zip(record_ids)
        .filter(|(&b, _)| b)
        .map(|(_, &id)| id)
        .collect()
}

/// The fields one `irisc_rt_output` adds: `(name, JSON value)` pairs. `field` None takes the
/// default name of the shape (`match`, `ids`, `count`); an ids field named `ids` also sets
/// `match` (non-empty), as the issue-2 contract has it.
pub fn fields_for(
    shape: OutputShape,
    field: Option<&str>,
    bits: Option<&[bool]>,
    ints: Option<&[u64]>,
    record_ids: &[u64],
) -> Result<Vec<(String, String)>, RuntimeError> {
    let bad = |m: String| Err(RuntimeError::Schedule(m));
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
            Ok(vec![(field.unwrap_or("match").into(), bits[0].to_string())])
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
            let name = field.unwrap_or("ids");
            let list = serde_json::to_string(&ids).unwrap_or_default();
            let mut out = Vec::new();
            if name == "ids" {
                out.push(("match".to_string(), (!ids.is_empty()).to_string()));
            }
            out.push((name.to_string(), list));
            Ok(out)
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
            Ok(vec![(field.unwrap_or("count").into(), ints[0].to_string())])
        }
    }
}

pub fn print_line(line: &str) -> Result<(), RuntimeError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|_| out.flush())
        .map_err(|e| RuntimeError::Setup(format!("cannot write results: {e}")))
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
    for (name, value) in fields_for(shape, field, bits.as_deref(), ints.as_deref(), &ids)? {
        outputs.add(query, &name, value)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(v: Vec<(String, String)>) -> Vec<(&'static str, String)> {
        v.into_iter()
            .map(|(n, x)| (&*Box::leak(n.into_boxed_str()), x))
            .collect()
    }

    #[test]
    fn issue2_lines_are_unchanged() {
        let ids = fields_for(
            OutputShape::Ids,
            None,
            Some(&[false, true, true]),
            None,
            &[5, 17, 9],
        )
        .unwrap();
        assert_eq!(render(0, &ids), r#"{"query":0,"match":true,"ids":[17,9]}"#);
        let none = fields_for(OutputShape::Ids, None, Some(&[false]), None, &[5]).unwrap();
        assert_eq!(render(3, &none), r#"{"query":3,"match":false,"ids":[]}"#);
        let bit = fields_for(OutputShape::Bit, None, Some(&[true]), None, &[]).unwrap();
        assert_eq!(render(1, &bit), r#"{"query":1,"match":true}"#);
    }

    #[test]
    fn named_fields_and_counts() {
        let mut all = fields_for(
            OutputShape::Ids,
            Some("both"),
            Some(&[true, false]),
            None,
            &[0, 1],
        )
        .unwrap();
        all.extend(fields_for(OutputShape::Count, None, None, Some(&[4]), &[]).unwrap());
        all.extend(fields_for(OutputShape::Bit, Some("dup"), Some(&[false]), None, &[]).unwrap());
        assert_eq!(
            f(all.clone()),
            vec![
                ("both", "[0]".into()),
                ("count", "4".into()),
                ("dup", "false".into())
            ]
        );
        assert_eq!(
            render(2, &all),
            r#"{"query":2,"both":[0],"count":4,"dup":false}"#
        );
    }

    #[test]
    fn malformed_outputs_are_schedule_errors() {
        assert!(fields_for(OutputShape::Bit, None, Some(&[true, false]), None, &[]).is_err());
        assert!(fields_for(OutputShape::Ids, None, Some(&[true]), None, &[1, 2]).is_err());
        assert!(fields_for(OutputShape::Count, None, Some(&[true]), None, &[]).is_err());
        // An unknown shape never reaches `fields_for`: the ABI refuses it.
        assert_eq!(OutputShape::from_i32(7), None);
        let mut o = Outputs::default();
        o.add(0, "match", "true".into()).unwrap();
        assert!(o.add(0, "match", "false".into()).is_err());
        assert!(o.add(0, "query", "1".into()).is_err());
    }
}
