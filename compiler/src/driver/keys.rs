//! `irisc keys`: TLS material and a `parties.toml` for a three-party deployment.
//!
//! A fresh CA signs one certificate per party (ECDSA P-256, DNS name `party{i}.irisc`, usable as
//! TLS server and client). The CA's private key only lives in memory while signing and is then
//! dropped, so no one can later mint a certificate the parties would accept. Private keys are
//! created readable by their owner only, from the first byte on.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, PKCS_ECDSA_P256_SHA256,
};

/// Name of the configuration file `generate_keys` writes.
pub const PARTIES_TOML: &str = "parties.toml";

/// The setup timeout written into a fresh `parties.toml`, in seconds.
pub const DEFAULT_TIMEOUT_SECS: u64 = irisc_runtime::net::config::DEFAULT_TIMEOUT.as_secs();

/// `irisc keys`: writes the keys and `parties.toml` into `output` and says so.
pub fn run_keys(
    output: &Path,
    base_port: u16,
    force: bool,
) -> anyhow::Result<std::process::ExitCode> {
    let toml = generate_keys(output, base_port, force)?;
    eprintln!("wrote keys and {}", toml.display());
    Ok(std::process::ExitCode::SUCCESS)
}

/// Writes `ca.crt`, `party{i}.crt`, `party{i}.key` (i = 0, 1, 2) and `parties.toml` into `dir`
/// (created if missing), with party `i` at `127.0.0.1:{base_port + i}`. Returns the path of
/// `parties.toml`. Refuses to replace existing files unless `overwrite` is set.
pub fn generate_keys(dir: &Path, base_port: u16, overwrite: bool) -> anyhow::Result<PathBuf> {
    if base_port == 0 || base_port.checked_add(2).is_none() {
        bail!("base port {base_port} is unusable: the three parties need ports {base_port}..={base_port}+2 within 1..=65535");
    }
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;

    let mut outputs = vec![dir.join(PARTIES_TOML), dir.join("ca.crt")];
    for i in 0..3 {
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

    let ca_key = KeyPair::generate_for(&PKCS_ECDSA_P256_SHA256).context("generating the CA key")?;
    let mut ca_params = CertificateParams::default();
    ca_params.distinguished_name = name("irisc parties CA");
    // Path length 0: the CA signs party certificates only, never another CA.
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca_params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params
        .self_signed(&ca_key)
        .context("self-signing the CA certificate")?;
    // The issuer owns the CA key; dropping it at the end of this function discards the key.
    let issuer = Issuer::new(ca_params, ca_key);

    let mut party_files = Vec::with_capacity(3);
    for i in 0..3 {
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
        let cert = params
            .signed_by(&key, &issuer)
            .with_context(|| format!("signing party {i}'s certificate"))?;
        party_files.push((cert.pem(), key.serialize_pem()));
    }
    drop(issuer);

    write_file(
        &dir.join("ca.crt"),
        ca_cert.pem().as_bytes(),
        false,
        overwrite,
    )?;
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
    write_file(
        &toml_path,
        parties_toml(base_port).as_bytes(),
        false,
        overwrite,
    )?;
    Ok(toml_path)
}

fn name(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    dn
}

fn parties_toml(base_port: u16) -> String {
    let mut s = format!(
        "# written by `irisc keys`\n\
         timeout_secs = {DEFAULT_TIMEOUT_SECS}        # bound on connecting and on every receive\n\
         ca = \"ca.crt\"\n"
    );
    for i in 0..3u16 {
        s.push_str(&format!(
            "\n[[party]]\nindex = {i}\naddress = \"127.0.0.1:{}\"\ncert = \"party{i}.crt\"\nkey = \"party{i}.key\"       # read only by that party\n",
            base_port + i
        ));
    }
    s
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

    /// A base port with three free consecutive loopback ports (best effort; the OS may reuse them).
    fn free_base_port() -> u16 {
        for _ in 0..200 {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let base = l.local_addr().unwrap().port();
            drop(l);
            if base > 65000 || base == 0 {
                continue;
            }
            if (0..3).all(|i| std::net::TcpListener::bind(("127.0.0.1", base + i)).is_ok()) {
                return base;
            }
        }
        panic!("no three consecutive free ports");
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

        let mut cfg = PartiesConfig::load(&toml).unwrap();
        assert_eq!(cfg.timeout, std::time::Duration::from_secs(30));
        assert_eq!(cfg.parties[2].address, format!("127.0.0.1:{}", base + 2));
        cfg.timeout = std::time::Duration::from_secs(10);

        // The generated material really authenticates three parties to each other.
        let results: Vec<_> = (0..3)
            .map(|me| {
                let cfg = cfg.clone();
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
            .collect();
        for (me, r) in results.into_iter().enumerate() {
            assert_eq!(r.unwrap(), vec![((me + 2) % 3) as u8; 3]);
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
}
