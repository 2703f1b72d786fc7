//! Helpers for end-to-end tests: build a program with the real `irisc`, create keys and shares
//! with the real subcommands, and run the three parties as separate OS processes over TLS.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::{Duration, Instant};

use irisc_runtime::io::ndjson;
use irisc_runtime::iris::IrisRecord as Record;

pub fn irisc() -> Command {
    Command::new(env!("CARGO_BIN_EXE_irisc"))
}

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

pub fn example(name: &str) -> PathBuf {
    repo().join("examples").join(name)
}

/// Runs `irisc ARGS`, panicking with its stderr when it fails.
pub fn irisc_ok(args: &[&str]) -> Output {
    let out = irisc().args(args).output().expect("irisc runs");
    assert!(
        out.status.success(),
        "irisc {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Distinct port ranges for tests running in parallel in this process.
static NEXT_PORT: AtomicU16 = AtomicU16::new(0);

/// The first of three consecutive loopback ports that are free now, distinct from the ones other
/// tests of this process took (below the usual ephemeral range, so outgoing connections of other
/// programs rarely take them meanwhile).
pub fn base_port() -> u16 {
    loop {
        let slot = NEXT_PORT.fetch_add(1, Ordering::SeqCst);
        let base = 20000 + (std::process::id() as u16 % 100) * 120 + slot * 3;
        assert!(base < 32700, "ran out of test ports");
        let free = (0..3).all(|i| std::net::TcpListener::bind(("127.0.0.1", base + i)).is_ok());
        if free {
            return base;
        }
    }
}

/// A built program with keys, in its own folder.
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub exe: PathBuf,
    pub config: PathBuf,
}

/// The choices these tests build with: replicated sharing, so that ring mismatches are what
/// the bad-input tests provoke (the sharings and variants have their own tests).
pub const PLAN: [&str; 2] = ["--sharing", "rep3"];

pub fn setup(program: &Path) -> Setup {
    setup_with(program, &[])
}

/// [`setup`] with `extra` choices of the build after [`PLAN`] (e.g. `--msb-input additive`).
pub fn setup_with(program: &Path, extra: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("prog");
    let mut args = vec![
        "build",
        program.to_str().unwrap(),
        "-o",
        exe.to_str().unwrap(),
        PLAN[0],
        PLAN[1],
    ];
    args.extend_from_slice(extra);
    irisc_ok(&args);
    Setup {
        config: keys_in(dir.path()),
        exe,
        dir,
    }
}

/// Makes the three parties' keys in `dir/keys` (`irisc keys`, on this test's ports) and returns
/// the path of their `parties.toml`.
pub fn keys_in(dir: &Path) -> PathBuf {
    let keys = dir.join("keys");
    irisc_ok(&[
        "keys",
        "-o",
        keys.to_str().unwrap(),
        "--base-port",
        &base_port().to_string(),
    ]);
    keys.join("parties.toml")
}

impl Setup {
    /// Writes the records as NDJSON and shares them for `program`; returns the three files.
    pub fn share(
        &self,
        program: &Path,
        flag: &str,
        name: &str,
        records: &[Record],
    ) -> [PathBuf; 3] {
        let plain = self.dir.path().join(format!("{name}.ndjson"));
        ndjson::write_file(&plain, records).unwrap();
        let out = self.dir.path().join(format!("{name}-shares"));
        let _ = std::fs::remove_dir_all(&out);
        irisc_ok(&[
            "share",
            flag,
            plain.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--program",
            program.to_str().unwrap(),
            PLAN[0],
            PLAN[1],
        ]);
        let stem = if flag == "--db" { "db" } else { "query" };
        [0, 1, 2].map(|p| out.join(format!("{stem}.p{p}.shr")))
    }

    pub fn spawn(&self, party: usize, db: &Path, query: &Path, extra: &[&str]) -> Child {
        self.spawn_exe(&self.exe, party, db, query, extra)
    }

    /// [`Setup::spawn`] with another build `exe` of the program, on these keys.
    pub fn spawn_exe(
        &self,
        exe: &Path,
        party: usize,
        db: &Path,
        query: &Path,
        extra: &[&str],
    ) -> Child {
        Command::new(exe)
            .args([
                "--party",
                &party.to_string(),
                "--config",
                self.config.to_str().unwrap(),
            ])
            .args([
                "--db",
                db.to_str().unwrap(),
                "--query",
                query.to_str().unwrap(),
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("party starts")
    }

    /// Runs all three parties and returns their outputs in party order.
    pub fn run_three(
        &self,
        db: &[PathBuf; 3],
        query: &[PathBuf; 3],
        extra: &[&str],
    ) -> Vec<Output> {
        let children: Vec<Child> = (0..3)
            .map(|p| self.spawn(p, &db[p], &query[p], extra))
            .collect();
        children
            .into_iter()
            .map(|c| wait_bounded(c, Duration::from_secs(120)))
            .collect()
    }
}

/// Waits for a process at most `limit`; a process still running then is a hang and fails the test.
pub fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "process hung for more than {limit:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

pub fn stdout_json(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l:?}: {e}")))
        .collect()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
