//! TRANSITIONAL: the issue-2 program model, kept only while the later stages move to [`super::program`].

//! The typed program: what the user's `.irs` means, independent of how it is computed.
//!
//! This is the contract between the front end (`syntax` + `sema`) and everything after it.

use crate::syntax::Span;
pub use super::program::{ConstDecl, ConstValue, InputRole, MaskKind, Ratio};




/// A declared input: `gallery db: iris<12800> public mask;` or `query q: ... from p0;`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Input {
    pub name: String,
    pub role: InputRole,
    /// Bits per iris code (`l` in the papers); a multiple of 64 (16 rows x columns x 4 bits).
    pub code_bits: u32,
    pub mask: MaskKind,
    #[serde(skip)]
    pub span: Span,
}

/// One thresholded matching decision, per query and gallery record:
/// "some rotation `s` in `rot_lo..=rot_hi` of the query has `fhd(rot(q, s), d) < ratio`".
#[derive(Debug, Clone, serde::Serialize)]
pub struct Decision {
    /// Index into [`Program::inputs`] of the query.
    pub query: usize,
    /// Index into [`Program::inputs`] of the gallery.
    pub gallery: usize,
    /// Rotations of the query, inclusive; `(0, 0)` when the program does not rotate.
    pub rot_lo: i32,
    pub rot_hi: i32,
    /// The match ratio: a pair matches iff `hd < ratio * ml` (strict; `ml = 0` never matches).
    pub ratio: Ratio,
    /// The span of the `fhd(..) < ..` test, for diagnostics and `explain`.
    #[serde(skip)]
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RevealShape {
    /// One bit per query: the OR over all records and rotations.
    AnyBit,
    /// The ids of the matching records: one opened bit per (query, record), as the deployed system does.
    MatchingIds,
}

/// `reveal <value> to <party>;`
#[derive(Debug, Clone, serde::Serialize)]
pub struct Reveal {
    pub decision: Decision,
    pub shape: RevealShape,
    /// The output party, 0..3.
    pub to: usize,
    #[serde(skip)]
    pub span: Span,
}



#[derive(Debug, Clone, serde::Serialize)]
pub struct Program {
    /// The program's name: the file stem.
    pub name: String,
    /// The three computing parties' names, in `--party` order.
    pub parties: [String; 3],
    pub consts: Vec<ConstDecl>,
    pub inputs: Vec<Input>,
    /// At least one.
    pub reveals: Vec<Reveal>,
}
