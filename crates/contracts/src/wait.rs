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

/// The waiting polls registered with one store, by agent, held weakly, in the order they began to
/// wait. A store wakes one waiting poll per contract that became claimable ([`Watchers::notify_one`]):
/// the waiter it picks is marked handed until it registers again (which it does before it looks),
/// so the next contract wakes another, and a waiter that leaves without looking hands its wake on
/// ([`Watchers::remove`]).
#[derive(Default)]
pub(crate) struct Watchers {
    list: Mutex<Vec<Watcher>>,
}

struct Watcher {
    agent: crate::model::AgentId,
    wake: WeakSignal,
    /// A wake was handed to it since it last registered.
    handed: bool,
}

impl Watchers {
    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Watcher>> {
        // The list holds plain values; a panic elsewhere cannot leave it half-updated.
        self.list.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers `wake` for `agent`, or registers it again: it is about to look, so a wake handed
    /// to it before is taken as seen.
    pub(crate) fn add(&self, agent: &crate::model::AgentId, wake: &Wake) {
        let mut list = self.lock();
        list.retain(|w| w.wake.is_alive());
        if let Some(w) = list.iter_mut().find(|w| w.wake.same_as(wake)) {
            w.agent = agent.clone();
            w.handed = false;
            return;
        }
        list.push(Watcher {
            agent: agent.clone(),
            wake: wake.downgrade(),
            handed: false,
        });
    }

    /// Wakes one waiter of `agent` that no wake was handed to yet (the longest waiting); false when
    /// there is none (every waiter of `agent` already has a wake to act on, or nobody waits).
    pub(crate) fn notify_one(&self, agent: &crate::model::AgentId) -> bool {
        let mut list = self.lock();
        list.retain(|w| w.wake.is_alive());
        for w in list.iter_mut() {
            if !w.handed && &w.agent == agent && w.wake.notify() {
                w.handed = true;
                return true;
            }
        }
        false
    }

    /// Makes sure `n` waiters of `agent` act (`n` contracts became claimable): the waiters already
    /// handed a wake count, and idle ones are woken for the rest ([`Watchers::notify_one`]).
    pub(crate) fn notify_many(&self, agent: &crate::model::AgentId, n: usize) {
        let handed = {
            let mut list = self.lock();
            list.retain(|w| w.wake.is_alive());
            list.iter().filter(|w| w.handed && &w.agent == agent).count()
        };
        for _ in handed..n {
            if !self.notify_one(agent) {
                return;
            }
        }
    }

    /// Wakes every waiter (after a lost connection, when what happened meanwhile is unknown).
    pub(crate) fn notify_all(&self) {
        let mut list = self.lock();
        list.retain(|w| w.wake.notify());
        for w in list.iter_mut() {
            w.handed = true;
        }
    }

    /// Takes `wake` off the list: its poll ends without looking again. A wake handed to it that it
    /// did not act on goes to another waiter of its agent, so no contract waits for a poll that left.
    pub(crate) fn remove(&self, agent: &crate::model::AgentId, wake: &Wake) {
        let handed = {
            let mut list = self.lock();
            let handed = list.iter().any(|w| w.wake.same_as(wake) && w.handed);
            list.retain(|w| w.wake.is_alive() && !w.wake.same_as(wake));
            handed
        };
        if handed {
            self.notify_one(agent);
        }
    }

    /// The agents somebody waits for, each once.
    pub(crate) fn agents(&self) -> Vec<crate::model::AgentId> {
        let mut list = self.lock();
        list.retain(|w| w.wake.is_alive());
        let mut agents: Vec<crate::model::AgentId> = list.iter().map(|w| w.agent.clone()).collect();
        agents.sort();
        agents.dedup();
        agents
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::AgentId;

    fn agent(name: &str) -> AgentId {
        AgentId::parse(name).unwrap_or_else(|_| unreachable!("a valid test agent"))
    }

    /// Issue 36 item 2: one wake per contract, each to a different waiter; a waiter that leaves
    /// with a wake it did not act on hands it on; registering again takes a wake as seen.
    #[test]
    fn issue36_item2_watchers_wake_one_waiter_per_contract() {
        let w = Watchers::default();
        let (bob, eve) = (agent("bob"), agent("eve"));
        let (a, b, c, e) = (Wake::new(), Wake::new(), Wake::new(), Wake::new());
        for x in [&a, &b, &c] {
            w.add(&bob, x);
        }
        w.add(&eve, &e);
        assert!(w.notify_one(&bob));
        assert!(
            a.take() && !b.take() && !c.take() && !e.take(),
            "the longest waiting, alone"
        );
        assert!(w.notify_one(&bob));
        assert!(b.take() && !c.take(), "the next contract wakes the next waiter");
        // `a` leaves without looking: its wake goes to `c`.
        w.remove(&bob, &a);
        assert!(c.take());
        // Every waiter of bob has a wake: a fourth contract wakes nobody more.
        assert!(!w.notify_one(&bob));
        // `b` looks again (registers again): the next wake is its.
        w.add(&bob, &b);
        assert!(w.notify_one(&bob) && b.take());
        // `notify_many` counts the waiters already woken: `b` and `c` cover two contracts.
        w.add(&bob, &b);
        w.notify_many(&bob, 1);
        assert!(!b.take(), "c's wake covers the one contract");
        w.notify_many(&bob, 2);
        assert!(b.take());
        // A waiter that leaves after it looked hands nothing on.
        w.add(&eve, &e);
        let f = Wake::new();
        w.add(&eve, &f);
        w.remove(&eve, &e);
        assert!(!f.take());
        drop(a);
        w.notify_all();
        assert!(b.take() && c.take() && f.take());
    }
}
