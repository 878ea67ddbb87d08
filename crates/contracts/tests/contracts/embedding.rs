//! The crate as the author of an agent runtime uses it (issue 28): typed ids, instants and windows, a
//! checked configuration, typed results and typed refusals, store failures with their cause, and an
//! authenticated caller that acts only as itself (issue 29 item 3); and what a host sees inside
//! (issue 30): the observer's events, the queue gauges' query and the spans of the store
//! transactions — each on every store.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use shiftwork_contracts::wait::Cancel;
use shiftwork_contracts::{
    AgentId, ConfigError, ContractEvent, ContractId, ContractIdError, Contracts, ContractsConfig,
    DefaultAgent, DispatchRequest, FulfillRequest, HolderRef, InspectRequest, RefusalCode, RefusalDetails,
    SqliteOptions, SqliteStore, Status, Store, StoreError,
};
use shiftwork_seams::{ManualClock, OsFs};

use crate::scenarios::{self, T0};
use crate::support::{agent, instant, store, store_kinds};

fn at(clock: &ManualClock, offset: i64) {
    clock.set(instant(T0 + offset));
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Review {
    verdict: String,
}

fn review(verdict: &str) -> Review {
    Review {
        verdict: verdict.to_owned(),
    }
}

/// Issue 28 item 4: `AgentId::new` is the family's one grammar (`shiftwork_seams::agent`), and a
/// text it refuses comes with the reason (`bob.smith` is an agent everywhere now).
#[test]
fn issue28_agent_ids_follow_the_family_grammar_with_a_reason() {
    let long = "a".repeat(65);
    for text in [
        "alice",
        "bob.smith",
        "svc:deploy@eu",
        "ci-runner-7",
        "",
        "-x",
        "bad name",
        "a/b",
        "é",
        &"a".repeat(64),
        &long,
    ] {
        let ours = AgentId::new(text).map(|a| a.as_str().to_owned());
        let family = shiftwork_seams::agent::check_agent_id(text).map(|()| text.to_owned());
        assert_eq!(ours, family, "{text:?}");
    }
    let refused = AgentId::new("bad name").unwrap_err();
    assert_eq!(
        refused.to_string(),
        "an agent id may hold only A-Z a-z 0-9 . _ @ : -, and ' ' at byte 3 is none of them"
    );
}

/// Issue 28 item 4: a contract id is parsed once, lowercased, with the reason it is refused.
#[test]
fn issue28_contract_ids_are_parsed_once() {
    fn check(text: &str, expected: Result<&str, ContractIdError>) {
        assert_eq!(
            ContractId::parse(text).as_ref().map(ContractId::as_str),
            expected.as_ref().map(|s| *s),
            "{text:?}"
        );
    }
    check(
        "0196F3A0-0000-7000-8000-00000000000A",
        Ok("0196f3a0-0000-7000-8000-00000000000a"),
    );
    check("x", Ok("x"));
    check("", Err(ContractIdError::Empty));
    check(&"é".repeat(64), Ok(&"é".repeat(64)));
    check(&"a".repeat(65), Err(ContractIdError::TooLong { chars: 65 }));
}

/// Issue 28 item 4: the configuration is checked when it is built, with the bounds `new()` had (a
/// one-second lease used to pass through the public fields).
#[test]
fn issue28_a_configuration_out_of_bounds_is_refused_when_built() {
    fn check(exec: Duration, queue: Duration, expected: Result<(), ConfigError>) {
        let built = ContractsConfig::builder()
            .default_exec_ttl(exec)
            .default_queue_ttl(queue)
            .build();
        assert_eq!(built.map(|_| ()), expected, "{exec:?} {queue:?}");
    }
    let s = Duration::from_secs;
    check(s(1800), s(14_400), Ok(()));
    check(s(60), s(60), Ok(()));
    check(s(86_400), s(604_800), Ok(()));
    check(s(1), s(14_400), Err(ConfigError::DefaultExecTtl { given: s(1) }));
    check(
        s(59),
        s(14_400),
        Err(ConfigError::DefaultExecTtl { given: s(59) }),
    );
    check(
        s(86_401),
        s(14_400),
        Err(ConfigError::DefaultExecTtl { given: s(86_401) }),
    );
    let half = Duration::from_millis(60_500);
    check(half, s(14_400), Err(ConfigError::DefaultExecTtl { given: half }));
    check(
        s(1800),
        s(604_801),
        Err(ConfigError::DefaultQueueTtl { given: s(604_801) }),
    );
    let config = ContractsConfig::builder()
        .default_exec_ttl(s(600))
        .require_claim_epoch(true)
        .build()
        .unwrap();
    assert_eq!(
        (
            config.default_exec_ttl(),
            config.default_queue_ttl(),
            config.require_claim_epoch()
        ),
        (s(600), s(14_400), true)
    );
}

/// Issue 28 items 3 and 4, the runtime author's program: the requester is part of the request, the
/// windows and instants are `Duration` and `DateTime`, the claim gives the holder to act with, a
/// result is delivered from a Rust type and read back into one, status filters are `Status` values,
/// and refusals are matched by their typed details — on every store.
#[test]
fn issue28_a_runtime_hands_work_over_with_typed_values_on_every_store() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = crate::support::facade(&s.store, &fx.fs, false);
        let schema = json!({"type": "object", "required": ["verdict"],
                            "properties": {"verdict": {"enum": ["approve", "reject"]}}});
        let sent = c
            .dispatch(
                &DispatchRequest::new(agent("alice"), agent("bob"), "Review", scenarios::W)
                    .pointers(["src/lib.rs"])
                    .exec_ttl(Duration::from_secs(600))
                    .contract_schema(schema.as_object().cloned().unwrap()),
            )
            .unwrap();
        assert_eq!(
            (sent.created_at, sent.exec_ttl),
            (instant(T0), Duration::from_secs(600)),
            "{kind}"
        );
        assert_eq!(sent.requester_agent, agent("alice"), "{kind}");
        at(&fx.clock, 1000);
        let polled = c.poll_next_task(&agent("bob")).unwrap();
        let held = polled.held().unwrap();
        assert_eq!(
            held.expires_at,
            held.claimed_at + Duration::from_secs(600),
            "{kind}"
        );
        let holder = held.holder();
        assert_eq!(
            holder,
            HolderRef::new(sent.contract_id.clone(), agent("bob"), 1),
            "{kind}"
        );
        // A stale epoch: the refusal carries the current one.
        let stale = HolderRef {
            claim_epoch: Some(2),
            ..holder.clone()
        };
        let refused = c.extend_ttl(&stale).unwrap_err();
        assert!(
            matches!(
                refused.details(),
                RefusalDetails::StaleEpoch {
                    claim_epoch: 1,
                    status: Status::Claimed,
                    ..
                }
            ),
            "{kind}: {refused:?}"
        );
        // A result that fails the schema: the attempts left are a number, not a sentence.
        let refused = c
            .fulfill_contract(
                &holder,
                &FulfillRequest::new("Hmm.").output(&review("maybe")).unwrap(),
            )
            .unwrap_err();
        assert!(
            matches!(
                refused.details(),
                RefusalDetails::OutputSchemaInvalid {
                    retry_count: 1,
                    schema_attempts_left: 2,
                    ..
                }
            ),
            "{kind}: {refused:?}"
        );
        c.fulfill_contract(
            &holder,
            &FulfillRequest::new("Looks right.")
                .output(&review("approve"))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            c.detail(&sent.contract_id).unwrap().output::<Review>().unwrap(),
            Some(review("approve")),
            "{kind}"
        );
        let done = c
            .inspect(&InspectRequest {
                status: Some(vec![Status::Completed]),
                ..InspectRequest::default()
            })
            .unwrap();
        assert_eq!(done.contracts.len(), 1, "{kind}");
        assert_eq!(done.contracts[0].contract_id(), &sent.contract_id, "{kind}");
        assert_eq!(
            done.contracts[0].output::<Review>().unwrap(),
            None,
            "a list item carries no result"
        );
        assert_eq!((done.counts.completed, done.counts.submitted), (1, 0), "{kind}");
        // A status filter repeats no status.
        let twice = c.inspect(&InspectRequest {
            status: Some(vec![Status::Completed, Status::Completed]),
            ..InspectRequest::default()
        });
        assert_eq!(twice.unwrap_err().code(), RefusalCode::InvalidArgument, "{kind}");
    }
    // A structured result is a JSON object.
    let refused = FulfillRequest::new("x").output(&42).unwrap_err();
    assert!(
        matches!(refused.details(), RefusalDetails::InvalidArgument { argument } if argument == "structured_output")
    );
    // A lease of a fraction of a second is refused as the tool argument is.
    let fx = scenarios::fixture();
    let s = store("memory", &fx.clock);
    let c = crate::support::facade(&s.store, &fx.fs, false);
    let refused = c
        .dispatch(
            &DispatchRequest::new(agent("alice"), agent("bob"), "x", "/w")
                .exec_ttl(Duration::from_millis(60_500)),
        )
        .unwrap_err();
    assert_eq!(
        refused.message(),
        "exec_ttl_sec must be an integer from 60 to 86400."
    );
}

/// Issue 28 item 4: a store failure keeps the driver's error as its source (it used to keep only a
/// sentence).
#[test]
fn issue28_a_busy_sqlite_store_keeps_the_driver_error_as_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("contracts.db");
    let fx = scenarios::fixture();
    let options = SqliteOptions {
        busy_timeout_ms: 1,
        ..SqliteOptions::default()
    };
    let s = SqliteStore::open(&path, options, Arc::new(fx.clock.clone()), &OsFs).unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let failed = s.sweep(T0, 10).unwrap_err();
    assert!(matches!(failed, StoreError::Busy { .. }), "{failed:?}");
    let source = std::error::Error::source(&failed).expect("the driver's error");
    assert!(source.to_string().contains("locked"), "{source}");
    other.execute_batch("ROLLBACK").unwrap();
    assert_eq!(s.sweep(T0, 10).unwrap().queued_timed_out, 0);
}

/// Issue 29 item 3, in the library: with an authenticated caller, every identity argument defaults to
/// it and one naming another agent is refused `IDENTITY_MISMATCH`, naming both, before any store is
/// asked.
#[test]
fn issue29_an_authenticated_caller_acts_only_as_itself() {
    let fx = scenarios::fixture();
    let s = store("memory", &fx.clock);
    let c = crate::support::facade(&s.store, &fx.fs, false);
    let alice = DefaultAgent::Authenticated(agent("alice"));
    let call = |tool: &str, args: serde_json::Value, who: &DefaultAgent| {
        shiftwork_contracts::args::call(&c, tool, args.as_object().unwrap(), who)
    };
    let dispatch = json!({"target_agent": "bob", "title": "Review", "workspace_root": "/w"});
    let mut as_bob = dispatch.clone();
    as_bob["requester_agent"] = json!("bob");
    let refused = call("dispatch_contract", as_bob, &alice);
    assert_eq!(
        refused["error"],
        json!({"code": "IDENTITY_MISMATCH",
               "message": "requester_agent names bob, but this caller authenticated as alice: an agent acts only as itself.",
               "details": {"argument": "requester_agent", "given": "bob", "authenticated": "alice"}})
    );
    assert_eq!(
        c.inspect(&InspectRequest::default()).unwrap().counts.submitted,
        0,
        "nothing stored"
    );
    let sent = call("dispatch_contract", dispatch, &alice);
    assert_eq!(sent["requester_agent"], "alice", "{sent}");
    let stolen = call("poll_next_task", json!({"agent_id": "bob"}), &alice);
    assert_eq!(stolen["error"]["code"], "IDENTITY_MISMATCH", "{stolen}");
    assert_eq!(
        c.inspect(&InspectRequest::default()).unwrap().counts.submitted,
        1,
        "still waiting"
    );
    let bob = DefaultAgent::Authenticated(agent("bob"));
    let claimed = call("poll_next_task", json!({"agent_id": "bob"}), &bob);
    assert_eq!(claimed["has_task"], true, "{claimed}");
}

/// Events as the observer heard them.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<ContractEvent>>>);

impl Heard {
    fn take(&self) -> Vec<ContractEvent> {
        std::mem::take(&mut self.0.lock().unwrap())
    }
}

/// Issue 30 item 3: the observer hears each claim, fulfil (with the claim-to-fulfil time on the store's
/// clock), failure, redelivery, lease expiry (found by a sweep), stale-epoch refusal and waiting poll —
/// on every store.
#[test]
fn issue30_the_observer_hears_the_queue_on_every_store() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let heard = Heard::default();
        let log = heard.clone();
        let c = Arc::new(
            Contracts::builder(s.store.clone())
                .fs(Arc::new(fx.fs.clone()))
                .config(crate::support::config(false))
                .observer(Arc::new(move |e: &ContractEvent| {
                    log.0.lock().unwrap().push(e.clone())
                }))
                .real_ids()
                .build(),
        );
        let bob = agent("bob");
        let send = |title: &str, deliveries: u32| {
            c.dispatch(
                &DispatchRequest::new(agent("alice"), bob.clone(), title, "/w")
                    .exec_ttl(Duration::from_secs(60))
                    .max_deliveries(deliveries),
            )
            .unwrap()
            .contract_id
        };
        let claim = || c.poll_next_task(&bob).unwrap().held().unwrap().clone();
        // A claim and a fulfil 30 s later.
        at(&fx.clock, 0);
        let a = send("a", 1);
        let held = claim();
        at(&fx.clock, 30_000);
        c.fulfill_contract(&held.holder(), &FulfillRequest::new("done"))
            .unwrap();
        assert_eq!(
            heard.take(),
            [
                ContractEvent::Claimed {
                    contract_id: a.clone(),
                    agent: bob.clone(),
                    claim_epoch: 1,
                    delivery_count: 1
                },
                ContractEvent::Fulfilled {
                    contract_id: a,
                    agent: bob.clone(),
                    claim_to_fulfil: Duration::from_secs(30)
                },
            ],
            "{kind}"
        );
        // A retryable failure goes back to the queue; the next claim fences the first holder out.
        let b = send("b", 2);
        let first = claim();
        at(&fx.clock, 40_000);
        c.fail(&first.holder(), "flaky", true).unwrap();
        at(&fx.clock, 70_000);
        let second = claim();
        assert!(c.extend_ttl(&first.holder()).is_err());
        let events = heard.take();
        assert_eq!(
            events.iter().map(ContractEvent::name).collect::<Vec<_>>(),
            ["claim", "failure", "redelivery", "claim", "stale_epoch"],
            "{kind}"
        );
        assert_eq!(
            events[2],
            ContractEvent::Redelivered {
                contract_id: b.clone(),
                target_agent: bob.clone(),
                available_at: Some(instant(T0 + 70_000))
            },
            "{kind}: claimable again after a 30 s backoff"
        );
        assert_eq!(
            events[4],
            ContractEvent::StaleEpochRefused {
                contract_id: b.clone(),
                agent: bob.clone(),
                given: 1,
                current: 2
            },
            "{kind}"
        );
        // Leases that run out, found by a sweep: the last delivery ends; one with deliveries left is
        // redelivered.
        let d = send("d", 2);
        let _third = claim();
        assert_eq!(c.poll_next_task(&bob).unwrap().held(), None);
        heard.take();
        at(&fx.clock, 70_000 + 61_000);
        c.sweep(instant(T0 + 131_000)).unwrap();
        let mut events = heard.take();
        events.sort_by_key(|e| format!("{e:?}"));
        assert_eq!(
            events,
            [
                ContractEvent::LeaseExpired {
                    contract_id: b,
                    target_agent: bob.clone()
                },
                ContractEvent::LeaseExpired {
                    contract_id: d.clone(),
                    target_agent: bob.clone()
                },
                ContractEvent::Redelivered {
                    contract_id: d,
                    target_agent: bob.clone(),
                    available_at: Some(instant(T0 + 161_000))
                },
            ],
            "{kind}: {second:?}"
        );
        // A poll that finds nothing and waits says so once.
        let waiter = {
            let c = c.clone();
            std::thread::spawn(move || {
                c.poll_next_task_wait(&agent("carol"), Duration::from_secs(1), &Cancel::new())
                    .unwrap()
            })
        };
        while !waiter.is_finished() {
            std::thread::sleep(Duration::from_millis(20));
            fx.clock.advance(Duration::from_millis(200));
        }
        assert!(waiter.join().unwrap().held().is_none());
        assert_eq!(
            heard.take(),
            [ContractEvent::WaitingPollStarted {
                agent: agent("carol"),
                wait: Duration::from_secs(1)
            }],
            "{kind}"
        );
    }
}

/// Issue 30 item 3: the query behind the queue gauges counts the contracts per status and the waiting
/// ones per target agent, in one read — on every store.
#[test]
fn issue30_queue_depth_counts_each_status_and_the_waiting_work_of_each_agent() {
    for kind in store_kinds() {
        let fx = scenarios::fixture();
        let s = store(kind, &fx.clock);
        let c = crate::support::facade(&s.store, &fx.fs, false);
        let send = |to: &str| {
            c.dispatch(&DispatchRequest::new(agent("alice"), agent(to), "x", "/w"))
                .unwrap()
                .contract_id
        };
        assert_eq!(c.queue_depth().unwrap(), Default::default(), "{kind}: empty");
        for to in ["bob", "bob", "bob", "carol", "dave"] {
            send(to);
        }
        let held = c.poll_next_task(&agent("bob")).unwrap().held().unwrap().clone();
        c.fulfill_contract(&held.holder(), &FulfillRequest::new("done"))
            .unwrap();
        c.poll_next_task(&agent("bob")).unwrap();
        let dave = c
            .inspect(&InspectRequest {
                target_agent: Some(agent("dave")),
                ..InspectRequest::default()
            })
            .unwrap();
        c.cancel(dave.contracts[0].contract_id(), &agent("alice"), "not needed")
            .unwrap();
        let depth = c.queue_depth().unwrap();
        let by = |status| depth.by_status.of(status);
        assert_eq!(
            Status::ALL.map(by),
            [2, 1, 1, 0, 0, 0, 1],
            "{kind}: SUBMITTED, CLAIMED, COMPLETED, FAILED, TIMED_OUT, POINTER_STALE, CANCELLED"
        );
        assert_eq!(
            depth.submitted_by_target,
            vec![(agent("bob"), 1), (agent("carol"), 1)],
            "{kind}"
        );
    }
}

/// A subscriber that keeps the name and `operation` of every span, and counts the events (log lines).
#[derive(Default)]
struct Spans {
    seen: Mutex<Vec<(String, String)>>,
    events: AtomicUsize,
    next: AtomicU64,
}

struct Operation(String);

impl tracing::field::Visit for Operation {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "operation" {
            self.0 = value.to_owned();
        }
    }
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "operation" {
            self.0 = format!("{value:?}");
        }
    }
}

impl tracing::Subscriber for Spans {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        let mut op = Operation(String::new());
        span.record(&mut op);
        self.seen
            .lock()
            .unwrap()
            .push((span.metadata().name().to_owned(), op.0));
        tracing::span::Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {
        self.events.fetch_add(1, Ordering::SeqCst);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Issue 30 item 2: every store transaction of a call runs in a span `contracts.store` that names the
/// operation, so a slow call says where its time went; the crate itself logs nothing.
#[test]
fn issue30_each_store_transaction_runs_in_a_contracts_store_span() {
    let fx = scenarios::fixture();
    let s = store("sqlite", &fx.clock);
    let c = crate::support::facade(&s.store, &fx.fs, false);
    let spans = Arc::new(Spans::default());
    let dispatch = tracing::Dispatch::from(Arc::clone(&spans));
    tracing::dispatcher::with_default(&dispatch, || {
        let sent = c
            .dispatch(&DispatchRequest::new(agent("alice"), agent("bob"), "x", "/w").idempotency_key("k1"))
            .unwrap();
        let held = c.poll_next_task(&agent("bob")).unwrap().held().unwrap().clone();
        c.extend_ttl(&held.holder()).unwrap();
        c.fulfill_contract(&held.holder(), &FulfillRequest::new("done"))
            .unwrap();
        c.detail(&sent.contract_id).unwrap();
    });
    let seen = spans.seen.lock().unwrap().clone();
    assert!(seen.iter().all(|(name, _)| name == "contracts.store"), "{seen:?}");
    let operations: Vec<&str> = seen.iter().map(|(_, op)| op.as_str()).collect();
    assert_eq!(
        operations,
        [
            "get_by_key",
            "insert",
            "claim_next",
            "update",
            "get",
            "update",
            "list"
        ],
        "dispatch (replay look-up, insert), poll, extend, fulfil (read, transaction), detail"
    );
    assert_eq!(spans.events.load(Ordering::SeqCst), 0, "no log lines");
}
