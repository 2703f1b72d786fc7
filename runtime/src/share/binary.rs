//! Replicated binary shares over F_2, bit-sliced into u64 words.
//!
//! Element e of a vector is bit `e % 64` of word `e / 64`, so one word operation acts on 64
//! elements. As in [`super::rep3`], x = x_0 ^ x_1 ^ x_2 and party i holds x_i (`own`) and x_{i-1}
//! (`prev`). Bits at positions `>= len` are zero in both components of every share, so word-level
//! operations never need to special-case the tail.

use rand_core::CryptoRng;

/// Words needed for `len` bits.
#[inline]
pub fn words_for(len: usize) -> usize {
    len.div_ceil(64)
}

/// The valid-bit mask of the last word of a `len`-bit vector (all ones if `len` is a multiple of 64).
#[inline]
pub fn tail_mask(len: usize) -> u64 {
    match len % 64 {
        0 => u64::MAX,
        r => (1u64 << r) - 1,
    }
}

/// Clears the bits at positions `>= len`.
pub fn clear_tail(words: &mut [u64], len: usize) {
    if let Some(last) = words.last_mut() {
        *last &= tail_mask(len);
    }
}

/// Packs booleans into bit-sliced words.
pub fn pack_bits(bits: &[bool]) -> Vec<u64> {
    let mut w = vec![0u64; words_for(bits.len())];
    for (e, &b) in bits.iter().enumerate() {
        w[e / 64] |= (b as u64) << (e % 64);
    }
    w
}

/// Unpacks the first `len` bits of bit-sliced words.
pub fn unpack_bits(words: &[u64], len: usize) -> Vec<bool> {
    (0..len)
        .map(|e| (words[e / 64] >> (e % 64)) & 1 == 1)
        .collect()
}

/// One party's replicated binary shares of `len` bits.
#[derive(Clone, PartialEq, Eq)]
pub struct BitShares {
    pub own: Vec<u64>,
    pub prev: Vec<u64>,
    pub len: usize,
}

impl BitShares {
    pub fn zeros(len: usize) -> Self {
        let w = words_for(len);
        BitShares {
            own: vec![0; w],
            prev: vec![0; w],
            len,
        }
    }

    /// Builds shares from components, clearing the bits past `len`.
    ///
    /// Panics if a component does not have exactly `words_for(len)` words (a caller bug).
    pub fn from_words(mut own: Vec<u64>, mut prev: Vec<u64>, len: usize) -> Self {
        assert!(
            own.len() == words_for(len) && prev.len() == words_for(len),
            "bit shares: word count does not match len"
        );
        clear_tail(&mut own, len);
        clear_tail(&mut prev, len);
        BitShares { own, prev, len }
    }

    pub fn words(&self) -> usize {
        self.own.len()
    }

    pub fn xor(&self, other: &Self) -> Self {
        assert_eq!(self.len, other.len, "bit shares xor: length mismatch");
        BitShares {
            own: self
                .own
                .iter()
                .zip(&other.own)
                .map(|(a, b)| a ^ b)
                .collect(),
            prev: self
                .prev
                .iter()
                .zip(&other.prev)
                .map(|(a, b)| a ^ b)
                .collect(),
            len: self.len,
        }
    }

    pub fn xor_assign(&mut self, other: &Self) {
        assert_eq!(self.len, other.len, "bit shares xor: length mismatch");
        for (a, b) in self.own.iter_mut().zip(&other.own) {
            *a ^= b;
        }
        for (a, b) in self.prev.iter_mut().zip(&other.prev) {
            *a ^= b;
        }
    }

    /// XORs public bit-sliced words into the shared value: component 0 carries it, held by
    /// party 0 as `own` and by party 1 as `prev`.
    pub fn xor_public(&mut self, party: usize, bits: &[u64]) {
        assert_eq!(
            bits.len(),
            self.words(),
            "bit shares xor_public: length mismatch"
        );
        let target = match party {
            0 => &mut self.own,
            1 => &mut self.prev,
            _ => return,
        };
        for (a, b) in target.iter_mut().zip(bits) {
            *a ^= b;
        }
        clear_tail(target, self.len);
    }

    /// Algorithm 4, InpLocal, over F_2: shares of a value known to parties `owner` and
    /// `owner + 1`, without interaction. The value becomes component `owner` (the other two are
    /// zero), so party `owner` holds it as `own` and party `owner + 1` as `prev`. `known` is the
    /// bit-sliced value at those two parties and is ignored at the third.
    #[doc(alias = "InpLocal")]
    pub fn inp_local(party: usize, owner: usize, known: &[u64], len: usize) -> Self {
        let mut s = BitShares::zeros(len);
        if party == owner {
            s.own.copy_from_slice(known);
        } else if party == (owner + 1) % 3 {
            s.prev.copy_from_slice(known);
        }
        clear_tail(&mut s.own, len);
        clear_tail(&mut s.prev, len);
        s
    }

    /// Bitwise NOT of the shared value (XOR with the public all-ones vector).
    pub fn not(&self, party: usize) -> Self {
        let mut out = self.clone();
        let ones = vec![u64::MAX; self.words()];
        out.xor_public(party, &ones);
        out
    }

    /// The shares of elements `start..start + len`.
    pub fn slice(&self, start: usize, len: usize) -> Self {
        assert!(start + len <= self.len, "bit shares slice out of range");
        BitShares {
            own: extract(&self.own, start, len),
            prev: extract(&self.prev, start, len),
            len,
        }
    }

    /// The shares of the elements at `indices`, in that order.
    pub fn gather(&self, indices: &[usize]) -> Self {
        let mut own = vec![0u64; words_for(indices.len())];
        let mut prev = vec![0u64; words_for(indices.len())];
        for (j, &e) in indices.iter().enumerate() {
            assert!(e < self.len, "bit shares gather out of range");
            let (w, b) = (e / 64, e % 64);
            own[j / 64] |= ((self.own[w] >> b) & 1) << (j % 64);
            prev[j / 64] |= ((self.prev[w] >> b) & 1) << (j % 64);
        }
        BitShares {
            own,
            prev,
            len: indices.len(),
        }
    }

    /// Concatenates share vectors element-wise (`parts[0]` first).
    pub fn concat(parts: &[&BitShares]) -> Self {
        let len: usize = parts.iter().map(|p| p.len).sum();
        let mut own = vec![0u64; words_for(len)];
        let mut prev = vec![0u64; words_for(len)];
        let mut at = 0;
        for p in parts {
            copy_bits(&mut own, at, &p.own, 0, p.len);
            copy_bits(&mut prev, at, &p.prev, 0, p.len);
            at += p.len;
        }
        BitShares { own, prev, len }
    }
}

/// Bits `start..start + len` of `src` as a fresh word vector.
fn extract(src: &[u64], start: usize, len: usize) -> Vec<u64> {
    let mut out = vec![0u64; words_for(len)];
    copy_bits(&mut out, 0, src, start, len);
    out
}

/// Bits `at .. at + n` of the bit-sliced `words` (`n <= 64`) as the low bits of one word.
#[inline]
pub fn bits_at(words: &[u64], at: usize, n: usize) -> u64 {
    if n == 0 {
        return 0;
    }
    let (w, sh) = (at / 64, at % 64);
    let mut v = words[w] >> sh;
    if sh != 0 && sh + n > 64 {
        v |= words[w + 1] << (64 - sh);
    }
    v & tail_mask(n)
}

/// ORs the low `n` bits of `v` (`n <= 64`, the bits above them clear) into `words` at bit
/// `at`.
#[inline]
pub fn put_bits(words: &mut [u64], at: usize, n: usize, v: u64) {
    if n == 0 {
        return;
    }
    let (w, sh) = (at / 64, at % 64);
    words[w] |= v << sh;
    if sh != 0 && sh + n > 64 {
        words[w + 1] |= v >> (64 - sh);
    }
}

/// ORs bits `src_at .. src_at + n` of `src` into `dst` at bit `dst_at` (a bit-range copy into
/// clear bits), 64 bits at a time.
pub fn copy_bits(dst: &mut [u64], dst_at: usize, src: &[u64], src_at: usize, n: usize) {
    let mut k = 0;
    while k < n {
        let m = (n - k).min(64);
        put_bits(dst, dst_at + k, m, bits_at(src, src_at + k, m));
        k += m;
    }
}

/// Dealer side (tests, input tools): replicated binary shares of `bits`.
pub fn share_bits(bits: &[bool], rng: &mut impl CryptoRng) -> [BitShares; 3] {
    let len = bits.len();
    let w = words_for(len);
    let value = pack_bits(bits);
    let mut c0: Vec<u64> = (0..w).map(|_| rng.next_u64()).collect();
    let mut c1: Vec<u64> = (0..w).map(|_| rng.next_u64()).collect();
    clear_tail(&mut c0, len);
    clear_tail(&mut c1, len);
    let c2: Vec<u64> = value
        .iter()
        .zip(c0.iter().zip(&c1))
        .map(|(v, (a, b))| v ^ a ^ b)
        .collect();
    [
        BitShares {
            own: c0.clone(),
            prev: c2.clone(),
            len,
        },
        BitShares {
            own: c1.clone(),
            prev: c0,
            len,
        },
        BitShares {
            own: c2,
            prev: c1,
            len,
        },
    ]
}

/// Dealer side (tests): recombines three parties' binary shares, checking the replication.
///
/// Returns `None` if the parties' components are inconsistent or a tail bit is set.
pub fn reconstruct_bits(shares: &[BitShares; 3]) -> Option<Vec<bool>> {
    let len = shares[0].len;
    for i in 0..3 {
        let s = &shares[i];
        let p = &shares[(i + 2) % 3];
        if s.len != len || s.own.len() != words_for(len) || s.prev != p.own {
            return None;
        }
        if s.own.last().is_some_and(|w| w & !tail_mask(len) != 0) {
            return None;
        }
    }
    let value: Vec<u64> = (0..words_for(len))
        .map(|j| shares[0].own[j] ^ shares[1].own[j] ^ shares[2].own[j])
        .collect();
    Some(unpack_bits(&value, len))
}

/// Shows the size only: shares are secret material and must not reach a log.
impl std::fmt::Debug for BitShares {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BitShares(len {}, values hidden)", self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        /// A bit-range copy into clear bits equals copying bit by bit, at any offsets and
        /// lengths (inside a word, across one or several word boundaries), and leaves every
        /// other bit of the destination as it was.
        #[test]
        fn bit_range_copies_equal_bit_by_bit_copies(
            src in proptest::collection::vec(any::<bool>(), 0..300),
            dst in proptest::collection::vec(any::<bool>(), 0..300),
            picks in (0.0f64..1.0, 0.0f64..1.0, 0.0f64..1.0),
        ) {
            let n = (picks.0 * src.len().min(dst.len()) as f64) as usize;
            let src_at = (picks.1 * (src.len() - n) as f64) as usize;
            let dst_at = (picks.2 * (dst.len() - n) as f64) as usize;
            // The destination's range cleared first, as the copies expect.
            let mut before = dst.clone();
            before[dst_at..dst_at + n].iter_mut().for_each(|b| *b = false);
            let mut words = pack_bits(&before);
            copy_bits(&mut words, dst_at, &pack_bits(&src), src_at, n);
            let mut want = before.clone();
            want[dst_at..dst_at + n].copy_from_slice(&src[src_at..src_at + n]);
            prop_assert_eq!(unpack_bits(&words, dst.len()), want);
            if n <= 64 {
                let v = bits_at(&pack_bits(&src), src_at, n);
                let got: Vec<bool> = (0..n).map(|i| (v >> i) & 1 == 1).collect();
                prop_assert_eq!(&got[..], &src[src_at..src_at + n]);
                prop_assert!(n == 64 || v >> n == 0, "bits above n are clear");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn xor_not_slice_gather_concat(seed: u64, a in proptest::collection::vec(any::<bool>(), 0..200), start_frac in 0.0f64..1.0) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let b: Vec<bool> = a.iter().enumerate().map(|(i, &x)| x ^ (i % 3 == 0)).collect();
            let sa = share_bits(&a, &mut rng);
            let sb = share_bits(&b, &mut rng);
            prop_assert_eq!(reconstruct_bits(&sa), Some(a.clone()));

            let x: [BitShares; 3] = std::array::from_fn(|i| sa[i].xor(&sb[i]));
            let want: Vec<bool> = a.iter().zip(&b).map(|(p, q)| p ^ q).collect();
            prop_assert_eq!(reconstruct_bits(&x), Some(want));

            let n: [BitShares; 3] = std::array::from_fn(|i| sa[i].not(i));
            prop_assert_eq!(reconstruct_bits(&n), Some(a.iter().map(|v| !v).collect()));

            let start = (a.len() as f64 * start_frac) as usize;
            let len = (a.len() - start) / 2 + (a.len() - start) % 2;
            let s: [BitShares; 3] = std::array::from_fn(|i| sa[i].slice(start, len));
            prop_assert_eq!(reconstruct_bits(&s), Some(a[start..start + len].to_vec()));

            let idx: Vec<usize> = (0..a.len()).rev().step_by(3).collect();
            let g: [BitShares; 3] = std::array::from_fn(|i| sa[i].gather(&idx));
            prop_assert_eq!(reconstruct_bits(&g), Some(idx.iter().map(|&e| a[e]).collect()));

            let c: [BitShares; 3] = std::array::from_fn(|i| BitShares::concat(&[&s[i], &sb[i], &g[i]]));
            let mut want = a[start..start + len].to_vec();
            want.extend_from_slice(&b);
            want.extend(idx.iter().map(|&e| a[e]));
            prop_assert_eq!(reconstruct_bits(&c), Some(want));
        }
    }

    #[test]
    fn inp_local_shares_the_known_value() {
        let bits: Vec<bool> = (0..77).map(|i| i % 5 < 2).collect();
        let words = pack_bits(&bits);
        for owner in 0..3 {
            let s: [BitShares; 3] = std::array::from_fn(|p| {
                let knows = p == owner || p == (owner + 1) % 3;
                BitShares::inp_local(p, owner, if knows { &words } else { &[] }, bits.len())
            });
            assert_eq!(reconstruct_bits(&s), Some(bits.clone()), "owner {owner}");
            // The third party's shares are all zero: it learns nothing and contributes nothing.
            assert!(s[(owner + 2) % 3]
                .own
                .iter()
                .chain(&s[(owner + 2) % 3].prev)
                .all(|&w| w == 0));
        }
    }

    #[test]
    fn tail_bits_stay_zero() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        let s = share_bits(&[true; 70], &mut rng);
        for (i, p) in s.iter().enumerate() {
            let n = p.not(i);
            assert_eq!(n.own[1] >> 6, 0);
            assert_eq!(n.prev[1] >> 6, 0);
        }
        assert_eq!(tail_mask(64), u64::MAX);
        assert_eq!(tail_mask(70), 0x3f);
    }
}
