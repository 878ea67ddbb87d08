//! Issue 36 item 2: a contract that becomes claimable wakes one waiting poll, not every poll of its
//! agent, and no contract is left waiting for a poll that is not coming. The waits run on a
//! `ManualClock` that never moves here, so nothing but a store's signal wakes a poll (the clock's
//! safety-net look every few seconds never comes). Every store.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use shiftwork_contracts::integrity::IntegrityReport;
use shiftwork_contracts::model::EpochMs;
use shiftwork_contracts::store::{Build, Due, InsertOutcome, ListPage, ListQuery, SweepReport, Update};
use shiftwork_contracts::transition::Reply;
use shiftwork_contracts::wait::{Cancel, Wake};
use shiftwork_contracts::{
    AgentId, Contract, ContractId, Contracts, DispatchRequest, FulfillRequest, SeededIdSource, Store,
    StoreError,
};
use shiftwork_seams::Clock;

use crate::scenarios;
use crate::support::{store, store_kinds, who};

/// How long a test waits for something that must happen before it calls it hung (a bound, not a
/// measure of speed).
const HUNG: Duration = Duration::from_secs(60);

/// A store that counts the claims asked of it.
struct Counting {
    inner: Arc<dyn Store>,
    claims: AtomicUsize,
}

impl Store for Counting {
    fn clock(&self) -> Arc<dyn Clock> {
        self.inner.clock()
    }
    fn insert(&self, build: Build<'_>) -> Result<InsertOutcome, StoreError> {
        self.inner.insert(build)
    }
    fn claim_next(&self, agent: &AgentId) -> Result<Option<Contract>, StoreError> {
        self.claims.fetch_add(1, Ordering::SeqCst);
        self.inner.claim_next(agent)
    }
    fn update(&self, contract_id: &ContractId, step: Update<'_>) -> Result<Option<Reply>, StoreError> {
        self.inner.update(contract_id, step)
    }
    fn get(&self, contract_id: &ContractId) -> Result<Option<Contract>, StoreError> {
        self.inner.get(contract_id)
    }
    fn get_by_key(&self, requester: &AgentId, key: &str) -> Result<Option<Contract>, StoreError> {
        self.inner.get_by_key(requester, key)
    }
    fn list(&self, query: &ListQuery, now: EpochMs) -> Result<ListPage, StoreError> {
        self.inner.list(query, now)
    }
    fn sweep(&self, now: EpochMs, max_per_kind: usize) -> Result<SweepReport, StoreError> {
        self.inner.sweep(now, max_per_kind)
    }
    fn purge_terminal(&self, completed_before: EpochMs, max: usize) -> Result<u64, StoreError> {
        self.inner.purge_terminal(completed_before, max)
    }
    fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        self.inner.check_integrity()
    }
    fn due(&self, agent: &AgentId, now: EpochMs) -> Result<Due, StoreError> {
        self.inner.due(agent, now)
    }
    fn watch(&self, agent: &AgentId, wake: &Wake) -> Result<(), StoreError> {
        self.inner.watch(agent, wake)
    }
    fn unwatch(&self, agent: &AgentId, wake: &Wake) {
        self.inner.unwatch(agent, wake)
    }
}

fn facade(store: Arc<dyn Store>, fs: &shiftwork_seams::MemFs) -> Arc<Contracts> {
    Arc::new(
        Contracts::builder(store)
            .fs(Arc::new(fs.clone()))
            .ids(Arc::new(SeededIdSource::new(5)))
            .config(crate::support::config(false))
            .build(),
    )
}

/// Waits (in real time, bounded by [`HUNG`]) until `done` holds.
fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + HUNG;
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Issue 36 item 2: with six polls of one agent waiting, one dispatch makes one of them look (one
/// claim asked of the store), and the other five go on waiting. (On SQLite the thread that watches
/// the file for other processes' commits may also see the dispatch before the woken poll claimed it,
/// and wake one more: at most two looks there.)
#[test]
fn issue36_item2_one_dispatch_wakes_one_waiting_poll() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let counting = Arc::new(Counting {
            inner: s.store.clone(),
            claims: AtomicUsize::new(0),
        });
        let c = facade(counting.clone(), &fx.fs);
        let cancel = Cancel::new();
        // PostgreSQL's listener wakes every waiting poll once when its connection is made (what was
        // committed while nobody listened is looked for again): a first poll of another agent waits
        // until that happened, and keeps the listener for the rest.
        let warm = usize::from(kind == "postgres");
        let warming: Vec<_> = (0..warm)
            .map(|_| {
                let (c, cancel) = (c.clone(), cancel.clone());
                let waiting = std::thread::spawn(move || {
                    c.poll_next_task_wait(&who("carol"), Duration::from_secs(60), &cancel)
                        .unwrap();
                });
                // Woken by the connection (a second look), or connected before the poll's first look
                // took the wake: either way connected after two seconds on a local socket.
                let connected = Instant::now() + Duration::from_secs(2);
                while counting.claims.load(Ordering::SeqCst) < 2 && Instant::now() < connected {
                    std::thread::sleep(Duration::from_millis(1));
                }
                waiting
            })
            .collect();
        let base = counting.claims.load(Ordering::SeqCst);
        let claimed = Arc::new(AtomicUsize::new(0));
        let waiters: Vec<_> = (0..6)
            .map(|_| {
                let (c, cancel, claimed) = (c.clone(), cancel.clone(), claimed.clone());
                std::thread::spawn(move || {
                    let out = c
                        .poll_next_task_wait(&who("bob"), Duration::from_secs(60), &cancel)
                        .unwrap();
                    if out.held().is_some() {
                        claimed.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        until("six polls wait", || fx.clock.waiters() == 6 + warm);
        let before = counting.claims.load(Ordering::SeqCst);
        assert_eq!(before - base, 6, "{kind}: each poll looked once before it waited");
        c.dispatch(&DispatchRequest::new(who("alice"), who("bob"), "one", "/w"))
            .unwrap();
        until("one poll claims", || claimed.load(Ordering::SeqCst) == 1);
        until("the others wait again", || fx.clock.waiters() == 5 + warm);
        let looks = counting.claims.load(Ordering::SeqCst) - before;
        let most = if kind == "sqlite" { 2 } else { 1 };
        assert!(
            (1..=most).contains(&looks),
            "{kind}: {looks} polls looked for one contract"
        );
        cancel.cancel();
        waiters.into_iter().chain(warming).for_each(|w| w.join().unwrap());
        assert_eq!(claimed.load(Ordering::SeqCst), 1, "{kind}");
    }
}

/// Issue 36 item 2: a burst of contracts is worked through by the waiting polls alone: every
/// contract is claimed exactly once although no clock moves, so no poll looks again on its own.
#[test]
fn issue36_item2_a_burst_is_claimed_by_waiting_polls_alone() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = facade(s.store.clone(), &fx.fs);
        let cancel = Cancel::new();
        let done = Arc::new(std::sync::Mutex::new(Vec::new()));
        let n = 12;
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (c, cancel, done) = (c.clone(), cancel.clone(), done.clone());
                std::thread::spawn(move || {
                    while !cancel.is_cancelled() {
                        let out = c
                            .poll_next_task_wait(&who("bob"), Duration::from_secs(60), &cancel)
                            .unwrap();
                        if let Some(h) = out.held() {
                            c.fulfill_contract(&h.holder(), &FulfillRequest::new("done"))
                                .unwrap();
                            done.lock().unwrap().push(h.contract_id.clone());
                        }
                    }
                })
            })
            .collect();
        until("four polls wait", || fx.clock.waiters() == 4);
        for i in 0..n {
            c.dispatch(&DispatchRequest::new(
                who("alice"),
                who("bob"),
                format!("job {i}"),
                "/w",
            ))
            .unwrap();
        }
        until("every contract is claimed", || done.lock().unwrap().len() == n);
        cancel.cancel();
        workers.into_iter().for_each(|w| w.join().unwrap());
        let mut ids = done.lock().unwrap().clone();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "{kind}: each contract claimed once");
    }
}
