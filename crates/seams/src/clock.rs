//! The `Clock` seam: the only way a core crate learns what time it is, and the only way it waits.
//!
//! A wait for something another thread does (a dispatch, a cancellation) is a [`Signal`] waited for
//! through [`Clock::wait_until`], so it ends by the clock it was given: [`SystemClock`] waits on the
//! operating system's monotonic clock; [`ManualClock`] blocks until the signal is given or a test moves
//! the clock past the deadline.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};

/// A source of wall-clock time, monotonic time and waiting.
///
/// Every function in the core crates whose answer depends on time receives a `Clock` (or the instant
/// itself). Production code uses [`SystemClock`]; tests use [`ManualClock`], which they set and advance,
/// so a test walks through a DST day or a lease expiry in microseconds.
pub trait Clock: Send + Sync {
    /// The current wall-clock instant.
    fn now(&self) -> DateTime<Utc>;

    /// Time elapsed since an arbitrary, fixed origin, never going backwards. Use it to measure waits
    /// (a lock timeout), never to stamp records.
    fn monotonic(&self) -> Duration;

    /// Waits for `duration`. A [`ManualClock`] does not block: it advances both of its times instead.
    fn sleep(&self, duration: Duration);

    /// Waits until `signal` is given or this clock's [`Clock::monotonic`] time reaches `deadline`,
    /// whichever comes first; true when the signal was given (it is then taken, so the next wait waits
    /// again). A signal given before the call ends the wait at once. [`SystemClock`] waits on the
    /// operating system's clock; [`ManualClock`] blocks until the signal is given or the clock is moved
    /// (advanced, slept or set) to or past `deadline`, so a test decides when a wait times out.
    fn wait_until(&self, signal: &Signal, deadline: Duration) -> bool;
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> DateTime<Utc> {
        (**self).now()
    }
    fn monotonic(&self) -> Duration {
        (**self).monotonic()
    }
    fn sleep(&self, duration: Duration) {
        (**self).sleep(duration)
    }
    fn wait_until(&self, signal: &Signal, deadline: Duration) -> bool {
        (**self).wait_until(signal, deadline)
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> DateTime<Utc> {
        (**self).now()
    }
    fn monotonic(&self) -> Duration {
        (**self).monotonic()
    }
    fn sleep(&self, duration: Duration) {
        (**self).sleep(duration)
    }
    fn wait_until(&self, signal: &Signal, deadline: Duration) -> bool {
        (**self).wait_until(signal, deadline)
    }
}

/// A signal that one thread gives ([`Signal::notify`]) and another waits for through a clock
/// ([`Clock::wait_until`]). It is a flag, not a counter: several notifications before a wait end one
/// wait. Clones share the signal; [`Signal::downgrade`] gives a handle that does not keep it alive
/// (a registry of waiters holds those, so a wait that ended leaves nothing behind).
///
/// ```
/// use shiftwork_seams::{Clock, Signal, SystemClock};
/// use std::time::Duration;
/// let clock = SystemClock::new();
/// let signal = Signal::new();
/// assert!(!clock.wait_until(&signal, clock.monotonic() + Duration::from_millis(1)), "nobody gave it");
/// let giver = signal.downgrade();
/// std::thread::spawn(move || giver.notify());
/// assert!(clock.wait_until(&signal, clock.monotonic() + Duration::from_secs(10)), "given at once");
/// ```
#[derive(Clone, Default)]
pub struct Signal(Arc<SignalState>);

/// A handle on a [`Signal`] that does not keep it alive.
#[derive(Clone, Default)]
pub struct WeakSignal(Weak<SignalState>);

#[derive(Default)]
struct SignalState {
    given: Mutex<bool>,
    cv: Condvar,
    /// Told whenever the signal is given ([`Signal::on_give`]).
    hook: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
}

impl SignalState {
    fn lock(&self) -> MutexGuard<'_, bool> {
        // A flag behind a mutex cannot be left half-written by a panic.
        self.given.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn give(&self) {
        *self.lock() = true;
        self.cv.notify_all();
        let hook = self.hook.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(hook) = hook {
            hook();
        }
    }

    /// Wakes the waiter without giving the signal, so that it looks at its clock again. The lock is
    /// taken first: a waiter between its look at the clock and its sleep holds it, so the wake-up
    /// cannot fall between the two.
    fn nudge(&self) {
        drop(self.lock());
        self.cv.notify_all();
    }
}

impl std::fmt::Debug for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signal").field("given", &*self.0.lock()).finish()
    }
}

impl std::fmt::Debug for WeakSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeakSignal")
            .field("alive", &self.is_alive())
            .finish()
    }
}

impl Signal {
    /// A signal nobody has given yet.
    pub fn new() -> Self {
        Signal::default()
    }

    /// Gives the signal: the thread waiting for it wakes (or the next wait ends at once).
    pub fn notify(&self) {
        self.0.give();
    }

    /// A handle that gives this signal while it lives, without keeping it alive.
    pub fn downgrade(&self) -> WeakSignal {
        WeakSignal(Arc::downgrade(&self.0))
    }

    /// Calls `hook` whenever the signal is given from now on (at once if it is given already), on
    /// the giver's thread, without taking it: a waiter that holds no thread (an async task) is woken
    /// this way and then takes the signal. The hook must not block; the last one set counts.
    ///
    /// ```
    /// use shiftwork_seams::Signal;
    /// use std::sync::{Arc, atomic::{AtomicUsize, Ordering}};
    /// let signal = Signal::new();
    /// let told = Arc::new(AtomicUsize::new(0));
    /// let counter = Arc::clone(&told);
    /// signal.on_give(move || { counter.fetch_add(1, Ordering::SeqCst); });
    /// signal.downgrade().notify();
    /// assert_eq!(told.load(Ordering::SeqCst), 1);
    /// assert!(signal.take(), "the hook does not take the signal");
    /// ```
    pub fn on_give(&self, hook: impl Fn() + Send + Sync + 'static) {
        let hook: Arc<dyn Fn() + Send + Sync> = Arc::new(hook);
        *self.0.hook.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&hook));
        if *self.0.lock() {
            hook();
        }
    }

    /// Takes the signal if it was given; true when it was.
    pub fn take(&self) -> bool {
        std::mem::replace(&mut *self.0.lock(), false)
    }
}

impl WeakSignal {
    /// Gives the signal if it still lives; false when it is gone.
    pub fn notify(&self) -> bool {
        match self.0.upgrade() {
            Some(state) => {
                state.give();
                true
            }
            None => false,
        }
    }

    /// True while the signal lives.
    pub fn is_alive(&self) -> bool {
        self.0.strong_count() > 0
    }

    /// True when both handles name the same signal.
    pub fn same_as(&self, signal: &Signal) -> bool {
        std::ptr::eq(self.0.as_ptr(), Arc::as_ptr(&signal.0))
    }
}

/// The operating system's clock.
///
/// ```
/// use shiftwork_seams::{Clock, SystemClock};
/// let clock = SystemClock::new();
/// let before = clock.monotonic();
/// assert!(clock.now().timestamp() > 1_700_000_000);
/// assert!(clock.monotonic() >= before);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose monotonic origin is the moment of this call.
    pub fn new() -> Self {
        SystemClock {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
    fn monotonic(&self) -> Duration {
        self.origin.elapsed()
    }
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration)
    }
    fn wait_until(&self, signal: &Signal, deadline: Duration) -> bool {
        let state = &signal.0;
        let mut given = state.lock();
        loop {
            if std::mem::replace(&mut *given, false) {
                return true;
            }
            let left = deadline.saturating_sub(self.monotonic());
            if left.is_zero() {
                return false;
            }
            given = state
                .cv
                .wait_timeout(given, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }
}

/// A clock that tests set and advance. Clones share one time, so a test keeps a clone and moves the
/// time of the code under test. A wait on it ([`Clock::wait_until`]) blocks until its signal is given
/// or the test moves the clock to its deadline.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_seams::{Clock, ManualClock, Signal};
/// use std::time::Duration;
///
/// let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 29, 0, 59, 0).unwrap());
/// let seen_by_code = clock.clone();
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(seen_by_code.now(), Utc.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap());
/// seen_by_code.sleep(Duration::from_millis(5)); // returns at once, time moves on
/// assert_eq!(clock.monotonic(), Duration::from_millis(60_005));
///
/// // A wait of 100 ms on the manual clock ends when the test moves the clock past it.
/// let waiter = std::thread::spawn(move || {
///     let deadline = seen_by_code.monotonic() + Duration::from_millis(100);
///     seen_by_code.wait_until(&Signal::new(), deadline)
/// });
/// while clock.waiters() == 0 { std::thread::yield_now(); }
/// clock.advance(Duration::from_millis(100));
/// assert!(!waiter.join().unwrap(), "timed out on the manual clock");
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock {
    state: Arc<Mutex<ManualState>>,
}

#[derive(Debug)]
struct ManualState {
    now: DateTime<Utc>,
    monotonic: Duration,
    /// The signals of the waits in progress, woken whenever the time moves.
    waiting: Vec<WeakSignal>,
}

impl ManualClock {
    /// A clock that reads `start` until it is moved.
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock {
            state: Arc::new(Mutex::new(ManualState {
                now: start,
                monotonic: Duration::ZERO,
                waiting: Vec::new(),
            })),
        }
    }

    /// Sets the wall-clock time; the monotonic time is not changed (a wall clock may step back).
    /// Waits in progress look at the clock again.
    pub fn set(&self, now: DateTime<Utc>) {
        let waiting = self.with(|s| {
            s.now = now;
            s.waiting.clone()
        });
        nudge_all(&waiting);
    }

    /// Moves both the wall-clock and the monotonic time forward by `by`; a wait whose deadline is
    /// reached ends.
    pub fn advance(&self, by: Duration) {
        let waiting = self.with(|s| {
            s.monotonic = s.monotonic.saturating_add(by);
            s.now += chrono::TimeDelta::from_std(by).unwrap_or(chrono::TimeDelta::MAX);
            s.waiting.clone()
        });
        nudge_all(&waiting);
    }

    /// The number of waits ([`Clock::wait_until`]) in progress on this clock: a test moves the clock
    /// once the code under test waits.
    pub fn waiters(&self) -> usize {
        self.with(|s| {
            s.waiting.retain(WeakSignal::is_alive);
            s.waiting.len()
        })
    }

    fn with<R>(&self, f: impl FnOnce(&mut ManualState) -> R) -> R {
        // A panic while holding this lock cannot leave the plain values inconsistent.
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut guard)
    }
}

/// Wakes every waiter in `waiting` to look at the clock again (outside the clock's own lock: a waiter
/// holds its signal's lock while it reads the clock).
fn nudge_all(waiting: &[WeakSignal]) {
    for w in waiting {
        if let Some(state) = w.0.upgrade() {
            state.nudge();
        }
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        self.with(|s| s.now)
    }
    fn monotonic(&self) -> Duration {
        self.with(|s| s.monotonic)
    }
    fn sleep(&self, duration: Duration) {
        self.advance(duration)
    }
    fn wait_until(&self, signal: &Signal, deadline: Duration) -> bool {
        self.with(|s| {
            s.waiting.retain(WeakSignal::is_alive);
            s.waiting.push(signal.downgrade());
        });
        let state = &signal.0;
        let mut given = state.lock();
        let woken = loop {
            if std::mem::replace(&mut *given, false) {
                break true;
            }
            if self.monotonic() >= deadline {
                break false;
            }
            given = state.cv.wait(given).unwrap_or_else(PoisonError::into_inner);
        };
        drop(given);
        self.with(|s| {
            // This wait's entry only: another wait on the same signal keeps its own.
            if let Some(i) = s.waiting.iter().position(|w| w.same_as(signal)) {
                s.waiting.swap_remove(i);
            }
        });
        woken
    }
}
