//! The manifest embedded in every executable (`irisc_runtime::manifest::Manifest`), built from
//! the program and the shares its `mpc` module loads.
//!
//! Each input's share file must hold the ring every use needs: the largest `!mpc.code<k>` any
//! load of it asks for (a use in a smaller ring reduces the shares locally, which is sound:
//! a sharing mod 2^k is a sharing mod 2^j for j <= k), 16 for Shamir shares, 1 for bits.

use std::collections::HashMap;

use super::artifact::CodegenError;
use crate::analysis::schedule::TileOptions;
use crate::mlir::{get_int, op_name, type_name, type_param};
use crate::sema::program::{InputType, MaskKind, Program};
use irisc_runtime::contract::InputPart;
use irisc_runtime::manifest::{BeaverManifest, Manifest, ManifestInput, ABI_VERSION};
use irisc_runtime::vocab::{InputKind, InputMask, Sharing};
use melior::ir::{block::BlockLike, operation::OperationLike, Module, RegionLike, ValueLike};

/// Hex BLAKE3 of the program source.
pub fn fingerprint(source: &str) -> String {
    blake3::hash(source.as_bytes()).to_hex().to_string()
}

/// What the loads of one input ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputShares {
    pub sharing: Sharing,
    pub ring_bits: u32,
    /// Some load reads the owner-dealt conjugates (`part` = [`InputPart::Conjugate`]).
    pub conjugate: bool,
}

/// The manifest of `program` compiled to `mpc`.
pub fn build(
    program: &Program,
    source: &str,
    explain: serde_json::Value,
    mpc: &Module<'_>,
) -> Result<Manifest, CodegenError> {
    let shares = input_shares(mpc)?;
    let inputs = program
        .inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let used = shares.get(&i).copied();
            let (kind, elements, mask, scale_bits) = match input.ty {
                InputType::Iris { code_bits, mask } => (
                    InputKind::Iris,
                    code_bits,
                    match mask {
                        MaskKind::Public => InputMask::Public,
                        MaskKind::Secret => InputMask::Secret,
                    },
                    0,
                ),
                InputType::Embedding { dim, scale_bits } => {
                    (InputKind::Embedding, dim, InputMask::None, scale_bits)
                }
                InputType::Bit => (InputKind::Bit, 1, InputMask::None, 0),
            };
            let default_ring = if kind == InputKind::Bit { 1 } else { 16 };
            ManifestInput {
                name: input.name.clone(),
                role: input.role,
                owner: input.owner.map(|owner| owner as u8),
                kind,
                elements,
                mask,
                sharing: used.map_or(Sharing::Rep3, |u| u.sharing),
                ring_bits: used.map_or(default_ring, |u| u.ring_bits),
                scale_bits,
                conjugate: used.is_some_and(|u| u.conjugate),
            }
        })
        .collect();
    Ok(Manifest {
        abi: ABI_VERSION,
        program: program.name.clone(),
        fingerprint: fingerprint(source),
        inputs,
        zips: program
            .zips()
            .into_iter()
            .map(|z| {
                z.into_iter()
                    .map(|i| program.inputs[i].name.clone())
                    .collect()
            })
            .collect(),
        parties: program.parties.clone(),
        explain,
        record_chunk: TileOptions::of(mpc)
            .map_or(0, |t| usize::try_from(t.record_chunk).unwrap_or(usize::MAX)),
        beaver: beaver_manifest(mpc)?,
    })
}

/// What the party's preprocessing store must hold, from the module's `mpc.beaver_eval` (the
/// reveals' circuit under `beaver`); `None` for programs without one.
pub fn beaver_manifest(mpc: &Module<'_>) -> Result<Option<BeaverManifest>, CodegenError> {
    use irisc_runtime::beaver::party::Evaluation;
    use irisc_runtime::beaver::schedule::Schedule;
    let Some(b) = beaver_circuit(mpc)? else {
        return Ok(None);
    };
    let c = &b.circuit;
    let s = Schedule::new(c);
    let binding = Evaluation::MaskedTriples.binding(c);
    Ok(Some(BeaverManifest {
        binding: binding.iter().map(|b| format!("{b:02x}")).collect(),
        triples: s.triples,
        mask_rows: s.conds.iter().map(|k| k.mask_rows()).collect(),
        inputs: c.num_inputs(),
        outputs: c.num_outputs(),
        lanes_input: b.lanes_input,
    }))
}

/// The circuit of the module's `mpc.beaver_eval` and the input of its lanes; `None` without one.
pub fn beaver_circuit(
    mpc: &Module<'_>,
) -> Result<Option<crate::analysis::plan::BeaverCircuit>, CodegenError> {
    use irisc_runtime::beaver::circuit::Circuit;
    let mut found: Vec<(String, i64)> = Vec::new();
    let mut f = mpc.body().first_operation();
    while let Some(func) = f {
        for region in func.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                let mut op = b.first_operation();
                while let Some(o) = op {
                    if op_name(&o) == "mpc.beaver_eval" {
                        let bad = |e| CodegenError(format!("mpc.beaver_eval: {e}"));
                        found.push((
                            crate::mlir::get_str(&o, "circuit").map_err(bad)?,
                            get_int(&o, "lanes_input").map_err(bad)?,
                        ));
                    }
                    op = o.next_in_block();
                }
                block = b.next_in_region();
            }
        }
        f = func.next_in_block();
    }
    let (hex, lanes_input) = match found.as_slice() {
        [] => return Ok(None),
        [(hex, input)] => (hex, *input),
        _ => {
            return Err(CodegenError(
                "more than one `mpc.beaver_eval`: a program has one reveals' circuit".into(),
            ))
        }
    };
    let circuit =
        Circuit::from_hex(hex).map_err(|e| CodegenError(format!("mpc.beaver_eval: {e}")))?;
    Ok(Some(crate::analysis::plan::BeaverCircuit {
        circuit,
        lanes_input: usize::try_from(lanes_input)
            .map_err(|_| CodegenError("mpc.beaver_eval: lanes_input".into()))?,
    }))
}

/// For every input some `mpc.load_*` reads: its sharing and the largest ring asked for.
pub fn input_shares(mpc: &Module<'_>) -> Result<HashMap<usize, InputShares>, CodegenError> {
    let mut out: HashMap<usize, InputShares> = HashMap::new();
    let mut f = mpc.body().first_operation();
    while let Some(func) = f {
        for region in func.regions() {
            let mut block = region.first_block();
            while let Some(b) = block {
                let mut op = b.first_operation();
                while let Some(o) = op {
                    op = o.next_in_block();
                    if !op_name(&o).starts_with("mpc.load_") {
                        continue;
                    }
                    let input = get_int(&o, "input").map_err(CodegenError)? as usize;
                    let t = o
                        .result(0)
                        .map_err(|e| CodegenError(e.to_string()))?
                        .r#type();
                    let text = t.to_string();
                    let this = match type_name(t).as_str() {
                        "mpc.code" => InputShares {
                            sharing: Sharing::Rep3,
                            ring_bits: type_param(t)
                                .and_then(|k| u32::try_from(k).ok())
                                .ok_or_else(|| {
                                    CodegenError(format!("cannot read the ring of `{t}`"))
                                })?,
                            conjugate: false,
                        },
                        "mpc.shamir" => InputShares {
                            sharing: ["fp", "gr2", "gr4"]
                                .into_iter()
                                .find(|s| text.contains(&format!("\"{s}\"")))
                                .and_then(Sharing::parse)
                                .ok_or_else(|| CodegenError(format!("unknown sharing in `{t}`")))?,
                            ring_bits: 16,
                            conjugate: false,
                        },
                        _ => InputShares {
                            sharing: Sharing::Rep3,
                            ring_bits: 1,
                            conjugate: false,
                        },
                    };
                    let conjugate = get_int(&o, "part").ok() == Some(InputPart::Conjugate as i64);
                    let e = out.entry(input).or_insert(this);
                    e.conjugate |= conjugate;
                    if e.sharing != this.sharing {
                        return Err(CodegenError(format!(
                            "input {input} is loaded in two sharings ({} and {}); one share file holds one",
                            e.sharing, this.sharing
                        )));
                    }
                    e.ring_bits = e.ring_bits.max(this.ring_bits);
                }
                block = b.next_in_region();
            }
        }
        f = func.next_in_block();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::lower_program;
    use crate::mlir::Compiler;
    use crate::passes::{
        irs_to_mpc::IrsToMpc, mpc_tile::MpcTile, ring_select::RingSelect,
        variant_select::VariantSelect, PassManager,
    };
    use crate::testing::{planned_rep3, DEDUP};

    /// The record chunk `mpc-tile` was run with is the parties' default `--record-chunk`.
    #[test]
    fn the_record_chunk_option_reaches_the_manifest() {
        let cx = Compiler::new().unwrap();
        let (program, options) = planned_rep3(DEDUP);
        for chunk in [0, 5, 1000] {
            let irs = lower_program(&cx, &program, DEDUP).unwrap();
            let mut pm = PassManager::new();
            pm.add(VariantSelect(options))
                .add(RingSelect {
                    precision_bits: options.precision_bits,
                })
                .add(IrsToMpc)
                .add(MpcTile::from_options(&format!("record-chunk={chunk}")).unwrap());
            let mpc = pm.run(&cx, irs, None).unwrap();
            let m = build(&program, DEDUP, serde_json::Value::Null, &mpc).unwrap();
            assert_eq!(m.record_chunk, chunk);
        }
    }
}
