//! The small vocabulary every GPU kernel generator is written in: one builder with the integer
//! helpers the kernels use, and the [`Flavor`] a kernel body is instantiated for (the NVPTX
//! kernel, or its host twin that the tests run on this CPU).

use super::super::CodegenError;
use inkwell::{
    basic_block::BasicBlock,
    builder::Builder,
    context::Context,
    intrinsics::Intrinsic,
    module::Module,
    types::{IntType, PointerType},
    values::{FunctionValue, IntValue, PointerValue},
    AddressSpace, IntPredicate,
};

pub fn err(e: impl std::fmt::Display) -> CodegenError {
    CodegenError(e.to_string())
}

/// What a kernel body is instantiated for. The arithmetic, the addressing of the limb planes
/// and the epilogue are emitted by the same code for both; only where threads come from and
/// which address space the buffers live in differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// A `ptx_kernel` for LLVM's NVPTX back end: buffers in the global address space (1),
    /// threads from `%tid`/`%ctaid`.
    Nvptx,
    /// A plain host function over host pointers (address space 0) that loops over what the
    /// GPU's threads would each do: the twin the tests JIT and compare with the references.
    Host,
}

impl Flavor {
    pub fn address_space(self) -> AddressSpace {
        match self {
            Flavor::Nvptx => AddressSpace::from(1u16),
            Flavor::Host => AddressSpace::default(),
        }
    }
}

/// LLVM's calling convention number for `ptx_kernel` (an entry point of the PTX module).
pub const PTX_KERNEL_CC: u32 = 71;

/// A kernel parameter's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// A buffer (in the flavor's address space).
    Buf,
    I32,
    I64,
}

/// Declares the kernel `name(params) -> void` for `flavor` (a `ptx_kernel` on the GPU); `None`
/// if `module` already has it.
pub fn declare_kernel<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    name: &str,
    params: &[Param],
    flavor: Flavor,
) -> Option<FunctionValue<'ctx>> {
    if module.get_function(name).is_some() {
        return None;
    }
    let buf = cx.ptr_type(flavor.address_space());
    let types: Vec<inkwell::types::BasicMetadataTypeEnum> = params
        .iter()
        .map(|p| match p {
            Param::Buf => buf.into(),
            Param::I32 => cx.i32_type().into(),
            Param::I64 => cx.i64_type().into(),
        })
        .collect();
    let f = module.add_function(name, cx.void_type().fn_type(&types, false), None);
    if flavor == Flavor::Nvptx {
        f.set_call_conventions(PTX_KERNEL_CC);
    }
    Some(f)
}

/// A builder positioned in one function, with the types and helpers the kernels use.
pub struct Ir<'ctx, 'm> {
    pub cx: &'ctx Context,
    pub module: &'m Module<'ctx>,
    pub b: Builder<'ctx>,
    pub f: FunctionValue<'ctx>,
    pub flavor: Flavor,
}

impl<'ctx, 'm> Ir<'ctx, 'm> {
    /// Starts `f` with an `entry` block.
    pub fn new(
        cx: &'ctx Context,
        module: &'m Module<'ctx>,
        f: FunctionValue<'ctx>,
        flavor: Flavor,
    ) -> Self {
        let b = cx.create_builder();
        let entry = cx.append_basic_block(f, "entry");
        b.position_at_end(entry);
        Ir {
            cx,
            module,
            b,
            f,
            flavor,
        }
    }

    pub fn i8t(&self) -> IntType<'ctx> {
        self.cx.i8_type()
    }
    pub fn i32t(&self) -> IntType<'ctx> {
        self.cx.i32_type()
    }
    pub fn i64t(&self) -> IntType<'ctx> {
        self.cx.i64_type()
    }
    /// The storage word of a ring of `width`.
    pub fn word(&self, width: irisc_runtime::contract::gpu::LimbWidth) -> IntType<'ctx> {
        match width {
            irisc_runtime::contract::gpu::LimbWidth::W16 => self.cx.i16_type(),
            irisc_runtime::contract::gpu::LimbWidth::W32 => self.cx.i32_type(),
        }
    }
    /// A pointer in the flavor's buffer address space.
    pub fn buf(&self) -> PointerType<'ctx> {
        self.cx.ptr_type(self.flavor.address_space())
    }
    pub fn c64(&self, v: u64) -> IntValue<'ctx> {
        self.i64t().const_int(v, false)
    }
    pub fn c32(&self, v: u64) -> IntValue<'ctx> {
        self.i32t().const_int(v, false)
    }

    pub fn param(&self, i: u32) -> Result<inkwell::values::BasicValueEnum<'ctx>, CodegenError> {
        self.f
            .get_nth_param(i)
            .ok_or_else(|| err(format!("kernel parameter {i} missing")))
    }
    pub fn int_param(&self, i: u32) -> Result<IntValue<'ctx>, CodegenError> {
        Ok(self.param(i)?.into_int_value())
    }
    pub fn ptr_param(&self, i: u32) -> Result<PointerValue<'ctx>, CodegenError> {
        Ok(self.param(i)?.into_pointer_value())
    }

    pub fn add(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_add(a, b, "").map_err(err)
    }
    pub fn sub(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_sub(a, b, "").map_err(err)
    }
    pub fn mul(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_mul(a, b, "").map_err(err)
    }
    pub fn udiv(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_unsigned_div(a, b, "").map_err(err)
    }
    pub fn urem(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_unsigned_rem(a, b, "").map_err(err)
    }
    pub fn shl(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_left_shift(a, b, "").map_err(err)
    }
    pub fn lshr(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_right_shift(a, b, false, "").map_err(err)
    }
    pub fn ult(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b
            .build_int_compare(IntPredicate::ULT, a, b, "")
            .map_err(err)
    }
    pub fn and(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_and(a, b, "").map_err(err)
    }
    pub fn xor(
        &self,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_xor(a, b, "").map_err(err)
    }
    pub fn eq(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> Result<IntValue<'ctx>, CodegenError> {
        self.b
            .build_int_compare(IntPredicate::EQ, a, b, "")
            .map_err(err)
    }
    pub fn ne0(&self, a: IntValue<'ctx>) -> Result<IntValue<'ctx>, CodegenError> {
        self.b
            .build_int_compare(IntPredicate::NE, a, a.get_type().const_zero(), "")
            .map_err(err)
    }
    pub fn select(
        &self,
        c: IntValue<'ctx>,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        Ok(self
            .b
            .build_select(c, a, b, "")
            .map_err(err)?
            .into_int_value())
    }
    pub fn trunc(
        &self,
        a: IntValue<'ctx>,
        t: IntType<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_truncate_or_bit_cast(a, t, "").map_err(err)
    }
    pub fn zext(
        &self,
        a: IntValue<'ctx>,
        t: IntType<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_z_extend_or_bit_cast(a, t, "").map_err(err)
    }
    pub fn sext(
        &self,
        a: IntValue<'ctx>,
        t: IntType<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        self.b.build_int_s_extend_or_bit_cast(a, t, "").map_err(err)
    }

    /// A stack slot of `t` in the entry block (so the optimiser promotes it to a register
    /// wherever the builder is now, a loop body included).
    pub fn entry_alloca(
        &self,
        t: IntType<'ctx>,
        name: &str,
    ) -> Result<PointerValue<'ctx>, CodegenError> {
        let entry = self
            .f
            .get_first_basic_block()
            .ok_or_else(|| err("the kernel has no entry block"))?;
        let b = self.cx.create_builder();
        match entry.get_first_instruction() {
            Some(first) => b.position_before(&first),
            None => b.position_at_end(entry),
        }
        b.build_alloca(t, name).map_err(err)
    }

    /// `&base[index]` for elements of type `elem`.
    pub fn at(
        &self,
        elem: IntType<'ctx>,
        base: PointerValue<'ctx>,
        index: IntValue<'ctx>,
    ) -> Result<PointerValue<'ctx>, CodegenError> {
        // SAFETY (of the generated code): every index the kernels form is inside the buffer
        // the contract describes.
        unsafe { self.b.build_in_bounds_gep(elem, base, &[index], "") }.map_err(err)
    }
    pub fn load(
        &self,
        t: IntType<'ctx>,
        p: PointerValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        Ok(self.b.build_load(t, p, "").map_err(err)?.into_int_value())
    }
    pub fn store(&self, p: PointerValue<'ctx>, v: IntValue<'ctx>) -> Result<(), CodegenError> {
        self.b.build_store(p, v).map_err(err).map(|_| ())
    }

    pub fn block(&self, name: &str) -> BasicBlock<'ctx> {
        self.cx.append_basic_block(self.f, name)
    }
    pub fn br(&self, to: BasicBlock<'ctx>) -> Result<(), CodegenError> {
        self.b
            .build_unconditional_branch(to)
            .map_err(err)
            .map(|_| ())
    }
    pub fn cond_br(
        &self,
        c: IntValue<'ctx>,
        then: BasicBlock<'ctx>,
        els: BasicBlock<'ctx>,
    ) -> Result<(), CodegenError> {
        self.b
            .build_conditional_branch(c, then, els)
            .map_err(err)
            .map(|_| ())
    }
    pub fn ret(&self) -> Result<(), CodegenError> {
        self.b.build_return(None).map_err(err).map(|_| ())
    }

    /// `for i in (start..end).step_by(step) { body(i) }` over i64, the body emitted once.
    pub fn range(
        &self,
        name: &str,
        start: IntValue<'ctx>,
        end: IntValue<'ctx>,
        step: IntValue<'ctx>,
        body: &mut dyn FnMut(&Self, IntValue<'ctx>) -> Result<(), CodegenError>,
    ) -> Result<(), CodegenError> {
        let pre = self
            .b
            .get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
        let head = self.block(&format!("{name}.head"));
        let body_bb = self.block(&format!("{name}.body"));
        let done = self.block(&format!("{name}.done"));
        self.br(head)?;
        self.b.position_at_end(head);
        let i = self.b.build_phi(self.i64t(), name).map_err(err)?;
        i.add_incoming(&[(&start, pre)]);
        let iv = i.as_basic_value().into_int_value();
        let go = self.ult(iv, end)?;
        self.cond_br(go, body_bb, done)?;
        self.b.position_at_end(body_bb);
        body(self, iv)?;
        let next = self.add(iv, step)?;
        let latch = self
            .b
            .get_insert_block()
            .ok_or_else(|| err("builder has no block"))?;
        i.add_incoming(&[(&next, latch)]);
        self.br(head)?;
        self.b.position_at_end(done);
        Ok(())
    }

    /// The thread's first item and the stride of a grid-stride loop over items on the GPU
    /// (`ctaid.x * ntid.x + tid.x`, `nctaid.x * ntid.x`); every item in turn on the host.
    pub fn grid_stride(&self) -> Result<(IntValue<'ctx>, IntValue<'ctx>), CodegenError> {
        Ok(match self.flavor {
            Flavor::Nvptx => {
                let ntid = self.sreg("ntid.x")?;
                let first =
                    self.add(self.mul(self.sreg("ctaid.x")?, ntid)?, self.sreg("tid.x")?)?;
                (first, self.mul(self.sreg("nctaid.x")?, ntid)?)
            }
            Flavor::Host => (self.c64(0), self.c64(1)),
        })
    }

    /// The little-endian word of type `t` at byte `offset` of `bytes`, read byte by byte (it
    /// may be unaligned: a keystream's unread bytes start anywhere in a block).
    pub fn load_le(
        &self,
        t: IntType<'ctx>,
        bytes: PointerValue<'ctx>,
        offset: IntValue<'ctx>,
    ) -> Result<IntValue<'ctx>, CodegenError> {
        let mut w = t.const_zero();
        for k in 0..u64::from(t.get_bit_width() / 8) {
            let byte = self.load(
                self.i8t(),
                self.at(self.i8t(), bytes, self.add(offset, self.c64(k))?)?,
            )?;
            let byte = self.shl(self.zext(byte, t)?, t.const_int(8 * k, false))?;
            w = self.b.build_or(w, byte, "").map_err(err)?;
        }
        Ok(w)
    }

    /// The value of an NVPTX special register (`tid.x`, `ctaid.y`, `ntid.x`, `nctaid.x`), as
    /// i64.
    pub fn sreg(&self, name: &str) -> Result<IntValue<'ctx>, CodegenError> {
        let full = format!("llvm.nvvm.read.ptx.sreg.{name}");
        let f = Intrinsic::find(&full)
            .and_then(|i| i.get_declaration(self.module, &[]))
            .ok_or_else(|| err(format!("LLVM has no intrinsic {full}")))?;
        let v = self
            .b
            .build_call(f, &[], name)
            .map_err(err)?
            .try_as_basic_value()
            .basic()
            .ok_or_else(|| err(format!("{full} returns nothing")))?
            .into_int_value();
        self.zext(v, self.i64t())
    }
}
