//! Codes as one party holds them under Shamir sharing (Section 4.3.2): one degree-1 share per
//! code entry, over F_p (p = 65519) or the Galois ring GR(2^16, d), d ∈ {2, 4}, plus the public
//! masks. The counterpart of [`crate::share::Codes`] (replicated shares) for the Shamir
//! sharings; [`ShamirCodes::new`] is what the input loader calls with a share file's contents.

use crate::error::RuntimeError;
use crate::share::fp::P;
use crate::share::galois::elems_for;
use crate::store::Words;
use crate::vocab::Mirror;

/// Which Shamir sharing, and so how entries are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShamirKind {
    /// F_p, p = 65519: one canonical u16 (below p) per code entry.
    Fp,
    /// GR(2^16, 2): ⌈len/2⌉ ring elements per code, 2 u16 coefficients each.
    Gr2,
    /// GR(2^16, 4): ⌈len/4⌉ ring elements per code, 4 u16 coefficients each.
    Gr4,
}

impl ShamirKind {
    /// Galois-ring Shamir (the sharings the GPU has kernels for).
    pub fn is_galois_ring(self) -> bool {
        matches!(self, ShamirKind::Gr2 | ShamirKind::Gr4)
    }

    /// Coefficients per ring element (1 for F_p).
    pub fn degree(self) -> usize {
        match self {
            ShamirKind::Fp => 1,
            ShamirKind::Gr2 => 2,
            ShamirKind::Gr4 => 4,
        }
    }

    /// u16 words one code of `len` entries takes.
    pub fn words_per_code(self, len: usize) -> usize {
        match self {
            ShamirKind::Fp => len,
            ShamirKind::Gr2 => elems_for::<2>(len) * 2,
            ShamirKind::Gr4 => elems_for::<4>(len) * 4,
        }
    }
}

/// Which side of a dot product the codes are packed for (Galois rings only; see
/// [`crate::share::galois`]): the query plainly (coefficient j of an element holds entry j of
/// its block of d entries), the gallery reversed (coefficient j holds entry (−j) mod d). Then
/// the constant term of a product of two elements is the dot product of their blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Query,
    Gallery,
}

/// `count` codes of `len` entries each, as this party's Shamir shares.
pub struct ShamirCodes {
    pub kind: ShamirKind,
    pub side: Side,
    pub count: usize,
    /// Code entries per code (before packing; a multiple of 64 for iris codes and embeddings).
    pub len: usize,
    /// Record ids (gallery) or query numbers.
    pub ids: Vec<u64>,
    /// Public masks, ⌈len/64⌉ little-endian u64 words per code (bit i of a code is bit i % 64 of
    /// word i / 64), as in [`crate::share::Codes`]. All ones where masks are secret or absent.
    pub masks: Vec<u64>,
    /// The shares, [`ShamirKind::words_per_code`] u16 words per code, code after code: for F_p
    /// one element below p per entry; for GR(2^16, d) the d coefficients of each ring element
    /// (`words[e·d + j]` = coefficient of x^j of element e), packed for `side`. Derefs to
    /// `[u16]`; a gallery loaded from a store reads it in place from the memory map.
    pub words: Words,
}

impl std::fmt::Debug for ShamirCodes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ShamirCodes({:?} {:?}, {} codes of {} entries, shares hidden)",
            self.kind, self.side, self.count, self.len
        )
    }
}

impl ShamirCodes {
    /// Checks and wraps one party's Shamir shares of `count` codes of `len` entries.
    ///
    /// `words` holds `count × kind.words_per_code(len)` u16 words laid out as in
    /// [`ShamirCodes::words`]: for F_p every word must be below p = 65519; for GR(2^16, d) the
    /// codes must have been packed with [`crate::share::galois::Packing::Plain`] for a query
    /// (`Side::Query`) and [`crate::share::galois::Packing::Reversed`] for a gallery
    /// (`Side::Gallery`), each code packed separately (zero-padded to a multiple of d entries),
    /// exactly as [`crate::share::galois::share_codes`] deals them. `ids` has `count` entries and
    /// `masks` `count × ⌈len/64⌉` words (pass all ones for secret masks).
    pub fn new(
        kind: ShamirKind,
        side: Side,
        count: usize,
        len: usize,
        ids: Vec<u64>,
        masks: Vec<u64>,
        words: impl Into<Words>,
    ) -> Result<ShamirCodes, RuntimeError> {
        let words: Words = words.into();
        let bad = |m: String| Err(RuntimeError::Input(format!("Shamir shares: {m}")));
        let per = kind.words_per_code(len);
        if Some(words.len()) != count.checked_mul(per) {
            return bad(format!(
                "{} words for {count} codes of {len} entries ({per} words each)",
                words.len()
            ));
        }
        if ids.len() != count {
            return bad(format!("{} ids for {count} codes", ids.len()));
        }
        let mw = len.div_ceil(64);
        if masks.len() != count * mw {
            return bad(format!(
                "{} mask words for {count} codes of {len} entries",
                masks.len()
            ));
        }
        if kind == ShamirKind::Fp {
            if let Some(i) = words.iter().position(|&w| w >= P) {
                return bad(format!("element {i} is not below p = {P}"));
            }
        }
        Ok(ShamirCodes {
            kind,
            side,
            count,
            len,
            ids,
            masks,
            words,
        })
    }

    pub fn words_per_code(&self) -> usize {
        self.kind.words_per_code(self.len)
    }

    pub fn mask_words_per_code(&self) -> usize {
        self.len.div_ceil(64)
    }

    /// The codes with indices in `range`.
    pub fn select(&self, range: std::ops::Range<usize>) -> ShamirCodes {
        let (w, mw) = (self.words_per_code(), self.mask_words_per_code());
        ShamirCodes {
            kind: self.kind,
            side: self.side,
            count: range.len(),
            len: self.len,
            ids: self.ids[range.clone()].to_vec(),
            masks: self.masks[range.start * mw..range.end * mw].to_vec(),
            words: self.words.slice(range.start * w..range.end * w),
        }
    }

    /// Every code rotated by each `s` in `lo..=hi`, code-major, rotation-minor, with the
    /// contract's rule `rot(q, s)[row][col][k] = q[row][(col + s) mod cols][k]` (16 rows of
    /// `len / 64` columns of 4-entry cells, as [`crate::share::Codes::rotations`]).
    ///
    /// Local. A rotation moves whole cells of 4 entries, so over GR(2^16, d) (d = 2, 4 divide 4)
    /// it moves whole ring elements and permutes shares; it needs `len` a multiple of 64.
    pub fn rotations(&self, lo: i32, hi: i32) -> Result<ShamirCodes, RuntimeError> {
        self.rotations_of(lo, hi, Mirror::None)
    }

    /// [`ShamirCodes::rotations`] of the mirror images `mirror` asks for (as
    /// [`crate::share::Codes::rotations_of`]). Over F_p a share holds one entry, so negating the
    /// imaginary entries is local. A GR(2^16, d) element holds the real and imaginary entries of
    /// one cell together and a share is `s + r·α_i` with non-scalar points α_i, so negating some
    /// of its coefficients is not a sharing of anything: [`Mirror::Codes`] is refused. There the
    /// query's owner deals the code's conjugate ([`crate::contract::InputPart::Conjugate`]), and
    /// [`Mirror::Positions`] mirrors it, as it mirrors a mask: whole cells move, so whole ring
    /// elements, local under every sharing.
    pub fn rotations_of(
        &self,
        lo: i32,
        hi: i32,
        mirror: Mirror,
    ) -> Result<ShamirCodes, RuntimeError> {
        if mirror.negates_imaginary() && self.kind != ShamirKind::Fp {
            return Err(RuntimeError::Schedule(
                "mirror of Galois-ring Shamir codes with their signs: a ring element holds a cell's real and imaginary entries together (the program mirrors the conjugate its owner dealt, by positions: rebuild it with this irisc)".into(),
            ));
        }
        let l = self.len;
        if !l.is_multiple_of(64) {
            return Err(RuntimeError::Schedule(format!(
                "rotation of codes of {l} entries (not a multiple of 64)"
            )));
        }
        let (cols, d) = (l / 64, self.kind.degree());
        let (w, mw) = (self.words_per_code(), self.mask_words_per_code());
        // Entry i of the rotated code comes from entry from(s, i) of the original.
        let from = |s: i32, i: usize| {
            let (row, rest) = (i / (cols * 4), i % (cols * 4));
            let (col, k) = (rest / 4, rest % 4);
            let mut c = (col as i64 + s as i64).rem_euclid(cols as i64) as usize;
            if mirror.reverses() {
                c = cols - 1 - c;
            }
            row * cols * 4 + c * 4 + k
        };
        let shifts: Vec<i32> = (lo..=hi).collect();
        let (mut ids, mut masks, mut words) = (Vec::new(), Vec::new(), Vec::new());
        for c in 0..self.count {
            let (src_w, src_m) = (
                &self.words[c * w..(c + 1) * w],
                &self.masks[c * mw..(c + 1) * mw],
            );
            for &s in &shifts {
                ids.push(self.ids[c]);
                let mut m = vec![0u64; mw];
                for i in 0..l {
                    let f = from(s, i);
                    m[i / 64] |= ((src_m[f / 64] >> (f % 64)) & 1) << (i % 64);
                }
                masks.extend_from_slice(&m);
                // Element e holds entries e·d .. e·d + d, which all come from element from(e·d)/d.
                for e in 0..l / d {
                    let f = from(s, e * d) / d;
                    if mirror.negates_imaginary() && (e * d) % 4 % 2 == 1 {
                        // F_p (d = 1): the imaginary entry, negated mod p.
                        words.extend(src_w[f..f + 1].iter().map(|&x| (P - x) % P));
                    } else {
                        words.extend_from_slice(&src_w[f * d..(f + 1) * d]);
                    }
                }
            }
        }
        Ok(ShamirCodes {
            kind: self.kind,
            side: self.side,
            count: self.count * shifts.len(),
            len: l,
            ids,
            masks,
            words: words.into(),
        })
    }
}

/// `ml` of every (record, code) pair from the public masks of Shamir-shared codes,
/// record-major like `shamir_dot`.
pub fn mask_lengths(q: &ShamirCodes, g: &ShamirCodes) -> Result<Vec<u64>, RuntimeError> {
    if q.len != g.len {
        return Err(RuntimeError::Schedule(format!(
            "mask_len: codes of {} and {} entries",
            q.len, g.len
        )));
    }
    let w = q.mask_words_per_code();
    Ok(super::mask_lengths::mask_lengths(
        &q.masks, q.count, &g.masks, g.count, w,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::share::galois::{reconstruct, share_codes, unpack, Packing, ShamirVec};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    fn rot_plain(code: &[u16], s: i32) -> Vec<u16> {
        let cols = code.len() / 64;
        (0..code.len())
            .map(|i| {
                let (row, rest) = (i / (cols * 4), i % (cols * 4));
                let c = ((rest / 4) as i64 + s as i64).rem_euclid(cols as i64) as usize;
                code[row * cols * 4 + c * 4 + rest % 4]
            })
            .collect()
    }

    #[test]
    fn rotating_gr4_shares_rotates_the_secret() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        let len = 256;
        let q: Vec<u16> = (0..2 * len).map(|_| rng.random()).collect();
        let sh = share_codes::<4>(&q, 2, len, Packing::Plain, &mut rng);
        let mk = |p: usize| {
            ShamirCodes::new(
                ShamirKind::Gr4,
                Side::Query,
                2,
                len,
                vec![7, 8],
                vec![u64::MAX; 8],
                sh[p].coefs.clone(),
            )
            .unwrap()
            .rotations(-2, 1)
            .unwrap()
        };
        let (a, b) = (mk(0), mk(2));
        assert_eq!(a.count, 8);
        assert_eq!(a.ids, vec![7, 7, 7, 7, 8, 8, 8, 8]);
        let secret = reconstruct::<4>(
            (
                0,
                &ShamirVec {
                    coefs: a.words.to_vec(),
                },
            ),
            (
                2,
                &ShamirVec {
                    coefs: b.words.to_vec(),
                },
            ),
        );
        let per = len / 4;
        for c in 0..2 {
            for (j, s) in (-2..=1).enumerate() {
                let r = c * 4 + j;
                let got = unpack::<4>(&secret[r * per..(r + 1) * per], len, Packing::Plain);
                assert_eq!(got, rot_plain(&q[c * len..(c + 1) * len], s));
            }
        }
    }

    #[test]
    fn new_rejects_bad_shapes() {
        assert!(ShamirCodes::new(
            ShamirKind::Fp,
            Side::Gallery,
            1,
            64,
            vec![1],
            vec![0],
            vec![0; 63]
        )
        .is_err());
        assert!(ShamirCodes::new(
            ShamirKind::Fp,
            Side::Gallery,
            1,
            64,
            vec![1],
            vec![0],
            vec![P; 64]
        )
        .is_err());
        assert!(ShamirCodes::new(
            ShamirKind::Gr2,
            Side::Gallery,
            1,
            63,
            vec![1],
            vec![0],
            vec![0; 64]
        )
        .is_ok());
        assert!(ShamirCodes::new(
            ShamirKind::Gr4,
            Side::Gallery,
            2,
            64,
            vec![1],
            vec![0; 2],
            vec![0; 128]
        )
        .is_err());
        let c = ShamirCodes::new(
            ShamirKind::Gr4,
            Side::Gallery,
            1,
            63,
            vec![1],
            vec![0],
            vec![0; 64],
        )
        .unwrap();
        assert!(c.rotations(0, 1).is_err());
        assert!(!format!("{c:?}").contains('0'.to_string().repeat(3).as_str()));
    }
}
