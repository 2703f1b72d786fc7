//! A deadline on every potentially blocking CUDA call, so that a party never hangs on its GPU.
//!
//! A CUDA call that blocks (a synchronize on a kernel that never ends, a copy behind it, a
//! module load in a wedged driver, `cuInit` on a card that fell off the bus) cannot be
//! cancelled: the driver offers no way to interrupt a call in progress, and the thread in it
//! cannot be unwound. So the honest design is a watchdog thread: each blocking call runs
//! inside [`Watchdog::watch`], which arms a deadline (`IRISC_GPU_TIMEOUT_S`, default
//! [`DEFAULT_TIMEOUT`]) for the call and disarms it when the call returns. If a deadline
//! passes, the watchdog prints the party's one line saying why it stops ("the GPU did not
//! answer within N s (blocked in <what>)"), marks the answers printed so far as partial, tells
//! the peers with an abort frame (as a signal does, `party::stop`), and ends the process with
//! [`EXIT_CODE`] without running destructors (`_exit`: a destructor could block on the same
//! driver). Deadlines are per call, so a long scan of many short calls never trips it.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::error::RuntimeError;

/// The environment variable with the deadline of one blocking CUDA call, in seconds.
pub const TIMEOUT_ENV: &str = "IRISC_GPU_TIMEOUT_S";
/// The deadline without [`TIMEOUT_ENV`]: long enough for the largest chunk's upload and split
/// on a busy card, short enough that a wedged GPU stops the run in minutes.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The exit status of a party whose GPU did not answer (as `timeout(1)`'s).
pub const EXIT_CODE: i32 = 124;

/// The deadline for a value of [`TIMEOUT_ENV`] (`None`: unset or empty): positive seconds,
/// fractions allowed, at most a day.
pub fn timeout_from_env(v: Option<&str>) -> Result<Duration, String> {
    let Some(s) = v.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(DEFAULT_TIMEOUT);
    };
    match s.parse::<f64>() {
        Ok(secs) if secs > 0.0 && secs <= 86_400.0 => Ok(Duration::from_secs_f64(secs)),
        _ => Err(format!(
            "{TIMEOUT_ENV}={s}: expected the seconds one GPU call may block (a number in 0..=86400, \
             above 0)"
        )),
    }
}

/// The line the watchdog prints: the GPU did not answer within `limit` while `what`.
pub fn expiry_message(limit: Duration, what: &str) -> String {
    let secs = limit.as_secs_f64();
    let n = if secs.fract() == 0.0 {
        format!("{secs:.0}")
    } else {
        format!("{secs}")
    };
    format!(
        "the GPU did not answer within {n} s (blocked in {what}); raise {TIMEOUT_ENV} if the \
         card is only slow"
    )
}

/// What happens when a deadline passes: gets the message. In a party it ends the process.
/// What the watchdog does when a deadline passes (the party's: end the process, saying why).
pub type Expiry = Arc<dyn Fn(String) + Send + Sync>;

#[derive(Default)]
struct Armed {
    next: u64,
    /// Armed calls: id -> (deadline, what).
    calls: BTreeMap<u64, (Instant, String)>,
    shutdown: bool,
}

struct Shared {
    armed: Mutex<Armed>,
    wake: Condvar,
    limit: Duration,
    expiry: Expiry,
}

/// The deadline keeper of one GPU session. Cloning shares it; the thread ends when the last
/// clone is dropped.
#[derive(Clone)]
pub struct Watchdog {
    shared: Arc<Shared>,
    _owner: Arc<Owner>,
}

/// Stops the watchdog's thread when the last [`Watchdog`] goes.
struct Owner(Arc<Shared>);

impl Drop for Owner {
    fn drop(&mut self) {
        if let Ok(mut a) = self.0.armed.lock() {
            a.shutdown = true;
        }
        self.0.wake.notify_all();
    }
}

impl Watchdog {
    /// A watchdog with the deadline of [`TIMEOUT_ENV`] whose expiry is the party's `end`
    /// (which ends the process with [`EXIT_CODE`]).
    pub fn for_party(end: Expiry) -> Result<Watchdog, RuntimeError> {
        let limit = timeout_from_env(std::env::var(TIMEOUT_ENV).ok().as_deref())
            .map_err(RuntimeError::Usage)?;
        Watchdog::start(limit, end)
    }

    /// A watchdog with deadline `limit` per call, running `expiry` on the first that passes.
    pub fn start(limit: Duration, expiry: Expiry) -> Result<Watchdog, RuntimeError> {
        let shared = Arc::new(Shared {
            armed: Mutex::new(Armed::default()),
            wake: Condvar::new(),
            limit,
            expiry,
        });
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name("irisc-gpu-watchdog".into())
            .spawn(move || keep(&thread_shared))
            .map_err(|e| RuntimeError::Setup(format!("cannot start the GPU watchdog: {e}")))?;
        Ok(Watchdog {
            _owner: Arc::new(Owner(shared.clone())),
            shared,
        })
    }

    /// The deadline of one call.
    pub fn limit(&self) -> Duration {
        self.shared.limit
    }

    /// Runs `f` (one potentially blocking CUDA call, described by `what`: "copying the
    /// gallery to the GPU") under the deadline.
    pub fn watch<T>(&self, what: &str, f: impl FnOnce() -> T) -> T {
        let id = self.arm(what);
        let out = f();
        self.disarm(id);
        out
    }

    fn arm(&self, what: &str) -> Option<u64> {
        let mut a = self.shared.armed.lock().ok()?;
        let id = a.next;
        a.next += 1;
        a.calls
            .insert(id, (Instant::now() + self.shared.limit, what.to_string()));
        drop(a);
        self.shared.wake.notify_all();
        Some(id)
    }

    fn disarm(&self, id: Option<u64>) {
        if let (Some(id), Ok(mut a)) = (id, self.shared.armed.lock()) {
            a.calls.remove(&id);
        }
    }
}

/// The watchdog's thread: sleeps until the earliest deadline; runs the expiry when one passes.
fn keep(shared: &Shared) {
    let Ok(mut a) = shared.armed.lock() else {
        return;
    };
    loop {
        if a.shutdown {
            return;
        }
        let earliest = a.calls.values().min_by_key(|(d, _)| *d).cloned();
        let Some((deadline, what)) = earliest else {
            a = match shared.wake.wait(a) {
                Ok(a) => a,
                Err(_) => return,
            };
            continue;
        };
        let now = Instant::now();
        if now >= deadline {
            drop(a);
            (shared.expiry)(expiry_message(shared.limit, &what));
            // An expiry that returns (a test's) stops watching.
            return;
        }
        a = match shared.wake.wait_timeout(a, deadline - now) {
            Ok((a, _)) => a,
            Err(_) => return,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn the_timeout_comes_from_the_environment_and_is_checked() {
        assert_eq!(timeout_from_env(None), Ok(DEFAULT_TIMEOUT));
        assert_eq!(timeout_from_env(Some(" ")), Ok(DEFAULT_TIMEOUT));
        assert_eq!(
            timeout_from_env(Some("2.5")),
            Ok(Duration::from_millis(2500))
        );
        for bad in ["0", "-1", "x", "1e9", "NaN"] {
            let e = timeout_from_env(Some(bad)).unwrap_err();
            assert!(e.starts_with(&format!("{TIMEOUT_ENV}={bad}:")), "{e}");
        }
    }

    #[test]
    fn the_expiry_line_names_the_limit_and_the_call() {
        assert_eq!(
            expiry_message(
                Duration::from_secs(120),
                "synchronizing after the dot kernel"
            ),
            "the GPU did not answer within 120 s (blocked in synchronizing after the dot \
             kernel); raise IRISC_GPU_TIMEOUT_S if the card is only slow"
        );
        assert!(expiry_message(Duration::from_millis(1500), "x").contains("within 1.5 s"));
    }

    fn watchdog(limit: Duration) -> (Watchdog, mpsc::Receiver<String>) {
        let (tx, rx) = mpsc::channel();
        let tx = Mutex::new(tx);
        let w = Watchdog::start(
            limit,
            Arc::new(move |m| {
                let _ = tx.lock().unwrap().send(m);
            }),
        )
        .unwrap();
        (w, rx)
    }

    #[test]
    fn a_call_past_its_deadline_fires_once_with_what_it_was() {
        let (w, rx) = watchdog(Duration::from_millis(50));
        let out = w.watch("copying the gallery to the GPU", || {
            std::thread::sleep(Duration::from_millis(400));
            7
        });
        assert_eq!(out, 7);
        let m = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(
            m.contains("within 0.05 s (blocked in copying the gallery to the GPU)"),
            "{m}"
        );
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
    }

    #[test]
    fn calls_within_their_deadline_never_fire() {
        let (w, rx) = watchdog(Duration::from_millis(300));
        for _ in 0..20 {
            w.watch("a short call", || {
                std::thread::sleep(Duration::from_millis(20))
            });
        }
        // 20 short calls take longer than one deadline altogether: deadlines are per call.
        assert!(rx.recv_timeout(Duration::from_millis(500)).is_err());
        drop(w);
    }
}
