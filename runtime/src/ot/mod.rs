//! Two-party oblivious transfer (semi-honest): base OT and IKNP extension, for the
//! dishonest-majority (Beaver-triple) protocols.
//!
//! Why our own: the maintained Rust implementation, `cryprot-ot`, runs its protocols only over
//! `cryprot-net`'s `Connection`, which is bound to QUIC (s2n-quic), while our parties talk over
//! mutually authenticated TLS/TCP through [`crate::net::Transport`]. So base OT and OT extension
//! are written here against that trait, each algorithm cited where it is implemented.
//!
//! - [`base`]: the "simplest OT" of Chou and Orlandi (LATINCRYPT 2015) over Ristretto, batched;
//! - [`extension`]: IKNP (CRYPTO 2003), κ = 128: [`OtSender`] / [`OtReceiver`], one setup per
//!   ordered pair of parties, extended as often as needed;
//! - [`chosen`]: chosen-message OT of byte strings on top of the random OTs;
//! - [`transpose`]: the 128 x n bit-matrix transpose on 64 x 64 word blocks;
//! - [`hash`]: the correlation-robust hash (fixed-key AES, TMMO of Guo et al., S&P 2020) and
//!   the PRG [`prg_expand`] (AES-128-CTR).
//!
//! Usage: party A calls [`OtSender::setup`] with B while B calls [`OtReceiver::setup`] with A;
//! then each [`OtSender::random`] (or `send_chosen`) on A pairs with one [`OtReceiver::random`]
//! (or `receive_chosen`) on B, with the same count, in the same order relative to their other
//! messages. Keys, choices and messages are secrets: no type here prints them.

pub mod base;
pub mod chosen;
pub mod extension;
pub mod hash;
pub mod transpose;

/// A κ = 128-bit OT message or key.
pub type Block = u128;

pub use extension::{OtReceiver, OtSender, KAPPA};
pub use hash::prg_expand;

#[cfg(test)]
mod tests;

/// Runs `a` as party 0 and `b` as party 1 on two threads of in-memory transports (party 2's
/// endpoint idles) and returns both results.
#[cfg(test)]
pub(crate) fn run_pair<A: Send + 'static, B: Send + 'static>(
    a: impl FnOnce(crate::net::memory::MemoryTransport) -> A + Send + 'static,
    b: impl FnOnce(crate::net::memory::MemoryTransport) -> B + Send + 'static,
) -> (A, B) {
    let [t0, t1, _t2] = crate::net::memory::MemoryTransport::triple();
    let ha = std::thread::spawn(move || a(t0));
    let hb = std::thread::spawn(move || b(t1));
    (
        ha.join().expect("party 0 panicked"),
        hb.join().expect("party 1 panicked"),
    )
}
