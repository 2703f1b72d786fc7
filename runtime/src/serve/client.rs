//! Sending one request to one serving party: HTTPS to the address of its client API, the
//! server checked against the parties' CA under the party's certificate name
//! (`party{i}.irisc`), the bearer token in the header. `irisc client` sends the three
//! parties' requests in parallel with this.

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use rustls::pki_types::ServerName;

use super::wire::{self, Answer, Submit};

/// What a party answered, or why it did not.
#[derive(Debug)]
pub enum Reply {
    /// The request was computed (`answer.error` is None) or refused by all parties (Some).
    Answer(Answer),
    /// The party refused the request itself (bad token, malformed shares, ...): status, text.
    Refused(u16, String),
}

/// A client's TLS settings for the parties' APIs (shared by its requests).
pub type ClientTls = Arc<rustls::ClientConfig>;

/// The client's TLS configuration: the parties' CA as the only root.
pub fn tls_config(ca_pem: &[u8]) -> Result<ClientTls, String> {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::pem::PemObject::pem_slice_iter(ca_pem) {
        let cert: rustls_pki_types::CertificateDer<'static> =
            cert.map_err(|e| format!("the CA file is not PEM: {e}"))?;
        roots
            .add(cert)
            .map_err(|e| format!("the CA certificate: {e}"))?;
    }
    let config = rustls::ClientConfig::builder_with_provider(crate::net::tls::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// `GET path` of party `party`'s API at `address` (health, readiness, metrics): its status and
/// body, within `timeout`.
pub async fn get(
    tls: Arc<rustls::ClientConfig>,
    party: usize,
    address: &str,
    path: &str,
    timeout: Duration,
) -> Result<(u16, String), String> {
    let work = async {
        let req = hyper::Request::get(path)
            .header(hyper::header::HOST, crate::net::tls::server_name(party))
            .body(Full::new(Bytes::new()))
            .map_err(|e| e.to_string())?;
        let (status, bytes) = exchange(tls, party, address, req).await?;
        Ok::<_, String>((status, String::from_utf8_lossy(&bytes).into_owned()))
    };
    tokio::time::timeout(timeout, work).await.map_err(|_| {
        format!(
            "party {party} did not answer within {} s",
            timeout.as_secs()
        )
    })?
}

/// Sends `req` to party `party` over a fresh connection: the answer's status and body.
async fn exchange(
    tls: Arc<rustls::ClientConfig>,
    party: usize,
    address: &str,
    req: hyper::Request<Full<Bytes>>,
) -> Result<(u16, Bytes), String> {
    let mut sender = connect(tls, party, address).await?;
    let response = sender
        .send_request(req)
        .await
        .map_err(|e| format!("party {party} did not answer: {e}"))?;
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("party {party}'s answer broke off: {e}"))?
        .to_bytes();
    Ok((status, bytes))
}

/// An HTTP/1.1 connection over TLS to party `party`'s API, its certificate checked under the
/// party's name.
async fn connect(
    tls: Arc<rustls::ClientConfig>,
    party: usize,
    address: &str,
) -> Result<hyper::client::conn::http1::SendRequest<Full<Bytes>>, String> {
    let tcp = tokio::net::TcpStream::connect(address)
        .await
        .map_err(|e| format!("cannot reach party {party}'s API at {address}: {e}"))?;
    // Say so rather than fail the TLS handshake on our own ClientHello.
    if crate::net::meets_itself(tcp.local_addr(), tcp.peer_addr()) {
        return Err(format!(
            "cannot reach party {party}'s API at {address}: nothing listens there"
        ));
    }
    let name =
        ServerName::try_from(crate::net::tls::server_name(party)).map_err(|e| e.to_string())?;
    let tls = tokio_rustls::TlsConnector::from(tls)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS with party {party}'s API at {address}: {e}"))?;
    let (sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tls))
        .await
        .map_err(|e| format!("HTTP with party {party}: {e}"))?;
    tokio::spawn(conn);
    Ok(sender)
}

/// Posts `request` to party `party`'s API at `address` (host:port) and waits at most
/// `timeout` for its answer.
pub async fn submit(
    tls: Arc<rustls::ClientConfig>,
    party: usize,
    address: &str,
    token: &str,
    request: &Submit,
    timeout: Duration,
) -> Result<Reply, String> {
    let body = serde_json::to_vec(request).map_err(|e| e.to_string())?;
    let work = async {
        let req = hyper::Request::post(wire::SUBMIT_PATH)
            .header(hyper::header::HOST, crate::net::tls::server_name(party))
            .header(hyper::header::AUTHORIZATION, format!("Bearer {token}"))
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        exchange(tls, party, address, req).await
    };
    let (status, bytes) = tokio::time::timeout(timeout, work).await.map_err(|_| {
        format!(
            "party {party} did not answer within {} s",
            timeout.as_secs()
        )
    })??;
    match serde_json::from_slice::<Answer>(&bytes) {
        Ok(a) if status == 503 => Err(format!(
            "party {party}: {}",
            a.error.unwrap_or_else(|| "not available".into())
        )),
        Ok(a) if status == 200 || status == 409 => Ok(Reply::Answer(a)),
        _ => {
            let text = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
                .unwrap_or_else(|| String::from_utf8_lossy(&bytes).into_owned());
            Ok(Reply::Refused(status, text))
        }
    }
}
