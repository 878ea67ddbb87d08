//! The durable tasks of a SQLite store (schema version 3): the `contracts_tasks` table, written in the
//! store's `BEGIN IMMEDIATE` transactions like every contract.

use rusqlite::types::Value as Sql;
use rusqlite::{OptionalExtension, Row, Transaction};

use super::{SqliteStore, io};
use crate::error::StoreError;
use crate::model::{ContractId, EpochMs};
use crate::tasks::{TASK_COLUMNS, TaskRecord, TaskStatus, TaskStep, TaskStore};

/// The table of schema version 3.
pub(crate) const TABLE: &str = "
CREATE TABLE contracts_tasks (
  task_id          TEXT    NOT NULL PRIMARY KEY,
  owner            TEXT    NOT NULL,
  tool             TEXT    NOT NULL,
  arguments        TEXT    NOT NULL,
  status           TEXT    NOT NULL CHECK (status IN ('working','completed','failed','cancelled')),
  status_message   TEXT,
  result           TEXT,
  error            TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  ttl_ms           INTEGER,
  poll_interval_ms INTEGER NOT NULL,
  deadline         INTEGER NOT NULL,
  runner           TEXT,
  runner_until     INTEGER NOT NULL,
  claimed_contract TEXT,
  claimed_epoch    INTEGER,
  delivered        INTEGER NOT NULL
) STRICT;";

/// Its indexes: the working tasks by lease end (adoption), every task by creation (expiry).
pub(crate) const INDEXES: &str = "
CREATE INDEX contracts_tasks_working ON contracts_tasks (runner_until) WHERE status = 'working';
CREATE INDEX contracts_tasks_created ON contracts_tasks (created_at);
";

/// Creates the table and its indexes (a new database, or the migration from version 2).
pub(crate) fn create(tx: &Transaction<'_>) -> Result<(), StoreError> {
    tx.execute_batch(TABLE).map_err(io)?;
    tx.execute_batch(INDEXES).map_err(io)
}

fn values(t: &TaskRecord) -> Vec<Sql> {
    let text = |s: &Option<String>| s.clone().map_or(Sql::Null, Sql::Text);
    vec![
        Sql::Text(t.task_id.clone()),
        Sql::Text(t.owner.clone()),
        Sql::Text(t.tool.clone()),
        Sql::Text(t.arguments.clone()),
        Sql::Text(t.status.as_str().to_owned()),
        text(&t.status_message),
        text(&t.result),
        text(&t.error),
        Sql::Integer(t.created_at),
        Sql::Integer(t.updated_at),
        t.ttl_ms.map_or(Sql::Null, Sql::Integer),
        Sql::Integer(t.poll_interval_ms),
        Sql::Integer(t.deadline),
        text(&t.runner),
        Sql::Integer(t.runner_until),
        t.claimed
            .as_ref()
            .map_or(Sql::Null, |(id, _)| Sql::Text(id.as_str().to_owned())),
        t.claimed
            .as_ref()
            .map_or(Sql::Null, |(_, epoch)| Sql::Integer(i64::try_from(*epoch).unwrap_or(i64::MAX))),
        Sql::Integer(i64::from(t.delivered)),
    ]
}

fn record(row: &Row<'_>) -> rusqlite::Result<TaskRecord> {
    let bad = |i: usize, what: &str| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, what.to_owned().into())
    };
    let status: String = row.get(4)?;
    let claimed_contract: Option<String> = row.get(15)?;
    let claimed_epoch: Option<i64> = row.get(16)?;
    let claimed = match (claimed_contract, claimed_epoch) {
        (Some(id), Some(epoch)) => Some((
            ContractId::parse(&id).map_err(|_| bad(15, "a contract id"))?,
            u64::try_from(epoch).map_err(|_| bad(16, "a claim epoch"))?,
        )),
        _ => None,
    };
    Ok(TaskRecord {
        task_id: row.get(0)?,
        owner: row.get(1)?,
        tool: row.get(2)?,
        arguments: row.get(3)?,
        status: TaskStatus::parse(&status).ok_or_else(|| bad(4, "a task status"))?,
        status_message: row.get(5)?,
        result: row.get(6)?,
        error: row.get(7)?,
        created_at: row.get(8)?,
        updated_at: row.get(9)?,
        ttl_ms: row.get(10)?,
        poll_interval_ms: row.get(11)?,
        deadline: row.get(12)?,
        runner: row.get(13)?,
        runner_until: row.get(14)?,
        claimed,
        delivered: row.get::<_, i64>(17)? != 0,
    })
}

fn select(tx: &Transaction<'_>, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
    tx.query_row(
        &format!("SELECT {} FROM contracts_tasks WHERE task_id = ?1", TASK_COLUMNS.join(", ")),
        [task_id],
        record,
    )
    .optional()
    .map_err(io)
}

fn write(tx: &Transaction<'_>, t: &TaskRecord) -> Result<(), StoreError> {
    let marks: Vec<String> = (1..=TASK_COLUMNS.len()).map(|i| format!("?{i}")).collect();
    tx.execute(
        &format!(
            "INSERT OR REPLACE INTO contracts_tasks ({}) VALUES ({})",
            TASK_COLUMNS.join(", "),
            marks.join(", ")
        ),
        rusqlite::params_from_iter(values(t)),
    )
    .map_err(io)?;
    Ok(())
}

impl TaskStore for SqliteStore {
    fn create_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        self.write(|tx, _, _| {
            if select(tx, &task.task_id)?.is_some() {
                return Err(StoreError::io(String::from("a task with this id exists already")));
            }
            write(tx, task)
        })
    }

    fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        self.read(|tx| select(tx, task_id))
    }

    fn update_task(&self, task_id: &str, step: TaskStep<'_>) -> Result<Option<TaskRecord>, StoreError> {
        self.write(|tx, now, _| {
            let Some(current) = select(tx, task_id)? else {
                return Ok(None);
            };
            match step(&current, now) {
                Some(next) => {
                    write(tx, &next)?;
                    Ok(Some(next))
                }
                None => Ok(Some(current)),
            }
        })
    }

    fn adopt_tasks(
        &self,
        runner: &str,
        now: EpochMs,
        until: EpochMs,
        max: usize,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        self.write(|tx, _, _| {
            let mut stmt = tx
                .prepare(&format!(
                    "SELECT {} FROM contracts_tasks WHERE status = 'working' AND runner_until <= ?1
                      ORDER BY runner_until LIMIT ?2",
                    TASK_COLUMNS.join(", ")
                ))
                .map_err(io)?;
            let found = stmt
                .query_map(
                    rusqlite::params![now, i64::try_from(max).unwrap_or(i64::MAX)],
                    record,
                )
                .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
                .map_err(io)?;
            drop(stmt);
            let mut adopted = Vec::with_capacity(found.len());
            for task in found {
                let task = task.run_by(runner, until);
                write(tx, &task)?;
                adopted.push(task);
            }
            Ok(adopted)
        })
    }

    fn renew_tasks(&self, runner: &str, until: EpochMs) -> Result<u64, StoreError> {
        self.write(|tx, _, _| {
            tx.execute(
                "UPDATE contracts_tasks SET runner_until = ?2 WHERE status = 'working' AND runner = ?1",
                rusqlite::params![runner, until],
            )
            .map(|n| n as u64)
            .map_err(io)
        })
    }

    fn purge_tasks(&self, now: EpochMs, max: usize) -> Result<u64, StoreError> {
        self.write(|tx, _, _| {
            tx.execute(
                "DELETE FROM contracts_tasks WHERE task_id IN (
                   SELECT task_id FROM contracts_tasks
                    WHERE ttl_ms IS NOT NULL AND created_at + ttl_ms <= ?1
                    ORDER BY created_at LIMIT ?2)",
                rusqlite::params![now, i64::try_from(max).unwrap_or(i64::MAX)],
            )
            .map(|n| n as u64)
            .map_err(io)
        })
    }
}
