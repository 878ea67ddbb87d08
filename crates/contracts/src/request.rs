//! The typed requests of the facade, and the argument rules they are checked by.
//!
//! The rules live here, once: the facade checks every request with them, and [`crate::args`] runs
//! the same checks while decoding tool arguments, in each tool's argument order.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{ContractRefusal, RefusalDetails};
use crate::limits::*;
use crate::model::{AgentId, ContractId, Status};

/// The identity an embedder gives every identity argument a tool call leaves out (the MCP server's
/// `--agent` / `AGENT_NAME`, or over HTTP the bearer token's agent), parsed once when it is
/// configured. Used by the tool-argument surface ([`crate::args`]); a library caller names its
/// agents in its requests.
///
/// ```
/// use shiftwork_contracts::request::DefaultAgent;
/// assert!(matches!(DefaultAgent::from_value(Some("alice"), "AGENT_NAME"), DefaultAgent::Valid(_)));
/// assert!(matches!(DefaultAgent::from_value(Some(""), "AGENT_NAME"), DefaultAgent::Unset));
/// assert!(matches!(DefaultAgent::from_value(Some("bad name"), "AGENT_NAME"), DefaultAgent::Invalid { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DefaultAgent {
    /// No default: an absent identity is refused `AGENT_ID_REQUIRED` (verify proceeds without one).
    #[default]
    Unset,
    /// A valid default identity.
    Valid(AgentId),
    /// A default was configured but is not an `AgentId`; every call that needs it is refused
    /// `INVALID_ARGUMENT` with `details.argument = source`.
    Invalid {
        /// Where the default came from, as the refusal names it (the adapter passes `AGENT_NAME`).
        source: &'static str,
    },
    /// The caller's credentials say who it is (a bearer token over HTTP): every identity argument
    /// defaults to it, and one naming another agent is refused `IDENTITY_MISMATCH` before any store
    /// is asked — an agent acts only as itself.
    Authenticated(AgentId),
}

impl DefaultAgent {
    /// Parses a configured default once; an empty value is no default.
    pub fn from_value(value: Option<&str>, source: &'static str) -> DefaultAgent {
        match value.filter(|v| !v.is_empty()) {
            None => DefaultAgent::Unset,
            Some(v) => AgentId::new(v).map_or(DefaultAgent::Invalid { source }, DefaultAgent::Valid),
        }
    }
}

/// An identity argument of a tool call, parsed once: the caller's, the embedder's default, or none.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Identity {
    /// The caller passed it as an argument.
    Given(AgentId),
    /// The argument was absent; this is the embedder's default.
    Default(AgentId),
    /// The argument was absent and the embedder's default is not a valid `AgentId` (named `source`).
    InvalidDefault {
        /// Where the default came from.
        source: &'static str,
    },
    /// The argument was absent and there is no default.
    #[default]
    Missing,
}

impl From<AgentId> for Identity {
    fn from(a: AgentId) -> Identity {
        Identity::Given(a)
    }
}

impl From<&AgentId> for Identity {
    fn from(a: &AgentId) -> Identity {
        Identity::Given(a.clone())
    }
}

impl Identity {
    /// The identity argument `argument` as `given` by the caller, checked against an authenticated
    /// caller (`IDENTITY_MISMATCH` names both when they differ); absent, the default's.
    ///
    /// ```
    /// use shiftwork_contracts::{AgentId, DefaultAgent, Identity, RefusalCode, RefusalDetails};
    /// let carol = DefaultAgent::Authenticated(AgentId::new("carol").unwrap());
    /// let mallory = AgentId::new("mallory").unwrap();
    /// let refused = Identity::checked("agent_id", Some(mallory.clone()), &carol).unwrap_err();
    /// assert_eq!(refused.code(), RefusalCode::IdentityMismatch);
    /// assert_eq!(refused.message(), "agent_id names mallory, but this caller authenticated as carol: an agent acts only as itself.");
    /// assert!(matches!(refused.details(), RefusalDetails::IdentityMismatch { given, .. } if given == &mallory));
    /// assert_eq!(Identity::checked("agent_id", None, &carol), Ok(Identity::Default(AgentId::new("carol").unwrap())));
    /// ```
    pub fn checked(
        argument: &str,
        given: Option<AgentId>,
        default: &DefaultAgent,
    ) -> Result<Identity, ContractRefusal> {
        match (given, default) {
            (Some(given), DefaultAgent::Authenticated(who)) if &given != who => Err(ContractRefusal::new(
                format!(
                    "{argument} names {given}, but this caller authenticated as {who}: an agent acts only as itself."
                ),
                RefusalDetails::IdentityMismatch {
                    argument: argument.to_owned(),
                    given,
                    authenticated: who.clone(),
                },
            )),
            (Some(given), _) => Ok(Identity::Given(given)),
            (None, default) => Ok(Identity::from_default(default)),
        }
    }

    /// The identity `text` when it follows the agent-id grammar.
    ///
    /// ```
    /// use shiftwork_contracts::Identity;
    /// assert!(Identity::given("bob").is_ok());
    /// assert!(Identity::given("bad name").is_err());
    /// ```
    pub fn given(text: &str) -> Result<Identity, crate::AgentIdError> {
        AgentId::new(text).map(Identity::Given)
    }

    /// An absent argument resolved against the embedder's default.
    pub fn from_default(default: &DefaultAgent) -> Identity {
        match default {
            DefaultAgent::Unset => Identity::Missing,
            DefaultAgent::Valid(a) | DefaultAgent::Authenticated(a) => Identity::Default(a.clone()),
            DefaultAgent::Invalid { source } => Identity::InvalidDefault { source },
        }
    }

    /// The agent, or the refusal of an identity argument `argument` that resolves to none:
    /// `AGENT_ID_REQUIRED` when there is no default, `INVALID_ARGUMENT { argument: <source> }` when
    /// the default is not an agent id.
    pub fn resolve(&self, argument: &str) -> Result<AgentId, ContractRefusal> {
        match self.resolve_optional()? {
            Some(a) => Ok(a),
            None => Err(ContractRefusal::new(
                format!("{argument} is required: pass it, or give the server a default agent identity."),
                RefusalDetails::AgentIdRequired {},
            )),
        }
    }

    /// Like [`Identity::resolve`], but no identity at all is `None` (verify answers without one).
    pub fn resolve_optional(&self) -> Result<Option<AgentId>, ContractRefusal> {
        match self {
            Identity::Given(a) | Identity::Default(a) => Ok(Some(a.clone())),
            Identity::InvalidDefault { source } => Err(ContractRefusal::invalid_argument(
                source,
                format!(
                    "{source}, the default agent identity, is not a valid agent id: use 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit."
                ),
            )),
            Identity::Missing => Ok(None),
        }
    }
}

/// What [`crate::Contracts::dispatch`] sends: the requester and target, a title, a workspace root,
/// and the optional parts. Build it with [`DispatchRequest::new`] and the setters; every optional part
/// left out is absent (its default applies, and it does not count in the idempotency fingerprint).
///
/// ```
/// use shiftwork_contracts::{AgentId, DispatchRequest};
/// use std::time::Duration;
/// let (alice, bob) = (AgentId::new("alice").unwrap(), AgentId::new("bob").unwrap());
/// let req = DispatchRequest::new(alice, bob, "Review add()", "/work")
///     .pointers(["src/lib.rs"])
///     .exec_ttl(Duration::from_secs(600))
///     .max_deliveries(3);
/// assert_eq!(req.task_type, None);
/// assert_eq!(req.pointers, Some(vec![String::from("src/lib.rs")]));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchRequest {
    /// Who dispatches it (the only agent that may cancel it).
    pub requester_agent: AgentId,
    /// The only agent that may claim and hold it.
    pub target_agent: AgentId,
    /// One line saying what to do: 1 to 200 characters, not blank, no control characters.
    pub title: String,
    /// The absolute directory both agents read at the same path; every pointer is relative to it. A
    /// path that is not UTF-8 text is refused (`INVALID_ARGUMENT`): a store keeps it as text.
    pub workspace_root: PathBuf,
    /// Files to pin by size and SHA-256, relative to the workspace root (absent: none; at most 32).
    pub pointers: Option<Vec<String>>,
    /// A label matching `^[a-z][a-z0-9_-]{0,31}$` (absent: `review`).
    pub task_type: Option<String>,
    /// What the target needs to know, at most 8 KiB (absent: empty).
    pub context_summary: Option<String>,
    /// A JSON Schema the structured result must satisfy (draft 4, 6, 7, 2019-09 or 2020-12; at most
    /// 16 KiB; no external `$ref`).
    pub contract_schema: Option<Map<String, Value>>,
    /// The lease a claim gets, whole seconds from 1 minute to 24 hours (absent: the configured
    /// default, 30 minutes unless changed).
    pub exec_ttl: Option<Duration>,
    /// How long it may wait to be claimed, whole seconds from 1 minute to 7 days (absent: the
    /// configured default, 4 hours unless changed).
    pub queue_ttl: Option<Duration>,
    /// A retry key (1 to 128 printable ASCII characters without spaces): a second dispatch by the
    /// same requester with the same key and arguments answers the first contract again.
    pub idempotency_key: Option<String>,
    /// Claims the contract may get before a lost lease ends it, 1 to 10 (absent: 1); a lost lease
    /// with claims left returns it to the queue after a backoff.
    pub max_deliveries: Option<u32>,
}

impl DispatchRequest {
    /// A dispatch from `requester_agent` to `target_agent` with `title` and `workspace_root`, every
    /// optional part absent.
    pub fn new(
        requester_agent: AgentId,
        target_agent: AgentId,
        title: impl Into<String>,
        workspace_root: impl Into<PathBuf>,
    ) -> Self {
        DispatchRequest {
            requester_agent,
            target_agent,
            title: title.into(),
            workspace_root: workspace_root.into(),
            pointers: None,
            task_type: None,
            context_summary: None,
            contract_schema: None,
            exec_ttl: None,
            queue_ttl: None,
            idempotency_key: None,
            max_deliveries: None,
        }
    }

    /// With the files to pin.
    pub fn pointers<I, S>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.pointers = Some(paths.into_iter().map(Into::into).collect());
        self
    }

    /// With a task type.
    pub fn task_type(mut self, task_type: impl Into<String>) -> Self {
        self.task_type = Some(task_type.into());
        self
    }

    /// With a context summary.
    pub fn context_summary(mut self, summary: impl Into<String>) -> Self {
        self.context_summary = Some(summary.into());
        self
    }

    /// With a result schema (a JSON object).
    pub fn contract_schema(mut self, schema: Map<String, Value>) -> Self {
        self.contract_schema = Some(schema);
        self
    }

    /// With a lease length.
    pub fn exec_ttl(mut self, ttl: Duration) -> Self {
        self.exec_ttl = Some(ttl);
        self
    }

    /// With a queue window.
    pub fn queue_ttl(mut self, ttl: Duration) -> Self {
        self.queue_ttl = Some(ttl);
        self
    }

    /// With a retry key.
    pub fn idempotency_key(mut self, key: impl Into<String>) -> Self {
        self.idempotency_key = Some(key.into());
        self
    }

    /// With a number of deliveries.
    pub fn max_deliveries(mut self, deliveries: u32) -> Self {
        self.max_deliveries = Some(deliveries);
        self
    }
}

/// Who makes a holder call (extend, release, fail, fulfil) and on which claim. A poll's claim gives
/// it: [`crate::views::HeldContract::holder`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolderRef {
    /// The contract.
    pub contract_id: ContractId,
    /// The caller: it must be the contract's target.
    pub agent_id: AgentId,
    /// The claim's epoch, the fencing token a poll returned; a call with another epoch is refused
    /// `STALE_EPOCH`. Without one the call is checked by identity only (and warned
    /// `EPOCH_NOT_SUPPLIED`), unless the facade requires it.
    pub claim_epoch: Option<u64>,
}

impl HolderRef {
    /// `agent_id` acting on the claim `claim_epoch` of `contract_id`.
    pub fn new(contract_id: ContractId, agent_id: AgentId, claim_epoch: u64) -> HolderRef {
        HolderRef {
            contract_id,
            agent_id,
            claim_epoch: Some(claim_epoch),
        }
    }
}

/// What [`crate::Contracts::fulfill_contract`] delivers: a summary, a structured result (checked
/// against the contract's result schema), and files the holder produced.
///
/// ```
/// use shiftwork_contracts::FulfillRequest;
/// #[derive(serde::Serialize)]
/// struct Review { verdict: &'static str, issues: u32 }
/// let delivery = FulfillRequest::new("Looks right.")
///     .output(&Review { verdict: "approve", issues: 0 }).unwrap()
///     .artifacts(["review.md"]);
/// assert_eq!(delivery.structured_output.unwrap()["verdict"], "approve");
/// assert!(FulfillRequest::new("x").output(&42).is_err(), "a result is a JSON object");
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FulfillRequest {
    /// The summary: 1 to 8,192 bytes, not blank.
    pub result_summary: String,
    /// The structured result, a JSON object of at most 32 KiB (the raw form of
    /// [`FulfillRequest::output`]).
    pub structured_output: Option<Map<String, Value>>,
    /// Paths of files the holder produced, relative to the workspace root (pinned by size and digest
    /// when the delivery is accepted).
    pub artifacts_pointers: Option<Vec<String>>,
}

impl FulfillRequest {
    /// A delivery of `result_summary` alone.
    pub fn new(result_summary: impl Into<String>) -> Self {
        FulfillRequest {
            result_summary: result_summary.into(),
            ..FulfillRequest::default()
        }
    }

    /// With `output`, any value that serializes to a JSON object, as the structured result; refused
    /// `INVALID_ARGUMENT { argument: "structured_output" }` when it serializes to something else or
    /// cannot be serialized.
    pub fn output<T: Serialize + ?Sized>(mut self, output: &T) -> Result<Self, ContractRefusal> {
        match serde_json::to_value(output) {
            Ok(Value::Object(map)) => {
                self.structured_output = Some(map);
                Ok(self)
            }
            Ok(_) => Err(ContractRefusal::invalid_argument(
                "structured_output",
                "structured_output must be a JSON object.",
            )),
            Err(e) => Err(ContractRefusal::invalid_argument(
                "structured_output",
                format!("structured_output could not be written as JSON: {e}."),
            )),
        }
    }

    /// With the files the holder produced.
    pub fn artifacts<I, S>(mut self, paths: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.artifacts_pointers = Some(paths.into_iter().map(Into::into).collect());
        self
    }
}

/// What [`crate::Contracts::inspect`] reads: filters (all optional), and a page position.
///
/// ```
/// use shiftwork_contracts::{InspectRequest, Status};
/// let waiting = InspectRequest { status: Some(vec![Status::Submitted, Status::Claimed]), ..InspectRequest::default() };
/// assert_eq!(waiting.limit, None);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InspectRequest {
    /// Only contracts addressed to this agent.
    pub target_agent: Option<AgentId>,
    /// Only contracts dispatched by this agent.
    pub requester_agent: Option<AgentId>,
    /// Only contracts in one of these states (1 to 7 distinct ones).
    pub status: Option<Vec<Status>>,
    /// Only this contract, in its detail view.
    pub contract_id: Option<ContractId>,
    /// Page size, 1 to 50 (absent: 20).
    pub limit: Option<usize>,
    /// A `next_cursor` from an earlier page with the same filters.
    pub cursor: Option<String>,
    /// Give the full detail without the 64 KiB bound of a tool answer (library only).
    pub unbounded: bool,
}

fn is_control(ch: char) -> bool {
    matches!(ch as u32, 0x00..=0x1F | 0x7F..=0x9F)
}

/// The JSON Pointer of the first string or key of `value` that holds the NUL character, if any.
/// Every store must keep what any store accepts, and PostgreSQL text and JSON cannot hold NUL;
/// walked without recursion.
pub fn nul_in_json(value: &Value) -> Option<String> {
    let mut stack: Vec<(String, &Value)> = vec![(String::new(), value)];
    while let Some((at, v)) = stack.pop() {
        match v {
            Value::String(s) if s.contains('\0') => return Some(at),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate().rev() {
                    stack.push((format!("{at}/{i}"), item));
                }
            }
            Value::Object(map) => {
                for (k, item) in map.iter().rev() {
                    let path = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                    if k.contains('\0') {
                        return Some(path);
                    }
                    stack.push((path, item));
                }
            }
            _ => {}
        }
    }
    None
}

/// The workspace root as the text a store keeps: refused when it is not UTF-8.
pub(crate) fn workspace_root(root: &Path) -> Result<&str, ContractRefusal> {
    root.to_str().ok_or_else(|| {
        ContractRefusal::invalid_argument(
            "workspace_root",
            format!(
                "workspace_root must be UTF-8 text, which {} is not.",
                shiftwork_seams::echo::echo(&root.to_string_lossy())
            ),
        )
    })
}

/// Refuses a stored text argument holding the NUL character (see [`nul_in_json`]).
fn no_nul(argument: &str, value: &str) -> Result<(), ContractRefusal> {
    if value.contains('\0') {
        return Err(ContractRefusal::invalid_argument(
            argument,
            format!(
                "{argument} must not contain the NUL character (U+0000), which a contract store cannot keep."
            ),
        ));
    }
    Ok(())
}

/// An `AgentId` argument.
pub fn agent(argument: &str, value: &str) -> Result<AgentId, ContractRefusal> {
    AgentId::new(value).map_err(|_| {
        ContractRefusal::invalid_argument(
            argument,
            format!("{argument} must be 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit."),
        )
    })
}

/// A `title`: 1–200 characters, one non-whitespace, no control characters.
pub fn title(value: &str) -> Result<(), ContractRefusal> {
    let n = value.chars().count();
    if n == 0 || n > MAX_TITLE_CHARS || value.trim().is_empty() || value.chars().any(is_control) {
        return Err(ContractRefusal::invalid_argument(
            "title",
            format!(
                "title must be 1 to {MAX_TITLE_CHARS} characters, not blank, without control characters."
            ),
        ));
    }
    Ok(())
}

/// A `task_type`: `^[a-z][a-z0-9_-]{0,31}$`.
pub fn task_type(value: &str) -> Result<(), ContractRefusal> {
    let b = value.as_bytes();
    let ok = (1..=32).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'));
    if !ok {
        return Err(ContractRefusal::invalid_argument(
            "task_type",
            "task_type must match ^[a-z][a-z0-9_-]{0,31}$ (for example review, audit, implementation, test).",
        ));
    }
    Ok(())
}

/// A `context_summary`: at most 8,192 bytes; no control characters other than TAB, LF, CR.
pub fn context_summary(value: &str) -> Result<(), ContractRefusal> {
    if value.len() > MAX_CONTEXT_SUMMARY_BYTES
        || value
            .chars()
            .any(|c| is_control(c) && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(ContractRefusal::invalid_argument(
            "context_summary",
            format!(
                "context_summary must be at most {MAX_CONTEXT_SUMMARY_BYTES} bytes, without control characters other than TAB, LF and CR."
            ),
        ));
    }
    Ok(())
}

/// A window in whole seconds within `[min, max]`.
pub fn ttl(argument: &str, value: i64, min: u32, max: u32) -> Result<u32, ContractRefusal> {
    u32::try_from(value)
        .ok()
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| {
            ContractRefusal::invalid_argument(
                argument,
                format!("{argument} must be an integer from {min} to {max}."),
            )
        })
}

/// A window given as a [`Duration`]: whole seconds within `[min, max]`, refused with the sentence of
/// [`ttl`].
pub fn ttl_duration(argument: &str, value: Duration, min: u32, max: u32) -> Result<u32, ContractRefusal> {
    if value.subsec_nanos() != 0 {
        return ttl(argument, -1, min, max);
    }
    ttl(
        argument,
        i64::try_from(value.as_secs()).unwrap_or(i64::MAX),
        min,
        max,
    )
}

/// An `idempotency_key`: 1–128 characters, each `0x21`–`0x7E`.
pub fn idempotency_key(value: &str) -> Result<(), ContractRefusal> {
    let b = value.as_bytes();
    if b.is_empty() || b.len() > MAX_IDEMPOTENCY_KEY_CHARS || !b.iter().all(|c| (0x21..=0x7E).contains(c)) {
        return Err(ContractRefusal::invalid_argument(
            "idempotency_key",
            format!(
                "idempotency_key must be 1 to {MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces."
            ),
        ));
    }
    Ok(())
}

/// A `contract_id` argument: 1 to 64 characters, lowercased ([`ContractId::parse`]).
pub fn contract_id(value: &str) -> Result<ContractId, ContractRefusal> {
    ContractId::parse(value).map_err(|_| {
        ContractRefusal::invalid_argument(
            "contract_id",
            "contract_id must be 1 to 64 characters (a contract id from dispatch_contract).",
        )
    })
}

pub use crate::limits::MAX_CLAIM_EPOCH as MAX_EPOCH;

/// A `claim_epoch`: 1 to 2^53 − 1 (an integer every JSON reader keeps exactly).
pub fn claim_epoch(value: u64) -> Result<u64, ContractRefusal> {
    if !(1..=MAX_EPOCH).contains(&value) {
        return Err(ContractRefusal::invalid_argument(
            "claim_epoch",
            format!(
                "claim_epoch must be an integer from 1 to {MAX_EPOCH} (the value poll_next_task returned)."
            ),
        ));
    }
    Ok(value)
}

/// A `max_deliveries`: 1 to 10.
pub fn max_deliveries(value: i64) -> Result<u32, ContractRefusal> {
    u32::try_from(value)
        .ok()
        .filter(|v| (1..=MAX_DELIVERIES).contains(v))
        .ok_or_else(|| {
            ContractRefusal::invalid_argument(
                "max_deliveries",
                format!("max_deliveries must be an integer from 1 to {MAX_DELIVERIES}."),
            )
        })
}

/// A `wait_sec`: 0 to 60.
pub fn wait_sec(value: i64) -> Result<u32, ContractRefusal> {
    u32::try_from(value)
        .ok()
        .filter(|v| *v <= MAX_WAIT_SEC)
        .ok_or_else(|| {
            ContractRefusal::invalid_argument(
                "wait_sec",
                format!("wait_sec must be an integer from 0 to {MAX_WAIT_SEC}."),
            )
        })
}

/// A cancel `reason`: 1 to 2,000 characters, no NUL.
pub fn cancel_reason(value: &str) -> Result<(), ContractRefusal> {
    let n = value.chars().count();
    if n == 0 || n > MAX_CANCEL_REASON_CHARS {
        return Err(ContractRefusal::invalid_argument(
            "reason",
            format!("reason must be 1 to {MAX_CANCEL_REASON_CHARS} characters."),
        ));
    }
    no_nul("reason", value)
}

/// A release `reason`: at most 1,000 characters, no NUL.
pub fn release_reason(value: &str) -> Result<(), ContractRefusal> {
    if value.chars().count() > MAX_REASON_CHARS {
        return Err(ContractRefusal::invalid_argument(
            "reason",
            format!("reason must be at most {MAX_REASON_CHARS} characters."),
        ));
    }
    no_nul("reason", value)
}

/// A fail `reason`: 1–1,000 characters, one non-whitespace, no NUL.
pub fn fail_reason(value: &str) -> Result<(), ContractRefusal> {
    if value.chars().count() > MAX_REASON_CHARS || value.trim().is_empty() {
        return Err(ContractRefusal::invalid_argument(
            "reason",
            format!("reason must be 1 to {MAX_REASON_CHARS} characters and not blank."),
        ));
    }
    no_nul("reason", value)
}

/// A `result_summary`: 1–8,192 bytes, one non-whitespace, no NUL.
pub fn result_summary(value: &str) -> Result<(), ContractRefusal> {
    if value.is_empty() || value.len() > MAX_RESULT_SUMMARY_BYTES || value.trim().is_empty() {
        return Err(ContractRefusal::invalid_argument(
            "result_summary",
            format!("result_summary must be 1 to {MAX_RESULT_SUMMARY_BYTES} bytes and not blank."),
        ));
    }
    no_nul("result_summary", value)
}

/// A `structured_output`: at most 32 KiB of compact JSON, no NUL in a string or a key.
pub fn structured_output(value: &Map<String, Value>) -> Result<(), ContractRefusal> {
    let size = serde_json::to_vec(value).map(|v| v.len()).unwrap_or(usize::MAX);
    if size > MAX_STRUCTURED_OUTPUT_BYTES {
        return Err(ContractRefusal::invalid_argument(
            "structured_output",
            format!("structured_output must be at most {MAX_STRUCTURED_OUTPUT_BYTES} bytes of compact JSON."),
        ));
    }
    if let Some(at) = nul_in_json(&Value::Object(value.clone())) {
        return Err(ContractRefusal::invalid_argument(
            "structured_output",
            format!(
                "structured_output must not contain the NUL character (U+0000), which a contract store cannot keep (at {}).",
                shiftwork_seams::echo::clip_echo(if at.is_empty() { "(root)" } else { &at })
            ),
        ));
    }
    Ok(())
}

const STATUSES_RULE: &str = "status must be one of SUBMITTED, CLAIMED, COMPLETED, FAILED, TIMED_OUT, POINTER_STALE, CANCELLED, or an array of 1 to 7 distinct ones.";

/// A `status` filter given by name: 1 to 7 distinct status names.
pub fn status_names(values: &[String]) -> Result<Vec<Status>, ContractRefusal> {
    let parsed = values
        .iter()
        .map(|v| Status::parse(v))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| ContractRefusal::invalid_argument("status", STATUSES_RULE))?;
    statuses(&parsed)?;
    Ok(parsed)
}

/// A `status` filter: 1 to 7 distinct statuses.
pub fn statuses(values: &[Status]) -> Result<(), ContractRefusal> {
    let distinct = values.iter().enumerate().all(|(i, s)| !values[..i].contains(s));
    if values.is_empty() || values.len() > Status::ALL.len() || !distinct {
        return Err(ContractRefusal::invalid_argument("status", STATUSES_RULE));
    }
    Ok(())
}

/// An inspect `limit`: 1 to 50.
pub fn limit(value: i64) -> Result<usize, ContractRefusal> {
    usize::try_from(value)
        .ok()
        .filter(|v| (1..=INSPECT_MAX_LIMIT).contains(v))
        .ok_or_else(|| {
            ContractRefusal::invalid_argument(
                "limit",
                format!("limit must be an integer from 1 to {INSPECT_MAX_LIMIT}."),
            )
        })
}
