//! The accepting side of setup: taking connections on the listener, each on its own thread, the
//! TLS handshake as server, checking the hello against the certificate and the session, and
//! answering it (or refusing with a reason).

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering;
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::{ServerConnection, StreamOwned};
use rustls_pki_types::CertificateDer;

use super::hello::{
    accept_reply, parse_hello, read_setup_frame, refusal, write_setup_frame, Hello, REPLY_REFUSED,
    REPLY_SESSION_DIFFERS,
};
use super::{bound_socket, remaining, setup_io_error, PeerLinks, SetupError};
use crate::net::session::describe_mismatch;
use crate::net::tls::{self, PartyTls};

/// What one incoming connection amounted to.
enum Incoming {
    /// An authenticated, identified peer with the same session, and the attempt it dialled
    /// from when it rejoins.
    Peer(
        usize,
        Box<StreamOwned<ServerConnection, TcpStream>>,
        Option<u64>,
    ),
    /// Not a party (failed TLS, or went away before identifying itself): keep waiting.
    Rejected(String),
    /// A party that authenticated but is misconfigured: setup fails.
    Fatal(SetupError),
}

/// Accepts connections until every peer not already marked failed has identified itself.
/// Connections are handled on their own threads so a silent stranger on the port cannot hold up
/// the real peers.
///
/// When this party rejoins (`links.attempt`), a peer may start over several times while the
/// links form: its newer connection replaces the older one, and the link this party dialled
/// is dialled again when the peer's attempt that accepted it is older than the one that dialled
/// us (it was left behind). Setup ends when, with every peer, both links belong to the same
/// attempt of that peer; then `links.settled` releases the dialling threads.
pub(super) fn accept_peers(
    listener: &TcpListener,
    tls: &PartyTls,
    timeout: Duration,
    me: usize,
    session: &[u8],
    deadline: Instant,
    links: &PeerLinks,
) -> Accepted {
    let (failed, accepted) = (&links.failed, &links.accepted);
    let rejoin = links.attempt.is_some();
    let n = failed.len();
    // The attempt each incoming link was dialled from (rejoining peers only).
    let mut their_attempt: Vec<Option<u64>> = vec![None; n];
    let (tx, rx) = channel::<Incoming>();
    let claimed = Arc::new(Mutex::new(vec![false; n]));
    let mut got: Vec<Option<StreamOwned<ServerConnection, TcpStream>>> =
        (0..n).map(|_| None).collect();
    let mut rejected: Option<String> = None;
    let mut error: Option<SetupError> = None;
    let mut sessions: Vec<Option<Vec<u8>>> = vec![None; n];
    let note = |e: SetupError, error: &mut Option<SetupError>| {
        if let Some(f) = e.peer().and_then(|k| failed.get(k)) {
            f.store(true, Ordering::SeqCst);
        }
        if matches!(e, SetupError::PeerStopped { .. }) {
            // A party that stops told all its peers: there is no run to set up, and nobody
            // to wait for.
            for f in failed {
                f.store(true, Ordering::SeqCst);
            }
        }
        if error.as_ref().is_none_or(|old| e.rank() < old.rank()) {
            *error = Some(e);
        }
    };
    // With peer k, both links belong to the same attempt of k (an unknown attempt matches).
    let same_attempt = |k: usize, theirs: &[Option<u64>]| {
        if !links.dialled[k].load(Ordering::SeqCst) {
            return false;
        }
        let accepted_by = links.accepted_by[k].lock().ok().and_then(|a| *a);
        match (theirs[k], accepted_by) {
            (Some(a), Some(b)) => a == b,
            _ => true,
        }
    };
    let waiting = |got: &[Option<_>], theirs: &[Option<u64>]| {
        (0..n).find(|&k| {
            k != me
                && !failed[k].load(Ordering::SeqCst)
                && (got[k].is_none() || (rejoin && !same_attempt(k, theirs)))
        })
    };

    while let Some(missing) = waiting(&got, &their_attempt) {
        while let Ok(outcome) = rx.try_recv() {
            match outcome {
                Incoming::Peer(k, stream, attempt) => {
                    // A late connection from an attempt the peer already left is dropped.
                    let stale = got[k].is_some() && attempt < their_attempt[k];
                    if !stale {
                        got[k] = Some(*stream);
                        their_attempt[k] = attempt;
                        accepted[k].store(true, Ordering::SeqCst);
                    }
                }
                Incoming::Rejected(why) => {
                    tracing::warn!(party = me, "rejected an incoming connection: {why}");
                    rejected = Some(why);
                }
                Incoming::Fatal(e) => {
                    if let SetupError::SessionMismatch { peer, theirs, .. } = &e {
                        if let Some(slot) = sessions.get_mut(*peer) {
                            *slot = Some(theirs.clone());
                        }
                    }
                    note(e, &mut error)
                }
            }
        }
        if rejoin {
            redial_links_left_behind(links, &got, &their_attempt);
        }
        if waiting(&got, &their_attempt).is_none() {
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
                    attempt: links.attempt,
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
    links.settled.store(true, Ordering::SeqCst);
    Accepted {
        links: got,
        error,
        rejected,
        sessions,
    }
}

/// Rejoining: the link this party dialled to peer k is dialled again when the attempt of k that
/// accepted it is older than the attempt k dialled us from (k started over since).
fn redial_links_left_behind(
    links: &PeerLinks,
    got: &[Option<StreamOwned<ServerConnection, TcpStream>>],
    their_attempt: &[Option<u64>],
) {
    for k in 0..got.len() {
        if got[k].is_none() || !links.dialled[k].load(Ordering::SeqCst) {
            continue;
        }
        let accepted_by = links.accepted_by[k].lock().ok().and_then(|a| *a);
        if let (Some(now), Some(then)) = (their_attempt[k], accepted_by) {
            if then < now {
                tracing::debug!(peer = k, "the peer started over: dialling it again");
                links.dialled[k].store(false, Ordering::SeqCst);
                links.redial[k].store(true, Ordering::SeqCst);
            }
        }
    }
}

/// What [`accept_peers`] ends with.
pub(super) struct Accepted {
    /// Indexed by party, like `sessions`.
    pub(super) links: Vec<Option<StreamOwned<ServerConnection, TcpStream>>>,
    /// The most informative failure about an identified peer.
    pub(super) error: Option<SetupError>,
    /// Why the last unidentified connection was turned away (failed TLS, usually a wrong CA).
    pub(super) rejected: Option<String>,
    /// The session of each peer whose session differed from ours.
    pub(super) sessions: Vec<Option<Vec<u8>>>,
}

/// Everything an accepting thread needs, owned so the thread can outlive a failed setup.
struct Handshake {
    server: Arc<rustls::ServerConfig>,
    /// The configured certificate of every party; its length is the party count.
    expected: Vec<CertificateDer<'static>>,
    session: Vec<u8>,
    claimed: Arc<Mutex<Vec<bool>>>,
    me: usize,
    deadline: Instant,
    timeout: Duration,
    /// This party rejoins, from this attempt: a peer that connects again replaces its link.
    attempt: Option<u64>,
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
        let Some(said) = parse_hello(&hello) else {
            linger(&mut stream);
            return Incoming::Rejected(format!("from {from}: not an irisc hello"));
        };
        let index = said.index();
        let k = index as usize;
        let n = self.expected.len();
        // Who the certificate says it is, independently of the claim.
        let by_cert = (0..n)
            .find(|&i| tls::same_end_entity(stream.conn.peer_certificates(), &self.expected[i]));
        if k >= n || k == self.me {
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
                None if n == 2 => {
                    "a certificate that is neither of the two in parties.toml".to_string()
                }
                None => format!(
                    "a certificate that is none of the {} in parties.toml",
                    crate::net::session::count_word(n)
                ),
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
        let (their_session, their_attempt) = match said {
            Hello::Join {
                session, attempt, ..
            } => (session, attempt),
            Hello::Stop { reason, .. } => {
                // Authenticated above: party k really says it stops. Acknowledge, so it knows
                // the reason arrived.
                let reply = accept_reply(self.me, &[], None);
                let _ = write_setup_frame(&mut stream, &reply);
                linger(&mut stream);
                return Incoming::Fatal(SetupError::PeerStopped { peer: k, reason });
            }
        };
        if let Some(detail) = describe_mismatch(n, self.me, &self.session, k, their_session) {
            // The dialler gets our session, to describe the difference from its side.
            self.refuse_with(&mut stream, REPLY_SESSION_DIFFERS, &self.session);
            return Incoming::Fatal(SetupError::SessionMismatch {
                peer: k,
                detail,
                theirs: their_session.to_vec(),
            });
        }
        let duplicate = match self.claimed.lock() {
            Ok(mut c) => std::mem::replace(&mut c[k], true),
            Err(_) => true,
        };
        // A rejoining peer that connects again started over: its newer link replaces the old.
        let duplicate = duplicate && self.attempt.is_none();
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
        let mine = their_attempt.and(self.attempt);
        let reply = accept_reply(self.me, &self.session, mine);
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
        Incoming::Peer(k, Box::new(stream), their_attempt)
    }

    /// Tells the dialler why it is turned away, then closes without losing that reply.
    fn refuse(
        &self,
        stream: &mut StreamOwned<ServerConnection, TcpStream>,
        code: u8,
        reason: &str,
    ) {
        self.refuse_with(stream, code, reason.as_bytes());
    }

    /// [`Handshake::refuse`] with any bytes after the code.
    fn refuse_with(
        &self,
        stream: &mut StreamOwned<ServerConnection, TcpStream>,
        code: u8,
        body: &[u8],
    ) {
        let reply = refusal(code, body);
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
