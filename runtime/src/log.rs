//! How a party's lines reach stderr: as text (the default, one sentence per line, starting with
//! `PROGRAM party N:`), or with `--log-format json` as one JSON object per line for a log
//! collector: `ts` (UTC, RFC 3339), `program`, `party`, `level`, `event` and `msg`, plus an
//! event's own fields. A request's line (`event: "request"`) carries its id, type, outcome,
//! queries and seconds. No line carries a share, a key, a token or a revealed value: the lines
//! are the same sentences the text format prints, and the fields are counts, ids and names.
//!
//! This module is a leaf (it imports nothing of the crate), so every module may log.

use std::io::Write as _;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The format of the lines (`--log-format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One sentence per line.
    Text,
    /// One JSON object per line.
    Json,
}

static FORMAT: AtomicU8 = AtomicU8::new(0);
static PROGRAM: OnceLock<String> = OnceLock::new();
/// `usize::MAX` until the party is known.
static PARTY: AtomicUsize = AtomicUsize::new(usize::MAX);

pub fn set_format(format: LogFormat) {
    FORMAT.store(
        match format {
            LogFormat::Text => 0,
            LogFormat::Json => 1,
        },
        Ordering::SeqCst,
    );
}

pub fn format() -> LogFormat {
    match FORMAT.load(Ordering::SeqCst) {
        1 => LogFormat::Json,
        _ => LogFormat::Text,
    }
}

/// Who is logging (the first program name set wins).
pub fn set_identity(program: Option<&str>, party: Option<usize>) {
    if let Some(p) = program {
        let _ = PROGRAM.set(p.to_string());
    }
    if let Some(p) = party {
        PARTY.store(p, Ordering::SeqCst);
    }
}

/// One line of the party: `text` as it is in the text format; in JSON, without the
/// `PROGRAM party N: ` prefix the fields carry. Write errors are ignored (a closed stderr must
/// not stop a party).
pub fn line(text: std::fmt::Arguments<'_>) {
    let text = text.to_string();
    match format() {
        LogFormat::Text => {
            let _ = writeln!(std::io::stderr(), "{text}");
        }
        LogFormat::Json => {
            let msg = strip_identity(&text);
            let level = if is_failure(msg) { "error" } else { "info" };
            emit("message", level, msg, serde_json::Map::new());
        }
    }
}

/// A structured event (JSON format only; the text format has its own sentences for what
/// matters to a person reading it).
pub fn event(event: &str, msg: &str, fields: serde_json::Map<String, serde_json::Value>) {
    if format() == LogFormat::Json {
        emit(event, "info", msg, fields);
    }
}

fn emit(event: &str, level: &str, msg: &str, fields: serde_json::Map<String, serde_json::Value>) {
    let mut o = serde_json::Map::new();
    o.insert(
        "ts".into(),
        humantime::format_rfc3339_millis(std::time::SystemTime::now())
            .to_string()
            .into(),
    );
    if let Some(p) = PROGRAM.get() {
        o.insert("program".into(), p.clone().into());
    }
    let party = PARTY.load(Ordering::SeqCst);
    if party != usize::MAX {
        o.insert("party".into(), party.into());
    }
    o.insert("level".into(), level.into());
    o.insert("event".into(), event.into());
    o.insert("msg".into(), msg.into());
    for (k, v) in fields {
        o.entry(k).or_insert(v);
    }
    let _ = writeln!(std::io::stderr(), "{}", serde_json::Value::Object(o));
}

/// `text` without a leading `PROGRAM party N: ` or `party N: `.
fn strip_identity(text: &str) -> &str {
    let Some(at) = text.find("party ") else {
        return text;
    };
    let rest = &text[at + "party ".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let before = &text[..at];
    // Only a prefix: nothing or the program's name (one word) before `party N: `.
    if digits == 0 || before.trim_end().contains(' ') || !rest[digits..].starts_with(": ") {
        return text;
    }
    &rest[digits + 2..]
}

/// Whether a party's sentence says that something failed (its level in JSON).
fn is_failure(msg: &str) -> bool {
    ["failed", "stopped", "error", "cannot", "refused", "closed"]
        .iter()
        .any(|w| msg.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_prefix_is_stripped_and_nothing_else() {
        assert_eq!(strip_identity("iris_ids party 1: connected"), "connected");
        assert_eq!(
            strip_identity("party 0: waiting for party 2"),
            "waiting for party 2"
        );
        assert_eq!(
            strip_identity("the batch failed: party 2 closed its link"),
            "the batch failed: party 2 closed its link"
        );
        assert_eq!(
            strip_identity("small ids party 1: x"),
            "small ids party 1: x"
        );
        assert_eq!(strip_identity("iris_ids party x: y"), "iris_ids party x: y");
    }

    #[test]
    fn failures_are_errors() {
        assert!(is_failure("the batch failed: party 2 closed its link"));
        assert!(!is_failure("connected to the other two parties"));
    }
}
