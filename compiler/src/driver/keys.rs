//! `irisc keys`: TLS material and a `parties.toml` for a deployment of three parties (rep3), or
//! of `--parties N` (2 to `MAX_PARTIES`: the dishonest-majority protocols also run with two).
//!
//! A fresh CA signs one certificate per party (ECDSA P-256, DNS name `party{i}.irisc`, usable as
//! TLS server and client). The CA's private key only lives in memory while signing and is then
//! dropped, so no one can later mint a certificate the parties would accept. Private keys are
//! created readable by their owner only, from the first byte on.
//!
//! On a real deployment no host makes another party's key: `irisc keys --party I` on party I's
//! host makes its own CA (dropped after signing), key (owner-only) and certificate, and public
//! files for the others; `irisc keys --join` on each host turns every party's public files into
//! `parties.toml` (trusting every party's CA, each peer pinned to exactly its listed
//! certificate, so a party's CA cannot stand in for another party). Certificates are valid for
//! `--days` days (365 by default); an expired peer certificate is refused at connect.
//!
//! Peers authenticate each other by those names, not by address, so the same certificates work
//! on any hosts: `--address I=HOST:PORT` writes party I's real address into `parties.toml`
//! (default `127.0.0.1:{base_port + I}`), and `--listen I=HOST:PORT` the address it binds where
//! that differs (a NAT or a container: `0.0.0.0:7100`).

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use irisc_runtime::net::session::count_word;
use irisc_runtime::net::MAX_PARTIES;
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};

/// Name of the configuration file `generate_keys` writes.
pub const PARTIES_TOML: &str = "parties.toml";

/// The setup timeout written into a fresh `parties.toml`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = irisc_runtime::net::config::DEFAULT_TIMEOUT.as_secs();

/// Where each party is reached (`address`) and what it binds (`listen`, `None`: its address);
/// one entry per party, indexed by party.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Addresses {
    pub address: Vec<String>,
    pub listen: Vec<Option<String>>,
}

impl Addresses {
    /// `parties` parties, party `i` at `127.0.0.1:{base_port + i}`, binding that address.
    pub fn localhost(parties: usize, base_port: u16) -> anyhow::Result<Addresses> {
        Addresses::from_flags(parties, base_port, &[], &[])
    }

    /// The addresses of `parties` parties (2 to `MAX_PARTIES`): `--address I=HOST:PORT` and
    /// `--listen I=HOST:PORT` (each at most once per party) over the localhost defaults of
    /// `base_port`.
    pub fn from_flags(
        parties: usize,
        base_port: u16,
        addresses: &[String],
        listens: &[String],
    ) -> anyhow::Result<Addresses> {
        if !(2..=MAX_PARTIES).contains(&parties) {
            bail!("--parties {parties}: a run has 2 to {MAX_PARTIES} parties");
        }
        let default_port = |i: u16| base_port.checked_add(i).filter(|_| base_port != 0);
        let given = parse_party_addresses("--address", parties, addresses)?;
        let mut address = Vec::with_capacity(parties);
        for (i, given) in given.into_iter().enumerate() {
            address.push(match given {
                Some(a) => a,
                None => match default_port(i as u16) {
                    Some(p) => format!("127.0.0.1:{p}"),
                    None => bail!(
                        "base port {base_port} is unusable: the {} parties need ports {base_port}..={base_port}+{} within 1..=65535",
                        count_word(parties),
                        parties - 1
                    ),
                },
            });
        }
        Ok(Addresses {
            address,
            listen: parse_party_addresses("--listen", parties, listens)?,
        })
    }

    /// The number of parties.
    pub fn count(&self) -> usize {
        self.address.len()
    }
}

/// `0 or 1`, `0, 1 or 2`: the party indices of a run of `parties`, as a choice.
fn index_choice(parties: usize) -> String {
    let first: Vec<String> = (0..parties - 1).map(|i| i.to_string()).collect();
    format!("{} or {}", first.join(", "), parties - 1)
}

/// `I=HOST:PORT` per party of `parties`, each party at most once.
fn parse_party_addresses(
    flag: &str,
    parties: usize,
    specs: &[String],
) -> anyhow::Result<Vec<Option<String>>> {
    let mut out: Vec<Option<String>> = vec![None; parties];
    for spec in specs {
        let Some((index, address)) = spec.split_once('=') else {
            bail!("{flag} {spec}: expected PARTY=HOST:PORT, e.g. {flag} 0=10.0.0.1:7100");
        };
        let i = match index.trim().parse::<usize>() {
            Ok(i) if i < parties => i,
            _ => bail!(
                "{flag} {spec}: the party is {}, not {index}",
                index_choice(parties)
            ),
        };
        if out[i].is_some() {
            bail!("{flag} {spec}: party {i} is given twice");
        }
        out[i] = Some(address.trim().to_string());
    }
    Ok(out)
}

/// `irisc keys`: writes the keys and `parties.toml` into `output` and says where each party is.
/// With `party`, only that party's key and public files (`irisc keys --party I`, run on its own
/// host); certificates are valid for `days` days.
pub fn run_keys(
    output: &Path,
    addresses: &Addresses,
    force: bool,
    days: u32,
    party: Option<usize>,
) -> anyhow::Result<std::process::ExitCode> {
    if days == 0 {
        bail!("--days 0: a certificate must be valid for at least a day");
    }
    if let Some(i) = party {
        generate_party_key(output, i, addresses, validity(days), force)?;
        eprintln!(
            "wrote party {i}'s key {} (owner-only: it never leaves this host) and its public files {}",
            output.join(format!("party{i}.key")).display(),
            public_files(i).join(", ")
        );
        eprintln!(
            "  give the public files to the other parties, collect theirs into {}, then run `irisc keys --join -o {}` there",
            output.display(),
            output.display()
        );
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let toml = generate_keys_valid(output, addresses, days, force)?;
    eprintln!("wrote keys and {}", toml.display());
    let certs = count_word(addresses.count());
    for i in 0..addresses.count() {
        let listen = match &addresses.listen[i] {
            Some(l) => format!(", binding {l}"),
            None => String::new(),
        };
        eprintln!(
            "  party {i} at {}{listen}: copy ca.crt, the {certs} party*.crt, party{i}.key and {PARTIES_TOML} to its host",
            addresses.address[i]
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// `irisc keys --join -o DIR`.
pub fn run_join(dir: &Path, force: bool) -> anyhow::Result<std::process::ExitCode> {
    let toml = join_party_keys(dir, force)?;
    eprintln!(
        "wrote {} and {} from every party's public files",
        dir.join("cas.crt").display(),
        toml.display()
    );
    Ok(std::process::ExitCode::SUCCESS)
}

/// Writes `ca.crt`, `party{i}.crt`, `party{i}.key` (i = 0, 1, 2) and `parties.toml` into `dir`
/// (created if missing), with party `i` at `127.0.0.1:{base_port + i}`. Returns the path of
/// `parties.toml`. Refuses to replace existing files unless `overwrite` is set.
pub fn generate_keys(dir: &Path, base_port: u16, overwrite: bool) -> anyhow::Result<PathBuf> {
    generate_keys_for(dir, 3, base_port, overwrite)
}

/// [`generate_keys`] for `parties` parties (2 to `MAX_PARTIES`).
pub fn generate_keys_for(
    dir: &Path,
    parties: usize,
    base_port: u16,
    overwrite: bool,
) -> anyhow::Result<PathBuf> {
    generate_keys_at(dir, &Addresses::localhost(parties, base_port)?, overwrite)
}

/// [`generate_keys`] with each party's address (and listen address) given; as many parties as
/// `addresses` has.
pub fn generate_keys_at(
    dir: &Path,
    addresses: &Addresses,
    overwrite: bool,
) -> anyhow::Result<PathBuf> {
    generate_keys_valid(dir, addresses, DEFAULT_VALIDITY_DAYS, overwrite)
}

/// [`generate_keys_at`] with certificates valid for `days` days.
pub fn generate_keys_valid(
    dir: &Path,
    addresses: &Addresses,
    days: u32,
    overwrite: bool,
) -> anyhow::Result<PathBuf> {
    let toml_text = parties_toml(addresses);
    // The runtime's own checks, before anything is written: a bad or repeated address is
    // refused here rather than when the parties start.
    irisc_runtime::net::PartiesConfig::parse(&toml_text, dir, &dir.join(PARTIES_TOML))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;

    let parties = addresses.count();
    let mut outputs = vec![dir.join(PARTIES_TOML), dir.join("ca.crt")];
    for i in 0..parties {
        outputs.push(dir.join(format!("party{i}.crt")));
        outputs.push(dir.join(format!("party{i}.key")));
    }
    let existing: Vec<String> = outputs
        .iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() && !overwrite {
        bail!(
            "refusing to overwrite existing key material: {} (remove it or ask to overwrite)",
            existing.join(", ")
        );
    }

    let valid = validity(days);
    let (ca_cert, issuer) = new_ca("irisc parties CA", valid)?;
    let mut party_files = Vec::with_capacity(parties);
    for i in 0..parties {
        party_files.push(party_certificate(i, &issuer, valid)?);
    }
    // The issuer owns the CA key; dropping it discards the key.
    drop(issuer);

    write_file(&dir.join("ca.crt"), ca_cert.as_bytes(), false, overwrite)?;
    for (i, (cert, key)) in party_files.iter().enumerate() {
        write_file(
            &dir.join(format!("party{i}.crt")),
            cert.as_bytes(),
            false,
            overwrite,
        )?;
        write_file(
            &dir.join(format!("party{i}.key")),
            key.as_bytes(),
            true,
            overwrite,
        )?;
    }
    // Written last, so a failure above never leaves a config that points at missing files.
    let toml_path = dir.join(PARTIES_TOML);
    write_file(&toml_path, toml_text.as_bytes(), false, overwrite)?;
    Ok(toml_path)
}

/// A fresh CA (path length 0: it signs party certificates only) valid over `valid`: its
/// certificate (PEM) and the issuer that owns its key, to be dropped once it has signed.
fn new_ca(
    common_name: &str,
    valid: (time::OffsetDateTime, time::OffsetDateTime),
) -> anyhow::Result<(String, Issuer<'static, KeyPair>)> {
    let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).context("generating the CA key")?;
    let mut ca_params = CertificateParams::default();
    ca_params.distinguished_name = name(common_name);
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    (ca_params.not_before, ca_params.not_after) = valid;
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .context("self-signing the CA certificate")?;
    Ok((ca_cert.pem(), Issuer::new(ca_params, ca_key)))
}

/// Party `i`'s key and certificate (DNS name `party{i}.irisc`, TLS server and client), signed by
/// `issuer`, valid over `valid`: (certificate PEM, key PEM).
fn party_certificate(
    i: usize,
    issuer: &Issuer<'static, KeyPair>,
    valid: (time::OffsetDateTime, time::OffsetDateTime),
) -> anyhow::Result<(String, String)> {
    let key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256)
        .with_context(|| format!("generating party {i}'s key"))?;
    let mut params = CertificateParams::new(vec![irisc_runtime::net::tls::server_name(i)])
        .context("building a party certificate")?;
    params.distinguished_name = name(&format!("irisc party {i}"));
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    // Each party is a TLS server (it accepts) and a TLS client (it dials).
    params.extended_key_usages = vec![
        ExtendedKeyUsagePurpose::ServerAuth,
        ExtendedKeyUsagePurpose::ClientAuth,
    ];
    (params.not_before, params.not_after) = valid;
    let cert = params
        .signed_by(&key, issuer)
        .with_context(|| format!("signing party {i}'s certificate"))?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn name(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    dn
}

fn parties_toml(addresses: &Addresses) -> String {
    parties_toml_with(addresses, "ca.crt")
}

/// `parties.toml` for `addresses`, trusting the CA certificates in `ca`.
fn parties_toml_with(addresses: &Addresses, ca: &str) -> String {
    let mut s = format!(
        "# written by `irisc keys`\n\
         timeout_secs = {DEFAULT_TIMEOUT_SECS}        # bound on connecting and on every receive\n\
         ca = \"{ca}\"\n"
    );
    for i in 0..addresses.count() {
        // TOML basic strings: the address is written with its quotes and backslashes escaped.
        let quoted = |a: &str| format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\""));
        let listen = match &addresses.listen[i] {
            Some(l) => format!("listen = {}        # what this party binds\n", quoted(l)),
            None => String::new(),
        };
        s.push_str(&format!(
            "\n[[party]]\nindex = {i}\naddress = {}\n{listen}cert = \"party{i}.crt\"\nkey = \"party{i}.key\"       # read only by that party\n",
            quoted(&addresses.address[i])
        ));
    }
    s
}

/// How long a certificate `irisc keys` makes is valid, by default: a deployment renews its keys
/// within a year; a party refuses a peer whose certificate has expired (at connect, by the TLS
/// verifier), so an old key cannot be used forever.
pub const DEFAULT_VALIDITY_DAYS: u32 = 365;

/// The validity window of a certificate made now for `days` days (from one hour ago, for clocks
/// slightly behind).
pub fn validity(days: u32) -> (time::OffsetDateTime, time::OffsetDateTime) {
    let now = time::OffsetDateTime::now_utc();
    (
        now - time::Duration::hours(1),
        now + time::Duration::days(i64::from(days)),
    )
}

/// The public files of party `i` made by `irisc keys --party I` on its own host: what it sends
/// the other parties.
pub fn public_files(i: usize) -> [String; 3] {
    [
        format!("party{i}.crt"),
        format!("party{i}-ca.crt"),
        format!("party{i}.pub.toml"),
    ]
}

/// `irisc keys --party I`: party `i`'s own key, made on its host. A fresh CA of its own signs its
/// certificate and is dropped (so no key exists that could sign another certificate for it); the
/// private key `party{i}.key` is owner-only and never leaves this host. The public part
/// (`party{i}.crt`, `party{i}-ca.crt` and `party{i}.pub.toml` with its address) goes to the other
/// parties, which `irisc keys --join` turns into `parties.toml` on every host.
pub fn generate_party_key(
    dir: &Path,
    i: usize,
    addresses: &Addresses,
    valid: (time::OffsetDateTime, time::OffsetDateTime),
    overwrite: bool,
) -> anyhow::Result<Vec<PathBuf>> {
    if i >= addresses.count() {
        bail!(
            "--party {i}: the parties are {}",
            index_choice(addresses.count())
        );
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let [cert_name, ca_name, pub_name] = public_files(i);
    let key_path = dir.join(format!("party{i}.key"));
    let outputs = [
        key_path.clone(),
        dir.join(&cert_name),
        dir.join(&ca_name),
        dir.join(&pub_name),
    ];
    let existing: Vec<String> = outputs
        .iter()
        .filter(|p| p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !existing.is_empty() && !overwrite {
        bail!(
            "refusing to overwrite existing key material: {} (remove it or ask to overwrite)",
            existing.join(", ")
        );
    }
    let (ca_cert, issuer) = new_ca(&format!("irisc party {i} CA"), valid)?;
    let (cert, key) = party_certificate(i, &issuer, valid)?;
    drop(issuer);
    write_file(&key_path, key.as_bytes(), true, overwrite)?;
    write_file(&dir.join(&cert_name), cert.as_bytes(), false, overwrite)?;
    write_file(&dir.join(&ca_name), ca_cert.as_bytes(), false, overwrite)?;
    let quoted = |a: &str| format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\""));
    let listen = match &addresses.listen[i] {
        Some(l) => format!("listen = {}\n", quoted(l)),
        None => String::new(),
    };
    let fragment = format!(
        "# party {i}'s public entry, written by `irisc keys --party {i}`; give it to the other parties\n\
         index = {i}\nparties = {}\naddress = {}\n{listen}cert = \"{cert_name}\"\nca = \"{ca_name}\"\n",
        addresses.count(),
        quoted(&addresses.address[i])
    );
    write_file(&dir.join(&pub_name), fragment.as_bytes(), false, overwrite)?;
    Ok(outputs.to_vec())
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PublicEntry {
    index: usize,
    parties: usize,
    address: String,
    listen: Option<String>,
    cert: String,
    ca: String,
}

/// `irisc keys --join DIR`: on any party's host, once DIR holds every party's public files (and
/// this host's own key): `cas.crt` (each party's CA) and `parties.toml`. Each party trusts the
/// others' CAs and, at connect, requires each peer to present exactly the certificate listed for
/// it, so no party can stand in for another even though all CAs are trusted.
pub fn join_party_keys(dir: &Path, overwrite: bool) -> anyhow::Result<PathBuf> {
    let mut entries: Vec<PublicEntry> = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))? {
        let path = e?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name.starts_with("party") && name.ends_with(".pub.toml")) {
            continue;
        }
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let entry: PublicEntry =
            toml::from_str(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        entries.push(entry);
    }
    let Some(n) = entries.first().map(|e| e.parties) else {
        bail!(
            "{} holds no party*.pub.toml: copy every party's public files (from `irisc keys --party I`) here first",
            dir.display()
        );
    };
    entries.sort_by_key(|e| e.index);
    if let Some(e) = entries.iter().find(|e| e.parties != n) {
        bail!(
            "party {}'s entry is for {} parties, party {}'s for {n}",
            e.index,
            e.parties,
            entries[0].index
        );
    }
    let have: Vec<usize> = entries.iter().map(|e| e.index).collect();
    if have != (0..n).collect::<Vec<_>>() {
        let missing: Vec<String> = (0..n)
            .filter(|i| !have.contains(i))
            .map(|i| i.to_string())
            .collect();
        bail!(
            "{}: the public entries of parties {} are missing (each comes from `irisc keys --party I` on that party's host)",
            dir.display(),
            if missing.is_empty() { "(repeated)".to_string() } else { missing.join(", ") }
        );
    }
    let mut cas = String::new();
    for e in &entries {
        for f in [&e.cert, &e.ca] {
            if !dir.join(f).is_file() {
                bail!("party {}'s {f} is not in {}", e.index, dir.display());
            }
        }
        cas.push_str(
            &std::fs::read_to_string(dir.join(&e.ca))
                .with_context(|| format!("cannot read {}", e.ca))?,
        );
    }
    let addresses = Addresses {
        address: entries.iter().map(|e| e.address.clone()).collect(),
        listen: entries.iter().map(|e| e.listen.clone()).collect(),
    };
    let toml_text = parties_toml_with(&addresses, "cas.crt");
    irisc_runtime::net::PartiesConfig::parse(&toml_text, dir, &dir.join(PARTIES_TOML))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    write_file(&dir.join("cas.crt"), cas.as_bytes(), false, overwrite)?;
    let toml_path = dir.join(PARTIES_TOML);
    write_file(&toml_path, toml_text.as_bytes(), false, overwrite)?;
    Ok(toml_path)
}

/// Creates `path` with `contents`. A secret file is created with mode 0600 by `open` itself, so
/// the key is never briefly readable by others; an existing one is removed first because the
/// mode given to `open` only applies to new files.
fn write_file(path: &Path, contents: &[u8], secret: bool, overwrite: bool) -> anyhow::Result<()> {
    if overwrite && path.exists() {
        std::fs::remove_file(path).with_context(|| format!("cannot replace {}", path.display()))?;
    }
    let mut opts = OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(if secret { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = secret;
    let mut f = opts
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(contents)
        .with_context(|| format!("cannot write {}", path.display()))?;
    f.sync_all()
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use irisc_runtime::net::{PartiesConfig, TlsTransport, Transport};

    /// A base port with three free consecutive loopback ports (best effort: free when chosen).
    fn free_base_port() -> u16 {
        free_base_port_for(3)
    }

    /// A base port with `n` free consecutive loopback ports, as `irisc run` chooses them.
    fn free_base_port_for(n: u16) -> u16 {
        crate::driver::run::free_base_port_for(n).expect("free loopback ports")
    }

    /// Each party's key made on its own "host" (a folder of its own), the public files
    /// exchanged, `--join` on every host: each host holds its own key only, and the three
    /// configurations authenticate the parties to each other. Returns the three tempdirs and
    /// their `parties.toml`.
    fn per_party_setup(
        valid: [(time::OffsetDateTime, time::OffsetDateTime); 3],
    ) -> (Vec<tempfile::TempDir>, Vec<PathBuf>) {
        let base = free_base_port();
        let addrs = Addresses::localhost(3, base).unwrap();
        let hosts: Vec<tempfile::TempDir> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
        for (i, h) in hosts.iter().enumerate() {
            generate_party_key(h.path(), i, &addrs, valid[i], false).unwrap();
        }
        for (i, from) in hosts.iter().enumerate() {
            for (j, to) in hosts.iter().enumerate() {
                if i != j {
                    for f in public_files(i) {
                        std::fs::copy(from.path().join(&f), to.path().join(&f)).unwrap();
                    }
                }
            }
        }
        let tomls = hosts
            .iter()
            .map(|h| join_party_keys(h.path(), false).unwrap())
            .collect();
        (hosts, tomls)
    }

    /// One message around the ring over TLS, each party with its own host's configuration.
    fn ring(tomls: &[PathBuf]) -> Vec<Result<Vec<u8>, String>> {
        (0..3)
            .map(|me| {
                let mut cfg = PartiesConfig::load(&tomls[me]).unwrap();
                cfg.timeout = std::time::Duration::from_secs(10);
                std::thread::spawn(move || -> Result<Vec<u8>, String> {
                    let mut t = TlsTransport::connect(&cfg, me, b"fingerprint")
                        .map_err(|e| e.to_string())?;
                    t.send(t.next(), vec![me as u8; 3])
                        .map_err(|e| e.to_string())?;
                    let got = t.recv(t.prev()).map_err(|e| e.to_string())?;
                    t.close().map_err(|e| e.to_string())?;
                    Ok(got)
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect()
    }

    #[test]
    fn per_party_keys_made_on_their_own_hosts_connect() {
        let (hosts, tomls) = per_party_setup([validity(30); 3]);
        for (i, h) in hosts.iter().enumerate() {
            let keys: Vec<String> = std::fs::read_dir(h.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".key") || n.contains("PRIVATE"))
                .collect();
            assert_eq!(keys, [format!("party{i}.key")], "host {i} holds {keys:?}");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = std::fs::metadata(h.path().join(format!("party{i}.key")))
                    .unwrap()
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o600);
            }
            for f in ["cas.crt", "party0-ca.crt", "party0.crt", "party0.pub.toml"] {
                assert!(!std::fs::read_to_string(h.path().join(f))
                    .unwrap()
                    .contains("PRIVATE KEY"));
            }
        }
        for (me, r) in ring(&tomls).into_iter().enumerate() {
            assert_eq!(r.unwrap(), vec![((me + 2) % 3) as u8; 3]);
        }
    }

    #[test]
    fn an_expired_certificate_is_refused_at_connect() {
        let now = time::OffsetDateTime::now_utc();
        let expired = (
            now - time::Duration::days(10),
            now - time::Duration::days(1),
        );
        let (_hosts, tomls) = per_party_setup([validity(30), validity(30), expired]);
        let results = ring(&tomls);
        let errors: Vec<String> = results.into_iter().filter_map(|r| r.err()).collect();
        assert!(!errors.is_empty());
        // Which party's link fails first depends on scheduling: a party that accepts party 2
        // names it, one whose link party 2 closed relays the acceptor's reason.
        assert!(
            errors.iter().any(|e| {
                e.contains("party 2's certificate has expired")
                    || e.contains("the connecting peer's certificate has expired")
            }),
            "{errors:?}"
        );
    }

    #[test]
    fn join_says_which_public_entries_are_missing() {
        let base = free_base_port();
        let addrs = Addresses::localhost(3, base).unwrap();
        let dir = tempfile::tempdir().unwrap();
        generate_party_key(dir.path(), 1, &addrs, validity(30), false).unwrap();
        let e = join_party_keys(dir.path(), false).unwrap_err().to_string();
        assert!(e.contains("parties 0, 2 are missing"), "{e}");
        let empty = tempfile::tempdir().unwrap();
        let e = join_party_keys(empty.path(), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no party*.pub.toml"), "{e}");
        // A second key for the same party is refused without --force.
        let e = generate_party_key(dir.path(), 1, &addrs, validity(30), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("refusing to overwrite"), "{e}");
        let e = generate_party_key(dir.path(), 3, &addrs, validity(30), false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--party 3"), "{e}");
    }

    #[test]
    fn keys_load_and_connect() {
        let dir = tempfile::tempdir().unwrap();
        let base = free_base_port();
        let toml = generate_keys(dir.path(), base, false).unwrap();
        assert_eq!(toml, dir.path().join("parties.toml"));

        #[cfg(unix)]
        for i in 0..3 {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(format!("party{i}.key")))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600, "party{i}.key");
        }
        // The CA key is never written.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 8, "{names:?}");
        assert!(!std::fs::read_to_string(dir.path().join("ca.crt"))
            .unwrap()
            .contains("PRIVATE KEY"));

        let cfg = PartiesConfig::load(&toml).unwrap();
        assert_eq!(cfg.timeout, std::time::Duration::from_secs(30));
        assert_eq!(cfg.parties[2].address, format!("127.0.0.1:{}", base + 2));

        // The generated material really authenticates three parties to each other.
        for (me, r) in ring(&[toml.clone(), toml.clone(), toml])
            .into_iter()
            .enumerate()
        {
            assert_eq!(r.unwrap(), vec![((me + 2) % 3) as u8; 3]);
        }
    }

    #[test]
    fn two_party_keys_load_and_connect() {
        let dir = tempfile::tempdir().unwrap();
        let base = free_base_port_for(2);
        let toml = generate_keys_for(dir.path(), 2, base, false).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "ca.crt",
                "parties.toml",
                "party0.crt",
                "party0.key",
                "party1.crt",
                "party1.key"
            ]
        );
        let text = std::fs::read_to_string(&toml).unwrap();
        assert_eq!(text.matches("[[party]]").count(), 2, "{text}");

        let mut cfg = PartiesConfig::load(&toml).unwrap();
        assert_eq!(cfg.count(), 2);
        assert_eq!(cfg.parties[1].address, format!("127.0.0.1:{}", base + 1));
        cfg.timeout = std::time::Duration::from_secs(10);

        // The generated material authenticates the two parties to each other.
        let results: Vec<_> = (0..2)
            .map(|me| {
                let cfg = cfg.clone();
                std::thread::spawn(move || -> Result<(usize, Vec<u8>), String> {
                    let mut t = TlsTransport::connect(&cfg, me, b"fingerprint")
                        .map_err(|e| e.to_string())?;
                    assert_eq!((t.parties(), t.next(), t.prev()), (2, 1 - me, 1 - me));
                    t.send(t.next(), vec![me as u8; 3])
                        .map_err(|e| e.to_string())?;
                    let got = t.recv(t.prev()).map_err(|e| e.to_string())?;
                    t.close().map_err(|e| e.to_string())?;
                    Ok((cfg.count(), got))
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        for (me, r) in results.into_iter().enumerate() {
            assert_eq!(r.unwrap(), (2, vec![(1 - me) as u8; 3]));
        }
    }

    #[test]
    fn party_count_is_checked() {
        for bad in [0, 1, 9] {
            let err = Addresses::from_flags(bad, 7100, &[], &[])
                .unwrap_err()
                .to_string();
            assert_eq!(err, format!("--parties {bad}: a run has 2 to 8 parties"));
        }
        let flags = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let err = Addresses::from_flags(2, 7100, &flags(&["2=10.0.0.1:7000"]), &[])
            .unwrap_err()
            .to_string();
        assert!(err.ends_with("the party is 0 or 1, not 2"), "{err}");
        let err = Addresses::from_flags(2, 65535, &[], &[])
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("the two parties need ports 65535..=65535+1"),
            "{err}"
        );
        let four = Addresses::from_flags(4, 7100, &flags(&["3=10.0.0.4:7000"]), &[]).unwrap();
        assert_eq!(four.count(), 4);
        assert_eq!(four.address[2], "127.0.0.1:7102");
        assert_eq!(four.address[3], "10.0.0.4:7000");
    }

    #[test]
    fn keys_takes_a_party_count() {
        use super::super::cli::{Cli, Command};
        use clap::Parser;
        let parties = |args: &[&str]| {
            let argv = ["irisc", "keys", "-o", "k"].iter().chain(args);
            Cli::try_parse_from(argv).map(|cli| match cli.command {
                Command::Keys { parties, .. } => parties,
                _ => panic!("not keys"),
            })
        };
        assert_eq!(parties(&[]).unwrap(), 3);
        assert_eq!(parties(&["--parties", "2"]).unwrap(), 2);
        for bad in ["1", "9"] {
            let e = parties(&["--parties", bad]).unwrap_err().to_string();
            assert!(e.contains("--parties") && e.contains("2..=8"), "{e}");
        }
    }

    #[test]
    fn refuses_to_overwrite_unless_asked() {
        let dir = tempfile::tempdir().unwrap();
        generate_keys(dir.path(), 7100, false).unwrap();
        let old = std::fs::read(dir.path().join("party0.key")).unwrap();
        let err = generate_keys(dir.path(), 7100, false)
            .unwrap_err()
            .to_string();
        assert!(err.contains("refusing to overwrite"), "{err}");
        assert_eq!(std::fs::read(dir.path().join("party0.key")).unwrap(), old);
        generate_keys(dir.path(), 7200, true).unwrap();
        assert_ne!(std::fs::read(dir.path().join("party0.key")).unwrap(), old);
        let cfg = PartiesConfig::load(&dir.path().join("parties.toml")).unwrap();
        assert_eq!(cfg.parties[0].address, "127.0.0.1:7200");
        assert!(generate_keys(dir.path(), 65534, true).is_err());
    }

    #[test]
    fn writes_the_addresses_given() {
        let dir = tempfile::tempdir().unwrap();
        let flags = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let addresses = Addresses::from_flags(
            3,
            7100,
            &flags(&[
                "0=10.0.0.1:7000",
                "2=party2.example.org:7002",
                "1=[2001:db8::1]:7001",
            ]),
            &flags(&["2=0.0.0.0:7002"]),
        )
        .unwrap();
        let toml = generate_keys_at(dir.path(), &addresses, false).unwrap();
        let cfg = PartiesConfig::load(&toml).unwrap();
        assert_eq!(cfg.parties[0].address, "10.0.0.1:7000");
        assert_eq!(cfg.parties[0].listen, "10.0.0.1:7000");
        assert_eq!(cfg.parties[1].address, "[2001:db8::1]:7001");
        assert_eq!(cfg.parties[2].address, "party2.example.org:7002");
        assert_eq!(cfg.parties[2].listen, "0.0.0.0:7002");
        // The certificates name the parties, not the hosts: TLS checks `party{i}.irisc`, so
        // the same certificates load for any addresses.
        for i in 0..3 {
            let chain = cfg.read_cert_chain(i).unwrap();
            assert!(!chain.is_empty());
        }
        // A party left out stays on localhost at the base port.
        let partial = Addresses::from_flags(3, 7200, &flags(&["1=10.0.0.2:7000"]), &[]).unwrap();
        assert_eq!(partial.address[0], "127.0.0.1:7200");
        assert_eq!(partial.address[1], "10.0.0.2:7000");
        assert_eq!(partial.address[2], "127.0.0.1:7202");
    }

    #[test]
    fn refuses_bad_addresses_before_writing() {
        let flags = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for (spec, expect) in [
            ("3=10.0.0.1:7000", "the party is 0, 1 or 2"),
            ("0:10.0.0.1:7000", "expected PARTY=HOST:PORT"),
        ] {
            let err = Addresses::from_flags(3, 7100, &flags(&[spec]), &[])
                .unwrap_err()
                .to_string();
            assert!(err.contains(expect), "{spec}: {err}");
        }
        let err = Addresses::from_flags(3, 7100, &flags(&["0=a:1", "0=b:2"]), &[])
            .unwrap_err()
            .to_string();
        assert!(err.contains("given twice"), "{err}");
        for bad in [
            vec!["0=10.0.0.1"],
            vec!["0=10.0.0.1:7000", "1=10.0.0.1:7000"],
        ] {
            let dir = tempfile::tempdir().unwrap();
            let a = Addresses::from_flags(3, 7100, &flags(&bad), &[]).unwrap();
            let err = generate_keys_at(dir.path(), &a, false)
                .unwrap_err()
                .to_string();
            assert!(err.contains("bad address"), "{bad:?}: {err}");
            assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{bad:?}");
        }
    }

    /// Three parties at three different addresses (loopback aliases stand in for three hosts)
    /// authenticate each other with the certificates `irisc keys` made for them.
    #[test]
    fn parties_at_distinct_addresses_connect() {
        let hosts = ["127.0.0.1", "127.0.0.2", "127.0.0.3"];
        let port = (0..200)
            .find_map(|_| {
                let l = std::net::TcpListener::bind("127.0.0.1:0").ok()?;
                let p = l.local_addr().ok()?.port();
                drop(l);
                hosts
                    .iter()
                    .all(|h| std::net::TcpListener::bind((*h, p)).is_ok())
                    .then_some(p)
            })
            .expect("a port free on the three loopback addresses");
        let flags: Vec<String> = (0..3).map(|i| format!("{i}={}:{port}", hosts[i])).collect();
        let dir = tempfile::tempdir().unwrap();
        let toml = generate_keys_at(
            dir.path(),
            &Addresses::from_flags(3, 7100, &flags, &[]).unwrap(),
            false,
        )
        .unwrap();
        let mut cfg = PartiesConfig::load(&toml).unwrap();
        cfg.timeout = std::time::Duration::from_secs(10);
        let results: Vec<_> = (0..3)
            .map(|me| {
                let cfg = cfg.clone();
                std::thread::spawn(move || -> Result<Vec<u8>, String> {
                    let mut t = TlsTransport::connect(&cfg, me, b"fingerprint")
                        .map_err(|e| e.to_string())?;
                    t.send(t.next(), vec![me as u8; 2])
                        .map_err(|e| e.to_string())?;
                    let got = t.recv(t.prev()).map_err(|e| e.to_string())?;
                    t.close().map_err(|e| e.to_string())?;
                    Ok(got)
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect();
        for (me, r) in results.into_iter().enumerate() {
            assert_eq!(r.unwrap(), vec![((me + 2) % 3) as u8; 2], "party {me}");
        }
    }
}
