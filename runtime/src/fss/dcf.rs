//! The distributed comparison function of Boyle et al. ([10] of paper 002: "Function Secret
//! Sharing for Mixed-Mode and Fixed-Point Secure Computation", Fig. 1 there, the `<` bound):
//! `f_{alpha,beta}^<(x) = beta if x < alpha else 0` for inputs in Z_2^64 (compared as unsigned
//! integers, bit by bit from the most significant) and outputs in Z_2^64, shared additively
//! between the two servers.
//!
//! The PRG `G: {0,1}^128 -> (s_L, v_L, t_L, s_R, v_R, t_R)` is AES-128 under fixed public keys
//! in Matyas-Meyer-Oseas mode (`AES_k(s) xor s`, one key per output block), as fixed-key AES is
//! used in [10]'s implementation; seeds are 127 bits (the low bit of a block is its control bit
//! `t`). `Convert` to Z_2^64 takes the low 64 bits. `fss-rs` 0.6 was evaluated first: its DCF
//! reconstructs only over the XOR group (the one its tests cover), not over Z_2^64.

use aes::cipher::{BlockEncrypt, KeyInit};
use aes::Aes128;

/// Bytes of a seed (lambda = 128, of which 127 bits are the seed).
pub const SEED_BYTES: usize = 16;
const LEVELS: usize = 64;

/// The PRG's three fixed-key ciphers: `s_L`, `s_R`, and the two `v`.
struct Prg([Aes128; 3]);

impl Prg {
    /// The one PRG of the process: its keys are fixed, so their schedules are expanded once.
    fn shared() -> &'static Prg {
        static PRG: std::sync::OnceLock<Prg> = std::sync::OnceLock::new();
        PRG.get_or_init(Prg::new)
    }

    fn new() -> Prg {
        Prg(std::array::from_fn(|i| {
            let mut h = blake3::Hasher::new();
            h.update(b"irisc dcf prg key");
            h.update(&[i as u8]);
            let key: [u8; 16] = h.finalize().as_bytes()[..16].try_into().expect("16");
            Aes128::new(&key.into())
        }))
    }

    /// `G(s)`: `(s_L, t_L, s_R, t_R, v_L, v_R)`.
    fn expand(&self, s: u128) -> (u128, bool, u128, bool, u64, u64) {
        let mmo = |c: &Aes128| {
            let mut b = s.to_le_bytes().into();
            c.encrypt_block(&mut b);
            u128::from_le_bytes(b.into()) ^ s
        };
        let (l, r, v) = (mmo(&self.0[0]), mmo(&self.0[1]), mmo(&self.0[2]));
        (
            l & !1,
            l & 1 == 1,
            r & !1,
            r & 1 == 1,
            v as u64,
            (v >> 64) as u64,
        )
    }
}

/// One level's correction word.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Cw {
    s: u128,
    v: u64,
    tl: bool,
    tr: bool,
}

/// One server's DCF key.
#[derive(Clone)]
pub struct DcfKey {
    party: bool,
    seed: u128,
    cws: Vec<Cw>,
    last: u64,
}

// Keys are secrets: only the shape is printed.
impl std::fmt::Debug for DcfKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DcfKey(server {}, {} levels)",
            u8::from(self.party),
            self.cws.len()
        )
    }
}

fn sign(t: bool, v: u64) -> u64 {
    if t {
        v.wrapping_neg()
    } else {
        v
    }
}

/// `Eval^<` of every `(key, x)` pair (keys of either server, any mix): each pair's additive
/// share. The pairs walk their 64 levels together, so that each level's fixed-key encryptions
/// of all pairs go through AES as one batch per cipher (pipelined by the hardware), where one
/// point at a time would wait for each encryption: what the servers' gate evaluations of a
/// query (two points per IC gate, `m` instances per template) spend their time on.
pub fn eval_many(pairs: &[(&DcfKey, u64)]) -> Vec<u64> {
    use aes::cipher::BlockEncrypt;
    let prg = Prg::shared();
    let n = pairs.len();
    let mut s: Vec<u128> = pairs.iter().map(|(k, _)| k.seed).collect();
    let mut t: Vec<bool> = pairs.iter().map(|(k, _)| k.party).collect();
    let mut v = vec![0u64; n];
    let block = |x: u128| -> aes::Block { x.to_le_bytes().into() };
    let mut sides: [Vec<aes::Block>; 2] = [Vec::with_capacity(n), Vec::with_capacity(n)];
    let mut which: Vec<(bool, usize)> = Vec::with_capacity(n);
    let mut vs: Vec<aes::Block> = Vec::with_capacity(n);
    for i in 0..LEVELS {
        sides[0].clear();
        sides[1].clear();
        which.clear();
        vs.clear();
        for (k, &(_, x)) in pairs.iter().enumerate() {
            let right = x >> (LEVELS - 1 - i) & 1 == 1;
            which.push((right, sides[usize::from(right)].len()));
            sides[usize::from(right)].push(block(s[k]));
            vs.push(block(s[k]));
        }
        prg.0[0].encrypt_blocks(&mut sides[0]);
        prg.0[1].encrypt_blocks(&mut sides[1]);
        prg.0[2].encrypt_blocks(&mut vs);
        for (k, &(key, _)) in pairs.iter().enumerate() {
            let cw = &key.cws[i];
            let (right, at) = which[k];
            // MMO: E_k(s) xor s.
            let side = u128::from_le_bytes(sides[usize::from(right)][at].into()) ^ s[k];
            let vv = u128::from_le_bytes(vs[k].into()) ^ s[k];
            let (mut ns, mut nt) = (side & !1, side & 1 == 1);
            if t[k] {
                ns ^= cw.s;
                nt ^= if right { cw.tr } else { cw.tl };
            }
            let vside = if right { (vv >> 64) as u64 } else { vv as u64 };
            let add = vside.wrapping_add(if t[k] { cw.v } else { 0 });
            v[k] = v[k].wrapping_add(sign(key.party, add));
            s[k] = ns;
            t[k] = nt;
        }
    }
    pairs
        .iter()
        .enumerate()
        .map(|(k, (key, _))| {
            let add = (s[k] as u64).wrapping_add(if t[k] { key.last } else { 0 });
            v[k].wrapping_add(sign(key.party, add))
        })
        .collect()
}

/// `Gen^<(alpha, beta)` ([10], Fig. 1): the two servers' keys from the two random root seeds.
pub fn gen(alpha: u64, beta: u64, seeds: [[u8; SEED_BYTES]; 2]) -> [DcfKey; 2] {
    let prg = Prg::shared();
    let root = seeds.map(|s| u128::from_le_bytes(s) & !1);
    let (mut s, mut t) = (root, [false, true]);
    let mut v_alpha = 0u64;
    let mut cws = Vec::with_capacity(LEVELS);
    for i in 0..LEVELS {
        let a = alpha >> (LEVELS - 1 - i) & 1 == 1;
        let g = [prg.expand(s[0]), prg.expand(s[1])];
        // (s, t, v) of each side for each server.
        let side = |b: usize, right: bool| {
            let (sl, tl, sr, tr, vl, vr) = g[b];
            if right {
                (sr, tr, vr)
            } else {
                (sl, tl, vl)
            }
        };
        let (keep, lose) = (a, !a);
        let s_cw = side(0, lose).0 ^ side(1, lose).0;
        let mut v_cw = sign(
            t[1],
            side(1, lose)
                .2
                .wrapping_sub(side(0, lose).2)
                .wrapping_sub(v_alpha),
        );
        if !lose {
            // Losing the left side: every x with this prefix and bit 0 is below alpha.
            v_cw = v_cw.wrapping_add(sign(t[1], beta));
        }
        v_alpha = v_alpha
            .wrapping_sub(side(1, keep).2)
            .wrapping_add(side(0, keep).2)
            .wrapping_add(sign(t[1], v_cw));
        let tl_cw = g[0].1 ^ g[1].1 ^ a ^ true;
        let tr_cw = g[0].3 ^ g[1].3 ^ a;
        let t_keep_cw = if keep { tr_cw } else { tl_cw };
        for b in 0..2 {
            let (sk, tk, _) = side(b, keep);
            let tb = t[b];
            s[b] = sk ^ if tb { s_cw } else { 0 };
            t[b] = tk ^ (tb & t_keep_cw);
        }
        cws.push(Cw {
            s: s_cw,
            v: v_cw,
            tl: tl_cw,
            tr: tr_cw,
        });
    }
    let last = sign(
        t[1],
        (s[1] as u64)
            .wrapping_sub(s[0] as u64)
            .wrapping_sub(v_alpha),
    );
    std::array::from_fn(|b| DcfKey {
        party: b == 1,
        seed: root[b],
        cws: cws.clone(),
        last,
    })
}

impl DcfKey {
    /// `Eval^<(b, k_b, x)` at every point of `xs`: this server's additive shares.
    pub fn eval(&self, xs: &[u64]) -> Vec<u64> {
        let pairs: Vec<(&DcfKey, u64)> = xs.iter().map(|&x| (self, x)).collect();
        eval_many(&pairs)
    }

    /// The server this key is for (0 or 1).
    pub fn party(&self) -> usize {
        usize::from(self.party)
    }

    /// Bytes of [`DcfKey::encode`].
    pub const ENCODED_BYTES: usize = 1 + SEED_BYTES + LEVELS * (SEED_BYTES + 8 + 1) + 8;

    /// `server u8 | seed | per level: s, v (u64), t_l | t_r << 1 | cw_{n+1} (u64)`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::ENCODED_BYTES);
        out.push(u8::from(self.party));
        out.extend_from_slice(&self.seed.to_le_bytes());
        for cw in &self.cws {
            out.extend_from_slice(&cw.s.to_le_bytes());
            out.extend_from_slice(&cw.v.to_le_bytes());
            out.push(u8::from(cw.tl) | u8::from(cw.tr) << 1);
        }
        out.extend_from_slice(&self.last.to_le_bytes());
        out
    }

    /// The key of [`DcfKey::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<DcfKey, String> {
        if bytes.len() != Self::ENCODED_BYTES {
            return Err(format!(
                "a DCF key is {} bytes, not {}",
                Self::ENCODED_BYTES,
                bytes.len()
            ));
        }
        let party = match bytes[0] {
            0 => false,
            1 => true,
            p => return Err(format!("a DCF key for server {p}")),
        };
        let u128_at = |at: usize| u128::from_le_bytes(bytes[at..at + 16].try_into().expect("16"));
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let mut at = 1 + SEED_BYTES;
        let mut cws = Vec::with_capacity(LEVELS);
        for _ in 0..LEVELS {
            let t = bytes[at + 24];
            if t > 3 {
                return Err("a DCF key with a malformed control bit".into());
            }
            cws.push(Cw {
                s: u128_at(at),
                v: u64_at(at + 16),
                tl: t & 1 == 1,
                tr: t & 2 == 2,
            });
            at += 25;
        }
        Ok(DcfKey {
            party,
            seed: u128_at(1),
            cws,
            last: u64_at(at),
        })
    }
}
