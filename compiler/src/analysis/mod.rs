//! Analyses on the typed program: value ranges, ring selection (Lemma 1 for public masks, Lemma 2
//! and the a/b approximation for secret masks), costs, the circuit model of paper 004 with its
//! triple counts, and the leakage ledger that `irisc explain` prints.

pub mod approx;
pub mod circuit;
pub mod cosine;
pub mod explain;
pub mod kernel_tile;
pub mod lemma2;
pub mod plan;
pub mod range;
pub mod ring;
pub mod schedule;
pub mod sites;
pub mod threshold_placement;
