//! Dot products over Z_2^16 and F_p on AMX-INT8 tiles: the query's byte columns the
//! compiler's AMX kernel takes (`codegen::cpu::kernel::amx` in the compiler, whose module doc
//! derives them), whether this CPU and its operating system run AMX, and the blockwise run over
//! a thread's records.
//!
//! `TDPBUUD` multiplies a 16 x 64 tile of u8 (A: 16 rows of 64 K-bytes) by a 64 x 16 tile of
//! u8 (B: 16 rows of 4 K-bytes per column, the "VNNI" layout) into 16 x 16 i32 sums. The
//! kernel reads the gallery's u16 rows as bytes in place (A: `g_lo, g_hi` per word, little
//! endian), and every code of the query is two columns of B:
//!
//! - column `2c`: `q_lo` against `g_lo`, 0 against `g_hi`: `C0 = Σ g_lo q_lo`;
//! - column `2c + 1`: `q_hi` against `g_lo`, `q_lo` against `g_hi`:
//!   `C1 = Σ g_lo q_hi + g_hi q_lo`;
//!
//! then `<g, q> ≡ C0 + 256 C1 (mod 2^16)`: the `g_hi q_hi` term is a multiple of 2^16, and the
//! i32 sums wrap mod 2^32, a multiple of 2^16. The second side of a replicated product (eq. 6,
//! `- <q_b, g_b>`) is the columns of `-q_b mod 2^16`, summed into the same tiles.
//!
//! F_p ([`Form::Exact`]) needs the exact sum, reduced mod p once: a third column `(0, q_hi)`
//! gives `C2 = Σ g_hi q_hi`, and `<g, q> = C0 + 256 C1 + 65 536 C2` exactly. The sums stay
//! below 2^31 (no wrap) for codes of up to [`EXACT_MAX_WORDS`] words: each byte product is at
//! most 255^2 and `C1` adds two per word. Five codes per tile (15 of its 16 columns).

use std::sync::OnceLock;

use crate::error::RuntimeError;

/// The environment variable that turns the AMX kernels off (`off`): the vector kernels run,
/// for comparisons in one build; `on`, empty or unset leaves them on where the CPU has AMX.
pub const AMX_ENV: &str = "IRISC_AMX";

/// Records per kernel block: two A tiles of 16 rows. A thread's records beyond the last whole
/// block run in the vector kernel.
pub const RECORD_BLOCK: usize = 32;

/// Codes per B tile (16 columns, two per code) of the wrapping form.
pub const CODES_PER_TILE: usize = 8;

/// The longest codes (words) whose exact sums stay below 2^31: `2 x 255^2 x words < 2^31`.
pub const EXACT_MAX_WORDS: usize = 16_384;

/// What the kernel's sums give: the dot product mod 2^16 (Z16, GR16), or the exact one,
/// reduced mod p (F_p). The discriminant is the contract's (the kernel table's `amx_form`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(i64)]
pub enum Form {
    /// Two columns per code, `C0 + 256 C1 mod 2^16`.
    Wrap16 = 0,
    /// Three columns per code, `C0 + 256 C1 + 65 536 C2 mod p`.
    Exact = 1,
}

impl Form {
    /// The form of the table's `amx_form` value.
    pub fn from_abi(v: i64) -> Option<Form> {
        match v {
            0 => Some(Form::Wrap16),
            1 => Some(Form::Exact),
            _ => None,
        }
    }

    /// B columns per code.
    pub const fn columns(self) -> usize {
        match self {
            Form::Wrap16 => 2,
            Form::Exact => 3,
        }
    }

    /// Codes per B tile of 16 columns.
    pub const fn codes_per_tile(self) -> usize {
        16 / self.columns()
    }

    /// Whether codes of `words` words can run in this form's kernel.
    pub fn applies(self, words: usize) -> bool {
        applies(words) && (self == Form::Wrap16 || words <= EXACT_MAX_WORDS)
    }
}

/// K bytes per tile step (one A tile row, 16 B tile rows of 4).
pub const STEP_BYTES: usize = 64;

/// Bytes of one B tile.
pub const TILE_BYTES: usize = 1024;

/// Steps per K chunk of the kernel's nest (1 KiB of each gallery row) for calls of at most
/// [`FEW_TILES`] B tiles per side.
pub const K_CHUNK_STEPS: u64 = 16;

/// Steps per K chunk for calls of more tiles (512 bytes of each row): a block's chunk of rows
/// (16 KiB) and a pair's chunk of B tiles (16 KiB) then share L1. One core, L = 12 800, 8 192
/// records: 248 codes (32 tiles) 22.8 M dot products/s against 20.7-21.1 M in chunks of 16
/// steps; 400 codes (50 tiles, as F_p's 248) 20.1-20.7 M against 16.8-17.9 M; 31 codes (4
/// tiles, from a 2.56 GB gallery) 8.6-9.7 M against 9.7-10.3 M, so few tiles keep 16. The
/// generated kernel picks between the two from its `tiles` argument.
pub const K_CHUNK_STEPS_MANY_TILES: u64 = 8;

/// Bytes of i32 sums a record panel may hold: measured on one core at L = 12 800, 248 codes,
/// from a 2.56 GB gallery: panels of 192-256 records ran 19.0-19.5 M dot products/s, 96
/// records 17-19 M.
pub const PANEL_SUM_BYTES: usize = 384 << 10;

/// The most records per panel (see [`PANEL_SUM_BYTES`]).
pub const PANEL_MAX_RECORDS: usize = 256;

/// The most records per panel of at most [`FEW_TILES`] B tiles. Few codes leave a block little
/// work per chunk, so the chunk's rows come from memory at the streams' pace, and the hardware
/// prefetcher keeps only so many row streams: one core, L = 12 800, 31 codes (4 tiles), a
/// 2.56 GB gallery: 9.7-10.4 M dot products/s in panels of 128-160 records, 7.9-8.4 M in
/// panels of 256; 62 codes (8 tiles): 12.5-12.9 M and 12.0-12.9 M.
pub const FEW_TILES_PANEL_MAX_RECORDS: usize = 160;

/// B tiles per side up to which [`FEW_TILES_PANEL_MAX_RECORDS`] applies.
pub const FEW_TILES: usize = 8;

/// Records per panel for `tiles` B tiles: whole blocks, within [`PANEL_SUM_BYTES`] of sums
/// (16 i32 per tile per record), at least one block, at most [`PANEL_MAX_RECORDS`] (or
/// [`FEW_TILES_PANEL_MAX_RECORDS`] for few tiles).
pub fn panel_records(tiles: usize) -> usize {
    let most = if tiles <= FEW_TILES {
        FEW_TILES_PANEL_MAX_RECORDS
    } else {
        PANEL_MAX_RECORDS
    };
    (PANEL_SUM_BYTES / (64 * tiles.max(1)) / RECORD_BLOCK * RECORD_BLOCK).clamp(RECORD_BLOCK, most)
}

/// Words per tile step: the kernel needs codes of a whole number of steps.
pub const STEP_WORDS: usize = STEP_BYTES / 2;

/// The C signature of a generated AMX kernel: `columns` from [`Columns::bytes`] (`tiles` B
/// tiles per side per step, an even number), `sides` galleries of `n_records` records (a
/// multiple of [`RECORD_BLOCK`]), `out[r * n_codes + c]` as the plain kernels write it, and a
/// buffer of `panel x tiles x 16` i32 sums for panels of `panel` records (a multiple of
/// [`RECORD_BLOCK`], [`panel_records`]).
pub type AmxDotKernel = unsafe extern "C" fn(
    columns: *const u8,
    tiles: i64,
    ga: *const u16,
    gb: *const u16,
    n_records: i64,
    out: *mut u16,
    n_codes: i64,
    sums: *mut i32,
    panel: i64,
);

/// Records whose dot products ran in an AMX kernel in this process.
static RECORDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many records' dot products ran in an AMX kernel in this process (the party's
/// accounting reports them).
pub fn records() -> u64 {
    RECORDS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Codes per call up to which the AMX kernel runs (above, the vector kernels): with more, a K
/// chunk's B tiles no longer stay in L2 (4 MiB for 1 984 codes) and the record panels shrink
/// to one block; measured on one core at L = 12 800, GR16: 2.2x the vector kernel with 248
/// codes, 0.9x with 1 984.
pub const MAX_CODES: usize = 512;

/// Whether codes of `words` words can run in an AMX kernel.
pub fn applies(words: usize) -> bool {
    words > 0 && words.is_multiple_of(STEP_WORDS)
}

/// Whether this CPU has AMX-INT8 and the operating system lets this process use its tile data
/// (Linux asks each process to request it: `arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA)`);
/// checked and requested once per process.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(request_tile_data)
}

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
fn request_tile_data() -> bool {
    // CPUID leaf 7 (checked against the maximum leaf): EDX bit 24 AMX-TILE, bit 25 AMX-INT8.
    if std::arch::x86_64::__cpuid(0).eax < 7 {
        return false;
    }
    let edx = std::arch::x86_64::__cpuid_count(7, 0).edx;
    if edx & (1 << 24) == 0 || edx & (1 << 25) == 0 {
        return false;
    }
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a request for permission, no memory passed.
    let r = unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        )
    };
    r == 0
}

#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
fn request_tile_data() -> bool {
    false
}

/// Whether [`AMX_ENV`] lets the AMX kernels run and this CPU and OS run them ([`available`]);
/// read once, an unknown value refused. The runtime's choice also honours an `IRISC_ISA` cap
/// (`dispatch::amx_usable`).
pub fn allowed() -> Result<bool, RuntimeError> {
    static ON: OnceLock<Result<bool, String>> = OnceLock::new();
    ON.get_or_init(|| Ok(enabled_for(std::env::var(AMX_ENV).ok().as_deref())? && available()))
        .clone()
        .map_err(RuntimeError::Usage)
}

/// [`AMX_ENV`]'s value read as on or off (None: unset).
pub fn enabled_for(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None | Some("") | Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(format!("{AMX_ENV}={other}: expected on or off")),
    }
}

/// One cache line: the unit of the kernel's buffers, so that every tile row it loads or
/// stores is one aligned line (a row that straddles two lines is two loads: measured at 0.75x
/// the rate with the columns 16 bytes off a line, 0.4x with the gallery rows off too).
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C, align(64))]
pub struct Line(pub [u8; 64]);

/// A zeroed buffer of `lines` cache lines.
fn lines(lines: usize) -> Vec<Line> {
    vec![Line([0; 64]); lines]
}

/// A query's codes as the AMX kernel's B tiles, laid out once per call and read by every
/// record block: per side, per tile, per step, one tile of [`TILE_BYTES`] (so each tile's
/// steps stream in order).
#[derive(Debug, Clone)]
pub struct Columns {
    bytes: Vec<Line>,
    tiles: usize,
    n_codes: usize,
    form: Form,
}

impl Columns {
    /// The columns of `n_codes` codes of `words` words ([`applies`]), one side (`q.1` None) or
    /// two (`q.1` the second side's words, negated here), in the wrapping form.
    pub fn new(q: (&[u16], Option<&[u16]>), n_codes: usize, words: usize) -> Columns {
        Columns::of_form(Form::Wrap16, q, n_codes, words)
    }

    /// [`Columns::new`] in `form` (the exact form: one side, words below p).
    pub fn of_form(
        form: Form,
        q: (&[u16], Option<&[u16]>),
        n_codes: usize,
        words: usize,
    ) -> Columns {
        assert!(form.applies(words), "AMX columns need whole steps of words");
        assert!(
            form == Form::Wrap16 || q.1.is_none(),
            "the exact form has one side"
        );
        assert!(
            q.0.len() >= n_codes * words && q.1.is_none_or(|b| b.len() >= n_codes * words),
            "query shorter than n_codes * words"
        );
        // Whole pairs of tiles (the kernel's 2 x 2 block of tiles).
        let per_tile = form.codes_per_tile();
        let tiles = n_codes.div_ceil(2 * per_tile) * 2;
        let steps = words / STEP_WORDS;
        let per_side = tiles * steps * TILE_BYTES;
        let sides: Vec<(&[u16], bool)> = std::iter::once((q.0, false))
            .chain(q.1.map(|b| (b, true)))
            .collect();
        let mut buffer = lines(sides.len() * per_side / 64);
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buffer);
        for (s, &(rows, negate)) in sides.iter().enumerate() {
            let side = &mut bytes[s * per_side..][..per_side];
            for c in 0..n_codes {
                let (tile, col) = (c / per_tile, form.columns() * (c % per_tile));
                let row = &rows[c * words..][..words];
                for (k, &w) in row.iter().enumerate() {
                    let w = if negate { w.wrapping_neg() } else { w };
                    let [lo, hi] = w.to_le_bytes();
                    // Byte 2k of K holds g_lo of word k, byte 2k + 1 its g_hi: B row
                    // (2k mod 64) / 4 of the step, bytes 4 col + (2k mod 4) and the next.
                    let (step, kk) = (k / STEP_WORDS, (2 * k) % STEP_BYTES);
                    let at = (tile * steps + step) * TILE_BYTES + (kk / 4) * 64 + kk % 4;
                    side[at + 4 * col] = lo;
                    side[at + 4 * col + 1] = 0;
                    side[at + 4 * (col + 1)] = hi;
                    side[at + 4 * (col + 1) + 1] = lo;
                    if form == Form::Exact {
                        side[at + 4 * (col + 2)] = 0;
                        side[at + 4 * (col + 2) + 1] = hi;
                    }
                }
            }
        }
        Columns {
            bytes: buffer,
            tiles,
            n_codes,
            form,
        }
    }

    /// The B tiles, side by side (64-byte aligned).
    pub fn bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.bytes)
    }

    /// B tiles per side per step (even).
    pub fn tiles(&self) -> usize {
        self.tiles
    }

    /// Codes the columns hold.
    pub fn n_codes(&self) -> usize {
        self.n_codes
    }

    /// The form the columns are laid out in.
    pub fn form(&self) -> Form {
        self.form
    }
}

/// `out[r * n_codes + c]` for the records `g` holds (`out.len() / n_codes` of them): whole
/// blocks of [`RECORD_BLOCK`] records in the AMX `kernel`, the rest through `rest(first
/// record, records, out)` (the vector kernel).
///
/// # Safety
/// `kernel` must be a generated AMX kernel for `words`-word codes and as many sides as
/// `columns` holds (a second gallery side given exactly when it does); the calling thread
/// must have tile data permission ([`available`]).
pub unsafe fn run_blocks(
    kernel: AmxDotKernel,
    columns: &Columns,
    g: (&[u16], Option<&[u16]>),
    words: usize,
    out: &mut [u16],
    rest: &mut dyn FnMut(usize, usize, &mut [u16]),
) {
    let n_codes = columns.n_codes();
    let records = out.len() / n_codes.max(1);
    assert!(
        g.0.len() >= records * words && g.1.is_none_or(|b| b.len() >= records * words),
        "gallery shorter than the call's records"
    );
    let whole = records / RECORD_BLOCK * RECORD_BLOCK;
    if whole > 0 {
        RECORDS.fetch_add(whole as u64, std::sync::atomic::Ordering::Relaxed);
        let panel = panel_records(columns.tiles());
        // 16 i32 of a tile row: one line.
        let mut sums = lines(panel * columns.tiles());
        // SAFETY: the caller's contract; the gallery holds `whole` records of `words` words on
        // each side, `out` holds whole x n_codes words, the columns are the kernel's, `sums`
        // holds a panel's sums.
        unsafe {
            kernel(
                columns.bytes().as_ptr(),
                columns.tiles() as i64,
                g.0.as_ptr(),
                g.1.map_or(std::ptr::null(), |b| b.as_ptr()),
                whole as i64,
                out.as_mut_ptr(),
                n_codes as i64,
                sums.as_mut_ptr().cast(),
                panel as i64,
            )
        };
    }
    if whole < records {
        rest(whole, records - whole, &mut out[whole * n_codes..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Panels are whole blocks whose sums fit the budget (one block at least), and panels of
    /// few tiles keep to their lower cap.
    #[test]
    fn panels_are_whole_blocks_within_the_budgets() {
        for tiles in (2..=64).step_by(2) {
            let panel = panel_records(tiles);
            assert_eq!(panel % RECORD_BLOCK, 0, "{tiles} tiles");
            assert!(panel >= RECORD_BLOCK);
            assert!(panel == RECORD_BLOCK || panel * 64 * tiles <= PANEL_SUM_BYTES);
            let cap = if tiles <= FEW_TILES {
                FEW_TILES_PANEL_MAX_RECORDS
            } else {
                PANEL_MAX_RECORDS
            };
            assert!(panel <= cap, "{tiles} tiles: {panel} records");
        }
        assert_eq!(panel_records(4), FEW_TILES_PANEL_MAX_RECORDS);
        assert_eq!(panel_records(10), PANEL_MAX_RECORDS);
        assert_eq!(panel_records(32), 192);
    }

    /// One TDPBUUD as the instruction's definition states it: `c[m][n] += Σ_{k<16} Σ_{i<4}
    /// a[m][4k + i] * b[k][4n + i]`, u8 x u8, wrapping i32.
    fn tdpbuud(c: &mut [[u32; 16]; 16], a: &[[u8; 64]; 16], b: &[u8]) {
        for (m, row) in c.iter_mut().enumerate() {
            for (n, acc) in row.iter_mut().enumerate() {
                for k in 0..16 {
                    for i in 0..4 {
                        let x = u32::from(a[m][4 * k + i]);
                        let y = u32::from(b[k * 64 + 4 * n + i]);
                        *acc = acc.wrapping_add(x * y);
                    }
                }
            }
        }
    }

    /// What the kernel computes, tile by tile from the columns' bytes: the sums of one record
    /// (A row 0 of every step) against every column.
    fn emulated(cols: &Columns, g: (&[u16], Option<&[u16]>), words: usize) -> Vec<u16> {
        let steps = words / STEP_WORDS;
        let per_side = cols.tiles() * steps * TILE_BYTES;
        let mut c = vec![[[0u32; 16]; 16]; cols.tiles()];
        for (s, rows) in std::iter::once(g.0).chain(g.1).enumerate() {
            for step in 0..steps {
                let mut a = [[0u8; 64]; 16];
                for (i, w) in rows[step * STEP_WORDS..][..STEP_WORDS].iter().enumerate() {
                    a[0][2 * i..2 * i + 2].copy_from_slice(&w.to_le_bytes());
                }
                for (t, acc) in c.iter_mut().enumerate() {
                    let at = s * per_side + (t * steps + step) * TILE_BYTES;
                    tdpbuud(acc, &a, &cols.bytes()[at..][..TILE_BYTES]);
                }
            }
        }
        let form = cols.form();
        (0..cols.n_codes())
            .map(|code| {
                let per_tile = form.codes_per_tile();
                let (t, col) = (code / per_tile, form.columns() * (code % per_tile));
                let (c0, c1) = (c[t][0][col], c[t][0][col + 1]);
                match form {
                    Form::Wrap16 => c0.wrapping_add(c1.wrapping_mul(256)) as u16,
                    Form::Exact => {
                        let c2 = c[t][0][col + 2];
                        assert!(c0 < 1 << 31 && c1 < 1 << 31 && c2 < 1 << 31, "exact sums");
                        let exact = u64::from(c0) + 256 * u64::from(c1) + 65_536 * u64::from(c2);
                        (exact % u64::from(crate::share::fp::P)) as u16
                    }
                }
            })
            .collect()
    }

    /// The columns, multiplied as TDPBUUD defines it and combined as C0 + 256 C1, give the
    /// plain dot products mod 2^16 (one side) and eq. 6's difference (two sides), on random
    /// words and on the ring's edges (0, 1, 255, 256, 2^15, 2^16 - 1).
    #[test]
    fn the_columns_give_the_dot_products_mod_2_16() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let edges = [0u16, 1, 255, 256, 0x8000, 0xffff, 0x7fff, 0x0101];
        for (words, n_codes, two_sides) in [
            (32, 1, false),
            (64, 9, true),
            (96, 17, false),
            (128, 3, true),
        ] {
            for trial in 0..4 {
                let mut word = |i: usize| {
                    if trial == 0 {
                        edges[i % edges.len()]
                    } else if trial == 1 {
                        0xffff
                    } else {
                        rng.random()
                    }
                };
                let qa: Vec<u16> = (0..n_codes * words).map(&mut word).collect();
                let qb: Vec<u16> = (0..n_codes * words).map(|i| word(i + 3)).collect();
                let ga: Vec<u16> = (0..words).map(|i| word(i + 5)).collect();
                let gb: Vec<u16> = (0..words).map(|i| word(i + 7)).collect();
                let q = (&qa[..], two_sides.then_some(&qb[..]));
                let g = (&ga[..], two_sides.then_some(&gb[..]));
                let cols = Columns::new(q, n_codes, words);
                let got = emulated(&cols, g, words);
                for (c, &got) in got.iter().enumerate() {
                    let dot = |q: &[u16], g: &[u16]| {
                        q.iter()
                            .zip(g)
                            .fold(0u16, |s, (x, y)| s.wrapping_add(x.wrapping_mul(*y)))
                    };
                    let mut want = dot(&qa[c * words..][..words], &ga);
                    if two_sides {
                        want = want.wrapping_sub(dot(&qb[c * words..][..words], &gb));
                    }
                    assert_eq!(
                        got, want,
                        "{words} words, code {c} of {n_codes}, trial {trial}"
                    );
                }
            }
        }
    }

    /// The exact form's three columns give the F_p dot products (reduced once mod p), on
    /// random words below p, all at p - 1 (the largest sums) at the longest codes it takes,
    /// and zeros.
    #[test]
    fn the_exact_columns_give_the_dot_products_mod_p() {
        let p = crate::share::fp::P;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(12);
        for (words, n_codes, fill) in [
            (32, 1, 0),
            (64, 6, 0),
            (96, 11, 0),
            (EXACT_MAX_WORDS, 2, 1),
            (64, 5, 2),
        ] {
            let mut word = |_: usize| -> u16 {
                match fill {
                    0 => rng.random_range(0..p),
                    1 => p - 1,
                    _ => 0,
                }
            };
            let q: Vec<u16> = (0..n_codes * words).map(&mut word).collect();
            let g: Vec<u16> = (0..words).map(&mut word).collect();
            let cols = Columns::of_form(Form::Exact, (&q, None), n_codes, words);
            assert_eq!(cols.tiles(), n_codes.div_ceil(10) * 2);
            let got = emulated(&cols, (&g, None), words);
            for (c, &got) in got.iter().enumerate() {
                let want = q[c * words..][..words]
                    .iter()
                    .zip(&g)
                    .map(|(&x, &y)| u64::from(x) * u64::from(y))
                    .sum::<u64>()
                    % u64::from(p);
                assert_eq!(u64::from(got), want, "{words} words, code {c}, fill {fill}");
            }
        }
        assert!(Form::Exact.applies(EXACT_MAX_WORDS) && !Form::Exact.applies(EXACT_MAX_WORDS + 32));
        const { assert!(2 * 255 * 255 * EXACT_MAX_WORDS < 1 << 31) };
    }

    #[test]
    fn the_environment_switch_is_checked() {
        assert_eq!(enabled_for(None), Ok(true));
        assert_eq!(enabled_for(Some("on")), Ok(true));
        assert_eq!(enabled_for(Some(" off ")), Ok(false));
        assert!(enabled_for(Some("yes")).unwrap_err().contains(AMX_ENV));
    }

    #[test]
    fn columns_pad_to_whole_pairs_of_tiles() {
        let q = vec![1u16; 17 * 32];
        let c = Columns::new((&q, None), 17, 32);
        // 17 codes: 3 tiles of 8, padded to 4.
        assert_eq!(c.tiles(), 4);
        assert_eq!(c.bytes().len(), 4 * TILE_BYTES);
        assert!(applies(12_800) && !applies(100) && !applies(0));
    }
}
