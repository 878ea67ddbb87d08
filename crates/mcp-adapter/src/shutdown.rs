//! SIGTERM and SIGINT under `serve` (issue 16 item 5): the first lets the calls in flight finish and
//! exits 0, the whole shutdown — the calls in flight, then the last export of spans and metrics and
//! the log lines — within [`GRACE`]; a second exits at once.
//!
//! The signals are blocked in every thread ([`block_signals`], called before any thread starts, so all
//! inherit the mask) and taken by one thread with `sigwait`; no code runs in a signal handler. Child
//! processes do not inherit the mask: the standard library clears it when it spawns one.

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

/// Starts the thread that takes the signals for `session` (a [`Drain`]).
pub fn on_signals(session: impl Drain + Clone) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(String::from("shiftwork-mcp-signals"))
        .spawn(move || {
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
                let session = session.clone();
                let drain = std::thread::Builder::new().spawn(move || finish(&session, signal));
                if drain.is_err() {
                    // SAFETY: as above; without a thread to wait in, the process cannot wait.
                    unsafe { libc::_exit(128 + signal) };
                }
            }
        })
        .map(drop)
}

/// After the first signal: refuse new requests, let the calls in flight finish, exit 0.
fn finish(session: &impl Drain, signal: i32) {
    let name = if signal == libc::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    };
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
