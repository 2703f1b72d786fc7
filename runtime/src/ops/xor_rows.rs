//! XOR shares of rows of bits over lanes: the `beaver` family's circuit inputs and outputs in a
//! value slot ([`super::Value::Xor`]).

use crate::beaver::material::words_for;
use crate::error::RuntimeError;
use crate::share::binary::tail_mask;

/// XOR shares of a lane-major block of bits: `rows` rows of `words_for(lanes)` words each; row
/// `r` holds input bit `r` of every lane. One lane is broadcast to any number of lanes.
#[derive(Clone)]
pub struct XorRows {
    pub lanes: usize,
    pub rows: usize,
    pub words: Vec<u64>,
}

// Shares never reach a log: the shape only.
impl std::fmt::Debug for XorRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "XorRows({} rows x {} lanes)", self.rows, self.lanes)
    }
}

impl XorRows {
    pub(crate) fn zeros(lanes: usize, rows: usize) -> XorRows {
        XorRows {
            lanes,
            rows,
            words: vec![0; rows * words_for(lanes)],
        }
    }

    pub(crate) fn row(&self, r: usize) -> &[u64] {
        let w = words_for(self.lanes);
        &self.words[r * w..(r + 1) * w]
    }

    pub(crate) fn set(&mut self, row: usize, lane: usize) {
        let w = words_for(self.lanes);
        self.words[row * w + lane / 64] |= 1 << (lane % 64);
    }

    /// The same rows on `lanes` lanes: a one-lane block repeated (all ones or all zeros).
    pub(crate) fn broadcast(&self, lanes: usize) -> Result<XorRows, RuntimeError> {
        if self.lanes == lanes {
            return Ok(self.clone());
        }
        if self.lanes != 1 {
            return Err(RuntimeError::Schedule(format!(
                "XOR shares on {} lanes cannot be joined with shares on {lanes} lanes",
                self.lanes
            )));
        }
        let w = words_for(lanes);
        let mut out = XorRows::zeros(lanes, self.rows);
        for r in 0..self.rows {
            if self.words[r] & 1 == 1 {
                let row = &mut out.words[r * w..(r + 1) * w];
                row.fill(u64::MAX);
                if let Some(last) = row.last_mut() {
                    *last &= tail_mask(lanes);
                }
            }
        }
        Ok(out)
    }
}
