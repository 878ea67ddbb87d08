//! [`PgStore`]: one contract store for agents on several machines.
//!
//! The schema is that of the SQLite store with PostgreSQL types; every write re-checks its full
//! condition in the same statement or under the row lock; the claim is one statement whose
//! `MATERIALIZED` CTE picks the oldest unlocked eligible row `FOR UPDATE SKIP LOCKED`; time is the
//! server's `clock_timestamp()` unless a clock is given.

use std::str::FromStr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Client, Config, NoTls, Row, Statement, Transaction};
use serde_json::Value;
use shiftwork_seams::Clock;
use std::collections::HashMap;

use super::{
    Build, COLUMNS, Counts, Due, InsertOutcome, ListPage, ListQuery, QueueDepth, Store, SweepReport, Update,
};
use crate::error::StoreError;
use crate::integrity::{self, IntegrityReport};
use crate::limits::SWEEP_BATCH_PER_CALL;
use crate::model::{AgentId, Contract, ContractId, EndReason, EpochMs, Status, instant};
use crate::observe::{ContractEvent, ContractsObserver, ObserverSlot, swept_lease};
use crate::transition::Reply;
use crate::wait::{Wake, Watchers};

/// The schema version of this crate (2 since delivery counts, availability and cancellation).
pub const PG_SCHEMA_VERSION: i64 = 2;

/// How long the listening thread waits for a notification before it looks at its waiters again.
const LISTEN_SLICE: Duration = Duration::from_millis(200);
/// How long the listening thread waits before it connects again after a failure.
const LISTEN_RETRY: Duration = Duration::from_millis(200);
/// How long the listening thread stays with nobody waiting before it stops.
const LISTEN_IDLE: Duration = Duration::from_secs(1);

/// The key of the transaction-scoped advisory lock migrations run under ("SWCT").
const MIGRATION_LOCK: i64 = 0x5357_4354;

/// How a [`PgStore`] connects.
#[derive(Clone)]
pub struct PgOptions {
    /// Connections in the pool (default 8).
    pub pool_size: usize,
    /// A schema to hold the tables (created if missing); `None` uses the connection's `search_path`.
    /// Tests give each run its own.
    pub schema: Option<String>,
    /// The clock of the judgements; `None` reads the server's `clock_timestamp()`.
    pub clock: Option<Arc<dyn Clock>>,
    /// How long opening a connection may take.
    pub connect_timeout: Duration,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            pool_size: 8,
            schema: None,
            clock: None,
            connect_timeout: Duration::from_secs(5),
        }
    }
}

impl std::fmt::Debug for PgOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgOptions")
            .field("pool_size", &self.pool_size)
            .field("schema", &self.schema)
            .field("server_clock", &self.clock.is_none())
            .finish()
    }
}

/// The PostgreSQL store.
///
/// ```no_run
/// use shiftwork_contracts::{PgOptions, PgStore, Store};
/// let store = PgStore::connect("postgres://agents@db.internal/contracts", PgOptions::default()).unwrap();
/// assert!(store.check_integrity().unwrap().is_clean());
/// ```
pub struct PgStore {
    shared: Arc<Shared>,
    /// The clock of the judgements and of the facade ([`PgStore::server_clock`]), made once.
    clock: Arc<dyn Clock>,
    /// Told of the leases sweeps end.
    observer: ObserverSlot,
}

struct Shared {
    config: Config,
    options: PgOptions,
    pool: Mutex<Pool>,
    available: Condvar,
    /// Waiting polls, woken by the listening thread.
    watchers: Watchers,
    /// Whether the listening thread runs (held while it decides to stop).
    listening: Mutex<bool>,
    /// The `NOTIFY` channel of this store's tables: one per schema.
    channel: String,
}

struct Pool {
    idle: Vec<Conn>,
    open: usize,
}

impl Drop for Pool {
    /// Closes the idle connections on a thread of their own: closing a synchronous `postgres::Client`
    /// blocks on the driver's runtime, which panics when the store is dropped inside an async runtime
    /// (as when an embedder's async server ends its session). The join waits for the connections to
    /// close.
    fn drop(&mut self) {
        let idle = std::mem::take(&mut self.idle);
        if !idle.is_empty() {
            let _ = std::thread::spawn(move || drop(idle)).join();
        }
    }
}

/// A pooled connection and the statements prepared on it (every statement of the store is prepared
/// once per connection, not parsed and planned at every call).
struct Conn {
    client: Client,
    statements: HashMap<String, Statement>,
}

/// The most statements kept prepared on one connection (the filters of `list` make a few variants).
const STATEMENTS_KEPT: usize = 64;

/// A transaction whose statements are prepared once per connection.
struct Tx<'t, 'c> {
    tx: &'t mut Transaction<'c>,
    statements: &'t mut HashMap<String, Statement>,
}

/// A connection outside a transaction, for a read of one statement (no `BEGIN` / `COMMIT` round
/// trips), with the same prepared statements.
struct Plain<'t> {
    tx: &'t mut Client,
    statements: &'t mut HashMap<String, Statement>,
}

type Params<'p> = &'p [&'p (dyn ToSql + Sync)];

macro_rules! prepared_calls {
    ($ty:ty) => {
        impl $ty {
            fn statement(&mut self, sql: &str) -> Result<Statement, postgres::Error> {
                if let Some(s) = self.statements.get(sql) {
                    return Ok(s.clone());
                }
                let prepared = self.tx.prepare(sql)?;
                if self.statements.len() >= STATEMENTS_KEPT {
                    self.statements.clear();
                }
                self.statements.insert(sql.to_owned(), prepared.clone());
                Ok(prepared)
            }

            fn query(&mut self, sql: &str, params: Params<'_>) -> Result<Vec<Row>, postgres::Error> {
                let st = self.statement(sql)?;
                self.tx.query(&st, params)
            }

            fn query_one(&mut self, sql: &str, params: Params<'_>) -> Result<Row, postgres::Error> {
                let st = self.statement(sql)?;
                self.tx.query_one(&st, params)
            }

            fn execute(&mut self, sql: &str, params: Params<'_>) -> Result<u64, postgres::Error> {
                let st = self.statement(sql)?;
                self.tx.execute(&st, params)
            }

            #[allow(dead_code)] // `Plain` only reads.
            fn batch_execute(&mut self, sql: &str) -> Result<(), postgres::Error> {
                self.tx.batch_execute(sql)
            }
        }
    };
}

prepared_calls!(Tx<'_, '_>);
prepared_calls!(Plain<'_>);

impl Conn {
    /// The connection outside a transaction.
    fn plain(&mut self) -> Plain<'_> {
        Plain {
            tx: &mut self.client,
            statements: &mut self.statements,
        }
    }
}

/// Runs `f` in one transaction on `conn`; a failure rolls back.
fn transaction<T>(
    conn: &mut Conn,
    f: impl FnOnce(&mut Tx<'_, '_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let Conn { client, statements } = conn;
    let mut tx = client.transaction().map_err(classify)?;
    match f(&mut Tx {
        tx: &mut tx,
        statements,
    }) {
        Ok(v) => tx.commit().map(|()| v).map_err(classify),
        Err(e) => {
            let _ = tx.rollback();
            Err(e)
        }
    }
}

struct Lease<'a> {
    shared: &'a Shared,
    client: Option<Conn>,
    broken: bool,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        let mut pool = self.shared.lock_pool();
        match self.client.take() {
            Some(c) if !self.broken && !c.client.is_closed() => pool.idle.push(c),
            _ => pool.open = pool.open.saturating_sub(1),
        }
        drop(pool);
        self.shared.available.notify_one();
    }
}

/// Maps a PostgreSQL error to a store failure, the error its source.
fn classify(e: postgres::Error) -> StoreError {
    judge(&e).with_source(e)
}

fn judge(e: &postgres::Error) -> StoreError {
    if e.is_closed() {
        return StoreError::unavailable(String::from("the connection to the PostgreSQL server was lost"));
    }
    match e.code() {
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE || *c == SqlState::QUERY_CANCELED => {
            StoreError::busy(String::from("a lock or statement timeout ran out"))
        }
        Some(c)
            if *c == SqlState::ADMIN_SHUTDOWN
                || *c == SqlState::CRASH_SHUTDOWN
                || *c == SqlState::CANNOT_CONNECT_NOW
                || *c == SqlState::CONNECTION_FAILURE
                || *c == SqlState::CONNECTION_EXCEPTION
                || *c == SqlState::CONNECTION_DOES_NOT_EXIST
                || *c == SqlState::IDLE_IN_TRANSACTION_SESSION_TIMEOUT =>
        {
            StoreError::unavailable(format!("the PostgreSQL server ended the session ({})", c.code()))
        }
        Some(c) if c.code().starts_with("08") => StoreError::unavailable(format!(
            "the connection to the PostgreSQL server failed ({})",
            c.code()
        )),
        Some(c) => StoreError::io(format!("PostgreSQL error {}", c.code())),
        None => StoreError::unavailable(String::from("the PostgreSQL server could not be reached")),
    }
}

fn quote_ident(name: &str) -> Option<String> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit();
    ok.then(|| format!("\"{name}\""))
}

impl Shared {
    fn lock_pool(&self) -> MutexGuard<'_, Pool> {
        // The pool holds plain values; a panic elsewhere cannot leave it half-updated.
        self.pool.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn connect(&self) -> Result<Client, StoreError> {
        let mut client = self.config.connect(NoTls).map_err(|e| {
            if e.code().is_some() {
                StoreError::unavailable(format!(
                    "the PostgreSQL server refused the connection ({})",
                    e.code().map(SqlState::code).unwrap_or("?")
                ))
            } else {
                StoreError::unavailable(String::from("the PostgreSQL server could not be reached"))
            }
        })?;
        let mut setup = String::from(
            "SET statement_timeout = '5s'; SET lock_timeout = '5s'; \
             SET idle_in_transaction_session_timeout = '10s'; \
             SET default_transaction_isolation = 'read committed';",
        );
        if let Some(schema) = &self.options.schema {
            let q = quote_ident(schema).ok_or_else(|| {
                StoreError::unavailable(String::from(
                    "the schema name must be lowercase letters, digits and _",
                ))
            })?;
            setup.push_str(&format!(" SET search_path = {q};"));
        }
        client.batch_execute(&setup).map_err(classify)?;
        Ok(client)
    }

    fn lease(&self) -> Result<Lease<'_>, StoreError> {
        let mut pool = self.lock_pool();
        loop {
            if let Some(client) = pool.idle.pop() {
                if client.client.is_closed() {
                    pool.open = pool.open.saturating_sub(1);
                    continue;
                }
                return Ok(Lease {
                    shared: self,
                    client: Some(client),
                    broken: false,
                });
            }
            if pool.open < self.options.pool_size {
                pool.open += 1;
                drop(pool);
                return match self.connect() {
                    Ok(client) => Ok(Lease {
                        shared: self,
                        client: Some(Conn {
                            client,
                            statements: HashMap::new(),
                        }),
                        broken: false,
                    }),
                    Err(e) => {
                        let mut pool = self.lock_pool();
                        pool.open = pool.open.saturating_sub(1);
                        Err(e)
                    }
                };
            }
            pool = self.available.wait(pool).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Runs `f` on a pooled connection; a lost connection is dropped from the pool so the next call
    /// reconnects.
    fn leased<T>(&self, f: impl FnOnce(&mut Conn) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut lease = self.lease()?;
        let result = match lease.client.as_mut() {
            Some(conn) => f(conn),
            None => return Err(StoreError::io(String::from("no connection"))),
        };
        if matches!(result, Err(StoreError::Unavailable { .. }))
            || lease.client.as_ref().is_some_and(|c| c.client.is_closed())
        {
            lease.broken = true;
        }
        result
    }

    /// Runs `f` in one transaction; a failure rolls back, and a lost connection is dropped from the
    /// pool so the next call reconnects.
    fn run<T>(&self, f: impl FnOnce(&mut Tx<'_, '_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.leased(|conn| transaction(conn, f))
    }

    /// Runs the one-statement read `f` outside a transaction (a lost connection is dropped from the
    /// pool, as for [`Shared::run`]).
    fn read<T>(&self, f: impl FnOnce(&mut Plain<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        self.leased(|conn| f(&mut conn.plain()))
    }

    /// Sends the notifications of a committed write ([`NOTIFY`]) on `conn`, the connection that
    /// committed it. The write stands whatever happens here: a notification that cannot be sent
    /// wakes this process's waiters of the agents instead, and a waiter elsewhere looks again within
    /// its recheck period, as after a lost listening connection.
    fn notify(&self, conn: &mut Conn, wake: &[String]) {
        if wake.is_empty() {
            return;
        }
        let sent = conn.plain().execute(NOTIFY, &[&self.channel, &wake]).is_ok();
        if !sent {
            for agent in wake {
                if let Ok(agent) = AgentId::new(agent) {
                    self.watchers.notify_one(&agent);
                }
            }
        }
    }

    /// The listening thread: one dedicated connection, outside the operation pool, that `LISTEN`s on
    /// the store's channel and wakes the waiters of the agent each notification names. It reconnects
    /// after a failure (waking every waiter, so none misses a change) and stops when nobody has waited
    /// for a second.
    fn listen(self: Arc<Self>) {
        let mut idle = Duration::ZERO;
        'connect: loop {
            let client = self.connect().and_then(|mut c| {
                c.batch_execute(&format!("LISTEN \"{}\"", self.channel))
                    .map_err(classify)?;
                Ok(c)
            });
            let mut client = match client {
                Ok(c) => c,
                Err(_) => {
                    self.watchers.notify_all();
                    // The pause of a reconnecting connection, not a wait of a call: every waiting poll
                    // waits on its own clock, and was just woken to look for itself.
                    std::thread::sleep(LISTEN_RETRY);
                    if self.stop_listening_if_idle(&mut idle, LISTEN_RETRY) {
                        return;
                    }
                    continue 'connect;
                }
            };
            // Anything committed while no connection listened is looked for again.
            self.watchers.notify_all();
            loop {
                let next = {
                    use postgres::fallible_iterator::FallibleIterator;
                    client.notifications().timeout_iter(LISTEN_SLICE).next()
                };
                match next {
                    Ok(Some(n)) => {
                        idle = Duration::ZERO;
                        // One notification for each transaction that put contracts of the agent
                        // back in the queue: one waiting poll wakes, and a poll that claims while
                        // more wait wakes the next.
                        if let Ok(agent) = AgentId::new(n.payload()) {
                            self.watchers.notify_one(&agent);
                        }
                    }
                    Ok(None) => {
                        if self.stop_listening_if_idle(&mut idle, LISTEN_SLICE) {
                            // Closing a client blocks on its runtime: do it here, on this thread.
                            drop(client);
                            return;
                        }
                    }
                    Err(_) => continue 'connect,
                }
            }
        }
    }

    /// Counts `slept` towards the idle time and stops the listener once nobody has waited for
    /// [`LISTEN_IDLE`]; true when it stopped.
    fn stop_listening_if_idle(&self, idle: &mut Duration, slept: Duration) -> bool {
        if !self.watchers.agents().is_empty() {
            *idle = Duration::ZERO;
            return false;
        }
        *idle += slept;
        if *idle < LISTEN_IDLE {
            return false;
        }
        let mut listening = self.listening.lock().unwrap_or_else(PoisonError::into_inner);
        if self.watchers.agents().is_empty() {
            *listening = false;
            return true;
        }
        *idle = Duration::ZERO;
        false
    }

    fn now(&self, tx: &mut Tx<'_, '_>) -> Result<EpochMs, StoreError> {
        match &self.options.clock {
            Some(clock) => Ok(clock.now().timestamp_millis()),
            None => {
                let row = tx
                    .query_one(
                        "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint",
                        &[],
                    )
                    .map_err(classify)?;
                // Already milliseconds, truncated by the cast (CT-3).
                Ok(row.get(0))
            }
        }
    }
}

/// The server's clock in milliseconds since 1970, truncated: without a clock of its own
/// ([`PgOptions::clock`]), a store judges by the database server's clock, so that processes on
/// several machines agree on every deadline.
const SERVER_NOW: &str = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint";

const SCHEMA: &str = "
CREATE TABLE contracts (
  seq                BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  contract_id        TEXT    NOT NULL UNIQUE,
  requester_agent    TEXT    NOT NULL,
  target_agent       TEXT    NOT NULL,
  idempotency_key    TEXT,
  payload_sha256     TEXT    NOT NULL,
  task_type          TEXT    NOT NULL,
  title              TEXT    NOT NULL,
  context_summary    TEXT    NOT NULL,
  workspace_root     TEXT    NOT NULL,
  pointers           JSONB   NOT NULL,
  contract_schema    JSONB,
  exec_ttl_sec       BIGINT  NOT NULL,
  queue_ttl_sec      BIGINT  NOT NULL,
  status             TEXT    NOT NULL CONSTRAINT contracts_status_check
                             CHECK (status IN ('SUBMITTED','CLAIMED','COMPLETED',
                                               'FAILED','TIMED_OUT','POINTER_STALE','CANCELLED')),
  created_at         BIGINT  NOT NULL,
  queued_at          BIGINT  NOT NULL,
  queue_expires_at   BIGINT  NOT NULL,
  lifetime_ends_at   BIGINT  NOT NULL,
  claimed_at         BIGINT,
  expires_at         BIGINT,
  completed_at       BIGINT,
  claim_epoch        BIGINT  NOT NULL,
  extend_count       BIGINT  NOT NULL,
  release_count      BIGINT  NOT NULL,
  retry_count        BIGINT  NOT NULL,
  toctou_strikes     BIGINT  NOT NULL,
  end_reason         TEXT,
  dirty_files        JSONB,
  error_reason       TEXT,
  fail_reason        TEXT,
  result_summary     TEXT,
  structured_output  JSONB,
  artifacts_pointers JSONB,
  salvaged_result    JSONB,
  max_deliveries     BIGINT  NOT NULL,
  delivery_count     BIGINT  NOT NULL,
  available_at       BIGINT,
  cancel_reason      TEXT
);
CREATE INDEX contracts_ready      ON contracts (target_agent, queued_at, seq) WHERE status = 'SUBMITTED';
CREATE INDEX contracts_queue_due  ON contracts (queue_expires_at, seq)        WHERE status = 'SUBMITTED';
CREATE INDEX contracts_lease_due  ON contracts (expires_at, seq)              WHERE status = 'CLAIMED';
CREATE UNIQUE INDEX contracts_key ON contracts (requester_agent, idempotency_key)
                                  WHERE idempotency_key IS NOT NULL;
CREATE INDEX contracts_by_target    ON contracts (target_agent, seq);
CREATE INDEX contracts_by_requester ON contracts (requester_agent, seq);
CREATE INDEX contracts_done         ON contracts (completed_at) WHERE completed_at IS NOT NULL;
CREATE INDEX contracts_live         ON contracts (target_agent) WHERE status IN ('SUBMITTED', 'CLAIMED');
CREATE TABLE contracts_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO contracts_meta (key, value) VALUES ('schema_version', '2');
";

/// Schema version 1 → 2: the four columns of redelivery and cancellation (migrated contracts get
/// `max_deliveries = 1`, `available_at = null`, `delivery_count` 1 when ever claimed, else 0) and
/// `CANCELLED` in the status check.
const MIGRATE_V1: &str = "
ALTER TABLE contracts
  ADD COLUMN max_deliveries BIGINT NOT NULL DEFAULT 1,
  ADD COLUMN delivery_count BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN available_at   BIGINT,
  ADD COLUMN cancel_reason  TEXT;
UPDATE contracts SET delivery_count = 1 WHERE claim_epoch >= 1;
ALTER TABLE contracts ALTER COLUMN max_deliveries DROP DEFAULT, ALTER COLUMN delivery_count DROP DEFAULT;
ALTER TABLE contracts DROP CONSTRAINT IF EXISTS contracts_status_check;
ALTER TABLE contracts ADD CONSTRAINT contracts_status_check
  CHECK (status IN ('SUBMITTED','CLAIMED','COMPLETED','FAILED','TIMED_OUT','POINTER_STALE','CANCELLED'));
CREATE INDEX contracts_live ON contracts (target_agent) WHERE status IN ('SUBMITTED', 'CLAIMED');
UPDATE contracts_meta SET value = '2' WHERE key = 'schema_version';
";

/// What on the store's two tables the schema does not define: a trigger, a rule, a row
/// security policy or row security itself, or a table that is not a plain table (a view named
/// `contracts`). Each row: the kind, its name, the table.
const FOREIGN_OBJECTS: &str = "
WITH ours AS (
  SELECT c.oid, c.relname, c.relkind, c.relrowsecurity FROM pg_class c
   WHERE c.oid IN (to_regclass('contracts'), to_regclass('contracts_meta')))
SELECT 'a trigger', t.tgname::text, o.relname::text FROM pg_trigger t JOIN ours o ON o.oid = t.tgrelid
 WHERE NOT t.tgisinternal
UNION ALL
SELECT 'a rule', r.rulename::text, o.relname::text FROM pg_rewrite r JOIN ours o ON o.oid = r.ev_class
 WHERE r.rulename <> '_RETURN'
UNION ALL
SELECT 'a row security policy', p.polname::text, o.relname::text FROM pg_policy p JOIN ours o ON o.oid = p.polrelid
UNION ALL
SELECT 'a setting', 'row level security', o.relname::text FROM ours o WHERE o.relrowsecurity
UNION ALL
SELECT 'a relation of another kind', o.relname::text, o.relname::text FROM ours o WHERE o.relkind <> 'r'";

/// Refuses a store whose tables carry anything the contracts schema does not define: a
/// trigger could store a dispatch for another agent, copy results elsewhere or hide waiting work.
fn check_objects(tx: &mut Tx<'_, '_>) -> Result<(), StoreError> {
    let rows = tx.query(FOREIGN_OBJECTS, &[]).map_err(classify)?;
    if let Some(row) = rows.first() {
        let (kind, name, table): (String, String, String) = (row.get(0), row.get(1), row.get(2));
        let name =
            shiftwork_seams::echo::escape_controls(&shiftwork_seams::echo::clip_echo(&name)).into_owned();
        return Err(StoreError::unavailable(format!(
            "the PostgreSQL table {table} carries {kind} '{name}' that the contracts schema does not define, and a store holding objects it did not create is refused (a trigger could redirect or hide work); drop it if you made it, or restore the store from a copy you trust"
        )));
    }
    Ok(())
}

/// The instant of a statement, read once: `clock.now`, from a parameter (a given clock) or from the
/// server's clock at the statement's start.
const NOW: &str = "(SELECT now FROM clock)";

/// The `clock` CTE of a statement whose instant is the parameter `param`, or the server's clock
/// when `param` is `None`.
fn clock_cte(param: Option<&str>) -> String {
    match param {
        Some(p) => format!("clock AS MATERIALIZED (SELECT {p}::bigint AS now)"),
        None => String::from(
            "clock AS MATERIALIZED (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now)",
        ),
    }
}

/// The redelivery backoff after `delivery_count` deliveries, as `transition::backoff_ms` computes it.
const BACKOFF: &str = "least(30000::bigint << least(greatest(delivery_count - 1, 0), 7)::int, 3600000)";

/// A claimed record whose lease ran out goes back to the queue when it has deliveries left and its
/// backoff ends before its lifetime ceiling.
fn redeliverable() -> String {
    format!("delivery_count < max_deliveries AND {NOW} + {BACKOFF} < lifetime_ends_at")
}

/// The sweep as three data-modifying CTEs over disjoint rows, at the statement's instant ([`NOW`]),
/// at most `batch` (a parameter) records of each kind, oldest deadline first, each write repeating
/// its predicate: `q` (queued past their window, now `TIMED_OUT`), `r` (claimed with a delivery
/// left, back in the queue; returns `contract_id, target_agent, available_at`) and `c` (claimed
/// without, now `TIMED_OUT`; returns `contract_id, target_agent`). `except`, a parameter, names
/// a `seq` the sweep leaves alone: the row a holder operation has locked and judges itself.
fn sweep_ctes(batch: &str, except: Option<&str>) -> String {
    let skip = except
        .map(|p| format!(" AND seq IS DISTINCT FROM {p}::bigint"))
        .unwrap_or_default();
    let r = redeliverable();
    format!(
        "q AS (UPDATE contracts
   SET status = 'TIMED_OUT', end_reason = 'QUEUE_TTL_EXPIRED', completed_at = queue_expires_at
 WHERE seq IN (SELECT seq FROM contracts
                WHERE status = 'SUBMITTED' AND queue_expires_at <= {NOW}{skip}
                ORDER BY queue_expires_at, seq LIMIT {batch}
                FOR UPDATE SKIP LOCKED)
   AND status = 'SUBMITTED' AND queue_expires_at <= {NOW}
RETURNING 1),
r AS (UPDATE contracts
   SET status = 'SUBMITTED', queued_at = {NOW}, available_at = {NOW} + {BACKOFF},
       queue_expires_at = least({NOW} + {BACKOFF} + queue_ttl_sec * 1000, lifetime_ends_at),
       claimed_at = NULL, expires_at = NULL, extend_count = 0, toctou_strikes = 0,
       error_reason = {entry}
 WHERE seq IN (SELECT seq FROM contracts
                WHERE status = 'CLAIMED' AND expires_at <= {NOW} AND {r}{skip}
                ORDER BY expires_at, seq LIMIT {batch}
                FOR UPDATE SKIP LOCKED)
   AND status = 'CLAIMED' AND expires_at <= {NOW} AND {r}
RETURNING contract_id, target_agent, available_at),
c AS (UPDATE contracts
   SET status = 'TIMED_OUT', end_reason = 'EXEC_TTL_EXPIRED', completed_at = expires_at
 WHERE seq IN (SELECT seq FROM contracts
                WHERE status = 'CLAIMED' AND expires_at <= {NOW} AND NOT ({r}){skip}
                ORDER BY expires_at, seq LIMIT {batch}
                FOR UPDATE SKIP LOCKED)
   AND status = 'CLAIMED' AND expires_at <= {NOW} AND NOT ({r})
RETURNING contract_id, target_agent)",
        entry = crate::store::history_entry(crate::transition::REDELIVERED_AFTER_TIMEOUT),
    )
}

/// The notifications of a committed write, one statement of its own on the channel `$1`: one per
/// agent of `$2`, each once.
///
/// A write does not notify inside its transaction: PostgreSQL serialises every committing
/// transaction that notifies, across the whole cluster, under one lock held through the commit's
/// WAL flush, so writes that notified flushed one by one (one flush per dispatch, whatever the
/// concurrency). The notification follows the commit on the same connection instead, in a
/// transaction that writes no WAL (nothing to flush); a waiter it wakes sees the committed write.
const NOTIFY: &str = "SELECT pg_notify($1, a) FROM (SELECT DISTINCT unnest($2::text[]) AS a) AS agents";

/// The columns a statement with the sweep's CTEs returns about them (read by [`swept`]).
const SWEPT: &str = "(SELECT count(*) FROM q) AS swept_queued, (SELECT count(*) FROM c) AS swept_claimed,
       (SELECT count(*) FROM r) AS swept_redelivered,
       ARRAY(SELECT contract_id FROM r) AS redelivered_ids, ARRAY(SELECT target_agent FROM r) AS redelivered_agents,
       ARRAY(SELECT available_at FROM r) AS redelivered_at,
       ARRAY(SELECT contract_id FROM c) AS ended_ids, ARRAY(SELECT target_agent FROM c) AS ended_agents";

/// The sweep alone at the instant `$1`, `$2` records of each kind.
static SWEEP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "WITH {}, {} SELECT {SWEPT}",
        clock_cte(Some("$1")),
        sweep_ctes("$2", None),
    )
});

/// The claim as one statement (one round trip, its own transaction): the sweep, then the oldest
/// unlocked claimable record of agent `$1` picked `FOR UPDATE SKIP LOCKED` and claimed, its columns
/// (all null when nothing was claimable), and `more`: whether another claimable record of the agent
/// is there (the claimer then wakes another waiting poll). `$2` the sweep's batch, `$3` the
/// instant when a clock is given (else the server's clock).
fn claim_sql(given_clock: bool) -> String {
    let claimable = format!(
        "status = 'SUBMITTED' AND target_agent = $1 AND queue_expires_at > {NOW}
       AND (available_at IS NULL OR available_at <= {NOW})"
    );
    format!(
        "WITH {clock}, {sweep},
next AS MATERIALIZED (
    SELECT seq FROM contracts
     WHERE {claimable}
     ORDER BY queued_at, seq
     LIMIT 1
     FOR UPDATE SKIP LOCKED),
claimed AS (UPDATE contracts t
   SET status = 'CLAIMED', claim_epoch = t.claim_epoch + 1, delivery_count = t.delivery_count + 1,
       claimed_at = {NOW},
       expires_at = least({NOW} + t.exec_ttl_sec * 1000, t.lifetime_ends_at),
       extend_count = 0, toctou_strikes = 0, dirty_files = NULL
  FROM next
 WHERE t.seq = next.seq AND t.status = 'SUBMITTED'
RETURNING t.*)
SELECT {SWEPT},
       EXISTS (SELECT 1 FROM contracts WHERE {claimable} AND seq <> (SELECT seq FROM next)) AS more,
       claimed.*
  FROM (SELECT 1) AS one LEFT JOIN claimed ON true",
        clock = clock_cte(given_clock.then_some("$3")),
        sweep = sweep_ctes("$2", None),
    )
}

static CLAIM_SERVER_CLOCK: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| claim_sql(false));
static CLAIM_GIVEN_CLOCK: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| claim_sql(true));

/// The dispatch's write as one statement (its own transaction): the sweep at `$41`, then the
/// record `$1 … $39` inserted unless its idempotency key is taken (its columns, or all null).
/// `$40` the sweep's batch. The target is notified once it commits ([`NOTIFY`]).
static INSERT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let placeholders: Vec<String> = (1..=COLUMNS.len()).map(|i| format!("${i}")).collect();
    format!(
        "WITH {clock}, {sweep},
ins AS (INSERT INTO contracts OVERRIDING SYSTEM VALUE VALUES ({values})
        ON CONFLICT (requester_agent, idempotency_key) WHERE idempotency_key IS NOT NULL
        DO NOTHING RETURNING *)
SELECT {SWEPT}, ins.* FROM (SELECT 1) AS one LEFT JOIN ins ON true",
        clock = clock_cte(Some("$41")),
        sweep = sweep_ctes("$40", None),
        values = placeholders.join(","),
    )
});

/// A holder operation's row, locked, then the server's clock (read once the lock is held).
const LOCK_ROW: &str = "
WITH locked AS MATERIALIZED (SELECT * FROM contracts WHERE contract_id = $1 FOR UPDATE)
SELECT locked.*, (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms FROM locked";

/// A holder operation's write as one statement: the sweep at `$2` leaving the locked row `$3`
/// alone (`$1` the batch) and — `with_update` — the row `$3` rewritten with the columns
/// `$4 … $41` (every column but `seq`).
fn holder_write_sql(with_update: bool) -> String {
    let update = if with_update {
        let sets: Vec<String> = COLUMNS
            .iter()
            .enumerate()
            .skip(1)
            .map(|(i, c)| format!("{c} = ${}", i + 3))
            .collect();
        format!(
            ", u AS (UPDATE contracts SET {} WHERE seq = $3::bigint RETURNING 1)",
            sets.join(", ")
        )
    } else {
        String::new()
    };
    format!(
        "WITH {clock}, {sweep}{update}
SELECT {SWEPT}",
        clock = clock_cte(Some("$2")),
        sweep = sweep_ctes("$1", Some("$3")),
    )
}

static HOLDER_WRITE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| holder_write_sql(true));
static HOLDER_SWEEP: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| holder_write_sql(false));

/// Whether a record of an agent is claimable at `$2`, and the next instant one falls due.
const DUE: &str = "
SELECT coalesce(bool_or(claimable), false), min(CASE WHEN at > $2 THEN at END) FROM (
  SELECT (status = 'SUBMITTED' AND queue_expires_at > $2 AND (available_at IS NULL OR available_at <= $2))
           AS claimable,
         CASE WHEN status = 'SUBMITTED'
              THEN CASE WHEN available_at > $2 THEN available_at ELSE queue_expires_at END
              ELSE expires_at END AS at
    FROM contracts WHERE target_agent = $1 AND status IN ('SUBMITTED', 'CLAIMED')) AS live";

fn bad(what: &str) -> StoreError {
    StoreError::corrupt(what.to_owned())
}

fn json_col<T: serde::de::DeserializeOwned>(row: &Row, name: &str) -> Result<Option<T>, StoreError> {
    let v: Option<Value> = row
        .try_get(name)
        .map_err(|e| StoreError::corrupt(e.to_string()))?;
    v.map(|v| serde_json::from_value(v).map_err(|e| StoreError::corrupt(format!("{name}: {e}"))))
        .transpose()
}

fn int(row: &Row, name: &str) -> Result<i64, StoreError> {
    row.try_get::<_, i64>(name)
        .map_err(|e| StoreError::corrupt(e.to_string()))
}

fn opt_int(row: &Row, name: &str) -> Result<Option<i64>, StoreError> {
    row.try_get::<_, Option<i64>>(name)
        .map_err(|e| StoreError::corrupt(e.to_string()))
}

fn text(row: &Row, name: &str) -> Result<String, StoreError> {
    row.try_get::<_, String>(name)
        .map_err(|e| StoreError::corrupt(e.to_string()))
}

fn opt_text(row: &Row, name: &str) -> Result<Option<String>, StoreError> {
    row.try_get::<_, Option<String>>(name)
        .map_err(|e| StoreError::corrupt(e.to_string()))
}

fn small(row: &Row, name: &str) -> Result<u32, StoreError> {
    u32::try_from(int(row, name)?).map_err(|_| bad(&format!("{name} out of range")))
}

fn agent(row: &Row, name: &str) -> Result<AgentId, StoreError> {
    AgentId::new(text(row, name)?).map_err(|_| bad(&format!("{name} is not an agent id")))
}

fn contract_id(text: String) -> Result<ContractId, StoreError> {
    ContractId::parse(&text).map_err(|_| bad("a contract_id is not a contract id"))
}

fn decode(row: &Row) -> Result<Contract, StoreError> {
    Ok(Contract {
        seq: int(row, "seq")?,
        contract_id: contract_id(text(row, "contract_id")?)?,
        requester_agent: agent(row, "requester_agent")?,
        target_agent: agent(row, "target_agent")?,
        idempotency_key: opt_text(row, "idempotency_key")?,
        payload_sha256: text(row, "payload_sha256")?,
        task_type: text(row, "task_type")?,
        title: text(row, "title")?,
        context_summary: text(row, "context_summary")?,
        workspace_root: text(row, "workspace_root")?,
        pointers: json_col(row, "pointers")?.unwrap_or_default(),
        contract_schema: json_col(row, "contract_schema")?,
        exec_ttl_sec: small(row, "exec_ttl_sec")?,
        queue_ttl_sec: small(row, "queue_ttl_sec")?,
        status: Status::parse(&text(row, "status")?).ok_or_else(|| bad("an unknown status"))?,
        created_at: int(row, "created_at")?,
        queued_at: int(row, "queued_at")?,
        queue_expires_at: int(row, "queue_expires_at")?,
        lifetime_ends_at: int(row, "lifetime_ends_at")?,
        claimed_at: opt_int(row, "claimed_at")?,
        expires_at: opt_int(row, "expires_at")?,
        completed_at: opt_int(row, "completed_at")?,
        claim_epoch: u64::try_from(int(row, "claim_epoch")?).map_err(|_| bad("a negative epoch"))?,
        extend_count: small(row, "extend_count")?,
        release_count: small(row, "release_count")?,
        retry_count: small(row, "retry_count")?,
        toctou_strikes: small(row, "toctou_strikes")?,
        end_reason: opt_text(row, "end_reason")?
            .map(|e| EndReason::parse(&e).ok_or_else(|| bad("an unknown end reason")))
            .transpose()?,
        dirty_files: json_col(row, "dirty_files")?,
        error_reason: opt_text(row, "error_reason")?,
        fail_reason: opt_text(row, "fail_reason")?,
        result_summary: opt_text(row, "result_summary")?,
        structured_output: json_col(row, "structured_output")?,
        artifacts_pointers: json_col(row, "artifacts_pointers")?,
        salvaged_result: json_col(row, "salvaged_result")?,
        max_deliveries: small(row, "max_deliveries")?,
        delivery_count: small(row, "delivery_count")?,
        available_at: opt_int(row, "available_at")?,
        cancel_reason: opt_text(row, "cancel_reason")?,
    })
}

fn json<T: serde::Serialize>(v: &Option<T>) -> Option<Value> {
    v.as_ref().and_then(|v| serde_json::to_value(v).ok())
}

/// The column values of a record, in the column order of the table.
fn encode(c: &Contract) -> Vec<Box<dyn ToSql + Sync>> {
    vec![
        Box::new(c.seq),
        Box::new(c.contract_id.as_str().to_owned()),
        Box::new(c.requester_agent.as_str().to_owned()),
        Box::new(c.target_agent.as_str().to_owned()),
        Box::new(c.idempotency_key.clone()),
        Box::new(c.payload_sha256.clone()),
        Box::new(c.task_type.clone()),
        Box::new(c.title.clone()),
        Box::new(c.context_summary.clone()),
        Box::new(c.workspace_root.clone()),
        Box::new(serde_json::to_value(&c.pointers).unwrap_or(Value::Array(Vec::new()))),
        Box::new(json(&c.contract_schema)),
        Box::new(i64::from(c.exec_ttl_sec)),
        Box::new(i64::from(c.queue_ttl_sec)),
        Box::new(c.status.as_str().to_owned()),
        Box::new(c.created_at),
        Box::new(c.queued_at),
        Box::new(c.queue_expires_at),
        Box::new(c.lifetime_ends_at),
        Box::new(c.claimed_at),
        Box::new(c.expires_at),
        Box::new(c.completed_at),
        Box::new(i64::try_from(c.claim_epoch).unwrap_or(i64::MAX)),
        Box::new(i64::from(c.extend_count)),
        Box::new(i64::from(c.release_count)),
        Box::new(i64::from(c.retry_count)),
        Box::new(i64::from(c.toctou_strikes)),
        Box::new(c.end_reason.map(|e| e.as_str().to_owned())),
        Box::new(json(&c.dirty_files)),
        Box::new(c.error_reason.clone()),
        Box::new(c.fail_reason.clone()),
        Box::new(c.result_summary.clone()),
        Box::new(json(&c.structured_output)),
        Box::new(json(&c.artifacts_pointers)),
        Box::new(json(&c.salvaged_result)),
        Box::new(i64::from(c.max_deliveries)),
        Box::new(i64::from(c.delivery_count)),
        Box::new(c.available_at),
        Box::new(c.cancel_reason.clone()),
    ]
}

fn refs(values: &[Box<dyn ToSql + Sync>]) -> Vec<&(dyn ToSql + Sync)> {
    values.iter().map(|b| b.as_ref()).collect()
}

/// What a write leaves for once it commits: the leases its sweep ended, told to the observer, and
/// the agents whose records became claimable, notified ([`NOTIFY`]).
#[derive(Default)]
struct After {
    events: Vec<ContractEvent>,
    wake: Vec<String>,
}

/// The sweep and redelivery at `now`, at most `max` records of each kind; the leases it ended and
/// the agents whose records went back to the queue are added to `after`, told and notified once the
/// transaction commits.
fn sweep_tx(
    tx: &mut Tx<'_, '_>,
    now: EpochMs,
    max: usize,
    after: &mut After,
) -> Result<SweepReport, StoreError> {
    let batch = i64::try_from(max).unwrap_or(i64::MAX);
    let row = tx.query_one(SWEEP.as_str(), &[&now, &batch]).map_err(classify)?;
    swept(&row, after)
}

/// What the sweep of a statement returning [`SWEPT`] did: its report; the leases it ended and the
/// agents whose records went back to the queue added to `after`.
fn swept(row: &Row, after: &mut After) -> Result<SweepReport, StoreError> {
    let count = |name: &str| -> Result<u64, StoreError> { Ok(u64::try_from(int(row, name)?).unwrap_or(0)) };
    let report = SweepReport {
        queued_timed_out: count("swept_queued")?,
        claimed_timed_out: count("swept_claimed")?,
        redelivered: count("swept_redelivered")?,
    };
    if report.redelivered > 0 {
        let (ids, agents, at): (Vec<String>, Vec<String>, Vec<Option<i64>>) = (
            row.try_get("redelivered_ids").map_err(corrupt)?,
            row.try_get("redelivered_agents").map_err(corrupt)?,
            row.try_get("redelivered_at").map_err(corrupt)?,
        );
        for ((id, name), at) in ids.into_iter().zip(agents).zip(at) {
            let agent = AgentId::new(&name).map_err(|_| bad("target_agent is not an agent id"))?;
            after
                .events
                .extend(swept_lease(contract_id(id)?, agent, Some(at.map(instant))));
            after.wake.push(name);
        }
    }
    if report.claimed_timed_out > 0 {
        let (ids, agents): (Vec<String>, Vec<String>) = (
            row.try_get("ended_ids").map_err(corrupt)?,
            row.try_get("ended_agents").map_err(corrupt)?,
        );
        for (id, agent) in ids.into_iter().zip(agents) {
            let agent = AgentId::new(&agent).map_err(|_| bad("target_agent is not an agent id"))?;
            after.events.extend(swept_lease(contract_id(id)?, agent, None));
        }
    }
    Ok(report)
}

fn corrupt(e: postgres::Error) -> StoreError {
    StoreError::corrupt(e.to_string())
}

/// The record in the columns of `row` (a statement's `LEFT JOIN` of a write that may have written
/// nothing), or `None` when they are null.
fn joined(row: &Row) -> Result<Option<Contract>, StoreError> {
    match row.try_get::<_, Option<i64>>("seq").map_err(corrupt)? {
        None => Ok(None),
        Some(_) => decode(row).map(Some),
    }
}

fn one(rows: Vec<Row>) -> Result<Option<Contract>, StoreError> {
    rows.first().map(decode).transpose()
}

fn filters(query: &ListQuery, with_page: bool) -> (String, Vec<Box<dyn ToSql + Sync>>) {
    let mut clauses: Vec<String> = Vec::new();
    let mut values: Vec<Box<dyn ToSql + Sync>> = Vec::new();
    let mut push = |clause: &str, v: Box<dyn ToSql + Sync>| {
        values.push(v);
        clauses.push(clause.replace('?', &format!("${}", values.len())));
    };
    if let Some(a) = &query.target_agent {
        push("target_agent = ?", Box::new(a.as_str().to_owned()));
    }
    if let Some(a) = &query.requester_agent {
        push("requester_agent = ?", Box::new(a.as_str().to_owned()));
    }
    if let Some(id) = &query.contract_id {
        push("contract_id = ?", Box::new(id.as_str().to_owned()));
    }
    if with_page {
        if let Some(b) = query.before_seq {
            push("seq < ?", Box::new(b));
        }
        if let Some(statuses) = &query.statuses {
            let names: Vec<String> = statuses.iter().map(|s| s.as_str().to_owned()).collect();
            push("status = ANY(?)", Box::new(names));
        }
    }
    let sql = if clauses.is_empty() {
        String::from("TRUE")
    } else {
        clauses.join(" AND ")
    };
    (sql, values)
}

impl PgStore {
    /// Connects to `url` (`postgres://…` or `postgresql://…`) and migrates the schema under an
    /// advisory lock.
    pub fn connect(url: &str, options: PgOptions) -> Result<PgStore, StoreError> {
        let mut config = Config::from_str(url)
            .map_err(|_| StoreError::unavailable(String::from("the PostgreSQL URL cannot be parsed")))?;
        config.connect_timeout(options.connect_timeout);
        let channel = match &options.schema {
            Some(schema) => format!("shiftwork_contracts_{schema}"),
            None => String::from("shiftwork_contracts"),
        };
        let shared = Arc::new(Shared {
            config,
            options: PgOptions {
                pool_size: options.pool_size.max(1),
                ..options
            },
            pool: Mutex::new(Pool {
                idle: Vec::new(),
                open: 0,
            }),
            available: Condvar::new(),
            watchers: Watchers::default(),
            listening: Mutex::new(false),
            channel,
        });
        let clock = server_clock(&shared);
        let store = PgStore {
            shared,
            clock,
            observer: ObserverSlot::default(),
        };
        store.migrate()?;
        Ok(store)
    }

    fn migrate(&self) -> Result<(), StoreError> {
        let schema = self.shared.options.schema.clone();
        self.shared.run(|tx| {
            tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
                .map_err(classify)?;
            if let Some(s) = &schema {
                let q = quote_ident(s)
                    .ok_or_else(|| StoreError::unavailable(String::from("invalid schema name")))?;
                tx.batch_execute(&format!(
                    "CREATE SCHEMA IF NOT EXISTS {q}; SET LOCAL search_path = {q};"
                ))
                .map_err(classify)?;
            }
            let exists: bool = tx
                .query_one("SELECT to_regclass('contracts_meta') IS NOT NULL", &[])
                .map_err(classify)?
                .get(0);
            if !exists {
                tx.batch_execute(SCHEMA).map_err(classify)?;
                return Ok(());
            }
            check_objects(tx)?;
            let version: String = tx
                .query_one(
                    "SELECT value FROM contracts_meta WHERE key = 'schema_version'",
                    &[],
                )
                .map_err(classify)?
                .get(0);
            match version.parse::<i64>() {
                Ok(PG_SCHEMA_VERSION) => Ok(()),
                Ok(1) => tx.batch_execute(MIGRATE_V1).map_err(classify),
                Ok(v) if v > PG_SCHEMA_VERSION => Err(StoreError::unavailable(format!(
                    "the database has schema version {v}, newer than this build's {PG_SCHEMA_VERSION}"
                ))),
                _ => Err(StoreError::unavailable(format!(
                    "the database has unknown schema version {version}"
                ))),
            }
        })
    }

    /// The clock the store judges by, which the facade over it reads and waits on: the given one, or
    /// the server's `clock_timestamp()` (with the local clock's durations and waits). The same as
    /// [`Store::clock`].
    pub fn server_clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    /// Runs `f` in one transaction, then — once it committed — notifies the agents whose records
    /// became claimable and tells the observer of the leases its sweep ended.
    fn write<T>(
        &self,
        f: impl FnOnce(&mut Tx<'_, '_>, &mut After) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut after = After::default();
        let out = self.shared.leased(|conn| {
            let out = transaction(conn, |tx| f(tx, &mut after))?;
            self.shared.notify(conn, &after.wake);
            Ok(out)
        })?;
        self.observer.tell(&after.events);
        Ok(out)
    }

    /// Runs `f`, one statement outside an explicit transaction (the statement is its own
    /// transaction: one round trip), then notifies and tells as [`PgStore::write`] does.
    fn single<T>(
        &self,
        f: impl FnOnce(&mut Plain<'_>, &mut After) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let mut after = After::default();
        let out = self.shared.leased(|conn| {
            let out = f(&mut conn.plain(), &mut after)?;
            self.shared.notify(conn, &after.wake);
            Ok(out)
        })?;
        self.observer.tell(&after.events);
        Ok(out)
    }

    /// One claim statement ([`claim_sql`]): the claimed record, if any, and its `more`.
    fn claim_once(&self, agent: &AgentId) -> Result<(Option<Contract>, bool), StoreError> {
        let shared = &self.shared;
        self.single(|tx, after| {
            let batch = i64::try_from(SWEEP_BATCH_PER_CALL).unwrap_or(i64::MAX);
            let row = match &shared.options.clock {
                None => tx.query_one(CLAIM_SERVER_CLOCK.as_str(), &[&agent.as_str(), &batch]),
                Some(clock) => tx.query_one(
                    CLAIM_GIVEN_CLOCK.as_str(),
                    &[&agent.as_str(), &batch, &clock.now().timestamp_millis()],
                ),
            }
            .map_err(classify)?;
            swept(&row, after)?;
            let more: bool = row.try_get("more").map_err(corrupt)?;
            Ok((joined(&row)?, more))
        })
    }

    /// Drops the store's schema and everything in it (tests and benches that made their own).
    pub fn drop_schema(&self) -> Result<(), StoreError> {
        let Some(schema) = self.shared.options.schema.clone() else {
            return Err(StoreError::io(String::from(
                "the store was opened without a schema of its own",
            )));
        };
        let q = quote_ident(&schema).ok_or_else(|| StoreError::io(String::from("invalid schema name")))?;
        self.shared.run(|tx| {
            tx.batch_execute(&format!("DROP SCHEMA IF EXISTS {q} CASCADE"))
                .map_err(classify)
        })
    }
}

/// The clock of a store connected with `shared`'s options: the given one, or the server's.
fn server_clock(shared: &Arc<Shared>) -> Arc<dyn Clock> {
    match &shared.options.clock {
        Some(c) => c.clone(),
        None => Arc::new(ServerClock {
            shared: shared.clone(),
            local: shiftwork_seams::SystemClock::new(),
            sample: Mutex::new(None),
        }),
    }
}

/// The server's `clock_timestamp()` as a [`Clock`]; if the server cannot be asked, the local clock.
/// Durations and waits are the local clock's: one [`shiftwork_seams::SystemClock`] made with the
/// store's clock, whose monotonic origin therefore stays put (a clock made afresh at each
/// reading measured every wait as zero, so a waiting poll never reached its deadline).
///
/// The server is asked at most once per [`CLOCK_SAMPLE`]; in between, a reading is the last answer
/// plus the local monotonic time since (so a jump of the local wall clock changes nothing). Every
/// judgement a transaction makes reads the server's clock itself, in its statements; this reading
/// serves the facade's look before a transaction, its waits, and the `now` of its answers.
struct ServerClock {
    shared: Arc<Shared>,
    local: shiftwork_seams::SystemClock,
    /// The last answer: the local monotonic time of the question and the server's milliseconds.
    sample: Mutex<Option<(Duration, EpochMs)>>,
}

/// How long a reading of the server's clock serves before the server is asked again.
const CLOCK_SAMPLE: Duration = Duration::from_secs(1);

impl Clock for ServerClock {
    fn now(&self) -> chrono::DateTime<chrono::Utc> {
        let mono = self.local.monotonic();
        let last = *self.sample.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((at, ms)) = last
            && mono.saturating_sub(at) < CLOCK_SAMPLE
        {
            let since = i64::try_from(mono.saturating_sub(at).as_millis()).unwrap_or(0);
            if let Some(t) = chrono::DateTime::from_timestamp_millis(ms + since) {
                return t;
            }
        }
        let asked = self.local.monotonic();
        let ms = self.shared.read(|tx| {
            let row = tx.query_one(SERVER_NOW, &[]).map_err(classify)?;
            Ok(row.get::<_, i64>(0))
        });
        let answered = self.local.monotonic();
        match ms
            .ok()
            .and_then(|ms| chrono::DateTime::from_timestamp_millis(ms).map(|t| (ms, t)))
        {
            Some((ms, t)) => {
                // The answer was read halfway through the round trip.
                let at = asked + answered.saturating_sub(asked) / 2;
                *self.sample.lock().unwrap_or_else(PoisonError::into_inner) = Some((at, ms));
                t
            }
            None => self.local.now(),
        }
    }
    fn monotonic(&self) -> Duration {
        self.local.monotonic()
    }
    fn sleep(&self, duration: Duration) {
        self.local.sleep(duration)
    }
    fn wait_until(&self, signal: &shiftwork_seams::Signal, deadline: Duration) -> bool {
        self.local.wait_until(signal, deadline)
    }
}

impl Store for PgStore {
    fn clock(&self) -> Arc<dyn Clock> {
        Arc::clone(&self.clock)
    }

    fn insert(&self, build: Build<'_>) -> Result<InsertOutcome, StoreError> {
        let shared = &self.shared;
        // The instant and the new `seq` first (a read of its own), then the sweep, the insert and the
        // notification as one statement: one write transaction, one round trip.
        let (seq, now): (i64, EpochMs) = shared.read(|tx| {
            let sql = match shared.options.clock {
                Some(_) => "SELECT nextval(pg_get_serial_sequence('contracts', 'seq')), 0::bigint",
                None => {
                    "SELECT nextval(pg_get_serial_sequence('contracts', 'seq')),
                            (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
                }
            };
            let row = tx.query_one(sql, &[]).map_err(classify)?;
            Ok((row.get(0), row.get(1)))
        })?;
        let now = match &shared.options.clock {
            Some(clock) => clock.now().timestamp_millis(),
            None => now,
        };
        let record = build(now, seq);
        let inserted = self.single(|tx, after| {
            let mut values = encode(&record);
            let batch = i64::try_from(SWEEP_BATCH_PER_CALL).unwrap_or(i64::MAX);
            values.push(Box::new(batch));
            values.push(Box::new(now));
            let row = tx.query_one(INSERT.as_str(), &refs(&values)).map_err(classify)?;
            swept(&row, after)?;
            let inserted = joined(&row)?;
            if let Some(c) = &inserted {
                after.wake.push(c.target_agent.as_str().to_owned());
            }
            Ok(inserted)
        })?;
        if let Some(inserted) = inserted {
            return Ok(InsertOutcome::Inserted(inserted));
        }
        let existing = self.get_by_key(
            &record.requester_agent,
            record.idempotency_key.as_deref().unwrap_or(""),
        )?;
        existing
            .map(InsertOutcome::KeyTaken)
            .ok_or_else(|| StoreError::io(String::from("the idempotency key conflicted but names no record")))
    }

    fn claim_next(&self, agent: &AgentId) -> Result<Option<Contract>, StoreError> {
        let (claimed, more) = self.claim_once(agent)?;
        // Another contract waits: the next waiting poll of the agent looks too.
        if claimed.is_some() && more {
            self.shared.watchers.notify_one(agent);
        }
        Ok(claimed)
    }

    fn update(&self, contract_id: &ContractId, step: Update<'_>) -> Result<Option<Reply>, StoreError> {
        let shared = &self.shared;
        let contract_id = contract_id.as_str();
        let batch = i64::try_from(SWEEP_BATCH_PER_CALL).unwrap_or(i64::MAX);
        self.write(|tx, after| {
            // Lock the row first, then read the clock.
            let locked = tx.query(LOCK_ROW, &[&contract_id]).map_err(classify)?;
            let Some(row) = locked.first() else {
                let now = shared.now(tx)?;
                sweep_tx(tx, now, SWEEP_BATCH_PER_CALL, after)?;
                return Ok(None);
            };
            let now = match &shared.options.clock {
                Some(clock) => clock.now().timestamp_millis(),
                None => int(row, "now_ms")?,
            };
            let mut record = decode(row)?;
            let mut except = Some(record.seq);
            if record.is_logically_expired(now) {
                // Past its deadline: the sweep ends (or redelivers) it like any other, and the
                // operation judges what the sweep left.
                sweep_tx(tx, now, SWEEP_BATCH_PER_CALL, after)?;
                let rows = tx
                    .query("SELECT * FROM contracts WHERE contract_id = $1", &[&contract_id])
                    .map_err(classify)?;
                let Some(swept) = one(rows)? else {
                    return Ok(None);
                };
                record = swept;
                except = None;
            }
            let out = step(&record, now);
            let requeued = out
                .next
                .as_ref()
                .filter(|next| next.status == Status::Submitted && record.status != Status::Submitted)
                .map(|next| next.target_agent.as_str().to_owned());
            let mut values: Vec<Box<dyn ToSql + Sync>> =
                vec![Box::new(batch), Box::new(now), Box::new(record.seq)];
            let sql = match &out.next {
                Some(next) => {
                    values.extend(encode(next).into_iter().skip(1));
                    HOLDER_WRITE.as_str()
                }
                // Nothing to write but the sweep (already run when the row was past its deadline).
                None if except.is_none() => return Ok(Some(out.reply)),
                None => HOLDER_SWEEP.as_str(),
            };
            let row = tx.query_one(sql, &refs(&values)).map_err(classify)?;
            swept(&row, after)?;
            // Back in the queue: the agent is notified once the transaction commits.
            after.wake.extend(requeued);
            Ok(Some(out.reply))
        })
    }

    fn get(&self, contract_id: &ContractId) -> Result<Option<Contract>, StoreError> {
        let contract_id = contract_id.as_str();
        self.shared.read(|tx| {
            let rows = tx
                .query("SELECT * FROM contracts WHERE contract_id = $1", &[&contract_id])
                .map_err(classify)?;
            one(rows)
        })
    }

    fn get_by_key(&self, requester: &AgentId, key: &str) -> Result<Option<Contract>, StoreError> {
        self.shared.read(|tx| {
            let rows = tx
                .query(
                    "SELECT * FROM contracts WHERE requester_agent = $1 AND idempotency_key = $2",
                    &[&requester.as_str(), &key],
                )
                .map_err(classify)?;
            one(rows)
        })
    }

    fn list(&self, query: &ListQuery, now: EpochMs) -> Result<ListPage, StoreError> {
        self.shared.run(|tx| {
            // One snapshot for the counts and the page.
            tx.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .map_err(classify)?;
            let mut counts = Counts::default();
            let (where_counts, mut values) = filters(query, false);
            values.push(Box::new(now));
            let n = values.len();
            let rows = tx
                .query(
                    &format!(
                        "SELECT status, count(*)::bigint,
                                sum(CASE WHEN (status = 'SUBMITTED' AND queue_expires_at <= ${n})
                                           OR (status = 'CLAIMED' AND expires_at <= ${n}) THEN 1 ELSE 0 END)::bigint
                           FROM contracts WHERE {where_counts} GROUP BY status"
                    ),
                    &refs(&values),
                )
                .map_err(classify)?;
            for row in rows {
                let status: String = row.get(0);
                let status = Status::parse(&status).ok_or_else(|| bad("an unknown status"))?;
                counts.add_status(status, u64::try_from(row.get::<_, i64>(1)).unwrap_or(0));
                counts.logically_expired += u64::try_from(row.get::<_, i64>(2)).unwrap_or(0);
            }
            let (where_page, mut values) = filters(query, true);
            values.push(Box::new(i64::try_from(query.limit).unwrap_or(i64::MAX)));
            let rows = tx
                .query(
                    &format!("SELECT * FROM contracts WHERE {where_page} ORDER BY seq DESC LIMIT ${}", values.len()),
                    &refs(&values),
                )
                .map_err(classify)?;
            let records = rows.iter().map(decode).collect::<Result<Vec<_>, _>>()?;
            Ok(ListPage { records, counts })
        })
    }

    fn sweep(&self, now: EpochMs, max_per_kind: usize) -> Result<SweepReport, StoreError> {
        self.write(|tx, after| sweep_tx(tx, now, max_per_kind, after))
    }

    fn due(&self, agent: &AgentId, now: EpochMs) -> Result<Due, StoreError> {
        self.shared.read(|tx| {
            let row = tx.query_one(DUE, &[&agent.as_str(), &now]).map_err(classify)?;
            Ok(Due {
                claimable: row.get(0),
                next_at: row.get(1),
            })
        })
    }

    fn watch(&self, agent: &AgentId, wake: &Wake) -> Result<(), StoreError> {
        self.shared.watchers.add(agent, wake);
        let mut listening = self
            .shared
            .listening
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if !*listening {
            let shared = self.shared.clone();
            std::thread::Builder::new()
                .name(String::from("contracts-listen"))
                .spawn(move || shared.listen())
                .map_err(|e| StoreError::io(format!("the listening thread cannot start: {e}")))?;
            *listening = true;
        }
        Ok(())
    }

    fn unwatch(&self, agent: &AgentId, wake: &Wake) {
        self.shared.watchers.remove(agent, wake);
    }

    fn purge_terminal(&self, completed_before: EpochMs, max: usize) -> Result<u64, StoreError> {
        let max = i64::try_from(max).unwrap_or(i64::MAX);
        self.shared.run(|tx| {
            tx.execute(
                "DELETE FROM contracts WHERE seq IN (
                    SELECT seq FROM contracts
                     WHERE completed_at IS NOT NULL AND completed_at < $1
                       AND status NOT IN ('SUBMITTED', 'CLAIMED')
                     ORDER BY completed_at, seq LIMIT $2
                     FOR UPDATE SKIP LOCKED)
                   AND status NOT IN ('SUBMITTED', 'CLAIMED') AND completed_at < $1",
                &[&completed_before, &max],
            )
            .map_err(classify)
        })
    }

    fn queue_depth(&self) -> Result<QueueDepth, StoreError> {
        self.shared.run(|tx| {
            // One snapshot for both counts.
            tx.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .map_err(classify)?;
            let mut depth = QueueDepth::default();
            let rows = tx
                .query(
                    "SELECT status, count(*)::bigint FROM contracts GROUP BY status",
                    &[],
                )
                .map_err(classify)?;
            for row in rows {
                let status: String = row.get(0);
                let status = Status::parse(&status).ok_or_else(|| bad("an unknown status"))?;
                depth
                    .by_status
                    .add_status(status, u64::try_from(row.get::<_, i64>(1)).unwrap_or(0));
            }
            let rows = tx
                .query(
                    "SELECT target_agent, count(*)::bigint FROM contracts WHERE status = 'SUBMITTED'
                      GROUP BY target_agent ORDER BY target_agent",
                    &[],
                )
                .map_err(classify)?;
            for row in rows {
                let agent = AgentId::new(row.get::<_, String>(0))
                    .map_err(|_| bad("target_agent is not an agent id"))?;
                depth
                    .submitted_by_target
                    .push((agent, u64::try_from(row.get::<_, i64>(1)).unwrap_or(0)));
            }
            Ok(depth)
        })
    }

    fn observe(&self, observer: Arc<dyn ContractsObserver>) {
        self.observer.set(observer);
    }

    fn check_integrity(&self) -> Result<IntegrityReport, StoreError> {
        self.shared.run(|tx| {
            tx.batch_execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                .map_err(classify)?;
            let mut report = IntegrityReport::default();
            // The server's own consistency: the unique indexes the schema relies on are valid.
            let invalid: i64 = tx
                .query_one(
                    "SELECT count(*) FROM pg_index WHERE indrelid = 'contracts'::regclass AND NOT indisvalid",
                    &[],
                )
                .map(|r| r.get(0))
                .unwrap_or(0);
            if invalid > 0 {
                report.push(format!("{invalid} index(es) of the contracts table are invalid"));
            }
            let rows = tx
                .query("SELECT * FROM contracts ORDER BY seq", &[])
                .map_err(classify)?;
            for row in &rows {
                report.records += 1;
                match decode(row) {
                    Ok(c) => integrity::violations(&c).into_iter().for_each(|v| report.push(v)),
                    Err(e) => report.push(format!("a record cannot be read: {e}")),
                }
            }
            Ok(report)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 36 item 2: no write statement notifies inside its transaction (PostgreSQL would
    /// serialise its commit, WAL flush included, with every other notifying commit); the
    /// notification is a statement of its own, sent once the write committed.
    #[test]
    fn issue36_item2_no_write_notifies_inside_its_transaction() {
        for sql in [
            SWEEP.as_str(),
            CLAIM_SERVER_CLOCK.as_str(),
            CLAIM_GIVEN_CLOCK.as_str(),
            INSERT.as_str(),
            HOLDER_WRITE.as_str(),
            HOLDER_SWEEP.as_str(),
            LOCK_ROW,
        ] {
            assert!(!sql.contains("pg_notify"), "{sql}");
        }
        assert!(NOTIFY.starts_with("SELECT pg_notify($1, a)"), "{NOTIFY}");
    }
}
