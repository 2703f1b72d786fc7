//! The runtime's error type: every failure a party can meet, as a message a user can act on.

use crate::net::NetError;

#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    Input(String),
    /// A link failed or a peer stopped; the message names the party concerned.
    #[error("{0}")]
    Net(#[from] NetError),
    #[error("{0}")]
    Setup(String),
    /// A slot read before it was written, or of the wrong kind: a bug in the generated schedule.
    #[error("internal error in the generated schedule: {0}")]
    Schedule(String),
}
