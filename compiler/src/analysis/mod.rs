//! Analyses on the typed program: value ranges, ring selection (Lemma 1), costs, and the
//! leakage ledger that `irisc explain` prints.

pub mod approx;
pub mod cost;
pub mod explain;
pub mod lemma2;
pub mod range;
pub mod ring;
