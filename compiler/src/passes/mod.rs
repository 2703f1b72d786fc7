//! Passes over the `irs` and `mpc` modules, one module per pass, the registry `irisc opt` runs
//! them from, and the driver that runs them.
//!
//! - [`variant_select`]: decides the program's sharing and every comparison's protocol variant
//!   (the cost model over the candidates the range analysis allows) and records them as typed
//!   attributes;
//! - [`ring_select`]: records on every comparison the rings Lemma 1 / Lemma 2 / the cosine range
//!   analysis prove sufficient for its variant, `(a, b)` and the lift width;
//! - [`irs_to_mpc`]: lowers `irs` to the `mpc` ops the parties execute, shares typed by ring
//!   (secret conditionals become multiplexers there);
//! - [`mpc_tile`]: rewrites `@query` into the tiled schedule (stages, batch dot products, gallery
//!   views, appends of crossings) with its options recorded in the IR;
//! - [`kernel_tile`]: records on every dot product the register tile of its kernel, chosen for
//!   the codes per kernel call (query batch x rotations);
//! - [`threshold_placement`]: records which share component adds each plain-mask threshold,
//!   and so which parties compute its public mask lengths (by record thirds where only
//!   thresholds read them).
//!
//! The choice passes query [`crate::analysis::sites::ComparisonSites`], built from the module;
//! what the user forces (`--sharing`, `--variant`, `--precision`) are their options
//! (`variant-select{sharing=gr2 variant=mpc-lift}`, `ring-select{precision=16}`). Every pass is
//! followed by verification against the IRDL dialects, so a pass that produces ill-formed IR is
//! caught at the pass that did it.

pub mod irs_to_mpc;
pub mod kernel_tile;
pub mod mpc_tile;
pub mod ring_select;
pub mod threshold_placement;
pub mod variant_select;

use crate::analysis::plan::{PlanError, PlanOptions};
use crate::analysis::sites::COMPARISONS;
use crate::mlir::{op_name, Compiler, MlirError, SourceRange};
use melior::ir::{
    block::BlockLike,
    operation::{OperationLike, OperationRefMut},
    Module, RegionLike,
};
use std::collections::BTreeMap;

#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pass cannot handle this module (e.g. an unsupported feature); `pass` names it.
    #[error("pass {pass}: {message}")]
    Unsupported { pass: &'static str, message: String },
    /// A choice that cannot be made (a forced one that does not apply, a range too large), at
    /// the comparison's source range.
    #[error("pass {pass}: {}", error.message)]
    Choice {
        pass: &'static str,
        error: PlanError,
    },
    #[error("pass {pass}: {source}")]
    Mlir {
        pass: &'static str,
        source: MlirError,
    },
}

impl PassError {
    /// Where in the source the error is, when the op that caused it has a file location.
    pub fn at(&self) -> Option<&SourceRange> {
        match self {
            PassError::Choice { error, .. } => error.at.as_ref(),
            _ => None,
        }
    }
}

/// One transformation of a module. A pass may rewrite in place or build a new module.
pub trait Pass {
    /// The pass's name in `--print-ir-after-all`, in `--passes` and in errors, e.g. `ring-select`.
    fn name(&self) -> &'static str;
    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError>;
}

/// The options of one pass as written in a pipeline: `name{key=value key=value}`.
pub type PassOptions = BTreeMap<String, String>;

/// A registered pass: its name, what its options are, and how to build it from them.
pub struct PassInfo {
    pub name: &'static str,
    pub options: &'static str,
    pub build: fn(&PassOptions) -> Result<Box<dyn Pass>, String>,
}

/// Every pass `irisc opt --passes` can run, in pipeline order.
pub const REGISTRY: [PassInfo; 6] = [
    PassInfo {
        name: variant_select::NAME,
        options:
            "sharing=rep3|fp|gr2|gr4 variant=plain-mask|mpc-lift|const-lift|no-lift precision=M protocol=rep3|beaver|fss2 malicious=M msb-input=additive|replicated",
        build: |o| Ok(Box::new(variant_select::VariantSelect(plan_options(o)?))),
    },
    PassInfo {
        name: ring_select::NAME,
        options: "precision=M",
        build: |o| {
            let options = plan_options(o)?;
            if options.sharing.is_some()
                || options.variant.is_some()
                || options.protocol.is_some()
                || options.malicious.is_some()
                || options.msb_input.is_some()
            {
                return Err(
                    "ring-select takes only `precision` (sharing, variant and protocol are \
                            variant-select's)"
                        .into(),
                );
            }
            Ok(Box::new(ring_select::RingSelect {
                precision_bits: options.precision_bits,
            }))
        },
    },
    PassInfo {
        name: irs_to_mpc::NAME,
        options: "",
        build: |o| match o.keys().next() {
            Some(k) => Err(format!("irs-to-mpc has no option `{k}`")),
            None => Ok(Box::new(irs_to_mpc::IrsToMpc)),
        },
    },
    PassInfo {
        name: mpc_tile::NAME,
        options: "query-batch=N record-chunk=M",
        build: |o| {
            let spelled: Vec<String> = o.iter().map(|(k, v)| format!("{k}={v}")).collect();
            Ok(Box::new(mpc_tile::MpcTile::from_options(
                &spelled.join(" "),
            )?))
        },
    },
    PassInfo {
        name: kernel_tile::NAME,
        options: "",
        build: |o| match o.keys().next() {
            Some(k) => Err(format!("kernel-tile has no option `{k}`")),
            None => Ok(Box::new(kernel_tile::KernelTilePass)),
        },
    },
    PassInfo {
        name: threshold_placement::NAME,
        options: "placement=record_thirds|component0",
        build: |o| {
            Ok(Box::new(
                threshold_placement::ThresholdPlacementPass::from_options(o)?,
            ))
        },
    },
];

/// [`PlanOptions`] from `sharing=`, `variant=`, `precision=`, `protocol=`, `malicious=`.
fn plan_options(o: &PassOptions) -> Result<PlanOptions, String> {
    use irisc_runtime::vocab::{MsbInput, Protocol, Sharing, Variant};
    let mut options = PlanOptions::default();
    for (k, v) in o {
        match k.as_str() {
            "sharing" => {
                options.sharing =
                    Some(Sharing::parse(v).ok_or_else(|| {
                        format!("unknown sharing `{v}` (one of rep3, fp, gr2, gr4)")
                    })?)
            }
            "variant" => {
                options.variant = Some(Variant::parse(v).ok_or_else(|| {
                    format!(
                        "unknown variant `{v}` (one of plain-mask, mpc-lift, const-lift, no-lift)"
                    )
                })?)
            }
            "protocol" => {
                options.protocol =
                    Some(Protocol::parse(v).ok_or_else(|| {
                        format!("unknown protocol `{v}` (one of rep3, beaver, fss2)")
                    })?)
            }
            "malicious" => {
                options.malicious = Some(
                    v.parse()
                        .map_err(|_| format!("malicious `{v}` is not a number of instances"))?,
                )
            }
            "msb-input" => {
                options.msb_input = Some(MsbInput::parse(v).ok_or_else(|| {
                    format!("unknown msb input `{v}` (one of additive, replicated)")
                })?)
            }
            "precision" => {
                options.precision_bits = Some(
                    v.parse()
                        .map_err(|_| format!("precision `{v}` is not a number of bits"))?,
                )
            }
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    Ok(options)
}

/// Parses `a,b{k=v k=v},c` into passes, or says what is wrong (an unknown pass lists the known
/// ones).
pub fn parse_pipeline(text: &str) -> Result<PassManager, String> {
    let mut pm = PassManager::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let end = rest.find([',', '{']).unwrap_or(rest.len());
        let name = rest[..end].trim();
        rest = &rest[end..];
        let mut options = PassOptions::new();
        if let Some(after) = rest.strip_prefix('{') {
            let close = after
                .find('}')
                .ok_or_else(|| format!("the options of `{name}` have no closing `}}`"))?;
            for kv in after[..close].split_whitespace() {
                let (k, v) = kv
                    .split_once('=')
                    .ok_or_else(|| format!("option `{kv}` of `{name}` is not key=value"))?;
                options.insert(k.to_string(), v.to_string());
            }
            rest = &after[close + 1..];
        }
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix(',') {
            rest = after.trim_start();
        } else if !rest.is_empty() {
            return Err(format!("expected `,` after `{name}`, found `{rest}`"));
        }
        let info = REGISTRY.iter().find(|p| p.name == name).ok_or_else(|| {
            let known: Vec<_> = REGISTRY.iter().map(|p| p.name).collect();
            format!(
                "unknown pass `{name}`; the passes are: {}",
                known.join(", ")
            )
        })?;
        let pass = (info.build)(&options).map_err(|e| format!("{name}: {e}"))?;
        pm.passes.push(pass);
    }
    Ok(pm)
}

/// Calls `f` on every comparison op of `module` (op order, the order of
/// [`crate::analysis::sites::ComparisonSites::of`]) with its index in that order.
pub(crate) fn for_each_comparison_mut<'c>(
    module: &Module<'c>,
    mut f: impl FnMut(usize, &mut OperationRefMut<'c, '_>) -> Result<(), PassError>,
) -> Result<(), PassError> {
    let mut index = 0;
    let mut func = module.body().first_operation();
    while let Some(fop) = func {
        for region in fop.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                let mut cur = b.first_operation_mut();
                while let Some(mut op) = cur {
                    if COMPARISONS.contains(&op_name(&op).as_str()) {
                        f(index, &mut op)?;
                        index += 1;
                    }
                    cur = op.next_in_block_mut();
                }
                block = b.next_in_region();
            }
        }
        func = fop.next_in_block();
    }
    Ok(())
}

/// Called after each pass with the pass name and the module it produced.
pub type IrPrinter<'p> = dyn FnMut(&str, &str) + 'p;

/// Runs passes in order, verifying after each and optionally printing the IR after each.
#[derive(Default)]
pub struct PassManager {
    passes: Vec<Box<dyn Pass>>,
}

impl PassManager {
    pub fn new() -> PassManager {
        PassManager::default()
    }

    /// The choice passes with what the user forces: `variant-select`, then `ring-select`.
    pub fn choice_pipeline(options: &PlanOptions) -> PassManager {
        let mut pm = PassManager::new();
        pm.add(variant_select::VariantSelect(*options));
        pm.add(ring_select::RingSelect {
            precision_bits: options.precision_bits,
        });
        pm
    }

    /// The standard pipeline from the `irs` module that `lower` produces to the tiled `mpc`
    /// module: the choice passes, then [`PassManager::schedule_pipeline`].
    pub fn irs_to_mpc_pipeline(options: &PlanOptions) -> PassManager {
        let mut pm = PassManager::choice_pipeline(options);
        pm.passes
            .extend(PassManager::schedule_pipeline_for(options).passes);
        pm
    }

    /// [`PassManager::schedule_pipeline`] with `mpc-tile{batch-chunks=0}` where `options` ask
    /// for per-query chunks.
    /// Under `fss2` only `irs-to-mpc`: the servers' schedule is Protocol 2's, with nothing to
    /// tile.
    pub fn schedule_pipeline_for(options: &PlanOptions) -> PassManager {
        let mut pm = PassManager::new();
        pm.add(irs_to_mpc::IrsToMpc);
        if options.protocol == Some(irisc_runtime::vocab::Protocol::Fss2) {
            return pm;
        }
        let tile = mpc_tile::MpcTile::default();
        pm.add(mpc_tile::MpcTile {
            batch_chunks: !options.per_query_chunks,
            query_batch: options.query_batch.unwrap_or(tile.query_batch),
            ..tile
        });
        pm.add(kernel_tile::KernelTilePass);
        pm.add(threshold_placement::ThresholdPlacementPass {
            placement: options
                .threshold_placement
                .unwrap_or(irisc_runtime::vocab::ThresholdPlacement::RecordThirds),
        });
        pm
    }

    /// From an `irs` module with its choices to the tiled `mpc` module: `irs-to-mpc`, then
    /// `mpc-tile` with its default options, then `kernel-tile` and `threshold-placement`.
    pub fn schedule_pipeline() -> PassManager {
        PassManager::schedule_pipeline_for(&PlanOptions::default())
    }

    pub fn add(&mut self, pass: impl Pass + 'static) -> &mut PassManager {
        self.passes.push(Box::new(pass));
        self
    }

    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs every pass on `module`. `print` (for `--print-ir-after-all`) sees each result.
    pub fn run<'c>(
        &self,
        cx: &'c Compiler,
        mut module: Module<'c>,
        mut print: Option<&mut IrPrinter<'_>>,
    ) -> Result<Module<'c>, PassError> {
        for pass in &self.passes {
            module = pass.run(cx, module)?;
            cx.verify(&module, &format!("the module after pass {}", pass.name()))
                .map_err(|source| PassError::Mlir {
                    pass: pass.name(),
                    source,
                })?;
            if let Some(print) = print.as_mut() {
                print(pass.name(), &module.as_operation().to_string());
            }
        }
        Ok(module)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipelines_parse_with_options_and_reject_unknown_passes() {
        let pm = parse_pipeline(
            "variant-select{sharing=gr2 variant=mpc-lift}, ring-select{precision=12},irs-to-mpc",
        )
        .unwrap();
        assert_eq!(
            pm.pass_names(),
            ["variant-select", "ring-select", "irs-to-mpc"]
        );
        let e = parse_pipeline("ring-select,frobnicate").err().unwrap();
        assert!(e.contains("unknown pass `frobnicate`"), "{e}");
        assert!(e.contains("variant-select, ring-select, irs-to-mpc"), "{e}");
        let e = parse_pipeline("variant-select{sharing=gr3}").err().unwrap();
        assert!(e.contains("unknown sharing `gr3`"), "{e}");
        let e = parse_pipeline("ring-select{variant=no-lift}")
            .err()
            .unwrap();
        assert!(e.contains("only `precision`"), "{e}");
        let e = parse_pipeline("irs-to-mpc{x=1}").err().unwrap();
        assert!(e.contains("no option `x`"), "{e}");
        let e = parse_pipeline("ring-select{precision=16").err().unwrap();
        assert!(e.contains("closing"), "{e}");
    }
}
