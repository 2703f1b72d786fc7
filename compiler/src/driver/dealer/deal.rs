//! Dealer-side sharing of one input of any kind with any sharing, into the three parties' share
//! files (format version 2, `irisc_runtime::io::share_file`).
//!
//! - rep3: every value x (two's complement for negatives) is split x = x0 + x1 + x2 mod 2^k with
//!   x0, x1 uniform; party i holds (x_i, x_{i-1}).
//! - fp: degree-1 Shamir over F_p, p = 65519 (negatives as p - |x|); party i holds f(i + 1)
//!   (`share::fp::shamir_share`).
//! - gr2 / gr4: degree-1 Shamir over GR(2^16, d): each section of a record (codes, then secret
//!   masks) is packed d values per ring element, plainly for queries and reversed for galleries
//!   (`share::galois::share_codes`), as the Shamir dot product requires.

use anyhow::{anyhow, bail, Result};
use irisc_runtime::io::share_file::{ring_mask, RingVec, ShareFile, ShareFileHeader};
use irisc_runtime::share::{fp, galois};
use irisc_runtime::vocab::{InputKind, InputMask, InputRole, Sharing};
use rand::CryptoRng;

/// The plaintext of one input, ready to share.
#[derive(Debug, Clone, PartialEq)]
pub struct Plain {
    pub role: InputRole,
    pub payload: InputKind,
    pub mask: InputMask,
    /// Values per section (code bits, dimension, 1).
    pub elements: u32,
    pub scale_bits: u8,
    pub ids: Vec<u64>,
    /// Public masks (iris with public masks): `elements / 8` bytes per record.
    pub masks: Vec<u8>,
    /// Each iris record's values end with its code's conjugate (a query for `mirror(q)` under a
    /// Galois-ring sharing: [`irisc_runtime::contract::InputPart::Conjugate`]).
    pub conjugate: bool,
    /// `count x sections x elements` values, record after record.
    pub values: Vec<i64>,
}

impl Plain {
    pub fn count(&self) -> usize {
        self.ids.len()
    }

    fn header(
        &self,
        party: u8,
        sharing: Sharing,
        ring_bits: u32,
        set_id: [u8; 16],
    ) -> ShareFileHeader {
        let mut h = ShareFileHeader::new(
            self.role,
            party,
            self.mask,
            ring_bits,
            self.elements,
            self.count() as u64,
            set_id,
        );
        h.sharing = sharing;
        h.payload = self.payload;
        h.scale_bits = self.scale_bits;
        h.conjugate = self.conjugate;
        h
    }
}

/// The three parties' files of `plain` shared with `sharing` over Z_2^`ring_bits` (rep3; 16 for
/// the Shamir sharings). Checks the header combination before any randomness is drawn.
pub fn deal(
    plain: &Plain,
    sharing: Sharing,
    ring_bits: u32,
    rng: &mut impl CryptoRng,
) -> Result<[ShareFile; 3]> {
    let mut set_id = [0u8; 16];
    rng.fill_bytes(&mut set_id);
    deal_into_set(plain, sharing, ring_bits, set_id, rng)
}

/// [`deal`] for one part of a larger sharing run: the files carry `set_id`, the run's, so that
/// a gallery dealt in batches (to bound memory) forms one set.
pub fn deal_into_set(
    plain: &Plain,
    sharing: Sharing,
    ring_bits: u32,
    set_id: [u8; 16],
    rng: &mut impl CryptoRng,
) -> Result<[ShareFile; 3]> {
    let h0 = plain.header(0, sharing, ring_bits, set_id);
    h0.layout().map_err(|e| anyhow!("cannot share: {e}"))?;
    let sections = h0.sections() as usize;
    let n = plain.count() * sections * plain.elements as usize;
    if plain.values.len() != n {
        bail!(
            "{} values for {} records of {} elements",
            plain.values.len(),
            plain.count(),
            plain.elements
        );
    }
    if plain.payload == InputKind::Iris
        && plain.mask == InputMask::Secret
        && ring_bits < 2
        && sharing == Sharing::Rep3
    {
        bail!("cannot share iris codes over Z_2^{ring_bits}: T = -1 and F = 1 would be the same element");
    }
    let own: [RingVec; 3] = match sharing {
        Sharing::Rep3 => {
            let m = ring_mask(ring_bits)
                .ok_or_else(|| anyhow!("ring Z_2^{ring_bits} is not supported"))?;
            let mut x: [Vec<u64>; 3] = Default::default();
            for c in &mut x {
                c.reserve(n);
            }
            for &v in &plain.values {
                let (a, b) = (rng.next_u64() & m, rng.next_u64() & m);
                x[0].push(a);
                x[1].push(b);
                x[2].push((v as u64).wrapping_sub(a).wrapping_sub(b) & m);
            }
            x.map(|c| RingVec::from_u64s(ring_bits, c).unwrap_or(RingVec::U64(Vec::new())))
        }
        Sharing::Fp => {
            let p = i64::from(fp::P);
            let vals: Vec<u16> = plain
                .values
                .iter()
                .map(|&v| v.rem_euclid(p) as u16)
                .collect();
            fp::shamir_share(&vals, rng).map(RingVec::U16)
        }
        Sharing::Gr2 | Sharing::Gr4 => {
            let vals: Vec<u16> = plain.values.iter().map(|&v| v as u16).collect();
            let packing = match plain.role {
                InputRole::Query => galois::Packing::Plain,
                InputRole::Gallery => galois::Packing::Reversed,
            };
            let (codes, len) = (plain.count() * sections, plain.elements as usize);
            if sharing == Sharing::Gr2 {
                galois::share_codes::<2>(&vals, codes, len, packing, rng)
                    .map(|v| RingVec::U16(v.coefs))
            } else {
                galois::share_codes::<4>(&vals, codes, len, packing, rng)
                    .map(|v| RingVec::U16(v.coefs))
            }
        }
    };
    let files = [0usize, 1, 2].map(|p| ShareFile {
        header: plain.header(p as u8, sharing, ring_bits, set_id),
        ids: plain.ids.clone(),
        masks: plain.masks.clone(),
        own: own[p].clone(),
        prev: if sharing.is_shamir() {
            RingVec::U16(Vec::new())
        } else {
            own[(p + 2) % 3].clone()
        },
    });
    Ok(files)
}

/// Recombines the three files of one run into the shared values (dealer-side tests and
/// debugging only: no party ever holds all three files). rep3 values come back mod 2^k, F_p
/// values mod p, GR values unpacked mod 2^16.
pub fn open(files: &[ShareFile; 3]) -> Result<Vec<u64>> {
    let h = &files[0].header;
    if files.iter().any(|f| f.header.set_id != h.set_id) {
        bail!("the files come from different sharing runs (set ids differ)");
    }
    let words = |f: &ShareFile| -> Vec<u16> { f.own.iter_u64().map(|x| x as u16).collect() };
    Ok(match h.sharing {
        Sharing::Rep3 => {
            for i in 0..3 {
                if files[i].prev != files[(i + 2) % 3].own {
                    bail!("party {i}'s copy of x_{} disagrees", (i + 2) % 3);
                }
            }
            let m = ring_mask(h.ring_bits).unwrap_or(u64::MAX);
            let [a, b, c] = [0, 1, 2].map(|i| files[i].own.iter_u64().collect::<Vec<_>>());
            (0..a.len())
                .map(|i| a[i].wrapping_add(b[i]).wrapping_add(c[i]) & m)
                .collect()
        }
        Sharing::Fp => fp::shamir_reconstruct((0, &words(&files[0])), (2, &words(&files[2])))
            .into_iter()
            .map(u64::from)
            .collect(),
        Sharing::Gr2 | Sharing::Gr4 => {
            let packing = match h.role {
                InputRole::Query => galois::Packing::Plain,
                InputRole::Gallery => galois::Packing::Reversed,
            };
            let per = h.words_per_section() as usize;
            let len = h.elements as usize;
            let (w0, w1) = (words(&files[0]), words(&files[1]));
            let mut out = Vec::new();
            for (s0, s1) in w0.chunks(per.max(1)).zip(w1.chunks(per.max(1))) {
                let vals = if h.sharing == Sharing::Gr2 {
                    let (a, b) = (
                        galois::ShamirVec::<2> { coefs: s0.to_vec() },
                        galois::ShamirVec::<2> { coefs: s1.to_vec() },
                    );
                    galois::unpack(&galois::reconstruct((0, &a), (1, &b)), len, packing)
                } else {
                    let (a, b) = (
                        galois::ShamirVec::<4> { coefs: s0.to_vec() },
                        galois::ShamirVec::<4> { coefs: s1.to_vec() },
                    );
                    galois::unpack(&galois::reconstruct((0, &a), (1, &b)), len, packing)
                };
                out.extend(vals.into_iter().map(u64::from));
            }
            out
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    fn plain(
        role: InputRole,
        payload: InputKind,
        mask: InputMask,
        elements: u32,
        values: Vec<i64>,
    ) -> Plain {
        let sections = if mask == InputMask::Secret { 2 } else { 1 };
        let count = values.len() / (sections * elements as usize);
        Plain {
            role,
            payload,
            mask,
            elements,
            scale_bits: if payload == InputKind::Embedding {
                8
            } else {
                0
            },
            ids: (0..count as u64).map(|i| i * 1000).collect(),
            masks: if mask == InputMask::Public {
                vec![0xFF; count * elements as usize / 8]
            } else {
                vec![]
            },
            conjugate: false,
            values,
        }
    }

    #[test]
    fn every_sharing_reconstructs() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let emb: Vec<i64> = (0..10).map(|i| i * 37 - 150).collect(); // 2 records of dimension 5
        let iris: Vec<i64> = (0..256)
            .map(|i| [1, -1, 0][i % 3])
            .chain((0..256).map(|i| (i % 3 != 2) as i64))
            .collect();
        let iris: Vec<i64> = iris[..128]
            .iter()
            .chain(&iris[256..384])
            .chain(&iris[128..256])
            .chain(&iris[384..])
            .copied()
            .collect();
        for role in [InputRole::Gallery, InputRole::Query] {
            for (sharing, k) in [
                (Sharing::Rep3, 24),
                (Sharing::Fp, 16),
                (Sharing::Gr2, 16),
                (Sharing::Gr4, 16),
            ] {
                let e = plain(role, InputKind::Embedding, InputMask::None, 5, emb.clone());
                let files = deal(&e, sharing, k, &mut rng).unwrap();
                let want: Vec<u64> = emb
                    .iter()
                    .map(|&v| match sharing {
                        Sharing::Rep3 => (v as u64) & 0xFF_FFFF,
                        Sharing::Fp => v.rem_euclid(65519) as u64,
                        _ => (v as u64) & 0xFFFF,
                    })
                    .collect();
                assert_eq!(open(&files).unwrap(), want, "{sharing} {role}");
                assert_eq!(files[1].header.sharing, sharing);
                assert_eq!(files[2].header.party, 2);
                let i = plain(role, InputKind::Iris, InputMask::Secret, 128, iris.clone());
                let files = deal(&i, sharing, k, &mut rng).unwrap();
                let got = open(&files).unwrap();
                let m = if sharing == Sharing::Rep3 {
                    0xFF_FFFF
                } else {
                    0xFFFF
                };
                let want: Vec<u64> = iris
                    .iter()
                    .map(|&v| {
                        if sharing == Sharing::Fp {
                            v.rem_euclid(65519) as u64
                        } else {
                            (v as u64) & m
                        }
                    })
                    .collect();
                assert_eq!(got, want, "iris {sharing} {role}");
            }
        }
        let b = plain(
            InputRole::Query,
            InputKind::Bit,
            InputMask::None,
            1,
            vec![1, 0, 1],
        );
        let files = deal(&b, Sharing::Rep3, 1, &mut rng).unwrap();
        assert_eq!(open(&files).unwrap(), vec![1, 0, 1]);
        let e = deal(&b, Sharing::Fp, 16, &mut rng).unwrap_err().to_string();
        assert!(e.contains("bits are always rep3"), "{e}");
    }
}
