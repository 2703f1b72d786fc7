//! CondEval (paper 002, Section 4): `[s o f(x)]^B` from a Boolean sharing of a bit `s` and an
//! arithmetic sharing of `x`, where `f` is an interval-containment FSS gate ([`super::ic`]), in
//! one round: the round that opens `x + r` also carries the key-decryption messages.
//!
//! - **Setup** (Table 3, KeyGen and KeyEnc, run by the dealer): an IC key pair `(k_0, k_1)` for
//!   the input mask `r`; a random `t` and the pair `(k_t || t, k_{1-t} || (1-t))`; for each
//!   server `b` the pair one-time-padded under pads `sk_0^(b), sk_1^(b)` and permuted by a random
//!   bit `pi_b` (`C_b`), and the other server's pads with `pi_{1-b}` (`SK_b`).
//! - **Eval** (the CondEval.Eval functionality, semi-honest): `S_b` sends
//!   `p^(1-b) = [s]_b xor pi_{1-b}` and `sk^(1-b) = sk^(1-b)_{[s]_b}` (KeyDec); on receiving
//!   `(p^(b), sk^(b))` it decrypts `C_b[p^(b)]` to `k || id` and evaluates `Eval^f(k, id, x + r)`.
//!   Equal shares of `s` (`s = 0`) make both servers decrypt the same key, whose two evaluations
//!   cancel; different shares (`s = 1`) give `k_0` and `k_1`, whose evaluations XOR to `f(x)`
//!   (Theorem 1).
//!
//! One departure, for bandwidth: a pad is not `|k| + 1` random bits sent whole but the expansion
//! of a 16-byte seed (blake3 in extendable-output mode under its own context), and KeyDec sends
//! the seed: 17 bytes per gate instead of a whole key. The unused key is then hidden
//! computationally (by the PRG) rather than information-theoretically, the same assumption the
//! DCF keys already rest on.
//!
//! `s or f(x)` (Section 4, "defined similarly") is `not(not s and not f(x))`: `S_0` negates its
//! share of `s` and of the result, and the gate is generated with output offset 1, so that two
//! different keys XOR to `not f(x)` while two equal keys still cancel.

use super::dcf::SEED_BYTES;
use super::ic::{self, IcKey};

/// Bytes of a pad seed `sk`.
pub const PAD_SEED_BYTES: usize = 16;

/// How `s` and `f(x)` are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conj {
    And,
    Or,
}

/// What the dealer decides for one CondEval gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gate {
    /// `f(x) = 1{p <= sign * x <= q}` in Z_2^64.
    pub interval: (u64, u64),
    /// The test is on `-x` (the servers negate the opened `x + r`; the key's mask is `-r`).
    pub negate: bool,
    pub conj: Conj,
}

/// One server's CondEval material `K_b = {C_b, SK_b, [r]_b}` (Table 3).
#[derive(Clone, PartialEq, Eq)]
pub struct CondEvalKey {
    server: u8,
    gate: Gate,
    /// `C_b`: `k_t || t` and `k_{1-t} || (1-t)` under this server's pads, permuted by `pi_b`.
    sealed: [Vec<u8>; 2],
    /// `SK_b`: the pads of the other server's `C_{1-b}`, one of which is sent in KeyDec.
    peer_pads: [[u8; PAD_SEED_BYTES]; 2],
    /// `pi_{1-b}`.
    peer_permutation: bool,
    /// `[r]_b`: this server's share of the mask on `x`.
    pub mask_share: u64,
}

impl std::fmt::Debug for CondEvalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Key material is never printed.
        f.debug_struct("CondEvalKey")
            .field("server", &self.server)
            .field("gate", &self.gate)
            .finish_non_exhaustive()
    }
}

/// KeyDec's message from `S_b` to `S_{1-b}`: `p^(1-b) || sk^(1-b)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRequest {
    pub index: bool,
    pub pad: [u8; PAD_SEED_BYTES],
}

impl KeyRequest {
    pub const BYTES: usize = 1 + PAD_SEED_BYTES;

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(u8::from(self.index));
        out.extend_from_slice(&self.pad);
    }

    pub fn decode(bytes: &[u8]) -> Result<KeyRequest, CondEvalError> {
        if bytes.len() != Self::BYTES || bytes[0] > 1 {
            return Err(CondEvalError::Malformed(
                "a key-decryption message is 17 bytes and starts with 0 or 1".into(),
            ));
        }
        Ok(KeyRequest {
            index: bytes[0] == 1,
            pad: bytes[1..].try_into().expect("16"),
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CondEvalError {
    #[error("CondEval: {0}")]
    Malformed(String),
    #[error("CondEval: the key the other server's message decrypts is not a key ({0}): the other server sent a wrong decryption key")]
    WrongPad(String),
}

/// The pad of a seed: `|k| + 1` bytes (the sealed `k || id`).
fn pad(seed: &[u8; PAD_SEED_BYTES]) -> Vec<u8> {
    pad_of(seed, IcKey::ENCODED_BYTES)
}

fn xor_into(a: &mut [u8], b: &[u8]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x ^= y;
    }
}

/// CondEval.Setup (Table 3): the two servers' material for one gate, from the dealer's
/// randomness `random` (fills a buffer with uniform bytes).
pub fn setup(gate: Gate, random: &mut dyn FnMut(&mut [u8])) -> [CondEvalKey; 2] {
    let word = |random: &mut dyn FnMut(&mut [u8])| {
        let mut b = [0u8; 8];
        random(&mut b);
        u64::from_le_bytes(b)
    };
    // KeyGen: r, [r], (k_0, k_1) <- Gen^f(r, 1, 0, Z_2), t, pi_0, pi_1, the four pads.
    let r = word(random);
    let r0 = word(random);
    let z = word(random);
    let weight = word(random);
    let mut seeds = [[0u8; SEED_BYTES]; 2];
    for s in &mut seeds {
        random(s);
    }
    let mut bits = [0u8; 1];
    random(&mut bits);
    let (t, pi) = (bits[0] & 1 == 1, [bits[0] & 2 == 2, bits[0] & 4 == 4]);
    let mut pads = [[[0u8; PAD_SEED_BYTES]; 2]; 2];
    for p in pads.iter_mut().flatten() {
        random(p);
    }
    let key_mask = if gate.negate { r.wrapping_neg() } else { r };
    let r_out = u64::from(gate.conj == Conj::Or);
    let (p, q) = gate.interval;
    let keys = ic::gen(p, q, key_mask, r_out, seeds, [z, weight]);
    // KeyEnc: m_b = {sk_0^(b) xor (k_t || t), sk_1^(b) xor (k_{1-t} || 1-t)}, C_b = Permu(pi_b, m_b).
    let plain = [
        keys[usize::from(t)].encode(),
        keys[usize::from(!t)].encode(),
    ];
    let sealed_for = |b: usize| -> [Vec<u8>; 2] {
        let m: [Vec<u8>; 2] = std::array::from_fn(|j| {
            let mut c = plain[j].clone();
            xor_into(&mut c, &pad(&pads[b][j]));
            c
        });
        // C_b[i] = m_b[i xor pi_b].
        std::array::from_fn(|i| m[i ^ usize::from(pi[b])].clone())
    };
    std::array::from_fn(|b| CondEvalKey {
        server: b as u8,
        gate,
        sealed: sealed_for(b),
        peer_pads: pads[1 - b],
        peer_permutation: pi[1 - b],
        mask_share: if b == 0 { r0 } else { r.wrapping_sub(r0) },
    })
}

impl CondEvalKey {
    pub fn server(&self) -> usize {
        usize::from(self.server)
    }

    pub fn gate(&self) -> Gate {
        self.gate
    }

    /// The share of `s` this server feeds in: `S_0` negates it for `or`.
    fn own_share(&self, s_share: bool) -> bool {
        s_share ^ (self.gate.conj == Conj::Or && self.server == 0)
    }

    /// KeyDec, sending side: this server's message for its share of `s`.
    pub fn key_request(&self, s_share: bool) -> KeyRequest {
        let s = self.own_share(s_share);
        KeyRequest {
            index: s ^ self.peer_permutation,
            pad: self.peer_pads[usize::from(s)],
        }
    }

    /// KeyDec, receiving side, then Eval: this server's XOR share of `s o f(x)` from the other
    /// server's message and the opened `x + r`.
    pub fn eval(&self, request: &KeyRequest, opened: u64) -> Result<bool, CondEvalError> {
        let (key, x) = self.open_key(request, opened)?;
        Ok(self.output(key.eval_bits(&[x])[0]))
    }

    /// KeyDec: the gate key the other server's message unlocks, and the point to evaluate it
    /// at (`opened`, negated for a gate on `-x`). [`CondEvalKey::eval`] is this, the key's
    /// evaluation (which callers may batch over many instances) and [`CondEvalKey::output`].
    pub fn open_key(
        &self,
        request: &KeyRequest,
        opened: u64,
    ) -> Result<(IcKey, u64), CondEvalError> {
        let mut bytes = self.sealed[usize::from(request.index)].clone();
        xor_into(&mut bytes, &pad(&request.pad));
        let key = IcKey::decode(&bytes).map_err(CondEvalError::WrongPad)?;
        let x = if self.gate.negate {
            opened.wrapping_neg()
        } else {
            opened
        };
        Ok((key, x))
    }

    /// This server's share of `s o f(x)` from its share `y` of the opened key's evaluation.
    pub fn output(&self, y: bool) -> bool {
        y ^ (self.gate.conj == Conj::Or && self.server == 0)
    }

    /// Bytes of [`CondEvalKey::encode`].
    pub const ENCODED_BYTES: usize =
        1 + 1 + 16 + 8 + 2 * PAD_SEED_BYTES + 8 + 2 * IcKey::ENCODED_BYTES;

    /// `server | flags (negate, or, pi_{1-b}) | interval p, q | pads | [r]_b | C_b`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.server);
        out.push(
            u8::from(self.gate.negate)
                | u8::from(self.gate.conj == Conj::Or) << 1
                | u8::from(self.peer_permutation) << 2,
        );
        out.extend_from_slice(&self.gate.interval.0.to_le_bytes());
        out.extend_from_slice(&self.gate.interval.1.to_le_bytes());
        out.extend_from_slice(&[0u8; 8]);
        for p in &self.peer_pads {
            out.extend_from_slice(p);
        }
        out.extend_from_slice(&self.mask_share.to_le_bytes());
        for c in &self.sealed {
            out.extend_from_slice(c);
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<CondEvalKey, CondEvalError> {
        let bad = |m: &str| CondEvalError::Malformed(m.to_string());
        if bytes.len() != Self::ENCODED_BYTES {
            return Err(bad("a CondEval key of the wrong size"));
        }
        if bytes[0] > 1 || bytes[1] > 7 {
            return Err(bad("a CondEval key with a malformed server or flags"));
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let interval = (u64_at(2), u64_at(10));
        if interval.0 > interval.1 {
            return Err(bad("a CondEval key with an empty interval"));
        }
        let mut at = 26;
        let mut peer_pads = [[0u8; PAD_SEED_BYTES]; 2];
        for p in &mut peer_pads {
            p.copy_from_slice(&bytes[at..at + PAD_SEED_BYTES]);
            at += PAD_SEED_BYTES;
        }
        let mask_share = u64_at(at);
        at += 8;
        let sealed = std::array::from_fn(|i| {
            let s = at + i * IcKey::ENCODED_BYTES;
            bytes[s..s + IcKey::ENCODED_BYTES].to_vec()
        });
        Ok(CondEvalKey {
            server: bytes[0],
            gate: Gate {
                interval,
                negate: bytes[1] & 1 == 1,
                conj: if bytes[1] & 2 == 2 {
                    Conj::Or
                } else {
                    Conj::And
                },
            },
            sealed,
            peer_pads,
            peer_permutation: bytes[1] & 4 == 4,
            mask_share,
        })
    }
}

/// The pad of a seed for `len` bytes.
fn pad_of(seed: &[u8; PAD_SEED_BYTES], len: usize) -> Vec<u8> {
    let mut h = blake3::Hasher::new_derive_key("irisc 2026 condeval key pad");
    h.update(seed);
    let mut out = vec![0u8; len];
    h.finalize_xof().fill(&mut out);
    out
}

/// Bytes of a tag `xi` in Z_2^(l0 + l1) (stored in 16 bytes).
const TAG_BYTES: usize = 16;

/// One server's material of one CondEval* instance (Table 4): as [`CondEvalKey`], each sealed
/// key followed by a tag `xi` whose two decrypted values cancel exactly when both servers
/// decrypt the same entry of a trap instance, or any entries of a normal one.
#[derive(Clone, PartialEq, Eq)]
pub struct CondEvalKeyStar {
    server: u8,
    gate: Gate,
    sealed: [Vec<u8>; 2],
    peer_pads: [[u8; PAD_SEED_BYTES]; 2],
    peer_permutation: bool,
}

impl std::fmt::Debug for CondEvalKeyStar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CondEvalKeyStar")
            .field("server", &self.server)
            .finish_non_exhaustive()
    }
}

/// CondEval.Setup* (Table 4) for instance `i`: a normal instance (`trap = false`: the gate
/// `f` with payload 1, tags `xi_1` / `-xi_1` on both entries) or a trap (payload 0, tags
/// `xi_1`, `xi_2` / `-xi_1`, `-xi_2`). `key_mask` is the mask the gate's key is generated for
/// (the low 64 bits of the instance's authenticated mask `r_i`).
pub fn setup_star(
    gate: Gate,
    trap: bool,
    key_mask: u64,
    random: &mut dyn FnMut(&mut [u8]),
) -> [CondEvalKeyStar; 2] {
    let word = |random: &mut dyn FnMut(&mut [u8])| {
        let mut b = [0u8; 16];
        random(&mut b);
        u128::from_le_bytes(b)
    };
    let mask = (1u128 << 112) - 1;
    let shares = [word(random) as u64, word(random) as u64];
    let mut seeds = [[0u8; SEED_BYTES]; 2];
    for s in &mut seeds {
        random(s);
    }
    let mut bits = [0u8; 1];
    random(&mut bits);
    let (t, pi) = (bits[0] & 1 == 1, [bits[0] & 2 == 2, bits[0] & 4 == 4]);
    let mut pads = [[[0u8; PAD_SEED_BYTES]; 2]; 2];
    for p in pads.iter_mut().flatten() {
        random(p);
    }
    let (xi1, xi2) = (word(random) & mask, word(random) & mask);
    let key_mask = if gate.negate {
        key_mask.wrapping_neg()
    } else {
        key_mask
    };
    let (p, q) = gate.interval;
    let beta = u64::from(!trap);
    let keys = ic::gen_weighted(p, q, key_mask, 0, beta, seeds, shares);
    let plain = [
        keys[usize::from(t)].encode(),
        keys[usize::from(!t)].encode(),
    ];
    // Entry j's tag at server b: S_0 holds +xi, S_1 -xi; a trap's second entry has xi_2.
    let tag = |b: usize, j: usize| -> u128 {
        let xi = if trap && j == 1 { xi2 } else { xi1 };
        if b == 0 {
            xi
        } else {
            xi.wrapping_neg() & mask
        }
    };
    let len = IcKey::ENCODED_BYTES + TAG_BYTES;
    let sealed_for = |b: usize| -> [Vec<u8>; 2] {
        let m: [Vec<u8>; 2] = std::array::from_fn(|j| {
            let mut c = plain[j].clone();
            c.extend_from_slice(&tag(b, j).to_le_bytes());
            xor_into(&mut c, &pad_of(&pads[b][j], len));
            c
        });
        std::array::from_fn(|i| m[i ^ usize::from(pi[b])].clone())
    };
    std::array::from_fn(|b| CondEvalKeyStar {
        server: b as u8,
        gate,
        sealed: sealed_for(b),
        peer_pads: pads[1 - b],
        peer_permutation: pi[1 - b],
    })
}

impl CondEvalKeyStar {
    /// KeyDec, sending side, for this server's share of `s_i`.
    pub fn key_request(&self, s_share: bool) -> KeyRequest {
        KeyRequest {
            index: s_share ^ self.peer_permutation,
            pad: self.peer_pads[usize::from(s_share)],
        }
    }

    /// KeyDec then Eval (CondEval.Eval*, lines 13-16): this server's share of `y_i` and the tag
    /// `xi^(b)` it adds to `[sigma]_b`.
    pub fn eval(&self, request: &KeyRequest, opened: u64) -> Result<(bool, u128), CondEvalError> {
        let (key, x, tag) = self.open_key(request, opened)?;
        Ok((key.eval_bits(&[x])[0], tag))
    }

    /// KeyDec of CondEval.Eval*: the unlocked gate key, the point to evaluate it at and the
    /// tag; [`CondEvalKeyStar::eval`] is this and the key's evaluation (which callers may batch
    /// over many instances).
    pub fn open_key(
        &self,
        request: &KeyRequest,
        opened: u64,
    ) -> Result<(IcKey, u64, u128), CondEvalError> {
        let len = IcKey::ENCODED_BYTES + TAG_BYTES;
        let mut bytes = self.sealed[usize::from(request.index)].clone();
        xor_into(&mut bytes, &pad_of(&request.pad, len));
        let (k, tag) = bytes.split_at(IcKey::ENCODED_BYTES);
        let key = IcKey::decode(k).map_err(CondEvalError::WrongPad)?;
        let x = if self.gate.negate {
            opened.wrapping_neg()
        } else {
            opened
        };
        let tag = u128::from_le_bytes(tag.try_into().expect("16"));
        Ok((key, x, tag))
    }
}

impl CondEvalKeyStar {
    /// Bytes of [`CondEvalKeyStar::encode`].
    pub const ENCODED_BYTES: usize =
        1 + 1 + 16 + 2 * PAD_SEED_BYTES + 2 * (IcKey::ENCODED_BYTES + TAG_BYTES);

    /// `server | flags (negate, or, pi_{1-b}) | interval | pads | C_b`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.server);
        out.push(
            u8::from(self.gate.negate)
                | u8::from(self.gate.conj == Conj::Or) << 1
                | u8::from(self.peer_permutation) << 2,
        );
        out.extend_from_slice(&self.gate.interval.0.to_le_bytes());
        out.extend_from_slice(&self.gate.interval.1.to_le_bytes());
        for p in &self.peer_pads {
            out.extend_from_slice(p);
        }
        for c in &self.sealed {
            out.extend_from_slice(c);
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<CondEvalKeyStar, CondEvalError> {
        let bad = |m: &str| CondEvalError::Malformed(m.to_string());
        if bytes.len() != Self::ENCODED_BYTES || bytes[0] > 1 || bytes[1] > 7 {
            return Err(bad("a malformed CondEval* key"));
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let interval = (u64_at(2), u64_at(10));
        let mut at = 18;
        let mut peer_pads = [[0u8; PAD_SEED_BYTES]; 2];
        for p in &mut peer_pads {
            p.copy_from_slice(&bytes[at..at + PAD_SEED_BYTES]);
            at += PAD_SEED_BYTES;
        }
        let len = IcKey::ENCODED_BYTES + TAG_BYTES;
        let sealed = std::array::from_fn(|i| bytes[at + i * len..at + (i + 1) * len].to_vec());
        Ok(CondEvalKeyStar {
            server: bytes[0],
            gate: Gate {
                interval,
                negate: bytes[1] & 1 == 1,
                conj: if bytes[1] & 2 == 2 {
                    Conj::Or
                } else {
                    Conj::And
                },
            },
            sealed,
            peer_pads,
            peer_permutation: bytes[1] & 4 == 4,
        })
    }

    pub fn server(&self) -> usize {
        usize::from(self.server)
    }
}
