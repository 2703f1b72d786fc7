//! Serving parties reconcile their gallery stores each time they connect (at start and after a
//! peer came back): an enrolment is acknowledged only once all three stores committed it, so
//! records that not all three hold were never acknowledged (a party was killed between the
//! parties' commits) and are rolled back where they are; a deletion that reached only some
//! parties is made by all (deleting is what its client asked, and it is idempotent). Stores
//! that disagree within the records all three hold are not reconciled: the parties refuse to
//! serve together and say so.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::error::RuntimeError;
use crate::net::{NetError, Transport};
use crate::store::StoreWriter;

use super::Galleries;

/// One party's view of one gallery store: its record ids in order and its deleted ids.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct StoreView {
    ids: Vec<u64>,
    deleted: Vec<u64>,
}

/// What reconciling changed at this party, for its log.
#[derive(Debug, Default, PartialEq)]
pub struct Reconciled {
    pub rolled_back: usize,
    pub deletions_added: usize,
}

/// The length of the longest prefix the three id lists share.
fn common_prefix(lists: &[&[u64]]) -> usize {
    let shortest = lists.iter().map(|l| l.len()).min().unwrap_or(0);
    (0..shortest)
        .find(|&i| lists.iter().any(|l| l[i] != lists[0][i]))
        .unwrap_or(shortest)
}

/// Exchanges the stores' views with both peers and brings this party's stores to the state
/// all three agree on (see the module doc).
pub fn reconcile(
    net: &mut impl Transport,
    galleries: &mut dyn Galleries,
    party: usize,
) -> Result<Reconciled, RuntimeError> {
    let stores: Vec<usize> = (0..galleries.count())
        .filter(|&i| galleries.store_path(i).is_some())
        .collect();
    let mut done = Reconciled::default();
    for &g in &stores {
        let path = galleries
            .store_path(g)
            .map(|p| p.to_path_buf())
            .unwrap_or_default();
        // The store as it is on disk, not as this party last loaded it: a party whose link
        // broke between committing an enrolment and reloading its gallery holds the records
        // in its store only, and the view must show them (to be rolled back or kept).
        galleries.reload_store(g, party)?;
        let mine = StoreView {
            ids: galleries.ids(g).to_vec(),
            deleted: crate::store::deleted::read(&path).map_err(RuntimeError::Input)?,
        };
        let bytes = serde_json::to_vec(&mine).unwrap_or_default();
        let peers: Vec<usize> = (0..3).filter(|&p| p != party).collect();
        for &p in &peers {
            net.send(p, bytes.clone())?;
        }
        let mut theirs = Vec::new();
        for &p in &peers {
            let view: StoreView = serde_json::from_slice(&net.recv(p)?).map_err(|e| {
                RuntimeError::Net(NetError::Protocol {
                    peer: p,
                    detail: format!("not a store view: {e}"),
                })
            })?;
            theirs.push(view);
        }
        let lists: Vec<&[u64]> = std::iter::once(mine.ids.as_slice())
            .chain(theirs.iter().map(|v| v.ids.as_slice()))
            .collect();
        let common = common_prefix(&lists);
        let shortest = lists.iter().map(|l| l.len()).min().unwrap_or(0);
        if common < shortest {
            return Err(RuntimeError::Setup(format!(
                "the parties' stores of gallery input {g} hold different records at position {common} (not an interrupted enrolment): they cannot serve together; compare them with `irisc store info`"
            )));
        }
        let mut changed = false;
        if mine.ids.len() > common {
            StoreWriter::open(&path)
                .and_then(|mut w| w.roll_back(common as u64))
                .map_err(|e| RuntimeError::Input(e.to_string()))?;
            done.rolled_back += mine.ids.len() - common;
            changed = true;
        }
        let held: BTreeSet<u64> = mine.ids[..common].iter().copied().collect();
        let have: BTreeSet<u64> = mine.deleted.iter().copied().collect();
        let missing: Vec<u64> = theirs
            .iter()
            .flat_map(|v| v.deleted.iter().copied())
            .filter(|id| held.contains(id) && !have.contains(id))
            .collect::<BTreeSet<u64>>()
            .into_iter()
            .collect();
        if !missing.is_empty() {
            crate::store::deleted::append(&path, &missing).map_err(RuntimeError::Input)?;
            done.deletions_added += missing.len();
            changed = true;
        }
        if changed {
            galleries.reload_store(g, party)?;
        }
    }
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_prefix_is_where_the_lists_first_differ_or_the_shortest_ends() {
        assert_eq!(common_prefix(&[&[1, 2, 3], &[1, 2], &[1, 2, 3, 4]]), 2);
        assert_eq!(common_prefix(&[&[1, 2, 3], &[1, 9, 3], &[1, 2, 3]]), 1);
        assert_eq!(common_prefix(&[&[], &[1], &[1]]), 0);
        assert_eq!(common_prefix(&[&[5, 6], &[5, 6], &[5, 6]]), 2);
    }
}
