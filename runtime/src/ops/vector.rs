//! Local steps of the cosine test and of constant folding: per-record self dot products and
//! public constant bits.

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::ring::RingElem;
use crate::share::binary::BitShares;

use super::ctx::Ctx;
use super::value::Value;
use crate::share::Codes;

/// Each party's additive share of `<x, x>` for every code of `count` codes of `len` elements,
/// from the prepared form `a = x_i + x_{i-1}`, `b = x_{i-1}`: `<a, a> - <b, b>` (Appendix C,
/// eq. 6 with y = x), not yet re-randomised.
fn self_dot_local<T: RingElem>(a: &[T], b: &[T], count: usize, len: usize) -> Vec<T> {
    (0..count)
        .map(|c| {
            let r = c * len..(c + 1) * len;
            a[r.clone()].iter().zip(&b[r]).fold(T::ZERO, |acc, (x, y)| {
                acc.wrapping_add(x.wrapping_mul(*x))
                    .wrapping_sub(y.wrapping_mul(*y))
            })
        })
        .collect()
}

/// [`self_dot_local`] of every code of `c`; a schedule error if `c` has no shares (a gallery
/// view taken without them) or its components differ in width.
pub(crate) fn self_dot_codes(c: &Codes) -> Result<RingVec, RuntimeError> {
    c.check_shares("self_dot", "codes")?;
    Ok(match (&c.a, &c.b) {
        (RingVec::U16(a), RingVec::U16(b)) => RingVec::U16(self_dot_local(a, b, c.count, c.bits)),
        (RingVec::U32(a), RingVec::U32(b)) => RingVec::U32(self_dot_local(a, b, c.count, c.bits)),
        (RingVec::U64(a), RingVec::U64(b)) => RingVec::U64(self_dot_local(a, b, c.count, c.bits)),
        _ => {
            return Err(RuntimeError::Schedule(
                "share components differ in width".into(),
            ))
        }
    })
}

/// Additive shares of `<y, y>` for every code of `src` (the norms of the cosine test). Local.
pub fn self_dot(_cx: &mut Ctx<'_>, src: &Value) -> Result<Value, RuntimeError> {
    let Value::Codes(c) = src else {
        return Err(RuntimeError::Schedule(format!(
            "self dot of {}, which holds no codes",
            src.kind()
        )));
    };
    Ok(Value::Additive(self_dot_codes(c)?))
}

/// One public bit as binary shares: component 0 carries it (party 0's `own`, party 1's
/// `prev`), the others are zero. Local.
pub fn const_bits(cx: &mut Ctx<'_>, value: bool) -> Result<Value, RuntimeError> {
    let mut b = BitShares::zeros(1);
    b.xor_public(cx.party(), &[u64::from(value)]);
    Ok(Value::Bits(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::dot::prepare;
    use crate::share::rep3::{share_vec, Rep3Vec};

    #[test]
    fn self_dot_shares_sum_to_the_squared_norm() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(7);
        let (count, len) = (5, 64);
        let x: Vec<u64> = (0..count * len)
            .map(|_| rng.random_range(0..513u64).wrapping_sub(256))
            .collect();
        let shares: [Rep3Vec<u64>; 3] = share_vec(&x, 64, &mut rng);
        let mut sum = vec![0u64; count];
        for s in &shares {
            let (a, b) = prepare(s);
            for (acc, z) in sum.iter_mut().zip(self_dot_local(&a, &b, count, len)) {
                *acc = acc.wrapping_add(z);
            }
        }
        for c in 0..count {
            let want = x[c * len..(c + 1) * len]
                .iter()
                .fold(0u64, |acc, v| acc.wrapping_add(v.wrapping_mul(*v)));
            assert_eq!(sum[c], want, "code {c}");
        }
    }
}
