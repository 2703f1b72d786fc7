//! The manifest of an `fss2` program's role executables
//! ([`irisc_runtime::fss2::entry::Fss2Manifest`]), read from its `mpc` module: the roles from
//! the module's attributes, the dimension from `mpc.ss_ip`, the scale from `mpc.masked_input`,
//! the gates and the threshold from `mpc.ic_gate` and `mpc.condeval`, the label from
//! `mpc.output`. What `irisc opt` changes in the IR is what the executables run (and the runtime
//! refuses gates that are not its reading of the threshold).

use super::artifact::CodegenError;
use super::manifest::fingerprint;
use crate::mlir::{get_int, get_str, op_name};
use crate::sema::program::Program;
use irisc_runtime::fss2::entry::{Fss2Manifest, GateSpec, FSS2_ABI};
use melior::ir::{
    operation::{OperationLike, OperationRef, WalkOrder, WalkResult},
    Module,
};

fn err(m: impl Into<String>) -> CodegenError {
    CodegenError(m.into())
}

/// The one op named `name` in `mpc` (an `fss2` module decides one test).
fn the_op<'c, 'm>(mpc: &'m Module<'c>, name: &str) -> Result<OperationRef<'c, 'm>, CodegenError> {
    let mut found: Vec<OperationRef<'c, 'm>> = Vec::new();
    mpc.as_operation().walk(WalkOrder::PreOrder, |op| {
        if op_name(&op) == name {
            // SAFETY: the op lives as long as the module borrowed for 'm.
            found.push(unsafe { OperationRef::from_raw(op.to_raw()) });
        }
        WalkResult::Advance
    });
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(err(format!("the fss2 module has no `{name}`"))),
        n => Err(err(format!(
            "the fss2 module has {n} `{name}` ops; the family decides one cosine test"
        ))),
    }
}

fn int(op: &OperationRef<'_, '_>, name: &str) -> Result<i64, CodegenError> {
    get_int(op, name).map_err(|e| err(format!("`{}`: {e}", op_name(op))))
}

fn string(op: &OperationRef<'_, '_>, name: &str) -> Result<String, CodegenError> {
    get_str(op, name).map_err(|e| err(format!("`{}`: {e}", op_name(op))))
}

fn non_negative(v: i64, what: &str) -> Result<u64, CodegenError> {
    u64::try_from(v).map_err(|_| err(format!("{what} = {v} is negative")))
}

/// The manifest of `program` compiled to the `fss2` module `mpc`.
pub fn build(
    program: &Program,
    source: &str,
    explain: serde_json::Value,
    mpc: &Module<'_>,
) -> Result<Fss2Manifest, CodegenError> {
    let module = mpc.as_operation();
    let module_int =
        |name: &str| get_int(&module, name).map_err(|e| err(format!("the fss2 module: {e}")));
    let client = non_negative(module_int("mpc.client")?, "mpc.client")? as usize;
    let servers_attr = module
        .attribute("mpc.servers")
        .map_err(|_| err("the fss2 module has no `mpc.servers`"))?
        .to_string();
    let servers: Vec<usize> = servers_attr
        .trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .map(|s| s.split(':').next().unwrap_or("").trim().parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| {
            err(format!(
                "`mpc.servers = {servers_attr}` is not two party indices"
            ))
        })?;
    let [s0, s1] = servers[..] else {
        return Err(err(format!(
            "`mpc.servers = {servers_attr}` is not two parties"
        )));
    };
    let input = the_op(mpc, "mpc.masked_input")?;
    let sign = the_op(mpc, "mpc.ic_gate")?;
    let cond = the_op(mpc, "mpc.condeval")?;
    let output = the_op(mpc, "mpc.output")?;
    let gallery = the_op(mpc, "mpc.load_gallery")?;
    let malicious = get_int(&module, "mpc.malicious")
        .ok()
        .map(|m| u32::try_from(m).map_err(|_| err(format!("mpc.malicious = {m}"))))
        .transpose()?;
    Ok(Fss2Manifest {
        abi: FSS2_ABI,
        protocol: "fss2".into(),
        program: program.name.clone(),
        fingerprint: fingerprint(source),
        parties: program.parties.clone(),
        servers: [s0, s1],
        client,
        query: string(&input, "name")?,
        gallery: string(&gallery, "name")?,
        label: string(&output, "label")?,
        dim: ss_ip_dim(mpc)? as usize,
        scale_bits: non_negative(int(&input, "scale_bits")?, "scale_bits")? as u32,
        tau_negative: int(&cond, "negative")? != 0,
        tau_num: non_negative(int(&cond, "num")?, "num")?,
        tau_den: non_negative(int(&cond, "den")?, "den")?,
        strict: int(&cond, "strict")? != 0,
        sign_gate: GateSpec {
            interval: string(&sign, "interval")?,
            negate: int(&sign, "negate")? != 0,
            conj: None,
        },
        magnitude_gate: GateSpec {
            interval: string(&cond, "interval")?,
            negate: int(&cond, "negate")? != 0,
            conj: Some(string(&cond, "conj")?),
        },
        ring_bits: non_negative(module_int("mpc.ring_bits")?, "mpc.ring_bits")? as u32,
        truncation_bits: non_negative(module_int("mpc.truncation_bits")?, "mpc.truncation_bits")?
            as u32,
        malicious,
        explain,
    })
}

/// The dimension of the module's SS.IP ops (the generated kernel's trip count).
pub fn ss_ip_dim(mpc: &Module<'_>) -> Result<u64, CodegenError> {
    non_negative(int(&mpc_first(mpc, "mpc.ss_ip")?, "dim")?, "dim")
}

/// The first op named `name` (SS.IP appears three times, with one dimension).
fn mpc_first<'c, 'm>(
    mpc: &'m Module<'c>,
    name: &str,
) -> Result<OperationRef<'c, 'm>, CodegenError> {
    let mut found: Option<OperationRef<'c, 'm>> = None;
    let mut dims = std::collections::BTreeSet::new();
    mpc.as_operation().walk(WalkOrder::PreOrder, |op| {
        if op_name(&op) == name {
            dims.insert(get_int(&op, "dim").unwrap_or(-1));
            if found.is_none() {
                // SAFETY: the op lives as long as the module borrowed for 'm.
                found = Some(unsafe { OperationRef::from_raw(op.to_raw()) });
            }
        }
        WalkResult::Advance
    });
    if dims.len() > 1 {
        return Err(err(format!(
            "the `{name}` ops disagree on the dimension: {dims:?}"
        )));
    }
    found.ok_or_else(|| err(format!("the fss2 module has no `{name}`")))
}
