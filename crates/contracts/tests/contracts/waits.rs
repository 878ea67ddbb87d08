//! Waits and cancellation on every store (issue 27; threat classes "waits", "cancellation at every
//! step", "every backend"):
//!
//! - a waiting poll ends by the clock it was given: under `ManualClock` it blocks until the test moves
//!   the clock past its deadline, then answers empty with `waited_ms` measured on that clock;
//! - with the clock production uses (PostgreSQL: the server's, as the adapter opens it) an empty wait
//!   answers at its deadline and a wait that a dispatch ends reports the time it waited;
//! - a cancelled call either answers or undoes what it did: a plain poll cancelled while it hashes a
//!   large pointer stops between chunks and undoes its claim; a dispatch, a fulfil and a verify
//!   cancelled while they read files stop there and keep nothing.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use shiftwork_contracts::views::PollOutcome;
use shiftwork_contracts::wait::Cancel;
use shiftwork_contracts::{Contracts, SeededIdSource, Status};
use shiftwork_seams::{DirEntry, FileWriter, Fs, LockGuard, MemFs, Metadata};

use crate::scenarios::{self, T0};
use crate::support::{TestStore, production_store, store, store_kinds, who};

/// How long a test waits for an answer that must come before it calls the call hung. It bounds the
/// test, it asserts nothing about speed.
const HUNG: Duration = Duration::from_secs(60);

fn facade(s: &TestStore, fs: Arc<dyn Fs>) -> Contracts {
    Contracts::builder(s.store.clone())
        .fs(fs)
        .ids(Arc::new(SeededIdSource::new(7)))
        .config(crate::support::config(false))
        .build()
}

fn call(c: &Contracts, tool: &str, args: Value, cancel: &Cancel) -> Value {
    shiftwork_contracts::args::call_cancellable(
        c,
        tool,
        args.as_object().unwrap(),
        &Default::default(),
        cancel,
    )
}

/// Runs `f` on a thread; its result, or a failure naming `what` when it does not come within [`HUNG`].
fn answered<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(HUNG)
        .unwrap_or_else(|_| panic!("{what}: no answer"))
}

/// Issue 27 item 2: a waiting poll under `ManualClock` ends when the clock passes its deadline — not
/// before, and not by real time — and answers nothing claimed with `waited_ms` on the manual clock.
#[test]
fn issue27_waits_end_by_the_clock_they_were_given() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = Arc::new(facade(&s, Arc::new(fx.fs.clone())));
        let (tx, rx) = mpsc::channel();
        {
            let c = c.clone();
            std::thread::spawn(move || {
                let out = c.poll_next_task_wait(&who("bob"), Duration::from_millis(100), &Cancel::new());
                let _ = tx.send(out);
            });
        }
        while fx.clock.waiters() == 0 {
            std::thread::yield_now();
        }
        // Real time passes, the manual clock does not: the wait goes on.
        assert!(
            rx.recv_timeout(Duration::from_millis(300)).is_err(),
            "{kind}: the wait ended by real time"
        );
        fx.clock.advance(Duration::from_millis(99));
        assert!(
            rx.recv_timeout(Duration::from_millis(100)).is_err(),
            "{kind}: the wait ended before its deadline"
        );
        fx.clock.advance(Duration::from_millis(1));
        let out = rx
            .recv_timeout(HUNG)
            .unwrap_or_else(|_| panic!("{kind}: the wait did not end at its deadline on the manual clock"))
            .unwrap();
        let PollOutcome::Empty { waited, message, .. } = out else {
            panic!("{kind}: {out:?}")
        };
        assert_eq!(
            waited,
            Some(Duration::from_millis(100)),
            "{kind}: measured on the manual clock"
        );
        assert_eq!(message, "No pending contracts for agent \"bob\"");
    }
}

/// Issue 27 item 1: with the clock production uses (PostgreSQL: the server's clock, as the adapter
/// opens it) an empty waiting poll answers at its deadline, and a wait that a dispatch ends reports
/// the time it waited (it used to report 0 on PostgreSQL, and an empty wait never answered).
#[test]
fn issue27_a_waiting_poll_on_the_production_clock_answers_on_every_store() {
    for kind in store_kinds() {
        let fs = scenarios::fixture().fs;
        let s = production_store(kind);
        let c = Arc::new(facade(&s, Arc::new(fs)));
        let empty = {
            let c = c.clone();
            answered(kind, move || {
                c.poll_next_task_wait(&who("bob"), Duration::from_secs(1), &Cancel::new())
                    .unwrap()
            })
        };
        let PollOutcome::Empty { waited, .. } = empty else {
            panic!("{kind}: {empty:?}")
        };
        assert!(
            waited.unwrap() >= Duration::from_secs(1),
            "{kind}: the whole wait_sec: {waited:?}"
        );
        let waiter = {
            let c = c.clone();
            std::thread::spawn(move || {
                c.poll_next_task_wait(&who("bob"), Duration::from_secs(30), &Cancel::new())
                    .unwrap()
            })
        };
        std::thread::sleep(Duration::from_millis(300));
        let sent = c
            .dispatch(&shiftwork_contracts::DispatchRequest::new(
                who("alice"),
                crate::support::agent("bob"),
                "job",
                "/w",
            ))
            .unwrap();
        let claimed = answered(kind, move || waiter.join().unwrap());
        let PollOutcome::Claimed { contract, waited, .. } = claimed else {
            panic!("{kind}: {claimed:?}")
        };
        assert_eq!(contract.contract_id, sent.contract_id, "{kind}");
        assert!(
            waited.unwrap() > Duration::ZERO,
            "{kind}: the time it waited: {waited:?}"
        );
    }
}

/// A file system that triggers `cancel` when a read of `path` has delivered its first chunk, and
/// counts the chunks its reader took.
struct CancelWhileReading {
    inner: MemFs,
    path: PathBuf,
    cancel: Cancel,
    chunks: AtomicUsize,
}

impl Fs for CancelWhileReading {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn read_chunks(
        &self,
        path: &Path,
        chunk_size: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<u64> {
        let watched = path == self.path;
        self.inner.read_chunks(path, chunk_size, &mut |chunk| {
            let out = sink(chunk);
            if watched && out.is_ok() {
                self.chunks.fetch_add(1, Ordering::SeqCst);
                self.cancel.cancel();
            }
            out
        })
    }
    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.metadata(path)
    }
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        self.inner.symlink_metadata(path)
    }
    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        self.inner.list_dir(path)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.canonicalize(path)
    }
    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        self.inner.read_link(path)
    }
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>> {
        self.inner.create_new(path, mode)
    }
    fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>> {
        self.inner.open_append(path, create)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>> {
        self.inner.lock(path, timeout)
    }
}

/// The size of the large pointer: many chunks of the hash's read.
const BIG: usize = 8 * 1024 * 1024;

/// Issue 27 item 3: a call cancelled while it reads a large pointer stops between two chunks and
/// either answers or undoes what it did. A plain poll (no `wait_sec`) undoes its claim (C3 with its
/// own entry; no claim held by nobody until the lease runs out); a dispatch stores nothing; a fulfil
/// writes nothing (no strike, no schema attempt); a verify changes nothing.
#[test]
fn issue27_a_cancelled_call_answers_or_undoes_what_it_did() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        fx.fs.write_file("/w/big.bin", &vec![b'x'; BIG]);
        let s = store(kind, &fx.clock);
        let plain = facade(&s, Arc::new(fx.fs.clone()));
        let watching = |cancel: &Cancel| {
            let fs = Arc::new(CancelWhileReading {
                inner: fx.fs.clone(),
                path: PathBuf::from("/w/big.bin"),
                cancel: cancel.clone(),
                chunks: AtomicUsize::new(0),
            });
            (facade(&s, fs.clone()), fs)
        };
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let dispatch_args = json!({"requester_agent": "alice", "target_agent": "bob", "title": "big",
                                   "workspace_root": "/w", "pointers": ["big.bin"]});

        // A dispatch cancelled while it fingerprints: nothing stored.
        let cancel = Cancel::new();
        let (c, fs) = watching(&cancel);
        let refused = call(&c, "dispatch_contract", dispatch_args.clone(), &cancel);
        assert_eq!(refused["error"]["code"], "IO_ERROR", "{kind}: {refused}");
        assert_eq!(
            fs.chunks.load(Ordering::SeqCst),
            1,
            "{kind}: stopped after the first chunk"
        );
        let listed = call(&plain, "inspect_mesh_state", json!({}), &Cancel::new());
        assert_eq!(listed["total_returned"], 0, "{kind}: {listed}");

        let sent = call(&plain, "dispatch_contract", dispatch_args, &Cancel::new());
        let id = crate::support::cid(sent["contract_id"].as_str().unwrap());

        // A plain poll cancelled while it verifies the claimed contract: the claim is undone.
        let cancel = Cancel::new();
        let (c, fs) = watching(&cancel);
        let polled = call(&c, "poll_next_task", json!({"agent_id": "bob"}), &cancel);
        assert_eq!(
            polled,
            json!({"ok": true, "has_task": false, "skipped_stale": [],
                   "message": "Stopped looking for work for agent \"bob\": the poll was cancelled"}),
            "{kind}"
        );
        assert_eq!(
            fs.chunks.load(Ordering::SeqCst),
            1,
            "{kind}: stopped after the first chunk"
        );
        let record = s.store.get(&id).unwrap().unwrap();
        assert_eq!(
            (record.status, record.claim_epoch, record.delivery_count),
            (Status::Submitted, 1, 0),
            "{kind}: the claim was undone, its epoch spent"
        );
        assert_eq!(
            record.error_reason.as_deref(),
            Some("CLAIM_REVERTED: the poll was cancelled"),
            "{kind}"
        );
        // A poll cancelled before it starts claims nothing at all.
        let cancel = Cancel::new();
        cancel.cancel();
        let polled = call(&plain, "poll_next_task", json!({"agent_id": "bob"}), &cancel);
        assert_eq!(polled["has_task"], false, "{kind}");
        assert_eq!(s.store.get(&id).unwrap().unwrap().claim_epoch, 1, "{kind}");

        // The next poll claims it (epoch 2); a fulfil cancelled while it checks the baseline writes
        // nothing, and a verify cancelled the same way changes nothing.
        let held = call(
            &plain,
            "poll_next_task",
            json!({"agent_id": "bob"}),
            &Cancel::new(),
        );
        assert_eq!(held["contract"]["claim_epoch"], 2, "{kind}: {held}");
        let before = s.store.get(&id).unwrap().unwrap();
        let cancel = Cancel::new();
        let (c, _) = watching(&cancel);
        let fulfil = call(
            &c,
            "fulfill_contract",
            json!({"contract_id": id, "claim_epoch": 2, "agent_id": "bob", "result_summary": "done"}),
            &cancel,
        );
        assert_eq!(fulfil["error"]["code"], "IO_ERROR", "{kind}: {fulfil}");
        let cancel = Cancel::new();
        let (c, _) = watching(&cancel);
        let verify = call(
            &c,
            "verify_contract",
            json!({"contract_id": id, "agent_id": "bob"}),
            &cancel,
        );
        assert_eq!(verify["error"]["code"], "IO_ERROR", "{kind}: {verify}");
        assert_eq!(
            s.store.get(&id).unwrap().unwrap(),
            before,
            "{kind}: nothing written"
        );
        // Uncancelled, the same fulfil completes.
        let done = call(
            &plain,
            "fulfill_contract",
            json!({"contract_id": id, "claim_epoch": 2, "agent_id": "bob", "result_summary": "done"}),
            &Cancel::new(),
        );
        assert_eq!(done["status"], "COMPLETED", "{kind}: {done}");
        assert!(s.store.check_integrity().unwrap().is_clean(), "{kind}");
    }
}

/// Issue 27 item 3, the last step: a poll that answered with a claim whose answer the transport then
/// drops (its client cancelled just after the answer was made) is undone through
/// `args::answer_not_delivered`: the contract is back in the queue, its epoch spent; an answer
/// without a claim, or a claim that moved on, is left alone.
#[test]
fn issue27_a_claim_whose_answer_is_dropped_is_undone() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = facade(&s, Arc::new(fx.fs.clone()));
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let sent = call(
            &c,
            "dispatch_contract",
            json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w"}),
            &Cancel::new(),
        );
        let id = crate::support::cid(sent["contract_id"].as_str().unwrap());
        let empty = call(&c, "poll_next_task", json!({"agent_id": "carol"}), &Cancel::new());
        shiftwork_contracts::args::answer_not_delivered(&c, "poll_next_task", &empty);
        let held = call(&c, "poll_next_task", json!({"agent_id": "bob"}), &Cancel::new());
        assert_eq!(held["has_task"], true, "{kind}: {held}");
        shiftwork_contracts::args::answer_not_delivered(&c, "poll_next_task", &held);
        let record = s.store.get(&id).unwrap().unwrap();
        assert_eq!(
            (record.status, record.claim_epoch),
            (Status::Submitted, 1),
            "{kind}"
        );
        assert_eq!(
            record.error_reason.as_deref(),
            Some("CLAIM_REVERTED: the poll was cancelled"),
            "{kind}"
        );
        // The next claim (epoch 2) is not undone by the stale answer of epoch 1.
        let again = call(&c, "poll_next_task", json!({"agent_id": "bob"}), &Cancel::new());
        assert_eq!(again["contract"]["claim_epoch"], 2, "{kind}: {again}");
        shiftwork_contracts::args::answer_not_delivered(&c, "poll_next_task", &held);
        assert_eq!(
            s.store.get(&id).unwrap().unwrap().status,
            Status::Claimed,
            "{kind}"
        );
    }
}

/// A plain poll under `cancel` (the tool's surface): the answer object.
fn poll_under(c: &Contracts, agent: &str, cancel: &Cancel) -> Value {
    call(c, "poll_next_task", json!({"agent_id": agent}), cancel)
}

/// A contract from alice to bob, dispatched through the tool's surface: its id.
fn dispatch_to_bob(c: &Contracts) -> shiftwork_contracts::ContractId {
    let sent = call(
        c,
        "dispatch_contract",
        json!({"requester_agent": "alice", "target_agent": "bob", "title": "t", "workspace_root": "/w"}),
        &Cancel::new(),
    );
    crate::support::cid(sent["contract_id"].as_str().unwrap())
}

/// Issue 34 item 3 (cancellation at every step): a claim is registered with the call's `Cancel` the
/// moment it is committed, so whenever the transport drops the answer — after the poll answered,
/// whatever the step the client went away at — `Cancel::undeliver` puts it back in the queue; a
/// claim of a later call under another handle is left alone.
#[test]
fn issue34_item3_a_claim_is_undone_whenever_its_answer_is_dropped() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = facade(&s, Arc::new(fx.fs.clone()));
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let id = dispatch_to_bob(&c);
        let first = Cancel::new();
        let held = poll_under(&c, "bob", &first);
        assert_eq!(held["has_task"], true, "{kind}: {held}");
        first.undeliver();
        let record = s.store.get(&id).unwrap().unwrap();
        assert_eq!(
            (record.status, record.error_reason.as_deref()),
            (Status::Submitted, Some("CLAIM_REVERTED: the poll was cancelled")),
            "{kind}"
        );
        // A handle whose answer is known dropped claims nothing more.
        let after = poll_under(&c, "bob", &first);
        assert_eq!(after["has_task"], false, "{kind}: {after}");
        let second = Cancel::new();
        let again = poll_under(&c, "bob", &second);
        assert_eq!(again["contract"]["claim_epoch"], 2, "{kind}: {again}");
        first.undeliver();
        assert_eq!(
            s.store.get(&id).unwrap().unwrap().status,
            Status::Claimed,
            "{kind}"
        );
        assert!(s.store.check_integrity().unwrap().is_clean(), "{kind}");
    }
}

/// Issue 34 item 7 (credentials during a wait): a condition the caller gives with `Cancel::require`
/// (its token still valid) is judged before a claim and before the answer. A waiting poll whose
/// condition fails while it is parked claims nothing of the work dispatched after; one whose
/// condition fails between its claim and its answer undoes the claim.
#[test]
fn issue34_item7_a_poll_whose_credentials_lapse_claims_nothing() {
    use shiftwork_contracts::{AgentId, PollStep};
    use std::sync::atomic::AtomicBool;
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = facade(&s, Arc::new(fx.fs.clone()));
        fx.clock.set(chrono::DateTime::from_timestamp_millis(T0).unwrap());
        let bob = AgentId::new("bob").unwrap();
        // Revoked while parked.
        let valid = Arc::new(AtomicBool::new(true));
        let cancel = Cancel::new();
        let still = Arc::clone(&valid);
        cancel.require(move || still.load(Ordering::SeqCst));
        let mut task = c.poll_task(&bob, Duration::from_secs(60), &cancel);
        assert!(matches!(task.step(&c), PollStep::Wait { .. }), "{kind}");
        valid.store(false, Ordering::SeqCst);
        let id = dispatch_to_bob(&c);
        task.woken();
        let PollStep::Done(Ok(outcome)) = task.step(&c) else {
            panic!("{kind}: the poll answers")
        };
        assert!(outcome.held().is_none(), "{kind}: {outcome:?}");
        let record = s.store.get(&id).unwrap().unwrap();
        assert_eq!(
            (record.status, record.claim_epoch),
            (Status::Submitted, 0),
            "{kind}"
        );
        // Lapsed between the claim and the answer: the first look passes, the last does not.
        let looks = Arc::new(AtomicUsize::new(0));
        let cancel = Cancel::new();
        let counted = Arc::clone(&looks);
        cancel.require(move || counted.fetch_add(1, Ordering::SeqCst) == 0);
        let answer = poll_under(&c, "bob", &cancel);
        assert_eq!(answer["has_task"], false, "{kind}: {answer}");
        let record = s.store.get(&id).unwrap().unwrap();
        assert_eq!(
            (record.status, record.claim_epoch, record.error_reason.as_deref()),
            (
                Status::Submitted,
                1,
                Some("CLAIM_REVERTED: the poll was cancelled")
            ),
            "{kind}"
        );
        assert!(s.store.check_integrity().unwrap().is_clean(), "{kind}");
    }
}
