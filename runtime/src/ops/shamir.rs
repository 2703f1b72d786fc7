//! Ops of the Shamir instantiations (Bloemen et al., Section 4.3.2 and Section 5): dot
//! products of Shamir shares over GR(2^16, d) or F_p, the conversion to replicated shares mod p,
//! the F_p comparison (Algorithm 12), and the lifted comparison over Z_t, t = p·2^m
//! (Algorithms 13 and 15, Lemma 2).

use std::ops::Range;
use std::sync::Arc;

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::iris::Thresholds;
use crate::kernels::run::shamir_kernel;
use crate::kernels::{fp_dot_reference, KernelTable, MaskedDotKernelU16};
use crate::protocol::bit_extract_mod::{msb_mod as msb_mod_protocol, msb_mod_cost};
use crate::protocol::bit_extract_p::{bit_extract_p_cost, msb_p as msb_p_protocol};
use crate::protocol::galois_dot::{galois_dot_local, prepare_query};
use crate::protocol::lift_p::lift_p as lift_p_protocol;
use crate::protocol::Stats;
use crate::share::fp::{self, Rep3Fp, P};
use crate::share::galois::ShamirVec;
use crate::share::Rep3Vec;

use super::ctx::{at, broadcast_len, sched, Ctx};
use super::placement::{self, PublicThirds};
use super::shamir_codes::{ShamirCodes, ShamirKind, Side};
use super::value::Value;
use crate::kernels::nest::Nests;
use crate::kernels::run::run_nests;
use crate::vocab::{record_third, ThresholdPlacement};

fn shamir<'v>(v: &'v Value, op: &str) -> Result<&'v ShamirCodes, RuntimeError> {
    match v {
        Value::Shamir(c) => Ok(c),
        other => Err(sched(format!(
            "{op}: operand holds {}, expected Shamir-shared codes",
            other.kind()
        ))),
    }
}

fn rep_p<'v>(v: &'v Value, op: &str) -> Result<&'v Rep3Fp, RuntimeError> {
    match v {
        Value::ReplicatedP(x) => Ok(x),
        other => Err(sched(format!(
            "{op}: operand holds {}, expected replicated shares mod p",
            other.kind()
        ))),
    }
}

/// The lift exponents this runtime supports: t = p·2^m < 2^63.
fn lift_exponent(m: u32, op: &str) -> Result<u64, RuntimeError> {
    if (1..=47).contains(&m) {
        Ok((P as u64) << m)
    } else {
        Err(sched(format!("{op}: m = {m} is not in 1..=47")))
    }
}

/// Party-side dot products of Shamir shares (Section 4.3.2), record-major and query-code-minor
/// (`out[r·codes + c]`) like `masked_dot`:
/// - GR(2^16, d): the Lagrange coefficient is folded into the query and each product is one
///   plain 16-bit dot product ([`crate::protocol::galois_dot`]); additive shares over Z_2^16
///   (`Value::Additive` in u16 words), to be reshared with `reshare` (any k ≤ 16);
/// - F_p: the degree-2 products times the party's Lagrange coefficient at 0; additive shares
///   mod p (`Value::AdditiveP`), to be reshared with `reshare_p`.
///
/// Local. The query must be packed as a query and the gallery as a gallery (GR only). Runs the
/// scalar reference kernels on one thread; [`shamir_dot_kernel`] runs a generated one.
pub fn shamir_dot(cx: &mut Ctx<'_>, query: &Value, gallery: &Value) -> Result<Value, RuntimeError> {
    shamir_dot_kernel(cx, query, gallery, None, 1)
}

/// [`shamir_dot`] with a generated kernel (GR: the 16-bit one-sided kernel over the prepared
/// query; F_p: the kernel with one reduction mod p per pair), records split across `threads`.
/// `None` runs the scalar references of [`crate::kernels::reference`].
pub fn shamir_dot_kernel(
    cx: &mut Ctx<'_>,
    query: &Value,
    gallery: &Value,
    kernel: Option<MaskedDotKernelU16>,
    threads: usize,
) -> Result<Value, RuntimeError> {
    let kernel = kernel.map(|k| Nests::single(k as *const ()));
    // SAFETY: the one nest is a kernel of the right signature (its type says so).
    unsafe { shamir_dot_nests(cx, query, gallery, kernel, threads) }
}

/// [`shamir_dot_kernel`] with a table's nests ([`crate::kernels::nest`]).
///
/// # Safety
/// Every nest must be a generated one-sided kernel of u16 words for this sharing and length.
unsafe fn shamir_dot_nests(
    cx: &mut Ctx<'_>,
    query: &Value,
    gallery: &Value,
    kernel: Option<Nests>,
    threads: usize,
) -> Result<Value, RuntimeError> {
    let (q, g) = (shamir(query, "shamir_dot")?, shamir(gallery, "shamir_dot")?);
    // SAFETY: the caller's contract.
    unsafe { shamir_dot_records(cx.party(), q, g, 0..g.count, kernel, threads) }
}

/// The party-local dot products of [`shamir_dot_kernel`] of every code of `q` with records
/// `records` of the gallery `g`, record-major (`out[r·q.count + c]`, r counted from
/// `records.start`): what `shamir_dot` computes for the whole gallery and the tiled scan for
/// one chunk of it (with `q` a batch of queries' codes). Only reads its operands, so it runs
/// on any thread.
///
/// # Safety
/// Every nest of `kernel` must be a generated one-sided kernel of u16 words for this sharing
/// and code length.
pub(crate) unsafe fn shamir_dot_records(
    party: usize,
    q: &ShamirCodes,
    g: &ShamirCodes,
    records: Range<usize>,
    kernel: Option<Nests>,
    threads: usize,
) -> Result<Value, RuntimeError> {
    check_shamir_operands(q, g, &records)?;
    let words = q.words_per_code();
    let n = records.len();
    let gw: &[u16] = &g.words[records.start * words..records.end * words];
    Ok(match q.kind {
        ShamirKind::Gr2 | ShamirKind::Gr4 => {
            let prepared = prepared_gr_query(party, q);
            let z = match kernel {
                // SAFETY: the caller's contract.
                Some(k) => unsafe {
                    run_nests::<u16>(k, (&prepared, None), q.count, (gw, None), n, words, threads)
                }?,
                None => galois_dot_local(&prepared, q.count, gw, n, words).own,
            };
            Value::Additive(RingVec::U16(z))
        }
        ShamirKind::Fp => {
            let qw: &[u16] = &q.words[..];
            let out = match kernel {
                // SAFETY: the caller's contract.
                Some(k) => unsafe {
                    run_nests::<u16>(k, (qw, None), q.count, (gw, None), n, words, threads)
                }?,
                None => {
                    let mut out = vec![0u16; q.count * n];
                    fp_dot_reference(qw, q.count, gw, n, words, &mut out);
                    out
                }
            };
            Value::AdditiveP(fp::shamir_to_additive(party, &out))
        }
    })
}

/// The checks of a Shamir dot product's operands (CPU or GPU): one sharing, one code length,
/// packed for their sides (Galois rings), records within the gallery.
fn check_shamir_operands(
    q: &ShamirCodes,
    g: &ShamirCodes,
    records: &Range<usize>,
) -> Result<(), RuntimeError> {
    if q.kind != g.kind {
        return Err(sched(format!(
            "shamir_dot: query over {:?}, gallery over {:?}",
            q.kind, g.kind
        )));
    }
    if q.len != g.len {
        return Err(sched(format!(
            "shamir_dot: codes of {} and {} entries",
            q.len, g.len
        )));
    }
    if q.kind != ShamirKind::Fp && (q.side != Side::Query || g.side != Side::Gallery) {
        return Err(sched(
            "shamir_dot: the query must be packed as a query and the gallery as a gallery",
        ));
    }
    if records.start > records.end || records.end > g.count {
        return Err(sched(format!(
            "shamir_dot: records {records:?} of a gallery of {}",
            g.count
        )));
    }
    Ok(())
}

/// The Galois-ring query codes `q` prepared for a one-sided dot product: this party's Lagrange
/// coefficient folded into every element ([`prepare_query`]).
fn prepared_gr_query(party: usize, q: &ShamirCodes) -> Vec<u16> {
    let coefs = q.words.to_vec();
    match q.kind {
        ShamirKind::Gr2 => prepare_query::<2>(party, &ShamirVec { coefs }),
        _ => prepare_query::<4>(party, &ShamirVec { coefs }),
    }
}

/// [`shamir_dot_records`] on the party's GPU, for the Galois rings
/// ([`crate::gpu::shamir_on_gpu`]): the same checks, the same prepared query, the one-sided
/// dot products computed there; the same additive shares over Z_2^16.
pub(crate) fn shamir_dot_records_gpu(
    party: usize,
    gpu: &crate::gpu::Session,
    q: &ShamirCodes,
    g: &Arc<ShamirCodes>,
    records: Range<usize>,
) -> Result<Value, RuntimeError> {
    check_shamir_operands(q, g, &records)?;
    if !matches!(q.kind, ShamirKind::Gr2 | ShamirKind::Gr4) {
        return Err(sched(format!(
            "shamir_dot: {:?} shares have no GPU kernel",
            q.kind
        )));
    }
    let prepared = prepared_gr_query(party, q);
    let gallery = crate::gpu::session::ShamirGallery {
        holder: g.clone(),
        words: &g.words,
        words_per_code: g.words_per_code(),
        count: g.count,
    };
    let z = gpu.gr_dot_records(&prepared, q.count, &gallery, records)?;
    Ok(Value::Additive(RingVec::U16(z)))
}

/// Additive shares mod p to fresh replicated shares mod p (Section 4.3.2): one round.
pub fn reshare_p(cx: &mut Ctx<'_>, src: &Value) -> Result<Value, RuntimeError> {
    let Value::AdditiveP(z) = src else {
        return Err(sched(format!(
            "reshare_p: operand holds {}, expected additive shares mod p",
            src.kind()
        )));
    };
    if z.is_empty() {
        return Ok(Value::ReplicatedP(Rep3Fp::zeros(0)));
    }
    let x = crate::protocol::reshare::reshare_p(cx.net, cx.prss, z)?;
    cx.rounds += Stats::reshare().rounds;
    Ok(Value::ReplicatedP(x))
}

/// `T(ml) − dot` mod p for public masks, T(ml) = ⌊(den − 2·num)·ml / den⌋ (the public
/// threshold of Algorithm 1 in the masked-bitvector form; it may be negative). Local; the
/// threshold enters through component 0 ([`ThresholdPlacement::Component0`]; length-1
/// operands broadcast), or through component c on the c-th third of the records
/// ([`ThresholdPlacement::RecordThirds`], [`super::placement`]).
pub fn sub_threshold_p(
    cx: &mut Ctx<'_>,
    dot: &Value,
    ml: &Value,
    num: i64,
    den: i64,
    placement: ThresholdPlacement,
) -> Result<Value, RuntimeError> {
    if den <= 0 || num < 0 {
        return Err(sched(format!("sub_threshold_p: invalid ratio {num}/{den}")));
    }
    let d = rep_p(dot, "sub_threshold_p")?;
    match (placement, ml) {
        (ThresholdPlacement::RecordThirds, Value::PublicThirds(ml)) => {
            return sub_threshold_p_by_thirds(cx.party(), d, ml, num, den)
        }
        (ThresholdPlacement::Component0, Value::Public(_)) => {}
        (ThresholdPlacement::RecordThirds, v) => {
            return Err(sched(format!(
                "sub_threshold_p placed by record thirds reads {}",
                v.kind()
            )))
        }
        (ThresholdPlacement::Component0, Value::PublicThirds(_)) => {
            return Err(sched(
                "sub_threshold_p placed on component 0 reads mask lengths of record thirds",
            ))
        }
        _ => {}
    }
    let Value::Public(ml) = ml else {
        return Err(sched(format!(
            "sub_threshold_p: mask lengths hold {}, expected public values",
            ml.kind()
        )));
    };
    let n = broadcast_len(&[d.len(), ml.len()], "sub_threshold_p")?;
    let thresholds = Thresholds::new(num as u64, den as u64, ml);
    let t: Vec<u16> = (0..n)
        .map(|i| thresholds.of(at(ml, i)).rem_euclid(P as i128) as u16)
        .collect();
    let idx: Vec<usize> = (0..n).map(|i| if d.len() == 1 { 0 } else { i }).collect();
    // A pair with no position valid in both (`ml` = 0) has dot product 0 and compares the
    // public 0, shared as 0 whatever the dot product's shares hold (as in
    // `rep3::sub_threshold`: a deleted record's public mask is emptied, its shares kept).
    let neg = |x: u16, i: usize| if at(ml, i) == 0 { 0 } else { fp::neg(x) };
    let mut out = Rep3Fp {
        own: (0..n).map(|i| neg(d.own[idx[i]], i)).collect(),
        prev: (0..n).map(|i| neg(d.prev[idx[i]], i)).collect(),
    };
    out.add_public(cx.party(), &t);
    Ok(Value::ReplicatedP(out))
}

/// [`sub_threshold_p`] placed by record thirds: party p's own component is component p, its
/// previous one component p − 1; component c adds `T` on the c-th third of the records; records
/// with an empty gallery mask compare the public 0.
fn sub_threshold_p_by_thirds(
    party: usize,
    d: &Rep3Fp,
    ml: &PublicThirds,
    num: i64,
    den: i64,
) -> Result<Value, RuntimeError> {
    if d.len() != ml.len() {
        return Err(sched(
            "sub_threshold_p: threshold and dot product sizes differ",
        ));
    }
    let thresholds = Thresholds::up_to(num as u64, den as u64, ml.max);
    let (w, records) = (ml.width, ml.records());
    let side = |x: &[u16], adds: usize| -> Vec<u16> {
        let adding = record_third(adds, records);
        let mut out = vec![0u16; x.len()];
        for r in 0..records {
            if ml.empty[r] {
                continue;
            }
            for i in r * w..(r + 1) * w {
                let neg = fp::neg(x[i]);
                out[i] = if adding.contains(&r) {
                    let t = thresholds.of(u64::from(ml.values[i])).rem_euclid(P as i128) as u16;
                    fp::add(neg, t)
                } else {
                    neg
                };
            }
        }
        out
    };
    let own_adds = placement::adds_on(ml, party)?;
    let prev_adds = placement::adds_on(ml, party + 2)?;
    Ok(Value::ReplicatedP(Rep3Fp {
        own: side(&d.own, own_adds),
        prev: side(&d.prev, prev_adds),
    }))
}

/// Algorithm 12 (BitExtractP): bit 15 of the canonical representative in [0, p), the MSB of
/// Lemma 1 over F_p. 2ℓ + 1 = 33 rounds.
#[doc(alias = "BitExtractP")]
pub fn msb_p(cx: &mut Ctx<'_>, src: &Value) -> Result<Value, RuntimeError> {
    let x = rep_p(src, "msb_p")?;
    let b = msb_p_protocol(cx.net, cx.prss, x)?;
    if !x.is_empty() {
        cx.rounds += bit_extract_p_cost(1).rounds;
    }
    Ok(Value::Bits(b))
}

/// Algorithm 15 (LiftP, Section 5.1): shares mod p of x ∈ [0, p) to shares mod p·2^m of the
/// same x ([`crate::protocol::lift_p`]): ℓ + 1 rounds of overflow-bit extraction, then the two
/// rounds of BitInject.
#[doc(alias = "LiftP")]
pub fn lift_p(cx: &mut Ctx<'_>, src: &Value, m: u32) -> Result<Value, RuntimeError> {
    lift_exponent(m, "lift_p")?;
    let x = rep_p(src, "lift_p")?;
    if x.is_empty() {
        return Ok(Value::ReplicatedMod {
            m,
            x: Rep3Vec::zeros(0),
        });
    }
    let y = lift_p_protocol(cx.net, cx.prss, x, m)?;
    cx.rounds += crate::share::fp::L as u64 + 1 + Stats::bit_inject().rounds;
    Ok(Value::ReplicatedMod { m, x: y })
}

/// Algorithm 13 (ConstLift) mod p: \[2^m·x\] mod p·2^m from \[x\] mod p. Each component c < p,
/// read as an integer and multiplied by 2^m, is below p·2^m, and the three sum to
/// 2^m·(x + p·q) ≡ 2^m·x (mod p·2^m), for negative x (p − v) too: 2^m·(p − v) ≡ −2^m·v. Local.
#[doc(alias = "ConstLift")]
pub fn const_lift_p(_cx: &mut Ctx<'_>, src: &Value, m: u32) -> Result<Value, RuntimeError> {
    lift_exponent(m, "const_lift_p")?;
    let x = rep_p(src, "const_lift_p")?;
    let up = |v: &[u16]| -> Vec<u64> { v.iter().map(|&c| (c as u64) << m).collect() };
    Ok(Value::ReplicatedMod {
        m,
        x: Rep3Vec {
            own: up(&x.own),
            prev: up(&x.prev),
        },
    })
}

/// Components mod t of an operand of `lin_mod`/`msb_mod`: replicated shares mod p·2^m with this
/// m (checked, components below t), or public values (the trivial sharing).
fn rep_mod(
    party: usize,
    v: &Value,
    m: u32,
    t: u64,
    op: &str,
) -> Result<Rep3Vec<u64>, RuntimeError> {
    match v {
        Value::ReplicatedMod { m: vm, x } => {
            if *vm != m {
                return Err(sched(format!(
                    "{op}: operand is mod p*2^{vm}, expected p*2^{m}"
                )));
            }
            if x.own.len() != x.prev.len() || x.own.iter().chain(&x.prev).any(|&c| c >= t) {
                return Err(sched(format!(
                    "{op}: operand components are not below p*2^{m}"
                )));
            }
            Ok(x.clone())
        }
        Value::Public(p) => {
            let val: Vec<u64> = p.iter().map(|&x| x % t).collect();
            let zero = vec![0; p.len()];
            Ok(match party {
                0 => Rep3Vec {
                    own: val,
                    prev: zero,
                },
                1 => Rep3Vec {
                    own: zero,
                    prev: val,
                },
                _ => Rep3Vec {
                    own: zero.clone(),
                    prev: zero,
                },
            })
        }
        other => Err(sched(format!(
            "{op}: operand holds {}, expected replicated shares mod p*2^m",
            other.kind()
        ))),
    }
}

/// a·x − b·y mod t = p·2^m for every element (length-1 operands broadcast). Local.
pub fn lin_mod(
    cx: &mut Ctx<'_>,
    x: &Value,
    y: &Value,
    a: i64,
    b: i64,
    m: u32,
) -> Result<Value, RuntimeError> {
    let t = lift_exponent(m, "lin_mod")?;
    let party = cx.party();
    let (x, y) = (
        rep_mod(party, x, m, t, "lin_mod")?,
        rep_mod(party, y, m, t, "lin_mod")?,
    );
    let n = broadcast_len(&[x.len(), y.len()], "lin_mod")?;
    let tt = t as u128;
    let a = (a as i128).rem_euclid(t as i128) as u128;
    let nb = (-(b as i128)).rem_euclid(t as i128) as u128;
    let f = |xs: &[u64], ys: &[u64]| -> Vec<u64> {
        (0..n)
            .map(|i| ((a * at(xs, i) as u128 + nb * at(ys, i) as u128) % tt) as u64)
            .collect()
    };
    Ok(Value::ReplicatedMod {
        m,
        x: Rep3Vec {
            own: f(&x.own, &y.own),
            prev: f(&x.prev, &y.prev),
        },
    })
}

/// The comparison bit of Lemma 2 over Z_t, t = p·2^m: 1 iff the representative in [0, t) is
/// at least 2^(⌈log2 t⌉ − 1) = 2^(15+m), i.e. the value is negative under the lemma's bounds.
/// Algorithm 12 generalised to the modulus t as Section 5.2 prescribes
/// ([`crate::protocol::bit_extract_mod`]): 3K − m bits in 2K − m + 1 rounds, K = 16 + m.
pub fn msb_mod(cx: &mut Ctx<'_>, src: &Value, m: u32) -> Result<Value, RuntimeError> {
    let t = lift_exponent(m, "msb_mod")?;
    let x = rep_mod(cx.party(), src, m, t, "msb_mod")?;
    if matches!(src, Value::Public(_)) {
        return Err(sched("msb_mod: operand is public"));
    }
    let b = msb_mod_protocol(cx.net, cx.prss, &x, t)?;
    if !x.is_empty() {
        cx.rounds += msb_mod_cost(t).0;
    }
    Ok(Value::Bits(b))
}

/// [`shamir_dot_kernel`] with the variant of `table` [`crate::kernels::dispatch`] picks (null:
/// the scalar reference), records split across the context's threads.
///
/// # Safety
/// `table` must be null or point to the compiler's kernel table for this sharing and code
/// length.
pub unsafe fn shamir_dot_table(
    cx: &mut Ctx<'_>,
    query: &Value,
    gallery: &Value,
    table: *const KernelTable,
) -> Result<Value, RuntimeError> {
    let words = match gallery {
        Value::Shamir(g) => g.words_per_code(),
        _ => 0,
    };
    // With a GPU attached, the Galois rings run there ([`crate::gpu`]).
    if let (Some(gpu), Value::Shamir(g)) = (cx.gpu.clone(), gallery) {
        if crate::gpu::shamir_on_gpu(g.kind.is_galois_ring(), words) {
            let q = shamir(query, "shamir_dot")?;
            return shamir_dot_records_gpu(cx.party(), &gpu, q, g, 0..g.count);
        }
        gpu.note_cpu_dot();
    }
    // SAFETY: the caller's contract.
    let kernel = unsafe { shamir_kernel(table, words) }?;
    match kernel {
        Some(_) => {
            let threads = cx.threads;
            // SAFETY: the table's nests are its kernels (the caller's contract).
            unsafe { shamir_dot_nests(cx, query, gallery, kernel, threads) }
        }
        None => shamir_dot(cx, query, gallery),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::ctx::testkit::run3;
    use crate::share::binary::reconstruct_bits;
    use crate::share::fp::{reconstruct_fp, shamir_share, share_fp};
    use crate::share::galois::{share_codes, Packing};
    use proptest::prelude::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;
    use std::sync::Arc;

    /// Plain record-major dot products of `q` (n_q codes) and `g` (n_g codes), wrapping u64.
    fn plain_dots(q: &[i64], n_q: usize, g: &[i64], n_g: usize, len: usize) -> Vec<i64> {
        let mut out = Vec::new();
        for r in 0..n_g {
            for c in 0..n_q {
                out.push((0..len).map(|i| q[c * len + i] * g[r * len + i]).sum());
            }
        }
        out
    }

    /// Shares masked-bitvector codes (entries −1, 0, 1) with `kind`, computes the Shamir dot
    /// products and their resharing at the three parties, returns the opened dot products
    /// (mod 2^16 for GR, mod p for F_p) and whether masks were read right.
    fn shamir_run(
        kind: ShamirKind,
        n_q: usize,
        n_g: usize,
        len: usize,
        seed: u64,
    ) -> (Vec<u64>, Vec<i64>) {
        let mut rng = ChaCha12Rng::seed_from_u64(seed);
        let q: Vec<i64> = (0..n_q * len).map(|_| rng.random_range(-1..=1)).collect();
        let g: Vec<i64> = (0..n_g * len).map(|_| rng.random_range(-1..=1)).collect();
        let want = plain_dots(&q, n_q, &g, n_g, len);
        let (qs, gs): ([Vec<u16>; 3], [Vec<u16>; 3]) = match kind {
            ShamirKind::Fp => {
                let f = |v: &[i64]| -> Vec<u16> {
                    v.iter().map(|&x| x.rem_euclid(P as i64) as u16).collect()
                };
                (
                    shamir_share(&f(&q), &mut rng),
                    shamir_share(&f(&g), &mut rng),
                )
            }
            _ => {
                let f = |v: &[i64]| -> Vec<u16> { v.iter().map(|&x| x as u16).collect() };
                let (qv, gv) = (f(&q), f(&g));
                if kind == ShamirKind::Gr2 {
                    (
                        share_codes::<2>(&qv, n_q, len, Packing::Plain, &mut rng).map(|s| s.coefs),
                        share_codes::<2>(&gv, n_g, len, Packing::Reversed, &mut rng)
                            .map(|s| s.coefs),
                    )
                } else {
                    (
                        share_codes::<4>(&qv, n_q, len, Packing::Plain, &mut rng).map(|s| s.coefs),
                        share_codes::<4>(&gv, n_g, len, Packing::Reversed, &mut rng)
                            .map(|s| s.coefs),
                    )
                }
            }
        };
        let inputs: [(Vec<u16>, Vec<u16>); 3] =
            std::array::from_fn(|p| (qs[p].clone(), gs[p].clone()));
        let mw = len.div_ceil(64);
        let runs = run3(inputs, move |cx, (qw, gw): &(Vec<u16>, Vec<u16>)| {
            let qc = ShamirCodes::new(
                kind,
                Side::Query,
                n_q,
                len,
                (0..n_q as u64).collect(),
                vec![u64::MAX; n_q * mw],
                qw.clone(),
            )
            .unwrap();
            let gc = ShamirCodes::new(
                kind,
                Side::Gallery,
                n_g,
                len,
                (0..n_g as u64).collect(),
                vec![u64::MAX; n_g * mw],
                gw.clone(),
            )
            .unwrap();
            let z = shamir_dot(
                cx,
                &Value::Shamir(Arc::new(qc)),
                &Value::Shamir(Arc::new(gc)),
            )
            .unwrap();
            match z {
                Value::AdditiveP(_) => {
                    let Value::ReplicatedP(x) = reshare_p(cx, &z).unwrap() else {
                        panic!()
                    };
                    (
                        x.own.iter().map(|&v| v as u64).collect::<Vec<u64>>(),
                        x.prev.iter().map(|&v| v as u64).collect::<Vec<u64>>(),
                        cx.rounds,
                    )
                }
                Value::Additive(RingVec::U16(a)) => {
                    let r = crate::protocol::reshare(
                        cx.net,
                        cx.prss,
                        crate::share::AddVec { own: a },
                        16,
                    )
                    .unwrap();
                    (
                        r.own.iter().map(|&v| v as u64).collect(),
                        r.prev.iter().map(|&v| v as u64).collect(),
                        1,
                    )
                }
                _ => panic!("unexpected dot product result"),
            }
        });
        for (p, r) in runs.iter().enumerate() {
            assert_eq!(r.out.1, runs[(p + 2) % 3].out.0, "replication");
        }
        let modulus: u64 = if kind == ShamirKind::Fp {
            P as u64
        } else {
            1 << 16
        };
        let got: Vec<u64> = (0..want.len())
            .map(|i| (runs[0].out.0[i] + runs[1].out.0[i] + runs[2].out.0[i]) % modulus)
            .collect();
        let want = want.iter().map(|&w| w.rem_euclid(modulus as i64)).collect();
        (got, want)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn shamir_dot_matches_plain(which in 0usize..3, n_q in 0usize..4, n_g in 0usize..4, len in prop_oneof![Just(0usize), Just(64), 1usize..150], seed: u64) {
            let kind = [ShamirKind::Fp, ShamirKind::Gr2, ShamirKind::Gr4][which];
            let (got, want) = shamir_run(kind, n_q, n_g, len, seed);
            prop_assert_eq!(got, want.into_iter().map(|w| w as u64).collect::<Vec<_>>());
        }

        #[test]
        fn sub_threshold_p_then_msb_p_is_algorithm_1(seed: u64, pairs in proptest::collection::vec((0u64..=12_800, 0.0f64..=1.0), 0..40), num in 0i64..100, one_ml in any::<bool>(), dead in 0usize..4) {
            // Public masks over F_p: match iff hd·den < num·ml, i.e. MSB_p(T(ml) − dot).
            let den = 200i64;
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let mut ml: Vec<u64> = pairs.iter().map(|p| p.0).collect();
            if one_ml { ml.truncate(1); if ml.is_empty() { ml.push(12_800); } }
            let g = |v: &[u64], i: usize| if v.len() == 1 { v[0] } else { v[i] };
            let hd: Vec<u64> = pairs.iter().enumerate().map(|(i, p)| (g(&ml, i) as f64 * p.1) as u64).collect();
            let dot: Vec<u16> = hd.iter().enumerate().map(|(i, &h)| (g(&ml, i) as i64 - 2 * h as i64).rem_euclid(P as i64) as u16).collect();
            let mut want: Vec<bool> = hd.iter().enumerate().map(|(i, &h)| (h as i64) * den < num * g(&ml, i) as i64).collect();
            let mut dot = dot;
            if !one_ml {
                // Deleted records: an emptied public mask over shares still as stored (any
                // dot product) never matches.
                for _ in 0..dead {
                    ml.push(0);
                    dot.push(rng.random_range(0..P));
                    want.push(false);
                }
            }
            let s = share_fp(&dot, &mut rng);
            let runs = run3(s, move |cx, x: &Rep3Fp| {
                let d = sub_threshold_p(cx, &Value::ReplicatedP(x.clone()), &Value::Public(ml.clone()), num, den, ThresholdPlacement::Component0).unwrap();
                let Value::Bits(b) = msb_p(cx, &d).unwrap() else { panic!() };
                b
            });
            let got = reconstruct_bits(&[runs[0].out.clone(), runs[1].out.clone(), runs[2].out.clone()]).unwrap();
            let rounds = if got.is_empty() { 0 } else { bit_extract_p_cost(1).rounds };
            prop_assert_eq!(got, want);
            prop_assert!(runs.iter().all(|r| r.rounds == rounds));
        }

        /// The same placed by record thirds: each party holds the mask lengths of the two
        /// thirds whose components it holds (zeros elsewhere), component c adds the threshold
        /// on third c, and deleted records (emptied masks, shares as stored) are flagged by
        /// their masks: the opened bits are Algorithm 1's.
        #[test]
        fn sub_threshold_p_by_record_thirds_is_algorithm_1(seed: u64, pairs in proptest::collection::vec((0u64..=12_800, 0.0f64..=1.0), 0..40), num in 0i64..100, dead in proptest::collection::vec(any::<bool>(), 40)) {
            use crate::ops::placement::PublicThirds;
            use crate::vocab::holds_component;
            let den = 200i64;
            let n = pairs.len();
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let ml: Vec<u64> = pairs.iter().enumerate().map(|(i, p)| if dead[i] { 0 } else { p.0 }).collect();
            let hd: Vec<u64> = pairs.iter().map(|p| (p.0 as f64 * p.1) as u64).collect();
            // A deleted record's shares are as stored: its dot product from its old mask.
            let dot: Vec<u16> = (0..n).map(|i| (pairs[i].0 as i64 - 2 * hd[i] as i64).rem_euclid(P as i64) as u16).collect();
            let want: Vec<bool> = (0..n).map(|i| !dead[i] && (hd[i] as i64) * den < num * ml[i] as i64).collect();
            let s = share_fp(&dot, &mut rng);
            let inputs: [(Rep3Fp, PublicThirds); 3] = std::array::from_fn(|p| {
                let held = [0, 1, 2].map(|c| holds_component(p, c, 2));
                let values: Vec<u32> = (0..n)
                    .map(|r| if held[(0..3).find(|&c| record_third(c, n).contains(&r)).unwrap()] { ml[r] as u32 } else { 0 })
                    .collect();
                let max = values.iter().copied().max().map_or(0, u64::from);
                (s[p].clone(), PublicThirds { values, width: 1, held, empty: dead[..n].to_vec(), max })
            });
            let runs = run3(inputs, move |cx, (x, t): &(Rep3Fp, PublicThirds)| {
                let ml = Value::PublicThirds(Arc::new(t.clone()));
                let d = sub_threshold_p(cx, &Value::ReplicatedP(x.clone()), &ml, num, den, ThresholdPlacement::RecordThirds).unwrap();
                let Value::Bits(b) = msb_p(cx, &d).unwrap() else { panic!() };
                b
            });
            let got = reconstruct_bits(&[runs[0].out.clone(), runs[1].out.clone(), runs[2].out.clone()]).unwrap();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn lifts_and_lin_mod_match_plain(seed: u64, m in prop_oneof![Just(1u32), Just(20), Just(47), 1u32..=47], xs in proptest::collection::vec(0u16..P, 0..30), a: i64, b: i64, by in any::<bool>()) {
            let t = (P as i128) << m;
            let mut xs = xs;
            xs.extend([0, 1, P - 1, P / 2, P / 2 + 1]);
            let ys: Vec<u16> = if by { vec![P - 5] } else { xs.iter().rev().copied().collect() };
            let mut rng = ChaCha12Rng::seed_from_u64(seed);
            let (sx, sy) = (share_fp(&xs, &mut rng), share_fp(&ys, &mut rng));
            let inputs: [(Rep3Fp, Rep3Fp); 3] = std::array::from_fn(|p| (sx[p].clone(), sy[p].clone()));
            let runs = run3(inputs, move |cx, (x, y): &(Rep3Fp, Rep3Fp)| {
                let lx = lift_p(cx, &Value::ReplicatedP(x.clone()), m).unwrap();
                let cy = const_lift_p(cx, &Value::ReplicatedP(y.clone()), m).unwrap();
                let Value::ReplicatedMod { x: r, .. } = lin_mod(cx, &lx, &cy, a, b, m).unwrap() else { panic!() };
                let Value::ReplicatedMod { x: l, .. } = lx else { panic!() };
                (r, l)
            });
            let open = |f: &dyn Fn(usize) -> Vec<u64>| -> Vec<i128> {
                let (a0, a1, a2) = (f(0), f(1), f(2));
                (0..a0.len()).map(|i| (a0[i] as i128 + a1[i] as i128 + a2[i] as i128) % t).collect()
            };
            let lifted = open(&|p| runs[p].out.1.own.clone());
            prop_assert_eq!(lifted, xs.iter().map(|&x| x as i128).collect::<Vec<_>>());
            let got = open(&|p| runs[p].out.0.own.clone());
            let g = |v: &[u16], i: usize| if v.len() == 1 { v[0] } else { v[i] } as i128;
            // y is read as a signed value of F_p (centred), scaled by 2^m: ConstLift keeps signs.
            let centred = |v: i128| if v > (P as i128 - 1) / 2 { v - P as i128 } else { v };
            let want: Vec<i128> = (0..xs.len())
                .map(|i| (a as i128 * g(&xs, i) - b as i128 * (centred(g(&ys, i)) << m)).rem_euclid(t))
                .collect();
            prop_assert_eq!(got, want);
            for r in &runs {
                prop_assert!(r.out.0.own.iter().chain(&r.out.0.prev).all(|&c| (c as i128) < t));
            }
        }
    }

    #[test]
    fn bad_operands_are_schedule_errors() {
        let runs = run3([(), (), ()], |cx, _| {
            let p = Value::ReplicatedP(Rep3Fp::zeros(2));
            let m5 = Value::ReplicatedMod {
                m: 5,
                x: Rep3Vec::zeros(2),
            };
            let big = Value::ReplicatedMod {
                m: 5,
                x: Rep3Vec {
                    own: vec![u64::MAX],
                    prev: vec![0],
                },
            };
            let fp = Value::Shamir(Arc::new(
                ShamirCodes::new(
                    ShamirKind::Fp,
                    Side::Query,
                    1,
                    64,
                    vec![0],
                    vec![0],
                    vec![0; 64],
                )
                .unwrap(),
            ));
            let gr = Value::Shamir(Arc::new(
                ShamirCodes::new(
                    ShamirKind::Gr4,
                    Side::Query,
                    1,
                    64,
                    vec![0],
                    vec![0],
                    vec![0; 64],
                )
                .unwrap(),
            ));
            [
                lift_p(cx, &p, 0).err(),
                lift_p(cx, &p, 48).err(),
                const_lift_p(cx, &m5, 5).err(),
                lin_mod(cx, &m5, &m5, 1, 1, 6).err(),
                msb_mod(cx, &big, 5).err(),
                msb_mod(cx, &Value::Public(vec![1]), 5).err(),
                sub_threshold_p(
                    cx,
                    &p,
                    &Value::Public(vec![1, 2, 3]),
                    1,
                    2,
                    ThresholdPlacement::Component0,
                )
                .err(),
                sub_threshold_p(
                    cx,
                    &p,
                    &Value::Public(vec![1, 2]),
                    1,
                    0,
                    ThresholdPlacement::Component0,
                )
                .err(),
                shamir_dot(cx, &fp, &gr).err(),
                // Both packed as queries: the GR dot product would be wrong.
                shamir_dot(cx, &gr, &gr).err(),
                reshare_p(cx, &p).err(),
                msb_p(cx, &m5).err(),
            ]
            .map(|e| e.map(|e| e.to_string()))
        });
        for r in &runs {
            assert_eq!(r.messages, 0);
            for e in &r.out {
                let e = e.as_ref().expect("an error");
                assert!(
                    e.contains("internal error in the generated schedule"),
                    "{e}"
                );
            }
        }
    }

    #[test]
    fn empty_batches_send_nothing() {
        let runs = run3([(), (), ()], |cx, _| {
            let p = Value::ReplicatedP(Rep3Fp::zeros(0));
            let lifted = lift_p(cx, &p, 20).unwrap();
            let bits = msb_mod(cx, &lifted, 20).unwrap();
            let bp = msb_p(cx, &p).unwrap();
            let r = reshare_p(cx, &Value::AdditiveP(vec![])).unwrap();
            matches!((bits, bp, r), (Value::Bits(a), Value::Bits(b), Value::ReplicatedP(c)) if a.len == 0 && b.len == 0 && c.is_empty())
        });
        assert!(runs
            .iter()
            .all(|r| r.out && r.messages == 0 && r.rounds == 0));
        let _ = reconstruct_fp;
    }
}
