//! One party's preprocessing for one execution of a circuit: XOR shares of the Beaver triples
//! (TripleGen, Fig. 2) and of each conditional's masks (MaskGen, Fig. 3).
//!
//! Every value is a vector over the circuit's lanes (the same circuit evaluated on many
//! independent inputs at once, e.g. one lane per record and rotation), bit-sliced: lane `l` is
//! bit `l % 64` of word `l / 64`. Each lane has its own triples and masks.

use super::schedule::Schedule;

/// 64-bit words that hold `lanes` bits.
pub fn words_for(lanes: usize) -> usize {
    lanes.div_ceil(64)
}

/// XOR shares of `count` triples `(a, b, c = a AND b)`, `words` words each, row-major.
#[derive(Clone, PartialEq, Eq)]
pub struct Triples {
    pub count: u64,
    pub words: usize,
    pub a: Vec<u64>,
    pub b: Vec<u64>,
    pub c: Vec<u64>,
}

/// XOR shares of one conditional's MaskGen output: `[s]` and the mask strings `M^0`, `M^1`
/// (`rows` rows of `words` words each). `M^s` is a sharing of zeros, `M^(1-s)` of uniform bits.
#[derive(Clone, PartialEq, Eq)]
pub struct Masks {
    pub rows: u64,
    pub s: Vec<u64>,
    pub m0: Vec<u64>,
    pub m1: Vec<u64>,
}

/// Everything one execution consumes at one party.
#[derive(Clone, PartialEq, Eq)]
pub struct Material {
    pub lanes: usize,
    pub triples: Triples,
    /// One per conditional, in the schedule's order.
    pub masks: Vec<Masks>,
}

// Shares are secrets: Debug prints only the shapes.
impl std::fmt::Debug for Material {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Material")
            .field("lanes", &self.lanes)
            .field("triples", &self.triples.count)
            .field("conditionals", &self.masks.len())
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Triples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Triples")
            .field("count", &self.count)
            .field("words", &self.words)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Masks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Masks")
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl Triples {
    pub fn row(v: &[u64], words: usize, i: u64) -> &[u64] {
        let at = i as usize * words;
        &v[at..at + words]
    }
}

/// How much of each kind an execution of a schedule needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Needs {
    pub lanes: usize,
    pub triples: u64,
    /// Mask rows per conditional are in the schedule; this is their sum.
    pub mask_rows: u64,
    pub conditionals: usize,
}

impl Needs {
    pub fn of(schedule: &Schedule, lanes: usize) -> Needs {
        Needs {
            lanes,
            triples: schedule.triples,
            mask_rows: schedule.mask_rows(),
            conditionals: schedule.conds.len(),
        }
    }

    /// Bytes of one party's material: three words per triple, two per mask row, one `s`.
    pub fn bytes(&self) -> u64 {
        let w = words_for(self.lanes) as u64 * 8;
        w * (3 * self.triples + 2 * self.mask_rows + self.conditionals as u64)
    }
}

impl Material {
    /// Checks that the material fits `schedule` at `lanes` lanes, naming what differs.
    pub fn check(&self, schedule: &Schedule, lanes: usize) -> Result<(), String> {
        if self.lanes != lanes {
            return Err(format!(
                "the preprocessing is for {} lanes, the run has {lanes}",
                self.lanes
            ));
        }
        if self.triples.count < schedule.triples {
            return Err(format!(
                "too few triples: {} preprocessed, the circuit needs {}",
                self.triples.count, schedule.triples
            ));
        }
        if self.masks.len() != schedule.conds.len() {
            return Err(format!(
                "masks for {} conditionals, the circuit has {}",
                self.masks.len(),
                schedule.conds.len()
            ));
        }
        for (k, (m, c)) in self.masks.iter().zip(&schedule.conds).enumerate() {
            if m.rows != c.mask_rows() {
                return Err(format!(
                    "conditional {k}: {} mask rows preprocessed, it needs {}",
                    m.rows,
                    c.mask_rows()
                ));
            }
        }
        Ok(())
    }
}
