//! The `beaver` protocol family: Masked Triples (paper 004, Heath, Kolesnikov and Peceny,
//! "Masked Triples: Amortizing Multiplication Triples Across Conditionals").
//!
//! p parties hold XOR sharings of bits; semi-honest security against p - 1 corruptions. AND
//! gates consume Beaver triples made in a preprocessing phase; at every secret conditional the
//! parties reuse ONE set of triples for all branches, masked so that only the active branch's
//! triples stay valid, so the triples consumed are the AND gates on the longest execution path,
//! not the sum over the branches.
//!
//! One concept per module, each named as the paper names it:
//! - [`circuit`]: `Netlist | Cond | Seq` (Sect. 5.1), the form the compiler hands over;
//! - [`cost`]: the bytes each phase sends, predicted exactly from the circuit's shape;
//! - [`schedule`]: Fig. 4's `eval` unrolled into rounds, triple ranges and mask chains;
//! - [`material`]: one party's triples and masks for one execution;
//! - [`online`]: Pi_MT's online phase (Fig. 4 with Pi_Base of Sect. 2.5);
//! - [`links`]: OT links between every pair, triple cross terms and VS gates (Fig. 6);
//! - [`preprocess`]: the preprocessing phase and the online phase's check of the batch;
//! - [`triple_gen`]: TripleGen (Fig. 2) by oblivious transfer, p(p - 1) OTs per triple;
//! - [`mask_gen`]: MaskGen (Fig. 3): Pi-MaskGen-VS (Fig. 5) with Pi-Half-VS-Long (Fig. 6) for
//!   any p, Pi-MaskGen-2P (Fig. 7) and the three-party seed protocol (Sect. 6.2);
//! - [`store`]: the preprocessing store, bound to a circuit, consumed once;
//! - [`party`]: one party's process: the preprocessing phase and the online phase over TLS.

pub mod circuit;
pub mod cost;
pub mod links;
pub mod mask_gen;
pub mod material;
pub mod online;
pub mod party;
pub mod preprocess;
pub mod schedule;
pub mod store;
pub mod triple_gen;

#[cfg(test)]
mod tests;

use crate::net::NetError;

/// The parties of a run: transport indices `0..count`, this one `me`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parties {
    pub me: usize,
    pub count: usize,
}

impl Parties {
    pub fn new(me: usize, count: usize) -> Parties {
        assert!(count >= 2 && me < count, "party {me} of {count}");
        Parties { me, count }
    }

    /// Every other party, in index order.
    pub fn peers(self) -> impl Iterator<Item = usize> {
        (0..self.count).filter(move |&p| p != self.me)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum BeaverError {
    #[error(transparent)]
    Net(#[from] NetError),
    /// The preprocessing material does not fit the run (checked before anything is opened).
    #[error("preprocessing material: {0}")]
    Material(String),
    #[error(transparent)]
    Store(#[from] store::StoreError),
    #[error("cannot draw randomness from the operating system: {0}")]
    Entropy(String),
}

/// A party's private randomness: AES-128 in counter mode under a key from the operating system.
/// Never shared, never logged.
pub struct LocalRng(crate::rand::aes_ctr::AesCtr);

impl LocalRng {
    pub fn new() -> Result<LocalRng, BeaverError> {
        let mut key = [0u8; 16];
        getrandom::fill(&mut key).map_err(|e| BeaverError::Entropy(e.to_string()))?;
        Ok(LocalRng(crate::rand::aes_ctr::AesCtr::new(&key)))
    }

    /// From a fixed key: tests only.
    #[cfg(test)]
    pub fn from_key(key: [u8; 16]) -> LocalRng {
        LocalRng(crate::rand::aes_ctr::AesCtr::new(&key))
    }

    pub fn fill_bytes(&mut self, out: &mut [u8]) {
        self.0.fill(out);
    }

    pub fn words(&mut self, n: usize) -> Vec<u64> {
        let mut bytes = vec![0u8; n * 8];
        self.0.fill(&mut bytes);
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }

    pub fn block(&mut self) -> u128 {
        let mut b = [0u8; 16];
        self.0.fill(&mut b);
        u128::from_le_bytes(b)
    }
}

impl std::fmt::Debug for LocalRng {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LocalRng")
    }
}
