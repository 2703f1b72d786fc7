//! The ops of the schedule, one function per `mpc` dialect op: from a [`Ctx`] (links, PRSS,
//! round counter, how kernels run) and the op's operand values to its result value. The party's
//! executor (`party::executor`) runs them on its slot table; the tests run them over in-memory
//! links.
//!
//! - [`value`]: what a slot holds ([`Value`]); [`shamir_codes`]: Shamir-shared codes;
//! - [`ctx`]: the context and the helpers ops read their operands with;
//! - [`rep3`]: the iris test over replicated codes (rotation, masked dot product, mask
//!   lengths, reshare, threshold, MSB, OR tree, opening);
//! - [`arith`]: arithmetic over Z_2^k (linear combinations, lifts, products, bit injection,
//!   sums, opening integers);
//! - [`logic`]: boolean gates, the multiplexer and AND trees;
//! - [`mask_lengths`](mod@mask_lengths): the public mask lengths, at the dot product's pace;
//!   [`placement`]: which parties compute them when the threshold is placed by record thirds;
//! - [`shamir`]: the Shamir instantiations (dot products, F_p and Z_(p·2^m) comparisons);
//! - [`vector`]: local steps of the cosine test and public constant bits;
//! - [`beaver`]: the reveals' circuit under the `beaver` family (local conversion to XOR
//!   shares, Masked Triples, openings).

pub mod arith;
pub mod beaver;
#[cfg(test)]
mod chains;
pub mod ctx;
pub mod logic;
pub(crate) mod mask_lengths;
pub mod placement;
pub mod rep3;
pub mod shamir;
pub mod shamir_codes;
pub mod value;
pub mod vector;
pub mod xor_rows;

pub use ctx::Ctx;
pub use value::Value;
