//! SIGTERM and SIGINT under `serve`: the first lets the calls in flight finish and exits 0, the
//! whole shutdown — the calls in flight, then the last export of spans and metrics and the log
//! lines — within [`GRACE`]; a second exits at once.
//!
//! The signals are blocked in every thread and taken by one thread with `sigwait`; no code runs in a
//! signal handler. [`Signals::take`] blocks them and starts that thread at once, before `serve` reads
//! a file or binds a port, so a signal ends start-up at any step (a certificate named as a FIFO, a key
//! set that does not answer): until the server is ready to drain ([`Signals::drain`]), the first
//! signal exits 0 at once, since nothing is in flight. Child processes do not inherit the mask: the
//! standard library clears it when it spawns one.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use crate::stdio::Session;

/// How long the whole shutdown may take after the first signal: the process has exited by then.
pub const GRACE: Duration = Duration::from_secs(10);

/// The part of [`GRACE`] kept for the last export of spans and metrics and the log's last lines,
/// whatever the calls in flight took: the calls in flight get the rest.
pub const FLUSH_SHARE: Duration = Duration::from_secs(1);

/// The part of [`FLUSH_SHARE`] (and of whatever the exporters leave) kept for the log's last lines.
const LOG_SHARE: Duration = Duration::from_millis(200);

/// A server the first signal drains: the stdio [`Session`] or the HTTP server's handle.
pub trait Drain: Send + Sync + 'static {
    /// Stops taking work and tells the calls in flight to end what they wait for.
    fn stop(&self);
    /// Waits up to `timeout` until nothing is in flight; true when nothing is.
    fn wait_idle(&self, timeout: Duration) -> bool;
    /// What is still in flight.
    fn in_flight(&self) -> usize;
}

impl Drain for Session {
    fn stop(&self) {
        Session::stop(self);
    }
    fn wait_idle(&self, timeout: Duration) -> bool {
        Session::wait_idle(self, timeout)
    }
    fn in_flight(&self) -> usize {
        Session::in_flight(self)
    }
}

fn stop_signals() -> libc::sigset_t {
    // SAFETY: `sigemptyset` initialises the set before `sigaddset` reads it; both only write the
    // local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGINT);
        set
    }
}

/// Blocks SIGTERM and SIGINT in the calling thread and every thread it starts from now on. Call it
/// before any other thread starts; false when the system refused.
pub fn block_signals() -> bool {
    let set = stop_signals();
    // SAFETY: `set` is an initialised signal set; the old mask is not asked for.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) == 0 }
}

/// The thread that takes SIGTERM and SIGINT, running from the start of `serve`.
pub struct Signals {
    drain: Arc<OnceLock<Arc<dyn Drain>>>,
}

impl Signals {
    /// Blocks the signals ([`block_signals`]; call it before any other thread starts) and starts the
    /// thread that takes them. Until [`Signals::drain`] is called, the first signal exits the process
    /// with status 0 at once; afterwards it drains. `None` when the system refused either step: the
    /// signals then keep their default action and end the process at once whenever they come.
    pub fn take() -> Option<Signals> {
        if !block_signals() {
            return None;
        }
        let drain: Arc<OnceLock<Arc<dyn Drain>>> = Arc::new(OnceLock::new());
        let seen = Arc::clone(&drain);
        let started = std::thread::Builder::new()
            .name(String::from("shiftwork-mcp-signals"))
            .spawn(move || take_signals(&seen));
        match started {
            Ok(_) => Some(Signals { drain }),
            Err(e) => {
                // Without the thread nobody would take the signals: give them back their default.
                let set = stop_signals();
                // SAFETY: `set` is an initialised signal set.
                unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
                tracing::warn!("SIGTERM and SIGINT will end the server at once: {e}");
                None
            }
        }
    }

    /// From now on the first signal drains `session` (stops it taking work, lets what is in flight
    /// finish for at most [`GRACE`], exits 0).
    pub fn drain(&self, session: impl Drain) {
        let _ = self.drain.set(Arc::new(session));
    }
}

/// The loop of the signal thread.
fn take_signals(drain: &OnceLock<Arc<dyn Drain>>) {
    let set = stop_signals();
    let mut first = true;
    loop {
        let mut signal = 0;
        // SAFETY: `set` is initialised and `signal` is a valid place for the number.
        if unsafe { libc::sigwait(&set, &mut signal) } != 0 {
            continue;
        }
        if !first {
            // SAFETY: `_exit` ends the process at once, as a second signal asks.
            unsafe { libc::_exit(128 + signal) };
        }
        first = false;
        let Some(session) = drain.get().cloned() else {
            tracing::info!("{}: stopping during start-up", signal_name(signal));
            crate::log::flush(Duration::from_millis(200));
            // SAFETY: `_exit` ends the process at once; start-up has nothing in flight to finish.
            unsafe { libc::_exit(0) };
        };
        let drained = std::thread::Builder::new().spawn(move || finish(session.as_ref(), signal));
        if drained.is_err() {
            // SAFETY: as above; without a thread to wait in, the process cannot wait.
            unsafe { libc::_exit(128 + signal) };
        }
    }
}

fn signal_name(signal: i32) -> &'static str {
    if signal == libc::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    }
}

/// After the first signal: refuse new requests, let the calls in flight finish, exit 0.
fn finish(session: &dyn Drain, signal: i32) {
    let name = signal_name(signal);
    let deadline = Instant::now() + GRACE;
    tracing::info!("{name}: finishing the calls in flight, then exiting");
    session.stop();
    if !session.wait_idle(GRACE.saturating_sub(FLUSH_SHARE)) {
        tracing::warn!(
            "{name}: {} call(s) still running after {} s; exiting without their answers",
            session.in_flight(),
            GRACE.saturating_sub(FLUSH_SHARE).as_secs()
        );
    }
    // A collector that never answers holds the exit no longer than the grace left.
    let left = || deadline.saturating_duration_since(Instant::now());
    crate::telemetry::shutdown(left().saturating_sub(LOG_SHARE));
    crate::log::flush(left().min(LOG_SHARE));
    std::process::exit(0);
}
