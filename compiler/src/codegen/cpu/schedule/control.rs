//! Control flow of `main`: counted loops, the per-query loop of a batch, and runtime calls whose
//! status is checked (a failure jumps to the block that finishes the runtime with status 1).

use super::{err, slots::Slot, Schedule};
use crate::codegen::{cpu::abi::entry_point, CodegenError};
use inkwell::{
    values::{BasicMetadataValueEnum, FunctionValue, IntValue},
    IntPredicate,
};

impl<'ctx> Schedule<'ctx, '_> {
    /// `for i in (from..to).step_by(step): body(i)` (i64); the builder ends after the loop.
    pub(super) fn counted(
        &mut self,
        name: &str,
        from: IntValue<'ctx>,
        to: IntValue<'ctx>,
        step: u64,
        body: impl FnOnce(&mut Self, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let i64t = self.cx.i64_type();
        let pre = self
            .b
            .get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
        let head = self.cx.append_basic_block(self.main, name);
        let inner = self
            .cx
            .append_basic_block(self.main, &format!("{name}.body"));
        let done = self
            .cx
            .append_basic_block(self.main, &format!("{name}.done"));
        self.b.build_unconditional_branch(head).map_err(err)?;
        self.b.position_at_end(head);
        let i = self.b.build_phi(i64t, &format!("{name}.i")).map_err(err)?;
        let i_v = i.as_basic_value().into_int_value();
        let more = self
            .b
            .build_int_compare(IntPredicate::SLT, i_v, to, "more")
            .map_err(err)?;
        self.b
            .build_conditional_branch(more, inner, done)
            .map_err(err)?;
        self.b.position_at_end(inner);
        body(self, i_v)?;
        let next = self
            .b
            .build_int_add(i_v, i64t.const_int(step, false), "next")
            .map_err(err)?;
        let latch = self
            .b
            .get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
        self.b.build_unconditional_branch(head).map_err(err)?;
        i.add_incoming(&[(&from, pre), (&next, latch)]);
        self.b.position_at_end(done);
        Ok(())
    }

    /// `while (n = irisc_rt_next_batch(rt)) >= 0: body(n)`: the query loop once per batch
    /// (share files: one batch; a serving party: each batch of requests the parties agreed
    /// on). The builder ends after the loop.
    pub(super) fn batches(
        &mut self,
        body: impl FnOnce(&mut Self, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let next = entry_point(self.cx, self.module, "irisc_rt_next_batch")
            .ok_or_else(|| err("no irisc_rt_next_batch"))?;
        let head = self.cx.append_basic_block(self.main, "next_batch");
        let inner = self.cx.append_basic_block(self.main, "next_batch.body");
        let done = self.cx.append_basic_block(self.main, "next_batch.done");
        self.batch_head = Some(head);
        self.b.build_unconditional_branch(head).map_err(err)?;
        self.b.position_at_end(head);
        let n = self
            .call_value(next, &[self.rt.into()], "batch.size")?
            .into_int_value();
        let more = self
            .b
            .build_int_compare(
                IntPredicate::SGE,
                n,
                self.cx.i64_type().const_zero(),
                "batch.any",
            )
            .map_err(err)?;
        self.b
            .build_conditional_branch(more, inner, done)
            .map_err(err)?;
        self.b.position_at_end(inner);
        body(self, n)?;
        self.b.build_unconditional_branch(head).map_err(err)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// `for j in 0..nb: body(q0 + j)` with `j` the batch query of [`Slot::Dyn`] slots and the
    /// query argument bound to `q0 + j`.
    pub(super) fn for_batch(
        &mut self,
        name: &str,
        q0: IntValue<'ctx>,
        nb: IntValue<'ctx>,
        q_arg: usize,
        body: impl FnOnce(&mut Self, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let zero = self.cx.i64_type().const_zero();
        self.counted(name, zero, nb, 1, |s, j| {
            let j32 =
                s.b.build_int_truncate(j, s.cx.i32_type(), "j")
                    .map_err(err)?;
            let q = s.b.build_int_add(q0, j, "q").map_err(err)?;
            s.batch_query = Some(j32);
            s.slots.insert(q_arg, Slot::Query(q));
            let r = body(s, q);
            s.batch_query = None;
            r
        })
    }

    /// `irisc_rt_<callee>(args)`, jumping to the failure block unless it returns 0.
    pub(super) fn checked_call(
        &mut self,
        callee: &str,
        args: &[BasicMetadataValueEnum<'ctx>],
        label: &str,
    ) -> Result<(), CodegenError> {
        let f = entry_point(self.cx, self.module, callee)
            .ok_or_else(|| err(format!("no runtime entry point {callee}")))?;
        let status = self.call_value(f, args, "status")?.into_int_value();
        let ok = self
            .b
            .build_int_compare(
                IntPredicate::EQ,
                status,
                self.cx.i32_type().const_zero(),
                "ok",
            )
            .map_err(err)?;
        let next = self
            .cx
            .append_basic_block(self.main, &format!("after.{label}"));
        self.b
            .build_conditional_branch(ok, next, self.fail)
            .map_err(err)?;
        self.b.position_at_end(next);
        Ok(())
    }

    /// The value `f(args)` returns (runtime calls that return a count or a handle).
    pub(super) fn call_value(
        &self,
        f: FunctionValue<'ctx>,
        args: &[BasicMetadataValueEnum<'ctx>],
        name: &str,
    ) -> Result<inkwell::values::BasicValueEnum<'ctx>, CodegenError> {
        self.b
            .build_call(f, args, name)
            .map_err(err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| err("a runtime call returned nothing"))
    }

    pub(super) fn i32c(&self, v: i64) -> BasicMetadataValueEnum<'ctx> {
        self.cx.i32_type().const_int(v as u64, true).into()
    }

    pub(super) fn i64c(&self, v: i64) -> BasicMetadataValueEnum<'ctx> {
        self.cx.i64_type().const_int(v as u64, true).into()
    }
}
