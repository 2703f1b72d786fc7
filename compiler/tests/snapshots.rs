//! Snapshot tests: `irisc explain --json`, `irisc explain` (the text for people) and
//! `irisc build --emit=mpc` of every program in `examples/`, compared with the files checked in
//! under `tests/snapshots/`.
//!
//! A difference fails the test with the first differing line. When a change of the compiler's
//! choices or of the `mpc` schedule is deliberate, regenerate the snapshots with
//! `IRISC_UPDATE_SNAPSHOTS=1 cargo test -p irisc --test snapshots` and say why in the commit
//! message.

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn examples() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .expect("examples/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "irs"))
        .collect();
    v.sort();
    assert!(v.len() >= 17, "expected every example, found {}", v.len());
    v
}

/// Runs `irisc ARGS` from the repository root and returns its stdout.
fn irisc(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_irisc"))
        .current_dir(root())
        .args(args)
        .output()
        .expect("run irisc");
    assert!(
        out.status.success(),
        "irisc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Compares `actual` with the snapshot `name`, or writes it when updating. Returns a failure
/// description.
fn check(name: &str, actual: &str) -> Option<String> {
    let path = root().join("tests/snapshots").join(name);
    if std::env::var_os("IRISC_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).expect("write snapshot");
        return None;
    }
    let expected = match std::fs::read_to_string(&path) {
        Ok(s) => s,
        Err(e) => return Some(format!("{name}: cannot read the snapshot ({e})")),
    };
    if expected == actual {
        return None;
    }
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{name}: differs from line {}:\n  snapshot: {}\n  now:      {}",
        line + 1,
        expected.lines().nth(line).unwrap_or("<end>"),
        actual.lines().nth(line).unwrap_or("<end>")
    ))
}

fn stem(p: &Path) -> String {
    p.file_stem().unwrap().to_string_lossy().into_owned()
}

#[test]
fn explain_json_of_every_example_matches_its_snapshot() {
    let failures: Vec<String> = examples()
        .iter()
        .filter_map(|p| {
            let rel = format!("examples/{}.irs", stem(p));
            let json = irisc(&["explain", &rel, "--json"]);
            check(&format!("{}.explain.json", stem(p)), &json)
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn emitted_mpc_of_every_example_matches_its_snapshot() {
    let failures: Vec<String> = examples()
        .iter()
        .filter_map(|p| {
            let rel = format!("examples/{}.irs", stem(p));
            let mpc = irisc(&["build", &rel, "--emit=mpc"]);
            check(&format!("{}.mpc.mlir", stem(p)), &mpc)
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn explain_text_of_every_example_matches_its_snapshot() {
    let failures: Vec<String> = examples()
        .iter()
        .filter_map(|p| {
            let rel = format!("examples/{}.irs", stem(p));
            let text = irisc(&["explain", &rel]);
            check(&format!("{}.explain.txt", stem(p)), &text)
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
