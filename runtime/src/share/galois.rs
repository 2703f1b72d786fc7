//! Shamir sharing with threshold 1 over the Galois ring GR(2^16, d) = Z_2^16\[x\]/(f), d ∈ {2, 4}
//! (Bloemen et al., Section 4.3.2, "Shamir Sharing over Rings" and "Optimized 3-party Shamir over
//! Galois Rings").
//!
//! The modulus is f(x) = x^d − x − 1: the paper's x^2 − x − 1 for d = 2 and the deployed
//! x^4 − x − 1 for d = 4. Both reduce mod 2 to x^d + x + 1, irreducible over F_2, so the ring
//! mod 2 is the field F_{2^d} and an element is a unit exactly when its reduction mod 2 is
//! non-zero. Reduction uses the single rule x^d ≡ x + 1.
//!
//! Evaluation points form an exceptional sequence (pairwise differences are units): 0 for the
//! secret and 1, x, x + 1 for parties 0, 1, 2; their reductions mod 2 are the four distinct
//! elements 0, 1, x, x + 1 of F_{2^d}. Z_2^16 itself has no such sequence of length 4, which is
//! why the coefficients are extended.
//!
//! Packing: d consecutive code entries (values of Z_2^16) become the coefficients of one ring
//! element. Writing c₀(·) for the constant coefficient, the reduction x^d ≡ x + 1 gives, for
//! both d,
//!
//! c₀(a · b) = Σ_j a_j · b_{(−j) mod d}.
//!
//! (d = 2: x² = x + 1 carries a₁b₁ into the constant term, so c₀ = a₀b₀ + a₁b₁. d = 4: of the
//! powers x^4 = x + 1, x^5 = x² + x, x^6 = x³ + x² only x^4 has a constant term, so
//! c₀ = a₀b₀ + a₁b₃ + a₂b₂ + a₃b₁.) Hence packing the query plainly ([`Packing::Plain`],
//! a_j = u_j) and the gallery reversed ([`Packing::Reversed`], b_j = v_{(−j) mod d}) makes
//! c₀(a · b) the integer dot product Σ_j u_j v_j mod 2^16. For d = 2 the two packings coincide.

use std::ops::{Add, Mul, Neg, Sub};

use rand_core::CryptoRng;

/// Bits of every coefficient: the ring is Z_2^16\[x\]/(f), stored in u16 with wrapping arithmetic.
pub const COEF_BITS: u32 = 16;

/// One element of GR(2^16, D) = Z_2^16\[x\]/(x^D − x − 1): `self.0[j]` is the coefficient of x^j.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct GaloisElem<const D: usize>(pub [u16; D]);

/// The paper's ring, Z_2^16\[x\]/(x^2 − x − 1).
pub type Gr2 = GaloisElem<2>;
/// The deployed ring, Z_2^16\[x\]/(x^4 − x − 1).
pub type Gr4 = GaloisElem<4>;

impl<const D: usize> Default for GaloisElem<D> {
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const D: usize> GaloisElem<D> {
    /// Rejects extension degrees whose x^D + x + 1 is not irreducible mod 2 (or is untested).
    const SUPPORTED: () = assert!(D == 2 || D == 4, "GR(2^16, d) is implemented for d = 2, 4");

    pub const ZERO: Self = GaloisElem([0; D]);
    pub const ONE: Self = {
        let mut c = [0u16; D];
        c[0] = 1;
        GaloisElem(c)
    };

    /// The constant `c` (an element of Z_2^16 embedded in the ring).
    pub fn constant(c: u16) -> Self {
        let mut e = Self::ZERO;
        e.0[0] = c;
        e
    }

    /// The class of x.
    pub fn x() -> Self {
        let mut e = Self::ZERO;
        e.0[1] = 1;
        e
    }

    /// A uniformly random element.
    pub fn random(rng: &mut impl CryptoRng) -> Self {
        let mut e = Self::ZERO;
        for c in e.0.iter_mut() {
            *c = rng.next_u32() as u16;
        }
        e
    }

    /// Multiplies every coefficient by a value of Z_2^16.
    pub fn scale(self, c: u16) -> Self {
        GaloisElem(self.0.map(|a| a.wrapping_mul(c)))
    }

    /// The constant coefficient, the one a packed dot product lands in.
    pub fn const_term(self) -> u16 {
        self.0[0]
    }

    /// The reduction mod 2 as a bit mask (bit j = coefficient of x^j mod 2), an element of F_{2^D}.
    pub fn mod2(self) -> u8 {
        self.0
            .iter()
            .enumerate()
            .fold(0u8, |m, (j, &c)| m | (((c & 1) as u8) << j))
    }

    /// Whether the element is invertible: its reduction mod 2 is non-zero, since that reduction
    /// lies in the field F_{2^D}.
    pub fn is_unit(self) -> bool {
        self.mod2() != 0
    }

    /// The inverse, if it is a unit: the inverse in F_{2^D} (by search over its 2^D elements)
    /// lifted by Newton's iteration y ← y·(2 − a·y), which doubles the correct low bits each
    /// step (1 → 2 → 4 → 8 → 16).
    pub fn inv(self) -> Option<Self> {
        if !self.is_unit() {
            return None;
        }
        let mut y = (1u8..1 << D)
            .map(Self::from_bits)
            .find(|&y| self.mul(y).mod2() == 1)?;
        let two = Self::constant(2);
        for _ in 0..4 {
            y = y.mul(two.sub(self.mul(y)));
        }
        debug_assert_eq!(self.mul(y), Self::ONE);
        Some(y)
    }

    /// The element whose coefficients are the bits of `bits` (a lift of an element of F_{2^D}).
    fn from_bits(bits: u8) -> Self {
        GaloisElem(std::array::from_fn(|j| ((bits >> j) & 1) as u16))
    }
}

impl<const D: usize> Add for GaloisElem<D> {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        GaloisElem(std::array::from_fn(|j| self.0[j].wrapping_add(o.0[j])))
    }
}

impl<const D: usize> Sub for GaloisElem<D> {
    type Output = Self;
    fn sub(self, o: Self) -> Self {
        GaloisElem(std::array::from_fn(|j| self.0[j].wrapping_sub(o.0[j])))
    }
}

impl<const D: usize> Neg for GaloisElem<D> {
    type Output = Self;
    fn neg(self) -> Self {
        GaloisElem(self.0.map(u16::wrapping_neg))
    }
}

impl<const D: usize> Mul for GaloisElem<D> {
    type Output = Self;
    /// Product mod f: schoolbook into 2D − 1 coefficients, then x^k = x^(k−D)·(x + 1) from the
    /// top down (each step only touches lower powers, so one pass suffices).
    fn mul(self, o: Self) -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::SUPPORTED;
        let mut t = [0u16; 8];
        for i in 0..D {
            for j in 0..D {
                t[i + j] = t[i + j].wrapping_add(self.0[i].wrapping_mul(o.0[j]));
            }
        }
        for k in (D..2 * D - 1).rev() {
            let c = t[k];
            t[k - D + 1] = t[k - D + 1].wrapping_add(c);
            t[k - D] = t[k - D].wrapping_add(c);
        }
        GaloisElem(std::array::from_fn(|j| t[j]))
    }
}

/// The evaluation point of party `party`: 1, x and x + 1 for parties 0, 1, 2 (the secret is
/// at 0).
pub fn eval_point<const D: usize>(party: usize) -> GaloisElem<D> {
    match party {
        0 => GaloisElem::ONE,
        1 => GaloisElem::x(),
        2 => GaloisElem::x().add(GaloisElem::ONE),
        _ => panic!("party {party} is not one of 0, 1, 2"),
    }
}

/// Lagrange coefficients at 0 for the given distinct points: λ_i = Π_{j≠i} α_j / (α_j − α_i), so
/// that P(0) = Σ_i λ_i P(α_i) for every P of degree < points.len(). `None` if some difference
/// is not a unit (the points are not an exceptional sequence).
pub fn lagrange_at_zero<const D: usize>(points: &[GaloisElem<D>]) -> Option<Vec<GaloisElem<D>>> {
    points
        .iter()
        .enumerate()
        .map(|(i, &ai)| {
            points
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .try_fold(GaloisElem::ONE, |acc, (_, &aj)| {
                    Some(acc.mul(aj).mul(aj.sub(ai).inv()?))
                })
        })
        .collect()
}

/// Party `party`'s Lagrange coefficient at 0 over all three points. A product of two degree-1
/// sharings has degree 2, so λ_party times the party's product share is its additive share of
/// the product (Section 4.3.2, eq. 3).
pub fn product_lagrange<const D: usize>(party: usize) -> GaloisElem<D> {
    let points: [GaloisElem<D>; 3] = std::array::from_fn(eval_point);
    lagrange_at_zero(&points).expect("1, x, x + 1 form an exceptional sequence")[party]
}

/// How d code entries are laid into one ring element's coefficients (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Packing {
    /// Coefficient j holds entry j of the block: the query side.
    Plain,
    /// Coefficient j holds entry (−j) mod d of the block: the gallery side.
    Reversed,
}

impl Packing {
    /// The block entry that coefficient `j` holds.
    fn source(self, j: usize, d: usize) -> usize {
        match self {
            Packing::Plain => j,
            Packing::Reversed => (d - j) % d,
        }
    }
}

/// Ring elements needed for `len` code entries: ⌈len / D⌉ (the last one zero-padded).
pub fn elems_for<const D: usize>(len: usize) -> usize {
    len.div_ceil(D)
}

/// Packs one code of `values.len()` entries into ⌈len / D⌉ ring elements, padding with zeros.
/// Zero entries add nothing to a dot product, so padding never changes the result.
pub fn pack<const D: usize>(values: &[u16], packing: Packing) -> Vec<GaloisElem<D>> {
    values
        .chunks(D)
        .map(|block| {
            GaloisElem(std::array::from_fn(|j| {
                block.get(packing.source(j, D)).copied().unwrap_or(0)
            }))
        })
        .collect()
}

/// Inverse of [`pack`]: the first `len` entries.
pub fn unpack<const D: usize>(elems: &[GaloisElem<D>], len: usize, packing: Packing) -> Vec<u16> {
    let mut out = vec![0u16; elems.len() * D];
    for (e, block) in elems.iter().zip(out.chunks_mut(D)) {
        for j in 0..D {
            block[packing.source(j, D)] = e.0[j];
        }
    }
    out.truncate(len);
    out
}

/// One party's Shamir shares of a vector of ring elements, stored as their coefficients
/// (`coefs[e·D + j]` is coefficient j of element e): one 16-bit word per packed code entry,
/// half of a replicated share's two words.
#[derive(Clone, PartialEq, Eq)]
pub struct ShamirVec<const D: usize> {
    pub coefs: Vec<u16>,
}

impl<const D: usize> ShamirVec<D> {
    pub fn from_elems(elems: &[GaloisElem<D>]) -> Self {
        ShamirVec {
            coefs: elems.iter().flat_map(|e| e.0).collect(),
        }
    }

    /// Number of ring elements.
    pub fn len(&self) -> usize {
        self.coefs.len() / D
    }

    pub fn is_empty(&self) -> bool {
        self.coefs.is_empty()
    }

    pub fn elem(&self, e: usize) -> GaloisElem<D> {
        GaloisElem(std::array::from_fn(|j| self.coefs[e * D + j]))
    }

    pub fn elems(&self) -> impl Iterator<Item = GaloisElem<D>> + '_ {
        self.coefs
            .chunks_exact(D)
            .map(|c| GaloisElem(std::array::from_fn(|j| c[j])))
    }
}

/// Dealer side: degree-1 Shamir shares of `secrets`. For each secret s a fresh uniform r gives
/// P(X) = s + r·X, and party i receives P(α_i); as α_i is a unit, each single share is uniform.
pub fn share_vec<const D: usize>(
    secrets: &[GaloisElem<D>],
    rng: &mut impl CryptoRng,
) -> [ShamirVec<D>; 3] {
    let points: [GaloisElem<D>; 3] = std::array::from_fn(eval_point);
    let mut out: [Vec<GaloisElem<D>>; 3] =
        std::array::from_fn(|_| Vec::with_capacity(secrets.len()));
    for &s in secrets {
        let r = GaloisElem::random(rng);
        for (share, &a) in out.iter_mut().zip(&points) {
            share.push(s.add(r.mul(a)));
        }
    }
    out.map(|v| ShamirVec::from_elems(&v))
}

/// Dealer side: shares `n_codes` codes of `len` entries each (`values[c·len + i]`), each code
/// packed separately with `packing` into ⌈len / D⌉ elements, so codes stay element-aligned.
pub fn share_codes<const D: usize>(
    values: &[u16],
    n_codes: usize,
    len: usize,
    packing: Packing,
    rng: &mut impl CryptoRng,
) -> [ShamirVec<D>; 3] {
    assert_eq!(
        values.len(),
        n_codes * len,
        "values do not hold n_codes * len entries"
    );
    let elems: Vec<GaloisElem<D>> = if len == 0 {
        Vec::new()
    } else {
        values
            .chunks(len)
            .flat_map(|code| pack::<D>(code, packing))
            .collect()
    };
    share_vec(&elems, rng)
}

/// Recombines the secrets from the shares of two distinct parties, (party, share) each:
/// degree-1 Lagrange interpolation at 0 over their two points.
pub fn reconstruct<const D: usize>(
    a: (usize, &ShamirVec<D>),
    b: (usize, &ShamirVec<D>),
) -> Vec<GaloisElem<D>> {
    assert_ne!(a.0, b.0, "reconstruction needs two distinct parties");
    assert_eq!(a.1.coefs.len(), b.1.coefs.len(), "share length mismatch");
    let lambda = lagrange_at_zero(&[eval_point::<D>(a.0), eval_point::<D>(b.0)])
        .expect("party points form an exceptional sequence");
    a.1.elems()
        .zip(b.1.elems())
        .map(|(x, y)| lambda[0].mul(x).add(lambda[1].mul(y)))
        .collect()
}

/// Shows the size only: shares are secret material and must not reach a log.
impl<const D: usize> std::fmt::Debug for ShamirVec<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShamirVec(len {}, values hidden)", self.coefs.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    fn rand_elem<const D: usize>(rng: &mut ChaCha12Rng) -> GaloisElem<D> {
        GaloisElem::random(rng)
    }

    fn axioms<const D: usize>(seed: u64) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let (a, b, c) = (
            rand_elem::<D>(&mut rng),
            rand_elem(&mut rng),
            rand_elem(&mut rng),
        );
        prop_assert_eq!(a.mul(b).mul(c), a.mul(b.mul(c)));
        prop_assert_eq!(a.mul(b), b.mul(a));
        prop_assert_eq!(a.mul(b.add(c)), a.mul(b).add(a.mul(c)));
        prop_assert_eq!(a.add(b).sub(b), a);
        prop_assert_eq!(a.add(a.neg()), GaloisElem::ZERO);
        prop_assert_eq!(a.mul(GaloisElem::ONE), a);
        prop_assert_eq!(a.mul(GaloisElem::constant(3)), a.scale(3));
        // The constant-term identity behind the packing, on arbitrary (not just packed) elements.
        let want = (0..D).fold(0u16, |s, j| {
            s.wrapping_add(a.0[j].wrapping_mul(b.0[(D - j) % D]))
        });
        prop_assert_eq!(a.mul(b).const_term(), want);
        match a.inv() {
            Some(y) => prop_assert_eq!(a.mul(y), GaloisElem::ONE),
            None => prop_assert!(!a.is_unit()),
        }
        Ok(())
    }

    /// x^D − x − 1 ≡ 0, computing x^D by repeated multiplication.
    fn modulus_vanishes<const D: usize>() {
        let x = GaloisElem::<D>::x();
        let xd = (1..D).fold(x, |p, _| p.mul(x));
        assert_eq!(xd.sub(x).sub(GaloisElem::ONE), GaloisElem::ZERO);
    }

    /// Every non-zero element of F_{2^D} has an inverse (x^D + x + 1 is irreducible), and
    /// exactly the units have one in the ring.
    fn field_mod2<const D: usize>() {
        for bits in 0u8..1 << D {
            let e = GaloisElem::<D>::from_bits(bits);
            assert_eq!(e.inv().is_some(), bits != 0, "element {bits:#b}");
            // Adding an even part does not change invertibility.
            let shifted = e.add(GaloisElem(std::array::from_fn(|j| 2 * (j as u16 + 7))));
            assert_eq!(
                shifted.inv().map(|y| shifted.mul(y)),
                (bits != 0).then_some(GaloisElem::ONE)
            );
        }
    }

    fn exceptional<const D: usize>() {
        let pts: Vec<GaloisElem<D>> = std::iter::once(GaloisElem::ZERO)
            .chain((0..3).map(eval_point))
            .collect();
        for i in 0..4 {
            for j in 0..4 {
                if i != j {
                    let d = pts[i].sub(pts[j]);
                    assert_eq!(
                        d.mul(d.inv().expect("difference is a unit")),
                        GaloisElem::ONE
                    );
                }
            }
        }
        // Σ λ_i P(α_i) = P(0) for P of degree 2, and Σ λ_i = 1 (P = 1).
        let lam: [GaloisElem<D>; 3] = std::array::from_fn(product_lagrange);
        let sum = lam.iter().fold(GaloisElem::ZERO, |s, &l| s.add(l));
        assert_eq!(sum, GaloisElem::ONE);
        let mut rng = ChaCha12Rng::seed_from_u64(D as u64);
        let (p0, p1, p2) = (
            rand_elem::<D>(&mut rng),
            rand_elem(&mut rng),
            rand_elem(&mut rng),
        );
        let at = |a: GaloisElem<D>| p0.add(p1.mul(a)).add(p2.mul(a).mul(a));
        let interp = (0..3).fold(GaloisElem::ZERO, |s, i| {
            s.add(lam[i].mul(at(eval_point(i))))
        });
        assert_eq!(interp, p0);
    }

    #[test]
    fn modulus_field_and_exceptional_points() {
        modulus_vanishes::<2>();
        modulus_vanishes::<4>();
        field_mod2::<2>();
        field_mod2::<4>();
        exceptional::<2>();
        exceptional::<4>();
    }

    /// c₀(pack_plain(u) · pack_reversed(v)) = ⟨u, v⟩ for every u, v ∈ S^D, S a set of small and
    /// edge values, exhaustively; and the plain-plain product is NOT the dot product for D = 4.
    fn packing_exhaustive<const D: usize>(set: &[u16]) {
        let n = set.len().pow(D as u32);
        let vec_of = |mut i: usize| -> Vec<u16> {
            (0..D)
                .map(|_| {
                    let v = set[i % set.len()];
                    i /= set.len();
                    v
                })
                .collect()
        };
        let mut plain_plain_differs = false;
        for iu in 0..n {
            let u = vec_of(iu);
            let a = pack::<D>(&u, Packing::Plain)[0];
            assert_eq!(unpack(&[a], D, Packing::Plain), u);
            for iv in 0..n {
                let v = vec_of(iv);
                let b = pack::<D>(&v, Packing::Reversed)[0];
                assert_eq!(unpack(&[b], D, Packing::Reversed), v);
                let dot = u
                    .iter()
                    .zip(&v)
                    .fold(0u16, |s, (&x, &y)| s.wrapping_add(x.wrapping_mul(y)));
                assert_eq!(a.mul(b).const_term(), dot, "u = {u:?}, v = {v:?}");
                let b_plain = pack::<D>(&v, Packing::Plain)[0];
                plain_plain_differs |= a.mul(b_plain).const_term() != dot;
            }
        }
        assert_eq!(
            plain_plain_differs,
            D == 4,
            "plain packing works only for D = 2"
        );
    }

    #[test]
    fn packing_gives_dot_product_exhaustively() {
        let masked = [0u16, 1, 0xffff];
        packing_exhaustive::<2>(&masked);
        packing_exhaustive::<4>(&masked);
        let edges = [0u16, 1, 2, 0x7fff, 0x8000, 0xffff];
        packing_exhaustive::<2>(&edges);
        packing_exhaustive::<4>(&edges);
    }

    #[test]
    fn pack_pads_with_zeros() {
        let v = [5u16, 6, 7, 8, 9];
        let p4 = pack::<4>(&v, Packing::Reversed);
        assert_eq!(p4, vec![GaloisElem([5, 8, 7, 6]), GaloisElem([9, 0, 0, 0])]);
        assert_eq!(unpack(&p4, 5, Packing::Reversed), v.to_vec());
        let p2 = pack::<2>(&v, Packing::Plain);
        assert_eq!(
            p2,
            vec![GaloisElem([5, 6]), GaloisElem([7, 8]), GaloisElem([9, 0])]
        );
        assert_eq!(elems_for::<4>(5), 2);
        assert_eq!(elems_for::<2>(4), 2);
    }

    fn shamir<const D: usize>(seed: u64, raw: &[u16]) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let secrets = pack::<D>(raw, Packing::Plain);
        let shares = share_vec(&secrets, &mut rng);
        for s in &shares {
            // One word per packed entry: the storage the sharing was chosen for.
            prop_assert_eq!(s.coefs.len(), elems_for::<D>(raw.len()) * D);
        }
        for (i, j) in [(0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1)] {
            let got = reconstruct((i, &shares[i]), (j, &shares[j]));
            prop_assert_eq!(&got, &secrets);
            prop_assert_eq!(unpack(&got, raw.len(), Packing::Plain), raw.to_vec());
        }
        // Fresh randomness: sharing again gives other shares of the same secrets.
        let again = share_vec(&secrets, &mut rng);
        if raw.len() >= 4 {
            prop_assert_ne!(&again[0], &shares[0]);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn ring_axioms(seed: u64) {
            axioms::<2>(seed)?;
            axioms::<4>(seed)?;
        }

        #[test]
        fn shamir_any_two_reconstruct(
            seed: u64,
            raw in prop::collection::vec(any::<u16>(), 0..40),
        ) {
            shamir::<2>(seed, &raw)?;
            shamir::<4>(seed, &raw)?;
        }
    }

    #[test]
    fn share_codes_packs_each_code_separately() {
        let mut rng = ChaCha12Rng::seed_from_u64(3);
        let values: Vec<u16> = (0..2 * 5).map(|_| rng.random_range(0..3)).collect();
        let s = share_codes::<4>(&values, 2, 5, Packing::Reversed, &mut rng);
        let got = reconstruct((2, &s[2]), (0, &s[0]));
        assert_eq!(got.len(), 4);
        assert_eq!(
            unpack(&got[..2], 5, Packing::Reversed),
            values[..5].to_vec()
        );
        assert_eq!(
            unpack(&got[2..], 5, Packing::Reversed),
            values[5..].to_vec()
        );
    }
}
