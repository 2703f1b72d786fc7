//! The roles of an `fss2` run, each its own process: the dealer (offline: enrollment and
//! CS.Setup into files), the two servers and the client (online, over the TLS links of
//! `parties.toml`, three entries: the client is the program's query owner, the servers the other
//! two in index order).
//!
//! Before connecting, a server checks its gallery share and its material store (server, program,
//! gallery, enough unused authentications); after connecting and before the client sees any
//! mask, the two servers compare which batch and which authentication each is about to use, so
//! material that is replayed, from another batch or out of step is refused before anything
//! secret-dependent is sent. Each authentication's material is marked used before it is used.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::io::ndjson_values::quantise;
use crate::net::link::TlsTransport;
use crate::net::session::Session;
use crate::net::{PartiesConfig, Transport};

use super::dealer::{self, DealerRng, GalleryShare};
use super::eval::{
    recv_input_masks, run_client, send_input_masks, Roles, ServerSession, ServerStats,
};
use super::kernel::IpKernel;
use super::material::{self, Expect, StoreHeader, StoreWriter};
use super::plan::CosinePlan;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The dealer's enrollment: `embeddings` (one template a line, `{"id", "embedding"}`) quantised
/// to the plan's scale and dealt into `out/server0.gallery`, `out/server1.gallery` and
/// `out/dealer.secret`.
pub fn enroll(plan: &CosinePlan, embeddings: &Path, out: &Path) -> Result<EnrollReport, String> {
    let records = crate::io::ndjson_values::read_embeddings(embeddings, Some(plan.dim))?;
    if records.is_empty() {
        return Err(format!("{}: no templates to enroll", embeddings.display()));
    }
    let ids: Vec<u64> = records.iter().map(|r| r.id).collect();
    let templates: Vec<i64> = records
        .iter()
        .flat_map(|r| r.embedding.iter().map(|&v| quantise(v, plan.scale_bits)))
        .collect();
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut rng = DealerRng::from_os();
    let (secret, shares) = dealer::enroll(&ids, &templates, plan.dim, &mut rng);
    for g in &shares {
        material::write_gallery(&out.join(gallery_name(g.server)), g).map_err(|e| e.to_string())?;
    }
    material::write_secret(&out.join(SECRET_NAME), &secret).map_err(|e| e.to_string())?;
    Ok(EnrollReport {
        records: ids.len(),
        dim: plan.dim,
        gallery_id: hex(&secret.gallery_id),
    })
}

/// The file names the dealer writes.
pub const SECRET_NAME: &str = "dealer.secret";

pub fn gallery_name(server: usize) -> String {
    format!("server{server}.gallery")
}

pub fn material_name(server: usize) -> String {
    format!("server{server}.material")
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct EnrollReport {
    pub records: usize,
    pub dim: usize,
    pub gallery_id: String,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct DealReport {
    pub authentications: u32,
    pub records: usize,
    pub bytes_per_server: u64,
    pub bytes_per_authentication: u64,
    pub batch: String,
    pub seconds: f64,
}

/// CS.Setup for `authentications` authentications against the enrolled gallery: one material
/// store per server in `out`, written authentication by authentication.
pub fn deal(
    plan: &CosinePlan,
    secret_path: &Path,
    authentications: u32,
    out: &Path,
    mut progress: impl FnMut(u32),
) -> Result<DealReport, String> {
    let started = Instant::now();
    let secret = material::read_secret(secret_path).map_err(|e| e.to_string())?;
    if secret.dim != plan.dim {
        return Err(format!(
            "{}: the gallery was enrolled with dimension {}, the program has {}",
            secret_path.display(),
            secret.dim,
            plan.dim
        ));
    }
    if authentications == 0 {
        return Err("a batch of 0 authentications".into());
    }
    let mut rng = DealerRng::from_os();
    let mut batch = [0u8; 16];
    rng.fill(&mut batch);
    let header = |server: u32| StoreHeader {
        server,
        authentications,
        variant: 0,
        dim: plan.dim as u64,
        records: secret.records as u64,
        auth_bytes: dealer::AuthMaterial::encoded_bytes(plan.dim, secret.records) as u64,
        gallery_id: secret.gallery_id,
        plan: plan.fingerprint(),
        batch,
    };
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut ws = Vec::with_capacity(2);
    for s in 0..2u32 {
        ws.push(
            StoreWriter::create(&out.join(material_name(s as usize)), &header(s))
                .map_err(|e| e.to_string())?,
        );
    }
    let masks = secret.template_masks();
    for i in 0..authentications {
        let pair = dealer::cs_setup(plan, &secret, &masks, &mut rng);
        for (w, m) in ws.iter_mut().zip(&pair) {
            w.append(m).map_err(|e| e.to_string())?;
        }
        progress(i + 1);
    }
    for w in ws {
        w.finish().map_err(|e| e.to_string())?;
    }
    let per = dealer::AuthMaterial::encoded_bytes(plan.dim, secret.records) as u64 + 32;
    Ok(DealReport {
        authentications,
        records: secret.records,
        bytes_per_server: std::fs::metadata(out.join(material_name(0)))
            .map(|m| m.len())
            .unwrap_or(0),
        bytes_per_authentication: per,
        batch: hex(&batch),
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// What a server is told.
#[derive(Debug, Clone)]
pub struct ServerRun {
    /// This process's index in `parties.toml`.
    pub party: usize,
    pub config: PathBuf,
    pub roles: Roles,
    pub plan: CosinePlan,
    pub gallery: PathBuf,
    pub material: PathBuf,
    pub queries: u32,
    /// Round 1's SS.IP (the generated kernel of a compiled server executable).
    pub ip: IpKernel,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ServerReport {
    pub server: usize,
    pub queries: u32,
    pub records: usize,
    /// Rounds between the servers per query.
    pub rounds_per_query: u32,
    pub bytes_to_server: u64,
    pub bytes_to_client: u64,
    /// From the client's masked input to the output shares sent, per query.
    pub seconds_per_query: Vec<f64>,
    pub connect_seconds: f64,
    /// Round 1's SS.IP: `generated` (the compiler's kernel) or `portable` (the runtime's loop).
    pub ss_ip: &'static str,
}

fn session(plan: &CosinePlan, queries: u32) -> Vec<u8> {
    Session::new()
        .field("protocol", "fss2")
        .field("program", hex(&plan.fingerprint()))
        .field("queries", queries)
        .to_bytes()
}

fn connect(
    party: usize,
    config: &Path,
    plan: &CosinePlan,
    queries: u32,
) -> Result<TlsTransport, String> {
    let cfg = PartiesConfig::load(config).map_err(|e| e.to_string())?;
    if cfg.count() != 3 {
        return Err(format!(
            "{} lists {} parties: an fss2 run has three (two servers and the client)",
            config.display(),
            cfg.count()
        ));
    }
    TlsTransport::connect(&cfg, party, &session(plan, queries)).map_err(|e| e.to_string())
}

/// The two servers' agreement on the material they are about to use: gallery, batch and the
/// index of the next unused authentication, compared before any mask leaves a server.
fn agree_on_material(
    net: &mut dyn Transport,
    peer: usize,
    gallery: &GalleryShare,
    header: &StoreHeader,
    next: u32,
) -> Result<(), String> {
    let mut mine = Vec::with_capacity(36);
    mine.extend_from_slice(&gallery.gallery_id);
    mine.extend_from_slice(&header.batch);
    mine.extend_from_slice(&next.to_le_bytes());
    net.send(peer, mine.clone()).map_err(|e| e.to_string())?;
    let theirs = net.recv(peer).map_err(|e| e.to_string())?;
    if theirs.len() != mine.len() {
        return Err(format!("party {peer} sent a malformed material check"));
    }
    if theirs[..16] != mine[..16] {
        return Err(format!("party {peer} holds a share of another enrolled gallery: both servers need the shares of one enrollment"));
    }
    if theirs[16..32] != mine[16..32] {
        return Err(format!("party {peer} uses material of another batch: both servers need the two stores of one `deal`"));
    }
    let their_next = u32::from_le_bytes(theirs[32..36].try_into().expect("4"));
    if their_next != next {
        return Err(format!(
            "the servers' material is out of step (this server is at authentication {next}, party {peer} at {their_next}): material is never reused; deal a new batch for both servers"
        ));
    }
    Ok(())
}

/// The gallery's record count and ids, which the client learns once per connection.
fn send_record_list(net: &mut dyn Transport, client: usize, ids: &[u64]) -> Result<(), String> {
    let mut msg = Vec::with_capacity(8 * (ids.len() + 1));
    msg.extend_from_slice(&(ids.len() as u64).to_le_bytes());
    for id in ids {
        msg.extend_from_slice(&id.to_le_bytes());
    }
    net.send(client, msg).map_err(|e| e.to_string())
}

/// The client's side of [`send_record_list`]: both servers must send the same list.
fn recv_record_list(net: &mut dyn Transport, roles: Roles) -> Result<Vec<u64>, String> {
    let mut ids: Option<Vec<u64>> = None;
    for s in roles.servers {
        let msg = net.recv(s).map_err(|e| e.to_string())?;
        if !msg.len().is_multiple_of(8) {
            return Err(format!("party {s} sent a malformed record list"));
        }
        let words: Vec<u64> = msg
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8")))
            .collect();
        if words.is_empty() || words[0] as usize != words.len() - 1 {
            return Err(format!("party {s} sent a malformed record list"));
        }
        if ids.as_ref().is_some_and(|p| p[..] != words[1..]) {
            return Err("the two servers hold different galleries".into());
        }
        ids = Some(words[1..].to_vec());
    }
    Ok(ids.expect("two servers"))
}

/// One server: checks, connects, agrees with its peer, then one CS.Eval per query.
pub fn serve(run: &ServerRun) -> Result<ServerReport, String> {
    let Some(server) = run.roles.server_of(run.party) else {
        return Err(format!(
            "party {} is the client of this program, not a server",
            run.party
        ));
    };
    let gallery = material::read_gallery(&run.gallery, server).map_err(|e| e.to_string())?;
    if gallery.dim != run.plan.dim {
        return Err(format!(
            "{}: templates of dimension {}, the program's are {}",
            run.gallery.display(),
            gallery.dim,
            run.plan.dim
        ));
    }
    let fp = run.plan.fingerprint();
    let expect = Expect {
        server: server as u32,
        variant: 0,
        plan: &fp,
        gallery_id: &gallery.gallery_id,
        dim: gallery.dim as u64,
        records: gallery.records as u64,
    };
    let (header, used) =
        material::check_available(&run.material, expect, run.queries).map_err(|e| e.to_string())?;
    let t = Instant::now();
    let mut net = connect(run.party, &run.config, &run.plan, run.queries)?;
    let peer = run.roles.servers[1 - server];
    agree_on_material(&mut net, peer, &gallery, &header, used)?;
    send_record_list(&mut net, run.roles.client, &gallery.ids)?;
    let connect_seconds = t.elapsed().as_secs_f64();
    let mut report = ServerReport {
        server,
        queries: run.queries,
        records: gallery.records,
        rounds_per_query: 2,
        bytes_to_server: 0,
        bytes_to_client: 0,
        seconds_per_query: Vec::new(),
        connect_seconds,
        ss_ip: if run.ip.is_generated() {
            "generated"
        } else {
            "portable"
        },
    };
    // Each authentication's input mask goes out ahead of its query (with the previous output).
    let mut current = Some(material::take(&run.material, expect).map_err(|e| e.to_string())?);
    if let Some(first) = &current {
        send_input_masks(&mut net, run.roles.client, &first.material.rx_seed)
            .map_err(|e| e.to_string())?;
    }
    for q in 0..run.queries {
        let taken = current.take().expect("taken ahead");
        let more = q + 1 < run.queries;
        let t = Instant::now();
        // The next authentication's material is taken (checked, durably marked used, decoded)
        // on a helper thread while this query's input travels and its rounds run; its mask seed
        // leaves with this output, once the take has finished.
        let (stats, next) = std::thread::scope(|sc| -> Result<_, String> {
            let mut prefetch = more.then(|| {
                sc.spawn(|| material::take(&run.material, expect).map_err(|e| e.to_string()))
            });
            let mut next = None;
            let mut next_seed = || -> Result<[u8; 16], String> {
                let h = prefetch
                    .take()
                    .ok_or("the next authentication was asked for twice")?;
                let taken = h
                    .join()
                    .map_err(|_| "taking the next authentication failed (panic)".to_string())??;
                let seed = taken.material.rx_seed;
                next = Some(taken);
                Ok(seed)
            };
            let stats: ServerStats = ServerSession {
                net: &mut net,
                roles: run.roles,
                plan: &run.plan,
                gallery: &gallery,
                material: &taken.material,
                next_masks: if more { Some(&mut next_seed) } else { None },
                ip: run.ip,
            }
            .run()
            .map_err(|e| e.to_string())?;
            Ok((stats, next))
        })?;
        current = next;
        report.seconds_per_query.push(t.elapsed().as_secs_f64());
        report.bytes_to_server += stats.bytes_to_server;
        report.bytes_to_client += stats.bytes_to_client;
    }
    net.close().map_err(|e| e.to_string())?;
    Ok(report)
}

/// What the client is told: its queries (fixed point already).
#[derive(Debug, Clone)]
pub struct ClientRun {
    pub party: usize,
    pub config: PathBuf,
    pub roles: Roles,
    pub plan: CosinePlan,
    pub queries: Vec<Vec<i64>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct ClientReport {
    /// Per query, the ids of the templates that match.
    pub matches: Vec<Vec<u64>>,
    /// Per query, from sending nothing yet to holding the decisions.
    pub seconds_per_query: Vec<f64>,
    pub bytes_sent: u64,
}

pub fn query(run: &ClientRun) -> Result<ClientReport, String> {
    if run.roles.client != run.party {
        return Err(format!(
            "party {} is a server of this program, not its client",
            run.party
        ));
    }
    let mut net = connect(run.party, &run.config, &run.plan, run.queries.len() as u32)?;
    let ids = recv_record_list(&mut net, run.roles)?;
    let mut report = ClientReport {
        matches: Vec::new(),
        seconds_per_query: Vec::new(),
        bytes_sent: 0,
    };
    let mut rx = if run.queries.is_empty() {
        Vec::new()
    } else {
        recv_input_masks(&mut net, run.roles, run.plan.dim).map_err(|e| e.to_string())?
    };
    for (q, x) in run.queries.iter().enumerate() {
        let t = Instant::now();
        let more = q + 1 < run.queries.len();
        let (bits, next) = run_client(&mut net, run.roles, &run.plan, ids.len(), x, &rx, more)
            .map_err(|e| e.to_string())?;
        rx = next.unwrap_or_default();
        report.seconds_per_query.push(t.elapsed().as_secs_f64());
        report.matches.push(
            ids.iter()
                .zip(bits)
                .filter(|(_, b)| *b)
                .map(|(id, _)| *id)
                .collect(),
        );
    }
    report.bytes_sent = net.bytes_sent();
    net.close().map_err(|e| e.to_string())?;
    Ok(report)
}

/// The malicious variant (CSB.Eval*) as processes: file names of its dealer's output.
pub mod star {
    use super::*;
    use crate::fss2::malicious::{
        cs_setup_star, enroll_star, query_star, read_gallery_star, read_secret_star,
        recv_masks_star, serve_star, write_gallery_star, write_secret_star, Deviation,
        MaterialStar, Pipeline,
    };

    pub const SECRET_NAME: &str = "dealer.secret-star";

    pub fn gallery_name(server: usize) -> String {
        format!("server{server}.gallery-star")
    }

    /// Server `b`'s store, or the client's (`psi`) for `b = 2`.
    pub fn material_name(who: usize) -> String {
        if who == 2 {
            "client.material-star".into()
        } else {
            format!("server{who}.material-star")
        }
    }

    /// Enrollment with MACs.
    pub fn enroll(
        plan: &CosinePlan,
        embeddings: &Path,
        out: &Path,
    ) -> Result<EnrollReport, String> {
        let records = crate::io::ndjson_values::read_embeddings(embeddings, Some(plan.dim))?;
        if records.is_empty() {
            return Err(format!("{}: no templates to enroll", embeddings.display()));
        }
        let ids: Vec<u64> = records.iter().map(|r| r.id).collect();
        let templates: Vec<i64> = records
            .iter()
            .flat_map(|r| r.embedding.iter().map(|&v| quantise(v, plan.scale_bits)))
            .collect();
        std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut rng = DealerRng::from_os();
        let (secret, shares) = enroll_star(&ids, &templates, plan.dim, &mut rng);
        for g in &shares {
            write_gallery_star(&out.join(gallery_name(g.server)), g)?;
        }
        write_secret_star(&out.join(SECRET_NAME), &secret)?;
        Ok(EnrollReport {
            records: ids.len(),
            dim: plan.dim,
            gallery_id: hex(&secret.gallery_id),
        })
    }

    /// CSB.Setup* for a batch: a store per server and the client's store of `psi`.
    pub fn deal(
        plan: &CosinePlan,
        secret_path: &Path,
        m: u32,
        authentications: u32,
        out: &Path,
    ) -> Result<DealReport, String> {
        let started = Instant::now();
        if m == 0 || authentications == 0 {
            return Err("--malicious m and --authentications must be at least 1".into());
        }
        let secret = read_secret_star(secret_path)?;
        let mut rng = DealerRng::from_os();
        let mut batch = [0u8; 16];
        rng.fill(&mut batch);
        let (dim, records) = (plan.dim, secret.records);
        let header = |who: u32| StoreHeader {
            server: who,
            authentications,
            variant: m,
            dim: dim as u64,
            records: records as u64,
            auth_bytes: if who == 2 {
                u64::from(m)
            } else {
                MaterialStar::encoded_bytes(dim, records, m as usize) as u64
            },
            gallery_id: secret.gallery_id,
            plan: plan.fingerprint(),
            batch,
        };
        let mut ws = Vec::with_capacity(3);
        for who in 0..3u32 {
            ws.push(
                StoreWriter::create(&out.join(material_name(who as usize)), &header(who))
                    .map_err(|e| e.to_string())?,
            );
        }
        for _ in 0..authentications {
            let (mats, psi) = cs_setup_star(plan, &secret, m as usize, &mut rng);
            for (w, mat) in ws.iter_mut().zip(&mats) {
                w.append_bytes(&mat.encode()).map_err(|e| e.to_string())?;
            }
            let psi: Vec<u8> = psi.iter().map(|&t| u8::from(t)).collect();
            ws[2].append_bytes(&psi).map_err(|e| e.to_string())?;
        }
        for w in ws {
            w.finish().map_err(|e| e.to_string())?;
        }
        Ok(DealReport {
            authentications,
            records,
            bytes_per_server: std::fs::metadata(out.join(material_name(0)))
                .map(|x| x.len())
                .unwrap_or(0),
            bytes_per_authentication: MaterialStar::encoded_bytes(dim, records, m as usize) as u64
                + 32,
            batch: hex(&batch),
            seconds: started.elapsed().as_secs_f64(),
        })
    }

    /// A deviation for the tests of detection, from `IRISC_FSS2_DEVIATE` (`flip-output`,
    /// `alter-delta`, `wrong-key` (every instance of the first template), `corrupt-mac`);
    /// none when unset.
    pub fn deviation_from_env() -> Result<Deviation, String> {
        match std::env::var("IRISC_FSS2_DEVIATE").ok().as_deref() {
            None | Some("") => Ok(Deviation::None),
            Some("flip-output") => Ok(Deviation::FlipOutput { template: 0, instance: 0 }),
            Some("alter-delta") => Ok(Deviation::AlterDelta { template: 0 }),
            Some("wrong-key") => Ok(Deviation::WrongKeys { template: 0 }),
            Some("corrupt-mac") => Ok(Deviation::CorruptMac),
            Some(other) => Err(format!("IRISC_FSS2_DEVIATE={other}: one of flip-output, alter-delta, wrong-key, corrupt-mac")),
        }
    }

    /// One server of the malicious variant.
    pub fn serve(run: &ServerRun, m: u32) -> Result<ServerReport, String> {
        let Some(server) = run.roles.server_of(run.party) else {
            return Err(format!(
                "party {} is the client of this program, not a server",
                run.party
            ));
        };
        let deviation = deviation_from_env()?;
        let gallery = read_gallery_star(&run.gallery, server)?;
        if gallery.dim != run.plan.dim {
            return Err(format!(
                "{}: templates of dimension {}, the program's are {}",
                run.gallery.display(),
                gallery.dim,
                run.plan.dim
            ));
        }
        let fp = run.plan.fingerprint();
        let expect = Expect {
            server: server as u32,
            variant: m,
            plan: &fp,
            gallery_id: &gallery.gallery_id,
            dim: gallery.dim as u64,
            records: gallery.records as u64,
        };
        let (header, used) = material::check_available(&run.material, expect, run.queries)
            .map_err(|e| e.to_string())?;
        let t = Instant::now();
        let mut net = connect(run.party, &run.config, &run.plan, run.queries)?;
        let peer = run.roles.servers[1 - server];
        let share = GalleryShare {
            server,
            gallery_id: gallery.gallery_id,
            dim: gallery.dim,
            records: gallery.records,
            ids: Vec::new(),
            delta: Vec::new(),
            mask: Vec::new(),
        };
        agree_on_material(&mut net, peer, &share, &header, used)?;
        send_record_list(&mut net, run.roles.client, &gallery.ids)?;
        let connect_seconds = t.elapsed().as_secs_f64();
        let mut report = ServerReport {
            server,
            queries: run.queries,
            records: gallery.records,
            rounds_per_query: 2,
            bytes_to_server: 0,
            bytes_to_client: 0,
            seconds_per_query: Vec::new(),
            connect_seconds,
            // CSB.Eval* computes over Z_2^112 with MACs: the runtime's loop.
            ss_ip: "portable",
        };
        let take = || -> Result<MaterialStar, String> {
            let taken = material::take_bytes(&run.material, expect).map_err(|e| e.to_string())?;
            MaterialStar::decode(
                &taken.bytes,
                server,
                gallery.dim,
                gallery.records,
                m as usize,
            )
        };
        let mut current = if run.queries > 0 { Some(take()?) } else { None };
        for q in 0..run.queries {
            let mat = current.take().expect("taken ahead");
            let more = q + 1 < run.queries;
            let t = Instant::now();
            let before = net.bytes_sent();
            // As in the semi-honest server: the next authentication is taken on a helper thread
            // while this one runs, and joined just before its mask seed is sent.
            let next = std::thread::scope(|sc| -> Result<_, String> {
                let mut prefetch = more.then(|| sc.spawn(take));
                let mut next = None;
                let mut next_seed = || -> Result<[u8; 16], String> {
                    let h = prefetch
                        .take()
                        .ok_or("the next authentication was asked for twice")?;
                    let taken = h.join().map_err(|_| {
                        "taking the next authentication failed (panic)".to_string()
                    })??;
                    let seed = taken.rx_seed;
                    next = Some(taken);
                    Ok(seed)
                };
                let pipeline = Pipeline {
                    send_own_masks: q == 0,
                    next: if more { Some(&mut next_seed) } else { None },
                };
                serve_star(
                    &mut net, run.roles, &run.plan, &gallery, &mat, deviation, pipeline,
                )
                .map_err(|e| e.to_string())?;
                Ok(next)
            })?;
            current = next;
            report.seconds_per_query.push(t.elapsed().as_secs_f64());
            // To the client: input mask shares, the output shares and the check digest.
            let masks = u64::from(q == 0) + u64::from(more);
            let to_client = masks * 16 + (gallery.records * m as usize).div_ceil(8) as u64 + 32;
            report.bytes_to_client += to_client;
            report.bytes_to_server += net.bytes_sent() - before - to_client;
        }
        net.close().map_err(|e| e.to_string())?;
        Ok(report)
    }

    /// The client of the malicious variant: it verifies every answer with its `psi`.
    pub fn query(run: &ClientRun, material_path: &Path, m: u32) -> Result<ClientReport, String> {
        if run.roles.client != run.party {
            return Err(format!(
                "party {} is a server of this program, not its client",
                run.party
            ));
        }
        // The client learns the gallery's size from the servers: its store is checked against
        // that below, when an authentication is taken.
        let (header, _) = material::peek_header(material_path).map_err(|e| e.to_string())?;
        if header.variant != m {
            return Err(format!(
                "{}: this material is for m = {}, the run is m = {m}",
                material_path.display(),
                header.variant
            ));
        }
        let mut net = connect(run.party, &run.config, &run.plan, run.queries.len() as u32)?;
        let ids = recv_record_list(&mut net, run.roles)?;
        let fp = run.plan.fingerprint();
        let expect = Expect {
            server: 2,
            variant: m,
            plan: &fp,
            gallery_id: &header.gallery_id,
            dim: run.plan.dim as u64,
            records: ids.len() as u64,
        };
        let mut report = ClientReport {
            matches: Vec::new(),
            seconds_per_query: Vec::new(),
            bytes_sent: 0,
        };
        let mut rx = if run.queries.is_empty() {
            Vec::new()
        } else {
            recv_masks_star(&mut net, run.roles, run.plan.dim).map_err(|e| e.to_string())?
        };
        for (q, x) in run.queries.iter().enumerate() {
            let taken = material::take_bytes(material_path, expect).map_err(|e| e.to_string())?;
            let psi: Vec<bool> = taken.bytes.iter().map(|&b| b == 1).collect();
            let t = Instant::now();
            let more = q + 1 < run.queries.len();
            let (bits, next) = query_star(
                &mut net,
                run.roles,
                &run.plan,
                ids.len(),
                &psi,
                x,
                &rx,
                more,
            )
            .map_err(|e| e.to_string())?;
            rx = next.unwrap_or_default();
            report.seconds_per_query.push(t.elapsed().as_secs_f64());
            report.matches.push(
                ids.iter()
                    .zip(bits)
                    .filter(|(_, b)| *b)
                    .map(|(id, _)| *id)
                    .collect(),
            );
        }
        report.bytes_sent = net.bytes_sent();
        net.close().map_err(|e| e.to_string())?;
        Ok(report)
    }
}
