//! Linking the generated object with the runtime static library into one executable.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The runtime archive's file name.
pub const RUNTIME_LIB: &str = "libirisc_runtime.a";

/// The system libraries the Rust runtime archive needs (`rustc --print native-static-libs`).
pub const NATIVE_LIBS: &[&str] = &[
    "-lgcc_s",
    "-lutil",
    "-lrt",
    "-lpthread",
    "-lm",
    "-ldl",
    "-lc",
];

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error(
        "cannot find the irisc runtime library {RUNTIME_LIB}; tried: {tried}. \
         Run `cargo build -p irisc-runtime` (it builds next to `irisc`), or set IRISC_RUNTIME_LIB to its path"
    )]
    RuntimeNotFound { tried: String },
    #[error("cannot run the system linker `cc`: {0}; install a C toolchain (e.g. `apt-get install build-essential`)")]
    NoLinker(std::io::Error),
    #[error("linking {output} failed ({status}):\n{stderr}")]
    Failed {
        output: String,
        status: String,
        stderr: String,
    },
}

/// Where the runtime archive is: `$IRISC_RUNTIME_LIB`, else next to the running executable
/// (its directory, then the parent: `target/debug/deps/..` when run from a test).
pub fn find_runtime_lib() -> Result<PathBuf, LinkError> {
    let env = std::env::var_os("IRISC_RUNTIME_LIB").map(PathBuf::from);
    let exe_dir = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(Path::to_path_buf));
    search(env, exe_dir)
}

fn search(env: Option<PathBuf>, exe_dir: Option<PathBuf>) -> Result<PathBuf, LinkError> {
    let mut candidates = Vec::new();
    if let Some(p) = env {
        candidates.push(p);
    }
    if let Some(dir) = exe_dir {
        candidates.push(dir.join(RUNTIME_LIB));
        if let Some(parent) = dir.parent() {
            candidates.push(parent.join(RUNTIME_LIB));
        }
    }
    if let Some(found) = candidates.iter().find(|p| p.is_file()) {
        return Ok(found.clone());
    }
    let tried = candidates
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ");
    Err(LinkError::RuntimeNotFound {
        tried: if tried.is_empty() {
            "nothing (no IRISC_RUNTIME_LIB, no executable path)".into()
        } else {
            tried
        },
    })
}

/// The `cc` command that links `object` and `runtime` into `output`.
pub fn link_command(object: &Path, runtime: &Path, output: &Path) -> Command {
    let mut cc = Command::new("cc");
    cc.arg("-o")
        .arg(output)
        .arg(object)
        .arg(runtime)
        .arg("-Wl,--gc-sections")
        .args(NATIVE_LIBS);
    cc
}

/// Links `object` with the runtime archive into the executable `output`.
pub fn link(object: &Path, output: &Path) -> Result<(), LinkError> {
    let runtime = find_runtime_lib()?;
    let out = link_command(object, &runtime, output)
        .output()
        .map_err(LinkError::NoLinker)?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LinkError::Failed {
            output: output.display().to_string(),
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explains_where_it_looked() {
        let dir = tempfile::tempdir().unwrap();
        let exe_dir = dir.path().join("debug");
        let err = search(Some(dir.path().join("nope.a")), Some(exe_dir.clone()))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("nope.a")
                && err.contains(&exe_dir.join(RUNTIME_LIB).display().to_string()),
            "{err}"
        );
        assert!(err.contains("cargo build -p irisc-runtime"), "{err}");
    }

    #[test]
    fn finds_the_archive_next_to_the_executable_or_its_parent() {
        let dir = tempfile::tempdir().unwrap();
        let exe_dir = dir.path().join("deps");
        std::fs::create_dir(&exe_dir).unwrap();
        std::fs::write(dir.path().join(RUNTIME_LIB), b"!<arch>\n").unwrap();
        assert_eq!(
            search(None, Some(exe_dir)).unwrap(),
            dir.path().join(RUNTIME_LIB)
        );
    }

    #[test]
    fn link_command_garbage_collects_sections() {
        let cmd = link_command(Path::new("a.o"), Path::new("lib.a"), Path::new("out"));
        let args: Vec<_> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            &args[..5],
            ["-o", "out", "a.o", "lib.a", "-Wl,--gc-sections"]
        );
        assert!(args.iter().any(|a| a == "-lpthread"));
    }
}
