//! The preprocessing phase of Pi_MT (paper 004, Fig. 4: `TripleGen(neededtriples(C))` and
//! every conditional's `MaskGen`, which "does not depend on any circuit values, and thus can be
//! moved to a pre-processing phase"), and the check at the start of the online phase that all
//! parties consume the same execution of the same batch.

use crate::net::{NetError, Transport};

use super::links::OtLinks;
use super::mask_gen::{mask_gen, MaskGenMethod};
use super::material::Material;
use super::schedule::Schedule;
use super::triple_gen::triple_gen;
use super::{BeaverError, LocalRng, Parties};

/// One party's preprocessing for `executions` runs of `schedule` on `lanes` lanes, and the
/// batch id the parties agreed on (every party's random contribution XORed).
pub fn preprocess(
    net: &mut dyn Transport,
    parties: Parties,
    schedule: &Schedule,
    lanes: usize,
    method: MaskGenMethod,
    executions: u32,
) -> Result<([u8; 16], Vec<Material>), BeaverError> {
    let mut session = Preprocessing::start(net, parties, lanes)?;
    let mut out = Vec::with_capacity(executions as usize);
    for _ in 0..executions {
        out.push(session.next_execution(net, schedule, method)?);
    }
    Ok((session.batch, out))
}

/// A preprocessing run between the parties: the batch id agreed and the OT links set up once;
/// then one execution's triples and masks at a time (so a store of many executions is written
/// as they come, never held whole).
pub struct Preprocessing {
    pub batch: [u8; 16],
    lanes: usize,
    links: OtLinks,
    rng: LocalRng,
}

impl Preprocessing {
    pub fn start(
        net: &mut dyn Transport,
        parties: Parties,
        lanes: usize,
    ) -> Result<Preprocessing, BeaverError> {
        if lanes == 0 {
            return Err(BeaverError::Material(
                "a run needs at least one lane".into(),
            ));
        }
        let mut rng = LocalRng::new()?;
        let mut mine = [0u8; 16];
        rng.fill_bytes(&mut mine);
        let batch = agree_batch(net, parties, mine)?;
        let links = OtLinks::setup(net, parties)?;
        Ok(Preprocessing {
            batch,
            lanes,
            links,
            rng,
        })
    }

    /// TripleGen and every conditional's MaskGen for one more execution.
    pub fn next_execution(
        &mut self,
        net: &mut dyn Transport,
        schedule: &Schedule,
        method: MaskGenMethod,
    ) -> Result<Material, BeaverError> {
        let rows: Vec<u64> = schedule.conds.iter().map(|c| c.mask_rows()).collect();
        let triples = triple_gen(
            net,
            &mut self.links,
            &mut self.rng,
            schedule.triples,
            self.lanes,
        )?;
        let masks = mask_gen(
            net,
            &mut self.links,
            &mut self.rng,
            method,
            &rows,
            self.lanes,
        )?;
        Ok(Material {
            lanes: self.lanes,
            triples,
            masks,
        })
    }
}

/// XOR of every party's 16 random bytes: nobody picks the batch id alone.
fn agree_batch(
    net: &mut dyn Transport,
    parties: Parties,
    mine: [u8; 16],
) -> Result<[u8; 16], BeaverError> {
    for peer in parties.peers() {
        net.send(peer, mine.to_vec())?;
    }
    let mut batch = mine;
    for peer in parties.peers() {
        let got = net.recv(peer)?;
        let got: [u8; 16] = got.as_slice().try_into().map_err(|_| NetError::Protocol {
            peer,
            detail: format!("batch contribution of {} bytes, expected 16", got.len()),
        })?;
        for (b, g) in batch.iter_mut().zip(got) {
            *b ^= g;
        }
    }
    Ok(batch)
}

/// Before the online phase: every party says which batch and execution it took; any
/// difference stops the run (triples of different executions would compute garbage silently).
pub fn check_same_execution(
    net: &mut dyn Transport,
    parties: Parties,
    batch: [u8; 16],
    execution: u32,
) -> Result<(), BeaverError> {
    let mut mine = batch.to_vec();
    mine.extend_from_slice(&execution.to_le_bytes());
    for peer in parties.peers() {
        net.send(peer, mine.clone())?;
    }
    for peer in parties.peers() {
        let got = net.recv(peer)?;
        if got != mine {
            let theirs =
                (got.len() == 20).then(|| u32::from_le_bytes(got[16..20].try_into().expect("4")));
            let detail = match theirs {
                Some(e) if got[..16] == mine[..16] => format!(
                    "party {peer} took execution {e} of the preprocessing batch, this party took {execution}: \
                     the stores were consumed unevenly; run the preprocessing again on all parties"
                ),
                _ => format!(
                    "party {peer} holds preprocessing of another batch: all parties must use the stores of one preprocessing run"
                ),
            };
            return Err(BeaverError::Material(detail));
        }
    }
    Ok(())
}
