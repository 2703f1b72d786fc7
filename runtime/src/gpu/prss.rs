//! The PRSS on a device: the party's two AES-CTR streams ([`crate::rand::prss`]) drawn by
//! `irisc_gpu_aes_ctr` from the byte where its CPU streams stand, turned into zero shares
//! (`irisc_gpu_prss_zero{w}`) or zero bits (`irisc_gpu_prss_zero_bits`); the CPU streams then
//! skip the bytes drawn. So a party's draws are the same bytes wherever they are made, and it
//! stays in step with its peers whichever processor each of them draws on.

use crate::contract::gpu::LimbWidth;
use crate::error::RuntimeError;
use crate::rand::Prss;

use super::lanes::{all, out, pack_round_keys, Lanes};

/// The next `bytes` bytes of F(s_i) and of F(s_{i-1}) as device keystreams: each the whole
/// blocks that cover them, and the offset of the first byte in the first block.
fn keystreams_on<L: Lanes>(
    lanes: &L,
    prss: &Prss,
    bytes: u64,
) -> Result<[(L::Buf, u64); 2], RuntimeError> {
    let [own, prev] = prss.device_streams();
    let draw = |s: crate::rand::prss::DeviceStream| -> Result<(L::Buf, u64), RuntimeError> {
        let (first, skip) = (s.position / 16, (s.position % 16) as u64);
        let blocks = (skip + bytes).div_ceil(16);
        let keys = lanes.upload(&pack_round_keys(&s.round_keys))?;
        let mut ks = lanes.zeros(2 * blocks as usize)?;
        lanes.aes_ctr(all(&keys), first, blocks, out(&mut ks))?;
        Ok((ks, skip))
    };
    Ok([draw(own)?, draw(prev)?])
}

/// The zero bits of `words` words, the PRSS's next draw (as [`Prss::zero_bits`]).
pub fn zero_bits_on<L: Lanes>(
    lanes: &L,
    prss: &mut Prss,
    words: usize,
) -> Result<L::Buf, RuntimeError> {
    let mut alpha = lanes.zeros(words.max(1))?;
    if words == 0 {
        return Ok(alpha);
    }
    let bytes = 8 * words as u64;
    let [(own, own_skip), (prev, prev_skip)] = keystreams_on(lanes, prss, bytes)?;
    lanes.prss_zero_bits(
        all(&own),
        own_skip,
        all(&prev),
        prev_skip,
        words as u64,
        out(&mut alpha),
    )?;
    prss.skip(bytes);
    Ok(alpha)
}

/// The zero shares of `n` ring words of `width`, the PRSS's next draw (as
/// [`Prss::zero_shares`]), packed in u64 words.
pub fn zero_shares_on<L: Lanes>(
    lanes: &L,
    prss: &mut Prss,
    width: LimbWidth,
    n: usize,
) -> Result<L::Buf, RuntimeError> {
    let bytes = (n * width.bits() as usize / 8) as u64;
    let mut alpha = lanes.zeros((bytes as usize).div_ceil(8).max(1))?;
    if n == 0 {
        return Ok(alpha);
    }
    let [(own, own_skip), (prev, prev_skip)] = keystreams_on(lanes, prss, bytes)?;
    lanes.prss_zero(
        width,
        all(&own),
        own_skip,
        all(&prev),
        prev_skip,
        n as u64,
        out(&mut alpha),
    )?;
    prss.skip(bytes);
    Ok(alpha)
}
