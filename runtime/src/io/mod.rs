//! Files the parties and the dealer-side tools exchange.
//!
//! - [`ndjson`]: the plaintext iris-code format (one JSON record a line);
//! - [`share_file`]: one party's secret shares of a gallery or a query set.

pub mod ndjson;
pub mod share_file;
