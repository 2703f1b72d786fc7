//! Property tests: random and mutated programs never make the front end panic, and every
//! diagnostic points inside the source.

use irisc::syntax::{self, lexer, render, Diagnostic};
use proptest::prelude::*;

fn examples() -> Vec<String> {
    ["iris_unique.irs", "iris_ids.irs", "small_ids.irs"]
        .iter()
        .map(|f| {
            let p = format!("{}/../examples/{f}", env!("CARGO_MANIFEST_DIR"));
            std::fs::read_to_string(p).unwrap()
        })
        .collect()
}

fn assert_inside(src: &str, d: &Diagnostic) {
    let spans = std::iter::once(d.span).chain(d.secondary.iter().map(|l| l.span));
    for s in spans {
        assert!(
            s.start <= s.end && s.end <= src.len(),
            "{s:?} outside {} bytes: {}",
            src.len(),
            d.message
        );
        assert!(
            src.is_char_boundary(s.start) && src.is_char_boundary(s.end),
            "{s:?}: {}",
            d.message
        );
    }
    assert!(!d.message.is_empty());
    // Every error tells the user what to do about it.
    assert!(d.hint.is_some(), "no hint for: {}", d.message);
}

/// Runs the whole front end; on errors checks spans and renders them.
fn run(src: &str) {
    let diags = match syntax::parse(src) {
        Ok(m) => match irisc::sema::check("p.irs", src, &m) {
            Ok(p) => {
                // A program that checks must also be explainable.
                let _ = irisc::analysis::explain::explain_json(&p);
                return;
            }
            Err(ds) => ds,
        },
        Err(d) => vec![d],
    };
    assert!(!diags.is_empty());
    for d in &diags {
        assert_inside(src, d);
    }
    let out = render("p.irs", src, &diags, false);
    assert!(out.contains("error: "), "{out}");
}

/// The source's tokens as text (whitespace dropped, comments dropped).
fn token_texts(src: &str) -> Vec<String> {
    lexer::lex(src)
        .unwrap()
        .iter()
        .filter(|t| t.tok != lexer::Tok::Eof)
        .map(|t| src[t.span.start..t.span.end].to_string())
        .collect()
}

const VOCAB: &[&str] = &[
    "const",
    "parties",
    "gallery",
    "query",
    "from",
    "iris",
    "public",
    "secret",
    "mask",
    "let",
    "reveal",
    "ids",
    "any",
    "in",
    "to",
    "rotations",
    "fhd",
    ";",
    ",",
    ":",
    "=",
    "<",
    ">",
    "(",
    ")",
    "-",
    "..=",
    "0",
    "64",
    "0.5",
    "1.5",
    "99999999999999999999999",
    "db",
    "q",
    "p0",
    "x",
    "é",
    "..",
    "/*",
    "//",
];

#[derive(Debug, Clone)]
enum Edit {
    DeleteToken(usize),
    DuplicateToken(usize),
    InsertToken(usize, usize),
    DeleteChar(usize),
    InsertChar(usize, char),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::DeleteToken),
        any::<usize>().prop_map(Edit::DuplicateToken),
        (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, b)| Edit::InsertToken(a, b)),
        any::<usize>().prop_map(Edit::DeleteChar),
        (any::<usize>(), any::<char>()).prop_map(|(a, c)| Edit::InsertChar(a, c)),
    ]
}

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut toks = token_texts(src);
    let mut chars: Option<Vec<char>> = None;
    for e in edits {
        match (e, &mut chars) {
            (Edit::DeleteToken(i), None) if !toks.is_empty() => {
                let i = i % toks.len();
                toks.remove(i);
            }
            (Edit::DuplicateToken(i), None) if !toks.is_empty() => {
                let i = i % toks.len();
                let t = toks[i].clone();
                toks.insert(i, t);
            }
            (Edit::InsertToken(i, v), None) => {
                let i = i % (toks.len() + 1);
                toks.insert(i, VOCAB[*v].to_string());
            }
            (Edit::DeleteChar(i), c) => {
                let c = c.get_or_insert_with(|| toks.join(" ").chars().collect());
                if !c.is_empty() {
                    let i = i % c.len();
                    c.remove(i);
                }
            }
            (Edit::InsertChar(i, ch), c) => {
                let c = c.get_or_insert_with(|| toks.join(" ").chars().collect());
                let i = i % (c.len() + 1);
                c.insert(i, *ch);
            }
            _ => {}
        }
    }
    chars.map_or_else(|| toks.join(" "), |c| c.into_iter().collect())
}

#[test]
fn examples_survive_the_token_round_trip() {
    for src in examples() {
        run(&src);
        let rebuilt = token_texts(&src).join(" ");
        assert!(
            irisc::sema::frontend("p.irs", &rebuilt).is_ok(),
            "{rebuilt}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(600))]

    #[test]
    fn mutated_examples_never_panic(which in 0usize..3, edits in prop::collection::vec(edit(), 1..6)) {
        let src = apply(&examples()[which], &edits);
        run(&src);
    }

    #[test]
    fn random_token_soup_never_panics(words in prop::collection::vec(0..VOCAB.len(), 0..40)) {
        let src: Vec<&str> = words.iter().map(|w| VOCAB[*w]).collect();
        run(&src.join(" "));
    }

    #[test]
    fn random_text_never_panics(src in "\\PC{0,200}") {
        run(&src);
    }
}
