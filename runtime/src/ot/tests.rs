//! End-to-end tests of the OT extension and chosen OT between parties 0 (sender) and 1
//! (receiver) over in-memory transports.

use std::collections::HashSet;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

use super::*;
use crate::net::{NetError, Transport};

fn random_choices(seed: u64, n: usize) -> Vec<bool> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// Per extension, the sender's pairs and the receiver's messages.
type Outputs = (Vec<Vec<(Block, Block)>>, Vec<Vec<Block>>);

/// A setup, then one extension per batch size, on both sides.
fn extend(sizes: Vec<usize>, choices: Vec<Vec<bool>>) -> Outputs {
    run_pair(
        move |mut t| {
            let mut s = OtSender::setup(&mut t, 1).unwrap();
            sizes
                .iter()
                .map(|&n| s.random(&mut t, n).unwrap())
                .collect()
        },
        move |mut t| {
            let mut r = OtReceiver::setup(&mut t, 0).unwrap();
            choices
                .iter()
                .map(|c| r.random(&mut t, c).unwrap())
                .collect()
        },
    )
}

fn check_batch(pairs: &[(Block, Block)], got: &[Block], choices: &[bool]) {
    assert_eq!(pairs.len(), choices.len());
    assert_eq!(got.len(), choices.len());
    for (j, ((&(m0, m1), &m), &c)) in pairs.iter().zip(got).zip(choices).enumerate() {
        let (chosen, other) = if c { (m1, m0) } else { (m0, m1) };
        assert!(m == chosen, "OT {j}: the receiver's message is not m_c");
        assert!(m != other, "OT {j}: m_c equals m_(1-c)");
    }
}

#[test]
fn random_ot_is_correct_for_every_batch_size() {
    for (k, n) in [0usize, 1, 127, 128, 129, 1000, 100_000]
        .into_iter()
        .enumerate()
    {
        let choices = random_choices(100 + k as u64, n);
        let (pairs, got) = extend(vec![n], vec![choices.clone()]);
        check_batch(&pairs[0], &got[0], &choices);
    }
}

#[test]
fn all_ones_and_all_zeros_choices() {
    for c in [false, true] {
        let choices = vec![c; 300];
        let (pairs, got) = extend(vec![300], vec![choices.clone()]);
        check_batch(&pairs[0], &got[0], &choices);
    }
}

/// Extensions of one setup continue the PRG streams and tweaks: no message of one call
/// reappears in another (nor within a call).
#[test]
fn consecutive_extensions_are_fresh() {
    let sizes = vec![1000, 129, 1, 1000, 4096 + 300];
    let choices: Vec<Vec<bool>> = sizes
        .iter()
        .enumerate()
        .map(|(k, &n)| random_choices(7 + k as u64, n))
        .collect();
    let (pairs, got) = extend(sizes.clone(), choices.clone());
    let mut seen = HashSet::new();
    for ((p, g), c) in pairs.iter().zip(&got).zip(&choices) {
        check_batch(p, g, c);
        for &(m0, m1) in p {
            assert!(seen.insert(m0) && seen.insert(m1), "an OT message repeats");
        }
    }
    assert_eq!(seen.len(), 2 * sizes.iter().sum::<usize>());
}

/// Both directions between two parties at once, interleaved with each other on one link.
#[test]
fn both_directions_share_a_link() {
    let c0 = random_choices(1, 500);
    let c1 = random_choices(2, 700);
    let (a, b) = {
        let (c0, c1) = (c0.clone(), c1.clone());
        run_pair(
            move |mut t| {
                let mut s = OtSender::setup(&mut t, 1).unwrap();
                let mut r = OtReceiver::setup(&mut t, 1).unwrap();
                let got = r.random(&mut t, &c0).unwrap();
                (s.random(&mut t, 700).unwrap(), got)
            },
            move |mut t| {
                let mut r = OtReceiver::setup(&mut t, 0).unwrap();
                let mut s = OtSender::setup(&mut t, 0).unwrap();
                let got = r.random(&mut t, &c1).unwrap();
                (s.random(&mut t, 500).unwrap(), got)
            },
        )
    };
    check_batch(&a.0, &b.1, &c1);
    check_batch(&b.0, &a.1, &c0);
}

#[test]
fn chosen_ot_of_odd_lengths() {
    let lens = [0usize, 1, 17, 1000, 16];
    let n = 61;
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let msgs: Vec<Vec<(Vec<u8>, Vec<u8>)>> = lens
        .iter()
        .map(|&len| {
            (0..n)
                .map(|_| {
                    let mut a = vec![0u8; len];
                    let mut b = vec![0u8; len];
                    rng.fill(&mut a[..]);
                    rng.fill(&mut b[..]);
                    (a, b)
                })
                .collect()
        })
        .collect();
    let choices: Vec<Vec<bool>> = (0..lens.len())
        .map(|k| random_choices(50 + k as u64, n))
        .collect();
    let (m, c) = (msgs.clone(), choices.clone());
    let ((), got) = run_pair(
        move |mut t| {
            let mut s = OtSender::setup(&mut t, 1).unwrap();
            for batch in &m {
                let pairs: Vec<(&[u8], &[u8])> =
                    batch.iter().map(|(a, b)| (&a[..], &b[..])).collect();
                s.send_chosen(&mut t, &pairs).unwrap();
            }
        },
        move |mut t| {
            let mut r = OtReceiver::setup(&mut t, 0).unwrap();
            c.iter()
                .zip(lens)
                .map(|(c, len)| r.receive_chosen(&mut t, c, len).unwrap())
                .collect::<Vec<_>>()
        },
    );
    for ((batch, got), choices) in msgs.iter().zip(&got).zip(&choices) {
        assert_eq!(got.len(), n);
        for (((a, b), x), &c) in batch.iter().zip(got).zip(choices) {
            assert_eq!(x, if c { b } else { a });
        }
    }
}

#[test]
fn empty_batches_send_nothing() {
    let ((sent, pairs), (sent_r, got, chosen)) = run_pair(
        |mut t| {
            let mut s = OtSender::setup(&mut t, 1).unwrap();
            let before = t.messages_sent();
            let pairs = s.random(&mut t, 0).unwrap();
            s.send_chosen(&mut t, &[]).unwrap();
            (t.messages_sent() - before, pairs)
        },
        |mut t| {
            let mut r = OtReceiver::setup(&mut t, 0).unwrap();
            let before = t.messages_sent();
            let got = r.random(&mut t, &[]).unwrap();
            let chosen = r.receive_chosen(&mut t, &[], 9).unwrap();
            (t.messages_sent() - before, got, chosen)
        },
    );
    assert_eq!((sent, sent_r), (0, 0));
    assert!(pairs.is_empty() && got.is_empty() && chosen.is_empty());
}

/// A matrix U of the wrong size (the peer asked for another count) is a protocol error naming
/// the peer, not a panic; so are chosen-OT corrections of the wrong length.
#[test]
fn wrong_lengths_are_protocol_errors() {
    let (err, ()) = run_pair(
        |mut t| {
            let mut s = OtSender::setup(&mut t, 1).unwrap();
            s.random(&mut t, 300).unwrap_err()
        },
        |mut t| {
            let mut r = OtReceiver::setup(&mut t, 0).unwrap();
            // 200 OTs pad to 256 rows, 300 to 384.
            r.random(&mut t, &[false; 200]).unwrap();
        },
    );
    match err {
        NetError::Protocol { peer: 1, detail } => {
            assert!(
                detail.contains("IKNP") && detail.contains("300 OTs"),
                "{detail}"
            )
        }
        other => panic!("expected a protocol error, got {other}"),
    }

    let ((), err) = run_pair(
        |mut t| {
            let mut s = OtSender::setup(&mut t, 1).unwrap();
            s.send_chosen(&mut t, &[(&[1, 2, 3][..], &[4, 5, 6][..]); 10])
                .unwrap();
        },
        |mut t| {
            let mut r = OtReceiver::setup(&mut t, 0).unwrap();
            r.receive_chosen(&mut t, &[true; 10], 4).unwrap_err()
        },
    );
    match err {
        NetError::Protocol { peer: 0, detail } => {
            assert!(detail.contains("chosen OT"), "{detail}")
        }
        other => panic!("expected a protocol error, got {other}"),
    }
}

/// The sender's m0 (and m1, and the receiver's outputs) look uniform: the fraction of ones over
/// about 10^6 bits is 0.5 ± 0.01 (the standard deviation is 0.0005).
#[test]
fn output_bits_are_balanced() {
    let n = 1_000_000usize.div_ceil(128);
    let choices = random_choices(9, n);
    let (pairs, got) = extend(vec![n], vec![choices]);
    let fraction = |xs: &mut dyn Iterator<Item = Block>| {
        let ones: u64 = xs.map(|x| x.count_ones() as u64).sum();
        ones as f64 / (128 * n) as f64
    };
    for (what, f) in [
        ("m0", fraction(&mut pairs[0].iter().map(|p| p.0))),
        ("m1", fraction(&mut pairs[0].iter().map(|p| p.1))),
        ("m_c", fraction(&mut got[0].iter().copied())),
    ] {
        assert!((f - 0.5).abs() < 0.01, "{what}: fraction of ones {f}");
    }
}

#[test]
fn debug_shows_the_peer_only() {
    let (s, r) = run_pair(
        |mut t| format!("{:?}", OtSender::setup(&mut t, 1).unwrap()),
        |mut t| format!("{:?}", OtReceiver::setup(&mut t, 0).unwrap()),
    );
    assert_eq!(s, "OtSender { peer: 1, .. }");
    assert_eq!(r, "OtReceiver { peer: 0, .. }");
}

/// Throughput of `random` for 10^6 OTs (both parties on their own thread, in-memory link):
/// `cargo test --release -p irisc-runtime --lib ot::tests::rate -- --ignored --nocapture`.
#[test]
#[ignore = "a timing, not a check: run it in release with --ignored --nocapture to read the rate"]
fn rate_of_one_million_random_ots() {
    const N: usize = 1_000_000;
    let choices = random_choices(3, N);
    let ((ts, s_len), (tr, r_len)) = run_pair(
        |mut t| {
            let mut s = OtSender::setup(&mut t, 1).unwrap();
            s.random(&mut t, 1000).unwrap(); // warm up
            let start = std::time::Instant::now();
            let out = s.random(&mut t, N).unwrap();
            (start.elapsed(), out.len())
        },
        move |mut t| {
            let mut r = OtReceiver::setup(&mut t, 0).unwrap();
            r.random(&mut t, &choices[..1000]).unwrap();
            let start = std::time::Instant::now();
            let out = r.random(&mut t, &choices).unwrap();
            (start.elapsed(), out.len())
        },
    );
    assert_eq!((s_len, r_len), (N, N));
    let wall = ts.max(tr).as_secs_f64();
    println!(
        "IKNP random OT, n = {N}: sender {:.1} ms, receiver {:.1} ms, {:.2} M OTs/s",
        ts.as_secs_f64() * 1e3,
        tr.as_secs_f64() * 1e3,
        N as f64 / wall / 1e6
    );
}
