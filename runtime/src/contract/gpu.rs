//! The GPU kernel contract: the names, parameters, layouts and launch shapes of the PTX kernels
//! that the compiler's CUDA backend generates (`irisc::codegen::cuda`) and the runtime's CUDA
//! path launches (`irisc_runtime::gpu`, cargo feature `cuda`). Defined once, here, so that the
//! two cannot disagree.
//!
//! # Dot products on int8 tensor cores (paper 003, Section 4.4)
//!
//! Tensor cores multiply int8 operands with 32-bit accumulation, so a w-bit ring word
//! (w = 16 or 32) is split into w/8 signed limbs. The split is *balanced*: limb 0 is the low
//! byte read as a signed int8 (in -128..=127), and each later limb is taken from what is left
//! after subtracting the earlier ones, again as a signed byte. Then
//! `x = sum_j limb_j * 2^(8j)  (mod 2^w)` exactly, every limb is a valid int8, and the product
//! of two words is `sum_{i+j < w/8} 2^(8(i+j)) * a_i * b_j (mod 2^w)`: the terms with
//! `i + j >= w/8` vanish mod 2^w. That is 3 limb products for 16-bit rings (lo·lo, lo·hi,
//! hi·lo) and 10 for 32-bit rings. The balanced split *is* the correction for the signed int8
//! range: the carry a byte above 127 would need is moved into the next limb when splitting,
//! so no correction term is needed after the GEMM (see [`split_limbs`]).
//!
//! Accumulators are grouped by shift: for 16-bit rings `acc[0] = <a_0, b_0>` and
//! `acc[1] = <a_0, b_1> + <a_1, b_0>`, and the word is `acc[0] + (acc[1] << 8)` wrapped to
//! 16 bits ([`combine`]). Every accumulator stays exact in i32 for the lengths irisc allows
//! (at most [`MAX_K`] columns: `4 * 128 * 128 * MAX_K < 2^31`), and wrapping would not matter
//! anyway since only the low w bits are kept.
//!
//! # Layouts
//!
//! An operand of `rows` rows of `cols` ring words (a gallery of records, or a batch of query
//! codes) is stored on the GPU as `w/8` limb *planes*, one after the other; plane `j` holds
//! `rows_pad` rows of `k_pad` int8 limbs, row-major. `k_pad` is `cols` rounded up to
//! [`K_STEP`] and `rows_pad` is `rows` rounded up to [`BLOCK_ROWS`]; the padding is zero, so it
//! adds nothing to any dot product. Replicated shares have two sides (Appendix C eq. 6:
//! `<qa, ga> - <qb, gb>`): a row is the two sides one after the other (`cols = 2 L`), and the
//! query's second side is negated when it is split, so one GEMM computes the difference.
//! Galois-ring Shamir shares (Section 4.3.2) have one side (the Lagrange coefficient is
//! folded into the query before it is split), and so do plain Z_2^16 dot products.
//!
//! # Kernels
//!
//! - `irisc_gpu_split{w}` ([`split_kernel_name`]): `(src_a: *const u{w}, src_b: *const u{w},
//!   rows: u64, len: u64, sides: u32, negate_b: u32, dst: *mut i8, rows_pad: u64, k_pad: u64)`.
//!   Row `r`, column `i < sides*len` reads side `i / len` (`src_a` or `src_b`) at
//!   `r*len + i%len`, negated mod 2^w if it is side b and `negate_b != 0`; writes the limbs at
//!   `dst + j*rows_pad*k_pad + r*k_pad + i`, and zero in every padding position of the planes.
//!   One thread per (row, column of `k_pad`) element, grid-stride ([`SPLIT_THREADS`] per
//!   block).
//! - `irisc_gpu_aes_ctr` ([`AES_CTR_KERNEL`]): `(round_keys: *const u32, first_lo: u64,
//!   first_hi: u64, blocks: u64, out: *mut u8)`: keystream block `b < blocks` of a PRSS
//!   stream, AES-128 of the 128-bit little-endian counter `first + b` under the 44 round-key
//!   words of [`crate::rand::aes_tables::expand_key`], written at `out + 16 b` (`out` 16-byte
//!   aligned). Exactly the CPU runtime's stream ([`crate::rand::aes_ctr`]: counter mode from
//!   block 0, little-endian counter), so a party that draws on the GPU agrees with its peers
//!   that draw on the CPU. One thread per block, grid-stride ([`SPLIT_THREADS`] per block).
//! - `irisc_gpu_prss_zero{w}` ([`prss_zero_kernel_name`]): `(own: *const u8, own_skip: u64,
//!   prev: *const u8, prev_skip: u64, n: u64, out: *mut u{w})`: the PRSS zero shares
//!   `out[e] = F(s_i)[e] - F(s_{i-1})[e] mod 2^w`, element `e` the little-endian word at byte
//!   `skip + e * w/8` of each keystream (the streams' unread bytes start mid-block after
//!   draws of other sizes; `skip` < 16 is where). One thread per element, grid-stride.
//! - `irisc_gpu_reshare_local{w}` ([`reshare_local_kernel_name`]): `(z: *const u{w}, alpha:
//!   *const u{w}, n: u64, k: u32, out: *mut u{w})`: Reshare's local step (Appendix C),
//!   `out[e] = (z[e] + alpha[e]) mod 2^k`, `alpha` the party's PRSS zero shares, `k` in
//!   `1..=w`. One thread per element, grid-stride ([`BIT_THREADS`] per block).
//! - `irisc_gpu_prss_zero_bits` ([`PRSS_ZERO_BITS_KERNEL`]): as `irisc_gpu_prss_zero{w}` for
//!   binary shares: `out[e] = F(s_i)[e] XOR F(s_{i-1})[e]` over little-endian u64 words.
//! - `irisc_gpu_bit_planes{w}` ([`bit_planes_kernel_name`]): `(src: *const u{w}, n: u64,
//!   planes: u32, dst: *mut u64, words: u64)`: the bit-sliced form of `n` ring words, plane `j`
//!   (`j < planes`) at `dst + j * words`, bit `e % 64` of word `e / 64` = bit `j` of `src[e]`;
//!   bits above the width and the tail of the last word are zero (`protocol::bit_planes`'s
//!   layout; `words` = `ceil(n / 64)`). One thread per (plane, word), grid-stride.
//! - `irisc_gpu_and_local` ([`AND_LOCAL_KERNEL`]): `(x_own, x_prev, y_own, y_prev, alpha:
//!   *const u64, words: u64, len: u64, out: *mut u64)`: a party's share of `x AND y` before it
//!   is sent (ABY3, Appendix C eq. 4 over F_2): `z = x_own (y_own ^ y_prev) ^ x_prev y_own ^
//!   alpha`, `alpha` its PRSS zero bits; the tail of the last word (bits `len..`) cleared.
//! - `irisc_gpu_fa_local` ([`FA_LOCAL_KERNEL`]): `(own, prev, alpha: *const u64, party: u32,
//!   words: u64, planes: u64, len: u64, z: *mut u64, cc_own: *mut u64)`: MSB extraction's
//!   first round (Appendix E: ShareSplit, Algorithm 5, then the full adders of Algorithm 6 on
//!   planes `0..planes`) from the bit planes `own`, `prev` of the party's two share
//!   components (`planes * words` words each, plane-major). Component `j` of the split is
//!   `(own if j == party, prev if j + 1 == party mod 3)`, zero otherwise; with `a, b, c` the
//!   components 0, 1, 2 and `t1 = a ^ c`, `t2 = b ^ c`, the AND's local share is
//!   `z = t1.own (t2.own ^ t2.prev) ^ t1.prev t2.own ^ alpha` (each plane's tail beyond `len`
//!   cleared) and `cc_own = z ^ c.own`. `z` is what the party sends.
//! - `irisc_gpu_fa_finish` ([`FA_FINISH_KERNEL`]): `(got, prev: *const u64, party: u32, n:
//!   u64, cc_prev: *mut u64)`: `cc_prev = got ^ c.prev` over `n` words, `got` the previous
//!   party's `z` (tails cleared by the host).
//! - `irisc_gpu_ripple_local` ([`RIPPLE_LOCAL_KERNEL`]): `(cc_own, cc_prev, s_own, s_prev:
//!   *const u64, k_own: *mut u64, k_prev, alpha: *const u64, words: u64, len: u64, z: *mut
//!   u64)`: one round of the ripple-carry adder (Algorithm 7) on one plane: with the carry
//!   `k`, `t1 = cc ^ k`, `t2 = s ^ k`, `z = t1.own (t2.own ^ t2.prev) ^ t1.prev t2.own ^
//!   alpha` (tail cleared), then `k_own ^= z`. `z` is what the party sends; the host folds
//!   what it receives into `k_prev`.
//!
//!   These three kernels run one thread per word, grid-stride ([`BIT_THREADS`] per block).
//! - `irisc_gpu_or_pairs` ([`OR_PAIRS_KERNEL`]): `(cur_own, cur_prev, alpha: *const u64,
//!   groups: u64, s: u64, h: u64, l_own, l_prev, r_own, r_prev, z: *mut u64)`: one level of
//!   the OR tree (Section 4.2) over `groups` groups of `s` bits each (bit-sliced `cur`),
//!   `h = ceil(s / 2)`: pair `p = g (s - h) + j` (`j < s - h`) is element `g s + j` (into
//!   `l`) with element `g s + j + h` (into `r`), gathered into bit-sliced vectors of
//!   `groups (s - h)` bits; `z` is the AND's local share of each pair, as
//!   `irisc_gpu_and_local` (tail cleared). One thread per output word, grid-stride.
//! - `irisc_gpu_or_combine` ([`OR_COMBINE_KERNEL`]): `(l_own, l_prev, r_own, r_prev, z,
//!   got, cur_own, cur_prev: *const u64, groups: u64, s: u64, h: u64, next_own, next_prev:
//!   *mut u64)`: the level's result, `groups h` bits: element `g h + j` is `l ^ r ^ (z, got)`
//!   of pair `g (s - h) + j` for `j < s - h`, else (the middle element of an odd group)
//!   element `g s + j` of `cur`; `got` is the previous party's `z`. One thread per output
//!   word, grid-stride.
//! - `irisc_gpu_mask_len` ([`MASK_LEN_KERNEL`]): `(gallery, queries: *const u64, words: u64,
//!   records: u64, codes: u64, out: *mut u32)`: `out[r * codes + c] = sum_i popcount(
//!   queries[c * words + i] & gallery[r * words + i])`, the public mask lengths of every
//!   (record, code) pair, record-major as the dot products. One thread per tile of
//!   [`MASK_LEN_TILE_RECORDS`] records x [`MASK_LEN_TILE_CODES`] codes ([`mask_len_tiles`]
//!   of them, code tiles fastest), grid-stride ([`BIT_THREADS`] per block).
//! - `irisc_gpu_dot{w}_k{k_pad}` ([`dot_kernel_name`]): `(gallery: *const i8,
//!   gallery_rows_pad: u64, queries: *const i8, query_rows_pad: u64, out: *mut u{w},
//!   records: u64, codes: u64)`: `out[r*codes + c] = sum_i q_c[i] * g_r[i] mod 2^w` over the
//!   planes (record-major, as the CPU kernels; see `kernels::reference`). The grid is
//!   `(ceil(codes / BLOCK_COLS), ceil(records / BLOCK_ROWS))` blocks of [`DOT_THREADS`]
//!   threads; `k_pad` is a compile-time constant of the kernel.
//! - `irisc_gpu_combine{w}` ([`combine_kernel_name`]): `(acc: *const i32, ldc: u64, plane:
//!   u64, records: u64, codes: u64, out: *mut u{w})`: the same `out` as the dot kernel, from
//!   `w/8` i32 accumulator planes of `plane` elements that a library int8 GEMM wrote (plane
//!   `s` at `acc + s * plane`, element `(c, r)` at `r * ldc + c`: column-major codes x records,
//!   the GEMM `C = Q_j^T G_i` accumulated over the limb pairs `i + j = s`). The epilogue
//!   [`combine`]. One thread per output word, grid-stride ([`SPLIT_THREADS`] per block).
//!   Which GEMM runs is [`GemmEngine`].

/// The name of the CUDA backend (`irisc build --target cuda`), as it writes it into an
/// executable's build record (`manifest::BuildInfo::backend`) and the runtime reads it back.
pub const BACKEND: &str = "cuda";

/// The GPU architecture the PTX is generated for (Hopper, H100/H200; `a`: the
/// architecture-specific features such as `wgmma`).
pub const SM_ARCH: &str = "sm_90a";
/// The PTX ISA version the module declares (8.0: the first with `sm_90a`).
pub const PTX_VERSION: u32 = 80;

/// Columns (int8 limbs) per k-step of the tensor-core instruction `mma.m16n8k32`.
pub const K_STEP: u64 = 32;
/// Gallery rows (records) per thread block of a dot kernel.
pub const BLOCK_ROWS: u64 = 64;
/// Query rows (codes) per thread block of a dot kernel.
pub const BLOCK_COLS: u64 = 64;
/// Records per warp tile (two `m16` tiles).
pub const WARP_ROWS: u64 = 32;
/// Codes per warp tile (four `n8` tiles).
pub const WARP_COLS: u64 = 32;
/// Threads per block of a dot kernel: a 2 x 2 arrangement of 32 x 32 warp tiles.
pub const DOT_THREADS: u32 = 128;
/// Threads per block of a split kernel.
pub const SPLIT_THREADS: u32 = 256;
/// The longest padded row (limb columns) a dot kernel accepts: keeps every accumulator exact
/// in i32 (`4 * 2^14 * MAX_K < 2^31`; `1 << 15` itself would reach 2^31 exactly), and a
/// multiple of [`K_STEP`].
pub const MAX_K: u64 = (1 << 15) - K_STEP;

/// The storage width of a ring the GPU kernels handle, in bits: 16 (Z_2^k, k <= 16, and
/// GR(2^16, d)) or 32 (16 < k <= 32). Other widths (64-bit rings, F_p) have no GPU kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LimbWidth {
    W16,
    W32,
}

impl LimbWidth {
    /// The width of a ring stored in `bits`-bit words, if the GPU handles it.
    pub fn of_bits(bits: u32) -> Option<LimbWidth> {
        match bits {
            16 => Some(LimbWidth::W16),
            32 => Some(LimbWidth::W32),
            _ => None,
        }
    }

    pub const fn bits(self) -> u32 {
        match self {
            LimbWidth::W16 => 16,
            LimbWidth::W32 => 32,
        }
    }

    /// Limbs (int8 planes) per word.
    pub const fn limbs(self) -> usize {
        (self.bits() / 8) as usize
    }

    /// The limb products a dot product needs: pairs `(i, j)` with `i + j < limbs` (3 for
    /// 16-bit words, 10 for 32-bit words), grouped by the shift `8 (i + j)`.
    pub fn products(self) -> Vec<(usize, usize)> {
        let n = self.limbs();
        let mut out = Vec::new();
        for shift in 0..n {
            for i in 0..=shift {
                out.push((i, shift - i));
            }
        }
        out
    }
}

/// The PRSS keystream kernel.
pub const AES_CTR_KERNEL: &str = "irisc_gpu_aes_ctr";

/// `irisc_gpu_prss_zero16` / `irisc_gpu_prss_zero32`.
pub fn prss_zero_kernel_name(width: LimbWidth) -> String {
    format!("irisc_gpu_prss_zero{}", width.bits())
}

/// `irisc_gpu_reshare_local16` / `irisc_gpu_reshare_local32`.
pub fn reshare_local_kernel_name(width: LimbWidth) -> String {
    format!("irisc_gpu_reshare_local{}", width.bits())
}

/// The PRSS zero-bits kernel.
pub const PRSS_ZERO_BITS_KERNEL: &str = "irisc_gpu_prss_zero_bits";
/// The local step of a binary AND.
pub const AND_LOCAL_KERNEL: &str = "irisc_gpu_and_local";
/// ShareSplit and the full-adder layer's local step of MSB extraction.
pub const FA_LOCAL_KERNEL: &str = "irisc_gpu_fa_local";
/// The full-adder layer's carries once the next party's shares have arrived.
pub const FA_FINISH_KERNEL: &str = "irisc_gpu_fa_finish";
/// One ripple-carry round's local step of MSB extraction.
pub const RIPPLE_LOCAL_KERNEL: &str = "irisc_gpu_ripple_local";
/// An OR-tree level's pairs and their AND's local share.
pub const OR_PAIRS_KERNEL: &str = "irisc_gpu_or_pairs";
/// An OR-tree level's result once the AND's shares are in.
pub const OR_COMBINE_KERNEL: &str = "irisc_gpu_or_combine";
/// The public mask lengths of a batch.
pub const MASK_LEN_KERNEL: &str = "irisc_gpu_mask_len";
/// Records of a mask-length thread's tile: each mask word it loads serves a whole row or
/// column of the tile's pairs, so a thread issues 8 loads for 16 popcounts instead of 2 for 1.
pub const MASK_LEN_TILE_RECORDS: u64 = 4;
/// Codes of a mask-length thread's tile.
pub const MASK_LEN_TILE_CODES: u64 = 4;

/// The threads' items of a mask-length launch: tiles of the (record, code) pairs.
pub const fn mask_len_tiles(records: u64, codes: u64) -> u64 {
    records.div_ceil(MASK_LEN_TILE_RECORDS) * codes.div_ceil(MASK_LEN_TILE_CODES)
}
/// Threads per block of the comparison phase's word-parallel kernels (grid-stride).
pub const BIT_THREADS: u32 = 256;

/// `irisc_gpu_bit_planes16` / `irisc_gpu_bit_planes32`.
pub fn bit_planes_kernel_name(width: LimbWidth) -> String {
    format!("irisc_gpu_bit_planes{}", width.bits())
}

/// Rounds `n` up to a multiple of `to`.
pub const fn round_up(n: u64, to: u64) -> u64 {
    n.div_ceil(to) * to
}

/// The padded row length (limb columns) of rows of `sides * len` words.
pub const fn k_pad(sides: u32, len: u64) -> u64 {
    round_up(sides as u64 * len, K_STEP)
}

/// The padded row count of `rows` rows.
pub const fn rows_pad(rows: u64) -> u64 {
    round_up(rows, BLOCK_ROWS)
}

/// The bytes of the limb planes of `rows` rows of `sides * len` words of `width`.
pub const fn planes_bytes(width: LimbWidth, rows: u64, sides: u32, len: u64) -> u64 {
    width.limbs() as u64 * rows_pad(rows) * k_pad(sides, len)
}

/// `irisc_gpu_split16` / `irisc_gpu_split32`.
pub fn split_kernel_name(width: LimbWidth) -> String {
    format!("irisc_gpu_split{}", width.bits())
}

/// `irisc_gpu_dot16_k{k_pad}` / `irisc_gpu_dot32_k{k_pad}`.
pub fn dot_kernel_name(width: LimbWidth, k_pad: u64) -> String {
    format!("irisc_gpu_dot{}_k{k_pad}", width.bits())
}

/// `irisc_gpu_combine16` / `irisc_gpu_combine32`: the epilogue of a library GEMM.
pub fn combine_kernel_name(width: LimbWidth) -> String {
    format!("irisc_gpu_combine{}", width.bits())
}

/// Which int8 GEMM computes the limb products of a GPU dot product (paper 003, Section 4.4).
/// Both give the same words: the generated kernel combines inside, the library GEMM writes
/// one i32 plane per shift and `irisc_gpu_combine{w}` recombines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GemmEngine {
    /// `irisc_gpu_dot{w}_k{K}`: irisc's own `mma.sync` kernel.
    Generated,
    /// cuBLAS `cublasGemmEx` (int8 in, i32 out, "TN"), one call per limb product, then
    /// `irisc_gpu_combine{w}`.
    Cublas,
}

impl GemmEngine {
    /// The engine used when `IRISC_GPU_GEMM` does not choose: the faster one measured by
    /// `irisc-bench --sections gpu` on an H100 (both are measured in every run of it).
    pub const DEFAULT: GemmEngine = GemmEngine::Cublas;
    /// The environment variable that chooses (`generated` or `cublas`).
    pub const ENV: &'static str = "IRISC_GPU_GEMM";
    /// Both engines, in the order reports list them.
    pub const ALL: [GemmEngine; 2] = [GemmEngine::Generated, GemmEngine::Cublas];

    pub fn name(self) -> &'static str {
        match self {
            GemmEngine::Generated => "generated",
            GemmEngine::Cublas => "cublas",
        }
    }

    /// The engine `IRISC_GPU_GEMM` names, the default when unset; an unknown name is an error.
    pub fn from_env() -> Result<GemmEngine, String> {
        match std::env::var(Self::ENV) {
            Err(_) => Ok(Self::DEFAULT),
            Ok(v) => match v.as_str() {
                "generated" => Ok(GemmEngine::Generated),
                "cublas" => Ok(GemmEngine::Cublas),
                other => Err(format!(
                    "{}={other}: the GPU GEMM is `generated` (irisc's mma.sync kernel) or `cublas`",
                    Self::ENV
                )),
            },
        }
    }
}

/// Where a GPU party runs the local steps of the comparison phase (its reshares and MSB
/// extractions): on the GPU (the default) or, with `IRISC_GPU_COMPARE=cpu`, in the CPU
/// protocol (to compare the two, or to rule the GPU path out). The messages are the same
/// either way.
pub const COMPARE_ENV: &str = "IRISC_GPU_COMPARE";

/// Whether [`COMPARE_ENV`] leaves the comparison phase on the GPU; an unknown value is an
/// error.
pub fn compare_on_gpu_from_env() -> Result<bool, String> {
    match std::env::var(COMPARE_ENV) {
        Err(_) => Ok(true),
        Ok(v) => match v.as_str() {
            "gpu" => Ok(true),
            "cpu" => Ok(false),
            other => Err(format!(
                "{COMPARE_ENV}={other}: the comparison phase runs on the `gpu` (the default) or \
                 the `cpu`"
            )),
        },
    }
}

/// The balanced signed limbs of the low `width` bits of `x`, least significant first: limb 0
/// is the low byte as an i8; each next limb is the low byte, as an i8, of what remains after
/// subtracting the earlier limbs and shifting right by 8. `sum_j limbs[j] * 2^(8j) == x`
/// mod 2^width. The generated split kernels compute exactly this.
pub fn split_limbs(width: LimbWidth, x: u64) -> [i8; 4] {
    let mut out = [0i8; 4];
    let mut rest = x & mask(width);
    for limb in out.iter_mut().take(width.limbs()) {
        let l = rest as u8 as i8;
        *limb = l;
        rest = rest.wrapping_sub(l as i64 as u64) >> 8;
    }
    out
}

/// The word of accumulators grouped by shift (`acc[s]` = the sum of the limb products with
/// `i + j = s`): `sum_s acc[s] << 8s` mod 2^width. The generated dot kernels' epilogue.
pub fn combine(width: LimbWidth, acc: &[i32]) -> u64 {
    let mut word = 0u64;
    for (s, a) in acc.iter().enumerate().take(width.limbs()) {
        word = word.wrapping_add((*a as i64 as u64) << (8 * s));
    }
    word & mask(width)
}

fn mask(width: LimbWidth) -> u64 {
    (1u64 << width.bits()) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limb_products_are_those_below_the_word() {
        assert_eq!(LimbWidth::W16.products(), vec![(0, 0), (0, 1), (1, 0)]);
        let p32 = LimbWidth::W32.products();
        assert_eq!(p32.len(), 10);
        assert!(p32.iter().all(|(i, j)| i + j < 4));
    }

    #[test]
    fn names_and_padding() {
        assert_eq!(
            dot_kernel_name(LimbWidth::W16, 25600),
            "irisc_gpu_dot16_k25600"
        );
        assert_eq!(split_kernel_name(LimbWidth::W32), "irisc_gpu_split32");
        assert_eq!(k_pad(2, 12800), 25600);
        assert_eq!(k_pad(1, 12801), 12832);
        assert_eq!(rows_pad(1), 64);
        assert_eq!(rows_pad(64), 64);
        assert_eq!(planes_bytes(LimbWidth::W16, 100, 1, 12800), 2 * 128 * 12800);
        // The exactness bound of MAX_K: 4 products of two limbs of magnitude <= 128 per column.
        assert!(4 * 128 * 128 * MAX_K < 1 << 31);
        assert!(BLOCK_ROWS % WARP_ROWS == 0 && BLOCK_COLS % WARP_COLS == 0);
        assert_eq!(
            u64::from(DOT_THREADS) / 32,
            (BLOCK_ROWS / WARP_ROWS) * (BLOCK_COLS / WARP_COLS)
        );
    }

    use proptest::prelude::*;

    /// Words at the ring edges and the limb edges (a byte of 127/128, carries into the
    /// next limb, the top word), mixed with uniform words.
    fn word(width: LimbWidth) -> impl Strategy<Value = u64> {
        let top = (1u64 << width.bits()) - 1;
        let edges = vec![
            0,
            1,
            0x7f,
            0x80,
            0xff,
            0x100,
            0x7f7f,
            0x7f80,
            0x8000,
            0x80_80,
            0xff7f,
            0xff80,
            top,
            top - 1,
            top >> 1,
            (top >> 1) + 1,
            0x7fff_ff80 & top,
            0x8080_8080 & top,
        ];
        prop_oneof![prop::sample::select(edges), (0..=top),]
    }

    fn limb_dot(width: LimbWidth, a: &[u64], b: &[u64]) -> u64 {
        // Independent of the kernels: group products by shift, exact i64 sums cast to i32.
        let mut acc = vec![0i64; width.limbs()];
        for (&x, &y) in a.iter().zip(b) {
            let (lx, ly) = (split_limbs(width, x), split_limbs(width, y));
            for (i, j) in width.products() {
                acc[i + j] += i64::from(lx[i]) * i64::from(ly[j]);
            }
        }
        let acc: Vec<i32> = acc
            .iter()
            .map(|&v| i32::try_from(v).expect("an accumulator left i32"))
            .collect();
        combine(width, &acc)
    }

    fn plain_dot(width: LimbWidth, a: &[u64], b: &[u64]) -> u64 {
        let m = (1u128 << width.bits()) - 1;
        let s = a.iter().zip(b).fold(0u128, |s, (&x, &y)| {
            s.wrapping_add(u128::from(x) * u128::from(y))
        });
        (s & m) as u64
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn limbs_reassemble_the_word(x in word(LimbWidth::W16), y in word(LimbWidth::W32)) {
            for (w, v) in [(LimbWidth::W16, x), (LimbWidth::W32, y)] {
                let l = split_limbs(w, v);
                let back = l.iter().take(w.limbs()).enumerate().fold(0u64, |s, (j, &b)| {
                    s.wrapping_add((b as i64 as u64) << (8 * j))
                });
                prop_assert_eq!(back & ((1u64 << w.bits()) - 1), v);
                prop_assert!(l.iter().skip(w.limbs()).all(|&b| b == 0));
            }
        }

        #[test]
        fn three_limb_products_give_the_16_bit_dot(
            pairs in prop::collection::vec((word(LimbWidth::W16), word(LimbWidth::W16)), 0..300)
        ) {
            let (a, b): (Vec<u64>, Vec<u64>) = pairs.into_iter().unzip();
            prop_assert_eq!(limb_dot(LimbWidth::W16, &a, &b), plain_dot(LimbWidth::W16, &a, &b));
        }

        #[test]
        fn ten_limb_products_give_the_32_bit_dot(
            pairs in prop::collection::vec((word(LimbWidth::W32), word(LimbWidth::W32)), 0..300)
        ) {
            let (a, b): (Vec<u64>, Vec<u64>) = pairs.into_iter().unzip();
            prop_assert_eq!(limb_dot(LimbWidth::W32, &a, &b), plain_dot(LimbWidth::W32, &a, &b));
        }
    }

    #[test]
    fn the_longest_row_of_worst_case_limbs_stays_exact() {
        // Every limb -128 (the largest magnitude) in both operands, MAX_K columns: the
        // 32-bit ring's widest accumulator (4 products per column) still fits in i32.
        let worst = 4i64 * 128 * 128 * MAX_K as i64;
        assert!(worst < i64::from(i32::MAX));
        // -128 in every limb of a 16-bit word is 0x7f80 - 0x8000 ... reconstructed:
        let x = (0x80u64 << 8 | 0x80) & 0xffff; // limbs (-128, -127)
        let l = split_limbs(LimbWidth::W16, x);
        assert_eq!((l[0], l[1]), (-128, -127));
    }
}
