//! The AMX kernel: dot products over Z_2^16 (replicated Z16, and GR(2^16, d) with the
//! Lagrange coefficient folded into the query) and over F_p on Intel AMX-INT8 tiles, the CPU
//! counterpart of paper 003 Section 4.4's int8 tensor-core products.
//!
//! A tile multiply (`TDPBUUD`) takes 16 x 64 u8 by 64 x 16 u8 into 16 x 16 i32: 16 384 byte
//! products per instruction, about 1 000 per cycle on a core that has it, where the 16-bit
//! vector peak (`vpdpwssd zmm`, two per cycle) is 64. A 16-bit product needs four byte
//! products here, so the tiles reach several times the vector peak in 16-bit products.
//!
//! The operands, without a limb split of the gallery: A is the gallery rows read as bytes in
//! place (word k of a record is bytes `2k` (`g_lo`) and `2k + 1` (`g_hi`)), 16 records per A
//! tile, 64 bytes (32 words) per K step. B holds two columns per query code (laid out once per
//! call by the runtime, `irisc_runtime::kernels::amx::Columns`): `(q_lo, 0)` under each word's
//! two bytes gives `C0 = Σ g_lo q_lo`, and `(q_hi, q_lo)` gives `C1 = Σ g_lo q_hi + g_hi q_lo`;
//! `<g, q> ≡ C0 + 256 C1 (mod 2^16)` (the `g_hi q_hi` term is a multiple of 2^16; the i32
//! sums wrap mod 2^32). A replicated product's second side (eq. 6, `- <q_b, g_b>`) is the
//! columns of `-q_b` over `g_b`, summed into the same tiles. F_p's kernel takes a third column
//! `(0, q_hi)`, `C2 = Σ g_hi q_hi`, and reduces the exact `C0 + 256 C1 + 65 536 C2` mod p
//! once (the sums stay below 2^31 for codes of up to 16 384 words): six byte products per word
//! product where the vector kernels' ceiling is two instructions per 32 (`isa`).
//!
//! The loop nest (register block: 2 x 2 accumulator tiles of 16 records x 8 codes, the 8 tile
//! registers being 4 sums, 2 A and 2 B): record panels (160-256 records, the runtime's
//! `panel_records`), inside them K chunks of one side (16 steps, 1 KiB of each row; 8 steps
//! for calls of more than 8 B tiles, `K_CHUNK_STEPS_MANY_TILES`; two sides: all of the first side's
//! chunks, then the second's, so that one side's rows share L1
//! at a time: rows 25 600 bytes apart fall on a quarter of L1's sets), inside them blocks of 32
//! records and pairs of B tiles; each (block, pair) loads its sums so far from the
//! caller's buffer (zero in the first chunk), runs the chunk's steps, and stores
//! them back; after the panel's last chunk its sums are combined into `out`'s u16 words. A
//! chunk of the panel's rows (32 KiB a block) stays in L1 while the pairs pass, and the
//! chunk's B tiles (16 KiB a pair; with 8 steps a block's rows and a pair's tiles share L1)
//! in L2 while the blocks pass. Measured on one core at
//! L = 12 800, 248 codes, from memory: 19-20 M dot products/s in this nest against 11.6 M with
//! the sums held in tiles over the whole of K (which re-reads a block's whole rows per pair).
//! The caller runs whole record blocks here and the rest in the vector kernel.
//!
//! inkwell has no `x86_amx` type, so the kernel is written as LLVM IR text, specialised to the
//! code length and sides, and parsed into the module's context; the tile values cross the loop
//! as `<256 x i32>` with LLVM's AMX cast intrinsics (the form clang's tile API produces), which
//! the X86 back end turns into tile registers and a `ldtilecfg` of the shapes.

use super::{CodegenError, DotRing};
use inkwell::{
    context::Context, memory_buffer::MemoryBuffer, module::Module, values::FunctionValue,
};
pub use irisc_runtime::kernels::amx::Form;
use irisc_runtime::kernels::amx::{
    FEW_TILES, K_CHUNK_STEPS, K_CHUNK_STEPS_MANY_TILES, RECORD_BLOCK, STEP_BYTES, STEP_WORDS,
    TILE_BYTES,
};

/// The x86 features the AMX kernel is generated with (and the runtime checks, with the
/// operating system's permission, before it runs one).
pub const FEATURES: &str = "+amx-tile,+amx-int8,+avx2,+avx512f,+avx512bw,+avx512vl,+avx512dq";

/// The form of (`ring`)'s AMX kernel sums: mod 2^16 for the wrapping rings, exact and reduced
/// mod p for F_p; None for the 32- and 64-bit rings (no byte split of 16-bit words).
pub fn form(ring: DotRing) -> Option<Form> {
    match ring {
        DotRing::Z16 | DotRing::Gr16 => Some(Form::Wrap16),
        DotRing::Fp => Some(Form::Exact),
        _ => None,
    }
}

/// Whether an AMX kernel exists for (`ring`, `l`): a 16-bit ring, codes of whole K steps (and,
/// for F_p, short enough for exact i32 sums).
pub fn applies(ring: DotRing, l: u32) -> bool {
    form(ring).is_some_and(|f| f.applies(l as usize))
}

/// `irisc_kernel_dot_{ring}_L{l}_amx`.
pub fn kernel_name(ring: DotRing, l: u32) -> String {
    format!("irisc_kernel_dot_{}_L{l}_amx", ring.tag())
}

/// Returns the AMX kernel for (`ring`, `l`), defining it in `module` the first time.
pub fn kernel<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    ring: DotRing,
    l: u32,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    let name = kernel_name(ring, l);
    if let Some(f) = module.get_function(&name) {
        return Ok(f);
    }
    if !applies(ring, l) {
        return Err(CodegenError(format!(
            "no AMX kernel for {} codes of {l} words",
            ring.tag()
        )));
    }
    let form = form(ring).expect("applies checked the ring");
    let text = ir_text(&name, ring.sides(), form, l, module);
    let buffer = MemoryBuffer::create_from_memory_range_copy(text.as_bytes(), &name);
    let part = cx
        .create_module_from_ir(buffer)
        .map_err(|e| CodegenError(format!("AMX kernel IR: {}", e.to_string_lossy())))?;
    module
        .link_in_module(part)
        .map_err(|e| CodegenError(format!("AMX kernel link: {}", e.to_string_lossy())))?;
    module
        .get_function(&name)
        .ok_or_else(|| CodegenError(format!("AMX kernel {name} missing after linking")))
}

/// The kernel's LLVM IR: `void @name(ptr cols, i64 tiles, ptr ga, ptr gb, i64 n_records, ptr
/// out, i64 n_codes, ptr sums, i64 panel)`, the runtime's `AmxDotKernel`; `n_records` and
/// `panel` multiples of 32, `sums` holding `panel x 16 tiles` i32.
fn ir_text(name: &str, sides: u32, form: Form, l: u32, module: &Module<'_>) -> String {
    let row_bytes = 2 * u64::from(l);
    let steps = u64::from(l) / STEP_WORDS as u64;
    let (tile_bytes, step_bytes) = (TILE_BYTES as u64, STEP_BYTES as u64);
    // The K steps of all sides in turn: step u is side u / steps, step u mod steps of it.
    let all_steps = steps * u64::from(sides.max(1));
    let half = RECORD_BLOCK as u64 / 2;
    let host = inkwell::targets::TargetMachine::get_host_cpu_name();
    let tune = host.to_str().unwrap_or("generic");
    let mut s = String::new();
    let mut line = |t: String| {
        s.push_str(&t);
        s.push('\n');
    };
    let layout = module.get_data_layout();
    line(format!(
        "target datalayout = \"{}\"",
        layout.as_str().to_string_lossy()
    ));
    line(format!(
        "target triple = \"{}\"",
        module.get_triple().as_str().to_string_lossy()
    ));
    line(format!(
        "define void @{name}(ptr noalias readonly %cols, i64 %tiles, ptr noalias readonly %ga, \
         ptr noalias readonly %gb, i64 %n_records, ptr noalias %out, i64 %n_codes, \
         ptr noalias %sums, i64 %panel) #0 {{"
    ));
    // Bytes of one side's columns, of a row of sums (16 i32 per tile).
    line("entry:".into());
    line(format!(
        "  %side_bytes = mul i64 %tiles, {}",
        steps * tile_bytes
    ));
    line("  %sum_row = mul i64 %tiles, 64".into());
    // The K chunk's steps for this call's tiles (`irisc_runtime::kernels::amx::K_CHUNK_STEPS_MANY_TILES`).
    line(format!("  %few = icmp ule i64 %tiles, {FEW_TILES}"));
    line(format!(
        "  %chunk_steps = select i1 %few, i64 {K_CHUNK_STEPS}, i64 {K_CHUNK_STEPS_MANY_TILES}"
    ));
    line("  br label %panel.top".into());
    // Record panels of `panel` records (the last may be shorter).
    line("panel.top:".into());
    line("  %p0 = phi i64 [ 0, %entry ], [ %p0.next, %combine.done ]".into());
    line("  %p.left = sub i64 %n_records, %p0".into());
    line("  %p.short = icmp ult i64 %p.left, %panel".into());
    line("  %np = select i1 %p.short, i64 %p.left, i64 %panel".into());
    line(format!("  %g.panel = mul i64 %p0, {row_bytes}"));
    line("  br label %chunk".into());
    // K chunks of `chunk_steps` steps of one side (the side's last may be shorter).
    line("chunk:".into());
    line("  %u = phi i64 [ 0, %panel.top ], [ %u.next, %blk.done ]".into());
    line(format!("  %side = udiv i64 %u, {steps}"));
    line(format!("  %t0 = urem i64 %u, {steps}"));
    line("  %side0 = icmp eq i64 %side, 0".into());
    line("  %g.side = select i1 %side0, ptr %ga, ptr %gb".into());
    line("  %b.side = mul i64 %side, %side_bytes".into());
    line(format!("  %c.left = sub i64 {steps}, %t0"));
    line("  %c.short = icmp ult i64 %c.left, %chunk_steps".into());
    line("  %st = select i1 %c.short, i64 %c.left, i64 %chunk_steps".into());
    line("  %first = icmp eq i64 %u, 0".into());
    line(format!("  %a.chunk = mul i64 %t0, {step_bytes}"));
    line(format!("  %b.chunk = mul i64 %t0, {tile_bytes}"));
    line("  br label %blk".into());
    // Blocks of 32 records of the panel.
    line("blk:".into());
    line("  %r0 = phi i64 [ 0, %chunk ], [ %r0.next, %pair.done ]".into());
    line(format!("  %g.blk0 = mul i64 %r0, {row_bytes}"));
    line("  %g.blk1 = add i64 %g.blk0, %g.panel".into());
    line("  %g.off = add i64 %g.blk1, %a.chunk".into());
    line("  %s.row = mul i64 %r0, %sum_row".into());
    line("  br label %pair".into());
    // Pairs of B tiles: the block's sums so far (zero in the first chunk), then the chunk's
    // steps, then the sums back.
    line("pair:".into());
    line("  %t = phi i64 [ 0, %blk ], [ %t.next, %pair.next ]".into());
    line("  %s.col = mul i64 %t, 64".into());
    line("  %s.off = add i64 %s.row, %s.col".into());
    line("  %s.at0 = getelementptr i8, ptr %sums, i64 %s.off".into());
    line("  %s.at1 = getelementptr i8, ptr %s.at0, i64 64".into());
    line("  %s.down = mul i64 %sum_row, 16".into());
    line("  %s.at2 = getelementptr i8, ptr %s.at0, i64 %s.down".into());
    line("  %s.at3 = getelementptr i8, ptr %s.at2, i64 64".into());
    line(format!("  %b.tile = mul i64 %t, {}", steps * tile_bytes));
    line("  %b.tc = add i64 %b.tile, %b.chunk".into());
    line("  %b.off = add i64 %b.tc, %b.side".into());
    line("  br i1 %first, label %init.zero, label %init.load".into());
    line("init.zero:".into());
    for acc in 0..4 {
        line(format!(
            "  %z{acc} = call x86_amx @llvm.x86.tilezero.internal(i16 16, i16 64)"
        ));
        line(format!(
            "  %zero{acc} = call <256 x i32> @llvm.x86.cast.tile.to.vector.v256i32(x86_amx %z{acc})"
        ));
    }
    line("  br label %init".into());
    line("init.load:".into());
    for acc in 0..4 {
        line(format!(
            "  %l{acc} = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, ptr \
             %s.at{acc}, i64 %sum_row)"
        ));
        line(format!(
            "  %load{acc} = call <256 x i32> @llvm.x86.cast.tile.to.vector.v256i32(x86_amx %l{acc})"
        ));
    }
    line("  br label %init".into());
    line("init:".into());
    for acc in 0..4 {
        line(format!(
            "  %init{acc} = phi <256 x i32> [ %zero{acc}, %init.zero ], [ %load{acc}, %init.load ]"
        ));
    }
    // The chunk's steps of the block and pair: the sums carried in tiles from step to step.
    let incoming = {
        let (side, g, k, from) = (0, "%g.side", "k0".to_string(), "init");
        let incoming = [0, 1, 2, 3].map(|acc| format!("%init{acc}"));
        line(format!(
            "  %a{side}.base = getelementptr i8, ptr {g}, i64 %g.off"
        ));
        line(format!(
            "  %b{side}.base = getelementptr i8, ptr %cols, i64 %b.off"
        ));
        line(format!("  br label %{k}"));
        line(format!("{k}:"));
        line(format!(
            "  %{k}.i = phi i64 [ 0, %{from} ], [ %{k}.i.next, %{k} ]"
        ));
        for (acc, inc) in incoming.iter().enumerate() {
            line(format!(
                "  %{k}.c{acc} = phi <256 x i32> [ {inc}, %{from} ], [ %{k}.d{acc}, %{k} ]"
            ));
        }
        line(format!("  %{k}.aoff = mul i64 %{k}.i, {step_bytes}"));
        line(format!(
            "  %{k}.a0p = getelementptr i8, ptr %a{side}.base, i64 %{k}.aoff"
        ));
        line(format!(
            "  %{k}.a1p = getelementptr i8, ptr %{k}.a0p, i64 {}",
            half * row_bytes
        ));
        line(format!("  %{k}.boff = mul i64 %{k}.i, {tile_bytes}"));
        line(format!(
            "  %{k}.b0p = getelementptr i8, ptr %b{side}.base, i64 %{k}.boff"
        ));
        line(format!(
            "  %{k}.b1p = getelementptr i8, ptr %{k}.b0p, i64 {}",
            steps * tile_bytes
        ));
        for (tile, p, stride) in [
            ("a0", "a0p", row_bytes),
            ("a1", "a1p", row_bytes),
            ("b0", "b0p", 64),
            ("b1", "b1p", 64),
        ] {
            line(format!(
                "  %{k}.{tile} = call x86_amx @llvm.x86.tileloadd64.internal(i16 16, i16 64, \
                 ptr %{k}.{p}, i64 {stride})"
            ));
        }
        for (acc, (a, b)) in [("a0", "b0"), ("a0", "b1"), ("a1", "b0"), ("a1", "b1")]
            .iter()
            .enumerate()
        {
            line(format!(
                "  %{k}.t{acc} = call x86_amx @llvm.x86.cast.vector.to.tile.v256i32(<256 x i32> \
                 %{k}.c{acc})"
            ));
            line(format!(
                "  %{k}.m{acc} = call x86_amx @llvm.x86.tdpbuud.internal(i16 16, i16 64, i16 64, \
                 x86_amx %{k}.t{acc}, x86_amx %{k}.{a}, x86_amx %{k}.{b})"
            ));
            line(format!(
                "  %{k}.d{acc} = call <256 x i32> @llvm.x86.cast.tile.to.vector.v256i32(x86_amx \
                 %{k}.m{acc})"
            ));
        }
        line(format!("  %{k}.i.next = add nuw nsw i64 %{k}.i, 1"));
        line(format!("  %{k}.done = icmp eq i64 %{k}.i.next, %st"));
        line(format!("  br i1 %{k}.done, label %{k}.exit, label %{k}"));
        line(format!("{k}.exit:"));
        [0, 1, 2, 3].map(|acc| format!("%{k}.d{acc}"))
    };
    for (acc, inc) in incoming.iter().enumerate() {
        line(format!(
            "  %st{acc} = call x86_amx @llvm.x86.cast.vector.to.tile.v256i32(<256 x i32> {inc})"
        ));
        line(format!(
            "  call void @llvm.x86.tilestored64.internal(i16 16, i16 64, ptr %s.at{acc}, i64 \
             %sum_row, x86_amx %st{acc})"
        ));
    }
    line("  br label %pair.next".into());
    line("pair.next:".into());
    line("  %t.next = add i64 %t, 2".into());
    line("  %t.more = icmp ult i64 %t.next, %tiles".into());
    line("  br i1 %t.more, label %pair, label %pair.done".into());
    line("pair.done:".into());
    line(format!("  %r0.next = add i64 %r0, {RECORD_BLOCK}"));
    line("  %r0.more = icmp ult i64 %r0.next, %np".into());
    line("  br i1 %r0.more, label %blk, label %blk.done".into());
    line("blk.done:".into());
    line("  %u.next = add i64 %u, %st".into());
    line(format!("  %u.more = icmp ult i64 %u.next, {all_steps}"));
    line("  br i1 %u.more, label %chunk, label %combine".into());
    // out[(p0 + r) * n_codes + c]: code c's columns of the sums' row r (tile c / per_tile,
    // column 16 tile + columns x (c mod per_tile)): C0 + 256 C1 mod 2^16, or C0 + 256 C1 +
    // 65 536 C2 (exact, below 2^48) mod p.
    let (columns, per_tile) = (form.columns(), form.codes_per_tile());
    line("combine:".into());
    line("  %r = phi i64 [ 0, %blk.done ], [ %r.next, %row.done ]".into());
    line("  %rec = add i64 %p0, %r".into());
    line("  %o.row = mul i64 %rec, %n_codes".into());
    line("  %c.row = mul i64 %r, %sum_row".into());
    line("  %c.rowp = getelementptr i8, ptr %sums, i64 %c.row".into());
    line("  br label %col".into());
    line("col:".into());
    line("  %j = phi i64 [ 0, %combine ], [ %j.next, %col ]".into());
    line(format!("  %j.tile = udiv i64 %j, {per_tile}"));
    line(format!("  %j.in = urem i64 %j, {per_tile}"));
    line("  %j.t16 = shl i64 %j.tile, 4".into());
    line(format!("  %j.cols = mul i64 %j.in, {columns}"));
    line("  %c0.i = add i64 %j.t16, %j.cols".into());
    line("  %c0.p = getelementptr i32, ptr %c.rowp, i64 %c0.i".into());
    line("  %c0 = load i32, ptr %c0.p, align 4".into());
    line("  %c1.p = getelementptr i32, ptr %c0.p, i64 1".into());
    line("  %c1 = load i32, ptr %c1.p, align 4".into());
    match form {
        Form::Wrap16 => {
            line("  %c1s = shl i32 %c1, 8".into());
            line("  %sum = add i32 %c0, %c1s".into());
            line("  %word = trunc i32 %sum to i16".into());
        }
        Form::Exact => {
            line("  %c2.p = getelementptr i32, ptr %c0.p, i64 2".into());
            line("  %c2 = load i32, ptr %c2.p, align 4".into());
            line("  %e0 = zext i32 %c0 to i64".into());
            line("  %e1 = zext i32 %c1 to i64".into());
            line("  %e2 = zext i32 %c2 to i64".into());
            line("  %e1s = shl i64 %e1, 8".into());
            line("  %e2s = shl i64 %e2, 16".into());
            line("  %e01 = add i64 %e0, %e1s".into());
            line("  %exact = add i64 %e01, %e2s".into());
            line(format!("  %reduced = urem i64 %exact, {}", super::P));
            line("  %word = trunc i64 %reduced to i16".into());
        }
    }
    line("  %o.i = add i64 %o.row, %j".into());
    line("  %o.p = getelementptr i16, ptr %out, i64 %o.i".into());
    line("  store i16 %word, ptr %o.p, align 2".into());
    line("  %j.next = add nuw nsw i64 %j, 1".into());
    line("  %j.done = icmp eq i64 %j.next, %n_codes".into());
    line("  br i1 %j.done, label %row.done, label %col".into());
    line("row.done:".into());
    line("  %r.next = add nuw nsw i64 %r, 1".into());
    line("  %r.done = icmp eq i64 %r.next, %np".into());
    line("  br i1 %r.done, label %combine.done, label %combine".into());
    line("combine.done:".into());
    line("  %p0.next = add i64 %p0, %np".into());
    line("  %p0.more = icmp ult i64 %p0.next, %n_records".into());
    line("  br i1 %p0.more, label %panel.top, label %exit".into());
    line("exit:".into());
    line("  ret void".into());
    line("}".into());
    for decl in [
        "declare x86_amx @llvm.x86.tilezero.internal(i16, i16)",
        "declare x86_amx @llvm.x86.tileloadd64.internal(i16, i16, ptr, i64)",
        "declare x86_amx @llvm.x86.tdpbuud.internal(i16, i16, i16, x86_amx, x86_amx, x86_amx)",
        "declare void @llvm.x86.tilestored64.internal(i16, i16, ptr, i64, x86_amx)",
        "declare <256 x i32> @llvm.x86.cast.tile.to.vector.v256i32(x86_amx)",
        "declare x86_amx @llvm.x86.cast.vector.to.tile.v256i32(<256 x i32>)",
    ] {
        line(decl.into());
    }
    line(format!(
        "attributes #0 = {{ nounwind \"target-cpu\"=\"x86-64\" \"target-features\"=\"{FEATURES}\" \
         \"tune-cpu\"=\"{tune}\" }}"
    ));
    s
}
