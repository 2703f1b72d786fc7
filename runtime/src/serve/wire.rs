//! What a client and a serving party exchange (JSON over HTTPS), and what the three parties
//! exchange to agree on each batch (JSON over their TLS links).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The path a client posts a request to.
pub const SUBMIT_PATH: &str = "/v1/requests";
/// Liveness: the process answers.
pub const HEALTH_PATH: &str = "/healthz";
/// Readiness: galleries loaded and links to both peers up.
pub const READY_PATH: &str = "/readyz";
/// Prometheus metrics (text exposition).
pub const METRICS_PATH: &str = "/metrics";

/// One request to one party: its share of each query input (a share file, base64), under an
/// id the client chose. The same id with the same shares is answered once and then replayed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Submit {
    pub request_id: String,
    /// Query input name -> this party's share file of the request's queries, base64.
    pub inputs: BTreeMap<String, String>,
    /// Uniqueness with enrolment: gallery input name -> this party's share file (gallery form,
    /// one record) of the request's query, enrolled into that gallery when no query of the
    /// request matched. Empty: match only.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub enroll: BTreeMap<String, String>,
    /// Deletion: the record ids to delete from every gallery store (then `inputs` and
    /// `enroll` are empty). A deleted record can never match again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub delete: Vec<u64>,
    /// Reauthentication: match the queries against the record with this id alone (the
    /// request runs in a batch of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only: Option<u64>,
    /// Reset (recovery): replace record `reset` of every gallery with the records of `enroll`
    /// (the person's new capture, under the same id), in all three stores or none, whatever
    /// the match; the queries are matched as in any request (a batch of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<u64>,
}

/// A party's answer to a request: the output party's carries the revealed fields per query
/// (`answers`, the lines a batch run prints, `query` counted within the request); the other
/// parties' say only that the request was computed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answer {
    pub request_id: String,
    pub party: usize,
    pub queries: usize,
    /// One JSON object per query, its fields in the order a batch run prints them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<Box<serde_json::value::RawValue>>,
    /// For a request that asked to be enrolled when unique: whether it was (durably, in all
    /// three parties' stores).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enrolled: Option<bool>,
    /// For a deletion: the ids deleted (durably, in all three parties' stores).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deleted: Vec<u64>,
    /// The request was not computed because its batch failed (a party stopped): a retry
    /// under the same id computes it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub retry: bool,
    /// Why the request was not computed (then `answers` is empty).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A request id: 1 to 128 characters of letters, digits, `.`, `_` and `-`.
pub fn valid_request_id(id: &str) -> bool {
    (1..=128).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The id a client's later attempt of request `id` goes by (`{id}.{attempt}`): when one party
/// never answered the first id (it restarted after the others had answered) the client asks
/// again under it, with the same shares.
pub fn derived_request_id(id: &str, attempt: u32) -> String {
    format!("{id}.{attempt}")
}

/// The first attempt's id of a request known by `id` ([`derived_request_id`] undone), if `id`
/// is a later attempt's.
pub fn first_attempt_id(id: &str) -> Option<&str> {
    let (base, n) = id.rsplit_once('.')?;
    (!base.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(base)
}

/// A follower's offer: the requests it holds, in arrival order, with the digest of their
/// shares' set ids (the three parties' files of one dealing carry the same set id).
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Offer {
    pub pending: Vec<Offered>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Offered {
    pub id: String,
    pub digest: String,
    pub queries: usize,
    /// A deletion (no queries): settled before the next batch, outside it.
    #[serde(default)]
    pub delete: bool,
    /// A reauthentication (against one claimed id) or a reset: a batch of its own.
    #[serde(default)]
    pub alone: bool,
}

/// The leader's (party 0's) decision for the next batch: the requests in it, in order, and
/// the requests all parties drop with the reason.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Decision {
    pub batch: Vec<String>,
    pub rejected: Vec<(String, String)>,
    /// Deletions all three hold, settled before the batch.
    #[serde(default)]
    pub delete: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A later attempt's id leads back to the first's; other ids (dots of the client's own
    /// included) do not.
    #[test]
    fn derived_ids_lead_back_to_the_first_attempt() {
        for id in ["abc", "a.b", "0f3e.x"] {
            assert_eq!(first_attempt_id(&derived_request_id(id, 1)), Some(id));
            assert_eq!(first_attempt_id(&derived_request_id(id, 12)), Some(id));
        }
        for id in ["abc", "abc.", ".3", "a.b", "a.3b"] {
            assert_eq!(first_attempt_id(id), None, "{id}");
        }
    }
}
