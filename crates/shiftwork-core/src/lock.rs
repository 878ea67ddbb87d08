//! The checkpoint lock: `<T>.lock`, a [`shiftwork_seams::lock_file`] holding the holder's pid,
//! host and (where the host can tell) process start time, polled every 5 ms for up to 5 s, broken only
//! when its holder is provably gone, released only by its own creator, and serialized
//! in process too. Compatible with 0.36.2's protocol: its first line is the holder's pid.
//!
//! The protocol — exclusive create, polling, the `.lock.break` file, release only of our own file —
//! is the seam's; this module holds the rules of shift work: what the lock says of its holder, when
//! its holder is gone, the crash recovery run before a stale lock is removed, and what a refusal says
//! of the holder that kept it.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use chrono::{DateTime, Utc};
use shiftwork_seams::lock_file::Acquired as Acquired_;
use shiftwork_seams::lock_file::{self, ExistingLock, HeldLock, LockFileOptions, LockSnapshot, Staleness};
use shiftwork_seams::{Metadata, Signal};

use crate::env::Env;
use crate::recovery;

/// How often a waiting acquisition tries again.
pub const POLL: Duration = Duration::from_millis(5);
/// How long an acquisition waits in all.
pub const WAIT: Duration = Duration::from_millis(5000);
/// The age past which a lock (or a break file) may be judged stale.
pub const STALE_AFTER: Duration = Duration::from_millis(30_000);

/// A held checkpoint lock. Release it with [`CheckpointLock::release`]; dropping it releases too.
pub struct CheckpointLock<'e> {
    env: &'e Env,
    target: PathBuf,
    file: Option<HeldLock<'e>>,
    /// The bytes written to the lock file: its identity lines and intent records.
    written: usize,
}

impl std::fmt::Debug for CheckpointLock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointLock")
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

/// The result of trying to take the lock.
#[derive(Debug)]
pub enum Acquired<'e> {
    /// The lock is held.
    Held(CheckpointLock<'e>),
    /// Another holder kept it for the whole wait.
    TimedOut(LockHolder),
    /// The lock file could not be created for a reason other than "exists" (the clock-out then goes only as far as 0.36.2 goes without a lock).
    Unavailable(io::Error),
}

/// Who kept a checkpoint lock for a whole wait, as far as its file tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    /// The lock file's path (`<T>.lock`, absolute).
    pub path: PathBuf,
    /// The holder's process id, when the lock's first line is one.
    pub pid: Option<u32>,
    /// The holder's host, when the lock names one (0.36.2's locks do not).
    pub host: Option<String>,
    /// When the lock file was last written, when it could be read.
    pub since: Option<DateTime<Utc>>,
}

impl LockHolder {
    fn of(path: PathBuf, seen: Option<&LockSnapshot>) -> LockHolder {
        let Some(seen) = seen else {
            return LockHolder {
                path,
                pid: None,
                host: None,
                since: None,
            };
        };
        let identity = Identity::read(&seen.contents);
        LockHolder {
            path,
            pid: identity.pid,
            host: identity.host.map(str::to_owned),
            since: Some(DateTime::<Utc>::from(seen.metadata.modified)),
        }
    }
}

/// What a lock file says of its holder: `<pid>\n`, then `host <name>\n` and `started <n>\n` (this
/// implementation's additions; 0.36.2 writes the pid only and never reads the file).
struct Identity<'c> {
    pid: Option<u32>,
    host: Option<&'c str>,
    started: Option<u64>,
}

impl<'c> Identity<'c> {
    fn read(contents: &'c [u8]) -> Identity<'c> {
        let text = std::str::from_utf8(contents).unwrap_or_else(|e| {
            // The identity lines come first; what follows an invalid byte is not read.
            std::str::from_utf8(&contents[..e.valid_up_to()]).unwrap_or("")
        });
        let mut lines = text.split('\n');
        let pid_line = lines.next().unwrap_or("");
        let pid = (!pid_line.is_empty() && pid_line.bytes().all(|b| b.is_ascii_digit()))
            .then(|| pid_line.parse::<u32>().ok())
            .flatten();
        let host = lines.next().and_then(|l| l.strip_prefix("host "));
        let started = host
            .and(lines.next())
            .and_then(|l| l.strip_prefix("started "))
            .and_then(|s| s.parse::<u64>().ok());
        Identity { pid, host, started }
    }
}

/// `<T>.lock`.
pub fn lock_path(target: &Path) -> PathBuf {
    lock_file::with_suffix(target, ".lock")
}

/// The identity lines this process writes into a lock it takes.
fn head(env: &Env) -> String {
    let pid = env.host.pid();
    let mut head = format!("{pid}\nhost {}\n", env.host.hostname());
    if let Some(started) = env.host.process_start(pid) {
        head.push_str(&format!("started {started}\n"));
    }
    head
}

/// Takes the lock of target `T`, waiting up to [`WAIT`] on the clock's monotonic time.
pub fn acquire<'e>(env: &'e Env, target: &Path) -> Acquired<'e> {
    let start = env.clock.monotonic();
    let deadline = start + WAIT;
    let path = lock_path(target);
    // Another call of this process that holds the lock wakes this one when it releases it; the
    // signal is watched before the first try, so a release in between is not missed.
    let released = Signal::new();
    env.locks.watch(target, &released);
    while !env.locks.try_take(target) {
        if env.clock.monotonic() >= deadline {
            // Held by another call of this process: its file (if it has made it yet) names this process.
            let seen = lock_file::look(env.fs.as_ref(), &path);
            return Acquired::TimedOut(LockHolder::of(path, seen.as_ref()));
        }
        env.clock.wait_until(&released, deadline);
    }
    drop(released);
    let staleness = CheckpointStaleness { env, target };
    let head = head(env);
    match lock_file::acquire(
        env.fs.as_ref(),
        env.clock.as_ref(),
        &path,
        head.as_bytes(),
        &options(),
        deadline,
        &staleness,
    ) {
        Acquired_::Held(file) => Acquired::Held(CheckpointLock {
            env,
            target: target.to_path_buf(),
            file: Some(file),
            written: head.len(),
        }),
        Acquired_::TimedOut(seen) => {
            env.locks.release(target);
            Acquired::TimedOut(LockHolder::of(path, seen.as_ref()))
        }
        Acquired_::Unavailable(e) => {
            env.locks.release(target);
            Acquired::Unavailable(e)
        }
    }
}

fn options() -> LockFileOptions {
    LockFileOptions {
        poll: POLL,
        wait: WAIT,
        break_after: STALE_AFTER,
        mode: 0o644,
    }
}

/// A lock is stale only when it is older than [`STALE_AFTER`], its host line is absent or
/// names this host, and its holder is gone: its first line is not a pid, no process has that pid, or
/// the lock records its holder's start time and the live process with that pid
/// started at another time — the pid was reused. A lock whose live holder's start time is unknown is
/// never stale.
struct CheckpointStaleness<'a> {
    env: &'a Env,
    target: &'a Path,
}

impl Staleness for CheckpointStaleness<'_> {
    fn may_be_stale(&self, metadata: &Metadata) -> bool {
        older_than(self.env, metadata.modified, STALE_AFTER)
    }

    fn is_stale(&self, lock: &ExistingLock<'_>) -> bool {
        let identity = Identity::read(lock.contents);
        if identity.host.is_some_and(|h| h != self.env.host.hostname()) {
            return false;
        }
        match identity.pid {
            Some(pid) if self.env.host.is_pid_alive(pid) => {
                match (identity.started, self.env.host.process_start(pid)) {
                    (Some(recorded), Some(now)) => recorded != now,
                    _ => false,
                }
            }
            _ => true,
        }
    }

    fn before_break(&self, lock: &ExistingLock<'_>) {
        recovery::recover(
            self.env.fs.as_ref(),
            self.target,
            &String::from_utf8_lossy(lock.contents),
        );
    }
}

fn older_than(env: &Env, modified: SystemTime, age: Duration) -> bool {
    let now: SystemTime = env.clock.now().into();
    now.duration_since(modified).is_ok_and(|d| d > age)
}

impl CheckpointLock<'_> {
    /// The lock file's path.
    pub fn path(&self) -> &Path {
        self.file.as_ref().map_or(Path::new(""), HeldLock::path)
    }

    /// Appends one intent line to the lock file and flushes it.
    pub fn add_intent(&mut self, line: &str) -> io::Result<()> {
        match self.file.as_mut() {
            Some(file) => {
                file.append_line(line.as_bytes())?;
                self.written += line.len() + 1;
                Ok(())
            }
            None => Err(io::Error::from_raw_os_error(9)),
        }
    }

    /// The bytes written to the lock file so far: its identity lines and intent records. A reader of
    /// the lock reads its first [`lock_file::MAX_LOCK_READ`] bytes.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Removes the lock file if it is still the one this holder created.
    pub fn release(mut self) {
        self.release_inner();
    }

    fn release_inner(&mut self) {
        if let Some(file) = self.file.take() {
            file.release();
            self.env.locks.release(&self.target);
        }
    }
}

impl Drop for CheckpointLock<'_> {
    fn drop(&mut self) {
        self.release_inner();
    }
}
