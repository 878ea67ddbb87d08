//! The data model: agent and contract ids, states, the contract record and its parts.
//!
//! Instants: the facade speaks [`chrono::DateTime<Utc>`] and [`std::time::Duration`]; the record a
//! store keeps ([`Contract`]) holds instants as [`EpochMs`], milliseconds since 1970-01-01 UTC, the
//! form both SQL stores and the tool answers use; [`instant`] turns one into a `DateTime`.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who an agent is: the family's one agent id ([`shiftwork_seams::agent::AgentId`]), shared with
/// `shiftwork-core`'s clock-out and the MCP server's credentials.
///
/// ```
/// use shiftwork_contracts::{AgentId, AgentIdError};
/// assert_eq!(AgentId::new("bob.smith").unwrap().as_str(), "bob.smith");
/// assert_eq!(AgentId::new("-x"), Err(AgentIdError::BadStart { found: '-' }));
/// ```
pub use shiftwork_seams::agent::{AgentId, AgentIdError};

/// An instant as a store keeps it and a tool answer writes it: milliseconds since
/// 1970-01-01T00:00:00Z, truncated from the clock's reading. The facade's own inputs and outputs are
/// [`DateTime<Utc>`]; this is the storage and wire form (the [`crate::Store`] trait, [`Contract`],
/// the pure [`crate::transition`] functions).
pub type EpochMs = i64;

/// The instant `ms` milliseconds after 1970-01-01 UTC; a value beyond what a `DateTime` holds (about
/// 262,000 years either way, which no record written by this crate reaches) is the nearest one it
/// holds.
pub fn instant(ms: EpochMs) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or(if ms < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

/// The most characters of a contract id argument.
pub const MAX_CONTRACT_ID_CHARS: usize = 64;

/// A contract's identifier, as [`crate::Contracts::dispatch`] returns it: a UUID version 7 in
/// lowercase hyphenated form (`0196f3a0-…`). Parsed once: any text of 1 to 64 characters is accepted
/// and lowercased (ASCII), so an id a person typed in capitals finds its contract, and an id that
/// names none is answered `CONTRACT_NOT_FOUND` by the operation that looks it up.
///
/// ```
/// use shiftwork_contracts::{ContractId, ContractIdError};
/// let id = ContractId::parse("0196F3A0-0000-7000-8000-000000000001").unwrap();
/// assert_eq!(id.as_str(), "0196f3a0-0000-7000-8000-000000000001");
/// assert_eq!(ContractId::parse(""), Err(ContractIdError::Empty));
/// assert_eq!(ContractId::parse(&"a".repeat(65)), Err(ContractIdError::TooLong { chars: 65 }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ContractId(String);

/// Why a text is not a contract id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContractIdError {
    /// The text is empty.
    #[error("a contract id is 1 to 64 characters (an id from dispatch_contract), and this one is empty")]
    Empty,
    /// The text is longer than [`MAX_CONTRACT_ID_CHARS`] characters.
    #[error(
        "a contract id is at most 64 characters (an id from dispatch_contract), and this one has {chars}"
    )]
    TooLong {
        /// Its length in characters.
        chars: usize,
    },
}

impl ContractIdError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            ContractIdError::Empty => "CONTRACT_ID_EMPTY",
            ContractIdError::TooLong { .. } => "CONTRACT_ID_TOO_LONG",
        }
    }
}

impl shiftwork_seams::Coded for ContractIdError {
    fn code(&self) -> &'static str {
        ContractIdError::code(self)
    }
}

impl ContractId {
    /// The contract id `text`, lowercased, or why it is not one.
    pub fn parse(text: &str) -> Result<ContractId, ContractIdError> {
        let chars = text.chars().count();
        if chars == 0 {
            return Err(ContractIdError::Empty);
        }
        if chars > MAX_CONTRACT_ID_CHARS {
            return Err(ContractIdError::TooLong { chars });
        }
        Ok(ContractId(text.to_ascii_lowercase()))
    }

    /// The id's text (lowercase).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A UUID this crate generated (36 lowercase characters: always a contract id).
    pub(crate) fn generated(uuid: String) -> ContractId {
        ContractId(uuid)
    }
}

impl fmt::Display for ContractId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for ContractId {
    type Err = ContractIdError;
    fn from_str(text: &str) -> Result<ContractId, ContractIdError> {
        ContractId::parse(text)
    }
}

impl TryFrom<String> for ContractId {
    type Error = ContractIdError;
    fn try_from(text: String) -> Result<ContractId, ContractIdError> {
        ContractId::parse(&text)
    }
}

impl From<ContractId> for String {
    fn from(id: ContractId) -> String {
        id.0
    }
}

impl AsRef<str> for ContractId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for ContractId {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<String> for ContractId {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<&str> for ContractId {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

/// A contract's state. `SUBMITTED` and `CLAIMED` are live; the others are terminal and final.
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
    /// Withdrawn by its requester.
    Cancelled,
}

impl Status {
    /// Every status, live ones first, `CANCELLED` last.
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

/// Why a terminal contract ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EndReason {
    /// Its holder delivered a result that was accepted.
    Fulfilled,
    /// Its holder failed it (`fail_contract`).
    WorkerFailed,
    /// The third delivery that did not match its result schema closed it.
    SchemaRetriesExhausted,
    /// Nobody claimed it before its queue window ran out.
    QueueTtlExpired,
    /// Its holder's lease ran out, with no delivery left to redeliver it.
    ExecTtlExpired,
    /// Its files had changed when it was claimed.
    PointerDriftAtClaim,
    /// Its files changed under its holder a second time, at a delivery.
    PointerDriftAtFulfill,
    /// Its requester withdrew it.
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

/// Why a pinned file no longer matches the size and digest it had at dispatch.
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
    /// Every reason.
    pub const ALL: [DriftReason; 4] = [
        DriftReason::FileMissing,
        DriftReason::SizeMismatch,
        DriftReason::ContentChanged,
        DriftReason::PathRefused,
    ];

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

/// One file pinned at dispatch by its size and SHA-256, relative to the workspace root.
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

/// One pinned file that no longer matches what it was at dispatch.
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
    /// What to do about it, in one sentence.
    pub hint: String,
}

/// A delivery that was not accepted when the contract ended on it (its files changed again, or
/// its output failed the result schema a third time): kept so that the work is not lost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SalvagedResult {
    /// The delivered summary.
    pub result_summary: String,
    /// The delivered structured output.
    pub structured_output: Option<Map<String, Value>>,
    /// The delivered artifacts' fingerprints.
    pub artifacts_pointers: Vec<Pointer>,
}

/// The contract record as a store keeps it. Every field is public so that stores can persist it;
/// the transition functions of [`crate::transition`] are the only code that computes a successor.
/// Instants are [`EpochMs`] and windows whole seconds (`_sec`), the storage form; the facade's views
/// ([`crate::views`]) give them as `DateTime<Utc>` and `Duration`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Contract {
    /// Store-assigned insertion number.
    pub seq: i64,
    /// Public identifier (UUIDv7, lowercase).
    pub contract_id: ContractId,
    /// Who dispatched it.
    pub requester_agent: AgentId,
    /// The only agent that may claim and hold it.
    pub target_agent: AgentId,
    /// The caller's retry key.
    pub idempotency_key: Option<String>,
    /// SHA-256 of the dispatch arguments, to tell a retry from a different dispatch under the same
    /// idempotency key ([`crate::payload_sha256`]).
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
    /// Execution window length in seconds.
    pub exec_ttl_sec: u32,
    /// Queue window length in seconds.
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
    /// History, newest entry first: `<entry> | prev: <older>`, cut to 2,000 characters.
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
    /// Claims a contract may get before a lost lease ends it (1 to 10, default 1).
    pub max_deliveries: u32,
    /// Claims so far; a claim undone because the poll could not check the files or was cancelled
    /// does not count.
    pub delivery_count: u32,
    /// Before this instant the contract is not claimable, even though `SUBMITTED` (a redelivery's
    /// backoff).
    pub available_at: Option<EpochMs>,
    /// The reason its requester gave to `cancel_contract`.
    pub cancel_reason: Option<String>,
}

impl Contract {
    /// True when the contract may be claimed at `now` by its target: waiting, inside its queue window
    /// and past any redelivery backoff (which contract of several is claimed first is the store's).
    pub fn is_claimable(&self, now: EpochMs) -> bool {
        self.status == Status::Submitted
            && now < self.queue_expires_at
            && self.available_at.is_none_or(|at| at <= now)
    }

    /// True when the contract is past its deadline at `now` but not yet terminal in storage (no
    /// sweep has recorded it yet; every operation treats it as expired).
    pub fn is_logically_expired(&self, now: EpochMs) -> bool {
        match self.status {
            Status::Submitted => now >= self.queue_expires_at,
            Status::Claimed => self.expires_at.is_some_and(|e| now >= e),
            _ => false,
        }
    }
}

/// What a [`Warning`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum WarningCode {
    /// A pinned file is above 8 MiB: every claim and delivery hashes it again.
    LargePointer,
    /// A holder call gave no `claim_epoch`, so it was checked by agent identity only.
    EpochNotSupplied,
    /// `verify_contract` had no caller identity, so `fulfillable` is false.
    NoIdentity,
}

impl WarningCode {
    /// Every code.
    pub const ALL: [WarningCode; 3] = [
        WarningCode::LargePointer,
        WarningCode::EpochNotSupplied,
        WarningCode::NoIdentity,
    ];

    /// The wire name (`LARGE_POINTER`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            WarningCode::LargePointer => "LARGE_POINTER",
            WarningCode::EpochNotSupplied => "EPOCH_NOT_SUPPLIED",
            WarningCode::NoIdentity => "NO_IDENTITY",
        }
    }
}

impl fmt::Display for WarningCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A warning attached to a successful answer: the call succeeded, but something deserves a look.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Warning {
    /// What it is about.
    pub code: WarningCode,
    /// One sentence.
    pub message: String,
}

impl Warning {
    pub(crate) fn epoch_not_supplied(contract_id: &ContractId) -> Warning {
        Warning {
            code: WarningCode::EpochNotSupplied,
            message: format!(
                "No claim_epoch was given for contract {contract_id}, so the call was checked by agent identity only; pass the claim_epoch from poll_next_task."
            ),
        }
    }
}
