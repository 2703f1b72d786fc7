//! The CPU backend: the `mpc` module to one LLVM module holding the party schedule
//! ([`schedule`]), the dot-product kernels it passes to the runtime as tables of ISA variants
//! ([`kernel`]) and the manifest; then `default<O3>` and an object file for the host ([`target`]),
//! linked with the runtime archive ([`super::link`]). [`CpuBackend`] is the first implementation of
//! [`Backend`] (its module docs use it as the worked example).

pub mod abi;
pub mod fss2;
pub mod kernel;
pub mod schedule;
pub mod target;

use super::artifact::{Artifact, CompileError, Emit};
use super::backend::{Backend, Job, LinkInputs, PartyProgram, BEAVER, FSS2, REP3};
use super::link;
use inkwell::{context::Context, module::Module};
use melior::ir::Module as MlirModule;
use std::path::PathBuf;

/// The host CPU through LLVM (`irisc build --target cpu`, the default).
pub struct CpuBackend;

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn supports(&self, program: &PartyProgram) -> Result<(), CodegenError> {
        if program.parties == 3 && (program.protocol == REP3 || program.protocol == BEAVER) {
            return Ok(());
        }
        if program.parties == 2 && program.protocol == FSS2 {
            return Ok(());
        }
        Err(CodegenError(format!(
            "the cpu backend generates the three-party `{REP3}` and `{BEAVER}` protocols and the two-server `{FSS2}`, not `{}` with {} parties",
            program.protocol, program.parties
        )))
    }

    fn kernel_ops(&self) -> &'static [&'static str] {
        &[
            "mpc.masked_dot",
            "mpc.shamir_dot",
            "mpc.batch_masked_dot",
            "mpc.batch_shamir_dot",
        ]
    }

    fn emits(&self) -> &'static [Emit] {
        &[Emit::Llvm, Emit::Obj, Emit::Exe]
    }

    fn generate(&self, job: &Job<'_, '_>) -> Result<Artifact, CompileError> {
        if job.program.protocol == FSS2 {
            let dim = super::fss2_manifest::ss_ip_dim(job.mpc)?;
            return fss2::generate(job, dim);
        }
        let llcx = Context::create();
        let module = generate(&llcx, job.name, job.mpc, job.manifest_json)?;
        let machine = target::host_machine()?;
        target::optimize(&module, &machine)?;
        if job.emit == Emit::Llvm {
            return Ok(Artifact::Text(module.print_to_string().to_string()));
        }
        if job.emit == Emit::Obj {
            let out = job
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{}.o", job.name)));
            target::write_object(&module, &machine, &out)?;
            return Ok(Artifact::File(out));
        }
        let out = job
            .output
            .clone()
            .unwrap_or_else(|| PathBuf::from(job.name));
        let dir = tempfile::tempdir()
            .map_err(|e| CompileError::Io(format!("cannot create a temporary directory: {e}")))?;
        let object = dir.path().join(format!("{}.o", job.name));
        target::write_object(&module, &machine, &object)?;
        link::link(&object, &out)?;
        Ok(Artifact::File(out))
    }

    fn link_inputs(&self) -> LinkInputs {
        LinkInputs {
            runtime: link::RUNTIME_LIB,
            system: link::NATIVE_LIBS,
        }
    }
}

pub use super::artifact::CodegenError;

/// Generates and verifies the LLVM module for `mpc` (not yet optimised).
pub fn generate<'ctx>(
    cx: &'ctx Context,
    name: &str,
    mpc: &MlirModule<'_>,
    manifest_json: &str,
) -> Result<Module<'ctx>, CodegenError> {
    let module = cx.create_module(name);
    schedule::generate(cx, &module, mpc, manifest_json)?;
    module
        .verify()
        .map_err(|e| CodegenError(format!("the generated LLVM module does not verify: {e}")))?;
    Ok(module)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::lower_program;
    use crate::mlir::Compiler;
    use crate::passes::PassManager;
    use crate::testing::{planned_rep3, DEDUP};

    #[test]
    fn schedule_calls_the_runtime_in_order_and_checks_status() {
        let cx = Compiler::new().unwrap();
        let (program, choices) = planned_rep3(DEDUP);
        let m = lower_program(&cx, &program, DEDUP).unwrap();
        let mpc = PassManager::irs_to_mpc_pipeline(&choices)
            .run(&cx, m, None)
            .unwrap();
        let llcx = Context::create();
        let module = generate(&llcx, "dedup", &mpc, r#"{"abi":1}"#).unwrap();
        let ir = module.print_to_string().to_string();
        // The tiled schedule (as `mpc-tile` staged it, the chunk stage batched): slot 0 the
        // gallery, 1 its chunk view, 2 the batch's collection of the crossing, then per-query
        // slots (base + j) for the query and its rotations, then the chunk stage's slots, each
        // one value for the whole batch.
        let calls = [
            "call ptr @irisc_rt_start(i32 %, ptr %, ptr @irisc_manifest, i64 9)",
            "call i32 @irisc_rt_load_input(ptr %rt, i32 0, i32 0, i32 0, i64 -1, i32 16)",
            "call i64 @irisc_rt_next_batch(ptr %rt)",
            // Query stage, per query of the batch: slot 3 + j holds query j, 11 + j its
            // rotations.
            "%q = add i64 %batches.i, %batch.queries.i",
            "%slot = add i32 3, %j",
            "call i32 @irisc_rt_load_input(ptr %rt, i32 %slot, i32 1, i32 0, i64 %q, i32 16)",
            "%slot = add i32 11, %j",
            "call i32 @irisc_rt_rotate(ptr %rt, i32 %slot, i32 %slot, i32 -15, i32 15, i32 0)",
            // Per chunk: the whole batch's dot products in one call (codes from 11..), as one
            // value in the batch layout (slot 19), then the chunk's view of the gallery.
            "call i64 @irisc_rt_chunk_count(ptr %rt, i32 0)",
            "call i32 @irisc_rt_batch_dot_joined(ptr %rt, i32 19, i32 11, i64 %nb, i32 0, i64 %chunks.i, ptr @irisc_kernels_dot_z16_L12800_t4x6_k1024_r96_or_t6x4_polym15_15, i32 0)",
            // Only the view's public masks are read (mask_len): no shares in it.
            "call i32 @irisc_rt_gallery_view(ptr %rt, i32 1, i32 0, i64 %chunks.i, i32 0)",
            // Chunk stage, once for the batch: constant slots, the mask lengths of every query
            // (by record thirds, one holder per component: the last argument); the threshold
            // (placed by record thirds: 1) and AdditiveMSB on the dot products' additive shares
            // (no reshare).
            "call i32 @irisc_rt_batch_mask_len(ptr %rt, i32 20, i32 11, i64 %nb, i32 1, i32 1)",
            "call i32 @irisc_rt_sub_threshold(ptr %rt, i32 21, i32 19, i32 20, i64 69, i64 200, i32 16, i32 1)",
            "call i32 @irisc_rt_additive_msb(ptr %rt, i32 22, i32 21, i32 16)",
            // The reduction over all records, each query's 31 values per record apart, its
            // result collected in 2 ...
            "call i32 @irisc_rt_or_per_query(ptr %rt, i32 23, i32 22, i64 %nb, i64 31)",
            "call i32 @irisc_rt_append(ptr %rt, i32 2, i32 23, i32 %first.flag)",
            // ... and finished over the chunks' results (one per chunk and query), then opened
            // once for the batch; per query its bit is picked out and output.
            "call i32 @irisc_rt_or_per_query(ptr %rt, i32 24, i32 2, i64 %nb, i64 1)",
            "call i32 @irisc_rt_open(ptr %rt, i32 25, i32 24, i32 0)",
            "call i32 @irisc_rt_batch_pick(ptr %rt, i32 26, i32 25, i32 %j, i64 %nb, i64 1)",
            "call i32 @irisc_rt_output(ptr %rt, i64 %q, i32 26, i32 -1, i32 0, ptr @irisc_label, i64 5)",
            "call i32 @irisc_rt_emit(ptr %rt, i64 %q)",
        ];
        // LLVM numbers repeated value names (`%slot12`); compare without the numbers.
        let ir = strip_name_numbers(&ir);
        for call in calls {
            assert!(ir.contains(call), "missing: {call}\n{ir}");
        }
        // The loops: batches of 8 queries, chunks, and the two per-query loops (the chunk
        // stage has none: it runs once for the batch).
        for label in [
            "next_batch",
            "batches",
            "batch.queries",
            "chunks",
            "finish.queries",
        ] {
            assert!(ir.contains(&format!("\n{label}:")), "no loop {label}\n{ir}");
        }
        assert!(!ir.contains("\nchunk.queries:"), "{ir}");
        assert!(ir.contains("add i64 %batches.i, 8"), "{ir}");
        // Success and failure both finish the runtime and return its exit code.
        assert!(
            ir.contains("call i32 @irisc_rt_finish(ptr %rt, i32 0)"),
            "{ir}"
        );
        assert!(
            ir.contains("call i32 @irisc_rt_finish(ptr %rt, i32 1)"),
            "{ir}"
        );
        // One status check per runtime call that returns a status (15), and one on the chunk
        // count.
        assert_eq!(ir.matches("br i1 %ok").count(), 15, "{ir}");
        assert!(ir.contains("br i1 %no.chunks, label %failed"), "{ir}");
        assert!(
            ir.contains(r#"@irisc_manifest = private constant [9 x i8] c"{\22abi\22:1}""#),
            "{ir}"
        );
    }

    /// The LLVM IR for the `.mlir` module `text` after `mpc-tile{options}`.
    fn generated_after_tiling(text: &str, options: &str) -> String {
        let cx = Compiler::new().unwrap();
        let m = cx.parse_module(text).unwrap();
        let tile = crate::passes::mpc_tile::MpcTile::from_options(options).unwrap();
        let m = crate::passes::Pass::run(&tile, &cx, m).unwrap();
        let llcx = Context::create();
        let module = generate(&llcx, "t", &m, r#"{"abi":1}"#).unwrap();
        strip_name_numbers(&module.print_to_string().to_string())
    }

    #[test]
    fn the_schedule_follows_the_batch_and_stages_in_the_ir() {
        let ids = include_str!("../../../../tests/lit/passes/mpc-tile/ids.mlir");
        let ir = generated_after_tiling(ids, "query-batch=4");
        // Batches of 4: the loop step and the stride of the per-query slots (view 1 after the
        // gallery, the crossing's collection 2, the query 3 + j, its rotations 7 + j).
        assert!(ir.contains("add i64 %batches.i, 4"), "{ir}");
        assert!(ir.contains("%slot = add i32 3, %j"), "{ir}");
        assert!(ir.contains("%slot = add i32 7, %j"), "{ir}");
        assert!(ir.contains("call i32 @irisc_rt_batch_dot_joined(ptr %rt, i32 11, i32 7, i64 %nb, i32 0, i64 %chunks.i"), "{ir}");
        assert!(!ir.contains("add i64 %batches.i, 8"), "{ir}");
        // With the chunk stage per query (batch-chunks=0): the dot products split per query
        // (results 14 + j), the chunk stage in a per-query loop.
        let ir = generated_after_tiling(ids, "query-batch=4 batch-chunks=0");
        assert!(ir.contains("call i32 @irisc_rt_batch_dot(ptr %rt, i32 14, i32 10, i64 %nb, i32 0, i64 %chunks.i"), "{ir}");
        assert!(ir.contains("\nchunk.queries:"), "{ir}");
        assert!(ir.contains("call i32 @irisc_rt_mask_len("), "{ir}");
        assert!(!ir.contains("batch_pick"), "{ir}");
        // A body mpc-tile left untiled runs one query at a time: no batches, no chunks.
        let untiled = include_str!("../../../../tests/lit/passes/mpc-tile/untiled.mlir");
        let ir = generated_after_tiling(untiled, "");
        assert!(ir.contains("\nqueries.body:"), "{ir}");
        assert!(
            !ir.contains("batch_dot") && !ir.contains("\nchunks:"),
            "{ir}"
        );
        assert!(ir.contains("call i32 @irisc_rt_masked_dot("), "{ir}");
    }

    #[test]
    fn generates_only_the_three_party_replicated_family() {
        let rep3 = PartyProgram {
            parties: 3,
            protocol: REP3.into(),
        };
        assert!(CpuBackend.supports(&rep3).is_ok());
        let beaver = PartyProgram {
            parties: 3,
            protocol: BEAVER.into(),
        };
        assert!(CpuBackend.supports(&beaver).is_ok());
        for (parties, protocol) in [(2, "dealer2"), (3, "beaver3"), (2, REP3)] {
            let other = PartyProgram {
                parties,
                protocol: protocol.into(),
            };
            let e = CpuBackend.supports(&other).unwrap_err().0;
            assert!(
                e.contains(protocol) && e.contains("three-party `rep3` and `beaver`"),
                "{e}"
            );
        }
    }

    /// `ir` with the digits that end local value names removed (`%slot12` -> `%slot`, `%0` -> `%`).
    fn strip_name_numbers(ir: &str) -> String {
        let mut out = String::with_capacity(ir.len());
        let mut in_name = false;
        for c in ir.chars() {
            if c == '%' {
                in_name = true;
                out.push(c);
                continue;
            }
            if in_name && !(c.is_ascii_alphanumeric() || c == '.' || c == '_') {
                // Drop the trailing digits of the name just ended.
                let name_start = out.rfind('%').unwrap_or(0) + 1;
                while out.len() > name_start && out.ends_with(|d: char| d.is_ascii_digit()) {
                    out.pop();
                }
                in_name = false;
            }
            out.push(c);
        }
        out
    }
}
