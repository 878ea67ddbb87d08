//! The `Fs` seam: every filesystem operation a core crate performs.
//!
//! The trait holds primitives only. The mechanisms built from them — the durable replace, the line
//! append, streaming SHA-256, resolving a chain of symbolic links — live once, in
//! [`crate::durable`], [`crate::hash`] and [`crate::path`], so that [`crate::MemFs`]'s fault injection
//! reaches every step of them.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What a directory entry or a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only reported by [`Fs::symlink_metadata`]).
    Symlink,
    /// A FIFO, socket or device.
    Other,
}

/// The metadata the cores use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Metadata {
    /// What the path is.
    pub kind: FileKind,
    /// Length in bytes.
    pub len: u64,
    /// Modification time, at the precision the filesystem reports.
    pub modified: SystemTime,
    /// Status-change time (`ctime`), at the precision the filesystem reports: moved forward by every
    /// change of the file's contents or attributes (a write, a truncation, a new mode or owner, a set
    /// modification time, a rename), and never set by a caller to a time of its choosing, so it tells
    /// whether a file changed since it was last looked at where the modification time can be put back.
    pub changed: SystemTime,
    /// The twelve permission bits (access bits, set-user-ID, set-group-ID, sticky).
    pub mode: u32,
    /// Owner user id.
    pub uid: u32,
    /// Owner group id.
    pub gid: u32,
    /// Device number; with `ino` it identifies a file.
    pub dev: u64,
    /// Inode number.
    pub ino: u64,
}

impl Metadata {
    /// True when both describe the same file (same device and inode).
    pub fn same_file(&self, other: &Metadata) -> bool {
        self.dev == other.dev && self.ino == other.ino
    }
}

/// One entry of [`Fs::list_dir`].
#[derive(Debug)]
pub struct DirEntry {
    /// The entry's raw name.
    pub name: OsString,
    /// The entry's metadata following symbolic links, or the error that stat gave for it.
    pub metadata: io::Result<Metadata>,
}

/// A file opened for writing by [`Fs::create_new`] or [`Fs::open_append`].
pub trait FileWriter: Send {
    /// Writes all of `bytes` (one write operation for fault injection).
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Flushes data and metadata to stable storage (fsync).
    fn sync(&mut self) -> io::Result<()>;
    /// Sets all twelve permission bits.
    fn set_mode(&mut self, mode: u32) -> io::Result<()>;
    /// Sets owner and group.
    fn set_owner(&mut self, uid: u32, gid: u32) -> io::Result<()>;
    /// Truncates or extends the file to `len` bytes.
    fn set_len(&mut self, len: u64) -> io::Result<()>;
    /// The open file's metadata.
    fn metadata(&self) -> io::Result<Metadata>;
}

/// A held exclusive lock; dropping it releases the lock.
pub trait LockGuard: Send {}

/// The filesystem as the core crates see it.
///
/// Paths are used as given: a relative path is relative to the process's working directory
/// ([`crate::OsFs`]) or to `/` ([`crate::MemFs`]). Errors are `std::io::Error`s carrying the OS error
/// number where there is one, so callers can classify them (`NotFound`, `PermissionDenied`) and print the
/// OS's text without a path ([`crate::os_reason`]).
pub trait Fs: Send + Sync {
    /// Reads a whole file. The file is opened without blocking and must be a regular file: a FIFO, a
    /// socket or a device is refused with [`crate::not_regular_file`] (a directory with `EISDIR`). For
    /// a file whose size a caller does not control, use [`Fs::read_limited`].
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;

    /// Reads a file in chunks of at most `chunk_size` bytes, calling `sink` with each, and returns the
    /// number of bytes read. Memory use does not depend on the file's size. The file is opened as by
    /// [`Fs::read`] (never blocking; regular files only); a sink error stops the read and is returned.
    fn read_chunks(
        &self,
        path: &Path,
        chunk_size: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<u64>;

    /// Reads a whole file of at most `limit` bytes; a longer file is refused with
    /// [`crate::file_too_large`] after reading at most `limit + 1` bytes of it, so memory use is bounded
    /// by `limit` whatever the file. Like [`Fs::read`], it refuses a path that leads to anything but a
    /// regular file ([`crate::not_regular_file`]; a directory gives `EISDIR`) without blocking.
    ///
    /// ```
    /// use shiftwork_seams::{Fs, MemFs};
    /// use std::path::Path;
    /// let fs = MemFs::new();
    /// fs.write_file("/a", b"12345");
    /// assert_eq!(fs.read_limited(Path::new("/a"), 5).unwrap(), b"12345");
    /// assert!(shiftwork_seams::is_file_too_large(&fs.read_limited(Path::new("/a"), 4).unwrap_err()));
    /// fs.create_special("/fifo");
    /// assert!(shiftwork_seams::is_not_regular_file(&fs.read_limited(Path::new("/fifo"), 4).unwrap_err()));
    /// ```
    fn read_limited(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        self.read_chunks(path, 64 * 1024, &mut |chunk| {
            if out.len() as u64 + chunk.len() as u64 > limit {
                return Err(crate::file_too_large());
            }
            out.extend_from_slice(chunk);
            Ok(())
        })?;
        Ok(out)
    }

    /// Metadata of `path`, following symbolic links.
    fn metadata(&self, path: &Path) -> io::Result<Metadata>;

    /// Metadata of `path` itself (a symbolic link is reported as [`FileKind::Symlink`]).
    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata>;

    /// The entries directly inside a directory (never `.` or `..`), each with its metadata following
    /// symbolic links. The order is unspecified.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>>;

    /// The absolute path with every symbolic link resolved; fails if any component is missing.
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf>;

    /// The target stored in a symbolic link.
    fn read_link(&self, path: &Path) -> io::Result<PathBuf>;

    /// Creates a new file exclusively (never opens an existing one) with permission bits `mode` (subject
    /// to the umask on [`crate::OsFs`]) and opens it for writing.
    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>>;

    /// Opens a file for appending; with `create`, creates it (mode `0o644`, subject to the umask) when
    /// missing. Writes through the returned handle count as appends for fault injection.
    fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>>;

    /// Renames `from` over `to` atomically.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes a file (a symbolic link itself, not its target).
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// Flushes a directory's entries to stable storage (fsync on the directory).
    fn sync_dir(&self, path: &Path) -> io::Result<()>;

    /// Takes an exclusive advisory lock on the file `path` (created with mode `0o644` when missing,
    /// opened read-only when present, never written), waiting at most `timeout`. It excludes every other
    /// holder, in this process or another, and the operating system releases it when the holder dies.
    /// On timeout the error's kind is [`io::ErrorKind::TimedOut`].
    fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>>;

    /// Creates one directory with permission bits `mode` (subject to the umask on [`crate::OsFs`]).
    /// Fails with `AlreadyExists` when something is there, `NotFound` when the parent is missing.
    /// [`crate::MemFs`] counts it as [`crate::Op::CreateDir`].
    ///
    /// ```
    /// use shiftwork_seams::{Fs, MemFs, OsFs, Op};
    /// use std::path::Path;
    /// let fs = MemFs::new();
    /// fs.make_dirs("/a");
    /// fs.create_dir(Path::new("/a/b"), 0o700).unwrap();
    /// assert_eq!(fs.metadata(Path::new("/a/b")).unwrap().mode, 0o700);
    /// assert_eq!(fs.create_dir(Path::new("/a/b"), 0o700).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    /// assert_eq!(fs.create_dir(Path::new("/x/y"), 0o700).unwrap_err().kind(), std::io::ErrorKind::NotFound);
    /// fs.fail_nth(Op::CreateDir, 1, libc::EACCES);
    /// assert!(fs.create_dir(Path::new("/a/c"), 0o700).is_err());
    /// let tmp = tempfile::tempdir().unwrap();
    /// OsFs.create_dir(&tmp.path().join("d"), 0o700).unwrap();
    /// assert_eq!(OsFs.metadata(&tmp.path().join("d")).unwrap().kind, shiftwork_seams::FileKind::Dir);
    /// ```
    ///
    /// The default implementation answers `Unsupported`, so that wrappers written before this method
    /// existed keep compiling; [`crate::OsFs`], [`crate::MemFs`] and the forwarding impls implement it.
    fn create_dir(&self, path: &Path, mode: u32) -> io::Result<()> {
        let _ = (path, mode);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this Fs cannot create directories",
        ))
    }

    /// Creates the directory `path` and every missing directory above it, as `mkdir -p` does, each
    /// new one with permission bits `mode` (subject to the umask on [`crate::OsFs`]; pass `0o700` for
    /// a directory only its owner may enter). It succeeds when `path` already is a directory, and
    /// leaves every directory that exists as it is, mode included.
    ///
    /// **Symbolic links.** The directories that exist when the call reaches them are looked up as any
    /// path is, so a link the path's owner set up (a home directory that is a link) is followed. From
    /// the first directory the call has to create, down to `path`, no link is ever followed: each
    /// directory is created inside the one opened before it and then opened without following a link,
    /// so a link found in its place — left there beforehand, dangling, or swapped in while the call
    /// runs — is refused with `ELOOP` and nothing is created through it. A `..` below the first
    /// directory to create is refused with [`io::ErrorKind::InvalidInput`].
    ///
    /// **Something else in the way.** A file (or a FIFO, a socket, a link to one) at `path` is refused
    /// with [`io::ErrorKind::AlreadyExists`] (`EEXIST`), and one in the place of a directory above it
    /// with [`io::ErrorKind::NotADirectory`] (`ENOTDIR`); nothing is removed or replaced. A failure
    /// part-way leaves the directories created before it in place, as `mkdir -p` does. Nothing is
    /// flushed: call [`Fs::sync_dir`] on the parent when the new directory must survive a crash.
    ///
    /// [`crate::MemFs`] counts the lookup as [`crate::Op::Stat`] and each directory it creates as
    /// [`crate::Op::CreateDir`], so a test can fail or crash the call at any of them. On a `MemFs`
    /// value, call it as `Fs::create_dir_all(&fs, path, mode)`: the inherent
    /// [`MemFs::create_dir_all`](crate::MemFs::create_dir_all) of the same name is the uncounted
    /// set-up helper.
    ///
    /// ```
    /// use shiftwork_seams::{FileKind, Fs, MemFs, Op, OsFs};
    /// use std::io::ErrorKind;
    /// use std::path::Path;
    ///
    /// let tmp = tempfile::tempdir().unwrap();
    /// let deep = tmp.path().join("state/jobs/today");
    /// OsFs.create_dir_all(&deep, 0o700).unwrap();
    /// assert_eq!(OsFs.metadata(&deep).unwrap().kind, FileKind::Dir);
    /// OsFs.create_dir_all(&deep, 0o700).unwrap(); // already there: nothing to do
    ///
    /// // A link in the place of a directory to create is refused, never followed.
    /// let elsewhere = tmp.path().join("elsewhere");
    /// std::os::unix::fs::symlink(&elsewhere, tmp.path().join("state/escape")).unwrap();
    /// let err = OsFs.create_dir_all(&tmp.path().join("state/escape/x"), 0o700).unwrap_err();
    /// assert_eq!(err.raw_os_error(), Some(libc::ELOOP));
    /// assert!(!elsewhere.exists());
    ///
    /// // The same rules in memory, with a failure injected at the second directory.
    /// let fs = MemFs::new();
    /// fs.fail_nth(Op::CreateDir, 2, libc::ENOSPC);
    /// let err = Fs::create_dir_all(&fs, Path::new("/a/b/c"), 0o700).unwrap_err();
    /// assert_eq!(err.raw_os_error(), Some(libc::ENOSPC));
    /// assert_eq!(fs.metadata(Path::new("/a")).unwrap().mode, 0o700); // created before the failure
    /// assert!(fs.metadata(Path::new("/a/b")).is_err());
    /// fs.write_file("/a/file", b"x");
    /// let err = Fs::create_dir_all(&fs, Path::new("/a/file"), 0o700).unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::AlreadyExists);
    /// ```
    ///
    /// The default implementation answers `Unsupported`, as [`Fs::create_dir`]'s does, so that
    /// wrappers written before this method existed keep compiling; [`crate::OsFs`], [`crate::MemFs`]
    /// and the forwarding impls implement it.
    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        let _ = (path, mode);
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "this Fs cannot create directories",
        ))
    }

    /// Takes the times this filesystem gives its files (their modification time) from `clock` from
    /// now on, so that a lock's age and the time its holder wrote it read the same clock as the code
    /// that judges them. A real filesystem has the operating system's times and ignores it (the
    /// default); [`crate::MemFs`] uses it. `shiftwork-core`'s `Env` gives its filesystem its clock.
    ///
    /// ```
    /// use std::path::Path;
    /// use std::sync::Arc;
    /// use chrono::{TimeZone, Utc};
    /// use shiftwork_seams::{Clock, Fs, ManualClock, MemFs};
    /// let clock = ManualClock::new(Utc.with_ymd_and_hms(2030, 5, 1, 12, 0, 0).unwrap());
    /// let fs = MemFs::new();
    /// fs.use_clock(Arc::new(clock.clone()));
    /// fs.write_file("/lock", b"1\n");
    /// let written: std::time::SystemTime = clock.now().into();
    /// assert_eq!(fs.metadata(Path::new("/lock")).unwrap().modified, written);
    /// ```
    fn use_clock(&self, clock: std::sync::Arc<dyn crate::Clock>) {
        let _ = clock;
    }
}

macro_rules! forward_fs {
    ($($ty:ty),*) => {$(
        impl<F: Fs + ?Sized> Fs for $ty {
            fn read(&self, path: &Path) -> io::Result<Vec<u8>> { (**self).read(path) }
            fn read_chunks(&self, path: &Path, chunk_size: usize, sink: &mut dyn FnMut(&[u8]) -> io::Result<()>) -> io::Result<u64> {
                (**self).read_chunks(path, chunk_size, sink)
            }
            fn read_limited(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> { (**self).read_limited(path, limit) }
            fn metadata(&self, path: &Path) -> io::Result<Metadata> { (**self).metadata(path) }
            fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> { (**self).symlink_metadata(path) }
            fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> { (**self).list_dir(path) }
            fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> { (**self).canonicalize(path) }
            fn read_link(&self, path: &Path) -> io::Result<PathBuf> { (**self).read_link(path) }
            fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>> { (**self).create_new(path, mode) }
            fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>> { (**self).open_append(path, create) }
            fn rename(&self, from: &Path, to: &Path) -> io::Result<()> { (**self).rename(from, to) }
            fn remove_file(&self, path: &Path) -> io::Result<()> { (**self).remove_file(path) }
            fn sync_dir(&self, path: &Path) -> io::Result<()> { (**self).sync_dir(path) }
            fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>> { (**self).lock(path, timeout) }
            fn create_dir(&self, path: &Path, mode: u32) -> io::Result<()> { (**self).create_dir(path, mode) }
            fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> { (**self).create_dir_all(path, mode) }
            fn use_clock(&self, clock: std::sync::Arc<dyn crate::Clock>) { (**self).use_clock(clock) }
        }
    )*};
}
forward_fs!(&F, std::sync::Arc<F>, Box<F>);
