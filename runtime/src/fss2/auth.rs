//! Authenticated sharings for the malicious variant of `fss2` (paper 002, Section 3.1 "SPDZ2k
//! protocol", Fig. 2, Definition 2 and CondEval.Verify), as building blocks.
//!
//! - **Arithmetic**: values in Z_2^(l0 + l1) = Z_2^112 (`l0 = 64` bits of data, `l1 = 48` bits
//!   of statistical security), a global MAC key `Delta` in Z_2^48 shared additively, and
//!   `[[x]] = ([x], [Delta x])`. Linear operations act on both parts; a public constant `c`
//!   is added by one server to `[x]` and by both as `c [Delta]_b` to the MAC.
//! - **Optimised authenticated sharing** `<<x>> = (delta_x, [r_x], [Delta r_x])`: the MAC of `x`
//!   is `Delta delta_x - Delta r_x`, so SS.MUL and SS.IP carry their MACs with the dealer's
//!   `[Delta r_x r_y]` as the plain versions carry `[r_x r_y]`.
//! - **F_MacVryGen** (Fig. 2): for the opened values `x_i` with MAC shares and public random
//!   coefficients `r_i`, `[zeta]_b = sum_i r_i ([Delta]_b x_i - [Delta x_i]_b)`; honest openings
//!   give `zeta = 0`, an error `e_i` in an opened value gives `sum r_i Delta e_i`, zero only with
//!   probability about `2^-l1` over `Delta`.
//! - **Authenticated Boolean sharing** `(v)^m` (Definition 2): `m` XOR sharings, of `v` where the
//!   secret `psi[i] = 0` (normal) and of 0 where `psi[i] = 1` (trap); [`verify`] is
//!   CondEval.Verify, run by the party that knows `psi`.

/// Data bits `l0` and security bits `l1` (the paper's parameters).
pub const L0: u32 = 64;
pub const L1: u32 = 48;
const MASK: u128 = (1u128 << (L0 + L1)) - 1;

/// Reduction into Z_2^(l0 + l1).
pub fn reduce(x: u128) -> u128 {
    x & MASK
}

/// One server's share of `[[x]]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AuthShare {
    pub value: u128,
    pub mac: u128,
}

impl AuthShare {
    pub fn plus(self, o: AuthShare) -> AuthShare {
        AuthShare {
            value: reduce(self.value.wrapping_add(o.value)),
            mac: reduce(self.mac.wrapping_add(o.mac)),
        }
    }

    pub fn minus(self, o: AuthShare) -> AuthShare {
        AuthShare {
            value: reduce(self.value.wrapping_sub(o.value)),
            mac: reduce(self.mac.wrapping_sub(o.mac)),
        }
    }

    /// `c * [[x]]` for a public `c`.
    pub fn scale(self, c: u128) -> AuthShare {
        AuthShare {
            value: reduce(self.value.wrapping_mul(c)),
            mac: reduce(self.mac.wrapping_mul(c)),
        }
    }

    /// `[[x + c]]` for a public `c`: server 0 adds `c` to its value, both add `c [Delta]_b`.
    pub fn add_public(self, b: usize, c: u128, key_share: u128) -> AuthShare {
        AuthShare {
            value: reduce(self.value.wrapping_add(if b == 0 { c } else { 0 })),
            mac: reduce(self.mac.wrapping_add(c.wrapping_mul(key_share))),
        }
    }
}

/// The dealer's sharing of `[[x]]` under `Delta` from two uniform words.
pub fn share(x: u128, delta: u128, random: [u128; 2]) -> [AuthShare; 2] {
    let (x, m) = (reduce(x), reduce(x.wrapping_mul(delta)));
    [
        AuthShare {
            value: reduce(random[0]),
            mac: reduce(random[1]),
        },
        AuthShare {
            value: reduce(x.wrapping_sub(random[0])),
            mac: reduce(m.wrapping_sub(random[1])),
        },
    ]
}

/// `SS.MUL(<<x>>, <<y>>, [[r_x r_y]])` for server `b` with key share `[Delta]_b`: `[[x y]]`.
/// `x` and `y` are `(delta, [[r]]_b)`.
pub fn ss_mul(
    b: usize,
    key_share: u128,
    x: (u128, AuthShare),
    y: (u128, AuthShare),
    rxry: AuthShare,
) -> AuthShare {
    let (dx, rx) = x;
    let (dy, ry) = y;
    rxry.minus(ry.scale(dx)).minus(rx.scale(dy)).add_public(
        b,
        reduce(dx.wrapping_mul(dy)),
        key_share,
    )
}

/// `SS.IP(<<x>>, <<y>>, [[u]])`: `[[sum_i x_i y_i]]`, with `[[u]] = [[sum_i r_x,i r_y,i]]`.
pub fn ss_ip(
    b: usize,
    key_share: u128,
    dx: &[u128],
    rx: &[AuthShare],
    dy: &[u128],
    ry: &[AuthShare],
    u: AuthShare,
) -> AuthShare {
    let mut acc = u;
    let mut public = 0u128;
    for i in 0..dx.len() {
        public = public.wrapping_add(dx[i].wrapping_mul(dy[i]));
        acc = acc.minus(ry[i].scale(dx[i])).minus(rx[i].scale(dy[i]));
    }
    acc.add_public(b, reduce(public), key_share)
}

/// `F_MacVryGen` (Fig. 2), server `b`'s share of `zeta` for the opened values `x_i`, this
/// server's MAC shares `[Delta x_i]_b` and the public coefficients.
pub fn mac_check_share(key_share: u128, opened: &[(u128, u128)], coefficients: &[u128]) -> u128 {
    assert_eq!(opened.len(), coefficients.len());
    reduce(
        opened
            .iter()
            .zip(coefficients)
            .fold(0u128, |acc, (&(x, mac), &r)| {
                acc.wrapping_add(r.wrapping_mul(key_share.wrapping_mul(x).wrapping_sub(mac)))
            }),
    )
}

/// What CondEval.Verify concludes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The authenticated output bit.
    Accept(bool),
    /// `psi = 1^m`: no normal instance carries the value (`z = -1`, probability `2^-m`).
    NoNormalInstance,
    /// A server deviated (`z = ⊥`): the output is withheld.
    Abort(String),
}

/// CondEval.Verify: the two servers' shares of `(y)^m` and of `sigma`, checked with `psi`.
pub fn verify(y: [&[bool]; 2], sigma: [u128; 2], psi: &[bool]) -> Verdict {
    let m = psi.len();
    if y[0].len() != m || y[1].len() != m {
        return Verdict::Abort(format!(
            "a server sent {} and {} output shares for {m} instances",
            y[0].len(),
            y[1].len()
        ));
    }
    if psi.iter().all(|&t| t) {
        return Verdict::NoNormalInstance;
    }
    if reduce(sigma[0].wrapping_add(sigma[1])) != 0 {
        return Verdict::Abort(
            "the MAC check failed: a server altered an opened value, a MAC or its key-decryption message".into(),
        );
    }
    let mut z: Option<bool> = None;
    for i in 0..m {
        let yi = y[0][i] ^ y[1][i];
        if psi[i] {
            if yi {
                return Verdict::Abort(format!(
                    "trap instance {i} opened to 1: a server flipped an output share"
                ));
            }
        } else {
            match z {
                None => z = Some(yi),
                Some(v) if v != yi => {
                    return Verdict::Abort(format!(
                        "normal instances disagree (instance {i}): a server flipped an output share"
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Verdict::Accept(z.expect("a normal instance exists"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key() -> impl Strategy<Value = u128> {
        (1u128..(1u128 << L1)).prop_map(|k| k)
    }

    fn masked(x: u128, r: u128, delta: u128, s: [u128; 2]) -> [(u128, AuthShare); 2] {
        let sh = share(r, delta, s);
        let d = reduce(x.wrapping_add(r));
        [(d, sh[0]), (d, sh[1])]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// SS.MUL keeps the value and its MAC: `x y` and `Delta x y`.
        #[test]
        fn authenticated_ss_mul(x in any::<u128>(), y in any::<u128>(), rx in any::<u128>(), ry in any::<u128>(),
                                delta in key(), k0 in any::<u128>(), s in any::<[u128; 6]>()) {
            let keys = [reduce(k0), reduce(delta.wrapping_sub(k0))];
            let (ax, ay) = (masked(x, rx, delta, [s[0], s[1]]), masked(y, ry, delta, [s[2], s[3]]));
            let c = share(rx.wrapping_mul(ry), delta, [s[4], s[5]]);
            let z: Vec<AuthShare> = (0..2).map(|b| ss_mul(b, keys[b], ax[b], ay[b], c[b])).collect();
            let v = z[0].plus(z[1]);
            prop_assert_eq!(v.value, reduce(x.wrapping_mul(y)));
            prop_assert_eq!(v.mac, reduce(delta.wrapping_mul(x.wrapping_mul(y))));
        }

        /// Honest openings pass F_MacVryGen; one wrong opened value or MAC share fails it.
        #[test]
        fn the_mac_check_catches_a_changed_opening(values in proptest::collection::vec(any::<u128>(), 1..12),
                                                   delta in key(), k0 in any::<u128>(),
                                                   coef in proptest::collection::vec(1u128..(1u128 << 64), 12),
                                                   which in any::<prop::sample::Index>(),
                                                   error in 1u128..(1u128 << 64), in_mac in any::<bool>(),
                                                   s in any::<[u128; 2]>()) {
            let keys = [reduce(k0), reduce(delta.wrapping_sub(k0))];
            let shares: Vec<[AuthShare; 2]> = values.iter().map(|&v| share(v, delta, s)).collect();
            let n = values.len();
            let opened = |b: usize, err: Option<(usize, bool)>| -> Vec<(u128, u128)> {
                shares.iter().enumerate().map(|(i, sh)| {
                    let mut x = reduce(sh[0].value.wrapping_add(sh[1].value));
                    let mut mac = sh[b].mac;
                    if let Some((j, mac_err)) = err {
                        if i == j && b == 0 {
                            if mac_err { mac = reduce(mac.wrapping_add(error)); } else { x = reduce(x.wrapping_add(error)); }
                        }
                    }
                    (x, mac)
                }).collect()
            };
            let zeta = |err| reduce(mac_check_share(keys[0], &opened(0, err), &coef[..n])
                .wrapping_add(mac_check_share(keys[1], &opened(1, err), &coef[..n])));
            prop_assert_eq!(zeta(None), 0);
            // Server 0 alone changes what it reports: the value it contributes to the opening
            // (both then use the changed value) or its MAC share.
            let j = which.index(n);
            let bad = {
                let o0 = opened(0, Some((j, in_mac)));
                let mut o1 = opened(1, None);
                if !in_mac { o1[j].0 = o0[j].0; }
                reduce(mac_check_share(keys[0], &o0, &coef[..n]).wrapping_add(mac_check_share(keys[1], &o1, &coef[..n])))
            };
            prop_assert_ne!(bad, 0);
        }

        /// CondEval.Verify accepts honest shares with the value of the normal instances and
        /// aborts on any flip pattern other than all normal instances at once.
        #[test]
        fn verify_detects_flips(v in any::<bool>(), psi in proptest::collection::vec(any::<bool>(), 10),
                                s in proptest::collection::vec(any::<bool>(), 10),
                                flips in proptest::collection::vec(any::<bool>(), 10)) {
            prop_assume!(psi.iter().any(|&t| !t));
            let y0 = s.clone();
            let y1: Vec<bool> = (0..10).map(|i| s[i] ^ (v && !psi[i])).collect();
            prop_assert_eq!(verify([&y0, &y1], [5, reduce(5u128.wrapping_neg())], &psi), Verdict::Accept(v));
            let flipped: Vec<bool> = (0..10).map(|i| y0[i] ^ flips[i]).collect();
            let verdict = verify([&flipped, &y1], [0, 0], &psi);
            let fools = (0..10).all(|i| flips[i] != psi[i]);
            if flips.iter().any(|&f| f) {
                if fools {
                    // Guessing psi exactly: the probability 2^-m of Theorem 5.
                    prop_assert_eq!(verdict, Verdict::Accept(!v));
                } else {
                    prop_assert!(matches!(verdict, Verdict::Abort(_)), "{:?}", verdict);
                }
            }
            prop_assert!(matches!(verify([&y0, &y1], [1, 0], &psi), Verdict::Abort(_)));
        }
    }
}
