//! The comparisons of an `irs` module, as the choice passes query them (HEIR-style: an analysis
//! built by walking the module, not a side table filled from the AST).
//!
//! [`ComparisonSites::of`] gives every `irs.fhd_lt` / `irs.cosine_ge` of `func.func @query`, in
//! op order (the order `irisc explain` lists them), with what the range analysis and the cost
//! model need: the code length or dimension (from the operand types), the mask mode and ratio
//! (attributes), how many comparisons it makes per record (the rotations of its query operand),
//! whether its records are earlier queries (the `source` of its `irs.records`), and its source
//! range (its location) for diagnostics.

use crate::mlir::{get_int, get_str, op_name, type_param, SourceRange};
use crate::sema::program::{MaskKind, Ratio, SignedRatio};
use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationRef, OperationResult},
    Module, RegionLike, Value, ValueLike,
};

/// `fhd(c, d) < ratio` as the ring analysis (Lemma 1 / Lemma 2) sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FhdSite {
    pub ratio: Ratio,
    pub mask: MaskKind,
    pub code_bits: u32,
    /// Where the comparison is written (for diagnostics).
    pub at: Option<SourceRange>,
}

/// `cosine(x, y) >= tau` as the cosine range analysis sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CosineSite {
    pub tau: SignedRatio,
    pub strict: bool,
    pub dim: u32,
    pub scale_bits: u32,
    pub at: Option<SourceRange>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SiteKind {
    Fhd(FhdSite),
    Cosine(CosineSite),
}

/// One comparison op in context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComparisonSite {
    pub kind: SiteKind,
    /// Comparisons per record: the rotations of the query operand (1 without rotation).
    pub per_record: u64,
    /// The record side is the earlier queries of the batch (`earlier(q)`), not a gallery.
    pub earlier: bool,
    /// The query side is a mirror image (`rotations(mirror(q), ...)`).
    pub mirror: bool,
}

impl ComparisonSite {
    pub fn at(&self) -> Option<&SourceRange> {
        match &self.kind {
            SiteKind::Fhd(f) => f.at.as_ref(),
            SiteKind::Cosine(c) => c.at.as_ref(),
        }
    }
}

/// The comparison op names.
pub const COMPARISONS: [&str; 2] = ["irs.fhd_lt", "irs.cosine_ge"];

/// Every comparison of a module, in op order.
pub struct ComparisonSites;

impl ComparisonSites {
    /// The comparisons of `module`'s `@query`, or what the module lacks for the analysis.
    pub fn of(module: &Module<'_>) -> Result<Vec<ComparisonSite>, String> {
        let mut sites = Vec::new();
        for_each_comparison(module, |op| {
            sites.push(site(op)?);
            Ok(())
        })?;
        Ok(sites)
    }
}

/// Calls `f` on every comparison op of `module`'s functions, in op order.
pub fn for_each_comparison<'c, 'm>(
    module: &'m Module<'c>,
    mut f: impl FnMut(&OperationRef<'c, 'm>) -> Result<(), String>,
) -> Result<(), String> {
    let mut func = module.body().first_operation();
    while let Some(fop) = func {
        for region in fop.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                let mut cur = b.first_operation();
                while let Some(op) = cur {
                    if COMPARISONS.contains(&op_name(&op).as_str()) {
                        f(&op)?;
                    }
                    cur = op.next_in_block();
                }
                block = b.next_in_region();
            }
        }
        func = fop.next_in_block();
    }
    Ok(())
}

fn unsigned(op: &OperationRef<'_, '_>, name: &str) -> Result<u64, String> {
    let v = get_int(op, name)?;
    u64::try_from(v).map_err(|_| format!("attribute `{name}` of `{}` is negative", op_name(op)))
}

/// The op defining `v`, if `v` is an op result.
fn defining_op<'c, 'a>(v: Value<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    OperationResult::try_from(v).ok().map(|r| r.owner())
}

fn site(op: &OperationRef<'_, '_>) -> Result<ComparisonSite, String> {
    let name = op_name(op);
    let operand = |i: usize| op.operand(i).map_err(|e| format!("`{name}`: {e}"));
    let (query, records) = (operand(0)?, operand(1)?);
    let width = type_param(records.r#type())
        .and_then(|w| u32::try_from(w).ok())
        .ok_or_else(|| format!("`{name}` records have no length parameter"))?;
    let mirror = match defining_op(query) {
        Some(q) if op_name(&q) == "irs.rotate" => get_int(&q, "mirror").unwrap_or(0) != 0,
        _ => false,
    };
    let per_record = match defining_op(query) {
        Some(q) if op_name(&q) == "irs.rotate" => {
            let (lo, hi) = (get_int(&q, "lo")?, get_int(&q, "hi")?);
            u64::try_from(hi - lo + 1)
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| format!("empty rotation range {lo}..={hi}"))?
        }
        _ => 1,
    };
    let earlier = match defining_op(records) {
        Some(r) if op_name(&r) == "irs.records" => get_str(&r, "source")? == "earlier",
        _ => false,
    };
    let at = SourceRange::of_location(op.location());
    let kind = if name == "irs.fhd_lt" {
        let mask = match get_str(op, "mask")?.as_str() {
            "public" => MaskKind::Public,
            "secret" => MaskKind::Secret,
            other => return Err(format!("unknown mask mode `{other}`")),
        };
        SiteKind::Fhd(FhdSite {
            ratio: Ratio {
                num: unsigned(op, "ratio_num")?,
                den: unsigned(op, "ratio_den")?,
            },
            mask,
            code_bits: width,
            at: at.clone(),
        })
    } else {
        SiteKind::Cosine(CosineSite {
            tau: SignedRatio {
                negative: get_int(op, "negative")? != 0,
                abs: Ratio {
                    num: unsigned(op, "num")?,
                    den: unsigned(op, "den")?,
                },
            },
            strict: get_int(op, "strict")? != 0,
            dim: width,
            scale_bits: u32::try_from(unsigned(op, "scale_bits")?)
                .map_err(|_| "attribute `scale_bits` is too large".to_string())?,
            at,
        })
    };
    Ok(ComparisonSite {
        kind,
        per_record,
        earlier,
        mirror,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mlir::Compiler;

    const BATCH: &str = "parties p0, p1, p2;
gallery db: iris<256> secret mask;
query q: iris<256> secret mask from p0;
reveal ids d in db: any c in rotations(q, -2..=2): fhd(c, d) < 0.375 to p0;
reveal ids e in earlier(q): fhd(q, e) < 0.25 to p0;
";

    #[test]
    fn sites_come_from_the_module_in_op_order() {
        let cx = Compiler::new().unwrap();
        let program = crate::sema::frontend("b.irs", BATCH).unwrap();
        let module = crate::lower::lower_program(&cx, &program, BATCH).unwrap();
        let sites = ComparisonSites::of(&module).unwrap();
        assert_eq!(sites.len(), 2);
        let fhd = |s: &ComparisonSite| match &s.kind {
            SiteKind::Fhd(f) => f.clone(),
            SiteKind::Cosine(_) => panic!("{s:?}"),
        };
        let (a, b) = (fhd(&sites[0]), fhd(&sites[1]));
        assert_eq!((a.code_bits, a.mask), (256, MaskKind::Secret));
        assert_eq!((a.ratio.num, a.ratio.den), (3, 8));
        assert_eq!((b.ratio.num, b.ratio.den), (1, 4));
        // Five rotations per record for the first, none for the second; only the second
        // compares with earlier queries.
        assert_eq!((sites[0].per_record, sites[0].earlier), (5, false));
        assert_eq!((sites[1].per_record, sites[1].earlier), (1, true));
        // The location is the comparison's source text.
        let span = |s: &ComparisonSite| s.at().unwrap().to_span(BATCH);
        let text = |s: &ComparisonSite| &BATCH[span(s).start..span(s).end];
        assert_eq!(text(&sites[0]), "fhd(c, d) < 0.375");
        assert_eq!(text(&sites[1]), "fhd(q, e) < 0.25");
    }

    #[test]
    fn a_cosine_site_needs_its_scale() {
        let cx = Compiler::new().unwrap();
        let text = r#"module {
          func.func @query() {
            %0 = "irs.query_value"() {input = 1 : i64, kind = "embedding", name = "v", owner = 1 : i64} : () -> !irs.vector<16 : i64>
            %1 = "irs.records"() {input = 0 : i64, name = "s", source = "gallery"} : () -> !irs.vectors<16 : i64>
            %2 = "irs.cosine_ge"(%0, %1) {den = 50 : i64, negative = 0 : i64, num = 17 : i64, scale_bits = 8 : i64, strict = 0 : i64} : (!irs.vector<16 : i64>, !irs.vectors<16 : i64>) -> !irs.bits
            return
          }
        }"#;
        let module = cx.parse_module(text).unwrap();
        let sites = ComparisonSites::of(&module).unwrap();
        let SiteKind::Cosine(c) = &sites[0].kind else {
            panic!("{sites:?}")
        };
        assert_eq!(
            (c.dim, c.scale_bits, c.tau.abs.num, c.strict),
            (16, 8, 17, false)
        );
        // Parsed text without `loc`s: the op's position in that text, which MLIR names `-`.
        let at = sites[0].at().unwrap();
        assert_eq!((at.file.as_str(), at.line), ("-", 5));
        // Without `scale_bits` the module does not verify against the dialect.
        assert!(cx
            .parse_module(&text.replace("scale_bits = 8 : i64, ", ""))
            .is_err());
    }
}
