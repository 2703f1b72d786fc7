//! The `fss2` building blocks against plain ring arithmetic, and CS.Setup + CS.Eval (one step
//! each party, in-process transports) against an exact-integer cosine decision written here.

use super::dealer::{self, AuthMaterial, DealerRng};
use super::eval::{recv_input_masks, run_client, send_input_masks, Roles, ServerSession};
use super::plan::CosinePlan;
use super::sharing::{ss_ip, ss_mul, ss_share};
use super::trunc::{self, shift, trunc_pair};
use crate::net::memory::run_parties;
use proptest::prelude::*;

/// Values at the ring edges and random ones.
fn ring_word() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(1u64),
        Just(u64::MAX),
        Just(1u64 << 63),
        Just((1u64 << 63) - 1),
        any::<u64>(),
    ]
}

/// The optimised sharing of `x` under mask `r` with share randomness `s`: both servers' pairs.
fn masked(x: u64, r: u64, s: u64) -> [(u64, u64); 2] {
    let [r0, r1] = ss_share(r, s);
    [(x.wrapping_add(r), r0), (x.wrapping_add(r), r1)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn ss_mul_is_the_ring_product(x in ring_word(), y in ring_word(), rx in ring_word(),
                                  ry in ring_word(), s in any::<[u64; 3]>()) {
        let (ax, ay) = (masked(x, rx, s[0]), masked(y, ry, s[1]));
        let [c0, c1] = ss_share(rx.wrapping_mul(ry), s[2]);
        let z0 = ss_mul(0, ax[0], ay[0], c0);
        let z1 = ss_mul(1, ax[1], ay[1], c1);
        prop_assert_eq!(z0.wrapping_add(z1), x.wrapping_mul(y));
    }

    #[test]
    fn ss_ip_is_the_ring_inner_product(v in proptest::collection::vec((ring_word(), ring_word(), any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()), 0..40),
                                       su in any::<u64>()) {
        let (mut dx, mut dy) = (vec![], vec![]);
        let (mut rx, mut ry) = ([vec![], vec![]], [vec![], vec![]]);
        let (mut want, mut u) = (0u64, 0u64);
        for &(x, y, mx, my, s1, s2) in &v {
            want = want.wrapping_add(x.wrapping_mul(y));
            u = u.wrapping_add(mx.wrapping_mul(my));
            let (a, b) = (masked(x, mx, s1), masked(y, my, s2));
            dx.push(a[0].0);
            dy.push(b[0].0);
            for k in 0..2 {
                rx[k].push(a[k].1);
                ry[k].push(b[k].1);
            }
        }
        let [u0, u1] = ss_share(u, su);
        let z0 = ss_ip(0, &dx, &rx[0], &dy, &ry[0], u0);
        let z1 = ss_ip(1, &dx, &rx[1], &dy, &ry[1], u1);
        prop_assert_eq!(z0.wrapping_add(z1), want);
    }

    /// Truncation: `Shift(x, rho)` or one more without a wrap of `x + r`, `2^(64-rho)` less
    /// with one.
    #[test]
    fn truncation_pairs_shift_the_shared_value(x in ring_word(), r in any::<u64>(), rho in 1u32..63,
                                               s in any::<[u64; 3]>()) {
        let pairs = trunc_pair(rho, r, [s[0], s[1]]);
        let [x0, x1] = ss_share(x, s[2]);
        let opened = trunc::masked_share(x0, &pairs[0]).wrapping_add(trunc::masked_share(x1, &pairs[1]));
        prop_assert_eq!(opened, x.wrapping_add(r));
        let t = trunc::truncate(0, opened, rho, &pairs[0]).wrapping_add(trunc::truncate(1, opened, rho, &pairs[1]));
        let exact = shift(x, rho);
        let wraps = x.checked_add(r).is_none();
        let d = t.wrapping_sub(exact);
        if wraps {
            let back = d.wrapping_add(1u64 << (64 - rho));
            prop_assert!(back == 0 || back == 1, "x = {}, r = {}, rho = {}: off by {}", x, r, rho, d);
        } else {
            prop_assert!(d == 0 || d == 1, "x = {}, r = {}, rho = {}: off by {}", x, r, rho, d);
        }
    }
}

/// The language's cosine decision in exact integers (independent of the code under test).
fn decide(x: &[i64], y: &[i64], plan: &CosinePlan) -> bool {
    let dot = |a: &[i64], b: &[i64]| {
        a.iter()
            .zip(b)
            .map(|(&u, &v)| i128::from(u) * i128::from(v))
            .sum::<i128>()
    };
    let (p, xx, yy) = (dot(x, y), dot(x, x), dot(y, y));
    let (n2, d2) = (
        i128::from(plan.tau_num).pow(2),
        i128::from(plan.tau_den).pow(2),
    );
    let e = d2 * p * p - n2 * xx * yy;
    let pos = |v: i128| if plan.strict { v > 0 } else { v >= 0 };
    if plan.tau_negative {
        // cosine >= 0 > tau whenever p >= 0, strict or not.
        p >= 0 || pos(-e)
    } else {
        pos(p) && pos(e)
    }
}

/// Two servers and the client, each on its own thread over in-process links.
fn authenticate(plan: CosinePlan, gallery: &[i64], x: &[i64], seed: u8) -> Vec<bool> {
    let mut rng = DealerRng::from_key([seed; 16]);
    let ids: Vec<u64> = (0..(gallery.len() / plan.dim) as u64).collect();
    let (secret, shares) = dealer::enroll(&ids, gallery, plan.dim, &mut rng);
    let masks = secret.template_masks();
    let material = dealer::cs_setup(&plan, &secret, &masks, &mut rng);
    // Through the byte encoding, as the servers read it from their files.
    let material: Vec<AuthMaterial> = material
        .iter()
        .map(|m| AuthMaterial::decode(&m.encode(), m.server, m.dim, m.records).unwrap())
        .collect();
    let records = secret.records;
    let x = x.to_vec();
    let shares = std::sync::Arc::new(shares);
    let material = std::sync::Arc::new(material);
    // The client sits between the servers, as in a program whose query owner is its second party.
    let roles = Roles::with_client(1);
    let out = run_parties(3, move |mut net| {
        let me = crate::net::Transport::party(&net);
        if me == roles.client {
            let rx = recv_input_masks(&mut net, roles, plan.dim).map_err(|e| e.to_string())?;
            run_client(&mut net, roles, &plan, records, &x, &rx, false)
                .map(|(bits, _)| bits)
                .map_err(|e| e.to_string())
        } else {
            let b = roles.server_of(me).unwrap();
            send_input_masks(&mut net, roles.client, &material[b].rx_seed)
                .map_err(|e| e.to_string())?;
            ServerSession {
                net: &mut net,
                roles,
                plan: &plan,
                gallery: &shares[b],
                material: &material[b],
                next_masks: None,
                ip: super::kernel::IpKernel::PORTABLE,
            }
            .run()
            .map(|stats| {
                assert_eq!(stats.rounds, 2);
                vec![]
            })
            .map_err(|e| e.to_string())
        }
    });
    for s in roles.servers {
        assert!(out[s].is_ok(), "{:?}", out[s]);
    }
    out.into_iter().nth(roles.client).unwrap().unwrap()
}

fn plans(dim: usize) -> Vec<CosinePlan> {
    let mut v = Vec::new();
    for (neg, num, den) in [(false, 17, 50), (true, 1, 5), (false, 0, 1), (false, 9, 10)] {
        for strict in [false, true] {
            v.push(CosinePlan {
                dim,
                scale_bits: 8,
                tau_negative: neg,
                tau_num: num,
                tau_den: den,
                strict,
            });
        }
    }
    v
}

/// Templates whose first component sits on either side of the threshold crossing for `x`: the
/// decision flips between neighbours one unit apart.
fn near_threshold(x: &[i64], base: &[i64], plan: &CosinePlan) -> Vec<i64> {
    let mut out = Vec::new();
    let mut prev: Option<(i64, bool)> = None;
    for y0 in -256..=256 {
        let mut y = base.to_vec();
        y[0] = y0;
        let d = decide(x, &y, plan);
        if let Some((p, pd)) = prev {
            if pd != d {
                let mut a = base.to_vec();
                a[0] = p;
                out.extend(a);
                out.extend(y.clone());
            }
        }
        prev = Some((y0, d));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// CS.Eval's decisions equal the exact-integer decision on random vectors, on templates one
    /// unit either side of the threshold, on x = ±y and on zero vectors.
    #[test]
    fn cs_eval_is_the_plaintext_decision(dim in 1usize..24, p in 0usize..8, seed in any::<u8>(),
                                         xs in proptest::collection::vec(-256i64..=256, 24),
                                         ys in proptest::collection::vec(-256i64..=256, 24 * 4)) {
        let plan = plans(dim)[p];
        let x = &xs[..dim];
        let mut gallery: Vec<i64> = ys[..dim * 4].to_vec();
        gallery.extend(x.iter().copied());
        gallery.extend(x.iter().map(|v| -v));
        gallery.extend(std::iter::repeat_n(0, dim));
        gallery.extend(near_threshold(x, &ys[..dim], &plan));
        let got = authenticate(plan, &gallery, x, seed);
        let want: Vec<bool> = gallery.chunks_exact(dim).map(|y| decide(x, y, &plan)).collect();
        prop_assert_eq!(got, want);
    }
}

#[test]
fn the_voice_program_at_full_size_with_matches() {
    // dim 192, scale 2^8, tau = 0.34: extreme norms (every component at ±256) and a template
    // close to the query, so that matches really occur.
    let plan = plans(192)[0];
    let x: Vec<i64> = (0..192)
        .map(|i| if i % 3 == 0 { 256 } else { -(i as i64 % 200) })
        .collect();
    let mut gallery = x.clone();
    gallery.extend(x.iter().map(|v| v / 2 + 7));
    gallery.extend((0..192).map(|i| if i % 2 == 0 { 256 } else { -256 }));
    gallery.extend(std::iter::repeat_n(256, 192));
    gallery.extend(near_threshold(
        &x,
        &gallery[..192].iter().map(|v| -v / 3).collect::<Vec<_>>(),
        &plan,
    ));
    let got = authenticate(plan, &gallery, &x, 9);
    let want: Vec<bool> = gallery
        .chunks_exact(192)
        .map(|y| decide(&x, y, &plan))
        .collect();
    assert!(want.iter().any(|&w| w) && want.iter().any(|&w| !w));
    assert_eq!(got, want);
}

#[test]
fn zero_vectors_follow_the_plaintext_definition() {
    // A zero query or template makes p = 0 and E = 0: every threshold's decision then rests on
    // the sign test alone (for tau < 0, p >= 0 decides even when strict).
    for plan in plans(6) {
        let x = [0i64; 6];
        let gallery: Vec<i64> = [[0i64; 6], [3, -1, 4, 1, -5, 9], [-256; 6]].concat();
        let got = authenticate(plan, &gallery, &x, 3);
        let want: Vec<bool> = gallery
            .chunks_exact(6)
            .map(|y| decide(&x, y, &plan))
            .collect();
        assert_eq!(got, want, "{plan:?}");
        let y = [7i64, 0, -2, 0, 0, 1];
        let got = authenticate(plan, &gallery, &y, 4);
        let want: Vec<bool> = gallery
            .chunks_exact(6)
            .map(|g| decide(&y, g, &plan))
            .collect();
        assert_eq!(got, want, "{plan:?}");
    }
}
