//! [`MemFs`]: an in-memory [`Fs`] with fault injection, for tests.
//!
//! The model is a small POSIX filesystem: inodes (files, directories, symbolic links, "other" nodes
//! standing for FIFOs and devices) and directory entries that name them. Open writers hold an inode,
//! so a renamed file keeps receiving their writes. Permission bits are stored, never enforced: tests
//! make an operation fail with `EACCES` (or any error number) through [`MemFs::fail_path`].
//!
//! Fault injection counts operations per [`Op`]. [`MemFs::fail_nth`] fails one future operation,
//! [`MemFs::crash_at`] fails it and every operation after it, as if the process had died at that
//! point; [`MemFs::restart`] lets a "new process" recover from what was left.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use crate::fs::{DirEntry, FileKind, FileWriter, Fs, LockGuard, Metadata};

/// The operations fault injection counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// [`Fs::read`] and [`Fs::read_chunks`].
    Read,
    /// [`Fs::metadata`], [`Fs::symlink_metadata`], and the lookup that starts [`Fs::create_dir_all`].
    Stat,
    /// [`Fs::list_dir`].
    List,
    /// [`Fs::canonicalize`] and [`Fs::read_link`].
    Resolve,
    /// [`Fs::create_new`].
    Create,
    /// [`Fs::create_dir`], and each directory [`Fs::create_dir_all`] creates.
    CreateDir,
    /// [`Fs::open_append`].
    OpenAppend,
    /// [`FileWriter::write_all`] on a file from [`Fs::create_new`].
    Write,
    /// [`FileWriter::write_all`] on a file from [`Fs::open_append`].
    Append,
    /// [`FileWriter::sync`].
    Fsync,
    /// [`Fs::sync_dir`].
    SyncDir,
    /// [`Fs::rename`].
    Rename,
    /// [`Fs::remove_file`].
    Remove,
    /// [`FileWriter::set_len`].
    SetLen,
    /// [`FileWriter::set_mode`].
    SetMode,
    /// [`FileWriter::set_owner`].
    SetOwner,
    /// [`Fs::lock`].
    Lock,
}

impl Op {
    /// Every operation, for tests that walk all of them.
    pub const ALL: [Op; 17] = [
        Op::Read,
        Op::Stat,
        Op::List,
        Op::Resolve,
        Op::Create,
        Op::CreateDir,
        Op::OpenAppend,
        Op::Write,
        Op::Append,
        Op::Fsync,
        Op::SyncDir,
        Op::Rename,
        Op::Remove,
        Op::SetLen,
        Op::SetMode,
        Op::SetOwner,
        Op::Lock,
    ];

    /// The operations that change the filesystem's contents: the steps a crash can fall between.
    pub const MUTATING: [Op; 10] = [
        Op::Create,
        Op::CreateDir,
        Op::OpenAppend,
        Op::Write,
        Op::Append,
        Op::Fsync,
        Op::SyncDir,
        Op::Rename,
        Op::Remove,
        Op::SetLen,
    ];
}

#[derive(Debug, Clone)]
enum Data {
    File(Vec<u8>),
    Dir,
    Symlink(PathBuf),
    Other,
}

#[derive(Debug, Clone)]
struct Inode {
    data: Data,
    mode: u32,
    uid: u32,
    gid: u32,
    mtime: SystemTime,
    /// The status-change time: moved by every change of contents or attributes.
    ctime: SystemTime,
}

#[derive(Debug, Clone)]
struct Fault {
    op: Op,
    /// Fails when the op's count reaches this value; `None` fails every matching call.
    at: Option<u64>,
    path: Option<PathBuf>,
    errno: i32,
    crash: bool,
}

#[derive(Debug)]
struct State {
    inodes: HashMap<u64, Inode>,
    /// Directory entries by physical absolute path (no symbolic link inside the parent part).
    entries: BTreeMap<PathBuf, u64>,
    next_ino: u64,
    time: SystemTime,
    /// The clock times come from, once given ([`Fs::use_clock`]); until then each change ticks
    /// `time` by a millisecond.
    clock: Option<ClockSource>,
    counts: HashMap<Op, u64>,
    faults: Vec<Fault>,
    crashed: bool,
    locks: HashSet<PathBuf>,
    lock_timeouts: HashSet<PathBuf>,
    read_holds: HashMap<PathBuf, Arc<HoldState>>,
}

#[derive(Debug, Default)]
struct HoldState {
    flags: Mutex<(bool, bool)>, // (entered, released)
    cv: Condvar,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    lock_cv: Condvar,
}

/// An in-memory filesystem with fault injection. Clones share one filesystem.
///
/// ```
/// use shiftwork_seams::{Fs, MemFs, Op, durable::{replace_durably, ReplaceOptions}};
/// use std::path::Path;
///
/// let fs = MemFs::new();
/// fs.write_file("/notes/today.md", b"old");
/// fs.fail_nth(Op::Rename, 1, libc::ENOSPC);
/// let err = replace_durably(&fs, Path::new("/notes/today.md"), &[b"new"], &ReplaceOptions::hidden(".x-", ".tmp"))
///     .unwrap_err();
/// assert_eq!(err.source.raw_os_error(), Some(libc::ENOSPC));
/// assert_eq!(fs.file("/notes/today.md").unwrap(), b"old");
/// assert_eq!(fs.paths().len(), 3); // "/", "/notes" and the file: no temp file left
/// ```
#[derive(Debug, Clone)]
pub struct MemFs {
    shared: Arc<Shared>,
}

const ROOT_INO: u64 = 1;
const MAX_HOPS: usize = 40;
const DEV: u64 = 0x4d45_4d46; // "MEMF"

fn err(errno: i32) -> io::Error {
    io::Error::from_raw_os_error(errno)
}

fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        Path::new("/").join(path)
    }
}

/// Where a path leads.
enum Walk {
    /// The entry exists at this physical path.
    Found(PathBuf, u64),
    /// Everything but the last component exists; the last is missing from this parent.
    MissingLast(PathBuf, OsString),
}

/// A clock for [`State`], which is `Debug`.
struct ClockSource(Arc<dyn crate::Clock>);

impl std::fmt::Debug for ClockSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ClockSource")
    }
}

impl State {
    fn tick(&mut self) -> SystemTime {
        self.time = match &self.clock {
            Some(clock) => clock.0.now().into(),
            None => self.time + Duration::from_millis(1),
        };
        self.time
    }

    /// Counts `op` and applies any armed fault to it.
    fn enter(&mut self, op: Op, path: Option<&Path>) -> io::Result<()> {
        if self.crashed {
            return Err(err(libc::EIO));
        }
        let count = {
            let c = self.counts.entry(op).or_insert(0);
            *c += 1;
            *c
        };
        let hit = self.faults.iter().position(|f| {
            f.op == op
                && f.at.is_none_or(|at| at == count)
                && f.path
                    .as_deref()
                    .is_none_or(|p| path.is_some_and(|q| absolute(q) == p))
        });
        if let Some(i) = hit {
            let fault = self.faults[i].clone();
            if fault.at.is_some() {
                self.faults.remove(i);
            }
            if fault.crash {
                self.crashed = true;
            }
            return Err(err(fault.errno));
        }
        Ok(())
    }

    fn inode(&self, ino: u64) -> io::Result<&Inode> {
        self.inodes.get(&ino).ok_or_else(|| err(libc::ENOENT))
    }

    fn walk(&self, path: &Path, follow_last: bool) -> io::Result<Walk> {
        let mut pending: Vec<OsString> = Vec::new();
        push_components(&mut pending, &absolute(path));
        pending.reverse();
        let mut cur = PathBuf::from("/");
        let mut cur_ino = ROOT_INO;
        let mut hops = 0;
        while let Some(name) = pending.pop() {
            if name == ".." {
                cur.pop();
                cur_ino = self.entries.get(&cur).copied().unwrap_or(ROOT_INO);
                continue;
            }
            if !matches!(self.inode(cur_ino)?.data, Data::Dir) {
                return Err(err(libc::ENOTDIR));
            }
            let candidate = cur.join(&name);
            let last = pending.is_empty();
            let Some(&ino) = self.entries.get(&candidate) else {
                if last {
                    return Ok(Walk::MissingLast(cur, name));
                }
                return Err(err(libc::ENOENT));
            };
            if let Data::Symlink(target) = &self.inode(ino)?.data
                && (!last || follow_last)
            {
                hops += 1;
                if hops > MAX_HOPS {
                    return Err(err(libc::ELOOP));
                }
                let mut more = Vec::new();
                push_components(&mut more, target);
                more.reverse();
                pending.extend(more);
                if target.is_absolute() {
                    cur = PathBuf::from("/");
                    cur_ino = ROOT_INO;
                }
                continue;
            }
            cur = candidate;
            cur_ino = ino;
        }
        Ok(Walk::Found(cur, cur_ino))
    }

    fn found(&self, path: &Path, follow_last: bool) -> io::Result<(PathBuf, u64)> {
        match self.walk(path, follow_last)? {
            Walk::Found(p, ino) => Ok((p, ino)),
            Walk::MissingLast(..) => Err(err(libc::ENOENT)),
        }
    }

    fn meta(&self, ino: u64) -> io::Result<Metadata> {
        let node = self.inode(ino)?;
        let (kind, len) = match &node.data {
            Data::File(bytes) => (FileKind::File, bytes.len() as u64),
            Data::Dir => (FileKind::Dir, 4096),
            Data::Symlink(t) => (FileKind::Symlink, t.as_os_str().len() as u64),
            Data::Other => (FileKind::Other, 0),
        };
        Ok(Metadata {
            kind,
            len,
            modified: node.mtime,
            changed: node.ctime,
            mode: node.mode,
            uid: node.uid,
            gid: node.gid,
            dev: DEV,
            ino,
        })
    }

    fn add(&mut self, path: PathBuf, data: Data, mode: u32) -> u64 {
        let ino = self.next_ino;
        self.next_ino += 1;
        let mtime = self.tick();
        self.inodes.insert(
            ino,
            Inode {
                data,
                mode,
                uid: 0,
                gid: 0,
                mtime,
                ctime: mtime,
            },
        );
        self.entries.insert(path, ino);
        ino
    }

    /// Creates `path`'s missing parent directories (test set-up only).
    fn mkdirs(&mut self, path: &Path) {
        let mut cur = PathBuf::from("/");
        for c in path.components() {
            if let Component::Normal(name) = c {
                cur.push(name);
                if !self.entries.contains_key(&cur) {
                    self.add(cur.clone(), Data::Dir, 0o755);
                }
            }
        }
    }
}

fn push_components(out: &mut Vec<OsString>, path: &Path) {
    for c in path.components() {
        match c {
            Component::Normal(n) => out.push(n.to_os_string()),
            Component::ParentDir => out.push(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
}

impl Default for MemFs {
    fn default() -> Self {
        Self::new()
    }
}

impl MemFs {
    /// An empty filesystem holding only the root directory `/`.
    pub fn new() -> Self {
        let mut inodes = HashMap::new();
        let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_600); // 2026-01-01T00:00:00Z
        inodes.insert(
            ROOT_INO,
            Inode {
                data: Data::Dir,
                mode: 0o755,
                uid: 0,
                gid: 0,
                mtime: start,
                ctime: start,
            },
        );
        let mut entries = BTreeMap::new();
        entries.insert(PathBuf::from("/"), ROOT_INO);
        MemFs {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    inodes,
                    entries,
                    next_ino: ROOT_INO + 1,
                    time: start,
                    clock: None,
                    counts: HashMap::new(),
                    faults: Vec::new(),
                    crashed: false,
                    locks: HashSet::new(),
                    lock_timeouts: HashSet::new(),
                    read_holds: HashMap::new(),
                }),
                lock_cv: Condvar::new(),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every mutation of the state completes before the guard drops, so a poisoned lock still
        // guards a consistent state.
        self.shared.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    // ----- set-up and inspection (not counted, never failed) -----

    /// Creates or overwrites a regular file (mode `0o644`), creating missing parent directories.
    pub fn write_file(&self, path: impl AsRef<Path>, bytes: &[u8]) {
        let path = absolute(path.as_ref());
        let mut st = self.state();
        if let Some(parent) = path.parent() {
            st.mkdirs(parent);
        }
        if let Ok(Walk::Found(_, ino)) = st.walk(&path, true) {
            let now = st.tick();
            if let Some(node) = st.inodes.get_mut(&ino) {
                node.data = Data::File(bytes.to_vec());
                node.mtime = now;
                node.ctime = now;
                return;
            }
        }
        if let Ok(Walk::MissingLast(dir, name)) = st.walk(&path, true) {
            st.add(dir.join(name), Data::File(bytes.to_vec()), 0o644);
        }
    }

    /// Creates a directory and its missing parents (mode `0o755`), for setting a test up: not
    /// counted, never failed, links in the way followed. The seam's own operation, counted and
    /// fallible like every other, is [`Fs::create_dir_all`].
    pub fn make_dirs(&self, path: impl AsRef<Path>) {
        self.state().mkdirs(&absolute(path.as_ref()));
    }

    /// Creates a symbolic link at `link` holding `target` (which need not exist).
    pub fn symlink(&self, target: impl AsRef<Path>, link: impl AsRef<Path>) {
        let link = absolute(link.as_ref());
        let mut st = self.state();
        if let Some(parent) = link.parent() {
            st.mkdirs(parent);
        }
        st.add(link, Data::Symlink(target.as_ref().to_path_buf()), 0o777);
    }

    /// Creates a node that is neither file, directory nor link (a FIFO, socket or device).
    pub fn create_special(&self, path: impl AsRef<Path>) {
        let path = absolute(path.as_ref());
        let mut st = self.state();
        if let Some(parent) = path.parent() {
            st.mkdirs(parent);
        }
        st.add(path, Data::Other, 0o644);
    }

    /// The contents of the regular file `path` leads to, or `None`.
    pub fn file(&self, path: impl AsRef<Path>) -> Option<Vec<u8>> {
        let st = self.state();
        let (_, ino) = st.found(path.as_ref(), true).ok()?;
        match &st.inodes.get(&ino)?.data {
            Data::File(bytes) => Some(bytes.clone()),
            _ => None,
        }
    }

    /// Every entry's physical path, sorted ("/" included).
    pub fn paths(&self) -> Vec<PathBuf> {
        self.state().entries.keys().cloned().collect()
    }

    /// Sets the modification time of what `path` leads to.
    pub fn set_mtime(&self, path: impl AsRef<Path>, time: SystemTime) {
        self.edit(path.as_ref(), |node| node.mtime = time);
    }

    /// Sets the permission bits of what `path` leads to.
    pub fn set_mode(&self, path: impl AsRef<Path>, mode: u32) {
        self.edit(path.as_ref(), |node| node.mode = mode & 0o7777);
    }

    /// Sets the owner and group of what `path` leads to.
    pub fn set_owner(&self, path: impl AsRef<Path>, uid: u32, gid: u32) {
        self.edit(path.as_ref(), |node| {
            node.uid = uid;
            node.gid = gid;
        });
    }

    /// Changes what `path` leads to, moving its status-change time as the operating system does.
    fn edit(&self, path: &Path, f: impl FnOnce(&mut Inode)) {
        let mut st = self.state();
        let now = st.tick();
        if let Ok((_, ino)) = st.found(path, true)
            && let Some(node) = st.inodes.get_mut(&ino)
        {
            f(node);
            node.ctime = now;
        }
    }

    // ----- fault injection -----

    /// Fails the `n`th (1-based) call of `op` counted from now, once, with OS error `errno`.
    pub fn fail_nth(&self, op: Op, n: u64, errno: i32) {
        let mut st = self.state();
        let at = st.counts.get(&op).copied().unwrap_or(0) + n;
        st.faults.push(Fault {
            op,
            at: Some(at),
            path: None,
            errno,
            crash: false,
        });
    }

    /// Fails every call of `op` on `path` (as the caller names it) with OS error `errno`, until
    /// [`MemFs::clear_faults`].
    pub fn fail_path(&self, op: Op, path: impl AsRef<Path>, errno: i32) {
        let path = absolute(path.as_ref());
        self.state().faults.push(Fault {
            op,
            at: None,
            path: Some(path),
            errno,
            crash: false,
        });
    }

    /// Simulates the process dying at the `n`th call of `op` from now: that call fails with `EIO` and
    /// does nothing, and so does every later call of any operation until [`MemFs::restart`].
    pub fn crash_at(&self, op: Op, n: u64) {
        let mut st = self.state();
        let at = st.counts.get(&op).copied().unwrap_or(0) + n;
        st.faults.push(Fault {
            op,
            at: Some(at),
            path: None,
            errno: libc::EIO,
            crash: true,
        });
    }

    /// Whether a crash armed by [`MemFs::crash_at`] has happened.
    pub fn crashed(&self) -> bool {
        self.state().crashed
    }

    /// Starts a "new process" after a crash: clears the crash, every fault and every held lock (the OS
    /// releases a dead holder's locks). The files stay as the crash left them.
    pub fn restart(&self) {
        let mut st = self.state();
        st.crashed = false;
        st.faults.clear();
        st.locks.clear();
        drop(st);
        self.shared.lock_cv.notify_all();
    }

    /// Removes every armed fault.
    pub fn clear_faults(&self) {
        self.state().faults.clear();
    }

    /// How many calls of `op` were made so far.
    pub fn count(&self, op: Op) -> u64 {
        self.state().counts.get(&op).copied().unwrap_or(0)
    }

    /// Makes every [`Fs::lock`] of `path` time out at once.
    pub fn lock_times_out(&self, path: impl AsRef<Path>) {
        self.state().lock_timeouts.insert(absolute(path.as_ref()));
    }

    /// Makes the next read of `path` ([`Fs::read`] or [`Fs::read_chunks`]) wait until the returned
    /// hold is released (or dropped).
    pub fn hold_reads(&self, path: impl AsRef<Path>) -> ReadHold {
        let hold = Arc::new(HoldState::default());
        self.state()
            .read_holds
            .insert(absolute(path.as_ref()), Arc::clone(&hold));
        ReadHold { hold }
    }

    fn wait_read_hold(&self, path: &Path) {
        let hold = self.state().read_holds.remove(&absolute(path));
        if let Some(hold) = hold {
            let mut flags = hold.flags.lock().unwrap_or_else(PoisonError::into_inner);
            flags.0 = true;
            hold.cv.notify_all();
            while !flags.1 {
                flags = hold.cv.wait(flags).unwrap_or_else(PoisonError::into_inner);
            }
        }
    }

    fn file_bytes(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.wait_read_hold(path);
        let mut st = self.state();
        st.enter(Op::Read, Some(path))?;
        let (_, ino) = st.found(path, true)?;
        match &st.inode(ino)?.data {
            Data::File(bytes) => Ok(bytes.clone()),
            Data::Dir => Err(err(libc::EISDIR)),
            _ => Err(crate::not_regular_file()),
        }
    }
}

/// A read held by [`MemFs::hold_reads`]. Dropping it releases the read.
#[derive(Debug)]
pub struct ReadHold {
    hold: Arc<HoldState>,
}

impl ReadHold {
    /// Waits up to `timeout` for a reader to arrive at the hold; true if one did.
    pub fn wait_entered(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut flags = self.hold.flags.lock().unwrap_or_else(PoisonError::into_inner);
        while !flags.0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            flags = self
                .hold
                .cv
                .wait_timeout(flags, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        true
    }

    /// Lets the held read proceed.
    pub fn release(&self) {
        let mut flags = self.hold.flags.lock().unwrap_or_else(PoisonError::into_inner);
        flags.1 = true;
        self.hold.cv.notify_all();
    }
}

impl Drop for ReadHold {
    fn drop(&mut self) {
        self.release();
    }
}

struct MemWriter {
    fs: MemFs,
    ino: u64,
    append: bool,
}

impl MemWriter {
    fn with_file<R>(&self, op: Op, f: impl FnOnce(&mut Inode, SystemTime) -> R) -> io::Result<R> {
        let mut st = self.fs.state();
        st.enter(op, None)?;
        let now = st.tick();
        let node = st.inodes.get_mut(&self.ino).ok_or_else(|| err(libc::EBADF))?;
        Ok(f(node, now))
    }
}

impl FileWriter for MemWriter {
    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        let op = if self.append { Op::Append } else { Op::Write };
        self.with_file(op, |node, now| {
            if let Data::File(data) = &mut node.data {
                data.extend_from_slice(bytes);
            }
            node.mtime = now;
            node.ctime = now;
        })
    }
    fn sync(&mut self) -> io::Result<()> {
        self.with_file(Op::Fsync, |_, _| ())
    }
    fn set_mode(&mut self, mode: u32) -> io::Result<()> {
        self.with_file(Op::SetMode, |node, now| {
            node.mode = mode & 0o7777;
            node.ctime = now;
        })
    }
    fn set_owner(&mut self, uid: u32, gid: u32) -> io::Result<()> {
        self.with_file(Op::SetOwner, |node, now| {
            node.uid = uid;
            node.gid = gid;
            node.ctime = now;
        })
    }
    fn set_len(&mut self, len: u64) -> io::Result<()> {
        self.with_file(Op::SetLen, |node, now| {
            if let Data::File(data) = &mut node.data {
                data.resize(usize::try_from(len).unwrap_or(usize::MAX), 0);
            }
            node.mtime = now;
            node.ctime = now;
        })
    }
    fn metadata(&self) -> io::Result<Metadata> {
        self.fs.state().meta(self.ino)
    }
}

struct MemLock {
    fs: MemFs,
    path: PathBuf,
}

impl LockGuard for MemLock {}

impl Drop for MemLock {
    fn drop(&mut self) {
        self.fs.state().locks.remove(&self.path);
        self.fs.shared.lock_cv.notify_all();
    }
}

impl Fs for MemFs {
    fn use_clock(&self, clock: Arc<dyn crate::Clock>) {
        self.state().clock = Some(ClockSource(clock));
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.file_bytes(path)
    }

    fn read_chunks(
        &self,
        path: &Path,
        chunk_size: usize,
        sink: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<u64> {
        let bytes = self.file_bytes(path)?;
        for chunk in bytes.chunks(chunk_size.max(1)) {
            sink(chunk)?;
        }
        Ok(bytes.len() as u64)
    }

    fn metadata(&self, path: &Path) -> io::Result<Metadata> {
        let mut st = self.state();
        st.enter(Op::Stat, Some(path))?;
        let (_, ino) = st.found(path, true)?;
        st.meta(ino)
    }

    fn symlink_metadata(&self, path: &Path) -> io::Result<Metadata> {
        let mut st = self.state();
        st.enter(Op::Stat, Some(path))?;
        let (_, ino) = st.found(path, false)?;
        st.meta(ino)
    }

    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>> {
        let mut st = self.state();
        st.enter(Op::List, Some(path))?;
        let (dir, ino) = st.found(path, true)?;
        if !matches!(st.inode(ino)?.data, Data::Dir) {
            return Err(err(libc::ENOTDIR));
        }
        let children: Vec<PathBuf> = st
            .entries
            .range(dir.clone()..)
            .skip(1)
            .map(|(p, _)| p)
            .take_while(|p| p.starts_with(&dir))
            .filter(|p| p.parent() == Some(dir.as_path()))
            .cloned()
            .collect();
        Ok(children
            .into_iter()
            .map(|child| {
                let name = child.file_name().map(|n| n.to_os_string()).unwrap_or_default();
                let metadata = st.found(&child, true).and_then(|(_, ino)| st.meta(ino));
                DirEntry { name, metadata }
            })
            .collect())
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        let mut st = self.state();
        st.enter(Op::Resolve, Some(path))?;
        st.found(path, true).map(|(p, _)| p)
    }

    fn read_link(&self, path: &Path) -> io::Result<PathBuf> {
        let mut st = self.state();
        st.enter(Op::Resolve, Some(path))?;
        let (_, ino) = st.found(path, false)?;
        match &st.inode(ino)?.data {
            Data::Symlink(target) => Ok(target.clone()),
            _ => Err(err(libc::EINVAL)),
        }
    }

    fn create_new(&self, path: &Path, mode: u32) -> io::Result<Box<dyn FileWriter>> {
        let mut st = self.state();
        st.enter(Op::Create, Some(path))?;
        match st.walk(path, false)? {
            Walk::Found(..) => Err(err(libc::EEXIST)),
            Walk::MissingLast(dir, name) => {
                let ino = st.add(dir.join(name), Data::File(Vec::new()), mode & 0o7777);
                Ok(Box::new(MemWriter {
                    fs: self.clone(),
                    ino,
                    append: false,
                }))
            }
        }
    }

    fn open_append(&self, path: &Path, create: bool) -> io::Result<Box<dyn FileWriter>> {
        let mut st = self.state();
        st.enter(Op::OpenAppend, Some(path))?;
        let ino = match st.walk(path, true)? {
            Walk::Found(_, ino) => match st.inode(ino)?.data {
                Data::File(_) => ino,
                Data::Dir => return Err(err(libc::EISDIR)),
                _ => return Err(err(libc::EINVAL)),
            },
            Walk::MissingLast(dir, name) if create => st.add(dir.join(name), Data::File(Vec::new()), 0o644),
            Walk::MissingLast(..) => return Err(err(libc::ENOENT)),
        };
        Ok(Box::new(MemWriter {
            fs: self.clone(),
            ino,
            append: true,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut st = self.state();
        st.enter(Op::Rename, Some(to))?;
        let (src, ino) = st.found(from, false)?;
        let dst = match st.walk(to, false)? {
            Walk::Found(p, old) => {
                if matches!(st.inode(old)?.data, Data::Dir) {
                    return Err(err(libc::EISDIR));
                }
                p
            }
            Walk::MissingLast(dir, name) => dir.join(name),
        };
        if matches!(st.inode(ino)?.data, Data::Dir) {
            return Err(err(libc::EXDEV)); // directory renames are not needed by any core
        }
        st.entries.remove(&src);
        st.entries.insert(dst, ino);
        let now = st.tick();
        if let Some(node) = st.inodes.get_mut(&ino) {
            node.ctime = now;
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut st = self.state();
        st.enter(Op::Remove, Some(path))?;
        let (p, ino) = st.found(path, false)?;
        if matches!(st.inode(ino)?.data, Data::Dir) {
            return Err(err(libc::EISDIR));
        }
        st.entries.remove(&p);
        st.tick();
        Ok(())
    }

    fn create_dir(&self, path: &Path, mode: u32) -> io::Result<()> {
        let mut st = self.state();
        st.enter(Op::CreateDir, Some(path))?;
        match st.walk(path, false)? {
            Walk::Found(..) => Err(err(libc::EEXIST)),
            Walk::MissingLast(dir, name) => {
                st.add(dir.join(name), Data::Dir, mode & 0o7777);
                Ok(())
            }
        }
    }

    fn create_dir_all(&self, path: &Path, mode: u32) -> io::Result<()> {
        let mut st = self.state();
        st.enter(Op::Stat, Some(path))?;
        let mut names: Vec<OsString> = Vec::new();
        push_components(&mut names, &absolute(path));
        // The path as the caller names it, one component at a time (what `fail_path` matches).
        let mut named = PathBuf::from("/");
        // The physical directory reached so far.
        let mut dir = PathBuf::from("/");
        let mut creating = false;
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            let in_the_way = || err(if last { libc::EEXIST } else { libc::ENOTDIR });
            named.push(name);
            if !creating {
                // As `OsFs`: an existing component is looked up following links; a link to nothing
                // is never followed to create its target.
                let here = match st.walk(&named, false)? {
                    Walk::MissingLast(..) => None,
                    Walk::Found(_, ino) => Some(ino),
                };
                match here {
                    None => {
                        if names[i..].iter().any(|n| n == "..") {
                            return Err(crate::os_fs::parent_in_new_part());
                        }
                        creating = true;
                    }
                    Some(ino) => {
                        match st.inode(ino)?.data {
                            Data::Dir | Data::Symlink(_) => {}
                            Data::File(_) | Data::Other => return Err(in_the_way()),
                        }
                        match st.walk(&named, true) {
                            Ok(Walk::Found(p, ino)) if matches!(st.inode(ino)?.data, Data::Dir) => {
                                dir = p;
                                continue;
                            }
                            Ok(Walk::Found(..)) => return Err(in_the_way()),
                            Ok(Walk::MissingLast(..)) => return Err(err(libc::ELOOP)),
                            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Err(err(libc::ELOOP)),
                            Err(e) => return Err(e),
                        }
                    }
                }
            }
            st.enter(Op::CreateDir, Some(&named))?;
            dir.push(name);
            st.add(dir.clone(), Data::Dir, mode & 0o7777);
        }
        Ok(())
    }

    fn sync_dir(&self, path: &Path) -> io::Result<()> {
        let mut st = self.state();
        st.enter(Op::SyncDir, Some(path))?;
        let (_, ino) = st.found(path, true)?;
        match st.inode(ino)?.data {
            Data::Dir => Ok(()),
            _ => Err(err(libc::ENOTDIR)),
        }
    }

    fn lock(&self, path: &Path, timeout: Duration) -> io::Result<Box<dyn LockGuard>> {
        let mut st = self.state();
        st.enter(Op::Lock, Some(path))?;
        let key = match st.walk(path, true)? {
            Walk::Found(p, ino) => match st.inode(ino)?.data {
                Data::Dir => return Err(err(libc::EISDIR)),
                _ => p,
            },
            Walk::MissingLast(dir, name) => {
                let p = dir.join(name);
                st.add(p.clone(), Data::File(Vec::new()), 0o644);
                p
            }
        };
        if st.lock_timeouts.contains(&absolute(path)) || st.lock_timeouts.contains(&key) {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "timed out waiting for the lock",
            ));
        }
        let deadline = Instant::now() + timeout;
        while st.locks.contains(&key) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "timed out waiting for the lock",
                ));
            }
            st = self
                .shared
                .lock_cv
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        st.locks.insert(key.clone());
        Ok(Box::new(MemLock {
            fs: self.clone(),
            path: key,
        }))
    }
}
