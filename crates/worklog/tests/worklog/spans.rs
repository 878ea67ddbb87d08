//! Issue 30 item 2: an append's lock wait and its durable write are `tracing` spans at info level
//! (`worklog.lock_wait`, `worklog.durable_write`), so a host's tracer shows where a slow append spent
//! its time; the crate emits no event (WL-3: spans are not logs).

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use shiftwork_seams::{MemFs, Op};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

use crate::support::{DIR, log, memfs_with};

/// What a [`Recorder`] saw: the spans opened (name, level), each enter and exit in order, and the
/// events emitted.
#[derive(Debug, Default)]
struct Seen {
    spans: Vec<(&'static str, Level)>,
    steps: Vec<String>,
    events: Vec<String>,
}

/// A subscriber that records everything and filters nothing.
struct Recorder(Arc<Mutex<Seen>>);

impl Recorder {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn step(&self, what: &str, id: &Id) {
        let mut seen = self.seen();
        let name = usize::try_from(id.into_u64() - 1)
            .ok()
            .and_then(|i| seen.spans.get(i))
            .map_or("?", |s| s.0);
        seen.steps.push(format!("{what} {name}"));
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut seen = self.seen();
        seen.spans
            .push((span.metadata().name(), *span.metadata().level()));
        Id::from_u64(seen.spans.len() as u64)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        self.seen().events.push(event.metadata().name().to_owned());
    }
    fn enter(&self, id: &Id) {
        self.step("enter", id);
    }
    fn exit(&self, id: &Id) {
        self.step("exit", id);
    }
}

/// Runs `call` under a recorder and checks the spans it opened, in order of entry, all at info level,
/// each exited before the next is entered, and no event.
fn check(what: &str, call: impl FnOnce(), expected: &[&str]) {
    let seen = Arc::new(Mutex::new(Seen::default()));
    tracing::subscriber::with_default(Recorder(Arc::clone(&seen)), call);
    let seen = seen.lock().unwrap();
    let names: Vec<&str> = seen.spans.iter().map(|s| s.0).collect();
    assert_eq!(names, expected, "{what}: spans");
    assert!(
        seen.spans.iter().all(|s| s.1 == Level::INFO),
        "{what}: {:?}",
        seen.spans
    );
    let steps: Vec<String> = expected
        .iter()
        .flat_map(|name| [format!("enter {name}"), format!("exit {name}")])
        .collect();
    assert_eq!(seen.steps, steps, "{what}: enter and exit");
    assert!(
        seen.events.is_empty(),
        "{what}: the crate logged {:?}",
        seen.events
    );
}

#[test]
fn issue30_the_lock_wait_and_the_durable_write_are_spans_and_nothing_is_logged() {
    const BOTH: &[&str] = &["worklog.lock_wait", "worklog.durable_write"];
    let fs = memfs_with(b"- [x] a\n");
    check(
        "written",
        || assert!(log(&fs).append("b", false).unwrap().written()),
        BOTH,
    );
    check(
        "duplicate",
        || assert!(!log(&fs).append("b", false).unwrap().written()),
        &["worklog.lock_wait"],
    );
    check(
        "dry run",
        || assert!(!log(&fs).append("c", true).unwrap().written()),
        &[],
    );
    check("check", || drop(log(&fs).check().unwrap()), &[]);
    check(
        "blank",
        || assert!(!log(&fs).append("  ", false).unwrap().written()),
        &[],
    );
    let nothing = MemFs::new();
    check(
        "no_dir",
        || assert!(!log(&nothing).append("c", false).unwrap().written()),
        &[],
    );

    // Refusals keep their spans: the wait that timed out, the write that failed.
    let fs = memfs_with(b"- [x] a\n");
    fs.lock_times_out(Path::new(DIR).join(shiftwork_worklog::LOCK_FILE_NAME));
    check(
        "lock timeout",
        || assert!(log(&fs).append("c", false).is_err()),
        &["worklog.lock_wait"],
    );
    let fs = memfs_with(b"- [x] a\n");
    fs.fail_nth(Op::Rename, 1, libc::ENOSPC);
    check(
        "failed write",
        || assert!(log(&fs).append("c", false).is_err()),
        BOTH,
    );
}
