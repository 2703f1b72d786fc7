//! The macro that turns the one list of entry points into the `extern "C"` wrappers and the
//! table of the contract.

/// Emits, for each entry point listed, the `#[no_mangle] extern "C"` wrapper and its row of the
/// table `ENTRY_POINTS` ([`crate::contract::EntryPoint`]), so that wrappers and table cannot
/// disagree. Invoked once, in `abi`. Three forms of entry:
///
/// - `schedule fn name(arg: Kind, ...) -> Result { body }`: a frame entry (start, query count,
///   finish); the body gets the C arguments as they are and returns the C result;
/// - `role["op", ...] fn name(arg: Kind, ...) -> Result { body }`: a whole role of a family
///   whose schedule the paper fixes (`fss2`), implementing those ops; the body as for
///   `schedule`;
/// - `mpc["op", ...] fn name(rt, arg: Kind, ...) -> Result = |r| body;` (or
///   `tiling["step"]`): an op entry. The wrapper takes the runtime handle first, converts every
///   argument by its kind (`abi::args`, an error for an out-of-range value), catches panics,
///   runs the closure on the runtime and turns its `Result` into the C result
///   (`abi::results`). Inside the body, `OP` is the op's name in the accounting.
macro_rules! entry_points {
    (@rows [$($rows:tt)*]) => {
        /// Every entry point of the C ABI, in the order listed: the contract the compiler
        /// declares its calls from.
        pub static ENTRY_POINTS: &[$crate::contract::EntryPoint] = &[$($rows)*];
    };
    (@rows [$($rows:tt)*]
        $(#[$m:meta])*
        schedule fn $name:ident ( $($arg:ident : $kind:ident),* $(,)? ) -> $res:ident $body:block
        $($rest:tt)*
    ) => {
        $(#[$m])*
        ///
        /// # Safety
        /// Pointer arguments as described above; the runtime handle must come from
        /// `irisc_rt_start` and is used by one thread until `irisc_rt_finish`.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            $($arg: <$crate::abi::args::$kind as $crate::abi::args::FromC>::C),*
        ) -> <$crate::abi::results::$res as $crate::abi::results::ResultC>::C $body

        $crate::abi::macros::entry_points!(@rows [$($rows)*
            $crate::contract::EntryPoint {
                name: stringify!($name),
                implements: $crate::contract::Implements::Schedule,
                args: &[$($crate::contract::Arg {
                    name: stringify!($arg),
                    kind: $crate::contract::ArgKind::$kind,
                }),*],
                result: $crate::contract::ResultKind::$res,
            },
        ] $($rest)*);
    };
    (@rows [$($rows:tt)*]
        $(#[$m:meta])*
        role [$($op:literal),+] fn $name:ident ( $($arg:ident : $kind:ident),* $(,)? ) -> $res:ident $body:block
        $($rest:tt)*
    ) => {
        $(#[$m])*
        ///
        /// # Safety
        /// Pointer arguments as described above.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            $($arg: <$crate::abi::args::$kind as $crate::abi::args::FromC>::C),*
        ) -> <$crate::abi::results::$res as $crate::abi::results::ResultC>::C $body

        $crate::abi::macros::entry_points!(@rows [$($rows)*
            $crate::contract::EntryPoint {
                name: stringify!($name),
                implements: $crate::contract::Implements::Role(&[$($op),+]),
                args: &[$($crate::contract::Arg {
                    name: stringify!($arg),
                    kind: $crate::contract::ArgKind::$kind,
                }),*],
                result: $crate::contract::ResultKind::$res,
            },
        ] $($rest)*);
    };
    (@rows [$($rows:tt)*]
        $(#[$m:meta])*
        $imp:ident [$($op:literal),+] fn $name:ident ( rt $(, $arg:ident : $kind:ident)* $(,)? )
            -> $res:ident = $body:expr;
        $($rest:tt)*
    ) => {
        $(#[$m])*
        ///
        /// # Safety
        /// Pointer arguments as described above; the runtime handle must come from
        /// `irisc_rt_start` and is used by one thread until `irisc_rt_finish`.
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            rt: *mut $crate::party::Runtime,
            $($arg: <$crate::abi::args::$kind as $crate::abi::args::FromC>::C),*
        ) -> <$crate::abi::results::$res as $crate::abi::results::ResultC>::C {
            #[allow(dead_code)]
            const OP: &str = $crate::abi::macros::implements!($imp [$($op),+]).op_name();
            <$crate::abi::results::$res as $crate::abi::results::Wrap>::wrap(rt, |r| {
                $(let $arg = <$crate::abi::args::$kind as $crate::abi::args::FromC>::from_c($arg)?;)*
                ($body)(r)
            })
        }

        $crate::abi::macros::entry_points!(@rows [$($rows)*
            $crate::contract::EntryPoint {
                name: stringify!($name),
                implements: $crate::abi::macros::implements!($imp [$($op),+]),
                args: &[
                    $crate::contract::Arg { name: "rt", kind: $crate::contract::ArgKind::Runtime },
                    $($crate::contract::Arg {
                        name: stringify!($arg),
                        kind: $crate::contract::ArgKind::$kind,
                    }),*
                ],
                result: $crate::contract::ResultKind::$res,
            },
        ] $($rest)*);
    };
    ($($items:tt)*) => {
        $crate::abi::macros::entry_points!(@rows [] $($items)*);
    };
}
pub(crate) use entry_points;

/// The [`crate::contract::Implements`] of `mpc["a", "b"]` or `tiling["step"]`.
macro_rules! implements {
    (mpc [$($op:literal),+]) => {
        $crate::contract::Implements::Mpc(&[$($op),+])
    };
    (tiling [$op:literal]) => {
        $crate::contract::Implements::Tiling($op)
    };
}
pub(crate) use implements;
