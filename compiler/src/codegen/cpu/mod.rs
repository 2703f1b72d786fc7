//! CPU code generation: the `mpc` module to one LLVM module holding the party schedule
//! ([`schedule`]), the dot-product kernels it passes to the runtime as tables of ISA variants
//! ([`kernel`]) and the manifest; then `default<O3>` and an object file for the host ([`target`]).

pub mod abi;
pub mod kernel;
pub mod schedule;
pub mod target;

use inkwell::{context::Context, module::Module};
use melior::ir::Module as MlirModule;

/// A code-generation failure, with what went wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("code generation: {0}")]
pub struct CodegenError(pub String);

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
        let mpc = PassManager::irs_to_mpc_pipeline(choices)
            .run(&cx, m, None)
            .unwrap();
        let llcx = Context::create();
        let module = generate(&llcx, "dedup", &mpc, r#"{"abi":1}"#).unwrap();
        let ir = module.print_to_string().to_string();
        let order = [
            "call ptr @irisc_rt_start(i32 %0, ptr %1, ptr @irisc_manifest, i64 9)",
            "call i32 @irisc_rt_load_input(ptr %rt, i32 0, i32 0, i32 0, i64 -1, i32 16)",
            "call i64 @irisc_rt_query_count(ptr %rt)",
            "call i32 @irisc_rt_load_input(ptr %rt, i32 1, i32 1, i32 0, i64 %q, i32 16)",
            "call i32 @irisc_rt_rotate(ptr %rt, i32 2, i32 1, i32 -15, i32 15)",
            "call i32 @irisc_rt_masked_dot(ptr %rt, i32 3, i32 2, i32 0, ptr @irisc_kernels_dot_z16_L12800)",
            "call i32 @irisc_rt_reshare(ptr %rt, i32 4, i32 3, i32 16)",
            "call i32 @irisc_rt_mask_len(ptr %rt, i32 5, i32 2, i32 0)",
            "call i32 @irisc_rt_sub_threshold(ptr %rt, i32 6, i32 4, i32 5, i64 69, i64 200, i32 16)",
            "call i32 @irisc_rt_msb(ptr %rt, i32 7, i32 6, i32 16)",
            "call i32 @irisc_rt_or_groups(ptr %rt, i32 8, i32 7, i64 0)",
            "call i32 @irisc_rt_open(ptr %rt, i32 9, i32 8, i32 0)",
            "call i32 @irisc_rt_output(ptr %rt, i64 %q, i32 9, i32 -1, i32 0, ptr @irisc_label, i64 5)",
            "call i32 @irisc_rt_emit(ptr %rt, i64 %q)",
        ];
        let mut at = 0;
        for call in order {
            let found = ir[at..]
                .find(call)
                .unwrap_or_else(|| panic!("missing or out of order: {call}\n{ir}"));
            at += found + call.len();
        }
        // Success and failure both finish the runtime and return its exit code.
        assert!(
            ir.contains("call i32 @irisc_rt_finish(ptr %rt, i32 0)"),
            "{ir}"
        );
        assert!(
            ir.contains("call i32 @irisc_rt_finish(ptr %rt, i32 1)"),
            "{ir}"
        );
        // One status check per runtime op (12 ops).
        assert_eq!(ir.matches("br i1 %ok").count(), 12, "{ir}");
        assert!(
            ir.contains(r#"@irisc_manifest = private constant [9 x i8] c"{\22abi\22:1}""#),
            "{ir}"
        );
    }
}
