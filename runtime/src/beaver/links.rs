//! Oblivious-transfer links between every pair of parties, and the two-party products the
//! preprocessing builds from them: the cross terms of a Beaver triple (the GMW way, Sect. 2.5:
//! one OT per ordered pair and triple) and vector-scalar products (VS gates, Sect. 2.3, after
//! [HKP20]; Pi-Half-VS-Long, Fig. 6, for long vectors).
//!
//! Each party holds an OT sender and an OT receiver towards every other party. Pairs are
//! served in a fixed order (by the other party's index) and inside a pair the lower index
//! goes first in the direction whose first message it sends, so no two parties ever wait on
//! each other.

use crate::net::Transport;
use crate::ot::{prg_expand, OtReceiver, OtSender};

use super::{BeaverError, LocalRng, Parties};

/// One OT sender and one receiver per other party.
pub struct OtLinks {
    parties: Parties,
    senders: Vec<Option<OtSender>>,
    receivers: Vec<Option<OtReceiver>>,
}

impl std::fmt::Debug for OtLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OtLinks")
            .field("parties", &self.parties)
            .finish_non_exhaustive()
    }
}

impl OtLinks {
    /// Base OTs with every other party, both directions.
    pub fn setup(net: &mut dyn Transport, parties: Parties) -> Result<OtLinks, BeaverError> {
        let mut senders: Vec<Option<OtSender>> = (0..parties.count).map(|_| None).collect();
        let mut receivers: Vec<Option<OtReceiver>> = (0..parties.count).map(|_| None).collect();
        for peer in parties.peers() {
            // The extension receiver speaks first in the base OTs (it plays their sender).
            if parties.me < peer {
                receivers[peer] = Some(OtReceiver::setup(net, peer)?);
                senders[peer] = Some(OtSender::setup(net, peer)?);
            } else {
                senders[peer] = Some(OtSender::setup(net, peer)?);
                receivers[peer] = Some(OtReceiver::setup(net, peer)?);
            }
        }
        Ok(OtLinks {
            parties,
            senders,
            receivers,
        })
    }

    pub fn parties(&self) -> Parties {
        self.parties
    }

    /// Runs `send` towards and `receive` from every other party, in the deadlock-free order
    /// (the extension's receiver speaks first, so inside a pair the higher index receives
    /// first).
    fn each_pair<S>(
        &mut self,
        net: &mut dyn Transport,
        state: &mut S,
        mut send: impl FnMut(
            &mut OtSender,
            &mut dyn Transport,
            usize,
            &mut S,
        ) -> Result<(), BeaverError>,
        mut receive: impl FnMut(
            &mut OtReceiver,
            &mut dyn Transport,
            usize,
            &mut S,
        ) -> Result<(), BeaverError>,
    ) -> Result<(), BeaverError> {
        let me = self.parties.me;
        for peer in self.parties.peers() {
            let s = self.senders[peer].as_mut().expect("a sender per peer");
            let r = self.receivers[peer].as_mut().expect("a receiver per peer");
            if me < peer {
                send(s, net, peer, state)?;
                receive(r, net, peer, state)?;
            } else {
                receive(r, net, peer, state)?;
                send(s, net, peer, state)?;
            }
        }
        Ok(())
    }

    /// XOR shares of `sum over i != j of a_i b_j` for each of `a.len()` positions, where this
    /// party holds `a` and `b` (its `a_i`, `b_i`): the cross terms of a triple's `c` (Fig. 2 by
    /// GMW). Per ordered pair and position one random OT: the receiver's choice is its `a`;
    /// the sender turns its two random messages' low bits `x0, x1` into a correlation by
    /// sending `x0 ^ x1 ^ b`, so the receiver ends with `x0 ^ a b` and the sender keeps `x0`.
    pub fn cross_products(
        &mut self,
        net: &mut dyn Transport,
        a: &[bool],
        b: &[bool],
    ) -> Result<Vec<bool>, BeaverError> {
        let n = a.len();
        let mut share = vec![false; n];
        self.each_pair(
            net,
            &mut share,
            |sender, net, peer, share| {
                let pairs = sender.random(net, n)?;
                let mut corr = vec![0u8; n.div_ceil(8)];
                for (i, (m0, m1)) in pairs.iter().enumerate() {
                    let (x0, x1) = (m0 & 1 == 1, m1 & 1 == 1);
                    share[i] ^= x0;
                    if x0 ^ x1 ^ b[i] {
                        corr[i / 8] |= 1 << (i % 8);
                    }
                }
                net.send(peer, corr)?;
                Ok(())
            },
            |receiver, net, peer, share| {
                let got = receiver.random(net, a)?;
                let corr = recv_exact(net, peer, n.div_ceil(8), "triple corrections")?;
                for i in 0..n {
                    let u = corr[i / 8] >> (i % 8) & 1 == 1;
                    share[i] ^= (got[i] & 1 == 1) ^ (a[i] & u);
                }
                Ok(())
            },
        )?;
        Ok(share)
    }

    /// A VS gate on short vectors ([HKP20], Sect. 2.3): shares of `s x` for each instance,
    /// where this party holds the bit `s[k]` and the vector `x[k]` (all of `len` bytes). The
    /// local term `s_i x_i` plus one chosen OT of `len`-byte strings per ordered pair and
    /// instance: the sender offers `(y, y ^ x_j)` and keeps `y`.
    pub fn vs_short(
        &mut self,
        net: &mut dyn Transport,
        rng: &mut LocalRng,
        s: &[bool],
        x: &[Vec<u8>],
        len: usize,
    ) -> Result<Vec<Vec<u8>>, BeaverError> {
        let mut share: Vec<Vec<u8>> = s
            .iter()
            .zip(x)
            .map(|(&s, x)| if s { x.clone() } else { vec![0u8; len] })
            .collect();
        self.each_pair(
            net,
            &mut share,
            |sender, net, _peer, share| {
                let ys: Vec<Vec<u8>> = (0..s.len())
                    .map(|_| {
                        let mut y = vec![0u8; len];
                        rng.fill_bytes(&mut y);
                        y
                    })
                    .collect();
                let offers: Vec<Vec<u8>> = ys
                    .iter()
                    .zip(x)
                    .map(|(y, x)| y.iter().zip(x).map(|(y, x)| y ^ x).collect())
                    .collect();
                let pairs: Vec<(&[u8], &[u8])> = ys
                    .iter()
                    .zip(&offers)
                    .map(|(y, o)| (y.as_slice(), o.as_slice()))
                    .collect();
                sender.send_chosen(net, &pairs)?;
                for (sh, y) in share.iter_mut().zip(&ys) {
                    xor_into(sh, y);
                }
                Ok(())
            },
            |receiver, net, _peer, share| {
                let got = receiver.receive_chosen(net, s, len)?;
                for (sh, g) in share.iter_mut().zip(&got) {
                    xor_into(sh, g);
                }
                Ok(())
            },
        )?;
        Ok(share)
    }

    /// A VS gate on long vectors by Pi-Half-VS-Long (Fig. 6) per ordered pair: shares of
    /// `s b` for each instance, this party holding `s[k]` and `b[k]` (`bits` bits each, packed
    /// little-endian). The sender draws seeds `S`, `k`; its share is `G(S)`; it sends
    /// `v = G(k) ^ G(S) ^ b` and offers `(S, k)` by one OT of 16-byte strings; the receiver
    /// with choice `a` gets `w` and keeps `G(w) ^ a v`. One n-bit message instead of two.
    pub fn vs_long(
        &mut self,
        net: &mut dyn Transport,
        rng: &mut LocalRng,
        s: &[bool],
        b: &[Vec<u8>],
        bits: usize,
    ) -> Result<Vec<Vec<u8>>, BeaverError> {
        let len = bits.div_ceil(8);
        let expand = |seed: u128| {
            let mut out = vec![0u8; len];
            prg_expand(seed, &mut out);
            clear_tail(&mut out, bits);
            out
        };
        let mut share: Vec<Vec<u8>> = s
            .iter()
            .zip(b)
            .map(|(&s, b)| if s { b.clone() } else { vec![0u8; len] })
            .collect();
        self.each_pair(
            net,
            &mut share,
            |sender, net, peer, share| {
                let mut v = Vec::with_capacity(s.len() * len);
                let mut seeds = Vec::with_capacity(s.len());
                for (k, sh) in share.iter_mut().enumerate() {
                    let (big_s, key) = (rng.block(), rng.block());
                    let mine = expand(big_s);
                    let pad = expand(key);
                    v.extend(
                        pad.iter()
                            .zip(&mine)
                            .zip(&b[k])
                            .map(|((p, m), b)| p ^ m ^ b),
                    );
                    xor_into(sh, &mine);
                    seeds.push((big_s.to_le_bytes(), key.to_le_bytes()));
                }
                net.send(peer, v)?;
                let pairs: Vec<(&[u8], &[u8])> =
                    seeds.iter().map(|(a, b)| (&a[..], &b[..])).collect();
                sender.send_chosen(net, &pairs)?;
                Ok(())
            },
            |receiver, net, peer, share| {
                let v = recv_exact(net, peer, s.len() * len, "Half-VS-Long ciphertexts")?;
                let got = receiver.receive_chosen(net, s, 16)?;
                for (k, sh) in share.iter_mut().enumerate() {
                    let w = u128::from_le_bytes(got[k][..16].try_into().expect("16 bytes"));
                    xor_into(sh, &expand(w));
                    if s[k] {
                        xor_into(sh, &v[k * len..(k + 1) * len]);
                    }
                }
                Ok(())
            },
        )?;
        Ok(share)
    }
}

fn xor_into(dst: &mut [u8], src: &[u8]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d ^= s;
    }
}

/// Clears the bits of `v` at and beyond `bits`.
pub(super) fn clear_tail(v: &mut [u8], bits: usize) {
    if !bits.is_multiple_of(8) {
        if let Some(last) = v.last_mut() {
            *last &= (1u8 << (bits % 8)) - 1;
        }
    }
}

fn recv_exact(
    net: &mut dyn Transport,
    peer: usize,
    len: usize,
    what: &str,
) -> Result<Vec<u8>, BeaverError> {
    let got = net.recv(peer)?;
    if got.len() != len {
        return Err(crate::net::NetError::Protocol {
            peer,
            detail: format!("{what} of {} bytes, expected {len}", got.len()),
        }
        .into());
    }
    Ok(got)
}
