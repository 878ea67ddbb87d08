//! [`SqliteStore`]: the embedded default store.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::types::Value as Sql;
use rusqlite::{Connection, ErrorCode, OpenFlags, OptionalExtension, Row, TransactionBehavior, params};
use shiftwork_seams::{Clock, Fs};

use super::sqlite_file::{self, Beside, Files, OpenHere};
use super::{
    Build, COLUMNS, Counts, Due, InsertOutcome, ListPage, ListQuery, QueueDepth, Store, SweepReport, Update,
    epoch_ms,
};
use crate::error::StoreError;
use crate::integrity::{self, IntegrityReport};
use crate::limits::{SQLITE_BUSY_TIMEOUT_MS, SWEEP_BATCH_PER_CALL};
use crate::model::{AgentId, Contract, ContractId, EndReason, EpochMs, Status, instant};
use crate::observe::{ContractEvent, ContractsObserver, ObserverSlot, swept_lease};
use crate::transition::Reply;
use crate::wait::{Wake, Watchers};

/// `PRAGMA application_id` of a contracts database: "SWCT".
pub const APPLICATION_ID: i32 = 0x5357_4354;
/// The schema version of this crate (2 since delivery counts, availability and
/// cancellation; 3 since the commit counter).
pub const SCHEMA_VERSION: i32 = 3;

/// The oldest schema version whose `contracts` table this build reads as it is: a read-only store
/// (which never upgrades a file) serves a database of this version or newer.
const READABLE_VERSION: i32 = 2;

/// `PRAGMA synchronous`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Synchronous {
    /// Never corrupts, never loses a commit when a process dies; an OS crash may roll back the latest.
    #[default]
    Normal,
    /// Adds a device flush to every commit.
    Full,
}

impl Synchronous {
    /// `normal` or `full`, any case.
    pub fn parse(text: &str) -> Option<Synchronous> {
        match text.trim().to_ascii_lowercase().as_str() {
            "normal" => Some(Synchronous::Normal),
            "full" => Some(Synchronous::Full),
            _ => None,
        }
    }

    fn pragma(self) -> &'static str {
        match self {
            Synchronous::Normal => "NORMAL",
            Synchronous::Full => "FULL",
        }
    }
}

/// How a [`SqliteStore`] opens its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SqliteOptions {
    /// `PRAGMA synchronous`.
    pub synchronous: Synchronous,
    /// `PRAGMA busy_timeout` in milliseconds (default 5,000).
    pub busy_timeout_ms: u32,
    /// Connections in the pool (default 8).
    pub pool_size: usize,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        SqliteOptions {
            synchronous: Synchronous::Normal,
            busy_timeout_ms: SQLITE_BUSY_TIMEOUT_MS,
            pool_size: 8,
        }
    }
}

/// The `contracts` table of schema version 2 (the columns of version 1, then delivery, availability
/// and cancellation), named `name`.
pub(crate) fn table(name: &str) -> String {
    format!(
        "
CREATE TABLE {name} (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  contract_id        TEXT    NOT NULL UNIQUE,
  requester_agent    TEXT    NOT NULL,
  target_agent       TEXT    NOT NULL,
  idempotency_key    TEXT,
  payload_sha256     TEXT    NOT NULL,
  task_type          TEXT    NOT NULL,
  title              TEXT    NOT NULL,
  context_summary    TEXT    NOT NULL,
  workspace_root     TEXT    NOT NULL,
  pointers           TEXT    NOT NULL,
  contract_schema    TEXT,
  exec_ttl_sec       INTEGER NOT NULL,
  queue_ttl_sec      INTEGER NOT NULL,
  status             TEXT    NOT NULL CHECK (status IN ('SUBMITTED','CLAIMED','COMPLETED',
                                                         'FAILED','TIMED_OUT','POINTER_STALE','CANCELLED')),
  created_at         INTEGER NOT NULL,
  queued_at          INTEGER NOT NULL,
  queue_expires_at   INTEGER NOT NULL,
  lifetime_ends_at   INTEGER NOT NULL,
  claimed_at         INTEGER,
  expires_at         INTEGER,
  completed_at       INTEGER,
  claim_epoch        INTEGER NOT NULL,
  extend_count       INTEGER NOT NULL,
  release_count      INTEGER NOT NULL,
  retry_count        INTEGER NOT NULL,
  toctou_strikes     INTEGER NOT NULL,
  end_reason         TEXT,
  dirty_files        TEXT,
  error_reason       TEXT,
  fail_reason        TEXT,
  result_summary     TEXT,
  structured_output  TEXT,
  artifacts_pointers TEXT,
  salvaged_result    TEXT,
  max_deliveries     INTEGER NOT NULL,
  delivery_count     INTEGER NOT NULL,
  available_at       INTEGER,
  cancel_reason      TEXT
) STRICT;"
    )
}

pub(crate) const INDEXES: &str = "
CREATE INDEX contracts_ready      ON contracts (target_agent, queued_at, seq) WHERE status = 'SUBMITTED';
CREATE INDEX contracts_queue_due  ON contracts (queue_expires_at, seq)        WHERE status = 'SUBMITTED';
CREATE INDEX contracts_lease_due  ON contracts (expires_at, seq)              WHERE status = 'CLAIMED';
CREATE UNIQUE INDEX contracts_key ON contracts (requester_agent, idempotency_key)
                                  WHERE idempotency_key IS NOT NULL;
CREATE INDEX contracts_by_target    ON contracts (target_agent, seq);
CREATE INDEX contracts_by_requester ON contracts (requester_agent, seq);
CREATE INDEX contracts_done         ON contracts (completed_at) WHERE completed_at IS NOT NULL;
CREATE INDEX contracts_live         ON contracts (target_agent) WHERE status IN ('SUBMITTED', 'CLAIMED');
";

/// The commit counter of schema version 3: one row, whose `n` every write transaction that changes
/// a record adds one to, in the same commit. A write-ahead log then says how far the store had come
/// at each of its commits, so a log older than the database it lies beside (a backup's log restored
/// beside a newer database) is told from the database's own log before SQLite replays it
/// (`sqlite_log::judge_order`).
pub(crate) const COMMITS: &str = "
CREATE TABLE contracts_commits (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  n  INTEGER NOT NULL
) STRICT;";

/// Adds one to the commit counter (the last statement of a write transaction that changed a record).
const BUMP: &str = "UPDATE contracts_commits SET n = n + 1 WHERE id = 1";

/// The columns of schema version 1, in their order (the migration copies them).
const V1_COLUMNS: usize = 35;

const CLAIM: &str = "
UPDATE contracts
   SET status = 'CLAIMED', claim_epoch = claim_epoch + 1, delivery_count = delivery_count + 1,
       claimed_at = :now, expires_at = min(:now + exec_ttl_sec * 1000, lifetime_ends_at),
       extend_count = 0, toctou_strikes = 0, dirty_files = NULL
 WHERE seq = (SELECT seq FROM contracts
               WHERE status = 'SUBMITTED' AND target_agent = :agent AND queue_expires_at > :now
                 AND (available_at IS NULL OR available_at <= :now)
               ORDER BY queued_at, seq
               LIMIT 1)
   AND status = 'SUBMITTED'
RETURNING *";

const SWEEP_QUEUED: &str = "
UPDATE contracts
   SET status = 'TIMED_OUT', end_reason = 'QUEUE_TTL_EXPIRED', completed_at = queue_expires_at
 WHERE seq IN (SELECT seq FROM contracts
                WHERE status = 'SUBMITTED' AND queue_expires_at <= :now
                ORDER BY queue_expires_at, seq LIMIT :batch)
   AND status = 'SUBMITTED' AND queue_expires_at <= :now";

/// Whether any record is past its queue deadline or its lease at `:now` (the sweep's gate).
const ANYTHING_DUE: &str = "
SELECT EXISTS (SELECT 1 FROM contracts WHERE status = 'SUBMITTED' AND queue_expires_at <= :now)
    OR EXISTS (SELECT 1 FROM contracts WHERE status = 'CLAIMED' AND expires_at <= :now)";

/// The redelivery backoff after `delivery_count` deliveries, as `transition::backoff_ms` computes it.
const BACKOFF: &str = "min(30000 << min(max(delivery_count - 1, 0), 7), 3600000)";

/// A claimed record whose lease ran out goes back to the queue when it has deliveries left and
/// its backoff ends before its lifetime ceiling.
const REDELIVERABLE: &str = "delivery_count < max_deliveries AND :now + {B} < lifetime_ends_at";

static SWEEP_REDELIVER: std::sync::LazyLock<String> = std::sync::LazyLock::new(sweep_redeliver);
static SWEEP_CLAIMED: std::sync::LazyLock<String> = std::sync::LazyLock::new(sweep_claimed);

fn sweep_redeliver() -> String {
    let redeliverable = REDELIVERABLE.replace("{B}", BACKOFF);
    format!(
        "
UPDATE contracts
   SET status = 'SUBMITTED', queued_at = :now, available_at = :now + {BACKOFF},
       queue_expires_at = min(:now + {BACKOFF} + queue_ttl_sec * 1000, lifetime_ends_at),
       claimed_at = NULL, expires_at = NULL, extend_count = 0, toctou_strikes = 0,
       error_reason = {entry}
 WHERE seq IN (SELECT seq FROM contracts
                WHERE status = 'CLAIMED' AND expires_at <= :now AND {redeliverable}
                ORDER BY expires_at, seq LIMIT :batch)
   AND status = 'CLAIMED' AND expires_at <= :now AND {redeliverable}
RETURNING contract_id, target_agent, available_at",
        entry = super::history_entry(crate::transition::REDELIVERED_AFTER_TIMEOUT),
    )
}

fn sweep_claimed() -> String {
    let redeliverable = REDELIVERABLE.replace("{B}", BACKOFF);
    format!(
        "
UPDATE contracts
   SET status = 'TIMED_OUT', end_reason = 'EXEC_TTL_EXPIRED', completed_at = expires_at
 WHERE seq IN (SELECT seq FROM contracts
                WHERE status = 'CLAIMED' AND expires_at <= :now AND NOT ({redeliverable})
                ORDER BY expires_at, seq LIMIT :batch)
   AND status = 'CLAIMED' AND expires_at <= :now AND NOT ({redeliverable})
RETURNING contract_id, target_agent"
    )
}

/// Whether a record of an agent is claimable at `?2`, and the next instant one falls due.
const DUE: &str = "
SELECT coalesce(max(claimable), 0), min(CASE WHEN at > ?2 THEN at END) FROM (
  SELECT (status = 'SUBMITTED' AND queue_expires_at > ?2 AND (available_at IS NULL OR available_at <= ?2))
           AS claimable,
         CASE WHEN status = 'SUBMITTED'
              THEN CASE WHEN available_at > ?2 THEN available_at ELSE queue_expires_at END
              ELSE expires_at END AS at
    FROM contracts WHERE target_agent = ?1 AND status IN ('SUBMITTED', 'CLAIMED'))";

/// The embedded store: one SQLite file in WAL mode shared by any number of processes of one host.
///
/// ```
/// use shiftwork_contracts::{SqliteOptions, SqliteStore, Store};
/// use shiftwork_seams::{OsFs, SystemClock};
/// use std::sync::Arc;
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("sub/contracts.db");
/// let store = SqliteStore::open(&path, SqliteOptions::default(), Arc::new(SystemClock::new()), &OsFs).unwrap();
/// assert!(store.check_integrity().unwrap().is_clean());
/// assert!(path.exists());
/// ```
pub struct SqliteStore {
    path: PathBuf,
    /// The database and its sidecars (the database's canonical path).
    files: Files,
    options: SqliteOptions,
    /// Opened for reading only ([`SqliteStore::open_read_only`], or a file this process cannot
    /// write): every write answers [`StoreError::ReadOnly`], and every read opens a connection that
    /// writes nothing and creates nothing (see [`SqliteStore::read`]).
    read_only: bool,
    /// Reads of a read-only store take turns (a look at the `-shm` locks opens and closes a
    /// descriptor of it, which must not happen while a connection of this store holds locks there),
    /// and keep the in-memory replay of a log left behind while the files stay as they were.
    reader_turn: Mutex<Option<(Stamp, Connection)>>,
    /// This store holds the file open in this process (shared with the watching thread).
    open_here: Arc<OpenHere>,
    clock: Arc<dyn Clock>,
    /// Told of the leases sweeps end.
    observer: ObserverSlot,
    pool: Mutex<Pool>,
    available: Condvar,
    watch: Arc<Watching>,
    /// Held for each write transaction of this store (see [`SqliteStore::transaction`]).
    writer: Mutex<()>,
}

/// The waiting polls of one store and the thread that watches the file for commits of other
/// processes.
struct Watching {
    watchers: Watchers,
    /// Whether the watching thread runs; held while it decides to stop, so a waiter registered at that
    /// moment starts a new one.
    running: Mutex<bool>,
    path: PathBuf,
    clock: Arc<dyn Clock>,
    /// The file stays registered as open in this process while the thread's connection lives.
    _open_here: Arc<OpenHere>,
}

/// How often the watching thread reads the database's change counter (at least every 50 ms).
const WATCH_PERIOD: Duration = Duration::from_millis(20);
/// How long the watching thread stays with nobody waiting before it stops.
const WATCH_IDLE: Duration = Duration::from_secs(1);

impl Watching {
    fn lock_running(&self) -> MutexGuard<'_, bool> {
        self.running.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The watching thread: a dedicated connection that writes nothing reads `PRAGMA data_version`
    /// (it changes when any other connection, in any process, commits); on a change it asks which
    /// waiting agents now have a claimable record and wakes them. The connection is a writer's with
    /// `query_only` (a writing store's files are in use anyway), so that if it is the last of this
    /// process to close, SQLite folds the log in and removes its sidecars as at any writer's close.
    /// Its 20 ms period is the cadence of a look at the file, not a wait of a call: a waiting poll
    /// waits on its clock.
    fn run(self: Arc<Self>) {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(io)
        .and_then(|c| sqlite_file::harden(&c, true).map(|()| c));
        let conn = match conn {
            Ok(c) => c,
            Err(_) => {
                // Without a connection the waiters fall back to looking again every few seconds.
                *self.lock_running() = false;
                return;
            }
        };
        let _ = conn.busy_timeout(Duration::from_millis(100));
        let _ = stable_plans(&conn);
        let mut last: Option<i64> = None;
        let mut idle = Duration::ZERO;
        loop {
            std::thread::sleep(WATCH_PERIOD);
            let agents = self.watchers.agents();
            if agents.is_empty() {
                idle += WATCH_PERIOD;
                if idle >= WATCH_IDLE {
                    let mut running = self.lock_running();
                    if self.watchers.agents().is_empty() {
                        *running = false;
                        return;
                    }
                }
                continue;
            }
            idle = Duration::ZERO;
            let Ok(version) = conn.query_row("PRAGMA data_version", [], |r| r.get::<_, i64>(0)) else {
                continue;
            };
            if last == Some(version) {
                continue;
            }
            last = Some(version);
            let now = epoch_ms(self.clock.as_ref());
            match claimable_agents(&conn, &agents, now) {
                // One waiting poll per claimable contract (at most every idle waiter of the agent).
                Ok(ready) => ready.iter().for_each(|(a, n)| self.watchers.notify_many(a, *n)),
                Err(_) => self.watchers.notify_all(),
            }
        }
    }
}

/// Which of `agents` have a claimable record at `now`, and how many each.
fn claimable_agents(
    conn: &Connection,
    agents: &[AgentId],
    now: EpochMs,
) -> Result<Vec<(AgentId, usize)>, StoreError> {
    let marks: Vec<String> = (0..agents.len()).map(|i| format!("?{}", i + 2)).collect();
    let sql = format!(
        "SELECT target_agent, count(*) FROM contracts
          WHERE status = 'SUBMITTED' AND target_agent IN ({}) AND queue_expires_at > ?1
            AND (available_at IS NULL OR available_at <= ?1)
          GROUP BY target_agent",
        marks.join(", ")
    );
    let mut values: Vec<Sql> = vec![Sql::Integer(now)];
    values.extend(agents.iter().map(|a| Sql::Text(a.as_str().to_owned())));
    let mut stmt = conn.prepare(&sql).map_err(io)?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(values), |r| {
            Ok((
                agent_col(r, 0)?,
                usize::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
            ))
        })
        .map_err(io)?;
    rows.collect::<Result<Vec<_>, _>>().map_err(io)
}

struct Pool {
    idle: Vec<Connection>,
    open: usize,
}

struct Lease<'a> {
    store: &'a SqliteStore,
    conn: Option<Connection>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.store.lock_pool().idle.push(conn);
            self.store.available.notify_one();
        }
    }
}

fn io(e: rusqlite::Error) -> StoreError {
    let failure = match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
            StoreError::busy("the database lock was not obtained in time")
        }
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => {
            StoreError::corrupt("the database file is damaged")
        }
        _ => match &e {
            rusqlite::Error::FromSqlConversionFailure(..) | rusqlite::Error::InvalidColumnType(..) => {
                StoreError::corrupt(e.to_string())
            }
            other => StoreError::io(other.to_string()),
        },
    };
    failure.with_source(e)
}

fn unavailable(what: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => io(e),
        code => {
            StoreError::unavailable(format!("{what}: {}", code.map_or("error", reason_of))).with_source(e)
        }
    }
}

/// What an SQLite result code means, as a reason in a sentence.
fn reason_of(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::NotADatabase => "the file is not an SQLite database",
        ErrorCode::DatabaseCorrupt => "the database file is corrupt",
        ErrorCode::CannotOpen => "the file cannot be opened",
        ErrorCode::PermissionDenied => "permission denied",
        ErrorCode::ReadOnly => "the file is read-only",
        ErrorCode::DiskFull => "the disk is full",
        ErrorCode::SystemIoFailure => "an I/O error occurred",
        ErrorCode::OutOfMemory => "out of memory",
        ErrorCode::NoLargeFileSupport => "the file is too large",
        _ => "an SQLite error occurred",
    }
}

impl SqliteStore {
    /// Opens (and on first use creates, with its missing directories) the database at `path`
    ///. Directories are created with mode 0700 and the file with 0600 through `fs`.
    ///
    /// Only a path that does not exist is created, and the new database is linked into place whole.
    /// An existing file is judged before any SQLite connection touches it (the rules are
    /// in the `sqlite_file` module): refused, and left byte for byte as it was with the files beside
    /// it, when it is empty or not a contracts database; when it, its directory or its sidecars are
    /// not trusted by the family's owner rule ([`shiftwork_seams::owner`]: yours or root's, writable
    /// by nobody else); when a hot `-journal` lies beside it, or a `-wal` that is not its own or that
    /// is older than the file (a log of the store's past: every write transaction counts itself, and
    /// a log whose last commit the file has passed would take the store back in time); or when it
    /// holds a table, index, trigger or view the contracts schema does not define. Every connection
    /// runs with `trusted_schema` off and SQLite's defensive mode. A file this process cannot write is
    /// opened for reading only, as by [`SqliteStore::open_read_only`].
    pub fn open(
        path: &Path,
        options: SqliteOptions,
        clock: Arc<dyn Clock>,
        fs: &dyn Fs,
    ) -> Result<SqliteStore, StoreError> {
        Self::open_as(path, options, clock, fs, false)
    }

    /// Opens an existing database for reading only (a view of the store, such as a live terminal
    /// view): it never creates, initialises or upgrades a file and never writes a byte, to the
    /// database, its log or its directory; every write operation answers [`StoreError::ReadOnly`]. A
    /// missing file, an empty one, another application's, one of a schema version older than 2 or
    /// newer than this build's, or one refused by the checks of [`SqliteStore::open`] is refused with
    /// [`StoreError::Unavailable`] — except that the store may belong to another user (not one that
    /// others may write): what it holds is judged by the schema check and read under SQLite's
    /// defensive settings, read-only. A log beside it is judged again whenever it changes.
    /// It creates no `-wal` or `-shm` file: each read opens a connection that writes nothing — to the
    /// file alone (`immutable`) when no log is beside it, as a reader of the live processes' log when
    /// one holds the store open, or to the database a log left behind would produce, replayed in
    /// memory.
    ///
    /// ```
    /// use shiftwork_contracts::{SqliteOptions, SqliteStore, Store, StoreError};
    /// use shiftwork_seams::{OsFs, SystemClock};
    /// use std::sync::Arc;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("c.db");
    /// let clock = Arc::new(SystemClock::new());
    /// assert!(SqliteStore::open_read_only(&path, SqliteOptions::default(), clock.clone(), &OsFs).is_err());
    /// assert!(!path.exists(), "nothing created");
    /// drop(SqliteStore::open(&path, SqliteOptions::default(), clock.clone(), &OsFs).unwrap());
    /// let view = SqliteStore::open_read_only(&path, SqliteOptions::default(), clock, &OsFs).unwrap();
    /// assert!(view.check_integrity().unwrap().is_clean());
    /// assert!(matches!(view.sweep(0, 10), Err(StoreError::ReadOnly { .. })));
    /// ```
    pub fn open_read_only(
        path: &Path,
        options: SqliteOptions,
        clock: Arc<dyn Clock>,
        fs: &dyn Fs,
    ) -> Result<SqliteStore, StoreError> {
        Self::open_as(path, options, clock, fs, true)
    }

    fn open_as(
        path: &Path,
        options: SqliteOptions,
        clock: Arc<dyn Clock>,
        fs: &dyn Fs,
        reader: bool,
    ) -> Result<SqliteStore, StoreError> {
        let opened = {
            // No other thread of this process opens or judges a store while this one does (see
            // `sqlite_file`: descriptors opened and closed here must not drop SQLite's locks).
            let _turn = sqlite_file::judging();
            Self::judge_or_create(path, options, fs, reader)?
        };
        let (files, meta, open_here, read_only) = opened;
        if let Some(kind) = shiftwork_seams::network_filesystem(&files.dir) {
            eprintln!(
                "warning: the contracts database directory is on a network filesystem ({kind}); a WAL database needs every agent on one host"
            );
        }
        let open_here = Arc::new(open_here);
        let store = SqliteStore {
            watch: Arc::new(Watching {
                watchers: Watchers::default(),
                running: Mutex::new(false),
                path: files.db.clone(),
                clock: clock.clone(),
                _open_here: open_here.clone(),
            }),
            writer: Mutex::new(()),
            path: files.db.clone(),
            files,
            read_only,
            reader_turn: Mutex::new(None),
            open_here,
            options: SqliteOptions {
                pool_size: options.pool_size.max(1),
                ..options
            },
            clock,
            observer: ObserverSlot::default(),
            pool: Mutex::new(Pool {
                idle: Vec::new(),
                open: 0,
            }),
            available: Condvar::new(),
        };
        let _ = meta;
        if read_only {
            // A first read judges what SQLite sees: the header and the schema objects.
            store.read(|tx| {
                let header = check_header(tx)?;
                let Header::Known(version) = header else {
                    return Err(StoreError::unavailable(String::from(
                        "the database file is not initialised yet, and this store opens it read-only",
                    )));
                };
                if version < READABLE_VERSION {
                    return Err(StoreError::unavailable(format!(
                        "the database has schema version {version}, and this store opens it read-only, so it cannot be upgraded"
                    )));
                }
                sqlite_file::check_schema(tx, version, &store.files.db)
            })?;
            return Ok(store);
        }
        let mut conn = store.connect()?;
        init_schema(&mut conn, false, &store.files.db)?;
        let mut pool = store.lock_pool();
        pool.idle.push(conn);
        pool.open = 1;
        drop(pool);
        Ok(store)
    }

    /// The database at `path` judged ([`sqlite_file::judge`]), or created when it is missing and this
    /// is not a reader, and registered as open in this process; and whether the store only reads (a
    /// reader, or a file this process cannot write).
    fn judge_or_create(
        path: &Path,
        options: SqliteOptions,
        fs: &dyn Fs,
        reader: bool,
    ) -> Result<(Files, shiftwork_seams::Metadata, OpenHere, bool), StoreError> {
        let found = match fs.metadata(path) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) if reader => {
                return Err(StoreError::unavailable(format!(
                    "the store location cannot be read: {}",
                    shiftwork_seams::os_reason(&e)
                )));
            }
            Err(_) => None,
        };
        let meta = match found {
            Some(m) => m,
            None if reader => {
                return Err(StoreError::unavailable(String::from(
                    "there is no contracts database at the store location yet",
                )));
            }
            None => {
                let files = Files::of(path);
                create_dirs(fs, &files.dir)?;
                sqlite_file::check_directory(fs, &files, false)?;
                sqlite_file::create(fs, &files, &|temp| initialise(temp, options))?;
                fs.metadata(path).map_err(|e| {
                    StoreError::unavailable(format!(
                        "the database file cannot be read: {}",
                        shiftwork_seams::os_reason(&e)
                    ))
                })?
            }
        };
        // Resolved once: SQLite and every check use the file the location leads to.
        let canonical = fs.canonicalize(path).map_err(|e| {
            StoreError::unavailable(format!(
                "the store location cannot be resolved: {}",
                shiftwork_seams::os_reason(&e)
            ))
        })?;
        let files = Files::of(&canonical);
        // A store this process cannot write is read only, whatever was asked (see `open_as`): it may
        // then be another user's.
        let reading = reader || !sqlite_file::writable(&files.db);
        match sqlite_file::judge(fs, &files, &meta, reading)? {
            Beside::Quiet | Beside::Live | Beside::LeftBehind => {}
        }
        let here = OpenHere::register(&meta, !reading);
        Ok((files, meta, here, reading))
    }

    fn lock_writer(&self) -> MutexGuard<'_, ()> {
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        // The pool holds plain values; a panic elsewhere cannot leave it half-updated.
        self.pool.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// True when the file was not writable and the store serves reads only.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// A writing connection of the pool (never for a read-only store).
    fn connect(&self) -> Result<Connection, StoreError> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(unavailable("the database cannot be opened"))?;
        configure_writer(conn, self.options)
    }

    /// Where a read of a read-only store reads, chosen by what lies beside the database now (issue
    /// 27).
    fn reading_source(&self) -> Result<Source, StoreError> {
        let fs = shiftwork_seams::OsFs;
        let files = &self.files;
        let wal_len = fs.symlink_metadata(&files.wal).map_or(0, |m| m.len);
        let shm = fs.symlink_metadata(&files.shm).is_ok();
        // A writing store of this process holds the file, or another process does: its log is live.
        // (A read-only store of this process holds no connection between its reads.)
        if self.open_here.other_writers() || (shm && sqlite_file::held_by_another_process(&files.shm)?) {
            return Ok(Source::Live);
        }
        if wal_len > 0 {
            let db_len = fs.metadata(&files.db).map_or(0, |m| m.len);
            if db_len.saturating_add(wal_len) <= sqlite_file::MAX_REPLAY_BYTES {
                return Ok(Source::Replayed(Stamp::of(&fs, files)));
            }
            // Too large to replay in memory: SQLite's own read-only recovery, which needs the index
            // file; without one, the file alone (without the log's last commits).
            if shm {
                return Ok(Source::Unlocked);
            }
        }
        Ok(Source::File(Stamp::of(&fs, files)))
    }

    fn lease(&self) -> Result<Lease<'_>, StoreError> {
        let mut pool = self.lock_pool();
        loop {
            if let Some(conn) = pool.idle.pop() {
                return Ok(Lease {
                    store: self,
                    conn: Some(conn),
                });
            }
            if pool.open < self.options.pool_size {
                pool.open += 1;
                drop(pool);
                return match self.connect() {
                    Ok(conn) => Ok(Lease {
                        store: self,
                        conn: Some(conn),
                    }),
                    Err(e) => {
                        self.lock_pool().open -= 1;
                        Err(e)
                    }
                };
            }
            pool = self.available.wait(pool).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Runs `f` in `BEGIN IMMEDIATE … COMMIT` with the clock read once after the lock is held. Any
    /// error rolls back. `f` names the agents whose records it returned to the queue and the leases
    /// its sweep ended; after the commit their waiting polls are woken and the observer is told.
    fn write<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>, EpochMs, &mut Committed) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.writable()?;
        let mut after = Committed::default();
        let out = self.transaction(TransactionBehavior::Immediate, |tx| {
            after = Committed::default();
            f(tx, epoch_ms(self.clock.as_ref()), &mut after)
        })?;
        self.committed(after);
        Ok(out)
    }

    fn committed(&self, after: Committed) {
        for agent in &after.woken {
            self.watch.watchers.notify_one(agent);
        }
        self.observer.tell(&after.events);
    }

    fn writable(&self) -> Result<(), StoreError> {
        if self.read_only {
            return Err(StoreError::read_only(String::from(
                "the database file is not writable",
            )));
        }
        Ok(())
    }

    /// A read in one transaction. A read-only store reads through a connection of its own for each
    /// read ([`SqliteStore::reading_source`]); a read of the file alone that a writer changed
    /// meanwhile (its log appeared, or a checkpoint rewrote the file) is read again.
    fn read<T>(
        &self,
        f: impl Fn(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        if !self.read_only {
            return self.transaction(TransactionBehavior::Deferred, f);
        }
        let mut turn = self.reader_turn.lock().unwrap_or_else(PoisonError::into_inner);
        let in_tx = |conn: &mut Connection| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Deferred)
                .map_err(io)?;
            f(&tx)
        };
        let mut attempts = 0;
        loop {
            attempts += 1;
            match self.reading_source()? {
                Source::Live => {
                    *turn = None;
                    return in_tx(&mut sqlite_file::open_live_reader(&self.files.db)?);
                }
                Source::Unlocked => {
                    *turn = None;
                    return in_tx(&mut sqlite_file::open_unlocked_reader(&self.files.db)?);
                }
                Source::Replayed(stamp) => {
                    if turn.as_ref().is_none_or(|(s, _)| *s != stamp) {
                        *turn = None;
                        let conn = super::sqlite_log::open_replayed(&shiftwork_seams::OsFs, &self.files)?;
                        *turn = Some((stamp, conn));
                    }
                    let Some((_, conn)) = turn.as_mut() else {
                        return Err(StoreError::io(String::from("no connection")));
                    };
                    return in_tx(conn);
                }
                Source::File(stamp) => {
                    *turn = None;
                    let out = in_tx(&mut sqlite_file::open_immutable(&self.files.db)?);
                    // Read without locks: a writer that rewrote the file or began a log meanwhile
                    // makes the read start again.
                    if stamp == Stamp::of(&shiftwork_seams::OsFs, &self.files) || attempts >= 3 {
                        return out;
                    }
                }
            }
        }
    }

    /// Runs `f` in one transaction on a pooled connection; any error rolls back. A write transaction
    /// (`Immediate`) that changed a record adds one to the commit counter before it commits, so every
    /// commit of the log carries its place in the store's history ([`COMMITS`]).
    fn transaction<T>(
        &self,
        behavior: TransactionBehavior,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // The writers of this process take turns here, handed on at once, instead of sleeping in
        // SQLite's busy handler; the file lock then only arbitrates between processes.
        let writes = matches!(behavior, TransactionBehavior::Immediate);
        let _turn = writes.then(|| self.lock_writer());
        let mut lease = self.lease()?;
        let Some(conn) = lease.conn.as_mut() else {
            return Err(StoreError::io(String::from("no connection")));
        };
        let tx = conn.transaction_with_behavior(behavior).map_err(io)?;
        let changes = tx.total_changes();
        let out = f(&tx)?;
        if writes && tx.total_changes() != changes {
            tx.prepare_cached(BUMP)
                .and_then(|mut s| s.execute([]))
                .map_err(io)?;
        }
        tx.commit().map_err(io)?;
        Ok(out)
    }
}

/// One plan per statement, whatever the values bound to it, and every statement of the store kept
/// prepared. The bundled SQLite is built with `SQLITE_ENABLE_STAT4`, under which a statement that
/// compares a parameter with an indexed column (every sweep and claim compares `now` with a deadline)
/// is compiled again at each step with a new value: most of a transaction's time. The query planner
/// stability guarantee turns that off.
fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    conn.set_prepared_statement_cache_capacity(32);
    Ok(())
}

/// The wait for a lock another process holds (the `busy_timeout`, with a better wait): SQLite's
/// own busy handler sleeps 1, 2, 5, 10 … ms between tries, so under contention a writer sleeps long
/// after the lock came free (a transaction here holds it for a fraction of a millisecond). This one
/// yields, then sleeps 20 µs doubling to at most 1 ms, and gives up (`SQLITE_BUSY`) after `timeout_ms`
/// of real time.
fn set_busy_wait(conn: &mut Connection, timeout_ms: u32) -> rusqlite::Result<()> {
    let limit = Duration::from_millis(u64::from(timeout_ms));
    let mut started = shiftwork_seams::SystemClock::new();
    conn.busy_handler(Some(move |count: i32| {
        if count == 0 {
            started = shiftwork_seams::SystemClock::new();
        }
        if started.monotonic() >= limit {
            return false;
        }
        match count {
            0..=63 => std::thread::yield_now(),
            n => {
                let micros = (20u64 << (n - 64).min(5)).min(500);
                std::thread::sleep(Duration::from_micros(micros));
            }
        }
        true
    }))
}

/// Configures a writing connection: the busy wait, stable plans, the header judged before anything is
/// written (a foreign or newer database is refused untouched), WAL mode, the `synchronous` of the
/// options, `trusted_schema` off and SQLite's defensive mode (`sqlite_file::harden`).
fn configure_writer(mut conn: Connection, options: SqliteOptions) -> Result<Connection, StoreError> {
    set_busy_wait(&mut conn, options.busy_timeout_ms)
        .map_err(unavailable("the busy timeout cannot be set"))?;
    stable_plans(&conn).map_err(unavailable("the connection cannot be configured"))?;
    sqlite_file::harden(&conn, false)?;
    check_header(&conn)?;
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(unavailable("WAL mode cannot be set"))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(StoreError::unavailable(format!(
            "the database refused WAL mode (journal_mode is {mode})"
        )));
    }
    conn.execute_batch(&format!(
        "PRAGMA synchronous = {}; PRAGMA journal_size_limit = 67108864; PRAGMA mmap_size = 268435456; PRAGMA wal_autocheckpoint = 10000;",
        options.synchronous.pragma()
    ))
    .map_err(unavailable("the connection cannot be configured"))?;
    Ok(conn)
}

/// Initialises the new database at `temp` (see `sqlite_file::create`): the schema in WAL mode, then
/// every page folded into the file, and the connection closed, so no sidecar remains.
fn initialise(temp: &Path, options: SqliteOptions) -> Result<(), StoreError> {
    let conn = Connection::open_with_flags(
        temp,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(unavailable("the database cannot be created"))?;
    let mut conn = configure_writer(conn, options)?;
    init_schema(&mut conn, true, temp)?;
    conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .map_err(unavailable("the new database cannot be written"))?;
    conn.close()
        .map_err(|(_, e)| unavailable("the new database cannot be closed")(e))
}

/// Where a read of a read-only store reads.
enum Source {
    /// A live process's database and log, through a reader that writes nothing to them.
    Live,
    /// The database a log left behind would produce, replayed in memory (while the files stay so).
    Replayed(Stamp),
    /// A log left behind too large to replay in memory, read through a read-only index.
    Unlocked,
    /// The file alone (`immutable`), as long as it stays so.
    File(Stamp),
}

/// What a read of the file alone relies on: the file unchanged and no log beside it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    db: Option<(u64, u64, std::time::SystemTime)>,
    wal: Option<u64>,
}

impl Stamp {
    fn of(fs: &dyn Fs, files: &Files) -> Stamp {
        Stamp {
            db: fs.metadata(&files.db).ok().map(|m| (m.ino, m.len, m.modified)),
            wal: fs.symlink_metadata(&files.wal).ok().map(|m| m.len),
        }
    }
}

fn create_dirs(fs: &dyn Fs, dir: &Path) -> Result<(), StoreError> {
    if fs.metadata(dir).is_ok() {
        return Ok(());
    }
    if let Some(parent) = dir.parent()
        && parent != dir
        && !parent.as_os_str().is_empty()
    {
        create_dirs(fs, parent)?;
    }
    match fs.create_dir(dir, 0o700) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(StoreError::unavailable(format!(
            "the database directory cannot be created: {}",
            shiftwork_seams::os_reason(&e)
        ))),
    }
}

/// What the header of a database says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Header {
    /// An empty file to initialise.
    Fresh,
    /// A contracts database of this known version (1 ..= [`SCHEMA_VERSION`]).
    Known(i32),
}

/// The header, or `Err` for another application's file or an unknown version. Reads only.
fn check_header(conn: &Connection) -> Result<Header, StoreError> {
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(unavailable("the database header cannot be read"))?;
    let version: i32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(unavailable("the database header cannot be read"))?;
    let objects: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(unavailable("the database catalogue cannot be read"))?;
    if app == 0 && version == 0 && objects == 0 {
        return Ok(Header::Fresh);
    }
    if app != APPLICATION_ID {
        return Err(StoreError::unavailable(String::from(
            "the file is not a contracts database (another application id)",
        )));
    }
    if version > SCHEMA_VERSION {
        return Err(StoreError::unavailable(format!(
            "the database has schema version {version}, newer than this build's {SCHEMA_VERSION}"
        )));
    }
    if version < 1 {
        return Err(StoreError::unavailable(format!(
            "the database has unknown schema version {version}"
        )));
    }
    Ok(Header::Known(version))
}

/// Creates the schema of a new database (`fresh` allowed only for the one `sqlite_file::create`
/// makes), or migrates an older version, in one `BEGIN IMMEDIATE` transaction; an
/// existing database must hold the contracts schema objects only.
fn init_schema(conn: &mut Connection, fresh: bool, file: &Path) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(io)?;
    // Judged again under the write lock: another process may have migrated it meanwhile.
    match check_header(&tx)? {
        Header::Fresh if fresh => {
            tx.execute_batch(&table("contracts")).map_err(io)?;
            tx.execute_batch(INDEXES).map_err(io)?;
            tx.execute_batch(COMMITS).map_err(io)?;
            tx.execute("INSERT INTO contracts_commits (id, n) VALUES (1, 0)", [])
                .map_err(io)?;
        }
        Header::Fresh => {
            return Err(StoreError::unavailable(format!(
                "the file {} is an SQLite database without the contracts application id, not a contracts database; only a path that does not exist yet is created",
                sqlite_file::shown(file)
            )));
        }
        Header::Known(v) => {
            sqlite_file::check_schema(&tx, v, file)?;
            if v == SCHEMA_VERSION {
                return check_counter(&tx, file);
            }
            if v == 1 {
                migrate_v1(&tx)?;
            }
            migrate_v2(&tx)?;
        }
    }
    tx.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
    ))
    .map_err(io)?;
    tx.commit().map_err(io)
}

/// Schema version 1 → 2: the table is rebuilt (SQLite cannot change a `CHECK`), every row
/// copied with `max_deliveries = 1`, `available_at = null`, `delivery_count` 1 when it was ever
/// claimed, else 0; the `seq` counter keeps its value, so no number is ever reused.
fn migrate_v1(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let counter: i64 = tx
        .query_row(
            "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'contracts'), 0)",
            [],
            |r| r.get(0),
        )
        .map_err(io)?;
    let old: Vec<&str> = COLUMNS[..V1_COLUMNS].to_vec();
    tx.execute_batch(&table("contracts_v2")).map_err(io)?;
    tx.execute_batch(&format!(
        "INSERT INTO contracts_v2 ({cols}, max_deliveries, delivery_count, available_at, cancel_reason)
         SELECT {cols}, 1, CASE WHEN claim_epoch >= 1 THEN 1 ELSE 0 END, NULL, NULL FROM contracts;
         DROP TABLE contracts;
         ALTER TABLE contracts_v2 RENAME TO contracts;
         DELETE FROM sqlite_sequence WHERE name IN ('contracts', 'contracts_v2');",
        cols = old.join(", ")
    ))
    .map_err(io)?;
    let high: i64 = tx
        .query_row("SELECT coalesce(max(seq), 0) FROM contracts", [], |r| r.get(0))
        .map_err(io)?;
    tx.execute(
        "INSERT INTO sqlite_sequence (name, seq) VALUES ('contracts', ?1)",
        [counter.max(high)],
    )
    .map_err(io)?;
    tx.execute_batch(INDEXES).map_err(io)
}

/// Refuses a database of the current version whose commit counter is missing: its writes could
/// not be ordered against a log left behind.
fn check_counter(tx: &rusqlite::Transaction<'_>, file: &Path) -> Result<(), StoreError> {
    let rows: i64 = tx
        .query_row("SELECT count(*) FROM contracts_commits WHERE id = 1", [], |r| {
            r.get(0)
        })
        .unwrap_or(0);
    if rows != 1 {
        return Err(StoreError::unavailable(format!(
            "the database {} has no commit counter (its table contracts_commits lacks its row), so its commits cannot be ordered against a log left beside it; restore the store from a copy you trust",
            sqlite_file::shown(file)
        )));
    }
    Ok(())
}

/// Schema version 2 → 3: the commit counter, at 1 (the migration is a commit).
fn migrate_v2(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    tx.execute_batch(COMMITS).map_err(io)?;
    tx.execute("INSERT INTO contracts_commits (id, n) VALUES (1, 1)", [])
        .map_err(io)?;
    Ok(())
}

fn json_col<T: serde::de::DeserializeOwned>(row: &Row<'_>, i: usize) -> rusqlite::Result<Option<T>> {
    let text: Option<String> = row.get(i)?;
    text.map(|t| {
        serde_json::from_str(&t).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
        })
    })
    .transpose()
}

fn bad(i: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, what.to_owned().into())
}

fn u32_col(row: &Row<'_>, i: usize) -> rusqlite::Result<u32> {
    let v: i64 = row.get(i)?;
    u32::try_from(v).map_err(|_| bad(i, "a counter out of range"))
}

fn agent_col(row: &Row<'_>, i: usize) -> rusqlite::Result<AgentId> {
    let s: String = row.get(i)?;
    AgentId::new(s).map_err(|_| bad(i, "an invalid agent id"))
}

fn id_col(row: &Row<'_>, i: usize) -> rusqlite::Result<ContractId> {
    let s: String = row.get(i)?;
    ContractId::parse(&s).map_err(|_| bad(i, "an invalid contract id"))
}

/// Decodes a row in the column order of the table.
fn decode(row: &Row<'_>) -> rusqlite::Result<Contract> {
    let status: String = row.get(14)?;
    let end_reason: Option<String> = row.get(27)?;
    let epoch: i64 = row.get(22)?;
    Ok(Contract {
        seq: row.get(0)?,
        contract_id: id_col(row, 1)?,
        requester_agent: agent_col(row, 2)?,
        target_agent: agent_col(row, 3)?,
        idempotency_key: row.get(4)?,
        payload_sha256: row.get(5)?,
        task_type: row.get(6)?,
        title: row.get(7)?,
        context_summary: row.get(8)?,
        workspace_root: row.get(9)?,
        pointers: json_col(row, 10)?.unwrap_or_default(),
        contract_schema: json_col(row, 11)?,
        exec_ttl_sec: u32_col(row, 12)?,
        queue_ttl_sec: u32_col(row, 13)?,
        status: Status::parse(&status).ok_or_else(|| bad(14, "an unknown status"))?,
        created_at: row.get(15)?,
        queued_at: row.get(16)?,
        queue_expires_at: row.get(17)?,
        lifetime_ends_at: row.get(18)?,
        claimed_at: row.get(19)?,
        expires_at: row.get(20)?,
        completed_at: row.get(21)?,
        claim_epoch: u64::try_from(epoch).map_err(|_| bad(22, "a negative epoch"))?,
        extend_count: u32_col(row, 23)?,
        release_count: u32_col(row, 24)?,
        retry_count: u32_col(row, 25)?,
        toctou_strikes: u32_col(row, 26)?,
        end_reason: end_reason
            .map(|e| EndReason::parse(&e).ok_or_else(|| bad(27, "an unknown end reason")))
            .transpose()?,
        dirty_files: json_col(row, 28)?,
        error_reason: row.get(29)?,
        fail_reason: row.get(30)?,
        result_summary: row.get(31)?,
        structured_output: json_col(row, 32)?,
        artifacts_pointers: json_col(row, 33)?,
        salvaged_result: json_col(row, 34)?,
        max_deliveries: u32_col(row, 35)?,
        delivery_count: u32_col(row, 36)?,
        available_at: row.get(37)?,
        cancel_reason: row.get(38)?,
    })
}

fn json_text<T: serde::Serialize>(v: &Option<T>) -> Sql {
    match v {
        None => Sql::Null,
        Some(v) => serde_json::to_string(v).map_or(Sql::Null, Sql::Text),
    }
}

fn opt_text(v: &Option<String>) -> Sql {
    v.clone().map_or(Sql::Null, Sql::Text)
}

fn opt_int(v: Option<i64>) -> Sql {
    v.map_or(Sql::Null, Sql::Integer)
}

/// The 39 column values of a record, in the column order of the table.
fn encode(c: &Contract) -> Vec<Sql> {
    vec![
        Sql::Integer(c.seq),
        Sql::Text(c.contract_id.as_str().to_owned()),
        Sql::Text(c.requester_agent.as_str().to_owned()),
        Sql::Text(c.target_agent.as_str().to_owned()),
        opt_text(&c.idempotency_key),
        Sql::Text(c.payload_sha256.clone()),
        Sql::Text(c.task_type.clone()),
        Sql::Text(c.title.clone()),
        Sql::Text(c.context_summary.clone()),
        Sql::Text(c.workspace_root.clone()),
        json_text(&Some(&c.pointers)),
        json_text(&c.contract_schema),
        Sql::Integer(i64::from(c.exec_ttl_sec)),
        Sql::Integer(i64::from(c.queue_ttl_sec)),
        Sql::Text(c.status.as_str().to_owned()),
        Sql::Integer(c.created_at),
        Sql::Integer(c.queued_at),
        Sql::Integer(c.queue_expires_at),
        Sql::Integer(c.lifetime_ends_at),
        opt_int(c.claimed_at),
        opt_int(c.expires_at),
        opt_int(c.completed_at),
        Sql::Integer(i64::try_from(c.claim_epoch).unwrap_or(i64::MAX)),
        Sql::Integer(i64::from(c.extend_count)),
        Sql::Integer(i64::from(c.release_count)),
        Sql::Integer(i64::from(c.retry_count)),
        Sql::Integer(i64::from(c.toctou_strikes)),
        c.end_reason
            .map_or(Sql::Null, |e| Sql::Text(e.as_str().to_owned())),
        json_text(&c.dirty_files),
        opt_text(&c.error_reason),
        opt_text(&c.fail_reason),
        opt_text(&c.result_summary),
        json_text(&c.structured_output),
        json_text(&c.artifacts_pointers),
        json_text(&c.salvaged_result),
        Sql::Integer(i64::from(c.max_deliveries)),
        Sql::Integer(i64::from(c.delivery_count)),
        opt_int(c.available_at),
        opt_text(&c.cancel_reason),
    ]
}

/// What a write transaction leaves to do after its commit.
#[derive(Default)]
struct Committed {
    /// The agents whose records went back to the queue: their waiting polls are woken.
    woken: Vec<AgentId>,
    /// The leases the sweep ended, for the observer.
    events: Vec<ContractEvent>,
}

/// The sweep and the redelivery of lost leases, in batches of `max` per kind: the report, and in
/// `after` the agents whose records went back to the queue and the leases it ended.
fn sweep_tx(
    tx: &rusqlite::Transaction<'_>,
    now: EpochMs,
    max: usize,
    after: &mut Committed,
) -> Result<SweepReport, StoreError> {
    // Nearly always nothing is due: one probe of the two deadline indexes decides whether the three
    // sweeping statements run at all.
    let due: bool = tx
        .prepare_cached(ANYTHING_DUE)
        .and_then(|mut s| s.query_row(rusqlite::named_params! {":now": now}, |r| r.get(0)))
        .map_err(io)?;
    if !due {
        return Ok(SweepReport::default());
    }
    let batch = i64::try_from(max).unwrap_or(i64::MAX);
    let queued = tx
        .prepare_cached(SWEEP_QUEUED)
        .and_then(|mut s| s.execute(rusqlite::named_params! {":now": now, ":batch": batch}))
        .map_err(io)?;
    let mut redelivered = 0;
    {
        let mut stmt = tx.prepare_cached(&SWEEP_REDELIVER).map_err(io)?;
        let mut rows = stmt
            .query(rusqlite::named_params! {":now": now, ":batch": batch})
            .map_err(io)?;
        while let Some(row) = rows.next().map_err(io)? {
            let agent = agent_col(row, 1).map_err(io)?;
            let at: Option<i64> = row.get(2).map_err(io)?;
            after.events.extend(swept_lease(
                id_col(row, 0).map_err(io)?,
                agent.clone(),
                Some(at.map(instant)),
            ));
            after.woken.push(agent);
            redelivered += 1;
        }
    }
    let mut claimed = 0;
    {
        let mut stmt = tx.prepare_cached(&SWEEP_CLAIMED).map_err(io)?;
        let mut rows = stmt
            .query(rusqlite::named_params! {":now": now, ":batch": batch})
            .map_err(io)?;
        while let Some(row) = rows.next().map_err(io)? {
            after.events.extend(swept_lease(
                id_col(row, 0).map_err(io)?,
                agent_col(row, 1).map_err(io)?,
                None,
            ));
            claimed += 1;
        }
    }
    Ok(SweepReport {
        queued_timed_out: queued as u64,
        claimed_timed_out: claimed,
        redelivered,
    })
}

fn by_id(tx: &rusqlite::Transaction<'_>, id: &ContractId) -> Result<Option<Contract>, StoreError> {
    tx.prepare_cached("SELECT * FROM contracts WHERE contract_id = ?1")
        .and_then(|mut s| s.query_row([id.as_str()], decode).optional())
        .map_err(io)
}

fn by_key(
    tx: &rusqlite::Transaction<'_>,
    requester: &AgentId,
    key: &str,
) -> Result<Option<Contract>, StoreError> {
    tx.prepare_cached("SELECT * FROM contracts WHERE requester_agent = ?1 AND idempotency_key = ?2")
        .and_then(|mut s| s.query_row(params![requester.as_str(), key], decode).optional())
        .map_err(io)
}

/// `INSERT` of every column of a record (table order).
static INSERT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let placeholders: Vec<String> = (1..=COLUMNS.len()).map(|i| format!("?{i}")).collect();
    format!("INSERT INTO contracts VALUES ({})", placeholders.join(","))
});

/// `UPDATE` of every column but `seq` of the record `?1`.
static UPDATE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let sets: Vec<String> = COLUMNS
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, c)| format!("{c} = ?{}", i + 1))
        .collect();
    format!("UPDATE contracts SET {} WHERE seq = ?1", sets.join(", "))
});

fn filters(query: &ListQuery, with_status: bool) -> (String, Vec<Sql>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut values: Vec<Sql> = Vec::new();
    let mut push = |clause: &str, v: Sql| {
        values.push(v);
        clauses.push(clause.replace('?', &format!("?{}", values.len())));
    };
    if let Some(a) = &query.target_agent {
        push("target_agent = ?", Sql::Text(a.as_str().to_owned()));
    }
    if let Some(a) = &query.requester_agent {
        push("requester_agent = ?", Sql::Text(a.as_str().to_owned()));
    }
    if let Some(id) = &query.contract_id {
        push("contract_id = ?", Sql::Text(id.as_str().to_owned()));
    }
    if with_status {
        if let Some(b) = query.before_seq {
            push("seq < ?", Sql::Integer(b));
        }
        if let Some(statuses) = &query.statuses {
            let list: Vec<String> = statuses.iter().map(|s| format!("'{}'", s.as_str())).collect();
            clauses.push(format!("status IN ({})", list.join(",")));
        }
    }
    let sql = if clauses.is_empty() {
        String::from("1")
    } else {
        clauses.join(" AND ")
    };
    (sql, values)
}

impl Store for SqliteStore {
    fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    fn insert(&self, build: Build<'_>) -> Result<InsertOutcome, StoreError> {
        self.write(|tx, now, after| {
            sweep_tx(tx, now, SWEEP_BATCH_PER_CALL, after)?;
            let seq: i64 = tx
                .prepare_cached(
                    "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'contracts'), 0) + 1",
                )
                .and_then(|mut s| s.query_row([], |r| r.get(0)))
                .map_err(io)?;
            let record = build(now, seq);
            if let Some(key) = &record.idempotency_key {
                let existing = by_key(tx, &record.requester_agent, key)?;
                if let Some(existing) = existing {
                    return Ok(InsertOutcome::KeyTaken(existing));
                }
            }
            tx.prepare_cached(&INSERT)
                .and_then(|mut s| s.execute(rusqlite::params_from_iter(encode(&record))))
                .map_err(io)?;
            #[cfg(feature = "test-failpoints")]
            crate::failpoints::hit("insert-before-commit");
            after.woken.push(record.target_agent.clone());
            Ok(InsertOutcome::Inserted(record))
        })
    }

    fn claim_next(&self, agent: &AgentId) -> Result<Option<Contract>, StoreError> {
        self.write(|tx, now, after| {
            sweep_tx(tx, now, SWEEP_BATCH_PER_CALL, after)?;
            tx.prepare_cached(CLAIM)
                .map_err(io)?
                .query_row(
                    rusqlite::named_params! {":now": now, ":agent": agent.as_str()},
                    decode,
                )
                .optional()
                .map_err(io)
        })
    }

    fn update(&self, contract_id: &ContractId, step: Update<'_>) -> Result<Option<Reply>, StoreError> {
        self.write(|tx, now, after| {
            sweep_tx(tx, now, SWEEP_BATCH_PER_CALL, after)?;
            let Some(record) = by_id(tx, contract_id)? else {
                return Ok(None);
            };
            let out = step(&record, now);
            if let Some(next) = &out.next {
                if next.status == Status::Submitted && record.status != Status::Submitted {
                    after.woken.push(next.target_agent.clone());
                }
                let mut values = encode(next);
                values[0] = Sql::Integer(record.seq);
                tx.prepare_cached(&UPDATE)
                    .and_then(|mut s| s.execute(rusqlite::params_from_iter(values)))
                    .map_err(io)?;
            }
            Ok(Some(out.reply))
        })
    }

    fn get(&self, contract_id: &ContractId) -> Result<Option<Contract>, StoreError> {
        self.read(|tx| by_id(tx, contract_id))
    }

    fn get_by_key(&self, requester: &AgentId, key: &str) -> Result<Option<Contract>, StoreError> {
        self.read(|tx| by_key(tx, requester, key))
    }

    fn list(&self, query: &ListQuery, now: EpochMs) -> Result<ListPage, StoreError> {
        self.read(|tx| {
            let mut counts = Counts::default();
            let (where_counts, values) = filters(query, false);
            let n = values.len();
            let sql = format!(
                "SELECT status, count(*),
                        sum(CASE WHEN (status = 'SUBMITTED' AND queue_expires_at <= ?{a})
                                   OR (status = 'CLAIMED' AND expires_at <= ?{a}) THEN 1 ELSE 0 END)
                   FROM contracts WHERE {where_counts} GROUP BY status",
                a = n + 1
            );
            let mut params = values;
            params.push(Sql::Integer(now));
            let mut stmt = tx.prepare(&sql).map_err(io)?;
            let rows = stmt
                .query_map(rusqlite::params_from_iter(params), |r| {
                    Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
                })
                .map_err(io)?;
            for row in rows {
                let (status, count, expired) = row.map_err(io)?;
                let status = Status::parse(&status)
                    .ok_or_else(|| StoreError::corrupt(format!("unknown status {status}")))?;
                counts.add_status(status, u64::try_from(count).unwrap_or(0));
                counts.logically_expired += u64::try_from(expired).unwrap_or(0);
            }
            drop(stmt);
            let (where_page, mut values) = filters(query, true);
            values.push(Sql::Integer(i64::try_from(query.limit).unwrap_or(i64::MAX)));
            let sql = format!(
                "SELECT * FROM contracts WHERE {where_page} ORDER BY seq DESC LIMIT ?{}",
                values.len()
            );
            let mut stmt = tx.prepare(&sql).map_err(io)?;
            let records = stmt
                .query_map(rusqlite::params_from_iter(values), decode)
                .map_err(io)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(io)?;
            Ok(ListPage { records, counts })
        })
    }

    fn sweep(&self, now: EpochMs, max_per_kind: usize) -> Result<SweepReport, StoreError> {
        self.writable()?;
        let mut after = Committed::default();
        let report = self.transaction(TransactionBehavior::Immediate, |tx| {
            after = Committed::default();
            sweep_tx(tx, now, max_per_kind, &mut after)
        })?;
        self.committed(after);
        Ok(report)
    }

    fn purge_terminal(&self, completed_before: EpochMs, max: usize) -> Result<u64, StoreError> {
        self.write(|tx, _now, _| {
            let n = tx
                .execute(
                    "DELETE FROM contracts WHERE seq IN (
                        SELECT seq FROM contracts
                         WHERE completed_at IS NOT NULL AND completed_at < ?1
                           AND status NOT IN ('SUBMITTED', 'CLAIMED')
                         ORDER BY completed_at, seq LIMIT ?2)
                       AND status NOT IN ('SUBMITTED', 'CLAIMED') AND completed_at < ?1",
                    params![completed_before, i64::try_from(max).unwrap_or(i64::MAX)],
                )
                .map_err(io)?;
            Ok(n as u64)
        })
    }

    fn due(&self, agent: &AgentId, now: EpochMs) -> Result<Due, StoreError> {
        self.read(|tx| {
            let (claimable, next_at): (i64, Option<i64>) = tx
                .prepare_cached(DUE)
                .and_then(|mut s| s.query_row(params![agent.as_str(), now], |r| Ok((r.get(0)?, r.get(1)?))))
                .map_err(io)?;
            Ok(Due {
                claimable: claimable != 0,
                next_at,
            })
        })
    }

    fn watch(&self, agent: &AgentId, wake: &Wake) -> Result<(), StoreError> {
        // A reader never waits for work (a poll writes), and its thread's connection would create
        // sidecars.
        self.writable()?;
        self.watch.watchers.add(agent, wake);
        let mut running = self.watch.lock_running();
        if !*running {
            let watching = self.watch.clone();
            std::thread::Builder::new()
                .name(String::from("contracts-watch"))
                .spawn(move || watching.run())
                .map_err(|e| StoreError::io(format!("the watching thread cannot start: {e}")))?;
            *running = true;
        }
        Ok(())
    }

    fn unwatch(&self, agent: &AgentId, wake: &Wake) {
        self.watch.watchers.remove(agent, wake);
    }

    fn queue_depth(&self) -> Result<QueueDepth, StoreError> {
        self.read(|tx| {
            let mut depth = QueueDepth::default();
            let mut stmt = tx
                .prepare_cached("SELECT status, count(*) FROM contracts GROUP BY status")
                .map_err(io)?;
            let mut rows = stmt.query([]).map_err(io)?;
            while let Some(row) = rows.next().map_err(io)? {
                let (status, n): (String, i64) = (row.get(0).map_err(io)?, row.get(1).map_err(io)?);
                let status = Status::parse(&status)
                    .ok_or_else(|| StoreError::corrupt(format!("unknown status {status}")))?;
                depth.by_status.add_status(status, u64::try_from(n).unwrap_or(0));
            }
            drop(rows);
            drop(stmt);
            // The partial index of waiting records by target answers this one.
            let mut stmt = tx
                .prepare_cached(
                    "SELECT target_agent, count(*) FROM contracts WHERE status = 'SUBMITTED'
                      GROUP BY target_agent ORDER BY target_agent",
                )
                .map_err(io)?;
            let mut rows = stmt.query([]).map_err(io)?;
            while let Some(row) = rows.next().map_err(io)? {
                let n: i64 = row.get(1).map_err(io)?;
                depth
                    .submitted_by_target
                    .push((agent_col(row, 0).map_err(io)?, u64::try_from(n).unwrap_or(0)));
            }
            Ok(depth)
        })
    }

    fn observe(&self, observer: Arc<dyn ContractsObserver>) {
        self.observer.set(observer);
    }

    fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        self.read(|tx| {
            let mut report = IntegrityReport::default();
            let mut stmt = tx.prepare("PRAGMA integrity_check").map_err(io)?;
            let lines = stmt
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(io)?
                .collect::<Result<Vec<_>, _>>()
                .map_err(io)?;
            if lines != ["ok"] {
                for l in lines {
                    report.push(format!("integrity_check: {l}"));
                }
            }
            drop(stmt);
            let mut stmt = tx.prepare("SELECT * FROM contracts ORDER BY seq").map_err(io)?;
            let mut rows = stmt.query([]).map_err(io)?;
            while let Some(row) = rows.next().map_err(io)? {
                report.records += 1;
                match decode(row) {
                    Ok(c) => {
                        for v in integrity::violations(&c) {
                            report.push(v);
                        }
                    }
                    Err(e) => report.push(format!("a record cannot be read: {e}")),
                }
            }
            Ok(report)
        })
    }
}
