//! Killing a party (SIGKILL) at a random point of a run: every surviving party must exit
//! non-zero by itself (never 141, SIGPIPE's status, never by a signal), within a bounded time,
//! with a line on stderr naming the dead party. 30 runs, each party killed in turn; the delays
//! come from a seeded generator (`IRISC_KILL_SEED` overrides the seed), printed with the
//! figures.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common;
use crate::party::{reasons, shared_inputs, stderr_lines, wait_for_line};

const RUNS: usize = 30;
/// The longest a survivor may take to stop after the kill: its receive timeout is far above
/// this, so it must notice the closed link (or a peer's abort frame) by itself.
const BOUND: Duration = Duration::from_secs(10);
/// The latest point of a kill, as a fraction of an undisturbed run's length after connecting
/// (measured first): every kill falls well inside the run, on a fast machine as on a slow one.
const LATEST_KILL: f64 = 0.6;

/// xorshift64*: enough to spread the kill points, reproducible from the printed seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

#[test]
fn every_survivor_of_a_killed_party_stops_with_a_line_naming_it() {
    let seed: u64 = std::env::var("IRISC_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20261123);
    println!("kill test: seed {seed} (set IRISC_KILL_SEED to repeat a run)");
    let mut rng = Rng(seed | 1);
    let program = common::example("small_ids.irs");
    let setup = common::setup(&program);
    // 600 queries x 3000 records: a run of a second or more.
    let (db, q) = shared_inputs(&setup, 3000, 600);

    // One undisturbed run first: it must succeed, and its length after connecting bounds the
    // kill points.
    let calibration = {
        let mut children: Vec<_> = (0..3)
            .map(|p| {
                let extra: &[&str] = if p == 0 {
                    &["--timeout", "60", "--verbose", "--quiet"]
                } else {
                    &["--timeout", "60", "--quiet"]
                };
                setup.spawn(p, &db[p], &q[p], extra)
            })
            .collect();
        let lines = stderr_lines(&mut children[0]);
        wait_for_line(
            &lines,
            "connected to the other two parties",
            Duration::from_secs(60),
        );
        let connected = Instant::now();
        for (p, c) in children.into_iter().enumerate() {
            let out = common::wait_bounded(c, Duration::from_secs(120));
            assert!(
                out.status.success(),
                "undisturbed run: party {p} failed:\n{}",
                common::stderr(&out)
            );
        }
        connected.elapsed()
    };
    let max_delay_ms = (calibration.as_secs_f64() * LATEST_KILL * 1000.0) as u64;
    println!(
        "kill test: an undisturbed run lasts {:.3} s after connecting; kills within the first {max_delay_ms} ms",
        calibration.as_secs_f64()
    );
    assert!(
        max_delay_ms >= 100,
        "the run is too short ({calibration:?}) to be killed at random points"
    );

    let mut killed = [0usize; 3];
    let mut codes = std::collections::BTreeMap::<i32, usize>::new();
    let mut slowest = Duration::ZERO;
    let mut failures = Vec::new();
    let started = Instant::now();
    for run in 0..RUNS {
        let victim = run % 3;
        let delay = Duration::from_millis(rng.next() % (max_delay_ms + 1));
        let mut children: Vec<_> = (0..3)
            .map(|p| {
                let extra: &[&str] = if p == victim {
                    &["--timeout", "60", "--verbose", "--quiet"]
                } else {
                    &["--timeout", "60", "--quiet"]
                };
                setup.spawn(p, &db[p], &q[p], extra)
            })
            .collect();
        let lines = stderr_lines(&mut children[victim]);
        wait_for_line(
            &lines,
            "connected to the other two parties",
            Duration::from_secs(60),
        );
        std::thread::sleep(delay);
        assert!(
            children[victim].try_wait().unwrap().is_none(),
            "run {run}: party {victim} ended before its kill at {delay:?}"
        );
        let pid = children[victim].id().to_string();
        let status = Command::new("kill").args(["-KILL", &pid]).status().unwrap();
        assert!(status.success());
        let killed_at = Instant::now();
        let mut v = children.remove(victim);
        let _ = v.wait();
        killed[victim] += 1;
        for (i, c) in children.into_iter().enumerate() {
            let p = if i < victim { i } else { i + 1 };
            let out = common::wait_bounded(c, BOUND + Duration::from_secs(20));
            let took = killed_at.elapsed();
            slowest = slowest.max(took);
            let err = common::stderr(&out);
            let code = out.status.code();
            *codes.entry(code.unwrap_or(-1)).or_default() += 1;
            let named = reasons(&err).iter().any(|l| {
                l.starts_with(&format!("small_ids party {p}: "))
                    && l.contains(&format!("party {victim} "))
            });
            let why = match code {
                None => Some("ended by a signal".to_string()),
                Some(0) => Some("succeeded although a party was killed".into()),
                Some(141) => Some("died of SIGPIPE (141)".into()),
                Some(_) if took > BOUND => Some(format!("took {took:?}")),
                Some(_) if !named => Some("no line naming the killed party".into()),
                Some(_) if reasons(&err).len() != 1 => Some("not exactly one line".into()),
                Some(_) => None,
            };
            if let Some(why) = why {
                failures.push(format!(
                    "run {run} (party {victim} killed {delay:?} after connecting): party {p} {why}; stderr:\n{err}"
                ));
            }
        }
    }
    println!(
        "kill test: {RUNS} runs in {:.1} s; killed party 0/1/2: {}/{}/{}; survivors' exit codes: {}; max time to exit after the kill: {:.3} s",
        started.elapsed().as_secs_f64(),
        killed[0],
        killed[1],
        killed[2],
        codes
            .iter()
            .map(|(c, n)| format!("{c} x{n}"))
            .collect::<Vec<_>>()
            .join(", "),
        slowest.as_secs_f64()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
