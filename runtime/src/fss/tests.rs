//! The FSS primitives against their definitions, on random and edge inputs.

use super::{dcf, ic};
use proptest::prelude::*;

fn seeds(a: u64, b: u64) -> [[u8; 16]; 2] {
    let mut s = [[0u8; 16]; 2];
    s[0][..8].copy_from_slice(&a.to_le_bytes());
    s[1][..8].copy_from_slice(&b.to_le_bytes());
    s[0][8] = 0x5a;
    s[1][8] = 0xa5;
    s
}

/// Inputs near the interesting points (0, N - 1, around `v`) and random ones.
fn around(v: u64) -> Vec<u64> {
    let mut xs = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63, (1 << 63) - 1];
    for d in 0..3u64 {
        xs.push(v.wrapping_add(d));
        xs.push(v.wrapping_sub(d));
    }
    xs
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// DCF: the two shares add up to beta below alpha and to 0 from alpha on.
    #[test]
    fn dcf_is_the_comparison_function(alpha in any::<u64>(), beta in any::<u64>(),
                                      s0 in any::<u64>(), s1 in any::<u64>(),
                                      extra in proptest::collection::vec(any::<u64>(), 8)) {
        let [k0, k1] = dcf::gen(alpha, beta, seeds(s0, s1));
        let mut xs = around(alpha);
        xs.extend(extra);
        let (y0, y1) = (k0.eval(&xs), k1.eval(&xs));
        for (i, &x) in xs.iter().enumerate() {
            let want = if x < alpha { beta } else { 0 };
            prop_assert_eq!(y0[i].wrapping_add(y1[i]), want, "x = {}", x);
        }
        // The encoded keys evaluate the same.
        let k0b = dcf::DcfKey::decode(&k0.encode()).unwrap();
        prop_assert_eq!(k0b.eval(&xs), y0);
    }

    /// The batched evaluation: many keys of both servers, their points interleaved in one
    /// batch (the level-synchronous walk with one AES batch per cipher and level), still add up
    /// to each key pair's comparison function.
    #[test]
    fn a_batch_of_mixed_keys_is_each_comparison_function(
        params in proptest::collection::vec((any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()), 1..6),
        extra in proptest::collection::vec(any::<u64>(), 4)) {
        let keys: Vec<([dcf::DcfKey; 2], u64, u64)> = params
            .iter()
            .map(|&(alpha, beta, s0, s1)| (dcf::gen(alpha, beta, seeds(s0, s1)), alpha, beta))
            .collect();
        // Every key pair at its own edge points and the shared extras, server 1's pairs listed
        // first and in reverse, so no two neighbours in the batch belong together.
        let mut pairs = Vec::new();
        let mut want = Vec::new();
        for (k, (_, alpha, beta)) in keys.iter().enumerate() {
            let mut xs = around(*alpha);
            xs.extend(extra.iter().copied());
            for x in xs {
                want.push((k, x, if x < *alpha { *beta } else { 0 }));
            }
        }
        for &(k, x, _) in want.iter().rev() {
            pairs.push((&keys[k].0[1], x));
        }
        for &(k, x, _) in &want {
            pairs.push((&keys[k].0[0], x));
        }
        let y = dcf::eval_many(&pairs);
        let n = want.len();
        for (i, &(_, x, w)) in want.iter().enumerate() {
            prop_assert_eq!(y[n + i].wrapping_add(y[n - 1 - i]), w, "x = {}", x);
        }
    }

    /// IC gate: shares of beta * 1{p <= x <= q} + r_out from the masked input alone (beta = 0:
    /// the trap keys of the malicious variant; 1: the comparison gate), for intervals
    /// anywhere in Z_2^64 (the edges included) and masks that wrap.
    #[test]
    fn ic_gate_is_interval_containment(a in any::<u64>(), b in any::<u64>(), r_in in any::<u64>(),
                                       r_out in any::<u64>(), z in any::<u64>(), w in any::<u64>(),
                                       beta in prop_oneof![Just(0u64), Just(1u64), any::<u64>()],
                                       s0 in any::<u64>(), s1 in any::<u64>(),
                                       edge in 0usize..4, mask_edge in 0usize..4,
                                       extra in proptest::collection::vec(any::<u64>(), 6)) {
        let (mut p, mut q) = (a.min(b), a.max(b));
        match edge {
            1 => p = 0,
            2 => q = u64::MAX,
            3 => { p = 0; q = u64::MAX; }
            _ => {}
        }
        // Masks that put the shifted interval ends on the wrap-around: q + r_in = N - 1,
        // p + r_in = 0, q + 1 + r_in = 0.
        let r_in = match mask_edge {
            1 => u64::MAX - q,
            2 => p.wrapping_neg(),
            3 => q.wrapping_add(1).wrapping_neg(),
            _ => r_in,
        };
        let keys = ic::gen_weighted(p, q, r_in, r_out, beta, seeds(s0, s1), [z, w]);
        let mut xs = around(p);
        xs.extend(around(q));
        xs.extend(extra);
        let masked: Vec<u64> = xs.iter().map(|x| x.wrapping_add(r_in)).collect();
        let (y0, y1) = (keys[0].eval(&masked), keys[1].eval(&masked));
        for (i, &x) in xs.iter().enumerate() {
            let inside = u64::from(p <= x && x <= q).wrapping_mul(beta);
            prop_assert_eq!(y0[i].wrapping_add(y1[i]).wrapping_sub(r_out), inside,
                "x = {}, [{}, {}], r_in = {}", x, p, q, r_in);
        }
    }
}

#[test]
fn a_key_of_the_wrong_size_or_server_is_refused() {
    let [k0, _] = dcf::gen(5, 1, seeds(1, 2));
    let bytes = k0.encode();
    assert_eq!(bytes.len(), dcf::DcfKey::ENCODED_BYTES);
    assert!(dcf::DcfKey::decode(&bytes[1..])
        .unwrap_err()
        .contains("bytes"));
    let mut other = bytes.clone();
    other[0] = 7;
    assert!(dcf::DcfKey::decode(&other)
        .unwrap_err()
        .contains("server 7"));
}

#[test]
fn one_key_alone_looks_random() {
    // Shares of the same function under fresh seeds differ everywhere (a key alone carries no
    // trace of alpha); what is fixed is only their sum.
    let xs: Vec<u64> = (0..64).map(|i| i * 1_000_003).collect();
    let a = dcf::gen(1 << 40, 1, seeds(1, 2))[0].eval(&xs);
    let b = dcf::gen(1 << 40, 1, seeds(3, 4))[0].eval(&xs);
    assert!(a.iter().zip(&b).all(|(x, y)| x != y));
}

mod condeval_tests {
    use super::super::condeval::{self, CondEvalError, CondEvalKey, Conj, Gate, KeyRequest};
    use super::super::ic::{NEGATIVE, NON_NEGATIVE};
    use crate::rand::aes_ctr::AesCtr;
    use proptest::prelude::*;

    fn dealer(seed: u64) -> impl FnMut(&mut [u8]) {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let mut s = AesCtr::new(&key);
        move |out: &mut [u8]| s.fill(out)
    }

    /// Both servers' CondEval for `[s]^B = (s0, s1)` and `x`: the reconstructed output bit.
    fn run(keys: &[CondEvalKey; 2], s0: bool, s1: bool, x: u64) -> Result<bool, CondEvalError> {
        let opened = x
            .wrapping_add(keys[0].mask_share)
            .wrapping_add(keys[1].mask_share);
        // Each request goes to the other server, through its byte encoding.
        let wire = |r: KeyRequest| {
            let mut b = Vec::new();
            r.encode(&mut b);
            KeyRequest::decode(&b).unwrap()
        };
        let to1 = wire(keys[0].key_request(s0));
        let to0 = wire(keys[1].key_request(s1));
        Ok(keys[0].eval(&to0, opened)? ^ keys[1].eval(&to1, opened)?)
    }

    fn reference(gate: Gate, s: bool, x: u64) -> bool {
        let v = if gate.negate { x.wrapping_neg() } else { x };
        let f = gate.interval.0 <= v && v <= gate.interval.1;
        match gate.conj {
            Conj::And => s && f,
            Conj::Or => s || f,
        }
    }

    fn gates() -> Vec<Gate> {
        let mut g = Vec::new();
        for interval in [NON_NEGATIVE, NEGATIVE, (5, 9), (0, u64::MAX)] {
            for negate in [false, true] {
                for conj in [Conj::And, Conj::Or] {
                    g.push(Gate {
                        interval,
                        negate,
                        conj,
                    });
                }
            }
        }
        g
    }

    /// Every (s, sharing of s) case on the interval ends, zero and the ring edges.
    #[test]
    fn condeval_is_s_composed_with_f_in_every_case() {
        let xs = [
            0u64,
            1,
            4,
            5,
            9,
            10,
            u64::MAX,
            u64::MAX - 4,
            1 << 63,
            (1 << 63) - 1,
            (1 << 63) + 1,
        ];
        for (i, gate) in gates().into_iter().enumerate() {
            let keys = condeval::setup(gate, &mut dealer(i as u64));
            for &x in &xs {
                for (s0, s1) in [(false, false), (true, true), (true, false), (false, true)] {
                    let s = s0 ^ s1;
                    assert_eq!(
                        run(&keys, s0, s1, x).unwrap(),
                        reference(gate, s, x),
                        "gate {gate:?}, s = ({s0}, {s1}), x = {x}"
                    );
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn condeval_on_random_inputs(seed in any::<u64>(), x in any::<u64>(), g in 0usize..16,
                                     s0 in any::<bool>(), s1 in any::<bool>()) {
            let gate = gates()[g];
            let keys = condeval::setup(gate, &mut dealer(seed));
            prop_assert_eq!(run(&keys, s0, s1, x).unwrap(), reference(gate, s0 ^ s1, x));
            // The material survives its byte encoding.
            for k in &keys {
                let mut b = Vec::new();
                k.encode(&mut b);
                prop_assert_eq!(b.len(), CondEvalKey::ENCODED_BYTES);
                prop_assert_eq!(&CondEvalKey::decode(&b).unwrap(), k);
            }
        }
    }

    #[test]
    fn a_wrong_decryption_key_is_detected_not_evaluated() {
        let gate = Gate {
            interval: NON_NEGATIVE,
            negate: false,
            conj: Conj::And,
        };
        let keys = condeval::setup(gate, &mut dealer(7));
        let mut request = keys[1].key_request(true);
        request.pad[3] ^= 0x10;
        let err = keys[0].eval(&request, 12345).unwrap_err();
        assert!(matches!(err, CondEvalError::WrongPad(_)), "{err}");
        assert!(KeyRequest::decode(&[2u8; 17]).is_err());
        assert!(KeyRequest::decode(&[0u8; 16]).is_err());
    }

    #[test]
    fn a_servers_view_does_not_depend_on_its_peers_share() {
        // The key-decryption message S_b sends hides [s]_b: over fresh setups, index and pad
        // are as often one value as the other whatever the share.
        let gate = Gate {
            interval: NON_NEGATIVE,
            negate: false,
            conj: Conj::And,
        };
        let mut ones = [0u32; 2];
        for seed in 0..400u64 {
            let keys = condeval::setup(gate, &mut dealer(seed + 1000));
            for s in [false, true] {
                ones[usize::from(s)] += u32::from(keys[0].key_request(s).index);
            }
        }
        for o in ones {
            assert!((140..260).contains(&o), "index bit set {o} times of 400");
        }
    }
}

mod condeval_star_tests {
    use super::super::condeval::{setup_star, Conj, Gate};
    use super::super::ic::NON_NEGATIVE;
    use crate::rand::aes_ctr::AesCtr;
    use proptest::prelude::*;

    const MASK: u128 = (1u128 << 112) - 1;

    fn dealer(seed: u64) -> impl FnMut(&mut [u8]) {
        let mut key = [0u8; 16];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let mut s = AesCtr::new(&key);
        move |out: &mut [u8]| s.fill(out)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Table 4: a normal instance gives `s and f(x)` with tags that cancel whatever the
        /// servers decrypt; a trap (whose `s` is shared as 0) gives 0 with tags that cancel, and
        /// a server that flips its key request in a trap makes the tags differ (detected by
        /// CondEval.Verify's sigma) while in a normal instance the flip passes the tags.
        #[test]
        fn normal_and_trap_instances(seed in any::<u64>(), x in any::<u64>(), r in any::<u64>(),
                                     trap in any::<bool>(), s0 in any::<bool>(), s1 in any::<bool>(),
                                     flip in any::<bool>()) {
            let gate = Gate { interval: NON_NEGATIVE, negate: false, conj: Conj::And };
            let keys = setup_star(gate, trap, r, &mut dealer(seed));
            // A trap's s is a sharing of 0.
            let s1 = if trap { s0 } else { s1 };
            let opened = x.wrapping_add(r);
            let mut to1 = keys[0].key_request(s0);
            if flip {
                to1 = keys[0].key_request(!s0);
            }
            let to0 = keys[1].key_request(s1);
            let (y0, t0) = keys[0].eval(&to0, opened).unwrap();
            let (y1, t1) = keys[1].eval(&to1, opened).unwrap();
            let f = x < (1 << 63);
            let s = if flip { !s0 ^ s1 } else { s0 ^ s1 };
            let tags_cancel = t0.wrapping_add(t1) & MASK == 0;
            if trap {
                prop_assert_eq!(y0 ^ y1, false);
                prop_assert_eq!(tags_cancel, !flip);
            } else {
                prop_assert_eq!(y0 ^ y1, s && f);
                prop_assert!(tags_cancel);
            }
        }
    }
}
