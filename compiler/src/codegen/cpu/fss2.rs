//! The CPU backend for the two-server family `fss2` (paper 002): one executable per role
//! (`OUT-server`, `OUT-dealer`, `OUT-client`), each an LLVM module holding the program's
//! manifest and a `main` that hands the role to the runtime's `irisc_rt_fss2_main`; the server's
//! module also holds the SS.IP kernel generated from `mpc.ss_ip` for the program's dimension
//! (a constant trip count, which `default<O3>` unrolls and vectorises for the host).
//!
//! The schedule of each role is fixed by the paper (Protocols 1 and 2), so it lives in the
//! runtime, behind the one entry point the contract lists for these ops; what the compiler
//! decides (dimension, ring, gates, threshold, roles, trap instances) reaches it through the
//! manifest read from the IR ([`crate::codegen::fss2_manifest`]).

use super::super::artifact::{Artifact, CodegenError, CompileError, Emit};
use super::super::backend::Job;
use super::super::link;
use super::abi::entry_point;
use super::target;
use inkwell::{
    attributes::{Attribute, AttributeLoc},
    context::Context,
    module::Module,
    AddressSpace, IntPredicate,
};
use irisc_runtime::contract::Fss2Role;
use std::path::{Path, PathBuf};

fn err(m: impl Into<String>) -> CodegenError {
    CodegenError(m.into())
}

fn ok<T>(r: Result<T, inkwell::builder::BuilderError>) -> Result<T, CodegenError> {
    r.map_err(|e| err(e.to_string()))
}

/// The kernel's symbol.
pub const SS_IP_KERNEL: &str = "irisc_fss2_ss_ip";

/// The roles, in the order their executables are written.
pub const ROLES: [Fss2Role; 3] = [Fss2Role::Server, Fss2Role::Dealer, Fss2Role::Client];

/// The executable of `role` for the output path `out`: `out-server` and so on.
pub fn role_path(out: &Path, role: Fss2Role) -> PathBuf {
    let mut name = out.file_name().unwrap_or_default().to_os_string();
    name.push(format!("-{}", role.name()));
    out.with_file_name(name)
}

/// Emits `i64 irisc_fss2_ss_ip(i64 b, ptr dx, ptr rx, ptr dy, ptr ry, i64 u)`: server `b`'s
/// additive share of `<x, y>` (SS.IP, Section 3.1) over `dim` words, wrapping in Z_2^64:
/// `b * sum dx_i dy_i - sum (dx_i ry_i + dy_i rx_i) + u`.
pub fn ss_ip_kernel<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    dim: u64,
) -> Result<(), CodegenError> {
    if dim == 0 {
        return Err(err("SS.IP over vectors of no words"));
    }
    let i64t = cx.i64_type();
    let ptr = cx.ptr_type(AddressSpace::default());
    let f = module.add_function(
        SS_IP_KERNEL,
        i64t.fn_type(
            &[
                i64t.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                ptr.into(),
                i64t.into(),
            ],
            false,
        ),
        None,
    );
    // The vectors are only read, never aliased with a write: what lets LLVM vectorise freely.
    for i in 1..=4 {
        for a in ["readonly", "noalias"] {
            let kind = Attribute::get_named_enum_kind_id(a);
            // 0: this LLVM does not know the attribute; the kernel is correct without it.
            if kind != 0 {
                f.add_attribute(AttributeLoc::Param(i), cx.create_enum_attribute(kind, 0));
            }
        }
    }
    let b = cx.create_builder();
    let entry = cx.append_basic_block(f, "entry");
    let body = cx.append_basic_block(f, "terms");
    let exit = cx.append_basic_block(f, "done");
    let p = |i: u32| f.get_nth_param(i).ok_or_else(|| err("kernel parameter"));
    let (server, dx, rx, dy, ry, u) = (p(0)?, p(1)?, p(2)?, p(3)?, p(4)?, p(5)?);
    b.position_at_end(entry);
    ok(b.build_unconditional_branch(body))?;
    b.position_at_end(body);
    let i = ok(b.build_phi(i64t, "i"))?;
    let public = ok(b.build_phi(i64t, "public"))?;
    let cross = ok(b.build_phi(i64t, "cross"))?;
    let iv = i.as_basic_value().into_int_value();
    let load = |base: inkwell::values::BasicValueEnum<'ctx>, name: &str| {
        let at = unsafe {
            b.build_in_bounds_gep(
                i64t,
                base.into_pointer_value(),
                &[iv],
                &format!("{name}.at"),
            )
        }
        .map_err(|e| err(e.to_string()))?;
        b.build_load(i64t, at, name)
            .map(|v| v.into_int_value())
            .map_err(|e| err(e.to_string()))
    };
    let (vdx, vrx, vdy, vry) = (
        load(dx, "dx")?,
        load(rx, "rx")?,
        load(dy, "dy")?,
        load(ry, "ry")?,
    );
    let pp = ok(b.build_int_mul(vdx, vdy, "dxdy"))?;
    let public_next =
        ok(b.build_int_add(public.as_basic_value().into_int_value(), pp, "public.next"))?;
    let c1 = ok(b.build_int_mul(vdx, vry, "dxry"))?;
    let c2 = ok(b.build_int_mul(vdy, vrx, "dyrx"))?;
    let c = ok(b.build_int_add(c1, c2, "terms"))?;
    let cross_next = ok(b.build_int_add(cross.as_basic_value().into_int_value(), c, "cross.next"))?;
    let i_next = ok(b.build_int_add(iv, i64t.const_int(1, false), "i.next"))?;
    let more = ok(b.build_int_compare(
        IntPredicate::ULT,
        i_next,
        i64t.const_int(dim, false),
        "more",
    ))?;
    ok(b.build_conditional_branch(more, body, exit))?;
    let zero = i64t.const_zero();
    i.add_incoming(&[(&zero, entry), (&i_next, body)]);
    public.add_incoming(&[(&zero, entry), (&public_next, body)]);
    cross.add_incoming(&[(&zero, entry), (&cross_next, body)]);
    b.position_at_end(exit);
    let scaled = ok(b.build_int_mul(server.into_int_value(), public_next, "b.public"))?;
    let diff = ok(b.build_int_sub(scaled, cross_next, "minus.cross"))?;
    let share = ok(b.build_int_add(diff, u.into_int_value(), "share"))?;
    ok(b.build_return(Some(&share)))?;
    Ok(())
}

/// The LLVM module of `role`: the manifest, the kernel (server), and `main`.
pub fn role_module<'ctx>(
    cx: &'ctx Context,
    name: &str,
    role: Fss2Role,
    dim: u64,
    manifest_json: &str,
) -> Result<Module<'ctx>, CodegenError> {
    let module = cx.create_module(&format!("{name}-{}", role.name()));
    let i32t = cx.i32_type();
    let i64t = cx.i64_type();
    let ptr = cx.ptr_type(AddressSpace::default());
    let manifest = super::schedule::embed_manifest(cx, &module, manifest_json);
    let kernel = if role == Fss2Role::Server {
        ss_ip_kernel(cx, &module, dim)?;
        module
            .get_function(SS_IP_KERNEL)
            .map(|f| f.as_global_value().as_pointer_value())
    } else {
        None
    };
    let main = module.add_function(
        "main",
        i32t.fn_type(&[i32t.into(), ptr.into()], false),
        None,
    );
    let b = cx.create_builder();
    b.position_at_end(cx.append_basic_block(main, "entry"));
    let (argc, argv) = (
        main.get_nth_param(0)
            .ok_or_else(|| err("main has no argc"))?,
        main.get_nth_param(1)
            .ok_or_else(|| err("main has no argv"))?,
    );
    let run = entry_point(cx, &module, "irisc_rt_fss2_main")
        .ok_or_else(|| err("the contract has no irisc_rt_fss2_main"))?;
    let code = b
        .build_call(
            run,
            &[
                i32t.const_int(role.abi() as u64, false).into(),
                argc.into(),
                argv.into(),
                manifest.as_pointer_value().into(),
                i64t.const_int(manifest_json.len() as u64, false).into(),
                kernel.unwrap_or_else(|| ptr.const_null()).into(),
            ],
            "code",
        )
        .map_err(|e| err(e.to_string()))?
        .try_as_basic_value()
        .basic()
        .ok_or_else(|| err("irisc_rt_fss2_main returns nothing"))?;
    b.build_return(Some(&code))
        .map_err(|e| err(e.to_string()))?;
    module
        .verify()
        .map_err(|e| err(format!("the generated LLVM module does not verify: {e}")))?;
    Ok(module)
}

/// `irisc build --protocol fss2`: the three role executables (or their optimised LLVM, or the
/// server's object).
pub fn generate(job: &Job<'_, '_>, dim: u64) -> Result<Artifact, CompileError> {
    let machine = target::host_machine()?;
    let cx = Context::create();
    let modules = ROLES
        .iter()
        .map(|&role| {
            let m = role_module(&cx, job.name, role, dim, job.manifest_json)?;
            target::optimize(&m, &machine)?;
            Ok((role, m))
        })
        .collect::<Result<Vec<_>, CodegenError>>()?;
    match job.emit {
        Emit::Llvm => Ok(Artifact::Text(
            modules
                .iter()
                .map(|(role, m)| {
                    format!(
                        "; ---- the {} executable ----\n{}",
                        role.name(),
                        m.print_to_string().to_string()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        )),
        Emit::Obj => {
            let out = job
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(format!("{}.o", job.name)));
            let written = modules
                .iter()
                .map(|(role, m)| {
                    let path = role_path(&out, *role);
                    target::write_object(m, &machine, &path)?;
                    Ok(path)
                })
                .collect::<Result<Vec<_>, CodegenError>>()?;
            Ok(Artifact::Files(written))
        }
        _ => {
            let out = job
                .output
                .clone()
                .unwrap_or_else(|| PathBuf::from(job.name));
            let dir = tempfile::tempdir().map_err(|e| {
                CompileError::Io(format!("cannot create a temporary directory: {e}"))
            })?;
            let mut written = Vec::new();
            for (role, m) in &modules {
                let object = dir.path().join(format!("{}-{}.o", job.name, role.name()));
                target::write_object(m, &machine, &object)?;
                let path = role_path(&out, *role);
                link::link(&object, &path)?;
                written.push(path);
            }
            Ok(Artifact::Files(written))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use inkwell::OptimizationLevel;
    use irisc_runtime::fss2::kernel::{IpKernel, SsIpFn};
    use irisc_runtime::fss2::sharing::ss_ip;
    use proptest::prelude::*;

    /// The generated kernel for `dim`, optimised for the host and JIT-compiled, with the engine
    /// that owns its code.
    fn jit(
        dim: u64,
    ) -> (
        IpKernel,
        inkwell::execution_engine::ExecutionEngine<'static>,
    ) {
        let cx: &'static Context = Box::leak(Box::new(Context::create()));
        let module = cx.create_module("ss_ip");
        ss_ip_kernel(cx, &module, dim).unwrap();
        let tm = target::host_machine().unwrap();
        target::optimize(&module, &tm).unwrap();
        let ee = module
            .create_jit_execution_engine(OptimizationLevel::Aggressive)
            .unwrap();
        // SAFETY: the function just generated, with this signature, reading `dim` words each.
        let f = unsafe {
            std::mem::transmute::<usize, SsIpFn>(ee.get_function_address(SS_IP_KERNEL).unwrap())
        };
        (unsafe { IpKernel::generated(f, dim as usize) }, ee)
    }

    /// Words biased to the ring's edges (0, 1, 2^63 - 1, 2^63, 2^64 - 1), where wrapping
    /// arithmetic goes wrong first.
    fn word() -> impl Strategy<Value = u64> {
        prop_oneof![
            Just(0u64),
            Just(1),
            Just(u64::MAX),
            Just(1 << 63),
            Just((1 << 63) - 1),
            any::<u64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The kernel equals the runtime's SS.IP (the definition of Section 3.1, tested there
        /// against plain ring arithmetic) for both servers, at dimensions that exercise the
        /// vector body and its remainder.
        #[test]
        fn the_generated_ss_ip_is_the_definition(
            dim in prop_oneof![Just(1usize), Just(3), Just(16), Just(17), Just(192), 1usize..300],
            seed in any::<u64>(),
            edges in proptest::collection::vec(word(), 4),
            u in word(),
        ) {
            let (kernel, _ee) = jit(dim as u64);
            let mut s = seed | 1;
            let mut next = |k: usize| -> u64 {
                s ^= s << 13; s ^= s >> 7; s ^= s << 17;
                if s % 5 == 0 { edges[k] } else { s }
            };
            let v: Vec<Vec<u64>> = (0..4).map(|k| (0..dim).map(|_| next(k)).collect()).collect();
            for b in 0..2 {
                prop_assert_eq!(
                    kernel.ip(b, &v[0], &v[1], &v[2], &v[3], u),
                    ss_ip(b, &v[0], &v[1], &v[2], &v[3], u)
                );
            }
        }
    }

    #[test]
    fn every_role_module_verifies_and_only_the_server_holds_the_kernel() {
        let cx = Context::create();
        for role in ROLES {
            let m = role_module(&cx, "t", role, 8, r#"{"abi":1}"#).unwrap();
            assert_eq!(
                m.get_function(SS_IP_KERNEL).is_some(),
                role == Fss2Role::Server,
                "{role:?}"
            );
            assert!(m.get_function("main").is_some());
        }
        assert_eq!(
            role_path(Path::new("/x/voice"), Fss2Role::Dealer),
            PathBuf::from("/x/voice-dealer")
        );
        assert!(ss_ip_kernel(&cx, &cx.create_module("z"), 0).is_err());
    }
}
