//! Property tests: random well-formed v2 programs check; random and mutated programs never make
//! the front end panic, and every diagnostic points inside the source and carries a hint.

use irisc::sema::check_program;
use irisc::syntax::{self, lexer, render, Diagnostic};
use proptest::prelude::*;

/// Every `examples/*.irs`, sorted by name.
fn examples() -> Vec<String> {
    let dir = format!("{}/../examples", env!("CARGO_MANIFEST_DIR"));
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "irs"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
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

/// Lowers a checked program and runs the choice passes: the program is planned and explained,
/// or the lowering or a pass says why not, at a span inside the source and with a hint (e.g. a
/// ring above 64 bits).
fn plan_and_explain(src: &str, p: &irisc::sema::Program) {
    use irisc::lower::LowerError;
    use irisc::passes::{PassError, PassManager};
    let cx = irisc::mlir::Compiler::new().unwrap();
    let irs = match irisc::lower::lower_program(&cx, p, src) {
        Ok(irs) => irs,
        Err(LowerError::Unsupported {
            message,
            hint,
            span,
        }) => {
            assert_inside(src, &Diagnostic::error(message, span).with_hint(hint));
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let outcome = PassManager::choice_pipeline(&Default::default()).run(&cx, irs, None);
    match outcome {
        Ok(module) => {
            let plan = irisc::analysis::plan::Plan::of(&module).unwrap();
            let _ = irisc::analysis::explain::explain_program_json(p, &plan, 1);
        }
        Err(PassError::Choice { error: e, .. }) => {
            assert!(!e.hint.is_empty(), "{}", e.message);
            let span = e.at.expect("a choice error has a location").to_span(src);
            assert_inside(src, &Diagnostic::error(e.message, span).with_hint(e.hint));
        }
        Err(e) => panic!("{e}"),
    }
}

/// Runs the whole front end; on errors checks spans and renders them. Returns whether the
/// program checked.
fn run(src: &str) -> bool {
    let diags = match syntax::parse(src) {
        Ok(m) => match check_program("p.irs", src, &m) {
            // A checked program is planned and explained, or the plan says why not, at a span
            // inside the source and with a hint (e.g. a ring above 64 bits).
            Ok(p) => {
                plan_and_explain(src, &p);
                return true;
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
    false
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
    "all",
    "count",
    "and",
    "or",
    "not",
    "true",
    "false",
    "if",
    "else",
    "cosine",
    "zip",
    "earlier",
    "embedding",
    "scale",
    "bit",
    "as",
    "{",
    "}",
    ">=",
    "t",
    "v",
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
    SwapTokens(usize, usize),
    Truncate(usize),
    DeleteChar(usize),
    InsertChar(usize, char),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::DeleteToken),
        any::<usize>().prop_map(Edit::DuplicateToken),
        (any::<usize>(), 0..VOCAB.len()).prop_map(|(a, b)| Edit::InsertToken(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapTokens(a, b)),
        any::<usize>().prop_map(Edit::Truncate),
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
            (Edit::SwapTokens(i, j), None) if !toks.is_empty() => {
                let n = toks.len();
                toks.swap(i % n, j % n);
            }
            (Edit::Truncate(i), None) => {
                let i = i % (toks.len() + 1);
                toks.truncate(i);
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

// ---- Random well-formed v2 programs ----

/// The shape of a random expression; rendering fills in names so that the result is well formed.
#[derive(Debug, Clone)]
enum Shape {
    Leaf(u8),
    Not(Box<Shape>),
    And(Box<Shape>, Box<Shape>),
    Or(Box<Shape>, Box<Shape>),
    If(Box<Shape>, Box<Shape>, Box<Shape>),
    /// `all` if true, else `any`; the byte picks the binders.
    Quant(bool, u8, Box<Shape>),
}

fn shape() -> impl Strategy<Value = Shape> {
    any::<u8>()
        .prop_map(Shape::Leaf)
        .prop_recursive(4, 24, 3, |inner| {
            prop_oneof![
                inner.clone().prop_map(|x| Shape::Not(Box::new(x))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Shape::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| Shape::Or(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone(), inner.clone()).prop_map(|(a, b, c)| Shape::If(
                    Box::new(a),
                    Box::new(b),
                    Box::new(c)
                )),
                (any::<bool>(), any::<u8>(), inner).prop_map(|(all, k, b)| Shape::Quant(
                    all,
                    k,
                    Box::new(b)
                )),
            ]
        })
}

/// The record binder in scope: iris record names (one, or two for a zip), or an embedding.
#[derive(Debug, Clone)]
enum Rec {
    Iris(Vec<String>),
    Emb(String),
}

#[derive(Debug, Clone, Default)]
struct Scope {
    rec: Option<Rec>,
    rot: Option<String>,
}

struct Gen {
    fresh: usize,
    seed: u64,
}

const RATIOS: &[&str] = &["0.1", "0.25", "0.3", "0.345", "0.375", "0.49"];
const TAUS: &[&str] = &["0.0", "0.34", "0.5", "1.0", "0.125", "1"];

impl Gen {
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        self.seed = self
            .seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        xs[(self.seed >> 33) as usize % xs.len()]
    }

    fn name(&mut self, base: &str) -> String {
        self.fresh += 1;
        format!("{base}_{}", self.fresh)
    }

    /// A test that uses every binder in scope (which has a record binder).
    fn open_leaf(&mut self, scope: &Scope) -> String {
        let r = self.pick(RATIOS);
        match (&scope.rec, &scope.rot) {
            (Some(Rec::Iris(names)), rot) => {
                let q = rot.clone().unwrap_or_else(|| "q1".to_string());
                let tests: Vec<String> = names
                    .iter()
                    .map(|d| format!("fhd({q}, {d}) < {r}"))
                    .collect();
                format!("({})", tests.join(") and ("))
            }
            (Some(Rec::Emb(s)), _) => {
                let neg = self.pick(&["", "-"]);
                let cmp = self.pick(&[">=", ">"]);
                let tau = self.pick(TAUS);
                format!("cosine(v, {s}) {cmp} {neg}{tau}")
            }
            (None, _) => unreachable!("open leaf without a record binder"),
        }
    }

    fn closed_leaf(&mut self) -> String {
        self.pick(&["t", "true", "false", "m", "not t"]).to_string()
    }

    /// A record binder: `(text, Rec)` from choice `k`.
    fn record_binder(&mut self, k: u8) -> (String, Rec) {
        match k % 4 {
            0 => {
                let d = self.name("d");
                (format!("{d} in g1"), Rec::Iris(vec![d]))
            }
            1 => {
                let (a, b) = (self.name("a"), self.name("b"));
                (format!("({a}, {b}) in zip(g1, g2)"), Rec::Iris(vec![a, b]))
            }
            2 => {
                let e = self.name("e");
                (format!("{e} in earlier(q1)"), Rec::Iris(vec![e]))
            }
            _ => {
                let s = self.name("s");
                (format!("{s} in e1"), Rec::Emb(s))
            }
        }
    }

    fn rotation_binder(&mut self) -> (String, String) {
        let c = self.name("c");
        let lo = self.pick(&["-3", "-1", "0", "-2"]);
        let hi = self.pick(&["0", "1", "3"]);
        (format!("{c} in rotations(q1, {lo}..={hi})"), c)
    }

    /// Renders `s` in `scope`; every value is closed or ranges over exactly the scope's binders.
    /// Returns the text and whether it uses every binder of the scope.
    fn render(&mut self, s: &Shape, scope: &Scope) -> (String, bool) {
        let empty = scope.rec.is_none();
        match s {
            Shape::Leaf(k) => {
                if empty || k % 3 == 0 {
                    (self.closed_leaf(), empty)
                } else {
                    (self.open_leaf(scope), true)
                }
            }
            Shape::Not(x) => {
                let (a, u) = self.render(x, scope);
                (format!("not ({a})"), u)
            }
            Shape::And(x, y) | Shape::Or(x, y) => {
                let (a, ua) = self.render(x, scope);
                let (b, ub) = self.render(y, scope);
                let op = if matches!(s, Shape::And(..)) {
                    "and"
                } else {
                    "or"
                };
                (format!("({a}) {op} ({b})"), ua || ub)
            }
            Shape::If(c, x, y) => {
                let (c, uc) = self.render(c, scope);
                let (a, ua) = self.render(x, scope);
                let (b, ub) = self.render(y, scope);
                (format!("if {c} {{ {a} }} else {{ {b} }}"), uc || ua || ub)
            }
            Shape::Quant(all, k, body) => {
                let mut inner = scope.clone();
                let binders = match (&scope.rec, &scope.rot) {
                    (None, _) => {
                        let (text, rec) = self.record_binder(*k);
                        let iris = matches!(rec, Rec::Iris(_));
                        inner.rec = Some(rec);
                        if iris && k & 4 != 0 {
                            let (rt, c) = self.rotation_binder();
                            inner.rot = Some(c);
                            format!("{text}, {rt}")
                        } else {
                            text
                        }
                    }
                    (Some(Rec::Iris(_)), None) => {
                        let (rt, c) = self.rotation_binder();
                        inner.rot = Some(c);
                        rt
                    }
                    _ => return self.render(&Shape::Leaf(*k), scope),
                };
                let (mut b, used) = self.render(body, &inner);
                if !used {
                    b = format!("({b}) or ({})", self.open_leaf(&inner));
                }
                let op = if *all { "all" } else { "any" };
                (format!("({op} {binders}: {b})"), true)
            }
        }
    }
}

/// A program declaring every kind of input, with `reveals` (shape, kind) rendered.
fn program(
    secret: bool,
    bits: u32,
    dim: u32,
    scale: u32,
    seed: u64,
    reveals: &[(Shape, u8)],
) -> String {
    let mask = if secret { "secret" } else { "public" };
    let mut src = format!(
        "const BITS = {bits};\nparties p0, p1, p2;\n\
         gallery g1: iris<BITS> {mask} mask;\ngallery g2: iris<BITS> {mask} mask;\n\
         query q1: iris<BITS> {mask} mask from p0;\nquery t: bit from p1;\n\
         gallery e1: embedding<{dim}> scale {scale};\nquery v: embedding<{dim}> scale {scale} from p2;\n\
         let m = any d in g1: fhd(q1, d) < 0.345;\n"
    );
    let mut g = Gen { fresh: 0, seed };
    for (i, (shape, kind)) in reveals.iter().enumerate() {
        let to = kind % 3;
        let value = match kind / 3 % 3 {
            0 => g.render(shape, &Scope::default()).0,
            k => {
                let (text, rec) = g.record_binder(*kind / 9);
                let scope = Scope {
                    rec: Some(rec),
                    rot: None,
                };
                let (mut body, used) = g.render(shape, &scope);
                if !used {
                    body = format!("({body}) or ({})", g.open_leaf(&scope));
                }
                format!("{} {text}: {body}", if k == 1 { "ids" } else { "count" })
            }
        };
        src.push_str(&format!("reveal {value}\n  to p{to} as out{i};\n"));
    }
    src
}

fn program_strategy() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop::sample::select(vec![256u32, 512, 12800]),
        1u32..=64,
        0u32..=16,
        any::<u64>(),
        prop::collection::vec((shape(), any::<u8>()), 1..4),
    )
        .prop_map(|(secret, bits, dim, scale, seed, reveals)| {
            program(secret, bits, dim, scale, seed, &reveals)
        })
}

#[test]
fn examples_survive_the_token_round_trip() {
    let ex = examples();
    assert!(ex.len() >= 16);
    for src in ex {
        assert!(run(&src), "{src}");
        let rebuilt = token_texts(&src).join(" ");
        assert!(
            irisc::sema::frontend("p.irs", &rebuilt).is_ok(),
            "{rebuilt}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_v2_programs_check(src in program_strategy()) {
        let m = syntax::parse(&src).unwrap_or_else(|d| panic!("{}\n{src}", render("p.irs", &src, &[d], false)));
        if let Err(ds) = check_program("p.irs", &src, &m) {
            panic!("{}\n{src}", render("p.irs", &src, &ds, false));
        }
        // The `--emit=ast` outline covers every item.
        let tree = syntax::print_tree(&m, &src);
        prop_assert_eq!(tree.lines().filter(|l| l.trim_start().starts_with("reveal")).count(),
            m.items.iter().filter(|i| matches!(i, syntax::ast::Item::Reveal(_))).count());
    }

    #[test]
    fn mutated_v2_programs_never_panic(src in program_strategy(), edits in prop::collection::vec(edit(), 1..5)) {
        run(&apply(&src, &edits));
    }

    #[test]
    fn mutated_examples_never_panic(which in 0usize..16, edits in prop::collection::vec(edit(), 1..6)) {
        let ex = examples();
        let src = apply(&ex[which % ex.len()], &edits);
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
