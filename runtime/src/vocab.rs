//! The words both crates use: how inputs are shared ([`Sharing`]), how an fhd comparison is
//! computed ([`Variant`]), the protocol family of a program ([`Protocol`]), and what an input is
//! ([`InputRole`], [`InputKind`], [`InputMask`]).
//!
//! Each is defined here once; the compiler (plan, passes, typed `irs` attributes, manifest), the
//! runtime (manifest, share files, stores, the party's checks) and the bench crate import them
//! from this module. Their spellings are fixed: [`name`](Sharing::name) is the flag and `irs`
//! attribute spelling, and the serde names are what the manifest JSON and
//! `irisc explain --json` contain, so existing executables, share files and stores keep loading.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How iris inputs are secret-shared (`--sharing`): replicated over Z_2^k, or degree-1 Shamir
/// over F_p (p = 2^16 - 17 = 65519) or the Galois ring GR(2^16, d), d = 2 or 4 (the Large-Scale
/// MPC paper, Section 4.3 for public masks and 5.1 for secret ones; the Galois ring as in
/// paper 003, Section 4.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sharing {
    /// Replicated sharing over Z_2^k (ABY3).
    Rep3,
    /// Shamir sharing mod p = 2^16 - 17.
    Fp,
    /// Shamir sharing over GR(2^16, 2).
    Gr2,
    /// Shamir sharing over GR(2^16, 4).
    Gr4,
}

impl Sharing {
    /// Every sharing, in the order the plan breaks cost ties (rep3 first, F_p last).
    pub const ALL: [Sharing; 4] = [Sharing::Rep3, Sharing::Gr2, Sharing::Gr4, Sharing::Fp];

    /// The flag spelling (also the manifest's and the `#irs.sharing` attribute's).
    pub fn name(self) -> &'static str {
        match self {
            Sharing::Rep3 => "rep3",
            Sharing::Fp => "fp",
            Sharing::Gr2 => "gr2",
            Sharing::Gr4 => "gr4",
        }
    }

    pub fn parse(s: &str) -> Option<Sharing> {
        Sharing::ALL.into_iter().find(|v| v.name() == s)
    }

    /// Shamir (GR or F_p).
    pub fn is_shamir(self) -> bool {
        self != Sharing::Rep3
    }
}

/// How an fhd comparison is computed (`--variant`; Tables 2–3 of the Large-Scale MPC paper).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Public masks: `MSB(T - dot)` with the public threshold `T = floor(f*ml)` (Section 4).
    PlainMask,
    /// Both dot products in 16 bits, `ml` lifted by Algorithm 14/15, `dot` by ConstLift.
    MpcLift,
    /// `ml` computed in the comparison ring, `dot` in 16 bits and lifted for free (Alg. 13).
    ConstLift,
    /// Both dot products computed in the comparison ring, small `a, b` (`b < 2^16`).
    NoLift,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::PlainMask,
        Variant::MpcLift,
        Variant::ConstLift,
        Variant::NoLift,
    ];

    /// The flag spelling (also the `#irs.variant` attribute's and `explain --json`'s).
    pub fn name(self) -> &'static str {
        match self {
            Variant::PlainMask => "plain-mask",
            Variant::MpcLift => "mpc-lift",
            Variant::ConstLift => "const-lift",
            Variant::NoLift => "no-lift",
        }
    }

    pub fn parse(s: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == s)
    }
}

/// What the MSB of an fhd comparison starts from (`#irs.msb_input` on `irs.fhd_lt`,
/// `--msb-input`): the dot products' additive shares, or replicated shares after a reshare.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MsbInput {
    /// Reshare (Appendix C), then BitExtract (Algorithm 10) on replicated shares: what the
    /// lifting variants and the `beaver` family need, and what a GPU runs.
    Replicated,
    /// AdditiveMSB straight from the additive shares: two private binary inputs and one
    /// adder, no reshare (plain-mask comparisons in Z_2^k under `rep3`).
    Additive,
}

impl MsbInput {
    pub const ALL: [MsbInput; 2] = [MsbInput::Replicated, MsbInput::Additive];

    /// The spelling of the `#irs.msb_input` attribute and of `--msb-input`.
    pub fn name(self) -> &'static str {
        match self {
            MsbInput::Replicated => "replicated",
            MsbInput::Additive => "additive",
        }
    }

    pub fn parse(s: &str) -> Option<MsbInput> {
        MsbInput::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// Where the public threshold of a plain-mask comparison enters its shares, and so which
/// parties need the public mask lengths it is computed from (`threshold_by` on
/// `mpc.sub_threshold`/`mpc.sub_threshold_p`, `computed_by` on the mask-length ops, the ABI's
/// `placement` argument by number). Only the parties holding the share component that adds the
/// threshold read a mask length's value; the others negate their shares whatever it is, so
/// the mask lengths need not be computed there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThresholdPlacement {
    /// Component 0 adds the threshold to every pair (0, or the attribute absent), and every
    /// party computes every mask length.
    Component0 = 0,
    /// Each call's records are cut into three ranges, the c-th `c·n/3 .. (c+1)·n/3`;
    /// component c adds the threshold on range c (1). The mask lengths of range c are computed
    /// only by the parties holding component c: party c for additive shares, parties c and
    /// c + 1 for replicated ones (`holders`), so the three parties share the work.
    RecordThirds = 1,
}

impl ThresholdPlacement {
    pub const ALL: [ThresholdPlacement; 2] = [
        ThresholdPlacement::Component0,
        ThresholdPlacement::RecordThirds,
    ];

    /// The spelling of the attributes and of `--threshold-placement`.
    pub fn name(self) -> &'static str {
        match self {
            ThresholdPlacement::Component0 => "component0",
            ThresholdPlacement::RecordThirds => "record_thirds",
        }
    }

    pub fn parse(s: &str) -> Option<ThresholdPlacement> {
        ThresholdPlacement::ALL.into_iter().find(|p| p.name() == s)
    }

    pub fn from_i32(v: i32) -> Option<ThresholdPlacement> {
        ThresholdPlacement::ALL.into_iter().find(|p| *p as i32 == v)
    }
}

/// Record range c of three (`c·records/3 .. (c+1)·records/3`): under
/// [`ThresholdPlacement::RecordThirds`], where component c adds the threshold.
pub fn record_third(c: usize, records: usize) -> std::ops::Range<usize> {
    c * records / 3..(c + 1) * records / 3
}

/// Whether `party` holds share component `c` when each component is held by `holders`
/// consecutive parties from party c (1: additive shares; 2: replicated, party c as its own
/// component and party c + 1 as its previous one).
pub fn holds_component(party: usize, c: usize, holders: usize) -> bool {
    (party + 3 - c % 3) % 3 < holders
}

/// What a rotation mirrors first (`mpc.rotate`'s `mirror` attribute, and the ABI's `mirror`
/// argument, by number): the mirror image that a mirror-attack check (`mirror(q)`) compares.
/// Both reverse each row's columns; only [`Mirror::Codes`] changes the entries' signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mirror {
    /// No mirror (0, or the attribute absent).
    None = 0,
    /// The mirror image of a code's masked bits (1): each cell's imaginary (odd) entries are
    /// negated, since mirroring flips those code bits and a flipped valid bit's masked bit is
    /// its negation (a masked-out 0 stays 0).
    Codes = 1,
    /// Columns reversed, entries unchanged (2): the mirror image of a mask, and of a code whose
    /// owner dealt its conjugate (the query's [`crate::contract::InputPart::Conjugate`], under
    /// a Galois-ring sharing, whose shares cannot negate part of a ring element locally).
    Positions = 2,
}

impl Mirror {
    pub fn from_i32(v: i32) -> Option<Mirror> {
        [Mirror::None, Mirror::Codes, Mirror::Positions]
            .into_iter()
            .find(|m| *m as i32 == v)
    }

    /// Whether columns are reversed.
    pub fn reverses(self) -> bool {
        self != Mirror::None
    }

    /// Whether each cell's imaginary entries change sign.
    pub fn negates_imaginary(self) -> bool {
        self == Mirror::Codes
    }
}

/// The protocol family of a whole program: how many parties and which primitives
/// (`irs.protocol` on the module, `--protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Protocol {
    /// Three-party replicated throughout (ABY3 with the Large-Scale MPC paper's comparisons);
    /// the Shamir sharings reshare to it. Honest majority.
    Rep3,
    /// The dot products as in `rep3`; the boolean part of every reveal (MSB extractions, OR
    /// trees, secret `if`s) converted locally to XOR shares and evaluated by Masked Triples
    /// (paper 004) with Beaver triples from a preprocessing phase.
    Beaver,
    /// Two servers and an offline dealer (paper 002): optimised additive sharing over Z_2^64,
    /// FSS gates and CondEval; the cosine test in two online rounds. The third declared party
    /// is the client that supplies the query and receives the decisions.
    Fss2,
}

impl Protocol {
    pub const ALL: [Protocol; 3] = [Protocol::Rep3, Protocol::Beaver, Protocol::Fss2];

    /// The spelling of the `#irs.protocol` attribute and of `--protocol`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Rep3 => "rep3",
            Protocol::Beaver => "beaver",
            Protocol::Fss2 => "fss2",
        }
    }

    pub fn parse(s: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The computing parties the protocol runs between (for `fss2` the two servers: the
    /// client and the dealer are roles, not computing parties).
    pub fn parties(self) -> u32 {
        match self {
            Protocol::Rep3 | Protocol::Beaver => 3,
            Protocol::Fss2 => 2,
        }
    }
}

/// What an input is to the program: a gallery (secret-shared among the parties, one record per
/// enrolled subject) or a query (one value per query of the batch, supplied by one party, whose
/// index is kept beside the role where it is needed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputRole {
    Gallery,
    Query,
}

impl InputRole {
    pub const ALL: [InputRole; 2] = [InputRole::Gallery, InputRole::Query];

    /// The source spelling (`gallery db: ...;`, `query q: ...;`), also the manifest's.
    pub fn name(self) -> &'static str {
        match self {
            InputRole::Gallery => "gallery",
            InputRole::Query => "query",
        }
    }

    pub fn parse(s: &str) -> Option<InputRole> {
        InputRole::ALL.into_iter().find(|r| r.name() == s)
    }
}

/// What an input's values are: iris codes (with masks), fixed-point embeddings, or one bit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Iris,
    Embedding,
    Bit,
}

impl InputKind {
    pub const ALL: [InputKind; 3] = [InputKind::Iris, InputKind::Embedding, InputKind::Bit];

    /// The manifest's spelling.
    pub fn name(self) -> &'static str {
        match self {
            InputKind::Iris => "iris",
            InputKind::Embedding => "embedding",
            InputKind::Bit => "bit",
        }
    }

    pub fn parse(s: &str) -> Option<InputKind> {
        InputKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// Iris masks: public (plain in every share file) or secret-shared; `None` for other kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputMask {
    Public,
    Secret,
    None,
}

impl InputMask {
    pub const ALL: [InputMask; 3] = [InputMask::Public, InputMask::Secret, InputMask::None];

    /// The manifest's spelling.
    pub fn name(self) -> &'static str {
        match self {
            InputMask::Public => "public",
            InputMask::Secret => "secret",
            InputMask::None => "none",
        }
    }

    pub fn parse(s: &str) -> Option<InputMask> {
        InputMask::ALL.into_iter().find(|m| m.name() == s)
    }
}

macro_rules! display_by_name {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}
display_by_name!(Sharing, Variant, Protocol, InputRole, InputKind, InputMask);

#[cfg(test)]
mod tests {
    use super::*;

    /// The serde names must stay the spellings of `name` (the manifest JSON and
    /// `explain --json` of existing executables and documents use them).
    #[test]
    fn serde_names_are_the_flag_spellings() {
        fn check<T>(all: &[T], expected: &[&str])
        where
            T: Serialize + for<'de> Deserialize<'de> + PartialEq + fmt::Debug + fmt::Display + Copy,
        {
            assert_eq!(all.len(), expected.len());
            for (v, want) in all.iter().zip(expected) {
                let json = serde_json::to_string(v).unwrap();
                assert_eq!(json, format!("\"{want}\""));
                assert_eq!(serde_json::from_str::<T>(&json).unwrap(), *v);
                assert_eq!(v.to_string(), *want);
            }
        }
        check(&Sharing::ALL, &["rep3", "gr2", "gr4", "fp"]);
        check(
            &Variant::ALL,
            &["plain-mask", "mpc-lift", "const-lift", "no-lift"],
        );
        check(&Protocol::ALL, &["rep3", "beaver", "fss2"]);
        check(&InputRole::ALL, &["gallery", "query"]);
        check(&InputKind::ALL, &["iris", "embedding", "bit"]);
        check(&InputMask::ALL, &["public", "secret", "none"]);
    }

    #[test]
    fn parse_accepts_exactly_the_names() {
        for s in Sharing::ALL {
            assert_eq!(Sharing::parse(s.name()), Some(s));
        }
        for v in Variant::ALL {
            assert_eq!(Variant::parse(v.name()), Some(v));
        }
        for r in InputRole::ALL {
            assert_eq!(InputRole::parse(r.name()), Some(r));
        }
        for k in InputKind::ALL {
            assert_eq!(InputKind::parse(k.name()), Some(k));
        }
        for m in InputMask::ALL {
            assert_eq!(InputMask::parse(m.name()), Some(m));
        }
        assert_eq!(Protocol::parse("rep3"), Some(Protocol::Rep3));
        assert_eq!(Protocol::parse("beaver"), Some(Protocol::Beaver));
        assert_eq!(Protocol::parse("fss2"), Some(Protocol::Fss2));
        assert_eq!(Sharing::parse("gr3"), None);
        assert_eq!(Sharing::parse("Rep3"), None);
        assert_eq!(Variant::parse("mpc_lift"), None);
        assert!(Sharing::ALL.iter().filter(|s| s.is_shamir()).count() == 3);
        assert!(!Sharing::Rep3.is_shamir());
    }
}
