//! CT-164, CT-131: the model-based test (CT-16: every store calls the pure core, so one test covers
//! them all; CT-141, CT-142, CT-143: the SQL claim, sweep and update compute exactly what
//! `transition::claim`, `expire` and `apply` compute; CT-159: at most one result per contract). Random command sequences run against a reference (the pure
//! transition functions over a `BTreeMap`, written here independently of `MemoryStore`) and against
//! every store; after every step the replies (as JSON) and the full records must be equal, and CT-27,
//! CT-157 and CT-161 must hold.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use serde_json::{Value, json};
use shiftwork_contracts::integrity::{self, IntegrityReport};
use shiftwork_contracts::model::EpochMs;
use shiftwork_contracts::store::{Build, Counts, InsertOutcome, ListPage, ListQuery, SweepReport, Update};
use shiftwork_contracts::transition::{self, Reply};
use shiftwork_contracts::{AgentId, Contract, ContractId, Status, Store, StoreError};
use shiftwork_seams::{Clock, Fs, ManualClock, MemFs};

use crate::support::{Library, TestStore, store, store_kinds};

/// The reference of CT-131: records in a `BTreeMap` keyed by `seq`, every judgement a call of the pure
/// functions.
struct Reference {
    clock: ManualClock,
    map: Mutex<(BTreeMap<i64, Contract>, i64)>,
}

impl Reference {
    fn now(&self) -> EpochMs {
        self.clock.now().timestamp_millis()
    }

    /// E1, then E3 (a lost lease with deliveries left, CT-187), then E2, each for at most `max` records,
    /// oldest deadline first.
    fn sweep_map(map: &mut BTreeMap<i64, Contract>, now: EpochMs, max: usize) -> SweepReport {
        let mut report = SweepReport::default();
        for kind in ["queued", "redelivered", "claimed"] {
            let mut due: Vec<(EpochMs, i64)> = map
                .values()
                .filter(|c| c.is_logically_expired(now))
                .filter(|c| {
                    let next = transition::expire(c, now).unwrap();
                    match kind {
                        "queued" => c.status == Status::Submitted,
                        "redelivered" => c.status == Status::Claimed && next.status == Status::Submitted,
                        _ => c.status == Status::Claimed && next.status == Status::TimedOut,
                    }
                })
                .map(|c| {
                    (
                        if c.status == Status::Submitted {
                            c.queue_expires_at
                        } else {
                            c.expires_at.unwrap()
                        },
                        c.seq,
                    )
                })
                .collect();
            due.sort();
            for (_, seq) in due.into_iter().take(max) {
                let next = transition::expire(&map[&seq], now).unwrap();
                map.insert(seq, next);
                match kind {
                    "queued" => report.queued_timed_out += 1,
                    "redelivered" => report.redelivered += 1,
                    _ => report.claimed_timed_out += 1,
                }
            }
        }
        report
    }
}

impl Store for Reference {
    fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(self.clock.clone())
    }

    fn insert(&self, build: Build<'_>) -> Result<InsertOutcome, StoreError> {
        let mut g = self.map.lock().unwrap();
        let now = self.now();
        Self::sweep_map(&mut g.0, now, 1000);
        let record = build(now, g.1 + 1);
        if let Some(k) = &record.idempotency_key
            && let Some(c) = g.0.values().find(|c| {
                c.requester_agent == record.requester_agent && c.idempotency_key.as_ref() == Some(k)
            })
        {
            return Ok(InsertOutcome::KeyTaken(c.clone()));
        }
        g.1 += 1;
        g.0.insert(record.seq, record.clone());
        Ok(InsertOutcome::Inserted(record))
    }

    fn claim_next(&self, agent: &AgentId) -> Result<Option<Contract>, StoreError> {
        let mut g = self.map.lock().unwrap();
        let now = self.now();
        Self::sweep_map(&mut g.0, now, 1000);
        let mut candidates: Vec<&Contract> =
            g.0.values()
                .filter(|c| transition::claim(c, agent, now).is_some())
                .collect();
        candidates.sort_by_key(|c| (c.queued_at, c.seq));
        let Some(seq) = candidates.first().map(|c| c.seq) else {
            return Ok(None);
        };
        let next = transition::claim(&g.0[&seq], agent, now).unwrap();
        g.0.insert(seq, next.clone());
        Ok(Some(next))
    }

    fn update(&self, contract_id: &ContractId, step: Update<'_>) -> Result<Option<Reply>, StoreError> {
        let mut g = self.map.lock().unwrap();
        let now = self.now();
        Self::sweep_map(&mut g.0, now, 1000);
        let Some(seq) =
            g.0.values()
                .find(|c| &c.contract_id == contract_id)
                .map(|c| c.seq)
        else {
            return Ok(None);
        };
        let out = step(&g.0[&seq], now);
        if let Some(next) = out.next {
            g.0.insert(seq, next);
        }
        Ok(Some(out.reply))
    }

    fn get(&self, contract_id: &ContractId) -> Result<Option<Contract>, StoreError> {
        Ok(self
            .map
            .lock()
            .unwrap()
            .0
            .values()
            .find(|c| &c.contract_id == contract_id)
            .cloned())
    }

    fn get_by_key(&self, requester: &AgentId, key: &str) -> Result<Option<Contract>, StoreError> {
        Ok(self
            .map
            .lock()
            .unwrap()
            .0
            .values()
            .find(|c| &c.requester_agent == requester && c.idempotency_key.as_deref() == Some(key))
            .cloned())
    }

    fn list(&self, query: &ListQuery, now: EpochMs) -> Result<ListPage, StoreError> {
        let g = self.map.lock().unwrap();
        let mut counts = Counts::default();
        g.0.values()
            .filter(|c| query.matches_for_counts(c))
            .for_each(|c| counts.add(c, now));
        let records =
            g.0.values()
                .rev()
                .filter(|c| query.matches(c))
                .take(query.limit)
                .cloned()
                .collect();
        Ok(ListPage { records, counts })
    }

    fn sweep(&self, now: EpochMs, max_per_kind: usize) -> Result<SweepReport, StoreError> {
        Ok(Self::sweep_map(
            &mut self.map.lock().unwrap().0,
            now,
            max_per_kind,
        ))
    }

    fn purge_terminal(&self, completed_before: EpochMs, max: usize) -> Result<u64, StoreError> {
        let mut g = self.map.lock().unwrap();
        let doomed: Vec<i64> =
            g.0.values()
                .filter(|c| c.status.is_terminal() && c.completed_at.unwrap() < completed_before)
                .map(|c| c.seq)
                .take(max)
                .collect();
        doomed.iter().for_each(|s| {
            g.0.remove(s);
        });
        Ok(doomed.len() as u64)
    }

    fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        let mut r = IntegrityReport::default();
        for c in self.map.lock().unwrap().0.values() {
            r.records += 1;
            integrity::violations(c).into_iter().for_each(|v| r.push(v));
        }
        Ok(r)
    }
}

const AGENTS: [&str; 3] = ["alice", "bob", "carol"];
const FILES: [&str; 3] = ["a.rs", "b.rs", "c.md"];
const DAY: i64 = 86_400_000;

#[derive(Debug, Clone)]
enum EpochMode {
    Current,
    Stale,
    Absent,
    WrongAgent,
}

#[derive(Debug, Clone)]
enum Edit {
    Change,
    Grow,
    Delete,
    Restore,
    SwapToOutside,
    SwapToSibling,
}

#[derive(Debug, Clone)]
enum Advance {
    Small(i64),
    ToNextDeadline,
    Large(i64),
}

#[derive(Debug, Clone)]
enum Cmd {
    Dispatch {
        requester: usize,
        target: usize,
        key: Option<u8>,
        other_title: bool,
        pointers: Vec<usize>,
        schema: bool,
        queue_ttl: Option<i64>,
        deliveries: Option<u8>,
    },
    Poll(usize),
    /// CT-183: by the requester, or by another agent.
    Cancel(usize, bool),
    Extend(usize, EpochMode),
    Release(usize, EpochMode, bool),
    Fail(usize, EpochMode, bool),
    Fulfill(usize, EpochMode, Option<bool>, bool),
    Verify(usize, Option<usize>),
    Inspect(Option<usize>, bool),
    Edit(usize, Edit),
    Advance(Advance),
    Sweep,
}

fn epoch_mode() -> impl Strategy<Value = EpochMode> {
    prop_oneof![
        4 => Just(EpochMode::Current),
        1 => Just(EpochMode::Stale),
        1 => Just(EpochMode::Absent),
        1 => Just(EpochMode::WrongAgent),
    ]
}

/// Mostly `bob`, so that polls find work.
fn agent() -> impl Strategy<Value = usize> {
    prop_oneof![3 => Just(1usize), 1 => 0..3usize]
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        4 => (0..3usize, agent(), proptest::option::of(0..3u8), any::<bool>(), proptest::collection::vec(0..3usize, 0..3), any::<bool>(), proptest::option::of(prop_oneof![Just(60i64), Just(600), Just(14400)]), proptest::option::of(1..=4u8))
            .prop_map(|(requester, target, key, other_title, pointers, schema, queue_ttl, deliveries)| Cmd::Dispatch { requester, target, key, other_title, pointers, schema, queue_ttl, deliveries }),
        1 => (0..8usize, any::<bool>()).prop_map(|(i, wrong)| Cmd::Cancel(i, wrong)),
        5 => agent().prop_map(Cmd::Poll),
        2 => (0..8usize, epoch_mode()).prop_map(|(i, e)| Cmd::Extend(i, e)),
        2 => (0..8usize, epoch_mode(), any::<bool>()).prop_map(|(i, e, r)| Cmd::Release(i, e, r)),
        1 => (0..8usize, epoch_mode(), any::<bool>()).prop_map(|(i, e, r)| Cmd::Fail(i, e, r)),
        3 => (0..8usize, epoch_mode(), proptest::option::of(any::<bool>()), any::<bool>()).prop_map(|(i, e, o, a)| Cmd::Fulfill(i, e, o, a)),
        1 => (0..8usize, proptest::option::of(0..3usize)).prop_map(|(i, a)| Cmd::Verify(i, a)),
        1 => (proptest::option::of(0..3usize), any::<bool>()).prop_map(|(a, s)| Cmd::Inspect(a, s)),
        2 => (0..3usize, prop_oneof![Just(Edit::Change), Just(Edit::Grow), Just(Edit::Delete), Just(Edit::Restore), Just(Edit::SwapToOutside), Just(Edit::SwapToSibling)]).prop_map(|(f, e)| Cmd::Edit(f, e)),
        3 => prop_oneof![
            3 => (0..=120_000i64).prop_map(Advance::Small),
            2 => Just(Advance::ToNextDeadline),
            1 => (0..=30 * DAY).prop_map(Advance::Large),
        ].prop_map(Cmd::Advance),
        1 => Just(Cmd::Sweep),
    ]
}

fn original(file: usize) -> Vec<u8> {
    format!("fn f{file}() {{}}\n// {}\n", FILES[file]).into_bytes()
}

struct Run {
    clock: ManualClock,
    fs: MemFs,
    reference: Arc<Reference>,
    subjects: Vec<(TestStore, Library)>,
    reference_lib: Library,
    ids: Vec<String>,
    first_terminal: HashMap<ContractId, Contract>,
    last_retry: HashMap<ContractId, u32>,
}

impl Run {
    fn new() -> Run {
        let clock = ManualClock::new(chrono::DateTime::from_timestamp_millis(crate::scenarios::T0).unwrap());
        let fs = MemFs::new();
        for (i, f) in FILES.iter().enumerate() {
            fs.write_file(format!("/w/{f}"), &original(i));
        }
        fs.write_file("/outside/x", b"outside\n");
        let reference = Arc::new(Reference {
            clock: clock.clone(),
            map: Mutex::new((BTreeMap::new(), 0)),
        });
        let reference_store: Arc<dyn Store> = reference.clone();
        let reference_lib = Library::new(&reference_store, &fs);
        let subjects = store_kinds()
            .iter()
            .map(|kind| {
                let s = store(kind, &clock);
                let lib = Library::new(&s.store, &fs);
                (s, lib)
            })
            .collect();
        Run {
            clock,
            fs,
            reference,
            subjects,
            reference_lib,
            ids: Vec::new(),
            first_terminal: HashMap::new(),
            last_retry: HashMap::new(),
        }
    }

    /// The contract a holder command names: mostly a claimed one, when there is one, so that the
    /// interesting transitions (X1, R1, F1, U1–U5) are reached often.
    fn record(&self, i: usize) -> Option<Contract> {
        let g = self.reference.map.lock().unwrap();
        let claimed: Vec<&Contract> = g.0.values().filter(|c| c.status == Status::Claimed).collect();
        if i < 6 && !claimed.is_empty() {
            return Some(claimed[i % claimed.len()].clone());
        }
        let id = self.ids.get(i % self.ids.len().max(1))?;
        g.0.values().find(|c| &c.contract_id == id).cloned()
    }

    fn holder_args(&self, i: usize, mode: &EpochMode) -> Value {
        let Some(c) = self.record(i) else {
            return json!({"contract_id": "0196f3a0-0000-7000-8000-00000000dead", "agent_id": "bob"});
        };
        let target = c.target_agent.as_str();
        let other = AGENTS.iter().find(|a| **a != target).unwrap();
        match mode {
            EpochMode::Current => {
                json!({"contract_id": c.contract_id, "claim_epoch": c.claim_epoch.max(1), "agent_id": target})
            }
            EpochMode::Stale => {
                json!({"contract_id": c.contract_id, "claim_epoch": c.claim_epoch + 1, "agent_id": target})
            }
            EpochMode::Absent => json!({"contract_id": c.contract_id, "agent_id": target}),
            EpochMode::WrongAgent => {
                json!({"contract_id": c.contract_id, "claim_epoch": c.claim_epoch.max(1), "agent_id": other})
            }
        }
    }

    fn next_deadline(&self) -> Option<EpochMs> {
        let now = self.clock.now().timestamp_millis();
        let g = self.reference.map.lock().unwrap();
        g.0.values()
            .filter(|c| c.status.is_live())
            .flat_map(|c| [Some(c.queue_expires_at), c.expires_at, Some(c.lifetime_ends_at)])
            .flatten()
            .filter(|d| *d > now)
            .min()
    }

    /// Runs `tool` on the reference and on every store; the replies must be equal.
    fn call(&mut self, tool: &str, args: Value) -> Value {
        use crate::scenarios::{CallOpts, Surface};
        let opts = CallOpts {
            agent: None,
            strict: false,
        };
        let expected = self.reference_lib.call_with(&opts, tool, args.clone());
        crate::rules::check_refusal(tool, &expected);
        for (s, lib) in &mut self.subjects {
            let got = lib.call_with(&opts, tool, args.clone());
            assert_eq!(got, expected, "CT-131: {tool} {args} on {}", s.name);
        }
        if tool == "dispatch_contract" && expected["ok"] == true && expected["idempotent_replay"] == false {
            self.ids
                .push(expected["contract_id"].as_str().unwrap().to_owned());
        }
        expected
    }

    fn step(&mut self, cmd: &Cmd) {
        match cmd {
            Cmd::Dispatch {
                requester,
                target,
                key,
                other_title,
                pointers,
                schema,
                queue_ttl,
                deliveries,
            } => {
                let mut args = json!({
                    "requester_agent": AGENTS[*requester], "target_agent": AGENTS[*target],
                    "title": if *other_title { "Other" } else { "Review" }, "workspace_root": "/w",
                    "pointers": pointers.iter().map(|p| FILES[*p]).collect::<Vec<_>>(),
                });
                if let Some(k) = key {
                    args["idempotency_key"] = json!(format!("k{k}"));
                }
                if *schema {
                    args["contract_schema"] = json!({"type": "object", "required": ["verdict"]});
                }
                if let Some(q) = queue_ttl {
                    args["queue_ttl_sec"] = json!(q);
                    args["exec_ttl_sec"] = json!(60);
                }
                if let Some(d) = deliveries {
                    args["max_deliveries"] = json!(d);
                }
                self.call("dispatch_contract", args);
            }
            Cmd::Cancel(i, wrong) => {
                let args = match self.record(*i) {
                    None => {
                        json!({"contract_id": "0196f3a0-0000-7000-8000-00000000dead", "agent_id": "alice", "reason": "x"})
                    }
                    Some(c) => {
                        let requester = c.requester_agent.as_str();
                        let who = if *wrong {
                            AGENTS.iter().find(|a| **a != requester).unwrap()
                        } else {
                            requester
                        };
                        json!({"contract_id": c.contract_id, "agent_id": who, "reason": "changed\nmy mind"})
                    }
                };
                self.call("cancel_contract", args);
            }
            Cmd::Poll(a) => {
                self.call("poll_next_task", json!({"agent_id": AGENTS[*a]}));
            }
            Cmd::Extend(i, m) => {
                let args = self.holder_args(*i, m);
                self.call("extend_ttl", args);
            }
            Cmd::Release(i, m, reason) => {
                let mut args = self.holder_args(*i, m);
                if *reason {
                    args["reason"] = json!("need\tmore");
                }
                self.call("release_contract", args);
            }
            Cmd::Fail(i, m, retryable) => {
                let mut args = self.holder_args(*i, m);
                args["reason"] = json!("cannot");
                if *retryable {
                    args["retryable"] = json!(true);
                }
                self.call("fail_contract", args);
            }
            Cmd::Fulfill(i, m, output, artifact) => {
                let mut args = self.holder_args(*i, m);
                args["result_summary"] = json!("done");
                match output {
                    Some(true) => args["structured_output"] = json!({"verdict": "ok"}),
                    Some(false) => args["structured_output"] = json!({"nothing": 1}),
                    None => {}
                }
                if *artifact {
                    args["artifacts_pointers"] = json!(["c.md"]);
                }
                self.call("fulfill_contract", args);
            }
            Cmd::Verify(i, a) => {
                let mut args = self.holder_args(*i, &EpochMode::Absent);
                match a {
                    Some(a) => args["agent_id"] = json!(AGENTS[*a]),
                    None => {
                        args.as_object_mut().unwrap().remove("agent_id");
                    }
                }
                self.call("verify_contract", args);
            }
            Cmd::Inspect(a, by_status) => {
                let mut args = json!({"limit": 50});
                if let Some(a) = a {
                    args["target_agent"] = json!(AGENTS[*a]);
                }
                if *by_status {
                    args["status"] = json!(["SUBMITTED", "CLAIMED"]);
                }
                self.call("inspect_mesh_state", args);
            }
            Cmd::Edit(f, e) => {
                let path = format!("/w/{}", FILES[*f]);
                let _ = self.fs.remove_file(Path::new(&path));
                match e {
                    Edit::Change => {
                        let mut b = original(*f);
                        b[0] = b'F';
                        self.fs.write_file(&path, &b);
                    }
                    Edit::Grow => {
                        let mut b = original(*f);
                        b.extend_from_slice(b"// more\n");
                        self.fs.write_file(&path, &b);
                    }
                    Edit::Delete => {}
                    Edit::Restore => self.fs.write_file(&path, &original(*f)),
                    Edit::SwapToOutside => self.fs.symlink("/outside/x", &path),
                    Edit::SwapToSibling => self.fs.symlink(FILES[(*f + 1) % 3], &path),
                }
            }
            Cmd::Advance(a) => {
                let now = self.clock.now().timestamp_millis();
                let to = match a {
                    Advance::Small(ms) => now + ms,
                    Advance::Large(ms) => now + ms,
                    Advance::ToNextDeadline => self.next_deadline().unwrap_or(now),
                };
                self.clock
                    .set(chrono::DateTime::from_timestamp_millis(to).unwrap());
            }
            Cmd::Sweep => {
                let now = self.clock.now().timestamp_millis();
                let expected = self
                    .reference_lib
                    .normal
                    .sweep(crate::support::instant(now))
                    .unwrap();
                for (s, lib) in &self.subjects {
                    assert_eq!(
                        lib.normal.sweep(crate::support::instant(now)).unwrap(),
                        expected,
                        "sweep on {}",
                        s.name
                    );
                }
            }
        }
        self.check();
    }

    /// Records equal everywhere; CT-27, CT-157, CT-161.
    fn check(&mut self) {
        let all = |s: &dyn Store| {
            s.list(
                &ListQuery {
                    limit: usize::MAX,
                    ..ListQuery::default()
                },
                0,
            )
            .unwrap()
            .records
        };
        let expected = all(self.reference.as_ref());
        for (s, _) in &self.subjects {
            assert_eq!(all(s.store.as_ref()), expected, "CT-131: records on {}", s.name);
            let report = s.store.check_integrity().unwrap();
            assert!(report.is_clean(), "CT-27 on {}: {:?}", s.name, report.violations);
        }
        for c in &expected {
            assert!(integrity::violations(c).is_empty());
            // CT-161.
            assert!(c.extend_count <= 5 && c.release_count <= 3 && c.retry_count <= 3);
            if c.status == Status::Claimed {
                assert!(c.toctou_strikes <= 1, "CT-161");
            }
            let last = self
                .last_retry
                .insert(c.contract_id.clone(), c.retry_count)
                .unwrap_or(0);
            assert!(c.retry_count >= last, "CT-161: retry_count never decreases");
            // CT-157.
            if c.status.is_terminal() {
                match self.first_terminal.get(&c.contract_id) {
                    None => {
                        self.first_terminal.insert(c.contract_id.clone(), c.clone());
                    }
                    Some(first) => {
                        let mut allowed = first.clone();
                        if first.fail_reason.is_none() && c.fail_reason.is_some() {
                            allowed.fail_reason = c.fail_reason.clone();
                            allowed.error_reason = c.error_reason.clone();
                        }
                        assert_eq!(&allowed, c, "CT-157: a terminal record changed");
                    }
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn ct164_model_based_every_store_matches_the_reference(cmds in proptest::collection::vec(cmd(), 1..=64)) {
        let mut run = Run::new();
        for c in &cmds {
            run.step(c);
        }
        // Finally every contract ends: far in the future nothing is live (CT-160).
        let far = run.clock.now().timestamp_millis() + 40 * DAY;
        run.clock.set(chrono::DateTime::from_timestamp_millis(far).unwrap());
        run.step(&Cmd::Sweep);
        for (s, _) in &run.subjects {
            let page = s.store.list(&ListQuery { limit: usize::MAX, ..ListQuery::default() }, far).unwrap();
            prop_assert!(page.records.iter().all(|c| c.status.is_terminal()), "CT-160 on {}", s.name);
        }
    }
}
