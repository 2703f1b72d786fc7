//! Benchmarks of the runtime's protocol steps, with the three parties as threads of one process.
//!
//! - [`table2`]: the comparison phase of each variant of the paper's Table 2 (Plain Mask,
//!   MPCLift, ConstLift, NoLift, Or Tree), run with the same value-level ops the compiled
//!   programs run, with the paper's figures as reference rows.

pub mod table2;
