use std::time::Duration;

/// What can go wrong on a link. Every variant names the peer, so a user learns which party to look at.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    #[error("party {peer} closed its link (it stopped or was killed)")]
    Closed { peer: usize },
    #[error(
        "party {peer} sent nothing for {waited:?}: it stalled or the network is down (timeout)"
    )]
    Timeout { peer: usize, waited: Duration },
    #[error("link to party {peer}: {detail}")]
    Io { peer: usize, detail: String },
    #[error("party {peer} sent a malformed message: {detail}")]
    Protocol { peer: usize, detail: String },
    /// The peer stopped and said why in an abort frame; `reason` may name a third party (the
    /// one whose failure made the peer stop).
    #[error("party {peer} stopped: {reason}")]
    Aborted { peer: usize, reason: String },
}

/// Ordered, reliable byte messages between this party and every other party of the run.
///
/// Parties are numbered `0..parties()` (three for rep3, two or three for the dishonest-majority
/// protocols); `next` is `party + 1 mod n` and `prev` is `party - 1 mod n` (with two parties both
/// are the one peer). `send` never blocks on the peer (messages are queued); `recv` blocks until
/// the next message from that peer arrives, at most for the transport's timeout.
pub trait Transport {
    /// This party's index, `0..parties()`.
    fn party(&self) -> usize;
    /// The number of parties in the run, at least 2.
    fn parties(&self) -> usize;
    /// Queue one message to party `to`.
    fn send(&mut self, to: usize, message: Vec<u8>) -> Result<(), NetError>;
    /// Receive the next message from party `from`.
    fn recv(&mut self, from: usize) -> Result<Vec<u8>, NetError>;

    fn next(&self) -> usize {
        (self.party() + 1) % self.parties()
    }
    fn prev(&self) -> usize {
        let n = self.parties();
        (self.party() + n - 1) % n
    }
    /// Bytes sent so far (payload only), for the cost accounting.
    fn bytes_sent(&self) -> u64;
    /// Messages sent so far.
    fn messages_sent(&self) -> u64;
}
