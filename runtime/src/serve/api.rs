//! The client API of a serving party: HTTPS (TLS 1.3 with the party's certificate) on a
//! tokio runtime of its own thread, routes by axum, bearer-token authentication compared in
//! constant time. A request is checked (its share files parsed and matched against the
//! program) before it is queued, so a malformed one is refused at once and never reaches a
//! batch.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::State as AxState;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::Engine;
use subtle::ConstantTimeEq;

use crate::error::RuntimeError;
use crate::io::share_file::{self, Expected, ShareFile};

use super::wire::{self, Answer, Submit};
use super::{lock, Pending, Shared};

/// How long a client's request waits for its batch before the party answers 504.
const ANSWER_WAIT: Duration = Duration::from_secs(120);
/// Largest request body: a few batches of full-size iris codes.
const BODY_LIMIT: usize = 64 << 20;

/// Keeps the API's thread and runtime alive; dropping it stops accepting.
pub struct ApiHandle {
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// The bearer token of the clients: the first line of `path`, a file readable by its owner only.
pub fn read_token(path: &Path) -> Result<Vec<u8>, RuntimeError> {
    let meta = std::fs::metadata(path).map_err(|e| {
        RuntimeError::Setup(format!("cannot read the API token {}: {e}", path.display()))
    })?;
    crate::io::owner_only::check(path, &meta, "the API token").map_err(RuntimeError::Setup)?;
    let text = std::fs::read_to_string(path).map_err(|e| {
        RuntimeError::Setup(format!("cannot read the API token {}: {e}", path.display()))
    })?;
    let token = text.lines().next().unwrap_or("").trim().as_bytes().to_vec();
    if token.len() < 16 {
        return Err(RuntimeError::Setup(format!(
            "the API token in {} is shorter than 16 characters",
            path.display()
        )));
    }
    Ok(token)
}

struct Api {
    shared: Arc<Shared>,
    token: Vec<u8>,
}

/// Binds `addr` now (so a port in use is said at start) and serves on a thread of its own.
pub(crate) fn start(
    addr: &str,
    config: &crate::net::config::PartiesConfig,
    party: usize,
    token: Vec<u8>,
    shared: Arc<Shared>,
) -> Result<ApiHandle, RuntimeError> {
    let setup = |e: String| RuntimeError::Setup(format!("client API at {addr}: {e}"));
    let chain = config
        .read_cert_chain(party)
        .map_err(|e| setup(e.to_string()))?;
    let key = config.read_key(party).map_err(|e| setup(e.to_string()))?;
    let mut tls = rustls::ServerConfig::builder_with_provider(crate::net::tls::provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| setup(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(|e| setup(e.to_string()))?;
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = std::net::TcpListener::bind(addr).map_err(|e| setup(e.to_string()))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| setup(e.to_string()))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("irisc-api")
        .enable_all()
        .build()
        .map_err(|e| setup(e.to_string()))?;
    let api = Arc::new(Api { shared, token });
    let app = Router::new()
        .route(wire::SUBMIT_PATH, post(submit))
        .route(wire::HEALTH_PATH, get(|| async { "ok\n" }))
        .route(wire::READY_PATH, get(ready))
        .route(
            wire::METRICS_PATH,
            get(|| async { super::metrics::render() }),
        )
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(api);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    std::thread::Builder::new()
        .name("irisc-api".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                tokio::select! {
                    _ = accept_loop(listener, acceptor, app) => {}
                    _ = stopped => {}
                }
            })
        })
        .map_err(|e| setup(e.to_string()))?;
    Ok(ApiHandle { _shutdown: stop })
}

async fn accept_loop(
    listener: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    app: Router,
) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            continue;
        };
        let acceptor = acceptor.clone();
        let app = app.clone();
        tokio::spawn(async move {
            // A client that never finishes its handshake holds nothing for long.
            let Ok(Ok(tls)) =
                tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await
            else {
                return;
            };
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
        });
    }
}

async fn ready(AxState(api): AxState<Arc<Api>>) -> Response {
    if api.shared.ready.load(std::sync::atomic::Ordering::SeqCst) {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "connecting to the other parties\n",
        )
            .into_response()
    }
}

fn refuse(status: StatusCode, why: impl Into<String>) -> Response {
    (status, Json(serde_json::json!({ "error": why.into() }))).into_response()
}

fn authorized(api: &Api, headers: &HeaderMap) -> bool {
    let given = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("")
        .as_bytes();
    given.len() == api.token.len() && bool::from(given.ct_eq(&api.token))
}

/// `POST /v1/requests`, counted and timed by type (`match`, `uniqueness`) and outcome.
async fn submit(
    AxState(api): AxState<Arc<Api>>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let started = std::time::Instant::now();
    let kind = if body.windows(8).any(|w| w == b"\"reset\":") {
        "reset"
    } else if body.windows(10).any(|w| w == b"\"enroll\":{") {
        "uniqueness"
    } else if body.windows(10).any(|w| w == b"\"delete\":[") {
        "deletion"
    } else if body.windows(7).any(|w| w == b"\"only\":") {
        "reauthentication"
    } else {
        "match"
    };
    // `Bytes` clones share the buffer: the request id is read from it after answering.
    let response = submit_inner(api, headers, body.clone()).await;
    let outcome = match response.status() {
        StatusCode::OK => "answered",
        StatusCode::CONFLICT => "not_computed",
        StatusCode::UNAUTHORIZED => "unauthorized",
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::GATEWAY_TIMEOUT => "timeout",
        StatusCode::SERVICE_UNAVAILABLE => "batch_failed",
        _ => "error",
    };
    let seconds = started.elapsed().as_secs_f64();
    metrics::counter!(super::metrics::REQUESTS, "type" => kind, "outcome" => outcome).increment(1);
    metrics::histogram!(super::metrics::REQUEST_SECONDS, "type" => kind).record(seconds);
    if crate::log::format() == crate::log::LogFormat::Json {
        log_request(&body, kind, outcome, seconds);
    }
    response
}

/// The request's structured log line: its id (the client's, not secret), type, outcome and
/// time; never its shares.
fn log_request(body: &[u8], kind: &str, outcome: &str, seconds: f64) {
    #[derive(serde::Deserialize)]
    struct Id {
        request_id: String,
    }
    let id = serde_json::from_slice::<Id>(body)
        .ok()
        .map(|i| i.request_id)
        .filter(|i| super::wire::valid_request_id(i));
    let mut fields = serde_json::Map::new();
    fields.insert("request_id".into(), id.into());
    fields.insert("type".into(), kind.into());
    fields.insert("outcome".into(), outcome.into());
    fields.insert("seconds".into(), seconds.into());
    crate::log::event("request", &format!("{kind} request {outcome}"), fields);
}

async fn submit_inner(api: Arc<Api>, headers: HeaderMap, body: axum::body::Bytes) -> Response {
    if !authorized(&api, &headers) {
        return refuse(StatusCode::UNAUTHORIZED, "missing or wrong bearer token");
    }
    let request: Submit = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return refuse(StatusCode::BAD_REQUEST, format!("not a request: {e}")),
    };
    if !wire::valid_request_id(&request.request_id) {
        return refuse(
            StatusCode::BAD_REQUEST,
            "request_id must be 1 to 128 letters, digits, '.', '_' or '-'",
        );
    }
    let id = request.request_id.clone();
    let waiting = {
        let mut st = lock(&api.shared.state);
        if let Some(done) = st.answers.get(&id) {
            return answer_response(done.clone());
        }
        if st.knows(&id) {
            let (tx, rx) = tokio::sync::oneshot::channel();
            st.waiters.entry(id.clone()).or_default().push(tx);
            Some(rx)
        } else {
            None
        }
    };
    let rx = match waiting {
        Some(rx) => rx,
        None => {
            // Parse and check the share files off the async threads.
            let shared = api.shared.clone();
            let checked = tokio::task::spawn_blocking(move || check(&shared, request)).await;
            let pending = match checked {
                Ok(Ok(p)) => p,
                Ok(Err(why)) => return refuse(StatusCode::BAD_REQUEST, why),
                Err(_) => {
                    return refuse(
                        StatusCode::INTERNAL_SERVER_ERROR,
                        "the request's check failed",
                    )
                }
            };
            let mut st = lock(&api.shared.state);
            if let Some(done) = st.answers.get(&id) {
                return answer_response(done.clone());
            }
            let (tx, rx) = tokio::sync::oneshot::channel();
            st.waiters.entry(id.clone()).or_default().push(tx);
            if !st.knows(&id) {
                st.pending.push(pending);
                api.shared.arrived.notify_all();
            }
            rx
        }
    };
    match tokio::time::timeout(ANSWER_WAIT, rx).await {
        Ok(Ok(answer)) => answer_response(answer),
        _ => refuse(
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "request {id} was not answered within {} s (retry with the same id and shares)",
                ANSWER_WAIT.as_secs()
            ),
        ),
    }
}

fn answer_response(a: Answer) -> Response {
    let status = match (&a.error, a.retry) {
        (Some(_), true) => StatusCode::SERVICE_UNAVAILABLE,
        (Some(_), false) => StatusCode::CONFLICT,
        (None, _) => StatusCode::OK,
    };
    (status, Json(a)).into_response()
}

/// Parses and checks a request's share files against the program's query inputs.
fn check(shared: &Shared, request: Submit) -> Result<Pending, String> {
    let mut hasher = blake3::Hasher::new();
    if !request.delete.is_empty() {
        if !request.inputs.is_empty() || !request.enroll.is_empty() {
            return Err("a deletion carries no queries and enrols nothing".into());
        }
        if shared.stores.is_empty() {
            return Err("this party serves no gallery store to delete from".into());
        }
        hasher.update(b"delete");
        request.delete.iter().for_each(|id| {
            hasher.update(&id.to_le_bytes());
        });
        return Ok(Pending {
            id: request.request_id,
            digest: hasher.finalize().to_hex().to_string(),
            files: Vec::new(),
            queries: 0,
            arrived: std::time::Instant::now(),
            enrol: Vec::new(),
            delete: request.delete,
            only: None,
            reset: None,
        });
    }
    let mut files = Vec::new();
    let mut queries = None;
    for (index, spec) in &shared.query_inputs {
        let Some(b64) = request.inputs.get(&spec.name) else {
            return Err(format!(
                "the request has no share file for query input `{}`",
                spec.name
            ));
        };
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("input `{}`: not base64: {e}", spec.name))?;
        let origin = Path::new(&spec.name);
        let file: ShareFile = share_file::from_bytes(origin, &bytes).map_err(|e| e.to_string())?;
        let expected = Expected::for_input(spec, shared.party as u8);
        share_file::check_compatible(origin, &file.header, &expected).map_err(|e| e.to_string())?;
        let n = file.header.count as usize;
        if n == 0 || n > shared.max_batch {
            return Err(format!(
                "input `{}` holds {n} queries; a request holds 1 to {} (the party's --max-batch)",
                spec.name, shared.max_batch
            ));
        }
        if *queries.get_or_insert(n) != n {
            return Err("the request's query inputs hold different numbers of queries".into());
        }
        hasher.update(&file.header.set_id);
        files.push((*index, file));
    }
    if let Some(extra) = request
        .inputs
        .keys()
        .find(|k| !shared.query_inputs.iter().any(|(_, s)| &s.name == *k))
    {
        return Err(format!("this program has no query input `{extra}`"));
    }
    if let Some(id) = request.only {
        if !request.enroll.is_empty() || request.reset.is_some() {
            return Err("a reauthentication enrols nothing".into());
        }
        hasher.update(b"only");
        hasher.update(&id.to_le_bytes());
    }
    if let Some(id) = request.reset {
        if request.enroll.len() != shared.stores.len() {
            return Err(format!(
                "a reset replaces record {id} in every gallery store: enrol the new capture into each of {}",
                shared.stores.iter().map(|(_, s)| format!("`{}`", s.name)).collect::<Vec<_>>().join(", ")
            ));
        }
        hasher.update(b"reset");
        hasher.update(&id.to_le_bytes());
    }
    let mut enrol = Vec::new();
    for (name, b64) in &request.enroll {
        let Some((index, spec)) = shared.stores.iter().find(|(_, s)| &s.name == name) else {
            return Err(format!(
                "enrolment into `{name}`: this party serves no gallery store of that name"
            ));
        };
        if queries != Some(1) {
            return Err(
                "a request that enrols holds one query per query input (one person)".into(),
            );
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("enrolment into `{name}`: not base64: {e}"))?;
        let origin = Path::new(name.as_str());
        let file: ShareFile = share_file::from_bytes(origin, &bytes).map_err(|e| e.to_string())?;
        let expected = Expected::for_input(spec, shared.party as u8);
        share_file::check_compatible(origin, &file.header, &expected).map_err(|e| e.to_string())?;
        if file.header.count != 1 {
            return Err(format!(
                "enrolment into `{name}` holds {} records: one person's request enrols one",
                file.header.count
            ));
        }
        if let (Some(id), Some(&got)) = (request.reset, file.ids.first()) {
            if got != id {
                return Err(format!(
                    "the reset of record {id} enrols a record with id {got} into `{name}`"
                ));
            }
        }
        hasher.update(b"enrol");
        hasher.update(name.as_bytes());
        hasher.update(&file.header.set_id);
        enrol.push((*index, file));
    }
    Ok(Pending {
        id: request.request_id,
        digest: hasher.finalize().to_hex().to_string(),
        files,
        queries: queries.unwrap_or(0),
        arrived: std::time::Instant::now(),
        enrol,
        delete: Vec::new(),
        only: request.only,
        reset: request.reset,
    })
}
