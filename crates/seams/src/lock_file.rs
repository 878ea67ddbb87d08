//! Lock files: a lock that is a file created exclusively, beside [`Fs::lock`]'s advisory lock.
//!
//! Where a lock must be understood by programs that know nothing of `flock(2)` — a reference
//! implementation that takes `<target>.lock` by creating it, a holder on another host over a shared
//! filesystem — the lock is the existence of a file:
//!
//! * **acquire**: create the lock file exclusively and write the holder's identity into it (the
//!   caller's `head`); if it exists, poll every `poll` until the deadline on the [`Clock`]'s monotonic
//!   time;
//! * **staleness**: while waiting, the caller's [`Staleness`] rule looks at the lock (its metadata and
//!   the first [`MAX_LOCK_READ`] bytes) and decides whether its holder is gone; this module never
//!   decides that on its own;
//! * **breaking**: a stale lock is removed under a second file `<lock>.break`, created exclusively so
//!   that only one waiter breaks it; under it the lock is looked at again and removed only if it is
//!   still the file judged stale (same device, inode and modification time), after the rule's
//!   [`Staleness::before_break`] (a crash recovery) has run; a break file older than `break_after`
//!   is itself removed, so a breaker that died does not block the next;
//! * **release**: the holder removes the lock file only if it is still the one it created (same device
//!   and inode), so it never removes a lock another process took after breaking its own.
//!
//! The holder may append lines to its lock file ([`HeldLock::append_line`], each flushed), which is how
//! a writer leaves an intent record for the crash recovery of whoever breaks its lock.
//!
//! ```
//! use shiftwork_seams::lock_file::{self, Acquired, LockFileOptions, Staleness, ExistingLock};
//! use shiftwork_seams::{Clock, Fs, ManualClock, MemFs};
//! use std::path::Path;
//!
//! struct NeverStale;
//! impl Staleness for NeverStale {
//!     fn is_stale(&self, _: &ExistingLock<'_>) -> bool { false }
//! }
//! let fs = MemFs::new();
//! fs.make_dirs("/w");
//! let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH);
//! let options = LockFileOptions::default();
//! let path = Path::new("/w/cp.json.lock");
//! let deadline = clock.monotonic() + options.wait;
//! let Acquired::Held(mut held) = lock_file::acquire(&fs, &clock, path, b"42\n", &options, deadline, &NeverStale) else {
//!     panic!("the lock is free");
//! };
//! held.append_line(b"{\"intent\": 1}").unwrap();
//! assert_eq!(fs.file(path).unwrap(), b"42\n{\"intent\": 1}\n");
//! // A second taker waits until its deadline, then is told who holds the lock.
//! let deadline = clock.monotonic() + options.wait;
//! match lock_file::acquire(&fs, &clock, path, b"43\n", &options, deadline, &NeverStale) {
//!     Acquired::TimedOut(Some(holder)) => assert!(holder.contents.starts_with(b"42\n")),
//!     _ => panic!("the lock is held"),
//! }
//! held.release();
//! assert!(fs.file(path).is_none());
//! ```

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::clock::Clock;
use crate::fs::{FileWriter, Fs, Metadata};

/// The most bytes of an existing lock file read to judge it (its identity lines come first).
pub const MAX_LOCK_READ: usize = 64 * 1024;

/// How a lock file is waited for and created.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockFileOptions {
    /// How often a waiting acquisition tries again.
    pub poll: Duration,
    /// How long an acquisition waits in all, by default (callers pass their deadline).
    pub wait: Duration,
    /// The age past which a break file left behind by a dead breaker is removed.
    pub break_after: Duration,
    /// The permission bits of a new lock file (subject to the umask).
    pub mode: u32,
}

impl Default for LockFileOptions {
    /// 5 ms polls for 5 s, break files removed after 30 s, mode `0o644`.
    fn default() -> Self {
        LockFileOptions {
            poll: Duration::from_millis(5),
            wait: Duration::from_millis(5000),
            break_after: Duration::from_millis(30_000),
            mode: 0o644,
        }
    }
}

/// A lock file held by somebody else, as a waiter sees it.
#[derive(Debug, Clone, Copy)]
pub struct ExistingLock<'a> {
    /// The lock file's path.
    pub path: &'a Path,
    /// Its metadata (not following a symbolic link).
    pub metadata: &'a Metadata,
    /// Its first [`MAX_LOCK_READ`] bytes.
    pub contents: &'a [u8],
}

/// What the last look at a lock held by somebody else found: its metadata and its first
/// [`MAX_LOCK_READ`] bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSnapshot {
    /// Its metadata (the modification time says since when it was last written).
    pub metadata: Metadata,
    /// Its first bytes.
    pub contents: Vec<u8>,
}

/// The caller's rule for locks whose holder may be gone.
pub trait Staleness {
    /// Whether a lock with this metadata is worth reading to judge (for example: old enough to be
    /// stale). A lock that is not is judged alive without reading it. By default every lock is read.
    fn may_be_stale(&self, metadata: &Metadata) -> bool {
        let _ = metadata;
        true
    }

    /// Whether the lock may be broken: its holder is provably gone.
    fn is_stale(&self, lock: &ExistingLock<'_>) -> bool;

    /// Runs under the break file once the lock was judged stale and found unchanged, just before it is
    /// removed (for example, the recovery of the dead holder's unfinished write).
    fn before_break(&self, lock: &ExistingLock<'_>) {
        let _ = lock;
    }
}

/// The result of [`acquire`].
#[derive(Debug)]
pub enum Acquired<'f> {
    /// The lock is held.
    Held(HeldLock<'f>),
    /// Another holder kept it until the deadline; what the last look at its file found, if it could be
    /// read.
    TimedOut(Option<LockSnapshot>),
    /// The lock file could not be created for a reason other than "exists" (a read-only or missing
    /// directory).
    Unavailable(io::Error),
}

/// A held lock file. Dropping it releases it, as [`HeldLock::release`] does.
pub struct HeldLock<'f> {
    fs: &'f dyn Fs,
    path: PathBuf,
    writer: Option<Box<dyn FileWriter>>,
    identity: Option<Metadata>,
}

impl std::fmt::Debug for HeldLock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeldLock")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// `path` with `suffix` appended to its last component (`cp.json.lock` + `.break`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// Takes the lock file at `path`, writing `head` into it, waiting until `deadline` (the [`Clock`]'s
/// monotonic time) while another holds it, and breaking it when `staleness` says its holder is gone.
pub fn acquire<'f>(
    fs: &'f dyn Fs,
    clock: &dyn Clock,
    path: &Path,
    head: &[u8],
    options: &LockFileOptions,
    deadline: Duration,
    staleness: &dyn Staleness,
) -> Acquired<'f> {
    loop {
        match fs.create_new(path, options.mode) {
            Ok(mut writer) => {
                // The head needs no fsync: a lock file that lost it after a crash reads as a holder
                // that is not there, which the staleness rule judges; appended lines are flushed.
                let written = writer.write_all(head);
                let identity = writer.metadata();
                return match (written, identity) {
                    (Ok(()), Ok(identity)) => Acquired::Held(HeldLock {
                        fs,
                        path: path.to_path_buf(),
                        writer: Some(writer),
                        identity: Some(identity),
                    }),
                    (Err(e), _) | (_, Err(e)) => {
                        drop(writer);
                        let _ = fs.remove_file(path);
                        Acquired::Unavailable(e)
                    }
                };
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                if let Ok(metadata) = fs.symlink_metadata(path)
                    && staleness.may_be_stale(&metadata)
                    && let Some(contents) = read_head(fs, path)
                {
                    let lock = ExistingLock {
                        path,
                        metadata: &metadata,
                        contents: &contents,
                    };
                    if staleness.is_stale(&lock) {
                        break_lock(fs, clock, &lock, options, staleness);
                    }
                }
                if clock.monotonic() >= deadline {
                    return Acquired::TimedOut(look(fs, path));
                }
                clock.sleep(options.poll);
            }
            Err(e) => return Acquired::Unavailable(e),
        }
    }
}

/// The lock file's metadata and its first [`MAX_LOCK_READ`] bytes, when it exists and can be read:
/// what a caller that cannot have a lock tells of its holder.
pub fn look(fs: &dyn Fs, path: &Path) -> Option<LockSnapshot> {
    let metadata = fs.symlink_metadata(path).ok()?;
    let contents = read_head(fs, path)?;
    Some(LockSnapshot { metadata, contents })
}

/// The first [`MAX_LOCK_READ`] bytes of the lock file.
fn read_head(fs: &dyn Fs, path: &Path) -> Option<Vec<u8>> {
    let mut contents = Vec::new();
    let read = fs.read_chunks(path, 8192, &mut |chunk| {
        let room = MAX_LOCK_READ - contents.len();
        contents.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if contents.len() == MAX_LOCK_READ {
            // Enough to judge: stop reading.
            return Err(io::Error::other("lock file read bound"));
        }
        Ok(())
    });
    (read.is_ok() || contents.len() == MAX_LOCK_READ).then_some(contents)
}

fn older_than(clock: &dyn Clock, modified: SystemTime, age: Duration) -> bool {
    let now: SystemTime = clock.now().into();
    now.duration_since(modified).is_ok_and(|d| d > age)
}

/// Removes the stale lock under `<lock>.break` if it is still the file judged stale.
fn break_lock(
    fs: &dyn Fs,
    clock: &dyn Clock,
    judged: &ExistingLock<'_>,
    options: &LockFileOptions,
    staleness: &dyn Staleness,
) {
    let break_path = with_suffix(judged.path, ".break");
    let breaker = match fs.create_new(&break_path, options.mode) {
        Ok(w) => w,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if let Ok(meta) = fs.symlink_metadata(&break_path)
                && older_than(clock, meta.modified, options.break_after)
            {
                let _ = fs.remove_file(&break_path);
            }
            return;
        }
        Err(_) => return,
    };
    drop(breaker);
    if let Ok(again) = fs.symlink_metadata(judged.path)
        && again.same_file(judged.metadata)
        && again.modified == judged.metadata.modified
    {
        staleness.before_break(judged);
        let _ = fs.remove_file(judged.path);
    }
    let _ = fs.remove_file(&break_path);
}

impl HeldLock<'_> {
    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line` and a `\n` to the lock file in one write, and flushes it.
    pub fn append_line(&mut self, line: &[u8]) -> io::Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Err(io::Error::from_raw_os_error(libc::EBADF));
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        writer.write_all(&bytes)?;
        writer.sync()
    }

    /// Removes the lock file if it is still the one this holder created.
    pub fn release(mut self) {
        self.release_inner();
    }

    fn release_inner(&mut self) {
        self.writer = None;
        if let Some(identity) = self.identity.take()
            && let Ok(now) = self.fs.symlink_metadata(&self.path)
            && now.same_file(&identity)
        {
            let _ = self.fs.remove_file(&self.path);
        }
    }
}

impl Drop for HeldLock<'_> {
    fn drop(&mut self) {
        self.release_inner();
    }
}
