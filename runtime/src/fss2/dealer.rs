//! The dealer of the `fss2` family (paper 002, where the bank B plays it): enrollment of the
//! gallery and CS.Setup (Protocol 1), the function-dependent preprocessing of one
//! authentication. It runs offline, in its own process, and writes one file per server.
//!
//! **Enrollment.** Each template `y_j` is dealt in the optimised sharing
//! ([`super::sharing`]): both servers receive `delta_y = y + r_y`, each its share of `r_y`. The
//! dealer keeps only two 16-byte keys ([`DealerSecret`]): `r_y` is their AES-CTR stream, so
//! later authentications can correlate their randomness with it without storing it.
//!
//! **CS.Setup** for one query against `N` templates of dimension `n`, following Protocol 1 with
//! the cosine test of [`super::plan`] (exact integers, no truncation: see `plan`):
//! `r_x` (the query's input mask), `[v_in] = [sum r_x^2]`, `r_1` (the mask of `v = <x,x>`),
//! and per template `[u_in] = [sum r_x r_y]`, `[w_in] = [sum r_y^2]`, `alpha_1` (the mask of
//! `u = <x,y>`) with `[alpha_1^2]`, `r_2` (the mask of `w = <y,y>`) with `[r_1 r_2]`, the IC key
//! pair of `c_1 = sign(u)` for the mask `alpha_1` (Protocol 1, line 9) and the CondEval material
//! of the magnitude test (line 3), whose own mask `r` hides `E`.

use crate::fss::condeval::{self, CondEvalKey};
use crate::fss::ic::{self, IcKey};
use crate::rand::aes_ctr::AesCtr;

use super::plan::CosinePlan;
use super::sharing::ss_share;

/// What the dealer keeps after enrollment: the keys of the template masks.
#[derive(Clone, PartialEq, Eq)]
pub struct DealerSecret {
    pub gallery_id: [u8; 16],
    pub dim: usize,
    pub records: usize,
    mask_key: [u8; 16],
}

impl std::fmt::Debug for DealerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DealerSecret")
            .field("dim", &self.dim)
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

/// One server's share of the enrolled gallery: `delta_y` (the same on both servers) and its
/// share of `r_y`, record-major.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GalleryShare {
    pub server: usize,
    pub gallery_id: [u8; 16],
    pub dim: usize,
    pub records: usize,
    /// The templates' public ids, in record order.
    pub ids: Vec<u64>,
    pub delta: Vec<u64>,
    pub mask: Vec<u64>,
}

/// One server's preprocessing for one authentication (one query against every template).
#[derive(Clone)]
pub struct AuthMaterial {
    pub server: usize,
    pub dim: usize,
    pub records: usize,
    /// The seed of `[r_x]_b` (sent to the client) and its expansion.
    pub rx_seed: [u8; 16],
    pub rx: Vec<u64>,
    /// `[sum r_x^2]_b`.
    pub v_in: u64,
    /// `[r_1]_b`.
    pub r1: u64,
    /// Per template: `[u_in]`, `[w_in]`, `[alpha_1]`, `[alpha_1^2]`, `[r_2]`, `[r_1 r_2]`.
    pub u_in: Vec<u64>,
    pub w_in: Vec<u64>,
    pub alpha1: Vec<u64>,
    pub alpha1_sq: Vec<u64>,
    pub r2: Vec<u64>,
    pub r1r2: Vec<u64>,
    /// Per template: this server's key of the `c_1` gate.
    pub sign_keys: Vec<IcKey>,
    /// Per template: this server's CondEval material.
    pub condeval: Vec<CondEvalKey>,
}

impl std::fmt::Debug for AuthMaterial {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthMaterial")
            .field("server", &self.server)
            .field("dim", &self.dim)
            .field("records", &self.records)
            .finish_non_exhaustive()
    }
}

/// The dealer's randomness: AES-CTR under a fresh key from the operating system.
pub struct DealerRng(AesCtr);

impl DealerRng {
    pub fn from_os() -> DealerRng {
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).expect("the operating system's randomness");
        DealerRng(AesCtr::new(&key))
    }

    /// A fixed stream, for tests.
    pub fn from_key(key: [u8; 16]) -> DealerRng {
        DealerRng(AesCtr::new(&key))
    }

    pub fn fill(&mut self, out: &mut [u8]) {
        self.0.fill(out)
    }

    pub fn word(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.0.fill(&mut b);
        u64::from_le_bytes(b)
    }

    fn words(&mut self, n: usize) -> Vec<u64> {
        let mut bytes = vec![0u8; n * 8];
        self.0.fill(&mut bytes);
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect()
    }

    fn key(&mut self) -> [u8; 16] {
        let mut k = [0u8; 16];
        self.0.fill(&mut k);
        k
    }
}

fn stream_words(key: &[u8; 16], n: usize) -> Vec<u64> {
    let mut bytes = vec![0u8; n * 8];
    AesCtr::new(key).fill(&mut bytes);
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
        .collect()
}

impl DealerSecret {
    /// `r_y` of every template, record-major.
    pub fn template_masks(&self) -> Vec<u64> {
        stream_words(&self.mask_key, self.records * self.dim)
    }

    pub const ENCODED_BYTES: usize = 16 + 8 + 8 + 16;

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::ENCODED_BYTES);
        out.extend_from_slice(&self.gallery_id);
        out.extend_from_slice(&(self.dim as u64).to_le_bytes());
        out.extend_from_slice(&(self.records as u64).to_le_bytes());
        out.extend_from_slice(&self.mask_key);
        out
    }

    pub fn decode(bytes: &[u8]) -> Option<DealerSecret> {
        if bytes.len() != Self::ENCODED_BYTES {
            return None;
        }
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8"));
        Some(DealerSecret {
            gallery_id: bytes[..16].try_into().expect("16"),
            dim: usize::try_from(u64_at(16)).ok()?,
            records: usize::try_from(u64_at(24)).ok()?,
            mask_key: bytes[32..48].try_into().expect("16"),
        })
    }
}

/// Enrollment: the templates (record-major, `dim` components each, fixed point) dealt to the two
/// servers, and what the dealer keeps.
pub fn enroll(
    ids: &[u64],
    templates: &[i64],
    dim: usize,
    rng: &mut DealerRng,
) -> (DealerSecret, [GalleryShare; 2]) {
    assert!(dim > 0 && templates.len().is_multiple_of(dim));
    let records = templates.len() / dim;
    assert_eq!(ids.len(), records, "one id per template");
    let secret = DealerSecret {
        gallery_id: rng.key(),
        dim,
        records,
        mask_key: rng.key(),
    };
    let ry = secret.template_masks();
    let share0 = rng.words(ry.len());
    let delta: Vec<u64> = templates
        .iter()
        .zip(&ry)
        .map(|(&y, &r)| (y as u64).wrapping_add(r))
        .collect();
    let share1: Vec<u64> = ry
        .iter()
        .zip(&share0)
        .map(|(r, s)| r.wrapping_sub(*s))
        .collect();
    let shares = [share0, share1];
    let gallery = std::array::from_fn(|b| GalleryShare {
        server: b,
        gallery_id: secret.gallery_id,
        dim,
        records,
        ids: ids.to_vec(),
        delta: delta.clone(),
        mask: shares[b].clone(),
    });
    (secret, gallery)
}

/// Splits `values` into the two servers' additive shares.
fn share_all(values: &[u64], rng: &mut DealerRng) -> [Vec<u64>; 2] {
    let random = rng.words(values.len());
    let pairs: Vec<[u64; 2]> = values
        .iter()
        .zip(&random)
        .map(|(&v, &r)| ss_share(v, r))
        .collect();
    std::array::from_fn(|b| pairs.iter().map(|p| p[b]).collect())
}

/// CS.Setup (Protocol 1) for one authentication against every enrolled template.
pub fn cs_setup(
    plan: &CosinePlan,
    secret: &DealerSecret,
    template_masks: &[u64],
    rng: &mut DealerRng,
) -> [AuthMaterial; 2] {
    let (n, records) = (secret.dim, secret.records);
    assert_eq!(plan.dim, n, "the plan's dimension is the gallery's");
    assert_eq!(template_masks.len(), n * records);
    // Each server's share of the input mask is the expansion of a seed of its own: r_x is
    // their sum, and a server sends the client 16 bytes instead of n words.
    let mut rx_seeds = [[0u8; 16]; 2];
    for s in &mut rx_seeds {
        rng.fill(s);
    }
    let rx_shares = rx_seeds.map(|s| super::sharing::mask_words(&s, n));
    let rx: Vec<u64> = rx_shares[0]
        .iter()
        .zip(&rx_shares[1])
        .map(|(a, b)| a.wrapping_add(*b))
        .collect();
    let dot = |a: &[u64], b: &[u64]| {
        a.iter()
            .zip(b)
            .fold(0u64, |acc, (x, y)| acc.wrapping_add(x.wrapping_mul(*y)))
    };
    let v_in = dot(&rx, &rx);
    let r1 = rng.word();
    let mut u_in = Vec::with_capacity(records);
    let mut w_in = Vec::with_capacity(records);
    for ry in template_masks.chunks_exact(n) {
        u_in.push(dot(&rx, ry));
        w_in.push(dot(ry, ry));
    }
    let alpha1 = rng.words(records);
    let alpha1_sq: Vec<u64> = alpha1.iter().map(|a| a.wrapping_mul(*a)).collect();
    let r2 = rng.words(records);
    let r1r2: Vec<u64> = r2.iter().map(|r| r1.wrapping_mul(*r)).collect();
    let sign = plan.sign_test();
    let gate = plan.magnitude_gate();
    let mut sign_keys: [Vec<IcKey>; 2] = [Vec::with_capacity(records), Vec::with_capacity(records)];
    let mut condeval_keys: [Vec<CondEvalKey>; 2] =
        [Vec::with_capacity(records), Vec::with_capacity(records)];
    let mut fill = |out: &mut [u8]| rng.fill(out);
    for &a in &alpha1 {
        let mut seeds = [[0u8; 16]; 2];
        for s in &mut seeds {
            fill(s);
        }
        let mut z = [0u8; 16];
        fill(&mut z);
        let shares = [
            u64::from_le_bytes(z[..8].try_into().expect("8")),
            u64::from_le_bytes(z[8..].try_into().expect("8")),
        ];
        let mask = if sign.negate { a.wrapping_neg() } else { a };
        let [k0, k1] = ic::gen(sign.interval.0, sign.interval.1, mask, 0, seeds, shares);
        sign_keys[0].push(k0);
        sign_keys[1].push(k1);
        let [c0, c1] = condeval::setup(gate, &mut fill);
        condeval_keys[0].push(c0);
        condeval_keys[1].push(c1);
    }
    let scalars = share_all(&[v_in, r1], rng);
    let mut per = [&u_in, &w_in, &alpha1, &alpha1_sq, &r2, &r1r2].map(|v| share_all(v, rng));
    let [sk0, sk1] = sign_keys;
    let mut sign_keys = [Some(sk0), Some(sk1)];
    let [ck0, ck1] = condeval_keys;
    let mut condeval_keys = [Some(ck0), Some(ck1)];
    std::array::from_fn(|b| {
        let mut take = |i: usize| std::mem::take(&mut per[i][b]);
        AuthMaterial {
            server: b,
            dim: n,
            records,
            rx_seed: rx_seeds[b],
            rx: rx_shares[b].clone(),
            v_in: scalars[b][0],
            r1: scalars[b][1],
            u_in: take(0),
            w_in: take(1),
            alpha1: take(2),
            alpha1_sq: take(3),
            r2: take(4),
            r1r2: take(5),
            sign_keys: sign_keys[b].take().expect("once"),
            condeval: condeval_keys[b].take().expect("once"),
        }
    })
}

impl AuthMaterial {
    /// Bytes of one authentication's material for `dim` and `records`.
    pub fn encoded_bytes(dim: usize, records: usize) -> usize {
        let _ = dim;
        16 + 8 * 2 + records * (8 * 6 + IcKey::ENCODED_BYTES + CondEvalKey::ENCODED_BYTES)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::encoded_bytes(self.dim, self.records));
        let words = |out: &mut Vec<u8>, v: &[u64]| {
            for w in v {
                out.extend_from_slice(&w.to_le_bytes());
            }
        };
        out.extend_from_slice(&self.rx_seed);
        words(&mut out, &[self.v_in, self.r1]);
        for v in [
            &self.u_in,
            &self.w_in,
            &self.alpha1,
            &self.alpha1_sq,
            &self.r2,
            &self.r1r2,
        ] {
            words(&mut out, v);
        }
        for k in &self.sign_keys {
            out.extend_from_slice(&k.encode());
        }
        for k in &self.condeval {
            k.encode(&mut out);
        }
        out
    }

    /// The material of [`AuthMaterial::encode`]'s bytes for server `server`.
    pub fn decode(
        bytes: &[u8],
        server: usize,
        dim: usize,
        records: usize,
    ) -> Result<AuthMaterial, String> {
        if bytes.len() != Self::encoded_bytes(dim, records) {
            return Err(format!(
                "one authentication's material is {} bytes, not {}",
                Self::encoded_bytes(dim, records),
                bytes.len()
            ));
        }
        let rx_seed: [u8; 16] = bytes[..16].try_into().expect("16");
        let rx = super::sharing::mask_words(&rx_seed, dim);
        let mut at = 16usize;
        let mut words = |n: usize| -> Vec<u64> {
            let v = bytes[at..at + 8 * n]
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
                .collect();
            at += 8 * n;
            v
        };
        let s = words(2);
        let mut per: Vec<Vec<u64>> = (0..6).map(|_| words(records)).collect();
        let mut sign_keys = Vec::with_capacity(records);
        for _ in 0..records {
            let k = IcKey::decode(&bytes[at..at + IcKey::ENCODED_BYTES])?;
            if k.server() != server {
                return Err(format!(
                    "a key of server {} in server {server}'s material",
                    k.server()
                ));
            }
            sign_keys.push(k);
            at += IcKey::ENCODED_BYTES;
        }
        let mut condeval = Vec::with_capacity(records);
        for _ in 0..records {
            let k = CondEvalKey::decode(&bytes[at..at + CondEvalKey::ENCODED_BYTES])
                .map_err(|e| e.to_string())?;
            if k.server() != server {
                return Err(format!(
                    "a CondEval key of server {} in server {server}'s material",
                    k.server()
                ));
            }
            condeval.push(k);
            at += CondEvalKey::ENCODED_BYTES;
        }
        let mut take = |i: usize| std::mem::take(&mut per[i]);
        Ok(AuthMaterial {
            server,
            dim,
            records,
            rx_seed,
            rx,
            v_in: s[0],
            r1: s[1],
            u_in: take(0),
            w_in: take(1),
            alpha1: take(2),
            alpha1_sq: take(3),
            r2: take(4),
            r1r2: take(5),
            sign_keys,
            condeval,
        })
    }
}
