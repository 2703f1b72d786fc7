//! `irs-to-mpc`: lowers what the user wrote to what the parties compute.
//!
//! Each `irs` op becomes the `mpc` ops of its protocol, as `ring-select` and `variant-select`
//! annotated it: a comparison becomes dot products (replicated, or Shamir over F_p / GR(2^16, d)
//! with a reshare to replicated), lifts and an MSB extraction ([`fhd`], [`cosine`]); boolean
//! structure becomes AND/OR/MUX gates and trees; reveals become opens and outputs ([`logic`]).
//! The module is split by when work happens: `@setup` loads every gallery once per run (in each
//! ring and sharing a comparison needs), `@query` receives the query number and the loaded
//! galleries and does the per-query work.
//!
//! The `mpc` module gets the program's `mpc.parties` (an integer) and `mpc.protocol` (the
//! family's name, `"rep3"`), from `irs.parties` and `irs.protocol`, which the backends read.
//! Under `fss2` the whole module is lowered by [`fss2`] (two servers, the client, CS.Eval).
//!
//! Before (after `variant-select` and `ring-select`):
//! ```mlir
//! func.func @query() {
//!   %0 = "irs.query_value"() {input = 1, kind = "iris", name = "q", owner = 0} : () -> !irs.code<12800>
//!   %1 = "irs.rotate"(%0) {hi = 15, lo = -15} : (!irs.code<12800>) -> !irs.codes<12800>
//!   %2 = "irs.records"() {input = 0, name = "db", source = "gallery"} : () -> !irs.codes<12800>
//!   %3 = "irs.fhd_lt"(%1, %2) {ring_bits = 16, sharing = #irs.sharing<"rep3">, variant = #irs.variant<"plain-mask">, ...} : (...) -> !irs.bits
//!   %4 = "irs.any"(%3) {group = 31} : (!irs.bits) -> !irs.bits
//!   "irs.reveal"(%4, %2) {label = "ids", shape = "ids", to = 0} : (...) -> ()
//! }
//! ```
//! After:
//! ```mlir
//! func.func @setup() -> !mpc.code<16> {
//!   %0 = "mpc.load_gallery"() {input = 0, name = "db", part = 0} : () -> !mpc.code<16>
//!   return %0 : !mpc.code<16>
//! }
//! func.func @query(%arg0: i64, %arg1: !mpc.code<16>) {
//!   %0 = "mpc.load_query"(%arg0) {input = 1, name = "q", part = 0} : (i64) -> !mpc.code<16>
//!   %1 = "mpc.rotate"(%0) {hi = 15, lo = -15} : (!mpc.code<16>) -> !mpc.code<16>
//!   %2 = "mpc.masked_dot"(%1, %arg1) {code_bits = 12800} : (...) -> !mpc.add<16>
//!   %3 = "mpc.reshare"(%2) : (!mpc.add<16>) -> !mpc.rep<16>
//!   %4 = "mpc.mask_len"(%1, %arg1) : (...) -> !mpc.pub<16>
//!   %5 = "mpc.sub_threshold"(%3, %4) {ratio_den = 200, ratio_num = 69} : (...) -> !mpc.rep<16>
//!   %6 = "mpc.msb"(%5) : (!mpc.rep<16>) -> !mpc.bits
//!   %7 = "mpc.or_tree"(%6) {group = 31} : (!mpc.bits) -> !mpc.bits
//!   %8 = "mpc.open"(%7) {to = 0} : (!mpc.bits) -> !mpc.clear_bits
//!   "mpc.output"(%arg0, %8, %arg1) {label = "ids", shape = "ids"} : (...) -> ()
//!   "mpc.emit"(%arg0) : (i64) -> ()
//! }
//! ```

mod beaver;
mod cosine;
mod emitter;
mod fhd;
pub mod fss2;
mod handle;
mod lanes;
mod logic;

use super::{Pass, PassError};
use crate::mlir::{op_name, ChoiceAttr, Compiler};
use emitter::Emitter;
use irisc_runtime::vocab::Protocol;
use melior::ir::{
    attribute::StringAttribute,
    block::BlockLike,
    operation::{OperationLike, OperationMutLike, OperationRef},
    Module, RegionLike,
};

pub struct IrsToMpc;

pub(crate) const NAME: &str = "irs-to-mpc";

pub(crate) fn fail(message: impl Into<String>) -> PassError {
    PassError::Unsupported {
        pass: NAME,
        message: message.into(),
    }
}

impl Pass for IrsToMpc {
    fn name(&self) -> &'static str {
        NAME
    }

    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError> {
        let ops = query_ops(&module)?;
        let from = module.as_operation();
        let missing =
            |what: &str, who: &str| fail(format!("the module has no `{what}` ({who} sets it)"));
        let protocol = from
            .attribute("irs.protocol")
            .ok()
            .and_then(Protocol::from_attr)
            .ok_or_else(|| missing("irs.protocol", "variant-select"))?;
        if protocol == Protocol::Fss2 {
            return fss2::lower_module(cx, &module, &ops);
        }
        let mut e = Emitter::new(cx, protocol == Protocol::Beaver);
        // Under `beaver`, ops of the honest-majority part that read the circuit's results
        // (reductions across records, counts, their reveals) wait until the circuit is emitted.
        let mut after = Vec::new();
        let mut post = std::collections::HashSet::new();
        let uses = use_counts(&ops);
        for op in &ops {
            if e.beaver.is_some() && beaver::runs_after_circuit(&e, op, &post)? {
                if !beaver::reduce_inside_records(&mut e, op, &uses)? {
                    for i in 0..op.operand_count() {
                        if let Some((k, f)) = e.frag_operand(op, i) {
                            e.beaver_mut()?.materialize(k, f)?;
                        }
                    }
                }
                if let Ok(r) = op.result(0) {
                    post.insert(emitter::key(r));
                }
                after.push(op);
                continue;
            }
            lower_op(&mut e, op)?;
        }
        beaver::finish(&mut e, module.as_operation().location())?;
        e.beaver = None;
        for op in after {
            lower_op(&mut e, op)?;
        }
        let mut mpc = e.finish(module.as_operation().location())?;
        // What the backends read from the program: its parties and protocol family (the `mpc`
        // module names the protocol as a string: it does not depend on the `irs` dialect).
        let parties = from
            .attribute("irs.parties")
            .map_err(|_| missing("irs.parties", "lower"))?;
        let mut to = mpc.as_operation_mut();
        to.set_attribute("mpc.parties", parties);
        to.set_attribute(
            "mpc.protocol",
            StringAttribute::new(cx.context(), protocol.name()).into(),
        );
        Ok(mpc)
    }
}

/// How many ops read each value (by key).
fn use_counts(ops: &[OperationRef<'_, '_>]) -> std::collections::HashMap<usize, usize> {
    let mut uses = std::collections::HashMap::new();
    for op in ops {
        for v in op.operands() {
            *uses.entry(emitter::key(v)).or_insert(0) += 1;
        }
    }
    uses
}

/// Lowers one `irs` op of `@query`.
fn lower_op<'c>(e: &mut Emitter<'c>, op: &OperationRef<'c, '_>) -> Result<(), PassError> {
    match op_name(op).as_str() {
        "irs.query_value" | "irs.records" | "irs.rotate" => e.source(op),
        "irs.fhd_lt" => fhd::lower(e, op),
        "irs.cosine_ge" => cosine::lower(e, op),
        "irs.const" | "irs.not" | "irs.and" | "irs.or" | "irs.select" | "irs.any" | "irs.all"
        | "irs.count" => logic::lower(e, op),
        "irs.reveal" => logic::reveal(e, op),
        "func.return" => Ok(()),
        other => Err(fail(format!("no lowering for `{other}`"))),
    }
}

/// The ops of `func.func @query` in the `irs` module.
fn query_ops<'c, 'm>(module: &'m Module<'c>) -> Result<Vec<OperationRef<'c, 'm>>, PassError> {
    let mut f = module.body().first_operation();
    while let Some(func) = f {
        let is_query = op_name(&func) == "func.func"
            && crate::mlir::get_str(&func, "sym_name").as_deref() == Ok("query");
        if is_query {
            let block = func
                .region(0)
                .ok()
                .and_then(|r| r.first_block())
                .ok_or_else(|| fail("@query has no body"))?;
            let mut ops = Vec::new();
            let mut op = block.first_operation();
            while let Some(o) = op {
                op = o.next_in_block();
                ops.push(o);
            }
            return Ok(ops);
        }
        f = func.next_in_block();
    }
    Err(fail("the module has no `func.func @query`"))
}
