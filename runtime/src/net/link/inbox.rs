//! The incoming side of an established transport: one reader thread per incoming link reads
//! frames as they arrive and hands them to the [`Inbox`], where `recv` takes them in order, per
//! peer.
//!
//! Reading every link all the time is what lets a party hear an abort frame (or an unclean
//! close) on one link while it waits for a message on another: a failure anywhere is reported
//! at once, with the real cause, instead of after the receive timeout.

use std::collections::VecDeque;
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use rustls::{ServerConnection, StreamOwned};

use super::copy_error;
use super::frame::{Frame, Reader};
use crate::net::NetError;

/// What a reader thread reports about its link.
enum Event {
    Frame(Frame),
    /// The peer closed the link cleanly (TLS close_notify): it sent everything it meant to.
    Ended,
    /// The link failed: closed without close_notify (the peer died), a TLS or framing error.
    Failed(NetError),
}

/// Frames received from the peers, per peer, and how each link ended.
pub(super) struct Inbox {
    events: Receiver<(usize, Event)>,
    /// Indexed by party, like `ended`.
    pending: Vec<VecDeque<Vec<u8>>>,
    /// How a link ended: `None` while open; `Some(None)` for a clean end.
    ended: Vec<Option<Option<NetError>>>,
    /// The first abort or failure heard on any link, reported by every later `recv`.
    stopped: Option<NetError>,
    /// Sockets of the incoming links, shut down when the transport goes so the threads end.
    socks: Vec<TcpStream>,
}

impl Inbox {
    /// Starts a reader thread on each incoming link (`incoming` is indexed by party).
    pub(super) fn start(
        incoming: Vec<Option<StreamOwned<ServerConnection, TcpStream>>>,
    ) -> Result<Inbox, NetError> {
        let n = incoming.len();
        let (tx, events) = channel();
        let mut socks = Vec::new();
        for (peer, link) in incoming.into_iter().enumerate() {
            let Some(stream) = link else { continue };
            if let Ok(s) = stream.sock.try_clone() {
                socks.push(s);
            }
            let tx = tx.clone();
            std::thread::Builder::new()
                .name(format!("irisc-recv-{peer}"))
                .spawn(move || read_loop(peer, Reader::new(stream), tx))
                .map_err(|e| NetError::Io {
                    peer,
                    detail: format!("cannot start the receiving thread: {e}"),
                })?;
        }
        Ok(Inbox {
            events,
            pending: (0..n).map(|_| VecDeque::new()).collect(),
            ended: (0..n).map(|_| None).collect(),
            stopped: None,
            socks,
        })
    }

    /// The next message from `from`, waiting at most `timeout`. Fails at once when any
    /// peer sent an abort frame or its link broke; a link the peer closed cleanly is an error
    /// only when a message from it is expected.
    pub(super) fn recv(&mut self, from: usize, timeout: Duration) -> Result<Vec<u8>, NetError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(e) = &self.stopped {
                return Err(copy_error(e));
            }
            if let Some(m) = self.pending[from].pop_front() {
                return Ok(m);
            }
            if self.ended[from].is_some() {
                // An abort already received on another link is the better reason: it says
                // why this link closed.
                if let Some(e) = self.poll_stopped() {
                    return Err(e);
                }
                match &self.ended[from] {
                    Some(Some(e)) => return Err(copy_error(e)),
                    _ => return Err(NetError::Closed { peer: from }),
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.events.recv_timeout(left) {
                Ok((peer, event)) => self.take(peer, event),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(NetError::Timeout {
                        peer: from,
                        waited: timeout,
                    })
                }
                Err(RecvTimeoutError::Disconnected) => {
                    // Every reader thread has ended and said how: nothing more will come.
                    return Err(NetError::Closed { peer: from });
                }
            }
        }
    }

    fn take(&mut self, peer: usize, event: Event) {
        match event {
            Event::Frame(Frame::Data(m)) => self.pending[peer].push_back(m),
            Event::Frame(Frame::Abort(reason)) => {
                self.stopped
                    .get_or_insert(NetError::Aborted { peer, reason });
            }
            Event::Ended => self.ended[peer] = Some(None),
            Event::Failed(e) => {
                // Messages already received from this peer stay readable: a failure is
                // reported in order, except that it also stops waits on the other peers.
                self.stopped.get_or_insert(copy_error(&e));
                self.ended[peer] = Some(Some(e));
            }
        }
    }

    /// Waits at most `bound` until the link from `peer` has ended (or any peer stopped), then
    /// returns the first abort or failure heard, if any. Frames that arrive meanwhile are kept.
    pub(super) fn wait_for_end(&mut self, peer: usize, bound: Duration) -> Option<NetError> {
        let deadline = Instant::now() + bound;
        while self.stopped.is_none() && self.ended.get(peer).is_some_and(Option::is_none) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match self.events.recv_timeout(left) {
                Ok((from, event)) => self.take(from, event),
                Err(_) => break,
            }
        }
        self.stopped.as_ref().map(copy_error)
    }

    /// The reason a peer sent in an abort frame, or the first link failure, if any was heard
    /// (without waiting).
    pub(super) fn poll_stopped(&mut self) -> Option<NetError> {
        while let Ok((peer, event)) = self.events.try_recv() {
            self.take(peer, event);
        }
        self.stopped.as_ref().map(copy_error)
    }
}

impl Drop for Inbox {
    fn drop(&mut self) {
        for s in &self.socks {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// Reads frames from `peer` until the link ends, reporting each to the inbox.
fn read_loop(peer: usize, mut reader: Reader, tx: Sender<(usize, Event)>) {
    loop {
        // The socket's read timeout only wakes this thread up; `recv` bounds the waiting.
        let event = match reader.next_frame(peer, Duration::ZERO) {
            Ok(Frame::Abort(reason)) => {
                let _ = tx.send((peer, Event::Frame(Frame::Abort(reason))));
                return;
            }
            Ok(frame) => Event::Frame(frame),
            Err(NetError::Timeout { .. }) => continue,
            Err(NetError::Closed { .. }) if reader.closed_cleanly() => Event::Ended,
            Err(e) => Event::Failed(e),
        };
        let last = !matches!(event, Event::Frame(_));
        if tx.send((peer, event)).is_err() || last {
            return;
        }
    }
}
