//! The dot-product kernels irisc generates: one family per ring and sharing, specialised to the
//! code length L, each in ISA variants gathered in a constant table that the runtime dispatches
//! on at run time (`irisc_runtime::kernels::dispatch`).
//!
//! Every kernel has the C signature of `irisc_runtime::kernels::MaskedDotKernelU16` (u16, u32 or
//! u64 words) and computes, record-major,
//! `out[r*n_codes + c] = sum over sides s of sign_s * <q_s[c], g_s[r]>`:
//! - [`DotRing::Z16`], [`DotRing::Z32`], [`DotRing::Z64`]: replicated Z_2^k, two sides `(+, -)`:
//!   each party holds its shares prepared as `(x'_i, x'_{i-1})`, so its additive share of a
//!   product is two plain dot products (Appendix C, eq. 6); wrapping in the storage word;
//! - [`DotRing::Gr16`]: Shamir over GR(2^16, d) with the Lagrange coefficient folded into the
//!   query (Section 4.3.2): one side, L = d*ceil(len/d) words, wrapping mod 2^16;
//! - [`DotRing::Fp`]: Shamir over F_p, p = 65519: one side, words below p, deferred reduction
//!   (exact wide accumulators, one reduction mod p per K chunk, see [`isa`]); the output is
//!   below p (`fp::dot`'s result, before `shamir_to_additive`).
//!
//! [`gemm`] is the loop nest (register tiles of records x codes so the gallery streams from
//! memory once per call), [`isa`] the multiply-accumulate step of each instruction set.

pub mod amx;
pub mod gemm;
pub mod isa;
pub mod polyphase;

use super::CodegenError;
use inkwell::{
    context::Context,
    module::{Linkage, Module},
    targets::TargetMachine,
    values::{BasicValue, FunctionValue, GlobalValue},
};

pub use crate::analysis::kernel_tile::KernelTile;
pub use isa::{Isa, IsaCodegen};

/// The prime of the F_p sharing (the runtime's).
pub const P: u64 = irisc_runtime::share::fp::P as u64;

/// Bits of the storage type of a ring Z_2^k: u16 for k <= 16, u32 for k <= 32, u64 otherwise,
/// as the runtime stores shares (one definition, the runtime's).
pub fn storage_bits(ring_bits: u32) -> u32 {
    irisc_runtime::ring::storage_for(ring_bits.clamp(1, 64)).bits()
}

/// The ring and sharing of a dot-product kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DotRing {
    /// Replicated Z_2^k, k <= 16, u16 words, sides (+, -) (eq. 6).
    Z16,
    /// Replicated Z_2^k, 16 < k <= 32, u32 words, sides (+, -).
    Z32,
    /// Replicated Z_2^k, 32 < k <= 64, u64 words, sides (+, -).
    Z64,
    /// Shamir over GR(2^16, d): one side of u16 words (the prepared query, Section 4.3.2).
    Gr16,
    /// Shamir over F_p: one side of u16 words below p, output below p.
    Fp,
}

impl DotRing {
    pub const ALL: [DotRing; 5] = [
        DotRing::Z16,
        DotRing::Z32,
        DotRing::Z64,
        DotRing::Gr16,
        DotRing::Fp,
    ];

    /// The replicated ring whose shares are stored in `width`-bit words.
    pub fn replicated(width: u32) -> Result<DotRing, CodegenError> {
        match width {
            16 => Ok(DotRing::Z16),
            32 => Ok(DotRing::Z32),
            64 => Ok(DotRing::Z64),
            _ => Err(CodegenError(format!("no dot kernel for u{width} words"))),
        }
    }

    /// Bits of a storage word.
    pub fn bits(self) -> u32 {
        match self {
            DotRing::Z32 => 32,
            DotRing::Z64 => 64,
            _ => 16,
        }
    }

    /// Dot products per (record, code) pair: 2 for replicated shares (eq. 6), 1 for Shamir.
    pub fn sides(self) -> u32 {
        match self {
            DotRing::Z16 | DotRing::Z32 | DotRing::Z64 => 2,
            DotRing::Gr16 | DotRing::Fp => 1,
        }
    }

    pub fn tag(self) -> &'static str {
        match self {
            DotRing::Z16 => "z16",
            DotRing::Z32 => "z32",
            DotRing::Z64 => "z64",
            DotRing::Gr16 => "gr16",
            DotRing::Fp => "fp",
        }
    }

    /// The ISA variants generated for this ring on an x86-64 (or other) target: the 16-bit
    /// rings (Z16, GR16, F_p) have all four; u32/u64 have no VNNI form (the table slot stays
    /// null and the runtime falls back to AVX-512).
    pub fn variants(self, x86: bool) -> Vec<Isa> {
        if !x86 {
            return vec![Isa::Portable];
        }
        match self {
            DotRing::Z16 | DotRing::Gr16 | DotRing::Fp => Isa::ALL.to_vec(),
            _ => vec![Isa::Portable, Isa::Avx2, Isa::Avx512],
        }
    }
}

/// `irisc_kernel_dot_{ring}_L{l}_{isa}`: one ISA variant with the default tile.
pub fn kernel_name(ring: DotRing, l: u32, isa: Isa) -> String {
    format!("irisc_kernel_dot_{}_L{l}_{}", ring.tag(), isa.name())
}

/// `irisc_kernels_dot_{ring}_L{l}`: the table of variants the schedule passes to the runtime,
/// `[portable, avx2, avx512, vnni]`, null where a variant is not generated.
pub fn table_name(ring: DotRing, l: u32) -> String {
    format!("irisc_kernels_dot_{}_L{l}", ring.tag())
}

/// [`kernel_name`] of the variant generated for `tile` (the IR's; None: the default).
pub fn kernel_name_tiled(ring: DotRing, l: u32, isa: Isa, tile: Option<&KernelTile>) -> String {
    format!(
        "{}{}",
        kernel_name(ring, l, isa),
        tile_suffix(ring, l, tile)
    )
}

/// What a recorded tile changes in the names: nothing for the default shape, else
/// `_t{records}x{codes}` and `_p{codes per panel}`.
fn tile_suffix(ring: DotRing, l: u32, tile: Option<&KernelTile>) -> String {
    let wide = shape(Isa::Vnni, ring, l, tile);
    if wide == gemm::Shape::default_for(Isa::Vnni, ring) {
        return String::new();
    }
    let mut s = format!("_t{}x{}", wide.tile.0, wide.tile.1);
    if wide.code_panel > 0 {
        s.push_str(&format!("_p{}", wide.code_panel));
    }
    if wide.k_chunk != gemm::Shape::default_for(Isa::Vnni, ring).k_chunk {
        s.push_str(&format!("_k{}", wide.k_chunk));
    }
    if wide.record_panel > 0 {
        s.push_str(&format!("_r{}", wide.record_panel));
    }
    s
}

/// The loop nest of variant `isa` for (`ring`, `l`) under the tile the IR records (`None`: the
/// ISA's default): the 512-bit variants take the recorded register tile, and all take its code
/// panels (the panel's codes: the panel bytes over a code's bytes, whole tiles of codes, at
/// least one tile).
pub fn shape(isa: Isa, ring: DotRing, l: u32, tile: Option<&KernelTile>) -> gemm::Shape {
    let mut s = gemm::Shape::default_for(isa, ring);
    let Some(t) = tile else {
        return s;
    };
    if matches!(isa, Isa::Avx512 | Isa::Vnni) {
        s.tile = (t.records, t.codes);
    }
    // K chunks: the recorded bytes of a code row, in whole vectors of words, where that is
    // shorter than the row and within the ISA's own limit (F_p's exact accumulators).
    if t.k_chunk_bytes > 0 && ring.bits() == 16 && isa != Isa::Portable {
        let lanes = u64::from(isa.lanes(ring));
        let words = t.k_chunk_bytes / (u64::from(ring.sides()) * 2) / lanes * lanes;
        let limit = match isa.k_chunk(ring) {
            0 => u64::MAX,
            max => u64::from(max),
        };
        let words = words.min(limit);
        if words >= lanes && words < u64::from(l) {
            s.k_chunk = words as u32;
        }
    }
    // Code panels: the recorded bytes over the bytes of a code the loop nest holds at once (its
    // rows' K chunk where the kernel runs K chunks, else its whole rows), in whole code tiles,
    // at least one tile. What must stay in cache while the records pass is one chunk of each
    // code of the panel: sized by whole rows, 1 MiB held 36 GR16 codes of 12 800 words, and
    // 1 984 codes read the gallery from memory 56 times per call.
    if t.panel_bytes > 0 {
        let words = if s.k_chunk > 0 && s.k_chunk < l {
            s.k_chunk
        } else {
            l
        };
        let code_bytes = u64::from(ring.sides()) * u64::from(words) * u64::from(ring.bits() / 8);
        let c = u64::from(s.tile.1);
        let codes = (t.panel_bytes / code_bytes.max(1)) / c * c;
        s.code_panel = u32::try_from(codes.max(c)).unwrap_or(u32::MAX);
    }
    // Record panels: the recorded bytes over one record's rows in a chunk, in whole record
    // tiles, at least one tile; only where the kernel runs K chunks.
    if t.record_panel_bytes > 0 && s.k_chunk > 0 && s.k_chunk < l {
        let record_bytes =
            u64::from(ring.sides()) * u64::from(s.k_chunk) * u64::from(ring.bits() / 8);
        let r = u64::from(s.tile.0);
        let records = (t.record_panel_bytes / record_bytes.max(1)) / r * r;
        s.record_panel = u32::try_from(records.max(r)).unwrap_or(u32::MAX);
    }
    s
}

/// Whether the host (the module's target) is x86-64, where the x86 variants are generated.
pub fn host_is_x86() -> bool {
    TargetMachine::get_default_triple()
        .as_str()
        .to_string_lossy()
        .starts_with("x86_64")
}

/// Returns the ISA variant `isa` of the kernel for (`ring`, `l`) with the default tile,
/// defining it in `module` the first time. `l` is the code length in words (for GR,
/// d*ceil(len/d)).
pub fn kernel<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    ring: DotRing,
    l: u32,
    isa: Isa,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    kernel_tiled(cx, module, ring, l, isa, None)
}

/// [`kernel`] with the tile the IR records on the dot op.
pub fn kernel_tiled<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    ring: DotRing,
    l: u32,
    isa: Isa,
    tile: Option<&KernelTile>,
) -> Result<FunctionValue<'ctx>, CodegenError> {
    let name = kernel_name_tiled(ring, l, isa, tile);
    if let Some(f) = module.get_function(&name) {
        return Ok(f);
    }
    if l == 0 {
        return Err(CodegenError(format!(
            "no {} dot kernel for L = 0",
            ring.tag()
        )));
    }
    gemm::define(cx, module, &name, ring, l, isa, shape(isa, ring, l, tile))
}

/// Returns the table of all variants of the kernel for (`ring`, `l`) for the host target,
/// defining the kernels and the table the first time: a private constant
/// `{ [4 x ptr], i64, [4 x ptr], [4 x ptr], [2 x i64], ptr, i64 }` (variants indexed by
/// [`Isa::index`], then `l`, then each variant's second loop nest or null, each variant's
/// polyphase kernel or null, the shifts the polyphase kernels are for, the AMX kernel or null
/// and the form of its sums, [`amx`]), the runtime's `KernelTable`.
pub fn table<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    ring: DotRing,
    l: u32,
) -> Result<GlobalValue<'ctx>, CodegenError> {
    table_tiled(cx, module, ring, l, None, None)
}

/// [`table`] of the kernels with the tile the IR records on the dot op (`None`: the default).
/// Where the tile asks for the unchunked alternative, each variant whose loop nest it changes
/// gets that nest (in the alternative register tile, for the 512-bit variants) as its second,
/// for the runtime to measure (`irisc_runtime::kernels::nest`). `polyphase`: the shifts
/// `(lo, hi)` of the op's rotated query rows, whose polyphase kernels ([`polyphase`]) the table
/// then holds too, where they exist for (`ring`, `l`).
pub fn table_tiled<'ctx>(
    cx: &'ctx Context,
    module: &Module<'ctx>,
    ring: DotRing,
    l: u32,
    tile: Option<&KernelTile>,
    polyphase: Option<(i32, i32)>,
) -> Result<GlobalValue<'ctx>, CodegenError> {
    let polyphase = polyphase.filter(|_| polyphase::applies(ring, l));
    let variants = ring.variants(host_is_x86());
    // The second nest, where it changes some variant's loop nest (the portable variant runs no
    // K chunks and no recorded tile, so its nest is the first).
    let alternative = tile
        .filter(|t| t.unchunked_alternative)
        .map(|t| t.unchunked())
        .filter(|alt| {
            variants
                .iter()
                .any(|&isa| shape(isa, ring, l, Some(alt)) != shape(isa, ring, l, tile))
        });
    // `_or_unchunked`, or `_or` and the second nest's own suffix where it has one.
    let second = match &alternative {
        None => String::new(),
        Some(alt) => match tile_suffix(ring, l, Some(alt)) {
            s if s.is_empty() => "_or_unchunked".to_string(),
            s => format!("_or{s}"),
        },
    };
    let shifts = |v: i32| match v {
        v if v < 0 => format!("m{}", v.unsigned_abs()),
        v => v.to_string(),
    };
    let poly = polyphase.map_or(String::new(), |(lo, hi)| {
        format!("_poly{}_{}", shifts(lo), shifts(hi))
    });
    let name = format!(
        "{}{}{second}{poly}",
        table_name(ring, l),
        tile_suffix(ring, l, tile)
    );
    if let Some(g) = module.get_global(&name) {
        return Ok(g);
    }
    let ptr = cx.ptr_type(Default::default());
    let mut slots = vec![ptr.const_null(); Isa::ALL.len()];
    let mut seconds = vec![ptr.const_null(); Isa::ALL.len()];
    for isa in variants {
        let f = kernel_tiled(cx, module, ring, l, isa, tile)?;
        slots[isa.index()] = f.as_global_value().as_pointer_value();
        if let Some(alt) = &alternative {
            if shape(isa, ring, l, Some(alt)) != shape(isa, ring, l, tile) {
                let g = kernel_tiled(cx, module, ring, l, isa, Some(alt))?;
                seconds[isa.index()] = g.as_global_value().as_pointer_value();
            }
        }
    }
    let mut polys = vec![ptr.const_null(); Isa::ALL.len()];
    if let Some((lo, hi)) = polyphase {
        // Half rows per call: 3 per two shifts for each query of the call (the tile's codes
        // per call; one query without a tile).
        let form = irisc_runtime::kernels::polyphase::Polyphase::new(lo, hi, l as usize)
            .ok_or_else(|| CodegenError(format!("no polyphase form for shifts {lo}..={hi}")))?;
        let rotations = form.rotations() as u64;
        let queries = tile.map_or(1, |t| t.call_codes.div_ceil(rotations).max(1));
        let half_rows = 3 * queries * form.rows_per_part() as u64;
        for (isa, f) in polyphase::variants(cx, module, ring, l, half_rows)? {
            polys[isa.index()] = f.as_global_value().as_pointer_value();
        }
    }
    let (lo, hi) = polyphase.unwrap_or((0, 0));
    // The AMX kernel: x86-64 hosts, the rings and lengths it takes; the runtime runs it where
    // the CPU has AMX-INT8 and the operating system grants the tile data.
    let amx = if host_is_x86() && amx::applies(ring, l) {
        amx::kernel(cx, module, ring, l)?
            .as_global_value()
            .as_pointer_value()
    } else {
        ptr.const_null()
    };
    let i64t = cx.i64_type();
    let init = cx.const_struct(
        &[
            ptr.const_array(&slots).into(),
            i64t.const_int(l.into(), false).into(),
            ptr.const_array(&seconds).into(),
            ptr.const_array(&polys).into(),
            i64t.const_array(&[
                i64t.const_int(lo as u64, true),
                i64t.const_int(hi as u64, true),
            ])
            .into(),
            amx.into(),
            i64t.const_int(amx::form(ring).map_or(0, |f| f as u64), false)
                .into(),
        ],
        false,
    );
    let g = module.add_global(init.get_type(), None, &name);
    g.set_initializer(&init.as_basic_value_enum());
    g.set_constant(true);
    g.set_linkage(Linkage::Private);
    Ok(g)
}

#[cfg(test)]
mod tests;
