//! Arithmetic in Z_2^k for any 1 <= k <= 64, stored in the smallest of u16/u32/u64 that holds k bits.
//!
//! A value of Z_2^k lives in the low k bits of its storage word. Arithmetic wraps in the storage
//! width (which is a multiple of 2^k, so the low k bits are always right) and is reduced to k bits
//! with [`RingElem::mask_to`] wherever a value leaves a protocol (messages, outputs).

use std::fmt::Debug;

/// One storage word of a ring element. Implemented for u16, u32 and u64.
pub trait RingElem: bytemuck::Pod + Copy + Default + Eq + Debug + Send + Sync + 'static {
    /// Bits of the storage word.
    const BITS: u32;
    const ZERO: Self;
    const ONE: Self;

    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn wrapping_neg(self) -> Self;
    /// Truncates to the storage width.
    fn from_u64(v: u64) -> Self;
    fn to_u64(self) -> u64;

    /// Reduces to Z_2^k (keeps the low `k` bits).
    #[inline]
    fn mask_to(self, k: u32) -> Self {
        Self::from_u64(self.to_u64() & mask(k))
    }
}

macro_rules! ring_elem {
    ($t:ty) => {
        impl RingElem for $t {
            const BITS: u32 = <$t>::BITS;
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline]
            fn wrapping_add(self, other: Self) -> Self {
                <$t>::wrapping_add(self, other)
            }
            #[inline]
            fn wrapping_sub(self, other: Self) -> Self {
                <$t>::wrapping_sub(self, other)
            }
            #[inline]
            fn wrapping_mul(self, other: Self) -> Self {
                <$t>::wrapping_mul(self, other)
            }
            #[inline]
            fn wrapping_neg(self) -> Self {
                <$t>::wrapping_neg(self)
            }
            #[inline]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            #[inline]
            fn to_u64(self) -> u64 {
                self as u64
            }
        }
    };
}

ring_elem!(u16);
ring_elem!(u32);
ring_elem!(u64);

/// The storage word chosen for a ring Z_2^k.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Width {
    U16,
    U32,
    U64,
}

impl Width {
    pub fn bits(self) -> u32 {
        match self {
            Width::U16 => 16,
            Width::U32 => 32,
            Width::U64 => 64,
        }
    }
}

/// The smallest storage word for Z_2^k.
///
/// Panics unless `1 <= k <= 64`: k is fixed by the compiler and checked against the manifest
/// before any share is loaded, so another value here is a bug, not bad input.
pub fn storage_for(k: u32) -> Width {
    match k {
        1..=16 => Width::U16,
        17..=32 => Width::U32,
        33..=64 => Width::U64,
        _ => panic!("ring Z_2^{k} is not supported: k must be in 1..=64"),
    }
}

/// The bit mask 2^k - 1 (all ones for k >= 64).
#[inline]
pub fn mask(k: u32) -> u64 {
    if k >= 64 {
        u64::MAX
    } else {
        (1u64 << k) - 1
    }
}

/// Reduces every element of `v` to Z_2^k in place.
pub fn mask_slice<T: RingElem>(v: &mut [T], k: u32) {
    if k >= T::BITS {
        return;
    }
    let m = mask(k);
    for x in v.iter_mut() {
        // The round trip through u64 compiles to a single `and` in the storage width.
        *x = T::from_u64(x.to_u64() & m);
    }
}

/// Little-endian bytes of `v`, the wire format of ring elements.
pub fn to_le_bytes<T: RingElem>(v: &[T]) -> Vec<u8> {
    if cfg!(target_endian = "little") {
        bytemuck::cast_slice::<T, u8>(v).to_vec()
    } else {
        let size = std::mem::size_of::<T>();
        let mut out = Vec::with_capacity(std::mem::size_of_val(v));
        for x in v {
            out.extend_from_slice(&x.to_u64().to_le_bytes()[..size]);
        }
        out
    }
}

/// Parses exactly `n` little-endian elements; `None` if `bytes` has another length.
pub fn from_le_bytes<T: RingElem>(bytes: &[u8], n: usize) -> Option<Vec<T>> {
    let size = std::mem::size_of::<T>();
    if bytes.len() != n.checked_mul(size)? {
        return None;
    }
    if cfg!(target_endian = "little") {
        // Copy into a typed buffer, so the byte buffer's alignment does not matter.
        let mut out = vec![T::ZERO; n];
        bytemuck::cast_slice_mut::<T, u8>(&mut out).copy_from_slice(bytes);
        Some(out)
    } else {
        Some(
            bytes
                .chunks_exact(size)
                .map(|c| {
                    let mut w = [0u8; 8];
                    w[..size].copy_from_slice(c);
                    T::from_u64(u64::from_le_bytes(w))
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_thresholds() {
        assert_eq!(storage_for(1), Width::U16);
        assert_eq!(storage_for(16), Width::U16);
        assert_eq!(storage_for(17), Width::U32);
        assert_eq!(storage_for(32), Width::U32);
        assert_eq!(storage_for(33), Width::U64);
        assert_eq!(storage_for(64), Width::U64);
    }

    #[test]
    fn masks_and_wrapping() {
        assert_eq!(mask(1), 1);
        assert_eq!(mask(16), 0xffff);
        assert_eq!(mask(64), u64::MAX);
        assert_eq!(0xffffu16.wrapping_add(2).mask_to(3), 1);
        assert_eq!(RingElem::wrapping_neg(1u32).mask_to(5), 31);
        let mut v = vec![u64::MAX, 5];
        mask_slice(&mut v, 2);
        assert_eq!(v, vec![3, 1]);
    }

    #[test]
    fn le_round_trip_and_length_check() {
        let v: Vec<u32> = vec![1, 0xdead_beef, u32::MAX];
        let b = to_le_bytes(&v);
        assert_eq!(&b[4..8], &[0xef, 0xbe, 0xad, 0xde]);
        assert_eq!(from_le_bytes::<u32>(&b, 3), Some(v));
        assert_eq!(from_le_bytes::<u32>(&b[1..], 3), None);
        assert_eq!(from_le_bytes::<u32>(&b, 2), None);
    }
}
