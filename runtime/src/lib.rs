//! The irisc three-party runtime.
//!
//! Every executable that `irisc build` produces links this library. The generated code (the party
//! schedule and the compute kernels) calls the `extern "C"` entry points in [`abi`]; those drive
//! the protocols in [`protocol`] over the authenticated links of [`net`].
//!
//! Layout, one concept per module:
//! - [`ring`]: arithmetic in Z_2^k stored in u16/u32/u64;
//! - [`share`]: replicated (rep3) arithmetic shares and bit-sliced binary shares;
//! - [`rand`]: pairwise PRF seeds and the correlated randomness derived from them (PRSS);
//! - [`net`]: `parties.toml`, mutually authenticated TLS links, the [`net::Transport`] trait;
//! - [`protocol`]: one protocol operation per module, named as in the papers;
//! - [`beaver`]: the dishonest-majority family of Masked Triples (paper 004): boolean circuits
//!   with secret conditionals on Beaver triples, their preprocessing and its store;
//! - [`ot`]: two-party oblivious transfer (base OT and IKNP extension) for the dishonest-majority triples;
//! - [`kernels`]: dispatch among the generated kernels' ISA variants, running them over threads,
//!   and their portable reference;
//! - [`gpu`]: the CUDA path (cargo feature `cuda`): the program's PTX kernels on the party's
//!   GPU, the gallery resident there, and the host description of what they compute;
//! - [`io`]: share files and the plaintext NDJSON iris-code format;
//! - [`store`]: a party's durable, memory-mapped gallery store it scans and appends to;
//! - [`iris`]: the plaintext model (bit layout, rotation, Algorithm 1), the reference for tests;
//! - [`manifest`]: what the compiler embeds in an executable about its program;
//! - [`ops`]: the ops of the schedule, each one function over a context and its operand values;
//! - [`party`]: one party's run: arguments, inputs, links, the slot table and the executor,
//!   outputs, accounting, the tiled scan;
//! - [`contract`]: the compiler–runtime contract (entry points, shared constants), defined once;
//! - [`abi`]: the C ABI the generated code calls, generated from the contract;
//! - [`log`]: how a party's lines reach stderr (text, or JSON objects for a log collector);
//! - [`sys`]: process settings for the hot loops (allocator);
//! - [`vocab`]: the words both crates use (sharing, variant, protocol, input role, kind and mask).

/// Writes a line to stderr in the party's log format ([`log`]), ignoring failure: a party's
/// progress and error lines must never stop it (`eprintln!` panics when stderr is a closed pipe).
macro_rules! say {
    ($($arg:tt)*) => {{
        $crate::log::line(format_args!($($arg)*));
    }};
}
pub(crate) use say;

/// Large blocks on cache lines, for the kernels' loads ([`sys::LineAligned`]).
#[global_allocator]
static ALLOCATOR: sys::LineAligned = sys::LineAligned;

pub mod abi;
pub mod beaver;
pub mod contract;
pub mod dealer;
pub mod error;
pub mod fss;
pub mod fss2;
pub mod gpu;
pub mod io;
pub mod iris;
pub mod kernels;
pub mod log;
pub mod manifest;
pub mod net;
pub mod ops;
pub mod ot;
pub mod party;
pub mod protocol;
pub mod rand;
pub mod ring;
pub mod serve;
pub mod share;
pub mod store;
pub mod sys;
pub mod vocab;
