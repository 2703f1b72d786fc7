//! Declarations of the runtime's C ABI (`irisc_runtime::abi`) that the party schedule calls.
//! Every `i32` result is 0 on success; on failure the runtime has already printed why.

use inkwell::{
    context::Context, module::Module, types::BasicMetadataTypeEnum, values::FunctionValue,
};

/// Argument kinds of the ABI, in LLVM terms.
#[derive(Clone, Copy)]
enum A {
    Ptr,
    I32,
    I64,
}

/// (name, result, arguments) of every entry point.
const ENTRY_POINTS: &[(&str, A, &[A])] = &[
    ("irisc_rt_start", A::Ptr, &[A::I32, A::Ptr, A::Ptr, A::I64]),
    ("irisc_rt_query_count", A::I64, &[A::Ptr]),
    ("irisc_rt_load_query", A::I32, &[A::Ptr, A::I64, A::I32]),
    ("irisc_rt_load_gallery", A::I32, &[A::Ptr, A::I32]),
    (
        "irisc_rt_rotate",
        A::I32,
        &[A::Ptr, A::I32, A::I32, A::I32, A::I32],
    ),
    (
        "irisc_rt_masked_dot",
        A::I32,
        &[A::Ptr, A::I32, A::I32, A::I32, A::Ptr],
    ),
    (
        "irisc_rt_reshare",
        A::I32,
        &[A::Ptr, A::I32, A::I32, A::I32],
    ),
    (
        "irisc_rt_mask_len",
        A::I32,
        &[A::Ptr, A::I32, A::I32, A::I32],
    ),
    (
        "irisc_rt_sub_threshold",
        A::I32,
        &[A::Ptr, A::I32, A::I32, A::I32, A::I64, A::I64, A::I32],
    ),
    ("irisc_rt_msb", A::I32, &[A::Ptr, A::I32, A::I32, A::I32]),
    (
        "irisc_rt_or_groups",
        A::I32,
        &[A::Ptr, A::I32, A::I32, A::I64],
    ),
    ("irisc_rt_open", A::I32, &[A::Ptr, A::I32, A::I32, A::I32]),
    (
        "irisc_rt_output",
        A::I32,
        &[A::Ptr, A::I64, A::I32, A::I32, A::I32, A::Ptr, A::I64],
    ),
    ("irisc_rt_finish", A::I32, &[A::Ptr, A::I32]),
];

/// The declaration of runtime entry point `name` in `module` (declared on first use).
/// `None` for a name the ABI does not have.
pub fn entry_point<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
) -> Option<FunctionValue<'ctx>> {
    if let Some(f) = module.get_function(name) {
        return Some(f);
    }
    let (_, ret, args) = ENTRY_POINTS.iter().find(|(n, _, _)| *n == name)?;
    let ptr = cx.ptr_type(Default::default());
    let arg = |a: &A| -> BasicMetadataTypeEnum<'ctx> {
        match a {
            A::Ptr => ptr.into(),
            A::I32 => cx.i32_type().into(),
            A::I64 => cx.i64_type().into(),
        }
    };
    let args: Vec<_> = args.iter().map(arg).collect();
    let fn_t = match ret {
        A::Ptr => ptr.fn_type(&args, false),
        A::I32 => cx.i32_type().fn_type(&args, false),
        A::I64 => cx.i64_type().fn_type(&args, false),
    };
    Some(module.add_function(name, fn_t, None))
}
