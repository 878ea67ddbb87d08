//! The typed requests of the facade and the argument rules of §7.2 (CT-87, CT-88, CT-95 … CT-117).
//!
//! The rules live here, once: the facade checks every request with them, and [`crate::args`] runs
//! the same checks while decoding tool arguments, in each tool's table order.

use serde_json::{Map, Value};

use crate::error::{Refusal, RefusalCode};
use crate::limits::*;
use crate::model::{AgentId, Status};

/// The identity an embedder gives every absent identity argument (CT-88: the adapter's `--agent` /
/// `AGENT_NAME`), parsed once when it is configured.
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
            Some(v) => AgentId::parse(v).map_or(DefaultAgent::Invalid { source }, DefaultAgent::Valid),
        }
    }
}

/// An identity argument (CT-88), parsed once: the caller's, the embedder's default, or none.
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
    /// use shiftwork_contracts::{AgentId, DefaultAgent, Identity, RefusalCode};
    /// let carol = DefaultAgent::Authenticated(AgentId::parse("carol").unwrap());
    /// let mallory = AgentId::parse("mallory").unwrap();
    /// let refused = Identity::checked("agent_id", Some(mallory), &carol).unwrap_err();
    /// assert_eq!(refused.code, RefusalCode::IdentityMismatch);
    /// assert_eq!(refused.message, "agent_id names mallory, but this caller authenticated as carol: an agent acts only as itself.");
    /// assert_eq!(Identity::checked("agent_id", None, &carol), Ok(Identity::Default(AgentId::parse("carol").unwrap())));
    /// ```
    pub fn checked(
        argument: &str,
        given: Option<AgentId>,
        default: &DefaultAgent,
    ) -> Result<Identity, Refusal> {
        match (given, default) {
            (Some(given), DefaultAgent::Authenticated(who)) if &given != who => Err(Refusal::new(
                RefusalCode::IdentityMismatch,
                format!(
                    "{argument} names {given}, but this caller authenticated as {who}: an agent acts only as itself."
                ),
                vec![
                    ("argument", serde_json::json!(argument)),
                    ("given", serde_json::json!(given.as_str())),
                    ("authenticated", serde_json::json!(who.as_str())),
                ],
            )),
            (Some(given), _) => Ok(Identity::Given(given)),
            (None, default) => Ok(Identity::from_default(default)),
        }
    }

    /// The identity `text` when it follows the grammar of CT-17.
    ///
    /// ```
    /// use shiftwork_contracts::Identity;
    /// assert!(Identity::given("bob").is_some());
    /// assert!(Identity::given("bad name").is_none());
    /// ```
    pub fn given(text: &str) -> Option<Identity> {
        AgentId::parse(text).map(Identity::Given)
    }

    /// An absent argument resolved against the embedder's default.
    pub fn from_default(default: &DefaultAgent) -> Identity {
        match default {
            DefaultAgent::Unset => Identity::Missing,
            DefaultAgent::Valid(a) | DefaultAgent::Authenticated(a) => Identity::Default(a.clone()),
            DefaultAgent::Invalid { source } => Identity::InvalidDefault { source },
        }
    }

    /// The identity, or `AGENT_ID_REQUIRED` / `INVALID_ARGUMENT { argument: <source> }`.
    pub(crate) fn resolve(&self, argument: &str) -> Result<AgentId, Refusal> {
        match self.resolve_optional()? {
            Some(a) => Ok(a),
            None => Err(Refusal::new(
                RefusalCode::AgentIdRequired,
                format!("{argument} is required: pass it, or give the server a default agent identity."),
                Vec::new(),
            )),
        }
    }

    /// Like [`Identity::resolve`], but `Missing` is `None` (verify, CT-71).
    pub(crate) fn resolve_optional(&self) -> Result<Option<AgentId>, Refusal> {
        match self {
            Identity::Given(a) | Identity::Default(a) => Ok(Some(a.clone())),
            Identity::InvalidDefault { source } => Err(Refusal::invalid_argument(
                source,
                format!(
                    "{source}, the default agent identity, is not a valid agent id: use 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit."
                ),
            )),
            Identity::Missing => Ok(None),
        }
    }
}

/// `dispatch_contract`'s arguments (CT-95), as supplied. [`DispatchRequest::new`] gives the three
/// required ones and leaves every other absent.
#[derive(Debug, Clone, PartialEq)]
pub struct DispatchRequest {
    /// The target agent.
    pub target_agent: AgentId,
    /// The title.
    pub title: String,
    /// The workspace root.
    pub workspace_root: String,
    /// Pointer paths (absent: none).
    pub pointers: Option<Vec<String>>,
    /// Task type (absent: `review`).
    pub task_type: Option<String>,
    /// Context summary (absent: empty).
    pub context_summary: Option<String>,
    /// JSON Schema of the structured result.
    pub contract_schema: Option<Map<String, Value>>,
    /// Execution TTL in seconds (absent: the configured default).
    pub exec_ttl_sec: Option<i64>,
    /// Queue TTL in seconds (absent: the configured default).
    pub queue_ttl_sec: Option<i64>,
    /// Retry key.
    pub idempotency_key: Option<String>,
    /// The requester (absent: [`Identity::Missing`]).
    pub requester_agent: Identity,
    /// Claims the contract may get before a lost lease ends it (absent: 1, CT-186).
    pub max_deliveries: Option<i64>,
}

impl DispatchRequest {
    /// A dispatch to `target_agent` with `title` and `workspace_root`, every optional argument absent
    /// and no requester identity.
    ///
    /// ```
    /// use shiftwork_contracts::{AgentId, DispatchRequest, Identity};
    /// let bob = AgentId::parse("bob").unwrap();
    /// let req = DispatchRequest {
    ///     pointers: Some(vec!["src/lib.rs".into()]),
    ///     requester_agent: Identity::given("alice").unwrap(),
    ///     ..DispatchRequest::new(bob, "Review add()", "/work")
    /// };
    /// assert_eq!(req.task_type, None);
    /// ```
    pub fn new(target_agent: AgentId, title: impl Into<String>, workspace_root: impl Into<String>) -> Self {
        DispatchRequest {
            target_agent,
            title: title.into(),
            workspace_root: workspace_root.into(),
            pointers: None,
            task_type: None,
            context_summary: None,
            contract_schema: None,
            exec_ttl_sec: None,
            queue_ttl_sec: None,
            idempotency_key: None,
            requester_agent: Identity::Missing,
            max_deliveries: None,
        }
    }
}

/// The caller of a holder operation (CT-58).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HolderRef {
    /// The contract (any case; lowercased before lookup).
    pub contract_id: String,
    /// The caller.
    pub agent_id: Identity,
    /// The caller's epoch, if given.
    pub claim_epoch: Option<u64>,
}

/// What `fulfill_contract` delivers (CT-110).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FulfillRequest {
    /// The summary.
    pub result_summary: String,
    /// The structured result.
    pub structured_output: Option<Map<String, Value>>,
    /// Paths of files the holder produced.
    pub artifacts_pointers: Option<Vec<String>>,
}

/// `inspect_mesh_state`'s arguments (CT-117).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InspectRequest {
    /// Filter by target.
    pub target_agent: Option<AgentId>,
    /// Filter by requester.
    pub requester_agent: Option<AgentId>,
    /// Filter by status (one or a set).
    pub status: Option<Vec<String>>,
    /// Filter by id.
    pub contract_id: Option<String>,
    /// Page size (absent: 20).
    pub limit: Option<i64>,
    /// A `next_cursor` from an earlier page.
    pub cursor: Option<String>,
    /// Give the full record without the 64 KiB bound (library only, CT-75).
    pub unbounded: bool,
}

fn is_control(ch: char) -> bool {
    matches!(ch as u32, 0x00..=0x1F | 0x7F..=0x9F)
}

/// The JSON Pointer of the first string or key of `value` that holds the NUL character, if any.
/// Every store must keep what any store accepts (issue 27), and PostgreSQL text and JSON cannot hold
/// NUL; walked without recursion.
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

/// Refuses a stored text argument holding the NUL character (see [`nul_in_json`]).
fn no_nul(argument: &str, value: &str) -> Result<(), Refusal> {
    if value.contains('\0') {
        return Err(Refusal::invalid_argument(
            argument,
            format!(
                "{argument} must not contain the NUL character (U+0000), which a contract store cannot keep."
            ),
        ));
    }
    Ok(())
}

/// An `AgentId` argument.
pub fn agent(argument: &str, value: &str) -> Result<AgentId, Refusal> {
    AgentId::parse(value).ok_or_else(|| {
        Refusal::invalid_argument(
            argument,
            format!("{argument} must be 1 to 64 of A-Z a-z 0-9 . _ @ : -, starting with a letter or digit."),
        )
    })
}

/// A `title`: 1–200 characters, one non-whitespace, no control characters.
pub fn title(value: &str) -> Result<(), Refusal> {
    let n = value.chars().count();
    if n == 0 || n > MAX_TITLE_CHARS || value.trim().is_empty() || value.chars().any(is_control) {
        return Err(Refusal::invalid_argument(
            "title",
            format!(
                "title must be 1 to {MAX_TITLE_CHARS} characters, not blank, without control characters."
            ),
        ));
    }
    Ok(())
}

/// A `task_type`: `^[a-z][a-z0-9_-]{0,31}$`.
pub fn task_type(value: &str) -> Result<(), Refusal> {
    let b = value.as_bytes();
    let ok = (1..=32).contains(&b.len())
        && b[0].is_ascii_lowercase()
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'_' | b'-'));
    if !ok {
        return Err(Refusal::invalid_argument(
            "task_type",
            "task_type must match ^[a-z][a-z0-9_-]{0,31}$ (for example review, audit, implementation, test).",
        ));
    }
    Ok(())
}

/// A `context_summary`: at most 8,192 bytes; no control characters other than TAB, LF, CR.
pub fn context_summary(value: &str) -> Result<(), Refusal> {
    if value.len() > MAX_CONTEXT_SUMMARY_BYTES
        || value
            .chars()
            .any(|c| is_control(c) && !matches!(c, '\t' | '\n' | '\r'))
    {
        return Err(Refusal::invalid_argument(
            "context_summary",
            format!(
                "context_summary must be at most {MAX_CONTEXT_SUMMARY_BYTES} bytes, without control characters other than TAB, LF and CR."
            ),
        ));
    }
    Ok(())
}

/// A TTL in seconds within `[min, max]`.
pub fn ttl(argument: &str, value: i64, min: u32, max: u32) -> Result<u32, Refusal> {
    u32::try_from(value)
        .ok()
        .filter(|v| (min..=max).contains(v))
        .ok_or_else(|| {
            Refusal::invalid_argument(
                argument,
                format!("{argument} must be an integer from {min} to {max}."),
            )
        })
}

/// An `idempotency_key`: 1–128 characters, each `0x21`–`0x7E`.
pub fn idempotency_key(value: &str) -> Result<(), Refusal> {
    let b = value.as_bytes();
    if b.is_empty() || b.len() > MAX_IDEMPOTENCY_KEY_CHARS || !b.iter().all(|c| (0x21..=0x7E).contains(c)) {
        return Err(Refusal::invalid_argument(
            "idempotency_key",
            format!(
                "idempotency_key must be 1 to {MAX_IDEMPOTENCY_KEY_CHARS} printable ASCII characters without spaces."
            ),
        ));
    }
    Ok(())
}

/// A `contract_id` argument (CT-18): 1–64 characters; returned lowercased.
pub fn contract_id(value: &str) -> Result<String, Refusal> {
    let n = value.chars().count();
    if n == 0 || n > 64 {
        return Err(Refusal::invalid_argument(
            "contract_id",
            "contract_id must be 1 to 64 characters (a contract id from dispatch_contract).",
        ));
    }
    Ok(value.to_ascii_lowercase())
}

pub use crate::limits::MAX_CLAIM_EPOCH as MAX_EPOCH;

/// A `claim_epoch`: 1 ..= 2^53 − 1.
pub fn claim_epoch(value: u64) -> Result<u64, Refusal> {
    if !(1..=MAX_EPOCH).contains(&value) {
        return Err(Refusal::invalid_argument(
            "claim_epoch",
            format!(
                "claim_epoch must be an integer from 1 to {MAX_EPOCH} (the value poll_next_task returned)."
            ),
        ));
    }
    Ok(value)
}

/// A `max_deliveries`: 1 ..= 10 (CT-186).
pub fn max_deliveries(value: i64) -> Result<u32, Refusal> {
    u32::try_from(value)
        .ok()
        .filter(|v| (1..=MAX_DELIVERIES).contains(v))
        .ok_or_else(|| {
            Refusal::invalid_argument(
                "max_deliveries",
                format!("max_deliveries must be an integer from 1 to {MAX_DELIVERIES}."),
            )
        })
}

/// A `wait_sec`: 0 ..= 60 (CT-179).
pub fn wait_sec(value: i64) -> Result<u32, Refusal> {
    u32::try_from(value)
        .ok()
        .filter(|v| *v <= MAX_WAIT_SEC)
        .ok_or_else(|| {
            Refusal::invalid_argument(
                "wait_sec",
                format!("wait_sec must be an integer from 0 to {MAX_WAIT_SEC}."),
            )
        })
}

/// A cancel `reason`: 1 ..= 2,000 characters (CT-183), no NUL.
pub fn cancel_reason(value: &str) -> Result<(), Refusal> {
    let n = value.chars().count();
    if n == 0 || n > MAX_CANCEL_REASON_CHARS {
        return Err(Refusal::invalid_argument(
            "reason",
            format!("reason must be 1 to {MAX_CANCEL_REASON_CHARS} characters."),
        ));
    }
    no_nul("reason", value)
}

/// A release `reason`: at most 1,000 characters, no NUL.
pub fn release_reason(value: &str) -> Result<(), Refusal> {
    if value.chars().count() > MAX_REASON_CHARS {
        return Err(Refusal::invalid_argument(
            "reason",
            format!("reason must be at most {MAX_REASON_CHARS} characters."),
        ));
    }
    no_nul("reason", value)
}

/// A fail `reason`: 1–1,000 characters, one non-whitespace, no NUL.
pub fn fail_reason(value: &str) -> Result<(), Refusal> {
    if value.chars().count() > MAX_REASON_CHARS || value.trim().is_empty() {
        return Err(Refusal::invalid_argument(
            "reason",
            format!("reason must be 1 to {MAX_REASON_CHARS} characters and not blank."),
        ));
    }
    no_nul("reason", value)
}

/// A `result_summary`: 1–8,192 bytes, one non-whitespace, no NUL.
pub fn result_summary(value: &str) -> Result<(), Refusal> {
    if value.is_empty() || value.len() > MAX_RESULT_SUMMARY_BYTES || value.trim().is_empty() {
        return Err(Refusal::invalid_argument(
            "result_summary",
            format!("result_summary must be 1 to {MAX_RESULT_SUMMARY_BYTES} bytes and not blank."),
        ));
    }
    no_nul("result_summary", value)
}

/// A `structured_output`: at most 32 KiB of compact JSON, no NUL in a string or a key.
pub fn structured_output(value: &Map<String, Value>) -> Result<(), Refusal> {
    let size = serde_json::to_vec(value).map(|v| v.len()).unwrap_or(usize::MAX);
    if size > MAX_STRUCTURED_OUTPUT_BYTES {
        return Err(Refusal::invalid_argument(
            "structured_output",
            format!("structured_output must be at most {MAX_STRUCTURED_OUTPUT_BYTES} bytes of compact JSON."),
        ));
    }
    if let Some(at) = nul_in_json(&Value::Object(value.clone())) {
        return Err(Refusal::invalid_argument(
            "structured_output",
            format!(
                "structured_output must not contain the NUL character (U+0000), which a contract store cannot keep (at {}).",
                shiftwork_seams::echo::clip_echo(if at.is_empty() { "(root)" } else { &at })
            ),
        ));
    }
    Ok(())
}

/// A `status` filter: 1–6 distinct statuses.
pub fn statuses(values: &[String]) -> Result<Vec<Status>, Refusal> {
    let refuse = || {
        Refusal::invalid_argument(
            "status",
            "status must be one of SUBMITTED, CLAIMED, COMPLETED, FAILED, TIMED_OUT, POINTER_STALE, CANCELLED, or an array of 1 to 7 distinct ones.",
        )
    };
    if values.is_empty() || values.len() > Status::ALL.len() {
        return Err(refuse());
    }
    let mut out = Vec::new();
    for v in values {
        let s = Status::parse(v).ok_or_else(refuse)?;
        if out.contains(&s) {
            return Err(refuse());
        }
        out.push(s);
    }
    Ok(out)
}

/// An inspect `limit`: 1 ..= 50.
pub fn limit(value: i64) -> Result<usize, Refusal> {
    usize::try_from(value)
        .ok()
        .filter(|v| (1..=INSPECT_MAX_LIMIT).contains(v))
        .ok_or_else(|| {
            Refusal::invalid_argument(
                "limit",
                format!("limit must be an integer from 1 to {INSPECT_MAX_LIMIT}."),
            )
        })
}
