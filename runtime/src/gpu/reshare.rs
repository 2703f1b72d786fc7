//! Reshare on a device (paper 000, Appendix C): a party's additive shares of values in Z_2^k
//! (16- or 32-bit storage) re-randomised by PRSS zero shares drawn on the device
//! ([`super::prss`]), reduced to k bits there, sent to the next
//! party; what the previous party sends is the `prev` component. The CPU protocol's message,
//! draws and result ([`crate::protocol::reshare::reshare`]), with the AES keystream and the
//! arithmetic on the GPU.

use crate::contract::gpu::LimbWidth;
use crate::error::RuntimeError;
use crate::net::Transport;
use crate::protocol::{recv_elems, send_elems};
use crate::rand::Prss;
use crate::ring::{mask_slice, RingElem};
use crate::share::Rep3Vec;

use super::lanes::{all, out, pack, unpack, Lanes};
use super::prss::zero_shares_on;

/// Fresh replicated shares of the values whose additive shares (this party's) are `z`, in
/// Z_2^k: one round, as [`crate::protocol::reshare::reshare`].
pub fn reshare_on<L: Lanes, T: RingElem>(
    lanes: &L,
    net: &mut dyn Transport,
    prss: &mut Prss,
    z: &[T],
    k: u32,
) -> Result<Rep3Vec<T>, RuntimeError> {
    let width = LimbWidth::of_bits(T::BITS).ok_or_else(|| {
        RuntimeError::Schedule(format!(
            "internal error: no GPU reshare of {}-bit storage",
            T::BITS
        ))
    })?;
    if !(1..=T::BITS).contains(&k) {
        return Err(RuntimeError::Schedule(format!(
            "internal error: reshare in Z_2^{k} of {}-bit words",
            T::BITS
        )));
    }
    let n = z.len();
    let alpha = zero_shares_on(lanes, prss, width, n)?;
    let own = if n == 0 {
        Vec::new()
    } else {
        let packed = pack(z);
        let zd = lanes.upload(&packed)?;
        let mut sent = lanes.zeros(packed.len())?;
        lanes.reshare_local(width, all(&zd), all(&alpha), n as u64, k, out(&mut sent))?;
        unpack(&lanes.read(&sent, 0, packed.len())?, n)
    };
    let to = net.next();
    send_elems(net, to, &own)?;
    let from = net.prev();
    let mut prev: Vec<T> = recv_elems(net, from, n, "reshare")?;
    // A peer's bits above k would otherwise survive into later arithmetic.
    mask_slice(&mut prev, k);
    Ok(Rep3Vec { own, prev })
}
