//! CSB.Eval*: the malicious variant of the cosine protocol (paper 002, Section 4.3, Table 4,
//! Appendix B's Protocols 3 and 4), secure against one actively corrupted server: a deviation
//! is detected by the client, who then withholds the output.
//!
//! - Every arithmetic value is authenticated ([`super::auth`]: Z_2^112, `Delta` in Z_2^48); the
//!   inputs are `<<x>> = (delta_x, [[r_x]])`, the gallery `<<y>>` likewise.
//! - The sign gate `c_1` and CondEval run as `m` instances (Definition 2): where the dealer's
//!   secret `psi[i] = 1` the instance is a trap (an IC key of the all-zero function, a CondEval*
//!   trap with tags that only cancel if both servers decrypt the same entry); elsewhere normal.
//!   Each instance opens `E + r_i` with its own authenticated mask.
//! - **The check at the client** (our form of F_MacVryGen, Fig. 2): for every opened value `x`
//!   each server's `t_b = [Delta]_b x - [Delta x]_b` is a share of zero when the opening is
//!   honest, and so is the sum of the CondEval* tags. Server 0 sends a digest of its list of
//!   `t` (and tag sum), server 1 of the negated list; the client compares the digests. Unlike
//!   Fig. 2's random linear combination this needs no coin toss between the servers (so no
//!   round): a server that changes an opened value by `e` must change its list by
//!   `[Delta]_h e`, a share it does not know. The digests are of uniform shares of zero, so the
//!   client learns nothing from them.
//! - The client, who holds `psi` from the dealer, then runs CondEval.Verify per template.

use crate::fss::condeval::{self, CondEvalKeyStar, KeyRequest};
use crate::fss::ic::{self, eval_bits_many, IcKey};
use crate::net::{NetError, Transport};

use super::auth::{self, reduce, AuthShare, Verdict};
use super::dealer::DealerRng;
use super::eval::{EvalError, Roles};
use super::plan::CosinePlan;

const WORD: usize = 16;

/// How a corrupted server deviates (for the tests of detection; `None` in a real run).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deviation {
    None,
    /// Flips its share of the output of instance `instance` of template `template`.
    FlipOutput {
        template: usize,
        instance: usize,
    },
    /// Adds 1 to its share of the first round's opening of `u` for `template`.
    AlterDelta {
        template: usize,
    },
    /// Sends the key-decryption message for the other share of `s` in `instance`. Caught
    /// when the instance is a trap or its flipped output differs from the other normal ones;
    /// where `f(x) = 0` a normal instance's output does not change, and nothing is to catch.
    WrongKey {
        template: usize,
        instance: usize,
    },
    /// Sends the other key-decryption message in every instance of `template`: the attempt
    /// to flip the template's decision (paper 002, Appendix B, event B), caught unless every
    /// instance is normal (probability `2^-m`).
    WrongKeys {
        template: usize,
    },
    /// Changes one entry of its MAC list.
    CorruptMac,
}

/// The dealer's authenticated gallery: what it keeps and each server's share.
#[derive(Clone)]
pub struct GalleryStar {
    pub server: usize,
    pub gallery_id: [u8; 16],
    pub dim: usize,
    pub records: usize,
    pub ids: Vec<u64>,
    pub key_share: u128,
    pub delta: Vec<u128>,
    pub mask: Vec<AuthShare>,
}

/// What the dealer keeps: the MAC key and the template masks.
pub struct SecretStar {
    pub gallery_id: [u8; 16],
    pub mac_key: u128,
    pub dim: usize,
    pub records: usize,
    mask_key: [u8; 16],
}

impl SecretStar {
    /// `r_y` of every template (record-major), the AES-CTR stream of the mask key.
    pub fn template_masks(&self) -> Vec<u128> {
        let mut bytes = vec![0u8; self.records * self.dim * WORD];
        crate::rand::aes_ctr::AesCtr::new(&self.mask_key).fill(&mut bytes);
        bytes
            .chunks_exact(WORD)
            .map(|c| reduce(u128::from_le_bytes(c.try_into().expect("16"))))
            .collect()
    }

    fn encode(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(&self.gallery_id);
        o.extend_from_slice(&self.mac_key.to_le_bytes());
        o.extend_from_slice(&(self.dim as u64).to_le_bytes());
        o.extend_from_slice(&(self.records as u64).to_le_bytes());
        o.extend_from_slice(&self.mask_key);
        o
    }

    fn decode(b: &[u8]) -> Option<SecretStar> {
        if b.len() != 16 + 16 + 8 + 8 + 16 {
            return None;
        }
        Some(SecretStar {
            gallery_id: b[..16].try_into().ok()?,
            mac_key: u128::from_le_bytes(b[16..32].try_into().ok()?),
            dim: usize::try_from(u64::from_le_bytes(b[32..40].try_into().ok()?)).ok()?,
            records: usize::try_from(u64::from_le_bytes(b[40..48].try_into().ok()?)).ok()?,
            mask_key: b[48..64].try_into().ok()?,
        })
    }
}

fn word(rng: &mut DealerRng) -> u128 {
    let mut b = [0u8; 16];
    rng.fill(&mut b);
    u128::from_le_bytes(b)
}

fn share_auth(x: u128, key: u128, rng: &mut DealerRng) -> [AuthShare; 2] {
    auth::share(x, key, [word(rng), word(rng)])
}

/// Enrollment with MACs: `<<y>>` for every template.
pub fn enroll_star(
    ids: &[u64],
    templates: &[i64],
    dim: usize,
    rng: &mut DealerRng,
) -> (SecretStar, [GalleryStar; 2]) {
    let records = templates.len() / dim;
    assert_eq!(ids.len(), records, "one id per template");
    let mac_key = word(rng) & ((1u128 << auth::L1) - 1);
    let key_shares = {
        let k0 = reduce(word(rng));
        [k0, reduce(mac_key.wrapping_sub(k0))]
    };
    let mut gallery_id = [0u8; 16];
    rng.fill(&mut gallery_id);
    let mut mask_key = [0u8; 16];
    rng.fill(&mut mask_key);
    let secret = SecretStar {
        gallery_id,
        mac_key,
        dim,
        records,
        mask_key,
    };
    let masks = secret.template_masks();
    let mut shares: [Vec<AuthShare>; 2] = [Vec::new(), Vec::new()];
    let mut delta = Vec::with_capacity(templates.len());
    for (&y, &r) in templates.iter().zip(&masks) {
        delta.push(reduce((y as i128 as u128).wrapping_add(r)));
        let [a, b] = share_auth(r, mac_key, rng);
        shares[0].push(a);
        shares[1].push(b);
    }
    let [s0, s1] = shares;
    let gallery = [s0, s1]
        .into_iter()
        .enumerate()
        .map(|(b, mask)| GalleryStar {
            server: b,
            gallery_id,
            dim,
            records,
            ids: ids.to_vec(),
            key_share: key_shares[b],
            delta: delta.clone(),
            mask,
        })
        .collect::<Vec<_>>();
    let [g0, g1]: [GalleryStar; 2] = gallery.try_into().ok().expect("two");
    (secret, [g0, g1])
}

/// One server's material of one authentication.
#[derive(Clone)]
pub struct MaterialStar {
    pub server: usize,
    pub m: usize,
    /// The seed of this server's value share of `r_x` (sent to the client), and `[[r_x]]_b`.
    pub rx_seed: [u8; 16],
    pub rx: Vec<AuthShare>,
    pub v_in: AuthShare,
    pub r1: AuthShare,
    /// Per template.
    pub u_in: Vec<AuthShare>,
    pub w_in: Vec<AuthShare>,
    pub alpha1: Vec<AuthShare>,
    pub alpha1_sq: Vec<AuthShare>,
    pub r2: Vec<AuthShare>,
    pub r1r2: Vec<AuthShare>,
    /// Per template, `m` each.
    pub sign_keys: Vec<IcKey>,
    pub cond_keys: Vec<CondEvalKeyStar>,
    pub cond_masks: Vec<AuthShare>,
}

/// CSB.Setup* (Protocol 3, with CondEval.Setup* of Table 4) for one authentication: each
/// server's material and the client's `psi`.
pub fn cs_setup_star(
    plan: &CosinePlan,
    secret: &SecretStar,
    m: usize,
    rng: &mut DealerRng,
) -> ([MaterialStar; 2], Vec<bool>) {
    let (n, records, key) = (secret.dim, secret.records, secret.mac_key);
    let mut psi: Vec<bool> = (0..m).map(|_| word(rng) & 1 == 1).collect();
    // psi = 1^m would leave no normal instance (z = -1): draw again, as a dealer would.
    while psi.iter().all(|&t| t) {
        psi = (0..m).map(|_| word(rng) & 1 == 1).collect();
    }
    let dot = |a: &[u128], b: &[u128]| {
        reduce(
            a.iter()
                .zip(b)
                .fold(0u128, |acc, (x, y)| acc.wrapping_add(x.wrapping_mul(*y))),
        )
    };
    let template_masks = secret.template_masks();
    // Each server's value share of r_x is the expansion of a seed of its own (the client gets the
    // seeds, 16 bytes each); the MAC shares of r_x are dealt as usual.
    let mut rx_seeds = [[0u8; 16]; 2];
    for s in &mut rx_seeds {
        rng.fill(s);
    }
    let rx_values = rx_seeds.map(|s| super::sharing::mask_words_wide(&s, n));
    let rx: Vec<u128> = rx_values[0]
        .iter()
        .zip(&rx_values[1])
        .map(|(a, b)| reduce(a.wrapping_add(*b)))
        .collect();
    let r1 = reduce(word(rng));
    let mut mats: [MaterialStar; 2] = std::array::from_fn(|b| MaterialStar {
        server: b,
        m,
        rx_seed: [0; 16],
        rx: Vec::new(),
        v_in: AuthShare::default(),
        r1: AuthShare::default(),
        u_in: Vec::new(),
        w_in: Vec::new(),
        alpha1: Vec::new(),
        alpha1_sq: Vec::new(),
        r2: Vec::new(),
        r1r2: Vec::new(),
        sign_keys: Vec::new(),
        cond_keys: Vec::new(),
        cond_masks: Vec::new(),
    });
    let put = |mats: &mut [MaterialStar; 2],
               f: &dyn Fn(&mut MaterialStar) -> &mut Vec<AuthShare>,
               v: u128,
               rng: &mut DealerRng| {
        let s = share_auth(v, key, rng);
        for b in 0..2 {
            f(&mut mats[b]).push(s[b]);
        }
    };
    for (i, &r) in rx.iter().enumerate() {
        let mac0 = reduce(word(rng));
        let mac = reduce(key.wrapping_mul(r));
        for b in 0..2 {
            mats[b].rx.push(AuthShare {
                value: rx_values[b][i],
                mac: if b == 0 {
                    mac0
                } else {
                    reduce(mac.wrapping_sub(mac0))
                },
            });
        }
    }
    for b in 0..2 {
        mats[b].rx_seed = rx_seeds[b];
    }
    for (v, slot) in [(dot(&rx, &rx), 0), (r1, 1)] {
        let s = share_auth(v, key, rng);
        for b in 0..2 {
            if slot == 0 {
                mats[b].v_in = s[b];
            } else {
                mats[b].r1 = s[b];
            }
        }
    }
    // For tau < 0 the complementary gates, composed by `and` ([`CosinePlan::star_gates`]).
    let (sign, gate, _) = plan.star_gates();
    for j in 0..records {
        let ry = &template_masks[j * n..(j + 1) * n];
        let a1 = reduce(word(rng));
        let r2 = reduce(word(rng));
        put(&mut mats, &|m| &mut m.u_in, dot(&rx, ry), rng);
        put(&mut mats, &|m| &mut m.w_in, dot(ry, ry), rng);
        put(&mut mats, &|m| &mut m.alpha1, a1, rng);
        put(
            &mut mats,
            &|m| &mut m.alpha1_sq,
            reduce(a1.wrapping_mul(a1)),
            rng,
        );
        put(&mut mats, &|m| &mut m.r2, r2, rng);
        put(
            &mut mats,
            &|m| &mut m.r1r2,
            reduce(r1.wrapping_mul(r2)),
            rng,
        );
        for &trap in &psi {
            let mut seeds = [[0u8; 16]; 2];
            for s in &mut seeds {
                rng.fill(s);
            }
            let low = a1 as u64;
            let mask = if sign.negate { low.wrapping_neg() } else { low };
            let keys = ic::gen_weighted(
                sign.interval.0,
                sign.interval.1,
                mask,
                0,
                u64::from(!trap),
                seeds,
                [rng.word(), rng.word()],
            );
            let ri = reduce(word(rng));
            let mut fill = |out: &mut [u8]| rng.fill(out);
            let cond = condeval::setup_star(gate, trap, ri as u64, &mut fill);
            let [k0, k1] = keys;
            mats[0].sign_keys.push(k0);
            mats[1].sign_keys.push(k1);
            let [c0, c1] = cond;
            mats[0].cond_keys.push(c0);
            mats[1].cond_keys.push(c1);
            put(&mut mats, &|m| &mut m.cond_masks, ri, rng);
        }
    }
    (mats, psi)
}

fn to_bytes(words: &[u128], out: &mut Vec<u8>) {
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

fn from_bytes(bytes: &[u8], peer: usize, what: &str, n: usize) -> Result<Vec<u128>, NetError> {
    if bytes.len() != n * WORD {
        return Err(NetError::Protocol {
            peer,
            detail: format!(
                "{what}: {} bytes where {} were expected",
                bytes.len(),
                n * WORD
            ),
        });
    }
    Ok(bytes
        .chunks_exact(WORD)
        .map(|c| u128::from_le_bytes(c.try_into().expect("16")))
        .collect())
}

/// Opens authenticated values with the other server: the opened values; records each opened
/// value's `t_b` for the final check.
#[allow(clippy::too_many_arguments)]
fn open(
    net: &mut dyn Transport,
    peer: usize,
    key_share: u128,
    shares: &[AuthShare],
    alter: Option<usize>,
    extra: &[u8],
    what: &str,
    checks: &mut Vec<u128>,
) -> Result<(Vec<u128>, Vec<u8>), NetError> {
    let mut mine: Vec<u128> = shares.iter().map(|s| s.value).collect();
    if let Some(i) = alter {
        mine[i] = reduce(mine[i].wrapping_add(1));
    }
    let mut msg = Vec::with_capacity(mine.len() * WORD + extra.len());
    to_bytes(&mine, &mut msg);
    msg.extend_from_slice(extra);
    net.send(peer, msg)?;
    let theirs = net.recv(peer)?;
    let n = shares.len() * WORD;
    if theirs.len() != n + extra.len() {
        return Err(NetError::Protocol {
            peer,
            detail: format!(
                "{what}: {} bytes where {} were expected",
                theirs.len(),
                n + extra.len()
            ),
        });
    }
    let other = from_bytes(&theirs[..n], peer, what, shares.len())?;
    let opened: Vec<u128> = mine
        .iter()
        .zip(&other)
        .map(|(a, b)| reduce(a.wrapping_add(*b)))
        .collect();
    for (x, s) in opened.iter().zip(shares) {
        checks.push(reduce(key_share.wrapping_mul(*x).wrapping_sub(s.mac)));
    }
    Ok((opened, theirs[n..].to_vec()))
}

/// Where a query's input mask share travels: at its start (`send_own_masks`, the first query),
/// and the next query's with this one's output (`next`), so that the client's next query costs
/// it one message out and one in.
pub struct Pipeline<'a> {
    pub send_own_masks: bool,
    /// The next authentication's input-mask seed, asked for just before the output is sent
    /// (see [`super::eval::NextMasks`]).
    pub next: Option<super::eval::NextMasks<'a>>,
}

/// The client's receipt of the first query's input mask (the servers' shares summed).
pub fn recv_masks_star(
    net: &mut dyn Transport,
    roles: Roles,
    dim: usize,
) -> Result<Vec<u128>, EvalError> {
    let mut rx = vec![0u128; dim];
    for s in roles.servers {
        let seed = net.recv(s)?;
        add_seed_wide(&mut rx, &seed, s)?;
    }
    Ok(rx)
}

fn add_seed_wide(acc: &mut [u128], seed: &[u8], peer: usize) -> Result<(), NetError> {
    let seed: [u8; 16] = seed.try_into().map_err(|_| NetError::Protocol {
        peer,
        detail: format!("an input mask seed of {} bytes", seed.len()),
    })?;
    let words = super::sharing::mask_words_wide(&seed, acc.len());
    for (r, w) in acc.iter_mut().zip(words) {
        *r = reduce(r.wrapping_add(w));
    }
    Ok(())
}

/// One server's CSB.Eval* for one query: sends the client its output shares (`records * m`
/// bits) and the digest of its check list.
pub fn serve_star(
    net: &mut dyn Transport,
    roles: Roles,
    plan: &CosinePlan,
    g: &GalleryStar,
    mat: &MaterialStar,
    deviation: Deviation,
    pipeline: Pipeline<'_>,
) -> Result<(), EvalError> {
    let me = net.party();
    let b = roles
        .server_of(me)
        .ok_or_else(|| EvalError::Refused(format!("party {me} is not a server")))?;
    let (peer, client) = (roles.servers[1 - b], roles.client);
    let (n, records, m, key) = (g.dim, g.records, mat.m, g.key_share);
    if pipeline.send_own_masks {
        net.send(client, mat.rx_seed.to_vec())?;
    }
    let dx = from_bytes(&net.recv(client)?, client, "the client's masked input", n)?;
    let mut digest_in = blake3::Hasher::new_derive_key("irisc 2026 fss2 input digest star");
    for w in &dx {
        digest_in.update(&w.to_le_bytes());
    }
    let digest_in = *digest_in.finalize().as_bytes();
    let mut checks = Vec::new();
    // SS.IP with MACs, then round 1.
    let v = auth::ss_ip(b, key, &dx, &mat.rx, &dx, &mat.rx, mat.v_in);
    let mut to_open = vec![v.plus(mat.r1)];
    for j in 0..records {
        let (dy, ry) = (&g.delta[j * n..(j + 1) * n], &g.mask[j * n..(j + 1) * n]);
        let u = auth::ss_ip(b, key, &dx, &mat.rx, dy, ry, mat.u_in[j]);
        let w = auth::ss_ip(b, key, dy, ry, dy, ry, mat.w_in[j]);
        to_open.push(u.plus(mat.alpha1[j]));
        to_open.push(w.plus(mat.r2[j]));
    }
    let alter = match deviation {
        Deviation::AlterDelta { template } => Some(1 + 2 * template),
        _ => None,
    };
    let (opened, their_digest) = open(
        net,
        peer,
        key,
        &to_open,
        alter,
        &digest_in,
        "round 1",
        &mut checks,
    )?;
    if their_digest != digest_in {
        return Err(EvalError::Refused(
            "the client sent the two servers different masked inputs: the query is refused".into(),
        ));
    }
    let (den2, num2) = plan.squares();
    let (sign, _, _) = plan.star_gates();
    let delta_v = opened[0];
    let mut e_open = Vec::with_capacity(records * m);
    let mut requests = Vec::with_capacity(records * m * KeyRequest::BYTES);
    for j in 0..records {
        let (du, dw) = (opened[1 + 2 * j], opened[2 + 2 * j]);
        let uu = auth::ss_mul(
            b,
            key,
            (du, mat.alpha1[j]),
            (du, mat.alpha1[j]),
            mat.alpha1_sq[j],
        );
        let vw = auth::ss_mul(b, key, (delta_v, mat.r1), (dw, mat.r2[j]), mat.r1r2[j]);
        let e = uu.scale(u128::from(den2)).minus(vw.scale(u128::from(num2)));
        let x = if sign.negate {
            (du as u64).wrapping_neg()
        } else {
            du as u64
        };
        // c_1 of the template's m instances in one batch of gate evaluations.
        let signs: Vec<(&IcKey, u64)> = (0..m).map(|i| (&mat.sign_keys[j * m + i], x)).collect();
        let c1s = eval_bits_many(&signs);
        for (i, c1) in c1s.iter().enumerate().take(m) {
            let s = *c1
                ^ match deviation {
                    Deviation::WrongKey { template, instance } => template == j && instance == i,
                    Deviation::WrongKeys { template } => template == j,
                    _ => false,
                };
            e_open.push(e.plus(mat.cond_masks[j * m + i]));
            mat.cond_keys[j * m + i]
                .key_request(s)
                .encode(&mut requests);
        }
    }
    // Round 2: CondEval.Eval* for every instance.
    let (delta_e, their_requests) = open(
        net,
        peer,
        key,
        &e_open,
        None,
        &requests,
        "round 2",
        &mut checks,
    )?;
    let mut bits = vec![0u8; (records * m).div_ceil(8)];
    let mut tags = 0u128;
    // KeyDec of every instance, then the unlocked gate keys evaluated in one batch.
    let mut opened_keys = Vec::with_capacity(records * m);
    for (k, delta) in delta_e.iter().enumerate().take(records * m) {
        let at = k * KeyRequest::BYTES;
        let request =
            KeyRequest::decode(&their_requests[at..at + KeyRequest::BYTES]).map_err(|e| {
                NetError::Protocol {
                    peer,
                    detail: e.to_string(),
                }
            })?;
        opened_keys.push(
            mat.cond_keys[k]
                .open_key(&request, *delta as u64)
                .map_err(|e| EvalError::Refused(e.to_string()))?,
        );
    }
    let pairs: Vec<(&IcKey, u64)> = opened_keys.iter().map(|(key, x, _)| (key, *x)).collect();
    let ys = eval_bits_many(&pairs);
    for k in 0..records * m {
        let (y, tag) = (ys[k], opened_keys[k].2);
        let y = y
            ^ matches!(deviation, Deviation::FlipOutput { template, instance } if template * m + instance == k);
        bits[k / 8] |= u8::from(y) << (k % 8);
        tags = tags.wrapping_add(tag);
    }
    checks.push(reduce(tags));
    if deviation == Deviation::CorruptMac {
        checks[0] = reduce(checks[0].wrapping_add(1));
    }
    // Server 1 negates: both lists are then equal exactly when every share pair sums to zero.
    let mut h = blake3::Hasher::new_derive_key("irisc 2026 fss2 mac check");
    for c in &checks {
        let v = if b == 0 { *c } else { reduce(c.wrapping_neg()) };
        h.update(&v.to_le_bytes());
    }
    let mut out = bits;
    out.extend_from_slice(h.finalize().as_bytes());
    if let Some(next) = pipeline.next {
        out.extend_from_slice(&next().map_err(EvalError::Refused)?);
    }
    net.send(client, out)?;
    Ok(())
}

/// The client's CSB side: its query in, one decision per template out, or the reason the
/// output is withheld.
#[allow(clippy::too_many_arguments)]
pub fn query_star(
    net: &mut dyn Transport,
    roles: Roles,
    plan: &CosinePlan,
    records: usize,
    psi: &[bool],
    x: &[i64],
    rx: &[u128],
    more: bool,
) -> Result<(Vec<bool>, Option<Vec<u128>>), EvalError> {
    let n = plan.dim;
    let mut msg = Vec::with_capacity(n * WORD);
    let dx: Vec<u128> = x
        .iter()
        .zip(rx)
        .map(|(&v, r)| reduce((v as i128 as u128).wrapping_add(*r)))
        .collect();
    to_bytes(&dx, &mut msg);
    net.send(roles.servers[0], msg.clone())?;
    net.send(roles.servers[1], msg)?;
    let m = psi.len();
    let (_, _, negated) = plan.star_gates();
    let bits_len = (records * m).div_ceil(8);
    let mut shares = Vec::new();
    for s in roles.servers {
        let o = net.recv(s)?;
        if o.len() != bits_len + 32 + if more { 16 } else { 0 } {
            return Err(EvalError::Net(NetError::Protocol {
                peer: s,
                detail: "a malformed output message".into(),
            }));
        }
        shares.push(o);
    }
    let next = if more {
        let mut rx = vec![0u128; n];
        for (k, o) in shares.iter().enumerate() {
            add_seed_wide(&mut rx, &o[bits_len + 32..], roles.servers[k])?;
        }
        Some(rx)
    } else {
        None
    };
    if shares[0][bits_len..bits_len + 32] != shares[1][bits_len..bits_len + 32] {
        return Err(EvalError::Refused(
            "a server deviated: the MAC check failed (an opened value, a MAC or a key-decryption message was altered); the output is withheld".into(),
        ));
    }
    let bit = |s: &[u8], k: usize| s[k / 8] >> (k % 8) & 1 == 1;
    let mut out = Vec::with_capacity(records);
    for j in 0..records {
        let y0: Vec<bool> = (0..m).map(|i| bit(&shares[0], j * m + i)).collect();
        let y1: Vec<bool> = (0..m).map(|i| bit(&shares[1], j * m + i)).collect();
        match auth::verify([&y0, &y1], [0, 0], psi) {
            // tau < 0: the instances computed `not c_1 and not f`; the decision is its negation.
            Verdict::Accept(v) => out.push(v ^ negated),
            Verdict::NoNormalInstance => {
                return Err(EvalError::Refused(
                    "the dealer's psi has no normal instance".into(),
                ))
            }
            Verdict::Abort(why) => {
                return Err(EvalError::Refused(format!(
                    "a server deviated (template {j}: {why}); the output is withheld"
                )))
            }
        }
    }
    Ok((out, next))
}

fn put_share(out: &mut Vec<u8>, a: &AuthShare) {
    out.extend_from_slice(&a.value.to_le_bytes());
    out.extend_from_slice(&a.mac.to_le_bytes());
}

/// Reads fixed-size fields in order.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> &[u8] {
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        s
    }

    fn word(&mut self) -> u128 {
        u128::from_le_bytes(self.take(WORD).try_into().expect("16"))
    }

    fn share(&mut self) -> AuthShare {
        AuthShare {
            value: self.word(),
            mac: self.word(),
        }
    }

    fn shares(&mut self, n: usize) -> Vec<AuthShare> {
        (0..n).map(|_| self.share()).collect()
    }
}

impl MaterialStar {
    pub fn encoded_bytes(dim: usize, records: usize, m: usize) -> usize {
        16 + WORD * dim
            + 2 * WORD * (2 + 6 * records + records * m)
            + records * m * (IcKey::ENCODED_BYTES + CondEvalKeyStar::ENCODED_BYTES)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut o = Vec::new();
        o.extend_from_slice(&self.rx_seed);
        for a in &self.rx {
            o.extend_from_slice(&a.mac.to_le_bytes());
        }
        for a in [&self.v_in, &self.r1] {
            put_share(&mut o, a);
        }
        for v in [
            &self.u_in,
            &self.w_in,
            &self.alpha1,
            &self.alpha1_sq,
            &self.r2,
            &self.r1r2,
            &self.cond_masks,
        ] {
            for a in v {
                put_share(&mut o, a);
            }
        }
        for k in &self.sign_keys {
            o.extend_from_slice(&k.encode());
        }
        for k in &self.cond_keys {
            k.encode(&mut o);
        }
        o
    }

    pub fn decode(
        bytes: &[u8],
        server: usize,
        dim: usize,
        records: usize,
        m: usize,
    ) -> Result<MaterialStar, String> {
        if bytes.len() != Self::encoded_bytes(dim, records, m) {
            return Err("one authentication's material has the wrong size".into());
        }
        let mut r = Reader { bytes, at: 0 };
        let rx_seed: [u8; 16] = r.take(16).try_into().expect("16");
        let values = super::sharing::mask_words_wide(&rx_seed, dim);
        let rx: Vec<AuthShare> = values
            .into_iter()
            .map(|value| AuthShare {
                value,
                mac: r.word(),
            })
            .collect();
        let (v_in, r1) = (r.share(), r.share());
        let mut per: Vec<Vec<AuthShare>> = (0..6).map(|_| r.shares(records)).collect();
        let cond_masks = r.shares(records * m);
        let mut sign_keys = Vec::with_capacity(records * m);
        for _ in 0..records * m {
            let k = IcKey::decode(r.take(IcKey::ENCODED_BYTES))?;
            if k.server() != server {
                return Err(format!(
                    "a key of server {} in server {server}'s material",
                    k.server()
                ));
            }
            sign_keys.push(k);
        }
        let mut cond_keys = Vec::with_capacity(records * m);
        for _ in 0..records * m {
            let k = CondEvalKeyStar::decode(r.take(CondEvalKeyStar::ENCODED_BYTES))
                .map_err(|e| e.to_string())?;
            if k.server() != server {
                return Err(format!(
                    "a CondEval* key of server {} in server {server}'s material",
                    k.server()
                ));
            }
            cond_keys.push(k);
        }
        let mut t = |i: usize| std::mem::take(&mut per[i]);
        Ok(MaterialStar {
            server,
            m,
            rx_seed,
            rx,
            v_in,
            r1,
            u_in: t(0),
            w_in: t(1),
            alpha1: t(2),
            alpha1_sq: t(3),
            r2: t(4),
            r1r2: t(5),
            sign_keys,
            cond_keys,
            cond_masks,
        })
    }
}

const GALLERY_MAGIC: &[u8; 8] = b"IRSFSH01";
const SECRET_MAGIC: &[u8; 8] = b"IRSFSE01";

fn file_error(path: &std::path::Path, detail: &str) -> String {
    format!("{}: {detail}", path.display())
}

/// Writes one server's authenticated gallery share (owner-only).
pub fn write_gallery_star(path: &std::path::Path, g: &GalleryStar) -> Result<(), String> {
    let mut body = Vec::new();
    body.extend_from_slice(&(g.server as u32).to_le_bytes());
    body.extend_from_slice(&g.gallery_id);
    body.extend_from_slice(&(g.dim as u64).to_le_bytes());
    body.extend_from_slice(&(g.records as u64).to_le_bytes());
    body.extend_from_slice(&g.key_share.to_le_bytes());
    for id in &g.ids {
        body.extend_from_slice(&id.to_le_bytes());
    }
    for d in &g.delta {
        body.extend_from_slice(&d.to_le_bytes());
    }
    for a in &g.mask {
        put_share(&mut body, a);
    }
    let sum = super::material::checksum("irisc 2026 fss2 gallery star", &[&body]);
    super::material::write_private(path, &[GALLERY_MAGIC, &sum, &body]).map_err(|e| e.to_string())
}

pub fn read_gallery_star(path: &std::path::Path, server: usize) -> Result<GalleryStar, String> {
    let meta = std::fs::metadata(path).map_err(|e| file_error(path, &e.to_string()))?;
    crate::io::owner_only::check(path, &meta, "one server's authenticated gallery shares")?;
    let bytes = std::fs::read(path).map_err(|e| file_error(path, &e.to_string()))?;
    if bytes.len() < 8 + 32 + 4 + 16 + 16 + 16 || &bytes[..8] != GALLERY_MAGIC {
        return Err(file_error(
            path,
            "not an irisc authenticated gallery share (its first bytes are not those of one)",
        ));
    }
    let (sum, body) = bytes[8..].split_at(32);
    if super::material::checksum("irisc 2026 fss2 gallery star", &[body]) != sum {
        return Err(file_error(
            path,
            "its checksum does not match: the file was damaged or truncated",
        ));
    }
    let mut r = Reader { bytes: body, at: 0 };
    let s = u32::from_le_bytes(r.take(4).try_into().expect("4")) as usize;
    let gallery_id: [u8; 16] = r.take(16).try_into().expect("16");
    let dim = u64::from_le_bytes(r.take(8).try_into().expect("8")) as usize;
    let records = u64::from_le_bytes(r.take(8).try_into().expect("8")) as usize;
    if body.len() != 4 + 16 + 16 + WORD + records * 8 + dim * records * 3 * WORD {
        return Err(file_error(path, "its size does not match its header"));
    }
    if s != server {
        return Err(file_error(
            path,
            &format!("this is server {s}'s gallery share, not server {server}'s"),
        ));
    }
    let key_share = r.word();
    let ids = (0..records)
        .map(|_| u64::from_le_bytes(r.take(8).try_into().expect("8")))
        .collect();
    let delta = (0..dim * records).map(|_| r.word()).collect();
    let mask = r.shares(dim * records);
    Ok(GalleryStar {
        server,
        gallery_id,
        dim,
        records,
        ids,
        key_share,
        delta,
        mask,
    })
}

pub fn write_secret_star(path: &std::path::Path, s: &SecretStar) -> Result<(), String> {
    let body = s.encode();
    let sum = super::material::checksum("irisc 2026 fss2 secret star", &[&body]);
    super::material::write_private(path, &[SECRET_MAGIC, &sum, &body]).map_err(|e| e.to_string())
}

pub fn read_secret_star(path: &std::path::Path) -> Result<SecretStar, String> {
    let meta = std::fs::metadata(path).map_err(|e| file_error(path, &e.to_string()))?;
    crate::io::owner_only::check(path, &meta, "the dealer's MAC key shares")?;
    let bytes = std::fs::read(path).map_err(|e| file_error(path, &e.to_string()))?;
    if bytes.len() < 40 || &bytes[..8] != SECRET_MAGIC {
        return Err(file_error(path, "not an irisc authenticated dealer secret"));
    }
    let (sum, body) = bytes[8..].split_at(32);
    if super::material::checksum("irisc 2026 fss2 secret star", &[body]) != sum {
        return Err(file_error(
            path,
            "its checksum does not match: the file was damaged",
        ));
    }
    SecretStar::decode(body).ok_or_else(|| file_error(path, "a malformed dealer secret"))
}
