//! How a party stops: the one line it prints on stderr saying why, the abort frame that tells
//! its peers, and SIGPIPE, SIGINT and SIGTERM.
//!
//! Every line a party prints starts with [`prefix`]: the program's name and, once known, the
//! party's index (`iris_ids party 1: ...`). Whatever ends a party early (an error, a peer's
//! failure, a signal) goes through [`final_line`], which prints only the first reason: a
//! party that is stopping prints exactly one line about why. A party that stops tells its peers
//! why with an abort frame ([`crate::net::AbortHandle`]), so they report the real cause at
//! once.
//!
//! Signals: the generated `main` is not Rust's, so SIGPIPE would keep its default action (the
//! process dies with status 141, silently, on a write to a closed link); [`install`] ignores
//! it, and a write on a closed link becomes an error naming the peer. SIGINT and SIGTERM are
//! blocked in every thread of the party and taken by one thread with `sigwait`, which prints
//! the line, sends the abort frames and ends the process with 128 + the signal number.

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::net::{AbortHandle, PartiesConfig};

/// How long a stopping party waits for its abort frames to be delivered.
pub const ABORT_BOUND: Duration = Duration::from_secs(2);

static PROGRAM: OnceLock<String> = OnceLock::new();
static PARTY: AtomicUsize = AtomicUsize::new(usize::MAX);
static REPORTED: AtomicBool = AtomicBool::new(false);
/// The text of that line, for the trailer that marks partial answers.
static REASON: Mutex<Option<String>> = Mutex::new(None);
static LINKS: Mutex<Option<AbortHandle>> = Mutex::new(None);
/// The parties file, once read: before the links are up, a stopping party tells its peers
/// through it (a stop hello) instead.
static CONFIG: Mutex<Option<PartiesConfig>> = Mutex::new(None);
/// The signal that stops this party, 0 while none.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// A serving party (`--serve`): SIGTERM drains it instead of ending it at once.
static SERVING: AtomicBool = AtomicBool::new(false);
/// SIGTERM reached a serving party: it finishes the batch in progress and stops.
static DRAINING: AtomicBool = AtomicBool::new(false);
/// How long a draining party may take before it is ended as any party is.
pub const DRAIN_BOUND: std::time::Duration = std::time::Duration::from_secs(30);

/// Marks this party as serving: SIGTERM then drains it ([`draining`]).
pub fn set_serving() {
    SERVING.store(true, Ordering::SeqCst);
}

/// Whether SIGTERM asked this serving party to finish its batch and stop.
pub fn draining() -> bool {
    DRAINING.load(Ordering::SeqCst)
}

/// Records the program's name for [`prefix`] (the first call wins).
pub fn set_program(name: &str) {
    let _ = PROGRAM.set(name.to_string());
    crate::log::set_identity(Some(name), None);
}

/// Records this party's index for [`prefix`].
pub fn set_party(party: usize) {
    PARTY.store(party, Ordering::SeqCst);
    crate::log::set_identity(None, Some(party));
}

/// The program's name, `irisc` before it is known.
pub fn program() -> &'static str {
    PROGRAM.get().map_or("irisc", String::as_str)
}

/// How every line of this party starts: `NAME party P`, or `NAME` before the index is known.
pub fn prefix() -> String {
    match PARTY.load(Ordering::SeqCst) {
        p if p < 3 => format!("{} party {p}", program()),
        _ => program().to_string(),
    }
}

/// Prints `PREFIX: text` unless a line saying why this party stops was already printed;
/// returns whether it printed.
pub fn final_line(text: &str) -> bool {
    if REPORTED.swap(true, Ordering::SeqCst) {
        return false;
    }
    if let Ok(mut r) = REASON.lock() {
        *r = Some(format!("{}: {text}", prefix()));
    }
    crate::say!("{}: {text}", prefix());
    true
}

/// A serving party that recovered from a failed batch: the next failure is said again.
pub fn clear_reported() {
    REPORTED.store(false, Ordering::SeqCst);
    if let Ok(mut r) = REASON.lock() {
        *r = None;
    }
}

/// The line saying why this party stops (with its prefix), once printed.
pub fn reason() -> Option<String> {
    REASON.lock().ok().and_then(|r| r.clone())
}

/// Whether the line saying why this party stops has been printed.
pub fn reported() -> bool {
    REPORTED.load(Ordering::SeqCst)
}

/// Whether SIGINT or SIGTERM is stopping this party (its thread reports and ends the process).
pub fn signalled() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// When a signal is stopping this party: waits for the signal's thread, which tells the peers
/// why and ends the process itself (the party's own thread must not end it first, cutting the
/// abort frames off: the peers would see a link closed without a reason). Bounded, in case that
/// thread cannot finish.
pub fn let_the_signal_thread_end_the_process() {
    if signalled() {
        std::thread::sleep(2 * ABORT_BOUND + Duration::from_secs(1));
    }
}

/// The exit status for a party stopped by a signal (128 + its number), if one is.
pub fn signal_status() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(128 + s),
    }
}

/// Makes the links reachable from the signal thread (`None`: the links are closed; from
/// then on nothing is sent to the peers).
pub fn register_links(links: Option<AbortHandle>) {
    if let Ok(mut l) = LINKS.lock() {
        *l = links;
    }
    if let Ok(mut c) = CONFIG.lock() {
        *c = None;
    }
}

/// Makes the parties file reachable from the signal thread, for a stop before the links are up.
pub fn register_config(config: &PartiesConfig) {
    if let Ok(mut c) = CONFIG.lock() {
        *c = Some(config.clone());
    }
}

/// Sends an abort frame with `reason` to both peers over the registered links, bounded by
/// [`ABORT_BOUND`]; before the links are up, a stop hello through the registered parties file
/// instead; nothing once the links are closed.
pub fn abort_peers(reason: &str) {
    let links = LINKS.lock().ok().and_then(|mut l| l.take());
    let config = CONFIG.lock().ok().and_then(|mut c| c.take());
    match (links, config) {
        (Some(links), _) => links.abort(reason, ABORT_BOUND),
        (None, Some(config)) => {
            let party = PARTY.load(Ordering::SeqCst);
            crate::net::link::tell_peers_we_stop(&config, party, reason, ABORT_BOUND);
        }
        (None, None) => {}
    }
}

/// Ignores SIGPIPE and hands SIGINT and SIGTERM to a thread of their own. Call first, before
/// any other thread starts (threads inherit the blocked signals).
pub fn install() {
    #[cfg(unix)]
    // SAFETY: plain libc calls on a signal set this function owns; `signal` with SIG_IGN and
    // `pthread_sigmask` have no preconditions beyond valid arguments.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        let watcher = std::thread::Builder::new()
            .name("irisc-signals".into())
            .spawn(move || watch(set));
        if watcher.is_err() {
            // Nobody would take the signals: leave them their default action.
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// Waits for SIGINT or SIGTERM; then says so, tells the peers and ends the process.
#[cfg(unix)]
fn watch(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: `set` is a valid signal set and `sig` a valid out pointer.
    while unsafe { libc::sigwait(&set, &mut sig) } != 0 {}
    if sig == libc::SIGTERM && SERVING.load(Ordering::SeqCst) {
        // Graceful: the party's thread finishes the batch in progress, answers the waiting
        // requests with a retryable error and ends with status 0; if it has not within the
        // bound (a peer stalls it), it is ended below like any party.
        crate::say!(
            "{}: SIGTERM: finishing the batch in progress, then stopping",
            prefix()
        );
        DRAINING.store(true, Ordering::SeqCst);
        std::thread::sleep(DRAIN_BOUND);
    }
    SIGNAL.store(sig, Ordering::SeqCst);
    let name = match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        _ => "a signal",
    };
    final_line(&format!("stopped by {name}"));
    // An output party's printed answers are marked as partial before it goes.
    super::output::mark_incomplete_on_signal(
        &format!("{}: stopped by {name}", prefix()),
        ABORT_BOUND,
    );
    abort_peers(&format!("it was stopped by {name}"));
    // SAFETY: ends the process at once; the links were handled above and nothing else must
    // outlive the signal (the party's own thread may be in the middle of a computation).
    unsafe { libc::_exit(128 + sig) }
}
