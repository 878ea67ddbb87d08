//! Refusals (Appendix B) and store failures (CT-132).

use std::fmt;

use serde::Serialize;
use serde_json::{Map, Value, json};

/// The closed list of refusal codes (CT-178).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
#[allow(missing_docs)] // Each code is documented by its table row in the spec and by `meaning`.
pub enum RefusalCode {
    UnknownArgument,
    InvalidArgument,
    AgentIdRequired,
    ContractSchemaInvalid,
    IdempotencyConflict,
    WorkspaceRootInvalid,
    PointerRefused,
    ArtifactRefused,
    ContractNotFound,
    NotTargetAgent,
    EpochRequired,
    StaleEpoch,
    NotClaimed,
    LeaseExpired,
    AlreadyTerminal,
    ExtendLimit,
    LifetimeCeiling,
    ReleaseLimit,
    RetryNeeded,
    PointerStale,
    OutputSchemaInvalid,
    SchemaRetriesExhausted,
    InvalidCursor,
    IoError,
    StoreBusy,
    StoreUnavailable,
    StoreError,
    NotRequester,
    Cancelled,
    IdentityMismatch,
}

impl RefusalCode {
    /// Every code, in the order of Appendix B, then the two of CT-191.
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

    /// The `details` keys of this code, in the order of Appendix B.
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

/// A refused operation (CT-83): a code, one English sentence, and the details Appendix B lists.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{code}: {message}")]
pub struct Refusal {
    /// What kind of refusal.
    pub code: RefusalCode,
    /// One sentence naming the argument, contract or limit concerned.
    pub message: String,
    /// Exactly the keys of [`RefusalCode::detail_keys`].
    pub details: Map<String, Value>,
}

impl Refusal {
    /// A refusal with the given details (pairs in Appendix B order).
    pub fn new(code: RefusalCode, message: impl Into<String>, details: Vec<(&str, Value)>) -> Refusal {
        Refusal {
            code,
            message: message.into(),
            details: details.into_iter().map(|(k, v)| (k.to_owned(), v)).collect(),
        }
    }

    /// `INVALID_ARGUMENT { argument }`.
    pub fn invalid_argument(argument: &str, message: impl Into<String>) -> Refusal {
        Refusal::new(
            RefusalCode::InvalidArgument,
            message,
            vec![("argument", json!(argument))],
        )
    }

    /// `CONTRACT_NOT_FOUND { contract_id }`.
    pub fn not_found(contract_id: &str) -> Refusal {
        Refusal::new(
            RefusalCode::ContractNotFound,
            format!("No contract has the id {contract_id}."),
            vec![("contract_id", json!(contract_id))],
        )
    }

    /// The `{ ok: false, error: { code, message, details } }` object of CT-83.
    pub fn to_json(&self) -> Value {
        json!({
            "ok": false,
            "error": { "code": self.code.as_str(), "message": self.message, "details": self.details },
        })
    }
}

/// A store failure (CT-132). Each one leaves the store unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// The store's lock was not obtained within the timeout.
    #[error("the contract store was busy: {0}")]
    Busy(String),
    /// The store cannot be opened (location, schema, feature).
    #[error("the contract store is unavailable: {0}")]
    Unavailable(String),
    /// The store failed during the operation; it was rolled back.
    #[error("the contract store failed: {0}")]
    Io(String),
    /// The store holds data it cannot read.
    #[error("the contract store holds a record it cannot read: {0}")]
    Corrupt(String),
    /// The store was opened read-only (its file is not writable): reading works, writing does not.
    #[error("the contract store is read-only: {0}")]
    ReadOnly(String),
}

impl StoreError {
    /// The refusal this failure answers (CT-132).
    pub fn to_refusal(&self) -> Refusal {
        let (code, message) = match self {
            StoreError::Busy(_) => (
                RefusalCode::StoreBusy,
                String::from("The contract store was busy; nothing was changed, retry later."),
            ),
            StoreError::Unavailable(why) => (
                RefusalCode::StoreUnavailable,
                format!("The contract store is unavailable ({why})."),
            ),
            StoreError::ReadOnly(why) => (
                RefusalCode::StoreUnavailable,
                format!(
                    "The contract store is read-only ({why}): reading tools work, but this call writes and was refused; nothing was changed."
                ),
            ),
            StoreError::Io(why) | StoreError::Corrupt(why) => (
                RefusalCode::StoreError,
                format!("The contract store failed during the operation and rolled it back ({why})."),
            ),
        };
        Refusal::new(code, message, Vec::new())
    }
}

impl From<StoreError> for Refusal {
    fn from(e: StoreError) -> Refusal {
        e.to_refusal()
    }
}
