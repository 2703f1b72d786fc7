//! MaskGen (paper 004, Fig. 3): per conditional and lane, a uniform shared bit `[s]` and two
//! shared mask strings, `M^s` a sharing of zeros and `M^(1-s)` of uniform bits.
//!
//! Three instantiations (Sect. 6); [`MaskGenMethod::cheapest`] picks one for p parties:
//! - Pi-MaskGen-VS (Fig. 5), any p: `[r]` uniform, `[s r]` by one VS gate evaluated with
//!   Pi-Half-VS-Long (Fig. 6), `M^0 = [s r]`, `M^1 = [s r] ^ [r]`. Communication grows with the
//!   mask length.
//! - Pi-MaskGen-2P (Fig. 7), p = 2: a VS gate on a kappa-bit seed `[S]` gives
//!   `[S^0] = [s S]`, `[S^1] = [s S] ^ [S]`; each party expands its own share of `S^b` with the
//!   PRG `G`. Equal shares (the zero seed) expand to equal strings, whose XOR is zero.
//!   Communication is O(kappa) per mask pair, whatever its length.
//! - The three-party seed protocol (Sect. 6.2, informal in the paper): seven joint random
//!   seeds; for the zero mask the parties get the pairs (S1, S2), (S1, S3), (S2, S3), each seed
//!   twice, so the expansions cancel; for the uniform mask (S4, S5), (S4, S6), (S4, S7). Which
//!   assignment lands in `M^0` is swapped by one VS gate on `[s]` and the pairs are then opened
//!   to their owners only.

use serde::{Deserialize, Serialize};

use crate::net::{NetError, Transport};
use crate::ot::prg_expand;

use super::links::{clear_tail, OtLinks};
use super::material::{words_for, Masks};
use super::triple_gen::tail_mask;
use super::{BeaverError, LocalRng};

/// Which MaskGen protocol makes the masks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MaskGenMethod {
    /// Pi-MaskGen-VS with Pi-Half-VS-Long (Figs. 5, 6).
    Vs,
    /// Pi-MaskGen-2P (Fig. 7).
    Seed2p,
    /// The three-party seed protocol (Sect. 6.2).
    Seed3p,
}

impl MaskGenMethod {
    pub const ALL: [MaskGenMethod; 3] = [Self::Vs, Self::Seed2p, Self::Seed3p];

    /// The seed protocols where they exist (O(kappa) per mask pair), else VS.
    pub fn cheapest(parties: usize) -> MaskGenMethod {
        match parties {
            2 => Self::Seed2p,
            3 => Self::Seed3p,
            _ => Self::Vs,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Vs => "vs",
            Self::Seed2p => "seed-2p",
            Self::Seed3p => "seed-3p",
        }
    }

    pub fn parse(s: &str) -> Option<MaskGenMethod> {
        Self::ALL.into_iter().find(|m| m.name() == s)
    }

    /// The party counts the protocol is for.
    pub fn fits(self, parties: usize) -> bool {
        match self {
            Self::Vs => parties >= 2,
            Self::Seed2p => parties == 2,
            Self::Seed3p => parties == 3,
        }
    }
}

/// Bytes of one seed.
const SEED: usize = 16;

/// This party's shares of the masks of conditionals with `rows[c]` rows each, on `lanes`
/// lanes, by `method`.
pub fn mask_gen(
    net: &mut dyn Transport,
    links: &mut OtLinks,
    rng: &mut LocalRng,
    method: MaskGenMethod,
    rows: &[u64],
    lanes: usize,
) -> Result<Vec<Masks>, BeaverError> {
    let parties = links.parties();
    if !method.fits(parties.count) {
        return Err(BeaverError::Material(format!(
            "MaskGen {} is not a protocol for {} parties",
            method.name(),
            parties.count
        )));
    }
    let w = words_for(lanes);
    let tail = tail_mask(lanes);
    let mut out = Vec::with_capacity(rows.len());
    for &n in rows {
        let mut s = rng.words(w);
        if let Some(last) = s.last_mut() {
            *last &= tail;
        }
        let s_bits: Vec<bool> = (0..lanes).map(|l| bit(&s, l)).collect();
        let n_bits = n as usize;
        let (m0, m1) = match method {
            MaskGenMethod::Vs => {
                let mut r = rng.words(n_bits * w);
                for row in 0..n_bits {
                    r[row * w + w - 1] &= tail;
                }
                let columns: Vec<Vec<u8>> = (0..lanes).map(|l| column(&r, n_bits, w, l)).collect();
                let sr = links.vs_long(net, rng, &s_bits, &columns, n_bits)?;
                let m0 = from_columns(&sr, n_bits, w);
                let m1 = m0.iter().zip(&r).map(|(a, b)| a ^ b).collect();
                (m0, m1)
            }
            MaskGenMethod::Seed2p => {
                let seeds: Vec<Vec<u8>> = (0..lanes).map(|_| random_bytes(rng, SEED)).collect();
                let ss = links.vs_short(net, rng, &s_bits, &seeds, SEED)?;
                let s1: Vec<Vec<u8>> = ss.iter().zip(&seeds).map(|(a, b)| xor(a, b)).collect();
                let expand = |seeds: &[Vec<u8>]| -> Vec<Vec<u8>> {
                    seeds.iter().map(|k| expand(k, n_bits)).collect()
                };
                (
                    from_columns(&expand(&ss), n_bits, w),
                    from_columns(&expand(&s1), n_bits, w),
                )
            }
            MaskGenMethod::Seed3p => {
                let (zero, uniform) = seed_pairs_3p(net, links, rng, &s_bits)?;
                let expand = |pairs: &[[u8; 2 * SEED]]| -> Vec<Vec<u8>> {
                    pairs
                        .iter()
                        .map(|p| xor(&expand(&p[..SEED], n_bits), &expand(&p[SEED..], n_bits)))
                        .collect()
                };
                (
                    from_columns(&expand(&zero), n_bits, w),
                    from_columns(&expand(&uniform), n_bits, w),
                )
            }
        };
        out.push(Masks { rows: n, s, m0, m1 });
    }
    Ok(out)
}

/// Seed slots: party i's pair is slots 2i and 2i+1. Zero assignment (S1,S2),(S1,S3),(S2,S3);
/// uniform assignment (S4,S5),(S4,S6),(S4,S7); seeds numbered from 0 here.
const ZERO_SLOTS: [usize; 6] = [0, 1, 0, 2, 1, 2];
const UNIFORM_SLOTS: [usize; 6] = [3, 4, 3, 5, 3, 6];

/// The three-party seed distribution: returns, per lane, this party's seed pair for `M^0` and
/// for `M^1`.
#[allow(clippy::type_complexity)]
fn seed_pairs_3p(
    net: &mut dyn Transport,
    links: &mut OtLinks,
    rng: &mut LocalRng,
    s_bits: &[bool],
) -> Result<(Vec<[u8; 2 * SEED]>, Vec<[u8; 2 * SEED]>), BeaverError> {
    let parties = links.parties();
    let lanes = s_bits.len();
    // Shares of seven joint seeds per lane; nobody knows a seed.
    let seeds: Vec<Vec<u8>> = (0..lanes).map(|_| random_bytes(rng, 7 * SEED)).collect();
    let slots = |s: &[u8], which: &[usize; 6]| -> Vec<u8> {
        which
            .iter()
            .flat_map(|&k| s[k * SEED..(k + 1) * SEED].iter().copied())
            .collect()
    };
    let zero: Vec<Vec<u8>> = seeds.iter().map(|s| slots(s, &ZERO_SLOTS)).collect();
    let uniform: Vec<Vec<u8>> = seeds.iter().map(|s| slots(s, &UNIFORM_SLOTS)).collect();
    let diff: Vec<Vec<u8>> = zero.iter().zip(&uniform).map(|(a, b)| xor(a, b)).collect();
    // Delta = s (Z ^ U): M^0 gets Z ^ Delta (Z where s = 0), M^1 gets U ^ Delta.
    let delta = links.vs_short(net, rng, s_bits, &diff, 6 * SEED)?;
    let m0: Vec<Vec<u8>> = zero.iter().zip(&delta).map(|(a, b)| xor(a, b)).collect();
    let m1: Vec<Vec<u8>> = uniform.iter().zip(&delta).map(|(a, b)| xor(a, b)).collect();
    // Open party i's two slots of both strings to party i alone.
    let pair_of = |v: &[u8], i: usize| v[2 * i * SEED..(2 * i + 2) * SEED].to_vec();
    for peer in parties.peers() {
        let mut msg = Vec::with_capacity(lanes * 4 * SEED);
        for l in 0..lanes {
            msg.extend(pair_of(&m0[l], peer));
            msg.extend(pair_of(&m1[l], peer));
        }
        net.send(peer, msg)?;
    }
    let me = parties.me;
    let mut mine0: Vec<[u8; 2 * SEED]> = m0
        .iter()
        .map(|v| pair_of(v, me).try_into().expect("two seeds"))
        .collect();
    let mut mine1: Vec<[u8; 2 * SEED]> = m1
        .iter()
        .map(|v| pair_of(v, me).try_into().expect("two seeds"))
        .collect();
    for peer in parties.peers() {
        let got = net.recv(peer)?;
        if got.len() != lanes * 4 * SEED {
            return Err(NetError::Protocol {
                peer,
                detail: format!(
                    "seed shares of {} bytes, expected {}",
                    got.len(),
                    lanes * 4 * SEED
                ),
            }
            .into());
        }
        for l in 0..lanes {
            let at = l * 4 * SEED;
            for k in 0..2 * SEED {
                mine0[l][k] ^= got[at + k];
                mine1[l][k] ^= got[at + 2 * SEED + k];
            }
        }
    }
    Ok((mine0, mine1))
}

fn bit(words: &[u64], i: usize) -> bool {
    words[i / 64] >> (i % 64) & 1 == 1
}

/// Lane `lane` of `rows` rows of `w` words, as a packed little-endian bit string.
fn column(v: &[u64], rows: usize, w: usize, lane: usize) -> Vec<u8> {
    let mut out = vec![0u8; rows.div_ceil(8)];
    for row in 0..rows {
        if bit(&v[row * w..(row + 1) * w], lane) {
            out[row / 8] |= 1 << (row % 8);
        }
    }
    out
}

/// The inverse of [`column`] for all lanes at once: `rows` rows of `w` words.
fn from_columns(columns: &[Vec<u8>], rows: usize, w: usize) -> Vec<u64> {
    let mut out = vec![0u64; rows * w];
    for (lane, col) in columns.iter().enumerate() {
        for row in 0..rows {
            if col[row / 8] >> (row % 8) & 1 == 1 {
                out[row * w + lane / 64] |= 1 << (lane % 64);
            }
        }
    }
    out
}

fn expand(seed: &[u8], bits: usize) -> Vec<u8> {
    let mut out = vec![0u8; bits.div_ceil(8)];
    prg_expand(
        u128::from_le_bytes(seed.try_into().expect("a 16-byte seed")),
        &mut out,
    );
    clear_tail(&mut out, bits);
    out
}

fn random_bytes(rng: &mut LocalRng, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    rng.fill_bytes(&mut v);
    v
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(a, b)| a ^ b).collect()
}
