//! The [`Store`] trait and its implementations.
//!
//! A store persists records and runs each operation in one atomic transaction; every judgement it
//! makes is a call into [`crate::transition`], so all stores behave identically (one model-based test
//! runs them all against the same reference).

use std::sync::Arc;

use serde::Serialize;
use shiftwork_seams::Clock;

use crate::error::StoreError;
use crate::integrity::IntegrityReport;
use crate::model::{AgentId, Contract, ContractId, EpochMs, Status};
use crate::observe::ContractsObserver;
use crate::transition::{Reply, Step};

/// The columns of the `contracts` table, in the order both SQL stores write and read them (one
/// schema, with each engine's types).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const COLUMNS: [&str; 39] = [
    "seq",
    "contract_id",
    "requester_agent",
    "target_agent",
    "idempotency_key",
    "payload_sha256",
    "task_type",
    "title",
    "context_summary",
    "workspace_root",
    "pointers",
    "contract_schema",
    "exec_ttl_sec",
    "queue_ttl_sec",
    "status",
    "created_at",
    "queued_at",
    "queue_expires_at",
    "lifetime_ends_at",
    "claimed_at",
    "expires_at",
    "completed_at",
    "claim_epoch",
    "extend_count",
    "release_count",
    "retry_count",
    "toctou_strikes",
    "end_reason",
    "dirty_files",
    "error_reason",
    "fail_reason",
    "result_summary",
    "structured_output",
    "artifacts_pointers",
    "salvaged_result",
    "max_deliveries",
    "delivery_count",
    "available_at",
    "cancel_reason",
];

mod memory;
pub use memory::MemoryStore;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
/// The SQL of [`crate::transition::push_entry`]: `<entry> | prev: <previous>`, cut to 2,000
/// characters (shared by both SQL stores: `length` and `substr` count characters in both).
pub(crate) fn history_entry(entry: &str) -> String {
    let entry = entry.replace('\'', "''");
    let full = format!(
        "(CASE WHEN error_reason IS NULL THEN '{entry}' ELSE '{entry} | prev: ' || error_reason END)"
    );
    format!(
        "(CASE WHEN length({full}) > {max} THEN substr({full}, 1, {keep}) || '…' ELSE {full} END)",
        max = crate::limits::MAX_ERROR_REASON_CHARS,
        keep = crate::limits::MAX_ERROR_REASON_CHARS - 1,
    )
}

#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
pub(crate) mod sqlite_file;
#[cfg(feature = "sqlite")]
mod sqlite_log;
#[cfg(feature = "sqlite")]
pub use sqlite::{APPLICATION_ID, SCHEMA_VERSION, SqliteOptions, SqliteStore, Synchronous};

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
pub use postgres::{PgOptions, PgStore};

/// What `insert` did.
#[derive(Debug, Clone, PartialEq)]
pub enum InsertOutcome {
    /// The new record, as stored.
    Inserted(Contract),
    /// `(requester_agent, idempotency_key)` already names this record; nothing was inserted.
    KeyTaken(Contract),
}

/// The filters and page position of [`Store::list`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Only contracts addressed to this agent.
    pub target_agent: Option<AgentId>,
    /// Only contracts dispatched by this agent.
    pub requester_agent: Option<AgentId>,
    /// Only contracts in one of these states (`None`: any).
    pub statuses: Option<Vec<Status>>,
    /// Only the contract with this id.
    pub contract_id: Option<ContractId>,
    /// Only records with a smaller `seq` (the cursor's position).
    pub before_seq: Option<i64>,
    /// At most this many records, newest (`seq` descending) first.
    pub limit: usize,
}

impl ListQuery {
    /// True when `c` passes every filter but `statuses` and `before_seq`.
    pub fn matches_for_counts(&self, c: &Contract) -> bool {
        self.target_agent.as_ref().is_none_or(|a| &c.target_agent == a)
            && self
                .requester_agent
                .as_ref()
                .is_none_or(|a| &c.requester_agent == a)
            && self.contract_id.as_ref().is_none_or(|id| &c.contract_id == id)
    }

    /// True when `c` belongs on the page.
    pub fn matches(&self, c: &Contract) -> bool {
        self.matches_for_counts(c)
            && self.statuses.as_ref().is_none_or(|s| s.contains(&c.status))
            && self.before_seq.is_none_or(|b| c.seq < b)
    }
}

/// Records per stored status, plus those logically expired (written with the statuses' wire names:
/// `SUBMITTED`, …, `logically_expired`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counts {
    /// `SUBMITTED` records.
    #[serde(rename = "SUBMITTED")]
    pub submitted: u64,
    /// `CLAIMED` records.
    #[serde(rename = "CLAIMED")]
    pub claimed: u64,
    /// `COMPLETED` records.
    #[serde(rename = "COMPLETED")]
    pub completed: u64,
    /// `FAILED` records.
    #[serde(rename = "FAILED")]
    pub failed: u64,
    /// `TIMED_OUT` records.
    #[serde(rename = "TIMED_OUT")]
    pub timed_out: u64,
    /// `POINTER_STALE` records.
    #[serde(rename = "POINTER_STALE")]
    pub pointer_stale: u64,
    /// `CANCELLED` records.
    #[serde(rename = "CANCELLED")]
    pub cancelled: u64,
    /// Live records past their deadline at the reading's `now` (no sweep has recorded it yet).
    pub logically_expired: u64,
}

impl Counts {
    /// Counts one record at `now`.
    pub fn add(&mut self, c: &Contract, now: EpochMs) {
        self.add_status(c.status, 1);
        if c.is_logically_expired(now) {
            self.logically_expired += 1;
        }
    }

    /// Adds `n` records of `status`.
    pub fn add_status(&mut self, status: Status, n: u64) {
        *self.slot(status) += n;
    }

    /// The records of `status`.
    pub fn of(&self, status: Status) -> u64 {
        match status {
            Status::Submitted => self.submitted,
            Status::Claimed => self.claimed,
            Status::Completed => self.completed,
            Status::Failed => self.failed,
            Status::TimedOut => self.timed_out,
            Status::PointerStale => self.pointer_stale,
            Status::Cancelled => self.cancelled,
        }
    }

    fn slot(&mut self, status: Status) -> &mut u64 {
        match status {
            Status::Submitted => &mut self.submitted,
            Status::Claimed => &mut self.claimed,
            Status::Completed => &mut self.completed,
            Status::Failed => &mut self.failed,
            Status::TimedOut => &mut self.timed_out,
            Status::PointerStale => &mut self.pointer_stale,
            Status::Cancelled => &mut self.cancelled,
        }
    }
}

/// How many contracts a store holds in each state, and how many wait for each agent
/// ([`Store::queue_depth`]): what a queue gauge shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueueDepth {
    /// Records per stored status (`logically_expired` is not counted here: it is 0).
    pub by_status: Counts,
    /// `SUBMITTED` records per target agent, by agent id; agents with none are left out.
    pub submitted_by_target: Vec<(AgentId, u64)>,
}

/// A page of `list` and its counts, read in one snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct ListPage {
    /// The records, `seq` descending.
    pub records: Vec<Contract>,
    /// The counts of the records the filters other than `statuses` select (ignoring `before_seq` and
    /// `limit`).
    pub counts: Counts,
}

/// What a sweep wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SweepReport {
    /// Waiting contracts whose queue window ran out (now `TIMED_OUT`).
    pub queued_timed_out: u64,
    /// Held contracts whose lease ran out with no delivery left (now `TIMED_OUT`).
    pub claimed_timed_out: u64,
    /// Held contracts whose lease ran out with deliveries left, returned to the queue.
    pub redelivered: u64,
}

/// What a waiting poll needs to know of an agent's records at an instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Due {
    /// A record of the agent is claimable now.
    pub claimable: bool,
    /// The earliest later instant at which a record of the agent falls due: a redelivery becomes
    /// available, a lease or a queue window runs out.
    pub next_at: Option<EpochMs>,
}

impl Due {
    /// The due state of `records` (of one agent) at `now`.
    pub fn of<'a>(records: impl IntoIterator<Item = &'a Contract>, now: EpochMs) -> Due {
        let mut due = Due::default();
        for c in records {
            due.claimable |= c.is_claimable(now);
            let at = match c.status {
                Status::Submitted => match c.available_at {
                    Some(a) if a > now => Some(a),
                    _ => Some(c.queue_expires_at),
                },
                Status::Claimed => c.expires_at,
                _ => None,
            };
            if let Some(at) = at.filter(|at| *at > now) {
                due.next_at = Some(due.next_at.map_or(at, |n| n.min(at)));
            }
        }
        due
    }
}

/// The closure `insert` calls with the transaction's `now` and the new `seq`. It must be pure: a store
/// may call it more than once, and only the last call counts.
pub type Build<'a> = &'a dyn Fn(EpochMs, i64) -> Contract;

/// The closure `update` calls with the record and the transaction's `now`. It must be pure: a store
/// may call it more than once, and only the last call counts.
pub type Update<'a> = &'a dyn Fn(&Contract, EpochMs) -> Step;

/// A contract store: object-safe, `Send + Sync`, synchronous. Each operation is one atomic
/// transaction (after a crash each record is as it was before or as the operation leaves it); `insert`,
/// `claim_next` and `update` begin with a sweep of at most [`crate::limits::SWEEP_BATCH_PER_CALL`]
/// records of each kind at the transaction's `now`, read once from the store's clock after the
/// transaction holds its lock. Every write re-checks, under that lock, the full condition that
/// justified it. Instants are [`EpochMs`] here, the storage form.
pub trait Store: Send + Sync {
    /// The clock the store judges by: the facade built over it reads and waits on the same one
    /// ([`crate::Contracts::clock`]).
    fn clock(&self) -> Arc<dyn Clock>;

    /// Sweeps, then inserts `build(now, seq)` unless its `(requester_agent, idempotency_key)` is taken.
    fn insert(&self, build: Build<'_>) -> Result<InsertOutcome, StoreError>;

    /// Sweeps, then claims ([`crate::transition::claim`]) the oldest eligible record of `agent`; the
    /// claimed record, or `None`.
    fn claim_next(&self, agent: &AgentId) -> Result<Option<Contract>, StoreError>;

    /// Sweeps, reads the record, calls `step`, writes `Step.next` if any; the reply, or `None` when no
    /// record has that id.
    fn update(&self, contract_id: &ContractId, step: Update<'_>) -> Result<Option<Reply>, StoreError>;

    /// One record, no sweep.
    fn get(&self, contract_id: &ContractId) -> Result<Option<Contract>, StoreError>;

    /// The record `(requester, key)` names, no sweep.
    fn get_by_key(&self, requester: &AgentId, key: &str) -> Result<Option<Contract>, StoreError>;

    /// A page and the counts at `now`, in one read snapshot, no sweep.
    fn list(&self, query: &ListQuery, now: EpochMs) -> Result<ListPage, StoreError>;

    /// Ends (or redelivers) at most `max_per_kind` records of each kind past their deadline, oldest
    /// deadline first, at `now` (not the
    /// clock).
    fn sweep(&self, now: EpochMs, max_per_kind: usize) -> Result<SweepReport, StoreError>;

    /// Deletes at most `max` terminal records with `completed_at < completed_before`.
    fn purge_terminal(&self, completed_before: EpochMs, max: usize) -> Result<u64, StoreError>;

    /// The store's own consistency check plus every record's invariants ([`crate::integrity`]).
    fn check_integrity(&self) -> Result<IntegrityReport, StoreError>;

    /// Whether a record of `agent` is claimable at `now`, and when the next one falls due. A read, no
    /// sweep. The default reads nothing and says "try" (a store that cannot tell).
    fn due(&self, agent: &AgentId, now: EpochMs) -> Result<Due, StoreError> {
        let _ = (agent, now);
        Ok(Due {
            claimable: true,
            next_at: None,
        })
    }

    /// Registers `wake` to be notified when a record of `agent` may have become claimable — a
    /// dispatch, release, reverted claim or redelivery committed by this store or, for the SQL stores,
    /// by another process or machine. It stays registered while `wake` lives. The stores of this
    /// crate wake one waiting poll per contract that became claimable, not every poll of the agent:
    /// the poll they wake counts as woken until it calls `watch` again (which the facade does before
    /// each look), so the next contract wakes another. The default registers nothing: a waiting poll
    /// then looks again every few seconds.
    fn watch(&self, agent: &AgentId, wake: &crate::wait::Wake) -> Result<(), StoreError> {
        let _ = (agent, wake);
        Ok(())
    }

    /// The waiting poll of `wake` ends without looking again (it was cancelled, or its time ran
    /// out): `wake` is taken off the store's list, and a wake the store handed to it goes to another
    /// waiting poll of `agent`. The default does nothing.
    fn unwatch(&self, agent: &AgentId, wake: &crate::wait::Wake) {
        let _ = (agent, wake);
    }

    /// How many records the store holds per status, and how many `SUBMITTED` ones per target agent,
    /// read in one snapshot without a sweep: one grouped count each. The default reads the counts
    /// through [`Store::list`] and leaves the agents out.
    fn queue_depth(&self) -> Result<QueueDepth, StoreError> {
        let page = self.list(&ListQuery::default(), 0)?;
        let mut by_status = page.counts;
        by_status.logically_expired = 0;
        Ok(QueueDepth {
            by_status,
            submitted_by_target: Vec::new(),
        })
    }

    /// Tells `observer` of the leases this store's sweeps end or return to the queue
    /// ([`crate::observe::ContractEvent::LeaseExpired`] and `Redelivered`): they happen inside its
    /// transactions, unseen by the facade. The facade's builder calls it when it is given an
    /// observer; the last observer given is the one told. The default tells nothing.
    fn observe(&self, observer: Arc<dyn ContractsObserver>) {
        let _ = observer;
    }
}

/// `clock`'s reading as a store keeps it: milliseconds, truncated.
pub fn epoch_ms(clock: &dyn shiftwork_seams::Clock) -> EpochMs {
    clock.now().timestamp_millis()
}
