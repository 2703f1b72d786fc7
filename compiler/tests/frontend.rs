//! Malformed programs: each error is checked for its message, `file:line:column`, the caret under
//! the offending text, and the hint, as a user sees them from `irisc build`.

use irisc::sema::frontend;

const GOOD: &str = "\
const CODE_BITS = 256;
const MATCH_RATIO = 0.375;
parties p0, p1, p2;
gallery db: iris<CODE_BITS> public mask;
query q: iris<CODE_BITS> public mask from p0;
reveal ids d in db: any c in rotations(q, -2..=2): fhd(c, d) < MATCH_RATIO to p0;
";

/// Replaces the first `from` in GOOD by `to` and returns the rendered error.
fn error_after(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    let src = GOOD.replacen(from, to, 1);
    frontend("bad.irs", &src).expect_err("expected an error")
}

/// Asserts the rendered error has `message`, location `line:col`, a caret line whose `^`s start
/// under column `col` and span `width` characters, and the hint.
fn assert_error(
    out: &str,
    message: &str,
    line: usize,
    col: usize,
    width: usize,
    hint: Option<&str>,
) {
    assert!(out.starts_with(&format!("error: {message}\n")), "{out}");
    assert!(out.contains(&format!("bad.irs:{line}:{col}\n")), "{out}");
    let caret = out
        .lines()
        .find(|l| l.contains('^'))
        .unwrap_or_else(|| panic!("no caret in\n{out}"));
    // The gutter is `N | ` for the source line; the caret line has the same width before `|`.
    let bar = caret.find('|').unwrap();
    let col0 = caret.find('^').unwrap() - bar - 2;
    assert_eq!(col0 + 1, col, "caret column in\n{out}");
    let carets = caret[caret.find('^').unwrap()..]
        .chars()
        .take_while(|c| *c == '^')
        .count();
    assert_eq!(carets, width, "caret width in\n{out}");
    match hint {
        Some(h) => assert!(out.contains(&format!("= hint: {h}")), "{out}"),
        // No specific hint expected: the general one (the statement forms) must still be there.
        None => assert!(out.contains("= hint: "), "{out}"),
    }
}

#[test]
fn good_program_checks() {
    let p = frontend("good.irs", GOOD).unwrap();
    assert_eq!(p.name, "good");
    assert_eq!(p.reveals.len(), 1);
}

#[test]
fn missing_semicolon() {
    let out = error_after("const MATCH_RATIO = 0.375;", "const MATCH_RATIO = 0.375");
    assert_error(
        &out,
        "expected `;`, found `parties`",
        3,
        1,
        7,
        Some("every declaration and statement ends with `;`"),
    );
    // The unfinished declaration is labelled too.
    assert!(out.contains("this declaration is not finished"), "{out}");
}

#[test]
fn unknown_name_with_suggestion() {
    let out = error_after("< MATCH_RATIO", "< MATCH_RATO");
    assert_error(
        &out,
        "unknown constant `MATCH_RATO`",
        6,
        64,
        10,
        Some("did you mean `MATCH_RATIO`?"),
    );
    let out = error_after("to p0;", "to p9;");
    assert_error(
        &out,
        "unknown party `p9`",
        6,
        79,
        2,
        Some("did you mean `p0`?"),
    );
}

#[test]
fn wrong_party_count() {
    let out = error_after("parties p0, p1, p2;", "parties p0, p1, p2, p3;");
    assert_error(
        &out,
        "expected exactly three parties, found 4",
        3,
        1,
        23,
        Some("the replicated three-party protocol runs with exactly three parties: `parties p0, p1, p2;`"),
    );
}

#[test]
fn bad_ratio() {
    let out = error_after("0.375", "1.375");
    assert_error(
        &out,
        "ratio `1.375` is greater than 1",
        2,
        21,
        5,
        Some("a fractional Hamming distance lies in [0, 1]; the deployed threshold is 0.345"),
    );
    let out = error_after("< MATCH_RATIO", "< CODE_BITS");
    assert_error(
        &out,
        "type mismatch: a match threshold must be a ratio, found an integer",
        6,
        64,
        9,
        Some("write the threshold as a decimal between 0 and 1, e.g. `0.345`"),
    );
}

#[test]
fn secret_masks_check() {
    let src = GOOD.replacen(
        "iris<CODE_BITS> public mask;",
        "iris<CODE_BITS> secret mask;",
        1,
    );
    let src = src.replacen(
        "iris<CODE_BITS> public mask from",
        "iris<CODE_BITS> secret mask from",
        1,
    );
    let p = frontend("good.irs", &src).unwrap();
    assert!(p.inputs.iter().all(|i| matches!(
        i.ty,
        irisc::sema::InputType::Iris {
            mask: irisc::sema::MaskKind::Secret,
            ..
        }
    )));
}

#[test]
fn rotation_out_of_range() {
    let out = error_after("-2..=2", "-2..=4");
    assert_error(
        &out,
        "rotation 4 is out of range",
        6,
        48,
        1,
        Some("`q` has 4 columns; a rotation shifts whole columns, so at most 3 either way"),
    );
}

#[test]
fn type_mismatch_in_fhd() {
    let out = error_after("fhd(c, d)", "fhd(d, d)");
    assert_error(
        &out,
        "type mismatch: `fhd` compares a query with a gallery record, but both operands are gallery records",
        6,
        56,
        4,
        Some("write `fhd(c, d)` with `c` the query (or one of its rotations) and `d` a record"),
    );
    let out = error_after("gallery db: iris<CODE_BITS>", "gallery db: iris<512>");
    assert!(
        out.starts_with("error: type mismatch: `q` has 256-bit codes but `db` has 512-bit codes"),
        "{out}"
    );
}

#[test]
fn code_length_not_a_multiple_of_64() {
    let out = error_after("const CODE_BITS = 256;", "const CODE_BITS = 250;");
    // Both inputs use it; each declaration is reported at its own `CODE_BITS`.
    assert_error(&out, "invalid code length 250", 4, 18, 9, Some("an iris code is 16 rows x columns x 4 bits, so its length is a multiple of 64 (e.g. 12800 = 16 x 200 x 4)"));
}

#[test]
fn parse_errors_name_what_was_expected() {
    let out = error_after("query q:", "query q");
    assert_error(&out, "expected `:`, found `iris`", 5, 9, 4, None);
    let out = error_after(" from p0;", ";");
    assert_error(&out, "expected `from`, found `;`", 5, 37, 1, None);
    let out = error_after("any c in", "any c on");
    assert_error(&out, "expected `in`, found name `on`", 6, 27, 2, None);
    let out = frontend("bad.irs", "reveal any d in db: fhd(q, d) <").unwrap_err();
    assert!(
        out.starts_with(
            "error: expected one of a number or a name (a constant), found end of file"
        ),
        "{out}"
    );
    assert!(out.contains("bad.irs:1:32"), "{out}");
}

#[test]
fn no_reveal() {
    let src = GOOD.lines().take(5).collect::<Vec<_>>().join("\n");
    let out = frontend("bad.irs", &src).unwrap_err();
    assert!(
        out.starts_with("error: the program reveals nothing"),
        "{out}"
    );
}

/// A program using every v2 construct (lines 11-13 are the reveals).
const GOOD_V2: &str = "\
const CODE_BITS = 256;
const MATCH_RATIO = 0.375;
parties p0, p1, p2;
gallery left: iris<CODE_BITS> secret mask;
gallery right: iris<CODE_BITS> secret mask;
query ql: iris<CODE_BITS> secret mask from p0;
query qr: iris<CODE_BITS> secret mask from p0;
query tier: bit from p0;
gallery voices: embedding<16> scale 8;
query v: embedding<16> from p1;
reveal ids (dl, dr) in zip(left, right): (any c in rotations(ql, -2..=2): fhd(c, dl) < MATCH_RATIO) and (any c in rotations(qr, -2..=2): fhd(c, dr) < MATCH_RATIO) to p0;
reveal ids d in left: if tier { fhd(ql, d) < 0.30 } else { fhd(ql, d) < MATCH_RATIO } to p0 as tiered;
reveal ids s in voices: cosine(v, s) >= 0.34 to p1;
";

/// Replaces the first `from` in GOOD_V2 by `to`; returns the rendered v2 error and the source.
fn v2_error_after(from: &str, to: &str) -> (String, String) {
    assert!(GOOD_V2.contains(from), "{from}");
    let src = GOOD_V2.replacen(from, to, 1);
    let out = frontend("bad.irs", &src).expect_err("expected an error");
    (out, src)
}

/// 1-based line and column of `needle` inside the first occurrence of `context` in `src`.
fn at(src: &str, context: &str, needle: &str) -> (usize, usize) {
    let ctx = src.find(context).unwrap_or_else(|| panic!("{context}"));
    let start = ctx + context.find(needle).unwrap_or_else(|| panic!("{needle}"));
    let before = &src[..start];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, col)
}

/// Asserts the error points at `needle` inside `context` (caret as wide as `needle`).
fn assert_v2(from: &str, to: &str, message: &str, (context, needle): (&str, &str), hint: &str) {
    let (out, src) = v2_error_after(from, to);
    let (line, col) = at(&src, context, needle);
    assert_error(&out, message, line, col, needle.chars().count(), Some(hint));
}

#[test]
fn good_v2_program_checks() {
    let p = frontend("good.irs", GOOD_V2).unwrap();
    let labels: Vec<&str> = p.reveals.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(labels, ["ids", "tiered", "ids"]);
    assert_eq!(p.zips(), vec![vec![0, 1]]);
}

#[test]
fn v2_parse_errors() {
    let (out, src) = v2_error_after("} else {", "} {");
    let (l, c) = at(&src, "} { fhd(ql, d) < MATCH", "{");
    assert_error(&out, "expected `else`, found `{`", l, c, 1, None);
    let (out, src) = v2_error_after("(any c in rotations(qr", "any c in rotations(qr");
    let (l, c) = at(&src, "and any c in rotations(qr", "any");
    assert_error(&out, "expected one of `not`, `(`, `true`, `false`, `if`, `fhd`, `cosine` or a name (a value), found `any`", l, c, 3, Some("a quantifier's body extends to the end of the expression: to combine `any` with `and`/`or`/`not`, put it in parentheses, e.g. `(any c in rotations(q, -15..=15): fhd(c, d) < 0.345) and ...`"));
    let (out, src) = v2_error_after(">= 0.34", "=> 0.34");
    let (l, c) = at(&src, "=> 0.34", "=");
    assert_error(
        &out,
        "expected one of `>=` or `>`, found `=`",
        l,
        c,
        1,
        None,
    );
    let (out, src) = v2_error_after("embedding<16> scale 8", "embedding<16> scale");
    let (l, c) = at(&src, "scale;", ";");
    assert_error(
        &out,
        "expected one of a number or a name (a constant), found `;`",
        l,
        c,
        1,
        None,
    );
    let (out, src) = v2_error_after("to p0 as tiered", "to p0 as");
    let (l, c) = at(&src, "as;", ";");
    assert_error(
        &out,
        "expected a name (the output's field name), found `;`",
        l,
        c,
        1,
        None,
    );
}

#[test]
fn zip_of_different_types() {
    assert_v2(
        "zip(left, right)",
        "zip(left, voices)",
        "type mismatch: `zip` of `left` (iris<256> secret mask) and `voices` (embedding<16> scale 8)",
        ("zip(left, voices)", "voices"),
        "zip only galleries declared with the same type",
    );
}

#[test]
fn combining_different_binders() {
    assert_v2(
        "(any c in rotations(ql, -2..=2): fhd(c, dl) < MATCH_RATIO) and (any c in rotations(qr, -2..=2): fhd(c, dr) < MATCH_RATIO)",
        "any c in rotations(ql, -2..=2): fhd(c, dl) < MATCH_RATIO and fhd(qr, dr) < 0.3",
        "`and` combines a value over `(dl, dr)` and `c` with a value over `(dl, dr)`",
        ("fhd(qr, dr) < 0.3", "fhd(qr, dr) < 0.3"),
        "move the test that uses `c` inside a quantifier that binds it, so that both sides range over the same variables, e.g. `any d in db: (any c in rotations(q, -15..=15): fhd(c, d) < 0.345) and ...`",
    );
}

#[test]
fn nested_ids_and_binder_sources() {
    assert_v2(
        "if tier {",
        "if (ids e in left: fhd(ql, e) < 0.3) {",
        "`ids` is only allowed as the whole revealed value",
        ("(ids e in left", "ids"),
        "reveal it on its own (`reveal ids d in db: ... to p0;`), or use `any`/`all` for a bit",
    );
    assert_v2(
        "ids d in left",
        "ids d in earlier(left)",
        "`earlier` takes a query input; `left` is a gallery",
        ("earlier(left)", "left"),
        "write `d in left` to range over the gallery, or `earlier(q)` with a query `q`",
    );
    assert_v2(
        "rotations(ql, -2..=2)",
        "rotations(v, -2..=2)",
        "only iris codes can be rotated; `v` is an embedding query",
        ("rotations(v,", "v"),
        "compare embeddings directly: `cosine(v, s) >= 0.34`",
    );
}

#[test]
fn ranges_of_thresholds_and_types() {
    assert_v2(
        ">= 0.34",
        ">= -1.25",
        "ratio `1.25` is greater than 1",
        ("-1.25", "1.25"),
        "a fractional Hamming distance lies in [0, 1]; the deployed threshold is 0.345",
    );
    assert_v2(
        "< 0.30",
        "< 0.50",
        "match ratio 1/2 is out of range",
        ("0.50", "0.50"),
        "`fhd(x, y) < r` needs 0 < r < 1/2 (the deployed threshold is 0.345); at 1/2 unrelated iris codes match",
    );
    assert_v2(
        "embedding<16> scale 8",
        "embedding<16> scale 20",
        "invalid scale 20",
        ("scale 20", "20"),
        "components are stored as round(v * 2^scale); the default `scale 8` keeps the cosine rings small",
    );
    assert_v2(
        "cosine(v, s)",
        "cosine(ql, s)",
        "type mismatch: `cosine` compares embeddings, but `ql` is an iris query",
        ("cosine(ql", "ql"),
        "compare iris codes with `fhd(q, d) < 0.345`",
    );
    assert_v2(
        "if tier",
        "if v",
        "`v` is an embedding query value, not a condition",
        ("if v", "v"),
        "compare it with a record: `cosine(v, s) >= 0.34`",
    );
}

#[test]
fn duplicate_output_names() {
    assert_v2(
        "to p0 as tiered",
        "to p0 as match",
        "two outputs to the same party are named `match`",
        ("as match", "match"),
        "name this output with `as NAME`, e.g. `reveal ... to p0 as second;`",
    );
}

#[test]
fn a_secret_value_where_a_public_number_is_required() {
    let src = "parties p0, p1, p2;\n\
        gallery db: iris<256> public mask;\n\
        query q: iris<256> public mask from p0;\n\
        query tier: bit from p0;\n\
        reveal ids d in db: fhd(q, d) < tier to p0;\n";
    let out = frontend("bad.irs", src).unwrap_err();
    assert_error(
        &out,
        "`tier` is a query, a secret value, but a public number is required here",
        5,
        33,
        4,
        Some("write a number or a `const`; to choose between public values by a secret bit, compare with each and select: `if bit { fhd(c, d) < 0.30 } else { fhd(c, d) < 0.375 }`"),
    );
}

/// An unknown function names the known ones, with a did-you-mean for a synonym or a typo,
/// where the former message was "expected `to`, found `(`".
#[test]
fn unknown_function_lists_the_known_ones() {
    let out = error_after("fhd(c, d)", "hamming(c, d)");
    assert_error(
        &out,
        "unknown function `hamming`; the known ones are `fhd`, `cosine`, `rotations`, `zip`, `earlier`, `mirror`",
        6,
        52,
        "hamming".len(),
        Some("did you mean `fhd`? `fhd(q, d) < r`: the fractional Hamming distance of two iris codes is below r"),
    );
    assert!(!out.contains("expected `to`"), "{out}");
    let out = error_after("fhd(c, d)", "fdh(c, d)");
    assert!(out.contains("did you mean `fhd`?"), "{out}");
    let out = error_after("rotations(q, -2..=2)", "rotate(q, -2..=2)");
    assert_error(
        &out,
        "unknown function `rotate`; the known ones are `fhd`, `cosine`, `rotations`, `zip`, `earlier`, `mirror`",
        6,
        30,
        "rotate".len(),
        Some("did you mean `rotations`?"),
    );
    // Nothing close: every call form is listed.
    let out = error_after("fhd(c, d)", "levenshtein(c, d)");
    assert!(
        out.contains("= hint: the calls are `fhd(q, d) < r`"),
        "{out}"
    );
    assert!(out.contains("`earlier(q)`"), "{out}");
}

/// `<=`, `>`, `>=`, `==` after `fhd` say that only `<` is allowed and why.
#[test]
fn only_less_than_after_fhd() {
    for op in ["<=", ">", ">=", "=="] {
        let out = error_after("< MATCH_RATIO", &format!("{op} MATCH_RATIO"));
        assert_error(
            &out,
            &format!("`fhd(..) {op}` is not allowed: only `<` is allowed after `fhd`"),
            6,
            62,
            op.len(),
            None,
        );
        assert!(out.contains("hd < r * ml"), "{out}");
        assert!(out.contains("not (fhd(c, d) < r)"), "{out}");
    }
}

/// `to p0, p1` (or `to p0 and p1`) says that a reveal goes to one party and how to write two,
/// where the former message was "this declaration is not finished".
#[test]
fn reveal_to_several_parties() {
    for (sep, width) in [(", ", ", p1".len()), (" and ", "and p1".len())] {
        let out = error_after("to p0;", &format!("to p0{sep}p1;"));
        let col = GOOD.lines().nth(5).unwrap().find("to p0").unwrap() + 1 + "to p0".len();
        let col = if sep == ", " { col } else { col + 1 };
        assert_error(
            &out,
            "a reveal goes to exactly one party",
            6,
            col,
            width,
            Some("write one `reveal` per party, each opened to that party alone: `reveal ... to p0; reveal ... to p1;`"),
        );
        assert!(!out.contains("not finished"), "{out}");
    }
}

/// `cosine(..) <` keeps its message and gains the reason and the way to test "below".
#[test]
fn cosine_below_gets_a_hint() {
    let (out, src) = v2_error_after(">= 0.34", "< 0.34");
    let (l, c) = at(&src, "< 0.34", "<");
    assert_error(
        &out,
        "expected one of `>=` or `>`, found `<`",
        l,
        c,
        1,
        Some("the protocol computes whether the cosine is above a threshold"),
    );
}
