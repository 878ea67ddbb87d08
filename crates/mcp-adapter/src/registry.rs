//! The tool registry: every tool's descriptor and handler, the check that refuses an argument a
//! tool does not declare, and the rendering of outcomes (a result, a refusal, a tool error).
//!
//! A handler returns what happened as a typed value ([`Verdict`]: a result, a refusal with its code, a
//! tool error) beside the rendered answer ([`Outcome`]), both in one [`Answered`]. The server's log
//! line, span and metrics read the verdict; nothing reads the rendered answer back to guess it.

use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};
use shiftwork_seams::echo::clip_echo;

use crate::settings::{Setting, Settings};

/// The four MCP annotation hints, always all set (a client never guesses a default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    /// `readOnlyHint`.
    pub read_only: bool,
    /// `destructiveHint`.
    pub destructive: bool,
    /// `idempotentHint`.
    pub idempotent: bool,
    /// `openWorldHint`.
    pub open_world: bool,
}

impl Hints {
    /// A tool that only reads: read-only, not destructive, idempotent, closed world.
    pub const READ_ONLY: Hints = Hints::local(true, false, true);

    /// Hints of a tool that touches only local state (`openWorldHint` false, as every tool here).
    pub const fn local(read_only: bool, destructive: bool, idempotent: bool) -> Hints {
        Hints {
            read_only,
            destructive,
            idempotent,
            open_world: false,
        }
    }
}

/// How an answer's text block renders its JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextStyle {
    /// Two-space indentation, non-ASCII characters as themselves (`serde_json::to_string_pretty`).
    Pretty,
    /// One line.
    Compact,
}

/// What a tool call produced.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A result object (including a domain refusal): `structuredContent` plus one text block.
    Answer(Value, TextStyle),
    /// An MCP tool error (`isError: true`) with one text block.
    ToolError(String),
    /// A result object the group rendered itself as JSON text, for answers that must not pass through
    /// `serde_json::Value` and need no second rendering: the transport splices `structured` into the
    /// response as `structuredContent` without parsing it.
    Prerendered {
        /// The JSON text of the answer object (compact or indented; a newline between tokens is fine,
        /// the transport keeps every message on one line).
        structured: String,
        /// The text block as a JSON string, quotes included, spliced into the response as it is;
        /// `None` when the text block is `structured` itself.
        text_json: Option<String>,
    },
}

/// The adapter's code for an argument a tool does not declare, the contracts library's word.
pub const UNKNOWN_ARGUMENT: &str = "UNKNOWN_ARGUMENT";

/// The adapter's code for an argument missing, or of the wrong JSON type, before a library is asked.
pub const INVALID_ARGUMENT: &str = "INVALID_ARGUMENT";

/// What a tool call did, as its handler knows it from the library's typed result — never read back
/// from the rendered answer. Codes are the libraries' own fixed names (`NOT_READY`, `STALE_EPOCH`,
/// `no_dir`, …) or the adapter's (`UNKNOWN_ARGUMENT`, `INVALID_ARGUMENT`): `&'static str`, so no value
/// a client chose can become one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The tool did what it was asked (an answer about nothing to do — no task waiting, a duplicate
    /// item — is a result too).
    Result,
    /// The tool refused, answering why (`structuredContent` still carries the answer), with its code.
    Refusal(&'static str),
    /// An MCP tool error (`isError: true`), with the library's code when it names one.
    ToolError(Option<&'static str>),
}

impl Verdict {
    /// `"result"`, `"refusal"` or `"tool_error"`: the outcome a log line names.
    pub fn kind(self) -> &'static str {
        match self {
            Verdict::Result => "result",
            Verdict::Refusal(_) => "refusal",
            Verdict::ToolError(_) => "tool_error",
        }
    }

    /// The refusal's or tool error's code.
    pub fn code(self) -> Option<&'static str> {
        match self {
            Verdict::Result => None,
            Verdict::Refusal(code) => Some(code),
            Verdict::ToolError(code) => code,
        }
    }
}

/// What a tool call produced: the rendered answer, and what happened ([`Verdict`]), kept side by side
/// from the handler to the log line, the span and the metrics.
///
/// ```
/// use shiftwork_mcp::registry::{Answered, Outcome, TextStyle, Verdict};
/// let answer = serde_json::json!({"ok": true, "status": "SUBMITTED"});
/// let answered = Answered::result(Outcome::Answer(answer, TextStyle::Compact));
/// assert_eq!(answered.verdict, Verdict::Result, "a status in the answer is not a refusal");
/// let refused = Answered::tool_error(Some("MEMORY_BUSY"), String::from("busy"));
/// assert_eq!((refused.verdict.kind(), refused.verdict.code()), ("tool_error", Some("MEMORY_BUSY")));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    /// The answer as the client gets it.
    pub outcome: Outcome,
    /// What happened.
    pub verdict: Verdict,
}

impl Answered {
    /// A result.
    pub fn result(outcome: Outcome) -> Answered {
        Answered {
            outcome,
            verdict: Verdict::Result,
        }
    }

    /// A refusal with its `code`, answered as `outcome`.
    pub fn refusal(code: &'static str, outcome: Outcome) -> Answered {
        Answered {
            outcome,
            verdict: Verdict::Refusal(code),
        }
    }

    /// A tool error: `message` as the text block, `code` when the library names one.
    pub fn tool_error(code: Option<&'static str>, message: String) -> Answered {
        Answered {
            outcome: Outcome::ToolError(message),
            verdict: Verdict::ToolError(code),
        }
    }
}

impl Outcome {
    /// The JSON text of the text block (or the error message).
    pub fn text(&self) -> String {
        match self {
            Outcome::Answer(value, TextStyle::Pretty) => {
                serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
            }
            Outcome::Answer(value, TextStyle::Compact) => value.to_string(),
            Outcome::ToolError(message) => message.clone(),
            Outcome::Prerendered {
                structured,
                text_json,
            } => match text_json {
                Some(literal) => serde_json::from_str(literal).unwrap_or_default(),
                None => structured.clone(),
            },
        }
    }

    /// The answer object as a `serde_json` value (`None` for a tool error). For
    /// [`Outcome::Prerendered`] this parses `structured`: tests, the demo and `call --pretty` use it,
    /// never the server.
    pub fn structured(&self) -> Option<Value> {
        match self {
            Outcome::Answer(value, _) => Some(value.clone()),
            Outcome::Prerendered { structured, .. } => serde_json::from_str(structured).ok(),
            Outcome::ToolError(_) => None,
        }
    }
}

/// A tool call's arguments as they reached the server: the decoded object (keys in arrival order) and,
/// when the way in kept it, the JSON text of the `arguments` object exactly as the client sent it.
///
/// A group whose answers must keep the client's number tokens (shift work) reads [`Arguments::raw`]
/// with its own JSON reader; every other group reads [`Arguments::map`].
///
/// It also carries the call's [`CallContext`]: its cancellation and its progress reports.
///
/// The ways in (`serve`, `call`) build it from the text alone ([`Arguments::parse`]): the decoded
/// object is then built on the first call of [`Arguments::map`], so a group that reads only the raw
/// text never pays for a second tree.
#[derive(Debug, Clone, Default)]
pub struct Arguments {
    map: OnceLock<Map<String, Value>>,
    raw: Option<String>,
    /// The keys in arrival order when known without the map (from the text).
    keys: Option<Vec<String>>,
    context: CallContext,
}

impl Arguments {
    /// Arguments known only as a decoded object (tests, the demo).
    pub fn decoded(map: Map<String, Value>) -> Self {
        Arguments {
            map: OnceLock::from(map),
            ..Arguments::default()
        }
    }

    /// Arguments with the exact text of the `arguments` object they were decoded from.
    pub fn with_raw(map: Map<String, Value>, raw: String) -> Self {
        Arguments {
            map: OnceLock::from(map),
            raw: Some(raw),
            ..Arguments::default()
        }
    }

    /// Arguments from the JSON text of an object, validated by the transport's reader
    /// ([`crate::wire::arguments`]); the map is decoded when first asked for.
    ///
    /// ```
    /// use shiftwork_mcp::registry::Arguments;
    ///
    /// let args = Arguments::parse(String::from(r#"{"b": 18446744073709551617, "a": [1]}"#)).unwrap();
    /// assert_eq!(args.keys().collect::<Vec<_>>(), ["b", "a"]);
    /// assert_eq!(args.raw(), Some(r#"{"b": 18446744073709551617, "a": [1]}"#));
    /// assert_eq!(args.map()["a"], serde_json::json!([1]));
    /// assert!(Arguments::parse(String::from("[1, 2]")).is_err());
    /// ```
    pub fn parse(raw: String) -> Result<Self, String> {
        let keys = crate::wire::arguments(&raw)?
            .keys
            .into_iter()
            .map(std::borrow::Cow::into_owned)
            .collect();
        Ok(Self::from_checked_text(raw, keys))
    }

    /// Arguments from a text the wire reader already checked, with its keys in arrival order.
    pub(crate) fn from_checked_text(raw: String, keys: Vec<String>) -> Self {
        Arguments {
            raw: Some(raw),
            keys: Some(keys),
            ..Arguments::default()
        }
    }

    /// The same arguments under `context`.
    pub fn in_context(mut self, context: CallContext) -> Self {
        self.context = context;
        self
    }

    /// The call's context: cancellation and progress.
    pub fn context(&self) -> &CallContext {
        &self.context
    }

    /// The decoded object, keys in arrival order (numbers as `serde_json` holds them: an integer beyond
    /// 64 bits becomes a float; read [`Arguments::raw`] to keep it).
    pub fn map(&self) -> &Map<String, Value> {
        self.map.get_or_init(|| {
            // The text was checked by the wire reader, which also refuses every number beyond the
            // double range, so `serde_json` reads it; the empty object is unreachable.
            self.raw
                .as_deref()
                .and_then(|raw| serde_json::from_str(raw).ok())
                .unwrap_or_default()
        })
    }

    /// The member names in arrival order (a repeated name appears again).
    pub fn keys(&self) -> Box<dyn Iterator<Item = &str> + '_> {
        match &self.keys {
            Some(keys) => Box::new(keys.iter().map(String::as_str)),
            None => Box::new(self.map().keys().map(String::as_str)),
        }
    }

    /// The exact JSON text of the `arguments` object, when the way in kept it.
    pub fn raw(&self) -> Option<&str> {
        self.raw.as_deref()
    }
}

/// Sends one progress report of a call to the client: `(progress, total, message)` (MCP
/// `notifications/progress`; `progress` increases with every report).
pub type ProgressFn = Box<dyn Fn(f64, Option<f64>, Option<&str>) + Send + Sync>;

/// What a long-running handler can learn from, and tell, the way in: whether the client cancelled the
/// call (MCP `notifications/cancelled`), and a channel for progress reports when the client asked for
/// them (a `progressToken`). The default context is never cancelled and takes no progress.
///
/// ```
/// use shiftwork_mcp::registry::CallContext;
/// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
///
/// let context = CallContext::new(None);
/// let woken = Arc::new(AtomicBool::new(false));
/// let flag = Arc::clone(&woken);
/// context.on_cancel(move || flag.store(true, Ordering::SeqCst));
/// assert!(!context.is_cancelled());
/// context.cancel();
/// assert!(context.is_cancelled() && woken.load(Ordering::SeqCst));
/// ```
#[derive(Clone, Default)]
pub struct CallContext {
    inner: Arc<ContextInner>,
}

#[derive(Default)]
struct ContextInner {
    cancelled: std::sync::atomic::AtomicBool,
    on_cancel: std::sync::Mutex<Vec<Box<dyn FnOnce() + Send>>>,
    progress: Option<ProgressFn>,
    agent: Option<String>,
    transport: Option<crate::telemetry::Transport>,
    link: Option<String>,
    on_undelivered: std::sync::Mutex<Undelivered>,
    /// The transport parks a waiting call instead of giving it a thread ([`CallContext::park`]).
    parks: bool,
    parked: std::sync::Mutex<Option<Park>>,
    /// The transport's check that the caller's credentials still hold.
    credentials: Option<CredentialCheck>,
}

impl ContextInner {
    /// The context of an authenticated caller over HTTP.
    fn caller(progress: Option<ProgressFn>, agent: String, link: Option<String>) -> ContextInner {
        ContextInner {
            progress,
            agent: Some(agent),
            transport: Some(crate::telemetry::Transport::Tcp),
            link,
            ..ContextInner::default()
        }
    }
}

/// The undo callbacks of a call, and whether its answer was already dropped.
#[derive(Default)]
struct Undelivered {
    dropped: bool,
    undo: Vec<Box<dyn FnOnce() + Send>>,
}

/// Whether a caller's credentials still hold (a token not revoked, a JWT not expired and still signed
/// by a key of the issuer's set): judged again before a waiting call claims work or answers.
pub type CredentialCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// A call that waits without a thread ([`CallContext::park`]): the transport keeps it as state until
/// `wake` is given or `clock` reaches `until`, then runs `resume` on a worker — which answers, or parks
/// again through the same context.
pub struct Park {
    /// Given when the call may go on (the store has work for it, the call was cancelled).
    pub wake: shiftwork_seams::Signal,
    /// The clock `until` is read on.
    pub clock: Arc<dyn shiftwork_seams::Clock>,
    /// Resume at the latest when the clock's monotonic time reaches this.
    pub until: std::time::Duration,
    /// The progress to report while the call waits, when the client asked for reports.
    pub progress: Option<ParkProgress>,
    /// Goes on with the call.
    pub resume: Box<dyn FnOnce() -> Answered + Send>,
}

impl std::fmt::Debug for Park {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Park")
            .field("until", &self.until)
            .field("progress", &self.progress)
            .finish_non_exhaustive()
    }
}

/// What a parked call reports while it waits: every `every` since `started` (monotonic, on the
/// park's clock), `progress` is the seconds waited and `total` what the call may wait.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParkProgress {
    /// When the wait began.
    pub started: std::time::Duration,
    /// How often to report.
    pub every: std::time::Duration,
    /// The report's `total`.
    pub total: Option<f64>,
    /// The report's message.
    pub message: &'static str,
}

impl std::fmt::Debug for CallContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallContext")
            .field("cancelled", &self.is_cancelled())
            .field("progress", &self.wants_progress())
            .finish()
    }
}

impl CallContext {
    /// A context that reports progress through `progress` (when the client sent a `progressToken`).
    pub fn new(progress: Option<ProgressFn>) -> Self {
        CallContext {
            inner: Arc::new(ContextInner {
                progress,
                ..ContextInner::default()
            }),
        }
    }

    /// A context for a caller whose credentials authenticated it as `agent` (over HTTP): every agent
    /// argument of the call defaults to it, and one naming another agent is refused. `link` is the
    /// HTTP request's own `traceparent` header, linked from the call's span.
    pub fn authenticated(
        progress: Option<ProgressFn>,
        agent: impl Into<String>,
        link: Option<String>,
    ) -> Self {
        CallContext {
            inner: Arc::new(ContextInner::caller(progress, agent.into(), link)),
        }
    }

    /// A context for a call over HTTP from `agent`: as [`CallContext::authenticated`], and the
    /// transport parks a waiting call instead of holding a thread for it ([`CallContext::park`]), and
    /// `credentials` says whether the caller's credentials still hold
    /// ([`CallContext::credentials_hold`]).
    pub fn over_http(
        progress: Option<ProgressFn>,
        agent: impl Into<String>,
        link: Option<String>,
        credentials: CredentialCheck,
    ) -> Self {
        CallContext {
            inner: Arc::new(ContextInner {
                parks: true,
                credentials: Some(credentials),
                ..ContextInner::caller(progress, agent.into(), link)
            }),
        }
    }

    /// Runs `undo` if the transport drops the call's answer instead of sending it (the client
    /// cancelled it, or went away, at any step): what the call did that its caller will never learn
    /// of is undone (a cancelled call answers or undoes what it did). Register it before the work it
    /// undoes can happen: when the answer is already dropped, `undo` runs at once.
    pub fn on_undelivered(&self, undo: impl FnOnce() + Send + 'static) {
        let mut undelivered = self.undelivered_state();
        if undelivered.dropped {
            drop(undelivered);
            undo();
        } else {
            undelivered.undo.push(Box::new(undo));
        }
    }

    /// The transport drops the call's answer: every [`CallContext::on_undelivered`] callback runs,
    /// once, and one registered later runs as it is registered. The callbacks may run store
    /// transactions: call it where blocking is allowed.
    pub fn undelivered(&self) {
        let undo = {
            let mut undelivered = self.undelivered_state();
            undelivered.dropped = true;
            std::mem::take(&mut undelivered.undo)
        };
        for undo in undo {
            undo();
        }
    }

    /// True once the transport dropped the call's answer ([`CallContext::undelivered`]).
    pub fn is_undelivered(&self) -> bool {
        self.undelivered_state().dropped
    }

    fn undelivered_state(&self) -> std::sync::MutexGuard<'_, Undelivered> {
        // Plain values: a panic cannot leave them half-written.
        self.inner
            .on_undelivered
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the transport can park a waiting call ([`CallContext::park`]) rather than give it a
    /// thread for its wait (HTTP can; stdio and `call` run the wait on the call's thread).
    pub fn parks(&self) -> bool {
        self.inner.parks
    }

    /// Parks the call: the handler returns the outcome this gives (never sent), and the transport keeps
    /// `park` as state, without a thread, until its wake-up or its deadline, then resumes it. Only
    /// when [`CallContext::parks`] is true; otherwise the handler waits itself.
    pub fn park(&self, park: Park) -> Answered {
        *self
            .inner
            .parked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(park);
        Answered::tool_error(None, String::from("the call waits (parked)"))
    }

    /// The park the handler left, if any (the transport takes it when the handler returns).
    pub fn take_park(&self) -> Option<Park> {
        self.inner
            .parked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    /// The transport's check that the caller's credentials still hold, when it has one (over HTTP).
    pub fn credential_check(&self) -> Option<CredentialCheck> {
        self.inner.credentials.clone()
    }

    /// Whether the caller's credentials still hold (always, for a trusted local caller).
    pub fn credentials_hold(&self) -> bool {
        self.inner.credentials.as_ref().is_none_or(|check| check())
    }

    /// The transport the call came by (stdio unless said otherwise).
    pub fn transport(&self) -> crate::telemetry::Transport {
        self.inner.transport.unwrap_or(crate::telemetry::Transport::Pipe)
    }

    /// The HTTP request's `traceparent` header, when the call came over HTTP with one.
    pub fn link(&self) -> Option<&str> {
        self.inner.link.as_deref()
    }

    /// The agent the caller's credentials authenticated (over HTTP); `None` for a trusted local
    /// caller (stdio, `call`), whose agent comes from the arguments or `--agent`.
    pub fn agent(&self) -> Option<&str> {
        self.inner.agent.as_deref()
    }

    /// Whether `other` is this very context (a clone of it).
    pub fn same(&self, other: &CallContext) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Marks the call cancelled and runs every registered [`CallContext::on_cancel`] callback once.
    pub fn cancel(&self) {
        use std::sync::atomic::Ordering;
        if self.inner.cancelled.swap(true, Ordering::SeqCst) {
            return;
        }
        let callbacks = std::mem::take(&mut *self.callbacks());
        for callback in callbacks {
            callback();
        }
    }

    /// True once the client cancelled the call.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Runs `callback` when the call is cancelled (at once when it already is).
    pub fn on_cancel(&self, callback: impl FnOnce() + Send + 'static) {
        let mut callbacks = self.callbacks();
        if self.is_cancelled() {
            drop(callbacks);
            callback();
        } else {
            callbacks.push(Box::new(callback));
        }
    }

    /// True when the client asked for progress reports.
    pub fn wants_progress(&self) -> bool {
        self.inner.progress.is_some()
    }

    /// Sends a progress report when the client asked for them; otherwise does nothing.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        if let Some(report) = &self.inner.progress {
            report(progress, total, message);
        }
    }

    fn callbacks(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn FnOnce() + Send>>> {
        self.inner
            .on_cancel
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A tool's handler: the call's arguments in, its answer and what happened out. A handler may block:
/// each call runs on a worker thread of its own while another reads.
pub type Handler = Arc<dyn Fn(&Arguments) -> Answered + Send + Sync>;

/// A tool's reading of its arguments while the request line is decoded (see
/// [`crate::wire::ArgumentsReader`], whose contract it keeps): given the text from the `arguments`
/// object's opening brace to the end of the line, what it read, or `None` to be called the usual way.
pub type Prefetch = for<'a> fn(&'a str) -> Option<Prefetched<'a>>;

/// What a [`Prefetch`] read: the object's length and member names, and the call's work, which runs
/// when the request does (after the rest of the line is decoded and the argument names are checked),
/// in place of the handler.
pub struct Prefetched<'a> {
    /// Bytes of the text the `arguments` object took, up to its closing brace.
    pub len: usize,
    /// Its member names in arrival order.
    pub keys: Vec<Cow<'a, str>>,
    /// The call, on what was read.
    pub run: Box<dyn FnOnce() -> Answered + 'a>,
}

impl std::fmt::Debug for Prefetched<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prefetched")
            .field("len", &self.len)
            .field("keys", &self.keys)
            .finish_non_exhaustive()
    }
}

/// How a group answers an undeclared argument: given the tool name, the first unknown key in
/// arrival order, every undeclared key in arrival order, and the known keys in schema order.
pub type UnknownArgument = fn(tool: &str, key: &str, all_unknown: &[&str], known: &[&str]) -> Answered;

/// One tool.
#[derive(Clone)]
pub struct ToolDef {
    /// The tool's name.
    pub name: &'static str,
    /// Its title (also `annotations.title`).
    pub title: &'static str,
    /// Its description.
    pub description: &'static str,
    /// Its closed input schema (an object schema with `properties` in argument order).
    pub input_schema: Value,
    /// Its output schema (root: an object).
    pub output_schema: Value,
    /// Its annotation hints.
    pub hints: Hints,
    /// How it refuses an undeclared argument.
    pub unknown_argument: UnknownArgument,
    /// What it does.
    pub handler: Handler,
    /// How it reads its arguments while the line is decoded, when it can (a large call is then read
    /// once, not twice).
    pub prefetch: Option<Prefetch>,
}

impl std::fmt::Debug for ToolDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolDef")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl ToolDef {
    /// The argument names in schema order.
    pub fn known_arguments(&self) -> Vec<&str> {
        self.input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default()
    }

    /// Runs the tool on a decoded arguments object (tests, the demo): see [`ToolDef::invoke`].
    pub fn call(&self, arguments: &Map<String, Value>) -> Answered {
        self.invoke(&Arguments::decoded(arguments.clone()))
    }

    /// Runs the tool: the check of the argument names (an undeclared one is refused), then the
    /// handler.
    pub fn invoke(&self, arguments: &Arguments) -> Answered {
        self.invoke_read(arguments, None)
    }

    /// [`ToolDef::invoke`], running `read` (the [`Prefetched::run`] of this tool's [`Prefetch`] on
    /// these same arguments) in place of the handler once the argument names pass.
    pub fn invoke_read(
        &self,
        arguments: &Arguments,
        read: Option<Box<dyn FnOnce() -> Answered + '_>>,
    ) -> Answered {
        let known = self.known_arguments();
        let unknown: Vec<&str> = arguments.keys().filter(|k| !known.contains(k)).collect();
        if let Some(first) = unknown.first() {
            return (self.unknown_argument)(self.name, first, &unknown, &known);
        }
        match read {
            Some(run) => run(),
            None => (self.handler)(arguments),
        }
    }
}

/// The sentence refusing an undeclared argument: `unknown argument '<key>'; known: <k1>, <k2>, …`
/// (`(none)` when empty). The key is clipped at [`shiftwork_seams::echo::ECHO_LIMIT`] code points
/// (no refusal repeats more of one input value), once: a key a group already clipped is quoted as
/// it is.
///
/// ```
/// use shiftwork_mcp::registry::unknown_argument_sentence;
/// use shiftwork_seams::echo::clip_echo;
///
/// let key = "k".repeat(10_000);
/// let sentence = unknown_argument_sentence(&key, &["a"]);
/// assert!(sentence.ends_with("k…(8000 more)'; known: a"));
/// assert_eq!(unknown_argument_sentence(&clip_echo(&key), &["a"]), sentence);
/// ```
pub fn unknown_argument_sentence(key: &str, known: &[&str]) -> String {
    let known = if known.is_empty() {
        String::from("(none)")
    } else {
        known.join(", ")
    };
    format!("unknown argument '{}'; known: {known}", clip_once(key))
}

/// [`clip_echo`], leaving a text that is already a clipped echo (its first
/// [`shiftwork_seams::echo::ECHO_LIMIT`] code points, then `…(<k> more)`) as it is.
fn clip_once(text: &str) -> std::borrow::Cow<'_, str> {
    let limit = shiftwork_seams::echo::ECHO_LIMIT;
    let Some((cut, _)) = text.char_indices().nth(limit) else {
        return std::borrow::Cow::Borrowed(text);
    };
    let already = text[cut..]
        .strip_prefix("…(")
        .and_then(|rest| rest.strip_suffix(" more)"))
        .is_some_and(|count| !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit()));
    if already {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(clip_echo(text))
    }
}

/// Builds a demo call's arguments from the answers of the group's earlier calls.
pub type MakeArgs = Box<dyn FnOnce(&[Value]) -> Value>;

/// One step of a group's part of `shiftwork-mcp demo`.
pub enum DemoStep {
    /// A line of narration.
    Say(String),
    /// Set-up the demo performs itself (write a file), described by its text.
    Prepare(String, Box<dyn FnOnce() -> std::io::Result<()>>),
    /// A tool call, printed with its answer.
    Call(&'static str, Value),
    /// A tool call whose arguments are built from the answers of the group's earlier calls (in
    /// order), for a script that must name what an earlier call created (a contract id).
    CallWith(&'static str, MakeArgs),
}

/// A tool group: its settings, how it builds its tools, and its part of the demo.
pub struct Group {
    /// The group's name, as `--tools` selects it.
    pub name: &'static str,
    /// One line for the server's `instructions` (the `initialize` answer).
    pub instructions: &'static str,
    /// The settings the group reads.
    pub settings: &'static [Setting],
    /// Builds the group's tools from the settings; an invalid setting is a start-up error (exit 2).
    pub build: fn(&Settings) -> Result<Vec<ToolDef>, String>,
    /// The settings the demo gives the group, inside the demo's temporary directory.
    pub demo_settings: fn(&Path) -> Vec<(&'static Setting, String)>,
    /// The group's demo script, inside the demo's temporary directory.
    pub demo: fn(&Path) -> Vec<DemoStep>,
    /// Commands to try after the demo that work anywhere and create nothing.
    pub try_next: &'static [&'static str],
    /// Commands to try in the demo's kept directory (`demo --keep`), after its `cd` and the `export`
    /// of the environment the demo used (built from `demo_settings`).
    pub try_in_demo: &'static [&'static str],
    /// A group command line, `shiftwork-mcp <group> …`; returns the process exit code.
    pub command: Option<fn(&[String], &Settings) -> i32>,
}

/// The tools of the selected groups, in `tools/list` order.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    tools: Vec<ToolDef>,
}

impl Registry {
    /// Builds the tools of every group whose name is in `selected`, in the order of `groups`. A
    /// selected group's switch whose environment variable is neither on nor off is an error naming
    /// the variable, like a group's own settings error.
    pub fn build(groups: &[&Group], selected: &[&str], settings: &Settings) -> Result<Self, String> {
        let mut tools = Vec::new();
        for group in groups.iter().filter(|g| selected.contains(&g.name)) {
            settings.check_switches(group.settings)?;
            tools.extend((group.build)(settings)?);
        }
        Ok(Registry { tools })
    }

    /// A registry of the given tools (tests).
    pub fn from_tools(tools: Vec<ToolDef>) -> Self {
        Registry { tools }
    }

    /// Every tool, in order.
    pub fn tools(&self) -> &[ToolDef] {
        &self.tools
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&ToolDef> {
        self.tools.iter().find(|t| t.name == name)
    }

    /// The first tool whose [`Prefetch`] reads the `arguments` object at the start of `text`, and
    /// what it read. The request line names its tool anywhere, possibly after its arguments, so the
    /// answer is only a candidate until the name matches.
    pub fn prefetch<'a>(&self, text: &'a str) -> Option<(&'static str, Prefetched<'a>)> {
        self.tools
            .iter()
            .find_map(|t| t.prefetch.and_then(|read| read(text)).map(|read| (t.name, read)))
    }
}
