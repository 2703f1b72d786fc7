//! The register tile of a batch dot product's kernel, chosen from what the compiler knows of the
//! call: the ring (sides and accumulator width), the ISA class the tile is for (the 512-bit
//! variants, 32 vector registers), and the number of codes per kernel call (queries per batch x
//! rotations: 31, 8 x 31 = 248, 32 x 62 = 1 984, ...).
//!
//! The decision is recorded on the batch dot op by the `kernel-tile` pass
//! (`tile = [records, codes]`, `tile_codes = N`, `code_panel_bytes = B`, `k_chunk_bytes = K`,
//! `record_panel_bytes = P`) and read by code
//! generation, which generates the kernel variant it names. A tile already on the op (written by
//! hand, or by an earlier run) is checked and kept.
//!
//! Why these shapes (measured at l = 12 800, one core, gallery streamed from memory):
//! - a tile of R records x C codes keeps R x C accumulators (2 per pair for F_p: low and high
//!   byte of the gallery) and the C query vectors in registers while the R gallery vectors are
//!   loaded one at a time: `acc x R x C + C + 1 <= 32`. 4 x 6 for the 16-bit wrapping rings
//!   (24 accumulators, 10 loads per 24 `vpdpwssd`, of which only the 4 gallery rows come from
//!   L2 in a record panel's order, below). Same-process A/B on a 512-bit core (AMD EPYC,
//!   two `vpdpwssd zmm` per cycle, 261.8 G MAC/s), l = 12 800, 2 000 records from memory:
//!   GR16 248 codes 6 x 4 13.9 -> 4 x 6 16.9 M/s, 31 codes 12.8 -> 15.1; Z16 (K chunks of
//!   1 024 words) 248 codes 6.8 -> 7.8, 31 codes 6.2 -> 6.7. 4 x 7 and 3 x 8 spill (2-3 x
//!   slower), 5 x 5 and 4 x 5 were slower. (An AVX2-era measurement chose 6 x 4: 8 x 3, 5 x 4
//!   and 4 x 4 measured 5-12 % slower there.) 6 x 2 for F_p (24 accumulators; 4 x 3 and 2 x 4
//!   slower), 2 x 4 for u32/u64 words (their multiplies are several instructions);
//! - fewer codes than C: the tile narrows to the codes there are and takes more records;
//! - code panels: when one call's query rows exceed the last-level cache share (more than 256
//!   codes: 1 984 codes of 25.6 kB are 50 MB), every record block would read them all from
//!   memory; panels of codes run outermost instead, so a panel stays in cache while the
//!   records pass over it (1 984 GR16 codes: 2.0 M/s without panels, 6.5 M/s with). Each pass
//!   over the panel reads the whole gallery from memory, so a panel holds as many codes as fit:
//!   `code_panel_bytes` (512 KiB, with a record panel within a 1 MiB L2) of the rows the nest
//!   holds at once, one K chunk of each code (4 KiB: 126 codes, 16 passes), not whole rows
//!   (as before: 1 MiB of 25.6 kB rows held 36 codes, and the gallery was read 56 times per
//!   call). `irisc-bench --sections dot` on the 512-bit
//!   core above, 1 984 codes: GR16 11.0 -> 14.8-15.2 M/s (0.55 -> 0.73-0.74 of the measured
//!   peak), Z16 4.9 -> 6.2-7.0; 1 MiB panels of chunks measured within noise of 512 KiB for
//!   GR16 and slower for Z16 (6.2 against 7.0).
//! - K chunks, with or without code panels: the whole nest runs once per chunk of each code row of
//!   `k_chunk_bytes` (2 KiB: 1 024 u16 words, 512 per side for replicated Z16), so a record
//!   block's slice of the query rows stays in L2 while the records pass over it (248 codes x
//!   25.6 kB of rows do not fit). Measured on a core that issues two `vpdpwssd zmm` per cycle,
//!   same-process A/B at l = 12 800, 248 codes: GR16 10.9 -> 13.3 M/s, Z16 4.0 -> 5.2, F_p
//!   5.9 -> 7.0; 31 codes: GR16 9.5 -> 11.1. The 16-bit rings only (u32/u64 words are
//!   multiply-bound).
//! - record panels: with K chunks, the records run in panels of `record_panel_bytes` of their
//!   rows' chunk (192 KiB, within every x86 core's L2; 384 KiB past 128 codes, below), and inside a panel the code blocks run
//!   outside the record blocks: a code block's C chunk rows stay in L1 while the panel's rows
//!   pass from L2, where the default order re-reads every code row of the chunk from L2 for each
//!   record block. With panels, chunks of 4 KiB per code row (2 048 u16 words) measured best.
//!   Same-process A/B on an AVX2 core (two `vpmaddwd ymm` per cycle, 80.4 G MAC/s), l = 12 800,
//!   248 codes, 2 000 records from memory: GR16 3.60 -> 4.29-4.37 M/s (57 -> 68-70 % of the
//!   peak), Z16 0.99 -> 1.36 M/s (with `vpsubd` for the second side); 31 codes: GR16 3.59 -> 3.95.
//!   Inside code panels too (1 984 codes): GR16 on the 512-bit core above 10.0 -> 14.0 M/s, Z16
//!   4.7 -> 6.8 (600 records from memory, same process). Not for F_p: its 6 x 2 tile reads 6
//!   gallery rows per step against 2 query rows, so in the panel's order most of its loads
//!   come from L2 instead of L1. Same-process A/B on the 512-bit core, K chunks of 2 048 words,
//!   records from memory: 31 codes 6.07 -> 7.14 M/s without record panels, 248 codes 6.34 ->
//!   7.95, 1 984 codes (panels of 128 codes) 4.95 -> 6.12.
//! - wide record panels (384 KiB) where one pass's code rows exceed 512 KiB (more than 128
//!   codes of 4 KiB chunk rows, without code panels): each record panel reads every code's
//!   chunk row once more, and 248 codes' rows (992 KiB) no longer stay in L2 beside a 192 KiB
//!   panel, so reading them half as often pays. Same-process A/B on the 512-bit core, l =
//!   12 800, 192 -> 384 KiB, records from memory: Z16 248 codes 6.31-6.37 -> 6.60-6.63 M/s
//!   (calls of 1 310 records, as `bench dot` makes them), 6.26-6.46 -> 6.62-6.69 (calls of 288);
//!   GR16 248 codes 15.6-15.8 -> 15.9 (288); at 186 codes even; at 31, 62 and 124 codes 2-3 %
//!   slower (Z16 124: 6.72 -> 6.59), and inside code panels (1 984 codes, 126 codes' rows:
//!   504 KiB) 2 % slower in whole calls (Z16 6.35-6.39 -> 6.23-6.27).
//!
//! - a second loop nest, measured at run time: whether K chunks and record panels pay depends on
//!   the core and on the codes per call, which the executable only learns when it runs (a
//!   batch executable built for 8 queries per call may get one). GR16, l = 12 800, 31 codes, 8 000
//!   records from memory (`masked_dot_timing`): on a Zen 4 core (one `vpdpwssd zmm` per cycle,
//!   117.2 G MAC/s) 7.1 M/s with K chunks and record panels, 7.9 M/s without (62 codes: 7.7 and
//!   7.8; 248 codes: 8.0 and 8.1; Z16 248 codes: 3.73 and 3.34), where the Zen 5 core above ran
//!   31 codes at 9.5 M/s without and 11.1 with. The register tile too: unchunked, on the Zen 4
//!   core, 6 x 4 ran GR16 at 31 codes 7.9-8.1 M/s against 7.5-7.6 for 4 x 6, and at 248 codes
//!   8.35 against 8.0 (Z16 31 codes 3.59 against 3.38), where on the Zen 5 core 4 x 6 beat
//!   6 x 4 (above). So where the tile takes K chunks with record panels and no code panels, the
//!   op also records `nest_alternative = "unchunked"` and, for the full tile,
//!   `alternative_tile = [6, 4]` (the full tile transposed): the kernel table then offers that
//!   tile without K chunks or record panels as a second nest, and the runtime times both on
//!   the first large call's records and runs the faster (`irisc_runtime::kernels::nest`).
//!
//! The narrower ISA variants (AVX2, 16 registers; portable) keep their fixed tiles.

use std::fmt;

/// The integer pair attribute: `[records, codes]`.
pub const TILE_ATTR: &str = "tile";
/// Codes per kernel call the tile was chosen for.
pub const CODES_ATTR: &str = "tile_codes";
/// Bytes of query rows per code panel (0: no panels).
pub const PANEL_ATTR: &str = "code_panel_bytes";

/// Vector registers of the 512-bit variants the tile is for.
pub const REGISTERS: u32 = 32;
/// Above this many codes per call, panels of [`PANEL_BYTES`].
pub const PANEL_ABOVE_CODES: u64 = 256;
/// Bytes of the query rows a panel holds at once (one K chunk of each code, where the kernel
/// runs K chunks).
pub const PANEL_BYTES: u64 = 512 << 10;
/// Bytes of each code row per K chunk (0: no K chunks).
pub const K_CHUNK_ATTR: &str = "k_chunk_bytes";
/// Bytes of a code row per K chunk where the tile takes K chunks.
pub const K_CHUNK_BYTES: u64 = 4096;
/// Bytes of gallery rows per record panel (0: none): the records of a panel x the bytes of one
/// record's rows in a K chunk.
pub const RECORD_PANEL_ATTR: &str = "record_panel_bytes";
/// Bytes of the records' chunk rows per record panel where the tile takes K chunks.
pub const RECORD_PANEL_BYTES: u64 = 192 << 10;
/// Record panel bytes where one pass's code rows (a K chunk of every code the pass covers)
/// hold more than [`PANEL_BYTES`]: each record panel reads them all once, and past that they
/// no longer stay in L2 beside the panel, so wider panels read them half as often.
pub const WIDE_RECORD_PANEL_BYTES: u64 = 384 << 10;

/// The second loop nest the kernel table offers, if any: `"unchunked"` (the only one).
pub const NEST_ATTR: &str = "nest_alternative";
/// The value of [`NEST_ATTR`] for the unchunked nest.
pub const UNCHUNKED: &str = "unchunked";
/// The second nest's register tile `[records, codes]`, where it is not the first's.
pub const ALT_TILE_ATTR: &str = "alternative_tile";

/// The most records a tile for fewer codes than a full tile's takes.
const FEW_CODES_RECORDS: u32 = 12;

/// What the tile depends on of the dot product's ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DotKind {
    /// Replicated Z_2^k in `storage_bits`-bit words (two sides, eq. 6).
    Replicated { storage_bits: u32 },
    /// Shamir over GR(2^16, d): one side of u16 words.
    Galois,
    /// Shamir over F_p: one side, two accumulators per pair.
    Prime,
}

impl DotKind {
    /// Vector accumulators per (record, code) pair.
    pub fn accumulators(self) -> u32 {
        match self {
            DotKind::Prime => 2,
            _ => 1,
        }
    }

    /// Whether the ring's words are 16 bits (the VNNI kernels, whose K chunks pay).
    fn sixteen_bit(self) -> bool {
        match self {
            DotKind::Replicated { storage_bits } => storage_bits == 16,
            DotKind::Galois | DotKind::Prime => true,
        }
    }

    /// The codes of a full tile.
    fn codes(self) -> u32 {
        match self {
            DotKind::Prime => 2,
            DotKind::Replicated { storage_bits } if storage_bits > 16 => 4,
            _ => 6,
        }
    }

    /// The records of a full tile.
    fn records(self) -> u32 {
        match self {
            DotKind::Replicated { storage_bits } if storage_bits > 16 => 2,
            DotKind::Prime => 6,
            _ => 4,
        }
    }
}

/// A kernel's tile: the decision recorded on the op.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KernelTile {
    pub records: u32,
    pub codes: u32,
    /// Codes per kernel call the tile was chosen for.
    pub call_codes: u64,
    /// Bytes of query rows per code panel; 0: no panels.
    pub panel_bytes: u64,
    /// Bytes of each code row per K chunk; 0: no K chunks.
    pub k_chunk_bytes: u64,
    /// Bytes of the records' rows (one K chunk of each) per record panel; 0: no panels.
    pub record_panel_bytes: u64,
    /// Whether the kernel table also offers a second nest without K chunks or record panels,
    /// for the runtime to measure against this one (module doc).
    pub unchunked_alternative: bool,
    /// The second nest's register tile (records, codes); `None`: this tile's own.
    pub alternative_tile: Option<(u32, u32)>,
}

impl KernelTile {
    /// The second nest: without K chunks or record panels, in the alternative register tile.
    pub fn unchunked(&self) -> KernelTile {
        let (records, codes) = self.alternative_tile.unwrap_or((self.records, self.codes));
        KernelTile {
            records,
            codes,
            k_chunk_bytes: 0,
            record_panel_bytes: 0,
            unchunked_alternative: false,
            alternative_tile: None,
            ..*self
        }
    }
}

impl fmt::Display for KernelTile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "tile {}x{} for {} codes per call",
            self.records, self.codes, self.call_codes
        )?;
        if self.panel_bytes > 0 {
            write!(f, ", code panels of {} bytes", self.panel_bytes)?;
        }
        if self.k_chunk_bytes > 0 {
            write!(f, ", K chunks of {} bytes per code", self.k_chunk_bytes)?;
        }
        if self.record_panel_bytes > 0 {
            write!(f, ", record panels of {} bytes", self.record_panel_bytes)?;
        }
        if self.unchunked_alternative {
            let alt = self.unchunked();
            write!(
                f,
                "; or unchunked in {}x{}, whichever runs faster",
                alt.records, alt.codes
            )?;
        }
        Ok(())
    }
}

/// The tile for `codes` codes per call of a `kind` dot product.
pub fn choose(kind: DotKind, codes: u64) -> KernelTile {
    let c = kind.codes().min(codes.clamp(1, u64::from(u32::MAX)) as u32);
    // As many records as the registers hold, up to the full tile's (taller tiles past it
    // measured no faster: the gallery rows of a block must also stay in L1).
    let fit = (REGISTERS - c - 1) / (kind.accumulators() * c);
    let records = if c < kind.codes() {
        fit.min(FEW_CODES_RECORDS)
    } else {
        kind.records()
    };
    let chunked = kind.sixteen_bit();
    // Record panels put the gallery rows, not the query rows, in L2 (module doc): F_p's tile
    // reads 6 gallery rows per step against 2 query rows, and measured slower with them.
    let record_panels = chunked && kind != DotKind::Prime;
    let code_panels = codes > PANEL_ABOVE_CODES;
    // The code rows one pass of the nest reads: a panel's (at most PANEL_BYTES), or every code's.
    let pass_code_bytes = match code_panels {
        true => PANEL_BYTES,
        false => codes.saturating_mul(K_CHUNK_BYTES),
    };
    KernelTile {
        records: records.max(1),
        codes: c,
        call_codes: codes,
        panel_bytes: if code_panels { PANEL_BYTES } else { 0 },
        k_chunk_bytes: if chunked { K_CHUNK_BYTES } else { 0 },
        record_panel_bytes: match (record_panels, pass_code_bytes > PANEL_BYTES) {
            (false, _) => 0,
            (true, false) => RECORD_PANEL_BYTES,
            (true, true) => WIDE_RECORD_PANEL_BYTES,
        },
        // Which of the two runs faster depends on the core (module doc); F_p needs its chunks,
        // and past the code panels' threshold the unchunked nest would read every code's whole
        // rows per record block.
        unchunked_alternative: record_panels && !code_panels,
        // The full tile transposed (module doc); a narrower tile keeps its shape.
        alternative_tile: (record_panels && !code_panels && c == kind.codes())
            .then(|| (kind.codes(), kind.records())),
    }
}

/// Checks a tile (from the IR) for `kind`: both sides at least 1, the accumulators and the
/// query vectors within the registers.
pub fn check(kind: DotKind, t: &KernelTile) -> Result<(), String> {
    if t.records == 0 || t.codes == 0 {
        return Err(format!(
            "tile [{}, {}]: records and codes must be at least 1",
            t.records, t.codes
        ));
    }
    let regs = u64::from(kind.accumulators()) * u64::from(t.records) * u64::from(t.codes)
        + u64::from(t.codes)
        + 1;
    if regs > u64::from(REGISTERS) {
        return Err(format!(
            "tile [{}, {}] needs {regs} vector registers ({} accumulators per pair x {} + {} query vectors + 1 gallery vector); the 512-bit kernels have {REGISTERS}",
            t.records,
            t.codes,
            kind.accumulators(),
            t.records * t.codes,
            t.codes
        ));
    }
    if t.panel_bytes != 0 && t.panel_bytes < 4096 {
        return Err(format!(
            "{PANEL_ATTR} = {}: a panel holds at least 4096 bytes of query rows (0: no panels)",
            t.panel_bytes
        ));
    }
    if t.k_chunk_bytes != 0 && t.k_chunk_bytes < 256 {
        return Err(format!(
            "{K_CHUNK_ATTR} = {}: a K chunk holds at least 256 bytes of each code row (0: none)",
            t.k_chunk_bytes
        ));
    }
    if t.record_panel_bytes != 0 && t.k_chunk_bytes == 0 {
        return Err(format!(
            "{RECORD_PANEL_ATTR} = {}: record panels hold K chunks of rows, and {K_CHUNK_ATTR} is 0",
            t.record_panel_bytes
        ));
    }
    if t.unchunked_alternative && (t.k_chunk_bytes == 0 || kind == DotKind::Prime) {
        return Err(match kind {
            DotKind::Prime => format!(
                "{NEST_ATTR} = \"{UNCHUNKED}\": F_p kernels need their K chunks (exact i32 lanes)"
            ),
            _ => format!(
                "{NEST_ATTR} = \"{UNCHUNKED}\": the tile has no K chunks ({K_CHUNK_ATTR} = 0), so the two nests are one"
            ),
        });
    }
    if let Some((records, codes)) = t.alternative_tile {
        if !t.unchunked_alternative {
            return Err(format!(
                "{ALT_TILE_ATTR} = [{records}, {codes}]: a second nest's tile, and there is no second nest ({NEST_ATTR} is absent)"
            ));
        }
        check(
            kind,
            &KernelTile {
                records,
                codes,
                alternative_tile: None,
                unchunked_alternative: false,
                k_chunk_bytes: 0,
                record_panel_bytes: 0,
                ..*t
            },
        )
        .map_err(|e| format!("{ALT_TILE_ATTR}: {e}"))?;
    }
    if t.record_panel_bytes != 0 && t.record_panel_bytes < t.k_chunk_bytes {
        return Err(format!(
            "{RECORD_PANEL_ATTR} = {}: a record panel holds at least one record's chunk ({K_CHUNK_ATTR} = {})",
            t.record_panel_bytes, t.k_chunk_bytes
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z16: DotKind = DotKind::Replicated { storage_bits: 16 };

    #[test]
    fn the_bench_shapes_get_full_tiles_and_panels_only_when_large() {
        for kind in [Z16, DotKind::Galois] {
            for (codes, record_panel) in [
                (31, RECORD_PANEL_BYTES),
                (128, RECORD_PANEL_BYTES),
                (129, WIDE_RECORD_PANEL_BYTES),
                (248, WIDE_RECORD_PANEL_BYTES),
            ] {
                let t = choose(kind, codes);
                assert_eq!(
                    (t.records, t.codes, t.panel_bytes, t.k_chunk_bytes),
                    (4, 6, 0, K_CHUNK_BYTES),
                    "{kind:?} {codes}"
                );
                assert_eq!(t.record_panel_bytes, record_panel, "{kind:?} {codes}");
                assert!(t.unchunked_alternative, "{kind:?} {codes}");
                assert_eq!(t.alternative_tile, Some((6, 4)), "{kind:?} {codes}");
                check(kind, &t).unwrap();
                let alt = t.unchunked();
                assert_eq!(
                    (
                        alt.records,
                        alt.codes,
                        alt.k_chunk_bytes,
                        alt.record_panel_bytes
                    ),
                    (6, 4, 0, 0)
                );
                check(kind, &alt).unwrap();
            }
            let large = choose(kind, 1984);
            assert_eq!(
                (
                    large.panel_bytes,
                    large.k_chunk_bytes,
                    large.record_panel_bytes
                ),
                (PANEL_BYTES, K_CHUNK_BYTES, RECORD_PANEL_BYTES)
            );
            assert!(!large.unchunked_alternative, "code panels: one nest");
        }
        for codes in [31, 248, 1984] {
            let fp = choose(DotKind::Prime, codes);
            assert_eq!((fp.records, fp.codes), (6, 2));
            assert_eq!(fp.k_chunk_bytes, K_CHUNK_BYTES);
            assert_eq!(fp.record_panel_bytes, 0, "F_p runs without record panels");
            assert!(!fp.unchunked_alternative, "F_p needs its K chunks");
        }
        let z64 = choose(DotKind::Replicated { storage_bits: 64 }, 31);
        assert_eq!(
            (
                z64.records,
                z64.codes,
                z64.k_chunk_bytes,
                z64.record_panel_bytes
            ),
            (2, 4, 0, 0)
        );
        assert!(!z64.unchunked_alternative);
    }

    #[test]
    fn few_codes_take_more_records_within_the_registers() {
        for kind in [Z16, DotKind::Galois, DotKind::Prime] {
            for codes in 1..=8 {
                let t = choose(kind, codes);
                assert!(t.codes as u64 <= codes, "{kind:?} {codes}: {t:?}");
                check(kind, &t).unwrap();
                if codes < 6 {
                    assert_eq!(t.alternative_tile, None, "a narrow tile keeps its shape");
                }
            }
        }
        assert_eq!(choose(DotKind::Galois, 1).records, 12);
    }

    #[test]
    fn bad_tiles_are_refused_with_the_reason() {
        let t = |records, codes| KernelTile {
            records,
            codes,
            call_codes: 31,
            panel_bytes: 0,
            k_chunk_bytes: 0,
            record_panel_bytes: 0,
            unchunked_alternative: false,
            alternative_tile: None,
        };
        assert!(check(Z16, &t(0, 4)).unwrap_err().contains("at least 1"));
        let e = check(Z16, &t(8, 4)).unwrap_err();
        assert!(e.contains("needs 37 vector registers"), "{e}");
        assert!(check(DotKind::Prime, &t(6, 4)).is_err());
        assert!(check(DotKind::Prime, &t(6, 2)).is_ok());
        let mut small = t(6, 4);
        small.panel_bytes = 100;
        assert!(check(Z16, &small).unwrap_err().contains("at least 4096"));
        let mut tiny = t(6, 4);
        tiny.k_chunk_bytes = 64;
        assert!(check(Z16, &tiny).unwrap_err().contains("at least 256"));
        let mut unchunked = t(6, 4);
        unchunked.record_panel_bytes = 1 << 16;
        assert!(check(Z16, &unchunked)
            .unwrap_err()
            .contains("k_chunk_bytes is 0"));
        let mut thin = t(6, 4);
        thin.k_chunk_bytes = 4096;
        thin.record_panel_bytes = 1024;
        assert!(check(Z16, &thin)
            .unwrap_err()
            .contains("at least one record's chunk"));
        thin.record_panel_bytes = 4096;
        assert!(check(Z16, &thin).is_ok());
        let mut alternative = thin;
        alternative.unchunked_alternative = true;
        assert!(check(Z16, &alternative).is_ok());
        assert!(check(
            DotKind::Prime,
            &KernelTile {
                records: 6,
                codes: 2,
                ..alternative
            }
        )
        .unwrap_err()
        .contains("need their K chunks"));
        assert!(check(
            Z16,
            &KernelTile {
                k_chunk_bytes: 0,
                record_panel_bytes: 0,
                ..alternative
            }
        )
        .unwrap_err()
        .contains("the two nests are one"));
    }
}
