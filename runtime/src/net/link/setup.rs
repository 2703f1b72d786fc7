//! Setting up the links: listening, dialling and accepting, the TLS handshake, the hello
//! exchange that checks each peer's certificate, party index and session, and [`SetupError`] for
//! everything that can go wrong on the way.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::{ClientConnection, ServerConnection, StreamOwned};
use rustls_pki_types::CertificateDer;

use super::{is_closed, is_timeout, secs};
use crate::net::config::{ConfigError, PartiesConfig};
use crate::net::tls::{self, PartyTls, TlsSetupError};

/// Largest session identifier `connect` accepts (it travels in the hello frame).
pub const MAX_SESSION: usize = 64 * 1024;

const HELLO_MAGIC: &[u8; 8] = b"irisc\x00h1";
const KIND_HELLO: u8 = 1;
const KIND_REPLY: u8 = 2;
const REPLY_ACCEPT: u8 = 0;
const REPLY_SESSION_DIFFERS: u8 = 1;
const REPLY_REFUSED: u8 = 2;
const MAX_HELLO: usize = HELLO_MAGIC.len() + 3 + MAX_SESSION;

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
    #[error("party {peer} runs another program or other share files (its session identifier differs from this party's)")]
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

fn describe_connect_error(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".into(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "connection timed out".into(),
        io::ErrorKind::HostUnreachable => "host unreachable".into(),
        io::ErrorKind::NetworkUnreachable => "network unreachable".into(),
        _ => e.to_string(),
    }
}

/// Sets both socket timeouts to what is left of the setup bound.
fn bound_socket(sock: &TcpStream, deadline: Instant) -> io::Result<()> {
    let left = remaining(deadline).unwrap_or(Duration::from_millis(1));
    sock.set_read_timeout(Some(left))?;
    sock.set_write_timeout(Some(left))
}

/// Dials party `j`, retrying until `deadline`, and runs TLS and the hello exchange on the
/// connection.
fn dial(
    cfg: &PartiesConfig,
    tls: &PartyTls,
    me: usize,
    j: usize,
    session: &[u8],
    deadline: Instant,
    give_up: &AtomicBool,
) -> Result<StreamOwned<ClientConnection, TcpStream>, SetupError> {
    let address = &cfg.parties[j].address;
    let mut last_error = String::from("no attempt finished");
    let mut pause = Duration::from_millis(20);
    let sock = 'connected: loop {
        if give_up.load(Ordering::SeqCst) {
            return Err(SetupError::Aborted);
        }
        let Some(left) = remaining(deadline) else {
            return Err(SetupError::Unreachable {
                peer: j,
                address: address.clone(),
                waited: cfg.timeout,
                last_error,
                rejected: None,
            });
        };
        match address.to_socket_addrs() {
            Ok(addrs) => {
                for addr in addrs {
                    match TcpStream::connect_timeout(&addr, left.min(Duration::from_secs(5))) {
                        Ok(s) => break 'connected s,
                        Err(e) => last_error = describe_connect_error(&e),
                    }
                }
            }
            Err(e) => last_error = format!("cannot resolve the address: {e}"),
        }
        // The peer may still be starting: try again shortly.
        std::thread::sleep(pause.min(remaining(deadline).unwrap_or_default()));
        pause = (pause * 2).min(Duration::from_millis(250));
    };
    let io_err = |detail: String| SetupError::Io { peer: j, detail };
    sock.set_nodelay(true).map_err(|e| io_err(e.to_string()))?;
    bound_socket(&sock, deadline).map_err(|e| io_err(e.to_string()))?;

    let conn = ClientConnection::new(tls.client.clone(), PartyTls::name_of(j)).map_err(|e| {
        SetupError::Handshake {
            peer: j,
            detail: tls::explain(&e, Some(j)),
        }
    })?;
    let mut stream = StreamOwned::new(conn, sock);
    finish_handshake(&mut stream.conn, &mut stream.sock, j, cfg.timeout)?;
    if !tls::same_end_entity(stream.conn.peer_certificates(), &tls.expected[j]) {
        return Err(SetupError::WrongPeer {
            peer: j,
            detail: format!(
                "at {address} it presented a certificate other than party {j}'s in parties.toml \
                 (it runs with another party's key or a stale certificate)"
            ),
        });
    }

    let mut hello = Vec::with_capacity(HELLO_MAGIC.len() + 2 + session.len());
    hello.extend_from_slice(HELLO_MAGIC);
    hello.extend_from_slice(&[KIND_HELLO, me as u8]);
    hello.extend_from_slice(session);
    write_setup_frame(&mut stream, &hello).map_err(|e| setup_io_error(j, &e, cfg.timeout))?;

    let reply = read_setup_frame(&mut stream).map_err(|e| setup_io_error(j, &e, cfg.timeout))?;
    let body = reply
        .strip_prefix(HELLO_MAGIC.as_slice())
        .and_then(|r| r.strip_prefix(&[KIND_REPLY]))
        .ok_or_else(|| SetupError::Protocol {
            peer: j,
            detail: "its reply is not an irisc hello".into(),
        })?;
    match body {
        [REPLY_ACCEPT, index, their_session @ ..] => {
            if *index as usize != j {
                return Err(SetupError::WrongPeer {
                    peer: j,
                    detail: format!("it says it is party {index}"),
                });
            }
            if their_session != session {
                return Err(SetupError::SessionMismatch { peer: j });
            }
        }
        [REPLY_SESSION_DIFFERS, ..] => return Err(SetupError::SessionMismatch { peer: j }),
        [REPLY_REFUSED, reason @ ..] => {
            return Err(SetupError::Refused {
                peer: j,
                reason: String::from_utf8_lossy(reason).into_owned(),
            })
        }
        _ => {
            return Err(SetupError::Protocol {
                peer: j,
                detail: "unknown reply to the hello".into(),
            })
        }
    }
    // From now on this connection only carries our frames; a stalled peer surfaces as a write
    // timeout in the writer thread.
    stream
        .sock
        .set_write_timeout(Some(cfg.timeout))
        .map_err(|e| io_err(e.to_string()))?;
    tracing::debug!(party = me, peer = j, "outgoing link up");
    Ok(stream)
}

/// Runs the TLS handshake to completion (both directions of the first flight).
fn finish_handshake<C, S>(
    conn: &mut C,
    sock: &mut TcpStream,
    peer: usize,
    timeout: Duration,
) -> Result<(), SetupError>
where
    C: std::ops::DerefMut<Target = rustls::ConnectionCommon<S>>,
    S: rustls::SideData,
{
    while conn.is_handshaking() {
        if let Err(e) = conn.complete_io(sock) {
            return Err(setup_io_error(peer, &e, timeout));
        }
    }
    Ok(())
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

fn write_setup_frame<S: Read + Write>(stream: &mut S, payload: &[u8]) -> io::Result<()> {
    stream.write_all(&(payload.len() as u32).to_le_bytes())?;
    stream.write_all(payload)?;
    stream.flush()
}

fn read_setup_frame<S: Read>(stream: &mut S) -> io::Result<Vec<u8>> {
    let mut header = [0u8; 4];
    stream.read_exact(&mut header)?;
    let len = u32::from_le_bytes(header) as usize;
    if len > MAX_HELLO {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("hello of {len} bytes is too long"),
        ));
    }
    let mut body = vec![0; len];
    stream.read_exact(&mut body)?;
    Ok(body)
}

/// What one incoming connection amounted to.
enum Incoming {
    /// An authenticated, identified peer with the same session.
    Peer(usize, Box<StreamOwned<ServerConnection, TcpStream>>),
    /// Not a party (failed TLS, or went away before identifying itself): keep waiting.
    Rejected(String),
    /// A party that authenticated but is misconfigured: setup fails.
    Fatal(SetupError),
}

/// Accepts connections until every peer not already marked failed has identified itself.
/// Connections are handled on their own threads so a silent stranger on the port cannot hold up
/// the real peers.
fn accept_peers(
    listener: &TcpListener,
    tls: &PartyTls,
    timeout: Duration,
    me: usize,
    session: &[u8],
    deadline: Instant,
    failed: &[AtomicBool; 3],
) -> Accepted {
    let (tx, rx) = channel::<Incoming>();
    let claimed = Arc::new(Mutex::new([false; 3]));
    let mut got: [Option<StreamOwned<ServerConnection, TcpStream>>; 3] = Default::default();
    let mut rejected: Option<String> = None;
    let mut error: Option<SetupError> = None;
    let note = |e: SetupError, error: &mut Option<SetupError>| {
        if let Some(k) = e.peer() {
            failed[k].store(true, Ordering::SeqCst);
        }
        if error.as_ref().is_none_or(|old| e.rank() < old.rank()) {
            *error = Some(e);
        }
    };
    let waiting = |got: &[Option<_>; 3]| {
        (0..3).find(|&k| k != me && got[k].is_none() && !failed[k].load(Ordering::SeqCst))
    };

    while let Some(missing) = waiting(&got) {
        while let Ok(outcome) = rx.try_recv() {
            match outcome {
                Incoming::Peer(k, stream) => got[k] = Some(*stream),
                Incoming::Rejected(why) => {
                    tracing::warn!(party = me, "rejected an incoming connection: {why}");
                    rejected = Some(why);
                }
                Incoming::Fatal(e) => note(e, &mut error),
            }
        }
        if waiting(&got).is_none() {
            break;
        }
        if remaining(deadline).is_none() {
            let e = SetupError::NoIncoming {
                peer: missing,
                waited: timeout,
                rejected: rejected.clone(),
            };
            note(e, &mut error);
            break;
        }
        match listener.accept() {
            Ok((sock, from)) => {
                let ctx = Handshake {
                    server: tls.server.clone(),
                    expected: tls.expected.clone(),
                    session: session.to_vec(),
                    claimed: claimed.clone(),
                    me,
                    deadline,
                    timeout,
                };
                let tx = tx.clone();
                let spawned = std::thread::Builder::new()
                    .name("irisc-accept".into())
                    .spawn(move || {
                        // The receiver may be gone if setup already finished; nothing to do then.
                        let _ = tx.send(ctx.run(sock, from));
                    });
                if let Err(e) = spawned {
                    note(
                        SetupError::Io {
                            peer: missing,
                            detail: format!("cannot start a thread: {e}"),
                        },
                        &mut error,
                    );
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                let address = listener
                    .local_addr()
                    .map(|a| a.to_string())
                    .unwrap_or_default();
                note(
                    SetupError::Listen {
                        address,
                        detail: e.to_string(),
                    },
                    &mut error,
                );
                break;
            }
        }
    }
    Accepted {
        links: got,
        error,
        rejected,
    }
}

/// What [`accept_peers`] ends with.
struct Accepted {
    links: [Option<StreamOwned<ServerConnection, TcpStream>>; 3],
    /// The most informative failure about an identified peer.
    error: Option<SetupError>,
    /// Why the last unidentified connection was turned away (failed TLS, usually a wrong CA).
    rejected: Option<String>,
}

/// Everything an accepting thread needs, owned so the thread can outlive a failed setup.
struct Handshake {
    server: Arc<rustls::ServerConfig>,
    expected: [CertificateDer<'static>; 3],
    session: Vec<u8>,
    claimed: Arc<Mutex<[bool; 3]>>,
    me: usize,
    deadline: Instant,
    timeout: Duration,
}

impl Handshake {
    fn run(self, sock: TcpStream, from: SocketAddr) -> Incoming {
        // Accepted sockets may inherit the listener's non-blocking mode on some systems.
        if let Err(e) = sock
            .set_nonblocking(false)
            .and_then(|_| bound_socket(&sock, self.deadline))
        {
            return Incoming::Rejected(format!("from {from}: {e}"));
        }
        let _ = sock.set_nodelay(true);
        let conn = match ServerConnection::new(self.server.clone()) {
            Ok(c) => c,
            Err(e) => {
                return Incoming::Fatal(SetupError::Handshake {
                    peer: self.me,
                    detail: e.to_string(),
                })
            }
        };
        let mut stream = StreamOwned::new(conn, sock);
        let mut hs = || -> io::Result<Vec<u8>> {
            while stream.conn.is_handshaking() {
                stream.conn.complete_io(&mut stream.sock)?;
            }
            read_setup_frame(&mut stream)
        };
        let hello = match hs() {
            Ok(h) => h,
            Err(e) => {
                let why = match tls::rustls_error(&e) {
                    Some(t) => tls::explain(t, None),
                    None => e.to_string(),
                };
                linger(&mut stream);
                return Incoming::Rejected(format!("from {from}: {why}"));
            }
        };
        let claim = hello
            .strip_prefix(HELLO_MAGIC.as_slice())
            .and_then(|r| r.strip_prefix(&[KIND_HELLO]))
            .and_then(|r| r.split_first());
        let Some((&index, their_session)) = claim else {
            linger(&mut stream);
            return Incoming::Rejected(format!("from {from}: not an irisc hello"));
        };
        let k = index as usize;
        // Who the certificate says it is, independently of the claim.
        let by_cert = (0..3)
            .find(|&i| tls::same_end_entity(stream.conn.peer_certificates(), &self.expected[i]));
        if k >= 3 || k == self.me {
            let reason = format!(
                "party {} does not accept a peer claiming to be party {index}",
                self.me
            );
            self.refuse(&mut stream, REPLY_REFUSED, &reason);
            return match by_cert.filter(|&i| i != self.me) {
                Some(i) => Incoming::Fatal(SetupError::WrongPeer {
                    peer: i,
                    detail: format!(
                        "with party {i}'s certificate, {from} claims to be party {index}"
                    ),
                }),
                None => Incoming::Rejected(format!("from {from}: claims to be party {index}")),
            };
        }
        if by_cert != Some(k) {
            let presented = match by_cert {
                Some(i) => format!("party {i}'s certificate"),
                None => "a certificate that is none of the three in parties.toml".to_string(),
            };
            let reason = format!(
                "party {} expected party {k}'s certificate from parties.toml but got {presented} \
                 (started with another party's certificate and key, or stale files?)",
                self.me
            );
            self.refuse(&mut stream, REPLY_REFUSED, &reason);
            return Incoming::Fatal(SetupError::WrongPeer {
                peer: k,
                detail: format!(
                    "the connection from {from} presented {presented} \
                     (it runs with another party's key or stale files)"
                ),
            });
        }
        if their_session != self.session.as_slice() {
            self.refuse(&mut stream, REPLY_SESSION_DIFFERS, "");
            return Incoming::Fatal(SetupError::SessionMismatch { peer: k });
        }
        let duplicate = match self.claimed.lock() {
            Ok(mut c) => std::mem::replace(&mut c[k], true),
            Err(_) => true,
        };
        if duplicate {
            self.refuse(
                &mut stream,
                REPLY_REFUSED,
                "this party is already connected",
            );
            return Incoming::Fatal(SetupError::Protocol {
                peer: k,
                detail: "it connected twice".into(),
            });
        }
        let mut reply = Vec::with_capacity(HELLO_MAGIC.len() + 3 + self.session.len());
        reply.extend_from_slice(HELLO_MAGIC);
        reply.extend_from_slice(&[KIND_REPLY, REPLY_ACCEPT, self.me as u8]);
        reply.extend_from_slice(&self.session);
        if let Err(e) = write_setup_frame(&mut stream, &reply) {
            return Incoming::Fatal(setup_io_error(k, &e, self.timeout));
        }
        // From now on `recv` waits at most `timeout` for each read.
        if let Err(e) = stream.sock.set_read_timeout(Some(self.timeout)) {
            return Incoming::Fatal(SetupError::Io {
                peer: k,
                detail: e.to_string(),
            });
        }
        tracing::debug!(party = self.me, peer = k, "incoming link up");
        Incoming::Peer(k, Box::new(stream))
    }

    /// Tells the dialler why it is turned away, then closes without losing that reply.
    fn refuse(
        &self,
        stream: &mut StreamOwned<ServerConnection, TcpStream>,
        code: u8,
        reason: &str,
    ) {
        let mut reply = Vec::with_capacity(HELLO_MAGIC.len() + 2 + reason.len());
        reply.extend_from_slice(HELLO_MAGIC);
        reply.extend_from_slice(&[KIND_REPLY, code]);
        reply.extend_from_slice(reason.as_bytes());
        let _ = write_setup_frame(stream, &reply);
        stream.conn.send_close_notify();
        let _ = stream.flush();
        linger(stream);
    }
}

/// Half-closes and drains briefly, so unread input does not turn our close into a TCP reset that
/// could destroy the alert or refusal the peer has yet to read.
fn linger(stream: &mut StreamOwned<ServerConnection, TcpStream>) {
    let _ = stream.sock.shutdown(Shutdown::Write);
    let _ = stream
        .sock
        .set_read_timeout(Some(Duration::from_millis(500)));
    let mut sink = [0u8; 4096];
    let until = Instant::now() + Duration::from_secs(1);
    while Instant::now() < until {
        match stream.sock.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
    }
}
