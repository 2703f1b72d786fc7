//! The online phase of Pi_MT (paper 004, Fig. 4) over XOR sharings among p parties, on the
//! rounds of a [`Schedule`].
//!
//! - AND (Pi_Base, Sect. 2.5): with a (possibly masked) triple `[a], [b], [c]`, open
//!   `d = x ^ a` and `e = y ^ b`; then `[xy] = d e ^ d [b] ^ e [a] ^ [c]` (the public `d e`
//!   added by party 0 only).
//! - Entering a conditional (Sect. 4.1): open `s ^ t`; where it is 1 the parties swap their
//!   shares of `M^0` and `M^1`, so `M^t` is the sharing of zeros. Branch `b`'s triples are the
//!   shared range with row `2k` of `M^b` XORed onto `a` and row `2k + 1` onto `b`
//!   (`applymask`); `c` is left as it is, so the inactive branch's triples are invalid but its
//!   openings are uniform.
//! - Leaving it: the multiplexer `x0 ^ t (x0 ^ x1)` (Eq. (1)), AND gates of the schedule.
//!
//! Each round is one message from every party to every other, whatever the number of lanes.

use crate::net::{NetError, Transport};

use super::material::{words_for, Material, Triples};
use super::schedule::{Schedule, Step};
use super::{BeaverError, Parties};

/// What one evaluation produced at this party.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    /// XOR shares of the outputs, `words` words each.
    pub outputs: Vec<u64>,
    /// Rounds of openings used.
    pub rounds: u64,
    /// Triples consumed (the schedule's count).
    pub triples: u64,
}

/// Sends this party's shares of some values to every other party and XORs in theirs: the
/// opened values, in one round. `words` holds the values one after another, `words_for(lanes)`
/// words each; only the `lanes` bits of each go on the wire, packed (at one lane an AND opens
/// two bits, as in the paper's accounting, not two words).
pub fn open(
    net: &mut dyn Transport,
    parties: Parties,
    words: &[u64],
    lanes: usize,
) -> Result<Vec<u64>, NetError> {
    let bytes = pack(words, lanes);
    for peer in parties.peers() {
        net.send(peer, bytes.clone())?;
    }
    let mut opened = words.to_vec();
    for peer in parties.peers() {
        let got = net.recv(peer)?;
        if got.len() != bytes.len() {
            return Err(NetError::Protocol {
                peer,
                detail: format!(
                    "opening of {} bytes, expected {} (do the parties run the same circuit?)",
                    got.len(),
                    bytes.len()
                ),
            });
        }
        unpack_xor(&got, lanes, &mut opened);
    }
    // Lanes past `lanes` carry no value: every party returns them zero.
    let w = words_for(lanes);
    let tail = super::triple_gen::tail_mask(lanes);
    for value in opened.chunks_mut(w.max(1)) {
        if let Some(last) = value.last_mut() {
            *last &= tail;
        }
    }
    Ok(opened)
}

/// Opens some values to party `to` alone, in one round: the others send it their shares (packed
/// as in [`open`]); `to` gets the values, the others `None`.
pub fn open_to(
    net: &mut dyn Transport,
    parties: Parties,
    words: &[u64],
    lanes: usize,
    to: usize,
) -> Result<Option<Vec<u64>>, NetError> {
    if parties.me != to {
        net.send(to, pack(words, lanes))?;
        return Ok(None);
    }
    let expected = packed_len(words.len() / words_for(lanes).max(1), lanes);
    let mut opened = words.to_vec();
    for peer in parties.peers() {
        let got = net.recv(peer)?;
        if got.len() != expected {
            return Err(NetError::Protocol {
                peer,
                detail: format!(
                    "opening of {} bytes, expected {expected} (do the parties run the same circuit?)",
                    got.len()
                ),
            });
        }
        unpack_xor(&got, lanes, &mut opened);
    }
    let w = words_for(lanes);
    let tail = super::triple_gen::tail_mask(lanes);
    for value in opened.chunks_mut(w.max(1)) {
        if let Some(last) = value.last_mut() {
            *last &= tail;
        }
    }
    Ok(Some(opened))
}

/// Bytes of an opening of `values` values on `lanes` lanes.
pub fn packed_len(values: usize, lanes: usize) -> usize {
    (values * lanes).div_ceil(8)
}

/// The `lanes` low bits of each `words_for(lanes)`-word value, as one bit string.
fn pack(words: &[u64], lanes: usize) -> Vec<u8> {
    let w = words_for(lanes);
    if lanes.is_multiple_of(64) {
        return words.iter().flat_map(|x| x.to_le_bytes()).collect();
    }
    let values = words.len().checked_div(w).unwrap_or(0);
    let mut out = vec![0u8; packed_len(values, lanes)];
    let mut at = 0usize;
    for v in 0..values {
        for l in 0..lanes {
            if words[v * w + l / 64] >> (l % 64) & 1 == 1 {
                out[at / 8] |= 1 << (at % 8);
            }
            at += 1;
        }
    }
    out
}

/// XORs a [`pack`]ed bit string into `words`.
fn unpack_xor(bytes: &[u8], lanes: usize, words: &mut [u64]) {
    let w = words_for(lanes);
    if lanes.is_multiple_of(64) {
        for (o, c) in words.iter_mut().zip(bytes.chunks_exact(8)) {
            *o ^= u64::from_le_bytes(c.try_into().expect("8 bytes"));
        }
        return;
    }
    let values = words.len().checked_div(w).unwrap_or(0);
    let mut at = 0usize;
    for v in 0..values {
        for l in 0..lanes {
            words[v * w + l / 64] ^= u64::from(bytes[at / 8] >> (at % 8) & 1) << (l % 64);
            at += 1;
        }
    }
}

/// Evaluates `schedule` on XOR-shared `inputs` (`schedule.inputs` rows of `words_for(lanes)`
/// words), consuming `material` (checked first: nothing is opened with unfit material).
pub fn evaluate(
    net: &mut dyn Transport,
    parties: Parties,
    schedule: &Schedule,
    material: &Material,
    inputs: &[u64],
) -> Result<Evaluation, BeaverError> {
    let lanes = material.lanes;
    material
        .check(schedule, lanes)
        .map_err(BeaverError::Material)?;
    let w = words_for(lanes);
    if inputs.len() != schedule.inputs * w {
        return Err(BeaverError::Material(format!(
            "{} input words, the circuit takes {} inputs of {w} words",
            inputs.len(),
            schedule.inputs
        )));
    }
    let mut values = vec![0u64; schedule.steps.len() * w];
    // Per conditional: lanes where s ^ t = 1, i.e. where M^0 and M^1 swap.
    let mut swap: Vec<Vec<u64>> = vec![Vec::new(); schedule.conds.len()];
    let mut rounds = 0;
    for (r, round) in schedule.rounds.iter().enumerate() {
        if r > 0 && (!round.ands.is_empty() || !round.conds.is_empty()) {
            let mut out = Vec::with_capacity((2 * round.ands.len() + round.conds.len()) * w);
            let mut masked = Vec::with_capacity(round.ands.len());
            for &i in &round.ands {
                let Step::And {
                    x,
                    y,
                    triple,
                    chain,
                } = schedule.steps[i as usize]
                else {
                    unreachable!("rounds list AND steps only")
                };
                let (a, b) = masked_pair(schedule, material, &swap, triple, chain, w);
                let (xv, yv) = (row(&values, x, w), row(&values, y, w));
                out.extend(xv.iter().zip(&a).map(|(x, a)| x ^ a));
                out.extend(yv.iter().zip(&b).map(|(y, b)| y ^ b));
                masked.push((a, b));
            }
            for &c in &round.conds {
                let plan = schedule.conds[c as usize];
                let s = &material.masks[c as usize].s;
                out.extend(row(&values, plan.t, w).iter().zip(s).map(|(t, s)| t ^ s));
            }
            let opened = open(net, parties, &out, lanes)?;
            rounds += 1;
            for (k, &i) in round.ands.iter().enumerate() {
                let Step::And { triple, .. } = schedule.steps[i as usize] else {
                    unreachable!()
                };
                let (a, b) = &masked[k];
                let d = &opened[2 * k * w..(2 * k + 1) * w];
                let e = &opened[(2 * k + 1) * w..(2 * k + 2) * w];
                let c = Triples::row(&material.triples.c, w, triple);
                let z = &mut values[i as usize * w..(i as usize + 1) * w];
                for j in 0..w {
                    let mut v = c[j] ^ (d[j] & b[j]) ^ (e[j] & a[j]);
                    if parties.me == 0 {
                        v ^= d[j] & e[j];
                    }
                    z[j] = v;
                }
            }
            let base = 2 * round.ands.len() * w;
            for (k, &c) in round.conds.iter().enumerate() {
                swap[c as usize] = opened[base + k * w..base + (k + 1) * w].to_vec();
            }
        }
        for &i in &round.local {
            let v: Vec<u64> = match schedule.steps[i as usize] {
                Step::Input(n) => inputs[n as usize * w..(n as usize + 1) * w].to_vec(),
                Step::Xor(x, y) => row(&values, x, w)
                    .iter()
                    .zip(row(&values, y, w))
                    .map(|(x, y)| x ^ y)
                    .collect(),
                // NOT flips the shared value: one party flips its share.
                Step::Not(x) if parties.me == 0 => row(&values, x, w).iter().map(|x| !x).collect(),
                Step::Not(x) => row(&values, x, w).to_vec(),
                Step::And { .. } => unreachable!("AND steps are not local"),
            };
            values[i as usize * w..(i as usize + 1) * w].copy_from_slice(&v);
        }
    }
    let mut outputs = Vec::with_capacity(schedule.outputs.len() * w);
    for &o in &schedule.outputs {
        outputs.extend_from_slice(row(&values, o, w));
    }
    Ok(Evaluation {
        outputs,
        rounds,
        triples: schedule.triples,
    })
}

fn row(values: &[u64], wire: u32, w: usize) -> &[u64] {
    &values[wire as usize * w..(wire as usize + 1) * w]
}

/// `a` and `b` of `triple` with the masks of every conditional on `chain` applied (after the
/// swap the opening of `s ^ t` decided).
fn masked_pair(
    schedule: &Schedule,
    material: &Material,
    swap: &[Vec<u64>],
    triple: u64,
    chain: u32,
    w: usize,
) -> (Vec<u64>, Vec<u64>) {
    let t = &material.triples;
    let mut a = Triples::row(&t.a, w, triple).to_vec();
    let mut b = Triples::row(&t.b, w, triple).to_vec();
    for &(cond, branch) in &schedule.chains[chain as usize] {
        let plan = schedule.conds[cond as usize];
        let k = triple - plan.first_triple;
        let m = &material.masks[cond as usize];
        let sw = &swap[cond as usize];
        for (half, dst) in [(0u64, &mut a), (1, &mut b)] {
            let r = 2 * k + half;
            let (m0, m1) = (Triples::row(&m.m0, w, r), Triples::row(&m.m1, w, r));
            let (mine, other) = if branch == 0 { (m0, m1) } else { (m1, m0) };
            for j in 0..w {
                // Where s ^ t = 1 the strings are swapped: branch b takes the other one.
                dst[j] ^= mine[j] ^ (sw[j] & (mine[j] ^ other[j]));
            }
        }
    }
    (a, b)
}
