//! The wire format of the hello exchange: the constants, the setup frames that carry hellos and
//! replies, and building and parsing hellos and replies.

use std::io::{self, Read, Write};

use super::{SetupError, MAX_SESSION};

const HELLO_MAGIC: &[u8; 8] = b"irisc\x00h1";
const KIND_HELLO: u8 = 1;
const KIND_REPLY: u8 = 2;
const REPLY_ACCEPT: u8 = 0;
pub(super) const REPLY_SESSION_DIFFERS: u8 = 1;
pub(super) const REPLY_REFUSED: u8 = 2;
const MAX_HELLO: usize = HELLO_MAGIC.len() + 3 + MAX_SESSION;

pub(super) fn write_setup_frame<S: Read + Write>(stream: &mut S, payload: &[u8]) -> io::Result<()> {
    stream.write_all(&(payload.len() as u32).to_le_bytes())?;
    stream.write_all(payload)?;
    stream.flush()
}

pub(super) fn read_setup_frame<S: Read>(stream: &mut S) -> io::Result<Vec<u8>> {
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

/// The hello the dialling party `me` sends: its index and its session.
pub(super) fn build_hello(me: usize, session: &[u8]) -> Vec<u8> {
    let mut hello = Vec::with_capacity(HELLO_MAGIC.len() + 2 + session.len());
    hello.extend_from_slice(HELLO_MAGIC);
    hello.extend_from_slice(&[KIND_HELLO, me as u8]);
    hello.extend_from_slice(session);
    hello
}

/// Checks party `j`'s reply to our hello: it must accept us, say it is party `j` and carry the
/// same `session`.
pub(super) fn check_reply(reply: &[u8], j: usize, session: &[u8]) -> Result<(), SetupError> {
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
    Ok(())
}

/// The party index a hello claims and the session it carries, or `None` if it is not a hello.
pub(super) fn parse_hello(hello: &[u8]) -> Option<(u8, &[u8])> {
    hello
        .strip_prefix(HELLO_MAGIC.as_slice())
        .and_then(|r| r.strip_prefix(&[KIND_HELLO]))
        .and_then(|r| r.split_first())
        .map(|(&index, session)| (index, session))
}

/// The reply with which the accepting party `me` accepts a peer: its index and its session.
pub(super) fn accept_reply(me: usize, session: &[u8]) -> Vec<u8> {
    let mut reply = Vec::with_capacity(HELLO_MAGIC.len() + 3 + session.len());
    reply.extend_from_slice(HELLO_MAGIC);
    reply.extend_from_slice(&[KIND_REPLY, REPLY_ACCEPT, me as u8]);
    reply.extend_from_slice(session);
    reply
}

/// The reply that turns a dialler away with `code` and, for [`REPLY_REFUSED`], the `reason`.
pub(super) fn refusal(code: u8, reason: &str) -> Vec<u8> {
    let mut reply = Vec::with_capacity(HELLO_MAGIC.len() + 2 + reason.len());
    reply.extend_from_slice(HELLO_MAGIC);
    reply.extend_from_slice(&[KIND_REPLY, code]);
    reply.extend_from_slice(reason.as_bytes());
    reply
}
