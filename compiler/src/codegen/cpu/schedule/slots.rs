//! Where the values of the `mpc` module live at run time: one runtime value slot per SSA value,
//! numbered at compile time (iterations of the query loops reuse them); per-query slots for the
//! values a batch of queries keeps apart.

use super::{err, key, Schedule};
use crate::codegen::CodegenError;
use inkwell::values::{BasicMetadataValueEnum, IntValue};
use melior::ir::{operation::OperationLike, ValueLike};

/// Where an SSA value of the `mpc` module lives at run time.
#[derive(Clone, Copy)]
pub(super) enum Slot<'ctx> {
    /// A runtime value slot.
    Fixed(u32),
    /// The query number: the loop counter of the schedule.
    Query(IntValue<'ctx>),
    /// One slot per query of a batch: `base + j` for the batch's query `j` (tiled schedules).
    Dyn(u32),
}

impl<'ctx> Schedule<'ctx, '_> {
    pub(super) fn slot<'c>(&self, v: impl ValueLike<'c>) -> Result<Slot<'ctx>, CodegenError> {
        self.slots
            .get(&key(v))
            .copied()
            .ok_or_else(|| err("a value is used before the schedule defines it"))
    }

    pub(super) fn slot_arg<'c: 'a, 'a>(
        &self,
        op: &impl OperationLike<'c, 'a>,
        i: usize,
    ) -> Result<BasicMetadataValueEnum<'ctx>, CodegenError> {
        self.resolve(self.slot(op.operand(i).map_err(err)?)?)
    }

    /// The call argument for `slot`: a constant slot number, the query, or a per-query slot of
    /// the batch query being emitted.
    pub(super) fn resolve(
        &self,
        slot: Slot<'ctx>,
    ) -> Result<BasicMetadataValueEnum<'ctx>, CodegenError> {
        let i32t = self.cx.i32_type();
        match slot {
            Slot::Fixed(n) => Ok(i32t.const_int(n.into(), false).into()),
            Slot::Query(q) => Ok(q.into()),
            Slot::Dyn(base) => {
                let j = self
                    .batch_query
                    .ok_or_else(|| err("a per-query slot outside a batch loop"))?;
                let at = self
                    .b
                    .build_int_add(i32t.const_int(base.into(), false), j, "slot")
                    .map_err(err)?;
                Ok(at.into())
            }
        }
    }

    /// Records that the slot `fresh` hands out next holds codes of input `input`.
    pub(super) fn note_len(&mut self, input: i64) {
        let len = usize::try_from(input)
            .ok()
            .and_then(|i| self.input_lens.get(i).copied());
        if let Some(len) = len {
            self.lens.insert(self.next_slot, len);
        }
    }

    /// The code length of operand `i`'s slot, if known.
    pub(super) fn slot_len<'c: 'a, 'a>(
        &self,
        op: &impl OperationLike<'c, 'a>,
        i: usize,
    ) -> Option<u64> {
        match self.slot(op.operand(i).ok()?).ok()? {
            Slot::Fixed(n) | Slot::Dyn(n) => self.lens.get(&n).copied(),
            Slot::Query(_) => None,
        }
    }

    /// A new slot for the result of `op`: one per query of the batch while emitting the query
    /// stage of a tiled schedule, else one.
    pub(super) fn fresh<'c: 'a, 'a>(
        &mut self,
        op: &impl OperationLike<'c, 'a>,
    ) -> Result<BasicMetadataValueEnum<'ctx>, CodegenError> {
        let n = self.next_slot;
        let slot = if self.dyn_results {
            self.next_slot += self.query_batch;
            Slot::Dyn(n)
        } else {
            self.next_slot += 1;
            Slot::Fixed(n)
        };
        self.slots.insert(key(op.result(0).map_err(err)?), slot);
        self.resolve(slot)
    }
}
