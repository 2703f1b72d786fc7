//! Pseudo-random secret sharing (PRSS) from pairwise PRF seeds, as in ABY3.
//!
//! Party i draws a fresh seed s_i and gives it to party i+1, so seed s_i is known to exactly
//! parties i and i+1. Each party keeps two PRF streams F(s_i) and F(s_{i-1}) (AES-128 in counter
//! mode, one running counter per seed). Because the parties call the PRSS in the same order with
//! the same sizes, both holders of a seed draw the same values, and
//! - α_i = F(s_i) − F(s_{i−1}) are additive shares of zero (the sum telescopes), used to
//!   re-randomise products before they are resent;
//! - (F(s_i), F(s_{i−1})) is a replicated share of a random value nobody knows.

use super::aes_ctr::AesCtr;

use crate::net::{NetError, Transport};
use crate::ring::RingElem;
use crate::share::{BitShares, Rep3Vec};

type Stream = AesCtr;

/// Bytes of a PRF seed (an AES-128 key).
pub const SEED_BYTES: usize = 16;

/// One party's two PRF streams. Seeds are secrets: there is deliberately no way to read them
/// back, and `Debug` prints only the party index.
pub struct Prss {
    party: usize,
    /// F(s_i): shared with the next party.
    own: Stream,
    /// F(s_{i-1}): shared with the previous party.
    prev: Stream,
    /// The AES round keys of s_i and s_{i-1}, for the party's GPU to draw the same streams
    /// ([`Prss::device_streams`]).
    round_keys: [[u32; 44]; 2],
}

/// Where a PRSS stream stands, for a device that draws the next bytes itself: its AES-128
/// round keys ([`super::aes_tables::expand_key`]) and the byte position of the next draw.
/// Holds key material: never logged, dropped with the draw it serves.
pub struct DeviceStream {
    pub round_keys: [u32; 44],
    pub position: u128,
}

impl std::fmt::Debug for DeviceStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceStream")
            .field("position", &self.position)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Prss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prss")
            .field("party", &self.party)
            .finish_non_exhaustive()
    }
}

impl Prss {
    /// Draws this party's seed from the operating system, sends it to the next party and
    /// receives the previous party's seed. One round, one 16-byte message per party.
    pub fn setup(net: &mut dyn Transport) -> Result<Prss, NetError> {
        let party = net.party();
        let mut own = [0u8; SEED_BYTES];
        getrandom::fill(&mut own).map_err(|e| NetError::Io {
            peer: party,
            detail: format!("cannot draw a PRF seed from the operating system: {e}"),
        })?;
        net.send(net.next(), own.to_vec())?;
        let from = net.prev();
        let got = net.recv(from)?;
        let prev: [u8; SEED_BYTES] = got.as_slice().try_into().map_err(|_| NetError::Protocol {
            peer: from,
            detail: format!("PRF seed of {} bytes, expected {SEED_BYTES}", got.len()),
        })?;
        Ok(Prss::from_seeds(party, own, prev))
    }

    /// From known seeds (tests, or seeds agreed by other means): `own` is s_i, `prev` is s_{i-1}.
    pub fn from_seeds(party: usize, own: [u8; SEED_BYTES], prev: [u8; SEED_BYTES]) -> Prss {
        // Counter mode from block 0; every seed is fresh, so no nonce is needed.
        Prss {
            party,
            own: Stream::new(&own),
            prev: Stream::new(&prev),
            round_keys: [
                super::aes_tables::expand_key(&own),
                super::aes_tables::expand_key(&prev),
            ],
        }
    }

    /// The two streams, F(s_i) then F(s_{i-1}), as a GPU needs them to draw the next bytes of
    /// each (the counter-mode keystream of `irisc_gpu_aes_ctr`). Both stand at the same
    /// position: every draw takes the same bytes from both.
    pub fn device_streams(&self) -> [DeviceStream; 2] {
        [
            DeviceStream {
                round_keys: self.round_keys[0],
                position: self.own.position(),
            },
            DeviceStream {
                round_keys: self.round_keys[1],
                position: self.prev.position(),
            },
        ]
    }

    /// Skips the next `bytes` bytes of both streams: the draw a device made from
    /// [`Prss::device_streams`], so that the next draw here continues after it.
    pub fn skip(&mut self, bytes: u64) {
        let to = self.own.position() + u128::from(bytes);
        self.own.seek(to);
        let to = self.prev.position() + u128::from(bytes);
        self.prev.seek(to);
    }

    /// Skips the next `bytes` bytes of the stream shared with the next party (`own`) or with
    /// the previous one: a device's draw of that stream alone ([`Prss::with_next`] /
    /// [`Prss::with_prev`] made on a device).
    pub fn skip_one(&mut self, own: bool, bytes: u64) {
        let stream = if own { &mut self.own } else { &mut self.prev };
        let to = stream.position() + u128::from(bytes);
        stream.seek(to);
    }

    pub fn party(&self) -> usize {
        self.party
    }

    /// Additive shares of zero: α_i = F(s_i) − F(s_{i−1}).
    pub fn zero_shares<T: RingElem>(&mut self, n: usize) -> Vec<T> {
        let a: Vec<T> = draw(&mut self.own, n);
        let b: Vec<T> = draw(&mut self.prev, n);
        a.into_iter()
            .zip(b)
            .map(|(x, y)| x.wrapping_sub(y))
            .collect()
    }

    /// XOR shares of zero, `words` u64 words: F(s_i) ⊕ F(s_{i−1}).
    pub fn zero_bits(&mut self, words: usize) -> Vec<u64> {
        let mut a: Vec<u64> = draw(&mut self.own, words);
        let b: Vec<u64> = draw(&mut self.prev, words);
        for (x, y) in a.iter_mut().zip(b) {
            *x ^= y;
        }
        a
    }

    /// The next `n` elements of the stream this party shares with the next party (the seed it
    /// drew): the same elements as that party's [`Prss::with_prev`].
    pub fn with_next<T: RingElem>(&mut self, n: usize) -> Vec<T> {
        draw(&mut self.own, n)
    }

    /// The next `n` elements of the stream this party shares with the previous party.
    pub fn with_prev<T: RingElem>(&mut self, n: usize) -> Vec<T> {
        draw(&mut self.prev, n)
    }

    /// Replicated shares of n random ring elements (full storage width; reduce to k if needed).
    pub fn random_rep3<T: RingElem>(&mut self, n: usize) -> Rep3Vec<T> {
        Rep3Vec {
            own: draw(&mut self.own, n),
            prev: draw(&mut self.prev, n),
        }
    }

    /// Replicated binary shares of `len` random bits.
    pub fn random_bits(&mut self, len: usize) -> BitShares {
        let w = crate::share::binary::words_for(len);
        BitShares::from_words(draw(&mut self.own, w), draw(&mut self.prev, w), len)
    }
}

/// The next `n` elements of a PRF stream, read as little-endian words so that parties on
/// machines of different byte order still agree.
fn draw<T: RingElem>(stream: &mut Stream, n: usize) -> Vec<T> {
    let mut out = vec![T::ZERO; n];
    stream.fill(bytemuck::cast_slice_mut::<T, u8>(&mut out));
    if cfg!(target_endian = "big") {
        let size = std::mem::size_of::<T>();
        for x in out.iter_mut() {
            let mut w = [0u8; 8];
            w[..size].copy_from_slice(bytemuck::bytes_of(x));
            *x = T::from_u64(u64::from_le_bytes(w));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::memory::run_three;
    use crate::share::binary::reconstruct_bits;
    use crate::share::rep3::{consistent, reconstruct};

    fn fixed() -> [Prss; 3] {
        let s = [[1u8; 16], [2u8; 16], [3u8; 16]];
        std::array::from_fn(|i| Prss::from_seeds(i, s[i], s[(i + 2) % 3]))
    }

    #[test]
    fn zero_shares_sum_to_zero_for_every_width() {
        let mut p = fixed();
        for n in [0usize, 1, 7, 100] {
            let z: Vec<Vec<u16>> = p.iter_mut().map(|x| x.zero_shares(n)).collect();
            assert!((0..n).all(|j| z[0][j].wrapping_add(z[1][j]).wrapping_add(z[2][j]) == 0));
            let z: Vec<Vec<u64>> = p.iter_mut().map(|x| x.zero_shares(n)).collect();
            assert!((0..n).all(|j| z[0][j].wrapping_add(z[1][j]).wrapping_add(z[2][j]) == 0));
            assert!(
                n < 4 || z[0].iter().any(|&v| v != 0),
                "zero shares must be random, not zero"
            );
            let b: Vec<Vec<u64>> = p.iter_mut().map(|x| x.zero_bits(n)).collect();
            assert!((0..n).all(|j| b[0][j] ^ b[1][j] ^ b[2][j] == 0));
        }
    }

    #[test]
    fn random_shares_are_consistent_and_fresh() {
        let mut p = fixed();
        let r: [Rep3Vec<u32>; 3] = std::array::from_fn(|i| p[i].random_rep3(50));
        assert!(consistent(&r, 32));
        let r2: [Rep3Vec<u32>; 3] = std::array::from_fn(|i| p[i].random_rep3(50));
        assert_ne!(reconstruct(&r, 32), reconstruct(&r2, 32));
        let b: [BitShares; 3] = std::array::from_fn(|i| p[i].random_bits(70));
        assert!(reconstruct_bits(&b).is_some());
    }

    #[test]
    fn setup_over_transport_agrees_and_debug_hides_seeds() {
        let out = run_three(|mut t| {
            let mut p = Prss::setup(&mut t).unwrap();
            let dbg = format!("{p:?}");
            (
                p.zero_shares::<u64>(16),
                p.random_rep3::<u64>(4),
                dbg,
                t.messages_sent(),
            )
        });
        for j in 0..16 {
            assert_eq!(
                out[0].0[j]
                    .wrapping_add(out[1].0[j])
                    .wrapping_add(out[2].0[j]),
                0
            );
        }
        let r = [out[0].1.clone(), out[1].1.clone(), out[2].1.clone()];
        assert!(consistent(&r, 64));
        assert_eq!(out[0].2, "Prss { party: 0, .. }");
        assert!(out.iter().all(|o| o.3 == 1));
    }

    /// A device's draw from the streams' keys and positions, then `skip`, leaves the CPU
    /// streams exactly where drawing would have.
    #[test]
    fn device_streams_and_skip_keep_the_parties_in_step() {
        use crate::rand::aes_tables::encrypt_block;
        let mut a = fixed();
        let mut b = fixed();
        for p in 0..3 {
            let _ = a[p].zero_shares::<u16>(5);
            let _ = b[p].zero_shares::<u16>(5);
            let streams = a[p].device_streams();
            assert_eq!(streams[0].position, 10);
            assert_eq!(streams[1].position, 10);
            // What the device would draw: 24 zero words, from the keystream blocks.
            let block = |s: &DeviceStream, i: u128| encrypt_block(&s.round_keys, &i.to_le_bytes());
            let ks: Vec<Vec<u8>> = streams
                .iter()
                .map(|s| (0..14u128).flat_map(|i| block(s, i)).collect())
                .collect();
            let want = b[p].zero_bits(24);
            for (e, w) in want.iter().enumerate() {
                let at = 10 + 8 * e;
                let word = |k: &[u8]| u64::from_le_bytes(k[at..at + 8].try_into().unwrap());
                assert_eq!(word(&ks[0]) ^ word(&ks[1]), *w);
            }
            a[p].skip(24 * 8);
            assert_eq!(a[p].zero_shares::<u32>(9), b[p].zero_shares::<u32>(9));
        }
        assert!(!format!("{:?}", a[0].device_streams()[0]).contains("round_keys"));
    }

    #[test]
    fn setup_rejects_a_short_seed() {
        let out = run_three(|mut t| {
            if t.party() == 0 {
                let to = t.next();
                t.send(to, vec![0u8; 3]).unwrap();
                // Drain party 2's seed so that the test only fails at party 1.
                let from = t.prev();
                t.recv(from).map(|_| ()).map_err(|e| e.to_string())
            } else {
                Prss::setup(&mut t).map(|_| ()).map_err(|e| e.to_string())
            }
        });
        assert!(out[1].as_ref().unwrap_err().contains("malformed"));
    }
}
