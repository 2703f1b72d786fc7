//! Networking between the parties of a run: three for rep3, two or three for the
//! dishonest-majority protocols (any count from 2 to [`config::MAX_PARTIES`] works).
//!
//! Protocols see only the [`Transport`] trait: ordered, reliable, authenticated byte messages to
//! and from every other party. The real implementation ([`link`]) runs over TCP with mutually
//! authenticated TLS (rustls), one connection per direction so that sending never blocks on the
//! peer's own sending. [`config`] reads `parties.toml`; [`tls`] builds the rustls
//! configurations from it. [`session`] holds the settings the parties must share, compared in
//! the hello. [`memory`] is an in-process transport for unit tests of a single
//! protocol step.

pub mod config;
pub mod link;
pub mod memory;
pub mod session;
pub mod tls;
mod transport;

pub use config::{ConfigError, PartiesConfig, PartyEntry, MAX_PARTIES};
pub use link::{AbortHandle, SetupError, TlsTransport};
pub use tls::TlsSetupError;
pub use transport::{NetError, Transport};

/// Whether a connected socket's two ends are the same address (given as its `local_addr()`
/// and `peer_addr()`): a loopback dial to a port nobody listens on yet can be handed that port
/// as its own and connect to itself (TCP simultaneous open). Whoever dials treats it as
/// refused.
pub fn meets_itself(
    local: std::io::Result<std::net::SocketAddr>,
    peer: std::io::Result<std::net::SocketAddr>,
) -> bool {
    matches!((local, peer), (Ok(a), Ok(b)) if a == b)
}
