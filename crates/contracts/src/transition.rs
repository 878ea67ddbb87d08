//! The pure transition functions of the contract's state machine: no I/O, no clock.
//!
//! Every store calls these, so every store judges identically. The instant `now` is an argument; the
//! verification result and the schema verdict are inputs of the fulfill command.
//!
//! ```
//! use shiftwork_contracts::transition::{self, Command, Holder, Policy, Reply};
//! # use shiftwork_contracts::AgentId;
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
//! let bob = AgentId::new("bob").unwrap();
//! let submitted = contract(); // SUBMITTED for bob, dispatched at 0 with the default TTLs
//! let claimed = transition::claim(&submitted, &bob, 60_000).unwrap();
//! assert_eq!(claimed.claim_epoch, 1);
//! assert_eq!(claimed.expires_at, Some(60_000 + 1_800_000));
//! let step = transition::apply(
//!     &claimed,
//!     &Command::Extend { holder: Holder { agent_id: bob, claim_epoch: Some(1) } },
//!     120_000,
//!     &Policy::default(),
//! );
//! assert!(matches!(step.reply, Reply::Done(ref c) if c.extend_count == 1));
//! ```

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{ContractRefusal, RefusalCode, RefusalDetails};
use crate::limits::{
    MAX_ERROR_REASON_CHARS, MAX_EXTENDS_PER_CLAIM, MAX_REDELIVERY_BACKOFF_MS, MAX_RELEASES,
    REDELIVERY_BACKOFF_MS, SCHEMA_INVALID_LIMIT, TOCTOU_STRIKES,
};
use crate::model::{AgentId, Contract, Drift, EndReason, EpochMs, Pointer, SalvagedResult, Status, instant};

/// The caller of a holder operation, as far as the record is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The caller's identity.
    pub agent_id: AgentId,
    /// The caller's epoch, if given.
    pub claim_epoch: Option<u64>,
}

/// Settings that change judgements.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Policy {
    /// Refuse holder operations without an epoch (`EPOCH_REQUIRED`).
    pub require_claim_epoch: bool,
}

/// One schema validation error.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
pub struct ValidationError {
    /// JSON Pointer of the failing value (`""` for the root).
    pub instance_path: String,
    /// The validator's message.
    pub message: String,
}

/// What a fulfill delivers.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The summary.
    pub result_summary: String,
    /// The structured result.
    pub structured_output: Option<Map<String, Value>>,
    /// Fingerprints of the files the holder produced.
    pub artifacts_pointers: Vec<Pointer>,
}

/// The outcome of the checks a fulfill runs outside the store (the pinned files, then the result
/// schema).
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The baseline drifted (non-empty list); the output was not validated.
    Drift(Vec<Drift>),
    /// The baseline holds and the output is valid.
    Valid,
    /// The baseline holds and the output is invalid (sorted errors, at most 10, at least 1).
    Invalid(Vec<ValidationError>),
}

/// The commands of [`apply`]: what a poll found, and each holder and requester operation.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// The poll's verification found drift in the claim of `epoch`: the contract ends `POINTER_STALE`.
    StaleAtClaim {
        /// The epoch the claim gave.
        epoch: u64,
        /// The drift found (non-empty).
        drift: Vec<Drift>,
    },
    /// The claim of `epoch` is undone: the poll's verification could not run, or the waiting poll
    /// that made it was cancelled before it could answer.
    RevertClaim {
        /// The epoch the claim gave.
        epoch: u64,
        /// Why.
        why: Revert,
    },
    /// A lease renewal.
    Extend {
        /// The caller.
        holder: Holder,
    },
    /// A release back to the queue.
    Release {
        /// The caller.
        holder: Holder,
        /// The caller's reason, if any.
        reason: Option<String>,
    },
    /// A failure (or, after the lease ran out, the holder's late report), or with `retryable` a
    /// return to the queue for another delivery.
    Fail {
        /// The caller.
        holder: Holder,
        /// The caller's reason.
        reason: String,
        /// Return the contract to the queue when it has deliveries left.
        retryable: bool,
    },
    /// The requester withdraws the contract.
    Cancel {
        /// The caller (must be the requester).
        requester: AgentId,
        /// The requester's reason.
        reason: String,
    },
    /// The fulfill pre-check: expiry step, holder check and status matrix only.
    FulfillCheck {
        /// The caller.
        holder: Holder,
    },
    /// A delivery, with what the checks outside the store found.
    Fulfill {
        /// The caller.
        holder: Holder,
        /// What was delivered.
        delivery: Delivery,
        /// What verification and validation found.
        verdict: Verdict,
    },
}

impl Command {
    /// The holder making the call, for the holder commands.
    pub fn holder(&self) -> Option<&Holder> {
        match self {
            Command::Extend { holder }
            | Command::Release { holder, .. }
            | Command::Fail { holder, .. }
            | Command::FulfillCheck { holder }
            | Command::Fulfill { holder, .. } => Some(holder),
            Command::StaleAtClaim { .. } | Command::RevertClaim { .. } | Command::Cancel { .. } => None,
        }
    }
}

/// Why a claim is undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revert {
    /// The poll's verification could not run.
    CheckFailed,
    /// The poll that claimed it was cancelled before it answered (waiting or not).
    Cancelled,
}

/// The reply of a step.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The operation succeeded; the record as it stands afterwards.
    Done(Box<Contract>),
    /// The operation had already taken effect (a second cancel); nothing was written.
    Already(Box<Contract>),
    /// The operation was refused (the record may still have changed: a deadline recorded before the
    /// refusal, or a delivery that counts against the holder).
    Refused(ContractRefusal),
    /// A guarded internal transition (a stale or undone claim) did not apply because its guard
    /// failed; nothing of its
    /// own was written.
    GuardFailed,
}

/// What [`apply`] decided: the record to write (if any) and the reply.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    /// The successor to persist, or `None` when nothing changes.
    pub next: Option<Contract>,
    /// The reply.
    pub reply: Reply,
}

/// The redelivery backoff after `delivery_count` deliveries: 30 s × 2^(n−1), at most 1 h.
///
/// ```
/// use shiftwork_contracts::transition::backoff_ms;
/// assert_eq!((backoff_ms(1), backoff_ms(2), backoff_ms(3)), (30_000, 60_000, 120_000));
/// assert_eq!(backoff_ms(10), 3_600_000);
/// ```
pub fn backoff_ms(delivery_count: u32) -> i64 {
    let shift = delivery_count.saturating_sub(1).min(7);
    (REDELIVERY_BACKOFF_MS << shift).min(MAX_REDELIVERY_BACKOFF_MS)
}

/// `c`, claimed, back in the queue at `now` after its backoff (a lost lease or a retryable failure
/// with deliveries left), or `None`
/// when it has no delivery left or the backoff would reach its lifetime ceiling.
fn redeliver(c: &Contract, now: EpochMs, entry: &str) -> Option<Contract> {
    if c.delivery_count >= c.max_deliveries {
        return None;
    }
    let available_at = now.saturating_add(backoff_ms(c.delivery_count));
    if available_at >= c.lifetime_ends_at {
        return None;
    }
    let mut next = c.clone();
    next.status = Status::Submitted;
    next.queued_at = now;
    next.available_at = Some(available_at);
    next.queue_expires_at = available_at
        .saturating_add(i64::from(c.queue_ttl_sec) * 1000)
        .min(c.lifetime_ends_at);
    next.claimed_at = None;
    next.expires_at = None;
    next.extend_count = 0;
    next.toctou_strikes = 0;
    record(&mut next, entry);
    Some(next)
}

/// The history entry of a redelivery after a lost lease.
pub const REDELIVERED_AFTER_TIMEOUT: &str = "REDELIVERED: EXEC_TTL_EXPIRED";

/// The successor of a record that is logically expired at `now`, or `None`: past its queue window
/// it is `TIMED_OUT`; past its lease it is redelivered when it has deliveries left, `TIMED_OUT`
/// otherwise.
pub fn expire(c: &Contract, now: EpochMs) -> Option<Contract> {
    if !c.is_logically_expired(now) {
        return None;
    }
    let mut next = c.clone();
    match c.status {
        Status::Submitted => {
            next.end_reason = Some(EndReason::QueueTtlExpired);
            next.completed_at = Some(c.queue_expires_at);
        }
        Status::Claimed => {
            if let Some(again) = redeliver(c, now, REDELIVERED_AFTER_TIMEOUT) {
                return Some(again);
            }
            next.end_reason = Some(EndReason::ExecTtlExpired);
            next.completed_at = c.expires_at;
        }
        _ => return None,
    }
    next.status = Status::TimedOut;
    Some(next)
}

/// The claim: `agent` claims `c` at `now`, or `None` when the guard fails (wrong status, wrong agent, past the
/// queue deadline, before `available_at`). The "oldest first" part of the guard is the store's.
pub fn claim(c: &Contract, agent: &AgentId, now: EpochMs) -> Option<Contract> {
    if &c.target_agent != agent || !c.is_claimable(now) {
        return None;
    }
    let mut next = c.clone();
    next.status = Status::Claimed;
    next.claim_epoch += 1;
    next.delivery_count = next.delivery_count.saturating_add(1);
    next.claimed_at = Some(now);
    next.expires_at = Some(lease_end(c, now));
    next.extend_count = 0;
    next.toctou_strikes = 0;
    next.dirty_files = None;
    Some(next)
}

fn lease_end(c: &Contract, now: EpochMs) -> EpochMs {
    now.saturating_add(i64::from(c.exec_ttl_sec) * 1000)
        .min(c.lifetime_ends_at)
}

/// Applies `command` to `c` at `now`: first the expiry step, then the command's guards and
/// effects.
pub fn apply(c: &Contract, command: &Command, now: EpochMs, policy: &Policy) -> Step {
    let expired = expire(c, now);
    let current = expired.as_ref().unwrap_or(c);
    let step = judge(current, command, now, policy);
    match (step.next, expired) {
        (Some(next), _) => Step {
            next: Some(next),
            reply: step.reply,
        },
        (None, expired) => Step {
            next: expired,
            reply: step.reply,
        },
    }
}

fn judge(c: &Contract, command: &Command, now: EpochMs, policy: &Policy) -> Step {
    match command {
        Command::StaleAtClaim { epoch, drift } => {
            if c.status != Status::Claimed || c.claim_epoch != *epoch {
                return unchanged(Reply::GuardFailed);
            }
            let mut next = c.clone();
            end(
                &mut next,
                Status::PointerStale,
                EndReason::PointerDriftAtClaim,
                now,
            );
            next.dirty_files = Some(drift.clone());
            record(
                &mut next,
                &format!("POINTER_STALE_AT_CLAIM: {}", drift_list(drift)),
            );
            done(next)
        }
        Command::RevertClaim { epoch, why } => {
            if c.status != Status::Claimed || c.claim_epoch != *epoch {
                return unchanged(Reply::GuardFailed);
            }
            let mut next = c.clone();
            next.status = Status::Submitted;
            next.claimed_at = None;
            next.expires_at = None;
            // The delivery never reached a holder (CT-190 counts the claims holders saw).
            next.delivery_count = next.delivery_count.saturating_sub(1);
            record(
                &mut next,
                match why {
                    Revert::CheckFailed => "CLAIM_REVERTED: pointer check could not run",
                    Revert::Cancelled => "CLAIM_REVERTED: the poll was cancelled",
                },
            );
            done(next)
        }
        Command::Extend { holder } => holder_op(c, holder, policy, |c| {
            if c.extend_count >= MAX_EXTENDS_PER_CLAIM {
                return refused(refusal_extend_limit(c));
            }
            let new_end = now.saturating_add(i64::from(c.exec_ttl_sec) * 1000);
            if new_end > c.lifetime_ends_at {
                return refused(refusal_ceiling(c));
            }
            let mut next = c.clone();
            next.claimed_at = Some(now);
            next.expires_at = Some(new_end);
            next.extend_count += 1;
            done(next)
        }),
        Command::Release { holder, reason } => holder_op(c, holder, policy, |c| {
            if c.release_count >= MAX_RELEASES {
                return refused(refusal_release_limit(c));
            }
            let mut next = c.clone();
            next.status = Status::Submitted;
            next.queued_at = now;
            next.queue_expires_at = now
                .saturating_add(i64::from(c.queue_ttl_sec) * 1000)
                .min(c.lifetime_ends_at);
            next.claimed_at = None;
            next.expires_at = None;
            next.extend_count = 0;
            next.toctou_strikes = 0;
            next.available_at = None;
            next.release_count += 1;
            let entry = match reason.as_deref().filter(|r| !r.is_empty()) {
                Some(r) => format!("RELEASED_BY_HOLDER: {}", one_line(r)),
                None => String::from("RELEASED_BY_HOLDER"),
            };
            record(&mut next, &entry);
            done(next)
        }),
        Command::Fail {
            holder,
            reason,
            retryable,
        } => {
            if let Some(refusal) = holder_check(c, holder, policy) {
                return refused(refusal);
            }
            match (c.status, c.end_reason) {
                (Status::Claimed, _)
                    if *retryable
                        && let Some(mut next) = redeliver(
                            c,
                            now,
                            &format!("REDELIVERED: WORKER_FAILED: {}", one_line(reason)),
                        ) =>
                {
                    next.fail_reason = Some(reason.clone());
                    done(next)
                }
                (Status::Claimed, _) => {
                    let mut next = c.clone();
                    end(&mut next, Status::Failed, EndReason::WorkerFailed, now);
                    next.fail_reason = Some(reason.clone());
                    record(&mut next, &format!("WORKER_FAILED: {}", one_line(reason)));
                    done(next)
                }
                (Status::TimedOut, Some(EndReason::ExecTtlExpired)) if c.fail_reason.is_none() => {
                    let mut next = c.clone();
                    next.fail_reason = Some(reason.clone());
                    record(&mut next, &format!("WORKER_FAILED: {}", one_line(reason)));
                    done(next)
                }
                (Status::Submitted, _) => refused(refusal_status(RefusalCode::NotClaimed, c)),
                (Status::Cancelled, _) => refused(refusal_cancelled(c)),
                _ => refused(refusal_status(RefusalCode::AlreadyTerminal, c)),
            }
        }
        Command::Cancel { requester, reason } => cancel(c, requester, reason, now),
        Command::FulfillCheck { holder } => {
            holder_op(c, holder, policy, |c| unchanged(Reply::Done(Box::new(c.clone()))))
        }
        Command::Fulfill {
            holder,
            delivery,
            verdict,
        } => holder_op(c, holder, policy, |c| fulfill(c, delivery, verdict, now)),
    }
}

/// Runs the holder check and the refusals by status for extend, release and fulfill, then `claimed`
/// for a `CLAIMED` record.
fn holder_op(
    c: &Contract,
    holder: &Holder,
    policy: &Policy,
    claimed: impl FnOnce(&Contract) -> Step,
) -> Step {
    if let Some(refusal) = holder_check(c, holder, policy) {
        return refused(refusal);
    }
    match (c.status, c.end_reason) {
        (Status::Claimed, _) => claimed(c),
        (Status::Submitted, _) => refused(refusal_status(RefusalCode::NotClaimed, c)),
        (Status::TimedOut, Some(EndReason::ExecTtlExpired)) => {
            refused(refusal_status(RefusalCode::LeaseExpired, c))
        }
        (Status::Cancelled, _) => refused(refusal_cancelled(c)),
        _ => refused(refusal_status(RefusalCode::AlreadyTerminal, c)),
    }
}

/// The requester cancels; a second cancel answers success again and
/// changes nothing.
fn cancel(c: &Contract, requester: &AgentId, reason: &str, now: EpochMs) -> Step {
    if requester != &c.requester_agent {
        return refused(ContractRefusal::new(
            format!(
                "Only its requester \"{}\" may cancel contract {}, not \"{requester}\".",
                c.requester_agent, c.contract_id
            ),
            RefusalDetails::NotRequester {
                contract_id: c.contract_id.clone(),
                requester_agent: c.requester_agent.clone(),
            },
        ));
    }
    match c.status {
        Status::Submitted | Status::Claimed => {
            let mut next = c.clone();
            end(&mut next, Status::Cancelled, EndReason::CancelledByRequester, now);
            next.cancel_reason = Some(reason.to_owned());
            record(
                &mut next,
                &format!("CANCELLED_BY_REQUESTER: {}", one_line(reason)),
            );
            done(next)
        }
        Status::Cancelled => unchanged(Reply::Already(Box::new(c.clone()))),
        _ => refused(refusal_status(RefusalCode::AlreadyTerminal, c)),
    }
}

fn refusal_cancelled(c: &Contract) -> ContractRefusal {
    ContractRefusal::new(
        format!(
            "Contract {} was cancelled by its requester \"{}\"; stop working on it.",
            c.contract_id, c.requester_agent
        ),
        RefusalDetails::Cancelled {
            contract_id: c.contract_id.clone(),
            cancel_reason: c.cancel_reason.clone(),
        },
    )
}

/// The holder check: the caller is the target, with the current epoch (or none, unless required).
fn holder_check(c: &Contract, holder: &Holder, policy: &Policy) -> Option<ContractRefusal> {
    if holder.agent_id != c.target_agent {
        return Some(ContractRefusal::new(
            format!(
                "Contract {} is addressed to agent \"{}\", not to \"{}\".",
                c.contract_id, c.target_agent, holder.agent_id
            ),
            RefusalDetails::NotTargetAgent {
                contract_id: c.contract_id.clone(),
                target_agent: c.target_agent.clone(),
            },
        ));
    }
    match holder.claim_epoch {
        None if policy.require_claim_epoch => Some(ContractRefusal::new(
            format!(
                "A claim_epoch is required for contract {} (require_claim_epoch is on); pass the claim_epoch from poll_next_task.",
                c.contract_id
            ),
            RefusalDetails::EpochRequired {
                contract_id: c.contract_id.clone(),
            },
        )),
        Some(epoch) if epoch != c.claim_epoch => Some(ContractRefusal::new(
            format!(
                "claim_epoch {epoch} is not the current epoch {} of contract {}; a newer claim supersedes it.",
                c.claim_epoch, c.contract_id
            ),
            RefusalDetails::StaleEpoch {
                contract_id: c.contract_id.clone(),
                claim_epoch: c.claim_epoch,
                status: c.status,
            },
        )),
        _ => None,
    }
}

fn fulfill(c: &Contract, delivery: &Delivery, verdict: &Verdict, now: EpochMs) -> Step {
    let salvage = || SalvagedResult {
        result_summary: delivery.result_summary.clone(),
        structured_output: delivery.structured_output.clone(),
        artifacts_pointers: delivery.artifacts_pointers.clone(),
    };
    let mut next = c.clone();
    match verdict {
        Verdict::Drift(drift) if c.toctou_strikes < TOCTOU_STRIKES => {
            next.toctou_strikes = TOCTOU_STRIKES;
            next.claimed_at = Some(now);
            next.expires_at = Some(lease_end(c, now));
            next.dirty_files = Some(drift.clone());
            record(&mut next, &format!("TOCTOU_STRIKE: {}", drift_list(drift)));
            let refusal = ContractRefusal::new(
                format!(
                    "The pointer files of contract {} no longer match their baseline ({}); restore them and deliver again before the renewed lease ends. The next dirty delivery closes the contract.",
                    c.contract_id,
                    drift_list(drift)
                ),
                RefusalDetails::RetryNeeded {
                    contract_id: c.contract_id.clone(),
                    status: next.status,
                    claim_epoch: next.claim_epoch,
                    expires_at: next.expires_at.map(instant),
                    dirty_files: drift.clone(),
                },
            );
            changed(next, refusal)
        }
        Verdict::Drift(drift) => {
            next.toctou_strikes = TOCTOU_STRIKES + 1;
            next.salvaged_result = Some(salvage());
            next.dirty_files = Some(drift.clone());
            end(
                &mut next,
                Status::PointerStale,
                EndReason::PointerDriftAtFulfill,
                now,
            );
            record(
                &mut next,
                &format!("POINTER_STALE_AT_FULFILL: {}", drift_list(drift)),
            );
            let refusal = ContractRefusal::new(
                format!(
                    "The pointer files of contract {} changed again ({}); the contract is closed POINTER_STALE and the delivery is kept as salvaged_result.",
                    c.contract_id,
                    drift_list(drift)
                ),
                RefusalDetails::PointerStale {
                    contract_id: c.contract_id.clone(),
                    status: next.status,
                    dirty_files: drift.clone(),
                },
            );
            changed(next, refusal)
        }
        Verdict::Valid => {
            end(&mut next, Status::Completed, EndReason::Fulfilled, now);
            next.result_summary = Some(delivery.result_summary.clone());
            next.structured_output = delivery.structured_output.clone();
            next.artifacts_pointers = Some(delivery.artifacts_pointers.clone());
            done(next)
        }
        Verdict::Invalid(errors) => {
            next.retry_count += 1;
            let first = errors.first().cloned().unwrap_or(ValidationError {
                instance_path: String::new(),
                message: String::from("the output does not match contract_schema"),
            });
            let path = if first.instance_path.is_empty() {
                "(root)"
            } else {
                first.instance_path.as_str()
            };
            let entry = format!(
                "SCHEMA_INVALID {}/{SCHEMA_INVALID_LIMIT}: {path}: {}",
                next.retry_count,
                one_line(&first.message)
            );
            record(&mut next, &entry);
            if next.retry_count >= SCHEMA_INVALID_LIMIT {
                next.salvaged_result = Some(salvage());
                end(&mut next, Status::Failed, EndReason::SchemaRetriesExhausted, now);
                let refusal = ContractRefusal::new(
                    format!(
                        "structured_output does not match the contract_schema of contract {} for the {SCHEMA_INVALID_LIMIT}rd time; the contract is closed FAILED and the delivery is kept as salvaged_result.",
                        c.contract_id
                    ),
                    RefusalDetails::SchemaRetriesExhausted {
                        contract_id: c.contract_id.clone(),
                        status: next.status,
                        retry_count: next.retry_count,
                        validation_errors: errors.clone(),
                    },
                );
                changed(next, refusal)
            } else {
                let left = SCHEMA_INVALID_LIMIT - next.retry_count;
                let refusal = ContractRefusal::new(
                    format!(
                        "structured_output does not match the contract_schema of contract {}; {left} schema attempt(s) left.",
                        c.contract_id
                    ),
                    RefusalDetails::OutputSchemaInvalid {
                        contract_id: c.contract_id.clone(),
                        status: next.status,
                        retry_count: next.retry_count,
                        schema_attempts_left: left,
                        validation_errors: errors.clone(),
                    },
                );
                changed(next, refusal)
            }
        }
    }
}

fn done(next: Contract) -> Step {
    Step {
        reply: Reply::Done(Box::new(next.clone())),
        next: Some(next),
    }
}

fn changed(next: Contract, refusal: ContractRefusal) -> Step {
    Step {
        next: Some(next),
        reply: Reply::Refused(refusal),
    }
}

fn refused(refusal: ContractRefusal) -> Step {
    unchanged(Reply::Refused(refusal))
}

fn unchanged(reply: Reply) -> Step {
    Step { next: None, reply }
}

fn refusal_status(code: RefusalCode, c: &Contract) -> ContractRefusal {
    let message = match code {
        RefusalCode::NotClaimed => format!(
            "Contract {} is waiting in the queue, not claimed; poll_next_task claims it.",
            c.contract_id
        ),
        RefusalCode::LeaseExpired => format!(
            "The lease on contract {} ran out; the contract is TIMED_OUT.",
            c.contract_id
        ),
        _ => format!(
            "Contract {} has ended with status {}.",
            c.contract_id,
            c.status.as_str()
        ),
    };
    let (contract_id, status, end_reason) = (c.contract_id.clone(), c.status, c.end_reason);
    let details = match code {
        RefusalCode::NotClaimed => RefusalDetails::NotClaimed {
            contract_id,
            status,
            end_reason,
        },
        RefusalCode::LeaseExpired => RefusalDetails::LeaseExpired {
            contract_id,
            status,
            end_reason,
        },
        _ => RefusalDetails::AlreadyTerminal {
            contract_id,
            status,
            end_reason,
        },
    };
    ContractRefusal::new(message, details)
}

fn refusal_extend_limit(c: &Contract) -> ContractRefusal {
    ContractRefusal::new(
        format!(
            "Contract {} has used its {MAX_EXTENDS_PER_CLAIM} renewals for this claim.",
            c.contract_id
        ),
        RefusalDetails::ExtendLimit {
            contract_id: c.contract_id.clone(),
            extend_count: c.extend_count,
        },
    )
}

fn refusal_ceiling(c: &Contract) -> ContractRefusal {
    ContractRefusal::new(
        format!(
            "Renewing contract {} would pass its lifetime ceiling lifetime_ends_at {}.",
            c.contract_id, c.lifetime_ends_at
        ),
        RefusalDetails::LifetimeCeiling {
            contract_id: c.contract_id.clone(),
            lifetime_ends_at: instant(c.lifetime_ends_at),
            expires_at: c.expires_at.map(instant),
        },
    )
}

fn refusal_release_limit(c: &Contract) -> ContractRefusal {
    ContractRefusal::new(
        format!("Contract {} has used its {MAX_RELEASES} releases.", c.contract_id),
        RefusalDetails::ReleaseLimit {
            contract_id: c.contract_id.clone(),
            release_count: c.release_count,
        },
    )
}

/// Ends a record at `now`: its terminal `status` and its end `reason` (the history entry is
/// the caller's, with the details of its transition).
fn end(next: &mut Contract, status: Status, reason: EndReason, now: EpochMs) {
    next.status = status;
    next.end_reason = Some(reason);
    next.completed_at = Some(now);
}

/// Replaces each CR, LF and TAB by one space.
pub fn one_line(text: &str) -> String {
    text.chars()
        .map(|ch| if matches!(ch, '\r' | '\n' | '\t') { ' ' } else { ch })
        .collect()
}

/// Records a history entry in `error_reason`: `<entry> | prev: <previous>`, cut to 2,000
/// characters.
pub fn push_entry(previous: Option<&str>, entry: &str) -> String {
    let full = match previous {
        None => entry.to_owned(),
        Some(prev) => format!("{entry} | prev: {prev}"),
    };
    cut_chars(&full, MAX_ERROR_REASON_CHARS)
}

/// `text` cut to `max` characters: the first `max − 1` followed by `…` when longer.
pub fn cut_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

fn record(next: &mut Contract, entry: &str) {
    next.error_reason = Some(push_entry(next.error_reason.as_deref(), entry));
}

/// The drift list of a history entry: up to five `<path> (<reason>)`, then `, +<k> more`.
pub fn drift_list(drift: &[Drift]) -> String {
    let mut parts: Vec<String> = drift
        .iter()
        .take(5)
        .map(|d| format!("{} ({})", d.path, d.reason.as_str()))
        .collect();
    if drift.len() > 5 {
        parts.push(format!("+{} more", drift.len() - 5));
    }
    parts.join(", ")
}
