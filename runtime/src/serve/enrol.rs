//! Changes to the galleries that all three parties make or none: enrolment and deletion.
//!
//! Uniqueness with enrolment: after a batch, the requests that asked to be enrolled when
//! unique are enrolled into the galleries' stores of all three parties, or of none.
//!
//! Party 0 (to whom the program reveals `match`) decides per request: enrolled when no query
//! of it matched. It tells parties 1 and 2 the decision, which reveals to them whether each
//! such request was unique (the deployed system's servers learn this too: they all enrol).
//! Then a two-step commit over the links: every party stages the new records in its stores
//! (written and synced, not yet committed) and says so; party 0 says commit (or abort, with
//! why, when any party could not stage); every party commits and says so; only then are the
//! clients answered. A request is acknowledged as enrolled only when all three stores hold it
//! durably.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::Galleries;
use crate::error::RuntimeError;
use crate::io::share_file::ShareFile;
use crate::net::{NetError, Transport};
use crate::store::{Record, StoreWriter};

/// A request's records to enrol: per gallery input (manifest index), its gallery-form share
/// file (one record).
pub type Enrolment = Vec<(usize, ShareFile)>;

/// What became of a request that asked to be enrolled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Enrolled,
    /// An earlier attempt of the request (under another id) enrolled these very records:
    /// answered as that attempt was, not applied again.
    EnrolledEarlier,
    /// A query of it matched: not enrolled.
    NotUnique,
    /// Not computed as asked, with why (all parties say the same).
    Refused(String),
}

/// A request of the batch that asked to enrol: its id, its records, whether each of its queries
/// matched (party 0's view; `None` where the program does not reveal it), and for a reset the
/// id of the record its records replace.
pub struct Ask<'a> {
    pub id: String,
    pub records: &'a Enrolment,
    pub matched: Option<Vec<bool>>,
    pub replaces: Option<u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Decision {
    enrol: Vec<String>,
    refused: Vec<(String, String)>,
    /// Requests an earlier attempt already enrolled in all three stores: answered as
    /// enrolled, not applied again.
    applied: Vec<String>,
    /// (later, earlier): two attempts of one request in this very batch (all three parties
    /// found their records equal, [`repeats`]). The later is not staged again; it is
    /// answered as the earlier is.
    #[serde(default)]
    repeats: Vec<(String, String)>,
}

/// A follower's word before the decision: the requests whose records its stores already hold,
/// byte for byte ([`already_applied`]), and the repeats within the batch ([`repeats`]).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Held {
    applied: Vec<String>,
    #[serde(default)]
    repeats: Vec<(String, String)>,
}

/// The asks of this batch whose records equal, byte for byte, those of an earlier ask of the
/// batch: (later, the first such earlier). A client that hears from only two parties asks again
/// under a derived id with the same shares; when the first attempt is still queued at the
/// parties, both attempts land in one batch. Staging both would enrol the record id twice (and
/// is refused, failing both); the shares are a fresh random dealing, so equal shares are the
/// same request.
fn repeats(asks: &[Ask<'_>]) -> Vec<(String, String)> {
    let all: Vec<Option<Vec<(usize, Record<'_>)>>> = asks
        .iter()
        .map(|a| {
            a.records
                .iter()
                .map(|(g, f)| Record::of_share_file(f, 0).ok().map(|r| (*g, r)))
                .collect()
        })
        .collect();
    let mut out = Vec::new();
    for (i, later) in all.iter().enumerate() {
        let Some(later) = later.as_ref().filter(|r| !r.is_empty()) else {
            continue;
        };
        if let Some(j) = (0..i).find(|&j| all[j].as_ref() == Some(later)) {
            out.push((asks[i].id.clone(), asks[j].id.clone()));
        }
    }
    out
}

/// The requests among `asks` whose records every gallery store of this party already holds,
/// byte for byte, as the live records of their ids. A client whose request was computed and
/// enrolled while a party restarted asks again under a derived id with the same shares (the
/// other parties had answered, so the restarted one never hears of the first id again): those
/// shares are a fresh random dealing, so a store holding exactly them holds that request's
/// enrolment, and applying it again would append a second copy (a reset) or answer "not
/// unique" to the person it enrolled (a uniqueness check).
fn already_applied(inputs: &dyn Galleries, asks: &[Ask<'_>]) -> Vec<String> {
    asks.iter()
        .filter(|a| {
            !a.records.is_empty()
                && a.records.iter().all(|(g, f)| {
                    Record::of_share_file(f, 0).is_ok_and(|r| inputs.holds_identical(*g, &r))
                })
        })
        .map(|a| a.id.clone())
        .collect()
}

/// A party's word in the two-step commit: `None` when it did its step, else why it could not.
#[derive(Debug, Serialize, Deserialize)]
struct Step {
    failed: Option<String>,
}

fn send<T: Serialize>(net: &mut impl Transport, to: usize, v: &T) -> Result<(), RuntimeError> {
    Ok(net.send(to, serde_json::to_vec(v).unwrap_or_default())?)
}

fn recv<T: for<'de> Deserialize<'de>>(
    net: &mut impl Transport,
    from: usize,
) -> Result<T, RuntimeError> {
    let bytes = net.recv(from)?;
    serde_json::from_slice(&bytes).map_err(|e| {
        RuntimeError::Net(NetError::Protocol {
            peer: from,
            detail: format!("not an enrolment message: {e}"),
        })
    })
}

/// Party 0 collects both followers' steps and tells them the verdict (the first failure, any
/// party's); a follower sends its step and receives the verdict.
fn agree_step(
    net: &mut impl Transport,
    mine: Option<String>,
) -> Result<Option<String>, RuntimeError> {
    if net.party() == 0 {
        let a: Step = recv(net, 1)?;
        let b: Step = recv(net, 2)?;
        let verdict = mine
            .map(|w| format!("party 0: {w}"))
            .or(a.failed.map(|w| format!("party 1: {w}")))
            .or(b.failed.map(|w| format!("party 2: {w}")));
        for to in [1, 2] {
            send(
                net,
                to,
                &Step {
                    failed: verdict.clone(),
                },
            )?;
        }
        Ok(verdict)
    } else {
        send(net, 0, &Step { failed: mine })?;
        Ok(recv::<Step>(net, 0)?.failed)
    }
}

/// Settles the enrolments of a batch. `asks`: per request that asked, its id, its records and
/// (party 0 only) its revealed `match` values, one per query (None where party 0 holds none).
/// Returns each request's outcome, in the order given.
pub fn settle(
    net: &mut impl Transport,
    inputs: &mut dyn Galleries,
    party: usize,
    asks: &[Ask<'_>],
) -> Result<Vec<Outcome>, RuntimeError> {
    let mine = already_applied(&*inputs, asks);
    let my_repeats = repeats(asks);
    let decision = if party == 0 {
        let mut d = Decision::default();
        let (one, two): (Held, Held) = (recv(net, 1)?, recv(net, 2)?);
        for Ask { id, matched, .. } in asks {
            let holding = [&mine, &one.applied, &two.applied]
                .iter()
                .filter(|held| held.contains(id))
                .count();
            if holding == 3 {
                d.applied.push(id.clone());
                continue;
            }
            if holding > 0 {
                d.refused.push((
                    id.clone(),
                    format!("only {holding} of the three parties' stores hold this request's records (an interrupted enrolment): the parties reconcile their stores when they next connect; ask again then"),
                ));
                continue;
            }
            // A repeat only where all three parties found the records equal: a client that
            // sent other shares under a derived id is staged as itself (and refused when its
            // ids are taken).
            let repeat = my_repeats.iter().find(|(later, earlier)| {
                later == id
                    && [&one.repeats, &two.repeats]
                        .iter()
                        .all(|r| r.iter().any(|(l, e)| l == later && e == earlier))
            });
            if let Some(pair) = repeat {
                d.repeats.push(pair.clone());
                continue;
            }
            match matched {
                Some(m) if !m.is_empty() => {
                    if m.iter().all(|x| !x) {
                        d.enrol.push(id.clone());
                    }
                }
                _ => d.refused.push((
                    id.clone(),
                    "enrolment needs the program to reveal each query's `match` to party 0".into(),
                )),
            }
        }
        for to in [1, 2] {
            send(net, to, &d)?;
        }
        d
    } else {
        send(
            net,
            0,
            &Held {
                applied: mine,
                repeats: my_repeats,
            },
        )?;
        recv::<Decision>(net, 0)?
    };
    let enrol: HashSet<&str> = decision.enrol.iter().map(String::as_str).collect();
    let chosen: Vec<&Ask<'_>> = asks
        .iter()
        .filter(|a| enrol.contains(a.id.as_str()))
        .collect();

    // Per gallery input, the new records in batch order.
    let mut galleries: Vec<usize> = chosen
        .iter()
        .flat_map(|a| a.records.iter().map(|(g, _)| *g))
        .collect();
    galleries.sort_unstable();
    galleries.dedup();
    let mut writers = Vec::new();
    let mut staged = Vec::new();
    let mut failure = None;
    for &g in &galleries {
        let Some(path) = inputs.store_path(g).map(|p| p.to_path_buf()) else {
            failure = Some(format!("gallery input {g} is not a store"));
            break;
        };
        let records: Result<Vec<Record<'_>>, String> = chosen
            .iter()
            .flat_map(|a| a.records.iter().filter(|(i, _)| *i == g))
            .map(|(_, f)| Record::of_share_file(f, 0))
            .collect();
        let step = records.and_then(|recs| {
            let mut w = StoreWriter::open(&path).map_err(|e| e.to_string())?;
            // A reset's record takes the id of the record it replaces; no other may.
            let replaced: HashSet<u64> = chosen.iter().filter_map(|a| a.replaces).collect();
            let taken: HashSet<u64> = inputs
                .ids(g)
                .iter()
                .copied()
                .filter(|id| !replaced.contains(id))
                .collect();
            let mut seen = HashSet::new();
            if let Some(r) = recs
                .iter()
                .find(|r| taken.contains(&r.id) || !seen.insert(r.id))
            {
                return Err(format!("record id {} is already enrolled", r.id));
            }
            let next = w.stage(&recs).map_err(|e| e.to_string())?;
            Ok((w, next))
        });
        match step {
            Ok((w, next)) => {
                writers.push(w);
                staged.push(next);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    // Commit only when all three staged.
    if let Some(why) = agree_step(net, failure)? {
        drop(writers);
        let outcome = Outcome::Refused(format!("not enrolled: {why}"));
        return Ok(asks
            .iter()
            .map(|a| refused_or(&decision, &a.id, &enrol, || outcome.clone()))
            .collect());
    }
    let mut failure = None;
    for (w, next) in writers.iter_mut().zip(&staged) {
        if let Err(e) = w.commit(next) {
            failure = Some(e.to_string());
            break;
        }
    }
    drop(writers);
    if let Some(why) = agree_step(net, failure)? {
        // A party could not commit what all staged: the stores now disagree, which the
        // parties see at their next start (their record-id digests differ); stop serving.
        return Err(RuntimeError::Setup(format!(
            "an enrolment was staged by all parties but not committed by all ({why}); restart the parties to reconcile their stores"
        )));
    }
    for &g in &galleries {
        inputs.reload_store(g, party)?;
    }
    Ok(asks
        .iter()
        .map(|a| refused_or(&decision, &a.id, &enrol, || Outcome::Enrolled))
        .collect())
}

fn refused_or(
    d: &Decision,
    id: &str,
    enrol: &HashSet<&str>,
    chosen: impl FnOnce() -> Outcome,
) -> Outcome {
    // A repeat in the batch is answered as its earlier attempt (which is no repeat itself:
    // `repeats` names the first equal ask).
    if let Some((_, earlier)) = d.repeats.iter().find(|(later, _)| later == id) {
        return refused_or(d, earlier, enrol, chosen);
    }
    if d.applied.iter().any(|a| a == id) {
        Outcome::EnrolledEarlier
    } else if let Some((_, why)) = d.refused.iter().find(|(r, _)| r == id) {
        Outcome::Refused(why.clone())
    } else if enrol.contains(id) {
        chosen()
    } else {
        Outcome::NotUnique
    }
}

/// Deletes, per request, its record ids from every gallery store of this party (appended to
/// the store's deleted ids and synced, then the gallery reloaded: `store::deleted`), and
/// agrees with the other parties that all did. A request naming an id no gallery holds is
/// refused by all (the stores agree, so all see it). Returns each request's outcome.
pub fn delete(
    net: &mut impl Transport,
    inputs: &mut dyn Galleries,
    party: usize,
    asks: &[(String, Vec<u64>)],
) -> Result<Vec<Result<(), String>>, RuntimeError> {
    let stores: Vec<usize> = (0..inputs.count())
        .filter(|&i| inputs.store_path(i).is_some())
        .collect();
    let mut outcomes = Vec::with_capacity(asks.len());
    let mut failure = None;
    for (_, ids) in asks {
        let unknown = stores.iter().find_map(|&g| {
            let held: HashSet<u64> = inputs.ids(g).iter().copied().collect();
            ids.iter().find(|id| !held.contains(id)).copied()
        });
        if let Some(id) = unknown {
            outcomes.push(Err(format!("record id {id} is not enrolled")));
            continue;
        }
        for &g in &stores {
            let path = inputs.store_path(g).map(|p| p.to_path_buf());
            if let Some(path) = path {
                if let Err(e) = crate::store::deleted::append(&path, ids) {
                    failure.get_or_insert(e);
                }
            }
        }
        outcomes.push(Ok(()));
    }
    if failure.is_none() {
        for &g in &stores {
            if let Err(e) = inputs.reload_store(g, party) {
                failure.get_or_insert(e.to_string());
            }
        }
    }
    if let Some(why) = agree_step(net, failure)? {
        return Err(RuntimeError::Setup(format!(
            "a deletion was not made by all parties ({why}); restart the parties to compare their stores"
        )));
    }
    Ok(outcomes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::share_file::{RingVec, ShareFileHeader};
    use crate::vocab::{InputKind, InputMask, InputRole, Sharing};

    /// Galleries that are not stores (staging anything fails, naming it) but "hold" the records
    /// of the requests named.
    struct HeldBy(Vec<&'static str>);

    impl Galleries for HeldBy {
        fn count(&self) -> usize {
            1
        }
        fn store_path(&self, _: usize) -> Option<&std::path::Path> {
            None
        }
        fn ids(&self, _: usize) -> &[u64] {
            &[]
        }
        fn reload_store(&mut self, _: usize, _: usize) -> Result<(), RuntimeError> {
            Ok(())
        }
        fn gallery_records(&self) -> usize {
            0
        }
        fn galleries_hold(&self, _: u64) -> bool {
            false
        }
        fn restrict_galleries(&mut self, _: Option<u64>) {}
        fn deleted(&self, _: u64) -> bool {
            false
        }
        fn holds_identical(&self, _: usize, record: &Record<'_>) -> bool {
            // The record's id says which request it is (below).
            self.0.iter().any(|r| *r == REQUESTS[record.id as usize])
        }
    }

    const REQUESTS: [&str; 4] = ["applied-everywhere", "applied-at-one", "unique", "matched"];

    fn one_record(id: u64) -> ShareFile {
        ShareFile {
            header: ShareFileHeader {
                version: crate::io::share_file::FORMAT_VERSION,
                role: InputRole::Gallery,
                party: 0,
                sharing: Sharing::Rep3,
                mask: InputMask::Secret,
                ring_bits: 16,
                elements: 64,
                count: 1,
                set_id: [0; 16],
                body_hash: [0; 32],
                payload: InputKind::Iris,
                scale_bits: 0,
                conjugate: false,
            },
            ids: vec![id],
            masks: Vec::new(),
            own: RingVec::U16(vec![0; 128]),
            prev: RingVec::U16(vec![0; 128]),
        }
    }

    /// The decision before any staging: a request whose records all three parties' stores
    /// already hold is answered as enrolled without staging (here staging would fail); one
    /// that only some hold is refused as an interrupted enrolment; the others are decided by
    /// party 0's revealed matches (a matched one is not unique; an unmatched one is staged,
    /// which fails here because the galleries are not stores).
    #[test]
    fn requests_already_in_all_three_stores_are_enrolled_without_staging() {
        let outcomes = crate::net::memory::run_three(|mut net| {
            let party = net.party();
            let holding = match party {
                0 => vec!["applied-everywhere", "applied-at-one"],
                _ => vec!["applied-everywhere"],
            };
            let mut galleries = HeldBy(holding);
            let files: Vec<Enrolment> = (0..4).map(|k| vec![(0, one_record(k))]).collect();
            let asks: Vec<Ask<'_>> = REQUESTS
                .iter()
                .zip(&files)
                .map(|(id, records)| Ask {
                    id: id.to_string(),
                    records,
                    matched: (party == 0).then(|| vec![*id == "matched"]),
                    replaces: None,
                })
                .collect();
            settle(&mut net, &mut galleries, party, &asks).unwrap()
        });
        for (p, o) in outcomes.iter().enumerate() {
            assert_eq!(o[0], Outcome::EnrolledEarlier, "party {p}");
            match &o[1] {
                Outcome::Refused(why) => assert!(
                    why.contains("only 1 of the three parties' stores hold"),
                    "{why}"
                ),
                other => panic!("party {p}: {other:?}"),
            }
            match &o[2] {
                Outcome::Refused(why) => {
                    assert!(why.contains("gallery input 0 is not a store"), "{why}")
                }
                other => panic!("party {p}: {other:?}"),
            }
            assert_eq!(o[3], Outcome::NotUnique, "party {p}");
        }
    }
}
