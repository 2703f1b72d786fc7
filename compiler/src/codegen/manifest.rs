//! The manifest embedded in every executable (`irisc_runtime::manifest::Manifest`), built from
//! the program and the ring the `mpc` module loads its shares in.

use super::cpu::CodegenError;
use crate::mlir::{op_name, type_param};
use crate::sema::{InputRole, MaskKind, Program};
use irisc_runtime::manifest::{
    self, InputKind, InputMask, InputSharing, Manifest, ManifestInput, ABI_VERSION,
};
use melior::ir::{block::BlockLike, operation::OperationLike, Module, RegionLike, ValueLike};

/// Hex BLAKE3 of the program source.
pub fn fingerprint(source: &str) -> String {
    blake3::hash(source.as_bytes()).to_hex().to_string()
}

/// The manifest of `program` compiled to `mpc`.
///
/// Every input is an iris input shared rep3 over the ring the `mpc` module loads its shares in
/// (issue-2 programs have one). The lead's sema v2 fills the other kinds and sharings.
pub fn build(
    program: &Program,
    source: &str,
    explain: serde_json::Value,
    mpc: &Module<'_>,
) -> Result<Manifest, CodegenError> {
    if program.inputs.is_empty() {
        return Err(CodegenError("the program has no inputs".into()));
    }
    let ring_bits = share_ring(mpc)?;
    let inputs = program
        .inputs
        .iter()
        .map(|i| ManifestInput {
            name: i.name.clone(),
            role: match i.role {
                InputRole::Gallery => manifest::InputRole::Gallery,
                InputRole::Query { .. } => manifest::InputRole::Query,
            },
            owner: match i.role {
                InputRole::Gallery => None,
                InputRole::Query { owner } => u8::try_from(owner).ok(),
            },
            kind: InputKind::Iris,
            elements: i.code_bits,
            mask: match i.mask {
                MaskKind::Public => InputMask::Public,
                MaskKind::Secret => InputMask::Secret,
            },
            sharing: InputSharing::Rep3,
            ring_bits,
            scale_bits: 0,
        })
        .collect();
    Ok(Manifest {
        abi: ABI_VERSION,
        program: program.name.clone(),
        fingerprint: fingerprint(source),
        inputs,
        zips: Vec::new(),
        parties: program.parties.clone(),
        explain,
    })
}

/// The ring of the loaded shares: the type of the first `mpc.load_gallery` or `mpc.load_query`.
fn share_ring(mpc: &Module<'_>) -> Result<u32, CodegenError> {
    let mut f = mpc.body().first_operation();
    while let Some(func) = f {
        for region in func.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                let mut op = b.first_operation();
                while let Some(o) = op {
                    if matches!(op_name(&o).as_str(), "mpc.load_gallery" | "mpc.load_query") {
                        let t = o
                            .result(0)
                            .map_err(|e| CodegenError(e.to_string()))?
                            .r#type();
                        return type_param(t)
                            .and_then(|k| u32::try_from(k).ok())
                            .ok_or_else(|| CodegenError(format!("cannot read the ring of `{t}`")));
                    }
                    op = o.next_in_block();
                }
                block = b.next_in_region();
            }
        }
        f = func.next_in_block();
    }
    Err(CodegenError("the mpc module loads no input".into()))
}
