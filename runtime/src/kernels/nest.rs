//! A kernel's two loop nests and the choice between them, measured on this machine.
//!
//! Whether a dot kernel's K chunks and record panels pay depends on the core and on the codes per
//! call, and neither is known when the executable is built. At l = 12 800 with the gallery
//! streamed from memory, GR16 with 31 codes per call: a Zen 5 core (two `vpdpwssd zmm` per
//! cycle) ran 9.5 M dot products/s unchunked and 11.1 M/s in K chunks; a Zen 4 core (one)
//! 7.9 M/s unchunked and 7.1 M/s in K chunks with record panels. And a batch executable built
//! for 8 queries per call runs a single query's 31 codes through the tile chosen for 248.
//!
//! The register tile likewise: unchunked, 6 x 4 ran 5-6 % faster than 4 x 6 on that Zen 4 core,
//! where the Zen 5 one measured the reverse. So the compiler may give a kernel table a second
//! nest: a register tile without K chunks or record panels (`nest_alternative = "unchunked"` and
//! `alternative_tile` on the IR's dot op, the table's `alternatives`). The first call of at least [`min_records`] records for a given number of
//! codes runs both nests on alternating slices of its own records ([`MEASURE_ROUNDS`] each,
//! in the order first, second, second, first, ... so that a drift of the machine's pace favours
//! neither), keeps each one's fastest slice, and every later call with that many codes runs
//! the faster. The second nest must be faster by [`MARGIN`] to be taken: the compiler's choice
//! stands on a tie. Both nests compute the same words, so the slices measured are the call's
//! own results, not extra work.
//!
//! `IRISC_KERNEL_NEST=first|second` runs one nest without measuring (tests run both against
//! the reference; benches compare them); `measure` or unset measures.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

use crate::error::RuntimeError;

/// The environment variable that forces a nest.
pub const NEST_ENV: &str = "IRISC_KERNEL_NEST";
/// Slices each nest runs while measuring.
pub const MEASURE_ROUNDS: usize = 6;
/// How much faster (fraction of the first nest's time) the second nest must be to be taken.
pub const MARGIN: f64 = 0.01;
/// Dot products per measured slice, about a millisecond's work: long against the timer and a
/// slice's cold start, short against the call.
const SLICE_DOTS: usize = 8192;
/// Records of a slice are a multiple of this: the widest record panel a kernel takes (384 KiB
/// of 4 KiB chunk rows), so a slice runs whole panels as a long call does.
const SLICE_RECORDS_STEP: usize = 96;

/// Which of a table's nests runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Nest {
    /// The compiler's nest (the table's `variants`).
    First,
    /// The table's alternative (`alternatives`).
    Second,
}

/// What `IRISC_KERNEL_NEST` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NestPolicy {
    Measure,
    Force(Nest),
}

impl NestPolicy {
    /// The policy for a value of `IRISC_KERNEL_NEST` (None: unset or empty).
    pub fn from_env(v: Option<&str>) -> Result<NestPolicy, String> {
        match v.map(str::trim).filter(|s| !s.is_empty()) {
            None | Some("measure") => Ok(NestPolicy::Measure),
            Some("first") => Ok(NestPolicy::Force(Nest::First)),
            Some("second") => Ok(NestPolicy::Force(Nest::Second)),
            Some(other) => Err(format!(
                "{NEST_ENV}={other}: expected first, second or measure"
            )),
        }
    }

    /// The policy of this process, read once.
    pub fn selected() -> Result<NestPolicy, RuntimeError> {
        static SEL: OnceLock<Result<NestPolicy, String>> = OnceLock::new();
        SEL.get_or_init(|| NestPolicy::from_env(std::env::var(NEST_ENV).ok().as_deref()))
            .clone()
            .map_err(RuntimeError::Usage)
    }
}

/// A measurement: each nest's fastest slice, in nanoseconds per dot product.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Measured {
    /// The kernel (its table's address in this process: tells tables apart, nothing more).
    pub table: String,
    /// Codes per call.
    pub codes: usize,
    pub first_ns_per_dot: f64,
    pub second_ns_per_dot: f64,
    pub chosen: Nest,
}

/// The state of one (table, codes per call) choice.
const UNMEASURED: u8 = 0;
const MEASURING: u8 = 1;
const FIRST: u8 = 2;
const SECOND: u8 = 3;

struct Choice {
    state: AtomicU8,
    measured: Mutex<Option<Measured>>,
}

/// Every choice of this process, by (table address, codes per call). Tables are constants of
/// the executable and the code counts a program's batches, so the map stays small; its
/// entries live as long as the process.
fn choices() -> &'static Mutex<HashMap<(usize, usize), &'static Choice>> {
    static CHOICES: OnceLock<Mutex<HashMap<(usize, usize), &'static Choice>>> = OnceLock::new();
    CHOICES.get_or_init(Default::default)
}

fn choice(key: (usize, usize)) -> &'static Choice {
    let mut map = choices().lock().unwrap_or_else(|e| e.into_inner());
    map.entry(key).or_insert_with(|| {
        Box::leak(Box::new(Choice {
            state: AtomicU8::new(UNMEASURED),
            measured: Mutex::new(None),
        }))
    })
}

/// Every measurement made so far in this process (for `--stats`).
pub fn measurements() -> Vec<Measured> {
    let map = choices().lock().unwrap_or_else(|e| e.into_inner());
    let mut all: Vec<Measured> = map
        .values()
        .filter_map(|c| c.measured.lock().ok().and_then(|m| m.clone()))
        .collect();
    all.sort_by(|a, b| (&a.table, a.codes).cmp(&(&b.table, b.codes)));
    all
}

/// Records per measured slice for calls of `codes` codes.
pub fn slice_records(codes: usize) -> usize {
    SLICE_DOTS
        .div_ceil(codes.max(1))
        .max(SLICE_RECORDS_STEP)
        .next_multiple_of(SLICE_RECORDS_STEP)
}

/// The fewest records a call needs to be measured: the warm-up slice and the measured ones,
/// and as much again after them.
pub fn min_records(codes: usize) -> usize {
    2 * (1 + 2 * MEASURE_ROUNDS) * slice_records(codes)
}

/// The nests of one kernel variant: the compiler's (`first`) and, where the table offers one,
/// an alternative (`second`), as type-erased addresses of generated code.
#[derive(Debug, Clone, Copy)]
pub struct Nests {
    pub first: *const (),
    pub second: Option<*const ()>,
    /// The polyphase kernel of the same ISA and the shifts it is for
    /// ([`super::polyphase`]): run instead of the nests where the codes are those rotations.
    pub polyphase: Option<(*const (), super::polyphase::Polyphase)>,
    /// The AMX kernel of the ring and length ([`super::amx`]), where this process runs it: run
    /// instead of the nests (and of the polyphase kernel) on whole blocks of records.
    pub amx: Option<(*const (), super::amx::Form)>,
    /// The table the nests came from (the measurement's key); null for a single kernel.
    table: usize,
}

// SAFETY: the pointers are addresses of generated machine code, immutable and without thread
// affinity.
unsafe impl Send for Nests {}
unsafe impl Sync for Nests {}

impl Nests {
    /// One nest, nothing to choose.
    pub fn single(kernel: *const ()) -> Nests {
        Nests {
            first: kernel,
            second: None,
            polyphase: None,
            amx: None,
            table: 0,
        }
    }

    /// The nests of a table's variant (`second` null: none).
    pub fn of_table(table: usize, first: *const (), second: *const ()) -> Nests {
        Nests {
            first,
            second: (!second.is_null() && second != first).then_some(second),
            polyphase: None,
            amx: None,
            table,
        }
    }

    fn kernel(&self, nest: Nest) -> *const () {
        match nest {
            Nest::First => self.first,
            Nest::Second => self.second.unwrap_or(self.first),
        }
    }

    /// Runs `call(kernel, records)` over records `0..n` of a call of `codes` codes with the nest
    /// this process runs for them: the forced one, the measured one, or (the first large call
    /// for this many codes, on the first thread to reach it) both, measured on alternating
    /// slices of `0..n`, then the faster on the rest. `call` must compute the same words with
    /// either kernel; each record is passed to exactly one call.
    pub fn run(
        &self,
        codes: usize,
        n: usize,
        call: &mut dyn FnMut(*const (), Range<usize>),
    ) -> Result<(), RuntimeError> {
        if self.second.is_none() {
            call(self.first, 0..n);
            return Ok(());
        }
        self.run_with(NestPolicy::selected()?, codes, n, call);
        Ok(())
    }

    /// [`Nests::run`] under `policy`.
    fn run_with(
        &self,
        policy: NestPolicy,
        codes: usize,
        n: usize,
        call: &mut dyn FnMut(*const (), Range<usize>),
    ) {
        if self.second.is_none() {
            call(self.first, 0..n);
            return;
        }
        if let NestPolicy::Force(nest) = policy {
            call(self.kernel(nest), 0..n);
            return;
        }
        let c = choice((self.table, codes));
        match c.state.load(Ordering::Acquire) {
            FIRST => {
                call(self.first, 0..n);
                return;
            }
            SECOND => {
                call(self.kernel(Nest::Second), 0..n);
                return;
            }
            _ => {}
        }
        let claimed = n >= min_records(codes)
            && c.state
                .compare_exchange(UNMEASURED, MEASURING, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
        if !claimed {
            // Too short to measure, or another thread is measuring: the compiler's nest.
            call(self.first, 0..n);
            return;
        }
        let (first_ns, second_ns, done) = self.measure(codes, call);
        let chosen = if second_ns < first_ns * (1.0 - MARGIN) {
            Nest::Second
        } else {
            Nest::First
        };
        *c.measured.lock().unwrap_or_else(|e| e.into_inner()) = Some(Measured {
            table: format!("{:#x}", self.table),
            codes,
            first_ns_per_dot: first_ns,
            second_ns_per_dot: second_ns,
            chosen,
        });
        c.state.store(
            if chosen == Nest::Second {
                SECOND
            } else {
                FIRST
            },
            Ordering::Release,
        );
        tracing::debug!(
            codes,
            first_ns_per_dot = first_ns,
            second_ns_per_dot = second_ns,
            ?chosen,
            "kernel loop nest measured"
        );
        call(self.kernel(chosen), done..n);
    }

    /// Runs the measuring slices from record 0: returns each nest's time in ns per dot
    /// product (the median of its slices) and the first record not yet computed.
    fn measure(
        &self,
        codes: usize,
        call: &mut dyn FnMut(*const (), Range<usize>),
    ) -> (f64, f64, usize) {
        let s = slice_records(codes);
        // A slice of the first nest, not counted: the first touches of the call (its output,
        // the code rows) would otherwise fall on whichever nest runs first.
        call(self.first, 0..s);
        let mut at = s;
        let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for nest in MEASURE_ORDER {
            let (wall, cpu) = (Instant::now(), crate::sys::thread_cpu_time());
            call(self.kernel(nest), at..at + s);
            let spent = match (cpu, crate::sys::thread_cpu_time()) {
                (Some(a), Some(b)) => b.saturating_sub(a),
                _ => wall.elapsed(),
            };
            times[nest as usize].push(spent.as_nanos() as f64 / (s * codes.max(1)) as f64);
            at += s;
        }
        let [first, second] = times.map(|mut t| median(&mut t));
        (first, second, at)
    }
}

/// The slices of a measurement, in order: each nest's mean position is the same, so a steady
/// drift of the pace (caches and pages warming up, the machine's load changing) cancels out
/// of the comparison.
pub const MEASURE_ORDER: [Nest; 2 * MEASURE_ROUNDS] = {
    use Nest::{First as A, Second as B};
    [A, B, B, A, B, A, A, B, A, B, B, A]
};

/// The median of `t` (the mean of the middle two for an even count): one slice slowed by
/// something else (a page fault storm, a neighbour flushing the shared cache) moves it little.
fn median(t: &mut [f64]) -> f64 {
    t.sort_by(f64::total_cmp);
    match t.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => t[n / 2],
        n => (t[n / 2 - 1] + t[n / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_is_read_and_checked() {
        assert_eq!(NestPolicy::from_env(None), Ok(NestPolicy::Measure));
        assert_eq!(NestPolicy::from_env(Some(" ")), Ok(NestPolicy::Measure));
        assert_eq!(
            NestPolicy::from_env(Some("measure")),
            Ok(NestPolicy::Measure)
        );
        assert_eq!(
            NestPolicy::from_env(Some("second")),
            Ok(NestPolicy::Force(Nest::Second))
        );
        let e = NestPolicy::from_env(Some("fast")).unwrap_err();
        assert!(e.contains("first, second or measure"), "{e}");
    }

    #[test]
    fn slices_are_whole_panels_and_about_a_millisecond() {
        assert_eq!(slice_records(31), 288);
        assert_eq!(slice_records(248), 96);
        assert_eq!(slice_records(1), 8256);
        assert_eq!(slice_records(0), slice_records(1));
        assert_eq!(min_records(31), 26 * 288);
        let firsts = MEASURE_ORDER.iter().filter(|&&n| n == Nest::First).count();
        assert_eq!(firsts, MEASURE_ROUNDS);
        let mean = |nest| {
            let at: Vec<usize> = (0..MEASURE_ORDER.len())
                .filter(|&i| MEASURE_ORDER[i] == nest)
                .collect();
            at.iter().sum::<usize>() as f64 / at.len() as f64
        };
        assert_eq!(
            mean(Nest::First),
            mean(Nest::Second),
            "a steady drift cancels"
        );
    }

    /// Two stand-in "kernels" that record which records they were given: every record is
    /// computed exactly once, by whichever nest ran it; the slower stand-in loses the
    /// measurement and later calls with that many codes run the other without measuring.
    #[test]
    fn a_measured_call_covers_every_record_once_and_keeps_the_faster_nest() {
        static SLOW: u8 = 0;
        static FAST: u8 = 0;
        let slow = &SLOW as *const u8 as *const ();
        let fast = &FAST as *const u8 as *const ();
        // A table key no generated table has (tests share the process-wide map).
        let nests = Nests::of_table(0x5eed_0001, slow, fast);
        let codes = 31;
        let n = min_records(codes) + 77;
        let mut seen = vec![0u8; n];
        let mut calls = Vec::new();
        nests.run_with(NestPolicy::Measure, codes, n, &mut |k, r| {
            if k == slow {
                // Slower per record than the fast stand-in, by far more than the margin, in
                // CPU time as in wall time (a busy wait, not a sleep).
                let t = Instant::now();
                while t.elapsed() < std::time::Duration::from_micros(300) {
                    std::hint::spin_loop();
                }
            }
            for i in r.clone() {
                seen[i] += 1;
            }
            calls.push((k, r));
        });
        assert!(seen.iter().all(|&s| s == 1), "records computed once each");
        assert_eq!(calls.len(), 1 + 2 * MEASURE_ROUNDS + 1, "{calls:?}");
        assert_eq!(
            calls[0].0, slow,
            "the warm-up slice runs the compiler's nest"
        );
        assert_eq!(
            calls.last().unwrap().0,
            fast,
            "the rest runs the faster nest"
        );
        let m = measurements()
            .into_iter()
            .find(|m| m.table == "0x5eed0001")
            .expect("recorded");
        assert_eq!((m.codes, m.chosen), (codes, Nest::Second));
        assert!(m.second_ns_per_dot < m.first_ns_per_dot);
        // Decided: one call, the faster nest, whatever the length.
        let mut again = Vec::new();
        nests.run_with(NestPolicy::Measure, codes, 5, &mut |k, r| {
            again.push((k, r))
        });
        assert_eq!(again, vec![(fast, 0..5)]);
        // Another code count is measured on its own: a short call runs the compiler's nest.
        let mut other = Vec::new();
        nests.run_with(NestPolicy::Measure, 62, 5, &mut |k, r| other.push((k, r)));
        assert_eq!(other, vec![(slow, 0..5)]);
    }

    #[test]
    fn a_forced_nest_runs_whole_calls_without_measuring() {
        static A: u8 = 0;
        static B: u8 = 0;
        let (a, b) = (&A as *const u8 as *const (), &B as *const u8 as *const ());
        let nests = Nests::of_table(0x5eed_0004, a, b);
        for (nest, want) in [(Nest::First, a), (Nest::Second, b)] {
            let mut calls = Vec::new();
            nests.run_with(NestPolicy::Force(nest), 31, 100_000, &mut |k, r| {
                calls.push((k, r))
            });
            assert_eq!(calls, vec![(want, 0..100_000)]);
        }
        assert!(!measurements().iter().any(|m| m.table == "0x5eed0004"));
    }

    #[test]
    fn without_an_alternative_nothing_is_measured() {
        static ONLY: u8 = 0;
        let only = &ONLY as *const u8 as *const ();
        for nests in [
            Nests::single(only),
            Nests::of_table(0x5eed_0002, only, std::ptr::null()),
            Nests::of_table(0x5eed_0003, only, only),
        ] {
            let mut calls = Vec::new();
            nests.run_with(NestPolicy::Measure, 31, 100_000, &mut |k, r| {
                calls.push((k, r))
            });
            assert_eq!(calls, vec![(only, 0..100_000)]);
        }
        assert!(!measurements().iter().any(|m| m.table == "0x5eed0002"));
    }
}
