//! `lock_file`: the lock-file protocol with the staleness rule passed in (issue 13 item 4).

use std::cell::Cell;
use std::path::Path;
use std::time::Duration;

use shiftwork_seams::lock_file::{self, Acquired, ExistingLock, LockFileOptions, Staleness};
use shiftwork_seams::{Clock, Host, ManualClock, MemFs, Metadata, OsHost};

struct Rule {
    stale: bool,
    looked: Cell<usize>,
    broken: Cell<usize>,
}

impl Staleness for Rule {
    fn may_be_stale(&self, _: &Metadata) -> bool {
        self.looked.set(self.looked.get() + 1);
        true
    }
    fn is_stale(&self, lock: &ExistingLock<'_>) -> bool {
        assert_eq!(lock.contents, b"old holder\n");
        self.stale
    }
    fn before_break(&self, lock: &ExistingLock<'_>) {
        assert_eq!(lock.contents, b"old holder\n");
        self.broken.set(self.broken.get() + 1);
    }
}

fn rule(stale: bool) -> Rule {
    Rule {
        stale,
        looked: Cell::new(0),
        broken: Cell::new(0),
    }
}

const PATH: &str = "/w/cp.json.lock";

fn setup() -> (MemFs, ManualClock) {
    let fs = MemFs::new();
    fs.make_dirs("/w");
    fs.write_file(PATH, b"old holder\n");
    (fs, ManualClock::new(chrono::DateTime::UNIX_EPOCH))
}

#[test]
fn the_callers_rule_alone_decides_whether_a_lock_is_broken() {
    let options = LockFileOptions::default();
    // Not stale: waited for until the deadline, then the holder is reported; the file stays.
    let (fs, clock) = setup();
    let alive = rule(false);
    let start = clock.monotonic();
    match lock_file::acquire(
        &fs,
        &clock,
        Path::new(PATH),
        b"me\n",
        &options,
        start + options.wait,
        &alive,
    ) {
        Acquired::TimedOut(Some(seen)) => assert_eq!(seen.contents, b"old holder\n"),
        other => panic!("{other:?}"),
    }
    assert!(clock.monotonic() - start >= options.wait);
    assert!(alive.looked.get() > 100);
    assert_eq!(
        (alive.broken.get(), fs.file(PATH).unwrap()),
        (0, b"old holder\n".to_vec())
    );
    // Stale: broken once, after the rule's recovery, under a break file that does not stay.
    let (fs, clock) = setup();
    let gone = rule(true);
    let Acquired::Held(held) = lock_file::acquire(
        &fs,
        &clock,
        Path::new(PATH),
        b"me\n",
        &options,
        clock.monotonic() + options.wait,
        &gone,
    ) else {
        panic!("a stale lock is broken");
    };
    assert_eq!(gone.broken.get(), 1);
    assert_eq!(fs.file(PATH).unwrap(), b"me\n");
    assert!(fs.file("/w/cp.json.lock.break").is_none());
    // A holder whose lock was broken and taken by another never removes the other's lock.
    shiftwork_seams::Fs::remove_file(&fs, Path::new(PATH)).unwrap();
    fs.write_file(PATH, b"another\n");
    held.release();
    assert_eq!(fs.file(PATH).unwrap(), b"another\n");
}

#[test]
fn a_break_file_left_by_a_dead_breaker_is_removed_once_old() {
    let (fs, clock) = setup();
    fs.write_file("/w/cp.json.lock.break", b"");
    fs.set_mtime("/w/cp.json.lock.break", clock.now().into());
    let options = LockFileOptions::default();
    let gone = rule(true);
    // While the break file is young, nobody breaks the lock.
    let start = clock.monotonic();
    assert!(matches!(
        lock_file::acquire(
            &fs,
            &clock,
            Path::new(PATH),
            b"me\n",
            &options,
            start + Duration::from_millis(50),
            &gone
        ),
        Acquired::TimedOut(_)
    ));
    assert_eq!(gone.broken.get(), 0);
    // Once it is older than `break_after`, it is removed and the next look breaks the lock.
    clock.advance(options.break_after + Duration::from_secs(1));
    assert!(matches!(
        lock_file::acquire(
            &fs,
            &clock,
            Path::new(PATH),
            b"me\n",
            &options,
            clock.monotonic() + options.wait,
            &gone
        ),
        Acquired::Held(_)
    ));
    assert_eq!(gone.broken.get(), 1);
}

/// Issue 12 item 13: the host tells a live process's start time, which differs between two processes
/// that used the same pid one after the other.
#[cfg(target_os = "linux")]
#[test]
fn os_host_tells_when_a_process_started() {
    let me = OsHost.process_start(OsHost.pid()).unwrap();
    let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
    std::thread::sleep(Duration::from_millis(30));
    let theirs = OsHost.process_start(child.id()).unwrap();
    assert!(theirs >= me);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(OsHost.process_start(child.id()), None);
}
