//! Refusals ([`ContractRefusal`]: a code, one sentence, typed details) and store failures
//! ([`StoreError`]).

use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Value, json};

use crate::fingerprint::RootReason;
use crate::model::{AgentId, ContractId, Drift, EndReason, Status};
use crate::paths::PathReason;
use crate::transition::ValidationError;
use crate::views::Skipped;

/// What kind of refusal: the closed list of codes a call can be refused with. Each code's wire name
/// (`STALE_EPOCH`, …) is [`RefusalCode::as_str`]; what a refusal of that code carries is the
/// matching variant of [`RefusalDetails`].
///
/// "Nothing changes" below means the refused call wrote nothing itself; the store may still have
/// recorded, in the same transaction, a deadline that had passed (a contract past its queue window
/// or lease becomes `TIMED_OUT`, or goes back to the queue when it has deliveries left).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[non_exhaustive]
pub enum RefusalCode {
    /// A tool was called with an argument it does not have (the tool-argument surface only).
    UnknownArgument,
    /// An argument has the wrong type, is out of its bounds or breaks its rule (a title of 201
    /// characters, a lease of 10 seconds, a NUL character), or the embedder's default identity is
    /// not an agent id. Nothing changes.
    InvalidArgument,
    /// A tool call named no agent and the server has no default identity (the tool-argument
    /// surface only: a library call always names its agent).
    AgentIdRequired,
    /// The result schema given at dispatch is not an acceptable JSON Schema (too large, an unknown
    /// draft, invalid against its meta-schema, an external `$ref`), or a delivery could not be checked
    /// against it (a pattern hit the regular-expression engine's backtracking limit; no schema attempt
    /// is used). Nothing changes.
    ContractSchemaInvalid,
    /// A dispatch's idempotency key already names a contract of this requester that was dispatched
    /// with different arguments. Nothing changes.
    IdempotencyConflict,
    /// The workspace root is not an absolute, readable directory inside the allowed roots (or it is
    /// `/`, a system directory, or a sensitive location). Nothing changes.
    WorkspaceRootInvalid,
    /// A file to pin at dispatch was refused (outside the root, a sensitive name such as `.env`,
    /// missing, not a regular file, too large, a duplicate, more than 32). Nothing changes.
    PointerRefused,
    /// A file named as an artifact of a delivery was refused, for the same reasons as a pointer.
    /// Nothing changes.
    ArtifactRefused,
    /// No contract has the id. Nothing changes.
    ContractNotFound,
    /// The caller is not the agent the contract is addressed to.
    NotTargetAgent,
    /// The facade requires a claim epoch on holder calls and none was given.
    EpochRequired,
    /// The claim epoch given is not the contract's current one: a newer claim (after a release, a
    /// lost lease or a redelivery) supersedes the caller's. The caller must stop working on it.
    StaleEpoch,
    /// The contract is waiting in the queue: nobody holds it.
    NotClaimed,
    /// The caller's lease ran out before the call.
    LeaseExpired,
    /// The contract has ended (completed, failed, timed out, stale or cancelled).
    AlreadyTerminal,
    /// The holder already renewed its lease five times in this claim.
    ExtendLimit,
    /// Renewing the lease would pass the contract's lifetime ceiling (four queue windows after
    /// dispatch).
    LifetimeCeiling,
    /// The contract was already released three times.
    ReleaseLimit,
    /// A delivery found the pinned files changed: the first time in a claim, the lease is renewed and
    /// the holder must restore the files and deliver again. The record changes.
    RetryNeeded,
    /// A delivery found the pinned files changed a second time in a claim: the contract is closed
    /// `POINTER_STALE` and the delivery kept as its salvaged result. The record changes.
    PointerStale,
    /// A delivery's structured output does not match the result schema; attempts are left. The record
    /// changes (the attempt is counted).
    OutputSchemaInvalid,
    /// A third delivery did not match the result schema: the contract is closed `FAILED` and the
    /// delivery kept as its salvaged result. The record changes.
    SchemaRetriesExhausted,
    /// An inspect cursor does not decode, or was made for other filters.
    InvalidCursor,
    /// Reading a file failed in a way the file rules do not classify (or the call was cancelled
    /// while it read one). Nothing changes, except that a poll gives back the claim it made.
    IoError,
    /// The store's lock was not obtained in time; nothing changed, retry later.
    StoreBusy,
    /// The store cannot be opened (location, schema version, a file or database refused, a
    /// read-only store asked to write).
    StoreUnavailable,
    /// The store failed during the operation and rolled it back.
    StoreError,
    /// Only the contract's requester may cancel it.
    NotRequester,
    /// The contract was cancelled by its requester: its holder must stop working on it.
    Cancelled,
    /// A tool call named an agent other than the one its credentials say it is (over HTTP, the bearer
    /// token's agent): an agent acts only as itself. Refused before any store is asked.
    IdentityMismatch,
}

impl RefusalCode {
    /// Every code, in a fixed order: the refusals of the arguments, of the contract and its lease, of
    /// a delivery and of the store, then the ones added for waiting, cancelling and authenticated
    /// callers. The contract tools' output schema lists the codes in this order.
    pub const ALL: [RefusalCode; 30] = [
        RefusalCode::UnknownArgument,
        RefusalCode::InvalidArgument,
        RefusalCode::AgentIdRequired,
        RefusalCode::ContractSchemaInvalid,
        RefusalCode::IdempotencyConflict,
        RefusalCode::WorkspaceRootInvalid,
        RefusalCode::PointerRefused,
        RefusalCode::ArtifactRefused,
        RefusalCode::ContractNotFound,
        RefusalCode::NotTargetAgent,
        RefusalCode::EpochRequired,
        RefusalCode::StaleEpoch,
        RefusalCode::NotClaimed,
        RefusalCode::LeaseExpired,
        RefusalCode::AlreadyTerminal,
        RefusalCode::ExtendLimit,
        RefusalCode::LifetimeCeiling,
        RefusalCode::ReleaseLimit,
        RefusalCode::RetryNeeded,
        RefusalCode::PointerStale,
        RefusalCode::OutputSchemaInvalid,
        RefusalCode::SchemaRetriesExhausted,
        RefusalCode::InvalidCursor,
        RefusalCode::IoError,
        RefusalCode::StoreBusy,
        RefusalCode::StoreUnavailable,
        RefusalCode::StoreError,
        RefusalCode::NotRequester,
        RefusalCode::Cancelled,
        RefusalCode::IdentityMismatch,
    ];

    /// The wire name (`UNKNOWN_ARGUMENT`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::UnknownArgument => "UNKNOWN_ARGUMENT",
            RefusalCode::InvalidArgument => "INVALID_ARGUMENT",
            RefusalCode::AgentIdRequired => "AGENT_ID_REQUIRED",
            RefusalCode::ContractSchemaInvalid => "CONTRACT_SCHEMA_INVALID",
            RefusalCode::IdempotencyConflict => "IDEMPOTENCY_CONFLICT",
            RefusalCode::WorkspaceRootInvalid => "WORKSPACE_ROOT_INVALID",
            RefusalCode::PointerRefused => "POINTER_REFUSED",
            RefusalCode::ArtifactRefused => "ARTIFACT_REFUSED",
            RefusalCode::ContractNotFound => "CONTRACT_NOT_FOUND",
            RefusalCode::NotTargetAgent => "NOT_TARGET_AGENT",
            RefusalCode::EpochRequired => "EPOCH_REQUIRED",
            RefusalCode::StaleEpoch => "STALE_EPOCH",
            RefusalCode::NotClaimed => "NOT_CLAIMED",
            RefusalCode::LeaseExpired => "LEASE_EXPIRED",
            RefusalCode::AlreadyTerminal => "ALREADY_TERMINAL",
            RefusalCode::ExtendLimit => "EXTEND_LIMIT",
            RefusalCode::LifetimeCeiling => "LIFETIME_CEILING",
            RefusalCode::ReleaseLimit => "RELEASE_LIMIT",
            RefusalCode::RetryNeeded => "RETRY_NEEDED",
            RefusalCode::PointerStale => "POINTER_STALE",
            RefusalCode::OutputSchemaInvalid => "OUTPUT_SCHEMA_INVALID",
            RefusalCode::SchemaRetriesExhausted => "SCHEMA_RETRIES_EXHAUSTED",
            RefusalCode::InvalidCursor => "INVALID_CURSOR",
            RefusalCode::IoError => "IO_ERROR",
            RefusalCode::StoreBusy => "STORE_BUSY",
            RefusalCode::StoreUnavailable => "STORE_UNAVAILABLE",
            RefusalCode::StoreError => "STORE_ERROR",
            RefusalCode::NotRequester => "NOT_REQUESTER",
            RefusalCode::Cancelled => "CANCELLED",
            RefusalCode::IdentityMismatch => "IDENTITY_MISMATCH",
        }
    }

    /// The keys of a refusal's `details` object in a tool answer, in the order they are written.
    pub fn detail_keys(self) -> &'static [&'static str] {
        match self {
            RefusalCode::UnknownArgument => &["argument", "known"],
            RefusalCode::InvalidArgument => &["argument"],
            RefusalCode::AgentIdRequired
            | RefusalCode::InvalidCursor
            | RefusalCode::StoreBusy
            | RefusalCode::StoreUnavailable
            | RefusalCode::StoreError => &[],
            RefusalCode::ContractSchemaInvalid => &["validation_errors"],
            RefusalCode::IdempotencyConflict | RefusalCode::ContractNotFound | RefusalCode::EpochRequired => {
                &["contract_id"]
            }
            RefusalCode::WorkspaceRootInvalid => &["reason"],
            RefusalCode::PointerRefused | RefusalCode::ArtifactRefused => &["path", "reason", "pattern"],
            RefusalCode::NotTargetAgent => &["contract_id", "target_agent"],
            RefusalCode::StaleEpoch => &["contract_id", "claim_epoch", "status"],
            RefusalCode::NotClaimed | RefusalCode::LeaseExpired | RefusalCode::AlreadyTerminal => {
                &["contract_id", "status", "end_reason"]
            }
            RefusalCode::ExtendLimit => &["contract_id", "extend_count"],
            RefusalCode::LifetimeCeiling => &["contract_id", "lifetime_ends_at", "expires_at"],
            RefusalCode::ReleaseLimit => &["contract_id", "release_count"],
            RefusalCode::RetryNeeded => &[
                "contract_id",
                "status",
                "claim_epoch",
                "expires_at",
                "dirty_files",
            ],
            RefusalCode::PointerStale => &["contract_id", "status", "dirty_files"],
            RefusalCode::OutputSchemaInvalid => &[
                "contract_id",
                "status",
                "retry_count",
                "schema_attempts_left",
                "validation_errors",
            ],
            RefusalCode::SchemaRetriesExhausted => {
                &["contract_id", "status", "retry_count", "validation_errors"]
            }
            RefusalCode::IoError => &["contract_id", "path", "skipped_stale"],
            RefusalCode::NotRequester => &["contract_id", "requester_agent"],
            RefusalCode::Cancelled => &["contract_id", "cancel_reason"],
            RefusalCode::IdentityMismatch => &["argument", "given", "authenticated"],
        }
    }
}

impl fmt::Display for RefusalCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a refusal carries, by code: the values a caller acts on (the current epoch of a
/// `STALE_EPOCH`, the changed files of a `RETRY_NEEDED`, …). Each variant is named after its
/// [`RefusalCode`]; in a tool answer it is the `details` object, with the fields in the order
/// declared here.
///
/// ```
/// use shiftwork_contracts::{ContractRefusal, RefusalCode, RefusalDetails};
/// let refused = ContractRefusal::invalid_argument("title", "title must be 1 to 200 characters.");
/// assert_eq!(refused.code(), RefusalCode::InvalidArgument);
/// assert!(matches!(refused.details(), RefusalDetails::InvalidArgument { argument } if argument == "title"));
/// ```
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum RefusalDetails {
    /// See [`RefusalCode::UnknownArgument`].
    UnknownArgument {
        /// The argument given (cut to 200 characters).
        argument: String,
        /// The tool's arguments.
        known: Vec<String>,
    },
    /// See [`RefusalCode::InvalidArgument`].
    InvalidArgument {
        /// The argument (or, for a bad default identity, where it came from, such as `AGENT_NAME`).
        argument: String,
    },
    /// See [`RefusalCode::AgentIdRequired`].
    AgentIdRequired {},
    /// See [`RefusalCode::ContractSchemaInvalid`].
    ContractSchemaInvalid {
        /// What the checks found (possibly empty).
        validation_errors: Vec<ValidationError>,
    },
    /// See [`RefusalCode::IdempotencyConflict`].
    IdempotencyConflict {
        /// The contract the key names.
        contract_id: ContractId,
    },
    /// See [`RefusalCode::WorkspaceRootInvalid`].
    WorkspaceRootInvalid {
        /// Which rule the root broke.
        #[serde(serialize_with = "crate::wire::name")]
        reason: RootReason,
    },
    /// See [`RefusalCode::PointerRefused`].
    PointerRefused {
        /// The path as given (cut to 200 characters); `None` when there were too many.
        path: Option<String>,
        /// Which rule it broke.
        #[serde(serialize_with = "crate::wire::name")]
        reason: PathReason,
        /// The sensitive name it matched, for `SENSITIVE_FILE`, or the kind of private key its first
        /// bytes are (one of [`crate::paths::PRIVATE_KEY_CONTENTS`]).
        pattern: Option<&'static str>,
    },
    /// See [`RefusalCode::ArtifactRefused`].
    ArtifactRefused {
        /// The path as given (cut to 200 characters); `None` when there were too many.
        path: Option<String>,
        /// Which rule it broke.
        #[serde(serialize_with = "crate::wire::name")]
        reason: PathReason,
        /// The sensitive name it matched, for `SENSITIVE_FILE`, or the kind of private key its first
        /// bytes are (one of [`crate::paths::PRIVATE_KEY_CONTENTS`]).
        pattern: Option<&'static str>,
    },
    /// See [`RefusalCode::ContractNotFound`].
    ContractNotFound {
        /// The id looked up (lowercased).
        contract_id: ContractId,
    },
    /// See [`RefusalCode::NotTargetAgent`].
    NotTargetAgent {
        /// The contract.
        contract_id: ContractId,
        /// The agent it is addressed to.
        target_agent: AgentId,
    },
    /// See [`RefusalCode::EpochRequired`].
    EpochRequired {
        /// The contract.
        contract_id: ContractId,
    },
    /// See [`RefusalCode::StaleEpoch`].
    StaleEpoch {
        /// The contract.
        contract_id: ContractId,
        /// Its current epoch.
        claim_epoch: u64,
        /// Its status.
        status: Status,
    },
    /// See [`RefusalCode::NotClaimed`].
    NotClaimed {
        /// The contract.
        contract_id: ContractId,
        /// Its status.
        status: Status,
        /// Why it ended, when it has.
        end_reason: Option<EndReason>,
    },
    /// See [`RefusalCode::LeaseExpired`].
    LeaseExpired {
        /// The contract.
        contract_id: ContractId,
        /// Its status.
        status: Status,
        /// Why it ended, when it has.
        end_reason: Option<EndReason>,
    },
    /// See [`RefusalCode::AlreadyTerminal`].
    AlreadyTerminal {
        /// The contract.
        contract_id: ContractId,
        /// Its status.
        status: Status,
        /// Why it ended.
        end_reason: Option<EndReason>,
    },
    /// See [`RefusalCode::ExtendLimit`].
    ExtendLimit {
        /// The contract.
        contract_id: ContractId,
        /// Renewals used in this claim.
        extend_count: u32,
    },
    /// See [`RefusalCode::LifetimeCeiling`].
    LifetimeCeiling {
        /// The contract.
        contract_id: ContractId,
        /// Its lifetime ceiling.
        #[serde(serialize_with = "crate::wire::ms")]
        lifetime_ends_at: DateTime<Utc>,
        /// Its lease deadline.
        #[serde(serialize_with = "crate::wire::opt_ms")]
        expires_at: Option<DateTime<Utc>>,
    },
    /// See [`RefusalCode::ReleaseLimit`].
    ReleaseLimit {
        /// The contract.
        contract_id: ContractId,
        /// Releases used.
        release_count: u32,
    },
    /// See [`RefusalCode::RetryNeeded`].
    RetryNeeded {
        /// The contract.
        contract_id: ContractId,
        /// Its status (still `CLAIMED`).
        status: Status,
        /// The epoch to deliver with.
        claim_epoch: u64,
        /// The renewed lease deadline.
        #[serde(serialize_with = "crate::wire::opt_ms")]
        expires_at: Option<DateTime<Utc>>,
        /// What changed.
        dirty_files: Vec<Drift>,
    },
    /// See [`RefusalCode::PointerStale`].
    PointerStale {
        /// The contract.
        contract_id: ContractId,
        /// Its status (`POINTER_STALE`).
        status: Status,
        /// What changed.
        dirty_files: Vec<Drift>,
    },
    /// See [`RefusalCode::OutputSchemaInvalid`].
    OutputSchemaInvalid {
        /// The contract.
        contract_id: ContractId,
        /// Its status (still `CLAIMED`).
        status: Status,
        /// Invalid deliveries so far.
        retry_count: u32,
        /// Invalid deliveries left before the contract is closed.
        schema_attempts_left: u32,
        /// What the schema check found (at most 10, sorted).
        validation_errors: Vec<ValidationError>,
    },
    /// See [`RefusalCode::SchemaRetriesExhausted`].
    SchemaRetriesExhausted {
        /// The contract.
        contract_id: ContractId,
        /// Its status (`FAILED`).
        status: Status,
        /// Invalid deliveries.
        retry_count: u32,
        /// What the schema check found.
        validation_errors: Vec<ValidationError>,
    },
    /// See [`RefusalCode::InvalidCursor`].
    InvalidCursor {},
    /// See [`RefusalCode::IoError`].
    IoError {
        /// The contract concerned, if any.
        contract_id: Option<ContractId>,
        /// The file concerned (relative to the workspace root), if any.
        path: Option<String>,
        /// For a poll, the contracts it closed stale before the failure; `None` otherwise.
        skipped_stale: Option<Vec<Skipped>>,
    },
    /// See [`RefusalCode::StoreBusy`].
    StoreBusy {},
    /// See [`RefusalCode::StoreUnavailable`].
    StoreUnavailable {},
    /// See [`RefusalCode::StoreError`].
    StoreError {},
    /// See [`RefusalCode::NotRequester`].
    NotRequester {
        /// The contract.
        contract_id: ContractId,
        /// Its requester.
        requester_agent: AgentId,
    },
    /// See [`RefusalCode::Cancelled`].
    Cancelled {
        /// The contract.
        contract_id: ContractId,
        /// The requester's reason.
        cancel_reason: Option<String>,
    },
    /// See [`RefusalCode::IdentityMismatch`].
    IdentityMismatch {
        /// The argument that named another agent.
        argument: String,
        /// The agent it named.
        given: AgentId,
        /// The agent the credentials say the caller is.
        authenticated: AgentId,
    },
}

/// A code's wire name compares equal to the code: `refused.code() == RefusalCode::StaleEpoch`.
impl PartialEq<RefusalCode> for &str {
    fn eq(&self, code: &RefusalCode) -> bool {
        *self == code.as_str()
    }
}

/// A code compares equal to its wire name.
impl PartialEq<&str> for RefusalCode {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

impl RefusalDetails {
    /// The code these details belong to, as its wire name (`CONTRACT_NOT_FOUND`, …): a
    /// `&'static str`, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        self.refusal_code().as_str()
    }

    /// The code these details belong to, typed.
    pub fn refusal_code(&self) -> RefusalCode {
        match self {
            RefusalDetails::UnknownArgument { .. } => RefusalCode::UnknownArgument,
            RefusalDetails::InvalidArgument { .. } => RefusalCode::InvalidArgument,
            RefusalDetails::AgentIdRequired {} => RefusalCode::AgentIdRequired,
            RefusalDetails::ContractSchemaInvalid { .. } => RefusalCode::ContractSchemaInvalid,
            RefusalDetails::IdempotencyConflict { .. } => RefusalCode::IdempotencyConflict,
            RefusalDetails::WorkspaceRootInvalid { .. } => RefusalCode::WorkspaceRootInvalid,
            RefusalDetails::PointerRefused { .. } => RefusalCode::PointerRefused,
            RefusalDetails::ArtifactRefused { .. } => RefusalCode::ArtifactRefused,
            RefusalDetails::ContractNotFound { .. } => RefusalCode::ContractNotFound,
            RefusalDetails::NotTargetAgent { .. } => RefusalCode::NotTargetAgent,
            RefusalDetails::EpochRequired { .. } => RefusalCode::EpochRequired,
            RefusalDetails::StaleEpoch { .. } => RefusalCode::StaleEpoch,
            RefusalDetails::NotClaimed { .. } => RefusalCode::NotClaimed,
            RefusalDetails::LeaseExpired { .. } => RefusalCode::LeaseExpired,
            RefusalDetails::AlreadyTerminal { .. } => RefusalCode::AlreadyTerminal,
            RefusalDetails::ExtendLimit { .. } => RefusalCode::ExtendLimit,
            RefusalDetails::LifetimeCeiling { .. } => RefusalCode::LifetimeCeiling,
            RefusalDetails::ReleaseLimit { .. } => RefusalCode::ReleaseLimit,
            RefusalDetails::RetryNeeded { .. } => RefusalCode::RetryNeeded,
            RefusalDetails::PointerStale { .. } => RefusalCode::PointerStale,
            RefusalDetails::OutputSchemaInvalid { .. } => RefusalCode::OutputSchemaInvalid,
            RefusalDetails::SchemaRetriesExhausted { .. } => RefusalCode::SchemaRetriesExhausted,
            RefusalDetails::InvalidCursor {} => RefusalCode::InvalidCursor,
            RefusalDetails::IoError { .. } => RefusalCode::IoError,
            RefusalDetails::StoreBusy {} => RefusalCode::StoreBusy,
            RefusalDetails::StoreUnavailable {} => RefusalCode::StoreUnavailable,
            RefusalDetails::StoreError {} => RefusalCode::StoreError,
            RefusalDetails::NotRequester { .. } => RefusalCode::NotRequester,
            RefusalDetails::Cancelled { .. } => RefusalCode::Cancelled,
            RefusalDetails::IdentityMismatch { .. } => RefusalCode::IdentityMismatch,
        }
    }

    /// The contract the refusal names, when it names one.
    pub fn contract_id(&self) -> Option<&ContractId> {
        match self {
            RefusalDetails::IdempotencyConflict { contract_id }
            | RefusalDetails::ContractNotFound { contract_id }
            | RefusalDetails::NotTargetAgent { contract_id, .. }
            | RefusalDetails::EpochRequired { contract_id }
            | RefusalDetails::StaleEpoch { contract_id, .. }
            | RefusalDetails::NotClaimed { contract_id, .. }
            | RefusalDetails::LeaseExpired { contract_id, .. }
            | RefusalDetails::AlreadyTerminal { contract_id, .. }
            | RefusalDetails::ExtendLimit { contract_id, .. }
            | RefusalDetails::LifetimeCeiling { contract_id, .. }
            | RefusalDetails::ReleaseLimit { contract_id, .. }
            | RefusalDetails::RetryNeeded { contract_id, .. }
            | RefusalDetails::PointerStale { contract_id, .. }
            | RefusalDetails::OutputSchemaInvalid { contract_id, .. }
            | RefusalDetails::SchemaRetriesExhausted { contract_id, .. }
            | RefusalDetails::NotRequester { contract_id, .. }
            | RefusalDetails::Cancelled { contract_id, .. } => Some(contract_id),
            RefusalDetails::IoError { contract_id, .. } => contract_id.as_ref(),
            _ => None,
        }
    }

    /// The `details` object of a tool answer.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|_| Value::Object(serde_json::Map::new()))
    }
}

/// A refused operation: what kind ([`ContractRefusal::code`]), one English sentence naming the
/// argument, contract or limit concerned ([`ContractRefusal::message`]), and the values that go
/// with the code ([`ContractRefusal::details`]). Match on the code or the details, never on the
/// sentence.
///
/// ```
/// use shiftwork_contracts::{ContractId, ContractRefusal, RefusalCode, RefusalDetails};
/// let id = ContractId::parse("0196f3a0-0000-7000-8000-000000000001").unwrap();
/// let refused = ContractRefusal::not_found(&id);
/// assert_eq!(refused.code(), RefusalCode::ContractNotFound);
/// assert_eq!(refused.details().contract_id(), Some(&id));
/// assert_eq!(refused.to_string(), "CONTRACT_NOT_FOUND: No contract has the id 0196f3a0-0000-7000-8000-000000000001.");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {message}", .details.refusal_code())]
pub struct ContractRefusal {
    message: String,
    details: RefusalDetails,
}

/// The refusal's former name.
#[deprecated(note = "renamed ContractRefusal, so that it reads apart from shiftwork-core's refusals")]
pub type Refusal = ContractRefusal;

impl ContractRefusal {
    /// A refusal saying `message`, of the code `details` belong to.
    pub fn new(message: impl Into<String>, details: RefusalDetails) -> ContractRefusal {
        ContractRefusal {
            message: message.into(),
            details,
        }
    }

    /// What kind of refusal, as a stable machine name (`STALE_EPOCH`, …): a `&'static str`, as
    /// every `code()` of the family. It compares equal to its [`RefusalCode`], so
    /// `refused.code() == RefusalCode::StaleEpoch` reads as it says.
    pub fn code(&self) -> &'static str {
        self.details.code()
    }

    /// What kind of refusal, typed: the [`RefusalCode`] to match on.
    pub fn refusal_code(&self) -> RefusalCode {
        self.details.refusal_code()
    }

    /// One sentence naming the argument, contract or limit concerned.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The values that go with the code.
    pub fn details(&self) -> &RefusalDetails {
        &self.details
    }

    /// `INVALID_ARGUMENT` naming `argument`.
    pub fn invalid_argument(argument: &str, message: impl Into<String>) -> ContractRefusal {
        ContractRefusal::new(
            message,
            RefusalDetails::InvalidArgument {
                argument: argument.to_owned(),
            },
        )
    }

    /// `CONTRACT_NOT_FOUND` naming `contract_id`.
    pub fn not_found(contract_id: &ContractId) -> ContractRefusal {
        ContractRefusal::new(
            format!("No contract has the id {contract_id}."),
            RefusalDetails::ContractNotFound {
                contract_id: contract_id.clone(),
            },
        )
    }

    /// The answer object of a refused tool call: `{ ok: false, error: { code, message, details } }`.
    pub fn to_json(&self) -> Value {
        json!({
            "ok": false,
            "error": { "code": self.code(), "message": self.message, "details": self.details.to_json() },
        })
    }
}

impl shiftwork_seams::Coded for ContractRefusal {
    fn code(&self) -> &'static str {
        ContractRefusal::code(self)
    }
}

impl Serialize for ContractRefusal {
    /// `{ code, message, details }`, the `error` object of a tool answer.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ContractRefusal", 3)?;
        st.serialize_field("code", &self.code())?;
        st.serialize_field("message", &self.message)?;
        st.serialize_field("details", &self.details)?;
        st.end()
    }
}

/// The error a store failure carries underneath (a SQLite or PostgreSQL error), shared so that a
/// [`StoreError`] stays `Clone`.
pub type StoreErrorSource = Arc<dyn std::error::Error + Send + Sync + 'static>;

/// A store failure. Each one leaves the store unchanged (the transaction is rolled back); the
/// driver's own error, when there is one, is the [`std::error::Error::source`].
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store's lock was not obtained within the timeout; retry later.
    #[error("the contract store was busy: {reason}")]
    Busy {
        /// What was busy, in words.
        reason: String,
        /// The driver's error.
        #[source]
        source: Option<StoreErrorSource>,
    },
    /// The store cannot be opened or reached (location, schema, feature, connection).
    #[error("the contract store is unavailable: {reason}")]
    Unavailable {
        /// Why, in words (a refused file names the file and what to do).
        reason: String,
        /// The driver's error.
        #[source]
        source: Option<StoreErrorSource>,
    },
    /// The store failed during the operation; it was rolled back.
    #[error("the contract store failed: {reason}")]
    Io {
        /// What failed, in words.
        reason: String,
        /// The driver's error.
        #[source]
        source: Option<StoreErrorSource>,
    },
    /// The store holds data it cannot read.
    #[error("the contract store holds a record it cannot read: {reason}")]
    Corrupt {
        /// What could not be read, in words.
        reason: String,
        /// The driver's error.
        #[source]
        source: Option<StoreErrorSource>,
    },
    /// The store was opened read-only (its file is not writable): reading works, writing does not.
    #[error("the contract store is read-only: {reason}")]
    ReadOnly {
        /// Why it is read-only, in words.
        reason: String,
    },
}

impl StoreError {
    /// A stable machine name of the error's kind, as every `code()` of the family.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::Busy { .. } => "STORE_BUSY",
            StoreError::Unavailable { .. } => "STORE_UNAVAILABLE",
            StoreError::Io { .. } => "STORE_IO_ERROR",
            StoreError::Corrupt { .. } => "STORE_CORRUPT",
            StoreError::ReadOnly { .. } => "STORE_READ_ONLY",
        }
    }
}

impl shiftwork_seams::Coded for StoreError {
    fn code(&self) -> &'static str {
        StoreError::code(self)
    }
}

impl PartialEq for StoreError {
    /// The same kind and reason (the sources are not compared).
    fn eq(&self, other: &StoreError) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other) && self.reason() == other.reason()
    }
}

impl Eq for StoreError {}

impl StoreError {
    /// [`StoreError::Busy`] without a source.
    pub fn busy(reason: impl Into<String>) -> StoreError {
        StoreError::Busy {
            reason: reason.into(),
            source: None,
        }
    }

    /// [`StoreError::Unavailable`] without a source.
    pub fn unavailable(reason: impl Into<String>) -> StoreError {
        StoreError::Unavailable {
            reason: reason.into(),
            source: None,
        }
    }

    /// [`StoreError::Io`] without a source.
    pub fn io(reason: impl Into<String>) -> StoreError {
        StoreError::Io {
            reason: reason.into(),
            source: None,
        }
    }

    /// [`StoreError::Corrupt`] without a source.
    pub fn corrupt(reason: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            reason: reason.into(),
            source: None,
        }
    }

    /// [`StoreError::ReadOnly`].
    pub fn read_only(reason: impl Into<String>) -> StoreError {
        StoreError::ReadOnly {
            reason: reason.into(),
        }
    }

    /// The same failure, caused by `source` (a read-only store has none).
    pub fn with_source(mut self, error: impl std::error::Error + Send + Sync + 'static) -> StoreError {
        match &mut self {
            StoreError::Busy { source, .. }
            | StoreError::Unavailable { source, .. }
            | StoreError::Io { source, .. }
            | StoreError::Corrupt { source, .. } => *source = Some(Arc::new(error)),
            StoreError::ReadOnly { .. } => {}
        }
        self
    }

    /// Why, in words.
    pub fn reason(&self) -> &str {
        match self {
            StoreError::Busy { reason, .. }
            | StoreError::Unavailable { reason, .. }
            | StoreError::Io { reason, .. }
            | StoreError::Corrupt { reason, .. }
            | StoreError::ReadOnly { reason } => reason,
        }
    }

    /// The refusal this failure answers: `STORE_BUSY` for [`StoreError::Busy`],
    /// `STORE_UNAVAILABLE` for [`StoreError::Unavailable`] and [`StoreError::ReadOnly`],
    /// `STORE_ERROR` for the others.
    pub fn to_refusal(&self) -> ContractRefusal {
        match self {
            StoreError::Busy { .. } => ContractRefusal::new(
                "The contract store was busy; nothing was changed, retry later.",
                RefusalDetails::StoreBusy {},
            ),
            StoreError::Unavailable { reason, .. } => ContractRefusal::new(
                format!("The contract store is unavailable ({reason})."),
                RefusalDetails::StoreUnavailable {},
            ),
            StoreError::ReadOnly { reason } => ContractRefusal::new(
                format!(
                    "The contract store is read-only ({reason}): reading tools work, but this call writes and was refused; nothing was changed."
                ),
                RefusalDetails::StoreUnavailable {},
            ),
            StoreError::Io { reason, .. } | StoreError::Corrupt { reason, .. } => ContractRefusal::new(
                format!("The contract store failed during the operation and rolled it back ({reason})."),
                RefusalDetails::StoreError {},
            ),
        }
    }
}

impl From<StoreError> for ContractRefusal {
    fn from(e: StoreError) -> ContractRefusal {
        e.to_refusal()
    }
}
