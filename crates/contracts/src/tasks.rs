//! Durable tasks: a call that a host answers later, kept in the contracts store beside the work it
//! waits for, so that any process on the same store can say where it stands, and a process that
//! restarts carries on with it.
//!
//! A host (an MCP server answering a long `poll_next_task` with a task, the MCP tasks extension)
//! creates a [`TaskRecord`] when it accepts the call, and the record changes only through
//! [`TaskStore::update_task`]: one transaction that reads the record, asks a pure step what the record
//! becomes, and writes it. A task is run by one process at a time, its *runner*: the runner holds a
//! lease on it ([`TaskRecord::runner_until`]), renews it while it lives, and a process that finds a
//! working task whose lease ran out adopts it ([`TaskStore::adopt_tasks`]) — the way a restarted
//! server resumes a wait its predecessor accepted. A task keeps what it claimed
//! ([`TaskRecord::claimed`]), so a cancelled task can give it back.
//!
//! The crate knows nothing of MCP: the record holds the call's tool name and arguments, and its
//! outcome as the host's own JSON texts.
//!
//! ```
//! use std::sync::Arc;
//! use shiftwork_contracts::tasks::{TaskRecord, TaskStatus};
//! use shiftwork_contracts::{MemoryStore, Store};
//! use shiftwork_seams::ManualClock;
//!
//! let store = MemoryStore::new(Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH)));
//! let tasks = store.tasks().unwrap();
//! let task = TaskRecord::working("t1", "bob", "poll_next_task", "{}", 0, 300_000, Some(3_900_000), 5_000)
//!     .run_by("replica-a", 10_000);
//! tasks.create_task(&task).unwrap();
//! let done = tasks
//!     .update_task("t1", &|t, now| Some(t.clone().completed(r#"{"isError":false}"#, None, now)))
//!     .unwrap()
//!     .unwrap();
//! assert_eq!(done.status, TaskStatus::Completed);
//! assert_eq!(tasks.get_task("t1").unwrap().unwrap().result.as_deref(), Some(r#"{"isError":false}"#));
//! ```

use crate::error::StoreError;
use crate::model::{ContractId, EpochMs};

/// The most tasks one adoption takes over.
pub const ADOPT_BATCH: usize = 100;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TaskStatus {
    /// Still waiting or running.
    Working,
    /// Done: [`TaskRecord::result`] holds the answer.
    Completed,
    /// Failed as a protocol error: [`TaskRecord::error`] holds it.
    Failed,
    /// Cancelled by its caller.
    Cancelled,
}

impl TaskStatus {
    /// The wire name: `working`, `completed`, `failed`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// The status of a wire name.
    pub fn parse(name: &str) -> Option<TaskStatus> {
        match name {
            "working" => Some(TaskStatus::Working),
            "completed" => Some(TaskStatus::Completed),
            "failed" => Some(TaskStatus::Failed),
            "cancelled" => Some(TaskStatus::Cancelled),
            _ => None,
        }
    }

    /// Whether the task has ended (every status but `Working`).
    pub fn is_terminal(self) -> bool {
        self != TaskStatus::Working
    }
}

/// One task as the store keeps it. Instants are [`EpochMs`] of the store's clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRecord {
    /// Its id: unguessable, chosen by the host (a task id is the caller's bearer of the task).
    pub task_id: String,
    /// Whose task it is: the agent that made the call (empty for a trusted local caller). Only its
    /// owner may read or cancel it.
    pub owner: String,
    /// The call's tool.
    pub tool: String,
    /// The call's arguments, as the host's JSON text.
    pub arguments: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// A sentence about the status, for the caller.
    pub status_message: Option<String>,
    /// The answer (JSON text), once completed.
    pub result: Option<String>,
    /// The protocol error (JSON text), once failed.
    pub error: Option<String>,
    /// When it was created.
    pub created_at: EpochMs,
    /// When it last changed.
    pub updated_at: EpochMs,
    /// How long after its creation it is kept (`None`: until deleted).
    pub ttl_ms: Option<i64>,
    /// How often its caller should look, in milliseconds.
    pub poll_interval_ms: i64,
    /// When its wait ends: the runner answers what there is then.
    pub deadline: EpochMs,
    /// The process running it, while one does.
    pub runner: Option<String>,
    /// Until when the runner's lease holds; another process may adopt the task after it.
    pub runner_until: EpochMs,
    /// What it claimed, so that cancelling it gives the claim back: a contract and its claim epoch.
    pub claimed: Option<(ContractId, u64)>,
    /// Whether its caller has been given its outcome.
    pub delivered: bool,
}

impl TaskRecord {
    /// A new working task of `owner` for `tool` with `arguments`, created `now`, waiting `wait_ms`,
    /// kept `ttl_ms` after creation, to be looked at every `poll_interval_ms`.
    #[allow(clippy::too_many_arguments)]
    pub fn working(
        task_id: &str,
        owner: &str,
        tool: &str,
        arguments: &str,
        now: EpochMs,
        wait_ms: i64,
        ttl_ms: Option<i64>,
        poll_interval_ms: i64,
    ) -> TaskRecord {
        TaskRecord {
            task_id: task_id.to_owned(),
            owner: owner.to_owned(),
            tool: tool.to_owned(),
            arguments: arguments.to_owned(),
            status: TaskStatus::Working,
            status_message: None,
            result: None,
            error: None,
            created_at: now,
            updated_at: now,
            ttl_ms,
            poll_interval_ms,
            deadline: now.saturating_add(wait_ms),
            runner: None,
            runner_until: 0,
            claimed: None,
            delivered: false,
        }
    }

    /// The same task run by `runner` until `until`.
    pub fn run_by(mut self, runner: &str, until: EpochMs) -> TaskRecord {
        self.runner = Some(runner.to_owned());
        self.runner_until = until;
        self
    }

    /// The same task completed at `now` with `result`, holding `claimed` if the call claimed
    /// something.
    pub fn completed(mut self, result: &str, claimed: Option<(ContractId, u64)>, now: EpochMs) -> TaskRecord {
        self.status = TaskStatus::Completed;
        self.result = Some(result.to_owned());
        self.claimed = claimed;
        self.runner = None;
        self.updated_at = now;
        self
    }

    /// The same task cancelled at `now`, with `message`.
    pub fn cancelled(mut self, message: &str, now: EpochMs) -> TaskRecord {
        self.status = TaskStatus::Cancelled;
        self.status_message = Some(message.to_owned());
        self.runner = None;
        self.updated_at = now;
        self
    }

    /// When it stops being kept (`None`: never).
    pub fn expires_at(&self) -> Option<EpochMs> {
        self.ttl_ms.map(|ttl| self.created_at.saturating_add(ttl))
    }

    /// Whether it is past its time to live at `now`.
    pub fn is_expired(&self, now: EpochMs) -> bool {
        self.expires_at().is_some_and(|end| now >= end)
    }
}

/// The step of [`TaskStore::update_task`]: the record and the transaction's time in, the record to
/// write out (`None` leaves it as it is). It must be pure: a store may call it more than once.
pub type TaskStep<'a> = &'a dyn Fn(&TaskRecord, EpochMs) -> Option<TaskRecord>;

/// The tasks a store keeps (every store of this crate keeps them: `Store::tasks`). Each operation is
/// one transaction.
pub trait TaskStore: Send + Sync {
    /// Stores a new task; a task with its id already there is an error (ids are unguessable, so a
    /// second one means a bug, not a race).
    fn create_task(&self, task: &TaskRecord) -> Result<(), StoreError>;

    /// The task `task_id`, if the store keeps it.
    fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError>;

    /// Reads the task, calls `step` with it and the transaction's time, writes what it returns:
    /// the record as it now is, or `None` when there is no such task.
    fn update_task(&self, task_id: &str, step: TaskStep<'_>) -> Result<Option<TaskRecord>, StoreError>;

    /// Makes `runner` the runner until `until` of the working tasks whose lease ran out by `now`
    /// (at most `max`, the oldest lease first), and returns them: a restarted process resumes the
    /// waits of one that died.
    fn adopt_tasks(
        &self,
        runner: &str,
        now: EpochMs,
        until: EpochMs,
        max: usize,
    ) -> Result<Vec<TaskRecord>, StoreError>;

    /// Extends to `until` the lease of every working task `runner` runs; how many.
    fn renew_tasks(&self, runner: &str, until: EpochMs) -> Result<u64, StoreError>;

    /// Deletes at most `max` tasks past their time to live at `now`; how many.
    fn purge_tasks(&self, now: EpochMs, max: usize) -> Result<u64, StoreError>;
}

/// The columns of a stored task, in table order (the SQL stores share them).
pub(crate) const TASK_COLUMNS: &[&str] = &[
    "task_id",
    "owner",
    "tool",
    "arguments",
    "status",
    "status_message",
    "result",
    "error",
    "created_at",
    "updated_at",
    "ttl_ms",
    "poll_interval_ms",
    "deadline",
    "runner",
    "runner_until",
    "claimed_contract",
    "claimed_epoch",
    "delivered",
];
