//! End-to-end tests of the secret-mask comparison chains: from shares of ml and dot to the match
//! bit, for each lifting variant, against the plaintext rule `b·dot > a·ml` (dot = ml − 2·hd).
//!
//! Ring choices as in Section 5.1 ("Ring Choices") with l = 12 800: NoLift computes in Z_2^32
//! with a, b < 2^16; the lifted variants use b = 2^20 (ConstLift of dot by m = 20) and compare
//! in Z_2^36 or Z_(p·2^20), where Lemma 2's conditions b·l < t/4 and b·l < t − 2^(⌈log2 t⌉−1)
//! hold.

#[cfg(test)]
mod tests {
    use crate::ops::arith::{const_lift, lift, lin};
    use crate::ops::ctx::testkit::{deal, rep_value, run3};
    use crate::ops::ctx::{rep_as, Ctx};
    use crate::ops::shamir::{const_lift_p, lift_p, lin_mod, msb_mod};
    use crate::ops::value::Value;
    use crate::share::binary::reconstruct_bits;
    use crate::share::fp::{share_fp, Rep3Fp, P};
    use crate::share::{BitShares, Rep3Vec};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;

    const L: u64 = 12_800;
    const M: u32 = 20;

    /// (ml, hd) pairs: random ones plus the extremes and an exact tie b·dot = a·ml.
    fn pairs(rng: &mut ChaCha12Rng, n: usize, a: u64, b: u64) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = (0..n)
            .map(|_| {
                let ml = rng.random_range(0..=L);
                (ml, rng.random_range(0..=ml))
            })
            .collect();
        v.extend([(0, 0), (L, 0), (L, L), (1, 0), (1, 1), (L, L / 2)]);
        // A tie: dot = ml − 2hd with b·dot = a·ml needs dot = a·ml/b; pick ml a multiple of b.
        let g = gcd(a, b).max(1);
        let (a1, b1) = (a / g, b / g);
        if b1 <= L {
            let ml = b1 * (L / b1);
            let dot = a1 * (L / b1);
            if (ml - dot).is_multiple_of(2) && dot <= ml {
                v.push((ml, (ml - dot) / 2));
            }
        }
        v
    }

    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }

    /// The plaintext rule of the secret-mask comparison (ARCHITECTURE.md §7): `b·dot > a·ml`.
    fn rule(ml: u64, hd: u64, a: u64, b: u64) -> bool {
        let dot = ml as i128 - 2 * hd as i128;
        b as i128 * dot > a as i128 * ml as i128
    }

    fn msb(cx: &mut Ctx<'_>, v: &Value, k: u32) -> BitShares {
        let x: Rep3Vec<u64> = rep_as(cx.party(), v, k, "msb").unwrap();
        crate::protocol::msb(cx.net, cx.prss, &x, k).unwrap()
    }

    fn open(runs: [crate::ops::ctx::testkit::Out<BitShares>; 3]) -> Vec<bool> {
        let [a, b, c] = runs;
        reconstruct_bits(&[a.out, b.out, c.out]).unwrap()
    }

    /// Runs a chain on ml and dot dealt in Z_2^k_in.
    fn run_ring(
        ml: &[u64],
        dot: &[i128],
        k_in: u32,
        seed: u64,
        chain: impl Fn(&mut Ctx<'_>, &Value, &Value) -> BitShares + Send + Sync + 'static,
    ) -> Vec<bool> {
        let to = |v: i128| v as u64 & crate::ring::mask(k_in);
        let sm = deal(ml, k_in, seed);
        let sd = deal(
            &dot.iter().map(|&d| to(d)).collect::<Vec<_>>(),
            k_in,
            seed ^ 9,
        );
        let inputs: [(Rep3Vec<u64>, Rep3Vec<u64>); 3] =
            std::array::from_fn(|p| (sm[p].clone(), sd[p].clone()));
        open(run3(
            inputs,
            move |cx, (m, d): &(Rep3Vec<u64>, Rep3Vec<u64>)| {
                chain(cx, &rep_value(m, k_in), &rep_value(d, k_in))
            },
        ))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(8))]
        #[test]
        fn no_lift_chain(seed: u64, b in 1u64..1 << 16, a_frac in 0.0f64..=1.0) {
            let a = (b as f64 * a_frac) as u64;
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let p = pairs(&mut rng, 40, a, b);
            let ml: Vec<u64> = p.iter().map(|x| x.0).collect();
            let dot: Vec<i128> = p.iter().map(|x| x.0 as i128 - 2 * x.1 as i128).collect();
            let got = run_ring(&ml, &dot, 32, seed, move |cx, ml, dot| {
                let d = lin(cx, ml, dot, a as i64, b as i64, 32).unwrap();
                msb(cx, &d, 32)
            });
            let want: Vec<bool> = p.iter().map(|&(ml, hd)| rule(ml, hd, a, b)).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn const_lift_chain(seed: u64, a_frac in 0.0f64..=1.0) {
            // dot in Z_2^16, ConstLift by 2^20 to Z_2^36; ml dealt in Z_2^36.
            let b = 1u64 << M;
            let a = (b as f64 * a_frac) as u64;
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let p = pairs(&mut rng, 40, a, b);
            let k = 16 + M;
            let ml: Vec<u64> = p.iter().map(|x| x.0).collect();
            let dot: Vec<u64> = p.iter().map(|x| (x.0 as i64 - 2 * x.1 as i64) as u64 & 0xffff).collect();
            let (sm, sd) = (deal(&ml, k, seed), deal(&dot, 16, seed ^ 3));
            let inputs: [(Rep3Vec<u64>, Rep3Vec<u64>); 3] = std::array::from_fn(|i| (sm[i].clone(), sd[i].clone()));
            let got = open(run3(inputs, move |cx, (m, d): &(Rep3Vec<u64>, Rep3Vec<u64>)| {
                let d = const_lift(cx, &rep_value(d, 16), M, k).unwrap();
                let c = lin(cx, &rep_value(m, k), &d, a as i64, 1, k).unwrap();
                msb(cx, &c, k)
            }));
            let want: Vec<bool> = p.iter().map(|&(ml, hd)| rule(ml, hd, a, b)).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn mpc_lift_chain(seed: u64, a_frac in 0.0f64..=1.0) {
            // ml and dot in Z_2^16: Lift ml to Z_2^36 (Algorithm 14), ConstLift dot by 2^20.
            let b = 1u64 << M;
            let a = (b as f64 * a_frac) as u64;
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let p = pairs(&mut rng, 40, a, b);
            let k = 16 + M;
            let ml: Vec<u64> = p.iter().map(|x| x.0).collect();
            let dot: Vec<i128> = p.iter().map(|x| x.0 as i128 - 2 * x.1 as i128).collect();
            let got = run_ring(&ml, &dot, 16, seed, move |cx, ml, dot| {
                let ml = lift(cx, ml, 16, k).unwrap();
                let d = const_lift(cx, dot, M, k).unwrap();
                let c = lin(cx, &ml, &d, a as i64, 1, k).unwrap();
                msb(cx, &c, k)
            });
            let want: Vec<bool> = p.iter().map(|&(ml, hd)| rule(ml, hd, a, b)).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn fp_chain(seed: u64, a_frac in 0.0f64..=1.0) {
            // ml and dot mod p: LiftP ml, ConstLift dot by 2^20, lin mod p·2^20, msb mod p·2^20.
            let b = 1u64 << M;
            let a = (b as f64 * a_frac) as u64;
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let p = pairs(&mut rng, 40, a, b);
            let ml: Vec<u16> = p.iter().map(|x| x.0 as u16).collect();
            let dot: Vec<u16> = p.iter().map(|x| (x.0 as i64 - 2 * x.1 as i64).rem_euclid(P as i64) as u16).collect();
            let (sm, sd) = (share_fp(&ml, &mut rng), share_fp(&dot, &mut rng));
            let inputs: [(Rep3Fp, Rep3Fp); 3] = std::array::from_fn(|i| (sm[i].clone(), sd[i].clone()));
            let runs = run3(inputs, move |cx, (m, d): &(Rep3Fp, Rep3Fp)| {
                let ml = lift_p(cx, &Value::ReplicatedP(m.clone()), M).unwrap();
                let d = const_lift_p(cx, &Value::ReplicatedP(d.clone()), M).unwrap();
                let c = lin_mod(cx, &ml, &d, a as i64, 1, M).unwrap();
                let Value::Bits(bit) = msb_mod(cx, &c, M).unwrap() else { panic!("bits expected") };
                bit
            });
            let want: Vec<bool> = p.iter().map(|&(ml, hd)| rule(ml, hd, a, b)).collect();
            prop_assert_eq!(open(runs), want);
        }

        #[test]
        fn fp_public_mask_chain_from_shamir_codes(seed: u64, num in 0u64..100, n_g in 0usize..5) {
            // Codes c' = m ? 1 − 2b : 0 Shamir-shared over F_p, public masks: shamir_dot,
            // reshare_p, sub_threshold_p with the mask lengths, msb_p = Algorithm 1's
            // hd·den < num·ml.
            use crate::ops::shamir::{msb_p, reshare_p, shamir_dot, sub_threshold_p};
            use crate::ops::shamir_codes::mask_lengths;
            use crate::ops::shamir_codes::{ShamirCodes, ShamirKind, Side};
            use crate::share::fp::shamir_share;
            let (den, len, n_q) = (200u64, 128usize, 2usize);
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let code = |rng: &mut ChaCha12Rng, n: usize| -> (Vec<u64>, Vec<u64>) {
                // Dense masks for some codes, sparse for others; ml = 0 happens too.
                ((0..n * 2).map(|_| rng.random()).collect(), (0..n * 2).map(|_| rng.random::<u64>() & rng.random::<u64>()).collect())
            };
            let (qb, mut qm) = code(&mut rng, n_q);
            let (gb, gm) = code(&mut rng, n_g);
            qm[2] = 0;
            qm[3] = 0;
            let entries = |b: &[u64], m: &[u64]| -> Vec<u16> {
                (0..b.len() * 64).map(|i| {
                    let (bit, mask) = ((b[i / 64] >> (i % 64)) & 1, (m[i / 64] >> (i % 64)) & 1);
                    if mask == 0 { 0 } else if bit == 0 { 1 } else { P - 1 }
                }).collect()
            };
            let (sq, sg) = (shamir_share(&entries(&qb, &qm), &mut rng), shamir_share(&entries(&gb, &gm), &mut rng));
            let inputs: [(Vec<u16>, Vec<u16>); 3] = std::array::from_fn(|p| (sq[p].clone(), sg[p].clone()));
            let (qm2, gm2) = (qm.clone(), gm.clone());
            let runs = run3(inputs, move |cx, (q, g): &(Vec<u16>, Vec<u16>)| {
                let q = ShamirCodes::new(ShamirKind::Fp, Side::Query, n_q, len, vec![0, 1], qm2.clone(), q.clone()).unwrap();
                let g = ShamirCodes::new(ShamirKind::Fp, Side::Gallery, n_g, len, (0..n_g as u64).collect(), gm2.clone(), g.clone()).unwrap();
                let ml = Value::Public(mask_lengths(&q, &g).unwrap());
                let z = shamir_dot(cx, &Value::Shamir(std::sync::Arc::new(q)), &Value::Shamir(std::sync::Arc::new(g))).unwrap();
                let d = reshare_p(cx, &z).unwrap();
                let c = sub_threshold_p(cx, &d, &ml, num as i64, den as i64, crate::vocab::ThresholdPlacement::Component0).unwrap();
                let Value::Bits(b) = msb_p(cx, &c).unwrap() else { panic!("bits expected") };
                b
            });
            let mut want = Vec::new();
            for r in 0..n_g {
                for c in 0..n_q {
                    let (mut ml, mut hd) = (0u64, 0u64);
                    for w in 0..2 {
                        let m = qm[c * 2 + w] & gm[r * 2 + w];
                        ml += m.count_ones() as u64;
                        hd += ((qb[c * 2 + w] ^ gb[r * 2 + w]) & m).count_ones() as u64;
                    }
                    want.push(hd * den < num * ml);
                }
            }
            prop_assert_eq!(open(runs), want);
        }
    }
}
