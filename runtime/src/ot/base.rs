//! Base OT: the "simplest OT" of Chou and Orlandi ("The Simplest Protocol for Oblivious
//! Transfer", LATINCRYPT 2015, Fig. 1), batched, for semi-honest parties, over the Ristretto
//! group (prime order, so no cofactor to clear; `curve25519-dalek`).
//!
//! With generator G, for `count` transfers at once:
//! 1. the sender draws y, sends S = y·G;
//! 2. the receiver, for each i with choice c_i, draws x_i and sends R_i = c_i·S + x_i·G;
//! 3. the sender keys k0_i = H(i, S, R_i, y·R_i) and k1_i = H(i, S, R_i, y·R_i − y·S); the
//!    receiver computes k_{c_i} = H(i, S, R_i, x_i·S), and learns nothing of the other key
//!    (computational Diffie–Hellman), while R_i hides c_i perfectly.
//!
//! H is blake3 in key-derivation mode with its own context string. Hashing the transcript
//! (S, R_i) and the index with the point follows the paper's H_{(S,R)}; the index also keeps the
//! keys of one batch apart, since S is shared by the whole batch. Only semi-honest security is
//! claimed (the paper's active-security argument has known gaps; we do not need it).
//!
//! One message each way: the sender's 32 bytes, then the receiver's 32 bytes per transfer.

use curve25519_dalek::ristretto::{CompressedRistretto, RistrettoPoint};
use curve25519_dalek::scalar::Scalar;
use curve25519_dalek::traits::Identity;
use subtle::{Choice, ConditionallySelectable};

use super::Block;
use crate::net::{NetError, Transport};

/// Bytes of a compressed Ristretto point.
const POINT: usize = 32;

/// blake3's key-derivation context for the base OT keys (domain separation from every other
/// use of blake3 in the runtime).
const KDF_CONTEXT: &str = "irisc ot: Chou-Orlandi base OT key, v1";

/// `count` uniform scalars from the operating system: 64 bytes each reduced mod ℓ, so the bias
/// is negligible (2^-259).
fn random_scalars(own: usize, count: usize) -> Result<Vec<Scalar>, NetError> {
    let mut bytes = vec![0u8; 64 * count];
    getrandom::fill(&mut bytes).map_err(|e| NetError::Io {
        peer: own,
        detail: format!("cannot draw base-OT randomness from the operating system: {e}"),
    })?;
    let scalars = bytes
        .chunks_exact(64)
        .map(|c| Scalar::from_bytes_mod_order_wide(c.try_into().expect("64-byte chunk")))
        .collect();
    bytes.fill(0);
    Ok(scalars)
}

/// H(i, S, R_i, P) truncated to κ = 128 bits.
fn derive(
    kdf: &blake3::Hasher,
    index: usize,
    s: &[u8; POINT],
    r: &[u8],
    p: &RistrettoPoint,
) -> Block {
    let mut h = kdf.clone();
    h.update(&(index as u64).to_le_bytes());
    h.update(s);
    h.update(r);
    h.update(p.compress().as_bytes());
    let mut out = [0u8; 16];
    h.finalize_xof().fill(&mut out);
    u128::from_le_bytes(out)
}

fn decompress(bytes: &[u8], peer: usize, what: &str) -> Result<RistrettoPoint, NetError> {
    CompressedRistretto::from_slice(bytes)
        .ok()
        .and_then(|c| c.decompress())
        .ok_or_else(|| NetError::Protocol {
            peer,
            detail: format!("base OT (Chou-Orlandi): {what} is not a valid Ristretto point"),
        })
}

/// The sender's side of `count` base OTs with `peer`: returns the key pairs (k0_i, k1_i), of
/// which the receiver learns exactly one each. One message each way (none when `count` is 0).
pub fn base_send(
    net: &mut dyn Transport,
    peer: usize,
    count: usize,
) -> Result<Vec<(Block, Block)>, NetError> {
    if count == 0 {
        return Ok(Vec::new());
    }
    let y = random_scalars(net.party(), 1)?[0];
    let s_point = RistrettoPoint::mul_base(&y);
    let s = s_point.compress().to_bytes();
    net.send(peer, s.to_vec())?;

    let msg = net.recv(peer)?;
    if msg.len() != POINT * count {
        return Err(NetError::Protocol {
            peer,
            detail: format!(
                "base OT (Chou-Orlandi): expected {count} points ({} bytes), got {} bytes",
                POINT * count,
                msg.len()
            ),
        });
    }
    let kdf = blake3::Hasher::new_derive_key(KDF_CONTEXT);
    let t = y * s_point;
    msg.chunks_exact(POINT)
        .enumerate()
        .map(|(i, r)| {
            let yr = y * decompress(r, peer, "a receiver's point R_i")?;
            Ok((
                derive(&kdf, i, &s, r, &yr),
                derive(&kdf, i, &s, r, &(yr - t)),
            ))
        })
        .collect()
}

/// The receiver's side of `choices.len()` base OTs with `peer`: returns k_{c_i} for each choice
/// c_i. One message each way (none when there are no choices).
pub fn base_receive(
    net: &mut dyn Transport,
    peer: usize,
    choices: &[bool],
) -> Result<Vec<Block>, NetError> {
    if choices.is_empty() {
        return Ok(Vec::new());
    }
    let xs = random_scalars(net.party(), choices.len())?;
    let msg = net.recv(peer)?;
    if msg.len() != POINT {
        return Err(NetError::Protocol {
            peer,
            detail: format!(
                "base OT (Chou-Orlandi): expected the sender's point S ({POINT} bytes), got {} bytes",
                msg.len()
            ),
        });
    }
    let s_point = decompress(&msg, peer, "the sender's point S")?;
    if s_point == RistrettoPoint::identity() {
        // y = 0 would make both keys public; a sound sender never draws it.
        return Err(NetError::Protocol {
            peer,
            detail: "base OT (Chou-Orlandi): the sender's point S is the identity".into(),
        });
    }
    let s: [u8; POINT] = msg.as_slice().try_into().expect("length checked");
    let mut out_msg = Vec::with_capacity(POINT * choices.len());
    let mut rs = Vec::with_capacity(choices.len());
    for (x, &c) in xs.iter().zip(choices) {
        // c·S without a branch on the secret choice.
        let cs = RistrettoPoint::conditional_select(
            &RistrettoPoint::identity(),
            &s_point,
            Choice::from(c as u8),
        );
        let r = (RistrettoPoint::mul_base(x) + cs).compress().to_bytes();
        out_msg.extend_from_slice(&r);
        rs.push(r);
    }
    net.send(peer, out_msg)?;
    let kdf = blake3::Hasher::new_derive_key(KDF_CONTEXT);
    Ok(xs
        .iter()
        .zip(&rs)
        .enumerate()
        .map(|(i, (x, r))| derive(&kdf, i, &s, r, &(x * s_point)))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ot::run_pair as pair;

    #[test]
    fn receiver_gets_the_chosen_key_only() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
        let choices: Vec<bool> = (0..300).map(|_| rng.random()).collect();
        let c = choices.clone();
        let (pairs, got) = pair(
            |mut t| base_send(&mut t, 1, 300).unwrap(),
            move |mut t| base_receive(&mut t, 0, &c).unwrap(),
        );
        assert_eq!(pairs.len(), 300);
        assert_eq!(got.len(), 300);
        let mut seen = std::collections::HashSet::new();
        for ((&(k0, k1), &k), &c) in pairs.iter().zip(&got).zip(&choices) {
            assert_eq!(k, if c { k1 } else { k0 });
            assert_ne!(k0, k1);
            assert!(seen.insert(k0) && seen.insert(k1), "keys repeat");
        }
        assert!(choices.iter().any(|&c| c) && choices.iter().any(|&c| !c));
    }

    #[test]
    fn empty_batch_sends_nothing() {
        let (a, b) = pair(
            |mut t| (base_send(&mut t, 1, 0).unwrap(), t.messages_sent()),
            |mut t| (base_receive(&mut t, 0, &[]).unwrap(), t.messages_sent()),
        );
        assert_eq!(a, (vec![], 0));
        assert_eq!(b, (vec![], 0));
    }

    #[test]
    fn malformed_points_are_protocol_errors() {
        // Too few points for the batch.
        let (err, _) = pair(
            |mut t| base_send(&mut t, 1, 4).unwrap_err(),
            |mut t| {
                t.recv(0).unwrap();
                t.send(0, vec![0u8; 3 * POINT]).unwrap();
            },
        );
        assert!(
            matches!(&err, NetError::Protocol { peer: 1, detail } if detail.contains("expected 4 points")),
            "{err}"
        );
        // An S that is not a point encoding, then one of the wrong length.
        for bad in [vec![0xffu8; POINT], vec![1u8; 31]] {
            let (_, err) = pair(
                move |mut t| t.send(1, bad).unwrap(),
                |mut t| base_receive(&mut t, 0, &[true, false]).unwrap_err(),
            );
            assert!(matches!(err, NetError::Protocol { peer: 0, .. }), "{err}");
        }
    }
}
