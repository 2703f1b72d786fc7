//! The interval-containment gate (paper 002, Definition 1; built as in its reference [10],
//! Boyle et al. 2021, Sect. 4.1, over the DCF of [`super::dcf`]), on Z_2^64.
//!
//! The dealer knows the input mask `r_in` and the output mask `r_out`; the servers see only the
//! masked input `x + r_in` (opened in the online phase) and each evaluates its key on it alone:
//! the two results add up to `1{p <= x <= q} + r_out` (mod 2^64). One DCF key per server for the
//! threshold `gamma = N - 1 + r_in`, evaluated at two points, plus a share of a correction
//! term `z` that the dealer computes from the masks.

use super::dcf::{self, DcfKey, SEED_BYTES};

/// One server's key of an interval-containment gate.
#[derive(Clone)]
pub struct IcKey {
    pub p: u64,
    pub q: u64,
    dcf: DcfKey,
    /// This server's additive share of the correction term.
    z: u64,
    /// This server's additive share of the payload `beta`, the weight of the public term: a
    /// key of the all-zero function (`beta = 0`, a trap of the malicious variant) is evaluated
    /// exactly like a key of `1{p <= x <= q}`, and looks the same.
    weight: u64,
}

impl std::fmt::Debug for IcKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Shares and seeds are never printed.
        f.debug_struct("IcKey")
            .field("p", &self.p)
            .field("q", &self.q)
            .field("server", &self.dcf.party())
            .finish_non_exhaustive()
    }
}

fn lt(a: u64, b: u64) -> u64 {
    u64::from(a < b)
}

/// `Gen^{[p, q]}(r_in, r_out)`: the two servers' keys (`p <= q`) of `1{p <= x <= q} + r_out`.
/// `seeds` are the DCF's root seeds and `shares` the dealer's random shares of the correction
/// term and of the payload.
pub fn gen(
    p: u64,
    q: u64,
    r_in: u64,
    r_out: u64,
    seeds: [[u8; SEED_BYTES]; 2],
    shares: [u64; 2],
) -> [IcKey; 2] {
    gen_weighted(p, q, r_in, r_out, 1, seeds, shares)
}

/// [`gen`] with payload `beta`: the keys of `beta * 1{p <= x <= q} + r_out` (paper 002,
/// Definition 1 with `beta_1 = beta`, `beta_2 = 0`). `shares` are the dealer's random shares of
/// the correction term and of `beta`.
pub fn gen_weighted(
    p: u64,
    q: u64,
    r_in: u64,
    r_out: u64,
    beta: u64,
    seeds: [[u8; SEED_BYTES]; 2],
    shares: [u64; 2],
) -> [IcKey; 2] {
    let [z_share, weight_share] = shares;
    assert!(p <= q, "an interval [p, q] with p > q");
    // gamma = N - 1 + r_in: the DCF answers 1 below it.
    let gamma = r_in.wrapping_sub(1);
    let [k0, k1] = dcf::gen(gamma, beta, seeds);
    let q1 = q.wrapping_add(1);
    let alpha_p = p.wrapping_add(r_in);
    let alpha_q = q.wrapping_add(r_in);
    let alpha_q1 = q1.wrapping_add(r_in);
    // The wrap-arounds that the servers' local comparisons cannot see, corrected by the dealer.
    let wraps = lt(alpha_q, alpha_p)
        .wrapping_sub(lt(p, alpha_p))
        .wrapping_add(lt(q1, alpha_q1))
        .wrapping_add(u64::from(alpha_q == u64::MAX));
    let z = r_out.wrapping_add(beta.wrapping_mul(wraps));
    [
        IcKey {
            p,
            q,
            dcf: k0,
            z: z_share,
            weight: weight_share,
        },
        IcKey {
            p,
            q,
            dcf: k1,
            z: z.wrapping_sub(z_share),
            weight: beta.wrapping_sub(weight_share),
        },
    ]
}

impl IcKey {
    /// `Eval^{[p, q]}(b, k_b, x_masked)` for every masked input: this server's share of
    /// `1{p <= x <= q} + r_out`.
    pub fn eval(&self, masked: &[u64]) -> Vec<u64> {
        let pairs: Vec<(&IcKey, u64)> = masked.iter().map(|&x| (self, x)).collect();
        eval_many(&pairs)
    }
}

/// [`IcKey::eval`] of every `(key, masked x)` pair, the two DCF points of every pair in one
/// batch ([`crate::fss::dcf::eval_many`]).
pub fn eval_many(pairs: &[(&IcKey, u64)]) -> Vec<u64> {
    // x^(p) = x + (N - 1 - p), x^(q') = x + (N - 1 - q').
    let points: Vec<(&DcfKey, u64)> = pairs
        .iter()
        .flat_map(|&(k, x)| {
            let q1 = k.q.wrapping_add(1);
            [
                (&k.dcf, x.wrapping_add(u64::MAX - k.p)),
                (&k.dcf, x.wrapping_add(u64::MAX.wrapping_sub(q1))),
            ]
        })
        .collect();
    let s = crate::fss::dcf::eval_many(&points);
    pairs
        .iter()
        .zip(s.chunks_exact(2))
        .map(|(&(k, x), sp)| {
            let q1 = k.q.wrapping_add(1);
            let public = lt(k.p, x).wrapping_sub(lt(q1, x));
            k.weight
                .wrapping_mul(public)
                .wrapping_sub(sp[0])
                .wrapping_add(sp[1])
                .wrapping_add(k.z)
        })
        .collect()
}

/// [`eval_many`] as XOR shares of bits (keys generated with `r_out = 0`; see
/// [`IcKey::eval_bits`]).
pub fn eval_bits_many(pairs: &[(&IcKey, u64)]) -> Vec<bool> {
    eval_many(pairs).into_iter().map(|y| y & 1 == 1).collect()
}

impl IcKey {
    /// Bytes of [`IcKey::encode`].
    pub const ENCODED_BYTES: usize = 8 + 8 + 8 + 8 + DcfKey::ENCODED_BYTES;

    /// `p | q | z | weight (u64 each) | DCF key`; the server index travels in the DCF key
    /// (CondEval's `k || id`).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::ENCODED_BYTES);
        out.extend_from_slice(&self.p.to_le_bytes());
        out.extend_from_slice(&self.q.to_le_bytes());
        out.extend_from_slice(&self.z.to_le_bytes());
        out.extend_from_slice(&self.weight.to_le_bytes());
        out.extend_from_slice(&self.dcf.encode());
        out
    }

    /// The key of [`IcKey::encode`]'s bytes.
    pub fn decode(bytes: &[u8]) -> Result<IcKey, String> {
        if bytes.len() != Self::ENCODED_BYTES {
            return Err(format!(
                "an interval-containment key is {} bytes, not {}",
                Self::ENCODED_BYTES,
                bytes.len()
            ));
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        let (p, q) = (u64_at(0), u64_at(8));
        if p > q {
            return Err(format!("an interval-containment key for [{p}, {q}]"));
        }
        Ok(IcKey {
            p,
            q,
            z: u64_at(16),
            weight: u64_at(24),
            dcf: DcfKey::decode(&bytes[32..])?,
        })
    }

    /// The server index this key evaluates as (0 or 1).
    pub fn server(&self) -> usize {
        self.dcf.party()
    }

    /// This server's XOR share of `1{p <= x <= q}` (a key generated with `r_out = 0`): the low
    /// bit of the additive share, since additive shares of a bit mod 2^64 agree mod 2 with XOR.
    pub fn eval_bits(&self, masked: &[u64]) -> Vec<bool> {
        self.eval(masked).into_iter().map(|y| y & 1 == 1).collect()
    }
}

/// The interval of values whose sign test is `true`, read as two's complement in Z_2^64.
pub const NON_NEGATIVE: (u64, u64) = (0, (1 << 63) - 1);
/// The complement of [`NON_NEGATIVE`].
pub const NEGATIVE: (u64, u64) = (1 << 63, u64::MAX);
