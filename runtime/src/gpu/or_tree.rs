//! The OR tree on a device (paper 000, Section 4.2): each group of `s` comparison bits ORed
//! into one by a balanced tree, ⌈log2 s⌉ rounds, every level of every group one batched AND.
//! The gathers, the AND's local share and the level's result run in the contract's kernels
//! (`irisc_gpu_or_pairs`, `irisc_gpu_or_combine`), the zero bits are drawn on the device
//! ([`super::prss`]); only the AND shares cross to the host. The CPU protocol's messages,
//! draws and result ([`crate::protocol::or_tree::or_groups`]) for groups of equal size, the
//! only ones a schedule's `or_tree` has.

use crate::error::RuntimeError;
use crate::net::Transport;
use crate::protocol::{recv_elems, send_elems};
use crate::rand::Prss;
use crate::share::binary::{tail_mask, words_for};
use crate::share::BitShares;

use super::lanes::{all, out, Lanes, WordsMut};
use super::prss::zero_bits_on;

/// The OR of each run of `group` consecutive bits of `bits` (`group` divides its length, or
/// is at least it: one group of all), as [`crate::protocol::or_tree::or_groups`].
pub fn or_groups_on<L: Lanes>(
    lanes: &L,
    net: &mut dyn Transport,
    prss: &mut Prss,
    bits: &BitShares,
    group: usize,
) -> Result<BitShares, RuntimeError> {
    let len = bits.len;
    let (groups, mut s) = if group >= len {
        (1, len)
    } else if group > 0 && len.is_multiple_of(group) {
        (len / group, group)
    } else {
        return Err(RuntimeError::Schedule(format!(
            "internal error: OR over groups of {group} of {len} bits on the GPU"
        )));
    };
    if len == 0 {
        return Ok(bits.clone());
    }
    let mut cur_own = lanes.upload(&bits.own)?;
    let mut cur_prev = lanes.upload(&bits.prev)?;
    let (to, from) = (net.next(), net.prev());
    while s > 1 {
        let h = s.div_ceil(2);
        let pairs = groups * (s - h);
        let w = words_for(pairs);
        let alpha = zero_bits_on(lanes, prss, w)?;
        let mut gathered: [L::Buf; 5] = [
            lanes.zeros(w)?,
            lanes.zeros(w)?,
            lanes.zeros(w)?,
            lanes.zeros(w)?,
            lanes.zeros(w)?,
        ];
        {
            let [lo, lp, ro, rp, z] = &mut gathered;
            lanes.or_pairs(
                (all(&cur_own), all(&cur_prev)),
                all(&alpha),
                groups as u64,
                s as u64,
                h as u64,
                [out(lo), out(lp), out(ro), out(rp), out(z)],
            )?;
        }
        send_elems(net, to, &lanes.read(&gathered[4], 0, w)?)?;
        let mut got: Vec<u64> = recv_elems(net, from, w, "AND shares")?;
        // A peer's stray bits beyond the pairs must not reach the next level.
        if let Some(last) = got.last_mut() {
            *last &= tail_mask(pairs);
        }
        let got = lanes.upload(&got)?;
        let next = groups * h;
        let mut next_own = lanes.zeros(words_for(next))?;
        let mut next_prev = lanes.zeros(words_for(next))?;
        let [lo, lp, ro, rp, z] = &gathered;
        lanes.or_combine(
            [all(lo), all(lp), all(ro), all(rp), all(z), all(&got)],
            (all(&cur_own), all(&cur_prev)),
            groups as u64,
            s as u64,
            h as u64,
            (
                WordsMut {
                    buf: &mut next_own,
                    at: 0,
                },
                WordsMut {
                    buf: &mut next_prev,
                    at: 0,
                },
            ),
        )?;
        cur_own = next_own;
        cur_prev = next_prev;
        s = h;
    }
    let w = words_for(groups);
    Ok(BitShares::from_words(
        lanes.read(&cur_own, 0, w)?,
        lanes.read(&cur_prev, 0, w)?,
        groups,
    ))
}
