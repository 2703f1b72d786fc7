//! The dialling side of setup: connecting to a peer (retrying while it starts up), the TLS
//! handshake as client, and the hello this party sends and the reply it checks.

use std::io;
use std::net::{TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rustls::{ClientConnection, StreamOwned};

use super::hello::{build_hello, build_stop, check_reply, read_setup_frame, write_setup_frame};
use super::{bound_socket, remaining, setup_io_error, SetupError};
use crate::net::config::PartiesConfig;
use crate::net::meets_itself;
use crate::net::tls::{self, PartyTls};

fn describe_connect_error(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => "connection refused".into(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => "connection timed out".into(),
        io::ErrorKind::HostUnreachable => "host unreachable".into(),
        io::ErrorKind::NetworkUnreachable => "network unreachable".into(),
        _ => e.to_string(),
    }
}

/// A link this party dialled, with the attempt of the peer that accepted it (when rejoining).
pub(super) type Dialled = (StreamOwned<ClientConnection, TcpStream>, Option<u64>);

/// Dials party `j`, retrying until `deadline`, and runs TLS and the hello exchange on the
/// connection. `attempt`: this party rejoins, from this attempt (see `establish`).
pub(super) fn dial(
    cfg: &PartiesConfig,
    tls: &PartyTls,
    (me, j): (usize, usize),
    session: &[u8],
    deadline: Instant,
    give_up: &AtomicBool,
    attempt: Option<u64>,
) -> Result<Dialled, SetupError> {
    let mut stream = connect_tls(cfg, tls, j, deadline, give_up)?;
    let hello = build_hello(me, session, attempt);
    write_setup_frame(&mut stream, &hello).map_err(|e| setup_io_error(j, &e, cfg.timeout))?;

    let reply = read_setup_frame(&mut stream).map_err(|e| setup_io_error(j, &e, cfg.timeout))?;
    let theirs = check_reply(&reply, cfg.count(), me, j, session)?;
    // From now on this connection only carries our frames; a stalled peer surfaces as a write
    // timeout in the writer thread.
    stream
        .sock
        .set_write_timeout(Some(cfg.timeout))
        .map_err(|e| SetupError::Io {
            peer: j,
            detail: e.to_string(),
        })?;
    tracing::debug!(party = me, peer = j, "outgoing link up");
    Ok((stream, theirs))
}

/// Dials party `j` until `deadline` and tells it that party `me` stops, and why; returns once
/// it acknowledged (or the attempt failed: this is best effort).
pub(super) fn tell_stop(
    cfg: &PartiesConfig,
    tls: &PartyTls,
    me: usize,
    j: usize,
    reason: &str,
    deadline: Instant,
) -> Result<(), SetupError> {
    let never = AtomicBool::new(false);
    let mut stream = connect_tls(cfg, tls, j, deadline, &never)?;
    write_setup_frame(&mut stream, &build_stop(me, reason))
        .and_then(|_| read_setup_frame(&mut stream))
        .map_err(|e| setup_io_error(j, &e, cfg.timeout))?;
    Ok(())
}

/// Connects to party `j` (retrying while it starts up) and runs the TLS handshake, checking
/// that it presents party `j`'s certificate.
fn connect_tls(
    cfg: &PartiesConfig,
    tls: &PartyTls,
    j: usize,
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
                        // A dial that met itself: drop it and dial again, as if refused.
                        Ok(s) if meets_itself(s.local_addr(), s.peer_addr()) => {
                            last_error = "connection refused (the dial met itself)".into();
                        }
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

#[cfg(test)]
mod tests {
    use std::net::{SocketAddr, TcpListener, TcpStream};

    use socket2::{Domain, Socket, Type};

    use crate::net::meets_itself;

    #[test]
    fn a_dial_that_met_itself_is_told_from_a_real_connection() {
        // A port nobody listens on, dialled from itself: TCP's simultaneous open connects the
        // socket to itself, as a loopback dial does when the kernel picks the peer's port.
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let sock = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        sock.set_reuse_address(true).unwrap();
        sock.bind(&addr.into()).unwrap();
        sock.connect(&addr.into()).unwrap();
        let looped: TcpStream = sock.into();
        let of = |s: &TcpStream| meets_itself(s.local_addr(), s.peer_addr());
        assert!(of(&looped));

        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let real = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        assert!(!of(&real));
        assert!(!of(&accepted));
    }
}
