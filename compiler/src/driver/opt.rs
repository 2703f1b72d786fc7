//! `irisc opt IN.mlir --passes=a,b{k=v}`: runs any pass or pipeline on `.mlir` text and prints
//! the result, like `mlir-opt` (HEIR's `heir-opt`). The module is parsed in the compiler's
//! context (the `irs` and `mpc` dialects loaded, so it is verified against them), every pass is
//! followed by verification, and `--print-ir-after-all` prints the module after each pass on
//! stderr. Errors: an unknown pass (the known ones are listed), malformed MLIR (MLIR's
//! diagnostics), a pass's diagnostic (at the source location of the op it concerns).

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Context, Result};
use clap::Args;

use crate::mlir::Compiler;
use crate::passes::{parse_pipeline, PassError};

#[derive(Debug, Clone, Args)]
pub struct OptArgs {
    /// The module to transform (`.mlir` text); `-` reads stdin.
    pub input: PathBuf,
    /// The passes to run, in order, comma-separated, with options in braces:
    /// `variant-select{sharing=gr2 variant=mpc-lift precision=16},ring-select,irs-to-mpc`.
    /// Empty: only parse and verify.
    #[arg(long, default_value = "")]
    pub passes: String,
    /// Print the module after each pass on stderr.
    #[arg(long)]
    pub print_ir_after_all: bool,
}

pub fn run(args: OptArgs) -> Result<ExitCode> {
    let (name, text) = if args.input.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("cannot read stdin")?;
        ("<stdin>".to_string(), text)
    } else {
        let text = std::fs::read_to_string(&args.input)
            .with_context(|| format!("cannot read {}", args.input.display()))?;
        (args.input.display().to_string(), text)
    };
    let pm = parse_pipeline(&args.passes).map_err(|e| anyhow!("--passes: {e}"))?;
    let cx = Compiler::new().map_err(|e| anyhow!("{e}"))?;
    // MLIR names the parsed text `-` in its diagnostics; name the input instead.
    let module = cx.parse_module(&text).map_err(|e| {
        anyhow!(
            "{name}: {}",
            e.to_string()
                .replace("loc(\"-\":", &format!("loc(\"{name}\":"))
        )
    })?;
    let mut printer = |pass: &str, ir: &str| {
        eprintln!("// -----// IR Dump After {pass} //----- //\n{ir}");
    };
    let printer: Option<&mut crate::passes::IrPrinter> = if args.print_ir_after_all {
        Some(&mut printer)
    } else {
        None
    };
    let out = pm
        .run(&cx, module, printer)
        .map_err(|e| anyhow!(describe(&name, e)))?;
    print!("{}", out.as_operation());
    Ok(ExitCode::SUCCESS)
}

/// A pass's error, at the source range of its op when it has one:
/// `error: <message>` / `  --> file:line:col` / `  = hint: <hint>`.
fn describe(input: &str, e: PassError) -> String {
    match e {
        PassError::Choice { pass, error } => {
            // Ops without a source location carry their position in the parsed text, which
            // MLIR names `-`.
            let at = match &error.at {
                Some(at) if at.file == "-" => format!("\n  --> {input}:{}:{}", at.line, at.col),
                Some(at) => format!("\n  --> {at}"),
                None => String::new(),
            };
            format!(
                "error: pass {pass}: {}{at}\n  = hint: {}",
                error.message, error.hint
            )
        }
        e => format!("{input}: {e}"),
    }
}
