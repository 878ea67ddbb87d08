//! The outcome types of the facade: the JSON shapes of §7 (CT-96 … CT-120), field for field, without
//! the wire-only fields: `ok` (and `has_task` of a poll) are added when an outcome is rendered as a tool
//! answer ([`crate::args`]).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::limits::{MAX_EXTENDS_PER_CLAIM, MAX_RELEASES, SCHEMA_INVALID_LIMIT, SUMMARY_ERROR_REASON_CHARS};
use crate::model::{AgentId, Contract, Drift, EndReason, EpochMs, Pointer, SalvagedResult, Status, Warning};
use crate::store::Counts;
use crate::transition::cut_chars;

/// Dispatch success (CT-96).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DispatchOutcome {
    /// The contract.
    pub contract_id: String,
    /// `SUBMITTED`, or the current status on a replay.
    pub status: Status,
    /// True when an earlier dispatch with the same key and arguments answered.
    pub idempotent_replay: bool,
    /// Who dispatched it.
    pub requester_agent: AgentId,
    /// Its target.
    pub target_agent: AgentId,
    /// Dispatch instant.
    pub created_at: EpochMs,
    /// Queue deadline.
    pub queue_expires_at: EpochMs,
    /// Lifetime ceiling.
    pub lifetime_ends_at: EpochMs,
    /// Execution window length.
    pub exec_ttl_sec: u32,
    /// Queue window length.
    pub queue_ttl_sec: u32,
    /// The baseline.
    pub pointers: Vec<Pointer>,
    /// `LARGE_POINTER` warnings.
    pub warnings: Vec<Warning>,
}

/// A contract closed stale during a poll (CT-120).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// The contract.
    pub contract_id: String,
    /// Its title.
    pub title: String,
    /// What drifted.
    pub dirty_files: Vec<Drift>,
}

/// What `poll_next_task` hands to the holder (CT-120).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldContract {
    /// The contract.
    pub contract_id: String,
    /// Who dispatched it.
    pub requester_agent: AgentId,
    /// The holder.
    pub target_agent: AgentId,
    /// Task type.
    pub task_type: String,
    /// Title.
    pub title: String,
    /// Context summary.
    pub context_summary: String,
    /// Workspace root.
    pub workspace_root: String,
    /// The baseline.
    pub pointers: Vec<Pointer>,
    /// The result schema.
    pub contract_schema: Option<Map<String, Value>>,
    /// Start of the lease.
    pub claimed_at: EpochMs,
    /// Execution window length.
    pub exec_ttl_sec: u32,
    /// The fencing token.
    pub claim_epoch: u64,
    /// Lease deadline.
    pub expires_at: EpochMs,
    /// Lifetime ceiling.
    pub lifetime_ends_at: EpochMs,
    /// Renewals left in this claim.
    pub extends_left: u32,
    /// Releases left.
    pub releases_left: u32,
    /// Schema-invalid deliveries left before the breaker.
    pub schema_attempts_left: u32,
    /// Claims so far, this one included (CT-189).
    pub delivery_count: u32,
    /// Claims it may get before a lost lease ends it (CT-186).
    pub max_deliveries: u32,
    /// When it last became claimable after a redelivery, or `null` (CT-186).
    pub available_at: Option<EpochMs>,
}

impl HeldContract {
    /// The holder's view of a claimed record.
    pub fn of(c: &Contract) -> HeldContract {
        HeldContract {
            contract_id: c.contract_id.clone(),
            requester_agent: c.requester_agent.clone(),
            target_agent: c.target_agent.clone(),
            task_type: c.task_type.clone(),
            title: c.title.clone(),
            context_summary: c.context_summary.clone(),
            workspace_root: c.workspace_root.clone(),
            pointers: c.pointers.clone(),
            contract_schema: c.contract_schema.clone(),
            claimed_at: c.claimed_at.unwrap_or_default(),
            exec_ttl_sec: c.exec_ttl_sec,
            claim_epoch: c.claim_epoch,
            expires_at: c.expires_at.unwrap_or_default(),
            lifetime_ends_at: c.lifetime_ends_at,
            extends_left: MAX_EXTENDS_PER_CLAIM.saturating_sub(c.extend_count),
            releases_left: MAX_RELEASES.saturating_sub(c.release_count),
            schema_attempts_left: SCHEMA_INVALID_LIMIT.saturating_sub(c.retry_count),
            delivery_count: c.delivery_count,
            max_deliveries: c.max_deliveries,
            available_at: c.available_at,
        }
    }
}

/// Poll success (CT-99): a claimed contract, or nothing claimed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PollOutcome {
    /// Work claimed.
    Claimed {
        /// Always `CLAIMED`.
        status: Status,
        /// The claimed contract.
        contract: Box<HeldContract>,
        /// Contracts closed stale on the way.
        skipped_stale: Vec<Skipped>,
        /// How long the call waited (a waiting poll only, CT-179).
        #[serde(skip_serializing_if = "Option::is_none")]
        waited_ms: Option<u64>,
    },
    /// Nothing claimed.
    Empty {
        /// Why nothing was claimed (one of the two sentences of CT-99, or a cancelled wait).
        message: String,
        /// Contracts closed stale on the way.
        skipped_stale: Vec<Skipped>,
        /// How long the call waited (a waiting poll only, CT-179).
        #[serde(skip_serializing_if = "Option::is_none")]
        waited_ms: Option<u64>,
    },
}

impl PollOutcome {
    /// The claimed contract, if any.
    pub fn held(&self) -> Option<&HeldContract> {
        match self {
            PollOutcome::Claimed { contract, .. } => Some(contract),
            PollOutcome::Empty { .. } => None,
        }
    }

    /// The contracts closed stale on the way.
    pub fn skipped_stale(&self) -> &[Skipped] {
        match self {
            PollOutcome::Claimed { skipped_stale, .. } | PollOutcome::Empty { skipped_stale, .. } => {
                skipped_stale
            }
        }
    }
}

/// Extend success (CT-102).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtendOutcome {
    /// The contract.
    pub contract_id: String,
    /// Always `CLAIMED`.
    pub status: Status,
    /// The fencing token.
    pub claim_epoch: u64,
    /// Start of the renewed window.
    pub claimed_at: EpochMs,
    /// New deadline.
    pub expires_at: EpochMs,
    /// Renewals used.
    pub extend_count: u32,
    /// Renewals left.
    pub extends_left: u32,
    /// Lifetime ceiling.
    pub lifetime_ends_at: EpochMs,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// Release success (CT-105).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReleaseOutcome {
    /// The contract.
    pub contract_id: String,
    /// Always `SUBMITTED`.
    pub status: Status,
    /// Releases used.
    pub release_count: u32,
    /// Releases left.
    pub releases_left: u32,
    /// When it re-entered the queue.
    pub queued_at: EpochMs,
    /// New queue deadline.
    pub queue_expires_at: EpochMs,
    /// One sentence.
    pub message: String,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// Fail success (CT-108).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailOutcome {
    /// The contract.
    pub contract_id: String,
    /// `FAILED`, `TIMED_OUT` for a late report (F2), or `SUBMITTED` for a redelivery (F3).
    pub status: Status,
    /// When it ended (the lease deadline for F2); absent for a redelivery.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<EpochMs>,
    /// When the redelivered contract becomes claimable again (F3, CT-188); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redelivery_at: Option<EpochMs>,
    /// One sentence.
    pub message: String,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// Cancel success (CT-184).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CancelOutcome {
    /// The contract.
    pub contract_id: String,
    /// Always `CANCELLED`.
    pub status: Status,
    /// It had a holder when it was cancelled (K2).
    pub was_claimed: bool,
    /// That holder, or `null`.
    pub holder: Option<AgentId>,
    /// It was cancelled already; nothing changed.
    pub already_cancelled: bool,
    /// The reason stored with the cancel.
    pub cancel_reason: String,
}

/// Fulfill success (CT-111).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FulfillOutcome {
    /// The contract.
    pub contract_id: String,
    /// Always `COMPLETED`.
    pub status: Status,
    /// When it ended.
    pub completed_at: EpochMs,
    /// The artifacts' fingerprints.
    pub artifacts_pointers: Vec<Pointer>,
    /// One sentence.
    pub message: String,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// The list view (CT-120), also `verify_contract.contract`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractSummary {
    /// The contract.
    pub contract_id: String,
    /// Who dispatched it.
    pub requester_agent: AgentId,
    /// Its target.
    pub target_agent: AgentId,
    /// Task type.
    pub task_type: String,
    /// Title.
    pub title: String,
    /// Stored status.
    pub status: Status,
    /// Past a deadline no sweep has recorded yet.
    pub is_logically_expired: bool,
    /// Dispatch instant.
    pub created_at: EpochMs,
    /// Last queueing.
    pub queued_at: EpochMs,
    /// Queue deadline.
    pub queue_expires_at: EpochMs,
    /// Lifetime ceiling.
    pub lifetime_ends_at: EpochMs,
    /// Start of the current window.
    pub claimed_at: Option<EpochMs>,
    /// Lease deadline.
    pub expires_at: Option<EpochMs>,
    /// When it ended.
    pub completed_at: Option<EpochMs>,
    /// Claims so far.
    pub claim_epoch: u64,
    /// Renewals in this claim.
    pub extend_count: u32,
    /// Releases.
    pub release_count: u32,
    /// Schema-invalid deliveries.
    pub retry_count: u32,
    /// Dirty deliveries in this claim.
    pub toctou_strikes: u32,
    /// Number of pointers.
    pub pointer_count: usize,
    /// Why it ended.
    pub end_reason: Option<EndReason>,
    /// A result or a salvaged result is stored.
    pub has_result: bool,
    /// History, cut to 200 characters.
    pub error_reason: Option<String>,
    /// Claims so far (CT-189).
    pub delivery_count: u32,
    /// Claims it may get before a lost lease ends it (CT-186).
    pub max_deliveries: u32,
    /// Before this instant it is not claimable (CT-186).
    pub available_at: Option<EpochMs>,
}

impl ContractSummary {
    /// The summary of `c` at `now`.
    pub fn of(c: &Contract, now: EpochMs) -> ContractSummary {
        ContractSummary {
            contract_id: c.contract_id.clone(),
            requester_agent: c.requester_agent.clone(),
            target_agent: c.target_agent.clone(),
            task_type: c.task_type.clone(),
            title: c.title.clone(),
            status: c.status,
            is_logically_expired: c.is_logically_expired(now),
            created_at: c.created_at,
            queued_at: c.queued_at,
            queue_expires_at: c.queue_expires_at,
            lifetime_ends_at: c.lifetime_ends_at,
            claimed_at: c.claimed_at,
            expires_at: c.expires_at,
            completed_at: c.completed_at,
            claim_epoch: c.claim_epoch,
            extend_count: c.extend_count,
            release_count: c.release_count,
            retry_count: c.retry_count,
            toctou_strikes: c.toctou_strikes,
            pointer_count: c.pointers.len(),
            end_reason: c.end_reason,
            has_result: c.result_summary.is_some() || c.salvaged_result.is_some(),
            error_reason: c
                .error_reason
                .as_deref()
                .map(|e| cut_chars(e, SUMMARY_ERROR_REASON_CHARS)),
            delivery_count: c.delivery_count,
            max_deliveries: c.max_deliveries,
            available_at: c.available_at,
        }
    }
}

/// The detail view (CT-120).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractDetail {
    /// The summary fields (with the complete `error_reason`).
    #[serde(flatten)]
    pub summary: ContractSummary,
    /// Execution window length.
    pub exec_ttl_sec: u32,
    /// Queue window length.
    pub queue_ttl_sec: u32,
    /// The retry key.
    pub idempotency_key: Option<String>,
    /// Context summary.
    pub context_summary: String,
    /// Workspace root.
    pub workspace_root: String,
    /// The baseline (`null` when omitted, CT-75).
    pub pointers: Option<Vec<Pointer>>,
    /// The result schema.
    pub contract_schema: Option<Map<String, Value>>,
    /// Latest drift.
    pub dirty_files: Option<Vec<Drift>>,
    /// The holder's fail reason.
    pub fail_reason: Option<String>,
    /// Delivered summary.
    pub result_summary: Option<String>,
    /// Delivered structured result.
    pub structured_output: Option<Map<String, Value>>,
    /// Artifacts.
    pub artifacts_pointers: Option<Vec<Pointer>>,
    /// The delivery kept when the contract ended on it.
    pub salvaged_result: Option<SalvagedResult>,
    /// The requester's reason when it was cancelled (CT-185).
    pub cancel_reason: Option<String>,
    /// Fields replaced by `null` to respect the 64 KiB bound.
    pub omitted_fields: Vec<String>,
}

impl ContractDetail {
    /// The full detail of `c` at `now`.
    pub fn of(c: &Contract, now: EpochMs) -> ContractDetail {
        let mut summary = ContractSummary::of(c, now);
        summary.error_reason = c.error_reason.clone();
        ContractDetail {
            summary,
            exec_ttl_sec: c.exec_ttl_sec,
            queue_ttl_sec: c.queue_ttl_sec,
            idempotency_key: c.idempotency_key.clone(),
            context_summary: c.context_summary.clone(),
            workspace_root: c.workspace_root.clone(),
            pointers: Some(c.pointers.clone()),
            contract_schema: c.contract_schema.clone(),
            dirty_files: c.dirty_files.clone(),
            fail_reason: c.fail_reason.clone(),
            result_summary: c.result_summary.clone(),
            structured_output: c.structured_output.clone(),
            artifacts_pointers: c.artifacts_pointers.clone(),
            salvaged_result: c.salvaged_result.clone(),
            cancel_reason: c.cancel_reason.clone(),
            omitted_fields: Vec::new(),
        }
    }

    /// Replaces the next omissible field (CT-75 order) by `null`; false when none is left.
    pub(crate) fn omit_next(&mut self) -> bool {
        let order = [
            "salvaged_result",
            "structured_output",
            "contract_schema",
            "artifacts_pointers",
            "pointers",
            "dirty_files",
        ];
        for name in order {
            if self.omitted_fields.iter().any(|f| f == name) {
                continue;
            }
            let present = match name {
                "salvaged_result" => self.salvaged_result.take().is_some(),
                "structured_output" => self.structured_output.take().is_some(),
                "contract_schema" => self.contract_schema.take().is_some(),
                "artifacts_pointers" => self.artifacts_pointers.take().is_some(),
                "pointers" => self.pointers.take().is_some(),
                _ => self.dirty_files.take().is_some(),
            };
            if present {
                self.omitted_fields.push(name.to_owned());
                return true;
            }
        }
        false
    }
}

/// An item of `inspect_mesh_state.contracts`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InspectItem {
    /// List view.
    Summary(Box<ContractSummary>),
    /// Detail view (with a `contract_id` filter).
    Detail(Box<ContractDetail>),
}

/// Inspect success (CT-118).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectOutcome {
    /// The length of `contracts`.
    pub total_returned: usize,
    /// The page.
    pub contracts: Vec<InspectItem>,
    /// Where the next page starts, or `None`.
    pub next_cursor: Option<String>,
    /// Counts per status (CT-76).
    pub counts: Counts,
    /// The reading's instant.
    pub now: EpochMs,
}

/// Verify success (CT-115).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyOutcome {
    /// The contract.
    pub contract_id: String,
    /// Stored status.
    pub status: Status,
    /// Past a deadline no sweep has recorded yet.
    pub is_logically_expired: bool,
    /// The baseline holds.
    pub valid: bool,
    /// A fulfill by this caller now would pass the holder and file checks.
    pub fulfillable: bool,
    /// What drifted.
    pub dirty_files: Vec<Drift>,
    /// Pointers verified.
    pub checked: usize,
    /// `1 − toctou_strikes` while `CLAIMED`, else 0.
    pub toctou_strikes_left: u32,
    /// The reading after verification.
    pub now: EpochMs,
    /// The record's summary.
    pub contract: ContractSummary,
    /// `NO_IDENTITY` when the caller has no identity.
    pub warnings: Vec<Warning>,
}
