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
use dial::dial;

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
    #[error("party {peer} runs another program or other share files, or gallery stores holding other records (its session identifier differs from this party's): give the three parties the files of one `irisc share` run; stores whose record counts differ after an interrupted `irisc enroll` are mended by `irisc enroll ... --roll-back`")]
    SessionMismatch { peer: usize },
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
            | SetupError::SessionMismatch { peer }
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
    let failed: [AtomicBool; 3] = Default::default();
    let peers = [(me + 1) % 3, (me + 2) % 3];

    let (dialled, accepted) = std::thread::scope(|s| {
        let handles = peers.map(|j| {
            let (tls, failed) = (&tls, &failed);
            s.spawn(move || {
                let r = dial(cfg, tls, me, j, session, deadline, &failed[j]);
                if r.is_err() {
                    failed[j].store(true, Ordering::SeqCst);
                }
                r
            })
        });
        let accepted = accept_peers(&listener, &tls, cfg.timeout, me, session, deadline, &failed);
        let dialled = handles.map(|h| {
            h.join().unwrap_or_else(|_| {
                Err(SetupError::Io {
                    peer: me,
                    detail: "dialling thread panicked".into(),
                })
            })
        });
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
