//! Named crash points for the kill tests, compiled only with the `test-failpoints` feature.
//!
//! A test child arms one point by name; when the code reaches it, the process kills itself with
//! `SIGKILL`, exactly as if it had been killed from outside at that instant.

use std::sync::Mutex;

static ARMED: Mutex<Option<String>> = Mutex::new(None);

/// The named points.
pub const POINTS: [&str; 5] = [
    "after-claim-commit",
    "mid-hash",
    "after-u2-commit",
    "between-sweep-batches",
    "insert-before-commit",
];

/// Arms `name`: the next time the code reaches it, the process dies.
pub fn arm(name: &str) {
    *ARMED.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(name.to_owned());
}

/// Dies with `SIGKILL` when `name` is armed.
pub fn hit(name: &str) {
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
