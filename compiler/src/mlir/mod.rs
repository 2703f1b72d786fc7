//! The MLIR context of one compilation, with the project's dialects loaded.
//!
//! The `irs` and `mpc` dialects are defined in IRDL (`dialects/*.irdl.mlir`, embedded in the
//! binary) and registered at start-up, so every module the compiler builds is verified against
//! them. Unregistered dialects stay disallowed: an op or type the IRDL files do not define is an
//! error, not silently accepted.

mod attrs;
mod choices;
mod source;

pub use attrs::*;
pub use choices::ChoiceAttr;
pub use source::SourceRange;

use melior::{
    dialect::DialectHandle,
    ir::{operation::OperationLike, Location, Module},
    utility::load_irdl_dialects,
    Context,
};
use std::{cell::RefCell, fmt, rc::Rc};

/// The IRDL source of the `irs` dialect (what the user wrote).
pub const IRS_IRDL: &str = include_str!("../../../dialects/irs.irdl.mlir");
/// The IRDL source of the `mpc` dialect (what the parties compute).
pub const MPC_IRDL: &str = include_str!("../../../dialects/mpc.irdl.mlir");

/// An MLIR failure, with the diagnostics MLIR reported while it happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MlirError {
    pub message: String,
    pub diagnostics: Vec<String>,
}

impl fmt::Display for MlirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)?;
        for d in &self.diagnostics {
            write!(f, "\n  {d}")?;
        }
        Ok(())
    }
}

impl std::error::Error for MlirError {}

/// One compilation's MLIR state: the context with `func`, `irs` and `mpc` loaded, and the
/// diagnostics MLIR emitted (collected instead of printed, so errors carry them).
pub struct Compiler {
    context: Context,
    diagnostics: Rc<RefCell<Vec<String>>>,
}

impl Compiler {
    /// Creates the context and loads the dialects. Fails only if the embedded IRDL is invalid.
    pub fn new() -> Result<Compiler, MlirError> {
        let context = Context::new();
        context.set_allow_unregistered_dialects(false);
        DialectHandle::func().load_dialect(&context);
        // SAFETY: the handle is a static registration record of MLIR's C API.
        unsafe { DialectHandle::from_raw(mlir_sys::mlirGetDialectHandle__irdl__()) }
            .load_dialect(&context);
        let diagnostics = Rc::new(RefCell::new(Vec::new()));
        let sink = diagnostics.clone();
        context.attach_diagnostic_handler(move |d| {
            sink.borrow_mut().push(format!("{}: {}", d.location(), d));
            true
        });
        let cx = Compiler {
            context,
            diagnostics,
        };
        for (name, src) in [("irs", IRS_IRDL), ("mpc", MPC_IRDL)] {
            let module = Module::parse(&cx.context, src).ok_or_else(|| {
                cx.error(format!(
                    "the IRDL definition of dialect `{name}` does not parse"
                ))
            })?;
            if !load_irdl_dialects(&module) {
                return Err(cx.error(format!(
                    "the IRDL definition of dialect `{name}` cannot be loaded"
                )));
            }
        }
        Ok(cx)
    }

    pub fn context(&self) -> &Context {
        &self.context
    }

    pub fn unknown_location(&self) -> Location<'_> {
        Location::unknown(&self.context)
    }

    /// Parses a module in textual form and verifies it against the loaded dialects.
    pub fn parse_module(&self, source: &str) -> Result<Module<'_>, MlirError> {
        self.take_diagnostics();
        let module = Module::parse(&self.context, source)
            .ok_or_else(|| self.error("the module does not parse".into()))?;
        self.verify(&module, "the parsed module")?;
        Ok(module)
    }

    /// Verifies `module`; `what` names it in the error (e.g. "the module after pass ring-select").
    pub fn verify(&self, module: &Module<'_>, what: &str) -> Result<(), MlirError> {
        self.take_diagnostics();
        if module.as_operation().verify() {
            Ok(())
        } else {
            Err(self.error(format!("{what} does not verify")))
        }
    }

    /// An error carrying (and clearing) the diagnostics collected so far.
    pub fn error(&self, message: String) -> MlirError {
        MlirError {
            message,
            diagnostics: self.take_diagnostics(),
        }
    }

    fn take_diagnostics(&self) -> Vec<String> {
        std::mem::take(&mut *self.diagnostics.borrow_mut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
      func.func @query() {
        %0 = "irs.records"() {name = "db", input = 0 : i64, source = "gallery"} : () -> !irs.codes<64>
        %1 = "irs.query_value"() {name = "q", input = 1 : i64, kind = "iris", owner = 0 : i64} : () -> !irs.code<64>
        %2 = "irs.rotate"(%1) {lo = 0 : i64, hi = 0 : i64} : (!irs.code<64>) -> !irs.codes<64>
        %3 = "irs.fhd_lt"(%2, %0) {ratio_num = 1 : i64, ratio_den = 3 : i64, mask = "public", test = 0 : i64} : (!irs.codes<64>, !irs.codes<64>) -> !irs.bits
        return
      }"#;

    #[test]
    fn dialects_load_and_verify_valid_ir() {
        let cx = Compiler::new().unwrap();
        cx.parse_module(EXAMPLE).unwrap();
    }

    #[test]
    fn irdl_constraints_are_enforced() {
        let cx = Compiler::new().unwrap();
        // Code lengths of the two operands of fhd_lt must agree.
        let bad = EXAMPLE
            .replace("() -> !irs.codes<64>\n", "() -> !irs.codes<128>\n")
            .replace(
                "!irs.codes<64>, !irs.codes<64>) ->",
                "!irs.codes<64>, !irs.codes<128>) ->",
            );
        let err = cx.parse_module(&bad).unwrap_err();
        assert!(err.diagnostics.iter().any(|d| d.contains("64")), "{err}");
        // Wrong operand count.
        let bad = EXAMPLE
            .replace(r#""irs.rotate"(%1)"#, r#""irs.rotate"(%1, %1)"#)
            .replace(
                "(!irs.code<64>) -> !irs.codes<64>",
                "(!irs.code<64>, !irs.code<64>) -> !irs.codes<64>",
            );
        assert!(cx.parse_module(&bad).is_err());
        // Unknown op: unregistered dialects are not allowed.
        let bad = EXAMPLE.replace("irs.fhd_lt", "irs.fhd_gt");
        assert!(cx.parse_module(&bad).is_err());
        // Enumerated string attribute.
        let bad = EXAMPLE.replace(r#"source = "gallery"}"#, r#"source = "hidden"}"#);
        assert!(cx.parse_module(&bad).is_err());
    }
}
