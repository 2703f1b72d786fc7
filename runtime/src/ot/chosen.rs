//! Chosen-message OT of byte strings from the random OTs of [`super::extension`].
//!
//! The receiver's choices already went into the random OTs, so one message of corrections
//! finishes the transfer (the usual one-time-pad step, e.g. IKNP 2003, §3, last step, with the
//! random OT's messages as keys): the sender sends y_b = x_b ⊕ G(m_b) for b = 0, 1 and the
//! receiver, holding m_c, opens y_c. G ([`super::prg_expand`]) stretches a 128-bit key to any
//! length; m_{1-c} is pseudorandom to the receiver, so x_{1-c} stays hidden.

use super::extension::{OtReceiver, OtSender};
use super::hash::prg_expand;
use crate::net::{NetError, Transport};

impl OtSender {
    /// Chosen-message OT of equal-length byte strings: the receiver learns `pairs[i].c_i` for
    /// its choice c_i. One IKNP extension of `pairs.len()` OTs, then one message of
    /// `2 · pairs.len() · len` bytes (nothing at all for an empty batch). The peer calls
    /// [`OtReceiver::receive_chosen`] with the same count and length.
    ///
    /// # Panics
    /// If the strings are not all of one length (a caller's bug, not the peer's).
    pub fn send_chosen(
        &mut self,
        net: &mut dyn Transport,
        pairs: &[(&[u8], &[u8])],
    ) -> Result<(), NetError> {
        let Some(first) = pairs.first() else {
            return Ok(());
        };
        let len = first.0.len();
        assert!(
            pairs.iter().all(|(a, b)| a.len() == len && b.len() == len),
            "send_chosen: all messages must have one length ({len} bytes)"
        );
        // Empty strings still take the OTs and an empty message, so that a peer expecting
        // another length finds out.
        let keys = self.random(net, pairs.len())?;
        let mut msg = vec![0u8; 2 * len * pairs.len()];
        if len == 0 {
            return net.send(self.peer, msg);
        }
        for ((x0, x1), ((k0, k1), y)) in pairs
            .iter()
            .zip(keys.iter().zip(msg.chunks_exact_mut(2 * len)))
        {
            let (y0, y1) = y.split_at_mut(len);
            prg_expand(*k0, y0);
            prg_expand(*k1, y1);
            for (y, x) in y0.iter_mut().zip(x0.iter()) {
                *y ^= x;
            }
            for (y, x) in y1.iter_mut().zip(x1.iter()) {
                *y ^= x;
            }
        }
        net.send(self.peer, msg)
    }
}

impl OtReceiver {
    /// The receiver's side of [`OtSender::send_chosen`]: returns, for each choice c_i, the
    /// sender's `pairs[i].c_i`, each `len` bytes long.
    pub fn receive_chosen(
        &mut self,
        net: &mut dyn Transport,
        choices: &[bool],
        len: usize,
    ) -> Result<Vec<Vec<u8>>, NetError> {
        let n = choices.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let keys = self.random(net, choices)?;
        let msg = net.recv(self.peer)?;
        if msg.len() != 2 * len * n {
            return Err(NetError::Protocol {
                peer: self.peer,
                detail: format!(
                    "chosen OT: expected {n} pairs of {len}-byte corrections ({} bytes), got {} bytes (do both sides agree on the count and length?)",
                    2 * len * n,
                    msg.len()
                ),
            });
        }
        if len == 0 {
            return Ok(vec![Vec::new(); n]);
        }
        let mut out = Vec::with_capacity(n);
        for ((&c, k), y) in choices.iter().zip(&keys).zip(msg.chunks_exact(2 * len)) {
            let mut x = vec![0u8; len];
            prg_expand(*k, &mut x);
            let (y0, y1) = y.split_at(len);
            // y_c without a branch or an address that depends on c.
            let mask = 0u8.wrapping_sub(c as u8);
            for ((x, a), b) in x.iter_mut().zip(y0).zip(y1) {
                *x ^= a ^ ((a ^ b) & mask);
            }
            out.push(x);
        }
        Ok(out)
    }
}
