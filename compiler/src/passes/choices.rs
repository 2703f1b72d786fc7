//! What the analysis chose for each comparison, in the form the annotation passes consume.
//!
//! The driver fills [`Choices`] from [`crate::analysis::plan`]; `ring-select` and
//! `variant-select` copy them onto the `irs` comparisons by their `test` number, so the IR
//! printed after each pass shows every choice next to the op it governs.

/// One comparison's choices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TestChoice {
    Fhd {
        /// `plain_mask`, `no_lift`, `const_lift` or `mpc_lift`.
        variant: String,
        /// `rep3`, `fp`, `gr2` or `gr4`.
        sharing: String,
        /// k of the MSB extraction (m of Z_(p 2^m) for `fp` with secret masks).
        ring_bits: u32,
        /// Rings of the code and mask dot products (the mask ring equals `dot_ring` for public
        /// masks, where no mask dot product is computed).
        dot_ring: u32,
        ml_ring: u32,
        /// Secret masks: `a/b ~ 1 - 2r`; public masks: the ratio `r` itself (for the record:
        /// the lowering reads the ratio from the op).
        a: i64,
        b: u64,
        /// m of ConstLift / MPCLift / LiftP (0 when nothing is lifted).
        lift_bits: u32,
        /// Why this ring is enough, and why the variant won.
        justification: String,
    },
    Cosine {
        ring_bits: u32,
        justification: String,
    },
}

/// The choices of every comparison, indexed by the `test` attribute `lower` gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    pub tests: Vec<TestChoice>,
}
