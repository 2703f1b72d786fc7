//! Reading the tiled `@query` back: its options, its stages (what code generation emits), and
//! the compact listing of `irisc build --emit=schedule`.

use super::{Stage, STAGE_OP};
use crate::analysis::schedule::{batched_chunks, unbatched_reason, untiled_reason, TileOptions};
use crate::mlir::{get_int, get_str, op_name};
use melior::ir::{
    block::BlockLike, operation::OperationLike, BlockRef, Module, OperationRef, RegionLike,
    ValueLike,
};
use std::collections::HashMap;

/// The entry block of `func.func @name` in `module`.
pub fn query_body<'c, 'm>(module: &'m Module<'c>, name: &str) -> Result<BlockRef<'c, 'm>, String> {
    let mut op = module.body().first_operation();
    while let Some(f) = op {
        if op_name(&f) == "func.func" && get_str(&f, "sym_name").as_deref() == Ok(name) {
            return f
                .region(0)
                .ok()
                .and_then(|r| r.first_block())
                .ok_or_else(|| format!("@{name} has no body"));
        }
        op = f.next_in_block();
    }
    Err(format!("the mpc module has no `func.func @{name}`"))
}

/// The ops of a tiled body with the stage each runs in (markers and the return left out), or
/// `None` for a body that does not start with a stage marker (untiled).
pub fn stages_of<'c, 'm>(block: BlockRef<'c, 'm>) -> Option<Vec<(Stage, OperationRef<'c, 'm>)>> {
    let mut out = Vec::new();
    let mut stage = None;
    let mut cur = block.first_operation();
    while let Some(op) = cur {
        cur = op.next_in_block();
        let name = op_name(&op);
        if name == STAGE_OP {
            stage = Some(Stage::from_name(&get_str(&op, "name").ok()?)?);
        } else if name != "func.return" {
            out.push((stage?, op));
        }
    }
    stage.map(|_| out)
}

/// `@query` of `module` as the parties run it (`irisc build --emit=schedule`): with `mpc-tile`
/// run, each op with its stage, what crosses out of the chunks, and which reductions are
/// finished over the chunks' results; otherwise the untiled body and why.
pub fn describe(module: &Module<'_>) -> Result<String, String> {
    use std::fmt::Write;
    let query = query_body(module, "query")?;
    let mut names: HashMap<usize, String> = HashMap::new();
    for i in 0..query.argument_count() {
        let arg = query.argument(i).map_err(|e| e.to_string())?;
        names.insert(key(arg), format!("%arg{i}"));
    }
    let name = |names: &HashMap<usize, String>, v: usize| {
        names.get(&v).cloned().unwrap_or_else(|| "?".into())
    };
    let render = |names: &mut HashMap<usize, String>, op: &OperationRef<'_, '_>| {
        let operands: Vec<String> = op.operands().map(|v| name(names, key(v))).collect();
        // The attributes that say how the op groups or lays out its values.
        let attrs: Vec<String> = ["group", "per_query", "width"]
            .iter()
            .filter_map(|a| get_int(op, a).ok().map(|v| format!("{a} = {v}")))
            .collect();
        let attrs = if attrs.is_empty() {
            String::new()
        } else {
            format!(" {{{}}}", attrs.join(", "))
        };
        let text = format!("{}({}){attrs}", op_name(op), operands.join(", "));
        match op.result(0) {
            Ok(r) => {
                let n = format!("%{}", names.len() - query.argument_count());
                names.insert(key(r), n.clone());
                format!("{n} = {text}")
            }
            Err(_) => text,
        }
    };
    let mut out = String::new();
    let Some(stages) = stages_of(query) else {
        let why = untiled_reason(module).unwrap_or_else(|| "mpc-tile did not run".into());
        let _ = writeln!(
            out,
            "untiled ({why}): one query at a time, each op over the whole gallery"
        );
        let mut cur = query.first_operation();
        while let Some(op) = cur {
            cur = op.next_in_block();
            if op_name(&op) != "func.return" {
                let _ = writeln!(out, "  {}", render(&mut names, &op));
            }
        }
        return Ok(out);
    };
    let options = TileOptions::of(module).ok_or("a tiled @query without its options")?;
    let _ = writeln!(
        out,
        "tiled: queries in batches of {}, gallery records in chunks of {} (0: one chunk; \
         --record-chunk overrides)",
        options.query_batch, options.record_chunk
    );
    let _ = match unbatched_reason(module) {
        None if batched_chunks(module) => writeln!(
            out,
            "chunk stage: once per chunk for the whole batch, over [record][query][width] \
             (a batch costs one query's rounds)"
        ),
        Some(why) => writeln!(out, "chunk stage: per query ({why})"),
        None => writeln!(out, "chunk stage: per query"),
    };
    let (mut crossings, mut finished) = (Vec::new(), Vec::new());
    let mut appended = Vec::new();
    for (stage, op) in &stages {
        let stage = stage.name().replace('_', "-");
        let line = render(&mut names, op);
        let _ = writeln!(out, "  {stage:<12} {line}");
        let is_append = op_name(op) == "mpc.append";
        if is_append {
            if let (Ok(src), Ok(r)) = (op.operand(0), op.result(0)) {
                crossings.push(name(&names, key(src)));
                appended.push(key(r));
            }
        } else if op.operands().any(|v| appended.contains(&key(v))) && get_int(op, "group") == Ok(0)
        {
            finished.push(line);
        }
    }
    let _ = writeln!(
        out,
        "crossings (appended per chunk): {}",
        crossings.join(", ")
    );
    let finished = if finished.is_empty() {
        "none".to_string()
    } else {
        finished.join("; ")
    };
    let _ = writeln!(out, "finished over the chunks' results: {finished}");
    Ok(out)
}

fn key<'c>(v: impl ValueLike<'c>) -> usize {
    v.to_raw().ptr as usize
}
