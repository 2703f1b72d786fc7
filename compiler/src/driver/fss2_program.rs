//! What a program means under the two-server family `fss2` (paper 002): the one cosine
//! identification `reveal ids s in G: cosine(q, s) >= TAU to X;` it runs, its roles (the client
//! `X`, the servers the other two parties in declaration order), the threshold plan and the ring
//! the cosine range analysis proves, refused at the source when the program does not fit; and
//! the `irisc explain --protocol fss2` document.

use std::path::Path;

use anyhow::Result;
use irisc_runtime::fss2::eval::Roles;
use irisc_runtime::fss2::plan::CosinePlan;
use irisc_runtime::vocab::InputRole;

use super::checked::{read_and_check, Checked};
use crate::analysis::cosine::{select_cosine_ring, CosineRing};
use crate::sema::program::{BoolExpr, InputType, Operand, RevealShape};
use crate::syntax::Diagnostic;

/// What a program means under `fss2`.
#[derive(Debug, Clone)]
pub struct Fss2Program {
    pub plan: CosinePlan,
    pub roles: Roles,
    /// The parties' names, by link index.
    pub parties: [String; 3],
    pub query: String,
    pub gallery: String,
    /// The JSON field the client prints the matching ids under.
    pub label: String,
    pub ring: CosineRing,
}

/// Reads `path` and derives its `fss2` plan, or says at the source what does not fit.
pub fn fss2_program(path: &Path) -> Result<Fss2Program> {
    let checked = read_and_check(path)?;
    of_checked(&checked)
}

const SHAPE_HINT: &str = "under --protocol fss2 a program has one reveal of the form `reveal ids s in GALLERY: cosine(QUERY, s) >= TAU to OWNER;` where OWNER supplies QUERY";

pub fn of_checked(checked: &Checked) -> Result<Fss2Program> {
    let p = &checked.program;
    let at = |span, msg: String| {
        checked.render_error(Diagnostic::error(msg, span).with_hint(SHAPE_HINT.to_string()))
    };
    let [reveal] = p.reveals.as_slice() else {
        return Err(at(
            p.reveals.get(1).map(|r| r.span).unwrap_or_default(),
            format!(
                "fss2 runs one cosine reveal; this program has {}",
                p.reveals.len()
            ),
        ));
    };
    if reveal.shape != RevealShape::Ids {
        return Err(at(
            reveal.span,
            "fss2 reveals the matching ids (`reveal ids s in G: ...`)".into(),
        ));
    }
    let BoolExpr::Cosine(test) = &reveal.value else {
        return Err(at(
            reveal.span,
            "fss2 decides one cosine test per record; this reveal computes something else".into(),
        ));
    };
    let Operand::Query(q) = test.query else {
        return Err(at(
            test.span,
            "the first operand of cosine must be the query".into(),
        ));
    };
    let Operand::Record { .. } = test.record else {
        return Err(at(
            test.span,
            "the second operand of cosine must be the gallery record".into(),
        ));
    };
    let query = &p.inputs[q];
    let owner = query.owner.expect("a query has an owner");
    if reveal.to != owner {
        return Err(at(
            reveal.span,
            format!(
                "fss2 reveals to the client, the party that supplies `{}` ({}), not to {}",
                query.name, p.parties[owner], p.parties[reveal.to]
            ),
        ));
    }
    let gallery = p
        .inputs
        .iter()
        .find(|i| i.role == InputRole::Gallery)
        .ok_or_else(|| {
            at(
                reveal.span,
                "fss2 needs a gallery of enrolled templates".into(),
            )
        })?;
    let InputType::Embedding { dim, scale_bits } = query.ty else {
        return Err(at(query.span, "fss2 compares embeddings".into()));
    };
    let ring = select_cosine_ring(dim, scale_bits, test.tau, test.strict).map_err(|e| {
        checked.render_error(Diagnostic::error(e.to_string(), test.span).with_hint(e.hint()))
    })?;
    Ok(Fss2Program {
        plan: CosinePlan {
            dim: dim as usize,
            scale_bits,
            tau_negative: test.tau.negative,
            tau_num: test.tau.abs.num,
            tau_den: test.tau.abs.den,
            strict: test.strict,
        },
        roles: Roles::with_client(owner),
        parties: p.parties.clone(),
        query: query.name.clone(),
        gallery: gallery.name.clone(),
        label: reveal.label.clone(),
        ring,
    })
}

/// The `irisc explain --protocol fss2` document: the roles, the ring and why, the rounds, bytes
/// and dealer material per query for `records` templates, and what each party learns.
pub fn explain_json(f: &Fss2Program, records: u64) -> serde_json::Value {
    use irisc_runtime::fss2::cost;
    let (dim, n) = (f.plan.dim, records as usize);
    let last = cost::query_bytes(dim, n, false);
    let more = cost::query_bytes(dim, n, true);
    let name = |i: usize| f.parties[i].clone();
    let [s0, s1] = f.roles.servers;
    let client = name(f.roles.client);
    let tau = format!(
        "{}{}/{}",
        if f.plan.tau_negative { "-" } else { "" },
        f.plan.tau_num,
        f.plan.tau_den
    );
    let malicious_rows: Vec<serde_json::Value> = [10usize, 20, 40]
        .iter()
        .map(|&m| {
            let b = cost::query_bytes_star(dim, n, m);
            serde_json::json!({"m": m, "to_other_server": b.to_server, "to_client": b.to_client, "detection": format!("1 - 2^-{m}")})
        })
        .collect();
    serde_json::json!({
        "protocol": "fss2",
        "threat_model": crate::analysis::explain::threat_model(irisc_runtime::vocab::Protocol::Fss2),
        "roles": {
            "servers": [name(s0), name(s1)],
            "client": client,
            "dealer": "offline: `irisc fss2 enroll` and `irisc fss2 deal`",
        },
        "test": {
            "kind": "cosine",
            "tau": tau,
            "strict": f.plan.strict,
            "dim": dim,
            "scale_bits": f.plan.scale_bits,
            "decided_as": f.plan_text(),
        },
        "ring": {
            "l0": 64,
            "bits_needed": f.ring.ring_bits,
            "why": f.ring.justification,
            "truncation_rho": 0,
            "why_no_truncation": "every materialised value fits the signed range of Z_2^64, so E is compared exactly; truncating (the paper's rho = 8) would shrink the FSS domain but could flip decisions next to the threshold",
            "fss_domain_bits": 64,
            "prg": "fixed-key AES-128 (Matyas-Meyer-Oseas), 127-bit seeds",
        },
        "records": records,
        "rounds_between_servers": cost::ROUNDS,
        "bytes_per_server_per_query": {
            "to_other_server": more.to_server,
            "to_client": more.to_client,
            "to_client_last_query": last.to_client,
        },
        "client_bytes_per_query": cost::client_bytes(dim),
        "malicious": malicious_rows,
        "dealer_material_per_server_per_authentication": cost::material_bytes(dim, n),
        "ledger": [
            {"who": "each server", "learns": "the gallery size and ids, the number of queries, and values masked by the dealer's uniform masks (delta of x, u, v, w, E): nothing about the query, the templates or the decisions"},
            {"who": client, "learns": "the ids of the templates that match its query (what the program reveals), the gallery size and ids"},
            {"who": "dealer", "learns": "the enrolled templates (it deals them) and nothing online; it never sees a query or a decision"},
            {"who": "two servers together", "learns": "everything: the protocol assumes they do not collude"},
        ],
    })
}

impl Fss2Program {
    /// The decision as the two gates compute it.
    pub fn plan_text(&self) -> String {
        let sign = if self.plan.strict && !self.plan.tau_negative {
            "p > 0"
        } else {
            "p >= 0"
        };
        let mag = match (self.plan.tau_negative, self.plan.strict) {
            (false, false) => "and E >= 0",
            (false, true) => "and E > 0",
            (true, false) => "or E <= 0",
            (true, true) => "or E < 0",
        };
        format!("{sign} (IC gate) {mag} (CondEval), p = <x,y>, E = den^2 p^2 - num^2 <x,x><y,y>")
    }
}
