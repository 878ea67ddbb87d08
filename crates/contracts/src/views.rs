//! What the facade's operations answer. Each type serializes to the answer of the matching MCP tool,
//! field for field (instants as milliseconds since 1970 UTC, windows as whole seconds), without the
//! answer-only fields: `ok` (and `has_task` of a poll) are added when an outcome becomes a tool answer
//! ([`crate::args`]).

use std::path::PathBuf;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::limits::{MAX_EXTENDS_PER_CLAIM, MAX_RELEASES, SCHEMA_INVALID_LIMIT, SUMMARY_ERROR_REASON_CHARS};
use crate::model::{
    AgentId, Contract, ContractId, Drift, EndReason, EpochMs, Pointer, SalvagedResult, Status, Warning,
    instant,
};
use crate::request::HolderRef;
use crate::store::Counts;
use crate::transition::cut_chars;

fn opt_instant(ms: Option<EpochMs>) -> Option<DateTime<Utc>> {
    ms.map(instant)
}

fn secs(s: u32) -> Duration {
    Duration::from_secs(u64::from(s))
}

/// `output` read as a `T`: `Ok(None)` when there is none.
fn read_output<T: DeserializeOwned>(
    output: Option<&Map<String, Value>>,
) -> Result<Option<T>, serde_json::Error> {
    output
        .map(|o| serde_json::from_value(Value::Object(o.clone())))
        .transpose()
}

/// What a dispatch answers: the contract as stored (or, on an idempotent replay, as it stands).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DispatchOutcome {
    /// The contract.
    pub contract_id: ContractId,
    /// `SUBMITTED`, or the current status on a replay.
    pub status: Status,
    /// True when an earlier dispatch with the same key and arguments answered.
    pub idempotent_replay: bool,
    /// Who dispatched it.
    pub requester_agent: AgentId,
    /// Its target.
    pub target_agent: AgentId,
    /// Dispatch instant.
    #[serde(serialize_with = "crate::wire::ms")]
    pub created_at: DateTime<Utc>,
    /// Queue deadline.
    #[serde(serialize_with = "crate::wire::ms")]
    pub queue_expires_at: DateTime<Utc>,
    /// Lifetime ceiling.
    #[serde(serialize_with = "crate::wire::ms")]
    pub lifetime_ends_at: DateTime<Utc>,
    /// The lease a claim gets.
    #[serde(rename = "exec_ttl_sec", serialize_with = "crate::wire::secs")]
    pub exec_ttl: Duration,
    /// How long it may wait to be claimed.
    #[serde(rename = "queue_ttl_sec", serialize_with = "crate::wire::secs")]
    pub queue_ttl: Duration,
    /// The baseline.
    pub pointers: Vec<Pointer>,
    /// `LARGE_POINTER` warnings.
    pub warnings: Vec<Warning>,
}

/// A contract a poll closed `POINTER_STALE` on its way because its files had changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// The contract.
    pub contract_id: ContractId,
    /// Its title.
    pub title: String,
    /// What drifted.
    pub dirty_files: Vec<Drift>,
}

/// What a poll hands to the holder: the work, its files as pinned, and the claim ([`HeldContract::holder`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeldContract {
    /// The contract.
    pub contract_id: ContractId,
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
    pub workspace_root: PathBuf,
    /// The baseline.
    pub pointers: Vec<Pointer>,
    /// The result schema.
    pub contract_schema: Option<Map<String, Value>>,
    /// Start of the lease.
    #[serde(serialize_with = "crate::wire::ms")]
    pub claimed_at: DateTime<Utc>,
    /// The lease a claim gets.
    #[serde(rename = "exec_ttl_sec", serialize_with = "crate::wire::secs")]
    pub exec_ttl: Duration,
    /// The fencing token.
    pub claim_epoch: u64,
    /// Lease deadline.
    #[serde(serialize_with = "crate::wire::ms")]
    pub expires_at: DateTime<Utc>,
    /// Lifetime ceiling.
    #[serde(serialize_with = "crate::wire::ms")]
    pub lifetime_ends_at: DateTime<Utc>,
    /// Renewals left in this claim.
    pub extends_left: u32,
    /// Releases left.
    pub releases_left: u32,
    /// Schema-invalid deliveries left before the breaker.
    pub schema_attempts_left: u32,
    /// Claims so far, this one included.
    pub delivery_count: u32,
    /// Claims it may get before a lost lease ends it.
    pub max_deliveries: u32,
    /// When it last became claimable after a redelivery, or `None`.
    #[serde(serialize_with = "crate::wire::opt_ms")]
    pub available_at: Option<DateTime<Utc>>,
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
            workspace_root: PathBuf::from(&c.workspace_root),
            pointers: c.pointers.clone(),
            contract_schema: c.contract_schema.clone(),
            claimed_at: instant(c.claimed_at.unwrap_or_default()),
            exec_ttl: secs(c.exec_ttl_sec),
            claim_epoch: c.claim_epoch,
            expires_at: instant(c.expires_at.unwrap_or_default()),
            lifetime_ends_at: instant(c.lifetime_ends_at),
            extends_left: MAX_EXTENDS_PER_CLAIM.saturating_sub(c.extend_count),
            releases_left: MAX_RELEASES.saturating_sub(c.release_count),
            schema_attempts_left: SCHEMA_INVALID_LIMIT.saturating_sub(c.retry_count),
            delivery_count: c.delivery_count,
            max_deliveries: c.max_deliveries,
            available_at: opt_instant(c.available_at),
        }
    }

    /// The claim, to extend, release, fail or fulfil it with.
    pub fn holder(&self) -> HolderRef {
        HolderRef::new(
            self.contract_id.clone(),
            self.target_agent.clone(),
            self.claim_epoch,
        )
    }
}

/// What a poll answers: a claimed contract, or nothing claimed.
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
        /// How long the call waited (a waiting poll only; written as `waited_ms`).
        #[serde(
            rename = "waited_ms",
            skip_serializing_if = "Option::is_none",
            serialize_with = "crate::wire::opt_duration_ms"
        )]
        waited: Option<Duration>,
    },
    /// Nothing claimed.
    Empty {
        /// Why nothing was claimed (no work, the stale-contract limit of one poll, or a cancelled call).
        message: String,
        /// Contracts closed stale on the way.
        skipped_stale: Vec<Skipped>,
        /// How long the call waited (a waiting poll only; written as `waited_ms`).
        #[serde(
            rename = "waited_ms",
            skip_serializing_if = "Option::is_none",
            serialize_with = "crate::wire::opt_duration_ms"
        )]
        waited: Option<Duration>,
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

/// What a lease renewal answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtendOutcome {
    /// The contract.
    pub contract_id: ContractId,
    /// Always `CLAIMED`.
    pub status: Status,
    /// The fencing token.
    pub claim_epoch: u64,
    /// Start of the renewed window.
    #[serde(serialize_with = "crate::wire::ms")]
    pub claimed_at: DateTime<Utc>,
    /// New deadline.
    #[serde(serialize_with = "crate::wire::ms")]
    pub expires_at: DateTime<Utc>,
    /// Renewals used.
    pub extend_count: u32,
    /// Renewals left.
    pub extends_left: u32,
    /// Lifetime ceiling.
    #[serde(serialize_with = "crate::wire::ms")]
    pub lifetime_ends_at: DateTime<Utc>,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// What a release answers: the contract is back in the queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReleaseOutcome {
    /// The contract.
    pub contract_id: ContractId,
    /// Always `SUBMITTED`.
    pub status: Status,
    /// Releases used.
    pub release_count: u32,
    /// Releases left.
    pub releases_left: u32,
    /// When it re-entered the queue.
    #[serde(serialize_with = "crate::wire::ms")]
    pub queued_at: DateTime<Utc>,
    /// New queue deadline.
    #[serde(serialize_with = "crate::wire::ms")]
    pub queue_expires_at: DateTime<Utc>,
    /// One sentence.
    pub message: String,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// What a failure answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailOutcome {
    /// The contract.
    pub contract_id: ContractId,
    /// `FAILED`, `TIMED_OUT` for a report after the lease ran out, or `SUBMITTED` for a retryable
    /// failure that went back to the queue.
    pub status: Status,
    /// When it ended (the lease deadline for a report after the lease ran out); absent for a
    /// redelivery.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::wire::opt_ms"
    )]
    pub completed_at: Option<DateTime<Utc>>,
    /// When the redelivered contract becomes claimable again (a retryable failure with deliveries
    /// left); absent otherwise.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::wire::opt_ms"
    )]
    pub redelivery_at: Option<DateTime<Utc>>,
    /// One sentence.
    pub message: String,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// What a cancel answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CancelOutcome {
    /// The contract.
    pub contract_id: ContractId,
    /// Always `CANCELLED`.
    pub status: Status,
    /// It had a holder when it was cancelled.
    pub was_claimed: bool,
    /// That holder, or `null`.
    pub holder: Option<AgentId>,
    /// It was cancelled already; nothing changed.
    pub already_cancelled: bool,
    /// The reason stored with the cancel.
    pub cancel_reason: String,
}

/// What an accepted delivery answers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FulfillOutcome {
    /// The contract.
    pub contract_id: ContractId,
    /// Always `COMPLETED`.
    pub status: Status,
    /// When it ended.
    #[serde(serialize_with = "crate::wire::ms")]
    pub completed_at: DateTime<Utc>,
    /// The artifacts' fingerprints.
    pub artifacts_pointers: Vec<Pointer>,
    /// One sentence.
    pub message: String,
    /// `EPOCH_NOT_SUPPLIED`.
    pub warnings: Vec<Warning>,
}

/// A contract in a list (an inspect page, or the record a verify checked).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractSummary {
    /// The contract.
    pub contract_id: ContractId,
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
    #[serde(serialize_with = "crate::wire::ms")]
    pub created_at: DateTime<Utc>,
    /// Last queueing.
    #[serde(serialize_with = "crate::wire::ms")]
    pub queued_at: DateTime<Utc>,
    /// Queue deadline.
    #[serde(serialize_with = "crate::wire::ms")]
    pub queue_expires_at: DateTime<Utc>,
    /// Lifetime ceiling.
    #[serde(serialize_with = "crate::wire::ms")]
    pub lifetime_ends_at: DateTime<Utc>,
    /// Start of the current window.
    #[serde(serialize_with = "crate::wire::opt_ms")]
    pub claimed_at: Option<DateTime<Utc>>,
    /// Lease deadline.
    #[serde(serialize_with = "crate::wire::opt_ms")]
    pub expires_at: Option<DateTime<Utc>>,
    /// When it ended.
    #[serde(serialize_with = "crate::wire::opt_ms")]
    pub completed_at: Option<DateTime<Utc>>,
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
    /// Claims so far.
    pub delivery_count: u32,
    /// Claims it may get before a lost lease ends it.
    pub max_deliveries: u32,
    /// Before this instant it is not claimable (a redelivery's backoff).
    #[serde(serialize_with = "crate::wire::opt_ms")]
    pub available_at: Option<DateTime<Utc>>,
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
            created_at: instant(c.created_at),
            queued_at: instant(c.queued_at),
            queue_expires_at: instant(c.queue_expires_at),
            lifetime_ends_at: instant(c.lifetime_ends_at),
            claimed_at: opt_instant(c.claimed_at),
            expires_at: opt_instant(c.expires_at),
            completed_at: opt_instant(c.completed_at),
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
            available_at: opt_instant(c.available_at),
        }
    }
}

/// A contract in full (an inspect with a `contract_id`), its result included: read it back typed with
/// [`ContractDetail::output`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContractDetail {
    /// The summary fields (with the complete `error_reason`).
    #[serde(flatten)]
    pub summary: ContractSummary,
    /// The lease a claim gets.
    #[serde(rename = "exec_ttl_sec", serialize_with = "crate::wire::secs")]
    pub exec_ttl: Duration,
    /// How long it may wait to be claimed.
    #[serde(rename = "queue_ttl_sec", serialize_with = "crate::wire::secs")]
    pub queue_ttl: Duration,
    /// The retry key.
    pub idempotency_key: Option<String>,
    /// Context summary.
    pub context_summary: String,
    /// Workspace root.
    pub workspace_root: PathBuf,
    /// The baseline (`None` when omitted to keep a tool answer within 64 KiB).
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
    /// The requester's reason when it was cancelled.
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
            exec_ttl: secs(c.exec_ttl_sec),
            queue_ttl: secs(c.queue_ttl_sec),
            idempotency_key: c.idempotency_key.clone(),
            context_summary: c.context_summary.clone(),
            workspace_root: PathBuf::from(&c.workspace_root),
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

    /// The delivered structured result read as a `T`: `Ok(None)` when there is none (no delivery yet,
    /// a delivery without one, or omitted from a bounded answer), an error when it does not
    /// deserialize as a `T`.
    ///
    /// ```
    /// use shiftwork_contracts::views::ContractDetail;
    /// #[derive(serde::Deserialize, PartialEq, Debug)]
    /// struct Review { verdict: String }
    /// # use shiftwork_contracts::Contract;
    /// # // A record as a store keeps it: SUBMITTED from alice to bob, dispatched at 0 with the default TTLs.
    /// # fn contract() -> Contract {
    /// #     serde_json::from_value(serde_json::json!({
    /// #         "seq": 1, "contract_id": "0196f3a0-0000-7000-8000-000000000001",
    /// #         "requester_agent": "alice", "target_agent": "bob", "payload_sha256": "0".repeat(64),
    /// #         "task_type": "review", "title": "Review add()", "context_summary": "", "workspace_root": "/w",
    /// #         "pointers": [], "exec_ttl_sec": 1800, "queue_ttl_sec": 14_400, "status": "SUBMITTED",
    /// #         "created_at": 0, "queued_at": 0, "queue_expires_at": 14_400_000, "lifetime_ends_at": 57_600_000,
    /// #         "claim_epoch": 0, "extend_count": 0, "release_count": 0, "retry_count": 0,
    /// #         "toctou_strikes": 0, "max_deliveries": 1, "delivery_count": 0,
    /// #     }))
    /// #     .unwrap()
    /// # }
    /// let mut c = contract(); // a SUBMITTED record, as a store keeps it
    /// c.structured_output = serde_json::json!({"verdict": "approve"}).as_object().cloned();
    /// let detail = ContractDetail::of(&c, 0);
    /// assert_eq!(detail.output::<Review>().unwrap(), Some(Review { verdict: "approve".into() }));
    /// ```
    pub fn output<T: DeserializeOwned>(&self) -> Result<Option<T>, serde_json::Error> {
        read_output(self.structured_output.as_ref())
    }

    /// Replaces the next omissible field by `null` (largest and least needed first); false when none
    /// is left.
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

/// A contract of an inspect page: the summary of a list, or the detail of one contract.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InspectItem {
    /// List view.
    Summary(Box<ContractSummary>),
    /// Detail view (with a `contract_id` filter).
    Detail(Box<ContractDetail>),
}

impl InspectItem {
    /// The contract's id.
    pub fn contract_id(&self) -> &ContractId {
        &self.summary().contract_id
    }

    /// The summary fields.
    pub fn summary(&self) -> &ContractSummary {
        match self {
            InspectItem::Summary(s) => s,
            InspectItem::Detail(d) => &d.summary,
        }
    }

    /// The detail view, when the page holds one (an inspect with a `contract_id`).
    pub fn detail(&self) -> Option<&ContractDetail> {
        match self {
            InspectItem::Summary(_) => None,
            InspectItem::Detail(d) => Some(d),
        }
    }

    /// The delivered structured result read as a `T` ([`ContractDetail::output`]); `Ok(None)` for a
    /// list item, which carries none.
    pub fn output<T: DeserializeOwned>(&self) -> Result<Option<T>, serde_json::Error> {
        self.detail().map_or(Ok(None), ContractDetail::output)
    }
}

/// What an inspect answers: a page of contracts and the counts per status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectOutcome {
    /// The length of `contracts`.
    pub total_returned: usize,
    /// The page.
    pub contracts: Vec<InspectItem>,
    /// Where the next page starts, or `None`.
    pub next_cursor: Option<String>,
    /// Counts per status of the contracts the filters other than `status` select.
    pub counts: Counts,
    /// The reading's instant.
    #[serde(serialize_with = "crate::wire::ms")]
    pub now: DateTime<Utc>,
    /// How long finished contracts are kept after they end before the retention purge deletes them
    /// (written `finished_kept_sec`, whole seconds), or `None` (`null`): until deleted by hand.
    #[serde(rename = "finished_kept_sec", serialize_with = "crate::wire::opt_secs")]
    pub finished_kept: Option<std::time::Duration>,
}

/// What a verify answers: whether the pinned files still match, and whether the caller could deliver.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerifyOutcome {
    /// The contract.
    pub contract_id: ContractId,
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
    #[serde(serialize_with = "crate::wire::ms")]
    pub now: DateTime<Utc>,
    /// The record's summary.
    pub contract: ContractSummary,
    /// `NO_IDENTITY` when the caller has no identity.
    pub warnings: Vec<Warning>,
}
