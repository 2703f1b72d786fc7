//! One fhd test under one (sharing, variant): its rings, `(a, b)`, cost and justification, or
//! why the combination does not apply (see the parent module's rules).

use super::cost::Acc;
use super::{FhdPlan, MsbInput, PlanError, Sharing, Variant};
use crate::analysis::approx::{approx_bounded, approx_pow2, Approximation, Rounding};
use crate::analysis::lemma2::{select_secret_ring, SecretRingChoice, MAX_RING_BITS};
use crate::analysis::ring::select_ring;
use crate::analysis::sites::FhdSite;
use crate::sema::program::MaskKind;

/// p of the F_p sharing.
pub const P: i128 = irisc_runtime::share::fp::P as i128;
/// `b < 2^16` for NoLift (the paper's "16-bit a, b").
pub const NO_LIFT_B_BOUND: u64 = (1 << 16) - 1;

fn err(t: &FhdSite, message: String, hint: impl Into<String>) -> PlanError {
    PlanError {
        message,
        hint: hint.into(),
        at: t.at.clone(),
    }
}

/// Bits of an unsigned value: the smallest n with `v < 2^n`.
fn unsigned_bits(v: u32) -> u32 {
    32 - v.leading_zeros()
}

/// Plans `t` under `sharing` and `variant` with precision `m` (`b = 2^m`).
pub fn plan_fhd(
    t: &FhdSite,
    sharing: Sharing,
    variant: Variant,
    m: u32,
    shamir_ok: bool,
    msb: MsbInput,
) -> Result<FhdPlan, PlanError> {
    if sharing.is_shamir() && !shamir_ok {
        return Err(err(
            t,
            format!(
                "{sharing} sharing needs a gallery on the record side, but this test compares \
                 with `earlier(..)` queries (Shamir dot products pair a query packing with a \
                 gallery packing)"
            ),
            "use --sharing rep3 (or drop --sharing)",
        ));
    }
    match (variant, t.mask) {
        (Variant::PlainMask, MaskKind::Secret) => {
            return Err(err(
                t,
                "plain-mask needs public masks, but this test's masks are secret (Algorithm 3 \
                 cannot compute the public threshold floor(f*ml) from a shared ml)"
                    .into(),
                "plain-mask needs public masks: declare `public mask` or drop --variant",
            ))
        }
        (Variant::PlainMask, MaskKind::Public) => return plain_mask(t, sharing, msb),
        (_, MaskKind::Public) => {
            return Err(err(
                t,
                format!(
                    "{variant} is a secret-mask variant (Section 5), but this test's masks are \
                     public"
                ),
                "with public masks use plain-mask: drop --variant, or declare `secret mask`",
            ))
        }
        _ => {}
    }
    if matches!(variant, Variant::NoLift | Variant::ConstLift) && sharing != Sharing::Rep3 {
        return Err(err(
            t,
            format!(
                "{variant} computes a dot product in the comparison ring (more than 16 bits); \
                 only the replicated sharing has such rings, {sharing} computes in 16 bits"
            ),
            format!("use --sharing rep3, or --variant mpc-lift with {sharing}"),
        ));
    }
    let ap = if variant == Variant::NoLift {
        approx_bounded(t.ratio, NO_LIFT_B_BOUND, Rounding::Conservative)
    } else {
        approx_pow2(t.ratio, m, Rounding::Conservative)
    }
    .map_err(|e| {
        err(
            t,
            e.to_string(),
            "use --precision 16 (the deployed b = 2^16)",
        )
    })?;
    let ring = select_secret_ring(t.code_bits, &ap).map_err(|e| {
        err(
            t,
            e.to_string(),
            format!(
                "lower the precision m (--precision, now {m}), use --variant no-lift (smaller b), \
                 shorter codes than {} bits, or a ratio with a smaller denominator",
                t.code_bits
            ),
        )
    })?;
    match (variant, sharing) {
        (Variant::NoLift, _) => Ok(no_lift(t, &ap, &ring)),
        (Variant::ConstLift, _) => Ok(const_lift(t, &ap, &ring, m)),
        (Variant::MpcLift, Sharing::Rep3) => Ok(mpc_lift_rep3(t, &ap, &ring, m)),
        (Variant::MpcLift, Sharing::Fp) => mpc_lift_fp(t, &ap, &ring, m),
        (Variant::MpcLift, _) => mpc_lift_gr(t, sharing, &ap, &ring, m),
        (Variant::PlainMask, _) => unreachable!("handled above"),
    }
}

#[allow(clippy::too_many_arguments)]
fn secret_plan(
    variant: Variant,
    sharing: Sharing,
    (dot_ring, ml_ring, compare_ring): (u32, u32, u32),
    ring: &SecretRingChoice,
    lift_bits: Option<u32>,
    why: String,
    acc: Acc,
) -> FhdPlan {
    FhdPlan {
        variant,
        sharing,
        dot_ring,
        ml_ring: Some(ml_ring),
        compare_ring,
        a: ring.a,
        b: ring.b,
        lift_bits,
        msb_input: MsbInput::Replicated,
        compared_lo: ring.lo,
        compared_hi: ring.hi,
        justification: why,
        cost: acc.finish(),
    }
}

fn lemma2_note(ring: &SecretRingChoice) -> String {
    format!(
        "{} (Lemma 2: {}; its sufficient condition needs k = {})",
        ring.justification,
        if ring.lemma2_holds {
            "0 <= a <= b holds"
        } else {
            "a < 0, its proof does not apply, the exact range does"
        },
        ring.lemma2_ring_bits
    )
}

/// NoLift (rep3): both dot products directly in Z_2^k, `MSB(a*ml - b*dot)`.
fn no_lift(t: &FhdSite, ap: &Approximation, ring: &SecretRingChoice) -> FhdPlan {
    let (l, k) = (t.code_bits, ring.ring_bits);
    let acc = Acc::default()
        .rep3_dot(l, k)
        .rep3_dot(l, k)
        .reshare(k)
        .reshare(k)
        .lin(k)
        .msb(k);
    let why = format!(
        "a/b = {}/{} is the closest conservative fraction with b < 2^16; {}; both dot products \
         in Z_2^{k}",
        ap.a,
        ap.b,
        lemma2_note(ring)
    );
    secret_plan(
        Variant::NoLift,
        Sharing::Rep3,
        (k, k, k),
        ring,
        None,
        why,
        acc,
    )
}

/// ConstLift (rep3): `dot` in Z_2^(k-m), lifted by `b = 2^m` for free; `ml` in Z_2^k.
fn const_lift(t: &FhdSite, ap: &Approximation, ring: &SecretRingChoice, m: u32) -> FhdPlan {
    let (l, k) = (t.code_bits, ring.ring_bits);
    let n = ring.const_lift_dot_bits.unwrap_or(k);
    let acc = Acc::default()
        .rep3_dot(l, n)
        .reshare(n)
        .rep3_dot(l, k)
        .reshare(k)
        .lin(k)
        .msb(k);
    let why = format!(
        "a/b = {}/2^{m}; {}; dot in Z_2^{n} (k - m), b*[dot] is a sharing in Z_2^{k} \
         (Algorithm 13); ml in Z_2^{k}",
        ap.a,
        lemma2_note(ring)
    );
    secret_plan(
        Variant::ConstLift,
        Sharing::Rep3,
        (n, k, k),
        ring,
        Some(m),
        why,
        acc,
    )
}

/// MPCLift (rep3): both dot products in Z_2^n (n = max(k - m, bits of l)), `ml` lifted to k by
/// Algorithm 14, `dot` by ConstLift.
fn mpc_lift_rep3(t: &FhdSite, ap: &Approximation, ring: &SecretRingChoice, m: u32) -> FhdPlan {
    let (l, k) = (t.code_bits, ring.ring_bits);
    let n = ring
        .const_lift_dot_bits
        .unwrap_or(k)
        .max(unsigned_bits(l))
        .min(k);
    let acc = Acc::default()
        .rep3_dot(l, n)
        .rep3_dot(l, n)
        .reshare(n)
        .reshare(n)
        .mpc_lift(n, k - n)
        .lin(k)
        .msb(k);
    let why = format!(
        "a/b = {}/2^{m}; {}; dot and ml in Z_2^{n} (ml <= {l} < 2^{n}), ml lifted {n} -> {k} \
         (Algorithm 14), b*[dot] in Z_2^{k} (Algorithm 13)",
        ap.a,
        lemma2_note(ring)
    );
    secret_plan(
        Variant::MpcLift,
        Sharing::Rep3,
        (n, n, k),
        ring,
        Some(m),
        why,
        acc,
    )
}

/// MPCLift over GR(2^16, d): both dot products in Z_2^16, needs `k - m <= 16` and `l < 2^16`.
fn mpc_lift_gr(
    t: &FhdSite,
    sharing: Sharing,
    ap: &Approximation,
    ring: &SecretRingChoice,
    m: u32,
) -> Result<FhdPlan, PlanError> {
    let (l, k) = (t.code_bits, ring.ring_bits);
    if k.saturating_sub(m) > 16 || unsigned_bits(l) > 16 {
        return Err(err(
            t,
            format!(
                "{sharing} computes dot products in Z_2^16, but a*ml - b*dot needs k = {k} with \
                 b = 2^{m}, so dot would need {} bits (and ml <= {l})",
                k.saturating_sub(m)
            ),
            "use --sharing rep3, shorter codes, or a larger precision m",
        ));
    }
    let acc = Acc::default()
        .shamir_dot(l)
        .shamir_dot(l)
        .reshare(16)
        .reshare(16)
        .mpc_lift(16, k.saturating_sub(16))
        .lin(k)
        .msb(k);
    let why = format!(
        "a/b = {}/2^{m}; {}; Shamir dot products over GR(2^16, {}) reshared to Z_2^16, ml \
         lifted 16 -> {k} (Algorithm 14), b*[dot] in Z_2^{k} (Algorithm 13)",
        ap.a,
        lemma2_note(ring),
        if sharing == Sharing::Gr2 { 2 } else { 4 }
    );
    Ok(secret_plan(
        Variant::MpcLift,
        sharing,
        (16, 16, k),
        ring,
        Some(m),
        why,
        acc,
    ))
}

/// MPCLift mod p: LiftP (Algorithm 15) of `ml`, ConstLift of `dot`, comparison mod `p*2^m`,
/// whose "negative" half starts at `2^(15+m)`: needs `hi < 2^(15+m)` and
/// `lo >= -(p - 2^15)*2^m`.
fn mpc_lift_fp(
    t: &FhdSite,
    ap: &Approximation,
    ring: &SecretRingChoice,
    m: u32,
) -> Result<FhdPlan, PlanError> {
    let l = t.code_bits;
    let fits = (1..=47).contains(&m)
        && ring.hi < 1i128 << (15 + m)
        && ring.lo >= -((P - (1 << 15)) << m)
        && i128::from(l) < P;
    if !fits {
        return Err(err(
            t,
            format!(
                "fp computes a*ml - b*dot mod p*2^{m}, whose signed range is \
                 [-(p - 2^15)*2^{m}, 2^{}), but it spans [{}, {}] (m must be in 1..=47)",
                15 + m,
                ring.lo,
                ring.hi
            ),
            "use --sharing rep3, or a precision m in 1..=47",
        ));
    }
    let acc = Acc::default()
        .shamir_dot(l)
        .shamir_dot(l)
        .reshare(16)
        .reshare(16)
        .lift_p(m)
        .lin(64)
        .msb_mod(m);
    let why = format!(
        "a/b = {}/2^{m}; a*ml - b*dot in [{}, {}] ⊂ [-(p - 2^15)*2^{m}, 2^{}) of Z_(p*2^{m}) \
         (Lemma 2 over t = p*2^{m}); ml lifted mod p -> p*2^{m} (Algorithm 15), b*[dot] by \
         Algorithm 13",
        ap.a,
        ring.lo,
        ring.hi,
        15 + m
    );
    Ok(secret_plan(
        Variant::MpcLift,
        Sharing::Fp,
        (0, 0, m),
        ring,
        Some(m),
        why,
        acc,
    ))
}

/// PlainMask: `MSB(T - dot)` with the public `T = floor(f*ml)` (Lemma 1). With `msb` additive
/// and a Z_2^k comparison, the MSB is AdditiveMSB of the additive `T - dot` (no reshare).
fn plain_mask(t: &FhdSite, sharing: Sharing, msb: MsbInput) -> Result<FhdPlan, PlanError> {
    let msb = if sharing == Sharing::Fp {
        MsbInput::Replicated
    } else {
        msb
    };
    // The comparison after the dot product in Z_2^k.
    let compare = |acc: Acc, k: u32| match msb {
        MsbInput::Additive => acc.additive_msb(k),
        MsbInput::Replicated => acc.reshare(k).msb(k),
    };
    let l = t.code_bits;
    let ring = select_ring(l, t.ratio);
    let k = ring.ring_bits;
    let (dot_ring, compare_ring, acc, why) = match sharing {
        Sharing::Rep3 => {
            if k > MAX_RING_BITS {
                return Err(err(
                    t,
                    format!("T - dot in [{}, {}] needs a {k}-bit ring", ring.lo, ring.hi),
                    "use shorter codes",
                ));
            }
            let acc = compare(Acc::default().rep3_dot(l, k), k);
            let why = format!(
                "{} (Lemma 1 {}: its sufficient condition needs k = {})",
                ring.justification,
                if ring.lemma1_holds {
                    "applies"
                } else {
                    "does not apply (r > 1/2)"
                },
                ring.lemma1_ring_bits
            );
            (k, k, acc, why)
        }
        Sharing::Gr2 | Sharing::Gr4 => {
            if k > 16 {
                return Err(err(
                    t,
                    format!(
                        "{sharing} compares in Z_2^16, but T - dot in [{}, {}] needs k = {k}",
                        ring.lo, ring.hi
                    ),
                    "use --sharing rep3 or shorter codes",
                ));
            }
            let acc = compare(Acc::default().shamir_dot(l), 16);
            let why = format!(
                "T - dot in [{}, {}] ⊂ [-2^15, 2^15): Z_2^16 of GR(2^16, d) holds it (k = {k} \
                 would suffice)",
                ring.lo, ring.hi
            );
            (16, 16, acc, why)
        }
        Sharing::Fp => {
            let (lo, hi) = (-(P - (1 << 15)), (1 << 15) - 1);
            if ring.lo < lo || ring.hi > hi {
                return Err(err(
                    t,
                    format!(
                        "fp compares mod p = {P}, whose signed range is [{lo}, {hi}], but T - dot \
                         spans [{}, {}]",
                        ring.lo, ring.hi
                    ),
                    "use --sharing rep3 or shorter codes",
                ));
            }
            let acc = Acc::default().shamir_dot(l).reshare(16).msb_p();
            let why = format!(
                "T - dot in [{}, {}] ⊂ [{lo}, {hi}]: bit 15 of the representative in [0, p) is \
                 the sign (Lemma 1 over F_p, Algorithm 12)",
                ring.lo, ring.hi
            );
            (0, 0, acc, why)
        }
    };
    Ok(FhdPlan {
        variant: Variant::PlainMask,
        sharing,
        dot_ring,
        ml_ring: None,
        compare_ring,
        a: t.ratio.num as i64,
        b: t.ratio.den,
        lift_bits: None,
        msb_input: msb,
        compared_lo: ring.lo,
        compared_hi: ring.hi,
        justification: why,
        cost: acc.finish(),
    })
}
