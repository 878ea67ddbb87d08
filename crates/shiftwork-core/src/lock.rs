//! The checkpoint lock (§13.1): `<T>.lock` created exclusively with the holder's pid and host,
//! polled every 5 ms for up to 5 s, broken only when its holder is provably dead on this host
//! (SW-101), released only by its own creator (SW-102). Compatible with 0.36.2's protocol.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use shiftwork_seams::{FileWriter, Metadata};

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
    path: PathBuf,
    writer: Option<Box<dyn FileWriter>>,
    identity: Option<Metadata>,
    /// Whether this value holds the target's in-process slot.
    in_process: bool,
}

impl std::fmt::Debug for CheckpointLock<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointLock")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The result of trying to take the lock.
#[derive(Debug)]
pub enum Acquired<'e> {
    /// The lock is held.
    Held(CheckpointLock<'e>),
    /// Another holder kept it for the whole wait; the lock file's path.
    TimedOut(PathBuf),
    /// The lock file could not be created for a reason other than "exists" (SW-100 last rule).
    Unavailable(io::Error),
}

/// `<T>.lock`.
pub fn lock_path(target: &Path) -> PathBuf {
    with_suffix(target, ".lock")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = OsString::from(path.as_os_str());
    s.push(suffix);
    PathBuf::from(s)
}

/// Takes the lock of target `T` (SW-100), waiting up to [`WAIT`] on the clock's monotonic time.
pub fn acquire<'e>(env: &'e Env, target: &Path) -> Acquired<'e> {
    let start = env.clock.monotonic();
    let path = lock_path(target);
    let expired = || env.clock.monotonic().saturating_sub(start) >= WAIT;
    while !env.locks.try_take(target) {
        if expired() {
            return Acquired::TimedOut(path);
        }
        env.clock.sleep(POLL);
    }
    let mut lock = CheckpointLock {
        env,
        target: target.to_path_buf(),
        path: path.clone(),
        writer: None,
        identity: None,
        in_process: true,
    };
    loop {
        match env.fs.create_new(&path, 0o644) {
            Ok(mut writer) => {
                let head = format!("{}\nhost {}\n", env.host.pid(), env.host.hostname());
                // The head needs no fsync: a lock file that lost it after a crash reads as a dead
                // holder's (SW-101 rule 3); the intent lines that recovery relies on are flushed.
                let written = writer.write_all(head.as_bytes());
                let identity = writer.metadata();
                match (written, identity) {
                    (Ok(()), Ok(identity)) => {
                        lock.writer = Some(writer);
                        lock.identity = Some(identity);
                        return Acquired::Held(lock);
                    }
                    (Err(e), _) | (_, Err(e)) => {
                        drop(writer);
                        let _ = env.fs.remove_file(&path);
                        return Acquired::Unavailable(e);
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                break_if_stale(env, target, &path);
                if expired() {
                    return Acquired::TimedOut(path);
                }
                env.clock.sleep(POLL);
            }
            Err(e) => return Acquired::Unavailable(e),
        }
    }
}

impl CheckpointLock<'_> {
    /// The lock file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one intent line (§13.3) to the lock file and flushes it.
    pub fn add_intent(&mut self, line: &str) -> io::Result<()> {
        let Some(writer) = self.writer.as_mut() else {
            return Err(io::Error::from_raw_os_error(libc_ebadf()));
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        writer.write_all(&bytes)?;
        writer.sync()
    }

    /// Removes the lock file if it is still the one this holder created (SW-102).
    pub fn release(mut self) {
        self.release_inner();
    }

    fn release_inner(&mut self) {
        if !self.in_process {
            return;
        }
        self.in_process = false;
        self.writer = None;
        if let Some(identity) = self.identity.take()
            && let Ok(now) = self.env.fs.symlink_metadata(&self.path)
            && now.same_file(&identity)
        {
            let _ = self.env.fs.remove_file(&self.path);
        }
        self.env.locks.release(&self.target);
    }
}

impl Drop for CheckpointLock<'_> {
    fn drop(&mut self) {
        self.release_inner();
    }
}

fn libc_ebadf() -> i32 {
    9
}

/// Breaks the lock at `path` when it is stale (SW-101), serialized through `<T>.lock.break`.
fn break_if_stale(env: &Env, target: &Path, path: &Path) {
    let Some((judged, contents)) = stale(env, path) else {
        return;
    };
    let break_path = with_suffix(path, ".break");
    let breaker = match env.fs.create_new(&break_path, 0o644) {
        Ok(w) => w,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            if let Ok(meta) = env.fs.symlink_metadata(&break_path)
                && older_than(env, meta.modified, STALE_AFTER)
            {
                let _ = env.fs.remove_file(&break_path);
            }
            return;
        }
        Err(_) => return,
    };
    drop(breaker);
    if let Ok(again) = env.fs.symlink_metadata(path)
        && again.same_file(&judged)
        && again.modified == judged.modified
    {
        recovery::recover(env.fs.as_ref(), target, &contents);
        let _ = env.fs.remove_file(path);
    }
    let _ = env.fs.remove_file(&break_path);
}

fn older_than(env: &Env, modified: SystemTime, age: Duration) -> bool {
    let now: SystemTime = env.clock.now().into();
    now.duration_since(modified).is_ok_and(|d| d > age)
}

/// The lock's metadata and contents when it is stale.
fn stale(env: &Env, path: &Path) -> Option<(Metadata, String)> {
    let meta = env.fs.symlink_metadata(path).ok()?;
    if !older_than(env, meta.modified, STALE_AFTER) {
        return None;
    }
    let bytes = env.fs.read(path).ok()?;
    let contents = String::from_utf8_lossy(&bytes).into_owned();
    let mut lines = contents.split('\n');
    let pid_line = lines.next().unwrap_or("");
    if let Some(host_line) = lines.next().filter(|l| l.starts_with("host "))
        && host_line["host ".len()..] != env.host.hostname()
    {
        return None;
    }
    let pid = (!pid_line.is_empty() && pid_line.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid_line.parse::<u32>().ok())
        .flatten();
    if let Some(pid) = pid
        && env.host.is_pid_alive(pid)
    {
        return None;
    }
    Some((meta, contents))
}
