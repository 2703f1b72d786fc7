//! Analyses on the typed program: value ranges, ring selection, costs, the leakage ledger.

pub mod ring;
