//! The per-link writer threads: each outgoing link has a queue that `send` fills and a thread
//! that drains it onto the TLS connection, so sending returns at once and never waits on a peer.
//! A writer can also be told to stop with an abort frame ([`AbortHandle`]): it sends that frame
//! next (after the frame it is writing, if any), drops what is still queued and closes.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustls::{ClientConnection, StreamOwned};

use super::frame::{push_tls, write_abort, write_frame};
use super::{is_closed, is_timeout, secs};
use crate::net::NetError;

/// How often an idle writer looks for an abort request.
const IDLE_POLL: Duration = Duration::from_millis(50);

/// What a writer thread shares with the transport and with an [`AbortHandle`].
pub(super) struct Shared {
    pub(super) failure: Mutex<Option<NetError>>,
    /// Set when the transport is closed or dropped: from then on a peer that takes no data for
    /// the timeout is given up on. Before that a stalled write just keeps waiting, because the
    /// peer may be busy computing, and a dead peer shows up in `recv` anyway.
    closing: AtomicBool,
    /// The reason of an abort frame to send next, instead of what is queued.
    abort: Mutex<Option<String>>,
    /// The thread has ended.
    done: AtomicBool,
    /// The socket, to cut the link when an abort cannot be delivered in time.
    sock: Option<TcpStream>,
}

/// One outgoing link: a queue and the thread that writes it to the socket.
pub(super) struct Writer {
    pub(super) queue: Option<Sender<Vec<u8>>>,
    pub(super) thread: Option<JoinHandle<()>>,
    pub(super) shared: Arc<Shared>,
}

impl Writer {
    pub(super) fn start(
        peer: usize,
        stream: StreamOwned<ClientConnection, TcpStream>,
        timeout: Duration,
    ) -> Writer {
        let (tx, rx) = channel();
        let shared = Arc::new(Shared {
            failure: Mutex::new(None),
            closing: AtomicBool::new(false),
            abort: Mutex::new(None),
            done: AtomicBool::new(false),
            sock: stream.sock.try_clone().ok(),
        });
        let mine = shared.clone();
        let thread = std::thread::Builder::new()
            .name(format!("irisc-send-{peer}"))
            .spawn(move || {
                let StreamOwned { mut conn, mut sock } = stream;
                if let Err(e) = write_loop(&mut conn, &mut sock, &rx, &mine) {
                    let err = if is_closed(e.kind()) {
                        NetError::Closed { peer }
                    } else if is_timeout(e.kind()) {
                        NetError::Io {
                            peer,
                            detail: format!(
                                "party {peer} accepted no data for {} while closing (it stalled or the network is down)",
                                secs(timeout)
                            ),
                        }
                    } else {
                        NetError::Io { peer, detail: e.to_string() }
                    };
                    tracing::debug!(peer, error = %err, "outgoing link failed");
                    if let Ok(mut f) = mine.failure.lock() {
                        *f = Some(err);
                    }
                }
                mine.done.store(true, Ordering::SeqCst);
            });
        match thread {
            Ok(t) => Writer {
                queue: Some(tx),
                thread: Some(t),
                shared,
            },
            Err(e) => {
                // No thread, so nothing can be sent: record that, and every call reports it.
                if let Ok(mut f) = shared.failure.lock() {
                    *f = Some(NetError::Io {
                        peer,
                        detail: format!("cannot start the sending thread: {e}"),
                    });
                }
                shared.done.store(true, Ordering::SeqCst);
                Writer {
                    queue: None,
                    thread: None,
                    shared,
                }
            }
        }
    }

    /// Tells the writer to deliver what is queued, close the link and end.
    pub(super) fn finish(&mut self) {
        self.shared.closing.store(true, Ordering::SeqCst);
        self.queue.take();
    }
}

/// Stops the outgoing links with an abort frame; cloneable and usable from any thread (a
/// signal handler's thread, while the party's own thread computes).
#[derive(Clone)]
pub struct AbortHandle {
    pub(super) links: Vec<Arc<Shared>>,
}

impl AbortHandle {
    /// Sends an abort frame carrying `reason` on every outgoing link that is still open, and
    /// waits until they are delivered and the links closed, at most `bound`; a link that
    /// takes longer is cut.
    pub fn abort(&self, reason: &str, bound: Duration) {
        for l in &self.links {
            if let Ok(mut a) = l.abort.lock() {
                a.get_or_insert_with(|| reason.to_string());
            }
            l.closing.store(true, Ordering::SeqCst);
        }
        let deadline = Instant::now() + bound;
        while Instant::now() < deadline && !self.links.iter().all(|l| l.done.load(Ordering::SeqCst))
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        for l in &self.links {
            if !l.done.load(Ordering::SeqCst) {
                if let Some(s) = &l.sock {
                    let _ = s.shutdown(Shutdown::Both);
                }
            }
        }
    }
}

/// Writes queued frames until the queue's senders are gone (or an abort is asked for), then
/// closes the TLS session. Never reads: the dialled connection is write-only after the hello.
fn write_loop(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    rx: &Receiver<Vec<u8>>,
    shared: &Shared,
) -> io::Result<()> {
    let closing = &shared.closing;
    loop {
        if let Some(reason) = shared.abort.lock().ok().and_then(|mut a| a.take()) {
            write_abort(conn, sock, &reason, closing)?;
            break;
        }
        let msg = match rx.try_recv() {
            Ok(m) => m,
            Err(_) => {
                // Push everything out before idling; small frames queued meanwhile are
                // batched into the same TLS records.
                push_tls(conn, sock, closing)?;
                match rx.recv_timeout(IDLE_POLL) {
                    Ok(m) => m,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
        };
        write_frame(conn, sock, &msg, closing)?;
    }
    conn.send_close_notify();
    push_tls(conn, sock, closing)?;
    // Best effort: the peer already has every byte we wrote.
    let _ = sock.shutdown(Shutdown::Write);
    Ok(())
}
