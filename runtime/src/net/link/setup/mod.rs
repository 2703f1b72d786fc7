//! Setting up the links: listening, dialling and accepting, the TLS handshake, the hello
//! exchange that checks each peer's certificate, party index and session, and [`SetupError`] for
//! everything that can go wrong on the way.
//!
//! Split by concept: this file holds [`SetupError`], [`Links`] and [`establish`], which runs both
//! sides and picks the root cause when links fail, plus small helpers they share; `hello` holds
//! the wire format of the hello exchange, `dial` the dialling side and `accept` the accepting side.

mod accept;
mod dial;
mod hello;

use std::io;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustls::{ClientConnection, ServerConnection, StreamOwned};

use super::{is_closed, is_timeout, secs};
use crate::net::config::{index_list, ConfigError, PartiesConfig};
use crate::net::tls::{self, PartyTls, TlsSetupError};

use accept::{accept_peers, Accepted};
use dial::{dial, tell_stop, Dialled};

/// How setup says whom it waits for, on stderr.
#[derive(Debug, Clone, Default)]
pub struct Waiting {
    /// How a line starts, e.g. `iris_ids party 1`.
    pub label: Option<String>,
    /// Say it at once, not only after [`WAITING_EVERY`].
    pub at_once: bool,
}

/// How often a party still waiting for a peer says so.
pub const WAITING_EVERY: Duration = Duration::from_secs(3);

/// Tells every peer of party `me` that it stops, and why, so they report `reason` at once
/// instead of waiting for it until their timeout: for a party that fails before it joins
/// (its inputs do not load). Best effort, bounded by `bound` (and the setup timeout); peers
/// not reachable by then are left to find out by themselves.
pub fn tell_peers_we_stop(cfg: &PartiesConfig, me: usize, reason: &str, bound: Duration) {
    if me >= cfg.count() {
        return;
    }
    let Ok(tls) = PartyTls::load(cfg, me) else {
        return;
    };
    let deadline = Instant::now() + bound.min(cfg.timeout);
    std::thread::scope(|s| {
        for j in peers_of(me, cfg.count()) {
            let tls = &tls;
            s.spawn(move || {
                if let Err(e) = tell_stop(cfg, tls, me, j, reason, deadline) {
                    tracing::debug!(party = me, peer = j, error = %e, "could not tell the peer");
                }
            });
        }
    });
}

/// The peers of party `me` in a run of `n` parties, from the next one on: `me + 1`, `me + 2`,
/// ... mod `n` (for three parties `next` then `prev`, the order setup has always used).
fn peers_of(me: usize, n: usize) -> Vec<usize> {
    (1..n).map(|k| (me + k) % n).collect()
}

/// `a`, `a and b`, `a, b and c`: how a message lists parties.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [first @ .., last] => format!("{} and {last}", first.join(", ")),
    }
}

/// Largest session identifier `connect` accepts (it travels in the hello frame).
pub const MAX_SESSION: usize = 64 * 1024;

/// Why the links between the parties could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Tls(#[from] TlsSetupError),
    /// `parties` is the number of parties in `parties.toml`.
    #[error("party index {me} is out of range (parties are {})", index_list(*parties))]
    BadParty { me: usize, parties: usize },
    #[error("the session identifier is {len} bytes; at most {MAX_SESSION} are allowed")]
    SessionTooLong { len: usize },
    #[error("cannot listen on {address}: {detail}")]
    Listen { address: String, detail: String },
    #[error("could not reach party {peer} at {address} within {}: {last_error}{}", secs(*waited), rejected_note(rejected))]
    Unreachable {
        peer: usize,
        address: String,
        waited: Duration,
        last_error: String,
        rejected: Option<String>,
    },
    #[error("party {peer} did not connect to this party within {}{}", secs(*waited), rejected_note(rejected))]
    NoIncoming {
        peer: usize,
        waited: Duration,
        rejected: Option<String>,
    },
    #[error("{detail}")]
    Handshake { peer: usize, detail: String },
    #[error("the peer claiming to be party {peer} is not: {detail}")]
    WrongPeer { peer: usize, detail: String },
    /// The sessions differ; `detail` names each differing setting and both values; `theirs`
    /// is the peer's session (to tell, with all peers' sessions, which party is the odd one).
    #[error("{detail}")]
    SessionMismatch {
        peer: usize,
        detail: String,
        theirs: Vec<u8>,
    },
    /// The peer cannot take part (it said so in its hello instead of joining).
    #[error("party {peer} stopped: {reason}")]
    PeerStopped { peer: usize, reason: String },
    #[error("party {peer} refused this party: {reason}")]
    Refused { peer: usize, reason: String },
    #[error("party {peer} broke the setup protocol: {detail}")]
    Protocol { peer: usize, detail: String },
    #[error("party {peer} closed the connection during setup (it may have rejected this party: see its output){}", rejected_note(rejected))]
    Dropped {
        peer: usize,
        rejected: Option<String>,
    },
    #[error("link to party {peer} during setup: {detail}")]
    Io { peer: usize, detail: String },
    /// Only seen internally: a link gave up because another one had already failed.
    #[error("setup abandoned because another link failed")]
    Aborted,
}

impl SetupError {
    /// The party this failure is about, if it is about one.
    fn peer(&self) -> Option<usize> {
        match self {
            SetupError::Unreachable { peer, .. }
            | SetupError::NoIncoming { peer, .. }
            | SetupError::Handshake { peer, .. }
            | SetupError::WrongPeer { peer, .. }
            | SetupError::SessionMismatch { peer, .. }
            | SetupError::PeerStopped { peer, .. }
            | SetupError::Refused { peer, .. }
            | SetupError::Protocol { peer, .. }
            | SetupError::Dropped { peer, .. }
            // Callers check the index against their run's party count.
            | SetupError::Io { peer, .. } => Some(*peer),
            _ => None,
        }
    }

    /// Lower is more informative; used to report the root cause when several links fail.
    fn rank(&self) -> u8 {
        match self {
            SetupError::Aborted => 3,
            SetupError::NoIncoming { rejected: None, .. } => 2,
            // A peer that hung up during setup usually failed for a reason of its own, which
            // another link may have told us more precisely.
            SetupError::Unreachable { .. }
            | SetupError::NoIncoming { .. }
            | SetupError::Dropped { .. } => 1,
            _ => 0,
        }
    }
}

fn rejected_note(rejected: &Option<String>) -> String {
    match rejected {
        Some(r) => format!(" (a connection was rejected: {r})"),
        None => String::new(),
    }
}

/// Where setup stands with each peer, shared by the threads that dial, accept and say whom
/// they wait for; indexed by party (one entry per party of the run).
pub(super) struct PeerLinks {
    /// Setup with this peer failed: the other threads stop working on it.
    pub(super) failed: Vec<AtomicBool>,
    /// The link this party dialled is up.
    pub(super) dialled: Vec<AtomicBool>,
    /// The link the peer dialled is up.
    pub(super) accepted: Vec<AtomicBool>,
    /// Rejoining only: this party's attempt (see [`establish`]).
    pub(super) attempt: Option<u64>,
    /// Rejoining only: the attempt of the peer that accepted the link this party dialled.
    pub(super) accepted_by: Vec<Mutex<Option<u64>>>,
    /// Rejoining only: the peer started over since; the dialled link is to be dialled again.
    pub(super) redial: Vec<AtomicBool>,
    /// The accepting side is done: the dialling threads hand over their links.
    pub(super) settled: AtomicBool,
}

impl PeerLinks {
    fn new(parties: usize, attempt: Option<u64>) -> PeerLinks {
        let flags = || (0..parties).map(|_| AtomicBool::new(false)).collect();
        PeerLinks {
            failed: flags(),
            dialled: flags(),
            accepted: flags(),
            attempt,
            accepted_by: (0..parties).map(|_| Mutex::new(None)).collect(),
            redial: flags(),
            settled: AtomicBool::new(false),
        }
    }
}

/// How a party sets up its links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Joining {
    /// Once, for one run: a peer that connects twice breaks the setup protocol.
    Once,
    /// Again and again, as a serving party reconnecting to peers that restart: peers may start
    /// over while the links form (see [`establish`]).
    Rejoin,
}

/// Both directions of the links with every peer, authenticated and checked: what
/// [`TlsTransport::connect`](super::TlsTransport::connect) builds the transport from.
pub(super) struct Links {
    /// The connections this party dialled (it only writes on them), with the peer of each.
    pub(super) outgoing: Vec<(usize, StreamOwned<ClientConnection, TcpStream>)>,
    /// The connections the peers dialled (this party only reads on them), indexed by party.
    pub(super) incoming: Vec<Option<StreamOwned<ServerConnection, TcpStream>>>,
}

/// Sets up the links of party `me`: see [`TlsTransport::connect`](super::TlsTransport::connect).
///
/// Rejoining, the three parties' attempts need not start together: each attempt is tagged with
/// the time it started, hellos and replies carry it, and a party that sees a peer start over
/// (a newer attempt dials in) replaces that peer's incoming link and dials it again, so the
/// links converge on the peers' latest attempts instead of failing each other's attempts.
pub(super) fn establish(
    cfg: &PartiesConfig,
    me: usize,
    session: &[u8],
    waiting: &Waiting,
    joining: Joining,
) -> Result<Links, SetupError> {
    let n = cfg.count();
    if me >= n {
        return Err(SetupError::BadParty { me, parties: n });
    }
    if session.len() > MAX_SESSION {
        return Err(SetupError::SessionTooLong { len: session.len() });
    }
    let tls = PartyTls::load(cfg, me)?;
    let listen = &cfg.parties[me].listen;
    let listener = TcpListener::bind(listen.as_str()).map_err(|e| SetupError::Listen {
        address: listen.clone(),
        detail: e.to_string(),
    })?;
    listener
        .set_nonblocking(true)
        .map_err(|e| SetupError::Listen {
            address: listen.clone(),
            detail: e.to_string(),
        })?;
    let deadline = Instant::now() + cfg.timeout;
    // A failure concerning one peer stops only the work with that peer: the links with the
    // others still complete, so they do not see us vanish mid-setup and blame us instead of
    // the party that is actually misconfigured.
    let attempt = (joining == Joining::Rejoin).then(|| {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
    });
    let peer_links = PeerLinks::new(n, attempt);
    let (failed, dialled_ok, accepted_ok) = (
        &peer_links.failed,
        &peer_links.dialled,
        &peer_links.accepted,
    );
    let setup_done = AtomicBool::new(false);
    let peers = peers_of(me, n);

    let (dialled, accepted) = std::thread::scope(|s| {
        let handles: Vec<_> = peers
            .iter()
            .map(|&j| {
                let tls = &tls;
                let links = &peer_links;
                s.spawn(move || {
                    let r = match attempt {
                        None => dial(cfg, tls, (me, j), session, deadline, &failed[j], None)
                            .map(|(stream, _)| stream),
                        Some(_) => dial_rejoining(cfg, tls, (me, j), session, deadline, links),
                    };
                    if r.is_err() {
                        failed[j].store(true, Ordering::SeqCst);
                    } else {
                        dialled_ok[j].store(true, Ordering::SeqCst);
                    }
                    r
                })
            })
            .collect();
        let done = &setup_done;
        let peers = &peers;
        s.spawn(move || {
            announce_waiting(cfg, me, peers, waiting, done, |j| {
                let up =
                    dialled_ok[j].load(Ordering::SeqCst) && accepted_ok[j].load(Ordering::SeqCst);
                !(failed[j].load(Ordering::SeqCst) || up)
            })
        });
        let accepted = accept_peers(
            &listener,
            &tls,
            cfg.timeout,
            me,
            session,
            deadline,
            &peer_links,
        );
        let dialled: Vec<_> = handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(SetupError::Io {
                        peer: me,
                        detail: "dialling thread panicked".into(),
                    })
                })
            })
            .collect();
        setup_done.store(true, Ordering::SeqCst);
        (dialled, accepted)
    });

    let dial_failed = dialled.iter().any(Result::is_err);
    match accepted {
        Accepted {
            links: incoming,
            error: None,
            ..
        } if !dial_failed => Ok(Links {
            outgoing: peers
                .iter()
                .copied()
                .zip(dialled.into_iter().flatten())
                .collect(),
            incoming,
        }),
        a => {
            // Dialling failures in peer order, then the accepting side's: among equally
            // informative ones the first is reported.
            let mut errors: Vec<Option<SetupError>> =
                dialled.into_iter().map(Result::err).collect();
            errors.push(a.error);
            if let Some(e) = odd_one_out(me, session, &errors, &a.sessions) {
                return Err(e);
            }
            let worst = errors.into_iter().flatten().min_by_key(SetupError::rank);
            Err(match worst {
                // A peer that hung up on us probably also tried to reach us and was turned
                // away: say why, since that is often the actual problem.
                Some(SetupError::Dropped {
                    peer,
                    rejected: None,
                }) => SetupError::Dropped {
                    peer,
                    rejected: a.rejected,
                },
                Some(SetupError::Unreachable {
                    rejected: None,
                    peer,
                    address,
                    waited,
                    last_error,
                }) => SetupError::Unreachable {
                    peer,
                    address,
                    waited,
                    last_error,
                    rejected: a.rejected,
                },
                Some(e) => e,
                None => SetupError::Aborted,
            })
        }
    }
}

/// Rejoining: dials peer `j` (again while it is starting over or restarting, until `deadline`),
/// and holds the link until the accepting side settles, dialling again when it asks to.
fn dial_rejoining(
    cfg: &PartiesConfig,
    tls: &PartyTls,
    (me, j): (usize, usize),
    session: &[u8],
    deadline: Instant,
    links: &PeerLinks,
) -> Result<StreamOwned<ClientConnection, TcpStream>, SetupError> {
    loop {
        let (stream, accepted_by): Dialled = match dial(
            cfg,
            tls,
            (me, j),
            session,
            deadline,
            &links.failed[j],
            links.attempt,
        ) {
            Ok(d) => d,
            // The peer's attempt ended under us (it is starting over): dial again.
            Err(SetupError::Dropped { .. } | SetupError::Io { .. })
                if remaining(deadline).is_some() =>
            {
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
            Err(e) => return Err(e),
        };
        if let Ok(mut a) = links.accepted_by[j].lock() {
            *a = accepted_by;
        }
        links.dialled[j].store(true, Ordering::SeqCst);
        loop {
            if links.settled.load(Ordering::SeqCst) {
                return Ok(stream);
            }
            if links.redial[j].swap(false, Ordering::SeqCst) {
                break;
            }
            if links.failed[j].load(Ordering::SeqCst) || remaining(deadline).is_none() {
                return Err(SetupError::Aborted);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Says on stderr which of `peers` party `me` still waits for (`waits_for(j)`), every
/// [`WAITING_EVERY`] (and at once if asked), until `done`.
fn announce_waiting(
    cfg: &PartiesConfig,
    me: usize,
    peers: &[usize],
    waiting: &Waiting,
    done: &AtomicBool,
    waits_for: impl Fn(usize) -> bool,
) {
    let started = Instant::now();
    let mut next = if waiting.at_once {
        started
    } else {
        started + WAITING_EVERY
    };
    let label = waiting
        .label
        .clone()
        .unwrap_or_else(|| format!("party {me}"));
    while !done.load(Ordering::SeqCst) {
        if Instant::now() >= next {
            let whom: Vec<String> = peers
                .iter()
                .copied()
                .filter(|&j| waits_for(j))
                .map(|j| format!("party {j} at {}", cfg.parties[j].address))
                .collect();
            if !whom.is_empty() {
                crate::say!(
                    "{label}: waiting for {} ({} of at most {})",
                    and_list(&whom),
                    secs(Duration::from_secs(started.elapsed().as_secs())),
                    secs(cfg.timeout)
                );
            }
            next += WAITING_EVERY;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// When every peer refused this party's session and they agree with each other, this party is
/// the one whose settings or files differ: say so from its side, with all peers named. Needs at
/// least two peers: with one, nothing tells which side is the odd one, and the plain mismatch
/// (naming both values) is the report.
fn odd_one_out(
    me: usize,
    mine: &[u8],
    errors: &[Option<SetupError>],
    accepted: &[Option<Vec<u8>>],
) -> Option<SetupError> {
    let n = accepted.len();
    let mut seen: Vec<Option<&[u8]>> = accepted.iter().map(|s| s.as_deref()).collect();
    for e in errors.iter().flatten() {
        if let SetupError::SessionMismatch { peer, theirs, .. } = e {
            if let Some(slot) = seen.get_mut(*peer) {
                *slot = Some(theirs);
            }
        }
    }
    let peers = peers_of(me, n);
    if peers.len() < 2 {
        return None;
    }
    let first = seen[peers[0]]?;
    if !peers.iter().all(|&j| seen[j] == Some(first)) {
        return None;
    }
    Some(SetupError::SessionMismatch {
        peer: peers[0],
        detail: crate::net::session::describe_odd_one(me, mine, &peers, first)?,
        theirs: first.to_vec(),
    })
}

fn remaining(deadline: Instant) -> Option<Duration> {
    deadline
        .checked_duration_since(Instant::now())
        .filter(|d| !d.is_zero())
}

/// Sets both socket timeouts to what is left of the setup bound.
fn bound_socket(sock: &TcpStream, deadline: Instant) -> io::Result<()> {
    let left = remaining(deadline).unwrap_or(Duration::from_millis(1));
    sock.set_read_timeout(Some(left))?;
    sock.set_write_timeout(Some(left))
}

fn setup_io_error(peer: usize, e: &io::Error, timeout: Duration) -> SetupError {
    if let Some(t) = tls::rustls_error(e) {
        return SetupError::Handshake {
            peer,
            detail: tls::explain(t, Some(peer)),
        };
    }
    if is_timeout(e.kind()) {
        return SetupError::Io {
            peer,
            detail: format!(
                "no answer while setting up the link within {}",
                secs(timeout)
            ),
        };
    }
    if is_closed(e.kind()) {
        return SetupError::Dropped {
            peer,
            rejected: None,
        };
    }
    SetupError::Io {
        peer,
        detail: e.to_string(),
    }
}
