//! Shared set-up: stores to run against, and the library surface of the scenarios.

#![allow(missing_docs)]

use std::sync::Arc;

use contracts::{Contracts, ContractsConfig, MemoryStore, SeededIdSource, SqliteOptions, SqliteStore, Store};
use seams::{Clock, ManualClock, MemFs, OsFs};
use serde_json::Value;

use crate::scenarios::{CallOpts, Surface};

/// A store under test and what keeps it alive.
pub struct TestStore {
    pub name: &'static str,
    pub store: Arc<dyn Store>,
    _dir: Option<tempfile::TempDir>,
}

/// The kinds of store every shared suite runs against (CT-164, CT-176).
pub const STORE_KINDS: [&str; 2] = ["memory", "sqlite"];

/// A new, empty store of `kind` reading `clock` (SQLite: a file in a fresh temporary directory).
pub fn store(kind: &'static str, clock: &ManualClock) -> TestStore {
    let clock: Arc<dyn Clock> = Arc::new(clock.clone());
    match kind {
        "memory" => TestStore {
            name: kind,
            store: Arc::new(MemoryStore::new(clock)),
            _dir: None,
        },
        _ => {
            let dir = tempfile::tempdir().unwrap();
            let sqlite = SqliteStore::open(
                &dir.path().join("contracts.db"),
                SqliteOptions::default(),
                clock,
                &OsFs,
            )
            .unwrap();
            TestStore {
                name: kind,
                store: Arc::new(sqlite),
                _dir: Some(dir),
            }
        }
    }
}

/// A facade over `store` with the fixture's clock and workspace.
pub fn facade(store: &Arc<dyn Store>, clock: &ManualClock, fs: &MemFs, strict: bool) -> Contracts {
    Contracts::new(
        store.clone(),
        Arc::new(clock.clone()),
        Arc::new(fs.clone()),
        Arc::new(SeededIdSource::new(1)),
        ContractsConfig {
            require_claim_epoch: strict,
            ..ContractsConfig::default()
        },
    )
}

/// The scenarios' library surface: `contracts::args::call` over a facade.
pub struct Library {
    pub normal: Contracts,
    pub strict: Contracts,
}

impl Library {
    pub fn new(store: &Arc<dyn Store>, clock: &ManualClock, fs: &MemFs) -> Self {
        // One id source for both facades: ids follow the order of dispatches, whichever facade runs them.
        let ids = Arc::new(SeededIdSource::new(1));
        let make = |strict| {
            Contracts::new(
                store.clone(),
                Arc::new(clock.clone()),
                Arc::new(fs.clone()),
                ids.clone(),
                ContractsConfig {
                    require_claim_epoch: strict,
                    ..ContractsConfig::default()
                },
            )
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
        contracts::args::call(c, tool, args.as_object().unwrap(), opts.agent)
    }

    fn sweep(&mut self, now: i64) -> (u64, u64) {
        let r = self.normal.sweep(now).unwrap();
        (r.queued_timed_out, r.claimed_timed_out)
    }
}
