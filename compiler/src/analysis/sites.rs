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
    })
}
