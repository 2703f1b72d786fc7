//! Files the parties and the dealer-side tools exchange.
//!
//! - [`ndjson`]: the plaintext iris-code format (one JSON record a line);
//! - [`ndjson_values`]: the plaintext embedding and bit formats;
//! - [`share_file`]: one party's secret shares of one input (any kind and sharing);
//! - [`owner_only`]: the refusal of secret files that other users can access.

pub mod answer;
pub mod ndjson;
pub mod ndjson_values;
pub mod owner_only;
pub mod share_file;
