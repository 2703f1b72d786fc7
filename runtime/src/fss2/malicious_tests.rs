//! CSB.Eval* (in-process links, one thread per party): honest runs equal the exact-integer
//! decision for m = 10, 20, 40; every deviation of either server is detected by the client and
//! the output withheld, never a wrong answer accepted.

use super::dealer::DealerRng;
use super::eval::Roles;
use super::malicious::{
    cs_setup_star, enroll_star, query_star, recv_masks_star, serve_star, Deviation, Pipeline,
};
use super::plan::CosinePlan;
use crate::net::memory::run_parties;
use crate::net::Transport;

fn plan(dim: usize, strict: bool) -> CosinePlan {
    CosinePlan {
        dim,
        scale_bits: 8,
        tau_negative: false,
        tau_num: 17,
        tau_den: 50,
        strict,
    }
}

fn decide(x: &[i64], y: &[i64], plan: &CosinePlan) -> bool {
    let dot = |a: &[i64], b: &[i64]| {
        a.iter()
            .zip(b)
            .map(|(&u, &v)| i128::from(u) * i128::from(v))
            .sum::<i128>()
    };
    let (p, xx, yy) = (dot(x, y), dot(x, x), dot(y, y));
    let e = 2500 * p * p - 289 * xx * yy;
    match (plan.tau_negative, plan.strict) {
        (false, true) => p > 0 && e > 0,
        (false, false) => p >= 0 && e >= 0,
        // cosine >= -0.34 (or >): a non-negative p alone decides; else |cos| <= 0.34.
        (true, false) => p >= 0 || e <= 0,
        (true, true) => p >= 0 || e < 0,
    }
}

/// Runs one query; `deviant` is (server role, deviation).
fn run(
    plan: CosinePlan,
    gallery: &[i64],
    x: &[i64],
    m: usize,
    seed: u8,
    deviant: (usize, Deviation),
) -> Result<Vec<bool>, String> {
    let mut rng = DealerRng::from_key([seed; 16]);
    let ids: Vec<u64> = (0..(gallery.len() / plan.dim) as u64).collect();
    let (secret, shares) = enroll_star(&ids, gallery, plan.dim, &mut rng);
    let (mats, psi) = cs_setup_star(&plan, &secret, m, &mut rng);
    // Through the byte encoding, as the servers read it from their stores.
    let mats = mats.map(|x| {
        let (s, r) = (x.server, secret.records);
        super::malicious::MaterialStar::decode(&x.encode(), s, plan.dim, r, m).unwrap()
    });
    let records = secret.records;
    let roles = Roles::with_client(1);
    let (shares, mats, x) = (
        std::sync::Arc::new(shares),
        std::sync::Arc::new(mats),
        x.to_vec(),
    );
    let out = run_parties(3, move |mut net| {
        let me = net.party();
        if me == roles.client {
            let rx = recv_masks_star(&mut net, roles, plan.dim).map_err(|e| e.to_string())?;
            query_star(&mut net, roles, &plan, records, &psi, &x, &rx, false)
                .map(|(bits, _)| bits)
                .map_err(|e| e.to_string())
        } else {
            let b = roles.server_of(me).unwrap();
            let dev = if deviant.0 == b {
                deviant.1
            } else {
                Deviation::None
            };
            let pipeline = Pipeline {
                send_own_masks: true,
                next: None,
            };
            let r = serve_star(&mut net, roles, &plan, &shares[b], &mats[b], dev, pipeline);
            // A server that stops tells no one in-process; the client then fails on its link.
            r.map(|_| vec![]).map_err(|e| e.to_string())
        }
    });
    out.into_iter().nth(1).unwrap()
}

fn gallery_for(x: &[i64]) -> Vec<i64> {
    let dim = x.len();
    let mut g: Vec<i64> = x.to_vec();
    g.extend(x.iter().map(|v| v / 2 + 3));
    g.extend(x.iter().map(|v| -v));
    g.extend((0..dim as i64).map(|i| (i * 37 % 101) - 50));
    // One unit either side of the threshold along the first component.
    let mut prev: Option<(Vec<i64>, bool)> = None;
    for y0 in -256..=256 {
        let mut y: Vec<i64> = x.iter().map(|v| -v / 3 + 1).collect();
        y[0] = y0;
        let d = decide(x, &y, &plan(dim, false));
        if let Some((p, pd)) = &prev {
            if *pd != d {
                g.extend(p.iter().copied());
                g.extend(y.iter().copied());
                break;
            }
        }
        prev = Some((y, d));
    }
    g
}

#[test]
fn honest_servers_give_the_plaintext_decision() {
    for (m, strict, seed) in [(10, false, 1u8), (20, true, 2), (40, false, 3)] {
        let p = plan(12, strict);
        let x: Vec<i64> = (0..12).map(|i| ((i * 53) % 257) as i64 - 100).collect();
        let g = gallery_for(&x);
        let want: Vec<bool> = g.chunks_exact(12).map(|y| decide(&x, y, &p)).collect();
        assert!(want.iter().any(|&w| w) && want.iter().any(|&w| !w));
        assert_eq!(
            run(p, &g, &x, m, seed, (0, Deviation::None)).unwrap(),
            want,
            "m = {m}"
        );
    }
}

/// tau < 0: the `or` of the two gates, as `not(not c_1 and not f)` on the complementary gates
/// with the decision negated by the client (`CosinePlan::star_gates`).
#[test]
fn a_negative_threshold_gives_the_plaintext_decision() {
    for (m, strict, seed) in [(10, false, 11u8), (20, true, 12)] {
        let p = CosinePlan {
            tau_negative: true,
            ..plan(12, strict)
        };
        let x: Vec<i64> = (0..12).map(|i| ((i * 53) % 257) as i64 - 100).collect();
        let mut g = gallery_for(&x);
        // Templates next to cosine = -0.34: y = -x plus a growing orthogonal-ish part, through
        // the point where |cos| crosses 0.34 (E changes sign) while p < 0.
        let mut prev: Option<(Vec<i64>, bool)> = None;
        for k in 0..400i64 {
            let y: Vec<i64> = x
                .iter()
                .enumerate()
                .map(|(i, v)| -v + if i % 2 == 0 { k } else { -k })
                .collect();
            let d = decide(&x, &y, &p);
            if let Some((q, qd)) = &prev {
                if *qd != d {
                    g.extend(q.iter().copied());
                    g.extend(y.iter().copied());
                    break;
                }
            }
            prev = Some((y, d));
        }
        let want: Vec<bool> = g.chunks_exact(12).map(|y| decide(&x, y, &p)).collect();
        assert!(
            want.iter().any(|&w| w) && want.iter().any(|&w| !w),
            "{want:?}"
        );
        assert_eq!(
            run(p, &g, &x, m, seed, (0, Deviation::None)).unwrap(),
            want,
            "m = {m}, strict = {strict}"
        );
        // A flipped output share under `or` is still caught.
        let flip = Deviation::FlipOutput {
            template: 1,
            instance: 2,
        };
        assert!(run(p, &g, &x, m, seed + 50, (1, flip)).is_err());
    }
}

#[test]
fn every_deviation_is_detected_and_the_output_withheld() {
    let p = plan(8, false);
    let x: Vec<i64> = vec![200, -13, 77, 5, -250, 31, 0, 64];
    let g = gallery_for(&x);
    let deviations = [
        Deviation::FlipOutput {
            template: 0,
            instance: 3,
        },
        Deviation::AlterDelta { template: 1 },
        Deviation::WrongKey {
            template: 0,
            instance: 0,
        },
        Deviation::WrongKey {
            template: 2,
            instance: 7,
        },
        Deviation::WrongKeys { template: 1 },
        Deviation::CorruptMac,
    ];
    for (k, d) in deviations.into_iter().enumerate() {
        for server in 0..2 {
            for seed in 0..4u8 {
                let r = run(p, &g, &x, 10, 40 + seed + 8 * k as u8, (server, d));
                match r {
                    Err(e) => assert!(
                        e.contains("deviated")
                            || e.contains("wrong decryption key")
                            || e.contains("party"),
                        "{d:?} by server {server}: {e}"
                    ),
                    Ok(v) => panic!("{d:?} by server {server} was accepted with {v:?}"),
                }
            }
        }
    }
}
