//! Dot products of Shamir shares over GR(2^16, d) with the Lagrange coefficient folded into the
//! query (Bloemen et al., Section 4.3.2, eq. 2–3, "Iris Membership using Shamir Sharing over
//! Galois Rings").
//!
//! The query is packed plainly and the gallery reversed (see [`crate::share::galois`]), so for
//! secrets q, g the constant term c₀(q·g) is the dot product of the packed code entries. With
//! degree-1 shares q_i = Q(α_i), g_i = G(α_i), the product q_i·g_i lies on QG of degree 2, so
//! Σ_i λ_i·q_i·g_i = q·g with the three-point Lagrange coefficients λ_i at 0. Each party therefore
//! precomputes A = λ_i·q_i once per query element and, since c₀(A·B) = Σ_j A_j·B_{(−j) mod d}
//! is linear in B, the vector w_m = A_{(−m) mod d}. Then c₀(A·g_i) = ⟨w, coefficients of g_i⟩
//! and the party's additive share of ⟨query, record⟩ over Z_2^16 is ONE plain 16-bit dot
//! product of length d·⌈len/d⌉ — against two for the replicated [`super::dot`] — over a gallery
//! stored as one 16-bit share word per code entry. [`reshare()`] then re-randomises it into
//! replicated shares for the comparison.

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::share::galois::{product_lagrange, ShamirVec};
use crate::share::{AddVec, Rep3Vec};

use super::reshare;

/// Party `party`'s precomputed query: for every element A = λ_party·q_party the coefficients
/// reordered to w_m = A_{(−m) mod D}, so that one plain dot product with a gallery share gives
/// the constant term of their ring product.
pub fn prepare_query<const D: usize>(party: usize, query: &ShamirVec<D>) -> Vec<u16> {
    let lambda = product_lagrange::<D>(party);
    let mut out = Vec::with_capacity(query.coefs.len());
    for q in query.elems() {
        let a = lambda * q;
        out.extend((0..D).map(|m| a.0[(D - m) % D]));
    }
    out
}

/// This party's additive shares over Z_2^16 of all `n_records × n_codes` dot products,
/// record-major (`out[r·n_codes + c]`) like [`crate::kernels::masked_dot_reference`], from a
/// prepared query of `n_codes` codes and gallery shares of `n_records` records, `words` u16
/// words (= d·⌈len/d⌉) each. Not yet re-randomised: pass it to [`reshare()`] before sending.
pub fn galois_dot_local(
    prepared: &[u16],
    n_codes: usize,
    gallery: &[u16],
    n_records: usize,
    words: usize,
) -> AddVec<u16> {
    assert!(
        prepared.len() >= n_codes * words,
        "prepared query shorter than n_codes * words"
    );
    assert!(
        gallery.len() >= n_records * words,
        "gallery shares shorter than n_records * words"
    );
    // The plain 16-bit product is the kernels' reference (one implementation of it).
    let mut out = vec![0u16; n_records * n_codes];
    crate::kernels::gr_dot_reference(prepared, n_codes, gallery, n_records, words, &mut out);
    AddVec { own: out }
}

/// Replicated shares in Z_2^k (k ≤ 16) of ⟨query code c, gallery record r⟩ for all pairs,
/// record-major. `query` holds `n_codes` codes packed plainly and `gallery` `n_records` records
/// packed reversed, `elems` ring elements (⌈len/D⌉) per code. One round, one message per party.
#[allow(clippy::too_many_arguments)]
pub fn galois_dot<const D: usize>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    query: &ShamirVec<D>,
    n_codes: usize,
    gallery: &ShamirVec<D>,
    n_records: usize,
    elems: usize,
    k: u32,
) -> Result<Rep3Vec<u16>, NetError> {
    assert!(
        (1..=16).contains(&k),
        "Galois ring dot products are over Z_2^16, k = {k}"
    );
    assert_eq!(
        query.len(),
        n_codes * elems,
        "query shares do not hold n_codes * elems elements"
    );
    assert_eq!(
        gallery.len(),
        n_records * elems,
        "gallery shares do not hold n_records * elems elements"
    );
    let prepared = prepare_query(net.party(), query);
    let z = galois_dot_local(&prepared, n_codes, &gallery.coefs, n_records, elems * D);
    // Z_2^k is a quotient of Z_2^16, so the reduction to k bits in reshare is exact.
    reshare(net, prss, z, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::ring::mask;
    use crate::share::galois::{elems_for, share_codes, Packing};
    use crate::share::rep3::{consistent, reconstruct};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// Plain record-major dot products mod 2^16.
    fn plain(q: &[u16], n_codes: usize, g: &[u16], n_records: usize, len: usize) -> Vec<u16> {
        let mut out = Vec::new();
        for r in 0..n_records {
            for c in 0..n_codes {
                out.push((0..len).fold(0u16, |s, i| {
                    s.wrapping_add(q[c * len + i].wrapping_mul(g[r * len + i]))
                }));
            }
        }
        out
    }

    type Outs = ([Rep3Vec<u16>; 3], [Rep3Vec<u16>; 3]);

    /// Shares query and gallery, runs the protocol twice on the same shares.
    #[allow(clippy::too_many_arguments)]
    fn run<const D: usize>(
        q: &[u16],
        n_codes: usize,
        g: &[u16],
        n_records: usize,
        len: usize,
        k: u32,
        seed: u64,
    ) -> Result<Outs, TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let sq = share_codes::<D>(q, n_codes, len, Packing::Plain, &mut rng);
        let sg = share_codes::<D>(g, n_records, len, Packing::Reversed, &mut rng);
        let elems = elems_for::<D>(len);
        for s in &sg {
            // One 16-bit word per (padded) code entry and party.
            prop_assert_eq!(s.coefs.len(), n_records * elems * D);
            prop_assert!(elems * D < len + D);
        }
        let inputs: [(ShamirVec<D>, ShamirVec<D>); 3] =
            std::array::from_fn(|i| (sq[i].clone(), sg[i].clone()));
        let runs = run_protocol(
            inputs,
            move |net, prss, (q, g): &(ShamirVec<D>, ShamirVec<D>)| {
                let a = galois_dot(net, prss, q, n_codes, g, n_records, elems, k).unwrap();
                let b = galois_dot(net, prss, q, n_codes, g, n_records, elems, k).unwrap();
                (a, b)
            },
        );
        prop_assert!(runs.iter().all(|r| r.messages == 2));
        prop_assert!(runs
            .iter()
            .all(|r| r.bytes == 2 * 2 * (n_records * n_codes) as u64));
        let [r0, r1, r2] = runs;
        Ok((
            [r0.out.0, r1.out.0, r2.out.0],
            [r0.out.1, r1.out.1, r2.out.1],
        ))
    }

    #[allow(clippy::too_many_arguments)]
    fn check<const D: usize>(
        q: &[u16],
        n_codes: usize,
        g: &[u16],
        n_records: usize,
        len: usize,
        k: u32,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        let (a, b) = run::<D>(q, n_codes, g, n_records, len, k, seed)?;
        let want: Vec<u16> = plain(q, n_codes, g, n_records, len)
            .into_iter()
            .map(|v| v & mask(k) as u16)
            .collect();
        for s in [&a, &b] {
            prop_assert!(consistent(s, k));
            prop_assert_eq!(reconstruct(s, k), want.clone());
        }
        if k >= 8 && want.len() >= 4 {
            // Same inputs, fresh PRSS masks: the shares must differ.
            prop_assert_ne!(&a[0].own, &b[0].own);
        }
        Ok(())
    }

    /// `n` masked-bitvector entries, −1, 0 or 1, as values of Z_2^16.
    fn masked(rng: &mut ChaCha12Rng, n: usize) -> Vec<u16> {
        (0..n).map(|_| rng.random_range(-1i16..=1) as u16).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn masked_bitvector_dot_equals_plain(
            seed: u64,
            k in 1u32..=16,
            n_codes in 1usize..4,
            n_records in 0usize..5,
            len in 0usize..40,
        ) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x6a1);
            let q = masked(&mut rng, n_codes * len);
            let g = masked(&mut rng, n_records * len);
            check::<2>(&q, n_codes, &g, n_records, len, k, seed)?;
            check::<4>(&q, n_codes, &g, n_records, len, k, seed)?;
        }

        #[test]
        fn arbitrary_u16_dot_equals_plain(seed: u64, len in 1usize..13) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let edges = [0u16, 1, 0xffff, 0x7fff, 0x8000, 2];
            let mut mixed = |n: usize, every: usize| -> Vec<u16> {
                (0..n)
                    .map(|i| if i % every == 0 { edges[(i * 5 + 1) % 6] } else { rng.random() })
                    .collect()
            };
            let q = mixed(2 * len, 2);
            let g = mixed(3 * len, 3);
            check::<2>(&q, 2, &g, 3, len, 16, seed)?;
            check::<4>(&q, 2, &g, 3, len, 16, seed)?;
        }
    }

    #[test]
    fn full_length_code_divisible_and_padded() {
        // 12 800 masked bits, all set and all different: ⟨c', C'⟩ = −l mod 2^16.
        for len in [12_800usize, 12_799] {
            let q = vec![1u16; len];
            let g = vec![0xffffu16; 2 * len];
            check::<4>(&q, 1, &g, 2, len, 16, 9).unwrap();
            check::<2>(&q, 1, &g, 2, len, 16, 9).unwrap();
        }
    }

    #[test]
    fn local_shares_sum_to_the_dot_product_before_reshare() {
        let mut rng = ChaCha12Rng::seed_from_u64(11);
        let len = 10;
        let q: Vec<u16> = (0..len).map(|_| rng.random()).collect();
        let g: Vec<u16> = (0..2 * len).map(|_| rng.random()).collect();
        let sq = share_codes::<4>(&q, 1, len, Packing::Plain, &mut rng);
        let sg = share_codes::<4>(&g, 2, len, Packing::Reversed, &mut rng);
        let words = elems_for::<4>(len) * 4;
        let z: Vec<AddVec<u16>> = (0..3)
            .map(|i| galois_dot_local(&prepare_query(i, &sq[i]), 1, &sg[i].coefs, 2, words))
            .collect();
        let sum: Vec<u16> = (0..2)
            .map(|j| {
                z[0].own[j]
                    .wrapping_add(z[1].own[j])
                    .wrapping_add(z[2].own[j])
            })
            .collect();
        assert_eq!(sum, plain(&q, 1, &g, 2, len));
    }

    #[test]
    fn gallery_storage_is_one_word_per_code_entry() {
        let mut rng = ChaCha12Rng::seed_from_u64(5);
        let (n_records, len) = (3, 12_800);
        let g = vec![1u16; n_records * len];
        let sg = share_codes::<4>(&g, n_records, len, Packing::Reversed, &mut rng);
        let rep = crate::share::rep3::share_vec(&g, 16, &mut rng);
        for i in 0..3 {
            let galois_bits = std::mem::size_of_val(sg[i].coefs.as_slice()) * 8;
            let rep3_bits = (rep[i].own.len() + rep[i].prev.len()) * 16;
            assert_eq!(galois_bits, 16 * n_records * len);
            assert_eq!(rep3_bits, 2 * galois_bits);
        }
    }
}
