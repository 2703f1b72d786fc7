//! The executables irisc generates link no benchmark code: the benchmarks live in this crate,
//! not in `irisc-runtime` (the archive linked into every executable) nor in `irisc`.
//!
//! The test builds the runtime archive afresh (so it reflects the sources), compiles an example
//! with the irisc library as `irisc build` does, linking that archive, and reads the symbol
//! tables with `nm`.

use std::path::{Path, PathBuf};
use std::process::Command;

use irisc::analysis::plan::PlanOptions;
use irisc::codegen::Emit;
use irisc::driver::pipeline;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the bench crate sits in the workspace")
        .to_path_buf()
}

/// Builds `libirisc_runtime.a` in this test's profile (cargo builds a dependency's rlib, not
/// its staticlib) and returns its path.
fn fresh_runtime_archive() -> PathBuf {
    let root = workspace_root();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let release = !cfg!(debug_assertions);
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&root)
        .args(["build", "-p", "irisc-runtime"]);
    // The variables cargo sets for a test process (package metadata, the library path) would
    // change the fingerprints of build scripts that read them: the runtime's dependencies would
    // be rebuilt here and again by the next plain build.
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        let set_by_cargo_test =
            (k.starts_with("CARGO_") && k != "CARGO_HOME" && k != "CARGO_TARGET_DIR")
                || k == "LD_LIBRARY_PATH"
                || k == "OUT_DIR";
        if set_by_cargo_test {
            cmd.env_remove(k);
        }
    }
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().expect("cargo runs");
    assert!(status.success(), "cargo build -p irisc-runtime failed");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let lib = target
        .join(if release { "release" } else { "debug" })
        .join("libirisc_runtime.a");
    assert!(lib.exists(), "{} missing", lib.display());
    lib
}

/// The demangled symbol names `nm` lists for `file`.
fn symbols(file: &Path) -> Vec<String> {
    let out = Command::new("nm")
        .args(["-C", "--format=just-symbols"])
        .arg(file)
        .output()
        .expect("nm runs");
    assert!(
        out.status.success(),
        "nm {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Symbols that name benchmark code. LLVM's exception tables (`GCC_except_table<N>`) are
/// numbered and say nothing about what they belong to.
fn bench_symbols(symbols: &[String]) -> Vec<&String> {
    symbols
        .iter()
        .filter(|s| !s.starts_with("GCC_except_table"))
        .filter(|s| {
            let l = s.to_ascii_lowercase();
            l.contains("bench") || l.contains("table2")
        })
        .collect()
}

#[test]
fn generated_executables_link_no_bench_code() {
    let archive = fresh_runtime_archive();
    let archive_symbols = symbols(&archive);
    assert!(
        archive_symbols.iter().any(|s| s.contains("irisc_rt_")),
        "the runtime archive exports no irisc_rt_ entry point: nm read nothing useful"
    );
    assert_eq!(
        bench_symbols(&archive_symbols),
        Vec::<&String>::new(),
        "the runtime archive carries benchmark code"
    );

    let dir = tempfile::tempdir().unwrap();
    let program = workspace_root().join("examples/small_ids.irs");
    let checked = pipeline::read_and_check(&program).unwrap();
    let planned = pipeline::plan(&checked, &PlanOptions::default()).unwrap();
    let exe = dir.path().join("small_ids");
    // The linker takes the archive just built (the other test of this file reads no environment).
    std::env::set_var("IRISC_RUNTIME_LIB", &archive);
    pipeline::compile(&checked, &planned, Emit::Exe, Some(exe.clone()), false).unwrap();
    let exe_symbols = symbols(&exe);
    assert!(
        exe_symbols.iter().any(|s| s.contains("irisc_rt_")),
        "the executable links no runtime entry point: nm read nothing useful"
    );
    assert_eq!(
        bench_symbols(&exe_symbols),
        Vec::<&String>::new(),
        "the generated executable links benchmark code"
    );
}

/// The filter finds what it looks for (so the test above can fail).
#[test]
fn the_symbol_filter_finds_bench_code() {
    let s: Vec<String> = [
        "irisc_runtime::bench::table2::run",
        "GCC_except_table2",
        "irisc_rt_open",
        "irisc_bench::dot::run",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(
        bench_symbols(&s),
        vec!["irisc_runtime::bench::table2::run", "irisc_bench::dot::run"]
    );
}
