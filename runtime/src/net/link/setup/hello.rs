//! The wire format of the hello exchange: the constants, the setup frames that carry hellos and
//! replies, and building and parsing hellos and replies.

use std::io::{self, Read, Write};

use super::{SetupError, MAX_SESSION};
use crate::net::session::describe_mismatch;

const HELLO_MAGIC: &[u8; 8] = b"irisc\x00h1";
const KIND_HELLO: u8 = 1;
const KIND_REPLY: u8 = 2;
/// A hello from a party that cannot take part (its inputs failed to load, say): it only tells
/// why, and the accepting party reports that at once instead of waiting for the timeout.
const KIND_STOP: u8 = 3;
/// A hello from a party that joins again and again (a serving party reconnecting): like
/// [`KIND_HELLO`], with the attempt it dials from (8 bytes, little-endian, after the index).
const KIND_REJOIN: u8 = 4;
const REPLY_ACCEPT: u8 = 0;
/// The accepting reply to a [`KIND_REJOIN`] hello: the acceptor's own attempt follows its index.
const REPLY_ACCEPT_REJOIN: u8 = 3;
pub(super) const REPLY_SESSION_DIFFERS: u8 = 1;
pub(super) const REPLY_REFUSED: u8 = 2;
const MAX_HELLO: usize = HELLO_MAGIC.len() + 3 + 8 + MAX_SESSION;

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

/// The hello the dialling party `me` sends: its index and its session, and when it rejoins,
/// the attempt it dials from.
pub(super) fn build_hello(me: usize, session: &[u8], attempt: Option<u64>) -> Vec<u8> {
    let mut hello = Vec::with_capacity(HELLO_MAGIC.len() + 2 + 8 + session.len());
    hello.extend_from_slice(HELLO_MAGIC);
    match attempt {
        None => hello.extend_from_slice(&[KIND_HELLO, me as u8]),
        Some(a) => {
            hello.extend_from_slice(&[KIND_REJOIN, me as u8]);
            hello.extend_from_slice(&a.to_le_bytes());
        }
    }
    hello.extend_from_slice(session);
    hello
}

/// The hello with which party `me` tells a peer that it stops, and why.
pub(super) fn build_stop(me: usize, reason: &str) -> Vec<u8> {
    let mut end = reason.len().min(MAX_SESSION);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    let mut hello = Vec::with_capacity(HELLO_MAGIC.len() + 2 + end);
    hello.extend_from_slice(HELLO_MAGIC);
    hello.extend_from_slice(&[KIND_STOP, me as u8]);
    hello.extend_from_slice(&reason.as_bytes()[..end]);
    hello
}

/// Checks party `j`'s reply to party `me`'s hello (in a run of `parties`): it must accept us,
/// say it is party `j` and carry the same `session`. Returns the acceptor's attempt when it
/// answered a rejoining hello.
pub(super) fn check_reply(
    reply: &[u8],
    parties: usize,
    me: usize,
    j: usize,
    session: &[u8],
) -> Result<Option<u64>, SetupError> {
    let accepted = |index: u8, their_session: &[u8]| {
        if index as usize != j {
            return Err(SetupError::WrongPeer {
                peer: j,
                detail: format!("it says it is party {index}"),
            });
        }
        if let Some(detail) = describe_mismatch(parties, me, session, j, their_session) {
            return Err(SetupError::SessionMismatch {
                peer: j,
                detail,
                theirs: their_session.to_vec(),
            });
        }
        Ok(())
    };
    let body = reply
        .strip_prefix(HELLO_MAGIC.as_slice())
        .and_then(|r| r.strip_prefix(&[KIND_REPLY]))
        .ok_or_else(|| SetupError::Protocol {
            peer: j,
            detail: "its reply is not an irisc hello".into(),
        })?;
    match body {
        [REPLY_ACCEPT, index, their_session @ ..] => accepted(*index, their_session).map(|()| None),
        [REPLY_ACCEPT_REJOIN, index, a0, a1, a2, a3, a4, a5, a6, a7, their_session @ ..] => {
            accepted(*index, their_session)?;
            Ok(Some(u64::from_le_bytes([
                *a0, *a1, *a2, *a3, *a4, *a5, *a6, *a7,
            ])))
        }
        // The refusal carries the peer's session.
        [REPLY_SESSION_DIFFERS, theirs @ ..] => {
            let detail = describe_mismatch(parties, me, session, j, theirs).unwrap_or_else(|| {
                format!("party {j} refused this party's session, although it is the same")
            });
            Err(SetupError::SessionMismatch {
                peer: j,
                detail,
                theirs: theirs.to_vec(),
            })
        }
        [REPLY_REFUSED, reason @ ..] => Err(SetupError::Refused {
            peer: j,
            reason: String::from_utf8_lossy(reason).into_owned(),
        }),
        _ => Err(SetupError::Protocol {
            peer: j,
            detail: "unknown reply to the hello".into(),
        }),
    }
}

/// What a dialling party says first.
pub(super) enum Hello<'a> {
    /// It joins with this session; `attempt` when it rejoins (a serving party reconnecting).
    Join {
        index: u8,
        session: &'a [u8],
        attempt: Option<u64>,
    },
    /// It cannot take part, for this reason.
    Stop { index: u8, reason: String },
}

impl Hello<'_> {
    pub(super) fn index(&self) -> u8 {
        match self {
            Hello::Join { index, .. } | Hello::Stop { index, .. } => *index,
        }
    }
}

/// The hello in `hello`, or `None` if it is not one.
pub(super) fn parse_hello(hello: &[u8]) -> Option<Hello<'_>> {
    let body = hello.strip_prefix(HELLO_MAGIC.as_slice())?;
    match body {
        [KIND_HELLO, index, session @ ..] => Some(Hello::Join {
            index: *index,
            session,
            attempt: None,
        }),
        [KIND_REJOIN, index, a0, a1, a2, a3, a4, a5, a6, a7, session @ ..] => Some(Hello::Join {
            index: *index,
            session,
            attempt: Some(u64::from_le_bytes([*a0, *a1, *a2, *a3, *a4, *a5, *a6, *a7])),
        }),
        [KIND_STOP, index, reason @ ..] => Some(Hello::Stop {
            index: *index,
            reason: String::from_utf8_lossy(reason).into_owned(),
        }),
        _ => None,
    }
}

/// The reply with which the accepting party `me` accepts a peer: its index and its session,
/// and, answering a rejoining hello, its own attempt.
pub(super) fn accept_reply(me: usize, session: &[u8], attempt: Option<u64>) -> Vec<u8> {
    let mut reply = Vec::with_capacity(HELLO_MAGIC.len() + 3 + 8 + session.len());
    reply.extend_from_slice(HELLO_MAGIC);
    match attempt {
        None => reply.extend_from_slice(&[KIND_REPLY, REPLY_ACCEPT, me as u8]),
        Some(a) => {
            reply.extend_from_slice(&[KIND_REPLY, REPLY_ACCEPT_REJOIN, me as u8]);
            reply.extend_from_slice(&a.to_le_bytes());
        }
    }
    reply.extend_from_slice(session);
    reply
}

/// The reply that turns a dialler away with `code` and `body`: for [`REPLY_REFUSED`] the
/// reason, for [`REPLY_SESSION_DIFFERS`] the accepting party's session.
pub(super) fn refusal(code: u8, body: &[u8]) -> Vec<u8> {
    let mut reply = Vec::with_capacity(HELLO_MAGIC.len() + 2 + body.len());
    reply.extend_from_slice(HELLO_MAGIC);
    reply.extend_from_slice(&[KIND_REPLY, code]);
    reply.extend_from_slice(body);
    reply
}
