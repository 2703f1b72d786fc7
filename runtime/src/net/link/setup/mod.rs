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
use std::time::{Duration, Instant};

use rustls::{ClientConnection, ServerConnection, StreamOwned};

use super::{is_closed, is_timeout, secs};
use crate::net::config::{ConfigError, PartiesConfig};
use crate::net::tls::{self, PartyTls, TlsSetupError};

use accept::{accept_peers, Accepted};
use dial::{dial, tell_stop};

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

/// Tells both peers of party `me` that it stops, and why, so they report `reason` at once
/// instead of waiting for it until their timeout: for a party that fails before it joins
/// (its inputs do not load). Best effort, bounded by `bound` (and the setup timeout); peers
/// not reachable by then are left to find out by themselves.
pub fn tell_peers_we_stop(cfg: &PartiesConfig, me: usize, reason: &str, bound: Duration) {
    if me >= 3 {
        return;
    }
    let Ok(tls) = PartyTls::load(cfg, me) else {
        return;
    };
    let deadline = Instant::now() + bound.min(cfg.timeout);
    std::thread::scope(|s| {
        for j in [(me + 1) % 3, (me + 2) % 3] {
            let tls = &tls;
            s.spawn(move || {
                if let Err(e) = tell_stop(cfg, tls, me, j, reason, deadline) {
                    tracing::debug!(party = me, peer = j, error = %e, "could not tell the peer");
                }
            });
        }
    });
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
    #[error("party index {me} is out of range (parties are 0, 1 and 2)")]
    BadParty { me: usize },
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
    /// is the peer's session (to tell, with both peers' sessions, which party is the odd one).
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
            | SetupError::Io { peer, .. } => Some(*peer).filter(|&p| p < 3),
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
/// they wait for; indexed by party.
#[derive(Default)]
pub(super) struct PeerLinks {
    /// Setup with this peer failed: the other threads stop working on it.
    pub(super) failed: [AtomicBool; 3],
    /// The link this party dialled is up.
    pub(super) dialled: [AtomicBool; 3],
    /// The link the peer dialled is up.
    pub(super) accepted: [AtomicBool; 3],
}

/// Both directions of the links with the two peers, authenticated and checked: what
/// [`TlsTransport::connect`](super::TlsTransport::connect) builds the transport from.
pub(super) struct Links {
    /// The connections this party dialled (it only writes on them), with the peer of each.
    pub(super) outgoing: [(usize, StreamOwned<ClientConnection, TcpStream>); 2],
    /// The connections the peers dialled (this party only reads on them), indexed by party.
    pub(super) incoming: [Option<StreamOwned<ServerConnection, TcpStream>>; 3],
}

/// Sets up the links of party `me`: see [`TlsTransport::connect`](super::TlsTransport::connect).
pub(super) fn establish(
    cfg: &PartiesConfig,
    me: usize,
    session: &[u8],
    waiting: &Waiting,
) -> Result<Links, SetupError> {
    if me >= 3 {
        return Err(SetupError::BadParty { me });
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
    // A failure concerning one peer stops only the work with that peer: the link with the
    // other one still completes, so that party does not see us vanish mid-setup and blame us
    // instead of the party that is actually misconfigured.
    let peer_links = PeerLinks::default();
    let (failed, dialled_ok, accepted_ok) = (
        &peer_links.failed,
        &peer_links.dialled,
        &peer_links.accepted,
    );
    let setup_done = AtomicBool::new(false);
    let peers = [(me + 1) % 3, (me + 2) % 3];

    let (dialled, accepted) = std::thread::scope(|s| {
        let handles = peers.map(|j| {
            let tls = &tls;
            s.spawn(move || {
                let r = dial(cfg, tls, me, j, session, deadline, &failed[j]);
                if r.is_err() {
                    failed[j].store(true, Ordering::SeqCst);
                } else {
                    dialled_ok[j].store(true, Ordering::SeqCst);
                }
                r
            })
        });
        let done = &setup_done;
        s.spawn(move || {
            announce_waiting(cfg, me, waiting, done, |j| {
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
        let dialled = handles.map(|h| {
            h.join().unwrap_or_else(|_| {
                Err(SetupError::Io {
                    peer: me,
                    detail: "dialling thread panicked".into(),
                })
            })
        });
        setup_done.store(true, Ordering::SeqCst);
        (dialled, accepted)
    });

    let [d0, d1] = dialled;
    match (d0, d1, accepted) {
        (
            Ok(o0),
            Ok(o1),
            Accepted {
                links: incoming,
                error: None,
                ..
            },
        ) => Ok(Links {
            outgoing: [(peers[0], o0), (peers[1], o1)],
            incoming,
        }),
        (d0, d1, a) => {
            let errors = [d0.err(), d1.err(), a.error];
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

/// Says on stderr whom party `me` still waits for (`waits_for(j)`), every [`WAITING_EVERY`]
/// (and at once if asked), until `done`.
fn announce_waiting(
    cfg: &PartiesConfig,
    me: usize,
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
            let whom: Vec<String> = [(me + 1) % 3, (me + 2) % 3]
                .into_iter()
                .filter(|&j| waits_for(j))
                .map(|j| format!("party {j} at {}", cfg.parties[j].address))
                .collect();
            if !whom.is_empty() {
                crate::say!(
                    "{label}: waiting for {} ({} of at most {})",
                    whom.join(" and "),
                    secs(Duration::from_secs(started.elapsed().as_secs())),
                    secs(cfg.timeout)
                );
            }
            next += WAITING_EVERY;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// When both peers refused this party's session and agree with each other, this party is the
/// one whose settings or files differ: say so from its side, with both peers named.
fn odd_one_out(
    me: usize,
    mine: &[u8],
    errors: &[Option<SetupError>],
    accepted: &[Option<Vec<u8>>; 3],
) -> Option<SetupError> {
    let mut seen: [Option<&[u8]>; 3] = [0, 1, 2].map(|k| accepted[k].as_deref());
    for e in errors.iter().flatten() {
        if let SetupError::SessionMismatch { peer, theirs, .. } = e {
            seen[*peer] = Some(theirs);
        }
    }
    let (a, b) = ((me + 1) % 3, (me + 2) % 3);
    match (seen[a], seen[b]) {
        (Some(x), Some(y)) if x == y => Some(SetupError::SessionMismatch {
            peer: a,
            detail: crate::net::session::describe_odd_one(me, mine, [a, b], x)?,
            theirs: x.to_vec(),
        }),
        _ => None,
    }
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
