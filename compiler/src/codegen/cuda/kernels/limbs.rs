//! The limb arithmetic of the int8 tensor-core dot products (paper 003, Section 4.4), emitted
//! once and used by every kernel and both flavors: splitting a ring word into balanced signed
//! int8 limbs, and recombining the shift-grouped i32 accumulators into a ring word. The
//! definitions are [`irisc_runtime::contract::gpu::split_limbs`] and
//! [`irisc_runtime::contract::gpu::combine`]; the host-flavor tests check the emitted code
//! against them.

use super::super::CodegenError;
use super::ir::Ir;
use inkwell::values::IntValue;
use irisc_runtime::contract::gpu::LimbWidth;

/// The limbs of `x` (an integer of the ring's storage width), least significant first, as i8:
/// each limb is the low byte of what remains, read as a signed byte, and what remains next is
/// `(rest - limb) >> 8`. The borrow a byte above 127 takes is the signed-range correction.
pub fn split<'ctx>(
    ir: &Ir<'ctx, '_>,
    width: LimbWidth,
    x: IntValue<'ctx>,
) -> Result<Vec<IntValue<'ctx>>, CodegenError> {
    let wt = ir.word(width);
    let eight = wt.const_int(8, false);
    let mut rest = x;
    let mut limbs = Vec::with_capacity(width.limbs());
    for j in 0..width.limbs() {
        let limb = ir.trunc(rest, ir.i8t())?;
        limbs.push(limb);
        if j + 1 < width.limbs() {
            let taken = ir.sext(limb, wt)?;
            rest = ir.lshr(ir.sub(rest, taken)?, eight)?;
        }
    }
    Ok(limbs)
}

/// The ring word (storage width) of accumulators grouped by shift: `sum_s acc[s] << 8s`,
/// wrapping in the storage width.
pub fn combine<'ctx>(
    ir: &Ir<'ctx, '_>,
    width: LimbWidth,
    acc: &[IntValue<'ctx>],
) -> Result<IntValue<'ctx>, CodegenError> {
    let wt = ir.word(width);
    let mut word = wt.const_zero();
    for (s, a) in acc.iter().enumerate().take(width.limbs()) {
        let part = ir.trunc(*a, wt)?;
        let part = ir.shl(part, wt.const_int(8 * s as u64, false))?;
        word = ir.add(word, part)?;
    }
    Ok(word)
}
