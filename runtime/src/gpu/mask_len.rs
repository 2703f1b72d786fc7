//! The public mask lengths of a batch on a device (`irisc_gpu_mask_len`): the gallery chunk's
//! masks and the batch's query masks uploaded, one launch, the record-major lengths
//! downloaded. What `ops::mask_lengths` computes on the CPU, the public half of every
//! masked dot product, which would otherwise hold the GPU scan to the CPU's popcount rate.

use crate::error::RuntimeError;

use super::lanes::{all, out, Lanes};

/// `out[r·q_count + c] = Σ popcount(q_c & g_r)` over `w` words per mask, on `lanes`.
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
    let gallery = lanes.upload(&g[..g_count * w])?;
    let queries = lanes.upload(&q[..q_count * w])?;
    let mut lengths = lanes.zeros(pairs)?;
    lanes.mask_len(
        all(&gallery),
        all(&queries),
        w as u64,
        g_count as u64,
        q_count as u64,
        out(&mut lengths),
    )?;
    lanes.read(&lengths, 0, pairs)
}
