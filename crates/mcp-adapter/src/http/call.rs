//! A `tools/call` over HTTP: its turn, its run on a worker thread, its waits parked as state, and the
//! fair share of each agent.
//!
//! - **Turns.** A call runs on a blocking thread of the runtime while it works; at most
//!   [`MAX_CALLS`] run at once, and each agent at most [`MAX_CALLS_PER_AGENT`] of them, so one agent
//!   can never hold every thread. A new call waits for its turn without a thread; at most
//!   [`MAX_QUEUED_PER_AGENT`] of one agent and [`MAX_WAITING`] in all wait, then `503`. A small call
//!   of a tool that only computes on its arguments runs in place, with its turn ([`runs_in_place`]).
//! - **Waits hold nothing.** A waiting poll that finds no work is parked
//!   ([`crate::registry::CallContext::park`]): state in the request's task, woken by the store's
//!   signal (or its cancellation, or its deadline), holding no thread and no turn; it takes a turn
//!   again only to look. At most [`MAX_PARKED_PER_AGENT`] polls of one agent wait at once; beyond, a
//!   poll is answered `503` with nothing claimed. Other agents' calls are admitted whatever one agent
//!   holds.
//! - **Credentials.** A call that waited is answered only while its caller's credentials still hold
//!   (the poll itself checks them before it claims and before it answers); otherwise its answer is
//!   dropped — a claim it made goes back to the queue — and the client gets `401`.
//! - **Cancellation.** A client that goes away cancels its call at any step, and an answer made
//!   meanwhile is undone ([`CancelOnDrop`]); the undo runs on a blocking thread, never on the
//!   runtime's.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use bytes::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use super::{Agent, Body, Busy, State, json_response, unauthorized};
use crate::registry::{CallContext, CredentialCheck, Park, ProgressFn};
use crate::server::{self, CallAnswer, ParkedCall};
use crate::wire::{self, IdKey, Message};

/// The most tool calls run at once.
pub const MAX_CALLS: usize = 256;
/// The most tool calls of one agent run at once.
pub const MAX_CALLS_PER_AGENT: usize = 64;
/// The most tool calls wait for a turn; beyond, a call is answered `503`.
pub const MAX_WAITING: usize = 1024;
/// The most new tool calls of one agent wait for a turn; beyond, its call is answered `503`.
pub const MAX_QUEUED_PER_AGENT: usize = 128;
/// The most waiting polls of one agent parked at once; beyond, its poll is answered `503`.
pub const MAX_PARKED_PER_AGENT: usize = 1024;

/// What one agent holds of the server.
pub(super) struct Share {
    /// Its turns: [`MAX_CALLS_PER_AGENT`].
    turns: Arc<tokio::sync::Semaphore>,
    /// Its new calls waiting for a turn.
    queued: usize,
    /// Its parked calls.
    parked: usize,
    /// Its calls in any phase (the entry goes when none is left).
    calls: usize,
}

/// The shares of the agents with a call in flight.
pub(super) type Shares = std::sync::Mutex<HashMap<Agent, Share>>;

/// A call's hold on its agent's share, given back when dropped.
struct Ticket {
    state: Arc<State>,
    agent: Agent,
    turns: Arc<tokio::sync::Semaphore>,
}

/// Both turns of a call at work: its agent's and the server's.
struct Turn {
    _agent: tokio::sync::OwnedSemaphorePermit,
    _server: tokio::sync::OwnedSemaphorePermit,
}

impl Ticket {
    fn new(state: &Arc<State>, agent: &Agent) -> Ticket {
        let turns = {
            let mut shares = state.shares.lock().unwrap_or_else(PoisonError::into_inner);
            let share = shares.entry(agent.clone()).or_insert_with(|| Share {
                turns: Arc::new(tokio::sync::Semaphore::new(MAX_CALLS_PER_AGENT)),
                queued: 0,
                parked: 0,
                calls: 0,
            });
            share.calls += 1;
            Arc::clone(&share.turns)
        };
        Ticket {
            state: Arc::clone(state),
            agent: agent.clone(),
            turns,
        }
    }

    /// Changes the agent's share under its lock.
    fn with<R>(&self, f: impl FnOnce(&mut Share) -> R) -> Option<R> {
        let mut shares = self.state.shares.lock().unwrap_or_else(PoisonError::into_inner);
        shares.get_mut(&self.agent).map(f)
    }

    /// Takes a turn (the agent's, then the server's), waiting without a thread.
    async fn turn(&self) -> Option<Turn> {
        let agent = Arc::clone(&self.turns).acquire_owned().await.ok()?;
        let server = Arc::clone(&self.state.calls).acquire_owned().await.ok()?;
        Some(Turn {
            _agent: agent,
            _server: server,
        })
    }

    /// A new call's first turn: refused (`None`) when the agent, or the server, has too many calls
    /// waiting for one already.
    async fn first_turn(&self) -> Result<Turn, &'static str> {
        let queued = self.with(|share| {
            if share.queued >= MAX_QUEUED_PER_AGENT {
                return false;
            }
            share.queued += 1;
            true
        });
        if queued != Some(true) {
            return Err("agent");
        }
        let waiting = self.state.waiting.fetch_add(1, Ordering::SeqCst);
        let turn = if waiting >= MAX_WAITING {
            None
        } else {
            self.turn().await
        };
        self.state.waiting.fetch_sub(1, Ordering::SeqCst);
        self.with(|share| share.queued -= 1);
        turn.ok_or("server")
    }

    /// Counts a parked call of the agent while the guard lives; `None` when the agent has
    /// [`MAX_PARKED_PER_AGENT`] parked already.
    fn park(&self) -> Option<Parking<'_>> {
        let parked = self.with(|share| {
            if share.parked >= MAX_PARKED_PER_AGENT {
                return false;
            }
            share.parked += 1;
            true
        });
        (parked == Some(true)).then_some(Parking(self))
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut shares = self.state.shares.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(share) = shares.get_mut(&self.agent) {
            share.calls -= 1;
            if share.calls == 0 {
                shares.remove(&self.agent);
            }
        }
    }
}

/// A parked call of an agent, counted while it lives.
struct Parking<'t>(&'t Ticket);

impl Drop for Parking<'_> {
    fn drop(&mut self) {
        self.0.with(|share| share.parked -= 1);
    }
}

/// The calls in flight under one (agent, request id), for `notifications/cancelled` and the drain;
/// the call leaves the table when this is dropped.
struct InFlight {
    state: Arc<State>,
    key: (Agent, IdKey),
    context: CallContext,
}

impl InFlight {
    fn enter(state: &Arc<State>, key: (Agent, IdKey), context: &CallContext) -> InFlight {
        state
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key.clone())
            .or_default()
            .push(context.clone());
        InFlight {
            state: Arc::clone(state),
            key,
            context: context.clone(),
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut in_flight = self
            .state
            .in_flight
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(list) = in_flight.get_mut(&self.key) {
            list.retain(|c| !c.same(&self.context));
            if list.is_empty() {
                in_flight.remove(&self.key);
            }
        }
    }
}

/// The tools whose call is a short computation on its arguments alone — no store, no file, no wait,
/// nothing to undo — so a small call of one runs on the runtime's thread, in place, rather than being
/// handed to a worker thread and back (two thread hand-offs, most of a trivial call's time).
const IN_PLACE_TOOLS: &[&str] = &[crate::groups::hours::TOOL];

/// The largest request body of a call run in place: its work stays a few microseconds.
const IN_PLACE_BODY: usize = 4 * 1024;

/// Whether a call of `tool` with a body of `body` bytes runs in place on the runtime's thread
/// ([`IN_PLACE_TOOLS`], at most [`IN_PLACE_BODY`] bytes). It still takes its turn.
pub(super) fn runs_in_place(tool: Option<&str>, body: usize) -> bool {
    body <= IN_PLACE_BODY && tool.is_some_and(|tool| IN_PLACE_TOOLS.contains(&tool))
}

/// A `tools/call` as the transport read it.
pub(super) struct Request {
    /// Its id token.
    pub id: String,
    /// Its body, decoded again by its worker.
    pub body: Bytes,
    /// Its progress token, when it asked for progress and accepts events.
    pub progress_token: Option<String>,
    /// The HTTP request's `traceparent`.
    pub link: Option<String>,
    /// Its `Authorization` header, to check again after a wait.
    pub authorization: Option<Bytes>,
    /// It runs in place ([`runs_in_place`]).
    pub inline: bool,
}

/// Runs a `tools/call`: answered as JSON, or as events when it asked for progress.
pub(super) async fn call(state: &Arc<State>, agent: Agent, request: Request) -> Response<Body> {
    let Request {
        id,
        body,
        progress_token,
        link,
        authorization,
        inline,
    } = request;
    let events = progress_token.is_some();
    let ticket = Ticket::new(state, &agent);
    let turn = match ticket.first_turn().await {
        Ok(turn) => turn,
        Err(whose) => return busy_response(&id, &agent, whose),
    };
    let (sender, receiver) = tokio::sync::mpsc::channel::<Bytes>(64);
    let progress: Option<ProgressFn> = progress_token.map(|token| {
        // Weak: the stream ends when the call's own sender drops, whoever still holds the context.
        let sender = sender.downgrade();
        Box::new(move |progress: f64, total: Option<f64>, message: Option<&str>| {
            if let (Some(sender), Some(line)) = (
                sender.upgrade(),
                server::progress_line(&token, progress, total, message),
            ) {
                // A client that does not read its events loses progress, never blocks the call.
                let _ = sender.try_send(event(&line));
            }
        }) as ProgressFn
    });
    let context = CallContext::over_http(
        progress,
        agent.clone(),
        link,
        credential_check(state, &agent, authorization.clone()),
    );
    let in_flight = InFlight::enter(state, (agent, IdKey::of(&id)), &context);
    let guard = CancelOnDrop(Some(context.clone()));
    let run = {
        let state = Arc::clone(state);
        let context = context.clone();
        async move {
            let _in_flight = in_flight;
            let answer = drive(&state, &ticket, turn, body, context.clone(), inline).await;
            answer.unwrap_or_else(|| {
                Answer::Line(server::error_line(
                    Some(&id),
                    wire::INTERNAL_ERROR,
                    "the call failed",
                ))
            })
        }
    };
    if events {
        let busy = Busy::new(state);
        let refusal_state = Arc::clone(state);
        let header = authorization.clone();
        tokio::spawn(async move {
            let _busy = busy;
            let line = match run.await {
                Answer::Line(line) | Answer::Busy(line) => line,
                Answer::Unauthorized(id) => {
                    let refused = refused_credentials(&refusal_state, header.as_deref());
                    server::error_line(
                        Some(&id),
                        wire::INVALID_REQUEST,
                        &format!("Unauthorized: {refused}"),
                    )
                }
            };
            let _ = sender.send(event(&line)).await;
        });
        return event_stream(Body::Events(receiver, Some(guard)));
    }
    drop(sender);
    let answer = run.await;
    guard.done();
    match answer {
        Answer::Line(line) => json_response(StatusCode::OK, line),
        Answer::Busy(line) => with_retry_after(json_response(StatusCode::SERVICE_UNAVAILABLE, line)),
        // Its answer was dropped (and undone).
        Answer::Unauthorized(_) => unauthorized(state, &refused_credentials(state, authorization.as_deref())),
    }
}

/// How a call ends.
enum Answer {
    /// Its response line.
    Line(Vec<u8>),
    /// Refused for a bound (`503`): the error line.
    Busy(Vec<u8>),
    /// Its caller's credentials no longer held after it waited (`401`); its id.
    Unauthorized(String),
}

/// Why the credentials of `header` are refused now.
fn refused_credentials(state: &State, header: Option<&[u8]>) -> super::auth::AuthError {
    state
        .auth
        .authenticate(header)
        .err()
        .unwrap_or(super::auth::AuthError::Invalid("it no longer holds"))
}

/// The check that a caller's credentials still hold: the same header, authenticated again by what the
/// server holds now (the token file as it is, the key set as last fetched), as the same agent.
pub(super) fn credential_check(
    state: &Arc<State>,
    agent: &Agent,
    authorization: Option<Bytes>,
) -> CredentialCheck {
    let state = Arc::downgrade(state);
    let agent = agent.clone();
    Arc::new(move || {
        state.upgrade().is_some_and(|state| {
            state
                .auth
                .authenticate(authorization.as_deref())
                .is_ok_and(|who| who == agent)
        })
    })
}

/// Runs the call: its first step on a worker thread (or in place, `inline`), then — while it parks —
/// waits without a thread and steps again with a turn. `None` when a worker failed.
async fn drive(
    state: &Arc<State>,
    ticket: &Ticket,
    turn: Turn,
    body: Bytes,
    context: CallContext,
    inline: bool,
) -> Option<Answer> {
    let worker_state = Arc::clone(state);
    let worker_context = context.clone();
    let first = move || {
        let _turn = turn;
        match wire::decode(&body) {
            Ok(Some(Message::Request { id, params, .. })) => Ok((
                id.raw().to_owned(),
                worker_state.server.call(id, &params, worker_context, None),
            )),
            _ => Err(server::error_line(
                None,
                wire::INTERNAL_ERROR,
                "the request could not be read again",
            )),
        }
    };
    let mut answer = if inline {
        // A panic in the tool is caught by `Server::call`, as on a worker.
        first()
    } else {
        tokio::task::spawn_blocking(first).await.ok()?
    };
    let (id, mut answered) = match answer {
        Ok(first) => first,
        Err(line) => return Some(Answer::Line(line)),
    };
    let mut waited = false;
    loop {
        let parked = match answered {
            CallAnswer::Parked(parked) => *parked,
            other => {
                answer = Ok((id.clone(), other));
                break;
            }
        };
        waited = true;
        let Some(parking) = ticket.park() else {
            return Some(Answer::Busy(parked.refuse(
                wire::INTERNAL_ERROR,
                &format!(
                    "the server is busy: agent {} already has {MAX_PARKED_PER_AGENT} waiting polls; \
                     let one end (or cancel one) first",
                    ticket.agent
                ),
            )));
        };
        wait_parked(&parked).await;
        drop(parking);
        let turn = ticket.turn().await?;
        let server = state.server.clone();
        answered = tokio::task::spawn_blocking(move || {
            let _turn = turn;
            server.resume(parked)
        })
        .await
        .ok()?;
    }
    let Ok((id, answered)) = answer else { return None };
    if waited && !context.credentials_hold() {
        // Not delivered: a claim the call made goes back to the queue.
        let dropped = context.clone();
        let _ = tokio::task::spawn_blocking(move || dropped.undelivered()).await;
        return Some(Answer::Unauthorized(id));
    }
    let server = state.server.clone();
    Some(Answer::Line(answered.line(&server, &id)))
}

/// Waits, without a thread, until the parked call's wake-up is given or its deadline comes, sending
/// its progress reports meanwhile.
fn wait_parked(parked: &ParkedCall) -> impl std::future::Future<Output = ()> + Send + 'static {
    let park: &Park = parked.park();
    let woken = Arc::new(tokio::sync::Notify::new());
    let notify = Arc::clone(&woken);
    park.wake.on_give(move || notify.notify_one());
    wait(
        woken,
        Arc::clone(&park.clock),
        park.until,
        park.progress,
        parked.context().clone(),
    )
}

/// The wait of [`wait_parked`]: until `woken` or `until` on `clock`, reporting `progress` through
/// `context`.
async fn wait(
    woken: Arc<tokio::sync::Notify>,
    clock: Arc<dyn shiftwork_seams::Clock>,
    until: std::time::Duration,
    progress: Option<crate::registry::ParkProgress>,
    context: CallContext,
) {
    loop {
        let now = clock.monotonic();
        if now >= until {
            return;
        }
        let mut sleep = until - now;
        let tick = progress.map(|p| {
            let every = p.every.max(std::time::Duration::from_millis(1));
            let since = now.saturating_sub(p.started);
            let ticks = u32::try_from(since.as_nanos() / every.as_nanos()).unwrap_or(u32::MAX);
            p.started + every * ticks.saturating_add(1)
        });
        if let Some(tick) = tick {
            sleep = sleep.min(tick.saturating_sub(now));
        }
        tokio::select! {
            () = woken.notified() => return,
            () = tokio::time::sleep(sleep) => {}
        }
        if let (Some(tick), Some(progress)) = (tick, progress)
            && clock.monotonic() >= tick
        {
            let waited = clock.monotonic().saturating_sub(progress.started);
            context.progress(
                waited.as_secs_f64().round(),
                progress.total,
                Some(progress.message),
            );
        }
    }
}

/// `503`: the server (or the agent) has too many calls waiting for a turn.
fn busy_response(id: &str, agent: &str, whose: &str) -> Response<Body> {
    let message = if whose == "agent" {
        format!(
            "the server is busy for agent {agent}: {MAX_CALLS_PER_AGENT} of its calls run and \
             {MAX_QUEUED_PER_AGENT} wait; try again shortly"
        )
    } else {
        format!("the server is busy: {MAX_CALLS} calls run and {MAX_WAITING} wait; try again shortly")
    };
    with_retry_after(json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        server::error_line(Some(id), wire::INTERNAL_ERROR, &message),
    ))
}

/// `response` with `Retry-After: 1`.
fn with_retry_after(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// One JSON-RPC message line as a server-sent event.
pub(super) fn event(line: &[u8]) -> Bytes {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let mut out = Vec::with_capacity(line.len() + 24);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(line);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// Cancels a call's context when dropped before its `done`: the client went away. What the call
/// answered meanwhile is undone on a blocking thread (it runs store transactions).
pub struct CancelOnDrop(Option<CallContext>);

impl CancelOnDrop {
    pub(super) fn done(mut self) {
        self.0 = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(context) = self.0.take() {
            tracing::debug!(
                "the client went away: its call is cancelled, and an answer made meanwhile undone"
            );
            context.cancel();
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(move || context.undelivered())),
                Err(_) => context.undelivered(),
            }
        }
    }
}

/// An MCP event-stream response (`text/event-stream`, not cached) with `body`.
pub(super) fn event_stream(body: Body) -> Response<Body> {
    let mut response = Response::new(body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}
