//! AND of replicated binary shares on a device (ABY3 over F_2, paper 000 Appendix C eq. 4):
//! the local share `irisc_gpu_and_local` with the zero bits drawn on the device
//! ([`super::prss`]), one round, the CPU protocol's message, draws and result
//! ([`crate::protocol::and`]).

use crate::error::RuntimeError;
use crate::net::Transport;
use crate::protocol::{recv_elems, send_elems};
use crate::rand::Prss;
use crate::share::BitShares;

use super::lanes::{all, out, Lanes};
use super::prss::zero_bits_on;

/// `x ∧ y` elementwise (equal lengths), one round.
pub fn and_on<L: Lanes>(
    lanes: &L,
    net: &mut dyn Transport,
    prss: &mut Prss,
    x: &BitShares,
    y: &BitShares,
) -> Result<BitShares, RuntimeError> {
    if x.len != y.len {
        return Err(RuntimeError::Schedule(format!(
            "internal error: AND of {} and {} bits",
            x.len, y.len
        )));
    }
    let w = x.words();
    if w == 0 {
        // Nothing to multiply: every party knows it, so nobody sends or waits.
        return Ok(BitShares::zeros(x.len));
    }
    let alpha = zero_bits_on(lanes, prss, w)?;
    let up = |v: &[u64]| lanes.upload(v);
    let (xo, xp, yo, yp) = (up(&x.own)?, up(&x.prev)?, up(&y.own)?, up(&y.prev)?);
    let mut z = lanes.zeros(w)?;
    lanes.and_local(
        [all(&xo), all(&xp), all(&yo), all(&yp)],
        all(&alpha),
        w as u64,
        x.len as u64,
        out(&mut z),
    )?;
    let z = lanes.read(&z, 0, w)?;
    let to = net.next();
    send_elems(net, to, &z)?;
    let from = net.prev();
    let got: Vec<u64> = recv_elems(net, from, w, "AND shares")?;
    // from_words clears the tail, so a peer's stray bits there cannot reach later gates.
    Ok(BitShares::from_words(z, got, x.len))
}
