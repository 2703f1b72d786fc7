//! How the three serving parties agree on each batch: the followers (parties 1 and 2) offer the
//! requests they hold, the leader (party 0) takes, in its own arrival order, the requests all
//! three hold with the same shares' digest, up to the batch size, and sends the decision back.
//! One exchange per batch, and one per idle tick while no request is held by all three.

use std::collections::HashMap;

use crate::error::RuntimeError;
use crate::net::{NetError, Transport};

use super::wire::{Decision, Offer, Offered};

/// The leader's decision from its own offer and the followers': a request enters the batch
/// when every party holds it with the same digest and the batch has room (a request is never
/// split, and the first always fits: requests are refused above `max_batch` queries); a
/// request held by all with different digests is rejected by all.
pub fn decide(mine: &[Offered], followers: &[&[Offered]], max_batch: usize) -> Decision {
    let theirs: Vec<HashMap<&str, &Offered>> = followers
        .iter()
        .map(|o| o.iter().map(|r| (r.id.as_str(), r)).collect())
        .collect();
    let mut d = Decision::default();
    let mut queries = 0;
    for r in mine {
        let held: Option<Vec<&Offered>> = theirs
            .iter()
            .map(|t| t.get(r.id.as_str()).copied())
            .collect();
        let Some(held) = held else { continue };
        if held
            .iter()
            .any(|h| h.digest != r.digest || h.queries != r.queries || h.delete != r.delete)
        {
            d.rejected.push((
                r.id.clone(),
                "the parties received different shares under this request id (a retry must resend the same shares)".into(),
            ));
            continue;
        }
        if r.delete {
            d.delete.push(r.id.clone());
            continue;
        }
        // A reauthentication scans one claimed record: it runs alone, and nothing joins it.
        let alone_in = d.batch.len() == 1 && mine.iter().any(|m| m.id == d.batch[0] && m.alone);
        if alone_in || (r.alone && !d.batch.is_empty()) {
            continue;
        }
        if queries + r.queries > max_batch && !d.batch.is_empty() {
            continue;
        }
        queries += r.queries;
        d.batch.push(r.id.clone());
    }
    d
}

fn encode<T: serde::Serialize>(v: &T) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}

fn decode<T: serde::de::DeserializeOwned>(peer: usize, bytes: &[u8]) -> Result<T, RuntimeError> {
    serde_json::from_slice(bytes).map_err(|e| {
        RuntimeError::Net(NetError::Protocol {
            peer,
            detail: format!("not a batch agreement message: {e}"),
        })
    })
}

/// One agreement exchange: party 0 receives both offers and sends its decision; parties 1
/// and 2 send their offer and receive the decision.
pub fn exchange(
    net: &mut impl Transport,
    mine: Vec<Offered>,
    max_batch: usize,
) -> Result<Decision, RuntimeError> {
    if net.party() == 0 {
        let a: Offer = decode(1, &net.recv(1)?)?;
        let b: Offer = decode(2, &net.recv(2)?)?;
        let d = decide(&mine, &[&a.pending, &b.pending], max_batch);
        let bytes = encode(&d);
        net.send(1, bytes.clone())?;
        net.send(2, bytes)?;
        Ok(d)
    } else {
        net.send(0, encode(&Offer { pending: mine }))?;
        decode(0, &net.recv(0)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(id: &str, digest: &str, queries: usize) -> Offered {
        Offered {
            id: id.into(),
            digest: digest.into(),
            queries,
            delete: false,
            alone: false,
        }
    }

    #[test]
    fn a_reauthentication_runs_in_a_batch_of_its_own() {
        let alone = |id: &str| Offered {
            alone: true,
            ..o(id, "r", 1)
        };
        let mine = [o("a", "1", 1), alone("r1"), o("b", "2", 1), alone("r2")];
        let d = decide(&mine, &[&mine, &mine], 64);
        assert_eq!(d.batch, vec!["a".to_string(), "b".to_string()]);
        let later = [alone("r1"), o("b", "2", 1)];
        let d = decide(&later, &[&later, &later], 64);
        assert_eq!(d.batch, vec!["r1".to_string()]);
    }

    #[test]
    fn deletions_all_hold_are_settled_outside_the_batch() {
        let del = |id: &str| Offered {
            delete: true,
            ..o(id, "d", 0)
        };
        let mine = [del("x"), o("a", "1", 64), del("y")];
        let f1 = [o("a", "1", 64), del("x"), del("y")];
        let f2 = [del("x"), o("a", "1", 64)];
        let d = decide(&mine, &[&f1, &f2], 64);
        assert_eq!(d.delete, vec!["x".to_string()]);
        assert_eq!(
            d.batch,
            vec!["a".to_string()],
            "a deletion takes no room in the batch"
        );
    }

    #[test]
    fn only_requests_all_parties_hold_enter_in_the_leaders_order() {
        let mine = [o("a", "1", 1), o("b", "2", 2), o("c", "3", 1)];
        let f1 = [o("c", "3", 1), o("b", "2", 2)];
        let f2 = [o("b", "2", 2), o("c", "3", 1), o("a", "1", 1)];
        let d = decide(&mine, &[&f1, &f2], 64);
        assert_eq!(d.batch, vec!["b".to_string(), "c".to_string()]);
        assert!(d.rejected.is_empty());
    }

    #[test]
    fn different_shares_under_one_id_are_rejected_by_all() {
        let mine = [o("a", "1", 1), o("b", "2", 1)];
        let f1 = [o("a", "1", 1), o("b", "9", 1)];
        let f2 = [o("a", "1", 1), o("b", "2", 1)];
        let d = decide(&mine, &[&f1, &f2], 64);
        assert_eq!(d.batch, vec!["a".to_string()]);
        assert_eq!(d.rejected.len(), 1);
        assert_eq!(d.rejected[0].0, "b");
    }

    #[test]
    fn a_batch_holds_at_most_max_batch_queries_and_never_splits_a_request() {
        let mine = [o("a", "1", 3), o("b", "2", 3), o("c", "3", 1)];
        let d = decide(&mine, &[&mine, &mine], 4);
        assert_eq!(d.batch, vec!["a".to_string(), "c".to_string()]);
        let d = decide(&mine, &[&mine, &mine], 2);
        assert_eq!(
            d.batch,
            vec!["a".to_string()],
            "the first request always fits"
        );
    }

    #[test]
    fn three_parties_agree_over_links() {
        use crate::net::memory::MemoryTransport;
        let nets = MemoryTransport::triple();
        let offers = [
            vec![o("x", "1", 1), o("y", "2", 1)],
            vec![o("y", "2", 1)],
            vec![o("y", "2", 1), o("x", "1", 1)],
        ];
        let handles: Vec<_> = nets
            .into_iter()
            .zip(offers)
            .map(|(mut net, mine)| std::thread::spawn(move || exchange(&mut net, mine, 8).unwrap()))
            .collect();
        let ds: Vec<Decision> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        for d in &ds {
            assert_eq!(d.batch, vec!["y".to_string()]);
        }
    }
}
