//! Replicated (rep3, ABY3) arithmetic shares over Z_2^k.
//!
//! A value x is split into components x = x_0 + x_1 + x_2 mod 2^k; party i holds x_i (`own`)
//! and x_{i-1} (`prev`), so any two parties together know all three components and any single
//! party sees two uniformly random values.

use rand_core::CryptoRng;

use crate::ring::{mask_slice, RingElem};

/// One party's replicated shares of a vector of ring elements.
#[derive(Clone, PartialEq, Eq)]
pub struct Rep3Vec<T> {
    /// x_i for this party i.
    pub own: Vec<T>,
    /// x_{i-1}.
    pub prev: Vec<T>,
}

/// One party's additive share (its component x_i only), e.g. the local result of a dot product
/// before [`crate::protocol::reshare()`] turns it back into a replicated share.
#[derive(Clone, PartialEq, Eq)]
pub struct AddVec<T> {
    pub own: Vec<T>,
}

impl<T: RingElem> Rep3Vec<T> {
    pub fn zeros(n: usize) -> Self {
        Rep3Vec {
            own: vec![T::ZERO; n],
            prev: vec![T::ZERO; n],
        }
    }

    pub fn len(&self) -> usize {
        self.own.len()
    }

    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// Reduces both components to Z_2^k.
    pub fn reduce(&mut self, k: u32) {
        mask_slice(&mut self.own, k);
        mask_slice(&mut self.prev, k);
    }

    pub fn add(&self, other: &Self) -> Self {
        assert_eq!(self.len(), other.len(), "rep3 add: length mismatch");
        Rep3Vec {
            own: zip(&self.own, &other.own, T::wrapping_add),
            prev: zip(&self.prev, &other.prev, T::wrapping_add),
        }
    }

    pub fn sub(&self, other: &Self) -> Self {
        assert_eq!(self.len(), other.len(), "rep3 sub: length mismatch");
        Rep3Vec {
            own: zip(&self.own, &other.own, T::wrapping_sub),
            prev: zip(&self.prev, &other.prev, T::wrapping_sub),
        }
    }

    pub fn neg(&self) -> Self {
        Rep3Vec {
            own: self.own.iter().map(|x| x.wrapping_neg()).collect(),
            prev: self.prev.iter().map(|x| x.wrapping_neg()).collect(),
        }
    }

    /// Multiplies by public constants, element-wise (local, no interaction).
    pub fn mul_public(&self, c: &[T]) -> Self {
        assert_eq!(self.len(), c.len(), "rep3 mul_public: length mismatch");
        Rep3Vec {
            own: zip(&self.own, c, T::wrapping_mul),
            prev: zip(&self.prev, c, T::wrapping_mul),
        }
    }

    /// Adds public values, element-wise. Only component 0 carries a public value, so party 0
    /// adds it to `own` and party 1 to `prev`; party 2 holds neither copy of x_0.
    pub fn add_public(&mut self, party: usize, k: u32, c: &[T]) {
        assert_eq!(self.len(), c.len(), "rep3 add_public: length mismatch");
        let target = match party {
            0 => &mut self.own,
            1 => &mut self.prev,
            _ => return,
        };
        for (x, &v) in target.iter_mut().zip(c) {
            *x = x.wrapping_add(v);
        }
        mask_slice(target, k);
    }
}

fn zip<T: RingElem>(a: &[T], b: &[T], f: impl Fn(T, T) -> T) -> Vec<T> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

/// Dealer side: splits `values` (reduced to Z_2^k) into the three parties' replicated shares.
pub fn share_vec<T: RingElem>(values: &[T], k: u32, rng: &mut impl CryptoRng) -> [Rep3Vec<T>; 3] {
    let n = values.len();
    let mut c0: Vec<T> = (0..n).map(|_| T::from_u64(rng.next_u64())).collect();
    let mut c1: Vec<T> = (0..n).map(|_| T::from_u64(rng.next_u64())).collect();
    let mut c2: Vec<T> = values
        .iter()
        .zip(c0.iter().zip(&c1))
        .map(|(&v, (&a, &b))| v.wrapping_sub(a).wrapping_sub(b))
        .collect();
    mask_slice(&mut c0, k);
    mask_slice(&mut c1, k);
    mask_slice(&mut c2, k);
    [
        Rep3Vec {
            own: c0.clone(),
            prev: c2.clone(),
        },
        Rep3Vec {
            own: c1.clone(),
            prev: c0,
        },
        Rep3Vec { own: c2, prev: c1 },
    ]
}

/// Dealer side (and tests): recombines the three parties' shares into values of Z_2^k.
///
/// Uses only the `own` components; [`consistent`] checks the replication itself.
pub fn reconstruct<T: RingElem>(shares: &[Rep3Vec<T>; 3], k: u32) -> Vec<T> {
    let mut out: Vec<T> = shares[0]
        .own
        .iter()
        .zip(shares[1].own.iter().zip(&shares[2].own))
        .map(|(&a, (&b, &c))| a.wrapping_add(b).wrapping_add(c))
        .collect();
    mask_slice(&mut out, k);
    out
}

/// Whether every party's `prev` equals its predecessor's `own` in Z_2^k.
pub fn consistent<T: RingElem>(shares: &[Rep3Vec<T>; 3], k: u32) -> bool {
    (0..3).all(|i| {
        let p = &shares[(i + 2) % 3];
        shares[i].prev.len() == p.own.len()
            && shares[i]
                .prev
                .iter()
                .zip(&p.own)
                .all(|(&a, &b)| a.mask_to(k) == b.mask_to(k))
    })
}

/// Shows the size only: shares are secret material and must not reach a log.
impl<T> std::fmt::Debug for Rep3Vec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rep3Vec(len {}, values hidden)", self.own.len())
    }
}

/// Shows the size only: shares are secret material and must not reach a log.
impl<T> std::fmt::Debug for AddVec<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AddVec(len {}, values hidden)", self.own.len())
    }
}

/// The eq. (6) preprocessing of one party's share: (x_i + x_{i−1}, x_{i−1}).
pub fn prepare<T: RingElem>(share: &Rep3Vec<T>) -> (Vec<T>, Vec<T>) {
    prepare_owned(share.clone())
}

/// [`prepare`] without copying: the `own` buffer becomes `x_i + x_{i-1}` in place. For galleries,
/// which are large.
pub fn prepare_owned<T: RingElem>(share: Rep3Vec<T>) -> (Vec<T>, Vec<T>) {
    let Rep3Vec { mut own, prev } = share;
    for (a, &b) in own.iter_mut().zip(&prev) {
        *a = a.wrapping_add(b);
    }
    (own, prev)
}

#[cfg(test)]
mod tests {
    #[test]
    fn debug_output_hides_share_values() {
        let x = Rep3Vec {
            own: vec![12345u16, 777],
            prev: vec![54321u16, 888],
        };
        let shown = format!("{x:?} {:?}", AddVec { own: vec![4242u16] });
        for secret in ["12345", "777", "54321", "888", "4242"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        assert!(shown.contains("len 2"), "{shown}");
    }

    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn share_reconstruct_and_linear_ops(k in 1u32..=64, seed: u64, raw in proptest::collection::vec(any::<u64>(), 0..40), c in any::<u64>()) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let m = crate::ring::mask(k);
            let xs: Vec<u64> = raw.iter().map(|v| v & m).collect();
            let ys: Vec<u64> = raw.iter().rev().map(|v| v.rotate_left(7) & m).collect();
            let sx = share_vec(&xs, k, &mut rng);
            let sy = share_vec(&ys, k, &mut rng);
            prop_assert!(consistent(&sx, k));
            prop_assert_eq!(reconstruct(&sx, k), xs.clone());
            let sum: [Rep3Vec<u64>; 3] = std::array::from_fn(|i| sx[i].add(&sy[i]));
            let diff: [Rep3Vec<u64>; 3] = std::array::from_fn(|i| sx[i].sub(&sy[i]));
            let neg: [Rep3Vec<u64>; 3] = std::array::from_fn(|i| sx[i].neg());
            let cs = vec![c; xs.len()];
            let mut plus_c = sx.clone();
            for (i, s) in plus_c.iter_mut().enumerate() { s.add_public(i, k, &cs); }
            prop_assert!(consistent(&plus_c, k));
            for j in 0..xs.len() {
                prop_assert_eq!(reconstruct(&sum, k)[j], xs[j].wrapping_add(ys[j]) & m);
                prop_assert_eq!(reconstruct(&diff, k)[j], xs[j].wrapping_sub(ys[j]) & m);
                prop_assert_eq!(reconstruct(&neg, k)[j], xs[j].wrapping_neg() & m);
                prop_assert_eq!(reconstruct(&plus_c, k)[j], xs[j].wrapping_add(c) & m);
            }
        }
    }

    #[test]
    fn narrow_storage_reduces_to_k() {
        let mut rng = ChaCha12Rng::seed_from_u64(1);
        let xs: Vec<u16> = vec![0, 1, 0x7fff & 0x1f, 0x1f];
        let s = share_vec(&xs, 5, &mut rng);
        for p in &s {
            assert!(p.own.iter().chain(&p.prev).all(|&v| v < 32));
        }
        assert_eq!(reconstruct(&s, 5), xs);
    }
}
