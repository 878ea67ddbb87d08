//! Named points for the tests that stop a call at every step, compiled in only with the
//! `test-failpoints` feature (without it, every function here does nothing).
//!
//! - **Crash points** ([`POINTS`], [`arm`]): when the code reaches the armed point, the process kills
//!   itself with `SIGKILL`, exactly as if it had been killed from outside at that instant.
//! - **Pause points** ([`PAUSE_POINTS`], [`on_pause`]): the code calls the test's hook with the point's
//!   name and the call's [`Cancel`]; the hook may hold the call there (until its client goes away,
//!   say), so a test cancels a call at that very step.

use crate::wait::Cancel;

/// The named crash points.
pub const POINTS: [&str; 5] = [
    "after-claim-commit",
    "mid-hash",
    "after-u2-commit",
    "between-sweep-batches",
    "insert-before-commit",
];

/// The named pause points of a poll: before its claim, between the claim's commit and the check of
/// the contract's files, and between that check and the answer. A host adds its own after the poll
/// answered (the MCP adapter: `poll-answered`, before the transport sends the answer).
pub const PAUSE_POINTS: [&str; 3] = ["poll-before-claim", "poll-after-claim", "poll-after-verify"];

/// What a pause point calls: the point's name and the call's cancellation.
pub type PauseHook = Box<dyn Fn(&str, &Cancel) + Send + Sync>;

#[cfg(feature = "test-failpoints")]
static ARMED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

#[cfg(feature = "test-failpoints")]
static PAUSE: std::sync::Mutex<Option<std::sync::Arc<PauseHook>>> = std::sync::Mutex::new(None);

/// True when the points are compiled in (the `test-failpoints` feature).
pub const COMPILED: bool = cfg!(feature = "test-failpoints");

/// Arms `name`: the next time the code reaches it, the process dies.
pub fn arm(name: &str) {
    #[cfg(feature = "test-failpoints")]
    {
        *ARMED.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(name.to_owned());
    }
    #[cfg(not(feature = "test-failpoints"))]
    let _ = name;
}

/// Dies with `SIGKILL` when `name` is armed.
pub fn hit(name: &str) {
    #[cfg(feature = "test-failpoints")]
    {
        let armed = ARMED
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if armed.as_deref() == Some(name) {
            // SAFETY: sending a signal to our own pid has no memory-safety preconditions.
            unsafe {
                libc::kill(libc::getpid(), libc::SIGKILL);
            }
        }
    }
    #[cfg(not(feature = "test-failpoints"))]
    let _ = name;
}

/// Installs the hook every pause point calls (the last one installed counts).
pub fn on_pause(hook: PauseHook) {
    #[cfg(feature = "test-failpoints")]
    {
        *PAUSE.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(std::sync::Arc::new(hook));
    }
    #[cfg(not(feature = "test-failpoints"))]
    let _ = hook;
}

/// The pause point `name` of a call under `cancel`: calls the hook, if one is installed.
pub fn pause(name: &str, cancel: &Cancel) {
    #[cfg(feature = "test-failpoints")]
    {
        let hook = PAUSE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        if let Some(hook) = hook {
            hook(name, cancel);
        }
    }
    #[cfg(not(feature = "test-failpoints"))]
    let _ = (name, cancel);
}
