//! The choice of sharing, variants and rings (design §5–6), as pure functions over the
//! comparison sites of the `irs` module ([`crate::analysis::sites`]): `variant-select` calls
//! [`choose`], `ring-select` calls [`plan_fhd_site`] / [`plan_cosine_site`], and [`Plan::of`]
//! reads what they recorded back from the module (for `irisc explain` and the plaintext
//! reference). Per fhd test the sharing and the
//! variant of the Large-Scale MPC paper (Section 5, Tables 2–3: Plain Mask / MPCLift / ConstLift
//! / NoLift, over rep3, Shamir mod p or Shamir over a Galois ring), their rings (Lemma 1 for
//! public masks, Lemma 2 for secret ones), and per cosine test its ring.
//!
//! Applicability:
//! - PlainMask only with public masks; MPCLift, ConstLift, NoLift only with secret masks.
//! - NoLift and ConstLift only over rep3 (they need a dot product in a large power-of-two ring);
//!   MPCLift over rep3, GR(2^16, d) and F_p.
//! - Shamir sharings (GR, F_p) only for tests whose record side is a gallery (not `earlier(q)`:
//!   the Galois-ring dot product needs the gallery in its reversed packing) and whose ranges fit
//!   the 16-bit ring / the prime.
//! - Cosine tests are always rep3.
//!
//! Rings: PlainMask rep3 uses [`select_ring`] (Lemma 1, exact range); GR uses Z_2^16, F_p uses p.
//! ConstLift and MPCLift take `b = 2^m` ([`approx_pow2`], conservative, `m = precision_bits`,
//! default 16 as deployed) and the comparison ring of [`select_secret_ring`] (Lemma 2, exact
//! range); NoLift takes the best conservative `a/b` with `b < 2^16` ([`approx_bounded`]) and
//! computes both dot products directly in the smallest ring Lemma 2's range allows.
//!
//! Choice: one sharing for every iris input (an input has one share format); for each sharing,
//! every fhd test takes its cheapest applicable variant under [`cost`]'s score, weighted by the
//! comparisons per record (rotations); the sharing with the lowest total wins (ties: Rep3, Gr2,
//! Gr4, Fp). [`PlanOptions`] forces the sharing and/or the variant; a forced choice that does
//! not apply is a [`PlanError`] saying why and what to change.

pub mod cost;
mod fhd;
mod from_module;
#[cfg(test)]
pub(crate) mod tests;

pub use cost::TestCost;

use super::cosine::select_cosine_ring;
use super::sites::{ComparisonSite, CosineSite, SiteKind};
use crate::mlir::SourceRange;
use crate::sema::program::{BinderKind, BoolExpr, MaskKind, Program, RevealShape};
use irisc_runtime::vocab::{MsbInput, Protocol, Sharing, Variant};

/// What the user forces (`--sharing`, `--variant`, `--precision`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PlanOptions {
    pub sharing: Option<Sharing>,
    pub variant: Option<Variant>,
    /// m of `b = 2^m` (ConstLift, MPCLift); default [`crate::analysis::approx::DEFAULT_M`].
    pub precision_bits: Option<u32>,
    /// `--per-query-chunks`: the chunk stage's ops once per query, not once for the batch
    /// (`mpc-tile{batch-chunks=0}`).
    pub per_query_chunks: bool,
    /// `--query-batch N`: queries whose dot products with a chunk are one kernel call
    /// (`mpc-tile{query-batch=N}`; None: the pass's default, 8).
    pub query_batch: Option<u32>,
    /// `--protocol`: the protocol family (None: `rep3`).
    pub protocol: Option<Protocol>,
    /// `--malicious M` under `fss2`: CSB.Eval* with M normal/trap instances (None: semi-honest).
    pub malicious: Option<u32>,
    /// `--msb-input`: what plain-mask comparisons in Z_2^k extract the MSB from (None: the
    /// cheaper by the cost model under `rep3`, replicated shares under `beaver`). `irisc build
    /// --target cuda` asks for replicated shares unless told: the GPU runs the reshare and
    /// BitExtract (or, told additive, AdditiveMSB).
    pub msb_input: Option<MsbInput>,
    /// `--threshold-placement`: where plain-mask thresholds are added and so who computes the
    /// mask lengths (`threshold-placement{placement=...}`; None: by record thirds).
    pub threshold_placement: Option<irisc_runtime::vocab::ThresholdPlacement>,
}

/// The plan of one fhd test.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FhdPlan {
    pub variant: Variant,
    pub sharing: Sharing,
    /// k of the code dot product (16 for GR; 0 means "mod p").
    pub dot_ring: u32,
    /// Secret masks: k of the mask dot product (0 means "mod p").
    pub ml_ring: Option<u32>,
    /// k of the MSB (F_p: 0 with public masks, the comparison is mod p; with secret masks m,
    /// the ring is p*2^m).
    pub compare_ring: u32,
    /// Secret masks: `a/b ~ 1 - 2r`; public masks: the ratio as `num/den`.
    pub a: i64,
    pub b: u64,
    /// m of ConstLift / MPCLift (`b = 2^m`).
    pub lift_bits: Option<u32>,
    /// What the MSB starts from: additive shares (AdditiveMSB) only for plain-mask tests in
    /// Z_2^k under `rep3`.
    pub msb_input: MsbInput,
    /// The exact range of the compared value.
    pub compared_lo: i128,
    pub compared_hi: i128,
    pub justification: String,
    pub cost: TestCost,
}

/// The plan of one cosine test (always rep3).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CosinePlan {
    pub ring: u32,
    pub num: u64,
    pub den: u64,
    pub negative: bool,
    pub strict: bool,
    pub justification: String,
    pub cost: TestCost,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "test")]
pub enum TestPlan {
    Fhd(FhdPlan),
    Cosine(CosinePlan),
}

impl TestPlan {
    pub fn cost(&self) -> &TestCost {
        match self {
            TestPlan::Fhd(f) => &f.cost,
            TestPlan::Cosine(c) => &c.cost,
        }
    }

    /// The ring the MSB is extracted in, as a number of bits (F_p: 16, p*2^m: 16 + m).
    pub fn msb_bits(&self) -> u32 {
        match self {
            TestPlan::Fhd(f) => match (f.sharing, f.variant) {
                (Sharing::Fp, Variant::PlainMask) => 16,
                (Sharing::Fp, _) => 16 + f.compare_ring,
                _ => f.compare_ring,
            },
            TestPlan::Cosine(c) => c.ring,
        }
    }
}

/// What the chosen plan costs per record (one record of every record binder; rotations
/// counted): the quantity the choice minimised. `irisc explain` gives per-query totals.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, Default)]
pub struct ProgramCost {
    pub comparisons_per_record: u64,
    /// Rounds of all comparisons, lowered one after another.
    pub rounds: u64,
    pub bytes_per_party_per_record: f64,
    pub and_gates_per_record: u64,
    pub work_per_record: u64,
    pub score_per_record: f64,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Plan {
    /// The protocol family of the whole program.
    pub protocol: Protocol,
    /// The sharing of every iris input.
    pub sharing: Sharing,
    /// One per comparison, in the op order of the module (reveal order and, within a reveal,
    /// [`BoolExpr::tests`] order).
    pub tests: Vec<TestPlan>,
    pub cost: ProgramCost,
    /// How the party schedule tiles `@query`, as `mpc-tile` recorded it on the `mpc` module
    /// ([`crate::analysis::schedule::TileOptions::of`]); `None` until that module exists.
    #[serde(skip)]
    pub schedule: Option<crate::analysis::schedule::TileOptions>,
    /// Under `beaver`: the circuit the `mpc` module's `mpc.beaver_eval` runs and the gallery
    /// input whose records are its lanes; `None` until that module exists, and for `rep3`.
    #[serde(skip)]
    pub beaver: Option<BeaverCircuit>,
    /// Which parties compute the public mask lengths, as `threshold-placement` recorded it on
    /// the `mpc` module; `None` until that module exists.
    #[serde(skip)]
    pub mask_lengths: Option<crate::analysis::threshold_placement::MaskLengthPlacement>,
}

/// The reveals' circuit a `beaver` program runs, as `irs-to-mpc` emitted it.
#[derive(Debug, Clone)]
pub struct BeaverCircuit {
    pub circuit: irisc_runtime::beaver::circuit::Circuit,
    pub lanes_input: usize,
}

impl PartialEq for BeaverCircuit {
    fn eq(&self, other: &Self) -> bool {
        self.lanes_input == other.lanes_input
            && self.circuit.fingerprint() == other.circuit.fingerprint()
    }
}

/// A choice that cannot be made, and what to change.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlanError {
    pub message: String,
    pub hint: String,
    /// Where the comparison the choice concerns is written (its op's location).
    #[serde(skip)]
    pub at: Option<SourceRange>,
}

impl std::fmt::Display for PlanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (hint: {})", self.message, self.hint)
    }
}

impl std::error::Error for PlanError {}

/// A comparison in context, on the typed program (for `irisc explain`'s per-reveal totals): how
/// many times it runs per record and query.
#[derive(Debug, Clone, Copy)]
pub struct TestSite<'a> {
    pub expr: &'a BoolExpr,
    pub reveal: usize,
    /// Product of the rotation counts of the quantifiers around it.
    pub per_record: u64,
    /// Record binders quantified around it inside the reveal's value (a `bit` reveal's
    /// `any d in db`): each multiplies by the record count.
    pub record_quantifiers: u32,
}

/// Every comparison of the program with its multiplicities, in plan order.
pub fn test_sites(program: &Program) -> Vec<TestSite<'_>> {
    fn go<'a>(
        program: &'a Program,
        e: &'a BoolExpr,
        reveal: usize,
        per_record: u64,
        recq: u32,
        out: &mut Vec<TestSite<'a>>,
    ) {
        match e {
            BoolExpr::Fhd(_) | BoolExpr::Cosine(_) => out.push(TestSite {
                expr: e,
                reveal,
                per_record,
                record_quantifiers: recq,
            }),
            BoolExpr::Const(_) | BoolExpr::Bit(_) => {}
            BoolExpr::Not(x) => go(program, x, reveal, per_record, recq, out),
            BoolExpr::And(a, b) | BoolExpr::Or(a, b) => {
                go(program, a, reveal, per_record, recq, out);
                go(program, b, reveal, per_record, recq, out);
            }
            BoolExpr::If { cond, then, els } => {
                for x in [cond, then, els] {
                    go(program, x, reveal, per_record, recq, out);
                }
            }
            BoolExpr::Quant { binders, body, .. } => {
                let (mut rot, mut rq) = (per_record, recq);
                for &b in binders {
                    match program
                        .binders
                        .get(b)
                        .map(|b| (&b.kind, b.rotation_count()))
                    {
                        Some((_, Some(r))) => rot = rot.saturating_mul(u64::from(r)),
                        Some((BinderKind::Records(_), None)) => rq += 1,
                        _ => {}
                    }
                }
                go(program, body, reveal, rot, rq, out)
            }
        }
    }
    let mut out = Vec::new();
    for (i, r) in program.reveals.iter().enumerate() {
        go(program, &r.value, i, 1, 0, &mut out);
    }
    out
}

fn cosine_plan(t: &CosineSite) -> Result<CosinePlan, PlanError> {
    let ring = select_cosine_ring(t.dim, t.scale_bits, t.tau, t.strict).map_err(|e| PlanError {
        message: e.to_string(),
        hint: e.hint(),
        at: t.at.clone(),
    })?;
    let k = ring.ring_bits;
    // p and yy: replicated dot products per record (xx once per query); p*p and xx*yy: two
    // multiplications (3 local products each) and one reshare each; the scaled difference.
    let n = t.dim;
    let acc = cost::Acc::default()
        .rep3_dot(n, k)
        .rep3_dot(n, k)
        .reshare(k)
        .reshare(k)
        .rep3_dot(3, k)
        .reshare(k)
        .reshare(k)
        .lin(k)
        .msb(k)
        .msb(k);
    let mut c = acc.finish();
    // The combining AND/OR gate.
    c.and_gates += 1;
    c.rounds += 1;
    c.bytes_per_party += 1.0 / 8.0;
    c.score = cost::score(c.rounds, c.bytes_per_party, c.work);
    Ok(CosinePlan {
        ring: k,
        num: t.tau.abs.num,
        den: t.tau.abs.den,
        negative: t.tau.negative,
        strict: t.strict,
        justification: ring.justification,
        cost: c,
    })
}

/// The plan of one fhd site under a given sharing and variant (its rings, `(a, b)`, cost and
/// justification), or why the combination does not apply. `m` is the precision of
/// ConstLift/MPCLift (`b = 2^m`).
pub fn plan_fhd_site(
    site: &ComparisonSite,
    sharing: Sharing,
    variant: Variant,
    m: u32,
    msb: MsbInput,
) -> Result<FhdPlan, PlanError> {
    let SiteKind::Fhd(t) = &site.kind else {
        unreachable!("plan_fhd_site on a cosine test")
    };
    let mut plan = fhd::plan_fhd(t, sharing, variant, m, !site.earlier, msb)?;
    if site.mirror && matches!(sharing, Sharing::Gr2 | Sharing::Gr4) {
        // The decision is the emitter's (`mpc.load_query` part 4); say why here, where the
        // sharing is chosen.
        plan.justification.push_str(
            "; the mirror image: a GR(2^16, d) share holds a cell's real and imaginary entries together and cannot negate the imaginary ones locally, so the query's owner also deals the code's conjugate (part `conjugate`), which the parties mirror by positions only",
        );
    }
    Ok(plan)
}

/// The plan of one cosine site (always rep3).
pub fn plan_cosine_site(site: &ComparisonSite) -> Result<CosinePlan, PlanError> {
    match &site.kind {
        SiteKind::Cosine(t) => cosine_plan(t),
        SiteKind::Fhd(_) => unreachable!("plan_cosine_site on an fhd test"),
    }
}

/// The two-server family decides cosine tests only (paper 002), with at least one trap
/// instance in its malicious variant.
fn check_fss2(sites: &[ComparisonSite], options: &PlanOptions) -> Result<(), PlanError> {
    if let Some(site) = sites.iter().find(|s| matches!(s.kind, SiteKind::Fhd(_))) {
        return Err(PlanError {
            message:
                "the `fss2` family decides cosine tests; this is a fractional Hamming distance test"
                    .into(),
            hint: "build iris programs with --protocol rep3 or beaver".into(),
            at: site.at().cloned(),
        });
    }
    if options.sharing.is_some() || options.variant.is_some() {
        return Err(PlanError {
            message: "--sharing and --variant choose how iris tests are computed; `fss2` has its own sharing (optimised additive over Z_2^64)".into(),
            hint: "drop --sharing and --variant with --protocol fss2".into(),
            at: None,
        });
    }
    if options.malicious == Some(0) {
        return Err(PlanError {
            message: "--malicious 0: the malicious variant needs at least one trap instance".into(),
            hint: "the paper measures M = 10, 20 and 40 (detection 1 - 2^-M)".into(),
            at: None,
        });
    }
    Ok(())
}

/// Chooses the sharing and every fhd site's variant (module comment): the decision
/// `variant-select` records. Returns the sharing and, per site, its plan (`None` for cosine).
pub fn choose(
    sites: &[ComparisonSite],
    options: &PlanOptions,
) -> Result<(Sharing, Vec<Option<FhdPlan>>), PlanError> {
    let m = options
        .precision_bits
        .unwrap_or(crate::analysis::approx::DEFAULT_M);
    let beaver = options.protocol == Some(Protocol::Beaver);
    if options.protocol == Some(Protocol::Fss2) {
        check_fss2(sites, options)?;
    } else if let Some(m) = options.malicious {
        return Err(PlanError {
            message: format!(
                "--malicious {m} is the two-server family's malicious variant (paper 002)"
            ),
            hint: "use it with --protocol fss2".into(),
            at: None,
        });
    }
    // What the MSBs may start from: the forced choice, replicated shares under `beaver` (its
    // circuit starts from the replicated compared value), else the cheaper of the two.
    let msbs: Vec<MsbInput> = match (options.msb_input, beaver) {
        (Some(MsbInput::Additive), true) => {
            return Err(PlanError {
                message: "--msb-input additive is the rep3 family's: the `beaver` family's \
                          circuit starts from replicated shares of the compared value"
                    .into(),
                hint: "drop --msb-input, or use --protocol rep3".into(),
                at: None,
            })
        }
        (Some(m), _) => vec![m],
        (None, true) => vec![MsbInput::Replicated],
        (None, false) => MsbInput::ALL.to_vec(),
    };
    if beaver && options.sharing == Some(Sharing::Fp) {
        return Err(PlanError {
            message: "the `beaver` protocol converts Z_2^k shares of the compared values to XOR \
                      shares; F_p comparisons end in shares mod p"
                .into(),
            hint: "use --sharing rep3, gr2 or gr4 with --protocol beaver".into(),
            at: None,
        });
    }
    let sharings: Vec<Sharing> = match options.sharing {
        Some(s) => vec![s],
        // F_p compares mod p (BitExtractP), which no local conversion makes a binary circuit.
        None if beaver => Sharing::ALL
            .into_iter()
            .filter(|s| *s != Sharing::Fp)
            .collect(),
        None => Sharing::ALL.to_vec(),
    };
    let variants: Vec<Variant> = match options.variant {
        Some(v) => vec![v],
        None => Variant::ALL.to_vec(),
    };
    // Per sharing: the plans of the fhd tests, or the first error.
    let mut best: Option<(f64, Sharing, Vec<Option<FhdPlan>>)> = None;
    let mut first_error: Option<PlanError> = None;
    'sharing: for &sharing in &sharings {
        let mut total = 0.0;
        let mut plans = Vec::with_capacity(sites.len());
        for site in sites {
            let SiteKind::Fhd(t) = &site.kind else {
                plans.push(None);
                continue;
            };
            let mut chosen: Option<FhdPlan> = None;
            let mut err: Option<PlanError> = None;
            for (&v, &msb) in variants
                .iter()
                .flat_map(|v| msbs.iter().map(move |mi| (v, mi)))
            {
                match plan_fhd_site(site, sharing, v, m, msb) {
                    Ok(p) => {
                        if chosen.as_ref().is_none_or(|c| p.cost.score < c.cost.score) {
                            chosen = Some(p);
                        }
                    }
                    Err(e) => {
                        // Keep the most telling error: a forced variant's, else the error of
                        // the variant the masks call for.
                        let primary = options.variant.is_some()
                            || matches!(
                                (t.mask, v),
                                (MaskKind::Public, Variant::PlainMask)
                                    | (MaskKind::Secret, Variant::MpcLift)
                            );
                        if primary && err.is_none() {
                            err = Some(e);
                        }
                    }
                }
            }
            match chosen {
                Some(p) => {
                    total += p.cost.score * site.per_record as f64;
                    plans.push(Some(p));
                }
                None => {
                    if first_error.is_none()
                        && (sharing == Sharing::Rep3 || options.sharing.is_some())
                    {
                        first_error = err;
                    }
                    continue 'sharing;
                }
            }
        }
        if best.as_ref().is_none_or(|(s, _, _)| total < *s) {
            best = Some((total, sharing, plans));
        }
    }
    let Some((_, sharing, fhd_plans)) = best else {
        return Err(first_error.unwrap_or_else(|| PlanError {
            message: "no sharing applies to every fhd test of the program".into(),
            hint: "use --sharing rep3".into(),
            at: None,
        }));
    };
    Ok((sharing, fhd_plans))
}

/// The plan of every site given each one's plan (fhd: chosen; cosine: `None`, planned here),
/// with the program's cost per record.
pub fn assemble(
    protocol: Protocol,
    sharing: Sharing,
    sites: &[ComparisonSite],
    fhd_plans: Vec<Option<FhdPlan>>,
) -> Result<Plan, PlanError> {
    let mut tests = Vec::with_capacity(sites.len());
    let mut cost = ProgramCost::default();
    for (site, fp) in sites.iter().zip(fhd_plans) {
        let tp = match fp {
            Some(p) => TestPlan::Fhd(p),
            None => TestPlan::Cosine(plan_cosine_site(site)?),
        };
        let c = tp.cost();
        let k = site.per_record;
        cost.comparisons_per_record += k;
        cost.rounds += c.rounds;
        cost.bytes_per_party_per_record += c.bytes_per_party * k as f64;
        cost.and_gates_per_record += c.and_gates * k;
        cost.work_per_record += c.work * k;
        cost.score_per_record += c.score * k as f64;
        tests.push(tp);
    }
    Ok(Plan {
        protocol,
        sharing,
        tests,
        cost,
        schedule: None,
        mask_lengths: None,
        beaver: None,
    })
}

/// The reveal shapes' names, for messages.
pub fn shape_name(s: RevealShape) -> &'static str {
    match s {
        RevealShape::Bit => "bit",
        RevealShape::Ids => "ids",
        RevealShape::Count => "count",
    }
}
