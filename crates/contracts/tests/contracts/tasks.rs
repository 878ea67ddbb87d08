//! Issue 35 item 4: the durable tasks, one suite on every store kind (memory, SQLite, PostgreSQL):
//! created, read, changed in one transaction by a pure step, adopted by another runner once the
//! lease of the first ran out (a restarted server resumes a wait), renewed, purged past their time
//! to live; and a SQLite database of schema version 2 gains the table, keeps its contracts, and is
//! still read by a read-only store.

use std::sync::Arc;

use shiftwork_contracts::tasks::{TaskRecord, TaskStatus};
use shiftwork_contracts::{ContractId, SqliteOptions, SqliteStore, Store};
use shiftwork_seams::{ManualClock, OsFs};

use crate::support;

const T0: i64 = 1_790_000_000_000;

fn clock() -> ManualClock {
    ManualClock::new(chrono::DateTime::from_timestamp_millis(T0).unwrap())
}

fn task(id: &str, now: i64) -> TaskRecord {
    TaskRecord::working(id, "bob", "poll_next_task", r#"{"wait_sec":300}"#, now, 300_000, Some(3_900_000), 5_000)
}

/// One check per behaviour, on every store kind.
fn check(what: &str, run: impl Fn(&dyn Store, &ManualClock)) {
    for kind in support::store_kinds() {
        let clock = clock();
        let test = support::store(kind, &clock);
        eprintln!("{what} on {kind}");
        run(test.store.as_ref(), &clock);
    }
}

#[test]
fn issue35_item4_a_task_is_created_read_and_changed_in_one_step() {
    check("create, get, update", |store, _| {
        let tasks = store.tasks().expect("every store keeps tasks");
        let made = task("t-1", T0).run_by("replica-a", T0 + 10_000);
        tasks.create_task(&made).unwrap();
        assert_eq!(tasks.get_task("t-1").unwrap().as_ref(), Some(&made));
        assert!(tasks.create_task(&made).is_err(), "an id is never taken twice");
        assert_eq!(tasks.get_task("t-2").unwrap(), None);
        assert_eq!(tasks.update_task("t-2", &|t, _| Some(t.clone())).unwrap(), None);
        // A step that returns nothing leaves the record as it is.
        assert_eq!(tasks.update_task("t-1", &|_, _| None).unwrap().as_ref(), Some(&made));
        let contract = ContractId::parse("0b0d5a1e-4f38-4a8e-9a53-1f2d3c4b5a69").unwrap();
        let done = tasks
            .update_task("t-1", &|t, now| {
                (t.status == TaskStatus::Working)
                    .then(|| t.clone().completed(r#"{"isError":false}"#, Some((contract.clone(), 3)), now))
            })
            .unwrap()
            .unwrap();
        assert_eq!(done.status, TaskStatus::Completed);
        assert_eq!(done.updated_at, T0, "the step gets the transaction's time");
        let read = tasks.get_task("t-1").unwrap().unwrap();
        assert_eq!(read, done);
        assert_eq!(read.claimed, Some((contract, 3)));
        assert_eq!(read.runner, None, "a finished task has no runner");
        let cancelled = tasks
            .update_task("t-1", &|t, now| {
                (!t.delivered).then(|| TaskRecord { delivered: true, ..t.clone() }.cancelled("asked", now))
            })
            .unwrap()
            .unwrap();
        assert_eq!((cancelled.status, cancelled.delivered), (TaskStatus::Cancelled, true));
        assert_eq!(cancelled.status_message.as_deref(), Some("asked"));
    });
}

#[test]
fn issue35_item4_a_task_whose_runner_lease_ran_out_is_adopted_by_another_runner() {
    check("adopt, renew", |store, clock| {
        let tasks = store.tasks().unwrap();
        tasks
            .create_task(&task("held", T0).run_by("dead", T0 + 10_000))
            .unwrap();
        tasks
            .create_task(&task("live", T0).run_by("alive", T0 + 60_000))
            .unwrap();
        let mut finished = task("done", T0).run_by("dead", T0 + 10_000);
        finished.status = TaskStatus::Completed;
        tasks.create_task(&finished).unwrap();
        assert!(tasks.adopt_tasks("new", T0 + 5_000, T0 + 15_000, 10).unwrap().is_empty(), "leases still run");
        clock.advance(std::time::Duration::from_secs(11));
        let adopted = tasks.adopt_tasks("new", T0 + 11_000, T0 + 21_000, 10).unwrap();
        assert_eq!(adopted.iter().map(|t| t.task_id.as_str()).collect::<Vec<_>>(), ["held"]);
        let held = tasks.get_task("held").unwrap().unwrap();
        assert_eq!((held.runner.as_deref(), held.runner_until), (Some("new"), T0 + 21_000));
        assert_eq!(tasks.renew_tasks("new", T0 + 40_000).unwrap(), 1);
        assert_eq!(tasks.get_task("held").unwrap().unwrap().runner_until, T0 + 40_000);
        assert_eq!(tasks.renew_tasks("nobody", T0 + 40_000).unwrap(), 0);
        assert_eq!(
            tasks.get_task("live").unwrap().unwrap().runner.as_deref(),
            Some("alive"),
            "a task whose runner lives is not taken"
        );
    });
}

#[test]
fn issue35_item4_tasks_past_their_time_to_live_are_purged() {
    check("purge", |store, _| {
        let tasks = store.tasks().unwrap();
        tasks.create_task(&task("old", T0)).unwrap();
        let mut forever = task("forever", T0);
        forever.ttl_ms = None;
        tasks.create_task(&forever).unwrap();
        assert_eq!(tasks.purge_tasks(T0 + 3_899_999, 10).unwrap(), 0);
        assert!(!tasks.get_task("old").unwrap().unwrap().is_expired(T0 + 3_899_999));
        assert_eq!(tasks.purge_tasks(T0 + 3_900_000, 10).unwrap(), 1);
        assert_eq!(tasks.get_task("old").unwrap(), None);
        assert!(tasks.get_task("forever").unwrap().is_some());
    });
}

/// A SQLite database of schema version 2 (made by a build before the tasks) gains the tasks table
/// on its first open by a writer, keeps its contracts, and a read-only store reads a version-2 file
/// without upgrading it.
#[test]
fn issue35_item4_a_sqlite_database_of_version_2_gains_the_tasks_table() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contracts.db");
    let clock = Arc::new(clock());
    {
        let store = SqliteStore::open(&path, SqliteOptions::default(), clock.clone(), &OsFs).unwrap();
        let c = crate::concurrency::facade(Arc::new(store), 5);
        crate::concurrency::dispatch(&c, "zed", 1);
    }
    // Make it a version-2 file again, as the build before the tasks left it.
    shiftwork_contracts::testing::sqlite_exec(
        &path,
        "DROP TABLE contracts_tasks; PRAGMA user_version = 2;",
    )
    .unwrap();
    let reader = SqliteStore::open_read_only(&path, SqliteOptions::default(), clock.clone(), &OsFs).unwrap();
    assert_eq!(reader.queue_depth().unwrap().by_status.of(shiftwork_contracts::Status::Submitted), 1);
    drop(reader);
    let store = SqliteStore::open(&path, SqliteOptions::default(), clock, &OsFs).unwrap();
    let version: i64 = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 3);
    assert_eq!(store.queue_depth().unwrap().by_status.of(shiftwork_contracts::Status::Submitted), 1);
    store.tasks().unwrap().create_task(&task("t", T0)).unwrap();
    assert!(store.check_integrity().unwrap().is_clean());
}
