//! Declarations of the runtime's C ABI that the party schedule calls, built from the
//! contract's table of entry points (`irisc_runtime::abi::ENTRY_POINTS`, generated with the
//! runtime's wrappers from one list): no entry point is declared by hand here. Every `i32`
//! status is 0 on success; on failure the runtime has already printed why.

use inkwell::{
    context::Context,
    module::Module,
    types::{BasicMetadataTypeEnum, FunctionType},
    values::FunctionValue,
};
use irisc_runtime::contract::{self, CType, EntryPoint};

/// The contract's entry points.
pub fn entry_points() -> &'static [EntryPoint] {
    irisc_runtime::abi::ENTRY_POINTS
}

/// The LLVM function type of `e`.
fn fn_type<'ctx>(cx: &'ctx Context, e: &EntryPoint) -> FunctionType<'ctx> {
    let ptr = cx.ptr_type(Default::default());
    let arg = |t: CType| -> BasicMetadataTypeEnum<'ctx> {
        match t {
            CType::Ptr => ptr.into(),
            CType::I32 => cx.i32_type().into(),
            CType::I64 => cx.i64_type().into(),
        }
    };
    let args: Vec<_> = e.args.iter().map(|a| arg(a.kind.c_type())).collect();
    match e.result.c_type() {
        CType::Ptr => ptr.fn_type(&args, false),
        CType::I32 => cx.i32_type().fn_type(&args, false),
        CType::I64 => cx.i64_type().fn_type(&args, false),
    }
}

/// The declaration of runtime entry point `name` in `module` (declared on first use).
/// `None` for a name the contract does not have.
pub fn entry_point<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
) -> Option<FunctionValue<'ctx>> {
    if let Some(f) = module.get_function(name) {
        return Some(f);
    }
    let e = contract::find(entry_points(), name)?;
    Some(module.add_function(e.name, fn_type(cx, e), None))
}

/// The declaration of the entry point that implements `mpc` op `op` (name without `mpc.`).
pub fn entry_point_for<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    op: &str,
) -> Option<FunctionValue<'ctx>> {
    let e = contract::implementing(entry_points(), op)?;
    entry_point(cx, module, e.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every entry point declares with as many parameters as the contract lists, of the C
    /// types of its kinds; unknown names are refused.
    #[test]
    fn declarations_follow_the_contract() {
        let cx = Context::create();
        let module = cx.create_module("m");
        for e in entry_points() {
            let f = entry_point(&cx, &module, e.name).expect(e.name);
            assert_eq!(f.count_params() as usize, e.args.len(), "{}", e.name);
            for (p, a) in f.get_params().iter().zip(e.args) {
                let want = match a.kind.c_type() {
                    CType::Ptr => p.is_pointer_value(),
                    CType::I32 => {
                        p.is_int_value() && p.into_int_value().get_type().get_bit_width() == 32
                    }
                    CType::I64 => {
                        p.is_int_value() && p.into_int_value().get_type().get_bit_width() == 64
                    }
                };
                assert!(want, "{} argument {}", e.name, a.name);
            }
        }
        assert!(entry_point(&cx, &module, "irisc_rt_xor").is_none());
        assert!(entry_point_for(&cx, &module, "msb").is_some());
    }
}
