//! [`MemoryStore`]: records in a `BTreeMap` behind one mutex.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use shiftwork_seams::Clock;

use super::{
    Build, Due, InsertOutcome, ListPage, ListQuery, QueueDepth, Store, SweepReport, Update, epoch_ms,
};
use crate::error::StoreError;
use crate::integrity::{self, IntegrityReport};
use crate::limits::SWEEP_BATCH_PER_CALL;
use crate::model::{AgentId, Contract, ContractId, EpochMs, Status, instant};
use crate::observe::{ContractEvent, ContractsObserver, ObserverSlot, swept_lease};
use crate::store::Counts;
use crate::transition::{self, Reply};

/// A non-persistent store for embedders and tests. It applies the pure transition functions to a
/// `BTreeMap` keyed by `seq`.
///
/// ```
/// use shiftwork_contracts::{MemoryStore, Store};
/// use shiftwork_seams::ManualClock;
/// use std::sync::Arc;
/// let store = MemoryStore::new(Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH)));
/// assert!(store.check_integrity().unwrap().is_clean());
/// ```
pub struct MemoryStore {
    clock: Arc<dyn Clock>,
    state: Mutex<State>,
    /// Waiting polls, woken when a record of their agent becomes `SUBMITTED`.
    watchers: crate::wait::Watchers,
    /// Told of the leases sweeps end.
    observer: ObserverSlot,
}

#[derive(Default)]
struct State {
    records: BTreeMap<i64, Contract>,
    last_seq: i64,
}

impl MemoryStore {
    /// An empty store reading time from `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        MemoryStore {
            clock,
            state: Mutex::new(State::default()),
            watchers: crate::wait::Watchers::default(),
            observer: ObserverSlot::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Every mutation completes before the guard drops: a poisoned lock still guards whole records.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    /// Ends what is past its deadline, at most `max` records of each kind (queue windows, leases
    /// returned to the queue, leases ended; counted apart, like the SQL stores' separate statements).
    fn sweep(&mut self, now: EpochMs, max: usize) -> Swept {
        let mut queued: Vec<(EpochMs, i64)> = Vec::new();
        let mut claimed: Vec<(EpochMs, i64)> = Vec::new();
        let mut redeliverable: Vec<(EpochMs, i64)> = Vec::new();
        for c in self.records.values() {
            if !c.is_logically_expired(now) {
                continue;
            }
            let key = (c.expires_at.unwrap_or(EpochMs::MIN), c.seq);
            match (c.status, transition::expire(c, now).map(|n| n.status)) {
                (Status::Submitted, _) => queued.push((c.queue_expires_at, c.seq)),
                (Status::Claimed, Some(Status::Submitted)) => redeliverable.push(key),
                (Status::Claimed, _) => claimed.push(key),
                _ => {}
            }
        }
        queued.sort_unstable();
        claimed.sort_unstable();
        redeliverable.sort_unstable();
        let mut out = Swept::default();
        for (list, counter, lease) in [
            (queued, &mut out.report.queued_timed_out, false),
            (redeliverable, &mut out.report.redelivered, true),
            (claimed, &mut out.report.claimed_timed_out, true),
        ] {
            for (_, seq) in list.into_iter().take(max) {
                let Some(next) = self.records.get(&seq).and_then(|c| transition::expire(c, now)) else {
                    continue;
                };
                let requeued = next.status == Status::Submitted;
                if requeued {
                    out.requeued.push(next.target_agent.clone());
                }
                if lease {
                    out.events.extend(swept_lease(
                        next.contract_id.clone(),
                        next.target_agent.clone(),
                        requeued.then(|| next.available_at.map(instant)),
                    ));
                }
                self.records.insert(seq, next);
                *counter += 1;
            }
        }
        out
    }

    fn by_id(&self, contract_id: &ContractId) -> Option<i64> {
        self.records
            .values()
            .find(|c| &c.contract_id == contract_id)
            .map(|c| c.seq)
    }
}

/// What a sweep did.
#[derive(Default)]
struct Swept {
    report: SweepReport,
    /// The agents whose records went back to the queue.
    requeued: Vec<AgentId>,
    /// The leases it ended, for the observer.
    events: Vec<ContractEvent>,
}

impl MemoryStore {
    /// Wakes the waiters of the agents whose records a sweep returned to the queue, and tells the
    /// observer of the leases it ended (after the lock is released).
    fn swept(&self, swept: Swept) -> SweepReport {
        for agent in &swept.requeued {
            self.watchers.notify_one(agent);
        }
        self.observer.tell(&swept.events);
        swept.report
    }
}

impl Store for MemoryStore {
    fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    fn insert(&self, build: Build<'_>) -> Result<InsertOutcome, StoreError> {
        let mut st = self.lock();
        let now = epoch_ms(self.clock.as_ref());
        let swept = st.sweep(now, SWEEP_BATCH_PER_CALL);
        let seq = st.last_seq + 1;
        let record = build(now, seq);
        let taken = record.idempotency_key.as_ref().and_then(|key| {
            st.records.values().find(|c| {
                c.requester_agent == record.requester_agent && c.idempotency_key.as_ref() == Some(key)
            })
        });
        let out = match taken {
            Some(existing) => InsertOutcome::KeyTaken(existing.clone()),
            None => {
                st.last_seq = seq;
                st.records.insert(seq, record.clone());
                InsertOutcome::Inserted(record)
            }
        };
        drop(st);
        self.swept(swept);
        if let InsertOutcome::Inserted(record) = &out {
            self.watchers.notify_one(&record.target_agent);
        }
        Ok(out)
    }

    fn claim_next(&self, agent: &AgentId) -> Result<Option<Contract>, StoreError> {
        let mut st = self.lock();
        let now = epoch_ms(self.clock.as_ref());
        let swept = st.sweep(now, SWEEP_BATCH_PER_CALL);
        let oldest = st
            .records
            .values()
            .filter(|c| &c.target_agent == agent && c.is_claimable(now))
            .min_by_key(|c| (c.queued_at, c.seq))
            .map(|c| c.seq);
        let claimed = oldest.and_then(|seq| {
            let next = st
                .records
                .get(&seq)
                .and_then(|c| transition::claim(c, agent, now))?;
            st.records.insert(seq, next.clone());
            Some(next)
        });
        drop(st);
        self.swept(swept);
        Ok(claimed)
    }

    fn update(&self, contract_id: &ContractId, step: Update<'_>) -> Result<Option<Reply>, StoreError> {
        let mut st = self.lock();
        let now = epoch_ms(self.clock.as_ref());
        let swept = st.sweep(now, SWEEP_BATCH_PER_CALL);
        let mut requeued = None;
        let reply = st.by_id(contract_id).and_then(|seq| {
            let record = st.records.get(&seq)?;
            let was_queued = record.status == Status::Submitted;
            let out = step(record, now);
            if let Some(next) = out.next {
                requeued =
                    (!was_queued && next.status == Status::Submitted).then(|| next.target_agent.clone());
                st.records.insert(seq, next);
            }
            Some(out.reply)
        });
        drop(st);
        self.swept(swept);
        if let Some(agent) = requeued {
            self.watchers.notify_one(&agent);
        }
        Ok(reply)
    }

    fn get(&self, contract_id: &ContractId) -> Result<Option<Contract>, StoreError> {
        let st = self.lock();
        Ok(st
            .by_id(contract_id)
            .and_then(|seq| st.records.get(&seq).cloned()))
    }

    fn get_by_key(&self, requester: &AgentId, key: &str) -> Result<Option<Contract>, StoreError> {
        Ok(self
            .lock()
            .records
            .values()
            .find(|c| &c.requester_agent == requester && c.idempotency_key.as_deref() == Some(key))
            .cloned())
    }

    fn list(&self, query: &ListQuery, now: EpochMs) -> Result<ListPage, StoreError> {
        let st = self.lock();
        let mut counts = Counts::default();
        for c in st.records.values().filter(|c| query.matches_for_counts(c)) {
            counts.add(c, now);
        }
        let records = st
            .records
            .values()
            .rev()
            .filter(|c| query.matches(c))
            .take(query.limit)
            .cloned()
            .collect();
        Ok(ListPage { records, counts })
    }

    fn sweep(&self, now: EpochMs, max_per_kind: usize) -> Result<SweepReport, StoreError> {
        let swept = self.lock().sweep(now, max_per_kind);
        Ok(self.swept(swept))
    }

    fn purge_terminal(&self, completed_before: EpochMs, max: usize) -> Result<u64, StoreError> {
        let mut st = self.lock();
        let doomed: Vec<i64> = st
            .records
            .values()
            .filter(|c| c.status.is_terminal() && c.completed_at.is_some_and(|t| t < completed_before))
            .map(|c| c.seq)
            .take(max)
            .collect();
        for seq in &doomed {
            st.records.remove(seq);
        }
        Ok(doomed.len() as u64)
    }

    fn due(&self, agent: &AgentId, now: EpochMs) -> Result<Due, StoreError> {
        let st = self.lock();
        Ok(Due::of(
            st.records.values().filter(|c| &c.target_agent == agent),
            now,
        ))
    }

    fn watch(&self, agent: &AgentId, wake: &crate::wait::Wake) -> Result<(), StoreError> {
        self.watchers.add(agent, wake);
        Ok(())
    }

    fn unwatch(&self, agent: &AgentId, wake: &crate::wait::Wake) {
        self.watchers.remove(agent, wake);
    }

    fn queue_depth(&self) -> Result<QueueDepth, StoreError> {
        let st = self.lock();
        let mut depth = QueueDepth::default();
        let mut waiting: std::collections::BTreeMap<&AgentId, u64> = std::collections::BTreeMap::new();
        for c in st.records.values() {
            depth.by_status.add_status(c.status, 1);
            if c.status == Status::Submitted {
                *waiting.entry(&c.target_agent).or_default() += 1;
            }
        }
        depth.submitted_by_target = waiting.into_iter().map(|(a, n)| (a.clone(), n)).collect();
        Ok(depth)
    }

    fn observe(&self, observer: Arc<dyn ContractsObserver>) {
        self.observer.set(observer);
    }

    fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        let st = self.lock();
        let mut report = IntegrityReport::default();
        let mut ids = std::collections::HashSet::new();
        let mut keys = std::collections::HashSet::new();
        for c in st.records.values() {
            report.records += 1;
            for v in integrity::violations(c) {
                report.push(v);
            }
            if !ids.insert(c.contract_id.clone()) {
                report.push(format!("contract {} appears twice", c.contract_id));
            }
            if let Some(k) = &c.idempotency_key
                && !keys.insert((c.requester_agent.clone(), k.clone()))
            {
                report.push(format!(
                    "idempotency key {k} of {} names two contracts",
                    c.requester_agent
                ));
            }
        }
        Ok(report)
    }
}
