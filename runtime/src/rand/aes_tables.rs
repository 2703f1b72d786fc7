//! AES-128 (FIPS-197) as tables and a key schedule, for the code that encrypts the PRSS counter
//! blocks where no AES instruction exists: the GPU kernels irisc generates
//! (`irisc_gpu_aes_ctr`, T-table rounds) and their host twins. The CPU streams
//! ([`super::aes_ctr`]) use AES-NI or the `aes` crate; these tables must give the same
//! keystream, which the tests check against that crate.
//!
//! Words are big-endian column words, as FIPS-197 writes them: column c of a block is
//! `in[4c] << 24 | in[4c+1] << 16 | in[4c+2] << 8 | in[4c+3]`.

/// The AES S-box, computed from its definition (multiplicative inverse in GF(2^8) modulo
/// x^8 + x^4 + x^3 + x + 1, then the affine map with constant 0x63).
pub const fn sbox() -> [u8; 256] {
    let mut s = [0u8; 256];
    let mut x = 0usize;
    while x < 256 {
        let inv = if x == 0 { 0 } else { gf_inverse(x as u8) };
        let mut b = inv;
        let mut out = inv ^ 0x63;
        let mut i = 0;
        while i < 4 {
            b = b.rotate_left(1);
            out ^= b;
            i += 1;
        }
        s[x] = out;
        x += 1;
    }
    s
}

/// Multiplication in GF(2^8) with the AES polynomial.
pub const fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= 0x1b;
        }
        b >>= 1;
    }
    p
}

const fn gf_inverse(a: u8) -> u8 {
    // a^254 = a^-1 in GF(2^8).
    let mut result = 1u8;
    let mut base = a;
    let mut e = 254u32;
    while e > 0 {
        if e & 1 != 0 {
            result = gf_mul(result, base);
        }
        base = gf_mul(base, base);
        e >>= 1;
    }
    result
}

/// The round tables: `te[0][x]` is the column `(2 S[x], S[x], S[x], 3 S[x])` (SubBytes and
/// MixColumns of one byte), `te[k]` the same rotated right by 8k bits.
pub const fn t_tables() -> [[u32; 256]; 4] {
    let s = sbox();
    let mut te = [[0u32; 256]; 4];
    let mut x = 0usize;
    while x < 256 {
        let v = s[x];
        let w =
            (gf_mul(v, 2) as u32) << 24 | (v as u32) << 16 | (v as u32) << 8 | gf_mul(v, 3) as u32;
        te[0][x] = w;
        te[1][x] = w.rotate_right(8);
        te[2][x] = w.rotate_right(16);
        te[3][x] = w.rotate_right(24);
        x += 1;
    }
    te
}

/// Round-key words of AES-128: 44 big-endian words `w[0..44]` (FIPS-197, Section 5.2).
pub fn expand_key(key: &[u8; 16]) -> [u32; 44] {
    const RCON: [u32; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];
    let s = sbox();
    let sub = |w: u32| -> u32 {
        let b = w.to_be_bytes();
        u32::from_be_bytes([
            s[b[0] as usize],
            s[b[1] as usize],
            s[b[2] as usize],
            s[b[3] as usize],
        ])
    };
    let mut w = [0u32; 44];
    for i in 0..4 {
        w[i] = u32::from_be_bytes([key[4 * i], key[4 * i + 1], key[4 * i + 2], key[4 * i + 3]]);
    }
    for i in 4..44 {
        let mut t = w[i - 1];
        if i % 4 == 0 {
            t = sub(t.rotate_left(8)) ^ (RCON[i / 4 - 1] << 24);
        }
        w[i] = w[i - 4] ^ t;
    }
    w
}

/// One block encrypted with the T-tables: the reference of the generated kernels' rounds.
pub fn encrypt_block(w: &[u32; 44], block: &[u8; 16]) -> [u8; 16] {
    let te = t_tables();
    let s = sbox();
    let mut st = [0u32; 4];
    for c in 0..4 {
        st[c] = u32::from_be_bytes([
            block[4 * c],
            block[4 * c + 1],
            block[4 * c + 2],
            block[4 * c + 3],
        ]) ^ w[c];
    }
    for r in 1..10 {
        let mut t = [0u32; 4];
        for c in 0..4 {
            t[c] = te[0][(st[c] >> 24) as usize]
                ^ te[1][((st[(c + 1) % 4] >> 16) & 0xff) as usize]
                ^ te[2][((st[(c + 2) % 4] >> 8) & 0xff) as usize]
                ^ te[3][(st[(c + 3) % 4] & 0xff) as usize]
                ^ w[4 * r + c];
        }
        st = t;
    }
    let mut out = [0u8; 16];
    for c in 0..4 {
        let v = (s[(st[c] >> 24) as usize] as u32) << 24
            | (s[((st[(c + 1) % 4] >> 16) & 0xff) as usize] as u32) << 16
            | (s[((st[(c + 2) % 4] >> 8) & 0xff) as usize] as u32) << 8
            | s[(st[(c + 3) % 4] & 0xff) as usize] as u32;
        out[4 * c..4 * c + 4].copy_from_slice(&(v ^ w[40 + c]).to_be_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use aes::cipher::{BlockEncrypt, KeyInit};

    #[test]
    fn fips_197_vectors() {
        // Appendix A.1: the last round-key word of key 2b7e1516 28aed2a6 abf71588 09cf4f3c.
        let key = [
            0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf,
            0x4f, 0x3c,
        ];
        let w = expand_key(&key);
        assert_eq!(w[4], 0xa0fafe17);
        assert_eq!(w[43], 0xb6630ca6);
        // Appendix C.1: AES-128 of 00112233...ff under 000102...0f.
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let pt: [u8; 16] = std::array::from_fn(|i| (i as u8) * 0x11);
        let ct = encrypt_block(&expand_key(&key), &pt);
        assert_eq!(
            ct,
            [
                0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4,
                0xc5, 0x5a
            ]
        );
        assert_eq!(sbox()[0x53], 0xed);
    }

    #[test]
    fn tables_agree_with_the_aes_crate_on_random_keys_and_blocks() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for _ in 0..200 {
            let mut key = [0u8; 16];
            let mut block = [0u8; 16];
            key[..8].copy_from_slice(&next().to_le_bytes());
            key[8..].copy_from_slice(&next().to_le_bytes());
            block[..8].copy_from_slice(&next().to_le_bytes());
            block[8..].copy_from_slice(&next().to_le_bytes());
            let cipher = aes::Aes128::new(&key.into());
            let mut want = block.into();
            cipher.encrypt_block(&mut want);
            assert_eq!(
                encrypt_block(&expand_key(&key), &block),
                <[u8; 16]>::from(want)
            );
        }
    }
}
