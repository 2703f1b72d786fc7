//! `irisc store info STORE...`: what each gallery store holds and whether it is intact, read
//! without changing anything (unlike `irisc repair`, which rewrites a stale header mirror).

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use irisc_runtime::store::{self, Inspection, STORE_VERSION};

/// Prints a block per store on stdout; fails (after printing all) when any is not intact.
pub fn run(stores: &[PathBuf]) -> Result<ExitCode> {
    let mut text = String::new();
    let mut all_intact = true;
    for (i, path) in stores.iter().enumerate() {
        if i > 0 {
            text.push('\n');
        }
        let (block, intact) = describe(path);
        text.push_str(&block);
        all_intact &= intact;
    }
    super::write_stdout(&text)?;
    Ok(if all_intact {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The block of one store, and whether it is intact.
pub fn describe(path: &Path) -> (String, bool) {
    let mut out = format!("{}\n", path.display());
    let found = match store::inspect(path) {
        Ok(found) => found,
        Err(e) => {
            let _ = writeln!(out, "  health     not usable: {e}");
            return (out, false);
        }
    };
    let h = &found.header;
    let p = &h.params;
    let line = |out: &mut String, field: &str, value: String| {
        let _ = writeln!(out, "  {field:<10} {value}");
    };
    let version = if h.version < STORE_VERSION {
        format!(
            "gallery store, format version {} (older; read and appended in its own format)",
            h.version
        )
    } else {
        format!("gallery store, format version {}", h.version)
    };
    line(&mut out, "kind", version);
    line(&mut out, "party", p.party.to_string());
    line(&mut out, "records", records_text(&found));
    line(&mut out, "schema", store::schema_text(p));
    line(&mut out, "share set", hex(&p.set_id));
    line(
        &mut out,
        "shared by",
        format!(
            "program {} (any program whose input has this schema may use the store)",
            p.fingerprint
        ),
    );
    line(
        &mut out,
        "commits",
        format!(
            "{} (room for {} records before the file grows)",
            h.seq, h.capacity
        ),
    );
    let (health, intact) = health_text(path, &found);
    line(&mut out, "health", health);
    (out, intact)
}

/// `3003 (ids 0 to 3002)`, saying when the ids are not one run or repeat.
fn records_text(found: &Inspection) -> String {
    let count = found.header.count;
    let Ok(store) = &found.opened else {
        return format!("{count} (ids unknown: the store is not intact)");
    };
    let ids = store.ids();
    let (Some(&lo), Some(&hi)) = (ids.iter().min(), ids.iter().max()) else {
        return "0".into();
    };
    let distinct = ids.iter().collect::<HashSet<_>>().len();
    let mut text = format!("{count} (ids {lo} to {hi}");
    if distinct < ids.len() {
        let _ = write!(text, ", {} ids repeated", ids.len() - distinct);
    } else if hi - lo + 1 != count {
        text.push_str(", with gaps");
    }
    text.push(')');
    text
}

fn health_text(path: &Path, found: &Inspection) -> (String, bool) {
    match (&found.opened, &found.damaged) {
        (Err(e), _) => (format!("NOT INTACT: {e}"), false),
        (Ok(_), Some((slot, why))) => (
            format!(
                "NOT INTACT: header slot {slot} is damaged ({why}); `irisc repair {}` rewrites it",
                path.display()
            ),
            false,
        ),
        (Ok(_), None) if !found.in_sync => (
            format!(
                "intact; the header mirror is one commit behind (an interrupted commit): `irisc repair {}` (or the next enroll) brings it up to date",
                path.display()
            ),
            true,
        ),
        (Ok(_), None) => (
            "intact (both header slots agree, every record matches the checksum)".into(),
            true,
        ),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
