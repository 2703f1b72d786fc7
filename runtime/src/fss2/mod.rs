//! The two-server family `fss2` (paper 002, "privacy-preserving cosine similarity with malicious
//! security"): two non-colluding servers, a dealer that works offline only, and a client whose
//! query is checked against the enrolled templates in two online rounds between the servers.
//!
//! Each building block in its own module, named as the paper names it:
//! - [`sharing`]: optimised additive sharing `<x> = (delta_x, [r_x])`, SS.Share, SS.MUL, SS.IP
//!   (Section 3.1);
//! - [`trunc`]: truncation pairs (Section 3.2);
//! - CondEval (Section 4, Table 3) and the FSS gates under it are in [`crate::fss`];
//! - [`plan`]: the cosine test as two gates (the sign of `<x,y>`, the magnitude by CondEval);
//! - [`auth`]: the malicious variant's authenticated sharings, F_MacVryGen (Fig. 2) and
//!   CondEval.Verify, as building blocks (not yet wired into CS.Eval);
//! - [`cost`]: rounds, bytes and dealer material per query, from the protocol's shape;
//! - [`dealer`]: enrollment and CS.Setup (Protocol 1);
//! - [`eval`]: CS.Eval (Protocol 2) with the robust input of Fig. 3;
//! - [`malicious`]: CSB.Eval* (Section 4.3, Protocols 3 and 4): MACs, `m` trap instances and
//!   the client's check, in-process so far;
//! - [`material`]: the dealer's files, one per server, each authentication consumed once;
//! - [`party`]: the roles as processes (dealer, servers, client).

pub mod auth;
pub mod cost;
pub mod dealer;
pub mod eval;
pub mod malicious;
pub mod material;
pub mod party;
pub mod plan;
pub mod sharing;
pub mod trunc;

#[cfg(test)]
mod malicious_tests;
#[cfg(test)]
mod tests;
