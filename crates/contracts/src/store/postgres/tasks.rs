//! The durable tasks of a PostgreSQL store (schema version 3): the `contracts_tasks` table, written
//! in the store's transactions, its time the store's (the server's clock unless one was given).

use postgres::Row;
use postgres::types::ToSql;

use super::{PgStore, Tx, classify};
use crate::error::StoreError;
use crate::model::{ContractId, EpochMs};
use crate::tasks::{TASK_COLUMNS, TaskRecord, TaskStatus, TaskStep, TaskStore};

/// Schema version 2 → 3 (and part of a new schema): the tasks table and its indexes.
pub(crate) const MIGRATE_V2: &str = "
CREATE TABLE contracts_tasks (
  task_id          TEXT    NOT NULL PRIMARY KEY,
  owner            TEXT    NOT NULL,
  tool             TEXT    NOT NULL,
  arguments        TEXT    NOT NULL,
  status           TEXT    NOT NULL CONSTRAINT contracts_tasks_status_check
                             CHECK (status IN ('working','completed','failed','cancelled')),
  status_message   TEXT,
  result           TEXT,
  error            TEXT,
  created_at       BIGINT  NOT NULL,
  updated_at       BIGINT  NOT NULL,
  ttl_ms           BIGINT,
  poll_interval_ms BIGINT  NOT NULL,
  deadline         BIGINT  NOT NULL,
  runner           TEXT,
  runner_until     BIGINT  NOT NULL,
  claimed_contract TEXT,
  claimed_epoch    BIGINT,
  delivered        BOOLEAN NOT NULL
);
CREATE INDEX contracts_tasks_working ON contracts_tasks (runner_until) WHERE status = 'working';
CREATE INDEX contracts_tasks_created ON contracts_tasks (created_at);
UPDATE contracts_meta SET value = '3' WHERE key = 'schema_version';
";

fn record(row: &Row) -> Result<TaskRecord, StoreError> {
    let bad = |what: &str| StoreError::io(format!("a stored task holds an invalid {what}"));
    let status: String = row.get(4);
    let claimed = match (row.get::<_, Option<String>>(15), row.get::<_, Option<i64>>(16)) {
        (Some(id), Some(epoch)) => Some((
            ContractId::parse(&id).map_err(|_| bad("contract id"))?,
            u64::try_from(epoch).map_err(|_| bad("claim epoch"))?,
        )),
        _ => None,
    };
    Ok(TaskRecord {
        task_id: row.get(0),
        owner: row.get(1),
        tool: row.get(2),
        arguments: row.get(3),
        status: TaskStatus::parse(&status).ok_or_else(|| bad("status"))?,
        status_message: row.get(5),
        result: row.get(6),
        error: row.get(7),
        created_at: row.get(8),
        updated_at: row.get(9),
        ttl_ms: row.get(10),
        poll_interval_ms: row.get(11),
        deadline: row.get(12),
        runner: row.get(13),
        runner_until: row.get(14),
        claimed,
        delivered: row.get(17),
    })
}

fn columns() -> String {
    TASK_COLUMNS.join(", ")
}

fn write(tx: &mut Tx<'_, '_>, t: &TaskRecord) -> Result<(), StoreError> {
    let claimed_id = t.claimed.as_ref().map(|(id, _)| id.as_str().to_owned());
    let claimed_epoch = t
        .claimed
        .as_ref()
        .map(|(_, epoch)| i64::try_from(*epoch).unwrap_or(i64::MAX));
    let status = t.status.as_str();
    let values: [&(dyn ToSql + Sync); 18] = [
        &t.task_id,
        &t.owner,
        &t.tool,
        &t.arguments,
        &status,
        &t.status_message,
        &t.result,
        &t.error,
        &t.created_at,
        &t.updated_at,
        &t.ttl_ms,
        &t.poll_interval_ms,
        &t.deadline,
        &t.runner,
        &t.runner_until,
        &claimed_id,
        &claimed_epoch,
        &t.delivered,
    ];
    let marks: Vec<String> = (1..=TASK_COLUMNS.len()).map(|i| format!("${i}")).collect();
    let updates: Vec<String> = TASK_COLUMNS[1..]
        .iter()
        .map(|c| format!("{c} = EXCLUDED.{c}"))
        .collect();
    tx.execute(
        &format!(
            "INSERT INTO contracts_tasks ({}) VALUES ({}) ON CONFLICT (task_id) DO UPDATE SET {}",
            columns(),
            marks.join(", "),
            updates.join(", ")
        ),
        &values,
    )
    .map_err(classify)?;
    Ok(())
}

fn select(tx: &mut Tx<'_, '_>, task_id: &str, lock: bool) -> Result<Option<TaskRecord>, StoreError> {
    let rows = tx
        .query(
            &format!(
                "SELECT {} FROM contracts_tasks WHERE task_id = $1{}",
                columns(),
                if lock { " FOR UPDATE" } else { "" }
            ),
            &[&task_id],
        )
        .map_err(classify)?;
    rows.first().map(record).transpose()
}

impl TaskStore for PgStore {
    fn create_task(&self, task: &TaskRecord) -> Result<(), StoreError> {
        self.write(|tx, _| {
            if select(tx, &task.task_id, true)?.is_some() {
                return Err(StoreError::io(String::from("a task with this id exists already")));
            }
            write(tx, task)
        })
    }

    fn get_task(&self, task_id: &str) -> Result<Option<TaskRecord>, StoreError> {
        self.shared.run(|tx| select(tx, task_id, false))
    }

    fn update_task(&self, task_id: &str, step: TaskStep<'_>) -> Result<Option<TaskRecord>, StoreError> {
        let shared = &self.shared;
        self.write(|tx, _| {
            let Some(current) = select(tx, task_id, true)? else {
                return Ok(None);
            };
            let now = shared.now(tx)?;
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
        self.write(|tx, _| {
            let limit = i64::try_from(max).unwrap_or(i64::MAX);
            let rows = tx
                .query(
                    &format!(
                        "UPDATE contracts_tasks SET runner = $1, runner_until = $2
                          WHERE task_id IN (SELECT task_id FROM contracts_tasks
                                             WHERE status = 'working' AND runner_until <= $3
                                             ORDER BY runner_until LIMIT $4
                                             FOR UPDATE SKIP LOCKED)
                            AND status = 'working' AND runner_until <= $3
                         RETURNING {}",
                        columns()
                    ),
                    &[&runner, &until, &now, &limit],
                )
                .map_err(classify)?;
            rows.iter().map(record).collect()
        })
    }

    fn renew_tasks(&self, runner: &str, until: EpochMs) -> Result<u64, StoreError> {
        self.write(|tx, _| {
            tx.execute(
                "UPDATE contracts_tasks SET runner_until = $2 WHERE status = 'working' AND runner = $1",
                &[&runner, &until],
            )
            .map_err(classify)
        })
    }

    fn purge_tasks(&self, now: EpochMs, max: usize) -> Result<u64, StoreError> {
        self.write(|tx, _| {
            let limit = i64::try_from(max).unwrap_or(i64::MAX);
            tx.execute(
                "DELETE FROM contracts_tasks WHERE task_id IN (
                   SELECT task_id FROM contracts_tasks
                    WHERE ttl_ms IS NOT NULL AND created_at + ttl_ms <= $1
                    ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)",
                &[&now, &limit],
            )
            .map_err(classify)
        })
    }
}
