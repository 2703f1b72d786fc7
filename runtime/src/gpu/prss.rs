//! The PRSS on a device: the party's two AES-CTR streams ([`crate::rand::prss`]) drawn by
//! `irisc_gpu_aes_ctr` from the byte where its CPU streams stand, turned into zero shares
//! (`irisc_gpu_prss_zero{w}`) or zero bits (`irisc_gpu_prss_zero_bits`); the CPU streams then
//! skip the bytes drawn. So a party's draws are the same bytes wherever they are made, and it
//! stays in step with its peers whichever processor each of them draws on.

use crate::contract::gpu::LimbWidth;
use crate::error::RuntimeError;
use crate::rand::Prss;

use super::lanes::{all, out, pack_round_keys, Lanes};

/// The next `bytes` bytes of a stream as a device keystream: the whole blocks that cover
/// them, and the offset of the first byte in the first block.
fn keystream_on<L: Lanes>(
    lanes: &L,
    s: crate::rand::prss::DeviceStream,
    bytes: u64,
) -> Result<(L::Buf, u64), RuntimeError> {
    let (first, skip) = (s.position / 16, (s.position % 16) as u64);
    let blocks = (skip + bytes).div_ceil(16);
    let keys = lanes.upload(&pack_round_keys(&s.round_keys))?;
    let mut ks = lanes.zeros(2 * blocks as usize)?;
    lanes.aes_ctr(all(&keys), first, blocks, out(&mut ks))?;
    Ok((ks, skip))
}

/// The next `bytes` bytes of F(s_i) and of F(s_{i-1}) as device keystreams.
fn keystreams_on<L: Lanes>(
    lanes: &L,
    prss: &Prss,
    bytes: u64,
) -> Result<[(L::Buf, u64); 2], RuntimeError> {
    let [own, prev] = prss.device_streams();
    Ok([
        keystream_on(lanes, own, bytes)?,
        keystream_on(lanes, prev, bytes)?,
    ])
}

/// One of the party's two streams: the one it shares with the next party (`Own`, what
/// [`Prss::with_next`] draws) or with the previous one (`Prev`, [`Prss::with_prev`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Own,
    Prev,
}

/// The next `bytes` bytes of one stream as a device keystream; the CPU stream skips them.
fn one_stream_on<L: Lanes>(
    lanes: &L,
    prss: &mut Prss,
    which: Stream,
    bytes: u64,
) -> Result<(L::Buf, u64), RuntimeError> {
    let [own, prev] = prss.device_streams();
    let ks = keystream_on(lanes, if which == Stream::Own { own } else { prev }, bytes)?;
    prss.skip_one(which == Stream::Own, bytes);
    Ok(ks)
}

/// The next `words` u64 words of one stream, as [`Prss::with_next`] / [`Prss::with_prev`]
/// draw them: the keystream XOR zero words (`irisc_gpu_prss_zero_bits` with a zero second
/// stream).
pub fn stream_words_on<L: Lanes>(
    lanes: &L,
    prss: &mut Prss,
    which: Stream,
    words: usize,
) -> Result<L::Buf, RuntimeError> {
    let mut out_buf = lanes.zeros(words.max(1))?;
    if words == 0 {
        return Ok(out_buf);
    }
    let (ks, skip) = one_stream_on(lanes, prss, which, 8 * words as u64)?;
    let none = lanes.zeros(words)?;
    lanes.prss_zero_bits(
        all(&ks),
        skip,
        all(&none),
        0,
        words as u64,
        out(&mut out_buf),
    )?;
    Ok(out_buf)
}

/// The next `n` ring words of `width` of one stream (as [`Prss::with_next`] /
/// [`Prss::with_prev`] draw them), or their negations mod 2^w where `negate`: the keystream
/// minus zero words, or zero minus it (`irisc_gpu_prss_zero{w}`), packed in u64 words.
pub fn stream_ring_on<L: Lanes>(
    lanes: &L,
    prss: &mut Prss,
    which: Stream,
    width: LimbWidth,
    n: usize,
    negate: bool,
) -> Result<L::Buf, RuntimeError> {
    let bytes = (n * width.bits() as usize / 8) as u64;
    let words = (bytes as usize).div_ceil(8).max(1);
    let mut out_buf = lanes.zeros(words)?;
    if n == 0 {
        return Ok(out_buf);
    }
    let (ks, skip) = one_stream_on(lanes, prss, which, bytes)?;
    let none = lanes.zeros(words)?;
    let ((a, a_skip), (b, b_skip)) = match negate {
        false => ((&ks, skip), (&none, 0)),
        true => ((&none, 0), (&ks, skip)),
    };
    lanes.prss_zero(
        width,
        all(a),
        a_skip,
        all(b),
        b_skip,
        n as u64,
        out(&mut out_buf),
    )?;
    Ok(out_buf)
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
