//! [`TlsTransport`]: the [`Transport`] between the processes of a run (2 to
//! [`MAX_PARTIES`](crate::net::config::MAX_PARTIES) parties, as `parties.toml` lists them), over
//! TCP with mutual TLS.
//!
//! Topology: one TLS connection per direction between every two parties. Party `i` dials `j` for
//! messages `i -> j` and only writes on that connection; it accepts `j`'s connection and only
//! reads on it. A writer thread per outgoing link drains a queue, so `send` returns at once and
//! no party's send waits on a peer that is itself blocked sending: parties pushing large
//! messages at each other simultaneously cannot deadlock. A reader thread per incoming link
//! reads frames as they come ([`inbox`]), so an abort frame or a dead peer on one link is
//! noticed while `recv` waits on another.
//!
//! Setup, bounded by `timeout_secs` of `parties.toml`:
//! 1. listen on this party's address; dial every peer, retrying while they start up;
//! 2. TLS 1.3 handshake with client certificates (see [`super::tls`]);
//! 3. on each connection the dialling side sends a hello `{party index, session bytes}`; the
//!    accepting side checks that the certificate is the one configured for that index and that
//!    the session bytes equal its own, then answers with its own index and session (or a refusal
//!    that says why), which the dialler checks in turn. Session bytes written by
//!    [`crate::net::session::Session`] hold named settings, so a mismatch names the setting and
//!    both values.
//!
//! While waiting for peers, setup says on stderr whom it waits for, every few seconds.
//!
//! Frames are a little-endian `u32` header word followed by the payload: data frames of at most
//! 1 GiB, and control frames (the abort frame) marked by bit 31 (see `frame`). A party that
//! stops sends an abort frame with its reason ([`TlsTransport::abort`], [`AbortHandle`]); the
//! peers' `recv` then fails at once with [`NetError::Aborted`] carrying that reason.
//!
//! The code is split by concept: `setup` establishes and checks the links (and defines
//! [`SetupError`]), `frame` reads and writes the frames, `writer` runs the per-link writer
//! threads, `inbox` the reader threads; this file holds the transport itself.

mod frame;
mod inbox;
mod setup;
#[cfg(test)]
mod tests;
mod writer;

use std::io;
use std::time::Duration;

use super::config::PartiesConfig;
use super::{NetError, Transport};

pub use frame::{MAX_CONTROL, MAX_FRAME};
pub use setup::{tell_peers_we_stop, Joining, SetupError, Waiting, MAX_SESSION, WAITING_EVERY};
pub use writer::AbortHandle;

use inbox::Inbox;
use writer::Writer;

/// The transport between the parties of `parties.toml`, over mutually authenticated TLS. Build it with
/// [`TlsTransport::connect`]; finish with [`TlsTransport::close`] so queued messages are delivered.
pub struct TlsTransport {
    me: usize,
    timeout: Duration,
    /// Indexed by party; `None` at this party's own index. Its length is the party count.
    writers: Vec<Option<Writer>>,
    inbox: Option<Inbox>,
    bytes: u64,
    messages: u64,
}

impl std::fmt::Debug for TlsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsTransport")
            .field("party", &self.me)
            .field("parties", &self.writers.len())
            .field("timeout", &self.timeout)
            .field("bytes_sent", &self.bytes)
            .field("messages_sent", &self.messages)
            .finish_non_exhaustive()
    }
}

/// NetError is not `Clone` (it is shared with other code); a stored writer failure is reported on
/// every later call, so it is copied by hand.
fn copy_error(e: &NetError) -> NetError {
    match e {
        NetError::Closed { peer } => NetError::Closed { peer: *peer },
        NetError::Timeout { peer, waited } => NetError::Timeout {
            peer: *peer,
            waited: *waited,
        },
        NetError::Io { peer, detail } => NetError::Io {
            peer: *peer,
            detail: detail.clone(),
        },
        NetError::Protocol { peer, detail } => NetError::Protocol {
            peer: *peer,
            detail: detail.clone(),
        },
        NetError::Aborted { peer, reason } => NetError::Aborted {
            peer: *peer,
            reason: reason.clone(),
        },
    }
}

/// How long a writer failure waits for the same peer's incoming link to tell the cause
/// (an abort frame already on its way); only spent when a link has failed.
const CAUSE_GRACE: Duration = Duration::from_secs(2);

/// The peer a link error names.
fn failed_peer(e: &NetError) -> usize {
    match e {
        NetError::Closed { peer }
        | NetError::Timeout { peer, .. }
        | NetError::Io { peer, .. }
        | NetError::Protocol { peer, .. }
        | NetError::Aborted { peer, .. } => *peer,
    }
}

fn is_closed(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::NotConnected
    )
}

fn is_timeout(kind: io::ErrorKind) -> bool {
    matches!(kind, io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

fn secs(d: Duration) -> String {
    let s = d.as_secs_f64();
    if (s - s.round()).abs() < 1e-9 {
        format!("{} s", s.round() as u64)
    } else {
        format!("{s:.1} s")
    }
}

impl TlsTransport {
    /// Sets up the links of party `me` as described in `cfg`: listens, dials every other party,
    /// authenticates them, and checks that all run with the same `session` bytes (the caller
    /// puts the settings the parties must share there, see [`crate::net::session`]). Everything
    /// is bounded by `cfg.timeout`; failures name the party concerned. While waiting, says every
    /// few seconds on stderr whom it waits for.
    pub fn connect(
        cfg: &PartiesConfig,
        me: usize,
        session: &[u8],
    ) -> Result<TlsTransport, SetupError> {
        Self::connect_with(cfg, me, session, &Waiting::default())
    }

    /// [`TlsTransport::connect`], saying whom it waits for as `waiting` asks.
    pub fn connect_with(
        cfg: &PartiesConfig,
        me: usize,
        session: &[u8],
        waiting: &Waiting,
    ) -> Result<TlsTransport, SetupError> {
        Self::join(cfg, me, session, waiting, Joining::Once)
    }

    /// [`TlsTransport::connect_with`] for a serving party that connects again after a peer
    /// restarted: the peers' attempts need not start together (they converge on the latest).
    pub fn rejoin(
        cfg: &PartiesConfig,
        me: usize,
        session: &[u8],
        waiting: &Waiting,
    ) -> Result<TlsTransport, SetupError> {
        Self::join(cfg, me, session, waiting, Joining::Rejoin)
    }

    fn join(
        cfg: &PartiesConfig,
        me: usize,
        session: &[u8],
        waiting: &Waiting,
        joining: Joining,
    ) -> Result<TlsTransport, SetupError> {
        let setup::Links { outgoing, incoming } =
            setup::establish(cfg, me, session, waiting, joining)?;
        let mut writers: Vec<Option<Writer>> = (0..cfg.count()).map(|_| None).collect();
        for (j, stream) in outgoing {
            writers[j] = Some(Writer::start(j, stream, cfg.timeout));
        }
        let inbox = Inbox::start(incoming).map_err(|e| SetupError::Io {
            peer: me,
            detail: e.to_string(),
        })?;
        tracing::debug!(
            party = me,
            parties = cfg.count(),
            "links to all peers are up"
        );
        Ok(TlsTransport {
            me,
            timeout: cfg.timeout,
            writers,
            inbox: Some(inbox),
            bytes: 0,
            messages: 0,
        })
    }

    /// The bound on every receive (and, once closing, on a peer that takes no data).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Delivers every queued message, closes the outgoing links cleanly and waits for the writer
    /// threads. Reports the first link failure, if any.
    pub fn close(mut self) -> Result<(), NetError> {
        let mut first = None;
        for w in self.writers.iter_mut().flatten() {
            w.finish();
            if let Some(t) = w.thread.take() {
                if t.join().is_err() && first.is_none() {
                    first = Some(NetError::Io {
                        peer: self.me,
                        detail: "writer thread panicked".into(),
                    });
                }
            }
            if first.is_none() {
                first = w
                    .shared
                    .failure
                    .lock()
                    .ok()
                    .and_then(|f| f.as_ref().map(copy_error));
            }
        }
        self.inbox = None;
        match first {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// A handle that stops every outgoing link with an abort frame, from any thread.
    pub fn abort_handle(&self) -> AbortHandle {
        AbortHandle {
            links: self
                .writers
                .iter()
                .flatten()
                .map(|w| w.shared.clone())
                .collect(),
        }
    }

    /// Tells every peer that this party stops, and why (an abort frame after the frame being
    /// written, instead of what is still queued), waiting at most `bound` for delivery.
    pub fn abort(&mut self, reason: &str, bound: Duration) {
        self.abort_handle().abort(reason, bound);
    }

    /// An abort frame or link failure already received from a peer, if any (without waiting):
    /// the real cause when this party fails for a reason a peer's failure explains.
    pub fn peer_stopped(&mut self) -> Option<NetError> {
        self.inbox.as_mut().and_then(Inbox::poll_stopped)
    }

    /// Why the links cannot be used any more: a peer's abort or a broken incoming link first
    /// (the cause), else a failed outgoing link (often the effect: the peer that stopped with
    /// a reason closed its links after telling us).
    ///
    /// A writer failure alone is often the effect racing its cause: a peer that stopped sends
    /// its abort frame, then exits, and the reset of our outgoing link can be seen before the
    /// reader thread has handed over the frame that came first. So before reporting a writer
    /// failure, the incoming link from the same peer gets [`CAUSE_GRACE`] to say how it ended.
    fn failure(&mut self) -> Option<NetError> {
        if let Some(e) = self.peer_stopped() {
            return Some(e);
        }
        let written = self.writer_failure()?;
        let peer = failed_peer(&written);
        if let Some(inbox) = self.inbox.as_mut() {
            if let Some(cause) = inbox.wait_for_end(peer, CAUSE_GRACE) {
                return Some(cause);
            }
        }
        Some(written)
    }

    /// The first failure any writer has recorded.
    fn writer_failure(&self) -> Option<NetError> {
        self.writers.iter().flatten().find_map(|w| {
            w.shared
                .failure
                .lock()
                .ok()
                .and_then(|f| f.as_ref().map(copy_error))
        })
    }

    fn check_peer(&self, peer: usize) -> Result<(), NetError> {
        if peer >= self.writers.len() || peer == self.me {
            return Err(NetError::Io {
                peer,
                detail: format!("party {} has no link to party {peer}", self.me),
            });
        }
        Ok(())
    }
}

impl Drop for TlsTransport {
    fn drop(&mut self) {
        // Without `close`, writers still deliver what is queued and then close, but nobody waits
        // for them (a dropped transport must not hang its owner).
        for w in self.writers.iter_mut().flatten() {
            w.finish();
        }
    }
}

impl Transport for TlsTransport {
    fn party(&self) -> usize {
        self.me
    }

    fn parties(&self) -> usize {
        self.writers.len()
    }

    fn send(&mut self, to: usize, message: Vec<u8>) -> Result<(), NetError> {
        self.check_peer(to)?;
        if let Some(e) = self.failure() {
            return Err(e);
        }
        if message.len() > MAX_FRAME {
            return Err(NetError::Io {
                peer: to,
                detail: format!(
                    "a message of {} bytes is over the 1 GiB frame limit",
                    message.len()
                ),
            });
        }
        let len = message.len() as u64;
        let w = self.writers[to]
            .as_ref()
            .ok_or(NetError::Closed { peer: to })?;
        let queued = w.queue.as_ref().map(|q| q.send(message));
        match queued {
            Some(Ok(())) => {
                self.bytes += len;
                self.messages += 1;
                Ok(())
            }
            // The writer thread has ended: it recorded why.
            _ => Err(self.failure().unwrap_or(NetError::Closed { peer: to })),
        }
    }

    fn recv(&mut self, from: usize) -> Result<Vec<u8>, NetError> {
        self.check_peer(from)?;
        if let Some(e) = self.failure() {
            return Err(e);
        }
        let timeout = self.timeout;
        let inbox = self.inbox.as_mut().ok_or(NetError::Closed { peer: from })?;
        inbox.recv(from, timeout)
    }

    fn bytes_sent(&self) -> u64 {
        self.bytes
    }

    fn messages_sent(&self) -> u64 {
        self.messages
    }
}
