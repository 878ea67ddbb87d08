//! Confinement to roots: an [`crate::Env`] built [`crate::Env::with_roots`] opens no file outside a set
//! of directories. A server whose callers name paths on its machine (a remote agent over HTTP) sets
//! them, so that a `checkpoint` argument cannot read or write the server's other files.
//!
//! Every path a call would open — the checkpoint, its ledger, its lock file, the archive a status
//! searches, the follow-up briefs a clock-out looks at, a new checkpoint's directory — must resolve,
//! every symbolic link followed ([`shiftwork_seams::path::realpath`]), to inside one of the roots (or
//! to a root itself). The check runs before the call opens any file, and the refusal
//! ([`crate::ShiftworkRefusal::OutsideRoots`]) names the path as given and the rule, never where it
//! leads.

use std::path::{Path, PathBuf};

use shiftwork_seams::Fs;

use crate::paths::CheckpointPaths;
use crate::refusal::ShiftworkRefusal;

/// Which path of a call lies outside the roots ([`ShiftworkRefusal::OutsideRoots`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Confined {
    /// The checkpoint itself.
    Checkpoint,
    /// Its ledger, `<checkpoint>.log.jsonl`.
    Ledger,
    /// Its lock file, `<checkpoint>.lock`, or the lock's break file.
    Lock,
    /// The archive a status search reads.
    Archive,
    /// A follow-up's brief, below the repository root.
    Brief,
}

impl Confined {
    /// `the checkpoint 'x'`, `the ledger of the checkpoint 'x'`, …
    pub(crate) fn describe(self, path: &str) -> String {
        let quoted = crate::json::python_string_literal(&shiftwork_seams::echo::clip_echo(path));
        match self {
            Confined::Checkpoint => format!("the checkpoint {quoted}"),
            Confined::Ledger => format!("the ledger of the checkpoint {quoted}"),
            Confined::Lock => format!("the lock file of the checkpoint {quoted}"),
            Confined::Archive => format!("the archive of the checkpoint {quoted}"),
            Confined::Brief => format!("the follow-up brief {quoted}"),
        }
    }
}

/// The roots of a confined environment, each resolved once when set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Roots {
    resolved: Vec<PathBuf>,
}

impl Roots {
    /// `roots`, each made absolute against the working directory and resolved through its links (a
    /// root that cannot be resolved — a link loop — is kept as given, made absolute).
    pub(crate) fn new(fs: &dyn Fs, roots: impl IntoIterator<Item = PathBuf>) -> Roots {
        let cwd = fs
            .canonicalize(Path::new("."))
            .unwrap_or_else(|_| PathBuf::from("/"));
        let resolved = roots
            .into_iter()
            .map(|root| shiftwork_seams::path::realpath(fs, &root, &cwd).unwrap_or_else(|| cwd.join(root)))
            .collect();
        Roots { resolved }
    }

    /// The resolved roots.
    pub(crate) fn resolved(&self) -> &[PathBuf] {
        &self.resolved
    }

    /// Whether `path` (relative to `cwd`) resolves inside a root.
    fn holds(&self, fs: &dyn Fs, path: &Path, cwd: &Path) -> bool {
        match shiftwork_seams::path::realpath(fs, path, cwd) {
            Some(target) => self.resolved.iter().any(|root| target.starts_with(root)),
            None => false,
        }
    }

    /// Checks each `(what, path, shown)`: the first outside the roots is refused, naming `shown` (the
    /// path as the caller gave it).
    pub(crate) fn check(
        &self,
        fs: &dyn Fs,
        paths: &CheckpointPaths,
        checks: &[(Confined, &Path, &str)],
    ) -> Result<(), ShiftworkRefusal> {
        let cwd = paths.absolute(fs, Path::new("."));
        for (what, path, shown) in checks {
            if !self.holds(fs, path, &cwd) {
                return Err(ShiftworkRefusal::OutsideRoots {
                    what: *what,
                    path: (*shown).to_owned(),
                });
            }
        }
        Ok(())
    }
}

/// The paths every call on `paths` opens: the checkpoint, its ledger, its lock file and the lock's
/// break file (beside the checkpoint's resolved target).
pub(crate) fn checkpoint_files(fs: &dyn Fs, paths: &CheckpointPaths) -> Vec<(Confined, PathBuf)> {
    let target = paths.lock_target(fs);
    let lock = crate::lock::lock_path(&target);
    let broken = shiftwork_seams::lock_file::with_suffix(&lock, ".break");
    vec![
        (Confined::Checkpoint, paths.given.clone()),
        (Confined::Ledger, paths.ledger.clone()),
        (Confined::Lock, lock),
        (Confined::Lock, broken),
    ]
}
