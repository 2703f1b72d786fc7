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
const ENTRY_POINTS: &[(&str, A, &[A])] = {
    use A::{Ptr, I32, I64};
    &[
        ("irisc_rt_start", Ptr, &[I32, Ptr, Ptr, I64]),
        ("irisc_rt_query_count", I64, &[Ptr]),
        ("irisc_rt_finish", I32, &[Ptr, I32]),
        // (rt, dst, input, part, query or -1, ring_bits)
        ("irisc_rt_load_input", I32, &[Ptr, I32, I32, I32, I64, I32]),
        (
            "irisc_rt_load_earlier",
            I32,
            &[Ptr, I32, I32, I32, I64, I32],
        ),
        ("irisc_rt_rotate", I32, &[Ptr, I32, I32, I32, I32]),
        // (rt, dst, codes, gallery, kernel table [portable, avx2, avx512, vnni])
        ("irisc_rt_masked_dot", I32, &[Ptr, I32, I32, I32, Ptr]),
        ("irisc_rt_self_dot", I32, &[Ptr, I32, I32]),
        // (rt, dst, codes, gallery, kernel table or null)
        ("irisc_rt_shamir_dot", I32, &[Ptr, I32, I32, I32, Ptr]),
        ("irisc_rt_reshare", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_reshare_p", I32, &[Ptr, I32, I32]),
        ("irisc_rt_mask_len", I32, &[Ptr, I32, I32, I32]),
        // (rt, dst, dot, ml, num, den, k)
        (
            "irisc_rt_sub_threshold",
            I32,
            &[Ptr, I32, I32, I32, I64, I64, I32],
        ),
        (
            "irisc_rt_sub_threshold_p",
            I32,
            &[Ptr, I32, I32, I32, I64, I64],
        ),
        // (rt, dst, x, y, a, b, k)
        ("irisc_rt_lin", I32, &[Ptr, I32, I32, I32, I64, I64, I32]),
        (
            "irisc_rt_lin_mod",
            I32,
            &[Ptr, I32, I32, I32, I64, I64, I32],
        ),
        // (rt, dst, src, m, k_out)
        ("irisc_rt_const_lift", I32, &[Ptr, I32, I32, I32, I32]),
        // (rt, dst, src, k_in, k_out)
        ("irisc_rt_lift", I32, &[Ptr, I32, I32, I32, I32]),
        ("irisc_rt_lift_p", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_const_lift_p", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_mul", I32, &[Ptr, I32, I32, I32, I32]),
        ("irisc_rt_msb", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_msb_p", I32, &[Ptr, I32, I32]),
        ("irisc_rt_msb_mod", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_const_bits", I32, &[Ptr, I32, I32]),
        ("irisc_rt_not", I32, &[Ptr, I32, I32]),
        ("irisc_rt_and", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_or", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_mux", I32, &[Ptr, I32, I32, I32, I32]),
        ("irisc_rt_or_groups", I32, &[Ptr, I32, I32, I64]),
        ("irisc_rt_and_groups", I32, &[Ptr, I32, I32, I64]),
        ("irisc_rt_bit_inject", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_sum_groups", I32, &[Ptr, I32, I32, I64]),
        ("irisc_rt_open", I32, &[Ptr, I32, I32, I32]),
        ("irisc_rt_open_int", I32, &[Ptr, I32, I32, I32]),
        // (rt, query, src, records or -1, shape, field, field_len)
        ("irisc_rt_output", I32, &[Ptr, I64, I32, I32, I32, Ptr, I64]),
        ("irisc_rt_emit", I32, &[Ptr, I64]),
        // Tiled schedules (see `tiling`): (rt, gallery) -> chunks, or negative on failure.
        ("irisc_rt_chunk_count", I64, &[Ptr, I32]),
        // (rt, dst, gallery, chunk, with_shares: 0 where only ids and public masks are read)
        ("irisc_rt_gallery_view", I32, &[Ptr, I32, I32, I64, I32]),
        // (rt, dst_base, codes_base, queries, gallery, chunk, kernel table or null, kind:
        // 0 masked_dot, 1 shamir_dot)
        (
            "irisc_rt_batch_dot",
            I32,
            &[Ptr, I32, I32, I64, I32, I64, Ptr, I32],
        ),
        // (rt, acc, src, first)
        ("irisc_rt_append", I32, &[Ptr, I32, I32, I32]),
    ]
};

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
