//! Issue 27 item 16 (class: the top of a list taken from one page read in another order): the store
//! lists newest first by `seq`, a page at a time, and the contracts pane shows the oldest waiting
//! contracts by queueing time and the claimed ones soonest to expire. Past one page, those must still
//! be the true ones, on SQLite and on the in-memory store alike.

use std::sync::Arc;
use std::time::Duration;

use shiftwork_contracts::store::epoch_ms;
use shiftwork_contracts::{
    AgentId, Contracts, ContractsConfig, DispatchRequest, MemoryStore, SeededIdSource, SqliteOptions,
    SqliteStore, Store,
};
use shiftwork_seams::{ManualClock, MemFs, OsFs};
use shiftwork_watch::gather::{READ_PAGE, WAITING_SHOWN, read_store};

use crate::fixture::start;

/// More waiting contracts than one page holds.
const WAITING: usize = READ_PAGE + 101;

fn id(agent: &str) -> AgentId {
    AgentId::new(agent).unwrap()
}

/// A facade over `store` whose workspace `/repo` exists.
fn queue(store: &Arc<dyn Store>, seed: u64) -> Contracts {
    let fs = MemFs::new();
    fs.make_dirs("/repo");
    Contracts::builder(store.clone())
        .fs(Arc::new(fs))
        .ids(Arc::new(SeededIdSource::new(seed)))
        .config(
            ContractsConfig::builder()
                .allowed_roots(shiftwork_contracts::roots::AllowedRoots::new(["/repo"]))
                .build()
                .unwrap(),
        )
        .build()
}

/// Both stores, each over its own clock at [`start`].
fn stores(dir: &std::path::Path) -> Vec<(&'static str, Arc<dyn Store>, ManualClock)> {
    let sqlite_clock = ManualClock::new(start());
    let sqlite = SqliteStore::open(
        &dir.join("contracts.db"),
        SqliteOptions::default(),
        Arc::new(sqlite_clock.clone()),
        &OsFs,
    )
    .unwrap();
    let memory_clock = ManualClock::new(start());
    let memory = MemoryStore::new(Arc::new(memory_clock.clone()));
    vec![
        ("SQLite", Arc::new(sqlite), sqlite_clock),
        ("memory", Arc::new(memory), memory_clock),
    ]
}

/// Issue 27 item 16: with 1,101 contracts waiting for bob, one a second, the pane shows the 20 that
/// have waited longest — the first 20 dispatched, except the very first, which bob claimed and
/// released, so it queued again last (it keeps its place in the store's `seq` order). The same for
/// everyone, for bob (the target) and for alice (the requester). On `main` the pane showed the oldest
/// of the newest 1,000 (contracts 102 to 121).
#[test]
fn issue27_item16_waiting_oldest_first_past_one_page() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store, clock) in stores(dir.path()) {
        let queue = queue(&store, 27);
        for i in 1..=WAITING {
            queue
                .dispatch(&DispatchRequest::new(
                    id("alice"),
                    id("bob"),
                    format!("job {i}"),
                    "/repo",
                ))
                .unwrap();
            clock.advance(Duration::from_secs(1));
        }
        let held = queue.poll_next_task(&id("bob")).unwrap();
        let held = held.held().unwrap().clone();
        queue.release_contract(&held.holder(), None).unwrap();
        let now = epoch_ms(&clock);
        let expected: Vec<String> = (2..2 + WAITING_SHOWN).map(|i| format!("job {i}")).collect();
        for agent in [None, Some("bob"), Some("alice")] {
            let agent = agent.map(|a| AgentId::new(a).unwrap());
            let c = read_store(store.as_ref(), agent.as_ref(), now).unwrap();
            let titles: Vec<&str> = c.waiting.iter().map(|w| w.title.as_str()).collect();
            assert_eq!(titles, expected, "{name}, agent {agent:?}");
            let submitted = c.counts.iter().find(|n| n.status == "SUBMITTED").unwrap().count;
            assert_eq!(submitted, WAITING as u64, "{name}");
        }
        let c = read_store(store.as_ref(), Some(&AgentId::new("carol").unwrap()), now).unwrap();
        assert!(c.waiting.is_empty(), "{name}: carol neither sent nor holds any");
    }
}

/// Issue 27 item 16, the same class for the claimed contracts: with more claimed than one page, the
/// one whose lease ends soonest is shown first even though it was dispatched first (the oldest `seq`).
#[test]
fn issue27_item16_claimed_soonest_to_expire_past_one_page() {
    let dir = tempfile::tempdir().unwrap();
    for (name, store, clock) in stores(dir.path()) {
        let queue = queue(&store, 16);
        let claimed = READ_PAGE + 1;
        for i in 1..=claimed {
            // The first contract has the shortest lease; every later one a longer lease.
            let lease = Duration::from_secs(if i == 1 { 60 } else { 3_600 });
            queue
                .dispatch(
                    &DispatchRequest::new(id("alice"), id("bob"), format!("job {i}"), "/repo")
                        .exec_ttl(lease),
                )
                .unwrap();
        }
        for _ in 1..=claimed {
            assert!(queue.poll_next_task(&id("bob")).unwrap().held().is_some());
        }
        let c = read_store(store.as_ref(), None, epoch_ms(&clock)).unwrap();
        assert_eq!(
            c.claimed.len(),
            claimed.min(shiftwork_watch::gather::CLAIMED_SHOWN),
            "{name}"
        );
        assert_eq!(c.claimed[0].title, "job 1", "{name}");
    }
}
