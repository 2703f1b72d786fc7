//! The per-link writer threads: each outgoing link has a queue that `send` fills and a thread
//! that drains it onto the TLS connection, so sending returns at once and never waits on a peer.

use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rustls::{ClientConnection, StreamOwned};

use super::frame::{push_tls, write_frame};
use super::{is_closed, is_timeout, secs};
use crate::net::NetError;

/// One outgoing link: a queue and the thread that writes it to the socket.
pub(super) struct Writer {
    pub(super) queue: Option<Sender<Vec<u8>>>,
    pub(super) thread: Option<JoinHandle<()>>,
    pub(super) failure: Arc<Mutex<Option<NetError>>>,
    /// Set when the transport is closed or dropped: from then on a peer that takes no data for
    /// the timeout is given up on. Before that a stalled write just keeps waiting, because the
    /// peer may be busy computing, and a dead peer shows up in `recv` anyway.
    closing: Arc<AtomicBool>,
}

impl Writer {
    pub(super) fn start(
        peer: usize,
        stream: StreamOwned<ClientConnection, TcpStream>,
        timeout: Duration,
    ) -> Writer {
        let (tx, rx) = channel();
        let failure = Arc::new(Mutex::new(None));
        let slot = failure.clone();
        let closing = Arc::new(AtomicBool::new(false));
        let closing_flag = closing.clone();
        let thread = std::thread::Builder::new()
            .name(format!("irisc-send-{peer}"))
            .spawn(move || {
                let StreamOwned { mut conn, mut sock } = stream;
                if let Err(e) = write_loop(&mut conn, &mut sock, &rx, &closing_flag) {
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
                    if let Ok(mut f) = slot.lock() {
                        *f = Some(err);
                    }
                }
            });
        match thread {
            Ok(t) => Writer {
                queue: Some(tx),
                thread: Some(t),
                failure,
                closing,
            },
            Err(e) => {
                // No thread, so nothing can be sent: record that, and every call reports it.
                let f = Arc::new(Mutex::new(Some(NetError::Io {
                    peer,
                    detail: format!("cannot start the sending thread: {e}"),
                })));
                Writer {
                    queue: None,
                    thread: None,
                    failure: f,
                    closing,
                }
            }
        }
    }

    /// Tells the writer to deliver what is queued, close the link and end.
    pub(super) fn finish(&mut self) {
        self.closing.store(true, Ordering::SeqCst);
        self.queue.take();
    }
}

/// Writes queued frames until the queue's senders are gone, then closes the TLS session.
/// Never reads: the dialled connection is write-only after the hello.
fn write_loop(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    rx: &Receiver<Vec<u8>>,
    closing: &AtomicBool,
) -> io::Result<()> {
    let mut next = rx.recv().ok();
    while let Some(msg) = next {
        write_frame(conn, sock, &msg, closing)?;
        drop(msg);
        next = match rx.try_recv() {
            Ok(m) => Some(m),
            Err(TryRecvError::Empty) => {
                // Batch small frames while more are queued; push everything out before idling.
                push_tls(conn, sock, closing)?;
                rx.recv().ok()
            }
            Err(TryRecvError::Disconnected) => None,
        };
    }
    conn.send_close_notify();
    push_tls(conn, sock, closing)?;
    // Best effort: the peer already has every byte we wrote.
    let _ = sock.shutdown(Shutdown::Write);
    Ok(())
}
