//! The GPU scan's public half and comparison phase without a GPU: the runtime's mask-length
//! and MSB orchestration ([`irisc_runtime::gpu::mask_len::mask_lengths_on`],
//! [`irisc_runtime::gpu::msb::msb_on`], [`irisc_runtime::gpu::additive_msb::additive_msb_on`]) over the generated kernels' host twins
//! ([`HostLanes`], the same emitted bodies JIT-compiled for this CPU), three parties on
//! threads over the in-memory transport. Each party's output shares, messages, bytes and the
//! position of its PRSS streams afterwards equal the CPU protocol's bit for bit, the opened
//! bits equal the plaintext MSB, and a party on the twins runs with parties on the CPU
//! protocol. The mask lengths equal a plain popcount of every pair. What remains for the card (the PTX launches through cudarc) is checked by
//! `scripts/gpu_check.sh`.

use super::kernels::{bit_extract, bits, mask_len, or_tree, prss, reshare, Flavor};
use inkwell::OptimizationLevel;
use irisc_runtime::contract::gpu::{self, LimbWidth};
use irisc_runtime::error::RuntimeError;
use irisc_runtime::gpu::additive_msb::additive_msb_on;
use irisc_runtime::gpu::lanes::{Lanes, Words, WordsMut};
use irisc_runtime::gpu::msb::msb_on;
use irisc_runtime::net::memory::run_three;
use irisc_runtime::net::Transport;
use irisc_runtime::rand::prss::Prss;
use irisc_runtime::ring::RingElem;
use irisc_runtime::share::binary::reconstruct_bits;
use irisc_runtime::share::rep3::share_vec;
use irisc_runtime::share::{BitShares, Rep3Vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rand::SeedableRng;

type AesCtrFn = unsafe extern "C" fn(*const u32, u64, u64, u64, *mut u8);
type ZeroBitsFn = unsafe extern "C" fn(*const u8, u64, *const u8, u64, u64, *mut u64);
type PlanesFn = unsafe extern "C" fn(*const u8, u64, u32, *mut u64, u64);
type FaLocalFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const u64,
    u32,
    u64,
    u64,
    u64,
    *mut u64,
    *mut u64,
);
type PrssZeroFn = unsafe extern "C" fn(*const u8, u64, *const u8, u64, u64, *mut u8);
type ReshareFn = unsafe extern "C" fn(*const u8, *const u8, u64, u32, *mut u8);
type AndLocalFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    u64,
    u64,
    *mut u64,
);
type OrPairsFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const u64,
    u64,
    u64,
    u64,
    *mut u64,
    *mut u64,
    *mut u64,
    *mut u64,
    *mut u64,
);
type OrCombineFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    u64,
    u64,
    u64,
    *mut u64,
    *mut u64,
);
type MaskLenFn = unsafe extern "C" fn(*const u64, *const u64, u64, u64, u64, *mut u64);
type FaFinishFn = unsafe extern "C" fn(*const u64, *const u64, u32, u64, *mut u64);
type RippleFn = unsafe extern "C" fn(
    *const u64,
    *const u64,
    *const u64,
    *const u64,
    *mut u64,
    *const u64,
    *const u64,
    u64,
    u64,
    *mut u64,
);

/// The host twins of the comparison kernels: plain function pointers (the JIT engine is
/// leaked for the test process), so every party's thread can call them.
#[derive(Clone, Copy)]
struct HostLanes {
    aes_ctr: AesCtrFn,
    zero_bits: ZeroBitsFn,
    planes16: PlanesFn,
    planes32: PlanesFn,
    fa_local: FaLocalFn,
    fa_finish: FaFinishFn,
    ripple: RippleFn,
    mask_len: MaskLenFn,
    zero16: PrssZeroFn,
    zero32: PrssZeroFn,
    reshare16: ReshareFn,
    reshare32: ReshareFn,
    or_pairs: OrPairsFn,
    or_combine: OrCombineFn,
    and_local: AndLocalFn,
}

fn host_lanes() -> HostLanes {
    let cx: &'static inkwell::context::Context =
        Box::leak(Box::new(inkwell::context::Context::create()));
    let module = cx.create_module("msb_twins");
    prss::define_aes_ctr(cx, &module, Flavor::Host).unwrap();
    bits::define_prss_zero_bits(cx, &module, Flavor::Host).unwrap();
    bits::define_bit_planes(cx, &module, LimbWidth::W16, Flavor::Host).unwrap();
    bits::define_bit_planes(cx, &module, LimbWidth::W32, Flavor::Host).unwrap();
    bit_extract::define_fa_local(cx, &module, Flavor::Host).unwrap();
    bit_extract::define_fa_finish(cx, &module, Flavor::Host).unwrap();
    bit_extract::define_ripple_local(cx, &module, Flavor::Host).unwrap();
    mask_len::define(cx, &module, Flavor::Host).unwrap();
    or_tree::define_pairs(cx, &module, Flavor::Host).unwrap();
    bits::define_and_local(cx, &module, Flavor::Host).unwrap();
    or_tree::define_combine(cx, &module, Flavor::Host).unwrap();
    for w in [LimbWidth::W16, LimbWidth::W32] {
        prss::define_prss_zero(cx, &module, w, Flavor::Host).unwrap();
        reshare::define(cx, &module, w, Flavor::Host).unwrap();
    }
    module.verify().unwrap();
    let tm = crate::codegen::cpu::target::host_machine().unwrap();
    crate::codegen::cpu::target::optimize(&module, &tm).unwrap();
    let ee = Box::leak(Box::new(
        module
            .create_jit_execution_engine(OptimizationLevel::Aggressive)
            .unwrap(),
    ));
    let addr = |n: &str| ee.get_function_address(n).unwrap();
    // SAFETY: generated host twins with these signatures (the contract's parameters).
    unsafe {
        HostLanes {
            aes_ctr: std::mem::transmute::<usize, AesCtrFn>(addr(gpu::AES_CTR_KERNEL)),
            zero_bits: std::mem::transmute::<usize, ZeroBitsFn>(addr(gpu::PRSS_ZERO_BITS_KERNEL)),
            planes16: std::mem::transmute::<usize, PlanesFn>(addr(&gpu::bit_planes_kernel_name(
                LimbWidth::W16,
            ))),
            planes32: std::mem::transmute::<usize, PlanesFn>(addr(&gpu::bit_planes_kernel_name(
                LimbWidth::W32,
            ))),
            fa_local: std::mem::transmute::<usize, FaLocalFn>(addr(gpu::FA_LOCAL_KERNEL)),
            fa_finish: std::mem::transmute::<usize, FaFinishFn>(addr(gpu::FA_FINISH_KERNEL)),
            ripple: std::mem::transmute::<usize, RippleFn>(addr(gpu::RIPPLE_LOCAL_KERNEL)),
            mask_len: std::mem::transmute::<usize, MaskLenFn>(addr(gpu::MASK_LEN_KERNEL)),
            zero16: std::mem::transmute::<usize, PrssZeroFn>(addr(&gpu::prss_zero_kernel_name(
                LimbWidth::W16,
            ))),
            zero32: std::mem::transmute::<usize, PrssZeroFn>(addr(&gpu::prss_zero_kernel_name(
                LimbWidth::W32,
            ))),
            reshare16: std::mem::transmute::<usize, ReshareFn>(addr(
                &gpu::reshare_local_kernel_name(LimbWidth::W16),
            )),
            reshare32: std::mem::transmute::<usize, ReshareFn>(addr(
                &gpu::reshare_local_kernel_name(LimbWidth::W32),
            )),
            or_pairs: std::mem::transmute::<usize, OrPairsFn>(addr(gpu::OR_PAIRS_KERNEL)),
            or_combine: std::mem::transmute::<usize, OrCombineFn>(addr(gpu::OR_COMBINE_KERNEL)),
            and_local: std::mem::transmute::<usize, AndLocalFn>(addr(gpu::AND_LOCAL_KERNEL)),
        }
    }
}

/// The words of a view from its offset, checked to hold at least `need` words (so a twin
/// never reads or writes outside its buffer).
fn at(v: &Words<'_, Vec<u64>>, need: u64) -> *const u64 {
    assert!(
        v.at as u64 + need <= v.buf.len() as u64,
        "a view too short for the kernel"
    );
    v.buf[v.at..].as_ptr()
}

fn at_mut(v: WordsMut<'_, Vec<u64>>, need: u64) -> *mut u64 {
    assert!(
        v.at as u64 + need <= v.buf.len() as u64,
        "a view too short for the kernel"
    );
    v.buf[v.at..].as_mut_ptr()
}

impl Lanes for HostLanes {
    type Buf = Vec<u64>;

    fn zeros(&self, words: usize) -> Result<Vec<u64>, RuntimeError> {
        Ok(vec![0; words.max(1)])
    }

    fn upload(&self, host: &[u64]) -> Result<Vec<u64>, RuntimeError> {
        Ok(if host.is_empty() {
            vec![0]
        } else {
            host.to_vec()
        })
    }

    fn write(&self, dst: &mut Vec<u64>, at: usize, host: &[u64]) -> Result<(), RuntimeError> {
        dst[at..at + host.len()].copy_from_slice(host);
        Ok(())
    }

    fn read(&self, src: &Vec<u64>, at: usize, n: usize) -> Result<Vec<u64>, RuntimeError> {
        Ok(src[at..at + n].to_vec())
    }

    fn aes_ctr(
        &self,
        round_keys: Words<'_, Vec<u64>>,
        first: u128,
        blocks: u64,
        out: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let rk = at(&round_keys, 22).cast::<u32>();
        let o = at_mut(out, 2 * blocks).cast::<u8>();
        // SAFETY: 44 round-key words, room for `blocks` blocks (checked above).
        unsafe { (self.aes_ctr)(rk, first as u64, (first >> 64) as u64, blocks, o) };
        Ok(())
    }

    fn prss_zero_bits(
        &self,
        own: Words<'_, Vec<u64>>,
        own_skip: u64,
        prev: Words<'_, Vec<u64>>,
        prev_skip: u64,
        n: u64,
        out: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let need = |skip: u64| (skip + 8 * n).div_ceil(8);
        let (o, p) = (at(&own, need(own_skip)), at(&prev, need(prev_skip)));
        let dst = at_mut(out, n);
        // SAFETY: keystreams of skip + 8n bytes and n output words (checked above).
        unsafe { (self.zero_bits)(o.cast(), own_skip, p.cast(), prev_skip, n, dst) };
        Ok(())
    }

    fn bit_planes(
        &self,
        width: LimbWidth,
        src: Words<'_, Vec<u64>>,
        n: u64,
        planes: u32,
        dst: WordsMut<'_, Vec<u64>>,
        words: u64,
    ) -> Result<(), RuntimeError> {
        let per_word = 64 / u64::from(width.bits());
        let s = at(&src, n.div_ceil(per_word));
        let d = at_mut(dst, u64::from(planes) * words);
        let f = match width {
            LimbWidth::W16 => self.planes16,
            LimbWidth::W32 => self.planes32,
        };
        // SAFETY: n ring words in, `planes` planes of `words` words out (checked above).
        unsafe { f(s.cast(), n, planes, d, words) };
        Ok(())
    }

    fn fa_local(
        &self,
        own: Words<'_, Vec<u64>>,
        prev: Words<'_, Vec<u64>>,
        alpha: Words<'_, Vec<u64>>,
        party: u32,
        words: u64,
        planes: u64,
        len: u64,
        z: WordsMut<'_, Vec<u64>>,
        cc_own: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let n = planes * words;
        let (o, p, a) = (at(&own, n), at(&prev, n), at(&alpha, n));
        let (zp, cp) = (at_mut(z, n), at_mut(cc_own, n));
        // SAFETY: every buffer holds planes * words words (checked above).
        unsafe { (self.fa_local)(o, p, a, party, words, planes, len, zp, cp) };
        Ok(())
    }

    fn fa_finish(
        &self,
        got: Words<'_, Vec<u64>>,
        prev: Words<'_, Vec<u64>>,
        party: u32,
        n: u64,
        cc_prev: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let (g, p) = (at(&got, n), at(&prev, n));
        let c = at_mut(cc_prev, n);
        // SAFETY: n words each (checked above).
        unsafe { (self.fa_finish)(g, p, party, n, c) };
        Ok(())
    }

    fn prss_zero(
        &self,
        width: LimbWidth,
        own: Words<'_, Vec<u64>>,
        own_skip: u64,
        prev: Words<'_, Vec<u64>>,
        prev_skip: u64,
        n: u64,
        out: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let bytes = n * u64::from(width.bits()) / 8;
        let need = |skip: u64| (skip + bytes).div_ceil(8);
        let (o, p) = (at(&own, need(own_skip)), at(&prev, need(prev_skip)));
        let dst = at_mut(out, bytes.div_ceil(8));
        let f = match width {
            LimbWidth::W16 => self.zero16,
            LimbWidth::W32 => self.zero32,
        };
        // SAFETY: keystreams of skip + n words and room for n words (checked above).
        unsafe { f(o.cast(), own_skip, p.cast(), prev_skip, n, dst.cast()) };
        Ok(())
    }

    fn reshare_local(
        &self,
        width: LimbWidth,
        z: Words<'_, Vec<u64>>,
        alpha: Words<'_, Vec<u64>>,
        n: u64,
        k: u32,
        out: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let words = (n * u64::from(width.bits())).div_ceil(64);
        let (zp, ap) = (at(&z, words), at(&alpha, words));
        let dst = at_mut(out, words);
        let f = match width {
            LimbWidth::W16 => self.reshare16,
            LimbWidth::W32 => self.reshare32,
        };
        // SAFETY: n ring words in each buffer (checked above).
        unsafe { f(zp.cast(), ap.cast(), n, k, dst.cast()) };
        Ok(())
    }

    fn and_local(
        &self,
        xy: [Words<'_, Vec<u64>>; 4],
        alpha: Words<'_, Vec<u64>>,
        words: u64,
        len: u64,
        out: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let p: Vec<*const u64> = xy.iter().map(|v| at(v, words)).collect();
        let a = at(&alpha, words);
        let o = at_mut(out, words);
        // SAFETY: `words` words in every buffer (checked above).
        unsafe { (self.and_local)(p[0], p[1], p[2], p[3], a, words, len, o) };
        Ok(())
    }

    fn or_pairs(
        &self,
        cur: (Words<'_, Vec<u64>>, Words<'_, Vec<u64>>),
        alpha: Words<'_, Vec<u64>>,
        groups: u64,
        s: u64,
        h: u64,
        outs: [WordsMut<'_, Vec<u64>>; 5],
    ) -> Result<(), RuntimeError> {
        let w = (groups * (s - h)).div_ceil(64);
        let cw = (groups * s).div_ceil(64);
        let (co, cp, a) = (at(&cur.0, cw), at(&cur.1, cw), at(&alpha, w));
        let [lo, lp, ro, rp, z] = outs.map(|o| at_mut(o, w));
        // SAFETY: the current level's groups · s bits, w words out each (checked above).
        unsafe { (self.or_pairs)(co, cp, a, groups, s, h, lo, lp, ro, rp, z) };
        Ok(())
    }

    fn or_combine(
        &self,
        pairs: [Words<'_, Vec<u64>>; 6],
        cur: (Words<'_, Vec<u64>>, Words<'_, Vec<u64>>),
        groups: u64,
        s: u64,
        h: u64,
        next: (WordsMut<'_, Vec<u64>>, WordsMut<'_, Vec<u64>>),
    ) -> Result<(), RuntimeError> {
        let w = (groups * (s - h)).div_ceil(64);
        let cw = (groups * s).div_ceil(64);
        let nw = (groups * h).div_ceil(64);
        let p: Vec<*const u64> = pairs.iter().map(|v| at(v, w)).collect();
        let (co, cp) = (at(&cur.0, cw), at(&cur.1, cw));
        let (no, np) = (at_mut(next.0, nw), at_mut(next.1, nw));
        // SAFETY: as above, the next level's groups · h bits out.
        unsafe {
            (self.or_combine)(
                p[0], p[1], p[2], p[3], p[4], p[5], co, cp, groups, s, h, no, np,
            )
        };
        Ok(())
    }

    fn mask_len(
        &self,
        gallery: Words<'_, Vec<u64>>,
        queries: Words<'_, Vec<u64>>,
        words: u64,
        records: u64,
        codes: u64,
        out: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let (g, q) = (at(&gallery, records * words), at(&queries, codes * words));
        let o = at_mut(out, (records * codes).div_ceil(2));
        // SAFETY: the masks and the output hold what the kernel indexes (checked above).
        unsafe { (self.mask_len)(g, q, words, records, codes, o) };
        Ok(())
    }

    fn ripple_local(
        &self,
        cc: (Words<'_, Vec<u64>>, Words<'_, Vec<u64>>),
        s: (Words<'_, Vec<u64>>, Words<'_, Vec<u64>>),
        carry: (WordsMut<'_, Vec<u64>>, Words<'_, Vec<u64>>),
        alpha: Words<'_, Vec<u64>>,
        words: u64,
        len: u64,
        z: WordsMut<'_, Vec<u64>>,
    ) -> Result<(), RuntimeError> {
        let (cco, ccp) = (at(&cc.0, words), at(&cc.1, words));
        let (so, sp) = (at(&s.0, words), at(&s.1, words));
        let kp = at(&carry.1, words);
        let ko = at_mut(carry.0, words);
        let a = at(&alpha, words);
        let zp = at_mut(z, words);
        // SAFETY: `words` words each (checked above); k_own is the only buffer written that
        // is also read, by the same thread and word.
        unsafe { (self.ripple)(cco, ccp, so, sp, ko, kp, a, words, len, zp) };
        Ok(())
    }
}

/// One party's run: its output shares, what it sent, and its PRSS's next draw (which shows
/// where its streams stand).
#[derive(Debug, PartialEq)]
struct PartyRun {
    bits: (Vec<u64>, Vec<u64>, usize),
    messages: u64,
    bytes: u64,
    next_draw: Vec<u16>,
}

/// Where each party runs MSB extraction.
#[derive(Clone, Copy, Debug)]
enum On {
    Cpu,
    Twins,
}

/// Three parties over the in-memory transport, party i's PRSS first drawing `before` u16 words
/// (so that its streams stand mid-block, as after the reshares of a real schedule), then
/// running `step(party, where it runs, transport, prss)`: each party's run and the opened bits.
fn three_parties(
    seeds: [[u8; 16]; 3],
    before: usize,
    where_: [On; 3],
    step: impl Fn(usize, On, &mut dyn Transport, &mut Prss) -> BitShares + Send + Sync + 'static,
) -> ([PartyRun; 3], Vec<bool>) {
    let runs = run_three(move |mut t| {
        let i = t.party();
        let mut p = Prss::from_seeds(i, seeds[i], seeds[(i + 2) % 3]);
        let _ = p.zero_shares::<u16>(before);
        let (m0, b0) = (t.messages_sent(), t.bytes_sent());
        let bits = step(i, where_[i], &mut t, &mut p);
        PartyRun {
            bits: (bits.own.clone(), bits.prev.clone(), bits.len),
            messages: t.messages_sent() - m0,
            bytes: t.bytes_sent() - b0,
            next_draw: p.zero_shares::<u16>(9),
        }
    });
    let shares: [BitShares; 3] = std::array::from_fn(|i| {
        let (o, p, n) = &runs[i].bits;
        BitShares::from_words(o.clone(), p.clone(), *n)
    });
    let opened = reconstruct_bits(&shares).expect("consistent binary shares");
    (runs, opened)
}

/// The three parties' MSB extraction of `values` in Z_2^k (T storage) from replicated shares,
/// party i on `where_[i]`.
fn run<T: RingElem>(
    lanes: HostLanes,
    values: &[u64],
    k: u32,
    seed: u64,
    seeds: [[u8; 16]; 3],
    before: usize,
    where_: [On; 3],
) -> ([PartyRun; 3], Vec<bool>) {
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    let v: Vec<T> = values
        .iter()
        .map(|&x| T::from_u64(x & irisc_runtime::ring::mask(k)))
        .collect();
    let shares: [Rep3Vec<T>; 3] = share_vec(&v, k, &mut rng);
    three_parties(seeds, before, where_, move |i, on, t, p| {
        let x = &shares[i];
        match on {
            On::Cpu => irisc_runtime::protocol::msb(t, p, x, k).unwrap(),
            On::Twins => msb_on(&lanes, t, p, &x.own, &x.prev, k).unwrap(),
        }
    })
}

/// The plaintext definition: bit k − 1 of x mod 2^k.
fn plain_msb(values: &[u64], k: u32) -> Vec<bool> {
    values.iter().map(|&x| (x >> (k - 1)) & 1 == 1).collect()
}

/// The ring's edge values and their neighbours.
fn edges(k: u32) -> Vec<u64> {
    let m = irisc_runtime::ring::mask(k);
    let half = 1u64 << (k - 1);
    vec![0, 1, m, m - 1, half - 1, half, half + 1, 2 & m]
}

/// A party runner: `run` or `additive_run`.
type Runner =
    fn(HostLanes, &[u64], u32, u64, [[u8; 16]; 3], usize, [On; 3]) -> ([PartyRun; 3], Vec<bool>);

/// With every party on the twins, and with each party alone on them, the protocol `run` runs
/// equals the CPU protocol party by party (shares, messages, bytes, the PRSS's next draw) and
/// opens to the plaintext MSB.
#[allow(clippy::too_many_arguments)]
fn check_with(
    run: Runner,
    lanes: HostLanes,
    values: &[u64],
    k: u32,
    seed: u64,
    seeds: [[u8; 16]; 3],
    before: usize,
) -> Result<(), TestCaseError> {
    use On::*;
    let (cpu, cpu_bits) = run(lanes, values, k, seed, seeds, before, [Cpu; 3]);
    let (twins, twin_bits) = run(lanes, values, k, seed, seeds, before, [Twins; 3]);
    let want = plain_msb(values, k);
    prop_assert_eq!(&cpu_bits, &want, "the CPU protocol, k = {}", k);
    prop_assert_eq!(&twin_bits, &want, "the twins, k = {}", k);
    for i in 0..3 {
        prop_assert_eq!(&twins[i], &cpu[i], "party {} of k = {}", i, k);
    }
    // One party on the twins, the others on the CPU: the same protocol.
    for g in 0..3 {
        let mut where_ = [Cpu; 3];
        where_[g] = Twins;
        let (mixed, bits) = run(lanes, values, k, seed, seeds, before, where_);
        prop_assert_eq!(&bits, &want, "party {} on the twins, k = {}", g, k);
        prop_assert_eq!(&mixed[g], &cpu[g]);
    }
    Ok(())
}

/// [`check_with`] on random batches with the ring's edges, k = 1..=32 (16-bit storage up to
/// 16): the protocols `runs` runs in 16- and 32-bit storage.
fn random_batches(runs: [Runner; 2]) {
    let lanes = host_lanes();
    let mut runner = TestRunner::new(Config::with_cases(40));
    let strat = (
        prop::collection::vec(any::<u64>(), 0..260),
        1u32..=32,
        any::<u64>(),
        any::<[[u8; 16]; 3]>(),
        0usize..11,
    );
    runner
        .run(&strat, |(mut values, k, seed, seeds, before)| {
            values.extend(edges(k));
            if k <= 16 {
                check_with(runs[0], lanes, &values, k, seed, seeds, before)?;
            }
            check_with(runs[1], lanes, &values, k, seed, seeds, before)
        })
        .unwrap();
}

/// [`check_with`] at lengths around a word and empty (the tails of every plane stay clear),
/// k at the edges of both storages.
fn word_edges(runs: [Runner; 2], seeds: [[u8; 16]; 3]) {
    let lanes = host_lanes();
    for n in [0usize, 1, 63, 64, 65, 128, 129] {
        let values: Vec<u64> = (0..n as u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        for k in [1u32, 2, 15, 16] {
            check_with(runs[0], lanes, &values, k, n as u64, seeds, 3).unwrap();
        }
        for k in [17u32, 31, 32] {
            check_with(runs[1], lanes, &values, k, n as u64, seeds, 1).unwrap();
        }
    }
}

#[test]
fn msb_on_the_host_twins_is_the_cpu_protocol_bit_for_bit() {
    random_batches([run::<u16>, run::<u32>]);
}

#[test]
fn msb_on_the_host_twins_at_word_edges_and_the_full_ring() {
    word_edges([run::<u16>, run::<u32>], [[1u8; 16], [2u8; 16], [3u8; 16]]);
}

/// The three parties' AdditiveMSB of `values` in Z_2^k (T storage) from additive shares dealt
/// at random (bits above k random too: only the low k bits may be read), party i on
/// `where_[i]`, each PRSS first drawing `before` u16 words.
fn additive_run<T: RingElem>(
    lanes: HostLanes,
    values: &[u64],
    k: u32,
    seed: u64,
    seeds: [[u8; 16]; 3],
    before: usize,
    where_: [On; 3],
) -> ([PartyRun; 3], Vec<bool>) {
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    let mask = irisc_runtime::ring::mask(k);
    let mut z: [Vec<T>; 3] = Default::default();
    for &v in values {
        let (z0, z1): (u64, u64) = (rand::Rng::random(&mut rng), rand::Rng::random(&mut rng));
        let z2 = v.wrapping_sub(z0).wrapping_sub(z1) & mask;
        let high = if k < 64 {
            rand::Rng::random::<u64>(&mut rng) << k
        } else {
            0
        };
        for (s, x) in z.iter_mut().zip([z0, z1, z2 | high]) {
            s.push(T::from_u64(x));
        }
    }
    three_parties(seeds, before, where_, move |i, on, t, p| match on {
        On::Cpu => irisc_runtime::protocol::additive_msb(t, p, &z[i], k).unwrap(),
        On::Twins => additive_msb_on(&lanes, t, p, &z[i], k).unwrap(),
    })
}

#[test]
fn additive_msb_on_the_host_twins_is_the_cpu_protocol_bit_for_bit() {
    random_batches([additive_run::<u16>, additive_run::<u32>]);
}

#[test]
fn additive_msb_on_the_host_twins_at_word_edges_and_the_full_ring() {
    word_edges(
        [additive_run::<u16>, additive_run::<u32>],
        [[4u8; 16], [5u8; 16], [6u8; 16]],
    );
}

/// The mask lengths on the twins equal a plain popcount of every (record, code) pair, in the
/// dot products' record-major order, at word counts around a vector's width, with full and
/// empty masks.
#[test]
fn mask_lengths_on_the_host_twins_are_the_popcounts_of_every_pair() {
    let lanes = host_lanes();
    let mut runner = TestRunner::new(Config::with_cases(64));
    let strat = (0usize..9, 0usize..7, 0usize..12, any::<u64>(), 1usize..4);
    runner
        .run(&strat, |(records, codes, w, seed, threads)| {
            let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
            let mut word = |i: usize| match i % 5 {
                0 => u64::MAX,
                1 => 0,
                _ => rand::Rng::random::<u64>(&mut rng),
            };
            let g: Vec<u64> = (0..records * w).map(&mut word).collect();
            let q: Vec<u64> = (0..codes * w).map(|i| word(i + 2)).collect();
            let got = irisc_runtime::gpu::mask_len::mask_lengths_on(
                &lanes, &q, codes, &g, records, w, threads,
            )
            .unwrap();
            let mut want = Vec::new();
            for r in 0..records {
                for c in 0..codes {
                    let mut ml = 0u64;
                    for i in 0..w {
                        let both = g[r * w + i] & q[c * w + i];
                        ml += (0..64).filter(|b| both >> b & 1 == 1).count() as u64;
                    }
                    want.push(ml);
                }
            }
            prop_assert_eq!(got, want);
            Ok(())
        })
        .unwrap();
    // A full-length code (12 800 bits: 200 words) with every bit set in both.
    let full = vec![u64::MAX; 200];
    let got =
        irisc_runtime::gpu::mask_len::mask_lengths_on(&lanes, &full, 1, &full, 1, 200, 2).unwrap();
    assert_eq!(got, vec![12_800]);
}

/// A party's reshare: its shares (own, prev), the bytes it sent, its PRSS's next draw.
type ReshareRun<T> = (Vec<T>, Vec<T>, u64, Vec<u16>);

/// Where each party reshares: on the CPU protocol or the twins.
fn reshare_run<T: RingElem>(
    lanes: HostLanes,
    values: &[u64],
    k: u32,
    seed: u64,
    seeds: [[u8; 16]; 3],
    before: usize,
    where_: [On; 3],
) -> [ReshareRun<T>; 3] {
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    // Additive shares: two random, the third makes the sum.
    let n = values.len();
    let a: Vec<T> = (0..n)
        .map(|_| T::from_u64(rand::Rng::random(&mut rng)))
        .collect();
    let b: Vec<T> = (0..n)
        .map(|_| T::from_u64(rand::Rng::random(&mut rng)))
        .collect();
    let c: Vec<T> = (0..n)
        .map(|e| T::from_u64(values[e]).wrapping_sub(a[e]).wrapping_sub(b[e]))
        .collect();
    let add = [a, b, c];
    run_three(move |mut t| {
        let i = t.party();
        let mut p = Prss::from_seeds(i, seeds[i], seeds[(i + 2) % 3]);
        let _ = p.zero_bits(before);
        let _ = p.zero_shares::<u16>(before);
        let b0 = t.bytes_sent();
        let r: Rep3Vec<T> = match where_[i] {
            On::Cpu => irisc_runtime::protocol::reshare(
                &mut t,
                &mut p,
                irisc_runtime::share::AddVec {
                    own: add[i].clone(),
                },
                k,
            )
            .unwrap(),
            On::Twins => {
                irisc_runtime::gpu::reshare::reshare_on(&lanes, &mut t, &mut p, &add[i], k).unwrap()
            }
        };
        (r.own, r.prev, t.bytes_sent() - b0, p.zero_shares::<u16>(5))
    })
}

/// Reshare on the twins is the CPU protocol's, party by party (shares, bytes, where the PRSS
/// stands afterwards), the shares are consistent and open to the values mod 2^k, and a twin
/// party reshares with CPU parties.
#[test]
fn reshare_on_the_host_twins_is_the_cpu_protocol_bit_for_bit() {
    use On::*;
    let lanes = host_lanes();
    let mut runner = TestRunner::new(Config::with_cases(48));
    let strat = (
        prop::collection::vec(any::<u64>(), 0..200),
        1u32..=32,
        any::<u64>(),
        any::<[[u8; 16]; 3]>(),
        0usize..13,
    );
    fn one<T: RingElem>(
        lanes: HostLanes,
        values: &[u64],
        k: u32,
        seed: u64,
        seeds: [[u8; 16]; 3],
        before: usize,
    ) -> Result<(), TestCaseError> {
        let cpu = reshare_run::<T>(lanes, values, k, seed, seeds, before, [Cpu; 3]);
        for where_ in [
            [Twins; 3],
            [Twins, Cpu, Cpu],
            [Cpu, Twins, Cpu],
            [Cpu, Cpu, Twins],
        ] {
            let got = reshare_run::<T>(lanes, values, k, seed, seeds, before, where_);
            prop_assert_eq!(&got, &cpu, "k = {} on {:?}", k, where_);
        }
        let shares: [Rep3Vec<T>; 3] = std::array::from_fn(|i| Rep3Vec {
            own: cpu[i].0.clone(),
            prev: cpu[i].1.clone(),
        });
        prop_assert!(irisc_runtime::share::rep3::consistent(&shares, k));
        let opened = irisc_runtime::share::rep3::reconstruct(&shares, k);
        let want: Vec<T> = values
            .iter()
            .map(|&v| T::from_u64(v & irisc_runtime::ring::mask(k)))
            .collect();
        prop_assert_eq!(opened, want);
        Ok(())
    }
    runner
        .run(&strat, |(mut values, k, seed, seeds, before)| {
            values.extend(edges(k));
            if k <= 16 {
                one::<u16>(lanes, &values, k, seed, seeds, before)?;
            }
            one::<u32>(lanes, &values, k, seed, seeds, before)
        })
        .unwrap();
}

/// The OR trees on the twins are the CPU protocol's, party by party (shares, bytes, where the
/// PRSS stands afterwards), open to the plain OR of every group, at groups of 31 (the
/// rotations) and other sizes, one group of all, and with one twin party among CPU parties.
#[test]
fn or_trees_on_the_host_twins_are_the_cpu_protocol_bit_for_bit() {
    use irisc_runtime::share::binary::share_bits;
    use On::*;
    let lanes = host_lanes();
    let mut runner = TestRunner::new(Config::with_cases(48));
    let strat = (
        1usize..40,
        0usize..9,
        any::<u64>(),
        any::<[[u8; 16]; 3]>(),
        0usize..5,
        0u32..4,
    );
    runner
        .run(&strat, |(group, groups, seed, seeds, before, density)| {
            let group = if seed % 3 == 0 { 31 } else { group };
            let len = group * groups;
            let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
            // Sparse bits, as comparison bits are (most groups then OR to 0, some to 1).
            let plain: Vec<bool> = (0..len)
                .map(|_| rand::Rng::random_ratio(&mut rng, 1, 1 + 8 * density))
                .collect();
            let shares = share_bits(&plain, &mut rng);
            // Groups of `group`, and (when there are several) one group of all.
            for g in [group, len.max(1)] {
                let run = |where_: [On; 3]| {
                    let shares = shares.clone();
                    run_three(move |mut t| {
                        let i = t.party();
                        let mut p = Prss::from_seeds(i, seeds[i], seeds[(i + 2) % 3]);
                        let _ = p.zero_shares::<u16>(before);
                        let b0 = t.bytes_sent();
                        let out = match where_[i] {
                            Cpu => irisc_runtime::protocol::or_tree::or_groups(
                                &mut t, &mut p, &shares[i], g,
                            )
                            .unwrap(),
                            Twins => irisc_runtime::gpu::or_tree::or_groups_on(
                                &lanes, &mut t, &mut p, &shares[i], g,
                            )
                            .unwrap(),
                        };
                        (out, t.bytes_sent() - b0, p.zero_shares::<u16>(5))
                    })
                };
                let cpu = run([Cpu; 3]);
                for where_ in [[Twins; 3], [Cpu, Twins, Cpu]] {
                    let got = run(where_);
                    for i in 0..3 {
                        prop_assert_eq!(&got[i].0.own, &cpu[i].0.own, "group {} {:?}", g, where_);
                        prop_assert_eq!(&got[i].0.prev, &cpu[i].0.prev);
                        prop_assert_eq!(got[i].0.len, cpu[i].0.len);
                        prop_assert_eq!(got[i].1, cpu[i].1);
                        prop_assert_eq!(&got[i].2, &cpu[i].2);
                    }
                }
                let opened =
                    reconstruct_bits(&[cpu[0].0.clone(), cpu[1].0.clone(), cpu[2].0.clone()])
                        .expect("consistent");
                let want: Vec<bool> = if len == 0 {
                    Vec::new()
                } else {
                    plain.chunks(g).map(|c| c.iter().any(|&b| b)).collect()
                };
                prop_assert_eq!(opened, want, "group {}", g);
            }
            Ok(())
        })
        .unwrap();
}

/// An AND of bit vectors on the twins is the CPU protocol's, party by party, and opens to the
/// plain AND; a twin party ANDs with CPU parties.
#[test]
fn and_on_the_host_twins_is_the_cpu_protocol_bit_for_bit() {
    use irisc_runtime::share::binary::share_bits;
    use On::*;
    let lanes = host_lanes();
    let mut runner = TestRunner::new(Config::with_cases(48));
    let strat = (
        prop::collection::vec((any::<bool>(), any::<bool>()), 0..300),
        any::<u64>(),
        any::<[[u8; 16]; 3]>(),
        0usize..7,
    );
    runner
        .run(&strat, |(pairs, seed, seeds, before)| {
            let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
            let (xb, yb): (Vec<bool>, Vec<bool>) = pairs.iter().copied().unzip();
            let (xs, ys) = (share_bits(&xb, &mut rng), share_bits(&yb, &mut rng));
            let run = |where_: [On; 3]| {
                let (xs, ys) = (xs.clone(), ys.clone());
                run_three(move |mut t| {
                    let i = t.party();
                    let mut p = Prss::from_seeds(i, seeds[i], seeds[(i + 2) % 3]);
                    let _ = p.zero_shares::<u16>(before);
                    let z = match where_[i] {
                        Cpu => {
                            irisc_runtime::protocol::and(&mut t, &mut p, &xs[i], &ys[i]).unwrap()
                        }
                        Twins => {
                            irisc_runtime::gpu::and::and_on(&lanes, &mut t, &mut p, &xs[i], &ys[i])
                                .unwrap()
                        }
                    };
                    (
                        z.own,
                        z.prev,
                        z.len,
                        t.bytes_sent(),
                        p.zero_shares::<u16>(5),
                    )
                })
            };
            let cpu = run([Cpu; 3]);
            for where_ in [[Twins; 3], [Cpu, Cpu, Twins]] {
                prop_assert_eq!(&run(where_), &cpu, "{:?}", where_);
            }
            let shares: [BitShares; 3] = std::array::from_fn(|i| {
                BitShares::from_words(cpu[i].0.clone(), cpu[i].1.clone(), cpu[i].2)
            });
            let want: Vec<bool> = pairs.iter().map(|(a, b)| *a && *b).collect();
            prop_assert_eq!(reconstruct_bits(&shares), Some(want));
            Ok(())
        })
        .unwrap();
}
