//! Waiting for work (CT-179 … CT-182): the signal a store gives a waiting poll ([`Wake`]) and the
//! handle with which the caller ends a wait early ([`Cancel`]).
//!
//! A waiting poll holds no store transaction, no row lock and no pooled connection: it sleeps on its
//! [`Wake`], which the store notifies when a contract of the agent may have become claimable (a
//! dispatch, a release, a reverted claim or a redelivery, committed in this process, another process
//! or — with PostgreSQL — on another machine), and which a [`Cancel`] notifies too.
//!
//! ```
//! use shiftwork_contracts::wait::{Cancel, Wake};
//! use std::time::Duration;
//! let wake = Wake::new();
//! let cancel = Cancel::new();
//! cancel.attach(&wake);
//! assert!(!wake.wait(Duration::from_millis(1)), "nothing happened");
//! let other = cancel.clone();
//! std::thread::spawn(move || other.cancel());
//! assert!(wake.wait(Duration::from_secs(10)), "the cancel woke the waiter at once");
//! assert!(cancel.is_cancelled());
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError, Weak};
use std::time::Duration;

/// A one-waiter signal: [`Wake::notify`] wakes the thread blocked in [`Wake::wait`] (or the next
/// call to it). Clones share the signal.
#[derive(Clone, Default)]
pub struct Wake(Arc<WakeInner>);

#[derive(Default)]
pub(crate) struct WakeInner {
    signalled: Mutex<bool>,
    cv: Condvar,
}

impl std::fmt::Debug for Wake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wake").finish_non_exhaustive()
    }
}

impl WakeInner {
    fn notify(&self) {
        // A flag behind a mutex cannot be left half-written by a panic.
        *self.signalled.lock().unwrap_or_else(PoisonError::into_inner) = true;
        self.cv.notify_all();
    }
}

impl Wake {
    /// A signal nobody has given yet.
    pub fn new() -> Self {
        Wake::default()
    }

    /// Gives the signal.
    pub fn notify(&self) {
        self.0.notify();
    }

    /// Waits until the signal is given or `timeout` passed; true when it was given (the signal is
    /// then taken, so the next wait waits again).
    pub fn wait(&self, timeout: Duration) -> bool {
        let guard = self.0.signalled.lock().unwrap_or_else(PoisonError::into_inner);
        let (mut guard, _) = self
            .0
            .cv
            .wait_timeout_while(guard, timeout, |signalled| !*signalled)
            .unwrap_or_else(PoisonError::into_inner);
        std::mem::replace(&mut *guard, false)
    }

    pub(crate) fn downgrade(&self) -> Weak<WakeInner> {
        Arc::downgrade(&self.0)
    }
}

/// Notifies a [`Wake`] that may be gone (a store keeps its waiters weakly: a wait that ended leaves
/// nothing behind).
pub(crate) fn notify_weak(wake: &Weak<WakeInner>) -> bool {
    match wake.upgrade() {
        Some(inner) => {
            inner.notify();
            true
        }
        None => false,
    }
}

/// A cancellation handle: [`Cancel::cancel`] ends every wait it is attached to at once, with no claim
/// (CT-181). Clones share the handle.
#[derive(Clone, Default)]
pub struct Cancel(Arc<CancelInner>);

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    wakes: Mutex<Vec<Weak<WakeInner>>>,
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
            notify_weak(w);
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
        wakes.retain(|w| w.strong_count() > 0);
        wakes.push(wake.downgrade());
    }
}

/// The waiting polls registered with one store, by agent, held weakly.
#[derive(Default)]
pub(crate) struct Watchers {
    list: Mutex<Vec<(crate::model::AgentId, Weak<WakeInner>)>>,
}

impl Watchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(crate::model::AgentId, Weak<WakeInner>)>> {
        // The list holds plain values; a panic elsewhere cannot leave it half-updated.
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `wake` for `agent`.
    pub(crate) fn add(&self, agent: &crate::model::AgentId, wake: &Wake) {
        let mut list = self.lock();
        list.retain(|(_, w)| w.strong_count() > 0);
        list.push((agent.clone(), wake.downgrade()));
    }

    /// Wakes the waiters of `agent`.
    pub(crate) fn notify(&self, agent: &crate::model::AgentId) {
        let mut list = self.lock();
        list.retain(|(a, w)| a != agent || notify_weak(w));
    }

    /// Wakes every waiter.
    pub(crate) fn notify_all(&self) {
        let mut list = self.lock();
        list.retain(|(_, w)| notify_weak(w));
    }

    /// The agents somebody waits for, each once.
    pub(crate) fn agents(&self) -> Vec<crate::model::AgentId> {
        let mut list = self.lock();
        list.retain(|(_, w)| w.strong_count() > 0);
        let mut agents: Vec<crate::model::AgentId> = list.iter().map(|(a, _)| a.clone()).collect();
        agents.sort();
        agents.dedup();
        agents
    }
}
