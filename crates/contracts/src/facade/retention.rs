//! The retention of finished contracts: the purge step and the thread that runs it in the background.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use shiftwork_seams::{Clock, Signal};

use crate::error::StoreError;
use crate::limits::{RETENTION_PURGE_BATCH, RETENTION_PURGE_PERIOD_SEC};
use crate::store::{Store, epoch_ms};

/// How long after the facade is built the first purge runs.
const FIRST_PURGE_AFTER: Duration = Duration::from_secs(1);

/// Deletes at most [`RETENTION_PURGE_BATCH`] finished contracts that ended more than `kept` before
/// the clock's now, in one transaction ([`Store::purge_terminal`]); the number deleted.
pub(super) fn step(store: &dyn Store, clock: &dyn Clock, kept: Duration) -> Result<u64, StoreError> {
    let kept_ms = i64::try_from(kept.as_millis()).unwrap_or(i64::MAX);
    let before = epoch_ms(clock).saturating_sub(kept_ms);
    store.purge_terminal(before, RETENTION_PURGE_BATCH)
}

/// The background purge of one facade: its thread, stopped and joined when the facade is dropped.
pub(super) struct Purger {
    stop: Signal,
    stopped: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Purger {
    /// Starts the thread: a purge a second after the start (a process that lives for one call never
    /// purges), then one every [`RETENTION_PURGE_PERIOD_SEC`] on `clock`,
    /// each running batches until one comes back short. `None` when no thread can be started (the
    /// host can still purge by hand).
    pub(super) fn start(store: Arc<dyn Store>, clock: Arc<dyn Clock>, kept: Duration) -> Option<Purger> {
        let stop = Signal::new();
        let stopped = Arc::new(AtomicBool::new(false));
        let (signal, flag) = (stop.clone(), stopped.clone());
        let thread = std::thread::Builder::new()
            .name(String::from("contracts-retention"))
            .spawn(move || {
                let period = Duration::from_secs(RETENTION_PURGE_PERIOD_SEC);
                if clock.wait_until(&signal, clock.monotonic().saturating_add(FIRST_PURGE_AFTER)) {
                    return;
                }
                loop {
                    // The period runs from the start of this round: a clock that moved while the
                    // round ran (a long purge, a test's clock) shortens the wait, never lengthens it,
                    // so a contract that aged past the retention during the round goes in the next.
                    let started = clock.monotonic();
                    while !flag.load(Ordering::SeqCst) {
                        match step(store.as_ref(), clock.as_ref(), kept) {
                            // A full batch: more may be left. The store's lock is free between two
                            // batches, and a claim waiting for it goes first.
                            Ok(n) if n >= RETENTION_PURGE_BATCH as u64 => std::thread::yield_now(),
                            Ok(_) => break,
                            // A store this process may not write: nothing to purge, ever.
                            Err(StoreError::ReadOnly { .. }) => return,
                            // Busy or unreachable: the next period tries again.
                            Err(_) => break,
                        }
                    }
                    if flag.load(Ordering::SeqCst)
                        || clock.wait_until(&signal, started.saturating_add(period))
                    {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Purger {
            stop,
            stopped,
            thread: Some(thread),
        })
    }
}

impl Drop for Purger {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
        self.stop.notify();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
