//! The data model of spec §2: scalar types, the contract record and its parts.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// An instant: milliseconds since 1970-01-01T00:00:00Z (CT-3).
pub type EpochMs = i64;

/// A self-declared agent name (CT-17): 1–64 characters of `[A-Za-z0-9._@:-]`, starting alphanumeric.
///
/// ```
/// use shiftwork_contracts::AgentId;
/// assert!(AgentId::parse("claude-main").is_some());
/// assert!(AgentId::parse("bad name").is_none());
/// assert!(AgentId::parse("-x").is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct AgentId(String);

impl AgentId {
    /// The identity if `text` follows the grammar of CT-17.
    pub fn parse(text: &str) -> Option<AgentId> {
        let bytes = text.as_bytes();
        let valid = (1..=64).contains(&bytes.len())
            && bytes[0].is_ascii_alphanumeric()
            && bytes
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'@' | b':' | b'-'));
        valid.then(|| AgentId(text.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for AgentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A contract's state (CT-19).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Status {
    /// Waiting in the queue.
    Submitted,
    /// Held by its target under a lease.
    Claimed,
    /// Fulfilled.
    Completed,
    /// Failed by the holder or by the schema circuit breaker.
    Failed,
    /// A window passed.
    TimedOut,
    /// Its files changed.
    PointerStale,
    /// Withdrawn by its requester (CT-184).
    Cancelled,
}

impl Status {
    /// Every status, in the order of CT-19, then `CANCELLED` (CT-184).
    pub const ALL: [Status; 7] = [
        Status::Submitted,
        Status::Claimed,
        Status::Completed,
        Status::Failed,
        Status::TimedOut,
        Status::PointerStale,
        Status::Cancelled,
    ];

    /// The wire name (`SUBMITTED`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Submitted => "SUBMITTED",
            Status::Claimed => "CLAIMED",
            Status::Completed => "COMPLETED",
            Status::Failed => "FAILED",
            Status::TimedOut => "TIMED_OUT",
            Status::PointerStale => "POINTER_STALE",
            Status::Cancelled => "CANCELLED",
        }
    }

    /// The status named `text` (exact wire name).
    pub fn parse(text: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.as_str() == text)
    }

    /// `SUBMITTED` or `CLAIMED`.
    pub fn is_live(self) -> bool {
        matches!(self, Status::Submitted | Status::Claimed)
    }

    /// One of the terminal states.
    pub fn is_terminal(self) -> bool {
        !self.is_live()
    }
}

/// Why a terminal contract ended (CT-20).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EndReason {
    /// U1.
    Fulfilled,
    /// F1.
    WorkerFailed,
    /// U5.
    SchemaRetriesExhausted,
    /// E1.
    QueueTtlExpired,
    /// E2.
    ExecTtlExpired,
    /// C2.
    PointerDriftAtClaim,
    /// U3.
    PointerDriftAtFulfill,
    /// K1, K2.
    CancelledByRequester,
}

impl EndReason {
    /// Every end reason.
    pub const ALL: [EndReason; 8] = [
        EndReason::Fulfilled,
        EndReason::WorkerFailed,
        EndReason::SchemaRetriesExhausted,
        EndReason::QueueTtlExpired,
        EndReason::ExecTtlExpired,
        EndReason::PointerDriftAtClaim,
        EndReason::PointerDriftAtFulfill,
        EndReason::CancelledByRequester,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Fulfilled => "FULFILLED",
            EndReason::WorkerFailed => "WORKER_FAILED",
            EndReason::SchemaRetriesExhausted => "SCHEMA_RETRIES_EXHAUSTED",
            EndReason::QueueTtlExpired => "QUEUE_TTL_EXPIRED",
            EndReason::ExecTtlExpired => "EXEC_TTL_EXPIRED",
            EndReason::PointerDriftAtClaim => "POINTER_DRIFT_AT_CLAIM",
            EndReason::PointerDriftAtFulfill => "POINTER_DRIFT_AT_FULFILL",
            EndReason::CancelledByRequester => "CANCELLED_BY_REQUESTER",
        }
    }

    /// The end reason named `text`.
    pub fn parse(text: &str) -> Option<EndReason> {
        EndReason::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

/// Why a pointer no longer matches its baseline (CT-21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DriftReason {
    /// No readable regular file at the path.
    FileMissing,
    /// The size differs.
    SizeMismatch,
    /// Same size, different digest.
    ContentChanged,
    /// The path now resolves outside the root or to a sensitive file.
    PathRefused,
}

impl DriftReason {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftReason::FileMissing => "FILE_MISSING",
            DriftReason::SizeMismatch => "SIZE_MISMATCH",
            DriftReason::ContentChanged => "CONTENT_CHANGED",
            DriftReason::PathRefused => "PATH_REFUSED",
        }
    }
}

/// One pinned file (CT-23).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pointer {
    /// Normalized relative path with `/` separators.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the content, 64 lowercase hex digits.
    pub sha256: String,
    /// The first line, at most 120 characters (informational).
    pub first_line: String,
    /// The last line, at most 120 characters (informational).
    pub last_line: String,
}

/// One pointer that no longer matches its baseline (CT-24).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Drift {
    /// The pointer's path.
    pub path: String,
    /// Why it drifted.
    pub reason: DriftReason,
    /// The baseline size.
    pub expected_size: u64,
    /// The size found, or `None` when there is no readable regular file.
    pub actual_size: Option<u64>,
    /// What to do about it (CT-43).
    pub hint: String,
}

/// A delivery that was not accepted when the contract ended on it (CT-25).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SalvagedResult {
    /// The delivered summary.
    pub result_summary: String,
    /// The delivered structured output.
    pub structured_output: Option<Map<String, Value>>,
    /// The delivered artifacts' fingerprints.
    pub artifacts_pointers: Vec<Pointer>,
}

/// The contract record (CT-22). Every field is public so that stores can persist it; the transition
/// functions of [`crate::transition`] are the only code that computes a successor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contract {
    /// Store-assigned insertion number.
    pub seq: i64,
    /// Public identifier (UUIDv7, lowercase).
    pub contract_id: String,
    /// Who dispatched it.
    pub requester_agent: AgentId,
    /// The only agent that may claim and hold it.
    pub target_agent: AgentId,
    /// The caller's retry key.
    pub idempotency_key: Option<String>,
    /// Fingerprint of the dispatch arguments (CT-63).
    pub payload_sha256: String,
    /// Free label.
    pub task_type: String,
    /// One-line title.
    pub title: String,
    /// What the target needs to know.
    pub context_summary: String,
    /// Canonical absolute path of the workspace root.
    pub workspace_root: String,
    /// The baseline.
    pub pointers: Vec<Pointer>,
    /// JSON Schema for `structured_output`.
    pub contract_schema: Option<Map<String, Value>>,
    /// Execution window length.
    pub exec_ttl_sec: u32,
    /// Queue window length.
    pub queue_ttl_sec: u32,
    /// Current state.
    pub status: Status,
    /// Dispatch instant.
    pub created_at: EpochMs,
    /// Instant it last entered the queue.
    pub queued_at: EpochMs,
    /// Queue deadline of the latest queueing.
    pub queue_expires_at: EpochMs,
    /// The lifetime ceiling.
    pub lifetime_ends_at: EpochMs,
    /// Start of the current execution window.
    pub claimed_at: Option<EpochMs>,
    /// Lease deadline.
    pub expires_at: Option<EpochMs>,
    /// Instant it became terminal.
    pub completed_at: Option<EpochMs>,
    /// Claims so far; the fencing token.
    pub claim_epoch: u64,
    /// Renewals used by the current holder.
    pub extend_count: u32,
    /// Releases over the contract's life.
    pub release_count: u32,
    /// Schema-invalid deliveries over the contract's life.
    pub retry_count: u32,
    /// Dirty deliveries under the current claim.
    pub toctou_strikes: u32,
    /// Why it ended.
    pub end_reason: Option<EndReason>,
    /// Drift found by the latest verification that changed state.
    pub dirty_files: Option<Vec<Drift>>,
    /// History, newest entry first (CT-26).
    pub error_reason: Option<String>,
    /// The reason the holder gave to `fail_contract`.
    pub fail_reason: Option<String>,
    /// Delivered summary.
    pub result_summary: Option<String>,
    /// Delivered structured result.
    pub structured_output: Option<Map<String, Value>>,
    /// Fingerprints of files the holder produced.
    pub artifacts_pointers: Option<Vec<Pointer>>,
    /// The delivery that was not accepted when the contract ended on it.
    pub salvaged_result: Option<SalvagedResult>,
    /// Claims a contract may get before a lost lease ends it (CT-186: 1 to 10, default 1).
    pub max_deliveries: u32,
    /// Claims so far (CT-186); a reverted claim (C3) does not count.
    pub delivery_count: u32,
    /// Before this instant the contract is not claimable, even though `SUBMITTED` (CT-186).
    pub available_at: Option<EpochMs>,
    /// The reason its requester gave to `cancel_contract` (CT-185).
    pub cancel_reason: Option<String>,
}

impl Contract {
    /// True when the contract may be claimed at `now` by its target (C1's guards but the order).
    pub fn is_claimable(&self, now: EpochMs) -> bool {
        self.status == Status::Submitted
            && now < self.queue_expires_at
            && self.available_at.is_none_or(|at| at <= now)
    }

    /// True when the contract is past its deadline at `now` but not yet terminal in storage (CT-45).
    pub fn is_logically_expired(&self, now: EpochMs) -> bool {
        match self.status {
            Status::Submitted => now >= self.queue_expires_at,
            Status::Claimed => self.expires_at.is_some_and(|e| now >= e),
            _ => false,
        }
    }
}

/// A warning attached to a successful reply (CT-80).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// `LARGE_POINTER`, `EPOCH_NOT_SUPPLIED` or `NO_IDENTITY`.
    pub code: String,
    /// One sentence.
    pub message: String,
}

impl Warning {
    pub(crate) fn epoch_not_supplied(contract_id: &str) -> Warning {
        Warning {
            code: String::from("EPOCH_NOT_SUPPLIED"),
            message: format!(
                "No claim_epoch was given for contract {contract_id}, so the call was checked by agent identity only; pass the claim_epoch from poll_next_task."
            ),
        }
    }
}
