//! The framing of messages on an established link: a little-endian `u32` length followed by the
//! payload, at most [`MAX_FRAME`] bytes. `Reader` reassembles incoming frames; `write_frame`
//! hands outgoing ones to TLS.

use std::io::{self, IoSlice, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rustls::{ClientConnection, ServerConnection, StreamOwned};

use super::{is_closed, is_timeout};
use crate::net::tls;
use crate::net::NetError;

/// Largest payload one frame may carry.
pub const MAX_FRAME: usize = 1 << 30;

/// One incoming link and the frame being received on it (kept across timeouts, so a receive
/// that times out mid-frame can be retried without losing bytes).
pub(super) struct Reader {
    stream: StreamOwned<ServerConnection, TcpStream>,
    header: [u8; 4],
    header_got: usize,
    body: Option<Vec<u8>>,
    body_got: usize,
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
        }
    }

    pub(super) fn next_frame(
        &mut self,
        peer: usize,
        timeout: Duration,
    ) -> Result<Vec<u8>, NetError> {
        loop {
            let read = match &mut self.body {
                None => self.stream.read(&mut self.header[self.header_got..]),
                Some(body) if self.body_got == body.len() => {
                    self.header_got = 0;
                    self.body_got = 0;
                    return Ok(self.body.take().unwrap_or_default());
                }
                Some(body) => self.stream.read(&mut body[self.body_got..]),
            };
            match read {
                Ok(0) => return Err(NetError::Closed { peer }),
                Ok(n) => match &self.body {
                    None => {
                        self.header_got += n;
                        if self.header_got == 4 {
                            let len = u32::from_le_bytes(self.header) as usize;
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
    let header = (payload.len() as u32).to_le_bytes();
    let total = header.len() + payload.len();
    let mut bufs = [IoSlice::new(&header), IoSlice::new(payload)];
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
