//! Optimised additive secret sharing with function-dependent preprocessing (paper 002,
//! Section 3.1, after its reference [7]) over Z_2^64, between the two servers `S_0`, `S_1`.
//!
//! `<x>_b = (delta_x, [r_x]_b)` with `delta_x = x + r_x` public to both servers and `r_x` a mask
//! the dealer chose and shared additively: `x = delta_x - [r_x]_0 - [r_x]_1`.
//!
//! - **Addition** is local: `<x + y>_b = (delta_x + delta_y, [r_x]_b + [r_y]_b)`.
//! - **SS.MUL** (Eq. 4) is local given the dealer's `[r_x r_y]`: an additive share
//!   `[xy]_b = b delta_x delta_y - delta_x [r_y]_b - delta_y [r_x]_b + [r_x r_y]_b`. (The paper's
//!   Eq. 4 prints `delta_x [r_x]_b`; the identity needs `delta_x [r_y]_b`, as here.) Opening
//!   `[xy + r_z]` brings the product back to the optimised form with the output mask `r_z`.
//! - **SS.IP** is SS.MUL summed over a vector, with `[u] = [sum_i r_x,i r_y,i]` from the dealer.

/// `SS.Share(x)`: two additive shares of `x` from one uniform word.
pub fn ss_share(x: u64, random: u64) -> [u64; 2] {
    [random, x.wrapping_sub(random)]
}

/// `SS.MUL(<x>, <y>, [r_x r_y])` for server `b`: its additive share of `x * y`.
pub fn ss_mul(b: usize, x: (u64, u64), y: (u64, u64), rxry: u64) -> u64 {
    let (dx, rx) = x;
    let (dy, ry) = y;
    (b as u64)
        .wrapping_mul(dx.wrapping_mul(dy))
        .wrapping_sub(dx.wrapping_mul(ry))
        .wrapping_sub(dy.wrapping_mul(rx))
        .wrapping_add(rxry)
}

/// `SS.IP(<x>, <y>, [u])` for server `b`: its additive share of `sum_i x_i y_i`, where
/// `(dx, rx)` and `(dy, ry)` are the public masked vectors and this server's mask shares and
/// `u` its share of `sum_i r_x,i r_y,i`.
pub fn ss_ip(b: usize, dx: &[u64], rx: &[u64], dy: &[u64], ry: &[u64], u: u64) -> u64 {
    debug_assert!(dx.len() == rx.len() && dx.len() == dy.len() && dx.len() == ry.len());
    let mut acc = 0u64;
    let mut public = 0u64;
    for i in 0..dx.len() {
        public = public.wrapping_add(dx[i].wrapping_mul(dy[i]));
        acc = acc
            .wrapping_add(dx[i].wrapping_mul(ry[i]))
            .wrapping_add(dy[i].wrapping_mul(rx[i]));
    }
    (b as u64)
        .wrapping_mul(public)
        .wrapping_sub(acc)
        .wrapping_add(u)
}

/// `SS.IP(<x>, <x>, [u])`: the square norm, where the cross terms are `2 delta_i [r_i]_b`.
pub fn ss_norm(b: usize, dx: &[u64], rx: &[u64], u: u64) -> u64 {
    ss_ip(b, dx, rx, dx, rx, u)
}

/// Bytes of an input-mask seed.
pub const MASK_SEED_BYTES: usize = 16;

/// A server's share of the client's input mask, `n` words of Z_2^64 expanded from its 16-byte
/// seed (AES-CTR): the server sends the client the seed, not the words, and the mask is the sum
/// of the two servers' expansions.
pub fn mask_words(seed: &[u8; MASK_SEED_BYTES], n: usize) -> Vec<u64> {
    let mut bytes = vec![0u8; 8 * n];
    crate::rand::aes_ctr::AesCtr::new(seed).fill(&mut bytes);
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
        .collect()
}

/// [`mask_words`] in Z_2^112 (the malicious variant's ring), 16 bytes a word.
pub fn mask_words_wide(seed: &[u8; MASK_SEED_BYTES], n: usize) -> Vec<u128> {
    let mut bytes = vec![0u8; 16 * n];
    crate::rand::aes_ctr::AesCtr::new(seed).fill(&mut bytes);
    bytes
        .chunks_exact(16)
        .map(|c| super::auth::reduce(u128::from_le_bytes(c.try_into().expect("16"))))
        .collect()
}
