//! What the compiler embeds in every executable about its program, as JSON.
//!
//! The runtime checks every share file it is given against the program's input of that name
//! (role, kind, sharing, ring, elements, mask) and refuses to run on a mismatch, so a share file
//! of another program, input or ring is caught before any protocol message is sent.

use serde::{Deserialize, Serialize};

use crate::vocab::{InputKind, InputMask, InputRole, Sharing};

/// Bumped whenever the C ABI between generated code and the runtime changes.
/// 2: named inputs of any kind (`irisc_rt_load_input`), named output fields (`irisc_rt_output`
/// with records and field, `irisc_rt_emit`).
/// 3: `irisc_rt_masked_dot` and `irisc_rt_shamir_dot` take a table of kernel ISA variants
/// ([`crate::kernels::KernelTable`]) instead of one kernel.
/// 4: `irisc_rt_gallery_view` takes `with_shares` (0: a replicated view without its shares).
/// 6: `irisc_rt_gpu_attach` (the CUDA path: the program's PTX kernels, `contract::gpu`).
/// 7: the `beaver` family's entry points (`to_xor`, `xor_concat`, `beaver_eval`,
/// `beaver_open`) and the manifest's `beaver`.
pub const ABI_VERSION: u32 = 7;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Must equal [`ABI_VERSION`].
    pub abi: u32,
    /// The program's name (file stem).
    pub program: String,
    /// Hex BLAKE3 of the program source; printed in errors and accounting.
    pub fingerprint: String,
    /// Every declared input, in declaration order; `irisc_rt_load_input`'s `input` indexes this.
    pub inputs: Vec<ManifestInput>,
    /// Galleries used together in `zip(g1, g2, ...)`: each group must have equal record ids
    /// (the runtime checks before computing).
    #[serde(default)]
    pub zips: Vec<Vec<String>>,
    /// The party names, in `--party` order.
    pub parties: [String; 3],
    /// The `irisc explain --json` document of the program, for `--explain` on the executable.
    pub explain: serde_json::Value,
    /// Gallery records per chunk of the tiled scan when `--record-chunk` is not given: the
    /// `record-chunk` option of the compiler's `mpc-tile` pass (0: the whole gallery).
    #[serde(default)]
    pub record_chunk: usize,
    /// The reveals' circuit under the `beaver` family, when the program was built with
    /// `--protocol beaver`: what each party's preprocessing store must hold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beaver: Option<BeaverManifest>,
}

/// What the preprocessing store of a `beaver` program is checked against before the links open.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BeaverManifest {
    /// Hex of the store binding: the circuit's fingerprint under Masked Triples
    /// (`beaver::party::Evaluation::binding`).
    pub binding: String,
    /// Triples per lane per execution (AND gates on the longest path).
    pub triples: u64,
    /// Mask rows of every conditional.
    pub mask_rows: Vec<u64>,
    /// Circuit inputs and outputs per lane.
    pub inputs: usize,
    pub outputs: usize,
    /// The gallery input whose records are the lanes (one lane per record).
    pub lanes_input: usize,
}

/// Who built the executable, embedded next to the manifest's fields under `"build"` (kept out
/// of [`Manifest`] itself so that manifests written before it, and the manifests the dealer
/// builds, stay valid): for `--version` and for the session hello, where the three parties
/// check that they run the same protocol and the same message schedule. The backend is not
/// part of that check: a CPU party and GPU parties of one `mpc` module send the same messages
/// from the same PRSS streams, so they interoperate.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// The version of the irisc that compiled the program.
    #[serde(default)]
    pub compiler: String,
    /// The protocol family of the `mpc` module (`mpc.protocol`), e.g. `rep3`.
    #[serde(default)]
    pub protocol: String,
    /// The backend that generated the code, e.g. `cpu`.
    #[serde(default)]
    pub backend: String,
    /// Hex BLAKE3 of the printed `mpc` module the backend lowered: the party schedule, which
    /// the backends share (every target lowers the same module), so it names what the parties
    /// must agree on where the backend need not.
    #[serde(default)]
    pub schedule: String,
}

impl BuildInfo {
    /// The manifest's JSON with `build` added.
    pub fn embed(manifest: &Manifest, build: &BuildInfo) -> Result<String, serde_json::Error> {
        #[derive(Serialize)]
        struct WithBuild<'a> {
            #[serde(flatten)]
            manifest: &'a Manifest,
            build: &'a BuildInfo,
        }
        serde_json::to_string(&WithBuild { manifest, build })
    }

    /// The `build` of a manifest's JSON (empty fields where it has none).
    pub fn from_json(bytes: &[u8]) -> BuildInfo {
        #[derive(Deserialize)]
        struct BuildOnly {
            #[serde(default)]
            build: BuildInfo,
        }
        serde_json::from_slice::<BuildOnly>(bytes)
            .map(|b| b.build)
            .unwrap_or_default()
    }
}

/// One declared input and the share file it needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestInput {
    pub name: String,
    pub role: InputRole,
    /// The party that supplies a query input (`from p0`); `None` for galleries.
    #[serde(default)]
    pub owner: Option<u8>,
    pub kind: InputKind,
    /// Bits per iris code, the dimension of an embedding, 1 for a bit.
    pub elements: u32,
    pub mask: InputMask,
    pub sharing: Sharing,
    /// k of Z_2^k that the input's share file must have (16 for Shamir sharings, whose words are
    /// F_p or GR(2^16, d) coefficients; 1 or more for bits).
    pub ring_bits: u32,
    /// Fixed-point scale of an embedding: values are round(v * 2^scale_bits); 0 otherwise.
    #[serde(default)]
    pub scale_bits: u32,
    /// The query's owner also deals each code's conjugate (each cell's imaginary entries
    /// negated), because the program reads it: `mirror(q)` under a Galois-ring sharing, whose
    /// shares hold whole cells (`mpc.load_query` with part
    /// [`crate::contract::InputPart::Conjugate`]).
    #[serde(default)]
    pub conjugate: bool,
}

impl ManifestInput {
    /// The `--input` argument that names this input's file, e.g. `--input left=PATH`.
    pub fn flag(&self) -> String {
        format!("--input {}=PATH", self.name)
    }
}

impl Manifest {
    pub fn from_json(bytes: &[u8]) -> Result<Manifest, String> {
        let m: Manifest =
            serde_json::from_slice(bytes).map_err(|e| format!("corrupt program manifest: {e}"))?;
        if m.abi != ABI_VERSION {
            return Err(format!(
                "this executable was generated for runtime ABI {} but is linked with runtime ABI {}; rebuild it with this irisc",
                m.abi, ABI_VERSION
            ));
        }
        Ok(m)
    }

    /// The index of the input called `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.inputs.iter().position(|i| i.name == name)
    }

    /// Indices of the inputs with `role`.
    pub fn inputs_with(&self, role: InputRole) -> Vec<usize> {
        (0..self.inputs.len())
            .filter(|&i| self.inputs[i].role == role)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_are_the_designs() {
        let i = ManifestInput {
            name: "ql".into(),
            role: InputRole::Query,
            owner: Some(0),
            kind: InputKind::Iris,
            elements: 12_800,
            mask: InputMask::Secret,
            sharing: Sharing::Gr4,
            ring_bits: 16,
            scale_bits: 0,
            conjugate: true,
        };
        let v = serde_json::to_value(&i).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"name": "ql", "role": "query", "owner": 0, "kind": "iris",
                "elements": 12800, "mask": "secret", "sharing": "gr4", "ring_bits": 16,
                "scale_bits": 0, "conjugate": true})
        );
        let m = Manifest {
            abi: ABI_VERSION,
            program: "p".into(),
            fingerprint: "f".into(),
            inputs: vec![i],
            zips: vec![],
            parties: ["a".into(), "b".into(), "c".into()],
            explain: serde_json::Value::Null,
            record_chunk: 0,
            beaver: None,
        };
        let bytes = serde_json::to_vec(&m).unwrap();
        assert_eq!(Manifest::from_json(&bytes).unwrap(), m);
        let mut old = m.clone();
        old.abi = 1;
        let e = Manifest::from_json(&serde_json::to_vec(&old).unwrap()).unwrap_err();
        assert!(
            e.contains(&format!(
                "runtime ABI 1 but is linked with runtime ABI {ABI_VERSION}"
            )),
            "{e}"
        );
    }
}
