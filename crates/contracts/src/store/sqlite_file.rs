//! What the SQLite store judges of its file, and of the files SQLite keeps beside it, before SQLite
//! opens them (files beside it, and files someone else can write).
//!
//! SQLite trusts whatever lies beside a database: it replays a `-wal` of another database into this
//! one (and folds it into the file when the last connection closes), plays back a `-journal` it finds
//! "hot", and creates the sidecars it misses, with the database's permission bits, even for a
//! connection that only reads. So before any SQLite connection touches a store, this module:
//!
//! - refuses a file, sidecar or directory that the family's owner rule does not trust (OpenSSH's
//!   `StrictModes`: yours or root's, writable by nobody else); a store opened only to read may be
//!   another user's, and is read under SQLite's defensive settings (the message says what to
//!   change);
//! - refuses a file that is empty, or that is not an SQLite database carrying the contracts
//!   application id and a known schema version (only a missing path is ever created: [`create`]
//!   initialises the database under a temporary name and links it into place, so no other opener ever
//!   sees it half made);
//! - refuses a hot rollback journal, and a write-ahead log that no live process holds open and that is
//!   not this database's: its header must be valid for the database's page size, and the database it
//!   would produce — the file with the log's committed frames applied, built in memory — must be a
//!   contracts database holding only the contracts schema and passing `PRAGMA integrity_check`;
//! - refuses a database holding any object (table, index, trigger, view) the contracts schema does
//!   not define.
//!
//! The log format, its replay in memory and the judgement of the database it gives live in
//! `sqlite_log`. A refusal touches nothing: every check here reads, and SQLite reads only through connections that
//! write nothing (`immutable=1` on the file alone, or the in-memory replay). A log that a live process
//! holds open (another process holds SQLite's lock on the `-shm`, or this process has the store open)
//! is that process's, and is left to SQLite.
//!
//! # Design notes
//!
//! *Why not let SQLite judge the log?* Its recovery runs as soon as a connection first reads, and the
//! last connection to close checkpoints: a foreign log is already in the file by the time any pragma
//! could look at it.
//!
//! *Why a replay in memory, not a copy on disk?* A read-only view must not write a byte anywhere, and
//! a copy would need a directory to write into. The replay holds the database and its log in memory
//! once, at opening, and only when a log was left behind with no process holding it (after a crash).
//! Above [`MAX_REPLAY_BYTES`] the replay is skipped and the log is judged by its header, its frames'
//! checksums and the database header it carries, if any.
//!
//! *POSIX locks.* Closing any descriptor of a file drops every lock this process holds on it, SQLite's
//! included. So the checks that open the database or its sidecars run only while no store of this
//! process has the file open ([`OpenHere`]); a store that is open here has judged it already.

use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rusqlite::{Connection, OpenFlags};
use shiftwork_seams::{FileKind, Fs, Metadata};

use super::sqlite_log::{committed_frames, file_order, judge_image, judge_order, not_ours, replay};
use crate::error::StoreError;

/// The most bytes (database plus log) replayed in memory to judge a log left behind.
pub const MAX_REPLAY_BYTES: u64 = 256 * 1024 * 1024;

/// The byte of the `-shm` file on which every SQLite connection of a live process holds a shared
/// lock (SQLite's "dead man switch", `UNIX_SHM_DMS` = (22 + 8) × 4 + 8).
const SHM_DMS_BYTE: i64 = 128;

/// The database and the files SQLite keeps beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Files {
    /// The database (its canonical path when it exists).
    pub db: PathBuf,
    /// `<db>-wal`.
    pub wal: PathBuf,
    /// `<db>-shm`.
    pub shm: PathBuf,
    /// `<db>-journal`.
    pub journal: PathBuf,
    /// The directory holding them.
    pub dir: PathBuf,
}

impl Files {
    pub(crate) fn of(db: &Path) -> Files {
        let with = |suffix: &str| {
            let mut name = OsString::from(db.as_os_str());
            name.push(suffix);
            PathBuf::from(name)
        };
        Files {
            db: db.to_path_buf(),
            wal: with("-wal"),
            shm: with("-shm"),
            journal: with("-journal"),
            dir: shiftwork_seams::durable::parent_dir(db),
        }
    }
}

/// The name of `path` as a refusal shows it: its last component, with control and bidi characters
/// escaped (the directory is the user's own setting, and no answer carries a path).
pub(crate) fn shown(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy());
    shiftwork_seams::echo::escape_controls(&shiftwork_seams::echo::clip_echo(&name)).into_owned()
}

pub(crate) fn unavailable(message: String) -> StoreError {
    StoreError::unavailable(message)
}

// ---------------------------------------------------------------------------------------------
// Stores open in this process.

/// The files this process has open as a store, by device and inode: how many stores hold each, and
/// how many of them write (a writing store keeps SQLite connections, and their locks, on the file).
static OPEN: Mutex<Option<HashMap<(u64, u64), Holders>>> = Mutex::new(None);
/// Held while a store of this process judges a file and registers it, so that no other thread opens
/// SQLite connections on the file while descriptors of it are opened and closed here.
static JUDGING: Mutex<()> = Mutex::new(());

/// The stores of this process holding one file.
#[derive(Debug, Default, Clone, Copy)]
struct Holders {
    stores: usize,
    writers: usize,
}

fn open_table() -> MutexGuard<'static, Option<HashMap<(u64, u64), Holders>>> {
    // The table holds plain counts; a panic elsewhere cannot leave it half-updated.
    OPEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The turn of this thread to judge and register a file (see [`JUDGING`]).
pub(crate) fn judging() -> MutexGuard<'static, ()> {
    JUDGING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A store of this process holds the file open while this lives.
#[derive(Debug)]
pub(crate) struct OpenHere {
    key: (u64, u64),
    writer: bool,
}

impl OpenHere {
    /// Registers the file of `meta` as open in this process, by a store that writes (`writer`) or
    /// only reads.
    pub(crate) fn register(meta: &Metadata, writer: bool) -> OpenHere {
        let key = (meta.dev, meta.ino);
        let mut table = open_table();
        let holders = table.get_or_insert_with(HashMap::new).entry(key).or_default();
        holders.stores += 1;
        holders.writers += usize::from(writer);
        OpenHere { key, writer }
    }

    /// True when a writing store of this process other than this one holds the same file (its
    /// connections keep the log live).
    pub(crate) fn other_writers(&self) -> bool {
        open_table()
            .as_ref()
            .and_then(|t| t.get(&self.key))
            .is_some_and(|h| h.writers > usize::from(self.writer))
    }

    /// True when a store of this process has the file of `meta` open.
    pub(crate) fn is_open(meta: &Metadata) -> bool {
        open_table()
            .as_ref()
            .and_then(|t| t.get(&(meta.dev, meta.ino)))
            .is_some_and(|h| h.stores > 0)
    }
}

impl Drop for OpenHere {
    fn drop(&mut self) {
        let mut table = open_table();
        if let Some(t) = table.as_mut()
            && let Some(h) = t.get_mut(&self.key)
        {
            h.stores = h.stores.saturating_sub(1);
            h.writers = h.writers.saturating_sub(usize::from(self.writer));
            if h.stores == 0 {
                t.remove(&self.key);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Whose files.

/// Judges `meta` (of `path`, described as `what`) by the family's owner rule
/// ([`shiftwork_seams::owner`], OpenSSH's `StrictModes`): this process's user's or root's, and
/// writable by nobody else. A store opened for reading only (`reading`) may also be another user's:
/// nothing is written to it, and what SQLite reads from it is judged by the schema check and read
/// with `trusted_schema` off and SQLite's defensive mode (see [`harden`]). One that others may write
/// is refused either way.
fn trusted(meta: &Metadata, path: &Path, what: &str, reading: bool) -> Result<(), StoreError> {
    use shiftwork_seams::owner::{Untrusted, effective_uid};
    let me = effective_uid();
    match shiftwork_seams::owner::trusted(meta.uid, meta.mode, me) {
        Ok(()) => Ok(()),
        Err(Untrusted::OtherOwner { .. }) if reading => Ok(()),
        Err(Untrusted::OtherOwner { uid }) => Err(unavailable(format!(
            "{what} {} belongs to another user (uid {uid}), who could change the store under this process; a store is trusted for writing when it is yours or root's. Use a store in a directory of your own, chown it to uid {me}, or open it read-only",
            shown(path),
        ))),
        Err(Untrusted::WritableByOthers { mode }) => Err(unavailable(format!(
            "{what} {} can be written by other users (mode {mode:04o}), who could change the store or plant files beside it; remove their write access (chmod go-w)",
            shown(path),
        ))),
    }
}

/// Refuses a directory that the family's owner rule does not trust (see [`trusted`]): another user
/// could plant a `-wal` beside the store.
pub(crate) fn check_directory(fs: &dyn Fs, files: &Files, reading: bool) -> Result<(), StoreError> {
    let dir = fs.metadata(&files.dir).map_err(|e| {
        unavailable(format!(
            "the database directory cannot be read: {}",
            shiftwork_seams::os_reason(&e)
        ))
    })?;
    trusted(&dir, &files.dir, "the database directory", reading)
}

/// Refuses a store whose directory, file or sidecars the owner rule does not trust (see
/// [`trusted`]; `reading` for a store opened for reading only), and sidecars that are not regular
/// files (a link or a FIFO in place of a `-wal` would send SQLite's writes elsewhere or block it).
pub(crate) fn check_ownership(
    fs: &dyn Fs,
    files: &Files,
    db: &Metadata,
    reading: bool,
) -> Result<(), StoreError> {
    check_directory(fs, files, reading)?;
    trusted(db, &files.db, "the database file", reading)?;
    for side in [&files.wal, &files.shm, &files.journal] {
        match fs.symlink_metadata(side) {
            Ok(m) if m.kind == FileKind::File => trusted(&m, side, "the file", reading)?,
            Ok(_) => {
                return Err(unavailable(format!(
                    "{} beside the database is not a regular file; SQLite would write through it. Remove it if no process uses the store",
                    shown(side)
                )));
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(unavailable(format!(
                    "{} beside the database cannot be read: {}",
                    shown(side),
                    shiftwork_seams::os_reason(&e)
                )));
            }
        }
    }
    Ok(())
}

/// True when this process may write `path` (judged by the kernel, without opening it: closing a
/// descriptor would drop the locks SQLite holds on the file in this process).
pub(crate) fn writable(path: &Path) -> bool {
    let Some(c) = cstring(path) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated path; faccessat only reads it.
    unsafe { libc::faccessat(libc::AT_FDCWD, c.as_ptr(), libc::W_OK, libc::AT_EACCESS) == 0 }
}

fn cstring(path: &Path) -> Option<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).ok()
}

// ---------------------------------------------------------------------------------------------
// The database header.

/// What the first 100 bytes of a database say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DbHeader {
    /// Bytes per page.
    pub page_size: u32,
    /// `PRAGMA application_id`.
    pub application_id: i32,
    /// `PRAGMA user_version`.
    pub user_version: i32,
}

pub(crate) fn be32(bytes: &[u8], at: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&bytes[at..at + 4]);
    u32::from_be_bytes(b)
}

/// The header of an SQLite database, or `None` when `bytes` does not start like one.
pub(crate) fn parse_header(bytes: &[u8]) -> Option<DbHeader> {
    if bytes.len() < 100 || &bytes[..16] != b"SQLite format 3\0" {
        return None;
    }
    let raw = u32::from(u16::from_be_bytes([bytes[16], bytes[17]]));
    let page_size = if raw == 1 { 65_536 } else { raw };
    if !(512..=65_536).contains(&page_size) || !page_size.is_power_of_two() {
        return None;
    }
    Some(DbHeader {
        page_size,
        application_id: be32(bytes, 68) as i32,
        user_version: be32(bytes, 60) as i32,
    })
}

/// Refuses a header that is not a contracts database of a version this build knows.
pub(crate) fn judge_header(header: &DbHeader, file: &Path) -> Result<(), StoreError> {
    use super::sqlite::{APPLICATION_ID, SCHEMA_VERSION};
    if header.application_id != APPLICATION_ID {
        return Err(unavailable(if header.application_id == 0 {
            format!(
                "the file {} is an SQLite database without the contracts application id, not a contracts database; only a path that does not exist yet is created",
                shown(file)
            )
        } else {
            format!(
                "the file {} is an SQLite database of another application (application id {:#010x}), not a contracts database",
                shown(file),
                header.application_id
            )
        }));
    }
    if header.user_version > SCHEMA_VERSION {
        return Err(unavailable(format!(
            "the database has schema version {}, newer than this build's {SCHEMA_VERSION}",
            header.user_version
        )));
    }
    if header.user_version < 1 {
        return Err(unavailable(format!(
            "the database has unknown schema version {}",
            header.user_version
        )));
    }
    Ok(())
}

/// The first 100 bytes of `path` (fewer when the file is shorter).
fn read_head(fs: &dyn Fs, path: &Path) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(100);
    let stop = io::ErrorKind::Interrupted;
    let r = fs.read_chunks(path, 4096, &mut |chunk| {
        let room = 100 - head.len();
        head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if head.len() == 100 {
            return Err(io::Error::from(stop));
        }
        Ok(())
    });
    match r {
        Ok(_) => Ok(head),
        Err(e) if e.kind() == stop && head.len() == 100 => Ok(head),
        Err(e) => Err(e),
    }
}

// ---------------------------------------------------------------------------------------------
// The sidecars.

/// True when another process holds the database open in WAL mode: it holds SQLite's shared lock on
/// the `-shm` file's dead-man-switch byte (the test SQLite itself makes). Call only while no store of
/// this process has the file open (see the module notes on POSIX locks).
pub(crate) fn held_by_another_process(shm: &Path) -> Result<bool, StoreError> {
    let Some(c) = cstring(shm) else {
        return Ok(false);
    };
    // SAFETY: `c` is a valid path; the descriptor is closed below on every path; `lock` is plain data
    // that fcntl fills in.
    unsafe {
        let fd = libc::open(
            c.as_ptr(),
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        );
        if fd < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::NotFound {
                return Ok(false);
            }
            return Err(unavailable(format!(
                "{} beside the database cannot be read: {}",
                shown(shm),
                shiftwork_seams::os_reason(&e)
            )));
        }
        let mut lock: libc::flock = std::mem::zeroed();
        lock.l_type = libc::F_WRLCK as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        lock.l_start = SHM_DMS_BYTE as libc::off_t;
        lock.l_len = 1;
        let rc = libc::fcntl(fd, libc::F_GETLK, &mut lock);
        let e = io::Error::last_os_error();
        libc::close(fd);
        if rc != 0 {
            return Err(unavailable(format!(
                "the locks on {} cannot be read: {}",
                shown(shm),
                shiftwork_seams::os_reason(&e)
            )));
        }
        Ok(lock.l_type != libc::F_UNLCK as libc::c_short)
    }
}

/// Refuses a rollback journal that SQLite would play back into the database: a `-journal` that is
/// not empty and does not start with a zero byte (SQLite's own test of a hot journal). This store
/// never writes one.
fn judge_journal(fs: &dyn Fs, files: &Files) -> Result<(), StoreError> {
    let Ok(meta) = fs.symlink_metadata(&files.journal) else {
        return Ok(());
    };
    if meta.len == 0 {
        return Ok(());
    }
    let head = read_head(fs, &files.journal).map_err(|e| {
        unavailable(format!(
            "{} beside the database cannot be read: {}",
            shown(&files.journal),
            shiftwork_seams::os_reason(&e)
        ))
    })?;
    if head.first().is_some_and(|b| *b != 0) {
        return Err(unavailable(format!(
            "a rollback journal {} lies beside the database, and SQLite would play it back into the store (this store never writes one); nothing was changed. If no process uses the store, move {} aside and open the store again",
            shown(&files.journal),
            shown(&files.journal)
        )));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The schema.

/// Collapses whitespace runs to one space and drops a trailing `;`.
fn normalized(sql: &str) -> String {
    let joined = sql.split_whitespace().collect::<Vec<_>>().join(" ");
    joined.trim_end_matches(';').trim_end().to_owned()
}

/// Refuses a database holding an object the contracts schema of its version does not define: a
/// trigger, a view, a table or an index of another name, or a table or index of ours defined
/// otherwise. Reads `sqlite_master` only.
pub(crate) fn check_schema(conn: &Connection, version: i32, file: &Path) -> Result<(), StoreError> {
    let refuse = |kind: &str, name: &str| {
        unavailable(format!(
            "the database {} holds {kind} '{}' that the contracts schema does not define, and a store holding objects it did not create is refused (a trigger could redirect or hide work); drop it if you made it, or restore the store from a copy you trust",
            shown(file),
            shiftwork_seams::echo::escape_controls(&shiftwork_seams::echo::clip_echo(name)),
        ))
    };
    let mut stmt = conn
        .prepare("SELECT type, name, tbl_name, sql FROM sqlite_master")
        .map_err(|_| unavailable(String::from("the database catalogue cannot be read")))?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })
        .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
        .map_err(|_| unavailable(String::from("the database catalogue cannot be read")))?;
    let table = normalized(&super::sqlite::table("contracts"));
    let commits = normalized(super::sqlite::COMMITS);
    let indexes: Vec<(String, String)> = super::sqlite::INDEXES
        .split(';')
        .map(normalized)
        .filter(|s| !s.is_empty())
        .filter_map(|s| {
            let name = s
                .split_whitespace()
                .find(|w| w.starts_with("contracts_"))?
                .to_owned();
            Some((name, s))
        })
        .collect();
    for (kind, name, tbl, sql) in rows {
        let sql = sql.as_deref().map(normalized);
        let ok = match kind.as_str() {
            "table" => match name.as_str() {
                "contracts" => {
                    // A table renamed by the version 1 migration keeps its name quoted.
                    let sql =
                        sql.map(|s| s.replacen("CREATE TABLE \"contracts\"", "CREATE TABLE contracts", 1));
                    version < 2 || sql.as_deref() == Some(table.as_str())
                }
                "contracts_commits" => version >= 3 && sql.as_deref() == Some(commits.as_str()),
                "sqlite_sequence" | "sqlite_stat1" | "sqlite_stat4" => true,
                _ => false,
            },
            "index" if tbl == "contracts" => {
                if name.starts_with("sqlite_autoindex_contracts_") {
                    sql.is_none()
                } else {
                    indexes
                        .iter()
                        .any(|(n, s)| *n == name && (version < 2 || sql.as_deref() == Some(s.as_str())))
                }
            }
            _ => false,
        };
        if !ok {
            let what = match kind.as_str() {
                "trigger" => "a trigger",
                "view" => "a view",
                "index" => "an index",
                "table" => "a table",
                _ => "an object",
            };
            return Err(refuse(what, &name));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The judgement.

/// What was found beside a database that passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Beside {
    /// No log with committed frames: the file holds every record.
    Quiet,
    /// A process holds the database open (another one, or a store of this one); its log is its own.
    Live,
    /// A log left behind by a process that is gone, judged this database's.
    LeftBehind,
}

/// An existing database file judged whole, with no SQLite connection that could write: its kind,
/// owner and mode and those of its directory and sidecars (`reading`: the store will only read); its
/// header; a hot journal; a log left behind, and the order of that log and the file; its schema
/// objects. `meta` is the file's metadata (following links); the caller holds [`judging`]. A
/// judgement that a writer of another process overtakes (the file rewritten, the log gone meanwhile)
/// is made again; one overtaken every time is left to the checks SQLite's own connections make, as
/// for a live store.
pub(crate) fn judge(
    fs: &dyn Fs,
    files: &Files,
    meta: &Metadata,
    reading: bool,
) -> Result<Beside, StoreError> {
    if meta.kind != FileKind::File {
        return Err(unavailable(format!(
            "the store location {} exists but is not a regular file",
            shown(&files.db)
        )));
    }
    check_ownership(fs, files, meta, reading)?;
    if meta.len == 0 {
        return Err(unavailable(format!(
            "the file {} is empty, so it is not a contracts database; remove it or name another path (only a path that does not exist yet is created)",
            shown(&files.db)
        )));
    }
    if OpenHere::is_open(meta) {
        // A store of this process judged it and holds it: nothing here may open and close its files.
        return Ok(Beside::Live);
    }
    for _ in 0..3 {
        if let Some(beside) = judge_once(fs, files)? {
            return Ok(beside);
        }
    }
    Ok(Beside::Live)
}

/// The files as a writer leaves them, to tell whether one changed them during a judgement.
fn stamp(fs: &dyn Fs, files: &Files) -> (Option<(u64, u64, std::time::SystemTime)>, Option<u64>) {
    (
        fs.metadata(&files.db).ok().map(|m| (m.ino, m.len, m.modified)),
        fs.symlink_metadata(&files.wal).ok().map(|m| m.len),
    )
}

/// One judgement of [`judge`]; `None` when a writer changed the files meanwhile.
fn judge_once(fs: &dyn Fs, files: &Files) -> Result<Option<Beside>, StoreError> {
    let before = stamp(fs, files);
    let head = read_head(fs, &files.db).map_err(|e| {
        unavailable(format!(
            "the database file cannot be read: {}",
            shiftwork_seams::os_reason(&e)
        ))
    })?;
    let Some(header) = parse_header(&head) else {
        return Err(unavailable(format!(
            "the file {} is not an SQLite database; name a contracts database or a path that does not exist yet",
            shown(&files.db)
        )));
    };
    judge_journal(fs, files)?;
    let wal_len = before.1.unwrap_or(0);
    if wal_len > 0 {
        if held_by_another_process(&files.shm)? {
            return Ok(Some(Beside::Live));
        }
        let judged = judge_left_behind(fs, files, &header, before.0.map_or(0, |d| d.1), wal_len)?;
        return Ok(judged.filter(|_| stamp(fs, files) == before));
    }
    judge_header(&header, &files.db)?;
    let conn = open_immutable(&files.db)?;
    let checked = check_schema(&conn, header.user_version, &files.db);
    drop(conn);
    if stamp(fs, files) != before {
        // A writer folded its log in, or began one, while the file was read without locks.
        return Ok(None);
    }
    checked.map(|()| Some(Beside::Quiet))
}

/// Judges a log no live process holds: its committed frames applied to the file, in memory, must give
/// a contracts database (see the module notes; above [`MAX_REPLAY_BYTES`], the log's header, frames
/// and any database header it carries). `None` when a file vanished meanwhile (a writer closing).
fn judge_left_behind(
    fs: &dyn Fs,
    files: &Files,
    header: &DbHeader,
    db_len: u64,
    wal_len: u64,
) -> Result<Option<Beside>, StoreError> {
    let read = |path: &Path, limit: u64| match fs.read_limited(path, limit) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(unavailable(format!(
            "{} cannot be read: {}",
            shown(path),
            shiftwork_seams::os_reason(&e)
        ))),
    };
    let replayable = db_len.saturating_add(wal_len) <= MAX_REPLAY_BYTES;
    let Some(wal) = read(&files.wal, if replayable { MAX_REPLAY_BYTES } else { wal_len })? else {
        return Ok(None);
    };
    let committed = committed_frames(&wal, header.page_size, files)?;
    if committed.frames.is_empty() {
        // Nothing SQLite would replay: the file alone is the database.
        judge_header(header, &files.db)?;
        let conn = open_immutable(&files.db)?;
        check_schema(&conn, header.user_version, &files.db)?;
        return Ok(Some(Beside::Quiet));
    }
    if replayable {
        let Some(db) = read(&files.db, MAX_REPLAY_BYTES)? else {
            return Ok(None);
        };
        judge_image(replay(&db, &wal, &committed, header.page_size), files)?;
        drop(db);
        judge_order(files, file_order(&files.db)?, &wal, &committed, header.page_size)?;
        return Ok(Some(Beside::LeftBehind));
    }
    // Too large to replay here: the file's header, and the newest database header the log carries.
    judge_header(header, &files.db)?;
    if let Some(&(_, at)) = committed.frames.iter().rev().find(|(pgno, _)| *pgno == 1) {
        let carried = parse_header(&wal[at..])
            .ok_or_else(|| not_ours(files, "its first page is not an SQLite header"))?;
        judge_header(&carried, &files.db).map_err(|e| match e {
            StoreError::Unavailable { reason, .. } => not_ours(files, &reason),
            other => other,
        })?;
    }
    judge_order(files, file_order(&files.db)?, &wal, &committed, header.page_size)?;
    Ok(Some(Beside::LeftBehind))
}

/// `path` as an SQLite URI (`file:` with every byte outside the unreserved set percent-encoded).
pub(crate) fn uri(path: &Path, query: &str) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::from("file:");
    for &b in path.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out.push('?');
    out.push_str(query);
    out
}

/// The settings every connection of the store runs with, whoever's file it reads: `trusted_schema`
/// off (no function the schema names runs with this process's rights, no virtual table it names is
/// used) and SQLite's defensive mode (`SQLITE_DBCONFIG_DEFENSIVE`: no write to the schema, to
/// shadow tables or to raw pages, and no journal left off, whatever a statement asks), so that a
/// database written by someone else can be read, and ours written, without its contents choosing what
/// this process does. A reader also sets `query_only`.
pub(crate) fn harden(conn: &Connection, reader: bool) -> Result<(), StoreError> {
    let fail = |_| unavailable(String::from("the connection cannot be configured"));
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)
        .map_err(fail)?;
    conn.execute_batch(if reader {
        "PRAGMA trusted_schema = OFF; PRAGMA query_only = ON;"
    } else {
        "PRAGMA trusted_schema = OFF;"
    })
    .map_err(fail)
}

/// A connection to the file alone that writes nothing and creates nothing: `immutable=1` reads the
/// file without locks, without its log and without creating sidecars.
pub(crate) fn open_immutable(db: &Path) -> Result<Connection, StoreError> {
    open_reader(db, "mode=ro&immutable=1")
}

/// A reading connection to a database a live process holds: read-only (it takes part in the live
/// processes' shared-memory index, as every reader must, and writes nothing to the database or its
/// log).
pub(crate) fn open_live_reader(db: &Path) -> Result<Connection, StoreError> {
    open_reader(db, "mode=ro")
}

/// A reading connection to a database whose log was left behind, too large to replay in memory: a
/// read-only connection with a read-only `-shm` (`readonly_shm`), which SQLite recovers into heap
/// memory when no process holds the index (it writes nothing and needs the `-wal` and `-shm` to
/// exist).
pub(crate) fn open_unlocked_reader(db: &Path) -> Result<Connection, StoreError> {
    open_reader(db, "mode=ro&readonly_shm=1")
}

/// A read-only connection to `db` with the URI parameters `query`, hardened ([`harden`]).
fn open_reader(db: &Path, query: &str) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        uri(db, query),
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_URI | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|_| unavailable(String::from("the database cannot be opened for reading")))?;
    harden(&conn, true)?;
    Ok(conn)
}

// ---------------------------------------------------------------------------------------------
// Creating a store.

/// Links `temp` to `db` unless `db` exists (never replacing it): true when linked.
fn link_new(temp: &Path, db: &Path) -> io::Result<bool> {
    let (Some(from), Some(to)) = (cstring(temp), cstring(db)) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    // SAFETY: both are valid NUL-terminated paths; link only reads them.
    let rc = unsafe { libc::link(from.as_ptr(), to.as_ptr()) };
    if rc == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::AlreadyExists {
        return Ok(false);
    }
    Err(e)
}

/// Creates the store at `db`, which did not exist: the database is made and initialised under a
/// temporary name in the same directory (mode 0600), every page in the file and no sidecar left, then
/// linked to `db` without replacing anything (another process that created it first wins; this one's
/// copy is removed). So no opener ever finds a half-made store at `db`, and an empty file there is
/// never ours. `init` initialises the temporary database. True when this call created `db`.
pub(crate) fn create(
    fs: &dyn Fs,
    files: &Files,
    init: &dyn Fn(&Path) -> Result<(), StoreError>,
) -> Result<bool, StoreError> {
    let name = shiftwork_seams::durable::TempName {
        prefix: format!(".{}.new-", shown(&files.db)),
        suffix: String::new(),
        random_len: 12,
        alphabet: shiftwork_seams::durable::Alphabet::LowerHex,
    };
    let (temp, mut w) = shiftwork_seams::durable::create_temp(fs, &files.dir, &name).map_err(|e| {
        unavailable(format!(
            "the database file cannot be created: {}",
            shiftwork_seams::os_reason(&e)
        ))
    })?;
    drop(w.sync());
    drop(w);
    let temp_files = Files::of(&temp);
    let cleanup = || {
        for p in [&temp_files.wal, &temp_files.shm, &temp_files.journal, &temp] {
            let _ = fs.remove_file(p);
        }
    };
    if let Err(e) = init(&temp) {
        cleanup();
        return Err(e);
    }
    let linked = link_new(&temp, &files.db);
    cleanup();
    let linked = linked.map_err(|e| {
        unavailable(format!(
            "the database file cannot be created: {}",
            shiftwork_seams::os_reason(&e)
        ))
    })?;
    let _ = fs.sync_dir(&files.dir);
    Ok(linked)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log left behind, with its `-shm`, read through a read-only index: every committed row, and
    /// not a byte written (the path of a view over a store too large to replay in memory).
    #[test]
    fn a_log_left_behind_reads_through_a_read_only_index_without_writing() {
        let live = tempfile::tempdir().unwrap();
        let db = live.path().join("c.db");
        let conn = Connection::open(&db).unwrap();
        conn.execute_batch(
            "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;
             CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);",
        )
        .unwrap();
        let left = tempfile::tempdir().unwrap();
        let fs = shiftwork_seams::OsFs;
        for f in ["c.db", "c.db-wal", "c.db-shm"] {
            let bytes = fs.read(&live.path().join(f)).unwrap();
            let mut w = fs.create_new(&left.path().join(f), 0o600).unwrap();
            w.write_all(&bytes).unwrap();
        }
        drop(conn);
        let files = |dir: &Path| -> Vec<(String, Vec<u8>)> {
            let mut v: Vec<_> = fs
                .list_dir(dir)
                .unwrap()
                .into_iter()
                .map(|e| {
                    let name = e.name.to_string_lossy().into_owned();
                    let bytes = fs.read(&dir.join(&name)).unwrap();
                    (name, bytes)
                })
                .collect();
            v.sort();
            v
        };
        let before = files(left.path());
        let reader = open_unlocked_reader(&left.path().join("c.db")).unwrap();
        let n: i64 = reader
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
        drop(reader);
        assert_eq!(files(left.path()), before);
    }

    #[test]
    fn uris_escape_every_byte_but_the_unreserved() {
        assert_eq!(
            uri(Path::new("/a b/c?d#e%.db"), "mode=ro"),
            "file:/a%20b/c%3Fd%23e%25.db?mode=ro"
        );
    }

    #[test]
    fn headers_are_read_as_sqlite_writes_them() {
        let mut h = vec![0u8; 100];
        h[..16].copy_from_slice(b"SQLite format 3\0");
        h[16..18].copy_from_slice(&4096u16.to_be_bytes());
        h[60..64].copy_from_slice(&2i32.to_be_bytes());
        h[68..72].copy_from_slice(&0x5357_4354i32.to_be_bytes());
        assert_eq!(
            parse_header(&h),
            Some(DbHeader {
                page_size: 4096,
                application_id: 0x5357_4354,
                user_version: 2
            })
        );
        h[16..18].copy_from_slice(&1u16.to_be_bytes());
        assert_eq!(parse_header(&h).map(|h| h.page_size), Some(65_536));
        h[0] = b'X';
        assert_eq!(parse_header(&h), None);
        assert_eq!(parse_header(&h[..50]), None);
    }
}
