//! The `Clock` seam: the only way a core crate learns what time it is, and the only way it waits.

use std::sync::{Arc, Mutex, PoisonError};
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
}

/// A clock that tests set and advance. Clones share one time, so a test keeps a clone and moves the
/// time of the code under test.
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use shiftwork_seams::{Clock, ManualClock};
/// use std::time::Duration;
///
/// let clock = ManualClock::new(Utc.with_ymd_and_hms(2026, 3, 29, 0, 59, 0).unwrap());
/// let seen_by_code = clock.clone();
/// clock.advance(Duration::from_secs(60));
/// assert_eq!(seen_by_code.now(), Utc.with_ymd_and_hms(2026, 3, 29, 1, 0, 0).unwrap());
/// seen_by_code.sleep(Duration::from_millis(5)); // returns at once, time moves on
/// assert_eq!(clock.monotonic(), Duration::from_millis(60_005));
/// ```
#[derive(Debug, Clone)]
pub struct ManualClock {
    state: Arc<Mutex<ManualState>>,
}

#[derive(Debug)]
struct ManualState {
    now: DateTime<Utc>,
    monotonic: Duration,
}

impl ManualClock {
    /// A clock that reads `start` until it is moved.
    pub fn new(start: DateTime<Utc>) -> Self {
        ManualClock {
            state: Arc::new(Mutex::new(ManualState {
                now: start,
                monotonic: Duration::ZERO,
            })),
        }
    }

    /// Sets the wall-clock time; the monotonic time is not changed (a wall clock may step back).
    pub fn set(&self, now: DateTime<Utc>) {
        self.with(|s| s.now = now);
    }

    /// Moves both the wall-clock and the monotonic time forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.with(|s| {
            s.monotonic += by;
            s.now += chrono::TimeDelta::from_std(by).unwrap_or(chrono::TimeDelta::MAX);
        });
    }

    fn with<R>(&self, f: impl FnOnce(&mut ManualState) -> R) -> R {
        // A panic while holding this lock cannot leave the two plain values inconsistent.
        let mut guard = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut guard)
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
}
