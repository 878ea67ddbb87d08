//! The SQLite store's file and the files beside it (issue 27 items 5, 9, 10; threat classes
//! "sidecars", "someone else's file", "not a regular file"): a store refused at opening is left byte
//! for byte as it was, with its sidecars; a read-only open writes nothing and creates nothing; only a
//! missing path becomes a database; a database holding objects the contracts schema does not define,
//! or that another user can write, is refused with a sentence that says what to fix.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use shiftwork_contracts::{Contracts, SeededIdSource, SqliteOptions, SqliteStore, Store, StoreError};
use shiftwork_seams::{ManualClock, OsFs};

use crate::scenarios::T0;

fn clock() -> ManualClock {
    ManualClock::new(chrono::DateTime::from_timestamp_millis(T0).unwrap())
}

pub(crate) fn open(path: &Path) -> Result<SqliteStore, StoreError> {
    SqliteStore::open(path, SqliteOptions::default(), Arc::new(clock()), &OsFs)
}

pub(crate) fn open_view(path: &Path) -> Result<SqliteStore, StoreError> {
    SqliteStore::open_read_only(path, SqliteOptions::default(), Arc::new(clock()), &OsFs)
}

/// Every file of `dir` with its bytes.
pub(crate) fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = if e.file_type().unwrap().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect()
}

/// The files of `dir`, by name.
pub(crate) fn names(dir: &Path) -> Vec<String> {
    snapshot(dir).into_keys().collect()
}

/// A workspace and a store at `<dir>/contracts.db` holding `n` contracts, closed again.
pub(crate) fn store_with(dir: &Path, n: usize) -> PathBuf {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("a.txt"), b"a\n").unwrap();
    let path = dir.join("contracts.db");
    let c = facade(open(&path).unwrap());
    for i in 0..n {
        let d = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": format!("job {i}"),
                   "workspace_root": ws, "pointers": ["a.txt"], "context_summary": "x".repeat(400)}),
        );
        assert_eq!(d["ok"], true, "{d}");
    }
    path
}

pub(crate) fn facade(store: SqliteStore) -> Contracts {
    // Each facade draws other ids: the clock stands still.
    static SEED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    Contracts::builder(Arc::new(store))
        .fs(Arc::new(OsFs))
        .ids(Arc::new(SeededIdSource::new(
            SEED.fetch_add(1, std::sync::atomic::Ordering::SeqCst),
        )))
        .config(crate::support::config(false))
        .build()
}

pub(crate) fn call(c: &Contracts, tool: &str, args: serde_json::Value) -> serde_json::Value {
    shiftwork_contracts::args::call(c, tool, args.as_object().unwrap(), &Default::default())
}

pub(crate) fn refused(result: Result<SqliteStore, StoreError>) -> String {
    match result {
        Err(StoreError::Unavailable { reason, .. }) => reason,
        Err(other) => panic!("refused as {other:?}"),
        Ok(_) => panic!("opened"),
    }
}

/// Issue 27 item 5: a `-wal` of another database beside the store (no process holding it) is
/// refused by the writer and by the read-only view, naming the file; the store, the log and the
/// directory are left byte for byte as they were (before, SQLite replayed the log: "not a contracts
/// database", and the file shrank from 48 KB to 8 KB). A hot `-journal` likewise. Without them the
/// store opens with every contract.
#[test]
fn issue27_a_foreign_wal_or_journal_beside_the_store_is_refused_and_nothing_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_with(dir.path(), 60);
    assert!(std::fs::metadata(&path).unwrap().len() > 40_000);
    let wal = shiftwork_contracts::testing::foreign_wal(dir.path()).unwrap();
    for (sidecar, bytes) in [
        ("contracts.db-wal", wal.clone()),
        ("contracts.db-wal", b"garbage that is no log at all".repeat(10)),
        ("contracts.db-journal", vec![0xd9; 4096]),
    ] {
        std::fs::write(dir.path().join(sidecar), &bytes).unwrap();
        let before = snapshot(dir.path());
        for (who, result) in [("writer", open(&path)), ("view", open_view(&path))] {
            let why = refused(result);
            assert!(why.contains(sidecar), "{who}: names {sidecar}: {why}");
            assert!(why.contains("aside"), "{who}: says what to do: {why}");
            assert_eq!(snapshot(dir.path()), before, "{who}: every byte as it was");
        }
        std::fs::remove_file(dir.path().join(sidecar)).unwrap();
    }
    let c = facade(open(&path).unwrap());
    let listed = call(&c, "inspect_mesh_state", json!({"limit": 50}));
    assert_eq!(listed["counts"]["SUBMITTED"], 60, "{listed}");
}

/// Issue 27 item 5: the store's own log, left behind by a process that died before folding it in,
/// is replayed: the writer and the read-only view both see the contracts committed in it, and the
/// view writes nothing and creates nothing.
#[test]
fn issue27_the_stores_own_log_left_behind_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_with(dir.path(), 3);
    let crashed = tempfile::tempdir().unwrap();
    {
        // A writer that commits more and keeps its log: copy the files while it holds them, as a
        // kill -9 would leave them.
        let c = facade(open(&path).unwrap());
        for i in 0..5 {
            let d = call(
                &c,
                "dispatch_contract",
                json!({"requester_agent": "alice", "target_agent": "bob", "title": format!("late {i}"),
                       "workspace_root": dir.path().join("ws"), "pointers": ["a.txt"]}),
            );
            assert_eq!(d["ok"], true, "{d}");
        }
        assert!(
            std::fs::metadata(dir.path().join("contracts.db-wal"))
                .unwrap()
                .len()
                > 0
        );
        for f in ["contracts.db", "contracts.db-wal"] {
            std::fs::copy(dir.path().join(f), crashed.path().join(f)).unwrap();
        }
    }
    let left = crashed.path().join("contracts.db");
    let before = snapshot(crashed.path());
    let view = facade(open_view(&left).unwrap());
    let seen = call(&view, "inspect_mesh_state", json!({}));
    assert_eq!(seen["counts"]["SUBMITTED"], 8, "the view reads the log: {seen}");
    drop(view);
    assert_eq!(snapshot(crashed.path()), before, "the view wrote nothing");
    let c = facade(open(&left).unwrap());
    let seen = call(&c, "inspect_mesh_state", json!({}));
    assert_eq!(seen["counts"]["SUBMITTED"], 8, "{seen}");
    assert!(c.check_integrity().unwrap().is_clean());
}

/// Issue 27 item 5: a read-only open — the view, or a store whose file this process cannot write —
/// writes nothing and creates nothing: no `-wal`, no `-shm` (before, a 0444 store left 0444
/// sidecars and every later write failed "attempt to write a readonly database"). A view beside a
/// live writer reads its latest commits.
#[test]
fn issue27_a_read_only_open_writes_nothing_and_leaves_no_sidecars() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_with(dir.path(), 4);
    let before = snapshot(dir.path());
    let view = facade(open_view(&path).unwrap());
    let seen = call(&view, "inspect_mesh_state", json!({}));
    assert_eq!(seen["counts"]["SUBMITTED"], 4, "{seen}");
    assert!(view.check_integrity().unwrap().is_clean());
    let polled = call(&view, "poll_next_task", json!({"agent_id": "bob", "wait_sec": 1}));
    assert_eq!(polled["error"]["code"], "STORE_UNAVAILABLE", "{polled}");
    assert_eq!(snapshot(dir.path()), before, "nothing written, nothing created");
    drop(view);
    assert_eq!(snapshot(dir.path()), before);

    // A live writer beside the view: the view reads what it commits.
    let writer = facade(open(&path).unwrap());
    let view = facade(open_view(&path).unwrap());
    call(
        &writer,
        "dispatch_contract",
        json!({"requester_agent": "alice", "target_agent": "bob", "title": "live",
               "workspace_root": dir.path().join("ws")}),
    );
    let seen = call(&view, "inspect_mesh_state", json!({}));
    assert_eq!(seen["counts"]["SUBMITTED"], 5, "{seen}");
    drop((view, writer));
    let left: Vec<String> = names(dir.path())
        .into_iter()
        .filter(|n| n.ends_with("-wal") || n.ends_with("-shm"))
        .collect();
    assert_eq!(left, Vec::<String>::new(), "the last writer folded its log in");

    // A store this process cannot write opens read-only and leaves nothing beside it; afterwards a
    // writer works.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let writable = std::fs::OpenOptions::new().append(true).open(&path).is_ok();
    if !writable {
        let before = snapshot(dir.path());
        let store = open(&path).unwrap();
        assert!(store.is_read_only());
        let c = facade(store);
        assert_eq!(
            call(&c, "inspect_mesh_state", json!({}))["counts"]["SUBMITTED"],
            5
        );
        drop(c);
        assert_eq!(snapshot(dir.path()), before, "no 0444 sidecars");
    } else {
        eprintln!("this process writes 0444 files (root): the read-only case runs through open_read_only");
        let before = snapshot(dir.path());
        let c = facade(open_view(&path).unwrap());
        assert_eq!(
            call(&c, "inspect_mesh_state", json!({}))["counts"]["SUBMITTED"],
            5
        );
        drop(c);
        assert_eq!(snapshot(dir.path()), before, "no 0444 sidecars");
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    let c = facade(open(&path).unwrap());
    let d = call(
        &c,
        "dispatch_contract",
        json!({"requester_agent": "alice", "target_agent": "bob", "title": "after",
               "workspace_root": dir.path().join("ws")}),
    );
    assert_eq!(d["ok"], true, "later writes work: {d}");
}

/// Issue 27 item 9: only a missing path becomes a database. An existing file that is empty, not an
/// SQLite database, an SQLite database without the contracts application id, or another
/// application's, is refused by name and left as it was.
#[test]
fn issue27_only_a_missing_path_becomes_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let empty_sqlite = dir.path().join("plain.db");
    rusqlite::Connection::open(&empty_sqlite)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); DROP TABLE t; VACUUM;")
        .unwrap();
    let other_app = dir.path().join("other.db");
    rusqlite::Connection::open(&other_app)
        .unwrap()
        .execute_batch("PRAGMA application_id = 42; CREATE TABLE t (x);")
        .unwrap();
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, b"my notes\n".repeat(100)).unwrap();
    for (file, says) in [
        (&empty, "is empty"),
        (&notes, "is not an SQLite database"),
        (&empty_sqlite, "without the contracts application id"),
        (&other_app, "another application"),
    ] {
        let before = snapshot(dir.path());
        for (who, result) in [("writer", open(file)), ("view", open_view(file))] {
            let why = refused(result);
            let name = file.file_name().unwrap().to_str().unwrap();
            assert!(why.contains(name) && why.contains(says), "{who} {name}: {why}");
            assert_eq!(snapshot(dir.path()), before, "{who} {name}: left as it was");
        }
    }
    // A dangling link where the store should be: refused, and its target is not created.
    let link = dir.path().join("link.db");
    std::os::unix::fs::symlink(dir.path().join("elsewhere.db"), &link).unwrap();
    let before = snapshot(dir.path());
    assert!(!refused(open(&link)).is_empty());
    assert_eq!(snapshot(dir.path()), before, "nothing created through the link");
    assert!(!dir.path().join("elsewhere.db").exists());
    std::fs::remove_file(&link).unwrap();
    let fresh = dir.path().join("sub").join("new.db");
    let store = open(&fresh).unwrap();
    assert!(store.check_integrity().unwrap().is_clean());
    drop(store);
    let left: Vec<String> = names(&dir.path().join("sub"));
    assert_eq!(left, ["new.db"], "created whole, no temporary file left");
}

/// Issue 27 item 10: a database with the contracts application id and schema version that also
/// holds a trigger (a dispatch to bob stored for mallory, results copied elsewhere, waiting work
/// hidden with RAISE(IGNORE)), a view, another table or index, or one of our indexes defined
/// otherwise, is refused by the writer and the view, naming the object, and left as it was.
#[test]
fn issue27_a_store_holding_objects_it_did_not_create_is_refused() {
    for (names, sql) in [
        (
            &["to_mallory"][..],
            "CREATE TRIGGER to_mallory AFTER INSERT ON contracts BEGIN
               UPDATE contracts SET target_agent = 'mallory' WHERE seq = new.seq; END",
        ),
        (
            &["loot", "exfiltrate"][..],
            "CREATE TABLE loot (r TEXT); CREATE TRIGGER exfiltrate AFTER UPDATE ON contracts BEGIN
               INSERT INTO loot VALUES (new.result_summary); END",
        ),
        (
            &["hide"][..],
            "CREATE TRIGGER hide BEFORE UPDATE ON contracts WHEN new.status = 'CLAIMED' BEGIN
               SELECT RAISE(IGNORE); END",
        ),
        (&["peek"][..], "CREATE VIEW peek AS SELECT * FROM contracts"),
        (&["loot"][..], "CREATE TABLE loot (r TEXT)"),
        (&["by_title"][..], "CREATE INDEX by_title ON contracts (title)"),
        (
            &["contracts_ready"][..],
            "DROP INDEX contracts_ready; CREATE INDEX contracts_ready ON contracts (title)",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = store_with(dir.path(), 2);
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let before = snapshot(dir.path());
        for (who, result) in [("writer", open(&path)), ("view", open_view(&path))] {
            let why = refused(result);
            assert!(
                names.iter().any(|n| why.contains(&format!("'{n}'"))),
                "{who} {names:?}: {why}"
            );
            assert!(why.contains("does not define"), "{who} {names:?}: {why}");
            assert_eq!(snapshot(dir.path()), before, "{who} {names:?}: left as it was");
        }
    }
}

/// Issue 27 item 10: a store whose file, sidecars or directory another user can write (or another
/// user owns) is refused with the fix; a sidecar that is a link or not a regular file is refused too.
#[test]
fn issue27_a_store_other_users_can_write_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = store_with(dir.path(), 1);
    let set =
        |p: &Path, mode: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    set(&path, 0o660);
    let why = refused(open(&path));
    assert!(
        why.contains("contracts.db") && why.contains("chmod go-w"),
        "{why}"
    );
    set(&path, 0o600);
    set(dir.path(), 0o777);
    let why = refused(open_view(&path));
    assert!(why.contains("directory") && why.contains("chmod go-w"), "{why}");
    set(dir.path(), 0o1777);
    assert!(
        refused(open(&path)).contains("directory"),
        "a sticky bit does not stop a planted -wal"
    );
    set(dir.path(), 0o700);
    let wal = dir.path().join("contracts.db-wal");
    std::fs::write(&wal, b"").unwrap();
    set(&wal, 0o666);
    let why = refused(open(&path));
    assert!(
        why.contains("contracts.db-wal") && why.contains("chmod go-w"),
        "{why}"
    );
    std::fs::remove_file(&wal).unwrap();
    std::os::unix::fs::symlink("/tmp/elsewhere", &wal).unwrap();
    let why = refused(open(&path));
    assert!(
        why.contains("contracts.db-wal") && why.contains("not a regular file"),
        "{why}"
    );
    std::fs::remove_file(&wal).unwrap();
    assert!(open(&path).is_ok());
    // Creating a new store in a directory others can write is refused before anything is written.
    let shared = tempfile::tempdir().unwrap();
    set(shared.path(), 0o777);
    assert!(refused(open(&shared.path().join("c.db"))).contains("directory"));
    assert_eq!(names(shared.path()), Vec::<String>::new());
}
