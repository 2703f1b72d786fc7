//! Secure truncation by a truncation pair (paper 002, Section 3.2, after its reference [37]).
//!
//! The dealer draws `r` in Z_2^l and shares both `r` and `Shift(r, rho)` (`r >> rho`, a logical
//! shift of the l-bit word). To truncate `[x]`, the servers open `x + r` and `S_b` takes
//! `b * Shift(x + r, rho) - [Shift(r, rho)]_b`. The result is `Shift(x, rho)` or one more when
//! `x + r` does not wrap mod 2^l (the borrow of the dropped low bits), and is off by
//! `2^(l - rho)` when it does, which happens with probability `x / 2^l` for the uniform `r`:
//! the caller's range analysis keeps `x` far below `2^l`. (The paper writes `Shift(x + r) -
//! [Shift(r)]_b` for both servers; the public term belongs to one server only, as here.)

/// One server's share of a truncation pair `(r, Shift(r, rho))`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TruncPair {
    pub r: u64,
    pub shifted: u64,
}

/// The dealer's pair for `rho` from the uniform words `r` and the share randomness.
pub fn trunc_pair(rho: u32, r: u64, share_random: [u64; 2]) -> [TruncPair; 2] {
    let shifted = shift(r, rho);
    [
        TruncPair {
            r: share_random[0],
            shifted: share_random[1],
        },
        TruncPair {
            r: r.wrapping_sub(share_random[0]),
            shifted: shifted.wrapping_sub(share_random[1]),
        },
    ]
}

/// `Shift(v, rho)` of an l = 64-bit word.
pub fn shift(v: u64, rho: u32) -> u64 {
    if rho >= 64 {
        0
    } else {
        v >> rho
    }
}

/// Server `b`'s share of the mask to add before opening: `[x]_b + [r]_b`.
pub fn masked_share(x_share: u64, pair: &TruncPair) -> u64 {
    x_share.wrapping_add(pair.r)
}

/// Server `b`'s share of `Shift(x, rho)` from the opened `x + r`.
pub fn truncate(b: usize, opened: u64, rho: u32, pair: &TruncPair) -> u64 {
    (b as u64)
        .wrapping_mul(shift(opened, rho))
        .wrapping_sub(pair.shifted)
}
