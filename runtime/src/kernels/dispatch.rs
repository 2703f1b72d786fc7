//! Run-time choice among the ISA variants of a generated kernel.
//!
//! The compiler emits every dot-product kernel in several variants (`portable`, `avx2`,
//! `avx512`, `vnni`) in one object file and passes the runtime a table of their addresses,
//! null where a variant was not generated (non-x86 targets, or no such form for the ring). The
//! runtime takes the best variant this CPU runs; `IRISC_ISA=portable|avx2|avx512|vnni` caps the
//! choice (so tests can force each path) and is refused if the CPU lacks that ISA.

use std::sync::OnceLock;

use crate::error::RuntimeError;

/// The environment variable that forces an ISA.
pub const ISA_ENV: &str = "IRISC_ISA";

use super::nest::Nests;
use super::polyphase::Polyphase;
use crate::contract::constants::ISA_SLOTS;
pub use crate::contract::Isa;

/// The table the schedule passes for one kernel: one entry per [`Isa`], null where absent, the
/// code length in words the kernels are specialised to (checked before every call: a kernel
/// run on codes of another length would read out of bounds), and per [`Isa`] a second loop
/// nest of the same kernel, null where the compiler offers none ([`super::nest`]); then per
/// [`Isa`] the polyphase kernel of the ring and length, null where the compiler chose none
/// ([`super::polyphase`]), and the shifts `lo, hi` of the rotated query rows it is for; last
/// the AMX kernel of the ring and length ([`super::amx`]), null where the compiler generated
/// none, and the form of its sums ([`super::amx::Form`]).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct KernelTable {
    pub variants: [*const (); ISA_SLOTS],
    pub words: u64,
    pub alternatives: [*const (); ISA_SLOTS],
    pub polyphase: [*const (); ISA_SLOTS],
    pub rotations: [i64; 2],
    pub amx: *const (),
    pub amx_form: i64,
}

/// What the runtime knows of an ISA beyond the contract: whether this CPU runs it.
impl Isa {
    /// Whether this CPU runs the variant: the same features the compiler enables for it.
    pub fn supported(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let avx512 = || {
                has!("avx2")
                    && has!("avx512f")
                    && has!("avx512bw")
                    && has!("avx512vl")
                    && has!("avx512dq")
            };
            match self {
                Isa::Portable => true,
                Isa::Avx2 => has!("avx2"),
                Isa::Avx512 => avx512(),
                Isa::Vnni => avx512() && has!("avx512vnni"),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            self == Isa::Portable
        }
    }

    /// The best ISA this CPU supports.
    pub fn best() -> Isa {
        Isa::ALL
            .iter()
            .copied()
            .rev()
            .find(|i| i.supported())
            .unwrap_or(Isa::Portable)
    }

    /// The ISA kernels run with: `IRISC_ISA` if set (an error if unknown or unsupported by this
    /// CPU), else [`Isa::best`]. Read once per process.
    pub fn selected() -> Result<Isa, RuntimeError> {
        static SEL: OnceLock<Result<Isa, String>> = OnceLock::new();
        SEL.get_or_init(|| Isa::from_env(std::env::var(ISA_ENV).ok().as_deref()))
            .clone()
            .map_err(RuntimeError::Usage)
    }

    /// [`Isa::selected`] for a given value of `IRISC_ISA` (None: unset or empty).
    pub fn from_env(v: Option<&str>) -> Result<Isa, String> {
        match v.map(str::trim).filter(|s| !s.is_empty()) {
            None => Ok(Isa::best()),
            Some(s) => {
                let isa = Isa::from_name(s).ok_or_else(|| {
                    format!("{ISA_ENV}={s}: unknown ISA (portable, avx2, avx512 or vnni)")
                })?;
                if isa.supported() {
                    Ok(isa)
                } else {
                    Err(format!(
                        "{ISA_ENV}={s}: this CPU does not support {s} (best: {})",
                        Isa::best().name()
                    ))
                }
            }
        }
    }
}

/// Whether the AMX kernels run in this process: `IRISC_AMX` lets them and the CPU and OS run
/// AMX ([`super::amx::allowed`]), and no `IRISC_ISA` caps the choice (a forced vector ISA runs
/// that ISA's kernels, so tests can force each path).
pub fn amx_usable() -> Result<bool, RuntimeError> {
    let capped = std::env::var(ISA_ENV).is_ok_and(|v| !v.trim().is_empty());
    Ok(super::amx::allowed()? && !capped)
}

/// The variant of `table` to run under `cap`: the best non-null entry at or below `cap` (a
/// ring without a VNNI form runs its AVX-512 one). `None` if every entry up to `cap` is null.
pub fn pick(table: &KernelTable, cap: Isa) -> Option<(Isa, *const ())> {
    let v = &table.variants;
    Isa::ALL[..=cap as usize]
        .iter()
        .rev()
        .find(|&&i| !v[i as usize].is_null())
        .map(|&i| (i, v[i as usize]))
}

/// [`pick`] under [`Isa::selected`], from the table pointer the schedule passes, for codes of
/// `words` words: the variant's nests (the table's alternative of that variant as the second).
///
/// # Safety
/// `table` must be null or point to a [`KernelTable`].
pub unsafe fn pick_nests_from(
    table: *const KernelTable,
    words: usize,
) -> Result<(Isa, Nests), RuntimeError> {
    // SAFETY: the caller's contract.
    let (isa, first) = unsafe { pick_from(table, words) }?;
    // SAFETY: non-null (pick_from refuses a null table).
    let (second, polyphase, [lo, hi], amx, amx_form) = unsafe {
        (
            (*table).alternatives[isa as usize],
            (*table).polyphase[isa as usize],
            (*table).rotations,
            (*table).amx,
            (*table).amx_form,
        )
    };
    // A bad IRISC_KERNEL_NEST is refused here, whether or not a call then runs the nests.
    super::nest::NestPolicy::selected()?;
    let mut nests = Nests::of_table(table as usize, first, second);
    // The polyphase variant of the same ISA, where the compiler generated one for these shifts.
    let form = || Polyphase::new(i32::try_from(lo).ok()?, i32::try_from(hi).ok()?, words);
    if let (false, Some(form), true) = (polyphase.is_null(), form(), super::polyphase::enabled()?) {
        nests.polyphase = Some((polyphase, form));
    }
    // The AMX kernel, where the compiler generated one and this process may run it (a bad
    // IRISC_AMX is refused here too).
    let amx_usable = amx_usable()?;
    let form = super::amx::Form::from_abi(amx_form)
        .ok_or_else(|| RuntimeError::Schedule(format!("unknown AMX kernel form {amx_form}")))?;
    if !amx.is_null() && amx_usable && form.applies(words) {
        nests.amx = Some((amx, form));
    }
    Ok((isa, nests))
}

/// [`pick`] under [`Isa::selected`], from the table pointer the schedule passes, for codes of
/// `words` words.
///
/// # Safety
/// `table` must be null or point to a [`KernelTable`].
pub unsafe fn pick_from(
    table: *const KernelTable,
    words: usize,
) -> Result<(Isa, *const ()), RuntimeError> {
    // SAFETY: the caller's contract.
    let t = unsafe { table.as_ref() }
        .ok_or_else(|| RuntimeError::Schedule("null kernel table".into()))?;
    if t.words != words as u64 {
        return Err(RuntimeError::Schedule(format!(
            "kernel for codes of {} words run on codes of {words}",
            t.words
        )));
    }
    let cap = Isa::selected()?;
    pick(t, cap).ok_or_else(|| {
        RuntimeError::Schedule(format!("no kernel variant at or below {}", cap.name()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_override_is_checked() {
        assert_eq!(Isa::from_env(None), Ok(Isa::best()));
        assert_eq!(Isa::from_env(Some("")), Ok(Isa::best()));
        assert_eq!(Isa::from_env(Some("portable")), Ok(Isa::Portable));
        assert!(Isa::from_env(Some("sse9")).unwrap_err().contains("unknown"));
        for i in Isa::ALL {
            let r = Isa::from_env(Some(i.name()));
            assert_eq!(r.is_ok(), i.supported(), "{i:?}: {r:?}");
        }
    }

    #[test]
    fn pick_falls_back_to_the_best_present_variant() {
        static A: u8 = 0;
        static C: u8 = 0;
        let (a, c) = (&A as *const u8 as *const (), &C as *const u8 as *const ());
        let null = std::ptr::null();
        let t = KernelTable {
            variants: [a, null, c, null],
            words: 7,
            alternatives: [null, null, a, null],
            polyphase: [null; 4],
            rotations: [0, 0],
            amx: std::ptr::null(),
            amx_form: 0,
        };
        assert_eq!(pick(&t, Isa::Vnni), Some((Isa::Avx512, c)));
        assert_eq!(pick(&t, Isa::Avx2), Some((Isa::Portable, a)));
        let empty = KernelTable {
            variants: [null; 4],
            words: 7,
            alternatives: [null; 4],
            polyphase: [null; 4],
            rotations: [0, 0],
            amx: std::ptr::null(),
            amx_form: 0,
        };
        assert_eq!(pick(&empty, Isa::Vnni), None);
        // SAFETY: a valid table.
        assert!(unsafe { pick_from(&t, 8) }.is_err());
        // The alternative is the picked variant's own, not another variant's.
        if Isa::selected().is_ok_and(|i| i as usize >= Isa::Avx512 as usize) {
            // SAFETY: a valid table.
            let (isa, nests) = unsafe { pick_nests_from(&t, 7) }.unwrap();
            assert_eq!((isa, nests.first, nests.second), (Isa::Avx512, c, Some(a)));
        }
        // SAFETY: a valid table.
        let (_, portable) = unsafe {
            pick_nests_from(
                &KernelTable {
                    variants: [a, null, null, null],
                    ..t
                },
                7,
            )
        }
        .unwrap();
        assert_eq!((portable.first, portable.second), (a, None));
    }
}
