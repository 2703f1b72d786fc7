//! Algorithm 16, 3-party oblivious transfer (after Mohassel and Rindal, ABY3), batched.
//!
//! The sender holds two messages m_0, m_1 ∈ Z_2^k per element; the receiver and the helper both
//! hold the choice bit c. The sender and the helper share a PRSS seed, from which both draw the
//! pads w_0, w_1. The sender sends k_b = m_b ⊕ w_b (both b) to the receiver, the helper sends
//! w_c, and the receiver outputs m_c = k_c ⊕ w_c. The receiver never sees w_{1−c}, so m_{1−c}
//! stays hidden; the sender and the helper receive nothing.
//!
//! Seeds: the paper's seed_i belongs to its parties i and i+1; here seed s_j belongs to parties j
//! and j+1 ([`Prss`]), so the paper's seed_i is s_{i−1} and its party j is party j − 1. The pad
//! seed is the one the sender and the helper have in common: s_sender if the helper is
//! sender + 1 (the sender's `own` stream, the helper's `prev`), else s_helper. With the paper's
//! roles (sender 1, receiver 2, helper 3, pads from seed_3) that is sender 0, receiver 1,
//! helper 2 and s_2.
//!
//! Cost: one round. The sender sends 2n elements and the helper n elements, both to the
//! receiver, in the storage width of `T`; the receiver sends nothing. An empty batch sends
//! nothing (n is public).

use crate::net::{NetError, Transport};
use crate::rand::Prss;
use crate::ring::{mask_slice, RingElem};
use crate::share::binary::words_for;

use super::{recv_elems, send_elems};

/// Who plays which part of Algorithm 16.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ot3Roles {
    pub sender: usize,
    pub receiver: usize,
    pub helper: usize,
}

impl Ot3Roles {
    /// The sender and the receiver; the helper is the third party.
    ///
    /// Panics unless both are distinct party indices (fixed by the protocol, not by peers).
    pub fn new(sender: usize, receiver: usize) -> Ot3Roles {
        assert!(
            sender < 3 && receiver < 3 && sender != receiver,
            "3-party OT: sender {sender} and receiver {receiver} must be distinct parties"
        );
        Ot3Roles {
            sender,
            receiver,
            helper: 3 - sender - receiver,
        }
    }
}

/// One party's input to [`ot3`], according to its role.
#[derive(Debug, Clone, Copy)]
pub enum Ot3Input<'a, T> {
    /// The two messages, element-wise.
    Sender { m0: &'a [T], m1: &'a [T] },
    /// The choice bits, bit-sliced (bit e of word e / 64).
    Receiver { choice: &'a [u64] },
    /// The same choice bits as the receiver's.
    Helper { choice: &'a [u64] },
}

/// The first `n` bits of `words` as ring elements 0 or 1, element e from bit e. A fixed
/// 64-step inner loop per word, which the compiler vectorizes.
pub(crate) fn expand_bits<T: RingElem>(words: &[u64], n: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; words.len() * 64];
    for (o, &w) in out.chunks_exact_mut(64).zip(words) {
        for (b, x) in o.iter_mut().enumerate() {
            *x = T::from_u64((w >> b) & 1);
        }
    }
    out.truncate(n);
    out
}

/// `if c { b } else { a }` per element, branch-free: `c` is 0 or 1.
#[inline]
fn select<T: RingElem>(a: T, b: T, c: T) -> T {
    let m = T::ZERO.wrapping_sub(c).to_u64();
    T::from_u64(a.to_u64() ^ ((a.to_u64() ^ b.to_u64()) & m))
}

/// Algorithm 16, 3OT((m_0, m_1), c, c) → (⊥, m_c, ⊥) on `n` elements of Z_2^k: returns
/// `Some(m_c)` at the receiver and `None` at the sender and the helper. One round.
///
/// All three parties draw 2n PRSS elements, so every call must be made by all three with the
/// same `roles`, `n` and `T`. Panics if `input` does not fit this party's role or `n`, or if
/// `k > T::BITS` (caller bugs); a malformed peer message is [`NetError::Protocol`].
#[doc(alias = "3OT")]
pub fn ot3<T: RingElem>(
    net: &mut dyn Transport,
    prss: &mut Prss,
    roles: Ot3Roles,
    input: Ot3Input<'_, T>,
    n: usize,
    k: u32,
) -> Result<Option<Vec<T>>, NetError> {
    assert!(
        k <= T::BITS,
        "3-party OT: Z_2^{k} does not fit {}-bit storage",
        T::BITS
    );
    let me = net.party();
    // Every party draws, so that the streams it shares with the others stay aligned.
    let pads = prss.random_rep3::<T>(2 * n);
    if n == 0 {
        return Ok((me == roles.receiver).then(Vec::new));
    }
    // The stream this party shares with its partner (sender ↔ helper).
    let shared_with = |partner: usize| {
        if partner == (me + 1) % 3 {
            &pads.own
        } else {
            &pads.prev
        }
    };
    match input {
        Ot3Input::Sender { m0, m1 } => {
            assert!(
                me == roles.sender,
                "3-party OT: party {me} is not the sender"
            );
            assert!(
                m0.len() == n && m1.len() == n,
                "3-party OT: message count differs from n"
            );
            let w = shared_with(roles.helper);
            let mut msg: Vec<T> = m0
                .iter()
                .chain(m1)
                .zip(w)
                .map(|(&m, &p)| T::from_u64(m.to_u64() ^ p.to_u64()))
                .collect();
            mask_slice(&mut msg, k);
            send_elems(net, roles.receiver, &msg)?;
            Ok(None)
        }
        Ot3Input::Helper { choice } => {
            assert!(
                me == roles.helper,
                "3-party OT: party {me} is not the helper"
            );
            assert!(
                choice.len() == words_for(n),
                "3-party OT: choice words differ from n"
            );
            let w = shared_with(roles.sender);
            let c: Vec<T> = expand_bits(choice, n);
            let (w0, w1) = w.split_at(n);
            let mut msg: Vec<T> = w0
                .iter()
                .zip(w1)
                .zip(&c)
                .map(|((&a, &b), &c)| select(a, b, c))
                .collect();
            mask_slice(&mut msg, k);
            send_elems(net, roles.receiver, &msg)?;
            Ok(None)
        }
        Ot3Input::Receiver { choice } => {
            assert!(
                me == roles.receiver,
                "3-party OT: party {me} is not the receiver"
            );
            assert!(
                choice.len() == words_for(n),
                "3-party OT: choice words differ from n"
            );
            let masked: Vec<T> = recv_elems(net, roles.sender, 2 * n, "OT masked messages")?;
            let pad: Vec<T> = recv_elems(net, roles.helper, n, "OT chosen pads")?;
            let c: Vec<T> = expand_bits(choice, n);
            let (k0, k1) = masked.split_at(n);
            let mut out: Vec<T> = k0
                .iter()
                .zip(k1)
                .zip(c.iter().zip(&pad))
                .map(|((&a, &b), (&c, &p))| T::from_u64(select(a, b, c).to_u64() ^ p.to_u64()))
                .collect();
            // A peer's bits above k must not reach the caller's arithmetic.
            mask_slice(&mut out, k);
            Ok(Some(out))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::ring::mask;
    use crate::share::binary::pack_bits;
    use proptest::prelude::*;

    /// Runs the OT with the given roles on plain messages and choice bits.
    fn run(
        roles: Ot3Roles,
        m0: Vec<u32>,
        m1: Vec<u32>,
        choice: Vec<bool>,
        k: u32,
    ) -> [crate::protocol::testutil::Run<Option<Vec<u32>>>; 3] {
        let n = choice.len();
        let words = pack_bits(&choice);
        let inputs = [(); 3].map(|_| (m0.clone(), m1.clone(), words.clone()));
        run_protocol(inputs, move |net, prss, (m0, m1, c)| {
            let me = net.party();
            let input = if me == roles.sender {
                Ot3Input::Sender { m0, m1 }
            } else if me == roles.receiver {
                Ot3Input::Receiver { choice: c }
            } else {
                Ot3Input::Helper { choice: c }
            };
            ot3(net, prss, roles, input, n, k).unwrap()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]
        #[test]
        fn receiver_gets_the_chosen_message(
            sender in 0usize..3,
            step in 1usize..3,
            k in 1u32..=32,
            v in proptest::collection::vec(any::<(u32, u32, bool)>(), 0..150),
        ) {
            let roles = Ot3Roles::new(sender, (sender + step) % 3);
            let m = mask(k) as u32;
            let m0: Vec<u32> = v.iter().map(|t| t.0 & m).collect();
            let m1: Vec<u32> = v.iter().map(|t| t.1 & m).collect();
            let c: Vec<bool> = v.iter().map(|t| t.2).collect();
            let runs = run(roles, m0.clone(), m1.clone(), c.clone(), k);
            let want: Vec<u32> = (0..v.len()).map(|e| if c[e] { m1[e] } else { m0[e] }).collect();
            prop_assert_eq!(runs[roles.receiver].out.as_ref(), Some(&want));
            prop_assert!(runs[roles.sender].out.is_none() && runs[roles.helper].out.is_none());
            let busy = !v.is_empty() as u64;
            prop_assert_eq!(runs[roles.sender].messages, busy);
            prop_assert_eq!(runs[roles.sender].bytes, 2 * 4 * v.len() as u64);
            prop_assert_eq!(runs[roles.helper].messages, busy);
            prop_assert_eq!(runs[roles.helper].bytes, 4 * v.len() as u64);
            prop_assert_eq!(runs[roles.receiver].messages, 0);
        }
    }

    #[test]
    fn pads_hide_both_messages_on_the_wire() {
        // Equal messages must not travel as equal words: the pads are fresh per element.
        let n = 100;
        let roles = Ot3Roles::new(0, 1);
        let out = crate::net::memory::run_three(move |mut t| {
            let mut prss = Prss::setup(&mut t).unwrap();
            let zeros = vec![0u64; n];
            let c = vec![0u64; words_for(n)];
            match t.party() {
                0 => ot3(
                    &mut t,
                    &mut prss,
                    roles,
                    Ot3Input::Sender {
                        m0: &zeros,
                        m1: &zeros,
                    },
                    n,
                    64,
                )
                .map(|_| None),
                1 => {
                    // Read the raw masked messages instead of running the receiver.
                    let _ = prss.random_rep3::<u64>(2 * n);
                    let raw: Vec<u64> = super::super::recv_elems(&mut t, 0, 2 * n, "raw").unwrap();
                    let _ = t.recv(2).unwrap();
                    Ok(Some(raw))
                }
                _ => ot3::<u64>(
                    &mut t,
                    &mut prss,
                    roles,
                    Ot3Input::Helper { choice: &c },
                    n,
                    64,
                )
                .map(|_| None),
            }
        });
        let raw = out[1].as_ref().unwrap().as_ref().unwrap();
        assert!(raw.iter().filter(|&&w| w == 0).count() < 2);
        assert_ne!(raw[..n], raw[n..]);
    }

    #[test]
    fn malformed_messages_are_protocol_errors() {
        for bad in [0usize, 2] {
            let out = crate::net::memory::run_three(move |mut t| {
                let mut prss = Prss::from_seeds(t.party(), [7; 16], [7; 16]);
                let roles = Ot3Roles::new(0, 1);
                let n = 70;
                let m = vec![1u16; n];
                let c = vec![0u64; words_for(n)];
                let me = t.party();
                if me == bad {
                    // Right count of elements, wrong width: 1 byte short.
                    let want = if me == 0 { 2 * n } else { n };
                    t.send(1, vec![0; 2 * want - 1]).unwrap();
                    return None;
                }
                let input = match me {
                    0 => Ot3Input::Sender { m0: &m, m1: &m },
                    1 => Ot3Input::Receiver { choice: &c },
                    _ => Ot3Input::Helper { choice: &c },
                };
                Some(ot3(&mut t, &mut prss, roles, input, n, 16))
            });
            let err = out[1].as_ref().unwrap().as_ref().unwrap_err();
            assert!(
                matches!(err, NetError::Protocol { peer, .. } if *peer == bad),
                "{err}"
            );
        }
    }

    #[test]
    #[should_panic(expected = "distinct")]
    fn roles_must_differ() {
        Ot3Roles::new(1, 1);
    }
}
