//! An in-process [`Transport`] for unit tests of one protocol step: one endpoint per party (three
//! for rep3, [`MemoryTransport::group`] for other counts) joined by channels, each endpoint used
//! from its own thread.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use super::{NetError, Transport};

/// Polls of an empty channel before a receive sleeps.
const POLLS_BEFORE_SLEEP: usize = 64;

pub struct MemoryTransport {
    party: usize,
    /// Indexed by party; `None` at this party's own index.
    to: Vec<Option<Sender<Vec<u8>>>>,
    from: Vec<Option<Receiver<Vec<u8>>>>,
    timeout: Duration,
    bytes: u64,
    messages: u64,
}

impl MemoryTransport {
    /// Three connected endpoints, for parties 0, 1 and 2.
    pub fn triple() -> [MemoryTransport; 3] {
        match MemoryTransport::group(3).try_into() {
            Ok(three) => three,
            Err(_) => unreachable!("group(3) has three endpoints"),
        }
    }

    /// `n` connected endpoints, for parties `0..n` (at least two), in party order.
    pub fn group(n: usize) -> Vec<MemoryTransport> {
        assert!(n >= 2, "a run has at least two parties, not {n}");
        let mut senders: Vec<Vec<Option<Sender<Vec<u8>>>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        let mut receivers: Vec<Vec<Option<Receiver<Vec<u8>>>>> =
            (0..n).map(|_| (0..n).map(|_| None).collect()).collect();
        for a in 0..n {
            for b in 0..n {
                if a != b {
                    let (tx, rx) = channel();
                    senders[a][b] = Some(tx);
                    receivers[b][a] = Some(rx);
                }
            }
        }
        senders
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(party, (to, from))| MemoryTransport {
                party,
                to,
                from,
                timeout: Duration::from_secs(10),
                bytes: 0,
                messages: 0,
            })
            .collect()
    }
}

impl Transport for MemoryTransport {
    fn party(&self) -> usize {
        self.party
    }

    fn parties(&self) -> usize {
        self.to.len()
    }

    fn send(&mut self, to: usize, message: Vec<u8>) -> Result<(), NetError> {
        self.bytes += message.len() as u64;
        self.messages += 1;
        self.to
            .get(to)
            .and_then(Option::as_ref)
            .expect("no link to self or to a party outside the run")
            .send(message)
            .map_err(|_| NetError::Closed { peer: to })
    }

    fn recv(&mut self, from: usize) -> Result<Vec<u8>, NetError> {
        use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
        let rx = self
            .from
            .get(from)
            .and_then(Option::as_ref)
            .expect("no link to self or to a party outside the run");
        // Poll briefly, yielding the core, before sleeping on the channel: a peer's reply to a
        // round usually comes within microseconds, and a sleep and wake-up costs more than that
        // (the parties are threads of one process here; a network link would dwarf both).
        for _ in 0..POLLS_BEFORE_SLEEP {
            match rx.try_recv() {
                Ok(m) => return Ok(m),
                Err(TryRecvError::Empty) => std::thread::yield_now(),
                Err(TryRecvError::Disconnected) => return Err(NetError::Closed { peer: from }),
            }
        }
        match rx.recv_timeout(self.timeout) {
            Ok(m) => Ok(m),
            Err(RecvTimeoutError::Timeout) => Err(NetError::Timeout {
                peer: from,
                waited: self.timeout,
            }),
            Err(RecvTimeoutError::Disconnected) => Err(NetError::Closed { peer: from }),
        }
    }

    fn bytes_sent(&self) -> u64 {
        self.bytes
    }
    fn messages_sent(&self) -> u64 {
        self.messages
    }
}

/// Runs `f` once per party on its own thread with connected in-memory transports and returns
/// the three results in party order. For unit tests of a single protocol step.
pub fn run_three<R: Send + 'static>(
    f: impl Fn(MemoryTransport) -> R + Send + Sync + 'static,
) -> [R; 3] {
    match run_parties(3, f).try_into() {
        Ok(three) => three,
        Err(_) => unreachable!("run_parties(3) returns three results"),
    }
}

/// [`run_three`] for `n` parties (at least two): the results in party order.
pub fn run_parties<R: Send + 'static>(
    n: usize,
    f: impl Fn(MemoryTransport) -> R + Send + Sync + 'static,
) -> Vec<R> {
    let f = std::sync::Arc::new(f);
    let handles: Vec<_> = MemoryTransport::group(n)
        .into_iter()
        .map(|t| {
            let f = f.clone();
            std::thread::spawn(move || f(t))
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("party thread panicked"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_parties_exchange_and_next_is_prev() {
        let out = run_parties(2, |mut t| {
            assert_eq!(t.parties(), 2);
            let peer = 1 - t.party();
            assert_eq!((t.next(), t.prev()), (peer, peer));
            t.send(peer, vec![t.party() as u8; 4]).unwrap();
            t.recv(peer).unwrap()
        });
        assert_eq!(out, vec![vec![1; 4], vec![0; 4]]);
    }

    #[test]
    fn three_parties_keep_their_ring() {
        let out = run_three(|t| (t.parties(), t.next(), t.prev()));
        assert_eq!(out, [(3, 1, 2), (3, 2, 0), (3, 0, 1)]);
        let four = run_parties(4, |mut t| {
            let (me, next, prev) = (t.party(), t.next(), t.prev());
            t.send(next, vec![me as u8]).unwrap();
            (prev, t.recv(prev).unwrap())
        });
        for (me, (prev, got)) in four.into_iter().enumerate() {
            assert_eq!(prev, (me + 3) % 4);
            assert_eq!(got, vec![prev as u8]);
        }
    }
}
