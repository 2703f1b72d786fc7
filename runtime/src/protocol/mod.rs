//! The interactive protocols of the rep3 backend, one operation per module, named as in the paper
//! (Bloemen et al., "Large-scale MPC: scaling private iris code uniqueness checks to millions of
//! users", Appendix C and E).
//!
//! Every protocol is batched: one call processes a whole vector and sends at most ONE message
//! per peer per communication round, whatever the vector length (unless a chunk size is set with
//! [`set_chunk_elems`]: then [`bit_extract()`], [`additive_msb()`] and [`or_groups`] send a
//! round as one message per chunk, with the same bytes). The shapes (lengths, k, group sizes)
//! are public and identical at all parties, so all parties draw the same amount of PRSS
//! randomness in the same order. Every received message is length-checked; a malformed one
//! becomes [`NetError::Protocol`], never a panic. Opening ([`open`]) needs no randomness and so
//! is the one step that takes no [`crate::rand::Prss`].

pub mod additive_msb;
pub mod and;
pub mod bin_sub;
pub mod bit_extract;
pub mod bit_extract_mod;
pub mod bit_extract_p;
pub mod bit_inject;
pub mod bit_planes;
pub mod dot;
pub mod galois_dot;
pub mod lift;
pub mod lift_p;
pub mod mux;
pub mod open;
pub mod or_tree;
pub mod ot3;
pub mod reshare;
pub mod stats;

pub use additive_msb::additive_msb;
pub use and::{and, and_many};
pub use bit_extract::{bin_add, bit_extract, full_adder, msb, share_split};
pub use bit_inject::bit_inject;
pub use dot::{dot_local, masked_dot, prepare};
pub use galois_dot::{galois_dot, galois_dot_local, prepare_query};
pub use lift::{const_lift, mpc_lift};
pub use mux::cmux;
pub use open::{open_all, open_bits};
pub use or_tree::{or_all, or_groups};
pub use ot3::{ot3, Ot3Input, Ot3Roles};
pub use reshare::reshare;
pub use stats::Stats;

use std::cell::Cell;

use crate::net::{NetError, Transport};
use crate::ring::{from_le_bytes, to_le_bytes, RingElem};

/// The default of [`set_chunk_elems`] for a CPU party (`--chunk-size`): a round's message in
/// chunks of 2^20 elements (2 MB of 16-bit words, 128 KB of bits), so that the parties' work on
/// one chunk overlaps the next chunk's transfer and the rounds of an op pipeline. Batches of
/// fewer elements send one message per round as before. Measured with a batch of 8 queries
/// against 100 000 records (24.8 M comparisons), three parties: on the WAN of `bench net` the
/// comparison phase took 3.11 s against 4.32 s in one message per round; on loopback
/// 0.91-1.84 s (median 0.94) against 1.27-3.04 s (median 1.84) over five alternating runs.
pub const DEFAULT_CHUNK_ELEMS: usize = 1 << 20;

/// The default of `--chunk-size` for a party built by `backend` (the manifest's `build`):
/// [`DEFAULT_CHUNK_ELEMS`], except one message per round (0) for a `cuda` build, whose MSB
/// extraction runs on the device only unchunked (`gpu::msb`).
pub fn default_chunk_elems(backend: &str) -> usize {
    if backend == crate::contract::gpu::BACKEND {
        0
    } else {
        DEFAULT_CHUNK_ELEMS
    }
}

thread_local! {
    /// Elements per message chunk of the round-batched binary protocols; 0 = one message per
    /// round. Per thread, because each party runs its protocols on one thread.
    static CHUNK: Cell<usize> = const { Cell::new(0) };
}

/// Splits the large round messages of the binary protocols ([`bit_extract()`], [`msb`],
/// [`additive_msb()`], [`or_groups`]) into
/// messages of `elems` elements (rounded up to whole 64-element words) on the calling thread,
/// so that a party computes chunk i + 1 of a round while chunk i is in flight, and its peer
/// starts the next round on chunk i before chunk i + 1 arrives. Rounds, bytes and randomness
/// are unchanged; a round of w words becomes ceil(w / chunk words) messages. 0 (the default)
/// sends one message per round. All three parties must use the same setting: a mismatch makes
/// the message lengths disagree, which is reported as [`NetError::Protocol`]. Returns the
/// previous setting.
pub fn set_chunk_elems(elems: usize) -> usize {
    CHUNK.with(|c| c.replace(elems))
}

/// The calling thread's chunk size in elements (0: unchunked).
pub fn chunk_elems() -> usize {
    CHUNK.with(|c| c.get())
}

/// Word ranges `[a, b)` of the chunks of a `words`-word round, in order.
pub(crate) fn chunk_ranges(words: usize) -> Vec<(usize, usize)> {
    let c = match chunk_elems() {
        0 => words.max(1),
        e => e.div_ceil(64),
    };
    (0..words.div_ceil(c))
        .map(|i| (i * c, ((i + 1) * c).min(words)))
        .collect()
}

/// Receives exactly `n` ring elements from `from`.
pub(crate) fn recv_elems<T: RingElem>(
    net: &mut dyn Transport,
    from: usize,
    n: usize,
    what: &str,
) -> Result<Vec<T>, NetError> {
    let msg = net.recv(from)?;
    from_le_bytes::<T>(&msg, n).ok_or_else(|| NetError::Protocol {
        peer: from,
        detail: format!(
            "{what}: {} bytes, expected {} ({n} elements of {} bits)",
            msg.len(),
            n * std::mem::size_of::<T>(),
            T::BITS
        ),
    })
}

/// Sends `v` to `to` in the wire format.
pub(crate) fn send_elems<T: RingElem>(
    net: &mut dyn Transport,
    to: usize,
    v: &[T],
) -> Result<(), NetError> {
    net.send(to, to_le_bytes(v))
}

/// Runs one protocol step at the three parties on threads, for unit tests.
#[cfg(test)]
pub(crate) mod testutil {
    use crate::net::memory::run_three;
    use crate::net::Transport;
    use crate::rand::Prss;

    /// One party's result and what the step (not the PRSS setup) cost it.
    pub struct Run<R> {
        pub out: R,
        pub messages: u64,
        pub bytes: u64,
    }

    /// Sets up a PRSS, then runs `f` with party i's input `inputs[i]`.
    pub fn run_protocol<I, R>(
        inputs: [I; 3],
        f: impl Fn(&mut dyn Transport, &mut Prss, &I) -> R + Send + Sync + 'static,
    ) -> [Run<R>; 3]
    where
        I: Send + Sync + 'static,
        R: Send + 'static,
    {
        run_three(move |mut t| {
            let mut prss = Prss::setup(&mut t).expect("PRSS setup");
            let (m0, b0) = (t.messages_sent(), t.bytes_sent());
            let me = t.party();
            let out = f(&mut t, &mut prss, &inputs[me]);
            Run {
                out,
                messages: t.messages_sent() - m0,
                bytes: t.bytes_sent() - b0,
            }
        })
    }

    /// The adversarial values of Z_2^k: 0, 1, −1, 2^(k−1) − 1, 2^(k−1), 2^k − 1.
    pub fn edge_values(k: u32) -> Vec<u64> {
        let m = crate::ring::mask(k);
        let half = 1u64 << (k - 1);
        vec![0, 1 & m, m, half - 1, half, m]
    }
}
