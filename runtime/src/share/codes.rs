//! Iris codes as one party holds them: replicated shares of the masked bits, prepared for the
//! dot product, and the public masks.

use super::rep3::{prepare_owned, Rep3Vec};
use super::ring_vec::{RingVec, RingVecExt};
use crate::error::RuntimeError;
use crate::ring::RingElem;
use crate::vocab::Mirror;

/// `count` codes of `bits` elements each.
///
/// The replicated share (x_i, x_{i-1}) is kept in the prepared form of Appendix C, eq. (6):
/// `a = x_i + x_{i-1}` and `b = x_{i-1}`, so that a party's additive share of a dot product is
/// `<a, a'> - <b, b'>`: two plain dot products.
#[derive(Debug)]
pub struct Codes {
    pub count: usize,
    pub bits: usize,
    /// Record ids (gallery) or query numbers.
    pub ids: Vec<u64>,
    /// Public masks, `bits / 64` little-endian words per code (bit i of a code is bit i % 64 of word i / 64).
    pub masks: Vec<u64>,
    pub a: RingVec,
    pub b: RingVec,
}

fn prepare<T: RingElem>(own: Vec<T>, prev: Vec<T>) -> (Vec<T>, Vec<T>) {
    prepare_owned(Rep3Vec { own, prev })
}

impl Codes {
    /// Codes from replicated components (x_i, x_{i-1}) of `count` records of `bits` elements
    /// (a multiple of 64), in one storage width.
    pub fn from_components(
        own: RingVec,
        prev: RingVec,
        count: usize,
        bits: usize,
        ids: Vec<u64>,
        masks: Vec<u64>,
    ) -> Codes {
        let (a, b) = match (own, prev) {
            (RingVec::U16(o), RingVec::U16(p)) => {
                let (a, b) = prepare(o, p);
                (RingVec::U16(a), RingVec::U16(b))
            }
            (RingVec::U32(o), RingVec::U32(p)) => {
                let (a, b) = prepare(o, p);
                (RingVec::U32(a), RingVec::U32(b))
            }
            (RingVec::U64(o), RingVec::U64(p)) => {
                let (a, b) = prepare(o, p);
                (RingVec::U64(a), RingVec::U64(b))
            }
            _ => unreachable!("the share-file reader yields both components in one width"),
        };
        Codes {
            count,
            bits,
            ids,
            masks,
            a,
            b,
        }
    }

    /// This party's replicated components (x_i, x_{i-1}) of element `i`, recovered from the
    /// prepared form (`x_i = a - b` in the storage width, exact since x_i < 2^k).
    pub fn components(&self, i: usize) -> (u64, u64) {
        let (a, b) = (self.a.get(i).unwrap_or(0), self.b.get(i).unwrap_or(0));
        let w = self.a.word_bytes() * 8;
        let m = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
        (a.wrapping_sub(b) & m, b)
    }

    pub fn words_per_code(&self) -> usize {
        self.bits / 64
    }

    /// Whether the shares are here: `count · bits` elements on each side. Codes selected
    /// without shares ([`Codes::select_without_shares`]) have none.
    pub fn has_shares(&self) -> bool {
        let n = self.count.checked_mul(self.bits);
        n == Some(self.a.len()) && n == Some(self.b.len())
    }

    /// A schedule error unless the shares are here ([`Codes::has_shares`]): `op` reads the
    /// shares of these codes, its operand `what`.
    pub fn check_shares(&self, op: &str, what: &str) -> Result<(), RuntimeError> {
        if self.has_shares() {
            return Ok(());
        }
        Err(RuntimeError::Schedule(format!(
            "{op}: the {what} hold {} and {} share elements for {} codes of {} elements; \
             a gallery view taken without shares cannot be read for its shares",
            self.a.len(),
            self.b.len(),
            self.count,
            self.bits
        )))
    }

    /// The codes with indices in `range`, ids and masks only: the shares are empty, of the
    /// same storage width. For ops that read only the ids and public masks (`mask_len`); an op
    /// that reads the shares of these codes is a schedule error ([`Codes::check_shares`]).
    pub fn select_without_shares(&self, range: std::ops::Range<usize>) -> Codes {
        let w = self.words_per_code();
        Codes {
            count: range.len(),
            bits: self.bits,
            ids: self.ids[range.clone()].to_vec(),
            masks: self.masks[range.start * w..range.end * w].to_vec(),
            a: self.a.slice(0..0),
            b: self.b.slice(0..0),
        }
    }

    /// The codes with indices in `range`.
    pub fn select(&self, range: std::ops::Range<usize>) -> Codes {
        let (l, w) = (self.bits, self.words_per_code());
        Codes {
            count: range.len(),
            bits: self.bits,
            ids: self.ids[range.clone()].to_vec(),
            masks: self.masks[range.start * w..range.end * w].to_vec(),
            a: self.a.slice(range.start * l..range.end * l),
            b: self.b.slice(range.start * l..range.end * l),
        }
    }

    /// Every code rotated by each `s` in `lo..=hi`: code-major, rotation-minor.
    ///
    /// A rotation permutes elements (shares and mask bits alike), so it is local: no party
    /// learns anything and nothing is sent. The rule is the contract's:
    /// `rot(q, s)[row][col][k] = q[row][(col + s) mod cols][k]`.
    pub fn rotations(&self, lo: i32, hi: i32) -> Codes {
        self.rotations_of(lo, hi, Mirror::None)
    }

    /// [`Codes::rotations`] of the mirror images `mirror` asks for (the contract's
    /// `mirror(q)[row][col][k] = q[row][cols - 1 - col][k]`, the code bit flipped for odd `k`,
    /// the imaginary parts; masks are mirrored without a flip): still local, since codes hold
    /// the masked bits `m - 2 (c & m)` of Section 4.1.1 and flipping a valid code bit negates
    /// its masked bit (shares negated), while a masked-out 0 stays 0. [`Mirror::Positions`]: these
    /// are the shares of secret masks, mirrored without a sign change.
    pub fn rotations_of(&self, lo: i32, hi: i32, mirror: Mirror) -> Codes {
        let l = self.bits;
        // 16 rows of `bits / 64` columns of 4-bit cells (ARCHITECTURE section 7).
        let cols = (self.bits / 64) as i64;
        let shifts: Vec<i32> = (lo..=hi).collect();
        let perms: Vec<Vec<usize>> = shifts
            .iter()
            .map(|&s| {
                (0..l)
                    .map(|i| {
                        let (row, rest) = (i / (cols as usize * 4), i % (cols as usize * 4));
                        let (col, k) = (rest / 4, rest % 4);
                        let mut from_col = (col as i64 + s as i64).rem_euclid(cols) as usize;
                        if mirror.reverses() {
                            from_col = cols as usize - 1 - from_col;
                        }
                        row * cols as usize * 4 + from_col * 4 + k
                    })
                    .collect()
            })
            .collect();
        let mut ids = Vec::new();
        let mut masks = Vec::new();
        let (mut a_idx, mut code_base) = (Vec::new(), Vec::new());
        for c in 0..self.count {
            for p in &perms {
                ids.push(self.ids[c]);
                let src = &self.masks[c * self.words_per_code()..(c + 1) * self.words_per_code()];
                let mut out = vec![0u64; self.words_per_code()];
                for (i, &from) in p.iter().enumerate() {
                    let bit = (src[from / 64] >> (from % 64)) & 1;
                    out[i / 64] |= bit << (i % 64);
                }
                masks.extend_from_slice(&out);
                code_base.push(c * l);
                a_idx.push(p);
            }
        }
        let gather = |v: &RingVec| {
            let index: Vec<usize> = a_idx
                .iter()
                .zip(&code_base)
                .flat_map(|(p, &base)| p.iter().map(move |&from| base + from))
                .collect();
            if mirror.negates_imaginary() {
                // Element j of the output is entry j % l of a code: imaginary when k is odd.
                v.gather_negating(&index, &|j| j % l % 4 % 2 == 1)
            } else {
                v.gather(&index)
            }
        };
        Codes {
            count: self.count * shifts.len(),
            bits: l,
            ids,
            masks,
            a: gather(&self.a),
            b: gather(&self.b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The contract's rule, written out per element: element `(row, col, k)` of `rot(q, s)` is
    /// element `(row, (col + s) mod cols, k)` of `q`.
    fn source_of(i: usize, s: i64, cols: usize) -> usize {
        let (row, col, k) = (i / (cols * 4), i / 4 % cols, i % 4);
        let from = (col as i64 + s).rem_euclid(cols as i64) as usize;
        row * cols * 4 + from * 4 + k
    }

    /// Two 1024-bit codes (16 columns) whose share elements are all distinct (element `i` of
    /// code `c` holds `c * bits + i` in `a` and that plus 7 in `b`) and whose masks are a
    /// pseudo-random pattern.
    fn numbered_codes() -> Codes {
        let (count, bits) = (2, 1024);
        let n = count * bits;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let masks = (0..n / 64)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            })
            .collect();
        Codes {
            count,
            bits,
            ids: vec![41, 97],
            masks,
            a: RingVec::from_u64s(32, (0..n as u64).collect::<Vec<_>>()).unwrap(),
            b: RingVec::from_u64s(32, (0..n as u64).map(|v| v + 7).collect::<Vec<_>>()).unwrap(),
        }
    }

    fn check_window(lo: i32, hi: i32) {
        let codes = numbered_codes();
        let (bits, cols) = (codes.bits, codes.bits / 64);
        let turned = codes.rotations(lo, hi);
        let per_code = (hi - lo + 1) as usize;
        assert_eq!(turned.count, codes.count * per_code);
        for c in 0..codes.count {
            for (r, s) in (lo..=hi).enumerate() {
                let j = c * per_code + r;
                assert_eq!(
                    turned.ids[j], codes.ids[c],
                    "code-major, rotation-minor ids"
                );
                for i in 0..bits {
                    let from = source_of(i, s as i64, cols);
                    let want = (c * bits + from) as u64;
                    assert_eq!(
                        turned.a.get(j * bits + i),
                        Some(want),
                        "a: code {c} s {s} i {i}"
                    );
                    assert_eq!(
                        turned.b.get(j * bits + i),
                        Some(want + 7),
                        "b: code {c} s {s}"
                    );
                    let mask_bit = |m: &[u64], code: usize, e: usize| {
                        (m[code * bits / 64 + e / 64] >> (e % 64)) & 1
                    };
                    assert_eq!(
                        mask_bit(&turned.masks, j, i),
                        mask_bit(&codes.masks, c, from),
                        "mask: code {c} s {s} i {i}"
                    );
                }
            }
        }
    }

    /// The mirror images' rotations: element `(row, col, k)` of `rot(mirror(q), s)` is element
    /// `(row, cols - 1 - (col + s) mod cols, k)` of `q`, negated (mod 2^32, in both components)
    /// for odd `k`; masks follow unflipped.
    #[test]
    fn mirrored_rotations_follow_the_contract_rule() {
        let codes = numbered_codes();
        let (bits, cols) = (codes.bits, codes.bits / 64);
        let (lo, hi) = (-3, 5);
        let turned = codes.rotations_of(lo, hi, Mirror::Codes);
        let per_code = (hi - lo + 1) as usize;
        assert_eq!(turned.count, codes.count * per_code);
        for c in 0..codes.count {
            for (r, s) in (lo..=hi).enumerate() {
                let j = c * per_code + r;
                for i in 0..bits {
                    let (row, col, k) = (i / (cols * 4), i / 4 % cols, i % 4);
                    let rotated = (col as i64 + s as i64).rem_euclid(cols as i64) as usize;
                    let from = row * cols * 4 + (cols - 1 - rotated) * 4 + k;
                    let v = (c * bits + from) as u64;
                    let sign = |x: u64| {
                        if k % 2 == 1 {
                            x.wrapping_neg() & 0xffff_ffff
                        } else {
                            x
                        }
                    };
                    assert_eq!(
                        turned.a.get(j * bits + i),
                        Some(sign(v)),
                        "a: code {c} s {s} i {i}"
                    );
                    assert_eq!(
                        turned.b.get(j * bits + i),
                        Some(sign(v + 7)),
                        "b: code {c} s {s} i {i}"
                    );
                    let mask_bit = |m: &[u64], code: usize, e: usize| {
                        (m[code * bits / 64 + e / 64] >> (e % 64)) & 1
                    };
                    assert_eq!(
                        mask_bit(&turned.masks, j, i),
                        mask_bit(&codes.masks, c, from)
                    );
                }
            }
        }
    }

    /// Asymmetric windows, where applying the shift in the wrong direction (`col - s`) gives a
    /// different set of rotated codes (symmetric windows cannot tell the two apart).
    #[test]
    fn rotations_follow_the_contract_rule_on_asymmetric_windows() {
        check_window(2, 9);
        check_window(-5, -1);
        check_window(0, 0);
        check_window(15, 17);
    }

    /// The shares' rotation agrees with the plaintext codes' rotation (`IrisCode::rotate`, used
    /// by the dealer, the generator and the plaintext evaluator) on the mask bits.
    #[test]
    fn rotations_agree_with_the_plaintext_rotation() {
        let codes = numbered_codes();
        let bytes: Vec<u8> = codes.masks[..codes.bits / 64]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let plain = crate::iris::IrisCode {
            code: bytes.clone(),
            mask: bytes,
        };
        for s in [-3i32, 2, 5] {
            let turned = codes.select(0..1).rotations(s, s);
            let got: Vec<u8> = turned.masks.iter().flat_map(|w| w.to_le_bytes()).collect();
            assert_eq!(got, plain.rotate(s as i64).mask, "s = {s}");
        }
    }
}
