//! The AMX kernels' load ceiling: the generated kernel's loop nest
//! (`irisc::codegen::cpu::kernel::amx`: record panels, K chunks, blocks of 32 records, pairs of
//! B tiles) walked here by hand, and timed doing only its tile loads. A tile register is
//! loaded once per tile product in that nest (2 gallery and 2 column tiles for the 4 products
//! of a block's step and pair), so however fast the tile multiplier is, the kernel cannot pass
//! the rate at which this core loads those tiles from where they live (the gallery from
//! memory, the columns from L1 or L2). The `dot` section puts each AMX row next to this
//! ceiling, measured in the same run; `examples/amx_loads.rs` times the nest's other forms.

use irisc_runtime::kernels::amx::{
    panel_records, FEW_TILES, K_CHUNK_STEPS, K_CHUNK_STEPS_MANY_TILES, RECORD_BLOCK, STEP_BYTES,
    TILE_BYTES,
};

/// One side's nest: `records` gallery rows of `row` bytes (`steps` K steps of 64 bytes) against
/// `tiles` B tiles per step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nest {
    pub records: usize,
    pub steps: usize,
    pub tiles: usize,
}

/// The tiles of one (block, step, pair) visit: byte offsets of the block's two gallery tiles
/// (rows `row` bytes apart) and of the pair's two column tiles (1 KiB, contiguous).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visit {
    pub a: [usize; 2],
    pub b: [usize; 2],
    /// The first visit of this block and pair in this K chunk (the kernel loads its sums so
    /// far here).
    pub chunk_start: bool,
}

impl Nest {
    /// Gallery bytes per record.
    pub fn row(&self) -> usize {
        self.steps * STEP_BYTES
    }

    /// Column bytes.
    pub fn column_bytes(&self) -> usize {
        self.tiles * self.steps * TILE_BYTES
    }

    /// K steps per chunk, as the kernel picks them for this many tiles.
    pub fn chunk_steps(&self) -> usize {
        if self.tiles <= FEW_TILES {
            K_CHUNK_STEPS as usize
        } else {
            K_CHUNK_STEPS_MANY_TILES as usize
        }
    }

    /// Calls `visit` for every (panel, chunk, block, pair, step) of the kernel's nest, in its
    /// order (`records` a multiple of [`RECORD_BLOCK`], `tiles` even).
    #[inline(always)]
    pub fn walk(&self, mut visit: impl FnMut(Visit)) {
        let (row, chunk) = (self.row(), self.chunk_steps());
        let panel = panel_records(self.tiles);
        let mut p0 = 0;
        while p0 < self.records {
            let np = panel.min(self.records - p0);
            let mut c = 0;
            while c < self.steps {
                let end = (c + chunk).min(self.steps);
                let mut r0 = 0;
                while r0 < np {
                    for pair in 0..self.tiles / 2 {
                        for s in c..end {
                            let a0 = (p0 + r0) * row + s * STEP_BYTES;
                            let column = |t: usize| (t * self.steps + s) * TILE_BYTES;
                            visit(Visit {
                                a: [a0, a0 + RECORD_BLOCK / 2 * row],
                                b: [column(2 * pair), column(2 * pair + 1)],
                                chunk_start: s == c,
                            });
                        }
                    }
                    r0 += RECORD_BLOCK;
                }
                c = end;
            }
            p0 += np;
        }
    }
}

/// What a timed walk of the nest does at each visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// The two gallery tile loads.
    GalleryLoads,
    /// The gallery and the column tile loads: the kernel's loads.
    AllLoads,
    /// The loads and the four tile products.
    LoadsAndProducts,
}

/// Seconds of the fastest of `passes` walks of `nest` doing `work` over `gallery` (at least
/// `nest.records` rows) and `columns` (at least [`Nest::column_bytes`]); None where this CPU
/// or operating system does not run AMX.
pub fn time_walk(
    nest: Nest,
    work: Work,
    gallery: &[u8],
    columns: &[u8],
    passes: usize,
) -> Option<f64> {
    assert!(
        gallery.len() >= nest.records * nest.row() && columns.len() >= nest.column_bytes(),
        "tile loads: buffers shorter than the nest"
    );
    assert!(nest.records.is_multiple_of(RECORD_BLOCK) && nest.tiles.is_multiple_of(2));
    if !irisc_runtime::kernels::amx::available() {
        return None;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let mut best = f64::INFINITY;
        for _ in 0..passes.max(1) {
            let t = std::time::Instant::now();
            // SAFETY: AMX is available (tile data permission granted); every offset the walk
            // gives lies in the buffers (checked lengths above).
            unsafe { x86::walk(nest, work, gallery, columns) };
            best = best.min(t.elapsed().as_secs_f64());
        }
        Some(best)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (work, passes);
        None
    }
}

/// Dot products per second that the kernel's loads allow for a call of `codes` codes (in
/// `tiles` B tiles per side) over `sides` galleries of `nest.records` records: the walk's
/// loads over each side in turn, as the kernel runs them.
pub fn ceiling(
    nest: Nest,
    codes: usize,
    sides: usize,
    gallery: &[u8],
    columns: &[u8],
    passes: usize,
) -> Option<f64> {
    let secs = time_walk(nest, Work::AllLoads, gallery, columns, passes)?;
    Some((nest.records * codes) as f64 / (secs * sides.max(1) as f64))
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Nest, Visit, Work};
    use std::arch::asm;

    /// `ldtilecfg`'s operand: palette 1, eight tiles of 16 rows x 64 bytes.
    #[repr(C, align(64))]
    struct TileConfig([u8; 64]);

    /// One walk of `nest` doing `work`.
    ///
    /// # Safety
    /// AMX available to this thread; the buffers hold every offset the walk gives.
    pub(super) unsafe fn walk(nest: Nest, work: Work, gallery: &[u8], columns: &[u8]) {
        let mut config = TileConfig([0; 64]);
        config.0[0] = 1;
        for t in 0..8 {
            config.0[16 + 2 * t] = 64;
            config.0[48 + t] = 16;
        }
        let (g, b, row) = (gallery.as_ptr(), columns.as_ptr(), nest.row());
        // SAFETY: the caller's contract: every address is inside the buffers; the tiles are
        // configured before their first use and released after the last.
        unsafe {
            asm!("ldtilecfg [{}]", in(reg) config.0.as_ptr());
            nest.walk(|v: Visit| {
                let (a0, a1) = (g.add(v.a[0]), g.add(v.a[1]));
                let (b0, b1) = (b.add(v.b[0]), b.add(v.b[1]));
                // Tile registers are the program's own (no compiler allocates them), so the
                // forms are the same loads with more or less work after them.
                if work == Work::LoadsAndProducts && v.chunk_start {
                    asm!(
                        "tilezero tmm0",
                        "tilezero tmm1",
                        "tilezero tmm2",
                        "tilezero tmm3",
                        options(nostack, nomem),
                    );
                }
                asm!(
                    "tileloadd tmm4, [{a0} + {rs}*1]",
                    "tileloadd tmm5, [{a1} + {rs}*1]",
                    a0 = in(reg) a0, a1 = in(reg) a1, rs = in(reg) row,
                    options(nostack, readonly),
                );
                if work == Work::GalleryLoads {
                    return;
                }
                asm!(
                    "tileloadd tmm6, [{b0} + {bs}*1]",
                    "tileloadd tmm7, [{b1} + {bs}*1]",
                    b0 = in(reg) b0, b1 = in(reg) b1, bs = in(reg) 64usize,
                    options(nostack, readonly),
                );
                if work == Work::LoadsAndProducts {
                    asm!(
                        "tdpbuud tmm0, tmm4, tmm6",
                        "tdpbuud tmm1, tmm4, tmm7",
                        "tdpbuud tmm2, tmm5, tmm6",
                        "tdpbuud tmm3, tmm5, tmm7",
                        options(nostack, nomem),
                    );
                }
            });
            asm!("tilerelease", options(nostack, nomem));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The walk visits every (record block, step, pair) once, in the kernel's bounds: each
    /// gallery line of every record meets each pair of column tiles once, and each column
    /// tile of every step meets each block once.
    #[test]
    fn the_walk_visits_every_block_step_and_pair_once() {
        for &(records, steps, tiles) in &[
            (32, 1, 2),
            (96, 20, 4),
            (160 + 64, 17, 4),
            (256 + 32, 9, 32),
            (64, 400, 10),
        ] {
            let nest = Nest {
                records,
                steps,
                tiles,
            };
            let row = nest.row();
            let mut seen = std::collections::HashMap::new();
            let mut starts = 0;
            nest.walk(|v| {
                assert_eq!(v.a[1] - v.a[0], RECORD_BLOCK / 2 * row);
                assert!(v.a[1] + 15 * row + STEP_BYTES <= records * row);
                assert!(v.b[1] + TILE_BYTES <= nest.column_bytes());
                assert_eq!(v.b[0] % TILE_BYTES, 0);
                let (record, step) = (v.a[0] / row, (v.a[0] % row) / STEP_BYTES);
                assert_eq!(record % RECORD_BLOCK, 0);
                // Column tile t of step s sits at (t·steps + s) KiB.
                let (tile, tile_step) = (v.b[0] / TILE_BYTES / steps, v.b[0] / TILE_BYTES % steps);
                assert_eq!(tile_step, step);
                assert_eq!(v.b[1], v.b[0] + steps * TILE_BYTES);
                *seen.entry((record, step, tile)).or_insert(0) += 1;
                starts += usize::from(v.chunk_start);
            });
            let visits = records / RECORD_BLOCK * steps * tiles / 2;
            assert_eq!(seen.len(), visits, "{nest:?}");
            assert!(seen.values().all(|&n| n == 1), "{nest:?}");
            let chunks = steps.div_ceil(nest.chunk_steps());
            assert_eq!(
                starts,
                records / RECORD_BLOCK * chunks * tiles / 2,
                "{nest:?}"
            );
        }
    }

    /// Timed walks run where the CPU has AMX, and the ceiling is the records' dot products
    /// over the loads' time.
    #[test]
    fn timed_walks_run_where_amx_does() {
        let nest = Nest {
            records: 64,
            steps: 8,
            tiles: 4,
        };
        let gallery = vec![1u8; nest.records * nest.row()];
        let columns = vec![2u8; nest.column_bytes()];
        for work in [Work::GalleryLoads, Work::AllLoads, Work::LoadsAndProducts] {
            let t = time_walk(nest, work, &gallery, &columns, 2);
            assert_eq!(t.is_some(), irisc_runtime::kernels::amx::available());
            assert!(t.is_none_or(|s| s > 0.0));
        }
        let c = ceiling(nest, 31, 2, &gallery, &columns, 2);
        assert_eq!(c.is_some(), irisc_runtime::kernels::amx::available());
        assert!(c.is_none_or(|r| r.is_finite() && r > 0.0));
    }
}
