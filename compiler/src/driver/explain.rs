//! `irisc explain`: what the compiler chose for a program (sharing, variant, rings and why),
//! what it costs, and what each party learns, as text or JSON
//! ([`crate::analysis::explain`] renders it).

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::analysis::explain as ex;
use crate::analysis::plan::PlanOptions;

use super::{pipeline, write_stdout};

/// Prints the explanation of `program` with `records` records per query for the totals.
pub fn explain(program: &Path, json: bool, records: u64, plan: &PlanOptions) -> Result<ExitCode> {
    let checked = pipeline::read_and_check(program)?;
    let planned = pipeline::plan(&checked, plan)?;
    if json {
        let v = ex::explain_program_json_with_source(
            &checked.program,
            &planned.plan,
            records,
            Some(&checked.source),
        );
        write_stdout(&format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    } else {
        write_stdout(&ex::explain_program_text_with_source(
            &checked.program,
            &planned.plan,
            records,
            Some(&checked.source),
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
