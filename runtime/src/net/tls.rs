//! Mutually authenticated TLS between the parties (rustls, `ring` provider, TLS 1.3 only).
//!
//! Every party certificate is signed by one CA and carries the DNS name `party{i}.irisc`. A server
//! accepts only clients whose certificate chains to that CA; a client accepts only a server whose
//! certificate chains to the CA and names the party it dialled. Because every party's
//! certificate chains to the CA, the link layer additionally compares the peer's end-entity
//! certificate with the one configured for the party it claims to be ([`same_end_entity`]).

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::server::{NoServerSessionStorage, WebPkiClientVerifier};
use rustls::{AlertDescription, CertificateError, ClientConfig, RootCertStore, ServerConfig};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};

use super::config::{ConfigError, PartiesConfig};

/// What can go wrong building this party's TLS configuration.
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("CA certificate {}: {detail}", path.display())]
    BadCa {
        path: std::path::PathBuf,
        detail: String,
    },
    #[error("party {party}'s certificate {} and key {} do not belong together or are unusable: {detail}", cert.display(), key.display())]
    BadIdentity {
        party: usize,
        cert: std::path::PathBuf,
        key: std::path::PathBuf,
        detail: String,
    },
}

/// The DNS name in party `i`'s certificate, which clients check when they connect to it.
pub fn server_name(i: usize) -> String {
    format!("party{i}.irisc")
}

/// Client and server TLS configurations of one party, plus the certificates it expects from
/// each peer.
#[derive(Clone)]
pub struct PartyTls {
    /// Used when this party accepts connections from the others.
    pub server: Arc<ServerConfig>,
    /// Used when this party connects to the others.
    pub client: Arc<ClientConfig>,
    /// The configured end-entity certificate of every party (index = party; one per party of
    /// the run).
    pub expected: Vec<CertificateDer<'static>>,
}

impl std::fmt::Debug for PartyTls {
    // Deliberately says nothing about the configurations: they hold the private key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartyTls").finish_non_exhaustive()
    }
}

/// The crypto provider all links use; chosen explicitly so the process-wide default (which a
/// library must not rely on or install) plays no part.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

impl PartyTls {
    /// Reads the CA, every party's certificate and `me`'s key, and builds both configurations.
    pub fn load(cfg: &PartiesConfig, me: usize) -> Result<PartyTls, TlsSetupError> {
        let provider = provider();
        let ca_certs = cfg.read_ca()?;
        let mut roots = RootCertStore::empty();
        for c in ca_certs {
            roots.add(c).map_err(|e| TlsSetupError::BadCa {
                path: cfg.ca.clone(),
                detail: e.to_string(),
            })?;
        }
        let roots = Arc::new(roots);

        let n = cfg.count();
        let mut chains = Vec::with_capacity(n);
        for i in 0..n {
            chains.push(cfg.read_cert_chain(i)?);
        }
        // `read_certs` never returns an empty chain.
        let expected: Vec<CertificateDer<'static>> = chains.iter().map(|c| c[0].clone()).collect();
        let my_chain = chains.swap_remove(me);
        let key: PrivateKeyDer<'static> = cfg.read_key(me)?;
        let entry = cfg.party(me)?;
        let bad_identity = |detail: String| TlsSetupError::BadIdentity {
            party: me,
            cert: entry.cert.clone(),
            key: entry.key.clone(),
            detail,
        };

        let client_verifier =
            WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
                .build()
                .map_err(|e| TlsSetupError::BadCa {
                    path: cfg.ca.clone(),
                    detail: e.to_string(),
                })?;
        let mut server = ServerConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| bad_identity(e.to_string()))?
            .with_client_cert_verifier(client_verifier)
            .with_single_cert(my_chain.clone(), key.clone_key())
            .map_err(|e| bad_identity(e.to_string()))?;
        // Links live for one run: no resumption, and no tickets, which would otherwise sit unread
        // on the client side because clients only ever write after the hello.
        server.session_storage = Arc::new(NoServerSessionStorage {});
        server.send_tls13_tickets = 0;

        // Uses the builder's (explicit) provider for signature verification.
        let mut client = ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(&[&rustls::version::TLS13])
            .map_err(|e| bad_identity(e.to_string()))?
            .with_root_certificates(roots)
            .with_client_auth_cert(my_chain, key)
            .map_err(|e| bad_identity(e.to_string()))?;
        client.resumption = rustls::client::Resumption::disabled();

        Ok(PartyTls {
            server: Arc::new(server),
            client: Arc::new(client),
            expected,
        })
    }

    /// The server name a client uses for party `j`.
    pub fn name_of(j: usize) -> ServerName<'static> {
        // "party{j}.irisc" is always a valid DNS name.
        ServerName::try_from(server_name(j))
            .unwrap_or_else(|_| ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into()))
    }
}

/// Whether the peer's presented chain starts with exactly the configured certificate.
pub fn same_end_entity(
    presented: Option<&[CertificateDer<'_>]>,
    expected: &CertificateDer<'_>,
) -> bool {
    presented
        .and_then(|c| c.first())
        .is_some_and(|ee| ee.as_ref() == expected.as_ref())
}

/// Turns a rustls failure into a sentence a user can act on. `peer` is the party concerned,
/// when known.
pub fn explain(err: &rustls::Error, peer: Option<usize>) -> String {
    let who = match peer {
        Some(p) => format!("party {p}"),
        None => "the connecting peer".to_string(),
    };
    match err {
        rustls::Error::InvalidCertificate(ce) => {
            let what = match ce {
                CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                    "is not signed by the CA in parties.toml (it was generated by another `irisc keys` run)".to_string()
                }
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => match peer {
                    Some(p) => format!("is not issued for {} (is it started with another party's certificate?)", server_name(p)),
                    None => "is issued for another name".to_string(),
                },
                CertificateError::Expired | CertificateError::ExpiredContext { .. } => "has expired".to_string(),
                CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                    "is not valid yet (check the clocks)".to_string()
                }
                other => format!("was rejected: {other:?}"),
            };
            format!("{who}'s certificate {what}")
        }
        rustls::Error::NoCertificatesPresented => format!("{who} presented no certificate"),
        rustls::Error::AlertReceived(alert) => {
            let certificate_alert = matches!(
                alert,
                AlertDescription::BadCertificate
                    | AlertDescription::UnknownCA
                    | AlertDescription::CertificateRequired
                    | AlertDescription::UnsupportedCertificate
                    | AlertDescription::CertificateUnknown
                    | AlertDescription::DecryptError
                    | AlertDescription::AccessDenied
            );
            if certificate_alert {
                format!(
                    "{who} rejected this party's certificate (TLS alert {alert:?}): check that this party runs with \
                     its own certificate and key, from the same `irisc keys` run as the others'"
                )
            } else {
                format!("{who} aborted the TLS connection (alert {alert:?})")
            }
        }
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            format!("{who} does not speak TLS 1.3 on this port (is it another program?)")
        }
        other => format!("TLS with {who} failed: {other}"),
    }
}

/// The rustls error inside an `io::Error` returned by a rustls stream, if there is one.
pub fn rustls_error(e: &std::io::Error) -> Option<&rustls::Error> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
}
