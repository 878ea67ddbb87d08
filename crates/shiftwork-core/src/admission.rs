//! Memory admission (beyond 0.36.2): a call that reads a checkpoint first reserves
//! the memory it will hold at its peak — a multiple of the checkpoint's size, measured — out of one
//! budget shared by the calls of an [`crate::Env`], and gives it back when done. When the budget cannot
//! take it, the call waits on the [`Clock`] (never longer than the budget's wait) and is then refused
//! ([`ShiftworkRefusal::MemoryBusy`]); a call that needs more than the whole budget is refused at once
//! ([`ShiftworkRefusal::MemoryTooLarge`]) rather than run alone, since running it could exhaust the machine.
//! So N concurrent calls never hold more than the budget, and a process that serves them never dies
//! of a failed allocation.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use shiftwork_seams::Clock;

use crate::refusal::ShiftworkRefusal;

/// How long a call waits for the budget to have room, by default.
pub const ADMISSION_WAIT: Duration = Duration::from_secs(30);

/// How often a waiting call looks again.
const POLL: Duration = Duration::from_millis(10);

/// The peak memory of each operation as a multiple of the checkpoint's size (bytes held at once, its
/// text included), from `benches/benches/shiftwork_memory.rs` with room for documents shaped worse
/// than its units: reading in place holds the text and a tape of at most three times it, and the
/// plan's graph and answer at most about twice the text of the smallest units.
pub mod factor {
    /// `shiftwork_status`: the text and its tape (measured 1.9).
    pub const STATUS: u64 = 4;
    /// `shiftwork_plan`: the text, its tape, the planner and the answer (measured 2.4).
    pub const PLAN: u64 = 6;
    /// `shiftwork_clock_in`: as the plan, and the brief (measured 2.8).
    pub const CLOCK_IN: u64 = 6;
    /// `shiftwork_clock_out`, before it reads: the text and its tape. Once read, it reserves what the
    /// document it changes will take built, and its new text (measured 8.2 in all).
    pub const CLOCK_OUT_READ: u64 = 4;
}

/// A budget of memory in bytes shared by the calls of one [`crate::Env`]: what the calls in flight
/// have reserved never exceeds it.
///
/// ```
/// use std::time::Duration;
/// use shiftwork_core::MemoryBudget;
/// let budget = MemoryBudget::new(1 << 30).with_wait(Duration::from_secs(5));
/// assert_eq!((budget.limit(), budget.reserved(), budget.wait()), (1 << 30, 0, Duration::from_secs(5)));
/// assert_eq!(MemoryBudget::unlimited().limit(), u64::MAX);
/// ```
#[derive(Debug)]
pub struct MemoryBudget {
    limit: u64,
    wait: Duration,
    reserved: Mutex<u64>,
}

impl Default for MemoryBudget {
    fn default() -> Self {
        MemoryBudget::unlimited()
    }
}

impl MemoryBudget {
    /// A budget of `limit` bytes; a call waits up to [`ADMISSION_WAIT`] for room.
    pub fn new(limit: u64) -> Self {
        MemoryBudget {
            limit,
            wait: ADMISSION_WAIT,
            reserved: Mutex::new(0),
        }
    }

    /// No budget: every call is admitted at once (the default of [`crate::Env::new`]).
    pub fn unlimited() -> Self {
        MemoryBudget::new(u64::MAX)
    }

    /// This budget, a call waiting up to `wait` for room before it is refused.
    #[must_use]
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The budget in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// How long a call waits for room.
    pub fn wait(&self) -> Duration {
        self.wait
    }

    /// The bytes the calls in flight hold reserved.
    pub fn reserved(&self) -> u64 {
        *self.reserved.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Reserves `bytes` for a call on a checkpoint of `size` bytes: at once when the budget has room,
    /// else after waiting on `clock`, polling, up to [`MemoryBudget::wait`]. Refused when it never had
    /// room, or at once when `bytes` is more than the whole budget.
    ///
    /// ```
    /// use shiftwork_core::{MemoryBudget, ShiftworkRefusal};
    /// use shiftwork_seams::ManualClock;
    /// let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH);
    /// let budget = MemoryBudget::new(1000);
    /// let held = budget.reserve(&clock, 600, 100).unwrap();
    /// // The budget stays taken for the whole wait (30 s on the manual clock, which sleeping moves).
    /// assert!(matches!(budget.reserve(&clock, 600, 100), Err(ShiftworkRefusal::MemoryBusy { .. })));
    /// drop(held);
    /// assert!(budget.reserve(&clock, 600, 100).is_ok());
    /// assert!(matches!(budget.reserve(&clock, 1001, 100), Err(ShiftworkRefusal::MemoryTooLarge { .. })));
    /// ```
    pub fn reserve<'b>(
        &'b self,
        clock: &dyn Clock,
        bytes: u64,
        size: u64,
    ) -> Result<Reservation<'b>, ShiftworkRefusal> {
        let mut reservation = Reservation {
            budget: self,
            bytes: 0,
        };
        reservation.ensure(clock, bytes, size)?;
        Ok(reservation)
    }

    /// Takes `bytes` if the budget has room for them now.
    fn try_take(&self, bytes: u64) -> bool {
        let mut reserved = self.reserved.lock().unwrap_or_else(PoisonError::into_inner);
        match reserved.checked_add(bytes) {
            Some(total) if total <= self.limit => {
                *reserved = total;
                true
            }
            _ => false,
        }
    }

    fn give_back(&self, bytes: u64) {
        let mut reserved = self.reserved.lock().unwrap_or_else(PoisonError::into_inner);
        *reserved = reserved.saturating_sub(bytes);
    }
}

/// Memory reserved out of a [`MemoryBudget`], given back when dropped.
#[derive(Debug)]
pub struct Reservation<'b> {
    budget: &'b MemoryBudget,
    bytes: u64,
}

impl Reservation<'_> {
    /// The bytes held.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Grows the reservation to at least `bytes` (for a call on a checkpoint of `size` bytes), waiting
    /// as [`MemoryBudget::reserve`] does. On a refusal the reservation is as it was.
    pub fn ensure(&mut self, clock: &dyn Clock, bytes: u64, size: u64) -> Result<(), ShiftworkRefusal> {
        let budget = self.budget;
        let Some(extra) = bytes.checked_sub(self.bytes).filter(|e| *e > 0) else {
            return Ok(());
        };
        if bytes > budget.limit {
            return Err(ShiftworkRefusal::MemoryTooLarge {
                size,
                needed: bytes,
                budget: budget.limit,
            });
        }
        let start = clock.monotonic();
        loop {
            if budget.try_take(extra) {
                self.bytes = bytes;
                return Ok(());
            }
            let waited = clock.monotonic().saturating_sub(start);
            if waited >= budget.wait {
                return Err(ShiftworkRefusal::MemoryBusy {
                    size,
                    needed: bytes,
                    budget: budget.limit,
                    waited,
                });
            }
            clock.sleep(POLL.min(budget.wait - waited));
        }
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.budget.give_back(self.bytes);
    }
}
