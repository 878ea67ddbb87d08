//! `serve --http ADDR`: MCP over Streamable HTTP, for a team sharing one server.
//!
//! One endpoint, `POST /mcp`, takes one JSON-RPC message per request and answers it the way the stdio
//! transport does — the same [`Server`] decides every answer ([`Server::respond`], [`Server::call`]),
//! so a tool call is the same code whichever transport brought it. The server is stateless (MCP
//! 2026-07-28): it mints no session, and a 2025-11-25 client's `initialize` is answered like any other
//! request, so replicas behind a load balancer need no sticky sessions.
//!
//! - **Answers.** A request is answered with `application/json`; a `tools/call` carrying a
//!   `_meta.progressToken` from a client that accepts `text/event-stream` is answered as an SSE
//!   stream: its progress (a waiting poll reports every 10 s), then its result. A notification or a
//!   response is `202 Accepted`. `GET /mcp` is `405` (the server keeps no session to send to
//!   unasked): a client follows resources with `subscriptions/listen` (2026-07-28), answered as an
//!   event stream of `notifications/resources/updated` until it closes it, and `resources/subscribe`
//!   is refused. Resource reads, prompts and completions run on a blocking thread.
//! - **Identity.** Every request needs `Authorization: Bearer …` ([`auth`]); the token decides the
//!   agent, which every call receives in its context: an agent argument naming another agent is
//!   refused `IDENTITY_MISMATCH` by the tool's group before any store is asked. A call that waited is
//!   answered only while those credentials still hold.
//! - **Cancellation.** A client that goes away (its connection closes) cancels its call, as
//!   `notifications/cancelled` for that request id from the same agent does, and a claim its poll
//!   made at any step goes back to the queue.
//! - **Bounds and fair shares.** A body holds at most 16 MiB and must arrive within 30 s; request
//!   headers within 10 s (also between two requests of a kept-alive connection, so an idle client
//!   holds nothing); at most [`MAX_CALLS`] calls run at once, [`MAX_CALLS_PER_AGENT`] of one agent,
//!   and [`MAX_WAITING`] more wait their turn, [`MAX_QUEUED_PER_AGENT`] of one agent (then `503`); a
//!   waiting poll is parked without a thread, at most [`MAX_PARKED_PER_AGENT`] of one agent; at most
//!   [`MAX_CONNECTIONS`] connections are open. A request whose `Origin` is not one of
//!   `--allowed-origins` is `403` (DNS rebinding).
//! - **Health.** `GET /healthz` is `200` when the stores answer (the contracts store, when the
//!   contracts group is served), else `503` with the reason.
//! - **Metrics.** `GET /metrics` is the Prometheus text of [`crate::telemetry`], for a caller with a
//!   valid bearer token.
//! - **Stopping.** SIGTERM or SIGINT stops accepting, lets the calls in flight finish and exits 0, as
//!   on stdio: the whole shutdown within 10 s.

pub mod auth;
mod call;

pub use call::{
    CancelOnDrop, MAX_CALLS, MAX_CALLS_PER_AGENT, MAX_PARKED_PER_AGENT, MAX_QUEUED_PER_AGENT, MAX_WAITING,
};
pub mod ui;

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use crate::registry::CallContext;
use crate::server::{self, Era, Server};
use crate::wire::{self, IdKey, Message};
use auth::{Agent, Auth, AuthError};

/// The most connections open at once; beyond, a new one is closed at once. Room for one agent's
/// [`MAX_PARKED_PER_AGENT`] waiting polls and the rest of the team.
pub const MAX_CONNECTIONS: usize = 4096;
/// The largest request body.
pub const MAX_BODY: usize = wire::MAX_LINE;
/// How long a client may take to send a request's headers (and to start the next one).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's body.
pub const BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a TLS handshake may take.
const TLS_TIMEOUT: Duration = Duration::from_secs(10);

use crate::settings::{Setting, Settings};

/// `--http ADDR`: serve MCP over Streamable HTTP at `ADDR` instead of stdio.
pub const HTTP: Setting = Setting {
    flag: "--http",
    env: Some("SHIFTWORK_HTTP"),
    takes_value: true,
    help: "serve over HTTP at ADDR (HOST:PORT, or PORT for 127.0.0.1) instead of stdio",
};
/// `--allowed-origins LIST`.
pub const ALLOWED_ORIGINS: Setting = Setting {
    flag: "--allowed-origins",
    env: Some("SHIFTWORK_ALLOWED_ORIGINS"),
    takes_value: true,
    help: "HTTP: comma list of browser Origins allowed to call (default: none)",
};
/// `--auth-tokens FILE`.
pub const AUTH_TOKENS: Setting = Setting {
    flag: "--auth-tokens",
    env: Some("SHIFTWORK_AUTH_TOKENS"),
    takes_value: true,
    help: "HTTP: the bearer-token file (shiftwork-mcp token add NAME --file FILE)",
};
/// `--auth-jwt-jwks FILE_OR_URL`.
pub const AUTH_JWT_JWKS: Setting = Setting {
    flag: "--auth-jwt-jwks",
    env: Some("SHIFTWORK_AUTH_JWT_JWKS"),
    takes_value: true,
    help: "HTTP: the issuer's JSON Web Key Set (a file or an https:// URL)",
};
/// `--auth-jwt-issuer ISS`.
pub const AUTH_JWT_ISSUER: Setting = Setting {
    flag: "--auth-jwt-issuer",
    env: Some("SHIFTWORK_AUTH_JWT_ISSUER"),
    takes_value: true,
    help: "HTTP: the JWT issuer (iss) to accept",
};
/// `--auth-jwt-audience URL`.
pub const AUTH_JWT_AUDIENCE: Setting = Setting {
    flag: "--auth-jwt-audience",
    env: Some("SHIFTWORK_AUTH_JWT_AUDIENCE"),
    takes_value: true,
    help: "HTTP: this server's resource URL, the audience (aud) a JWT must name",
};
/// `--auth-jwt-agent-claim CLAIM`.
pub const AUTH_JWT_AGENT_CLAIM: Setting = Setting {
    flag: "--auth-jwt-agent-claim",
    env: Some("SHIFTWORK_AUTH_JWT_AGENT_CLAIM"),
    takes_value: true,
    help: "HTTP: the JWT claim naming the agent (default: sub)",
};
/// `--tls-cert FILE`.
pub const TLS_CERT: Setting = Setting {
    flag: "--tls-cert",
    env: Some("SHIFTWORK_TLS_CERT"),
    takes_value: true,
    help: "HTTP: serve HTTPS with this PEM certificate chain (and --tls-key)",
};
/// `--tls-key FILE`.
pub const TLS_KEY: Setting = Setting {
    flag: "--tls-key",
    env: Some("SHIFTWORK_TLS_KEY"),
    takes_value: true,
    help: "HTTP: the PEM private key of --tls-cert",
};

/// Every setting of `serve --http`.
pub const SETTINGS: &[Setting] = &[
    HTTP,
    ALLOWED_ORIGINS,
    AUTH_TOKENS,
    AUTH_JWT_JWKS,
    AUTH_JWT_ISSUER,
    AUTH_JWT_AUDIENCE,
    AUTH_JWT_AGENT_CLAIM,
    TLS_CERT,
    TLS_KEY,
];

/// The address of `--http`: `HOST:PORT`, `[V6]:PORT`, or a bare `PORT` (on 127.0.0.1, loopback).
///
/// ```
/// use shiftwork_mcp::http::listen_address;
/// assert_eq!(listen_address("8765").unwrap().to_string(), "127.0.0.1:8765");
/// assert_eq!(listen_address("0.0.0.0:80").unwrap().to_string(), "0.0.0.0:80");
/// assert!(listen_address("nowhere").is_err());
/// ```
pub fn listen_address(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    use std::net::ToSocketAddrs as _;
    text.to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| {
            format!(
                "--http must be HOST:PORT or PORT, not '{}'",
                shiftwork_seams::echo::echo(text)
            )
        })
}

impl HttpConfig {
    /// The configuration of `serve` from its settings, `None` when `--http` is not given; the error
    /// is a usage error naming the flag.
    pub fn from_settings(settings: &Settings) -> Result<Option<HttpConfig>, String> {
        let ui = ui::UiConfig::from_settings(settings)?;
        let Some(addr) = settings.value(&HTTP) else {
            for s in &SETTINGS[1..] {
                if settings.flag(s).is_some() {
                    return Err(format!("{} applies only with --http", s.flag));
                }
            }
            return Ok(None);
        };
        let addr = listen_address(addr)?;
        let allowed_origins = settings
            .value(&ALLOWED_ORIGINS)
            .map(|list| {
                list.split(',')
                    .map(|o| o.trim().trim_end_matches('/').to_owned())
                    .filter(|o| !o.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let jwt = [&AUTH_JWT_JWKS, &AUTH_JWT_ISSUER, &AUTH_JWT_AUDIENCE].map(|s| settings.value(s));
        let auth = match (settings.value(&AUTH_TOKENS), jwt) {
            (Some(_), [Some(_), ..] | [_, Some(_), _] | [.., Some(_)]) => {
                return Err(String::from(
                    "--auth-tokens and --auth-jwt-… are two ways to authenticate: give one",
                ));
            }
            (Some(file), _) => Auth::Tokens(
                crate::tokens::TokenFile::open(std::path::Path::new(file)).map_err(|e| e.to_string())?,
            ),
            (None, [Some(jwks), Some(issuer), Some(audience)]) => {
                let source = if jwks.starts_with("https://") || jwks.starts_with("http://") {
                    auth::JwksSource::Url(jwks.to_owned())
                } else {
                    auth::JwksSource::File(PathBuf::from(jwks))
                };
                let claim = settings.value(&AUTH_JWT_AGENT_CLAIM).unwrap_or("sub");
                Auth::Jwt(Box::new(auth::JwtVerifier::new(source, issuer, audience, claim)?))
            }
            (None, [None, None, None]) => {
                return Err(String::from(
                    "serve --http needs credentials: --auth-tokens FILE (make one with shiftwork-mcp token add NAME --file FILE), \
                     or --auth-jwt-jwks, --auth-jwt-issuer and --auth-jwt-audience",
                ));
            }
            (None, _) => {
                return Err(String::from(
                    "a JWT needs all three of --auth-jwt-jwks, --auth-jwt-issuer and --auth-jwt-audience",
                ));
            }
        };
        let tls = match (settings.value(&TLS_CERT), settings.value(&TLS_KEY)) {
            (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
            (None, None) => None,
            _ => return Err(String::from("--tls-cert and --tls-key go together")),
        };
        Ok(Some(HttpConfig {
            addr,
            allowed_origins,
            auth,
            tls,
            ui,
        }))
    }
}

/// How `serve --http` runs.
pub struct HttpConfig {
    /// Where to listen.
    pub addr: SocketAddr,
    /// The `Origin`s a browser may send requests from (none by default: only clients that send no
    /// `Origin`, which is every non-browser client).
    pub allowed_origins: Vec<String>,
    /// How requests are authenticated.
    pub auth: Auth,
    /// A certificate chain and its key (PEM) to serve HTTPS, when given.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// The web view at `/ui` ([`ui`]).
    pub ui: ui::UiConfig,
}

/// A bound HTTP server, ready to run.
pub struct HttpServer {
    state: Arc<State>,
    listener: std::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

/// The handle the signal thread drains the server with.
#[derive(Clone)]
pub struct HttpHandle {
    state: Arc<State>,
}

struct State {
    server: Server,
    auth: Auth,
    origins: Vec<String>,
    calls: Arc<tokio::sync::Semaphore>,
    waiting: AtomicUsize,
    /// What each agent with a call in flight holds ([`call`]'s fair shares).
    shares: call::Shares,
    /// The health check in flight.
    health: SingleFlight<Result<(), String>>,
    /// The scrape in flight.
    scrape: SingleFlight<Option<String>>,
    connections: AtomicUsize,
    /// The calls in flight by (agent, request id), for `notifications/cancelled` and the drain.
    in_flight: Mutex<HashMap<(Agent, IdKey), Vec<CallContext>>>,
    /// Requests being handled, and who waits for there to be none.
    busy: Mutex<usize>,
    idle: Condvar,
    stopping: AtomicBool,
    stop: tokio::sync::Notify,
    /// The web view, unless it is off.
    ui: Option<ui::Ui>,
}

impl HttpServer {
    /// Binds `config.addr` (errors name the address) and reads the TLS files, without serving yet.
    pub fn bind(server: Server, config: HttpConfig) -> Result<HttpServer, String> {
        let tls = match &config.tls {
            Some((cert, key)) => Some(tls_acceptor(cert, key)?),
            None => None,
        };
        let listener = std::net::TcpListener::bind(config.addr).map_err(|e| {
            format!(
                "cannot listen on {}: {}",
                config.addr,
                shiftwork_seams::os_reason(&e)
            )
        })?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
        let ui = ui::Ui::start(config.ui, &server, tls.is_some())?;
        Ok(HttpServer {
            state: Arc::new(State {
                server,
                auth: config.auth,
                origins: config.allowed_origins,
                calls: Arc::new(tokio::sync::Semaphore::new(MAX_CALLS)),
                waiting: AtomicUsize::new(0),
                shares: call::Shares::default(),
                health: SingleFlight::new(),
                scrape: SingleFlight::new(),
                connections: AtomicUsize::new(0),
                in_flight: Mutex::new(HashMap::new()),
                busy: Mutex::new(0),
                idle: Condvar::new(),
                stopping: AtomicBool::new(false),
                stop: tokio::sync::Notify::new(),
                ui,
            }),
            listener,
            tls,
        })
    }

    /// The address it listens on (the port chosen when `:0` was asked for).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Where it serves MCP: `http://ADDR/mcp`, or `https://ADDR/mcp` with `--tls-cert`.
    pub fn url(&self) -> std::io::Result<String> {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        Ok(format!("{scheme}://{}/mcp", self.local_addr()?))
    }

    /// The handle that stops it.
    pub fn handle(&self) -> HttpHandle {
        HttpHandle {
            state: Arc::clone(&self.state),
        }
    }

    /// Serves until stopped ([`HttpHandle::stop`]), then waits for the connections to finish their
    /// requests (at most [`crate::shutdown::GRACE`]).
    pub fn run(self) -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .thread_name("shiftwork-mcp-http")
            .max_blocking_threads(MAX_CALLS + 64)
            .build()
            .map_err(|e| format!("cannot start the HTTP runtime: {e}"))?;
        let HttpServer { state, listener, tls } = self;
        runtime.block_on(async move {
            let listener =
                tokio::net::TcpListener::from_std(listener).map_err(|e| format!("cannot listen: {e}"))?;
            accept_loop(state, listener, tls).await;
            Ok(())
        })
    }
}

impl HttpHandle {
    /// Stops taking requests: no new connection is accepted, new requests are answered `503`, and
    /// every call in flight is told to end what it waits for (its answer is still sent).
    pub fn stop(&self) {
        self.state.stopping.store(true, Ordering::SeqCst);
        self.state.stop.notify_waiters();
        self.state.stop.notify_one();
        let contexts: Vec<CallContext> = self
            .state
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .flatten()
            .cloned()
            .collect();
        for context in contexts {
            context.cancel();
        }
        // The listen streams end, so that the connections holding them close.
        if let Some(hub) = self.state.server.hub() {
            hub.close_all();
        }
    }

    /// Waits up to `timeout` until no request is being handled; true when none is.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut busy = self.state.busy.lock().unwrap_or_else(PoisonError::into_inner);
        while *busy > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            busy = self
                .state
                .idle
                .wait_timeout(busy, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// The requests being handled.
    pub fn in_flight(&self) -> usize {
        *self.state.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl crate::shutdown::Drain for HttpHandle {
    fn stop(&self) {
        HttpHandle::stop(self);
    }
    fn wait_idle(&self, timeout: Duration) -> bool {
        HttpHandle::wait_idle(self, timeout)
    }
    fn in_flight(&self) -> usize {
        HttpHandle::in_flight(self)
    }
}

/// The largest certificate chain or key file read (a chain of a dozen certificates is tens of KiB).
const MAX_TLS_FILE: u64 = 1024 * 1024;

/// The TLS acceptor of a PEM certificate chain and key, each read as every file an option names is
/// ([`crate::settings::read_named_file`]: no blocking open, a regular file, at most 1 MiB).
fn tls_acceptor(cert: &std::path::Path, key: &std::path::Path) -> Result<tokio_rustls::TlsAcceptor, String> {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let cert_pem = crate::settings::read_named_file(cert, MAX_TLS_FILE)
        .map_err(|why| format!("the certificate {} cannot be read: {why}", cert.display()))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the certificate {} cannot be read: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("the certificate {} holds no certificate", cert.display()));
    }
    let key_pem = crate::settings::read_named_file(key, MAX_TLS_FILE)
        .map_err(|why| format!("the key {} cannot be read: {why}", key.display()))?;
    let key = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| format!("the key {} cannot be read: {e}", key.display()))?;
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .and_then(|b| b.with_no_client_auth().with_single_cert(certs, key))
            .map_err(|e| format!("the certificate and key cannot serve TLS: {e}"))?;
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

async fn accept_loop(
    state: Arc<State>,
    listener: tokio::net::TcpListener,
    tls: Option<tokio_rustls::TlsAcceptor>,
) {
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    // HTTP/1.1 only: every MCP client speaks it, and its header timer runs from a connection's first
    // byte (and between two requests), where HTTP/2's version detection would wait unbounded.
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .keep_alive(true);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = state.stop.notified() => break,
        };
        let (stream, _peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors or a connection reset before it was taken: wait a little.
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if state.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            state.connections.fetch_sub(1, Ordering::SeqCst);
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        let state = Arc::clone(&state);
        let builder = builder.clone();
        let watcher = graceful.watcher();
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = {
                let state = Arc::clone(&state);
                hyper::service::service_fn(move |request| {
                    let state = Arc::clone(&state);
                    async move { Ok::<_, Infallible>(handle(&state, request).await) }
                })
            };
            let served = match tls {
                None => {
                    watcher
                        .watch(builder.serve_connection(TokioIo::new(stream), service))
                        .await
                }
                Some(acceptor) => match tokio::time::timeout(TLS_TIMEOUT, acceptor.accept(stream)).await {
                    Ok(Ok(stream)) => {
                        watcher
                            .watch(builder.serve_connection(TokioIo::new(stream), service))
                            .await
                    }
                    _ => Ok(()),
                },
            };
            if let Err(e) = served {
                tracing::debug!("a connection ended: {e}");
            }
            state.connections.fetch_sub(1, Ordering::SeqCst);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(crate::shutdown::GRACE, graceful.shutdown()).await;
}

/// Counts a request as being handled while it lives.
struct Busy(Arc<State>);

impl Busy {
    fn new(state: &Arc<State>) -> Busy {
        *state.busy.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        Busy(Arc::clone(state))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        let mut busy = self.0.busy.lock().unwrap_or_else(PoisonError::into_inner);
        *busy -= 1;
        if *busy == 0 {
            self.0.idle.notify_all();
        }
    }
}

/// A response body: whole, or a stream of server-sent events.
pub enum Body {
    /// The whole body.
    Full(Option<Bytes>),
    /// Events as they come; the call ends (cancelled) when the body is dropped before its end.
    Events(tokio::sync::mpsc::Receiver<Bytes>, Option<CancelOnDrop>),
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Full(None))
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        match self {
            Body::Full(bytes) => {
                hyper::body::SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Body::Events(..) => hyper::body::SizeHint::default(),
        }
    }

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::Events(receiver, guard) => match receiver.poll_recv(cx) {
                Poll::Ready(Some(bytes)) => Poll::Ready(Some(Ok(Frame::data(bytes)))),
                Poll::Ready(None) => {
                    if let Some(guard) = guard.take() {
                        guard.done();
                    }
                    Poll::Ready(None)
                }
                Poll::Pending => Poll::Pending,
            },
        }
    }
}

fn response(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    let mut response = Response::new(Body::Full(Some(body.into())));
    *response.status_mut() = status;
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

fn json_response(status: StatusCode, line: Vec<u8>) -> Response<Body> {
    response(status, "application/json", line)
}

/// A JSON-RPC error without an id, for a refusal at the HTTP level.
fn http_error(status: StatusCode, code: i32, message: &str) -> Response<Body> {
    json_response(status, server::error_line(None, code, message))
}

async fn handle(state: &Arc<State>, request: Request<Incoming>) -> Response<Body> {
    let _busy = Busy::new(state);
    let path = request.uri().path();
    match (request.method(), path) {
        (&Method::POST, "/mcp") => post_mcp(state, request).await,
        (_, "/mcp") => {
            let mut response = response(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain",
                "POST only: this server is stateless\n",
            );
            response
                .headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("POST"));
            response
        }
        (_, p) if ui::serves(p) => ui::handle(state, request).await,
        (&Method::GET, "/healthz") => health(state).await,
        (&Method::GET, "/metrics") => metrics(state, &request).await,
        (&Method::GET, p) if p.starts_with("/.well-known/oauth-protected-resource") => {
            match state.auth.protected_resource_metadata() {
                Some(document) => response(StatusCode::OK, "application/json", document.to_string()),
                None => response(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
            }
        }
        _ => response(
            StatusCode::NOT_FOUND,
            "text/plain",
            "not found: MCP is served at POST /mcp\n",
        ),
    }
}

/// `GET /metrics`: Prometheus text, for a caller with a valid bearer token (the queue's contents
/// name agents).
async fn metrics(state: &Arc<State>, request: &Request<Incoming>) -> Response<Body> {
    let headers = request.headers();
    if let Err(e) = state
        .auth
        .authenticate_request(headers.get(header::AUTHORIZATION).map(HeaderValue::as_bytes))
        .await
    {
        return unauthorized(state, &e);
    }
    // The queue gauges read the store (a blocking client): never on the runtime's threads, and one
    // rendering at a time, shared by the scrapes that wait for it.
    let rendered = state
        .scrape
        .run(|| tokio::task::spawn_blocking(crate::telemetry::prometheus))
        .await;
    match rendered {
        Some(Some(text)) => response(StatusCode::OK, "text/plain; version=0.0.4; charset=utf-8", text),
        Some(None) => response(StatusCode::NOT_FOUND, "text/plain", "metrics are not collected\n"),
        _ => response(
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "the metrics could not be read\n",
        ),
    }
}

/// `GET /healthz`: the stores answer. The stores are asked on a blocking thread, by one check at a
/// time: the requests that come meanwhile share its answer, so a flood of unauthenticated health
/// checks takes one thread, never the team's.
async fn health(state: &Arc<State>) -> Response<Body> {
    let server = state.server.clone();
    let checked = state
        .health
        .run(|| tokio::task::spawn_blocking(move || server.health()))
        .await;
    match checked {
        Some(Ok(())) => response(StatusCode::OK, "application/json", r#"{"status":"ok"}"#),
        Some(Err(reason)) => response(
            StatusCode::SERVICE_UNAVAILABLE,
            "application/json",
            serde_json::json!({"status": "unavailable", "reason": reason}).to_string(),
        ),
        _ => response(
            StatusCode::SERVICE_UNAVAILABLE,
            "application/json",
            r#"{"status":"unavailable"}"#,
        ),
    }
}

/// One piece of blocking work at a time (a health check, a scrape): a request that comes while it
/// runs waits for it and shares its result instead of starting another.
struct SingleFlight<T> {
    last: tokio::sync::Mutex<Option<(u64, T)>>,
    started: std::sync::atomic::AtomicU64,
}

impl<T: Clone> SingleFlight<T> {
    fn new() -> Self {
        SingleFlight {
            last: tokio::sync::Mutex::new(None),
            started: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// The result of a run that started no earlier than this call: the one in flight if it started
    /// after this call came, else a new one (`None` when the work failed to run).
    async fn run<F>(&self, work: impl FnOnce() -> F) -> Option<T>
    where
        F: std::future::Future<Output = Result<T, tokio::task::JoinError>>,
    {
        let asked = self.started.load(Ordering::SeqCst);
        let mut last = self.last.lock().await;
        if let Some((run, result)) = last.as_ref()
            && *run > asked
        {
            return Some(result.clone());
        }
        let run = self.started.fetch_add(1, Ordering::SeqCst) + 1;
        let result = work().await.ok()?;
        *last = Some((run, result.clone()));
        Some(result)
    }
}

/// The first value of a header as text.
fn header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

async fn post_mcp(state: &Arc<State>, request: Request<Incoming>) -> Response<Body> {
    let (mut response, body_read) = post_mcp_inner(state, request).await;
    if !body_read {
        // A request refused before its body was read leaves that body on the connection: the
        // connection closes after the answer, and says so, so a client never sends its next request
        // on a connection the server is about to close.
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// `POST /mcp`: the answer, and whether the request's body was read.
async fn post_mcp_inner(state: &Arc<State>, request: Request<Incoming>) -> (Response<Body>, bool) {
    let headers = request.headers();
    if let Some(origin) = headers.get(header::ORIGIN)
        && !state.origins.iter().any(|o| o.as_bytes() == origin.as_bytes())
    {
        return (
            http_error(
                StatusCode::FORBIDDEN,
                wire::INVALID_REQUEST,
                "Forbidden: the request's Origin is not one of the server's --allowed-origins",
            ),
            false,
        );
    }
    // Kept for the call's own checks: a waiting call is answered only while it still authenticates.
    let authorization = headers
        .get(header::AUTHORIZATION)
        .map(|v| Bytes::copy_from_slice(v.as_bytes()));
    let agent = match state.auth.authenticate_request(authorization.as_deref()).await {
        Ok(agent) => agent,
        Err(e) => return (unauthorized(state, &e), false),
    };
    if state.stopping.load(Ordering::SeqCst) {
        return (
            http_error(
                StatusCode::SERVICE_UNAVAILABLE,
                wire::INTERNAL_ERROR,
                "the server is shutting down (it received SIGTERM or SIGINT)",
            ),
            false,
        );
    }
    let json_body = header_text(headers, "content-type").is_some_and(|t| {
        t.split(';')
            .next()
            .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
    });
    if !json_body {
        return (
            http_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                wire::INVALID_REQUEST,
                "the request body must be one JSON-RPC message (Content-Type: application/json)",
            ),
            false,
        );
    }
    let accepts = header_text(headers, "accept")
        .unwrap_or("*/*")
        .to_ascii_lowercase();
    let accepts_events = accepts.contains("text/event-stream");
    let header_version = header_text(headers, "mcp-protocol-version").map(str::to_owned);
    let header_method = header_text(headers, "mcp-method").map(str::to_owned);
    let header_name = header_text(headers, "mcp-name").map(str::to_owned);
    let link = header_text(headers, "traceparent").map(str::to_owned);
    let body = match tokio::time::timeout(
        BODY_TIMEOUT,
        http_body_util::Limited::new(request.into_body(), MAX_BODY).collect(),
    )
    .await
    {
        Ok(Ok(collected)) => collected.to_bytes(),
        Ok(Err(_)) => {
            return (
                http_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    wire::INVALID_REQUEST,
                    &format!(
                        "Invalid request: the body is over the limit of {MAX_BODY} bytes (16 MiB), or it broke off"
                    ),
                ),
                false,
            );
        }
        Err(_) => {
            return (
                http_error(
                    StatusCode::REQUEST_TIMEOUT,
                    wire::INVALID_REQUEST,
                    &format!(
                        "Invalid request: the body did not arrive within {} s",
                        BODY_TIMEOUT.as_secs()
                    ),
                ),
                false,
            );
        }
    };
    let headers = RoutingHeaders {
        version: header_version,
        method: header_method,
        name: header_name,
    };
    let response = match classify(state, &agent, &body, &headers) {
        Classified::Answer(status, line) => json_response(status, line),
        Classified::Accepted => {
            let mut response = Response::new(Body::Full(None));
            *response.status_mut() = StatusCode::ACCEPTED;
            response
        }
        Classified::Call { id, progress, inline } => {
            call::call(
                state,
                agent,
                call::Request {
                    id,
                    body,
                    progress_token: progress.filter(|_| accepts_events),
                    link,
                    authorization,
                    inline,
                },
            )
            .await
        }
        Classified::Read => read(state, agent, body).await,
        Classified::Listen { id, uris, request } => {
            let (response, finished) = listen(state, &agent, authorization, &id, uris, accepts_events).await;
            request.finish(finished);
            response
        }
    };
    (response, true)
}

/// A 401 (RFC 6750), pointing a JWT client to the server's resource metadata (RFC 9728).
fn unauthorized(state: &State, error: &AuthError) -> Response<Body> {
    let mut challenge = String::from(r#"Bearer realm="shiftwork-mcp""#);
    if let Some(url) = state.auth.resource_metadata_url() {
        challenge.push_str(&format!(r#", resource_metadata="{url}""#));
    }
    if let AuthError::Invalid(_) = error {
        challenge.push_str(r#", error="invalid_token""#);
    }
    let mut response = http_error(
        StatusCode::UNAUTHORIZED,
        wire::INVALID_REQUEST,
        &format!("Unauthorized: {error}"),
    );
    if let Ok(value) = HeaderValue::from_str(&challenge) {
        response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The routing headers of MCP 2026-07-28.
struct RoutingHeaders {
    version: Option<String>,
    method: Option<String>,
    name: Option<String>,
}

/// What a request body is.
enum Classified {
    /// Answered now: a status and a response line.
    Answer(StatusCode, Vec<u8>),
    /// A notification or a response: nothing to answer.
    Accepted,
    /// A `tools/call` to run: its id token, its progress token when it asked for progress, and
    /// whether it runs in place ([`call::runs_in_place`]).
    Call {
        id: String,
        progress: Option<String>,
        inline: bool,
    },
    /// A request that reads files or a store (a resource, a prompt, a completion): answered on a
    /// worker thread.
    Read,
    /// A `subscriptions/listen` (2026-07-28): its id token, the resources it follows, and its
    /// telemetry, finished once the stream is open or refused.
    Listen {
        id: String,
        uris: Vec<String>,
        request: Box<crate::telemetry::Request>,
    },
}

/// Decodes a body and answers what needs no tool: a malformed message, a notification (a cancel
/// takes effect), `initialize`, `ping`, `server/discover`, `tools/list`; a header that disagrees
/// with the body (2026-07-28) is `-32020`.
fn classify(state: &State, agent: &str, body: &[u8], headers: &RoutingHeaders) -> Classified {
    let message = match wire::decode(body) {
        Ok(Some(message)) => message,
        Ok(None) => {
            return Classified::Answer(
                StatusCode::BAD_REQUEST,
                server::error_line(None, wire::INVALID_REQUEST, "Invalid request: the body is empty"),
            );
        }
        Err(refusal) => return Classified::Answer(StatusCode::BAD_REQUEST, server::refusal_line(&refusal)),
    };
    match message {
        Message::Response => Classified::Accepted,
        Message::Notification { method, params } => {
            if method == "notifications/cancelled"
                && let Some(request) = params.request_id
            {
                let key = (agent.to_owned(), IdKey::of(request));
                let contexts = state
                    .in_flight
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .get(&key)
                    .cloned()
                    .unwrap_or_default();
                for context in contexts {
                    context.cancel();
                }
            }
            Classified::Accepted
        }
        Message::Request { id, method, params } => {
            let era = match Era::of(Some(id.raw()), &method, &params) {
                Ok(era) => era,
                Err(refusal) => return Classified::Answer(StatusCode::OK, server::refusal_line(&refusal)),
            };
            if let Some(mismatch) = header_mismatch(era, &method, params.name.as_ref(), headers) {
                return Classified::Answer(
                    StatusCode::BAD_REQUEST,
                    server::error_line(Some(id.raw()), wire::HEADER_MISMATCH, &mismatch),
                );
            }
            if method == "tools/call" {
                let tool = params.name.as_ref().and_then(|name| name.as_deref().ok());
                return Classified::Call {
                    id: id.raw().to_owned(),
                    progress: params.progress_token.map(str::to_owned),
                    inline: call::runs_in_place(tool, body.len()),
                };
            }
            if state.server.hub().is_some() {
                if method == "subscriptions/listen" {
                    let request = state.server.request_started(
                        id,
                        &method,
                        &params,
                        crate::telemetry::Transport::Tcp,
                        Some(agent),
                    );
                    return match state.server.listen_uris(id, &params) {
                        Ok(uris) => Classified::Listen {
                            id: id.raw().to_owned(),
                            uris,
                            request: Box::new(request),
                        },
                        Err(refusal) => {
                            request.finish(crate::telemetry::Finished::Error(refusal.code));
                            Classified::Answer(StatusCode::OK, server::refusal_line(&refusal))
                        }
                    };
                }
                if matches!(
                    method.as_ref(),
                    "resources/read" | "prompts/get" | "completion/complete"
                ) {
                    return Classified::Read;
                }
            }
            Classified::Answer(
                StatusCode::OK,
                state.server.respond_via(
                    id,
                    &method,
                    &params,
                    crate::telemetry::Transport::Tcp,
                    Some(agent),
                ),
            )
        }
    }
}

/// Why the routing headers of a 2026-07-28 request disagree with its body, if they do.
fn header_mismatch(
    era: Era,
    method: &str,
    name: Option<&Result<std::borrow::Cow<'_, str>, wire::Kind>>,
    headers: &RoutingHeaders,
) -> Option<String> {
    let Era::Stateless(version) = era else {
        return None;
    };
    if headers.version.as_deref() != Some(version) {
        return Some(format!(
            "MCP-Protocol-Version must be the request's protocol version {version}, not {}",
            headers
                .version
                .as_deref()
                .map_or(String::from("absent"), |v| format!(
                    "'{}'",
                    shiftwork_seams::echo::echo(v)
                ))
        ));
    }
    if headers.method.as_deref().is_some_and(|m| m != method) {
        return Some(String::from("Mcp-Method must be the request body's method"));
    }
    if method == "tools/call"
        && let (Some(header), Some(Ok(name))) = (&headers.name, name)
        && header != name
    {
        return Some(String::from("Mcp-Name must be the request body's tool name"));
    }
    None
}

/// A request that reads files or a store, answered on a worker thread so that no runtime thread
/// waits for a disk or a database.
async fn read(state: &Arc<State>, agent: Agent, body: Bytes) -> Response<Body> {
    let worker_state = Arc::clone(state);
    let answered = tokio::task::spawn_blocking(move || match wire::decode(&body) {
        Ok(Some(Message::Request { id, method, params })) => worker_state.server.respond_via(
            id,
            &method,
            &params,
            crate::telemetry::Transport::Tcp,
            Some(&agent),
        ),
        _ => server::error_line(None, wire::INTERNAL_ERROR, "the request could not be read again"),
    })
    .await;
    match answered {
        Ok(line) => json_response(StatusCode::OK, line),
        Err(_) => json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            server::error_line(None, wire::INTERNAL_ERROR, "the request failed"),
        ),
    }
}

/// `subscriptions/listen` (MCP 2026-07-28): an event stream that opens with
/// `notifications/subscriptions/acknowledged` and carries a `notifications/resources/updated` for
/// each change of a followed resource, until the client closes it. The subscription ends with the
/// stream: a sink whose receiver is gone reports it, and the hub forgets it. The caller's credentials
/// are checked again at every look (each 200 ms) and before every notification: a token revoked or a
/// JWT expired ends the stream.
async fn listen(
    state: &Arc<State>,
    agent: &Agent,
    authorization: Option<Bytes>,
    id: &str,
    uris: Vec<String>,
    accepts_events: bool,
) -> (Response<Body>, crate::telemetry::Finished) {
    let Some(hub) = state.server.hub() else {
        return (
            json_response(
                StatusCode::OK,
                server::error_line(
                    Some(id),
                    wire::METHOD_NOT_FOUND,
                    "this server serves no resources",
                ),
            ),
            crate::telemetry::Finished::Error(wire::METHOD_NOT_FOUND),
        );
    };
    if !accepts_events {
        return (
            json_response(
                StatusCode::NOT_ACCEPTABLE,
                server::error_line(
                    Some(id),
                    wire::INVALID_REQUEST,
                    "subscriptions/listen answers with an event stream: the request must accept text/event-stream",
                ),
            ),
            crate::telemetry::Finished::Error(wire::INVALID_REQUEST),
        );
    }
    let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(64);
    let _ = sender.try_send(call::event(&crate::subscriptions::acknowledged_line(id, &uris)));
    let holds = call::credential_check(state, agent, authorization);
    let sink: crate::subscriptions::Sink = Arc::new(move |line: Option<&[u8]>| match line {
        _ if !holds() => false,
        None => !sender.is_closed(),
        Some(line) => match sender.try_send(call::event(line)) {
            Ok(()) => true,
            // A client that does not read its stream misses an update, and reads the resource again.
            Err(tokio::sync::mpsc::error::TrySendError::Full(_)) => true,
            Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => false,
        },
    });
    // The subscription reads each resource once (its baseline), maybe from a database: on a
    // blocking thread.
    let hub = Arc::clone(hub);
    let (listen_id, who) = (id.to_owned(), agent.clone());
    let made =
        tokio::task::spawn_blocking(move || hub.subscribe(uris, Some(listen_id), Some(&who), sink)).await;
    let refusal = match made {
        Ok(Ok(_)) => None,
        Ok(Err(e)) => Some(e.to_string()),
        Err(_) => Some(String::from("the subscription could not be made")),
    };
    if let Some(message) = refusal {
        return (
            json_response(
                StatusCode::SERVICE_UNAVAILABLE,
                server::error_line(Some(id), wire::INVALID_REQUEST, &message),
            ),
            crate::telemetry::Finished::Error(wire::INVALID_REQUEST),
        );
    }
    (
        call::event_stream(Body::Events(receiver, None)),
        crate::telemetry::Finished::Result,
    )
}
