//! Unit tests of the checker on small programs.

use super::*;
use crate::syntax::Diagnostic;

const HEAD: &str = "const BITS = 256;\nconst R = 0.375;\nparties p0, p1, p2;\n\
    gallery db: iris<BITS> public mask;\nquery q: iris<BITS> public mask from p1;\n";

fn ok(body: &str) -> Program {
    let src = format!("{HEAD}{body}");
    frontend("t.irs", &src).unwrap_or_else(|e| panic!("{e}"))
}

fn errs(src: &str) -> Vec<Diagnostic> {
    let m = crate::syntax::parse(src).unwrap_or_else(|d| panic!("parse: {}", d.message));
    check("t.irs", src, &m).expect_err("expected errors")
}

fn err(body: &str) -> (String, Diagnostic) {
    let src = format!("{HEAD}{body}");
    let mut e = errs(&src);
    assert_eq!(e.len(), 1, "{e:#?}");
    (src, e.remove(0))
}

fn spanned<'a>(src: &'a str, d: &Diagnostic) -> &'a str {
    &src[d.span.start..d.span.end]
}

#[test]
fn any_bit_with_rotations() {
    let p =
        ok("let dup = any d in db, c in rotations(q, -2..=3): fhd(c, d) < R;\nreveal dup to p2;");
    assert_eq!(p.name, "t");
    assert_eq!(p.parties, ["p0", "p1", "p2"].map(String::from));
    assert_eq!(p.inputs[1].role, InputRole::Query { owner: 1 });
    let r = &p.reveals[0];
    assert_eq!((r.shape, r.to), (RevealShape::AnyBit, 2));
    assert_eq!((r.decision.query, r.decision.gallery), (1, 0));
    assert_eq!((r.decision.rot_lo, r.decision.rot_hi), (-2, 3));
    assert_eq!(r.decision.ratio, Ratio { num: 3, den: 8 });
}

#[test]
fn ids_without_rotations_and_nested_any() {
    let p = ok("reveal ids d in db: fhd(q, d) < 0.345 to p0;\n\
        reveal any d in db: any c in rotations(q, -1..=1): fhd(d, c) < R to p0;");
    assert_eq!(p.reveals[0].shape, RevealShape::MatchingIds);
    assert_eq!(
        (p.reveals[0].decision.rot_lo, p.reveals[0].decision.rot_hi),
        (0, 0)
    );
    assert_eq!(p.reveals[0].decision.ratio, Ratio { num: 69, den: 200 });
    assert_eq!(
        (p.reveals[1].decision.rot_lo, p.reveals[1].decision.rot_hi),
        (-1, 1)
    );
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
    let (src, d) = err("const R = 0.5;\nreveal any d in db: fhd(q, d) < R to p0;");
    assert_eq!(d.message, "`R` is declared twice");
    assert_eq!(d.secondary[0].span.start, src.find("R =").unwrap());
    let (_, d) = err("reveal any q in db: fhd(q, q) < R to p0;");
    assert_eq!(d.message, "`q` is declared twice");
}

#[test]
fn kinds_of_names_are_checked() {
    let (_, d) = err("reveal any d in db: fhd(q, d) < R to db;");
    assert_eq!(d.message, "`db` is a gallery, not a party");
    let (_, d) = err("reveal R to p0;");
    assert_eq!(d.message, "`R` is a constant, not a matching condition");
    let (_, d) = err("reveal any d in db: fhd(q, db) < R to p0;");
    assert!(d.message.contains("whole gallery"), "{}", d.message);
    let (_, d) = err("reveal any d in db: fhd(d, d) < R to p0;");
    assert!(d.message.starts_with("type mismatch"), "{}", d.message);
    let (_, d) = err("reveal any d in db: fhd(q, d) < BITS to p0;");
    assert!(d.message.contains("must be a ratio"), "{}", d.message);
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
    assert_eq!(e.len(), 2, "{e:#?}");
    assert!(e.iter().all(|d| d.message.contains("in terms of itself")));
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
    let e = errs("parties a, b, c;\ngallery db: iris<64> secret mask;\nreveal x to a;");
    let secret = e
        .iter()
        .find(|d| d.message == "secret masks are not supported yet")
        .unwrap();
    assert_eq!(
        &"parties a, b, c;\ngallery db: iris<64> secret mask;"[secret.span.start..secret.span.end],
        "secret mask"
    );
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
fn examples_check() {
    for (file, bits, rot) in [
        ("iris_unique.irs", 12800, 15),
        ("iris_ids.irs", 12800, 15),
        ("small_ids.irs", 256, 2),
    ] {
        let path = format!("{}/../examples/{file}", env!("CARGO_MANIFEST_DIR"));
        let src = std::fs::read_to_string(&path).unwrap();
        let p = frontend(&path, &src).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.inputs[0].code_bits, bits);
        assert_eq!(p.reveals[0].decision.rot_hi, rot);
        assert_eq!(p.reveals[0].decision.rot_lo, -rot);
    }
}
