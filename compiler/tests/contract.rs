//! The compiler–runtime contract agrees with the dialect, the emitted code and the runtime
//! library (issue 10, point 4). The contract is the table of entry points the runtime's
//! wrappers are generated with (`irisc_runtime::abi::ENTRY_POINTS`); this test fails if any of
//! the three drifts from it:
//! (a) `dialects/mpc.irdl.mlir`: every op an entry point implements is an op of the dialect,
//!     and every op of the dialect has an entry point;
//! (b) the objects the compiler emits for every example reference only entry points of the
//!     contract, each declared with the contract's parameter and result types;
//! (c) the runtime library exports every entry point of the contract.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use irisc_runtime::abi::ENTRY_POINTS;
use irisc_runtime::contract::{CType, EntryPoint, Implements, STRUCTURAL_OPS};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The names of the ops `irdl.operation @name` defines in the dialect file.
fn dialect_ops() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("dialects/mpc.irdl.mlir")).unwrap();
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("irdl.operation @"))
        .map(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
                .unwrap()
                .to_string()
        })
        .collect()
}

fn llvm_type(t: CType) -> &'static str {
    match t {
        CType::Ptr => "ptr",
        CType::I32 => "i32",
        CType::I64 => "i64",
    }
}

/// `(result, params)` of an entry point in LLVM's spelling.
fn signature(e: &EntryPoint) -> (String, Vec<String>) {
    (
        llvm_type(e.result.c_type()).to_string(),
        e.args
            .iter()
            .map(|a| llvm_type(a.kind.c_type()).to_string())
            .collect(),
    )
}

/// The `irisc_rt_*` functions an LLVM module declares: name -> (result, params).
fn declared(ir: &str) -> BTreeMap<String, (String, Vec<String>)> {
    let mut out = BTreeMap::new();
    for line in ir.lines().filter(|l| l.starts_with("declare ")) {
        let Some(at) = line.find("@irisc_rt_") else {
            continue;
        };
        let ret = line["declare ".len()..at].trim().to_string();
        let rest = &line[at + 1..];
        let open = rest.find('(').unwrap();
        let close = rest.find(')').unwrap();
        let params = rest[open + 1..close]
            .split(',')
            .map(|p| p.split_whitespace().next().unwrap_or("").to_string())
            .filter(|p| !p.is_empty())
            .collect();
        out.insert(rest[..open].to_string(), (ret, params));
    }
    out
}

/// The undefined symbols of an object or archive member list (`nm -u`), or the defined
/// global text symbols (`nm -g --defined-only`).
fn nm(path: &Path, args: &[&str]) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(args)
        .arg(path)
        .output()
        .expect("nm runs");
    assert!(out.status.success(), "nm {}", path.display());
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect()
}

#[test]
fn entry_points_are_unique_and_well_formed() {
    let mut names = BTreeSet::new();
    for e in ENTRY_POINTS {
        assert!(names.insert(e.name), "{} listed twice", e.name);
        assert!(e.name.starts_with("irisc_rt_"), "{}", e.name);
    }
    assert!(
        !names.contains("irisc_rt_xor"),
        "irisc_rt_xor is used by nothing"
    );
}

#[test]
fn contract_and_dialect_agree() {
    let dialect = dialect_ops();
    assert!(dialect.len() > 30, "parsed {} ops", dialect.len());
    let mut implemented = BTreeSet::new();
    for e in ENTRY_POINTS {
        match e.implements {
            Implements::Mpc(ops) | Implements::Role(ops) => {
                for op in ops {
                    assert!(
                        dialect.contains(*op),
                        "{} implements mpc.{op}, which dialects/mpc.irdl.mlir does not define",
                        e.name
                    );
                    implemented.insert(op.to_string());
                }
            }
            // Steps of the tiled scan that are no op: were the dialect to define one, its entry
            // would have to say `mpc[...]`.
            Implements::Tiling(op) => {
                assert!(
                    !dialect.contains(op),
                    "{} is listed as a tiling step but mpc.{op} is an op of the dialect",
                    e.name
                );
            }
            Implements::Schedule => {}
        }
    }
    for op in STRUCTURAL_OPS {
        assert!(
            dialect.contains(*op),
            "structural op mpc.{op} is not in the dialect"
        );
        assert!(
            !implemented.contains(*op),
            "structural op mpc.{op} has an entry point"
        );
        implemented.insert(op.to_string());
    }
    let missing: Vec<_> = dialect.difference(&implemented).collect();
    assert!(
        missing.is_empty(),
        "ops of the dialect without an entry point: {missing:?}"
    );
}

#[test]
fn emitted_code_calls_the_contract() {
    let irisc = env!("CARGO_BIN_EXE_irisc");
    let contract: BTreeMap<&str, &EntryPoint> = ENTRY_POINTS.iter().map(|e| (e.name, e)).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut examples: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "irs"))
        .collect();
    examples.sort();
    assert!(!examples.is_empty());
    let mut called = BTreeSet::new();
    for ex in &examples {
        let llvm = Command::new(irisc)
            .args(["build", "--emit=llvm"])
            .arg(ex)
            .output()
            .unwrap();
        assert!(
            llvm.status.success(),
            "{}: {}",
            ex.display(),
            String::from_utf8_lossy(&llvm.stderr)
        );
        let decls = declared(&String::from_utf8_lossy(&llvm.stdout));
        assert!(decls.contains_key("irisc_rt_start"), "{}", ex.display());
        for (name, sig) in &decls {
            let e = contract
                .get(name.as_str())
                .unwrap_or_else(|| panic!("{}: {name} is not in the contract", ex.display()));
            assert_eq!(sig, &signature(e), "{}: {name}", ex.display());
        }
        let obj = dir.path().join("p.o");
        let built = Command::new(irisc)
            .args(["build", "--emit=obj", "-o"])
            .arg(&obj)
            .arg(ex)
            .output()
            .unwrap();
        assert!(built.status.success(), "{}", ex.display());
        let undefined: BTreeSet<String> = nm(&obj, &["-u"])
            .into_iter()
            .filter(|s| s.starts_with("irisc_rt_"))
            .collect();
        for s in &undefined {
            assert!(
                decls.contains_key(s),
                "{}: the object references {s}, which its module does not declare",
                ex.display()
            );
        }
        called.extend(undefined);
    }
    // The examples exercise the frame and the common ops.
    for s in [
        "irisc_rt_start",
        "irisc_rt_finish",
        "irisc_rt_next_batch",
        "irisc_rt_msb",
    ] {
        assert!(called.contains(s), "no example calls {s}");
    }
}

#[test]
fn runtime_library_exports_the_contract() {
    let lib = irisc::codegen::link::find_runtime_lib().expect("the runtime library is built");
    let defined = nm(&lib, &["-g", "--defined-only"]);
    for e in ENTRY_POINTS {
        assert!(
            defined.contains(e.name),
            "{} does not export {} (rebuild it: cargo build -p irisc-runtime)",
            lib.display(),
            e.name
        );
    }
}
