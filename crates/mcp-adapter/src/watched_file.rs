//! A file that decides who may call (the bearer-token file, a key set given as a file), kept as a
//! running server needs it: judged and read at start-up, and judged and read again whenever it or its
//! directory changed — its content, its owner, its mode, the file put in its place — so that a
//! revocation, a file made unsafe (`chmod o+w`, a directory others may write) or made unreadable
//! takes effect at the next request. Whoever may write such a file may let anybody in, so it is
//! trusted only as OpenSSH trusts its own files ([`shiftwork_seams::owner::trusted`]: owned by
//! this user or root, written by nobody else, the directory too unless it is sticky), and it is read
//! as every file an option names ([`crate::settings::read_named_file`]: no blocking open, a regular
//! file, bounded).
//!
//! Each look costs two `stat` calls; the file is read only when they differ from the last reading.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use shiftwork_seams::Fs as _;

/// Why a watched file gives nothing: the sentence's part after the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trouble {
    /// It cannot be looked at or read: the operating system's reason, or the bound.
    Unreadable(String),
    /// Somebody else could change it: what is wrong, in words.
    Unsafe(String),
    /// Its content is not what it must be (the reader's sentence).
    Content(String),
}

/// Reads a file's bytes into what the server keeps (the path as shown, for sentences).
pub type Parse<T> = fn(shown: &str, bytes: &[u8]) -> Result<T, String>;

/// A watched file of `T` ([`WatchedFile::current`]).
pub struct WatchedFile<T> {
    path: PathBuf,
    limit: u64,
    parse: Parse<T>,
    state: Mutex<State<T>>,
}

impl<T> std::fmt::Debug for WatchedFile<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchedFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

struct State<T> {
    stamp: Option<Stamp>,
    current: Result<Arc<T>, Trouble>,
}

/// What identifies a version of the file and of everything its safety depends on: the file itself
/// (not a link followed) — device, inode, size, modification and change times, kind and mode,
/// owner — and its directory's device, inode, mode and owner. A `chmod` or `chown` changes the
/// change time and the mode or owner, so every change that could make the file unsafe or
/// unreadable is seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    file: (u64, u64, u64, i128, i128, u32, u32),
    dir: Option<(u64, u64, u32, u32)>,
}

impl<T> WatchedFile<T> {
    /// Judges and reads `path` now (at most `limit` bytes, read by `parse`); the error says why it
    /// cannot serve.
    pub fn open(path: &Path, limit: u64, parse: Parse<T>) -> Result<WatchedFile<T>, Trouble> {
        let stamp = stamp(path);
        let current = load(path, limit, parse).map(Arc::new);
        let file = WatchedFile {
            path: path.to_owned(),
            limit,
            parse,
            state: Mutex::new(State {
                stamp,
                current: current.clone(),
            }),
        };
        current.map(|_| file)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the file holds now, read again first if it or its directory changed; the trouble when it
    /// cannot be trusted or read (then nothing it held counts). A new trouble is logged once.
    pub fn current(&self) -> Result<Arc<T>, Trouble> {
        // The state is replaced whole; a panic cannot leave it half-written.
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let now = stamp(&self.path);
        if now != state.stamp || now.is_none() {
            let loaded = load(&self.path, self.limit, self.parse).map(Arc::new);
            if let Err(trouble) = &loaded
                && state.current.as_ref().err() != Some(trouble)
            {
                tracing::error!(
                    "{}: {}; nothing it holds is accepted until it is fixed",
                    self.path.display(),
                    trouble.words()
                );
            }
            *state = State {
                stamp: now,
                current: loaded,
            };
        }
        state.current.clone()
    }
}

impl Trouble {
    /// The trouble in words.
    pub fn words(&self) -> &str {
        match self {
            Trouble::Unreadable(s) | Trouble::Unsafe(s) | Trouble::Content(s) => s,
        }
    }
}

/// Judges the file's safety, then reads and parses it.
fn load<T>(path: &Path, limit: u64, parse: Parse<T>) -> Result<T, Trouble> {
    check_safe(path)?;
    let bytes = crate::settings::read_named_file(path, limit).map_err(Trouble::Unreadable)?;
    parse(&path.display().to_string(), &bytes).map_err(Trouble::Content)
}

/// Refuses a file (and its directory) that another user may write or that another user owns (the
/// rule of [`shiftwork_seams::owner::trusted`]), or that is not a regular file.
pub fn check_safe(path: &Path) -> Result<(), Trouble> {
    use shiftwork_seams::owner::{effective_uid, trusted};
    let me = effective_uid();
    let unreadable = |e: std::io::Error| Trouble::Unreadable(shiftwork_seams::os_reason(&e));
    let fs = shiftwork_seams::OsFs;
    let meta = fs.symlink_metadata(path).map_err(unreadable)?;
    if meta.kind != shiftwork_seams::FileKind::File {
        return Err(Trouble::Unsafe(String::from(
            "it is not a regular file (a link, a directory or a device)",
        )));
    }
    if let Err(why) = trusted(meta.uid, meta.mode, me) {
        return Err(Trouble::Unsafe(format!("the file {why}")));
    }
    let dir_meta = fs.metadata(directory_of(path)).map_err(unreadable)?;
    // A sticky directory (/tmp) lets nobody replace another user's file.
    if dir_meta.mode & 0o1000 == 0
        && let Err(why) = trusted(dir_meta.uid, dir_meta.mode, me)
    {
        return Err(Trouble::Unsafe(format!("its directory {why}")));
    }
    Ok(())
}

/// The directory holding `path` (`.` for a bare name).
fn directory_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// The stamp of the file at `path` (`None` when it cannot be looked at).
fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let nanos = |s: i64, ns: i64| i128::from(s) * 1_000_000_000 + i128::from(ns);
    let meta = std::fs::symlink_metadata(path).ok()?;
    let dir = std::fs::metadata(directory_of(path)).ok();
    Some(Stamp {
        file: (
            meta.dev(),
            meta.ino(),
            meta.size(),
            nanos(meta.mtime(), meta.mtime_nsec()),
            nanos(meta.ctime(), meta.ctime_nsec()),
            meta.mode(),
            meta.uid(),
        ),
        dir: dir.map(|d| (d.dev(), d.ino(), d.mode(), d.uid())),
    })
}
