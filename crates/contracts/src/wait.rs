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
/// kept. Clones share the handle.
///
/// It also carries what the caller knows and the poll does not:
///
/// - **A condition to keep meeting** ([`Cancel::require`]): the caller's credentials, say. A poll
///   judges it before each claim and once more before it answers; a call that no longer meets it ends
///   as cancelled (nothing claimed; a claim it made is undone), so a token revoked while a poll waits
///   never claims the work dispatched after.
/// - **Whether the answer reached the caller** ([`Cancel::undeliver`]): a claim is registered with the
///   handle the moment the store commits it, before anything can go wrong between the claim and the
///   answer, so a transport that drops the answer — the client went away at any step — undoes the claim
///   instead of leaving it held by nobody until its lease runs out.
#[derive(Clone, Default)]
pub struct Cancel(Arc<CancelInner>);

/// A condition a call must keep meeting ([`Cancel::require`]).
type Requirement = Arc<dyn Fn() -> bool + Send + Sync>;

#[derive(Default)]
struct CancelInner {
    cancelled: AtomicBool,
    wakes: Mutex<Vec<WeakSignal>>,
    requirement: Mutex<Option<Requirement>>,
    claims: Mutex<Claims>,
}

/// The claims a call made under a handle, with what undoes each.
#[derive(Default)]
struct Claims {
    /// The answer will not be delivered: every claim is undone, now and from now on.
    undelivered: bool,
    held: Vec<Held>,
}

/// A claim a call made (its contract and epoch) and what undoes it.
type Held = (crate::model::ContractId, u64, Box<dyn FnOnce() + Send>);

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
        let wakes = std::mem::take(&mut *lock(&self.0.wakes));
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
        let mut wakes = lock(&self.0.wakes);
        if self.is_cancelled() {
            drop(wakes);
            wake.notify();
            return;
        }
        wakes.retain(WeakSignal::is_alive);
        wakes.push(wake.downgrade());
    }

    /// Gives the call a condition it must keep meeting — checked by a poll before each claim and
    /// before its answer ([`Cancel::allows`]); the last one given counts. The check should be cheap
    /// and must not wait (it runs between two store transactions).
    ///
    /// ```
    /// use shiftwork_contracts::wait::Cancel;
    /// use std::sync::{Arc, atomic::{AtomicBool, Ordering}};
    /// let valid = Arc::new(AtomicBool::new(true));
    /// let cancel = Cancel::new();
    /// let still = Arc::clone(&valid);
    /// cancel.require(move || still.load(Ordering::SeqCst));
    /// assert!(cancel.allows());
    /// valid.store(false, Ordering::SeqCst); // the caller's token was revoked
    /// assert!(!cancel.allows() && cancel.is_cancelled(), "the call ends as cancelled");
    /// ```
    pub fn require(&self, check: impl Fn() -> bool + Send + Sync + 'static) {
        *lock(&self.0.requirement) = Some(Arc::new(check));
    }

    /// True while the call is not cancelled and meets its condition ([`Cancel::require`]); a call
    /// that no longer meets it is cancelled here (every wait of it ends).
    pub fn allows(&self) -> bool {
        if self.is_cancelled() {
            return false;
        }
        let requirement = lock(&self.0.requirement).clone();
        if requirement.is_some_and(|check| !check()) {
            self.cancel();
            return false;
        }
        true
    }

    /// The call's answer will never reach its caller (the transport dropped it: the client went away,
    /// or cancelled the request after it was answered): cancels, and undoes every claim the call
    /// made — each goes back to the queue with the history entry `CLAIM_REVERTED: the poll was
    /// cancelled`, if it is still claimed under its epoch — and any claim the call commits from now
    /// on as soon as it is committed. Call it from a thread that may block: it runs store
    /// transactions.
    pub fn undeliver(&self) {
        self.cancel();
        let held = {
            let mut claims = lock(&self.0.claims);
            claims.undelivered = true;
            std::mem::take(&mut claims.held)
        };
        for (_, _, undo) in held {
            undo();
        }
    }

    /// True once [`Cancel::undeliver`] was called.
    pub fn is_undelivered(&self) -> bool {
        lock(&self.0.claims).undelivered
    }

    /// Registers a claim the call just committed, with what undoes it: run now when the answer is
    /// already known to be dropped, else kept until [`Cancel::undeliver`] or [`Cancel::settle`].
    pub(crate) fn hold(
        &self,
        contract_id: &crate::model::ContractId,
        epoch: u64,
        undo: Box<dyn FnOnce() + Send>,
    ) {
        let mut claims = lock(&self.0.claims);
        if claims.undelivered {
            drop(claims);
            undo();
            return;
        }
        claims.held.push((contract_id.clone(), epoch, undo));
    }

    /// Forgets a claim the call settled itself (undone, or closed stale): there is nothing left for
    /// [`Cancel::undeliver`] to undo.
    pub(crate) fn settle(&self, contract_id: &crate::model::ContractId, epoch: u64) {
        lock(&self.0.claims)
            .held
            .retain(|(id, e, _)| !(id == contract_id && *e == epoch));
    }
}

/// Locks one of the handle's parts: each holds plain values, which a panic cannot leave half-written.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
        AgentId::new(name).unwrap_or_else(|_| unreachable!("a valid test agent"))
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
