//! The servers' SS.IP kernel (paper 002, Section 3.1) as the compiler generates it: for one
//! template, `b * sum dx_i dy_i - sum (dx_i [r_y,i]_b + dy_i [r_x,i]_b) + [u]_b` over Z_2^64,
//! with the dimension a constant of the generated code (`irisc build --protocol fss2` emits it
//! from `mpc.ss_ip`, LLVM unrolls and vectorises it for the host).
//!
//! A server built by the compiler runs CS.Eval's round-1 inner products through it; a server
//! started by `irisc fss2 serve` (no generated code) uses [`ss_ip`](super::sharing::ss_ip).

use super::sharing::ss_ip;

/// The C signature of a generated kernel: `(b, dx, rx, dy, ry, u) -> share`, every vector
/// `dim` words long.
pub type SsIpFn = unsafe extern "C" fn(
    b: u64,
    dx: *const u64,
    rx: *const u64,
    dy: *const u64,
    ry: *const u64,
    u: u64,
) -> u64;

/// Which SS.IP a server runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct IpKernel {
    generated: Option<(SsIpFn, usize)>,
}

impl IpKernel {
    /// The runtime's own loop ([`ss_ip`]).
    pub const PORTABLE: IpKernel = IpKernel { generated: None };

    /// A kernel generated for vectors of `dim` words.
    ///
    /// # Safety
    /// `f` must read exactly `dim` words from each of its four vectors and nothing else.
    pub unsafe fn generated(f: SsIpFn, dim: usize) -> IpKernel {
        IpKernel {
            generated: Some((f, dim)),
        }
    }

    /// Whether this is compiled code (for the server's report).
    pub fn is_generated(&self) -> bool {
        self.generated.is_some()
    }

    /// Server `b`'s additive share of `<x, y>` (see [`ss_ip`]). Vectors of another length than
    /// the generated kernel's go to the portable loop, so a wrong length can never be read past.
    pub fn ip(&self, b: usize, dx: &[u64], rx: &[u64], dy: &[u64], ry: &[u64], u: u64) -> u64 {
        match self.generated {
            Some((f, dim))
                if dx.len() == dim && rx.len() == dim && dy.len() == dim && ry.len() == dim =>
            {
                // SAFETY: four vectors of exactly `dim` words, as `generated` requires.
                unsafe {
                    f(
                        b as u64,
                        dx.as_ptr(),
                        rx.as_ptr(),
                        dy.as_ptr(),
                        ry.as_ptr(),
                        u,
                    )
                }
            }
            _ => ss_ip(b, dx, rx, dy, ry, u),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for generated code with another summation order than [`ss_ip`] (per-term
    /// shares summed at the end), so the two agreeing is not the same loop run twice.
    unsafe extern "C" fn reordered_4(
        b: u64,
        dx: *const u64,
        rx: *const u64,
        dy: *const u64,
        ry: *const u64,
        u: u64,
    ) -> u64 {
        let (dx, rx, dy, ry) = unsafe {
            (
                std::slice::from_raw_parts(dx, 4),
                std::slice::from_raw_parts(rx, 4),
                std::slice::from_raw_parts(dy, 4),
                std::slice::from_raw_parts(ry, 4),
            )
        };
        (0..4).rev().fold(u, |acc, i| {
            acc.wrapping_add(
                b.wrapping_mul(dx[i].wrapping_mul(dy[i]))
                    .wrapping_sub(dx[i].wrapping_mul(ry[i]))
                    .wrapping_sub(dy[i].wrapping_mul(rx[i])),
            )
        })
    }

    #[test]
    fn a_generated_kernel_is_used_only_for_its_dimension() {
        let k = unsafe { IpKernel::generated(reordered_4, 4) };
        assert!(k.is_generated() && !IpKernel::PORTABLE.is_generated());
        let v = |s: u64| {
            (0..4)
                .map(|i| s.wrapping_mul(0x9e37_79b9_7f4a_7c15 ^ i))
                .collect::<Vec<u64>>()
        };
        let (dx, rx, dy, ry) = (v(3), v(5), v(7), v(11));
        for b in 0..2 {
            assert_eq!(
                k.ip(b, &dx, &rx, &dy, &ry, 99),
                ss_ip(b, &dx, &rx, &dy, &ry, 99)
            );
        }
        // Another length: the portable loop, never the 4-word kernel.
        let (x5, r5) = (vec![1u64; 5], vec![2u64; 5]);
        assert_eq!(
            k.ip(0, &x5, &r5, &x5, &r5, 0),
            ss_ip(0, &x5, &r5, &x5, &r5, 0)
        );
    }
}
