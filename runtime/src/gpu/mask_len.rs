//! The public mask lengths of a batch on a device (`irisc_gpu_mask_len`): the gallery chunk's
//! masks and the batch's query masks uploaded, one launch, the record-major lengths
//! downloaded. What `ops::mask_lengths` computes on the CPU, the public half of every
//! masked dot product, which would otherwise hold the GPU scan to the CPU's popcount rate.

use crate::error::RuntimeError;

use super::lanes::{all, out, Lanes};

/// `out[r·q_count + c] = Σ popcount(q_c & g_r)` over `w` words per mask, on `lanes` (which
/// returns them as 32-bit lengths).
pub fn mask_lengths_on<L: Lanes>(
    lanes: &L,
    q: &[u64],
    q_count: usize,
    g: &[u64],
    g_count: usize,
    w: usize,
) -> Result<Vec<u64>, RuntimeError> {
    if q.len() < q_count * w || g.len() < g_count * w {
        return Err(RuntimeError::Schedule(
            "internal error: masks shorter than their count".into(),
        ));
    }
    let pairs = q_count * g_count;
    if pairs == 0 || w == 0 {
        return Ok(vec![0; pairs]);
    }
    if (w as u64).saturating_mul(64) > u64::from(u32::MAX) {
        return Err(RuntimeError::Schedule(format!(
            "internal error: masks of {w} words are too long for 32-bit mask lengths"
        )));
    }
    let gallery = lanes.upload(&g[..g_count * w])?;
    let queries = lanes.upload(&q[..q_count * w])?;
    // The kernel writes 32-bit lengths, two to a word.
    let words = pairs.div_ceil(2);
    let mut lengths = lanes.zeros(words)?;
    lanes.mask_len(
        all(&gallery),
        all(&queries),
        w as u64,
        g_count as u64,
        q_count as u64,
        out(&mut lengths),
    )?;
    let packed = lanes.read(&lengths, 0, words)?;
    Ok((0..pairs)
        .map(|i| (packed[i / 2] >> (32 * (i % 2))) & u64::from(u32::MAX))
        .collect())
}
