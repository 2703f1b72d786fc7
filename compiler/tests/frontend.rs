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
fn secret_mask() {
    let out = error_after(
        "iris<CODE_BITS> public mask;",
        "iris<CODE_BITS> secret mask;",
    );
    assert_error(
        &out,
        "secret masks are not supported yet",
        4,
        29,
        11,
        Some("declare `public mask`: the parties then see the masks in plain (Section 4)"),
    );
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
