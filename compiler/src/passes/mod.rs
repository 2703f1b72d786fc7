//! Passes over the `irs` and `mpc` modules, one module per pass, and the driver that runs them.
//!
//! - [`ring_select`]: annotates every comparison with the rings Lemma 1 / Lemma 2 / the cosine
//!   range analysis prove sufficient, and `(a, b)`;
//! - [`variant_select`]: annotates every comparison with its protocol variant and sharing;
//! - [`irs_to_mpc`]: lowers `irs` to the `mpc` ops the parties execute, shares typed by ring
//!   (secret conditionals become multiplexers there);
//! - [`mpc_tile`]: rewrites `@query` into the tiled schedule (stages, batch dot products, gallery
//!   views, appends of crossings) with its options recorded in the IR.
//!
//! Every pass is followed by verification against the IRDL dialects, so a pass that produces
//! ill-formed IR is caught at the pass that did it.

mod annotate;
pub mod choices;
pub mod irs_to_mpc;
pub mod mpc_tile;
pub mod ring_select;
pub mod variant_select;

pub use choices::{Choices, TestChoice};

use crate::mlir::{Compiler, MlirError};
use melior::ir::Module;

#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pass cannot handle this module (e.g. an unsupported feature); `pass` names it.
    #[error("pass {pass}: {message}")]
    Unsupported { pass: &'static str, message: String },
    #[error("pass {pass}: {source}")]
    Mlir {
        pass: &'static str,
        source: MlirError,
    },
}

/// One transformation of a module. A pass may rewrite in place or build a new module.
pub trait Pass {
    /// The pass's name in `--print-ir-after-all` and in errors, e.g. `ring-select`.
    fn name(&self) -> &'static str;
    fn run<'c>(&self, cx: &'c Compiler, module: Module<'c>) -> Result<Module<'c>, PassError>;
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

    /// The standard pipeline from the `irs` module that `lower` produces to the tiled `mpc`
    /// module (`mpc-tile` with its default options last).
    pub fn irs_to_mpc_pipeline(choices: Choices) -> PassManager {
        let choices = std::rc::Rc::new(choices);
        let mut pm = PassManager::new();
        pm.add(ring_select::RingSelect(choices.clone()));
        pm.add(variant_select::VariantSelect(choices));
        pm.add(irs_to_mpc::IrsToMpc);
        pm.add(mpc_tile::MpcTile::default());
        pm
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
