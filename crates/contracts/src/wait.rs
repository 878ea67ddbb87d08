//! Waiting for work: the signal a store gives a waiting poll ([`Wake`]) and the
//! handle with which the caller ends a call early ([`Cancel`]).
//!
//! A waiting poll holds no store transaction, no row lock and no pooled connection: it waits on its
//! [`Wake`] through the facade's clock ([`shiftwork_seams::Clock::wait_until`], so the wait ends by the
//! clock it was given: a `ManualClock` wait ends when the test moves the clock), and the store
//! notifies the `Wake` when a contract of the agent may have become claimable (a dispatch, a release,
//! a reverted claim or a redelivery, committed in this process, another process or — with
//! PostgreSQL — on another machine); a [`Cancel`] notifies it too.
//!
//! ```
//! use shiftwork_contracts::wait::{Cancel, Wake};
//! use shiftwork_seams::{Clock, SystemClock};
//! use std::time::Duration;
//! let clock = SystemClock::new();
//! let wake = Wake::new();
//! let cancel = Cancel::new();
//! cancel.attach(&wake);
//! assert!(!clock.wait_until(&wake, clock.monotonic() + Duration::from_millis(1)), "nothing happened");
//! let other = cancel.clone();
//! std::thread::spawn(move || other.cancel());
//! assert!(clock.wait_until(&wake, clock.monotonic() + Duration::from_secs(10)), "the cancel woke the waiter at once");
//! assert!(cancel.is_cancelled());
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use shiftwork_seams::WeakSignal;

/// The signal a waiting poll waits on: a [`shiftwork_seams::Signal`], given by the store and by a
/// [`Cancel`], waited for through the facade's clock.
pub type Wake = shiftwork_seams::Signal;

/// A cancellation handle: [`Cancel::cancel`] ends every wait it is attached to at once, with no claim
///. Clones share the handle.
#[derive(Clone, Default)]
pub struct Cancel(Arc<CancelInner>);

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    wakes: Mutex<Vec<WeakSignal>>,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cancel")
            .field("cancelled", &self.is_cancelled())
            .finish()
    }
}

impl Cancel {
    /// A handle nobody has triggered.
    pub fn new() -> Self {
        Cancel::default()
    }

    /// Cancels: every attached wait ends at once.
    pub fn cancel(&self) {
        self.0.cancelled.store(true, Ordering::SeqCst);
        let wakes = std::mem::take(&mut *self.0.wakes.lock().unwrap_or_else(PoisonError::into_inner));
        for w in &wakes {
            w.notify();
        }
    }

    /// True once cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancelled.load(Ordering::SeqCst)
    }

    /// Makes `wake` wake on cancellation (at once when already cancelled).
    pub fn attach(&self, wake: &Wake) {
        let mut wakes = self.0.wakes.lock().unwrap_or_else(PoisonError::into_inner);
        if self.is_cancelled() {
            drop(wakes);
            wake.notify();
            return;
        }
        wakes.retain(WeakSignal::is_alive);
        wakes.push(wake.downgrade());
    }
}

/// The waiting polls registered with one store, by agent, held weakly.
#[derive(Default)]
pub(crate) struct Watchers {
    list: Mutex<Vec<(crate::model::AgentId, WeakSignal)>>,
}

impl Watchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(crate::model::AgentId, WeakSignal)>> {
        // The list holds plain values; a panic elsewhere cannot leave it half-updated.
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `wake` for `agent`.
    pub(crate) fn add(&self, agent: &crate::model::AgentId, wake: &Wake) {
        let mut list = self.lock();
        list.retain(|(_, w)| w.is_alive());
        list.push((agent.clone(), wake.downgrade()));
    }

    /// Wakes the waiters of `agent`.
    pub(crate) fn notify(&self, agent: &crate::model::AgentId) {
        let mut list = self.lock();
        list.retain(|(a, w)| a != agent || w.notify());
    }

    /// Wakes every waiter.
    pub(crate) fn notify_all(&self) {
        let mut list = self.lock();
        list.retain(|(_, w)| w.notify());
    }

    /// The agents somebody waits for, each once.
    pub(crate) fn agents(&self) -> Vec<crate::model::AgentId> {
        let mut list = self.lock();
        list.retain(|(_, w)| w.is_alive());
        let mut agents: Vec<crate::model::AgentId> = list.iter().map(|(a, _)| a.clone()).collect();
        agents.sort();
        agents.dedup();
        agents
    }
}
