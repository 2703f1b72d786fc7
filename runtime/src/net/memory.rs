//! An in-process [`Transport`] for unit tests of one protocol step: three endpoints joined by
//! channels, each endpoint used from its own thread.

use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::Duration;

use super::{NetError, Transport};

/// Polls of an empty channel before a receive sleeps.
const POLLS_BEFORE_SLEEP: usize = 64;

pub struct MemoryTransport {
    party: usize,
    to: [Option<Sender<Vec<u8>>>; 3],
    from: [Option<Receiver<Vec<u8>>>; 3],
    timeout: Duration,
    bytes: u64,
    messages: u64,
}

impl MemoryTransport {
    /// Three connected endpoints, for parties 0, 1 and 2.
    pub fn triple() -> [MemoryTransport; 3] {
        let mut senders: [[Option<Sender<Vec<u8>>>; 3]; 3] = Default::default();
        let mut receivers: [[Option<Receiver<Vec<u8>>>; 3]; 3] = Default::default();
        for a in 0..3 {
            for b in 0..3 {
                if a != b {
                    let (tx, rx) = channel();
                    senders[a][b] = Some(tx);
                    receivers[b][a] = Some(rx);
                }
            }
        }
        let [s0, s1, s2] = senders;
        let [r0, r1, r2] = receivers;
        let make = |party, to, from| MemoryTransport {
            party,
            to,
            from,
            timeout: Duration::from_secs(10),
            bytes: 0,
            messages: 0,
        };
        [make(0, s0, r0), make(1, s1, r1), make(2, s2, r2)]
    }
}

impl Transport for MemoryTransport {
    fn party(&self) -> usize {
        self.party
    }

    fn send(&mut self, to: usize, message: Vec<u8>) -> Result<(), NetError> {
        self.bytes += message.len() as u64;
        self.messages += 1;
        self.to[to]
            .as_ref()
            .expect("no link to self")
            .send(message)
            .map_err(|_| NetError::Closed { peer: to })
    }

    fn recv(&mut self, from: usize) -> Result<Vec<u8>, NetError> {
        use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
        let rx = self.from[from].as_ref().expect("no link to self");
        // Poll briefly, yielding the core, before sleeping on the channel: a peer's reply to a
        // round usually comes within microseconds, and a sleep and wake-up costs more than that
        // (the three parties are threads of one process here; a network link would dwarf both).
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
    let f = std::sync::Arc::new(f);
    let handles: Vec<_> = MemoryTransport::triple()
        .into_iter()
        .map(|t| {
            let f = f.clone();
            std::thread::spawn(move || f(t))
        })
        .collect();
    let mut out: Vec<R> = handles
        .into_iter()
        .map(|h| h.join().expect("party thread panicked"))
        .collect();
    let c = out.pop().unwrap();
    let b = out.pop().unwrap();
    let a = out.pop().unwrap();
    [a, b, c]
}
