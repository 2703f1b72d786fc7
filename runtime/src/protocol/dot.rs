//! Dot products of replicated shares with the masked-bitvector preprocessing of Appendix C
//! (eq. 4–6) and Section 4.1.1.
//!
//! ABY3 multiplication gives party i the additive share
//! z_i = x_i y_i + x_{i−1} y_i + x_i y_{i−1} + α_i                         (eq. 4)
//!     = (x_i + x_{i−1})(y_i + y_{i−1}) − x_{i−1} y_{i−1} + α_i             (eq. 5).
//! Preparing each share once as (x'_i, x'_{i−1}) = (x_i + x_{i−1}, x_{i−1}) leaves
//! z_i = x'_i y'_i − x'_{i−1} y'_{i−1} + α_i                                (eq. 6),
//! and a dot product sums these terms before a single [`reshare()`]: two plain dot products per
//! party and one message, whatever the vector length. The gallery is prepared once when it is
//! loaded; the heavy loop is the generated kernel (reference: [`masked_dot_reference`]).
//!
//! For masked bitvectors (entries in {−1, 0, 1}, Section 4.1.1) ⟨c', C'⟩ = ml − 2·hd, which is
//! what the comparison of Lemma 1 consumes.

use crate::kernels::masked_dot_reference;
use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::RingElem;
use crate::share::{AddVec, Rep3Vec};

use super::reshare;

pub use crate::share::rep3::{prepare, prepare_owned};

/// This party's additive shares of all `n_records × n_codes` dot products, record-major
/// (`out[r * n_codes + c]`), from prepared query codes and prepared gallery records of `len`
/// elements each. Not yet re-randomised: pass it to [`reshare()`] before anything is sent.
pub fn dot_local<T: RingElem>(
    query: &(Vec<T>, Vec<T>),
    n_codes: usize,
    gallery: &(Vec<T>, Vec<T>),
    n_records: usize,
    len: usize,
) -> AddVec<T> {
    let mut out = vec![T::ZERO; n_records * n_codes];
    masked_dot_reference(
        &query.0, &query.1, n_codes, &gallery.0, &gallery.1, n_records, len, &mut out,
    );
    AddVec { own: out }
}

/// Replicated shares in Z_2^k of ⟨query code c, gallery record r⟩ for all pairs, record-major.
/// One round. `query` holds `n_codes` codes and `gallery` `n_records` records, `len` elements each.
#[allow(clippy::too_many_arguments)]
pub fn masked_dot<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    query: &Rep3Vec<T>,
    n_codes: usize,
    gallery: &Rep3Vec<T>,
    n_records: usize,
    len: usize,
    k: u32,
) -> Result<Rep3Vec<T>, NetError> {
    assert_eq!(
        query.len(),
        n_codes * len,
        "query shares do not hold n_codes * len elements"
    );
    assert_eq!(
        gallery.len(),
        n_records * len,
        "gallery shares do not hold n_records * len elements"
    );
    let z = dot_local(&prepare(query), n_codes, &prepare(gallery), n_records, len);
    reshare(net, prss, z, k)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::ring::{mask, storage_for, Width};
    use crate::share::rep3::{consistent, reconstruct, share_vec};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    /// Plain record-major dot products of signed vectors, reduced to Z_2^k.
    fn plain(
        q: &[i64],
        n_codes: usize,
        g: &[i64],
        n_records: usize,
        len: usize,
        k: u32,
    ) -> Vec<u64> {
        let mut out = Vec::new();
        for r in 0..n_records {
            for c in 0..n_codes {
                let s: i64 = (0..len)
                    .map(|i| q[c * len + i].wrapping_mul(g[r * len + i]))
                    .fold(0i64, i64::wrapping_add);
                out.push(s as u64 & mask(k));
            }
        }
        out
    }

    fn check<T: RingElem>(
        q: &[i64],
        n_codes: usize,
        g: &[i64],
        n_records: usize,
        len: usize,
        k: u32,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let enc =
            |v: &[i64]| -> Vec<T> { v.iter().map(|&x| T::from_u64(x as u64 & mask(k))).collect() };
        let sq = share_vec(&enc(q), k, &mut rng);
        let sg = share_vec(&enc(g), k, &mut rng);
        let inputs: [(Rep3Vec<T>, Rep3Vec<T>); 3] =
            std::array::from_fn(|i| (sq[i].clone(), sg[i].clone()));
        let runs = run_protocol(
            inputs,
            move |net, prss, (q, g): &(Rep3Vec<T>, Rep3Vec<T>)| {
                masked_dot(net, prss, q, n_codes, g, n_records, len, k).unwrap()
            },
        );
        prop_assert!(runs.iter().all(|r| r.messages == 1));
        let [a, b, c] = runs;
        let shares = [a.out, b.out, c.out];
        prop_assert!(consistent(&shares, k));
        let got: Vec<u64> = reconstruct(&shares, k).iter().map(|x| x.to_u64()).collect();
        prop_assert_eq!(got, plain(q, n_codes, g, n_records, len, k));
        Ok(())
    }

    fn dispatch(
        q: &[i64],
        n_codes: usize,
        g: &[i64],
        n_records: usize,
        len: usize,
        k: u32,
        seed: u64,
    ) -> Result<(), TestCaseError> {
        match storage_for(k) {
            Width::U16 => check::<u16>(q, n_codes, g, n_records, len, k, seed),
            Width::U32 => check::<u32>(q, n_codes, g, n_records, len, k, seed),
            Width::U64 => check::<u64>(q, n_codes, g, n_records, len, k, seed),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn masked_bitvector_dot_equals_plain(k in 2u32..=64, seed: u64, n_codes in 1usize..4, n_records in 0usize..5, len in 0usize..70) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed ^ 0x5eed);
            let q: Vec<i64> = (0..n_codes * len).map(|_| rng.random_range(-1..=1)).collect();
            let g: Vec<i64> = (0..n_records * len).map(|_| rng.random_range(-1..=1)).collect();
            dispatch(&q, n_codes, &g, n_records, len, k, seed)?;
        }

        #[test]
        fn arbitrary_ring_values_dot_equals_plain(k in 2u32..=64, seed: u64, len in 1usize..6) {
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let edges: Vec<i64> = crate::protocol::testutil::edge_values(k).into_iter().map(|v| v as i64).collect();
            let q: Vec<i64> = (0..2 * len).map(|i| if i % 2 == 0 { edges[i % edges.len()] } else { rng.random() }).collect();
            let g: Vec<i64> = (0..3 * len).map(|i| edges[(i * 5 + 1) % edges.len()]).collect();
            dispatch(&q, 2, &g, 3, len, k, seed)?;
        }
    }

    #[test]
    fn all_mismatching_full_length_code() {
        // l = 12800 masked bits, all set and all different: ⟨c', C'⟩ = −l.
        let len = 12_800;
        let q = vec![1i64; len];
        let g = vec![-1i64; len];
        dispatch(&q, 1, &g, 1, len, 16, 7).unwrap();
    }
}
