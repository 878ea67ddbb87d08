//! The seams an operation runs over, and the in-process side of the checkpoint lock.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use shiftwork_seams::{Clock, Fs, Host, Signal, WeakSignal};

use crate::admission::{MemoryBudget, Reservation};

/// The relay probes' timeout, which is also the budget of one clock-in: all its relay probes
/// together get this long. A probe is given what is left of it, and a relay reached
/// when nothing is left counts as timed out without running. (A probe killed at its deadline may take
/// [`shiftwork_seams::PROBE_KILL_GRACE`] more to end.)
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(30);

/// What every shift-work operation runs over: the filesystem, the clock, the host (pid, host name,
/// liveness, probes), whether relay probes may run, and the in-process table of held checkpoint locks.
///
/// Relay probes are off unless switched on with [`Env::with_probes`]: a probe is a shell command
/// taken from the checkpoint, which any client that can clock out can write, and it runs with this
/// process's environment and rights. Off, relay questions escalate like decision questions.
///
/// Share one `Env` between the calls of a process (an `Arc<Env>`), so calls on the same checkpoint
/// are serialized in process as well as between processes.
///
/// ```
/// use shiftwork_seams::{MemFs, ManualClock, MemHost};
/// use std::sync::Arc;
/// let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH);
/// let env = shiftwork_core::Env::new(Arc::new(MemFs::new()), Arc::new(clock), Arc::new(MemHost::new(7, "h")));
/// assert!(!env.probes);
/// assert!(env.with_probes(true).probes);
/// ```
pub struct Env {
    /// Files.
    pub fs: Arc<dyn Fs>,
    /// Time.
    pub clock: Arc<dyn Clock>,
    /// Process identity, liveness and probes.
    pub host: Arc<dyn Host>,
    /// Whether relay probes run; when false (the default), relays count as decision questions.
    pub probes: bool,
    /// How long the relay probes of one clock-in may run together.
    pub probe_timeout: Duration,
    /// The memory the calls over this environment may hold at once: unlimited unless
    /// set with [`Env::with_memory_budget`].
    pub memory: MemoryBudget,
    /// The directories the calls may open files in, when confined ([`Env::with_roots`]).
    pub(crate) roots: Option<crate::roots::Roots>,
    pub(crate) locks: LockTable,
}

impl std::fmt::Debug for Env {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Env")
            .field("probes", &self.probes)
            .field("memory", &self.memory)
            .field("roots", &self.roots.as_ref().map(crate::roots::Roots::resolved))
            .finish_non_exhaustive()
    }
}

impl Env {
    /// An environment with probes off and a fresh in-process lock table. The filesystem takes its
    /// files' times from `clock` ([`Fs::use_clock`]: an in-memory one does, a real one has the
    /// operating system's), so a lock's age and the time its holder wrote it read one clock.
    pub fn new(fs: Arc<dyn Fs>, clock: Arc<dyn Clock>, host: Arc<dyn Host>) -> Self {
        fs.use_clock(Arc::clone(&clock));
        Env {
            fs,
            clock,
            host,
            probes: false,
            probe_timeout: PROBE_TIMEOUT,
            memory: MemoryBudget::unlimited(),
            roots: None,
            locks: LockTable::default(),
        }
    }

    /// The real seams: [`shiftwork_seams::OsFs`], [`shiftwork_seams::SystemClock`], [`shiftwork_seams::OsHost`].
    pub fn os() -> Self {
        Env::new(
            Arc::new(shiftwork_seams::OsFs),
            Arc::new(shiftwork_seams::SystemClock::new()),
            Arc::new(shiftwork_seams::OsHost),
        )
    }

    /// This environment with relay probes switched on or off.
    pub fn with_probes(mut self, on: bool) -> Self {
        self.probes = on;
        self
    }

    /// This environment with a memory budget: a call that reads a checkpoint first reserves its peak
    /// out of it, waits (on this environment's clock) while it has no room, and is refused when it
    /// never has ([`crate::admission`]).
    pub fn with_memory_budget(mut self, budget: MemoryBudget) -> Self {
        self.memory = budget;
        self
    }

    /// This environment confined to `roots`: every path a call opens — the checkpoint, its ledger and
    /// lock file, the archive a status searches, a clock-out's follow-up briefs, a new checkpoint —
    /// must resolve, symbolic links followed, inside one of them, or the call is refused
    /// ([`crate::ShiftworkRefusal::OutsideRoots`]) before it opens any file. Each root is resolved
    /// through its links once, now. A server whose callers are not the machine's own user (a remote
    /// agent) sets them; without roots a call opens the paths it is given.
    ///
    /// ```
    /// use std::path::{Path, PathBuf};
    /// use std::sync::Arc;
    /// use shiftwork_core::{Confined, Env, ShiftworkRefusal};
    /// use shiftwork_seams::{ManualClock, MemFs, MemHost};
    ///
    /// let fs = MemFs::new();
    /// fs.write_file("/srv/jobs/a/.shiftwork/cp.json", b"{}");
    /// fs.write_file("/etc/cp.json", b"{}");
    /// fs.symlink("/etc/cp.json", "/srv/jobs/a/.shiftwork/link.json");
    /// let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH);
    /// let env = Env::new(Arc::new(fs), Arc::new(clock), Arc::new(MemHost::new(1, "h")))
    ///     .with_roots([PathBuf::from("/srv/jobs")]);
    /// for outside in ["/etc/cp.json", "/srv/jobs/a/.shiftwork/link.json", "/srv/jobs/../../etc/cp.json"] {
    ///     let refused = shiftwork_core::status(&env, Path::new(outside), None).unwrap_err();
    ///     assert!(matches!(refused, ShiftworkRefusal::OutsideRoots { what: Confined::Checkpoint, .. }), "{refused}");
    /// }
    /// // Inside the roots the call goes on (and refuses this file for what it is).
    /// let inside = shiftwork_core::status(&env, Path::new("/srv/jobs/a/.shiftwork/cp.json"), None).unwrap_err();
    /// assert_eq!(inside.code(), "CHECKPOINT_INVALID");
    /// ```
    pub fn with_roots(mut self, roots: impl IntoIterator<Item = PathBuf>) -> Self {
        self.roots = Some(crate::roots::Roots::new(self.fs.as_ref(), roots));
        self
    }

    /// Refuses `checkpoint` as every call on it is refused when the environment is confined and the
    /// checkpoint, its ledger or its lock files resolve, links followed, outside the roots
    /// ([`crate::ShiftworkRefusal::OutsideRoots`]); `Ok` when they all lie inside, or when the
    /// environment is not confined. A reader that opens a checkpoint without calling an operation (a
    /// view of the job) asks this first, so that it reads no file the tools would not.
    ///
    /// ```
    /// use std::path::{Path, PathBuf};
    /// use std::sync::Arc;
    /// use shiftwork_core::Env;
    /// use shiftwork_seams::{ManualClock, MemFs, MemHost};
    /// let fs = MemFs::new();
    /// fs.write_file("/srv/jobs/a/cp.json", b"{}");
    /// let clock = ManualClock::new(chrono::DateTime::UNIX_EPOCH);
    /// let env = Env::new(Arc::new(fs), Arc::new(clock), Arc::new(MemHost::new(1, "h")))
    ///     .with_roots([PathBuf::from("/srv/jobs")]);
    /// assert!(env.confine_checkpoint(Path::new("/srv/jobs/a/cp.json")).is_ok());
    /// assert_eq!(env.confine_checkpoint(Path::new("/etc/cp.json")).unwrap_err().code(), "OUTSIDE_ROOTS");
    /// ```
    pub fn confine_checkpoint(&self, checkpoint: &Path) -> Result<(), crate::ShiftworkRefusal> {
        self.confine(&crate::paths::CheckpointPaths::new(checkpoint), &[])
    }

    /// Refuses the call when the environment is confined and one of the files every call on `paths`
    /// opens (the checkpoint, its ledger, its lock files) or one of `more` (with the name the refusal
    /// gives it) resolves outside the roots.
    pub(crate) fn confine(
        &self,
        paths: &crate::paths::CheckpointPaths,
        more: &[(crate::roots::Confined, &Path, &str)],
    ) -> Result<(), crate::ShiftworkRefusal> {
        let Some(roots) = &self.roots else {
            return Ok(());
        };
        let files = crate::roots::checkpoint_files(self.fs.as_ref(), paths);
        let mut checks: Vec<(crate::roots::Confined, &Path, &str)> = files
            .iter()
            .map(|(what, path)| (*what, path.as_path(), paths.shown.as_str()))
            .collect();
        checks.extend_from_slice(more);
        roots.check(self.fs.as_ref(), paths, &checks)
    }

    /// Reads the checkpoint at `paths` in place, having reserved `factor` times its size out of the
    /// memory budget first (and again for the size read, should the file have grown). A file that
    /// cannot be looked at, or that is past what the reader reads, reserves nothing: the read refuses
    /// it without holding it.
    pub(crate) fn read_admitted(
        &self,
        paths: &crate::paths::CheckpointPaths,
        factor: u64,
    ) -> Result<(crate::checkpoint::Placed, Reservation<'_>), crate::ShiftworkRefusal> {
        let max = crate::checkpoint::MAX_CHECKPOINT_BYTES;
        let size = self.fs.metadata(&paths.given).map_or(0, |m| m.len);
        let bytes = if size > max {
            0
        } else {
            size.saturating_mul(factor)
        };
        let mut held = self.memory.reserve(self.clock.as_ref(), bytes, size)?;
        let placed = {
            let _read = tracing::info_span!("shiftwork.checkpoint_read").entered();
            crate::checkpoint::read_in_place(self.fs.as_ref(), paths)?
        };
        let read = placed.tape().text().len() as u64;
        held.ensure(self.clock.as_ref(), read.saturating_mul(factor), read)?;
        Ok((placed, held))
    }
}

/// The checkpoint locks calls of this process hold, and the calls waiting for one: a release wakes
/// its waiters through their [`Signal`]s, so a waiting call waits on the clock
/// ([`shiftwork_seams::Clock::wait_until`]) instead of sleeping in steps, and two calls on one
/// `ManualClock` wait for each other as on a real clock without moving it.
#[derive(Debug, Default)]
pub(crate) struct LockTable {
    held: Mutex<HashSet<PathBuf>>,
    waiters: Mutex<Vec<(PathBuf, WeakSignal)>>,
}

impl LockTable {
    /// Takes `target` if no call of this process holds it.
    pub(crate) fn try_take(&self, target: &Path) -> bool {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(target.to_path_buf())
    }

    /// Wakes `signal` when `target` is next released (until the signal is dropped).
    pub(crate) fn watch(&self, target: &Path, signal: &Signal) {
        let mut waiters = self.waiters.lock().unwrap_or_else(PoisonError::into_inner);
        waiters.retain(|(_, w)| w.is_alive());
        waiters.push((target.to_path_buf(), signal.downgrade()));
    }

    pub(crate) fn release(&self, target: &Path) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(target);
        let mut waiters = self.waiters.lock().unwrap_or_else(PoisonError::into_inner);
        waiters.retain(|(path, w)| if path == target { w.notify() } else { w.is_alive() });
    }
}
