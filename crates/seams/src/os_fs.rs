//! [`OsFs`]: the [`Fs`] seam on the real filesystem.

use std::ffi::{CStr, CString};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use crate::fs::{DirEntry, FileKind, FileWriter, Fs, LockGuard, Metadata};

/// The real filesystem (POSIX).
///
/// ```
/// use shiftwork_seams::{Fs, OsFs};
/// let dir = std::env::temp_dir();
/// assert!(OsFs.metadata(&dir).unwrap().kind == shiftwork_seams::FileKind::Dir);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct OsFs;

/// How often a waiting [`OsFs::lock`] tries again.
const LOCK_POLL: Duration = Duration::from_millis(2);

/// Opens `path` for reading without blocking (a FIFO without a writer would block a plain open) and
/// without becoming its controlling terminal, then checks what was opened: a regular file is returned
/// with its size; a directory is refused with `EISDIR`, anything else with [`crate::not_regular_file`].
/// `O_NONBLOCK` has no effect on reads of a regular file, so it stays set.
fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    if !ft.is_file() {
        return Err(crate::not_regular_file());
    }
    Ok((file, meta.len()))
}

/// Opens (or creates) the file of [`OsFs::lock`]. An existing file is opened without blocking (a FIFO
/// put in its place would block a plain open forever) and must be a regular file. A missing file is
/// created exclusively and without following a symbolic link (`O_CREAT | O_EXCL`), so a dangling link
/// in the lock's place never creates its target elsewhere; one that appears meanwhile is opened as an
/// existing file.
fn open_lock_file(path: &Path) -> io::Result<File> {
    let flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    let opened = match OpenOptions::new().read(true).custom_flags(flags).open(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            match OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .mode(0o644)
                .custom_flags(flags)
                .open(path)
            {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    OpenOptions::new().read(true).custom_flags(flags).open(path)
                }
                other => other,
            }
        }
        other => other,
    }?;
    if !opened.metadata()?.file_type().is_file() {
        return Err(crate::not_regular_file());
    }
    Ok(opened)
}

/// How [`create_dir_all`] opens a directory it walks through: only as a place to look up and create
/// names in (`O_PATH` on Linux, so a directory without read permission can still be walked).
#[cfg(target_os = "linux")]
const WALK_FLAGS: libc::c_int = libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC;
#[cfg(not(target_os = "linux"))]
const WALK_FLAGS: libc::c_int = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC;

/// `openat(dir, name, flags)`; `dir` `None` is the working directory.
fn open_at(dir: Option<&OwnedFd>, name: &CStr, flags: libc::c_int) -> io::Result<OwnedFd> {
    let dir = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: `name` is a valid NUL-terminated string; `dir` is AT_FDCWD or a descriptor borrowed
    // from an `OwnedFd` that outlives the call.
    let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `openat` returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The refusal of a `..` below the first directory [`Fs::create_dir_all`] has to create, decided
/// before anything is created.
pub(crate) fn parent_in_new_part() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        "a directory to create cannot be reached through ..",
    )
}

/// [`Fs::create_dir_all`] on the real filesystem: the existing part of `path` is opened component by
/// component (links followed, as any lookup does); from the first missing component on, each directory
/// is made with `mkdirat` in the directory opened before it and opened with `O_NOFOLLOW`, so no link
/// below that point is ever followed, whoever puts it there and when.
fn create_dir_all(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let mut dir: Option<OwnedFd> = None;
    if path.has_root() {
        dir = Some(open_at(None, c"/", WALK_FLAGS)?);
    }
    let names: Vec<&std::ffi::OsStr> = path
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            Component::ParentDir => Some(std::ffi::OsStr::new("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    let mut creating = false;
    for (i, name) in names.iter().enumerate() {
        let last = i + 1 == names.len();
        let in_the_way = || io::Error::from_raw_os_error(if last { libc::EEXIST } else { libc::ENOTDIR });
        let c_name =
            CString::new(name.as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        if !creating {
            match open_at(dir.as_ref(), &c_name, WALK_FLAGS) {
                Ok(fd) => {
                    dir = Some(fd);
                    continue;
                }
                // Missing, or a link to nothing: from here on every directory is created.
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    if names[i..].iter().any(|n| n.as_bytes() == b"..") {
                        return Err(parent_in_new_part());
                    }
                    creating = true;
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Err(in_the_way()),
                Err(e) => return Err(e),
            }
        }
        let parent = dir.as_ref().map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
        #[allow(clippy::unnecessary_cast)] // mode_t is u32 on Linux, u16 on macOS; 0o7777 fits both.
        let bits = (mode & 0o7777) as libc::mode_t;
        // SAFETY: `c_name` is a valid NUL-terminated string; `parent` is AT_FDCWD or a descriptor
        // borrowed from `dir`, which outlives the call.
        if unsafe { libc::mkdirat(parent, c_name.as_ptr(), bits) } != 0 {
            let e = io::Error::last_os_error();
            // Something is there already: a directory made meanwhile is used, anything else refused
            // when it is opened below.
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(e);
            }
        }
        match open_at(dir.as_ref(), &c_name, WALK_FLAGS | libc::O_NOFOLLOW) {
            Ok(fd) => dir = Some(fd),
            Err(e) => {
                // The open refused what is there; say what it was, without following it.
                let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
                // SAFETY: `st` is written by `fstatat` before it is read; the name and the
                // descriptor are valid as above.
                let rc = unsafe {
                    libc::fstatat(
                        parent,
                        c_name.as_ptr(),
                        st.as_mut_ptr(),
                        libc::AT_SYMLINK_NOFOLLOW,
                    )
                };
                if rc != 0 {
                    return Err(e);
                }
                // SAFETY: `fstatat` succeeded, so it filled `st`.
                let kind = unsafe { st.assume_init() }.st_mode & libc::S_IFMT;
                return Err(match kind {
                    libc::S_IFLNK => io::Error::from_raw_os_error(libc::ELOOP),
                    libc::S_IFDIR => e,
                    _ => in_the_way(),
                });
            }
        }
    }
    Ok(())
}

fn convert(meta: &fs::Metadata) -> Metadata {
    let ft = meta.file_type();
    let kind = if ft.is_symlink() {
        FileKind::Symlink
    } else if ft.is_dir() {
        FileKind::Dir
    } else if ft.is_file() {
        FileKind::File
    } else {
        FileKind::Other
    };
    Metadata {
        kind,
        len: meta.len(),
        // Every platform this crate builds on reports a modification time.
        modified: meta.modified().unwrap_or(std::time::UNIX_EPOCH),
        changed: status_changed(meta),
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
        dev: meta.dev(),
        ino: meta.ino(),
    }
}

/// A file's `ctime` as a `SystemTime` (seconds and nanoseconds since the epoch, either side of it).
fn status_changed(meta: &fs::Metadata) -> std::time::SystemTime {
    let nanos = Duration::from_nanos(u64::try_from(meta.ctime_nsec()).unwrap_or(0));
    let epoch = std::time::UNIX_EPOCH;
    match u64::try_from(meta.ctime()) {
        Ok(secs) => epoch + Duration::from_secs(secs) + nanos,
        Err(_) => epoch - Duration::from_secs(meta.ctime().unsigned_abs()) + nanos,
    }
}

struct OsWriter {
    file: File,
}

impl FileWriter for OsWriter {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }
    fn set_mode(&mut self, mode: u32) -> io::Result<()> {
        self.file
            .set_permissions(fs::Permissions::from_mode(mode & 0o7777))
    }
    fn set_owner(&mut self, uid: u32, gid: u32) -> io::Result<()> {
        std::os::unix::fs::fchown(&self.file, Some(uid), Some(gid))
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
    fn metadata(&self) -> io::Result<Metadata> {
        self.file.metadata().map(|m| convert(&m))
    }
}

struct OsLock {
    // Closing the file description releases the flock.
    _file: File,
}

impl LockGuard for OsLock {}

fn try_flock(file: &File) -> io::Result<bool> {
    // SAFETY: flock on a file descriptor this function borrows; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(true);
    }
    let err = io::Error::last_os_error();
    match err.raw_os_error() {
        Some(code) if code == libc::EWOULDBLOCK || code == libc::EINTR => Ok(false),
        _ => Err(err),
    }
}

impl Fs for OsFs {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.read_limited(path, u64::MAX)
    }

    fn read_limited(&self, path: &Path, limit: u64) -> io::Result<Vec<u8>> {
        let (file, len) = open_regular(path)?;
        if len > limit {
            return Err(crate::file_too_large());
        }
        // The size can change after the stat: read at most one byte past the bound to tell.
        let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0).saturating_add(1));
        file.take(limit.saturating_add(1)).read_to_end(&mut out)?;
        if out.len() as u64 > limit {
            return Err(crate::file_too_large());
        }
        Ok(out)
    }

    fn read_chunks(
        &self,
        path: &Path,
        chunk_size: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<u64> {
        let (mut file, _) = open_regular(path)?;
        let mut buf = vec![0u8; chunk_size.max(1)];
        let mut total = 0u64;
        loop {
            let n = match file.read(&mut buf) {
                Ok(0) => return Ok(total),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            total += n as u64;
            sink(&buf[..n])?;
        }
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        fs::metadata(path).map(|m| convert(&m))
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        fs::symlink_metadata(path).map(|m| convert(&m))
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut out = Vec::new();
        for entry in fs::read_dir(path)? {
            let entry = entry?;
            let metadata = fs::metadata(entry.path()).map(|m| convert(&m));
            out.push(DirEntry {
                name: entry.file_name(),
                metadata,
            });
        }
        Ok(out)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        fs::read_link(path)
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode & 0o7777)
            .open(path)?;
        Ok(Box::new(OsWriter { file }))
    }

    fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>> {
        let file = OpenOptions::new()
            .append(true)
            .create(create)
            .mode(0o644)
            .open(path)?;
        Ok(Box::new(OsWriter { file }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn create_dir(&self, path: &Path, mode: u32) -> io::Result<()> {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new().mode(mode & 0o7777).create(path)
    }

    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        create_dir_all(path, mode)
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        File::open(path)?.sync_all()
    }

    fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>> {
        let file = open_lock_file(path)?;
        let start = Instant::now();
        loop {
            if try_flock(&file)? {
                return Ok(Box::new(OsLock { _file: file }));
            }
            if start.elapsed() >= timeout {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "timed out waiting for the lock",
                ));
            }
            std::thread::sleep(LOCK_POLL);
        }
    }
}

/// The kind of network filesystem `path` lies on (`"NFS"`, `"SMB/CIFS"`, `"SMB2"`), or `None` for a
/// local one or when it cannot be told (Linux `statfs`; other systems always `None`). WAL databases,
/// for example, need every user on one host when the file is on such a filesystem.
///
/// ```
/// assert_eq!(shiftwork_seams::network_filesystem(&std::env::temp_dir()), None);
/// ```
pub fn network_filesystem(path: &Path) -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::ffi::OsStrExt;
        let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
        // SAFETY: `statfs` writes into a zeroed struct we own; `c` is a valid NUL-terminated path.
        let mut buf: libc::statfs = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::statfs(c.as_ptr(), &mut buf) } != 0 {
            return None;
        }
        #[allow(clippy::unnecessary_cast)] // f_type's width differs between libc targets.
        match buf.f_type as i64 {
            0x6969 => Some("NFS"),
            0xFF53_4D42 => Some("SMB/CIFS"),
            0xFE53_4D42 => Some("SMB2"),
            0x517B => Some("SMB"),
            _ => None,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        None
    }
}
