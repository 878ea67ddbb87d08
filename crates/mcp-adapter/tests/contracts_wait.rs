//! The waiting poll through the contracts group's handler (CT-181): `notifications/cancelled` reaches
//! the handler as its `CallContext`'s cancellation and ends the wait at once with nothing claimed;
//! with a `progressToken` the wait reports progress (every 10 s by default); the answer validates
//! against the tool's output schema; `cancel_contract` answers through the registry.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use shiftwork_contracts::roots::AllowedRoots;
use shiftwork_contracts::{Contracts, ContractsConfig, MemoryStore, SeededIdSource, Status};
use shiftwork_mcp::Outcome;
use shiftwork_mcp::groups::contracts::{self as group, Lazy, PROGRESS_EVERY};
use shiftwork_mcp::registry::{Answered, Arguments, CallContext, ToolDef};
use shiftwork_seams::{MemFs, SystemClock};

fn world(progress_every: Duration) -> (Vec<ToolDef>, Arc<Contracts>) {
    let clock = Arc::new(SystemClock::new());
    let fs = MemFs::new();
    fs.make_dirs("/w");
    let contracts = Arc::new(
        Contracts::builder(Arc::new(MemoryStore::new(clock)))
            .fs(Arc::new(fs))
            .ids(Arc::new(SeededIdSource::new(1)))
            .config(
                ContractsConfig::builder()
                    .allowed_roots(AllowedRoots::new(["/w"]))
                    .build()
                    .unwrap(),
            )
            .build(),
    );
    let lazy = Lazy::ready(contracts.clone(), Some(String::from("bob"))).with_progress_every(progress_every);
    (group::tools(Arc::new(lazy)), contracts)
}

fn tool<'a>(tools: &'a [ToolDef], name: &str) -> &'a ToolDef {
    tools.iter().find(|t| t.name == name).unwrap()
}

fn answer(answered: Answered) -> Value {
    match answered.outcome {
        Outcome::Answer(v, _) => v,
        other => panic!("{other:?}"),
    }
}

fn valid(def: &ToolDef, value: &Value) {
    let validator = jsonschema::validator_for(&def.output_schema).unwrap();
    assert!(validator.is_valid(value), "{}: {value}", def.name);
}

/// CT-181: the client's cancellation (the call's context) ends a waiting poll at once; nothing is
/// claimed, and a contract dispatched afterwards is still waiting for its holder.
#[test]
fn ct181_a_cancelled_waiting_poll_ends_at_once_and_claims_nothing() {
    let (tools, contracts) = world(PROGRESS_EVERY);
    let context = CallContext::new(None);
    let poll = tool(&tools, "poll_next_task").clone();
    let call = {
        let context = context.clone();
        std::thread::spawn(move || {
            let started = Instant::now();
            let args =
                Arguments::decoded(json!({"wait_sec": 60}).as_object().unwrap().clone()).in_context(context);
            (poll.invoke(&args), started.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    context.cancel();
    let (outcome, took) = call.join().unwrap();
    let v = answer(outcome);
    assert_eq!(v["has_task"], false, "{v}");
    assert!(
        took < Duration::from_secs(2),
        "ended at once, not after 60 s: {took:?}"
    );
    valid(tool(&tools, "poll_next_task"), &v);
    let sent = answer(
        tool(&tools, "dispatch_contract").call(
            json!({"target_agent": "bob", "requester_agent": "alice", "title": "t", "workspace_root": "/w"})
                .as_object()
                .unwrap(),
        ),
    );
    let id = sent["contract_id"].as_str().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        contracts
            .store()
            .get(&shiftwork_contracts::ContractId::parse(id).unwrap())
            .unwrap()
            .unwrap()
            .status,
        Status::Submitted,
        "the cancelled wait claimed nothing"
    );
}

/// One progress report: progress, total, message.
type Report = (f64, Option<f64>, Option<String>);

/// CT-181: with a `progressToken` a waiting poll reports its progress (seconds waited of `wait_sec`)
/// at the interval (10 s by default), and stops when the call ends; without one it reports nothing.
#[test]
fn ct181_a_waiting_poll_reports_progress_when_asked() {
    assert_eq!(PROGRESS_EVERY, Duration::from_secs(10));
    let (tools, _) = world(Duration::from_millis(200));
    let reports: Arc<Mutex<Vec<Report>>> = Arc::default();
    let seen = reports.clone();
    let context = CallContext::new(Some(Box::new(move |p, total, message| {
        seen.lock().unwrap().push((p, total, message.map(str::to_owned)));
    })));
    let args = Arguments::decoded(json!({"wait_sec": 1}).as_object().unwrap().clone()).in_context(context);
    let v = answer(tool(&tools, "poll_next_task").invoke(&args));
    assert_eq!(v["has_task"], false);
    assert!(v["waited_ms"].as_u64().unwrap() >= 1000, "{v}");
    let after = reports.lock().unwrap().len();
    let got = reports.lock().unwrap().clone();
    assert!(
        (3..=6).contains(&got.len()),
        "about one report per 200 ms of 1 s: {got:?}"
    );
    assert!(got.iter().all(|(_, total, m)| *total == Some(1.0) && m.is_some()));
    assert!(
        got.windows(2).all(|w| w[0].0 <= w[1].0),
        "progress never goes back"
    );
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(
        reports.lock().unwrap().len(),
        after,
        "no report after the call ended"
    );
    // Without a progressToken, nothing is reported (and nothing breaks).
    let quiet = CallContext::new(None);
    let args = Arguments::decoded(json!({"wait_sec": 1}).as_object().unwrap().clone()).in_context(quiet);
    assert_eq!(
        answer(tool(&tools, "poll_next_task").invoke(&args))["has_task"],
        false
    );
}

/// CT-179, CT-183 through the registry: a waiting poll woken by a dispatch answers `waited_ms`, and
/// `cancel_contract` answers its shape; both validate against their output schemas.
#[test]
fn ct179_ct183_waiting_and_cancelling_through_the_handlers() {
    let (tools, _) = world(PROGRESS_EVERY);
    let poll = tool(&tools, "poll_next_task").clone();
    let waiter = std::thread::spawn(move || {
        poll.invoke(&Arguments::decoded(
            json!({"wait_sec": 10}).as_object().unwrap().clone(),
        ))
    });
    std::thread::sleep(Duration::from_millis(200));
    let dispatch = tool(&tools, "dispatch_contract");
    let args = json!({"target_agent": "bob", "requester_agent": "alice", "title": "t", "workspace_root": "/w", "max_deliveries": 2});
    let sent = answer(dispatch.call(args.as_object().unwrap()));
    let held = answer(waiter.join().unwrap());
    assert_eq!(held["contract"]["contract_id"], sent["contract_id"], "{held}");
    assert!(held["waited_ms"].as_u64().unwrap() >= 100, "{held}");
    assert_eq!(held["contract"]["max_deliveries"], 2);
    valid(tool(&tools, "poll_next_task"), &held);
    let cancel = tool(&tools, "cancel_contract");
    let args = json!({"contract_id": sent["contract_id"], "agent_id": "alice", "reason": "no longer needed"});
    let cancelled = answer(cancel.call(args.as_object().unwrap()));
    assert_eq!(cancelled["status"], "CANCELLED", "{cancelled}");
    assert_eq!(cancelled["holder"], "bob");
    valid(cancel, &cancelled);
    let refused = answer(
        cancel.call(
            json!({"contract_id": sent["contract_id"], "reason": "mine"})
                .as_object()
                .unwrap(),
        ),
    );
    assert_eq!(refused["error"]["code"], "NOT_REQUESTER", "{refused}");
    valid(cancel, &refused);
    let fail = tool(&tools, "fail_contract");
    let late = answer(
        fail.call(
            json!({"contract_id": sent["contract_id"], "claim_epoch": 1, "reason": "x", "retryable": true})
                .as_object()
                .unwrap(),
        ),
    );
    assert_eq!(late["error"]["code"], "CANCELLED", "{late}");
    valid(fail, &late);
}

/// A file system that runs `then` once a read of `path` has handed out its first chunk.
struct OnFirstChunk {
    inner: MemFs,
    path: std::path::PathBuf,
    then: Box<dyn Fn() + Send + Sync>,
}

impl shiftwork_seams::Fs for OnFirstChunk {
    fn read(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn read_chunks(
        &self,
        path: &std::path::Path,
        chunk_size: usize,
        sink: &mut dyn FnMut(&[u8]) -> std::io::Result<()>,
    ) -> std::io::Result<u64> {
        let watched = path == self.path;
        self.inner.read_chunks(path, chunk_size, &mut |chunk| {
            let out = sink(chunk);
            if watched {
                (self.then)();
            }
            out
        })
    }
    fn metadata(&self, path: &std::path::Path) -> std::io::Result<shiftwork_seams::Metadata> {
        self.inner.metadata(path)
    }
    fn symlink_metadata(&self, path: &std::path::Path) -> std::io::Result<shiftwork_seams::Metadata> {
        self.inner.symlink_metadata(path)
    }
    fn list_dir(&self, path: &std::path::Path) -> std::io::Result<Vec<shiftwork_seams::DirEntry>> {
        self.inner.list_dir(path)
    }
    fn canonicalize(&self, path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
        self.inner.canonicalize(path)
    }
    fn read_link(&self, path: &std::path::Path) -> std::io::Result<std::path::PathBuf> {
        self.inner.read_link(path)
    }
    fn create_new(
        &self,
        path: &std::path::Path,
        mode: u32,
    ) -> std::io::Result<Box<dyn shiftwork_seams::FileWriter>> {
        self.inner.create_new(path, mode)
    }
    fn open_append(
        &self,
        path: &std::path::Path,
        create: bool,
    ) -> std::io::Result<Box<dyn shiftwork_seams::FileWriter>> {
        self.inner.open_append(path, create)
    }
    fn rename(&self, from: &std::path::Path, to: &std::path::Path) -> std::io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.remove_file(path)
    }
    fn sync_dir(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.sync_dir(path)
    }
    fn lock(
        &self,
        path: &std::path::Path,
        timeout: Duration,
    ) -> std::io::Result<Box<dyn shiftwork_seams::LockGuard>> {
        self.inner.lock(path, timeout)
    }
}

/// Issue 27 item 3 through the handler: a plain `poll_next_task` (no `wait_sec`) whose client cancels
/// it while the pointer of the claimed contract is being hashed stops there and undoes its claim, so
/// no claim is held by nobody until its lease runs out. The handler hands the call's cancellation to
/// every contracts call, not only to waiting polls.
#[test]
fn issue27_a_cancelled_plain_poll_through_the_handler_undoes_its_claim() {
    let clock = Arc::new(SystemClock::new());
    let fs = MemFs::new();
    fs.write_file("/w/big.bin", &vec![b'x'; 8 * 1024 * 1024]);
    let context = CallContext::new(None);
    let cancelling = context.clone();
    let store: Arc<dyn shiftwork_contracts::Store> = Arc::new(MemoryStore::new(clock.clone()));
    let config = ContractsConfig::builder()
        .allowed_roots(AllowedRoots::new(["/w"]))
        .build()
        .unwrap();
    let make = |fs: Arc<dyn shiftwork_seams::Fs>| {
        Arc::new(
            Contracts::builder(store.clone())
                .fs(fs)
                .ids(Arc::new(SeededIdSource::new(1)))
                .config(config.clone())
                .build(),
        )
    };
    let plain = make(Arc::new(fs.clone()));
    let sent = plain
        .dispatch(
            &shiftwork_contracts::DispatchRequest::new(
                shiftwork_contracts::AgentId::new("alice").unwrap(),
                shiftwork_contracts::AgentId::new("bob").unwrap(),
                "big",
                "/w",
            )
            .pointers(["big.bin"]),
        )
        .unwrap();
    let watched = make(Arc::new(OnFirstChunk {
        inner: fs,
        path: std::path::PathBuf::from("/w/big.bin"),
        then: Box::new(move || cancelling.cancel()),
    }));
    let tools = group::tools(Arc::new(Lazy::ready(watched, Some(String::from("bob")))));
    let args = Arguments::decoded(serde_json::Map::new()).in_context(context);
    let v = answer(tool(&tools, "poll_next_task").invoke(&args));
    assert_eq!(v["has_task"], false, "{v}");
    valid(tool(&tools, "poll_next_task"), &v);
    let record = store.get(&sent.contract_id).unwrap().unwrap();
    assert_eq!(
        (record.status, record.claim_epoch),
        (Status::Submitted, 1),
        "the claim was undone, not left CLAIMED until its lease runs out"
    );
}
