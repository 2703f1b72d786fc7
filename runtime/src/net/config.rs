//! `parties.toml`: where the three parties listen, which CA they trust, and which certificate and
//! key each one uses.
//!
//! ```toml
//! timeout_secs = 30        # bound on connecting and on every receive
//! ca = "ca.crt"
//! [[party]]
//! index = 0
//! address = "127.0.0.1:7100"
//! cert = "party0.crt"
//! key = "party0.key"       # read only by that party
//! ```
//!
//! Relative paths resolve against the directory of the toml file. Certificates of all parties are
//! public and read by everyone (each side checks that its peer presents exactly the configured
//! certificate); a key file is read only by its own party, and only if no other user can read it.

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use serde::Deserialize;

/// The one default bound on connecting and on every receive: used when `timeout_secs` is absent,
/// written by `irisc keys` into a fresh `parties.toml`, and `irisc run`'s `--timeout` default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// What is wrong with `parties.toml` or with a file it names.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The toml is malformed; `message` carries the toml crate's line and column.
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    #[error("{}: expected exactly three [[party]] entries (indices 0, 1, 2), found {found}", path.display())]
    PartyCount { path: PathBuf, found: usize },
    #[error("{}: party index {index} is out of range (parties are 0, 1 and 2)", path.display())]
    IndexOutOfRange { path: PathBuf, index: u64 },
    #[error("{}: party {index} is listed more than once", path.display())]
    DuplicateIndex { path: PathBuf, index: usize },
    #[error("{}: party {index} has a bad address {address:?}: {reason}", path.display())]
    BadAddress {
        path: PathBuf,
        index: usize,
        address: String,
        reason: String,
    },
    #[error("{}: timeout_secs must be a positive number of seconds (at most one day), got {value}", path.display())]
    BadTimeout { path: PathBuf, value: f64 },
    #[error("{} is accessible by other users (mode {mode:03o}); run chmod 600 {}", name_of(path), path.display())]
    KeyPermissions { path: PathBuf, mode: u32 },
    #[error("{}: {detail}", path.display())]
    BadPem { path: PathBuf, detail: String },
    #[error("no party {index} in the configuration (parties are 0, 1 and 2)")]
    NoSuchParty { index: usize },
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// One `[[party]]` entry, with paths already resolved against the toml's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyEntry {
    /// 0, 1 or 2.
    pub index: usize,
    /// `host:port` the other parties connect to.
    pub address: String,
    /// `host:port` this party binds; defaults to `address` (set it when the public address is
    /// not a local interface, e.g. behind NAT).
    pub listen: String,
    /// PEM certificate (chain) of this party, signed by the CA.
    pub cert: PathBuf,
    /// PEM private key (PKCS#8, SEC1 or PKCS#1) of this party.
    pub key: PathBuf,
}

/// A loaded and checked `parties.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct PartiesConfig {
    /// Bound on connection setup and on every receive.
    pub timeout: Duration,
    /// PEM certificate of the CA that signed all three party certificates.
    pub ca: PathBuf,
    /// The three parties, in index order (`parties[i].index == i`).
    pub parties: [PartyEntry; 3],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    timeout_secs: Option<f64>,
    ca: PathBuf,
    #[serde(default)]
    party: Vec<RawParty>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawParty {
    index: u64,
    address: String,
    listen: Option<String>,
    cert: PathBuf,
    key: PathBuf,
}

impl PartiesConfig {
    /// Reads and checks `parties.toml`: exactly three parties with indices 0, 1, 2, well-formed
    /// addresses, a positive timeout. Paths are resolved against the file's directory; the files
    /// they name are not opened here (see [`PartiesConfig::read_key`] and friends).
    pub fn load(path: &Path) -> Result<PartiesConfig, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        Self::parse(&text, base, path)
    }

    /// Parses the text of a `parties.toml`; `base` is the directory relative paths resolve
    /// against and `origin` names the file in error messages.
    pub fn parse(text: &str, base: &Path, origin: &Path) -> Result<PartiesConfig, ConfigError> {
        let err_path = || origin.to_path_buf();
        let raw: RawConfig = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: err_path(),
            // The toml error's Display already says "TOML parse error at line L, column C" and
            // quotes the offending line.
            message: e.to_string().trim_end().to_string(),
        })?;

        let timeout = match raw.timeout_secs {
            None => DEFAULT_TIMEOUT,
            Some(v) if v.is_finite() && v > 0.0 && v <= 86_400.0 => Duration::from_secs_f64(v),
            Some(v) => {
                return Err(ConfigError::BadTimeout {
                    path: err_path(),
                    value: v,
                })
            }
        };

        if raw.party.len() != 3 {
            return Err(ConfigError::PartyCount {
                path: err_path(),
                found: raw.party.len(),
            });
        }
        let mut slots: [Option<PartyEntry>; 3] = Default::default();
        for p in raw.party {
            let index = match usize::try_from(p.index) {
                Ok(i) if i < 3 => i,
                _ => {
                    return Err(ConfigError::IndexOutOfRange {
                        path: err_path(),
                        index: p.index,
                    })
                }
            };
            if slots[index].is_some() {
                return Err(ConfigError::DuplicateIndex {
                    path: err_path(),
                    index,
                });
            }
            let listen = p.listen.unwrap_or_else(|| p.address.clone());
            for addr in [&p.address, &listen] {
                check_address(addr).map_err(|reason| ConfigError::BadAddress {
                    path: err_path(),
                    index,
                    address: addr.clone(),
                    reason,
                })?;
            }
            slots[index] = Some(PartyEntry {
                index,
                address: p.address,
                listen,
                cert: base.join(p.cert),
                key: base.join(p.key),
            });
        }
        // Three entries, no duplicates, all below 3: every slot is filled.
        let [Some(a), Some(b), Some(c)] = slots else {
            return Err(ConfigError::PartyCount {
                path: err_path(),
                found: 3,
            });
        };
        // Two parties at one address would have a party dial itself.
        for (x, y) in [(&a, &b), (&a, &c), (&b, &c)] {
            if x.address == y.address {
                return Err(ConfigError::BadAddress {
                    path: err_path(),
                    index: y.index,
                    address: y.address.clone(),
                    reason: format!("party {} has the same address", x.index),
                });
            }
        }
        Ok(PartiesConfig {
            timeout,
            ca: base.join(raw.ca),
            parties: [a, b, c],
        })
    }

    /// The entry of party `index`.
    pub fn party(&self, index: usize) -> Result<&PartyEntry, ConfigError> {
        self.parties
            .get(index)
            .ok_or(ConfigError::NoSuchParty { index })
    }

    /// The CA certificate(s) every party trusts.
    pub fn read_ca(&self) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
        read_certs(&self.ca)
    }

    /// The certificate chain of party `index`, end-entity certificate first.
    pub fn read_cert_chain(
        &self,
        index: usize,
    ) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
        read_certs(&self.party(index)?.cert)
    }

    /// The private key of party `index`. Refuses a key file that users other than its owner can
    /// access, so a misconfigured deployment fails loudly instead of leaking the key.
    pub fn read_key(&self, index: usize) -> Result<PrivateKeyDer<'static>, ConfigError> {
        let path = &self.party(index)?.key;
        check_key_permissions(path)?;
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
            path: path.clone(),
            source,
        })?;
        // The parser's error never contains key bytes, only what kind of PEM problem it met.
        PrivateKeyDer::from_pem_slice(&bytes).map_err(|e| ConfigError::BadPem {
            path: path.clone(),
            detail: format!(
                "no usable private key (PKCS#8, SEC1 or PKCS#1 PEM): {}",
                pem_error(&e)
            ),
        })
    }
}

fn pem_error(e: &rustls_pki_types::pem::Error) -> String {
    use rustls_pki_types::pem::Error as E;
    match e {
        E::NoItemsFound => "no PEM item of the expected kind".into(),
        E::MissingSectionEnd { .. } => "a PEM section has no END line".into(),
        E::IllegalSectionStart { .. } => "malformed BEGIN line".into(),
        E::Base64Decode(_) => "bad base64 inside a PEM section".into(),
        E::Io(io) => io.to_string(),
        other => format!("{other:?}"),
    }
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::BadPem {
            path: path.to_path_buf(),
            detail: pem_error(&e),
        })?;
    if certs.is_empty() {
        return Err(ConfigError::BadPem {
            path: path.to_path_buf(),
            detail: "no CERTIFICATE section found".into(),
        });
    }
    Ok(certs)
}

#[cfg(unix)]
fn check_key_permissions(path: &Path) -> Result<(), ConfigError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(ConfigError::KeyPermissions {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_key_permissions(_path: &Path) -> Result<(), ConfigError> {
    Ok(())
}

/// Checks `host:port` syntax without resolving names (resolution happens when connecting, so a
/// config can be checked on a machine that cannot see the other parties' names).
fn check_address(address: &str) -> Result<(), String> {
    if address.parse::<SocketAddr>().is_ok() {
        return Ok(());
    }
    let Some((host, port)) = address.rsplit_once(':') else {
        return Err("expected host:port".into());
    };
    match port.parse::<u16>() {
        Ok(0) => return Err("port 0 is not allowed".into()),
        Ok(_) => {}
        Err(_) => return Err(format!("{port:?} is not a port number (1-65535)")),
    }
    if host.is_empty() {
        return Err("missing host".into());
    }
    if host.starts_with('[') {
        return Err("malformed IPv6 address (write [addr]:port)".into());
    }
    let valid_label = |l: &str| {
        !l.is_empty() && l.len() <= 63 && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    };
    if host.len() > 253 || !host.split('.').all(valid_label) {
        return Err(format!("{host:?} is neither an IP address nor a host name"));
    }
    Ok(())
}

impl fmt::Display for PartyEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "party {} at {}", self.index, self.address)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PartiesConfig, ConfigError> {
        PartiesConfig::parse(
            text,
            Path::new("/etc/irisc"),
            Path::new("/etc/irisc/parties.toml"),
        )
    }

    const GOOD: &str = r#"
timeout_secs = 2.5
ca = "ca.crt"
[[party]]
index = 1
address = "127.0.0.1:7101"
cert = "party1.crt"
key = "/abs/party1.key"
[[party]]
index = 0
address = "[::1]:7100"
cert = "party0.crt"
key = "party0.key"
[[party]]
index = 2
address = "party2.example.org:7102"
listen = "0.0.0.0:7102"
cert = "party2.crt"
key = "party2.key"
"#;

    #[test]
    fn good_config_resolves_paths_and_orders_parties() {
        let c = parse(GOOD).unwrap();
        assert_eq!(c.timeout, Duration::from_millis(2500));
        assert_eq!(c.ca, Path::new("/etc/irisc/ca.crt"));
        assert_eq!(c.parties[0].address, "[::1]:7100");
        assert_eq!(c.parties[0].listen, "[::1]:7100");
        assert_eq!(c.parties[1].key, Path::new("/abs/party1.key"));
        assert_eq!(c.parties[2].listen, "0.0.0.0:7102");
        assert_eq!(c.parties[2].cert, Path::new("/etc/irisc/party2.crt"));
    }

    #[test]
    fn errors_are_specific() {
        let two = GOOD
            .split("[[party]]")
            .take(3)
            .collect::<Vec<_>>()
            .join("[[party]]");
        assert!(matches!(
            parse(&two),
            Err(ConfigError::PartyCount { found: 2, .. })
        ));
        let dup = GOOD.replace("index = 2", "index = 1");
        assert!(matches!(
            parse(&dup),
            Err(ConfigError::DuplicateIndex { index: 1, .. })
        ));
        let range = GOOD.replace("index = 2", "index = 3");
        assert!(matches!(
            parse(&range),
            Err(ConfigError::IndexOutOfRange { index: 3, .. })
        ));
        let addr = GOOD.replace("127.0.0.1:7101", "127.0.0.1");
        let e = parse(&addr).unwrap_err();
        assert!(matches!(e, ConfigError::BadAddress { index: 1, .. }), "{e}");
        let port = GOOD.replace("127.0.0.1:7101", "127.0.0.1:70000");
        assert!(parse(&port)
            .unwrap_err()
            .to_string()
            .contains("not a port number"));
        let same = GOOD.replace("party2.example.org:7102", "127.0.0.1:7101");
        let e = parse(&same).unwrap_err().to_string();
        assert!(
            e.contains("party 2 has a bad address") && e.contains("party 1 has the same address"),
            "{e}"
        );
        let t = GOOD.replace("2.5", "0");
        assert!(matches!(parse(&t), Err(ConfigError::BadTimeout { .. })));
        let syntax = GOOD.replace("ca = \"ca.crt\"", "ca = ca.crt");
        let msg = parse(&syntax).unwrap_err().to_string();
        assert!(msg.contains("line 3"), "{msg}");
    }

    #[test]
    fn addresses() {
        for ok in [
            "127.0.0.1:1",
            "[::1]:7100",
            "party-0.example.org:443",
            "localhost:7100",
        ] {
            assert!(check_address(ok).is_ok(), "{ok}");
        }
        for bad in [
            "127.0.0.1",
            ":7100",
            "host:0",
            "host:x",
            "a b:1",
            "[::1:7100",
            "::1:7100x",
        ] {
            assert!(check_address(bad).is_err(), "{bad}");
        }
    }
}
