//! `parties.toml`: where the parties (2 to [`MAX_PARTIES`], three for rep3) listen, which CA they
//! trust, and which certificate and key each one uses.
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

/// Most parties a run may have. Party indices travel as one byte in the hello, and every party
/// holds a link to every other one, so the bound only keeps configurations sane.
pub const MAX_PARTIES: usize = 8;

/// The party indices of a run of `n` parties, as a message lists them: `0 and 1`, `0, 1 and 2`,
/// `0 to 7`.
pub(crate) fn index_list(n: usize) -> String {
    match n {
        0 => "none".into(),
        1 => "0".into(),
        2..=4 => {
            let first: Vec<String> = (0..n - 1).map(|i| i.to_string()).collect();
            format!("{} and {}", first.join(", "), n - 1)
        }
        _ => format!("0 to {}", n - 1),
    }
}

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
    #[error("{}: found {found} [[party]] {}; a run has 2 to {MAX_PARTIES} parties, one entry each (indices 0 to n-1)", path.display(), if *found == 1 { "entry" } else { "entries" })]
    PartyCount { path: PathBuf, found: usize },
    /// `parties` is the number of entries: their indices must be exactly `0..parties`.
    #[error("{}: party index {index} is out of range (with {parties} [[party]] entries the parties are {})", path.display(), index_list(*parties))]
    IndexOutOfRange {
        path: PathBuf,
        index: u64,
        parties: usize,
    },
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
    #[error("no party {index} in the configuration (parties are {})", index_list(*parties))]
    NoSuchParty { index: usize, parties: usize },
    /// The configuration is fine, but the program runs with another number of parties.
    #[error("parties.toml lists {found} parties, but this program runs with {expected}")]
    WrongPartyCount { expected: usize, found: usize },
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// One `[[party]]` entry, with paths already resolved against the toml's directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyEntry {
    /// 0 to n-1 for a run of n parties.
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
    /// `host:port` of this party's client API when it serves (`--serve`), for `irisc client`.
    pub api: Option<String>,
}

/// A loaded and checked `parties.toml`.
#[derive(Debug, Clone, PartialEq)]
pub struct PartiesConfig {
    /// Bound on connection setup and on every receive.
    pub timeout: Duration,
    /// PEM certificate of the CA that signed all party certificates.
    pub ca: PathBuf,
    /// The parties (2 to [`MAX_PARTIES`]), in index order (`parties[i].index == i`).
    pub parties: Vec<PartyEntry>,
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
    api: Option<String>,
}

impl PartiesConfig {
    /// Reads and checks `parties.toml`: 2 to [`MAX_PARTIES`] parties with indices 0 to n-1,
    /// well-formed and distinct addresses, a positive timeout. Paths are resolved against the file's directory; the files
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

        let n = raw.party.len();
        if !(2..=MAX_PARTIES).contains(&n) {
            return Err(ConfigError::PartyCount {
                path: err_path(),
                found: n,
            });
        }
        let mut slots: Vec<Option<PartyEntry>> = vec![None; n];
        for p in raw.party {
            // n entries without duplicates below n leave no gap.
            let index = match usize::try_from(p.index) {
                Ok(i) if i < n => i,
                _ => {
                    return Err(ConfigError::IndexOutOfRange {
                        path: err_path(),
                        index: p.index,
                        parties: n,
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
            for addr in [&p.address, &listen].into_iter().chain(p.api.as_ref()) {
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
                api: p.api,
            });
        }
        // n entries, no duplicates, all below n: every slot is filled.
        let parties: Vec<PartyEntry> = slots.into_iter().flatten().collect();
        if parties.len() != n {
            return Err(ConfigError::PartyCount {
                path: err_path(),
                found: n,
            });
        }
        // Two parties at one address would have a party dial itself.
        for (k, y) in parties.iter().enumerate() {
            if let Some(x) = parties[..k].iter().find(|x| x.address == y.address) {
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
            parties,
        })
    }

    /// The number of parties in the run (2 to [`MAX_PARTIES`]).
    pub fn count(&self) -> usize {
        self.parties.len()
    }

    /// Refuses a configuration for another number of parties than `expected` (a program's
    /// protocol fixes how many parties it runs with).
    pub fn expect_count(&self, expected: usize) -> Result<(), ConfigError> {
        if self.count() == expected {
            Ok(())
        } else {
            Err(ConfigError::WrongPartyCount {
                expected,
                found: self.count(),
            })
        }
    }

    /// The entry of party `index`.
    pub fn party(&self, index: usize) -> Result<&PartyEntry, ConfigError> {
        self.parties.get(index).ok_or(ConfigError::NoSuchParty {
            index,
            parties: self.count(),
        })
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

    /// The first `n` entries of [`GOOD`].
    fn first_entries(n: usize) -> String {
        GOOD.split("[[party]]")
            .take(n + 1)
            .collect::<Vec<_>>()
            .join("[[party]]")
    }

    /// `n` well-formed entries, indices 0 to n-1.
    fn with_entries(n: usize) -> String {
        let mut s = String::from("ca = \"ca.crt\"\n");
        for i in 0..n {
            s.push_str(&format!(
                "[[party]]\nindex = {i}\naddress = \"127.0.0.1:{}\"\ncert = \"p{i}.crt\"\nkey = \"p{i}.key\"\n",
                7100 + i
            ));
        }
        s
    }

    #[test]
    fn two_parties_are_a_run() {
        // Parties 1 and 0, listed out of order.
        let c = parse(&first_entries(2)).unwrap();
        assert_eq!(c.count(), 2);
        assert_eq!(c.parties[0].address, "[::1]:7100");
        assert_eq!(c.parties[1].address, "127.0.0.1:7101");
        assert!(c.expect_count(2).is_ok());
        let e = c.expect_count(3).unwrap_err().to_string();
        assert_eq!(
            e,
            "parties.toml lists 2 parties, but this program runs with 3"
        );
        let e = c.party(2).unwrap_err().to_string();
        assert_eq!(e, "no party 2 in the configuration (parties are 0 and 1)");
        assert_eq!(
            parse(&with_entries(MAX_PARTIES)).unwrap().count(),
            MAX_PARTIES
        );
        assert_eq!(parse(GOOD).unwrap().count(), 3);
    }

    #[test]
    fn party_counts_outside_two_to_max_are_refused() {
        for (text, found) in [
            (first_entries(1), 1),
            (first_entries(0), 0),
            (with_entries(MAX_PARTIES + 1), 9),
        ] {
            let e = parse(&text).unwrap_err();
            assert!(
                matches!(&e, ConfigError::PartyCount { found: f, .. } if *f == found),
                "{e}"
            );
            let msg = e.to_string();
            let entries = if found == 1 { "entry" } else { "entries" };
            assert_eq!(
                msg,
                format!("/etc/irisc/parties.toml: found {found} [[party]] {entries}; a run has 2 to 8 parties, one entry each (indices 0 to n-1)")
            );
        }
        // Two entries with a gap: indices 0 and 2.
        let gap = first_entries(2).replace("index = 1", "index = 2");
        let e = parse(&gap).unwrap_err();
        assert!(
            matches!(
                e,
                ConfigError::IndexOutOfRange {
                    index: 2,
                    parties: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            e.to_string(),
            "/etc/irisc/parties.toml: party index 2 is out of range (with 2 [[party]] entries the parties are 0 and 1)"
        );
    }

    #[test]
    fn errors_are_specific() {
        let one = first_entries(1);
        assert!(matches!(
            parse(&one),
            Err(ConfigError::PartyCount { found: 1, .. })
        ));
        let dup = GOOD.replace("index = 2", "index = 1");
        assert!(matches!(
            parse(&dup),
            Err(ConfigError::DuplicateIndex { index: 1, .. })
        ));
        let range = GOOD.replace("index = 2", "index = 3");
        let e = parse(&range).unwrap_err();
        assert!(
            matches!(e, ConfigError::IndexOutOfRange { index: 3, .. }),
            "{e}"
        );
        // The message says which indices the entries may have.
        assert!(
            e.to_string()
                .ends_with("(with 3 [[party]] entries the parties are 0, 1 and 2)"),
            "{e}"
        );
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
