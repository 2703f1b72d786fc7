//! The numbers the compiler and the runtime must agree on, as enums whose explicit
//! discriminants are the values passed across the C ABI. The compiler emits `X as i32`; the
//! runtime reads them back with `from_i32`, refusing any other value.

/// Defines a `#[repr(i32)]` enum with explicit discriminants, its list of variants and the
/// checked conversion from the ABI's i32.
macro_rules! abi_enum {
    ($(#[$m:meta])* pub enum $E:ident { $($(#[$vm:meta])* $V:ident = $n:literal => $name:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[repr(i32)]
        pub enum $E { $($(#[$vm])* $V = $n),+ }

        impl $E {
            /// Every variant, in discriminant order.
            pub const ALL: [$E; [$($n),+].len()] = [$($E::$V),+];

            /// The variant passed as `v`, if any.
            pub const fn from_i32(v: i32) -> Option<$E> {
                match v {
                    $($n => Some($E::$V),)+
                    _ => None,
                }
            }

            /// The value that crosses the ABI.
            pub const fn abi(self) -> i32 {
                self as i32
            }

            /// The variant's name as the IR and the messages spell it.
            pub const fn name(self) -> &'static str {
                match self {
                    $($E::$V => $name),+
                }
            }

            /// The variant named `s` (as [`Self::name`] spells it).
            pub fn from_name(s: &str) -> Option<$E> {
                Self::ALL.into_iter().find(|v| v.name() == s)
            }
        }
    };
}

abi_enum! {
    /// `role` of `irisc_rt_fss2_main`: which executable of an `fss2` program this is.
    pub enum Fss2Role {
        /// `S_0` or `S_1` (`--party` says which), online.
        Server = 0 => "server",
        /// The dealer: enrollment and CS.Setup, offline.
        Dealer = 1 => "dealer",
        /// The party that supplies the query and receives the decisions.
        Client = 2 => "client",
    }
}

abi_enum! {
    /// `part` of `irisc_rt_load_input` / `irisc_rt_load_earlier` (and of the `mpc.load_*`
    /// ops): which part of an input's records to load.
    pub enum InputPart {
        /// The shared code bits (`Codes`, or Shamir codes).
        Codes = 0 => "codes",
        /// The secret-shared mask bits of an iris code whose masks are secret.
        Masks = 1 => "masks",
        /// The shared elements of an embedding.
        Embedding = 2 => "embedding",
        /// A shared bit (binary shares).
        Bit = 3 => "bit",
        /// The shared conjugate of a query's code bits (each cell's imaginary, odd, entries
        /// negated), dealt by the query's owner next to the code: `mirror(q)` over a Galois-ring
        /// sharing reads it, since a GR share holds a whole cell and a party cannot negate part
        /// of one locally.
        Conjugate = 4 => "conjugate",
    }
}

abi_enum! {
    /// `shape` of `irisc_rt_output` (the `shape` attribute of `mpc.output`).
    pub enum OutputShape {
        /// One opened bit.
        Bit = 0 => "bit",
        /// One opened bit per record; the ids of the records whose bit is set are reported.
        Ids = 1 => "ids",
        /// One opened integer.
        Count = 2 => "count",
    }
}

/// The field of an output object that says whether the query matched: the first ids or bit
/// output to a party (in program order) sets it; a bit output may carry this name itself.
pub const MATCH_FIELD: &str = "match";

/// Fields of an output line that the runtime or `irisc run` write themselves, so no output
/// may be named so: the query's position, its record id, the party that printed it (`irisc
/// run` with several output parties) and the incomplete-run trailer's marker.
pub const RESERVED_OUTPUT_FIELDS: [&str; 4] = ["query", "id", "party", "complete"];

abi_enum! {
    /// `kind` of `irisc_rt_batch_dot`: which dot product a batch runs.
    pub enum BatchDotKind {
        /// Replicated codes: the `masked_dot` kernel (eq. 6).
        Masked = 0 => "masked_dot",
        /// Shamir codes: the `shamir_dot` kernel.
        Shamir = 1 => "shamir_dot",
    }
}

abi_enum! {
    /// An instruction-set variant of a generated kernel; the discriminant is its slot in a
    /// kernel table (`[portable, avx2, avx512, vnni]`, null where a variant is absent).
    pub enum Isa {
        Portable = 0 => "portable",
        Avx2 = 1 => "avx2",
        Avx512 = 2 => "avx512",
        Vnni = 3 => "vnni",
    }
}

/// The number of slots of a kernel table: one per [`Isa`].
pub const ISA_SLOTS: usize = Isa::ALL.len();

impl Isa {
    /// The slot of this variant in a kernel table.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `target-features` of the variant on x86-64: what the compiler enables when it generates
    /// the variant and the runtime checks before it runs it.
    pub const fn x86_features(self) -> &'static str {
        match self {
            Isa::Portable => "",
            Isa::Avx2 => "+avx2",
            Isa::Avx512 => "+avx2,+avx512f,+avx512bw,+avx512vl,+avx512dq",
            Isa::Vnni => "+avx2,+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every enum's discriminants are 0..n in order, and names and values round-trip.
    #[test]
    fn values_round_trip() {
        fn check<E: Copy + PartialEq + std::fmt::Debug>(
            all: &[E],
            abi: impl Fn(E) -> i32,
            from: impl Fn(i32) -> Option<E>,
        ) {
            for (i, &v) in all.iter().enumerate() {
                assert_eq!(abi(v), i as i32);
                assert_eq!(from(i as i32), Some(v));
            }
            assert_eq!(from(all.len() as i32), None);
            assert_eq!(from(-1), None);
        }
        check(&InputPart::ALL, InputPart::abi, InputPart::from_i32);
        check(&OutputShape::ALL, OutputShape::abi, OutputShape::from_i32);
        check(
            &BatchDotKind::ALL,
            BatchDotKind::abi,
            BatchDotKind::from_i32,
        );
        check(&Isa::ALL, Isa::abi, Isa::from_i32);
        for s in OutputShape::ALL {
            assert_eq!(OutputShape::from_name(s.name()), Some(s));
        }
        assert_eq!(Isa::from_name("vnni"), Some(Isa::Vnni));
        assert_eq!(ISA_SLOTS, 4);
    }
}
