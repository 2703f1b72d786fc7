//! The public mask lengths of a batch on a device (`irisc_gpu_mask_len`): the gallery chunk's
//! masks and the batch's query masks uploaded, one launch, the record-major lengths
//! downloaded. What `ops::mask_lengths` computes on the CPU, the public half of every
//! masked dot product, which would otherwise hold the GPU scan to the CPU's popcount rate.

use crate::error::RuntimeError;

use super::lanes::{all, out, Lanes};

/// Fewest lengths per thread when [`mask_lengths_on`] unpacks them on several.
const UNPACK_PER_THREAD: usize = 1 << 16;

/// `out[r·q_count + c] = Σ popcount(q_c & g_r)` over `w` words per mask, on `lanes` (which
/// returns them as 32-bit lengths), unpacked on up to `threads` threads: a batch of 32 people
/// against 100 000 records is 198 M lengths, 1.6 GB to write.
pub fn mask_lengths_on<L: Lanes>(
    lanes: &L,
    q: &[u64],
    q_count: usize,
    g: &[u64],
    g_count: usize,
    w: usize,
    threads: usize,
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
    let parts = threads.min(pairs / UNPACK_PER_THREAD).max(1);
    Ok(unpack_lengths(&packed, pairs, parts))
}

/// The first `pairs` 32-bit lengths of `packed` (two to a word, little-endian) as u64 words,
/// in `parts` threads (each a run of whole words).
pub fn unpack_lengths(packed: &[u64], pairs: usize, parts: usize) -> Vec<u64> {
    let mut out = vec![0u64; pairs];
    if pairs == 0 {
        return out;
    }
    let parts = parts.clamp(1, pairs);
    let per = pairs.div_ceil(parts).next_multiple_of(2);
    let unpack = |first_word: usize, chunk: &mut [u64]| {
        for (j, o) in chunk.iter_mut().enumerate() {
            *o = (packed[first_word + j / 2] >> (32 * (j % 2))) & u64::from(u32::MAX);
        }
    };
    if parts == 1 {
        unpack(0, &mut out);
        return out;
    }
    std::thread::scope(|s| {
        for (i, chunk) in out.chunks_mut(per).enumerate() {
            s.spawn(move || unpack(i * per / 2, chunk));
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::unpack_lengths;
    use proptest::prelude::*;

    proptest! {
        /// Any split of the lengths over threads gives the sequential unpacking.
        #[test]
        fn unpacking_on_threads_is_the_sequential_unpacking(
            packed in prop::collection::vec(any::<u64>(), 0..40),
            drop in 0usize..2,
            parts in 1usize..9,
        ) {
            let pairs = (2 * packed.len()).saturating_sub(drop);
            let want: Vec<u64> = (0..pairs)
                .map(|i| {
                    let w = packed[i / 2];
                    if i % 2 == 0 { w & 0xffff_ffff } else { w >> 32 }
                })
                .collect();
            prop_assert_eq!(unpack_lengths(&packed, pairs, parts), want);
        }
    }
}
