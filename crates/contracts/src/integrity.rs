//! The invariants every stored record keeps, checked on one record (store-wide uniqueness is the
//! store's).
//!
//! ```
//! # use shiftwork_contracts::Contract;
//! # // A record as a store keeps it: SUBMITTED from alice to bob, dispatched at 0 with the default TTLs.
//! # fn contract() -> Contract {
//! #     serde_json::from_value(serde_json::json!({
//! #         "seq": 1, "contract_id": "0196f3a0-0000-7000-8000-000000000001",
//! #         "requester_agent": "alice", "target_agent": "bob", "payload_sha256": "0".repeat(64),
//! #         "task_type": "review", "title": "Review add()", "context_summary": "", "workspace_root": "/w",
//! #         "pointers": [], "exec_ttl_sec": 1800, "queue_ttl_sec": 14_400, "status": "SUBMITTED",
//! #         "created_at": 0, "queued_at": 0, "queue_expires_at": 14_400_000, "lifetime_ends_at": 57_600_000,
//! #         "claim_epoch": 0, "extend_count": 0, "release_count": 0, "retry_count": 0,
//! #         "toctou_strikes": 0, "max_deliveries": 1, "delivery_count": 0,
//! #     }))
//! #     .unwrap()
//! # }
//! let c = contract(); // a SUBMITTED record, as a store keeps it
//! assert!(shiftwork_contracts::integrity::violations(&c).is_empty());
//! ```

use serde::Serialize;

use crate::limits::{
    LIFETIME_FACTOR, MAX_DELIVERIES, MAX_EXTENDS_PER_CLAIM, MAX_POINTERS, MAX_RELEASES,
    MAX_TOTAL_POINTER_BYTES, SCHEMA_INVALID_LIMIT,
};
use crate::model::{Contract, EndReason, Status};

/// The result of `check_integrity`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IntegrityReport {
    /// Records checked.
    pub records: u64,
    /// The violations found, at most 100, each a sentence naming the contract.
    pub violations: Vec<String>,
}

impl IntegrityReport {
    /// True when nothing was found.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }

    /// Adds a violation unless the report already holds 100.
    pub fn push(&mut self, violation: String) {
        if self.violations.len() < crate::limits::MAX_INTEGRITY_VIOLATIONS {
            self.violations.push(violation);
        }
    }
}

/// Every record invariant that `c` breaks, as sentences naming the contract.
pub fn violations(c: &Contract) -> Vec<String> {
    let mut out = Vec::new();
    let mut check = |ok: bool, what: &str| {
        if !ok {
            out.push(format!("contract {} (seq {}): {what}", c.contract_id, c.seq));
        }
    };
    let terminal = c.status.is_terminal();
    match c.status {
        Status::Submitted => check(
            c.claimed_at.is_none()
                && c.expires_at.is_none()
                && c.completed_at.is_none()
                && c.end_reason.is_none(),
            "SUBMITTED with claimed_at, expires_at, completed_at or end_reason set",
        ),
        Status::Claimed => {
            check(c.claim_epoch >= 1, "CLAIMED with claim_epoch 0");
            check(
                matches!((c.claimed_at, c.expires_at), (Some(a), Some(e)) if a < e && e <= c.lifetime_ends_at),
                "CLAIMED without claimed_at < expires_at <= lifetime_ends_at",
            );
            check(
                c.completed_at.is_none() && c.end_reason.is_none(),
                "CLAIMED with completed_at or end_reason set",
            );
        }
        _ => {}
    }
    check(
        terminal == c.completed_at.is_some() && terminal == c.end_reason.is_some(),
        "terminal status, completed_at and end_reason disagree",
    );
    if let Some(reason) = c.end_reason {
        let pair_ok = matches!(
            (c.status, reason),
            (Status::Completed, EndReason::Fulfilled)
                | (
                    Status::Failed,
                    EndReason::WorkerFailed | EndReason::SchemaRetriesExhausted
                )
                | (
                    Status::TimedOut,
                    EndReason::QueueTtlExpired | EndReason::ExecTtlExpired
                )
                | (
                    Status::PointerStale,
                    EndReason::PointerDriftAtClaim | EndReason::PointerDriftAtFulfill
                )
                | (Status::Cancelled, EndReason::CancelledByRequester)
        );
        check(pair_ok, "status and end_reason do not form an allowed pair");
    }
    check(
        c.lifetime_ends_at == c.created_at + LIFETIME_FACTOR * i64::from(c.queue_ttl_sec) * 1000,
        "lifetime_ends_at is not created_at + 4 × queue_ttl_sec",
    );
    check(c.created_at <= c.queued_at, "queued_at is before created_at");
    check(
        c.queue_expires_at <= c.lifetime_ends_at,
        "queue_expires_at is after lifetime_ends_at",
    );
    check(c.extend_count <= MAX_EXTENDS_PER_CLAIM, "extend_count above 5");
    check(c.release_count <= MAX_RELEASES, "release_count above 3");
    check(
        u64::from(c.release_count) <= c.claim_epoch,
        "release_count above claim_epoch",
    );
    check(c.retry_count <= SCHEMA_INVALID_LIMIT, "retry_count above 3");
    check(
        (c.retry_count == SCHEMA_INVALID_LIMIT) == (c.end_reason == Some(EndReason::SchemaRetriesExhausted)),
        "retry_count = 3 and end_reason SCHEMA_RETRIES_EXHAUSTED disagree",
    );
    check(c.toctou_strikes <= 2, "toctou_strikes above 2");
    check(
        (c.toctou_strikes == 2) == (c.end_reason == Some(EndReason::PointerDriftAtFulfill)),
        "toctou_strikes = 2 and end_reason POINTER_DRIFT_AT_FULFILL disagree",
    );
    check(
        (c.status == Status::Completed) == c.result_summary.is_some(),
        "status COMPLETED and result_summary disagree",
    );
    check(
        c.salvaged_result.is_none()
            || matches!(
                c.end_reason,
                Some(EndReason::PointerDriftAtFulfill | EndReason::SchemaRetriesExhausted)
            ),
        "salvaged_result on a contract that did not end on a delivery",
    );
    check(
        c.claim_epoch > 0
            || c.status == Status::Submitted
            || c.status == Status::Cancelled
            || (c.status == Status::TimedOut && c.end_reason == Some(EndReason::QueueTtlExpired)),
        "claim_epoch 0 on a contract that was never claimed but is neither SUBMITTED, CANCELLED nor queue-expired",
    );
    check(
        (1..=MAX_DELIVERIES).contains(&c.max_deliveries),
        "max_deliveries outside 1 ..= 10",
    );
    check(
        u64::from(c.delivery_count) <= c.claim_epoch,
        "delivery_count above claim_epoch",
    );
    check(
        c.status != Status::Claimed || c.delivery_count >= 1,
        "CLAIMED with delivery_count 0",
    );
    check(
        (c.status == Status::Cancelled) == c.cancel_reason.is_some(),
        "status CANCELLED and cancel_reason disagree",
    );
    check(c.pointers.len() <= MAX_POINTERS, "more than 32 pointers");
    check(
        c.pointers.iter().map(|p| p.size).sum::<u64>() <= MAX_TOTAL_POINTER_BYTES,
        "pointer sizes sum above 1 GiB",
    );
    out
}
