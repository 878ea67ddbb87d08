//! The MCP methods over the registry: `initialize`, `ping`, `server/discover`, `tools/list` and
//! `tools/call`, and with [`Server::with_resources`] the resources, prompts and completion methods
//! ([`crate::resources`], [`crate::prompts`]), answered as JSON-RPC message lines. The stdio
//! transport ([`crate::stdio`]) reads the requests and runs the calls; this module knows what to
//! answer.
//!
//! # Protocol versions
//!
//! Every version a client may speak is served, and each request is judged by itself ([`Era`]):
//!
//! - **2026-07-28, stateless.** A request whose `params._meta` carries
//!   `io.modelcontextprotocol/protocolVersion` names its version and the client's capabilities
//!   itself; nothing is carried over from an earlier request, and no handshake is needed.
//!   `server/discover` answers the versions, capabilities and instructions; every result carries
//!   `resultType: "complete"` and the server's identity in `_meta`. An envelope missing the
//!   capabilities, or with a version that is not a string, is `-32602`; a version this server does not
//!   speak is `-32022` with `data: {"supported": [...], "requested": ...}`.
//! - **2024-11-05, 2025-06-18 and 2025-11-25, with the `initialize` handshake.** A request without
//!   the envelope is answered as these versions answer it. `initialize` is always of this family
//!   (2026-07-28 has no handshake): asked for a version it does not speak, it answers the newest one
//!   older than that ([`agreed_version`]): 2025-11-25 for 2026-07-28, 2024-11-05 for 2025-03-26.
//!   2025-03-26 is the one version whose transport requires JSON-RPC batches; this server takes one
//!   message at a time (a batch is `-32600`), so it does not agree to that version.
//!
//! An error answering a message whose id cannot be read has no `id` member ([`error_line`]).
//!
//! Answers are written straight into the response line: a tool's answer is rendered once and its text
//! placed both in the text block and, unparsed, as `structuredContent`; `tools/list` never changes while
//! a server runs, so it is rendered once. The descriptors are rmcp's model types ([`descriptor`]).

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use rmcp::model::{
    CacheScope, CallToolResult, ContentBlock, Implementation, ListToolsResult, PromptsCapability,
    ProtocolVersion, ResourcesCapability, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
    ToolsCapability,
};
use serde_json::Value;
use shiftwork_seams::echo::clip_echo;

use crate::prompts::PromptDef;
use crate::registry::{Answered, Arguments, Outcome, Registry, TextStyle, ToolDef, Verdict};
use crate::resources::{ResourceDef, Views};
use crate::subscriptions::Hub;
use crate::telemetry::{self, Transport};
use crate::wire::{self, Id, Kind, Params, Refusal};

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "shiftwork-mcp";

/// How long a client may keep the `tools/list` answer (`ttlMs`): the tool set never changes while a
/// server runs. The longest delay a JavaScript timer takes (2^31 − 1 ms, about 24.8 days), so that no
/// client's cache arithmetic overflows.
pub const TOOLS_TTL_MS: u64 = i32::MAX as u64;

/// The methods this server answers (with an id): what a metric label may name; any other is
/// [`telemetry::OTHER`].
pub const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
    "prompts/list",
    "prompts/get",
    "completion/complete",
];

/// The protocol versions of the stateless protocol (per-request `_meta`), oldest first.
pub const STATELESS_VERSIONS: &[&str] = &["2026-07-28"];

/// What a 2026-07-28 result carries after its own members: its type and the server's identity.
const STATELESS_TAIL: &str = concat!(
    r#","resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"shiftwork-mcp","version":""#,
    env!("CARGO_PKG_VERSION"),
    r#""}}"#
);

/// The protocol a request speaks, read from the request alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    /// A version with the `initialize` handshake ([`HANDSHAKE_VERSIONS`]).
    Handshake,
    /// The stateless protocol at this version (2026-07-28): results carry `resultType` and the
    /// server's identity.
    Stateless(&'static str),
}

impl Era {
    /// Which protocol a request of `method` with `params` speaks (see the module's documentation),
    /// or the JSON-RPC error refusing its envelope.
    pub fn of(id: Option<&str>, method: &str, params: &Params<'_>) -> Result<Era, Refusal> {
        let refuse = |code: i32, message: String, data: Option<String>| Refusal {
            code,
            message,
            id: id.map(str::to_owned),
            data,
        };
        if method == "initialize" {
            return Ok(Era::Handshake);
        }
        let Some(envelope) = &params.envelope else {
            // A discovery is of the stateless protocol whether or not the client said so.
            return Ok(if method == "server/discover" {
                Era::Stateless(STATELESS_VERSIONS[STATELESS_VERSIONS.len() - 1])
            } else {
                Era::Handshake
            });
        };
        if envelope.capabilities.is_none() {
            return Err(refuse(
                wire::INVALID_PARAMS,
                format!(
                    "params._meta is missing the required envelope key(s): {}",
                    wire::META_CLIENT_CAPABILITIES
                ),
                None,
            ));
        }
        let requested = match &envelope.version {
            Ok(version) => version,
            Err(kind) => {
                return Err(refuse(
                    wire::INVALID_PARAMS,
                    format!(
                        "params._meta[\"{}\"] must be a string, not {}",
                        wire::META_PROTOCOL_VERSION,
                        kind.described()
                    ),
                    None,
                ));
            }
        };
        match STATELESS_VERSIONS.iter().find(|v| **v == requested.as_ref()) {
            Some(version) => Ok(Era::Stateless(version)),
            None => {
                let requested = clip_echo(requested);
                let data = serde_json::json!({"supported": STATELESS_VERSIONS, "requested": requested});
                Err(refuse(
                    wire::UNSUPPORTED_PROTOCOL_VERSION,
                    format!(
                        "Unsupported protocol version '{requested}': this server speaks {} per request, and \
                         2024-11-05, 2025-06-18 and 2025-11-25 after initialize",
                        STATELESS_VERSIONS.join(", ")
                    ),
                    Some(data.to_string()),
                ))
            }
        }
    }

    /// The protocol version, when the request named it (2026-07-28).
    pub fn version(self) -> Option<&'static str> {
        match self {
            Era::Handshake => None,
            Era::Stateless(version) => Some(version),
        }
    }

    /// A result's JSON text as this protocol writes it: a 2026-07-28 result gains `resultType` and
    /// the server's identity (`result` is an object's text).
    pub fn result(self, result: &str) -> Cow<'_, str> {
        match self {
            Era::Handshake => Cow::Borrowed(result),
            Era::Stateless(_) => {
                let body = result.trim_end();
                let body = body.strip_suffix('}').unwrap_or(body);
                let tail = if body.trim_end().ends_with('{') {
                    &STATELESS_TAIL[1..]
                } else {
                    STATELESS_TAIL
                };
                Cow::Owned(format!("{body}{tail}}}"))
            }
        }
    }
}

/// The protocol versions this server agrees to in the `initialize` handshake, oldest first.
///
/// 2025-03-26 is not among them: its transport requires JSON-RPC batches (which 2025-06-18 removed
/// again), and this server answers one message at a time, so that every limit, cancellation and undo
/// holds per request. A client asking for 2025-03-26 is offered 2024-11-05 ([`agreed_version`]).
pub const HANDSHAKE_VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

/// The version to agree to with a client that asked for `requested` in `initialize`: that version
/// when this server speaks it ([`HANDSHAKE_VERSIONS`]); else the newest one it speaks that is older
/// than `requested` (a client speaks the versions before its own, and a 2025-03-26 client knows
/// 2024-11-05, not what came later); else, for a request older than all of them or not a date, the
/// newest.
///
/// ```
/// use shiftwork_mcp::server::agreed_version;
/// assert_eq!(agreed_version(Some("2025-06-18")).as_str(), "2025-06-18");
/// assert_eq!(agreed_version(Some("2025-03-26")).as_str(), "2024-11-05");
/// assert_eq!(agreed_version(Some("2026-07-28")).as_str(), "2025-11-25");
/// assert_eq!(agreed_version(Some("2024-10-07")).as_str(), "2025-11-25");
/// assert_eq!(agreed_version(None).as_str(), "2025-11-25");
/// ```
pub fn agreed_version(requested: Option<&str>) -> ProtocolVersion {
    let newest = || HANDSHAKE_VERSIONS[HANDSHAKE_VERSIONS.len() - 1].clone();
    let Some(requested) = requested else {
        return newest();
    };
    let is_date = requested.len() == 10
        && requested.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !is_date {
        return newest();
    }
    // Dates of one form compare as text.
    HANDSHAKE_VERSIONS
        .iter()
        .rev()
        .find(|v| v.as_str() <= requested)
        .cloned()
        .unwrap_or_else(newest)
}

/// The MCP server: a registry of tools and the server's `instructions`.
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    registry: Registry,
    instructions: String,
    tools_list: OnceLock<String>,
    stateless_tools_list: OnceLock<String>,
    extras: Option<Extras>,
}

/// What a server serves beside its tools: the resources, their
/// subscriptions, the prompts and the completion of their arguments.
struct Extras {
    views: Arc<Views>,
    prompts: Vec<&'static PromptDef>,
    /// The checkpoint's path as the prompts name it to the model.
    checkpoint: String,
    hub: Arc<Hub>,
}

impl Server {
    /// A server for `registry`, announcing `instructions` in its `initialize` answer; it serves tools
    /// only.
    pub fn new(registry: Registry, instructions: String) -> Self {
        Server::with_inner(registry, instructions, None)
    }

    /// A server of tools, and of the resources `views` shows and the prompts of `groups`
    /// ([`crate::resources`], [`crate::prompts`]); `checkpoint` is the job's checkpoint as the prompts
    /// name it.
    pub fn with_resources(
        registry: Registry,
        instructions: String,
        views: Views,
        groups: &[&str],
        checkpoint: String,
    ) -> Self {
        let views = Arc::new(views);
        let extras = Extras {
            hub: Hub::new(Arc::clone(&views)),
            views,
            prompts: crate::prompts::definitions(groups),
            checkpoint,
        };
        Server::with_inner(registry, instructions, Some(extras))
    }

    fn with_inner(registry: Registry, instructions: String, extras: Option<Extras>) -> Self {
        Server {
            inner: Arc::new(Inner {
                registry,
                instructions,
                tools_list: OnceLock::new(),
                stateless_tools_list: OnceLock::new(),
                extras,
            }),
        }
    }

    /// The resources served, if any.
    pub fn views(&self) -> Option<&Arc<Views>> {
        self.inner.extras.as_ref().map(|e| &e.views)
    }

    /// The subscriptions to the resources, if any are served.
    pub fn hub(&self) -> Option<&Arc<Hub>> {
        self.inner.extras.as_ref().map(|e| &e.hub)
    }

    /// The tools served.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// Whether the stores answer (`GET /healthz`): the contracts store, when the contracts group is
    /// served, asked through the read-only `inspect_mesh_state` (which never creates a store); the
    /// other groups keep no store. The error is the store's refusal.
    pub fn health(&self) -> Result<(), String> {
        let Some(inspect) = self.registry().get("inspect_mesh_state") else {
            return Ok(());
        };
        let mut arguments = serde_json::Map::new();
        arguments.insert(String::from("limit"), Value::from(1));
        let answered = inspect.call(&arguments);
        if answered.verdict == Verdict::Result {
            return Ok(());
        }
        Err(answered
            .outcome
            .structured()
            .unwrap_or_default()
            .pointer("/error/message")
            .and_then(Value::as_str)
            .map_or_else(
                || String::from("the contracts store does not answer"),
                str::to_owned,
            ))
    }

    /// The `initialize` result for a client that asked for `requested`: the version
    /// [`agreed_version`] chooses.
    pub fn initialize_result(&self, requested: Option<&str>) -> ServerConfig {
        let version = agreed_version(requested);
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(ToolsCapability::default());
        if self.inner.extras.is_some() {
            let mut resources = ResourcesCapability::default();
            resources.subscribe = Some(true);
            resources.list_changed = Some(false);
            capabilities.resources = Some(resources);
            capabilities.prompts = Some(PromptsCapability::default());
            capabilities.completions = Some(serde_json::Map::new());
        }
        let mut config = ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(self.inner.instructions.clone());
        config.protocol_version = version;
        config
    }

    /// The JSON text of the `tools/list` result: every tool, and `ttlMs` ([`TOOLS_TTL_MS`]).
    pub fn tools_list(&self) -> &str {
        self.inner.tools_list.get_or_init(|| {
            let mut list =
                ListToolsResult::with_all_items(self.registry().tools().iter().map(descriptor).collect())
                    .with_ttl_ms(TOOLS_TTL_MS)
                    .with_cache_scope(CacheScope::Private);
            // The shape every protocol version with an `initialize` handshake reads.
            list.result_type = None;
            serde_json::to_string(&list).unwrap_or_else(|_| String::from(r#"{"tools":[]}"#))
        })
    }

    /// The `tools/list` result of a 2026-07-28 request ([`Server::tools_list`] with `resultType`
    /// and the server's identity).
    fn stateless_tools_list(&self, era: Era) -> &str {
        self.inner
            .stateless_tools_list
            .get_or_init(|| era.result(self.tools_list()).into_owned())
    }

    /// The `server/discover` result (MCP 2026-07-28): the stateless versions, the capabilities, the
    /// instructions, and how long a client may keep them.
    pub fn discover_result(&self) -> String {
        let capabilities = if self.inner.extras.is_some() {
            serde_json::json!({
                "tools": {},
                "resources": {"subscribe": true, "listChanged": false},
                "prompts": {},
                "completions": {},
            })
        } else {
            serde_json::json!({"tools": {}})
        };
        let result = serde_json::json!({
            "supportedVersions": STATELESS_VERSIONS,
            "capabilities": capabilities,
            "instructions": self.inner.instructions,
            "ttlMs": TOOLS_TTL_MS,
            "cacheScope": "private",
        });
        Era::Stateless(STATELESS_VERSIONS[STATELESS_VERSIONS.len() - 1])
            .result(&result.to_string())
            .into_owned()
    }

    /// Answers a request that is not `tools/call` (those run through [`Server::call`]) that came on
    /// stdio: the complete response line.
    pub fn respond(&self, id: Id<'_>, method: &str, params: &Params<'_>) -> Vec<u8> {
        self.respond_via(id, method, params, Transport::Pipe, None)
    }

    /// [`Server::respond`] for a request that came by `transport`, from `agent` when its credentials
    /// said who it is: one span, one log line and one duration measured per request.
    pub fn respond_via(
        &self,
        id: Id<'_>,
        method: &str,
        params: &Params<'_>,
        transport: Transport,
        agent: Option<&str>,
    ) -> Vec<u8> {
        let era = Era::of(Some(id.raw()), method, params);
        let request = started(id, method, params, transport, agent, era.as_ref().ok());
        let (line, finished) = self.answer(id, method, params, era);
        request.finish(finished);
        line
    }

    /// The telemetry of a request that is not `tools/call` and is answered outside
    /// [`Server::respond_via`] (a subscription, a listen stream): one span, one log line and one
    /// duration, finished by the caller with what became of it.
    pub fn request_started(
        &self,
        id: Id<'_>,
        method: &str,
        params: &Params<'_>,
        transport: Transport,
        agent: Option<&str>,
    ) -> telemetry::Request {
        let era = Era::of(Some(id.raw()), method, params);
        started(id, method, params, transport, agent, era.as_ref().ok())
    }

    fn answer(
        &self,
        id: Id<'_>,
        method: &str,
        params: &Params<'_>,
        era: Result<Era, Refusal>,
    ) -> (Vec<u8>, telemetry::Finished) {
        let era = match era {
            Ok(era) => era,
            Err(refusal) => {
                tracing::debug!(code = refusal.code, message = %shiftwork_seams::echo::echo(&refusal.message), "answered: a refused envelope");
                return (refusal_line(&refusal), telemetry::Finished::Error(refusal.code));
            }
        };
        let line = match (method, era) {
            ("initialize", _) => {
                let result = self.initialize_result(params.protocol_version.as_deref());
                let text = serde_json::to_string(&result).unwrap_or_else(|_| String::from("{}"));
                result_line(id.raw(), &text)
            }
            ("ping", _) => result_line(id.raw(), &era.result("{}")),
            ("tools/list", Era::Handshake) => result_line(id.raw(), self.tools_list()),
            ("tools/list", Era::Stateless(_)) => result_line(id.raw(), self.stateless_tools_list(era)),
            ("server/discover", _) => result_line(id.raw(), &self.discover_result()),
            (method, _) if self.inner.extras.is_some() && EXTRA_METHODS.contains(&method) => {
                match self.answer_extra(method, params, era) {
                    Ok(result) => result_line(id.raw(), &era.result(&result)),
                    Err((code, message)) => {
                        tracing::debug!(code, message = %shiftwork_seams::echo::echo(&message), "answered: a refused request");
                        return (
                            error_line(Some(id.raw()), code, &message),
                            telemetry::Finished::Error(code),
                        );
                    }
                }
            }
            (other, _) => {
                tracing::debug!(method = %telemetry::logged(other), "answered: method not found");
                return (
                    error_line(
                        Some(id.raw()),
                        wire::METHOD_NOT_FOUND,
                        &format!("method not found: {}", clip_echo(other)),
                    ),
                    telemetry::Finished::Error(wire::METHOD_NOT_FOUND),
                );
            }
        };
        (line, telemetry::Finished::Result)
    }

    /// The result of a resources, prompts or completion request, or the error refusing it.
    fn answer_extra(&self, method: &str, params: &Params<'_>, era: Era) -> Result<String, (i32, String)> {
        let Some(extras) = &self.inner.extras else {
            return Err((wire::METHOD_NOT_FOUND, format!("method not found: {method}")));
        };
        let invalid = |message: String| (wire::INVALID_PARAMS, message);
        let members = params_object(params).map_err(invalid)?;
        let text = |key: &str| -> Result<String, (i32, String)> {
            match members.get(key) {
                Some(Value::String(text)) => Ok(text.clone()),
                Some(_) => Err(invalid(format!("params.{key} must be a string"))),
                None => Err(invalid(format!("params.{key} is missing"))),
            }
        };
        let listed = |key: &str, items: Vec<Value>| {
            serde_json::json!({key: items, "ttlMs": crate::resources::LIST_TTL_MS, "cacheScope": "private"})
                .to_string()
        };
        match method {
            "resources/list" => Ok(listed(
                "resources",
                extras.views.resources().map(ResourceDef::descriptor).collect(),
            )),
            "resources/templates/list" => Ok(listed(
                "resourceTemplates",
                extras.views.templates().map(ResourceDef::descriptor).collect(),
            )),
            "resources/read" => {
                let uri = text("uri")?;
                extras
                    .views
                    .read(&uri)
                    .map(|contents| contents.result().to_string())
                    .map_err(|e| invalid(e.to_string()))
            }
            "prompts/list" => Ok(listed(
                "prompts",
                extras.prompts.iter().map(|p| p.descriptor()).collect(),
            )),
            "prompts/get" => {
                let name = text("name")?;
                crate::prompts::get(
                    &extras.prompts,
                    &extras.views,
                    &extras.checkpoint,
                    &name,
                    members.get("arguments"),
                )
                .map(|result| result.to_string())
                .map_err(|e| invalid(e.to_string()))
            }
            "completion/complete" => {
                let reference = members
                    .get("ref")
                    .ok_or_else(|| invalid(String::from("params.ref is missing")))?;
                let argument = members.get("argument").and_then(Value::as_object);
                let (Some(name), Some(value)) = (
                    argument.and_then(|a| a.get("name")).and_then(Value::as_str),
                    argument.and_then(|a| a.get("value")).and_then(Value::as_str),
                ) else {
                    return Err(invalid(String::from(
                        "params.argument must be {\"name\": <string>, \"value\": <string>}",
                    )));
                };
                crate::prompts::complete(&extras.prompts, &extras.views, reference, name, value)
                    .map(|result| result.to_string())
                    .map_err(|e| invalid(e.to_string()))
            }
            // Answered here only when the transport keeps no subscriber for this request.
            "resources/subscribe" | "resources/unsubscribe" => Err((
                wire::METHOD_NOT_FOUND,
                format!(
                    "{method} needs a session, which this transport does not keep: over HTTP, listen with \
                     subscriptions/listen (protocol {}) instead",
                    STATELESS_VERSIONS[STATELESS_VERSIONS.len() - 1]
                ),
            )),
            _ => Err(match era {
                Era::Handshake => (
                    wire::METHOD_NOT_FOUND,
                    format!(
                        "subscriptions/listen is of protocol {}; with an earlier version, use resources/subscribe",
                        STATELESS_VERSIONS[STATELESS_VERSIONS.len() - 1]
                    ),
                ),
                Era::Stateless(_) => (
                    wire::METHOD_NOT_FOUND,
                    String::from("subscriptions/listen needs a transport that streams"),
                ),
            }),
        }
    }

    /// The resource a `resources/subscribe` or `resources/unsubscribe` names, when it is served;
    /// else the error refusing it.
    pub fn subscribed_uri(&self, id: Id<'_>, params: &Params<'_>) -> Result<String, Refusal> {
        let refuse = |code: i32, message: String| Refusal {
            code,
            message,
            id: Some(id.raw().to_owned()),
            data: None,
        };
        let Some(extras) = &self.inner.extras else {
            return Err(refuse(
                wire::METHOD_NOT_FOUND,
                String::from("this server serves no resources"),
            ));
        };
        let members = params_object(params).map_err(|m| refuse(wire::INVALID_PARAMS, m))?;
        let Some(Value::String(uri)) = members.get("uri") else {
            return Err(refuse(
                wire::INVALID_PARAMS,
                String::from("params.uri must be a string"),
            ));
        };
        if extras.views.find(uri).is_none() {
            return Err(refuse(
                wire::INVALID_PARAMS,
                format!("Resource not found: {}", clip_echo(uri)),
            ));
        }
        Ok(uri.clone())
    }

    /// The resources a `subscriptions/listen` of 2026-07-28 follows: those of its
    /// `notifications.resourceSubscriptions` this server serves (the others are left out of the
    /// acknowledgement); else the error refusing it.
    pub fn listen_uris(&self, id: Id<'_>, params: &Params<'_>) -> Result<Vec<String>, Refusal> {
        let refuse = |code: i32, message: String| Refusal {
            code,
            message,
            id: Some(id.raw().to_owned()),
            data: None,
        };
        let era = Era::of(Some(id.raw()), "subscriptions/listen", params)?;
        let Some(extras) = &self.inner.extras else {
            return Err(refuse(
                wire::METHOD_NOT_FOUND,
                String::from("this server serves no resources"),
            ));
        };
        if era == Era::Handshake {
            return Err(refuse(
                wire::METHOD_NOT_FOUND,
                format!(
                    "subscriptions/listen is of protocol {}; with an earlier version, use resources/subscribe",
                    STATELESS_VERSIONS[STATELESS_VERSIONS.len() - 1]
                ),
            ));
        }
        let members = params_object(params).map_err(|m| refuse(wire::INVALID_PARAMS, m))?;
        let Some(Value::Object(filter)) = members.get("notifications") else {
            return Err(refuse(
                wire::INVALID_PARAMS,
                String::from("params.notifications must be an object (the subscription filter)"),
            ));
        };
        let uris = match filter.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(uris)) => uris
                .iter()
                .filter_map(Value::as_str)
                .filter(|uri| extras.views.find(uri).is_some())
                .map(str::to_owned)
                .collect::<Vec<_>>(),
            Some(_) => {
                return Err(refuse(
                    wire::INVALID_PARAMS,
                    String::from("params.notifications.resourceSubscriptions must be an array of URIs"),
                ));
            }
        };
        let mut unique = Vec::new();
        for uri in uris {
            if !unique.contains(&uri) {
                unique.push(uri);
            }
        }
        Ok(unique)
    }

    /// The tool and arguments of a `tools/call`, or the JSON-RPC error refusing it (only for a call
    /// that cannot be processed at all — no such tool, params that are not a call).
    ///
    /// `prefetched` names the tool whose [`crate::registry::Prefetch`] already read the arguments
    /// while the line was decoded: when it is this call's tool, the arguments keep their keys (for
    /// the check of undeclared arguments) but not a copy of their text, which nothing will read.
    pub fn prepare_call(
        &self,
        id: Id<'_>,
        params: &Params<'_>,
        prefetched: Option<&str>,
    ) -> Result<(&ToolDef, Arguments, Era), Refusal> {
        let refuse = |message: String| {
            tracing::debug!(message = %shiftwork_seams::echo::echo(&message), "answered: invalid tools/call");
            Refusal {
                code: wire::INVALID_PARAMS,
                message,
                id: Some(id.raw().to_owned()),
                data: None,
            }
        };
        let era = Era::of(Some(id.raw()), "tools/call", params)?;
        if params.shape != Some(Kind::Object) {
            return Err(refuse(format!(
                "tools/call needs params {{\"name\": <tool>, \"arguments\": {{…}}}}, got {}",
                params.shape.map_or("none", Kind::described)
            )));
        }
        let name = match &params.name {
            Some(Ok(name)) => name,
            Some(Err(kind)) => {
                return Err(refuse(format!(
                    "params.name must be a string, not {}",
                    kind.described()
                )));
            }
            None => return Err(refuse(String::from("params.name is missing: the tool to call"))),
        };
        let Some(tool) = self.registry().get(name) else {
            return Err(refuse(format!("unknown tool '{}'", clip_echo(name))));
        };
        let arguments = match &params.arguments {
            None | Some(Err(Kind::Null)) => Arguments::from_checked_text(String::from("{}"), Vec::new()),
            Some(Err(kind)) => {
                return Err(refuse(format!(
                    "params.arguments must be an object, not {}",
                    kind.described()
                )));
            }
            Some(Ok(text)) => {
                if let Some(offset) = text.beyond_double {
                    return Err(refuse(wire::beyond_double_sentence(offset)));
                }
                let keys = text.keys.iter().map(|k| Cow::clone(k).into_owned()).collect();
                let text = if prefetched == Some(tool.name) {
                    String::new()
                } else {
                    text.text.to_owned()
                };
                Arguments::from_checked_text(text, keys)
            }
        };
        Ok((tool, arguments, era))
    }
}

/// What a tool's [`crate::registry::Prefetch`] read of a call's `arguments` while its line was
/// decoded: the tool, and the call's work on what it read.
pub type ReadArguments<'a> = (&'static str, Box<dyn FnOnce() -> Answered + 'a>);

/// The answer of a `tools/call`, whichever transport brought it.
#[derive(Debug)]
pub enum CallAnswer {
    /// The tool answered (a result or a tool error), in the protocol of the request, and what its
    /// handler said happened.
    Result(Outcome, Era, Verdict),
    /// The call could not be processed at all: the JSON-RPC error line.
    Refused(Vec<u8>),
    /// The call waits, parked as state ([`crate::registry::CallContext::park`]): the transport
    /// resumes it ([`Server::resume`]) once its wake-up is given or its deadline comes.
    Parked(Box<ParkedCall>),
}

impl CallAnswer {
    /// The whole response line (a parked call has none yet: it is waited for on this thread first).
    pub fn line(self, server: &Server, id: &str) -> Vec<u8> {
        match self {
            CallAnswer::Result(outcome, era, _) => ResultLine::of(id, &outcome, era).concat(),
            CallAnswer::Refused(line) => line,
            CallAnswer::Parked(parked) => server.finish_here(*parked).line(server, id),
        }
    }
}

/// A call its handler parked: what it waits for, and the request's span and log line, kept open
/// until it answers. Dropped unanswered (its client went away), it is logged as cancelled.
pub struct ParkedCall {
    id: String,
    request: OpenRequest,
    era: Era,
    context: crate::registry::CallContext,
    park: crate::registry::Park,
}

/// A request whose log line is not written yet: written as cancelled if it is dropped so.
struct OpenRequest(Option<telemetry::Request>);

impl Drop for OpenRequest {
    fn drop(&mut self) {
        if let Some(request) = self.0.take() {
            request.finish(telemetry::Finished::Cancelled);
        }
    }
}

impl std::fmt::Debug for ParkedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParkedCall")
            .field("id", &self.id)
            .field("park", &self.park)
            .finish_non_exhaustive()
    }
}

impl ParkedCall {
    /// What the call waits for.
    pub fn park(&self) -> &crate::registry::Park {
        &self.park
    }

    /// The call's context.
    pub fn context(&self) -> &crate::registry::CallContext {
        &self.context
    }

    /// Refuses the call instead of letting it wait (a bound on waiting calls): the JSON-RPC error
    /// line, logged as that error. The call's wait had claimed nothing.
    pub fn refuse(mut self, code: i32, message: &str) -> Vec<u8> {
        if let Some(request) = self.request.0.take() {
            request.finish(telemetry::Finished::Error(code));
        }
        error_line(Some(&self.id), code, message)
    }
}

impl Server {
    /// Runs a `tools/call` — the one way every transport runs a tool: the call checked and its
    /// arguments taken ([`Server::prepare_call`]), the handler run under `context` (cancellation,
    /// progress, the caller's identity), or the work `read` holds when the tool's prefetch already
    /// read this call's arguments. A handler that panics is answered as an internal error.
    pub fn call(
        &self,
        id: Id<'_>,
        params: &Params<'_>,
        context: crate::registry::CallContext,
        read: Option<ReadArguments<'_>>,
    ) -> CallAnswer {
        let tool_name = match &params.name {
            Some(Ok(name)) => Some(telemetry::Name {
                sent: name.as_ref(),
                known: self.registry().get(name).map(|tool| tool.name),
            }),
            _ => None,
        };
        let version = params
            .envelope
            .as_ref()
            .and_then(|e| e.version.as_ref().ok())
            .and_then(|v| STATELESS_VERSIONS.iter().copied().find(|s| *s == v.as_ref()));
        let request = telemetry::Request::start(
            telemetry::Name::among("tools/call", METHODS),
            tool_name,
            id.raw(),
            context.agent(),
            context.transport(),
            version,
            trace_headers(params, context.link()),
        );
        let answer = {
            let _entered = request.span().enter();
            self.run_call(id, params, context.clone(), read)
        };
        self.settle(id.raw(), request, context, answer)
    }

    /// Resumes a parked call ([`CallAnswer::Parked`]) on this thread: it answers, or parks again.
    pub fn resume(&self, parked: ParkedCall) -> CallAnswer {
        let ParkedCall {
            id,
            mut request,
            era,
            context,
            park,
        } = parked;
        let Some(open) = request.0.take() else {
            return CallAnswer::Refused(error_line(
                Some(&id),
                wire::INTERNAL_ERROR,
                "the call was resumed twice",
            ));
        };
        let answer = {
            let _entered = open.span().enter();
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(park.resume)) {
                Ok(answered) => CallAnswer::Result(answered.outcome, era, answered.verdict),
                Err(panic) => panicked(&id, "the tool", &panic),
            }
        };
        self.settle(&id, open, context, answer)
    }

    /// Waits for a parked call on this thread (a transport that keeps no parked state), on the
    /// park's clock, until it answers.
    pub fn finish_here(&self, parked: ParkedCall) -> CallAnswer {
        let mut parked = parked;
        loop {
            let park = &parked.park;
            // A given wake-up stays given for the resumed step to take.
            if park.clock.wait_until(&park.wake, park.until) {
                park.wake.notify();
            }
            match self.resume(parked) {
                CallAnswer::Parked(next) => parked = *next,
                answered => return answered,
            }
        }
    }

    /// A call's answer as the transport gets it: a handler that parked the call makes it
    /// [`CallAnswer::Parked`] (its request stays open); otherwise the request's log line, span and
    /// duration are finished.
    fn settle(
        &self,
        id: &str,
        request: telemetry::Request,
        context: crate::registry::CallContext,
        answer: CallAnswer,
    ) -> CallAnswer {
        if let Some(park) = context.take_park() {
            let era = match &answer {
                CallAnswer::Result(_, era, _) => *era,
                _ => Era::Handshake,
            };
            return CallAnswer::Parked(Box::new(ParkedCall {
                id: id.to_owned(),
                request: OpenRequest(Some(request)),
                era,
                context,
                park,
            }));
        }
        request.finish(match &answer {
            _ if context.is_cancelled() => telemetry::Finished::Cancelled,
            CallAnswer::Result(_, _, verdict) => telemetry::Finished::Tool(*verdict),
            CallAnswer::Refused(_) | CallAnswer::Parked(_) => {
                telemetry::Finished::Error(wire::INVALID_PARAMS)
            }
        });
        answer
    }

    fn run_call(
        &self,
        id: Id<'_>,
        params: &Params<'_>,
        context: crate::registry::CallContext,
        read: Option<ReadArguments<'_>>,
    ) -> CallAnswer {
        let prefetched = read.as_ref().map(|(name, _)| *name);
        let (tool, arguments, era) = match self.prepare_call(id, params, prefetched) {
            Ok(prepared) => prepared,
            Err(refusal) => return CallAnswer::Refused(refusal_line(&refusal)),
        };
        let arguments = arguments.in_context(context);
        let read = read.filter(|(name, _)| *name == tool.name).map(|(_, run)| run);
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            tool.invoke_read(&arguments, read)
        })) {
            Ok(answered) => CallAnswer::Result(answered.outcome, era, answered.verdict),
            Err(panic) => panicked(id.raw(), tool.name, &panic),
        }
    }
}

/// The methods answered only by a server with resources and prompts: those of [`METHODS`] after
/// its first five.
const EXTRA_METHODS: &[&str] = METHODS.split_at(5).1;

/// The members of a request's `params` (none when absent), or the sentence refusing it.
fn params_object(params: &Params<'_>) -> Result<serde_json::Map<String, Value>, String> {
    match (params.shape, params.text) {
        (None, _) => Ok(serde_json::Map::new()),
        (Some(Kind::Object), Some(text)) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(members)) => Ok(members),
            _ => Err(String::from("params must be an object")),
        },
        (Some(kind), _) => Err(format!("params must be an object, not {}", kind.described())),
    }
}

/// The answer of a handler that panicked: an internal error.
fn panicked(id: &str, tool: &str, panic: &Box<dyn std::any::Any + Send>) -> CallAnswer {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    tracing::error!(
        tool,
        "the tool handler panicked: {}",
        shiftwork_seams::echo::echo(&what)
    );
    CallAnswer::Refused(error_line(
        Some(id),
        wire::INTERNAL_ERROR,
        &format!("the tool handler panicked: {}", clip_echo(&what)),
    ))
}

/// The trace context of a request: `_meta`'s, and the HTTP request's `traceparent` to link.
/// Starts the telemetry of a request of `method` (not `tools/call`) in protocol `era`.
fn started(
    id: Id<'_>,
    method: &str,
    params: &Params<'_>,
    transport: Transport,
    agent: Option<&str>,
    era: Option<&Era>,
) -> telemetry::Request {
    telemetry::Request::start(
        telemetry::Name::among(method, METHODS),
        None,
        id.raw(),
        agent,
        transport,
        era.and_then(|e| e.version()),
        trace_headers(params, None),
    )
}

fn trace_headers<'p>(params: &'p Params<'_>, link: Option<&'p str>) -> telemetry::TraceHeaders<'p> {
    telemetry::TraceHeaders {
        traceparent: params.traceparent.as_deref(),
        tracestate: params.tracestate.as_deref(),
        baggage: params.baggage.as_deref(),
        http_traceparent: link,
    }
}

/// The rmcp descriptor of a tool: name, title, description, schemas and all four hints.
pub fn descriptor(tool: &ToolDef) -> Tool {
    let object = |v: &Value| Arc::new(v.as_object().cloned().unwrap_or_default());
    let hints = tool.hints;
    let annotations = ToolAnnotations::with_title(tool.title)
        .read_only(hints.read_only)
        .destructive(hints.destructive)
        .idempotent(hints.idempotent)
        .open_world(hints.open_world);
    Tool::new(
        Cow::Borrowed(tool.name),
        Cow::Borrowed(tool.description),
        object(&tool.input_schema),
    )
    .with_title(tool.title)
    .with_raw_output_schema(object(&tool.output_schema))
    .with_annotations(annotations)
}

/// The MCP result of an outcome as rmcp's model: `structuredContent` plus one text block with the
/// same JSON, or a tool error with one text block. The server writes [`call_result_line`] instead;
/// this is for tests and embedders that hold rmcp types.
pub fn render(outcome: &Outcome) -> CallToolResult {
    match outcome {
        Outcome::ToolError(message) => CallToolResult::error(vec![ContentBlock::text(message.clone())]),
        _ => {
            let mut result = CallToolResult::success(vec![ContentBlock::text(outcome.text())]);
            result.structured_content = outcome.structured();
            result
        }
    }
}

/// The response line of a `tools/call`: the text block, then `structuredContent`, then `isError`,
/// as rmcp wrote them. The answer is rendered once: a compact answer's text is also its
/// `structuredContent`.
pub fn call_result_line(id: &str, outcome: &Outcome) -> Vec<u8> {
    ResultLine::of(id, outcome, Era::Handshake).concat()
}

/// The response line of a `tools/call` ([`call_result_line`]) in the pieces it is written in: the
/// texts a [`Outcome::Prerendered`] answer already holds (a 3,000-node plan's are 140 kB) are
/// borrowed, not copied into one line, and the transport writes the pieces with one vectored write.
///
/// ```
/// use shiftwork_mcp::registry::Outcome;
/// use shiftwork_mcp::server::ResultLine;
/// let outcome = Outcome::Prerendered { structured: String::from(r#"{"result":"plan"}"#), text_json: None };
/// let line = ResultLine::of("7", &outcome, shiftwork_mcp::server::Era::Handshake);
/// assert_eq!(line.pieces()[3], br#"{"result":"plan"}"#);
/// assert_eq!(
///     line.concat(),
///     br#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"{\"result\":\"plan\"}"}],"structuredContent":{"result":"plan"},"isError":false}}"#.iter().chain(b"\n").copied().collect::<Vec<u8>>()
/// );
/// ```
#[derive(Debug)]
pub struct ResultLine<'o> {
    pieces: [Cow<'o, [u8]>; 5],
}

impl<'o> ResultLine<'o> {
    /// The pieces of the response line of `outcome` for request `id` (its raw JSON text), in the
    /// protocol of `era`.
    pub fn of(id: &str, outcome: &'o Outcome, era: Era) -> Self {
        // The text block, and whether it is already a JSON string (quotes included).
        let ((text, literal), structured): ((Cow<'o, str>, bool), Option<Cow<'o, str>>) = match outcome {
            Outcome::ToolError(message) => ((Cow::Borrowed(message.as_str()), false), None),
            Outcome::Answer(value, TextStyle::Compact) => {
                let compact = value.to_string();
                ((Cow::Owned(compact.clone()), false), Some(Cow::Owned(compact)))
            }
            Outcome::Answer(value, TextStyle::Pretty) => (
                (Cow::Owned(outcome.text()), false),
                Some(Cow::Owned(value.to_string())),
            ),
            Outcome::Prerendered {
                structured,
                text_json,
            } => (
                text_json
                    .as_deref()
                    .map_or((Cow::Borrowed(structured.as_str()), false), |t| {
                        (Cow::Borrowed(t), true)
                    }),
                Some(Cow::Borrowed(structured.as_str())),
            ),
        };
        let mut head = Vec::with_capacity(id.len() + 64 + if literal { 0 } else { text.len() + 2 });
        head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        head.extend_from_slice(id.as_bytes());
        head.extend_from_slice(br#","result":{"content":[{"type":"text","text":"#);
        let text = if literal {
            debug_assert!(
                serde_json::from_str::<String>(&text).is_ok(),
                "a text block given as a JSON string must be one: {text}"
            );
            bytes_of(text)
        } else {
            push_json_string(&mut head, &text);
            Cow::Borrowed(&[][..])
        };
        let stateless = matches!(era, Era::Stateless(_));
        let pieces = match structured {
            Some(structured) => [
                Cow::Owned(head),
                text,
                Cow::Borrowed(&br#"}],"structuredContent":"#[..]),
                one_line(structured),
                if stateless {
                    Cow::Owned(format!(",\"isError\":false{STATELESS_TAIL}}}}}\n").into_bytes())
                } else {
                    Cow::Borrowed(&b",\"isError\":false}}\n"[..])
                },
            ],
            None => [
                Cow::Owned(head),
                text,
                Cow::Borrowed(&br#"}],"isError":true"#[..]),
                if stateless {
                    Cow::Owned(format!("{STATELESS_TAIL}}}}}\n").into_bytes())
                } else {
                    Cow::Borrowed(&b"}}\n"[..])
                },
                Cow::Borrowed(&[][..]),
            ],
        };
        ResultLine { pieces }
    }

    /// The pieces, in order.
    pub fn pieces(&self) -> [&[u8]; 5] {
        self.pieces.each_ref().map(|piece| &**piece)
    }

    /// The whole line.
    pub fn concat(&self) -> Vec<u8> {
        self.pieces.concat()
    }
}

/// The bytes of a text, borrowed when it is.
fn bytes_of(text: Cow<'_, str>) -> Cow<'_, [u8]> {
    match text {
        Cow::Borrowed(text) => Cow::Borrowed(text.as_bytes()),
        Cow::Owned(text) => Cow::Owned(text.into_bytes()),
    }
}

/// A rendered answer as it goes on the message's one line (see [`push_one_line`]): borrowed when it
/// has no line break, as rendered answers have none.
fn one_line(json: Cow<'_, str>) -> Cow<'_, [u8]> {
    if memchr::memchr2(b'\n', b'\r', json.as_bytes()).is_none() {
        debug_assert!(wire::is_json(&json), "a rendered answer must be JSON: {json}");
        return bytes_of(json);
    }
    let mut line = Vec::with_capacity(json.len());
    push_one_line(&mut line, &json);
    Cow::Owned(line)
}

/// `{"jsonrpc":"2.0","id":<id>,"result":<result>}` and the newline.
pub fn result_line(id: &str, result: &str) -> Vec<u8> {
    let mut line = Vec::with_capacity(result.len() + id.len() + 40);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    line.extend_from_slice(id.as_bytes());
    line.extend_from_slice(br#","result":"#);
    push_one_line(&mut line, result);
    line.extend_from_slice(b"}\n");
    line
}

/// A JSON-RPC error response line. `id` `None` (the request's id could not be read) leaves the
/// `id` member out: MCP's schema has never allowed a `null` id (it makes the member optional in an
/// error since 2025-11-25), and the TypeScript SDK refuses a response whose `id` is `null` as a
/// parse failure instead of reporting the error — though JSON-RPC 2.0 itself writes `null`.
///
/// ```
/// use shiftwork_mcp::server::error_line;
/// assert_eq!(error_line(None, -32700, "not JSON"), b"{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32700,\"message\":\"not JSON\"}}\n");
/// assert!(error_line(Some("7"), -32601, "no").starts_with(b"{\"jsonrpc\":\"2.0\",\"id\":7,"));
/// ```
pub fn error_line(id: Option<&str>, code: i32, message: &str) -> Vec<u8> {
    error_line_with_data(id, code, message, None)
}

/// A JSON-RPC error response line with `data` (a JSON text) when given ([`error_line`]).
pub fn error_line_with_data(id: Option<&str>, code: i32, message: &str, data: Option<&str>) -> Vec<u8> {
    let mut line = Vec::with_capacity(message.len() + 80);
    line.extend_from_slice(br#"{"jsonrpc":"2.0","#);
    if let Some(id) = id {
        line.extend_from_slice(br#""id":"#);
        line.extend_from_slice(id.as_bytes());
        line.push(b',');
    }
    line.extend_from_slice(br#""error":{"code":"#);
    line.extend_from_slice(code.to_string().as_bytes());
    line.extend_from_slice(br#","message":"#);
    push_json_string(&mut line, message);
    if let Some(data) = data {
        line.extend_from_slice(br#","data":"#);
        push_one_line(&mut line, data);
    }
    line.extend_from_slice(b"}}\n");
    line
}

/// The error line answering a refusal.
pub fn refusal_line(refusal: &Refusal) -> Vec<u8> {
    error_line_with_data(
        refusal.id.as_deref(),
        refusal.code,
        &refusal.message,
        refusal.data.as_deref(),
    )
}

/// A `notifications/progress` line for the client's `token` (MCP): `progress` and the optional
/// `total` and `message`. `None` when `progress` is not a finite number.
pub fn progress_line(
    token: &str,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Option<Vec<u8>> {
    let number = |v: f64| serde_json::Number::from_f64(v).map(|n| n.to_string());
    let mut line = Vec::with_capacity(128);
    line.extend_from_slice(
        br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"#,
    );
    line.extend_from_slice(token.as_bytes());
    line.extend_from_slice(br#","progress":"#);
    line.extend_from_slice(number(progress)?.as_bytes());
    if let Some(total) = total.and_then(number) {
        line.extend_from_slice(br#","total":"#);
        line.extend_from_slice(total.as_bytes());
    }
    if let Some(message) = message {
        line.extend_from_slice(br#","message":"#);
        push_json_string(&mut line, &clip_echo(message));
    }
    line.extend_from_slice(b"}}\n");
    Some(line)
}

/// Appends `text` as a JSON string, escaped as `serde_json` escapes it (`\"`, `\\`, `\n`, `\r`, `\t`,
/// `\b`, `\f`, other control characters as `\u00XX`; everything else as itself). The bytes between
/// escapes are copied in runs.
fn push_json_string(line: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    line.reserve(bytes.len() + bytes.len() / 8 + 2);
    line.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = ESCAPES[usize::from(b)];
        if escape == 0 {
            continue;
        }
        line.extend_from_slice(&bytes[run..i]);
        run = i + 1;
        if escape == b'u' {
            line.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]);
        } else {
            line.extend_from_slice(&[b'\\', escape]);
        }
    }
    line.extend_from_slice(&bytes[run..]);
    line.push(b'"');
}

/// For each byte: 0 when it stands for itself in a JSON string, else the letter of its escape (`u`
/// for `\u00XX`).
static ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

/// Appends a JSON text, keeping the message on one line: a raw line break in valid JSON can only be
/// whitespace between tokens (inside strings it is escaped), so it becomes a space.
fn push_one_line(line: &mut Vec<u8>, json: &str) {
    debug_assert!(wire::is_json(json), "a rendered answer must be JSON: {json}");
    let start = line.len();
    line.extend_from_slice(json.as_bytes());
    if memchr::memchr2(b'\n', b'\r', json.as_bytes()).is_some() {
        for b in &mut line[start..] {
            if *b == b'\n' || *b == b'\r' {
                *b = b' ';
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escaping agrees with `serde_json`'s, byte for byte, on every control character, quotes,
    /// backslashes and non-ASCII text.
    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let mut every: String = (0u32..0x80).filter_map(char::from_u32).collect();
        every.push_str("é👍\u{2028}\u{7f}\"\\\n{\"a\": [1, 2]}");
        for text in [String::new(), String::from("plain"), every] {
            let mut ours = Vec::new();
            push_json_string(&mut ours, &text);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&text).unwrap()
            );
        }
    }
}
