//! The prime field F_p with p = 2^16 − 17 = 65519 (Section 4.3.2): field arithmetic, replicated
//! (rep3) shares mod p, degree-1 Shamir shares, and the path from a Shamir dot product to a
//! replicated share mod p.
//!
//! Party numbering: the paper's parties 1, 2, 3 are code parties 0, 1, 2, and the paper's
//! components x_1, x_2, x_3 are code components x_0, x_1, x_2. As in [`super::rep3`], party i
//! holds x_i (`own`) and x_{i−1} (`prev`), with x = x_0 + x_1 + x_2 mod p. For Shamir sharing,
//! code party i holds the evaluation at the point i + 1 (points 1, 2, 3).
//!
//! Elements are stored canonically in `u16` (0..p). Products and dot products accumulate in
//! u32/u64 and are reduced once at the end (deferred reduction).
//!
//! The one interactive step of that path, the reshare mod p, is a protocol
//! (`protocol::reshare::reshare_p`); this module is local arithmetic only.

use rand_core::CryptoRng;

/// The field modulus p = 2^16 − 17.
pub const P: u16 = 65519;
const P32: u32 = P as u32;
const P64: u64 = P as u64;
/// ℓ = ⌈log2 p⌉, the bit width of a canonical element.
pub const L: u32 = 16;

/// a + b mod p for canonical a, b.
#[inline]
pub fn add(a: u16, b: u16) -> u16 {
    let s = a as u32 + b as u32;
    (if s >= P32 { s - P32 } else { s }) as u16
}

/// a − b mod p for canonical a, b.
#[inline]
pub fn sub(a: u16, b: u16) -> u16 {
    let s = a as u32 + P32 - b as u32;
    (if s >= P32 { s - P32 } else { s }) as u16
}

/// −a mod p for canonical a.
#[inline]
pub fn neg(a: u16) -> u16 {
    sub(0, a)
}

/// a · b mod p.
#[inline]
pub fn mul(a: u16, b: u16) -> u16 {
    reduce_u32(a as u32 * b as u32)
}

/// Any u32 reduced to F_p.
#[inline]
pub fn reduce_u32(x: u32) -> u16 {
    (x % P32) as u16
}

/// Any u64 reduced to F_p.
#[inline]
pub fn reduce_u64(x: u64) -> u16 {
    (x % P64) as u16
}

/// a^e mod p.
pub fn pow(a: u16, mut e: u32) -> u16 {
    let (mut base, mut acc) = (reduce_u32(a as u32), 1u16);
    while e > 0 {
        if e & 1 == 1 {
            acc = mul(acc, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    acc
}

/// The multiplicative inverse a^(p−2) (Fermat); `None` for 0.
pub fn inv(a: u16) -> Option<u16> {
    (reduce_u32(a as u32) != 0).then(|| pow(a, P32 - 2))
}

/// Inner product of canonical vectors mod p, reduced once: each product is below 2^32, so a
/// u64 accumulator holds 2^32 of them; longer inputs are reduced in chunks.
pub fn dot(a: &[u16], b: &[u16]) -> u16 {
    assert_eq!(a.len(), b.len(), "F_p dot: length mismatch");
    const CHUNK: usize = 1 << 31;
    let mut acc = 0u64;
    for (ca, cb) in a.chunks(CHUNK).zip(b.chunks(CHUNK)) {
        let s: u64 = ca.iter().zip(cb).map(|(&x, &y)| x as u64 * y as u64).sum();
        acc = reduce_u64(acc + reduce_u64(s) as u64) as u64;
    }
    acc as u16
}

/// One party's replicated shares mod p. Invariant: every component is canonical (below p).
#[derive(Clone, PartialEq, Eq)]
pub struct Rep3Fp {
    /// x_i for this party i.
    pub own: Vec<u16>,
    /// x_{i−1}.
    pub prev: Vec<u16>,
}

impl Rep3Fp {
    pub fn zeros(n: usize) -> Self {
        Rep3Fp {
            own: vec![0; n],
            prev: vec![0; n],
        }
    }

    pub fn len(&self) -> usize {
        self.own.len()
    }

    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    pub fn add(&self, other: &Self) -> Self {
        self.zip(other, add)
    }

    pub fn sub(&self, other: &Self) -> Self {
        self.zip(other, sub)
    }

    pub fn neg(&self) -> Self {
        Rep3Fp {
            own: self.own.iter().map(|&x| neg(x)).collect(),
            prev: self.prev.iter().map(|&x| neg(x)).collect(),
        }
    }

    /// Multiplies by public field elements, element-wise (local).
    pub fn mul_public(&self, c: &[u16]) -> Self {
        assert_eq!(self.len(), c.len(), "F_p mul_public: length mismatch");
        Rep3Fp {
            own: self.own.iter().zip(c).map(|(&x, &y)| mul(x, y)).collect(),
            prev: self.prev.iter().zip(c).map(|(&x, &y)| mul(x, y)).collect(),
        }
    }

    /// Adds public field elements: component 0 carries them (party 0's `own`, party 1's `prev`).
    pub fn add_public(&mut self, party: usize, c: &[u16]) {
        assert_eq!(self.len(), c.len(), "F_p add_public: length mismatch");
        let target = match party {
            0 => &mut self.own,
            1 => &mut self.prev,
            _ => return,
        };
        for (x, &v) in target.iter_mut().zip(c) {
            *x = add(*x, reduce_u32(v as u32));
        }
    }

    fn zip(&self, other: &Self, f: impl Fn(u16, u16) -> u16) -> Self {
        assert_eq!(self.len(), other.len(), "F_p shares: length mismatch");
        Rep3Fp {
            own: self
                .own
                .iter()
                .zip(&other.own)
                .map(|(&a, &b)| f(a, b))
                .collect(),
            prev: self
                .prev
                .iter()
                .zip(&other.prev)
                .map(|(&a, &b)| f(a, b))
                .collect(),
        }
    }
}

/// A uniform field element from a CSPRNG (64 random bits reduced: bias below 2^−47).
fn random_fp(rng: &mut impl CryptoRng) -> u16 {
    reduce_u64(rng.next_u64())
}

/// Dealer side: replicated shares mod p of `values` (each reduced mod p first).
pub fn share_fp(values: &[u16], rng: &mut impl CryptoRng) -> [Rep3Fp; 3] {
    let c0: Vec<u16> = values.iter().map(|_| random_fp(rng)).collect();
    let c1: Vec<u16> = values.iter().map(|_| random_fp(rng)).collect();
    let c2: Vec<u16> = values
        .iter()
        .zip(c0.iter().zip(&c1))
        .map(|(&v, (&a, &b))| sub(sub(reduce_u32(v as u32), a), b))
        .collect();
    [
        Rep3Fp {
            own: c0.clone(),
            prev: c2.clone(),
        },
        Rep3Fp {
            own: c1.clone(),
            prev: c0,
        },
        Rep3Fp { own: c2, prev: c1 },
    ]
}

/// Dealer side (and tests): x_0 + x_1 + x_2 mod p from the `own` components.
pub fn reconstruct_fp(shares: &[Rep3Fp; 3]) -> Vec<u16> {
    shares[0]
        .own
        .iter()
        .zip(shares[1].own.iter().zip(&shares[2].own))
        .map(|(&a, (&b, &c))| add(add(a, b), c))
        .collect()
}

/// Whether every party's `prev` is its predecessor's `own` and every component is canonical.
pub fn consistent_fp(shares: &[Rep3Fp; 3]) -> bool {
    (0..3).all(|i| {
        let s = &shares[i];
        s.prev == shares[(i + 2) % 3].own && s.own.iter().chain(&s.prev).all(|&v| v < P)
    })
}

/// Lagrange coefficients at 0 for the points 1, 2, 3 (code parties 0, 1, 2): 3, −3, 1. They
/// recombine any polynomial of degree ≤ 2, so they turn the degree-2 sharing of a product (or
/// dot product) into additive shares.
pub const LAGRANGE_AT_ZERO: [u16; 3] = [3, P - 3, 1];

/// Dealer side: degree-1 Shamir shares f(1), f(2), f(3) of each value, f(X) = v + r·X with r
/// uniform. Returns the shares of code parties 0, 1, 2.
pub fn shamir_share(values: &[u16], rng: &mut impl CryptoRng) -> [Vec<u16>; 3] {
    let mut out: [Vec<u16>; 3] = Default::default();
    for &v in values {
        let r = random_fp(rng);
        let v = reduce_u32(v as u32);
        for (i, o) in out.iter_mut().enumerate() {
            o.push(add(v, mul(r, i as u16 + 1)));
        }
    }
    out
}

/// Reconstructs degree-1 Shamir shares from any two distinct parties `(party, shares)`: the
/// Lagrange coefficient of point x_i at 0 is x_j / (x_j − x_i).
///
/// Panics if the two parties are the same or out of range (a caller bug).
pub fn shamir_reconstruct(a: (usize, &[u16]), b: (usize, &[u16])) -> Vec<u16> {
    assert!(
        a.0 < 3 && b.0 < 3 && a.0 != b.0,
        "need two distinct parties"
    );
    assert_eq!(a.1.len(), b.1.len(), "Shamir shares: length mismatch");
    let (xa, xb) = (a.0 as u16 + 1, b.0 as u16 + 1);
    let la = mul(xb, inv(sub(xb, xa)).expect("distinct points"));
    let lb = mul(xa, inv(sub(xa, xb)).expect("distinct points"));
    a.1.iter()
        .zip(b.1)
        .map(|(&ya, &yb)| add(mul(la, ya), mul(lb, yb)))
        .collect()
}

/// Local step of the Shamir dot product: this party's evaluations of the degree-2 products,
/// one per row of `rows` (row-major, `len` elements each), against `query`. Reduced once per
/// row (see [`dot`]).
pub fn shamir_dot_local(query: &[u16], rows: &[u16], len: usize) -> Vec<u16> {
    assert_eq!(query.len(), len, "Shamir dot: query length is not len");
    assert!(
        len == 0 || rows.len().is_multiple_of(len),
        "Shamir dot: rows are not a multiple of len"
    );
    if len == 0 {
        return Vec::new();
    }
    rows.chunks_exact(len).map(|r| dot(query, r)).collect()
}

/// Section 4.3.2: degree-2 Shamir shares (evaluations at point party + 1) to additive shares
/// mod p, by multiplying with this party's Lagrange coefficient at 0. Local.
pub fn shamir_to_additive(party: usize, degree2: &[u16]) -> Vec<u16> {
    let l = LAGRANGE_AT_ZERO[party];
    degree2.iter().map(|&v| mul(l, v)).collect()
}

/// Shows the size only: shares are secret material and must not reach a log.
impl std::fmt::Debug for Rep3Fp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rep3Fp(len {}, values hidden)", self.own.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::{NetError, Transport};
    use crate::protocol::reshare::reshare_p;
    use crate::protocol::testutil::run_protocol;
    use crate::rand::Prss;
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    fn fp() -> impl Strategy<Value = u16> {
        prop_oneof![
            Just(0u16),
            Just(1),
            Just(P - 1),
            Just(P - 2),
            Just((P - 1) / 2),
            (0u16..P)
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn field_laws(a in fp(), b in fp(), c in fp()) {
            let (a64, b64) = (a as u64, b as u64);
            prop_assert_eq!(add(a, b) as u64, (a64 + b64) % P64);
            prop_assert_eq!(sub(a, b) as u64, (a64 + P64 - b64) % P64);
            prop_assert_eq!(mul(a, b) as u64, a64 * b64 % P64);
            prop_assert_eq!(add(a, neg(a)), 0);
            prop_assert_eq!(add(add(a, b), c), add(a, add(b, c)));
            prop_assert_eq!(mul(mul(a, b), c), mul(a, mul(b, c)));
            prop_assert_eq!(mul(a, add(b, c)), add(mul(a, b), mul(a, c)));
            prop_assert_eq!(mul(a, b), mul(b, a));
            match inv(a) {
                Some(i) => prop_assert_eq!(mul(a, i), 1),
                None => prop_assert_eq!(a, 0),
            }
        }

        #[test]
        fn replicated_share_reconstruct_and_linear_ops(seed: u64, xs in proptest::collection::vec(fp(), 0..40), c in fp()) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let ys: Vec<u16> = xs.iter().rev().copied().collect();
            let sx = share_fp(&xs, &mut rng);
            let sy = share_fp(&ys, &mut rng);
            prop_assert!(consistent_fp(&sx));
            prop_assert_eq!(reconstruct_fp(&sx), xs.clone());
            let sum: [Rep3Fp; 3] = std::array::from_fn(|i| sx[i].add(&sy[i]));
            let diff: [Rep3Fp; 3] = std::array::from_fn(|i| sx[i].sub(&sy[i]));
            let negd: [Rep3Fp; 3] = std::array::from_fn(|i| sx[i].neg());
            let cs = vec![c; xs.len()];
            let scaled: [Rep3Fp; 3] = std::array::from_fn(|i| sx[i].mul_public(&cs));
            let mut plus = sx.clone();
            for (i, s) in plus.iter_mut().enumerate() {
                s.add_public(i, &cs);
            }
            for s in [&sum, &diff, &negd, &scaled, &plus] {
                prop_assert!(consistent_fp(s));
            }
            for j in 0..xs.len() {
                prop_assert_eq!(reconstruct_fp(&sum)[j], add(xs[j], ys[j]));
                prop_assert_eq!(reconstruct_fp(&diff)[j], sub(xs[j], ys[j]));
                prop_assert_eq!(reconstruct_fp(&negd)[j], neg(xs[j]));
                prop_assert_eq!(reconstruct_fp(&scaled)[j], mul(xs[j], c));
                prop_assert_eq!(reconstruct_fp(&plus)[j], add(xs[j], c));
            }
        }

        #[test]
        fn shamir_reconstructs_from_any_two(seed: u64, xs in proptest::collection::vec(fp(), 0..40)) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let s = shamir_share(&xs, &mut rng);
            for (a, b) in [(0, 1), (0, 2), (1, 2), (2, 0)] {
                prop_assert_eq!(shamir_reconstruct((a, &s[a]), (b, &s[b])), xs.clone());
            }
        }

        #[test]
        fn shamir_dot_to_replicated(seed: u64, len in 1usize..300, rows in 0usize..5) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            // Masked bitvector entries (Section 4.1.1) and arbitrary field elements alike.
            let q: Vec<u16> = (0..len).map(|i| if i % 3 == 0 { rng.random_range(0..P) } else { [0, 1, P - 1][rng.random_range(0..3)] }).collect();
            let g: Vec<u16> = (0..len * rows).map(|_| rng.random_range(0..P)).collect();
            let want: Vec<u16> = (0..rows)
                .map(|r| ((0..len).map(|i| q[i] as u64 * g[r * len + i] as u64).sum::<u64>() % P64) as u16)
                .collect();
            let sq = shamir_share(&q, &mut rng);
            let sg = shamir_share(&g, &mut rng);
            let inputs: [(Vec<u16>, Vec<u16>); 3] = std::array::from_fn(|i| (sq[i].clone(), sg[i].clone()));
            let runs = run_protocol(inputs, move |net, prss, (q, g): &(Vec<u16>, Vec<u16>)| {
                let party = net.party();
                let d = shamir_dot_local(q, g, len);
                let z = shamir_to_additive(party, &d);
                (z.clone(), reshare_p(net, prss, &z).unwrap())
            });
            // The additive shares already sum to the dot product ...
            for (r, &w) in want.iter().enumerate() {
                let s = add(add(runs[0].out.0[r], runs[1].out.0[r]), runs[2].out.0[r]);
                prop_assert_eq!(s, w);
            }
            // ... and the resharing keeps the value, re-randomised, in one message each.
            let rep = [runs[0].out.1.clone(), runs[1].out.1.clone(), runs[2].out.1.clone()];
            prop_assert!(consistent_fp(&rep));
            prop_assert_eq!(reconstruct_fp(&rep), want);
            prop_assert!(runs.iter().all(|r| r.messages == 1));
        }
    }

    #[test]
    fn zero_share_masks_change_the_shares() {
        let z = vec![7u16; 32];
        let runs = run_protocol([z.clone(), z.clone(), z], |net, prss, z: &Vec<u16>| {
            (
                reshare_p(net, prss, z).unwrap(),
                reshare_p(net, prss, z).unwrap(),
            )
        });
        let a = [
            runs[0].out.0.clone(),
            runs[1].out.0.clone(),
            runs[2].out.0.clone(),
        ];
        let b = [
            runs[0].out.1.clone(),
            runs[1].out.1.clone(),
            runs[2].out.1.clone(),
        ];
        assert_eq!(reconstruct_fp(&a), vec![21; 32]);
        assert_eq!(reconstruct_fp(&b), vec![21; 32]);
        assert_ne!(a[0].own, b[0].own);
    }

    #[test]
    fn dot_defers_reduction_correctly_at_the_top() {
        let a = vec![P - 1; 5000];
        let want = (5000u64 * (P64 - 1) * (P64 - 1) % P64) as u16;
        assert_eq!(dot(&a, &a), want);
    }

    #[test]
    fn malformed_reshare_messages_are_protocol_errors() {
        for bad in [vec![0u8; 3], vec![0xff; 8]] {
            let out = crate::net::memory::run_three(move |mut t| {
                let mut prss = Prss::from_seeds(t.party(), [1; 16], [1; 16]);
                if t.party() == 0 {
                    let to = t.next();
                    t.send(to, bad.clone()).unwrap();
                    // Stay connected until the third party's first message, so that its sends
                    // (and the checked party's) cannot fail for a closed link instead.
                    let from = t.prev();
                    let _ = t.recv(from);
                    return None;
                }
                Some(reshare_p(&mut t, &mut prss, &[1, 2, 3, 4]).map(|_| ()))
            });
            assert!(matches!(
                out[1].as_ref().unwrap(),
                Err(NetError::Protocol { peer: 0, .. })
            ));
        }
    }
}
