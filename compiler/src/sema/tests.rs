//! Unit tests of the checker on small programs: the v2 [`program::Program`] each construct
//! produces, every rule's diagnostic, and the conversion to the issue-2 model.

use super::program::{
    self as v2, BinderId, BinderKind, BoolExpr, CosineTest, FhdTest, InputType, Operand,
    Quantifier, Records, RevealShape, SignedRatio,
};
use super::*;
use crate::syntax::{Diagnostic, Span};
use irisc_runtime::vocab::InputRole;

const HEAD: &str = "const BITS = 256;\nconst R = 0.375;\nparties p0, p1, p2;\n\
    gallery db: iris<BITS> public mask;\nquery q: iris<BITS> public mask from p1;\n";

/// Inputs for the v2 constructs: 0 left, 1 right (secret masks), 2 ql, 3 qr, 4 tier (bit),
/// 5 voices, 6 v (embeddings), 7 db, 8 q (public masks).
const V2: &str = "parties p0, p1, p2;\n\
    gallery left: iris<256> secret mask;\ngallery right: iris<256> secret mask;\n\
    query ql: iris<256> secret mask from p0;\nquery qr: iris<256> secret mask from p0;\n\
    query tier: bit from p0;\n\
    gallery voices: embedding<16> scale 4;\nquery v: embedding<16> scale 4 from p1;\n\
    gallery db: iris<256> public mask;\nquery q: iris<256> public mask from p0;\n";

fn v2_ok(head: &str, body: &str) -> v2::Program {
    let src = format!("{head}{body}");
    frontend("t.irs", &src).unwrap_or_else(|e| panic!("{e}"))
}

fn errs(src: &str) -> Vec<Diagnostic> {
    let m = crate::syntax::parse(src).unwrap_or_else(|d| panic!("parse: {}", d.message));
    check_program("t.irs", src, &m).expect_err("expected errors")
}

fn err_in(head: &str, body: &str) -> (String, Diagnostic) {
    let src = format!("{head}{body}");
    let mut e = errs(&src);
    assert_eq!(e.len(), 1, "{e:#?}");
    let d = e.remove(0);
    assert!(d.hint.is_some(), "no hint: {d:#?}");
    (src, d)
}

fn err(body: &str) -> (String, Diagnostic) {
    err_in(HEAD, body)
}

fn spanned<'a>(src: &'a str, d: &Diagnostic) -> &'a str {
    &src[d.span.start..d.span.end]
}

fn fhd(query: Operand, record: Operand, num: u64, den: u64, mask: MaskKind) -> BoolExpr {
    BoolExpr::Fhd(FhdTest {
        query,
        record,
        ratio: Ratio { num, den },
        mask,
        code_bits: 256,
        span: Span::default(),
    })
}

/// `e` with every span zeroed, to compare against expected trees.
fn unspan(e: &BoolExpr) -> BoolExpr {
    let b = |x: &BoolExpr| Box::new(unspan(x));
    match e {
        BoolExpr::Fhd(t) => BoolExpr::Fhd(FhdTest {
            span: Span::default(),
            ..t.clone()
        }),
        BoolExpr::Cosine(t) => BoolExpr::Cosine(CosineTest {
            span: Span::default(),
            ..t.clone()
        }),
        BoolExpr::Not(x) => BoolExpr::Not(b(x)),
        BoolExpr::And(x, y) => BoolExpr::And(b(x), b(y)),
        BoolExpr::Or(x, y) => BoolExpr::Or(b(x), b(y)),
        BoolExpr::If { cond, then, els } => BoolExpr::If {
            cond: b(cond),
            then: b(then),
            els: b(els),
        },
        BoolExpr::Quant { op, binders, body } => BoolExpr::Quant {
            op: *op,
            binders: binders.clone(),
            body: b(body),
        },
        other => other.clone(),
    }
}

fn rec(binder: BinderId, field: usize) -> Operand {
    Operand::Record { binder, field }
}

fn any(binders: Vec<BinderId>, body: BoolExpr) -> BoolExpr {
    BoolExpr::Quant {
        op: Quantifier::Any,
        binders,
        body: Box::new(body),
    }
}

#[test]
fn both_eyes_with_zip() {
    let p = v2_ok(
        V2,
        "reveal ids (dl, dr) in zip(left, right):\n\
           (any c in rotations(ql, -2..=2): fhd(c, dl) < 0.345)\n\
           and (any c in rotations(qr, -1..=1): fhd(c, dr) < 0.345)\n\
         to p0;",
    );
    let r = &p.reveals[0];
    assert_eq!((r.shape, r.records, r.to), (RevealShape::Ids, Some(0), 0));
    assert_eq!(r.label, "ids");
    assert_eq!(p.binders.len(), 3);
    assert_eq!(p.binders[0].names, ["dl", "dr"]);
    assert_eq!(
        p.binders[0].kind,
        BinderKind::Records(Records::Galleries(vec![0, 1]))
    );
    assert_eq!(
        p.binders[1].kind,
        BinderKind::Rotations {
            query: 2,
            lo: -2,
            hi: 2,
            mirror: false
        }
    );
    assert_eq!(
        p.binders[2].kind,
        BinderKind::Rotations {
            query: 3,
            lo: -1,
            hi: 1,
            mirror: false
        }
    );
    let s = MaskKind::Secret;
    let expected = BoolExpr::And(
        Box::new(any(
            vec![1],
            fhd(Operand::Rotated(1), rec(0, 0), 69, 200, s),
        )),
        Box::new(any(
            vec![2],
            fhd(Operand::Rotated(2), rec(0, 1), 69, 200, s),
        )),
    );
    assert_eq!(unspan(&r.value), expected);
    assert_eq!(r.value.free_binders(), vec![0]);
    assert_eq!(p.zips(), vec![vec![0, 1]]);
    assert_eq!(p.query_inputs().count(), 5);
    // The OR policy is the same tree with `Or`.
    let p = v2_ok(
        V2,
        "reveal ids (dl, dr) in zip(left, right): fhd(ql, dl) < 0.3 or fhd(qr, dr) < 0.3 to p0;",
    );
    assert!(matches!(p.reveals[0].value, BoolExpr::Or(..)));
}

#[test]
fn count_and_earlier() {
    let p = v2_ok(
        V2,
        "reveal count d in db: fhd(q, d) < 0.3 to p0;\n\
         reveal ids e in earlier(ql): any c in rotations(ql, -3..=3): fhd(c, e) < 0.345 to p0;",
    );
    let r = &p.reveals[0];
    assert_eq!(
        (r.shape, r.records, r.label.as_str()),
        (RevealShape::Count, Some(0), "count")
    );
    assert_eq!(
        unspan(&r.value),
        fhd(Operand::Query(8), rec(0, 0), 3, 10, MaskKind::Public)
    );
    let r = &p.reveals[1];
    assert_eq!((r.shape, r.records), (RevealShape::Ids, Some(1)));
    // Second reveal to p0, not written through a let: `reveal<i>`.
    assert_eq!(r.label, "reveal1");
    assert_eq!(p.binders[1].kind, BinderKind::Records(Records::Earlier(2)));
    assert_eq!(
        unspan(&r.value),
        any(
            vec![2],
            fhd(Operand::Rotated(2), rec(1, 0), 69, 200, MaskKind::Secret)
        )
    );
}

#[test]
fn if_with_a_bit_input() {
    let p = v2_ok(
        V2,
        "reveal ids d in left: if tier { fhd(ql, d) < 0.30 } else { fhd(ql, d) < 0.375 } to p0;",
    );
    let s = MaskKind::Secret;
    assert_eq!(
        unspan(&p.reveals[0].value),
        BoolExpr::If {
            cond: Box::new(BoolExpr::Bit(Operand::Query(4))),
            then: Box::new(fhd(Operand::Query(2), rec(0, 0), 3, 10, s)),
            els: Box::new(fhd(Operand::Query(2), rec(0, 0), 3, 8, s)),
        }
    );
    assert_eq!(p.inputs[4].ty, InputType::Bit);
    assert_eq!(p.inputs[4].role, InputRole::Query);
    assert_eq!(p.inputs[4].owner, Some(0));
}

#[test]
fn cosine_with_negative_tau_and_all() {
    let p = v2_ok(
        V2,
        "reveal ids s in voices: cosine(v, s) >= -0.25 to p1;\n\
         reveal all s in voices: not cosine(v, s) > 0.5 to p1 as none_close;\n\
         reveal tier or true to p1;",
    );
    let c = |negative, num, den, strict| {
        BoolExpr::Cosine(CosineTest {
            query: Operand::Query(6),
            record: rec(p.reveals[0].records.unwrap(), 0),
            tau: SignedRatio {
                negative,
                abs: Ratio { num, den },
            },
            strict,
            dim: 16,
            scale_bits: 4,
            span: Span::default(),
        })
    };
    assert_eq!(unspan(&p.reveals[0].value), c(true, 1, 4, false));
    let r = &p.reveals[1];
    assert_eq!(
        (r.shape, r.records, r.label.as_str()),
        (RevealShape::Bit, None, "none_close")
    );
    let BoolExpr::Quant { op, binders, body } = &r.value else {
        panic!("{:?}", r.value)
    };
    assert_eq!((*op, binders.len()), (Quantifier::All, 1));
    let BoolExpr::Not(inner) = &**body else {
        panic!()
    };
    let BoolExpr::Cosine(t) = &**inner else {
        panic!()
    };
    assert!(t.strict && !t.tau.negative);
    assert_eq!(p.reveals[2].label, "reveal2");
    assert_eq!(
        p.reveals[2].value,
        BoolExpr::Or(
            Box::new(BoolExpr::Bit(Operand::Query(4))),
            Box::new(BoolExpr::Const(true))
        )
    );
    assert_eq!(
        p.inputs[5].ty,
        InputType::Embedding {
            dim: 16,
            scale_bits: 4
        }
    );
}

#[test]
fn lets_are_inlined_with_fresh_binders_and_name_outputs() {
    let p = v2_ok(
        HEAD,
        "let m = any d in db, c in rotations(q, -1..=1): fhd(c, d) < R;\n\
         reveal m to p0;\nreveal m and not m to p0;\nreveal m to p2 as seen;\n\
         let n = count d in db: fhd(q, d) < R;\nreveal n to p0;",
    );
    let labels: Vec<&str> = p.reveals.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["match", "reveal1", "seen", "n"]);
    // Four uses of `m`, two binders each, then `n`'s binder.
    assert_eq!(p.binders.len(), 9);
    assert_eq!(p.reveals[3].shape, RevealShape::Count);
    let BoolExpr::And(a, b) = &p.reveals[1].value else {
        panic!()
    };
    let BoolExpr::Not(b) = &**b else { panic!() };
    assert_ne!(a, b, "each use binds its own binders");
    assert_eq!(unspan(a).free_binders(), Vec::<usize>::new());
}

#[test]
fn default_scale_and_secret_masks() {
    let p = v2_ok(
        "parties a, b, c;\ngallery g: embedding<192>;\nquery v: embedding<192> scale 8 from c;\n",
        "reveal any s in g: cosine(v, s) >= 0.34 to c;",
    );
    assert_eq!(
        p.inputs[0].ty,
        InputType::Embedding {
            dim: 192,
            scale_bits: 8
        }
    );
    assert_eq!(p.inputs[1].role, InputRole::Query);
    assert_eq!(p.inputs[1].owner, Some(2));
}

#[test]
fn unknown_names_suggest_the_closest() {
    let (src, d) = err("reveal any d in db: fhd(q, d) < RR to p0;");
    assert_eq!(d.message, "unknown constant `RR`");
    assert_eq!(spanned(&src, &d), "RR");
    assert_eq!(d.hint.as_deref(), Some("did you mean `R`?"));
    let (_, d) = err("reveal any d in db: fhd(q, dd) < R to p0;");
    assert_eq!(d.hint.as_deref(), Some("did you mean `d`?"));
    let (_, d) = err("reveal any d in db: fhd(q, d) < R to p4;");
    assert_eq!(d.message, "unknown party `p4`");
}

#[test]
fn duplicates_point_at_both() {
    let (src, d) = err("const R = 0.25;\nreveal any d in db: fhd(q, d) < R to p0;");
    assert_eq!(d.message, "`R` is declared twice");
    assert_eq!(d.secondary[0].span.start, src.find("R =").unwrap());
    let (_, d) = err("reveal any q in db: fhd(q, q) < R to p0;");
    assert_eq!(d.message, "`q` is declared twice");
    let (_, d) = err("reveal any d in db: any d in db: fhd(q, d) < R to p0;");
    assert_eq!(d.message, "`d` is declared twice");
    let (_, d) = err_in(
        V2,
        "reveal ids (a, a) in zip(left, right): fhd(ql, a) < 0.3 to p0;",
    );
    assert_eq!(d.message, "`a` is declared twice");
}

#[test]
fn kinds_of_names_are_checked() {
    let (_, d) = err("reveal any d in db: fhd(q, d) < R to db;");
    assert_eq!(d.message, "`db` is a gallery, not a party");
    let (_, d) = err("reveal R to p0;");
    assert_eq!(d.message, "`R` is a constant, not a condition");
    let (_, d) = err("reveal any d in db: fhd(q, db) < R to p0;");
    assert!(d.message.contains("whole gallery"), "{}", d.message);
    let (_, d) = err("reveal any d in db: fhd(d, d) < R to p0;");
    assert!(d.message.starts_with("type mismatch"), "{}", d.message);
    let (_, d) = err("reveal any d in db: fhd(q, d) < BITS to p0;");
    assert!(d.message.contains("must be a ratio"), "{}", d.message);
    let (_, d) = err("reveal q to p0;");
    assert_eq!(d.message, "`q` is an iris query value, not a condition");
    let (src, d) = err("reveal any d in db: fhd(d, q) < R to p0;");
    assert_eq!(
        d.message,
        "`fhd` takes the query first and the record second"
    );
    assert_eq!(spanned(&src, &d), "d, q");
    assert_eq!(d.hint.as_deref(), Some("swap the operands: `fhd(q, d)`"));
}

#[test]
fn operand_types_are_checked() {
    let (_, d) = err_in(V2, "reveal any d in left: fhd(q, d) < 0.3 to p0;");
    assert_eq!(
        d.message,
        "type mismatch: `q` has public masks but `left` has secret masks"
    );
    let (src, d) = err_in(V2, "reveal any s in voices: fhd(q, s) < 0.3 to p0;");
    assert_eq!(
        d.message,
        "type mismatch: `fhd` compares iris codes, but `s` is a gallery of embedding records"
    );
    assert_eq!(spanned(&src, &d), "s");
    let (_, d) = err_in(V2, "reveal any d in db: cosine(v, d) >= 0.3 to p0;");
    assert!(
        d.message
            .starts_with("type mismatch: `cosine` compares embeddings"),
        "{}",
        d.message
    );
    let (_, d) = err_in(
        "parties a, b, c;\ngallery g: embedding<16>;\nquery v: embedding<32> from a;\n",
        "reveal any s in g: cosine(v, s) >= 0.3 to a;",
    );
    assert_eq!(
        d.message,
        "type mismatch: `v` is embedding<32> scale 8 but `g` is embedding<16> scale 8"
    );
    let (_, d) = err_in(
        V2,
        "reveal ids (a, b) in zip(left, voices): fhd(ql, a) < 0.3 to p0;",
    );
    assert!(
        d.message.starts_with("type mismatch: `zip` of `left`"),
        "{}",
        d.message
    );
    let (_, d) = err_in(
        V2,
        "reveal ids d in db: tier and fhd(q, d) < 0.3 and v to p0;",
    );
    assert_eq!(
        d.message,
        "`v` is an embedding query value, not a condition"
    );
}

#[test]
fn ratio_and_tau_ranges() {
    let (src, d) = err("reveal any d in db: fhd(q, d) < 0.5 to p0;");
    assert_eq!(d.message, "match ratio 1/2 is out of range");
    assert_eq!(spanned(&src, &d), "0.5");
    let (_, d) = err("reveal any d in db: fhd(q, d) < 0.0 to p0;");
    assert_eq!(d.message, "match ratio 0/1 is out of range");
    let (_, d) = err_in(V2, "reveal any s in voices: cosine(v, s) >= -2 to p0;");
    assert_eq!(d.message, "cosine threshold 2 is out of range");
    let (_, d) = err_in(V2, "reveal any s in voices: cosine(v, s) >= 1.5 to p0;");
    assert_eq!(d.message, "ratio `1.5` is greater than 1");
    // -0 is 0, not negative.
    let p = v2_ok(V2, "reveal any s in voices: cosine(v, s) > -0.0 to p0;");
    let BoolExpr::Quant { body, .. } = &p.reveals[0].value else {
        panic!()
    };
    assert!(matches!(&**body, BoolExpr::Cosine(t) if !t.tau.negative && t.strict));
}

#[test]
fn binder_sources_are_checked() {
    let (_, d) = err_in(V2, "reveal ids d in ql: fhd(ql, d) < 0.3 to p0;");
    assert_eq!(d.message, "`ql` is a query, not a gallery");
    let (_, d) = err_in(V2, "reveal ids e in earlier(left): fhd(ql, e) < 0.3 to p0;");
    assert_eq!(
        d.message,
        "`earlier` takes a query input; `left` is a gallery"
    );
    let (_, d) = err_in(
        V2,
        "reveal any s in voices, c in rotations(v, 0..=1): cosine(c, s) >= 0.3 to p0;",
    );
    assert!(
        d.message.starts_with("only iris codes can be rotated"),
        "{}",
        d.message
    );
    let (_, d) = err_in(
        V2,
        "reveal ids d in zip(left, right): fhd(ql, d) < 0.3 to p0;",
    );
    assert_eq!(d.message, "`zip` of 2 galleries binds 2 names, found 1");
    let (_, d) = err_in(V2, "reveal ids (a, b) in left: fhd(ql, a) < 0.3 to p0;");
    assert_eq!(d.message, "2 names bound to one value per record");
    let (_, d) = err_in(
        V2,
        "reveal ids (a, b) in zip(left, ql): fhd(ql, a) < 0.3 to p0;",
    );
    assert!(
        d.message.starts_with("`zip` takes galleries"),
        "{}",
        d.message
    );
    let (_, d) = err_in(V2, "reveal ids (a) in zip(left): fhd(ql, a) < 0.3 to p0;");
    assert_eq!(d.message, "`zip` of a single gallery");
}

#[test]
fn binder_rules() {
    // A per-(record, rotation) test combined with a per-record test.
    let (src, d) = err(
        "reveal any d in db, c in rotations(q, -1..=1): fhd(c, d) < R and fhd(q, d) < 0.3 to p0;",
    );
    assert_eq!(
        d.message,
        "`and` combines a value over `d` and `c` with a value over `d`"
    );
    assert_eq!(spanned(&src, &d), "fhd(q, d) < 0.3");
    assert!(d
        .hint
        .as_deref()
        .unwrap()
        .contains("move the test that uses `c` inside a quantifier"));
    // Closed values combine with anything; the same binders combine.
    v2_ok(HEAD, "reveal ids d in db: (any c in rotations(q, -1..=1): fhd(c, d) < R) and fhd(q, d) < 0.3 and true to p0;");
    let (_, d) = err("reveal any d in db: fhd(q, d) < R and (count e in db: fhd(q, e) < R) to p0;");
    assert_eq!(
        d.message,
        "`count` is only allowed as the whole revealed value"
    );
    let (src, d) = err("reveal ids d in db, c in rotations(q, 0..=1): fhd(c, d) < R to p0;");
    assert_eq!(d.message, "`ids` ranges over exactly one set of records");
    assert_eq!(spanned(&src, &d), "c in rotations(q, 0..=1)");
    let (_, d) = err("reveal count c in rotations(q, 0..=1): fhd(c, q) < R to p0;");
    assert_eq!(d.message, "`count` must range over records, not rotations");
    let (_, d) = err("reveal ids d in db: true to p0;");
    assert_eq!(d.message, "record variable `d` is never used");
    // `_` marks a deliberately unused binder.
    v2_ok(HEAD, "reveal count _d in db: true to p0;");
    // A `let` is closed.
    let e = errs(&format!(
        "{HEAD}let m = fhd(q, d) < R;\nreveal ids d in db: m to p0;"
    ));
    let msgs: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        ["unknown name `d`", "`d` is bound outside this `let`"]
    );
}

#[test]
fn rotations_are_bounded_by_the_columns() {
    // 256 bits = 4 columns: rotations lie in -3..=3.
    let (src, d) = err("reveal any d in db, c in rotations(q, -4..=1): fhd(c, d) < R to p0;");
    assert_eq!(d.message, "rotation -4 is out of range");
    assert_eq!(spanned(&src, &d), "-4");
    let (_, d) = err("reveal any d in db, c in rotations(q, 2..=1): fhd(c, d) < R to p0;");
    assert!(d.message.starts_with("empty rotation range"));
    let (_, d) = err("reveal any d in db, c in rotations(db, 0..=1): fhd(c, d) < R to p0;");
    assert!(d.message.starts_with("only a query can be rotated"));
}

#[test]
fn unused_binders_and_cycles() {
    let (src, d) = err("reveal any d in db, c in rotations(q, 0..=1): fhd(q, d) < R to p0;");
    assert_eq!(d.message, "rotation variable `c` is never used");
    assert_eq!(spanned(&src, &d), "c");
    let e = errs(&format!("{HEAD}let a = b;\nlet b = a;\nreveal a to p0;"));
    assert!(!e.is_empty());
    assert!(
        e.iter().all(|d| d.message.contains("in terms of itself")),
        "{e:#?}"
    );
}

#[test]
fn output_names() {
    let (src, d) = err("reveal any d in db: fhd(q, d) < R to p0;\nreveal any d in db: fhd(q, d) < 0.3 to p0 as match;");
    assert_eq!(d.message, "two outputs to the same party are named `match`");
    assert_eq!(spanned(&src, &d), "match");
    // `ids` also prints `match`.
    let (_, d) = err("reveal any d in db: fhd(q, d) < R to p0 as x;\nreveal ids d in db: fhd(q, d) < 0.3 to p0 as x;");
    assert_eq!(d.message, "two outputs to the same party are named `x`");
    // Only the first ids or bit output to a party sets `match`; a later `ids` does not.
    let p = v2_ok(
        HEAD,
        "reveal any d in db: fhd(q, d) < R to p0;\nreveal ids d in db: fhd(q, d) < 0.3 to p0 as ids;",
    );
    assert_eq!(p.reveals[1].label, "ids");
    // A labelled ids output also sets `match`, so a later output cannot take that name.
    let (_, d) = err("reveal ids d in db: fhd(q, d) < R to p0 as hits;\nreveal any d in db: fhd(q, d) < 0.3 to p0 as match;");
    assert_eq!(d.message, "two outputs to the same party are named `match`");
    let (_, d) = err("reveal ids d in db: fhd(q, d) < R to p0 as match;");
    assert_eq!(d.message, "only a bit output can be named `match`");
    let (_, d) = err("reveal count d in db: fhd(q, d) < R to p0 as match;");
    assert_eq!(d.message, "only a bit output can be named `match`");
    for reserved in ["query", "id", "party", "complete"] {
        let (_, d) = err(&format!(
            "reveal any d in db: fhd(q, d) < R to p0 as {reserved};"
        ));
        assert_eq!(d.message, format!("`{reserved}` cannot name an output"));
    }
    // Different parties may use the same names.
    let p = v2_ok(
        HEAD,
        "reveal ids d in db: fhd(q, d) < R to p0;\nreveal ids d in db: fhd(q, d) < R to p1;",
    );
    assert_eq!(p.reveals[1].label, "ids");
}

#[test]
fn program_level_rules() {
    let src = "parties a, b;\nconst R = 1.5;\ngallery db: iris<100> secret mask;\n";
    let e = errs(src);
    let msgs: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
    assert!(
        msgs.contains(&"expected exactly three parties, found 2"),
        "{msgs:?}"
    );
    assert!(msgs.contains(&"ratio `1.5` is greater than 1"), "{msgs:?}");
    assert!(msgs.contains(&"invalid code length 100"), "{msgs:?}");
    assert!(msgs.contains(&"the program reveals nothing"), "{msgs:?}");
    assert!(msgs.contains(&"the program has no query input"), "{msgs:?}");
    let e = errs("parties a, b, c;\ngallery g: embedding<0> scale 17;\nquery v: embedding<70000> scale 17 from a;\nreveal true to a;");
    let msgs: Vec<&str> = e.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "invalid embedding dimension 0",
            "invalid embedding dimension 70000"
        ]
    );
    let e = errs("parties a, b, c;\nquery v: embedding<16> scale 17 from a;\nreveal true to a;");
    assert_eq!(e[0].message, "invalid scale 17");
    assert!(e.iter().all(|d| d.hint.is_some()));
}

#[test]
fn code_lengths_must_agree() {
    let src = "parties a, b, c;\ngallery db: iris<128> public mask;\nquery q: iris<64> public mask from a;\n\
        reveal any d in db: fhd(q, d) < 0.3 to b;";
    let e = errs(src);
    assert_eq!(
        e[0].message,
        "type mismatch: `q` has 64-bit codes but `db` has 128-bit codes"
    );
    assert_eq!(e[0].secondary.len(), 2);
}

#[test]
fn every_example_checks() {
    let dir = format!("{}/../examples", env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "irs") {
            let src = std::fs::read_to_string(&path).unwrap();
            frontend(&path.display().to_string(), &src).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert!(n >= 16, "{n} examples");
    for (file, bits, rot) in [
        ("iris_unique.irs", 12800, 15),
        ("iris_ids.irs", 12800, 15),
        ("small_ids.irs", 256, 2),
    ] {
        let path = format!("{dir}/{file}");
        let src = std::fs::read_to_string(&path).unwrap();
        let p = frontend(&path, &src).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(p.inputs[0].ty, InputType::Iris { code_bits, .. } if code_bits == bits));
        let rotations: Vec<_> = p
            .binders
            .iter()
            .filter_map(|b| match b.kind {
                BinderKind::Rotations { lo, hi, .. } => Some((lo, hi)),
                _ => None,
            })
            .collect();
        assert_eq!(rotations, [(-rot, rot)]);
    }
}
