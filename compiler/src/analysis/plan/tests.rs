//! Every choice the planner makes is the one the lemmas or the cost model demand; the expected
//! numbers are recomputed here from the cost formulas, not read back from the planner.

//!
//! Each program is source text, lowered to `irs`; the choices are what the passes record on it.

use super::*;
use crate::sema::program::*;
use irisc_runtime::vocab::InputRole;

const R345: Ratio = Ratio { num: 69, den: 200 };

/// The deployed test over `l`-bit codes: `reveal ids d in db: any c in rotations(q,
/// -15..=15): fhd(c, d) < 0.345`, with `mask` masks.
fn deployed_source(mask: MaskKind) -> String {
    let mask = match mask {
        MaskKind::Public => "public",
        MaskKind::Secret => "secret",
    };
    format!(
        "parties p0, p1, p2;\n\
         gallery db: iris<12800> {mask} mask;\n\
         query q: iris<12800> {mask} mask from p0;\n\
         reveal ids d in db: any c in rotations(q, -15..=15): fhd(c, d) < 0.345 to p0;\n"
    )
}

/// A checked program and its source text.
struct Source {
    text: String,
    program: Program,
}

fn source(text: String) -> Source {
    let program = crate::sema::frontend("t.irs", &text).unwrap_or_else(|e| panic!("{e}"));
    Source { text, program }
}

fn deployed(mask: MaskKind) -> Source {
    source(deployed_source(mask))
}

/// The choices `variant-select` and `ring-select` record on the lowered program, read back
/// from the module.
fn plan(s: &Source, options: &PlanOptions) -> Result<Plan, PlanError> {
    crate::testing::plan_of(&s.program, &s.text, options)
}

/// The span of the first occurrence of `needle` in `s`.
fn span_of(s: &Source, needle: &str) -> crate::syntax::Span {
    let start = s.text.find(needle).expect("the needle is in the source");
    crate::syntax::Span::new(start, start + needle.len())
}

/// The source span an error points at.
fn error_span(s: &Source, e: &PlanError) -> crate::syntax::Span {
    e.at.as_ref()
        .expect("the error has a location")
        .to_span(&s.text)
}

/// A program built directly (for the tests of the stages that read the AST next to a plan):
/// `gallery db: iris<l> M mask; query q: ... from p0;` binders `d in db` (0),
/// `c in rotations(q, -15..=15)` (1), `e in earlier(q)` (2); one reveal per value.
pub(crate) fn program(l: u32, mask: MaskKind, values: Vec<(RevealShape, BoolExpr)>) -> Program {
    let iris = InputType::Iris { code_bits: l, mask };
    Program {
        name: "t".into(),
        parties: ["p0".into(), "p1".into(), "p2".into()],
        consts: vec![],
        inputs: vec![
            Input {
                name: "db".into(),
                role: InputRole::Gallery,
                owner: None,
                ty: iris,
                span: crate::syntax::Span::default(),
            },
            Input {
                name: "q".into(),
                role: InputRole::Query,
                owner: Some(0),
                ty: iris,
                span: crate::syntax::Span::default(),
            },
        ],
        binders: vec![
            Binder {
                names: vec!["d".into()],
                kind: BinderKind::Records(Records::Galleries(vec![0])),
                span: crate::syntax::Span::default(),
            },
            Binder {
                names: vec!["c".into()],
                kind: BinderKind::Rotations {
                    query: 1,
                    lo: -15,
                    hi: 15,
                    mirror: false,
                },
                span: crate::syntax::Span::default(),
            },
            Binder {
                names: vec!["e".into()],
                kind: BinderKind::Records(Records::Earlier(1)),
                span: crate::syntax::Span::default(),
            },
        ],
        reveals: values
            .into_iter()
            .map(|(shape, value)| Reveal {
                shape,
                records: Some(0),
                value,
                to: 0,
                label: "ids".into(),
                span: crate::syntax::Span::default(),
            })
            .collect(),
    }
}

/// The plan the passes record for the deployed test (what [`program`] with one deployed test
/// under `any c in rotations(q, -15..=15)` compiles to).
pub(crate) fn deployed_plan(mask: MaskKind, options: &PlanOptions) -> Plan {
    plan(&deployed(mask), options).unwrap()
}

fn only_fhd(p: &Plan) -> &FhdPlan {
    match &p.tests[0] {
        TestPlan::Fhd(f) => f,
        other => panic!("{other:?}"),
    }
}

fn score(rounds: f64, bytes: f64, work: f64) -> f64 {
    1.0 * rounds + 0.8 * bytes + 0.05 * work
}

#[test]
fn public_masks_take_plain_mask_at_lemma1_ring() {
    let p = plan(&deployed(MaskKind::Public), &PlanOptions::default()).unwrap();
    let f = only_fhd(&p);
    assert_eq!(f.variant, Variant::PlainMask);
    assert_eq!(f.compare_ring, 16);
    assert_eq!((f.a, f.b), (69, 200));
    // Independently: rep3 2l MACs, GR/F_p l; AdditiveMSB(16): a 2-byte word or 16 input bits
    // and 15 AND bits in 2 + 15 rounds; F_p: reshare 2 bytes, BitExtractP 48 bits in 33 rounds.
    let l = 12800.0;
    let rep3 = score(17.0, 2.0 + 15.0 / 8.0, 2.0 * l);
    let gr = score(17.0, 2.0 + 15.0 / 8.0, l);
    let fp = score(34.0, 2.0 + 48.0 / 8.0, l);
    assert!(gr < fp && gr < rep3);
    assert_eq!(p.sharing, Sharing::Gr2, "GR2 and GR4 tie; GR2 comes first");
    assert_eq!(f.msb_input, MsbInput::Additive);
    assert!((f.cost.score - gr).abs() < 1e-9, "{} vs {gr}", f.cost.score);
    // Asked for replicated shares: the reshare (2 bytes) and MSB(16), 29 bits in 15 rounds.
    let o = PlanOptions {
        msb_input: Some(MsbInput::Replicated),
        ..Default::default()
    };
    let f = only_fhd(&plan(&deployed(MaskKind::Public), &o).unwrap()).clone();
    assert_eq!(f.msb_input, MsbInput::Replicated);
    let gr_rep = score(16.0, 2.0 + 29.0 / 8.0, l);
    assert!(
        (f.cost.score - gr_rep).abs() < 1e-9,
        "{} vs {gr_rep}",
        f.cost.score
    );
    // Under beaver the circuit starts from replicated shares; additive is refused there.
    let o = PlanOptions {
        protocol: Some(irisc_runtime::vocab::Protocol::Beaver),
        ..Default::default()
    };
    let f = only_fhd(&plan(&deployed(MaskKind::Public), &o).unwrap()).clone();
    assert_eq!(f.msb_input, MsbInput::Replicated);
    let o = PlanOptions {
        protocol: Some(irisc_runtime::vocab::Protocol::Beaver),
        msb_input: Some(MsbInput::Additive),
        ..Default::default()
    };
    let e = plan(&deployed(MaskKind::Public), &o).unwrap_err();
    assert!(e.message.contains("--msb-input additive"), "{e:?}");
    // Forced rep3: Lemma 1's ring, 16 bits for l = 12800.
    let o = PlanOptions {
        sharing: Some(Sharing::Rep3),
        ..Default::default()
    };
    let p = plan(&deployed(MaskKind::Public), &o).unwrap();
    let f = only_fhd(&p);
    assert_eq!(
        (f.sharing, f.variant, f.dot_ring, f.compare_ring),
        (Sharing::Rep3, Variant::PlainMask, 16, 16)
    );
    assert!((f.cost.score - rep3).abs() < 1e-9);
    assert_eq!((f.compared_lo, f.compared_hi), (-8832, 16768));
}

#[test]
fn secret_masks_default_is_the_minimal_score() {
    let p = plan(&deployed(MaskKind::Secret), &PlanOptions::default()).unwrap();
    let l = 12800.0;
    // k = 32 (Lemma 2, a = 20317, b = 2^16); dot rings 16.
    let msb32 = (31.0, 61.0 / 8.0);
    let lift = (19.0, 33.0 / 8.0 + 2.0 * 2.0 * 2.0);
    let rep3_mpc = score(
        2.0 + lift.0 + msb32.0,
        4.0 + lift.1 + msb32.1,
        4.0 * l + 4.0,
    );
    let rep3_const = score(2.0 + msb32.0, 2.0 + 4.0 + msb32.1, 2.0 * l + 4.0 * l + 4.0);
    let gr_mpc = score(
        2.0 + lift.0 + msb32.0,
        4.0 + lift.1 + msb32.1,
        2.0 * l + 4.0,
    );
    // LiftP: 17 + 2 rounds, 66 gate bits, 2 u16 per injected bit at party 0; MSB mod p*2^16:
    // 3*32 - 16 bits in 2*32 - 16 + 1 rounds; lin in 64-bit words.
    let fp_mpc = score(
        2.0 + 19.0 + 49.0,
        4.0 + 66.0 / 8.0 + 8.0 + 80.0 / 8.0,
        2.0 * l + 8.0,
    );
    let k_nolift = {
        let ap = crate::analysis::approx::approx_bounded(
            R345,
            (1 << 16) - 1,
            crate::analysis::approx::Rounding::Conservative,
        )
        .unwrap();
        crate::analysis::lemma2::select_secret_ring(12800, &ap)
            .unwrap()
            .ring_bits
    };
    let w = if k_nolift <= 32 { 2.0 } else { 4.0 };
    let wb = 2.0 * w;
    let rep3_no = score(
        2.0 + (k_nolift - 1) as f64,
        2.0 * wb + (2 * k_nolift - 3) as f64 / 8.0,
        4.0 * l * w + 2.0 * w,
    );
    let all = [rep3_mpc, rep3_const, gr_mpc, fp_mpc, rep3_no];
    let min = all.iter().cloned().fold(f64::INFINITY, f64::min);
    assert_eq!(min, gr_mpc);
    assert_eq!(p.sharing, Sharing::Gr2);
    let f = only_fhd(&p);
    assert_eq!(f.variant, Variant::MpcLift);
    assert!(
        (f.cost.score - gr_mpc).abs() < 1e-9,
        "{} vs {gr_mpc}",
        f.cost.score
    );
    assert_eq!(
        (f.a, f.b, f.compare_ring, f.dot_ring, f.lift_bits),
        (20317, 65536, 32, 16, Some(16))
    );
    // Rep3 only: MPCLift beats ConstLift and NoLift.
    let o = PlanOptions {
        sharing: Some(Sharing::Rep3),
        ..Default::default()
    };
    let f = plan(&deployed(MaskKind::Secret), &o).unwrap().tests[0].clone();
    let TestPlan::Fhd(f) = f else { panic!() };
    assert!(rep3_mpc < rep3_const && rep3_mpc < rep3_no);
    assert_eq!(
        (f.variant, f.dot_ring, f.ml_ring),
        (Variant::MpcLift, 16, Some(16))
    );
    assert!((f.cost.score - rep3_mpc).abs() < 1e-9);
}

#[test]
fn forced_variants() {
    let prog = deployed(MaskKind::Secret);
    let force = |s, v| PlanOptions {
        sharing: s,
        variant: Some(v),
        precision_bits: None,
        per_query_chunks: false,
        query_batch: None,
        protocol: None,
        malicious: None,
        msb_input: None,
        threshold_placement: None,
    };
    let p = plan(&prog, &force(Some(Sharing::Rep3), Variant::ConstLift)).unwrap();
    let f = only_fhd(&p);
    assert_eq!(
        (
            f.variant,
            f.dot_ring,
            f.ml_ring,
            f.compare_ring,
            f.lift_bits
        ),
        (Variant::ConstLift, 16, Some(32), 32, Some(16))
    );
    let p = plan(&prog, &force(None, Variant::NoLift)).unwrap();
    assert_eq!(p.sharing, Sharing::Rep3, "no-lift is rep3 only");
    let f = only_fhd(&p);
    assert!(f.b < 1 << 16 && f.lift_bits.is_none());
    assert_eq!(Some(f.dot_ring), f.ml_ring);
    assert_eq!(f.dot_ring, f.compare_ring);
    assert!(f.compare_ring <= 32);
    // F_p MPCLift: the ring is p*2^m, compare_ring = m.
    let p = plan(&prog, &force(Some(Sharing::Fp), Variant::MpcLift)).unwrap();
    let f = only_fhd(&p);
    assert_eq!((f.dot_ring, f.ml_ring, f.compare_ring), (0, Some(0), 16));
    // Precision: m = 20 as in Table 2 gives k = 36.
    let o = PlanOptions {
        sharing: Some(Sharing::Rep3),
        variant: Some(Variant::ConstLift),
        precision_bits: Some(20),
        per_query_chunks: false,
        query_batch: None,
        protocol: None,
        malicious: None,
        msb_input: None,
        threshold_placement: None,
    };
    let f = plan(&prog, &o).unwrap().tests[0].clone();
    let TestPlan::Fhd(f) = f else { panic!() };
    assert_eq!((f.b, f.compare_ring, f.dot_ring), (1 << 20, 36, 16));
}

#[test]
fn inapplicable_forced_choices_are_errors_with_hints() {
    let secret = deployed(MaskKind::Secret);
    let e = plan(
        &secret,
        &PlanOptions {
            variant: Some(Variant::PlainMask),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("plain-mask needs public masks"), "{e}");
    assert_eq!(
        e.hint,
        "plain-mask needs public masks: declare `public mask` or drop --variant"
    );
    assert_eq!(
        error_span(&secret, &e),
        span_of(&secret, "fhd(c, d) < 0.345")
    );
    let e = plan(
        &secret,
        &PlanOptions {
            sharing: Some(Sharing::Gr4),
            variant: Some(Variant::NoLift),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("only the replicated sharing"), "{e}");
    assert!(e.hint.contains("--sharing rep3"));
    let public = deployed(MaskKind::Public);
    let e = plan(
        &public,
        &PlanOptions {
            variant: Some(Variant::MpcLift),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.hint.contains("plain-mask"), "{e}");
}

#[test]
fn earlier_records_exclude_shamir() {
    let prog = source(
        "parties p0, p1, p2;\n\
         query q: iris<12800> secret mask from p0;\n\
         reveal ids e in earlier(q): any c in rotations(q, -15..=15): fhd(c, e) < 0.345 to p0;\n"
            .into(),
    );
    let p = plan(&prog, &PlanOptions::default()).unwrap();
    assert_eq!(p.sharing, Sharing::Rep3);
    assert_eq!(only_fhd(&p).variant, Variant::MpcLift);
    let e = plan(
        &prog,
        &PlanOptions {
            sharing: Some(Sharing::Fp),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("earlier"), "{e}");
    assert!(e.hint.contains("--sharing rep3"));
}

#[test]
fn rings_too_large_or_too_wide_for_16_bits() {
    // m = 62: a*ml - b*dot needs more than 64 bits.
    let o = PlanOptions {
        sharing: Some(Sharing::Rep3),
        variant: Some(Variant::ConstLift),
        precision_bits: Some(62),
        per_query_chunks: false,
        query_batch: None,
        protocol: None,
        malicious: None,
        msb_input: None,
        threshold_placement: None,
    };
    let e = plan(&deployed(MaskKind::Secret), &o).unwrap_err();
    assert!(e.message.contains("more than 64"), "{e}");
    assert!(e.hint.contains("lower the precision m"), "{}", e.hint);
    // r = 0.001 with l = 16448: T - dot reaches floor(0.998 * 16448) + 16448 = 32862 > 2^15,
    // so 17 bits: GR and F_p do not apply.
    let prog = source(
        "parties p0, p1, p2;\n\
         gallery db: iris<16448> public mask;\n\
         query q: iris<16448> public mask from p0;\n\
         reveal ids d in db: fhd(q, d) < 0.001 to p0;\n"
            .into(),
    );
    let p = plan(&prog, &PlanOptions::default()).unwrap();
    assert_eq!((p.sharing, only_fhd(&p).compare_ring), (Sharing::Rep3, 17));
    let e = plan(
        &prog,
        &PlanOptions {
            sharing: Some(Sharing::Gr2),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(e.message.contains("needs k = 17"), "{e}");
}

#[test]
fn cosine_is_rep3_and_too_large_is_an_error() {
    let cos = |scale_bits| {
        source(format!(
            "parties p0, p1, p2;\n\
             gallery voices: embedding<192> scale {scale_bits};\n\
             query v: embedding<192> scale {scale_bits} from p1;\n\
             reveal ids s in voices: cosine(v, s) >= 0.34 to p1;\n"
        ))
    };
    let prog = cos(8);
    let p = plan(
        &prog,
        &PlanOptions {
            sharing: Some(Sharing::Fp),
            ..Default::default()
        },
    )
    .unwrap();
    let TestPlan::Cosine(c) = &p.tests[0] else {
        panic!()
    };
    assert_eq!(c.ring, 60);
    let prog = cos(12);
    let e = plan(&prog, &PlanOptions::default()).unwrap_err();
    assert!(
        e.hint.contains("lower the scale") && e.hint.contains("smaller denominator"),
        "{e}"
    );
    assert_eq!(
        error_span(&prog, &e),
        span_of(&prog, "cosine(v, s) >= 0.34")
    );
}

#[test]
fn tests_come_in_reveal_then_tests_order() {
    let r = Ratio { num: 1, den: 4 };
    let prog = source(
        "parties p0, p1, p2;\n\
         gallery db: iris<12800> public mask;\n\
         gallery db2: iris<6400> public mask;\n\
         gallery db3: iris<64> public mask;\n\
         query q: iris<12800> public mask from p0;\n\
         query q2: iris<6400> public mask from p0;\n\
         query q3: iris<64> public mask from p0;\n\
         reveal ids d in db: fhd(q, d) < 0.345 and fhd(q, d) < 0.25 to p0;\n\
         reveal ids d in db2: fhd(q2, d) < 0.25 to p0;\n\
         reveal count d in db3: fhd(q3, d) < 0.25 to p0;\n"
            .into(),
    );
    let p = plan(
        &prog,
        &PlanOptions {
            sharing: Some(Sharing::Rep3),
            ..Default::default()
        },
    )
    .unwrap();
    let rings: Vec<u32> = p.tests.iter().map(|t| t.msb_bits()).collect();
    let expect: Vec<u32> = [(12800, R345), (12800, r), (6400, r), (64, r)]
        .iter()
        .map(|&(l, r)| crate::analysis::ring::select_ring(l, r).ring_bits)
        .collect();
    assert_eq!(rings, expect);
    assert_eq!(p.cost.comparisons_per_record, 4);
    assert_eq!(Variant::parse("const-lift"), Some(Variant::ConstLift));
    assert_eq!(Sharing::parse("gr4"), Some(Sharing::Gr4));
}
