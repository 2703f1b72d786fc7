//! The polyphase form of a batch of rotated dot products: the query's half rows the compiler's
//! polyphase kernel takes (`codegen::cpu::kernel::polyphase` in the compiler, whose module doc
//! derives the identities) and the combination of its outputs into one sum per rotation.
//!
//! A rotation moves whole cells of 4 words along a grid row (`IrisCode::rotate`). E of a row is
//! its even cells in order, O its odd ones. For shifts `lo..=hi` the kernel takes, per query,
//! the E half of the rotations by the even shifts in `lo..=hi + 1`, the O half of those by the
//! even shifts in `lo - 1..=hi`, and E + O of those by the odd shifts in `lo..=hi`; then
//!
//! - even `r`: `dot(r) = E-part(r) + O-part(r)`;
//! - odd `r`: `dot(r) = S-part(r) - E-part(r + 1) - O-part(r - 1)`.

use super::reference::MaskedDotKernel;
use crate::iris::code::{BITS_PER_CELL, ROWS};

/// Words of one grid cell.
pub const CELL_WORDS: usize = BITS_PER_CELL;

/// Queries per call from which the polyphase kernel runs: with one query's 31 rotations (48 half
/// rows) it measured even with the plain kernel (1.00 Z16, 1.05 GR16 on an AVX2 core) and the
/// parties' dot phase no faster, with 8 queries 1.42 and 1.30 times the compiler's tiled plain
/// kernel (`bench/results/cpu-2026-11-29-zen3b`).
pub const MIN_QUERIES: usize = 2;

/// Records per polyphase kernel call within a thread's share of the records: a multiple of
/// every nest's record panel (32 at most), and its output (8 queries: 256 x 384 half-row sums,
/// 192 KiB) small enough to stay in L2 until it is combined.
pub const RECORD_BLOCK: usize = 256;

/// The environment variable that turns the polyphase kernels off (`off`): the plain kernels
/// run, for comparisons in one build; anything else, or unset, leaves them on.
pub const POLYPHASE_ENV: &str = "IRISC_POLYPHASE";

/// Polyphase kernel calls in this process (the party's accounting reports them).
static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many polyphase kernel calls this process made.
pub fn calls() -> u64 {
    CALLS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Whether the polyphase kernels may run in this process ([`POLYPHASE_ENV`], read once); an
/// unknown value is refused.
pub fn enabled() -> Result<bool, crate::error::RuntimeError> {
    static ON: std::sync::OnceLock<Result<bool, String>> = std::sync::OnceLock::new();
    ON.get_or_init(|| enabled_for(std::env::var(POLYPHASE_ENV).ok().as_deref()))
        .clone()
        .map_err(crate::error::RuntimeError::Usage)
}

/// [`enabled`] for a value of [`POLYPHASE_ENV`] (None: unset).
pub fn enabled_for(v: Option<&str>) -> Result<bool, String> {
    match v.map(str::trim) {
        None | Some("") | Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(format!("{POLYPHASE_ENV}={other}: expected on or off")),
    }
}

/// The shifts `lo..=hi` of codes of `words` words, in the polyphase form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Polyphase {
    lo: i32,
    hi: i32,
    words: usize,
}

/// Which half of a row a part of the kernel's query takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Even,
    Odd,
    Sum,
}

const PARTS: [Part; 3] = [Part::Even, Part::Odd, Part::Sum];

impl Polyphase {
    /// The form for shifts `lo..=hi` of `words`-word codes, where it applies: at least two
    /// shifts, and codes of 16 rows of an even number of 4-word cells that split into whole
    /// pairs of the widest vector (`words` a multiple of 128).
    pub fn new(lo: i32, hi: i32, words: usize) -> Option<Polyphase> {
        (hi > lo && words > 0 && words.is_multiple_of(128)).then_some(Polyphase { lo, hi, words })
    }

    /// Words per code.
    pub fn words(&self) -> usize {
        self.words
    }

    /// Rotated rows per query (`hi - lo + 1`).
    pub fn rotations(&self) -> usize {
        (self.hi - self.lo + 1) as usize
    }

    /// Words of a half row.
    pub fn half_words(&self) -> usize {
        self.words / 2
    }

    fn cols(&self) -> usize {
        self.words / (ROWS * CELL_WORDS)
    }

    /// The shifts whose rotation gives `part`'s half rows, in row order.
    fn shifts(&self, part: Part) -> impl Iterator<Item = i32> {
        let (from, to, parity) = match part {
            Part::Even => (self.lo, self.hi + 1, 0),
            Part::Odd => (self.lo - 1, self.hi, 0),
            Part::Sum => (self.lo, self.hi, 1),
        };
        (from..=to).filter(move |r| r.rem_euclid(2) == parity)
    }

    /// Half rows per part and query: the largest part (the others padded with zero rows).
    pub fn rows_per_part(&self) -> usize {
        PARTS
            .iter()
            .map(|&p| self.shifts(p).count())
            .max()
            .unwrap_or(0)
    }

    /// The kernel's `n_codes` for `queries` queries (3 parts of `rows_per_part` rows each).
    pub fn kernel_rows(&self, queries: usize) -> usize {
        3 * queries * self.rows_per_part()
    }

    /// Where `part`'s half row for shift `r` lies among a query's rows of that part.
    fn index(&self, part: Part, r: i32) -> usize {
        let first = self.shifts(part).next().unwrap_or(r);
        ((r - first) / 2) as usize
    }

    /// The kernel's query rows (one side) from `rows`, the rotated rows of `queries` queries
    /// (query-major, shifts `lo..=hi` each, `words` words each): `[E | O | E + O]`, each part
    /// `queries * rows_per_part` half rows, query-major. The two shifts next to the range
    /// (`hi + 1`, `lo - 1`) are the outer rows rotated once more.
    pub fn query_rows(&self, rows: &[u16], queries: usize) -> Vec<u16> {
        let (w, h, n) = (self.words, self.half_words(), self.rotations());
        assert!(
            rows.len() >= queries * n * w,
            "fewer rotated rows than the queries need"
        );
        let m = self.rows_per_part();
        let mut out = vec![0u16; self.kernel_rows(queries) * h];
        let mut moved = vec![0u16; w];
        for (pi, &part) in PARTS.iter().enumerate() {
            for q in 0..queries {
                let row_of = |r: i32| &rows[(q * n + (r - self.lo) as usize) * w..][..w];
                for (j, r) in self.shifts(part).enumerate() {
                    let src = if r > self.hi {
                        rotate_cells(row_of(self.hi), 1, self.cols(), &mut moved);
                        &moved[..]
                    } else if r < self.lo {
                        rotate_cells(row_of(self.lo), -1, self.cols(), &mut moved);
                        &moved[..]
                    } else {
                        row_of(r)
                    };
                    let dst = &mut out[((pi * queries + q) * m + j) * h..][..h];
                    half_row(src, part, dst);
                }
            }
        }
        out
    }

    /// The sums per rotation, `out[record * queries * n + query * n + (r - lo)]`, from the
    /// polyphase kernel's output for `records` records and `queries` queries (wrapping).
    pub fn combine(&self, kernel_out: &[u16], records: usize, queries: usize, out: &mut [u16]) {
        let (n, m) = (self.rotations(), self.rows_per_part());
        let width = 3 * queries * m;
        assert!(kernel_out.len() >= records * width && out.len() >= records * queries * n);
        // Per (query, shift): where its terms lie in a record's kernel output, computed once.
        let at = |part: Part, q: usize, r: i32| {
            let pi = PARTS.iter().position(|&p| p == part).unwrap_or(0);
            (pi * queries + q) * m + self.index(part, r)
        };
        let terms: Vec<[usize; 3]> = (0..queries)
            .flat_map(|q| {
                (self.lo..=self.hi).map(move |r| match r.rem_euclid(2) {
                    // Even: E + O (the third index unused: a zero term).
                    0 => [at(Part::Even, q, r), at(Part::Odd, q, r), usize::MAX],
                    _ => [
                        at(Part::Sum, q, r),
                        at(Part::Even, q, r + 1),
                        at(Part::Odd, q, r - 1),
                    ],
                })
            })
            .collect();
        for (k, o) in kernel_out
            .chunks_exact(width)
            .zip(out.chunks_exact_mut(queries * n))
            .take(records)
        {
            for (v, t) in o.iter_mut().zip(&terms) {
                *v = if t[2] == usize::MAX {
                    k[t[0]].wrapping_add(k[t[1]])
                } else {
                    k[t[0]].wrapping_sub(k[t[1]]).wrapping_sub(k[t[2]])
                };
            }
        }
    }
}

/// One thread's share of a polyphase call: for the records of `g` that `out` covers
/// (`out.len() / (queries x rotations)` of them, from its first), in blocks of
/// [`RECORD_BLOCK`], the kernel over the query's half `rows` ([`Polyphase::query_rows`]) into
/// `kernel_out` (one block's output, so it stays in cache), then the sums per rotation into
/// that block of `out`.
///
/// # Safety
/// `kernel` must be a generated polyphase kernel for `form.words()` words and as many sides as
/// are given (a second side in both `rows` and `g`, or in neither).
pub unsafe fn run_blocks(
    kernel: MaskedDotKernel<u16>,
    form: &Polyphase,
    queries: usize,
    rows: (&[u16], Option<&[u16]>),
    g: (&[u16], Option<&[u16]>),
    kernel_out: &mut Vec<u16>,
    out: &mut [u16],
) {
    let (wide, words, n_codes) = (
        form.kernel_rows(queries),
        form.words,
        queries * form.rotations(),
    );
    let records = out.len() / n_codes.max(1);
    assert!(
        rows.0.len() >= wide * form.half_words()
            && rows.1.is_none_or(|b| b.len() >= wide * form.half_words())
            && g.0.len() >= records * words
            && g.1.is_none_or(|b| b.len() >= records * words),
        "polyphase rows or gallery shorter than the call's shape"
    );
    kernel_out.resize(records.min(RECORD_BLOCK) * wide, 0);
    let ptr = |s: Option<&[u16]>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    for (b, out) in out.chunks_mut(RECORD_BLOCK * n_codes).enumerate() {
        let (r0, nb) = (b * RECORD_BLOCK, out.len() / n_codes);
        let at = |s: &'_ [u16]| s[r0 * words..].as_ptr();
        // SAFETY: the caller's contract; the half rows are `wide` rows of words / 2 and the
        // block's `nb` records lie inside `g` (checked above), kernel_out holds nb x wide.
        unsafe {
            kernel(
                rows.0.as_ptr(),
                ptr(rows.1),
                wide as i64,
                at(g.0),
                g.1.map_or(std::ptr::null(), at),
                nb as i64,
                kernel_out.as_mut_ptr(),
            )
        };
        form.combine(kernel_out, nb, queries, out);
    }
}

/// `out[r * n_codes + c]` = the dot product (eq. 6 for two sides) of code `c` of `q` with
/// record `r` of `g`, as the plain kernels compute it, through the polyphase `kernel`: `q` is
/// `n_codes / rotations` queries' rotated rows, whose half rows are laid out once, then the
/// records split across `threads`, each part in blocks ([`run_blocks`]).
///
/// # Safety
/// `kernel` must be a generated polyphase kernel for `form.words()` words and this many sides
/// (two where `q.1` is given).
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn run(
    kernel: *const (),
    form: &Polyphase,
    q: (&[u16], Option<&[u16]>),
    n_codes: usize,
    g: (&[u16], Option<&[u16]>),
    n_records: usize,
    threads: usize,
    out: &mut [u16],
) {
    let queries = n_codes / form.rotations();
    let (qa, qb) = (
        form.query_rows(q.0, queries),
        q.1.map(|b| form.query_rows(b, queries)),
    );
    // SAFETY: the caller's contract: a generated kernel of this signature.
    let k: MaskedDotKernel<u16> = unsafe { std::mem::transmute(kernel) };
    let words = form.words;
    let part = |first: usize, out: &mut [u16]| {
        CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let at = first * words;
        let mut kernel_out = Vec::new();
        // SAFETY: the caller's contract; this part's records lie inside the gallery (the
        // caller checked n_records, and `out` covers records first.. of it).
        unsafe {
            run_blocks(
                k,
                form,
                queries,
                (&qa, qb.as_deref()),
                (&g.0[at..], g.1.map(|b| &b[at..])),
                &mut kernel_out,
                out,
            )
        };
    };
    super::shards::in_record_shards(n_records, n_codes, threads, 1, out, part);
}

/// `dst = src` rotated by `s` cells along each of the 16 grid rows of `cols` cells.
fn rotate_cells(src: &[u16], s: i32, cols: usize, dst: &mut [u16]) {
    let row_words = cols * CELL_WORDS;
    for (from, to) in src
        .chunks_exact(row_words)
        .zip(dst.chunks_exact_mut(row_words))
    {
        for col in 0..cols {
            let c = (col as i64 + i64::from(s)).rem_euclid(cols as i64) as usize;
            to[col * CELL_WORDS..][..CELL_WORDS]
                .copy_from_slice(&from[c * CELL_WORDS..][..CELL_WORDS]);
        }
    }
}

/// The even cells, the odd cells, or their sum (wrapping), of one row.
fn half_row(src: &[u16], part: Part, dst: &mut [u16]) {
    for (pair, d) in src
        .chunks_exact(2 * CELL_WORDS)
        .zip(dst.chunks_exact_mut(CELL_WORDS))
    {
        for w in 0..CELL_WORDS {
            let (e, o) = (pair[w], pair[CELL_WORDS + w]);
            d[w] = match part {
                Part::Even => e,
                Part::Odd => o,
                Part::Sum => e.wrapping_add(o),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The plain definition: <g, rot(q, r)> for every shift, rotation written out per word.
    fn plain(q: &[u16], g: &[u16], lo: i32, hi: i32, words: usize) -> Vec<u16> {
        let cols = words / 64;
        (lo..=hi)
            .map(|r| {
                let mut acc = 0u16;
                for row in 0..16 {
                    for col in 0..cols {
                        let from = (col as i32 + r).rem_euclid(cols as i32) as usize;
                        for k in 0..4 {
                            let qi = row * cols * 4 + from * 4 + k;
                            let gi = row * cols * 4 + col * 4 + k;
                            acc = acc.wrapping_add(q[qi].wrapping_mul(g[gi]));
                        }
                    }
                }
                acc
            })
            .collect()
    }

    /// What the kernel computes, in plain loops: row j of each part against that part of g.
    fn kernel(p: &Polyphase, qrows: &[u16], g: &[u16], queries: usize) -> Vec<u16> {
        let h = p.half_words();
        let rows = p.kernel_rows(queries);
        let m = rows / 3;
        (0..rows)
            .map(|j| {
                let mut half = vec![0u16; h];
                half_row(g, PARTS[j / m], &mut half);
                qrows[j * h..][..h]
                    .iter()
                    .zip(&half)
                    .fold(0u16, |a, (x, y)| a.wrapping_add(x.wrapping_mul(*y)))
            })
            .collect()
    }

    #[test]
    fn the_polyphase_form_gives_every_rotations_sum() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for (lo, hi, words, queries) in [
            (-15, 15, 12_800, 1),
            (-15, 15, 256, 3),
            (-2, 3, 128, 2),
            (0, 1, 128, 1),
            (-1, 0, 256, 1),
            (-4, -1, 384, 2),
            (1, 6, 128, 1),
        ] {
            let p = Polyphase::new(lo, hi, words).unwrap();
            let n = p.rotations();
            let base: Vec<Vec<u16>> = (0..queries)
                .map(|_| (0..words).map(|_| rng.random()).collect())
                .collect();
            let g: Vec<u16> = (0..words).map(|_| rng.random()).collect();
            // The rotated rows as the runtime's rotate op lays them out.
            let mut rows = Vec::new();
            for q in &base {
                for r in lo..=hi {
                    let mut d = vec![0u16; words];
                    rotate_cells(q, r, words / 64, &mut d);
                    rows.extend(d);
                }
            }
            let qrows = p.query_rows(&rows, queries);
            let k = kernel(&p, &qrows, &g, queries);
            let mut got = vec![0u16; queries * n];
            p.combine(&k, 1, queries, &mut got);
            let want: Vec<u16> = base
                .iter()
                .flat_map(|q| plain(q, &g, lo, hi, words))
                .collect();
            assert_eq!(
                got, want,
                "shifts {lo}..={hi}, {words} words, {queries} queries"
            );
        }
    }

    #[test]
    fn the_switch_reads_on_and_off_and_refuses_the_rest() {
        assert_eq!(enabled_for(None), Ok(true));
        assert_eq!(enabled_for(Some("on")), Ok(true));
        assert_eq!(enabled_for(Some(" off ")), Ok(false));
        assert!(enabled_for(Some("no"))
            .unwrap_err()
            .contains("IRISC_POLYPHASE=no"));
    }

    #[test]
    fn the_form_applies_to_two_or_more_shifts_of_whole_vector_pairs() {
        assert!(Polyphase::new(-15, 15, 12_800).is_some());
        assert!(Polyphase::new(0, 0, 12_800).is_none());
        assert!(Polyphase::new(0, 1, 64).is_none());
        assert!(Polyphase::new(0, 1, 12_864).is_none());
        assert_eq!(Polyphase::new(-15, 15, 12_800).unwrap().rows_per_part(), 16);
        // 0..=2: E {0, 2}, O {0, 2}... O takes -1..=2: {0, 2}; S {1}: padded to 2.
        assert_eq!(Polyphase::new(0, 2, 128).unwrap().rows_per_part(), 2);
    }
}
