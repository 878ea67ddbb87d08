//! The web view: `serve --http` also serves a read-only page at `/ui` (unless `--ui off`), which shows
//! the team's work live — each job's plan as waves and as a graph, the holds, budgets and last
//! clock-outs; the contracts queue per agent and one contract's whole record; the hours gate; the
//! work log of the day.
//!
//! - **Who may look.** The same credentials as MCP ([`session`]): a sign-in form takes a bearer token
//!   or an OAuth access token once and opens a short-lived session (a signed `HttpOnly`,
//!   `SameSite=Strict` cookie, `Secure` over TLS), re-checked on every request, so revoking the
//!   token ends the session. `/ui` without a session shows the sign-in only. What a session sees is
//!   what the MCP tools served here let any authenticated agent read: the jobs when the shift-work
//!   tools are served (`shiftwork_status` reads any checkpoint inside the roots), the contracts
//!   when the contracts tools are (`inspect_mesh_state` lists every contract), the work log's file
//!   and count when its tools are (its items only with `--ui-worklog-items`, as its tools never
//!   answer them), and the hours gate when one is configured (`--ui-hours`).
//! - **It cannot hurt the server.** Pages read nothing themselves: one thread reads the sources
//!   while a page is open and publishes what it read ([`feed`]); a request answers from the last
//!   publication, and an event stream sends each new one on (a reader too slow for it skips to the
//!   newest). Bounds: [`MAX_STREAMS`] event streams, a request rate per session, one contract read
//!   at a time with a short queue, sign-ins at [`SIGN_IN_RATE`] a second. Tool calls keep their own
//!   pool of threads, which the view never uses.
//! - **Hostile text stays text.** The page is static HTML and one script, both embedded in the
//!   binary; the script puts every value in the page as text (never as markup), and the plan graph
//!   is an SVG picture drawn by the server ([`shiftwork_watch::web::svg`]) and shown as an image.
//!   Every response forbids inline script and style, remote origins and framing
//!   (`Content-Security-Policy`), content sniffing (`X-Content-Type-Options`) and referrers to other
//!   sites.

pub mod assets;
pub mod feed;
pub mod session;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use shiftwork_watch::gather::{HoursWatch, StoreLocation};

use super::{Body, State};
use crate::server::Server;
use crate::settings::{Setting, Settings};
use feed::{Feed, Published, RecordError};
use session::{Bucket, SessionError, Sessions, Signed};

/// `--ui on|off`.
pub const UI: Setting = Setting {
    flag: "--ui",
    env: Some("SHIFTWORK_UI"),
    takes_value: true,
    help: "HTTP: on (default) or off: the read-only web view at /ui",
};
/// `--ui-checkpoints PATH,…`.
pub const UI_CHECKPOINTS: Setting = Setting {
    flag: "--ui-checkpoints",
    env: Some("SHIFTWORK_UI_CHECKPOINTS"),
    takes_value: true,
    help: "HTTP: comma list of checkpoints the web view shows, besides each root's .shiftwork/checkpoint.json (inside --roots)",
};
/// `--ui-hours EXPR`.
pub const UI_HOURS: Setting = Setting {
    flag: "--ui-hours",
    env: Some("SHIFTWORK_UI_HOURS"),
    takes_value: true,
    help: "HTTP: the team's operating hours, the web view's hours gate (e.g. 'Mon-Fri 09:00-17:30'; zone: --zone)",
};
/// `--ui-worklog-items`.
pub const UI_WORKLOG_ITEMS: Setting = Setting {
    flag: "--ui-worklog-items",
    env: Some("SHIFTWORK_UI_WORKLOG_ITEMS"),
    takes_value: false,
    help: "HTTP: the web view lists the work log's items (default: its file name and count, as worklog_check says)",
};

/// Every setting of the web view.
pub const SETTINGS: &[Setting] = &[UI, UI_CHECKPOINTS, UI_HOURS, UI_WORKLOG_ITEMS];

/// The most event streams open at once (every page holds one); beyond, a page is answered busy.
pub const MAX_STREAMS: usize = 512;
/// The largest sign-in or sign-out form.
pub const MAX_FORM: usize = 16 * 1024;
/// How long a form may take to arrive.
pub const FORM_TIMEOUT: Duration = Duration::from_secs(10);
/// Sign-ins a second, for the whole server (each checks a token).
pub const SIGN_IN_RATE: f64 = 20.0;
/// The frames an event stream's queue holds (an event is three); a reader too slow for them skips
/// to the newest document.
pub const STREAM_QUEUE: usize = 8;
/// How long a request over its session's rate (or a sign-in over the server's) waits before its
/// `429` answer: the time the session's rate gives back one request.
pub const OVER_RATE_WAIT: Duration = Duration::from_millis((1000.0 / session::RATE) as u64);
/// Over how long the open pages' event streams send one publication: not all at one instant, where
/// a tool call arriving then would wait behind every page's write, but each at its own place in
/// this span (a change reaches a page at most this much later).
pub const SPREAD: Duration = Duration::from_millis(150);
/// How often an event stream checks its session again.
pub const STREAM_TICK: Duration = Duration::from_secs(1);
/// How old a reading a request may be answered from: a page is answered at once while the view is
/// read (every [`feed::FULL_EVERY`] at the latest); the first page after a quiet spell waits for a
/// reading.
pub const FRESH: Duration = Duration::from_millis(2_500);
/// How often an idle event stream sends a comment, so that proxies keep it open.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// The Content-Security-Policy of the page: its own script and style only, no inline ones, no
/// remote origin, no framing, and no string where the DOM would parse markup (Trusted Types).
pub const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
     connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; \
     require-trusted-types-for 'script'; trusted-types 'none'";
/// The Content-Security-Policy of a picture or a data document: nothing at all.
pub const DATA_POLICY: &str = "default-src 'none'; frame-ancestors 'none'; sandbox";

/// The web view's configuration, resolved from the settings at start-up.
pub struct UiConfig {
    enabled: bool,
    named: Vec<PathBuf>,
    roots: Option<Vec<PathBuf>>,
    store: Option<StoreLocation>,
    hours: Option<HoursWatch>,
    zone: chrono_tz::Tz,
    worklog: shiftwork_worklog::Config,
    worklog_items: bool,
}

impl UiConfig {
    /// The configuration of `settings`; an error names the flag. Without `--http`, any web view flag
    /// is refused (it applies only with `--http`).
    pub fn from_settings(settings: &Settings) -> Result<UiConfig, String> {
        settings.check_switches(SETTINGS)?;
        if settings.value(&super::HTTP).is_none() {
            if let Some(s) = SETTINGS.iter().find(|s| settings.flag(s).is_some()) {
                return Err(format!("{} applies only with --http", s.flag));
            }
            return Ok(UiConfig::off());
        }
        let enabled = match settings.value(&UI).map(|v| v.trim().to_ascii_lowercase()) {
            None => true,
            Some(v) if ["on", "1", "true", "yes"].contains(&v.as_str()) => true,
            Some(v) if ["off", "0", "false", "no"].contains(&v.as_str()) => false,
            Some(v) => {
                return Err(format!(
                    "--ui / SHIFTWORK_UI must be on or off, not '{}'",
                    shiftwork_seams::echo::clip_echo(&v)
                ));
            }
        };
        if !enabled {
            return Ok(UiConfig::off());
        }
        let roots = crate::groups::shiftwork::roots(settings)?;
        let named: Vec<PathBuf> = settings
            .value(&UI_CHECKPOINTS)
            .map(|list| {
                list.split(',')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default();
        if named.len() > feed::MAX_JOBS {
            return Err(format!(
                "--ui-checkpoints names {} checkpoints; the web view shows at most {}",
                named.len(),
                feed::MAX_JOBS
            ));
        }
        if let Some(roots) = &roots {
            let env = shiftwork_core::Env::os().with_roots(roots.clone());
            for path in &named {
                env.confine_checkpoint(path)
                    .map_err(|refusal| format!("--ui-checkpoints: {refusal}"))?;
            }
        }
        let zone = crate::groups::hours::server_zone(settings, &crate::groups::hours::ZONE, "the web view")?;
        let hours = settings
            .value(&UI_HOURS)
            .map(|text| HoursWatch::parse(text, zone, zone))
            .transpose()
            .map_err(|e| format!("--ui-hours: {e}"))?;
        let store = match crate::groups::contracts::config(settings)?.location {
            Ok(shiftwork_contracts::location::Location::File(path)) => Some(StoreLocation::Sqlite(path)),
            Ok(shiftwork_contracts::location::Location::Postgres(url)) => Some(StoreLocation::Postgres(url)),
            Err(_) => None,
        };
        Ok(UiConfig {
            enabled: true,
            named,
            roots,
            store,
            hours,
            zone,
            worklog: crate::groups::worklog::config(settings),
            worklog_items: settings.switch(&UI_WORKLOG_ITEMS),
        })
    }

    /// No web view.
    pub fn off() -> UiConfig {
        UiConfig {
            enabled: false,
            named: Vec::new(),
            roots: None,
            store: None,
            hours: None,
            zone: chrono_tz::UTC,
            worklog: shiftwork_worklog::Config::builder().build(),
            worklog_items: false,
        }
    }

    /// Whether the web view is served.
    pub fn enabled(&self) -> bool {
        self.enabled
    }
}

/// The running web view of a server.
pub struct Ui {
    sessions: Sessions,
    feed: Feed,
    sign_ins: Mutex<Bucket>,
}

impl Ui {
    /// Starts the web view of `server` (`None` when it is off): it shows what the tools `server`
    /// serves let an agent read; `secure` when the server speaks TLS.
    pub fn start(config: UiConfig, server: &Server, secure: bool) -> Result<Option<Ui>, String> {
        if !config.enabled {
            return Ok(None);
        }
        let serves = |tool: &str| server.registry().get(tool).is_some();
        let jobs = serves("shiftwork_status").then(|| {
            let roots = config.roots.clone().unwrap_or_default();
            feed::Jobs {
                named: config.named.clone(),
                env: shiftwork_core::Env::os().with_roots(roots.clone()),
                roots,
            }
        });
        let sources = feed::Sources {
            jobs,
            store: config.store.filter(|_| serves("inspect_mesh_state")),
            hours: config.hours,
            zone: config.zone,
            worklog: serves("worklog_check").then(|| {
                (
                    shiftwork_worklog::Worklog::new(config.worklog, shiftwork_seams::OsFs),
                    config.worklog_items,
                )
            }),
        };
        Ok(Some(Ui {
            sessions: Sessions::new(secure)?,
            feed: Feed::start(sources)?,
            sign_ins: Mutex::new(Bucket::new(SIGN_IN_RATE, SIGN_IN_RATE * 2.0)),
        }))
    }
}

impl super::HttpServer {
    /// Where the web view is served (`…/ui`), when it is.
    pub fn ui_url(&self) -> Option<String> {
        self.state.ui.as_ref()?;
        let url = self.url().ok()?;
        Some(format!("{}/ui", url.trim_end_matches("/mcp")))
    }
}

/// Whether `path` is the web view's.
pub fn serves(path: &str) -> bool {
    path == "/ui" || path.starts_with("/ui/")
}

/// Answers a request for the web view.
pub(super) async fn handle(state: &Arc<State>, request: Request<Incoming>) -> Response<Body> {
    let Some(ui) = state.ui.as_ref() else {
        return plain(
            StatusCode::NOT_FOUND,
            "not found: the web view is off (--ui off)\n",
        );
    };
    let path = request.uri().path().to_owned();
    let method = request.method().clone();
    let response = route(state, ui, request, method, &path).await;
    if response.status() == StatusCode::TOO_MANY_REQUESTS {
        // A page over its rate waits for its next turn before it hears so: a page that asks in a
        // loop is held to its rate in requests, not only in answers, and costs a sleeping task.
        tokio::time::sleep(OVER_RATE_WAIT).await;
    }
    response
}

/// The answer of one web view request.
async fn route(
    state: &Arc<State>,
    ui: &Ui,
    request: Request<Incoming>,
    method: Method,
    path: &str,
) -> Response<Body> {
    match (method, path) {
        (Method::GET, "/ui" | "/ui/") => front(state, ui, request.headers()),
        (Method::GET, "/ui/app.js") => asset(assets::APP_JS, "text/javascript; charset=utf-8"),
        (Method::GET, "/ui/app.css") => asset(assets::APP_CSS, "text/css; charset=utf-8"),
        (Method::POST, "/ui/sign-in") => sign_in(state, ui, request).await,
        (Method::POST, "/ui/sign-out") => sign_out(state, ui, request).await,
        (Method::GET, "/ui/session") => session_info(state, ui, request.headers()),
        (Method::GET, "/ui/state") => state_document(state, ui, request.headers()).await,
        (Method::GET, "/ui/events") => events(state, ui, request.headers()),
        (Method::GET, p) if p.starts_with("/ui/plan/") => plan(state, ui, &request).await,
        (Method::GET, p) if p.starts_with("/ui/contract/") => contract(state, ui, request.headers(), p).await,
        (_, "/ui/sign-in" | "/ui/sign-out") => not_allowed("POST"),
        (_, "/ui" | "/ui/" | "/ui/app.js" | "/ui/app.css" | "/ui/session" | "/ui/state" | "/ui/events") => {
            not_allowed("GET")
        }
        _ => plain(StatusCode::NOT_FOUND, "not found\n"),
    }
}

/// The session of a request.
fn signed(state: &State, ui: &Ui, headers: &HeaderMap, counted: bool) -> Result<Signed, SessionError> {
    let cookies = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok());
    ui.sessions.session(&state.auth, cookies, counted)
}

/// The answer to a request without a valid session.
fn refused(ui: &Ui, error: &SessionError) -> Response<Body> {
    let (status, clear) = match error {
        SessionError::None => (StatusCode::UNAUTHORIZED, true),
        SessionError::Revoked(_) => (StatusCode::UNAUTHORIZED, true),
        SessionError::TooMany => (StatusCode::TOO_MANY_REQUESTS, false),
    };
    let mut response = data(
        status,
        "application/json",
        serde_json::json!({"error": error.to_string()}).to_string(),
    );
    if clear && let Ok(value) = HeaderValue::from_str(&ui.sessions.clearing_cookie()) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    if status == StatusCode::TOO_MANY_REQUESTS {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// `GET /ui`: the page with a session, else the sign-in.
fn front(state: &State, ui: &Ui, headers: &HeaderMap) -> Response<Body> {
    match signed(state, ui, headers, true) {
        Ok(_) => page(StatusCode::OK, Bytes::from_static(assets::INDEX_HTML.as_bytes())),
        Err(_) => page(StatusCode::OK, Bytes::from(assets::sign_in_page(None))),
    }
}

/// `POST /ui/sign-in`: the token, once, in a form; a session cookie and the page on success.
async fn sign_in(state: &State, ui: &Ui, request: Request<Incoming>) -> Response<Body> {
    if !from_the_page(state, request.headers()) {
        return plain(
            StatusCode::FORBIDDEN,
            "forbidden: this form must be sent from the server's own page\n",
        );
    }
    if !ui.sign_ins.lock().unwrap_or_else(PoisonError::into_inner).take() {
        let mut response = page(
            StatusCode::TOO_MANY_REQUESTS,
            Bytes::from(assets::sign_in_page(Some(
                "Too many sign-ins right now; try again in a moment.",
            ))),
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        return response;
    }
    let form = match read_form(request).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    let Some(token) = field(&form, "token") else {
        return page(
            StatusCode::BAD_REQUEST,
            Bytes::from(assets::sign_in_page(Some("Paste a token to sign in."))),
        );
    };
    match ui.sessions.sign_in(&state.auth, &token) {
        Ok((agent, cookie)) => {
            tracing::info!(agent = %agent, "web view: signed in");
            let mut response = see_other("/ui");
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            response
        }
        Err(e) => {
            tracing::info!("web view: a sign-in was refused: {e}");
            page(
                StatusCode::UNAUTHORIZED,
                Bytes::from(assets::sign_in_page(Some(&format!(
                    "That token does not sign in: {e}."
                )))),
            )
        }
    }
}

/// `POST /ui/sign-out`: ends the session (its sign-out token required).
async fn sign_out(state: &State, ui: &Ui, request: Request<Incoming>) -> Response<Body> {
    if !from_the_page(state, request.headers()) {
        return plain(
            StatusCode::FORBIDDEN,
            "forbidden: this form must be sent from the server's own page\n",
        );
    }
    let session = match signed(state, ui, request.headers(), false) {
        Ok(session) => session,
        Err(_) => return see_other("/ui"),
    };
    let form = match read_form(request).await {
        Ok(form) => form,
        Err(response) => return response,
    };
    if !field(&form, "csrf").is_some_and(|given| ui.sessions.csrf_matches(&session.id, &given)) {
        return plain(
            StatusCode::FORBIDDEN,
            "forbidden: the sign-out did not come from this session's page\n",
        );
    }
    let clear = ui.sessions.sign_out(&session.id);
    let mut response = see_other("/ui");
    if let Ok(value) = HeaderValue::from_str(&clear) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `GET /ui/session`: who is signed in and the sign-out token, with the session renewed.
fn session_info(state: &State, ui: &Ui, headers: &HeaderMap) -> Response<Body> {
    let session = match signed(state, ui, headers, true) {
        Ok(session) => session,
        Err(e) => return refused(ui, &e),
    };
    let mut response = data(
        StatusCode::OK,
        "application/json",
        serde_json::json!({
            "agent": session.agent,
            "csrf": ui.sessions.csrf(&session.id),
            "renew_seconds": session::IDLE.as_secs() / 3,
        })
        .to_string(),
    );
    if let Some(cookie) = ui.sessions.renew(&session.id)
        && let Ok(value) = HeaderValue::from_str(&cookie)
    {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// `GET /ui/state`: the last reading (a fresh one when the view was idle).
async fn state_document(state: &State, ui: &Ui, headers: &HeaderMap) -> Response<Body> {
    if let Err(e) = signed(state, ui, headers, true) {
        return refused(ui, &e);
    }
    let published = ui.feed.fresh(FRESH, Duration::from_secs(3)).await;
    data(StatusCode::OK, "application/json", envelope(&published))
}

/// A publication as the page receives it: the server's time now, and the document.
fn envelope(published: &Published) -> Bytes {
    let [head, document, tail] = envelope_parts(published, b"", b"");
    let mut out = Vec::with_capacity(head.len() + document.len() + tail.len());
    for part in [head, document, tail] {
        out.extend_from_slice(&part);
    }
    Bytes::from(out)
}

/// [`envelope`] in three parts between `before` and `after`: the document itself is the published
/// bytes, shared (an event stream sends it without a copy of its own).
fn envelope_parts(published: &Published, before: &[u8], after: &'static [u8]) -> [Bytes; 3] {
    let now = chrono::Utc::now().timestamp_millis();
    let document = if published.document.is_empty() {
        Bytes::from_static(b"null")
    } else {
        published.document.clone()
    };
    let mut head = before.to_vec();
    head.extend_from_slice(format!("{{\"now\":{now},\"state\":").as_bytes());
    let mut tail = b"}".to_vec();
    tail.extend_from_slice(after);
    [Bytes::from(head), document, Bytes::from(tail)]
}

/// `GET /ui/events`: the publications as server-sent events while the session lasts.
fn events(state: &Arc<State>, ui: &Ui, headers: &HeaderMap) -> Response<Body> {
    let session = match signed(state, ui, headers, true) {
        Ok(session) => session,
        Err(e) => return refused(ui, &e),
    };
    if ui.feed.streams() >= MAX_STREAMS {
        return busy("the web view has too many pages open; try again shortly");
    }
    if !ui.sessions.open_stream(&session.id) {
        let mut response = data(
            StatusCode::TOO_MANY_REQUESTS,
            "application/json",
            r#"{"error":"this session has too many pages open"}"#,
        );
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
        return response;
    }
    let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(STREAM_QUEUE);
    let subscription = ui.feed.subscribe();
    let state = Arc::clone(state);
    tokio::spawn(async move {
        stream(&state, subscription, session.id, sender).await;
        if let Some(ui) = state.ui.as_ref() {
            ui.sessions.close_stream(&session.id);
        }
    });
    let mut response = Response::new(Body::Events(receiver, None));
    secure_headers(response.headers_mut(), DATA_POLICY);
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Feeds one event stream: the newest publication whenever one comes (a slow reader skips to the
/// newest), a comment now and then, and the end when the session ends or the server stops.
async fn stream(
    state: &State,
    mut subscription: feed::Subscription,
    id: session::SessionId,
    sender: tokio::sync::mpsc::Sender<Bytes>,
) {
    let Some(ui) = state.ui.as_ref() else { return };
    let mut pending = sender.try_send(Bytes::from_static(b"retry: 1000\n\n")).is_ok();
    let mut tick = tokio::time::interval(STREAM_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut quiet = Duration::ZERO;
    // This stream's place in the spread: its share of a new publication goes out this long after it.
    let spread = spread_of(STREAMS_OPENED.fetch_add(1, Ordering::Relaxed));
    let mut due: Option<tokio::time::Instant> = None;
    loop {
        if pending && due.is_none_or(|at| at <= tokio::time::Instant::now()) {
            due = None;
            if sender.is_closed() {
                return;
            }
            // One event is three frames, the document shared: sent whole when there is room for
            // all three (this task is the queue's only sender), else left for a later turn.
            // Marked seen even when it waits for room: `pending` sends the newest at a later turn.
            let published = Arc::clone(&subscription.latest.borrow_and_update());
            if published.version > 0 && sender.capacity() >= 3 {
                for frame in envelope_parts(&published, b"event: state\ndata: ", b"\n\n") {
                    if sender.try_send(frame).is_err() {
                        return;
                    }
                }
                pending = false;
                quiet = Duration::ZERO;
            }
        }
        tokio::select! {
            changed = subscription.latest.changed() => {
                if changed.is_err() {
                    return;
                }
                if !pending {
                    due = Some(tokio::time::Instant::now() + spread);
                }
                pending = true;
            }
            () = tokio::time::sleep_until(due.unwrap_or_else(tokio::time::Instant::now)), if due.is_some() => {}
            _ = tick.tick() => {
                if state.stopping.load(Ordering::SeqCst) || sender.is_closed() {
                    return;
                }
                if let Err(e) = ui.sessions.check_session(&state.auth, &id, false) {
                    let reason = match e {
                        SessionError::Revoked(why) => why.to_string(),
                        SessionError::None => String::from("it expired, or was signed out"),
                        SessionError::TooMany => e.to_string(),
                    };
                    let reason = serde_json::json!({"reason": reason}).to_string();
                    let _ = sender.try_send(event("signed-out", reason.as_bytes()));
                    return;
                }
                quiet += STREAM_TICK;
                if quiet >= HEARTBEAT && sender.try_send(Bytes::from_static(b": still here\n\n")).is_ok() {
                    quiet = Duration::ZERO;
                }
            }
        }
    }
}

/// The event streams opened since the start (each stream's place in the [`SPREAD`]).
static STREAMS_OPENED: AtomicUsize = AtomicUsize::new(0);

/// How long after a publication the `n`th stream opened sends it: the streams' places spread over
/// [`SPREAD`] (by a stride prime to 1,000, so streams opened one after another fall far apart).
fn spread_of(n: usize) -> Duration {
    SPREAD.mul_f64(((n.wrapping_mul(617)) % 1000) as f64 / 1000.0)
}

/// One server-sent event (`data` holds no line break: it is JSON).
fn event(name: &str, data: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(data.len() + name.len() + 16);
    out.extend_from_slice(b"event: ");
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\ndata: ");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// `GET /ui/plan/<n>.svg?scheme=light|dark` and `GET /ui/plan/<n>.mmd`: job `n`'s plan.
async fn plan(state: &State, ui: &Ui, request: &Request<Incoming>) -> Response<Body> {
    if let Err(e) = signed(state, ui, request.headers(), true) {
        return refused(ui, &e);
    }
    let name = request.uri().path().trim_start_matches("/ui/plan/");
    let (index, kind) = match name.split_once('.') {
        Some((n, kind)) => (n.parse::<usize>().ok(), kind),
        None => (None, ""),
    };
    let dark = request
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|pair| pair == "scheme=dark"));
    let published = ui.feed.fresh(FRESH, Duration::from_secs(3)).await;
    let Some(plan) = index
        .and_then(|i| published.plans.get(i))
        .and_then(Option::as_ref)
    else {
        return plain(StatusCode::NOT_FOUND, "no such plan\n");
    };
    match kind {
        "svg" => {
            let bytes = if dark { &plan.dark } else { &plan.light };
            let mut response = data(StatusCode::OK, "image/svg+xml", bytes.clone());
            // The page names a picture by what it shows (`v=`): that name may be kept.
            let key = format!("v={}", plan.key());
            if request
                .uri()
                .query()
                .is_some_and(|q| q.split('&').any(|pair| pair == key))
            {
                response.headers_mut().insert(
                    header::CACHE_CONTROL,
                    HeaderValue::from_static("private, max-age=3600"),
                );
            }
            response
        }
        "mmd" => {
            let mut response = data(StatusCode::OK, "text/plain; charset=utf-8", plan.mermaid.clone());
            response.headers_mut().insert(
                header::CONTENT_DISPOSITION,
                HeaderValue::from_static("attachment; filename=\"plan.mmd\""),
            );
            response
        }
        _ => plain(StatusCode::NOT_FOUND, "no such plan\n"),
    }
}

/// `GET /ui/contract/<id>`: one contract's whole record.
async fn contract(state: &State, ui: &Ui, headers: &HeaderMap, path: &str) -> Response<Body> {
    if let Err(e) = signed(state, ui, headers, true) {
        return refused(ui, &e);
    }
    let id = path.trim_start_matches("/ui/contract/");
    if id.is_empty() || id.len() > 64 || !id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return plain(StatusCode::NOT_FOUND, "no such contract\n");
    }
    match ui.feed.record(id).await {
        Ok(Some(record)) => data(StatusCode::OK, "application/json", record.to_string()),
        Ok(None) => data(
            StatusCode::NOT_FOUND,
            "application/json",
            r#"{"error":"no such contract"}"#,
        ),
        Err(RecordError::Busy) => busy("the web view is reading other contracts; try again shortly"),
        Err(RecordError::Store(sentence)) => data(
            StatusCode::SERVICE_UNAVAILABLE,
            "application/json",
            serde_json::json!({"error": sentence}).to_string(),
        ),
    }
}

/// Whether a form came from this server's own page: its `Origin` must be the server's
/// (or one of `--allowed-origins`); an `Origin` of `null` (a browser that hides it) needs
/// `Sec-Fetch-Site: same-origin`; without an `Origin`, `Sec-Fetch-Site` must be `same-origin` when
/// given (a client that sends neither is not a browser, where no other site can act).
fn from_the_page(state: &State, headers: &HeaderMap) -> bool {
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
    let same_site = headers
        .get("sec-fetch-site")
        .map(|v| v.as_bytes() == b"same-origin");
    match text(header::ORIGIN) {
        Some("null") => same_site == Some(true),
        Some(origin) => {
            let host = text(header::HOST).unwrap_or("");
            let own = ["http", "https"]
                .iter()
                .any(|scheme| origin == format!("{scheme}://{host}"));
            own || state.origins.iter().any(|o| o == origin)
        }
        None => same_site != Some(false),
    }
}

/// Reads a form body (`application/x-www-form-urlencoded`, at most [`MAX_FORM`] bytes).
async fn read_form(request: Request<Incoming>) -> Result<Vec<(String, String)>, Response<Body>> {
    let form_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|t| t.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/x-www-form-urlencoded"));
    if !form_type {
        return Err(plain(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the form must be application/x-www-form-urlencoded\n",
        ));
    }
    let body = tokio::time::timeout(
        FORM_TIMEOUT,
        http_body_util::Limited::new(request.into_body(), MAX_FORM).collect(),
    )
    .await;
    match body {
        Ok(Ok(collected)) => Ok(parse_form(&collected.to_bytes())),
        _ => Err(plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the form is too large, or did not arrive in time\n",
        )),
    }
}

/// The pairs of a URL-encoded form.
fn parse_form(body: &[u8]) -> Vec<(String, String)> {
    body.split(|&b| b == b'&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let mut parts = pair.splitn(2, |&b| b == b'=');
            let name = percent_decode(parts.next().unwrap_or_default());
            let value = percent_decode(parts.next().unwrap_or_default());
            (name, value)
        })
        .collect()
}

/// A form field's value (the first).
fn field(form: &[(String, String)], name: &str) -> Option<String> {
    form.iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// `application/x-www-form-urlencoded` decoding: `+` is a space, `%XX` a byte; not UTF-8 is lossy.
fn percent_decode(bytes: &[u8]) -> String {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => match bytes.get(i + 1..i + 3) {
                Some(&[h, l]) if h.is_ascii_hexdigit() && l.is_ascii_hexdigit() => {
                    let digit = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
                    out.push(digit(h) * 16 + digit(l));
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The headers every answer of the web view carries.
fn secure_headers(headers: &mut HeaderMap, policy: &'static str) {
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(policy));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // `same-origin`, not `no-referrer`: under `no-referrer` a browser sends a form's `Origin` as
    // `null`, and the server could no longer tell its own page's sign-in from another site's.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
}

fn with(status: StatusCode, content_type: &'static str, body: Bytes, policy: &'static str) -> Response<Body> {
    let mut response = Response::new(Body::Full(Some(body)));
    *response.status_mut() = status;
    secure_headers(response.headers_mut(), policy);
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// An HTML page.
fn page(status: StatusCode, body: Bytes) -> Response<Body> {
    with(status, "text/html; charset=utf-8", body, PAGE_POLICY)
}

/// An embedded asset.
fn asset(body: &'static str, content_type: &'static str) -> Response<Body> {
    let mut response = with(
        StatusCode::OK,
        content_type,
        Bytes::from_static(body.as_bytes()),
        PAGE_POLICY,
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// A data document or a picture.
fn data(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Body> {
    with(status, content_type, body.into(), DATA_POLICY)
}

fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    data(
        status,
        "text/plain; charset=utf-8",
        Bytes::from_static(text.as_bytes()),
    )
}

fn busy(message: &str) -> Response<Body> {
    let mut response = data(
        StatusCode::SERVICE_UNAVAILABLE,
        "application/json",
        serde_json::json!({"error": message}).to_string(),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

fn not_allowed(allow: &'static str) -> Response<Body> {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    response
}

fn see_other(location: &'static str) -> Response<Body> {
    let mut response = plain(StatusCode::SEE_OTHER, "see /ui\n");
    response
        .headers_mut()
        .insert(header::LOCATION, HeaderValue::from_static(location));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 38 item 3: the streams' places cover the spread evenly and stay inside it, so 200 open
    /// pages never send one publication at one instant.
    #[test]
    fn issue38_item3_the_streams_spread_a_publication() {
        let places: Vec<Duration> = (0..200).map(spread_of).collect();
        assert!(places.iter().all(|p| *p < SPREAD), "{places:?}");
        // Every tenth of the spread holds some of the 200, and none holds more than a quarter.
        let mut tenths = [0usize; 10];
        for p in &places {
            tenths[(p.as_secs_f64() / SPREAD.as_secs_f64() * 10.0) as usize] += 1;
        }
        assert!(tenths.iter().all(|n| (1..=50).contains(n)), "{tenths:?}");
        // Two streams opened one after the other are far apart.
        assert!(
            places.windows(2).all(|w| w[0].abs_diff(w[1]) >= SPREAD / 10),
            "{places:?}"
        );
        // The over-rate wait is the time the session's rate gives back one request.
        assert_eq!(OVER_RATE_WAIT, Duration::from_secs_f64(1.0 / session::RATE));
    }

    #[test]
    fn forms_decode_as_browsers_encode_them() {
        let check = |body: &str, expected: &[(&str, &str)]| {
            let got = parse_form(body.as_bytes());
            let got: Vec<(&str, &str)> = got.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
            assert_eq!(got, expected, "{body}");
        };
        check("token=swk_abc%2B1+2", &[("token", "swk_abc+1 2")]);
        check("a=1&&b=%zz&c=%4", &[("a", "1"), ("b", "%zz"), ("c", "%4")]);
        check("token=%E2%82%AC", &[("token", "€")]);
        check("", &[]);
    }
}
