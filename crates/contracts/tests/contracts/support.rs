//! Shared set-up: stores to run against, and the library surface of the scenarios.

#![allow(missing_docs)]

use std::sync::Arc;

use serde_json::Value;
use shiftwork_contracts::{
    Contracts, ContractsConfig, MemoryStore, SeededIdSource, SqliteOptions, SqliteStore, Store,
};
use shiftwork_seams::{Clock, ManualClock, MemFs, OsFs};

use crate::scenarios::{CallOpts, Surface};

/// A store under test and what keeps it alive.
pub struct TestStore {
    pub name: &'static str,
    pub store: Arc<dyn Store>,
    /// The clock a facade over this store reads: the one the store was given, or for a PostgreSQL
    /// store on the server's clock, `PgStore::server_clock` (as the adapter does, CT-148).
    pub clock: Arc<dyn Clock>,
    _dir: Option<tempfile::TempDir>,
    #[cfg(feature = "postgres")]
    pg: Option<Arc<shiftwork_contracts::PgStore>>,
    #[cfg(feature = "postgres")]
    _gate: Option<std::sync::RwLockReadGuard<'static, ()>>,
}

impl Drop for TestStore {
    fn drop(&mut self) {
        #[cfg(feature = "postgres")]
        if let Some(pg) = self.pg.take() {
            let _ = pg.drop_schema();
        }
    }
}

/// The kinds of store every shared suite runs against (CT-164, CT-176): memory, SQLite, and
/// PostgreSQL when `SHIFTWORK_TEST_POSTGRES_URL` names a server (CT-154).
pub fn store_kinds() -> Vec<&'static str> {
    let mut kinds = vec!["memory", "sqlite"];
    if postgres_url().is_some() {
        kinds.push("postgres");
    }
    kinds
}

/// The PostgreSQL server of the tests, if any. Without one the PostgreSQL runs are skipped (and say
/// so once); with `SHIFTWORK_REQUIRE_POSTGRES=1` (set by CI) a missing server or a build without the
/// `postgres` feature fails the tests instead.
pub fn postgres_url() -> Option<String> {
    let url = std::env::var("SHIFTWORK_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.is_empty());
    let required = std::env::var("SHIFTWORK_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
    if !cfg!(feature = "postgres") {
        assert!(
            !required,
            "SHIFTWORK_REQUIRE_POSTGRES=1 but the contracts crate was built without the postgres feature"
        );
        return None;
    }
    if url.is_none() {
        assert!(
            !required,
            "SHIFTWORK_REQUIRE_POSTGRES=1 but SHIFTWORK_TEST_POSTGRES_URL is not set"
        );
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| eprintln!("PostgreSQL tests skipped: SHIFTWORK_TEST_POSTGRES_URL is not set"));
    }
    url
}

/// PostgreSQL runs share one server; the restart test must have it to itself. Every test using the
/// server holds a read guard, the restart test the write guard.
pub static PG_GATE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A read guard of [`PG_GATE`].
pub fn pg_shared() -> std::sync::RwLockReadGuard<'static, ()> {
    PG_GATE.read().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A schema name no other test uses.
pub fn fresh_schema() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    format!("t{}_{n}", std::process::id())
}

/// A new `PgStore` in its own schema, reading `clock`.
#[cfg(feature = "postgres")]
pub fn pg_store(clock: Arc<dyn Clock>, schema: &str) -> shiftwork_contracts::PgStore {
    pg_store_on(Some(clock), schema)
}

/// A new `PgStore` in its own schema, reading `clock`, or the server's clock when `None` (CT-148).
#[cfg(feature = "postgres")]
pub fn pg_store_on(clock: Option<Arc<dyn Clock>>, schema: &str) -> shiftwork_contracts::PgStore {
    let url = postgres_url().expect("a PostgreSQL server");
    let options = shiftwork_contracts::PgOptions {
        schema: Some(schema.to_owned()),
        clock,
        // The suite runs many stores at once on one server (max_connections 200): a few connections
        // each are enough for its threads.
        pool_size: 4,
        ..shiftwork_contracts::PgOptions::default()
    };
    shiftwork_contracts::PgStore::connect(&url, options).unwrap()
}

/// A new, empty store of `kind` reading `clock` (SQLite: a file in a fresh temporary directory).
pub fn store(kind: &'static str, clock: &ManualClock) -> TestStore {
    store_with_clock(kind, Arc::new(clock.clone()))
}

/// A store of `kind` that judges by the clock production uses: the system's, and for PostgreSQL the
/// server's (`TestStore::clock` is then `PgStore::server_clock`, as in the adapter). The waiting tests
/// run on it, so a wait measured on the wrong clock shows on every store (issue 27).
pub fn production_store(kind: &'static str) -> TestStore {
    #[cfg(feature = "postgres")]
    if kind == "postgres" {
        let gate = pg_shared();
        let pg = Arc::new(pg_store_on(None, &fresh_schema()));
        return TestStore {
            name: kind,
            store: pg.clone(),
            clock: pg.server_clock(),
            _dir: None,
            pg: Some(pg),
            _gate: Some(gate),
        };
    }
    store_with_clock(kind, Arc::new(shiftwork_seams::SystemClock::new()))
}

/// [`store`] with any clock (the waiting tests use the system's).
pub fn store_with_clock(kind: &'static str, clock: Arc<dyn Clock>) -> TestStore {
    match kind {
        "memory" => TestStore {
            name: kind,
            store: Arc::new(MemoryStore::new(clock.clone())),
            clock,
            _dir: None,
            #[cfg(feature = "postgres")]
            pg: None,
            #[cfg(feature = "postgres")]
            _gate: None,
        },
        #[cfg(feature = "postgres")]
        "postgres" => {
            let gate = pg_shared();
            let pg = Arc::new(pg_store(clock.clone(), &fresh_schema()));
            TestStore {
                name: kind,
                store: pg.clone(),
                clock,
                _dir: None,
                pg: Some(pg),
                _gate: Some(gate),
            }
        }
        _ => {
            let dir = tempfile::tempdir().unwrap();
            let sqlite = SqliteStore::open(
                &dir.path().join("contracts.db"),
                SqliteOptions::default(),
                clock.clone(),
                &OsFs,
            )
            .unwrap();
            TestStore {
                name: kind,
                store: Arc::new(sqlite),
                clock,
                _dir: Some(dir),
                #[cfg(feature = "postgres")]
                pg: None,
                #[cfg(feature = "postgres")]
                _gate: None,
            }
        }
    }
}

/// A facade over `store` (which reads the fixture's clock) and the fixture's workspace.
pub fn facade(store: &Arc<dyn Store>, fs: &MemFs, strict: bool) -> Contracts {
    Contracts::builder(store.clone())
        .fs(Arc::new(fs.clone()))
        .ids(Arc::new(SeededIdSource::new(1)))
        .config(crate::support::config(strict))
        .build()
}

/// The scenarios' library surface: `shiftwork_contracts::args::call` over a facade.
pub struct Library {
    pub normal: Contracts,
    pub strict: Contracts,
}

impl Library {
    pub fn new(store: &Arc<dyn Store>, fs: &MemFs) -> Self {
        // One id source for both facades: ids follow the order of dispatches, whichever facade runs them.
        let ids = Arc::new(SeededIdSource::new(1));
        let make = |strict| {
            Contracts::builder(store.clone())
                .fs(Arc::new(fs.clone()))
                .ids(ids.clone())
                .config(crate::support::config(strict))
                .build()
        };
        Library {
            normal: make(false),
            strict: make(true),
        }
    }
}

impl Surface for Library {
    fn call_with(&mut self, opts: &CallOpts<'_>, tool: &str, args: Value) -> Value {
        let c = if opts.strict { &self.strict } else { &self.normal };
        shiftwork_contracts::args::call(
            c,
            tool,
            args.as_object().unwrap(),
            &shiftwork_contracts::DefaultAgent::from_value(opts.agent, "AGENT_NAME"),
        )
    }

    fn sweep(&mut self, now: i64) -> (u64, u64) {
        let r = self.normal.sweep(instant(now)).unwrap();
        (r.queued_timed_out, r.claimed_timed_out)
    }
}

/// The agent `name` (a valid fixture name).
pub fn agent(name: &str) -> shiftwork_contracts::AgentId {
    shiftwork_contracts::AgentId::new(name).unwrap()
}

/// The agent `name` (a valid fixture name), as a caller names itself.
pub fn who(name: &str) -> shiftwork_contracts::AgentId {
    agent(name)
}

/// The instant `ms` milliseconds after 1970 UTC.
pub fn instant(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap()
}

/// The contract id `text`.
pub fn cid(text: &str) -> shiftwork_contracts::ContractId {
    shiftwork_contracts::ContractId::parse(text).unwrap()
}

/// A dispatch from `alice` with every optional argument absent; literals give their own target,
/// title and root.
pub fn dreq() -> shiftwork_contracts::DispatchRequest {
    shiftwork_contracts::DispatchRequest::new(agent("alice"), agent("nobody"), "", "")
}

/// The facade configuration of the tests: the fixture workspace `/w` (in a `MemFs`) and the system's
/// temporary directory (the real workspaces of the process tests) are the allowed roots.
pub fn config(strict: bool) -> ContractsConfig {
    ContractsConfig::builder()
        .require_claim_epoch(strict)
        .allowed_roots(shiftwork_contracts::roots::AllowedRoots::new([
            std::path::PathBuf::from("/w"),
            std::env::temp_dir(),
        ]))
        .build()
        .unwrap()
}

/// Every record of `store`, newest first, in one page (no sweep; counts at time 0).
pub fn every_record(store: &dyn Store) -> Vec<shiftwork_contracts::Contract> {
    store
        .list(
            &shiftwork_contracts::store::ListQuery {
                limit: usize::MAX,
                ..Default::default()
            },
            0,
        )
        .unwrap()
        .records
}
