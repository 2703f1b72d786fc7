//! The tiled schedule as the `mpc` module records it: the options `mpc-tile` wrote on `@query`
//! (query batch, record chunk) and why a body was left untiled. Read by `irisc explain`, the
//! manifest and code generation, so none of them keeps its own copy of the pass's choices.

use crate::mlir::{get_int, get_str, op_name};
use melior::ir::{block::BlockLike, operation::OperationLike, Module, OperationRef};

/// The `mpc-tile` options recorded on a tiled (or deliberately untiled) `@query`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TileOptions {
    pub query_batch: u32,
    pub record_chunk: u64,
    /// Whether the chunk stage runs once for the whole batch (`mpc.batched_chunks`).
    pub batched_chunks: bool,
}

impl TileOptions {
    /// The options `mpc-tile` recorded on `@query` of `module`, if it ran.
    pub fn of(module: &Module<'_>) -> Option<TileOptions> {
        let func = query_func(module)?;
        let query_batch = u32::try_from(get_int(&func, "mpc.query_batch").ok()?).ok()?;
        let record_chunk = u64::try_from(get_int(&func, "mpc.record_chunk").ok()?).ok()?;
        Some(TileOptions {
            query_batch,
            record_chunk,
            batched_chunks: batched_chunks(module),
        })
    }
}

/// Why `mpc-tile` left `@query` of `module` untiled, if it did.
pub fn untiled_reason(module: &Module<'_>) -> Option<String> {
    get_str(&query_func(module)?, "mpc.untiled").ok()
}

/// Whether the chunk stage of the tiled `@query` runs once for the whole batch (`mpc-tile`
/// recorded `mpc.batched_chunks`): a batch then costs one query's comparison rounds.
pub fn batched_chunks(module: &Module<'_>) -> bool {
    query_func(module).is_some_and(|f| f.attribute("mpc.batched_chunks").is_ok())
}

/// Why `mpc-tile` kept the chunk stage per query (an op without a batch form), if it did.
pub fn unbatched_reason(module: &Module<'_>) -> Option<String> {
    get_str(&query_func(module)?, "mpc.unbatched").ok()
}

fn query_func<'c, 'm>(module: &'m Module<'c>) -> Option<OperationRef<'c, 'm>> {
    let mut cur = module.body().first_operation();
    while let Some(f) = cur {
        if op_name(&f) == "func.func" && get_str(&f, "sym_name").as_deref() == Ok("query") {
            return Some(f);
        }
        cur = f.next_in_block();
    }
    None
}
