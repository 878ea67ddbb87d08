//! Seeing inside the server (issue 30): one log line per request, an OpenTelemetry span per request
//! (named and attributed by the MCP semantic conventions, its parent the trace context a client put
//! in `_meta`), and the metrics of the requests and the contracts queue — exported over OTLP when an
//! endpoint is configured, and served as Prometheus text at `GET /metrics` by `serve --http`.
//!
//! With nothing configured nothing is built: no exporter, no meter, no tracer; a request then costs a
//! clock reading and a disabled span. Logging never blocks a call ([`crate::log`]).
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
use serde_json::Value;

use crate::registry::Outcome;
use crate::settings::{Setting, Settings};

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

/// Flushes and stops the exporters (before the process exits).
pub fn shutdown() {
    if let Some(t) = TELEMETRY.get() {
        if let Some(tracer) = &t.tracer {
            let _ = tracer.force_flush();
            let _ = tracer.shutdown();
        }
        if let Some(meter) = &t.meter {
            let _ = meter.force_flush();
            let _ = meter.shutdown();
        }
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

/// One request being served: its span, and what the dispatcher records when it ends.
pub struct Request {
    started: Instant,
    span: tracing::Span,
    method: Cow<'static, str>,
    tool: Option<String>,
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
    /// Starts a request of `method` (and `tool`, for a call) with JSON-RPC id `id`.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        method: &str,
        tool: Option<&str>,
        id: &str,
        agent: Option<&str>,
        transport: Transport,
        version: Option<&'static str>,
        trace: TraceHeaders<'_>,
    ) -> Request {
        let name = match tool {
            Some(tool) => format!("{method} {tool}"),
            None => method.to_owned(),
        };
        let span = tracing::info_span!(
            target: "shiftwork_mcp::request",
            "mcp.request",
            "otel.name" = %name,
            "otel.kind" = "server",
            "mcp.method.name" = %method,
            "gen_ai.tool.name" = tool,
            "gen_ai.operation.name" = tool.map(|_| "execute_tool"),
            "jsonrpc.request.id" = %id,
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
            method: Cow::Owned(method.to_owned()),
            tool: tool.map(str::to_owned),
            id: id.to_owned(),
            agent: agent.map(str::to_owned),
            transport,
            version,
        }
    }

    /// The request's span, to run its work in.
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Ends the request with `outcome`: the log line, the span's error, the duration histogram.
    pub fn finish(self, outcome: Finished<'_>) {
        let elapsed = self.started.elapsed();
        let (kind, code) = outcome.classify();
        if kind != "result" {
            self.span.record("error.type", code.as_deref().unwrap_or(kind));
            self.span.record("otel.status_code", "ERROR");
        }
        let _enter = self.span.enter();
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
            "{} {}",
            self.method,
            self.tool.as_deref().unwrap_or("")
        );
        if let Some(instruments) = TELEMETRY.get().and_then(|t| t.instruments.as_ref()) {
            let mut attributes = vec![
                KeyValue::new("mcp.method.name", self.method.to_string()),
                KeyValue::new("network.transport", self.transport.name()),
            ];
            if let Some(tool) = &self.tool {
                attributes.push(KeyValue::new("gen_ai.tool.name", tool.clone()));
            }
            if let Some(version) = self.version {
                attributes.push(KeyValue::new("mcp.protocol.version", version));
            }
            if kind != "result" {
                attributes.push(KeyValue::new(
                    "error.type",
                    code.clone().unwrap_or_else(|| kind.to_owned()),
                ));
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
        let mut carrier = std::collections::HashMap::new();
        carrier.insert(String::from("traceparent"), traceparent.to_owned());
        if let Some(state) = tracestate {
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

/// How a request ended.
pub enum Finished<'a> {
    /// A tool's outcome, and the refusal code its handler told ([`crate::registry::CallContext::refused`]).
    Tool(&'a Outcome, Option<&'static str>),
    /// A JSON-RPC error with this code.
    Error(i32),
    /// Any other result.
    Result,
    /// Cancelled by the client (no answer sent).
    Cancelled,
}

impl Finished<'_> {
    /// `("result" | "refusal" | "tool_error" | "jsonrpc_error" | "cancelled", code)`.
    fn classify(&self) -> (&'static str, Option<String>) {
        match self {
            Finished::Result => ("result", None),
            Finished::Cancelled => ("cancelled", None),
            Finished::Error(code) => ("jsonrpc_error", Some(code.to_string())),
            Finished::Tool(outcome, told) => {
                let (kind, code) = classify(outcome);
                (kind, told.map(str::to_owned).or(code))
            }
        }
    }
}

/// What an answer says of itself: a result, a domain refusal (the contracts code, the work log's
/// status) or a tool error. Never a sentence: a refusal's sentence quotes the caller's values, so a
/// sentence refusal's code comes only from what its handler told.
pub fn classify(outcome: &Outcome) -> (&'static str, Option<String>) {
    match outcome {
        Outcome::ToolError(_) => ("tool_error", None),
        Outcome::Answer(value, _) => classify_value(value),
        Outcome::Prerendered { structured, .. } => {
            let start = structured.trim_start();
            // A plan or brief is most answers and can be megabytes: its head tells it is a result.
            if start.starts_with(r#"{"result":"#) && !start.starts_with(r#"{"result":"error""#) {
                return ("result", None);
            }
            match serde_json::from_str::<Value>(structured) {
                Ok(value) => classify_value(&value),
                Err(_) => ("result", None),
            }
        }
    }
}

fn classify_value(value: &Value) -> (&'static str, Option<String>) {
    // A fixed word of the answer's own vocabulary, never free text.
    let word = |text: &str| {
        (text.len() <= 40
            && text
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_lowercase() || b == b'_'))
        .then(|| text.to_owned())
    };
    if value.get("ok") == Some(&Value::Bool(false)) {
        let code = value
            .pointer("/error/code")
            .and_then(Value::as_str)
            .and_then(word);
        return ("refusal", code);
    }
    if value.get("result").and_then(Value::as_str) == Some("error") {
        return ("refusal", None);
    }
    if let Some(status) = value.get("status").and_then(Value::as_str)
        && !matches!(
            status,
            "written" | "created" | "duplicate" | "dry_run" | "ok" | "reachable"
        )
    {
        return ("refusal", word(status));
    }
    ("result", None)
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
            Ok(counts) => queue.counts = counts,
            Err(e) => tracing::debug!("the queue gauges could not be read: {e}"),
        }
        queue.read_at = Some(Instant::now());
    }
    queue.counts.clone()
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

fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
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

    #[test]
    fn outcomes_are_classified_by_what_they_say_of_themselves() {
        let check = |outcome: Outcome, kind: &str, code: Option<&str>| {
            let (k, c) = classify(&outcome);
            assert_eq!((k, c.as_deref()), (kind, code));
        };
        use crate::registry::TextStyle::Compact;
        check(
            Outcome::Answer(serde_json::json!({"ok": true}), Compact),
            "result",
            None,
        );
        check(
            Outcome::Answer(
                serde_json::json!({"ok": false, "error": {"code": "STALE_EPOCH"}}),
                Compact,
            ),
            "refusal",
            Some("STALE_EPOCH"),
        );
        check(
            Outcome::Answer(
                serde_json::json!({"result": "error", "reason": "unit U9 is not ready"}),
                Compact,
            ),
            "refusal",
            None,
        );
        check(
            Outcome::ToolError(String::from("checkpoint unreadable: 'secret'")),
            "tool_error",
            None,
        );
        check(
            Outcome::Prerendered {
                structured: String::from(r#"{"result":"plan","batches":[]}"#),
                text_json: None,
            },
            "result",
            None,
        );
        check(
            Outcome::Prerendered {
                structured: String::from(r#"{"status":"no_dir","message":"x"}"#),
                text_json: None,
            },
            "refusal",
            Some("no_dir"),
        );
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
