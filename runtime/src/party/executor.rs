//! The executor: runs one op of the schedule on the slot table.
//!
//! Every entry point of the C ABI hands its op to one of the methods here. The executor reads
//! the operand slots, lends the op a [`Ctx`] (and, for the few ops that read the party's own
//! state, a [`Local`]), times it, adds the time to the dot or the comparison phase of the
//! accounting line, records calls, seconds, rounds and bytes sent per op kind (the `"ops"` of
//! `--stats`), and stores the result. No op reads a slot, a timer or a counter itself.

use std::time::Instant;

use crate::error::RuntimeError;
use crate::net::Transport;

use super::accounting::Usage;
use super::load::Inputs;
use super::output::Outputs;
use super::tiles::Pipeline;
use super::Runtime;
use crate::ops::ctx::{get, sched, Ctx, MAX_SLOTS};
use crate::ops::value::Value;

/// Which phase of the accounting line an op's time counts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Dot products (and the views of the gallery they read).
    Dot,
    /// The comparison: reshares, comparisons, combinations, openings.
    Compare,
    /// Local set-up steps (loads, rotations, constants, outputs): only in the per-op figures.
    Other,
}

/// The party's own state that some ops read besides their operands: its inputs (loads), the
/// answer being assembled (outputs) and the background jobs of the tiled scan.
pub(crate) struct Local<'a> {
    pub inputs: &'a mut Inputs,
    pub outputs: &'a mut Outputs,
    pub scan: &'a mut Pipeline,
}

impl Runtime {
    /// Runs op `op` with operands in slots `srcs`: `f` gets the context and the operand values;
    /// its result goes to slot `dst`.
    pub(crate) fn exec<const N: usize>(
        &mut self,
        op: &'static str,
        phase: Phase,
        dst: u32,
        srcs: [u32; N],
        f: impl FnOnce(&mut Ctx<'_>, [&Value; N]) -> Result<Value, RuntimeError>,
    ) -> Result<(), RuntimeError> {
        check_slot(dst)?;
        self.exec_with(op, phase, |cx, slots, _| {
            let mut operands = [None; N];
            for (o, &s) in operands.iter_mut().zip(&srcs) {
                *o = Some(get(slots, s)?);
            }
            let v = f(cx, operands.map(|o| o.expect("every operand read")))?;
            Ok(vec![(dst, v)])
        })
    }

    /// Runs op `op` that reads its operands from the slot table itself (a batch of slots) or
    /// the party's own state ([`Local`]); `f` returns its results with their slots.
    pub(crate) fn exec_with(
        &mut self,
        op: &'static str,
        phase: Phase,
        f: impl FnOnce(
            &mut Ctx<'_>,
            &[Option<Value>],
            Local<'_>,
        ) -> Result<Vec<(u32, Value)>, RuntimeError>,
    ) -> Result<(), RuntimeError> {
        let started = Instant::now();
        let usage_before = Usage::now();
        self.op = Some(op);
        let bytes_before = self.net.bytes_sent();
        let mut cx = Ctx {
            net: &mut self.net,
            prss: &mut self.prss,
            rounds: 0,
            threads: self.args.threads,
            record_chunk: self.args.record_chunk,
            overlapped: Default::default(),
            gpu: self.gpu.clone(),
        };
        let local = Local {
            inputs: &mut self.inputs,
            outputs: &mut self.outputs,
            scan: &mut self.tiles,
        };
        let results = f(&mut cx, &self.slots, local);
        let (rounds, overlapped) = (cx.rounds, cx.overlapped);
        let took = started.elapsed();
        let used = Usage::now().since(&usage_before);
        self.rounds += rounds;
        self.times.dot_overlapped += overlapped;
        match phase {
            Phase::Dot => {
                self.times.dot += took;
                self.times.dot_usage.add(&used);
            }
            Phase::Compare => {
                self.times.compare += took;
                self.times.compare_usage.add(&used);
            }
            Phase::Other => {}
        }
        let bytes = self.net.bytes_sent() - bytes_before;
        self.ops
            .entry(op)
            .or_default()
            .add(took.as_secs_f64(), rounds, bytes);
        self.ops_cpu.entry(op).or_default().add(&used);
        for (dst, v) in results? {
            self.put(dst, v)?;
        }
        Ok(())
    }

    /// Runs op `op` that updates the value in slot `acc` with the operand in slot `src` (the
    /// accumulator is moved, not copied: `append` grows it chunk by chunk). `f` gets `None`
    /// for the operand when `src` is `acc` itself.
    pub(crate) fn exec_update(
        &mut self,
        op: &'static str,
        phase: Phase,
        acc: u32,
        src: u32,
        f: impl FnOnce(&mut Value, Option<&Value>) -> Result<(), RuntimeError>,
    ) -> Result<(), RuntimeError> {
        check_slot(acc)?;
        get(&self.slots, src)?;
        let mut a = self
            .slots
            .get_mut(acc as usize)
            .and_then(Option::take)
            .ok_or_else(|| sched(format!("slot {acc} read before it was written")))?;
        let mut result = Ok(());
        let r = self.exec_with(op, phase, |_, slots, _| {
            result = if acc == src {
                f(&mut a, None)
            } else {
                get(slots, src).and_then(|v| f(&mut a, Some(v)))
            };
            Ok(Vec::new())
        });
        self.slots[acc as usize] = Some(a);
        r.and(result)
    }

    /// Stores `v` in slot `i`.
    pub(crate) fn put(&mut self, i: u32, v: Value) -> Result<(), RuntimeError> {
        check_slot(i)?;
        let i = i as usize;
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        self.slots[i] = Some(v);
        Ok(())
    }
}

/// Slot `i` is within range.
pub(crate) fn check_slot(i: u32) -> Result<(), RuntimeError> {
    if i as usize >= MAX_SLOTS {
        return Err(sched(format!("result slot {i} is out of range")));
    }
    Ok(())
}
