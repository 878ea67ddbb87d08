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
    /// [`crate::MemFs`] counts it as [`crate::Op::Create`].
    ///
    /// ```
    /// use shiftwork_seams::{Fs, MemFs, OsFs, Op};
    /// use std::path::Path;
    /// let fs = MemFs::new();
    /// fs.create_dir_all("/a");
    /// fs.create_dir(Path::new("/a/b"), 0o700).unwrap();
    /// assert_eq!(fs.metadata(Path::new("/a/b")).unwrap().mode, 0o700);
    /// assert_eq!(fs.create_dir(Path::new("/a/b"), 0o700).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    /// assert_eq!(fs.create_dir(Path::new("/x/y"), 0o700).unwrap_err().kind(), std::io::ErrorKind::NotFound);
    /// fs.fail_nth(Op::Create, 1, libc::EACCES);
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
        }
    )*};
}
forward_fs!(&F, std::sync::Arc<F>, Box<F>);
