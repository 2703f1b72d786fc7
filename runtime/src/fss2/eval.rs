//! CS.Eval (paper 002, Protocol 2) with the robust input of its Fig. 3 and the output to the
//! client, as each party runs it over a [`Transport`]: two servers `S_0`, `S_1` and the client
//! (who holds the query and receives the decisions), at the link indices of [`Roles`].
//!
//! - **Input** (Fig. 3): `S_b` sends `[r_x]_b` to the client ahead of time (when the connection
//!   opens, then with the previous query's output), the client returns `delta_x = x + r_x` to
//!   both. The servers' check that they received the same `delta_x` travels in the first round
//!   (a digest of it), so it costs no round of its own: a query costs the client one message out
//!   and one in, around the servers' two rounds.
//! - **Round 1**: each server computes its shares of `u_j = <x, y_j>`, `v = <x, x>` and
//!   `w_j = <y_j, y_j>` by SS.IP (local) and opens `u_j + alpha_1,j`, `v + r_1`, `w_j + r_2,j`.
//! - Between the rounds, locally: `[c_1,j]` from the sign gate on the opened `u_j`, and
//!   `[E_j] = den^2 SS.MUL(<u_j>, <u_j>) - num^2 SS.MUL(<v>, <w_j>)`.
//! - **Round 2** (CondEval.Eval): each server opens `E_j + r_j` and sends its key-decryption
//!   message for `[c_1,j]`, then evaluates the decrypted key: `[c_1,j o f(E_j)]`.
//! - **Output**: each server sends its bit shares to the client, which XORs them.
//!
//! The online phase between the servers is exactly two rounds; per template each server sends
//! three ring elements and one 17-byte key-decryption message.

use crate::fss::condeval::KeyRequest;
use crate::fss::ic::{eval_bits_many, IcKey};
use crate::net::{NetError, Transport};

use super::dealer::{AuthMaterial, GalleryShare};
use super::kernel::IpKernel;
use super::plan::CosinePlan;
use super::sharing::ss_mul;

/// Which link index plays which role.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Roles {
    /// `S_0` and `S_1`.
    pub servers: [usize; 2],
    pub client: usize,
}

impl Roles {
    /// The roles of a run whose client is link index `client` of three: the servers are the
    /// other two, in index order.
    pub fn with_client(client: usize) -> Roles {
        let mut s = (0..3).filter(|&i| i != client);
        Roles {
            servers: [s.next().expect("two"), s.next().expect("two")],
            client,
        }
    }

    /// The server role (0 or 1) of link index `party`, if it is a server.
    pub fn server_of(&self, party: usize) -> Option<usize> {
        self.servers.iter().position(|&s| s == party)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Net(#[from] NetError),
    #[error("{0}")]
    Refused(String),
}

/// Yields the next authentication's input-mask seed once its material is taken.
pub type NextMasks<'a> = &'a mut dyn FnMut() -> Result<[u8; 16], String>;

/// Everything one server's evaluation needs, threaded through every step.
pub struct ServerSession<'a> {
    pub net: &'a mut dyn Transport,
    pub roles: Roles,
    pub plan: &'a CosinePlan,
    pub gallery: &'a GalleryShare,
    pub material: &'a AuthMaterial,
    /// The seed of the next authentication's `[r_x]_b`, sent with this one's output (`None` for
    /// the last). Called once, just before the output is sent: the caller may still be taking
    /// that authentication's material (checked and durably marked used) while this one runs.
    pub next_masks: Option<NextMasks<'a>>,
    /// The SS.IP of round 1: the generated kernel of a compiled server, or the runtime's loop.
    pub ip: IpKernel,
}

/// Fig. 3's first message ahead of time: the seed of this server's share of the next query's
/// input mask.
pub fn send_input_masks(
    net: &mut dyn Transport,
    client: usize,
    seed: &[u8; 16],
) -> Result<(), NetError> {
    net.send(client, seed.to_vec())
}

/// The client's side of [`send_input_masks`]: `r_x`, the sum of both servers' expansions.
pub fn recv_input_masks(
    net: &mut dyn Transport,
    roles: Roles,
    dim: usize,
) -> Result<Vec<u64>, EvalError> {
    let mut rx = vec![0u64; dim];
    for s in roles.servers {
        let seed = net.recv(s)?;
        expect_len(&seed, 16, s, "the input mask seed")?;
        add_seed(&mut rx, &seed);
    }
    Ok(rx)
}

fn add_seed(acc: &mut [u64], seed: &[u8]) {
    let seed: [u8; 16] = seed.try_into().expect("16");
    let words = super::sharing::mask_words(&seed, acc.len());
    for (r, w) in acc.iter_mut().zip(words) {
        *r = r.wrapping_add(w);
    }
}

/// What one server's evaluation sent, for the accounting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerStats {
    pub rounds: u32,
    pub bytes_to_server: u64,
    pub bytes_to_client: u64,
}

fn words_to_bytes(words: &[u64], out: &mut Vec<u8>) {
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

fn bytes_to_words(bytes: &[u8], peer: usize, what: &str) -> Result<Vec<u64>, NetError> {
    if !bytes.len().is_multiple_of(8) {
        return Err(NetError::Protocol {
            peer,
            detail: format!(
                "{what}: {} bytes is not a whole number of ring elements",
                bytes.len()
            ),
        });
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
        .collect())
}

fn expect_len(bytes: &[u8], want: usize, peer: usize, what: &str) -> Result<(), NetError> {
    if bytes.len() != want {
        return Err(NetError::Protocol {
            peer,
            detail: format!("{what}: {} bytes where {want} were expected", bytes.len()),
        });
    }
    Ok(())
}

fn digest(words: &[u64]) -> [u8; 32] {
    let mut h = blake3::Hasher::new_derive_key("irisc 2026 fss2 input digest");
    for w in words {
        h.update(&w.to_le_bytes());
    }
    *h.finalize().as_bytes()
}

impl ServerSession<'_> {
    fn check(&self) -> Result<usize, EvalError> {
        let me = self.net.party();
        let (g, m) = (self.gallery, self.material);
        let Some(b) = self.roles.server_of(me) else {
            return Err(EvalError::Refused(format!("party {me} is not a server")));
        };
        if g.server != b || m.server != b {
            return Err(EvalError::Refused(format!(
                "server {b} was given server {}'s gallery share or server {}'s material",
                g.server, m.server
            )));
        }
        if g.dim != self.plan.dim || m.dim != g.dim || m.records != g.records {
            return Err(EvalError::Refused(format!(
                "the material is for {} records of dimension {}, the gallery holds {} of dimension {}",
                m.records, m.dim, g.records, g.dim
            )));
        }
        Ok(b)
    }

    /// CS.Eval for this server: sends its output shares to the client and returns what it sent.
    pub fn run(self) -> Result<ServerStats, EvalError> {
        let b = self.check()?;
        let (peer, client) = (self.roles.servers[1 - b], self.roles.client);
        let (plan, g, m) = (self.plan, self.gallery, self.material);
        let (n, records) = (g.dim, g.records);
        let net = self.net;
        let sent0 = net.bytes_sent();
        // Input (Fig. 3): this authentication's mask share went to the client ahead of time
        // ([`send_input_masks`]); its masked input comes back.
        let dx = net.recv(client)?;
        expect_len(&dx, 8 * n, client, "the client's masked input")?;
        let dx = bytes_to_words(&dx, client, "the client's masked input")?;

        // Round 1: SS.IP, then open u + alpha_1, v + r_1, w + r_2.
        let ip = self.ip;
        let v = ip.ip(b, &dx, &m.rx, &dx, &m.rx, m.v_in);
        let mut open1 = Vec::with_capacity(1 + 2 * records);
        open1.push(v.wrapping_add(m.r1));
        for j in 0..records {
            let (dy, ry) = (&g.delta[j * n..(j + 1) * n], &g.mask[j * n..(j + 1) * n]);
            let u = ip.ip(b, &dx, &m.rx, dy, ry, m.u_in[j]);
            let w = ip.ip(b, dy, ry, dy, ry, m.w_in[j]);
            open1.push(u.wrapping_add(m.alpha1[j]));
            open1.push(w.wrapping_add(m.r2[j]));
        }
        let mut msg = Vec::with_capacity(32 + 8 * open1.len());
        msg.extend_from_slice(&digest(&dx));
        words_to_bytes(&open1, &mut msg);
        net.send(peer, msg)?;
        let theirs = net.recv(peer)?;
        expect_len(&theirs, 32 + 8 * open1.len(), peer, "round 1")?;
        if theirs[..32] != digest(&dx) {
            return Err(EvalError::Refused(
                "the client sent the two servers different masked inputs: the query is refused"
                    .into(),
            ));
        }
        let theirs = bytes_to_words(&theirs[32..], peer, "round 1")?;
        let opened: Vec<u64> = open1
            .iter()
            .zip(&theirs)
            .map(|(a, c)| a.wrapping_add(*c))
            .collect();

        // Between the rounds: c_1 shares and E shares, all local.
        let (den2, num2) = plan.squares();
        let sign = plan.sign_test();
        let delta_v = opened[0];
        let mut open2 = Vec::with_capacity(records * (8 + KeyRequest::BYTES));
        let mut requests = Vec::with_capacity(records);
        // c_1 of every template in one batch of gate evaluations.
        let signs: Vec<(&IcKey, u64)> = (0..records)
            .map(|j| {
                let delta_u = opened[1 + 2 * j];
                let x = if sign.negate {
                    delta_u.wrapping_neg()
                } else {
                    delta_u
                };
                (&m.sign_keys[j], x)
            })
            .collect();
        let c1s = eval_bits_many(&signs);
        for j in 0..records {
            let (delta_u, delta_w) = (opened[1 + 2 * j], opened[2 + 2 * j]);
            let c1 = c1s[j];
            let uu = ss_mul(
                b,
                (delta_u, m.alpha1[j]),
                (delta_u, m.alpha1[j]),
                m.alpha1_sq[j],
            );
            let vw = ss_mul(b, (delta_v, m.r1), (delta_w, m.r2[j]), m.r1r2[j]);
            let e = den2.wrapping_mul(uu).wrapping_sub(num2.wrapping_mul(vw));
            let key = &m.condeval[j];
            open2.extend_from_slice(&e.wrapping_add(key.mask_share).to_le_bytes());
            requests.push(key.key_request(c1));
        }
        for r in &requests {
            r.encode(&mut open2);
        }
        // Round 2: CondEval.Eval.
        let want = open2.len();
        net.send(peer, open2.clone())?;
        let theirs = net.recv(peer)?;
        expect_len(&theirs, want, peer, "round 2")?;
        let mut out = vec![0u8; records.div_ceil(8)];
        // KeyDec for every template, then their gate keys evaluated in one batch.
        let mut opened_keys = Vec::with_capacity(records);
        for j in 0..records {
            let e = |buf: &[u8]| u64::from_le_bytes(buf[8 * j..8 * j + 8].try_into().expect("8"));
            let delta_e = e(&open2).wrapping_add(e(&theirs));
            let at = 8 * records + j * KeyRequest::BYTES;
            let request = KeyRequest::decode(&theirs[at..at + KeyRequest::BYTES]).map_err(|e| {
                NetError::Protocol {
                    peer,
                    detail: e.to_string(),
                }
            })?;
            opened_keys.push(
                m.condeval[j]
                    .open_key(&request, delta_e)
                    .map_err(|e| EvalError::Refused(e.to_string()))?,
            );
        }
        let pairs: Vec<(&IcKey, u64)> = opened_keys.iter().map(|(k, x)| (k, *x)).collect();
        for (j, y) in eval_bits_many(&pairs).into_iter().enumerate() {
            let y = m.condeval[j].output(y);
            out[j / 8] |= u8::from(y) << (j % 8);
        }
        // The next authentication's mask share rides on this one's output: the client's next
        // query then costs it one message to the servers.
        if let Some(next) = self.next_masks {
            out.extend_from_slice(&next().map_err(EvalError::Refused)?);
        }
        let before_out = net.bytes_sent();
        net.send(client, out)?;
        let total = net.bytes_sent() - sent0;
        let to_client = net.bytes_sent() - before_out;
        Ok(ServerStats {
            rounds: 2,
            bytes_to_server: total - to_client,
            bytes_to_client: to_client,
        })
    }
}

/// The client's side of one query: `x` (fixed point, `plan.dim` components) masked with `rx`
/// (from [`recv_input_masks`] or the previous query's output messages), one decision per enrolled
/// template out, and the next query's mask when `more` (the servers send it with the output).
pub fn run_client(
    net: &mut dyn Transport,
    roles: Roles,
    plan: &CosinePlan,
    records: usize,
    x: &[i64],
    rx: &[u64],
    more: bool,
) -> Result<(Vec<bool>, Option<Vec<u64>>), EvalError> {
    if x.len() != plan.dim {
        return Err(EvalError::Refused(format!(
            "a query of {} components for a program of dimension {}",
            x.len(),
            plan.dim
        )));
    }
    let mut delta = Vec::with_capacity(8 * plan.dim);
    let dx: Vec<u64> = x
        .iter()
        .zip(rx)
        .map(|(&v, r)| (v as u64).wrapping_add(*r))
        .collect();
    words_to_bytes(&dx, &mut delta);
    net.send(roles.servers[0], delta.clone())?;
    net.send(roles.servers[1], delta)?;
    let out_bytes = records.div_ceil(8);
    let want = out_bytes + if more { 16 } else { 0 };
    let mut bits = vec![0u8; out_bytes];
    let mut next = more.then(|| vec![0u64; plan.dim]);
    for s in roles.servers {
        let share = net.recv(s)?;
        expect_len(&share, want, s, "the output shares")?;
        for (a, c) in bits.iter_mut().zip(&share[..out_bytes]) {
            *a ^= c;
        }
        if let Some(n) = next.as_mut() {
            add_seed(n, &share[out_bytes..]);
        }
    }
    Ok((
        (0..records)
            .map(|j| bits[j / 8] >> (j % 8) & 1 == 1)
            .collect(),
        next,
    ))
}
