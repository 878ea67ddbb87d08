//! Seeing inside the server: one log line per request, an OpenTelemetry span per request (named and
//! attributed by the MCP semantic conventions, its parent the trace context a client put in
//! `_meta`), and the metrics of the requests and the contracts queue — exported over OTLP when an
//! endpoint is configured, and served as Prometheus text at `GET /metrics` by `serve --http`.
//!
//! With nothing configured nothing is built: no exporter, no meter, no tracer; a request then costs a
//! clock reading and a disabled span. Logging never blocks a call ([`crate::log`]).
//!
//! What happened to a tool call is its handler's typed [`Verdict`], never guessed from the answer's
//! JSON. A metric label takes only values the server defines: a method or tool it does not know is
//! counted as [`OTHER`], a code is a library's fixed name, and the queue's target agents are the
//! [`MAX_TARGET_AGENTS`] with the most contracts waiting, the rest [`OTHER`]. Every value a client
//! chose that a log line or a span repeats — a request id, a method or tool name, an agent, a trace
//! context — is cut to [`LOGGED_CHARS`] characters with its control characters escaped
//! ([`logged`]), and written once per line.
//!
//! Shutting down ([`shutdown`]) gives the exporters a time limit: a collector that never answers
//! cannot hold the process past it.
//!
//! The environment is the OpenTelemetry SDKs': `OTEL_EXPORTER_OTLP_ENDPOINT` (or the per-signal
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`),
//! `OTEL_EXPORTER_OTLP_PROTOCOL` (`http/protobuf`, the default, or `http/json`),
//! `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME` (default `shiftwork-mcp`) and
//! `OTEL_RESOURCE_ATTRIBUTES`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry_otlp::WithHttpConfig as _;
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData, ResourceMetrics};
use opentelemetry_sdk::metrics::reader::MetricReader as _;
use opentelemetry_sdk::metrics::{ManualReader, SdkMeterProvider};
use opentelemetry_sdk::trace::SdkTracerProvider;

use crate::registry::Verdict;
use crate::settings::{Setting, Settings};

/// The most characters of one value a client chose (a request id, a method or tool name, an agent, a
/// trace context) that a log line or a span attribute repeats.
pub const LOGGED_CHARS: usize = 128;

/// The metric label (and span name part) of a method or tool the server does not define, and of the
/// queue's target agents past [`MAX_TARGET_AGENTS`] — as OpenTelemetry's HTTP conventions name an
/// unknown method. No method, tool or agent id can be spelled so.
pub const OTHER: &str = "_OTHER";

/// The most target agents the queue gauge names one by one (those with the most contracts waiting);
/// the others are summed under [`OTHER`].
pub const MAX_TARGET_AGENTS: usize = 50;

/// The longest `tracestate` kept (the W3C Trace Context's 512 characters): whole members while they
/// fit, the rest dropped. A longer `traceparent` than [`LOGGED_CHARS`] is not one and is ignored.
pub const MAX_TRACESTATE: usize = 512;

/// `text` as a log line or a span attribute repeats a value a client chose: its first
/// [`LOGGED_CHARS`] characters (then `…(<k> more)`), every control and bidirectional character
/// escaped (`\u{1b}`), so a 4 MB id costs a log line a few hundred bytes and no terminal obeys it.
///
/// ```
/// use shiftwork_mcp::telemetry::logged;
/// assert_eq!(logged("7"), "7");
/// assert_eq!(logged("\"a\u{1b}]52;c;x\u{7}\""), "\"a\\u{1b}]52;c;x\\u{7}\"");
/// let id = "i".repeat(4 << 20);
/// assert!(logged(&id).len() < 200 && logged(&id).ends_with("…(4194176 more)"));
/// ```
pub fn logged(text: &str) -> Cow<'_, str> {
    use shiftwork_seams::echo::{clip, escape_controls};
    if text.len() <= LOGGED_CHARS {
        return escape_controls(text);
    }
    match text.char_indices().nth(LOGGED_CHARS) {
        None => escape_controls(text),
        Some(_) => Cow::Owned(escape_controls(&clip(text, LOGGED_CHARS)).into_owned()),
    }
}

/// A name a client sent (a method, a tool) and the server's own spelling of it when the server
/// defines it: metrics and span names read [`Name::label`], log lines and span attributes the cut
/// [`logged`] form of what was sent.
#[derive(Debug, Clone, Copy)]
pub struct Name<'a> {
    /// What the client sent.
    pub sent: &'a str,
    /// The server's name, when it defines one.
    pub known: Option<&'static str>,
}

impl<'a> Name<'a> {
    /// `sent`, known when it is one of `defined`.
    ///
    /// ```
    /// use shiftwork_mcp::telemetry::Name;
    /// assert_eq!(Name::among("ping", &["ping", "tools/list"]).label(), "ping");
    /// assert_eq!(Name::among("x\u{7}", &["ping"]).label(), "_OTHER");
    /// ```
    pub fn among(sent: &'a str, defined: &[&'static str]) -> Name<'a> {
        Name {
            sent,
            known: defined.iter().copied().find(|name| *name == sent),
        }
    }

    /// The metric label: the server's name, or [`OTHER`].
    pub fn label(&self) -> &'static str {
        self.known.unwrap_or(OTHER)
    }
}

/// `--log-format text|json`.
pub const LOG_FORMAT: Setting = Setting {
    flag: "--log-format",
    env: Some("SHIFTWORK_LOG_FORMAT"),
    takes_value: true,
    help: "text (default) or json: each log line on stderr as one JSON object",
};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// One human-readable line.
    Text,
    /// One JSON object per line.
    Json,
}

impl LogFormat {
    /// The format of `settings` (`--log-format` or `SHIFTWORK_LOG_FORMAT`); the error names the flag.
    pub fn of(settings: &Settings) -> Result<LogFormat, String> {
        match settings.value(&LOG_FORMAT).map(str::trim) {
            None | Some("text") => Ok(LogFormat::Text),
            Some("json") => Ok(LogFormat::Json),
            Some(other) => Err(format!(
                "--log-format / SHIFTWORK_LOG_FORMAT must be text or json, not '{}'",
                shiftwork_seams::echo::echo(other)
            )),
        }
    }
}

/// The transport a request came by (`network.transport`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Standard input and output of a process.
    Pipe,
    /// TCP (Streamable HTTP).
    Tcp,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// The telemetry of the process, once [`init`] ran.
struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
    /// The reader `GET /metrics` collects from (`serve --http`).
    pull: Option<Arc<ManualReader>>,
    instruments: Option<Instruments>,
    /// Queue gauges, read from the store at most once per [`GAUGE_INTERVAL`].
    queue: Mutex<QueueGauges>,
}

/// The instruments the dispatcher and the contracts group record into.
struct Instruments {
    duration: Histogram<f64>,
    contracts: Counter<u64>,
    claim_to_fulfil: Histogram<f64>,
}

#[derive(Default)]
struct QueueGauges {
    read_at: Option<Instant>,
    /// (status, target agent or "", count).
    counts: Vec<(String, String, u64)>,
}

/// How often at most the queue gauges are read from the store.
pub const GAUGE_INTERVAL: Duration = Duration::from_secs(5);

static TELEMETRY: OnceLock<Telemetry> = OnceLock::new();

/// What [`init`] builds.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The level when `RUST_LOG` is unset.
    pub default_level: &'static str,
    /// How log lines are written.
    pub format: LogFormat,
    /// Build the pull reader of `GET /metrics` (`serve --http`).
    pub metrics_endpoint: bool,
}

/// Starts logging and, as the environment asks, tracing and metrics. Call it once, before serving;
/// a second call changes nothing. Problems with the exporters are warnings: the server runs without
/// them.
pub fn init(options: Options) {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let any = env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some();
    let wants_traces = any || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some();
    let wants_metrics = any || env("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT").is_some();
    let mut warnings = Vec::new();
    if let Some(protocol) = env("OTEL_EXPORTER_OTLP_PROTOCOL")
        && protocol != "http/protobuf"
        && protocol != "http/json"
    {
        warnings.push(format!(
            "OTEL_EXPORTER_OTLP_PROTOCOL={} is not spoken by this build: telemetry goes out as http/protobuf \
             (a collector's OTLP/HTTP port is usually 4318)",
            shiftwork_seams::echo::echo(&protocol)
        ));
    }
    let resource = || {
        let mut builder = opentelemetry_sdk::Resource::builder();
        if env("OTEL_SERVICE_NAME").is_none() {
            builder = builder.with_service_name("shiftwork-mcp");
        }
        builder
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build()
    };
    let tracer = wants_traces
        .then(|| {
            opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_http_client(otlp_client::Ureq::new())
                .build()
                .map_err(|e| warnings.push(format!("traces are not exported: {e}")))
                .ok()
        })
        .flatten()
        .map(|exporter| {
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource())
                .build()
        });
    let pull = options
        .metrics_endpoint
        .then(|| Arc::new(ManualReader::builder().build()));
    let push = wants_metrics
        .then(|| {
            opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_http_client(otlp_client::Ureq::new())
                .build()
                .map_err(|e| warnings.push(format!("metrics are not exported: {e}")))
                .ok()
        })
        .flatten();
    let meter = (pull.is_some() || push.is_some()).then(|| {
        let mut builder = SdkMeterProvider::builder().with_resource(resource());
        if let Some(pull) = &pull {
            builder = builder.with_reader(SharedReader(Arc::clone(pull)));
        }
        if let Some(push) = push {
            builder = builder.with_reader(
                opentelemetry_sdk::metrics::PeriodicReader::builder(push)
                    .with_interval(Duration::from_secs(15))
                    .build(),
            );
        }
        builder.build()
    });
    let instruments = meter.as_ref().map(|meter| {
        let meter = meter.meter("shiftwork-mcp");
        Instruments {
            duration: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("How long the server took to answer an MCP request.")
                .with_boundaries(vec![
                    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                    5.0, 10.0, 30.0, 60.0,
                ])
                .build(),
            contracts: meter
                .u64_counter("shiftwork.contracts.events")
                .with_description("Contract events seen by the server: claims, fulfils, failures, stale-epoch refusals, waiting polls.")
                .build(),
            claim_to_fulfil: meter
                .f64_histogram("shiftwork.contracts.claim_to_fulfil.duration")
                .with_unit("s")
                .with_description("From a contract's claim to its accepted delivery.")
                .with_boundaries(vec![
                    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0, 7200.0, 21600.0, 86400.0,
                ])
                .build(),
        }
    });
    if meter.is_some() {
        register_queue_gauges(meter.as_ref());
    }
    crate::log::install(options.default_level, options.format, tracer.as_ref());
    for warning in warnings {
        tracing::warn!("{warning}");
    }
    let _ = TELEMETRY.set(Telemetry {
        tracer,
        meter,
        pull,
        instruments,
        queue: Mutex::new(QueueGauges::default()),
    });
}

/// Flushes and stops the exporters (before the process exits), waiting at most `within`: the export
/// runs on a thread of its own, so a collector that accepts the connection and never answers holds
/// the process no longer than that (what it did not take is lost, and a warning says so). The first
/// call starts the export; a later one (the signal's drain and the main thread both end the process)
/// waits for that same export, so neither returns, and lets the process exit, while the other's
/// export still runs.
pub fn shutdown(within: Duration) {
    let Some(t) = TELEMETRY.get() else { return };
    if t.tracer.is_none() && t.meter.is_none() {
        return;
    }
    static FLUSHED: (Mutex<Option<bool>>, std::sync::Condvar) = (Mutex::new(None), std::sync::Condvar::new());
    let (state, changed) = &FLUSHED;
    let mut flushed = state.lock().unwrap_or_else(PoisonError::into_inner);
    if flushed.is_none() {
        *flushed = Some(false);
        let flushing = std::thread::Builder::new()
            .name(String::from("shiftwork-mcp-flush"))
            .spawn(move || {
                // Each shutdown exports what its provider still holds (the batch of spans, a last
                // collection of the metrics).
                if let Some(tracer) = &t.tracer {
                    let _ = tracer.shutdown_with_timeout(within);
                }
                if let Some(meter) = &t.meter {
                    let _ = meter.shutdown_with_timeout(within);
                }
                *state.lock().unwrap_or_else(PoisonError::into_inner) = Some(true);
                changed.notify_all();
            });
        if flushing.is_err() {
            return;
        }
    }
    let (flushed, waited) = changed
        .wait_timeout_while(flushed, within, |done| *done != Some(true))
        .unwrap_or_else(PoisonError::into_inner);
    drop(flushed);
    if waited.timed_out() {
        tracing::warn!(
            "the telemetry collector did not take the last spans and metrics within {} ms; they are lost",
            within.as_millis()
        );
    }
}

/// A reader shared between the meter provider and `GET /metrics`.
#[derive(Debug)]
struct SharedReader(Arc<ManualReader>);

impl opentelemetry_sdk::metrics::reader::MetricReader for SharedReader {
    fn register_pipeline(&self, pipeline: std::sync::Weak<opentelemetry_sdk::metrics::Pipeline>) {
        self.0.register_pipeline(pipeline);
    }
    fn collect(&self, rm: &mut ResourceMetrics) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.collect(rm)
    }
    fn force_flush(&self) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.force_flush()
    }
    fn shutdown_with_timeout(&self, timeout: Duration) -> opentelemetry_sdk::error::OTelSdkResult {
        self.0.shutdown_with_timeout(timeout)
    }
    fn temporality(
        &self,
        kind: opentelemetry_sdk::metrics::InstrumentKind,
    ) -> opentelemetry_sdk::metrics::Temporality {
        self.0.temporality(kind)
    }
}

/// One request being served: its span, and what the dispatcher records when it ends. It keeps the
/// client's values only as [`logged`] cuts, and the labels the server defines.
pub struct Request {
    started: Instant,
    span: tracing::Span,
    method: String,
    method_label: &'static str,
    tool: Option<String>,
    tool_label: Option<&'static str>,
    id: String,
    agent: Option<String>,
    transport: Transport,
    version: Option<&'static str>,
}

/// The trace context a client sent with a request.
#[derive(Debug, Default, Clone, Copy)]
pub struct TraceHeaders<'a> {
    /// `traceparent` (from `params._meta`).
    pub traceparent: Option<&'a str>,
    /// `tracestate`.
    pub tracestate: Option<&'a str>,
    /// `baggage`.
    pub baggage: Option<&'a str>,
    /// The HTTP request's own `traceparent` header, linked (not the parent).
    pub http_traceparent: Option<&'a str>,
}

impl Request {
    /// Starts a request of `method` (and `tool`, for a call) with JSON-RPC id `id` (its JSON text).
    /// The span is named by the labels (`tools/call hours_check`, `_OTHER` for a name the server
    /// does not define); its attributes and the log line repeat the [`logged`] cuts of what was sent.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        method: Name<'_>,
        tool: Option<Name<'_>>,
        id: &str,
        agent: Option<&str>,
        transport: Transport,
        version: Option<&'static str>,
        trace: TraceHeaders<'_>,
    ) -> Request {
        let method_label = method.label();
        let tool_label = tool.map(|t| t.label());
        let method = logged(method.sent).into_owned();
        let tool = tool.map(|t| logged(t.sent).into_owned());
        let id = logged(id).into_owned();
        let span = tracing::info_span!(
            target: "shiftwork_mcp::request",
            "mcp.request",
            "otel.name" = match tool_label {
                Some(tool) => format!("{method_label} {tool}"),
                None => method_label.to_owned(),
            },
            "otel.kind" = "server",
            "mcp.method.name" = method.as_str(),
            "gen_ai.tool.name" = tool.as_deref(),
            "gen_ai.operation.name" = tool.as_ref().map(|_| "execute_tool"),
            "jsonrpc.request.id" = id.as_str(),
            "mcp.protocol.version" = version,
            "network.transport" = transport.name(),
            "error.type" = tracing::field::Empty,
            "otel.status_code" = tracing::field::Empty,
        );
        if !span.is_disabled() {
            link_trace(&span, trace);
        }
        Request {
            started: Instant::now(),
            span,
            method,
            method_label,
            tool,
            tool_label,
            id,
            agent: agent.map(|a| logged(a).into_owned()),
            transport,
            version,
        }
    }

    /// The request's span, to run its work in.
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Ends the request with `outcome`: the log line, the span's error, the duration histogram.
    pub fn finish(self, outcome: Finished) {
        let elapsed = self.started.elapsed();
        let (kind, code) = outcome.classify();
        if kind != "result" {
            self.span.record("error.type", code.as_deref().unwrap_or(kind));
            self.span.record("otel.status_code", "ERROR");
        }
        let _enter = self.span.enter();
        // The span's own fields are not repeated on the line (the fmt layer does not see the request
        // span): each value appears once.
        tracing::info!(
            target: "shiftwork_mcp::request",
            method = %self.method,
            tool = self.tool.as_deref(),
            outcome = kind,
            code = code.as_deref(),
            duration_ms = elapsed.as_secs_f64() * 1000.0,
            agent = self.agent.as_deref(),
            request_id = %self.id,
            transport = self.transport.name(),
            "request"
        );
        if let Some(instruments) = TELEMETRY.get().and_then(|t| t.instruments.as_ref()) {
            let mut attributes = vec![
                KeyValue::new("mcp.method.name", self.method_label),
                KeyValue::new("network.transport", self.transport.name()),
            ];
            if let Some(tool) = self.tool_label {
                attributes.push(KeyValue::new("gen_ai.tool.name", tool));
            }
            if let Some(version) = self.version {
                attributes.push(KeyValue::new("mcp.protocol.version", version));
            }
            if kind != "result" {
                attributes.push(KeyValue::new("error.type", code.unwrap_or(Cow::Borrowed(kind))));
            }
            instruments.duration.record(elapsed.as_secs_f64(), &attributes);
        }
    }
}

/// Gives `span` the client's trace context as its parent (from `_meta`) and the HTTP request's
/// `traceparent` as a link.
fn link_trace(span: &tracing::Span, trace: TraceHeaders<'_>) {
    use opentelemetry::propagation::TextMapPropagator as _;
    use opentelemetry::trace::TraceContextExt as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    let propagator = opentelemetry_sdk::propagation::TraceContextPropagator::new();
    let extract = |traceparent: &str, tracestate: Option<&str>| {
        // A traceparent is 55 characters; a longer text is not one, and is not copied.
        if traceparent.len() > LOGGED_CHARS {
            return opentelemetry::Context::new();
        }
        let mut carrier = std::collections::HashMap::new();
        carrier.insert(String::from("traceparent"), traceparent.to_owned());
        if let Some(state) = tracestate.map(bounded_tracestate) {
            carrier.insert(String::from("tracestate"), state.to_owned());
        }
        propagator.extract(&carrier)
    };
    if let Some(traceparent) = trace.traceparent {
        let parent = extract(traceparent, trace.tracestate);
        if parent.span().span_context().is_valid() {
            let _ = span.set_parent(parent);
        }
    }
    if let Some(traceparent) = trace.http_traceparent {
        let linked = extract(traceparent, None);
        let context = linked.span().span_context().clone();
        if context.is_valid() {
            span.add_link(context);
        }
    }
    let _ = trace.baggage;
}

/// `tracestate` within [`MAX_TRACESTATE`] bytes: its whole leading members that fit.
fn bounded_tracestate(state: &str) -> &str {
    if state.len() <= MAX_TRACESTATE {
        return state;
    }
    let head = &state.as_bytes()[..=MAX_TRACESTATE];
    match head.iter().rposition(|b| *b == b',') {
        Some(end) => state[..end].trim_end(),
        None => "",
    }
}

/// How a request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finished {
    /// A tool answered: what its handler said happened.
    Tool(Verdict),
    /// A JSON-RPC error with this code (one of the server's).
    Error(i32),
    /// Any other result.
    Result,
    /// Cancelled by the client (no answer sent).
    Cancelled,
}

impl Finished {
    /// `("result" | "refusal" | "tool_error" | "jsonrpc_error" | "cancelled", code)`: a code is a
    /// library's fixed name or a JSON-RPC error number, never a client's text.
    fn classify(self) -> (&'static str, Option<Cow<'static, str>>) {
        match self {
            Finished::Result => ("result", None),
            Finished::Cancelled => ("cancelled", None),
            Finished::Error(code) => ("jsonrpc_error", Some(Cow::Owned(code.to_string()))),
            Finished::Tool(verdict) => (verdict.kind(), verdict.code().map(Cow::Borrowed)),
        }
    }
}

/// Counts a contracts event (`claim`, `fulfil`, `failure`, `stale_epoch`, `waiting_poll`, …).
pub fn contracts_event(event: &'static str) {
    if let Some(instruments) = TELEMETRY.get().and_then(|t| t.instruments.as_ref()) {
        instruments.contracts.add(1, &[KeyValue::new("event", event)]);
    }
}

/// Records the time from a contract's claim to its accepted delivery.
pub fn contracts_claim_to_fulfil(elapsed: Duration) {
    if let Some(instruments) = TELEMETRY.get().and_then(|t| t.instruments.as_ref()) {
        instruments.claim_to_fulfil.record(elapsed.as_secs_f64(), &[]);
    }
}

/// What reads the queue gauges: contracts per status, and waiting ones per target agent.
type QueueReader = Box<dyn Fn() -> Result<Vec<(String, String, u64)>, String> + Send + Sync>;

static QUEUE_READER: OnceLock<QueueReader> = OnceLock::new();

/// Registers how the queue gauges are read (the contracts group does, once).
pub fn set_queue_reader(reader: QueueReader) {
    let _ = QUEUE_READER.set(reader);
}

/// The queue counts, read again when older than [`GAUGE_INTERVAL`].
fn queue_counts() -> Vec<(String, String, u64)> {
    let (Some(telemetry), Some(reader)) = (TELEMETRY.get(), QUEUE_READER.get()) else {
        return Vec::new();
    };
    let mut queue = telemetry.queue.lock().unwrap_or_else(PoisonError::into_inner);
    if queue.read_at.is_none_or(|at| at.elapsed() >= GAUGE_INTERVAL) {
        match reader() {
            Ok(counts) => queue.counts = bounded_targets(counts),
            Err(e) => tracing::debug!("the queue gauges could not be read: {e}"),
        }
        queue.read_at = Some(Instant::now());
    }
    queue.counts.clone()
}

/// The queue rows with at most [`MAX_TARGET_AGENTS`] target agents per status: those with the most
/// contracts (then by name), the others summed in one row under [`OTHER`], so the agents clients
/// dispatch to cannot grow the gauge's series without bound.
fn bounded_targets(rows: Vec<(String, String, u64)>) -> Vec<(String, String, u64)> {
    let (mut named, mut out): (Vec<_>, Vec<_>) =
        rows.into_iter().partition(|(_, target, _)| !target.is_empty());
    named.sort_by(|a, b| a.0.cmp(&b.0).then(b.2.cmp(&a.2)).then(a.1.cmp(&b.1)));
    let mut kept = 0;
    let mut status = String::new();
    for (row_status, target, count) in named {
        if row_status != status {
            status.clone_from(&row_status);
            kept = 0;
        }
        if kept < MAX_TARGET_AGENTS {
            kept += 1;
            out.push((row_status, target, count));
        } else if let Some(other) = out.iter_mut().find(|(s, t, _)| *s == row_status && t == OTHER) {
            other.2 += count;
        } else {
            out.push((row_status, OTHER.to_owned(), count));
        }
    }
    out
}

fn register_queue_gauges(meter: Option<&SdkMeterProvider>) {
    let Some(meter) = meter else { return };
    let meter = meter.meter("shiftwork-mcp");
    // The callback stays registered with the meter provider for the process's life; the handle
    // itself holds nothing.
    meter
        .u64_observable_gauge("shiftwork.contracts.queue")
        .with_description("Contracts in the store by status (and, for SUBMITTED, by target agent).")
        .with_callback(|observer| {
            for (status, target, count) in queue_counts() {
                let mut attributes = vec![KeyValue::new("status", status)];
                if !target.is_empty() {
                    attributes.push(KeyValue::new("target_agent", target));
                }
                observer.observe(count, &attributes);
            }
        })
        .build();
}

/// `GET /metrics`: every metric as Prometheus text (exposition format 0.0.4); `None` when metrics
/// are not collected.
pub fn prometheus() -> Option<String> {
    let telemetry = TELEMETRY.get()?;
    let reader = telemetry.pull.as_ref()?;
    let mut collected = ResourceMetrics::default();
    reader.collect(&mut collected).ok()?;
    Some(exposition(&collected))
}

/// Every metric of `collected` as Prometheus text.
fn exposition(collected: &ResourceMetrics) -> String {
    let mut out = String::new();
    for scope in collected.scope_metrics() {
        for metric in scope.metrics() {
            render(
                &mut out,
                metric.name(),
                metric.unit(),
                metric.description(),
                metric.data(),
            );
        }
    }
    out
}

/// A Prometheus metric name from an OpenTelemetry one (dots to underscores, the unit appended as
/// Prometheus names it).
fn prometheus_name(name: &str, unit: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == ':' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let suffix = match unit {
        "s" => "_seconds",
        "ms" => "_milliseconds",
        "By" => "_bytes",
        _ => "",
    };
    if !suffix.is_empty() && !out.ends_with(suffix) {
        out.push_str(suffix);
    }
    out
}

fn labels(attributes: impl Iterator<Item = KeyValue>, extra: Option<(&str, String)>) -> String {
    let mut parts: Vec<String> = attributes
        .map(|kv| {
            format!(
                "{}=\"{}\"",
                prometheus_name(kv.key.as_str(), ""),
                escape_label(&kv.value.to_string())
            )
        })
        .collect();
    if let Some((key, value)) = extra {
        parts.push(format!("{key}=\"{}\"", escape_label(&value)));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

/// A label value as the exposition format writes it (`\\`, `\"`), its control and bidirectional
/// characters — a line feed included — first written as the visible text `\u{1b}` (whose backslash
/// the format then escapes), so a scrape shown on a terminal stays inert.
fn escape_label(value: &str) -> String {
    shiftwork_seams::echo::escape_controls(value)
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
}

fn render(out: &mut String, name: &str, unit: &str, description: &str, data: &AggregatedMetrics) {
    let base = prometheus_name(name, unit);
    let help = |out: &mut String, name: &str, kind: &str| {
        let _ = writeln!(
            out,
            "# HELP {name} {}",
            description.replace('\\', "\\\\").replace('\n', " ")
        );
        let _ = writeln!(out, "# TYPE {name} {kind}");
    };
    match data {
        AggregatedMetrics::F64(MetricData::Histogram(h)) => {
            help(out, &base, "histogram");
            for point in h.data_points() {
                let mut cumulative = 0u64;
                let bounds: Vec<f64> = point.bounds().collect();
                for (i, count) in point.bucket_counts().enumerate() {
                    cumulative += count;
                    let le = bounds
                        .get(i)
                        .map_or_else(|| String::from("+Inf"), |b| b.to_string());
                    let _ = writeln!(
                        out,
                        "{base}_bucket{} {cumulative}",
                        labels(point.attributes().cloned(), Some(("le", le)))
                    );
                }
                let _ = writeln!(
                    out,
                    "{base}_sum{} {}",
                    labels(point.attributes().cloned(), None),
                    point.sum()
                );
                let _ = writeln!(
                    out,
                    "{base}_count{} {}",
                    labels(point.attributes().cloned(), None),
                    point.count()
                );
            }
        }
        AggregatedMetrics::U64(MetricData::Sum(sum)) => {
            let name = if sum.is_monotonic() {
                format!("{base}_total")
            } else {
                base.clone()
            };
            help(out, &name, if sum.is_monotonic() { "counter" } else { "gauge" });
            for point in sum.data_points() {
                let _ = writeln!(
                    out,
                    "{name}{} {}",
                    labels(point.attributes().cloned(), None),
                    point.value()
                );
            }
        }
        AggregatedMetrics::U64(MetricData::Gauge(gauge)) => {
            help(out, &base, "gauge");
            for point in gauge.data_points() {
                let _ = writeln!(
                    out,
                    "{base}{} {}",
                    labels(point.attributes().cloned(), None),
                    point.value()
                );
            }
        }
        _ => {}
    }
}

/// An OTLP/HTTP client over ureq (the exporters call it from their own threads, where blocking is
/// right), so no second HTTP client stack is built in.
mod otlp_client {
    use bytes::Bytes;
    use opentelemetry_http::{HttpClient, HttpError, Request, Response};

    #[derive(Debug)]
    pub struct Ureq(ureq::Agent);

    impl Ureq {
        pub fn new() -> Ureq {
            Ureq(
                ureq::Agent::config_builder()
                    .http_status_as_error(false)
                    .timeout_global(Some(std::time::Duration::from_secs(10)))
                    .build()
                    .new_agent(),
            )
        }
    }

    #[async_trait::async_trait]
    impl HttpClient for Ureq {
        async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
            let (parts, body) = request.into_parts();
            let request = ureq::http::Request::from_parts(parts, body.to_vec());
            let mut response = self.0.run(request).map_err(|e| Box::new(e) as HttpError)?;
            let status = response.status();
            let body = response
                .body_mut()
                .with_config()
                .limit(4 * 1024 * 1024)
                .read_to_vec()
                .map_err(|e| Box::new(e) as HttpError)?;
            Response::builder()
                .status(status)
                .body(Bytes::from(body))
                .map_err(|e| Box::new(e) as HttpError)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 34 item 1: a request's outcome is its handler's verdict, whatever its answer says.
    #[test]
    fn issue34_item1_outcomes_are_the_handlers_verdicts() {
        let check = |finished: Finished, kind: &str, code: Option<&str>| {
            let (k, c) = finished.classify();
            assert_eq!((k, c.as_deref()), (kind, code), "{finished:?}");
        };
        check(Finished::Tool(Verdict::Result), "result", None);
        check(
            Finished::Tool(Verdict::Refusal("STALE_EPOCH")),
            "refusal",
            Some("STALE_EPOCH"),
        );
        check(Finished::Tool(Verdict::ToolError(None)), "tool_error", None);
        check(
            Finished::Tool(Verdict::ToolError(Some("MEMORY_BUSY"))),
            "tool_error",
            Some("MEMORY_BUSY"),
        );
        check(Finished::Error(-32601), "jsonrpc_error", Some("-32601"));
        check(Finished::Result, "result", None);
        check(Finished::Cancelled, "cancelled", None);
    }

    /// Issue 34 items 4 and 11: what a client chose is cut and escaped before a line or a span
    /// repeats it; a trace state keeps its whole leading members within the bound.
    #[test]
    fn issue34_item11_client_values_are_cut_and_escaped() {
        let check = |text: &str, expected: &str| assert_eq!(logged(text), expected, "{text:?}");
        check("7", "7");
        check("\"req-\u{1b}[2J\u{7}\"", "\"req-\\u{1b}[2J\\u{7}\"");
        check("left \u{202e}right", "left \\u{202e}right");
        let long = "é".repeat(LOGGED_CHARS + 5);
        check(&long, &format!("{}…(5 more)", "é".repeat(LOGGED_CHARS)));
        let at_bound = "x".repeat(LOGGED_CHARS);
        check(&at_bound, &at_bound);
        let member = |i: usize| format!("k{i:03}=v{}", "x".repeat(40));
        let members: Vec<String> = (0..40).map(member).collect();
        let state = members.join(",");
        let kept = bounded_tracestate(&state);
        assert!(kept.len() <= MAX_TRACESTATE && state.starts_with(kept), "{kept}");
        assert!(
            kept.split(',').all(|m| members.contains(&m.to_owned())),
            "whole members only"
        );
        assert_eq!(bounded_tracestate("short=1"), "short=1");
        assert_eq!(bounded_tracestate(&"x".repeat(MAX_TRACESTATE + 1)), "");
    }

    /// Issue 34 item 4: the queue gauge names at most `MAX_TARGET_AGENTS` agents per status, those
    /// with the most contracts; the rest add up under `_OTHER`, and the totals stay.
    #[test]
    fn issue34_item4_target_agents_are_bounded_with_an_other_bucket() {
        let mut rows = vec![(String::from("CLAIMED"), String::new(), 3)];
        for i in 0..(MAX_TARGET_AGENTS + 20) {
            rows.push((String::from("SUBMITTED"), format!("agent{i:03}"), i as u64 + 1));
        }
        let total: u64 = rows.iter().map(|r| r.2).sum();
        let bounded = bounded_targets(rows);
        assert_eq!(bounded.iter().map(|r| r.2).sum::<u64>(), total);
        let named: Vec<&str> = bounded
            .iter()
            .filter(|r| r.0 == "SUBMITTED" && r.1 != OTHER)
            .map(|r| r.1.as_str())
            .collect();
        assert_eq!(named.len(), MAX_TARGET_AGENTS);
        assert!(
            named.contains(&"agent069") && !named.contains(&"agent000"),
            "{named:?}"
        );
        let other: Vec<_> = bounded.iter().filter(|r| r.1 == OTHER).collect();
        assert_eq!(other.len(), 1);
        assert_eq!(other[0].2, (1..=20).sum::<u64>());
        assert!(bounded.contains(&(String::from("CLAIMED"), String::new(), 3)));
    }

    /// Issue 34 item 4: a label value never carries a raw control character into the scrape.
    #[test]
    fn issue34_item4_label_values_are_escaped() {
        let check = |value: &str, expected: &str| assert_eq!(escape_label(value), expected, "{value:?}");
        check("plain", "plain");
        check("a\"b\\c", "a\\\"b\\\\c");
        check("bell\u{7}esc\u{1b}", "bell\\\\u{7}esc\\\\u{1b}");
        check("line\nbreak", "line\\\\u{a}break");
    }

    #[test]
    fn prometheus_names_follow_the_otel_mapping() {
        assert_eq!(
            prometheus_name("mcp.server.operation.duration", "s"),
            "mcp_server_operation_duration_seconds"
        );
        assert_eq!(
            prometheus_name("shiftwork.contracts.queue", ""),
            "shiftwork_contracts_queue"
        );
    }
}

#[cfg(test)]
mod pull_tests {
    use super::*;

    #[test]
    fn a_recorded_duration_reaches_the_prometheus_text() {
        let reader = Arc::new(ManualReader::builder().build());
        let provider = SdkMeterProvider::builder()
            .with_reader(SharedReader(Arc::clone(&reader)))
            .build();
        let histogram = provider
            .meter("t")
            .f64_histogram("mcp.server.operation.duration")
            .with_unit("s")
            .with_boundaries(vec![0.001, 0.01])
            .build();
        histogram.record(0.002, &[KeyValue::new("mcp.method.name", "ping")]);
        let mut collected = ResourceMetrics::default();
        reader.collect(&mut collected).unwrap_or_default();
        let out = exposition(&collected);
        assert!(
            out.contains("mcp_server_operation_duration_seconds_count{mcp_method_name=\"ping\"} 1"),
            "{out}"
        );
    }
}
