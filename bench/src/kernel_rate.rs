//! The generated dot-product kernel's own rate, timed in this process for what a run's parties
//! computed: the same ring and code length (from the program's gallery input), the same number
//! of query codes per call (31 rotations, times the queries of a batch), the loop nest the
//! compiler records for that many codes (`kernel-tile`: register tile, K chunks, panels; where
//! it offers the unchunked nest too, the one the parties would run: the faster of the two, or
//! the one `IRISC_KERNEL_NEST` forces), the
//! ISA variant the runtime dispatches to (`IRISC_ISA` included), one thread, over a gallery
//! streamed from memory (64 MiB of random shares re-read every pass, as the `dot` section does). The `e2e` section
//! puts each run's dot phase next to it: the ratio says how much of the kernel's speed the
//! parties' dot phase keeps.
//!
//! Timed in CPU seconds of the timing thread (`CLOCK_THREAD_CPUTIME_ID`) as well as wall
//! seconds: the parties' dot phase is reported per CPU-second too, so neither figure depends on
//! what else shares the machine's cores.

use anyhow::{anyhow, bail, Result};
use irisc::analysis::kernel_tile::{choose, DotKind};
use irisc::codegen::cpu::kernel::polyphase::kernel_name as polyphase_kernel_name;
use irisc::codegen::cpu::kernel::{kernel_name_tiled, storage_bits, DotRing, Isa, KernelTile};
use irisc_runtime::kernels::nest::{Nest, NestPolicy};
use irisc_runtime::kernels::polyphase::{self, Polyphase};
use irisc_runtime::manifest::ManifestInput;
use irisc_runtime::ops::shamir_codes::ShamirKind;
use irisc_runtime::share::fp;
use irisc_runtime::vocab::Sharing;
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::Instant;

use super::jit;
use super::peak::gallery_bytes_for;

/// The kernel a gallery input's dot products run: its ring and words per code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelShape {
    pub ring: DotRing,
    pub words: u32,
}

impl KernelShape {
    /// The kernel the compiler generates for dot products with gallery input `input`, as
    /// `irisc build` picks it (Shamir: GR16 or F_p over the packed words; replicated: the
    /// two-sided kernel of the shares' storage width).
    pub fn of(input: &ManifestInput) -> Result<KernelShape> {
        let bits = input.elements as usize;
        let (ring, words) = match input.sharing {
            Sharing::Gr2 => (DotRing::Gr16, ShamirKind::Gr2.words_per_code(bits)),
            Sharing::Gr4 => (DotRing::Gr16, ShamirKind::Gr4.words_per_code(bits)),
            Sharing::Fp => (DotRing::Fp, ShamirKind::Fp.words_per_code(bits)),
            Sharing::Rep3 => (
                DotRing::replicated(storage_bits(input.ring_bits)).map_err(|e| anyhow!("{e}"))?,
                bits,
            ),
        };
        Ok(KernelShape {
            ring,
            words: u32::try_from(words)?,
        })
    }

    /// What the tile analysis knows of this kernel's ring.
    fn kind(&self) -> DotKind {
        match self.ring {
            DotRing::Gr16 => DotKind::Galois,
            DotRing::Fp => DotKind::Prime,
            r => DotKind::Replicated {
                storage_bits: r.bits(),
            },
        }
    }

    /// The tile `irisc build` records for calls of `codes` codes.
    fn tile_for(&self, codes: usize) -> KernelTile {
        choose(self.kind(), codes as u64)
    }

    fn bytes_per_record(&self) -> usize {
        self.words as usize * self.ring.bits() as usize / 8 * self.ring.sides() as usize
    }
}

/// One timing of the kernel.
#[derive(Debug, Clone)]
pub struct KernelRate {
    pub shape: KernelShape,
    /// Query codes per call (rotations x queries).
    pub codes: usize,
    /// The variant timed: the one the runtime dispatches to on this CPU.
    pub isa: Isa,
    pub kernel: String,
    /// Records per pass (the gallery re-read every pass).
    pub records: usize,
    pub passes: usize,
    /// Dot products (code, record pairs) per CPU-second of the timing thread.
    pub per_cpu_s: f64,
    /// The same per second of wall time.
    pub per_s: f64,
}

/// CPU seconds of the calling thread so far.
fn thread_cpu_s() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `t`.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// The ISA the runtime's dispatch takes on this CPU (`IRISC_ISA` if set).
pub fn dispatched_isa() -> Result<Isa> {
    Isa::selected().map_err(|e| anyhow!("{e}"))
}

/// Times the plain kernel of `shape` with `codes` query codes on one thread for at least
/// `min_secs` of CPU time (after one warm-up pass).
pub fn measure(shape: KernelShape, codes: usize, min_secs: f64) -> Result<KernelRate> {
    with_timer(shape, &[codes], None, |t| {
        t.measure(codes, min_secs, false, false)
    })?
}

/// The kernel of one shape, compiled once, timed as often as wanted ([`Timer::measure`]).
pub struct Timer<'k> {
    kernels: &'k jit::Kernels,
    shape: KernelShape,
    isa: Isa,
    /// The polyphase form of the calls' rotations, where the ring has polyphase kernels.
    polyphase: Option<Polyphase>,
}

/// JIT-compiles the kernels of `shape` as `irisc build` generates them for calls of each of
/// `codes` codes and calls `f` with a timer for them (so that a section can time one right
/// before each run it compares with it). With `shifts` (the rotations `lo..=hi` of each query,
/// as `kernel-tile` records them in `polyphase`), the polyphase kernels of the calls the
/// runtime would run them for too.
pub fn with_timer<R>(
    shape: KernelShape,
    codes: &[usize],
    shifts: Option<(i32, i32)>,
    f: impl FnOnce(&Timer) -> R,
) -> Result<R> {
    let selected = dispatched_isa()?;
    let polyphase = shifts
        .filter(|_| matches!(shape.ring, DotRing::Gr16 | DotRing::Z16))
        .and_then(|(lo, hi)| Polyphase::new(lo, hi, shape.words as usize));
    let polyphase_kernels: Vec<(DotRing, u32, u64)> = polyphase
        .iter()
        .flat_map(|form| {
            codes
                .iter()
                .filter_map(|&c| polyphase_queries(form, c))
                .map(|q| (shape.ring, shape.words, form.kernel_rows(q) as u64))
        })
        .collect();
    let mut kernels = vec![(shape.ring, shape.words, None)];
    for &c in codes {
        let tile = shape.tile_for(c);
        let unchunked = tile.unchunked_alternative.then(|| tile.unchunked());
        for t in std::iter::once(tile).chain(unchunked) {
            if !kernels.contains(&(shape.ring, shape.words, Some(t))) {
                kernels.push((shape.ring, shape.words, Some(t)));
            }
        }
    }
    jit::with_all_kernels(&kernels, &polyphase_kernels, |kernels| {
        // As the runtime does: the selected ISA, else the widest variant below it that the
        // ring has (u32/u64 words have no VNNI form and run the AVX-512 one).
        let variants = kernels.variants(shape.ring, shape.words);
        let rank = |i: &Isa| Isa::ALL.iter().position(|a| a == i);
        let Some(isa) = Isa::ALL
            .iter()
            .rev()
            .find(|i| rank(i) <= rank(&selected) && variants.contains(i))
            .copied()
        else {
            bail!(
                "kernel rate: no variant of the {} kernel up to {}",
                shape.ring.tag(),
                selected.name()
            );
        };
        Ok(f(&Timer {
            kernels,
            shape,
            isa,
            polyphase,
        }))
    })?
}

/// Queries per call of `codes` codes, where the runtime runs the polyphase kernel for such
/// calls (`run_nests`): whole queries of the form's rotations, at least
/// [`polyphase::MIN_QUERIES`] of them.
fn polyphase_queries(form: &Polyphase, codes: usize) -> Option<usize> {
    let n = form.rotations();
    (codes.is_multiple_of(n) && codes / n >= polyphase::MIN_QUERIES).then_some(codes / n)
}

impl Timer<'_> {
    /// Times the kernel the parties run for calls of `codes` query codes, on one thread for
    /// at least `min_secs` of CPU time (after one warm-up pass), over fresh random shares: the
    /// AMX kernel where `amx` (the parties' `IRISC_AMX`) is on, this process may run AMX and
    /// the runtime would take it for such calls; else the polyphase kernel and its combination
    /// where `polyphase` (the parties' `IRISC_POLYPHASE`) is on and the runtime would take it,
    /// else the plain kernel of the compiler's nest.
    pub fn measure(
        &self,
        codes: usize,
        min_secs: f64,
        polyphase: bool,
        amx: bool,
    ) -> Result<KernelRate> {
        // The AMX kernel first, as the runtime takes it first (`run_nests`) where the parties
        // may run AMX (`amx` their switch; this process checks the CPU and the OS).
        let usable = irisc_runtime::kernels::dispatch::amx_usable().map_err(|e| anyhow!("{e}"))?;
        let kernel = self.kernels.get_amx(self.shape.ring, self.shape.words);
        let runs = amx && usable && codes <= irisc_runtime::kernels::amx::MAX_CODES;
        if let (true, Some(f)) = (runs, kernel) {
            return self.measure_amx(f, codes, min_secs);
        }
        if let Some((form, queries)) = self
            .polyphase
            .filter(|_| polyphase)
            .and_then(|f| polyphase_queries(&f, codes).map(|q| (f, q)))
        {
            return self.measure_polyphase(&form, queries, min_secs);
        }
        let tile = self.shape.tile_for(codes);
        if !tile.unchunked_alternative {
            return self.measure_tile(codes, tile, min_secs);
        }
        let policy = NestPolicy::selected().map_err(|e| anyhow!("{e}"))?;
        Ok(match policy {
            NestPolicy::Force(Nest::First) => self.measure_tile(codes, tile, min_secs)?,
            NestPolicy::Force(Nest::Second) => {
                self.measure_tile(codes, tile.unchunked(), min_secs)?
            }
            NestPolicy::Measure => {
                let first = self.measure_tile(codes, tile, min_secs)?;
                let second = self.measure_tile(codes, tile.unchunked(), min_secs)?;
                if second.per_cpu_s > first.per_cpu_s {
                    second
                } else {
                    first
                }
            }
        })
    }

    /// [`Timer::measure`] of the nest of `tile`.
    fn measure_tile(&self, codes: usize, tile: KernelTile, min_secs: f64) -> Result<KernelRate> {
        if codes == 0 {
            bail!("kernel rate: no query codes");
        }
        let (k, shape, isa) = (self.kernels, self.shape, self.isa);
        let records = (gallery_bytes_for(codes) / shape.bytes_per_record().max(1)).max(2);
        let w = shape.words as usize;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
        let (passes, cpu, wall) = match shape.ring {
            DotRing::Gr16 | DotRing::Fp => {
                let below = if shape.ring == DotRing::Fp {
                    fp::P
                } else {
                    u16::MAX
                };
                let mut words = |n: usize| -> Vec<u16> {
                    (0..n).map(|_| rng.random_range(0..=below - 1)).collect()
                };
                let (q, g) = (words(codes * w), words(records * w));
                // SAFETY: u16 is the storage word of these rings.
                let f = unsafe { k.get_tiled::<u16>(shape.ring, shape.words, Some(tile), isa) }
                    .ok_or_else(|| anyhow!("kernel rate: no kernel for {codes} codes (with_timer was not given them)"))?;
                time_passes(min_secs, codes, records, |out| unsafe {
                    // SAFETY: q holds `codes` codes and g `records` records of w words; the
                    // one-sided kernels do not read the side-b pointers.
                    f(
                        q.as_ptr(),
                        std::ptr::null(),
                        codes as i64,
                        g.as_ptr(),
                        std::ptr::null(),
                        records as i64,
                        out.as_mut_ptr(),
                    )
                })
            }
            DotRing::Z16 => {
                two_sided::<u16>(k, shape, tile, isa, codes, records, min_secs, &mut rng)?
            }
            DotRing::Z32 => {
                two_sided::<u32>(k, shape, tile, isa, codes, records, min_secs, &mut rng)?
            }
            DotRing::Z64 => {
                two_sided::<u64>(k, shape, tile, isa, codes, records, min_secs, &mut rng)?
            }
        };
        let dots = (passes * codes * records) as f64;
        Ok(KernelRate {
            shape,
            codes,
            isa,
            kernel: kernel_name_tiled(shape.ring, shape.words, isa, Some(&tile)),
            records,
            passes,
            per_cpu_s: dots / cpu.max(1e-9),
            per_s: dots / wall.max(1e-9),
        })
    }
}

impl Timer<'_> {
    /// [`Timer::measure`] of the AMX kernel `f`: the query's columns laid out once (as the
    /// runtime lays them out once per call), whole record blocks per pass.
    fn measure_amx(
        &self,
        f: irisc_runtime::kernels::amx::AmxDotKernel,
        codes: usize,
        min_secs: f64,
    ) -> Result<KernelRate> {
        use irisc_runtime::kernels::amx::{run_blocks, Columns, Form, RECORD_BLOCK};
        let shape = self.shape;
        let records = (gallery_bytes_for(codes) / shape.bytes_per_record().max(1))
            .max(RECORD_BLOCK)
            .next_multiple_of(RECORD_BLOCK);
        let w = shape.words as usize;
        let two = shape.ring.sides() == 2;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
        let form = irisc::codegen::cpu::kernel::amx::form(shape.ring)
            .ok_or_else(|| anyhow!("kernel rate: no AMX form for {}", shape.ring.tag()))?;
        // Words below p for F_p (its exact sums assume them).
        let top = match form {
            Form::Exact => u32::from(fp::P),
            Form::Wrap16 => 1 << 16,
        };
        let mut words =
            |n: usize| -> Vec<u16> { (0..n).map(|_| rng.random_range(0..top) as u16).collect() };
        let (qa, qb) = (words(codes * w), two.then(|| words(codes * w)));
        let (ga, gb) = (words(records * w), two.then(|| words(records * w)));
        let columns = Columns::of_form(form, (&qa, qb.as_deref()), codes, w);
        let (passes, cpu, wall) = time_passes(min_secs, codes, records, |out: &mut [u16]| {
            // SAFETY: an AMX kernel of this ring's sides and words (AMX usable), over
            // `records` records, whole blocks (no remainder for the vector kernel).
            unsafe {
                run_blocks(f, &columns, (&ga, gb.as_deref()), w, out, &mut |_, _, _| {
                    unreachable!("whole record blocks")
                })
            }
        });
        let dots = (passes * codes * records) as f64;
        Ok(KernelRate {
            shape,
            codes,
            isa: self.isa,
            kernel: irisc::codegen::cpu::kernel::amx::kernel_name(shape.ring, shape.words),
            records,
            passes,
            per_cpu_s: dots / cpu.max(1e-9),
            per_s: dots / wall.max(1e-9),
        })
    }

    /// [`Timer::measure`] of the polyphase kernel for `queries` queries of `form`'s rotations,
    /// called and combined as the runtime does ([`jit::call_polyphase`]).
    fn measure_polyphase(
        &self,
        form: &Polyphase,
        queries: usize,
        min_secs: f64,
    ) -> Result<KernelRate> {
        let (shape, isa) = (self.shape, self.isa);
        let half_rows = form.kernel_rows(queries) as u64;
        // SAFETY: u16 is the storage word of both polyphase rings.
        let f = unsafe {
            self.kernels
                .get_polyphase(shape.ring, shape.words, half_rows, isa)
        }
        .ok_or_else(|| {
            anyhow!(
                "kernel rate: no {} polyphase kernel for {queries} queries",
                isa.name()
            )
        })?;
        let codes = queries * form.rotations();
        let records = (gallery_bytes_for(codes) / shape.bytes_per_record().max(1)).max(2);
        let w = shape.words as usize;
        let two = shape.ring.sides() == 2;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
        let mut words = |n: usize| -> Vec<u16> { (0..n).map(|_| rng.random()).collect() };
        let rows = (words(codes * w), two.then(|| words(codes * w)));
        let (ga, gb) = (words(records * w), two.then(|| words(records * w)));
        let (qa, qb) = (
            form.query_rows(&rows.0, queries),
            rows.1.map(|b| form.query_rows(&b, queries)),
        );
        let mut wide_out = Vec::new();
        let (passes, cpu, wall) = time_passes(min_secs, codes, records, |out: &mut [u16]| {
            // SAFETY: a polyphase kernel of this ring's sides, over `records` records of g.
            unsafe {
                jit::call_polyphase(
                    f,
                    form,
                    queries,
                    (&qa, qb.as_deref()),
                    (&ga, gb.as_deref()),
                    records,
                    &mut wide_out,
                    out,
                )
            }
        });
        let dots = (passes * codes * records) as f64;
        Ok(KernelRate {
            shape,
            codes,
            isa,
            kernel: polyphase_kernel_name(shape.ring, shape.words, isa, half_rows),
            records,
            passes,
            per_cpu_s: dots / cpu.max(1e-9),
            per_s: dots / wall.max(1e-9),
        })
    }
}

/// A two-sided (replicated, eq. 6) kernel over storage `T`, timed as [`measure`] does.
#[allow(clippy::too_many_arguments)]
fn two_sided<T>(
    k: &jit::Kernels,
    shape: KernelShape,
    tile: KernelTile,
    isa: Isa,
    codes: usize,
    records: usize,
    min_secs: f64,
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Result<(usize, f64, f64)>
where
    T: Copy + Default,
    rand::distr::StandardUniform: rand::distr::Distribution<T>,
{
    let w = shape.words as usize;
    let mut words = |n: usize| -> Vec<T> { (0..n).map(|_| rng.random()).collect() };
    let (qa, qb, ga, gb) = (
        words(codes * w),
        words(codes * w),
        words(records * w),
        words(records * w),
    );
    // SAFETY: T is the storage word of this ring (checked by `get_tiled`).
    let f =
        unsafe { k.get_tiled::<T>(shape.ring, shape.words, Some(tile), isa) }.ok_or_else(|| {
            anyhow!("kernel rate: no kernel for {codes} codes (with_timer was not given them)")
        })?;
    Ok(time_passes(min_secs, codes, records, |out| unsafe {
        // SAFETY: both sides hold `codes` codes and `records` records of w words each.
        f(
            qa.as_ptr(),
            qb.as_ptr(),
            codes as i64,
            ga.as_ptr(),
            gb.as_ptr(),
            records as i64,
            out.as_mut_ptr(),
        )
    }))
}

/// Runs `pass` (writing `codes x records` outputs into one buffer allocated once) after a
/// warm-up until `min_secs` of thread CPU time have passed: (passes, cpu s, wall s).
fn time_passes<T: Copy + Default>(
    min_secs: f64,
    codes: usize,
    records: usize,
    mut pass: impl FnMut(&mut [T]),
) -> (usize, f64, f64) {
    let mut out = vec![T::default(); codes * records];
    pass(&mut out);
    let (cpu0, wall0) = (thread_cpu_s(), Instant::now());
    let mut passes = 0;
    loop {
        pass(&mut out);
        black_box(&out);
        passes += 1;
        let cpu = thread_cpu_s() - cpu0;
        if cpu >= min_secs {
            return (passes, cpu, wall0.elapsed().as_secs_f64());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use irisc_runtime::vocab::{InputKind, InputMask, InputRole};

    fn gallery(sharing: Sharing, ring_bits: u32) -> ManifestInput {
        ManifestInput {
            name: "db".into(),
            role: InputRole::Gallery,
            owner: None,
            kind: InputKind::Iris,
            elements: 12_800,
            mask: InputMask::Public,
            sharing,
            ring_bits,
            scale_bits: 0,
            conjugate: false,
        }
    }

    /// Each sharing maps to the kernel `irisc build` generates for it.
    #[test]
    fn shapes_follow_the_sharing() {
        let s = |sh, k| KernelShape::of(&gallery(sh, k)).unwrap();
        assert_eq!(
            s(Sharing::Gr2, 16),
            KernelShape {
                ring: DotRing::Gr16,
                words: 12_800
            }
        );
        assert_eq!(s(Sharing::Gr4, 16).ring, DotRing::Gr16);
        assert_eq!(s(Sharing::Fp, 16).ring, DotRing::Fp);
        assert_eq!(s(Sharing::Rep3, 16).ring, DotRing::Z16);
        assert_eq!(s(Sharing::Rep3, 32).ring, DotRing::Z32);
        assert_eq!(s(Sharing::Rep3, 33).ring, DotRing::Z64);
    }

    /// The timer runs a loop nest `irisc build` records for the call's codes (K chunks and
    /// record panels at l = 12 800, or the second nest it offers; code panels past 256 codes),
    /// not the ISA's default.
    #[test]
    fn the_timed_kernel_is_the_one_the_compiler_records() {
        let shape = KernelShape {
            ring: DotRing::Gr16,
            words: 12_800,
        };
        let rates = with_timer(shape, &[31, 1984], None, |t| {
            [
                t.measure(31, 0.001, true, false).unwrap(),
                t.measure(1984, 0.001, true, false).unwrap(),
            ]
        })
        .unwrap();
        // 31 codes: the compiler's nest or its second (the faster, as the parties measure);
        // 1 984 codes: one nest, with code panels.
        let few = choose(DotKind::Galois, 31);
        let nests = [few, few.unchunked()]
            .map(|t| kernel_name_tiled(DotRing::Gr16, 12_800, rates[0].isa, Some(&t)));
        assert!(
            nests.contains(&rates[0].kernel),
            "{} not in {nests:?}",
            rates[0].kernel
        );
        assert!(
            nests[0].ends_with("_t4x6_k2048_r48") && nests[1].ends_with("_t6x4"),
            "{nests:?}"
        );
        let many = choose(DotKind::Galois, 1984);
        assert!(!many.unchunked_alternative);
        assert_eq!(
            rates[1].kernel,
            kernel_name_tiled(DotRing::Gr16, 12_800, rates[1].isa, Some(&many))
        );
        assert!(
            rates[1].kernel.contains("_p126_k2048_r48"),
            "{}",
            rates[1].kernel
        );
        // A count the timer was not built for is refused with the reason.
        let e = with_timer(shape, &[31], None, |t| {
            t.measure(1984, 0.001, false, false)
                .unwrap_err()
                .to_string()
        })
        .unwrap();
        assert!(e.contains("1984 codes"), "{e}");
    }

    /// With AMX on, the timer runs the AMX kernel where the runtime would: this CPU runs AMX,
    /// a ring that has one (Z16, GR16, F_p), at most `MAX_CODES` codes; else the vector kernels.
    #[test]
    fn the_timer_runs_the_amx_kernel_where_the_runtime_would() {
        let usable = irisc_runtime::kernels::dispatch::amx_usable().unwrap();
        for ring in [DotRing::Gr16, DotRing::Z16, DotRing::Fp] {
            let shape = KernelShape { ring, words: 1_024 };
            let rates = with_timer(shape, &[31, 1984], None, |t| {
                [
                    t.measure(31, 0.001, false, true).unwrap(),
                    t.measure(31, 0.001, false, false).unwrap(),
                    t.measure(1984, 0.001, false, true).unwrap(),
                ]
            })
            .unwrap();
            let amx = irisc::codegen::cpu::kernel::amx::kernel_name(ring, 1_024);
            assert_eq!(rates[0].kernel == amx, usable, "{:?}", rates[0]);
            assert_ne!(rates[1].kernel, amx);
            assert_ne!(rates[2].kernel, amx);
            assert!(rates.iter().all(|r| r.per_cpu_s > 0.0));
        }
    }

    /// With the rotations' shifts, the timer runs the kernel the runtime would: the polyphase
    /// kernel for calls of whole queries, at least `MIN_QUERIES` of them, unless the parties'
    /// switch is off; the plain kernel for one query, for F_p, and with the switch off.
    #[test]
    fn the_timer_runs_the_polyphase_kernel_where_the_runtime_would() {
        let q = polyphase::MIN_QUERIES;
        let codes = [31, 31 * q, 31 * q + 1];
        for ring in [DotRing::Gr16, DotRing::Z16, DotRing::Fp] {
            let shape = KernelShape { ring, words: 1_024 };
            let rates = with_timer(shape, &codes, Some((-15, 15)), |t| {
                [
                    t.measure(codes[0], 0.001, true, false).unwrap(),
                    t.measure(codes[1], 0.001, true, false).unwrap(),
                    t.measure(codes[1], 0.001, false, false).unwrap(),
                    t.measure(codes[2], 0.001, true, false).unwrap(),
                ]
            })
            .unwrap();
            let isa = rates[0].isa;
            let poly = polyphase_kernel_name(ring, 1_024, isa, 48 * q as u64);
            let expect_poly = ring != DotRing::Fp;
            assert_eq!(rates[1].kernel == poly, expect_poly, "{:?}", rates[1]);
            for r in [&rates[0], &rates[2], &rates[3]] {
                assert!(!r.kernel.contains("poly"), "{ring:?}: {}", r.kernel);
                assert!(r.per_cpu_s > 0.0);
            }
            assert_eq!(rates[1].codes, codes[1]);
        }
        // Without the shifts: the plain kernel for any count.
        let shape = KernelShape {
            ring: DotRing::Gr16,
            words: 1_024,
        };
        let r = with_timer(shape, &[62], None, |t| {
            t.measure(62, 0.001, true, false).unwrap()
        })
        .unwrap();
        assert!(!r.kernel.contains("poly"), "{}", r.kernel);
    }

    /// The polyphase call the timer makes gives the plain kernel's dot products of the 31
    /// rotated rows of each query (Z16, two sides: the harder combination).
    #[test]
    fn the_timed_polyphase_call_gives_the_plain_dot_products() {
        let (words, queries, records) = (1_024usize, 2usize, 9usize);
        let form = Polyphase::new(-15, 15, words).unwrap();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut code = |n: usize| -> Vec<u16> { (0..n).map(|_| rng.random()).collect() };
        let (base_a, base_b) = (code(queries * words), code(queries * words));
        // The rotated rows of each query, as the runtime builds them (`IrisCode::rotate`:
        // row cell `c` of shift `r` is the query's cell `c + r`, cyclically).
        let rotated = |base: &[u16]| -> Vec<u16> {
            let cols = words / 64;
            let mut out = Vec::new();
            for q in base.chunks_exact(words) {
                for r in -15i32..=15 {
                    for row in 0..16 {
                        for c in 0..cols {
                            let from = (c as i32 + r).rem_euclid(cols as i32) as usize;
                            let at = (row * cols + from) * 4;
                            out.extend_from_slice(&q[at..at + 4]);
                        }
                    }
                }
            }
            out
        };
        let (rows_a, rows_b) = (rotated(&base_a), rotated(&base_b));
        let (ga, gb) = (code(records * words), code(records * words));
        let half_rows = form.kernel_rows(queries) as u64;
        let got = jit::with_all_kernels(&[], &[(DotRing::Z16, words as u32, half_rows)], |k| {
            // SAFETY: a two-sided Z16 polyphase kernel, with both sides given.
            let f =
                unsafe { k.get_polyphase(DotRing::Z16, words as u32, half_rows, Isa::Portable) }
                    .unwrap();
            let (qa, qb) = (
                form.query_rows(&rows_a, queries),
                form.query_rows(&rows_b, queries),
            );
            let mut out = vec![0u16; records * queries * 31];
            unsafe {
                jit::call_polyphase(
                    f,
                    &form,
                    queries,
                    (&qa, Some(&qb)),
                    (&ga, Some(&gb)),
                    records,
                    &mut Vec::new(),
                    &mut out,
                )
            };
            out
        })
        .unwrap();
        // The replicated kernel's two sides (eq. 6 with its sides prepared by the runtime):
        // sum of qa * ga - qb * gb, summed plainly.
        for r in 0..records {
            for c in 0..queries * 31 {
                let (a, b) = (&rows_a[c * words..][..words], &rows_b[c * words..][..words]);
                let (x, y) = (&ga[r * words..][..words], &gb[r * words..][..words]);
                let want = (0..words).fold(0u16, |s, i| {
                    s.wrapping_add(a[i].wrapping_mul(x[i]))
                        .wrapping_sub(b[i].wrapping_mul(y[i]))
                });
                assert_eq!(got[r * queries * 31 + c], want, "record {r} code {c}");
            }
        }
    }

    /// A short timing of a small kernel gives a positive rate for the dispatched ISA.
    #[test]
    fn a_short_timing_is_positive() {
        let shape = KernelShape {
            ring: DotRing::Gr16,
            words: 1_024,
        };
        let r = measure(shape, 31, 0.01).unwrap();
        assert!(r.per_cpu_s > 0.0 && r.per_s > 0.0 && r.passes >= 1);
        assert_eq!(r.isa, dispatched_isa().unwrap());
        assert!(r.kernel.contains(r.isa.name()), "{}", r.kernel);
    }
}
