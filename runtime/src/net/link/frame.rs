//! The framing of messages on an established link, and the abort frame.
//!
//! Every frame starts with a little-endian `u32` header word. Bit 31 of that word tells the two
//! kinds apart:
//!
//! - **data frame** (bit 31 clear): the word is the payload's length, at most [`MAX_FRAME`]
//!   (2^30) bytes, so a data frame can never have bit 31 set; the payload is one protocol
//!   message.
//! - **control frame** (bit 31 set): the low 31 bits are the payload's length, at most
//!   [`MAX_CONTROL`] bytes; the payload's first byte is the control kind. The only kind is
//!   [`CONTROL_ABORT`]: the rest of the payload is the UTF-8 reason the sender stopped (for
//!   example `party 2 closed its link (it stopped or was killed)`), which the receiver reports
//!   at once as `party N stopped: <reason>` instead of waiting for a timeout. An abort frame is
//!   the last frame on its link.
//!
//! `Reader` reassembles incoming frames; `write_frame` and `write_abort` hand outgoing ones to
//! TLS.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustls::{ClientConnection, ServerConnection, StreamOwned};

use super::{is_closed, is_timeout};
use crate::net::tls;
use crate::net::NetError;

/// Largest payload one data frame may carry.
pub const MAX_FRAME: usize = 1 << 30;

/// Bit 31 of the header word: set on control frames, never on data frames (their length is at
/// most [`MAX_FRAME`]).
const CONTROL_BIT: u32 = 1 << 31;

/// Largest payload of a control frame (a reason is a line of text).
pub const MAX_CONTROL: usize = 64 * 1024;

/// Control kind: the sender stopped; the rest of the payload says why.
pub const CONTROL_ABORT: u8 = 1;

/// One frame as received.
#[derive(Debug)]
pub(super) enum Frame {
    /// A protocol message.
    Data(Vec<u8>),
    /// The peer stopped, for this reason; nothing follows on the link.
    Abort(String),
}

/// One incoming link and the frame being received on it (kept across timeouts, so a receive
/// that times out mid-frame can be retried without losing bytes).
pub(super) struct Reader {
    stream: StreamOwned<ServerConnection, TcpStream>,
    header: [u8; 4],
    header_got: usize,
    body: Option<Vec<u8>>,
    body_got: usize,
    /// The frame being received is a control frame.
    control: bool,
    /// The peer ended the link with TLS close_notify, between frames.
    clean_end: bool,
}

impl Reader {
    /// Starts reading frames from an incoming link whose setup is done.
    pub(super) fn new(stream: StreamOwned<ServerConnection, TcpStream>) -> Reader {
        Reader {
            stream,
            header: [0; 4],
            header_got: 0,
            body: None,
            body_got: 0,
            control: false,
            clean_end: false,
        }
    }

    /// The link ended with the peer's close_notify between two frames (it finished sending),
    /// not by a dying peer or mid-frame.
    pub(super) fn closed_cleanly(&self) -> bool {
        self.clean_end
    }

    pub(super) fn next_frame(&mut self, peer: usize, timeout: Duration) -> Result<Frame, NetError> {
        loop {
            let read = match &mut self.body {
                None => self.stream.read(&mut self.header[self.header_got..]),
                Some(body) if self.body_got == body.len() => {
                    self.header_got = 0;
                    self.body_got = 0;
                    let body = self.body.take().unwrap_or_default();
                    if !self.control {
                        return Ok(Frame::Data(body));
                    }
                    return match body.split_first() {
                        Some((&CONTROL_ABORT, reason)) => {
                            Ok(Frame::Abort(String::from_utf8_lossy(reason).into_owned()))
                        }
                        _ => Err(NetError::Protocol {
                            peer,
                            detail: "unknown control frame".into(),
                        }),
                    };
                }
                Some(body) => self.stream.read(&mut body[self.body_got..]),
            };
            match read {
                Ok(0) => {
                    self.clean_end = self.header_got == 0 && self.body.is_none();
                    return Err(NetError::Closed { peer });
                }
                Ok(n) => match &self.body {
                    None => {
                        self.header_got += n;
                        if self.header_got == 4 {
                            let word = u32::from_le_bytes(self.header);
                            self.control = word & CONTROL_BIT != 0;
                            let len = (word & !CONTROL_BIT) as usize;
                            if self.control && (len == 0 || len > MAX_CONTROL) {
                                return Err(NetError::Protocol {
                                    peer,
                                    detail: format!("control frame of {len} bytes"),
                                });
                            }
                            if len > MAX_FRAME {
                                return Err(NetError::Protocol {
                                    peer,
                                    detail: format!("frame of {len} bytes is over the 1 GiB limit"),
                                });
                            }
                            self.body = Some(vec![0; len]);
                        }
                    }
                    Some(_) => self.body_got += n,
                },
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if is_timeout(e.kind()) => {
                    return Err(NetError::Timeout {
                        peer,
                        waited: timeout,
                    })
                }
                Err(e) if is_closed(e.kind()) => return Err(NetError::Closed { peer }),
                Err(e) => {
                    return Err(match tls::rustls_error(&e) {
                        Some(t) => NetError::Protocol {
                            peer,
                            detail: format!("TLS error: {t}"),
                        },
                        None => NetError::Io {
                            peer,
                            detail: e.to_string(),
                        },
                    })
                }
            }
        }
    }
}

/// Hands one frame (length, then payload) to TLS, writing out the encrypted records whenever
/// rustls's buffer is full.
pub(super) fn write_frame(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    payload: &[u8],
    closing: &AtomicBool,
) -> io::Result<()> {
    write_with_header(conn, sock, payload.len() as u32, &[], payload, closing)
}

/// Hands an abort frame carrying `reason` (cut to [`MAX_CONTROL`]) to TLS.
pub(super) fn write_abort(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    reason: &str,
    closing: &AtomicBool,
) -> io::Result<()> {
    let mut end = reason.len().min(MAX_CONTROL - 1);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let reason = &reason.as_bytes()[..end];
    let word = CONTROL_BIT | (reason.len() as u32 + 1);
    write_with_header(conn, sock, word, &[CONTROL_ABORT], reason, closing)
}

/// Writes the header word, then `kind` (empty for data frames), then `payload`.
fn write_with_header(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    word: u32,
    kind: &[u8],
    payload: &[u8],
    closing: &AtomicBool,
) -> io::Result<()> {
    let header = word.to_le_bytes();
    let total = header.len() + kind.len() + payload.len();
    let mut bufs = [
        IoSlice::new(&header),
        IoSlice::new(kind),
        IoSlice::new(payload),
    ];
    let mut slices: &mut [IoSlice<'_>] = &mut bufs;
    let mut written = 0;
    while written < total {
        // rustls accepts plaintext up to its buffer limit and then returns 0: write out the
        // encrypted records and continue.
        let n = conn.writer().write_vectored(slices)?;
        if n == 0 {
            push_tls(conn, sock, closing)?;
            continue;
        }
        written += n;
        IoSlice::advance_slices(&mut slices, n);
    }
    Ok(())
}

/// Writes all buffered TLS records to the socket. Each blocking write is bounded by the socket's
/// write timeout; running into it is an error only once the transport is closing.
pub(super) fn push_tls(
    conn: &mut ClientConnection,
    sock: &mut TcpStream,
    closing: &AtomicBool,
) -> io::Result<()> {
    while conn.wants_write() {
        match conn.write_tls(sock) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if is_timeout(e.kind()) && !closing.load(Ordering::SeqCst) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
