//! CT-191: a database written by schema version 1 (the fixtures in `tests/fixtures`, made by
//! shiftwork-contracts 0.1.0 before §13: a SQLite file and a PostgreSQL dump) opens, migrates to
//! version 2 in one transaction, and keeps every contract: every old column of every row is unchanged,
//! the new columns are `max_deliveries = 1`, `available_at = null`, `delivery_count` 1 when the
//! contract was ever claimed, else 0, and the `seq` counter keeps its value.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use shiftwork_contracts::store::ListQuery;
use shiftwork_contracts::{SqliteOptions, SqliteStore, Store};
use shiftwork_seams::OsFs;

use crate::concurrency::clock_at;
use crate::scenarios::T0;

/// The 35 columns of schema version 1.
const V1: [&str; 35] = [
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
];

type Rows = BTreeMap<i64, serde_json::Map<String, Value>>;

fn sqlite_rows(path: &Path) -> Rows {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn.prepare("SELECT * FROM contracts ORDER BY seq").unwrap();
    let names: Vec<String> = stmt.column_names().map(str::to_owned).collect();
    let mut rows = stmt.query([]).unwrap();
    let mut out = Rows::new();
    while let Some(row) = rows.next().unwrap() {
        let mut m = serde_json::Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = match row.get_ref(i).unwrap() {
                rusqlite::types::ValueRef::Null => Value::Null,
                rusqlite::types::ValueRef::Integer(n) => json!(n),
                rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                other => panic!("unexpected {other:?}"),
            };
            m.insert(name.clone(), v);
        }
        out.insert(m["seq"].as_i64().unwrap(), m);
    }
    out
}

/// Asserts CT-191 between the version-1 rows `before` and the migrated rows `after`.
fn check_kept(before: &Rows, after: &Rows, what: &str) {
    assert_eq!(before.len(), 8, "{what}: the fixture holds eight contracts");
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "{what}: every contract kept"
    );
    for (seq, old) in before {
        let new = &after[seq];
        for column in V1 {
            assert_eq!(old[column], new[column], "{what}: seq {seq} column {column}");
        }
        let claimed = old["claim_epoch"].as_i64().unwrap() >= 1;
        assert_eq!(new["max_deliveries"], json!(1), "{what}: seq {seq}");
        assert_eq!(
            new["delivery_count"],
            json!(i64::from(claimed)),
            "{what}: seq {seq}"
        );
        assert_eq!(new["available_at"], Value::Null);
        assert_eq!(new["cancel_reason"], Value::Null);
    }
}

/// CT-191 on SQLite: the version-1 file migrates on first open, keeps every contract and its `seq`
/// counter (the newest contract of the fixture was purged: the next `seq` is still 11), and works.
#[test]
fn ct191_a_sqlite_database_of_schema_version_1_migrates_and_keeps_every_contract() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contracts.db");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/contracts-v1.db"),
        &path,
    )
    .unwrap();
    let before = sqlite_rows(&path);
    let version = |p: &Path| -> i64 {
        rusqlite::Connection::open(p)
            .unwrap()
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(version(&path), 1);
    let clock = clock_at(T0 + 300_000);
    let store: Arc<dyn Store> =
        Arc::new(SqliteStore::open(&path, SqliteOptions::default(), Arc::new(clock.clone()), &OsFs).unwrap());
    // Version 1 → 2 → 3 (the commit counter) in the one transaction.
    assert_eq!(
        version(&path),
        i64::from(shiftwork_contracts::store::SCHEMA_VERSION)
    );
    check_kept(&before, &sqlite_rows(&path), "SQLite");
    assert!(store.check_integrity().unwrap().is_clean());
    // A second open finds version 2 and changes nothing.
    drop(SqliteStore::open(&path, SqliteOptions::default(), Arc::new(clock.clone()), &OsFs).unwrap());
    check_kept(&before, &sqlite_rows(&path), "SQLite, opened again");
    // It works: the seq counter is kept, and the migrated claim of bob is his.
    let c = crate::concurrency::facade(store.clone(), 5);
    let id = crate::support::cid(&crate::concurrency::dispatch(&c, "zed", 1));
    assert_eq!(
        store.get(&id).unwrap().unwrap().seq,
        11,
        "no seq is reused after the migration"
    );
    let page = store
        .list(
            &ListQuery {
                limit: 100,
                ..ListQuery::default()
            },
            T0,
        )
        .unwrap();
    assert_eq!(page.records.len(), 9);
}

/// CT-191 on PostgreSQL: the dumped version-1 schema migrates under the advisory lock, keeps every
/// contract and its sequence, and `schema_version` becomes 2.
#[cfg(feature = "postgres")]
#[test]
fn ct191_a_postgres_schema_of_version_1_migrates_and_keeps_every_contract() {
    let Some(url) = crate::support::postgres_url() else {
        return;
    };
    let _shared = crate::support::pg_shared();
    let schema = crate::support::fresh_schema();
    let dump = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/contracts-v1.pg.sql"),
    )
    .unwrap()
    .replace("__SCHEMA__", &schema);
    let mut raw = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    raw.batch_execute(&dump).unwrap();
    let rows = |raw: &mut postgres::Client| -> Rows {
        raw.query(
            &format!("SELECT to_jsonb(c) FROM \"{schema}\".contracts c ORDER BY seq"),
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| {
            let v: Value = r.get(0);
            let m = v.as_object().unwrap().clone();
            (m["seq"].as_i64().unwrap(), m)
        })
        .collect()
    };
    let before = rows(&mut raw);
    let clock = clock_at(T0 + 300_000);
    let store = crate::support::pg_store(Arc::new(clock.clone()), &schema);
    check_kept(&before, &rows(&mut raw), "PostgreSQL");
    let version: String = raw
        .query_one(
            &format!("SELECT value FROM \"{schema}\".contracts_meta WHERE key = 'schema_version'"),
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(version, "2");
    assert!(store.check_integrity().unwrap().is_clean());
    let store: Arc<dyn Store> = Arc::new(store);
    let c = crate::concurrency::facade(store.clone(), 5);
    let id = crate::support::cid(&crate::concurrency::dispatch(&c, "zed", 1));
    assert_eq!(store.get(&id).unwrap().unwrap().seq, 11);
    raw.batch_execute(&format!("DROP SCHEMA \"{schema}\" CASCADE"))
        .unwrap();
}
