//! What an embedder can watch: events of the queue ([`ContractEvent`]) told to an observer it installs
//! ([`ContractsObserver`], with [`crate::ContractsBuilder::observer`]), for metrics, logs or traces.
//! The crate itself logs nothing; each store transaction also runs in a `tracing` span named
//! `contracts.store` (with the field `operation`), so a tracing subscriber sees where a call spent its
//! time.
//!
//! An observer is called on the thread that made the call, after the store transaction committed,
//! and must return quickly (count, record, send to a channel); it must not call the facade back.
//!
//! ```
//! use shiftwork_contracts::observe::ContractEvent;
//! use shiftwork_contracts::{AgentId, Contracts, DispatchRequest, MemoryStore};
//! use shiftwork_contracts::roots::AllowedRoots;
//! use shiftwork_seams::{ManualClock, MemFs};
//! use std::sync::{Arc, Mutex};
//!
//! let clock = Arc::new(ManualClock::new(chrono::DateTime::UNIX_EPOCH));
//! let fs = MemFs::new();
//! fs.make_dirs("/w");
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let log = seen.clone();
//! let queue = Contracts::builder(Arc::new(MemoryStore::new(clock)))
//!     .fs(Arc::new(fs))
//!     .config(shiftwork_contracts::ContractsConfig::builder().allowed_roots(AllowedRoots::new(["/w"])).build().unwrap())
//!     .observer(Arc::new(move |event: &ContractEvent| log.lock().unwrap().push(event.name())))
//!     .real_ids().build();
//! let (alice, bob) = (AgentId::new("alice").unwrap(), AgentId::new("bob").unwrap());
//! queue.dispatch(&DispatchRequest::new(alice, bob.clone(), "Review", "/w")).unwrap();
//! queue.poll_next_task(&bob).unwrap();
//! assert_eq!(*seen.lock().unwrap(), ["claim"]);
//! ```

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::model::{AgentId, ContractId, Status};

/// Something that happened in the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContractEvent {
    /// A poll claimed a contract and found its files as they were pinned.
    Claimed {
        /// The contract.
        contract_id: ContractId,
        /// Its holder.
        agent: AgentId,
        /// The claim's epoch.
        claim_epoch: u64,
        /// Claims of this contract so far, this one included.
        delivery_count: u32,
    },
    /// A delivery was accepted: the contract is `COMPLETED`.
    Fulfilled {
        /// The contract.
        contract_id: ContractId,
        /// Its holder.
        agent: AgentId,
        /// From the claim to the accepted delivery, on the store's clock.
        claim_to_fulfil: Duration,
    },
    /// The holder failed the contract (`fail_contract`).
    Failed {
        /// The contract.
        contract_id: ContractId,
        /// Its holder.
        agent: AgentId,
        /// What became of it: `FAILED`, `TIMED_OUT` (a report after the lease ran out) or `SUBMITTED`
        /// (a retryable failure with deliveries left, also told as [`ContractEvent::Redelivered`]).
        status: Status,
    },
    /// A claimed contract went back to the queue for another delivery: a retryable failure, or a lease
    /// that ran out with deliveries left (also told as [`ContractEvent::LeaseExpired`]).
    Redelivered {
        /// The contract.
        contract_id: ContractId,
        /// The agent it waits for.
        target_agent: AgentId,
        /// When it becomes claimable again, after its backoff.
        available_at: Option<DateTime<Utc>>,
    },
    /// A holder's lease ran out without a delivery, found by the sweep a store runs in its write
    /// transactions (or [`crate::Contracts::sweep`]): the contract is `TIMED_OUT`, or redelivered.
    LeaseExpired {
        /// The contract.
        contract_id: ContractId,
        /// Its holder until then.
        target_agent: AgentId,
    },
    /// A holder call was refused `STALE_EPOCH`: a newer claim supersedes the caller's.
    StaleEpochRefused {
        /// The contract.
        contract_id: ContractId,
        /// The caller.
        agent: AgentId,
        /// The epoch the caller gave.
        given: u64,
        /// The contract's current epoch.
        current: u64,
    },
    /// A poll found no work and began to wait for some.
    WaitingPollStarted {
        /// The agent waiting.
        agent: AgentId,
        /// The longest it waits.
        wait: Duration,
    },
}

impl ContractEvent {
    /// A short stable name: `claim`, `fulfil`, `failure`, `redelivery`, `lease_expiry`,
    /// `stale_epoch`, `waiting_poll` (a metric's label).
    pub fn name(&self) -> &'static str {
        match self {
            ContractEvent::Claimed { .. } => "claim",
            ContractEvent::Fulfilled { .. } => "fulfil",
            ContractEvent::Failed { .. } => "failure",
            ContractEvent::Redelivered { .. } => "redelivery",
            ContractEvent::LeaseExpired { .. } => "lease_expiry",
            ContractEvent::StaleEpochRefused { .. } => "stale_epoch",
            ContractEvent::WaitingPollStarted { .. } => "waiting_poll",
        }
    }
}

/// Told of every [`ContractEvent`]. Any `Fn(&ContractEvent) + Send + Sync` closure is one.
pub trait ContractsObserver: Send + Sync {
    /// `event` happened. The default does nothing.
    fn event(&self, event: &ContractEvent) {
        let _ = event;
    }
}

impl<F: Fn(&ContractEvent) + Send + Sync> ContractsObserver for F {
    fn event(&self, event: &ContractEvent) {
        self(event)
    }
}

/// The observer a store tells of its sweeps, installed by the facade's builder.
#[derive(Default)]
pub(crate) struct ObserverSlot(RwLock<Option<Arc<dyn ContractsObserver>>>);

impl ObserverSlot {
    pub(crate) fn set(&self, observer: Arc<dyn ContractsObserver>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = Some(observer);
    }

    /// Tells the observer, if any, of each of `events`.
    pub(crate) fn tell(&self, events: &[ContractEvent]) {
        if events.is_empty() {
            return;
        }
        let observer = self.0.read().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(observer) = observer {
            for e in events {
                observer.event(e);
            }
        }
    }
}

/// The events of a lease that a sweep ended (`redelivered_at`: when it is claimable again, if it went
/// back to the queue).
pub(crate) fn swept_lease(
    contract_id: ContractId,
    target_agent: AgentId,
    redelivered_at: Option<Option<DateTime<Utc>>>,
) -> Vec<ContractEvent> {
    let mut out = vec![ContractEvent::LeaseExpired {
        contract_id: contract_id.clone(),
        target_agent: target_agent.clone(),
    }];
    if let Some(available_at) = redelivered_at {
        out.push(ContractEvent::Redelivered {
            contract_id,
            target_agent,
            available_at,
        });
    }
    out
}
