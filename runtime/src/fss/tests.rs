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

    /// IC gate: shares of 1{p <= x <= q} + r_out from the masked input alone, for intervals
    /// anywhere in Z_2^64 (the edges included) and masks that wrap.
    #[test]
    fn ic_gate_is_interval_containment(a in any::<u64>(), b in any::<u64>(), r_in in any::<u64>(),
                                       r_out in any::<u64>(), z in any::<u64>(),
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
        let keys = ic::gen(p, q, r_in, r_out, seeds(s0, s1), z);
        let mut xs = around(p);
        xs.extend(around(q));
        xs.extend(extra);
        let masked: Vec<u64> = xs.iter().map(|x| x.wrapping_add(r_in)).collect();
        let (y0, y1) = (keys[0].eval(&masked), keys[1].eval(&masked));
        for (i, &x) in xs.iter().enumerate() {
            let inside = u64::from(p <= x && x <= q);
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
